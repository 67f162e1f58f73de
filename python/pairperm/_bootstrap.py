"""Paired bootstrap test (Koehn 2004; p-value rule of Berg-Kirkpatrick et al. 2012).

A resample of the N entries is a Multinomial(N, 1/N) count vector c; for metrics that
are functions of summed per-entry sufficient statistics, the resampled sums are
``c @ stats``. Blocks of count vectors times the (N, 2m) statistics matrix of both
systems give all resamples with one BLAS product per block, never a Python loop per
resample.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Optional, Union

import numpy as np

from . import _core
from ._difference import BootstrapEffect
from ._errors import SupportTooLargeError
from ._results import BootstrapTestResult
from ._runner import block_seed, monte_carlo_options
from ._units import read_groups, unit_sums
from ._validation import (
    N_RESAMPLES,
    Alternative,
    ArrayLike,
    apply_vectorised,
    as_real_array,
    check_alternative,
    check_paired_index,
    check_same_length,
)

__all__ = ["bootstrap_test", "BLEU_COLUMNS", "CHRF_COLUMNS", "METRIC_COLUMNS", "statistics_by_name", "statistics_pair"]

BUILTIN_METRICS = ("mean", "f1", "macro_f1", "bleu", "corpus_chrf")

#: Column order of the per-sentence BLEU statistics (as sacrebleu 2's segment statistics).
BLEU_COLUMNS = (
    "hyp_len", "ref_len",
    "correct_1", "correct_2", "correct_3", "correct_4",
    "total_1", "total_2", "total_3", "total_4",
)

#: Column order of the per-sentence chrF statistics (as sacrebleu's): for each character
#: n-gram order 1..6, the hypothesis' n-grams, the reference's, and their matches. chrF++
#: appends its two word orders in the same layout (24 columns).
CHRF_COLUMNS = tuple(f"{what}_{order}" for order in range(1, 7) for what in ("hyp", "ref", "match"))

# The metrics whose per-entry statistics have names: a DataFrame of them is read by these
# column names (the first set it holds), never by position.
METRIC_COLUMNS: dict[str, tuple[tuple[str, ...], ...]] = {
    "f1": (("tp", "fp", "fn"), ("tp", "errors")),
    "precision": (("tp", "fp", "fn"),),
    "recall": (("tp", "fp", "fn"),),
    "bleu": (BLEU_COLUMNS,),
    "corpus_chrf": (CHRF_COLUMNS,),
}


def statistics_by_name(values: Any, metric: Any, name: str, func: str) -> Any:
    """A DataFrame's per-entry statistics for `metric` as an array, its columns taken by name:
    the metric's named columns, or the one column of a per-entry score. Unnamed columns
    (0, 1, ..., as ``pandas.DataFrame(array)`` makes) keep their order, which is all there is.
    Anything but a DataFrame is returned unchanged."""
    columns = getattr(values, "columns", None)
    if columns is None or not hasattr(values, "iloc"):
        return values
    labels = [str(c) for c in columns]
    options = METRIC_COLUMNS.get(metric, ()) if isinstance(metric, str) else ()
    for wanted in options:
        if set(wanted) <= set(labels):
            if metric == "corpus_chrf":
                wanted = _chrf_orders(labels, name, func)
            return values[[columns[labels.index(w)] for w in wanted]].to_numpy()
    if list(columns) == list(range(len(columns))) and all(isinstance(c, (int, np.integer)) for c in columns):
        return values.to_numpy()
    if not options and len(labels) == 1:
        return values[columns[0]].to_numpy()
    need = " or ".join("(" + ", ".join(w) + ")" for w in options) or "a single column"
    raise ValueError(f"{func}: {name} is a DataFrame with columns {labels}; metric={metric!r} reads columns by name "
                     f"and needs {need} (or pass an array, whose columns are taken in order)")


def statistics_pair(x: Any, y: Any, metric: Any, func: str) -> tuple[Any, Any]:
    """statistics_by_name of two systems' statistics. For a metric whose statistics have no
    names (a callable), two DataFrames are read in x's column order with y's columns matched to
    x's by name, and must hold the same names."""
    if not (isinstance(metric, str) and metric in METRIC_COLUMNS):
        cx, cy = (list(getattr(v, "columns", [])) if hasattr(v, "iloc") else None for v in (x, y))
        if cx is not None and cy is not None and len(cx) > 1:
            if {str(c) for c in cx} != {str(c) for c in cy} or len(cx) != len(cy):
                raise ValueError(f"{func}: x and y are DataFrames with different columns "
                                 f"({[str(c) for c in cx]} and {[str(c) for c in cy]}); the metric sees their "
                                 "columns by position, so they must hold the same names")
            by_name = {str(c): c for c in cy}
            return x.to_numpy(), y[[by_name[str(c)] for c in cx]].to_numpy()
    return statistics_by_name(x, metric, "x", func), statistics_by_name(y, metric, "y", func)


