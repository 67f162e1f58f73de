"""Simulated power of the paired test: against exact power, brute-force enumeration and its own
common-random-number guarantees."""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np
import pytest

import pairperm
from pairperm._errors import PrecisionWarning
from pairperm._power import power_paired_binary
from pairperm._simulated_power import clopper_pearson, normal_power, simulated_minimum_detectable_effect, simulated_power


def _replicate_draw(rng: int, k: int, n: int, size: int) -> np.ndarray:
    """The documented common random numbers: replicate k's indices, rebuilt independently."""
    seed = int(np.random.default_rng(rng).integers(2**63))
    return np.minimum((np.random.default_rng([seed, k]).random(n) * size).astype(np.int64), size - 1)


def _enumerated_pvalue(x: list[int], y: list[int]) -> float:
    """Two-sided paired-permutation p-value P(|S| >= |T|) over all 2^n swaps, in Python ints."""
    d = [a - b for a, b in zip(x, y)]
    observed = abs(sum(d))
    hits: int = sum(abs(sum(s * v for s, v in zip(signs, d))) >= observed for signs in itertools.product((1, -1), repeat=len(d)))
    return hits / (1 << len(d))


def test_clopper_pearson_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for successes, trials in [(0, 40), (7, 40), (40, 40), (388, 1000)]:
        ci = stats.binomtest(successes, trials).proportion_ci(0.95, method="exact")
        assert clopper_pearson(successes, trials, 0.95) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_binary_generator_agrees_with_exact_power() -> None:
    p10, p01, n = 0.25, 0.08, 60

    def discordant(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        kind = rng.choice(3, size=size, p=[p10, p01, 1 - p10 - p01])  # A only, B only, agree (both right)
        return (kind != 1).astype(np.int64), (kind != 0).astype(np.int64)

    result = simulated_power(generator=discordant, n=n, metric="accuracy", n_simulations=2000, rng=11)
    exact = power_paired_binary(n, p10, p01).power
    assert abs(result.power - exact) <= 4 * math.sqrt(exact * (1 - exact) / 2000)
    assert result.interval[0] <= result.power <= result.interval[1]
    assert result.normal is None


def test_sum_metric_matches_brute_force_on_same_draws() -> None:
    x = [3, 1, 4, 1, 5, 2, 6, 0, 2, 3]
    y = [1, 2, 2, 1, 3, 2, 2, 1, 0, 2]
    n, sims, alpha = 8, 40, 0.1
    with warnings.catch_warnings():
        # At n = 8 the exact test's discreteness may put the normal approximation off: not tested here.
        warnings.simplefilter("ignore", PrecisionWarning)
        result = simulated_power(x, y, metric="sum", n=n, n_simulations=sims, alpha=alpha, rng=5)
    expected = []
    for k in range(sims):
        draw = _replicate_draw(5, k, n, len(x))
        expected.append(_enumerated_pvalue([x[i] for i in draw], [y[i] for i in draw]))
    np.testing.assert_allclose(result.pvalues, expected, rtol=1e-12)
    assert result.power == sum(p <= alpha for p in expected) / sims
    assert 0 < result.power < 1


def test_same_seed_same_replicates_and_prefix_stability() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.normal(0.5, 0.2, 40), rng.normal(0.45, 0.2, 40)
    first = simulated_power(x, y, n=25, n_simulations=30, rng=9)
    again = simulated_power(x, y, n=25, n_simulations=30, rng=9)
    longer = simulated_power(x, y, n=25, n_simulations=45, rng=9)
    np.testing.assert_array_equal(first.pvalues, again.pvalues)
    # Replicate k depends on (seed, k) only, not on how many replicates run.
    np.testing.assert_array_equal(first.pvalues, longer.pvalues[:30])
    other = simulated_power(x, y, n=25, n_simulations=30, rng=10)
    assert not np.array_equal(first.pvalues, other.pvalues)


def test_power_non_decreasing_in_delta() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.normal(0.5, 0.3, 30), rng.normal(0.5, 0.3, 30)
    results = [simulated_power(x, y, n=20, delta=delta, n_simulations=60, alternative="greater", rng=1)
               for delta in (0.0, 0.05, 0.1, 0.2, 0.3)]
    powers = [r.power for r in results]
    assert powers == sorted(powers) and powers[0] < powers[-1]
    # With common random numbers each replicate's one-sided p-value falls as delta grows.
    for smaller, larger in zip(results, results[1:]):
        assert np.all(larger.pvalues <= smaller.pvalues * (1 + 1e-9))


def test_delta_sets_the_mean_difference_by_shifting_y() -> None:
    x, y = [0.2, 0.4, 0.9, 0.7], [0.1, 0.5, 0.6, 0.3]

    def pvalue_at(delta: float) -> float:
        r = simulated_power(x, y, n=4, delta=delta, n_simulations=1, alternative="greater", rng=0)
        return float(r.pvalues[0])

    # Replicate 0's items, shifted by hand: y + (mean(x - y) - delta).
    draw = _replicate_draw(0, 0, 4, 4)
    shift = float(np.mean(np.subtract(x, y))) - 0.05
    expected = pairperm.compare(np.take(x, draw), np.take(y, draw) + shift, metric="mean", alternative="greater").pvalue
    assert pvalue_at(0.05) == pytest.approx(expected, rel=1e-12)


def test_groups_resample_whole_clusters() -> None:
    # Constant scores within each cluster of unequal sizes: the replicate test on whole clusters
    # is the test of the clusters' sums, which a pilot of one row per cluster runs directly.
    sizes = [1, 3, 2, 4, 1, 2]
    cluster_x, cluster_y = [2, 0, 3, 1, 3, 2], [0, 1, 1, 0, 2, 0]
    labels = np.repeat(np.arange(len(sizes)), sizes)
    x, y = np.repeat(cluster_x, sizes), np.repeat(cluster_y, sizes)
    grouped = simulated_power(x, y, metric="sum", groups=labels, n=7, n_simulations=40, rng=8)
    sums = simulated_power(np.multiply(cluster_x, sizes), np.multiply(cluster_y, sizes), metric="sum", n=7,
                           n_simulations=40, rng=8)
    np.testing.assert_allclose(grouped.pvalues, sums.pvalues, rtol=1e-12)
    items = simulated_power(x, y, metric="sum", n=7, n_simulations=40, rng=8)
    assert not np.allclose(items.pvalues, grouped.pvalues)


def test_generator_may_return_groups() -> None:
    x, y, labels = [3, 0, 2, 2, 1, 4], [1, 1, 0, 0, 1, 0], [0, 0, 1, 1, 2, 3]
    result = simulated_power(generator=lambda rng, n: (x, y, labels), n=6, metric="sum", n_simulations=2, rng=0)
    expected = pairperm.compare(x, y, "sum", groups=labels).pvalue
    unclustered = pairperm.compare(x, y, "sum").pvalue
    assert expected != unclustered
    np.testing.assert_allclose(result.pvalues, [expected, expected], rtol=1e-12)


def test_normal_power_closed_form() -> None:
    stats = pytest.importorskip("scipy.stats")
    x, y = [0.3, 0.5, 0.4, 0.9, 0.2], [0.1, 0.6, 0.2, 0.5, 0.3]
    d = np.subtract(x, y)
    z = 0.05 * math.sqrt(40) / np.std(d, ddof=1)
    assert normal_power(x, y, 40, 0.05, alternative="greater") == pytest.approx(stats.norm.cdf(z - stats.norm.ppf(0.95)))
    critical = stats.norm.ppf(0.975)
    two = stats.norm.cdf(z - critical) + stats.norm.cdf(-z - critical)
    assert normal_power(x, y, 40, 0.05) == pytest.approx(two)
    assert normal_power(x, y, 40, -0.05, alternative="less") == pytest.approx(stats.norm.cdf(z - stats.norm.ppf(0.95)))


def test_normal_warning_fires_when_it_disagrees() -> None:
    # One large difference among zeros: the normal approximation promises some power, while a
    # resample holding zero or one nonzero difference can never reach p <= 0.05.
    x, y = [10] + [1] * 99, [0] + [1] * 99
    with pytest.warns(PrecisionWarning, match="normal approximation"):
        r = simulated_power(x, y, n=20, n_simulations=200, rng=0)
    assert r.normal is not None and not r.interval[0] <= r.normal <= r.interval[1]


def test_normal_warning_silent_when_it_agrees() -> None:
    rng = np.random.default_rng(6)
    x, y = rng.normal(0.6, 0.1, 200), rng.normal(0.58, 0.1, 200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = simulated_power(x, y, n=100, delta=0.03, n_simulations=200, rng=1)
    assert r.normal is not None and r.interval[0] <= r.normal <= r.interval[1]


def test_minimum_detectable_effect_brackets_the_target() -> None:
    rng = np.random.default_rng(7)
    x, y = rng.normal(0.5, 0.2, 30), rng.normal(0.5, 0.2, 30)
    options: dict[str, Any] = dict(n=25, n_simulations=60, alternative="greater", rng=3)
    tolerance = 0.002
    mde = simulated_minimum_detectable_effect(x, y, power=0.8, tolerance=tolerance, **options)
    assert mde > 0
    assert simulated_power(x, y, delta=mde, **options).power >= 0.8
    assert simulated_power(x, y, delta=mde - 2 * tolerance, **options).power < 0.8
    less = simulated_minimum_detectable_effect(x, y, power=0.8, tolerance=tolerance, n=25, n_simulations=60,
                                               alternative="less", rng=3)
    assert less < 0


@pytest.mark.parametrize("kwargs, message", [
    (dict(x=[1, 0, 1, 1], y=[0, 0, 1, 0], delta=0.1, metric="accuracy"), "power_paired_binary"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1], n=0), "n must be a positive integer"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1], n_simulations=2.5), "n_simulations"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1, 0.2]), "same length"),
    (dict(x=[0.1], y=[0.3]), "at least 2"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1], delta=float("nan")), "delta must be a finite"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1], alpha=1.5), "alpha"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1], alternative="bigger"), "alternative"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1], rng="seed"), "rng"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1], rtol=0.1), "unknown option"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1], groups=[1, 1]), "in one unit"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1], groups=[1, 2, 3]), "groups"),
    (dict(x=[[1, 0, 2], [2, 1, 0]], y=[[1, 1, 1], [0, 1, 0]], metric="f1", delta=0.1), "generator="),
    (dict(), "pass the pilot"),
    (dict(x=[0.1, 0.2], y=[0.3, 0.1], metric="accuracy_score"), "metric must be"),
    (dict(generator=lambda rng, n: ([1], [0])), "n \\(items per replicate\\) is required"),
    (dict(generator=lambda rng, n: ([1], [0]), x=[1, 2], n=3), "generator= replaces the pilot"),
    (dict(generator=lambda rng, n: [1, 0], n=3), "must return a tuple"),
])
def test_bad_input_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        simulated_power(**kwargs)


