"""Per-sample scores from OpenAI evals logs (the JSON lines ``oaieval`` records).

A log is one run of one eval by one set of completion functions. Its first line holds the run
spec (``{"spec": {"completion_fns": [...], "eval_name": ..., "run_id": ..., ...}}``); every other
line is either an event (``run_id``, ``event_id``, ``sample_id``, ``type``, ``data``,
``created_by``, ``created_at``) or the final report (``{"final_report": {...}, "run_id": ...}``),
which may come before the last events: the recorder flushes its events in batches and writes
the report when the eval returns. A sample's score is its ``match`` event's ``data.correct``
(a boolean), the event every matching eval records once per sample and from which the eval's
own ``accuracy`` is computed.

The system is the run's completion functions (joined by commas as ``--completion_fn`` takes
them) and the task the spec's ``eval_name``; the item is the sample id as written
(``<eval>.<split>.<index>``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional, Union

from ._errors import errors_naming
from ._fields import iter_jsonl
from ._files import paths_or_systems
from ._records import Evaluation, Records, assemble, pandas_or_raise
from ._tables import Source

__all__ = ["read_openai_evals"]

_FUNC = "read_openai_evals"
_EVENT_FIELDS = ("run_id", "event_id", "sample_id", "type", "data", "created_by", "created_at")

PathArg = Union[str, "os.PathLike[str]"]


def read_openai_evals(paths: Union[PathArg, list[PathArg], tuple[PathArg, ...], None], *,
                      systems: Optional[Mapping[str, PathArg]] = None) -> Evaluation:
    """Per-sample accuracy of several systems from OpenAI evals logs, aligned by sample id.

    Parameters
    ----------
    paths : path or sequence of paths
        The JSON-lines logs ``oaieval`` recorded (``--record_path``; by default
        ``/tmp/evallogs/<run_id>_<completion_fn>_<eval>.jsonl``), or folders whose ``*.jsonl``
        files are such logs. Gzip-compressed logs are read as they are. Give ``None`` (or an
        empty list) with `systems`.
    systems : mapping, optional
        ``{system: log}``: names each log's system instead of its completion functions.

    Returns
    -------
    Evaluation
        One task per ``eval_name``; each sample's score is 1 where its ``match`` event is
        correct, 0 where not (metric ``"accuracy"``).

    Raises
    ------
    ValueError
        Naming the file and line: a log that does not start with its run spec, an event of
        another run, a ``match`` event whose ``correct`` is not a boolean, a sample with two
        ``match`` events or with events but none, a log without any ``match`` event (an eval
        that scores otherwise), two logs of one eval by one system, and (from the alignment)
        a sample one system has and another lacks.
    """
    pd = pandas_or_raise(_FUNC)
    rows: list[tuple[str, str, str, int, str, int]] = []
    runs: dict[tuple[str, str], str] = {}
    for system, path in _logs(paths, systems):
        with errors_naming(_FUNC):
            task, name, scores = _read_log(path)
        name = system if system is not None else name
        if (task, name) in runs:
            raise ValueError(f"{_FUNC}: {runs[task, name]} and {path} are both runs of eval {task!r} by {name!r}; "
                             "give one log per eval and system (or name them apart with systems=)")
        runs[task, name] = path
        rows.extend((task, name, sample, correct, path, line) for sample, (correct, line) in scores.items())
    frame = pd.DataFrame(rows, columns=["task", "system", "item", "correct", "file", "line"])
    frame["correct"] = frame["correct"].astype("int64")
    return assemble(Records(frame, ("correct",), {task: "accuracy" for task, _ in runs}), func=_FUNC)


def _logs(paths: Any, systems: Optional[Mapping[str, PathArg]]) -> list[tuple[Optional[str], str]]:
    """(system name or None, file) of every log: a mapping's, or the paths' (a folder's
    ``*.jsonl`` files in name order)."""
    named = paths_or_systems(paths, systems, _FUNC)
    out: list[tuple[Optional[str], str]] = []
    for name, p in named:
        if name is not None:
            out.append((name, os.fspath(p)))
        elif os.path.isdir(p):
            found = sorted(str(f) for f in Path(p).glob("*.jsonl*") if f.name.endswith((".jsonl", ".jsonl.gz")))
            if not found:
                raise ValueError(f"{_FUNC}: {os.fspath(p)}: no *.jsonl log in this folder")
            out.extend((None, f) for f in found)
        else:
            out.append((None, os.fspath(p)))
    return out


def _read_log(path: str) -> tuple[str, str, dict[str, tuple[int, int]]]:
    """The eval's name, the run's completion functions, and {sample id: (correct, line)}."""
    source = Source(path, None)
    name = source.name
    spec: Optional[dict[str, Any]] = None
    run_id: Any = None
    scores: dict[str, tuple[int, int]] = {}
    unscored: dict[str, int] = {}  # samples with events, at the first one's line
    types: dict[str, None] = {}
    for lineno, _, record in iter_jsonl(source):
        where = f"{name}:{lineno}"
        if spec is None:
            spec, run_id = _spec(record, where)
            continue
        if "final_report" in record:
            if record.get("run_id") != run_id:
                raise ValueError(f"{where}: the final report of run {record.get('run_id')!r} in the log of run "
                                 f"{run_id!r}")
            continue
        if "spec" in record:
            raise ValueError(f"{where}: a second run spec; a log holds one run")
        sample = _event(record, run_id, where)
        types[record["type"]] = None
        if record["type"] != "match":
            unscored.setdefault(sample, lineno)
            continue
        correct = record["data"].get("correct") if isinstance(record["data"], dict) else None
        if not isinstance(correct, bool):
            raise ValueError(f"{where}: the match event of sample {sample!r} has no boolean data.correct (got "
                             f"{correct!r})")
        if sample in scores:
            raise ValueError(f"{where}: a second match event for sample {sample!r} (the first at line "
                             f"{scores[sample][1]}); a sample is scored by one match event")
        scores[sample] = (int(correct), lineno)
    if spec is None:
        raise ValueError(f"{name}: an empty log (no run spec)")
    if not scores:
        seen = ", ".join(types) if types else "none"
        raise ValueError(f"{name}: no match events (event types: {seen}); only evals that record a match per sample "
                         "can be read")
    missing = [s for s in unscored if s not in scores]
    if missing:
        raise ValueError(f"{name}:{unscored[missing[0]]}: sample {missing[0]!r} has events but no match event "
                         f"({len(missing)} such sample{'s' if len(missing) > 1 else ''})")
    return spec["eval_name"], ",".join(spec["completion_fns"]), scores


def _spec(record: dict[str, Any], where: str) -> tuple[dict[str, Any], Any]:
    spec = record.get("spec")
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: not an OpenAI evals log: its first line holds no run spec ({{\"spec\": ...}})")
    fns, name = spec.get("completion_fns"), spec.get("eval_name")
    if not isinstance(fns, list) or not fns or not all(isinstance(f, str) for f in fns):
        raise ValueError(f"{where}: the run spec's completion_fns is not a list of names: {fns!r}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: the run spec's eval_name is not a name: {name!r}")
    return spec, spec.get("run_id")


def _event(record: dict[str, Any], run_id: Any, where: str) -> str:
    """The sample id of an event line, after checking it is one of this run."""
    missing = [f for f in _EVENT_FIELDS if f not in record]
    if missing:
        raise ValueError(f"{where}: neither an event nor the final report (no {', '.join(missing)})")
    if record["run_id"] != run_id:
        raise ValueError(f"{where}: an event of run {record['run_id']!r} in the log of run {run_id!r}")
    sample = record["sample_id"]
    if not isinstance(sample, str) or not sample:
        raise ValueError(f"{where}: the sample_id {sample!r} is not a sample's id (a string)")
    if not isinstance(record["type"], str):
        raise ValueError(f"{where}: the event type {record['type']!r} is not a string")
    return sample
