"""The control variate of tilted importance sampling (``pairperm._smooth``) and the estimate it
makes.

Deep in a tail most of the variance of the importance-sampling estimate Y = w 1{h(S) in the region}
(w the likelihood ratio of the null to the tilted law) is the spread of the weights over the
region, which the linearised statistic shares: on a region {sum_n B_n k_n >= t} the weights fall as
e^{-theta sum B k}. Rounded to integer steps k'_n, that region's null probability mu is what the
core's tail engine computes (band-limited Fourier inversion with a certified error of ~1e-12
relative), so C = w * 1{sum B k' >= T} has E[C] = mu exactly and

    Z = Y - beta (C - mu)

is unbiased for the p-value for every constant beta. The first round of samples is drawn under
beta = 1, and beta is fitted on it for every later round: each sample's coefficient is fixed
before it is drawn, so each Z is unbiased, and the interval is that of a mean of independent
terms (the core's Edgeworth-corrected one, as without the control). Only the decision to stop,
once the interval is narrow enough, looks at the samples, as it did before the control (in
the coverage runs of tests/test_smooth_control.py the mean estimate lay within 0.4% of p). A two-sided test of a
difference of two systems' metrics has the mirror image of the region as its other tail
(B -> 1 - B keeps the null law): the same mu, one tail engine call.

When the control matches the region closely every sample can have the same Z, and a spread of 0
would claim an exact p-value; the samples where the region and the control disagree are then
only rare, not absent. The interval therefore counts two more values, the mean plus and minus the
largest weight seen in either region over sqrt(2): the effect of one such sample not drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

import pairperm._core as _core

__all__ = ["Control", "LinearTail", "Pool", "SmoothPValue", "estimate", "fit_beta", "floored_exp", "linear_control",
           "needed", "relative_half_width"]

_GRID = float(_core.tilted_threshold_one)
# Rounding the linearisation to integer steps moves its boundary by sum_n B_n e_n (|e_n| <= 1/2
# step); deep in a tail the weights change by e^{-theta x} over a distance x, so the step is
# chosen to keep theta times that shift's spread near _ROUND_SHIFT. More steps cost the tail
# engine more (its Fourier grid grows with the largest step).
_ROUND_SHIFT = 3e-3
_MIN_STEPS, _MAX_STEPS = 256, 1 << 15
# The tail engine's work (frequencies x groups) above which the steps are made coarser, down to
# _MIN_STEPS, and past that the control is left out: a few widely spaced steps (F1 counts of 0, 1
# and 2) make a lattice whose spectrum needs many frequencies, each dearer where a step repeats.
_TAIL_MAX_WORK = 5e5
# A tail probability is used when its certified error is below this share of it (the interval
# is widened by beta times that error besides).
_TAIL_RTOL = 1e-6
# The control's coefficient is kept in [0, _MAX_BETA]: a pilot that saw few samples in the
# control region fits wild values, which are unbiased too but only add variance.
_MAX_BETA = 1.5
# A planned round aims at this much more than the variance seen asks for, so that one round
# usually reaches the target half-width.
_PLAN_MARGIN = 1.3


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
class LinearTail:
    """A tail's linearisation {sum B k >= t} (greater) or {<= t}, and the tilted probabilities
    q_n of the law sampled around it with its tilt theta (which set how finely to round k)."""

    k: np.ndarray
    t: float
    greater: bool
    q: np.ndarray
    theta: float


@dataclass(frozen=True)
class Control:
    """Regions {sign * sum B cols[:, col] >= limit} (sign -1: a region's mirror, read on the same
    column): C = w times the number of regions a sample lies in, E[C] = e^log_mean, known to
    within e^log_error."""

    cols: np.ndarray  # (n, c) integer steps, one column per rounded linearisation
    regions: tuple[tuple[int, float, float], ...]  # (column, sign, limit)
    log_mean: float
    log_error: float

    def counts(self, linear: np.ndarray) -> np.ndarray:
        """How many regions each sample lies in, from its sums of the columns."""
        out = np.zeros(len(linear), dtype=np.int64)
        for col, sign, limit in self.regions:
            out += sign * linear[:, col] >= limit
        return out


def _rounded(tail: LinearTail, most: float) -> tuple[np.ndarray, int]:
    """The region turned upward ({<= t} negated) on integer steps, the largest at most `most`:
    (steps, the least integer sum in it), so that rounding moves the boundary by about
    _ROUND_SHIFT / theta."""
    k, t = (tail.k, tail.t) if tail.greater else (-tail.k, -tail.t)
    kmax = float(np.abs(k).max())
    pq = tail.q * (1.0 - tail.q)
    spread = math.sqrt(max(float((k * k) @ pq), 1e-300))
    theta = max(abs(tail.theta), 1.0 / spread)
    scale = theta * math.sqrt(float(pq.sum()) / 12.0) / _ROUND_SHIFT
    scale = min(max(scale, _MIN_STEPS / kmax), most / kmax)
    return np.rint(k * scale).astype(np.int64), math.ceil(t * scale)


def _tail_probability(tail: LinearTail) -> Optional[tuple[np.ndarray, float, float, float]]:
    """(steps, limit, log P_0[sum B steps >= limit], its certified absolute error) of the tail's
    rounded region, coarser steps where the engine's work would exceed _TAIL_MAX_WORK; None where
    even the coarsest would, or the error is not below _TAIL_RTOL of the probability."""
    most = float(_MAX_STEPS)
    while True:
        steps, target = _rounded(tail, most)
        stay, swap = _orient(steps, target)
        done, p, log_p, error, _ = _core.band_pvalue(_core.summarize(stay, swap), "greater", _TAIL_MAX_WORK)
        if done:
            break
        if most <= _MIN_STEPS or float(np.abs(steps).max()) <= _MIN_STEPS:
            return None
        most = max(float(_MIN_STEPS), most / 4.0)
    if not math.isfinite(log_p) or (p > 0 and error > _TAIL_RTOL * p):
        return None
    return steps, float(stay.sum()), log_p, error


def _orient(steps: np.ndarray, target: int) -> tuple[np.ndarray, np.ndarray]:
    """stay, swap with {stay_n, swap_n} = {0, steps_n} and sum(stay) near `target`: the sums of
    stay and of B . steps have the same null law (each entry takes either value with probability
    1/2), so P[S >= sum(stay)] is P[sum B steps >= sum(stay)]. Entries are turned from their
    smaller value to their larger one, smallest moves first, while the sum stays at most the
    target; then one entry turned is traded for one not turned that closes the gap best."""
    turned = steps < 0  # every entry at its smaller value: the least sum
    move = np.abs(steps)
    gap = target - int(steps[turned].sum())
    order = np.argsort(move, kind="stable")
    reach = np.cumsum(move[order])
    taken = int(np.searchsorted(reach, gap, side="right"))
    flip = np.zeros(len(steps), dtype=bool)
    flip[order[:taken]] = True
    rest = gap - (int(reach[taken - 1]) if taken else 0)
    if rest > 0 and 0 < taken < len(steps):
        inside, outside = move[order[:taken]], move[order[taken:]]
        # outside[j] - inside[i] <= rest, as close to it as one trade gets.
        j = np.searchsorted(outside, inside + rest, side="right") - 1
        gain = np.where(j >= 0, outside[np.maximum(j, 0)] - inside, -1)
        i = int(np.argmax(gain))
        if gain[i] > 0:
            flip[order[i]] = False
            flip[order[taken + int(j[i])]] = True
    turned ^= flip
    return np.where(turned, steps, 0), np.where(turned, 0, steps)


def linear_control(tails: list[LinearTail], mirrored: bool) -> Optional[Control]:
    """The control of these tails (with `mirrored`, the second is the first's mirror image and
    shares its column and probability); None where the tail engine would take too long or
    certify too loosely, or a linearisation does not move."""
    cols: list[np.ndarray] = []
    regions: list[tuple[int, float, float]] = []
    log_means: list[float] = []
    log_errors: list[float] = []
    for tail in tails[:1] if mirrored else tails:
        found = _tail_probability(tail) if np.any(tail.k) else None
        if found is None:
            return None
        steps, limit, log_p, error = found
        total = float(steps.sum())
        cols.append(steps.astype(np.float64))
        if mirrored and 2.0 * limit <= total:
            # The region and its mirror cover every state between them: their union is everything.
            return Control(np.stack(cols, axis=1), ((0, 1.0, -math.inf),), 0.0, -math.inf)
        copies = 2 if mirrored else 1
        regions.append((len(cols) - 1, 1.0, limit))
        if mirrored:
            # {sum (1 - B) steps >= limit}: the same probability (B -> 1 - B keeps the null law),
            # disjoint from the region.
            regions.append((len(cols) - 1, -1.0, limit - total))
        log_means.append(log_p + math.log(copies))
        log_errors.append(math.log(copies * error) if error > 0 else -math.inf)
    return Control(np.stack(cols, axis=1), tuple(regions), float(np.logaddexp.reduce(log_means)),
                   float(np.logaddexp.reduce(log_errors)))


@dataclass
class Pool:
    """The samples of one estimate that lie in the region or in a control region (all others
    are 0 in Y and C): their log-weights, whether in the region, in how many control regions and
    the control's coefficient they were drawn under; and how many others each coefficient has."""

    log_w: list[np.ndarray] = field(default_factory=list)
    hit: list[np.ndarray] = field(default_factory=list)
    count: list[np.ndarray] = field(default_factory=list)
    beta: list[np.ndarray] = field(default_factory=list)
    others: dict[float, int] = field(default_factory=dict)
    done: int = 0
    hits: int = 0

    def add(self, log_w: np.ndarray, hit: np.ndarray, count: np.ndarray, beta: float) -> None:
        touched = hit | (count > 0)
        self.log_w.append(log_w[touched])
        self.hit.append(hit[touched])
        self.count.append(count[touched])
        self.beta.append(np.full(int(np.count_nonzero(touched)), beta))
        self.others[beta] = self.others.get(beta, 0) + len(log_w) - len(self.beta[-1])
        self.done += len(log_w)
        self.hits += int(np.count_nonzero(hit))

    def scaled(self, log_mean: float) -> tuple[float, np.ndarray, np.ndarray]:
        """Y and C of the touched samples divided by e^scale, the largest of their weights and
        the control's mean, and the scale's log."""
        log_w = np.concatenate(self.log_w)
        scale = max(float(log_w.max()) if len(log_w) else -math.inf, log_mean)
        w = np.exp(log_w - scale)
        return scale, w * np.concatenate(self.hit), w * np.concatenate(self.count)


