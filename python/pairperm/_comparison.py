"""The result of comparing many systems on one task: its pairs, views, reports and JSON."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Optional, Union

import numpy as np

from ._formatting import decimals_for, format_value, latex_escape, mark_labels, markdown_escape, short_repr
from ._metrics import prefers_lower
from ._multipletests import ADJUSTED_NAMES, CORRECTED_WORDS
from ._ranking import RankIntervals, flat_units, unit_matrix, units_rank_intervals, value_of_sums
from .typing import SeedLike

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["SystemPair", "SystemsComparison"]


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


@dataclass(frozen=True, repr=False)
class SystemsComparison:
    """Result of :func:`compare_systems`.

    For metrics named in the registry it also keeps each system's scores per unit (not in its
    JSON), from which :meth:`ranks` draws the rank intervals.

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
    # Each system's scores per unit (per-item metrics): what ranks() resamples; not in the JSON.
    unit_scores: tuple = field(default=(), compare=False)

    # ---- views

    def ranks(self, level: float = 0.95, *, simultaneous: bool = True, method: str = "auto",
              n_resamples: int = 1000, rng: SeedLike = None) -> RankIntervals:
        """Each system's rank interval, the systems that could lead and the tau-best, as
        :func:`pairperm.rank_intervals` gives them for the same scores, metric and groups."""
        func = "SystemsComparison.ranks"
        if not self.unit_scores:
            raise ValueError(f"{func}: this comparison keeps no scores (a callable metric, or read from JSON); call "
                             "pairperm.rank_intervals on the scores")
        units = unit_matrix(self.unit_scores)
        return units_rank_intervals(self.names, tuple(float(v) for v in self.metric_values), flat_units(units),
                                    prefers_lower(self.metric), level, simultaneous, method, n_resamples, rng, func,
                                    value_of_sums(self.metric, units.shape[2:]))

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
            "systems": system_entries(self.names, self.metric_values, self.system_intervals),
            "pairs": [plain_interval(r._asdict()) for r in self.rows],
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
        names, values, intervals = read_system_entries(d["systems"], level)
        rows = []
        for r in d["pairs"]:
            r = float_interval(r, level)
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
        corr = "no correction" if self.correction is None else CORRECTED_WORDS[self.correction]
        scope = f"each system against {self.baseline}" if self.baseline is not None else "all pairs"
        side = {"two-sided": "two-sided", "greater": "one-sided (A better)", "less": "one-sided (A worse)"}[self.alternative]
        n = len(self.rows)
        return (f"marks: the system is significantly better than the systems with these marks "
                f"({side} {test_names}, {scope}, {corr} p <= {self.alpha:g}, {n} comparison{'s' if n != 1 else ''})")

    def _report_rows(self) -> tuple[list[str], list[str], list[bool], str]:
        labels = mark_labels(len(self.names))
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
        return format_value(v, decimals_for(self.metric_values))

    def to_markdown(self) -> str:
        """A report table: one row per system, its metric, and a superscript mark for each
        system it significantly beats after correction (explained below the table)."""
        labels, marks, best, tests = self._report_rows()
        lines = [f"| | system | {markdown_escape(self.metric)} |", "|---|---|---:|"]
        for lab, name, v, mk, b in zip(labels, self.names, self.metric_values, marks, best):
            cell = self._value(v)
            if b:
                cell = f"**{cell}**"
            if mk:
                cell += f"<sup>{mk}</sup>"
            lines.append(f"| {lab} | {markdown_escape(name)} | {cell} |")
        lines.append("")
        lines.append(f"Best value in bold; {self._caption(tests)}.")
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """The same report as a LaTeX table (booktabs) with the marks explained in its caption."""
        labels, marks, best, tests = self._report_rows()
        lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{llr}", r"\toprule",
                 rf" & System & {latex_escape(self.metric)} \\", r"\midrule"]
        for lab, name, v, mk, b in zip(labels, self.names, self.metric_values, marks, best):
            cell = self._value(v)
            if b:
                cell = rf"\textbf{{{cell}}}"
            if mk:
                cell += rf"$^{{\mathrm{{{mk}}}}}$"
            lines.append(rf"{lab} & {latex_escape(name)} & {cell} \\")
        caption = latex_escape(self._caption(tests)).replace("p <= ", "$p \\leq$ ")
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
                f"  {r.system_a:<{w}}  {r.system_b:<{w}}  {short_repr(r.metric_a):>10}  {short_repr(r.metric_b):>10}  "
                f"{short_repr(r.difference):>11}" + (f"  {short_repr(r.ci_low):>9}  {short_repr(r.ci_high):>9}" if ci else "")
                + f"  {r.pvalue:>10.4g}  {r.pvalue_adjusted:>10.4g}  {'*' if r.significant else ' ':^3}  {r.test}"
            )
        return "\n".join(lines)

    def plot(self, ax: Optional[Axes] = None, adjusted: bool = True, alpha: Optional[float] = None, *,
             order: Any = None, cell_labels: Optional[bool] = None, task: Optional[str] = None) -> Axes:
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
        from ._plot_systems import SIGNIFICANT_DOT, plot_pvalue_matrix, pvalue_matrix_title

        level = self.alpha if alpha is None else float(alpha)
        if not 0 < level < 1:
            raise ValueError(f"SystemsComparison.plot: alpha must be in (0, 1); got {alpha!r}")
        # plot_pvalue_matrix marks p < alpha; significance here is p <= alpha, which is
        # p < the next double above alpha.
        scores = [float(v) for v in self.metric_values] if order == "score" else None
        ax = plot_pvalue_matrix(self.pvalue_matrix(adjusted), self.names, alpha=float(np.nextafter(level, 1.0)),
                                ax=ax, order=order, scores=scores, cell_labels=cell_labels)
        kind = ADJUSTED_NAMES.get(self.correction or "") if adjusted else None
        mark = "*" if ax.texts else SIGNIFICANT_DOT
        ax.set_title(pvalue_matrix_title(f"{mark} {kind + ' ' if kind else ''}p <= {level:g}", task))
        return ax

    def __repr__(self) -> str:
        return self.to_table(max_rows=20)


