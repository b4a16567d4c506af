"""Shared by the Python tests: a real `wattcut serve` process and a fake NVML for the process tree.

The build (python/CMakeLists.txt) passes WATTCUT_BINARY, WATTCUT_FAKE_NVML_DIR and PYTHONPATH.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import unittest
import urllib.error
import urllib.parse
import urllib.request
from typing import Dict, List, Optional


def required_env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise RuntimeError(f"{name} is not set: run the Python tests through ctest (the build sets it)")
    return value


class FakeGpus:
    """A fake libnvidia-ml.so.1 state file; `env` makes a child process load the fake library."""

    def __init__(self, directory: str, settings: Dict[str, str]) -> None:
        self.state_path = os.path.join(directory, "nvml-state")
        with open(self.state_path, "w") as f:
            for key, value in settings.items():
                f.write(f"{key}={value}\n")
        library_dir = required_env("WATTCUT_FAKE_NVML_DIR")
        self.env = {
            "WATTCUT_FAKE_NVML_STATE": self.state_path,
            "LD_LIBRARY_PATH": library_dir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""),
        }

    def state(self) -> Dict[str, str]:
        with open(self.state_path) as f:
            return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)

    def log_lines(self):
        with open(self.state_path + ".log") as f:
            return [line.rstrip("\n") for line in f]


class FakeNvmlState:
    """One `wattcut agent`'s fake NVML state file, read and changed under the lock the fake library
    takes (a test's load script moves `load`)."""

    def __init__(self, path: str, settings: Dict[str, str]) -> None:
        self.path = path
        with open(path, "w") as f:
            f.write("".join(f"{k}={v}\n" for k, v in settings.items()))

    def env(self) -> Dict[str, str]:
        """What a process needs in its environment to load the fake library on this state."""
        return {"LD_LIBRARY_PATH": required_env("WATTCUT_FAKE_NVML_DIR"), "WATTCUT_FAKE_NVML_STATE": self.path}

    def read(self) -> Dict[str, str]:
        with open(self.path) as f:
            fcntl.flock(f, fcntl.LOCK_SH)
            return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)

    def log_lines(self) -> List[str]:
        """The fake library's log of the NVML calls that changed something."""
        with open(self.path + ".log") as f:
            return [line.rstrip("\n") for line in f]

    def set_load(self, load: float) -> None:
        with open(self.path, "r+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            state = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
            state["load"] = repr(load)
            f.seek(0)
            f.truncate()
            f.write("".join(f"{k}={v}\n" for k, v in state.items()))

    def locked_max(self, gpus: int) -> List[int]:
        state = self.read()
        return [int(state.get(f"gpu{g}.locked_max", "0")) for g in range(gpus)]

    def lock_calls(self) -> int:
        if not os.path.exists(self.path + ".log"):
            return 0
        with open(self.path + ".log") as f:
            return sum(1 for line in f if "nvmlDeviceSetGpuLockedClocks" in line)


class Service:
    """A wattcut process whose output is read on a thread; `ready` is the line to wait for."""

    def __init__(self, args: List[str], ready: str, env: Optional[Dict[str, str]] = None) -> None:
        self.process = subprocess.Popen(args, env=dict(os.environ, **(env or {})), stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        self.output = ""
        self.ready_line = ""
        for line in self.process.stdout:
            self.output += line
            if ready in line:
                self.ready_line = line
                break
        else:
            self.process.kill()
            self.process.wait()
            self.process.stdout.close()
            raise RuntimeError(f"{' '.join(args[:3])} did not start: {self.output}")
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self) -> None:
        for line in self.process.stdout:
            self.output += line

    def port(self) -> int:
        return int(re.search(r"http://127\.0\.0\.1:(\d+)", self.ready_line).group(1))

    def url(self, pattern: str) -> str:
        """The first group of `pattern` in what the process printed."""
        m = re.search(pattern, self.output)
        if not m:
            raise RuntimeError(f"no {pattern!r} in {self.output!r}")
        return m.group(1)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.reader.join(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.reader.join(timeout=10)
        self.process.stdout.close()


class ServerProcess:
    """`wattcut serve` on a free loopback port (or `port`) with its own data folder (the same
    one again for the same `directory`: a restart keeps the jobs)."""

    def __init__(self, directory: str, port: int = 0) -> None:
        self.data_dir = os.path.join(directory, "server-data")
        self.process = subprocess.Popen(
            [required_env("WATTCUT_BINARY"), "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", self.data_dir],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        first = self.process.stdout.readline()
        if "listening on " not in first:
            self.process.kill()
            raise RuntimeError(f"wattcut serve did not start: {first}{self.process.stdout.read()}")
        self.url = first.split("listening on ")[1].split()[0]

    def request(self, method: str, path: str, body: Optional[dict] = None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        try:
            with urllib.request.urlopen(req, timeout=60) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{method} {path}: HTTP {error.code}: {error.read().decode()}") from None

    @staticmethod
    def free_port() -> int:
        """A free loopback port (for torch.distributed's rendezvous)."""
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    @staticmethod
    def job_path(job_id: str) -> str:
        return urllib.parse.quote(job_id, safe="")

    def kill(self) -> None:
        """SIGKILL: no shutdown at all, as a crashed or killed server."""
        self.process.kill()
        self.process.wait()
        self.process.stdout.close()

    def stop(self) -> None:
        if self.process.stdout.closed:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()


class TempDir:
    def __init__(self, tag: str) -> None:
        self.path = tempfile.mkdtemp(prefix=f"wattcut-{tag}-")

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


class OneFakeGpuServerCase(unittest.TestCase):
    """A test case with one fake GPU (1410-1110 MHz, 150 MHz steps) for this process, a real server,
    and the fake library's path (`library`, the optimizer's nvml_library). TAG names the folder."""

    TAG = "python-api"

    def setUp(self):
        self.dir = TempDir(self.TAG)
        self.gpus = FakeGpus(self.dir.path, {"gpu_count": "1", "min_mhz": "1110", "step_mhz": "150"})
        os.environ["WATTCUT_FAKE_NVML_STATE"] = self.gpus.state_path
        self.server = ServerProcess(self.dir.path)
        self.library = os.path.join(required_env("WATTCUT_FAKE_NVML_DIR"), "libnvidia-ml.so.1")

    def tearDown(self):
        self.server.stop()
        self.dir.remove()
