"""Per-topic scores from TREC-style retrieval evaluations.

:func:`read_trec` evaluates run files against relevance judgements with ir-measures (pytrec_eval
for the trec_eval measures), as ``trec_eval -q -c`` does: a run file has one retrieved document
a line, ``qid Q0 docno rank score tag`` (the rank is not used: trec_eval ranks by score, ties
by document id), a qrels file one judgement a line, ``qid iter docno rel``. Fields are separated
by white space; a line starting with ``#`` is a comment, as trec_eval reads it.

:func:`read_trec_eval_q` reads what ``trec_eval -q`` printed: ``measure<TAB>qid<TAB>value``
lines, a topic's lines together, then the summary lines whose qid is ``all`` (and the run's tag
as ``runid all <tag>``).

Every error names the file and the line. In the records, a topic's ``line`` is the first line
of it in the run (for a topic the run lacks, in the qrels) or in the trec_eval output.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

import numpy as np

from ._files import file_stem, paths_or_systems
from ._records import Evaluation, Records, assemble, pandas_or_raise
from ._tables import Source
from ._validation import few

__all__ = ["read_trec", "read_trec_eval_q"]

PathArg = Union[str, "os.PathLike[str]"]
Paths = Union[None, PathArg, Sequence[PathArg]]

_RUN_FIELDS = ("qid", "Q0", "docno", "rank", "score", "tag")
_QRELS_FIELDS = ("qid", "iter", "docno", "rel")
_Q_FIELDS = ("measure", "qid", "value")
_INTEGER = re.compile(r"[+-]?\d+")
# Decimal numbers only: Python's float() also takes 'nan', 'inf' and underscores.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# trec_eval prints values with %6.4f: a printed value is within half a unit of the fourth
# decimal of the one computed, and so is their mean; the summary line rounds once more.
_PRINTED_MEAN_TOLERANCE = 1e-4 + 1e-9
# trec_eval measures whose summary is the sum over topics, and those whose summary is a
# geometric mean (over values floored at 1e-5, not checked here).
_SUMMED = ("num_", "prefs_num_")
_GEOMETRIC = ("gm_",)
# ir-measures' measures that an empty ranking does not score 0: the number of relevant
# judgements and of topics.
_NOT_ZERO_WHEN_EMPTY = ("NumRel", "NumQ")


def read_trec(runs: Paths, qrels: PathArg, *, measure: Union[str, Any, Sequence[Union[str, Any]]] = "nDCG@10",
              systems: Optional[Mapping[str, PathArg]] = None) -> Evaluation:
    """Per-topic scores of several retrieval runs against relevance judgements, computed by
    ir-measures as ``trec_eval -q -c`` computes them, aligned by topic id.

    The topics are those of the qrels. A topic the qrels judge and a run does not retrieve for
    scores 0 in that run, as ``trec_eval -c`` scores it (the counts ``NumRel`` and ``NumQ``,
    which an empty ranking does not make 0, are refused for such a run); a topic a run retrieves for and the
    qrels do not judge is dropped, as trec_eval drops it (a run none of whose topics is judged
    is refused: its topic ids are likely another spelling). A document retrieved twice for a
    topic, or judged twice, is refused, as trec_eval refuses it. Needs ir-measures and pandas
    (``pip install 'pairperm[logs]'``).

    Parameters
    ----------
    runs : path or sequence of paths
        TREC run files (``qid Q0 docno rank score tag``; gzip-compressed ones are read as they
        are). Give None (or an empty list) with `systems`.
    qrels : path
        The relevance judgements (``qid iter docno rel``, rel an integer).
    measure : str, ir_measures measure, or a sequence of them
        As ir-measures parses it: ``"nDCG@10"``, ``"AP"``, ``"RR"``, ``"P@10"``,
        ``"R@1000"``, ``"AP(rel=2)"``, ... Several measures give one task each, named as
        ir-measures prints the measure.
    systems : mapping, optional
        ``{system: run file}``. Otherwise a run is named by its tag (the sixth field) when
        every line of it has the same one, else by its file name without the extension.

    Returns
    -------
    Evaluation
        One task per measure, the topics as items; the metric is ``"ndcg"`` for nDCG,
        ``"ap"`` for AP, ``"rr"`` for RR and ``"mean"`` for any other measure.

    Raises
    ------
    ValueError
        Naming the file and line: a line without its fields (6 in a run, 4 in the qrels), a
        rank or relevance that is not an integer, a score that is not a finite decimal number,
        a document ranked or judged twice for a topic, two runs of one name, and a topic both
        the run and the qrels hold for which ir-measures gives no value.
    """
    return assemble(trec_records(runs, qrels, measure=measure, systems=systems), func="read_trec")


def trec_records(runs: Paths, qrels: PathArg, *, measure: Union[str, Any, Sequence[Union[str, Any]]] = "nDCG@10",
                 systems: Optional[Mapping[str, PathArg]] = None) -> Records:
    """The records :func:`read_trec` assembles."""
    func = "read_trec"
    pd = pandas_or_raise(func)
    ir_measures = _ir_measures(func)
    measures = _parse_measures(measure, ir_measures, func)
    judged = _read_fields(str(qrels), _QRELS_FIELDS, {"rel"}, set(), func, pd)
    _refuse_repeats(judged, ("qid", "docno"), "judged", str(qrels), func)
    topics = judged.drop_duplicates("qid")
    # One evaluator for every run, and the judgements and rankings handed over as
    # {qid: {docno: value}}: ir-measures turns DataFrames into those row by row.
    evaluator = ir_measures.evaluator(measures, _nested(judged["qid"], judged["docno"],
                                                        judged["rel"].astype(np.int64).tolist()))
    rows: list[tuple[str, str, str, float, str, int]] = []
    names: dict[str, str] = {}
    for given, path in ((g, os.fspath(p)) for g, p in paths_or_systems(runs, systems, func)):
        ranked = _read_fields(path, _RUN_FIELDS, {"rank"}, {"score"}, func, pd)
        _refuse_repeats(ranked, ("qid", "docno"), "ranked", path, func)
        name = given if given is not None else _name_of(ranked["tag"], path)
        if name in names:
            raise ValueError(f"{func}: {names[name]} and {path} are both runs named {name!r}; name them apart with "
                             "systems={name: run file}")
        names[name] = path
        kept = ranked[ranked["qid"].isin(topics["qid"])]
        if not len(kept):
            raise ValueError(f"{func}: {path}: no topic of this run is in the qrels {qrels} (the run's topics: "
                             f"{few(ranked['qid'].unique())}; the qrels': {few(topics['qid'])})")
        values = {(str(m.measure), m.query_id): float(m.value)
                  for m in evaluator.iter_calc(_nested(kept["qid"], kept["docno"], kept["score"].tolist()))}
        firsts = kept.drop_duplicates("qid")
        first_line = dict(zip(firsts["qid"], firsts["line"].tolist()))
        for m in measures:
            task = str(m)
            for qid, qrels_line in zip(topics["qid"], topics["line"].tolist()):
                if qid in first_line:
                    if (task, qid) not in values:
                        raise ValueError(f"{func}: {path}:{first_line[qid]}: ir-measures gives no {task} for topic "
                                         f"{qid!r}, which the run and the qrels both hold")
                    rows.append((task, name, qid, values[task, qid], path, first_line[qid]))
                elif m.NAME in _NOT_ZERO_WHEN_EMPTY:
                    raise ValueError(f"{func}: {path}: the run has no topic {qid!r} (judged at {qrels}:{qrels_line}), "
                                     f"where trec_eval -c counts {task} of an empty ranking from the qrels, not as 0; "
                                     "give runs that retrieve for every judged topic")
                else:
                    # The run retrieved nothing for a judged topic: trec_eval -c scores it on an
                    # empty ranking, where every other measure is 0.
                    rows.append((task, name, qid, 0.0, str(qrels), qrels_line))
    frame = pd.DataFrame(rows, columns=["task", "system", "item", "score", "file", "line"])
    metrics = {str(m): _metric_of_measure(m.NAME) for m in measures}
    return Records(frame, ("score",), metrics)


def _nested(qids: Any, docnos: Any, values: list[Any]) -> dict[str, dict[str, Any]]:
    """{qid: {docno: value}}, the form ir-measures reads without converting."""
    out: dict[str, dict[str, Any]] = {}
    for q, d, v in zip(qids.tolist(), docnos.tolist(), values):
        out.setdefault(q, {})[d] = v
    return out


def read_trec_eval_q(paths: Paths, *, measure: Union[str, Sequence[str]],
                     systems: Optional[Mapping[str, PathArg]] = None) -> Evaluation:
    """Per-topic scores of several runs from ``trec_eval -q`` output, aligned by topic id.

    Each file is what ``trec_eval -q`` printed for one run (``-c`` too, so that a topic the run
    lacks is there with its 0). A value is read by its topic id, never by its line's place, and
    the ``all`` summary lines are not scores. Each summary line is checked against the topics'
    values: for a measure trec_eval averages, the mean of the topics' printed values must be
    within 1e-4 of it (both are printed rounded to 4 decimals); for the counts it sums
    (``num_ret``, ``num_rel``, ``num_rel_ret``, ...), their sum must equal it; a geometric mean
    (``gm_map``) is not checked. A file whose summary disagrees (a truncated or concatenated
    output) is refused, and so are files of different topics.

    Parameters
    ----------
    paths : path or sequence of paths
        ``trec_eval -q`` outputs, one per run. Give None (or an empty list) with `systems`.
    measure : str or sequence of str
        trec_eval's measure name as printed: ``"map"``, ``"ndcg_cut_10"``, ``"recip_rank"``,
        ``"P_10"``, ... Several give one task each.
    systems : mapping, optional
        ``{system: file}``. Otherwise a run is named by its ``runid`` line, else by its file
        name without the extension.

    Returns
    -------
    Evaluation
        One task per measure, the topics as items; the metric is ``"ndcg"`` for ``ndcg*``,
        ``"ap"`` for ``map`` and ``map_cut_*``, ``"rr"`` for ``recip_rank`` and ``"mean"``
        for the others.

    Raises
    ------
    ValueError
        Naming the file and line: a line that is not ``measure qid value``, a value that is not
        a decimal number, a topic given twice for a measure, a measure the file lacks, a
        summary line the topics' values disagree with, topics that differ between files, and
        two files of one name.
    """
    return assemble(trec_eval_q_records(paths, measure=measure, systems=systems), func="read_trec_eval_q")


def trec_eval_q_records(paths: Paths, *, measure: Union[str, Sequence[str]],
                        systems: Optional[Mapping[str, PathArg]] = None) -> Records:
    """The records :func:`read_trec_eval_q` assembles."""
    func = "read_trec_eval_q"
    pd = pandas_or_raise(func)
    wanted = [measure] if isinstance(measure, str) else list(measure)
    if not wanted or not all(isinstance(m, str) and m for m in wanted) or len(set(wanted)) < len(wanted):
        raise ValueError(f"{func}: measure must be a trec_eval measure name or several different ones; got {measure!r}")
    rows: list[tuple[str, str, str, float, str, int]] = []
    names: dict[str, str] = {}
    topics_of: dict[str, tuple[str, list[str]]] = {}
    for given, path in ((g, os.fspath(p)) for g, p in paths_or_systems(paths, systems, func)):
        printed = _read_fields(path, _Q_FIELDS, set(), set(), func, pd)
        name = given if given is not None else _runid_of(printed, path)
        if name in names:
            raise ValueError(f"{func}: {names[name]} and {path} are both runs named {name!r}; name them apart with "
                             "systems={name: file}")
        names[name] = path
        for m in wanted:
            per_topic = _per_topic(printed, m, path, func)
            topics = list(per_topic["qid"])
            if m in topics_of:
                _same_topics(topics_of[m], (path, topics), m, func)
            else:
                topics_of[m] = (path, topics)
            rows.extend((m, name, qid, value, path, line)
                        for qid, value, line in zip(per_topic["qid"], per_topic["value"], per_topic["line"]))
    frame = pd.DataFrame(rows, columns=["task", "system", "item", "score", "file", "line"])
    return Records(frame, ("score",), {m: _metric_of_trec_eval(m) for m in wanted})


def _ir_measures(func: str) -> Any:
    try:
        import ir_measures
    except ImportError:
        raise ImportError(f"{func} needs ir-measures: pip install 'pairperm[logs]'") from None
    return ir_measures


def _parse_measures(measure: Any, ir_measures: Any, func: str) -> list[Any]:
    given = [measure] if isinstance(measure, (str, ir_measures.measures.base.Measure)) else list(measure)
    if not given:
        raise ValueError(f"{func}: measure names no measure")
    measures = []
    for m in given:
        if isinstance(m, str):
            try:
                m = ir_measures.parse_measure(m)
            except (NameError, ValueError, SyntaxError) as exc:
                raise ValueError(f"{func}: ir-measures cannot read the measure {m!r}: {exc}") from None
        elif not isinstance(m, ir_measures.measures.base.Measure):
            raise ValueError(f"{func}: measure must be a measure's name (\"nDCG@10\") or an ir_measures measure; "
                             f"got {m!r}")
        measures.append(m)
    tasks = [str(m) for m in measures]
    if len(set(tasks)) < len(tasks):
        raise ValueError(f"{func}: the measures {tasks} name one measure twice")
    return measures


def _metric_of_measure(name: str) -> str:
    return {"nDCG": "ndcg", "AP": "ap", "RR": "rr"}.get(name, "mean")


def _metric_of_trec_eval(name: str) -> str:
    if name.startswith("ndcg"):
        return "ndcg"
    if name == "map" or name.startswith("map_cut"):
        return "ap"
    return "rr" if name == "recip_rank" else "mean"


def _name_of(tags: Any, path: str) -> str:
    """A run's tag when all its lines share one, else the file name without its extensions."""
    unique = tags.unique()
    return str(unique[0]) if len(unique) == 1 else file_stem(path)


