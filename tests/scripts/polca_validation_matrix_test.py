#!/usr/bin/python3
"""scripts/polca_validation_matrix.py's own rules: the trace variants keep the requests they are
made of, and a cell's held fraction is the last point of an unbroken run of points held from +0 %.
The matrix itself (hours of simulation) is run by hand: docs/polca.md, "The validation matrix"."""

import csv
import importlib.util
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location(
    "matrix", os.path.join(HERE, "..", "..", "scripts", "polca_validation_matrix.py"))
matrix = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(matrix)

TRACE = """TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.6805900,374,44
2023-11-16 18:15:47.1120479,396,109
2023-11-16 18:16:10.0000000,1,7
2023-11-16 18:16:31.5000000,5000,3
2023-11-16 18:59:59.9000000,800,20
"""


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


class Variants(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.source = os.path.join(self.dir.name, "t.csv")
        with open(self.source, "w") as f:
            f.write(TRACE)

    def tearDown(self):
        self.dir.cleanup()

    def variant(self, name):
        path = os.path.join(self.dir.name, name + ".csv")
        matrix.write_variant(self.source, name, path)
        return read(path)

    def test_scaled_prompts_keep_times_and_answers_and_never_reach_zero(self):
        header, rows = self.variant("prompts-x0.5")
        self.assertEqual(header, ["TIMESTAMP", "ContextTokens", "GeneratedTokens"])
        _, original = read(self.source)
        self.assertEqual([r[0] for r in rows], [r[0] for r in original])
        self.assertEqual([r[2] for r in rows], [r[2] for r in original])
        self.assertEqual([r[1] for r in rows], ["187", "198", "1", "2500", "400"])
        _, tripled = self.variant("prompts-x3")
        self.assertEqual([r[1] for r in tripled], ["1122", "1188", "3", "15000", "2400"])

    def test_bursty_arrivals_are_the_same_requests_in_order_squeezed_into_each_windows_start(self):
        _, rows = self.variant("bursty")
        _, original = read(self.source)
        self.assertEqual([r[1:] for r in rows], [r[1:] for r in original])
        times = [matrix.parse_time(r[0])[1] for r in rows]
        self.assertEqual(times, sorted(times))
        t0 = times[0]
        for t in times:
            self.assertLess((t - t0) % matrix.BURST_PERIOD_S, matrix.BURST_LENGTH_S + 1e-6)
        # The first request keeps its time; the fourth, 44.8 s after it, lands 30 + 1.48 s after it.
        self.assertEqual(rows[0][0], original[0][0])
        self.assertAlmostEqual(times[3] - t0, 30 + (44.8194100 - 30) / 10, places=6)


class HeldFraction(unittest.TestCase):
    def test_a_policy_holds_up_to_its_first_failure_and_the_cell_stops_when_both_failed(self):
        # polca fails at +10 % (brakes), headroom at +20 % (SLOs): later points are not run.
        outcome = {0: {"polca": (0, True), "headroom": (0, True)},
                   5: {"polca": (0, True), "headroom": (0, True)},
                   10: {"polca": (3, True), "headroom": (0, True)},
                   15: {"headroom": (0, True)},
                   20: {"headroom": (0, False)}}
        asked = []

        def fake(wattcut, trace, config, seed, added, policies, duration, out):
            point = int(added.rstrip("%"))
            asked.append((point, tuple(policies)))
            return {p: outcome[point][p] + ({},) for p in policies}

        real, matrix.run_point = matrix.run_point, fake
        try:
            args = type("Args", (), {"out": "/nonexistent", "wattcut": "wattcut", "duration": "1d"})()
            _, _, held, _ = matrix.run_cell(args, ("conv", "as-shipped", "a100", 40, 1))
        finally:
            matrix.run_point = real
        self.assertEqual(held, {"polca": 5, "headroom": 15})
        self.assertEqual(asked[-1], (20, ("headroom",)))
        self.assertEqual(len(asked), 5)


class Seeds(unittest.TestCase):
    def test_ranges_and_lists_in_the_order_given_each_seed_once(self):
        self.assertEqual(matrix.parse_seeds("1-3"), [1, 2, 3])
        self.assertEqual(matrix.parse_seeds("1-9"), list(range(1, 10)))
        self.assertEqual(matrix.parse_seeds("7,1,4"), [7, 1, 4])
        self.assertEqual(matrix.parse_seeds("1-3,2,8"), [1, 2, 3, 8])

    def test_what_is_no_seed_is_refused_with_what_was_expected(self):
        import argparse
        for text, said in (("0", "0 is not a seed"), ("3-1", "'3-1' is not a seed or a range"),
                           ("x", "'x' is not a seed or a range"), ("1,,2", "'' is not a seed or a range"),
                           ("1-2-3", "'1-2-3' is not a seed or a range"),
                           ("1-100000000", "1-100000000 is 100000000 seeds, more than 100"),
                           (",".join(str(n) for n in range(1, 102)), "101 seeds, more than 100")):
            with self.assertRaises(argparse.ArgumentTypeError) as caught:
                matrix.parse_seeds(text)
            self.assertIn(said, str(caught.exception))

    def test_a_bad_seeds_option_stops_the_script_before_it_runs_anything(self):
        import subprocess
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, matrix.__file__, "--out", os.path.join(d, "out"), "--seeds", "2-1"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("--seeds", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "out")))


