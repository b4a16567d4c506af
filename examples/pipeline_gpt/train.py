#!/usr/bin/python3
"""A small GPT trained with 1F1B pipeline parallelism, one process per stage, with wattcut.

Four stages (`--stages`), `--dp` data-parallel pipelines, point-to-point send/recv over
torch.distributed (gloo, CPU), the wattcut hooks around every forward and backward. Launch with
launch.py beside it, which starts the processes as torchrun does (Debian 12's own torchrun fails
before it starts a worker); ranks are laid out pipeline by pipeline (rank = dp_rank * stages + stage):

    wattcut serve --data-dir /tmp/wattcut &
    PYTHONPATH=build/python /usr/bin/python3 examples/pipeline_gpt/launch.py --nproc 8 \\
        examples/pipeline_gpt/train.py --dp 2 --server-url http://127.0.0.1:7787

By default it trains until the job has profiled itself, the server has planned it and the plan has
run `--planned-steps` steps, and it says when each happens. On a machine without NVIDIA GPUs
(NVML does not load or sees none, and no node agent), `--gpu-backend auto`, the default, stands in
a modelled A100 (`simulated`) and says so: as a CPU's speed and power do not follow that GPU's
clock, each instruction then also runs `--emulated-ms` of work on the simulated GPU, which lasts
and draws what the A100 model says at its clock, so that the profile, the frontier and the plan
are those of that GPU.

Inside a Slurm job run with `--wattcut` (docs/slurm.md), `--slurm` takes the planning server, the
job's name, the rank, the world size and the GPU from the plugin's variables: the script passes only
what Slurm cannot know (its degrees, and its stage and pipeline, since it lays ranks out pipeline by
pipeline rather than Megatron's way). Each srun task sets torch.distributed's variables from Slurm's:

    srun bash -c 'RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID \
        exec python3 train.py --dp 2 --slurm'

`--no-wattcut` trains without any hook (the same numerics: compare the losses). Each rank writes
one JSON line per step to `--log-dir` (its plan and the deployment version it came in, the clock
each instruction ran at, the loss).

On a CPU the (fake or simulated) GPU's clock does not change the speed of the compute, so
`--emulate-clock-scaling` (the default with the simulated backend) runs `--emulated-ms` of the
simulated GPU's work in each instruction (`run_simulated_work`) or, on another backend (the fake
NVML of the tests), stretches each instruction to `--emulated-ms` times max clock / locked clock,
reading the clock from the GPU through wattcut.
The test-only `--straggler` makes one pipeline sleep for some steps and report itself to the server.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import sys
import time
import urllib.parse
import urllib.request
from typing import List, Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------- the model, split into stages


class Block(nn.Module):
    """A pre-norm causal transformer block."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq = x.shape[1]
        causal = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
        h = self.norm1(x)
        x = x + self.attention(h, h, h, attn_mask=causal, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Stage(nn.Module):
    """One pipeline stage: embeddings on the first, the LM head on the last, blocks on all."""

    def __init__(self, stage: int, stages: int, vocab: int, seq: int, width: int, heads: int, blocks: int) -> None:
        super().__init__()
        self.first = stage == 0
        self.last = stage == stages - 1
        if self.first:
            self.tokens = nn.Embedding(vocab, width)
            self.positions = nn.Embedding(seq, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(blocks))
        if self.last:
            self.norm = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.first:
            x = self.tokens(x) + self.positions(torch.arange(x.shape[1]))
        for block in self.blocks:
            x = block(x)
        if self.last:
            x = self.head(self.norm(x))
        return x


def batch(step: int, dp_rank: int, microbatch: int, size: int, seq: int, vocab: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """Deterministic synthetic text: arithmetic sequences mod vocab, learnable by a small model."""
    g = torch.Generator().manual_seed(1_000_003 * step + 1009 * dp_rank + microbatch)
    start = torch.randint(0, vocab, (size, 1), generator=g)
    stride = torch.randint(1, 4, (size, 1), generator=g)
    tokens = (start + stride * torch.arange(seq + 1)) % vocab
    return tokens[:, :-1], tokens[:, 1:]


# ---------------------------------------------------------------- the 1F1B schedule


def one_f_one_b(stage: int, stages: int, microbatches: int) -> List[Tuple[str, int]]:
    """The instructions of one stage in execution order: min(stages - stage, M) forwards, then
    backward/forward alternately, then the remaining backwards (wattcut's `1f1b`, which is
    DeepSpeed's TrainSchedule and Megatron's non-interleaved schedule)."""
    warmup = min(stages - stage, microbatches)
    order = [("forward", m) for m in range(warmup)]
    next_forward, next_backward = warmup, 0
    while next_backward < microbatches:
        order.append(("backward", next_backward))
        next_backward += 1
        if next_forward < microbatches:
            order.append(("forward", next_forward))
            next_forward += 1
    return order


# ---------------------------------------------------------------- training


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stages", type=int, default=4)
    p.add_argument("--dp", type=int, default=1, help="data-parallel pipelines")
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--microbatch-size", type=int, default=8)
    p.add_argument("--steps", type=int, default=0,
                   help="steps to train; 0: until the plan has run --planned-steps steps (at most --max-steps), "
                        "or 30 without wattcut")
    p.add_argument("--planned-steps", type=int, default=20)
    p.add_argument("--max-steps", type=int, default=600)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--vocab", type=int, default=32)
    p.add_argument("--width", type=int, default=32)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--blocks-per-stage", type=int, default=1)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-dir", default="", help="write one JSON line per step per rank here")
    w = p.add_argument_group("wattcut")
    w.add_argument("--no-wattcut", action="store_true", help="train without wattcut")
    w.add_argument("--server-url", default="http://127.0.0.1:7787")
    w.add_argument("--slurm", action="store_true",
                   help="in a Slurm job with --wattcut: the server, job name, rank and GPU from the plugin's variables")
    w.add_argument("--p2p-power-w", type=float, default=75.0)
    w.add_argument("--gpu-backend", default="auto", choices=["auto", "nvml", "simulated"],
                   help="auto: nvml where NVML sees a GPU or a node agent is there, else simulated")
    w.add_argument("--dry-run", action="store_true", help="only log clock changes")
    w.add_argument("--no-profile", action="store_true",
                   help="do not profile: the server has the job's profile (--profile-for-new-jobs, PUT .../profile)")
    w.add_argument("--profile-warmup", type=int, default=1)
    w.add_argument("--profile-iterations", type=int, default=1)
    w.add_argument("--profile-freq-step-mhz", type=int, default=-1,
                   help="profile every this many MHz (0: every clock); default: every clock, and every "
                        "120 MHz with the simulated backend, which has 81 clocks")
    w.add_argument("--profile-min-freq-mhz", type=int, default=0)
    w.add_argument("--emulate-clock-scaling", action=argparse.BooleanOptionalAction, default=None,
                   help="run emulated-ms of the simulated GPU's work in each instruction (another backend: "
                        "stretch it to emulated-ms x max clock / locked clock); default: with the simulated backend")
    w.add_argument("--emulated-ms", default="15,30",
                   help="forward,backward milliseconds at the highest clock (the last stage x1.5)")
    t = p.add_argument_group("test-only switches")
    t.add_argument("--straggler", default="",
                   help="DP:START:END:SLEEP_S: pipeline DP sleeps SLEEP_S in steps START..END-1 and "
                        "reports itself (stage 0) to the server at START and as recovered at END")
    args = p.parse_args(argv)
    if args.gpu_backend == "auto":
        args.gpu_backend = "nvml" if nvidia_gpu_reachable() else "simulated"
        args.gpu_backend_chosen = "auto"
    if args.emulate_clock_scaling is None:
        args.emulate_clock_scaling = args.gpu_backend == "simulated"
    if args.profile_freq_step_mhz < 0:
        args.profile_freq_step_mhz = 120 if args.gpu_backend == "simulated" else 0
    if args.steps < 0 or args.planned_steps < 1 or args.max_steps < 1:
        p.error("--steps must be >= 0, --planned-steps and --max-steps >= 1")
    return args


class Straggler:
    def __init__(self, spec: str) -> None:
        self.dp = self.start = self.end = -1
        self.sleep_s = 0.0
        if spec:
            dp, start, end, sleep_s = spec.split(":")
            self.dp, self.start, self.end, self.sleep_s = int(dp), int(start), int(end), float(sleep_s)

    def slow(self, dp_rank: int, step: int) -> bool:
        return dp_rank == self.dp and self.start <= step < self.end


def frontier_summary(server_url: str, job_id: str) -> str:
    """What the plan the job ran saves, from the server's GET /v1/jobs/{id}/frontier."""
    url = f"{server_url}/v1/jobs/{urllib.parse.quote(job_id, safe='')}/frontier"
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            f = json.load(answer)
    except (OSError, ValueError) as e:
        return f"the frontier could not be read from {url}: {e}"
    if f.get("state") != "ready":
        return f"the frontier is {f.get('state')}"
    least, fastest, selected = f["min_energy"], f["fastest"], f["selected"]
    text = (f"frontier: {f['num_points']} plans, T_min {fastest['time_s']:.3f} s to T* {least['time_s']:.3f} s an "
            f"iteration (T* the least energy, {least['energy_j']:.1f} J); the plan run, point {selected['index']}, "
            f"takes {selected['time_s']:.3f} s and {selected['energy_j']:.1f} J")
    if f.get("all_max"):
        all_max = f["all_max"]
        saved = 100 * (1 - selected["energy_j"] / all_max["energy_j"])
        text += (f": {saved:.1f} % less than AllMax, every instruction at the highest clock "
                 f"({all_max['time_s']:.3f} s, {all_max['energy_j']:.1f} J)")
    return text


def nvidia_gpu_reachable() -> bool:
    """Whether clocks can be set on an NVIDIA GPU here: a node agent wattcut finds by itself
    (wattcut.node_agent), or NVML loads and counts a GPU."""
    try:
        from wattcut import node_agent
        if node_agent():
            return True
    except ImportError:
        pass  # --no-wattcut without the module: NVML alone decides
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if nvml.nvmlInit_v2() != 0:
            return False
        count = ctypes.c_uint(0)
        counted = nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) == 0
        nvml.nvmlShutdown()
        return counted and count.value > 0
    except (OSError, AttributeError):
        return False


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    stages = args.stages
    if world != stages * args.dp:
        raise SystemExit(f"world size {world} != stages {stages} x dp {args.dp}")
    dp_rank, stage = divmod(rank, stages)
    first, last = stage == 0, stage == stages - 1
    device_id = int(os.environ.get("LOCAL_RANK", rank))

    torch.manual_seed(args.seed + stage)  # every pipeline starts from the same weights
    torch.use_deterministic_algorithms(True)
    model = Stage(stage, stages, args.vocab, args.seq, args.width, args.heads, args.blocks_per_stage)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    dp_groups = [dist.new_group([d * stages + s for d in range(args.dp)]) for s in range(stages)]
    my_dp_group = dp_groups[stage]

    pfo = None
    gpu_read_errors: Tuple[type, ...] = ()
    if not args.no_wattcut:
        from wattcut import PipelineFrequencyOptimizer, WattcutError

        gpu_read_errors = (WattcutError,)

        # Under --slurm the plugin's variables give these (docs/slurm.md); explicit values win.
        from_job = {} if args.slurm else dict(rank=rank, device_id=device_id, world_size=world,
                                              server_url=args.server_url, job_metadata="pipeline-gpt")
        pfo = PipelineFrequencyOptimizer(
            dp_rank=dp_rank, pp_rank=stage, tp_rank=0, dp_degree=args.dp, pp_degree=stages, tp_degree=1,
            **from_job, num_microbatches=args.microbatches, p2p_power_w=args.p2p_power_w,
            gpu_backend=args.gpu_backend, dry_run=args.dry_run, profile=not args.no_profile,
            profile_warmup_iterations=args.profile_warmup,
            profile_measured_iterations=args.profile_iterations,
            profile_freq_step_mhz=args.profile_freq_step_mhz,
            profile_min_freq_mhz=args.profile_min_freq_mhz,
        )

    forward_ms, backward_ms = (float(v) for v in args.emulated_ms.split(","))
    scale = 1.5 if last else 1.0
    straggler = Straggler(args.straggler)
    if args.log_dir:
        os.makedirs(args.log_dir, exist_ok=True)
    log = open(os.path.join(args.log_dir, f"rank{rank}.jsonl"), "w") if args.log_dir else None
    shape = (args.microbatch_size, args.seq, args.width)
    order = one_f_one_b(stage, stages, args.microbatches)

    last_clock = [0, False]  # the clock the emulation last read, and whether reading it fails now
    simulated_gpu = pfo is not None and args.gpu_backend == "simulated"

    def run(kind: str, work) -> Tuple[object, int]:
        """One computation with the wattcut hooks around it; returns its result and the clock it ran at."""
        clock = 0
        began = time.monotonic()
        if pfo is not None:
            pfo.on_instruction_begin(kind)
        result = work()
        if pfo is not None and log is not None and not args.emulate_clock_scaling:
            try:
                clock = pfo.gpu_clock_mhz()  # the clock the instruction ran at, for the log
            except gpu_read_errors:
                clock = 0
        if args.emulate_clock_scaling and simulated_gpu:
            # The simulated GPU runs the instruction as its model says: time and power at its clock.
            pfo.wait_until_frequency_applied()
            pfo.run_simulated_work(kind, (forward_ms if kind == "forward" else backward_ms) * scale / 1000)
            clock = pfo.gpu_clock_mhz()
        elif args.emulate_clock_scaling:
            target_s = (forward_ms if kind == "forward" else backward_ms) * scale / 1000
            if pfo is not None:
                try:
                    pfo.wait_until_frequency_applied()
                    clock = pfo.gpu_clock_mhz()
                    last_clock[1] = False
                except gpu_read_errors as e:
                    # The node agent is away (restarting): the GPU keeps the clock it had, and training
                    # goes on, as wattcut's own calls do (docs/agent.md); only this emulation reads it.
                    if not last_clock[1]:
                        print(f"rank {rank}: cannot read the GPU's clock ({e}); emulating the last one", flush=True)
                    last_clock[1] = True
                    clock = last_clock[0] or pfo.available_frequencies[0]
                last_clock[0] = clock
                target_s *= pfo.available_frequencies[0] / clock
            time.sleep(max(0.0, target_s - (time.monotonic() - began)))
        if pfo is not None:
            pfo.on_instruction_end(kind)
        return result, clock

    last_step_s = 0.0
    # The run's length: as asked, or until the plan has run --planned-steps steps. Every rank must
    # stop at the same step (they exchange tensors), so the stop is agreed each step.
    until_planned = args.steps == 0 and pfo is not None
    total_steps = args.steps if args.steps > 0 else (args.max_steps if until_planned else 30)
    speaker = rank == stages - 1  # the last stage of pipeline 0 prints the losses and the story
    if speaker and pfo is not None:
        if getattr(args, "gpu_backend_chosen", "") == "auto" and args.gpu_backend == "simulated":
            print("no NVIDIA GPU here (NVML sees none, no node agent): a simulated GPU stands in "
                  "(--gpu-backend auto; nvml to require one)", flush=True)
        step_mhz = args.profile_freq_step_mhz
        print(f"wattcut job {pfo.job_id}: {len(pfo.available_frequencies)} clocks on this GPU; profiling "
              f"{'every clock' if step_mhz <= 0 else f'every {step_mhz} MHz'}, then the server plans the job",
              flush=True)
    planned_steps = 0
    previous_phase, previous_version = "", 0
    for step in range(total_steps):
        if until_planned:
            done = torch.tensor([1 if planned_steps >= args.planned_steps else 0])
            dist.all_reduce(done, op=dist.ReduceOp.MIN)
            if done.item() == 1:
                break
        phase = pfo.phase if pfo is not None else "none"
        if pfo is not None:
            pfo.on_step_begin()
        schedule = list(pfo.schedule) if pfo is not None and pfo.phase == "planned" else []
        plan_version = pfo.plan_version if pfo is not None else 0
        step_began = time.monotonic()
        if straggler.slow(dp_rank, step):
            time.sleep(straggler.sleep_s)
        reported_slowdown = None
        if first and step == straggler.start and dp_rank == straggler.dp and pfo is not None:
            reported_slowdown = 1.0 + straggler.sleep_s / max(last_step_s, 1e-3)
            pfo.report_straggler(slowdown=reported_slowdown)
        if first and step == straggler.end and dp_rank == straggler.dp and pfo is not None:
            pfo.report_recovered()

        optimizer.zero_grad(set_to_none=False)
        inputs, outputs, pending, clocks, losses = {}, {}, [], [], []
        for kind, m in order:
            if kind == "forward":
                if first:
                    x, _ = batch(step, dp_rank, m, args.microbatch_size, args.seq, args.vocab)
                else:
                    x = torch.empty(shape)
                    dist.recv(x, src=rank - 1, tag=m)
                    x.requires_grad_(True)
                inputs[m] = x

                def forward(x=x, m=m):
                    y = model(x)
                    if last:
                        _, target = batch(step, dp_rank, m, args.microbatch_size, args.seq, args.vocab)
                        y = F.cross_entropy(y.reshape(-1, args.vocab), target.reshape(-1)) / args.microbatches
                    return y

                y, clock = run("forward", forward)
                outputs[m] = y
                if last:
                    losses.append(y.item() * args.microbatches)
                else:
                    sent = y.detach()
                    pending.append((dist.isend(sent, dst=rank + 1, tag=m), sent))
            else:
                grad = None
                if not last:
                    grad = torch.empty(shape)
                    dist.recv(grad, src=rank + 1, tag=100_000 + m)

                def backward(m=m, grad=grad):
                    torch.autograd.backward(outputs.pop(m), grad_tensors=grad)

                _, clock = run("backward", backward)
                x = inputs.pop(m)
                if not first:
                    pending.append((dist.isend(x.grad, dst=rank - 1, tag=100_000 + m), x.grad))
            clocks.append(clock)
        for request, _ in pending:  # the tensor stays referenced until its send is done
            request.wait()

        if args.dp > 1:  # average gradients over the pipelines, stage by stage
            for parameter in model.parameters():
                dist.all_reduce(parameter.grad, group=my_dp_group)
                parameter.grad /= args.dp
        optimizer.step()
        if pfo is not None:
            pfo.on_step_end()
        last_step_s = time.monotonic() - step_began

        loss = sum(losses) / len(losses) if losses else None
        if pfo is not None:
            now_phase, version = pfo.phase, pfo.plan_version
            # A step under the server's plan (not the highest clock while the plan is on its way).
            planned_steps += 1 if now_phase == "planned" and pfo.schedule else 0
            if dp_rank == 0 and (now_phase != previous_phase or version != previous_version):
                if speaker and now_phase == "profiled":
                    print(f"step {step}: profiling done; the server computes the frontier", flush=True)
                elif now_phase == "planned" and version == 0:
                    if speaker:
                        print(f"step {step}: profiling done; at the highest clock until the server's plan arrives",
                              flush=True)
                elif now_phase == "planned":
                    # Each stage of pipeline 0 says its clocks: the slowest stage stays fastest.
                    clocks_mhz = sorted({c for _, c in pfo.schedule if c > 0})
                    span = f"{clocks_mhz[0]}-{clocks_mhz[-1]} MHz" if clocks_mhz else "no clock locks"
                    print(f"step {step}: stage {stage} runs plan version {version}: {span} over its "
                          f"{len(pfo.schedule)} instructions", flush=True)
                previous_phase, previous_version = now_phase, version
        if log is not None:
            log.write(json.dumps({"step": step, "rank": rank, "dp_rank": dp_rank, "stage": stage, "phase": phase,
                                  "schedule": schedule, "plan_version": plan_version, "clocks": clocks, "loss": loss,
                                  "time_s": last_step_s, "reported_slowdown": reported_slowdown}) + "\n")
            log.flush()
        if speaker and loss is not None and (step % 10 == 0 or step == total_steps - 1):
            print(f"pipeline {dp_rank} step {step:3d} loss {loss:.4f} ({last_step_s * 1000:.0f} ms)", flush=True)

    if pfo is not None:
        if speaker:
            if until_planned and planned_steps < args.planned_steps:
                print(f"the plan did not arrive within --max-steps {args.max_steps} (phase: {pfo.phase}); see the "
                      f"server's GET /v1/jobs/{pfo.job_id}", flush=True)
            elif until_planned and not args.slurm:
                print(frontier_summary(args.server_url, pfo.job_id), flush=True)
            print(f"wattcut job {pfo.job_id}: its frontier and plan on the server's status page, "
                  f"{args.server_url}/, and at GET {args.server_url}/v1/jobs/{pfo.job_id}", flush=True)
        pfo.close()
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
