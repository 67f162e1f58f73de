"""Scores read from evaluation logs: every format's reader parses its files into one long table
of records (task, system, item, sample, group, values, and where each row was read), and
:func:`assemble` turns it into an :class:`Evaluation` — per task, one array per system aligned
by item id — after checking that every system scored every item once. One place decides what
a missing, repeated or unreadable record is, whatever the format."""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Optional, Union

import numpy as np

from ._metrics import METRICS
from ._multitask import MultiTaskComparison
from ._ranking import RankIntervals
from ._ranks import rank_intervals
from ._systems import compare_systems

if TYPE_CHECKING:
    from pandas import DataFrame

__all__ = ["Evaluation", "Records", "assemble", "default_metric", "pandas_or_raise"]

Samples = Literal["columns", "groups"]
_SAMPLES = ("columns", "groups")


def pandas_or_raise(func: str) -> Any:
    """pandas, or an ImportError naming the extra that installs what the log readers need."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"{func} needs pandas: pip install 'pairperm[logs]'") from None
    return pd


class Records(NamedTuple):
    """A format's records before alignment: `frame` has one row per (task, system, item[,
    sample]) with columns ``task``, ``system``, ``item``, optionally ``sample`` (repeat or
    epoch of the item) and ``group`` (the exchangeable unit), the value columns `values` (one
    score, or a metric's statistics in order), and ``file``/``line`` (where the row was read,
    for error messages). `metrics` names each task's metric as compare_systems takes it."""
    frame: Any
    values: tuple[str, ...]
    metrics: Mapping[str, str]


