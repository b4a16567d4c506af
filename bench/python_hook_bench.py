#!/usr/bin/python3
"""What the wattcut hooks cost a Python training loop, per call.

Starts `wattcut serve` and one rank on the fake NVML (the real dlopen path and the watchdog
setter process), runs planned steps of 2 x M instructions with no work between the hooks, and
reports the mean time of on_instruction_begin + on_instruction_end (one instruction's hooks) and
of on_step_begin + on_step_end (one step's; plans arrive in the background, so no I/O), next
to an empty Python function call for scale. Run from the build folder's environment:

    PYTHONPATH=build/python WATTCUT_BINARY=build/src/wattcut/cli/wattcut \\
    WATTCUT_FAKE_NVML_DIR=build/src/wattcut/gpu/fake_nvml /usr/bin/python3 bench/python_hook_bench.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))

from fixtures import FakeGpus, ServerProcess, TempDir, required_env  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--microbatches", type=int, default=64)
    p.add_argument("--steps", type=int, default=50)
    args = p.parse_args()

    directory = TempDir("hook-bench")
    gpus = FakeGpus(directory.path, {"gpu_count": "1"})
    os.environ["WATTCUT_FAKE_NVML_STATE"] = gpus.state_path
    server = ServerProcess(directory.path)
    from wattcut import PipelineFrequencyOptimizer

    try:
        pfo = PipelineFrequencyOptimizer(
            rank=0, dp_rank=0, pp_rank=0, tp_rank=0, device_id=0, dp_degree=1, pp_degree=1, tp_degree=1,
            world_size=1, server_url=server.url, num_microbatches=args.microbatches, profile=False,
            nvml_library=os.path.join(required_env("WATTCUT_FAKE_NVML_DIR"), "libnvidia-ml.so.1"))
        order = ["forward", "backward"] * args.microbatches  # 1F1B on one stage

        def empty(name: str) -> None:
            pass

        instruction_s = step_s = empty_s = 0.0
        for _ in range(args.steps):
            began = time.perf_counter()
            pfo.on_step_begin()
            step_s += time.perf_counter() - began
            began = time.perf_counter()
            for name in order:
                pfo.on_instruction_begin(name)
                pfo.on_instruction_end(name)
            instruction_s += time.perf_counter() - began
            began = time.perf_counter()
            for name in order:
                empty(name)
                empty(name)
            empty_s += time.perf_counter() - began
            began = time.perf_counter()
            pfo.on_step_end()
            step_s += time.perf_counter() - began
        pfo.close()
    finally:
        server.stop()
        directory.remove()

    calls = args.steps * len(order)
    print(f"{calls} instructions, {args.steps} steps of {len(order)}")
    print(f"on_instruction_begin + on_instruction_end: {instruction_s / calls * 1e6:8.2f} us per instruction")
    print(f"two empty Python calls (for scale):        {empty_s / calls * 1e6:8.2f} us")
    print(f"on_step_begin + on_step_end:               {step_s / args.steps * 1e6:8.1f} us per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
