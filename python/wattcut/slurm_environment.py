"""What wattcut's Slurm plugin puts in a task's environment (docs/slurm.md), read back: the
arguments a rank need not pass inside a Slurm job with ``--wattcut``, and the job's mode applied
at the planning server.

    WATTCUT_SERVER_URL   server_url
    WATTCUT_JOB_NAME     job_metadata (slurm-JOBID)
    WATTCUT_RANK         rank
    WATTCUT_WORLD_SIZE   world_size
    WATTCUT_GPU          device_id (the task's GPU as NVML numbers it; else WATTCUT_LOCAL_RANK)
    WATTCUT_MODE         fastest | least-energy | power:WATTS (the plan rank 0 selects)

An explicit argument always wins. The data-, pipeline- and tensor-parallel ranks follow from the
global rank and the degrees in the order Megatron-LM and DeepSpeed lay ranks out: the tensor rank
varies fastest, then the data-parallel rank, and the pipeline rank slowest
(``rank = (pp_rank * dp_degree + dp_rank) * tp_degree + tp_rank``). A job laid out otherwise
passes its ranks.
"""

from __future__ import annotations

import json
import math
import os
import urllib.error
import urllib.request
from typing import Any, Dict, Mapping, Optional, Tuple

_VARIABLES = {
    "server_url": "WATTCUT_SERVER_URL",
    "job_metadata": "WATTCUT_JOB_NAME",
    "rank": "WATTCUT_RANK",
    "world_size": "WATTCUT_WORLD_SIZE",
    "device_id": "WATTCUT_LOCAL_RANK",
}


def _integer(environ: Mapping[str, str], name: str) -> Optional[int]:
    text = environ.get(name)
    if text is None or text == "":
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"${name} is {text!r}: expected a non-negative integer") from None
    if value < 0:
        raise ValueError(f"${name} is {text!r}: expected a non-negative integer")
    return value


def resolve_arguments(arguments: Dict[str, Any], environ: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """`arguments` (the optimizer's rank, dp_rank, pp_rank, tp_rank, device_id, dp_degree,
    pp_degree, tp_degree, world_size, server_url, job_metadata; None where not given) with every
    None filled from the environment or derived; a ValueError names what is still missing and the
    variable or argument that gives it."""
    environ = os.environ if environ is None else environ
    out = dict(arguments)
    for key in ("server_url", "job_metadata"):
        if out.get(key) is None and environ.get(_VARIABLES[key]):
            out[key] = environ[_VARIABLES[key]]
    for key in ("rank", "world_size", "device_id"):
        if out.get(key) is None:
            out[key] = _integer(environ, _VARIABLES[key])
    if arguments.get("device_id") is None and environ.get("WATTCUT_GPU"):
        out["device_id"] = _integer(environ, "WATTCUT_GPU")
    if out.get("server_url") is None:
        raise ValueError("server_url is required (inside a Slurm job with --wattcut, $WATTCUT_SERVER_URL gives it)")
    for key in ("rank", "world_size"):
        if out.get(key) is None:
            raise ValueError(f"{key} is required (inside a Slurm job with --wattcut, ${_VARIABLES[key]} gives it)")
    if out.get("tp_degree") is None:
        out["tp_degree"] = 1
    if out.get("pp_degree") is None:
        raise ValueError("pp_degree is required: the number of pipeline stages is the model's, not Slurm's")
    if out.get("dp_degree") is None:
        per_pipeline = out["pp_degree"] * out["tp_degree"]
        if per_pipeline < 1 or out["world_size"] % per_pipeline != 0:
            raise ValueError(
                f"world_size {out['world_size']} is not a multiple of pp_degree * tp_degree = {per_pipeline}: "
                "pass dp_degree")
        out["dp_degree"] = out["world_size"] // per_pipeline
    rank, tp, dp = out["rank"], out["tp_degree"], out["dp_degree"]
    if out.get("tp_rank") is None:
        out["tp_rank"] = rank % tp
    if out.get("dp_rank") is None:
        out["dp_rank"] = (rank // tp) % dp
    if out.get("pp_rank") is None:
        out["pp_rank"] = rank // (tp * dp)
    if out.get("device_id") is None:
        out["device_id"] = 0
    return out


def mode_request(environ: Optional[Mapping[str, str]] = None) -> Optional[Tuple[str, Dict[str, Any]]]:
    """The request that applies $WATTCUT_MODE at the server: (path under /v1/jobs/{id}/, body), or
    None for the server's default (the fastest plan) or no mode. A malformed mode is a ValueError."""
    environ = os.environ if environ is None else environ
    mode = environ.get("WATTCUT_MODE", "")
    if mode in ("", "fastest"):
        return None
    if mode == "least-energy":
        return "plan", {"point": "min_energy"}
    if mode.startswith("power:"):
        try:
            watts = float(mode[len("power:"):])
        except ValueError:
            watts = float("nan")
        if math.isfinite(watts) and watts > 0:
            return "power_target", {"peak_power_per_gpu_w": watts, "reason": "slurm --wattcut=" + mode}
    raise ValueError(f"$WATTCUT_MODE is {mode!r}: expected fastest, least-energy or power:WATTS")


def apply_mode(server_url: str, job_id: str, request: Tuple[str, Dict[str, Any]], token: str = "",
               timeout_s: float = 5.0) -> Optional[str]:
    """PUTs `request` for `job_id`; None when the server took it, else why not (to retry later)."""
    path, body = request
    url = f"{server_url.rstrip('/')}/v1/jobs/{urllib.request.quote(job_id, safe='')}/{path}"
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    put = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="PUT")
    try:
        with urllib.request.urlopen(put, timeout=timeout_s):
            return None
    except urllib.error.HTTPError as error:
        return f"PUT {url}: HTTP {error.code}: {error.read(500).decode(errors='replace')}"
    except (urllib.error.URLError, OSError) as error:
        return f"PUT {url}: {error}"
