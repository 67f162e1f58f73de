"""Exact power, sample size and minimum detectable effect of McNemar's exact test.

References: the rejection decisions of pairperm.mcnemar_test / permutation_test themselves,
exact rational sums over every (b, c, ties) outcome, an independent scipy.stats evaluation of
the same sum, and simulation.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
import pytest
from scipy import stats

import pairperm
from pairperm._power import (
    _thresholds,
    discordance_bounds,
    discordance_from_accuracies,
    minimum_detectable_effect_paired_binary,
    power_bounds_from_accuracies,
    power_paired_binary,
    sample_size_paired_binary,
)


def _outcome_arrays(b: int, c: int, ties: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """0/1 correctness with b items only A got right, c only B, and `ties` concordant items."""
    x = np.array([1] * b + [0] * c + [1, 0] * (ties // 2) + [1] * (ties % 2))
    y = np.array([0] * b + [1] * c + [1, 0] * (ties // 2) + [1] * (ties % 2))
    return x, y


@cache
def _library_rejects(b: int, c: int, alpha: float, alternative: str) -> bool:
    x, y = _outcome_arrays(b, c)
    return pairperm.mcnemar_test(x, y, alternative=alternative).pvalue <= alpha


def _region(d: int, alpha: float, alternative: str) -> set[int]:
    """The b (out of d discordant) that _power's thresholds reject."""
    k = int(_thresholds(d, d, alpha / 2 if alternative == "two-sided" else alpha)[0])
    up = set(range(k, d + 1)) if alternative != "less" else set()
    down = set(range(0, d - k + 1)) if alternative != "greater" else set()
    return up | down


@pytest.mark.parametrize("alpha", [0.05, 0.0625])  # 0.0625 = 2^-4: p-values land exactly on it
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_rejection_region_is_the_library_decision(alpha: float, alternative: str) -> None:
    # d up to 75 crosses the switch from exact-rational to floating-point thresholds at 62.
    for d in list(range(0, 20)) + list(range(55, 76)):
        library = {b for b in range(d + 1) if _library_rejects(b, d - b, alpha, alternative)}
        assert _region(d, alpha, alternative) == library, d


def test_rejection_region_matches_permutation_test() -> None:
    for d in (7, 30, 63, 64, 101):
        x_all = [_outcome_arrays(b, d - b) for b in range(d + 1)]
        library = {b for b, (x, y) in enumerate(x_all) if pairperm.permutation_test(x, y).pvalue <= 0.05}
        assert _region(d, 0.05, "two-sided") == library


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.001, 0.01, 0.1, 0.25, 1e-6])
def test_rejection_region_wide_range(alpha: float) -> None:
    for d in range(0, 260, 3):
        for alternative in ("two-sided", "greater"):
            library = {b for b in range(d + 1) if _library_rejects(b, d - b, alpha, alternative)}
            assert _region(d, alpha, alternative) == library, (d, alternative)


def _brute_force(n: int, p10: Fraction, p01: Fraction, alpha: float, alternative: str) -> tuple[Fraction, ...]:
    """(power, P(wrong-way rejection), E[|b - c| 1{reject}] / n) summed over every (b, c, ties)
    with multinomial probabilities, the decision taken from pairperm.mcnemar_test."""
    tie = 1 - p10 - p01
    power = wrong = gap = Fraction(0)
    sign = (p10 > p01) - (p10 < p01)
    for b in range(n + 1):
        for c in range(n - b + 1):
            if not _library_rejects(b, c, alpha, alternative):
                continue
            prob = Fraction(math.factorial(n), math.factorial(b) * math.factorial(c) * math.factorial(n - b - c))
            prob *= p10**b * p01**c * tie ** (n - b - c)
            power += prob
            wrong += prob if (b > c) - (b < c) == -sign else 0
            gap += prob * Fraction(abs(b - c), n)
    return power, wrong, gap


