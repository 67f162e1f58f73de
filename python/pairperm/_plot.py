"""Figures of null distributions and test results (matplotlib, optional); the figures of many
systems are in pairperm._plot_systems.

matplotlib is imported inside the functions only, so ``import pairperm`` never needs it;
``pip install "pairperm[plot]"`` brings it in.
"""

from __future__ import annotations

import math
import numbers
from types import ModuleType
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from ._formatting import SUM_DRAWN_AS
from ._validation import ALTERNATIVES
from .typing import Alternative

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_distribution", "plot_result", "save_figure"]

# Up to this many possible values of S each gets its own bar; beyond it bars would be
# thinner than a pixel, so the pmf is drawn as a step line.
MAX_BARS = 120
# Drawn range: values with at least this fraction of the peak probability (linear axis), and
# the round-off level of FFT-based pmfs on a log axis.
VISIBLE_LINEAR = 1e-8
FFT_ROUNDOFF = 1e-14


def pyplot() -> ModuleType:
    """The module matplotlib.pyplot, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - exercised only without matplotlib
        raise ImportError(
            "pairperm's plots need matplotlib: pip install \"pairperm[plot]\" (or pip install matplotlib)"
        ) from None
    return plt


def _axes(ax: Optional[Axes]) -> Axes:
    if ax is None:
        new: Axes = pyplot().subplots()[1]
        return new
    pyplot()  # a clear message if matplotlib is missing even when ax is given
    return ax


def _check_alternative(alternative: str, func: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"{func}: alternative must be one of {', '.join(map(repr, ALTERNATIVES))}; got {alternative!r}")


def _fmt_p(p: float, log_p: Optional[float] = None) -> str:
    if p == 0.0 and log_p is not None and math.isfinite(log_p):
        return f"log p = {log_p:.6g}"
    return f"p = {p:.4g}"


def _rejected(values: np.ndarray, observed: Union[int, float], twice_mean: int, alternative: str) -> np.ndarray:
    """Rejection region of the identity statistic; integer arithmetic when observed is an integer."""
    if alternative == "greater":
        return values >= observed
    if alternative == "less":
        return values <= observed
    if isinstance(observed, (numbers.Integral, np.integer)):
        return np.abs(2 * values - twice_mean) >= abs(2 * int(observed) - twice_mean)
    return np.abs(2.0 * values - twice_mean) >= abs(2.0 * observed - twice_mean)


def _observed_value(observed: Any, func: str) -> Union[int, float]:
    if isinstance(observed, (bool, np.bool_)) or not isinstance(observed, (numbers.Real, np.integer, np.floating)):
        raise ValueError(f"{func}: observed must be a number (a value of S); got {observed!r}")
    if isinstance(observed, (numbers.Integral, np.integer)):
        return int(observed)
    value = float(observed)
    if not math.isfinite(value):
        raise ValueError(f"{func}: observed must be finite; got {observed!r}")
    return int(value) if value.is_integer() else value


def _draw(dist: Any, ax: Optional[Axes], observed: Any, alternative: str, log: bool, func: str,
          pvalue: Optional[float] = None, log_pvalue: Optional[float] = None,
          drawn_as: tuple[str, str, str] = SUM_DRAWN_AS) -> Axes:
    _check_alternative(alternative, func)
    pmf = np.asarray(getattr(dist, "pmf", None) if dist is not None else None)
    if dist is None or pmf.ndim != 1:
        shape = None if dist is None else pmf.shape
        raise ValueError(f"{func}: needs a 1-D pairperm.Distribution; got pmf of shape {shape}")
    ax = _axes(ax)
    # Lattice holes (S moves in steps of the local effects' differences) carry no mass: draw the
    # values S can take, not a comb of zeros.
    keep = pmf > 0
    values = np.asarray(dist.support)[keep]
    probs = pmf[keep]
    if values.size == 0:
        raise ValueError(f"{func}: the distribution has no mass to draw")
    # 2 E[S] is an integer (the sum of stay + swap); rounding removes the float dot product's error.
    twice_mean = int(round(2.0 * float(np.dot(values.astype(np.float64), probs) / probs.sum())))
    if observed is not None:
        observed = _observed_value(observed, func)
        reject_all = _rejected(values, observed, twice_mean, alternative)
        if pvalue is None:
            pvalue = min(1.0, math.fsum(probs[reject_all]))

    # What is drawn: on a linear axis mass below VISIBLE_LINEAR of the peak is invisible anyway;
    # on a log axis FFT-based pmfs (absolute accuracy ~1e-16 of the peak) stop at their round-off.
    floor = VISIBLE_LINEAR if not log else (0.0 if getattr(dist, "method", "") == "dp" else FFT_ROUNDOFF)
    shown = probs >= probs.max() * floor
    values, probs = values[shown], probs[shown]
    reject = reject_all[shown] if observed is not None else np.zeros(values.shape, dtype=bool)

    width = float(np.min(np.diff(values))) if values.size > 1 else 1.0
    lo_edge, hi_edge = float(values[0]) - width / 2, float(values[-1]) + width / 2
    if observed is not None:
        lo_edge, hi_edge = min(lo_edge, observed - width / 2), max(hi_edge, observed + width / 2)

    if values.size <= MAX_BARS:
        ax.bar(values[~reject], probs[~reject], width=0.8 * width, color="C0", label="null pmf")
        if reject.any():
            ax.bar(values[reject], probs[reject], width=0.8 * width, color="C3")
    else:
        ax.step(values, probs, where="mid", color="C0", label="null pmf")
        if reject.any():
            ax.fill_between(values, probs, where=reject, step="mid", color="C3", alpha=0.6, linewidth=0)

    if observed is not None:
        label: Optional[str] = f"rejection region, {_fmt_p(float(pvalue or 0.0), log_pvalue)} ({alternative})"
        for start, stop in _regions(observed, twice_mean, alternative, lo_edge, hi_edge):
            ax.axvspan(start, stop, color="C3", alpha=0.12, label=label)
            label = None  # one legend entry for both tails
        if label is not None:  # the region holds no drawn value: keep the p-value in the legend
            ax.plot([], [], color="C3", alpha=0.3, linewidth=8, label=label)
        ax.axvline(observed, color="k", linestyle="--", linewidth=1.2, label=f"observed {drawn_as[0]} = {observed}")
        ax.legend(loc="best", fontsize="small")

    ax.set_xlim(lo_edge - width / 2, hi_edge + width / 2)
    ax.set_xlabel(drawn_as[1])
    ax.set_ylabel(f"P[{drawn_as[0]} = {drawn_as[2]}] under the null")
    if log:
        ax.set_yscale("log")
    return ax


def _regions(observed: Union[int, float], twice_mean: int, alternative: str, lo: float,
             hi: float) -> list[tuple[float, float]]:
    """x-intervals of the rejection region clipped to the drawn support [lo, hi]."""
    if alternative == "greater":
        spans = [(observed, hi)]
    elif alternative == "less":
        spans = [(lo, observed)]
    else:
        dist = abs(2 * observed - twice_mean) / 2
        mu = twice_mean / 2
        spans = [(lo, mu - dist), (mu + dist, hi)]
        if dist == 0:  # every value is at least as extreme: the whole support
            spans = [(lo, hi)]
    return [(max(a, lo), min(b, hi)) for a, b in spans if min(b, hi) > max(a, lo)]


def plot_distribution(dist: Any, ax: Optional[Axes] = None, observed: Any = None,
                      alternative: Alternative = "two-sided", log: bool = False) -> Axes:
    """Draw the null pmf of a 1-D :class:`pairperm.Distribution`.

    Parameters
    ----------
    dist : Distribution
        A 1-D null distribution of S (from :func:`pairperm.null_distribution` or a result's
        ``null_distribution``).
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; a new figure is made when None.
    observed : int or float, optional
        Observed value of S: drawn as a vertical dashed line, with the rejection region
        shaded and its probability (the p-value) in the legend. Greater: ``S >= observed``;
        less: ``S <= observed``; two-sided: ``|S - mu| >= |observed - mu|`` with ``mu`` the
        distribution's mean.
    alternative : {"two-sided", "greater", "less"}
    log : bool
        Logarithmic y axis, to see the tails.

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Values of S that carry no probability (holes of the lattice S lives on) are not
    drawn, nor, on a linear axis, values below 1e-8 of the peak. Up to 120 values are
    drawn as bars (those in the rejection region in red), more as a step line with the
    rejection region filled. The legend's p-value is the pmf summed over the whole
    region; a test's own p-value is more accurate in deep tails (see
    :func:`plot_result`). The pmf of the ``"auto"`` and ``"fft"`` engines has absolute
    accuracy ~1e-16 of its peak, so with ``log=True`` only values above 1e-14 of the
    peak are drawn; ``"dp"`` distributions are accurate relatively and drawn in full.

    Examples
    --------
    >>> import pairperm
    >>> d = pairperm.null_distribution([3, 5, 1, 2, 4], [1, 0, 1, 6, 0], method="dp")
    >>> ax = pairperm.plot_distribution(d, observed=9)
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['rejection region, p = 0.625 (two-sided)', 'observed S = 9', 'null pmf']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    return _draw(dist, ax, observed, alternative, log, "plot_distribution")


