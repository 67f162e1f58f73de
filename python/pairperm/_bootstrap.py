"""Paired bootstrap test (Koehn 2004; p-value rule of Berg-Kirkpatrick et al. 2012).

A resample of the N entries is a Multinomial(N, 1/N) count vector c; for metrics that
are functions of summed per-entry sufficient statistics, the resampled sums are
``c @ stats``. Blocks of count vectors times the (N, 2m) statistics matrix of both
systems give all resamples with one BLAS product per block, never a Python loop per
resample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Union

import numpy as np

from . import _core
from ._montecarlo import _block_seed
from ._results import _fmt
from ._validation import apply_vectorised, as_real_array, check_alternative, check_n_resamples, check_same_length, seed_from_rng

__all__ = ["BootstrapTestResult", "bootstrap_test", "BLEU_COLUMNS"]

BUILTIN_METRICS = ("mean", "f1", "macro_f1", "bleu")

#: Column order of the per-sentence BLEU statistics (as sacrebleu 2's segment statistics).
BLEU_COLUMNS = (
    "hyp_len", "ref_len",
    "correct_1", "correct_2", "correct_3", "correct_4",
    "total_1", "total_2", "total_3", "total_4",
)

# Elements of one block of count vectors: 16 MB of float64, so blocks fit in cache-friendly
# BLAS calls and memory stays flat in K.
_BLOCK_ELEMENTS = 1 << 21
# With few statistics the product is memory-bound on the (k, N) count block (measured:
# N = 1e4, K = 1e4, 2 columns: 0.4 s to write the counts, 0.55 s for BLAS to read them),
# so for narrow matrices the C++ core consumes each count vector while it is in cache;
# wide ones (macro-F1 over many classes) go to BLAS. Same counts either way.
_FUSED_MAX_COLUMNS = 32


@dataclass(frozen=True, repr=False)
class BootstrapTestResult:
    """Result of :func:`bootstrap_test`.

    Attributes
    ----------
    statistic : float
        ``delta = metric(A) - metric(B)`` on the full data.
    pvalue : float
        Berg-Kirkpatrick et al. (2012): fraction of resamples with ``delta_i > 2 delta``
        ("greater"), ``delta_i < 2 delta`` ("less") or ``|delta_i - delta| > |delta|``
        ("two-sided"). Can be 0; it is a Monte Carlo estimate.
    confidence_interval : (float, float)
        Percentile interval of the resampled ``delta_i`` at ``confidence_level``.
    metric_a, metric_b : float
        The metric of each system on the full data.
    metric : str
    alternative : str
    n_resamples : int
    confidence_level : float
    bootstrap_distribution : ndarray
        The K resampled deltas (not printed).
    """

    statistic: float
    pvalue: float
    confidence_interval: tuple
    metric_a: float
    metric_b: float
    metric: str
    alternative: str
    n_resamples: int
    confidence_level: float
    bootstrap_distribution: np.ndarray = field(compare=False, repr=False)

    def __repr__(self) -> str:
        parts = [
            f"statistic={_fmt(self.statistic)}",
            f"pvalue={_fmt(self.pvalue)}",
            f"confidence_interval={_fmt(self.confidence_interval)}",
            f"metric_a={_fmt(self.metric_a)}",
            f"metric_b={_fmt(self.metric_b)}",
            f"metric={self.metric!r}",
            f"alternative={self.alternative!r}",
            f"n_resamples={self.n_resamples}",
        ]
        return f"{type(self).__name__}({', '.join(parts)})"


# ---- built-in metrics on summed statistics (vectorised over the leading axis) ----

def _ratio(num: np.ndarray, den: np.ndarray, zero_division: float) -> np.ndarray:
    safe = np.where(den == 0, 1.0, den)
    return np.where(den == 0, zero_division, num / safe)


def f1_from_sums(s: np.ndarray, beta: float = 1.0, zero_division: float = 0.0) -> np.ndarray:
    """F_beta from summed (tp, fp, fn) along the last axis."""
    tp, fp, fn = s[..., 0], s[..., 1], s[..., 2]
    b2 = beta * beta
    return _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division)


def bleu_from_sums(s: np.ndarray) -> np.ndarray:
    """Corpus BLEU (0-100, sacrebleu's defaults: 4-grams, "exp" smoothing) from summed
    statistics in :data:`BLEU_COLUMNS` order along the last axis."""
    hyp, ref = s[..., 0], s[..., 1]
    correct, total = s[..., 2:6], s[..., 6:10]
    # "exp" smoothing: the k-th order with no match gets precision 1 / (2^k * total).
    zero = correct == 0
    k = np.cumsum(zero, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(zero, 1.0 / (np.exp2(k) * total), correct / total)
        log_prec = np.log(prec).mean(axis=-1)
        bp = np.where(hyp < ref, np.exp(1.0 - ref / hyp), 1.0)
    # No n-grams of some order (or an empty hypothesis): BLEU is 0, as in sacrebleu.
    degenerate = (total == 0).any(axis=-1) | (hyp == 0)
    return np.where(degenerate, 0.0, 100.0 * bp * np.exp(np.where(degenerate, 0.0, log_prec)))


def _metric_function(metric: Union[str, Callable], shape: tuple, n: int, beta: float, zero_division: float,
                     func: str) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
    if callable(metric):
        return getattr(metric, "__name__", "callable"), metric
    if metric not in BUILTIN_METRICS:
        raise ValueError(f"{func}: metric must be one of {', '.join(map(repr, BUILTIN_METRICS))} or a callable; got {metric!r}")
    want = {"mean": "(N,)", "f1": "(N, 3) tp/fp/fn", "macro_f1": "(N, C, 3) tp/fp/fn", "bleu": "(N, 10)"}[metric]
    ok = {
        "mean": len(shape) == 0,
        "f1": shape == (3,),
        "macro_f1": len(shape) == 2 and shape[1] == 3,
        "bleu": shape == (10,),
    }[metric]
    if not ok:
        raise ValueError(f"{func}: metric={metric!r} needs per-entry statistics of shape {want}; got (N,) + {shape}")
    if metric == "mean":
        return metric, lambda s: s / n
    if metric == "f1":
        return metric, lambda s: f1_from_sums(s, beta, zero_division)
    if metric == "macro_f1":
        return metric, lambda s: f1_from_sums(s, beta, zero_division).mean(axis=-1)
    return metric, bleu_from_sums


def bootstrap_test(
    a: Any,
    b: Any,
    metric: Union[str, Callable[[np.ndarray], np.ndarray]] = "mean",
    *,
    n_resamples: int = 10_000,
    rng: Any = None,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
    beta: float = 1.0,
    zero_division: float = 0.0,
) -> BootstrapTestResult:
    """Paired bootstrap test over entries (same resampled indices for both systems).

    Parameters
    ----------
    a, b : array_like of float, shape (N,) or (N, ...)
        Per-entry sufficient statistics of systems A and B; the metric is a function of
        their sums over entries.
    metric : {"mean", "f1", "macro_f1", "bleu"} or callable
        - "mean": a, b of shape (N,); the mean score.
        - "f1": shape (N, 3), per-entry (tp, fp, fn); micro F_beta of the summed counts.
        - "macro_f1": shape (N, C, 3), per-entry per-class (tp, fp, fn); mean over classes
          of the per-class F_beta.
        - "bleu": shape (N, 10), per-sentence statistics in the order of
          :data:`BLEU_COLUMNS` = (hyp_len, ref_len, correct_1..4, total_1..4), i.e.
          sacrebleu 2's segment statistics; corpus BLEU on sacrebleu's 0-100 scale with its
          default "exp" smoothing.
        - callable: vectorised; receives summed statistics of shape (K,) + a.shape[1:]
          (float64) and returns shape (K,).
    n_resamples : int
    rng : None, int or numpy.random.Generator
        An int seed makes runs repeatable (also across thread counts).
    alternative : {"two-sided", "greater", "less"}
        "greater" is exactly the rule of Berg-Kirkpatrick et al. (2012): the fraction of
        resamples with ``delta_i > 2 delta`` (evidence that A is better than B).
    confidence_level : float
        Of the percentile interval of the resampled delta.
    beta, zero_division : float
        For "f1" and "macro_f1": F_beta, and its value when the denominator is 0.

    Returns
    -------
    BootstrapTestResult
    """
    func = "bootstrap_test"
    check_alternative(alternative)
    n_resamples = check_n_resamples(n_resamples)
    if not 0 < confidence_level < 1:
        raise ValueError(f"{func}: confidence_level must be in (0, 1); got {confidence_level!r}")
    aa = as_real_array(a, "a", func, ndim=(1, 2, 3))
    ba = as_real_array(b, "b", func, ndim=(1, 2, 3))
    n = check_same_length(aa, ba, "a", "b", func)
    if n == 0:
        raise ValueError(f"{func}: a and b are empty; the bootstrap needs at least one entry")
    if not (isinstance(beta, (int, float)) and not isinstance(beta, bool) and math.isfinite(beta) and beta >= 0):
        raise ValueError(f"{func}: beta must be a finite number >= 0; got {beta!r}")
    if not (isinstance(zero_division, (int, float)) and not isinstance(zero_division, bool) and 0 <= zero_division <= 1):
        raise ValueError(f"{func}: zero_division must be a number in [0, 1]; got {zero_division!r}")
    name, fn = _metric_function(metric, aa.shape[1:], n, beta, zero_division, func)
    if name in ("f1", "macro_f1", "bleu"):
        for arr_name, arr in (("a", aa), ("b", ba)):
            neg = arr < 0
            if neg.any():
                raise ValueError(f"{func}: {arr_name} holds counts and must be non-negative; got {arr[neg][0]!r} "
                                 f"at index {tuple(int(i) for i in np.argwhere(neg)[0])}")
    seed = seed_from_rng(rng)

    stat_shape = aa.shape[1:]
    m = int(np.prod(stat_shape, dtype=np.int64))
    stats = np.concatenate([aa.reshape(n, m), ba.reshape(n, m)], axis=1).astype(np.float64)

    def deltas(sums: np.ndarray) -> np.ndarray:
        k = len(sums)
        sa = sums[:, :m].reshape((k,) + stat_shape)
        sb = sums[:, m:].reshape((k,) + stat_shape)
        return apply_vectorised(fn, sa, k, func, "metric") - apply_vectorised(fn, sb, k, func, "metric")

    full = stats.sum(axis=0, keepdims=True)
    metric_a = float(apply_vectorised(fn, full[:, :m].reshape((1,) + stat_shape), 1, func, "metric")[0])
    metric_b = float(apply_vectorised(fn, full[:, m:].reshape((1,) + stat_shape), 1, func, "metric")[0])
    delta = metric_a - metric_b
    if not math.isfinite(delta):
        raise ValueError(f"{func}: the metric is not finite on the full data ({metric_a}, {metric_b})")

    out = np.empty(n_resamples)
    block = max(1, min(n_resamples, _BLOCK_ELEMENTS // n))
    for i, start in enumerate(range(0, n_resamples, block)):
        k = min(block, n_resamples - start)
        block_seed = _block_seed(seed, i)
        if stats.shape[1] <= _FUSED_MAX_COLUMNS:
            sums = _core.bootstrap_sums(stats, k, block_seed)
        else:
            sums = _core.bootstrap_counts(n, k, block_seed) @ stats
        out[start:start + k] = deltas(sums)

    if alternative == "greater":
        hits = np.count_nonzero(out > 2 * delta)
    elif alternative == "less":
        hits = np.count_nonzero(out < 2 * delta)
    else:
        hits = np.count_nonzero(np.abs(out - delta) > abs(delta))
    tail = (1 - confidence_level) / 2
    lo, hi = np.quantile(out, [tail, 1 - tail])
    return BootstrapTestResult(
        statistic=delta,
        pvalue=int(hits) / n_resamples,
        confidence_interval=(float(lo), float(hi)),
        metric_a=metric_a,
        metric_b=metric_b,
        metric=name,
        alternative=alternative,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        bootstrap_distribution=out,
    )

