"""structured_test: the papers' general paired-permutation test for 1-D and m-D local effects."""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ._effects import LocalEffects
from ._results import PermutationTestResult
from ._runner import run
from ._sampling import MonteCarloOptions, monte_carlo_options
from ._statistics import statistic_for
from ._validation import (
    N_RESAMPLES,
    check_alternative,
    check_method,
    check_rtol,
    check_statistic,
)
from .typing import Alternative, ArrayLike, PermutationMethod, SeedLike

__all__ = ["structured_test"]

STRUCTURED_METHODS = ("auto", "exact", "dp", "fft", "monte_carlo")


def _structured_test_iv(stay: Any, swap: Any, statistic: Any, alternative: Any, method: Any, rtol: Any,
                        n_resamples: Any, rng: Any, n_jobs: Any,
                        groups: Any = None) -> tuple[LocalEffects, Any, MonteCarloOptions]:
    func = "structured_test"
    check_alternative(alternative, func)
    check_method(method, STRUCTURED_METHODS, func)
    mc = monte_carlo_options(n_resamples, rng, n_jobs, func)
    effects, stat = read_effects_and_statistic(stay, swap, statistic, rtol, func, groups)
    if method == "fft" and not effects.one_d:
        raise ValueError(f"{func}: method='fft' (Alg. 4) is for 1-D local effects; use 'auto' or 'dp' for m-D")
    return effects, stat, mc


def read_effects_and_statistic(stay: Any, swap: Any, statistic: Any, rtol: Any, func: str,
                               groups: Any = None) -> tuple[LocalEffects, Any]:
    """Local effects (integer or real, 1-D or m-D; summed per unit with `groups`) and the
    statistic kind for them."""
    check_statistic(statistic, func)
    rtol = check_rtol(rtol, func)
    effects = LocalEffects.read(stay, swap, func, ndim=(1, 2), real_ok=True, groups=groups)
    if statistic is None and not effects.one_d:
        raise ValueError(f"{func}: statistic=None (the sum S) needs 1-D local effects; for shape "
                         f"{effects.stay.shape} pass a vectorised callable statistic")
    return effects, statistic_for(effects, statistic, rtol, func)


