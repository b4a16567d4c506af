"""The Python API on its own: one rank, a real `wattcut serve`, the fake NVML (loaded by path)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import FakeGpus, OneFakeGpuServerCase, ServerProcess, TempDir, required_env  # noqa: E402

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
        with self.assertRaisesRegex(ValueError, "schedule must be one of 1f1b, gpipe, interleaved, zb-h1, zbh1"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="http://127.0.0.1:1", schedule="zigzag")
        with self.assertRaisesRegex(ValueError, "virtual_stages goes with schedule='interleaved'"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="http://127.0.0.1:1", schedule="interleaved")
        with self.assertRaisesRegex(ValueError, "virtual_stages goes with schedule='interleaved'"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="http://127.0.0.1:1", virtual_stages=2)
        with self.assertRaisesRegex(ValueError, "virtual_stages must be >= 2, got 1"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="http://127.0.0.1:1", schedule="interleaved",
                                       virtual_stages=1)
        with self.assertRaisesRegex(ValueError, "gpu_backend must be 'nvml', 'rocm-smi' or 'simulated'"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="http://127.0.0.1:1", gpu_backend="rocm")

    def test_server_errors_are_raised_with_the_cpp_message(self):
        # (A server that cannot be reached is not an error: ServerFailures below.)
        with self.assertRaisesRegex(WattcutError, r"expected http://HOST\[:PORT\]"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="127.0.0.1:7787")
        with self.assertRaisesRegex(WattcutError, "https is not supported"):
            PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url="https://127.0.0.1:7787")
        self.assertTrue(issubclass(WattcutError, RuntimeError))

    def test_the_package_says_what_it_exports(self):
        self.assertEqual(
            sorted(wattcut.__all__),
            ["DagPlan", "Frontier", "PipelineFrequencyOptimizer", "Plan", "WattcutError", "__version__", "node_agent"],
        )


class OneRankJob(OneFakeGpuServerCase):
    """Profile, plan, hooks and their mistakes, on one fake GPU."""

    def optimizer(self, **kwargs) -> PipelineFrequencyOptimizer:
        return PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url=self.server.url, job_metadata="api-test",
                                          num_microbatches=2, nvml_library=self.library,
                                          profile_warmup_iterations=0, profile_measured_iterations=1, **kwargs)

    def step(self, pfo: PipelineFrequencyOptimizer, clocks: list) -> None:
        run_step(pfo, clocks)

    def test_profiles_then_follows_the_plan_and_resets_the_clocks(self):
        with self.optimizer() as pfo:
            self.assertIn("api-test", pfo.job_id)
            self.assertEqual(pfo.available_frequencies, [1410, 1260, 1110])
            self.assertEqual(pfo.phase, "profiling")
            self.assertTrue(pfo.server_connected)
            clocks = []
            for _ in range(3):  # one measured iteration per clock
                self.step(pfo, clocks)
            self.assertEqual(clocks, [1410] * 4 + [1260] * 4 + [1110] * 4)
            self.assertEqual(pfo.phase, "planned")
            self.assertEqual(sorted({(r["instruction"], r["frequency"]) for r in pfo.profile}),
                             sorted((i, f) for i in ("backward", "forward") for f in (1410, 1260, 1110)))
            # The plan comes in the background; until its apply step, the highest clock.
            steps_at_max = steps_until_planned(self, pfo)
            self.assertTrue(all(clock == 1410 for clock in steps_at_max))
            self.assertGreaterEqual(pfo.plan_version, 1)
            self.assertEqual(pfo.queued_requests, 0)  # the profile upload was acknowledged
            for _ in range(3):
                clocks = []
                self.step(pfo, clocks)
                self.assertEqual([name for name, _ in pfo.schedule], ["forward", "backward", "forward", "backward"])
                self.assertEqual(clocks, [f for _, f in pfo.schedule])
                self.assertEqual(pfo.last_frequency_mhz, pfo.schedule[-1][1])
            # With a plan, the order of the instructions is checked.
            pfo.on_step_begin()
            with self.assertRaisesRegex(WattcutError, "is 'forward' in the plan, but the job ran 'backward'"):
                pfo.on_instruction_begin("backward")
            frontier = self.server.request("GET", f"/v1/jobs/{self.server.job_path(pfo.job_id)}/frontier")
            self.assertEqual(frontier["state"], "ready")
            self.assertEqual((pfo.server_outages, pfo.missed_updates), (0, 0))
        self.assertEqual(pfo.phase, "closed")
        self.assertEqual(self.gpus.state()["gpu0.locked_max"], "0")
        pfo.close()  # idempotent

    def test_mistakes_of_the_training_loop_raise(self):
        pfo = self.optimizer(profile=False)
        with self.assertRaisesRegex(ValueError, "exactly one of slowdown or iteration_time_s"):
            pfo.report_straggler()
        with self.assertRaisesRegex(ValueError, "exactly one of"):
            pfo.report_straggler(slowdown=1.2, iteration_time_s=3.0)
        pfo.on_step_begin()  # no profile, so no plan: every instruction at the highest clock
        self.assertEqual(pfo.plan_version, 0)
        self.assertEqual(pfo.schedule, [])
        pfo.on_instruction_begin("backward")
        self.assertEqual(pfo.last_frequency_mhz, 1410)
        pfo.on_instruction_end("backward")
        # The zero-bubble passes are instructions too; anything else is refused by name.
        pfo.on_instruction_begin("backward_weight")
        pfo.on_instruction_end("backward_weight")
        with self.assertRaisesRegex(ValueError, "instruction must be one of forward, backward, backward_input, "
                                                "backward_weight, got 'optimizer'"):
            pfo.on_instruction_begin("optimizer")
        with self.assertRaisesRegex(WattcutError, "on_step_begin twice"):
            pfo.on_step_begin()
        pfo.close()
        with self.assertRaisesRegex(WattcutError, "closed"):
            pfo.on_step_end()


def run_step(pfo: PipelineFrequencyOptimizer, clocks: list) -> None:
    """One 1F1B step of one stage, each instruction stretched by the clock it ran at."""
    pfo.on_step_begin()
    for name in ["forward", "backward", "forward", "backward"]:
        pfo.on_instruction_begin(name)
        pfo.wait_until_frequency_applied()
        clock = pfo.gpu_clock_mhz()
        clocks.append(clock)
        time.sleep((0.004 if name == "forward" else 0.008) * 1410 / clock)
        pfo.on_instruction_end(name)
    pfo.on_step_end()


def steps_until_planned(test: unittest.TestCase, pfo: PipelineFrequencyOptimizer, max_steps: int = 2000) -> list:
    """Runs steps until one runs a plan (bounded); the clocks of the steps before it."""
    before: list = []
    for _ in range(max_steps):
        clocks: list = []
        run_step(pfo, clocks)
        if pfo.schedule:
            test.assertEqual(clocks, [f for _, f in pfo.schedule])
            return before
        before += clocks
    test.fail(f"no plan within {max_steps} steps (plan_version {pfo.plan_version})")


class CapturedStderr:
    """The process's file descriptor 2 (where the C++ runtime logs) into a file, for a `with`."""

    def __enter__(self) -> "CapturedStderr":
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile(mode="w+")
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(self, *exc_info: object) -> None:
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        self._lines = [line.rstrip("\n") for line in self._file]
        self._file.close()
        sys.stderr.write("".join(line + "\n" for line in self._lines))  # still shown in the test's log

    def lines(self) -> list:
        return self._lines


