"""The statistic kinds every test is built from.

A statistic answers three questions about the local effects it was built for: its
observed value, the p-value summed over a null distribution, and how many of a block of
sampled (or enumerated) sums are at least as extreme. Some also have an exact tail
route that needs no distribution at all (the grouped engine with exponential tilting).
Its ``kind`` tells the core's engine planner which routes it has.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Union

import numpy as np

import pairperm._core as _core

from ._distribution import Distribution, MultiDistribution
from ._effects import LocalEffects
from ._validation import RTOL, apply_vectorised

__all__ = ["CallableStatistic", "RatioStatistic", "RealSumStatistic", "SumStatistic", "reject_sums", "statistic_for"]

Dist = Union[Distribution, MultiDistribution]


def reject_sums(sums: np.ndarray, observed: int, twice_mean: int, alternative: str) -> np.ndarray:
    """Rejection region of S itself, in exact integers: greater S >= s_obs, less S <= s_obs,
    two-sided |2S - 2mu| >= |2 s_obs - 2mu| (half-integer means stay integers)."""
    if alternative == "greater":
        return sums >= observed
    if alternative == "less":
        return sums <= observed
    return np.abs(2 * sums - twice_mean) >= abs(2 * observed - twice_mean)


class SumStatistic:
    """The statistic S itself (1-D integer local effects), compared in exact integers; the
    core evaluates it. Its kind is "signed_rank_sum" for the Wilcoxon test (whose wide rank
    spreads the band-limited inversion takes under "auto")."""

    def __init__(self, effects: LocalEffects, kind: str = "sum") -> None:
        self._effects = effects  # its summary is made by the executor, where the p-value is
        self.kind = kind

    @property
    def value(self) -> int:
        return int(self._effects.summary.observed)

    def core_statistic(self, alternative: str) -> None:
        return None

    def count(self, sums: np.ndarray, alternative: str) -> int:
        twice_mean = int(self._effects.summary.twice_mean)
        return int(np.count_nonzero(reject_sums(sums[:, 0], self.value, twice_mean, alternative)))


class RatioStatistic:
    """A difference of two ratios of affine functions of S (F-beta, precision, recall),
    compared by exact integer cross-multiplication in the core."""

    def __init__(self, value: float, core_args: Any) -> None:
        self.value = value
        self._args: Any = core_args

    kind = "tail"

    def core_statistic(self, alternative: str) -> Any:
        return self._args

    def count(self, sums: np.ndarray, alternative: str) -> int:
        return int(_core.ratio_count(np.ascontiguousarray(sums, dtype=np.int64), self._args, alternative))


class _NullCallbacks:
    """What the core's executor calls for a statistic it cannot evaluate itself: the p-value
    over each null distribution it computes, and the count over listed states."""

    def __init__(self, stat: CallableStatistic, alternative: str) -> None:
        self._stat = stat
        self._alternative = alternative

    def pvalue(self, offset: tuple, pmf: np.ndarray, truncated_mass: float) -> float:
        dist: Dist = (Distribution(offset[0], pmf, truncated_mass, "auto") if self._stat.one_d
                      else MultiDistribution(offset, pmf, truncated_mass, "auto"))
        return self._stat.from_distribution(dist, self._alternative)

    def count(self, states: np.ndarray) -> int:
        return self._stat.count(states, self._alternative)


class CallableStatistic:
    """A user's vectorised statistic h of S. Integer results are compared exactly; float
    results tie within rtol * |h_obs| (see the test functions' ``rtol``)."""

    def __init__(self, fn: Callable[[np.ndarray], Any], effects: LocalEffects, rtol: float, func: str) -> None:
        self.fn = fn
        self.one_d = effects.one_d
        self._func = func
        # h sees S as the engines form it: int64 for integer effects, float64 for real ones.
        dtype = np.float64 if effects.is_real else np.int64
        obs = np.asarray(effects.observed, dtype=dtype).reshape((1,) if self.one_d else (1, effects.m))
        h_obs = apply_vectorised(fn, obs, 1, func)
        if not np.isfinite(h_obs).all():
            raise ValueError(f"{func}: the statistic is {h_obs[0]} at the observed value; it must be finite")
        self.value: Any = h_obs[0].item()
        # Integer statistics are compared exactly: a float slack would let 4e12 - 3 tie with 4e12.
        self._slack = 0.0 if h_obs.dtype.kind in "iu" else rtol * abs(self.value)

    kind = "distribution"

    def core_statistic(self, alternative: str) -> _NullCallbacks:
        return _NullCallbacks(self, alternative)

    def extreme(self, points: np.ndarray, alternative: str) -> np.ndarray:
        h = apply_vectorised(self.fn, points[:, 0] if self.one_d else points, len(points), self._func)
        if not np.isfinite(h).all():
            bad = int(np.argmin(np.isfinite(h)))
            raise ValueError(
                f"{self._func}: the statistic returned {h[bad]} at S = {points[bad].tolist()}; it must be finite "
                "at every value S can take"
            )
        if alternative == "greater":
            return h >= self.value - self._slack
        if alternative == "less":
            return h <= self.value + self._slack
        return np.abs(h) >= abs(self.value) - self._slack

    def from_distribution(self, dist: Dist, alternative: str) -> float:
        terms: list[float] = []
        if isinstance(dist, Distribution):
            chunks: Any = [(dist.support.reshape(-1, 1), dist.pmf)]
        else:
            chunks = dist.points()
        for points, weights in chunks:
            keep = weights > 0  # impossible states (lattice holes, round-off zeros) are never evaluated
            if keep.any():
                terms.extend(weights[keep][self.extreme(points[keep], alternative)].tolist())
        return float(min(1.0, math.fsum(terms)))

    def count(self, sums: np.ndarray, alternative: str) -> int:
        return int(np.count_nonzero(self.extreme(sums, alternative)))


class RealSumStatistic:
    """S itself for real-valued 1-D local effects. States tie with the observed one when
    they do in exact arithmetic up to the round-off of the sums formed (exactly, when all
    values lie on a fine enough binary grid), widened by ``rtol * sum(|stay| + |swap|)``
    when rtol is given; identically in every route: exact enumeration, tilted importance
    sampling and plain Monte Carlo all compare against the same thresholds in the core."""

    def __init__(self, effects: LocalEffects, rtol: Optional[float]) -> None:
        self._stay = np.ascontiguousarray(effects.stay, dtype=np.float64)
        self._swap = np.ascontiguousarray(effects.swap, dtype=np.float64)
        self.rtol = rtol
        # Differences of scores carry the scores' round-off, not their own (see ScoreRoundoff).
        self._scores: dict = {} if effects.roundoff is None else effects.roundoff.core_args()
        try:
            self.value = float(math.fsum(self._stay))
        except OverflowError:
            raise ValueError(
                "the observed statistic sum(stay) overflows float64; divide all scores by a common factor "
                "(the p-value of a sum does not depend on their units)"
            ) from None

    def core_real(self) -> tuple[np.ndarray, np.ndarray]:
        """stay and swap, as the core's executor reads them."""
        return self._stay, self._swap

    def core_scores(self) -> dict:
        """The scores' magnitudes and grid behind the tie slack (empty: the effects as read)."""
        return self._scores

    def block_hits(self, k: int, seed: int, alternative: str, n_jobs: int) -> int:
        """Hits among k plain null resamples drawn by the core with the same tie thresholds."""
        rtol = 0.0 if self.rtol is None else self.rtol
        _, hits = _core.real_monte_carlo(self._stay, self._swap, alternative, rtol, k, seed, n_jobs, **self._scores)
        return int(hits)


def statistic_for(effects: LocalEffects, statistic: Any, rtol: Optional[float], func: str) -> Any:
    """The kind for `statistic` (None: the sum S itself) on these effects; rtol None picks the kind's default."""
    if statistic is not None:
        return CallableStatistic(statistic, effects, RTOL if rtol is None else rtol, func)
    if effects.is_real:
        return RealSumStatistic(effects, rtol)
    return SumStatistic(effects)
