#!/usr/bin/env python3
"""deploy/debian/cli_docs.py on small fake CLIs: what it reads from CLI11's help layout (a name
column that fills its 30 characters, a description on the next line, an option group, a footer,
nested subcommands) and the errors it gives on help it cannot read, each naming the command and
the line. (deb_package_test checks its output for the real CLI.)

Usage: cli_docs_test.py --source DIR"""

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import unittest

ARGS = None

TOP = """fake: plans things
Usage: wattcut [OPTIONS] SUBCOMMAND

Options:
  -h,--help                   Print this help message and exit
  --version                   Display program version information and exit

Subcommands:
  run                         Run one plan
"""
RUN = """Run one plan
Usage: wattcut run [OPTIONS] DIR

Positionals:
  DIR TEXT REQUIRED           The plan's folder

Options:
  -h,--help                   Print this help message and exit
  --power-trace TEXT REQUIRED CSV time,server,power_w
  --max-body-bytes UINT:UINT in [1024 - 1073741824]=16777216
                              Largest request body
  --format TEXT:{json,zeus}=json
                              json or zeus
Planner:
  --unit-time FLOAT=0.001     Unit time in seconds

Exit codes are in docs/limits.md.
"""


def fake_cli(directory, helps):
    """An executable printing helps[SUBCOMMAND PATH] for `wattcut PATH --help`."""
    for key, text in helps.items():
        with open(os.path.join(directory, (key or "top") + ".txt"), "w", encoding="utf-8") as f:
            f.write(text)
    path = os.path.join(directory, "wattcut")
    with open(path, "w", encoding="utf-8") as f:
        f.write('#!/bin/sh\nname=top\n[ "$1" != --help ] && name="$1"\n'
                f'cat "{directory}/$name.txt" 2>/dev/null || {{ echo "no $name" >&2; exit 2; }}\n')
    os.chmod(path, 0o755)
    return path


def generate(directory, helps):
    binary = fake_cli(directory, helps)
    out = subprocess.run(
        ["/usr/bin/python3", os.path.join(ARGS.source, "deploy", "debian", "cli_docs.py"), "--wattcut", binary,
         "--version", "9.8.7", "--man-dir", os.path.join(directory, "man"),
         "--completion", os.path.join(directory, "completion")],
        capture_output=True, text=True, timeout=60)
    return out


class Reads(unittest.TestCase):
    def test_columns_groups_footer_and_pages(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = generate(tmp, {"": TOP, "run": RUN})
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(sorted(os.listdir(os.path.join(tmp, "man"))), ["wattcut-run.1.gz", "wattcut.1.gz"])
            with gzip.open(os.path.join(tmp, "man", "wattcut-run.1.gz"), "rt", encoding="utf-8") as f:
                page = f.read()
            self.assertIn('.TH WATTCUT\\-RUN 1 "" "wattcut 9.8.7"', page)
            self.assertIn("wattcut\\-run \\- run one plan", page)
            # A name that fills the column: its description is on the same line after one space.
            self.assertIn("\\fB\\-\\-power\\-trace\\fR \\fITEXT REQUIRED\\fR\nCSV time,server,power_w", page)
            # A longer name: its description on the next line.
            self.assertIn("\\fB\\-\\-max\\-body\\-bytes\\fR \\fIUINT:UINT in [1024 - 1073741824]=16777216\\fR\n"
                          "Largest request body", page)
            self.assertIn("\\fB\\-\\-unit\\-time\\fR", page)  # from the option group
            self.assertIn("Exit codes are in docs/limits.md.", page)  # the footer
            with open(os.path.join(tmp, "completion"), encoding="utf-8") as f:
                completion = f.read()
            self.assertIn('"") words="run" ;;', completion)
            self.assertIn('"run|--format") kind="choices json zeus" ;;', completion)
            self.assertIn('"run|--unit-time") kind="none" ;;', completion)
            self.assertIn('"run|--power-trace") kind="files" ;;', completion)


class Refuses(unittest.TestCase):
    def refused(self, helps):
        with tempfile.TemporaryDirectory() as tmp:
            out = generate(tmp, helps)
            self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "man")), "pages written despite the error")
            return out.stderr

    def test_an_entry_without_a_description(self):
        bad = RUN.replace("                              Largest request body\n", "")
        message = self.refused({"": TOP, "run": bad})
        self.assertIn("`wattcut run --help` line 11: expected the description of '--max-body-bytes", message)

    def test_a_flag_without_a_dash(self):
        bad = RUN.replace("  --unit-time FLOAT=0.001", "  unit-time FLOAT=0.001  ")
        message = self.refused({"": TOP, "run": bad})
        self.assertIn("`wattcut run --help` line 15: an option that does not start with '-'", message)

    def test_no_usage_line(self):
        message = self.refused({"": TOP.replace("Usage: wattcut [OPTIONS] SUBCOMMAND\n", ""), "run": RUN})
        self.assertIn("`wattcut --help` has no Usage line", message)

    def test_a_subcommand_whose_help_fails(self):
        message = self.refused({"": TOP})
        self.assertIn("`wattcut run --help` exited 2: no run", message)


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