@pytest.mark.parametrize("n, p10, p01, alpha, alternative", [
    (1, Fraction(1, 2), Fraction(1, 4), 0.05, "two-sided"),
    (6, Fraction(3, 5), Fraction(1, 10), 0.05, "two-sided"),
    (12, Fraction(1, 2), Fraction(1, 5), 0.1, "two-sided"),
    (12, Fraction(2, 5), Fraction(3, 10), 0.125, "greater"),
    (11, Fraction(1, 10), Fraction(1, 2), 0.05, "less"),
    pytest.param(30, Fraction(3, 10), Fraction(1, 10), 0.05, "two-sided", marks=pytest.mark.slow),
    pytest.param(25, Fraction(1, 4), Fraction(1, 4), 0.0625, "greater", marks=pytest.mark.slow),
    pytest.param(28, Fraction(1, 20), Fraction(3, 5), 0.01, "two-sided", marks=pytest.mark.slow),
])
def test_power_equals_enumeration_of_every_outcome(n: int, p10: Fraction, p01: Fraction, alpha: float,
                                                    alternative: str) -> None:
    power, wrong, gap = _brute_force(n, p10, p01, alpha, alternative)
    r = power_paired_binary(n, float(p10), float(p01), alpha=alpha, alternative=alternative)
    assert r.power == pytest.approx(float(power), rel=1e-12, abs=1e-15)
    if p10 == p01 or power == 0:
        assert math.isnan(r.type_s) and math.isnan(r.type_m)
    else:
        assert r.type_s == pytest.approx(float(wrong / power), rel=1e-10, abs=1e-15)
        assert r.type_m == pytest.approx(float(gap / power / abs(p10 - p01)), rel=1e-10)


def _scipy_power(n: int, p10: float, p01: float, alpha: float) -> float:
    """Two-sided power summed over every d with scipy's binomial (independent of _power's numerics)."""
    d = np.arange(n + 1)
    # k_d: the smallest k with 2 P(Binomial(d, 1/2) >= k) <= alpha, looked for around scipy's quantile.
    candidates = stats.binom.isf(alpha / 2, d, 0.5)[:, None] + np.arange(-3, 5)[None, :]
    inside = (2 * stats.binom.sf(candidates - 1, d[:, None], 0.5) <= alpha) | (candidates > d[:, None])
    assert not inside[:, 0].any() and inside[:, -1].all()
    k = candidates[np.arange(len(d)), np.argmax(inside, axis=1)]
    pi = p10 / (p10 + p01)
    # Older scipy warns where a pmf underflows to 0 far in the tails (a 0 there is right).
    with np.errstate(divide="ignore", under="ignore"):
        conditional = stats.binom.sf(k - 1, d, pi) + stats.binom.sf(k - 1, d, 1 - pi)
        return float(np.sum(stats.binom.pmf(d, n, p10 + p01) * conditional))


