"""A live row for the end-to-end tests of `wattcut polca control`: 12 `wattcut agent` processes on
loopback, each on its own fake NVML (8 GPUs), half of them low priority, and the controller over
them with the policy a subclass names. The subclass writes the row's day (`run_the_day`: it moves
every server's GPU load, the fake NVML's `load` key) and its tests; `assert_audited` replays a decision log
through the C++ policy (`wattcut polca audit`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import unittest
from typing import Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

from fixtures import FakeNvmlState, Service, TempDir, required_env  # noqa: E402

SERVERS = 12
GPUS = 8
PERIOD_S = 0.5
TOKEN = "row-token-for-the-live-row-test-0123456789"


def priority(i: int) -> str:
    return "low" if i % 2 == 0 else "high"


class LiveRowBase(unittest.TestCase):
    POLICY = "polca"
    # Config keys the row's config sets beyond the budget and the period (key -> value).
    CONFIG: Dict[str, str] = {}

    @classmethod
    def setUpClass(cls):
        cls.dir = TempDir("polca-live")
        cls.binary = required_env("WATTCUT_BINARY")
        tokens = os.path.join(cls.dir.path, "agent.tokens")
        with open(tokens, "w") as f:
            f.write(f"row {TOKEN}\n")
        os.chmod(tokens, 0o600)
        cls.token_file = os.path.join(cls.dir.path, "row.token")
        with open(cls.token_file, "w") as f:
            f.write(TOKEN + "\n")
        os.chmod(cls.token_file, 0o600)
        cls.states = [FakeNvmlState(os.path.join(cls.dir.path, f"nvml{i}"),
                                    {"gpu_count": str(GPUS), "min_mhz": "210", "step_mhz": "15", "load": "0.3"})
                      for i in range(SERVERS)]
        cls.agents: List[Service] = [cls.start_agent(i, 0) for i in range(SERVERS)]
        cls.ports = [int(re.search(r"http://127\.0\.0\.1:(\d+)", a.ready_line).group(1)) for a in cls.agents]
        cls.row = os.path.join(cls.dir.path, "row.txt")
        with open(cls.row, "w") as f:
            f.write("# name agent priority\n")
            for i in range(SERVERS):
                f.write(f"s{i:02d} http://127.0.0.1:{cls.ports[i]} {priority(i)}\n")
        config = subprocess.run([cls.binary, "polca", "config"], check=True, stdout=subprocess.PIPE, text=True).stdout
        # A budget the row exceeds at full load (12 x 5,380 W) and a short period, for a short test.
        config = re.sub(r"row\.budget_w = .*", "row.budget_w = 60000", config)
        config = re.sub(r"control\.telemetry_period_s = .*", f"control.telemetry_period_s = {PERIOD_S}", config)
        config = re.sub(r"control\.max_reading_age_s = .*", "control.max_reading_age_s = 3", config)
        for key, value in cls.CONFIG.items():
            config = re.sub(re.escape(key) + r" = .*", f"{key} = {value}", config)
        cls.config = os.path.join(cls.dir.path, "row.conf")
        with open(cls.config, "w") as f:
            f.write(config)
        cls.log = os.path.join(cls.dir.path, f"{cls.POLICY}.jsonl")
        cls.snapshots: Dict[str, List[List[int]]] = {}
        try:
            cls.run_the_day()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def start_agent(cls, i: int, port: int) -> Service:
        return Service([cls.binary, "agent", "--socket", os.path.join(cls.dir.path, f"agent{i}.sock"),
                        "--listen", f"127.0.0.1:{port}", "--token-file", os.path.join(cls.dir.path, "agent.tokens"),
                        "--non-gpu-power", "1700+0.15*gpu", "--state-dir", os.path.join(cls.dir.path, f"state{i}")],
                       "wattcut agent: serving",
                       cls.states[i].env())

    @classmethod
    def start_controller(cls, mode: str, log: str) -> Service:
        return Service([cls.binary, "polca", "control", "--row", cls.row, "--config", cls.config, "--token-file",
                        cls.token_file, "--mode", mode, "--in-band", "--log", log, "--ceiling-lease", "4",
                        "--policy", cls.POLICY],
                       "wattcut polca control: running")

    @classmethod
    def load(cls, value: float, seconds: float) -> None:
        for s in cls.states:
            s.set_load(value)
        time.sleep(seconds)

    @classmethod
    def snapshot(cls, name: str) -> None:
        cls.snapshots[name] = [s.locked_max(GPUS) for s in cls.states]

    @classmethod
    def run_the_day(cls) -> None:
        raise NotImplementedError

    @classmethod
    def restart_controller(cls, log_name: str) -> None:
        """SIGKILLs the controller (its ceilings stay until their lease runs out), snapshots the row
        as "controller_killed", and starts another one in enforce mode logging to `log_name`."""
        cls.controller.kill()
        cls.snapshot("controller_killed")
        cls.log_after_restart = os.path.join(cls.dir.path, log_name)
        cls.controller = cls.start_controller("enforce", cls.log_after_restart)
        cls.restart_output_head = cls.controller.output

    def assert_audited(self, log: str) -> None:
        """`wattcut polca audit` of `log` with the row's config finds every line the policy's."""
        audit = subprocess.run([self.binary, "polca", "audit", "--log", log, "--config", self.config],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(audit.returncode, 0, audit.stderr)
        self.assertIn("every state and command is the policy's", audit.stdout)
        self.assertIn(f"({self.POLICY})", audit.stdout)

    @classmethod
    def tearDownClass(cls):
        for service in getattr(cls, "agents", []):
            service.stop()
        if getattr(cls, "controller", None) is not None:
            cls.controller.kill()
        cls.dir.remove()

    @staticmethod
    def read_log(path: str) -> List[dict]:
        with open(path) as f:
            return [json.loads(line) for line in f]
