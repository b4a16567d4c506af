#!/usr/bin/python3
"""The headroom policy against POLCA on workloads it was not developed on (docs/polca.md,
"The validation matrix"): for every cell, the largest added fraction each policy holds (zero brake
events and every SLO met, at it and at every smaller point), from `wattcut polca sweep`.

Cells: the conversation and code traces of ../shared/data/azure-llm-inference-2023, each as
shipped, with prompts scaled x0.5 and x3, and with burstier arrivals (the same requests, each
30 s of the trace regrouped into its first 3 s); seeds 1-3; the A100 and H100 presets; rows of
20, 40 and 80 servers. Every cell is loaded by work (workload.peak_utilization): at the share of a
server's capacity that the preset's default rate gives with the conversation trace, so that a
trace with heavier requests is not simply a saturated row.

    /usr/bin/python3 scripts/polca_validation_matrix.py --wattcut build/src/wattcut/cli/wattcut \
        --out out/matrix [--jobs 2] [--duration 1d] [--seeds 1-3] [--cells SPEC] [--quick]

Writes OUT/traces/ (the variants; --traces-only stops there), OUT/matrix.csv (a row per cell),
OUT/matrix.md (the tables of docs/polca.md) and prints the summary. --seeds takes a range or a list
(1-9, 1,4,7; at most 100); near a policy's limit one seed's day can hold where the next seed's
brakes, so more seeds say how firmly a cell holds: with more than one seed the script also writes
OUT/firmness.csv and prints it, per trace, variant, GPU and row size, the seeds on which the headroom
policy held more than POLCA, as much and less, and an exact two-sided sign test of whether that
split is more uneven than chance makes it. --cells runs only the cells matching one of its
comma-separated specs TRACE:VARIANT:GPU:SERVERS, each field a name or * (conv:prompts-x3:a100:20,
code:*:h100:*): to ask that of a few cells on many seeds. --quick runs the first seed and the
40-server row only. Runs already in OUT/runs are reused, so an interrupted matrix resumes; only with
the same wattcut binary (its SHA-256 is kept in OUT/runs), since another build may answer
differently. Exits 1 when the headroom policy holds less than POLCA in any cell. Standard library only.
"""

import argparse
import concurrent.futures
import csv
import hashlib
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data", "azure-llm-inference-2023")
TRACES = {"conv": "AzureLLMInferenceTrace_conv.csv", "code": "AzureLLMInferenceTrace_code.csv"}
VARIANTS = ["as-shipped", "prompts-x0.5", "prompts-x3", "bursty"]
POLICIES = ["polca", "headroom"]
ADDED = list(range(0, 55, 5))  # per cent
BURST_PERIOD_S = 30
BURST_LENGTH_S = 3
MAX_SEEDS = 100  # three seeds take about 45 minutes on 2 cores
GPUS = ["a100", "h100"]
SIZES = [20, 40, 80]


def parse_time(text):
    """Seconds of the day of an Azure 2023 timestamp 'YYYY-MM-DD HH:MM:SS.fffffff' (one day's hour)."""
    day, clock = text.split(" ")
    h, m, s = clock.split(":")
    return day, int(h) * 3600 + int(m) * 60 + float(s)


