"""Reading and checking the systems of compare_systems: scores as mappings, DataFrames or long
tables, by item id; each task prepared once (its arrays, pairs, units and metric values)."""

from __future__ import annotations

import concurrent.futures as cf
import functools
import inspect
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from ._compare import compare
from ._errors import errors_naming
from ._metrics import (
    METRICS,
    check_counts,
    check_perplexity,
    check_sentence_scores,
    check_statistics_shape,
    is_per_item,
    metric_named,
    statistics_by_name,
)
from ._multipletests import SYSTEMS_CORRECTIONS
from ._sampling import monte_carlo_options, seed_root
from ._units import read_groups, sample_sums, unit_sums
from ._validation import (
    N_RESAMPLES,
    _has_index,
    align_by_index,
    apply_vectorised,
    as_int_array,
    as_real_array,
    check_alternative,
    check_n_jobs,
    check_probability,
    check_unique_labels,
    exact_int_sum,
    id_column_reason,
    index_difference,
    is_dataframe,
)

__all__ = ["LONG_COLUMNS", "PreparedTask", "is_several_tasks", "long_table_tasks", "pair_indices", "prepare_task",
           "read_task_systems"]

_FUNC = "compare_systems"


def _read_systems(scores: Any, names: Optional[Sequence], id_column: Any = None,
                  func: str = _FUNC) -> tuple[list[str], list[Any]]:
    """(names, raw per-system arrays). DataFrame columns and mapping keys are read by name; a
    mapping's pandas values are paired by their index labels, never by position."""
    if is_dataframe(scores):
        columns = list(scores.columns)
        if len(set(map(str, columns))) != len(columns):
            raise ValueError(f"{func}: DataFrame column names must be unique; got {columns}")
        by_name = {str(c): c for c in columns}
        if id_column is not None:
            ids = _lookup(by_name, id_column, "DataFrame column (id_column)", func)
            check_unique_labels(scores[ids], f"the id column {str(id_column)!r}", func)
            if names is not None and str(id_column) in map(str, names):
                raise ValueError(f"{func}: {str(id_column)!r} is the id column; it cannot also be a system in names")
            del by_name[str(ids)]
            columns = [c for c in columns if c is not ids]
        chosen = columns if names is None else [_lookup(by_name, n, "DataFrame column", func) for n in names]
        raw = [scores[c].to_numpy() for c in chosen]
        if names is None:
            _refuse_id_columns([str(c) for c in chosen], raw, func)
        return [str(c) for c in chosen], raw
    if id_column is not None:
        raise ValueError(f"{func}: id_column names a column of a DataFrame input; the systems of a mapping are "
                         "paired by their pandas index")
    if isinstance(scores, Mapping):
        keys = list(scores.keys())
        by_name = {str(k): k for k in keys}
        if len(by_name) != len(keys):
            raise ValueError(f"{func}: system names must be unique as strings; got {keys}")
        chosen = keys if names is None else [_lookup(by_name, n, "system", func) for n in names]
        labels = [f"system {str(k)!r}" for k in chosen]
        raw = align_by_index([scores[k] for k in chosen], labels, func)
        if names is None:
            _refuse_id_columns([str(k) for k in chosen], raw, func)
        return [str(k) for k in chosen], raw
    try:
        arr = np.asarray(scores)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{func}: scores could not be read as an array of shape (n_systems, N, ...): {exc}") from None
    if arr.ndim < 2:
        raise ValueError(
            f"{func}: scores must be a mapping name -> per-entry scores, a pandas DataFrame (one column per "
            f"system) or an array of shape (n_systems, N, ...); got shape {arr.shape}"
        )
    if names is None:
        names = [f"system_{i}" for i in range(arr.shape[0])]
    names = [str(n) for n in names]
    if len(names) != arr.shape[0]:
        raise ValueError(f"{func}: names has {len(names)} entries but scores has {arr.shape[0]} systems (rows)")
    return names, list(arr)


def _refuse_id_columns(sys_names: list[str], raw: list[Any], func: str = _FUNC) -> None:
    """A column of item ids compared as if it were a system gives meaningless p-values."""
    for n, r in zip(sys_names, raw):
        reason = id_column_reason(n, r)
        if reason is not None:
            raise ValueError(f"{func}: {n!r} looks like a column of item ids, not scores ({reason}); pass "
                             f"id_column={n!r} if it holds the ids of a DataFrame's rows, or names=[...] to choose "
                             "the systems to compare (which may include it)")


def _lookup(by_name: dict, n: Any, what: str, func: str = _FUNC) -> Any:
    if str(n) not in by_name:
        raise ValueError(f"{func}: no {what} named {n!r}; available: {', '.join(map(repr, by_name))}")
    return by_name[str(n)]


def metric_value(metric: Any, arr: np.ndarray) -> Union[int, float]:
    """A system's metric on the full data, from the registry's metric functions."""
    if callable(metric):
        sums = arr.astype(np.float64).sum(axis=0)[None]
        return float(apply_vectorised(metric, sums, 1, _FUNC, "metric")[0])
    row = METRICS[metric]
    if row.summed:
        return exact_int_sum(arr)
    if row.per_item:
        return float(arr.mean())
    return float(row.value(arr.sum(axis=0).astype(np.float64)))


