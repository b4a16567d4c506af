"""A computed frontier: every plan of a `wattcut frontier --out DIR` run, from DIR/frontier.wattcut.

    frontier = wattcut.Frontier.load("out/gpt3")
    frontier.points[0]["avg_power_per_gpu_w"]
    plan = frontier.plan(slowdown=1.05)       # or point=, time_s=, power_per_gpu_w=, peak_power_per_gpu_w=
    plan.stages[0][0]                         # ("forward", 0, 1410, 50): instruction, microbatch, MHz, units
    plan.to_zeus()                            # the Zeus PointSolution literal

A generic DAG's frontier (`wattcut frontier --dag FILE --out DIR`) loads the same way; its plans
are DagPlan objects, every operation's knob by name (`plan.knobs["F0"]`), with the same lookups.

The lookups are the CLI's and the server's (`wattcut plan show`, docs/planner.md): `time_s` the
least-energy plan no slower than T, `slowdown` the same at K x T_min, `power_per_gpu_w` the
fastest plan whose average power per GPU is at most W, `peak_power_per_gpu_w` the same with the
peak 1-s power. A bad file or lookup raises
wattcut.WattcutError with the C++ message (the file's line and field, T_min, the lowest power).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple, Union

from wattcut import _wattcut

WattcutError = _wattcut.WattcutError


class Plan:
    """One frequency plan: the `wattcut.frequency_plan/v1` document as attributes."""

    def __init__(self, document: Dict[str, Any], zeus: str) -> None:
        self.document = document
        self.point: int = document["point"]
        self.time_s: float = document["time_s"]
        self.energy_j: float = document["energy_j"]
        self.unit_time_s: float = document["unit_time_s"]
        # Per stage, the computations in execution order as tuples
        # (instruction, microbatch, freq_mhz, duration_units[, chunk]).
        self.stages: List[List[Tuple[Any, ...]]] = [[tuple(c) for c in stage] for stage in document["stages"]]
        self._zeus = zeus

    def to_json(self) -> str:
        """The plan as plans/NNNNN.json holds it."""
        return json.dumps(self.document)

    def to_zeus(self) -> str:
        """The Python literal Zeus's PointSolution reads."""
        return self._zeus

    def __repr__(self) -> str:
        return f"Plan(point={self.point}, time_s={self.time_s}, energy_j={self.energy_j})"


class DagPlan:
    """One plan of a generic DAG's frontier: the `wattcut.dag_plan/v1` document as attributes."""

    def __init__(self, document: Dict[str, Any]) -> None:
        self.document = document
        self.point: int = document["point"]
        self.time_s: float = document["time_s"]
        self.energy_j: float = document["energy_j"]
        self.unit_time_s: float = document["unit_time_s"]
        # Every operation's knob and planned duration (unit times), by its name in the DAG file.
        self.knobs: Dict[str, int] = document["knobs"]
        self.duration_units: Dict[str, int] = document["duration_units"]

    def to_json(self) -> str:
        """The plan as `wattcut plan show` prints it."""
        return json.dumps(self.document)

    def to_zeus(self) -> str:
        raise WattcutError("a generic DAG's plan has no Zeus form (Zeus plans pipelines)")

    def __repr__(self) -> str:
        return f"DagPlan(point={self.point}, time_s={self.time_s}, energy_j={self.energy_j})"


class Frontier:
    """Every plan of a frontier; load with Frontier.load(DIR)."""

    def __init__(self, native: Any) -> None:
        self._native = native
        self.kind: str = "dag" if isinstance(native, _wattcut.DagFrontier) else "pipeline"
        """'pipeline' (`wattcut frontier`) or 'dag' (`wattcut frontier --dag`)."""
        self.points: List[Dict[str, Any]] = native.points()
        """Per point, slowest first: plan, time_s, energy_j, duration_units, effective_energy_j,
        avg_power_w, avg_power_per_gpu_w (None for a DAG without devices) and peak_1s_power_w (None in
        files written without it)."""

    @classmethod
    def load(cls, path: str) -> "Frontier":
        """Reads a `wattcut frontier --out` folder (its frontier.wattcut) or the file itself, a
        pipeline's or a generic DAG's. `path` is a str or an os.PathLike (TypeError otherwise:
        str(None) would be looked up as a file named "None")."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"Frontier.load: expected a path (str or os.PathLike), got {type(path).__name__}")
        path = os.fspath(path)
        if _wattcut.frontier_kind(str(path)) == "dag":
            return cls(_wattcut.DagFrontier.load(str(path)))
        return cls(_wattcut.Frontier.load(str(path)))

    @property
    def num_stages(self) -> int:
        """A pipeline's stages (one GPU each); a DAG's devices."""
        return self._native.num_devices if self.kind == "dag" else self._native.num_stages

    @property
    def unit_time_s(self) -> float:
        return self._native.unit_time_s

    @property
    def fastest_index(self) -> int:
        """The T_min point: the last."""
        return self._native.fastest_index

    @property
    def min_energy_index(self) -> int:
        """The T* point: the least energy."""
        return self._native.min_energy_index

    def __len__(self) -> int:
        return len(self.points)

    def index(
        self,
        point: Optional[int] = None,
        time_s: Optional[float] = None,
        slowdown: Optional[float] = None,
        power_per_gpu_w: Optional[float] = None,
        peak_power_per_gpu_w: Optional[float] = None,
    ) -> int:
        """The index of the plan plan() returns for the same lookup."""
        asked = (
            ("point", point),
            ("time_s", time_s),
            ("slowdown", slowdown),
            ("power_per_gpu_w", power_per_gpu_w),
            ("peak_power_per_gpu_w", peak_power_per_gpu_w),
        )
        given = {k: v for k, v in asked if v is not None}
        if len(given) != 1:
            raise ValueError(
                "give exactly one of point, time_s, slowdown, power_per_gpu_w or peak_power_per_gpu_w "
                f"(got {len(given)}: {sorted(given)})"
            )
        (kind, value), = given.items()
        if kind == "point" and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"point: expected an int, got {value!r}")
        return self._native.look_up(kind, float(value))

    def plan(
        self,
        point: Optional[int] = None,
        time_s: Optional[float] = None,
        slowdown: Optional[float] = None,
        power_per_gpu_w: Optional[float] = None,
        peak_power_per_gpu_w: Optional[float] = None,
    ) -> Union[Plan, DagPlan]:
        """One plan (a DagPlan for a DAG's frontier), by exactly one of: its index, the iteration time it must not exceed, a
        slowdown factor (>= 1) against T_min, or the average or peak 1-s power per GPU it must
        not exceed (the fastest plan that fits)."""
        i = self.index(
            point=point,
            time_s=time_s,
            slowdown=slowdown,
            power_per_gpu_w=power_per_gpu_w,
            peak_power_per_gpu_w=peak_power_per_gpu_w,
        )
        if self.kind == "dag":
            return DagPlan(json.loads(self._native.plan_json(i)))
        return Plan(json.loads(self._native.plan_json(i)), self._native.zeus_literal(i))

    def __repr__(self) -> str:
        if self.kind == "dag":
            return f"Frontier({len(self.points)} points, a DAG of {self._native.num_operations} operations)"
        return f"Frontier({len(self.points)} points, {self.num_stages} stages)"
