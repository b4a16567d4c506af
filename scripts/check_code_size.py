#!/usr/bin/python3
"""The size rule of issue 55, measured: no C++ file over --max-file-lines lines and no function
over --max-function-lines lines in the folders named.

A file's lines: what `wc -l` counts. A function's lines: from the line of its body's opening brace
to the line of its closing brace, both counted (a lambda counts in the function it is written in,
as clang-tidy's readability-function-size counts it). Comments, string and character literals
(raw strings included) are blanked before the braces are read, so a brace in a message or a
comment does not count.

    scripts/check_code_size.py src/wattcut/agent src/wattcut/server
    scripts/check_code_size.py --list src/wattcut/agent     # every function, longest first

Exit status 0: within the limits; 1: a file or function over them (each named with its line);
2: bad usage. `--clang-tidy BUILD` also runs clang-tidy's readability-function-size (with the
build's compile_commands.json) over the .cc files, as a second measurement: slower (minutes), so
the ctest runs without it.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compile_commands  # noqa: E402

SOURCE_SUFFIXES = (".h", ".cc")


@dataclass
class Function:
    path: str
    name: str
    first_line: int  # the opening brace's line, 1-based
    last_line: int  # the closing brace's line

    @property
    def lines(self) -> int:
        return self.last_line - self.first_line + 1


def blank_comments_and_literals(text: str) -> str:
    """`text` with every comment and literal's characters replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)

    def blank(s: str) -> str:
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(blank(text[i:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(blank(text[i:end]))
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2 : open_paren]
            end = text.find(")" + delimiter + '"', open_paren)
            end = n if end < 0 else end + len(delimiter) + 2
            out.append('""' + blank(text[i + 2 : end]))
            i = end
        elif c in "\"'":
            # A digit separator (1'000'000) is no character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, n)
            out.append(c + blank(text[i + 1 : end - 1]) + c)
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


SCOPE_KEYWORD = re.compile(r"\b(namespace|class|struct|union|enum)\b")
INIT_LIST = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?:(?!:)")
EXTERN_C = re.compile(r'\bextern\s+"\s*"\s*$')


def functions_of(path: str, text: str) -> list:
    """The functions whose bodies are in `text`, at namespace or class scope."""
    code = blank_comments_and_literals(text)
    functions = []
    # A stack of open braces: (kind, line, name); kind "scope" (namespace, class, ...), "function"
    # or "other" (an initialiser, a block inside a function).
    stack = []
    line = 1
    head_start = 0  # where the text before the next brace at scope level begins
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == ";" and (not stack or stack[-1][0] == "scope"):
            head_start = i + 1
        elif c == "{":
            in_scope = not stack or stack[-1][0] == "scope"
            if not in_scope:
                stack.append(("other", line, ""))
                continue
            flat = " ".join(code[head_start:i].split())
            if INIT_LIST.search(flat) and re.search(r"[\w>]$", flat):
                # A member's brace initialiser in a constructor's list (`: n_{n} {`): the
                # signature goes on to the body's brace.
                stack.append(("member_init", line, ""))
                continue
            head_start = i + 1
            if EXTERN_C.search(flat) or (SCOPE_KEYWORD.search(flat) and "(" not in flat.split("=")[0]):
                stack.append(("scope", line, ""))
            elif ")" in flat and not flat.rstrip().endswith("="):
                before_paren = flat.split("(")[0].split()
                name = before_paren[-1] if before_paren else "?"
                stack.append(("function", line, name))
            else:
                stack.append(("other", line, ""))
        elif c == "}":
            if not stack:
                continue
            kind, first, name = stack.pop()
            if kind == "function":
                functions.append(Function(path, name, first, line))
            if kind == "member_init":
                continue
            if not stack or stack[-1][0] == "scope":
                head_start = i + 1
    return functions


def source_files(folders: list) -> list:
    files = []
    for folder in folders:
        if os.path.isfile(folder):
            files.append(folder)
            continue
        if not os.path.isdir(folder):
            raise SystemExit(f"check_code_size: {folder}: no such file or folder")
        for root, _, names in os.walk(folder):
            files.extend(os.path.join(root, name) for name in names if name.endswith(SOURCE_SUFFIXES))
    return sorted(files)


def is_test(path: str) -> bool:
    return path.endswith(("_test.cc", "_testing.h", "_testing.cc"))


def clang_tidy_functions(build: str, files: list, threshold: int) -> list:
    """Lines of clang-tidy's readability-function-size warnings over `files` (.cc only), each
    compiled as the build compiles it (one source at a time, also in a unity build)."""
    config = "{CheckOptions: [{key: readability-function-size.LineThreshold, value: %d}]}" % threshold
    entries = [
        {"directory": directory, "file": source, "arguments": arguments}
        for source, arguments, directory in compile_commands.source_commands(build)
    ]
    found = []
    with tempfile.TemporaryDirectory() as database:
        with open(os.path.join(database, "compile_commands.json"), "w") as f:
            json.dump(entries, f)
        for path in files:
            if not path.endswith(".cc"):
                continue
            run = subprocess.run(
                ["clang-tidy-14", "-p", database, "--quiet", "--checks=-*,readability-function-size",
                 "--config=" + config, os.path.abspath(path)],
                capture_output=True,
                text=True,
                check=False,
            )
            found.extend(line for line in run.stdout.splitlines() if "readability-function-size" in line)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", help="folders (or files) of C++ sources; tests are left out")
    parser.add_argument("--max-file-lines", type=int, default=500)
    parser.add_argument("--max-function-lines", type=int, default=80)
    parser.add_argument("--list", action="store_true", help="print every file and function, longest first")
    parser.add_argument("--clang-tidy", metavar="BUILD", help="also measure with clang-tidy (compile_commands.json in BUILD)")
    args = parser.parse_args()

    files = [path for path in source_files(args.folders) if not is_test(path)]
    problems = []
    all_functions = []
    file_lines = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.count("\n")
        file_lines.append((lines, path))
        if lines > args.max_file_lines:
            problems.append(f"{path}: {lines} lines (at most {args.max_file_lines})")
        for function in functions_of(path, text):
            all_functions.append(function)
            if function.lines > args.max_function_lines:
                problems.append(
                    f"{path}:{function.first_line}: {function.name} is {function.lines} lines "
                    f"(at most {args.max_function_lines})"
                )
    if args.list:
        for lines, path in sorted(file_lines, reverse=True):
            print(f"{lines:6d}  {path}")
        for function in sorted(all_functions, key=lambda f: -f.lines):
            print(f"{function.lines:6d}  {function.path}:{function.first_line} {function.name}")
    if args.clang_tidy:
        for warning in clang_tidy_functions(args.clang_tidy, files, args.max_function_lines):
            problems.append("clang-tidy: " + warning)
    for problem in problems:
        print(problem)
    print(
        f"check_code_size: {len(files)} files, {len(all_functions)} functions; "
        f"{len(problems)} over the limits ({args.max_file_lines} lines a file, {args.max_function_lines} a function)"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    sys.exit(main())