@pytest.mark.parametrize("n, p10, p01", [(400, 0.06, 0.03), (1500, 0.3, 0.25), (100_000, 0.0105, 0.0095)])
def test_power_matches_scipy_sum(n: int, p10: float, p01: float) -> None:
    assert power_paired_binary(n, p10, p01).power == pytest.approx(_scipy_power(n, p10, p01, 0.05), rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("n, p10, p01, alternative", [(20_000, 0.055, 0.045, "two-sided"),
                                                      (200_000, 0.0105, 0.0095, "greater")])
def test_power_against_simulation(n: int, p10: float, p01: float, alternative: str) -> None:
    rng = np.random.default_rng(20201116)
    reps = 400_000
    d = rng.binomial(n, p10 + p01, size=reps)
    b = rng.binomial(d, p10 / (p10 + p01))
    c = d - b
    if alternative == "greater":
        p = stats.binom.sf(b - 1, d, 0.5)
    else:
        p = np.where(b == c, 1.0, np.minimum(1.0, 2 * stats.binom.sf(np.maximum(b, c) - 1, d, 0.5)))
    reject = p <= 0.05
    r = power_paired_binary(n, p10, p01, alternative=alternative)
    se = math.sqrt(r.power * (1 - r.power) / reps)
    assert abs(reject.mean() - r.power) < 5 * se
    gap = np.abs(b - c)[reject] / n
    assert gap.mean() / (p10 - p01) == pytest.approx(r.type_m, abs=5 * gap.std() / math.sqrt(reject.sum()) / (p10 - p01))
    wrong = (c > b)[reject].mean()
    assert abs(wrong - r.type_s) < 5 * math.sqrt(max(r.type_s, 1e-6) / reject.sum())


def test_card_et_al_figures() -> None:
    # Card et al. (EMNLP 2020): 0.82 vs 0.80 agreeing on 97.5% of 500 items have power ~0.80;
    # 0.72 vs 0.70 on 1,000 items have at least ~0.12 (the agreement consistent with the
    # accuracies that gives the least power). Their figures are rounded to two decimals.
    p10, p01 = discordance_from_accuracies(0.82, 0.80, 0.975)
    assert round(power_paired_binary(500, p10, p01).power, 2) == 0.80
    low, high = power_bounds_from_accuracies(1000, 0.72, 0.70)
    assert round(low.power, 2) == 0.12
    assert (low.p10 + low.p01, high.p10 + high.p01) == pytest.approx((0.58, 0.02))
    assert high.power > 0.99


def test_accuracies_to_joint_table() -> None:
    p10, p01 = discordance_from_accuracies(0.7, 0.6, 0.8)
    both_right, both_wrong = 0.7 - p10, 1 - 0.7 - p01
    assert (p10, p01) == pytest.approx((0.15, 0.05))
    assert both_right + p01 == pytest.approx(0.6) and both_right + both_wrong == pytest.approx(0.8)
    # The bounds are where a cell of the joint table reaches 0.
    low, high = discordance_bounds(0.9, 0.85)
    assert (low, high) == pytest.approx((0.05, 0.25))
    assert discordance_from_accuracies(0.9, 0.85, 1 - high)[0] == pytest.approx(1 - 0.85)  # no item both wrong
    assert discordance_from_accuracies(0.9, 0.85, 1 - low)[1] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="allow an agreement between 0.75 and 0.95"):
        discordance_from_accuracies(0.9, 0.85, 0.7)
    with pytest.raises(ValueError, match="allow an agreement"):
        discordance_from_accuracies(0.9, 0.85, 0.99)


def test_one_sided_is_mirror_image_and_corrections() -> None:
    greater = power_paired_binary(300, 0.2, 0.1, alternative="greater")
    less = power_paired_binary(300, 0.1, 0.2, alternative="less")
    assert greater.power == pytest.approx(less.power, rel=1e-13)
    bonferroni = power_paired_binary(300, 0.2, 0.1, comparisons=5, correction="bonferroni")
    assert bonferroni.power == pytest.approx(power_paired_binary(300, 0.2, 0.1, alpha=0.01).power, rel=1e-13)
    holm = power_paired_binary(300, 0.2, 0.1, comparisons=5, correction="holm")
    assert holm.lower_bound and not bonferroni.lower_bound and holm.power == bonferroni.power
    assert bonferroni.power < power_paired_binary(300, 0.2, 0.1).power
    maxt = power_paired_binary(300, 0.2, 0.1, comparisons=5, correction="maxT")
    sidak = 1 - (1 - 0.05) ** (1 / 5)
    assert maxt.lower_bound and maxt.level == pytest.approx(sidak, rel=1e-14)
    assert maxt.power == pytest.approx(power_paired_binary(300, 0.2, 0.1, alpha=sidak).power, rel=1e-13)
    assert bonferroni.power <= maxt.power


def test_the_maxt_level_is_no_lower_than_that_of_independent_comparisons() -> None:
    # Sidak's inequality: the per-comparison level of max |Z| over correlated normal statistics
    # (here the 10 pairs of 5 systems, which share systems) is at least that of independent ones.
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    systems = rng.standard_normal((400_000, 5))
    pairs = np.stack([(systems[:, i] - systems[:, j]) / np.sqrt(2) for i in range(5) for j in range(i + 1, 5)], axis=1)
    critical = np.quantile(np.abs(pairs).max(axis=1), 0.95)
    level = 2 * stats.norm.sf(critical)
    sidak = power_paired_binary(100, 0.2, 0.1, comparisons=10, correction="maxT").level
    assert level > sidak * 1.05 and sidak > 0.05 / 10


