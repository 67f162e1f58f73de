"""Deep p-values for a smooth statistic h(S) of an m-dimensional sum, by tilted importance sampling.

S = sum_n Z_n with Z_n uniform on {stay[n], swap[n]} (vectors of m summed statistics: BLEU's
ten counts, macro-F1's (tp, fp, fn) per class, both systems stacked). Plain Monte Carlo resolves
p only down to ~1/K; here each entry swaps with its own probability q_n, tilted towards the
rejection region, and every sample is weighted back by its likelihood ratio, so the estimate is
unbiased and its error bar relative at any depth (p = 1e-20 from ~10^4 samples).

The tilt of a tail {h >= b} (or {h <= b}) comes from h's linearisation at a point P on or near
its boundary: with g the gradient of h at P (central differences over a fraction of the null
spread of each coordinate), swapping entry n moves the linearised statistic by k_n = g . d_n
(d_n = swap[n] - stay[n]), and the tilt theta solves sum_n k_n q_n(theta) = t, q_n = logistic(theta
k_n), where t is where the linearised boundary lies: the tilted mean sits on the boundary, the
exponential tilt of the real-valued route applied to the linearised sum. On a curved boundary a
few Newton steps re-linearise at the tilted mean until that lies on {h = b}. The observed tail takes
P = S_obs; the mirror tail of a two-sided test, {h <= -|h_obs|} (or {h >= |h_obs|}), takes P =
the all-swapped state, where a difference of two systems' metrics is exactly -h_obs.

A two-sided test samples both tilts in equal numbers and weights every sample by the balance
heuristic w = p_0(B) / mean_j p_j(B) (unbiased for any region, whichever tilt drew the sample).
Which samples count is decided by the statistic's own rule (``CallableStatistic``: ties within
rtol, integers exactly), identical to plain Monte Carlo and exact enumeration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

import pairperm._core as _core

from ._effects import LocalEffects
from ._errors import warn_caller
from ._sampling import block_seed
from ._validation import apply_vectorised

__all__ = ["SmoothPValue", "smooth_pvalue"]

# Samples drawn (and handed to the statistic) at once: memory stays flat in K.
_CHUNK = 1 << 16
# The gradient's step per coordinate, as a fraction of the null spread sqrt(sum d_n^2): a chord
# over the scale S moves on, not an infinitesimal derivative (smooth statistics of counts are
# nearly linear on it, and integer-valued ones need a step of at least one).
_GRADIENT_STEP = 0.05
# Newton steps aiming a tilt's mean at the curved boundary of its tail (a few suffice: BLEU's
# boundary is nearly flat on the scale of the null spread).
_AIM_STEPS = 4
# Tilted probabilities are rounded to the sampler's grid so that the probability a sample is
# drawn with is exactly the one its weight uses: to multiples of 2^-16, which the sampler
# settles from 16 random bits, and only where that grid would cap the tilt (q within 2^-17
# of 0 or 1) to multiples of 2^-32, kept in [2^-32, 1 - 2^-32] where every weight is finite.
_GRID = float(_core.tilted_threshold_one)
_COARSE_GRID = 2.0**16


@dataclass(frozen=True)
class SmoothPValue:
    """A p-value of h(S) by tilted importance sampling: the estimate, its 95% interval (also in
    logs, meaningful past float64 underflow), samples drawn, how many reached the region, and
    whether ``pvalue`` is only the Chernoff bound of the linearised tail (no sample hit)."""

    pvalue: float
    log_pvalue: float
    pvalue_ci: tuple[float, float]
    log_pvalue_ci: tuple[float, float]
    n_resamples: int
    hits: int
    pvalue_is_bound: bool = False


@dataclass(frozen=True)
class _Tilt:
    log_odds: np.ndarray  # log q_n - log(1 - q_n) of the rounded tilted probabilities
    log_norm: float  # sum_n log(2 (1 - q_n)): log p_j(B) - log p_0(B) = B . log_odds + log_norm
    thresholds: np.ndarray  # q_n * 2^32, the sampler's integer thresholds
    log_chernoff: float  # log of the Chernoff bound of the linearised tail


def _logistic(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _solve_theta(k: np.ndarray, t: float) -> float:
    """theta with sum k logistic(theta k) = t (increasing in theta); 0 where the null mean
    sum(k) / 2 already lies on the region's side, which the caller decides. Newton's steps from
    0, which approach the root from one side where the mean is concave or convex on the way;
    once a step passes the root, the steps stay within the bracket (bisection where one would
    not)."""
    lo_reach, hi_reach = float(k[k < 0].sum()), float(k[k > 0].sum())
    nz = np.abs(k[k != 0])
    if nz.size == 0:
        return 0.0
    # A boundary beyond the linearised range is aimed at half a step inside it.
    margin = 0.5 * float(nz.min())
    t = min(max(t, lo_reach + margin), hi_reach - margin)
    if not lo_reach < t < hi_reach:
        return 0.0
    k2 = k * k

    def excess(theta: float) -> tuple[float, float]:
        q = _logistic(theta * k)
        return float(k @ q) - t, float(k2 @ (q * (1.0 - q)))

    theta = 0.0
    f, slope = excess(theta)
    toward = 1.0 if f < 0 else -1.0  # the root's side of 0
    short, beyond = 0.0, math.nan  # the last points seen before and past the root
    unit = 1.0 / math.sqrt(float(k2.sum()))
    for _ in range(200):
        nxt = theta - f / slope if slope > 0 else math.nan
        if abs(nxt - theta) <= 1e-12 * abs(nxt):
            return nxt
        if math.isnan(beyond):
            if not (nxt - short) * toward > 0:  # no usable step: walk out further
                nxt = short + toward * (abs(short) + unit)
        elif not min(short, beyond) < nxt < max(short, beyond):
            nxt = 0.5 * (short + beyond)
        theta = nxt
        f, slope = excess(theta)
        if f * toward < 0:
            short = theta
        else:
            beyond = theta
    return theta


def _tilt(k: np.ndarray, t: float, greater: bool) -> _Tilt:
    """The tilt for the linearised tail {sum B k >= t} (greater) or {sum B k <= t}."""
    null_mean = 0.5 * float(k.sum())
    inside = null_mean >= t if greater else null_mean <= t
    theta = 0.0 if inside else _solve_theta(k, t)
    p = _logistic(theta * k)
    coarse = np.rint(p * _COARSE_GRID)
    thresholds = np.where((coarse >= 1.0) & (coarse <= _COARSE_GRID - 1.0), coarse * (_GRID / _COARSE_GRID),
                          np.clip(np.rint(p * _GRID), 1.0, _GRID - 1.0))
    q = thresholds / _GRID
    log_q, log_1mq = np.log(q), np.log1p(-q)
    cgf = float(np.logaddexp(0.0, theta * k).sum()) - len(k) * math.log(2.0)
    log_chernoff = min(0.0, cgf - theta * t)
    return _Tilt(log_q - log_1mq, float((log_1mq + math.log(2.0)).sum()), thresholds.astype(np.uint64),
                 log_chernoff)


def _gradient(stat: Any, point: np.ndarray, lo: np.ndarray, hi: np.ndarray, spread: np.ndarray,
              integer: bool, func: str) -> np.ndarray:
    """Central differences of h at `point` over steps of _GRADIENT_STEP null spreads, kept inside
    the box S can reach; 0 where a coordinate cannot move or h is not finite there."""
    m = len(point)
    step = _GRADIENT_STEP * spread
    if integer:
        step = np.maximum(1.0, np.round(step))
    up = np.minimum(point + step, hi)
    down = np.maximum(point - step, lo)
    points = np.repeat(point.reshape(1, m), 2 * m, axis=0)
    idx = np.arange(m)
    points[idx, idx] = up
    points[m + idx, idx] = down
    args = points.astype(np.int64) if integer else points
    values = apply_vectorised(stat.fn, args[:, 0] if stat.one_d else args, 2 * m, func).astype(np.float64)
    width = up - down
    with np.errstate(invalid="ignore", divide="ignore"):
        g = (values[:m] - values[m:]) / np.where(width > 0, width, 1.0)
    return np.where((width > 0) & np.isfinite(g), g, 0.0)


def smooth_pvalue(effects: LocalEffects, stat: Any, alternative: str, *, n_resamples: int, seed: int,
                  n_jobs: int, func: str) -> SmoothPValue:
    """Tilted importance sampling of P[h(S*) at least as extreme as h_obs] (`stat`: a
    ``CallableStatistic``), rounds of `n_resamples` pooled until the relative 95% half-width
    is at most 5% (at most real_is_max_rounds rounds), as the real-valued route."""
    n, m = effects.n, effects.m
    stay = effects.stay.reshape(n, m).astype(np.float64)
    swap = effects.swap.reshape(n, m).astype(np.float64)
    delta = swap - stay
    varying = (delta != 0).any(axis=1)
    delta = np.ascontiguousarray(delta[varying])
    n_var = len(delta)
    log_floor = -n_var * math.log(2.0)  # the observed state alone, always in the region
    if n_var == 0:
        return SmoothPValue(1.0, 0.0, (1.0, 1.0), (0.0, 0.0), 0, 0)
    integer = not effects.is_real
    s_stay = stay.sum(axis=0)
    s_swap = s_stay + delta.sum(axis=0)
    lo = s_stay + np.minimum(delta, 0).sum(axis=0)
    hi = s_stay + np.maximum(delta, 0).sum(axis=0)
    spread = np.sqrt((delta * delta).sum(axis=0))
    h_obs = float(stat.value)

    def h_at(point: np.ndarray) -> float:
        arg = point.reshape(1, m).astype(np.int64) if integer else point.reshape(1, m)
        return float(apply_vectorised(stat.fn, arg[:, 0] if stat.one_d else arg, 1, func)[0])

    # Each tail: (a point near its boundary, the boundary b, whether the tail is h >= b).
    if alternative == "greater":
        tails = [(s_stay, h_obs, h_obs, True)]
    elif alternative == "less":
        tails = [(s_stay, h_obs, h_obs, False)]
    else:
        b = abs(h_obs)
        observed_upper = h_obs >= 0
        tails = [(s_stay, h_obs, b if observed_upper else -b, observed_upper),
                 (s_swap, h_at(s_swap), -b if observed_upper else b, not observed_upper)]
    tilts = []
    for point, h_point, boundary, greater in tails:
        for _ in range(_AIM_STEPS):
            g = _gradient(stat, point, lo, hi, spread, integer, func)
            k = delta @ g
            # Linearised: h(S) ~ h_point + g . (S - point), S = s_stay + sum B d, so the boundary h = b
            # is at sum B k = t.
            t = float(g @ (point - s_stay)) + (boundary - h_point)
            tilt = _tilt(k, t, greater)
            if np.all(tilt.thresholds == _GRID / 2):
                break  # the null itself reaches the region: nothing to aim
            # Newton on the curved boundary: re-linearise at the tilted mean until it lies on {h = b},
            # where the tilt along h's gradient is the dominating point's.
            mean = np.clip(s_stay + (tilt.thresholds / _GRID) @ delta, lo, hi)
            if integer:
                mean = np.rint(mean)
            h_mean = h_at(mean)
            if not math.isfinite(h_mean) or abs(h_mean - boundary) <= 0.01 * 0.5 * float(np.sqrt(k @ k)):
                break
            point, h_point = mean, h_mean
        tilts.append(tilt)
    n_tilts = len(tilts)
    # One matrix product gives the sampled sums and every tilt's log-likelihood ratio.
    basis, signs = _signed_basis(delta)
    cols = np.ascontiguousarray(np.concatenate([basis, np.stack([tl.log_odds for tl in tilts], axis=1)], axis=1))
    n_basis = basis.shape[1]
    log_norms = np.array([tl.log_norm for tl in tilts])

    log_w_hits: list[np.ndarray] = []
    done = hits = chunk = 0
    result: Optional[SmoothPValue] = None
    per_tilt = -(-n_resamples // n_tilts)
    for _ in range(_core.real_is_max_rounds):
        for tl in tilts:
            left = per_tilt
            while left > 0:
                kk = min(_CHUNK, left)
                # Every chunk has its own stream: rounds add samples, never repeat them.
                prod = _core.tilted_sample_sums(cols, tl.thresholds, kk, block_seed(seed, chunk), n_jobs)
                chunk += 1
                sums = s_stay + prod[:, :n_basis] @ signs
                log_ratio = prod[:, n_basis:] + log_norms
                log_w = -(np.logaddexp.reduce(log_ratio, axis=1) - math.log(n_tilts))
                points = np.rint(sums).astype(np.int64) if integer else sums
                hit = stat.extreme(points, alternative)
                log_w_hits.append(log_w[hit])
                hits += int(np.count_nonzero(hit))
                done += kk
                left -= kk
        if hits == 0:
            continue  # nothing to estimate from yet: keep sampling
        result = _estimate(np.concatenate(log_w_hits), done, hits, n_var)
        rel_hw = 0.5 * (math.exp(result.log_pvalue_ci[1] - result.log_pvalue)
                        - math.exp(result.log_pvalue_ci[0] - result.log_pvalue))
        if rel_hw <= _core.real_is_target_half_width:
            break
    if result is not None:
        return result
    # No sample reached the region: the Chernoff bound of the linearised tails, flagged; never 0.
    log_bound = max(log_floor, min(0.0, float(np.logaddexp.reduce([tl.log_chernoff for tl in tilts]))))
    warn_caller(
        f"{func}: no importance sample reached the rejection region; reporting the Chernoff bound of the "
        "statistic's linearised tail (pvalue_is_bound=True), an upper bound for a linear statistic only. A larger "
        "n_resamples or method='monte_carlo' estimates it."
    )
    return SmoothPValue(_exp(log_bound, n_var), log_bound, (_exp(log_floor, n_var), _exp(log_bound, n_var)),
                        (log_floor, log_bound), done, 0, True)


def _signed_basis(delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns of `delta` up to sign, and the (r, m) matrix of 0 and +-1 rebuilding it. Two
    systems' stacked statistics swap as (y - x, x - y): half the columns are the other half
    negated, and the sampler's cost is linear in the columns it sums."""
    cols = delta.T
    # Each moving column turned to lead with a positive entry (+ 0.0: no -0.0 left), and known by
    # its bytes.
    moving = np.flatnonzero(cols.any(axis=1))
    sign = np.sign(cols[moving, np.argmax(cols[moving] != 0, axis=1)])
    turned = np.ascontiguousarray(cols[moving] * sign[:, None] + 0.0)
    kept: dict[bytes, int] = {}
    signs = np.zeros((len(moving), delta.shape[1]))
    for row, j in enumerate(moving.tolist()):
        i = kept.setdefault(turned[row].tobytes(), len(kept))
        signs[i, j] = sign[row]
    first = sorted(kept.values())
    rows = [turned[np.flatnonzero(signs[i, moving] != 0)[0]] for i in first]
    basis = np.stack(rows, axis=1) if rows else np.zeros((len(delta), 0))
    return np.ascontiguousarray(basis), signs[:len(kept)]


