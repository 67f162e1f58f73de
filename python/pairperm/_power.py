"""Exact power, sample size and minimum detectable effect of McNemar's exact test.

On 0/1 scores :func:`pairperm.mcnemar_test` and :func:`pairperm.permutation_test` run the
exact sign-flip test of the discordant items: with d items on which the systems disagree and
b of them won by A, the null law of b is Binomial(d, 1/2), and the p-values are

* "greater": P(B >= b);  "less": P(B <= b);
* "two-sided": P(|2B - d| >= |2b - d|), which is 1 when 2b = d and otherwise
  2 P(B >= max(b, d - b)), the doubled tail of the larger count (ties of |2B - d| counted).

A test "rejects at level alpha" when its p-value is <= alpha, so for every d the rejection
region is {b >= k_d} (and its mirror {b <= d - k_d} when two-sided) with k_d the smallest k
such that P(B >= k) <= alpha (alpha / 2 when two-sided: the doubling is exact in floating
point). Items are drawn independently, each won by A only with probability p10, by B only
with p01, so d ~ Binomial(n, p10 + p01) and, given d, b ~ Binomial(d, p10 / (p10 + p01));
the power is the sum over d of P(d) P(b in the region | d).

Numerics. Binomial probabilities use Loader's saddle-point form (stirlerr and bd0), accurate
to a few ulps in relative terms at any size, where differences of log-factorials lose ~1e-9
at 10^6. Thresholds for d <= 62 are found in exact rational arithmetic; above, the tails
P(B >= k_d) are carried along the path of thresholds by the recurrences

    T(d + 1, k) = T(d, k) + pi pmf_d(k - 1),    T(d + 1, k + 1) = T(d, k) - (1 - pi) pmf_d(k),

started from one directly summed tail, so each d costs O(1) instead of O(sqrt d). The
absolute error grows by ~1e-16 per step (~1e-12 over 10^4 values of d): only a p-value
within that of alpha could be decided differently from the exact rational answer. The sum
over d is cut to nq +- t with Bernstein's inequality bounding each side's left-out mass by
0.5e-16, so the power is accurate to ~1e-12 in absolute terms.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from fractions import Fraction
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Optional

import numpy as np

from ._validation import check_alternative
from .typing import Alternative

__all__ = [
    "PairedBinaryPower",
    "discordance_bounds",
    "discordance_from_accuracies",
    "minimum_detectable_effect_paired_binary",
    "power_bounds_from_accuracies",
    "power_paired_binary",
    "sample_size_paired_binary",
]

CORRECTIONS = (None, "bonferroni", "holm", "maxT")
# Largest d whose thresholds are decided in exact rational arithmetic (cheap: d + 1 binomial
# coefficients per d); above it the floating-point path recurrence takes over.
_EXACT_D = 62
# Bernstein cut of the sum over d: each side leaves out at most this much probability.
_SIDE_MASS = 0.5e-16
_LOG_SIDE = math.log(1 / _SIDE_MASS)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
# stirlerr(k) = log k! - log(sqrt(2 pi k) (k / e)^k), tabulated where its series is not yet accurate.
_STIRLERR_TABLE = np.array([0.0] + [math.lgamma(k + 1) - (k + 0.5) * math.log(k) + k - _LOG_SQRT_2PI
                                    for k in range(1, 16)])
_MAX_N = 10**9


@dataclasses.dataclass(frozen=True)
class PairedBinaryPower:
    """Exact operating characteristics of McNemar's exact test for one design.

    ``power``: probability of rejecting. ``type_s``: probability that a rejection points the
    wrong way (the sign of b - c opposite to that of p10 - p01), given a rejection.
    ``type_m``: E[abs(observed accuracy difference) | reject] / abs(p10 - p01), the expected
    exaggeration of a significant difference. Both are NaN where undefined (no true
    difference, or power 0). ``level``: the per-comparison level the test is run at
    (alpha / comparisons under a correction). ``lower_bound``: True under Holm, whose first
    step is the Bonferroni level, and under maxT, tested at the level of independent
    comparisons, so the power computed at that level is a lower bound.
    """

    power: float
    n: int
    p10: float
    p01: float
    alpha: float
    alternative: str
    type_s: float
    type_m: float
    comparisons: int = 1
    correction: Optional[str] = None
    level: float = 0.05
    lower_bound: bool = False


# ---------------------------------------------------------------- binomial probabilities

def _stirlerr(k: np.ndarray) -> np.ndarray:
    kf = np.maximum(k, 1).astype(np.float64)
    inv2 = 1.0 / (kf * kf)
    series = (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - inv2 / 1188) * inv2) * inv2) * inv2) / kf
    out: np.ndarray = np.where(k < 16, _STIRLERR_TABLE[np.clip(k, 0, 15)], series)
    return out


def _bd0(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """x log(x / m) + m - x, written as m h(u), u = x/m - 1, so x near m keeps its accuracy."""
    with np.errstate(divide="ignore", invalid="ignore"):
        u = (x - m) / m
        return np.where(x == 0, m, m * ((1 + u) * np.log1p(u) - u))


def _log_pmf(k: np.ndarray, d: np.ndarray, p: float) -> np.ndarray:
    """log Binomial(k; d, p) elementwise (Loader 2000); -inf outside 0 <= k <= d."""
    k, d = np.broadcast_arrays(np.asarray(k, dtype=np.int64), np.asarray(d, dtype=np.int64))
    if p in (0.0, 1.0):  # a point mass at 0 or d
        return np.where(k == (d if p == 1.0 else 0), 0.0, -np.inf)
    df, kf = d.astype(np.float64), k.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = (_stirlerr(d) - _stirlerr(k) - _stirlerr(d - k) - _bd0(kf, df * p) - _bd0(df - kf, df * (1 - p))
                 + 0.5 * np.log(df / (kf * (df - kf))) - _LOG_SQRT_2PI)
        out = np.where(k == 0, df * math.log1p(-p), np.where(k == d, df * math.log(p), inner))
    return np.where((k < 0) | (k > d), -np.inf, out)


def _pmf(k: np.ndarray, d: np.ndarray, p: float) -> np.ndarray:
    out: np.ndarray = np.exp(_log_pmf(k, d, p))
    return out


def _upper_tails(d: int, ks: np.ndarray, p: float) -> np.ndarray:
    """P(Binomial(d, p) >= k) for each k, summed directly over the non-negligible support."""
    sd = math.sqrt(d * p * (1 - p))
    lo = max(0, math.floor(d * p - 15 * sd - 15))
    hi = min(d, math.ceil(d * p + 15 * sd + 15))
    support = np.arange(lo, hi + 1)
    tails = np.cumsum(_pmf(support, np.int64(d), p)[::-1])[::-1]
    tails = np.append(tails, 0.0)
    out: np.ndarray = np.where(ks <= lo, tails[0], tails[np.clip(ks - lo, 0, len(tails) - 1)])
    return out


# ---------------------------------------------------------------- rejection thresholds

@lru_cache(maxsize=64)
def _exact_thresholds(level: float) -> tuple[int, ...]:
    """k_d for d = 0.._EXACT_D: smallest k with P(Binomial(d, 1/2) >= k) <= level, compared
    as exact rationals (level is the float's exact value)."""
    bound = Fraction(level)
    out = []
    for d in range(_EXACT_D + 1):
        tail, k = 0, d + 1  # tail = 2^d P(B >= k)
        while k > 0 and Fraction(tail + math.comb(d, k - 1), 2**d) <= bound:
            k -= 1
            tail += math.comb(d, k)
        out.append(k)
    return tuple(out)


def _float_thresholds(d0: int, d1: int, level: float) -> np.ndarray:
    """k_d for d = d0..d1 (d0 > _EXACT_D): the null tail is carried along a normal-approximation
    path of slope 0 or 1, then the exact threshold is looked up in a window around it."""
    d = np.arange(d0, d1 + 1)
    z = NormalDist().inv_cdf(1 - level)
    guess = np.minimum(d + 1, np.ceil(d / 2 + 0.5 + z * np.sqrt(d) / 2)).astype(np.int64)
    guess = np.maximum.accumulate(guess)
    path = d + np.minimum.accumulate(guess - d)  # non-decreasing, steps of at most 1
    tail = _carry_tail(d, path, 0.5, float(_upper_tails(d0, np.array([path[0]]), 0.5)[0]))
    width = 3  # the continuity-corrected normal guess is within a step or two of k_d (wider on a miss)
    while True:
        pmf = _pmf_run(d, path - width, 2 * width)  # pmf at path + j, j = -width .. width - 1
        # T(d, path + j) for j = -width .. width: T(path) plus the pmf between.
        below = tail[:, None] + np.cumsum(pmf[:, :width][:, ::-1], axis=1)[:, ::-1]
        above = tail[:, None] - np.cumsum(pmf[:, width:], axis=1)
        window = np.concatenate([below, tail[:, None], above], axis=1)
        # k > d is in the region (T = 0) even where the carried tail rounds to a speck above 0.
        inside = (window <= level) | (path[:, None] + np.arange(-width, width + 1)[None, :] > d[:, None])
        if not inside[:, 0].any() and inside[:, -1].all():
            thresholds: np.ndarray = path + np.argmax(inside, axis=1) - width
            return thresholds
        width *= 2


def _pmf_run(d: np.ndarray, start: np.ndarray, count: int) -> np.ndarray:
    """Binomial(d, 1/2) pmf at start_d + j, j = 0..count-1 (rows: d), from the first by the ratio
    pmf(k + 1) / pmf(k) = (d - k) / (k + 1): one saddle-point evaluation per row."""
    if (start < 0).any():  # rows reaching below 0: evaluate every entry
        return _pmf(start[:, None] + np.arange(count)[None, :], d[:, None], 0.5)
    k = start[:, None] + np.arange(count - 1)[None, :]
    ratio = np.maximum(d[:, None] - k, 0) / (k + 1)
    first = _pmf(start, d, 0.5)[:, None]
    return np.concatenate([first, first * np.cumprod(ratio, axis=1)], axis=1)


def _carry_tail(d: np.ndarray, path: np.ndarray, p: float, start: float) -> np.ndarray:
    """T(d, path_d) = P(Binomial(d, p) >= path_d) along a path with steps 0 or 1, from T at d[0]."""
    step = np.diff(path)
    k_pmf = np.where(step == 0, path[:-1] - 1, path[:-1])
    inc = _pmf(k_pmf, d[:-1], p) * np.where(step == 0, p, -(1 - p))
    out = np.empty(len(d))
    out[0] = start
    out[1:] = start + np.cumsum(inc)
    return np.clip(out, 0.0, 1.0)


def _thresholds(d0: int, d1: int, level: float) -> np.ndarray:
    exact = np.array(_exact_thresholds(level), dtype=np.int64)
    if d1 <= _EXACT_D:
        return exact[d0:d1 + 1]
    head = exact[d0:] if d0 <= _EXACT_D else np.zeros(0, dtype=np.int64)
    return np.concatenate([head, _float_thresholds(max(d0, _EXACT_D + 1), d1, level)])


def _region_tails(d: np.ndarray, k: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """(P(B >= k_d), E[(2B - d) 1{B >= k_d}]) for B ~ Binomial(d, p), d consecutive."""
    small = d <= _EXACT_D
    tail = np.empty(len(d))
    if small.any():
        ds, ks = d[small], k[small]
        b = np.arange(_EXACT_D + 1)
        pmf = np.where(b[None, :] >= ks[:, None], _pmf(b[None, :], ds[:, None], p), 0.0)
        tail[small] = pmf.sum(axis=1)
    if (~small).any():
        dl, kl = d[~small], k[~small]
        tail[~small] = _carry_tail(dl, kl, p, float(_upper_tails(int(dl[0]), kl[:1], p)[0]))
    # E[B 1{B >= k}] = d p P(Binomial(d - 1, p) >= k - 1) = d p T(d, k) + (1 - p) k pmf_d(k).
    mean_b = d * p * tail + (1 - p) * k * _pmf(k, d, p)
    return tail, 2 * mean_b - d * tail


# ---------------------------------------------------------------- the sum over d

def _d_window(n: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray]:
    """[lo, hi] holding all but 1e-16 of Binomial(n, q): Bernstein's inequality
    P(D - nq >= t) <= exp(-t^2 / (2 (nq(1-q) + t/3))) solved for t at 0.5e-16 per side."""
    var = n * q * (1 - q)
    t = _LOG_SIDE / 3 + np.sqrt(_LOG_SIDE**2 / 9 + 2 * _LOG_SIDE * var)
    lo = np.maximum(0, np.floor(n * q - t)).astype(np.int64)
    hi = np.minimum(n, np.ceil(n * q + t)).astype(np.int64)
    return lo, hi


class _Conditional:
    """Per-d rejection probabilities and |b - c| sums of one design, for d in [d0, d1]."""

    def __init__(self, d0: int, d1: int, p10: float, p01: float, level: float, alternative: str) -> None:
        self.d0, self.d1 = d0, d1
        q = p10 + p01
        pi = p10 / q if q > 0 else 0.5
        d = np.arange(d0, d1 + 1)
        k = _thresholds(d0, d1, level / 2 if alternative == "two-sided" else level)
        zeros = np.zeros(len(d))
        up, up_m = _region_tails(d, k, pi) if alternative != "less" else (zeros, zeros)
        down, down_m = _region_tails(d, k, 1 - pi) if alternative != "greater" else (zeros, zeros)
        self.reject, self.gap = up + down, up_m + down_m
        self.wrong = down if p10 > p01 else up if p10 < p01 else zeros

    def mix(self, n: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(power, P(wrong-way rejection), E[|b - c| 1{reject}]) for each n."""
        lo, hi = _d_window(n, q)
        width = int((hi - lo).max()) + 1
        d = lo[:, None] + np.arange(width)[None, :]
        weight = np.where(d <= hi[:, None], _pmf(np.minimum(d, n[:, None]), n[:, None], q), 0.0)
        idx = np.clip(d - self.d0, 0, self.d1 - self.d0)
        return ((weight * self.reject[idx]).sum(axis=1), (weight * self.wrong[idx]).sum(axis=1),
                (weight * self.gap[idx]).sum(axis=1))


# ---------------------------------------------------------------- checks

def _check_prob(value: Any, name: str, func: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= float(value) <= 1:
        raise ValueError(f"{func}: {name} must be a probability in [0, 1]; got {value!r}")
    return float(value)


def _check_design(p10: Any, p01: Any, alpha: Any, alternative: Any, comparisons: Any, correction: Any,
                  func: str) -> tuple[float, float, float, float]:
    """(p10, p01, alpha, the per-comparison level)."""
    p10, p01 = _check_prob(p10, "p10", func), _check_prob(p01, "p01", func)
    if p10 + p01 > 1 + 1e-12:
        raise ValueError(f"{func}: p10 + p01 is the probability of a discordant item and must be <= 1; "
                         f"got {p10} + {p01} = {p10 + p01}")
    check_alternative(alternative, func)
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < float(alpha) < 1:
        raise ValueError(f"{func}: alpha must be in (0, 1); got {alpha!r}")
    alpha = float(alpha)
    if alternative != "two-sided" and alpha >= 0.5:
        raise ValueError(f"{func}: a one-sided test at alpha >= 0.5 rejects outcomes that favour the other system; "
                         f"got alpha={alpha}")
    if isinstance(comparisons, bool) or not isinstance(comparisons, numbers.Integral) or int(comparisons) < 1:
        raise ValueError(f"{func}: comparisons must be a positive integer; got {comparisons!r}")
    if correction not in CORRECTIONS:
        raise ValueError(f"{func}: correction must be None, 'bonferroni', 'holm' or 'maxT'; got {correction!r}")
    if correction is None and int(comparisons) > 1:
        raise ValueError(f"{func}: comparisons={comparisons} needs correction='bonferroni', 'holm' or 'maxT' "
                         "(the level each comparison is tested at)")
    m = int(comparisons)
    # maxT's single-step level is that of the maximum of the comparisons' statistics; by Sidak's
    # inequality (two-sided normal statistics, any correlation) it is at least 1 - (1 - alpha)^(1/m),
    # which independent comparisons attain, and the step-down rejects at least what it rejects.
    level = -math.expm1(math.log1p(-alpha) / m) if correction == "maxT" else alpha / m
    # An excess within round-off (e.g. from accuracies that leave no concordant item) is trimmed.
    return p10, min(p01, 1 - p10), alpha, level


def _check_n(n: Any, func: str) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= int(n) <= _MAX_N:
        raise ValueError(f"{func}: n must be an integer number of items between 1 and {_MAX_N}; got {n!r}")
    return int(n)


def _check_target(power: Any, func: str) -> float:
    if isinstance(power, bool) or not isinstance(power, numbers.Real) or not 0 < float(power) < 1:
        raise ValueError(f"{func}: power must be in (0, 1); got {power!r}")
    return float(power)


# ---------------------------------------------------------------- power

def _summarise(n: int, p10: float, p01: float, alpha: float, alternative: str, comparisons: int,
               correction: Optional[str], level: float, power: float, wrong: float, gap: float) -> PairedBinaryPower:
    delta = abs(p10 - p01)
    defined = power > 0 and delta > 0
    type_s = min(1.0, max(0.0, wrong / power)) if defined else math.nan
    type_m = gap / n / power / delta if defined else math.nan
    return PairedBinaryPower(min(1.0, max(0.0, power)), n, p10, p01, alpha, alternative, type_s, type_m,
                             comparisons, correction, level, correction in ("holm", "maxT"))


def power_paired_binary(n: int, p10: float, p01: float, *, alpha: float = 0.05, alternative: Alternative = "two-sided",
                        comparisons: int = 1, correction: Optional[str] = None) -> PairedBinaryPower:
    """Exact power of McNemar's exact test (:func:`pairperm.mcnemar_test`) on n paired items.

    Parameters
    ----------
    n : int
        Number of test items.
    p10, p01 : float
        Probability that an item is right for A and wrong for B (p10), and the reverse (p01).
        The accuracy difference is ``p10 - p01``; the discordance ``p10 + p01`` is
        1 - the agreement of the two systems.
    alpha : float
        Level of each test: it rejects when its p-value is <= alpha (exact inequality).
    alternative : {"two-sided", "greater", "less"}
        As in :func:`pairperm.mcnemar_test`; "greater": A is the better system.
    comparisons, correction :
        With ``correction="bonferroni"`` each comparison is tested at alpha / comparisons.
        With "holm" the same level is used: it is Holm's first and strictest step, so the
        power returned is a lower bound on the power under Holm (``lower_bound=True``). With
        "maxT" (Westfall-Young, as :func:`pairperm.compare_systems` runs it) each comparison
        is tested at 1 - (1 - alpha)^(1/comparisons), the level of independent comparisons:
        by Sidak's inequality the max-t level of correlated normal statistics is no lower,
        so this too is a lower bound (for large samples, where the statistics are close to
        normal).

    Returns
    -------
    PairedBinaryPower
        power, type-S error and type-M exaggeration ratio, all computed exactly by the same
        sum over the number of discordant items (see the module notes for the accuracy).

    Examples
    --------
    >>> import pairperm
    >>> r = pairperm.power_paired_binary(500, 0.0225, 0.0025)     # accuracies 0.82 vs 0.80, agreement 0.975
    >>> print(f"{r.power:.3f}")
    0.798
    """
    func = "power_paired_binary"
    n = _check_n(n, func)
    p10, p01, alpha, level = _check_design(p10, p01, alpha, alternative, comparisons, correction, func)
    q = p10 + p01
    lo, hi = _d_window(np.array([n]), q)
    cond = _Conditional(int(lo[0]), int(hi[0]), p10, p01, level, alternative)
    power, wrong, gap = (float(v[0]) for v in cond.mix(np.array([n]), q))
    return _summarise(n, p10, p01, alpha, alternative, int(comparisons), correction, level, power, wrong, gap)


# ---------------------------------------------------------------- sample size

class _PowerCurve:
    """Exact power of one design as a function of n."""

    def __init__(self, p10: float, p01: float, level: float, alternative: str) -> None:
        self.p10, self.p01, self.level, self.alternative = p10, p01, level, alternative
        self.q = p10 + p01

    def __call__(self, ns: np.ndarray) -> np.ndarray:
        # The per-d table spans only the d that these n can reach: memory stays O(sqrt n).
        lo, hi = _d_window(ns, self.q)
        cond = _Conditional(int(lo.min()), int(hi.max()), self.p10, self.p01, self.level, self.alternative)
        return cond.mix(ns, self.q)[0]

    def at(self, n: int) -> float:
        return float(self(np.array([n]))[0])


def _first_crossing(curve: _PowerCurve, target: float, guess: int, func: str) -> int:
    """An n with power(n - 1) < target <= power(n), by doubling from the normal-approximation
    guess and bisection (power(0) = 0)."""
    hi = max(1, guess)
    while curve.at(hi) < target:
        if hi >= _MAX_N:
            raise ValueError(f"{func}: the power stays below {target} up to n = {_MAX_N} items")
        hi = min(_MAX_N, 2 * hi)
    lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if curve.at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def _normal_guess(p10: float, p01: float, level: float, target: float, sides: int) -> int:
    """Connor's (1987) normal approximation to the sample size of McNemar's test."""
    q, delta = p10 + p01, abs(p10 - p01)
    z = NormalDist()
    za, zb = z.inv_cdf(1 - level / sides), z.inv_cdf(target)
    return math.ceil(((za * math.sqrt(q) + zb * math.sqrt(max(q - delta**2, 0.0))) / delta) ** 2)


# n values whose exact power is evaluated together in the scan past the first crossing.
_BLOCK = 128


def sample_size_paired_binary(p10: float, p01: float, *, power: float = 0.8, alpha: float = 0.05,
                              alternative: Alternative = "two-sided", comparisons: int = 1,
                              correction: Optional[str] = None) -> int:
    """Least n* with exact power >= ``power`` at every n >= n* (McNemar's exact test).

    The exact power is saw-toothed in n: it can reach the target and drop below it again at
    n + 1, so the first crossing is not the answer. From a crossing found by bisection the
    power is evaluated at every following n, in blocks, until a whole block stays above the
    target by more than the largest decline from a running peak seen so far in the scan.
    The stopping rule rests on two facts: the smooth trend of the power increases in n, and
    the saw-tooth amplitude shrinks (the binomial mixture over d smooths it, like
    1/sqrt(n)); so a later dip below the target would need a decline larger than any seen.
    It is a justified rule, not a proof; n* is 1 + the last n in the scan with power below
    the target. Cost: ~5-80 ms where n* is up to ~10^5 items, ~0.1 s at 2 * 10^6 for systems
    that rarely disagree, up to ~1 s for a tiny gain between systems that disagree on half
    the items (n* ~ 4 * 10^6): every n of the scan costs O(sqrt(n)).

    Parameters are those of :func:`power_paired_binary`; ``power`` is the target in (0, 1).

    Examples
    --------
    >>> import pairperm
    >>> pairperm.sample_size_paired_binary(0.055, 0.045)   # +1 point, systems agree on 90% of items
    8032
    """
    func = "sample_size_paired_binary"
    target = _check_target(power, func)
    p10, p01, alpha, level = _check_design(p10, p01, alpha, alternative, comparisons, correction, func)
    favoured = {"two-sided": p10 != p01, "greater": p10 > p01, "less": p01 > p10}[alternative]
    if not favoured:
        raise ValueError(f"{func}: with p10={p10} and p01={p01} the power of the {alternative} test never "
                         "exceeds alpha; the accuracy difference p10 - p01 must point the way the alternative tests")
    if target >= 1 - 1e-9:
        raise ValueError(f"{func}: power must be below 1 - 1e-9; got {target}")
    curve = _PowerCurve(p10, p01, level, alternative)
    sides = 2 if alternative == "two-sided" else 1
    crossing = _first_crossing(curve, target, _normal_guess(p10, p01, level, target, sides), func)
    last_below, peak, decline, start = crossing - 1, 0.0, 0.0, crossing
    while True:
        ns = np.arange(start, min(start + _BLOCK, _MAX_N + 1))
        powers = curve(ns)
        below = np.flatnonzero(powers < target)
        if len(below):
            last_below = int(ns[below[-1]])
        running_peak = np.maximum.accumulate(np.maximum(powers, peak))
        decline = max(decline, float((running_peak - powers).max()))
        peak = float(running_peak[-1])
        if not len(below) and float(powers.min()) - target > decline:
            return last_below + 1
        if ns[-1] >= _MAX_N:
            raise ValueError(f"{func}: the power does not settle above {target} up to n = {_MAX_N} items")
        start = int(ns[-1]) + 1


# ---------------------------------------------------------------- minimum detectable effect

def minimum_detectable_effect_paired_binary(n: int, *, discordance: Optional[float] = None,
                                            agreement: Optional[float] = None, power: float = 0.8,
                                            alpha: float = 0.05, alternative: Alternative = "two-sided",
                                            comparisons: int = 1, correction: Optional[str] = None,
                                            tolerance: float = 1e-7) -> float:
    """Smallest accuracy difference abs(p10 - p01) detected with exact power >= ``power`` at n items.

    The total discordance q = p10 + p01 (or the agreement 1 - q; give one) is held fixed and
    the difference delta is found by bisection on the exact power with p10 = (q + delta) / 2,
    p01 = (q - delta) / 2 ("less": the same difference in B's favour). The value returned
    has power >= the target and lies within ``tolerance`` of the crossing; the bisection
    assumes the power rises with delta, which holds for this test's one-sided regions and,
    two-sided, wherever the opposite region's share is negligible.

    Examples
    --------
    >>> import pairperm
    >>> print(f"{pairperm.minimum_detectable_effect_paired_binary(5000, agreement=0.9):.4f}")
    0.0127
    """
    func = "minimum_detectable_effect_paired_binary"
    n = _check_n(n, func)
    target = _check_target(power, func)
    if (discordance is None) == (agreement is None):
        raise ValueError(f"{func}: give exactly one of discordance= and agreement= (agreement = 1 - discordance)")
    q = (_check_prob(discordance, "discordance", func) if discordance is not None
         else 1 - _check_prob(agreement, "agreement", func))
    _check_design(q / 2, q / 2, alpha, alternative, comparisons, correction, func)
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) or not 0 < tolerance < 1:
        raise ValueError(f"{func}: tolerance must be in (0, 1); got {tolerance!r}")

    def power_at(delta: float) -> float:
        p10, p01 = (q + delta) / 2, (q - delta) / 2
        if alternative == "less":
            p10, p01 = p01, p10
        return power_paired_binary(n, p10, p01, alpha=alpha, alternative=alternative, comparisons=comparisons,
                                   correction=correction).power

    if q == 0 or power_at(q) < target:
        raise ValueError(f"{func}: even delta = discordance = {q} (every discordant item won by one system) "
                         f"has power below {target} at n = {n}")
    lo, hi = 0.0, q
    while hi - lo > tolerance * q:
        mid = (lo + hi) / 2
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------- from accuracies

def discordance_bounds(acc_a: float, acc_b: float) -> tuple[float, float]:
    """(least, greatest) discordance p10 + p01 consistent with the two accuracies.

    p10 - p01 = acc_a - acc_b, and the joint table must be non-negative: p10, p01 >= 0 give
    q >= abs(acc_a - acc_b); both right, (acc_a + acc_b - q) / 2 >= 0, and both wrong,
    (2 - acc_a - acc_b - q) / 2 >= 0, give q <= min(acc_a + acc_b, 2 - acc_a - acc_b) (<= 1).
    These are the extremes Card et al. (EMNLP 2020) bound the power with when only the
    accuracies are known.
    """
    func = "discordance_bounds"
    a, b = _check_prob(acc_a, "acc_a", func), _check_prob(acc_b, "acc_b", func)
    return abs(a - b), min(a + b, 2 - a - b)


def discordance_from_accuracies(acc_a: float, acc_b: float, agreement: float) -> tuple[float, float]:
    """(p10, p01) of two systems with accuracies acc_a, acc_b that agree on a share ``agreement``
    of the items (both right or both wrong): q = 1 - agreement, p10 = (q + acc_a - acc_b) / 2,
    p01 = (q - acc_a + acc_b) / 2. Refused when no joint table has these margins.

    Examples
    --------
    >>> import pairperm
    >>> [round(v, 6) for v in pairperm.discordance_from_accuracies(0.82, 0.80, 0.975)]
    [0.0225, 0.0025]
    """
    func = "discordance_from_accuracies"
    agree = _check_prob(agreement, "agreement", func)
    low, high = discordance_bounds(acc_a, acc_b)
    q = 1 - agree
    if not low - 1e-12 <= q <= high + 1e-12:
        raise ValueError(f"{func}: accuracies {acc_a} and {acc_b} allow an agreement between {1 - high:.6g} and "
                         f"{1 - low:.6g}; got {agreement}")
    delta = float(acc_a) - float(acc_b)
    return max(0.0, (q + delta) / 2), max(0.0, (q - delta) / 2)


def power_bounds_from_accuracies(n: int, acc_a: float, acc_b: float, *, alpha: float = 0.05,
                                 alternative: Alternative = "two-sided", comparisons: int = 1,
                                 correction: Optional[str] = None) -> tuple[PairedBinaryPower, PairedBinaryPower]:
    """Exact power at the two extremes of the discordance consistent with the accuracies
    (:func:`discordance_bounds`): (at the greatest discordance, at the least). When only the
    accuracies are known these bracket the power (Card et al., EMNLP 2020): the more items
    the systems disagree on, the noisier the difference.

    Examples
    --------
    >>> import pairperm
    >>> low, high = pairperm.power_bounds_from_accuracies(1000, 0.72, 0.70)
    >>> print(f"{low.power:.2f} {high.power:.2f}")
    0.12 1.00
    """
    low, high = discordance_bounds(acc_a, acc_b)
    out = []
    for q in (high, low):
        p10, p01 = discordance_from_accuracies(acc_a, acc_b, 1 - q)
        out.append(power_paired_binary(n, p10, p01, alpha=alpha, alternative=alternative, comparisons=comparisons,
                                       correction=correction))
    return out[0], out[1]
