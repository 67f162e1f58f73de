"""The exact paired-permutation test and the engines behind it (SPEC §1, §3)."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import _core
from ._distribution import Distribution
from ._results import PermutationTestResult
from ._stats import clopper_pearson
from ._validation import (
    as_int_array,
    check_alternative,
    check_method,
    check_n_resamples,
    check_same_length,
    seed_from_rng,
)

__all__ = ["convolve_dp", "convolve_fft", "null_distribution", "permutation_test"]

DISTRIBUTION_METHODS = ("auto", "dp", "fft")
TEST_METHODS = ("auto", "dp", "fft", "monte_carlo")
_MC_BLOCK = 1 << 20  # resamples per sampler call: 8 MiB of sums


def _local_effects(stay: Any, swap: Any, func: str) -> tuple[np.ndarray, np.ndarray]:
    stay_a = as_int_array(stay, "stay", func)
    swap_a = as_int_array(swap, "swap", func)
    check_same_length(stay_a, swap_a, "stay", "swap", func)
    return stay_a, swap_a


def _wrap(triple: tuple, method: str) -> Distribution:
    offset, pmf, truncated = triple
    return Distribution(offset=int(offset), pmf=pmf, truncated_mass=float(truncated), method=method)


def convolve_dp(stay: Any, swap: Any) -> Distribution:
    """Null distribution of S by the papers' two-point DP (Alg. 3).

    O(G N^2) time, O(G N) memory; every pmf entry has tiny relative error, which makes
    this the accuracy reference.

    Parameters
    ----------
    stay, swap : array_like of int, shape (N,)
        Local effects ``g(u_n, v_n)`` and ``g(v_n, u_n)``.
    """
    stay_a, swap_a = _local_effects(stay, swap, "convolve_dp")
    return _wrap(_core.convolve_dp(stay_a, swap_a), "dp")


def convolve_fft(stay: Any, swap: Any) -> Distribution:
    """Null distribution of S by the papers' divide-and-conquer FFT tree (Alg. 4).

    Absolute error ~1e-16 of the peak per entry, so tiny tail probabilities are noise;
    use :func:`permutation_test` with ``method="auto"`` for those.
    """
    stay_a, swap_a = _local_effects(stay, swap, "convolve_fft")
    return _wrap(_core.convolve_fft(stay_a, swap_a), "fft")


def null_distribution(stay: Any, swap: Any, method: str = "auto") -> Distribution:
    """Null distribution of S = sum_n Z_n, Z_n uniform on {stay[n], swap[n]}.

    Parameters
    ----------
    stay, swap : array_like of int, shape (N,)
    method : {"auto", "dp", "fft"}
        ``"auto"`` is the grouped engine: one binomial per distinct |stay - swap|,
        support cut to the certified window (``truncated_mass`` <= 1e-320).
    """
    check_method(method, DISTRIBUTION_METHODS)
    if method == "dp":
        return convolve_dp(stay, swap)
    if method == "fft":
        return convolve_fft(stay, swap)
    stay_a, swap_a = _local_effects(stay, swap, "null_distribution")
    return _wrap(_core.grouped_distribution(_core.summarize(stay_a, swap_a)), "auto")


def permutation_test(
    x: Any,
    y: Any,
    *,
    alternative: str = "two-sided",
    method: str = "auto",
    n_resamples: int = 20_000,
    rng: Any = None,
) -> PermutationTestResult:
    """Exact paired-permutation test for a difference of summed integer scores.

    Each entry's pair of scores is swapped between the systems with probability 1/2
    under the null. The statistic is ``T = sum(x) - sum(y)`` and, with S its null
    counterpart, the p-value is ``P[|S| >= |T|]`` (two-sided), ``P[S >= T]`` (greater:
    evidence that A > B) or ``P[S <= T]`` (less). Ties count.

    Parameters
    ----------
    x, y : array_like of int, shape (N,)
        Per-entry scores of systems A and B (e.g. correctly tagged tokens per sentence).
        Integral floats are accepted; for real-valued scores see
        :func:`pairperm.wilcoxon_test` or :func:`pairperm.bootstrap_test`.
    alternative : {"two-sided", "greater", "less"}
    method : {"auto", "dp", "fft", "monte_carlo"}
        ``"auto"``: the grouped engine with exponential tilting, exact with relative
        accuracy ~1e-12 down to p = 1e-300 and beyond (see ``log_pvalue``).
        ``"dp"`` / ``"fft"``: the papers' Alg. 3 / Alg. 4. ``"monte_carlo"``: the
        papers' Alg. 1 with ``n_resamples`` samples, ``p = (1 + hits) / (1 + K)``.
    n_resamples : int
        Monte Carlo only.
    rng : None, int or numpy.random.Generator
        Monte Carlo only; an int seed makes runs repeatable.

    Returns
    -------
    PermutationTestResult
    """
    func = "permutation_test"
    check_alternative(alternative)
    check_method(method, TEST_METHODS)
    x_a = as_int_array(x, "x", func)
    y_a = as_int_array(y, "y", func)
    check_same_length(x_a, y_a, "x", "y", func)
    if method == "monte_carlo":
        n_resamples = check_n_resamples(n_resamples)
        seed = seed_from_rng(rng)
    summary = _core.summarize_paired(x_a, y_a)  # also rules out int64 overflow
    statistic = int(summary.observed)

    if method == "auto":
        # x - y cannot overflow: summarize_paired checked the sums.
        p, log_p = grouped_pvalue(summary, lambda: (x_a - y_a, y_a - x_a), alternative)
        return PermutationTestResult(
            statistic=statistic,
            pvalue=float(p),
            log_pvalue=float(log_p),
            method="auto",
            alternative=alternative,
            _null=lambda: _wrap(_core.grouped_distribution(summary), "auto"),
        )

    d = x_a - y_a
    if method in ("dp", "fft"):
        engine = _core.convolve_dp if method == "dp" else _core.convolve_fft
        dist = _wrap(engine(d, -d), method)
        p, log_p = _core.pvalue_from_distribution(dist.offset, dist.pmf, statistic, 0, alternative)
        return PermutationTestResult(statistic, float(p), float(log_p), method, alternative, _null=dist)

    # Sample in blocks so memory stays flat in n_resamples; each block has its own stream.
    stay2, swap2 = d.reshape(-1, 1), (-d).reshape(-1, 1)
    hits = 0
    for b, start in enumerate(range(0, n_resamples, _MC_BLOCK)):
        k = min(_MC_BLOCK, n_resamples - start)
        block_seed = (seed + b * 0x9E3779B97F4A7C15) % 2**64
        sums = _core.sample_sums(stay2, swap2, k, block_seed)[:, 0]
        hits += int(np.count_nonzero(_reject(sums, statistic, 0, alternative)))
    p = (1 + hits) / (1 + n_resamples)
    return PermutationTestResult(
        statistic,
        p,
        math.log(p),
        "monte_carlo",
        alternative,
        n_resamples=n_resamples,
        pvalue_ci=clopper_pearson(hits, n_resamples),
    )


# Up to this many varying entries the 2^n sums can simply be listed (32 MiB of int64).
_ENUMERATE_MAX = 22


def grouped_pvalue(summary: Any, effects: Callable[[], tuple], alternative: str) -> tuple[float, float]:
    """The grouped engine's exact p-value; when its window is infeasible (a few huge, unrelated
    |stay - swap| values) but few entries vary, list every state instead (exact integers).
    `effects` returns (stay, swap) and is called only for that fallback (no O(N) work here)."""
    try:
        return _core.grouped_pvalue(summary, alternative)
    except _core.SupportTooLargeError:
        if summary.n_varying > _ENUMERATE_MAX:
            raise
    stay, swap = effects()
    varying = stay != swap
    k = np.abs(stay[varying] - swap[varying])
    sums = np.zeros(1, dtype=np.int64)
    for kk in k:
        sums = np.concatenate((sums, sums + kk))
    values = sums + int(summary.lo_sum)
    hits = int(np.count_nonzero(_reject(values, int(summary.observed), int(summary.twice_mean), alternative)))
    n = int(varying.sum())
    p = hits / 2**n  # exact: hits and 2^n are small integers
    return p, (math.log(hits) - n * math.log(2) if hits else -math.inf)


def _reject(sums: np.ndarray, observed: int, twice_mean: int, alternative: str) -> np.ndarray:
    """Rejection region of SPEC §1 in exact integer arithmetic."""
    if alternative == "greater":
        return sums >= observed
    if alternative == "less":
        return sums <= observed
    return np.abs(2 * sums - twice_mean) >= abs(2 * observed - twice_mean)
