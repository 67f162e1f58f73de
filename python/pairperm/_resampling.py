"""The paired bootstrap's resampling, shared by the bootstrap test and the bootstrap intervals.

A resample of the N entries is a Multinomial(N, 1/N) count vector c; for metrics that are
functions of summed per-entry statistics, the resampled sums are ``c @ stats``. Blocks of count
vectors times the (N, 2m) statistics matrix of both systems give all resamples with one BLAS
product per block, never a Python loop per resample.

- :func:`bootstrap_intervals` gives percentile or BCa intervals for every system's metric and
  for every pair's difference from ONE shared set of resamples of the items (as sacrebleu's
  paired bootstrap), drawn by the same seeded sampler as :func:`pairperm.bootstrap_test`;
- :func:`bootstrap_mean_intervals` gives a mean's percentile interval with infinitely many
  resamples.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Callable, NamedTuple, Optional, Sequence, Union

import numpy as np

import pairperm._core as _core

from ._errors import SupportTooLargeError
from ._metrics import METRICS, check_counts, check_statistics_shape, metric_named, statistics_by_name
from ._sampling import block_seed, monte_carlo_options
from ._stats import multiset
from ._validation import (
    N_RESAMPLES,
    align_by_index,
    apply_vectorised,
    as_real_array,
    check_alternative,
    check_method,
    check_same_length,
)
from .typing import Alternative, ArrayLike, BootstrapIntervalMethod, SeedLike

__all__ = ["BootstrapIntervals", "bootstrap_intervals", "bootstrap_mean_intervals", "percentiles"]

BOOTSTRAP_METHODS = ("percentile", "bca")
_STANDARD_NORMAL = NormalDist()

# Elements of one block of count vectors: 16 MB of float64, so blocks fit in cache-friendly
# BLAS calls and memory stays flat in K.
_BLOCK_ELEMENTS = 1 << 21
# With few statistics the product is memory-bound on the (k, N) count block (measured:
# N = 1e4, K = 1e4, 2 columns: 0.4 s to write the counts, 0.55 s for BLAS to read them),
# so for narrow matrices the C++ core consumes each count vector while it is in cache;
# wide ones (macro-F1 over many classes) go to BLAS. Same counts either way.
_FUSED_MAX_COLUMNS = 32
# The resampled deltas are the result (the percentile interval needs all of them): refuse,
# before allocating, a peak above this many bytes. The peak is the deltas themselves plus the
# copy that percentiles partitions; hits are counted in chunks, so nothing else grows with K.
_MAX_DISTRIBUTION_BYTES = 2**31


def check_f_options(beta: Any, zero_division: Any, func: str) -> None:
    """F_beta's beta (a finite number >= 0) and the value of a ratio whose denominator is 0 (in [0, 1])."""
    if not (isinstance(beta, (int, float)) and not isinstance(beta, bool) and math.isfinite(beta) and beta >= 0):
        raise ValueError(f"{func}: beta must be a finite number >= 0; got {beta!r}")
    if not (isinstance(zero_division, (int, float)) and not isinstance(zero_division, bool) and 0 <= zero_division <= 1):
        raise ValueError(f"{func}: zero_division must be a number in [0, 1]; got {zero_division!r}")


def _metric_function(metric: Union[str, Callable], shape: tuple, n: int, beta: float, zero_division: float,
                     func: str) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
    if callable(metric):
        return getattr(metric, "__name__", "callable"), metric
    row = metric_named(metric)
    if row is None or not row.bootstrapped:
        names = ", ".join(repr(m.name) for m in METRICS.values() if m.bootstrapped)
        raise ValueError(f"{func}: metric must be one of {names} or a callable; got {metric!r}")
    check_statistics_shape(metric, shape, func)
    if row.kind == "ratio" and tuple(shape) == (2,) and beta != 1:
        raise ValueError(f"{func}: beta != 1 needs (N, 3) inputs (tp, fp, fn); (N, 2) inputs (tp, errors) give F1 only")
    return metric, lambda s: row.value(s, n, beta, zero_division)