def _validate_system(metric: Any, name: str, raw: Any, func: str = _FUNC) -> np.ndarray:
    label = f"system {name!r}"
    raw = statistics_by_name(raw, metric, label, func)
    row = metric_named(metric)
    if row is None or (row.per_item and not row.integer):
        arr = as_real_array(raw, label, func, ndim=(1, 2, 3))
        check_sentence_scores(metric, arr, label, func)
        if row is not None and arr.ndim == 3:
            raise ValueError(f"{func}: metric={metric!r} needs per-entry scores of shape (N,), or (N, k) for k samples "
                             f"of each item; {label} has shape {arr.shape}")
        if row is not None and row.kind == "rank":
            check_perplexity(arr, label, func)
        return arr
    if row.per_item:
        return as_int_array(raw, label, func, ndim=(1, 2))  # (N, k): k samples of each item
    if row.kind == "ratio":
        arr = as_int_array(raw, label, func, ndim=2, hint="counts must be non-negative integers")
        if arr.shape[1] not in (2, 3):
            raise ValueError(f"{func}: metric={metric!r} needs per-entry (tp, fp, fn) counts of shape (N, 3) "
                             f"(or (tp, errors), (N, 2)); {label} has shape {arr.shape}")
        return arr
    arr = as_int_array(raw, label, func, ndim=(2, 3), hint="pairperm.bootstrap_test takes real-valued statistics")
    check_statistics_shape(metric, arr.shape[1:], func, label)
    check_counts(arr, label, metric, func)
    return arr


@functools.cache
def _compare_options() -> frozenset:
    params = inspect.signature(compare).parameters.values()
    return frozenset(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name != "alternative")


def check_single_task_options(metric: Any, correction_scope: Any, cache: Any, columns: Any) -> None:
    """Options that only several tasks use are errors on one task, not silently dropped (the
    defaults, and no intervals, are what one task does anyway)."""
    if isinstance(metric, Mapping):
        raise ValueError(f"{_FUNC}: metric as a mapping {{task: metric}} needs several tasks ({{task: scores}} or a "
                         "long table); scores holds one task")
    if correction_scope not in ("task", "family"):
        raise ValueError(f"{_FUNC}: correction_scope must be 'task' or 'family'; got {correction_scope!r}")
    asked = {"cache": cache is not None, "columns": columns is not None}
    for name, given in asked.items():
        if given:
            raise ValueError(f"{_FUNC}: {name}= applies to several tasks ({{task: scores}} or a long table); for one "
                             f"task pass {{'task_name': scores}}")


def read_task_systems(scores: Any, metric: Any, names: Any, alternative: Any, correction: Any, alpha: Any,
                        n_jobs: Any, executor: Any, options: dict, id_column: Any = None) -> tuple:
    """Validate the arguments and every system once: (names, arrays, seed root, n_jobs, items), where
    `items` is a pandas object whose index holds the items' ids in the order of the arrays (None
    when the systems carry no ids)."""
    check_alternative(alternative, _FUNC)
    if correction not in SYSTEMS_CORRECTIONS:
        raise ValueError(f"{_FUNC}: correction must be one of {', '.join(map(repr, SYSTEMS_CORRECTIONS))}; "
                         f"got {correction!r}")
    check_probability(alpha, "alpha", _FUNC)
    jobs = check_n_jobs(n_jobs, _FUNC) or None
    if executor is not None and not isinstance(executor, cf.Executor):
        raise ValueError(f"{_FUNC}: executor must be a concurrent.futures.Executor (for dask, pass "
                         f"client.get_executor()); got {type(executor).__name__}")
    if not callable(metric) and metric not in METRICS:
        raise ValueError(f"{_FUNC}: metric must be a callable or one of {', '.join(map(repr, METRICS))}; got {metric!r}")
    # Unknown options fail here, against compare()'s own signature, not in some worker later.
    unknown = sorted(set(options) - _compare_options())
    if unknown:
        raise TypeError(f"{_FUNC}: unexpected option(s) {', '.join(map(repr, unknown))}; options are passed on "
                        f"to pairperm.compare, which takes {', '.join(map(repr, sorted(_compare_options())))}")
    root = seed_root(options.pop("rng", None), _FUNC)
    # As the sampling routes of compare() check them (whatever the data, so that an error does
    # not depend on which pairs the C++ batch takes): those pairs never reach compare()'s check.
    monte_carlo_options(options.get("n_resamples", N_RESAMPLES), None, None, _FUNC)
    sys_names, arrays, items = read_systems(scores, metric, names, id_column, _FUNC)
    return sys_names, arrays, root, jobs, items


