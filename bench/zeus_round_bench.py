#!/usr/bin/python3
"""The Zeus schedule round, side by side: wattcut's planning server and Zeus's.

Both servers speak Zeus's pipeline-frequency-optimizer API. One client (this script: asyncio,
one keep-alive connection per rank, all on one thread) drives each the same way: register a job
of PP x DP x TP ranks, register every rank, then ROUNDS rounds in which every rank asks
GET /schedule/{job}?rank=R at once (a long poll: answered when all have asked) and then reports
a ProfilingResult (POST /result/{job}), which Zeus's server waits for before its next round.
Runs alternate between the servers (--runs each), each on a fresh server process.

Measured from /proc of the server process: its CPU seconds (user + system) over the whole run,
its peak resident memory (VmHWM), the most threads it had (sampled every 20 ms), and the time
from the first schedule request of a round to the last answer (the slowest round of the run).

Zeus's server is never part of `make test`: fetch ml-energy/zeus into a scratch folder and
install its server's Debian packages by hand (python3-fastapi python3-uvicorn python3-aiofiles
python3-pandas python3-httpx); pynvml, which Zeus's package imports and the server never calls,
is not in Debian 12: --zeus-shims names a folder with a stand-in module (docs/server.md,
"Against Zeus's server", shows one). Then:

  bench/zeus_round_bench.py --wattcut build/src/wattcut/cli/wattcut --zeus /tmp/zeus --zeus-shims /tmp/shims

Without --zeus only wattcut runs (what the project's own test does, with a small job).
Every wait is bounded; both servers listen on 127.0.0.1 only.
"""

import argparse
import asyncio
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def status_field(pid, name):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Connection:
    """One keep-alive HTTP/1.1 connection (the requests this bench makes, nothing more). Like any
    HTTP client it opens a new connection when the server has closed an idle one (both servers
    close a connection idle for 5 s, and registering 16,384 ranks takes longer)."""

    def __init__(self, port):
        self.port = port
        self.reader = self.writer = None

    @classmethod
    async def open(cls, port):
        connection = cls(port)
        await connection.connect()
        return connection

    async def connect(self):
        if self.writer is not None:
            self.writer.close()
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 20)
        sock = self.writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def request(self, method, path, body=None):
        data = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(data)}\r\n"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        for attempt in range(2):
            if self.reader.at_eof():
                await self.connect()
            try:
                self.writer.write(head.encode() + b"\r\n" + data)
                await self.writer.drain()
                header = await self.reader.readuntil(b"\r\n\r\n")
                break
            except (asyncio.IncompleteReadError, ConnectionError) as e:
                # Closed before any answer: the server dropped the idle connection, so it never
                # saw this request; once more on a new one.
                if attempt == 1 or (isinstance(e, asyncio.IncompleteReadError) and e.partial):
                    raise
                await self.connect()
        lines = header.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        payload = await self.reader.readexactly(length) if length else b""
        return status, payload

    def close(self):
        self.writer.close()


class Server:
    """A server process on 127.0.0.1:port, stopped with SIGTERM (then SIGKILL)."""

    def __init__(self, name, argv, env, cwd, port):
        self.name, self.port = name, port
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        for _ in range(600):  # at most 60 s
            if self.process.poll() is not None:
                break
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        self.log.seek(0)
        raise RuntimeError(f"{name} did not start:\n{self.log.read().decode(errors='replace')[-2000:]}")

    @property
    def pid(self):
        return self.process.pid

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)


def start_wattcut(binary, port, data_dir, microbatches):
    argv = [binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data_dir,
            "--microbatches", str(microbatches)]
    return Server("wattcut", argv, dict(os.environ), None, port)


def start_zeus(zeus_dir, shims, port, solution_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (zeus_dir, shims) if p)
    env["ZEUS_PFO_SCHEDULER"] = "PointSolution3D"
    env["ZEUS_PFO_SCHEDULER_ARGS"] = json.dumps({"solution_path": solution_path})
    env["ZEUS_PFO_DUMP_DATA"] = "false"
    env["ZEUS_PFO_LOG_LEVEL"] = "WARNING"  # its default, DEBUG, logs every request
    argv = ["/usr/bin/python3", "-m", "uvicorn", "zeus.optimizer.pipeline_frequency.server.router:app",
            "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log"]
    return Server("zeus", argv, env, zeus_dir, port)


def stage_schedule(microbatches, freq):
    """One stage's instructions (1F1B's forwards and backwards) at one frequency, as Zeus lists them."""
    return [[kind, freq] for _ in range(microbatches) for kind in ("forward", "backward")]


async def sample_threads(pid, peak, stop):
    while not stop.is_set():
        peak[0] = max(peak[0], status_field(pid, "Threads"))
        try:
            await asyncio.wait_for(stop.wait(), 0.02)
        except asyncio.TimeoutError:
            pass


