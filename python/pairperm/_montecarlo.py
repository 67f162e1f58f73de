"""Monte Carlo paired-permutation test for any statistic of the summed local effects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from ._difference import ShiftEffect
from ._results import MonteCarloTestResult
from ._runner import run
from ._sampling import MonteCarloOptions, monte_carlo_options
from ._structured import read_effects_and_statistic
from ._validation import N_RESAMPLES, check_alternative, check_method
from .typing import Alternative, ArrayLike, MonteCarloMethod, SeedLike

if TYPE_CHECKING:
    from ._effects import LocalEffects

__all__ = ["monte_carlo_test"]

#: Plain sampling, or tilted importance sampling of a callable statistic (deep p-values).
MONTE_CARLO_METHODS = ("monte_carlo", "importance_sampling")


def _monte_carlo_test_iv(stay: Any, swap: Any, statistic: Any, n_resamples: Any, rng: Any, alternative: Any,
                         alpha: Any, confidence_level: Any, rtol: Any, n_jobs: Any, method: Any,
                         groups: Any = None) -> tuple[LocalEffects, Any, MonteCarloOptions]:
    func = "monte_carlo_test"
    check_alternative(alternative, func)
    check_method(method, MONTE_CARLO_METHODS, func)
    if method == "importance_sampling":
        if statistic is None:
            raise ValueError(f"{func}: method='importance_sampling' tilts a callable statistic; for the sum S itself "
                             "(statistic=None) pairperm.structured_test and permutation_test are exact or tilted already")
        if alpha is not None:
            raise ValueError(f"{func}: alpha (early stopping of plain sampling) does not apply to "
                             "method='importance_sampling', which samples until its interval is 5% wide")
    mc = monte_carlo_options(n_resamples, rng, n_jobs, func, alpha=alpha, confidence_level=confidence_level)
    effects, stat = read_effects_and_statistic(stay, swap, statistic, rtol, func, groups)
    return effects, stat, mc


def monte_carlo_test(
    stay: ArrayLike,
    swap: ArrayLike,
    statistic: Optional[Callable[[np.ndarray], Any]] = None,
    *,
    n_resamples: int = N_RESAMPLES,
    rng: SeedLike = None,
    alternative: Alternative = "two-sided",
    alpha: Optional[float] = None,
    confidence_level: float = 0.95,
    rtol: Optional[float] = None,
    n_jobs: Optional[int] = None,
    groups: Optional[ArrayLike] = None,
    method: MonteCarloMethod = "monte_carlo",
) -> MonteCarloTestResult:
    """Monte Carlo paired-permutation test (the papers' Alg. 1) for any statistic.

    Each resample swaps every entry independently with probability 1/2 and sums the
    local effects: ``S* = sum_n Z_n`` with ``Z_n`` uniform on ``{stay[n], swap[n]}``.
    The sums are drawn in the compiled core in fixed blocks, so memory stays flat in
    ``n_resamples`` and a seed gives the same resamples as every other sampling test of
    pairperm on the same local effects (``permutation_test(method="monte_carlo")`` on
    ``x, y`` equals this on ``x - y, y - x``).

    Parameters
    ----------
    stay, swap : array_like, shape (N,) or (N, m)
        Local effects ``g(u_n, v_n)`` and ``g(v_n, u_n)``: integers (m-vectors for
        m-dimensional statistics, e.g. stacked sufficient statistics of both systems) or
        real numbers (approximate randomisation on means: ``x - y, y - x``).
    statistic : callable or None
        Vectorised: receives the sums of a block of K resamples (int64; float64 for
        real-valued effects), shape (K,) for 1-D inputs or (K, m), and returns shape (K,). It is also called once on the
        observed sum (K = 1). None: the identity on S (1-D inputs only), compared in
        exact integer arithmetic as in :func:`pairperm.permutation_test`.
    n_resamples : int
    rng : None, int or numpy.random.Generator
        An int seed makes runs repeatable (also across thread counts).
    alternative : {"two-sided", "greater", "less"}
        For ``statistic=None`` as in :func:`pairperm.structured_test`. For a callable:
        "greater" counts ``h(S*) >= h_obs``, "less" ``h(S*) <= h_obs``, "two-sided"
        ``|h(S*)| >= |h_obs|``, with float ties within ``rtol * |h_obs|`` (integer
        statistics compared exactly), so this estimates the exact p-value of
        :func:`pairperm.structured_test`.
    alpha : float or None
        Early stopping: stop between blocks of resamples once the Clopper-Pearson
        interval of the p-value excludes ``alpha``.
    confidence_level : float
        Of ``pvalue_ci``.
    rtol : float or None
        Relative tolerance for ties of a float statistic (default 1e-12 of ``|h_obs|``). For
        the sum of real-valued effects (``statistic=None``) the slack is the round-off bound of
        :func:`pairperm.structured_test`, widened by ``rtol * sum(|stay| + |swap|)`` when rtol
        is given; effects ``x - y, y - x`` formed before the call are taken as read, so ties
        of decimal scores far from 0 need :func:`pairperm.permutation_test` on the scores, or
        an ``rtol``.
    n_jobs : int or None
        Sampler threads; None uses all cores.
    groups : array_like of labels, length N, optional
        The exchangeable unit of each entry: entries with equal labels are swapped together
        (their local effects are summed per unit, and the test runs on the U unit effects:
        still exact over the 2^U swap patterns).
    method : {"monte_carlo", "importance_sampling"}
        ``"monte_carlo"``: plain sampling, ``p = (1 + hits) / (1 + n_resamples)``, which
        cannot resolve p below ~1 / n_resamples. ``"importance_sampling"`` (a callable
        statistic): every entry swaps with a probability tilted towards the rejection
        region along the statistic's linearisation, each sample is weighted back by its
        likelihood ratio, and the linearisation's exact tail probability serves as a control
        variate; a first round of at least 512 samples (at most ``n_resamples``), then rounds
        are pooled (at most 8 x ``n_resamples`` samples) until the 95% interval's relative
        half-width is at most 5%; unbiased, with a relative error bar at any depth
        (``log_pvalue`` past float64 underflow). Two-sided tests sample both tails.
        ``n_resamples`` then counts the samples drawn, ``hits`` those in the region.

    Returns
    -------
    MonteCarloTestResult
        ``pvalue = (1 + hits) / (1 + n_resamples)`` as in ``scipy.stats.permutation_test``.

    Examples
    --------
    >>> import pairperm
    >>> stay, swap = [2, -1, 3, 0, 1], [-2, 1, -3, 0, -1]
    >>> r = pairperm.monte_carlo_test(stay, swap, n_resamples=10_000, rng=1)
    >>> r.statistic, r.n_resamples, r.pvalue == (1 + r.hits) / (1 + r.n_resamples)
    (5, 10000, True)
    >>> exact = pairperm.structured_test(stay, swap).pvalue     # 12 of the 32 swaps
    >>> print(exact, r.pvalue_ci[0] <= exact <= r.pvalue_ci[1])
    0.375 True

    With ``alpha``, sampling stops once the interval excludes it:

    >>> r = pairperm.monte_carlo_test(stay, swap, n_resamples=1_000_000, rng=1, alpha=0.05)
    >>> r.stopped_early, r.n_resamples < 1_000_000
    (True, True)

    Deep p-values of a nonlinear statistic: importance sampling reports an interval
    relative to p where plain sampling would only give ``1 / (1 + n_resamples)``:

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> tp, fp = rng.binomial(1, 0.8, 400), rng.binomial(1, 0.2, 400)
    >>> stay = np.stack([tp, fp], axis=1); swap = np.stack([1 - tp, 1 - fp], axis=1)
    >>> precision = lambda s: s[:, 0] / np.maximum(s[:, 0] + s[:, 1], 1)
    >>> r = pairperm.monte_carlo_test(stay, swap, precision, method="importance_sampling", rng=0)
    >>> r.engine, r.pvalue < 1e-20, (r.pvalue_ci[1] - r.pvalue_ci[0]) / 2 <= 0.05 * r.pvalue
    ('importance_sampling', True, True)
    """
    effects, stat, mc = _monte_carlo_test_iv(stay, swap, statistic, n_resamples, rng, alternative, alpha,
                                             confidence_level, rtol, n_jobs, method, groups)
    effect = None
    if statistic is None and effects.one_d and np.array_equal(effects.swap, -effects.stay):
        # Sign-flip effects x - y, y - x: S is sum(x) - sum(y), a difference of two systems' sums.
        effect = ShiftEffect.of(effects.differences(), "sum")
    result: MonteCarloTestResult = run(effects, stat, alternative=alternative, method=method, func="monte_carlo_test",
                                       mc=mc, result_type=MonteCarloTestResult, effect=effect)
    return result