def _read_fields(path: str, fields: tuple[str, ...], integers: set[str], decimals: set[str], func: str,
                 pd: Any) -> Any:
    """A DataFrame of the file's white-space separated `fields` (text; `integers` as int64 and
    `decimals` as float64) and each row's ``line``. pandas' C parser reads the file, one row per
    line; whatever it cannot read exactly (a short line, a comment, a byte-order mark, a field
    that is no number) is read again line by line, which names the first bad line."""
    source = Source(path, None)
    try:
        with source.open() as f:
            frame = pd.read_csv(f, sep=r"\s+", header=None, dtype=str, quoting=csv.QUOTE_NONE, na_filter=False,
                                skip_blank_lines=False, engine="c", encoding="utf-8")
    except ValueError:  # pandas' ParserError and EmptyDataError, and undecodable bytes
        frame = None
    if frame is not None and frame.shape[1] == len(fields):
        frame.columns = list(fields)
        frame["line"] = np.arange(1, len(frame) + 1)
        text = frame[list(fields)]
        blank = (text == "").all(axis=1)
        frame = frame[~blank.to_numpy()]
        first = frame[fields[0]]
        readable = (len(frame) > 0 and not (frame[list(fields)] == "").to_numpy().any()
                    and not (first.str.startswith("#") | first.str.startswith("\ufeff")).any()
                    and all(frame[c].str.fullmatch(_INTEGER).all() for c in integers)
                    and all(frame[c].str.fullmatch(_NUMBER).all() for c in decimals))
        if readable:
            converted = _converted(frame, integers, decimals)
            if converted is not None:
                return converted.reset_index(drop=True)
    return _read_fields_carefully(source, fields, integers, decimals, func, pd)