def read_systems(scores: Any, metric: Any, names: Any, id_column: Any, func: str) -> tuple[list[str], list, Any]:
    """Every system of one task read and validated for `metric`: (names, arrays, items), where
    `items` is a pandas object whose index holds the items' ids in the order of the arrays (None
    when the systems carry no ids)."""
    sys_names, raw = _read_systems(scores, names, id_column, func)
    items = _item_ids(scores, raw, id_column)
    if len(sys_names) != len(set(sys_names)):
        raise ValueError(f"{func}: system names must be unique; got {sys_names}")
    if len(sys_names) < 2:
        raise ValueError(f"{func}: need at least 2 systems; got {len(sys_names)}")
    arrays = [_validate_system(metric, n, r, func) for n, r in zip(sys_names, raw)]
    lengths = {n: len(a) for n, a in zip(sys_names, arrays)}
    if len(set(lengths.values())) != 1:
        detail = ", ".join(f"{n!r}: {v}" for n, v in lengths.items())
        raise ValueError(f"{func}: every system must be scored on the same entries; lengths differ ({detail})")
    if len({a.shape[1:] for a in arrays}) != 1:
        detail = ", ".join(f"{n!r}: {a.shape}" for n, a in zip(sys_names, arrays))
        raise ValueError(f"{func}: every system must have the same shape of per-entry scores; got {detail}")
    if len(arrays[0]) == 0:
        raise ValueError(f"{func}: the systems have no entries")
    return sys_names, arrays, items


def _item_ids(scores: Any, raw: list, id_column: Any) -> Any:
    """A pandas object indexed by the items' ids in the order the systems were read (after
    align_by_index), so that other per-item input (groups) is matched by id; None without ids."""
    if is_dataframe(scores):
        if id_column is None:
            return scores
        by_name = {str(c): c for c in scores.columns}
        return scores.set_index(by_name[str(id_column)])
    return raw[0] if raw and _has_index(raw[0]) else None


def pair_indices(sys_names: list, baseline: Any) -> np.ndarray:
    """Every unordered pair in the given order, or (system, baseline) for each other system."""
    n = len(sys_names)
    if baseline is None:
        ii, jj = np.triu_indices(n, k=1)
        return np.stack([ii, jj], axis=1).astype(np.int64)
    if str(baseline) not in sys_names:
        raise ValueError(f"{_FUNC}: baseline {baseline!r} is not one of the systems: {', '.join(map(repr, sys_names))}")
    b = sys_names.index(str(baseline))
    return np.array([(i, b) for i in range(n) if i != b], dtype=np.int64).reshape(-1, 2)


#: Default column names of a long table: one row per (task, item, system).
LONG_COLUMNS = ("task", "item", "system", "score")


def is_several_tasks(scores: Any, metric: Any, columns: Any) -> bool:
    """Whether `scores` holds several tasks: a long table (a DataFrame with the task, item,
    system and score columns, or with `columns`), or a mapping with a mapping among its values,
    or with a DataFrame of several columns among them unless `metric` reads per-system
    DataFrames of statistics by column (F1, precision, recall, BLEU)."""
    if is_dataframe(scores):
        if columns is not None:
            return True
        return set(LONG_COLUMNS) <= {str(c) for c in scores.columns}
    if not isinstance(scores, Mapping) or not scores:
        return False
    if any(isinstance(v, Mapping) for v in scores.values()):
        return True
    # Metrics that read a per-system DataFrame's statistics by column name.
    per_system_frames = metric_named(metric) is not None and bool(METRICS[metric].columns)
    return not per_system_frames and any(is_dataframe(v) and len(v.columns) > 1 for v in scores.values())


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
        values = tuple(metric_value(metric, a) for a in arrays)
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
    with errors_naming(f"task {name!r}"):
        sys_names, arrays, _root, _jobs, ids = read_task_systems(
            scores, metric, names, alternative, correction, alpha, n_jobs, executor, dict(options), id_column)
        pairs = pair_indices(sys_names, baseline)
        return PreparedTask.of(name, metric, sys_names, arrays, pairs, groups, items=ids if items is None else items)


def task_groups(groups: Any, tasks: list, func: str = _FUNC) -> dict:
    """{task: unit labels} from `groups`, a mapping over (some of) the tasks."""
    if groups is None:
        return {}
    if not isinstance(groups, Mapping):
        raise ValueError(f"{func}: with several tasks, groups must be a mapping {{task: unit labels}}; got "
                         f"{type(groups).__name__}")
    keys = {str(k): v for k, v in groups.items()}
    extra = [k for k in keys if k not in tasks]
    if extra:
        raise ValueError(f"{func}: groups names no task {', '.join(map(repr, extra))}; tasks: "
                         f"{', '.join(map(repr, tasks))}")
    return keys


def task_metrics(metric: Any, tasks: list, func: str = _FUNC) -> dict:
    if isinstance(metric, Mapping):
        keys = {str(k): v for k, v in metric.items()}
        missing = [t for t in tasks if t not in keys]
        extra = [k for k in keys if k not in tasks]
        if missing or extra:
            raise ValueError(f"{func}: metric as a mapping needs one metric per task; "
                             + (f"missing for {', '.join(map(repr, missing))}" if missing else "")
                             + ("; " if missing and extra else "")
                             + (f"no task named {', '.join(map(repr, extra))}" if extra else ""))
        return {t: keys[t] for t in tasks}
    return {t: metric for t in tasks}
