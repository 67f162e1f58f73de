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


def paired_median_seconds(fn: Callable[[], object], other: Callable[[], object], repeats: int = 7) -> tuple[float, float]:
    """Median wall times of fn and other, called in turn `repeats` times after one warm-up each:
    a drift of the machine's speed (other jobs, memory bandwidth) then hits both alike, so their
    ratio holds where two medians taken one after the other would not."""
    fn()
    other()
    a, b = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        a.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        other()
        b.append(time.perf_counter() - t0)
    return statistics.median(a), statistics.median(b)
