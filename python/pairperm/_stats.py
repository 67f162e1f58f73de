"""Exact Clopper-Pearson intervals for Monte Carlo p-values (used by every sampling test)."""

from __future__ import annotations

from . import _core


def clopper_pearson(hits: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval for a binomial proportion, by bisection on exact tails."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence}")
    alpha = (1.0 - confidence) / 2.0

    def solve(f, target: float) -> float:
        lo, hi = 0.0, 1.0  # f increasing in p
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            if f(mid) < target:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    # lower: P[Bin(n, p) >= hits] = alpha; upper: P[Bin(n, p) <= hits] = alpha.
    lower = 0.0 if hits == 0 else solve(lambda p: _core.binomial_sf_ge(n, p, hits), alpha)
    upper = 1.0 if hits == n else solve(lambda p: _core.binomial_sf_ge(n, p, hits + 1), 1.0 - alpha)
    return lower, upper
