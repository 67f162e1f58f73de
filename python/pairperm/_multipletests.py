"""Corrections for multiple testing, and how reports and figures name them."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .typing import ArrayLike, Correction

__all__ = ["CORRECTIONS", "SYSTEMS_CORRECTIONS", "multipletests"]


CORRECTIONS = ("holm", "bonferroni", "fdr_bh", "fdr_by", None)
# compare_systems also takes the Westfall-Young step-down, which needs the scores, not p-values.
SYSTEMS_CORRECTIONS = CORRECTIONS + ("maxT",)


# How a figure names adjusted p-values, and a caption the correction (None: no correction).
ADJUSTED_NAMES = {"holm": "Holm-adjusted", "bonferroni": "Bonferroni-adjusted", "fdr_bh": "BH-adjusted",
                  "fdr_by": "BY-adjusted", "maxT": "maxT-adjusted"}
CORRECTED_WORDS = {"holm": "Holm-corrected", "bonferroni": "Bonferroni-corrected",
                   "fdr_bh": "Benjamini-Hochberg-adjusted", "fdr_by": "Benjamini-Yekutieli-adjusted",
                   "maxT": "Westfall-Young maxT-adjusted"}


def multipletests(pvalues: ArrayLike, method: Optional[Correction] = "holm") -> np.ndarray:
    """Adjusted p-values for a family of tests: statsmodels' ``multipletests(...)[1]``, to the bit.

    Parameters
    ----------
    pvalues : array_like, shape (m,)
        p-values in [0, 1].
    method : {"holm", "bonferroni", "fdr_bh", "fdr_by", None}
        ``"holm"`` (step-down, controls the family-wise error), ``"bonferroni"``,
        ``"fdr_bh"`` (Benjamini-Hochberg, false discovery rate under independence or positive
        dependence), ``"fdr_by"`` (Benjamini-Yekutieli, any dependence) or None (unadjusted):
        the corrections :func:`pairperm.compare_systems` takes.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the order given (at most 1). A hypothesis is rejected at
        level alpha when its adjusted p-value is <= alpha.

    Examples
    --------
    >>> import pairperm
    >>> pairperm.multipletests([0.01, 0.04, 0.03, 0.5], "holm")
    array([0.04, 0.09, 0.09, 0.5 ])
    >>> pairperm.multipletests([0.01, 0.04, 0.03, 0.5], "fdr_bh")
    array([0.04      , 0.05333333, 0.05333333, 0.5       ])
    """
    if method not in CORRECTIONS:
        raise ValueError(f"multipletests: method must be one of {', '.join(map(repr, CORRECTIONS))}; got {method!r}")
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"multipletests: p-values must be 1-D; got shape {p.shape}")
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1):
        raise ValueError("multipletests: p-values must be finite numbers in [0, 1]")
    m = p.size
    if method is None or m == 0:
        unadjusted: np.ndarray = p.copy()
        return unadjusted
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    order = np.argsort(p, kind="stable")
    ps = p[order]
    rank = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate((m - rank + 1) * ps)
    else:
        # p / (rank / m), in statsmodels' order of operations so that the results agree to the bit.
        ecdf = rank / float(m)
        if method == "fdr_by":
            ecdf = ecdf / np.sum(1.0 / rank)
        adj = np.minimum.accumulate((ps / ecdf)[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out
