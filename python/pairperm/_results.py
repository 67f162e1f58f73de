"""Result objects: frozen dataclasses in the style of scipy.stats results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from ._distribution import Distribution

__all__ = ["PermutationTestResult"]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, tuple):
        return "(" + ", ".join(_fmt(x) for x in v) + ")"
    return repr(v)


@dataclass(frozen=True, repr=False)
class PermutationTestResult:
    """Result of :func:`pairperm.permutation_test` and :func:`pairperm.structured_test`.

    Attributes
    ----------
    statistic : int or float
        Observed test statistic (``sum(x) - sum(y)`` for ``permutation_test``).
    pvalue : float
        p-value; exact for the exact methods.
    log_pvalue : float
        Natural log of the p-value, accurate where ``pvalue`` underflows to 0.
    method : str
        Engine used: ``"auto"`` (grouped), ``"dp"``, ``"fft"`` or ``"monte_carlo"``.
    alternative : str
    null_distribution : Distribution or None
        Null distribution of S (computed on first access for ``"auto"``);
        None for Monte Carlo.
    n_resamples : int or None
        Monte Carlo only.
    pvalue_ci : (float, float) or None
        Monte Carlo only: Clopper-Pearson 95% interval for the exact p-value.
    pvalue_is_bound : bool
        True when ``pvalue`` is only an upper bound: an FFT-summed p-value fell below the
        FFT's round-off and the exact DP was too costly (a PrecisionWarning says so).
    """

    statistic: Union[int, float]
    pvalue: float
    log_pvalue: float
    method: str
    alternative: str
    n_resamples: Optional[int] = None
    pvalue_ci: Optional[tuple] = None
    pvalue_is_bound: bool = False
    _null: Union[Distribution, Callable[[], Distribution], None] = field(default=None, compare=False)

    @property
    def null_distribution(self) -> Optional[Distribution]:
        if callable(self._null):
            object.__setattr__(self, "_null", self._null())
        return self._null  # type: ignore[return-value]

    def __repr__(self) -> str:
        parts = [f"statistic={_fmt(self.statistic)}", f"pvalue={_fmt(self.pvalue)}"]
        if self.pvalue == 0.0 or self.pvalue < 1e-300:
            parts.append(f"log_pvalue={_fmt(self.log_pvalue)}")
        if self.pvalue_is_bound:
            parts.append("pvalue_is_bound=True")
        parts += [f"method={self.method!r}", f"alternative={self.alternative!r}"]
        if self.n_resamples is not None:
            parts += [f"n_resamples={self.n_resamples}", f"pvalue_ci={_fmt(self.pvalue_ci)}"]
        return f"{type(self).__name__}({', '.join(parts)})"