class Evaluation:
    """Per-item scores of several systems on several tasks, read from evaluation logs.

    :meth:`compare` runs :func:`pairperm.compare_systems` on every task; :meth:`ranks` gives
    one task's rank intervals. Instances pickle, and ``a | b`` joins two readers' tasks.

    Attributes
    ----------
    scores : dict
        ``{task: {system: array}}``: per item ``(N,)``, ``(N, k)`` for *k* samples of each
        item, or ``(N, c)`` statistics of the task's metric (F1 counts, BLEU statistics).
    ids : dict
        ``{task: array}``: the item id of each row, as the logs write it; with samples read as
        groups, ``(item, sample)`` pairs.
    metrics : dict
        ``{task: metric}``, as :func:`pairperm.compare_systems` takes it.
    groups : dict
        ``{task: labels}`` for the tasks whose logs say each item's unit (a passage, or the item
        itself when its samples are rows).
    """

    def __init__(self, scores: Mapping[str, Mapping[str, np.ndarray]], ids: Mapping[str, np.ndarray],
                 metrics: Mapping[str, str], groups: Optional[Mapping[str, np.ndarray]] = None) -> None:
        self.scores: dict[str, dict[str, np.ndarray]] = {str(t): dict(s) for t, s in scores.items()}
        self.ids: dict[str, np.ndarray] = {str(t): v for t, v in ids.items()}
        self.metrics: dict[str, str] = {str(t): m for t, m in metrics.items()}
        self.groups: dict[str, np.ndarray] = {str(t): g for t, g in (groups or {}).items()}
        tasks = list(self.scores)
        for what, keys in (("ids", self.ids), ("metrics", self.metrics)):
            if list(keys) != tasks:
                raise ValueError(f"Evaluation: {what} must name the tasks of scores, in their order: {tasks}; "
                                 f"got {list(keys)}")
        extra = [t for t in self.groups if t not in self.scores]
        if extra:
            raise ValueError(f"Evaluation: groups name no task {', '.join(map(repr, extra))}")
        for t, systems in self.scores.items():
            n = len(self.ids[t])
            for s, a in systems.items():
                if len(a) != n:
                    raise ValueError(f"Evaluation: task {t!r}: system {s!r} has {len(a)} items, the ids {n}")
            if t in self.groups and len(self.groups[t]) != n:
                raise ValueError(f"Evaluation: task {t!r}: {len(self.groups[t])} groups for {n} items")

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(self.scores)

    @property
    def systems(self) -> tuple[str, ...]:
        """Every system of any task, in the order first read."""
        return tuple(dict.fromkeys(s for systems in self.scores.values() for s in systems))

    def __repr__(self) -> str:
        tasks = ", ".join(f"{t} ({len(self.ids[t])} items, {len(s)} systems, {self.metrics[t]}"
                          + (", grouped" if t in self.groups else "") + ")" for t, s in self.scores.items())
        return f"Evaluation({len(self.scores)} tasks: {tasks})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Evaluation):
            return NotImplemented
        return (self.metrics == other.metrics and _same_arrays(self.ids, other.ids)
                and _same_arrays(self.groups, other.groups)
                and self.scores.keys() == other.scores.keys()
                and all(_same_arrays(self.scores[t], other.scores[t]) for t in self.scores))

    __hash__ = None  # type: ignore[assignment]

    def __or__(self, other: Evaluation) -> Evaluation:
        if not isinstance(other, Evaluation):
            return NotImplemented
        both = [t for t in other.scores if t in self.scores]
        if both:
            raise ValueError(f"Evaluation: both hold task {', '.join(map(repr, both))}; rename one (select + "
                             "a new Evaluation) before joining them")
        return Evaluation({**self.scores, **other.scores}, {**self.ids, **other.ids},
                          {**self.metrics, **other.metrics}, {**self.groups, **other.groups})

    def select(self, tasks: Optional[Sequence[str]] = None, systems: Optional[Sequence[str]] = None) -> Evaluation:
        """The named tasks (in that order) and systems only; a name that is not there is an error."""
        task_names = list(self.scores) if tasks is None else [str(t) for t in _as_names(tasks, "tasks")]
        unknown = [t for t in task_names if t not in self.scores]
        if unknown:
            raise ValueError(f"Evaluation.select: no task {', '.join(map(repr, unknown))}; tasks: {list(self.scores)}")
        if systems is not None:
            wanted = [str(s) for s in _as_names(systems, "systems")]
            unknown = [s for s in wanted if s not in self.systems]
            if unknown:
                raise ValueError(f"Evaluation.select: no system {', '.join(map(repr, unknown))}; systems: "
                                 f"{list(self.systems)}")
        scores = {t: {s: a for s, a in self.scores[t].items() if systems is None or s in wanted} for t in task_names}
        return Evaluation(scores, {t: self.ids[t] for t in task_names}, {t: self.metrics[t] for t in task_names},
                          {t: self.groups[t] for t in task_names if t in self.groups})

    def compare(self, **options: Any) -> MultiTaskComparison:
        """:func:`pairperm.compare_systems` on every task, with each task's metric and groups;
        `options` are compare_systems's (``baseline``, ``correction``, ``rng``, ...)."""
        if "groups" in options or "metric" in options:
            raise TypeError("Evaluation.compare: the metrics and groups come from the logs; select or build "
                            "another Evaluation to change them")
        result: MultiTaskComparison = compare_systems(self.scores, self.metrics, groups=self.groups or None, **options)
        return result

    def ranks(self, task: Optional[str] = None, **options: Any) -> RankIntervals:
        """:func:`pairperm.rank_intervals` of one task's systems (the only task by default)."""
        if task is None:
            if len(self.scores) != 1:
                raise ValueError(f"Evaluation.ranks: name the task; tasks: {list(self.scores)}")
            task = next(iter(self.scores))
        if task not in self.scores:
            raise ValueError(f"Evaluation.ranks: no task {task!r}; tasks: {list(self.scores)}")
        return rank_intervals(self.scores[task], self.metrics[task], groups=self.groups.get(task), **options)

    def to_frame(self) -> DataFrame:
        """One row per (task, item, system): columns ``task``, ``item``, ``system`` and the
        scores (``score``, ``score_0`` ... per sample, or one column per statistic)."""
        pd = pandas_or_raise("Evaluation.to_frame")
        parts = []
        for t, systems in self.scores.items():
            for s, a in systems.items():
                values = a.reshape(len(a), -1)
                cols = ["score"] if a.ndim == 1 else [f"score_{j}" for j in range(values.shape[1])]
                part = pd.DataFrame(values, columns=cols)
                part.insert(0, "system", s)
                part.insert(0, "item", self.ids[t])
                part.insert(0, "task", t)
                if t in self.groups:
                    part.insert(3, "group", self.groups[t])
                parts.append(part)
        return pd.concat(parts, ignore_index=True)


