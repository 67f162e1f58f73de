"""The grouped engine's tilted tail alone (``_core.grouped_pvalue`` on a ready summary), per build.

Each argument is a directory holding a built ``pairperm`` package (for a checkout:
``pip install --no-deps --target DIR CHECKOUT``; ``-`` for the installed one). Builds run in
interleaved rounds, one subprocess per build and round; a cell is the median over rounds of
per-round medians in microseconds, the last column the ratio of the last build to the first,
and the p-values of both are printed so that changes in the result show next to the timings.

    python bench/grouped_tail.py OLD_DIR NEW_DIR [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_CHILD = r"""
import json, statistics, sys, time
import numpy as np
import pairperm
from pairperm import _core, datasets
if sys.argv[1] != "-" and not pairperm.__file__.startswith(sys.argv[1]):
    raise SystemExit(f"imported {pairperm.__file__}, not the build in {sys.argv[1]}")
cases = []
for n in (1_000, 10_000, 100_000):
    x, y = datasets.stanza_pos_like(n, 2022)
    cases.append((f"pos N={n}", x, y))
rng = np.random.default_rng(5)
x = rng.integers(0, 20, 10_000)
y = np.clip(x + rng.integers(-3, 4, 10_000) + (rng.random(10_000) < 0.02), 0, None)
cases.append(("small ints N=10000", x, y))
out = {}
for label, x, y in cases:
    s = _core.summarize_paired(np.asarray(x), np.asarray(y))
    for alt in ("two-sided", "greater"):
        p = _core.grouped_pvalue(s, alt)[0]
        reps = []
        for _ in range(7):
            start, calls = time.perf_counter(), 0
            while time.perf_counter() - start < 0.05:
                _core.grouped_pvalue(s, alt)
                calls += 1
            reps.append((time.perf_counter() - start) / calls * 1e6)
        out[f"{label} {alt}"] = (statistics.median(reps), p)
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builds", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {b: [] for b in args.builds}
    for _ in range(args.rounds):
        for b in args.builds:
            env = dict(os.environ)
            if b != "-":
                env["PYTHONPATH"] = b
            done = subprocess.run([sys.executable, "-c", _CHILD, b], env=env, check=True, capture_output=True, text=True)
            runs[b].append(json.loads(done.stdout))
    first = args.builds[0]
    print(f"{'case':30s}" + "".join(f"{'us':>10s}" for _ in args.builds) + f"{'ratio':>8s}  p-values")
    for case in runs[first][0]:
        med = [statistics.median(r[case][0] for r in runs[b]) for b in args.builds]
        ps = " ".join(f"{runs[b][0][case][1]:.16g}" for b in args.builds)
        print(f"{case:30s}" + "".join(f"{m:10.1f}" for m in med) + f"{med[-1] / med[0]:8.2f}  {ps}")


if __name__ == "__main__":
    main()
