"""The systems x tasks report of a several-task compare_systems(): one row per system, one
column per task with the system's metric, its interval and a significance mark, as Markdown,
LaTeX (booktabs), HTML and JSON."""

from __future__ import annotations

import html
import json
import math
import numbers
from dataclasses import dataclass
from typing import Any, Optional

from ._formatting import decimals_for, format_value, is_finite_number, latex_escape, markdown_escape
from ._metrics import prefers_lower
from ._multipletests import CORRECTED_WORDS

__all__ = ["TaskReport"]

# Marks as superscript characters: a Markdown table of 30 systems x 12 tasks stays narrow.
_SUPERSCRIPT = {"+": "\u207a", "-": "\u207b"}

#: Layouts of :meth:`TaskReport.to_latex`.
LATEX_LAYOUTS = ("auto", "wide", "tall")
# Task columns of the wide LaTeX table that fit a page's text width (~450 pt): a column with
# its interval beside the value takes ~90 pt, one without ~45 pt.
WIDE_MAX_TASKS = 4
WIDE_MAX_TASKS_BARE = 8



@dataclass(frozen=True)
class TaskCell:
    """One system on one task: its metric, interval, whether it is the task's best and its mark
    ("+" significantly better than the reference, "-" significantly worse, "" neither; None
    when the system was not compared with the reference)."""

    value: Any
    ci_low: float
    ci_high: float
    best: bool
    mark: Optional[str]
    reference: bool


