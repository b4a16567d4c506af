#!/usr/bin/python3
"""Starts N local processes of a torch.distributed script, like `torchrun --nproc_per_node N`.

Debian 12's torchrun (torch 1.13 on Python 3.11) fails before starting any worker (its
redirect option parsing breaks on Python 3.11's enums), so the example ships this launcher: it
sets MASTER_ADDR, MASTER_PORT, RANK, LOCAL_RANK, WORLD_SIZE and LOCAL_WORLD_SIZE as torchrun
does (and GLOO_SOCKET_IFNAME=lo unless set: the processes are all on this machine), prefixes every output line with the rank, and when one process fails it stops the others
and exits with that process's status.

    /usr/bin/python3 examples/pipeline_gpt/launch.py --nproc 8 examples/pipeline_gpt/train.py --dp 2
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import List, Optional


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def forward_output(rank: int, stream, sink) -> None:
    for line in iter(stream.readline, b""):
        sink.write(f"[rank {rank}] {line.decode(errors='replace')}")
        sink.flush()


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nproc", type=int, required=True, help="processes to start")
    p.add_argument("--master-port", type=int, default=0, help="0: a free port")
    p.add_argument("--timeout-s", type=float, default=0, help="stop everything after this long (0: never)")
    p.add_argument("script")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.nproc < 1:
        p.error("--nproc must be >= 1")

    port = args.master_port or free_port()
    processes = []
    threads = []
    for rank in range(args.nproc):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                   LOCAL_RANK=str(rank), WORLD_SIZE=str(args.nproc), LOCAL_WORLD_SIZE=str(args.nproc))
        # Every process is on this machine: gloo talks over loopback, instead of looking the host's
        # name up (where it does not resolve, as on a fresh machine, gloo warns and falls back to it).
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")
        process = subprocess.Popen([sys.executable, args.script, *args.script_args], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        processes.append(process)
        thread = threading.Thread(target=forward_output, args=(rank, process.stdout, sys.stdout), daemon=True)
        thread.start()
        threads.append(thread)

    deadline = time.monotonic() + args.timeout_s if args.timeout_s > 0 else None
    status = 0
    while any(p.poll() is None for p in processes):
        failed = [p for p in processes if p.poll() not in (None, 0)]
        timed_out = deadline is not None and time.monotonic() > deadline
        if failed or timed_out:
            status = failed[0].returncode if failed else 124
            if timed_out:
                print(f"launch: stopping every process after {args.timeout_s} s", file=sys.stderr)
            for other in processes:
                if other.poll() is None:
                    other.send_signal(signal.SIGTERM)
            for other in processes:
                try:
                    other.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    other.kill()
            break
        time.sleep(0.05)
    for thread in threads:
        thread.join(timeout=5)
    if status == 0:
        status = next((p.returncode for p in processes if p.returncode != 0), 0)
    if status != 0:
        print(f"launch: a process exited with status {status}", file=sys.stderr)
    return status if status > 0 else 1 if status < 0 else 0


if __name__ == "__main__":
    sys.exit(main())
