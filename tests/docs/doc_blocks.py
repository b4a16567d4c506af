"""The fenced blocks of the project's Markdown docs, each with its kind, and how the docs tests
compare what a command printed with what the docs show (issue 54).

Every fenced block in README.md and docs/*.md says what it is with its info string:

* ``console``: a transcript. A line starting with ``$ `` is a command (a trailing backslash or an
  open quote carries it on to the next lines); the lines after it, up to the next command, are what
  it prints. The docs tests run each command and compare its output (stdout and stderr together)
  with those lines: see `match_output`.
* ``bash``: commands, run as written, one after another; each must exit 0.
* ``python``: a script, run with Debian's /usr/bin/python3 and the built module; it must exit 0.
* ``pycon``: a Python session (``>>> `` lines and what each prints), run as a doctest with the built
  module: what it prints must be what the docs show, ``...`` standing for any text.
* ``usage``: a command's synopsis (placeholders in capitals, ``[optional]`` parts, ``a|b``): the
  tests check that every subcommand and ``--option`` it names is one the CLI has.
* ``text``, ``json``, ``yaml``, ``csv``, ``ini``: formats, formulas, files and output, not commands.

A ``console``, ``bash``, ``python`` or ``pycon`` block that cannot run here (it needs Slurm, systemd, a GPU,
a cluster, or hours) says so in its first line, visibly, for a reader too: ``# illustrative: WHY``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import subprocess

RUN_KINDS = ("console", "bash", "python", "pycon")
KINDS = RUN_KINDS + ("usage", "text", "json", "yaml", "csv", "ini")
ILLUSTRATIVE = re.compile(r"^\s*# illustrative: (\S.*)$")
# The first word of a line that is a command: a block of data must not start with one.
COMMAND_WORDS = ("$ ", "wattcut ", "sudo ", "curl ", "bash ", "make ", "python3 ", "/usr/bin/python3 ")


class DocError(Exception):
    """A block the tests cannot read: the message names the file and line."""


@dataclasses.dataclass
class Block:
    path: str  # as the docs tests name it, e.g. docs/polca.md
    line: int  # the line of the block's first content line
    kind: str
    text: str
    illustrative: str = ""  # the reason, when the block is not run

    def where(self, offset: int = 0) -> str:
        return f"{self.path}:{self.line + offset}"


def read_blocks(root: str, path: str) -> list[Block]:
    """Every fenced block of ROOT/PATH, each checked to have a kind (DocError otherwise)."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks: list[Block] = []
    number = 0
    while number < len(lines):
        fence = lines[number]
        if not fence.lstrip().startswith("```"):
            number += 1
            continue
        indent = len(fence) - len(fence.lstrip())
        info = fence.strip()[3:].strip()
        end = number + 1
        while end < len(lines) and not lines[end].lstrip().startswith("```"):
            end += 1
        if end == len(lines):
            raise DocError(f"{path}:{number + 1}: a fenced block that is never closed")
        content = [line[indent:] if line[:indent].strip() == "" else line for line in lines[number + 1:end]]
        block = Block(path, number + 2, info, "\n".join(content))
        check_kind(block)
        blocks.append(block)
        number = end + 1
    return blocks


