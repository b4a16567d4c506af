"""The Python API on its own: one rank, a real `wattcut serve`, the fake NVML (loaded by path)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import FakeGpus, ServerProcess, TempDir, required_env  # noqa: E402

import wattcut  # noqa: E402
from wattcut import PipelineFrequencyOptimizer, WattcutError  # noqa: E402

ZEUS_ARGS = dict(rank=0, dp_rank=0, pp_rank=0, tp_rank=0, device_id=0, dp_degree=1, pp_degree=1, tp_degree=1,
                 world_size=1)


class ArgumentChecks(unittest.TestCase):
    """Mistakes are caught before anything talks to a server or a GPU."""

    def test_world_size_must_match_the_degrees(self):
        args = dict(ZEUS_ARGS, dp_degree=2)
        with self.assertRaisesRegex(ValueError, r"world_size 1 != dp_degree \* pp_degree \* tp_degree = 2"):
            PipelineFrequencyOptimizer(**args, server_url="http://127.0.0.1:1")

    def test_ranks_must_be_in_range(self):
        with self.assertRaisesRegex(ValueError, r"pp_rank 3 is out of range \[0, 1\)"):
            PipelineFrequencyOptimizer(**dict(ZEUS_ARGS, pp_rank=3), server_url="http://127.0.0.1:1")

    def test_schedule_and_backend_names(self):
        with self.assertRaisesRegex(ValueError, "schedule must be '1f1b' or 'gpipe'"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="http://127.0.0.1:1", schedule="interleaved")
        with self.assertRaisesRegex(ValueError, "gpu_backend must be 'nvml' or 'simulated'"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="http://127.0.0.1:1", gpu_backend="rocm")

    def test_server_errors_are_raised_with_the_cpp_message(self):
        with self.assertRaisesRegex(WattcutError, "cannot reach the wattcut server at http://127.0.0.1:1"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="http://127.0.0.1:1")
        with self.assertRaisesRegex(WattcutError, "expected http://HOST:PORT"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="127.0.0.1:7787")
        self.assertTrue(issubclass(WattcutError, RuntimeError))

    def test_the_package_says_what_it_exports(self):
        self.assertEqual(sorted(wattcut.__all__), ["PipelineFrequencyOptimizer", "WattcutError"])


class OneRankJob(unittest.TestCase):
    """Profile, plan, hooks and their mistakes, on one fake GPU."""

    def setUp(self):
        self.dir = TempDir("python-api")
        self.gpus = FakeGpus(self.dir.path, {"gpu_count": "1", "min_mhz": "1110", "step_mhz": "150"})
        os.environ["WATTCUT_FAKE_NVML_STATE"] = self.gpus.state_path
        self.server = ServerProcess(self.dir.path)
        self.library = os.path.join(required_env("WATTCUT_FAKE_NVML_DIR"), "libnvidia-ml.so.1")

    def tearDown(self):
        self.server.stop()
        self.dir.remove()

    def optimizer(self, **kwargs) -> PipelineFrequencyOptimizer:
        return PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url=self.server.url, job_metadata="api-test",
                                          num_microbatches=2, nvml_library=self.library,
                                          profile_warmup_iterations=0, profile_measured_iterations=1, **kwargs)

    def step(self, pfo: PipelineFrequencyOptimizer, clocks: list) -> None:
        pfo.on_step_begin()
        for name in ["forward", "backward", "forward", "backward"]:  # 1F1B on one stage
            pfo.on_instruction_begin(name)
            pfo.wait_until_frequency_applied()
            clock = pfo.gpu_clock_mhz()
            clocks.append(clock)
            time.sleep((0.004 if name == "forward" else 0.008) * 1410 / clock)
            pfo.on_instruction_end(name)
        pfo.on_step_end()

    def test_profiles_then_follows_the_plan_and_resets_the_clocks(self):
        with self.optimizer() as pfo:
            self.assertIn("api-test", pfo.job_id)
            self.assertEqual(pfo.available_frequencies, [1410, 1260, 1110])
            self.assertEqual(pfo.phase, "profiling")
            clocks = []
            for _ in range(3):  # one measured iteration per clock
                self.step(pfo, clocks)
            self.assertEqual(clocks, [1410] * 4 + [1260] * 4 + [1110] * 4)
            self.assertEqual(pfo.phase, "planned")
            self.assertEqual(sorted({(r["instruction"], r["frequency"]) for r in pfo.profile}),
                             sorted((i, f) for i in ("backward", "forward") for f in (1410, 1260, 1110)))
            for _ in range(3):
                clocks = []
                self.step(pfo, clocks)
                self.assertEqual([name for name, _ in pfo.schedule], ["forward", "backward", "forward", "backward"])
                self.assertEqual(clocks, [f for _, f in pfo.schedule])
                self.assertEqual(pfo.last_frequency_mhz, pfo.schedule[-1][1])
            frontier = self.server.request("GET", f"/v1/jobs/{self.server.job_path(pfo.job_id)}/frontier")
            self.assertEqual(frontier["state"], "ready")
        self.assertEqual(pfo.phase, "closed")
        self.assertEqual(self.gpus.state()["gpu0.locked_max"], "0")
        pfo.close()  # idempotent

    def test_mistakes_of_the_training_loop_raise(self):
        pfo = self.optimizer(profile=False)
        with self.assertRaisesRegex(ValueError, "exactly one of slowdown or iteration_time_s"):
            pfo.report_straggler()
        with self.assertRaisesRegex(ValueError, "exactly one of"):
            pfo.report_straggler(slowdown=1.2, iteration_time_s=3.0)
        pfo.on_step_begin()  # no profile yet: the server's own sweep answers
        with self.assertRaisesRegex(WattcutError, "is 'forward' in the plan, but the job ran 'backward'"):
            pfo.on_instruction_begin("backward")
        with self.assertRaisesRegex(WattcutError, "on_step_begin twice"):
            pfo.on_step_begin()
        pfo.close()
        with self.assertRaisesRegex(WattcutError, "closed"):
            pfo.on_step_end()


class TwoRankStart(unittest.TestCase):
    """When one rank cannot start its client, every rank raises instead of waiting for it."""

    def test_a_failing_rank_fails_the_others_too(self):
        directory = TempDir("python-start")
        gpus = FakeGpus(directory.path, {"gpu_count": "2"})
        server = ServerProcess(directory.path)
        try:
            script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "start_failure_script.py")
            library = os.path.join(required_env("WATTCUT_FAKE_NVML_DIR"), "libnvidia-ml.so.1")
            port = ServerProcess.free_port()
            ranks = []
            for rank in range(2):  # both run to their end: no launcher that stops the other one
                env = dict(os.environ, WATTCUT_FAKE_NVML_STATE=gpus.state_path, FAKE_NVML_LIBRARY=library,
                           MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE="2")
                ranks.append(subprocess.Popen([sys.executable, script, server.url], env=env, text=True,
                                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
            outputs = [process.communicate(timeout=300)[0] for process in ranks]
            self.assertEqual([process.returncode for process in ranks], [3, 3], outputs)
            self.assertIn("WattcutError: rank 1: GPU 7 does not exist", outputs[1])
            self.assertIn("WattcutError: another rank could not start its wattcut client", outputs[0])
            self.assertEqual(gpus.state().get("gpu0.locked_max", "0"), "0")  # rank 0's setter was stopped
        finally:
            server.stop()
            directory.remove()


if __name__ == "__main__":
    unittest.main()
