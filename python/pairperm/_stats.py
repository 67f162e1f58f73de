"""Exact (Clopper-Pearson) intervals for Monte Carlo p-values."""

from __future__ import annotations

from . import _core


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
