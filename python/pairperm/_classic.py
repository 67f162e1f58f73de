"""Exact McNemar, sign and Wilcoxon signed-rank tests, all evaluated on the grouped engine.

Each of these is a paired sign-flip test, so its null is a structured sum (SPEC §1):
entry n contributes +e_n or -e_n with probability 1/2. McNemar and the sign test have
e_n in {0, 1}; Wilcoxon has e_n = the doubled midrank of |x_n - y_n|, an integer even
with ties, so the exact null needs no normal approximation at any N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from . import _core
from ._permutation import _reject
from ._results import _fmt
from ._stats import clopper_pearson
from ._validation import (
    as_int_array,
    as_real_array,
    check_alternative,
    check_method,
    check_n_resamples,
    check_same_length,
    seed_from_rng,
)

__all__ = ["McNemarResult", "SignTestResult", "WilcoxonResult", "mcnemar_test", "sign_test", "wilcoxon_test"]

ZERO_METHODS = ("wilcox", "pratt", "zsplit")
WILCOXON_METHODS = ("exact", "monte_carlo")


def _repr(obj: Any, names: tuple[str, ...]) -> str:
    parts = []
    for name in names:
        v = getattr(obj, name)
        if v is None:
            continue
        if name == "log_pvalue" and obj.pvalue >= 1e-300:
            continue
        parts.append(f"{name}={_fmt(v) if not isinstance(v, str) else repr(v)}")
    return f"{type(obj).__name__}({', '.join(parts)})"


@dataclass(frozen=True, repr=False)
class McNemarResult:
    """Result of :func:`mcnemar_test`.

    Attributes
    ----------
    statistic : int
        Entries that A got right and B got wrong (``n_a_only``).
    pvalue, log_pvalue : float
        Exact binomial p-value and its natural log.
    alternative : str
    n_a_only, n_b_only : int
        The two discordant counts of the 2x2 table.
    """

    statistic: int
    pvalue: float
    log_pvalue: float
    alternative: str
    n_a_only: int
    n_b_only: int

    def __repr__(self) -> str:
        return _repr(self, ("statistic", "pvalue", "log_pvalue", "alternative", "n_a_only", "n_b_only"))


@dataclass(frozen=True, repr=False)
class SignTestResult:
    """Result of :func:`sign_test`.

    Attributes
    ----------
    statistic : int
        Number of entries with ``x > y`` (``n_positive``).
    pvalue, log_pvalue : float
    alternative : str
    n_positive, n_negative, n_zero : int
        Entries with ``x > y``, ``x < y`` and ``x == y`` (zeros carry no information).
    """

    statistic: int
    pvalue: float
    log_pvalue: float
    alternative: str
    n_positive: int
    n_negative: int
    n_zero: int

    def __repr__(self) -> str:
        return _repr(self, ("statistic", "pvalue", "log_pvalue", "alternative", "n_positive", "n_negative", "n_zero"))


@dataclass(frozen=True, repr=False)
class WilcoxonResult:
    """Result of :func:`wilcoxon_test`.

    Attributes
    ----------
    statistic : float
        As in ``scipy.stats.wilcoxon``: ``min(r_plus, r_minus)`` for two-sided,
        ``r_plus`` otherwise (midranks, so possibly a half-integer).
    pvalue, log_pvalue : float
    alternative, method, zero_method : str
    r_plus, r_minus : float
        Rank sums of the positive and negative differences ("zsplit" adds half of
        the zeros' ranks to each).
    n_resamples, pvalue_ci :
        Monte Carlo only.
    """

    statistic: float
    pvalue: float
    log_pvalue: float
    alternative: str
    method: str
    zero_method: str
    r_plus: float
    r_minus: float
    n_resamples: Optional[int] = None
    pvalue_ci: Optional[tuple] = None

    def __repr__(self) -> str:
        return _repr(
            self,
            ("statistic", "pvalue", "log_pvalue", "alternative", "method", "zero_method", "r_plus", "r_minus",
             "n_resamples", "pvalue_ci"),
        )


def _sign_flip_pvalue(effect: np.ndarray, alternative: str) -> tuple[float, float]:
    """Exact P for S = sum of +-effect[n] against s_obs = sum(effect), on the grouped engine."""
    summary = _core.summarize(effect, -effect)
    p, log_p = _core.grouped_pvalue(summary, alternative)
    return float(p), float(log_p)


def mcnemar_test(correct_a: Any, correct_b: Any, *, alternative: str = "two-sided") -> McNemarResult:
    """Exact McNemar test for paired binary outcomes (e.g. per-example correctness).

    Only discordant entries matter: with ``n_a_only`` entries that A got right and B
    wrong and ``n_b_only`` the reverse, under the null ``n_a_only ~ Binomial(n_a_only +
    n_b_only, 1/2)``. The two-sided p-value is ``P[|S| >= |n_a_only - n_b_only|]`` with
    S the sign-flip sum (equal to the doubled binomial tail, capped at 1), identical to
    :func:`pairperm.permutation_test` on the 0/1 scores.

    Parameters
    ----------
    correct_a, correct_b : array_like of bool or {0, 1}, shape (N,)
    alternative : {"two-sided", "greater", "less"}
        "greater": evidence that A is right more often than B.
    """
    func = "mcnemar_test"
    check_alternative(alternative)
    hint = "mcnemar_test takes 0/1 correctness per entry"
    a = as_int_array(correct_a, "correct_a", func, hint=hint)
    b = as_int_array(correct_b, "correct_b", func, hint=hint)
    check_same_length(a, b, "correct_a", "correct_b", func)
    for name, arr in (("correct_a", a), ("correct_b", b)):
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{func}: {name} must hold 0/1 (or bool) outcomes; got {arr[i]} at index {i}")
    d = a - b
    n_a, n_b = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
    p, log_p = _sign_flip_pvalue(d, alternative)
    return McNemarResult(n_a, p, log_p, alternative, n_a, n_b)


def sign_test(x: Any, y: Any, *, alternative: str = "two-sided") -> SignTestResult:
    """Exact sign test for paired real-valued scores.

    Counts the entries with ``x > y`` among those with ``x != y``; under the null it is
    ``Binomial(n_positive + n_negative, 1/2)``. Ties (``x == y``) are left out, as they
    are unaffected by swapping.

    Parameters
    ----------
    x, y : array_like of float, shape (N,)
    alternative : {"two-sided", "greater", "less"}
        "greater": evidence that x tends to exceed y.
    """
    func = "sign_test"
    check_alternative(alternative)
    xa = as_real_array(x, "x", func)
    ya = as_real_array(y, "y", func)
    check_same_length(xa, ya, "x", "y", func)
    s = _signs(xa, ya)
    n_pos, n_neg = int(np.count_nonzero(s > 0)), int(np.count_nonzero(s < 0))
    p, log_p = _sign_flip_pvalue(s, alternative)
    return SignTestResult(n_pos, p, log_p, alternative, n_pos, n_neg, len(s) - n_pos - n_neg)


def _signs(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Compare rather than subtract: x - y can overflow for int64 and round for floats. Mixed
    # int64/float64 would compare in float64 and lose integers above 2^53; long double's
    # 64-bit mantissa holds both exactly (|ints| < 2^61 after validation).
    if x.dtype != y.dtype:
        x, y = x.astype(np.longdouble), y.astype(np.longdouble)
    return (x > y).astype(np.int64) - (x < y).astype(np.int64)


def _abs_differences(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "i" and y.dtype.kind == "i":
        # |x - y| < 2**62 as both are below 2**61: exact, so ties are exact ties.
        return np.abs(x - y)
    return np.abs(x.astype(np.float64) - y.astype(np.float64))


def doubled_midranks(values: np.ndarray) -> np.ndarray:
    """2 x the midranks (1-based, ties averaged) of `values`: always integers."""
    n = len(values)
    order = np.argsort(values, kind="stable")
    sv = values[order]
    starts = np.flatnonzero(np.r_[True, sv[1:] != sv[:-1]]) if n else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], n]  # exclusive
    # Ranks starts+1 .. ends share the midrank (starts + 1 + ends) / 2.
    group_rank2 = (starts + 1 + ends).astype(np.int64)
    out = np.empty(n, dtype=np.int64)
    out[order] = np.repeat(group_rank2, ends - starts)
    return out


def wilcoxon_test(
    x: Any,
    y: Any = None,
    *,
    alternative: str = "two-sided",
    zero_method: str = "wilcox",
    method: str = "exact",
    n_resamples: int = 20_000,
    rng: Any = None,
) -> WilcoxonResult:
    """Wilcoxon signed-rank test, exact for any N including ties and zero differences.

    The signed-rank null flips the sign of each difference independently, so
    ``W = r_plus - r_minus`` is a structured sum with local effects ``+-2 r_n`` (doubled
    midranks, integers even with ties). It is evaluated exactly on the grouped engine,
    conditional on the observed ranks, where ``scipy.stats.wilcoxon`` falls back to a
    normal approximation. Without ties or zeros it equals scipy's exact test.

    Parameters
    ----------
    x, y : array_like of float, shape (N,)
        Paired scores (e.g. per-sentence perplexities of two language models). If y is
        None, x holds the differences. Only the ranks of the differences matter.
    alternative : {"two-sided", "greater", "less"}
        "greater": evidence that x - y is shifted above 0.
    zero_method : {"wilcox", "pratt", "zsplit"}
        As in scipy. "wilcox" drops zero differences before ranking; "pratt" ranks them
        and then drops them; "zsplit" ranks them and splits their ranks between r_plus
        and r_minus. Zero differences are unchanged by a sign flip, so in the exact null
        they only shift the ranks of the others: "pratt" and "zsplit" give the same
        p-value and differ only in the reported rank sums.
    method : {"exact", "monte_carlo"}
        "monte_carlo": sign flips sampled in the C++ core, ``p = (1 + hits) / (1 + K)``.
    n_resamples, rng :
        Monte Carlo only; an int seed makes runs repeatable.
    """
    func = "wilcoxon_test"
    check_alternative(alternative)
    if zero_method not in ZERO_METHODS:
        raise ValueError(f"{func}: zero_method must be one of {', '.join(map(repr, ZERO_METHODS))}; got {zero_method!r}")
    check_method(method, WILCOXON_METHODS)
    xa = as_real_array(x, "x", func)
    ya = np.zeros_like(xa) if y is None else as_real_array(y, "y", func)
    check_same_length(xa, ya, "x", "y", func)
    if method == "monte_carlo":
        n_resamples = check_n_resamples(n_resamples)
        seed = seed_from_rng(rng)

    sign = _signs(xa, ya)
    absd = _abs_differences(xa, ya)
    if zero_method == "wilcox":
        keep = sign != 0
        sign, r2 = sign[keep], doubled_midranks(absd[keep])
        zero_r2 = 0
    else:
        r2 = doubled_midranks(absd)
        zero_r2 = int(r2[sign == 0].sum()) if zero_method == "zsplit" else 0
    effect = sign * r2  # zeros contribute 0: a flip leaves them where they are
    r_plus = (int(r2[sign > 0].sum()) + zero_r2 / 2) / 2
    r_minus = (int(r2[sign < 0].sum()) + zero_r2 / 2) / 2
    statistic = min(r_plus, r_minus) if alternative == "two-sided" else r_plus

    if method == "exact":
        p, log_p = _sign_flip_pvalue(effect, alternative)
        return WilcoxonResult(statistic, p, log_p, alternative, "exact", zero_method, r_plus, r_minus)

    observed = int(effect.sum())
    col = effect.reshape(-1, 1)
    sums = _core.sample_sums(col, -col, n_resamples, seed)[:, 0]
    hits = int(np.count_nonzero(_reject(sums, observed, 0, alternative)))
    p = (1 + hits) / (1 + n_resamples)
    return WilcoxonResult(
        statistic, p, math.log(p), alternative, "monte_carlo", zero_method, r_plus, r_minus,
        n_resamples=n_resamples, pvalue_ci=clopper_pearson(hits, n_resamples),
    )
