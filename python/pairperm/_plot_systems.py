"""Figures of many systems (matplotlib, optional): the p-value matrix of their pairs, and each
system's difference to a baseline on every task with its interval.

matplotlib is imported inside the functions only, so ``import pairperm`` never needs it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Optional, Sequence, Union, cast

import numpy as np
import numpy.typing as npt

from ._metrics import is_summed, prefers_lower
from ._multipletests import ADJUSTED_NAMES
from ._plot import pyplot
from ._validation import check_probability, is_dataframe
from .typing import ArrayLike, Correction

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    # What plot_differences draws into: one Axes, or one per task (a sequence, or an array as
    # matplotlib's subplots returns them).
    _DifferenceAxes = Union[Axes, Sequence[Axes], npt.NDArray[np.object_]]
    # A table's rows, each a mapping column -> value.
    _Records = list[Mapping[str, Any]]
    # (difference, ci_low, ci_high, significant) of each (system, task) drawn.
    _Cells = dict[tuple[str, Any], tuple[float, float, float, bool]]

__all__ = ["plot_differences", "plot_pvalue_matrix", "pvalue_matrix_title"]


# Up to this many systems each cell of a p-value matrix carries its value as text; beyond it
# the numbers no longer fit a cell at a readable size, so significant cells get a dot instead.
MAX_CELL_LABELS = 15


# Tick labels of a figure with one row per system: font size relative to the row height, and
# the range kept legible (below 4 pt nothing is; 10 pt is matplotlib's default).
TICK_FILL = 0.75


TICK_POINTS = (4.0, 10.0)


# Figures made here for many systems grow with them, this many inches a system, up to a page.
INCHES_PER_SYSTEM = 0.24


MAX_FIGURE_INCHES = 16.0


MATRIX_ORDERS = ("score", "cluster")


# How the title of a matrix without cell labels names its significance dots.
SIGNIFICANT_DOT = "\N{BULLET}"


def _height_points(ax: Axes) -> float:
    """The axes' height in points (after an aspect's adjustment), also for Axes of a SubFigure,
    whose position is a fraction of the subfigure's height."""
    fig = ax.figure
    inches = fig.get_figheight() if hasattr(fig, "get_figheight") else fig.bbox.height / fig.dpi
    return float(ax.get_position().height * inches * 72.0)


def _tick_points(ax: Axes, n: int) -> float:
    """Font size in points for n tick labels along the axes' height (one a row)."""
    height = _height_points(ax)
    low, high = TICK_POINTS
    return float(min(high, max(low, TICK_FILL * height / max(n, 1))))


def _matrix_order(order: Any, n: int, names: list[str], scores: Any, lower_is_better: bool, shade: np.ndarray,
                  func: str) -> tuple[int, ...]:
    """Positions of the systems in the drawn order (index k is drawn k-th)."""
    if order is None:
        return tuple(range(n))
    if isinstance(order, str):
        if order == "score":
            if scores is None:
                raise ValueError(f"{func}: order='score' needs scores=, one number a system")
            try:
                s = np.asarray(scores, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"{func}: scores must be {n} numbers, one a system; got {scores!r}") from None
            if s.shape != (n,) or not np.all(np.isfinite(s)):
                raise ValueError(f"{func}: scores must be {n} finite numbers, one a system; got shape {s.shape}")
            # Stable, so systems with equal scores keep their given order.
            return tuple(int(i) for i in np.argsort(s if lower_is_better else -s, kind="stable"))
        if order == "cluster":
            return _cluster_order(shade, func)
        raise ValueError(f"{func}: order must be None, {', '.join(map(repr, MATRIX_ORDERS))} or a sequence of "
                         f"system positions or names; got {order!r}")
    items = list(order)
    if all(isinstance(i, str) for i in items) and items:
        if len(set(names)) != n:
            raise ValueError(f"{func}: order by names needs distinct names")
        unknown = [i for i in items if i not in names]
        if unknown:
            raise ValueError(f"{func}: order names unknown systems: {', '.join(map(repr, unknown[:5]))}")
        items = [names.index(i) for i in items]
    if (any(isinstance(i, bool) or not isinstance(i, (numbers.Integral, np.integer)) for i in items)
            or sorted(int(i) for i in items) != list(range(n))):
        raise ValueError(f"{func}: order must list each of the {n} systems once (positions 0..{n - 1} or names); "
                         f"got {order!r}")
    return tuple(int(i) for i in items)


