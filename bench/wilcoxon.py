"""Wilcoxon signed-rank p-values: the exact grouped engine vs method="auto" (band-limited
Fourier inversion with a certified error bound above the cost threshold) vs scipy.

Medians of a few runs per N on continuous differences (no ties), and the accuracy of
auto against the exact engine where the exact engine is feasible. Run:
    PYTHONPATH=python python bench/wilcoxon.py [--max-exact N]
"""

import argparse
import statistics
import time

import numpy as np
import scipy.stats

import pairperm
from pairperm import _core
from pairperm._classic import _sign_flip_effects, _signed_ranks


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-exact", type=int, default=10_000, help="largest N for the exact engine (~20 s at 10^4)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'N':>7} {'exact (s)':>10} {'auto (s)':>9} {'auto ran':>8} {'scipy (s)':>9} "
          f"{'p auto':>11} {'|auto-exact|':>12} {'error bound':>11}")
    for n in (50, 500, 5_000, 10_000, 100_000):
        d = rng.normal(size=n) + 3.0 / np.sqrt(n)
        reps = 3 if n <= 10_000 else 5
        t_auto, auto = median_time(lambda d=d: pairperm.wilcoxon_test(d), reps)
        t_scipy, _ = median_time(lambda d=d: scipy.stats.wilcoxon(d), reps)
        if n <= args.max_exact:
            # The exact engine itself: wilcoxon_test(method="exact") refuses above its cost guard.
            def exact_engine(d=d):
                effect, _, _ = _signed_ranks(d, np.zeros_like(d), "wilcox")
                return _core.grouped_pvalue(_sign_flip_effects(effect).summary, "two-sided")[0]

            t_exact, exact = median_time(exact_engine, 1 if n >= 5000 else reps)
            diff = f"{abs(auto.pvalue - exact):12.1e}"
            te = f"{t_exact:10.4f}"
        else:
            te, diff = f"{'-':>10}", f"{'-':>12}"
        bound = "-" if auto.pvalue_error is None else f"{auto.pvalue_error:.1e}"
        print(f"{n:>7} {te} {t_auto:9.4f} {auto.method:>8} {t_scipy:9.4f} {auto.pvalue:11.4e} {diff} {bound:>11}")


if __name__ == "__main__":
    main()
