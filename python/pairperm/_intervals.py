"""Confidence intervals that invert the paired-permutation test.

:func:`shift_interval` holds every shift ``delta`` of the per-item differences ``d = x - y``
that the sign-flip test of ``d - delta`` does not reject. Its endpoints are order statistics of
the ``2^N - 1`` subset means of ``d`` (Hartigan 1969), found exactly up to 40 items by the same
meet-in-the-middle count as the real-valued permutation test, exactly at any N for integer
differences with few distinct values by counting the subsets value by value (the lattice
route), and by the Lugannani-Rice saddlepoint approximation of that count otherwise. Units of
several items (groups) shift by their item counts times delta. The bootstrap's intervals are in
pairperm._resampling.
"""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist
from typing import Any, NamedTuple, Optional

import numpy as np

import pairperm._core as _core

from ._errors import SupportTooLargeError
from ._realvalued import REAL_MAX_EXACT
from ._results import ConfidenceInterval
from ._stats import multiset
from ._validation import (
    as_real_array,
    check_alternative,
    check_method,
    check_paired_index,
    check_probability,
    check_same_length,
)
from .typing import Alternative, ArrayLike, ShiftIntervalMethod

__all__ = ["ConfidenceInterval", "ShiftInterval", "shift_interval", "tail_level"]

SHIFT_METHODS = ("auto", "exact", "saddlepoint")

# "auto" is exact up to this many items: one endpoint takes ~45 meet-in-the-middle counts,
# each ~1.3 ms at 30 items but ~46 ms at 40 (measured), so 40 items cost seconds.
AUTO_EXACT_MAX = 30
# Bisection stops when the bracket is this narrow relative to the range of d: a few ulps of
# the subset sums' own round-off, below which the count itself is not resolved.
_BISECT_RTOL = 2.0**-44
_STANDARD_NORMAL = NormalDist()


class ShiftInterval(NamedTuple):
    """Inversion interval of the paired-permutation test for a shift of the differences.

    Attributes
    ----------
    mean_difference : ConfidenceInterval
        For the shift ``delta`` of every per-item difference: the mean of A minus the mean of B.
    sum_difference : ConfidenceInterval
        The same interval times N: for the sum of A minus the sum of B.
    method : str
        ``"exact"`` (endpoints are subset means: by meet in the middle, up to floating-point
        round-off for real differences; for integer differences, the exact fraction correctly
        rounded) or ``"saddlepoint"`` (Lugannani-Rice approximation of the test's count).
    """

    mean_difference: ConfidenceInterval
    sum_difference: ConfidenceInterval
    method: str


# ---------------------------------------------------------------- permutation inversion


def tail_level(confidence_level: float, alternative: str) -> Fraction:
    """Each end's exact level: alpha = 1 - confidence_level, split between two ends."""
    alpha = 1 - Fraction(confidence_level)
    return alpha / 2 if alternative == "two-sided" else alpha




