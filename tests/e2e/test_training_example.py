"""The README's training example as a newcomer runs it (issue 54): `launch.py --nproc 8 train.py --dp 2
--server-url URL --gpu-backend simulated`, nothing else, against a real `wattcut serve`.

Before, its default run of 30 steps ended while the job was still waiting for its profile (the
simulated GPU has 81 clocks: 162 profiling steps), printing only losses. Now it trains until the
plan has run, and says when profiling ends and which clocks each stage runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

from fixtures import ServerProcess, TempDir, required_env  # noqa: E402


class TrainingExample(unittest.TestCase):
    def test_the_readme_command_reaches_a_plan_and_says_so(self):
        directory = TempDir("example")
        server = ServerProcess(directory.path)
        try:
            example = os.path.join(required_env("WATTCUT_SOURCE_DIR"), "examples", "pipeline_gpt")
            command = [sys.executable, os.path.join(example, "launch.py"), "--nproc", "8", "--timeout-s", "600",
                       os.path.join(example, "train.py"), "--dp", "2", "--server-url", server.url,
                       "--gpu-backend", "simulated"]
            run = subprocess.run(command, capture_output=True, text=True, timeout=900)
            out = run.stdout + run.stderr
            self.assertEqual(run.returncode, 0, out[-3000:])
            self.assertIn("81 clocks on this GPU; profiling every 120 MHz", out)
            self.assertIn("profiling done", out)
            stages = set(re.findall(r"stage (\d) runs plan version ([1-9]\d*): (\d+)-(\d+) MHz over its 8 instructions",
                                    out))
            self.assertEqual({s[0] for s in stages}, {"0", "1", "2", "3"}, out[-3000:])
            # Which clocks the plan picks depends on the measured times, which a loaded machine moves:
            # that each stage runs within the simulated GPU's clocks is what holds everywhere.
            for _, _, bottom, top in stages:
                self.assertTrue(210 <= int(bottom) <= int(top) <= 1410, stages)
            self.assertIn("its frontier and plan on the server's status page", out)
            job = server.request("GET", "/v1/jobs")
            self.assertEqual(len(job["jobs"]), 1, job)
        finally:
            server.stop()
            directory.remove()


if __name__ == "__main__":
    unittest.main()
