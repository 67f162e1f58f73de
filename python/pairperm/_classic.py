"""Exact McNemar, sign and Wilcoxon signed-rank tests, all evaluated on the grouped engine.

Each of these is a paired sign-flip test, so its null is a structured sum:
entry n contributes +e_n or -e_n with probability 1/2. McNemar and the sign test have
e_n in {0, 1}; Wilcoxon has e_n = the doubled midrank of |x_n - y_n|, an integer even
with ties, so the exact null needs no normal approximation at any N.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal, Optional

import numpy as np

from ._difference import OrderEffect
from ._effects import LocalEffects, NullRecipe
from ._permutation import permutation_test
from ._results import McNemarResult, SignTestResult, WilcoxonResult
from ._runner import execute, run, settle
from ._sampling import MonteCarloOptions, monte_carlo_options
from ._statistics import SumStatistic
from ._units import ScoreRoundoff, paired_scores
from ._validation import (
    N_RESAMPLES,
    as_int_array,
    as_real_array,
    check_alternative,
    check_method,
    check_paired_index,
    check_same_length,
    is_binary,
)
from .typing import Alternative, ArrayLike, SeedLike, WilcoxonMethod

__all__ = ["mcnemar_test", "sign_test", "wilcoxon_test"]

ZERO_METHODS = ("wilcox", "pratt", "zsplit")
WILCOXON_METHODS = ("auto", "exact", "monte_carlo")

def _sign_flip_effects(effect: np.ndarray) -> LocalEffects:
    """S = sum of +-effect[n], s_obs = sum(effect): every test here is this structured sum."""
    return LocalEffects.from_arrays(effect, -effect)


# Signs and 0/1 differences always fit the grouped engine: nothing is ever sampled for them.
_NEVER_SAMPLED = monte_carlo_options(N_RESAMPLES, None, None, "sign_test")


def _sign_flip_pvalue(effect: np.ndarray, alternative: str, func: str) -> tuple[float, float, str]:
    """(p, log p, the engine that ran)."""
    effects = _sign_flip_effects(effect)
    r = run(effects, SumStatistic(effects), alternative=alternative, method="auto", func=func, mc=_NEVER_SAMPLED)
    return r.pvalue, r.log_pvalue, r.engine


def discordant_counts(n_varying: int, statistic: int) -> tuple[int, int]:
    """(n_a, n_b), the entries only A and only B got right, from the paired-permutation test of
    0/1 scores: n_a + n_b entries vary and n_a - n_b is its statistic."""
    n_a = (n_varying + statistic) // 2
    return n_a, n_varying - n_a


def mcnemar_test(x: ArrayLike, y: ArrayLike, *, alternative: Alternative = "two-sided",
                 groups: Optional[ArrayLike] = None) -> McNemarResult:
    """Exact McNemar test for paired binary outcomes (e.g. per-example correctness).

    Only discordant entries matter: with ``n_a_only`` entries that A got right and B
    wrong and ``n_b_only`` the reverse, under the null ``n_a_only ~ Binomial(n_a_only +
    n_b_only, 1/2)``. The two-sided p-value is ``P[|S| >= |n_a_only - n_b_only|]`` with
    S the sign-flip sum (equal to the doubled binomial tail, capped at 1), identical to
    :func:`pairperm.permutation_test` on the 0/1 scores.

    Parameters
    ----------
    x, y : array_like of bool or {0, 1}, shape (N,)
        Per-entry correctness of systems A and B.
    alternative : {"two-sided", "greater", "less"}
        "greater": evidence that A is right more often than B.
    groups : None
        Not supported: outcomes summed per unit are not 0/1 pairs; a ValueError points to
        :func:`pairperm.permutation_test` with ``groups=``, the exact test of whole units.

    Examples
    --------
    >>> import pairperm
    >>> correct_a = [1, 1, 1, 1, 0, 1]
    >>> correct_b = [0, 0, 1, 0, 0, 1]
    >>> pairperm.mcnemar_test(correct_a, correct_b)     # 3 discordant entries, all for A
    McNemarResult(statistic=3, difference=0.5, pvalue=0.25, alternative='two-sided', n_a_only=3, n_b_only=0)
    >>> print(f'{pairperm.mcnemar_test(correct_a, correct_b, alternative="greater").pvalue:.6g}')   # 2**-3
    0.125
    """
    func = "mcnemar_test"
    check_alternative(alternative, func)
    if groups is not None:
        # Per-unit counts of correct answers are no longer 0/1 outcomes: McNemar's discordant
        # pairs do not exist for them, while the permutation test of the unit sums is exact.
        raise ValueError(f"{func}: with groups the outcomes are counted per unit and are no longer 0/1 pairs; "
                         "pairperm.permutation_test(x, y, groups=groups) is the exact test that swaps whole units")
    hint = "mcnemar_test takes 0/1 correctness per entry"
    check_paired_index(x, y, ("x", "y"), func)
    a = as_int_array(x, "x", func, hint=hint)
    b = as_int_array(y, "y", func, hint=hint)
    check_same_length(a, b, "x", "y", func)
    for name, arr in (("x", a), ("y", b)):
        if not is_binary(arr):
            i = int(np.argmax((arr != 0) & (arr != 1)))
            raise ValueError(f"{func}: {name} must hold 0/1 (or bool) outcomes; got {arr[i]} at index {i}")
    # The exact test of the 0/1 scores is McNemar's: the same sign-flip law of the discordant entries.
    r = permutation_test(a, b, alternative=alternative)
    n_a, n_b = discordant_counts(int(r._null.summary.n_varying), int(r.statistic))
    difference = (n_a - n_b) / len(a) if len(a) else math.nan  # no entries: no accuracy to compare
    # The law of n_a_only itself: each discordant entry counts 1 for A or 0, each with probability 1/2.
    null = NullRecipe.of_groups(0, ((1, n_a + n_b),) if n_a + n_b else (), "dp" if r.engine == "dp" else "auto")
    return McNemarResult(n_a, r.pvalue, r.log_pvalue, alternative, n_a, n_b, r.engine, difference,
                         dataclasses.replace(r._effect, per="mean"), null)


def sign_test(x: ArrayLike, y: ArrayLike, *, alternative: Alternative = "two-sided",
              groups: Optional[ArrayLike] = None) -> SignTestResult:
    """Exact sign test for paired real-valued scores.

    Counts the entries with ``x > y`` among those with ``x != y``; under the null it is
    ``Binomial(n_positive + n_negative, 1/2)``. Ties (``x == y``) are left out, as they
    are unaffected by swapping.

    Parameters
    ----------
    x, y : array_like of float, shape (N,) or (N, k)
        Shape (N, k): k samples of each item, summed per item.
    alternative : {"two-sided", "greater", "less"}
        "greater": evidence that x tends to exceed y.
    groups : array_like of labels, length N, optional
        The exchangeable unit of each item: the signs are those of the per-unit sums of x
        and y, and the counts are counts of units.

    Examples
    --------
    >>> import pairperm
    >>> r = pairperm.sign_test([3.1, 4.0, 5.2, 6.3, 2.2], [1.0, 1.5, 1.2, 6.3, 2.0])
    >>> r
    SignTestResult(statistic=4, difference=2.1, pvalue=0.125, alternative='two-sided', n_positive=4, n_negative=0, n_zero=1)
    """
    func = "sign_test"
    check_alternative(alternative, func)
    check_paired_index(x, y, ("x", "y"), func)
    xa = as_real_array(x, "x", func, ndim=(1, 2))
    ya = as_real_array(y, "y", func, ndim=(1, 2))
    check_same_length(xa, ya, "x", "y", func)
    xa, ya, roundoff, sizes = paired_scores(xa, ya, groups, func, raw_x=x)
    s = _signs(xa, ya, _rounded_differences(xa, ya, roundoff))
    n_pos, n_neg = int(np.count_nonzero(s > 0)), int(np.count_nonzero(s < 0))
    p, log_p, _ = _sign_flip_pvalue(s, alternative, func)
    effect = OrderEffect.of(xa.astype(np.float64) - ya.astype(np.float64), "sign", sizes)
    return SignTestResult(n_pos, p, log_p, alternative, n_pos, n_neg, len(s) - n_pos - n_neg, effect.estimate(), effect)


def _rounded_differences(x: np.ndarray, y: np.ndarray,
                         roundoff: Optional[ScoreRoundoff]) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """(x - y, the bound on each one's round-off) where round-off may have split ties and zeros
    of exact arithmetic; None where x - y is exact."""
    if roundoff is None or roundoff.exact:
        return None
    return roundoff.differences(x, y)


def _signs(x: np.ndarray, y: np.ndarray, rounded: Optional[tuple[np.ndarray, np.ndarray]] = None) -> np.ndarray:
    """Signs of x - y; with `rounded` (_rounded_differences), a difference within its round-off
    of 0 is 0 (e.g. 0.1 + 0.2 vs 0.3)."""
    if rounded is not None:
        d, slack = rounded
        return np.where(np.abs(d) <= slack, 0, np.sign(d)).astype(np.int64)
    # Compare rather than subtract: x - y can overflow for int64 and round for floats. Mixed
    # int64/float64 would compare in float64 and lose integers above 2^53; long double's
    # 64-bit mantissa holds both exactly (|ints| < 2^61 after validation).
    if x.dtype != y.dtype:
        x, y = x.astype(np.longdouble), y.astype(np.longdouble)
    return (x > y).astype(np.int64) - (x < y).astype(np.int64)


def _abs_differences(x: np.ndarray, y: np.ndarray, rounded: Optional[tuple[np.ndarray, np.ndarray]] = None
                     ) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """|x - y|, and with `rounded` (_rounded_differences) the bound on each one's round-off
    (in the same, possibly rescaled, units)."""
    if x.dtype.kind == "i" and y.dtype.kind == "i":
        # |x - y| < 2**62 as both are below 2**61: exact, so ties are exact ties.
        return np.abs(x - y), None
    if rounded is not None:
        d, slack = rounded
        return np.abs(d), slack
    return np.abs(x.astype(np.float64) - y.astype(np.float64)), None


def doubled_midranks(values: np.ndarray, slack: Optional[np.ndarray] = None) -> np.ndarray:
    """2 x the midranks (1-based, ties averaged) of `values`: always integers. With `slack`,
    neighbours in sorted order that are within the sum of their slacks tie (values known only
    up to their round-off)."""
    n = len(values)
    order = np.argsort(values, kind="stable")
    sv = values[order]
    if slack is None:
        new_value = sv[1:] != sv[:-1]
    else:
        ss = slack[order]
        new_value = sv[1:] - sv[:-1] > ss[1:] + ss[:-1]
    starts = np.flatnonzero(np.r_[True, new_value]) if n else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], n]  # exclusive
    # Ranks starts+1 .. ends share the midrank (starts + 1 + ends) / 2.
    group_rank2 = (starts + 1 + ends).astype(np.int64)
    out = np.empty(n, dtype=np.int64)
    out[order] = np.repeat(group_rank2, ends - starts)
    return out


def _wilcoxon_test_iv(x: Any, y: Any, alternative: Any, zero_method: Any, method: Any, n_resamples: Any, rng: Any,
                      n_jobs: Any, groups: Any = None) -> tuple[np.ndarray, np.ndarray, Optional[ScoreRoundoff],
                                                                MonteCarloOptions, Optional[np.ndarray]]:
    func = "wilcoxon_test"
    check_alternative(alternative, func)
    if zero_method not in ZERO_METHODS:
        raise ValueError(f"{func}: zero_method must be one of {', '.join(map(repr, ZERO_METHODS))}; got {zero_method!r}")
    check_method(method, WILCOXON_METHODS, func)
    mc = monte_carlo_options(n_resamples, rng, n_jobs, func)
    check_paired_index(x, y, ("x", "y"), func)
    xa = as_real_array(x, "x", func, ndim=(1, 2))
    ya = np.zeros_like(xa) if y is None else as_real_array(y, "y", func, ndim=(1, 2))
    check_same_length(xa, ya, "x", "y", func)
    xa, ya, roundoff, sizes = paired_scores(xa, ya, groups, func, raw_x=x)
    return xa, ya, roundoff, mc, sizes


def _signed_ranks(xa: np.ndarray, ya: np.ndarray, zero_method: str,
                  roundoff: Optional[ScoreRoundoff] = None) -> tuple[np.ndarray, float, float]:
    """Local effects +-2 r_n (doubled midranks, integers even with ties) and the rank sums.
    Zeros and ties of |x - y| are those of exact arithmetic (see ScoreRoundoff)."""
    rounded = _rounded_differences(xa, ya, roundoff)
    sign = _signs(xa, ya, rounded)
    absd, slack = _abs_differences(xa, ya, rounded)
    if zero_method == "wilcox":
        keep = sign != 0
        sign, r2 = sign[keep], doubled_midranks(absd[keep], None if slack is None else slack[keep])
        zero_r2 = 0
    else:
        r2 = doubled_midranks(absd, slack)
        zero_r2 = int(r2[sign == 0].sum()) if zero_method == "zsplit" else 0
    effect = sign * r2  # zeros contribute 0: a flip leaves them where they are
    r_plus = (int(r2[sign > 0].sum()) + zero_r2 / 2) / 2
    r_minus = (int(r2[sign < 0].sum()) + zero_r2 / 2) / 2
    return effect, r_plus, r_minus


def wilcoxon_test(
    x: ArrayLike,
    y: Optional[ArrayLike] = None,
    *,
    alternative: Alternative = "two-sided",
    zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox",
    method: WilcoxonMethod = "auto",
    n_resamples: int = N_RESAMPLES,
    rng: SeedLike = None,
    n_jobs: Optional[int] = None,
    groups: Optional[ArrayLike] = None,
) -> WilcoxonResult:
    """Wilcoxon signed-rank test, exact for any N including ties and zero differences.

    The signed-rank null flips the sign of each difference independently, so
    ``W = r_plus - r_minus`` is a structured sum with local effects ``+-2 r_n`` (doubled
    midranks, integers even with ties). It is evaluated exactly on the grouped engine,
    conditional on the observed ranks, where ``scipy.stats.wilcoxon`` falls back to a
    normal approximation. Without ties or zeros it equals scipy's exact test.

    Parameters
    ----------
    x, y : array_like of float, shape (N,) or (N, k)
        Paired scores (e.g. per-sentence perplexities of two language models). If y is
        None, x holds the differences. Only the ranks of the differences matter. Shape
        (N, k): k samples of each item, summed per item before ranking.
    alternative : {"two-sided", "greater", "less"}
        "greater": evidence that x - y is shifted above 0.
    zero_method : {"wilcox", "pratt", "zsplit"}
        As in scipy. "wilcox" drops zero differences before ranking; "pratt" ranks them
        and then drops them; "zsplit" ranks them and splits their ranks between r_plus
        and r_minus. Zero differences are unchanged by a sign flip, so in the exact null
        they only shift the ranks of the others: "pratt" and "zsplit" give the same
        p-value and differ only in the reported rank sums.
    method : {"auto", "exact", "monte_carlo"}
        "exact": the exact null on the grouped engine (its tilted tail). Its cost grows
        with the spread of the ranks: without ties ~0.25 s at N = 500 (the engine alone
        would need ~8 s at 5,000 and ~22 s at 10^4), and it raises SupportTooLargeError
        above its cost guard (a few thousand distinct ranks).
        "auto": that engine where its estimated cost is below ~15 ms (small N, or few
        distinct ranks), otherwise the same tail by band-limited Fourier inversion
        (``method="fourier"`` in the result): the exponentially tilted tail integral is
        evaluated by the trapezoid rule only at frequencies where the characteristic
        function of the null is not provably below e^-45 of the integral's scale, from
        a bound on ``log|phi|`` certified on an FFT grid. ``pvalue_error`` then holds a
        bound on ``|pvalue - exact p-value|`` covering the omitted frequencies, the
        aliasing (Hoeffding/Bernstein tails) and floating-point round-off; it is
        typically 1e-16 to 1e-10, far below 1e-6, and scales with the p-value, so tiny
        p-values (and ``log_pvalue``) keep their relative accuracy. Cost without ties:
        ~0.01 s at N = 5,000, ~0.02 s at 10^4 and ~0.3 s at 10^5.
        "monte_carlo": sign flips sampled in the compiled core, ``p = (1 + hits) / (1 + K)``.
    n_resamples, rng, n_jobs :
        Monte Carlo only; an int seed makes runs repeatable.
    groups : array_like of labels, length N, optional
        The exchangeable unit of each item: the differences are summed per unit, and the
        unit sums are ranked and sign-flipped (the signed-rank test of the units).

    Raises
    ------
    SupportTooLargeError
        If the route chosen would be infeasible (``method="exact"`` on widely spread
        ranks, or "auto" with too many frequencies to evaluate); use "monte_carlo".

    Examples
    --------
    >>> import pairperm
    >>> ppl_a = [31.2, 28.4, 40.1, 25.0, 33.3, 29.9]    # per-sentence perplexities
    >>> ppl_b = [30.1, 29.0, 36.2, 24.1, 30.0, 27.5]
    >>> r = pairperm.wilcoxon_test(ppl_a, ppl_b)
    >>> print(r.method, r.r_plus, r.r_minus, f"{r.pvalue:.6g}")     # 2 x 2 of the 2^6 sign patterns
    exact 20.0 1.0 0.0625

    Ties and zeros stay exact (scipy would switch to the normal approximation):

    >>> r = pairperm.wilcoxon_test([1, 2, 2, 0, -1, 3, 2], zero_method="zsplit")
    >>> print(r.method, f"{r.pvalue:.6g}", r.r_plus, r.r_minus)   # 12 of the 2^7 sign flips
    exact 0.09375 25.0 3.0
    """
    func = "wilcoxon_test"
    xa, ya, roundoff, mc, sizes = _wilcoxon_test_iv(x, y, alternative, zero_method, method, n_resamples, rng, n_jobs,
                                             groups)
    effect, r_plus, r_minus = _signed_ranks(xa, ya, zero_method, roundoff)
    statistic = min(r_plus, r_minus) if alternative == "two-sided" else r_plus
    effects = _sign_flip_effects(effect)
    shift = OrderEffect.of(xa.astype(np.float64) - ya.astype(np.float64), "walsh", sizes)
    stat = SumStatistic(effects, kind="signed_rank_sum")
    shown: dict[str, Any] = dict(zero_method=zero_method, r_plus=r_plus, r_minus=r_minus,
                                 difference=shift.estimate(), _effect=shift)
    if method == "monte_carlo":
        r = run(effects, stat, alternative=alternative, method=method, func=func, mc=mc)
        return WilcoxonResult(statistic, r.pvalue, r.log_pvalue, alternative, "monte_carlo", n_resamples=r.n_resamples,
                              hits=r.hits, pvalue_ci=r.pvalue_ci, **shown)
    # Under "auto" the planner hands widely spread ranks to the band-limited inversion ("fourier").
    o = settle(execute(effects, stat, alternative, method, mc), func, effects)
    if o.route == "fourier":
        return WilcoxonResult(statistic, o.pvalue, o.log_pvalue, alternative, "fourier", pvalue_error=o.error, **shown)
    sampled = o.route == "saddlepoint_is"
    return WilcoxonResult(statistic, o.pvalue, o.log_pvalue, alternative, "exact",
                          n_resamples=o.n_resamples if sampled else None, pvalue_ci=o.ci if sampled else None,
                          **shown)
