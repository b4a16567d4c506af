"""The Python API through the node agent: `agent_socket` (or $WATTCUT_AGENT_SOCKET) makes the rank
set its clocks through a real `wattcut agent` process (on simulated GPUs) and open no NVML: its own
NVML library here does not exist, so a rank that opened it could not start."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import ServerProcess, TempDir, required_env  # noqa: E402

from wattcut import PipelineFrequencyOptimizer, WattcutError, node_agent  # noqa: E402

ZEUS_ARGS = dict(rank=0, dp_rank=0, pp_rank=0, tp_rank=0, device_id=0, dp_degree=1, pp_degree=1, tp_degree=1,
                 world_size=1)


class AgentProcess:
    """`wattcut agent` on one simulated GPU, on a socket in `directory`."""

    def __init__(self, directory: str) -> None:
        self.socket = os.path.join(directory, "agent.sock")
        self.process = subprocess.Popen(
            [required_env("WATTCUT_BINARY"), "agent", "--socket", self.socket, "--backend", "simulated"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        first = self.process.stdout.readline()
        if "serving" not in first:
            self.process.kill()
            raise RuntimeError(f"wattcut agent did not start: {first}{self.process.stdout.read()}")

    def stop(self) -> str:
        """SIGTERM; what it printed after its first line."""
        self.process.terminate()
        try:
            out, _ = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, _ = self.process.communicate()
        return out


class ThroughTheAgent(unittest.TestCase):
    def setUp(self):
        self.dir = TempDir("python-agent")
        self.agent = AgentProcess(self.dir.path)
        self.server = ServerProcess(self.dir.path)

    def tearDown(self):
        self.server.stop()
        self.agent.stop()
        self.dir.remove()
        os.environ.pop("WATTCUT_AGENT_SOCKET", None)

    def optimizer(self, **kwargs) -> PipelineFrequencyOptimizer:
        return PipelineFrequencyOptimizer(**ZEUS_ARGS, server_url=self.server.url, job_metadata="agent-test",
                                          num_microbatches=2, profile=False,
                                          nvml_library="libnvidia-ml-absent.so.1", **kwargs)

    def run_step(self, pfo: PipelineFrequencyOptimizer) -> list:
        clocks = []
        pfo.on_step_begin()
        for name in ("forward", "backward"):
            pfo.on_instruction_begin(name)
            clocks.append(pfo.last_frequency_mhz)
            pfo.on_instruction_end(name)
        pfo.on_step_end()
        return clocks

    def test_agent_socket_sets_the_clocks_through_the_agent(self):
        with self.optimizer(agent_socket=self.agent.socket) as pfo:
            self.assertEqual(pfo.gpu_backend_name, f"agent(unix:{self.agent.socket})")
            self.assertEqual(pfo.available_frequencies[0], 1410)
            self.assertEqual(self.run_step(pfo), [1410, 1410])  # no plan yet: the highest clock
            self.assertEqual(pfo.gpu_clock_mhz(), 1410)
        log = self.agent.stop()
        # The agent saw this process take the GPU's lease and give it back.
        self.assertIn(f"lease 1 of pid {os.getpid()} (uid {os.getuid()})", log)
        self.assertIn("ended (released)", log)

    def test_the_variable_stands_for_the_option(self):
        os.environ["WATTCUT_AGENT_SOCKET"] = self.agent.socket
        self.assertEqual(node_agent(), self.agent.socket)  # what the optimizer below finds
        with self.optimizer() as pfo:
            self.assertEqual(pfo.gpu_backend_name, f"agent(unix:{self.agent.socket})")
        os.environ.pop("WATTCUT_AGENT_SOCKET")
        if not os.path.exists("/run/wattcut/agent.sock"):  # a node without an agent
            self.assertEqual(node_agent(), "")

    def test_an_agent_that_is_not_there_is_a_clear_error(self):
        absent = os.path.join(self.dir.path, "absent.sock")
        with self.assertRaisesRegex(WattcutError, f"cannot reach unix:{absent}: no socket file there"):
            self.optimizer(agent_socket=absent)


if __name__ == "__main__":
    unittest.main()
