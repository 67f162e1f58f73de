"""Command-line interface: `pairperm demo`, `pairperm test FILE` and `pairperm compare FILE...`."""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, TextIO, TypeVar

import numpy as np

from ._errors import PrecisionWarning
from ._f1 import f1_test, read_f1_file
from ._permutation import TEST_METHODS, permutation_test
from ._plot import plot_result, save_figure
from ._systems_cli import add_compare_parser, add_input_options, read_by_id, reads_by_id, run_compare, whole_number
from ._tables import read_table
from ._validation import ALTERNATIVES
from ._version import __version__
from .datasets import stanza_pos_like

DEMO_N = 10_000
DEMO_SEED = 2022
DEMO_RESAMPLES = 20_000

_T = TypeVar("_T")


def _timed(fn: Callable[[], _T], repeats: int = 1) -> tuple[_T, float]:
    # Both set by the first of the repeats (at least one).
    best: Any = None
    out: Any = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return out, best


def _fmt_time(seconds: float) -> str:
    return f"{seconds * 1e3:9.3f} ms"


# Below this p-value the rejected tail is invisible on a linear axis: the figure uses a log axis.
PLOT_LOG_BELOW = 1e-4


def save_plot(result: Any, path: Path, out: Optional[TextIO] = None) -> None:
    """Write the figure of an exact result (null pmf, observed statistic, rejection region)."""
    save_figure(lambda: plot_result(result, log=result.pvalue < PLOT_LOG_BELOW), path, out or sys.stdout)


def _at_floor_quietly(fn: Callable[[], _T]) -> _T:
    """Plain Monte Carlo whose floor 1/(1+K) the command reports in its own output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrecisionWarning)
        return fn()


def run_demo(n: int = DEMO_N, seed: int = DEMO_SEED, n_resamples: int = DEMO_RESAMPLES, out: Optional[TextIO] = None,
             plot: Optional[Path] = None) -> None:
    out = out or sys.stdout
    x, y = stanza_pos_like(n, seed)
    print(
        f"pairperm demo: two POS taggers on {n:,} synthetic sentences (the papers' experiment, seed {seed})\n"
        f"  correct tokens: A = {int(x.sum()):,}, B = {int(y.sum()):,}, "
        f"statistic T = sum(x) - sum(y) = {int(x.sum() - y.sum()):,}\n",
        file=out,
    )
    print(f"  {'method':<28} {'p-value (two-sided)':>22} {'time':>12}", file=out)
    rows = [
        ("exact, grouped (auto)", lambda: permutation_test(x, y, method="auto")),
        ("exact, FFT tree (Alg. 4)", lambda: permutation_test(x, y, method="fft")),
        ("exact, DP (Alg. 3)", lambda: permutation_test(x, y, method="dp")),
        (
            f"Monte Carlo, K = {n_resamples:,}",
            lambda: _at_floor_quietly(lambda: permutation_test(x, y, method="monte_carlo", n_resamples=n_resamples,
                                                              rng=seed)),
        ),
    ]
    for label, fn in rows:
        res, dt = _timed(fn)
        if res.method == "auto":
            exact = res
        print(f"  {label:<28} {res.pvalue:>22.6g} {_fmt_time(dt)}", file=out)
        if res.method == "auto":
            print(f"  {'':<28} {'log p = ' + format(res.log_pvalue, '.6f'):>22}", file=out)
        if res.pvalue_ci is not None:
            lo, hi = res.pvalue_ci
            print(f"  {'':<28} {'95% CI [' + format(lo, '.3g') + ', ' + format(hi, '.3g') + ']':>22}", file=out)
    print(
        "\n  The FFT tree's tiny p-value carries absolute round-off (~1e-16 of the peak); the grouped\n"
        "  engine's tilted tail and the DP are accurate to ~12 significant digits. Monte Carlo\n"
        "  cannot resolve p below ~1/K.",
        file=out,
    )
    if plot is not None:
        save_plot(exact, plot, out)


def read_accuracy_file(path: Any, delim: Optional[str] = None, stdin: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Read the reference implementation's accuracy format: per line, the scores of A and B
    (correct predictions, or any real-valued per-entry score)."""
    table = read_table(str(path), stdin=stdin, widths=(2,), delim=delim,
                       what="numbers (the scores of system A, of system B)")
    return table.columns[0], table.columns[1]


def read_test_input(args: argparse.Namespace) -> tuple[str, Optional[Callable[..., tuple[np.ndarray, np.ndarray]]]]:
    """(what to name in the report, the reader of A's and B's scores; None: the file's rows of numbers)."""
    if not reads_by_id(args):
        if len(args.files) != 1:
            raise ValueError("pairperm test reads one file of rows (A, B); two files (or one long table with "
                             "--system-field) are read by id, with --id-field and --score-field")
        if args.id_field is not None:
            raise ValueError("--id-field pairs systems read by id: give --score-field too")
        return args.files[0], None
    if args.metric != "acc":
        raise ValueError("scores read by id (--score-field) are one number per item: they need --metric acc")

    def by_id(path: Any, delim: Any, stdin: Any) -> tuple[np.ndarray, np.ndarray]:
        frame = read_by_id(args.files, args, stdin)
        if frame.shape[1] != 2:
            raise ValueError(f"pairperm test compares two systems; the input holds {frame.shape[1]}: "
                             f"{', '.join(map(str, frame.columns))} (pairperm compare takes many)")
        return frame.iloc[:, 0].to_numpy(), frame.iloc[:, 1].to_numpy()

    return " ".join(args.files), by_id


