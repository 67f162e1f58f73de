"""Small numeric helpers: exact (Clopper-Pearson) intervals for Monte Carlo p-values, and the
multiset of an array's values."""

from __future__ import annotations

import numpy as np

import pairperm._core as _core


def clopper_pearson(hits: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided interval for the proportion hits / n (beta quantiles, O(1) in n)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence}")
    lo, hi = _core.clopper_pearson(int(hits), int(n), float(confidence))
    return float(lo), float(hi)


def excludes(hits: int, n: int, confidence: float, value: float) -> bool:
    """Whether the Clopper-Pearson interval of hits / n excludes `value`, without solving for it."""
    tail = (1.0 - confidence) / 2.0
    # lower > value  <=>  P[Bin(n, value) >= hits] < tail;  upper < value  <=>  P[Bin(n, value) <= hits] < tail.
    if hits > 0 and _core.regularized_beta(int(hits), int(n - hits + 1), float(value)) < tail:
        return True
    return hits < n and 1.0 - _core.regularized_beta(int(hits + 1), int(n - hits), float(value)) < tail


def multiset(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of d (ascending, float64) and their counts (float64). Integer differences
    over a range of at most 4N values are counted in O(N), without the sort of np.unique."""
    if d.dtype.kind == "i":
        lo, hi = int(d.min()), int(d.max())
        if hi - lo <= 4 * len(d):
            counts = np.bincount(d - lo)
            present = np.flatnonzero(counts)
            return (present + lo).astype(np.float64), counts[present].astype(np.float64)
    values, counts = np.unique(d, return_counts=True)
    return values.astype(np.float64), counts.astype(np.float64)
