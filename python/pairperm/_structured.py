"""structured_test: the papers' general paired-permutation test for 1-D and m-D local effects."""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from . import _core
from ._distribution import Distribution
from ._accuracy import resolve_small_pvalue
from ._results import PermutationTestResult
from ._permutation import _wrap as _wrap_1d
from ._permutation import grouped_pvalue
from ._validation import apply_vectorised, as_int_array, check_alternative, check_method, check_same_length

__all__ = ["structured_test", "multidim_distribution"]

STRUCTURED_METHODS = ("auto", "dp", "fft")
MONTE_CARLO_HINT = "use pairperm.monte_carlo_test (Monte Carlo) instead"


def _local_effects_nd(stay: Any, swap: Any, func: str) -> tuple[np.ndarray, np.ndarray]:
    stay_a = as_int_array(stay, "stay", func, ndim=(1, 2))
    swap_a = as_int_array(swap, "swap", func, ndim=(1, 2))
    check_same_length(stay_a, swap_a, "stay", "swap", func)
    if stay_a.ndim == 2 and stay_a.shape[1] == 0:
        raise ValueError(f"{func}: local effects need at least one coordinate; got shape {stay_a.shape}")
    return stay_a, swap_a


def _wrap_multi(triple: tuple, method: str) -> Distribution:
    offset, pmf, truncated = triple
    return Distribution(offset=tuple(int(o) for o in offset), pmf=pmf, truncated_mass=float(truncated), method=method)


def _infeasible(exc: Exception) -> ValueError:
    return ValueError(f"{exc}" if "monte_carlo" in str(exc) else f"{exc}; exact work is infeasible, {MONTE_CARLO_HINT}")


def multidim_distribution(stay: np.ndarray, swap: np.ndarray, method: str = "auto") -> Distribution:
    """Null distribution of the vector sum S for validated (N, m) int64 local effects.

    ``"auto"``: the grouped engine (one binomial per distinct canonical delta vector, the
    characteristic function on a grid, one m-D inverse FFT), cut per coordinate to a
    Hoeffding box with ``truncated_mass <= 1e-40``. ``"dp"``: Alg. 3 over the full box.
    Raises ValueError (pointing to Monte Carlo) when the dense support would be too large.
    """
    try:
        if method == "dp":
            return _wrap_multi(_core.convolve_dp_multi(stay, swap), "dp")
        return _wrap_multi(_core.grouped_distribution_multi(_core.summarize_multi(stay, swap)), "auto")
    except (_core.SupportTooLargeError, MemoryError) as exc:
        raise _infeasible(exc) from None


def _grid_points(dist: Distribution) -> np.ndarray:
    """All S values of an m-D distribution's box, shape (K, m), row-major like pmf.ravel()."""
    axes = [o + np.arange(n, dtype=np.int64) for o, n in zip(dist.offset, dist.pmf.shape)]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([g.ravel() for g in mesh], axis=1)


