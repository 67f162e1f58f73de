"""Null distributions of the summed local effects S: 1-D (`Distribution`) and m-D (`MultiDistribution`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterator, Optional

import numpy as np

from .typing import Alternative

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["Distribution", "MultiDistribution"]


def _read_only(pmf: Any) -> np.ndarray:
    # A read-only view: the result cannot be edited through this object, and an array the
    # caller passed in keeps its own flags.
    out: np.ndarray = np.asarray(pmf, dtype=np.float64).view()
    out.flags.writeable = False
    return out


@dataclass(frozen=True, repr=False, eq=False)
class Distribution:
    """Null distribution of a one-dimensional sum S of local effects.

    Attributes
    ----------
    offset : int
        Value of S at index 0.
    pmf : ndarray of float64, shape (K,)
        ``pmf[i] = P[S = offset + i]`` (read-only).
    truncated_mass : float
        Certified upper bound on the probability outside the stored support (0.0 when
        nothing was cut).
    method : str
        Engine that computed it: ``"auto"`` (grouped engine, an inverse FFT), ``"fft"``
        or ``"dp"``.

    Notes
    -----
    Accuracy depends on the engine. ``"dp"`` has a small *relative* error in every entry.
    ``"auto"`` and ``"fft"`` come from a floating-point FFT: each entry carries an
    *absolute* error of about 1e-16 of the largest entry, so tail sums below ~1e-10 from
    ``cdf``/``sf`` are round-off. The test functions' ``pvalue`` does not have this limit
    (exponential tilting, or a recomputation with the DP).

    Examples
    --------
    >>> import pairperm
    >>> d = pairperm.Distribution(offset=-1, pmf=[0.25, 0.5, 0.25])   # S in {-1, 0, 1}
    >>> d.support
    array([-1,  0,  1])
    >>> d.cdf(0), d.sf(0), d.mean()
    (0.75, 0.25, 0.0)
    >>> d.cdf([-1, 1])
    array([0.25, 1.  ])
    """

    offset: int
    pmf: np.ndarray
    truncated_mass: float = 0.0
    method: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        pmf = _read_only(self.pmf)
        if pmf.ndim != 1:
            raise ValueError(f"Distribution: pmf must be 1-D; got shape {pmf.shape} (use MultiDistribution)")
        object.__setattr__(self, "pmf", pmf)
        object.__setattr__(self, "offset", int(self.offset))

    @property
    def support(self) -> np.ndarray:
        """Values of S for each pmf entry, int64."""
        return self.offset + np.arange(self.pmf.shape[0], dtype=np.int64)

    @cached_property
    def _cdf_table(self) -> np.ndarray:
        return np.concatenate(([0.0], np.minimum(np.cumsum(self.pmf), 1.0)))

    @cached_property
    def _sf_table(self) -> np.ndarray:
        # Summed from the right so that small upper tails keep their relative accuracy.
        return np.concatenate((np.minimum(np.cumsum(self.pmf[::-1])[::-1], 1.0), [0.0]))

    def _index(self, x: Any) -> np.ndarray:
        """Number of support points <= x, in exact integer arithmetic (values reach 2^61)."""
        n: int = self.pmf.shape[0]
        arr = np.asarray(x)
        if arr.dtype.kind in "iub":
            # Python ints keep offsets near 2^61 exact; clipping keeps the result in [0, n].
            rel = np.clip(arr.astype(object) - self.offset + 1, 0, n)
            return np.asarray(rel, dtype=np.int64)
        if arr.dtype.kind != "f":
            raise ValueError(f"Distribution: x must be numeric; got dtype {arr.dtype}")
        if np.isnan(arr).any():
            raise ValueError("Distribution: x contains NaN")

        def rank(v: float) -> int:
            # Exact: math.floor of a float is an exact Python int; infinities go to the ends.
            if math.isinf(v):
                return n if v > 0 else 0
            return min(max(math.floor(v) - self.offset + 1, 0), n)

        return np.asarray(np.vectorize(rank, otypes=[np.int64])(arr), dtype=np.int64)

    def cdf(self, x: Any) -> Any:
        """P[S <= x], vectorised over x."""
        out = self._cdf_table[self._index(x)]
        return out if np.ndim(out) else float(out)

    def sf(self, x: Any) -> Any:
        """P[S > x] (scipy's convention), vectorised over x."""
        out = self._sf_table[self._index(x)]
        return out if np.ndim(out) else float(out)

    def mean(self) -> float:
        """E[S] under the stored pmf."""
        return float(np.dot(self.support.astype(np.float64), self.pmf))

    def plot(self, ax: Optional[Axes] = None, *, observed: Any = None, alternative: Alternative = "two-sided",
             log: bool = False) -> Axes:
        """Plot the pmf, the observed value and the rejection region (needs matplotlib)."""
        from ._plot import plot_distribution

        return plot_distribution(self, ax=ax, observed=observed, alternative=alternative, log=log)

    def __repr__(self) -> str:
        return (
            f"Distribution(offset={self.offset}, size={self.pmf.shape[0]}, mass={float(self.pmf.sum()):.15g}, "
            f"truncated_mass={self.truncated_mass:.3g}{', method=' + repr(self.method) if self.method else ''})"
        )


@dataclass(frozen=True, repr=False, eq=False)
class MultiDistribution:
    """Null distribution of an m-dimensional sum S of local effects, on a dense box.

    Attributes
    ----------
    offset : tuple of int
        Value of S at index (0, ..., 0).
    pmf : ndarray of float64, shape (K_1, ..., K_m)
        ``pmf[i] = P[S = offset + i]`` (read-only).
    truncated_mass : float
        Certified upper bound on the probability outside the box.
    method : str
        ``"auto"`` (grouped engine, an inverse FFT; absolute error ~1e-16 of the peak) or ``"dp"``.

    Examples
    --------
    >>> import pairperm
    >>> md = pairperm.null_distribution([[1, 0], [0, 1], [1, 1]], [[0, 1], [1, 0], [0, 0]])
    >>> md.offset, md.pmf.shape
    ((0, 0), (4, 4))
    >>> md.marginal(0).pmf
    array([0.125, 0.375, 0.375, 0.125])
    >>> values, probs = next(md.points())
    >>> values.shape, f"{probs.sum():.12g}"
    ((16, 2), '1')
    """

    offset: tuple[int, ...]
    pmf: np.ndarray
    truncated_mass: float = 0.0
    method: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        pmf = _read_only(self.pmf)
        offset = tuple(int(o) for o in self.offset)
        if pmf.ndim != len(offset):
            raise ValueError(f"MultiDistribution: offset has {len(offset)} coordinates but pmf has shape {pmf.shape}")
        object.__setattr__(self, "pmf", pmf)
        object.__setattr__(self, "offset", offset)

    @property
    def m(self) -> int:
        return len(self.offset)

    def points(self, chunk: int = 1 << 20) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (values of S with shape (k, m), their probabilities) over the box in chunks,
        so that memory stays flat however large the box."""
        flat = self.pmf.reshape(-1)
        base = np.asarray(self.offset, dtype=np.int64)
        for start in range(0, flat.size, chunk):
            idx = np.arange(start, min(start + chunk, flat.size), dtype=np.int64)
            pts = np.stack(np.unravel_index(idx, self.pmf.shape), axis=1).astype(np.int64) + base
            yield pts, flat[start:start + len(idx)]

    def marginal(self, axis: int) -> Distribution:
        """The 1-D distribution of coordinate `axis` of S."""
        other = tuple(j for j in range(self.m) if j != axis)
        return Distribution(self.offset[axis], self.pmf.sum(axis=other), self.truncated_mass, self.method)

    def __repr__(self) -> str:
        return (
            f"MultiDistribution(offset={self.offset}, shape={self.pmf.shape}, mass={float(self.pmf.sum()):.15g}, "
            f"truncated_mass={self.truncated_mass:.3g}{', method=' + repr(self.method) if self.method else ''})"
        )
