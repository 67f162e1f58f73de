"""Leaderboards: wall time of pairperm.rank_intervals and of compare_systems(correction="maxT") on a
leaderboard's sizes, and maxT's power against Holm's.

Systems are built from the papers' experiment data as in bench/compare_systems.py (system k takes
each entry from system A with probability k / (K - 1), else from B), so they are scored on the same
entries and strongly dependent through them.

    python bench/ranks.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np

import pairperm
from compare_systems import mixed_systems
from pairperm import datasets
from timing import median_seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    r = ap.parse_args().repeats
    print(f"# rank_intervals benchmark: pairperm {pairperm.__version__}, Python {platform.python_version()}, "
          f"NumPy {np.__version__}, {os.cpu_count()} cores; median of {r} runs after a warm-up")
    print(f"# load average at start: {os.getloadavg()[0]:.1f} (other processes share these cores)")
    x, y = datasets.stanza_pos_like(10_000)
    s100 = mixed_systems(x, y, 100)
    s10 = mixed_systems(x, y, 10)
    # 12 tasks of 30 checkpoints on 2,000 items each, as a harness's report holds them.
    tasks = [mixed_systems(*datasets.stanza_pos_like(2_000, seed=t), 30, seed=t) for t in range(12)]
    boards = {f"task{t}": s for t, s in enumerate(tasks)}
    cases = [
        ("100 systems x 10,000 items, 1,000 draws, simultaneous (multiplier)",
         lambda: pairperm.rank_intervals(s100, "sum", rng=0)),
        ("100 systems x 10,000 items, 1,000 draws, marginal (multiplier)",
         lambda: pairperm.rank_intervals(s100, "sum", rng=0, simultaneous=False)),
        ("10 systems x 10,000 items, 1,000 draws, joint permutation",
         lambda: pairperm.rank_intervals(s10, "sum", rng=0, method="permutation")),
        ("30 systems x 12 tasks x 2,000 items, simultaneous, every task",
         lambda: [pairperm.rank_intervals(t, "sum", rng=0) for t in tasks]),
        ("30 systems x 12 tasks x 2,000 items: compare_systems, Holm (435 pairs a task)",
         lambda: pairperm.compare_systems(boards, "sum", confidence_level=None, progress=False, rng=0)),
        ("30 systems x 12 tasks x 2,000 items: compare_systems, maxT (9,999 draws a task)",
         lambda: pairperm.compare_systems(boards, "sum", correction="maxT", confidence_level=None, progress=False,
                                          rng=0)),
    ]
    print("| case | seconds |\n|---|---:|")
    for name, fn in cases:
        print(f"| {name} | {median_seconds(fn, r):.3f} |")
    # Power: systems 0.5 points apart in accuracy on 2,000 shared items, 20 runs.
    rng = np.random.default_rng(0)
    marked = {"holm": 0, "maxT": 0}
    for run in range(20):
        difficulty = rng.normal(0, 1, 2_000)
        systems = {f"s{k}": (rng.random(2_000) < 1 / (1 + np.exp(difficulty - 0.8 - 0.03 * k))).astype(int)
                   for k in range(10)}
        for correction in marked:
            res = pairperm.compare_systems(systems, correction=correction, confidence_level=None, progress=False,
                                           rng=run)
            marked[correction] += sum(row.significant for row in res.rows)
    print(f"\npairs marked per run (10 systems, 45 pairs, 20 runs): Holm {marked['holm'] / 20:.2f}, "
          f"maxT {marked['maxT'] / 20:.2f}")


if __name__ == "__main__":
    main()