def _cluster_order(shade: np.ndarray, func: str) -> tuple[int, ...]:
    """Leaves of an average-linkage clustering of the systems' rows of shown log10 p."""
    n = shade.shape[0]
    if n <= 2:
        return tuple(range(n))
    try:
        from scipy.cluster.hierarchy import leaves_list, linkage
    except ImportError:  # pragma: no cover - exercised only without scipy
        raise ImportError(f"{func}: order='cluster' needs scipy: pip install scipy") from None
    rows = shade.copy()
    # A one-sided matrix fills one direction of a pair: read the other from it; a pair never
    # tested and the diagonal count as indistinguishable (log10 p = 0) for the grouping only.
    rows = np.where(np.isnan(rows), rows.T, rows)
    rows = np.nan_to_num(rows, nan=0.0)
    np.fill_diagonal(rows, 0.0)
    tree = linkage(rows, method="average", metric="euclidean", optimal_ordering=True)
    return tuple(int(i) for i in leaves_list(tree))


def pvalue_matrix_title(rule: str, task: Optional[str] = None) -> str:
    """Title of a p-value matrix: the rule of its marks (e.g. ``"* p < 0.05"``), after the
    task's name when there is one (matrices of several tasks look alike)."""
    text = f"pairwise p-values ({rule})"
    return text if task is None else f"{task}: {text}"


