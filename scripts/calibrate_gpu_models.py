#!/usr/bin/python3
"""Fits wattcut's built-in GPU models to the Perseus (SOSP '24) measured stage profiles.

Reads ../shared/data/perseus-sosp24/stage_profile/<model>+<gpu>_bf16.csv (or the folder given
with --data) and, per GPU, fits

  time ratio   T(f)/T(fmax) = a + (1 - a) * (knee_t / min(f, knee_t)) ** b
  power ratio  P(f)/P(fmax) = p0 + (1 - p0) * (min(f, knee_p) / knee_p) ** g   (P = energy / time)

(flat above a knee: near fmax the measured GPUs run power-capped and gain nothing from the higher
clock) to the relative curves of the distinct (stage, instruction) series: once over both kinds
(the GPU-wide curve) and once per kind. The time curve minimises the worst |log time error|; the
power curve then minimises the worst |log energy error| given that time curve (Nelder-Mead from
a few starts, standard library only). Prints the parameters, the reference
workload at fmax (middle stage = stage 0, last stage = stage S-1) and the worst relative error of
the fitted time and energy per series, as C++ initialisers ready for src/wattcut/profile/gpu_model.cc.

Usage: /usr/bin/python3 scripts/calibrate_gpu_models.py [--data DIR]
"""

import argparse
import csv
import math
import os
import sys

GPUS = [
    # name, file, fmax
    ("a100-sxm", "gpt3-175b+a100_sxm_bf16.csv", 1410),
    ("a40", "bloom+a40_bf16.csv", 1740),
]


def load(path):
    series = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (int(row["stage"]), row["instruction"])
            series.setdefault(key, {})[int(row["frequency"])] = (float(row["time"]), float(row["energy"]))
    return series


def distinct_series(series):
    """Drops series that repeat an earlier one exactly (the middle stages are copies)."""
    seen, out = [], {}
    for key in sorted(series):
        if series[key] in seen:
            continue
        seen.append(series[key])
        out[key] = series[key]
    return out


def nelder_mead(fun, x0, step, iters=4000, tol=1e-14):
    n = len(x0)
    pts = [list(x0)]
    for i in range(n):
        p = list(x0)
        p[i] += step[i]
        pts.append(p)
    vals = [fun(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < tol:
            break
        centroid = [sum(p[i] for p in pts[:-1]) / n for i in range(n)]
        worst = pts[-1]
        refl = [c + (c - w) for c, w in zip(centroid, worst)]
        fr = fun(refl)
        if fr < vals[0]:
            exp = [c + 2 * (c - w) for c, w in zip(centroid, worst)]
            fe = fun(exp)
            pts[-1], vals[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = refl, fr
        else:
            con = [c + 0.5 * (w - c) for c, w in zip(centroid, worst)]
            fc = fun(con)
            if fc < vals[-1]:
                pts[-1], vals[-1] = con, fc
            else:
                best = pts[0]
                pts = [best] + [[b + 0.5 * (p[i] - b) for i, b in enumerate(best)] for p in pts[1:]]
                vals = [vals[0]] + [fun(p) for p in pts[1:]]
    i = min(range(n + 1), key=lambda i: vals[i])
    return pts[i]


def time_ratio(params, f):
    a, b, knee = params
    return a + (1 - a) * (knee / min(f, knee)) ** b


def power_ratio(params, f):
    p0, g, knee = params
    return p0 + (1 - p0) * (min(f, knee) / knee) ** g


def minimax(loss, starts, steps):
    best = None
    for x0 in starts:
        x = nelder_mead(loss, x0, steps)
        x = nelder_mead(loss, x, [s / 10 for s in steps])
        if best is None or loss(x) < loss(best):
            best = x
    return best


def fit(series, fmax, kinds):
    """Time curve, then power curve, each minimising the worst |log error| (of time, then of
    energy = time * power) over every frequency of the series of the given kinds."""
    chosen = [curve for (_, kind), curve in series.items() if kind in kinds]
    t_pts = []
    for curve in chosen:
        t0, e0 = curve[fmax]
        for f, (t, e) in curve.items():
            t_pts.append((f, t / t0, e / e0))
    knees = [[fmax - 30], [fmax - 150], [fmax - 300]]

    def t_loss(p):
        if not (-5 < p[0] < 1 and 0 < p[1] < 10 and 600 < p[2] <= fmax):
            return 1e9
        return max(abs(math.log(time_ratio(p, f) / r)) for f, r, _ in t_pts)

    tp = minimax(t_loss, [[0.5, 1.5] + k for k in knees], [0.2, 0.5, 40])

    def e_loss(p):
        if not (0 <= p[0] < 1 and 0 < p[1] < 20 and 600 < p[2] <= fmax):
            return 1e9
        return max(abs(math.log(time_ratio(tp, f) * power_ratio(p, f) / er)) for f, _, er in t_pts)

    pp = minimax(e_loss, [[0.4, 3.0] + k for k in knees], [0.2, 0.5, 40])
    worst = {}
    for (stage, kind), curve in series.items():
        if kind not in kinds:
            continue
        t0, e0 = curve[fmax]
        wt = max(abs(time_ratio(tp, f) * t0 / t - 1) for f, (t, e) in curve.items())
        we = max(abs(time_ratio(tp, f) * power_ratio(pp, f) * e0 / e - 1) for f, (t, e) in curve.items())
        worst[(stage, kind)] = (wt, we)
    return tp, pp, worst


def curve_init(tp, pp):
    return (f"{{.time_a = {tp[0]:.6f}, .time_b = {tp[1]:.6f}, .time_knee_mhz = {tp[2]:.3f}, "
            f".power_p0 = {pp[0]:.6f}, .power_g = {pp[1]:.6f}, .power_knee_mhz = {pp[2]:.3f}}}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "..", "shared", "data", "perseus-sosp24", "stage_profile")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("WATTCUT_SHARED_DIR") and os.path.join(
        os.environ["WATTCUT_SHARED_DIR"], "data", "perseus-sosp24", "stage_profile") or default)
    args = parser.parse_args()
    for name, file, fmax in GPUS:
        path = os.path.join(args.data, file)
        if not os.path.exists(path):
            sys.exit(f"calibrate_gpu_models: {path} not found (pass --data)")
        all_series = load(path)
        series = distinct_series(all_series)
        last = max(s for s, _ in all_series)
        print(f"// {name}: fitted on {file} ({len(series)} distinct series)")
        for stage in (0, last):
            for kind in ("forward", "backward"):
                t0, e0 = all_series[(stage, kind)][fmax]
                print(f"//   stage {stage} {kind} at {fmax} MHz: time_s={t0!r} power_w={e0 / t0!r}")
        for label, kinds in (("all", ("forward", "backward")), ("forward", ("forward",)),
                             ("backward", ("backward",))):
            tp, pp, worst = fit(series, fmax, kinds)
            print(f"//   curve {label}: {curve_init(tp, pp)}")
            for (stage, kind), (wt, we) in sorted(worst.items()):
                print(f"//     stage {stage} {kind}: worst time error {100 * wt:.2f} %,"
                      f" worst energy error {100 * we:.2f} %")
        print()

if __name__ == "__main__":
    main()
