#!/usr/bin/env python3
"""The docs' commands, run as written (issue 54): every fenced block of README.md and docs/*.md has
a kind (tests/docs/doc_blocks.py); this runs the console, bash, python and pycon blocks of the docs named on
the command line, in order, in one bash session, and checks the output each console command prints
against what the docs show. Usage blocks are checked against the CLI's --help.

Where the docs' commands run: a scratch folder laid out as a clone with ../shared beside it
(scripts/scratch_clone.py), `wattcut` the built CLI (on PATH, as the package installs it) and HOME
the folder's own. A path under /tmp/ in a command is moved into the
scratch folder's tmp/ (TMPDIR too), so that two runs never share one, and is shown as /tmp/ again in
what the commands print. Nothing else is changed.

Usage: docs_commands_test.py --source DIR --build DIR --shared DIR [--check-kinds --registered DOC ...] [DOC ...]
  --check-kinds   read every doc's blocks (each has a kind) and check the usage blocks
  --registered    a doc that a test runs (with --check-kinds: every doc with a block to run is one)
  DOC             a doc to run (README.md, docs/polca.md, ...): several share one session"""

from __future__ import annotations

import argparse
import glob
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))

import doc_blocks  # noqa: E402
import scratch_clone  # noqa: E402

ARGS = None
# Not a time limit on the docs' commands: the longest runs for a minute. A command still running
# after this is hung, and the test says which.
HUNG_AFTER_S = 900


def all_docs(source: str) -> list[str]:
    return ["README.md"] + sorted(os.path.relpath(p, source) for p in glob.glob(os.path.join(source, "docs", "*.md")))


