"""Per-item scores by item id from evaluation logs: JSONL through pandas.read_json, CSV/TSV
through read_table (pairperm._tables) with a text id column and chosen columns, read into
scores aligned by item id."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional, TextIO, Union, overload

import numpy as np

from ._tables import EXACT_FLOAT, INT64_MAX, Source, read_table
from ._validation import align_by_index

if TYPE_CHECKING:
    from pandas import DataFrame

__all__ = ["FORMATS", "read_scores"]

_FUNC = "read_scores"
FORMATS = ("csv", "tsv", "jsonl")
_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}


# Without task_field: one DataFrame.
@overload
def read_scores(sources: Any, *, format: Optional[Literal["csv", "tsv", "jsonl"]] = ..., id_field: Optional[str] = ...,
                score_field: Optional[str] = ..., column: Optional[str] = ..., system_field: Optional[str] = ...,
                task_field: None = ..., stdin: Optional[TextIO] = ...) -> DataFrame: ...
# With task_field: a DataFrame per task, keyed by the task's name as read (a JSONL number stays one).
@overload
def read_scores(sources: Any, *, format: Optional[Literal["csv", "tsv", "jsonl"]] = ..., id_field: Optional[str] = ...,
                score_field: Optional[str] = ..., column: Optional[str] = ..., system_field: Optional[str] = ...,
                task_field: str, stdin: Optional[TextIO] = ...) -> dict[Union[str, int, float], DataFrame]: ...
@overload
def read_scores(sources: Any, *, format: Optional[Literal["csv", "tsv", "jsonl"]] = ..., id_field: Optional[str] = ...,
                score_field: Optional[str] = ..., column: Optional[str] = ..., system_field: Optional[str] = ...,
                task_field: Optional[str] = ...,
                stdin: Optional[TextIO] = ...) -> Union[DataFrame, dict[Union[str, int, float], DataFrame]]: ...
def read_scores(sources: Any, *, format: Optional[Literal["csv", "tsv", "jsonl"]] = None, id_field: Optional[str] = None,
                score_field: Optional[str] = None, column: Optional[str] = None, system_field: Optional[str] = None,
                task_field: Optional[str] = None,
                stdin: Optional[TextIO] = None) -> Union[DataFrame, dict[Union[str, int, float], DataFrame]]:
    """Per-item scores of several systems, read from evaluation logs and aligned by item id.

    Reads per-sample JSONL logs (one JSON object per line, as lm-evaluation-harness writes them:
    ``{"doc_id": 0, "acc": 1.0, ...}``) or CSV/TSV tables with a header row: one file per
    system, or one long table with a column naming the system of each row. Tables are read as
    the command line reads them (fields stripped of surrounding white space; a field quoted
    as in RFC 4180 may hold delimiters, doubled quotes and line breaks). Gzip-compressed files
    are read as they are. Needs pandas (``pip install 'pairperm[pandas]'``).

    Parameters
    ----------
    sources : str, path, sequence of them, or mapping
        ``{system: path}``; a sequence of paths (each system named after its file's stem, the
        name without ``.gz`` and the format's suffix); or one path: one long table with
        `system_field`, else one system. ``"-"`` reads standard input.
    format : {"csv", "tsv", "jsonl"}, optional
        By default from each file's suffix (``.csv``; ``.tsv``/``.tab``;
        ``.jsonl``/``.ndjson``/``.json``), also under ``.gz``.
    id_field : str
        The field (column) naming each item, e.g. ``"doc_id"``. In CSV/TSV an id is text,
        compared as written (``1`` and ``1.0`` are two ids). In JSONL a number is compared by
        its value, exactly, as JSON has one kind of number: ``1`` and ``1.0`` are one id, while
        ``2**53 + 1`` and ``2**53`` are two and a string is never a number (``"1"`` and ``1``
        are two ids). ``true``/``false``, ``NaN`` and ``Infinity`` are refused as ids (Python
        takes ``true`` for ``1``), as are lists and objects; so are they as names of systems
        and tasks.
    score_field : str
        The field holding the per-item score, e.g. ``"acc"`` (``column`` is the same, in the
        words of tables). Integers are read exactly; JSON ``true``/``false`` become 1/0.
    system_field : str, optional
        In one long table, the field naming each row's system.
    task_field : str, optional
        A field naming each row's task: then one DataFrame per task.

    Returns
    -------
    pandas.DataFrame or dict
        Indexed by item id (in the first system's order), one column per system, ready for
        :func:`pairperm.compare_systems`; with `task_field`, ``{task: DataFrame}``.

    Raises
    ------
    ValueError
        An id scored for one system and not another, an id repeated within a system, a
        missing field, an id that is no string or finite number, malformed quoting or a
        score that is not a number: naming a few of the ids, the file (and the line).
    ImportError
        Without pandas.

    Examples
    --------
    >>> import pathlib, tempfile, pairperm
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "base.jsonl").write_text('{"doc_id": 0, "acc": true}\\n{"doc_id": 1, "acc": false}\\n'
    ...                                   '{"doc_id": 2, "acc": true}\\n')
    >>> _ = (d / "tuned.jsonl").write_text('{"doc_id": 2, "acc": true}\\n{"doc_id": 0, "acc": true}\\n'
    ...                                    '{"doc_id": 1, "acc": true}\\n')
    >>> scores = pairperm.read_scores([d / "base.jsonl", d / "tuned.jsonl"], id_field="doc_id", score_field="acc")
    >>> scores.index.tolist(), scores.to_dict("list")
    ([0, 1, 2], {'base': [1, 0, 1], 'tuned': [1, 1, 1]})
    >>> pairperm.compare_systems(scores, metric="sum").metric_values
    (2, 3)
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"{_FUNC} needs pandas: pip install pandas (or pairperm's 'pandas' extra: "
                          "pip install 'pairperm[pandas]')") from None
    if column is not None and score_field is not None and column != score_field:
        raise ValueError(f"{_FUNC}: score_field={score_field!r} and column={column!r} name the same thing; give one")
    score_field = score_field if score_field is not None else column
    if id_field is None or score_field is None:
        raise ValueError(f"{_FUNC}: id_field (the field naming each item, e.g. 'doc_id') and score_field (the "
                         "field of the score, e.g. 'acc') are both needed")
    if format is not None and format not in FORMATS:
        raise ValueError(f"{_FUNC}: format must be one of {', '.join(map(repr, FORMATS))} or None; got {format!r}")
    files = _systems_files(sources, system_field)
    fields = [f for f in (id_field, system_field, task_field) if f is not None]
    # (system, file, ids, scores, tasks) for every system of every file
    parts: list[tuple[str, str, Any, Any, Any]] = []
    for system, path in files:
        fmt = format or _format_of(path)
        frame = _read_records(str(path), fmt, fields, score_field, stdin, pd)
        if system_field is None:
            parts.append((str(system), str(path), frame[id_field], frame[score_field],
                          frame[task_field] if task_field else None))
            continue
        for name, group in frame.groupby(system_field, sort=False):
            parts.append((str(name), str(path), group[id_field], group[score_field],
                          group[task_field] if task_field else None))
    if task_field is None:
        return _aligned([(s, f, ids, scores) for s, f, ids, scores, _ in parts], id_field, system_field, pd)
    tasks: dict[Any, list[tuple[str, str, Any, Any]]] = {}
    for s, f, ids, scores, task in parts:
        # Task names coded once: comparing a string column with each name costs a pass per task.
        codes, names = pd.factorize(task)
        for k, t in enumerate(names):
            mask = codes == k
            tasks.setdefault(t, []).append((s, f"{f} (task {t!r})", ids[mask], scores[mask]))
    return {t: _aligned(p, id_field, system_field, pd) for t, p in tasks.items()}