def run_test_file(
    path: Any, delim: Optional[str], alternative: Any, method: Any, mc: Optional[int], out: Optional[TextIO] = None,
    metric: str = "acc",
    plot: Optional[Path] = None, fmt: str = "table", seed: Optional[int] = None, stdin: Any = None,
    reader: Optional[Callable[..., tuple[np.ndarray, np.ndarray]]] = None,
) -> None:
    out = out or sys.stdout
    if plot is not None and (metric != "acc" or mc):
        raise ValueError("--plot draws the exact null distribution of S: it needs --metric acc and no --mc")
    default, test = (read_f1_file, f1_test) if metric == "f1" else (read_accuracy_file, permutation_test)
    x, y = (reader or default)(path, delim, stdin)
    kwargs: dict[str, Any] = {"alternative": alternative, "method": "monte_carlo" if mc else method, "rng": seed}
    if mc:
        kwargs["n_resamples"] = mc
    # A p-value at the sampler's floor is reported in the output itself (a note; pvalue_is_floor in JSON).
    res, dt = _timed(lambda: _at_floor_quietly(lambda: test(x, y, **kwargs)) if mc else test(x, y, **kwargs))
    if fmt == "json":
        print(json.dumps({"file": str(path), "entries": len(x), "metric": metric, **res.to_dict(), "seconds": dt}),
              file=out)
    else:
        what = "F1_A - F1_B" if metric == "f1" else "sum A - sum B"
        print(f"file: {path} ({len(x)} entries)", file=out)
        print(f"statistic ({what}): {res.statistic}", file=out)
        print(f"method: {res.method} (engine: {res.engine})  alternative: {alternative}", file=out)
        print(f"p-value: {res.pvalue:.10g}", file=out)
        print(f"log p-value: {res.log_pvalue:.10g}", file=out)
        if res.pvalue_ci is not None:
            print(f"95% CI of the exact p-value: [{res.pvalue_ci[0]:.6g}, {res.pvalue_ci[1]:.6g}]", file=out)
        if getattr(res, "pvalue_is_floor", False):
            print("note: no resample was as extreme: the p-value is the sampler's floor 1 / (1 + K), and the exact "
                  "p-value may be far smaller (drop --mc for the exact test)", file=out)
        print(f"time: {dt * 1e3:.3f} ms", file=out)
    if plot is not None:
        save_plot(res, plot, out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pairperm", description="Exact paired-permutation tests for two systems.")
    parser.add_argument("--version", action="version", version=f"pairperm {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="exact vs Monte Carlo on the papers' experiment data (N = 10,000)")
    demo.add_argument("--n", type=int, default=DEMO_N, help=argparse.SUPPRESS)
    demo.add_argument("--plot", type=Path, metavar="PNG", help="also draw the exact null distribution (needs matplotlib)")
    test = sub.add_parser("test", help="test a file in the reference implementation's format")
    test.add_argument("files", nargs="+", metavar="FILE",
                      help="the scores file ('-' reads standard input); or, read by id (--score-field), the two "
                      "systems' logs, or one long table with --system-field")
    test.add_argument(
        "--metric",
        choices=("acc", "f1"),
        default="acc",
        help="acc: per line, correct of A and of B (default); f1: tp and incorrect of A, then of B",
    )
    test.add_argument("--delim", default=None,
                      help="',' or 'tab' (default: any of comma, tab, semicolon or white space)")
    test.add_argument("--alternative", choices=ALTERNATIVES, default="two-sided")
    test.add_argument("--method", choices=[m for m in TEST_METHODS if m != "monte_carlo"], default="auto")
    test.add_argument("--mc", type=whole_number(0), default=0, metavar="K", help="Monte Carlo with K resamples instead")
    test.add_argument("--seed", type=whole_number(0), default=None, help="seed of the sampling routes (repeatable runs)")
    test.add_argument("--format", choices=("table", "json"), default="table")
    test.add_argument("--json", action="store_const", dest="format", const="json", help="same as --format json")
    test.add_argument(
        "--plot", type=Path, metavar="PNG",
        help="also draw the null distribution, observed statistic and rejection region (needs matplotlib; "
        f"log axis when p < {PLOT_LOG_BELOW:g})",
    )
    add_input_options(test)
    add_compare_parser(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            run_demo(n=args.n, plot=args.plot)
        elif args.command == "compare":
            run_compare(args)
        else:
            delim = "\t" if args.delim in ("tab", "\\t", "\t") else args.delim
            if delim not in (None, ",", "\t"):
                raise ValueError(f"--delim must be ',' or 'tab'; got {args.delim!r}")
            path, reader = read_test_input(args)
            run_test_file(path, delim, args.alternative, args.method, args.mc or None, metric=args.metric,
                          plot=args.plot, fmt=args.format, seed=args.seed, reader=reader)
    except KeyboardInterrupt:
        print("pairperm: interrupted", file=sys.stderr)
        return 130
    except ValueError as exc:
        print(f"pairperm: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"pairperm: error: {exc.filename}: cannot read file: {exc.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