def _chrf_orders(labels: list[str], name: str, func: str) -> tuple[str, ...]:
    """The chrF columns of every order a frame holds in CHRF_COLUMNS' layout: chrF's six
    character orders, and chrF++'s word orders 7 and 8 after them when present, so that a
    chrF++ frame is never read as chrF."""
    present = set(labels)
    orders = [int(m.group(2)) for m in map(_CHRF_COLUMN.fullmatch, labels) if m]
    wanted: tuple[str, ...] = CHRF_COLUMNS
    for order in range(7, max(orders, default=0) + 1):
        cols = tuple(f"{what}_{order}" for what in ("hyp", "ref", "match"))
        if not set(cols) <= present:
            raise ValueError(f"{func}: {name} holds chrF columns up to order {max(orders)} but not all of "
                             f"{', '.join(cols)}; every order needs its hyp, ref and match columns")
        wanted += cols
    return wanted


_CHRF_COLUMN = re.compile(r"(hyp|ref|match)_(\d+)")


# Per-entry statistics of each built-in metric: a description and a test of the shape after N.
STATISTICS_SHAPES: dict[str, tuple[str, Callable[[tuple], bool]]] = {
    "mean": ("(N,)", lambda s: len(s) == 0),
    "f1": ("(N, 3) tp/fp/fn", lambda s: s == (3,)),
    "macro_f1": ("(N, C, 3) tp/fp/fn", lambda s: len(s) == 2 and s[1] == 3),
    "bleu": ("(N, 10)", lambda s: s == (10,)),
    "corpus_chrf": ("(N, 3k), k orders of (hyp, ref, match)", lambda s: len(s) == 1 and s[0] >= 3 and s[0] % 3 == 0),
}

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
_PEAK_BYTES_PER_RESAMPLE = 16
_HITS_CHUNK = 1 << 20



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