def check_kind(block: Block) -> None:
    first = block.text.split("\n", 1)[0]
    if block.kind not in KINDS:
        raise DocError(f"{block.where(-1)}: the block's kind is {block.kind or 'missing'!r}; expected one of "
                       f"{', '.join(KINDS)} after the opening ``` (tests/docs/doc_blocks.py says what each means)")
    reason = ILLUSTRATIVE.match(first)
    if reason:
        if block.kind not in RUN_KINDS:
            raise DocError(f"{block.where()}: only console, bash, python and pycon blocks can be illustrative")
        block.illustrative = reason.group(1)
    elif block.kind not in RUN_KINDS and block.kind != "usage":
        for line in block.text.split("\n"):
            if line.lstrip().startswith(COMMAND_WORDS[:2]):
                raise DocError(f"{block.where()}: a {block.kind} block that starts a line with a command "
                               f"({line.strip()[:40]!r}): make it console, bash or usage")
    if block.kind == "console" and not block.illustrative and not first.startswith("$ "):
        raise DocError(f"{block.where()}: a console block starts with its first command, '$ ...'")
    if block.kind == "pycon" and not block.illustrative and not first.startswith(">>> "):
        raise DocError(f"{block.where()}: a pycon block starts with its first statement, '>>> ...'")
    if block.kind == "usage" and not re.search(r"[A-Z]{2,}|\[|\||\.\.\.", block.text):
        raise DocError(f"{block.where()}: a usage block without a placeholder, an [option] or a|b is a "
                       "command: make it bash or console, to be run")


@dataclasses.dataclass
class Command:
    offset: int  # lines after the block's first content line
    text: str  # without the '$ '
    shown: list[str]  # the output the docs show


def is_complete_shell(text: str) -> bool:
    """Whether TEXT is whole shell commands (no open quote, no trailing backslash, no open $( )."""
    if text.endswith("\\"):
        return False
    check = subprocess.run(["bash", "-n"], input=text + "\n", capture_output=True, text=True)
    return check.returncode == 0


def console_commands(block: Block) -> list[Command]:
    lines = block.text.split("\n")
    commands: list[Command] = []
    number = 0
    while number < len(lines):
        line = lines[number]
        if not line.startswith("$ "):
            if not commands:
                raise DocError(f"{block.where(number)}: output before the block's first '$ ' command")
            commands[-1].shown.append(line)
            number += 1
            continue
        start = number
        text = line[2:]
        while not is_complete_shell(text):
            number += 1
            if number == len(lines):
                raise DocError(f"{block.where(start)}: the command never ends (an open quote or a trailing backslash)")
            text += "\n" + lines[number]
        commands.append(Command(start, text, []))
        number += 1
    return commands


def shown_pattern(shown: str) -> re.Pattern[str]:
    """A shown line as a pattern: '...' stands for any text; everything else is matched exactly."""
    parts = shown.rstrip().split("...")
    return re.compile(".*".join(re.escape(part) for part in parts) + r"\Z", re.S)


def match_output(shown: list[str], printed: list[str]) -> str:
    """'' when PRINTED is what SHOWN shows, else what differs.

    Each shown line matches one printed line exactly (trailing spaces aside), but '...' in it stands
    for any text; a shown line that is only '...' stands for any number of printed lines (none too).
    Without a final '...', the command may print nothing more than the docs show."""
    shown = [line.rstrip() for line in shown]
    while shown and shown[-1] == "":
        shown.pop()
    printed = [line.rstrip() for line in printed]
    while printed and printed[-1] == "":
        printed.pop()
    patterns = [None if line.strip() == "..." else shown_pattern(line) for line in shown]
    best = [0, 0]  # the furthest shown line reached, and the printed line there, for the message

    @functools.lru_cache(maxsize=None)
    def matches(s: int, p: int) -> bool:
        if s > best[0]:
            best[:] = [s, p]
        if s == len(patterns):
            return p == len(printed)
        if patterns[s] is None:
            return any(matches(s + 1, q) for q in range(p, len(printed) + 1))
        return p < len(printed) and patterns[s].match(printed[p]) is not None and matches(s + 1, p + 1)

    if matches(0, 0):
        return ""
    s, p = best
    if s == len(shown):
        return f"it printed more than the docs show, from its line {p + 1}: {printed[p]!r}"
    if p == len(printed):
        return f"the docs show {shown[s]!r}, but it printed nothing more"
    if s > 0 and patterns[s - 1] is None:
        return f"the docs show {shown[s]!r}, but no line it printed from its line {p + 1} on is that"
    return f"the docs show {shown[s]!r}; it printed {printed[p]!r} (its line {p + 1})"
