"""The exact paired-permutation test of summed scores, and the engines' null distributions."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union, overload

import numpy as np

import pairperm._core as _core

from . import _runner
from ._difference import ShiftEffect
from ._distribution import Distribution, MultiDistribution
from ._effects import LocalEffects
from ._results import PermutationTestResult
from ._runner import exact_result, outcome_result, run, settle
from ._sampling import MonteCarloOptions, core_sampling, monte_carlo_options
from ._statistics import statistic_for
from ._units import paired_scores
from ._validation import (
    N_RESAMPLES,
    as_score_pair,
    check_alternative,
    check_method,
    check_real_difference,
    check_rtol,
)
from .typing import Alternative, ArrayLike, DistributionMethod, PermutationMethod, SeedLike

__all__ = ["convolve_dp", "convolve_fft", "null_distribution", "permutation_test"]

DISTRIBUTION_METHODS = ("auto", "dp", "fft")
# NumPy's one descriptor of native int64: arrays of it are what the core reads in place.
_NATIVE_INT64 = np.dtype(np.int64)
TEST_METHODS = ("auto", "exact", "dp", "fft", "monte_carlo")


def convolve_dp(stay: ArrayLike, swap: ArrayLike) -> Union[Distribution, MultiDistribution]:
    """Null distribution of S by the papers' two-point DP (Alg. 3).

    O(G N^2) time, O(G N) memory; every pmf entry has tiny relative error, which makes
    this the accuracy reference.

    Parameters
    ----------
    stay, swap : array_like of int, shape (N,) or (N, m)
        Local effects ``g(u_n, v_n)`` and ``g(v_n, u_n)``.

    Examples
    --------
    >>> import numpy as np, pairperm
    >>> d = pairperm.convolve_dp([1, 2, 0], [-1, -2, 0])
    >>> d.method, d.offset
    ('dp', -3)
    >>> d.pmf
    array([0.25, 0.  , 0.25, 0.  , 0.25, 0.  , 0.25])
    """
    return null_distribution(stay, swap, method="dp", _func="convolve_dp")


def convolve_fft(stay: ArrayLike, swap: ArrayLike) -> Distribution:
    """Null distribution of S by the papers' divide-and-conquer FFT tree (Alg. 4).

    Absolute error ~1e-16 of the peak per entry, so tiny tail probabilities are noise;
    use :func:`permutation_test` with ``method="auto"`` for those.

    Parameters
    ----------
    stay, swap : array_like of int, shape (N,)

    Examples
    --------
    >>> import numpy as np, pairperm
    >>> d = pairperm.convolve_fft([1, 2, 0], [-1, -2, 0])
    >>> d.method
    'fft'
    >>> bool(np.allclose(d.pmf, pairperm.convolve_dp([1, 2, 0], [-1, -2, 0]).pmf, rtol=0, atol=1e-15))
    True
    """
    return null_distribution(stay, swap, method="fft", _func="convolve_fft")


@overload
def null_distribution(stay: ArrayLike, swap: ArrayLike, method: Literal["fft"], *,
                      _func: str = "null_distribution") -> Distribution: ...
@overload
def null_distribution(stay: ArrayLike, swap: ArrayLike, method: DistributionMethod = "auto", *,
                      _func: str = "null_distribution") -> Union[Distribution, MultiDistribution]: ...
def null_distribution(stay: ArrayLike, swap: ArrayLike, method: DistributionMethod = "auto",
                      *, _func: str = "null_distribution") -> Union[Distribution, MultiDistribution]:
    """Null distribution of S = sum_n Z_n, Z_n uniform on {stay[n], swap[n]}.

    Parameters
    ----------
    stay, swap : array_like of int, shape (N,) or (N, m)
    method : {"auto", "dp", "fft"}
        ``"auto"`` is the grouped engine: one binomial per distinct ``stay - swap``,
        support cut to a certified window (``truncated_mass`` <= 1e-320 in 1-D, 1e-40 in
        m-D). ``"fft"`` is for 1-D effects only.

    Returns
    -------
    Distribution (1-D effects) or MultiDistribution (shape (N, m), m >= 2)

    Examples
    --------
    >>> import pairperm
    >>> d = pairperm.null_distribution([1, 2, 0], [-1, -2, 0])   # S in {-3, -1, 1, 3}
    >>> d
    Distribution(offset=-3, size=7, mass=1, truncated_mass=0, method='auto')
    >>> d.support[d.pmf > 0]
    array([-3, -1,  1,  3])
    >>> print(f"{d.sf(1):.6g} {d.cdf(-1):.6g}")      # P[S > 1], P[S <= -1]
    0.25 0.5

    Effects of shape (N, m) give an m-dimensional distribution:

    >>> pairperm.null_distribution([[1, 0], [0, 1], [1, 1]], [[0, 1], [1, 0], [0, 0]]).pmf.shape
    (4, 4)
    """
    check_method(method, DISTRIBUTION_METHODS, _func)
    effects = LocalEffects.read(stay, swap, _func, ndim=(1, 2) if method != "fft" else 1)
    return effects.distribution(method)


def _int64_vectors_test(x: np.ndarray, y: np.ndarray, alternative: Any, method: str, n_resamples: Any, rng: Any,
                        n_jobs: Any) -> Optional[PermutationTestResult]:
    """The commonest call, two int64 vectors with the defaults, in one call of the core: the
    summary and the executor, as the general route computes them bit for bit, its arguments
    checked in the same order. None where the general route has to run: arrays the core cannot
    read in place (other dtypes or shapes, strided or misaligned), or arguments refused (sums the
    core cannot hold, sampling arguments), whose errors the general route words in its order; it
    then reads the inputs once more."""
    func = "permutation_test"
    check_alternative(alternative, func)
    try:
        k, jobs, draw_seed = core_sampling(n_resamples, rng, n_jobs, func)
    except (TypeError, ValueError):
        return None  # the general route words it, after the checks that come before it
    try:
        done = _core.paired_sum_pvalue(x, y, alternative, method, _runner.LIMITS, k, jobs, draw_seed)
    except ValueError:
        return None
    if done is None:
        return None
    summary, d, p, log_p, engine, outcome = done
    statistic = summary.observed
    # The differences are the result's own: the caller may change x and y after this returns.
    effect = ShiftEffect.of(x - y if d is None else d, "sum")
    result: PermutationTestResult
    if outcome is None:  # an exact engine, nothing to say about it
        result = exact_result(PermutationTestResult, statistic, p, log_p, method, alternative, engine, False, summary,
                              True, statistic, effect)
    else:
        result = outcome_result(settle(outcome, func, n_varying=summary.n_varying), PermutationTestResult, statistic,
                                method, alternative, summary, True, statistic, effect)
    return result


def _permutation_test_iv(x: Any, y: Any, alternative: Any, method: Any, n_resamples: Any, rng: Any,
                         n_jobs: Any, rtol: Any,
                         groups: Any) -> tuple[LocalEffects, Any, MonteCarloOptions, int, Optional[np.ndarray]]:
    func = "permutation_test"
    check_alternative(alternative, func)
    check_method(method, TEST_METHODS, func)
    rtol = check_rtol(rtol, func)
    x_a, y_a = as_score_pair(x, y, func, ndim=(1, 2))
    n_items = x_a.size
    x_a, y_a, roundoff, sizes = paired_scores(x_a, y_a, groups, func, raw_x=x)
    check_real_difference(x_a, y_a, func)
    effects = LocalEffects.paired(x_a, y_a, func, roundoff=roundoff)
    mc = monte_carlo_options(n_resamples, rng, n_jobs, func)
    return effects, statistic_for(effects, None, rtol, func), mc, n_items, sizes


def permutation_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    alternative: Alternative = "two-sided",
    method: PermutationMethod = "auto",
    n_resamples: int = N_RESAMPLES,
    rng: SeedLike = None,
    n_jobs: Optional[int] = None,
    rtol: Optional[float] = None,
    groups: Optional[ArrayLike] = None,
) -> PermutationTestResult:
    """Paired-permutation test for a difference of summed scores: exact for integer scores,
    exact or with a relative error bar for real-valued ones.

    Each entry's pair of scores is swapped between the systems with probability 1/2
    under the null. The statistic is ``T = sum(x) - sum(y)`` and, with S its null
    counterpart, the p-value is ``P[|S| >= |T|]`` (two-sided), ``P[S >= T]`` (greater:
    evidence that A > B) or ``P[S <= T]`` (less). Ties count.

    Parameters
    ----------
    x, y : array_like, shape (N,) or (N, k)
        Per-entry scores of systems A and B: integers (e.g. correctly tagged tokens per
        sentence; integral floats count as integers) or any finite real numbers (sentence
        COMET/chrF, per-query nDCG/AP, judge scores). Shape (N, k): k samples of each of N
        items (several generations per prompt), swapped together as one unit.
    alternative : {"two-sided", "greater", "less"}
    method : {"auto", "exact", "dp", "fft", "monte_carlo"}
        Integer scores: ``"auto"`` and ``"exact"`` run the grouped engine with
        exponential tilting, exact with relative accuracy ~1e-12 down to p = 1e-300 and
        beyond (see ``log_pvalue``); for up to 53 varying entries with small differences
        (its p-value is then the exact fraction) or small inputs with many distinct
        differences the DP, and when the grouped engine's window would be too large, all 2^n
        states of the n varying entries (n <= 22). ``"dp"`` / ``"fft"``: the papers' Alg. 3 / Alg. 4.
        Real-valued scores: ``"exact"`` enumerates all 2^n states by meet in the middle
        (n <= 40 varying entries; N = 40 takes ~50 ms); ``"auto"`` does that when it can and
        otherwise estimates the tail by importance sampling under the exponentially tilted
        null (tilt from the saddlepoint equation), with a 95% ``pvalue_ci`` of *relative*
        half-width at most 5% (rounds of ``n_resamples`` samples are added, at most 8, until
        it is: one round down to p ~ 1e-10, four at 1e-100), and ``log_pvalue`` where p
        underflows. ``"monte_carlo"`` (both kinds): the papers' Alg. 1 with
        ``n_resamples`` samples, ``p = (1 + hits) / (1 + K)``, which cannot resolve p below
        ~1/K.
    n_resamples : int
        Samples of the sampling routes.
    rng : None, int or numpy.random.Generator
        Seed of the sampling routes; an int makes runs repeatable.
    n_jobs : int or None
        Sampler threads; None uses all cores. Results do not depend on it.
    rtol : float or None
        Real-valued scores only. States equal to the observed statistic in exact (decimal)
        arithmetic tie with it, identically in every route, up to the rigorous round-off
        bound ``2 * (n + 4) * eps * sum(|x| + |y|)`` over the n varying entries, relative to
        the scores and not to their differences: reading 54.7 and 54.6 into binary moves
        their difference by ~1e-14. With units (``groups=``, shape (N, k)) each unit's term is
        ``(j + 1) * (sum |x| + sum |y|)`` over its j scores per side, for the round-off of the
        unit sums. The bound is 0 when the scores themselves lie on a binary grid fine enough
        for every unit sum, difference and sum to be exact (integers, halves, quarters, ...).
        See :doc:`/user-guide/real-valued`. None (default): that bound alone; a number >= 0
        widens it by ``2 * rtol * sum(|x - y|)``.
    groups : array_like of labels, length N, optional
        The exchangeable unit of each item (e.g. the passage a question is about): items
        with equal labels are swapped together. The test then runs on the per-unit sums,
        exactly as before but over the 2^U swap patterns of the U units; the statistic,
        ``sum(x) - sum(y)``, is unchanged. See :doc:`/user-guide/units`.

    Returns
    -------
    PermutationTestResult
        ``engine`` says which route ran.

    Examples
    --------
    >>> import pairperm
    >>> x = [12, 7, 30, 9, 15, 22]          # correct tokens per sentence, system A
    >>> y = [11, 7, 27, 9, 13, 22]          # and system B
    >>> pairperm.permutation_test(x, y)
    PermutationTestResult(statistic=6, difference=6, pvalue=0.25, method='auto', engine='dp', alternative='two-sided')
    >>> print(f'{pairperm.permutation_test(x, y, alternative="greater").pvalue:.6g}')   # 2^3 of 2^6 swaps
    0.125

    Real-valued scores with few entries are enumerated exactly:

    >>> r = pairperm.permutation_test([0.71, 0.64, 0.88, 0.52, 0.90], [0.69, 0.61, 0.80, 0.55, 0.85])
    >>> print(f"{r.statistic:.2f} {r.pvalue:.6g}", r.engine)
    0.15 0.25 meet_in_the_middle

    A seeded Monte Carlo estimate, with its 95% interval:

    >>> r = pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=2000, rng=0)
    >>> lo, hi = r.pvalue_ci
    >>> bool(lo <= 0.25 <= hi), r.n_resamples
    (True, 2000)
    """
    # Plain arrays only (a subclass, e.g. a masked array, means more than its buffer); the core
    # takes those it can read in place, 1-D native int64, and declines the rest.
    if (groups is None and rtol is None and type(x) is np.ndarray and type(y) is np.ndarray
            and x.dtype is _NATIVE_INT64 and y.dtype is _NATIVE_INT64 and x.ndim == 1
            and isinstance(method, str) and method in ("auto", "exact")):
        r = _int64_vectors_test(x, y, alternative, method, n_resamples, rng, n_jobs)
        if r is not None:
            return r
    effects, stat, mc, n_items, sizes = _permutation_test_iv(x, y, alternative, method, n_resamples, rng, n_jobs,
                                                             rtol, groups)
    result: PermutationTestResult = run(effects, stat, alternative=alternative, method=method, func="permutation_test",
                                        mc=mc, effect=ShiftEffect.of(effects.differences(), "sum", n_items, sizes))
    return result
