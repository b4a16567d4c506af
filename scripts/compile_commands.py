"""The build's compile commands one source file at a time, as the scripts that compile sources
themselves need them (check_thread_safety.py, check_code_size.py's clang-tidy).

CMake writes compile_commands.json at configure time. In a unity build (WATTCUT_UNITY_BUILD, the
default) an entry compiles a batch file, CMakeFiles/<target>.dir/Unity/unity_N_cxx.cxx, that
#includes the target's sources: each of those sources gets the batch's command, with the batch
file's path replaced by its own."""

import json
import os
import re
import shlex

UNITY_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _arguments(entry):
    return list(entry["arguments"]) if "arguments" in entry else shlex.split(entry["command"])


def _batch_sources(path):
    """The sources a unity batch file includes; [] when `path` is not one."""
    if os.sep + "Unity" + os.sep not in path or not os.path.basename(path).startswith("unity_"):
        return []
    try:
        with open(path, errors="replace") as f:
            return [os.path.normpath(name) for name in UNITY_INCLUDE.findall(f.read())]
    except OSError:
        return []


def source_commands(build_dir):
    """(source, arguments, directory) for every source the build compiles, each once.

    Raises OSError or ValueError when compile_commands.json cannot be read."""
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    out = []
    seen = set()
    for entry in entries:
        directory = entry.get("directory", build_dir)
        file = os.path.normpath(os.path.join(directory, entry["file"]))
        args = _arguments(entry)
        batch = _batch_sources(file)
        for source in batch or [file]:
            if source in seen:
                continue
            seen.add(source)
            out.append((source, [source if a in (entry["file"], file) else a for a in args], directory))
    return out