class Session:
    """One bash process in the scratch clone; each command's output goes to its own file."""

    def __init__(self, source: str, build: str, shared: str):
        self.root = scratch_clone.scratch_clone(source, build, shared, "wattcut-docs-")
        self.repo = os.path.join(self.root, "repo")
        os.makedirs(os.path.join(self.root, "logs"))
        env = {
            "PATH": os.path.join(os.path.abspath(build), "src", "wattcut", "cli") + ":/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": os.path.join(self.root, "home"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "TMPDIR": os.path.join(self.root, "tmp"),
        }
        self.shell = subprocess.Popen(["bash", "--norc", "--noprofile"], cwd=self.repo, env=env, text=True,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        self.count = 0

    def moved(self, text: str) -> str:
        return re.sub(r"(?<![\w./-])/tmp/", self.root + "/tmp/", text)

    def run(self, text: str, errexit: bool = False) -> tuple[int | None, str]:
        """Runs TEXT in the session: (its exit status, what it printed); status None when it stopped
        the session (a bash block's failing command, under errexit)."""
        self.count += 1
        log = os.path.join(self.root, "logs", f"{self.count}.out")
        body = self.moved(text)
        if errexit:
            body = "set -e\n" + body + "\nset +e"
        marker = f"__wattcut_docs_done_{self.count}"
        self.shell.stdin.write(f"{{\n{body}\n}} > '{log}' 2>&1 < /dev/null\necho \"{marker} $?\"\n")
        self.shell.stdin.flush()
        status = None
        deadline = time.monotonic() + HUNG_AFTER_S
        while True:
            ready, _, _ = select.select([self.shell.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                self.close()
                raise AssertionError(f"still running after {HUNG_AFTER_S} s, stopped:\n{text}\n{read(log)}")
            line = self.shell.stdout.readline()
            if not line:
                break  # the session ended: errexit stopped it
            if line.startswith(marker + " "):
                status = int(line.split()[1])
                break
        return status, read(log).replace(self.root + "/tmp/", "/tmp/")

    def end_background_jobs(self) -> None:
        self.run("kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; true")

    def close(self) -> None:
        try:
            os.killpg(self.shell.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        self.shell.wait()

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def usage_lines(block: doc_blocks.Block) -> list[tuple[int, str]]:
    """The block's commands, each with its continuation lines (indented, or after a backslash)."""
    commands: list[tuple[int, str]] = []
    for offset, line in enumerate(block.text.split("\n")):
        if commands and (line[:1].isspace() or commands[-1][1].endswith("\\")):
            commands[-1] = (commands[-1][0], commands[-1][1].rstrip("\\") + " " + line.strip())
        elif line.strip():
            commands.append((offset, line.strip()))
    return commands


def cli_help(wattcut: str, path: list[str], helps: dict[str, str]) -> str:
    """`wattcut PATH --help`, or '' when that is not a command."""
    key = " ".join(path)
    if key not in helps:
        run = subprocess.run([wattcut] + path + ["--help"], capture_output=True, text=True)
        helps[key] = run.stdout if run.returncode == 0 else ""
    return helps[key]


def check_usage(block: doc_blocks.Block, wattcut: str, helps: dict[str, str]) -> list[str]:
    """What a usage block names that the CLI does not have."""
    problems = []
    for offset, line in usage_lines(block):
        line = re.sub(r"#.*$", "", re.sub(r"^sudo ", "", line)).strip()
        words = line.split()
        if not words or words[0] != "wattcut":
            continue  # another program's synopsis (a benchmark): nothing to check it against
        path: list[str] = []
        for word in words[1:]:
            if not re.fullmatch(r"[a-z][a-z-]*", word):
                break
            path.append(word)
        if not cli_help(wattcut, path, helps):
            problems.append(f"{block.where(offset)}: `wattcut {' '.join(path)} --help` fails: no such command")
            continue
        known = set(re.findall(r"--[a-z0-9][a-z0-9-]*", cli_help(wattcut, path, helps)))
        for word in words[len(path) + 1:]:  # a subcommand after the options: `wattcut gpu --agent S lock`
            if re.fullmatch(r"[a-z][a-z-]*", word) and cli_help(wattcut, path + [word], helps):
                path = path + [word]
                known |= set(re.findall(r"--[a-z0-9][a-z0-9-]*", cli_help(wattcut, path, helps)))
        for option in re.findall(r"(?<![\w-])--[a-z0-9][a-z0-9-]*", line):
            if option not in known:
                problems.append(f"{block.where(offset)}: `wattcut {' '.join(path)}` has no option {option}")
    return problems


class Kinds(unittest.TestCase):
    """Every block of every doc has a kind, and every usage block names what the CLI has."""

    def test_every_block_has_a_kind_and_every_synopsis_matches_the_cli(self):
        wattcut = os.path.join(ARGS.build, "src", "wattcut", "cli", "wattcut")
        helps: dict[str, str] = {}
        problems, counts = [], {}
        for doc in all_docs(ARGS.source):
            try:
                blocks = doc_blocks.read_blocks(ARGS.source, doc)
            except doc_blocks.DocError as e:
                problems.append(str(e))
                continue
            for block in blocks:
                kind = "illustrative" if block.illustrative else block.kind
                counts[kind] = counts.get(kind, 0) + 1
                if block.kind == "usage":
                    problems.extend(check_usage(block, wattcut, helps))
                elif block.kind in doc_blocks.RUN_KINDS and not block.illustrative and doc not in ARGS.registered:
                    problems.append(f"{block.where()}: a {block.kind} block of a doc no test runs: add {doc} to "
                                    "tests/docs/CMakeLists.txt's groups, or mark the block illustrative")
        print("blocks by kind:", ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
        self.assertEqual(problems, [], "\n".join(problems))
        self.assertGreater(counts.get("console", 0) + counts.get("bash", 0), 10, counts)


class Runs(unittest.TestCase):
    """The console, bash, python and pycon blocks of the docs given, in order, in one session."""

    def test_the_docs_commands_print_what_the_docs_show(self):
        session = Session(ARGS.source, ARGS.build, ARGS.shared)
        ran, differences = 0, []
        try:
            for doc in ARGS.docs:
                for block in doc_blocks.read_blocks(ARGS.source, doc):
                    if block.kind not in doc_blocks.RUN_KINDS or block.illustrative:
                        continue
                    ran += 1
                    started = time.monotonic()
                    differences += self.run_block(session, block)
                    session.end_background_jobs()
                    print(f"{block.where()}: {block.kind}, {time.monotonic() - started:.1f} s", flush=True)
            print(f"{ran} blocks run", flush=True)
            self.assertGreater(ran, 0, "no block of these docs runs: register docs that have one")
            self.assertEqual(differences, [], "\n\n".join(differences))
        finally:
            session.close()
            if not os.environ.get("WATTCUT_DOCS_TEST_KEEP"):
                session.remove()
            else:
                print("kept", session.root)

    def run_block(self, session: Session, block: doc_blocks.Block) -> list[str]:
        """Runs BLOCK: what its commands printed that differs from what the docs show. A command
        that fails stops the test there: what follows it in the docs would build on it."""
        differences = []
        if block.kind == "console":
            for command in doc_blocks.console_commands(block):
                status, printed = session.run(command.text)
                where = block.where(command.offset)
                self.assertEqual(status, 0, f"{where}: `{command.text}` exited with {status}:\n{printed}")
                difference = doc_blocks.match_output(command.shown, printed.split("\n"))
                if difference:
                    differences.append(f"{where}: `{command.text}`: {difference}\nit printed:\n{printed}")
            return differences
        if block.kind == "python":
            text = ("PYTHONPATH=\"$PWD/build/python\" /usr/bin/python3 - <<'__WATTCUT_DOCS_PYTHON__'\n" + block.text
                    + "\n__WATTCUT_DOCS_PYTHON__")
        elif block.kind == "pycon":
            session_file = os.path.join(session.root, "logs", f"pycon-{block.line}.txt")
            with open(session_file, "w", encoding="utf-8") as f:
                f.write(block.text + "\n")
            # Relative to the session's folder: a /tmp/ path in a command is moved (Session.moved).
            text = f"PYTHONPATH=\"$PWD/build/python\" /usr/bin/python3 -m doctest -o ELLIPSIS '../logs/pycon-{block.line}.txt'"
        else:
            text = block.text
        status, printed = session.run(text, errexit=True)
        self.assertEqual(status, 0, f"{block.where()}: the {block.kind} block failed:\n{block.text}\nit printed:\n"
                         f"{printed}")
        return differences


def main() -> None:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--shared", required=True)
    parser.add_argument("--check-kinds", action="store_true")
    parser.add_argument("--registered", action="append", default=[])
    parser.add_argument("docs", nargs="*")
    ARGS, rest = parser.parse_known_args()
    if not ARGS.check_kinds and not ARGS.docs:
        parser.error("name a doc to run or --check-kinds")
    ARGS.shared = os.environ.get("WATTCUT_SHARED_DIR") or ARGS.shared
    if ARGS.docs and not os.path.isdir(os.path.join(ARGS.shared, "data")):
        if os.environ.get("CI") == "true":
            sys.exit(f"{ARGS.shared}/data is missing: the docs' commands read the authors' data there")
        print(f"skipped: {ARGS.shared}/data is missing (the docs' commands read the authors' data there)")
        sys.exit(77)
    tests = [Kinds] if ARGS.check_kinds else []
    tests += [Runs] if ARGS.docs else []
    suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(t) for t in tests)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