# Metric values that a callable metric may leave undefined (NaN): None in JSON, NaN again on reading.
_METRIC_FIELDS = ("metric", "metric_a", "metric_b", "difference")


def plain_interval(row: dict) -> dict:
    """A row (a pair, or a system with its interval) as standard JSON has it: an unbounded
    (infinite) interval end is None, an absent one (NaN: no interval) is left out, so that the
    two stay apart; an undefined (NaN) metric value is None."""
    for end in ("ci_low", "ci_high"):
        if end in row and math.isnan(row[end]):
            del row[end]
        elif end in row and math.isinf(row[end]):
            row[end] = None
    for name in _METRIC_FIELDS:
        if isinstance(row.get(name), float) and math.isnan(row[name]):
            row[name] = None
    if "log_pvalue" in row and not math.isfinite(row["log_pvalue"]):
        row["log_pvalue"] = None  # p = 0 (-inf), or none recorded (NaN)
    return row


def float_interval(row: Mapping, confidence_level: Optional[float]) -> dict:
    """Back from :func:`plain_interval`: a missing end is NaN; None is an unbounded end (NaN
    in files written without intervals, or by versions that wrote NaN ends as None too)."""
    out = dict(row)
    for end, unbounded in (("ci_low", -math.inf), ("ci_high", math.inf)):
        if end not in out:
            out[end] = math.nan
        elif out[end] is None:
            out[end] = math.nan if confidence_level is None else unbounded
    for name in _METRIC_FIELDS:
        if name in out and out[name] is None:
            out[name] = math.nan
    if "pvalue" in out and out.get("log_pvalue") is None:
        # Written before rows kept it, or p = 0: the log of the p-value is what there is.
        out["log_pvalue"] = math.log(out["pvalue"]) if out["pvalue"] > 0 else -math.inf
    return out


def system_entries(names: tuple, values: tuple, intervals: tuple) -> list:
    """The systems of a result as JSON has them: name, metric and its interval, if any."""
    return [plain_interval({"name": n, "metric": v, **({"ci_low": iv[0], "ci_high": iv[1]} if iv else {})})
            for n, v, iv in zip(names, values, intervals or [()] * len(names))]


def read_system_entries(systems: list, confidence_level: Optional[float]) -> tuple[tuple, tuple, tuple]:
    """(names, metric values, intervals) back from :func:`system_entries`; the intervals are
    there when the result has a level (or, in older files, when the entries hold them)."""
    with_intervals = confidence_level is not None or any("ci_low" in s for s in systems)
    read = [float_interval(s, confidence_level) for s in systems]
    return (tuple(s["name"] for s in read), tuple(s["metric"] for s in read),
            tuple((s["ci_low"], s["ci_high"]) for s in read) if with_intervals and read else ())