class ServerFailures(unittest.TestCase):
    """The server down at start, killed and restarted: training goes on and never raises."""

    def setUp(self):
        self.dir = TempDir("python-outage")
        self.gpus = FakeGpus(self.dir.path, {"gpu_count": "1", "min_mhz": "1110", "step_mhz": "150"})
        os.environ["WATTCUT_FAKE_NVML_STATE"] = self.gpus.state_path
        self.library = os.path.join(required_env("WATTCUT_FAKE_NVML_DIR"), "libnvidia-ml.so.1")
        self.port = ServerProcess.free_port()
        self.server = None

    def tearDown(self):
        if self.server is not None:
            self.server.stop()
        self.dir.remove()

    def optimizer(self) -> PipelineFrequencyOptimizer:
        return PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url=f"http://127.0.0.1:{self.port}",
                                          job_metadata="outage-test", num_microbatches=2, nvml_library=self.library,
                                          profile_warmup_iterations=0, profile_measured_iterations=1)

    def steps_until(self, pfo: PipelineFrequencyOptimizer, condition, max_steps: int = 2000) -> None:
        for _ in range(max_steps):
            if condition():
                return
            run_step(pfo, [])
            time.sleep(0.005)
        self.fail(f"not reached within {max_steps} steps")

    def test_a_server_down_at_start_then_up_gives_the_plan(self):
        with CapturedStderr() as stderr:
            pfo = self.optimizer()  # nothing listens on the port: not an error
            self.assertEqual(pfo.job_id, "")
            self.assertFalse(pfo.server_connected)
            clocks = []
            for _ in range(5):  # profiles offline (3 clocks), then the highest clock
                run_step(pfo, clocks)
            self.assertEqual(clocks, [1410] * 4 + [1260] * 4 + [1110] * 4 + [1410] * 8)
            self.assertEqual(pfo.phase, "planned")
            self.assertGreaterEqual(pfo.missed_updates, 1)
            self.assertEqual(pfo.queued_requests, 1)  # the profile upload waits for the server

            self.server = ServerProcess(self.dir.path, self.port)
            self.steps_until(pfo, lambda: pfo.job_id != "" and pfo.plan_version >= 1 and pfo.schedule)
            self.assertIn("outage-test", pfo.job_id)
            self.assertTrue(pfo.server_connected)
            self.assertEqual(pfo.server_outages, 1)
            self.assertEqual(pfo.queued_requests, 0)
            clocks = []
            run_step(pfo, clocks)
            self.assertEqual(clocks, [f for _, f in pfo.schedule])
            pfo.close()
        lines = stderr.lines()
        self.assertEqual(len([line for line in lines if "cannot reach the wattcut server" in line]), 1, lines)
        self.assertEqual(len([line for line in lines if "is back after" in line]), 1, lines)
        self.assertEqual(self.gpus.state()["gpu0.locked_max"], "0")

    def test_a_server_killed_and_restarted_never_stops_training(self):
        self.server = ServerProcess(self.dir.path, self.port)
        with CapturedStderr() as stderr:
            pfo = self.optimizer()
            for _ in range(3):
                run_step(pfo, [])
            steps_until_planned(self, pfo)
            version, plan = pfo.plan_version, pfo.schedule

            self.server.kill()
            self.steps_until(pfo, lambda: not pfo.server_connected)
            for _ in range(5):  # the plan it has goes on
                clocks = []
                run_step(pfo, clocks)
                self.assertEqual(clocks, [f for _, f in plan])
            self.assertEqual(pfo.server_outages, 1)
            self.assertGreaterEqual(pfo.missed_updates, 1)
            self.assertEqual(pfo.plan_version, version)

            self.server = ServerProcess(self.dir.path, self.port)  # the same data: the job is still known
            self.steps_until(pfo, lambda: pfo.server_connected)
            missed = pfo.missed_updates
            for _ in range(3):
                clocks = []
                run_step(pfo, clocks)
                self.assertEqual(clocks, [f for _, f in pfo.schedule])
            self.assertEqual(pfo.plan_version, version)  # the stored version: nothing changed
            self.assertEqual(pfo.server_outages, 1)
            self.assertEqual(pfo.missed_updates, missed)
            pfo.close()
        lines = stderr.lines()
        self.assertEqual(len([line for line in lines if "cannot reach the wattcut server" in line]), 1, lines)
        self.assertEqual(len([line for line in lines if "is back after" in line]), 1, lines)
        self.assertEqual(self.gpus.state()["gpu0.locked_max"], "0")


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
