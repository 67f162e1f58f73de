"""The result of comparing many systems on several tasks: its pairs, task summaries, views,
reports and JSON."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Optional, Union

from ._comparison import (
    SystemPair,
    SystemsComparison,
    float_interval,
    plain_interval,
    read_system_entries,
    system_entries,
)
from ._formatting import table_number
from ._report import TaskReport
from ._version import __version__

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from matplotlib.axes import Axes

__all__ = ["BOOTSTRAP_RESAMPLES", "MultiTaskComparison", "TaskPair", "TaskSummary"]

# Resamples of the paired bootstrap (sacrebleu's default): one shared set per task.
BOOTSTRAP_RESAMPLES = 1000


class TaskPair(NamedTuple):
    """One compared pair of one task: A against B.

    ``difference`` is the metric of A minus the metric of B in the metric's own units (a
    difference of accuracies, of sums, of F1 ...), ``ci_low``/``ci_high`` its confidence
    interval (NaN when intervals were not asked for); the other fields are those of
    :class:`pairperm.SystemPair`.
    """

    task: str
    system_a: str
    system_b: str
    metric_a: Union[int, float]
    metric_b: Union[int, float]
    difference: Union[int, float]
    ci_low: float
    ci_high: float
    statistic: Union[int, float]
    pvalue: float
    pvalue_adjusted: float
    significant: bool
    test: str
    engine: str
    # log(pvalue), kept where the p-value underflows to 0 (deep tails of exact tests): it orders
    # pairs whose p-values all read 0.
    log_pvalue: float = math.nan


@dataclass(frozen=True)
class TaskSummary:
    """What one task compared: its systems, their metric values and intervals, and its size.

    ``system_intervals`` holds each system's (low, high) bootstrap percentile interval (empty
    without intervals; for sums and means of integer scores over a range of at most 1,024 with
    infinitely many resamples, otherwise from the task's shared paired resamples);
    ``interval_method`` says how the pairs' intervals were made:
    ``"shift_interval"`` (inverting the permutation test), ``"bootstrap_percentile"`` or
    ``""`` (none); ``bootstrap_seed`` is the seed of the task's shared resamples.
    """

    name: str
    metric: str
    systems: tuple
    metric_values: tuple
    system_intervals: tuple
    n_items: int
    n_units: int
    interval_method: str
    bootstrap_seed: Optional[int] = None

    def to_dict(self) -> dict:
        return {
            "name": self.name, "metric": self.metric, "n_items": self.n_items, "n_units": self.n_units,
            "interval_method": self.interval_method, "bootstrap_seed": self.bootstrap_seed,
            "systems": system_entries(self.systems, self.metric_values, self.system_intervals),
        }

    @classmethod
    def from_dict(cls, d: Mapping, confidence_level: Optional[float] = None) -> TaskSummary:
        """Back from :meth:`to_dict`; `confidence_level`: the comparison's (None: none)."""
        names, values, intervals = read_system_entries(d["systems"], confidence_level)
        return cls(name=d["name"], metric=d["metric"], systems=names, metric_values=values, system_intervals=intervals,
                   n_items=d["n_items"], n_units=d["n_units"], interval_method=d["interval_method"],
                   bootstrap_seed=d.get("bootstrap_seed"))


