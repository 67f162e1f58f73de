"""Per-sample scores from lighteval's details files (parquet).

lighteval saves, for each model and run, one parquet file per task:
``<output_dir>/details/<model name>/<timestamp>/details_<task>_<timestamp>.parquet``, where the
model name may hold a slash (``org/model``, one more folder) and the task is its full name
(``gsm8k|5``, ``mmlu:abstract_algebra|0``). Each row is one example of the task.

Since lighteval 0.11 a row has three columns: ``doc`` (the example: ``query``, ``choices``,
``gold_index``, ..., ``id``, ``task_name``, ...), ``model_response`` (the model's input, text,
log-probabilities, ...) and ``metric`` (the example's score under each of the task's metrics,
``{"acc": 1, ...}``). The item id is ``doc.id``: the example's index in its dataset split, a
string, as lighteval sets it; a task evaluated on several splits repeats ids, which is refused
as any repeated id is. Earlier versions wrote flat rows (``example``, ``full_prompt``,
``predictions``, ..., ``metrics``) without any id: there the item is the row's position, which
is only sound when every system's file lists the examples in the same order, so the example
texts are checked to agree row by row. In both layouts the example text (``doc.query``,
``example``) of an item must be the same in every system's file: another text is another
data set (or another order) and is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

import numpy as np

from ._records import Evaluation, Records, assemble, default_metric, pandas_or_raise

__all__ = ["read_lighteval"]

_FUNC = "read_lighteval"
_PREFIX = "details_"

PathArg = Union[str, "os.PathLike[str]"]
MetricArg = Union[None, str, Mapping[str, str]]


class _Details(NamedTuple):
    """One details file: its path, system, task and run timestamp."""
    path: str
    system: str
    task: str
    timestamp: str


class _Table(NamedTuple):
    """What is read of one details file: item ids (None where the rows have none), example
    texts, and each metric's per-row values (None for a metric that holds no numbers)."""
    ids: Optional[list[str]]
    texts: list[Any]
    metrics: dict[str, Optional[np.ndarray]]
    kinds: dict[str, str]


def read_lighteval(path: Optional[PathArg] = None, *, metric: MetricArg = None,
                   systems: Optional[Mapping[str, PathArg]] = None) -> Evaluation:
    """Per-example scores of several models from lighteval's details files, aligned by example.

    Parameters
    ----------
    path : path, optional
        lighteval's output folder (the one holding ``details/``), or its ``details`` folder:
        every model in it is a system, named as lighteval names its folder (``org/model``).
    metric : str or mapping, optional
        The metric to read (a mapping: ``{task: metric}``), a key of the rows' ``metric``
        column. Needed when a task's rows hold several; by default each task's only one.
    systems : mapping, optional
        ``{system: folder}``: these systems only, named so; each a model's details folder
        (``details/org/model``) or one run's (``details/org/model/<timestamp>``). A relative
        folder is taken in `path`'s details folder when `path` is given (``{"smol":
        "HuggingFaceTB/SmolLM2-135M-Instruct"}``).

    Returns
    -------
    Evaluation
        One task per task name (as in the file names), one system per model. A task's metric
        is ``"accuracy"`` where every value is 0 or 1 (or a boolean), else ``"mean"``.

    Raises
    ------
    ValueError
        Naming the file (and the row, 1-based, where one is at fault): a task run twice for a
        model (several timestamps; choose one run with `systems`), several metrics and none
        chosen, a missing or non-numeric metric value (a corpus metric stores its inputs per
        example, not a score), an example text that differs between systems, and (from the
        alignment) a repeated id or an example one system has and another lacks.
    """
    pd = pandas_or_raise(_FUNC)
    try:
        import pyarrow.dataset as pads
    except ImportError:
        raise ImportError(f"{_FUNC} needs pyarrow: pip install 'pairperm[logs]'") from None
    files = _details_files(path, systems)
    if isinstance(metric, Mapping):
        unknown = [t for t in metric if t not in {f.task for f in files}]
        if unknown:
            raise ValueError(f"{_FUNC}: metric names no task {', '.join(map(repr, unknown))}; tasks: "
                             f"{', '.join(map(repr, dict.fromkeys(f.task for f in files)))}")
    tables = {f.path: _read_table(f.path, pads) for f in files}
    # A Records per task: one task's metric may hold 0/1 scores and another's real ones.
    records = []
    for task in dict.fromkeys(f.task for f in files):
        task_files = [f for f in files if f.task == task]
        name = _metric_of(task, task_files, tables, metric)
        _check_texts(task, task_files, tables)
        parts = []
        for f in task_files:
            table = tables[f.path]
            values = table.metrics[name]
            if values is None:
                raise ValueError(f"{_FUNC}: {f.path}: the metric {name!r} holds {table.kinds[name]} per example, not a "
                                 "score (a corpus metric's inputs); choose a per-example metric")
            n = len(values)
            ids: Any = table.ids if table.ids is not None else list(range(n))
            parts.append(pd.DataFrame({"task": task, "system": f.system, "item": ids, "score": values,
                                       "file": f.path, "line": np.arange(1, n + 1)}))
        frame = pd.concat(parts, ignore_index=True)
        records.append(Records(frame, ("score",), {task: default_metric(frame["score"].to_numpy())}))
    return assemble(records, func=_FUNC)


