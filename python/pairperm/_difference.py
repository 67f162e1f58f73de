"""What a two-system result keeps to report its ``difference`` and ``confidence_interval``.

Each test attaches one of these small frozen records to its result; the result's
``confidence_interval(confidence_level, ...)`` asks it for the interval at the result's
alternative. They hold only what the interval needs, so results stay small when pickled:

- :class:`ShiftEffect`: the per-item differences ``d = x - y`` (pickled as their multiset:
  0/1 scores pickle three values and counts) for the sign-flip inversion interval of
  :func:`pairperm.shift_interval`, as a sum or a mean;
- :class:`OrderEffect`: the same differences for the distribution-free intervals of the
  sign test (order statistics of d: the median) and of the signed-rank test (order statistics
  of the Walsh averages: the Hodges-Lehmann estimate);
- :class:`BootstrapEffect`: both systems' per-item sufficient statistics, the metric and a
  seed, for the paired bootstrap of :func:`pairperm.bootstrap_intervals`.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from statistics import NormalDist
from typing import Any, Callable, Optional, Union

import numpy as np

import pairperm._core as _core

from ._intervals import differences_interval, tail_level
from ._resampling import bootstrap_intervals
from ._results import ConfidenceInterval, instance_maker
from ._validation import N_RESAMPLES, check_probability
from .typing import BootstrapIntervalMethod

__all__ = ["BootstrapEffect", "OrderEffect", "ShiftEffect"]

# The signed-rank interval uses the exact null of the rank sum up to this many items (its
# counts stay below 2^63); beyond, the normal approximation with a continuity correction.
WALSH_EXACT_MAX = 50
# Up to this many items the Walsh averages are listed and partitioned (n(n+1)/2 floats);
# beyond, a window around an order statistic is found by bisection with an O(n log n) count
# per step (listing 500,000 averages costs as much as a bisection at 10^4 items).
_WALSH_LISTED_MAX = 200
# The sign test's interval sums exact binomial coefficients up to this many items (~10 ms at
# 5000); beyond, the normal approximation with a continuity correction.
SIGN_EXACT_MAX = 5000
_STANDARD_NORMAL = NormalDist()


def _no_options(options: dict, what: str) -> None:
    if options:
        raise ValueError(f"confidence_interval: the {what} interval takes no option "
                         f"{', '.join(map(repr, sorted(options)))}")


def _tail(confidence_level: Any, alternative: str) -> Fraction:
    conf = check_probability(confidence_level, "confidence_level", "confidence_interval")
    assert conf is not None
    return tail_level(conf, alternative)


class _Differences:
    """Per-item differences d = x - y, the result's own (never a view of the caller's scores,
    which may change after the test), kept as given (no sort while the test runs) and pickled
    as their multiset: the distinct values and their counts where values repeat (0/1 scores
    pickle three numbers), the values alone otherwise. The integer test's core writes them as
    int8 into a bytes object in its summary pass; they read as int64, so that no sum over them
    can wrap."""

    __slots__ = ("_d",)

    def __init__(self, d: Union[np.ndarray, bytes]) -> None:
        self._d = d

    @property
    def d(self) -> np.ndarray:
        if isinstance(self._d, bytes):
            self._d = np.frombuffer(self._d, dtype=np.int8).astype(np.int64)
        return self._d

    def __getstate__(self) -> dict:
        values, counts = np.unique(self.d, return_counts=True)
        if 2 * len(values) <= len(self.d):
            return {"values": values, "counts": counts.astype(np.int64)}
        return {"values": self.d}

    def __setstate__(self, state: dict) -> None:
        counts = state.get("counts")
        self._d = state["values"] if counts is None else np.repeat(state["values"], counts)


@dataclasses.dataclass(frozen=True)
class ShiftEffect:
    """The permutation-test inversion interval of the summed (``per="sum"``) or mean
    (``per="mean"``) per-item difference."""

    differences: _Differences
    per: str
    # Scored items behind the differences when these are sums over units (groups, or k
    # samples per item): a mean per item divides by them, not by the number of units.
    n_items: int = 0
    # The item count of each unit when units differ in size: shifting every item by delta
    # moves a unit's difference by its count times delta (None: units of one size).
    sizes: Optional[np.ndarray] = dataclasses.field(default=None, compare=False)

    @staticmethod
    def of(d: Union[np.ndarray, bytes], per: str, n_items: int = 0,
           sizes: Optional[np.ndarray] = None) -> ShiftEffect:
        # On the integer test's hot path: made without the dataclass's __init__.
        if sizes is not None and (len(sizes) == 0 or bool(np.all(sizes == sizes[0]))):
            sizes = None
        return _make_shift_effect(_Differences(d), per, n_items if n_items and n_items != len(d) else 0, sizes)

    def per_item(self, total: float) -> tuple[float, ShiftEffect]:
        """The mean difference from the summed one `total`, and the interval of that mean."""
        return total / (self.n_items or len(self.differences.d)), dataclasses.replace(self, per="mean")

    def interval(self, confidence_level: Any, alternative: str, method: str = "auto",
                 **options: Any) -> ConfidenceInterval:
        _no_options(options, "permutation-inversion")
        r = differences_interval(self.differences.d, confidence_level, alternative, method, "confidence_interval",
                                 weights=self.sizes)
        if self.per == "sum":
            return r.sum_difference
        if self.n_items and self.sizes is None:  # units of one size: the summed difference's interval, per item
            return ConfidenceInterval(r.sum_difference.low / self.n_items, r.sum_difference.high / self.n_items)
        return r.mean_difference


_make_shift_effect = instance_maker(ShiftEffect, "differences", "per", "n_items", "sizes")


@dataclasses.dataclass(frozen=True)
class OrderEffect:
    """Distribution-free interval from order statistics: of d itself (``kind="sign"``, the
    inverted sign test) or of its Walsh averages (``kind="walsh"``, the inverted signed-rank
    test). For differences summed over units of ``sizes`` items, a shift delta of every item
    moves unit u's difference by ``sizes[u] * delta``, so the sign of unit u changes at its mean
    ``d_u / sizes[u]`` and the sign of a Walsh sum at ``(d_u + d_v) / (sizes[u] + sizes[v])``:
    the order statistics are of those means."""

    differences: _Differences
    kind: str
    sizes: Optional[np.ndarray] = dataclasses.field(default=None, compare=False)

    @classmethod
    def of(cls, d: np.ndarray, kind: str, sizes: Optional[np.ndarray] = None) -> OrderEffect:
        d = np.asarray(d, dtype=np.float64)
        if sizes is not None and (len(sizes) == 0 or bool(np.all(sizes == sizes[0]))):
            # Units of one size: the order statistics of their means are those of d, scaled.
            d, sizes = (d / sizes[0] if len(sizes) else d), None
        return cls(_Differences(d), kind, None if sizes is None else np.asarray(sizes, dtype=np.int64))

    def _pick(self) -> tuple[int, Callable[[int], float]]:
        """(how many order statistics, the k-th smallest of them, 1-based)."""
        d = self.differences.d
        if self.sizes is not None:
            if self.kind == "sign":
                means = np.sort(d / self.sizes)
                return len(means), lambda k: float(means[k - 1])
            return len(d) * (len(d) + 1) // 2, lambda k: weighted_walsh_order_statistic(d, self.sizes, k)
        d = np.sort(d)
        if self.kind == "sign":
            return len(d), lambda k: float(d[k - 1])
        return len(d) * (len(d) + 1) // 2, lambda k: walsh_order_statistic(d, k)

    def estimate(self) -> float:
        """The median of d (sign) or of its Walsh averages (Hodges-Lehmann), per item; NaN
        without items."""
        if len(self.differences.d) == 0:
            return math.nan
        if self.kind == "sign" and self.sizes is None:
            return float(np.median(self.differences.d))  # by partition: no sort while the test runs
        m, pick = self._pick()
        return pick((m + 1) // 2) if m % 2 else (pick(m // 2) + pick(m // 2 + 1)) / 2

    def interval(self, confidence_level: Any, alternative: str, **options: Any) -> ConfidenceInterval:
        _no_options(options, "signed-rank" if self.kind == "walsh" else "sign-test")
        tail = _tail(confidence_level, alternative)
        m, pick = self._pick()
        c = _critical_value(len(self.differences.d), self.kind, tail)
        if c > m:  # no order statistic is excluded at this level
            return ConfidenceInterval(-math.inf, math.inf)
        low = -math.inf if alternative == "less" else pick(m + 1 - c)
        high = math.inf if alternative == "greater" else pick(c)
        return ConfidenceInterval(low, high)


def _count(n: int, kind: str) -> int:
    """How many order statistics there are: n values, or n(n+1)/2 Walsh averages."""
    return n if kind == "sign" else n * (n + 1) // 2


def _critical_value(n: int, kind: str, tail: Fraction) -> int:
    """The smallest t with P[T >= t] <= tail for the null statistic T (the count of positive
    differences, or the signed-rank sum with ranks 1..n), symmetric on 0..M.

    The statistic of a shift delta between order statistics is the number of values (d or
    Walsh averages) above delta, so delta is rejected by the one-sided test exactly below the
    (M + 1 - c)-th smallest value and above the c-th."""
    exact = n <= (SIGN_EXACT_MAX if kind == "sign" else WALSH_EXACT_MAX)
    m = _count(n, kind)
    if exact:
        counts = _binomial_counts(n) if kind == "sign" else _signed_rank_counts(n)
        budget = tail * 2**n  # P[T >= t] <= tail  <=>  #patterns with T >= t <= tail 2^n
        above, t = 0, m + 1
        while t > 0 and above + counts[t - 1] <= budget:
            above += counts[t - 1]
            t -= 1
        return t
    var = n / 4 if kind == "sign" else n * (n + 1) * (2 * n + 1) / 24
    z = _STANDARD_NORMAL.inv_cdf(1 - float(tail))
    return min(m + 1, max(0, math.ceil(m / 2 + 0.5 + z * math.sqrt(var))))


def _binomial_counts(n: int) -> list[int]:
    out = [1]
    for i in range(n):
        out.append(out[-1] * (n - i) // (i + 1))
    return out


def _signed_rank_counts(n: int) -> list[int]:
    """Sign patterns of ranks 1..n by their sum of positive ranks (exact below 2^63)."""
    counts = np.zeros(n * (n + 1) // 2 + 1, dtype=np.int64)
    counts[0] = 1
    top = 0
    for r in range(1, n + 1):
        counts[r:top + r + 1] += counts[:top + 1].copy()
        top += r
    return [int(c) for c in counts]


def walsh_order_statistic(sorted_d: np.ndarray, k: int) -> float:
    """The k-th smallest (1-based) of the Walsh averages (d_i + d_j) / 2, i <= j, of sorted d.

    Up to 200 items all of them are listed. Beyond, bisection on the value v narrows a window
    (lo, hi] holding the k-th, counting the pairs below v by comparing d_j with 2 v - d_i
    (O(n) per step, in the core), until the window holds at most 4n pairs, which are then
    listed. A pair whose float sum lies within an ulp of 2 lo may be counted on the other side
    of lo, so the result may then differ from the listed one by an adjacent Walsh average;
    such pairs are rare, and the large-n interval is a normal approximation anyway.
    """
    return float(_core.walsh_order_statistic(np.ascontiguousarray(sorted_d, dtype=np.float64), int(k),
                                             _WALSH_LISTED_MAX))


def weighted_walsh_order_statistic(d: np.ndarray, sizes: np.ndarray, k: int) -> float:
    """The k-th smallest (1-based) of the means ``(d_u + d_v) / (sizes[u] + sizes[v])``, u <= v,
    of differences summed over units. Up to 2,000 units all of them are listed. Beyond, by
    bisection on the value v: a pair's mean is at most v exactly when e_u + e_v <= 0 for
    e = d - sizes v, so each step counts such pairs among the sorted e (O(U log U)), until the
    bracket closes to adjacent floats."""
    d = np.asarray(d, dtype=np.float64)
    w = np.asarray(sizes, dtype=np.float64)
    n = len(d)
    if n <= 2000:
        iu, ju = np.triu_indices(n)
        means = (d[iu] + d[ju]) / (w[iu] + w[ju])
        return float(np.partition(means, k - 1)[k - 1])

    def at_most(v: float) -> int:
        e = np.sort(d - w * v)
        # For each u, the v >= u (in sorted order) with e_u + e_v <= 0.
        reach = np.searchsorted(e, -e, side="right") - np.arange(n)
        return int(np.maximum(reach, 0).sum())

    unit_means = d / w
    lo, hi = float(unit_means.min()), float(unit_means.max())  # every pair's mean lies between
    if at_most(lo) >= k:
        return lo
    while True:
        mid = lo + (hi - lo) / 2
        if mid in (lo, hi):
            return hi
        if at_most(mid) >= k:
            hi = mid
        else:
            lo = mid


@dataclasses.dataclass(frozen=True)
class BootstrapEffect:
    """Paired bootstrap interval of ``metric(A) - metric(B)`` over resamples of the items,
    drawn from ``seed`` so that the same result always gives the same interval."""

    stats_a: np.ndarray
    stats_b: np.ndarray
    metric: Union[str, Callable[[np.ndarray], np.ndarray]]
    seed: int
    beta: float = 1.0
    zero_division: float = 0.0

    def __post_init__(self) -> None:
        # The statistics read may be the caller's arrays, which may change once the test has
        # returned: the interval resamples copies.
        object.__setattr__(self, "stats_a", np.array(self.stats_a))
        object.__setattr__(self, "stats_b", np.array(self.stats_b))

    def interval(self, confidence_level: Any, alternative: str, method: BootstrapIntervalMethod = "percentile",
                 n_resamples: int = N_RESAMPLES, **options: Any) -> ConfidenceInterval:
        _no_options(options, "bootstrap")
        r = bootstrap_intervals([self.stats_a, self.stats_b], self.metric, method=method,
                                confidence_level=confidence_level, alternative=alternative,  # type: ignore[arg-type]
                                n_resamples=n_resamples,
                                rng=np.random.default_rng(self.seed), beta=self.beta,
                                zero_division=self.zero_division)
        low, high = r.difference_intervals[0]
        return ConfidenceInterval(float(low), float(high))
