#!/usr/bin/python3
"""Every picture in docs/images, made from the code by the commands the docs show (issue 54).

    /usr/bin/python3 scripts/docs_images.py make [--skip-slow] [--only NAME ...]   # make docs-images
    /usr/bin/python3 scripts/docs_images.py check                                  # ctest docs_images
    /usr/bin/python3 scripts/docs_images.py list

`make` runs each run of RUNS below in a scratch folder laid out as a clone with ../shared beside it
(`wattcut` the built CLI), and copies the files it writes into docs/images. The slow runs (the
POLCA sweeps and the validation matrix: about an hour on 2 cores in all) are skipped with
--skip-slow. `check` makes every other run the same way and compares what it makes with the
committed picture: an SVG as its text (the same code draws the same document), the status page's
screenshot by what the page shows (its visible text, with the run's clock and timing masked, kept
beside the PNG as status_page.txt), since a browser's pixels differ between machines. For a slow
run it makes a quick sketch (the same commands over an hour of simulated time) and compares what
its pictures draw, numbers aside (sketch_of): the data of those pictures is the slow runs' alone,
but a change to how they are drawn is caught. It also fails when docs/images holds a picture no run
makes. Standard library only.

Options: --build DIR (default build), --shared DIR (default ../shared, or $WATTCUT_SHARED_DIR)."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import re
import shutil
import subprocess
import sys
from xml.etree import ElementTree

from scratch_clone import scratch_clone

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
IMAGES = os.path.join(SOURCE, "docs", "images")
GPT3 = "../shared/data/perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv"
CONV = "../shared/data/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv"
EMULATE = f"wattcut emulate --profile {GPT3} --stages 8 --pipelines 16 --tp 8 --p2p-power 83.64 --slowdown 1.0:1.5:0.01"


@dataclasses.dataclass
class Run:
    name: str
    commands: list[str]  # shell lines, run in order from the scratch clone's root
    pictures: dict[str, str]  # file the commands write -> its picture under docs/images
    slow: bool = False  # minutes or more: `check` runs `sketch` instead
    where: str = ""  # the doc that shows the commands
    # A slow run's quick stand-in for `check` (the same outputs from a short simulation): its
    # pictures are compared with the committed ones by what they draw, numbers aside (sketch_of).
    sketch: list[str] = dataclasses.field(default_factory=list)
    # The committed picture may draw what the sketch's short run does not reach (the matrix's
    # colours of outcomes); the sketch may never draw what the committed picture lacks.
    sketch_may_miss: bool = False


RUNS = [
    Run("schedules", [f"wattcut schedule --schedule {s} --stages 4 --microbatches 8 --svg out/{s}.svg"
                      + (" --virtual-stages 2" if s == "interleaved" else "")
                      for s in ("1f1b", "gpipe", "interleaved", "zb-h1")],
        {f"out/{s}.svg": f"schedules/{s}.svg" for s in ("1f1b", "gpipe", "interleaved", "zb-h1")},
        where="docs/planner.md"),
    Run("emulate-m96", [f"{EMULATE} --microbatches 96 --out out/emu"],
        {"out/emu/frontier.svg": "emulate/gpt3-a100-m96-frontier.svg",
         "out/emu/savings.svg": "emulate/gpt3-a100-m96-savings.svg"}, where="README.md"),
    Run("emulate-m12", [f"{EMULATE} --microbatches 12 --out out/emu-m12"],
        {"out/emu-m12/timeline_fastest.svg": "emulate/gpt3-a100-m12-timeline-fastest.svg",
         "out/emu-m12/timeline_min_energy.svg": "emulate/gpt3-a100-m12-timeline-min-energy.svg"}, where="README.md"),
    Run("power-sweep", [f"wattcut emulate --profile {GPT3} --stages 8 --microbatches 96 --p2p-power 83.64 "
                        "--power-sweep --out out/power-sweep"],
        {"out/power-sweep/power_sweep.svg": "power_sweep_gpt3_a100.svg"}, where="README.md"),
    Run("deadline", [
        f"wattcut frontier --profile {GPT3} --stages 8 --microbatches 12 --p2p-power 83.64 --out gpt3",
        "python3 -c 'import math, datetime as d\nt = d.datetime(2026, 12, 7, tzinfo=d.timezone.utc)\n"
        "print(\"time,price\")\nfor h in range(8 * 24):\n    print(f\"{t + d.timedelta(hours=h):%Y-%m-%dT%H:%MZ},"
        "{0.1 * (2 - math.cos(2 * math.pi * (h % 24 - 3) / 24)):.4f}\")' > prices.csv",
        "wattcut plan schedule gpt3 --iterations 214620 --start 2026-12-07T00:00Z --deadline 2026-12-14T16:48Z "
        "--price prices.csv --pipelines 4 --out week"],
        {"week/schedule_power.svg": "deadline/schedule_power.svg",
         "week/schedule_progress.svg": "deadline/schedule_progress.svg"}, where="docs/deadline.md"),
    Run("calibration", [
        f"wattcut polca synthesize --config docs/examples/polca-calibration-truth.conf --trace {CONV} "
        "--utc-offset +02:00 --out example/data",
        "wattcut polca calibrate --power example/data/nvidia-smi/node-a.csv --load example/data/vllm/node-a.csv "
        "--gpu a100 --utc-offset +02:00 --out example/cal"],
        {"example/cal/calibration_power.svg": "polca/calibration_power.svg",
         "example/cal/calibration_error.svg": "polca/calibration_error.svg"}, where="docs/polca.md"),
    Run("polca-52", [f"wattcut polca simulate --trace {CONV} --servers 40 --added 30% --policy polca --duration 7d "
                     "--out out/polca-52"],
        {"out/polca-52/row_power.svg": "polca/row_power_polca_52.svg",
         "out/polca-52/power_cdf.svg": "polca/power_cdf_polca_52.svg"}, where="README.md"),
    Run("headroom-52", [f"wattcut polca simulate --trace {CONV} --added 30% --policy headroom --duration 7d "
                        "--out out/headroom-52"],
        {"out/headroom-52/row_power.svg": "polca/row_power_headroom_52.svg"}, where="docs/polca.md"),
    Run("status-page", ["/usr/bin/python3 tests/server/status_page_browser_test.py --wattcut \"$(command -v wattcut)\" "
                        f"--profile {GPT3} --save-screenshot out/status_page.png --save-text out/status_page.txt"],
        {"out/status_page.png": "status_page.png", "out/status_page.txt": "status_page.txt"}, where="docs/server.md"),
    Run("sweep", [f"wattcut polca sweep --trace {CONV} --added 0:50:5 "
                  "--policy polca,headroom,brake-only,uniform-cap,power-cap --duration 7d --out out/polca-sweep"],
        {f"out/polca-sweep/sweep_{k}.svg": f"polca/sweep_{k}.svg"
         for k in ("brakes", "latency_low", "latency_high", "energy")}, slow=True, where="README.md",
        sketch=[f"wattcut polca sweep --trace {CONV} --added 0:50:25 "
                "--policy polca,headroom,brake-only,uniform-cap,power-cap --duration 1h --out out/polca-sweep"]),
    Run("sweep-t85", [f"wattcut polca sweep --config configs/polca/a100-t85-out-of-band.conf --trace {CONV} "
                      "--added 15:35:5 --policy polca --duration 7d --out out/polca-t85"],
        {"out/polca-t85/sweep_latency_low.svg": "polca/sweep_latency_low_t85.svg"}, slow=True, where="README.md",
        sketch=[f"wattcut polca sweep --config configs/polca/a100-t85-out-of-band.conf --trace {CONV} "
                "--added 15:35:20 --policy polca --duration 1h --out out/polca-t85"]),
    Run("training-row", [f"wattcut polca sweep --trace {CONV} --added 0:50:5 --policy polca --duration 7d "
                         f"--training-share 25% --training-profile {GPT3} --out out/training-row"],
        {"out/training-row/sweep_training.svg": "polca/training_row_throughput.svg",
         "out/training-row/sweep_brakes.svg": "polca/training_row_brakes.svg"}, slow=True,
        where="docs/power-capped-training.md",
        sketch=[f"wattcut polca sweep --trace {CONV} --added 0:50:50 --policy polca --duration 1h "
                f"--training-share 25% --training-profile {GPT3} --out out/training-row"]),
    Run("validation-matrix", ["/usr/bin/python3 scripts/polca_validation_matrix.py --wattcut \"$(command -v wattcut)\" "
                              "--data ../shared/data/azure-llm-inference-2023 --out out/matrix --jobs 2 || "
                              "test -f out/matrix/matrix.svg"],
        {"out/matrix/matrix.svg": "polca/validation_matrix.svg"}, slow=True, where="docs/polca.md",
        sketch=["/usr/bin/python3 scripts/polca_validation_matrix.py --wattcut \"$(command -v wattcut)\" "
                "--data ../shared/data/azure-llm-inference-2023 --out out/matrix --jobs 2 --quick --duration 1h || "
                "test -f out/matrix/matrix.svg"], sketch_may_miss=True),
]
# The status page's text, beside its screenshot: what the check compares.
COMPARED_AS_TEXT = {"status_page.png": "status_page.txt"}


class Failure(Exception):
    pass


def clone_and_environment(build: str, shared: str) -> tuple[str, dict[str, str]]:
    """A scratch clone (scratch_clone.py) and the environment its commands run in."""
    root = scratch_clone(SOURCE, build, shared, "wattcut-docs-images-")
    env = dict(os.environ, PATH=os.path.join(os.path.abspath(build), "src", "wattcut", "cli") + ":" + os.environ["PATH"],
               LANG="C.UTF-8", TMPDIR=os.path.join(root, "tmp"))
    return os.path.join(root, "repo"), env


def make_run(run: Run, repo: str, env: dict[str, str], sketch: bool = False) -> None:
    os.makedirs(os.path.join(repo, "out"), exist_ok=True)
    for command in run.sketch if sketch else run.commands:
        result = subprocess.run(["bash", "-c", command], cwd=repo, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            raise Failure(f"{run.name}: `{command}` exited with {result.returncode}:\n{result.stdout[-3000:]}")
    for made in run.pictures:
        if not os.path.isfile(os.path.join(repo, made)):
            raise Failure(f"{run.name}: the commands did not write {made}")


def committed_pictures() -> set[str]:
    found = set()
    for folder, _, files in os.walk(IMAGES):
        for name in files:
            found.add(os.path.relpath(os.path.join(folder, name), IMAGES))
    return found


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


# Runs of numbers, not the digits of a colour (#2ca02c) or of a name (P50).
NUMBERS = re.compile(r"(?<![#\w.])-?\d[\d.eE+-]*(?:[\s,]+-?\d[\d.eE+-]*)*")


def sketch_of(svg_text: str) -> set[tuple]:
    """What an SVG draws, numbers aside: each element's tag, attributes and text with every run of
    numbers (coordinates, a polyline's points, tick values) as '#'. Two runs of one chart over
    different data draw the same set; a change to how it is drawn (a label's halo, a colour, a
    legend entry, a wording) does not."""
    drawn = set()
    for element in ElementTree.fromstring(svg_text).iter():
        attributes = tuple(sorted((k, NUMBERS.sub("#", v)) for k, v in element.attrib.items()))
        drawn.add((element.tag.split("}")[-1], attributes, NUMBERS.sub("#", (element.text or "").strip())))
    return drawn


def compare(run: Run, repo: str, sketch: bool = False) -> list[str]:
    """What differs between the run's files and the committed pictures (by sketch_of for a sketch)."""
    problems = []
    for made, picture in run.pictures.items():
        if picture in COMPARED_AS_TEXT:
            continue  # compared through its text file, which the same run writes
        committed = os.path.join(IMAGES, picture)
        if not os.path.isfile(committed):
            problems.append(f"docs/images/{picture}: not committed; `make docs-images` makes it")
            continue
        new, old = read(os.path.join(repo, made)), read(committed)
        if sketch:
            drawn, shown = sketch_of(new), sketch_of(old)
            extra, missing = drawn - shown, set() if run.sketch_may_miss else shown - drawn
            if extra or missing:
                problems.append(f"docs/images/{picture} is stale (run `make docs-images`): it draws "
                                f"{len(missing)} kinds of element the code no longer draws, first "
                                f"{sorted(missing)[:2]}, and lacks {len(extra)} it draws now, first {sorted(extra)[:2]}")
            continue
        if new != old:
            diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), "committed", "made now", lineterm="", n=0))
            problems.append(f"docs/images/{picture} is stale (run `make docs-images`): {len(diff)} lines differ, "
                            f"first:\n" + "\n".join(line[:200] for line in diff[:8]))
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["make", "check", "list"])
    parser.add_argument("--build", default=os.path.join(SOURCE, "build"))
    parser.add_argument("--shared", default=os.environ.get("WATTCUT_SHARED_DIR") or os.path.join(SOURCE, "..", "shared"))
    parser.add_argument("--skip-slow", action="store_true")
    parser.add_argument("--only", action="append", default=[], help="a run's name (list shows them)")
    args = parser.parse_args()
    if args.action == "list":
        for run in RUNS:
            print(f"{run.name}{' (slow)' if run.slow else ''}, {run.where}: {', '.join(run.pictures.values())}")
        return 0
    unknown = set(args.only) - {run.name for run in RUNS}
    if unknown:
        parser.error(f"no run named {', '.join(sorted(unknown))} (list shows them)")
    if not os.path.isdir(os.path.join(args.shared, "data")):
        message = f"{args.shared}/data is missing: the pictures are made from the authors' data there"
        if os.environ.get("CI") == "true" or args.action == "make":
            print(message, file=sys.stderr)
            return 1
        print("skipped: " + message)
        return 77
    problems = []
    if args.action == "check":
        made_by_runs = {p for run in RUNS for p in run.pictures.values()}
        for extra in sorted(committed_pictures() - made_by_runs):
            problems.append(f"docs/images/{extra}: no run of scripts/docs_images.py makes it")
    for run in RUNS:
        if args.only and run.name not in args.only:
            continue
        if run.slow and args.skip_slow and args.action == "make":
            print(f"{run.name}: slow, not made")
            continue
        sketch = run.slow and args.action == "check"
        repo, env = clone_and_environment(args.build, args.shared)
        try:
            print(f"{run.name}: {len(run.commands)} command(s)" + (", its quick sketch" if sketch else ""), flush=True)
            make_run(run, repo, env, sketch)
            if args.action == "check":
                problems += compare(run, repo, sketch)
            else:
                for made, picture in run.pictures.items():
                    os.makedirs(os.path.dirname(os.path.join(IMAGES, picture)), exist_ok=True)
                    shutil.copyfile(os.path.join(repo, made), os.path.join(IMAGES, picture))
                    print(f"  wrote docs/images/{picture}")
        except Failure as e:
            problems.append(str(e))
        finally:
            shutil.rmtree(os.path.dirname(repo), ignore_errors=True)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