def test_bad_input_refused_by_closed_form_and_search() -> None:
    with pytest.raises(ValueError, match="all equal"):
        normal_power([1.0, 2.0], [0.0, 1.0], 10)
    with pytest.raises(ValueError, match="n must be"):
        normal_power([1.0, 2.0], [0.0, 1.5], -3)
    with pytest.raises(ValueError, match="vary"):
        simulated_minimum_detectable_effect([1.0, 2.0], [0.0, 1.0], n=10)
    with pytest.raises(ValueError, match="tolerance"):
        simulated_minimum_detectable_effect([1.0, 2.0], [0.0, 1.5], n=10, tolerance=0)
    with pytest.raises(ValueError, match="cannot reject"):
        simulated_minimum_detectable_effect([1.0, 2.0, 0.5], [0.0, 1.5, 0.7], n=3, n_simulations=10, rng=0)


def _bleu_statistics(rng: np.random.Generator, n: int, quality: float) -> np.ndarray:
    """Consistent per-sentence BLEU statistics in pairperm.BLEU_COLUMNS order."""
    columns = list(pairperm.BLEU_COLUMNS)
    rows = np.zeros((n, len(columns)), dtype=np.int64)
    hyp = rng.integers(8, 20, n)
    for order in range(1, 5):
        totals = np.maximum(hyp - order + 1, 0)
        rows[:, columns.index(f"total_{order}")] = totals
        rows[:, columns.index(f"correct_{order}")] = rng.binomial(totals, quality ** order)
    rows[:, columns.index("hyp_len")] = hyp
    rows[:, columns.index("ref_len")] = hyp + rng.integers(-2, 3, n)
    return rows


def test_bleu_statistics_through_importance_sampling() -> None:
    rng = np.random.default_rng(12)
    x, y = _bleu_statistics(rng, 30, 0.75), _bleu_statistics(rng, 30, 0.6)
    result = simulated_power(x, y, metric="bleu", n=20, n_simulations=8, n_resamples=2000, rng=4)
    seed = int(np.random.default_rng(4).integers(2**63))
    for k in range(8):
        draw = _replicate_draw(4, k, 20, 30)
        expected = pairperm.compare(x[draw], y[draw], "bleu", n_resamples=2000,
                                    rng=np.random.default_rng([seed, k, 1])).pvalue
        assert result.pvalues[k] == pytest.approx(expected, rel=1e-12)
    assert result.normal is None and 0 <= result.power <= 1