def shift_interval(
    x: ArrayLike,
    y: Optional[ArrayLike] = None,
    *,
    confidence_level: float = 0.95,
    alternative: Alternative = "two-sided",
    method: ShiftIntervalMethod = "auto",
) -> ShiftInterval:
    """Confidence interval for a paired shift by inverting the paired-permutation test.

    With per-item differences ``d = x - y``, the interval holds every ``delta`` for which the
    sign-flip test of ``d - delta`` (p = P[S >= T], ties counting, as in
    :func:`pairperm.permutation_test`) is not rejected at level ``alpha = 1 - confidence_level``:

    - ``"greater"``: ``[L, inf)``, where ``L`` is the ``k``-th smallest of the ``2^N - 1``
      subset means of d with ``k = floor(alpha 2^N)`` (``-inf`` when ``k = 0``);
    - ``"less"``: ``(-inf, U]``, ``U`` the ``k``-th largest subset mean;
    - ``"two-sided"``: ``[L, U]``, the two one-sided bounds at ``alpha / 2`` each.

    A shift equal to a subset mean makes that subset's sum exactly 0, a tie, which counts as
    extreme: the endpoints belong to the interval. Items with ``d_n == delta`` are permuted like
    any other (flipping them changes nothing, so they scale both counts alike).

    Parameters
    ----------
    x, y : array_like, shape (N,)
        Per-item scores of systems A and B (integer or real), or, with ``y`` omitted, the
        differences ``d`` themselves (e.g. already summed per unit).
    confidence_level : float
        In (0, 1).
    alternative : {"two-sided", "greater", "less"}
        "greater": a lower bound (evidence that A > B shows as ``L > 0``); "less": an upper bound.
    method : {"auto", "exact", "saddlepoint"}
        "exact": bisection on delta, each step counting the subsets exactly, by one of two
        routes. Up to 40 items, by meet in the middle; the endpoints are the subset means up to
        round-off (relative ~1e-13 of the range of d). For integer differences with few
        distinct values, at any N, by value (the lattice route): a subset takes k of the c items
        of each value, and the product over all values but the most frequent of (c + 1) may be
        at most 20,000 (0/+-1 differences: up to about 140 items of each sign, however many
        zeros); the endpoints are the exact subset means, correctly rounded. Beyond both routes,
        "exact" raises :class:`pairperm.SupportTooLargeError`.
        "saddlepoint": the Lugannani-Rice approximation of the count, for any N (from N = 30
        on, its endpoints differ from the exact ones by well under 1% of the interval's width for
        differences spread over many values, but by 1-5% (up to 8%) for differences on a
        coarse lattice such as accuracy's 0/+-1, where an end near 0 can fall on the other side
        of 0 from the test's decision). "auto": meet in the middle up to 30 items; beyond, the
        lattice route where it applies and the saddlepoint elsewhere.

    Returns
    -------
    ShiftInterval

    Notes
    -----
    The lattice route decides every subset's side of delta exactly, in integers, so a subset
    whose mean equals delta always counts as a tie. Up to 63 items it also counts the subsets in
    integers and compares the count with ``alpha 2^N`` exactly. Beyond, it sums the subsets'
    probabilities (binomial probabilities, relative error ~1e-14) in float64 and compares that
    sum with the level: an end can differ from the exact one only where p(delta) comes within
    that round-off of the level. Levels such as 0.95 do not; round ones (1/2, 1/4, 1/8: a 50%,
    75% or 87.5% interval) can equal p exactly, so beyond 63 items levels that are multiples of
    2^-20 take the saddlepoint.

    Examples
    --------
    >>> import pairperm
    >>> x = [3, 5, 4, 6, 5, 7, 4, 6]
    >>> y = [2, 5, 3, 4, 5, 5, 4, 3]
    >>> r = pairperm.shift_interval(x, y, confidence_level=0.9)   # d = 1, 0, 1, 2, 0, 2, 0, 3
    >>> r.mean_difference, r.method            # the 12th smallest and largest of 255 subset means
    (ConfidenceInterval(low=0.3333333333333333, high=2.0), 'exact')
    >>> r.sum_difference                       # 8 items
    ConfidenceInterval(low=2.6666666666666665, high=16.0)

    One item can never reject at the 5% level, so nothing is excluded:

    >>> pairperm.shift_interval([2.5]).mean_difference
    ConfidenceInterval(low=-inf, high=inf)
    """
    func = "shift_interval"
    check_alternative(alternative, func)
    return differences_interval(_differences(x, y, func), confidence_level, alternative, method, func)


