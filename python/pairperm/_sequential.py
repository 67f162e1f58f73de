"""Anytime-valid comparison of two systems: e-values and confidence sequences that stay valid
however often they are looked at, and whenever the evaluation is stopped.

A fixed-n test (McNemar, the permutation test) is valid only if the number of items is fixed in
advance; stopping as soon as it looks significant inflates its type-I error far above alpha. The
tests here are nonnegative martingales under the null (e-processes), so by Ville's inequality
P(sup_t E_t >= 1/alpha) <= alpha: the evaluation may be monitored after every item and stopped at
the first decision.

- :class:`SequentialPairedBinary`: 0/1 scores. Only discordant items carry information about
  p10 = p01; given an item is discordant, "A right" has probability theta = p10 / (p10 + p01),
  1/2 under the null. The e-value is the Krichevsky-Trofimov (Beta(1/2, 1/2)) mixture likelihood
  ratio against theta = 1/2, the confidence sequence for theta comes from the same mixture.
- :class:`SequentialPairedBounded`: real differences in known bounds, by betting with the
  predictable plug-in bets of Waudby-Smith & Ramdas (2023), "Estimating means of bounded random
  variables by betting", JRSS-B 86(1).
- :func:`e_bh`, :func:`e_bonferroni`: many comparisons from their e-values (Wang & Ramdas 2022,
  "False discovery rate control with e-values", JRSS-B 84(3)); valid under any dependence.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

Decision = str  # "A better", "B better", "equivalent within ±eps" or "continue"

_LOG_BETA_HALF_HALF = math.log(math.pi)  # B(1/2, 1/2) = pi


def _check_alpha(alpha: Any, where: str) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)):
        raise ValueError(f"{where}: alpha must be a number in (0, 1), got {alpha!r}")
    value = float(alpha)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{where}: alpha must be in (0, 1), got {alpha!r}")
    return value


def _check_equivalence(equivalence: Any, where: str, widest: float) -> Optional[float]:
    if equivalence is None:
        return None
    if isinstance(equivalence, bool) or not isinstance(equivalence, (int, float, np.floating, np.integer)):
        raise ValueError(f"{where}: equivalence must be a positive number or None, got {equivalence!r}")
    value = float(equivalence)
    if not 0.0 < value <= widest:
        raise ValueError(f"{where}: equivalence must be in (0, {widest:g}], got {equivalence!r}")
    return value


def _as_scores(values: Any, name: str, where: str) -> np.ndarray:
    """1-D float64 view of a scalar or array of scores, refusing NaN, infinities and non-numbers."""
    array = np.asarray(values)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        raise ValueError(f"{where}: {name} must be numbers, got dtype {array.dtype}")
    if array.ndim > 1:
        raise ValueError(f"{where}: {name} must be a scalar or a 1-D array, got shape {array.shape}")
    out = np.atleast_1d(array).astype(np.float64, copy=False)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{where}: {name} holds NaN or infinite values")
    return out


def _paired(x: Any, y: Any, where: str) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = _as_scores(x, "x", where), _as_scores(y, "y", where)
    if xs.shape != ys.shape:
        raise ValueError(f"{where}: x and y must have the same length, got {xs.size} and {ys.size}")
    return xs, ys


def _bracketed_root(fn: Callable[[float], tuple[float, float]], lo: float, hi: float) -> float:
    """Zero of fn on [lo, hi], where fn(lo) and fn(hi) have opposite signs; fn returns (value, slope).

    Newton steps from the best point so far, falling back to bisection whenever a step leaves the
    bracket or fails to halve it: always convergent, and quadratic near the root of the smooth,
    convex functions it is used on here.
    """
    f_lo = fn(lo)[0]
    if f_lo == 0.0:
        return lo
    lo_positive = f_lo > 0.0
    x = 0.5 * (lo + hi)
    for _ in range(200):
        value, slope = fn(x)
        if value == 0.0:
            return x
        if (value > 0.0) == lo_positive:
            lo = x
        else:
            hi = x
        width = hi - lo
        if width <= 4e-16 * max(1.0, abs(lo), abs(hi)):
            break
        step_ok = slope != 0.0 and math.isfinite(slope) and math.isfinite(value)
        candidate = x - value / slope if step_ok else lo - 1.0
        if not lo < candidate < hi or abs(candidate - x) > 0.5 * width:
            candidate = 0.5 * (lo + hi)
        if candidate == x:
            break
        x = candidate
    return 0.5 * (lo + hi)


# ---------------------------------------------------------------------------------------------
# 0/1 scores: the Krichevsky-Trofimov mixture on the discordant items


def kt_log_mixture(wins: int, losses: int) -> float:
    """log of the KT mixture likelihood: int theta^wins (1-theta)^losses Beta(1/2,1/2)(d theta)."""
    return math.lgamma(wins + 0.5) + math.lgamma(losses + 0.5) - math.lgamma(wins + losses + 1.0) - _LOG_BETA_HALF_HALF


def _log_ratio(log_mixture: float, wins: int, losses: int, theta: float) -> float:
    """log of the mixture likelihood over the likelihood at theta (0 * log 0 = 0)."""
    value = log_mixture
    if wins:
        value -= wins * math.log(theta)
    if losses:
        value -= losses * math.log1p(-theta)
    return value


def kt_interval(wins: int, losses: int, alpha: float) -> tuple[float, float]:
    """Ends of {theta : log mixture ratio(theta) < log(1/alpha)}: a (1 - alpha) confidence sequence
    for a Bernoulli probability after ``wins`` ones and ``losses`` zeros.

    The log ratio is log M - wins log theta - losses log(1 - theta), convex in theta and at most 0
    at the maximum-likelihood point wins / n (the mixture never beats the best single theta), so
    the set is an interval holding wins / n. Each end is the root of the log ratio minus
    log(1/alpha), found by bracketed Newton in log theta (lower end) or log(1 - theta) (upper end),
    where the function stays convex and nearly linear far from the root.
    """
    n = wins + losses
    if n == 0:
        return 0.0, 1.0
    log_m = kt_log_mixture(wins, losses)
    target = math.log(1.0 / alpha)
    mle = wins / n

    def lower(u: float) -> tuple[float, float]:  # u = log theta
        theta = math.exp(u)
        slope = -wins + (losses * theta / (1.0 - theta) if losses else 0.0)
        return _log_ratio(log_m, wins, losses, theta) - target, slope

    def upper(v: float) -> tuple[float, float]:  # v = log(1 - theta)
        theta_c = math.exp(v)
        slope = -losses + (wins * theta_c / (1.0 - theta_c) if wins else 0.0)
        return _log_ratio(log_m, wins, losses, 1.0 - theta_c) - target, slope

    # With no wins the ratio stays below the threshold all the way down to theta = 0 (its limit
    # there is log M < 0); likewise at theta = 1 with no losses.
    lo_end = 0.0
    if wins:
        far = -(target - log_m) / wins - 1.0 + math.log(mle)  # ratio >= -wins log theta + log M there
        lo_end = math.exp(_bracketed_root(lower, min(far, math.log(mle) - 1.0), math.log(mle)))
    hi_end = 1.0
    if losses:
        log_mle_c = math.log1p(-mle)
        far = -(target - log_m) / losses - 1.0 + log_mle_c
        hi_end = 1.0 - math.exp(_bracketed_root(upper, min(far, log_mle_c - 1.0), log_mle_c))
    return lo_end, hi_end


class SequentialPairedBinary:
    """Anytime-valid comparison of two systems' 0/1 scores on the same items.

    Feed items with :meth:`update` (one item or a batch, in the order they are evaluated) and
    look at :attr:`decision` as often as you like: the chance that it ever states a wrong
    direction ("A better" when A is not better, or the reverse), or a wrong equivalence, is at
    most ``alpha``, whatever the stopping rule.

    Counts: ``b`` items where A is right and B wrong, ``c`` the reverse. Given an item is
    discordant, theta = p10 / (p10 + p01) is the probability A wins it; theta = 1/2 under the null
    p10 = p01. The e-value is the Krichevsky-Trofimov mixture ratio
    E = 2^(b+c) B(b+1/2, c+1/2) / B(1/2, 1/2), a nonnegative martingale with mean 1 under the null.

    Direction: the confidence sequence CS_t = {theta : mixture ratio at theta < 1/alpha} covers
    the true theta at every t simultaneously with probability >= 1 - alpha (Ville's inequality
    under each theta). E >= 1/alpha exactly when 1/2 is outside CS_t; CS_t is an interval holding
    b / (b + c), so it then lies wholly on the side of 1/2 given by the sign of b - c. Claiming
    that side is wrong only if CS_t misses the true theta, so no split of alpha is needed.

    Equivalence (``equivalence=eps``): the accuracy difference is p10 - p01 = q (2 theta - 1),
    with q = p10 + p01 the discordance rate. A second KT confidence sequence for q (over all
    items) at alpha/2 and the one for theta at alpha/2 give the box of (q, theta), mapped to the
    interval :meth:`difference_interval`; "equivalent within ±eps" is declared when it lies
    inside (-eps, eps). The direction then uses the theta sequence at alpha/2 (E >= 2/alpha), so
    any wrong decision needs one of the two sequences to miss: total error <= alpha.
    """

    def __init__(self, alpha: float = 0.05, *, equivalence: Optional[float] = None) -> None:
        where = "SequentialPairedBinary"
        self.alpha = _check_alpha(alpha, where)
        self.equivalence = _check_equivalence(equivalence, where, 1.0)
        # level of each of the two sequences when equivalence is tested, of the only one otherwise
        self._theta_alpha = self.alpha / 2 if self.equivalence is not None else self.alpha
        self.n = 0
        self.b = 0
        self.c = 0

    def _counts(self, x: Any, y: Any, where: str) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = _paired(x, y, where)
        if not (np.all((xs == 0) | (xs == 1)) and np.all((ys == 0) | (ys == 1))):
            raise ValueError(f"{where}: scores must be 0 or 1")
        a_wins = (xs == 1) & (ys == 0)
        b_wins = (xs == 0) & (ys == 1)
        return a_wins, b_wins

    def update(self, x: Any, y: Any) -> None:
        """Add one item (scalars) or a batch (1-D arrays): x = A's 0/1 scores, y = B's."""
        if type(x) is int and type(y) is int and x in (0, 1) and y in (0, 1):  # the per-item fast path
            self.n += 1
            self.b += x > y
            self.c += y > x
            return
        a_wins, b_wins = self._counts(x, y, "SequentialPairedBinary.update")
        self.n += a_wins.size
        self.b += int(np.count_nonzero(a_wins))
        self.c += int(np.count_nonzero(b_wins))

    def update_path(self, x: Any, y: Any) -> np.ndarray:
        """Add a batch like :meth:`update` and return the log e-value after each of its items.

        Each discordant item multiplies E by 2 (wins + 1/2) / (discordant + 1) when A wins it
        (losses + 1/2 when B does), the ratio of consecutive KT mixtures; the log path is the
        cumulative sum of the logs of these factors, vectorised over the batch.
        """
        a_wins, b_wins = self._counts(x, y, "SequentialPairedBinary.update_path")
        wins = self.b + np.cumsum(a_wins)
        losses = self.c + np.cumsum(b_wins)
        discordant = a_wins | b_wins
        # counts before each item: the factor of a discordant item uses the counts it follows
        wins_before = wins - a_wins
        losses_before = losses - b_wins
        before = np.where(a_wins, wins_before, losses_before) + 0.5
        factor = np.where(discordant, np.log(2.0 * before / (wins_before + losses_before + 1.0)), 0.0)
        path: np.ndarray = self.log_e_value + np.cumsum(factor)
        self.n += a_wins.size
        self.b = int(wins[-1]) if wins.size else self.b
        self.c = int(losses[-1]) if losses.size else self.c
        return path

    @property
    def log_e_value(self) -> float:
        """log E = (b + c) log 2 + log B(b + 1/2, c + 1/2) - log B(1/2, 1/2), by math.lgamma."""
        return (self.b + self.c) * math.log(2.0) + kt_log_mixture(self.b, self.c)

    @property
    def e_value(self) -> float:
        """E (inf if it overflows a float): evidence against p10 = p01."""
        log_e = self.log_e_value
        return math.exp(log_e) if log_e < 709.0 else math.inf

    def discordant_win_interval(self) -> tuple[float, float]:
        """Confidence sequence for theta = p10 / (p10 + p01) (level 1 - alpha, or 1 - alpha/2 with
        equivalence testing)."""
        return kt_interval(self.b, self.c, self._theta_alpha)

    def difference_interval(self) -> tuple[float, float]:
        """Confidence sequence (level 1 - alpha) for the accuracy difference p10 - p01 = q (2 theta - 1).

        The box of a KT sequence for q = p10 + p01 over all items and one for theta over the
        discordant items, each at alpha/2, mapped through q (2 theta - 1): the ends are at the
        box's corners (increasing in theta; in q with the sign of 2 theta - 1).
        """
        q_lo, q_hi = kt_interval(self.b + self.c, self.n - self.b - self.c, self.alpha / 2)
        t_lo, t_hi = kt_interval(self.b, self.c, self.alpha / 2)
        s_lo, s_hi = 2.0 * t_lo - 1.0, 2.0 * t_hi - 1.0
        low = q_hi * s_lo if s_lo < 0 else q_lo * s_lo
        high = q_hi * s_hi if s_hi > 0 else q_lo * s_hi
        return low, high

    @property
    def decision(self) -> Decision:
        """"A better", "B better", "equivalent within ±eps" or "continue" (see the class notes)."""
        if self.log_e_value >= math.log(1.0 / self._theta_alpha):
            return "A better" if self.b > self.c else "B better"
        if self.equivalence is not None:
            low, high = self.difference_interval()
            if -self.equivalence < low and high < self.equivalence:
                return f"equivalent within ±{self.equivalence:g}"
        return "continue"

    def __repr__(self) -> str:
        return (f"SequentialPairedBinary(n={self.n}, b={self.b}, c={self.c}, e_value={self.e_value:.4g}, "
                f"decision={self.decision!r})")


# ---------------------------------------------------------------------------------------------
# bounded real differences: betting with predictable plug-in bets


class SequentialPairedBounded:
    """Anytime-valid comparison of two systems' real-valued scores whose differences lie in ``bounds``.

    Each difference d = x - y is mapped to u = (d - lo) / (hi - lo) in [0, 1]; a mean difference
    of mu is a mean of m = (mu - lo) / (hi - lo) for u. For every candidate m two bettors play:
    K+(m) = prod (1 + lambda_i (u_i - m)) bets on a larger mean, K-(m) = prod (1 - lambda_i (u_i - m))
    on a smaller one, and their half/half mixture W(m) = (K+(m) + K-(m)) / 2 is a nonnegative
    martingale with mean 1 when m is the true mean. W at the null m0 (mean difference 0) is the
    e-value; {m : W(m) < 1/alpha} is the confidence sequence: the hedged-capital sequence of
    Waudby-Smith & Ramdas (2023, section 4.3), with the two sides mixed by averaging rather than
    by their maximum (the average is also a martingale and never smaller).

    Bets: the predictable plug-in (PrPl) bets of Waudby-Smith & Ramdas (2023, eq. 26-27),
    lambda_t = min(sqrt(2 log(2/alpha) / (s2_{t-1} t log(1 + t))), 1/2), with the running variance
    s2_t = (1/4 + sum_{i<=t} (u_i - mean_i)^2) / (t + 1), mean_t = (1/2 + sum_{i<=t} u_i) / (t + 1).
    They depend on past items only and not on m, and 1/2 keeps every factor >= 1/2 for all m in
    [0, 1]. Each K is then a product of positive affine functions of m, monotone the same way, so
    it is convex; W is convex and the sequence is an interval, its ends found by bracketed Newton
    on log W(m) - log(1/alpha) on each side of W's minimum (no grid).

    The direction ("A better" / "B better") is the side of 0 the interval lies on when 0 is
    outside it, and "equivalent within ±eps" is declared when it lies inside (-eps, eps): one
    sequence at level 1 - alpha backs every claim, so any wrong decision needs it to miss.
    Memory and the cost of :meth:`confidence_sequence` grow with the items seen (O(n) per
    evaluation of W); :attr:`e_value` and the direction part of :attr:`decision` are O(1).
    """

    _BET_CAP = 0.5

    def __init__(self, alpha: float = 0.05, *, bounds: tuple[float, float] = (-1.0, 1.0),
                 equivalence: Optional[float] = None) -> None:
        where = "SequentialPairedBounded"
        self.alpha = _check_alpha(alpha, where)
        try:
            lo, hi = (float(v) for v in bounds)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: bounds must be a pair of numbers (lo, hi), got {bounds!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < 0.0 < hi):
            raise ValueError(f"{where}: bounds must be finite with lo < 0 < hi (0 is the null mean difference), got {bounds!r}")
        self.bounds = (lo, hi)
        self.equivalence = _check_equivalence(equivalence, where, max(-lo, hi))
        self._null_mean = -lo / (hi - lo)
        self.n = 0
        self._sum_u = 0.0
        self._sum_sq = 0.25  # s2 numerator, started at the prior 1/4 of WSR's plug-in
        self._chunks_u: list[np.ndarray] = []
        self._chunks_bet: list[np.ndarray] = []
        self._log_up = 0.0  # log K+(m0), log K-(m0), kept running so the e-value is O(1)
        self._log_down = 0.0

    def update(self, x: Any, y: Any) -> None:
        """Add one item (scalars) or a batch (1-D arrays): x = A's scores, y = B's, x - y within bounds."""
        where = "SequentialPairedBounded.update"
        xs, ys = _paired(x, y, where)
        diff = xs - ys
        lo, hi = self.bounds
        if np.any(diff < lo) or np.any(diff > hi):
            raise ValueError(f"{where}: score differences must lie in bounds {self.bounds}, got range "
                             f"[{diff.min():g}, {diff.max():g}]")
        if diff.size == 0:
            return
        u = (diff - lo) / (hi - lo)
        index = self.n + np.arange(1, u.size + 1, dtype=np.float64)  # t = 1, 2, ... of each item
        sums = self._sum_u + np.cumsum(u)
        means = (0.5 + sums) / (index + 1.0)
        sq = self._sum_sq + np.cumsum((u - means) ** 2)
        var_before = np.concatenate(([self._sum_sq / (self.n + 1.0)], sq[:-1] / index[1:]))
        bets = np.minimum(np.sqrt(2.0 * math.log(2.0 / self.alpha) / (var_before * index * np.log1p(index))),
                          self._BET_CAP)
        step = bets * (u - self._null_mean)
        self._log_up += float(np.sum(np.log1p(step)))
        self._log_down += float(np.sum(np.log1p(-step)))
        self.n += u.size
        self._sum_u = float(sums[-1])
        self._sum_sq = float(sq[-1])
        self._chunks_u.append(u)
        self._chunks_bet.append(bets)

    def _data(self) -> tuple[np.ndarray, np.ndarray]:
        if len(self._chunks_u) > 1:
            self._chunks_u = [np.concatenate(self._chunks_u)]
            self._chunks_bet = [np.concatenate(self._chunks_bet)]
        if not self._chunks_u:
            return np.zeros(0), np.zeros(0)
        return self._chunks_u[0], self._chunks_bet[0]

    @staticmethod
    def _log_wealth(u: np.ndarray, bets: np.ndarray, m: float) -> tuple[float, float]:
        """log W(m) and its derivative in m."""
        step = bets * (u - m)
        log_up, log_down = float(np.sum(np.log1p(step))), float(np.sum(np.log1p(-step)))
        slope_up = -float(np.sum(bets / (1.0 + step)))
        slope_down = float(np.sum(bets / (1.0 - step)))
        top = max(log_up, log_down)
        w_up, w_down = math.exp(log_up - top), math.exp(log_down - top)
        log_w = top + math.log(w_up + w_down) - math.log(2.0)
        return log_w, (w_up * slope_up + w_down * slope_down) / (w_up + w_down)

    @property
    def log_e_value(self) -> float:
        """log W(m0): the two-sided betting e-value against a mean difference of 0."""
        top = max(self._log_up, self._log_down)
        return top + math.log(math.exp(self._log_up - top) + math.exp(self._log_down - top)) - math.log(2.0)

    @property
    def e_value(self) -> float:
        log_e = self.log_e_value
        return math.exp(log_e) if log_e < 709.0 else math.inf

    def e_value_at(self, mean_difference: float) -> float:
        """W at a candidate mean difference: the e-value against that mean (O(n))."""
        lo, hi = self.bounds
        if not lo <= float(mean_difference) <= hi:
            raise ValueError(f"SequentialPairedBounded.e_value_at: mean_difference must lie in {self.bounds}")
        u, bets = self._data()
        log_w = self._log_wealth(u, bets, (float(mean_difference) - lo) / (hi - lo))[0]
        return math.exp(log_w) if log_w < 709.0 else math.inf

    def confidence_sequence(self) -> tuple[float, float]:
        """(low, high) for the mean difference, level 1 - alpha uniformly over time.

        An empty set (W >= 1/alpha everywhere, probability <= alpha) is returned as (nan, nan).
        """
        lo, hi = self.bounds
        u, bets = self._data()
        if u.size == 0:
            return lo, hi
        target = math.log(1.0 / self.alpha)

        def slope_only(m: float) -> tuple[float, float]:
            return self._log_wealth(u, bets, m)[1], math.nan  # no curvature: bisection

        # W is convex: its minimum is where the slope changes sign (or at an end of [0, 1])
        if self._log_wealth(u, bets, 0.0)[1] >= 0.0:
            m_min = 0.0
        elif self._log_wealth(u, bets, 1.0)[1] <= 0.0:
            m_min = 1.0
        else:
            m_min = _bracketed_root(slope_only, 0.0, 1.0)
        if self._log_wealth(u, bets, m_min)[0] >= target:
            return math.nan, math.nan

        def excess(m: float) -> tuple[float, float]:
            log_w, slope = self._log_wealth(u, bets, m)
            return log_w - target, slope

        low = 0.0 if excess(0.0)[0] < 0.0 else _bracketed_root(excess, 0.0, m_min)
        high = 1.0 if excess(1.0)[0] < 0.0 else _bracketed_root(excess, m_min, 1.0)
        return lo + (hi - lo) * low, lo + (hi - lo) * high

    @property
    def decision(self) -> Decision:
        """"A better", "B better", "equivalent within ±eps" or "continue" (see the class notes)."""
        if self.log_e_value >= math.log(1.0 / self.alpha):
            u, bets = self._data()
            # the sequence lies on the side of m0 where W decreases
            return "A better" if self._log_wealth(u, bets, self._null_mean)[1] < 0.0 else "B better"
        if self.equivalence is not None and self.n:
            low, high = self.confidence_sequence()
            if -self.equivalence < low and high < self.equivalence:
                return f"equivalent within ±{self.equivalence:g}"
        return "continue"

    def __repr__(self) -> str:
        return f"SequentialPairedBounded(n={self.n}, e_value={self.e_value:.4g}, decision={self.decision!r})"


# ---------------------------------------------------------------------------------------------
# many comparisons


def _check_e_values(e_values: Any, alpha: Any, where: str) -> tuple[np.ndarray, float]:
    level = _check_alpha(alpha, where)
    array = np.asarray(e_values)
    if array.dtype == object or array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"{where}: e_values must be numbers, got dtype {array.dtype}")
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{where}: e_values must be a non-empty 1-D sequence, got shape {array.shape}")
    values = array.astype(np.float64)
    if np.any(np.isnan(values)) or np.any(values < 0):
        raise ValueError(f"{where}: e_values must be nonnegative (inf allowed), got NaN or a negative value")
    return values, level


def e_bh(e_values: Any, alpha: float = 0.05) -> np.ndarray:
    """Rejections of the e-BH procedure (Wang & Ramdas 2022): FDR <= alpha under any dependence.

    With m e-values sorted decreasingly, e_(1) >= ... >= e_(m), k* = max{k : e_(k) >= m / (alpha k)}
    and the k* hypotheses with the largest e-values are rejected (none if no k qualifies); they
    are exactly those with e >= m / (alpha k*). Returns a boolean mask in the input order.
    """
    values, level = _check_e_values(e_values, alpha, "e_bh")
    m = values.size
    ordered = np.sort(values)[::-1]
    ks = np.arange(1, m + 1)
    passing = np.nonzero(ordered * level * ks >= m)[0]
    if passing.size == 0:
        return np.zeros(m, dtype=bool)
    k_star = int(passing[-1]) + 1
    mask: np.ndarray = values * level * k_star >= m
    return mask


def e_bonferroni(e_values: Any, alpha: float = 0.05) -> np.ndarray:
    """Rejections with e >= m / alpha: family-wise error <= alpha under any dependence (Markov's
    inequality on the average e-value). Returns a boolean mask in the input order."""
    values, level = _check_e_values(e_values, alpha, "e_bonferroni")
    mask: np.ndarray = values * level >= values.size
    return mask
