"""Per-sentence BLEU and chrF statistics of machine translation outputs, counted as sacrebleu 2
counts them (by the compiled core), and a reader of plain-text outputs and references.

The statistics are those of sacrebleu's ``BLEU._extract_corpus_statistics`` and
``CHRF._extract_corpus_statistics`` with their defaults, so that the corpus metric of summed
rows (pairperm's ``"bleu"`` and ``"corpus_chrf"``) equals sacrebleu's corpus score, and the
paired tests resample sentences as sacrebleu's paired bootstrap does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

import numpy as np

import pairperm._core as _core

from ._metrics import BLEU_COLUMNS, CHRF_COLUMNS
from ._records import Evaluation, Records, assemble, pandas_or_raise
from ._tables import Source
from ._validation import check_n_jobs

__all__ = ["MT_METRICS", "mt_statistics", "read_mt"]

#: The metrics whose statistics are counted here: each one's pairperm metric (as
#: compare_systems takes it) and its chrF word order.
MT_METRICS = {"bleu": "bleu", "chrf": "corpus_chrf", "chrf++": "corpus_chrf"}
_WORD_ORDER = {"chrf": 0, "chrf++": 2}
_TOKENIZERS = ("13a", "none")
# sacrebleu's other BLEU tokenizers: language-specific segmenters, SentencePiece models and
# Unicode-class rules that the core does not reproduce; their statistics come from sacrebleu.
_SACREBLEU_ONLY_TOKENIZERS = ("zh", "intl", "char", "ja-mecab", "ko-mecab", "spm", "flores101", "flores200",
                              "spBLEU-1K")

PathLike = Union[str, "os.PathLike[str]"]


def mt_statistics(hypotheses: Sequence[str], references: Union[Sequence[str], Sequence[Sequence[Optional[str]]]], *,
                  metric: str = "bleu", tokenize: Optional[str] = None, lowercase: bool = False,
                  n_jobs: Optional[int] = None) -> np.ndarray:
    """Per-sentence statistics of BLEU, chrF or chrF++ as sacrebleu 2 counts them.

    Parameters
    ----------
    hypotheses : sequence of str
        One system's output, a sentence per entry.
    references : sequence of str, or sequence of sequences of str
        One reference per hypothesis, or several reference streams as sacrebleu takes them
        (``references[r][i]`` is the *r*-th reference of sentence *i*); a stream may hold
        ``None`` where it has no reference for a sentence (every sentence needs one).
    metric : {"bleu", "chrf", "chrf++"}
        ``"bleu"``: sacrebleu's ``BLEU()`` (4-grams; several references: the closest reference
        length, the shorter on a tie, and matches clipped by an n-gram's largest count in any one
        reference). ``"chrf"``: ``CHRF()`` (character 6-grams, whitespace removed, beta 2);
        ``"chrf++"``: ``CHRF(word_order=2)``; with several references, each sentence counts
        against the reference of the best sentence chrF, the first on a tie.
    tokenize : {"13a", "none"} or None
        BLEU's tokenizer, sacrebleu's ``"13a"`` by default; sacrebleu's other tokenizers are
        refused (their statistics come from sacrebleu). chrF tokenizes nothing and takes None.
    lowercase : bool
        Lowercase hypotheses and references first (Python's ``str.lower``, as sacrebleu).
    n_jobs : int or None
        Threads; None uses all cores. The result does not depend on it.

    Returns
    -------
    numpy.ndarray
        int64, ``(N, 10)`` for BLEU in :data:`pairperm.BLEU_COLUMNS` order, ``(N, 18)`` for chrF
        and ``(N, 24)`` for chrF++ in :data:`pairperm.CHRF_COLUMNS` layout: the statistics
        ``compare_systems(..., metric="bleu")`` and ``metric="corpus_chrf"`` take.
    """
    func = "mt_statistics"
    word_order = _check_options(metric, tokenize, lowercase, func)
    hyps = _texts(hypotheses, "hypotheses", func)
    streams = _reference_streams(references, len(hyps), func)
    if lowercase:
        hyps = [h.lower() for h in hyps]
        streams = [[r.lower() if r is not None else None for r in s] for s in streams]
    threads = check_n_jobs(n_jobs, func)
    if word_order is None:
        return _core.bleu_statistics(hyps, streams, tokenize or "13a", threads)
    return _core.chrf_statistics(hyps, streams, word_order, threads)


def _check_options(metric: Any, tokenize: Any, lowercase: Any, func: str) -> Optional[int]:
    """chrF's word order (None for BLEU) once the options are checked."""
    if not isinstance(metric, str) or metric not in MT_METRICS:
        raise ValueError(f"{func}: metric must be one of {', '.join(map(repr, MT_METRICS))}; got {metric!r}")
    if not isinstance(lowercase, (bool, np.bool_)):
        raise ValueError(f"{func}: lowercase must be True or False; got {lowercase!r}")
    if metric != "bleu":
        if tokenize is not None:
            raise ValueError(f"{func}: {metric} counts characters and words as sacrebleu's CHRF does, with no "
                             f"tokenizer; got tokenize={tokenize!r}")
        return _WORD_ORDER[metric]
    if tokenize is not None and tokenize not in _TOKENIZERS:
        if tokenize in _SACREBLEU_ONLY_TOKENIZERS:
            raise ValueError(f"{func}: sacrebleu's tokenizer {tokenize!r} is not reproduced here (only '13a', its "
                             f"default, and 'none'); count with sacrebleu, BLEU(tokenize={tokenize!r})."
                             "_extract_corpus_statistics(hypotheses, [references]), and pass those (N, 10) rows")
        raise ValueError(f"{func}: tokenize must be '13a' or 'none' (or None: '13a'); got {tokenize!r}")
    return None


def _in_order(values: Any) -> bool:
    """A collection whose iteration order is its order (list, tuple, NumPy array, pandas Series),
    not one text, a mapping or a set."""
    return (not isinstance(values, (str, bytes, Mapping)) and hasattr(values, "__len__")
            and hasattr(values, "__getitem__"))


def _texts(values: Any, name: str, func: str) -> list[str]:
    if not _in_order(values):
        raise ValueError(f"{func}: {name} must be a sequence of strings (one sentence each); got "
                         f"{type(values).__name__}")
    texts = list(values)
    if not all(isinstance(t, str) for t in texts):
        i, t = next((i, t) for i, t in enumerate(texts) if not isinstance(t, str))
        raise ValueError(f"{func}: {name}[{i}] is {type(t).__name__}, not a string")
    return texts


def _reference_streams(references: Any, n: int, func: str) -> list[list[Optional[str]]]:
    """references[r][i] as lists: one stream when `references` holds strings, else its streams."""
    if not _in_order(references):
        raise ValueError(f"{func}: references must be a sequence of strings or of reference streams; got "
                         f"{type(references).__name__}")
    items = list(references)
    if all(isinstance(r, str) for r in items) and (items or n == 0):
        streams: list[list[Optional[str]]] = [list(items)]
    elif items and all(_in_order(s) for s in items):
        streams = [list(s) for s in items]
    else:
        raise ValueError(f"{func}: references must be one string per hypothesis, or a list of reference streams "
                         "(lists of strings, None where a stream has no reference); got "
                         + ("no streams" if not items else "a mix of strings and other values"))
    for r, stream in enumerate(streams):
        if len(stream) != n:
            raise ValueError(f"{func}: reference stream {r} holds {len(stream)} sentences, the hypotheses {n}")
        if not all(t is None or isinstance(t, str) for t in stream):
            i, t = next((i, t) for i, t in enumerate(stream) if t is not None and not isinstance(t, str))
            raise ValueError(f"{func}: references[{r}][{i}] is {type(t).__name__}, not a string or None")
    if any(None in stream for stream in streams):
        for i in range(n):
            if all(stream[i] is None for stream in streams):
                raise ValueError(f"{func}: sentence {i} has no reference in any stream (every stream holds None)")
    return streams


# ---------------------------------------------------------------- plain-text files


def read_mt(hypotheses: Union[Mapping[str, PathLike], Sequence[PathLike]], references: Union[PathLike, Sequence[PathLike]],
            *, metrics: Sequence[str] = ("bleu", "chrf"), tokenize: Optional[str] = None, lowercase: bool = False,
            n_jobs: Optional[int] = None) -> Evaluation:
    """Systems' translations and the references from plain-text files (UTF-8, one sentence per
    line, gzip recognised), as sacrebleu's command line reads them, with the statistics of
    each metric per sentence.

    Parameters
    ----------
    hypotheses : mapping of system name to path, or sequence of paths
        Each system's output; a sequence names each system by its path as given.
    references : path or sequence of paths
        One reference file, or several (reference streams). Every file needs as many lines as
        the others.
    metrics : sequence of {"bleu", "chrf", "chrf++"}
        One task per metric, named by it: ``"bleu"`` (metric ``"bleu"``), ``"chrf"`` and
        ``"chrf++"`` (metric ``"corpus_chrf"``).
    tokenize, lowercase, n_jobs
        As :func:`mt_statistics`; `tokenize` is BLEU's.

    Returns
    -------
    Evaluation
        Per task, each system's ``(N, k)`` statistics of the N lines, whose ids are the line
        numbers (from 1).
    """
    func = "read_mt"
    pd = pandas_or_raise(func)
    systems = _system_paths(hypotheses, func)
    tasks = _check_metrics(metrics, tokenize, func)
    for task in tasks:
        _check_options(task, tokenize if task == "bleu" else None, lowercase, func)
    ref_paths = [references] if isinstance(references, (str, os.PathLike)) else list(references)
    if not ref_paths:
        raise ValueError(f"{func}: no reference file")
    ref_lines = [_read_lines(os.fspath(p), func) for p in ref_paths]
    hyp_lines = {name: _read_lines(path, func) for name, path in systems.items()}
    counts = {os.fspath(p): len(lines) for p, lines in zip(ref_paths, ref_lines)}
    counts.update({systems[name]: len(lines) for name, lines in hyp_lines.items()})
    if len(set(counts.values())) > 1:
        raise ValueError(f"{func}: the files hold different numbers of lines ("
                         + ", ".join(f"{path}: {n}" for path, n in counts.items())
                         + "); each line is one sentence, so every system and reference file needs the same number")
    n = len(ref_lines[0])
    if n == 0:
        raise ValueError(f"{func}: the files hold no lines ({', '.join(counts)})")
    streams: list[Sequence[Optional[str]]] = list(ref_lines)
    lines = np.arange(1, n + 1, dtype=np.int64)
    records = []
    for task in tasks:
        columns = BLEU_COLUMNS if task == "bleu" else _chrf_columns(_WORD_ORDER[task])
        parts = []
        for name, hyps in hyp_lines.items():
            stats = mt_statistics(hyps, streams, metric=task, tokenize=tokenize if task == "bleu" else None,
                                  lowercase=lowercase, n_jobs=n_jobs)
            part = pd.DataFrame(stats, columns=list(columns))
            part.insert(0, "item", lines)
            part.insert(0, "system", name)
            part.insert(0, "task", task)
            part["file"] = systems[name]
            part["line"] = lines
            parts.append(part)
        records.append(Records(pd.concat(parts, ignore_index=True), tuple(columns), {task: MT_METRICS[task]}))
    return assemble(records, func=func)


def _chrf_columns(word_order: int) -> tuple[str, ...]:
    """CHRF_COLUMNS, and chrF++'s word orders after them as orders 7 and 8."""
    words = tuple(f"{what}_{order}" for order in range(7, 7 + word_order) for what in ("hyp", "ref", "match"))
    return CHRF_COLUMNS + words


def _system_paths(hypotheses: Any, func: str) -> dict[str, str]:
    if isinstance(hypotheses, Mapping):
        named = {}
        for name, path in hypotheses.items():
            if not isinstance(name, str) or not isinstance(path, (str, os.PathLike)):
                raise ValueError(f"{func}: hypotheses must map system names (str) to paths; got {name!r}: {path!r}")
            named[name] = os.fspath(path)
    elif isinstance(hypotheses, (str, os.PathLike)) or not isinstance(hypotheses, Sequence):
        raise ValueError(f"{func}: hypotheses must be a mapping of system name to path, or a list of paths; got "
                         f"{hypotheses!r}")
    else:
        paths = [os.fspath(p) for p in hypotheses]
        repeated = sorted({p for p in paths if paths.count(p) > 1})
        if repeated:
            raise ValueError(f"{func}: the system file {repeated[0]!r} is given twice")
        named = {p: p for p in paths}
    if not named:
        raise ValueError(f"{func}: no system file")
    return named


def _check_metrics(metrics: Any, tokenize: Any, func: str) -> list[str]:
    tasks = [metrics] if isinstance(metrics, str) else list(metrics)
    unknown = [m for m in tasks if not isinstance(m, str) or m not in MT_METRICS]
    if unknown or not tasks:
        raise ValueError(f"{func}: metrics must name some of {', '.join(map(repr, MT_METRICS))}; got {metrics!r}")
    if len(set(tasks)) < len(tasks):
        raise ValueError(f"{func}: metrics names a metric twice: {metrics!r}")
    if tokenize is not None and "bleu" not in tasks:
        raise ValueError(f"{func}: tokenize is BLEU's, and metrics {metrics!r} has no 'bleu'")
    return tasks


def _read_lines(path: str, func: str) -> list[str]:
    """The file's lines without their line ends, split at "\\n" only (as sacrebleu opens files,
    newline="\\n"): a carriage return or a Unicode line separator stays in its line, where BLEU's
    strip and chrF's whitespace removal treat it as sacrebleu does."""
    try:
        source = Source(path, None)
    except ValueError as exc:
        raise ValueError(f"{func}: {exc}") from None
    with source.open() as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            for _ in source.lines(0, 1):  # names the line and column of the first bad byte
                pass
        except ValueError as exc:
            raise ValueError(f"{func}: {exc}") from None
        raise
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the last line's end, or an empty file
    return lines