@dataclass(frozen=True, repr=False, eq=False)
class MultiTaskComparison:
    """Result of :func:`pairperm.compare_systems` on several tasks.

    Attributes
    ----------
    tasks : tuple of TaskSummary
        Per task: its metric, systems, metric values (with intervals), items and units.
    rows : tuple of TaskPair
        One per compared pair of each task, tasks in the order given.
    alternative, correction, alpha, baseline :
        As in :class:`pairperm.SystemsComparison`.
    correction_scope : {"task", "family"}
        Whether p-values were adjusted within each task or over all pairs of all tasks.
    confidence_level : float or None
        Level of every interval; None: no intervals were computed.
    method, n_resamples, seed :
        The test options every pair ran with (``seed``: the root of every pair's and every
        task's seed; None when unseeded).
    bootstrap_resamples : int
        Resamples of each task's shared paired bootstrap.
    version : str
        The pairperm version that computed the result.
    complete : bool
        False only for the partial result carried by a KeyboardInterrupt
        (``exc.partial_result``): the finished pairs, corrected among themselves, with the
        intervals computed so far (those of sums and means; the bootstrapped intervals of
        other metrics and of the systems, made per task at the end, are NaN).

    Examples
    --------
    >>> import pairperm
    >>> res = pairperm.compare_systems({
    ...     "pos": {"A": [5, 7, 9, 4, 8, 6, 9, 8], "B": [4, 7, 6, 4, 5, 6, 5, 6]},
    ...     "qa": {"A": [1, 0, 1, 1, 0, 1], "B": [0, 0, 1, 0, 0, 1]},
    ... }, metric={"pos": "sum", "qa": "accuracy"})
    >>> [(r.task, r.difference, r.ci_low, r.ci_high, r.pvalue) for r in res.rows]
    [('pos', 13, 0.0, 24.0, 0.0625), ('qa', 0.3333333333333333, 0.0, 1.0, 0.5)]
    >>> pairperm.MultiTaskComparison.from_json(res.to_json()) == res
    True
    """

    tasks: tuple
    rows: tuple
    alternative: str
    correction: Optional[str]
    correction_scope: str
    alpha: float
    baseline: Optional[str]
    confidence_level: Optional[float]
    method: str = "auto"
    n_resamples: Optional[int] = None
    seed: Optional[int] = None
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES
    version: str = __version__
    complete: bool = True
    # Each task's systems' scores per unit (metrics by name): what task(name).ranks() resamples;
    # not in the JSON.
    unit_scores: Mapping = field(default_factory=dict, compare=False)

    # ---- views

    @property
    def task_names(self) -> tuple:
        return tuple(t.name for t in self.tasks)

    def task(self, name: str) -> SystemsComparison:
        """One task's pairs as a :class:`pairperm.SystemsComparison` (its p-value matrix, plot,
        report and wins), with the adjusted p-values of this comparison."""
        if name not in self.task_names:
            raise ValueError(f"MultiTaskComparison.task: no task named {name!r}; tasks: "
                             f"{', '.join(map(repr, self.task_names))}")
        summary = self.tasks[self.task_names.index(name)]
        rows = tuple(
            SystemPair(r.system_a, r.system_b, r.metric_a, r.metric_b, r.statistic, r.pvalue,
                                r.pvalue_adjusted, r.significant, r.test, r.engine, r.difference, r.ci_low, r.ci_high,
                                r.log_pvalue)
            for r in self.rows if r.task == name
        )
        return SystemsComparison(
            names=summary.systems, metric=summary.metric, metric_values=summary.metric_values, rows=rows,
            alternative=self.alternative, correction=self.correction, alpha=self.alpha, baseline=self.baseline,
            confidence_level=self.confidence_level, system_intervals=summary.system_intervals,
            unit_scores=tuple(self.unit_scores.get(name, ())),
        )

    def to_frame(self) -> Any:
        """The long table as a pandas DataFrame, one row per pair (pandas is imported only here)."""
        import pandas as pd

        return pd.DataFrame([r._asdict() for r in self.rows], columns=list(TaskPair._fields))

    def to_dict(self) -> dict:
        """Plain Python values: the options and provenance, every task, every pair (an interval
        end that is unbounded (one-sided) is None; one that is absent (``confidence_level=None``,
        or no interval could be made) is left out; an undefined metric value is None)."""
        return {
            "pairperm_version": self.version,
            "complete": self.complete,
            "alternative": self.alternative,
            "correction": self.correction,
            "correction_scope": self.correction_scope,
            "alpha": self.alpha,
            "baseline": self.baseline,
            "confidence_level": self.confidence_level,
            "method": self.method,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "bootstrap_resamples": self.bootstrap_resamples,
            "tasks": [t.to_dict() for t in self.tasks],
            "pairs": [plain_interval(r._asdict()) for r in self.rows],
        }

    def __eq__(self, other: object) -> bool:
        # Through the plain form: rows without an interval hold NaN, which never equals itself.
        return isinstance(other, MultiTaskComparison) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def to_json(self, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict` (standard JSON, no NaN or Infinity: an unbounded interval
        end is ``null``, an absent one is left out); :meth:`from_json` reads it back."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, d: Mapping) -> MultiTaskComparison:
        return cls(
            tasks=tuple(TaskSummary.from_dict(t, d["confidence_level"]) for t in d["tasks"]),
            rows=tuple(TaskPair(**float_interval(r, d["confidence_level"])) for r in d["pairs"]),
            alternative=d["alternative"], correction=d["correction"], correction_scope=d["correction_scope"],
            alpha=d["alpha"], baseline=d["baseline"], confidence_level=d["confidence_level"], method=d["method"],
            n_resamples=d["n_resamples"], seed=d["seed"], bootstrap_resamples=d["bootstrap_resamples"],
            version=d["pairperm_version"], complete=d.get("complete", True),
        )

    @classmethod
    def from_json(cls, text: str) -> MultiTaskComparison:
        return cls.from_dict(json.loads(text))

    # ---- reports and plots

    def report(self, baseline: Optional[str] = None, *, intervals: bool = True, decimals: Optional[int] = None) -> Any:
        """The systems x tasks report (:class:`pairperm.TaskReport`); see there for the marks."""
        return TaskReport.from_comparison(self, baseline=baseline, intervals=intervals, decimals=decimals)

    def to_markdown(self, baseline: Optional[str] = None) -> str:
        """:meth:`report` as a Markdown table."""
        return str(self.report(baseline).to_markdown())

    def to_latex(self, baseline: Optional[str] = None, *, layout: str = "auto") -> str:
        """:meth:`report` as a LaTeX (booktabs) table: a row per system (``layout="wide"``), a
        row per task (``"tall"``), or whichever fits a page (``"auto"``)."""
        return str(self.report(baseline).to_latex(layout=layout))

    def _repr_html_(self) -> str:
        return str(self.report()._repr_html_())

    def difference_table(self) -> dict:
        """What :func:`pairperm.plot_differences` draws from: the long table's rows, each task's
        metric, and the comparison's alpha, baseline, correction and confidence level."""
        return {"rows": [r._asdict() for r in self.rows], "metrics": {t.name: t.metric for t in self.tasks},
                "alpha": self.alpha, "baseline": self.baseline, "correction": self.correction,
                "confidence_level": self.confidence_level}

    def plot_differences(self, baseline: Optional[str] = None, ax: Any = None,
                         **kwargs: Any) -> npt.NDArray[np.object_]:
        """Each system's difference to `baseline` on every task, with its interval, drawn by
        :func:`pairperm.plot_differences` (default baseline: the comparison's; significance from
        ``pvalue_adjusted`` at the comparison's alpha; each task's metric on its axis and the
        correction and confidence level in the legend)."""
        from ._plot_systems import plot_differences

        base = baseline if baseline is not None else self.baseline
        return plot_differences(self, baseline=base, ax=ax, **kwargs)

    def plot(self, task: str, **kwargs: Any) -> Axes:
        """One task's p-value matrix (:meth:`pairperm.SystemsComparison.plot` of :meth:`task`),
        with the task's name in its title."""
        return self.task(task).plot(task=task, **kwargs)

    def to_table(self, max_rows: Optional[int] = None) -> str:
        """Plain-text table of the pairs (the first and last max_rows / 2 when there are more)."""
        head = (f"MultiTaskComparison(tasks={len(self.tasks)}, pairs={len(self.rows)}, "
                f"alternative={self.alternative!r}, correction={self.correction!r}, "
                f"correction_scope={self.correction_scope!r}, alpha={self.alpha:g}, "
                f"confidence_level={self.confidence_level!r}"
                + (f", baseline={self.baseline!r}" if self.baseline is not None else "")
                + ("" if self.complete else ", complete=False") + ")")
        cut = max_rows is not None and len(self.rows) > max_rows
        half = (max_rows or 0) // 2
        shown = self.rows[:half] + self.rows[len(self.rows) - half:] if cut else self.rows
        wt = max([4] + [len(r.task) for r in shown])
        w = max([len("system_a")] + [len(r.system_a) for r in shown] + [len(r.system_b) for r in shown])
        lines = [head, f"  {'task':<{wt}}  {'system_a':<{w}}  {'system_b':<{w}}  {'difference':>11}  "
                       f"{'ci_low':>10}  {'ci_high':>10}  {'pvalue':>10}  {'adjusted':>10}  sig"]
        for k, r in enumerate(shown):
            if cut and k == half:
                lines.append(f"  ... {len(self.rows) - 2 * half} more pairs ...")
            lines.append(
                f"  {r.task:<{wt}}  {r.system_a:<{w}}  {r.system_b:<{w}}  {table_number(r.difference):>11}  "
                f"{table_number(r.ci_low):>10}  {table_number(r.ci_high):>10}  {r.pvalue:>10.4g}  {r.pvalue_adjusted:>10.4g}  "
                f"{'*' if r.significant else ' ':^3}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_table(max_rows=20)
