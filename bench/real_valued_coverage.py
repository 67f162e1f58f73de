"""Coverage of the real-valued importance-sampling 95% interval, against exact p-values.

Shapes (alternative "greater", method "saddlepoint_is", default rounds):

- equal magnitudes: stay = +-1, so T is 2 x Binomial(n, 1/2) and p is a binomial tail computed
  in Python integers; n and the observed count are chosen for p ~ 1e-3, 1e-20 and 1e-60 (the
  deep ones take two or more rounds of 10^4 samples);
- continuous effects at N = 36, p ~ 1e-6, the truth by meet-in-the-middle enumeration.

Each replication uses its own seed; the binomial standard error of a coverage over R
replications is sqrt(0.95 * 0.05 / R) (0.49% at R = 2000).

Run: python bench/real_valued_coverage.py [replications]
"""

from __future__ import annotations

import math
import sys
import time
from math import comb

import numpy as np

from pairperm._realvalued import real_sum_pvalue


def binomial_tail(n: int, j: int) -> float:
    """P[Binomial(n, 1/2) >= j], exactly in integers, then rounded once."""
    return sum(comb(n, i) for i in range(j, n + 1)) / 2**n


def equal_magnitudes(n: int, j: int) -> tuple[np.ndarray, float]:
    stay = np.array([1.0] * j + [-1.0] * (n - j))
    return stay, binomial_tail(n, j)


def continuous() -> tuple[np.ndarray, float]:
    rng = np.random.default_rng(12)
    stay = rng.random(36) - rng.random(36) + 0.4
    return stay, real_sum_pvalue(stay, -stay, alternative="greater", method="exact").pvalue


SHAPES = {
    "equal magnitudes, n=40, p~1e-3": (lambda: equal_magnitudes(40, 30), 10_000),
    "equal magnitudes, n=200, p~1e-13": (lambda: equal_magnitudes(200, 150), 10_000),
    "equal magnitudes, n=400, p~1e-41": (lambda: equal_magnitudes(400, 330), 10_000),
    "equal magnitudes, n=1000, p~1e-85": (lambda: equal_magnitudes(1000, 800), 10_000),
    "continuous, N=36, p~1e-6": (continuous, 1000),
}


def coverage(stay: np.ndarray, truth: float, k: int, replications: int) -> tuple[float, int, int, float]:
    low = high = 0
    rounds = 0
    for seed in range(replications):
        r = real_sum_pvalue(stay, -stay, alternative="greater", method="saddlepoint_is", n_resamples=k, seed=seed)
        lo, hi = r.pvalue_ci
        low += truth < lo
        high += truth > hi
        rounds += r.n_resamples // k
    return 1 - (low + high) / replications, low, high, rounds / replications


def main() -> None:
    replications = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    se = math.sqrt(0.95 * 0.05 / replications)
    print(f"{replications} replications per shape; standard error of a coverage near 95%: {se:.2%}\n")
    print("| shape | exact p | K per round | mean rounds | coverage | above | below | time |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, (make, k) in SHAPES.items():
        stay, truth = make()
        t0 = time.perf_counter()
        cov, low, high, rounds = coverage(stay, truth, k, replications)
        print(f"| {name} | {truth:.3e} | {k} | {rounds:.2f} | {cov:.2%} | {low} | {high} | "
              f"{time.perf_counter() - t0:.0f} s |")


if __name__ == "__main__":
    main()