@dataclass(frozen=True)
class TaskReport:
    """Systems x tasks: each system's metric on each task, with its interval and a mark.

    The rule of the marks: every task has a reference system, the `baseline` when one is given
    (to :meth:`pairperm.MultiTaskComparison.report` or to compare_systems), otherwise the
    task's best system (highest metric; lowest for perplexity; the first on a tie). A system
    is marked ``+`` when its pair with the reference is significant (adjusted p-value <=
    alpha, the pair's ``significant``) and it is the better one, ``-`` when significant and
    worse; unmarked otherwise. Against the best system only ``-`` can occur: an unmarked
    system is not significantly worse than the best. The best value of each task is bold; the
    reference's cell is underlined (Markdown, HTML) or in italics (LaTeX) when it is a
    baseline. Intervals are each system's bootstrap percentile interval (``system_intervals``).

    Attributes
    ----------
    systems : tuple of str
        Rows: every system, in the order first met over the tasks.
    tasks : tuple of str
        Columns.
    metrics : tuple of str
        Each task's metric.
    cells : dict
        (system, task) -> TaskCell, for the systems a task has.
    baseline : str or None
        The reference of every task, or None for each task's best system.
    """

    systems: tuple
    tasks: tuple
    metrics: tuple
    cells: dict
    baseline: Optional[str]
    alpha: float
    correction: Optional[str]
    correction_scope: str
    alternative: str
    confidence_level: Optional[float]
    decimals: tuple
    intervals: bool = True

    @classmethod
    def from_comparison(cls, comparison: Any, baseline: Optional[str] = None, *, intervals: bool = True,
                        decimals: Optional[int] = None) -> TaskReport:
        base = baseline if baseline is not None else comparison.baseline
        systems: dict = {}
        for t in comparison.tasks:
            systems.update(dict.fromkeys(t.systems))
        if base is not None and base not in systems:
            raise ValueError(f"TaskReport: baseline {base!r} is not one of the systems: "
                             f"{', '.join(map(repr, systems))}")
        if decimals is not None and not (isinstance(decimals, numbers.Integral) and 0 <= decimals <= 15):
            raise ValueError(f"TaskReport: decimals must be an integer in 0..15; got {decimals!r}")
        cells: dict = {}
        places = []
        compared_pairs: dict = {t.name: set() for t in comparison.tasks}
        for r in comparison.rows:
            compared_pairs[r.task].add(frozenset((r.system_a, r.system_b)))
        for t in comparison.tasks:
            lower = prefers_lower(t.metric)
            finite = [(v, k) for k, v in enumerate(t.metric_values) if is_finite_number(v)]
            best_value = (min if lower else max)(v for v, _ in finite) if finite else None
            best_index = next((k for v, k in finite if v == best_value), None)
            ref = base if base is not None else (t.systems[best_index] if best_index is not None else None)
            wins = comparison.task(t.name).wins()
            places.append(decimals if decimals is not None else decimals_for(t.metric_values))
            for k, (name, v) in enumerate(zip(t.systems, t.metric_values)):
                low, high = t.system_intervals[k] if t.system_intervals else (math.nan, math.nan)
                compared = ref is None or name == ref or frozenset((name, ref)) in compared_pairs[t.name]
                mark: Optional[str] = None
                if compared and ref is not None and name != ref:
                    mark = "+" if ref in wins[name] else "-" if name in wins[ref] else ""
                elif compared:
                    mark = ""
                cells[name, t.name] = TaskCell(v, low, high, best_value is not None and v == best_value, mark,
                                               ref == name)
        return cls(systems=tuple(systems), tasks=comparison.task_names,
                   metrics=tuple(t.metric for t in comparison.tasks), cells=cells, baseline=base,
                   alpha=comparison.alpha, correction=comparison.correction,
                   correction_scope=comparison.correction_scope, alternative=comparison.alternative,
                   confidence_level=comparison.confidence_level, decimals=tuple(places), intervals=intervals)

    # ---- text of the cells

    def _number(self, v: Any, places: int) -> str:
        return format_value(v, places)

    def _interval_text(self, cell: TaskCell, places: int) -> str:
        if not self.intervals or not (is_finite_number(cell.ci_low) and is_finite_number(cell.ci_high)):
            return ""
        return f" [{cell.ci_low:.{places}f}, {cell.ci_high:.{places}f}]"

    def _headers(self) -> list:
        """Task names, each with its metric unless every task has the same one (then the
        caption names it): narrow columns for many tasks."""
        if len(set(self.metrics)) == 1:
            return list(self.tasks)
        return [f"{t} ({m})" for t, m in zip(self.tasks, self.metrics)]

    def caption(self) -> str:
        ref = f"the baseline {self.baseline}" if self.baseline is not None else "the task's best system"
        scope = "within each task" if self.correction_scope == "task" else "over all pairs of all tasks"
        side = {"two-sided": "two-sided", "greater": "one-sided (A better)", "less": "one-sided (A worse)"}
        metric = f"{self.metrics[0]} on every task; " if len(set(self.metrics)) == 1 else ""
        corrected = "uncorrected" if self.correction is None else CORRECTED_WORDS[self.correction]
        text = (f"{metric}+ / -: significantly better / worse than {ref} ({side[self.alternative]} tests, "
                f"{corrected} {scope}, p <= {self.alpha:g}); best value in bold")
        if self.intervals and self.confidence_level is not None:
            text += f"; [low, high]: {self.confidence_level:.0%} bootstrap interval of the system's metric"
        return text + "."

    # ---- formats

    def to_markdown(self) -> str:
        """A Markdown table, the rule of the marks below it."""
        head = ["system"] + [markdown_escape(h) for h in self._headers()]
        lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(self.tasks) + "|"]
        for s in self.systems:
            row = [markdown_escape(s)]
            for t, places in zip(self.tasks, self.decimals):
                cell = self.cells.get((s, t))
                if cell is None:
                    row.append("")
                    continue
                text = self._number(cell.value, places)
                if cell.best:
                    text = f"**{text}**"
                if cell.reference and self.baseline is not None:
                    text = f"<u>{text}</u>"
                text += self._interval_text(cell, places)
                if cell.mark:
                    text += _SUPERSCRIPT[cell.mark]
                row.append(text)
            lines.append("| " + " | ".join(row) + " |")
        caption = markdown_escape(self.caption()).replace("+ / -", f"{_SUPERSCRIPT['+']} / {_SUPERSCRIPT['-']}", 1)
        return "\n".join(lines) + "\n\n" + caption + "\n"

    def to_latex(self, layout: str = "auto") -> str:
        """A LaTeX table (booktabs; names escaped), the rule of the marks in its caption.

        Parameters
        ----------
        layout : {"auto", "wide", "tall"}
            ``"wide"``: a row per system, a column per task, each interval beside its value.
            ``"tall"``: a row per task (with its metric when the tasks' metrics differ), a
            column per system, each interval on a line of its own below its value, so that
            the columns are narrower too. ``"auto"``: the wide table while it has at most 4
            task columns with intervals (8 without), about what fits the text width of a
            page; beyond, the tall one unless it would have more columns (more systems than
            tasks).

        Returns
        -------
        str
        """
        if layout not in LATEX_LAYOUTS:
            raise ValueError(f"TaskReport.to_latex: layout must be one of {', '.join(map(repr, LATEX_LAYOUTS))}; "
                             f"got {layout!r}")
        if layout == "auto":
            fit = WIDE_MAX_TASKS if self._shows_intervals() else WIDE_MAX_TASKS_BARE
            layout = "wide" if len(self.tasks) <= fit or len(self.systems) > len(self.tasks) else "tall"
        body = self._latex_wide() if layout == "wide" else self._latex_tall()
        caption = latex_escape(self.caption()).replace("p <= ", "$p \\leq$ ").replace("+ / -", "$^{+}$ / $^{-}$")
        lines = [r"\begin{table}[t]", r"\centering", *body, r"\bottomrule", r"\end{tabular}",
                 rf"\caption{{{caption}}}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def _shows_intervals(self) -> bool:
        return self.intervals and any(is_finite_number(c.ci_low) and is_finite_number(c.ci_high) for c in self.cells.values())

    def _latex_value(self, cell: TaskCell, places: int) -> str:
        text = self._number(cell.value, places)
        if cell.best:
            text = rf"\textbf{{{text}}}"
        if cell.reference and self.baseline is not None:
            text = rf"\textit{{{text}}}"
        return text

    @staticmethod
    def _latex_mark(cell: TaskCell) -> str:
        return rf"$^{{{cell.mark}}}$" if cell.mark else ""

    def _latex_wide(self) -> list:
        """Head and rows of the table with a row per system."""
        lines = [r"\begin{tabular}{l" + "r" * len(self.tasks) + "}", r"\toprule",
                 "System & " + " & ".join(latex_escape(h) for h in self._headers()) + r" \\", r"\midrule"]
        for s in self.systems:
            row = [latex_escape(s)]
            for t, places in zip(self.tasks, self.decimals):
                cell = self.cells.get((s, t))
                if cell is None:
                    row.append("")
                    continue
                text = self._latex_value(cell, places)
                interval = self._interval_text(cell, places)
                if interval:
                    text += rf"\,{{\footnotesize{interval}}}"
                row.append(text + self._latex_mark(cell))
            lines.append(" & ".join(row) + r" \\")
        return lines

    def _latex_tall(self) -> list:
        """Head and rows of the table with a row per task, its intervals on a row below."""
        lines = [r"\begin{tabular}{l" + "r" * len(self.systems) + "}", r"\toprule",
                 "Task & " + " & ".join(latex_escape(s) for s in self.systems) + r" \\", r"\midrule"]
        stacked = self._shows_intervals()
        for k, (t, header, places) in enumerate(zip(self.tasks, self._headers(), self.decimals)):
            values, intervals = [latex_escape(header)], [""]
            for s in self.systems:
                cell = self.cells.get((s, t))
                if cell is None:
                    values.append("")
                    intervals.append("")
                    continue
                values.append(self._latex_value(cell, places) + self._latex_mark(cell))
                interval = self._interval_text(cell, places)
                intervals.append(rf"{{\footnotesize{interval}}}" if interval else "")
            if k and stacked:  # two lines a task: space keeps the tasks apart
                lines.append(r"\addlinespace")
            lines.append(" & ".join(values) + r" \\")
            if any(intervals):
                lines.append(" & ".join(intervals) + r" \\")
        return lines

    def _repr_html_(self) -> str:
        esc = html.escape
        head = "".join(f"<th>{esc(t)}<br><small>{esc(m)}</small></th>" for t, m in zip(self.tasks, self.metrics))
        rows = []
        for s in self.systems:
            tds = [f'<th style="text-align:left">{esc(s)}</th>']
            for t, places in zip(self.tasks, self.decimals):
                cell = self.cells.get((s, t))
                if cell is None:
                    tds.append("<td></td>")
                    continue
                text = esc(self._number(cell.value, places))
                if cell.best:
                    text = f"<b>{text}</b>"
                if cell.reference and self.baseline is not None:
                    text = f"<u>{text}</u>"
                interval = self._interval_text(cell, places)
                if interval:
                    text += f"<small>{esc(interval)}</small>"
                if cell.mark:
                    text += f"<sup>{esc(cell.mark)}</sup>"
                tds.append(f'<td style="text-align:right">{text}</td>')
            rows.append("<tr>" + "".join(tds) + "</tr>")
        return (f"<table><thead><tr><th>system</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
                f"<caption style=\"caption-side:bottom\">{esc(self.caption())}</caption></table>")

    def to_dict(self) -> dict:
        """Plain Python values: the rule, the tasks, and one entry per (system, task) (``mark``
        None: not compared with the reference; ``ci_low``/``ci_high`` None: no interval)."""
        return {
            "reference": "baseline" if self.baseline is not None else "best",
            "baseline": self.baseline,
            "alpha": self.alpha,
            "correction": self.correction,
            "correction_scope": self.correction_scope,
            "alternative": self.alternative,
            "confidence_level": self.confidence_level,
            "tasks": [{"name": t, "metric": m} for t, m in zip(self.tasks, self.metrics)],
            "systems": list(self.systems),
            # Standard JSON: no interval is null, not NaN.
            "cells": [{"system": s, "task": t, "metric": c.value,
                       "ci_low": c.ci_low if is_finite_number(c.ci_low) else None,
                       "ci_high": c.ci_high if is_finite_number(c.ci_high) else None,
                       "best": c.best, "mark": c.mark} for (s, t), c in self.cells.items()],
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def __str__(self) -> str:
        return self.to_markdown()
