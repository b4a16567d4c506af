"""The training example on a fake AMD node: `wattcut agent --backend rocm-smi` runs as root over
the fake librocm_smi64.so.1 (2 simulated MI300X GPUs); the 2-stage PyTorch example runs as an
unprivileged user (uid 65534) with WATTCUT_AGENT_SOCKET set, against a real `wattcut serve`.

What must hold, as on NVIDIA: training runs and follows the server's plan; every clock lock is the
agent's (ROCm SMI's rsmi_dev_clk_range_set from the agent's pid, each GPU's sequence exactly the
clocks its rank ran) and no training process calls ROCm SMI; the profile's energy is the energy
counter's (rsmi_dev_energy_count_get, read by the agent for the ranks); every GPU ends back at the
driver's "auto" level once the job's leases end.
"""

from __future__ import annotations

import os
import re
import sys
import unittest
from typing import Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

from fixtures import ServerProcess, TempDir, required_env  # noqa: E402
from test_pipeline_training_agent import AgentProcess, collapse, train_as_nobody, wait_until_reset  # noqa: E402

# It trains until the plan has run PLANNED_STEPS steps (at most MAX_STEPS), so a plan that comes late on a
# loaded machine still comes: the stop is the job's own, agreed by its ranks each step.
STAGES, PLANNED_STEPS, MAX_STEPS = 2, 4, 2000


class FakeAmdGpus:
    """A fake librocm_smi64.so.1 state file; `env` makes the agent load it (by its path)."""

    def __init__(self, directory: str, settings: Dict[str, str]) -> None:
        self.state_path = os.path.join(directory, "rocm-smi-state")
        with open(self.state_path, "w") as f:
            f.write("".join(f"{k}={v}\n" for k, v in settings.items()))
        self.library = required_env("WATTCUT_FAKE_ROCM_SMI_LIBRARY")
        self.env = {"WATTCUT_FAKE_ROCM_SMI_STATE": self.state_path}

    def state(self) -> Dict[str, str]:
        with open(self.state_path) as f:
            return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)

    def log_lines(self) -> List[str]:
        with open(self.state_path + ".log") as f:
            return [line.rstrip("\n") for line in f]


@unittest.skipUnless(os.geteuid() == 0, "needs root: the agent runs as root, training as uid 65534")
class PipelineTrainingOnAmd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = TempDir("e2e-amd")
        os.chmod(cls.dir.path, 0o755)
        # A narrower clock range than an MI300X's 500-2100 MHz, so that three profiled clocks cover it.
        cls.gpus = FakeAmdGpus(cls.dir.path, {"gpu_count": str(STAGES), "min_mhz": "1500"})
        cls.agent = AgentProcess(cls.dir.path, cls.gpus, ["--backend", "rocm-smi", "--rocm-smi-library", cls.gpus.library])
        cls.server = ServerProcess(cls.dir.path)
        cls.log_dir, cls.output, cls.logs = train_as_nobody(cls.dir.path, cls.gpus, cls.agent, cls.server.url,
                                                            STAGES, 1, 0, ["--profile-freq-step-mhz", "300",
                                                                           "--planned-steps", str(PLANNED_STEPS),
                                                                           "--max-steps", str(MAX_STEPS)])
        wait_until_reset(cls.gpus, lambda state, g: state.get(f"gpu{g}.perf", "auto") == "auto", STAGES)
        cls.agent.stop()

    @classmethod
    def tearDownClass(cls):
        cls.agent.stop()
        cls.server.stop()
        cls.dir.remove()

    def test_training_followed_its_plans_on_the_amd_gpus(self):
        for rank, steps in self.logs.items():
            self.assertEqual(len(steps), len(self.logs[0]), f"rank {rank} stopped at another step than rank 0")
            self.assertLess(len(steps), MAX_STEPS, f"rank {rank}: the plan did not run within {MAX_STEPS} steps")
            self.assertGreaterEqual(sum(1 for s in steps if s["phase"] == "planned" and s["schedule"]), PLANNED_STEPS,
                                    f"rank {rank} ran no plan")
            ran = {clock for step in steps for clock in step["clocks"]}
            self.assertTrue(ran <= set(range(1500, 2101)), f"rank {rank} ran clocks outside the GPU's range: {ran}")

    def test_every_lock_was_the_agents_and_the_energy_the_counters(self):
        agent_pid = str(self.agent.process.pid)
        locks: Dict[int, List[int]] = {}
        energy_reads = 0
        for line in self.gpus.log_lines():
            self.assertEqual(line.split(" ", 1)[0], agent_pid, f"a ROCm SMI call from another process: {line}")
            if m := re.search(r"rsmi_dev_clk_range_set\(GPU (\d+), (\d+),(\d+),0\) -> 0$", line):
                self.assertEqual(m.group(2), m.group(3))
                locks.setdefault(int(m.group(1)), []).append(int(m.group(3)))
            energy_reads += "rsmi_dev_energy_count_get" in line
        for rank, steps in self.logs.items():
            ran = [clock for step in steps for clock in step["clocks"]]
            self.assertEqual(locks.get(rank), collapse(ran), f"GPU {rank}: the agent's locks are the clocks rank ran")
        self.assertGreater(energy_reads, 0)

    def test_every_gpu_ends_at_the_drivers_auto_level(self):
        state = self.gpus.state()
        for gpu in range(STAGES):
            self.assertEqual(state.get(f"gpu{gpu}.perf", "auto"), "auto", gpu)
            self.assertEqual(state.get(f"gpu{gpu}.locked_max", "0"), "0", gpu)


if __name__ == "__main__":
    unittest.main()
