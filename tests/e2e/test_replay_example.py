"""docs/polca.md's `polca replay` example, run as written (issue 54, item 7): its inputs come from
scripts/make-replay-example.py, and the replay prints what the docs show.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

from fixtures import TempDir, required_env  # noqa: E402


class ReplayExample(unittest.TestCase):
    def test_the_docs_block_prints_what_the_docs_show(self):
        source = required_env("WATTCUT_SOURCE_DIR")
        binary = required_env("WATTCUT_BINARY")
        with open(os.path.join(source, "docs", "polca.md")) as f:
            docs = f.read()
        block = re.search(r"### Example\n.*?```console\n(.*?)```", docs, re.S).group(1)
        shown = [line for line in block.splitlines() if not line.startswith("$ ")]
        directory = TempDir("replay-example")
        try:
            out = ""
            for line in block.splitlines():
                if not line.startswith("$ "):
                    continue
                command = line[2:].replace("scripts/", os.path.join(source, "scripts") + "/")
                command = re.sub(r"^wattcut ", binary + " ", command)
                if "make-replay-example.py" in command:
                    command += " --wattcut " + binary
                run = subprocess.run(command, shell=True, cwd=directory.path, capture_output=True, text=True,
                                     timeout=300)
                self.assertEqual(run.returncode, 0, command + "\n" + run.stdout + run.stderr)
                out += run.stderr + run.stdout
            for line in shown:
                self.assertIn(line, out)
            with open(os.path.join(directory.path, "example-replay", "replay", "commands.csv")) as f:
                commands = f.read()
            for issued in ("1432.000", "1692.000", "1987.000", "2232.000"):  # the times the docs quote
                self.assertIn(issued, commands)
        finally:
            directory.remove()


if __name__ == "__main__":
    unittest.main()
