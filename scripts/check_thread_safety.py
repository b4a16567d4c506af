#!/usr/bin/python3
"""Compiles the modules whose locks are annotated (base/thread_annotations.h) with clang's
thread-safety analysis, and fails on any warning it gives: a guarded member touched without its
mutex, a function called without a lock it REQUIRES, a lock released twice or never.

    scripts/check_thread_safety.py [--skip-without-clang] BUILD_DIR [MODULE ...]

The build runs it (tests/CMakeLists.txt: the target thread_safety_check, part of `make build`
and so of `make test`) whenever a source of those modules changes.

BUILD_DIR holds compile_commands.json (CMake writes it at configure time). Each module is a
folder under src/wattcut/ (default: server, agent, row_control, gpu); every source file of it that the
build compiles, other than its tests, and that reaches base/mutex.h through the project's includes
(the files the analysis can say anything about) is checked (-fsyntax-only: no object is written). Needs clang++ (Debian's clang,
installed by scripts/install-deps.sh); without it the check is skipped: exit 77, or 0 with
--skip-without-clang (the build's own call, so a machine without clang still builds)."""

import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compile_commands  # noqa: E402

DEFAULT_MODULES = ["server", "agent", "row_control", "gpu"]


def clang():
    for name in ("clang++-14", "clang++"):
        path = shutil.which(name)
        if path:
            return path
    return None


INCLUDE = re.compile(r'^\s*#\s*include\s+"(wattcut/[^"]+)"', re.M)


def reaches_mutex(path, src_root, memo):
    """Whether `path` includes base/mutex.h, directly or through a project header."""
    if path in memo:
        return memo[path]
    memo[path] = False  # a cycle does not reach it through itself
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    for name in INCLUDE.findall(text):
        if name == "wattcut/base/mutex.h" or reaches_mutex(os.path.join(src_root, name), src_root, memo):
            memo[path] = True
            break
    return memo[path]


def command_for(args, compiler):
    out = [compiler]
    skip = False
    for arg in args[1:]:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if arg in ("-c", "-MD", "-MMD") or arg.startswith("-W") or arg == "-Werror":
            continue
        out.append(arg)
    return out + ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety"]


def main():
    args = sys.argv[1:]
    skip_code = 77
    if args[:1] == ["--skip-without-clang"]:
        skip_code = 0
        args = args[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    build_dir = args[0]
    modules = args[1:] or DEFAULT_MODULES
    compiler = clang()
    if compiler is None:
        print("check_thread_safety: clang++ not found; bash scripts/install-deps.sh installs it: skipped",
              file=sys.stderr)
        return skip_code
    db_path = os.path.join(build_dir, "compile_commands.json")
    try:
        commands = compile_commands.source_commands(build_dir)
    except (OSError, ValueError) as e:
        print(f"check_thread_safety: cannot read {db_path}: {e}", file=sys.stderr)
        return 2
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folders = [os.path.join(root, "src", "wattcut", m) + os.sep for m in modules]
    src_root = os.path.join(root, "src")
    memo = {}
    jobs = []
    for source, arguments, directory in commands:
        if not any(source.startswith(folder) for folder in folders):
            continue
        if source.endswith("_test.cc") or not reaches_mutex(source, src_root, memo):
            continue
        jobs.append((source, command_for(arguments, compiler), directory))
    if not jobs:
        print(f"check_thread_safety: no source of {', '.join(modules)} in {db_path}", file=sys.stderr)
        return 2

    def run(job):
        source, command, directory = job
        done = subprocess.run(command, cwd=directory, capture_output=True, text=True)
        return source, done.returncode, done.stderr

    failed = 0
    workers = max(1, os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for source, returncode, stderr in pool.map(run, sorted(jobs)):
            if returncode != 0 or "warning:" in stderr:
                failed += 1
                print(stderr, file=sys.stderr, end="")
    if failed:
        print(f"check_thread_safety: {failed} of {len(jobs)} files of {', '.join(modules)} fail clang's "
              "thread-safety analysis (above)", file=sys.stderr)
        return 1
    print(f"check_thread_safety: {len(jobs)} files of {', '.join(modules)} pass clang's thread-safety analysis")
    return 0


if __name__ == "__main__":
    sys.exit(main())
