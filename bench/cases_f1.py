"""Benchmarks of the F1 tests: exact f1_test at N = 10^4 on NER-like counts, next to a Monte Carlo
run with K = 20,000 resamples on the same data (same reduced state, same exact comparison).

`cases()` is what bench/compare.py pulls in; `python bench/cases_f1.py` prints medians.
"""

from __future__ import annotations

from typing import Callable

import pairperm
from pairperm import datasets
from timing import median_seconds

N = 10_000
K = 20_000


def cases() -> list[tuple[str, Callable[[], object]]]:
    a, b = datasets.ner_like(N, seed=0)
    return [
        (f"f1_test exact (auto), N={N}", lambda: pairperm.f1_test(a, b)),
        (f"f1_test monte_carlo, K={K}, N={N}", lambda: pairperm.f1_test(a, b, method="monte_carlo", n_resamples=K, rng=1)),
        (f"precision_test exact (auto), N={N}", lambda: pairperm.precision_test(a, b)),
        (f"recall_test exact (auto), N={N}", lambda: pairperm.recall_test(a, b)),
    ]


if __name__ == "__main__":
    results = [(label, median_seconds(fn)) for label, fn in cases()]
    for label, t in results:
        print(f"{label:45s} median {t * 1e3:9.2f} ms")
    exact, mc = results[0][1], results[1][1]
    print(f"Monte Carlo / exact F1 ratio: {mc / exact:.1f}x")
