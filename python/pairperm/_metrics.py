"""What each evaluation metric is, in one table: every caller (compare, compare_systems, the
bootstrap, intervals, readers, the CLI, reports and figures) asks here.

A metric is a function of per-item statistics summed over the items. Its :class:`Metric` row
says which statistics it reads (their shape and, for a table, their column names), how its
value follows from their sums, whether lower is better, how it is reported (a sum, or a mean
per item) and which test fits it (its ``kind``):

- ``"sum"``: per-item integer scores reported as their sum (attachments, counts): the exact
  paired-permutation test of the sum;
- ``"mean"``: per-item scores reported as their mean (accuracy, or real-valued scores such as
  COMET and nDCG): the same test, McNemar's on 0/1 scores;
- ``"ratio"``: F-measures of summed (tp, fp, fn) counts: the exact structured tests;
- ``"corpus"``: nonlinear functions of summed statistics (macro-F1, BLEU, chrF): the paired
  permutation by importance sampling;
- ``"rank"``: per-item scores compared by ranks (perplexity, lower is better): Wilcoxon.

Adding a metric is adding a row here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

__all__ = ["BLEU_COLUMNS", "CHRF_COLUMNS", "METRICS", "Metric", "metric_named"]

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


# ---------------------------------------------------------------- values from summed statistics
# Vectorised over the leading axes: the bootstrap and the permutation samplers pass a block of sums.


def _ratio(num: np.ndarray, den: np.ndarray, zero_division: float) -> np.ndarray:
    safe = np.where(den == 0, 1.0, den)
    return np.where(den == 0, zero_division, num / safe)


def f1_from_sums(s: np.ndarray, beta: float = 1.0, zero_division: float = 0.0) -> np.ndarray:
    """F_beta from summed (tp, fp, fn) along the last axis."""
    tp, fp, fn = s[..., 0], s[..., 1], s[..., 2]
    b2 = beta * beta
    return _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division)


def ratio_from_sums(sums: np.ndarray, kind: str, beta: float = 1.0, zero_division: float = 0.0) -> np.ndarray:
    """F_beta (``kind="f1"``), precision or recall of summed (tp, fp, fn), or F1 of summed
    (tp, errors) (two columns)."""
    tp, second = sums[..., 0], sums[..., 1]
    if sums.shape[-1] == 2:  # (tp, errors): F1 = 2 TP / (2 TP + errors)
        return _ratio(2 * tp, 2 * tp + second, zero_division)
    if kind == "f1":
        return f1_from_sums(sums, beta, zero_division)
    return _ratio(tp, tp + (second if kind == "precision" else sums[..., 2]), zero_division)


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


# ---------------------------------------------------------------- the registry


@dataclass(frozen=True)
class Metric:
    """One metric: see the module's docstring for the kinds."""

    name: str
    kind: str
    # The per-item statistics: a description, and a test of their shape after the items' axis.
    statistics: str = "(N,)"
    shape_ok: Callable[[tuple], bool] = lambda s: len(s) == 0
    # Column names a table of the statistics is read by (the first set it holds), never by position.
    columns: tuple = ()
    # Per-item integer scores (real ones are taken too, and the reason says so).
    integer: bool = False
    lower_is_better: bool = False
    # The value from summed statistics (sums, beta, zero_division) -> value, vectorised.
    from_sums: Optional[Callable[..., np.ndarray]] = None
    # The statistics are counts: non-negative, and (BLEU, chrF) no more matches than n-grams.
    counts: bool = False
    # Per-sentence scores whose integer (N, k) columns would be this corpus metric's statistics.
    corpus_metric: Optional[str] = None
    # Taken by pairperm.bootstrap_test (and bootstrap_intervals) by name.
    bootstrapped: bool = False
    # How many numbers a line of a table of one item's statistics may hold (the command line's
    # files); none where the statistics have no line form (macro-F1's classes).
    line_widths: tuple = (1,)

    @property
    def summed(self) -> bool:
        """Reported as a sum over the items (not a mean per item)."""
        return self.kind == "sum"

    @property
    def per_item(self) -> bool:
        """A sum or mean of one score per item: (N, k) scores are k samples of each item, and the
        difference's interval inverts the permutation test of a shift of every item."""
        return self.kind in ("sum", "mean", "rank")

    @property
    def test(self) -> str:
        """The function compare() runs (on 0/1 scores McNemar's for a "mean" metric)."""
        return {"sum": "permutation_test", "mean": "permutation_test", "ratio": f"{self.name}_test",
                "corpus": "monte_carlo_test", "rank": "wilcoxon_test"}[self.kind]

    def value(self, sums: np.ndarray, n: int = 1, beta: float = 1.0, zero_division: float = 0.0) -> np.ndarray:
        """The metric of summed statistics (the items' sum over `n` items for a mean)."""
        if self.from_sums is not None:
            return self.from_sums(sums, beta, zero_division)
        return sums if self.summed else sums / n


def _integer(name: str, summed: bool = False) -> Metric:
    return Metric(name, "sum" if summed else "mean", integer=True)


def _real(name: str, corpus_metric: Optional[str] = None) -> Metric:
    return Metric(name, "mean", corpus_metric=corpus_metric)


def _counts3(s: tuple) -> bool:
    return s == (3,)


_RATIO_SHAPE = ("(N, 3) tp/fp/fn, or (N, 2) tp/errors", lambda s: s in ((3,), (2,)))

