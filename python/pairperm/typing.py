"""Types for annotating code that calls pairperm.

The public functions' signatures use these names, so that a type checker (mypy, pyright)
checks the values given for ``alternative=``, ``method=``, ``rng=`` and the like. Annotate your
own functions with them to pass such arguments on::

    import pairperm
    from pairperm.typing import Alternative, ArrayLike, SeedLike

    def my_test(x: ArrayLike, y: ArrayLike, alternative: Alternative = "two-sided",
                rng: SeedLike = None) -> float:
        return pairperm.permutation_test(x, y, alternative=alternative, rng=rng).pvalue

The names:

- ``ArrayLike``, ``Alternative``, ``SeedLike``: array arguments, ``alternative=`` and ``rng=``
  of every function.
- ``DistributionMethod``, ``PermutationMethod``, ``RatioMethod``, ``WilcoxonMethod``,
  ``MonteCarloMethod``, ``CompareMethod``, ``ShiftIntervalMethod``, ``BootstrapIntervalMethod``:
  the values of each function's ``method=``.
- ``SystemsCorrection``, ``ProgressCallback``: ``correction=`` and ``progress=`` of
  :func:`pairperm.compare_systems`; ``Correction`` (the same but ``"maxT"``) is ``method=`` of
  :func:`pairperm.multipletests`.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Union

import numpy as np
import numpy.typing as npt

__all__ = [
    "ArrayLike",
    "Alternative",
    "SeedLike",
    "DistributionMethod",
    "PermutationMethod",
    "RatioMethod",
    "WilcoxonMethod",
    "MonteCarloMethod",
    "CompareMethod",
    "ShiftIntervalMethod",
    "BootstrapIntervalMethod",
    "Correction",
    "SystemsCorrection",
    "ProgressCallback",
]

#: What an array argument accepts (:data:`numpy.typing.ArrayLike`), such as lists, tuples,
#: NumPy arrays, pandas Series and anything else :func:`numpy.asarray` reads.
ArrayLike = npt.ArrayLike

#: ``alternative=`` of every test, ``"greater"`` being evidence that system A is better than B.
Alternative = Literal["two-sided", "greater", "less"]

#: ``rng=`` of every function that samples, which is None (fresh entropy), an int seed (repeatable
#: runs; NumPy's integers too) or a :class:`numpy.random.Generator` (drawn from).
SeedLike = Union[None, int, np.integer[Any], np.random.Generator]

#: ``method=`` of :func:`pairperm.null_distribution`.
DistributionMethod = Literal["auto", "dp", "fft"]

#: ``method=`` of :func:`pairperm.permutation_test` and :func:`pairperm.structured_test`.
PermutationMethod = Literal["auto", "exact", "dp", "fft", "monte_carlo"]

#: ``method=`` of the exact tests of ratios, :func:`pairperm.f1_test`,
#: :func:`pairperm.precision_test` and :func:`pairperm.recall_test`.
RatioMethod = Literal["auto", "exact", "dp", "monte_carlo"]

#: ``method=`` of :func:`pairperm.wilcoxon_test`.
WilcoxonMethod = Literal["auto", "exact", "monte_carlo"]

#: ``method=`` of :func:`pairperm.monte_carlo_test`, plain sampling or tilted importance sampling
#: of a callable statistic.
MonteCarloMethod = Literal["monte_carlo", "importance_sampling"]

#: ``method=`` of :func:`pairperm.compare` and :func:`pairperm.compare_systems`, the methods of the
#: tests that compare() runs (which of them each metric takes is listed in compare()'s documentation).
CompareMethod = Literal["auto", "exact", "dp", "fft", "monte_carlo", "importance_sampling"]

#: ``method=`` of :func:`pairperm.shift_interval`.
ShiftIntervalMethod = Literal["auto", "exact", "saddlepoint"]

#: ``method=`` of :func:`pairperm.bootstrap_intervals`.
BootstrapIntervalMethod = Literal["bca", "percentile"]

#: A correction for multiple testing of p-values, ``method=`` of :func:`pairperm.multipletests`
#: and ``correction=`` of :func:`pairperm.compare_systems` (both also take None, no correction).
Correction = Literal["holm", "bonferroni", "fdr_bh", "fdr_by"]

#: ``correction=`` of :func:`pairperm.compare_systems`: a :data:`Correction`, or ``"maxT"`` (the
#: Westfall-Young step-down over joint null draws of the systems, which needs their scores).
SystemsCorrection = Literal["holm", "bonferroni", "fdr_bh", "fdr_by", "maxT"]

#: ``progress=`` of :func:`pairperm.compare_systems` as a callable, called as
#: ``progress(done, total)`` with the numbers of pairs finished so far and in all (what it returns
#: is ignored).
ProgressCallback = Callable[[int, int], object]