def plot_pvalue_matrix(matrix: ArrayLike, names: Sequence[str], alpha: float = 0.05, ax: Optional[Axes] = None, *,
                       order: Union[Literal["score", "cluster"], Sequence[Union[int, str]], None] = None,
                       scores: Optional[ArrayLike] = None, lower_is_better: bool = False,
                       cell_labels: Optional[bool] = None, task: Optional[str] = None) -> Axes:
    """Heatmap of pairwise p-values between systems, significant cells marked.

    Parameters
    ----------
    matrix : array_like of float, shape (n, n)
        ``matrix[i, j]`` is the p-value of system i against system j, in [0, 1]; NaN
        (e.g. the diagonal) is left blank.
    names : sequence of str, length n
        System names for both axes.
    alpha : float
        Cells with ``p < alpha`` are marked significant.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; when None a new figure is made, larger for many systems.
    order : None, "score", "cluster" or sequence, optional
        Order of the systems on both axes. None: as given. ``"score"``: by ``scores``,
        best first (highest, or lowest with ``lower_is_better=True``; ties keep the given
        order). ``"cluster"``: systems with similar rows of p-values side by side, so that
        groups of systems indistinguishable from each other show as blocks (average-linkage
        hierarchical clustering of the rows of ``log10 p`` with optimal leaf ordering; needs
        scipy). A sequence of positions (0..n-1) or names: that order, e.g. one a previous
        call used.
    scores : array_like of float, length n, optional
        One number a system (e.g. its metric); used by ``order="score"``.
    lower_is_better : bool
        With ``order="score"``: the lowest score is the best system (e.g. perplexity).
    cell_labels : bool, optional
        Write each cell's p-value (``*`` after significant ones) or, when False, mark the
        significant cells with a dot. Default: labels up to 15 systems, dots beyond, where
        the numbers no longer fit a cell.
    task : str, optional
        Name of the task the p-values are of; the title starts with it.

    Returns
    -------
    matplotlib.axes.Axes
        Colour is ``log10 p`` (darker is more significant). ``ax.pairperm_order`` holds the
        order drawn, as a tuple of positions in ``names`` (to pass as ``order=`` again).

    Notes
    -----
    Tick labels shrink with the number of systems to one line a row (down to 4 points),
    and the column labels turn vertical beyond 15 systems.

    Examples
    --------
    >>> import numpy as np, pairperm
    >>> p = [[np.nan, 0.01, 0.2], [0.01, np.nan, 0.04], [0.2, 0.04, np.nan]]
    >>> ax = pairperm.plot_pvalue_matrix(p, ["A", "B", "C"], alpha=0.05)
    >>> [t.get_text() for t in ax.texts]
    ['0.01*', '0.2', '0.01*', '0.04*', '0.2', '0.04*']
    >>> ax = pairperm.plot_pvalue_matrix(p, ["A", "B", "C"], order="score", scores=[0.7, 0.9, 0.8])
    >>> ax.pairperm_order, [t.get_text() for t in ax.get_yticklabels()]
    ((1, 2, 0), ['B', 'C', 'A'])
    >>> pairperm.plot_pvalue_matrix(p, ["A", "B", "C"], task="ner").get_title()
    'ner: pairwise p-values (* p < 0.05)'
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    func = "plot_pvalue_matrix"
    p = np.asarray(matrix, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"{func}: matrix must be square (n, n); got shape {p.shape}")
    names = [str(s) for s in names]
    if len(names) != p.shape[0]:
        raise ValueError(f"{func}: {len(names)} names for a {p.shape[0]} x {p.shape[1]} matrix")
    finite = p[~np.isnan(p)]
    if finite.size and (finite.min() < 0 or finite.max() > 1):
        raise ValueError(f"{func}: p-values must lie in [0, 1] (NaN for blank cells); got values in "
                         f"[{finite.min():g}, {finite.max():g}]")
    alpha = float(alpha)
    if not 0 < alpha < 1:
        raise ValueError(f"{func}: alpha must be in (0, 1); got {alpha!r}")
    n = p.shape[0]
    # Colour by log10 p, floored where the colour scale stops resolving anything useful.
    floor = min(-3.0, math.floor(math.log10(alpha)) - 2)
    with np.errstate(divide="ignore"):
        shade = np.clip(np.log10(p), floor, 0.0)
    drawn = _matrix_order(order, n, names, scores, lower_is_better, shade, func)
    labelled = n <= MAX_CELL_LABELS if cell_labels is None else bool(cell_labels)
    if ax is None:
        side = min(MAX_FIGURE_INCHES, max(6.4, 2.5 + INCHES_PER_SYSTEM * n))
        ax = pyplot().subplots(figsize=(side + 1.2, side) if n > MAX_CELL_LABELS else None)[1]
    else:
        pyplot()
    index = np.asarray(drawn, dtype=np.intp)
    p, shade = p[np.ix_(index, index)], shade[np.ix_(index, index)]
    names = [names[i] for i in drawn]
    image = ax.imshow(np.ma.masked_invalid(shade), cmap="viridis", vmin=floor, vmax=0.0)
    ax.figure.colorbar(image, ax=ax, label="log10 p")
    # Light text and dots on the dark half of the colour scale.
    dark = shade < floor / 2
    if labelled:
        for i in range(n):
            for j in range(n):
                if np.isnan(p[i, j]):
                    continue
                mark = "*" if p[i, j] < alpha else ""
                ax.text(j, i, f"{p[i, j]:.2g}{mark}", ha="center", va="center", fontsize="small",
                        color="white" if dark[i, j] else "black")
    else:
        rows, cols = np.nonzero(p < alpha)
        if rows.size:
            cell = _height_points(ax) / n
            ax.scatter(cols, rows, s=(0.3 * cell) ** 2, marker="o", linewidths=0,
                       c=np.where(dark[rows, cols], "white", "black"))
    _label_matrix(ax, names)
    ax.set_title(pvalue_matrix_title(f"{'*' if labelled else SIGNIFICANT_DOT} p < {alpha:g}",
                                     None if task is None else str(task)))
    cast(Any, ax).pairperm_order = drawn  # an attribute of pairperm's own, which Axes does not declare
    return ax


def _label_matrix(ax: Axes, names: list[str]) -> None:
    """The systems along both axes of a matrix, in a font that fits their rows."""
    n = len(names)
    points = _tick_points(ax, n)
    ax.set_xticks(range(n))
    if n > MAX_CELL_LABELS:
        ax.set_xticklabels(names, rotation=90, fontsize=points)
    else:
        ax.set_xticklabels(names, rotation=45, ha="right", fontsize=points)
    ax.set_yticks(range(n))
    ax.set_yticklabels(names, fontsize=points)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)


# Columns plot_differences reads from a comparison table (one row per pair and task).
DIFFERENCE_COLUMNS = ("task", "system_a", "system_b", "difference", "ci_low", "ci_high")


# Tasks side by side in one row of panels up to this many; more wrap into further rows.
MAX_PANEL_COLUMNS = 6


# Corrections the legend of plot_differences can name ("none": the p-values are not adjusted).
CORRECTION_NAMES = (None, "holm", "bonferroni", "fdr_bh", "fdr_by", "none")


# Width of a legend entry in font sizes: a character of its text, and its handle with padding.
LEGEND_CHAR_WIDTH = 0.55


LEGEND_HANDLE_WIDTH = 3.5


def _table_records(table: Any, func: str) -> _Records:
    """The rows of a comparison table as a list of mappings (DataFrame rows or records)."""
    if is_dataframe(table):
        return list(table.to_dict(orient="records"))
    if isinstance(table, Mapping) or isinstance(table, (str, bytes)):
        raise ValueError(f"{func}: table must be a pandas DataFrame or a sequence of rows (mappings); "
                         f"got {type(table).__name__}")
    try:
        records = list(table)
    except TypeError:
        raise ValueError(f"{func}: table must be a pandas DataFrame or a sequence of rows (mappings); "
                         f"got {type(table).__name__}") from None
    for k, row in enumerate(records):
        if not isinstance(row, Mapping):
            raise ValueError(f"{func}: row {k} of the table is a {type(row).__name__}, not a mapping of column -> value")
    return records


def _number(row: Mapping[str, Any], column: str, k: int, func: str) -> float:
    value = row[column]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise ValueError(f"{func}: row {k}, column {column!r} must be a number; got {value!r}")
    return float(value)


def _baseline_of(records: _Records, baseline: Any, func: str) -> str:
    """The given baseline, checked, or the one system every row compares with."""
    systems = {str(r[c]) for r in records for c in ("system_a", "system_b")}
    if baseline is not None:
        if str(baseline) not in systems:
            shown = sorted(systems)
            listed = ", ".join(map(repr, shown[:10])) + (f" and {len(shown) - 10} more" if len(shown) > 10 else "")
            raise ValueError(f"{func}: baseline {baseline!r} is not a system of the table: {listed}")
        return str(baseline)
    common = set.intersection(*({str(r["system_a"]), str(r["system_b"])} for r in records))
    if len(common) != 1:
        raise ValueError(f"{func}: pass baseline=: " + (
            "no system is in every row of the table" if not common
            else f"each of {', '.join(map(repr, sorted(common)))} is in every row"))
    return common.pop()


def plot_differences(table: Any, baseline: Optional[str] = None, ax: Optional[_DifferenceAxes] = None,
                     alpha: Optional[float] = None, *, adjusted: bool = True, lower_is_better: Optional[bool] = None,
                     columns: Optional[int] = None, metric: Union[str, Mapping[Any, str], None] = None,
                     correction: Union[Correction, Literal["none"], None] = None,
                     confidence_level: Optional[float] = None) -> npt.NDArray[np.object_]:
    """Each system's difference to a baseline on each task, with confidence intervals.

    Parameters
    ----------
    table : pandas.DataFrame, sequence of mappings or MultiTaskComparison
        One row per compared pair and task, with columns ``task``, ``system_a``,
        ``system_b``, ``difference`` (metric of A minus metric of B, in the metric's units),
        ``ci_low``, ``ci_high`` (its confidence interval; both NaN: none is drawn; one
        infinite end, as one-sided tests give: drawn from its finite end to the panel's
        edge, with an arrow) and ``pvalue_adjusted`` (``pvalue`` with ``adjusted=False``);
        optionally ``metric`` (the task's metric, named on its x axis; missing or NaN:
        unknown); other columns are ignored. Rows with the baseline as ``system_a`` are
        turned round (difference and interval negated), so every value drawn is *system
        minus baseline*. Rows without the baseline are not drawn. A
        :class:`pairperm.MultiTaskComparison` is read as its long table, with each task's
        metric, its correction, its confidence level, its alpha and its baseline as the
        defaults of the arguments below.
    baseline : str, optional
        The system compared against; default: the comparison's baseline, otherwise the one
        system that is in every row.
    ax : matplotlib.axes.Axes or sequence of Axes, optional
        One Axes per task, in the order tasks first appear in the table; a new figure is
        made when None.
    alpha : float, optional
        Differences with ``pvalue_adjusted <= alpha`` are significant: drawn filled and
        dark; the others open and grey. Default: the comparison's alpha, otherwise 0.05.
    adjusted : bool
        Read significance from ``pvalue_adjusted`` (default) or from ``pvalue``.
    lower_is_better : bool, optional
        Order the systems with the lowest mean difference first; default: when every
        task's metric is known and lower is better (perplexity).
    columns : int, optional
        Panels a row of the grid; default: all tasks in one row up to 6, otherwise as
        few rows as fit 6 panels each.
    metric : str or mapping, optional
        The metric of every task, or ``{task: metric}``; overrides the ``metric`` column.
        The x axis then names it, and says when the metric is reported as a sum over
        items (``"sum"``, ``"uas"``, ``"las"``), so the difference is one of sums.
    correction : {"holm", "bonferroni", "fdr_bh", "fdr_by", "none"}, optional
        The correction that made ``pvalue_adjusted`` (``"none"``: none), named in the
        legend; default: the comparison's, otherwise unnamed ("adjusted p").
    confidence_level : float, optional
        Level of the intervals, named in the legend; default: the comparison's.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        One Axes per task, in the order tasks first appear in the table.

    Notes
    -----
    A panel per task (its own x scale), the systems as rows in the same order on every panel
    (best mean difference over the tasks at the top). A marker is filled when the pair's
    adjusted p-value is at most alpha; each interval is marginal, not adjusted for
    multiplicity, so an interval off 0 may sit beside an open marker (see the user guide's
    figures page).

    Examples
    --------
    >>> import pairperm
    >>> table = [
    ...     {"task": "pos", "system_a": "A", "system_b": "base", "difference": 0.02,
    ...      "ci_low": 0.01, "ci_high": 0.03, "pvalue_adjusted": 0.004},
    ...     {"task": "pos", "system_a": "B", "system_b": "base", "difference": -0.01,
    ...      "ci_low": -0.03, "ci_high": 0.01, "pvalue_adjusted": 0.3},
    ... ]
    >>> (ax,) = pairperm.plot_differences(table, baseline="base", metric="accuracy", correction="holm",
    ...                                   confidence_level=0.95)
    >>> [t.get_text() for t in ax.get_yticklabels()], ax.get_title(), ax.get_xlabel()
    (['A', 'B'], 'pos', 'difference to base\\n(accuracy)')
    >>> [t.get_text() for t in ax.figure.legends[0].get_texts()]
    ['Holm-adjusted p > 0.05', 'Holm-adjusted p <= 0.05', '95% intervals, not adjusted for multiplicity']
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    func = "plot_differences"
    records, alpha, baseline, metric, correction, confidence_level = _difference_options(
        table, alpha, baseline, metric, correction, confidence_level, func)
    p_column = "pvalue_adjusted" if adjusted else "pvalue"
    base = _baseline_of(records, baseline, func)
    tasks, cells = _difference_cells(records, base, p_column, alpha, func)
    metrics = task_metrics(records, metric, tasks, func)
    if lower_is_better is None:
        lower_is_better = all(prefers_lower(metrics[t]) for t in tasks)
    systems = list(dict.fromkeys(s for s, _ in cells))
    mean = np.array([np.mean([cells[s, t][0] for t in tasks if (s, t) in cells]) for s in systems])
    # Stable sort: systems with equal means keep the table's order.
    systems = [systems[i] for i in np.argsort(mean if lower_is_better else -mean, kind="stable")]
    fig, axes, bottom, left = _difference_axes(ax, len(tasks), len(systems), columns, func)
    points = _tick_points(axes[0], len(systems))
    labels = {t: _difference_label(base, metrics[t]) for t in tasks}
    if len(set(labels.values())) > 1:  # one label a metric: every panel names its own
        bottom = [True] * len(tasks)
    marks = _significance_labels(alpha, adjusted, correction)
    for k, (panel, task) in enumerate(zip(axes, tasks)):
        _draw_differences(panel, task, systems, cells, marks)
        # Panels of one figure share the y axis (and its labels): label it once, show it leftmost.
        _label_panel(panel, str(task) if task is not None else "", systems, points,
                     labels[task] if bottom[k] else None, None if fig is None or k == 0 else left[k])
    _difference_legend(fig, axes, marks, cells, confidence_level)
    return np.array(axes, dtype=object)


def _difference_options(table: Any, alpha: Any, baseline: Any, metric: Any, correction: Any, confidence_level: Any,
                        func: str) -> tuple[_Records, float, Any, Any, Any, Optional[float]]:
    """(the table's rows, alpha, baseline, metric, correction, confidence level): from a
    comparison of several tasks, which describes itself, where the arguments leave them open."""
    describe = getattr(table, "difference_table", None)
    if callable(describe):
        given = describe()
        table = given["rows"]
        alpha = given["alpha"] if alpha is None else alpha
        baseline = given["baseline"] if baseline is None else baseline
        metric = given["metrics"] if metric is None else metric
        if correction is None:
            correction = "none" if given["correction"] is None else given["correction"]
        confidence_level = given["confidence_level"] if confidence_level is None else confidence_level
    level = check_probability(0.05 if alpha is None else alpha, "alpha", func)
    if correction not in CORRECTION_NAMES:
        raise ValueError(f"{func}: correction must be one of {', '.join(map(repr, CORRECTION_NAMES))}; "
                         f"got {correction!r}")
    confidence_level = check_probability(confidence_level, "confidence_level", func, optional=True)
    records = _table_records(table, func)
    if not records:
        raise ValueError(f"{func}: the table has no rows")
    return records, level, baseline, metric, correction, confidence_level


def _difference_cells(records: _Records, base: str, p_column: str, alpha: float, func: str) -> tuple[list[Any], _Cells]:
    """(the tasks in order of first appearance, {(system, task): (difference, ci_low, ci_high,
    significant)}) of the rows against `base`, each as system minus baseline."""
    needed = (*DIFFERENCE_COLUMNS, p_column)
    missing = [c for c in needed if any(c not in r for r in records)]
    if missing:
        raise ValueError(f"{func}: the table lacks column{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(map(repr, missing))} (needs {', '.join(needed)})")
    tasks: list[Any] = []
    cells: _Cells = {}
    for k, r in enumerate(records):
        a, b = str(r["system_a"]), str(r["system_b"])
        if base not in (a, b):
            continue
        if a == b:
            raise ValueError(f"{func}: row {k} compares {a!r} with itself")
        task = r["task"]
        diff, low, high, pval = (_number(r, c, k, func) for c in ("difference", "ci_low", "ci_high", p_column))
        if not math.isfinite(diff):
            raise ValueError(f"{func}: row {k}: difference must be finite; got {diff!r}")
        no_interval = math.isnan(low) and math.isnan(high)
        # One infinite end is a one-sided interval; both, or NaN beside a number, mean nothing drawable.
        bounded_once = (math.isfinite(low) or math.isfinite(high)) and low != math.inf and high != -math.inf
        if not no_interval and not (bounded_once and low <= high):
            raise ValueError(f"{func}: row {k}: the interval (ci_low, ci_high) = ({low!r}, {high!r}) must be two "
                             "numbers with ci_low <= ci_high, at most one of them infinite (a one-sided "
                             "interval), or both NaN")
        if not 0 <= pval <= 1:
            raise ValueError(f"{func}: row {k}: {p_column} must be in [0, 1]; got {pval!r}")
        system = a if b == base else b
        if a == base:  # baseline minus system: turn it round
            diff, low, high = -diff, -high, -low
        if (system, task) in cells:
            raise ValueError(f"{func}: row {k}: a second row for {system!r} against {base!r} on task {task!r}")
        if task not in tasks:
            tasks.append(task)
        cells[system, task] = (diff, low, high, pval <= alpha)
    if not cells:
        raise ValueError(f"{func}: no row of the table compares a system with {base!r}")
    return tasks, cells


def _difference_axes(ax: Optional[_DifferenceAxes], n_tasks: int, n_systems: int, columns: Any,
                     func: str) -> tuple[Optional[Figure], list[Axes], list[bool], list[bool]]:
    """(the figure made here or None, one Axes per task, whether each is in the bottom row, and
    in the left column)."""
    if columns is not None and (isinstance(columns, bool) or not isinstance(columns, numbers.Integral) or columns < 1):
        raise ValueError(f"{func}: columns must be a positive integer; got {columns!r}")
    if ax is not None:
        pyplot()
        axes = cast("list[Axes]", [ax] if hasattr(ax, "errorbar") else list(np.ravel(np.asarray(ax, dtype=object))))
        if len(axes) != n_tasks:
            raise ValueError(f"{func}: ax must be one Axes per task: {n_tasks} tasks, {len(axes)} Axes given")
        return None, axes, [True] * n_tasks, [True] * n_tasks
    per_row = int(columns) if columns else math.ceil(n_tasks / math.ceil(n_tasks / MAX_PANEL_COLUMNS))
    grid_rows = math.ceil(n_tasks / per_row)
    height = min(MAX_FIGURE_INCHES, 1.2 + max(2.6, 0.2 * n_systems) * grid_rows)
    fig, grid = pyplot().subplots(grid_rows, per_row, sharey=True, squeeze=False, layout="constrained",
                                   figsize=(min(MAX_FIGURE_INCHES, 1.6 + 2.1 * per_row), height))
    for spare in grid.flat[n_tasks:]:
        spare.remove()
    return (fig, list(grid.flat[:n_tasks]), [k + per_row >= n_tasks for k in range(n_tasks)],
            [k % per_row == 0 for k in range(n_tasks)])


def _draw_differences(panel: Axes, task: Any, systems: list[str], cells: _Cells, marks: tuple[str, str]) -> None:
    """One task's differences and intervals on its panel: significant ones dark and filled, the
    others grey and open; one-sided intervals run to the panel's edge with an arrow."""
    row = {s: k for k, s in enumerate(systems)}
    for shaded in range(1, len(systems), 2):  # alternate rows shaded, to follow a system across panels
        panel.axhspan(shaded - 0.5, shaded + 0.5, color="0.94", linewidth=0, zorder=0)
    panel.axvline(0.0, color="0.3", linewidth=0.9, zorder=1)
    styles = ((False, "0.6", "white", 1.0, marks[0]), (True, "black", "black", 1.4, marks[1]))
    open_ended = []  # (rows, finite ends, side, colour, width) of one-sided intervals
    for significant, colour, face, width, label in styles:
        drawn = [(row[s], *cells[s, task][:3]) for s in systems if (s, task) in cells and cells[s, task][3] == significant]
        if not drawn:
            continue
        at, centre, ci_low, ci_high = (np.array(v, dtype=np.float64) for v in zip(*drawn))
        # Intervals as plain segments [ci_low, ci_high]: a percentile interval need not
        # contain the point estimate, which errorbar's +- distances would require.
        bounded = np.isfinite(ci_low) & np.isfinite(ci_high)
        panel.hlines(at[bounded], ci_low[bounded], ci_high[bounded], colors=colour, linewidth=width, zorder=2)
        panel.plot(centre, at, "o", color=colour, markerfacecolor=face, markersize=4.5, linestyle="none",
                   label=label, zorder=3)
        for side, ends, unbounded in ((1, ci_low, np.isposinf(ci_high)), (-1, ci_high, np.isneginf(ci_low))):
            if unbounded.any():
                # The finite end takes part in the x range; the other runs to the panel's edge.
                panel.update_datalim(np.column_stack([ends[unbounded], at[unbounded]]))
                open_ended.append((at[unbounded], ends[unbounded], side, colour, width))
    if open_ended:
        panel.autoscale_view()
        edges = panel.get_xlim()
        panel.set_xlim(edges)
        for at, ends, side, colour, width in open_ended:
            edge = edges[1] if side > 0 else edges[0]
            panel.hlines(at, ends, edge, colors=colour, linewidth=width, zorder=2)
            panel.plot(np.full(len(at), edge), at, ">" if side > 0 else "<", color=colour, markersize=5,
                       linestyle="none", clip_on=False, zorder=3)


def _label_panel(panel: Axes, title: str, systems: list[str], points: float, xlabel: Optional[str],
                 shared_left: Optional[bool]) -> None:
    """A panel's title, its systems' rows (or, sharing the figure's y axis, whether it shows
    their labels) and its x label where it has one."""
    from matplotlib.ticker import MaxNLocator

    panel.set_title(title, fontsize="medium")
    if shared_left is not None:
        panel.tick_params(axis="y", labelleft=shared_left, labelsize=points)
    else:
        panel.set_yticks(range(len(systems)))
        panel.set_yticklabels(systems, fontsize=points)
        panel.set_ylim(len(systems) - 0.5, -0.5)
    panel.tick_params(axis="y", length=0)
    panel.tick_params(axis="x", labelsize="small")
    panel.xaxis.set_major_locator(MaxNLocator(nbins=4))
    if xlabel is not None:
        panel.set_xlabel(xlabel, fontsize="small")


def _difference_legend(fig: Optional[Figure], axes: list[Axes], marks: tuple[str, str], cells: _Cells,
                       confidence_level: Optional[float]) -> None:
    """The markers' and the intervals' meaning: above a figure made here, else on the first Axes."""
    found: dict[str, Any] = {}
    for panel in axes:
        for handle, label in zip(*panel.get_legend_handles_labels()):
            found.setdefault(label, handle)
    handles = {label: found[label] for label in marks if label in found}
    intervals = [v[1:3] for v in cells.values() if not (math.isnan(v[1]) and math.isnan(v[2]))]
    if intervals:
        from matplotlib.lines import Line2D

        one_sided = any(math.isinf(low) or math.isinf(high) for low, high in intervals)
        handles[_interval_label(confidence_level, one_sided)] = Line2D([], [], color="0.3", linewidth=1.2)
    if fig is not None:
        fig.legend(list(handles.values()), list(handles), loc="outside upper center",
                   ncols=_legend_columns(list(handles), fig), fontsize="small", frameon=False)
    else:
        axes[0].legend(list(handles.values()), list(handles), fontsize="small")


def task_metrics(records: _Records, metric: Any, tasks: list[Any], func: str) -> dict[Any, Optional[str]]:
    """task -> its metric's name (None: unknown), from `metric` or else the table's column."""
    found: dict[Any, str] = {}
    for r in records:
        value = r.get("metric")
        if value is None or (isinstance(value, (float, np.floating)) and math.isnan(value)):
            continue
        task, value = r["task"], str(value)
        if found.setdefault(task, value) != value:
            raise ValueError(f"{func}: task {task!r} has rows of two metrics: {found[task]!r} and {value!r}")
    if metric is None:
        given: dict[Any, str] = {}
    elif isinstance(metric, str):
        given = dict.fromkeys(tasks, metric)
    elif isinstance(metric, Mapping):
        given = {t: str(metric[t]) for t in tasks if t in metric}
    else:
        raise ValueError(f"{func}: metric must be a metric's name or a mapping task -> name; got "
                         f"{type(metric).__name__}")
    return {t: given.get(t, found.get(t)) for t in tasks}


def _difference_label(base: str, metric: Optional[str]) -> str:
    """The x axis of a task's panel: what the difference is of, in the metric's units."""
    if metric is None:
        return f"difference to {base}"
    if is_summed(metric):  # compare_systems reports these as sums, not means per item
        units = "sum over items" if metric == "sum" else f"{metric} summed over items"
    else:
        units = metric
    return f"difference to {base}\n({units})"


def _significance_labels(alpha: float, adjusted: bool, correction: Optional[str]) -> tuple[str, str]:
    """Legend entries of the open and the filled markers: which p-value against which alpha."""
    if not adjusted or correction == "none":
        p = "unadjusted p"
    elif correction is None:
        p = "adjusted p"
    else:
        p = f"{ADJUSTED_NAMES[correction]} p"
    return f"{p} > {alpha:g}", f"{p} <= {alpha:g}"


def _interval_label(confidence_level: Optional[float], one_sided: bool) -> str:
    size = "" if confidence_level is None else f"{100 * confidence_level:g}% "
    return f"{size}{'one-sided ' if one_sided else ''}intervals, not adjusted for multiplicity"


def _legend_columns(labels: list[str], fig: Figure) -> int:
    """All entries in one row when they fit the figure's width, else one a row."""
    from matplotlib.font_manager import FontProperties

    size = FontProperties(size="small").get_size_in_points()
    need = sum(LEGEND_CHAR_WIDTH * len(label) + LEGEND_HANDLE_WIDTH for label in labels) * size
    return len(labels) if need <= fig.get_figwidth() * 72.0 else 1
