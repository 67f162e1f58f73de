"""Paired bootstrap test (Koehn 2004; p-value rule of Berg-Kirkpatrick et al. 2012).

A resample of the N entries is a Multinomial(N, 1/N) count vector c; for metrics that
are functions of summed per-entry sufficient statistics, the resampled sums are
``c @ stats``. Blocks of count vectors times the (N, 2m) statistics matrix of both
systems give all resamples with one BLAS product per block, never a Python loop per
resample.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Union

import numpy as np

from ._difference import BootstrapEffect
from ._errors import SupportTooLargeError
from ._metrics import check_counts, statistics_pair
from ._resampling import _MAX_DISTRIBUTION_BYTES, _metric_function, _resampled, check_f_options, percentiles
from ._results import BootstrapTestResult
from ._sampling import MonteCarloOptions, monte_carlo_options
from ._units import read_groups, unit_sums
from ._validation import (
    N_RESAMPLES,
    apply_vectorised,
    as_real_array,
    check_alternative,
    check_paired_index,
    check_same_length,
)
from .typing import Alternative, ArrayLike, SeedLike

__all__ = ["bootstrap_test"]

# Bytes a resample costs at its peak: its delta, and the copy the percentile interval partitions.
_PEAK_BYTES_PER_RESAMPLE = 16
# Resampled deltas counted at a time: no temporary grows with the number of resamples.
_HITS_CHUNK = 1 << 20

# A metric of summed statistics, vectorised: a block of K sums in, K values out.
_Metric = Callable[[np.ndarray], np.ndarray]


def _bootstrap_test_iv(x: Any, y: Any, metric: Any, n_resamples: Any, rng: Any, alternative: Any,
                       confidence_level: Any, beta: Any, zero_division: Any, n_jobs: Any, groups: Any = None
                       ) -> tuple[np.ndarray, np.ndarray, str, _Metric, MonteCarloOptions]:
    func = "bootstrap_test"
    check_alternative(alternative, func)
    opts = monte_carlo_options(n_resamples, rng, n_jobs, func, confidence_level=confidence_level)
    peak = _PEAK_BYTES_PER_RESAMPLE * opts.n_resamples
    if peak > _MAX_DISTRIBUTION_BYTES:
        raise SupportTooLargeError(
            f"{func}: n_resamples={opts.n_resamples} would need {peak / 2**30:.1f} GiB for the resampled deltas and "
            f"their percentile interval (the limit is {_MAX_DISTRIBUTION_BYTES // 2**30} GiB); ask for fewer resamples"
        )
    check_paired_index(x, y, ("x", "y"), func)
    sx, sy = statistics_pair(x, y, metric, func)
    xa = as_real_array(sx, "x", func, ndim=(1, 2, 3))
    ya = as_real_array(sy, "y", func, ndim=(1, 2, 3))
    n = check_same_length(xa, ya, "x", "y", func)
    if n == 0:
        raise ValueError(f"{func}: x and y are empty; the bootstrap needs at least one entry")
    check_f_options(beta, zero_division, func)
    name, fn = _metric_function(metric, xa.shape[1:], n, beta, zero_division, func)
    for arr_name, arr in (("x", xa), ("y", ya)):
        check_counts(arr, arr_name, name, func)
    if groups is not None:
        xa, ya, fn = _cluster_statistics(xa, ya, name, fn, groups, func, x)
    return xa, ya, name, fn, opts


def _cluster_statistics(xa: np.ndarray, ya: np.ndarray, name: str, fn: _Metric, groups: Any, func: str,
                        raw_x: Any) -> tuple[np.ndarray, np.ndarray, _Metric]:
    """Statistics summed per unit, so that resampling rows resamples whole units (the cluster
    bootstrap). A mean is then a ratio: the units' summed scores over their summed item counts."""
    units = read_groups(groups, len(xa), func, like=raw_x)
    if name != "mean":
        return unit_sums(xa, units, "x", func), unit_sums(ya, units, "y", func), fn
    ones = np.ones(len(xa), dtype=xa.dtype)
    xa = unit_sums(np.column_stack([xa, ones]), units, "x", func)
    ya = unit_sums(np.column_stack([ya, ones]), units, "y", func)
    return xa, ya, lambda s: s[..., 0] / s[..., 1]


