#!/usr/bin/python3
"""The inputs of docs/polca.md's `polca replay` example, made as that section describes them:

    /usr/bin/python3 scripts/make-replay-example.py DIR [--wattcut BINARY]

writes DIR/telemetry.csv (40 servers, one hour of readings every 5 s: 3.9 kW per server plus a
1.4 kW Gaussian bump 10 minutes wide at 30 minutes and 120 W of noise, no priority column, and
`node-07` silent between its readings at 2,395 s and 2,520 s) and DIR/row.conf (the built-in A100 config with
control.telemetry_period_s = 5, from `wattcut polca config`). Deterministic: the noise comes from
a fixed seed, so the replay's numbers are the docs'.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import sys

SERVERS, PERIOD_S, HOUR_S = 40, 5, 3600
START_S = 1714564800  # 2024-05-01T12:00:00Z
SILENT = ("node-07", 2395, 2520)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--wattcut", default="build/src/wattcut/cli/wattcut")
    args = p.parse_args(argv)
    os.makedirs(args.dir, exist_ok=True)
    rng = random.Random(7)
    with open(os.path.join(args.dir, "telemetry.csv"), "w") as f:
        f.write("time,server,power_w\n")
        for step in range(HOUR_S // PERIOD_S):
            t = step * PERIOD_S
            bump = 1400 * math.exp(-0.5 * ((t - 1800) / 300) ** 2)  # 10 minutes wide: sd 5 min
            for s in range(SERVERS):
                name = f"node-{s:02d}"
                if name == SILENT[0] and SILENT[1] < t < SILENT[2]:
                    continue
                w = 3900 + bump + rng.gauss(0, 120)
                f.write(f"{START_S + t:.1f},{name},{w:.1f}\n")
    config = subprocess.run([args.wattcut, "polca", "config", "--gpu", "a100"], check=True, stdout=subprocess.PIPE,
                            text=True).stdout
    lines = [("control.telemetry_period_s = 5" if line.startswith("control.telemetry_period_s =") else line)
             for line in config.splitlines()]
    with open(os.path.join(args.dir, "row.conf"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.dir}/telemetry.csv and {args.dir}/row.conf")
    return 0


if __name__ == "__main__":
    sys.exit(main())
