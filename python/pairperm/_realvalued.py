"""The paired-permutation test of a summed statistic with real-valued local effects.

Z_n is uniform on ``{stay[n], swap[n]}`` and ``S = sum_n Z_n``; the observed value is
``sum(stay)``. For two systems' per-entry scores x, y: ``stay = x - y``, ``swap = y - x``.

Ties: a state counts as at least as extreme as the observed one within the absolute slack
``tol = rtol * sum(|stay| + |swap|)`` over the entries with ``stay != swap`` (the scale of every
sum involved; constant entries shift S and s_obs alike), so that states equal in exact
arithmetic stay tied after round-off (e.g. scores 0.1 + 0.2 and 0.3)::

    greater:   S >= s_obs - tol
    less:      S <= s_obs + tol
    two-sided: |S - mu| >= |s_obs - mu| - tol     (mu = E[S])

The same rule, on the same thresholds, is used by every method; the sums themselves differ
between methods only in summation order (a few ulps of ``sum |k|``, far below ``tol``).
Distinct states closer than ``tol`` to the observed one count as ties too, which errs on the
conservative side. The default ``rtol = 1e-9`` covers the worst-case round-off of sums of up to
~10^6 entries (n * 2^-53 * scale) with room to spare; ``rtol = 0`` compares raw floats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _core
from ._errors import SupportTooLargeError
from ._stats import clopper_pearson

__all__ = ["REAL_METHODS", "REAL_MAX_EXACT", "RealPValue", "real_sum_pvalue"]

REAL_METHODS = ("auto", "exact", "saddlepoint_is", "monte_carlo")
REAL_MAX_EXACT: int = int(_core.real_max_exact_varying)
DEFAULT_RTOL = 1e-9


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
    method : str
        The route that ran: ``"exact"``, ``"saddlepoint_is"`` or ``"monte_carlo"``.
    n_resamples : int or None
    saddlepoint : float or None
        The Lugannani-Rice approximation of the same p-value (``"saddlepoint_is"`` only).
    """

    pvalue: float
    log_pvalue: float
    pvalue_ci: tuple[float, float] | None
    method: str
    n_resamples: int | None
    saddlepoint: float | None

    def __repr__(self) -> str:
        parts = [f"pvalue={self.pvalue:.6g}", f"log_pvalue={self.log_pvalue:.6g}"]
        if self.pvalue_ci is not None:
            parts.append(f"pvalue_ci=({self.pvalue_ci[0]:.6g}, {self.pvalue_ci[1]:.6g})")
        parts.append(f"method={self.method!r}")
        if self.n_resamples is not None:
            parts.append(f"n_resamples={self.n_resamples}")
        if self.saddlepoint is not None:
            parts.append(f"saddlepoint={self.saddlepoint:.6g}")
        return f"RealPValue({', '.join(parts)})"