def _details_files(path: Optional[PathArg], systems: Optional[Mapping[str, PathArg]]) -> list[_Details]:
    """Every details file, with its system, task and timestamp; a task twice for a system is an
    error naming both runs."""
    root = _details_root(path) if path is not None else None
    found: list[_Details] = []
    if systems is not None:
        if not isinstance(systems, Mapping) or not systems:
            raise ValueError(f"{_FUNC}: systems must be a non-empty mapping {{name: folder}}")
        for name, folder in systems.items():
            where = root / folder if root is not None and not os.path.isabs(folder) else Path(folder)
            found.extend(_details(f, str(name)) for f in _parquet_files(where))
    elif root is not None:
        for f in _parquet_files(root):
            model = Path(f).parent.parent.relative_to(root).as_posix()
            if model == ".":
                raise ValueError(f"{_FUNC}: {f}: not in a model's folder (details/<model>/<timestamp>/)")
            found.append(_details(f, model))
    else:
        raise ValueError(f"{_FUNC}: give lighteval's output folder (or systems={{name: folder}})")
    seen: dict[tuple[str, str], _Details] = {}
    for d in found:
        if (d.system, d.task) in seen:
            raise ValueError(f"{_FUNC}: {seen[d.system, d.task].path} and {d.path}: task {d.task!r} of {d.system!r} was "
                             "run twice; choose one run's folder with systems={name: folder}")
        seen[d.system, d.task] = d
    return found


def _details_root(path: PathArg) -> Path:
    """The details folder of an output folder (or the details folder itself)."""
    root = Path(path)
    if (root / "details").is_dir():
        return root / "details"
    if root.name != "details" or not root.is_dir():
        raise ValueError(f"{_FUNC}: {os.fspath(path)}: neither lighteval's output folder (holding details/) nor its "
                         "details folder; give a model's folder with systems={name: folder}")
    return root


def _parquet_files(folder: PathArg) -> list[str]:
    if not os.path.isdir(folder):
        raise ValueError(f"{_FUNC}: {os.fspath(folder)}: not a folder")
    files = sorted(str(f) for f in Path(folder).rglob(f"{_PREFIX}*.parquet"))
    if not files:
        raise ValueError(f"{_FUNC}: {os.fspath(folder)}: no lighteval details file ({_PREFIX}<task>_<timestamp>.parquet)")
    return files


def _details(path: str, system: str) -> _Details:
    """The task and timestamp of a details file, from its name and its folder's (the same
    timestamp)."""
    timestamp = Path(path).parent.name
    name = Path(path).name
    suffix = f"_{timestamp}.parquet"
    if not name.endswith(suffix) or len(name) <= len(_PREFIX) + len(suffix):
        raise ValueError(f"{_FUNC}: {path}: not named as lighteval names details files ({_PREFIX}<task>_<timestamp>"
                         f".parquet, in the folder <timestamp>, here {timestamp!r})")
    return _Details(path, system, name[len(_PREFIX):-len(suffix)], timestamp)


def _read_table(path: str, pads: Any) -> _Table:
    """The ids, example texts and metric values of a details file, reading only those columns."""
    import pyarrow as pa

    try:
        data = pads.dataset(path, format="parquet")
    except Exception as exc:  # pyarrow's errors for a file that is not parquet are of several types
        raise ValueError(f"{_FUNC}: {path}: not a readable parquet file ({exc})") from None
    names = data.schema.names
    if "doc" in names and "metric" in names:
        doc = data.schema.field("doc").type
        if getattr(doc, "num_fields", 0) == 0 or doc.get_field_index("id") < 0 or doc.get_field_index("query") < 0:
            raise ValueError(f"{_FUNC}: {path}: the doc column holds no id and query")
        table = data.to_table(columns={"id": pads.field("doc", "id"), "text": pads.field("doc", "query"),
                                       "metric": pads.field("metric")})
        ids: Optional[list[str]] = _checked_ids(table.column("id").to_pylist(), path)
    elif "metrics" in names and "example" in names:  # lighteval before 0.11
        table = data.to_table(columns={"text": pads.field("example"), "metric": pads.field("metrics")})
        ids = None
    else:
        raise ValueError(f"{_FUNC}: {path}: not a lighteval details file (no doc and metric columns, nor the earlier "
                         f"example and metrics; columns: {', '.join(names)})")
    metric = table.column("metric")
    if not pa.types.is_struct(metric.type):
        raise ValueError(f"{_FUNC}: {path}: the metric column holds {metric.type}, not each metric's value (lighteval "
                         "before 0.10 wrote every column as text, which is not read)")
    if metric.type.num_fields == 0:
        raise ValueError(f"{_FUNC}: {path}: the rows hold no metric")
    metrics: dict[str, Optional[np.ndarray]] = {}
    kinds: dict[str, str] = {}
    for k in range(metric.type.num_fields):
        field = metric.type.field(k)
        column = metric.combine_chunks().field(k)
        metrics[field.name], kinds[field.name] = _metric_values(column, field.name, path, pa), str(field.type)
    return _Table(ids, table.column("text").to_pylist(), metrics, kinds)


