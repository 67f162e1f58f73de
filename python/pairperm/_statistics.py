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
from ._realvalued import real_sum_pvalue
from ._validation import RTOL, apply_vectorised

__all__ = ["CallableStatistic", "RatioStatistic", "RealSumStatistic", "SumStatistic", "reject_sums", "statistic_for"]

Dist = Union[Distribution, MultiDistribution]


class TiltNotCertified(Exception):
    """The tilted tail could not certify its neglected mass: use the distribution route."""


def reject_sums(sums: np.ndarray, observed: int, twice_mean: int, alternative: str) -> np.ndarray:
    """Rejection region of S itself, in exact integers: greater S >= s_obs, less S <= s_obs,
    two-sided |2S - 2mu| >= |2 s_obs - 2mu| (half-integer means stay integers)."""
    if alternative == "greater":
        return sums >= observed
    if alternative == "less":
        return sums <= observed
    return np.abs(2 * sums - twice_mean) >= abs(2 * observed - twice_mean)


class SumStatistic:
    """The statistic S itself (1-D integer local effects), compared in exact integers."""

    def __init__(self, effects: LocalEffects) -> None:
        self._summary = effects.summary
        self.value: int = int(effects.summary.observed)
        self._twice_mean = int(effects.summary.twice_mean)

    kind = "sum"

    def tilted(self, alternative: str) -> tuple[float, float]:
        p, log_p = _core.grouped_pvalue(self._summary, alternative)
        return float(p), float(log_p)

    def from_distribution(self, dist: Dist, alternative: str) -> float:
        assert isinstance(dist, Distribution)
        p, _ = _core.pvalue_from_distribution(dist.offset, dist.pmf, self.value, self._twice_mean, alternative)
        return float(p)

    def count(self, sums: np.ndarray, alternative: str) -> int:
        return int(np.count_nonzero(reject_sums(sums[:, 0], self.value, self._twice_mean, alternative)))


class RatioStatistic:
    """A difference of two ratios of affine functions of S (F-beta, precision, recall),
    compared by exact integer cross-multiplication in the core."""

    def __init__(self, value: float, core_args: Any, *, increasing_in_s: bool, summary: Any) -> None:
        self.value = value
        self._args: Any = core_args
        # Recall's difference is increasing in its 1-D S: the grouped engine's tails apply.
        self._increasing = increasing_in_s
        self._summary = summary

    kind = "tail"

    def tilted(self, alternative: str) -> tuple[float, float]:
        if self._increasing:
            p, log_p = _core.grouped_pvalue(self._summary, alternative)
            return float(p), float(log_p)
        # 2-D: each tail summed under its own exponential tilt (relative accuracy at any depth).
        p, log_p, certified = _core.ratio_tail_pvalue(self._summary, self._args, alternative)
        if not certified:
            raise TiltNotCertified()
        return float(p), float(log_p)

    def from_distribution(self, dist: Dist, alternative: str) -> float:
        offset = (dist.offset,) if isinstance(dist, Distribution) else dist.offset
        p, _ = _core.ratio_pvalue(offset, dist.pmf, self._args, alternative)
        return float(p)

    def count(self, sums: np.ndarray, alternative: str) -> int:
        return int(_core.ratio_count(np.ascontiguousarray(sums, dtype=np.int64), self._args, alternative))


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

    has_tilted = False

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

    def exact_or_tilted(self, alternative: str, method: str, n_resamples: int, seed: int, n_jobs: int) -> Any:
        return real_sum_pvalue(self._stay, self._swap, alternative=alternative, method=method,
                               n_resamples=n_resamples, seed=seed, rtol=self.rtol, n_threads=n_jobs,
                               scores=self._scores)

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
