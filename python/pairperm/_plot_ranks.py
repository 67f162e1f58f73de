"""The rank-interval figure: systems best first, each rank interval as a bar, the leader's tie
group marked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ._plot import _axes, pyplot

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_rank_intervals"]


def plot_rank_intervals(ranks: Any, ax: Optional[Axes] = None) -> Axes:
    """Draw each system's rank interval as a horizontal bar (needs matplotlib).

    Systems run top to bottom from the best estimate; a bar spans ``[rank_low, rank_high]`` and a
    dot marks the estimate's own rank. The systems that could be first (the leader's tie group)
    are drawn in the accent colour and named in the legend.

    Parameters
    ----------
    ranks : RankIntervals
        From :func:`pairperm.rank_intervals` or :meth:`SystemsComparison.ranks`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; a new figure is made when None.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import pairperm
    >>> r = pairperm.rank_intervals_from_estimates([3.0, 2.9, 1.0], [0.01, 0.01, 0.01], names=["A", "B", "C"], rng=0)
    >>> ax = pairperm.plot_rank_intervals(r)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['A', 'B', 'C']
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['could be first (A, B)', 'could not']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    ax = _axes(ax)
    records = ranks.to_records()
    n = len(records)
    figure: Any = ax.figure
    # A figure of its own grows with the systems (a SubFigure's height is its parent's to set).
    if hasattr(figure, "set_figheight") and figure.get_figheight() < 0.3 * n + 1:
        figure.set_figheight(0.3 * n + 1)
    leaders = [r for r in records if r["could_lead"]]
    for y, r in enumerate(records):
        # Ranks are whole places: a bar covers each place of the interval, one place too.
        ax.barh(y, r["rank_high"] - r["rank_low"] + 0.8, left=r["rank_low"] - 0.4, height=0.5,
                color="C3" if r["could_lead"] else "C0")
        ax.plot([r["rank"]], [y], "o", color="black", markersize=4)
    ax.set_yticks(range(n))
    ax.set_yticklabels([r["system"] for r in records])
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0.5, n + 0.5)
    if n <= 20:
        ax.set_xticks(range(1, n + 1))
    ax.set_xlabel("rank (1 = best)")
    kind = "simultaneous" if ranks.simultaneous else "marginal"
    ax.set_title(f"{ranks.level:g} {kind} rank intervals")
    line = pyplot().Line2D
    handles = [line([], [], color="C3", linewidth=4, label=f"could be first ({', '.join(r['system'] for r in leaders)})")]
    if len(leaders) < n:
        handles.append(line([], [], color="C0", linewidth=4, label="could not"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return ax
