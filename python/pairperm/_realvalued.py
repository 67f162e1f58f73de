"""The paired-permutation test of a summed statistic with real-valued local effects.

Z_n is uniform on ``{stay[n], swap[n]}`` and ``S = sum_n Z_n``; the observed value is
``sum(stay)``. For two systems' per-entry scores x, y: ``stay = x - y``, ``swap = y - x``.

Ties: a state counts as at least as extreme as the observed one when it is so in exact
arithmetic, up to the round-off of reading the values and of the sums formed (so that e.g.
scores 0.1 + 0.2 and 0.3, or 54.7 - 54.6 and 47.6 - 47.5, tie)::

    greater:   S >= s_obs - tol
    less:      S <= s_obs + tol
    two-sided: |S - mu| >= |s_obs - mu| - tol     (mu = E[S])

Per varying entry n let ``c_n = |stay| + |swap|``, or for effects formed from scores,
``c_n = max(|stay| + |swap|, (j + 1) (sum |x| + sum |y|))`` over the entry's j scores per side
(``2 (|x| + |y|)`` for single scores): the round-off of a difference is relative to the scores
it came from. ``tol`` is 0 when the values (the scores, when given) lie on a binary grid 2^g
with ``sum(c_n) < 2^(53 + g)``, fine enough for every sum and difference to be exact (integers,
halves, quarters, ...); otherwise it is the rigorous round-off bound ``(n + 4) * eps *
sum(c_n)`` over the n entries with ``stay != swap`` (eps = 2^-52), far below any difference the
data resolve. An explicit ``rtol`` widens it by ``rtol * sum(|stay| + |swap|)``. The same rule,
on the same thresholds, is used by every method, and everything runs in rescaled units, so the
p-value does not depend on the units of the scores (1e-300 or 1e300). The scores' magnitudes
and grid come from ``pairperm._units.ScoreRoundoff``; the rule itself is the core's
``real_problem``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import pairperm._core as _core

from ._errors import SupportTooLargeError
from ._stats import clopper_pearson

__all__ = ["REAL_METHODS", "REAL_MAX_EXACT", "RealPValue", "real_sum_pvalue", "too_many_to_list"]

REAL_METHODS = ("auto", "exact", "saddlepoint_is", "monte_carlo")
REAL_MAX_EXACT: int = int(_core.real_max_exact_varying)


@dataclass(frozen=True)
class RealPValue:
    """A p-value of the real-valued paired-permutation test.

    Attributes
    ----------
    pvalue : float
    log_pvalue : float
        Natural log of the p-value, meaningful where ``pvalue`` underflows to 0.
    pvalue_ci : tuple of float or None
        95% interval: from the importance-sampling variance (``"saddlepoint_is"``) or
        Clopper-Pearson (``"monte_carlo"``); None for ``"exact"``.
    log_pvalue_ci : tuple of float or None
        The same interval in natural logs, meaningful where ``pvalue_ci`` underflows.
    method : str
        The route that ran: ``"exact"``, ``"saddlepoint_is"`` or ``"monte_carlo"``.
    n_resamples : int or None
    saddlepoint : float or None
        The Lugannani-Rice approximation of the same p-value (``"saddlepoint_is"`` only).
    pvalue_is_bound : bool
        True when no importance sample reached the rejection region: ``pvalue`` is then the
        Chernoff upper bound of the tail (never 0).
    """

    pvalue: float
    log_pvalue: float
    pvalue_ci: tuple[float, float] | None
    method: str
    n_resamples: int | None
    saddlepoint: float | None
    log_pvalue_ci: tuple[float, float] | None = None
    pvalue_is_bound: bool = False

    def __repr__(self) -> str:
        parts = [f"pvalue={self.pvalue:.6g}", f"log_pvalue={self.log_pvalue:.6g}"]
        if self.pvalue_ci is not None:
            parts.append(f"pvalue_ci=({self.pvalue_ci[0]:.6g}, {self.pvalue_ci[1]:.6g})")
        parts.append(f"method={self.method!r}")
        if self.n_resamples is not None:
            parts.append(f"n_resamples={self.n_resamples}")
        if self.saddlepoint is not None:
            parts.append(f"saddlepoint={self.saddlepoint:.6g}")
        if self.pvalue_is_bound:
            parts.append("pvalue_is_bound=True")
        return f"RealPValue({', '.join(parts)})"


def too_many_to_list(n_varying: int) -> SupportTooLargeError:
    """The error of method="exact" on more varying real values than it lists."""
    return SupportTooLargeError(
        f"method='exact' enumerates 2^n states and is limited to n <= {REAL_MAX_EXACT} entries "
        f"with stay != swap; got n = {n_varying}. Use method='auto' (beyond that size: tilted importance "
        f"sampling, with a relative error bar at any p) or method='monte_carlo'."
    )


def real_sum_pvalue(
    stay: np.ndarray,
    swap: np.ndarray,
    *,
    alternative: str,
    method: str = "auto",
    n_resamples: int = 10_000,
    seed: int = 0,
    rtol: float | None = None,
    n_threads: int = 0,
    scores: dict | None = None,
) -> RealPValue:
    """p-value of ``S = sum_n Z_n`` against ``sum(stay)``, Z_n uniform on ``{stay[n], swap[n]}``.

    Parameters
    ----------
    stay, swap : float64 ndarray, shape (N,)
        Finite local effects (for scores x, y: ``x - y`` and ``y - x``).
    alternative : {"two-sided", "greater", "less"}
    method : {"auto", "exact", "saddlepoint_is", "monte_carlo"}
        ``"exact"``: meet-in-the-middle enumeration, ``hits / 2^n`` exactly; at most
        ``REAL_MAX_EXACT`` (40) entries may have ``stay != swap``.
        ``"saddlepoint_is"``: importance sampling under the exponentially tilted law (tilt
        from the saddlepoint equation), in logs, so the error bar is relative down to
        p = 1e-300 and below; rounds of ``n_resamples`` samples are added (at most 8) until
        the 95% interval's relative half-width is at most 5%, and while no sample has reached
        the region. Also reports the Lugannani-Rice approximation.
        ``"monte_carlo"``: the plain sign-flip sampler, ``p = (1 + hits) / (1 + K)``.
        ``"auto"``: ``"exact"`` when feasible, otherwise ``"saddlepoint_is"``.
    n_resamples : int
        Samples of plain Monte Carlo; samples per round of importance sampling.
    seed : int
        Seed of the sampler (0 <= seed < 2^64). Results do not depend on ``n_threads``.
    rtol : float or None
        None: ties up to round-off only; a number >= 0 widens the tie slack by
        ``rtol * sum(|stay| + |swap|)`` (see the module docstring).
    n_threads : int
        0: all hardware threads.
    scores : dict or None
        For effects formed from scores (stay = X - Y): ``ScoreRoundoff.core_args()``, the
        scores' magnitudes and binary grid, from which the tie slack is taken (see the module
        docstring). None: the effects are taken as read.
    """
    if method not in REAL_METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, REAL_METHODS))}; got {method!r}")
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be one of 'two-sided', 'greater', 'less'; got {alternative!r}")
    if rtol is None:
        rtol = 0.0
    if not (isinstance(rtol, (int, float)) and np.isfinite(rtol) and rtol >= 0):
        raise ValueError(f"rtol must be None or a finite number >= 0; got {rtol!r}")
    if method in ("saddlepoint_is", "monte_carlo", "auto") and int(n_resamples) < 2:
        raise ValueError(f"n_resamples must be >= 2; got {n_resamples}")
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be in [0, 2**64); got {seed}")
    scores = scores or {}

    if method in ("auto", "exact"):
        o = _core.execute_real(stay, swap, alternative, method, float(rtol), int(n_resamples), n_threads, seed, None,
                               **scores)
        if o.shortfall == "too_many_to_list":
            raise too_many_to_list(int(o.cost))
        if o.route == "meet_in_the_middle":
            return RealPValue(float(o.pvalue), float(o.log_pvalue), None, "exact", None, None)
        return RealPValue(float(o.pvalue), float(o.log_pvalue), o.ci, "saddlepoint_is", int(o.n_resamples),
                          float(o.saddlepoint), o.log_ci, bool(o.is_bound))
    if method == "monte_carlo":
        p, hits = _core.real_monte_carlo(stay, swap, alternative, float(rtol), int(n_resamples), seed, n_threads,
                                        **scores)
        ci = clopper_pearson(int(hits), int(n_resamples))
        log_ci = (math.log(ci[0]) if ci[0] > 0 else -math.inf, math.log(ci[1]))
        return RealPValue(float(p), float(np.log(p)), ci, "monte_carlo", int(n_resamples), None, log_ci)
    d = _core.real_saddlepoint_is(stay, swap, alternative, float(rtol), int(n_resamples), seed, n_threads,
                                  _core.real_is_max_rounds, _core.real_is_target_half_width, **scores)
    ci = (float(d["ci"][0]), float(d["ci"][1]))
    log_ci = (float(d["log_ci"][0]), float(d["log_ci"][1]))
    return RealPValue(float(d["pvalue"]), float(d["log_pvalue"]), ci, "saddlepoint_is", int(d["n_resamples"]),
                      float(d["saddlepoint"]), log_ci, bool(d["is_bound"]))
