#!/usr/bin/python3
"""The wattcut SPANK plugin in a real Slurm: munged, slurmctld and slurmd (Debian's munge and
slurm-wlm) started here on loopback, with their own key, config, state and spool folders in a
temporary folder, one node of 8 CPUs; the plugin enabled by one plugstack.conf line. Checks:

* sbatch --wattcut=fastest: each of 8 srun tasks gets the planning server, the job's name
  (slurm-JOBID) and its rank and world size from Slurm's variables;
* --wattcut=power:300 with --wattcut-server: the job's own server and mode;
* srun --wattcut=least-energy without sbatch: the same for srun's own job;
* --wattcut=off, and no option with the plugin's default off: nothing set;
* --wattcut=bogus: sbatch refuses the job with the plugin's message, and no job is queued;
* --gpu-freq with --wattcut: refused at submission (SBATCH_GPU_FREQ), or said in the job's output
  with its srun step refused (sbatch --gpu-freq); the node is never drained. --wattcut=off keeps
  --gpu-freq;
* a malformed plugstack.conf word: srun refuses, naming it.

With the node agent (`wattcut agent --require-job-credential`, root, fake NVML with 12 GPUs that
slurmd knows as gres gpu) and the planning server on loopback, jobs run as uid 65534 (and one as
uid 1, another user):

* the example pipeline (examples/pipeline_gpt, 8 srun tasks on the 8 GPUs Slurm gave it, not
  GPU 0: each rank finds its GPU in WATTCUT_GPU) under `sbatch --wattcut=fastest`: it finishes, follows the served plan (the fake NVML's lock log against
  each rank's clocks, every lock made by the agent) and leaves every GPU reset; its GPU energy is in
  its AdminComment, slurmd's log, the agent's log and the planning server's job;
* a job that locks its GPU, cancelled with scancel, and one killed at its --time limit: their GPUs
  are reset and no lease is held once the job is gone; the cancelled job's credential is refused
  afterwards, saying why;
* another user's job cannot lease the first job's GPU, with its own credential, the first job's, or
  none;
* the agent down when a job starts: the job runs unmanaged, with one warning line.

Needs root (the daemons run as root, as CI does), the Slurm and munge binaries
(scripts/install-deps.sh) and a cgroup filesystem at /sys/fs/cgroup (slurmd 22.05 will not start
without one); without them it is skipped (exit 77), saying which is missing. Every wait is
bounded."""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))
from fixtures import FakeNvmlState, Service  # noqa: E402

SKIP = 77
TIMEOUT_S = 240
GPUS = 12
NOBODY, OTHER_USER = 65534, 1  # the job's user, and another user of the node (Debian's daemon)
STAGES, PIPELINES, STEPS = 4, 2, 16


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NoCgroups(Exception):
    """The machine cannot run slurmd (no cgroup filesystem): the test is skipped, saying so."""


