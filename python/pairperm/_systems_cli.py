"""`pairperm compare FILE...`: many systems from score files, compared with compare_systems()."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional, TextIO, Union

import numpy as np

from ._comparison import SystemPair, SystemsComparison
from ._files import FORMATS as FORMATS_IN
from ._files import file_stem, read_scores
from ._inputs import LONG_COLUMNS
from ._logs_cli import add_log_options, read_log_arguments
from ._metrics import METRICS
from ._multipletests import SYSTEMS_CORRECTIONS
from ._multitask import MultiTaskComparison, TaskPair
from ._plot import save_figure
from ._ranking import RankIntervals
from ._systems import compare_systems
from ._tables import read_table
from ._tasks import SCOPES
from ._validation import ALTERNATIVES, check_unique_labels, id_column_reason

FORMATS = ("table", "json", "csv", "latex", "markdown")
# Metrics whose per-entry input is one number (the others read rows of counts).
_PER_ENTRY_METRICS = tuple(name for name, m in METRICS.items() if m.line_widths == (1,))


def add_compare_parser(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help="compare many systems: every pair (or each against --baseline), corrected for multiple testing",
        description="Each FILE holds one system's per-entry scores (the system is named after the file's stem, or "
                    "NAME=FILE names it): "
                    "one number per line, or tp fp fn columns for --metric f1. Or give one CSV/TSV file whose "
                    "header row names the systems, one column each. '-' reads standard input.",
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    metrics = [name for name, m in METRICS.items() if m.line_widths]
    p.add_argument("--metric", choices=metrics, default=None, help="default: accuracy (with --logs: each task's own)")
    add_input_options(p)
    p.add_argument("--baseline", metavar="NAME", help="compare each system against this one only")
    p.add_argument("--correction", choices=[c for c in SYSTEMS_CORRECTIONS if c] + ["none"], default="holm")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--alternative", choices=ALTERNATIVES, default="two-sided")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--seed", type=whole_number(0), default=None, help="seed for the Monte Carlo and bootstrap routes")
    p.add_argument("--n-resamples", type=whole_number(1), default=None, metavar="K",
                   help="for the Monte Carlo and bootstrap routes")
    p.add_argument("--jobs", type=whole_number(1), default=None, metavar="N", help="threads (default: all cores)")
    p.add_argument("--plot", type=Path, default=None, metavar="PNG",
                   help="also draw the matrix of adjusted p-values (with --long: each system's difference to "
                        "--baseline on every task) (needs matplotlib)")
    p.add_argument("--long", action="store_true",
                   help=f"FILE is one long CSV/TSV table of several tasks, one row per (task, item, system), with "
                        f"columns {', '.join(LONG_COLUMNS)} (needs pandas); the report is systems x tasks")
    p.add_argument("--correction-scope", choices=SCOPES, default="task",
                   help="with --long: correct within each task (default) or over all pairs of all tasks")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="LEVEL",
                   help="level of the intervals of every difference and system (0 for none)")
    p.add_argument("--ranks", action="store_true",
                   help="also each system's simultaneous rank interval at --confidence-level (0.95 if 0), whether "
                        "it could be first, and compact letters (with --long: each task's)")
    add_log_options(p)


def whole_number(least: int) -> Any:
    """An argparse type for integers >= `least`, so that a bad value is reported against its
    flag (not against the library argument it becomes)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number; got {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be {least} or more; got {value}")
        return value
    return parse


def add_input_options(p: argparse.ArgumentParser) -> None:
    """Options of the commands that read scores by item id (evaluation logs, tables with ids)."""
    p.add_argument("--id-field", "--id-column", dest="id_field", metavar="NAME", default=None,
                   help="the field (column) of the item ids: systems are paired by id, and ids must be unique")
    p.add_argument("--score-field", "--column", dest="score_field", metavar="NAME", default=None,
                   help="the field (column) of the per-item score, in JSONL logs or CSV/TSV tables with ids")
    p.add_argument("--system-field", metavar="NAME", default=None,
                   help="one long table: the field naming each row's system")
    p.add_argument("--input-format", choices=FORMATS_IN, default=None,
                   help="csv, tsv or jsonl (default: from each file's suffix, also under .gz)")


def reads_by_id(args: argparse.Namespace) -> bool:
    """Whether the FILE arguments are logs or tables read by id (read_scores), not rows of numbers."""
    files = getattr(args, "files", None) or [getattr(args, "file", "")]
    logs = any(str(f).removesuffix(".gz").endswith((".jsonl", ".ndjson", ".json")) for f in files)
    return logs or any(getattr(args, k, None) is not None for k in ("score_field", "system_field", "input_format"))


def named_files(files: list[str]) -> list[tuple[Optional[str], str]]:
    """The FILE arguments as (system name, path): ``NAME=PATH`` names a system; a path that
    exists as written (even with a ``=`` in it) is a path, named by the reader."""
    out: list[tuple[Optional[str], str]] = []
    for f in files:
        name, eq, path = f.partition("=")
        if not eq or f == "-" or os.path.exists(f):
            out.append((None, f))
        elif not name or not path:
            raise ValueError(f"{f!r}: NAME=FILE needs a system name and a file")
        else:
            out.append((name, path))
    return out


def read_by_id(files: list[str], args: argparse.Namespace, stdin: Optional[TextIO] = None) -> Any:
    """The systems' scores by id (a pandas DataFrame, a column per system) from read_scores."""
    named = named_files(files)
    sources: Any = files[0] if len(files) == 1 else files
    if any(name is not None for name, _ in named):
        if args.system_field is not None:
            raise ValueError("NAME=FILE names the system of a file; --system-field names them within one table")
        sources = {}
        for name, path in named:
            name = name if name is not None else file_stem(path)
            if name in sources:
                raise ValueError(f"{path} and {sources[name]} both name a system {name!r}")
            sources[name] = path
    return read_scores(sources, format=args.input_format, id_field=args.id_field, score_field=args.score_field,
                       system_field=args.system_field, stdin=stdin)


def read_systems(files: list[str], metric: str, stdin: Optional[TextIO] = None, id_column: Optional[str] = None) -> dict:
    """name -> per-entry scores from the command line's FILE arguments."""
    widths = METRICS[metric].line_widths
    if len(files) == 1:
        given, name = named_files(files)[0]
        if given is not None:
            raise ValueError(f"{files[0]!r}: one file holds one system; give at least two NAME=FILE (or one "
                             "CSV/TSV file with a header row of system names)")
        # Columns named like ids are read as text, to be refused below by name rather than as non-numbers.
        text = (id_column,) if id_column is not None else (lambda c: id_column_reason(c, ()) is not None)
        table = read_table(name, stdin=stdin, text_columns=text)
        header = table.header
        if header is not None and len(header) > 1 and widths == (1,):
            if len(set(header)) != len(header):
                raise ValueError(f"{name}: system names in the header row must be unique; got {list(header)}")
            columns = dict(zip(header, table.columns))
            if id_column is not None:
                check_unique_labels(columns.pop(id_column), f"the id column {id_column!r}", name)
            else:
                for n, values in columns.items():
                    reason = id_column_reason(n, values)
                    if reason is not None:
                        raise ValueError(f"{name}: column {n!r} looks like item ids, not scores ({reason}); pass "
                                         f"--id-column {n} if it holds the ids of the rows")
            return columns
        if table.width > 1 and widths == (1,) and header is None:
            raise ValueError(f"{name}: {table.width} columns but no header row: a table of several systems "
                             "needs a header row naming them (or give one file per system)")
        raise ValueError(f"{name}: one file holds one system; give at least two files (one per system), or "
                         "one CSV/TSV file with a header row of system names")
    if id_column is not None:
        raise ValueError("--id-column names a column of one table of systems (a single FILE with a header row)")
    systems: dict = {}
    origin: dict = {}
    for given, name in named_files(files):
        stem = given if given is not None else "stdin" if name == "-" else Path(name).stem
        if stem in systems:
            raise ValueError(f"{name} and {origin[stem]} both name a system {stem!r} (systems are named after the "
                             "file stem, or NAME=FILE)")
        table = read_table(name, stdin=stdin, widths=widths, what=f"number(s) for --metric {metric}")
        systems[stem] = table.columns[0] if widths == (1,) else np.column_stack(table.columns)
        origin[stem] = name
    lengths = {origin[s]: len(a) for s, a in systems.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{f}: {n}" for f, n in lengths.items())
        raise ValueError(f"the systems must be scored on the same entries, but the files have different numbers "
                         f"of entries ({detail})")
    return systems


def read_long_table(files: list[str], stdin: Optional[TextIO] = None) -> Any:
    """The one long table of --long, read by pandas (tab-separated for .tsv and .tsv.gz)."""
    if len(files) != 1:
        raise ValueError(f"--long reads one table of all tasks; got {len(files)} files")
    try:
        import pandas as pd
    except ImportError:
        raise ValueError("--long reads the table with pandas, which is not installed (pip install pandas)") from None
    name = files[0]
    source: Any = (stdin if stdin is not None else sys.stdin) if name == "-" else name
    sep = "\t" if name.endswith((".tsv", ".tsv.gz", ".tab")) else ","
    frame = pd.read_csv(source, sep=sep)
    missing = [c for c in LONG_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: a --long table needs columns {', '.join(LONG_COLUMNS)}; missing "
                         f"{', '.join(missing)} (columns: {', '.join(map(str, frame.columns))})")
    return frame


def format_result(res: Union[SystemsComparison, MultiTaskComparison], fmt: str) -> str:
    """The report in `fmt`; several tasks: JSON with provenance, the systems x tasks report, or
    the long table."""
    if fmt == "json":
        return res.to_json(indent=2) + "\n"
    if fmt == "markdown":
        return res.to_markdown()
    if fmt == "latex":
        return res.to_latex()
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(TaskPair._fields if isinstance(res, MultiTaskComparison) else SystemPair._fields)
        for r in res.rows:
            w.writerow([repr(v) if isinstance(v, float) else v for v in r])
        return buf.getvalue()
    return res.to_table() + "\n\n" + res.to_markdown()


def format_ranked(res: Union[SystemsComparison, MultiTaskComparison], ranks: dict[str, RankIntervals],
                  fmt: str) -> str:
    """The comparison's report followed by each task's rank intervals (one task: keyed ""; JSON:
    one object holding both, the ranks of one task as one object, of several by task)."""
    if fmt == "json":
        by_task = {t: r.to_dict() for t, r in ranks.items()}
        return json.dumps({"comparison": res.to_dict(), "ranks": by_task.get("", by_task)}, indent=2) + "\n"
    parts = [res.to_latex() if fmt == "latex" else format_result(res, fmt)]
    for task, r in ranks.items():
        head = f"Task {task}:\n\n" if task and fmt != "latex" else (f"% task {task}\n" if task else "")
        parts.append(head + (r.to_latex() if fmt == "latex" else r.to_markdown()))
    return "\n".join(parts)


def run_compare(args: argparse.Namespace, out: Optional[TextIO] = None, stdin: Optional[TextIO] = None) -> None:
    out = out or sys.stdout
    if not 0 < args.alpha < 1:
        raise ValueError(f"--alpha must be in (0, 1); got {args.alpha}")
    long = getattr(args, "long", False)
    level = getattr(args, "confidence_level", 0.95)
    if not 0 <= level < 1:
        raise ValueError(f"--confidence-level must be in (0, 1), or 0 for no intervals; got {level}")
    options: dict = {"confidence_level": level or None}
    if args.seed is not None:
        options["rng"] = args.seed
    if args.n_resamples is not None:
        options["n_resamples"] = args.n_resamples
    logs = getattr(args, "logs", None)
    if long or logs:
        options.update(correction_scope=args.correction_scope)
    metric: Any = args.metric or "accuracy"
    if logs:
        if long or args.metric is not None:
            raise ValueError(f"--logs reads each task's metric from the logs; {'--long' if long else '--metric'} "
                             "does not apply")
        if args.input_format is not None:
            raise ValueError("--input-format is for score files read by id; --logs names the logs' format")
        evaluation = read_log_arguments(named_files(args.files), args)
        scores: Any = evaluation.scores
        metric = evaluation.metrics
        options["groups"] = evaluation.groups or None
    elif long:
        scores = read_long_table(args.files, stdin)
    elif reads_by_id(args):
        if metric not in _PER_ENTRY_METRICS:
            raise ValueError(f"--metric {metric} needs rows of counts; scores read by id (--score-field) are "
                             "one number per item")
        scores = read_by_id(args.files, args, stdin)
    else:
        scores = read_systems(args.files, metric, stdin, args.id_field)
    res = compare_systems(
        scores, metric, baseline=args.baseline, alternative=args.alternative,
        correction=None if args.correction == "none" else args.correction, alpha=args.alpha, n_jobs=args.jobs,
        **options,
    )
    if getattr(args, "ranks", False):
        if args.format == "csv":
            raise ValueError("--ranks has no CSV form; use --format json, markdown, latex or table")
        tasks = res.task_names if isinstance(res, MultiTaskComparison) else ("",)
        ranks = {t: (res.task(t) if t else res).ranks(level or 0.95, rng=args.seed) for t in tasks}
        out.write(format_ranked(res, ranks, args.format))
    else:
        out.write(format_result(res, args.format))
    if getattr(args, "plot", None) is not None:
        save_comparison_plot(res, args.plot)


def save_comparison_plot(res: Union[SystemsComparison, MultiTaskComparison], path: Path) -> None:
    """Write :meth:`SystemsComparison.plot`'s figure (several tasks:
    :meth:`MultiTaskComparison.plot_differences`); the notice goes to stderr, leaving stdout to
    the report (which may be JSON or CSV)."""
    draw = (lambda: res.plot_differences()[0]) if isinstance(res, MultiTaskComparison) else res.plot
    save_figure(draw, path, sys.stderr)