def _converted(frame: Any, integers: set[str], decimals: set[str]) -> Any:
    """The frame with its number columns converted, or None where one does not fit (an integer
    beyond int64, a decimal beyond float64): the careful reader says where."""
    out = frame.copy()
    try:
        for c in integers:
            out[c] = out[c].astype(np.int64)
    except (OverflowError, ValueError):
        return None
    for c in decimals:
        out[c] = out[c].astype(np.float64)
        if not np.isfinite(out[c].to_numpy()).all():
            return None
    return out


def _read_fields_carefully(source: Source, fields: tuple[str, ...], integers: set[str], decimals: set[str], func: str,
                           pd: Any) -> Any:
    name = source.name
    columns: dict[str, list[Any]] = {f: [] for f in fields}
    lines: list[int] = []
    for lineno, text in source.lines(0, 1):
        if lineno == 1:
            text = text.lstrip("\ufeff")
        if not text.strip() or text.startswith("#"):
            continue
        values = text.split()
        if len(values) != len(fields):
            raise ValueError(f"{func}: {name}:{lineno}: expected {len(fields)} fields ({' '.join(fields)}); got "
                             f"{len(values)}: {text.strip()[:80]!r}")
        for f, v in zip(fields, values):
            if f in integers:
                if not _INTEGER.fullmatch(v) or abs(int(v)) > np.iinfo(np.int64).max:
                    raise ValueError(f"{func}: {name}:{lineno}: the {f} {v!r} is not an integer")
                columns[f].append(int(v))
            elif f in decimals:
                if not _NUMBER.fullmatch(v) or not math.isfinite(float(v)):
                    raise ValueError(f"{func}: {name}:{lineno}: the {f} {v!r} is not a finite decimal number")
                columns[f].append(float(v))
            else:
                columns[f].append(v)
        lines.append(lineno)
    if not lines:
        raise ValueError(f"{func}: {name}: no lines to read: the file is empty")
    frame = pd.DataFrame(columns)
    for f in integers:
        frame[f] = frame[f].astype(np.int64)
    for f in decimals:
        frame[f] = frame[f].astype(np.float64)
    frame["line"] = np.asarray(lines, dtype=np.int64)
    return frame


