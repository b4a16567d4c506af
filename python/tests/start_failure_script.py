"""Run by test_pipeline_frequency as two ranks: rank 1 names a GPU that does not exist."""

import os
import sys

import torch.distributed as dist

from wattcut import PipelineFrequencyOptimizer, WattcutError

dist.init_process_group("gloo")
rank = dist.get_rank()
try:
    PipelineFrequencyOptimizer(rank=rank, dp_rank=0, pp_rank=rank, tp_rank=0, device_id=7 if rank == 1 else 0,
                               dp_degree=1, pp_degree=2, tp_degree=1, world_size=2, server_url=sys.argv[1],
                               num_microbatches=2, nvml_library=os.environ["FAKE_NVML_LIBRARY"])
except WattcutError as error:
    print(f"WattcutError: {error}", flush=True)
    # As a training script should before it exits: torch's gloo process group left to the
    # interpreter's teardown can abort the process there ("terminate called without an active
    # exception", exit -6), after our error was raised and printed; seen once in 25+ runs.
    dist.destroy_process_group()
    sys.exit(3)
print("started", flush=True)
