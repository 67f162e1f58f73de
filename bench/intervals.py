"""Cost of the confidence intervals next to one exact permutation test, side by side in one run.

At N = 10^4 (the papers' POS-tagging data, pairperm.datasets): one permutation-inversion
interval (saddlepoint route) and one exact interval at N = 30 and 40, against one exact
permutation_test; the exact interval of 0/1 scores by value (the lattice route) at N = 60 to
1000; and the bootstrap intervals (percentile and BCa) of 30 systems and all 435
pairs from one shared set of resamples, against bootstrap_test of one pair. With --baseline REV,
shift_interval as of that git revision is timed in the same run, next to the current one; and
the exact permutation tests of 435 pairs of 30 systems are timed with and without
result.confidence_interval() for every pair.

    python bench/intervals.py              # --repeats 7 --baseline 1bf1883
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

import pairperm
from pairperm import datasets
from timing import median_seconds

N = 10_000
HERE = os.path.dirname(os.path.abspath(__file__))


def baseline_shift_interval(rev: str):
    """shift_interval from python/pairperm/_intervals.py at git revision `rev`, loaded as a
    module of the installed package (its relative imports resolve against pairperm)."""
    source = subprocess.run(["git", "show", f"{rev}:python/pairperm/_intervals.py"], cwd=HERE, check=True,
                            capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("pairperm._intervals_baseline", f.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    os.unlink(f.name)
    return module.shift_interval


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--baseline", default="1bf1883", help="git revision whose shift_interval is timed too ('' for none)")
    args = ap.parse_args()
    r = args.repeats
    print(f"# intervals benchmark: pairperm {pairperm.__version__}, Python {platform.python_version()}, "
          f"NumPy {np.__version__}, {os.cpu_count()} cores; median of {r} runs after a warm-up, seconds")
    a, b = datasets.stanza_pos_like(N, seed=0)
    t_test = median_seconds(lambda: pairperm.permutation_test(a, b), r)
    t_shift = median_seconds(lambda: pairperm.shift_interval(a, b), r)
    print(f"permutation_test N={N}:               {t_test:.3g}")
    print(f"shift_interval N={N} (saddlepoint):  {t_shift:.3g}   ratio {t_shift / t_test:.1f}")
    if args.baseline:
        old = baseline_shift_interval(args.baseline)
        t_old = median_seconds(lambda: old(a, b), r)
        t_new = median_seconds(lambda: pairperm.shift_interval(a, b), r)
        print(f"  same run, {args.baseline} -> now: {t_old:.3g} -> {t_new:.3g}   ratio to permutation_test "
              f"{t_old / t_test:.1f} -> {t_new / t_test:.1f}")
    for n in (30, 40):
        t = median_seconds(lambda n=n: pairperm.shift_interval(a[:n], b[:n], method="exact"), max(1, r // 3))
        print(f"shift_interval N={n} (exact):          {t:.3g}")
    # Accuracy: two systems each wrong on ~20% of the items, apart on ~15%.
    rng = np.random.default_rng(2)
    for n in (60, 150, 1000):
        truth = rng.random(n) < 0.8
        x, y = (np.where(rng.random(n) < 0.1, ~truth, truth).astype(np.int64) for _ in range(2))
        r_exact = pairperm.shift_interval(x, y)
        t = median_seconds(lambda x=x, y=y: pairperm.shift_interval(x, y), r)
        print(f"shift_interval N={n} 0/1 scores ({r_exact.method}, {int(np.sum(x != y))} items apart): {t:.3g}")

    rng = np.random.default_rng(1)
    systems = np.where(rng.random((30, N)) < np.linspace(0, 1, 30)[:, None], a, b)
    pairs = [(i, j) for i in range(30) for j in range(i + 1, 30)]
    t_tests = median_seconds(lambda: [pairperm.permutation_test(systems[i], systems[j]) for i, j in pairs],
                             max(1, r // 3))
    t_with = median_seconds(lambda: [pairperm.permutation_test(systems[i], systems[j]).confidence_interval()
                                     for i, j in pairs], max(1, r // 3))
    print(f"435 exact permutation_tests, 30 systems, N={N}: {t_tests:.3g}; with confidence_interval() for every "
          f"pair: {t_with:.3g}   ratio {t_with / t_tests:.2f}")
    k = args.resamples
    t_boot = median_seconds(lambda: pairperm.bootstrap_test(systems[0], systems[1], n_resamples=k, rng=0), r)
    print(f"bootstrap_test one pair, K={k}:        {t_boot:.3g}")
    for method in ("percentile", "bca"):
        t = median_seconds(lambda m=method: pairperm.bootstrap_intervals(systems, n_resamples=k, rng=0, method=m),
                           max(1, r // 2))
        print(f"bootstrap_intervals 30 systems, 435 pairs, {method}: {t:.3g}   "
              f"ratio to one permutation_test {t / t_test:.0f}, per pair {t / 435 / t_test:.1f}")


if __name__ == "__main__":
    main()
