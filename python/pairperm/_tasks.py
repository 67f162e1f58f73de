"""compare_systems() over several tasks at once: ``{task: scores}`` or a long table, each task
with its own metric, one long table of pairs with effect sizes and confidence intervals, the
multiple-testing correction within each task or over the whole family, provenance, and a
cache of finished pairs so that an interrupted run resumes where it stopped.

Every task runs the single-task machinery of :mod:`pairperm._systems` (the C++ batch for
integer sums, compare() per pair for the rest) on its missing pairs.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, NamedTuple, Optional, Union

import numpy as np

from . import _systems
from ._cache import UnkeyableError, as_cache, callable_key, data_digest, pair_key
from ._intervals import AUTO_EXACT_MAX, batch_shift_bounds, differences_interval
from ._metrics import METRICS, is_per_item, is_summed, metric_named, prefers_lower
from ._resampling import bootstrap_intervals, bootstrap_mean_intervals
from ._sampling import child_seed, seed_root
from ._units import read_groups, sample_sums, unit_sums
from ._validation import Alternative, _has_index, align_by_index, check_probability, index_difference
from ._version import __version__

__all__ = ["LONG_COLUMNS", "SCOPES", "MultiTaskComparison", "TaskPair", "TaskSummary", "compare_tasks",
           "is_several_tasks"]

_FUNC = "compare_systems"
SCOPES = ("task", "family")
#: Default column names of a long table: one row per (task, item, system).
LONG_COLUMNS = ("task", "item", "system", "score")
# Pairs stored per cache write: small enough that an interrupted run loses little, large
# enough that the C++ batch still amortises its set-up over many pairs.
_CACHE_CHUNK = 64
# Resamples of the paired bootstrap (sacrebleu's default): one shared set per task.
BOOTSTRAP_RESAMPLES = 1000


class TaskPair(NamedTuple):
    """One compared pair of one task: A against B.

    ``difference`` is the metric of A minus the metric of B in the metric's own units (a
    difference of accuracies, of sums, of F1 ...), ``ci_low``/``ci_high`` its confidence
    interval (NaN when intervals were not asked for); the other fields are those of
    :class:`pairperm._systems.SystemPair`.
    """

    task: str
    system_a: str
    system_b: str
    metric_a: Union[int, float]
    metric_b: Union[int, float]
    difference: Union[int, float]
    ci_low: float
    ci_high: float
    statistic: Union[int, float]
    pvalue: float
    pvalue_adjusted: float
    significant: bool
    test: str
    engine: str
    # log(pvalue), kept where the p-value underflows to 0 (deep tails of exact tests): it orders
    # pairs whose p-values all read 0.
    log_pvalue: float = math.nan


@dataclass(frozen=True)
class TaskSummary:
    """What one task compared: its systems, their metric values and intervals, and its size.

    ``system_intervals`` holds each system's (low, high) bootstrap percentile interval (empty
    without intervals; for sums and means of integer scores over a range of at most 1,024 with
    infinitely many resamples, otherwise from the task's shared paired resamples);
    ``interval_method`` says how the pairs' intervals were made:
    ``"shift_interval"`` (inverting the permutation test), ``"bootstrap_percentile"`` or
    ``""`` (none); ``bootstrap_seed`` is the seed of the task's shared resamples.
    """

    name: str
    metric: str
    systems: tuple
    metric_values: tuple
    system_intervals: tuple
    n_items: int
    n_units: int
    interval_method: str
    bootstrap_seed: Optional[int] = None

    def to_dict(self) -> dict:
        return {
            "name": self.name, "metric": self.metric, "n_items": self.n_items, "n_units": self.n_units,
            "interval_method": self.interval_method, "bootstrap_seed": self.bootstrap_seed,
            "systems": _system_entries(self.systems, self.metric_values, self.system_intervals),
        }

    @classmethod
    def from_dict(cls, d: Mapping, confidence_level: Optional[float] = None) -> TaskSummary:
        """Back from :meth:`to_dict`; `confidence_level`: the comparison's (None: none)."""
        names, values, intervals = _read_system_entries(d["systems"], confidence_level)
        return cls(name=d["name"], metric=d["metric"], systems=names, metric_values=values, system_intervals=intervals,
                   n_items=d["n_items"], n_units=d["n_units"], interval_method=d["interval_method"],
                   bootstrap_seed=d.get("bootstrap_seed"))


