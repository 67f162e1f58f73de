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
from typing import Any, NamedTuple

import numpy as np

from ._validation import check_paired_index

__all__ = ["Units", "read_groups", "unit_sums", "paired_unit_sums"]

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
        check_paired_index(like, groups, ("x", "groups"), func, plain_ok=True)
    # A list is read as the Python objects it holds: NumPy would turn [1, "a", nan] into the
    # strings "1", "a" and "nan", merging labels of different kinds and hiding missing ones.
    labels = np.asarray(groups, dtype=object) if isinstance(groups, (list, tuple)) else np.asarray(groups)
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


def _samples(arr: np.ndarray, name: str, func: str) -> np.ndarray:
    """(N, k) samples of each item summed over the k samples."""
    if arr.shape[1] == 0:
        raise ValueError(f"{func}: {name} has shape {arr.shape}: each item needs at least one sample")
    _check_sum(arr, arr.shape[1], name, func)
    return arr.sum(axis=1)


def paired_unit_sums(x: np.ndarray, y: np.ndarray, groups: Any, func: str, raw_x: Any = None,
                     names: tuple[str, str] = ("x", "y")) -> tuple[np.ndarray, np.ndarray]:
    """Per-item scores of shape (N,), or (N, k) samples of each item, as sums per unit (the
    groups' units, else the items)."""
    if x.ndim == 2:
        x, y = _samples(x, names[0], func), _samples(y, names[1], func)
    if groups is None:
        return x, y
    units = read_groups(groups, len(x), func, like=raw_x)
    return unit_sums(x, units, names[0], func), unit_sums(y, units, names[1], func)
