"""The variables wattcut's Slurm plugin sets (docs/slurm.md), read by the Python module: the pure
rules, and a one-rank job that passes nothing but pp_degree and gets its mode applied."""

import os
import unittest
from unittest import mock

from fixtures import OneFakeGpuServerCase

from wattcut import PipelineFrequencyOptimizer
from wattcut.slurm_environment import mode_request, resolve_arguments

NONE = dict(rank=None, dp_rank=None, pp_rank=None, tp_rank=None, device_id=None, dp_degree=None, pp_degree=None,
            tp_degree=None, world_size=None, server_url=None, job_metadata=None)
SLURM = {"WATTCUT_SERVER_URL": "http://10.0.0.5:7787", "WATTCUT_JOB_NAME": "slurm-4711", "WATTCUT_RANK": "5",
         "WATTCUT_WORLD_SIZE": "8", "WATTCUT_LOCAL_RANK": "1", "WATTCUT_MODE": "fastest"}


class Resolution(unittest.TestCase):
    def test_the_plugins_variables_give_everything_but_the_pipeline_depth(self):
        got = resolve_arguments(dict(NONE, pp_degree=2, tp_degree=2), SLURM)
        # rank 5 of 8 with tp 2, pp 2: dp 2; tp fastest, then dp, pp slowest.
        self.assertEqual((got["tp_rank"], got["dp_rank"], got["pp_rank"]), (1, 0, 1))
        self.assertEqual((got["dp_degree"], got["world_size"], got["device_id"]), (2, 8, 1))
        self.assertEqual((got["server_url"], got["job_metadata"]), ("http://10.0.0.5:7787", "slurm-4711"))

    def test_the_tasks_gpu_is_the_one_slurm_gave_it(self):
        got = resolve_arguments(dict(NONE, pp_degree=2), dict(SLURM, WATTCUT_GPU="5"))
        self.assertEqual(got["device_id"], 5, "local rank 1 of a job on GPUs 4-7 is GPU 5")
        got = resolve_arguments(dict(NONE, pp_degree=2, device_id=0), dict(SLURM, WATTCUT_GPU="5"))
        self.assertEqual(got["device_id"], 0, "an explicit device_id wins")
        with self.assertRaisesRegex(ValueError, r"\$WATTCUT_GPU is 'x'"):
            resolve_arguments(dict(NONE, pp_degree=2), dict(SLURM, WATTCUT_GPU="x"))

    def test_every_rank_of_a_layout_is_distinct_and_in_range(self):
        seen = set()
        for rank in range(8):
            got = resolve_arguments(dict(NONE, pp_degree=2, tp_degree=2), dict(SLURM, WATTCUT_RANK=str(rank)))
            self.assertEqual((got["pp_rank"] * 2 + got["dp_rank"]) * 2 + got["tp_rank"], rank)
            seen.add((got["dp_rank"], got["pp_rank"], got["tp_rank"]))
        self.assertEqual(len(seen), 8)

    def test_explicit_arguments_win(self):
        got = resolve_arguments(dict(NONE, rank=2, dp_rank=1, pp_rank=0, tp_rank=0, pp_degree=2, world_size=4,
                                     server_url="http://own:1", job_metadata="mine", device_id=3), SLURM)
        self.assertEqual((got["rank"], got["dp_rank"], got["pp_rank"], got["world_size"]), (2, 1, 0, 4))
        self.assertEqual((got["server_url"], got["job_metadata"], got["device_id"]), ("http://own:1", "mine", 3))

    def test_what_is_missing_or_malformed_is_named(self):
        cases = [
            ({}, dict(NONE, pp_degree=1), "server_url is required"),
            ({"WATTCUT_SERVER_URL": "http://x:1"}, dict(NONE, pp_degree=1), "rank is required"),
            (SLURM, NONE, "pp_degree is required"),
            (dict(SLURM, WATTCUT_RANK="five"), dict(NONE, pp_degree=1), "$WATTCUT_RANK is 'five'"),
            (dict(SLURM, WATTCUT_WORLD_SIZE="-8"), dict(NONE, pp_degree=1), "$WATTCUT_WORLD_SIZE is '-8'"),
            (SLURM, dict(NONE, pp_degree=3), "world_size 8 is not a multiple of pp_degree * tp_degree = 3"),
        ]
        for environ, arguments, message in cases:
            with self.assertRaises(ValueError) as raised:
                resolve_arguments(arguments, environ)
            self.assertIn(message, str(raised.exception))

    def test_modes(self):
        self.assertIsNone(mode_request({}))
        self.assertIsNone(mode_request({"WATTCUT_MODE": "fastest"}))
        self.assertEqual(mode_request({"WATTCUT_MODE": "least-energy"}), ("plan", {"point": "min_energy"}))
        self.assertEqual(mode_request({"WATTCUT_MODE": "power:300"}),
                         ("power_target", {"peak_power_per_gpu_w": 300.0, "reason": "slurm --wattcut=power:300"}))
        for bad in ("power:x", "power:-1", "slow"):
            with self.assertRaisesRegex(ValueError, "WATTCUT_MODE"):
                mode_request({"WATTCUT_MODE": bad})


class OneRankSlurmJob(OneFakeGpuServerCase):
    """A rank that passes only pp_degree, as inside `srun --wattcut=least-energy`."""

    TAG = "python-slurm"

    def test_the_job_registers_under_its_slurm_name_and_gets_its_mode(self):
        environ = {"WATTCUT_SERVER_URL": self.server.url, "WATTCUT_JOB_NAME": "slurm-4711", "WATTCUT_RANK": "0",
                   "WATTCUT_WORLD_SIZE": "1", "WATTCUT_LOCAL_RANK": "0", "WATTCUT_MODE": "least-energy"}
        with mock.patch.dict(os.environ, environ):
            with PipelineFrequencyOptimizer(pp_degree=1, num_microbatches=2, nvml_library=self.library) as pfo:
                self.assertIn("slurm-4711", pfo.job_id)
                self.assertEqual((pfo.rank, pfo.dp_rank, pfo.pp_rank, pfo.device_id), (0, 0, 0, 0))
                job = self.server.request("GET", f"/v1/jobs/{self.server.job_path(pfo.job_id)}")
                self.assertEqual(job["selection"], {"point": "min_energy"})


if __name__ == "__main__":
    unittest.main()
