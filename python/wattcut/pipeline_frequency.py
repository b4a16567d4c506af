"""Perseus's per-instruction GPU frequency plans inside a pipeline-parallel training loop.

`PipelineFrequencyOptimizer` has the constructor and callbacks of Zeus's
`zeus.optimizer.pipeline_frequency.PipelineFrequencyOptimizer`, so a Merak/Zeus integration
switches to wattcut by changing one import::

    from wattcut import PipelineFrequencyOptimizer

    pfo = PipelineFrequencyOptimizer(rank=..., dp_rank=..., pp_rank=..., tp_rank=...,
                                     device_id=..., dp_degree=..., pp_degree=...,
                                     tp_degree=..., world_size=...,
                                     server_url="http://127.0.0.1:7787",
                                     num_microbatches=M)
    for batch in data:
        pfo.on_step_begin()
        for each forward / backward of the pipeline schedule:
            pfo.on_instruction_begin("forward")   # or "backward" (INSTRUCTIONS)
            ...
            pfo.on_instruction_end("forward")
        optimizer.step()
        pfo.on_step_end()
    pfo.close()                                   # resets the GPU's clocks

What happens: rank 0 registers the job with `wattcut serve` and the job id is broadcast over
`torch.distributed` (as Zeus does); every rank registers itself with its GPU's supported clocks.
With ``profile=True`` (the default) the first steps sweep the GPU's clocks, every instruction of
a step at one clock, and measure each instruction's time and energy; when every rank is done
(an all-reduce of one flag per step), each rank uploads its profile and the server computes the
iteration time-energy frontier. The callbacks never talk to the server: a background thread
polls the rank's *deployment* (its plan, a version, and the step from which it applies) and
`on_step_begin` installs a new one when its step has come, so every rank of a pipeline switches
at the same step. Until the first plan, every instruction runs at the highest clock. A straggler
reported with `report_straggler` moves every other pipeline to the slower plan from a step the
server picks a safe margin ahead; `report_recovered` moves them back.

The server may be down at start, go away, restart or be slow: training goes on with the plan it
has (the highest clock before the first), the background thread retries with capped backoff,
logs one warning per outage and one line when the server is back, and uploads and reports are
retried until acknowledged. `server_connected`, `missed_updates`, `server_outages` and
`plan_version` say where it stands (docs/python.md, "When the server fails").

Frequencies are set asynchronously by a watchdog process that owns the GPU's clocks and resets
them when training ends in any way, a crash or SIGKILL included. On a node with the wattcut
agent (``agent_socket``, ``$WATTCUT_AGENT_SOCKET`` or the socket ``/run/wattcut/agent.sock``)
the process opens no NVML and needs no privilege: the agent sets the clocks on its behalf and
resets them when the process ends (docs/agent.md).
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Callable, List, Optional, Tuple

from wattcut import _wattcut
from wattcut.slurm_environment import apply_mode, mode_request, resolve_arguments

WattcutError = _wattcut.WattcutError
WattcutError.__module__ = "wattcut"  # shown as wattcut.WattcutError in tracebacks

__all__ = ["PipelineFrequencyOptimizer", "WattcutError", "INSTRUCTIONS", "SCHEDULES"]

# The instruction names a training loop reports (on_instruction_begin / _end), as the
# planner's plans name them.
INSTRUCTIONS = ("forward", "backward", "backward_input", "backward_weight")
# The pipeline schedules the planner plans ("zbh1" is read as "zb-h1").
SCHEDULES = ("1f1b", "gpipe", "interleaved", "zb-h1", "zbh1")


def _default_synchronize(device_id: int) -> Callable[[], None]:
    """Waits for the GPU's queued work, so that instruction boundaries are real boundaries."""
    try:
        import torch
    except ImportError:  # no torch: nothing to synchronise with
        return lambda: None
    if torch.cuda.is_available():
        return lambda: torch.cuda.synchronize(device_id)
    return lambda: None


def _packaged_freq_setter() -> str:
    """The watchdog executable shipped beside the compiled module, if there is one."""
    path = os.path.join(os.path.dirname(os.path.abspath(_wattcut.__file__)), "wattcut-freq-setter")
    return path if os.access(path, os.X_OK) else ""


