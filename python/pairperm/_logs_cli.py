"""`pairperm compare --logs FORMAT PATH...`: a harness's output read by its format's reader, the
command line's options turned into the reader's arguments."""

from __future__ import annotations

import argparse
from typing import Any

from ._fields import parse_where
from ._harness import LOG_FORMATS, read_logs
from ._mt import read_mt
from ._records import Evaluation

# Every format the command line reads: the harnesses' own, and translations with references.
CLI_FORMATS = ("auto", *LOG_FORMATS, "mt")

# Which argument of each reader --score names (lm-eval's metric key, inspect's scorer, HELM's stat ...).
_SCORE_ARGUMENT = {"lm-eval": "metric", "lighteval": "metric", "inspect": "scorer", "helm": "stat", "trec": "measure",
                   "trec-eval-q": "measure", "mt": "metrics"}
# The formats whose readers take {system: path} (so NAME=PATH names a system), and those that take
# one output folder.
_PATHS_BY_SYSTEM = ("inspect", "openai-evals", "trec", "trec-eval-q", "mt", "jsonl", "lm-eval", "lighteval")
_ONE_FOLDER = ("auto", "lm-eval", "helm", "lighteval")


def add_log_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "harness logs", "--logs FORMAT reads each FILE as that harness writes it (a folder for lm-eval, HELM, "
                        "lighteval and auto); the metric of each task comes from the logs")
    g.add_argument("--logs", choices=CLI_FORMATS, default=None, metavar="FORMAT",
                   help=f"one of {', '.join(CLI_FORMATS)}")
    g.add_argument("--score", metavar="NAME", default=None,
                   help="which score of the logs: lm-eval's or lighteval's metric (acc), inspect's scorer, HELM's stat "
                        "(exact_match), a TREC measure (nDCG@10, AP), bleu/chrf/chrf++ for --logs mt (jsonl: --score-field)")
    g.add_argument("--filter", metavar="NAME", default=None, help="lm-eval: the filter whose scores are read")
    g.add_argument("--qrels", metavar="FILE", default=None, help="trec: the relevance judgements")
    g.add_argument("--refs", metavar="FILE", action="append", default=None,
                   help="mt: a file of references, one sentence a line (repeat for several references)")
    g.add_argument("--group-field", metavar="[TASK=]PATH", action="append", default=None,
                   help="the field holding each item's exchangeable unit (a passage id, doc.article), a dotted path; "
                        "TASK=PATH for one task (lm-eval; repeat for several)")
    g.add_argument("--where", metavar="PATH=VALUE", action="append", default=None,
                   help="jsonl: read only the lines whose field has this value (repeat for several fields)")
    g.add_argument("--samples", choices=("columns", "groups"), default="columns",
                   help="several samples of an item (epochs, repeats, trials): as (N, k) scores, or as rows grouped by "
                        "item")


def read_log_arguments(files: list[tuple[Any, str]], args: argparse.Namespace) -> Evaluation:
    """The Evaluation the --logs options describe; `files` are the FILE arguments as (name or
    None, path)."""
    fmt = args.logs
    named = {name: path for name, path in files if name is not None}
    paths = [path for _, path in files]
    if named and len(named) != len(files):
        raise ValueError("--logs: name every FILE (NAME=FILE) or none")
    options: dict[str, Any] = {}
    if args.score is not None:
        if fmt not in _SCORE_ARGUMENT:
            raise ValueError(f"--score does not apply to --logs {fmt}")
        options[_SCORE_ARGUMENT[fmt]] = [args.score] if fmt == "mt" else args.score
    for flag, value, formats, name in (("--filter", args.filter, ("lm-eval",), "filter"),
                                       ("--group-field", args.group_field, ("lm-eval", "inspect", "helm", "jsonl"),
                                        "group_field"),
                                       ("--where", args.where, ("jsonl",), "where")):
        if value is not None:
            if fmt not in formats:
                raise ValueError(f"{flag} applies to --logs {' / '.join(formats)}, not {fmt}")
            options[name] = (parse_where(value) if name == "where" else group_fields(value, fmt)
                             if name == "group_field" else value)
    if args.samples != "columns":
        if fmt not in ("lm-eval", "inspect", "helm", "jsonl"):
            raise ValueError(f"--samples applies to --logs lm-eval / inspect / helm / jsonl, not {fmt}")
        options["samples"] = args.samples
    if fmt == "jsonl":
        options.update(id_field=args.id_field, score_field=args.score_field, system_field=args.system_field)
    elif any(v is not None for v in (args.id_field, args.score_field, args.system_field)):
        raise ValueError(f"--logs {fmt} knows its ids, scores and systems; --id-field, --score-field and "
                         "--system-field are for --logs jsonl (--score picks one of the logs' scores)")
    if (args.qrels is not None) != (fmt == "trec"):
        raise ValueError("--logs trec needs --qrels FILE" if fmt == "trec" else "--qrels is for --logs trec")
    if (args.refs is not None) != (fmt == "mt"):
        raise ValueError("--logs mt needs --refs FILE" if fmt == "mt" else "--refs is for --logs mt")
    if named and fmt not in _PATHS_BY_SYSTEM:
        raise ValueError(f"--logs {fmt}: NAME=FILE does not apply (the logs name their systems)")
    if fmt in _ONE_FOLDER and not named and len(paths) != 1:
        raise ValueError(f"--logs {fmt} reads one output folder; got {len(paths)} paths")
    if fmt == "mt":
        return read_mt(named or paths, args.refs[0] if len(args.refs) == 1 else args.refs, **options)
    if named:
        options["systems"] = named
    if fmt == "trec":
        options["qrels"] = args.qrels
    return read_logs(None if named else paths[0] if fmt in _ONE_FOLDER else paths, format=fmt, **options)


def group_fields(values: list[str], fmt: str) -> Any:
    """One field path for every task, or {task: path} from TASK=PATH (lm-eval's per-task fields)."""
    by_task = dict(v.split("=", 1) for v in values if "=" in v)
    if not by_task:
        if len(values) > 1:
            raise ValueError(f"--group-field: one field for every task, or TASK=PATH for each; got {values}")
        return values[0]
    if len(by_task) != len(values):
        raise ValueError(f"--group-field: TASK=PATH for every task, or one field for all; got {values}")
    if fmt != "lm-eval":
        raise ValueError(f"--group-field TASK=PATH applies to --logs lm-eval; --logs {fmt} takes one field")
    return by_task