def _refuse_repeats(frame: Any, key: tuple[str, ...], what: str, path: str, func: str) -> None:
    repeated = frame.duplicated(list(key), keep="first").to_numpy()
    if repeated.any():
        row = int(np.flatnonzero(repeated)[0])
        qid, docno = (frame[k].iat[row] for k in key)
        same = (frame[key[0]] == qid).to_numpy() & (frame[key[1]] == docno).to_numpy()
        first = int(frame["line"].to_numpy()[same][0])
        raise ValueError(f"{func}: {path}:{frame['line'].iat[row]}: document {docno!r} is {what} again for topic "
                         f"{qid!r} (first at line {first}); trec_eval refuses a document {what} twice")


def _runid_of(printed: Any, path: str) -> str:
    runid = printed[(printed["measure"] == "runid") & (printed["qid"] == "all")]["value"].unique()
    return str(runid[0]) if len(runid) == 1 else file_stem(path)


def _per_topic(printed: Any, measure: str, path: str, func: str) -> Any:
    """The measure's per-topic lines (qid, value as float64, line), checked against its
    summary line."""
    rows = printed[printed["measure"] == measure]
    if not len(rows):
        present = list(dict.fromkeys(printed["measure"]))
        raise ValueError(f"{func}: {path}: no measure {measure!r} (the file's measures: {few(present, 12)})")
    bad = np.flatnonzero(~rows["value"].str.fullmatch(_NUMBER).to_numpy())
    if len(bad):
        raise ValueError(f"{func}: {path}:{rows['line'].iat[int(bad[0])]}: the value {rows['value'].iat[int(bad[0])]!r} "
                         f"of {measure!r} is not a decimal number")
    rows = rows.assign(value=rows["value"].astype(np.float64))
    summary, per_topic = rows[rows["qid"] == "all"], rows[rows["qid"] != "all"]
    if not len(per_topic):
        raise ValueError(f"{func}: {path}: no per-topic value of {measure!r} (was trec_eval run with -q?)")
    repeated = np.flatnonzero(per_topic.duplicated("qid").to_numpy())
    if len(repeated):
        row = int(repeated[0])
        qid = per_topic["qid"].iat[row]
        first = per_topic["line"].to_numpy()[(per_topic["qid"] == qid).to_numpy()][0]
        raise ValueError(f"{func}: {path}:{per_topic['line'].iat[row]}: topic {qid!r} has a second {measure!r} "
                         f"(first at line {first})")
    if len(summary) > 1:
        raise ValueError(f"{func}: {path}:{summary['line'].iat[1]}: a second summary line of {measure!r} (first at "
                         f"line {summary['line'].iat[0]})")
    if len(summary):
        _check_summary(per_topic["value"].to_numpy(), float(summary["value"].iat[0]), measure,
                       f"{path}:{summary['line'].iat[0]}", func)
    return per_topic


