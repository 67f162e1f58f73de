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
