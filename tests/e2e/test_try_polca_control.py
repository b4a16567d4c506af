"""scripts/try-polca-control.sh, docs/polca.md's one-machine quick start for `wattcut polca control`
(issue 54, item 10): simulated agents on loopback, the row file, tokens, a budget past T2, shadow then
enforce; the locks land where POLCA puts them at T2.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

from fixtures import required_env  # noqa: E402


class TryPolcaControl(unittest.TestCase):
    def test_the_quick_start_shows_the_locks_land(self):
        script = os.path.join(required_env("WATTCUT_SOURCE_DIR"), "scripts", "try-polca-control.sh")
        run = subprocess.run(["bash", script, "4"], env=dict(os.environ, WATTCUT=required_env("WATTCUT_BINARY")),
                             capture_output=True, text=True, timeout=300)
        out = run.stdout + run.stderr
        self.assertEqual(run.returncode, 0, out)
        self.assertIn("past T2", out)
        self.assertIn("[shadow] wattcut polca control: stopped; shadow mode sent nothing", out)
        ceilings = dict(re.findall(r"server\d \((low|high)\): SM clock ceiling (\S+ MHz|none)", out))
        self.assertEqual(ceilings, {"low": "1110 MHz", "high": "1305 MHz"}, out)
        folder = re.search(r"files in (\S+)", out).group(1)
        self.assertTrue(os.path.isfile(os.path.join(folder, "enforce.jsonl")))
        # No agent is left running.
        left = subprocess.run(["pgrep", "-f", folder], capture_output=True, text=True)
        self.assertEqual(left.stdout.strip(), "", "agents left running")


if __name__ == "__main__":
    unittest.main()