def floored_exp(log_p: float, n_var: int) -> float:
    """e^log_p, exactly 2^-n_var at the floor (the observed state's own probability)."""
    return math.ldexp(1.0, -n_var) if log_p <= -n_var * math.log(2.0) else math.exp(log_p)


def relative_half_width(r: SmoothPValue) -> float:
    return 0.5 * (math.exp(r.log_pvalue_ci[1] - r.log_pvalue) - math.exp(r.log_pvalue_ci[0] - r.log_pvalue))


def fit_beta(pool: Pool, control: Control) -> float:
    """The coefficient minimising the variance of Y - beta C over the pool, kept in [0, _MAX_BETA];
    1 where the pool cannot tell the fit from 1 (two standard errors): a region and its
    linearisation that agree take the weights' spread out whole."""
    _, y, c = pool.scaled(control.log_mean)
    n, rest = pool.done, pool.done - len(y)
    y_mean, c_mean = float(y.sum()) / n, float(c.sum()) / n
    # Centred sums over every sample: the untouched ones have Y = C = 0.
    var_c = float(((c - c_mean) ** 2).sum()) + rest * c_mean**2
    if not var_c > 0:
        return 0.0
    beta = (float(((y - y_mean) * (c - c_mean)).sum()) + rest * y_mean * c_mean) / var_c
    e = (y - y_mean) - beta * (c - c_mean)
    e_other = beta * c_mean - y_mean
    se = math.sqrt((float((e * e).sum()) + rest * e_other**2) / max(n - 2, 1) / var_c)
    return 1.0 if abs(beta - 1.0) <= 2.0 * se else min(max(beta, 0.0), _MAX_BETA)


