"""compare_systems(): every pair of many systems, each with the test compare() runs, corrected
for multiple testing, reported the way evaluation papers print it.

Integer-sum metrics (accuracy and friends) go to one C++ batch over a score matrix, which runs
the engine the core's planner picks for each pair (as compare() does) on C++ threads; the
other metrics, and pairs whose engine the batch does not run, run compare() per pair on a
thread pool.
Any concurrent.futures.Executor spreads the pairs over processes or machines in chunks that
ship each needed system once per chunk.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import inspect
import json
import math
import numbers
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _core, _runner
from ._classic import discordant_counts
from ._compare import _is_integral, compare
from ._metrics import (
    METRICS,
    check_counts,
    check_perplexity,
    check_sentence_scores,
    check_statistics_shape,
    metric_named,
    prefers_lower,
    statistics_by_name,
)
from ._permutation import TEST_METHODS
from ._results import WilcoxonResult, _fmt
from ._sampling import child_seed, monte_carlo_options, seed_root
from ._validation import (
    N_RESAMPLES,
    Alternative,
    _has_index,
    align_by_index,
    apply_vectorised,
    as_int_array,
    as_real_array,
    check_alternative,
    check_n_jobs,
    check_probability,
    check_unique_labels,
    exact_int_sum,
    id_column_reason,
    is_binary,
)
from ._version import __version__

# Methods of the integer-sum pairs that the C++ batch plans; sampled p-values are drawn per pair
# with the pair's own seed, by compare().
_BATCH_METHODS = tuple(m for m in TEST_METHODS if m != "monte_carlo")

__all__ = ["CORRECTIONS", "SystemPair", "SystemsComparison", "compare_systems", "multipletests"]

CORRECTIONS = ("holm", "bonferroni", "fdr_bh", "fdr_by", None)

_FUNC = "compare_systems"
# Progress is shown for batches still running after this many seconds.
_PROGRESS_AFTER = 2.0
# Local batch calls aim at about this much work each, so that progress can be reported.
_BATCH_CALL_SECONDS = 0.25
# How the plot's title names adjusted p-values.
_ADJUSTED_NAMES = {"holm": "Holm-adjusted", "bonferroni": "Bonferroni-adjusted", "fdr_bh": "BH-adjusted",
                   "fdr_by": "BY-adjusted"}


class SystemPair(NamedTuple):
    """One compared pair: A against B (``statistic``, ``pvalue``, ``test`` and ``engine`` as
    ``compare(A, B)``; ``engine`` is what ran inside the test, e.g. ``"dp"``, ``"grouped"`` or
    ``"monte_carlo"``, empty in results saved before it was recorded). ``difference`` is the
    metric of A minus the metric of B in the metric's units, ``ci_low``/``ci_high`` its
    confidence interval (infinite on the untested side of a one-sided test; NaN when no
    interval was asked for, or for sums and means of integers whose differences reach 2**53,
    where the inverted test's subset means are not exact in float64). ``log_pvalue`` is the
    test's own log p-value, which stays finite where ``pvalue`` underflows to 0 (deep tails of the
    exact tests), so that such pairs keep their order."""

    system_a: str
    system_b: str
    metric_a: Union[int, float]
    metric_b: Union[int, float]
    statistic: Union[int, float]
    pvalue: float
    pvalue_adjusted: float
    significant: bool
    test: str
    engine: str = ""
    difference: Union[int, float] = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    # log(pvalue), kept where the p-value underflows to 0 (deep tails of exact tests): it orders
    # pairs whose p-values all read 0.
    log_pvalue: float = math.nan


# ---------------------------------------------------------------- multiple testing


def multipletests(pvalues: Any, method: Optional[str] = "holm") -> np.ndarray:
    """Adjusted p-values for a family of tests: statsmodels' ``multipletests(...)[1]``, to the bit.

    Parameters
    ----------
    pvalues : array_like, shape (m,)
        p-values in [0, 1].
    method : {"holm", "bonferroni", "fdr_bh", "fdr_by", None}
        ``"holm"`` (step-down, controls the family-wise error), ``"bonferroni"``,
        ``"fdr_bh"`` (Benjamini-Hochberg, false discovery rate under independence or positive
        dependence), ``"fdr_by"`` (Benjamini-Yekutieli, any dependence) or None (unadjusted):
        the corrections :func:`pairperm.compare_systems` takes.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the order given (at most 1). A hypothesis is rejected at
        level alpha when its adjusted p-value is <= alpha.

    Examples
    --------
    >>> import pairperm
    >>> pairperm.multipletests([0.01, 0.04, 0.03, 0.5], "holm")
    array([0.04, 0.09, 0.09, 0.5 ])
    >>> pairperm.multipletests([0.01, 0.04, 0.03, 0.5], "fdr_bh")
    array([0.04      , 0.05333333, 0.05333333, 0.5       ])
    """
    if method not in CORRECTIONS:
        raise ValueError(f"multipletests: method must be one of {', '.join(map(repr, CORRECTIONS))}; got {method!r}")
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"multipletests: p-values must be 1-D; got shape {p.shape}")
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1):
        raise ValueError("multipletests: p-values must be finite numbers in [0, 1]")
    m = p.size
    if method is None or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    order = np.argsort(p, kind="stable")
    ps = p[order]
    rank = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate((m - rank + 1) * ps)
    else:
        # p / (rank / m), in statsmodels' order of operations so that the results agree to the bit.
        ecdf = rank / float(m)
        if method == "fdr_by":
            ecdf = ecdf / np.sum(1.0 / rank)
        adj = np.minimum.accumulate((ps / ecdf)[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


# ---------------------------------------------------------------- the result


def _labels(n: int) -> list[str]:
    """a, b, ..., z, aa, ab, ...: short marks for the report."""
    out = []
    for i in range(n):
        s = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            s = chr(ord("a") + r) + s
        out.append(s)
    return out


def _latex_escape(s: str) -> str:
    repl = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(repl.get(c, c) for c in s)


def _markdown_escape(s: str) -> str:
    return s.replace("|", r"\|")


@dataclass(frozen=True, repr=False)
class SystemsComparison:
    """Result of :func:`compare_systems`.

    Attributes
    ----------
    names : tuple of str
        The systems, in the order given.
    metric : str
        The metric's name (a callable's ``__name__``).
    metric_values : tuple
        Each system's metric on the full data (accuracy: mean score; "sum", "uas", "las": the
        sum, as compare() reports them; F1 and the like: from the summed counts).
    rows : tuple of SystemPair
        One per compared pair, in the order compared.
    alternative : str
    correction : str or None
    alpha : float
    baseline : str or None
        Set when every system was compared against this one only.
    confidence_level : float or None
        Level of the intervals of the rows and of ``system_intervals`` (None: none asked for).
    system_intervals : tuple of (float, float)
        Each system's metric's bootstrap percentile interval (empty without intervals): for
        sums and means of integer scores over a range of at most 1,024 (0/1, counts, ratings),
        the interval of infinitely many resamples (the quantiles of the resampled mean's
        distribution by the saddlepoint approximation, no sampling noise); for other metrics,
        real-valued scores and units of several items, from the shared paired resamples.
    provenance : dict
        What produced the result, for a dashboard: pairperm version, items and units,
        method, n_resamples, seed and the bootstrap's resamples and seed (empty for results
        read from JSON written without it).

    Examples
    --------
    >>> import pairperm
    >>> res = pairperm.compare_systems({"A": [5, 7, 9, 4, 8, 6, 9, 8], "B": [4, 7, 6, 4, 5, 6, 5, 6],
    ...                                 "C": [5, 8, 9, 4, 8, 7, 9, 8]}, metric="sum")
    >>> res.names, res.metric_values
    (('A', 'B', 'C'), (56, 43, 58))
    >>> row = res.rows[2]
    >>> print(row.system_a, row.system_b, f"{row.pvalue:.6g} {row.pvalue_adjusted:.6g}", row.significant)
    B C 0.015625 0.046875 True
    >>> for line in res.to_markdown().splitlines()[:5]:
    ...     print(line)
    | | system | sum |
    |---|---|---:|
    | a | A | 56 |
    | b | B | 43 |
    | c | C | **58**<sup>b</sup> |
    >>> pairperm.SystemsComparison.from_json(res.to_json()) == res
    True
    """

    names: tuple
    metric: str
    metric_values: tuple
    rows: tuple
    alternative: str
    correction: Optional[str]
    alpha: float
    baseline: Optional[str] = None
    confidence_level: Optional[float] = None
    system_intervals: tuple = ()
    provenance: Mapping = field(default_factory=dict)

    # ---- views

    def pvalue_matrix(self, adjusted: bool = True) -> np.ndarray:
        """(n, n) matrix of p-values, NaN on the diagonal and for pairs not compared.

        Entry ``[i, j]`` is the p-value of system i against system j. Two-sided tests are
        symmetric, so both ``[i, j]`` and ``[j, i]`` are filled; one-sided tests fill only the
        direction that was tested (``system_a`` in the row).
        """
        index = {name: i for i, name in enumerate(self.names)}
        out = np.full((len(self.names), len(self.names)), np.nan)
        for r in self.rows:
            i, j = index[r.system_a], index[r.system_b]
            p = r.pvalue_adjusted if adjusted else r.pvalue
            out[i, j] = p
            if self.alternative == "two-sided":
                out[j, i] = p
        return out

    def wins(self) -> dict:
        """name -> the systems it is significantly better than (after correction)."""
        lower = prefers_lower(self.metric)
        value = dict(zip(self.names, self.metric_values))
        out: dict = {name: [] for name in self.names}
        for r in self.rows:
            if not r.significant:
                continue
            if self.alternative == "greater":
                winner, loser = r.system_a, r.system_b
            elif self.alternative == "less":
                winner, loser = r.system_b, r.system_a
            else:
                va, vb = value[r.system_a], value[r.system_b]
                if va == vb or not (math.isfinite(va) and math.isfinite(vb)):
                    continue
                a_better = (va < vb) if lower else (va > vb)
                winner, loser = (r.system_a, r.system_b) if a_better else (r.system_b, r.system_a)
            out[winner].append(loser)
        return out

    def to_dict(self) -> dict:
        """Plain Python values only (str, int, float, bool, None, lists, dicts), as standard JSON
        holds them: an unbounded interval end is None, an absent one (NaN) is left out, an
        undefined metric value is None."""
        return {
            "metric": self.metric,
            "alternative": self.alternative,
            "correction": self.correction,
            "alpha": self.alpha,
            "baseline": self.baseline,
            "confidence_level": self.confidence_level,
            **({"provenance": dict(self.provenance)} if self.provenance else {}),
            "systems": _tasks_module()._system_entries(self.names, self.metric_values, self.system_intervals),
            "pairs": [_tasks_module()._plain_interval(r._asdict()) for r in self.rows],
        }

    def __eq__(self, other: object) -> bool:
        # Through the plain form: rows without an interval hold NaN, which never equals itself.
        return isinstance(other, SystemsComparison) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def to_json(self, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict`; :meth:`from_json` reads it back."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, d: Mapping) -> SystemsComparison:
        level = d.get("confidence_level")
        names, values, intervals = _tasks_module()._read_system_entries(d["systems"], level)
        rows = []
        for r in d["pairs"]:
            r = _tasks_module()._float_interval(r, level)
            if "difference" not in r:  # saved before rows carried it
                r["difference"] = r["metric_a"] - r["metric_b"]
            rows.append(SystemPair(**r))
        return cls(
            names=names,
            metric=d["metric"],
            metric_values=values,
            rows=tuple(rows),
            alternative=d["alternative"],
            correction=d["correction"],
            alpha=d["alpha"],
            baseline=d.get("baseline"),
            confidence_level=level,
            system_intervals=intervals,
            provenance=dict(d.get("provenance", {})),
        )

    @classmethod
    def from_json(cls, text: str) -> SystemsComparison:
        return cls.from_dict(json.loads(text))

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame (pandas is imported only here)."""
        import pandas as pd

        return pd.DataFrame([r._asdict() for r in self.rows], columns=list(SystemPair._fields))

    # ---- reports

    def _caption(self, test_names: str) -> str:
        corr = {None: "no correction", "holm": "Holm-corrected", "bonferroni": "Bonferroni-corrected",
                "fdr_bh": "Benjamini-Hochberg-adjusted", "fdr_by": "Benjamini-Yekutieli-adjusted"}[self.correction]
        scope = f"each system against {self.baseline}" if self.baseline is not None else "all pairs"
        side = {"two-sided": "two-sided", "greater": "one-sided (A better)", "less": "one-sided (A worse)"}[self.alternative]
        n = len(self.rows)
        return (f"marks: the system is significantly better than the systems with these marks "
                f"({side} {test_names}, {scope}, {corr} p <= {self.alpha:g}, {n} comparison{'s' if n != 1 else ''})")

    def _report_rows(self) -> tuple[list[str], list[str], list[bool], str]:
        labels = _labels(len(self.names))
        label_of = dict(zip(self.names, labels))
        wins = self.wins()
        sep = "" if all(len(s) == 1 for s in labels) else ","
        finite = [v for v in self.metric_values if isinstance(v, (int, float)) and math.isfinite(v)]
        best = (min(finite) if prefers_lower(self.metric) else max(finite)) if finite else None
        marks = [sep.join(sorted((label_of[loser] for loser in wins[n]), key=lambda s: (len(s), s))) for n in self.names]
        tests = sorted({r.test for r in self.rows})
        return labels, marks, [best is not None and v == best for v in self.metric_values], " / ".join(tests) or "no test"

    def _value(self, v: Any) -> str:
        # Decimals as the several-task report chooses them: three significant digits of the largest value.
        from ._report import _decimals, format_value  # here: _report builds on this module

        return format_value(v, _decimals(self.metric_values))

    def to_markdown(self) -> str:
        """A report table: one row per system, its metric, and a superscript mark for each
        system it significantly beats after correction (explained below the table)."""
        labels, marks, best, tests = self._report_rows()
        lines = [f"| | system | {_markdown_escape(self.metric)} |", "|---|---|---:|"]
        for lab, name, v, mk, b in zip(labels, self.names, self.metric_values, marks, best):
            cell = self._value(v)
            if b:
                cell = f"**{cell}**"
            if mk:
                cell += f"<sup>{mk}</sup>"
            lines.append(f"| {lab} | {_markdown_escape(name)} | {cell} |")
        lines.append("")
        lines.append(f"Best value in bold; {self._caption(tests)}.")
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """The same report as a LaTeX table (booktabs) with the marks explained in its caption."""
        labels, marks, best, tests = self._report_rows()
        lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{llr}", r"\toprule",
                 rf" & System & {_latex_escape(self.metric)} \\", r"\midrule"]
        for lab, name, v, mk, b in zip(labels, self.names, self.metric_values, marks, best):
            cell = self._value(v)
            if b:
                cell = rf"\textbf{{{cell}}}"
            if mk:
                cell += rf"$^{{\mathrm{{{mk}}}}}$"
            lines.append(rf"{lab} & {_latex_escape(name)} & {cell} \\")
        caption = _latex_escape(self._caption(tests)).replace("p <= ", "$p \\leq$ ")
        lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{Best value in bold; {caption}.}}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def to_table(self, max_rows: Optional[int] = None) -> str:
        """Plain-text table of the pairs (the first and last max_rows / 2 when there are more)."""
        head = (f"SystemsComparison(metric={self.metric!r}, systems={len(self.names)}, pairs={len(self.rows)}, "
                f"alternative={self.alternative!r}, correction={self.correction!r}, alpha={self.alpha:g}"
                + (f", baseline={self.baseline!r}" if self.baseline is not None else "") + ")")
        cut = max_rows is not None and len(self.rows) > max_rows
        half = (max_rows or 0) // 2
        shown = self.rows[:half] + self.rows[len(self.rows) - half:] if cut else self.rows
        w = max([len("system_a")] + [len(r.system_a) for r in shown] + [len(r.system_b) for r in shown])
        # The difference in the metric's own units, as metric_a and metric_b (a test's statistic
        # may be a sum where the metric is a mean).
        ci = self.confidence_level is not None
        lines = [head, f"  {'system_a':<{w}}  {'system_b':<{w}}  {'metric_a':>10}  {'metric_b':>10}  "
                       f"{'difference':>11}" + (f"  {'ci_low':>9}  {'ci_high':>9}" if ci else "")
                       + f"  {'pvalue':>10}  {'adjusted':>10}  sig  test"]
        for k, r in enumerate(shown):
            if cut and k == half:
                lines.append(f"  ... {len(self.rows) - 2 * half} more pairs ...")
            lines.append(
                f"  {r.system_a:<{w}}  {r.system_b:<{w}}  {_fmt(r.metric_a):>10}  {_fmt(r.metric_b):>10}  "
                f"{_fmt(r.difference):>11}" + (f"  {_fmt(r.ci_low):>9}  {_fmt(r.ci_high):>9}" if ci else "")
                + f"  {r.pvalue:>10.4g}  {r.pvalue_adjusted:>10.4g}  {'*' if r.significant else ' ':^3}  {r.test}"
            )
        return "\n".join(lines)

    def plot(self, ax: Any = None, adjusted: bool = True, alpha: Optional[float] = None, *, order: Any = None,
             cell_labels: Optional[bool] = None, task: Optional[str] = None) -> Any:
        """Draw :meth:`pvalue_matrix` with :func:`pairperm.plot_pvalue_matrix` (needs matplotlib).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw into; a new figure is made when None.
        adjusted : bool
            Show the adjusted p-values (default) or the raw ones.
        alpha : float, optional
            Cells with ``p <= alpha`` are marked (a ``*`` after the label, or a dot), the
            rule of the ``significant`` column; default: the comparison's ``alpha``.
        order : None, "score", "cluster" or sequence, optional
            Order of the systems, as in :func:`pairperm.plot_pvalue_matrix`; ``"score"``
            orders by :attr:`metric_values`, best first.
        cell_labels : bool, optional
            Label each cell with its p-value; default: up to 15 systems, dots beyond.
        task : str, optional
            The task's name, before the title (matrices of several tasks look alike).

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> import pairperm
        >>> scores = {"A": [5, 7, 9, 4, 8, 6, 9, 8], "B": [4, 7, 6, 4, 5, 6, 5, 6],
        ...           "C": [5, 8, 9, 4, 8, 7, 9, 8]}
        >>> res = pairperm.compare_systems(scores, metric="sum")
        >>> ax = res.plot()
        >>> sorted(t.get_text() for t in ax.texts)
        ['0.047*', '0.047*', '0.12', '0.12', '0.5', '0.5']
        >>> ax.get_title()
        'pairwise p-values (* Holm-adjusted p <= 0.05)'
        """
        from ._plot import SIGNIFICANT_DOT, plot_pvalue_matrix, pvalue_matrix_title

        level = self.alpha if alpha is None else float(alpha)
        if not 0 < level < 1:
            raise ValueError(f"SystemsComparison.plot: alpha must be in (0, 1); got {alpha!r}")
        # plot_pvalue_matrix marks p < alpha; significance here is p <= alpha, which is
        # p < the next double above alpha.
        scores = [float(v) for v in self.metric_values] if order == "score" else None
        ax = plot_pvalue_matrix(self.pvalue_matrix(adjusted), self.names, alpha=float(np.nextafter(level, 1.0)),
                                ax=ax, order=order, scores=scores, cell_labels=cell_labels)
        kind = _ADJUSTED_NAMES.get(self.correction or "") if adjusted else None
        mark = "*" if ax.texts else SIGNIFICANT_DOT
        ax.set_title(pvalue_matrix_title(f"{mark} {kind + ' ' if kind else ''}p <= {level:g}", task))
        return ax

    def __repr__(self) -> str:
        return self.to_table(max_rows=20)


