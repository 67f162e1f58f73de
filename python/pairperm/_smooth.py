"""Deep p-values for a smooth statistic h(S) of an m-dimensional sum, by tilted importance sampling.

S = sum_n Z_n with Z_n uniform on {stay[n], swap[n]} (vectors of m summed statistics: BLEU's
ten counts, macro-F1's (tp, fp, fn) per class, both systems stacked). Plain Monte Carlo resolves
p only down to ~1/K; here each entry swaps with its own probability q_n, tilted towards the
rejection region, and every sample is weighted back by its likelihood ratio, so the estimate is
unbiased and its error bar relative at any depth (p = 1e-20 from ~10^3 samples).

The tilt of a tail {h >= b} (or {h <= b}) comes from h's linearisation at a point P on or near
its boundary: with g the gradient of h at P (central differences over a fraction of the null
spread of each coordinate), swapping entry n moves the linearised statistic by k_n = g . d_n
(d_n = swap[n] - stay[n]), and the tilt theta solves sum_n k_n q_n(theta) = t, q_n = logistic(theta
k_n), where t is where the linearised boundary lies: the tilted mean sits on the boundary, the
exponential tilt of the real-valued route applied to the linearised sum. On a curved boundary a
few Newton steps re-linearise at the tilted mean until that lies on {h = b}. The observed tail takes
P = S_obs; the mirror tail of a two-sided test, {h <= -|h_obs|} (or {h >= |h_obs|}), takes P =
the all-swapped state, where a difference of two systems' metrics is exactly -h_obs. Where h is
odd under swapping every entry (h(S_stay + S_swap - S) = -h(S), as every difference of two
systems' metrics is), the mirror tail is the observed one's image and takes its tilt mirrored.

Where h bends within the tilted law's spread of one coordinate (BLEU's brevity penalty has a kink
where a system's hypothesis length crosses the reference length), the region follows neither
side's linearisation, and samples beyond the kink would carry weights the tilt never meant: that
tail also gets one tilt along each one-sided slope.

All tilts are sampled in equal numbers and every sample is weighted by the balance heuristic
w = p_0(B) / mean_j p_j(B) (unbiased for any region, whichever tilt drew the sample). Which samples
count is decided by the statistic's own rule (``CallableStatistic``: ties within rtol, integers
exactly), identical to plain Monte Carlo and exact enumeration. The linearised tails' exact
probability is a control variate (``pairperm._smooth_control``): the first round is drawn under
its coefficient 1 and, where more rounds are needed, fits the coefficient they are drawn under.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

import pairperm._core as _core

from ._effects import LocalEffects
from ._errors import warn_caller
from ._sampling import block_seed
from ._smooth_control import (
    Control,
    LinearTail,
    Pool,
    SmoothPValue,
    estimate,
    fit_beta,
    floored_exp,
    linear_control,
    needed,
    relative_half_width,
)
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
# The first round, whose samples also fit the control's coefficient for every later one: the
# interval's skewness correction needs some hundreds of samples to see the weights' tail. A later
# round is at most _EARLY_ROUND_CAP or twice the samples pooled before it: a plan from few samples
# (whose spread is itself uncertain) commits to little, and the pool is checked again soon.
_FIRST_ROUND = 512
_EARLY_ROUND_CAP = 2048
# Across a kink the control fits the region less well, and what is left of Y - beta C has a
# heavier tail (samples on the kink's far side) than a few hundred samples show: there the
# intervals of short runs covered ~94% (against 4 million plain resamples, BLEU at N = 400), and
# a longer first round brings them to ~96%.
_KINKED_FIRST_ROUND = 4096
# With few entries S takes few values and what the control leaves is lumpy: chrF of 13 sentences
# covered 94% after 512 samples, 96.5% after 1,536. Samples of few entries cost little, so the
# first round is also at least this many entry draws (~2.5 ms of the sampler): 512 samples at
# N = 2,000, all of n_resamples below N = 100.
_FIRST_DRAWS = 1e6
# Deep in a tail the guard sets the samples needed; the first round is sized for it up front
# (with the guard's critical value ~2.2 and a margin), so that most tails need one round.
_GUARD_ROUND = 2.4
# A one-sided slope of h over two tilted spreads of a coordinate that differs from the other
# side's by this many 1 / theta per spread gets the kink's tilts.
_KINK = 0.3
# Two evaluations of h agree when within this share of their size (h odd under the swap of every
# entry): the mirror tail then takes the observed tail's tilt mirrored.
_ODD_RTOL = 1e-12


@dataclass(frozen=True)
class _Tilt:
    log_odds: np.ndarray  # log q_n - log(1 - q_n) of the rounded tilted probabilities
    log_norm: float  # sum_n log(2 (1 - q_n)): log p_j(B) - log p_0(B) = B . log_odds + log_norm
    thresholds: np.ndarray  # q_n * 2^32, the sampler's integer thresholds
    log_chernoff: float  # log of the Chernoff bound of the linearised tail
    theta: float  # the tilt of the linearised sum (0: the null mean lies in the region)

    @property
    def q(self) -> np.ndarray:
        return self.thresholds / _GRID


@dataclass(frozen=True)
class _Linear:
    """A tail's linearisation h ~ h_point + g . (S - point), the region {sum B k >= t} (or <= t)
    it makes, and the tilt aimed at it."""

    k: np.ndarray
    t: float
    greater: bool
    tilt: _Tilt
    point: np.ndarray
    h_point: float
    g: np.ndarray

    def tail(self) -> LinearTail:
        return LinearTail(self.k, self.t, self.greater, self.tilt.q, self.tilt.theta)


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


def _tilt_of(thresholds: np.ndarray, log_chernoff: float, theta: float) -> _Tilt:
    q = thresholds / _GRID
    log_q, log_1mq = np.log(q), np.log1p(-q)
    return _Tilt(log_q - log_1mq, float((log_1mq + math.log(2.0)).sum()), thresholds.astype(np.uint64),
                 log_chernoff, theta)


def _tilt(k: np.ndarray, t: float, greater: bool) -> _Tilt:
    """The tilt for the linearised tail {sum B k >= t} (greater) or {sum B k <= t}."""
    null_mean = 0.5 * float(k.sum())
    inside = null_mean >= t if greater else null_mean <= t
    theta = 0.0 if inside else _solve_theta(k, t)
    p = _logistic(theta * k)
    coarse = np.rint(p * _COARSE_GRID)
    thresholds = np.where((coarse >= 1.0) & (coarse <= _COARSE_GRID - 1.0), coarse * (_GRID / _COARSE_GRID),
                          np.clip(np.rint(p * _GRID), 1.0, _GRID - 1.0))
    cgf = float(np.logaddexp(0.0, theta * k).sum()) - len(k) * math.log(2.0)
    return _tilt_of(thresholds, min(0.0, cgf - theta * t), theta)


def _mirror(tilt: _Tilt) -> _Tilt:
    """The tilt of the mirror image B -> 1 - B: every q_n becomes 1 - q_n exactly, so its
    log-odds are the negated ones (negated exactly: the sampler then sums one column for both)."""
    q = tilt.q
    return _Tilt(-tilt.log_odds, float((np.log(q) + math.log(2.0)).sum()),
                 (_GRID - tilt.thresholds.astype(np.float64)).astype(np.uint64), tilt.log_chernoff, -tilt.theta)


@dataclass(frozen=True)
class _Problem:
    """The varying entries' moves and the box S lives in, and h as a function of points."""

    delta: np.ndarray  # (n_var, m) swap - stay of the entries that move
    s_stay: np.ndarray
    s_swap: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    spread: np.ndarray
    integer: bool
    h: Callable[[np.ndarray], np.ndarray]  # h at a (r, m) stack of points, float64

    def tilted_mean(self, tilt: _Tilt) -> np.ndarray:
        mean = np.clip(self.s_stay + tilt.q @ self.delta, self.lo, self.hi)
        return np.rint(mean) if self.integer else mean

    def local(self, point: np.ndarray, reach: Optional[np.ndarray] = None) -> tuple[float, np.ndarray, np.ndarray]:
        """h at `point` and its gradient (central differences over _GRADIENT_STEP null spreads,
        kept inside the box S can reach; 0 where a coordinate cannot move or h is not finite
        there), and with `reach` the one-sided slopes over it on either side (the gradient's
        where the box stops a side), from one call of h."""
        m = len(point)
        step = _GRADIENT_STEP * self.spread
        if self.integer:
            step = np.maximum(1.0, np.round(step))
        moves = [step] if reach is None else [step, np.maximum(1.0, np.round(reach)) if self.integer else reach]
        ups = [np.minimum(point + s, self.hi) for s in moves]
        downs = [np.maximum(point - s, self.lo) for s in moves]
        idx = np.arange(m)
        points = np.repeat(point.reshape(1, m), 1 + 2 * m * len(moves), axis=0)
        for i, (up, down) in enumerate(zip(ups, downs)):
            points[1 + 2 * m * i + idx, idx] = up
            points[1 + 2 * m * i + m + idx, idx] = down
        values = self.h(points)
        h0 = float(values[0])
        width = ups[0] - downs[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            g = (values[1:1 + m] - values[1 + m:1 + 2 * m]) / np.where(width > 0, width, 1.0)
            g = np.where((width > 0) & np.isfinite(g), g, 0.0)
            if reach is None:
                return h0, g, np.zeros((2, m))
            up, down = ups[1] - point, point - downs[1]
            slope_up = np.where(up > 0, (values[1 + 2 * m:1 + 3 * m] - h0) / np.where(up > 0, up, 1.0), g)
            slope_down = np.where(down > 0, (h0 - values[1 + 3 * m:]) / np.where(down > 0, down, 1.0), g)
        return h0, g, np.stack([slope_up, slope_down])


def _problem(effects: LocalEffects, stat: Any, func: str) -> _Problem:
    n, m = effects.n, effects.m
    stay = effects.stay.reshape(n, m).astype(np.float64)
    swap = effects.swap.reshape(n, m).astype(np.float64)
    delta = swap - stay
    delta = np.ascontiguousarray(delta[(delta != 0).any(axis=1)])
    integer = not effects.is_real
    s_stay = stay.sum(axis=0)

    def h(points: np.ndarray) -> np.ndarray:
        arg = points.astype(np.int64) if integer else points
        return apply_vectorised(stat.fn, arg[:, 0] if stat.one_d else arg, len(points), func).astype(np.float64)

    return _Problem(delta, s_stay, s_stay + delta.sum(axis=0), s_stay + np.minimum(delta, 0).sum(axis=0),
                    s_stay + np.maximum(delta, 0).sum(axis=0), np.sqrt((delta * delta).sum(axis=0)), integer, h)


def _aim(pr: _Problem, point: np.ndarray, h_point: float, boundary: float,
         greater: bool) -> tuple[_Linear, list[_Tilt]]:
    """The tilt of the tail {h >= boundary} (greater) or {h <= boundary}, from h's linearisation
    at `point`, re-aimed by Newton steps until its mean lies on the boundary; the linearisation at
    that mean (the control's region); and the tilts of a kink there (see _kink_tilts)."""
    _, g, slopes = pr.local(point)
    spread = np.zeros(len(point))
    for _ in range(_AIM_STEPS):
        k = pr.delta @ g
        # Linearised: h(S) ~ h_point + g . (S - point), S = s_stay + sum B d, so the boundary h = b
        # is at sum B k = t.
        t = float(g @ (point - pr.s_stay)) + (boundary - h_point)
        tilt = _tilt(k, t, greater)
        # Newton on the curved boundary: re-linearise at the tilted mean until it lies on {h = b},
        # where the tilt along h's gradient is the dominating point's.
        mean = pr.tilted_mean(tilt)
        spread = np.sqrt((tilt.q * (1.0 - tilt.q)) @ (pr.delta * pr.delta))
        h_mean, g_mean, slopes = pr.local(mean, 2.0 * spread)
        if not math.isfinite(h_mean):
            return _Linear(k, t, greater, tilt, point, h_point, g), []
        if np.all(tilt.thresholds == _GRID / 2) and (h_mean >= boundary if greater else h_mean <= boundary):
            # The null mean itself lies in the region: nothing to aim. (Where only the
            # linearisation says so, as across a kink between S_obs and the null mean, h is
            # linearised again there.)
            return _Linear(k, t, greater, tilt, point, h_point, g), []
        point, h_point, g = mean, h_mean, g_mean
        if abs(h_mean - boundary) <= 0.01 * 0.5 * float(np.sqrt(k @ k)):
            break
    lin = _Linear(pr.delta @ g, float(g @ (point - pr.s_stay)) + (boundary - h_point), greater, tilt, point,
                  h_point, g)
    return lin, _kink_tilts(pr, lin, slopes, spread)


def _kink_tilts(pr: _Problem, lin: _Linear, slopes: np.ndarray, spread: np.ndarray) -> list[_Tilt]:
    """A tilt along each one-sided slope of the coordinate where h bends most within the tilted
    spread, if that bend moves h by more than _KINK / theta: samples beyond a kink then come from
    a tilt meant for them."""
    bend = np.abs(slopes[0] - slopes[1]) * spread * abs(lin.tilt.theta)
    bend = np.where(np.isfinite(bend), bend, 0.0)
    j = int(np.argmax(bend))
    if not bend[j] > _KINK:
        return []
    b_minus_h = lin.t - float(lin.g @ (lin.point - pr.s_stay))
    out = []
    for slope in slopes[:, j]:
        g = lin.g.copy()
        g[j] = slope
        out.append(_tilt(pr.delta @ g, float(g @ (lin.point - pr.s_stay)) + b_minus_h, lin.greater))
    return out


def _tails(pr: _Problem, h_obs: float, alternative: str) -> tuple[list[_Linear], list[_Tilt], bool]:
    """Each tail's linearisation (with its tilt), the kinks' tilts, and whether the second tail
    is the first's mirror image."""
    if alternative in ("greater", "less"):
        lin, kinks = _aim(pr, pr.s_stay, h_obs, h_obs, alternative == "greater")
        return [lin], kinks, False
    b = abs(h_obs)
    observed_upper = h_obs >= 0
    first, kinks = _aim(pr, pr.s_stay, h_obs, b if observed_upper else -b, observed_upper)
    mirrored_points = pr.s_stay + pr.s_swap - np.stack([pr.s_stay, first.point])
    there = pr.h(mirrored_points)
    here = np.array([h_obs, first.h_point])
    if np.all(np.abs(here + there) <= _ODD_RTOL * np.maximum(np.abs(here), np.abs(there))):
        # {sum (1 - B) k >= t} is {sum B k <= sum k - t} (and so for <=).
        mirror = _Linear(first.k, float(first.k.sum()) - first.t, not first.greater, _mirror(first.tilt),
                         mirrored_points[1], float(there[1]), -first.g)
        return [first, mirror], kinks + [_mirror(tl) for tl in kinks], True
    second, more = _aim(pr, pr.s_swap, float(there[0]), -b if observed_upper else b, not observed_upper)
    return [first, second], kinks + more, False


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


def _sampler(pr: _Problem, stat: Any, alternative: str, tilts: list[_Tilt], control: Optional[Control], seed: int,
             n_jobs: int) -> Callable[[int, Pool, float], None]:
    """draw(k, pool, beta): k more samples (shared equally by the tilts, each chunk its own
    stream, so rounds add samples and never repeat them) into pool, under the control's
    coefficient beta."""
    n_tilts = len(tilts)
    basis, signs = _signed_basis(pr.delta)
    # A mirrored tilt's log-odds are another's negated: one column for both (the sampler sums up
    # to four real columns at the cost of one, eight at twice that).
    odds, odds_signs = _signed_basis(np.stack([tl.log_odds for tl in tilts], axis=1))
    parts = [basis, odds]
    if control is not None:
        parts.append(control.cols)
    # One matrix product gives the sampled sums, every tilt's log-likelihood ratio and the
    # linearised sums.
    cols = np.ascontiguousarray(np.concatenate(parts, axis=1))
    n_basis, n_odds = basis.shape[1], odds.shape[1]
    log_norms = np.array([tl.log_norm for tl in tilts])
    chunk = 0

    def draw(k: int, pool: Pool, beta: float) -> None:
        nonlocal chunk
        left = -(-k // n_tilts)  # samples of each tilt
        while left > 0:
            kk = min(_CHUNK // n_tilts, left)
            # Each tilt's chunk from its own stream; then the statistic sees them all at once.
            parts = []
            for tl in tilts:
                parts.append(_core.tilted_sample_sums(cols, tl.thresholds, kk, block_seed(seed, chunk), n_jobs))
                chunk += 1
            prod = np.concatenate(parts) if n_tilts > 1 else parts[0]
            sums = pr.s_stay + prod[:, :n_basis] @ signs
            log_ratio = prod[:, n_basis:n_basis + n_odds] @ odds_signs + log_norms
            top = log_ratio.max(axis=1)
            log_w = math.log(n_tilts) - top - np.log(np.exp(log_ratio - top[:, None]).sum(axis=1))
            points = np.rint(sums).astype(np.int64) if pr.integer else sums
            hit = stat.extreme(points, alternative)
            count = (control.counts(prod[:, n_basis + n_odds:]) if control is not None
                     else np.zeros(len(prod), dtype=np.int64))
            pool.add(log_w, hit, count, beta)
            left -= kk

    return draw


def _first_round(tails: list[_Linear], control: Control, target: float, n_resamples: int, kinked: bool) -> int:
    """What the interval's guard asks for (see pairperm._smooth_control): the largest weight in
    the regions is about the likelihood ratio on a tilt's boundary, e^(K(theta) - theta t) (its
    Chernoff bound) times the tilts sharing the samples, and the guard's relative half-width
    about twice that over p K, p about the control's mean. At least _FIRST_ROUND
    (_KINKED_FIRST_ROUND where a kink got tilts) and _FIRST_DRAWS entry draws, at most
    n_resamples."""
    largest = len(tails) * math.exp(max(lin.tilt.log_chernoff for lin in tails) - control.log_mean)
    least = max(_KINKED_FIRST_ROUND if kinked else _FIRST_ROUND, math.ceil(_FIRST_DRAWS / len(tails[0].k)))
    return int(min(n_resamples, max(least, math.ceil(_GUARD_ROUND * largest / target))))


def _round_size(samples: float, done: int, n_resamples: int) -> int:
    """At least 1/8 of the `done` samples pooled; at most n_resamples, and at most _EARLY_ROUND_CAP
    or twice the samples pooled."""
    most = min(n_resamples, max(_EARLY_ROUND_CAP, 2 * done))
    return int(min(max(math.ceil(min(samples, 1e18)), done // 8, 1), most))


def smooth_pvalue(effects: LocalEffects, stat: Any, alternative: str, *, n_resamples: int, seed: int,
                  n_jobs: int, func: str) -> SmoothPValue:
    """Tilted importance sampling of P[h(S*) at least as extreme as h_obs] (`stat`: a
    ``CallableStatistic``) with the linearised tails' exact probability as a control variate.
    The first round (_FIRST_ROUND samples) is drawn under the control's coefficient 1; if it does
    not reach the target, the coefficient fitted on it holds for every later sample. Rounds are
    pooled until the relative 95% half-width is at most 5%, at most real_is_max_rounds x
    n_resamples samples. Without a control (its tail out of the engine's reach) the first round
    is n_resamples."""
    pr = _problem(effects, stat, func)
    n_var = len(pr.delta)
    if n_var == 0:
        return SmoothPValue(1.0, 0.0, (1.0, 1.0), (0.0, 0.0), 0, 0)
    tails, kinks, mirrored = _tails(pr, float(stat.value), alternative)
    tilts = [lin.tilt for lin in tails] + kinks
    control = linear_control([lin.tail() for lin in tails], mirrored)
    draw = _sampler(pr, stat, alternative, tilts, control, seed, n_jobs)
    target = _core.real_is_target_half_width
    cap = _core.real_is_max_rounds * n_resamples
    pool = Pool()
    fitted = control is None
    beta, round_size = 0.0, n_resamples
    if control is not None:
        beta, round_size = 1.0, _first_round(tails, control, target, n_resamples, bool(kinks))
    result: Optional[SmoothPValue] = None
    while pool.done < cap:
        draw(min(round_size, cap - pool.done), pool, beta)
        if pool.hits == 0:
            round_size = n_resamples
            continue  # nothing to estimate from yet: keep sampling
        result = estimate(pool, control, n_var)
        if relative_half_width(result) <= target:
            break
        if not fitted and control is not None:
            beta, fitted = fit_beta(pool, control), True
        round_size = _round_size(needed(pool, control, n_var, beta, target) - pool.done, pool.done, n_resamples)
    if result is not None:
        return result
    # No sample reached the region: the Chernoff bound of the linearised tails, flagged; never 0.
    log_floor = -n_var * math.log(2.0)
    log_bound = max(log_floor, min(0.0, float(np.logaddexp.reduce([lin.tilt.log_chernoff for lin in tails]))))
    warn_caller(
        f"{func}: no importance sample reached the rejection region; reporting the Chernoff bound of the "
        "statistic's linearised tail (pvalue_is_bound=True), an upper bound for a linear statistic only. A larger "
        "n_resamples or method='monte_carlo' estimates it."
    )
    bound = floored_exp(log_bound, n_var)
    return SmoothPValue(bound, log_bound, (floored_exp(log_floor, n_var), bound), (log_floor, log_bound), pool.done, 0,
                        True)