def _exp(log_p: float, n_var: int) -> float:
    """e^log_p, exactly 2^-n_var at the floor (the observed state's own probability)."""
    return math.ldexp(1.0, -n_var) if log_p <= -n_var * math.log(2.0) else math.exp(log_p)


def _estimate(log_w: np.ndarray, done: int, hits: int, n_var: int) -> SmoothPValue:
    """Pooled estimate and interval from the log-weights of the samples in the region (the
    others weigh 0), scaled by the largest so nothing under- or overflows at any depth; never
    below the observed state's own probability 2^-n_var."""
    log_floor = -n_var * math.log(2.0)
    log_max = float(log_w.max())
    r = np.exp(log_w - log_max)
    r2 = r * r
    mean, rel = _core.weighted_mean_interval(float(r.sum()), float(r2.sum()), float((r2 * r).sum()),
                                             float((r2 * r2).sum()), float(done))
    log_c = log_max + math.log(mean)
    log_p = min(0.0, max(log_floor, log_c))
    log_lo = max(log_floor, log_c + math.log1p(-rel)) if rel < 1.0 else log_floor
    log_hi = min(0.0, log_c + math.log1p(rel))
    log_lo = min(log_lo, log_p)
    return SmoothPValue(_exp(log_p, n_var), log_p, (_exp(log_lo, n_var), _exp(log_hi, n_var)), (log_lo, log_hi),
                        done, hits)