def structured_test(
    stay: Any,
    swap: Any,
    statistic: Optional[Callable[[np.ndarray], Any]] = None,
    *,
    alternative: str = "two-sided",
    method: str = "auto",
    rtol: float = 1e-12,
) -> PermutationTestResult:
    """Exact paired-permutation test for a statistic of summed local effects (the papers' form).

    Under the null each entry independently contributes ``stay[n]`` or ``swap[n]`` with
    probability 1/2; ``S`` is the sum and ``s_obs = sum(stay)``.

    Parameters
    ----------
    stay, swap : array_like of int, shape (N,) or (N, m)
        Local effects ``g(u_n, v_n)`` and ``g(v_n, u_n)`` (integer m-vectors for m-D statistics).
    statistic : None or callable
        ``None``: the statistic is S itself (1-D only), with SPEC §1's tests:
        greater ``P[S >= s_obs]``, less ``P[S <= s_obs]``, two-sided
        ``P[|S - mu| >= |s_obs - mu|]``, ``mu = E[S]``, all in exact integers.
        A callable ``h`` must be vectorised: it receives an int64 array of S values of shape
        ``(K,)`` (1-D) or ``(K, m)`` (one S per row) and returns K floats. Then greater is
        ``P[h(S) >= h_obs]``, less ``P[h(S) <= h_obs]`` and two-sided
        ``P[|h(S)| >= |h_obs|]`` (the papers' absolute value; meant for statistics centred at
        0, such as a difference of two systems' scores).
    alternative : {"two-sided", "greater", "less"}
    method : {"auto", "dp", "fft"}
        ``"auto"``: the grouped engine (1-D: exact tails by tilting when ``statistic`` is
        None; m-D: grid of the characteristic function, truncation certified per coordinate).
        ``"dp"``: the papers' Alg. 3 (any m). ``"fft"``: the papers' Alg. 4 (1-D only).
    rtol : float
        Float statistics tie when within ``rtol * |h_obs|``: the comparisons are
        ``h(S) >= h_obs - rtol*|h_obs|`` (greater), ``h(S) <= h_obs + rtol*|h_obs|`` (less),
        ``|h(S)| >= |h_obs| - rtol*|h_obs|`` (two-sided), so states that are tied in exact
        arithmetic still count after floating-point round-off. Default 1e-12. Unused when
        ``statistic`` is None (integer comparisons). For F1, precision and recall use
        :func:`pairperm.f1_test` etc., which compare ratios exactly.

    Returns
    -------
    PermutationTestResult
        ``statistic`` is ``s_obs`` (int) or ``h_obs`` (float); ``null_distribution`` is the
        distribution of S (offset a tuple for m-D).
    """
    func = "structured_test"
    check_alternative(alternative)
    check_method(method, STRUCTURED_METHODS)
    if statistic is not None and not callable(statistic):
        raise ValueError(f"{func}: statistic must be None or a callable; got {type(statistic).__name__}")
    rtol = float(rtol)
    if not (rtol >= 0 and math.isfinite(rtol)):
        raise ValueError(f"{func}: rtol must be a finite number >= 0; got {rtol}")
    stay_a, swap_a = _local_effects_nd(stay, swap, func)
    if stay_a.ndim == 2 and stay_a.shape[1] == 1:
        stay_a, swap_a = stay_a[:, 0].copy(), swap_a[:, 0].copy()
    one_d = stay_a.ndim == 1

    if statistic is None:
        if not one_d:
            raise ValueError(
                f"{func}: statistic=None (the sum S) needs 1-D local effects; for shape {stay_a.shape} "
                "pass a vectorised callable statistic"
            )
        summary = _core.summarize(stay_a, swap_a)  # also rules out int64 overflow
        observed = int(summary.observed)
        if method == "auto":
            p, log_p = grouped_pvalue(summary, lambda: (stay_a, swap_a), alternative)
            return PermutationTestResult(
                observed, float(p), float(log_p), "auto", alternative,
                _null=lambda: _wrap_1d(_core.grouped_distribution(summary), "auto"),
            )
        engine = _core.convolve_dp if method == "dp" else _core.convolve_fft
        dist = _wrap_1d(engine(stay_a, swap_a), method)
        p, log_p = _core.pvalue_from_distribution(dist.offset, dist.pmf, observed, int(summary.twice_mean), alternative)
        return PermutationTestResult(observed, float(p), float(log_p), method, alternative, _null=dist)

    if one_d:
        if method == "auto":
            dist = _wrap_1d(_core.grouped_distribution(_core.summarize(stay_a, swap_a)), "auto")
        else:
            engine = _core.convolve_dp if method == "dp" else _core.convolve_fft
            dist = _wrap_1d(engine(stay_a, swap_a), method)
        observed_s = np.array([int(stay_a.sum())], dtype=np.int64)
        points = dist.support
        weights = dist.pmf
    else:
        if method == "fft":
            raise ValueError(f"{func}: method='fft' (Alg. 4) is for 1-D local effects; use 'auto' or 'dp' for m-D")
        _core.summarize_multi(stay_a, swap_a)  # overflow check before any allocation
        dist = multidim_distribution(stay_a, swap_a, method)
        observed_s = stay_a.sum(axis=0, dtype=np.int64).reshape(1, -1)
        points = _grid_points(dist)
        weights = dist.pmf.ravel()
    h_obs = apply_vectorised(statistic, observed_s, 1, func)[0]
    if not math.isfinite(h_obs):
        raise ValueError(f"{func}: the statistic is {h_obs} at the observed value; it must be finite")
    p = _callable_pvalue(statistic, h_obs, dist, points, weights, alternative, rtol, func)
    bound = False
    if dist.method == "auto":
        # The grouped distribution is an inverse FFT: tiny p-values need the DP's relative accuracy.
        def exact() -> tuple:
            d = multidim_distribution(stay_a, swap_a, "dp") if not one_d else _wrap_1d(_core.convolve_dp(stay_a, swap_a), "dp")
            pts = d.support if one_d else _grid_points(d)
            q = _callable_pvalue(statistic, h_obs, d, pts, d.pmf.ravel(), alternative, rtol, func)
            return q, (math.log(q) if q > 0 else -math.inf), d

        box = np.abs(swap_a - stay_a).reshape(len(stay_a), -1).sum(axis=0).astype(float) + 1
        p, log_p, bound, redo = resolve_small_pvalue(p, len(stay_a) * float(np.prod(box)), exact, func)
        if redo is not None:
            dist = redo[2]
    else:
        log_p = math.log(p) if p > 0 else -math.inf
    return PermutationTestResult(float(h_obs), p, log_p, dist.method, alternative, pvalue_is_bound=bound, _null=dist)


def _callable_pvalue(statistic, h_obs, dist, points, weights, alternative, rtol, func) -> float:
    keep = weights > 0  # impossible states (lattice holes, round-off zeros) are never evaluated
    h = apply_vectorised(statistic, points[keep], int(keep.sum()), func)
    slack = rtol * abs(h_obs)
    if alternative == "greater":
        reject = h >= h_obs - slack
    elif alternative == "less":
        reject = h <= h_obs + slack
    else:
        reject = np.abs(h) >= abs(h_obs) - slack
    return float(min(1.0, math.fsum(weights[keep][reject])))
