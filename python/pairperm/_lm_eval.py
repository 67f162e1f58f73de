"""lm-evaluation-harness's per-sample logs (``lm_eval --log_samples --output_path DIR``) read
into an Evaluation.

The layout, as the harness's evaluation tracker writes it: in the output folder, one directory
per model, named after the model with the characters unfit for a path (``/`` among them)
replaced by ``__`` (``EleutherAI__pythia-160m``), holding ``results_<date>.json`` and per task
``samples_<task>_<date>.jsonl``; <date> is the run's start in ISO form with ``-`` for ``:``
(``2024-12-02T10-11-12.345678``), and a task name may hold underscores (``gsm8k_cot``). Every
run writes new files, so one directory may hold several runs of a task.

A line is one document scored under one filter pipeline: ``doc_id``, ``doc``, ``target`` (as
text), ``arguments``, ``resps``, ``filtered_resps``, ``filter`` (the pipeline's name, since
lm-eval 0.4.7), ``metrics`` (the names of the metric values, since 0.4.7), ``doc_hash``,
``prompt_hash`` and ``target_hash`` (SHA-256 hex digests of the document as indented JSON, of
the first request's prompt and of the target), and each metric's value under its name
(``"acc": 1.0``). A task with several pipelines (gsm8k's ``strict-match`` and
``flexible-extract``) writes every document once per pipeline. A task's ``repeats`` (k
generations per document, for self-consistency) are the k responses inside one line's
``resps``, scored once per pipeline: the logs hold no per-repeat scores, so a document
appears once per pipeline, and a doc_id repeated under one pipeline is refused. Runs of a
model on a task (files of different dates, e.g. sampled with different seeds) can be read as
samples of each document instead (``runs="samples"``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, Optional, Union

from ._fields import MISSING, FieldPath, ValueMap, iter_jsonl, json_text, label, records_from_columns, take
from ._records import Evaluation, Samples, assemble, pandas_or_raise
from ._tables import Source
from ._validation import few

__all__ = ["read_lm_eval"]

_FUNC = "read_lm_eval"
_SAMPLES_FILE = re.compile(r"samples_(?P<task>.+)_(?P<date>\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(?:\.\d+)?)\.jsonl(?:\.gz)?\Z")
# What a line holds besides its metric values (without a "metrics" list, the other keys are metrics).
# The filter pipeline lm-eval names where a task configures none.
_UNFILTERED = "none"
_LINE_FIELDS = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                          "doc_hash", "prompt_hash", "target_hash"})
_DOC_ID, _DOC_HASH, _TARGET_HASH = FieldPath("doc_id"), FieldPath("doc_hash"), FieldPath("target_hash")

Runs = Optional[Literal["latest", "samples"]]
PathLike = Union[str, "os.PathLike[str]"]
PerTask = Union[str, Mapping[str, str], None]


class _Run(NamedTuple):
    date: tuple[str, str]  # sortable: the date to the second, then the fraction padded to microseconds
    path: Path


def read_lm_eval(path: Optional[PathLike] = None, *, metric: PerTask = None, filter: PerTask = None,
                 tasks: Union[str, Sequence[str], None] = None, systems: Optional[Mapping[str, PathLike]] = None,
                 group_field: Union[str, Sequence[str], Mapping[str, Any], None] = None, samples: Samples = "columns",
                 runs: Runs = None) -> Evaluation:
    """Per-document scores of several models from lm-evaluation-harness's ``--log_samples``
    output, aligned by ``doc_id`` within each task.

    Parameters
    ----------
    path : str or path, optional
        The output folder (``--output_path``): each directory in it that holds sample files is a
        system, named after the directory; or a folder holding sample files itself (one
        model's directory, or where ``--output_path results.json`` put them): one system.
        Sample files both in the folder and in its directories are refused as ambiguous.
    metric : str or mapping, optional
        The metric value read per line (``"acc"``, ``"exact_match"``), for every task or
        ``{task: metric}``. By default a task's lines must hold one metric (their ``metrics``
        list, or in logs older than 0.4.7 the keys beyond the fields every line has); with
        several (``acc`` and ``acc_norm``) they are listed and one must be named. The values
        must be numbers (or true/false): metrics lm-eval aggregates over the corpus write
        pairs per line (f1, bleu, word_perplexity) and are refused. A task scored 0/1 per
        document gets pairperm's "accuracy", any other "mean".
    filter : str or mapping, optional
        The filter pipeline read (``"strict-match"``), for every task or ``{task: filter}``;
        needed where a task's file holds several, which are listed. One name for every task
        leaves alone the tasks scored without filters (their lines' filter is ``"none"``,
        lm-eval's name where a task configures none); any other task must hold it.
    tasks : str or sequence of str, optional
        The tasks read; by default all, and then every system needs every task.
    systems : mapping, optional
        ``{name: model directory}``: these systems only, named so; a relative directory is
        taken in `path` when given.
    group_field : str, sequence of str or mapping, optional
        A field path into each line (``"doc.passage"``, ``"doc.article"``) giving each
        document's exchangeable unit, the same in every system; for every task, or
        ``{task: path}``.
    runs : {None, "latest", "samples"}
        Several runs (sample files of different dates) of one model on one task are refused,
        naming them, unless ``"latest"`` (the newest file) or ``"samples"`` (each run a sample
        of every document, in the order of their dates: ``(N, k)`` scores).
    samples : {"columns", "groups"}
        With ``runs="samples"``: the runs as columns, or as rows grouped by document.

    Returns
    -------
    pairperm.Evaluation
        One task per lm-eval task (as the file names write it), one system per model.

    Notes
    -----
    ``doc_hash`` and ``target_hash`` of a doc_id must agree across systems and runs: else the
    systems saw different documents or targets (another dataset revision, split or sample
    selection), which is refused naming the doc and the files. ``prompt_hash`` may differ:
    the prompt is rendered per model (its chat template, system instruction and few-shot
    format), and comparing models on the same documents under their own prompts is the point.

    Raises
    ------
    ValueError
        Naming the file (and the line): an unreadable line, a missing field, a repeated doc_id,
        several filters or metrics left to choose, several runs, hashes that disagree, a
        document scored for one system and not another.
    ImportError
        Without pandas (``pip install 'pairperm[logs]'``).

    Examples
    --------
    Two models' logs of boolq, as lm-eval writes them (the lines cut to the fields read here):

    >>> import json, pathlib, tempfile, pairperm
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> for model, acc in {"org__small": [1, 0, 0, 1], "org__large": [1, 1, 0, 1]}.items():
    ...     (out / model).mkdir()
    ...     lines = [{"doc_id": i, "filter": "none", "metrics": ["acc"], "doc_hash": f"{i:064x}",
    ...               "target_hash": "0" * 64, "acc": float(a)} for i, a in enumerate(acc)]
    ...     _ = (out / model / "samples_boolq_2024-12-02T10-11-12.345678.jsonl").write_text(
    ...         "".join(json.dumps(x) + "\\n" for x in lines))
    >>> ev = pairperm.read_lm_eval(out)
    >>> ev.systems, ev.metrics, ev.scores["boolq"]["org__large"].tolist()
    (('org__large', 'org__small'), {'boolq': 'accuracy'}, [1, 1, 0, 1])
    """
    pd = pandas_or_raise(_FUNC)
    if runs not in (None, "latest", "samples"):
        raise ValueError(f"{_FUNC}: runs must be None, 'latest' or 'samples'; got {runs!r}")
    dirs = _model_dirs(path, systems)
    found = {system: _sample_files(d) for system, d in dirs}
    wanted = _tasks(found, dirs, tasks)
    for option, what in ((metric, "metric"), (filter, "filter"), (group_field, "group_field")):
        if isinstance(option, Mapping):
            unknown = [t for t in option if t not in wanted]
            if unknown:
                raise ValueError(f"{_FUNC}: {what} names the task(s) {few(unknown)}, which are not read; tasks: "
                                 f"{few(wanted, 12)}")
        elif option is not None and not isinstance(option, str) and what != "group_field":
            raise ValueError(f"{_FUNC}: {what} must be a name or a mapping {{task: name}}; got {option!r}")
    records = []
    for task in wanted:
        path_of_group = group_field.get(task) if isinstance(group_field, Mapping) else group_field
        group = FieldPath(path_of_group) if path_of_group is not None else None
        columns = _task_columns(task, dirs, found, _for_task(metric, task), _for_task(filter, task),
                                isinstance(filter, str), group, runs)
        # A Records per task: tasks with and without groups cannot share one table.
        records.append(records_from_columns(columns, None, _FUNC, pd))
    return assemble(records, samples=samples, func=_FUNC)


def _task_columns(task: str, dirs: list[tuple[str, Path]], found: dict[str, dict[str, list[_Run]]],
                  metric: Optional[str], filter_name: Optional[str], every_task: bool, group: Optional[FieldPath],
                  runs: Runs) -> dict[str, list[Any]]:
    """The records of one task, every system's runs, as columns for records_from_columns."""
    columns: dict[str, list[Any]] = {c: [] for c in ("task", "system", "item", "score", "file", "line")}
    if runs == "samples":
        columns["sample"] = []
    if group is not None:
        columns["group"] = []
    seen: dict[Any, tuple[str, str, str, int]] = {}
    keys: dict[str, Path] = {}  # the metric read -> the first file read with it
    for system, d in dirs:
        for k, run in enumerate(_chosen_runs(found[system][task], runs, d, task)):
            part = _read_samples(run.path, task, metric, filter_name, group, every_task)
            _check_hashes(seen, part)
            keys.setdefault(part["metric"][0], run.path)
            if len(keys) > 1:
                (a, first), (b, _) = keys.items()
                raise ValueError(f"{_FUNC}: task {task!r}: {first} holds the metric {a!r}, {run.path} the metric "
                                 f"{b!r}; name the one to compare with metric={{{task!r}: ...}}")
            n = len(part["item"])
            columns["task"].extend([task] * n)
            columns["system"].extend([system] * n)
            columns["file"].extend([str(run.path)] * n)
            for c in ("item", "score", "line", *(("group",) if group is not None else ())):
                columns[c].extend(part[c])
            if runs == "samples":
                columns["sample"].extend([k] * n)
    return columns


def _for_task(option: PerTask, task: str) -> Optional[str]:
    if isinstance(option, Mapping):
        return option.get(task)
    return option


def _has_samples(d: Path) -> bool:
    return any(f.name.startswith("samples_") and f.is_file() for f in d.iterdir())


def _model_dirs(path: Optional[PathLike], systems: Optional[Mapping[str, PathLike]]) -> list[tuple[str, Path]]:
    """(system, model directory) pairs."""
    if systems is not None:
        if not isinstance(systems, Mapping) or not systems:
            raise ValueError(f"{_FUNC}: systems must map names to model directories; got {systems!r}")
        out = []
        for name, d in systems.items():
            p = Path(d)
            if path is not None and not p.is_absolute():
                p = Path(path) / p
            if not p.is_dir() or not _has_samples(p):
                raise ValueError(f"{_FUNC}: system {name!r}: {p} is no directory holding lm-eval sample files "
                                 "(samples_<task>_<date>.jsonl)")
            out.append((str(name), p))
        return out
    if path is None:
        raise ValueError(f"{_FUNC}: give path (lm-eval's output folder, or one model's directory in it) or systems")
    root = Path(path)
    if not root.is_dir():
        raise ValueError(f"{_FUNC}: {root} is no directory (lm-eval's --output_path folder, or one model's directory "
                         "in it)")
    models = [d for d in sorted(root.iterdir()) if d.is_dir() and _has_samples(d)]
    if _has_samples(root):
        if models:
            raise ValueError(f"{_FUNC}: {root} holds sample files and so do its directories {few([d.name for d in models])}"
                             "; give the output folder or one model's directory, or name the systems with systems=")
        return [(root.resolve().name, root)]
    if not models:
        raise ValueError(f"{_FUNC}: no lm-eval sample files (samples_<task>_<date>.jsonl) in {root} or its "
                         "directories; lm-eval writes them with --log_samples --output_path")
    return [(d.name, d) for d in models]


def _sample_files(d: Path) -> dict[str, list[_Run]]:
    """{task: its runs, oldest first} of one model directory."""
    runs: dict[str, list[_Run]] = {}
    for f in sorted(d.iterdir()):
        if not f.name.startswith("samples_") or not f.is_file():
            continue
        m = _SAMPLES_FILE.match(f.name)
        if m is None:
            raise ValueError(f"{_FUNC}: {f}: not named as lm-eval names sample files, samples_<task>_<date>.jsonl "
                             "with the date as 2024-12-02T10-11-12.345678 (lm-eval before 0.4.3 wrote no date; rename "
                             "the file)")
        date = m["date"]
        second, _, fraction = date.partition(".")
        runs.setdefault(m["task"], []).append(_Run((second, fraction.ljust(6, "0")), f))
    for task_runs in runs.values():
        task_runs.sort()
    return runs


def _tasks(found: dict[str, dict[str, list[_Run]]], dirs: list[tuple[str, Path]],
           tasks: Union[str, Sequence[str], None]) -> list[str]:
    """The tasks read, each with sample files for every system."""
    every = sorted({t for per_system in found.values() for t in per_system})
    wanted = [tasks] if isinstance(tasks, str) else every if tasks is None else list(dict.fromkeys(tasks))
    if not wanted:
        raise ValueError(f"{_FUNC}: tasks names no task")
    for t in wanted:
        lacking = [(s, d) for s, d in dirs if t not in found[s]]
        if lacking:
            having = [s for s, _ in dirs if t in found[s]]
            hint = ("; give tasks= to read the tasks every system has" if tasks is None else
                    f"; tasks found: {few(every, 12)}")
            raise ValueError(f"{_FUNC}: no samples_{t}_<date>.jsonl in {', '.join(str(d) for _, d in lacking[:3])} "
                             f"(system(s) {few([s for s, _ in lacking])})"
                             + (f", while {few(having)} have them" if having else "") + hint)
    return wanted


def _chosen_runs(task_runs: list[_Run], runs: Runs, d: Path, task: str) -> list[_Run]:
    if len(task_runs) == 1 or runs == "samples":
        return task_runs
    if runs is None:
        raise ValueError(f"{_FUNC}: {d} holds {len(task_runs)} runs of task {task!r} "
                         f"({', '.join(r.path.name for r in task_runs)}); give runs='latest' to read the newest, or "
                         "runs='samples' to read each run as a sample of every document")
    if task_runs[-1].date == task_runs[-2].date:
        raise ValueError(f"{_FUNC}: {task_runs[-2].path} and {task_runs[-1].path} are both the latest run of task "
                         f"{task!r}; remove one")
    return task_runs[-1:]


def _metric_keys(record: dict[str, Any]) -> list[str]:
    listed = record.get("metrics")
    if isinstance(listed, list) and all(isinstance(m, str) for m in listed):
        return listed
    return [k for k in record if k not in _LINE_FIELDS]


def _read_samples(path: Path, task: str, metric: Optional[str], want: Optional[str], group: Optional[FieldPath],
                  every_task: bool) -> dict[str, list[Any]]:
    """One sample file's lines of the chosen filter: item, score, line, doc_hash, target_hash
    (and group) lists. A filter named for `every_task` leaves alone a task scored unfiltered
    only (its one pipeline "none", lm-eval's name where a task configures no filters)."""
    source = Source(str(path), None)
    name = source.name
    # filter name (None where lines name none) -> its columns, and doc_id -> the line it was first on
    by_filter: dict[Optional[str], dict[str, list[Any]]] = {}
    first_line: dict[Optional[str], dict[Any, int]] = {}
    named_filters: Optional[bool] = None
    fields: list[FieldPath] = []
    to_score: Optional[ValueMap] = None
    for lineno, raw, record in iter_jsonl(source):
        if to_score is None:
            keys = _metric_keys(record)
            if metric is None and len(keys) != 1:
                raise ValueError(f"{name}:{lineno}: " + (f"the lines hold the metrics {few(keys, 12)}; give metric= "
                                 f"(for this task alone: metric={{{task!r}: {keys[0]!r}}})" if keys else
                                 "the line holds no metric value"))
            key = metric if metric is not None else keys[0]
            fields = [_DOC_ID, _DOC_HASH, _TARGET_HASH, FieldPath((key,)), *((group,) if group is not None else ())]
            to_score = ValueMap(None, key, _FUNC)
        filter_name = record.get("filter", MISSING)
        named = filter_name is not MISSING
        if named_filters is None:
            named_filters = named
        if named != named_filters:
            raise ValueError(f"{name}:{lineno}: the line names {'a' if named else 'no'} filter, the lines before it "
                             f"{'none' if named else 'theirs'}; every line of a file names its filter, or (written "
                             "before lm-eval 0.4.7) none does")
        if named and not isinstance(filter_name, str):
            raise ValueError(f"{name}:{lineno}: the field 'filter' is {json_text(filter_name)}, not a filter's name")
        key_filter = filter_name if named_filters else None
        if fields[3].parts[0] not in record:
            raise ValueError(f"{name}:{lineno}: no metric {fields[3].parts[0]!r} in the line; its metrics: "
                             f"{few(_metric_keys(record), 12) or 'none'}")
        doc_id, doc_hash, target_hash, value, *grouped = take(fields, record, raw, name, lineno)
        doc_id = label(doc_id, "doc_id", name, lineno)
        cols = by_filter.get(key_filter)
        if cols is None:
            cols = by_filter[key_filter] = {c: [] for c in ("item", "score", "line", "doc_hash", "target_hash", "group")}
            first_line[key_filter] = {}
        seen = first_line[key_filter]
        if doc_id in seen:
            raise ValueError(f"{name}:{lineno}: doc_id {doc_id!r} again" + (
                f" under the filter {key_filter!r} (first on line {seen[doc_id]}); lm-eval writes each document once "
                "per filter (a task's repeats are the responses inside one line)" if named_filters else
                f" (first on line {seen[doc_id]}), and the lines name no filter: lm-eval before 0.4.7 wrote a line "
                "per document and filter without naming the filter, so which filter each line scored cannot be told"))
        seen[doc_id] = lineno
        if not isinstance(doc_hash, str) or not isinstance(target_hash, str):
            what, h = ("doc_hash", doc_hash) if not isinstance(doc_hash, str) else ("target_hash", target_hash)
            raise ValueError(f"{name}:{lineno}: the {what} is {json_text(h)}, not the text of a hash")
        if isinstance(value, (list, dict)):
            raise ValueError(f"{name}:{lineno}: the metric {fields[3].parts[0]!r} is {json_text(value)}, not a number "
                             "per document: lm-eval aggregates such a metric over the corpus; name one whose values "
                             "are numbers with metric=")
        cols["item"].append(doc_id)
        cols["score"].append(to_score(value, name, lineno))
        cols["line"].append(lineno)
        cols["doc_hash"].append(doc_hash)
        cols["target_hash"].append(target_hash)
        if grouped:
            cols["group"].append(label(grouped[0], f"group {group.text!r}" if group else "group", name, lineno))
    if not by_filter:
        raise ValueError(f"{name}: no lines: the file is empty")
    filters = list(by_filter)
    if want is not None and not (every_task and filters == [_UNFILTERED]):
        if not named_filters:
            raise ValueError(f"{name}: the lines name no filter (lm-eval before 0.4.7 wrote none), so filter={want!r} "
                             "cannot pick one")
        if want not in by_filter:
            raise ValueError(f"{name}: no line under the filter {want!r}; the file's filters: {few(filters, 12)}")
        return {**by_filter[want], "file": [name], "metric": [fields[3].parts[0]]}
    if len(filters) > 1:
        raise ValueError(f"{name}: the lines are scored under {len(filters)} filters ({few(filters, 12)}); give filter= "
                         f"(for this task alone: filter={{{task!r}: {filters[0]!r}}})")
    return {**by_filter[filters[0]], "file": [name], "metric": [fields[3].parts[0]]}


def _check_hashes(seen: dict[Any, tuple[str, str, str, int]], part: dict[str, list[Any]]) -> None:
    """Every doc_id's document and target hashes agree with those first read for the task
    (`seen`: doc_id -> doc_hash, target_hash, file, line). The prompt hashes are not compared:
    each model's prompt is rendered through its own chat template, system instruction and
    few-shot format, so they differ between models evaluated on the very same documents."""
    name = part["file"][0]
    for doc_id, doc_hash, target_hash, lineno in zip(part["item"], part["doc_hash"], part["target_hash"], part["line"]):
        first = seen.get(doc_id)
        if first is None:
            seen[doc_id] = (doc_hash, target_hash, name, lineno)
        elif first[0] != doc_hash or first[1] != target_hash:
            what, field = ("document", "doc_hash") if first[0] != doc_hash else ("target", "target_hash")
            was, now = (first[0], doc_hash) if field == "doc_hash" else (first[1], target_hash)
            raise ValueError(f"{_FUNC}: {name}:{lineno}: doc_id {doc_id!r} is another {what} ({field} {now[:12]}...) "
                             f"than at {first[2]}:{first[3]} ({was[:12]}...): the systems were evaluated on different "
                             "data (another dataset revision, split or selection of documents)")