def _both_systems(xa: np.ndarray, ya: np.ndarray, fn: _Metric,
                  func: str) -> tuple[np.ndarray, _Metric, float, float]:
    """(the (N, 2m) statistics of both systems side by side, the difference of their metrics on
    a block of summed statistics, each system's metric on the full data)."""
    n = len(xa)
    stat_shape = xa.shape[1:]
    m = int(np.prod(stat_shape, dtype=np.int64))
    stats = np.concatenate([xa.reshape(n, m), ya.reshape(n, m)], axis=1).astype(np.float64)

    def deltas(sums: np.ndarray) -> np.ndarray:
        k = len(sums)
        sa = sums[:, :m].reshape((k,) + stat_shape)
        sb = sums[:, m:].reshape((k,) + stat_shape)
        difference: np.ndarray = apply_vectorised(fn, sa, k, func, "metric") - apply_vectorised(fn, sb, k, func, "metric")
        return difference

    full = stats.sum(axis=0, keepdims=True)
    metric_a = float(apply_vectorised(fn, full[:, :m].reshape((1,) + stat_shape), 1, func, "metric")[0])
    metric_b = float(apply_vectorised(fn, full[:, m:].reshape((1,) + stat_shape), 1, func, "metric")[0])
    return stats, deltas, metric_a, metric_b


def _resamples_cannot_vary(xa: np.ndarray, ya: np.ndarray, stats: np.ndarray, metric: str) -> bool:
    """Whether every resample has the observed difference: one entry, entries all alike, or
    (for the mean) the same difference on every entry."""
    if len(stats) == 1 or bool((stats == stats[0]).all()):
        return True
    if metric == "mean" and xa.ndim == 1:  # per-unit (sum, count) rows vary in their ratio
        d = xa - ya
        return bool((d == d[0]).all())
    return False


def _bootstrap_hits(deltas: np.ndarray, delta: float, alternative: str) -> int:
    """Resamples at least as extreme, ties included (Berg-Kirkpatrick et al.'s rule with >=),
    counted in chunks so that no temporary grows with the number of resamples."""
    hits = 0
    for start in range(0, len(deltas), _HITS_CHUNK):
        chunk = deltas[start:start + _HITS_CHUNK]
        if alternative == "greater":
            hits += int(np.count_nonzero(chunk >= 2 * delta))
        elif alternative == "less":
            hits += int(np.count_nonzero(chunk <= 2 * delta))
        else:
            hits += int(np.count_nonzero(np.abs(chunk - delta) >= abs(delta)))
    return hits