def _check_summary(values: np.ndarray, summary: float, measure: str, where: str, func: str) -> None:
    if measure.startswith(_GEOMETRIC):
        return
    if measure.startswith(_SUMMED):
        total = float(values.sum())
        if total != summary:
            raise ValueError(f"{func}: {where}: the summary of {measure!r} is {summary:g}, but its {len(values)} "
                             f"topics sum to {total:g}; the file is not one whole trec_eval -q output")
        return
    mean = float(values.mean())
    if abs(mean - summary) > _PRINTED_MEAN_TOLERANCE:
        raise ValueError(f"{func}: {where}: the summary of {measure!r} is {summary:.4f}, but the mean of its "
                         f"{len(values)} topics is {mean:.6f}; the file is not one whole trec_eval -q output (a "
                         "truncated or concatenated one?)")


def _same_topics(first: tuple[str, list[str]], other: tuple[str, list[str]], measure: str, func: str) -> None:
    (path_a, topics_a), (path_b, topics_b) = first, other
    a, b = set(topics_a), set(topics_b)
    if a != b:
        only_a = [t for t in topics_a if t not in b]
        only_b = [t for t in topics_b if t not in a]
        raise ValueError(f"{func}: {path_a} and {path_b} score different topics on {measure!r}: only in the first "
                         f"{few(only_a) or 'none'}; only in the second {few(only_b) or 'none'} (give trec_eval -c "
                         "so that every judged topic is printed)")