def _as_names(names: Any, what: str) -> list[Any]:
    if isinstance(names, str):
        return [names]
    return list(names)


def _same_arrays(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(np.shape(a[k]) == np.shape(b[k]) and bool(np.all(a[k] == b[k])) for k in a)


def default_metric(values: np.ndarray) -> str:
    """A task's metric where the logs do not name one: accuracy for scores that are all 0 or 1
    (tested exactly), else the mean."""
    return "accuracy" if bool(np.all((values == 0) | (values == 1))) else "mean"


def assemble(records: Union[Records, Iterable[Records]], *, samples: Samples = "columns",
             func: str = "assemble") -> Evaluation:
    """An Evaluation from a format's records: each task's systems aligned by item id, samples
    of an item as columns ``(N, k)`` (every item needs the same samples; one sample is none) or
    as rows grouped by item. Missing, repeated or unreadable ids and scores are errors naming
    the file and line. Several Records (tasks whose value columns differ, or with and without
    groups) are assembled each and their tasks joined in order."""
    if isinstance(records, Records):
        return _assemble_one(records, samples, func)
    many: list[Records] = list(records)
    if not many:
        raise ValueError(f"{func}: no records to read")
    return functools.reduce(operator.or_, [_assemble_one(r, samples, func) for r in many])


def _assemble_one(records: Records, samples: Samples, func: str) -> Evaluation:
    pd = pandas_or_raise(func)
    if samples not in _SAMPLES:
        raise ValueError(f"{func}: samples must be 'columns' or 'groups'; got {samples!r}")
    frame, values = records.frame, tuple(records.values)
    needed = ["task", "system", "item", *values, "file", "line"]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"{func}: the records lack the column(s) {', '.join(map(repr, missing))}")
    if not len(frame):
        raise ValueError(f"{func}: no records to read")
    for c in ("task", "system", "item", "sample", "group"):
        if c in frame.columns:
            _check_labels(frame, c, func, pd)
    scores: dict[str, dict[str, np.ndarray]] = {}
    ids: dict[str, np.ndarray] = {}
    groups: dict[str, np.ndarray] = {}
    metrics: dict[str, str] = {}
    task_codes, task_names = pd.factorize(frame["task"], sort=False)
    for ti, task in enumerate(task_names):
        rows = np.flatnonzero(task_codes == ti)
        name = str(task)
        if name not in records.metrics:
            raise ValueError(f"{func}: no metric for task {name!r}")
        metrics[name] = records.metrics[name]
        sub = frame.iloc[rows]
        if "sample" in sub.columns and sub["sample"].nunique(dropna=False) == 1:
            sub = sub.drop(columns="sample")  # one sample of every item: no sample axis
        if len(values) > 1 and "sample" in sub.columns and samples == "columns":
            raise ValueError(f"{func}: task {name!r}: statistics ({', '.join(values)}) of several samples per item "
                             "cannot be columns; give samples='groups'")
        # Each task's values are int64 when its own are integers, whatever the other tasks hold.
        metric = METRICS.get(metrics[name])
        integer = metric is not None and (metric.integer or metric.counts)
        scores[name], ids[name], group = _task(sub, _values(sub, values, integer, func), name, samples, func, pd)
        if group is not None:
            groups[name] = group
    return Evaluation(scores, ids, metrics, groups)


