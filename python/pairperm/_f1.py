"""Exact paired-permutation tests for F-beta, precision and recall (the 2022 paper's App. B).

Each entry carries counts for both systems; swapping an entry exchanges them. Invariants
shrink the state before convolving: the totals of both systems are fixed under swapping
and gold counts are shared, so with s1 = TP_A and s2 = FP_A (or errors of A)
  TP_B = T - s1,  FP_B = F - s2,  FN_A = G - s1,  FN_B = G - TP_B,
F-beta and precision are functions of (s1, s2) and recall of s1 alone. Ratios are compared
by exact integer cross-multiplication (C++, 128-bit), so tied states count as ties.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

import pairperm._core as _core

from ._difference import BootstrapEffect
from ._effects import LocalEffects
from ._metrics import ratio_from_sums, statistics_by_name
from ._results import PermutationTestResult
from ._runner import run
from ._sampling import MonteCarloOptions, monte_carlo_options
from ._statistics import RatioStatistic
from ._tables import read_table
from ._units import read_groups, unit_sums
from ._validation import (
    N_RESAMPLES,
    as_int_array,
    check_alternative,
    check_column_totals,
    check_method,
    check_paired_index,
    check_same_length,
)
from .typing import Alternative, ArrayLike, RatioMethod, SeedLike

__all__ = ["f1_test", "precision_test", "recall_test", "read_f1_file", "run_f1_file"]

RATIO_METHODS = ("auto", "exact", "dp", "monte_carlo")
_COLUMNS = {3: ("tp", "fp", "fn"), 2: ("tp", "errors")}
# Coefficients and counts must keep every numerator and denominator below 2^30 (the C++
# comparisons then fit in 128 bits); beta and zero_division must be small exact fractions.
_MAX_FRACTION_PART = 2**20


# (c0, c1, c2): the linear form c0 + c1 s1 + c2 s2 of the reduced state (s1, s2).
_Coef = tuple[int, int, int]


@dataclass(frozen=True)
class _Ratio:
    """(num . (1, s1, s2)) / (den . (1, s1, s2)) for system A and B."""

    a_num: _Coef
    a_den: _Coef
    b_num: _Coef
    b_den: _Coef


def _counts(a: Any, b: Any, func: str, groups: Any = None) -> tuple[np.ndarray, np.ndarray]:
    check_paired_index(a, b, ("x", "y"), func)
    a_arr = as_int_array(statistics_by_name(a, "f1", "x", func), "x", func, ndim=2,
                         hint="counts must be non-negative integers")
    b_arr = as_int_array(statistics_by_name(b, "f1", "y", func), "y", func, ndim=2,
                         hint="counts must be non-negative integers")
    check_same_length(a_arr, b_arr, "x", "y", func)
    if a_arr.shape[1] not in _COLUMNS:
        raise ValueError(
            f"{func}: x and y must have shape (N, 3) with per-entry (tp, fp, fn) counts or (N, 2) with "
            f"(tp, errors); got shape {a_arr.shape}"
        )
    # Every column total below 2^61: all the sums below are exact in int64.
    check_column_totals(a_arr, "x", func)
    check_column_totals(b_arr, "y", func)
    cols = _COLUMNS[a_arr.shape[1]]
    for name, arr in (("x", a_arr), ("y", b_arr)):
        neg = arr < 0
        if neg.any():
            i, j = (int(v) for v in np.argwhere(neg)[0])
            raise ValueError(f"{func}: negative count in {name} at entry {i}: {cols[j]} = {arr[i, j]}")
    if a_arr.shape[1] == 3:
        gold_a = a_arr[:, 0] + a_arr[:, 2]
        gold_b = b_arr[:, 0] + b_arr[:, 2]
        bad = gold_a != gold_b
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"{func}: inconsistent gold counts at entry {i}: tp + fn is {gold_a[i]} for x but {gold_b[i]} "
                "for y (both systems are scored against the same gold annotation)"
            )
    if groups is not None:
        # Counts summed per unit: the totals, and so every check above, are unchanged.
        units = read_groups(groups, len(a_arr), func, like=a)
        a_arr, b_arr = unit_sums(a_arr, units, "x", func), unit_sums(b_arr, units, "y", func)
    return a_arr, b_arr


def _fraction(value: Any, name: str, func: str, lo: float, hi: Optional[float]) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{func}: {name} must be a number; got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < lo or (hi is not None and v > hi):
        rng = f"in [{lo:g}, {hi:g}]" if hi is not None else f">= {lo:g}"
        raise ValueError(f"{func}: {name} must be a finite number {rng}; got {value!r}")
    f = Fraction(v)
    if f.denominator > _MAX_FRACTION_PART or f.numerator > _MAX_FRACTION_PART:
        raise ValueError(
            f"{func}: {name} = {value!r} is not a small exact binary fraction (such as 0.5 or 2); the exact "
            "comparison of ratio statistics needs one"
        )
    return f


def _ratio_value(num: _Coef, den: _Coef, s: tuple[int, int], zero: Fraction) -> Fraction:
    n = num[0] + num[1] * s[0] + num[2] * s[1]
    d = den[0] + den[1] * s[0] + den[2] * s[1]
    return zero if d == 0 else Fraction(n, d)


@dataclass(frozen=True)
class _Problem:
    stay: np.ndarray  # (N, d) reduced local effects, d = 1 or 2
    swap: np.ndarray
    ratio: _Ratio
    zero: Fraction
    observed: Fraction  # h(s_obs) = ratio_A - ratio_B, exactly
    score_a: Fraction
    score_b: Fraction
    counts_a: np.ndarray  # the validated per-entry counts, for the bootstrap interval of the difference
    counts_b: np.ndarray


def _problem(kind: str, a: Any, b: Any, beta: Any, zero_division: Any, func: str, groups: Any = None) -> _Problem:
    a_arr, b_arr = _counts(a, b, func, groups)
    zero = _fraction(zero_division, "zero_division", func, 0.0, 1.0)
    three = a_arr.shape[1] == 3
    if not three and kind != "f1":
        raise ValueError(
            f"{func}: (N, 2) inputs (tp, errors) do not separate false positives from false negatives; "
            "pass (N, 3) per-entry (tp, fp, fn) counts"
        )
    tp_total = int(a_arr[:, 0].sum()) + int(b_arr[:, 0].sum())
    second_total = int(a_arr[:, 1].sum()) + int(b_arr[:, 1].sum())  # FP (N, 3) or errors (N, 2)
    gold = int(a_arr[:, 0].sum()) + int(a_arr[:, 2].sum()) if three else 0
    if kind == "f1":
        b2 = _fraction(beta, "beta", func, 0.0, None) ** 2
        p, q = b2.numerator, b2.denominator
        if not three:
            if b2 != 1:
                raise ValueError(f"{func}: beta != 1 needs (N, 3) inputs (tp, fp, fn); (N, 2) inputs give F1 only")
            # F1 = 2 TP / (2 TP + errors), as in the reference implementation.
            ratio = _Ratio((0, 2, 0), (0, 2, 1), (2 * tp_total, -2, 0), (2 * tp_total + second_total, -2, -1))
        else:
            # F-beta = (1+b^2) TP / ((1+b^2) TP + b^2 FN + FP) = (p+q) TP / (q TP + q FP + p G).
            ratio = _Ratio(
                (0, p + q, 0),
                (p * gold, q, q),
                ((p + q) * tp_total, -(p + q), 0),
                (q * tp_total + p * gold + q * second_total, -q, -q),
            )
        dims = 2
    elif kind == "precision":
        ratio = _Ratio((0, 1, 0), (0, 1, 1), (tp_total, -1, 0), (tp_total + second_total, -1, -1))
        dims = 2
    else:  # recall: G is shared, so R_A - R_B = (2 TP_A - T) / G depends on TP_A only
        ratio = _Ratio((0, 1, 0), (gold, 0, 0), (tp_total, -1, 0), (gold, 0, 0))
        dims = 1
    stay = np.ascontiguousarray(a_arr[:, :dims])
    swap = np.ascontiguousarray(b_arr[:, :dims])
    s_obs = (int(stay[:, 0].sum()), int(stay[:, 1].sum()) if dims == 2 else 0)
    score_a = _ratio_value(ratio.a_num, ratio.a_den, s_obs, zero)
    score_b = _ratio_value(ratio.b_num, ratio.b_den, s_obs, zero)
    return _Problem(stay, swap, ratio, zero, score_a - score_b, score_a, score_b, a_arr, b_arr)


def _ratio_statistic(pr: _Problem, effects: LocalEffects, kind: str, func: str) -> RatioStatistic:
    r = pr.ratio
    obs = pr.observed
    if abs(obs.numerator) >= 2**62 or obs.denominator >= 2**61:
        raise ValueError(f"{func}: counts too large for the exact 128-bit comparison of ratio statistics")
    args = _core.RatioStatistic(r.a_num, r.a_den, r.b_num, r.b_den, (pr.zero.numerator, pr.zero.denominator),
                                (obs.numerator, obs.denominator))
    # Recall's difference (2 TP_A - T) / G increases with its 1-D state TP_A: the core takes the
    # sum's tilted tail for it.
    return RatioStatistic(float(obs), args)


def _ratio_test_iv(kind: str, x: Any, y: Any, alternative: Any, method: Any, beta: Any, zero_division: Any,
                   n_resamples: Any, rng: Any, n_jobs: Any, func: str,
                   groups: Any = None) -> tuple[LocalEffects, RatioStatistic, MonteCarloOptions]:
    """(local effects, statistic, sampling options) of a ratio test."""
    return _ratio_test_setup(kind, x, y, alternative, method, beta, zero_division, n_resamples, rng, n_jobs, func,
                             groups)[:3]


def _ratio_test_setup(kind: str, x: Any, y: Any, alternative: Any, method: Any, beta: Any, zero_division: Any,
                      n_resamples: Any, rng: Any, n_jobs: Any, func: str,
                      groups: Any = None) -> tuple[LocalEffects, RatioStatistic, MonteCarloOptions, _Problem]:
    """As `_ratio_test_iv`, and the problem itself (its counts give the difference's interval)."""
    check_alternative(alternative, func)
    check_method(method, RATIO_METHODS, func)
    mc = monte_carlo_options(n_resamples, rng, n_jobs, func)
    pr = _problem(kind, x, y, beta, zero_division, func, groups)
    stay, swap = (pr.stay[:, 0].copy(), pr.swap[:, 0].copy()) if pr.stay.shape[1] == 1 else (pr.stay, pr.swap)
    effects = LocalEffects.from_arrays(stay, swap)
    return effects, _ratio_statistic(pr, effects, kind, func), mc, pr


def _ratio_test(kind: str, func: str, x: Any, y: Any, alternative: Any, method: Any, beta: Any, zero_division: Any,
                n_resamples: Any, rng: Any, n_jobs: Any, groups: Any = None) -> PermutationTestResult:
    effects, stat, mc, pr = _ratio_test_setup(kind, x, y, alternative, method, beta, zero_division, n_resamples,
                                              rng, n_jobs, func, groups)
    metric = functools.partial(ratio_from_sums, kind=kind, beta=float(beta), zero_division=float(zero_division))
    result: PermutationTestResult = run(effects, stat, alternative=alternative, method=method, func=func, mc=mc,
                                        effect=BootstrapEffect(pr.counts_a, pr.counts_b, metric, mc.seed))
    return result


_DOC_COMMON = """
    Parameters
    ----------
    x, y : array_like of int, shape (N, 3) or (N, 2), or pandas DataFrames
        Per-entry counts of systems A and B: ``(tp, fp, fn)``, or ``(tp, errors)`` as in the
        reference implementation (rycolab/paired-perm-test; F1 only). With (N, 3) the gold
        count ``tp + fn`` of each entry must agree between the systems. DataFrame columns
        are read by name (``tp``, ``fp``, ``fn`` or ``tp``, ``errors``), never by position.
    alternative : {"two-sided", "greater", "less"}
        The statistic is ``score_A - score_B`` (micro-averaged over all entries).
        greater: ``P[h(S) >= h_obs]`` (evidence that A is better), less: ``P[h(S) <= h_obs]``,
        two-sided: ``P[|h(S)| >= |h_obs|]``. Ties count; ratios are compared exactly.
    method : {"auto", "exact", "dp", "monte_carlo"}
        ``"auto"`` / ``"exact"``: the grouped engine over the reduced state, each tail
        summed under an exponential tilt (relative accuracy at any depth; certified
        truncation). Where no tilt certifies a tail, the dense distribution is used and
        p-values below its round-off (1e-10) are recomputed with the DP.
        ``"dp"``: the papers' Alg. 3 over the same state (small N). ``"monte_carlo"``:
        ``n_resamples`` random swaps, ``p = (1 + hits) / (1 + n_resamples)`` with a
        Clopper-Pearson ``pvalue_ci``.
    zero_division : float in [0, 1]
        Value of a score whose denominator is 0 (scikit-learn's ``zero_division``).
    n_resamples, rng, n_jobs
        Monte Carlo only; an int seed makes runs repeatable; n_jobs threads (None: all cores).
    groups : array_like of labels, length N, optional
        The exchangeable unit of each entry (e.g. the document of each sentence): entries with
        equal labels are swapped together; their counts are summed per unit and the test stays
        exact over the 2^U swap patterns of the U units.

    Returns
    -------
    PermutationTestResult
        ``statistic`` is ``score_A - score_B``; ``null_distribution`` is the distribution of
        the reduced state S = (TP_A, FP_A) (or (TP_A, errors_A), or TP_A for recall).

    Raises
    ------
    ValueError
        Negative counts or inconsistent gold counts (naming the first bad entry), bad shapes,
        or a support too large for exact work (:class:`pairperm.SupportTooLargeError`; then
        use ``method="monte_carlo"``).
"""


def f1_test(x: ArrayLike, y: ArrayLike, *, alternative: Alternative = "two-sided",
            method: RatioMethod = "auto", beta: float = 1.0,
            zero_division: float = 0.0, n_resamples: int = N_RESAMPLES, rng: SeedLike = None,
            n_jobs: Optional[int] = None, groups: Optional[ArrayLike] = None) -> PermutationTestResult:
    return _ratio_test("f1", "f1_test", x, y, alternative, method, beta, zero_division, n_resamples, rng, n_jobs,
                       groups)


def precision_test(x: ArrayLike, y: ArrayLike, *, alternative: Alternative = "two-sided",
                   method: RatioMethod = "auto", zero_division: float = 0.0,
                   n_resamples: int = N_RESAMPLES, rng: SeedLike = None,
                   n_jobs: Optional[int] = None, groups: Optional[ArrayLike] = None) -> PermutationTestResult:
    return _ratio_test("precision", "precision_test", x, y, alternative, method, 1.0, zero_division, n_resamples,
                       rng, n_jobs, groups)


def recall_test(x: ArrayLike, y: ArrayLike, *, alternative: Alternative = "two-sided",
                method: RatioMethod = "auto", zero_division: float = 0.0,
                n_resamples: int = N_RESAMPLES, rng: SeedLike = None, n_jobs: Optional[int] = None,
                groups: Optional[ArrayLike] = None) -> PermutationTestResult:
    return _ratio_test("recall", "recall_test", x, y, alternative, method, 1.0, zero_division, n_resamples, rng,
                       n_jobs, groups)


_F1_EXAMPLES = """
    Examples
    --------
    >>> import pairperm
    >>> a = [[3, 1, 0], [2, 0, 1], [4, 1, 1], [1, 0, 0], [5, 2, 0]]   # (tp, fp, fn) per entry, system A
    >>> b = [[2, 1, 1], [2, 1, 1], [3, 0, 2], [1, 1, 0], [4, 0, 1]]   # system B, same gold counts
    >>> r = pairperm.f1_test(a, b)                  # F1: 30/36 against 24/32
    >>> print(f"{r.statistic:.6f} {r.pvalue:.6g}")
    0.083333 0.125
    >>> r.null_distribution.pmf.ndim                # the reduced state (TP_A, FP_A)
    2

    The reference implementation's (tp, errors) columns:

    >>> r = pairperm.f1_test([[3, 1], [2, 1], [4, 2]], [[2, 2], [2, 2], [3, 3]], alternative="greater")
    >>> print(f"{r.statistic:.6f} {r.pvalue:.6g}")
    0.151515 0.125
"""
_PRECISION_EXAMPLES = """
    Examples
    --------
    >>> import pairperm
    >>> a = [[3, 1, 0], [2, 0, 1], [4, 1, 1], [1, 0, 0], [5, 2, 0]]   # (tp, fp, fn) per entry, system A
    >>> b = [[2, 1, 1], [2, 1, 1], [3, 0, 2], [1, 1, 0], [4, 0, 1]]   # system B
    >>> r = pairperm.precision_test(a, b)           # precision: 15/19 against 12/15
    >>> print(f"{r.statistic:.6f} {r.pvalue:.6g}")
    -0.010526 1
"""
_RECALL_EXAMPLES = """
    Examples
    --------
    >>> import pairperm
    >>> a = [[3, 1, 0], [2, 0, 1], [4, 1, 1], [1, 0, 0], [5, 2, 0]]   # (tp, fp, fn) per entry, system A
    >>> b = [[2, 1, 1], [2, 1, 1], [3, 0, 2], [1, 1, 0], [4, 0, 1]]   # system B
    >>> r = pairperm.recall_test(a, b, alternative="greater")        # recall: 15/17 against 12/17
    >>> print(f"{r.statistic:.6f} {r.pvalue:.6g}", r.null_distribution.pmf.ndim)
    0.176471 0.125 1
"""


f1_test.__doc__ = (
    """Exact paired-permutation test for the difference in (micro) F-beta scores, F_A - F_B.

    F-beta = (1 + beta^2) TP / ((1 + beta^2) TP + beta^2 FN + FP); with (N, 2) inputs
    F1 = TP / (TP + errors / 2) as in the reference implementation. The state reduces to
    two dimensions (TP_A, FP_A). ``beta`` (float >= 0) must be a small exact binary
    fraction (1, 2, 0.5, ...), with (N, 3) inputs when it is not 1.
"""
    + _DOC_COMMON
    + _F1_EXAMPLES
)
precision_test.__doc__ = (
    """Exact paired-permutation test for the difference in micro precision TP / (TP + FP).

    Needs (N, 3) inputs; the state reduces to two dimensions (TP_A, FP_A).
"""
    + _DOC_COMMON
    + _PRECISION_EXAMPLES
)
recall_test.__doc__ = (
    """Exact paired-permutation test for the difference in micro recall TP / (TP + FN).

    Needs (N, 3) inputs. Gold counts are shared, so R_A - R_B = (TP_A - TP_B) / G: the
    state is one-dimensional and ``method="auto"`` gives p-values with relative accuracy
    down to 1e-300 (exponential tilting).
"""
    + _DOC_COMMON
    + _RECALL_EXAMPLES
)


def read_f1_file(path: Any, delim: Optional[str] = None, stdin: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Read the reference implementation's F1 format: one entry per line, four integers
    ``tp_A incorrect_A tp_B incorrect_B``.

    Parameters
    ----------
    path : str or path-like
        ``"-"`` reads standard input.
    delim : None, "," or "\\t" (also "tab")
        ``None`` splits on commas, tabs, semicolons or white space. Blank lines are skipped,
        and so is a header row; a UTF-8 byte-order mark is allowed.

    Returns
    -------
    a, b : ndarray of int64, shape (N, 2)
        ``(tp, errors)`` per entry for systems A and B, ready for :func:`f1_test`.

    Raises
    ------
    ValueError
        Naming the file and line of the first malformed or negative entry.
    """
    if delim == "tab":
        delim = "\t"
    if delim not in (None, ",", "\t"):
        raise ValueError(f"delim must be None (any of , tab ; or white space), ',' or '\\t'; got {delim!r}")
    table = read_table(str(path), stdin=stdin, widths=(4,), delim=delim,
                       what="integers (tp and incorrect of A, then of B)")
    arr = np.column_stack(table.columns)
    if arr.dtype.kind != "i" or (arr < 0).any():
        bad = int(np.argmax(((arr != np.floor(arr)) | (arr < 0)).any(axis=1)))
        raise ValueError(f"{table.name}:{table.line_of(bad)}: counts must be non-negative integers; "
                         f"got {arr[bad].tolist()}")
    return np.ascontiguousarray(arr[:, :2]), np.ascontiguousarray(arr[:, 2:])


def run_f1_file(path: Any, delim: Optional[str] = None, *, alternative: Alternative = "two-sided",
                method: RatioMethod = "auto", n_resamples: int = N_RESAMPLES,
                rng: SeedLike = None) -> list[str]:
    """``pairperm test FILE --metric f1``: read :func:`read_f1_file`'s format, run :func:`f1_test`,
    and return the lines to print."""
    a, b = read_f1_file(path, delim)
    r = f1_test(a, b, alternative=alternative, method=method, n_resamples=n_resamples, rng=rng)
    pr = _problem("f1", a, b, 1.0, 0.0, "f1_test")
    lines = [
        f"file: {path}",
        f"entries: {a.shape[0]}",
        "metric: F1 (micro, tp / (tp + errors/2))",
        f"F1 A: {float(pr.score_a):.6f}",
        f"F1 B: {float(pr.score_b):.6f}",
        f"statistic (F1_A - F1_B): {r.statistic:.6g}",
        f"alternative: {r.alternative}",
        f"method: {r.method}",
        f"p-value: {r.pvalue:.6g}",
    ]
    if r.pvalue_ci is not None:
        lines.append(f"p-value 95% CI: [{r.pvalue_ci[0]:.6g}, {r.pvalue_ci[1]:.6g}] ({r.n_resamples} resamples)")
    return lines