def structured_test(
    stay: ArrayLike,
    swap: ArrayLike,
    statistic: Optional[Callable[[np.ndarray], Any]] = None,
    *,
    alternative: Alternative = "two-sided",
    method: PermutationMethod = "auto",
    rtol: Optional[float] = None,
    n_resamples: int = N_RESAMPLES,
    rng: SeedLike = None,
    n_jobs: Optional[int] = None,
    groups: Optional[ArrayLike] = None,
) -> PermutationTestResult:
    """Exact paired-permutation test for a statistic of summed local effects (the papers' form).

    Under the null each entry independently contributes ``stay[n]`` or ``swap[n]`` with
    probability 1/2; ``S`` is the sum and ``s_obs = sum(stay)``.

    Parameters
    ----------
    stay, swap : array_like, shape (N,) or (N, m)
        Local effects ``g(u_n, v_n)`` and ``g(v_n, u_n)``: integers (m-vectors for m-D
        statistics), or real numbers. Real-valued effects have no dense null distribution:
        the sum (``statistic=None``, 1-D) runs as in :func:`permutation_test` on real
        scores (meet-in-the-middle enumeration, or tilted importance sampling); a callable
        is exact by listing all 2^n states (n <= 22 varying entries) or sampled with
        ``method="monte_carlo"``.
    statistic : None or callable
        ``None``: the statistic is S itself (1-D only): greater ``P[S >= s_obs]``, less
        ``P[S <= s_obs]``, two-sided ``P[|S - mu| >= |s_obs - mu|]`` with ``mu = E[S]``,
        all in exact integers.
        A callable ``h`` must be vectorised: it receives an array of S values (int64; float64 for real-valued effects) of shape
        ``(K,)`` (1-D) or ``(K, m)`` (one S per row) and returns K numbers, finite at every
        value S can take. Then greater is ``P[h(S) >= h_obs]``, less ``P[h(S) <= h_obs]``
        and two-sided ``P[|h(S)| >= |h_obs|]`` (the papers' absolute value; meant for
        statistics centred at 0, such as a difference of two systems' scores).
    alternative : {"two-sided", "greater", "less"}
    method : {"auto", "exact", "dp", "fft", "monte_carlo"}
        ``"auto"`` / ``"exact"``: the grouped engine (1-D: exact tails by tilting when
        ``statistic`` is None; otherwise its distribution, with p-values below the FFT's
        round-off recomputed by the DP), or listing all 2^n states when few entries vary.
        ``"dp"``: the papers' Alg. 3 (any m). ``"fft"``: the papers' Alg. 4 (1-D only).
        ``"monte_carlo"``: ``n_resamples`` random swaps, as :func:`monte_carlo_test`.
    rtol : float or None
        Float statistics tie when within ``rtol * |h_obs|`` (default 1e-12): the comparisons are
        ``h(S) >= h_obs - rtol*|h_obs|`` (greater), ``h(S) <= h_obs + rtol*|h_obs|`` (less),
        ``|h(S)| >= |h_obs| - rtol*|h_obs|`` (two-sided), so that states tied in exact
        arithmetic still count after floating-point round-off. Integer-valued statistics
        are compared exactly. For the sum of real-valued effects the slack is the
        round-off bound ``(n + 4) * eps * sum(|stay| + |swap|)`` (0 on a fine enough binary
        grid), widened by ``rtol * sum(|stay| + |swap|)`` when rtol is given, as in
        :func:`permutation_test`. The effects are taken as read: differences ``x - y`` formed
        before the call carry the round-off of x and y, which is relative to the scores (see
        :doc:`/user-guide/real-valued`); :func:`permutation_test` on the scores accounts for it. For
        F1, precision and recall use :func:`pairperm.f1_test` etc., which compare ratios exactly.
    n_resamples, rng, n_jobs :
        ``method="monte_carlo"`` only, as in :func:`monte_carlo_test`.
    groups : array_like of labels, length N, optional
        The exchangeable unit of each entry: entries with equal labels are swapped together
        (their local effects are summed per unit, and the test runs on the U unit effects:
        still exact over the 2^U swap patterns).

    Returns
    -------
    PermutationTestResult
        ``statistic`` is ``s_obs`` (int) or ``h_obs``; ``null_distribution`` is the
        distribution of S (a MultiDistribution for m-D).
        ``difference`` is None and ``confidence_interval()`` raises: local effects and a
        statistic of their sum need not be a difference of two systems' metrics (for scores
        of two systems, :func:`permutation_test`, :func:`f1_test` or :func:`compare` give one).

    Examples
    --------
    >>> import pairperm
    >>> stay, swap = [3, 5, 1, 2, 4], [1, 0, 1, 6, 0]
    >>> pairperm.structured_test(stay, swap)        # S itself, s_obs = 15, E[S] = 11.5
    PermutationTestResult(statistic=15, pvalue=0.5, method='auto', engine='dp', alternative='two-sided')

    A vectorised statistic of S (here S squared):

    >>> r = pairperm.structured_test(stay, swap, lambda s: s**2, alternative="greater")
    >>> print(r.statistic, f"{r.pvalue:.12g}")
    225 0.25

    m-dimensional effects, with a statistic of each row of S:

    >>> r = pairperm.structured_test([[1, 0], [2, 1], [1, 1]], [[0, 1], [1, 1], [0, 0]],
    ...                              lambda s: s[:, 0] - s[:, 1])
    >>> print(r.null_distribution.pmf.ndim, f"{r.pvalue:.12g}")    # only h = 2 is as extreme
    2 0.25
    """
    effects, stat, mc = _structured_test_iv(stay, swap, statistic, alternative, method, rtol, n_resamples, rng,
                                            n_jobs, groups)
    result: PermutationTestResult = run(effects, stat, alternative=alternative, method=method, func="structured_test",
                                        mc=mc)
    return result