def differences_interval(d: np.ndarray, confidence_level: Any, alternative: str, method: str,
                         func: str, weights: Optional[np.ndarray] = None) -> ShiftInterval:
    """:func:`shift_interval` of the differences d (int64 or float64, 1-D), for callers whose
    scores are already validated (a result's ``confidence_interval``). With `weights`, d holds
    the differences summed over units of ``weights`` items each (positive integers): the
    interval is then of a shift of every item, which moves a unit's difference by its item count
    times the shift, and its ends are subset means ``sum d / sum weights``."""
    conf = check_probability(confidence_level, "confidence_level", func)
    check_method(method, SHIFT_METHODS, func)
    d = _checked_differences(d, func)
    n = len(d)
    assert conf is not None
    tail = tail_level(conf, alternative)
    if weights is not None and len(weights) and bool(np.all(weights == weights[0])):
        # Units of one size: the units' own interval, per item.
        r = differences_interval(d, confidence_level, alternative, method, func)
        items = int(weights.sum())
        return r._replace(mean_difference=ConfidenceInterval(r.sum_difference.low / items, r.sum_difference.high / items))
    if weights is not None:
        items = int(weights.sum())
        w = weights.astype(np.float64)
        if (method == "exact" and n <= REAL_MAX_EXACT) or (method == "auto" and n <= AUTO_EXACT_MAX):
            low, high = _counted_ends(d, tail, alternative, w)
            route = "exact"
        elif method == "exact":
            raise SupportTooLargeError(
                f"{func}: method='exact' with units of unequal size is limited to {REAL_MAX_EXACT} units (subsets "
                f"counted by meet in the middle); got {n} units. Use method='saddlepoint' (or 'auto').")
        else:
            low, high = _weighted_multiset_ends(d, w, tail, alternative)
            route = "saddlepoint"
        return ShiftInterval(ConfidenceInterval(low, high), _sum_ends(low, high, items, func), route)
    if (method == "exact" and n <= REAL_MAX_EXACT) or (method == "auto" and n <= AUTO_EXACT_MAX):
        low, high = _counted_ends(d, tail, alternative)
        route = "exact"
    else:
        # The lattice and saddlepoint routes need only the multiset of d, counted once for both ends.
        values, counts = multiset(d)
        lattice = method != "saddlepoint" and bool(_core.lattice_affordable(values, counts, float(tail)))
        if method == "exact" and not lattice:
            raise SupportTooLargeError(
                f"{func}: method='exact' is limited to N <= {REAL_MAX_EXACT} items (subsets counted by meet in the "
                f"middle) or to integer differences with few distinct values (subsets counted by value); got N = "
                f"{n} with {len(values)} distinct differences. Use method='saddlepoint' (or 'auto')."
            )
        low, high = _multiset_ends(values, counts, tail, alternative, lattice)
        route = "exact" if lattice else "saddlepoint"
    return ShiftInterval(
        mean_difference=ConfidenceInterval(low, high),
        sum_difference=_sum_ends(low, high, n, func),
        method=route,
    )


def batch_shift_bounds(matrix: np.ndarray, pairs: np.ndarray, confidence_level: float, alternative: str,
                       n_jobs: Optional[int]) -> np.ndarray:
    """The mean-difference ends (shape (P, 2)) of :func:`shift_interval` with method "auto" for
    the rows (i, j) of an int64 score matrix of more than AUTO_EXACT_MAX items, all pairs in one
    call of the core, bit for bit the single-pair route's; NaN where the differences reach 2^53."""
    assert matrix.dtype == np.int64 and matrix.shape[1] > AUTO_EXACT_MAX
    level = _ShiftLevel.of(tail_level(confidence_level, alternative), matrix.shape[1])
    return _core.batch_shift_bounds(matrix, np.ascontiguousarray(pairs, dtype=np.int64), *level,
                                    want_low=alternative != "less", want_high=alternative != "greater",
                                    n_threads=n_jobs or 0)


class _ShiftLevel(NamedTuple):
    """One end's level as the core compares with it, each part computed exactly from the tail."""

    tail: float
    z: float  # the normal quantile of 1 - tail, where the saddlepoint's search starts
    reject_exponent: int  # the least j with 2^-j <= tail: 2^(c - n) > tail exactly when n - c < j
    count_threshold: int  # floor(tail 2^n): a count of subsets c is kept when c > this (small n only)

    @classmethod
    def of(cls, tail: Fraction, n: int) -> _ShiftLevel:
        reject_exponent = 0
        while Fraction(1, 2**reject_exponent) > tail:
            reject_exponent += 1
        count_threshold = math.floor(tail * 2**n) if n <= _core.lattice_counted_items else 0
        return cls(float(tail), _STANDARD_NORMAL.inv_cdf(1 - float(tail)), reject_exponent, count_threshold)