def _systems_files(sources: Any, system_field: Optional[str]) -> list[tuple[Optional[str], Any]]:
    if isinstance(sources, Mapping):
        if system_field is not None:
            raise ValueError(f"{_FUNC}: system_field names the systems of one long table; give one path, not a "
                             "mapping of systems")
        return [(str(s), p) for s, p in sources.items()]
    paths = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if not paths:
        raise ValueError(f"{_FUNC}: no files given")
    if system_field is not None:
        return [(None, p) for p in paths]
    out: list[tuple[Optional[str], Any]] = []
    seen: dict[str, Any] = {}
    for p in paths:
        stem = file_stem(p)
        if stem in seen:
            raise ValueError(f"{_FUNC}: {p} and {seen[stem]} both name a system {stem!r} (systems are named after "
                             "the file name); give a mapping {system: path}")
        seen[stem] = p
        out.append((stem, p))
    return out


def paths_or_systems(paths: Any, systems: Optional[Mapping[str, Any]], func: str) -> list[tuple[Optional[str], Any]]:
    """(system name or None, path) of every path a reader is given: `systems` ({name: path})
    or `paths` (one or a sequence), never both."""
    given = [] if paths is None else [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if systems is not None:
        if given:
            raise ValueError(f"{func}: give the files as paths or as systems={{name: file}}, not both")
        if not isinstance(systems, Mapping) or not systems:
            raise ValueError(f"{func}: systems must be a non-empty mapping {{name: file}}")
        return [(str(name), path) for name, path in systems.items()]
    if not given:
        raise ValueError(f"{func}: no files given")
    return [(None, p) for p in given]


def file_stem(path: Any) -> str:
    """A system's name from its file: the file name without ``.gz`` and the format's suffix."""
    if str(path) == "-":
        return "stdin"
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).stem