def _check_instruction(name: str) -> None:
    if name not in INSTRUCTIONS:
        raise ValueError(f"instruction must be one of {', '.join(INSTRUCTIONS)}, got {name!r}")


def node_agent() -> str:
    """The node agent this process finds by itself: ``$WATTCUT_AGENT_SOCKET``, else
    ``/run/wattcut/agent.sock`` when a socket is there; ``""`` when none. With
    ``gpu_backend="nvml"`` and no ``agent_socket``, clocks are set through it (no NVML is opened
    here), as ``gpu_backend_name`` then says."""
    return _wattcut.node_agent()


class PipelineFrequencyOptimizer:
    """One training rank's wattcut client (Zeus's PipelineFrequencyOptimizer, plus profiling
    and straggler reporting).

    Inside a Slurm job started with ``--wattcut`` (docs/slurm.md), the plugin's variables give
    server_url, job_metadata, rank, world_size and device_id, and the data-, pipeline- and
    tensor-parallel ranks follow from the rank and the degrees (slurm_environment.py): a rank
    passes ``pp_degree`` (and ``tp_degree`` when not 1) and nothing else. Explicit arguments win.
    Rank 0 applies the job's ``--wattcut`` mode (least-energy, power:WATTS) at the server.

    Args (Zeus's, in Zeus's order):
        rank: Global rank of this process.
        dp_rank: Rank in the data-parallel group (which pipeline replica this is).
        pp_rank: Rank in the pipeline-parallel group (the stage).
        tp_rank: Rank in the tensor-parallel group.
        device_id: Index of this process's GPU, as NVML numbers them.
        dp_degree: Size of the data-parallel group.
        pp_degree: Number of pipeline stages.
        tp_degree: Size of the tensor-parallel group.
        world_size: Number of ranks in the job (dp_degree * pp_degree * tp_degree).
        server_url: URL of `wattcut serve`, e.g. ``http://10.0.0.1:7787``.
        job_metadata: Optional string appended to the job id (for logs).

    wattcut's keyword arguments:
        num_microbatches: Microbatches per iteration; the planner needs it (or the server's
            ``--microbatches``).
        schedule: The pipeline schedule the job runs: ``"1f1b"`` (default), ``"gpipe"``,
            ``"interleaved"`` (Megatron-LM's, with ``virtual_stages``) or ``"zb-h1"`` (zero
            bubble: the loop reports each backward as ``"backward_input"`` then, where the
            schedule puts it, ``"backward_weight"``).
        virtual_stages: Model chunks per rank for ``schedule="interleaved"`` (2 or more).
        unit_time_s: Planner time unit in seconds (server default 1 ms).
        p2p_power_w: Power of a GPU blocked on communication, in W (server default 0).
        profile: Profile this job's own iterations first (default). ``False`` when the operator
            gives the server the job's profile (``PUT /v1/jobs/{id}/profile``); until it has
            one, every rank runs at its highest clock.
        profile_warmup_iterations, profile_measured_iterations: Per clock, iterations dropped
            and iterations averaged (1 and 3).
        profile_min_freq_mhz, profile_max_freq_mhz: Clock range swept (0: the GPU's range).
        profile_freq_step_mhz: Sweep every supported clock (0) or only every this many MHz.
        profile_sample_interval_s: Energy counter sampling period (2 ms).
        token: Bearer token of a server started with ``--token-file``.
        schedule_timeout_s: Accepted for compatibility and unused: plans are no longer fetched
            at step boundaries (they arrive in the background), so nothing waits there.
        gpu_backend: ``"nvml"`` (default), ``"rocm-smi"`` (AMD Instinct GPUs: through the node
            agent when there is one, as for ``"nvml"``, else ROCm SMI itself, which needs root) or
            ``"simulated"`` (a modelled GPU, no hardware).
        nvml_library: Path or name of libnvidia-ml (default ``libnvidia-ml.so.1``).
        rocm_smi_library: Path or name of ROCm SMI for ``"rocm-smi"`` without an agent (default
            ``librocm_smi64.so.1``; ROCm's own is ``/opt/rocm/lib/librocm_smi64.so.1``).
        dry_run: Only log the clock changes that would be made (to the watchdog's stderr).
        watchdog: Set clocks from a watchdog process (default) rather than a thread.
        agent_socket: The node agent's socket (``wattcut agent``; or its ``http://`` URL): clocks
            are set through it and no NVML is opened here. Default: ``$WATTCUT_AGENT_SOCKET``, else
            ``/run/wattcut/agent.sock`` when it exists, else NVML or ROCm SMI itself
            (``gpu_backend="nvml"`` or ``"rocm-smi"`` only: a simulated GPU never goes through an
            agent unless this is given).
        synchronize: Called before every instruction boundary; default
            ``torch.cuda.synchronize(device_id)`` when CUDA is available, else nothing.

    Raises:
        WattcutError: any failure of the server, the GPU or the training loop's calls, with
            the message of the component that failed.
    """

    def __init__(
        self,
        rank: Optional[int] = None,
        dp_rank: Optional[int] = None,
        pp_rank: Optional[int] = None,
        tp_rank: Optional[int] = None,
        device_id: Optional[int] = None,
        dp_degree: Optional[int] = None,
        pp_degree: Optional[int] = None,
        tp_degree: Optional[int] = None,
        world_size: Optional[int] = None,
        server_url: Optional[str] = None,
        job_metadata: Optional[str] = None,
        *,
        num_microbatches: Optional[int] = None,
        schedule: str = "1f1b",
        virtual_stages: Optional[int] = None,
        unit_time_s: Optional[float] = None,
        p2p_power_w: Optional[float] = None,
        profile: bool = True,
        profile_warmup_iterations: int = 1,
        profile_measured_iterations: int = 3,
        profile_min_freq_mhz: int = 0,
        profile_max_freq_mhz: int = 0,
        profile_freq_step_mhz: int = 0,
        profile_sample_interval_s: float = 0.002,
        token: Optional[str] = None,
        schedule_timeout_s: float = 600.0,
        gpu_backend: str = "nvml",
        nvml_library: Optional[str] = None,
        rocm_smi_library: Optional[str] = None,
        dry_run: bool = False,
        watchdog: bool = True,
        agent_socket: Optional[str] = None,
        synchronize: Optional[Callable[[], None]] = None,
    ) -> None:
        # Inside a Slurm job with --wattcut, what the plugin set fills what was not given
        # (slurm_environment.py); explicit arguments win.
        given = resolve_arguments(dict(
            rank=rank, dp_rank=dp_rank, pp_rank=pp_rank, tp_rank=tp_rank, device_id=device_id, dp_degree=dp_degree,
            pp_degree=pp_degree, tp_degree=tp_degree, world_size=world_size, server_url=server_url,
            job_metadata=job_metadata))
        rank, dp_rank, pp_rank, tp_rank = given["rank"], given["dp_rank"], given["pp_rank"], given["tp_rank"]
        device_id, dp_degree, pp_degree, tp_degree = (given["device_id"], given["dp_degree"], given["pp_degree"],
                                                      given["tp_degree"])
        world_size, server_url, job_metadata = given["world_size"], given["server_url"], given["job_metadata"]
        self._mode_request = mode_request() if rank == 0 else None
        self._mode_tried_at = -math.inf
        self._token = token or ""
        _check_ranks(rank, dp_rank, pp_rank, tp_rank, dp_degree, pp_degree, tp_degree, world_size)
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
        if (schedule == "interleaved") != (virtual_stages is not None):
            raise ValueError("virtual_stages goes with schedule='interleaved' (and it needs virtual_stages)")
        if virtual_stages is not None and virtual_stages < 2:
            raise ValueError(f"virtual_stages must be >= 2, got {virtual_stages}")
        if num_microbatches is not None and num_microbatches < 1:
            raise ValueError(f"num_microbatches must be >= 1, got {num_microbatches}")
        if gpu_backend not in ("nvml", "rocm-smi", "simulated"):
            raise ValueError(f"gpu_backend must be 'nvml', 'rocm-smi' or 'simulated', got {gpu_backend!r}")

        self.rank = rank
        self.dp_rank = dp_rank
        self.pp_rank = pp_rank
        self.tp_rank = tp_rank
        self.device_id = device_id
        self.world_size = world_size
        self.server_url = server_url
        self._synchronize = synchronize or _default_synchronize(device_id)
        self._dist = _distributed(world_size)
        self.last_frequency_mhz: int = 0

        client_args = dict(
            server_url=server_url,
            token=token or "",
            rank=rank,
            dp_rank=dp_rank,
            pp_rank=pp_rank,
            tp_rank=tp_rank,
            gpu=device_id,
            gpu_backend=gpu_backend,
            nvml_library=nvml_library or "",
            rocm_smi_library=rocm_smi_library or "",
            dry_run=dry_run,
            watchdog=watchdog,
            agent_socket=agent_socket or "",
            freq_setter_path=_packaged_freq_setter(),
            profile=profile,
            profile_max_freq_mhz=profile_max_freq_mhz,
            profile_min_freq_mhz=profile_min_freq_mhz,
            profile_freq_step_mhz=profile_freq_step_mhz,
            profile_warmup_iterations=profile_warmup_iterations,
            profile_measured_iterations=profile_measured_iterations,
            profile_sample_interval_s=profile_sample_interval_s,
            pp_degree=pp_degree,
            dp_degree=dp_degree,
            tp_degree=tp_degree,
            world_size=world_size,
            job_metadata=job_metadata or "",
            num_microbatches=num_microbatches or 0,
            schedule=schedule,
            virtual_stages=virtual_stages or 0,
            unit_time_s=unit_time_s or 0.0,
            p2p_power_w=p2p_power_w or 0.0,
        )

        # Rank 0 starts its client first: it registers the job (in the background when the
        # server is down, then the id is "" for now); everyone learns the id from a broadcast.
        job_id = ""
        rank0_error: Optional[str] = None
        start_error: Optional[str] = None
        if rank == 0:
            try:
                self._client = _wattcut.RankClient(job_id="", register_job=True, **client_args)
                job_id = self._client.job_id
            except WattcutError as error:
                rank0_error = str(error)
        if self._dist is not None:
            shared = [job_id, rank0_error]
            self._dist.broadcast_object_list(shared, src=0)
            job_id, rank0_error = shared
        if rank0_error is not None:
            raise WattcutError(f"rank 0 could not start its wattcut client: {rank0_error}")
        # Whether rank 0 has still to register the job (the same on every rank, from the broadcast).
        self._job_id_pending = not job_id
        if rank != 0:
            try:
                self._client = _wattcut.RankClient(job_id=job_id, register_job=False, **client_args)
            except WattcutError as error:
                start_error = str(error)
        # Fail on every rank together rather than leave the others waiting at a collective.
        if not self._all_ranks(start_error is None):
            if start_error is not None:
                raise WattcutError(f"rank {rank}: {start_error}")
            if hasattr(self, "_client"):
                self._client.close()
            raise WattcutError("another rank could not start its wattcut client (its own error says why)")
        self._apply_mode()

    @property
    def job_id(self) -> str:
        """The job's id at the server; ``""`` while the server, down when the job started, has
        not registered it yet (it is registered, and the id shared, when the server is back)."""
        return self._client.job_id if hasattr(self, "_client") else ""

    # ---- Zeus's callbacks ----

    def on_step_begin(self) -> None:
        """Marks the beginning of a training step (iteration). After profiling, installs the
        plan the server deployed for this step, if a new one is due; no network I/O."""
        self._client.on_step_begin()

    def on_step_end(self) -> None:
        """Marks the end of a step: checks the plan was run exactly (every instruction, in
        order); while profiling, agrees with the other ranks on whether profiling is over and
        then queues this rank's profile for upload. No network I/O (the collectives of
        profiling and, after a start with the server down, of sharing the job id apart)."""
        self._client.on_step_end()
        phase = self._client.phase
        if phase in ("profiling", "profiled"):
            if self._all_ranks(phase == "profiled"):
                self._client.finish_profiling()
        if self._job_id_pending:
            self._share_job_id()
        if self._mode_request is not None:
            self._apply_mode()

    def on_instruction_begin(self, name: str) -> None:
        """Before a computation (one of INSTRUCTIONS: "forward", "backward", and for zero-bubble
        schedules "backward_input" / "backward_weight"): requests its planned GPU clock."""
        _check_instruction(name)
        self._synchronize()
        self.last_frequency_mhz = self._client.on_instruction_begin(name)

    def on_instruction_end(self, name: str) -> None:
        """After a computation: ends its measurement while profiling."""
        _check_instruction(name)
        self._synchronize()
        self._client.on_instruction_end(name)

    # ---- stragglers ----

    def report_straggler(
        self,
        *,
        slowdown: Optional[float] = None,
        iteration_time_s: Optional[float] = None,
        dp_rank: Optional[int] = None,
    ) -> None:
        """Reports that the pipeline of `dp_rank` (default: this rank's) is a straggler, either
        `slowdown` times slower than the current plan or taking `iteration_time_s` per
        iteration. Every other pipeline gets the least-energy plan no slower than that, from a
        step the server picks so that each of their ranks has it by then. Returns at once: the
        report is sent in the background and retried until the server acknowledges it."""
        if (slowdown is None) == (iteration_time_s is None):
            raise ValueError("give exactly one of slowdown or iteration_time_s")
        self._client.report_straggler(
            self.dp_rank if dp_rank is None else dp_rank, slowdown=slowdown, iteration_time_s=iteration_time_s
        )

    def report_recovered(self, *, dp_rank: Optional[int] = None) -> None:
        """Reports that the straggler pipeline `dp_rank` (default: this rank's) has recovered;
        when no straggler is left every pipeline goes back to the selected plan. Returns at
        once, like report_straggler."""
        self._client.report_straggler(self.dp_rank if dp_rank is None else dp_rank, recovered=True)

    # ---- state ----

    @property
    def phase(self) -> str:
        """``"profiling"``, ``"profiled"`` (done here, waiting for other ranks), ``"planned"``
        or ``"closed"``."""
        return self._client.phase

    @property
    def schedule(self) -> List[Tuple[str, int]]:
        """This step's plan: ``(instruction, MHz)`` in execution order (after on_step_begin);
        empty while every instruction runs at the highest clock without a plan."""
        return self._client.schedule

    @property
    def plan_version(self) -> int:
        """The version of the deployment this rank runs (0: none yet, the highest clock). The
        server raises it whenever some rank's plan changes; it never goes back."""
        return self._client.plan_version

    @property
    def gpu_backend_name(self) -> str:
        """What this rank's clocks go through: ``"nvml"``, ``"simulated"`` or
        ``"agent(unix:/run/wattcut/agent.sock)"``."""
        return self._client.backend_name

    @property
    def server_connected(self) -> bool:
        """Whether the server answered the background thread's last request. False from the
        first failed request of an outage (or a start with the server down) until it answers."""
        return self._client.server_connected

    @property
    def missed_updates(self) -> int:
        """Background polls (and registration attempts) that got no deployment: failed ones
        during outages, and ones the server refused (an unknown job, ...)."""
        return self._client.missed_updates

    @property
    def server_outages(self) -> int:
        """How many times the server became unreachable (each logged once on stderr)."""
        return self._client.server_outages

    @property
    def queued_requests(self) -> int:
        """Profile uploads and straggler reports not yet acknowledged by the server."""
        return self._client.queued_requests

    @property
    def available_frequencies(self) -> List[int]:
        """The GPU's supported SM clocks at its highest memory clock, highest first (MHz)."""
        return self._client.available_frequencies

    @property
    def profile(self) -> List[dict]:
        """This rank's measured profile rows (stage, instruction, frequency, time, energy,
        samples), once profiling is done."""
        return self._client.profile_rows

    def wait_until_frequency_applied(self) -> None:
        """Blocks until the clock requested by the last on_instruction_begin is locked. For
        measurements and tests; training never needs it."""
        self._client.wait_until_frequency_applied()

    def gpu_clock_mhz(self) -> int:
        """The GPU's SM clock now, read from the GPU."""
        return self._client.gpu_clock_mhz()

    def run_simulated_work(self, instruction: str, time_at_max_clock_s: float) -> float:
        """With ``gpu_backend="simulated"`` only (a demo or test without a GPU): runs one
        instruction's work on the simulated GPU at its clock now, as the GPU model says. It lasts
        ``time_at_max_clock_s`` x the model's relative time at that clock and draws the model's power
        for the instruction at that clock, so that profiling measures the model's energy. Call it
        between ``on_instruction_begin`` and ``on_instruction_end``; returns the seconds it took."""
        return self._client.run_simulated_work(instruction, time_at_max_clock_s)

    def close(self) -> None:
        """Stops the frequency setter, which resets the GPU's clocks. Idempotent."""
        if hasattr(self, "_client"):
            self._client.close()

    def __enter__(self) -> "PipelineFrequencyOptimizer":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # never raise from a finaliser
            pass

    def _apply_mode(self) -> None:
        """Rank 0: the job's $WATTCUT_MODE (least-energy, power:W) applied at the server once the
        job has an id; a failure is said once and retried at most every 30 s, at step ends.
        Training never waits for it: until then the job runs the fastest plan."""
        if self._mode_request is None or not self.job_id:
            return
        now = time.monotonic()
        if now - self._mode_tried_at < 30:
            return
        self._mode_tried_at = now
        why = apply_mode(self.server_url, self.job_id, self._mode_request, self._token)
        if why is None:
            self._mode_request = None
        elif not getattr(self, "_mode_warned", False):
            self._mode_warned = True
            print(f"wattcut: the job's mode is not applied yet (retried every 30 s): {why}", file=sys.stderr)

    def _share_job_id(self) -> None:
        """After a start with the server down: rank 0 registers the job in the background; at
        each step end every rank takes rank 0's id (a broadcast) until it is known."""
        job_id = self._client.job_id if self.rank == 0 else ""
        if self._dist is not None:
            shared = [job_id]
            self._dist.broadcast_object_list(shared, src=0)
            job_id = shared[0]
        if job_id:
            if self.rank != 0:
                self._client.set_job_id(job_id)
            self._job_id_pending = False

    def _all_ranks(self, flag: bool) -> bool:
        """True when `flag` is true on every rank (an all-reduce; every rank must call it)."""
        if self._dist is None:
            return flag
        import torch

        device = "cpu"
        if self._dist.get_backend() == "nccl":
            device = f"cuda:{self.device_id}"
        value = torch.tensor([1 if flag else 0], dtype=torch.int32, device=device)
        self._dist.all_reduce(value, op=self._dist.ReduceOp.MIN)
        return bool(value.item())


def _check_ranks(
    rank: int, dp_rank: int, pp_rank: int, tp_rank: int, dp_degree: int, pp_degree: int, tp_degree: int,
    world_size: int,
) -> None:
    for name, value in (("dp_degree", dp_degree), ("pp_degree", pp_degree), ("tp_degree", tp_degree)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    if world_size != dp_degree * pp_degree * tp_degree:
        raise ValueError(
            f"world_size {world_size} != dp_degree * pp_degree * tp_degree = {dp_degree * pp_degree * tp_degree}"
        )
    for name, value, limit in (
        ("rank", rank, world_size),
        ("dp_rank", dp_rank, dp_degree),
        ("pp_rank", pp_rank, pp_degree),
        ("tp_rank", tp_rank, tp_degree),
    ):
        if not 0 <= value < limit:
            raise ValueError(f"{name} {value} is out of range [0, {limit})")


def _distributed(world_size: int):
    """torch.distributed when the job has more than one rank (it must be initialised then)."""
    if world_size == 1:
        try:
            import torch.distributed as dist
        except ImportError:
            return None
        return dist if dist.is_available() and dist.is_initialized() else None
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("Instantiate PipelineFrequencyOptimizer after torch.distributed.init_process_group.")
    return dist