def chrf_from_sums(s: np.ndarray, beta: float = 2.0) -> np.ndarray:
    """Corpus chrF (0-100, sacrebleu's definition) from summed statistics in
    :data:`CHRF_COLUMNS` layout along the last axis (any number of orders): the F_beta of
    the character n-gram precision and recall, each averaged over the orders where both the
    hypothesis and the reference have n-grams; 0 when no order does."""
    t = s.reshape(s.shape[:-1] + (s.shape[-1] // 3, 3))
    hyp, ref, match = t[..., 0], t[..., 1], t[..., 2]
    counted = (hyp > 0) & (ref > 0)
    orders = counted.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(counted, match / np.where(counted, hyp, 1), 0.0).sum(axis=-1) / np.maximum(orders, 1)
        rec = np.where(counted, match / np.where(counted, ref, 1), 0.0).sum(axis=-1) / np.maximum(orders, 1)
        b2 = beta * beta
        den = b2 * prec + rec
        return np.where(den > 0, 100.0 * (1 + b2) * prec * rec / np.where(den > 0, den, 1.0), 0.0)


def check_statistics_shape(metric: str, shape: tuple, func: str, label: str = "x") -> None:
    """Per-entry statistics of the shape the built-in `metric` reads (shape after N)."""
    want, ok = STATISTICS_SHAPES[metric]
    if not ok(tuple(shape)):
        raise ValueError(f"{func}: metric={metric!r} needs per-entry statistics of shape {want}; {label} has shape "
                         f"(N,) + {tuple(shape)}")


def _metric_function(metric: Union[str, Callable], shape: tuple, n: int, beta: float, zero_division: float,
                     func: str) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
    if callable(metric):
        return getattr(metric, "__name__", "callable"), metric
    if metric not in BUILTIN_METRICS:
        raise ValueError(f"{func}: metric must be one of {', '.join(map(repr, BUILTIN_METRICS))} or a callable; got {metric!r}")
    check_statistics_shape(metric, shape, func)
    return metric, summed_metric(metric, n, beta, zero_division)


def summed_metric(metric: str, n: int = 1, beta: float = 1.0, zero_division: float = 0.0) -> Callable:
    """The built-in metric as a function of summed statistics (vectorised over leading axes);
    n divides the sum for "mean"; beta and zero_division are F1's (chrF keeps its beta of 2)."""
    if metric == "mean":
        return lambda s: s / n
    if metric == "f1":
        return lambda s: f1_from_sums(s, beta, zero_division)
    if metric == "macro_f1":
        return lambda s: f1_from_sums(s, beta, zero_division).mean(axis=-1)
    if metric == "corpus_chrf":
        return chrf_from_sums
    return bleu_from_sums


def _bootstrap_test_iv(x: Any, y: Any, metric: Any, n_resamples: Any, rng: Any, alternative: Any,
                       confidence_level: Any, beta: Any, zero_division: Any, n_jobs: Any, groups: Any = None) -> tuple:
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
    if not (isinstance(beta, (int, float)) and not isinstance(beta, bool) and math.isfinite(beta) and beta >= 0):
        raise ValueError(f"{func}: beta must be a finite number >= 0; got {beta!r}")
    if not (isinstance(zero_division, (int, float)) and not isinstance(zero_division, bool) and 0 <= zero_division <= 1):
        raise ValueError(f"{func}: zero_division must be a number in [0, 1]; got {zero_division!r}")
    name, fn = _metric_function(metric, xa.shape[1:], n, beta, zero_division, func)
    for arr_name, arr in (("x", xa), ("y", ya)):
        check_counts(arr, arr_name, name, func)
    if groups is not None:
        xa, ya, fn = _cluster_statistics(xa, ya, name, fn, groups, func, x)
    return xa, ya, name, fn, opts


def _cluster_statistics(xa: np.ndarray, ya: np.ndarray, name: str, fn: Callable, groups: Any, func: str,
                        raw_x: Any) -> tuple:
    """Statistics summed per unit, so that resampling rows resamples whole units (the cluster
    bootstrap). A mean is then a ratio: the units' summed scores over their summed item counts."""
    units = read_groups(groups, len(xa), func, like=raw_x)
    if name != "mean":
        return unit_sums(xa, units, "x", func), unit_sums(ya, units, "y", func), fn
    ones = np.ones(len(xa), dtype=xa.dtype)
    xa = unit_sums(np.column_stack([xa, ones]), units, "x", func)
    ya = unit_sums(np.column_stack([ya, ones]), units, "y", func)
    return xa, ya, lambda s: s[..., 0] / s[..., 1]


def _column_name(metric: str, column: int, width: int) -> str:
    """The name of a statistics column of `metric` (BLEU_COLUMNS, CHRF_COLUMNS and chrF++'s
    word orders after them), or its position."""
    if metric == "bleu" and width == len(BLEU_COLUMNS):
        return BLEU_COLUMNS[column]
    if metric == "corpus_chrf" and width % 3 == 0:
        return f"{('hyp', 'ref', 'match')[column % 3]}_{column // 3 + 1}"
    return str(column)


def check_counts(arr: np.ndarray, name: str, metric: str, func: str) -> None:
    """The count-based metrics (F1, BLEU, chrF) need non-negative statistics, and no more matches
    than there are n-grams: BLEU's correct_k at most total_k, chrF's match at most both sides'
    n-grams. A wrong statistic would give a metric, and a p-value, of nothing real."""
    if metric not in ("f1", "macro_f1", "bleu", "corpus_chrf"):
        return

    def refuse(bad: np.ndarray, what: str) -> None:
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"entry {at[0]}" + (f", column {_column_name(metric, at[-1], arr.shape[-1])!r}" if arr.ndim > 1 else "")
        if arr.ndim == 3:
            where = f"entry {at[0]}, class {at[1]}, column {at[2]}"
        raise ValueError(f"{func}: {name} {what} ({where})")

    neg = arr < 0
    if neg.any():
        refuse(neg, f"holds counts and must be non-negative; got {arr[neg][0].item()!r}")
    if metric == "bleu" and arr.ndim == 2 and arr.shape[1] == len(BLEU_COLUMNS):
        correct, total = arr[:, 2:6], arr[:, 6:10]
        over = correct > total
        if over.any():
            i, k = (int(v) for v in np.argwhere(over)[0])
            raise ValueError(f"{func}: {name} has more matching {k + 1}-grams than {k + 1}-grams in entry {i}: "
                             f"correct_{k + 1} = {correct[i, k].item()!r} > total_{k + 1} = {total[i, k].item()!r}")
    if metric == "corpus_chrf" and arr.ndim == 2 and arr.shape[1] % 3 == 0:
        t = arr.reshape(len(arr), -1, 3)
        over = (t[..., 2] > t[..., 0]) | (t[..., 2] > t[..., 1])
        if over.any():
            i, k = (int(v) for v in np.argwhere(over)[0])
            raise ValueError(f"{func}: {name} has more matching n-grams of order {k + 1} than the hypothesis or the "
                             f"reference has in entry {i}: match_{k + 1} = {t[i, k, 2].item()!r}, hyp_{k + 1} = "
                             f"{t[i, k, 0].item()!r}, ref_{k + 1} = {t[i, k, 1].item()!r}")


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
    rng: Any = None,
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
    n = len(xa)
    stat_shape = xa.shape[1:]
    m = int(np.prod(stat_shape, dtype=np.int64))
    stats = np.concatenate([xa.reshape(n, m), ya.reshape(n, m)], axis=1).astype(np.float64)

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
