"""Power-capped training live, end to end (issue 17): a row on loopback with `wattcut polca control`
over five `wattcut agent` processes on fake NVMLs: three inference servers (8 GPUs each, their
power set by the fake NVML's `load`), a training server whose 8 GPUs run the PyTorch example
(4 stages x 2 pipelines, through the agent's socket, against a real `wattcut serve`), and a second
training server whose job is registered with the planning server but never runs a rank, so it
never runs the plan it is given: a job that ignores its power target.

The job does not profile itself (`--no-profile`): the test gives the planning server its profile
(`PUT /v1/jobs/{id}/profile`: the fake GPU's own power law over the example's emulated times), so
the frontier, the plans and every power here follow from it, not from timings measured on a busy
machine. From the frontier and its plans the test picks the power target
(policy.t1_training_w) and the row's budget and thresholds such that, the fake NVML's power being
a function of the locked clock only, every instantaneous reading of the row is on the intended
side of each threshold: the fastest plan puts the row over T1 at high load, the capped plan under
T1 and over the release threshold, the low load under the release threshold with either plan, at
whatever instant a reading is taken. (So the capped plan is one whose highest clock on each GPU
draws less than the fastest plan's lowest: near the frontier's slow end.) Then the test moves the
inference load up and down.

What must hold: above T1 the controller PUTs the target on both jobs (decision log, GET); every
rank of the running job switches to the server's capped plan (the deployment's plan_index) at
the same step, the apply step; with it the row's power falls under T1 while the training server's
GPUs carry no ceiling (the agent's own state); the job that ignores the target gets the
low-priority ceilings, not before control.training_response_s after its target was set; below the
release threshold the targets are cleared (DELETE), the ceilings lifted, and every rank goes back
to the selected plan at one step.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest
import urllib.request
from typing import Callable, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

from fixtures import FakeNvmlState, ServerProcess, Service, TempDir, required_env  # noqa: E402

STAGES, PIPELINES, MICROBATCHES, P2P_POWER_W = 4, 2, 4, 75.0
RANKS = STAGES * PIPELINES
INFERENCE_SERVERS, INFERENCE_GPUS, IGNORING_GPUS = 3, 8, 4
# The training server's fake GPUs: clocks 1410, 1110 and 810 MHz (the profile's); the fake's power
# law: idle + (max - idle) x load x (clock / max clock)^3 (gpu/fake_nvml/fake_nvml.cc).
MAX_MHZ, TRAINING_CLOCKS = 1410, (1410, 1110, 810)
IDLE_W, MAX_W = 60.0, 400.0
IGNORING_LOAD = 0.2
# Each agent's server power: 1700 W besides the GPUs, plus 15 % of theirs.
NON_GPU_FIXED_W, NON_GPU_FACTOR = 1700.0, 0.15
PERIOD_S = 1.0  # the agents' answers get period / 2 (tests/e2e share two cores with 8 ranks)
EMULATED_MS = (15.0, 30.0)  # train.py's --emulated-ms: forward, backward at the highest clock; last stage x1.5
TOKEN = "row-token-for-the-training-row-test-0123456789"
WAIT_S = 240.0  # the most any phase may take before the test gives up (a hang, not a slow machine)


def gpu_w(mhz: float, load: float = 1.0) -> float:
    return IDLE_W + (MAX_W - IDLE_W) * load * (mhz / MAX_MHZ) ** 3


def server_w(gpus_w: float) -> float:
    return NON_GPU_FIXED_W + (1 + NON_GPU_FACTOR) * gpus_w


def profile_csv() -> str:
    """The job's profile: each instruction's emulated time at each clock (train.py stretches it to
    emulated ms x max clock / clock) and the energy the fake GPU draws over it."""
    lines = ["stage,instruction,frequency,time,energy"]
    for stage in range(STAGES):
        scale = 1.5 if stage == STAGES - 1 else 1.0
        for instruction, ms in (("forward", EMULATED_MS[0]), ("backward", EMULATED_MS[1])):
            for mhz in TRAINING_CLOCKS:
                time_s = ms * scale / 1000 * MAX_MHZ / mhz
                lines.append(f"{stage},{instruction},{mhz},{time_s:.6f},{gpu_w(mhz) * time_s:.6f}")
    return "\n".join(lines) + "\n"


def read_jsonl(path: str) -> List[dict]:
    """The complete lines of a JSON-lines file another process is writing."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        text = f.read()
    return [json.loads(line) for line in text.split("\n")[:-1] if line]


