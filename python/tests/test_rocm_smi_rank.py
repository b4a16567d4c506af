"""A rank on an AMD GPU without a node agent: gpu_backend="rocm-smi" opens ROCm SMI itself (here
the fake librocm_smi64.so.1, one simulated MI300X narrowed to 1800-2100 MHz), profiles the clocks
of its grid, and resets the GPU to the driver's "auto" level when it closes."""

from __future__ import annotations

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import ServerProcess, TempDir, required_env  # noqa: E402
from test_pipeline_frequency import ZEUS_ARGS, run_step  # noqa: E402

from wattcut import PipelineFrequencyOptimizer  # noqa: E402


class RankOnAnAmdGpu(unittest.TestCase):
    def setUp(self):
        self.dir = TempDir("python-rocm")
        self.state = os.path.join(self.dir.path, "rocm-smi-state")
        with open(self.state, "w") as f:
            f.write("gpu_count=1\nmin_mhz=1800\n")
        os.environ["WATTCUT_FAKE_ROCM_SMI_STATE"] = self.state
        os.environ.pop("WATTCUT_AGENT_SOCKET", None)
        self.server = ServerProcess(self.dir.path)

    def tearDown(self):
        self.server.stop()
        os.environ.pop("WATTCUT_FAKE_ROCM_SMI_STATE", None)
        self.dir.remove()

    def read_state(self) -> dict:
        with open(self.state) as f:
            return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)

    def test_it_profiles_the_grid_and_leaves_the_gpu_at_auto(self):
        with PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url=self.server.url, job_metadata="rocm-test",
                                        num_microbatches=2, gpu_backend="rocm-smi", watchdog=False,
                                        rocm_smi_library=required_env("WATTCUT_FAKE_ROCM_SMI_LIBRARY"),
                                        agent_socket="", profile_warmup_iterations=0,
                                        profile_measured_iterations=1, profile_freq_step_mhz=150) as pfo:
            self.assertEqual(pfo.gpu_backend_name, "rocm-smi")
            self.assertEqual(pfo.available_frequencies[:2], [2100, 2085])
            self.assertEqual(pfo.available_frequencies[-1], 1800)
            clocks: list = []
            for _ in range(3):
                run_step(pfo, clocks)
            self.assertEqual(sorted(set(clocks), reverse=True), [2100, 1950, 1800])
            self.assertEqual(self.read_state()["gpu0.perf"], "manual")
        state = self.read_state()
        self.assertEqual(state["gpu0.perf"], "auto")
        self.assertEqual(state["gpu0.locked_max"], "0")


if __name__ == "__main__":
    unittest.main()