def real_sum_pvalue(
    stay: np.ndarray,
    swap: np.ndarray,
    *,
    alternative: str,
    method: str = "auto",
    n_resamples: int = 10_000,
    seed: int = 0,
    rtol: float = DEFAULT_RTOL,
    n_threads: int = 0,
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
        the 95% interval's relative half-width is at most 5%. Also reports the
        Lugannani-Rice approximation.
        ``"monte_carlo"``: the plain sign-flip sampler, ``p = (1 + hits) / (1 + K)``.
        ``"auto"``: ``"exact"`` when feasible, otherwise ``"saddlepoint_is"``.
    n_resamples : int
        Samples of plain Monte Carlo; samples per round of importance sampling.
    seed : int
        Seed of the sampler (0 <= seed < 2^64). Results do not depend on ``n_threads``.
    rtol : float
        Relative tie tolerance (see the module docstring).
    n_threads : int
        0: all hardware threads.
    """
    if method not in REAL_METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, REAL_METHODS))}; got {method!r}")
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be one of 'two-sided', 'greater', 'less'; got {alternative!r}")
    if not (isinstance(rtol, (int, float)) and np.isfinite(rtol) and rtol >= 0):
        raise ValueError(f"rtol must be a finite number >= 0; got {rtol!r}")
    if method in ("saddlepoint_is", "monte_carlo", "auto") and int(n_resamples) < 2:
        raise ValueError(f"n_resamples must be >= 2; got {n_resamples}")
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be in [0, 2**64); got {seed}")

    if method in ("auto", "exact"):
        n_varying = int(_core.real_n_varying(stay, swap))
        if n_varying <= REAL_MAX_EXACT:
            p, log_p, _hits, _ = _core.real_exact(stay, swap, alternative, float(rtol))
            return RealPValue(float(p), float(log_p), None, "exact", None, None)
        if method == "exact":
            raise SupportTooLargeError(
                f"method='exact' enumerates 2^n states and is limited to n <= {REAL_MAX_EXACT} entries "
                f"with stay != swap; got n = {n_varying}. Use method='saddlepoint_is' (tilted importance "
                f"sampling, accurate at any p) or method='monte_carlo'."
            )
    if method == "monte_carlo":
        p, hits = _core.real_monte_carlo(stay, swap, alternative, float(rtol), int(n_resamples), seed, n_threads)
        ci = clopper_pearson(int(hits), int(n_resamples))
        return RealPValue(float(p), float(np.log(p)), ci, "monte_carlo", int(n_resamples), None)
    return _tilted_rounds(stay, swap, alternative, float(rtol), int(n_resamples), seed, n_threads)


# Importance sampling adds rounds of n_resamples (independent streams) until the 95% interval's
# relative half-width is at most this, or MAX_ROUNDS rounds are in. The estimator's relative
# variance grows slowly with the depth (~3 at p ~ 1e-3, ~11 at 1e-20, ~25 at 1e-100, measured at
# N = 10^4), so one round of 10^4 reaches it down to p ~ 1e-10 and four rounds at 1e-100.
TARGET_RELATIVE_HALF_WIDTH = 0.05
MAX_ROUNDS = 8


def _tilted_rounds(stay: np.ndarray, swap: np.ndarray, alternative: str, rtol: float, n_resamples: int, seed: int,
                   n_threads: int) -> RealPValue:
    """Pool rounds of the tilted sampler: the mean of all samples, in logs, and its standard error
    from each round's own (all rounds sample the same tilted law, so they pool by weight K)."""
    log_ps: list[float] = []
    rels: list[float] = []
    saddlepoint = 1.0
    for r in range(MAX_ROUNDS):
        round_seed = int(np.random.SeedSequence(seed, spawn_key=(r,)).generate_state(1, np.uint64)[0])
        d = _core.real_saddlepoint_is(stay, swap, alternative, rtol, n_resamples, round_seed, n_threads)
        saddlepoint = float(d["saddlepoint"])
        if not np.isfinite(d["log_pvalue"]):
            return RealPValue(0.0, -np.inf, (0.0, 0.0), "saddlepoint_is", n_resamples * (r + 1), saddlepoint)
        log_ps.append(float(d["log_pvalue"]))
        # The core's interval is p (1 +- 1.96 rel), its upper end capped at 1: recover rel, the
        # round's relative standard error, from whichever end is not capped.
        lo, hi = (float(v) - float(d["log_pvalue"]) for v in d["log_ci"])
        rels.append(max(float(np.expm1(hi)), float(-np.expm1(lo)) if np.isfinite(lo) else 0.0) / 1.96)
        log_p = float(np.logaddexp.reduce(log_ps)) - np.log(len(log_ps))
        weights = np.exp(np.array(log_ps) - log_p)  # p_i / p, all rounds of equal size
        rel = float(np.sqrt(np.sum((weights * np.array(rels)) ** 2))) / len(log_ps)
        if 1.96 * rel <= TARGET_RELATIVE_HALF_WIDTH:
            break
    p = float(np.exp(log_p))
    low = p * max(0.0, 1.0 - 1.96 * rel)
    return RealPValue(p, log_p, (low, min(1.0, p * (1.0 + 1.96 * rel))), "saddlepoint_is", n_resamples * len(log_ps),
                      saddlepoint)