def plot_result(result: Any, ax: Optional[Axes] = None, log: bool = False) -> Axes:
    """Draw a test's null distribution, its observed statistic and rejection region.

    Parameters
    ----------
    result : PermutationTestResult or McNemarResult
        A result with a 1-D ``null_distribution`` whose statistic is the sum S itself:
        :func:`pairperm.permutation_test` with an exact method,
        :func:`pairperm.structured_test` with ``statistic=None``, or
        :func:`pairperm.mcnemar_test` (the binomial law of ``n_a_only``).
    ax : matplotlib.axes.Axes, optional
    log : bool
        Logarithmic y axis.

    Returns
    -------
    matplotlib.axes.Axes
        The legend shows the test's own p-value (``result.pvalue``, or ``log_pvalue``
        when it underflows to 0).

    Examples
    --------
    >>> import pairperm
    >>> r = pairperm.permutation_test([12, 7, 30, 9, 15, 22], [11, 7, 27, 9, 13, 22])
    >>> ax = pairperm.plot_result(r)
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['rejection region, p = 0.25 (two-sided)', 'observed S = 6', 'null pmf']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    func = "plot_result"
    dist = getattr(result, "null_distribution", None)
    if dist is None:
        raise ValueError(
            f"{func}: the result has no null distribution (Monte Carlo and bootstrap results keep none); "
            "use an exact method"
        )
    if np.ndim(dist.pmf) != 1:
        raise ValueError(f"{func}: the null distribution is {np.ndim(dist.pmf)}-dimensional; only 1-D S can be drawn")
    statistic = result.statistic
    if not isinstance(statistic, (numbers.Integral, np.integer)) or isinstance(statistic, bool):
        raise ValueError(
            f"{func}: the statistic ({statistic!r}) is a function h(S), not a value of S; draw "
            "result.null_distribution with plot_distribution instead"
        )
    return _draw(dist, ax, int(statistic), result.alternative, log, func,
                 pvalue=float(result.pvalue), log_pvalue=float(getattr(result, "log_pvalue", math.nan)),
                 drawn_as=getattr(result, "_drawn_as", SUM_DRAWN_AS))


def save_figure(draw: Any, path: Any, notice: Any) -> None:
    """Draw with ``draw()`` (which returns the Axes) on the file-only Agg backend, write the
    figure to `path` and print where it went to the stream `notice` (the command line's --plot)."""
    try:
        import matplotlib
    except ImportError:
        raise ValueError('--plot needs matplotlib: pip install "pairperm[plot]"') from None
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    ax = draw()
    try:
        ax.figure.savefig(path, bbox_inches="tight", dpi=120)
    except OSError as exc:
        raise ValueError(f"{path}: cannot write the figure: {exc.strerror or exc}") from None
    finally:
        plt.close(ax.figure)
    print(f"figure: {path}", file=notice)
