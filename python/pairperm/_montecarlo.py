"""Monte Carlo paired-permutation test for any statistic of the summed local effects.

The sums of K random swap patterns are computed in the C++ core (`_core.sample_sums`,
threaded, seeded, independent of the thread count); Python only applies the user's
vectorised statistic to whole blocks of sums.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from . import _core
from ._permutation import _reject
from ._results import _fmt
from ._stats import clopper_pearson
from ._validation import (
    apply_vectorised,
    as_int_array,
    check_alternative,
    check_n_resamples,
    check_same_length,
    seed_from_rng,
)

__all__ = ["MonteCarloTestResult", "monte_carlo_test"]

# Resamples per call of the sampler: big enough that the per-call overhead (thread
# start-up) is noise, small enough that a block of (block, m) sums stays a few MB and
# early stopping is checked often. The block layout is fixed by m alone, so a seed
# gives the same result with or without `alpha` up to the stopping point.
_MAX_BLOCK = 4096
_BLOCK_ELEMENTS = 1 << 20
_MIN_BLOCK = 256


@dataclass(frozen=True, repr=False)
class MonteCarloTestResult:
    """Result of :func:`monte_carlo_test`.

    Attributes
    ----------
    statistic : int or float
        Observed statistic ``h(s_obs)``.
    pvalue : float
        ``(1 + hits) / (1 + n_resamples)`` as in ``scipy.stats.permutation_test``.
    pvalue_ci : (float, float)
        Clopper-Pearson interval (``confidence_level``) for the exact p-value.
    n_resamples : int
        Resamples actually drawn (fewer than asked if stopped early).
    hits : int
        Resamples counted as at least as extreme as the observation.
    alternative : str
    stopped_early : bool
        True if ``alpha`` was given and the interval excluded it before all resamples were drawn.
    """

    statistic: Any
    pvalue: float
    pvalue_ci: tuple
    n_resamples: int
    hits: int
    alternative: str
    stopped_early: bool = False

    @property
    def log_pvalue(self) -> float:
        return math.log(self.pvalue)

    def __repr__(self) -> str:
        parts = [
            f"statistic={_fmt(self.statistic)}",
            f"pvalue={_fmt(self.pvalue)}",
            f"pvalue_ci={_fmt(self.pvalue_ci)}",
            f"n_resamples={self.n_resamples}",
            f"alternative={self.alternative!r}",
        ]
        if self.stopped_early:
            parts.append("stopped_early=True")
        return f"{type(self).__name__}({', '.join(parts)})"


def _block_seed(seed: int, block: int) -> int:
    # Independent, reproducible stream per block, so results do not depend on where we stop.
    return int(np.random.SeedSequence(seed, spawn_key=(block,)).generate_state(1, np.uint64)[0] >> np.uint64(1))


def monte_carlo_test(
    stay: Any,
    swap: Any,
    statistic: Optional[Callable[[np.ndarray], np.ndarray]] = None,
    *,
    n_resamples: int = 20_000,
    rng: Any = None,
    alternative: str = "two-sided",
    alpha: Optional[float] = None,
    confidence_level: float = 0.95,
    rtol: float = 1e-12,
    n_threads: int = 0,
) -> MonteCarloTestResult:
    """Monte Carlo paired-permutation test (the papers' Alg. 1) for any statistic.

    Each resample swaps every entry independently with probability 1/2 and sums the
    local effects: ``S* = sum_n Z_n`` with ``Z_n`` uniform on ``{stay[n], swap[n]}``.

    Parameters
    ----------
    stay, swap : array_like of int, shape (N,) or (N, m)
        Local effects ``g(u_n, v_n)`` and ``g(v_n, u_n)`` (integer m-vectors for
        m-dimensional statistics, e.g. stacked sufficient statistics of both systems).
    statistic : callable or None
        Vectorised: receives the int64 sums of a block of K resamples, shape (K,) for
        1-D inputs or (K, m), and returns shape (K,). It is also called once on the
        observed sum (K = 1). None: the identity on S (1-D inputs only), compared in
        exact integer arithmetic as in :func:`pairperm.permutation_test`.
    n_resamples : int
    rng : None, int or numpy.random.Generator
        An int seed makes runs repeatable (also across thread counts).
    alternative : {"two-sided", "greater", "less"}
        For ``statistic=None`` as in SPEC §1 (two-sided: ``|S - mu| >= |s_obs - mu|``).
        For a callable: "greater" counts ``h(S*) >= h_obs``, "less" ``h(S*) <= h_obs``,
        "two-sided" ``|h(S*)| >= |h_obs|`` (the papers' absolute value, and the same rule
        as :func:`pairperm.structured_test`, so this estimates that exact p-value).
        Float ties: ``h(S*) >= h_obs - rtol * |h_obs|`` counts as a tie.
    alpha : float or None
        Early stopping: stop between blocks of resamples once the Clopper-Pearson
        interval of the p-value excludes ``alpha``.
    confidence_level : float
        Of ``pvalue_ci``.
    rtol : float
        Relative tolerance for ties of a float statistic.
    n_threads : int
        Sampler threads; 0 = all cores.

    Returns
    -------
    MonteCarloTestResult
    """
    func = "monte_carlo_test"
    check_alternative(alternative)
    n_resamples = check_n_resamples(n_resamples)
    if alpha is not None and not 0 < alpha < 1:
        raise ValueError(f"{func}: alpha must be in (0, 1) or None; got {alpha!r}")
    if not 0 < confidence_level < 1:
        raise ValueError(f"{func}: confidence_level must be in (0, 1); got {confidence_level!r}")
    if not (isinstance(rtol, (int, float)) and 0 <= rtol < 1):
        raise ValueError(f"{func}: rtol must be a number in [0, 1); got {rtol!r}")
    if isinstance(n_threads, bool) or not isinstance(n_threads, int) or n_threads < 0:
        raise ValueError(f"{func}: n_threads must be an int >= 0 (0 = all cores); got {n_threads!r}")
    if statistic is not None and not callable(statistic):
        raise ValueError(f"{func}: statistic must be None or a callable; got {type(statistic).__name__}")
    stay_a = as_int_array(stay, "stay", func, ndim=(1, 2))
    swap_a = as_int_array(swap, "swap", func, ndim=(1, 2))
    check_same_length(stay_a, swap_a, "stay", "swap", func)
    one_d = stay_a.ndim == 1
    if statistic is None and not one_d:
        raise ValueError(f"{func}: statistic=None needs 1-D stay/swap; pass a statistic for shape {stay_a.shape}")
    seed = seed_from_rng(rng)
    stay2 = stay_a.reshape(len(stay_a), -1)
    swap2 = swap_a.reshape(len(swap_a), -1)
    m = stay2.shape[1]
    # summarize() rejects int64 overflow of any coordinate's sums before we sample.
    summaries = [_core.summarize(stay2[:, j], swap2[:, j]) for j in range(m)]
    obs_sum = np.array([s.observed for s in summaries], dtype=np.int64)

    if statistic is None:
        h_obs: Any = int(summaries[0].observed)
        twice_mean = int(summaries[0].twice_mean)

        def count(sums: np.ndarray) -> int:
            return int(np.count_nonzero(_reject(sums[:, 0], h_obs, twice_mean, alternative)))

    else:
        h_obs_arr = apply_vectorised(statistic, obs_sum.reshape((1,) if one_d else (1, m)), 1, "monte_carlo_test")
        h_obs = h_obs_arr[0].item()
        if not math.isfinite(h_obs):
            raise ValueError(f"{func}: statistic of the observed sums is {h_obs}; it must be finite")
        tol = rtol * abs(h_obs)

        def count(sums: np.ndarray) -> int:
            h = apply_vectorised(statistic, sums[:, 0] if one_d else sums, len(sums), "monte_carlo_test")
            if alternative == "greater":
                return int(np.count_nonzero(h >= h_obs - tol))
            if alternative == "less":
                return int(np.count_nonzero(h <= h_obs + tol))
            return int(np.count_nonzero(np.abs(h) >= abs(h_obs) - tol))

    block = max(_MIN_BLOCK, min(_MAX_BLOCK, _BLOCK_ELEMENTS // m))
    hits = done = 0
    stopped = False
    b = 0
    while done < n_resamples:
        k = min(block, n_resamples - done)
        sums = _core.sample_sums(stay2, swap2, k, _block_seed(seed, b), n_threads)
        hits, done, b = hits + count(sums), done + k, b + 1
        if alpha is not None and done < n_resamples:
            lo, hi = clopper_pearson(hits, done, confidence_level)
            if alpha < lo or alpha > hi:
                stopped = True
                break

    p = (1 + hits) / (1 + done)
    return MonteCarloTestResult(h_obs, p, clopper_pearson(hits, done, confidence_level), done, hits, alternative, stopped)


