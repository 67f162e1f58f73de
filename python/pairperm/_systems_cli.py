"""`pairperm compare FILE...`: many systems from score files, compared with compare_systems()."""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path
from typing import Any, Optional, TextIO, Union

from ._compare import METRICS
from ._files import read_table, read_text
from ._systems import CORRECTIONS, SystemPair, SystemsComparison, compare_systems
from ._tasks import LONG_COLUMNS, SCOPES, MultiTaskComparison, TaskPair
from ._validation import ALTERNATIVES

FORMATS = ("table", "json", "csv", "latex", "markdown")
# Metrics whose per-entry input is a row of counts rather than one number.
_COLUMNS = {"f1": (2, 3), "precision": (3,), "recall": (3,), "bleu": (10,)}


def add_compare_parser(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help="compare many systems: every pair (or each against --baseline), corrected for multiple testing",
        description="Each FILE holds one system's per-entry scores (the system is named after the file's stem): "
                    "one number per line, or tp fp fn columns for --metric f1. Or give one CSV/TSV file whose "
                    "header row names the systems, one column each. '-' reads standard input.",
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    metrics = [m for m in METRICS if m != "macro_f1"]
    p.add_argument("--metric", choices=metrics, default="accuracy")
    p.add_argument("--baseline", metavar="NAME", help="compare each system against this one only")
    p.add_argument("--correction", choices=[c for c in CORRECTIONS if c] + ["none"], default="holm")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--alternative", choices=ALTERNATIVES, default="two-sided")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--seed", type=int, default=None, help="seed for the Monte Carlo and bootstrap routes")
    p.add_argument("--n-resamples", type=int, default=None, metavar="K", help="for the Monte Carlo and bootstrap routes")
    p.add_argument("--jobs", type=int, default=None, metavar="N", help="threads (default: all cores)")
    p.add_argument("--plot", type=Path, default=None, metavar="PNG",
                   help="also draw the matrix of adjusted p-values (with --long: each system's difference to "
                        "--baseline on every task) (needs matplotlib)")
    p.add_argument("--long", action="store_true",
                   help=f"FILE is one long CSV/TSV table of several tasks, one row per (task, item, system), with "
                        f"columns {', '.join(LONG_COLUMNS)} (needs pandas); the report is systems x tasks")
    p.add_argument("--correction-scope", choices=SCOPES, default="task",
                   help="with --long: correct within each task (default) or over all pairs of all tasks")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="LEVEL",
                   help="with --long: level of the intervals of every difference and system (0 for none)")


def read_systems(files: list[str], metric: str, stdin: Optional[TextIO] = None) -> dict:
    """name -> per-entry scores from the command line's FILE arguments."""
    stdin = stdin if stdin is not None else sys.stdin
    widths = _COLUMNS.get(metric, (1,))
    if len(files) == 1:
        name = files[0]
        header, arr, _ = read_table(name, read_text(name, stdin), widths=())
        if header is not None and len(header) > 1 and widths == (1,):
            if len(set(header)) != len(header):
                raise ValueError(f"{name}: system names in the header row must be unique; got {header}")
            return {h: arr[:, i] for i, h in enumerate(header)}
        if len(arr) and widths == (1,) and arr.shape[1] > 1:
            raise ValueError(f"{name}: {arr.shape[1]} columns but no header row: a table of several systems "
                             "needs a header row naming them (or give one file per system)")
        raise ValueError(f"{name}: one file holds one system; give at least two files (one per system), or "
                         "one CSV/TSV file with a header row of system names")
    systems: dict = {}
    origin: dict = {}
    for name in files:
        stem = "stdin" if name == "-" else Path(name).stem
        if stem in systems:
            raise ValueError(f"{name} and {origin[stem]} both name a system {stem!r} (systems are named after the "
                             "file stem)")
        _, arr, _ = read_table(name, read_text(name, stdin), widths=widths, what=f"number(s) for --metric {metric}")
        systems[stem] = arr[:, 0] if widths == (1,) else arr
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
    if isinstance(res, MultiTaskComparison):
        return _format_tasks(res, fmt)
    if fmt == "json":
        return res.to_json(indent=2) + "\n"
    if fmt == "markdown":
        return res.to_markdown()
    if fmt == "latex":
        return res.to_latex()
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(SystemPair._fields)
        for r in res.rows:
            w.writerow([repr(v) if isinstance(v, float) else v for v in r])
        return buf.getvalue()
    return res.to_table() + "\n\n" + res.to_markdown()


def _format_tasks(res: MultiTaskComparison, fmt: str) -> str:
    """Several tasks: JSON with provenance, the systems x tasks report, or the long table."""
    if fmt == "json":
        return res.to_json(indent=2) + "\n"
    if fmt == "markdown":
        return res.to_markdown()
    if fmt == "latex":
        return res.to_latex()
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(TaskPair._fields)
        for r in res.rows:
            w.writerow([repr(v) if isinstance(v, float) else v for v in r])
        return buf.getvalue()
    return res.to_table() + "\n\n" + res.to_markdown()


def run_compare(args: argparse.Namespace, out: Optional[TextIO] = None, stdin: Optional[TextIO] = None) -> None:
    out = out or sys.stdout
    if not 0 < args.alpha < 1:
        raise ValueError(f"--alpha must be in (0, 1); got {args.alpha}")
    long = getattr(args, "long", False)
    level = getattr(args, "confidence_level", 0.95)
    if not 0 <= level < 1:
        raise ValueError(f"--confidence-level must be in (0, 1), or 0 for no intervals; got {level}")
    options: dict = {}
    if args.seed is not None:
        options["rng"] = args.seed
    if args.n_resamples is not None:
        options["n_resamples"] = args.n_resamples
    if long:
        options.update(correction_scope=args.correction_scope, confidence_level=level or None)
    scores = read_long_table(args.files, stdin) if long else read_systems(args.files, args.metric, stdin)
    res = compare_systems(
        scores, args.metric, baseline=args.baseline, alternative=args.alternative,
        correction=None if args.correction == "none" else args.correction, alpha=args.alpha, n_jobs=args.jobs,
        **options,
    )
    out.write(format_result(res, args.format))
    if getattr(args, "plot", None) is not None:
        save_comparison_plot(res, args.plot)


def save_comparison_plot(res: Union[SystemsComparison, MultiTaskComparison], path: Path) -> None:
    """Write :meth:`SystemsComparison.plot`'s figure (several tasks:
    :meth:`MultiTaskComparison.plot_differences`); the notice goes to stderr, leaving stdout to
    the report (which may be JSON or CSV)."""
    from ._plot import save_figure

    draw = (lambda: res.plot_differences()[0]) if isinstance(res, MultiTaskComparison) else res.plot
    save_figure(draw, path, sys.stderr)
