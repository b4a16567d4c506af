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

Needs root (the daemons run as root, as CI does), the Slurm and munge binaries
(scripts/install-deps.sh) and a cgroup filesystem at /sys/fs/cgroup (slurmd 22.05 will not start
without one); without them it is skipped (exit 77), saying which is missing. Every wait is
bounded."""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
TIMEOUT_S = 120


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
        self.env = dict(os.environ, SLURM_CONF=os.path.join(root, "slurm.conf"))
        self.procs = []

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def write_config(self):
        for d in ("state", "spool", "munge", "log", "out"):
            os.makedirs(self.path(d), exist_ok=True)
        os.chmod(self.path("munge"), 0o700)
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
NodeName=wattcutnode NodeHostname={self.host} NodeAddr=127.0.0.1 CPUs=8 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        with open(self.path("plugstack.conf"), "w") as f:
            # The cluster's server; jobs without --wattcut are left alone (default=off).
            f.write(f"required {self.plugin} server=http://127.0.0.1:7787 default=off "
                    f"agent_socket={self.path('agent.sock')}\n")

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

    def run(self, args):
        return subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=TIMEOUT_S)


JOB_SCRIPT = """#!/bin/bash
srun bash -c 'env | grep ^WATTCUT_ | sort | sed "s/^/$SLURM_PROCID /"; echo "$SLURM_PROCID ran"'
"""


def submit(cluster, name, options, tasks=8):
    """sbatch without waiting: (the finished sbatch, the job's output file)."""
    script = cluster.path(name + ".sh")
    with open(script, "w") as f:
        f.write(JOB_SCRIPT)
    out = cluster.path("out", name + ".txt")
    done = cluster.run(["sbatch", "--parsable", "-n", str(tasks), "-o", out, *options, script])
    return done, out


def wait_for_all(cluster):
    """Until no job is queued or running (bounded)."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if cluster.run(["squeue", "-h"]).stdout.strip() == "":
            return
        time.sleep(0.2)
    raise RuntimeError("jobs still queued after %d s: %s" % (TIMEOUT_S, cluster.run(["squeue"]).stdout))


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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plugin", required=True)
    args = parser.parse_args()
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
    try:
        cluster.start()

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
        queued = cluster.run(["squeue", "-h"]).stdout.strip()
        check(queued == "", f"no job queued after the refusals: {queued!r}")

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
        wait_for_all(cluster)

        job_id, out = jobs["fastest"]
        tasks = task_variables(out)
        check(sorted(tasks) == list(range(8)), f"every task of 8 has WATTCUT_ variables: {sorted(tasks)}")
        for rank, env in tasks.items():
            expected = {
                "WATTCUT_MODE": "fastest",
                "WATTCUT_SERVER_URL": "http://127.0.0.1:7787",
                "WATTCUT_JOB_NAME": f"slurm-{job_id}",
                "WATTCUT_RANK": str(rank),
                "WATTCUT_WORLD_SIZE": "8",
                "WATTCUT_LOCAL_RANK": str(rank),
                "WATTCUT_AGENT_SOCKET": cluster.path("agent.sock"),
            }
            check(env == expected, f"task {rank}: {env} != {expected}")

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
        check(state == "idle", f"the node is idle after every case, not drained: {state!r}")

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
        cluster.stop()
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
