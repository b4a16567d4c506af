#!/usr/bin/env python3
"""Generates the Debian package's manual pages and bash completion from the CLI's own --help, so
neither can drift from the flags the binary has.

Runs `wattcut --help`, then `wattcut SUB --help` for every subcommand it lists (and their
subcommands, recursively), parses CLI11's help layout (a description line, `Usage:`, then
`Positionals:`, `Options:` and `Subcommands:` sections of two-column entries) and writes:

  --man-dir DIR     wattcut.1.gz and one wattcut-SUB.1.gz per top-level subcommand (a nested
                    subcommand, `wattcut gpu lock`, is a section of wattcut-gpu(1)), gzip -9n
  --completion FILE the bash completion script (subcommands at every level, each level's flags,
                    the choices of a {a,b} flag, file names for other value flags)

Usage: cli_docs.py --wattcut BIN --version X.Y.Z [--man-dir DIR] [--completion FILE] [--stamp FILE]
A section other than Positionals and Subcommands holds flags (Options, or an option group); text
after the sections is a footer, printed on the page. Help it cannot read (an entry without a
description, a flag not starting with '-', a subcommand name that is not a word) is an error naming
the command and the line, and fails the build: the generator does not guess."""

import argparse
import gzip
import os
import re
import subprocess
import sys

SECTIONS = ("Positionals", "Options", "Subcommands")
# CLI11 prints an entry's name column 30 characters wide; a longer name puts its description on
# the next line, indented to that column.
COLUMN = 30
ENTRY = re.compile(r"^  \S")
CONTINUATION = re.compile(r"^ {30}(\S.*)$")
VALUE_TYPES = ("TEXT", "INT", "UINT", "FLOAT", "CSV", "FILE", "DIR", "PATH")


class HelpError(Exception):
    pass


class Option:
    """One flag: its names (-h, --help), its value type (None for a switch), choices, default."""

    def __init__(self, spec, description):
        self.spec = spec
        self.description = description
        words = spec.split()
        self.names = [n for n in words[0].split(",") if n.startswith("-")]
        rest = " ".join(words[1:])
        self.required = rest.endswith("REQUIRED")
        if self.required:
            rest = rest[: -len("REQUIRED")].strip()
        self.value = rest or None  # e.g. TEXT:{json,zeus}=json, INT:INT in [0 - 16352]=1024, CSV ...
        self.choices = []
        self.numeric = False
        self.default = None
        if self.value:
            type_part = self.value
            if "=" in type_part:
                type_part, self.default = type_part.rsplit("=", 1)
            match = re.search(r"\{([^}]*)\}", type_part)
            if match:
                self.choices = [c.strip() for c in match.group(1).split(",") if c.strip()]
            first = re.split(r"[:\s]", type_part, 1)[0]
            self.numeric = first in ("INT", "UINT", "FLOAT")


class Command:
    """One level of the CLI: `wattcut`, `wattcut gpu`, `wattcut gpu lock`."""

    def __init__(self, path, help_text):
        self.path = path  # ["wattcut", "gpu", "lock"]
        self.description = ""
        self.usage = ""
        self.positionals = []  # [(spec, description)]
        self.options = []
        self.subcommands = []  # [(name, description)]
        self.footer = []  # lines of text after the sections
        self.children = []
        self._parse(help_text)

    @property
    def name(self):
        return " ".join(self.path)

    def _parse(self, text):
        section = None
        pending = None  # an entry whose description is on the next line
        description = []
        lines = text.splitlines()
        for number, line in enumerate(lines, 1):
            following = lines[number] if number < len(lines) else ""
            where = f"`{self.name} --help` line {number}"
            if not line.strip():
                if pending:
                    raise HelpError(f"{where}: entry {pending!r} has no description")
                continue
            if line.startswith("Usage: "):
                self.usage = line[len("Usage: "):].strip()
                section = "Usage"
                continue
            if section is None:
                description.append(line.strip())
                continue
            header = line.rstrip()
            if not line.startswith(" ") and header.endswith(":") and not pending:
                # Another header is an option group (CLI11's option_group): its entries are flags.
                section = header[:-1] if header[:-1] in SECTIONS else "Options"
                continue
            if not line.startswith(" ") and not pending:
                self.footer.append(line.strip())  # CLI11's footer: text after the sections
                continue
            if section == "Usage":
                raise HelpError(f"{where}: an indented line after the Usage line outside a section: {line!r}")
            if pending:
                match = CONTINUATION.match(line)
                if not match:
                    raise HelpError(f"{where}: expected the description of {pending!r}, got {line!r}")
                self._add(section, pending, match.group(1), where)
                pending = None
                continue
            if not ENTRY.match(line):
                raise HelpError(f"{where}: expected an entry of section {section}, got {line!r}")
            # The name column is COLUMN wide; a name that fills it has its description below.
            if (len(line) > COLUMN and line[COLUMN - 1] == " " and line[COLUMN] != " "
                    and not CONTINUATION.match(following)):
                spec, text_part = line[:COLUMN].strip(), line[COLUMN:].strip()
            else:
                spec, text_part = line.strip(), None
            if text_part is None:
                pending = spec
            else:
                self._add(section, spec, text_part, where)
        if pending:
            raise HelpError(f"`{self.name} --help`: entry {pending!r} has no description")
        if not self.usage:
            raise HelpError(f"`{self.name} --help` has no Usage line")
        self.description = " ".join(description)
        if len(self.path) == 1 and self.description.startswith(self.path[0] + ":"):
            self.description = self.description[len(self.path[0]) + 1:].strip()
        if not self.description:
            raise HelpError(f"`{self.name} --help` has no description line")

    def _add(self, section, spec, description, where):
        if section == "Options":
            if not spec.startswith("-"):
                raise HelpError(f"{where}: an option that does not start with '-': {spec!r}")
            self.options.append(Option(spec, description))
        elif section == "Positionals":
            self.positionals.append((spec, description))
        else:
            if not re.fullmatch(r"[a-z][a-z0-9-]*", spec):
                raise HelpError(f"{where}: a subcommand name that is not a word: {spec!r}")
            self.subcommands.append((spec, description))

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


