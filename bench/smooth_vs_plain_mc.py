"""Tilted importance sampling (compare's default for BLEU) against plain Monte Carlo with
enough resamples to resolve the same p-value: both 95% intervals, their overlap, and times.

    PYTHONPATH=python python bench/smooth_vs_plain_mc.py                 # K = 10^8 (~8 min)
    PYTHONPATH=python python bench/smooth_vs_plain_mc.py --resamples 1e6 --quality 0.52
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import pairperm  # noqa: E402
from test_smooth_tails import bleu_stats  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300, help="sentences")
    ap.add_argument("--quality", type=float, default=0.558, help="system A's n-gram quality (B: 0.5)")
    ap.add_argument("--resamples", type=float, default=1e8, help="plain Monte Carlo resamples")
    args = ap.parse_args()
    rng = np.random.default_rng(11)
    x, y = bleu_stats(rng, args.n, args.quality), bleu_stats(rng, args.n, 0.5)
    t = time.perf_counter()
    tilted = pairperm.compare(x, y, "bleu", rng=1).result
    t_tilted = time.perf_counter() - t
    t = time.perf_counter()
    plain = pairperm.compare(x, y, "bleu", method="monte_carlo", n_resamples=int(args.resamples), rng=1).result
    t_plain = time.perf_counter() - t
    print(f"BLEU, N = {args.n} sentences, two-sided")
    for name, r, sec in (("importance sampling", tilted, t_tilted), ("plain Monte Carlo", plain, t_plain)):
        lo, hi = r.pvalue_ci
        print(f"{name:20s} p = {r.pvalue:.4e}  95% [{lo:.4e}, {hi:.4e}]  (+-{(hi - lo) / 2 / r.pvalue:.1%})  "
              f"{r.n_resamples:.1e} resamples  {sec:.2f} s")
    overlap = tilted.pvalue_ci[0] <= plain.pvalue_ci[1] and plain.pvalue_ci[0] <= tilted.pvalue_ci[1]
    print(f"intervals overlap: {overlap}; ratio of estimates {tilted.pvalue / plain.pvalue:.4f}")


if __name__ == "__main__":
    main()