class Cells(unittest.TestCase):
    def test_specs_select_by_each_field_with_star_for_any(self):
        specs = matrix.parse_cells("conv:prompts-x3:a100:20,code:*:h100:*")
        self.assertEqual(specs, [("conv", "prompts-x3", "a100", 20), ("code", None, "h100", None)])
        self.assertTrue(matrix.selected(specs, ("conv", "prompts-x3", "a100", 20)))
        self.assertFalse(matrix.selected(specs, ("conv", "prompts-x3", "a100", 40)))
        self.assertFalse(matrix.selected(specs, ("conv", "prompts-x3", "h100", 20)))
        self.assertTrue(matrix.selected(specs, ("code", "bursty", "h100", 80)))
        self.assertFalse(matrix.selected(specs, ("code", "bursty", "a100", 80)))
        self.assertTrue(matrix.selected(None, ("code", "bursty", "a100", 80)))

    def test_what_is_no_cell_is_refused_with_what_was_expected(self):
        import argparse
        for text, said in (("conv:x3", "'conv:x3' is not TRACE:VARIANT:GPU:SERVERS"),
                           ("chat:*:*:*", "trace 'chat' in 'chat:*:*:*' is not one of the matrix's (expected * or "
                                          "one of conv, code)"),
                           ("conv:x3:a100:20", "variant 'x3'"), ("conv:*:mi300x:*", "GPU 'mi300x'"),
                           ("conv:*:*:30", "servers '30'"), ("conv:*:*:20,", "'' is not TRACE:VARIANT:GPU:SERVERS")):
            with self.assertRaises(argparse.ArgumentTypeError) as caught:
                matrix.parse_cells(text)
            self.assertIn(said, str(caught.exception))

    def test_cells_that_match_nothing_stop_the_script_before_it_simulates(self):
        import subprocess
        with tempfile.TemporaryDirectory() as d:
            binary = os.path.join(d, "wattcut")
            with open(binary, "w") as f:
                f.write("#!/bin/sh\necho simulated >> %s/ran\nexit 1\n" % d)
            os.chmod(binary, 0o755)
            for name in matrix.TRACES.values():
                with open(os.path.join(d, name), "w") as f:
                    f.write(TRACE)
            r = subprocess.run([sys.executable, matrix.__file__, "--wattcut", binary, "--out", os.path.join(d, "out"),
                                "--data", d, "--quick", "--cells", "conv:*:a100:20"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("--cells: no cell of the matrix matches (rows of 40 servers with --quick)", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "ran")))


class Firmness(unittest.TestCase):
    def test_the_sign_test_is_exact_and_two_sided(self):
        self.assertEqual(matrix.sign_test_p(0, 0), 1.0)
        self.assertEqual(matrix.sign_test_p(1, 1), 1.0)
        self.assertAlmostEqual(matrix.sign_test_p(0, 5), 2 / 32)
        self.assertAlmostEqual(matrix.sign_test_p(5, 0), 2 / 32)
        # 2 against 8: P(X <= 2) for X ~ Binomial(10, 1/2) is 56/1024, twice that.
        self.assertAlmostEqual(matrix.sign_test_p(2, 8), 112 / 1024)
        self.assertAlmostEqual(matrix.sign_test_p(3, 4), 1.0)

    def test_seeds_of_one_cell_are_counted_together_and_holding_nothing_ranks_below_zero(self):
        def held(h, p):
            return {"headroom": h, "polca": p}
        cell = ("code", "prompts-x0.5", "h100", 20)
        results = [(cell + (1,), held(5, 5), None), (cell + (2,), held(0, 5), None),
                   (cell + (3,), held(10, 0), None), (cell + (4,), held(0, None), None),
                   (("conv", "as-shipped", "a100", 40, 1), held(30, 15), None)]
        table = matrix.firmness(results)
        self.assertEqual(len(table), 2)
        conv, code = table  # in the matrix's order: conv before code
        self.assertEqual(conv[:8], ["conv", "as-shipped", "a100", 40, 1, 1, 0, 0])
        self.assertEqual(code[:8], ["code", "prompts-x0.5", "h100", 20, 4, 2, 1, 1])
        self.assertAlmostEqual(code[8], (5 + 0 + 10 + 0) / 4)
        self.assertAlmostEqual(code[9], (5 + 5 + 0 - 5) / 4)
        self.assertAlmostEqual(code[10], matrix.sign_test_p(1, 2))
        self.assertIn("| code, prompts-x0.5, H100, 20 | 4 | 2 / 1 / 1 | +3.8 / +1.2 % | 1 |",
                      matrix.firmness_text(table))


class Reuse(unittest.TestCase):
    def test_runs_of_another_binary_are_refused_with_what_to_do(self):
        import subprocess
        with tempfile.TemporaryDirectory() as d:
            binary = os.path.join(d, "wattcut")
            with open(binary, "wb") as f:
                f.write(b"a build")
            os.makedirs(os.path.join(d, "out", "runs"))
            with open(os.path.join(d, "out", "runs", "wattcut.sha256"), "w") as f:
                f.write("0" * 64 + "\n")
            r = subprocess.run([sys.executable, matrix.__file__, "--wattcut", binary, "--out", os.path.join(d, "out"),
                                "--data", d], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("its runs were made by another wattcut binary", r.stderr)
            self.assertIn("give another --out", r.stderr)


if __name__ == "__main__":
    unittest.main()