async def drive(server, pp, dp, tp, rounds, frequencies):
    """One run against `server`; what was measured, or raises with what went wrong."""
    world = pp * dp * tp
    cpu_before = cpu_seconds(server.pid)
    peak_threads = [status_field(server.pid, "Threads")]
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_threads(server.pid, peak_threads, stop))
    control = await Connection.open(server.port)
    status, body = await control.request("POST", "/register_job", {
        "job_id": "", "pp_degree": pp, "dp_degree": dp, "tp_degree": tp, "world_size": world, "job_metadata": None})
    if status != 200:
        raise RuntimeError(f"{server.name}: register_job: {status} {body[:300]!r}")
    job = json.loads(body)
    ranks = [await Connection.open(server.port) for _ in range(world)]

    async def register(rank):
        info = {"rank": rank, "dp_rank": rank // (pp * tp), "pp_rank": (rank // tp) % pp, "tp_rank": rank % tp,
                "available_frequencies": frequencies}
        status, body = await ranks[rank].request("POST", f"/register_rank/{job}", info)
        if status != 200:
            raise RuntimeError(f"{server.name}: register_rank {rank}: {status} {body[:300]!r}")

    await asyncio.gather(*(register(r) for r in range(world)))
    slowest_round_s = 0.0
    for round_number in range(rounds):
        began = time.monotonic()

        async def schedule(rank):
            status, body = await ranks[rank].request("GET", f"/schedule/{job}?rank={rank}")
            if status != 200 or json.loads(body).get("rank") != rank:
                raise RuntimeError(f"{server.name}: round {round_number + 1}, rank {rank}: {status} {body[:300]!r}")
            return time.monotonic()

        answered = await asyncio.wait_for(asyncio.gather(*(schedule(r) for r in range(world))), 300)
        slowest_round_s = max(slowest_round_s, max(answered) - began)

        async def result(rank):
            report = {"rank": rank, "iter_time": [1.0], "iter_energy": [100.0], "time_breakdown": {},
                      "energy_breakdown": {}}
            status, body = await ranks[rank].request("POST", f"/result/{job}", report)
            if status != 200:
                raise RuntimeError(f"{server.name}: result {rank}: {status} {body[:300]!r}")

        await asyncio.wait_for(asyncio.gather(*(result(r) for r in range(world))), 300)
    stop.set()
    await sampler
    for connection in ranks + [control]:
        connection.close()
    return {
        "cpu_s": cpu_seconds(server.pid) - cpu_before,
        "peak_rss_mb": status_field(server.pid, "VmHWM") / 1024,
        "threads": peak_threads[0],
        "slowest_round_s": slowest_round_s,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wattcut", default="build/src/wattcut/cli/wattcut", help="the wattcut binary")
    parser.add_argument("--zeus", help="a folder holding Zeus's `zeus` package (fetched, unchanged)")
    parser.add_argument("--zeus-shims", help="a folder of stand-in modules for what Debian 12 lacks (pynvml)")
    parser.add_argument("--ranks", default="8x16x8", help="PPxDPxTP (default 8x16x8 = 1,024 ranks)")
    parser.add_argument("--microbatches", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="schedule rounds per run")
    parser.add_argument("--runs", type=int, default=3, help="runs per server, alternating")
    parser.add_argument("--json", help="also write the runs here as JSON")
    args = parser.parse_args()
    try:
        pp, dp, tp = (int(x) for x in args.ranks.lower().split("x"))
        if min(pp, dp, tp) < 1:
            raise ValueError
    except ValueError:
        parser.error(f"--ranks: expected PPxDPxTP of positive integers, got {args.ranks!r}")
    world = pp * dp * tp
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < world + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(world + 64, soft)), hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < world + 64:
        sys.exit(f"zeus_round_bench: {world} ranks need {world + 64} descriptors; the limit is {hard} (ulimit -n)")
    if not os.access(args.wattcut, os.X_OK):
        sys.exit(f"zeus_round_bench: {args.wattcut}: not an executable (build first, or pass --wattcut)")
    frequencies = list(range(1410, 194, -15))
    scratch = tempfile.mkdtemp(prefix="wattcut-zeus-bench-")
    solution = os.path.join(scratch, "solution.py")
    with open(solution, "w") as f:
        f.write(repr([stage_schedule(args.microbatches, 1410) for _ in range(pp)]))
    servers = ["zeus", "wattcut"] if args.zeus else ["wattcut"]
    runs = []
    try:
        for run in range(args.runs):
            for name in servers:
                port = free_port()
                if name == "wattcut":
                    data = tempfile.mkdtemp(dir=scratch)
                    server = start_wattcut(args.wattcut, port, data, args.microbatches)
                else:
                    server = start_zeus(args.zeus, args.zeus_shims, port, solution)
                try:
                    measured = asyncio.run(drive(server, pp, dp, tp, args.rounds, frequencies))
                except (RuntimeError, OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
                    sys.exit(f"zeus_round_bench: {name}, run {run + 1}: {type(e).__name__}: {e}")
                finally:
                    server.stop()
                measured.update(server=name, run=run + 1)
                runs.append(measured)
                print(f"{name:8s} run {run + 1}: {measured['cpu_s']:.2f} CPU s, peak RSS "
                      f"{measured['peak_rss_mb']:.0f} MB, {measured['threads']} threads, slowest round answered in "
                      f"{measured['slowest_round_s']:.2f} s", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\n{world} ranks ({pp} x {dp} x {tp}), {args.rounds} rounds per run, {args.runs} runs per server")
    print(f"{'server':8s} {'CPU s':>20s} {'peak RSS MB':>12s} {'threads':>8s} {'slowest round s':>20s}")
    for name in servers:
        mine = [r for r in runs if r["server"] == name]
        cpu = " / ".join("%.2f" % r["cpu_s"] for r in mine)
        rounds = "%.2f - %.2f" % (min(r["slowest_round_s"] for r in mine), max(r["slowest_round_s"] for r in mine))
        print(f"{name:8s} {cpu:>20s} {max(r['peak_rss_mb'] for r in mine):12.0f} "
              f"{max(r['threads'] for r in mine):8d} {rounds:>20s}")
    if args.zeus:
        zeus_cpu = sorted(r["cpu_s"] for r in runs if r["server"] == "zeus")
        ours = sorted(r["cpu_s"] for r in runs if r["server"] == "wattcut")
        ratio = zeus_cpu[len(zeus_cpu) // 2] / max(ours[len(ours) // 2], 1e-9)
        print(f"median CPU: Zeus's server uses {ratio:.1f}x wattcut's")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
