"""The one timing rule every benchmark script here uses."""

from __future__ import annotations

import statistics
import time
from typing import Callable


def median_seconds(fn: Callable[[], object], repeats: int = 7) -> float:
    """Median wall time of `repeats` calls after one warm-up call (plans, caches, first touch)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def paired_median_seconds(fn: Callable[[], object], baseline: Callable[[], object],
                          repeats: int = 7) -> tuple[float, float]:
    """Median wall times of fn and of a cheap baseline, timed in turn `repeats` times after one
    warm-up each: a drift of the machine's speed (other jobs, memory bandwidth) then hits both
    alike, so their ratio holds where two medians taken one after the other would not. The
    baseline runs once untimed before each timing, so that it reads caches as warm as when it
    is timed alone (fn may have evicted its data)."""
    fn()
    baseline()
    a, b = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        a.append(time.perf_counter() - t0)
        baseline()
        t0 = time.perf_counter()
        baseline()
        b.append(time.perf_counter() - t0)
    return statistics.median(a), statistics.median(b)