def _resampled(stats: np.ndarray, deltas: Callable[[np.ndarray], np.ndarray], opts: Any,
               width: Optional[int] = None) -> np.ndarray:
    """deltas() of every resample's summed statistics, in blocks (one seeded stream per block):
    shape (K,), or (K, width) when deltas() returns `width` values per resample. The count
    vectors depend only on the seed, N and K, so every column of `stats` (every system) sees
    the same resamples."""
    n, k_total = len(stats), opts.n_resamples
    out = np.empty(k_total if width is None else (k_total, width))
    block = max(1, min(k_total, _BLOCK_ELEMENTS // n))
    for i, start in enumerate(range(0, k_total, block)):
        k = min(block, k_total - start)
        if stats.shape[1] <= _FUSED_MAX_COLUMNS:
            sums = _core.bootstrap_sums(stats, k, block_seed(opts.seed, i), opts.n_jobs)
        else:
            sums = _core.bootstrap_counts(n, k, block_seed(opts.seed, i), opts.n_jobs) @ stats
        out[start:start + k] = deltas(sums)
    return out


def percentiles(values: np.ndarray, levels: Any) -> np.ndarray:
    """``np.quantile(values, levels)`` of 1-D float values, with its default (linear) method: the
    same order statistics around ``(n - 1) * level`` and the same interpolation, from
    np.partition. np.quantile passes its indexes through np.unique, whose hash table (NumPy 2.4)
    takes the GIL back in a C++ destructor: a daemon thread still inside it when the interpreter
    exits then aborts the whole process instead of ending quietly."""
    q = np.asarray(levels, dtype=np.float64)
    if not np.all((q >= 0) & (q <= 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")  # np.quantile's own error
    h = (values.size - 1) * q
    below = np.floor(h)
    above = below + 1
    # At the top (level 1) both neighbours are the largest value, as np.quantile takes them.
    top = h >= values.size - 1
    below[top] = above[top] = -1
    i, j = below.astype(np.intp), above.astype(np.intp)
    # Partitioned at np.quantile's own indexes (first and last too): among tied zeros the one
    # that lands at an index, and so the sign of a zero result, depends on them.
    part = np.partition(values, np.concatenate(([0, -1], i, j)))
    a, b = part[i], part[j]
    t = h - below
    diff = b - a
    out = np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)
    # A NaN sorts last and makes every quantile that NaN, as in np.quantile.
    return np.full_like(out, part[-1]) if np.isnan(part[-1]) else out


def bootstrap_mean_intervals(arrays: Sequence[np.ndarray], confidence_level: float) -> np.ndarray:
    """Each 1-D array's two-sided percentile interval of its mean under the bootstrap with
    infinitely many resamples (shape (K, 2)): the quantiles of the distribution of the sum of
    N draws from the array's values, from the Lugannani-Rice saddlepoint approximation
    (Davison and Hinkley 1988) with Daniels' continuity correction when the values are
    integers (a lattice, whose span is the gcd of their gaps). For a mean, the resampled
    value of one system does not depend on the others, so this is the limit of what the
    sampled percentile interval estimates, without its resampling noise."""
    values, counts, lattices = [], [], []
    for a in arrays:
        v, c = multiset(a)
        values.append(v)
        counts.append(c)
        integral = a.dtype.kind in "iub" or bool(np.all(v == np.floor(v)) and np.abs(v).max() < 2**53)
        lattices.append(float(np.gcd.reduce((v - v[0]).astype(np.int64))) if integral and len(v) > 1 else 0.0)
    offsets = np.cumsum([0] + [len(v) for v in values], dtype=np.int64)
    alpha = 1 - confidence_level
    sums = _core.bootstrap_sum_quantiles(np.concatenate(values), np.concatenate(counts), offsets,
                                         np.array(lattices), alpha / 2, 1 - alpha / 2)
    return sums / np.array([len(a) for a in arrays], dtype=np.float64)[:, None]


class BootstrapIntervals(NamedTuple):
    """Bootstrap intervals of K systems' metrics and of pairs' differences, all from the same
    resamples of the items.

    Attributes
    ----------
    estimates : ndarray, shape (K,)
        Each system's metric on the full data.
    intervals : ndarray, shape (K, 2)
        Low and high end of each system's interval.
    pairs : ndarray of int64, shape (P, 2)
        The pairs (i, j) of systems compared.
    differences : ndarray, shape (P,)
        ``estimates[i] - estimates[j]`` for each pair.
    difference_intervals : ndarray, shape (P, 2)
        Interval of each pair's difference, from the per-resample differences.
    bootstrap_distribution : ndarray, shape (n_resamples, K)
        The metric of every system on every resample (row r: resample r, shared by all systems).
    method : str
        "percentile" or "bca".
    confidence_level : float
    alternative : str
    """

    estimates: np.ndarray
    intervals: np.ndarray
    pairs: np.ndarray
    differences: np.ndarray
    difference_intervals: np.ndarray
    bootstrap_distribution: np.ndarray
    method: str
    confidence_level: float
    alternative: str


def bootstrap_intervals(
    scores: Union[ArrayLike, Sequence[ArrayLike]],
    metric: Union[str, Callable[[np.ndarray], np.ndarray]] = "mean",
    *,
    pairs: Optional[ArrayLike] = None,
    method: BootstrapIntervalMethod = "bca",
    confidence_level: float = 0.95,
    alternative: Alternative = "two-sided",
    n_resamples: int = N_RESAMPLES,
    rng: SeedLike = None,
    beta: float = 1.0,
    zero_division: float = 0.0,
    n_jobs: Optional[int] = None,
) -> BootstrapIntervals:
    """Paired bootstrap intervals for K systems on the same items, and for their differences.

    Every resample draws the items once (a Multinomial(N, 1/N) count vector) and applies the
    same counts to every system, as sacrebleu's paired bootstrap does: each system's interval
    and each pair's difference interval come from one shared set of resamples, drawn by the
    sampler of :func:`pairperm.bootstrap_test` (for two systems and the same ``rng``, a pair's
    resampled differences are exactly that test's ``bootstrap_distribution``).

    Parameters
    ----------
    scores : array_like of shape (K, N, ...), a sequence of K arrays of shape (N, ...), or a DataFrame
        Per-item sufficient statistics of each system, in the layouts of
        :func:`pairperm.bootstrap_test`; the metric is a function of their sums over items.
        A DataFrame holds one system per column and one item per row (as
        :func:`pairperm.read_scores` returns them); pandas Series or DataFrames in a sequence
        are paired by their index labels, never by position.
    metric : {"mean", "f1", "macro_f1", "bleu", "corpus_chrf"} or callable
        As in :func:`pairperm.bootstrap_test`.
    pairs : array_like of int, shape (P, 2), optional
        Pairs (i, j) whose difference ``metric_i - metric_j`` gets an interval; default every
        pair with i < j.
    method : {"bca", "percentile"}
        "percentile": quantiles of the resampled values. "bca": Efron's bias-corrected and
        accelerated quantiles, with the bias correction from the share of resamples below the
        estimate (ties counting half, as scipy.stats.bootstrap) and the acceleration from the
        jackknife, whose leave-one-out sums are the total minus each item's statistics (O(N));
        when every leave-one-out value is the same, the acceleration is 0.
    confidence_level : float
        In (0, 1).
    alternative : {"two-sided", "greater", "less"}
        As scipy.stats.bootstrap: "less" gives ``(-inf, high]`` and "greater" ``[low, inf)``,
        each end at level ``1 - confidence_level``.
    n_resamples, rng, n_jobs :
        As in :func:`pairperm.bootstrap_test`; an int ``rng`` makes runs repeatable.
    beta, zero_division : float
        For "f1" and "macro_f1".

    Returns
    -------
    BootstrapIntervals

    Examples
    --------
    >>> import pairperm
    >>> a = [0.71, 0.64, 0.88, 0.52, 0.90, 0.45]
    >>> b = [0.69, 0.61, 0.80, 0.55, 0.85, 0.40]
    >>> c = [0.60, 0.66, 0.70, 0.50, 0.80, 0.41]
    >>> r = pairperm.bootstrap_intervals([a, b, c], n_resamples=2000, rng=0, method="percentile")
    >>> r.estimates.round(3), r.pairs.tolist()
    (array([0.683, 0.65 , 0.612]), [[0, 1], [0, 2], [1, 2]])
    >>> r.intervals.shape, r.difference_intervals.shape, r.bootstrap_distribution.shape
    ((3, 2), (3, 2), (2000, 3))
    """
    func = "bootstrap_intervals"
    check_alternative(alternative, func)
    check_method(method, BOOTSTRAP_METHODS, func)
    opts = monte_carlo_options(n_resamples, rng, n_jobs, func, confidence_level=confidence_level)
    systems = _systems(scores, metric, func)
    k_systems, n = len(systems), len(systems[0])
    stat_shape = systems[0].shape[1:]
    m = int(np.prod(stat_shape, dtype=np.int64))
    peak = 8 * opts.n_resamples * (k_systems + 2)
    if peak > _MAX_DISTRIBUTION_BYTES:
        raise SupportTooLargeError(
            f"{func}: n_resamples={opts.n_resamples} for {k_systems} systems would need {peak / 2**30:.1f} GiB for "
            f"the resampled metrics (the limit is {_MAX_DISTRIBUTION_BYTES // 2**30} GiB); ask for fewer resamples"
        )
    check_f_options(beta, zero_division, func)
    name, fn = _metric_function(metric, stat_shape, n, beta, zero_division, func)
    for i, arr in enumerate(systems):
        check_counts(arr, f"scores[{i}]", name, func)
    pair_index = _pairs(pairs, k_systems, func)

    stats = np.concatenate([s.reshape(n, m) for s in systems], axis=1).astype(np.float64)

    def metric_of(sums: np.ndarray) -> np.ndarray:
        rows = len(sums)
        return apply_vectorised(fn, sums.reshape((rows,) + stat_shape), rows, func, "metric")

    def all_metrics(sums: np.ndarray) -> np.ndarray:
        return np.stack([metric_of(sums[:, j * m:(j + 1) * m]) for j in range(k_systems)], axis=1)

    total = stats.sum(axis=0, keepdims=True)
    estimates = all_metrics(total)[0]
    if not np.isfinite(estimates).all():
        raise ValueError(f"{func}: the metric is not finite on the full data ({estimates.tolist()})")
    dist = _resampled(stats, all_metrics, opts, width=k_systems)
    # The jackknife's leave-one-out metrics, one system at a time so memory stays flat in K.
    jack = None
    if method == "bca":
        jack = np.stack([metric_of(total[:, j * m:(j + 1) * m] - stats[:, j * m:(j + 1) * m])
                         for j in range(k_systems)], axis=1)
    return _intervals_of(dist, estimates, jack, pair_index, method, opts.confidence_level, alternative, func)


def _intervals_of(dist: np.ndarray, estimates: np.ndarray, jack: Optional[np.ndarray], pair_index: np.ndarray,
                  method: str, conf: float, alternative: str, func: str) -> BootstrapIntervals:
    """Each system's interval and each pair's difference interval from the resampled metrics
    `dist` (and for BCa the jackknife's leave-one-out metrics `jack`)."""
    k_systems = dist.shape[1]
    intervals = np.array([
        _interval(dist[:, j], estimates[j], None if jack is None else jack[:, j], conf, alternative, func,
                  f"system {j}")
        for j in range(k_systems)
    ]).reshape(k_systems, 2)
    differences = estimates[pair_index[:, 0]] - estimates[pair_index[:, 1]]
    difference_intervals = np.array([
        _interval(dist[:, i] - dist[:, j], float(differences[p]),
                  None if jack is None else jack[:, i] - jack[:, j], conf, alternative, func, f"pair ({i}, {j})")
        for p, (i, j) in enumerate(pair_index.tolist())
    ]).reshape(len(pair_index), 2)
    return BootstrapIntervals(
        estimates=estimates, intervals=intervals, pairs=pair_index, differences=differences,
        difference_intervals=difference_intervals, bootstrap_distribution=dist, method=method,
        confidence_level=conf, alternative=alternative,
    )


def _systems(scores: Any, metric: Any, func: str) -> list[np.ndarray]:
    """K validated arrays of the same shape (N, ...) with N >= 1. A DataFrame holds one system
    per column (items as rows, as read_scores returns them); pandas systems are paired by their
    index labels, never by position."""
    if hasattr(scores, "columns") and hasattr(scores, "iloc"):
        scores = [scores[c] for c in scores.columns]
    if isinstance(scores, (list, tuple)):
        names = [f"scores[{i}]" for i in range(len(scores))]
        aligned = align_by_index(list(scores), names, func)
        systems = [as_real_array(statistics_by_name(s, metric, n, func), n, func, ndim=(1, 2, 3))
                   for s, n in zip(aligned, names)]
    else:
        arr = as_real_array(scores, "scores", func, ndim=(2, 3, 4))
        systems = list(arr)
    if not systems:
        raise ValueError(f"{func}: scores holds no systems")
    for i, s in enumerate(systems[1:], start=1):
        check_same_length(systems[0], s, "scores[0]", f"scores[{i}]", func)
    if len(systems[0]) == 0:
        raise ValueError(f"{func}: the systems have no items; the bootstrap needs at least one")
    return systems


def _pairs(pairs: Any, k: int, func: str) -> np.ndarray:
    if pairs is None:
        i, j = np.triu_indices(k, 1)
        return np.stack([i, j], axis=1).astype(np.int64)
    arr = np.asarray(pairs)
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iu":
        raise ValueError(f"{func}: pairs must be integer pairs of shape (P, 2); got shape {arr.shape}, "
                         f"dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= k)
    if bad.any():
        raise ValueError(f"{func}: pairs[{int(np.argwhere(bad)[0][0])}] names a system outside 0..{k - 1}")
    return arr.astype(np.int64)


def _interval(values: np.ndarray, estimate: float, jackknife: Optional[np.ndarray], confidence_level: float,
              alternative: str, func: str, what: str) -> tuple[float, float]:
    """Percentile (jackknife None) or BCa interval from resampled values."""
    alpha = 1 - confidence_level
    tail = alpha / 2 if alternative == "two-sided" else alpha
    levels = (tail, 1 - tail)
    if jackknife is not None:
        levels = _bca_levels(values, estimate, jackknife, tail, func, what)
    low, high = (float(v) for v in percentiles(values, levels))
    if alternative == "less":
        low = -math.inf
    elif alternative == "greater":
        high = math.inf
    return low, high


def _bca_levels(values: np.ndarray, estimate: float, jackknife: np.ndarray, tail: float, func: str,
                what: str) -> tuple[float, float]:
    """Efron's BCa quantile levels for nominal tails (tail, 1 - tail)."""
    below = (np.count_nonzero(values < estimate) + np.count_nonzero(values <= estimate)) / (2 * len(values))
    if not 0 < below < 1:
        raise ValueError(
            f"{func}: the BCa interval of {what} is undefined: every resample lies on one side of the estimate "
            f"{estimate:.6g} (the bias correction is infinite); use method='percentile'"
        )
    z0 = _STANDARD_NORMAL.inv_cdf(below)
    u = jackknife.mean() - jackknife
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            ss = float(u @ u)
            accel = float(np.sum(u**3)) / (6 * ss**1.5) if ss > 0 else 0.0
    except OverflowError:  # ss**1.5 of a finite ss beyond float64
        accel = math.nan
    if not math.isfinite(accel):
        raise ValueError(
            f"{func}: the BCa interval of {what} is undefined in float64: the jackknife values (up to "
            f"{float(np.max(np.abs(jackknife))):.3g}) are too large for the acceleration's sums of squares and "
            "cubes; use method='percentile'"
        )
    out = []
    for z in (_STANDARD_NORMAL.inv_cdf(tail), -_STANDARD_NORMAL.inv_cdf(tail)):
        shift = z0 + z
        denom = 1 - accel * shift
        if denom <= 0:
            raise ValueError(f"{func}: the BCa interval of {what} is undefined (acceleration {accel:.3g} too large "
                             "for this confidence level); use method='percentile'")
        out.append(_STANDARD_NORMAL.cdf(z0 + shift / denom))
    return out[0], out[1]
