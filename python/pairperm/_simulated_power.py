"""Power of the paired test of any metric, by simulation from a pilot study or a generator.

Each replicate draws a data set, runs :func:`pairperm.compare` on it (exact where the metric
has an exact route, importance-sampled for BLEU, chrF and macro-F1) and counts a rejection when
the p-value is <= alpha. The power is the share of rejecting replicates.

Common random numbers. With ``seed = default_rng(rng).integers(2**63)``, replicate k draws its
resampling indices as ``floor(m * U)`` with ``U = default_rng([seed, k]).random(n)`` (m pilot
items, or m pilot units under ``groups=``), and the test of replicate k, where it samples, uses
``default_rng([seed, k, 1])``. Replicate k thus sees the same uniforms whatever ``n`` and
``delta`` are: a larger ``n`` extends the same draw, and a change of ``delta`` shifts the same
items. Power curves are then smooth in ``n`` and ``delta``, and a bisection on ``delta``
compares like with like.

Target effect. ``delta`` is the per-item mean difference E[x - y] the simulation should have:
the pilot's y scores are shifted by the constant ``mean(x - y) - delta`` before resampling, so
the resampled population has exactly that mean difference and the pilot's spread and shape of
differences. This is only meaningful for per-item scores that can move freely; 0/1 scores
cannot be shifted (a shifted 0/1 score is not a correctness), so a target effect on 0/1 pilots
is refused: :func:`pairperm.power_paired_binary` gives their power exactly, and ``generator=``
simulates any other design.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from statistics import NormalDist
from typing import Any, Callable, Optional, Union

import numpy as np

from ._compare import compare
from ._errors import PrecisionWarning, warn_caller
from ._metrics import metric_named
from ._units import read_groups
from ._validation import as_real_array, check_alternative, check_probability, check_rng, is_binary
from .typing import Alternative, ArrayLike, SeedLike

__all__ = ["SimulatedPower", "normal_power", "simulated_minimum_detectable_effect", "simulated_power"]

# generator(rng, n) -> (x, y) or (x, y, groups): one replicate's data.
ReplicateGenerator = Callable[[np.random.Generator, int], tuple[Any, ...]]
# Options of pairperm.compare that a replicate may set; the rest are fixed by the simulation.
_COMPARE_OPTIONS = ("method", "n_resamples")
# Level of the interval the normal approximation is checked against.
_CHECK_LEVEL = 0.99
_NORMAL = NormalDist()


@dataclasses.dataclass(frozen=True)
class SimulatedPower:
    """Power of the paired test estimated from simulated replicates.

    ``power``: share of replicates with p-value <= alpha. ``standard_error``: its Monte Carlo
    standard error sqrt(power (1 - power) / n_simulations). ``interval``: the Clopper-Pearson
    interval of the power at ``confidence_level`` (exact binomial tails, solved by bisection).
    ``pvalues``: the replicate p-values in replicate order. ``normal``: the paired z
    approximation's power for the same design (None where it does not apply: metrics of summed
    statistics, ``groups=``, a generator).
    """

    power: float
    standard_error: float
    interval: tuple[float, float]
    confidence_level: float
    pvalues: np.ndarray
    n: int
    delta: Optional[float]
    alpha: float
    normal: Optional[float]


def clopper_pearson(successes: int, trials: int, level: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial proportion: each end found by bisection
    on the binomial tail, which is monotone in p, to 1e-12."""
    tail = (1 - level) / 2
    k = np.arange(trials + 1, dtype=np.float64)
    log_choose = np.array([math.lgamma(trials + 1) - math.lgamma(j + 1) - math.lgamma(trials - j + 1)
                           for j in range(trials + 1)])

    def solve(target: float, at_least: int) -> float:
        """The p at which P(B >= at_least | p), increasing in p, equals target."""
        lo, hi = 0.0, 1.0
        while hi - lo > 1e-12:
            mid = (lo + hi) / 2
            log_pmf = log_choose[at_least:] + k[at_least:] * math.log(mid) + (trials - k[at_least:]) * math.log1p(-mid)
            if float(np.exp(log_pmf).sum()) < target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    # Lower end: P(B >= successes | p) = tail; upper end: P(B <= successes | p) = tail.
    lower = 0.0 if successes == 0 else solve(tail, successes)
    upper = 1.0 if successes == trials else solve(1 - tail, successes + 1)
    return lower, upper