def _checked_ids(ids: list[Any], path: str) -> list[str]:
    for row, v in enumerate(ids, 1):
        if not isinstance(v, str) or not v:
            raise ValueError(f"{_FUNC}: {path}:{row}: the doc id {v!r} is not an id (lighteval sets the example's "
                             "index as a string)")
    return ids


def _metric_values(column: Any, name: str, path: str, pa: Any) -> Optional[np.ndarray]:
    """A metric's values per row: int64 for booleans and integers, float64 for reals; None
    for a metric whose values are not numbers."""
    if not (pa.types.is_boolean(column.type) or pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        return None
    if column.null_count:
        row = int(np.flatnonzero(np.asarray(column.is_null()))[0]) + 1
        raise ValueError(f"{_FUNC}: {path}:{row}: no value of the metric {name!r}")
    values: np.ndarray = np.asarray(column.to_numpy(zero_copy_only=False))
    if values.dtype == np.bool_ or values.dtype.kind in "iu":
        return values.astype(np.int64)
    values = values.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise ValueError(f"{_FUNC}: {path}:{int(bad[0]) + 1}: the metric {name!r} is {values[bad[0]]}, not a finite "
                         "number")
    return values


def _metric_of(task: str, files: list[_Details], tables: dict[str, _Table], metric: MetricArg) -> str:
    """The metric chosen for a task, or its only one; every file of the task must hold it."""
    if metric is not None and not isinstance(metric, (str, Mapping)):
        raise ValueError(f"{_FUNC}: metric must be a metric's name or a mapping {{task: metric}}; got {metric!r}")
    chosen = metric if isinstance(metric, str) else metric.get(task) if isinstance(metric, Mapping) else None
    if chosen is None:
        names = {m: None for f in files for m in tables[f.path].metrics}
        if len(names) > 1:
            raise ValueError(f"{_FUNC}: task {task!r} has several metrics ({', '.join(map(repr, names))}); choose one "
                             "with metric=")
        chosen = next(iter(names))
    for f in files:
        if chosen not in tables[f.path].metrics:
            raise ValueError(f"{_FUNC}: {f.path}: task {task!r} has no metric {chosen!r} (it has "
                             f"{', '.join(map(repr, tables[f.path].metrics))})")
    return chosen


def _check_texts(task: str, files: list[_Details], tables: dict[str, _Table]) -> None:
    """Every system's file of a task holds the same example under the same id (or, without
    ids, in the same row)."""
    first = files[0]
    ref = tables[first.path]
    text_of = dict(zip(ref.ids, ref.texts)) if ref.ids is not None else None
    for f in files[1:]:
        table = tables[f.path]
        if (table.ids is None) != (ref.ids is None):
            raise ValueError(f"{_FUNC}: task {task!r}: {first.path} and {f.path} were written by lighteval versions "
                             "with and without example ids; their examples cannot be matched")
        if text_of is not None:
            assert table.ids is not None
            pairs = [(row, text_of[i], t) for row, (i, t) in enumerate(zip(table.ids, table.texts), 1) if i in text_of]
        else:
            if len(table.texts) != len(ref.texts):
                raise ValueError(f"{_FUNC}: task {task!r}: {f.path} has {len(table.texts)} examples, {first.path} "
                                 f"{len(ref.texts)}; without ids the examples are matched by row")
            pairs = list(zip(range(1, len(ref.texts) + 1), ref.texts, table.texts))
        for row, expected, text in pairs:
            if text != expected:
                what = "under the same id" if text_of is not None else "in the same row (files without ids are " \
                    "matched by row)"
                raise ValueError(f"{_FUNC}: {f.path}:{row}: the example text differs from {first.path}'s {what}: "
                                 f"{_short(text)} against {_short(expected)}")


def _short(text: Any, width: int = 60) -> str:
    s = repr(text)
    return s if len(s) <= width else s[:width - 3] + "..."
