"""Validated local effects, computed once, and the recipe that rebuilds their null distribution.

Every test in pairperm is a statement about S = sum_n Z_n, Z_n uniform on {stay[n], swap[n]}.
`LocalEffects` holds the int64 arrays and the core's O(N) summary (which also rules out
int64 overflow) so that no engine has to check or convert them again.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, NoReturn, Optional, Union

import numpy as np

import pairperm._core as _core

from ._distribution import Distribution, MultiDistribution
from ._units import ScoreRoundoff, read_groups, unit_sums
from ._validation import as_int_array, as_score_pair, check_paired_index, check_same_length, name_too_large

__all__ = ["LocalEffects", "NullRecipe"]


@dataclass(frozen=True, eq=False)
class LocalEffects:
    """int64 local effects of shape (N,) or (N, m), and their summary from the core.

    Built from paired scores (`paired`: stay = x - y, swap = y - x, materialised only when
    an engine or an interval's record needs them) or from explicit stay/swap (`from_arrays`).
    The summary, which also refuses integers too large for the core's sums, is made where the
    p-value is computed (the executor makes it in the same call and hands it back), or on first
    use by anything else; either way its error names the arrays as `names` and `func` say.
    """

    _x: np.ndarray
    _y: np.ndarray
    _paired: bool
    # Real-valued paired scores: the round-off of forming x - y from them (see ScoreRoundoff).
    roundoff: Optional[ScoreRoundoff] = None
    _func: str = ""
    _names: tuple[str, str] = ("stay", "swap")

    @classmethod
    def paired(cls, x: np.ndarray, y: np.ndarray, func: str = "", names: tuple[str, str] = ("x", "y"),
               roundoff: Optional[ScoreRoundoff] = None) -> LocalEffects:
        """Scores of two systems, validated (N,) of one dtype: the local effects of T = sum(x) - sum(y).
        Real-valued scores that are sums of item scores (units, samples) pass the round-off of
        those sums in `roundoff`; without it, x and y are taken as the scores read."""
        return cls(x, y, True, roundoff if x.dtype.kind == "f" else None, func, names)

    @classmethod
    def from_arrays(cls, stay: np.ndarray, swap: np.ndarray, func: str = "",
                    names: tuple[str, str] = ("stay", "swap")) -> LocalEffects:
        """Validated int64 stay and swap of equal shape (N,) or (N, m)."""
        return cls(stay, swap, False, None, func, names)

    @classmethod
    def real(cls, stay: np.ndarray, swap: np.ndarray) -> LocalEffects:
        """Validated float64 stay and swap (real-valued effects: no integer summary)."""
        return cls(stay, swap, False)

    @cached_property
    def summary(self) -> Any:
        """_core.EffectSummary (1-D) or _core.MultiSummary (m-D); None for real-valued effects."""
        if self.is_real:
            return None
        try:
            if self._paired:
                return _core.summarize_paired(self._x, self._y)
            if self._x.ndim == 1:
                return _core.summarize(self._x, self._y)
            return _core.summarize_multi(self._x, self._y)
        except ValueError as exc:
            self.refused(exc)

    def refused(self, error: ValueError) -> NoReturn:
        """Raise the core's refusal of these effects' sums, naming the arrays (any other error
        as it is)."""
        name_too_large(((self._x, self._names[0]), (self._y, self._names[1])), self._func, error)

    def summary_if_made(self) -> Any:
        """The summary where it has been made, else None (the executor then makes it)."""
        return self.__dict__.get("summary")

    def adopt_summary(self, summary: Any) -> None:
        """Keep the summary the executor made of these effects."""
        self.__dict__["summary"] = summary

    @classmethod
    def read(cls, stay: Any, swap: Any, func: str, *, ndim: Union[int, tuple] = 1,
             names: tuple[str, str] = ("stay", "swap"), real_ok: bool = False, groups: Any = None) -> LocalEffects:
        """Validate user input (equal shapes; integers, or reals where `real_ok`) and summarise it;
        with `groups`, the local effects of each unit summed (units swap as a whole)."""
        if real_ok:
            stay_a, swap_a = as_score_pair(stay, swap, func, ndim=ndim, names=names)
        else:
            check_paired_index(stay, swap, names, func)
            stay_a = as_int_array(stay, names[0], func, ndim=ndim)
            swap_a = as_int_array(swap, names[1], func, ndim=ndim)
            check_same_length(stay_a, swap_a, names[0], names[1], func)
        if groups is not None:
            units = read_groups(groups, len(stay_a), func, like=stay)
            stay_a, swap_a = unit_sums(stay_a, units, names[0], func), unit_sums(swap_a, units, names[1], func)
        if stay_a.ndim == 2:
            if stay_a.shape[1] == 0:
                raise ValueError(f"{func}: local effects need at least one coordinate; got shape {stay_a.shape}")
            if stay_a.shape[1] == 1:
                stay_a, swap_a = stay_a[:, 0].copy(), swap_a[:, 0].copy()
        if stay_a.dtype.kind == "f":
            return cls.real(stay_a, swap_a)
        return cls.from_arrays(stay_a, swap_a, func, names)

    def core_arrays(self) -> tuple[np.ndarray, np.ndarray, bool]:
        """What the core's executor reads in place: (x, y, True) for paired scores (stay = x - y,
        never formed here), else (stay, swap, False)."""
        return self._x, self._y, self._paired

    def differences(self) -> np.ndarray:
        """The differences stay = x - y as the result's own copy: the arrays read may be the
        caller's, who may change them once the test has returned."""
        return self.stay if self._paired else self._x.copy()

    @cached_property
    def stay(self) -> np.ndarray:
        # x - y cannot overflow where the summary checked the sums of |x| + |y|; where it is not
        # made yet, the executor's summary refuses such sums before any result is formed.
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
        return self._x.dtype.kind == "f"

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

    def distribution(self, engine: str) -> Union[Distribution, MultiDistribution]:
        """The null distribution of S by `engine` ("auto", "dp" or "fft")."""
        if engine == "auto":
            return grouped_distribution(self.summary, self.one_d)
        if self.one_d:
            engine_fn = _core.convolve_dp if engine == "dp" else _core.convolve_fft
            off, pmf, tm = engine_fn(self.stay, self.swap)
            return Distribution(off, pmf, tm, engine)
        offs, pmf, tm = _core.convolve_dp_multi(self.stay, self.swap)
        return MultiDistribution(offs, pmf, tm, engine)