class Cluster:
    def __init__(self, root, plugin):
        self.root = root
        self.plugin = plugin
        self.host = socket.gethostname()
        # What jobs inherit from sbatch: not the test's own WATTCUT_ variables (a job's are the plugin's).
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("WATTCUT_")}
        self.env["SLURM_CONF"] = os.path.join(root, "slurm.conf")
        self.procs = []
        self.server_url = "http://127.0.0.1:7787"

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def write_config(self):
        for d in ("state", "spool", "munge", "log", "out", "dev"):
            os.makedirs(self.path(d), exist_ok=True)
        # Other users submit jobs: they reach munged's socket and write their jobs' output.
        os.chmod(self.path("munge"), 0o755)
        os.chmod(self.path("out"), 0o777)
        # The node's GPUs as slurmd knows them (gres): one character device each, as /dev/nvidiaN would
        # be (links to /dev/null: slurmd checks only that each is a device).
        for gpu in range(GPUS):
            os.symlink("/dev/null", self.path("dev", f"nvidia{gpu}"))
        with open(self.path("gres.conf"), "w") as f:
            f.write(f"AutoDetect=off\nNodeName=wattcutnode Name=gpu File={self.path('dev')}/nvidia[0-{GPUS - 1}]\n")
        with open(self.path("munge", "munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(self.path("munge", "munge.key"), 0o400)
        ctld, slurmd = free_port(), free_port()
        with open(self.path("slurm.conf"), "w") as f:
            f.write(f"""ClusterName=wattcuttest
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/munge
AuthInfo=socket={self.path('munge', 'munge.sock')}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={self.path('state')}
SlurmdSpoolDir={self.path('spool')}
SlurmctldPidFile={self.path('slurmctld.pid')}
SlurmdPidFile={self.path('slurmd.pid')}
SlurmctldLogFile={self.path('log', 'slurmctld.log')}
SlurmdLogFile={self.path('log', 'slurmd.log')}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PlugStackConfig={self.path('plugstack.conf')}
SlurmdParameters=config_overrides
GresTypes=gpu
KillWait=2
MinJobAge=600
NodeName=wattcutnode NodeHostname={self.host} NodeAddr=127.0.0.1 CPUs=16 RealMemory=1000 Gres=gpu:{GPUS} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        self.write_plugstack()

    def write_plugstack(self):
        with open(self.path("plugstack.conf"), "w") as f:
            # The cluster's server; jobs without --wattcut are left alone (default=off).
            f.write(f"required {self.plugin} server={self.server_url} default=off "
                    f"agent_socket={self.path('agent.sock')} scontrol={shutil.which('scontrol')}\n")

    def start(self):
        self.write_config()
        subprocess.run(["munged", "-f", f"--socket={self.path('munge', 'munge.sock')}",
                        f"--key-file={self.path('munge', 'munge.key')}", f"--log-file={self.path('log', 'munged.log')}",
                        f"--pid-file={self.path('munge', 'munged.pid')}", f"--seed-file={self.path('munge', 'seed')}"],
                       check=True, timeout=30)
        conf = self.path("slurm.conf")
        subprocess.run(["slurmctld", "-i", "-f", conf], check=True, env=self.env, timeout=30)
        started = subprocess.run(["slurmd", "-f", conf, "-N", "wattcutnode"], env=self.env, timeout=30)
        if started.returncode != 0:
            # slurmd 22.05 needs a cgroup filesystem even with proctrack/linuxproc; a chroot or a
            # container without one cannot run it at all, which is the machine, not the plugin.
            if "No filesystem mounted on /sys/fs/cgroup" in self.logs():
                raise NoCgroups("slurmd cannot start here: no cgroup filesystem at /sys/fs/cgroup")
            raise RuntimeError(f"slurmd exited with {started.returncode}")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=self.env, capture_output=True, text=True,
                                   timeout=30).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.5)
        raise RuntimeError("the node never became idle; " + self.logs())

    def logs(self):
        out = []
        for name in ("slurmctld.log", "slurmd.log"):
            try:
                with open(self.path("log", name)) as f:
                    out.append(name + ":\n" + "".join(f.readlines()[-15:]))
            except OSError:
                pass
        return "\n".join(out)

    def stop(self):
        for pid_file in (self.path("slurmd.pid"), self.path("slurmctld.pid"), self.path("munge", "munged.pid")):
            try:
                with open(pid_file) as f:
                    pid = int(f.read().strip())
            except (OSError, ValueError):
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def run(self, args, uid=None):
        """A Slurm command, as root or as `uid` (then its jobs are that user's)."""
        if uid is not None:
            args = ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", *args]
        return subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=TIMEOUT_S)

    def job_field(self, job_id, field):
        """A field of `scontrol show job -o`: JobState, AdminComment, ..."""
        line = self.run(["scontrol", "show", "job", "-o", job_id]).stdout
        match = re.search(r"(?:^| )" + field + r"=(.*?)(?= [A-Z][A-Za-z/:]*=|$)", line.strip())
        return match.group(1).strip() if match else ""


def start_agent(cluster, nvml):
    return Service([os.environ["WATTCUT_BINARY"], "agent", "--socket", cluster.path("agent.sock"), "--socket-mode",
                    "0666", "--state-dir", cluster.path("agent-state"), "--require-job-credential"],
                   "wattcut agent: serving", nvml.env())


def agent_request(cluster, method, path, body=None, credential="", uid=None):
    """(status, JSON body) of one request on the agent's socket by curl, as root or as `uid`."""
    args = ["curl", "-sS", "--unix-socket", cluster.path("agent.sock"), "-X", method, "-w", "\n%{http_code}",
            "http://agent" + path]
    if body is not None:
        args += ["-d", json.dumps(body)]
    if credential:
        args += ["-H", "Authorization: Bearer " + credential]
    if uid is not None:
        args = ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", *args]
    out = subprocess.run(args, capture_output=True, text=True, timeout=30).stdout
    text, _, status = out.rpartition("\n")
    try:
        return int(status), json.loads(text or "null")
    except ValueError:
        return 0, out


def wait_until(done, what, max_s=TIMEOUT_S):
    deadline = time.monotonic() + max_s
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.2)
    raise RuntimeError(f"{what}: not within {max_s} s")


JOB_SCRIPT = """#!/bin/bash
srun bash -c 'env | grep ^WATTCUT_ | sort | sed "s/^/$SLURM_PROCID /"; echo "$SLURM_PROCID ran"'
"""

# The example pipeline, one srun task per rank; torch.distributed's variables from Slurm's.
PIPELINE_SCRIPT = """#!/bin/bash
echo "job gpus $SLURM_JOB_GPUS"
export MASTER_ADDR=127.0.0.1 MASTER_PORT={port} HOME={home}
srun bash -c 'RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID exec /usr/bin/python3 \\
    {train} --dp {pipelines} --steps {steps} --log-dir {logs} --emulate-clock-scaling --emulated-ms 5,10 \\
    --profile-freq-step-mhz 300 --slurm'
"""

# A job that leases its first GPU with its credential, locks it at 1110 MHz and holds it until it is
# killed (curl reads the agent's readings stream); it leaves "CREDENTIAL GPU" in the file $1.
HOLD_SCRIPT = """#!/bin/bash
GPU=${SLURM_JOB_GPUS%%,*}
AUTH="Authorization: Bearer $WATTCUT_AGENT_TOKEN"
echo "$WATTCUT_AGENT_TOKEN $GPU" > "$1"
exec curl -sS --unix-socket "$WATTCUT_AGENT_SOCKET" -H "$AUTH" -X POST http://agent/v1/leases \\
    -d "{\\"gpus\\":[$GPU],\\"ttl_s\\":3600}" -w '\\n' \\
  --next -sS --unix-socket "$WATTCUT_AGENT_SOCKET" -H "$AUTH" -X PUT "http://agent/v1/gpus/$GPU/sm-clocks" \\
    -d '{"min_mhz":1110,"max_mhz":1110}' -w '\\n' \\
  --next -sSN --unix-socket "$WATTCUT_AGENT_SOCKET" 'http://agent/v1/readings/stream?interval_s=1' -o /dev/null
"""

# Another user's job: tries the GPU of the job whose "CREDENTIAL GPU" is in $1.
OTHER_USER_SCRIPT = """#!/bin/bash
read THEIRS THEIR_GPU < "$1"
MINE=${SLURM_JOB_GPUS%%,*}
try() {
  local args=(-sS --unix-socket "$WATTCUT_AGENT_SOCKET" -w ' %{http_code}' -X POST http://agent/v1/leases
              -d "{\\"gpus\\":[$1]}")
  [ -n "$2" ] && args+=(-H "Authorization: Bearer $2")
  curl "${args[@]}"
}
echo "own-credential-their-gpu $(try $THEIR_GPU $WATTCUT_AGENT_TOKEN)"
echo "their-credential $(try $THEIR_GPU $THEIRS)"
echo "no-credential $(try $THEIR_GPU)"
echo "own-gpu $(try $MINE $WATTCUT_AGENT_TOKEN)"
"""


def submit(cluster, name, options, tasks=8, script_text=JOB_SCRIPT, uid=None, args=()):
    """sbatch without waiting, as root or as `uid`: (the finished sbatch, the job's output file)."""
    script = cluster.path(name + ".sh")
    with open(script, "w") as f:
        f.write(script_text)
    os.chmod(script, 0o755)
    out = cluster.path("out", name + ".txt")
    done = cluster.run(["sbatch", "--parsable", "-n", str(tasks), "-o", out, "--chdir", cluster.path("out"), *options,
                        script, *args], uid=uid)
    return done, out


def job_id_of(done):
    return done.stdout.strip().split(";")[0]


def queued(cluster, job_id):
    return cluster.run(["squeue", "-h", "-j", job_id]).stdout.strip() != ""


def collapse(values):
    return [v for i, v in enumerate(values) if i == 0 or values[i - 1] != v]


def queued_jobs(cluster, but=()):
    """The ids of the jobs queued or running, but those in `but`."""
    ids = cluster.run(["squeue", "-h", "-o", "%i"]).stdout.split()
    return [i for i in ids if i not in but]


def wait_for_all(cluster, but=()):
    """Until no job is queued or running but those in `but` (bounded)."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if not queued_jobs(cluster, but):
            return
        time.sleep(0.2)
    raise RuntimeError("jobs still queued after %d s: %s" % (TIMEOUT_S, cluster.run(["squeue"]).stdout))


def parse_gpus(text):
    """'1-3,5' -> [1, 2, 3, 5], as Slurm writes GPU lists."""
    gpus = []
    for item in filter(None, text.split(",")):
        first, _, last = item.partition("-")
        gpus += list(range(int(first), int(last or first) + 1))
    return gpus


def start_holding_job(cluster, nvml, name, options):
    """A job (uid 65534) whose task leases its GPU, locks it at 1110 MHz and holds it: (job id,
    credential, GPU, the file its credential is in), once the lock is seen."""
    hold = cluster.path("out", "hold.sh")
    if not os.path.exists(hold):
        with open(hold, "w") as f:
            f.write(HOLD_SCRIPT)
        os.chmod(hold, 0o755)
    credential_file = cluster.path("out", name + ".credential")
    done, _ = submit(cluster, name, ["--wattcut=fastest", "--gres=gpu:1", *options], 1, HOLD_SCRIPT, uid=NOBODY,
                     args=(credential_file,))
    if done.returncode != 0:
        raise RuntimeError(f"sbatch of {name}: {done.stderr}")
    wait_until(lambda: os.path.exists(credential_file) and len(read(credential_file).split()) == 2,
               f"{name} writes its credential")
    credential, gpu = read(credential_file).split()
    wait_until(lambda: nvml.locked_max(GPUS)[int(gpu)] == 1110, f"{name} locks GPU {gpu}")
    return job_id_of(done), credential, int(gpu), credential_file


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return f"(cannot read {path}: {e})"


def task_variables(out):
    """{rank: {name: value}} from the job's output."""
    tasks = {}
    for line in read(out).splitlines():
        rank, _, assignment = line.strip().partition(" ")
        name, _, value = assignment.partition("=")
        if name.startswith("WATTCUT_") and rank.isdigit():
            tasks.setdefault(int(rank), {})[name] = value
    return tasks


def check_jobs_on_gpus(cluster, nvml, agent, check, timeout_job):
    """The jobs that use GPUs through the agent, as uid 65534 (and uid 1): the pipeline, a cancelled
    job, the job at its time limit (`timeout_job`, started first), and another user's job, at once."""
    logs = cluster.path("out", "pipeline-logs")
    home = cluster.path("out", "home")
    for d in (logs, home):
        os.makedirs(d)
        os.chmod(d, 0o777)
    source = os.environ["WATTCUT_SOURCE_DIR"]
    script = PIPELINE_SCRIPT.format(port=free_port(), home=home, logs=logs, pipelines=PIPELINES, steps=STEPS,
                                    train=os.path.join(source, "examples", "pipeline_gpt", "train.py"))
    # The pipeline's GPUs are not 0-7 (the time-limit job has one): each rank finds its own
    # (WATTCUT_GPU).
    done, pipeline_out = submit(cluster, "pipeline", ["--wattcut=fastest", f"--gres=gpu:{STAGES * PIPELINES}"],
                                STAGES * PIPELINES, script, uid=NOBODY)
    check(done.returncode == 0, f"sbatch of the pipeline: {done.stderr}")
    pipeline = job_id_of(done)
    wait_until(lambda: cluster.job_field(pipeline, "JobState") != "PENDING", "the pipeline starts")
    held = {"cancelled": start_holding_job(cluster, nvml, "cancelled", []), "timeout": timeout_job}

    # Another user's job on the same node tries the cancelled job's GPU.
    done, other_out = submit(cluster, "other-user", ["--wattcut=fastest", "--gres=gpu:1"], 1, OTHER_USER_SCRIPT,
                             uid=OTHER_USER, args=(held["cancelled"][3],))
    check(done.returncode == 0, f"sbatch as another user: {done.stderr}")
    other = job_id_of(done)
    wait_until(lambda: not queued(cluster, other), "the other user's job ends")
    text = read(other_out).replace("\n ", " ")  # curl's " STATUS" after each answer's line
    cancelled_id, credential, gpu, _ = held["cancelled"]
    check(re.search(rf"own-credential-their-gpu .*GPU {gpu} is not one of job {other}'s GPUs.* 403", text), text)
    check(re.search(rf"their-credential .*the credential of job {cancelled_id} is for uid {NOBODY}, "
                    rf"not for uid {OTHER_USER}.* 403", text), text)
    check(re.search(r"no-credential .*present your job's credential.* 403", text), text)
    check(re.search(r"own-gpu .* 201", text), f"the other user's job leases its own GPU: {text!r}")
    check(nvml.locked_max(GPUS)[int(gpu)] == 1110, "the cancelled job's GPU is still locked as it set it")

    # scancel in the middle: once the job is gone (its epilog ran), its GPU is reset, no lease is held
    # and its credential is refused, saying why.
    cluster.run(["scancel", cancelled_id])
    wait_until(lambda: not queued(cluster, cancelled_id), "the cancelled job leaves the queue")
    check(nvml.locked_max(GPUS)[int(gpu)] == 0, f"the cancelled job's GPU {gpu} is reset")
    status, state = agent_request(cluster, "GET", "/v1/state")
    check(status == 200 and state["gpus"][gpu]["lease"] is None, f"no lease on GPU {gpu}: {state}")
    status, refused = agent_request(cluster, "POST", "/v1/leases", {"gpus": [gpu]}, credential, uid=NOBODY)
    check(status == 401 and f"the credential of job {cancelled_id} stopped working when the job ended" in str(refused),
          f"the cancelled job's credential after the job: {status} {refused}")
    check(f"job {cancelled_id} of uid {NOBODY} ended" in agent.output, "the agent logs the cancelled job's end")

    # The time limit (one minute: Slurm's smallest) ends the other job the same way.
    timeout_id, _, timeout_gpu, _ = held["timeout"]
    wait_until(lambda: not queued(cluster, timeout_id), "the job at its time limit ends", max_s=TIMEOUT_S)
    check(cluster.job_field(timeout_id, "JobState") == "TIMEOUT",
          f"the job ended at its time limit: {cluster.job_field(timeout_id, 'JobState')}")
    check(nvml.locked_max(GPUS)[int(timeout_gpu)] == 0, f"the timed-out job's GPU {timeout_gpu} is reset")
    status, state = agent_request(cluster, "GET", "/v1/state")
    check(status == 200 and state["gpus"][timeout_gpu]["lease"] is None, f"no lease on GPU {timeout_gpu}: {state}")

    # The pipeline: finished, followed its plan through the agent, every GPU reset, energy recorded.
    wait_until(lambda: not queued(cluster, pipeline), "the pipeline ends")
    text = read(pipeline_out)
    check(cluster.job_field(pipeline, "JobState") == "COMPLETED",
          f"the pipeline completed: {cluster.job_field(pipeline, 'JobState')}; {text[-3000:]}")
    given = re.search(r"^job gpus (\S+)$", text, re.M)
    job_gpus = parse_gpus(given.group(1)) if given else []
    check(len(job_gpus) == STAGES * PIPELINES and 0 not in job_gpus,
          f"the pipeline had 8 GPUs, not GPU 0 (the time-limit job's): {text[:300]}")
    consecutive = bool(job_gpus) and job_gpus == list(range(job_gpus[0], job_gpus[-1] + 1))
    gpu_text = f"{job_gpus[0]}-{job_gpus[-1]}" if consecutive else ",".join(map(str, job_gpus))
    ranks = {}
    for rank in range(STAGES * PIPELINES):
        try:
            with open(os.path.join(logs, f"rank{rank}.jsonl")) as f:
                ranks[rank] = [json.loads(line) for line in f]
        except OSError:
            ranks[rank] = []
    for rank, steps in ranks.items():
        check(len(steps) == STEPS and any(s["phase"] == "planned" and s["schedule"] for s in steps),
              f"rank {rank} ran {len(steps)} steps and got a plan")
    agent_pid = str(agent.process.pid)
    locks = {}
    for line in nvml.log_lines():
        pid = line.split(" ", 1)[0]
        check(pid == agent_pid, f"every NVML call is the agent's: {line}")
        if m := re.search(r"nvmlDeviceSetGpuLockedClocks\(GPU (\d+), (\d+),(\d+)\) -> 0$", line):
            locks.setdefault(int(m.group(1)), []).append(int(m.group(3)))
    for rank, steps in ranks.items():
        ran = [clock for step in steps for clock in step["clocks"]]
        gpu = job_gpus[rank] if rank < len(job_gpus) else -1  # one node: the local rank is the rank
        check(locks.get(gpu) == collapse(ran), f"GPU {gpu}: the agent's locks are the clocks rank {rank} ran")
    for gpu in range(GPUS):
        check(nvml.locked_max(GPUS)[int(gpu)] == 0 and nvml.read().get(f"gpu{gpu}.mem_locked", "0") == "0",
              f"GPU {gpu} ends reset")
    status, state = agent_request(cluster, "GET", "/v1/state")
    check(status == 200 and all(g["lease"] is None for g in state["gpus"]), f"no lease is held: {state}")
    comment = cluster.job_field(pipeline, "AdminComment")
    check(re.fullmatch(rf"wattcut\[wattcutnode\]: GPUs {gpu_text} used \d+\.\d J in \d+ s", comment) is not None,
          f"the pipeline's AdminComment: {comment!r}")
    check(re.search(rf"job {pipeline} of uid {NOBODY} ended after \d+ s: GPUs {gpu_text} used", agent.output),
          "the agent logs the pipeline's energy")
    with urllib.request.urlopen(cluster.server_url + "/v1/jobs", timeout=30) as response:
        jobs = json.load(response)["jobs"]
    mine = [j for j in jobs if j.get("job_metadata") == f"slurm-{pipeline}"]
    check(len(mine) == 1 and (mine[0].get("measured_gpu_energy_j") or 0) > 0,
          f"the planning server has the pipeline's measured GPU energy: {mine}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the cluster's folder (to read its logs)")
    args = parser.parse_args()
    unset = [v for v in ("WATTCUT_BINARY", "WATTCUT_FAKE_NVML_DIR", "WATTCUT_SOURCE_DIR", "PYTHONPATH")
             if not os.environ.get(v)]
    if unset:
        print(f"{', '.join(unset)} not set: run this test through ctest (the build sets them)")
        return 1
    missing = [b for b in ("munged", "slurmctld", "slurmd", "sbatch", "srun", "sinfo") if shutil.which(b) is None]
    if missing:
        print(f"skipped: {', '.join(missing)} not installed (scripts/install-deps.sh installs slurm-wlm and munge)")
        return SKIP
    if os.geteuid() != 0:
        print("skipped: the Slurm daemons run as root here, as in CI")
        return SKIP
    failures = []
    skipped = ""

    def check(ok, what):
        if not ok:
            failures.append(what)
            print("FAIL:", what)

    root = tempfile.mkdtemp(prefix="wattcut-slurm-")
    os.chmod(root, 0o755)
    cluster = Cluster(root, os.path.abspath(args.plugin))
    nvml = FakeNvmlState(os.path.join(root, "nvml-state"), {"gpu_count": GPUS, "min_mhz": 810, "step_mhz": 150})
    agent = server = None
    try:
        server = Service([os.environ["WATTCUT_BINARY"], "serve", "--listen", "127.0.0.1:0", "--data-dir",
                          cluster.path("server-data")], "listening on ")
        cluster.server_url = server.ready_line.split("listening on ")[1].split()[0]
        agent = start_agent(cluster, nvml)
        cluster.start()
        # First the job that waits for its time limit (Slurm's smallest is a minute): it runs while the
        # other cases do.
        timeout_job = start_holding_job(cluster, nvml, "timeout", ["--time=1"])

        # The refusals first: nothing may be queued after them.
        done, _ = submit(cluster, "bogus", ["--wattcut=bogus"], tasks=1)
        check(done.returncode != 0, "sbatch --wattcut=bogus is refused")
        check("--wattcut=bogus: expected off, fastest, least-energy or power:WATTS" in done.stderr,
              f"sbatch says why: {done.stderr!r}")
        # --gpu-freq with wattcut: refused at submission where sbatch's environment says it.
        cluster.env["SBATCH_GPU_FREQ"] = "low"
        done, _ = submit(cluster, "gpufreq-env", ["--wattcut=fastest"], tasks=1)
        del cluster.env["SBATCH_GPU_FREQ"]
        check(done.returncode != 0 and "--wattcut=fastest and --gpu-freq=low together" in done.stderr,
              f"SBATCH_GPU_FREQ with --wattcut is refused saying why: {done.stderr!r}")
        queued = queued_jobs(cluster, but=(timeout_job[0],))
        check(queued == [], f"no job queued after the refusals: {queued!r}")

        # Then every accepted job at once (the node has 8 CPUs; Slurm runs them in turn).
        jobs = {}
        for name, options, tasks in (
                ("fastest", ["--wattcut=fastest"], 8),
                ("power", ["--wattcut=power:300", "--wattcut-server=http://127.0.0.1:9999"], 2),
                ("off", ["--wattcut=off"], 2),
                ("default", [], 2),
                ("gpufreq", ["--gpu-freq=medium", "--wattcut=fastest"], 2),
                ("gpufreq-off", ["--gpu-freq=medium", "--wattcut=off"], 2)):
            done, out = submit(cluster, name, options, tasks)
            check(done.returncode == 0, f"sbatch {options}: {done.stderr}")
            jobs[name] = (done.stdout.strip().split(";")[0], out)
        done = cluster.run(["srun", "-n", "2", "--wattcut=least-energy", "bash", "-c",
                            'echo "$SLURM_PROCID $WATTCUT_MODE $WATTCUT_RANK $WATTCUT_WORLD_SIZE"'])
        check(done.returncode == 0, f"srun --wattcut=least-energy: {done.stderr}")
        check(sorted(done.stdout.split("\n")[:2]) == ["0 least-energy 0 2", "1 least-energy 1 2"],
              f"srun's tasks: {done.stdout!r}")
        wait_for_all(cluster, but=(timeout_job[0],))

        job_id, out = jobs["fastest"]
        tasks = task_variables(out)
        check(sorted(tasks) == list(range(8)), f"every task of 8 has WATTCUT_ variables: {sorted(tasks)}")
        for rank, env in tasks.items():
            expected = {
                "WATTCUT_MODE": "fastest",
                "WATTCUT_SERVER_URL": cluster.server_url,
                "WATTCUT_JOB_NAME": f"slurm-{job_id}",
                "WATTCUT_RANK": str(rank),
                "WATTCUT_WORLD_SIZE": "8",
                "WATTCUT_LOCAL_RANK": str(rank),
                "WATTCUT_GPU": str(rank),  # a job without gres: the node's GPUs in order
                "WATTCUT_AGENT_SOCKET": cluster.path("agent.sock"),
            }
            credential = env.pop("WATTCUT_AGENT_TOKEN", "")
            check(env == expected, f"task {rank}: {env} != {expected}")
            check(re.fullmatch("[0-9a-f]{64}", credential) is not None, f"task {rank} has the job's agent credential")
        check(len({e.get("WATTCUT_AGENT_TOKEN") for e in task_variables(out).values()}) == 1,
              "every task of the job has the one credential")

        tasks = task_variables(jobs["power"][1])
        check(all(e.get("WATTCUT_MODE") == "power:300" and e.get("WATTCUT_SERVER_URL") == "http://127.0.0.1:9999"
                  for e in tasks.values()) and len(tasks) == 2, f"power:300 with the job's server: {tasks}")

        for name in ("off", "default"):
            check(task_variables(jobs[name][1]) == {} and read(jobs[name][1]).count(" ran\n") == 2,
                  f"{name}: both tasks ran with nothing set: {read(jobs[name][1])!r}")

        # --gpu-freq on sbatch's command line: the script says why and its srun step is refused; the
        # node is not drained. --wattcut=off keeps --gpu-freq.
        text = read(jobs["gpufreq"][1])
        check("wattcut: --wattcut=fastest and --gpu-freq=medium together" in text and " ran\n" not in text,
              f"--gpu-freq on the command line: the script says why and no task ran: {text!r}")
        text = read(jobs["gpufreq-off"][1])
        check("wattcut" not in text and text.count(" ran\n") == 2, f"--wattcut=off keeps --gpu-freq: {text!r}")
        state = cluster.run(["sinfo", "-h", "-o", "%t"]).stdout.strip()
        check(state == "mix", f"the node runs the time-limit job, and is not drained: {state!r}")

        check_jobs_on_gpus(cluster, nvml, agent, check, timeout_job)

        # The agent down at a job's start: the job runs unmanaged, one warning line for the job.
        agent.stop()
        done, out = submit(cluster, "agent-down", ["--wattcut=fastest"], tasks=2)
        check(done.returncode == 0, f"sbatch with the agent down: {done.stderr}")
        wait_for_all(cluster)
        text = read(out)
        check(text.count("the job runs unmanaged") == 1 and "cannot reach unix:" in text and
              task_variables(out) == {} and text.count(" ran\n") == 2,
              f"the agent down: the job ran unmanaged, saying so once: {text!r}")
        state = cluster.run(["sinfo", "-h", "-o", "%t"]).stdout.strip()
        check(state == "idle", f"the node is idle after the agent was down, not drained: {state!r}")

        # A malformed plugstack.conf line: srun refuses, naming the word (last: it breaks the stack).
        with open(cluster.path("plugstack.conf"), "w") as f:
            f.write(f"required {cluster.plugin} sever=http://127.0.0.1:7787\n")
        done = cluster.run(["srun", "-n", "1", "--wattcut=fastest", "true"])
        check(done.returncode != 0 and "wattcut plugin argument 'sever=http://127.0.0.1:7787': unknown" in done.stderr,
              f"a bad plugstack word is refused, named: {done.stderr!r}")
    except NoCgroups as e:
        skipped = f"skipped: {e}"
    except Exception as e:  # noqa: BLE001 - any failure is reported with the daemons' logs
        failures.append(f"{type(e).__name__}: {e}")
        print("FAIL:", e)
    finally:
        if failures:
            print(cluster.logs())
            if agent is not None:
                print("agent:\n" + agent.output[-3000:])
        cluster.stop()
        for daemon in (agent, server):
            if daemon is not None:
                daemon.stop()
        if args.keep:
            print("kept:", root)
        else:
            shutil.rmtree(root, ignore_errors=True)
    if skipped:
        print(skipped)
        return SKIP
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("slurm_spank_e2e_test: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
