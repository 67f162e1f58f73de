"""One call for a harness's output: which reader a folder needs, told from the files each
harness writes, and every format's reader by one name (for the command line too)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, Union

from ._fields import read_jsonl_logs
from ._helm import read_helm
from ._inspect_logs import is_log_name as is_inspect_log_name
from ._inspect_logs import read_inspect
from ._lighteval import read_lighteval
from ._lm_eval import read_lm_eval
from ._openai_evals import read_openai_evals
from ._records import Evaluation
from ._tables import Source
from ._trec import read_trec, read_trec_eval_q

__all__ = ["LOG_FORMATS", "read_logs"]

#: The readers by the name of the format they read.
LOG_FORMATS: dict[str, Callable[..., Evaluation]] = {
    "lm-eval": read_lm_eval,
    "inspect": read_inspect,
    "helm": read_helm,
    "lighteval": read_lighteval,
    "openai-evals": read_openai_evals,
    "trec": read_trec,
    "trec-eval-q": read_trec_eval_q,
    "jsonl": read_jsonl_logs,
}
# What a folder holds when a format's tool wrote it (looked for at most this deep).
_DEPTH = 6
# A format's output folder from one of its files: lm-eval's <output>/<model>/samples_*.jsonl, HELM's
# <suite>/<run>/per_instance_stats.json, lighteval's <output>/details/<model>/<time>/details_*.parquet.
_OUTPUT_FOLDER: dict[str, Callable[[Path], Optional[Path]]] = {
    "lm-eval": lambda f: f.parents[1], "helm": lambda f: f.parents[1], "lighteval": lambda f: _lighteval_output(f)}


def read_logs(path: Any, *, format: str = "auto", **options: Any) -> Evaluation:
    """Every task and system in a harness's output folder, read by the format's reader.

    Parameters
    ----------
    path : path, or sequence of paths
        With ``format="auto"``, the folder a harness wrote: lm-evaluation-harness's ``--output_path`` (``samples_*.jsonl``
        under a folder per model), inspect_ai's log folder (``.eval`` or ``.json`` logs), HELM's
        ``benchmark_output/runs/<suite>`` (a folder per run with ``per_instance_stats.json``),
        lighteval's output (``details_*.parquet``) or OpenAI evals' logs (JSON lines opening
        with the run's ``spec``). With a format, what its reader takes (None where the
        reader's ``systems`` names the paths).
    format : str
        ``"auto"`` (default) tells the format from the files; or one of ``"lm-eval"``,
        ``"inspect"``, ``"helm"``, ``"lighteval"``, ``"openai-evals"``, ``"trec"``,
        ``"trec-eval-q"``, ``"jsonl"`` (generic, by field paths). TREC runs need their qrels
        and are never told apart from other text: give ``format="trec"`` and ``qrels=``.
    **options
        The format's reader's options (:func:`pairperm.read_lm_eval`'s ``metric`` and ``filter``,
        :func:`pairperm.read_inspect`'s ``scorer``, :func:`pairperm.read_helm`'s ``stat`` ...).

    Returns
    -------
    Evaluation
        With several formats in one folder (and no options), their tasks joined; a task name
        two formats share is an error.

    Raises
    ------
    ValueError
        A folder holding none of the formats, or several with options (say which format they
        are for), or an unknown format.
    """
    if format != "auto":
        if format not in LOG_FORMATS:
            raise ValueError(f"read_logs: format must be 'auto' or one of {', '.join(map(repr, LOG_FORMATS))}; "
                             f"got {format!r}")
        return LOG_FORMATS[format](path, **options)
    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"read_logs: {path} is no folder; give a harness's output folder, or format= for files")
    found = detect_formats(folder)
    if not found:
        raise ValueError(f"read_logs: {path} holds no log this reads (lm-eval samples_*.jsonl, inspect .eval/.json "
                         "logs, HELM runs, lighteval details_*.parquet, OpenAI evals logs); give format=")
    if len(found) > 1 and options:
        raise ValueError(f"read_logs: {path} holds logs of {', '.join(found)}; options are one format's, so give "
                         "format= (and read the others in their own calls)")
    result: Optional[Evaluation] = None
    for fmt, source in found.items():
        read = LOG_FORMATS[fmt](source, **options)
        result = read if result is None else result | read
    assert result is not None
    return result


def detect_formats(folder: Path) -> dict[str, Any]:
    """{format: what its reader takes} for the formats whose files `folder` holds, in
    LOG_FORMATS' order: the output folder of lm-eval, HELM and lighteval (the common parent of
    the models' folders, of the runs, of ``details/``), the log files of inspect and OpenAI evals."""
    found: dict[str, list[Path]] = {}
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        if len(Path(root).relative_to(folder).parts) >= _DEPTH:
            dirs[:] = []
        for name in sorted(files):
            fmt = _format_of_file(Path(root) / name, name, files)
            if fmt is not None:
                found.setdefault(fmt, []).append(Path(root) / name)
    sources: dict[str, Any] = {}
    for fmt in LOG_FORMATS:
        if fmt in found:
            sources[fmt] = (_output_folder(fmt, found[fmt], folder) if fmt in _OUTPUT_FOLDER
                            else [str(f) for f in found[fmt]])
    return sources


def _output_folder(fmt: str, files: list[Path], folder: Path) -> Path:
    """The one output folder of a format's files, never above `folder` (given a model's or a
    run's folder, that one is read, not its siblings); files of several output folders are an
    error rather than their common parent, which the format's reader would not read whole."""
    tops = set()
    for f in files:
        top = _OUTPUT_FOLDER[fmt](f)
        tops.add(top if top is not None and folder in (top, *top.parents) else folder)
    if len(tops) > 1:
        shown = ", ".join(sorted(map(str, tops))[:4])
        raise ValueError(f"read_logs: {folder} holds {fmt} output in several folders ({shown}); read each with "
                         f"format={fmt!r}")
    return tops.pop()


def _lighteval_output(file: Path) -> Optional[Path]:
    """The folder holding ``details/`` above a details file (a model's name may hold no
    organisation, or several parts)."""
    for parent in file.parents:
        if parent.name == "details":
            return parent.parent
    return None


def _format_of_file(path: Path, name: str, siblings: list[str]) -> Union[str, None]:
    if name.startswith("samples_") and name.endswith((".jsonl", ".jsonl.gz")):
        return "lm-eval"
    if name == "per_instance_stats.json" and "run_spec.json" in siblings:
        return "helm"
    if name.startswith("details_") and name.endswith(".parquet"):
        return "lighteval"
    if is_inspect_log_name(name) and (name.endswith(".eval")
                                      or _opens_with(path, (b'"version"', b'"status"', b'"eval"'))):
        return "inspect"
    if name.endswith((".jsonl", ".jsonl.gz")) and _opens_with(path, (b'{"spec"',)):
        return "openai-evals"
    return None


def _opens_with(path: Path, keys: tuple[bytes, ...]) -> bool:
    """Whether the file's first kilobyte (decompressed, if gzip) holds every one of `keys` (the
    fields a format's document opens with)."""
    try:
        with Source(str(path), None).open() as f:
            head = f.read(1024)
    except (OSError, EOFError, ValueError):
        return False
    return all(k in head for k in keys)
