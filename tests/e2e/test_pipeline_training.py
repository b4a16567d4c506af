"""End to end: a real `wattcut serve`, the 4-stage PyTorch example with 2 data-parallel pipelines
(8 processes, gloo on CPU), the fake NVML standing in for 8 GPUs.

The job registers, profiles itself online, uploads its profiles; the server computes the frontier;
every rank gets its plan in the background (deployments: no request on the step path) and runs it
from the step the server chose; the fake NVML's call log shows each GPU locked to exactly the
planned clock before each instruction; one pipeline straggles (sleeps) and reports itself, the
other moves to the slower plan and back after recovery, every one of its ranks at the same step;
the losses equal those of the same run without wattcut; every GPU's clocks end reset. Once the
plans are deployed the server is SIGKILLed and, a few seconds later, restarted on its data folder:
training goes on without an exception, each rank says once that the server is away and once that
it is back, and the straggler switch after the restart lands on one step on every rank.

On a CPU the fake GPU's clock does not change compute speed, so the example runs with its
test-only `--emulate-clock-scaling`: each instruction is stretched to a fixed time x max clock /
the clock read back from the (fake) GPU, which gives the online profiler a real trade-off.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import unittest
from typing import Callable, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

from fixtures import FakeGpus, ServerProcess, TempDir, required_env  # noqa: E402

STAGES, PIPELINES, STEPS = 4, 2, 80
CLOCKS = [1410, 1260, 1110, 960, 810]  # the fake GPUs' SM clocks (min 810, step 150)
# A change applies a few seconds' worth of steps after it is made (docs/server.md, "Plan delivery
# without a barrier"): the run is long enough for the switch and the switch back to land in it.
# The straggle begins after the server's outage (killed a second after the first plan, near step
# 12, down 3 s and restarted): a report made during the outage waits in the ranks' queue, and its
# recovery, 10 steps later, could reach the server right behind it, so that the other pipeline's
# ranks get only the recovery's deployment. On a loaded machine that happened at 16.
STRAGGLER_DP, STRAGGLE_START, STRAGGLE_END = 1, 28, 38
PROFILE_STEPS = 2 * len(CLOCKS)  # one warm-up and one measured iteration per clock


def collapse(values: List[int]) -> List[int]:
    """Consecutive repeats removed: a setter skips a clock that is already locked."""
    return [v for i, v in enumerate(values) if i == 0 or values[i - 1] != v]


class PipelineTraining(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = TempDir("e2e")
        cls.gpus = FakeGpus(cls.dir.path, {"gpu_count": str(STAGES * PIPELINES), "min_mhz": "810", "step_mhz": "150"})
        cls.server = ServerProcess(cls.dir.path)
        cls.server_output = ""
        source = required_env("WATTCUT_SOURCE_DIR")
        cls.example = os.path.join(source, "examples", "pipeline_gpt")
        cls.with_wattcut = cls.train("with", ["--server-url", cls.server.url, "--emulate-clock-scaling",
                                              "--straggler", f"{STRAGGLER_DP}:{STRAGGLE_START}:{STRAGGLE_END}:0.15"],
                                     during=cls.kill_and_restart_the_server)
        cls.without_wattcut = cls.train("without", ["--no-wattcut"])

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.dir.remove()

    @classmethod
    def kill_and_restart_the_server(cls) -> None:
        """Once a plan is deployed: SIGKILL the server, wait 3 s, restart it on the same port and data."""
        for _ in range(6000):  # at most 10 minutes
            jobs = cls.server.request("GET", "/v1/jobs")["jobs"]
            if jobs:
                job = cls.server.request("GET", "/v1/jobs/" + cls.server.job_path(jobs[0]["job_id"]))
                if job["state"].get("deployment", {}).get("version", 0) >= 1:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("no plan was deployed")
        time.sleep(1)
        port = int(cls.server.url.rsplit(":", 1)[1])
        cls.server.kill()
        time.sleep(3)
        cls.server = ServerProcess(cls.dir.path, port=port)

    @classmethod
    def train(cls, name: str, extra: List[str], during: Optional[Callable[[], None]] = None) -> Dict[int, List[dict]]:
        log_dir = os.path.join(cls.dir.path, name)
        os.makedirs(log_dir)
        command = [sys.executable, os.path.join(cls.example, "launch.py"), "--nproc", str(STAGES * PIPELINES),
                   "--timeout-s", "600", os.path.join(cls.example, "train.py"), "--dp", str(PIPELINES),
                   "--steps", str(STEPS), "--log-dir", log_dir, *extra]
        output_path = os.path.join(cls.dir.path, f"{name}.out")
        with open(output_path, "w") as output:
            run = subprocess.Popen(command, env=dict(os.environ, **cls.gpus.env), stdout=output,
                                   stderr=subprocess.STDOUT, text=True)
            try:
                if during is not None:
                    during()
                returncode = run.wait(timeout=900)
            finally:
                if run.poll() is None:
                    run.kill()
                    run.wait()
        with open(output_path) as f:
            cls.outputs = getattr(cls, "outputs", {})
            cls.outputs[name] = f.read()
        if returncode != 0:
            raise AssertionError(f"training {name} wattcut failed ({returncode}):\n{cls.outputs[name][-6000:]}")
        logs = {}
        for rank in range(STAGES * PIPELINES):
            with open(os.path.join(log_dir, f"rank{rank}.jsonl")) as f:
                logs[rank] = [json.loads(line) for line in f]
            assert len(logs[rank]) == STEPS, f"rank {rank} logged {len(logs[rank])} steps"
        return logs

    def job_path(self) -> str:
        jobs = self.server.request("GET", "/v1/jobs")["jobs"]
        self.assertEqual(len(jobs), 1, jobs)
        self.assertIn("pipeline-gpt", jobs[0]["job_id"])
        return self.server.job_path(jobs[0]["job_id"])

    def plan_story(self, rank: int, steps: List[dict]) -> str:
        """For a failure's message: the steps at which the rank's schedule changed, and what the
        training output says about the rank's plans (a late deployment, the server away)."""
        changes, previous = [], None
        for s in steps:
            if s["schedule"] != previous:
                changes.append(s["step"])
                previous = s["schedule"]
        said = [line for line in self.outputs["with"].splitlines()
                if f"rank {rank}" in line and ("plan" in line or "server" in line)]
        return f"its schedule changed at steps {changes}; it said: " + "\n".join(said[-20:])

    def served_schedule(self, rank: int) -> List[List]:
        return self.server.request("GET", f"/v1/jobs/{self.job_path()}/schedule?rank={rank}")["frequencies"]

    def test_the_job_profiled_itself_and_the_server_computed_its_frontier(self):
        frontier = self.server.request("GET", f"/v1/jobs/{self.job_path()}/frontier")
        self.assertEqual(frontier["state"], "ready", frontier)
        self.assertGreater(frontier["num_points"], 1)
        for rank, steps in self.with_wattcut.items():
            for step in steps[:PROFILE_STEPS]:
                self.assertEqual(step["phase"], "profiling")
                # The sweep: every instruction of an iteration at one clock, from the highest down.
                self.assertEqual(set(step["clocks"]), {CLOCKS[step["step"] // 2]}, (rank, step))
            self.assertTrue(all(s["phase"] == "planned" for s in steps[PROFILE_STEPS:]), rank)

    def test_every_instruction_ran_at_its_planned_clock(self):
        for rank, steps in self.with_wattcut.items():
            for step in steps[PROFILE_STEPS:]:
                if step["schedule"]:
                    self.assertEqual([f for _, f in step["schedule"]], step["clocks"], (rank, step["step"]))
                else:  # before its first plan arrived: every instruction at the highest clock
                    self.assertEqual(set(step["clocks"]), {CLOCKS[0]}, (rank, step["step"]))

    def test_the_fake_nvml_locked_exactly_those_clocks_and_reset_them(self):
        locks: Dict[int, List[int]] = {}
        resets = set()
        for line in self.gpus.log_lines():
            if m := re.search(r"nvmlDeviceSetGpuLockedClocks\(GPU (\d+), (\d+),(\d+)\) -> 0$", line):
                self.assertEqual(m.group(2), m.group(3))
                locks.setdefault(int(m.group(1)), []).append(int(m.group(3)))
            elif m := re.search(r"nvmlDeviceResetGpuLockedClocks\(GPU (\d+)\) -> 0$", line):
                resets.add(int(m.group(1)))
        state = self.gpus.state()
        for rank, steps in self.with_wattcut.items():
            gpu = rank  # one process per GPU, device_id = local rank
            ran = [clock for step in steps for clock in step["clocks"]]
            self.assertEqual(locks.get(gpu), collapse(ran), f"GPU {gpu}")
            self.assertIn(gpu, resets)
            self.assertEqual(state[f"gpu{gpu}.locked_max"], "0")
            self.assertEqual(state[f"gpu{gpu}.mem_locked"], "0")

    def test_a_straggler_moves_the_other_pipeline_to_the_slower_plan_at_one_step_on_all_its_ranks(self):
        reports = [s["reported_slowdown"] for s in self.with_wattcut[STRAGGLER_DP * STAGES]
                   if s["reported_slowdown"] is not None]
        self.assertEqual(len(reports), 1)
        fastest = {rank: self.served_schedule(rank) for rank in range(STAGES * PIPELINES)}
        job = self.job_path()
        self.server.request("POST", f"/v1/jobs/{job}/stragglers", {"dp_rank": STRAGGLER_DP, "slowdown": reports[0]})
        try:
            slower = {rank: self.served_schedule(rank) for rank in range(STAGES * PIPELINES)}
        finally:
            self.server.request("POST", f"/v1/jobs/{job}/stragglers", {"dp_rank": STRAGGLER_DP, "recovered": True})
        self.assertNotEqual([slower[r] for r in range(STAGES)], [fastest[r] for r in range(STAGES)])

        switches = {}  # rank of the other pipelines -> (first, last + 1) step on the slower plan
        for rank, steps in self.with_wattcut.items():
            dp_rank = rank // STAGES
            planned = [s for s in steps if s["phase"] == "planned"]
            # Until the first deployment arrives (the frontier may still be computing) AllMax.
            first_plan = next(i for i, s in enumerate(planned) if s["schedule"])
            for s in planned[:first_plan]:
                self.assertEqual(set(s["clocks"]), {CLOCKS[0]}, (rank, s["step"]))
            on_slower = []
            for s in planned[first_plan:]:
                self.assertIn(s["schedule"], (fastest[rank], slower[rank]), f"rank {rank} step {s['step']}")
                if s["schedule"] == slower[rank] and slower[rank] != fastest[rank]:
                    on_slower.append(s["step"])
            if dp_rank == STRAGGLER_DP:
                self.assertEqual(on_slower, [], f"the straggler's rank {rank} keeps the selected plan")
                continue
            self.assertTrue(on_slower, f"rank {rank} never moved to the slower plan; {self.plan_story(rank, steps)}")
            # One stretch, after the report.
            self.assertEqual(on_slower, list(range(on_slower[0], on_slower[-1] + 1)), rank)
            self.assertGreater(on_slower[0], STRAGGLE_START, rank)
            switches[rank] = (on_slower[0], on_slower[-1] + 1)
        # Every rank of a pipeline switches at the same step, and back at the same step.
        for dp in range(PIPELINES):
            if dp == STRAGGLER_DP:
                continue
            ranks = [r for r in switches if r // STAGES == dp]
            self.assertEqual(len(ranks), STAGES)
            self.assertEqual(len({switches[r] for r in ranks}), 1, {r: switches[r] for r in ranks})

    def test_the_server_outage_was_survived_and_said_once_per_rank(self):
        output = self.outputs["with"]
        self.assertNotIn("Traceback", output)
        away = [line for line in output.splitlines() if "training goes on with" in line]
        back = [line for line in output.splitlines() if "is back after" in line]
        self.assertEqual(len(away), STAGES * PIPELINES, "\n".join(away))
        self.assertEqual(len(back), STAGES * PIPELINES, "\n".join(back))

    def test_training_is_numerically_the_same_with_and_without_wattcut(self):
        for rank in range(STAGES - 1, STAGES * PIPELINES, STAGES):  # the last stage of each pipeline
            with_losses = [s["loss"] for s in self.with_wattcut[rank]]
            without_losses = [s["loss"] for s in self.without_wattcut[rank]]
            self.assertEqual(with_losses, without_losses, f"rank {rank}")
            self.assertLess(with_losses[-1], 0.8 * with_losses[0], "the loss decreases")


class TrainingWithTheServerDownAtStart(unittest.TestCase):
    """The same 8 processes started while no server listens: they profile and run at the highest
    clock, register the job, upload their profiles once the server is up 6 s later, and then follow
    its plans; every GPU's clocks end reset. The first plan lands at step 18 on an idle 2-core VM
    (measured), which is when profiles wait longest for the server: 40 steps leave 22 to spare."""

    STEPS = 40

    def test_training_runs_at_the_highest_clock_then_follows_the_plans(self):
        directory = TempDir("e2e-down")
        self.addCleanup(directory.remove)
        gpus = FakeGpus(directory.path, {"gpu_count": str(STAGES * PIPELINES), "min_mhz": "810", "step_mhz": "150"})
        port = ServerProcess.free_port()
        log_dir = os.path.join(directory.path, "logs")
        os.makedirs(log_dir)
        example = os.path.join(required_env("WATTCUT_SOURCE_DIR"), "examples", "pipeline_gpt")
        command = [sys.executable, os.path.join(example, "launch.py"), "--nproc", str(STAGES * PIPELINES),
                   "--timeout-s", "600", os.path.join(example, "train.py"), "--dp", str(PIPELINES),
                   "--steps", str(self.STEPS), "--log-dir", log_dir, "--server-url", f"http://127.0.0.1:{port}",
                   "--emulate-clock-scaling"]
        output_path = os.path.join(directory.path, "train.out")
        with open(output_path, "w") as output:
            run = subprocess.Popen(command, env=dict(os.environ, **gpus.env), stdout=output, stderr=subprocess.STDOUT)
            try:
                time.sleep(6)
                server = ServerProcess(directory.path, port=port)
                self.addCleanup(server.kill)
                returncode = run.wait(timeout=900)
            finally:
                if run.poll() is None:
                    run.kill()
                    run.wait()
        with open(output_path) as f:
            text = f.read()
        self.assertEqual(returncode, 0, text[-6000:])
        self.assertNotIn("Traceback", text)
        jobs = server.request("GET", "/v1/jobs")["jobs"]
        self.assertEqual(len(jobs), 1, jobs)
        job = server.job_path(jobs[0]["job_id"])
        self.assertEqual(server.request("GET", f"/v1/jobs/{job}/frontier")["state"], "ready")
        state = gpus.state()
        for rank in range(STAGES * PIPELINES):
            with open(os.path.join(log_dir, f"rank{rank}.jsonl")) as f:
                steps = [json.loads(line) for line in f]
            self.assertEqual(len(steps), self.STEPS)
            planned = [s for s in steps if s["phase"] == "planned"]
            first_plan = next((i for i, s in enumerate(planned) if s["schedule"]), None)
            self.assertIsNotNone(first_plan, f"rank {rank} never got a plan")
            for s in planned[:first_plan]:
                self.assertEqual(set(s["clocks"]), {CLOCKS[0]}, (rank, s["step"]))
            served = server.request("GET", f"/v1/jobs/{job}/schedule?rank={rank}")["frequencies"]
            for s in planned[first_plan:]:
                self.assertEqual(s["schedule"], served, (rank, s["step"]))
                self.assertEqual([f for _, f in s["schedule"]], s["clocks"], (rank, s["step"]))
            self.assertEqual(state[f"gpu{rank}.locked_max"], "0")


if __name__ == "__main__":
    unittest.main()