def bootstrap_test(
    x: ArrayLike,
    y: ArrayLike,
    metric: Union[str, Callable[[np.ndarray], np.ndarray]] = "mean",
    *,
    n_resamples: int = N_RESAMPLES,
    rng: SeedLike = None,
    alternative: Alternative = "two-sided",
    confidence_level: float = 0.95,
    beta: float = 1.0,
    zero_division: float = 0.0,
    n_jobs: Optional[int] = None,
    groups: Optional[ArrayLike] = None,
) -> BootstrapTestResult:
    """Paired bootstrap test over entries (same resampled indices for both systems).

    Parameters
    ----------
    x, y : array_like of float, shape (N,) or (N, ...)
        Per-entry sufficient statistics of systems A and B; the metric is a function of
        their sums over entries.
    metric : {"mean", "f1", "macro_f1", "bleu", "corpus_chrf"} or callable
        - "mean": x, y of shape (N,); the mean score.
        - "f1": shape (N, 3), per-entry (tp, fp, fn); micro F_beta of the summed counts.
        - "macro_f1": shape (N, C, 3), per-entry per-class (tp, fp, fn); mean over classes
          of the per-class F_beta.
        - "bleu": shape (N, 10), per-sentence statistics in the order of
          :data:`BLEU_COLUMNS` = (hyp_len, ref_len, correct_1..4, total_1..4), i.e.
          sacrebleu 2's segment statistics; corpus BLEU on sacrebleu's 0-100 scale with its
          default "exp" smoothing.
        - "corpus_chrf": shape (N, 3k), per-sentence chrF statistics in the layout of
          :data:`CHRF_COLUMNS` (k = 6 character orders for chrF, 8 with chrF++'s word
          orders); corpus chrF (beta 2) on sacrebleu's 0-100 scale.
        - callable: vectorised; receives summed statistics of shape (K,) + x.shape[1:]
          (float64) and returns shape (K,).
    n_resamples : int
        At most 2**27 (the resampled deltas are kept, 8 bytes each, and the percentile
        interval sorts a copy of them).
    rng : None, int or numpy.random.Generator
        An int seed makes runs repeatable (also across thread counts).
    alternative : {"two-sided", "greater", "less"}
        With ``delta = metric(A) - metric(B)`` and ``delta_i`` its value on resample i,
        the hits are the resamples with ``delta_i >= 2 delta`` ("greater": the rule of
        Berg-Kirkpatrick et al. (2012), evidence that A is better), ``delta_i <= 2 delta``
        ("less") or ``|delta_i - delta| >= |delta|`` ("two-sided": both tails, so about
        twice the one-sided value; sacrebleu's paired bootstrap reports the one-sided
        count). Ties count, and ``p = (1 + hits) / (1 + n_resamples)`` as in every sampling
        test of pairperm, so p is never 0; when ``delta == 0`` exactly, p = 1. When every
        resample gives the same difference (one entry, or the same per-entry difference
        everywhere), the bootstrap has nothing to measure and raises ``ValueError``.
    confidence_level : float
        Of the percentile interval of the resampled delta.
    beta, zero_division : float
        For "f1" and "macro_f1": F_beta, and its value when the denominator is 0.
    n_jobs : int or None
        Resampling threads; None uses all cores. Results do not depend on it.
    groups : array_like of labels, length N, optional
        The unit of each entry (e.g. the passage of a question): whole units are resampled
        (the cluster bootstrap), their statistics summed; ``"mean"`` is then the per-item
        mean of each resample (summed scores over summed item counts).

    Returns
    -------
    BootstrapTestResult

    Examples
    --------
    >>> import pairperm
    >>> a = [0.71, 0.64, 0.88, 0.52, 0.90]        # per-entry scores of A and B
    >>> b = [0.69, 0.61, 0.80, 0.55, 0.85]
    >>> r = pairperm.bootstrap_test(a, b, n_resamples=2000, rng=0)
    >>> print(f"{r.statistic:.2f} {r.metric_a:.2f} {r.metric_b:.2f}", r.metric, r.n_resamples)
    0.03 0.73 0.70 mean 2000
    >>> r.pvalue == (1 + r.hits) / (1 + r.n_resamples), r.bootstrap_distribution.shape
    (True, (2000,))

    Micro F1 from per-entry (tp, fp, fn):

    >>> tp_fp_fn_a = [[3, 1, 0], [2, 0, 1], [4, 1, 1], [1, 0, 0], [5, 2, 0]]
    >>> tp_fp_fn_b = [[2, 1, 1], [2, 1, 1], [3, 0, 2], [1, 1, 0], [4, 0, 1]]
    >>> r = pairperm.bootstrap_test(tp_fp_fn_a, tp_fp_fn_b, metric="f1", n_resamples=500, rng=0)
    >>> print(f"{r.metric_a:.4f} {r.metric_b:.4f}")    # 2*15 / (2*15 + 4 + 2), 2*12 / (2*12 + 3 + 5)
    0.8333 0.7500
    """
    func = "bootstrap_test"
    xa, ya, name, fn, opts = _bootstrap_test_iv(x, y, metric, n_resamples, rng, alternative, confidence_level, beta,
                                                zero_division, n_jobs, groups)
    stats, deltas, metric_a, metric_b = _both_systems(xa, ya, fn, func)
    delta = metric_a - metric_b
    if not math.isfinite(delta):
        raise ValueError(f"{func}: the metric is not finite on the full data ({metric_a}, {metric_b})")
    k_total = opts.n_resamples
    if delta != 0 and _resamples_cannot_vary(xa, ya, stats, name):
        raise ValueError(
            f"{func}: every resample gives the same difference ({delta:.6g}): with one entry, or the same "
            "difference on every entry, resampling entries shows no variability, and the bootstrap's p-value "
            "would be its floor 1/(1 + n_resamples) however few entries there are. The paired-permutation tests "
            "(pairperm.permutation_test, pairperm.monte_carlo_test) give the p-value such data support."
        )
    out = _resampled(stats, deltas, opts)
    hits = _bootstrap_hits(out, delta, alternative)
    tail = (1 - opts.confidence_level) / 2
    lo, hi = percentiles(out, [tail, 1 - tail])
    return BootstrapTestResult(
        statistic=delta,
        pvalue=1.0 if delta == 0 else (1 + hits) / (1 + k_total),
        confidence_interval=(float(lo), float(hi)),
        metric_a=metric_a,
        metric_b=metric_b,
        metric=name,
        alternative=alternative,
        n_resamples=k_total,
        hits=hits,
        confidence_level=opts.confidence_level,
        bootstrap_distribution=out,
        difference=delta,
        _effect=BootstrapEffect(xa, ya, metric, opts.seed, beta, zero_division),
    )
