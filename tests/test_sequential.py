"""Anytime-valid sequential tests: the KT e-value against exact rational arithmetic, its martingale
property by enumeration, type-I error under optional stopping and confidence-sequence coverage by
simulation, the betting test for bounded differences, and e-BH / e-Bonferroni."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Callable

import numpy as np
import pytest
from scipy import optimize

from pairperm._sequential import (
    SequentialPairedBinary,
    SequentialPairedBounded,
    e_bh,
    e_bonferroni,
    kt_interval,
    kt_log_mixture,
)


def exact_kt_e_value(wins: int, losses: int) -> Fraction:
    """2^n B(b+1/2, c+1/2) / B(1/2, 1/2) as a rational: Gamma(k + 1/2) = sqrt(pi) (2k)! / (4^k k!),
    so the ratio is (2b)! (2c)! / (4^n b! c! n!) and E = (2b)! (2c)! / (2^n b! c! n!)."""
    n = wins + losses
    return Fraction(math.factorial(2 * wins) * math.factorial(2 * losses),
                    2**n * math.factorial(wins) * math.factorial(losses) * math.factorial(n))


def feed_discordant(signs: tuple[int, ...]) -> SequentialPairedBinary:
    test = SequentialPairedBinary()
    for s in signs:
        test.update(s, 1 - s)
    return test


@pytest.mark.parametrize("wins,losses", [(0, 0), (1, 0), (0, 3), (2, 2), (5, 1), (7, 9), (12, 0)])
def test_kt_e_value_matches_exact_rational(wins: int, losses: int) -> None:
    test = SequentialPairedBinary()
    test.update(np.r_[np.ones(wins), np.zeros(losses)], np.r_[np.zeros(wins), np.ones(losses)])
    assert (test.b, test.c) == (wins, losses)
    assert test.e_value == pytest.approx(float(exact_kt_e_value(wins, losses)), rel=1e-12)


def test_kt_e_value_matches_scipy_beta_at_large_counts() -> None:
    from scipy import special
    test = SequentialPairedBinary()
    test.update(np.r_[np.ones(3000), np.zeros(2500)], np.r_[np.zeros(3000), np.ones(2500)])
    expected = 5500 * math.log(2) + special.betaln(3000.5, 2500.5) - special.betaln(0.5, 0.5)
    # both sides cancel lgamma terms of size ~4e4: agreement to 1e-16 of those, not of the ~18 left
    assert test.log_e_value == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_e_value_is_a_martingale_by_enumeration(n: int) -> None:
    # mean over all 2^n fair sign sequences is exactly 1, and the one-step conditional mean at
    # every prefix equals the prefix's value (exact rationals)
    total = Fraction(0)
    for signs in itertools.product((0, 1), repeat=n):
        wins = sum(signs)
        total += exact_kt_e_value(wins, n - wins)
        prefix = exact_kt_e_value(wins, n - wins)
        step = (exact_kt_e_value(wins + 1, n - wins) + exact_kt_e_value(wins, n - wins + 1)) / 2
        assert step == prefix
    assert total / 2**n == 1
    # and the implementation's mean over the sequences is 1 up to rounding
    mean = sum(feed_discordant(signs).e_value for signs in itertools.product((0, 1), repeat=n)) / 2**n
    assert mean == pytest.approx(1.0, rel=1e-12)


def test_path_matches_per_prefix_values_and_counts() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 2, 400), rng.integers(0, 2, 400)
    batch = SequentialPairedBinary()
    batch.update_path(x[:100], y[:100])
    path = batch.update_path(x[100:], y[100:])
    one = SequentialPairedBinary()
    for k in range(100, 400):
        if k == 100:
            one.update(x[:100], y[:100])
        one.update(int(x[k]), int(y[k]))
        assert path[k - 100] == pytest.approx(one.log_e_value, abs=1e-11)
    assert (batch.b, batch.c, batch.n) == (one.b, one.c, one.n) == (int(np.sum(x > y)), int(np.sum(y > x)), 400)


def null_pairs(rng: np.random.Generator, runs: int, items: int, discordance: float) -> tuple[np.ndarray, np.ndarray]:
    both = rng.random((runs, items)) < 0.6
    disc = rng.random((runs, items)) < discordance
    a_wins = rng.random((runs, items)) < 0.5
    x = np.where(disc, a_wins, both).astype(np.int8)
    y = np.where(disc, ~a_wins, both).astype(np.int8)
    return x, y


def crossing_rate(runs: int, items: int, alpha: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    x, y = null_pairs(rng, runs, items, 0.3)
    crossed = 0
    for r in range(runs):
        path = SequentialPairedBinary(alpha).update_path(x[r], y[r])
        crossed += bool(np.any(path >= math.log(1 / alpha)))
    return crossed / runs


def test_type_one_error_under_monitoring_quick() -> None:
    # Ville: P(ever E >= 1/alpha) <= alpha; 1000 runs, 4 standard errors of slack
    rate = crossing_rate(1000, 300, 0.1, seed=11)
    assert rate <= 0.1 + 4 * math.sqrt(0.1 * 0.9 / 1000)


@pytest.mark.slow
def test_type_one_error_under_monitoring_10k_runs() -> None:
    rate = crossing_rate(10_000, 2000, 0.05, seed=12)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 10_000)


@pytest.mark.parametrize("wins,losses,alpha", [(5, 1, 0.05), (0, 4, 0.1), (300, 200, 0.05), (40_000, 39_000, 0.01), (3, 0, 0.2)])
def test_interval_ends_are_roots_and_hold_the_mle(wins: int, losses: int, alpha: float) -> None:
    lo, hi = kt_interval(wins, losses, alpha)
    n = wins + losses
    assert lo <= wins / n <= hi
    log_m = math.lgamma(wins + .5) + math.lgamma(losses + .5) - math.lgamma(n + 1) - math.log(math.pi)

    def excess(t: float) -> float:
        return log_m - wins * math.log(t) - losses * math.log1p(-t) - math.log(1 / alpha)

    mle = min(max(wins / n, 1e-300), 1 - 1e-16)
    if wins:
        assert lo == pytest.approx(optimize.brentq(excess, 1e-300, mle, xtol=1e-300, rtol=1e-14), rel=1e-9)
    else:
        assert lo == 0.0
    if losses:
        assert hi == pytest.approx(optimize.brentq(excess, mle, 1 - 1e-16, xtol=1e-16, rtol=1e-14), rel=1e-12)
    else:
        assert hi == 1.0


def test_interval_before_any_item_is_everything() -> None:
    assert kt_interval(0, 0, 0.05) == (0.0, 1.0)


def test_decision_direction_agrees_with_interval() -> None:
    test = SequentialPairedBinary(0.05)
    test.update(np.r_[np.ones(40), np.zeros(10)], np.r_[np.zeros(40), np.ones(10)])
    lo, _ = test.discordant_win_interval()
    assert test.e_value >= 20 and lo > 0.5 and test.decision == "A better"
    flipped = SequentialPairedBinary(0.05)
    flipped.update(np.r_[np.zeros(40), np.ones(10)], np.r_[np.ones(40), np.zeros(10)])
    assert flipped.decision == "B better" and flipped.discordant_win_interval()[1] < 0.5
    assert SequentialPairedBinary().decision == "continue"


def test_equivalence_is_declared_only_when_difference_interval_is_inside() -> None:
    rng = np.random.default_rng(5)
    test = SequentialPairedBinary(0.05, equivalence=0.02)
    x, y = null_pairs(rng, 1, 60_000, 0.1)
    seen = []
    for start in range(0, 60_000, 5000):
        test.update(x[0, start:start + 5000], y[0, start:start + 5000])
        low, high = test.difference_interval()
        q_lo, q_hi = kt_interval(test.b + test.c, test.n - test.b - test.c, 0.025)
        t_lo, t_hi = kt_interval(test.b, test.c, 0.025)
        corners = [q * (2 * t - 1) for q in (q_lo, q_hi) for t in (t_lo, t_hi)]
        assert (low, high) == pytest.approx((min(corners), max(corners)))
        seen.append(test.decision)
        assert (seen[-1] == "equivalent within ±0.02") == (-0.02 < low and high < 0.02)
    assert seen[0] == "continue" and seen[-1] == "equivalent within ±0.02"


def coverage_failures(runs: int, items: int, theta: float, alpha: float, seed: int) -> float:
    # coverage at every t at once: the true theta leaves CS_t exactly when the ratio at theta
    # crosses 1/alpha; spot checks confirm that kt_interval agrees with that criterion
    rng = np.random.default_rng(seed)
    failures = 0
    for _ in range(runs):
        signs = (rng.random(items) < theta).astype(np.int64)
        wins = np.cumsum(signs)
        losses = np.arange(1, items + 1) - wins
        log_m = np.array([math.lgamma(w + .5) + math.lgamma(v + .5) - math.lgamma(w + v + 1) for w, v in zip(wins, losses)])
        ratio = log_m - math.log(math.pi) - wins * math.log(theta) - losses * math.log1p(-theta)
        missed = ratio >= math.log(1 / alpha)
        failures += bool(missed.any())
        for t in rng.integers(0, items, 3):
            lo, hi = kt_interval(int(wins[t]), int(losses[t]), alpha)
            assert bool(missed[t]) == (not lo < theta < hi)
    return failures / runs


@pytest.mark.slow
def test_confidence_sequence_covers_uniformly_over_time() -> None:
    rate = coverage_failures(2000, 1000, 0.65, 0.05, seed=21)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)


def test_confidence_sequence_covers_quick() -> None:
    assert coverage_failures(200, 300, 0.3, 0.1, seed=22) <= 0.1 + 4 * math.sqrt(0.09 / 200)


# ------------------------------------------------------------------------------------------------
# bounded differences


def null_bounded(rng: np.random.Generator, size: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    # skewed differences with mean 0 in [-1, 1]: -1/4 w.p. 0.8, +1 w.p. 0.2
    d = np.where(rng.random(size) < 0.2, 1.0, -0.25)
    return np.clip(d, 0, 1), np.clip(-d, 0, 1)


def test_bounded_wealth_expectation_at_most_one_under_null() -> None:
    rng = np.random.default_rng(31)
    x, y = null_bounded(rng, (3000, 60))
    wealth = np.empty(3000)
    for r in range(3000):
        test = SequentialPairedBounded(0.05)
        test.update(x[r], y[r])
        wealth[r] = test.e_value
    assert wealth.mean() <= 1 + 4 * wealth.std() / math.sqrt(3000)


def test_bounded_wealth_is_mixture_of_products() -> None:
    # the e-value, rebuilt from its definition item by item with Python floats
    rng = np.random.default_rng(32)
    d = rng.uniform(-0.4, 0.9, 25)
    test = SequentialPairedBounded(0.1, bounds=(-0.5, 1.0))
    test.update(np.maximum(d, 0), np.maximum(-d, 0))
    u = (d + 0.5) / 1.5
    m0 = 0.5 / 1.5
    up = down = 1.0
    total, dev = 0.0, 0.25
    for t, value in enumerate(u, start=1):
        var_before = dev / t
        bet = min(math.sqrt(2 * math.log(2 / 0.1) / (var_before * t * math.log(1 + t))), 0.5)
        up *= 1 + bet * (value - m0)
        down *= 1 - bet * (value - m0)
        total += value
        dev += (value - (0.5 + total) / (t + 1)) ** 2
    assert test.e_value == pytest.approx((up + down) / 2, rel=1e-12)
    assert test.e_value_at(0.0) == pytest.approx(test.e_value, rel=1e-12)


def test_bounded_interval_ends_are_roots() -> None:
    rng = np.random.default_rng(33)
    test = SequentialPairedBounded(0.05)
    d = rng.uniform(-1, 1, 400) * 0.8 + 0.1
    test.update(np.maximum(d, 0), np.maximum(-d, 0))
    low, high = test.confidence_sequence()
    assert low < d.mean() < high
    assert test.e_value_at(low) == pytest.approx(20, rel=1e-8)
    assert test.e_value_at(high) == pytest.approx(20, rel=1e-8)
    grid = np.linspace(-1, 1, 401)
    inside = [m for m in grid if test.e_value_at(m) < 20]
    assert low <= min(inside) and max(inside) <= high


def bounded_coverage_failures(runs: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    failures = 0
    for _ in range(runs):
        d = np.where(rng.random(300) < 0.4, 0.9, -0.3)  # mean 0.18
        test = SequentialPairedBounded(0.1)
        missed = False
        for start in range(0, 300, 30):
            test.update(np.maximum(d[start:start + 30], 0), np.maximum(-d[start:start + 30], 0))
            low, high = test.confidence_sequence()
            missed |= not low < 0.18 < high
        failures += missed
    return failures / runs


def test_bounded_confidence_sequence_covers_quick() -> None:
    assert bounded_coverage_failures(40, seed=34) <= 0.1 + 4 * math.sqrt(0.09 / 40)


@pytest.mark.slow
def test_bounded_confidence_sequence_covers() -> None:
    assert bounded_coverage_failures(1000, seed=35) <= 0.1 + 3 * math.sqrt(0.09 / 1000)


@pytest.mark.slow
def test_bounded_type_one_error_under_monitoring() -> None:
    rng = np.random.default_rng(36)
    x, y = null_bounded(rng, (4000, 500))
    crossed = 0
    for r in range(4000):
        test = SequentialPairedBounded(0.05)
        for start in range(0, 500, 10):
            test.update(x[r, start:start + 10], y[r, start:start + 10])
            if test.decision != "continue":
                crossed += 1
                break
    assert crossed / 4000 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 4000)


def test_bounded_decides_direction() -> None:
    test = SequentialPairedBounded(0.05)
    test.update(np.full(200, 0.8), np.full(200, 0.5))
    assert test.decision == "A better" and test.confidence_sequence()[0] > 0
    test = SequentialPairedBounded(0.05, equivalence=0.2)
    test.update(np.full(200, 0.3), np.full(200, 0.6))
    assert test.decision == "B better"
    near = SequentialPairedBounded(0.05, equivalence=0.2)
    d = np.tile([0.1, -0.1], 500)
    near.update(np.maximum(d, 0), np.maximum(-d, 0))
    low, high = near.confidence_sequence()
    assert near.decision == "equivalent within ±0.2" and -0.2 < low < high < 0.2


# ------------------------------------------------------------------------------------------------
# many comparisons


def test_e_bh_hand_worked() -> None:
    # m = 5, alpha = 0.1: thresholds m / (alpha k) = 50, 25, 16.7, 12.5, 10; sorted e = 100, 50,
    # 30, 1, 0.5 pass at k = 1, 2, 3 and fail at 4, 5, so k* = 3: reject 100, 50, 30
    assert e_bh([100, 30, 1, 0.5, 50], 0.1).tolist() == [True, True, False, False, True]
    # e-Bonferroni needs e >= 50
    assert e_bonferroni([100, 30, 1, 0.5, 50], 0.1).tolist() == [True, False, False, False, True]
    # a step-up: m / alpha = 30, so neither 20 passes k = 1, but both pass k = 2 (20 >= 15)
    assert e_bh([20, 20, 0], 0.1).tolist() == [True, True, False]
    assert e_bonferroni([20, 20, 0], 0.1).tolist() == [False, False, False]
    assert e_bh([15, 15, 15], 0.1).tolist() == [True, True, True]  # 15 >= 3 / (0.1 * 3) = 10
    assert e_bh([math.inf, 0.0], 0.05).tolist() == [True, False]


@pytest.mark.slow
def test_e_bh_fdr_by_simulation() -> None:
    # 20 hypotheses, 5 false nulls; e-values are KT e-values of 300 discordant items each
    rng = np.random.default_rng(41)
    fdp = []
    for _ in range(2000):
        thetas = np.r_[np.full(15, 0.5), np.full(5, 0.62)]
        wins = [int(v) for v in np.atleast_1d(rng.binomial(300, thetas))]
        e = np.array([math.exp(300 * math.log(2) + kt_log_mixture(w, 300 - w)) for w in wins])
        rejected = e_bh(e, 0.1)
        fdp.append(rejected[:15].sum() / max(1, rejected.sum()))
    assert np.mean(fdp) <= 0.1 + 3 * np.std(fdp) / math.sqrt(2000)


@pytest.mark.parametrize("bad", [
    lambda: SequentialPairedBinary(0.0),
    lambda: SequentialPairedBinary(1.5),
    lambda: SequentialPairedBinary(True),
    lambda: SequentialPairedBinary(0.05, equivalence=-0.1),
    lambda: SequentialPairedBinary().update([0, 1, 2], [0, 1, 1]),
    lambda: SequentialPairedBinary().update([0, 1], [0, 1, 1]),
    lambda: SequentialPairedBinary().update([0.5], [1]),
    lambda: SequentialPairedBinary().update([np.nan], [1]),
    lambda: SequentialPairedBinary().update(["1"], [1]),
    lambda: SequentialPairedBinary().update([[1]], [[0]]),
    lambda: SequentialPairedBounded(0.05, bounds=(0, 1)),
    lambda: SequentialPairedBounded(0.05, bounds=(1, -1)),
    lambda: SequentialPairedBounded(0.05, bounds=(-1, math.inf)),
    lambda: SequentialPairedBounded(0.05, bounds="ab"),  # type: ignore[arg-type]
    lambda: SequentialPairedBounded(0.05).update([1.0], [-0.5]),
    lambda: SequentialPairedBounded(0.05).update([np.inf], [0.0]),
    lambda: SequentialPairedBounded(0.05).e_value_at(3.0),
    lambda: e_bh([1.0, -1.0]),
    lambda: e_bh([1.0, np.nan]),
    lambda: e_bh([]),
    lambda: e_bh([[1.0]]),
    lambda: e_bonferroni([1.0], alpha=2),
    lambda: e_bonferroni([True, False]),
])
def test_bad_inputs_refused(bad: Callable[[], object]) -> None:
    with pytest.raises(ValueError):
        bad()