def wait_until(what: str, done: Callable[[], bool], explain: Callable[[], str] = lambda: "") -> None:
    deadline = time.monotonic() + WAIT_S
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {WAIT_S:.0f} s. {explain()}")
        time.sleep(0.1)


def stage_schedule(plan: dict, stage: int) -> List[List]:
    """A plan's computations of one stage as the rank runs them: [instruction, MHz] in order."""
    return [[entry[0], entry[2]] for entry in plan["stages"][stage]]


class TrainingRowLive(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = TempDir("training-row")
        cls.binary = required_env("WATTCUT_BINARY")
        cls.services: List[Service] = []
        cls.job: Optional[subprocess.Popen] = None
        cls.controller: Optional[Service] = None
        cls.started = time.monotonic()
        cls.phases: List[str] = []  # when each phase ended, for the summary line
        try:
            cls.set_up_the_row()
            cls.run_the_row()
        except BaseException:
            cls.tearDownClass()
            raise
        cls.wall_s = time.monotonic() - cls.started

    # ------------------------------------------------------------------ the row

    @classmethod
    def path(cls, name: str) -> str:
        return os.path.join(cls.dir.path, name)

    @classmethod
    def start_agent(cls, name: str, nvml: FakeNvmlState) -> Service:
        """An agent on its socket (the training ranks') and on TCP with the row's token (the controller's)."""
        args = [cls.binary, "agent", "--socket", cls.path(f"{name}.sock"), "--listen", "127.0.0.1:0", "--token-file",
                cls.path("agent.tokens"), "--non-gpu-power", f"{NON_GPU_FIXED_W:g}+{NON_GPU_FACTOR:g}*gpu",
                "--state-dir", cls.path(f"{name}-state")]
        service = Service(args, "wattcut agent: serving", nvml.env())
        cls.services.append(service)
        return service

    @classmethod
    def set_up_the_row(cls) -> None:
        with open(cls.path("agent.tokens"), "w") as f:
            f.write(f"row {TOKEN}\n")
        with open(cls.path("row.token"), "w") as f:
            f.write(TOKEN + "\n")
        for name in ("agent.tokens", "row.token"):
            os.chmod(cls.path(name), 0o600)
        with open(cls.path("profile.csv"), "w") as f:
            f.write(profile_csv())

        # The plans the planning server will have: the same planner on the same profile.
        subprocess.run([cls.binary, "frontier", "--profile", cls.path("profile.csv"), "--stages", str(STAGES),
                        "--microbatches", str(MICROBATCHES), "--p2p-power", str(P2P_POWER_W), "--plans", "json",
                        "--out", cls.path("frontier")], check=True, stdout=subprocess.DEVNULL)
        cls.plans: Dict[int, dict] = {}
        for name in os.listdir(cls.path("frontier/plans")):
            with open(cls.path(f"frontier/plans/{name}")) as f:
                plan = json.load(f)
            cls.plans[plan["point"]] = plan

        cls.server = ServerProcess(cls.dir.path)
        cls.inference = [FakeNvmlState(cls.path(f"nvml-inference{i}"), {"gpu_count": str(INFERENCE_GPUS), "load": "0.1"})
                         for i in range(INFERENCE_SERVERS)]
        cls.training_nvml = FakeNvmlState(cls.path("nvml-training"), {
            "gpu_count": str(RANKS), "min_mhz": str(TRAINING_CLOCKS[-1]),
            "step_mhz": str(TRAINING_CLOCKS[0] - TRAINING_CLOCKS[1])})
        cls.ignoring_nvml = FakeNvmlState(cls.path("nvml-ignoring"), {"gpu_count": str(IGNORING_GPUS),
                                                                  "load": repr(IGNORING_LOAD)})
        cls.inference_agents = [cls.start_agent(f"inference{i}", nvml) for i, nvml in enumerate(cls.inference)]
        cls.training_agent = cls.start_agent("training", cls.training_nvml)
        cls.ignoring_agent = cls.start_agent("ignoring", cls.ignoring_nvml)

        # The job that ignores its target: registered, with a profile (so a frontier and a
        # deployment), and no rank ever asks for it.
        cls.ignoring_job = cls.server.request("POST", "/register_job", {
            "job_id": "", "pp_degree": STAGES, "dp_degree": 1, "tp_degree": 1, "world_size": STAGES,
            "job_metadata": "never-runs", "planner": {"num_microbatches": MICROBATCHES, "p2p_power_w": P2P_POWER_W}})
        cls.put_profile(cls.ignoring_job)

        # The training job, as long as the test needs it (stopped at the end).
        cls.log_dir = cls.path("logs")
        os.makedirs(cls.log_dir)
        example = os.path.join(required_env("WATTCUT_SOURCE_DIR"), "examples", "pipeline_gpt")
        cls.job_output = open(cls.path("job.out"), "w")
        cls.job = subprocess.Popen(
            [sys.executable, os.path.join(example, "launch.py"), "--nproc", str(RANKS), "--timeout-s", "900",
             os.path.join(example, "train.py"), "--dp", str(PIPELINES), "--microbatches", str(MICROBATCHES),
             "--p2p-power-w", str(P2P_POWER_W), "--steps", "100000", "--no-profile", "--log-dir", cls.log_dir,
             "--server-url", cls.server.url, "--emulate-clock-scaling"],
            env=dict(os.environ, WATTCUT_AGENT_SOCKET=cls.path("training.sock")), stdout=cls.job_output,
            stderr=subprocess.STDOUT, start_new_session=True)

        def the_job() -> Optional[dict]:
            jobs = cls.server.request("GET", "/v1/jobs")["jobs"]
            return next((j for j in jobs if j["job_id"] != cls.ignoring_job), None)

        wait_until("the training job registered", lambda: cls.job_alive() and the_job() is not None, cls.job_tail)
        cls.job_id = the_job()["job_id"]
        cls.put_profile(cls.job_id)
        for job_id in (cls.job_id, cls.ignoring_job):
            wait_until(f"{job_id}'s frontier", lambda: cls.server.request(
                "GET", f"/v1/jobs/{ServerProcess.job_path(job_id)}/frontier")["state"] == "ready")
        cls.job_info = cls.server.request("GET", f"/v1/jobs/{ServerProcess.job_path(cls.job_id)}")
        cls.selected_answer = cls.power_target(cls.job_id)
        # Every rank runs the selected (fastest) plan before the controller starts: until a rank's
        # first lease its GPU is reset, at the highest clock.
        version = cls.selected_answer["deployment"]["version"]
        wait_until("every rank ran the selected plan for 2 steps",
                   lambda: cls.job_alive() and all(sum(1 for s in cls.rank_log(r) if s["plan_version"] == version) >= 2
                                                   for r in range(RANKS)), cls.job_tail)
        # The job's response time (control.training_response_s), from its step time here: a change
        # applies about 4 s of steps ahead (2 x the steps a second x (2 x 0.5 s poll + 1 s),
        # docs/server.md), plus a step or two of rounding, the apply step itself at the capped
        # plan's pace, the ranks' next poll and the controller's next period.
        step_s = max(s["time_s"] for r in range(RANKS) for s in cls.rank_log(r)[-2:])
        cls.response_s = round(8 + 5 * step_s, 1)
        cls.mark("job running its plan")
        cls.choose_the_budget()

    @classmethod
    def mark(cls, phase: str) -> None:
        cls.phases.append(f"{phase} {time.monotonic() - cls.started:.1f} s")

    @classmethod
    def put_profile(cls, job_id: str) -> None:
        with open(cls.path("profile.csv")) as f:
            cls.server.request("PUT", f"/v1/jobs/{ServerProcess.job_path(job_id)}/profile", {"csv": f.read()})

    @classmethod
    def job_alive(cls) -> bool:
        return cls.job.poll() is None

    @classmethod
    def job_tail(cls) -> str:
        cls.job_output.flush()
        with open(cls.path("job.out")) as f:
            return "the job's output ends: " + f.read()[-3000:]

    @classmethod
    def rank_log(cls, rank: int) -> List[dict]:
        return read_jsonl(os.path.join(cls.log_dir, f"rank{rank}.jsonl"))

    @classmethod
    def power_bounds_w(cls, plan: dict) -> tuple:
        """The least and the most the training server can draw at any instant while its ranks run
        `plan`: each GPU holds the clock of its rank's current (or last) computation."""
        low = high = 0.0
        for rank in range(RANKS):
            clocks = [mhz for _, mhz in stage_schedule(plan, rank % STAGES)]
            low += gpu_w(min(clocks))
            high += gpu_w(max(clocks))
        return server_w(low), server_w(high)

    @classmethod
    def choose_the_budget(cls) -> None:
        points = cls.server.request("GET", f"/v1/jobs/{ServerProcess.job_path(cls.job_id)}/frontier/points?limit=10000")
        cls.points = points["points"]
        assert len(cls.points) == len(cls.plans), (len(cls.points), len(cls.plans))
        for p in cls.points:
            assert abs(p["time_s"] - cls.plans[p["index"]]["time_s"]) < 1e-9, p
        cls.fastest = min(cls.points, key=lambda p: (p["time_s"], -p["index"]))["index"]
        fast_low, fast_high = cls.power_bounds_w(cls.plans[cls.fastest])
        cls.fast_bounds_w = (fast_low, fast_high)

        # The target: the highest peak 1-s power per GPU whose plan (the fastest at or below it, the
        # server's rule) draws, at its most, a margin less than the fastest plan at its least.
        def peak_per_gpu(p: dict) -> float:
            return p["peak_1s_power_w"] / STAGES

        def capped_by(target_w: float) -> dict:
            under = [p for p in cls.points if peak_per_gpu(p) <= target_w]
            return min(under, key=lambda p: p["time_s"])

        least_gap_w = 200.0
        chosen = None
        for p in sorted(cls.points, key=peak_per_gpu):
            target_w = round(peak_per_gpu(p), 3) + 0.001
            capped = capped_by(target_w)
            if cls.power_bounds_w(cls.plans[capped["index"]])[1] < fast_low - least_gap_w:
                chosen = (target_w, capped)
        if chosen is None:
            raise AssertionError(f"no plan of the frontier draws less than the fastest plan's least ({fast_low:.0f} W)")
        cls.target_w, capped = chosen
        cls.capped = capped["index"]
        capped_low, capped_high = cls.power_bounds_w(cls.plans[cls.capped])
        cls.capped_bounds_w = (capped_low, capped_high)
        gap_w = fast_low - capped_high

        # The rest of the row, in watts. The job that ignores its target: before and after its
        # fallback (the low-priority ceiling at T1; a clock the default fake GPU has).
        config = subprocess.run([cls.binary, "polca", "config"], check=True, stdout=subprocess.PIPE, text=True).stdout
        cls.fallback_mhz = int(float(re.search(r"(?m)^policy\.t1_low_mhz = (\S+)$", config).group(1)))
        ignoring_w = server_w(IGNORING_GPUS * gpu_w(MAX_MHZ, IGNORING_LOAD))
        ignoring_capped_w = server_w(IGNORING_GPUS * gpu_w(cls.fallback_mhz, IGNORING_LOAD))

        def inference_w(load: float) -> float:
            return INFERENCE_SERVERS * server_w(INFERENCE_GPUS * gpu_w(MAX_MHZ, load))

        high_w = inference_w(0.7)
        # T1 halfway between the capped and the fastest plan's rows at high load.
        t1_w = high_w + ignoring_w + capped_high + gap_w / 2
        # Released only under the capped row at high load with the ignoring job's ceilings on.
        t1_release_w = high_w + ignoring_capped_w + capped_low - gap_w / 2
        # The low load: under the release threshold with either plan, so that a row over T1 for
        # one reading only (a server never read counts at its provisioned power) is released at once.
        low_room_w = t1_release_w - ignoring_w - fast_high - gap_w / 2
        cls.low_load = (low_room_w / INFERENCE_SERVERS - NON_GPU_FIXED_W) / (1 + NON_GPU_FACTOR) / INFERENCE_GPUS
        cls.low_load = (cls.low_load - IDLE_W) / (MAX_W - IDLE_W)
        assert 0 <= cls.low_load < 0.7, f"no low load fits: {cls.low_load}"
        cls.high_load = 0.7
        t2_w = high_w + ignoring_w + fast_high + gap_w / 2  # never reached
        budget_w = t2_w / 0.95
        cls.thresholds_w = {"t1": t1_w, "t1_release": t1_release_w, "t2": t2_w}
        cls.budget_w = budget_w
        cls.rows_w = {
            "fast_high": (high_w + ignoring_w + fast_low, high_w + ignoring_w + fast_high),
            "capped_high": (high_w + ignoring_capped_w + capped_low, high_w + ignoring_w + capped_high),
            "low": (inference_w(cls.low_load) + ignoring_capped_w + capped_low,
                    inference_w(cls.low_load) + ignoring_w + fast_high)}

        values = {
            "row.budget_w": budget_w, "policy.t1": t1_w / budget_w, "policy.t1_release": t1_release_w / budget_w,
            "policy.t2": 0.95, "policy.t2_release": 0.9, "policy.brake": 1.0, "policy.brake_release": 0.95,
            "policy.t1_training_w": cls.target_w, "policy.t2_training_w": cls.target_w,
            # A server not read yet counts at its provisioned power: the most one of these draws.
            "row.provisioned_w_per_server": server_w(INFERENCE_GPUS * MAX_W),
            "control.telemetry_period_s": PERIOD_S, "control.max_reading_age_s": 3,
            "control.training_response_s": cls.response_s}
        for key, value in values.items():
            config, n = re.subn(rf"(?m)^{re.escape(key)} = .*$", f"{key} = {value!r}", config)
            assert n == 1, f"{key} is not in `wattcut polca config`"
        with open(cls.path("row.conf"), "w") as f:
            f.write(config)
        with open(cls.path("row.txt"), "w") as f:
            f.write("# name agent priority | training JOB_ID\n")
            for i, agent in enumerate(cls.inference_agents):
                f.write(f"inference{i} http://127.0.0.1:{agent.port()} high\n")
            f.write(f"training http://127.0.0.1:{cls.training_agent.port()} training {cls.job_id}\n")
            f.write(f"ignoring http://127.0.0.1:{cls.ignoring_agent.port()} training {cls.ignoring_job}\n")

    # ------------------------------------------------------------------ the day

    @classmethod
    def agent_gpus(cls, agent: Service) -> List[dict]:
        """The agent's control state of each GPU (GET /v1/state): its lease and lock (a training
        rank's), its ceiling (the row's)."""
        request = urllib.request.Request(f"http://127.0.0.1:{agent.port()}/v1/state",
                                         headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())["gpus"]

    @classmethod
    def agent_ceilings(cls, agent: Service) -> List[Optional[dict]]:
        return [gpu["ceiling"] for gpu in cls.agent_gpus(agent)]

    @classmethod
    def sample_ceilings(cls) -> None:
        while not cls.sampling_done.is_set():
            training = cls.agent_gpus(cls.training_agent)
            cls.ceiling_samples.append({"training": [gpu["ceiling"] for gpu in training],
                                        "training_locks": [gpu["lock"] for gpu in training],
                                        "ignoring": cls.agent_ceilings(cls.ignoring_agent)})
            cls.sampling_done.wait(0.2)

    @classmethod
    def metrics(cls) -> Dict[str, float]:
        """The controller's /metrics: 'name{labels}' -> value."""
        with urllib.request.urlopen(cls.metrics_url, timeout=10) as response:
            lines = response.read().decode().splitlines()
        return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in lines if line and line[0] != "#"}

    @classmethod
    def decisions(cls) -> List[dict]:
        return read_jsonl(cls.path("decisions.jsonl"))

    @classmethod
    def training_state(cls, decision: dict, job_id: str) -> dict:
        return next(t for t in decision["training"] if t["job_id"] == job_id)

    @classmethod
    def last_decisions(cls) -> str:
        return "last decisions: " + "\n".join(json.dumps(d) for d in cls.decisions()[-4:])

    @classmethod
    def set_inference_load(cls, load: float) -> None:
        for nvml in cls.inference:
            nvml.set_load(load)

    @classmethod
    def power_target(cls, job_id: str) -> dict:
        return cls.server.request("GET", f"/v1/jobs/{ServerProcess.job_path(job_id)}/power_target")

    @classmethod
    def run_the_row(cls) -> None:
        cls.set_inference_load(cls.low_load)
        cls.ceiling_samples: List[dict] = []
        cls.sampling_done = threading.Event()
        cls.controller = Service(
            [cls.binary, "polca", "control", "--row", cls.path("row.txt"), "--config", cls.path("row.conf"),
             "--token-file", cls.path("row.token"), "--planning-server", cls.server.url, "--mode", "enforce",
             "--in-band", "--log", cls.path("decisions.jsonl"), "--listen", "127.0.0.1:0"],
            "wattcut polca control: running")
        cls.metrics_url = re.search(r"metrics on (http://127\.0\.0\.1:\d+/metrics)", cls.controller.output).group(1)
        sampler = threading.Thread(target=cls.sample_ceilings, daemon=True)
        sampler.start()

        def decided(at_least: int, what: Callable[[dict], bool]) -> Callable[[], bool]:
            return lambda: sum(1 for d in cls.decisions() if what(d)) >= at_least

        def job(d: dict, state: str) -> bool:
            return cls.training_state(d, cls.job_id)["state"] == state

        def ignoring(d: dict, state: str) -> bool:
            return cls.training_state(d, cls.ignoring_job)["state"] == state

        # Low load: normal, no target.
        wait_until("3 periods at low load with every server read",
                   decided(3, lambda d: d["state"] == "normal" and not d["stale_servers"]), cls.last_decisions)
        cls.normal_periods = len(cls.decisions())
        cls.mark("normal")
        cls.set_inference_load(cls.high_load)
        # Over T1: the job complies, the one that ignores its target falls back, for a few periods.
        wait_until("the job complied and the ignoring job fell back",
                   decided(3, lambda d: job(d, "complied") and ignoring(d, "fallback")), cls.last_decisions)
        cls.capped_metrics = cls.metrics()
        cls.capped_answer = cls.power_target(cls.job_id)
        cls.ignoring_answer = cls.power_target(cls.ignoring_job)
        cls.capped_ceilings = {"training": cls.agent_ceilings(cls.training_agent),
                               "ignoring": cls.agent_ceilings(cls.ignoring_agent)}
        cls.high_periods_end = len(cls.decisions())
        cls.mark("over T1")
        high_end_s = cls.decisions()[-1]["time"]
        cls.set_inference_load(cls.low_load)
        wait_until("the targets cleared under the release threshold",
                   decided(1, lambda d: d["time"] > high_end_s and d["state"] == "normal" and job(d, "none")
                           and ignoring(d, "none")), cls.last_decisions)
        cls.cleared_answer = cls.power_target(cls.job_id)
        version = cls.cleared_answer["deployment"]["version"]
        wait_until("every rank ran the selected plan again for 2 steps",
                   lambda: cls.job_alive() and all(sum(1 for s in cls.rank_log(r) if s["plan_version"] == version) >= 2
                                                   for r in range(RANKS)), cls.job_tail)
        cls.mark("cleared")
        # Two more periods at low load with the fastest plan: nothing is set again.
        end = len(cls.decisions())
        wait_until("2 more periods", decided(end + 2, lambda d: True), cls.last_decisions)
        cls.final_metrics = cls.metrics()
        cls.controller.stop()
        cls.sampling_done.set()
        sampler.join(timeout=30)
        cls.final_ceilings = {"training": cls.agent_ceilings(cls.training_agent),
                              "ignoring": cls.agent_ceilings(cls.ignoring_agent)}
        cls.final_target = cls.power_target(cls.job_id)
        cls.final_ignoring_target = cls.power_target(cls.ignoring_job)
        cls.stop_the_job()
        cls.logs = {r: cls.rank_log(r) for r in range(RANKS)}
        cls.all_decisions = cls.decisions()

    @classmethod
    def stop_the_job(cls) -> None:
        if cls.job is not None and cls.job.poll() is None:
            os.killpg(cls.job.pid, signal.SIGKILL)  # the launcher and its ranks, a session of their own
            cls.job.wait()

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "sampling_done", None) is not None:
            cls.sampling_done.set()
        if cls.controller is not None:
            cls.controller.stop()
        cls.stop_the_job()
        if getattr(cls, "job_output", None) is not None:
            cls.job_output.close()
        for service in cls.services:
            service.stop()
        if getattr(cls, "server", None) is not None:
            cls.server.stop()
        print(f"\ntraining row: {getattr(cls, 'wall_s', time.monotonic() - cls.started):.1f} s; response time "
              f"{getattr(cls, 'response_s', 0):.1f} s; phases ended: {', '.join(cls.phases)}; target "
              f"{getattr(cls, 'target_w', 0):.3f} W per GPU (plan {getattr(cls, 'capped', None)}, fastest "
              f"{getattr(cls, 'fastest', None)}); rows (W): {getattr(cls, 'rows_w', None)}; thresholds (W): "
              f"{getattr(cls, 'thresholds_w', None)}", file=sys.stderr)
        cls.dir.remove()

    # ------------------------------------------------------------------ helpers of the checks

    def periods(self, begin: int, end: Optional[int] = None) -> List[dict]:
        return self.all_decisions[begin:end]

    def job_of(self, d: dict, job_id: str) -> dict:
        return self.training_state(d, job_id)

    def switch_step(self, rank: int, version: int) -> Optional[int]:
        return next((s["step"] for s in self.logs[rank] if s["plan_version"] == version), None)

    # ------------------------------------------------------------------ the checks

    def test_the_job_runs_its_fastest_plan_before_any_target(self):
        self.assertEqual(self.job_info["profile_source"], "csv")
        self.assertIsNone(self.selected_answer["power_target"])
        self.assertEqual(self.selected_answer["selected"]["index"], self.fastest, self.selected_answer)
        version = self.selected_answer["deployment"]["version"]
        for rank in range(RANKS):
            selected = [s for s in self.logs[rank] if s["plan_version"] == version]
            self.assertTrue(selected, rank)
            for step in selected:
                self.assertEqual(step["schedule"], stage_schedule(self.plans[self.fastest], rank % STAGES), rank)
        # The test's premise: every instantaneous row power on its side of each threshold.
        t = self.thresholds_w
        self.assertGreater(self.rows_w["fast_high"][0], t["t1"])
        self.assertLess(self.rows_w["fast_high"][1], t["t2"])
        self.assertLess(self.rows_w["capped_high"][1], t["t1"])
        self.assertGreater(self.rows_w["capped_high"][0], t["t1_release"])
        self.assertLess(self.rows_w["low"][1], t["t1_release"])

    def test_above_t1_the_controller_sets_the_target_on_both_jobs(self):
        normal = self.periods(0, self.normal_periods)
        for d in normal:
            self.assertEqual(d["state"], "normal", d)
            for t in d["training"]:
                self.assertEqual((t["state"], t["target_w"]), ("none", None), d)
        first_t1 = next(d for d in self.all_decisions if d["state"] == "t1")
        self.assertGreater(first_t1["row_power_w"], self.thresholds_w["t1"])
        for job_id in (self.job_id, self.ignoring_job):
            self.assertEqual(self.job_of(first_t1, job_id)["target_w"], self.target_w, first_t1)
            self.assertEqual(self.job_of(first_t1, job_id)["state"], "requested", first_t1)
        answer = self.capped_answer
        self.assertEqual(answer["power_target"]["peak_power_per_gpu_w"], self.target_w)
        self.assertTrue(answer["power_target"]["reason"].startswith("wattcut polca control: "), answer)
        self.assertEqual((answer["kind"], answer["applied"], answer["met"]), ("peak_1s", True, True), answer)
        self.assertEqual(answer["point"]["index"], self.capped, answer)
        self.assertEqual(answer["deployment"]["plan_index"], self.capped, answer)
        self.assertTrue(answer["deployment"]["every_rank_past_apply_step"], answer)
        self.assertEqual(self.ignoring_answer["power_target"]["peak_power_per_gpu_w"], self.target_w)
        self.assertFalse(self.ignoring_answer["deployment"]["every_rank_past_apply_step"], self.ignoring_answer)

    def test_the_metrics_show_each_jobs_target_and_fallback(self):
        def target(metrics, job_id):
            return metrics[f'wattcut_row_training_target_watts{{job_id="{job_id}"}}']

        def fallback(metrics, job_id):
            return metrics[f'wattcut_row_training_fallback{{job_id="{job_id}"}}']

        for job_id in (self.job_id, self.ignoring_job):
            self.assertAlmostEqual(target(self.capped_metrics, job_id), self.target_w, places=3)
            self.assertEqual(target(self.final_metrics, job_id), 0)
            self.assertEqual(fallback(self.final_metrics, job_id), 0)
        self.assertEqual(fallback(self.capped_metrics, self.job_id), 0)
        self.assertEqual(fallback(self.capped_metrics, self.ignoring_job), 1)

    def test_every_rank_switches_to_the_capped_plan_at_the_apply_step(self):
        version = self.capped_answer["deployment"]["version"]
        apply_step = self.capped_answer["deployment"]["apply_from_step"]
        for rank in range(RANKS):
            self.assertEqual(self.switch_step(rank, version), apply_step, f"rank {rank}")
            capped = [s for s in self.logs[rank] if s["plan_version"] == version]
            expected = stage_schedule(self.plans[self.capped], rank % STAGES)
            self.assertNotEqual(expected, stage_schedule(self.plans[self.fastest], rank % STAGES), rank)
            for step in capped:
                self.assertEqual(step["schedule"], expected, f"rank {rank} step {step['step']}")
                self.assertEqual(step["clocks"], [mhz for _, mhz in expected], f"rank {rank} step {step['step']}")

    def test_row_power_falls_under_t1_without_ceilings_on_the_job(self):
        high = self.periods(self.normal_periods, self.high_periods_end)
        complied = [i for i, d in enumerate(high) if self.job_of(d, self.job_id)["state"] == "complied"]
        self.assertTrue(complied)
        first = complied[0]
        self.assertEqual(complied, list(range(first, len(high))), "the job complied and stayed so")
        # From the period after the one in which every rank had reported its apply step: under T1,
        # still at T1 (not released, never T2), the ignoring job's ceilings on or not yet.
        after = high[first + 1:]
        for d in after:
            self.assertEqual(d["state"], "t1", d)
        # (A reading that failed stands in with the server's last or largest reading: not a
        # measurement of the capped row.)
        fresh = [d for d in after if not d["stale_servers"]]
        self.assertGreaterEqual(len(fresh), 3, after)
        self.assertTrue(any(self.job_of(d, self.ignoring_job)["state"] == "requested" for d in fresh),
                        "no period with the job complied before the ignoring job's fallback")
        for d in fresh:
            self.assertLess(d["row_power_w"], self.thresholds_w["t1"], d)
            self.assertGreater(d["row_power_w"], self.thresholds_w["t1_release"], d)
        # No ceiling on the training server's GPUs, ever: in what the controller sent, and in the
        # agent's state (its ranks' own locks are leases, not ceilings).
        for d in self.all_decisions:
            self.assertFalse([s for s in d["sent"] if s["server"] == "training" and s["mhz"] is not None], d)
        self.assertTrue(self.ceiling_samples)
        # The ranks' own locks are there, as leases' locks, at their plan's clocks.
        for sample in self.ceiling_samples:
            for lock in sample["training_locks"]:
                self.assertIsNotNone(lock, sample)
                self.assertIn(lock["max_mhz"], TRAINING_CLOCKS, sample)
        for sample in self.ceiling_samples + [self.capped_ceilings, self.final_ceilings]:
            self.assertEqual(sample["training"], [None] * RANKS, sample)

    def test_the_job_that_ignores_its_target_gets_ceilings_after_the_response_time(self):
        requested = next(d for d in self.all_decisions if self.job_of(d, self.ignoring_job)["state"] == "requested")
        fallback_at = next(i for i, d in enumerate(self.all_decisions)
                           if self.job_of(d, self.ignoring_job)["state"] == "fallback")
        fallback = self.all_decisions[fallback_at]
        self.assertGreaterEqual(fallback["time"] - requested["time"], self.response_s - 1e-6)
        for d in self.all_decisions[:fallback_at]:
            self.assertFalse([s for s in d["sent"] if s["server"] == "ignoring" and s["mhz"] is not None], d)
        self.assertIn({"server": "ignoring", "mhz": self.fallback_mhz}, fallback["sent"])
        self.assertEqual([c["mhz"] for c in self.capped_ceilings["ignoring"]], [self.fallback_mhz] * IGNORING_GPUS)
        # Lifted with the target once the row is back to normal.
        self.assertEqual(self.final_ceilings["ignoring"], [None] * IGNORING_GPUS)
        self.assertIsNone(self.final_ignoring_target["power_target"])

    def test_clearing_the_target_brings_the_selected_plan_back(self):
        after = self.periods(self.high_periods_end)
        cleared_at = next(i for i, d in enumerate(after) if d["state"] == "normal")
        for d in after[cleared_at:]:
            self.assertEqual(d["state"], "normal", d)
            self.assertLess(d["row_power_w"], self.thresholds_w["t1"], d)
        for d in after[cleared_at + 1:]:
            for t in d["training"]:
                self.assertEqual((t["state"], t["target_w"]), ("none", None), d)
        self.assertIsNone(self.cleared_answer["power_target"], self.cleared_answer)
        self.assertIsNone(self.final_target["power_target"], self.final_target)
        self.assertEqual(self.cleared_answer["selected"]["index"], self.fastest, self.cleared_answer)
        version = self.cleared_answer["deployment"]["version"]
        self.assertGreater(version, self.capped_answer["deployment"]["version"])
        apply_step = self.cleared_answer["deployment"]["apply_from_step"]
        for rank in range(RANKS):
            self.assertEqual(self.switch_step(rank, version), apply_step, f"rank {rank}")
            expected = stage_schedule(self.plans[self.fastest], rank % STAGES)
            for step in (s for s in self.logs[rank] if s["plan_version"] == version):
                self.assertEqual(step["schedule"], expected, f"rank {rank} step {step['step']}")


if __name__ == "__main__":
    unittest.main()