def run_help(binary, path):
    # argv[0] "wattcut", so the Usage lines name the command, not the build folder's path.
    out = subprocess.run(["wattcut", *path[1:], "--help"], executable=binary, capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise HelpError(f"`{' '.join(path)} --help` exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def load(binary, path=("wattcut",), depth=0):
    if depth > 4:
        raise HelpError(f"{' '.join(path)}: subcommands nested deeper than 4 levels")
    command = Command(list(path), run_help(binary, path))
    for name, _ in command.subcommands:
        command.children.append(load(binary, (*path, name), depth + 1))
    return command


# ---- manual pages ----------------------------------------------------------------------------

def roff(text):
    """Text for a roff line: backslashes escaped, a leading . or ' made literal."""
    text = text.replace("\\", "\\e")
    if text[:1] in (".", "'"):
        text = "\\&" + text
    return text


def sentence(text):
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def roff_option(spec):
    """-h,--help TYPE=default as bold names (hyphens as \\-) and the rest in italics."""
    words = spec.split(" ", 1)
    names = ", ".join("\\fB" + n.replace("-", "\\-") + "\\fR" for n in words[0].split(","))
    if len(words) == 1:
        return names
    return names + " \\fI" + roff(words[1]) + "\\fR"


def man_entries(command, lines):
    if command.footer:
        lines += [".PP", roff(" ".join(command.footer))]
    if command.positionals:
        lines.append(".PP\nArguments:")
        for spec, description in command.positionals:
            lines += [".TP", "\\fI" + roff(spec) + "\\fR", roff(description)]
    if command.options:
        lines.append(".PP\nOptions:")
        for option in command.options:
            lines += [".TP", roff_option(option.spec), roff(option.description)]


def man_page(command, version, top):
    """The roff source of wattcut(1) (top) or wattcut-SUB(1)."""
    page = "-".join(command.path)
    page_roff = page.replace("-", "\\-")
    lines = [
        f'.\\" Generated from `{command.name} --help` by deploy/debian/cli_docs.py: do not edit.',
        f'.TH {page_roff.upper()} 1 "" "wattcut {version}" "User Commands"',
        ".nh",  # no hyphenation: names and flags stay whole
        ".ad l",
        ".SH NAME",
        f"{page_roff} \\- {roff(command.description[:1].lower() + command.description[1:])}",
        ".SH SYNOPSIS",
        "\\fB" + roff(command.name) + "\\fR " + roff(command.usage[len(command.name):].strip()),
        ".SH DESCRIPTION",
        roff(sentence(command.description)),
    ]
    man_entries(command, lines)
    if top:
        lines.append(".SH COMMANDS")
        for child in command.children:
            lines += [".TP", "\\fB" + roff(child.path[-1]) + "\\fR",
                      roff(sentence(child.description)) + " See \\fB" + "\\-".join(child.path) + "\\fR(1)."]
    else:
        for child in list(command.walk())[1:]:
            lines += [".SH " + roff(child.name.upper()), roff(sentence(child.description)),
                      ".PP\nUsage: \\fB" + roff(child.name) + "\\fR " + roff(child.usage[len(child.name):].strip())]
            man_entries(child, lines)
    lines += [".SH SEE ALSO"]
    see = ["wattcut"] if not top else ["-".join(c.path) for c in command.children]
    lines.append(",\n".join(".BR " + s.replace("-", "\\-") + " (1)" for s in see))
    lines += [".PP", "The guides in /usr/share/doc/wattcut and the project's docs/ folder."]
    return "\n".join(lines) + "\n"


def write_man_pages(root, version, directory):
    os.makedirs(directory, exist_ok=True)
    wanted = {"wattcut.1.gz"} | {"-".join(c.path) + ".1.gz" for c in root.children}
    for stale in set(os.listdir(directory)) - wanted:
        if stale.endswith(".1.gz"):
            os.remove(os.path.join(directory, stale))
    pages = [(root, True)] + [(c, False) for c in root.children]
    for command, top in pages:
        data = man_page(command, version, top).encode("utf-8")
        # gzip -9n: no name, no time stamp, so the same help gives the same bytes.
        path = os.path.join(directory, "-".join(command.path) + ".1.gz")
        with open(path, "wb") as f:
            f.write(gzip.compress(data, compresslevel=9, mtime=0))


# ---- bash completion -------------------------------------------------------------------------

def shell_word(text):
    if not re.fullmatch(r"[A-Za-z0-9_.,:/=+-]*", text):
        raise HelpError(f"cannot put {text!r} in the completion script")
    return text


def completion_script(root):
    subcommands, options, values = [], [], []
    for command in root.walk():
        key = " ".join(command.path[1:])
        if command.subcommands:
            subcommands.append(f'    "{key}") words="{" ".join(shell_word(n) for n, _ in command.subcommands)}" ;;')
        names = [n for o in command.options for n in o.names]
        options.append(f'    "{key}") words="{" ".join(shell_word(n) for n in names)}" ;;')
        for option in command.options:
            if not option.value:
                continue
            kind = "choices " + " ".join(shell_word(c) for c in option.choices) if option.choices else (
                "none" if option.numeric else "files")
            for name in option.names:
                values.append(f'    "{key}|{shell_word(name)}") kind="{kind}" ;;')
        if command.positionals and not command.subcommands:
            values.append(f'    "{key}|")  kind="files" ;;')
    return f"""# bash completion for wattcut: generated from `wattcut --help` (and every subcommand's) by
# deploy/debian/cli_docs.py at build time; do not edit.

# The subcommands of a command path ("" is wattcut itself, "gpu" is `wattcut gpu`).
_wattcut_subcommands() {{
  local words=""
  case "$1" in
{chr(10).join(subcommands)}
  esac
  printf '%s' "$words"
}}

# The flags of a command path.
_wattcut_flags() {{
  local words=""
  case "$1" in
{chr(10).join(options)}
  esac
  printf '%s' "$words"
}}

# What follows a flag ("path|--flag") or a positional argument ("path|"): "choices A B",
# "files", "none" (a number); empty for a switch, which takes no value.
_wattcut_value() {{
  local kind=""
  case "$1" in
{chr(10).join(values)}
  esac
  printf '%s' "$kind"
}}

_wattcut() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" path="" word kind i
  COMPREPLY=()
  # Walk the words before the cursor: subcommands extend the path, a value flag skips its value.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${{COMP_WORDS[i]}}"
    if [[ $word == -* ]]; then
      [[ $word == *=* ]] && continue
      kind=$(_wattcut_value "$path|$word")
      [[ -n $kind ]] && ((i++))
    elif [[ " $(_wattcut_subcommands "$path") " == *" $word "* ]]; then
      path="${{path:+$path }}$word"
    fi
  done
  if ((COMP_CWORD > 1)) && [[ ${{COMP_WORDS[COMP_CWORD - 1]}} == -* && ${{COMP_WORDS[COMP_CWORD - 1]}} != *=* ]]; then
    kind=$(_wattcut_value "$path|${{COMP_WORDS[COMP_CWORD - 1]}}")
    case "$kind" in
      choices\\ *) COMPREPLY=($(compgen -W "${{kind#choices }}" -- "$cur")); return 0 ;;
      files) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
      none) return 0 ;;
    esac
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_wattcut_flags "$path")" -- "$cur"))
  elif [[ -n $(_wattcut_subcommands "$path") ]]; then
    COMPREPLY=($(compgen -W "$(_wattcut_subcommands "$path")" -- "$cur"))
  elif [[ $(_wattcut_value "$path|") == files ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
  return 0
}}
complete -o filenames -o bashdefault -F _wattcut wattcut
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wattcut", required=True, help="the built wattcut executable")
    parser.add_argument("--version", required=True, help="the package version, for the pages' footer")
    parser.add_argument("--man-dir")
    parser.add_argument("--completion")
    parser.add_argument("--stamp", help="touched when everything is written (the build's output)")
    args = parser.parse_args()
    try:
        root = load(args.wattcut)
    except (HelpError, OSError, subprocess.SubprocessError) as error:
        print(f"cli_docs.py: {error}", file=sys.stderr)
        return 1
    if args.man_dir:
        write_man_pages(root, args.version, args.man_dir)
    if args.completion:
        with open(args.completion, "w", encoding="utf-8") as f:
            f.write(completion_script(root))
    if args.stamp:
        with open(args.stamp, "w", encoding="utf-8") as f:
            f.write("\n".join(c.name for c in root.walk()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
