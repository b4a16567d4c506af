"""wattcut.Frontier.load: the plans of a `wattcut frontier` folder, looked up as `wattcut plan show` does."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))

from fixtures import TempDir, required_env  # noqa: E402

import wattcut  # noqa: E402
from wattcut import Frontier, WattcutError  # noqa: E402


def run_wattcut(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([required_env("WATTCUT_BINARY"), *args], capture_output=True, text=True, timeout=120)


class FrontierLoadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = TempDir("frontier")
        cls.dir = os.path.join(cls.tmp.path, "f")
        run = run_wattcut("frontier", "--stages", "4", "--microbatches", "4", "--out", cls.dir)
        assert run.returncode == 0, run.stderr
        cls.frontier = Frontier.load(cls.dir)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.remove()

    def show(self, *flags: str) -> str:
        run = run_wattcut("plan", "show", self.dir, *flags)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout

    def test_points_are_the_csv_rows_with_their_power(self) -> None:
        with open(os.path.join(self.dir, "frontier.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        points = self.frontier.points
        self.assertEqual(len(points), len(rows))
        self.assertEqual(len(self.frontier), len(rows))
        for row, point in zip(rows, points):
            self.assertEqual(point["plan"], int(row["plan"]))
            self.assertEqual(point["time_s"], float(row["time"]))
            self.assertEqual(point["energy_j"], float(row["energy"]))
            self.assertEqual(point["avg_power_w"], float(row["avg_power_w"]))
            self.assertEqual(point["avg_power_per_gpu_w"], float(row["avg_power_per_gpu_w"]))
            self.assertEqual(point["peak_1s_power_w"], float(row["peak_1s_power_w"]))
            self.assertAlmostEqual(point["avg_power_w"], point["energy_j"] / point["time_s"])
        self.assertEqual(self.frontier.num_stages, 4)
        self.assertEqual(self.frontier.fastest_index, len(points) - 1)
        self.assertEqual(self.frontier.unit_time_s, 0.001)

    def test_plans_are_what_plan_show_prints(self) -> None:
        f = self.frontier
        for i in (0, f.min_energy_index, f.fastest_index):
            plan = f.plan(point=i)
            self.assertEqual(plan.document, json.loads(self.show("--point", str(i))))
            self.assertEqual(plan.to_zeus(), self.show("--point", str(i), "--format", "zeus"))
            self.assertEqual(plan.point, i)
            self.assertEqual(len(plan.stages), 4)
            self.assertEqual(plan.stages[0][0][0], "forward")
        with open(os.path.join(self.dir, "zeus", "fastest.py")) as zeus:
            self.assertEqual(f.plan(slowdown=1).to_zeus(), zeus.read())
        t_min = f.points[f.fastest_index]["time_s"]
        for flags, kwargs in (
            (("--time", "1.1"), {"time_s": 1.1}),
            (("--slowdown", "1.07"), {"slowdown": 1.07}),
            (("--power-per-gpu", "230"), {"power_per_gpu_w": 230}),
            (("--peak-power-per-gpu", "240"), {"peak_power_per_gpu_w": 240}),
        ):
            self.assertEqual(f.plan(**kwargs).document, json.loads(self.show(*flags)), kwargs)
        self.assertEqual(f.index(time_s=t_min), f.fastest_index)
        chosen = f.index(power_per_gpu_w=230)
        self.assertLessEqual(f.points[chosen]["avg_power_per_gpu_w"], 230)
        self.assertGreater(f.points[chosen + 1]["avg_power_per_gpu_w"], 230)

    def test_errors_carry_the_cpp_message(self) -> None:
        f = self.frontier
        with self.assertRaisesRegex(WattcutError, r"no plan is as fast as 0.5 s: the fastest, T_min, takes 1.034 s"):
            f.plan(time_s=0.5)
        with self.assertRaisesRegex(WattcutError, r"is not on the frontier: its points are 0\.\."):
            f.plan(point=len(f))
        with self.assertRaisesRegex(WattcutError, r"no plan draws 1 W per GPU or less on average: the lowest is"):
            f.plan(power_per_gpu_w=1)
        with self.assertRaisesRegex(WattcutError, r"slowdown: expected a factor >= 1 of T_min, got 0.5"):
            f.plan(slowdown=0.5)
        with self.assertRaisesRegex(ValueError, r"give exactly one of point, time_s, slowdown, power_per_gpu_w or peak_power_per_gpu_w"):
            f.plan()
        with self.assertRaisesRegex(ValueError, r"\(got 2: \['point', 'time_s'\]\)"):
            f.plan(point=1, time_s=2)
        with self.assertRaises(TypeError):
            f.plan(point=1.5)
        self.assertIsInstance(WattcutError("x"), RuntimeError)
        self.assertIs(wattcut.WattcutError, WattcutError)

    def test_bad_files_are_refused_with_their_line(self) -> None:
        missing = os.path.join(self.tmp.path, "missing")
        with self.assertRaisesRegex(WattcutError, f"{missing}: no such file or directory"):
            Frontier.load(missing)
        with open(os.path.join(self.dir, "frontier.wattcut")) as f:
            text = f.read()
        cut = os.path.join(self.tmp.path, "cut.wattcut")
        with open(cut, "w") as f:
            f.write(text[: len(text) // 2])
        # Cut in the middle of a line: that line is short of fields, or the next one is missing.
        with self.assertRaisesRegex(WattcutError, r"cut\.wattcut:\d+: (the file ends early; expected a 'p' line|p: )"):
            Frontier.load(cut)
        with open(cut, "w") as f:
            f.write(text[: text.rindex("\np ") + 1])
        with self.assertRaisesRegex(WattcutError, r"cut\.wattcut:\d+: the file ends early; expected a 'p' line"):
            Frontier.load(cut)
        damaged = os.path.join(self.tmp.path, "damaged.wattcut")
        with open(damaged, "w") as f:
            f.write(text.replace("\nstages 4\n", "\nstages four\n"))
        with self.assertRaisesRegex(WattcutError, r"damaged\.wattcut:4: stages: expected an integer in \[1, 1024\]"):
            Frontier.load(damaged)
        # Not a path: a TypeError, as open() gives (str(None) was looked up as a file named "None").
        for not_a_path in (None, 3, b"\xff"):
            with self.assertRaisesRegex(TypeError, r"Frontier.load: expected a path \(str or os.PathLike\), got"):
                Frontier.load(not_a_path)
        # The file itself loads as well as its folder.
        self.assertEqual(len(Frontier.load(os.path.join(self.dir, "frontier.wattcut"))), len(self.frontier))


# Issue 14's two-operation chain, with a device so that it has power per GPU.
CHAIN = {
    "format": "wattcut.dag/v1",
    "unit_time_s": 1,
    "devices": [{"name": "gpu0", "blocking_power_w": 0}],
    "operations": [
        {"name": "A", "device": "gpu0",
         "options": [{"time": 2, "energy": 10, "knob": 1410}, {"time": 1, "energy": 14, "knob": 1980}]},
        {"name": "B", "device": "gpu0",
         "options": [{"time": 3, "energy": 6, "knob": 1410}, {"time": 2, "energy": 9, "knob": 1980}]},
    ],
    "edges": [["A", "B"]],
}


class DagFrontierLoadTest(unittest.TestCase):
    """A generic DAG's frontier (`wattcut frontier --dag`) loads through the same Frontier.load."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = TempDir("dag-frontier")
        dag = os.path.join(cls.tmp.path, "chain.json")
        with open(dag, "w") as f:
            json.dump(CHAIN, f)
        cls.dir = os.path.join(cls.tmp.path, "out")
        run = run_wattcut("frontier", "--dag", dag, "--cost-model", "convex-hull", "--out", cls.dir)
        assert run.returncode == 0, run.stderr
        cls.frontier = Frontier.load(cls.dir)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.remove()

    def test_points_plans_and_lookups(self) -> None:
        f = self.frontier
        self.assertEqual(f.kind, "dag")
        self.assertEqual([(p["time_s"], p["energy_j"]) for p in f.points], [(5, 16), (4, 19), (3, 23)])
        self.assertEqual([p["peak_1s_power_w"] for p in f.points], [5, 5, 14])
        self.assertEqual(f.num_stages, 1)
        plan = f.plan(time_s=4.5)
        self.assertIsInstance(plan, wattcut.DagPlan)
        self.assertEqual((plan.point, plan.knobs, plan.duration_units), (1, {"A": 1410, "B": 1980}, {"A": 2, "B": 2}))
        self.assertEqual(f.plan(power_per_gpu_w=5).point, 1)  # 4.75 W: the fastest at or below 5 W
        self.assertEqual(f.plan(peak_power_per_gpu_w=13).point, 1)
        self.assertEqual(f.plan(point=2).knobs, {"A": 1980, "B": 1980})
        show = run_wattcut("plan", "show", self.dir, "--slowdown", "1")
        self.assertEqual(show.returncode, 0, show.stderr)
        self.assertEqual(json.loads(show.stdout), f.plan(slowdown=1).document)
        with self.assertRaisesRegex(WattcutError, "no Zeus form"):
            plan.to_zeus()
        with self.assertRaisesRegex(WattcutError, "no plan draws 1 W per GPU or less on average: the lowest is 3.2"):
            f.plan(power_per_gpu_w=1)


if __name__ == "__main__":
    unittest.main()