# ---------------------------------------------------------------- input


def _tasks_module() -> Any:
    from . import _tasks  # here, not at the top: _tasks builds on this module

    return _tasks


def _is_dataframe(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "pandas" and hasattr(x, "columns") and hasattr(x, "iloc")


def _read_systems(scores: Any, names: Optional[Sequence], id_column: Any = None) -> tuple[list[str], list[Any]]:
    """(names, raw per-system arrays). DataFrame columns and mapping keys are read by name; a
    mapping's pandas values are paired by their index labels, never by position."""
    if _is_dataframe(scores):
        columns = list(scores.columns)
        if len(set(map(str, columns))) != len(columns):
            raise ValueError(f"{_FUNC}: DataFrame column names must be unique; got {columns}")
        by_name = {str(c): c for c in columns}
        if id_column is not None:
            ids = _lookup(by_name, id_column, "DataFrame column (id_column)")
            check_unique_labels(scores[ids], f"the id column {str(id_column)!r}", _FUNC)
            if names is not None and str(id_column) in map(str, names):
                raise ValueError(f"{_FUNC}: {str(id_column)!r} is the id column; it cannot also be a system in names")
            del by_name[str(ids)]
            columns = [c for c in columns if c is not ids]
        chosen = columns if names is None else [_lookup(by_name, n, "DataFrame column") for n in names]
        raw = [scores[c].to_numpy() for c in chosen]
        if names is None:
            _refuse_id_columns([str(c) for c in chosen], raw)
        return [str(c) for c in chosen], raw
    if id_column is not None:
        raise ValueError(f"{_FUNC}: id_column names a column of a DataFrame input; the systems of a mapping are "
                         "paired by their pandas index")
    if isinstance(scores, Mapping):
        keys = list(scores.keys())
        by_name = {str(k): k for k in keys}
        if len(by_name) != len(keys):
            raise ValueError(f"{_FUNC}: system names must be unique as strings; got {keys}")
        chosen = keys if names is None else [_lookup(by_name, n, "system") for n in names]
        labels = [f"system {str(k)!r}" for k in chosen]
        raw = align_by_index([scores[k] for k in chosen], labels, _FUNC)
        if names is None:
            _refuse_id_columns([str(k) for k in chosen], raw)
        return [str(k) for k in chosen], raw
    try:
        arr = np.asarray(scores)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{_FUNC}: scores could not be read as an array of shape (n_systems, N, ...): {exc}") from None
    if arr.ndim < 2:
        raise ValueError(
            f"{_FUNC}: scores must be a mapping name -> per-entry scores, a pandas DataFrame (one column per "
            f"system) or an array of shape (n_systems, N, ...); got shape {arr.shape}"
        )
    if names is None:
        names = [f"system_{i}" for i in range(arr.shape[0])]
    names = [str(n) for n in names]
    if len(names) != arr.shape[0]:
        raise ValueError(f"{_FUNC}: names has {len(names)} entries but scores has {arr.shape[0]} systems (rows)")
    return names, list(arr)


def _refuse_id_columns(sys_names: list[str], raw: list[Any]) -> None:
    """A column of item ids compared as if it were a system gives meaningless p-values."""
    for n, r in zip(sys_names, raw):
        reason = id_column_reason(n, r)
        if reason is not None:
            raise ValueError(f"{_FUNC}: {n!r} looks like a column of item ids, not scores ({reason}); pass "
                             f"id_column={n!r} if it holds the ids of a DataFrame's rows, or names=[...] to choose "
                             "the systems to compare (which may include it)")


def _lookup(by_name: dict, n: Any, what: str) -> Any:
    if str(n) not in by_name:
        raise ValueError(f"{_FUNC}: no {what} named {n!r}; available: {', '.join(map(repr, by_name))}")
    return by_name[str(n)]


def _metric_value(metric: Any, arr: np.ndarray) -> Union[int, float]:
    """A system's metric on the full data, from the registry's metric functions."""
    if callable(metric):
        sums = arr.astype(np.float64).sum(axis=0)[None]
        return float(apply_vectorised(metric, sums, 1, _FUNC, "metric")[0])
    row = METRICS[metric]
    if row.summed:
        return exact_int_sum(arr)
    if row.per_item:
        return float(arr.mean())
    return float(row.value(arr.sum(axis=0).astype(np.float64)))


def _validate_system(metric: Any, name: str, raw: Any) -> np.ndarray:
    label = f"system {name!r}"
    raw = statistics_by_name(raw, metric, label, _FUNC)
    row = metric_named(metric)
    if row is None or (row.per_item and not row.integer):
        arr = as_real_array(raw, label, _FUNC, ndim=(1, 2, 3))
        check_sentence_scores(metric, arr, label, _FUNC)
        if row is not None and arr.ndim == 3:
            raise ValueError(f"{_FUNC}: metric={metric!r} needs per-entry scores of shape (N,), or (N, k) for k samples "
                             f"of each item; {label} has shape {arr.shape}")
        if row is not None and row.kind == "rank":
            check_perplexity(arr, label, _FUNC)
        return arr
    if row.per_item:
        return as_int_array(raw, label, _FUNC, ndim=(1, 2))  # (N, k): k samples of each item
    if row.kind == "ratio":
        arr = as_int_array(raw, label, _FUNC, ndim=2, hint="counts must be non-negative integers")
        if arr.shape[1] not in (2, 3):
            raise ValueError(f"{_FUNC}: metric={metric!r} needs per-entry (tp, fp, fn) counts of shape (N, 3) "
                             f"(or (tp, errors), (N, 2)); {label} has shape {arr.shape}")
        return arr
    arr = as_int_array(raw, label, _FUNC, ndim=(2, 3), hint="pairperm.bootstrap_test takes real-valued statistics")
    check_statistics_shape(metric, arr.shape[1:], _FUNC, label)
    check_counts(arr, label, metric, _FUNC)
    return arr


# ---------------------------------------------------------------- workers (module level: they must pickle)


def _plain(v: Any) -> Union[int, float]:
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    return float(v)


def _engine_of(result: Any) -> str:
    """What ran inside a test: its engine, or for the Wilcoxon test its route ("exact",
    "fourier", "monte_carlo"); the bootstrap has only itself."""
    if isinstance(result, WilcoxonResult):
        return result.method
    return str(getattr(result, "engine", "bootstrap"))


# Exceptions whose arguments are their message alone: the library's own and those of arithmetic.
_MESSAGE_ONLY = (ValueError, TypeError, ZeroDivisionError, OverflowError, FloatingPointError, ArithmeticError,
                 _core.SupportTooLargeError)


@contextlib.contextmanager
def errors_naming(context: str) -> Iterator[None]:
    """An error raised inside says where: "task 'ner': ...", "compare_systems: pair 'A' - 'B': ...".
    The exception itself is raised on (its type, attributes and cause kept), its message
    prefixed where it is the message alone; others (a metric's own exception class) get a note
    where Python has them (3.11+)."""
    try:
        yield
    except Exception as exc:
        if type(exc) in _MESSAGE_ONLY and len(exc.args) == 1 and isinstance(exc.args[0], str):
            exc.args = (f"{context}: {exc.args[0]}",)
        elif hasattr(exc, "add_note"):
            exc.add_note(f"raised in {context}")
        raise


def _pairs_worker(arrays: dict, tasks: list, metric: Any, alternative: Alternative, options: dict,
                  names: dict) -> list:
    """compare() on each (k, i, j, seed) task; returns plain (k, statistic, pvalue, log_pvalue,
    test, engine) tuples. An error names the pair by `names` (system index to name)."""
    out = []
    for k, i, j, seed in tasks:
        opts = dict(options)
        if seed is not None:
            opts["rng"] = seed
        with errors_naming(f"{_FUNC}: pair {names[i]!r} - {names[j]!r}"):
            r = compare(arrays[i], arrays[j], metric, alternative=alternative, **opts)
        p = float(r.pvalue)
        out.append((k, _plain(r.statistic), p, log_pvalue_of(r.result, p), str(r.test), _engine_of(r.result)))
    return out


def log_pvalue_of(result: Any, pvalue: float) -> float:
    """A test result's log p-value: its own where it keeps one (which stays finite where the
    p-value underflows to 0), else the log of the p-value."""
    log_p = getattr(result, "log_pvalue", None)
    if log_p is not None and not math.isnan(log_p):
        return float(log_p)
    return math.log(pvalue) if pvalue > 0 else -math.inf


def _batch_worker(matrix: np.ndarray, pairs: np.ndarray, alternative: str, method: str, n_threads: int) -> tuple:
    """The C++ batch on a sub-matrix of systems, planned with this process's limits (those of
    its compare()); plain NumPy arrays and engine names back."""
    return tuple(_core.batch_grouped_pvalues(matrix, pairs, alternative, n_threads, method, _runner.LIMITS))


# ---------------------------------------------------------------- progress


class _Progress:
    """Calls progress(done, total), or after _PROGRESS_AFTER seconds shows a bar on a terminal's stderr."""

    def __init__(self, progress: Any, total: int):
        if not (progress is None or isinstance(progress, bool) or callable(progress)):
            raise ValueError(f"{_FUNC}: progress must be None, True/False or a callable(done, total); got {progress!r}")
        self.callback = progress if callable(progress) and not isinstance(progress, bool) else None
        self.auto = progress is None or progress is True
        self.force = progress is True
        self.total, self.done = total, 0
        self.t0 = time.perf_counter()
        self.bar: Any = None

    def update(self, k: int) -> None:
        self.done += k
        if self.callback is not None:
            self.callback(self.done, self.total)
            return
        if not self.auto:
            return
        if self.bar is None and (self.force or (time.perf_counter() - self.t0 > _PROGRESS_AFTER and _isatty())):
            self.bar = _make_bar(self.total)
            self.bar.update(self.done - k)
        if self.bar is not None:
            self.bar.update(k)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _isatty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _TextBar:
    def __init__(self, total: int):
        self.total, self.n = total, 0

    def update(self, k: int) -> None:
        self.n += k
        sys.stderr.write(f"\r{_FUNC}: {self.n}/{self.total} pairs")
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")


def _make_bar(total: int) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _TextBar(total)
    return tqdm(total=total, desc=_FUNC, unit="pair", file=sys.stderr)


# ---------------------------------------------------------------- scheduling


def _n_workers(executor: Any, n_jobs: Optional[int]) -> int:
    w = getattr(executor, "_max_workers", None)
    if isinstance(w, int) and w > 0:
        return w
    return n_jobs or 4


def _tiles(pairs: np.ndarray, n_systems: int, n_chunks: int) -> list[np.ndarray]:
    """Group pair indices into tiles (block of systems x block of systems): a tile of B x B
    pairs needs at most 2B systems, so each system is shipped ~n/B times instead of once a pair."""
    block = max(1, math.ceil(n_systems / math.sqrt(2 * max(1, n_chunks))))
    key = (pairs[:, 0] // block) * (n_systems + 1) + pairs[:, 1] // block
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    return [t for t in np.split(order, bounds) if t.size]


@functools.cache
def _compare_options() -> frozenset:
    params = inspect.signature(compare).parameters.values()
    return frozenset(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name != "alternative")


# ---------------------------------------------------------------- the function


def compare_systems(
    scores: Any,
    metric: Union[str, Callable[[np.ndarray], np.ndarray]] = "accuracy",
    *,
    baseline: Optional[str] = None,
    alternative: Alternative = "two-sided",
    correction: Optional[str] = "holm",
    alpha: float = 0.05,
    n_jobs: Optional[int] = None,
    executor: Optional[cf.Executor] = None,
    progress: Any = None,
    names: Optional[Sequence[str]] = None,
    correction_scope: str = "task",
    confidence_level: Optional[float] = 0.95,
    bootstrap_resamples: int = 1000,
    cache: Any = None,
    columns: Optional[Mapping[str, Any]] = None,
    groups: Any = None,
    id_column: Optional[str] = None,
    **options: Any,
) -> Any:
    """Compare many systems evaluated on the same entries: every pair, or each against a baseline.

    Each pair runs the test :func:`pairperm.compare` runs for `metric` (exact wherever one
    exists), and the p-values are corrected for multiple testing over the family of pairs.
    Several tasks at once (``{task: scores}`` or a long table) give a
    :class:`pairperm.MultiTaskComparison`: one long table of pairs with effect sizes and
    confidence intervals, and a systems x tasks report.

    Parameters
    ----------
    scores : mapping, pandas DataFrame or array
        One task: a mapping ``name -> per-entry scores`` (each shaped as
        ``compare(metric=...)`` takes it: ``(N,)`` for accuracy and sums, ``(N, 3)`` for
        F1/precision/recall, ...); pandas Series (or per-system DataFrames) are paired by
        their index labels, which must be the same ids in any order, each once. A DataFrame
        with one column per system (1-D metrics; columns are read by name, rows are the
        items). Or an array of shape ``(n_systems, N, ...)`` with `names`. A system that looks
        like a column of item ids (named ``id``, ``doc_id``, ``index``, ... or counting 0..N-1
        / 1..N) is refused unless chosen with `names`.

        Several tasks: a mapping ``task -> one task's scores`` as above (read as several tasks
        when any value is a mapping, or any value is a DataFrame of
        several columns while `metric` is not one that reads per-system DataFrames of
        statistics (F1, precision, recall, BLEU); array values then need `names`), or a long
        pandas DataFrame with one row per (task, item, system) and columns ``task``, ``item``,
        ``system``, ``score`` (other names through `columns`). A long table is aligned by item
        within each task (items sorted); a missing or duplicated (task, item, system) is an
        error naming it.
    metric : str, callable or mapping
        As in :func:`pairperm.compare`; with several tasks also ``{task: metric}``.
    baseline : str, optional
        Compare each other system (``system_a``) against this one (``system_b``) only.
        Otherwise every unordered pair, in the order given.
    alternative : {"two-sided", "greater", "less"}
        Per pair, as in ``compare(system_a, system_b)`` ("greater": A is better).
    correction : {"holm", "bonferroni", "fdr_bh", "fdr_by", None}
        Multiple-testing adjustment over the pairs compared.
    alpha : float
        A pair is ``significant`` when its adjusted p-value is <= alpha.
    n_jobs : int, optional
        Threads on this machine (default: all cores). With an `executor`, the C++ threads each
        task may use (default 1: the executor supplies the parallelism).
    executor : concurrent.futures.Executor, optional
        Runs the pairs elsewhere (a ProcessPoolExecutor, a dask ``Client.get_executor()``, ...)
        in chunks of pairs, each shipping only the systems it needs; the results are identical
        to the local run. A callable `metric` must then pickle (a module-level function).
    progress : None, bool or callable
        ``callable(done, total)`` is called as pairs finish. None (default) shows a bar on a
        terminal's stderr once a run has taken more than ~2 s (tqdm if installed); False never
        does; True always does.
    names : sequence of str, optional
        Row names of an array input; for a mapping or DataFrame, the systems to compare (by
        name) and their order (in every task).
    correction_scope : {"task", "family"}
        Several tasks: adjust the p-values within each task (default) or over all pairs of all
        tasks.
    confidence_level : float or None
        The level of every interval (default 0.95); None computes none. A pair's
        ``difference`` (metric of A minus metric of B, in the metric's own units) gets the
        interval :func:`pairperm.shift_interval` gives by inverting the permutation test for sums
        and means (accuracy, exact match, sums, real means; per item, or for ``"sum"``, ``"uas"``
        and ``"las"`` per sum),
        and a paired bootstrap percentile interval for the other metrics (F1, BLEU, callables,
        ...) from one shared set of resamples per task (:func:`pairperm.bootstrap_intervals`),
        which also gives those systems' own intervals; a system's own interval for a sum or
        mean of integer scores (over a range of at most 1,024) is the bootstrap percentile
        interval with infinitely many resamples (by the saddlepoint approximation of the
        resampled mean, Davison and Hinkley 1988), for real-valued scores one from the shared
        resamples. One-sided tests get one-sided pair intervals.
        Without ``rng`` the bootstrap is seeded by the task's name, so that reruns report the same
        intervals.
    bootstrap_resamples : int
        Resamples of each task's shared bootstrap (default 1000, as sacrebleu).
    cache : None, str, path or object
        Several tasks: a directory (or an object with ``get(key)`` and ``set(key, value)``)
        holding finished pairs, keyed on a hash of the two systems' data and every option that
        decides the pair's result (metric, alternative, method, n_resamples, the pair's seed,
        confidence level, pairperm version); a repeated or interrupted run computes only the
        pairs it does not find. A callable metric is keyed by what decides its results (its
        code, defaults, closure, the globals and its own attributes it reads, or an installed
        package's function by name and version); one that reads values the cache cannot hash
        (objects of its own classes, callable instances) is refused with cache=. After Ctrl-C
        the pairs finished so far are in the cache, and the KeyboardInterrupt carries them as
        ``exc.partial_result`` (a MultiTaskComparison with ``complete=False``).
    groups : array_like or mapping, optional
        The exchangeable unit of each item (passage, prompt, document ...): one label per
        item, or with several tasks ``{task: labels}`` for the tasks that have units. Items
        of a unit are swapped (and resampled) together: every test runs on the per-unit
        sums, still exact on the integer engines. A pandas Series of labels is matched to the
        items by id (the index of the systems or DataFrame, ``id_column``, or a long table's
        items), in any order; plain labels are in the items' order. Metric values, differences and intervals
        stay per item. See :doc:`/user-guide/units`.
    columns : mapping, optional
        Column names of a long table: ``{"task": ..., "item": ..., "system": ..., "score": ...}``
        (any subset; ``"score"`` may list several columns, e.g. ``("tp", "fp", "fn")`` for F1).
    id_column : str, optional
        The DataFrame column holding the items' ids (checked to be unique): not a system.
    **options
        Passed on to :func:`pairperm.compare` (``method``, ``n_resamples``, ``rng``): every pair
        gets the test, engine and p-value compare() gives it. An ``rng`` (int seed or
        Generator) seeds every pair deterministically from the pair's index, so seeded runs
        repeat exactly whatever `n_jobs` or `executor`; with several tasks, from the names of
        the task and of the two systems (a pair keeps its seed, and its cache entry, whatever
        else is compared), and each task's bootstrap from the task's name.

    Returns
    -------
    SystemsComparison (one task) or MultiTaskComparison (several tasks)

    Examples
    --------
    >>> import pairperm
    >>> scores = {"A": [5, 7, 9, 4, 8, 6, 9, 8],      # correct tokens per sentence
    ...           "B": [4, 7, 6, 4, 5, 6, 5, 6],
    ...           "C": [5, 8, 9, 4, 8, 7, 9, 8]}
    >>> res = pairperm.compare_systems(scores, metric="sum")
    >>> res
    SystemsComparison(metric='sum', systems=3, pairs=3, alternative='two-sided', correction='holm', alpha=0.05)
      system_a  system_b    metric_a    metric_b   difference     ci_low    ci_high      pvalue    adjusted  sig  test
      A         B                 56          43           13          0         24      0.0625       0.125       permutation_test
      A         C                 56          58           -2   -5.33333          0         0.5         0.5       permutation_test
      B         C                 43          58          -15        -24   -5.33333     0.01562     0.04688   *   permutation_test
    >>> res.wins()
    {'A': [], 'B': [], 'C': ['B']}
    >>> b = pairperm.compare_systems(scores, metric="sum", baseline="B", correction=None)
    >>> [(r.system_a, r.system_b, f"{r.pvalue:.6g}") for r in b.rows]
    [('A', 'B', '0.0625'), ('C', 'B', '0.015625')]
    """
    _tasks = _tasks_module()
    if _tasks.is_several_tasks(scores, metric, columns):
        return _tasks.compare_tasks(
            scores, metric, baseline=baseline, alternative=alternative, correction=correction,
            correction_scope=correction_scope, alpha=alpha, n_jobs=n_jobs, executor=executor, progress=progress,
            names=names, confidence_level=confidence_level, bootstrap_resamples=bootstrap_resamples, cache=cache,
            columns=columns, options=options, groups=groups, id_column=id_column)
    _single_task_options(metric, correction_scope, cache, columns)
    level, n_boot = _tasks.interval_options(confidence_level, bootstrap_resamples)
    sys_names, arrays, root, n_jobs, items = _compare_systems_iv(scores, metric, names, alternative, correction,
                                                                 alpha, n_jobs, executor, options, id_column)
    pairs = _pairs(sys_names, baseline)
    task = _tasks.PreparedTask.of("", metric, sys_names, arrays, pairs, groups, items=items)
    out = _run_all(task.arrays, sys_names, pairs, metric, alternative, options, root, n_jobs, executor, progress,
                   units=task.units)
    adjusted = multipletests(out.pvalue, correction)
    values = task.values
    system_ci: tuple = ()
    pair_ci = np.full((len(pairs), 2), math.nan)
    seed = _tasks.interval_seed(root, "")
    if level is not None:
        system_ci, pair_ci = _tasks.task_intervals(task, level, alternative, n_boot, seed,
                                                   _tasks.shift_intervals(task, pairs, alternative, level, n_jobs))
    # As Python floats and bools up front: per-pair indexing of NumPy arrays would cost more than the pair's test.
    rows = tuple(
        SystemPair(sys_names[i], sys_names[j], values[i], values[j], st, p, a, bool(a <= alpha), name, ran,
                   values[i] - values[j], lo, hi, log_p)
        for (i, j), st, p, log_p, a, name, ran, (lo, hi) in zip(
            pairs.tolist(), out.statistic, out.pvalue.tolist(), out.log_pvalue.tolist(),
            np.asarray(adjusted, dtype=np.float64).tolist(), out.test, out.engine, pair_ci.tolist())
    )
    return SystemsComparison(
        names=tuple(sys_names),
        metric=getattr(metric, "__name__", "callable") if callable(metric) else metric,
        metric_values=tuple(values),
        rows=rows,
        alternative=alternative,
        correction=correction,
        alpha=float(alpha),
        baseline=None if baseline is None else str(baseline),
        confidence_level=level,
        system_intervals=system_ci,
        provenance={"pairperm_version": __version__, "n_items": task.n_items, "n_units": task.n_units,
                    "method": str(options.get("method", "auto")), "n_resamples": options.get("n_resamples"),
                    "seed": root, "bootstrap_resamples": n_boot if level is not None else None,
                    "bootstrap_seed": seed if level is not None else None},
    )


def _single_task_options(metric: Any, correction_scope: Any, cache: Any, columns: Any) -> None:
    """Options that only several tasks use are errors on one task, not silently dropped (the
    defaults, and no intervals, are what one task does anyway)."""
    if isinstance(metric, Mapping):
        raise ValueError(f"{_FUNC}: metric as a mapping {{task: metric}} needs several tasks ({{task: scores}} or a "
                         "long table); scores holds one task")
    if correction_scope not in ("task", "family"):
        raise ValueError(f"{_FUNC}: correction_scope must be 'task' or 'family'; got {correction_scope!r}")
    asked = {"cache": cache is not None, "columns": columns is not None}
    for name, given in asked.items():
        if given:
            raise ValueError(f"{_FUNC}: {name}= applies to several tasks ({{task: scores}} or a long table); for one "
                             f"task pass {{'task_name': scores}}")


def _compare_systems_iv(scores: Any, metric: Any, names: Any, alternative: Any, correction: Any, alpha: Any,
                        n_jobs: Any, executor: Any, options: dict, id_column: Any = None) -> tuple:
    """Validate the arguments and every system once: (names, arrays, seed root, n_jobs, items), where
    `items` is a pandas object whose index holds the items' ids in the order of the arrays (None
    when the systems carry no ids)."""
    check_alternative(alternative, _FUNC)
    if correction not in CORRECTIONS:
        raise ValueError(f"{_FUNC}: correction must be one of {', '.join(map(repr, CORRECTIONS))}; got {correction!r}")
    check_probability(alpha, "alpha", _FUNC)
    jobs = check_n_jobs(n_jobs, _FUNC) or None
    if executor is not None and not isinstance(executor, cf.Executor):
        raise ValueError(f"{_FUNC}: executor must be a concurrent.futures.Executor (for dask, pass "
                         f"client.get_executor()); got {type(executor).__name__}")
    if not callable(metric) and metric not in METRICS:
        raise ValueError(f"{_FUNC}: metric must be a callable or one of {', '.join(map(repr, METRICS))}; got {metric!r}")
    # Unknown options fail here, against compare()'s own signature, not in some worker later.
    unknown = sorted(set(options) - _compare_options())
    if unknown:
        raise TypeError(f"{_FUNC}: unexpected option(s) {', '.join(map(repr, unknown))}; options are passed on "
                        f"to pairperm.compare, which takes {', '.join(map(repr, sorted(_compare_options())))}")
    root = seed_root(options.pop("rng", None), _FUNC)
    # As the sampling routes of compare() check them (whatever the data, so that an error does
    # not depend on which pairs the C++ batch takes): those pairs never reach compare()'s check.
    monte_carlo_options(options.get("n_resamples", N_RESAMPLES), None, None, _FUNC)
    sys_names, raw = _read_systems(scores, names, id_column)
    items = _item_ids(scores, raw, id_column)
    if len(sys_names) != len(set(sys_names)):
        raise ValueError(f"{_FUNC}: system names must be unique; got {sys_names}")
    if len(sys_names) < 2:
        raise ValueError(f"{_FUNC}: need at least 2 systems; got {len(sys_names)}")
    arrays = [_validate_system(metric, n, r) for n, r in zip(sys_names, raw)]
    lengths = {n: len(a) for n, a in zip(sys_names, arrays)}
    if len(set(lengths.values())) != 1:
        detail = ", ".join(f"{n!r}: {v}" for n, v in lengths.items())
        raise ValueError(f"{_FUNC}: every system must be scored on the same entries; lengths differ ({detail})")
    if len({a.shape[1:] for a in arrays}) != 1:
        detail = ", ".join(f"{n!r}: {a.shape}" for n, a in zip(sys_names, arrays))
        raise ValueError(f"{_FUNC}: every system must have the same shape of per-entry scores; got {detail}")
    if len(arrays[0]) == 0:
        raise ValueError(f"{_FUNC}: the systems have no entries")
    return sys_names, arrays, root, jobs, items


def _item_ids(scores: Any, raw: list, id_column: Any) -> Any:
    """A pandas object indexed by the items' ids in the order the systems were read (after
    align_by_index), so that other per-item input (groups) is matched by id; None without ids."""
    if _is_dataframe(scores):
        if id_column is None:
            return scores
        by_name = {str(c): c for c in scores.columns}
        return scores.set_index(by_name[str(id_column)])
    return raw[0] if raw and _has_index(raw[0]) else None


def _pairs(sys_names: list, baseline: Any) -> np.ndarray:
    """Every unordered pair in the given order, or (system, baseline) for each other system."""
    n = len(sys_names)
    if baseline is None:
        ii, jj = np.triu_indices(n, k=1)
        return np.stack([ii, jj], axis=1).astype(np.int64)
    if str(baseline) not in sys_names:
        raise ValueError(f"{_FUNC}: baseline {baseline!r} is not one of the systems: {', '.join(map(repr, sys_names))}")
    b = sys_names.index(str(baseline))
    return np.array([(i, b) for i in range(n) if i != b], dtype=np.int64).reshape(-1, 2)


class PairOutcomes:
    """Each pair's test outcome, in the order of the pairs, filled in as they finish."""

    __slots__ = ("statistic", "pvalue", "log_pvalue", "test", "engine")

    def __init__(self, n_pairs: int) -> None:
        self.statistic: list = [None] * n_pairs
        self.pvalue = np.full(n_pairs, np.nan)
        self.log_pvalue = np.full(n_pairs, np.nan)
        self.test: list = [None] * n_pairs
        self.engine: list = [None] * n_pairs

    def set(self, k: int, statistic: Any, pvalue: float, log_pvalue: float, test: str, engine: str) -> None:
        self.statistic[k], self.pvalue[k], self.log_pvalue[k], self.test[k], self.engine[k] = (
            statistic, pvalue, log_pvalue, test, engine)


def _run_all(arrays: list, sys_names: list, pairs: np.ndarray, metric: Any, alternative: Any, options: dict,
             root: Any, n_jobs: Optional[int], executor: Any, progress: Any,
             seed_keys: Optional[Sequence[int]] = None, units: Optional[tuple] = None) -> PairOutcomes:
    """Each pair's outcome: integer sums in the C++ batch, the rest through compare().
    Pair k draws its seed from `root` and ``seed_keys[k]`` (default: k itself). With groups=, the
    arrays are the sums per unit and `units` holds (the items' arrays, each item's unit): compare()
    gets the items and their units, as a caller of compare() would give them (the round-off of
    real-valued scores is relative to the items, not to their sums), and the test is never McNemar's."""
    grouped = units is not None
    n, n_pairs = len(sys_names), len(pairs)
    method = options.get("method", "auto")
    # Which pairs the C++ batch takes: integer sums (and real-valued metrics of two integral systems),
    # whose test is the paired-permutation test (McNemar on 0/1 data under "auto" is the same test).
    row = metric_named(metric)
    integral = [row is not None and row.kind in ("sum", "mean") and method in _BATCH_METHODS
                and (row.integer or _is_integral(a))
                for a in arrays]
    # The 0/1 systems, as compare() decides it. Unit sums that happen to be 0/1 are not 0/1
    # items: compare() runs permutation_test on them.
    binary = [ok and not grouped and a.ndim == 1 and is_binary(a) for ok, a in zip(integral, arrays)]
    in_batch = np.array(integral, dtype=bool)[pairs].all(axis=1)
    outcomes = PairOutcomes(n_pairs)
    prog = _Progress(progress, n_pairs)
    try:
        rest = list(np.flatnonzero(~in_batch))
        batch_idx = np.flatnonzero(in_batch)
        if batch_idx.size:
            # Real-valued metrics take real arrays: their integral systems are converted (and range-checked) here.
            matrix = np.stack([
                (arrays[i] if arrays[i].dtype == np.int64 else as_int_array(arrays[i], f"system {sys_names[i]!r}", _FUNC))
                if integral[i] else np.zeros(len(arrays[0]), np.int64)
                for i in range(n)
            ])
            rest += _run_batch(matrix, pairs, batch_idx, binary, alternative, method, n_jobs, executor, prog, outcomes)
        if rest:
            item_arrays, item_options = (arrays, options) if units is None else (units[0], dict(options, groups=units[1]))
            if units is not None and units[1] is None:
                item_options = options  # k samples of each item: compare() takes the (N, k) scores as they are
            _run_pairs(item_arrays, sys_names, pairs, sorted(rest), metric, alternative, item_options, root, n_jobs,
                       executor, prog, outcomes, seed_keys)
    finally:
        prog.close()
    return outcomes


def _run_batch(matrix: np.ndarray, pairs: np.ndarray, idx: np.ndarray, binary: list, alternative: Alternative,
               method: str, n_jobs: Optional[int], executor: Optional[cf.Executor], prog: _Progress,
               outcomes: PairOutcomes) -> list:
    """p-values of the integer-sum pairs `idx` by the planner's engine; returns the pairs to rerun singly."""
    redo: list = []
    pair_list = pairs.tolist()  # Python ints: per-pair indexing of NumPy arrays costs more than the pair's tail

    def store(sub: np.ndarray, res: tuple) -> None:
        observed, n_varying, pv, log_pv, status, planned = (v.tolist() if isinstance(v, np.ndarray) else v for v in res)
        handed_back = len(redo)
        for t, k in enumerate(sub.tolist()):
            if status[t]:
                redo.append(k)
                continue
            i, j = pair_list[k]
            if method == "auto" and binary[i] and binary[j]:
                # compare() runs McNemar here; its statistic is the count of entries only A got right.
                outcomes.set(k, discordant_counts(n_varying[t], observed[t])[0], pv[t], log_pv[t], "mcnemar_test",
                             _runner.RESULT_ENGINE[planned[t]])
            else:
                outcomes.set(k, observed[t], pv[t], log_pv[t], "permutation_test", _runner.RESULT_ENGINE[planned[t]])
        # The pairs handed back are counted when compare() has run them.
        finished = len(sub) - (len(redo) - handed_back)
        if finished:
            prog.update(finished)

    if executor is None:
        threads = n_jobs or os.cpu_count() or 1
        per_pair = 5e-5 + 2.5e-9 * matrix.shape[1]  # measured: summary O(N) + tail by tilting
        step = max(16, int(_BATCH_CALL_SECONDS * threads / per_pair))
        for start in range(0, idx.size, step):
            sub = idx[start:start + step]
            store(sub, _batch_worker(matrix, pairs[sub], alternative, method, n_jobs or 0))
        return redo

    futures = {}
    for tile in _tiles(pairs[idx], len(matrix), 4 * _n_workers(executor, n_jobs)):
        sub = idx[tile]
        used, local = np.unique(pairs[sub], return_inverse=True)
        futures[executor.submit(_batch_worker, np.ascontiguousarray(matrix[used]),
                                local.reshape(-1, 2).astype(np.int64), alternative, method, n_jobs or 1)] = sub
    _collect(futures, lambda fut: store(futures[fut], fut.result()))
    return redo


def _run_pairs(arrays: list, sys_names: list, pairs: np.ndarray, idx: list, metric: Any, alternative: Alternative,
               options: dict, root: Optional[int], n_jobs: Optional[int], executor: Optional[cf.Executor], prog: _Progress,
               outcomes: PairOutcomes, seed_keys: Optional[Sequence[int]] = None) -> None:
    """compare() on each pair in `idx` (thread pool here, or chunks on the executor)."""
    tasks = [(k, int(pairs[k, 0]), int(pairs[k, 1]), child_seed(root, k if seed_keys is None else int(seed_keys[k])))
             for k in idx]

    def store(results: list) -> None:
        for k, *outcome in results:
            outcomes.set(k, *outcome)
        prog.update(len(results))

    if executor is None:
        workers = min(len(tasks), n_jobs or os.cpu_count() or 1)
        if workers <= 1:
            for t in tasks:
                store(_pairs_worker({t[1]: arrays[t[1]], t[2]: arrays[t[2]]}, [t], metric, alternative, options,
                                    {t[1]: sys_names[t[1]], t[2]: sys_names[t[2]]}))
            return
        generation = _core.cancel_generation()
        calls = [functools.partial(_as_task, generation, _pairs_worker, {t[1]: arrays[t[1]], t[2]: arrays[t[2]]}, [t],
                                   metric, alternative, options, {t[1]: sys_names[t[1]], t[2]: sys_names[t[2]]})
                 for t in tasks]
        futs, threads = _daemon_pool(calls, workers)
        try:
            _collect(futs, lambda fut: store(fut.result()))
        finally:
            # Wait for the running pairs, as leaving an executor's block does: after Ctrl-C,
            # _collect has cancelled them.
            for thread in threads:
                thread.join()
        return

    sel = np.array([[t[1], t[2]] for t in tasks], dtype=np.int64)
    futures = []
    for tile in _tiles(sel, len(arrays), 4 * _n_workers(executor, n_jobs)):
        chunk = [tasks[t] for t in tile.tolist()]
        needed = sorted({t[1] for t in chunk} | {t[2] for t in chunk})
        futures.append(executor.submit(_pairs_worker, {i: arrays[i] for i in needed}, chunk, metric, alternative,
                                       options, {i: sys_names[i] for i in needed}))
    _collect(futures, lambda fut: store(fut.result()))


def _daemon_pool(calls: Sequence[Callable[[], Any]], workers: int) -> tuple[list, list]:
    """Run the calls on `workers` daemon threads: their futures (in the order of the calls) and
    the threads. concurrent.futures' thread pool would do the same, but its workers are joined at
    interpreter exit only after they have run every queued call, so a program whose background
    thread is comparing hundreds of pairs could not end until all of them were done; daemon
    threads let it end at once."""
    futures: list[cf.Future] = [cf.Future() for _ in calls]
    pending = iter(range(len(calls)))
    take = threading.Lock()

    def work() -> None:
        while True:
            with take:
                i = next(pending, None)
            if i is None:
                return
            if not futures[i].set_running_or_notify_cancel():
                continue  # cancelled before it started
            try:
                result = calls[i]()
            except BaseException as exc:
                futures[i].set_exception(exc)
            else:
                futures[i].set_result(result)

    threads = [threading.Thread(target=work, name=f"pairperm-pairs-{k}", daemon=True) for k in range(workers)]
    for thread in threads:
        thread.start()
    return futures, threads


def _as_task(generation: int, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) on a pool thread of this process, its calls into the core cancelled with `generation`."""
    previous = _core.set_task_generation(generation)
    try:
        return fn(*args)
    finally:
        _core.set_task_generation(previous)


def _collect(futures: Any, take: Callable[[cf.Future], None]) -> None:
    """Take results as they finish; on the first error, cancel what has not started. On Ctrl-C,
    also stop the tasks running on this process's threads: Python delivers the signal to the main
    thread only, so their calls into the core are cancelled (they raise KeyboardInterrupt there)."""
    try:
        for fut in cf.as_completed(futures):
            take(fut)
    except BaseException as exc:
        for fut in futures:
            fut.cancel()
        if isinstance(exc, KeyboardInterrupt):
            _core.cancel_calls()
        raise
