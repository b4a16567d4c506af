"""End to end through the node agent: `wattcut agent` runs as root on the fake NVML (8 GPUs); the
4-stage PyTorch example with 2 data-parallel pipelines (8 processes) runs as an unprivileged user
(uid 65534, through setpriv) with WATTCUT_AGENT_SOCKET set, against a real `wattcut serve`.

What must hold: training runs and plans are followed; the fake NVML's call log shows every lock
made by the agent's pid (each GPU's sequence of locks is exactly the clocks its rank ran) and no
NVML call from any other process, although the training processes could load the fake NVML too
(its library is on their LD_LIBRARY_PATH and its state file is writable by them); every GPU's
clocks end reset once the job's leases end.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import unittest
from typing import Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

from fixtures import FakeGpus, ServerProcess, TempDir, required_env  # noqa: E402

STAGES, PIPELINES, STEPS = 4, 2, 24
CLOCKS = [1410, 1260, 1110, 960, 810]
NOBODY = 65534


def collapse(values: List[int]) -> List[int]:
    return [v for i, v in enumerate(values) if i == 0 or values[i - 1] != v]


class AgentProcess:
    """`wattcut agent` as root on the fake GPUs `gpus` (their `env`; the fake NVML unless
    `extra_args` names another backend), on a socket every user may connect to."""

    def __init__(self, directory: str, gpus: FakeGpus, extra_args: List[str] = ()) -> None:
        self.socket = os.path.join(directory, "agent.sock")
        self.process = subprocess.Popen(
            [required_env("WATTCUT_BINARY"), "agent", "--socket", self.socket, "--socket-mode", "0666",
             "--state-dir", os.path.join(directory, "agent-state"), *extra_args],
            env=dict(os.environ, **gpus.env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = ""
        for line in self.process.stdout:
            seen += line
            if "wattcut agent: serving" in line:
                break
        else:
            self.process.kill()
            raise RuntimeError(f"wattcut agent did not start: {seen}")
        self.output = seen
        # Keep reading its log, so that it never blocks on a full pipe.
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.output += line

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.reader.join(timeout=30)


def train_as_nobody(directory: str, gpus, agent: AgentProcess, server_url: str, stages: int, pipelines: int,
                    steps: int, extra_args: List[str]):
    """Runs the example's STAGES x PIPELINES ranks as uid 65534 through `agent`, with the fake GPUs'
    state and log writable by them (anything they did there would be logged with their pid). Returns
    its log folder, its output and each rank's step log; raises (after stopping the agent) if it fails."""
    for path in (gpus.state_path, gpus.state_path + ".log"):
        open(path, "a").close()
        os.chmod(path, 0o666)
    log_dir = os.path.join(directory, "logs")
    home = os.path.join(directory, "home")
    for folder in (log_dir, home):
        os.makedirs(folder)
        os.chmod(folder, 0o777)
    example = os.path.join(required_env("WATTCUT_SOURCE_DIR"), "examples", "pipeline_gpt")
    command = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups",
               sys.executable, os.path.join(example, "launch.py"), "--nproc", str(stages * pipelines),
               "--timeout-s", "600", os.path.join(example, "train.py"), "--stages", str(stages),
               "--dp", str(pipelines), "--steps", str(steps), "--log-dir", log_dir, "--server-url", server_url,
               "--emulate-clock-scaling", "--emulated-ms", "5,10", *extra_args]
    env = dict(os.environ, **gpus.env, WATTCUT_AGENT_SOCKET=agent.socket, HOME=home)
    run = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    if run.returncode != 0:
        agent.stop()
        raise AssertionError(f"training through the agent failed ({run.returncode}):\n{run.stdout[-6000:]}")
    logs: Dict[int, List[dict]] = {}
    for rank in range(stages * pipelines):
        with open(os.path.join(log_dir, f"rank{rank}.jsonl")) as f:
            logs[rank] = [json.loads(line) for line in f]
    return log_dir, run.stdout, logs


def wait_until_reset(gpus, is_reset, count: int) -> None:
    """Waits (bounded: 30 s) until `is_reset(state, gpu)` for each of the `count` GPUs."""
    for _ in range(300):
        state = gpus.state()
        if all(is_reset(state, g) for g in range(count)):
            return
        time.sleep(0.1)


@unittest.skipUnless(os.geteuid() == 0, "needs root: the agent runs as root, training as uid 65534")
class PipelineTrainingThroughTheAgent(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = TempDir("e2e-agent")
        os.chmod(cls.dir.path, 0o755)
        cls.gpus = FakeGpus(cls.dir.path, {"gpu_count": str(STAGES * PIPELINES), "min_mhz": "810", "step_mhz": "150"})
        cls.agent = AgentProcess(cls.dir.path, cls.gpus)
        cls.server = ServerProcess(cls.dir.path)
        # Anything a training process did through NVML would be logged with its pid.
        cls.log_dir, cls.output, cls.logs = train_as_nobody(
            cls.dir.path, cls.gpus, cls.agent, cls.server.url, STAGES, PIPELINES, STEPS,
            # Three profiled clocks (1410, 1110, 810): a plan well before the last step, in less time.
            ["--profile-freq-step-mhz", "300"])
        # The job's processes have exited: the agent ends their leases and resets their GPUs.
        wait_until_reset(cls.gpus, lambda state, g: state.get(f"gpu{g}.locked_max", "0") == "0", STAGES * PIPELINES)
        cls.agent.stop()

    @classmethod
    def tearDownClass(cls):
        cls.agent.stop()
        cls.server.stop()
        cls.dir.remove()

    def test_training_ran_as_the_unprivileged_user_and_followed_its_plans(self):
        for rank, steps in self.logs.items():
            self.assertEqual(len(steps), STEPS, rank)
            self.assertTrue(any(s["phase"] == "planned" and s["schedule"] for s in steps), f"rank {rank} got no plan")
        owners = {os.stat(os.path.join(self.log_dir, f"rank{r}.jsonl")).st_uid for r in range(STAGES * PIPELINES)}
        self.assertEqual(owners, {NOBODY})

    def test_every_lock_was_made_by_the_agent_and_no_training_process_called_nvml(self):
        agent_pid = str(self.agent.process.pid)
        locks: Dict[int, List[int]] = {}
        for line in self.gpus.log_lines():
            pid = line.split(" ", 1)[0]
            self.assertEqual(pid, agent_pid, f"an NVML call from another process: {line}")
            if m := re.search(r"nvmlDeviceSetGpuLockedClocks\(GPU (\d+), (\d+),(\d+)\) -> 0$", line):
                self.assertEqual(m.group(2), m.group(3))
                locks.setdefault(int(m.group(1)), []).append(int(m.group(3)))
        for rank, steps in self.logs.items():
            ran = [clock for step in steps for clock in step["clocks"]]
            self.assertEqual(locks.get(rank), collapse(ran), f"GPU {rank}: the agent's locks are the clocks rank ran")

    def test_every_gpu_ends_reset(self):
        state = self.gpus.state()
        for gpu in range(STAGES * PIPELINES):
            self.assertEqual(state.get(f"gpu{gpu}.locked_max", "0"), "0", gpu)
            self.assertEqual(state.get(f"gpu{gpu}.mem_locked", "0"), "0", gpu)


if __name__ == "__main__":
    unittest.main()
