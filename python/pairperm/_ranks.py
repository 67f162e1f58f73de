"""Rank intervals of systems, from their scores or from published estimates: the public calls,
which read and check their input; the step-down and its null draws are in _ranking."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ._inputs import PreparedTask, read_systems
from ._metrics import METRICS, metric_named, prefers_lower
from ._ranking import (
    RankIntervals,
    estimates_rank_intervals,
    flat_units,
    unit_matrix,
    units_rank_intervals,
    value_of_sums,
)
from .typing import SeedLike

__all__ = ["rank_intervals", "rank_intervals_from_estimates"]


def rank_intervals(scores: Any, metric: str = "accuracy", *, level: float = 0.95, simultaneous: bool = True,
                   method: str = "auto", groups: Any = None, n_resamples: int = 1000, rng: SeedLike = None,
                   names: Optional[Sequence[str]] = None, id_column: Optional[str] = None) -> RankIntervals:
    """Rank intervals of systems scored on the same items (1 = best).

    Parameters
    ----------
    scores : mapping, pandas DataFrame or array
        One task's systems as :func:`pairperm.compare_systems` takes them.
    metric : str
        A metric by name, as :func:`pairperm.compare` takes it. Sums and means of per-item scores
        are ranked by their totals; ratios (F1, precision, recall) and corpus metrics (BLEU,
        chrF, macro-F1) by the metric of the summed statistics, linearised for the multiplier
        draws and recomputed on each permutation.
    level : float
        Coverage of the intervals (default 0.95).
    simultaneous : bool
        True (default): every system's interval covers its rank at once. False: each interval
        covers its own system's rank (narrower).
    method : {"auto", "permutation", "multiplier"}
        The null draws: the systems permuted jointly within each unit (exact when all systems
        are exchangeable, for few items; each draw mixes all systems' scores), or the Gaussian
        multiplier bootstrap (valid as the items grow, whichever systems differ). "auto" permutes
        fewer than 100 units and draws multipliers otherwise.
    groups : array_like, optional
        The exchangeable unit of each item (passage, prompt ...): its items are permuted and
        resampled together.
    n_resamples : int
        Null draws (default 1000).
    rng : None, int or numpy.random.Generator
    names, id_column
        As in :func:`pairperm.compare_systems`.

    Returns
    -------
    RankIntervals

    Examples
    --------
    >>> import numpy as np, pairperm
    >>> rng = np.random.default_rng(0)
    >>> scores = {name: (rng.random(2000) < p).astype(int)
    ...           for name, p in [("A", 0.80), ("B", 0.70), ("C", 0.69), ("D", 0.55)]}
    >>> r = pairperm.rank_intervals(scores, rng=1)
    >>> [(n, lo, hi) for n, lo, hi in zip(r.names, r.rank_low, r.rank_high)]
    [('A', 1, 1), ('B', 2, 3), ('C', 2, 3), ('D', 4, 4)]
    >>> r.tied_with("B")
    ('C',)
    """
    func = "rank_intervals"
    if callable(metric) or metric_named(metric) is None:
        raise ValueError(f"{func}: metric must be one of {', '.join(map(repr, METRICS))}; got {metric!r}")
    sys_names, arrays, items = read_systems(scores, metric, names, id_column, func)
    task = PreparedTask.of("", metric, sys_names, arrays, np.zeros((0, 2), dtype=np.int64), groups, func, items)
    units = unit_matrix(task.arrays)
    return units_rank_intervals(sys_names, tuple(float(v) for v in task.values), flat_units(units),
                                prefers_lower(metric), level, simultaneous, method, n_resamples, rng, func,
                                value_of_sums(metric, units.shape[2:]))


def rank_intervals_from_estimates(estimates: Any, covariance: Any, *, names: Optional[Sequence[str]] = None,
                                  level: float = 0.95, simultaneous: bool = True, n_resamples: int = 1000,
                                  rng: SeedLike = None, lower_is_better: bool = False) -> RankIntervals:
    """Rank intervals from published estimates and their covariance (for boards that publish
    aggregates only): the null draws are normal with that covariance.

    Parameters
    ----------
    estimates : array_like, shape (K,)
    covariance : array_like, shape (K, K) or (K,)
        The estimates' covariance matrix (symmetric, positive semi-definite), or their variances
        (independent estimates).
    names : sequence of str, optional
        Default ``system_0``, ``system_1``, ...
    level, simultaneous, n_resamples, rng
        As in :func:`rank_intervals`.
    lower_is_better : bool
        Rank the smallest estimate first.

    Returns
    -------
    RankIntervals
    """
    func = "rank_intervals_from_estimates"
    theta = np.asarray(estimates, dtype=np.float64)
    if theta.ndim != 1 or len(theta) < 2 or not np.all(np.isfinite(theta)):
        raise ValueError(f"{func}: estimates must be a 1-D array of at least 2 finite numbers; got shape {theta.shape}")
    cov = np.asarray(covariance, dtype=np.float64)
    if cov.shape == theta.shape:
        cov = np.diag(cov)
    if cov.shape != (len(theta), len(theta)) or not np.all(np.isfinite(cov)):
        raise ValueError(f"{func}: covariance must be a finite ({len(theta)}, {len(theta)}) matrix or {len(theta)} "
                         f"variances; got shape {cov.shape}")
    if not np.allclose(cov, cov.T, rtol=1e-10, atol=0.0):
        raise ValueError(f"{func}: covariance must be symmetric")
    if np.linalg.eigvalsh(cov)[0] < -1e-10 * max(1.0, float(np.abs(cov).max())):
        raise ValueError(f"{func}: covariance must be positive semi-definite")
    labels = [f"system_{i}" for i in range(len(theta))] if names is None else [str(n) for n in names]
    if len(labels) != len(theta) or len(set(labels)) != len(labels):
        raise ValueError(f"{func}: names must be {len(theta)} unique names; got {list(labels)}")
    return estimates_rank_intervals(labels, theta, cov, bool(lower_is_better), level, simultaneous, n_resamples,
                                    rng, func)
