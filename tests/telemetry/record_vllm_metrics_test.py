#!/usr/bin/env python3
"""scripts/record-vllm-metrics.sh against a fake vLLM /metrics page on loopback: the CSV it writes
(labels summed, a missing metric an empty field, a failed fetch reported and skipped) is one `wattcut polca
calibrate` reads (too short a run to fit is the answer, not a file error), and bad arguments are
refused.

Usage: record_vllm_metrics_test.py --source DIR --wattcut PATH"""

import argparse
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import unittest

ARGS = None


class FakeVllm(http.server.BaseHTTPRequestHandler):
    calls = 0

    def do_GET(self):
        FakeVllm.calls += 1
        if FakeVllm.calls == 2:  # one failed scrape
            self.send_response(503)
            self.end_headers()
            return
        c = FakeVllm.calls
        body = (
            "# HELP vllm:num_requests_running Number of requests currently running.\n"
            "# TYPE vllm:num_requests_running gauge\n"
            'vllm:num_requests_running{engine="0",model_name="llama 3"} 2.0\n'
            'vllm:num_requests_running{engine="1",model_name="llama 3"} 1.0\n'
            'vllm:num_requests_waiting{engine="0",model_name="llama 3"} 0.0\n'
            f'vllm:prompt_tokens_total{{engine="0",model_name="llama 3"}} {100.0 * c}\n'
            f'vllm:generation_tokens_total{{engine="0",model_name="llama 3"}} {10.0 * c}\n'
            f'vllm:time_to_first_token_seconds_count{{engine="0",model_name="llama 3"}} {c}.0\n'
            'vllm:time_to_first_token_seconds_bucket{engine="0",le="0.5",model_name="llama 3"} 1.0\n'
            f'vllm:iteration_tokens_total_count{{engine="0",model_name="llama 3"}} {4 * c}.0\n'
            f'vllm:iteration_tokens_total_sum{{engine="0",model_name="llama 3"}} {110.0 * c}\n'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class RecordVllmMetricsTest(unittest.TestCase):
    def script(self):
        return os.path.join(ARGS.source, "scripts", "record-vllm-metrics.sh")

    def test_records_a_csv_calibrate_reads(self):
        server = http.server.HTTPServer(("127.0.0.1", 0), FakeVllm)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_port}/metrics"
            # Six seconds at 0.2 s: about 30 scrapes, of which the test needs three.
            r = subprocess.run(["bash", self.script(), url, "6", "0.2"], capture_output=True, text=True, timeout=120)
        finally:
            server.shutdown()
            server.server_close()
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0], "time,vllm:num_requests_running,vllm:num_requests_waiting,vllm:prompt_tokens_total,"
                                   "vllm:generation_tokens_total,vllm:time_to_first_token_seconds_count,"
                                   "vllm:request_success_total,vllm:iteration_tokens_total_count,"
                                   "vllm:iteration_tokens_total_sum,vllm:prefix_cache_hits_total")
        self.assertIn("did not answer", r.stderr)
        rows = [l.split(",") for l in lines[1:]]
        self.assertGreaterEqual(len(rows), 3)
        self.assertEqual(rows[0][1:], ["3", "0", "100", "10", "1", "", "4", "110", ""])  # two engines summed
        self.assertEqual(rows[1][3], "300")  # the 503 left no row
        with tempfile.TemporaryDirectory() as d:
            load = os.path.join(d, "n.vllm.csv")
            with open(load, "w") as f:
                f.write(r.stdout)
            power = os.path.join(d, "n.nvidia-smi.csv")
            with open(power, "w") as f:
                # Ten seconds apart: longer than the load's scrape interval however slowly a loaded
                # machine scraped, so the verdict is that the two do not overlap, not that the power
                # is too short to cover one window.
                f.write("timestamp, index, power.draw [W]\n2024/05/10 00:00:00.000, 0, 85.59 W\n"
                        "2024/05/10 00:00:10.000, 0, 85.60 W\n")
            c = subprocess.run([ARGS.wattcut, "polca", "calibrate", "--power", power, "--load", load, "--out",
                                os.path.join(d, "cal")], capture_output=True, text=True, timeout=60)
            self.assertEqual(c.returncode, 1)
            self.assertIn("do not overlap in time", c.stderr)  # the file was read; the run is the problem

    def test_bad_arguments_are_refused(self):
        for args, expect in [(["http://127.0.0.1:9/metrics", "0"], "SECONDS"),
                             (["http://127.0.0.1:9/metrics", "ten"], "SECONDS"),
                             (["http://127.0.0.1:9/metrics", "5", "0.01"], "INTERVAL_S")]:
            r = subprocess.run(["bash", self.script(), *args], capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(expect, r.stderr)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True)
    p.add_argument("--wattcut", required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