def format_time(day, seconds):
    h = int(seconds // 3600)
    m = int(seconds % 3600 // 60)
    s = seconds - h * 3600 - m * 60
    return "%s %02d:%02d:%010.7f" % (day, h, m, s)


def write_variant(source, variant, path):
    """The trace `source` as `variant`, written to `path` in the same format."""
    with open(source, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    out = []
    if variant == "bursty":
        day, t0 = parse_time(body[0][0])
        for ts, context, generated in body:
            _, t = parse_time(ts)
            rel = t - t0
            window = rel // BURST_PERIOD_S * BURST_PERIOD_S
            squeezed = window + (rel - window) * BURST_LENGTH_S / BURST_PERIOD_S
            out.append([format_time(day, t0 + squeezed), context, generated])
        out.sort(key=lambda r: r[0])  # regrouping keeps the order; sorting guards equal stamps
    else:
        scale = {"as-shipped": 1.0, "prompts-x0.5": 0.5, "prompts-x3": 3.0}[variant]
        out = [[ts, str(max(1, round(int(context) * scale))), generated] for ts, context, generated in body]
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(out)
    os.replace(tmp, path)


def run_point(wattcut, trace, config, seed, added, policies, duration, out):
    """One sweep point; returns {policy: (brake_events, meets_slos, row)}."""
    summary = os.path.join(out, "sweep.csv")
    if not os.path.exists(summary):
        cmd = [wattcut, "polca", "sweep", "--config", config, "--trace", trace, "--seed", str(seed),
               "--added", str(added), "--policy", ",".join(policies), "--duration", duration, "--jobs", "1",
               "--out", out, "--overwrite"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), r.stderr))
    result = {}
    with open(summary, newline="") as f:
        for row in csv.DictReader(f):
            result[row["policy"]] = (int(row["brake_events"]), row["meets_slos"] == "true", row)
    return result


def run_cell(args, cell):
    trace_name, variant, preset, servers, seed = cell
    key = "%s_%s_%s_%d_s%d" % (trace_name, variant, preset, servers, seed)
    config = os.path.join(args.out, "configs", "%s_%d.conf" % (preset, servers))
    trace = os.path.join(args.out, "traces", "%s_%s.csv" % (trace_name, variant))
    held = {p: None for p in POLICIES}
    active = list(POLICIES)
    points = {}
    for added in ADDED:
        if not active:
            break
        out = os.path.join(args.out, "runs", key, "added_%02d_%s" % (added, "_".join(active)))
        result = run_point(args.wattcut, trace, config, seed, "%d%%" % added, active, args.duration, out)
        for p in list(active):
            brakes, meets, row = result[p]
            points.setdefault(p, []).append((added, brakes, meets, row))
            if brakes == 0 and meets:
                held[p] = added
            else:
                active.remove(p)
    return key, cell, held, points


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wattcut", default=os.path.join(HERE, "..", "build", "src", "wattcut", "cli", "wattcut"))
    parser.add_argument("--data", default=DATA)
    parser.add_argument("--out", required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--duration", default="1d")
    parser.add_argument("--seeds", type=parse_seeds, default=[1, 2, 3],
                        help="seeds of the arrival expansion: a range or a list, 1-3 (default), 1-9, 1,4,7; "
                             "at most %d" % MAX_SEEDS)
    parser.add_argument("--cells", type=parse_cells, default=None,
                        help="only the cells matching one of these comma-separated TRACE:VARIANT:GPU:SERVERS specs, "
                             "each field a name or * (conv:prompts-x3:a100:20,code:*:h100:*)")
    parser.add_argument("--quick", action="store_true", help="the first seed and the 40-server row only")
    parser.add_argument("--traces-only", action="store_true", help="write the trace variants to OUT/traces and stop")
    args = parser.parse_args()
    for sub in ("traces", "configs", "runs"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    # Runs are reused only with the binary that made them: another one may answer differently.
    with open(args.wattcut, "rb") as f:
        binary = hashlib.sha256(f.read()).hexdigest()
    stamp = os.path.join(args.out, "runs", "wattcut.sha256")
    if os.path.exists(stamp):
        with open(stamp) as f:
            if f.read().strip() != binary:
                sys.exit("%s: its runs were made by another wattcut binary than %s; give another --out, or remove "
                         "%s to run the matrix again" % (args.out, args.wattcut, os.path.join(args.out, "runs")))
    else:
        with open(stamp, "w") as f:
            f.write(binary + "\n")

    # The load: the share of capacity that each preset's default rate gives with the conversation
    # trace, read from the load line `polca simulate` prints (the first thing it prints).
    conv = os.path.join(args.data, TRACES["conv"])
    for name, source in TRACES.items():
        for variant in VARIANTS:
            path = os.path.join(args.out, "traces", "%s_%s.csv" % (name, variant))
            if not os.path.exists(path):
                write_variant(os.path.join(args.data, source), variant, path)
    if args.traces_only:
        print("wrote %d traces to %s" % (len(TRACES) * len(VARIANTS), os.path.join(args.out, "traces")))
        return 0
    seeds = args.seeds[:1] if args.quick else args.seeds
    sizes = [40] if args.quick else SIZES
    # The first seed on 40 servers first in every trace, variant and GPU, then the other sizes, then
    # the other seeds: a matrix stopped early has covered every workload.
    cells = sorted(((t, v, p, n, s) for t in TRACES for v in VARIANTS for p in GPUS for n in sizes
                    for s in seeds if selected(args.cells, (t, v, p, n))),
                   key=lambda c: (c[4] != seeds[0], c[3] != 40, seeds.index(c[4]), c[3]))
    if not cells:
        sys.exit("--cells: no cell of the matrix matches (rows of %s servers%s)"
                 % (", ".join(str(n) for n in sizes), " with --quick" if args.quick else ""))
    for preset in [g for g in GPUS if any(c[2] == g for c in cells)]:  # those --cells left
        r = subprocess.run([args.wattcut, "polca", "simulate", "--gpu", preset, "--trace", conv, "--duration", "1s",
                            "--policy", "none", "--out", os.path.join(args.out, "load_" + preset), "--overwrite"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("load of %s: %s" % (preset, r.stderr))
        with open(os.path.join(args.out, "load_" + preset, "summary.json")) as f:
            utilization = json.load(f)["load"]["peak_utilization"]
        for servers in sizes:
            with open(os.path.join(args.out, "configs", "%s_%d.conf" % (preset, servers)), "w") as f:
                f.write("base = %s\nrow.baseline_servers = %d\nworkload.peak_utilization = %.6f\n"
                        % (preset, servers, utilization))
        print("%s: every cell at %.1f %% of a server's capacity at the peak" % (preset, 100 * utilization))

    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for key, cell, held, points in pool.map(lambda c: run_cell(args, c), cells):
            results.append((cell, held, points))
            print("%-40s polca %4s  headroom %4s" % (key, fmt(held["polca"]), fmt(held["headroom"])), flush=True)

    with open(os.path.join(args.out, "matrix.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["trace", "variant", "gpu", "servers", "seed", "polca_held", "headroom_held"])
        for (t, v, p, n, s), held, _ in results:
            w.writerow([t, v, p, n, s, fmt_csv(held["polca"]), fmt_csv(held["headroom"])])
    sizes = [n for n in sizes if any(c[3] == n for c in cells)]  # those --cells left
    md = matrix_markdown(results, seeds, sizes)
    with open(os.path.join(args.out, "matrix.md"), "w") as f:
        f.write(md)
    with open(os.path.join(args.out, "matrix.svg"), "w") as f:
        f.write(matrix_svg(results, seeds, sizes))
    print(md)
    if len(seeds) > 1:
        table = firmness(results)
        with open(os.path.join(args.out, "firmness.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["trace", "variant", "gpu", "servers", "seeds", "headroom_more", "equal", "headroom_less",
                        "headroom_mean_held", "polca_mean_held", "sign_test_p"])
            for row in table:
                w.writerow(row[:8] + ["%.2f" % row[8], "%.2f" % row[9], "%.4f" % row[10]])
        print(firmness_text(table))
    worse = [c for c, held, _ in results if rank(held["headroom"]) < rank(held["polca"])]
    print("cells: %d; headroom holds less than polca in %d" % (len(results), len(worse)))
    for c in worse:
        print("  worse:", c)
    return 1 if worse else 0


def parse_seeds(text):
    """'1-9' or '1,4,7' (or a mix, '1-3,7') as a list of distinct seeds in the order given; seeds are
    whole numbers from 1."""
    seeds = []
    for part in text.split(","):
        bounds = part.strip().split("-")
        try:
            low, high = int(bounds[0]), int(bounds[-1])
            if len(bounds) > 2 or low > high:
                raise ValueError
        except ValueError:
            raise argparse.ArgumentTypeError("seeds: '%s' is not a seed or a range FROM-TO (expected e.g. 1-9 or "
                                             "1,4,7)" % part.strip())
        if high - low + 1 > MAX_SEEDS:  # counted before it is listed: 1-100000000 is a typo, not a list
            raise argparse.ArgumentTypeError("seeds: %s is %d seeds, more than %d (a matrix of %d seeds is about %d "
                                             "hours on 2 cores)"
                                             % (part.strip(), high - low + 1, MAX_SEEDS, MAX_SEEDS, MAX_SEEDS // 4))
        for n in range(low, high + 1):
            if n < 1:
                raise argparse.ArgumentTypeError("seeds: %d is not a seed (expected whole numbers from 1)" % n)
            if n not in seeds:
                seeds.append(n)
    if len(seeds) > MAX_SEEDS:
        raise argparse.ArgumentTypeError("seeds: %d seeds, more than %d" % (len(seeds), MAX_SEEDS))
    return seeds


def parse_cells(text):
    """'conv:prompts-x3:a100:20,code:*:h100:*' as a list of (trace, variant, gpu, servers) specs, each
    field a name or None for '*'."""
    known = (list(TRACES), VARIANTS, GPUS, [str(n) for n in SIZES])
    names = ("trace", "variant", "GPU", "servers")
    specs = []
    for part in text.split(","):
        fields = part.strip().split(":")
        if len(fields) != 4:
            raise argparse.ArgumentTypeError("cells: '%s' is not TRACE:VARIANT:GPU:SERVERS (expected e.g. "
                                             "conv:prompts-x3:a100:20 or code:*:h100:*)" % part.strip())
        spec = []
        for field, choices, name in zip(fields, known, names):
            if field == "*":
                spec.append(None)
            elif field in choices:
                spec.append(int(field) if name == "servers" else field)
            else:
                raise argparse.ArgumentTypeError("cells: %s '%s' in '%s' is not one of the matrix's (expected * or "
                                                 "one of %s)" % (name, field, part.strip(), ", ".join(choices)))
        specs.append(tuple(spec))
    return specs


def selected(specs, cell):
    """Whether `cell` (trace, variant, gpu, servers) matches one of `specs` (all cells when None)."""
    return specs is None or any(all(f is None or f == c for f, c in zip(spec, cell)) for spec in specs)


def sign_test_p(less, more):
    """Exact two-sided sign test: the chance, were each seed equally likely to favour either policy,
    of a split between the seeds that differ at least as uneven as `less` against `more` (ties left
    out). 1 when no seed differs."""
    n = less + more
    if n == 0:
        return 1.0
    k = min(less, more)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return min(1.0, 2 * tail)


def firmness(results):
    """Per (trace, variant, gpu, servers), over its seeds: [trace, variant, gpu, servers, seeds,
    headroom more, equal, headroom less, headroom's mean held, POLCA's mean held, sign test p]. A policy
    that holds not even +0 % counts as holding -5 % in the means."""
    by = {}
    for (t, v, p, n, s), held, _ in results:
        by.setdefault((t, v, p, n), []).append(held)
    table = []
    for t in TRACES:
        for v in VARIANTS:
            for p in GPUS:
                for n in SIZES:
                    helds = by.get((t, v, p, n))
                    if not helds:
                        continue
                    diffs = [rank(h["headroom"]) - rank(h["polca"]) for h in helds]
                    more = sum(d > 0 for d in diffs)
                    less = sum(d < 0 for d in diffs)
                    table.append([t, v, p, n, len(helds), more, len(helds) - more - less, less,
                                  sum(rank(h["headroom"]) for h in helds) / len(helds),
                                  sum(rank(h["polca"]) for h in helds) / len(helds), sign_test_p(less, more)])
    return table


def firmness_text(table):
    lines = ["| trace, variant, GPU, servers | seeds | headroom holds more / as much / less | mean held, "
             "headroom / POLCA | sign test p |", "|---|---|---|---|---|"]
    for t, v, p, n, seeds, more, equal, less, mean_h, mean_p, p_value in table:
        lines.append("| %s, %s, %s, %d | %d | %d / %d / %d | %+.1f / %+.1f %% | %.3g |"
                     % (t, v, p.upper(), n, seeds, more, equal, less, mean_h, mean_p, p_value))
    return "\n".join(lines) + "\n"


def rank(held):
    return -5 if held is None else held


def fmt(held):
    return "none" if held is None else "+%d%%" % held


def fmt_csv(held):
    return "" if held is None else str(held)


def matrix_markdown(results, seeds, sizes):
    """One table per GPU: a row per trace and variant, a column per row size; each cell lists the
    seeds' held fractions as headroom / polca. GPUs, traces and variants with no cell run are left out."""
    by = {}
    for (t, v, p, n, s), held, _ in results:
        by[(t, v, p, n, s)] = held
    run = {(t, v, p) for (t, v, p, _, _) in by}
    lines = []
    for preset in GPUS:
        if not any(p == preset for (_, _, p) in run):
            continue
        lines.append("| %s: trace, variant | %s |" % (preset.upper(), " | ".join("%d servers" % n for n in sizes)))
        lines.append("|---|%s" % ("---|" * len(sizes)))
        for t in TRACES:
            for v in VARIANTS:
                if (t, v, preset) not in run:
                    continue
                cells = []
                for n in sizes:
                    parts = []
                    for s in seeds:
                        held = by.get((t, v, preset, n, s))
                        if held is None:
                            parts.append("-")
                            continue
                        parts.append("%s / %s" % (short(held["headroom"]), short(held["polca"])))
                    cells.append(", ".join(parts))
                lines.append("| %s, %s | %s |" % (t, v, " | ".join(cells)))
        lines.append("")
    return "\n".join(lines)


def matrix_svg(results, seeds, sizes):
    """The matrix as a picture: per GPU, a row per trace and variant, a column per row size and
    seed; each cell reads headroom / polca and is coloured by what headroom holds beyond POLCA."""
    by = {cell: held for cell, held, _ in results}
    rows = [(t, v) for t in TRACES for v in VARIANTS if any(c[:2] == (t, v) for c in by)]
    gpus = [g for g in GPUS if any(c[2] == g for c in by)]
    cols = [(n, s) for n in sizes for s in seeds]
    cw, ch, left, top, gap = 62, 22, 170, 44, 34
    block_h = top + ch * len(rows) + gap
    width = max(left + cw * len(cols) + 20, 900)
    height = len(gpus) * block_h + 40
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="DejaVu Sans, sans-serif" '
           'font-size="11">' % (width, height),
           '<rect width="100%%" height="100%%" fill="white"/>']
    def colour(gain):
        if gain is None:
            return "#eeeeee"
        if gain < 0:
            return "#e06666"
        return ["#f3f3f3", "#d9ead3", "#b6d7a8", "#93c47d", "#6aa84f"][min(4, gain // 5)]
    for b, preset in enumerate(gpus):
        y0 = b * block_h + 20
        out.append('<text x="10" y="%d" font-size="13" font-weight="bold">%s: added servers held, headroom / polca '
                   '(%% of the provisioned row)</text>' % (y0, preset.upper()))
        for j, (n, s) in enumerate(cols):
            out.append('<text x="%d" y="%d" text-anchor="middle">%d, seed %d</text>'
                       % (left + cw * j + cw // 2, y0 + top - 8, n, s))
        for i, (t, v) in enumerate(rows):
            y = y0 + top + ch * i
            out.append('<text x="10" y="%d">%s, %s</text>' % (y + 15, t, v))
            for j, (n, s) in enumerate(cols):
                held = by.get((t, v, preset, n, s))
                gain = None if held is None else rank(held["headroom"]) - rank(held["polca"])
                out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="white"/>'
                           % (left + cw * j, y, cw, ch, colour(gain)))
                label = "" if held is None else "%s / %s" % (short(held["headroom"]), short(held["polca"]))
                out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (left + cw * j + cw // 2, y + 15, label))
    out.append('<text x="10" y="%d">colour: what headroom holds beyond POLCA (grey: the same, green: 5 to 20 points '
               'more, red: less); "-": holds no point, not even +0 %%; 50: the sweep\'s end</text>' % (height - 12))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def short(held):
    return "-" if held is None else "%d" % held


if __name__ == "__main__":
    sys.exit(main())