def _format_of(path: Any) -> str:
    name = str(path)
    suffix = Path(name[:-3] if name.endswith(".gz") else name).suffix.lower()
    if suffix not in _SUFFIXES:
        raise ValueError(f"{_FUNC}: {name}: cannot tell the format from the name; give format= "
                         f"({', '.join(map(repr, FORMATS))})")
    return _SUFFIXES[suffix]


def _read_records(name: str, fmt: str, text_fields: list[str], score_field: str, stdin: Optional[TextIO],
                  pd: Any) -> Any:
    """A DataFrame of the file's `text_fields` and its `score_field` (int64 or float64)."""
    if fmt != "jsonl":
        table = read_table(name, stdin=stdin, delim="\t" if fmt == "tsv" else ",",
                           what=f"fields ({score_field!r}: a number)", text_columns=tuple(text_fields),
                           usecols=(*text_fields, score_field))
        # Users get int64 scores: narrow integers would wrap in their arithmetic.
        return pd.DataFrame({c: col.astype(np.int64) if col.dtype.kind == "i" else col
                             for c, col in zip(table.header or (), table.columns)})
    source = Source(name, stdin)
    frame = None
    try:
        with source.open() as f:
            frame = pd.read_json(f, lines=True, dtype=False, precise_float=True)
    except ValueError:
        pass
    wanted = [*text_fields, score_field]
    if frame is not None and all(c in frame.columns for c in wanted) and len(frame):
        frame = frame[wanted]
        score = frame[score_field]
        if score.dtype == np.bool_:
            frame = frame.assign(**{score_field: score.astype(np.int64)})
            score = frame[score_field]
        # Fields of ids that are all integers or all strings only: one that mixes integers with
        # floats comes back as float64, rounding integer ids beyond 2^53 onto each other, and
        # one holding lists or objects is no id; the careful reader keeps or refuses each value.
        ok = not frame[text_fields].isna().to_numpy().any() and all(
            frame[f].dtype == np.int64 or pd.api.types.infer_dtype(frame[f], skipna=False) == "string"
            for f in text_fields)
        if score.dtype == np.float64:
            ok = ok and bool(np.isfinite(score).all()) and (not len(score) or float(np.abs(score).max()) < EXACT_FLOAT)
        elif score.dtype != np.int64:
            ok = False
        if ok:
            return frame
    return _read_jsonl_careful(source, text_fields, score_field, pd)