def _differences(x: Any, y: Any, func: str) -> np.ndarray:
    """d = x - y (or x itself): int64 or float64."""
    if y is None:
        return as_real_array(x, "x", func)
    check_paired_index(x, y, ("x", "y"), func)
    xa = as_real_array(x, "x", func)
    ya = as_real_array(y, "y", func)
    check_same_length(xa, ya, "x", "y", func)
    d: np.ndarray = xa - ya
    return d


def _checked_differences(d: np.ndarray, func: str) -> np.ndarray:
    """d itself (int64, or finite float64) when it has items and integers stay below 2^53, where
    their float64 subset means are exact."""
    if len(d) == 0:
        raise ValueError(f"{func}: no items; the interval needs at least one paired difference")
    if d.dtype.kind in "iub":
        d = d.astype(np.int64)
        reach = max(-int(d.min()), int(d.max()))
        if reach >= 2**53:
            raise ValueError(f"{func}: the differences reach {reach}, beyond 2**53, where float64 subset means are no "
                             "longer exact")
        return d
    d = d.astype(np.float64)
    if not np.isfinite(d).all():
        raise ValueError(f"{func}: the differences x - y overflow float64 (at index {int(np.argmin(np.isfinite(d)))})")
    return d


def _sum_ends(low: float, high: float, items: int, func: str) -> ConfidenceInterval:
    """The summed difference's ends, `items` times the mean difference's: refused where that
    overflows float64, as the test itself refuses a statistic that does."""
    with np.errstate(over="ignore"):
        ends = ConfidenceInterval(items * low, items * high)
    if any(math.isinf(e) and math.isfinite(m) for e, m in zip(ends, (low, high))):
        raise ValueError(f"{func}: the interval of the summed difference x - y overflows float64 ({items} items times "
                         "a mean difference); divide x and y by a common factor such as 1e300 (the interval scales "
                         "with the units of the scores)")
    return ends


def _snap_to_subset_mean(v: float, denominator: int, width: float) -> float:
    """For integer differences an exact endpoint is a fraction s / j with j at most
    `denominator` (the items); the bisection lands within a few ulps of `width` (the range of
    the units' means) of it, far closer than the 1 / j^2 that separates such fractions, so the
    nearest one is the endpoint itself, correctly rounded."""
    if not math.isfinite(v):
        return v
    if width * 2.0**-40 * denominator * denominator >= 0.5:
        return v
    return float(Fraction(v).limit_denominator(denominator))


def _not_rejected(count_log2: int, n: int, tail: Fraction) -> bool:
    """Whether p = 2^count_log2 / 2^n exceeds the tail level (exactly; the p-value of a shift
    below every subset mean, or at the smallest difference)."""
    if n - count_log2 > 1100:  # below every positive float64
        return False
    return Fraction(2) ** (count_log2 - n) > tail


def _counted_ends(d: np.ndarray, tail: Fraction, alternative: str,
                  w: Optional[np.ndarray] = None) -> tuple[float, float]:
    """The ends by bisection with meet-in-the-middle counts (at most REAL_MAX_EXACT units; `w`:
    their item counts, None for one item each)."""
    # Work on d scaled by a power of two (exact) so that every subset sum stays finite and the
    # result is invariant under rescaling the scores: below 1 in magnitude, or below 2 where d
    # reaches 2^1023 and 2^1024 itself overflows.
    biggest = float(np.abs(d).max())
    scale = math.ldexp(1.0, min(math.frexp(biggest)[1], 1023)) if biggest > 0 else 1.0
    ds = d.astype(np.float64) / scale
    low = -math.inf if alternative == "less" else _lower_bound(ds, tail, w) * scale
    high = math.inf if alternative == "greater" else -_lower_bound(-ds, tail, w) * scale
    if bool(np.all(d == np.floor(d))):
        means = d if w is None else d / w
        items = len(d) if w is None else int(w.sum())
        low, high = (_snap_to_subset_mean(v, items, float(means.max() - means.min())) for v in (low, high))
    return low, high