@dataclass(frozen=True, repr=False, eq=False)
class MultiTaskComparison:
    """Result of :func:`pairperm.compare_systems` on several tasks.

    Attributes
    ----------
    tasks : tuple of TaskSummary
        Per task: its metric, systems, metric values (with intervals), items and units.
    rows : tuple of TaskPair
        One per compared pair of each task, tasks in the order given.
    alternative, correction, alpha, baseline :
        As in :class:`pairperm.SystemsComparison`.
    correction_scope : {"task", "family"}
        Whether p-values were adjusted within each task or over all pairs of all tasks.
    confidence_level : float or None
        Level of every interval; None: no intervals were computed.
    method, n_resamples, seed :
        The test options every pair ran with (``seed``: the root of every pair's and every
        task's seed; None when unseeded).
    bootstrap_resamples : int
        Resamples of each task's shared paired bootstrap.
    version : str
        The pairperm version that computed the result.
    complete : bool
        False only for the partial result carried by a KeyboardInterrupt
        (``exc.partial_result``): the finished pairs, corrected among themselves, with the
        intervals computed so far (those of sums and means; the bootstrapped intervals of
        other metrics and of the systems, made per task at the end, are NaN).

    Examples
    --------
    >>> import pairperm
    >>> res = pairperm.compare_systems({
    ...     "pos": {"A": [5, 7, 9, 4, 8, 6, 9, 8], "B": [4, 7, 6, 4, 5, 6, 5, 6]},
    ...     "qa": {"A": [1, 0, 1, 1, 0, 1], "B": [0, 0, 1, 0, 0, 1]},
    ... }, metric={"pos": "sum", "qa": "accuracy"})
    >>> [(r.task, r.difference, r.ci_low, r.ci_high, r.pvalue) for r in res.rows]
    [('pos', 13, 0.0, 24.0, 0.0625), ('qa', 0.3333333333333333, 0.0, 1.0, 0.5)]
    >>> pairperm.MultiTaskComparison.from_json(res.to_json()) == res
    True
    """

    tasks: tuple
    rows: tuple
    alternative: str
    correction: Optional[str]
    correction_scope: str
    alpha: float
    baseline: Optional[str]
    confidence_level: Optional[float]
    method: str = "auto"
    n_resamples: Optional[int] = None
    seed: Optional[int] = None
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES
    version: str = __version__
    complete: bool = True

    # ---- views

    @property
    def task_names(self) -> tuple:
        return tuple(t.name for t in self.tasks)

    def task(self, name: str) -> _systems.SystemsComparison:
        """One task's pairs as a :class:`pairperm.SystemsComparison` (its p-value matrix, plot,
        report and wins), with the adjusted p-values of this comparison."""
        if name not in self.task_names:
            raise ValueError(f"MultiTaskComparison.task: no task named {name!r}; tasks: "
                             f"{', '.join(map(repr, self.task_names))}")
        summary = self.tasks[self.task_names.index(name)]
        rows = tuple(
            _systems.SystemPair(r.system_a, r.system_b, r.metric_a, r.metric_b, r.statistic, r.pvalue,
                                r.pvalue_adjusted, r.significant, r.test, r.engine, r.difference, r.ci_low, r.ci_high,
                                r.log_pvalue)
            for r in self.rows if r.task == name
        )
        return _systems.SystemsComparison(
            names=summary.systems, metric=summary.metric, metric_values=summary.metric_values, rows=rows,
            alternative=self.alternative, correction=self.correction, alpha=self.alpha, baseline=self.baseline,
            confidence_level=self.confidence_level, system_intervals=summary.system_intervals,
        )

    def to_frame(self) -> Any:
        """The long table as a pandas DataFrame, one row per pair (pandas is imported only here)."""
        import pandas as pd

        return pd.DataFrame([r._asdict() for r in self.rows], columns=list(TaskPair._fields))

    def to_dict(self) -> dict:
        """Plain Python values: the options and provenance, every task, every pair (an interval
        end that is unbounded (one-sided) is None; one that is absent (``confidence_level=None``,
        or no interval could be made) is left out; an undefined metric value is None)."""
        return {
            "pairperm_version": self.version,
            "complete": self.complete,
            "alternative": self.alternative,
            "correction": self.correction,
            "correction_scope": self.correction_scope,
            "alpha": self.alpha,
            "baseline": self.baseline,
            "confidence_level": self.confidence_level,
            "method": self.method,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "bootstrap_resamples": self.bootstrap_resamples,
            "tasks": [t.to_dict() for t in self.tasks],
            "pairs": [_plain_interval(r._asdict()) for r in self.rows],
        }

    def __eq__(self, other: object) -> bool:
        # Through the plain form: rows without an interval hold NaN, which never equals itself.
        return isinstance(other, MultiTaskComparison) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def to_json(self, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict` (standard JSON, no NaN or Infinity: an unbounded interval
        end is ``null``, an absent one is left out); :meth:`from_json` reads it back."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, d: Mapping) -> MultiTaskComparison:
        return cls(
            tasks=tuple(TaskSummary.from_dict(t, d["confidence_level"]) for t in d["tasks"]),
            rows=tuple(TaskPair(**_float_interval(r, d["confidence_level"])) for r in d["pairs"]),
            alternative=d["alternative"], correction=d["correction"], correction_scope=d["correction_scope"],
            alpha=d["alpha"], baseline=d["baseline"], confidence_level=d["confidence_level"], method=d["method"],
            n_resamples=d["n_resamples"], seed=d["seed"], bootstrap_resamples=d["bootstrap_resamples"],
            version=d["pairperm_version"], complete=d.get("complete", True),
        )

    @classmethod
    def from_json(cls, text: str) -> MultiTaskComparison:
        return cls.from_dict(json.loads(text))

    # ---- reports and plots

    def report(self, baseline: Optional[str] = None, *, intervals: bool = True, decimals: Optional[int] = None) -> Any:
        """The systems x tasks report (:class:`pairperm.TaskReport`); see there for the marks."""
        from ._report import TaskReport

        return TaskReport.from_comparison(self, baseline=baseline, intervals=intervals, decimals=decimals)

    def to_markdown(self, baseline: Optional[str] = None) -> str:
        """:meth:`report` as a Markdown table."""
        return str(self.report(baseline).to_markdown())

    def to_latex(self, baseline: Optional[str] = None, *, layout: str = "auto") -> str:
        """:meth:`report` as a LaTeX (booktabs) table: a row per system (``layout="wide"``), a
        row per task (``"tall"``), or whichever fits a page (``"auto"``)."""
        return str(self.report(baseline).to_latex(layout=layout))

    def _repr_html_(self) -> str:
        return str(self.report()._repr_html_())

    def plot_differences(self, baseline: Optional[str] = None, ax: Any = None, **kwargs: Any) -> Any:
        """Each system's difference to `baseline` on every task, with its interval, drawn by
        :func:`pairperm.plot_differences` (default baseline: the comparison's; significance from
        ``pvalue_adjusted`` at the comparison's alpha; each task's metric on its axis and the
        correction and confidence level in the legend)."""
        from ._plot import plot_differences

        base = baseline if baseline is not None else self.baseline
        return plot_differences(self, baseline=base, ax=ax, **kwargs)

    def plot(self, task: str, **kwargs: Any) -> Any:
        """One task's p-value matrix (:meth:`pairperm.SystemsComparison.plot` of :meth:`task`),
        with the task's name in its title."""
        return self.task(task).plot(task=task, **kwargs)

    def to_table(self, max_rows: Optional[int] = None) -> str:
        """Plain-text table of the pairs (the first and last max_rows / 2 when there are more)."""
        head = (f"MultiTaskComparison(tasks={len(self.tasks)}, pairs={len(self.rows)}, "
                f"alternative={self.alternative!r}, correction={self.correction!r}, "
                f"correction_scope={self.correction_scope!r}, alpha={self.alpha:g}, "
                f"confidence_level={self.confidence_level!r}"
                + (f", baseline={self.baseline!r}" if self.baseline is not None else "")
                + ("" if self.complete else ", complete=False") + ")")
        cut = max_rows is not None and len(self.rows) > max_rows
        half = (max_rows or 0) // 2
        shown = self.rows[:half] + self.rows[len(self.rows) - half:] if cut else self.rows
        wt = max([4] + [len(r.task) for r in shown])
        w = max([len("system_a")] + [len(r.system_a) for r in shown] + [len(r.system_b) for r in shown])
        lines = [head, f"  {'task':<{wt}}  {'system_a':<{w}}  {'system_b':<{w}}  {'difference':>11}  "
                       f"{'ci_low':>10}  {'ci_high':>10}  {'pvalue':>10}  {'adjusted':>10}  sig"]
        for k, r in enumerate(shown):
            if cut and k == half:
                lines.append(f"  ... {len(self.rows) - 2 * half} more pairs ...")
            lines.append(
                f"  {r.task:<{wt}}  {r.system_a:<{w}}  {r.system_b:<{w}}  {_fmt(r.difference):>11}  "
                f"{_fmt(r.ci_low):>10}  {_fmt(r.ci_high):>10}  {r.pvalue:>10.4g}  {r.pvalue_adjusted:>10.4g}  "
                f"{'*' if r.significant else ' ':^3}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_table(max_rows=20)


# Metric values that a callable metric may leave undefined (NaN): None in JSON, NaN again on reading.
_METRIC_FIELDS = ("metric", "metric_a", "metric_b", "difference")


def _plain_interval(row: dict) -> dict:
    """A row (a pair, or a system with its interval) as standard JSON has it: an unbounded
    (infinite) interval end is None, an absent one (NaN: no interval) is left out, so that the
    two stay apart; an undefined (NaN) metric value is None."""
    for end in ("ci_low", "ci_high"):
        if end in row and math.isnan(row[end]):
            del row[end]
        elif end in row and math.isinf(row[end]):
            row[end] = None
    for name in _METRIC_FIELDS:
        if isinstance(row.get(name), float) and math.isnan(row[name]):
            row[name] = None
    if "log_pvalue" in row and not math.isfinite(row["log_pvalue"]):
        row["log_pvalue"] = None  # p = 0 (-inf), or none recorded (NaN)
    return row


def _float_interval(row: Mapping, confidence_level: Optional[float]) -> dict:
    """Back from :func:`_plain_interval`: a missing end is NaN; None is an unbounded end (NaN
    in files written without intervals, or by versions that wrote NaN ends as None too)."""
    out = dict(row)
    for end, unbounded in (("ci_low", -math.inf), ("ci_high", math.inf)):
        if end not in out:
            out[end] = math.nan
        elif out[end] is None:
            out[end] = math.nan if confidence_level is None else unbounded
    for name in _METRIC_FIELDS:
        if name in out and out[name] is None:
            out[name] = math.nan
    if "pvalue" in out and out.get("log_pvalue") is None:
        # Written before rows kept it, or p = 0: the log of the p-value is what there is.
        out["log_pvalue"] = math.log(out["pvalue"]) if out["pvalue"] > 0 else -math.inf
    return out


def _system_entries(names: tuple, values: tuple, intervals: tuple) -> list:
    """The systems of a result as JSON has them: name, metric and its interval, if any."""
    return [_plain_interval({"name": n, "metric": v, **({"ci_low": iv[0], "ci_high": iv[1]} if iv else {})})
            for n, v, iv in zip(names, values, intervals or [()] * len(names))]


def _read_system_entries(systems: list, confidence_level: Optional[float]) -> tuple[tuple, tuple, tuple]:
    """(names, metric values, intervals) back from :func:`_system_entries`; the intervals are
    there when the result has a level (or, in older files, when the entries hold them)."""
    with_intervals = confidence_level is not None or any("ci_low" in s for s in systems)
    read = [_float_interval(s, confidence_level) for s in systems]
    return (tuple(s["name"] for s in read), tuple(s["metric"] for s in read),
            tuple((s["ci_low"], s["ci_high"]) for s in read) if with_intervals and read else ())


def _fmt(v: Any) -> str:
    return str(v) if isinstance(v, numbers.Integral) else f"{v:.4g}"


# ---------------------------------------------------------------- input


def is_several_tasks(scores: Any, metric: Any, columns: Any) -> bool:
    """Whether `scores` holds several tasks: a long table (a DataFrame with the task, item,
    system and score columns, or with `columns`), or a mapping with a mapping among its values,
    or with a DataFrame of several columns among them unless `metric` reads per-system
    DataFrames of statistics by column (F1, precision, recall, BLEU)."""
    if _systems._is_dataframe(scores):
        if columns is not None:
            return True
        return set(LONG_COLUMNS) <= {str(c) for c in scores.columns}
    if not isinstance(scores, Mapping) or not scores:
        return False
    if any(isinstance(v, Mapping) for v in scores.values()):
        return True
    # Metrics that read a per-system DataFrame's statistics by column name.
    per_system_frames = metric_named(metric) is not None and bool(METRICS[metric].columns)
    return not per_system_frames and any(_systems._is_dataframe(v) and len(v.columns) > 1 for v in scores.values())


def _long_columns(columns: Any) -> tuple[str, str, str, tuple]:
    names = dict(zip(LONG_COLUMNS, LONG_COLUMNS))
    if columns is not None:
        if not isinstance(columns, Mapping):
            raise ValueError(f"{_FUNC}: columns must be a mapping such as {{'task': ..., 'item': ..., 'system': ..., "
                             f"'score': ...}}; got {type(columns).__name__}")
        unknown = sorted(map(str, set(columns) - set(LONG_COLUMNS)))
        if unknown:
            raise ValueError(f"{_FUNC}: columns has unknown key(s) {', '.join(map(repr, unknown))}; the keys are "
                             f"{', '.join(map(repr, LONG_COLUMNS))}")
        names.update(columns)
    score = names["score"]
    scores = (score,) if isinstance(score, str) else tuple(score)
    return names["task"], names["item"], names["system"], scores


def long_table_tasks(frame: Any, columns: Any) -> tuple[dict, dict]:
    """{task: {system: per-item scores aligned by item}} from a long table with one row per
    (task, item, system), and {task: a DataFrame without columns indexed by its items}; items
    are sorted within each task, tasks and systems keep the order in which they first appear.
    Missing and duplicated (task, item, system) are errors."""
    task_col, item_col, system_col, score_cols = _long_columns(columns)
    have = {str(c): c for c in frame.columns}
    missing = [c for c in (task_col, item_col, system_col, *score_cols) if str(c) not in have]
    if missing:
        raise ValueError(f"{_FUNC}: the long table has no column(s) {', '.join(map(repr, missing))}; its columns are "
                         f"{list(have)} (name them with columns={{'task': ..., 'item': ..., 'system': ..., "
                         f"'score': ...}})")
    key = [have[str(task_col)], have[str(item_col)], have[str(system_col)]]
    values = [have[str(c)] for c in score_cols]
    if len(frame) == 0:
        raise ValueError(f"{_FUNC}: the long table has no rows")
    for c in key:
        bad = frame[c].isna().to_numpy()
        if bad.any():  # groupby and pivot would drop these rows without a word
            raise ValueError(f"{_FUNC}: the long table's column {str(c)!r} is empty in row {int(np.argmax(bad))} "
                             f"(index {frame.index[int(np.argmax(bad))]!r})")
    for c in values:
        bad = frame[c].isna().to_numpy()
        if bad.any():
            row = frame.iloc[int(np.argmax(bad))]
            raise ValueError(f"{_FUNC}: the long table's score column {str(c)!r} is missing for (task, item, system) = "
                             f"({row[key[0]]!r}, {row[key[1]]!r}, {row[key[2]]!r})")
    dup = frame.duplicated(subset=key, keep=False).to_numpy()
    if dup.any():
        rows = frame.loc[dup, key].drop_duplicates().head(5)
        shown = ", ".join(f"({t!r}, {i!r}, {s!r})" for t, i, s in rows.itertuples(index=False))
        raise ValueError(f"{_FUNC}: the long table has {int(dup.sum())} rows sharing a (task, item, system): {shown}")
    # Tasks and systems are named by their strings: 1 and "1" would silently overwrite each other.
    tasks = list(dict.fromkeys(frame[key[0]].tolist()))
    if len({str(t) for t in tasks}) != len(tasks):
        raise ValueError(f"{_FUNC}: task names must be unique as strings; got {tasks}")
    out: dict = {}
    items: dict = {}
    for task, sub in frame.groupby(key[0], sort=False):
        systems = list(dict.fromkeys(sub[key[2]].tolist()))
        if len({str(s) for s in systems}) != len(systems):
            raise ValueError(f"{_FUNC}: task {task!r}: system names must be unique as strings; got {systems}")
        wide = sub.pivot(index=key[1], columns=key[2], values=values)
        holes = wide.isna().to_numpy()
        if holes.any():
            r, c = np.argwhere(holes)[0]
            col = wide.columns[c]
            system = col[-1] if isinstance(col, tuple) else col
            n_missing = int(holes.reshape(len(wide), len(values), -1).any(axis=1).sum())
            raise ValueError(f"{_FUNC}: task {task!r}: system {system!r} has no score for item {wide.index[r]!r} "
                             f"({n_missing} (item, system) cells missing in this task); every system of a task "
                             "must score every item of the task")
        per_system = {}
        for s in systems:
            cols = [wide[(v, s)].to_numpy() for v in values]
            per_system[str(s)] = cols[0] if len(cols) == 1 else np.column_stack(cols)
        out[str(task)] = per_system
        items[str(task)] = wide.iloc[:, :0]
    return out, items


@dataclass
class PreparedTask:
    """One task's validated input: the systems, their arrays and the pairs to compare."""

    name: str
    metric: Any
    systems: list
    arrays: list  # per unit: the items' statistics, summed per unit when there are groups
    pairs: np.ndarray
    n_units: int
    values: tuple = ()  # each system's metric, per item
    n_items: int = 0
    # With groups, or k samples of each item: (the arrays compare() is given for each pair, the
    # groups= it is given: each item's unit number, or None for samples of items alone).
    units: Optional[tuple] = None
    # The scored items (samples) of each unit, when units hold several.
    item_counts: Optional[np.ndarray] = None

    @classmethod
    def of(cls, name: str, metric: Any, systems: list, arrays: list, pairs: np.ndarray, groups: Any,
           func: str = _FUNC, items: Any = None) -> PreparedTask:
        """The task's item-level metric values, and its arrays summed per unit with `groups`
        (labels indexed by item id are matched with `items`, a pandas object whose index holds
        the ids in the order of the arrays, as the systems are: by id, never by position) or
        over the k samples of each item of (N, k) scores."""
        values = tuple(_systems._metric_value(metric, a) for a in arrays)
        n = len(arrays[0])
        # (N, k) scores of a per-item metric hold k samples of each item; for other metrics the
        # second axis holds an item's statistics.
        k = arrays[0].shape[1] if arrays[0].ndim == 2 and is_per_item(metric) else 1
        if groups is None and k == 1:
            return cls(name, metric, systems, arrays, pairs, n, values, n)
        # Summed as compare() sums them (samples, then units), so that each pair's sums are its own.
        per_item = [a if k == 1 else sample_sums(a, f"scores of {s!r}", func) for s, a in zip(systems, arrays)]
        if groups is None:
            return cls(name, metric, systems, per_item, pairs, n, values, n * k, (arrays, None),
                       np.full(n, k, dtype=np.int64))
        if _has_index(groups):
            if items is not None and (len(groups.index) != n or len(items.index.difference(groups.index))):
                raise ValueError(f"{func}: groups is indexed by other ids than the items "
                                 f"({index_difference(items.index, groups.index, ('the scores', 'groups'))}); "
                                 "give one unit label per item id, or plain labels in the items' order")
            # Without ids of the items, only labels indexed 0..N-1 may be read by position.
            groups = align_by_index([arrays[0] if items is None else items, groups], ["the scores", "groups"], func)[1]
        units = read_groups(groups, n, func)
        sums = [unit_sums(a, units, f"scores of {s!r}", func) for s, a in zip(systems, per_item)]
        unit_of_item = np.empty(n, dtype=np.int64)
        unit_of_item[units.order] = np.repeat(np.arange(units.n_units, dtype=np.int64),
                                              np.diff(np.append(units.starts, n)))
        sizes = np.bincount(unit_of_item, minlength=units.n_units).astype(np.int64) * k
        return cls(name, metric, systems, sums, pairs, units.n_units, values, n * k, (arrays, unit_of_item), sizes)

    @cached_property
    def int_rows(self) -> Optional[np.ndarray]:
        """The systems' int64 arrays as one (K, N) matrix, stacked once for all chunks of
        pairs; None unless every system's scores are integers."""
        return np.stack(self.arrays) if all(a.dtype.kind == "i" for a in self.arrays) else None


def prepare_task(name: str, scores: Any, metric: Any, names: Any, baseline: Any, alternative: Any, correction: Any,
                 alpha: Any, n_jobs: Any, executor: Any, options: dict, groups: Any = None,
                 id_column: Any = None, items: Any = None) -> PreparedTask:
    """Read and validate one task's systems (the single-task rules, errors naming the task);
    `items` indexes the items of a long table's task (whose systems are plain arrays)."""
    with _systems.errors_naming(f"task {name!r}"):
        sys_names, arrays, _root, _jobs, ids = _systems._compare_systems_iv(
            scores, metric, names, alternative, correction, alpha, n_jobs, executor, dict(options), id_column)
        pairs = _systems._pairs(sys_names, baseline)
        return PreparedTask.of(name, metric, sys_names, arrays, pairs, groups, items=ids if items is None else items)


def _task_groups(groups: Any, tasks: list) -> dict:
    """{task: unit labels} from `groups`, a mapping over (some of) the tasks."""
    if groups is None:
        return {}
    if not isinstance(groups, Mapping):
        raise ValueError(f"{_FUNC}: with several tasks, groups must be a mapping {{task: unit labels}}; got "
                         f"{type(groups).__name__}")
    keys = {str(k): v for k, v in groups.items()}
    extra = [k for k in keys if k not in tasks]
    if extra:
        raise ValueError(f"{_FUNC}: groups names no task {', '.join(map(repr, extra))}; tasks: "
                         f"{', '.join(map(repr, tasks))}")
    return keys


def _task_metrics(metric: Any, tasks: list) -> dict:
    if isinstance(metric, Mapping):
        keys = {str(k): v for k, v in metric.items()}
        missing = [t for t in tasks if t not in keys]
        extra = [k for k in keys if k not in tasks]
        if missing or extra:
            raise ValueError(f"{_FUNC}: metric as a mapping needs one metric per task; "
                             + (f"missing for {', '.join(map(repr, missing))}" if missing else "")
                             + ("; " if missing and extra else "")
                             + (f"no task named {', '.join(map(repr, extra))}" if extra else ""))
        return {t: keys[t] for t in tasks}
    return {t: metric for t in tasks}


# ---------------------------------------------------------------- running


def _metric_id(metric: Any, task: str) -> str:
    """The metric as the cache keys it; a callable by what decides its results (callable_key)."""
    if not callable(metric):
        return str(metric)
    try:
        return f"callable:{callable_key(metric)}"
    except UnkeyableError as exc:
        raise ValueError(
            f"{_FUNC}: task {task!r}: cache= cannot key the metric {_metric_name(metric)!r}: {exc}, whose effect on "
            "the results cannot be hashed, so a cached pair could belong to another metric; read such values "
            "into plain data (numbers, strings, tuples, dicts, NumPy arrays) in a function's defaults, closure or "
            "globals, or run without cache=") from None


def _name_key(*parts: str) -> int:
    """A seed key from names (not positions): a pair keeps its seed whatever else is compared."""
    return int.from_bytes(hashlib.sha256("\0".join(parts).encode()).digest()[:7], "little")


def _shift_units(metric: Any) -> Optional[str]:
    """Which interval of shift_interval is in the metric's units (sums and means of per-item
    scores: their pair intervals invert the permutation test), or None for bootstrapped metrics."""
    if not is_per_item(metric):
        return None
    return "sum_difference" if is_summed(metric) else "mean_difference"


def _interval_alternative(metric: Any, alternative: Any) -> Alternative:
    """The side of an interval of A - B: "greater" means A is better, which is A - B < 0 for
    metrics where lower is better."""
    if prefers_lower(metric) and alternative != "two-sided":
        return "less" if alternative == "greater" else "greater"
    return alternative


def _run_chunk(task: PreparedTask, idx: list, seed_keys: list, alternative: str, options: dict, root: Optional[int],
               n_jobs: Optional[int], executor: Any, progress: Any, confidence_level: Optional[float]) -> list:
    """The pairs `idx` of one task: per pair a dict of its test result and, for sums and
    means, its permutation-inversion interval in the metric's units."""
    pairs = task.pairs[idx]
    out = _systems._run_all(task.arrays, task.systems, pairs, task.metric, alternative, options, root, n_jobs,
                            executor, progress, seed_keys=seed_keys, units=task.units)
    intervals = shift_intervals(task, pairs, alternative, confidence_level, n_jobs)
    return [{"statistic": out.statistic[k], "pvalue": float(out.pvalue[k]), "log_pvalue": float(out.log_pvalue[k]),
             "test": out.test[k], "engine": out.engine[k], "ci_low": low, "ci_high": high}
            for k, (low, high) in enumerate(intervals)]


def shift_intervals(task: PreparedTask, pairs: np.ndarray, alternative: str,
                    confidence_level: Optional[float], n_jobs: Optional[int] = None) -> list:
    """(low, high) of each pair's difference by inverting the permutation test, in the metric's
    units, for sums and means; NaN for other metrics (bootstrapped per task) and without a level."""
    units = _shift_units(task.metric)
    if confidence_level is None or units is None:
        return [(math.nan, math.nan)] * len(pairs)
    ci_alt = _interval_alternative(task.metric, alternative)
    sizes = task.item_counts
    unequal = sizes is not None and not bool(np.all(sizes == sizes[0]))
    if task.int_rows is not None and task.int_rows.shape[1] > AUTO_EXACT_MAX and not unequal:
        # Every pair in one call of the core (shift_interval's lattice or saddlepoint route).
        n = task.int_rows.shape[1]
        bounds = batch_shift_bounds(task.int_rows, pairs, confidence_level, ci_alt, n_jobs)
        if units == "sum_difference":
            bounds = bounds * n
        elif sizes is not None:
            bounds = bounds * n / task.n_items  # the units' summed difference, per item
        return [(float(low), float(high)) for low, high in bounds]
    out = []
    for i, j in pairs.tolist():
        x, y = task.arrays[i], task.arrays[j]
        if x.dtype.kind == "i" and int(np.abs(x - y).max(initial=0)) >= 2**53:
            # Subset means of such differences are not exact in float64: no interval, not a wrong one.
            out.append((math.nan, math.nan))
            continue
        d = x - y if x.dtype == y.dtype else x.astype(np.float64) - y.astype(np.float64)
        si = differences_interval(d, confidence_level, ci_alt, "auto", _FUNC, weights=sizes)
        low, high = getattr(si, units)
        out.append((float(low), float(high)))
    return out


def task_intervals(task: PreparedTask, confidence_level: float, alternative: str, bootstrap_resamples: int,
                   seed: int, shifted: Optional[list]) -> tuple[tuple, np.ndarray]:
    """Each system's bootstrap interval and each pair's difference interval: the shift
    intervals given (sums and means) or, for other metrics, from the same shared resamples."""
    units = _shift_units(task.metric)
    sys_iv, pair_ci = _bootstrap(task, confidence_level, alternative, bootstrap_resamples, seed,
                                 with_pairs=units is None)
    if pair_ci is None:
        pair_ci = np.array(shifted, dtype=np.float64).reshape(len(task.pairs), 2)
    return tuple((float(lo), float(hi)) for lo, hi in sys_iv), pair_ci


def _ratio_of_sums(sums: np.ndarray) -> np.ndarray:
    return sums[..., 0] / sums[..., 1]


def bootstrap_input(metric: Any, arrays: list, item_counts: Optional[np.ndarray] = None) -> tuple[list, Any, int]:
    """(per-system statistics, bootstrap_intervals' metric, scale): each system's bootstrapped
    metric times `scale` is the metric compare_systems reports. With units of several items
    (`item_counts`), a mean per item is the ratio of the resampled units' sums and counts."""
    if callable(metric):
        return arrays, metric, 1
    row = METRICS[metric]
    if item_counts is not None and row.per_item:
        stats = [np.column_stack([a, item_counts]) for a in arrays]
        return stats, _ratio_of_sums, int(item_counts.sum()) if row.summed else 1
    if row.per_item:
        return arrays, "mean", len(arrays[0]) if row.summed else 1
    if row.kind == "ratio":
        return arrays, row.value, 1
    return arrays, metric, 1  # macro_f1, bleu, corpus_chrf


# The unsampled bootstrap costs O(distinct values) per step of its quantile search: integer
# scores over at most this range (0/1, counts, ratings) take it; wider or real-valued scores,
# whose distinct values can be as many as the items, take the shared paired resamples.
_UNSAMPLED_MAX_RANGE = 1024


def _narrow_integers(a: np.ndarray) -> bool:
    return a.dtype.kind == "i" and len(a) > 0 and int(a.max()) - int(a.min()) <= _UNSAMPLED_MAX_RANGE


def _bootstrap(task: PreparedTask, confidence_level: float, alternative: str, n_resamples: int, seed: int,
               with_pairs: bool) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """Each system's interval and (with_pairs) each pair's difference interval, all from one
    shared set of paired resamples of the task's items; for sums and means of narrow integer
    scores (no pairs asked for), each system's interval with infinitely many resamples."""
    stats, metric, scale = bootstrap_input(task.metric, task.arrays, task.item_counts)
    if not with_pairs and task.item_counts is None and all(_narrow_integers(a) for a in task.arrays):
        # Sums and means of items: each system's resampled mean involves that system only.
        return bootstrap_mean_intervals(task.arrays, confidence_level) * scale, None
    ci_alt = _interval_alternative(task.metric, alternative)
    none = np.zeros((0, 2), dtype=np.int64)
    both = with_pairs and ci_alt == "two-sided"
    r = bootstrap_intervals(stats, metric, pairs=task.pairs if both else none, method="percentile",
                            confidence_level=confidence_level, n_resamples=n_resamples, rng=seed)
    pair_intervals = r.difference_intervals * scale if both else None
    if with_pairs and not both:
        # One-sided pair intervals from the same resamples (same seed); systems stay two-sided.
        p = bootstrap_intervals(stats, metric, pairs=task.pairs, method="percentile", alternative=ci_alt,
                                confidence_level=confidence_level, n_resamples=n_resamples, rng=seed)
        pair_intervals = p.difference_intervals * scale
    return r.intervals * scale, pair_intervals


def _options_key(task: PreparedTask, metric_id: str, alternative: str, options: dict, seed: Optional[int],
                 confidence_level: Optional[float]) -> str:
    units = _shift_units(task.metric)
    return json.dumps({
        "pairperm": __version__, "metric": metric_id, "alternative": alternative,
        "method": options.get("method", "auto"), "n_resamples": options.get("n_resamples"), "seed": seed,
        "shift_interval": units if confidence_level is not None and units else None,
        "confidence_level": confidence_level if units else None,
        "units": None if task.units is None else "samples" if task.units[1] is None else data_digest(task.units[1]),
    }, sort_keys=True)


def interval_seed(root: Optional[int], task: str) -> int:
    """The seed of a task's bootstrap intervals: from rng when given, else fixed by the task's
    name (as sacrebleu fixes its bootstrap's), so that unseeded reruns report the same intervals."""
    drawn = child_seed(root, _name_key(task))
    return drawn if drawn is not None else _name_key(task)


def interval_options(confidence_level: Any, bootstrap_resamples: Any) -> tuple[Optional[float], int]:
    """The validated level of the intervals (None: none) and the bootstrap's resamples."""
    level = check_probability(confidence_level, "confidence_level", _FUNC, optional=True)
    if not (isinstance(bootstrap_resamples, numbers.Integral) and not isinstance(bootstrap_resamples, bool)
            and int(bootstrap_resamples) >= 1):
        raise ValueError(f"{_FUNC}: bootstrap_resamples must be a positive integer; got {bootstrap_resamples!r}")
    return level, int(bootstrap_resamples)


def compare_tasks(scores: Any, metric: Any, *, baseline: Any, alternative: str, correction: Any, correction_scope: Any,
                  alpha: Any, n_jobs: Any, executor: Any, progress: Any, names: Any, confidence_level: Any,
                  bootstrap_resamples: Any, cache: Any, columns: Any, options: dict,
                  groups: Any = None, id_column: Any = None) -> MultiTaskComparison:
    """compare_systems() on several tasks (its docstring documents the arguments)."""
    if correction_scope not in SCOPES:
        raise ValueError(f"{_FUNC}: correction_scope must be one of {', '.join(map(repr, SCOPES))}; "
                         f"got {correction_scope!r}")
    level, n_boot = interval_options(confidence_level, bootstrap_resamples)
    store = as_cache(cache, _FUNC)
    options = dict(options)
    root = seed_root(options.pop("rng", None), _FUNC)
    items: dict = {}
    if _systems._is_dataframe(scores):
        scores, items = long_table_tasks(scores, columns)
    elif columns is not None:
        raise ValueError(f"{_FUNC}: columns names the columns of a long table (a pandas DataFrame); scores is a "
                         f"{type(scores).__name__}")
    task_names = [str(t) for t in scores]
    if len(set(task_names)) != len(task_names):
        raise ValueError(f"{_FUNC}: task names must be unique as strings; got {list(scores)}")
    metrics = _task_metrics(metric, task_names)
    units = _task_groups(groups, task_names)
    prepared = [prepare_task(t, v, metrics[t], names, baseline, alternative, correction, alpha, n_jobs, executor,
                             options, units.get(t), id_column, items.get(t))
                for t, v in zip(task_names, scores.values())]

    # Every metric keyed before any pair runs: a metric the cache cannot key is refused up front.
    metric_ids = [_metric_id(t.metric, t.name) if store is not None else "" for t in prepared]
    total = sum(len(t.pairs) for t in prepared)
    overall = _systems._Progress(progress, total)
    results: dict = {}  # (task index, pair index) -> finished pair
    try:
        for ti, task in enumerate(prepared):
            _run_task(ti, task, metric_ids[ti], alternative, options, root, n_jobs, executor, level, store, overall,
                      results)
    except KeyboardInterrupt as exc:
        # The pairs finished so far travel with the interrupt (and are in the cache, if any).
        exc.partial_result = _assemble(  # type: ignore[attr-defined]
            prepared, results, alternative, correction, correction_scope, alpha, baseline, level, options, root, n_boot,
            complete=False)
        raise
    finally:
        overall.close()
    return _assemble(prepared, results, alternative, correction, correction_scope, alpha, baseline, level, options,
                     root, n_boot, complete=True)


def _run_task(ti: int, task: PreparedTask, metric_id: str, alternative: str, options: dict, root: Optional[int],
              n_jobs: Any, executor: Any, level: Optional[float], store: Any, overall: Any, results: dict) -> None:
    """Fill `results` with the task's pairs: from the cache where found, computed otherwise
    (in chunks stored as they finish when there is a cache)."""
    seeds = [_name_key(task.name, task.systems[i], task.systems[j]) for i, j in task.pairs.tolist()]
    keys: list = [None] * len(task.pairs)
    todo = list(range(len(task.pairs)))
    if store is not None:
        # The items themselves: with groups, a pair's result depends on more than the unit sums.
        digests = [data_digest(a) for a in (task.arrays if task.units is None else task.units[0])]
        todo = []
        for k, (i, j) in enumerate(task.pairs.tolist()):
            seed = child_seed(root, seeds[k])
            keys[k] = pair_key(_options_key(task, metric_id, alternative, options, seed, level), digests[i], digests[j])
            hit = store.get(keys[k])
            if hit is None:
                todo.append(k)
            else:
                results[ti, k] = hit
        overall.update(len(task.pairs) - len(todo))
    step = _CACHE_CHUNK if store is not None else max(1, len(todo))
    for start in range(0, len(todo), step):
        idx = todo[start:start + step]
        done = [0]

        def tick(n_done: int, _total: int, done: list = done) -> None:
            overall.update(n_done - done[0])
            done[0] = n_done

        with _systems.errors_naming(f"task {task.name!r}"):
            chunk = _run_chunk(task, idx, [seeds[k] for k in idx], alternative, options, root, n_jobs, executor, tick,
                               level)
        for k, value in zip(idx, chunk):
            if store is not None:
                store.set(keys[k], value)
            results[ti, k] = value  # after the store: a partial result never holds a pair the cache lacks


def _assemble(prepared: list, results: dict, alternative: str, correction: Any, correction_scope: str, alpha: Any,
              baseline: Any, level: Optional[float], options: dict, root: Optional[int], bootstrap_resamples: int,
              complete: bool) -> MultiTaskComparison:
    """Rows of the finished pairs with their intervals and adjusted p-values, and the tasks' summaries.
    An incomplete result keeps the intervals its pairs carry (sums and means) and makes no
    bootstrap: after Ctrl-C nothing more is computed (those intervals are NaN)."""
    summaries = []
    per_task: list = []  # (task, pair index, finished pair, interval) for every finished pair
    for ti, task in enumerate(prepared):
        values = list(task.values)
        done = [k for k in range(len(task.pairs)) if (ti, k) in results]
        units = _shift_units(task.metric)
        system_ci: tuple = ()
        pair_ci: Optional[np.ndarray] = None
        seed: Optional[int] = None
        if level is not None:
            seed = interval_seed(root, task.name)
            if complete:
                sys_iv, pair_ci = _bootstrap(task, level, alternative, bootstrap_resamples, seed,
                                             with_pairs=units is None)
                system_ci = tuple((float(lo), float(hi)) for lo, hi in sys_iv)  # pair_ci: None for shift intervals
            else:
                system_ci = ((math.nan, math.nan),) * len(task.systems)
        summaries.append(TaskSummary(
            name=task.name, metric=_metric_name(task.metric),
            systems=tuple(task.systems), metric_values=tuple(values), system_intervals=system_ci,
            n_items=task.n_items, n_units=task.n_units,
            interval_method="" if level is None else ("shift_interval" if units else "bootstrap_percentile"),
            bootstrap_seed=seed))
        for k in done:
            r = dict(results[ti, k])
            if pair_ci is not None:
                r["ci_low"], r["ci_high"] = float(pair_ci[k, 0]), float(pair_ci[k, 1])
            elif level is None:
                r["ci_low"] = r["ci_high"] = math.nan
            per_task.append((ti, k, r, values))
    p = np.array([r["pvalue"] for _, _, r, _ in per_task], dtype=np.float64)
    adjusted = np.empty_like(p)
    if correction_scope == "family":
        adjusted[:] = _systems.multipletests(p, correction)
    else:
        owner = np.array([ti for ti, _, _, _ in per_task], dtype=np.int64)
        for ti in range(len(prepared)):
            sel = owner == ti
            adjusted[sel] = _systems.multipletests(p[sel], correction)
    rows = []
    for (ti, k, r, values), adj in zip(per_task, adjusted.tolist()):
        task = prepared[ti]
        i, j = task.pairs[k]
        va, vb = values[i], values[j]
        log_p = r.get("log_pvalue")  # absent from pairs cached before rows kept it
        if log_p is None:
            log_p = math.log(r["pvalue"]) if r["pvalue"] > 0 else -math.inf
        rows.append(TaskPair(task.name, task.systems[i], task.systems[j], va, vb, va - vb, r["ci_low"], r["ci_high"],
                             r["statistic"], r["pvalue"], float(adj), bool(adj <= alpha), r["test"], r["engine"],
                             float(log_p)))
    return MultiTaskComparison(
        tasks=tuple(summaries), rows=tuple(rows), alternative=alternative, correction=correction,
        correction_scope=correction_scope, alpha=float(alpha), baseline=None if baseline is None else str(baseline),
        confidence_level=level, method=str(options.get("method", "auto")), n_resamples=options.get("n_resamples"),
        seed=root, bootstrap_resamples=int(bootstrap_resamples), complete=complete,
    )


def _metric_name(metric: Any) -> str:
    return getattr(metric, "__name__", "callable") if callable(metric) else str(metric)