def _read_jsonl_careful(source: Source, text_fields: list[str], score_field: str, pd: Any) -> Any:
    """JSONL record by record, raising at the first bad line."""
    name = source.name
    values: dict[str, Any] = {f: [] for f in (*text_fields, score_field)}
    lines = []
    for lineno, line in source.lines(0, 1):
        if lineno == 1:
            line = line.lstrip("\ufeff")  # a byte-order mark, as the CSV reader accepts
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}:{lineno}: not a JSON object ({exc.msg}): {line.strip()[:80]!r}") from None
        if not isinstance(record, dict):
            raise ValueError(f"{name}:{lineno}: expected a JSON object per line; got {line.strip()[:80]!r}")
        for f in values:
            if f not in record:
                raise ValueError(f"{name}:{lineno}: no field {f!r} in the record (fields: {', '.join(record)})")
            if record[f] is None:
                raise ValueError(f"{name}:{lineno}: the field {f!r} is null; every record needs a value there")
        for f in text_fields:
            value = record[f]
            if isinstance(value, bool):
                # Python's True == 1: a boolean would be one id with 1 (or 0), one system with it.
                raise ValueError(f"{name}:{lineno}: the field {f!r} is {json.dumps(value)}; ids and the names of "
                                 "systems and tasks must be a string or a number, never true or false")
            if not isinstance(value, (str, int, float)):
                raise ValueError(f"{name}:{lineno}: the field {f!r} must be a string or a number; got {value!r}")
            if isinstance(value, float) and not math.isfinite(value):
                # NaN equals nothing, not even itself, and neither NaN nor Infinity is JSON (Python's
                # json reads both).
                raise ValueError(f"{name}:{lineno}: the field {f!r} is {json.dumps(value)}, not a finite number; "
                                 "ids and the names of systems and tasks must be a string or a finite number")
        score = record[score_field]
        if isinstance(score, bool):
            score = int(score)
        if not isinstance(score, (int, float)) or (isinstance(score, float) and not np.isfinite(score)):
            raise ValueError(f"{name}:{lineno}: {score_field!r} must be a finite number or true/false; got {score!r}")
        if isinstance(score, int) and abs(score) > INT64_MAX:
            raise ValueError(f"{name}:{lineno}: {score_field!r} = {score} is beyond the 64-bit integer range")
        for f in text_fields:
            values[f].append(record[f])
        values[score_field].append(score)
        lines.append(lineno)
    if not lines:
        raise ValueError(f"{name}: no records: the file is empty")
    scores = values[score_field]
    if all(isinstance(v, int) for v in scores):
        values[score_field] = np.array(scores, dtype=np.int64)
    else:
        for v, lineno in zip(scores, lines):
            if isinstance(v, int) and abs(v) >= EXACT_FLOAT:
                raise ValueError(f"{name}:{lineno}: {score_field!r} = {v} is an integer among real-valued scores, "
                                 "where it cannot be read exactly (float64 holds integers exactly only below 2**53)")
        values[score_field] = np.array(scores, dtype=np.float64)
    frame = pd.DataFrame(values)
    for f in text_fields:
        # Integers next to floats or strings stay the Python values they were written as.
        if frame[f].dtype.kind == "f" and not all(isinstance(v, float) for v in values[f]):
            frame[f] = pd.Series(values[f], dtype=object)
    return frame


def _aligned(parts: list[tuple[str, str, Any, Any]], id_field: str, system_field: Optional[str], pd: Any) -> Any:
    """One DataFrame indexed by id, a column per system, after checking every system has every id once."""
    series, labels = [], []
    seen: dict[str, str] = {}
    for system, file, ids, scores in parts:
        if system in seen:
            raise ValueError(f"{_FUNC}: {file} and {seen[system]} both hold system {system!r}")
        seen[system] = file
        label = f"system {system!r} in {file}"
        series.append(pd.Series(np.asarray(scores), index=pd.Index(np.asarray(ids), name=id_field), name=system))
        labels.append(label)
    series = align_by_index(series, labels, _FUNC)
    frame = pd.DataFrame({s.name: s.to_numpy() for s in series}, index=series[0].index)
    frame.columns.name = system_field
    return frame
