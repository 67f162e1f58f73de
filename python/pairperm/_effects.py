"""Validated local effects, computed once, and the recipe that rebuilds their null distribution.

Every test in pairperm is a statement about S = sum_n Z_n, Z_n uniform on {stay[n], swap[n]}.
`LocalEffects` holds the int64 arrays and the core's O(N) summary (which also rules out
int64 overflow) so that no engine has to check or convert them again.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Union

import numpy as np

from . import _core
from ._distribution import Distribution, MultiDistribution
from ._validation import as_int_array, as_score_pair, check_paired_index, check_same_length

__all__ = ["LocalEffects", "NullRecipe"]


@dataclass(frozen=True, eq=False)
class LocalEffects:
    """int64 local effects of shape (N,) or (N, m), and their summary from the core.

    Built from paired scores (`paired`: stay = x - y, swap = y - x, never materialised
    unless an engine needs the arrays) or from explicit stay/swap (`from_arrays`).
    """

    summary: Any  # _core.EffectSummary (1-D), _core.MultiSummary (m-D); None for real-valued effects
    _x: np.ndarray
    _y: np.ndarray
    _paired: bool

    @classmethod
    def paired(cls, x: np.ndarray, y: np.ndarray) -> LocalEffects:
        """Scores of two systems, validated (N,) of one dtype: the local effects of T = sum(x) - sum(y)."""
        if x.dtype.kind == "f":
            return cls(None, x, y, True)
        return cls(_core.summarize_paired(x, y), x, y, True)

    @classmethod
    def from_arrays(cls, stay: np.ndarray, swap: np.ndarray) -> LocalEffects:
        """Validated int64 stay and swap of equal shape (N,) or (N, m)."""
        if stay.ndim == 1:
            return cls(_core.summarize(stay, swap), stay, swap, False)
        return cls(_core.summarize_multi(stay, swap), stay, swap, False)

    @classmethod
    def real(cls, stay: np.ndarray, swap: np.ndarray) -> LocalEffects:
        """Validated float64 stay and swap (real-valued effects: no integer summary)."""
        return cls(None, stay, swap, False)

    @classmethod
    def read(cls, stay: Any, swap: Any, func: str, *, ndim: Union[int, tuple] = 1,
             names: tuple[str, str] = ("stay", "swap"), real_ok: bool = False) -> LocalEffects:
        """Validate user input (equal shapes; integers, or reals where `real_ok`) and summarise it."""
        if real_ok:
            stay_a, swap_a = as_score_pair(stay, swap, func, ndim=ndim, names=names)
        else:
            check_paired_index(stay, swap, names, func)
            stay_a = as_int_array(stay, names[0], func, ndim=ndim)
            swap_a = as_int_array(swap, names[1], func, ndim=ndim)
            check_same_length(stay_a, swap_a, names[0], names[1], func)
        if stay_a.ndim == 2:
            if stay_a.shape[1] == 0:
                raise ValueError(f"{func}: local effects need at least one coordinate; got shape {stay_a.shape}")
            if stay_a.shape[1] == 1:
                stay_a, swap_a = stay_a[:, 0].copy(), swap_a[:, 0].copy()
        if stay_a.dtype.kind == "f":
            return cls.real(stay_a, swap_a)
        return cls.from_arrays(stay_a, swap_a)

    @cached_property
    def stay(self) -> np.ndarray:
        # x - y cannot overflow: the summary checked the sums of |x| + |y|.
        return self._x - self._y if self._paired else self._x

    @cached_property
    def swap(self) -> np.ndarray:
        return self._y - self._x if self._paired else self._y

    @property
    def n(self) -> int:
        return int(self._x.shape[0])

    @property
    def m(self) -> int:
        """Coordinates of S: 1 for one-dimensional effects."""
        return 1 if self._x.ndim == 1 else int(self._x.shape[1])

    @property
    def one_d(self) -> bool:
        return self._x.ndim == 1

    @property
    def is_real(self) -> bool:
        return self.summary is None

    @property
    def n_varying(self) -> int:
        """Entries with stay != swap."""
        if self.is_real:
            differ = self._x != self._y
            return int(np.count_nonzero(differ if self.one_d else differ.any(axis=1)))
        if self.one_d:
            return int(self.summary.n_varying)
        return sum(int(c) for _, c in self.summary.groups)

    @property
    def observed(self) -> Union[int, float, tuple]:
        """s_obs = sum(stay): an int, or a tuple for m-D (floats for real-valued effects)."""
        if self.is_real:
            obs = self.stay.sum(axis=0)
            return float(obs) if self.one_d else tuple(float(v) for v in obs)
        obs = self.summary.observed
        return int(obs) if self.one_d else tuple(int(v) for v in obs)

    def span(self) -> np.ndarray:
        """Width of the support per coordinate: sum_n |stay - swap| + 1 (float, may exceed 2^63)."""
        if self.one_d:
            return np.array([float(self.summary.k_sum) + 1.0])
        out = np.ones(self.m)
        for delta, count in self.summary.groups:
            out += np.abs(np.asarray(delta, dtype=np.float64)) * float(count)
        return out

    def dp_cost(self) -> float:
        """Multiply-adds of the DP (Alg. 3) over the full support: N x box size."""
        return float(self.n_varying) * float(np.prod(self.span()))

    def recipe(self, engine: str) -> NullRecipe:
        """What it takes to rebuild the null distribution with `engine`: a few numbers per group."""
        s = self.summary
        if self.one_d:
            return NullRecipe(int(s.lo_sum), tuple((int(k), int(c)) for k, c in s.groups), engine)
        lo = tuple(int(v) for v in s.lo_sum)
        return NullRecipe(lo, tuple((tuple(int(v) for v in d), int(c)) for d, c in s.groups), engine)

    def distribution(self, engine: str) -> Union[Distribution, MultiDistribution]:
        """The null distribution of S by `engine` ("auto", "dp" or "fft")."""
        if self.one_d:
            if engine == "auto":
                off, pmf, tm = _core.grouped_distribution(self.summary)
            elif engine == "dp":
                off, pmf, tm = _core.convolve_dp(self.stay, self.swap)
            else:
                off, pmf, tm = _core.convolve_fft(self.stay, self.swap)
            return Distribution(off, _at_most_one(pmf, engine), tm, engine)
        if engine == "auto":
            offs, pmf, tm = _core.grouped_distribution_multi(self.summary)
        else:
            offs, pmf, tm = _core.convolve_dp_multi(self.stay, self.swap)
        return MultiDistribution(offs, _at_most_one(pmf, engine), tm, engine)


def _at_most_one(pmf: np.ndarray, engine: str) -> np.ndarray:
    """An FFT route's pmf, scaled down if its round-off (clamped at 0, so only ever adding
    mass) lifted the total above 1: a distribution never holds more than all the probability."""
    if engine == "dp":
        return pmf
    total = float(pmf.sum())
    return pmf / total if total > 1.0 else pmf


@dataclass(frozen=True)
class NullRecipe:
    """The law of S as groups: S = lo + sum over groups of delta * Binomial(count, 1/2).

    Small and picklable; `build` rebuilds the distribution with the same engine.
    """

    lo: Union[int, tuple]
    groups: tuple  # ((k, count), ...) in 1-D, ((delta, count), ...) in m-D
    engine: str

    def build(self) -> Union[Distribution, MultiDistribution]:
        one_d = not isinstance(self.lo, tuple)
        m = len(self.lo) if isinstance(self.lo, tuple) else 1
        n = sum(c for _, c in self.groups)
        stay = np.zeros((n, m), dtype=np.int64)
        swap = np.zeros((n, m), dtype=np.int64)
        row = 0
        for delta, count in self.groups:
            swap[row:row + count] = delta
            row += count
        if one_d:
            stay, swap = stay[:, 0].copy(), swap[:, 0].copy()
        d = LocalEffects.from_arrays(stay, swap).distribution(self.engine)
        # The groups were laid out from 0; lo shifts the whole law (added exactly, as Python ints).
        if isinstance(d, Distribution) and isinstance(self.lo, int):
            return Distribution(d.offset + self.lo, d.pmf, d.truncated_mass, d.method)
        assert isinstance(d, MultiDistribution) and isinstance(self.lo, tuple)
        offset = tuple(o + lo for o, lo in zip(d.offset, self.lo))
        return MultiDistribution(offset, d.pmf, d.truncated_mass, d.method)
