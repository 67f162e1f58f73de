"""The Distribution object: a dense pmf of S with its offset and truncation certificate."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Union

import numpy as np

__all__ = ["Distribution"]


@dataclass(frozen=True, repr=False, eq=False)
class Distribution:
    """Null distribution of the summed local effects S.

    Attributes
    ----------
    offset : int, or tuple of int for m-dimensional S
        Value of S at index 0 (per coordinate for m-D).
    pmf : ndarray of float64
        ``pmf[i] = P[S = offset + i]`` (read-only).
    truncated_mass : float
        Certified upper bound on the probability outside the stored support
        (0.0 when nothing was cut). The grouped engine cuts at Hoeffding's bound
        below 1e-320, so nothing representable in float64 is lost.
    """

    offset: Union[int, tuple]
    pmf: np.ndarray
    truncated_mass: float = 0.0
    method: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        # A read-only view: the result cannot be edited through this object, and an
        # array the caller passed in keeps its own flags.
        pmf = np.asarray(self.pmf, dtype=np.float64).view()
        pmf.flags.writeable = False
        object.__setattr__(self, "pmf", pmf)

    @property
    def support(self) -> np.ndarray:
        """Values of S for each pmf entry (1-D distributions), int64."""
        self._require_1d("support")
        return self.offset + np.arange(self.pmf.shape[0], dtype=np.int64)

    @cached_property
    def _cdf_table(self) -> np.ndarray:
        return np.cumsum(self.pmf)

    @cached_property
    def _sf_table(self) -> np.ndarray:
        # Summed from the right so that small upper tails keep their relative accuracy.
        return np.cumsum(self.pmf[::-1])[::-1]

    def _index(self, x) -> np.ndarray:
        """Number of support points <= x, in exact integer arithmetic (values reach 2^61)."""
        n = self.pmf.shape[0]
        arr = np.asarray(x)
        if arr.dtype.kind in "iub":
            # Python ints keep offsets near 2^61 exact; clipping keeps the result in [0, n].
            rel = np.clip(arr.astype(object) - self.offset + 1, 0, n)
            return np.asarray(rel, dtype=np.int64)
        if arr.dtype.kind != "f":
            raise ValueError(f"Distribution: x must be numeric; got dtype {arr.dtype}")
        if np.isnan(arr).any():
            raise ValueError("Distribution: x contains NaN")
        # Exact: math.floor of a float is an exact Python int; infinities go to the ends.
        def rank(v: float) -> int:
            if math.isinf(v):
                return n if v > 0 else 0
            return min(max(math.floor(v) - self.offset + 1, 0), n)

        return np.asarray(np.vectorize(rank, otypes=[np.int64])(arr), dtype=np.int64)

    def cdf(self, x):
        """P[S <= x], vectorised over x."""
        self._require_1d("cdf")
        table = np.concatenate(([0.0], self._cdf_table))
        out = table[self._index(x)]
        return out if np.ndim(out) else float(out)

    def sf(self, x):
        """P[S > x] (scipy's convention), vectorised over x."""
        self._require_1d("sf")
        table = np.concatenate((self._sf_table, [0.0]))
        out = table[self._index(x)]
        return out if np.ndim(out) else float(out)

    def mean(self) -> float:
        self._require_1d("mean")
        return float(np.dot(self.support.astype(np.float64), self.pmf))

    def plot(self, ax=None, observed=None, alternative: str = "two-sided", log: bool = False):
        """Draw the pmf (1-D); see :func:`pairperm.plot_distribution`. Needs matplotlib."""
        from ._plot import plot_distribution

        return plot_distribution(self, ax=ax, observed=observed, alternative=alternative, log=log)

    def _require_1d(self, what: str) -> None:
        if self.pmf.ndim != 1:
            raise ValueError(f"Distribution.{what} is defined for 1-D distributions only")

    def __repr__(self) -> str:
        shape = self.pmf.shape[0] if self.pmf.ndim == 1 else self.pmf.shape
        return (
            f"Distribution(offset={self.offset}, size={shape}, mass={float(self.pmf.sum()):.15g}, "
            f"truncated_mass={self.truncated_mass:.3g}{', method=' + repr(self.method) if self.method else ''})"
        )