def _where(frame: Any, row: int) -> str:
    """file:line, or the file and a place in it (e.g. a JSON path) where a reader gives text."""
    line = frame["line"].iat[row]
    return f"{frame['file'].iat[row]}:{line}" if isinstance(line, (int, np.integer)) else f"{frame['file'].iat[row]} {line}"


def _check_labels(frame: Any, column: str, func: str, pd: Any) -> None:
    """Ids, names, samples and groups must be strings or finite numbers: a boolean is one id with
    1 in Python, and NaN equals nothing, not even itself."""
    col = frame[column]
    if col.dtype.kind in "iu" or pd.api.types.infer_dtype(col, skipna=False) in ("string", "integer"):
        return
    for row, v in enumerate(col.to_numpy()):
        bad = (isinstance(v, (bool, np.bool_)) or v is None
               or not isinstance(v, (str, int, float, np.integer, np.floating))
               or (isinstance(v, (float, np.floating)) and not np.isfinite(v)))
        if bad:
            raise ValueError(f"{func}: {_where(frame, row)}: the {column} {v!r} is no string or finite number")


def _values(frame: Any, values: tuple[str, ...], integer: bool, func: str) -> np.ndarray:
    """(rows, len(values)) int64 when every value column is integer (or boolean), or when the
    task's metric reads integers (accuracy, counts) and every value is a whole number below 2^53
    (a column shared with real-valued tasks is float64); else float64."""
    cols = []
    for c in values:
        col = frame[c].to_numpy()
        if col.dtype == np.bool_:
            col = col.astype(np.int64)
        if col.dtype.kind not in "iuf":
            for row, v in enumerate(col):
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
                    raise ValueError(f"{func}: {_where(frame, row)}: the score {c!r} = {v!r} is not a number")
            col = col.astype(np.float64)
        if col.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(col))
            if len(bad):
                raise ValueError(f"{func}: {_where(frame, int(bad[0]))}: the score {c!r} is {col[bad[0]]}, not a "
                                 "finite number")
        cols.append(col)
    if integer:
        for c, col in zip(values, cols):
            if col.dtype.kind == "f":
                bad = np.flatnonzero((col != np.round(col)) | (np.abs(col) >= 2.0**53))
                if len(bad):
                    raise ValueError(f"{func}: {_where(frame, int(bad[0]))}: the score {c!r} = {col[bad[0]]} is not a "
                                     "whole number, which the task's metric counts")
    if integer or all(c.dtype.kind in "iu" for c in cols):
        return np.stack([c.astype(np.int64) for c in cols], axis=1)
    return np.stack([c.astype(np.float64) for c in cols], axis=1)


def _task(frame: Any, values: np.ndarray, task: str, samples: Samples, func: str,
          pd: Any) -> tuple[dict[str, np.ndarray], np.ndarray, Optional[np.ndarray]]:
    """One task's systems aligned by item: {system: scores}, the ids and the groups."""
    item_codes, items = pd.factorize(frame["item"], sort=False)
    has_samples = "sample" in frame.columns
    if has_samples:
        sample_codes, sample_names = pd.factorize(frame["sample"], sort=True)
        n_samples = len(sample_names)
    if has_samples and samples == "groups":
        key_codes, keys = pd.factorize(pd.MultiIndex.from_arrays([frame["item"], frame["sample"]]), sort=False)
        id_of_key = np.empty(len(keys), dtype=object)
        id_of_key[:] = list(keys)
        n_keys, width = len(keys), 1
    elif has_samples:
        key_codes, n_keys, width = item_codes * n_samples + sample_codes, len(items) * n_samples, n_samples
    else:
        key_codes, n_keys, width = item_codes, len(items), 1
    system_codes, systems = pd.factorize(frame["system"], sort=False)
    where = np.full((len(systems), n_keys), -1, dtype=np.int64)
    for si, system in enumerate(systems):
        rows = np.flatnonzero(system_codes == si)
        keys_s = key_codes[rows]
        order = np.argsort(keys_s, kind="stable")
        repeated = np.flatnonzero(keys_s[order][1:] == keys_s[order][:-1])
        if len(repeated):
            first, again = int(rows[order[repeated[0]]]), int(rows[order[repeated[0] + 1]])
            raise ValueError(f"{func}: {_where(frame, again)}: system {system!r} scores {_key_text(frame, first)} of "
                             f"task {task!r} again (first at {_where(frame, first)})")
        where[si, keys_s] = rows
    absent = np.argwhere(where < 0)
    if len(absent):
        _raise_absent(frame, where, absent, systems, task, has_samples, samples, func)
    ids = id_of_key if has_samples and samples == "groups" else np.asarray(items, dtype=object)
    out: dict[str, np.ndarray] = {}
    for si, system in enumerate(systems):
        v = values[where[si]]
        if width > 1:
            v = v[:, 0].reshape(len(items), width)
        elif v.shape[1] == 1:
            v = v[:, 0]
        out[str(system)] = np.ascontiguousarray(v)
    return out, ids, _groups(frame, where, item_codes, task, has_samples and samples == "groups", width, func, pd)