def grouped_distribution(summary: Any, one_d: bool) -> Union[Distribution, MultiDistribution]:
    """The grouped engine's distribution of a summary (1-D or m-D); the core caps an FFT route's
    total mass at 1, which its round-off (clamped at 0) would otherwise exceed."""
    if one_d:
        off, pmf, tm = _core.grouped_distribution(summary)
        return Distribution(off, pmf, tm, "auto")
    offs, pmf, tm = _core.grouped_distribution_multi(summary)
    return MultiDistribution(offs, pmf, tm, "auto")


class NullRecipe:
    """The law of S as groups: S = lo + sum over groups of delta * Binomial(count, 1/2).

    Holds the core's summary while in this process and pickles as plain numbers (lo and the
    groups); `build` recomputes the distribution with the same engine. Made from lo and the
    groups (`of_groups`, or unpickled), it forms the summary only when `build` needs it.
    """

    def __init__(self, summary: Any, one_d: bool, engine: str) -> None:
        self._summary = summary
        self._one_d = one_d
        self.engine = engine
        self._law: Optional[tuple] = None  # (lo, groups) until the summary is formed

    @classmethod
    def of_groups(cls, lo: Union[int, tuple], groups: tuple, engine: str) -> NullRecipe:
        recipe = cls(None, not isinstance(lo, tuple), engine)
        recipe._law = (lo, groups)
        return recipe

    @property
    def summary(self) -> Any:
        if self._summary is None:
            assert self._law is not None
            lo, groups = self._law
            self._summary = _summary_of(lo, groups, self._one_d)
        return self._summary

    @property
    def lo(self) -> Union[int, tuple]:
        if self._law is not None:
            return self._law[0]
        s = self._summary
        return int(s.lo_sum) if self._one_d else tuple(int(v) for v in s.lo_sum)

    @property
    def groups(self) -> tuple:
        """((k, count), ...) in 1-D, ((delta, count), ...) in m-D."""
        if self._law is not None:
            return self._law[1]
        if self._one_d:
            return tuple((int(k), int(c)) for k, c in self._summary.groups)
        return tuple((tuple(int(v) for v in d), int(c)) for d, c in self._summary.groups)

    def __getstate__(self) -> dict:
        return {"lo": self.lo, "groups": self.groups, "engine": self.engine}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(NullRecipe.of_groups(state["lo"], state["groups"], state["engine"]).__dict__)

    def build(self) -> Union[Distribution, MultiDistribution]:
        if self.engine == "auto":
            return grouped_distribution(self.summary, self._one_d)
        lo = self.lo
        stay, swap = _arrays_of(self.groups, self._one_d, None if self._one_d else len(lo))  # type: ignore[arg-type]
        d = LocalEffects.from_arrays(stay, swap).distribution(self.engine)
        # The groups were laid out from 0; lo shifts the whole law (added exactly, as Python ints).
        if isinstance(d, Distribution) and isinstance(lo, int):
            return Distribution(d.offset + lo, d.pmf, d.truncated_mass, d.method)
        assert isinstance(d, MultiDistribution) and isinstance(lo, tuple)
        return MultiDistribution(tuple(o + v for o, v in zip(d.offset, lo)), d.pmf, d.truncated_mass, d.method)


def _arrays_of(groups: tuple, one_d: bool, m: Optional[int]) -> tuple[np.ndarray, np.ndarray]:
    """stay = 0 and swap = delta for each group's entries: the law of S - lo."""
    n = sum(c for _, c in groups)
    width = 1 if one_d else int(m or 1)
    stay = np.zeros((n, width), dtype=np.int64)
    swap = np.zeros((n, width), dtype=np.int64)
    row = 0
    for delta, count in groups:
        swap[row:row + count] = delta
        row += count
    if one_d:
        return stay[:, 0].copy(), swap[:, 0].copy()
    return stay, swap


def _summary_of(lo: Union[int, tuple], groups: tuple, one_d: bool) -> Any:
    """The core's summary of the law lo + groups (one extra constant entry carries lo)."""
    stay, swap = _arrays_of(groups, one_d, None if one_d else len(lo))  # type: ignore[arg-type]
    if one_d:
        stay, swap = np.append(stay, lo), np.append(swap, lo)
        return _core.summarize(stay.astype(np.int64), swap.astype(np.int64))
    row = np.asarray(lo, dtype=np.int64).reshape(1, -1)
    return _core.summarize_multi(np.vstack([stay, row]), np.vstack([swap, row]))