def estimate(pool: Pool, control: Optional[Control], n_var: int, beta: Optional[float] = None,
             guarded: bool = True) -> SmoothPValue:
    """The mean of Z = Y - beta (C - E[C]) over the pool (each sample with the coefficient it was
    drawn under, or all with `beta`; no control: Z = Y) and its 95% interval, in logs past
    underflow, never below 2^-n_var (the observed state's own probability); `guarded` (with a
    control) counts the two values of the module's docstring in the spread."""
    log_floor = -n_var * math.log(2.0)
    log_mean = control.log_mean if control is not None else -math.inf
    scale, y, c = pool.scaled(log_mean)
    n = pool.done
    mean_c = math.exp(log_mean - scale)
    betas = np.concatenate(pool.beta) if beta is None else np.full(len(y), beta)
    others = pool.others if beta is None else {beta: n - len(y)}
    z = y - betas * (c - mean_c)
    # Every untouched sample's Z is beta E[C]: a few distinct values, each with its count.
    z_others = [(b * mean_c, k) for b, k in others.items() if k]
    z_mean = (float(z.sum()) + sum(v * k for v, k in z_others)) / n
    d = z - z_mean
    if guarded and control is not None:
        guard = float(max(y.max(initial=0.0), c.max(initial=0.0))) / math.sqrt(2.0)
        d = np.concatenate([d, [guard, -guard]])
    d_others = [(v - z_mean, k) for v, k in z_others]
    terms = len(d) + sum(k for _, k in d_others)
    sd = math.sqrt((float((d * d).sum()) + sum(k * v * v for v, k in d_others)) / terms)
    half = 0.0
    if sd > 0:
        # The core's interval from the raw moment sums of x = 1 + (Z - mean) / sd: unit scale
        # and mean 1, so nothing cancels, whatever the depth and however small the spread.
        u = d / sd
        u2 = u * u
        e = [float(u.sum()), float(u2.sum()), float((u2 * u).sum()), float((u2 * u2).sum())]
        for v, k in d_others:
            e = [e[j] + k * (v / sd) ** (j + 1) for j in range(4)]
        x_mean, rel = _core.weighted_mean_interval(terms + e[0], terms + 2 * e[0] + e[1],
                                                   terms + 3 * e[0] + 3 * e[1] + e[2],
                                                   terms + 4 * e[0] + 6 * e[1] + 4 * e[2] + e[3], float(terms))
        half = rel * x_mean * sd
    if control is not None:
        half += float(betas.max(initial=max(others, default=0.0))) * math.exp(control.log_error - scale)
    log_c = scale + math.log(z_mean) if z_mean > 0 else -math.inf
    log_p = min(0.0, max(log_floor, log_c))
    log_lo = max(log_floor, scale + math.log(z_mean - half)) if z_mean > half else log_floor
    log_hi = min(0.0, scale + math.log(z_mean + half)) if z_mean + half > 0 else log_floor
    log_lo, log_hi = min(log_lo, log_p), max(log_hi, log_p)
    lo, hi = floored_exp(log_lo, n_var), floored_exp(log_hi, n_var)
    return SmoothPValue(floored_exp(log_p, n_var), log_p, (lo, hi), (log_lo, log_hi), n, pool.hits)


def needed(pool: Pool, control: Optional[Control], n_var: int, beta: float, target: float) -> float:
    """Samples drawn under `beta` that the target relative half-width needs in all, with a
    margin, judged from the pool as if all were drawn under it: the squared half-width is a / K
    from the samples' spread plus b / K^2 from the guard."""
    spread = relative_half_width(estimate(pool, control, n_var, beta, guarded=False)) ** 2
    if not math.isfinite(spread):
        return math.inf
    guard = 0.0
    if control is not None:
        guard = max(0.0, relative_half_width(estimate(pool, control, n_var, beta)) ** 2 - spread)
    aim = target**2 / _PLAN_MARGIN
    if guard == 0.0:
        x = aim / spread if spread > 0 else math.inf
    else:  # a x + b x^2 = aim for x = done / K
        x = (math.sqrt(spread**2 + 4.0 * guard * aim) - spread) / (2.0 * guard)
    return pool.done / x if x > 0 else math.inf