METRICS: dict[str, Metric] = {m.name: m for m in (
    _integer("accuracy"), _integer("exact_match"), _integer("uas", summed=True), _integer("las", summed=True),
    _integer("sum", summed=True),
    Metric("mean", "mean", bootstrapped=True),
    _real("comet"), _real("bleurt"), _real("chrf", corpus_metric="corpus_chrf"),
    _real("sentence_bleu", corpus_metric="bleu"), _real("ndcg"), _real("ap"), _real("rr"), _real("rouge"),
    _real("judge"),
    Metric("f1", "ratio", *_RATIO_SHAPE, columns=(("tp", "fp", "fn"), ("tp", "errors")), counts=True,
           from_sums=lambda s, beta, zd: ratio_from_sums(s, "f1", beta, zd), bootstrapped=True, line_widths=(2, 3)),
    Metric("precision", "ratio", *_RATIO_SHAPE, columns=(("tp", "fp", "fn"),), counts=True,
           from_sums=lambda s, beta, zd: ratio_from_sums(s, "precision", beta, zd), line_widths=(3,)),
    Metric("recall", "ratio", *_RATIO_SHAPE, columns=(("tp", "fp", "fn"),), counts=True,
           from_sums=lambda s, beta, zd: ratio_from_sums(s, "recall", beta, zd), line_widths=(3,)),
    Metric("macro_f1", "corpus", "(N, C, 3) tp/fp/fn", lambda s: len(s) == 2 and s[1] == 3, counts=True,
           from_sums=lambda s, beta, zd: f1_from_sums(s, beta, zd).mean(axis=-1), bootstrapped=True, line_widths=()),
    Metric("bleu", "corpus", "(N, 10)", lambda s: s == (10,), columns=(BLEU_COLUMNS,), counts=True,
           from_sums=lambda s, beta, zd: bleu_from_sums(s), bootstrapped=True, line_widths=(10,)),
    Metric("corpus_chrf", "corpus", "(N, 3k), k orders of (hyp, ref, match)",
           lambda s: len(s) == 1 and s[0] >= 3 and s[0] % 3 == 0, columns=(CHRF_COLUMNS,), counts=True,
           from_sums=lambda s, beta, zd: chrf_from_sums(s), bootstrapped=True, line_widths=(18, 24)),
    Metric("perplexity", "rank", lower_is_better=True),
)}


def metric_named(metric: Any) -> Optional[Metric]:
    """The registry's row of a metric given by name; None for a callable (or anything else)."""
    return METRICS.get(metric) if isinstance(metric, str) else None


def prefers_lower(metric: Any) -> bool:
    row = metric_named(metric)
    return row is not None and row.lower_is_better


def is_summed(metric: Any) -> bool:
    row = metric_named(metric)
    return row is not None and row.summed


def is_per_item(metric: Any) -> bool:
    row = metric_named(metric)
    return row is not None and row.per_item


# ---------------------------------------------------------------- reading and checking statistics


def check_statistics_shape(metric: str, shape: tuple, func: str, label: str = "x") -> None:
    """Per-entry statistics of the shape the built-in `metric` reads (shape after N)."""
    row = METRICS[metric]
    if not row.shape_ok(tuple(shape)):
        raise ValueError(f"{func}: metric={metric!r} needs per-entry statistics of shape {row.statistics}; {label} "
                         f"has shape (N,) + {tuple(shape)}")


def statistics_by_name(values: Any, metric: Any, name: str, func: str) -> Any:
    """A DataFrame's per-entry statistics for `metric` as an array, its columns taken by name:
    the metric's named columns, or the one column of a per-entry score. Unnamed columns
    (0, 1, ..., as ``pandas.DataFrame(array)`` makes) keep their order, which is all there is.
    Anything but a DataFrame is returned unchanged."""
    columns = getattr(values, "columns", None)
    if columns is None or not hasattr(values, "iloc"):
        return values
    labels = [str(c) for c in columns]
    row = metric_named(metric)
    options = row.columns if row is not None else ()
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
    row = metric_named(metric)
    if row is None or not row.columns:
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
    row = metric_named(metric)
    if row is None or not row.counts:
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


def check_perplexity(arr: np.ndarray, label: str, func: str) -> None:
    """Perplexities are exponentials of a cross-entropy, at least 1: anything below is another
    score (a log-likelihood, an entropy), whose direction the test would get wrong."""
    low = arr < 1
    if low.any():
        i = int(np.argmax(low))
        raise ValueError(f"{func}: metric='perplexity' takes perplexities, which are at least 1; {label} has "
                         f"{float(arr.ravel()[i])!r} at entry {i} (for other scores compare them with metric='mean', "
                         "where higher is better)")


def check_sentence_scores(metric: Any, arr: np.ndarray, label: str, func: str) -> None:
    """Refuses integer statistics of shape (N, k) given to a per-sentence metric."""
    row = metric_named(metric)
    corpus = row.corpus_metric if row is not None else None
    if corpus is not None and arr.ndim == 2 and arr.dtype.kind in "iu":
        raise ValueError(f"{func}: metric={metric!r} takes per-sentence scores (real numbers); {label} holds integer "
                         f"columns of shape {arr.shape}, which look like per-sentence statistics: for the corpus "
                         f"metric from them use metric={corpus!r}")