def _weighted_multiset_ends(d: np.ndarray, w: np.ndarray, tail: Fraction, alternative: str) -> tuple[float, float]:
    """The ends for units of unequal item counts `w`, by the saddlepoint in the core: from the
    distinct pairs (d, w) in ascending order of their means d / w."""
    pairs, counts = np.unique(np.column_stack([d.astype(np.float64), w]), axis=0, return_counts=True)
    values, weights = pairs[:, 0], pairs[:, 1]
    order = np.argsort(values / weights, kind="stable")
    values, weights, counts = values[order], weights[order], counts[order].astype(np.float64)
    level = _ShiftLevel.of(tail, len(d))[:3]
    low = -math.inf if alternative == "less" else float(_core.weighted_shift_lower_end(values, counts, weights, *level))
    high = math.inf if alternative == "greater" else \
        0.0 - float(_core.weighted_shift_lower_end(-values[::-1], counts[::-1], weights[::-1], *level))
    return low, high


def _multiset_ends(values: np.ndarray, counts: np.ndarray, tail: Fraction, alternative: str,
                   lattice: bool) -> tuple[float, float]:
    """The ends from the multiset of d, in the core (as batch_shift_bounds finds them): by the
    lattice route, or by the Lugannani-Rice saddlepoint root in delta of log p(delta) = log tail
    on (min d, mean d), found by the Illinois variant of regula falsi started from the normal
    approximation, Newton's method for each shift's saddlepoint warm-started from the previous
    one, and the search stopped once the secant puts the root within 1e-12 of the range of d."""
    level = _ShiftLevel.of(tail, int(counts.sum()))
    low = -math.inf if alternative == "less" else float(_core.shift_lower_end(values, counts, *level, lattice))
    # 0 - x, not -x: an upper end of 0 reads 0.0, not -0.0 (as in the core's batch).
    high = math.inf if alternative == "greater" else \
        0.0 - float(_core.shift_lower_end(-values[::-1], counts[::-1], *level, lattice))
    return low, high


def _lower_bound(d: np.ndarray, tail: Fraction, w: Optional[np.ndarray] = None) -> float:
    """The smallest shift not rejected by the one-sided ("greater") test at level `tail`:
    p(delta) = #{subsets F : sum_F (d - w delta) <= 0} / 2^N is non-decreasing in delta, here
    counted exactly by meet in the middle (w: the units' item counts, None for 1)."""
    n = len(d)
    if _not_rejected(0, n, tail):
        return -math.inf  # only the empty subset lies below every shift, and that is enough
    # At the least mean d / w, exactly the subsets of the units with that mean have sum <= 0.
    means = d if w is None else d / w
    least = means.min()
    if _not_rejected(int(np.count_nonzero(means == least)), n, tail):
        return float(least)
    return _exact_lower_bound(d, tail, w)


def _exact_lower_bound(d: np.ndarray, tail: Fraction, w: Optional[np.ndarray] = None) -> float:
    """Bisection on delta; each step counts the subsets by meet in the middle (the real-valued
    permutation test's exact engine, with a tie slack of a few ulps)."""

    # A subset whose mean equals delta has sum exactly 0 (a tie), and so has the empty one, but
    # float sums of up to n terms in different orders miss 0 by up to ~n ulps of sum |d - delta|:
    # a slack of twice that keeps every exact tie a tie. States that close to a tie are rare and
    # move an endpoint by at most ~n^2 ulps of the range of d.
    rtol = 4.0 * len(d) * 2.0**-53

    def not_rejected(delta: float) -> bool:
        e = d - delta if w is None else d - w * delta
        _p, _log_p, hits, n_varying = _core.real_exact(e, -e, "greater", rtol)
        return Fraction(int(hits), 2 ** int(n_varying)) > tail

    means = d if w is None else d / w
    lo, hi = float(means.min()), float(math.fsum(d) / (len(d) if w is None else math.fsum(w)))
    # p(mean) >= 1/2 in exact arithmetic (a subset or its complement has sum <= 0); round-off
    # may say otherwise, and the largest mean is a certain upper end.
    if not not_rejected(hi):
        hi = float(means.max())
    tol = _BISECT_RTOL * (float(means.max()) - lo)
    while hi - lo > tol:
        mid = lo + (hi - lo) / 2
        if mid in (lo, hi):
            break
        if not_rejected(mid):
            hi = mid
        else:
            lo = mid
    return hi


