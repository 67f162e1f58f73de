"""compare_systems() against a Python loop of the single-pair tests, side by side in one run.

Systems are built from the papers' experiment data (pairperm.datasets): system k takes each
entry from the dataset's system A with probability k / (n - 1) and from B otherwise, so all
systems are scored on the same entries and their accuracies spread between A's and B's.

    python bench/compare_systems.py              # --repeats 7; --no-f1 skips the F1 rows
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import time

import numpy as np

import pairperm
from pairperm import datasets
from timing import median_seconds


# CPU seconds of this process (all its threads) per call: on a shared machine wall time swings
# with other load, the work done does not.
def cpu_seconds(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return float(np.median(times))

N = 10_000


def mixed_systems(a: np.ndarray, b: np.ndarray, n_systems: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for k in range(n_systems):
        take_a = rng.random(len(a)) < k / (n_systems - 1)
        out[f"sys{k:02d}"] = np.where(take_a.reshape((-1,) + (1,) * (a.ndim - 1)), a, b)
    return out


def loop(systems: dict, test) -> None:
    for u, v in itertools.combinations(systems.values(), 2):
        test(u, v)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-f1", action="store_true")
    args = ap.parse_args()
    r = args.repeats
    print(f"# compare_systems benchmark: pairperm {pairperm.__version__}, Python {platform.python_version()}, "
          f"NumPy {np.__version__}, {os.cpu_count()} cores; median of {r} runs after a warm-up, seconds")
    print(f"# load average at start: {os.getloadavg()[0]:.1f} (other processes share these cores)")

    x, y = datasets.stanza_pos_like(N)
    s20, s100 = mixed_systems(x, y, 20), mixed_systems(x, y, 100)
    # p-values only (confidence_level=None), as the loops compute; one row adds the intervals.
    cases = [
        ("accuracy-like, 20 systems (190 pairs): compare_systems",
         lambda: pairperm.compare_systems(s20, confidence_level=None, progress=False), r),
        ("accuracy-like, 20 systems: compare_systems n_jobs=1",
         lambda: pairperm.compare_systems(s20, confidence_level=None, n_jobs=1, progress=False), r),
        ("accuracy-like, 20 systems: loop of permutation_test", lambda: loop(s20, pairperm.permutation_test), r),
        ("accuracy-like, 20 systems: loop of compare", lambda: loop(s20, pairperm.compare), r),
        ("accuracy-like, 100 systems (4950 pairs): compare_systems",
         lambda: pairperm.compare_systems(s100, confidence_level=None, progress=False), max(1, r // 2)),
        ("accuracy-like, 100 systems: compare_systems + 95% intervals",
         lambda: pairperm.compare_systems(s100, progress=False), max(1, r // 2)),
        ("accuracy-like, 100 systems: loop of permutation_test", lambda: loop(s100, pairperm.permutation_test), 1),
    ]
    rows = [(name, median_seconds(fn, k), cpu_seconds(fn, k)) for name, fn, k in cases]
    if not args.no_f1:
        a, b = datasets.ner_like(N)
        f20 = mixed_systems(a, b, 20)
        t0, c0 = time.perf_counter(), time.process_time()
        pairperm.compare_systems(f20, "f1", confidence_level=None, progress=False)
        rows.append(("F1 (N, 3), 20 systems (190 pairs): compare_systems (1 run)", time.perf_counter() - t0,
                     time.process_time() - c0))
        vals = list(f20.values())
        t0, c0 = time.perf_counter(), time.process_time()
        for v in vals[1:]:
            pairperm.f1_test(vals[0], v)
        scale = 190 / (len(vals) - 1)
        rows.append(("F1, 20 systems: loop of f1_test (19 pairs timed, x10)", (time.perf_counter() - t0) * scale,
                     (time.process_time() - c0) * scale))
    w = max(len(name) for name, *_ in rows)
    print(f"{'':<{w}}  {'wall':>10}  {'cpu':>10}")
    for name, sec, cpu in rows:
        print(f"{name:<{w}}  {sec:10.4g}  {cpu:10.4g}")
    acc, acc_loop = rows[0][1:], rows[2][1:]
    print(f"\nspeed-up of compare_systems over the permutation_test loop (20 systems): "
          f"{acc_loop[0] / acc[0]:.1f}x wall, {acc_loop[1] / acc[1]:.1f}x cpu")
    print(f"# load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
