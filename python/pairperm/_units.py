"""The exchangeable unit: items that must be swapped together.

Questions that share a passage, or several generations of one prompt, are not exchangeable
one by one; under the null, the paired permutation swaps whole units. Swapping a unit swaps
the sum of its items' local effects, so every test runs unchanged on per-unit sums: the
integer engines stay exact, now over the 2^U swap patterns of U units.

- ``groups=`` labels each item with its unit (any hashable labels of one kind).
- Scores of shape (N, k) hold k samples of each of N items (several generations per
  prompt): the item is the unit, its k samples are summed.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple, Optional

import numpy as np

import pairperm._core as _core

from ._validation import check_paired_index

__all__ = ["PairedUnits", "ScoreRoundoff", "Units", "paired_scores", "read_groups", "sample_sums", "unit_sums"]

# Per-unit int64 sums are formed only while each stays below the magnitude every engine accepts.
_INT64_SAFE = 2**61


class Units(NamedTuple):
    """Items sorted by unit (`order`), where each unit starts in that order (`starts`), and
    the number of units."""

    order: np.ndarray
    starts: np.ndarray
    n_units: int
    largest: int  # items in the largest unit


def read_groups(groups: Any, n: int, func: str, like: Any = None) -> Units:
    """Validate unit labels for n items (aligned by index with `like` when both are pandas
    objects) and sort the items by unit."""
    if like is not None:
        check_paired_index(like, groups, ("x", "groups"), func)
    labels = np.asarray(groups)
    # NumPy reads a list such as [1, "a", nan] as the strings "1", "a" and "nan", merging labels
    # of different kinds and hiding missing ones: unless it holds only integers or only strings,
    # a list is checked as the Python objects it holds.
    if isinstance(groups, (list, tuple)) and labels.dtype.kind not in "iub" and \
            not (labels.dtype.kind == "U" and all(isinstance(v, str) for v in groups)):
        labels = np.asarray(groups, dtype=object)
    if labels.ndim != 1:
        raise ValueError(f"{func}: groups must be one label per item (1-D); got shape {labels.shape}")
    if len(labels) != n:
        raise ValueError(f"{func}: groups must label each of the {n} items; got {len(labels)} labels")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError(f"{func}: groups contains NaN (at index {int(np.argmax(np.isnan(labels)))}); every item needs "
                         "a unit")
    if labels.dtype.kind == "O":
        values = labels.tolist()
        for i, v in enumerate(values):
            if _is_missing(v):
                raise ValueError(f"{func}: groups has a missing label at index {i}; every item needs a unit")
        kinds = {"text" if isinstance(v, (str, bytes)) else "number" if isinstance(v, numbers.Number) else "other"
                 for v in values}
        if len(kinds) > 1:
            raise ValueError(f"{func}: groups mixes labels of different kinds (e.g. numbers and strings, such as "
                             f"1 and '1'); use labels of one kind")
    if labels.dtype.kind not in "biufUSO":
        raise ValueError(f"{func}: groups must hold labels (integers or strings); got dtype {labels.dtype}")
    try:
        _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    except TypeError:
        raise ValueError(f"{func}: groups mixes labels that cannot be compared (e.g. numbers and strings); "
                         "use labels of one kind") from None
    if len(counts) < 2 and n > 0:
        raise ValueError(f"{func}: groups puts all {n} items in one unit: swapping it is the only permutation, "
                         "so nothing can be tested; label each item with its own unit (passage, prompt, ...)")
    order = np.argsort(inverse.reshape(-1), kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)
    return Units(order, starts, int(len(counts)), int(counts.max(initial=0)))


def _is_missing(v: Any) -> bool:
    """None, and the missing values of NumPy and pandas (NaN of any float type, NaT, NA), which
    are the values not equal to themselves; pandas.NA cannot even say so."""
    if v is None:
        return True
    try:
        return bool(v != v)
    except (TypeError, ValueError):
        return True


def unit_sums(arr: np.ndarray, units: Units, name: str, func: str) -> np.ndarray:
    """Sums of `arr` (shape (N, ...)) over each unit's items: shape (U, ...), exact for int64."""
    _check_sum(arr, units.largest, name, func)
    if len(arr) == 0:
        return arr
    return np.add.reduceat(arr[units.order], units.starts, axis=0)


def _check_sum(arr: np.ndarray, terms: int, name: str, func: str) -> None:
    if arr.dtype.kind == "i" and arr.size and int(np.abs(arr).max()) * terms >= _INT64_SAFE:
        raise ValueError(f"{func}: {name} holds integers too large to sum exactly over a unit of {terms} items "
                         "(|value| x unit size must stay below 2**61)")


def sample_sums(arr: np.ndarray, name: str, func: str) -> np.ndarray:
    """(N, k) samples of each item summed over the k samples."""
    if arr.shape[1] == 0:
        raise ValueError(f"{func}: {name} has shape {arr.shape}: each item needs at least one sample")
    _check_sum(arr, arr.shape[1], name, func)
    return arr.sum(axis=1)


class PairedUnits(NamedTuple):
    """Paired scores as sums per unit (:func:`paired_scores`)."""

    x: np.ndarray
    y: np.ndarray
    # The round-off that reading real-valued scores and forming the sums and x - y leaves in
    # each unit's difference (None for integers: exact).
    roundoff: Optional[ScoreRoundoff]
    # The scored items of each unit (None: one item each).
    sizes: Optional[np.ndarray]