def _check_run(alternative: Any, alpha: Any, n_simulations: Any, compare_options: dict[str, Any],
               func: str) -> tuple[float, int]:
    """The checked alpha and number of simulations of a run, its alternative and compare options checked."""
    check_alternative(alternative, func)
    alpha = check_probability(alpha, "alpha", func)
    n_simulations = _check_count(n_simulations, "n_simulations", func)
    _check_options(compare_options, func)
    return alpha, n_simulations


def _check_count(value: Any, name: str, func: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{func}: {name} must be a positive integer; got {value!r}")
    return int(value)


def _check_delta(delta: Any, func: str) -> Optional[float]:
    if delta is None:
        return None
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not math.isfinite(delta):
        raise ValueError(f"{func}: delta must be a finite number or None; got {delta!r}")
    return float(delta)


def _differences(x: Any, y: Any, func: str) -> tuple[np.ndarray, np.ndarray]:
    xa = as_real_array(x, "x", func)
    ya = as_real_array(y, "y", func)
    if len(xa) != len(ya):
        raise ValueError(f"{func}: x and y must score the same items; got {len(xa)} and {len(ya)} entries")
    if len(xa) < 2:
        raise ValueError(f"{func}: the pilot needs at least 2 items to estimate the spread of differences; got {len(xa)}")
    return xa, ya


def normal_power(x: ArrayLike, y: ArrayLike, n: int, delta: Optional[float] = None, *, alpha: float = 0.05,
                 alternative: Alternative = "two-sided") -> float:
    """Power of the paired z test of the mean difference, with the pilot's SD of differences.

    The quick closed form: with s the pilot's standard deviation of ``x - y`` (ddof=1) and
    ``z = delta sqrt(n) / s``, the power is ``Phi(z - z_(1-alpha))`` ("greater"),
    ``Phi(-z - z_(1-alpha))`` ("less") or ``Phi(z - z_(1-alpha/2)) + Phi(-z - z_(1-alpha/2))``
    (two-sided). It ignores the discreteness of an exact test and the shape of the
    differences, which :func:`simulated_power` keeps.

    Parameters
    ----------
    x, y : array_like, shape (N,)
        Per-item scores of systems A and B in the pilot.
    n : int
        Items of the planned study.
    delta : float, optional
        Mean difference E[x - y] to detect; the pilot's mean difference if None.
    alpha : float
    alternative : {"two-sided", "greater", "less"}

    Examples
    --------
    >>> import pairperm
    >>> round(pairperm.normal_power([0.3, 0.5, 0.4, 0.9], [0.1, 0.6, 0.2, 0.5], n=10), 4)
    0.7656
    """
    func = "normal_power"
    xa, ya = _differences(x, y, func)
    n = _check_count(n, "n", func)
    alpha = check_probability(alpha, "alpha", func)
    check_alternative(alternative, func)
    d = xa - ya
    sd = float(np.std(d, ddof=1))
    if not sd > 0:
        raise ValueError(f"{func}: the pilot's differences x - y are all equal; the normal approximation needs spread")
    effect = float(np.mean(d)) if delta is None else _check_delta(delta, func)
    assert effect is not None
    z = effect * math.sqrt(n) / sd
    if alternative == "greater":
        return _NORMAL.cdf(z - _NORMAL.inv_cdf(1 - alpha))
    if alternative == "less":
        return _NORMAL.cdf(-z - _NORMAL.inv_cdf(1 - alpha))
    critical = _NORMAL.inv_cdf(1 - alpha / 2)
    return _NORMAL.cdf(z - critical) + _NORMAL.cdf(-z - critical)


@dataclasses.dataclass(frozen=True)
class _Pilot:
    """The pilot as the replicates resample it: per-item arrays, and the items of each unit."""

    x: np.ndarray
    y: np.ndarray
    units: Optional[list[np.ndarray]]  # item indices of each unit; None when items are the units
    per_item: bool  # scores a shift of y can move (kinds "mean"/"sum", not 0/1)

    @property
    def size(self) -> int:
        return len(self.x) if self.units is None else len(self.units)


def _read_pilot(x: Any, y: Any, metric: Any, groups: Any, func: str) -> _Pilot:
    xa, ya = np.asarray(x), np.asarray(y)
    if xa.ndim == 0 or ya.ndim == 0 or len(xa) != len(ya):
        raise ValueError(f"{func}: x and y must be paired per-item arrays of the same length; got shapes "
                         f"{xa.shape} and {ya.shape}")
    if len(xa) < 2:
        raise ValueError(f"{func}: the pilot needs at least 2 items; got {len(xa)}")
    row = metric_named(metric)
    per_item = row is not None and row.kind in ("mean", "sum") and xa.ndim == 1
    units = None
    if groups is not None:
        found = read_groups(groups, len(xa), func)
        bounds = list(found.starts) + [len(xa)]
        # read_groups refuses a single unit, so at least two units are resampled.
        units = [found.order[bounds[u]:bounds[u + 1]] for u in range(found.n_units)]
    return _Pilot(xa, ya, units, per_item)


def _shifted(pilot: _Pilot, delta: Optional[float], func: str) -> np.ndarray:
    """y's pilot scores shifted so that the pilot's mean difference x - y equals delta."""
    if delta is None:
        return pilot.y
    if not pilot.per_item:
        raise ValueError(f"{func}: delta shifts per-item scores (1-D x and y of a metric such as 'mean' or 'sum'); "
                         "for metrics of statistics (f1, bleu, corpus_chrf ...) simulate the effect with generator=")
    if is_binary(pilot.x) and is_binary(pilot.y):
        raise ValueError(f"{func}: 0/1 scores cannot be shifted to a target delta; pairperm.power_paired_binary gives "
                         "their power exactly, or pass generator= to simulate the design")
    xa = pilot.x.astype(np.float64)
    ya = pilot.y.astype(np.float64)
    return ya + (float(np.mean(xa - ya)) - delta)


def _replicate(pilot: _Pilot, y: np.ndarray, n: int, seed: int, k: int) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
    """Replicate k's resample: n items (or n whole units) drawn with replacement, by the
    uniforms of replicate k, so every n and delta sees the same draws."""
    draw = np.minimum((np.random.default_rng([seed, k]).random(n) * pilot.size).astype(np.int64), pilot.size - 1)
    if pilot.units is None:
        return pilot.x[draw], y[draw], None
    members = [pilot.units[u] for u in draw]
    items = np.concatenate(members)
    # A unit drawn twice enters as two units: each draw is its own exchangeable unit.
    labels = np.repeat(np.arange(n), [len(m) for m in members])
    return pilot.x[items], y[items], labels


def _base_seed(rng: SeedLike, func: str) -> int:
    check_rng(rng, func)
    return int(np.random.default_rng(rng).integers(2**63))


def _check_options(options: dict[str, Any], func: str) -> None:
    unknown = sorted(set(options) - set(_COMPARE_OPTIONS))
    if unknown:
        raise ValueError(f"{func}: unknown option(s) {', '.join(unknown)}; the test of each replicate takes "
                         f"{', '.join(_COMPARE_OPTIONS)} (alternative and rng are set by the simulation)")


def _replicate_pvalues(pilot: Optional[_Pilot], generator: Optional[ReplicateGenerator], n: int, delta: Optional[float],
                       n_simulations: int, seed: int, metric: Any, alternative: Alternative, options: dict[str, Any],
                       func: str) -> np.ndarray:
    y = _shifted(pilot, delta, func) if pilot is not None else None
    pvalues = np.empty(n_simulations)
    for k in range(n_simulations):
        groups: Any = None
        if pilot is not None:
            assert y is not None
            xr, yr, groups = _replicate(pilot, y, n, seed, k)
        else:
            assert generator is not None
            drawn = generator(np.random.default_rng([seed, k]), n)
            if not isinstance(drawn, tuple) or len(drawn) not in (2, 3):
                raise ValueError(f"{func}: generator(rng, n) must return a tuple (x, y) or (x, y, groups); "
                                 f"got {type(drawn).__name__}")
            xr, yr = drawn[0], drawn[1]
            groups = drawn[2] if len(drawn) == 3 else None
        result = compare(xr, yr, metric, alternative=alternative, rng=np.random.default_rng([seed, k, 1]),
                         groups=groups, **options)
        pvalues[k] = result.pvalue
    return pvalues


def simulated_power(x: Optional[ArrayLike] = None, y: Optional[ArrayLike] = None, *,
                    metric: Union[str, Callable[..., Any]] = "mean", n: Optional[int] = None,
                    delta: Optional[float] = None, n_simulations: int = 1000, alpha: float = 0.05,
                    alternative: Alternative = "two-sided", groups: Optional[ArrayLike] = None,
                    generator: Optional[ReplicateGenerator] = None, rng: SeedLike = None, confidence_level: float = 0.95,
                    **compare_options: Any) -> SimulatedPower:
    """Power of :func:`pairperm.compare`'s paired test for any metric, by simulation.

    Either from a pilot study (``x``, ``y``: the two systems' per-item scores or statistics):
    each replicate draws ``n`` items with replacement (``n`` whole units under ``groups=``; a
    unit drawn twice counts as two units), after shifting y so that the mean difference is
    ``delta``; or from ``generator(rng, n)``, returning ``(x, y)`` or ``(x, y, groups)`` of a
    replicate. See the module notes for the common random numbers and the shift.

    Parameters
    ----------
    x, y : array_like, optional
        The pilot's paired scores, in any form ``compare`` takes for ``metric`` (e.g. (N,)
        scores, (N, 3) F1 counts, (N, 10) BLEU statistics). Not with ``generator``.
    metric : str or callable
        As for :func:`pairperm.compare`.
    n : int, optional
        Items (units under ``groups=``) per replicate: the pilot's size if None; required
        with ``generator``.
    delta : float, optional
        Target per-item mean difference E[x - y], by shifting the pilot's y scores. Only for
        per-item real or integer scores ("mean", "sum", ...), never 0/1 scores (refused: see
        :func:`pairperm.power_paired_binary`). None keeps the pilot's own effect. Under
        ``groups=`` the shift sets the item-level mean difference.
    n_simulations : int
    alpha : float
        A replicate rejects when its p-value is <= alpha.
    alternative : {"two-sided", "greater", "less"}
    groups : array_like, optional
        The pilot's unit labels (passages, prompts ...): whole units are resampled and tested.
    generator : callable, optional
        ``generator(rng, n) -> (x, y)`` or ``(x, y, groups)``, drawn with replicate k's
        generator ``default_rng([seed, k])``.
    rng : None, int or numpy.random.Generator
        Seeds every replicate (common random numbers across n and delta).
    confidence_level : float
        Level of ``interval``.
    **compare_options
        ``method`` and ``n_resamples``, passed to ``compare``.

    Returns
    -------
    SimulatedPower

    Warns
    -----
    PrecisionWarning
        When the normal approximation (:func:`normal_power`, computed for 1-D per-item pilots
        without groups) lies outside the simulation's 99% Clopper-Pearson interval: the
        closed form is then not to be trusted for this design.

    Examples
    --------
    >>> import pairperm
    >>> x = [0.61, 0.72, 0.55, 0.80, 0.67, 0.59, 0.74, 0.70]
    >>> y = [0.58, 0.70, 0.57, 0.71, 0.60, 0.61, 0.69, 0.66]
    >>> r = pairperm.simulated_power(x, y, n=20, n_simulations=200, rng=1)
    >>> 0.0 <= r.interval[0] <= r.power <= r.interval[1] <= 1.0
    True
    """
    func = "simulated_power"
    alpha, n_simulations = _check_run(alternative, alpha, n_simulations, compare_options, func)
    confidence_level = check_probability(confidence_level, "confidence_level", func)
    delta = _check_delta(delta, func)
    if not callable(metric) and metric_named(metric) is None:
        raise ValueError(f"{func}: metric must be a callable or a metric name pairperm.compare takes; got {metric!r}")
    seed = _base_seed(rng, func)
    pilot: Optional[_Pilot] = None
    if generator is not None:
        if x is not None or y is not None or groups is not None or delta is not None:
            raise ValueError(f"{func}: generator= replaces the pilot: pass neither x, y, groups nor delta with it")
        if not callable(generator):
            raise ValueError(f"{func}: generator must be a callable generator(rng, n) -> (x, y); got {generator!r}")
        if n is None:
            raise ValueError(f"{func}: n (items per replicate) is required with generator=")
    elif x is None or y is None:
        raise ValueError(f"{func}: pass the pilot's scores x and y, or generator=")
    else:
        pilot = _read_pilot(x, y, metric, groups, func)
    n = pilot.size if n is None and pilot is not None else _check_count(n, "n", func)
    assert n is not None
    pvalues = _replicate_pvalues(pilot, generator, n, delta, n_simulations, seed, metric, alternative,
                                 compare_options, func)
    rejections = int(np.count_nonzero(pvalues <= alpha))
    power = rejections / n_simulations
    normal = None
    if pilot is not None and pilot.per_item and pilot.units is None and float(np.std(pilot.x - pilot.y)) > 0:
        normal = normal_power(pilot.x, pilot.y, n, delta, alpha=alpha, alternative=alternative)
        low, high = clopper_pearson(rejections, n_simulations, _CHECK_LEVEL)
        if not low <= normal <= high:
            warn_caller(f"{func}: the normal approximation's power lies outside the simulation's 99% interval; "
                        "the shape or discreteness of the differences matters for this design, trust the simulation",
                        PrecisionWarning)
    return SimulatedPower(power=power, standard_error=math.sqrt(power * (1 - power) / n_simulations),
                          interval=clopper_pearson(rejections, n_simulations, confidence_level),
                          confidence_level=confidence_level, pvalues=pvalues, n=n, delta=delta, alpha=alpha,
                          normal=normal)


def simulated_minimum_detectable_effect(x: ArrayLike, y: ArrayLike, *, n: Optional[int] = None, power: float = 0.8,
                                        metric: Union[str, Callable[..., Any]] = "mean", n_simulations: int = 1000,
                                        alpha: float = 0.05, alternative: Alternative = "two-sided",
                                        groups: Optional[ArrayLike] = None, rng: SeedLike = None,
                                        tolerance: Optional[float] = None, **compare_options: Any) -> float:
    """Smallest mean difference E[x - y] that :func:`simulated_power` detects with `power`.

    Bisection on delta with common random numbers: every trial delta shifts the same resampled
    items, so the simulated power moves with delta alone (for a one-sided exact test it is
    non-decreasing in delta replicate by replicate). The search is on delta > 0 ("two-sided",
    "greater") or delta < 0 ("less"), bracketed by doubling from the normal approximation's
    answer, and stops when the bracket is narrower than `tolerance` (default: 1e-3 times the
    pilot's standard error of the mean difference at n). The upper end of the final bracket,
    whose simulated power reaches `power`, is returned. Per-item, non-0/1 pilots only (see
    :func:`simulated_power`).

    Examples
    --------
    >>> import pairperm
    >>> x = [0.61, 0.72, 0.55, 0.80, 0.67, 0.59, 0.74, 0.70]
    >>> y = [0.58, 0.70, 0.57, 0.71, 0.60, 0.61, 0.69, 0.66]
    >>> mde = pairperm.simulated_minimum_detectable_effect(x, y, n=30, n_simulations=100, rng=2)
    >>> 0 < mde < 0.1
    True
    """
    func = "simulated_minimum_detectable_effect"
    alpha, n_simulations = _check_run(alternative, alpha, n_simulations, compare_options, func)
    target = check_probability(power, "power", func)
    pilot = _read_pilot(x, y, metric, groups, func)
    n = pilot.size if n is None else _check_count(n, "n", func)
    if tolerance is not None and (isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real)
                                  or not tolerance > 0):
        raise ValueError(f"{func}: tolerance must be a positive number or None; got {tolerance!r}")
    seed = _base_seed(rng, func)
    d = pilot.x.astype(np.float64) - pilot.y.astype(np.float64) if pilot.per_item else np.zeros(1)
    sd = float(np.std(d, ddof=1)) if len(d) > 1 else 0.0
    if not sd > 0:
        raise ValueError(f"{func}: needs 1-D per-item pilot scores (metric such as 'mean' or 'sum') whose differences "
                         "x - y vary")
    scale = sd / math.sqrt(n)
    step = float(tolerance) if tolerance is not None else 1e-3 * scale
    sign = -1.0 if alternative == "less" else 1.0
    sides = 2 if alternative == "two-sided" else 1

    def power_at(magnitude: float) -> float:
        pvalues = _replicate_pvalues(pilot, None, n, sign * magnitude, n_simulations, seed, metric, alternative,
                                     compare_options, func)
        return float(np.count_nonzero(pvalues <= alpha)) / n_simulations

    low, high = 0.0, scale * (_NORMAL.inv_cdf(1 - alpha / sides) + _NORMAL.inv_cdf(target))
    for _ in range(40):
        if power_at(high) >= target:
            break
        low, high = high, 2 * high
    else:
        raise ValueError(f"{func}: no delta up to {sign * high:g} reaches power {target}; the test cannot reject at "
                         f"this n (too few items or units for alpha={alpha})")
    while high - low > step:
        middle = (low + high) / 2
        if power_at(middle) >= target:
            high = middle
        else:
            low = middle
    return sign * high