def _last_below(p10: float, p01: float, target: float, n_max: int, alternative: str = "two-sided") -> int:
    powers = [power_paired_binary(n, p10, p01, alternative=alternative).power for n in range(1, n_max + 1)]
    return max(n for n, p in enumerate(powers, start=1) if p < target)


def test_sample_size_sawtooth() -> None:
    # Systems that always disagree: d = n and the power saws with the parity of the threshold.
    first = next(n for n in range(1, 200) if power_paired_binary(n, 0.7, 0.3).power >= 0.8)
    assert power_paired_binary(first + 1, 0.7, 0.3).power < 0.8  # the first crossing does not hold
    n_star = sample_size_paired_binary(0.7, 0.3)
    assert n_star > first
    assert n_star == _last_below(0.7, 0.3, 0.8, 4 * n_star) + 1


@pytest.mark.parametrize("p10, p01, target, alternative", [(0.3, 0.1, 0.8, "two-sided"), (0.65, 0.35, 0.9, "greater"),
                                                           (0.1, 0.25, 0.8, "less")])
def test_sample_size_is_where_power_stays_above(p10: float, p01: float, target: float, alternative: str) -> None:
    n_star = sample_size_paired_binary(p10, p01, power=target, alternative=alternative)
    assert n_star == _last_below(p10, p01, target, 3 * n_star, alternative) + 1


def test_minimum_detectable_effect() -> None:
    delta = minimum_detectable_effect_paired_binary(2000, agreement=0.9)
    q = 0.1
    assert power_paired_binary(2000, (q + delta) / 2, (q - delta) / 2).power >= 0.8
    slightly_less = delta - 2e-6 * q
    assert power_paired_binary(2000, (q + slightly_less) / 2, (q - slightly_less) / 2).power < 0.8
    # The same by discordance; "less" detects the same difference in B's favour.
    assert minimum_detectable_effect_paired_binary(2000, discordance=0.1) == pytest.approx(delta, abs=2e-7 * q)
    one_sided = minimum_detectable_effect_paired_binary(2000, discordance=0.1, alternative="less")
    assert one_sided < delta
    assert power_paired_binary(2000, (q - one_sided) / 2, (q + one_sided) / 2, alternative="less").power >= 0.8


@pytest.mark.parametrize("call, message", [
    (lambda: power_paired_binary(100, 0.6, 0.5), "p10 \\+ p01 .* must be <= 1"),
    (lambda: power_paired_binary(100, -0.1, 0.5), "p10 must be a probability"),
    (lambda: power_paired_binary(100, 0.1, 0.5, alpha=0.0), "alpha must be in \\(0, 1\\)"),
    (lambda: power_paired_binary(100, 0.1, 0.5, alpha=1.5), "alpha must be in \\(0, 1\\)"),
    (lambda: power_paired_binary(0, 0.1, 0.5), "n must be an integer"),
    (lambda: power_paired_binary(10.5, 0.1, 0.5), "n must be an integer"),
    (lambda: power_paired_binary(10, 0.1, 0.5, alternative="both"), "alternative must be one of"),
    (lambda: power_paired_binary(10, 0.1, 0.5, comparisons=3), "needs correction="),
    (lambda: power_paired_binary(10, 0.1, 0.5, correction="sidak"), "correction must be"),
    (lambda: power_paired_binary(10, 0.1, 0.5, alpha=0.6, alternative="greater"), "one-sided test at alpha >= 0.5"),
    (lambda: sample_size_paired_binary(0.1, 0.1), "never exceeds alpha"),
    (lambda: sample_size_paired_binary(0.1, 0.2, alternative="greater"), "never exceeds alpha"),
    (lambda: sample_size_paired_binary(0.2, 0.1, power=1.0), "power must be in"),
    (lambda: minimum_detectable_effect_paired_binary(100, agreement=0.9, discordance=0.1), "exactly one of"),
    (lambda: minimum_detectable_effect_paired_binary(20, agreement=0.99), "has power below"),
    (lambda: discordance_bounds(1.2, 0.5), "acc_a must be a probability"),
])
def test_bad_input_is_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