def paired_scores(x: np.ndarray, y: np.ndarray, groups: Any, func: str, raw_x: Any = None,
                  names: tuple[str, str] = ("x", "y")) -> PairedUnits:
    """Per-item scores of shape (N,), or (N, k) samples of each item, as sums per unit (the
    groups' units, else the items)."""
    units = None if groups is None else read_groups(groups, len(x), func, like=raw_x)
    xs, ys = x, y
    per_item = 1
    if x.ndim == 2:
        per_item = x.shape[1]
        xs, ys = sample_sums(x, names[0], func), sample_sums(y, names[1], func)
    sizes = None
    if units is not None:
        xs, ys = unit_sums(xs, units, names[0], func), unit_sums(ys, units, names[1], func)
        sizes = np.diff(np.append(units.starts, len(units.order))).astype(np.int64) * per_item
    elif per_item > 1:
        sizes = np.full(len(xs), per_item, dtype=np.int64)
    roundoff = ScoreRoundoff.of(x, y, xs, ys, units) if "f" in (x.dtype.kind, y.dtype.kind) else None
    return PairedUnits(xs, ys, roundoff, sizes)


@dataclass(frozen=True)
class ScoreRoundoff:
    """How far round-off can move each unit's difference X - Y of real-valued scores from its
    value in exact (decimal) arithmetic.

    Each score is read into binary within u |x| (u = 2^-53), a sum of j of them adds at most
    (j - 1) u sum |x|, and X - Y adds u |X - Y|: the computed difference is within
    u (j + 1) (sum |x| + sum |y|), and k = |stay - swap| = 2 |X - Y| within eps times
    ``magnitude = (j + 1) (sum |x| + sum |y|)`` per unit (j scores on each side). The slack of
    the real-valued test (``real_problem`` in the core) sums these, and it is 0 only when the
    scores themselves lie on a binary grid (every score a multiple of 2^grid) fine enough for
    every unit sum and difference to be exact: differences such as 54.7 - 54.6 may land on a
    coarse grid by cancellation while the scores they came from do not.

    ``magnitude`` is in units of 2^exponent (no overflow whatever the scale of the scores).
    """

    magnitude: np.ndarray
    exponent: int
    # The scores of the units that vary, of each system: their binary grid is what decides
    # whether the sums are exact (units whose sums are equal cancel in the core and need none).
    varying_scores: tuple[np.ndarray, np.ndarray]
    # Which units vary.
    varying: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray, y: np.ndarray, xs: np.ndarray, ys: np.ndarray, units: Optional[Units]) -> ScoreRoundoff:
        """From the item scores x, y (shape (N,) or (N, k)) and their unit sums xs, ys."""
        ax, ay = np.abs(x.astype(np.float64)), np.abs(y.astype(np.float64))
        top = max(float(ax.max(initial=0.0)), float(ay.max(initial=0.0)))
        exponent = int(np.frexp(top)[1]) if top > 0 else 0
        ax, ay = np.ldexp(ax, -exponent), np.ldexp(ay, -exponent)  # exact, bar subnormals
        per_item = 1
        if ax.ndim == 2:
            per_item = ax.shape[1]
            ax, ay = ax.sum(axis=1), ay.sum(axis=1)
        count = np.full(len(ax), per_item, dtype=np.float64)
        varying = differ = xs != ys
        if units is not None and len(ax):
            ax, ay = np.add.reduceat(ax[units.order], units.starts), np.add.reduceat(ay[units.order], units.starts)
            sizes = np.diff(np.append(units.starts, len(units.order)))
            count = sizes.astype(np.float64) * per_item
            differ = np.repeat(varying, sizes)[np.argsort(units.order, kind="stable")]
        magnitude = np.ascontiguousarray((count + 1.0) * (ax + ay), dtype=np.float64)
        scores = (np.ascontiguousarray(x[differ], dtype=np.float64), np.ascontiguousarray(y[differ], dtype=np.float64))
        return cls(magnitude, exponent, scores, varying)

    @cached_property
    def grid(self) -> int:
        """Every score of a varying unit is a multiple of 2^grid."""
        xs, ys = self.varying_scores
        return min(_core.grid_exponent(xs, _core.no_score_grid), _core.grid_exponent(ys, _core.no_score_grid))

    @cached_property
    def exact(self) -> bool:
        """Every unit sum, difference and sum of differences of the units that vary is exact in
        binary64 (the core's rule, on the same units): no slack."""
        return bool(_core.real_sums_exact_on_grid(float(self.magnitude[self.varying].sum()), self.grid - self.exponent))

    def core_args(self) -> dict:
        """Keyword arguments of the core's real-valued tests (which find the scores' grid themselves)."""
        return {"magnitude": self.magnitude, "exponent": self.exponent, "grid_scores": self.varying_scores}

    def differences(self, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The unit differences X - Y and the round-off bound of each, both in units of
        2^exponent (no overflow): each difference is within its bound of its exact value, twice
        over. Bounds of 0 when the scores are exact (`exact`)."""
        d = np.ldexp(xs.astype(np.float64), -self.exponent) - np.ldexp(ys.astype(np.float64), -self.exponent)
        return d, np.zeros_like(d) if self.exact else np.finfo(np.float64).eps * self.magnitude
