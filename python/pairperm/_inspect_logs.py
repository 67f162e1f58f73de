"""Per-sample scores from inspect_ai evaluation logs, ``.eval`` and ``.json``.

An inspect_ai log is one task run by one model. A ``.json`` log is the whole ``EvalLog`` as one
JSON document (``version``, ``status``, ``eval``, ``plan``, ``results``, ``stats``, ``samples``,
...). A ``.eval`` log is a zip archive: ``header.json`` holds the same document without its
samples once the run has finished, each sample is its own entry ``samples/<id>_epoch_<n>.json``
(a sample logged again, when a run was resumed, is appended under the same name and the last
one counts), and ``_journal/`` and ``summaries.json`` hold what a running log needs; only the
header and the sample entries are read here.

Each sample (``EvalSample``) holds its ``id`` (an int or a string: kept as written), its
``epoch`` (1, 2, ... when the task ran several epochs), and ``scores``: a ``Score``
(``value``, ``answer``, ``explanation``, ``metadata``) by scorer name. A value is read as
inspect_ai's own metrics read it: ``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0, booleans and numbers as
they are, the strings yes/true and no/false (any case) 1 and 0, and a numeric string its
number; anything else is an error here (inspect_ai logs a warning and counts it 0). A score
whose value is a dict of counts (``{"tp": .., "fp": .., "fn": ..}``) gives the statistics of a
metric instead (F1 for tp/fp/fn).

Refused, naming the file and the sample: a log whose status is not ``success`` (a run that
was cancelled, failed or is still running) or that was invalidated; a sample that ended in an
error (its scores, if any, are not the model's answer: a run with ``fail_on_error=False``
finishes with ``success`` around them, so they are looked for one by one); an invalidated
sample; a sample without the chosen score, or whose score is NaN (inspect_ai's "unscored").
Messages name a sample as ``<log>:<k> (sample <id>, epoch <n>)``, `k` its position among the
log's samples (1-based: in ``samples`` of a .json log, among the sample entries of a .eval).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

from ._errors import errors_naming
from ._fields import MISSING, FieldPath, ValueMap, json_document, json_text, label
from ._files import paths_or_systems
from ._metrics import METRICS
from ._records import Evaluation, Records, Samples, assemble, pandas_or_raise

__all__ = ["read_inspect"]

_FUNC = "read_inspect"
_HEADER = "header.json"
_SAMPLES_DIR = "samples/"
# The zip method number of Zstandard, which Python's zipfile reads from 3.14 on.
_ZIP_ZSTANDARD = 93
_LOCAL_HEADER_SIZE = 30
# inspect_ai lists a folder's .json files as logs only when their names start with the time
# they were written (eval sets keep other JSON files, logs.json and eval-set.json, beside them).
_JSON_LOG_NAME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")
# The letters inspect_ai's scorers grade with, as its metrics read them.
_GRADES = {"C": 1, "P": 0.5, "I": 0, "N": 0}
_WORDS = {"yes": 1, "true": 1, "no": 0, "false": 0}

PathArg = Union[str, "os.PathLike[str]"]
Scorer = Union[None, str, Mapping[str, str]]


class _Sample(NamedTuple):
    """What is read of one sample: where it is (its position among the log's samples), its
    id and epoch, its scores by scorer name, its group label, and a digest of its input and
    target (what the id must name in every log)."""
    line: int
    id: Union[int, str]
    epoch: int
    scores: dict[str, Any]
    group: Any
    content: str


class _Log(NamedTuple):
    path: str
    task: str
    model: str
    samples: list[_Sample]


def read_inspect(paths: Union[PathArg, list[PathArg], tuple[PathArg, ...], None], *, scorer: Scorer = None,
                 samples: Samples = "columns", values: Optional[Mapping[Any, Union[int, float]]] = None,
                 systems: Optional[Mapping[str, Union[PathArg, list[PathArg]]]] = None,
                 group_field: Optional[str] = None) -> Evaluation:
    """Per-sample scores of several models from inspect_ai logs, aligned by sample id.

    Parameters
    ----------
    paths : path or sequence of paths
        ``.eval`` or ``.json`` logs, or log folders (searched as inspect_ai lists them: every
        ``.eval`` file, and the ``.json`` files whose names start with a timestamp, in
        subfolders too). ``None`` with `systems`.
    scorer : str or mapping, optional
        The scorer whose scores to read (a mapping: ``{task: scorer}``). Needed when a sample
        has several scores; by default each task's only one.
    samples : {"columns", "groups"}
        A task run for several epochs: each sample's epochs as columns (``(N, k)`` scores), or
        as rows grouped by sample.
    values : mapping, optional
        ``{value: number}`` for the scores' values, instead of inspect_ai's reading (above);
        a value it does not hold is an error.
    systems : mapping, optional
        ``{system: log or folder (or a list of them)}``: names the systems instead of the
        logs' models.
    group_field : str, optional
        A dotted path into each sample (``"metadata.passage"``) giving its exchangeable unit.

    Returns
    -------
    Evaluation
        One task per task name (the log's ``eval.task``), one system per model. A task's
        metric is ``"accuracy"`` where every value is 0 or 1, else ``"mean"``; for dict scores,
        the metric whose statistics the keys name (``"f1"`` for tp/fp/fn).
    """
    pd = pandas_or_raise(_FUNC)
    with errors_naming(_FUNC):
        group = FieldPath(group_field) if group_field is not None else None
        logs = [_read_log(path, system, group) for system, path in _log_files(paths, systems)]
        seen: dict[tuple[str, str], str] = {}
        for log in logs:
            if (log.task, log.model) in seen:
                raise ValueError(f"{seen[log.task, log.model]} and {log.path} are both logs of task {log.task!r} by "
                                 f"{log.model!r}; give one log per task and model (or name them apart with systems=)")
            seen[log.task, log.model] = log.path
        scorers = _scorers(logs, scorer)
        tasks = {task: _task_rows([log for log in logs if log.task == task], scorers[task], values)
                 for task in dict.fromkeys(log.task for log in logs)}
    # A Records per task: tasks may hold different kinds of scores (a 0/1 score, a real one, counts).
    parts = []
    for task, (columns, metric, rows) in tasks.items():
        names = ["task", "system", "item", "sample", *columns, "file", "line"]
        if group is not None:
            names.append("group")
        parts.append(Records(pd.DataFrame(rows, columns=names), columns, {task: metric}))
    return assemble(parts, samples=samples, func=_FUNC)


def _log_files(paths: Any, systems: Optional[Mapping[str, Any]]) -> list[tuple[Optional[str], str]]:
    """(system name or None, file) of every log (a system's may be several, or a folder)."""
    return [(name, f) for name, given in paths_or_systems(paths, systems, _FUNC) for f in _files(given)]


def is_log_name(name: str) -> bool:
    """Whether a file is named as inspect_ai names its logs: every ``.eval``, and the ``.json``
    logs named by the time they were written (an eval set's ``logs.json`` is its manifest)."""
    return name.endswith(".eval") or (name.endswith(".json") and _JSON_LOG_NAME.match(name) is not None)


def _files(given: Any) -> list[str]:
    out: list[str] = []
    for p in [given] if isinstance(given, (str, os.PathLike)) else list(given):
        if os.path.isdir(p):
            found = sorted(str(f) for f in Path(p).rglob("*") if is_log_name(f.name))
            if not found:
                raise ValueError(f"{os.fspath(p)}: no inspect_ai log in this folder (.eval, or .json named by the time "
                                 "it was written)")
            out.extend(found)
        else:
            out.append(os.fspath(p))
    return out


def _read_log(path: str, system: Optional[str], group: Optional[FieldPath]) -> _Log:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read file: {exc.strerror or exc}") from None
    header, raw_samples = _read_eval(data, path) if data[:4] == b"PK\x03\x04" else _read_json(data, path)
    task, model = _check_header(header, path)
    samples = [_sample(raw, path, line, group) for line, raw in raw_samples]
    return _Log(path, task, system if system is not None else model, samples)


def _read_json(data: bytes, path: str) -> tuple[Any, list[tuple[int, Any]]]:
    try:
        log = json_document(data)
    except ValueError as exc:
        raise ValueError(f"{path}: not a JSON document ({exc})") from None
    if not isinstance(log, dict):
        raise ValueError(f"{path}: not an inspect_ai log (a JSON {type(log).__name__}, not an object)")
    raw = log.get("samples")
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{path}: the log holds no samples (was it written with log_samples=False?)")
    return log, list(enumerate(raw, 1))


def _read_eval(data: bytes, path: str) -> tuple[Any, list[tuple[int, Any]]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{path}: not a readable .eval archive ({exc})") from None
    with archive:
        names = list(dict.fromkeys(archive.namelist()))  # a name written again: its last entry counts
        if _HEADER not in names:
            raise ValueError(f"{path}: no {_HEADER}: the run has not finished (it is running, or stopped before "
                             "writing its results)")
        header = _member(archive, data, _HEADER, path)
        entries = [n for n in names if n.startswith(_SAMPLES_DIR) and n.endswith(".json")]
        if not entries:
            raise ValueError(f"{path}: the log holds no samples (was it written with log_samples=False?)")
        samples = [(k, _member(archive, data, name, path)) for k, name in enumerate(entries, 1)]
    return header, samples


def _member(archive: zipfile.ZipFile, data: bytes, name: str, path: str) -> Any:
    """An entry of the archive (`data`, the whole file) as JSON, its size and CRC checked."""
    info = archive.getinfo(name)
    try:
        raw = _stored_bytes(data, info)
        if info.compress_type == zipfile.ZIP_STORED:
            content = raw
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            content = zlib.decompress(raw, -zlib.MAX_WBITS)
        elif info.compress_type == _ZIP_ZSTANDARD:
            content = _zstandard(raw, info.file_size, path)
        else:
            raise NotImplementedError(f"compression method {info.compress_type}")
        if len(content) != info.file_size or zlib.crc32(content) != info.CRC:
            raise zipfile.BadZipFile("its size or CRC differs from the archive's record")
        return json_document(content)
    except (ValueError, zipfile.BadZipFile, NotImplementedError, zlib.error) as exc:
        raise ValueError(f"{path}: {name}: unreadable ({exc})") from None


def _stored_bytes(data: bytes, info: zipfile.ZipInfo) -> bytes:
    """An entry's bytes as stored, sliced from the archive in memory: zipfile's reader seeks
    three times an entry, which costs more than inflating and parsing it."""
    local = data[info.header_offset:info.header_offset + _LOCAL_HEADER_SIZE]
    if local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"no local header at offset {info.header_offset}")
    # The local header is followed by its own copy of the name and an extra field of its own size.
    start = (info.header_offset + _LOCAL_HEADER_SIZE + int.from_bytes(local[26:28], "little")
             + int.from_bytes(local[28:30], "little"))
    return data[start:start + info.compress_size]


def _zstandard(raw: bytes, size: int, path: str) -> bytes:
    """A Zstandard-compressed entry (inspect_ai writes them so): by the zstandard package, or by
    the standard library's compression.zstd from Python 3.14."""
    try:
        import zstandard
    except ImportError:
        try:
            from compression import zstd
        except ImportError:
            raise ImportError(f"{_FUNC}: {path} is compressed with Zstandard, which needs the zstandard package "
                              "before Python 3.14: pip install zstandard") from None
        out: bytes = zstd.decompress(raw)
        return out
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
    return bytes(reader.read(size + 1))


def _check_header(header: Any, path: str) -> tuple[str, str]:
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise ValueError(f"{path}: not an inspect_ai log (no 'eval' object)")
    status = header.get("status")
    if status != "success":
        error = header.get("error")
        reason = f" ({error['message']})" if isinstance(error, dict) and isinstance(error.get("message"), str) else ""
        raise ValueError(f"{path}: the run's status is {json_text(status)}{reason}, not 'success'; only finished runs "
                         "are read")
    if header.get("invalidated"):
        raise ValueError(f"{path}: the log was invalidated")
    task, model = header["eval"].get("task"), header["eval"].get("model")
    for what, v in (("task", task), ("model", model)):
        if not isinstance(v, str) or not v:
            raise ValueError(f"{path}: eval.{what} is not a name: {json_text(v)}")
    return task, model


def _sample(raw: Any, path: str, line: int, group: Optional[FieldPath]) -> _Sample:
    where = f"{path}:{line}"
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a sample is a JSON object; got {json_text(raw)}")
    sid, epoch = raw.get("id"), raw.get("epoch")
    if isinstance(sid, bool) or not isinstance(sid, (int, str)):
        raise ValueError(f"{where}: the sample id {json_text(sid)} is neither an integer nor a string")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise ValueError(f"{where}: the epoch of sample {sid!r} is {json_text(epoch)}, not a positive integer")
    where = f"{path}:{line} (sample {sid!r}, epoch {epoch})"
    error = raw.get("error")
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else error
        raise ValueError(f"{where}: the sample ended in an error ({message}), so its scores are not of the model's "
                         "answer; retry the failed samples (inspect eval-retry) before comparing")
    if raw.get("invalidation") is not None:
        raise ValueError(f"{where}: the sample was invalidated")
    scores = raw.get("scores")
    if not isinstance(scores, dict) or not scores:
        old = " (a single 'score': a log of an old inspect_ai; `inspect log convert` writes it anew)" \
            if "score" in raw else ""
        raise ValueError(f"{where}: the sample has no scores{old}")
    label_of: Any = None
    if group is not None:
        value = group.lookup(raw)
        if value is MISSING:
            raise ValueError(f"{where}: {group.missing(raw)}")
        try:
            label_of = label(value, f"group {group.text!r}", path, line)
        except ValueError as exc:
            raise ValueError(f"{exc} (sample {sid!r}, epoch {epoch})") from None
    digest = hashlib.sha256(json.dumps([raw.get("input"), raw.get("target")], sort_keys=True).encode()).hexdigest()
    return _Sample(line, sid, epoch, scores, label_of, digest)


def _scorers(logs: list[_Log], scorer: Scorer) -> dict[str, str]:
    """Each task's scorer: the one chosen, else the one every sample holds alone."""
    if scorer is not None and not isinstance(scorer, (str, Mapping)):
        raise ValueError(f"scorer must be a scorer's name or a mapping {{task: scorer}}; got {scorer!r}")
    tasks = list(dict.fromkeys(log.task for log in logs))
    if isinstance(scorer, Mapping):
        unknown = [t for t in scorer if t not in tasks]
        if unknown:
            raise ValueError(f"scorer names no task {', '.join(map(repr, unknown))}; tasks: {', '.join(map(repr, tasks))}")
    out: dict[str, str] = {}
    for task in tasks:
        chosen = scorer if isinstance(scorer, str) else scorer.get(task) if isinstance(scorer, Mapping) else None
        if chosen is None:
            names = {name: None for log in logs if log.task == task for s in log.samples for name in s.scores}
            if len(names) > 1:
                raise ValueError(f"task {task!r}: the samples hold the scores of several scorers "
                                 f"({', '.join(map(repr, names))}); choose one with scorer=")
            chosen = next(iter(names))
        out[task] = chosen
    return out


def _task_rows(logs: list[_Log], scorer: str,
               values: Optional[Mapping[Any, Any]]) -> tuple[tuple[str, ...], str, list[tuple[Any, ...]]]:
    """One task's value columns, metric and rows (task, system, item, sample, *values, file,
    line[, group])."""
    to_number = ValueMap(values, f"scores.{scorer}.value", _FUNC) if values is not None else None
    _check_same_samples(logs)
    rows: list[tuple[Any, ...]] = []
    kind: Optional[tuple[str, ...]] = None  # the dict keys' metric columns, or ("score",)
    metric = "accuracy"
    first = ""
    for log in logs:
        for s in log.samples:
            where = f"{log.path}:{s.line} (sample {s.id!r}, epoch {s.epoch})"
            if scorer not in s.scores:
                raise ValueError(f"{where}: no score of scorer {scorer!r} (the sample has "
                                 f"{', '.join(map(repr, s.scores))})")
            score = s.scores[scorer]
            value = score.get("value") if isinstance(score, dict) else None
            if isinstance(value, dict):
                this, dict_metric = _statistics_kind(value, where)
                numbers: tuple[Union[int, float], ...] = tuple(_count(value[k], k, where) for k in this)
            else:
                this, dict_metric = ("score",), None
                numbers = (_scalar(value, to_number, log.path, s.line, where),)
            if kind is None:
                kind, first = this, where
                metric = dict_metric or metric
            elif this != kind:
                raise ValueError(f"{where}: the score holds {', '.join(this)} but that of {first} holds "
                                 f"{', '.join(kind)}; a task's scores are of one kind")
            if dict_metric is None and metric == "accuracy" and numbers[0] not in (0, 1):
                metric = "mean"
            row = (log.task, log.model, s.id, s.epoch, *numbers, log.path, s.line)
            rows.append(row if s.group is None else (*row, s.group))
    assert kind is not None
    return kind, metric, rows


def _check_same_samples(logs: list[_Log]) -> None:
    """A sample id names one input and target in every log of a task: inspect_ai numbers
    samples without ids 1, 2, ... after shuffling them, so the logs of runs shuffled apart (or
    of different datasets) hold other samples under one id."""
    seen: dict[Union[int, str], tuple[str, str]] = {}
    for log in logs:
        for s in log.samples:
            first = seen.setdefault(s.id, (s.content, f"{log.path}:{s.line}"))
            if first[0] != s.content:
                raise ValueError(f"{log.path}:{s.line}: sample {s.id!r} has another input or target than at {first[1]}; "
                                 "the logs do not hold the same samples under this id (runs shuffled with different "
                                 "seeds, or of different datasets or task arguments)")


def _statistics_kind(value: dict[str, Any], where: str) -> tuple[tuple[str, ...], str]:
    """The metric whose statistics columns a dict score's keys are, and those columns in order."""
    keys = set(value)
    for metric in METRICS.values():
        for columns in metric.columns:
            if keys == set(columns):
                return tuple(columns), metric.name
    raise ValueError(f"{where}: the score is a dict of {', '.join(map(repr, value))}, not the statistics of a metric "
                     "pairperm knows (tp, fp and fn for F1, or BLEU's or chrF's statistics)")


def _count(v: Any, key: str, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise ValueError(f"{where}: the statistic {key!r} is {json_text(v)}, not a count")
    return int(v)


def _scalar(v: Any, to_number: Optional[ValueMap], path: str, line: int, where: str) -> Union[int, float]:
    """A score's value as a number: by the caller's map, else as inspect_ai's metrics read it."""
    if isinstance(v, float) and math.isnan(v):
        raise ValueError(f"{where}: the score is NaN: the scorer left the sample unscored")
    if to_number is not None:
        try:
            return to_number(v, path, line)
        except ValueError as exc:
            raise ValueError(f"{exc} (sample {where.partition('(sample ')[2]}") from None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        if not math.isfinite(v):
            raise ValueError(f"{where}: the score is {v}, not a finite number")
        return v
    if isinstance(v, str):
        if v in _GRADES:
            return _GRADES[v]
        if v.lower() in _WORDS:
            return _WORDS[v.lower()]
        try:
            number = float(v)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return number
    raise ValueError(f"{where}: the score {json_text(v)} is no number, grade (C, P, I, N) or yes/no; give values= "
                     "to map it to a number")