def _key_text(frame: Any, row: int) -> str:
    text = f"item {_plain(frame['item'].iat[row])!r}"
    if "sample" in frame.columns:
        text += f" (sample {_plain(frame['sample'].iat[row])!r})"
    return text


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value a log wrote, for messages."""
    return value.item() if isinstance(value, np.generic) else value


def _raise_absent(frame: Any, where: np.ndarray, absent: np.ndarray, systems: Any, task: str, has_samples: bool,
                  samples: Samples, func: str) -> None:
    si, key = (int(v) for v in absent[0])
    present = np.flatnonzero(where[:, key] >= 0)
    if len(present):
        row = int(where[present[0], key])
        files = sorted({str(f) for f in frame["file"].to_numpy()[frame["system"].to_numpy() == systems[si]]})
        raise ValueError(f"{func}: task {task!r}: system {systems[si]!r} ({', '.join(files[:3])}) has no score for "
                         f"{_key_text(frame, row)}, which system {systems[present[0]]!r} scores at "
                         f"{_where(frame, row)}; every system needs a score for every item")
    # No system has this (item, sample): items hold different numbers of samples.
    raise ValueError(f"{func}: task {task!r}: the items hold different samples (an item lacks one that another "
                     "has, in every system); give samples='groups' to make each sample a row grouped by item"
                     if has_samples and samples == "columns" else f"{func}: task {task!r}: an item has no record")


def _groups(frame: Any, where: np.ndarray, item_codes: np.ndarray, task: str, samples_as_rows: bool, width: int,
            func: str, pd: Any) -> Optional[np.ndarray]:
    """Each row's unit: the group field, the same for an item in every system and sample; else
    the item itself when its samples are rows; else none."""
    first = where[0] if width == 1 else where[0].reshape(-1, width)[:, 0]
    if "group" not in frame.columns:
        if not samples_as_rows:
            return None
        return np.asarray(item_codes[first], dtype=np.int64)
    codes, labels = pd.factorize(frame["group"], sort=False)
    ref = codes[first]
    item_of_row = item_codes[first]
    per_item = np.full(int(item_codes.max()) + 1, -1, dtype=np.int64)
    per_item[item_of_row] = ref
    every = codes[where.ravel()]
    expected = per_item[item_codes[where.ravel()]]
    differ = np.flatnonzero(every != expected)
    if len(differ):
        row = int(where.ravel()[differ[0]])
        first_row = int(first[np.flatnonzero(item_of_row == item_codes[row])[0]])
        raise ValueError(f"{func}: {_where(frame, row)}: {_key_text(frame, row)} of task {task!r} is in group "
                         f"{_plain(frame['group'].iat[row])!r} there but in {_plain(frame['group'].iat[first_row])!r} at "
                         f"{_where(frame, first_row)}; an item belongs to one group")
    out: np.ndarray = np.asarray(labels, dtype=object)[ref]
    return out
