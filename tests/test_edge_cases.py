"""Edge cases: FFT noise floors, huge values, direction of compare(), validation."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import pairperm
from pairperm import _runner
from reference import brute_force_counts, exact_pvalue, rel_err


def separated_f1_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    gold = rng.poisson(1.5, n)
    ta = rng.binomial(gold, 0.95)
    tb = rng.binomial(gold, 0.6)
    fa = rng.poisson(0.1, n)
    fb = rng.poisson(0.5, n)
    return np.stack([ta, fa, gold - ta], 1), np.stack([tb, fb, gold - tb], 1)


@pytest.mark.parametrize("test", [pairperm.f1_test, pairperm.precision_test])
def test_tiny_2d_pvalues_are_exact_not_fft_noise(test):
    a, b = separated_f1_data()
    dp = test(a, b, method="dp")
    assert dp.pvalue < 1e-30  # far below the FFT's round-off
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = test(a, b)
    assert auto.method == "auto" and not auto.pvalue_is_bound
    assert auto.pvalue == pytest.approx(dp.pvalue, rel=1e-9)
    assert auto.log_pvalue == pytest.approx(dp.log_pvalue, rel=1e-9)


def test_unaffordable_exact_fallback_reports_a_flagged_upper_bound(monkeypatch):
    a, b = separated_f1_data()
    exact = pairperm.f1_test(a, b, method="dp").pvalue
    monkeypatch.setattr(_runner, "DP_BUDGET", 0.0)
    with pytest.warns(pairperm.PrecisionWarning, match="upper bound|p <="):
        r = pairperm.f1_test(a, b)
    assert r.pvalue_is_bound and r.pvalue == _runner.FFT_NOISE_FLOOR >= exact
    assert "pvalue_is_bound=True" in repr(r)


def test_callable_statistic_tiny_pvalue_matches_exact_arithmetic():
    rng = np.random.default_rng(1)
    n = 300
    x = rng.integers(0, 10, n)
    y = np.maximum(x - rng.integers(0, 3, n), 0)
    d = x - y
    exact = exact_pvalue(d, -d, "two-sided")
    assert exact < 1e-40
    r = pairperm.structured_test(d, -d, lambda s: s * 1.0)
    assert rel_err(r.pvalue, exact) <= 1e-9


def test_infinite_observed_statistic_is_an_error():
    with pytest.raises(ValueError, match="inf at the observed value"):
        with np.errstate(divide="ignore"):
            pairperm.structured_test([1, 2, 0], [0, 0, 3], lambda s: 1.0 / (s - 3.0), alternative="greater")


def test_compare_perplexity_greater_means_a_is_better():
    rng = np.random.default_rng(0)
    b = np.exp(rng.normal(3, 1, 200))
    worse = b * np.exp(rng.normal(0.3, 0.2, 200))  # A clearly worse (higher perplexity)
    better = b * np.exp(rng.normal(-0.3, 0.2, 200))
    assert pairperm.compare(worse, b, metric="perplexity", alternative="greater").pvalue > 0.5
    assert pairperm.compare(better, b, metric="perplexity", alternative="greater").pvalue < 1e-10
    assert pairperm.compare(worse, b, metric="perplexity", alternative="less").pvalue < 1e-10


def test_distribution_cdf_sf_exact_above_2_53():
    big = 2**55
    d = pairperm.null_distribution([big + 1, big + 1], [big, big + 2])
    assert d.offset == 2 * big + 1
    assert d.cdf(2 * big) == 0.0
    assert d.cdf(2 * big + 2) == pytest.approx(0.75)
    assert d.cdf(2 * big + 3) == pytest.approx(1.0)
    assert d.sf(2 * big + 2) == pytest.approx(0.25)
    assert d.cdf(np.array([2 * big + 1, 2 * big + 9])).tolist() == pytest.approx([0.25, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        d.cdf(float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert d.cdf(np.inf) == pytest.approx(1.0) and d.cdf(-np.inf) == 0.0


@pytest.mark.parametrize("rtol", [-1, float("nan"), 1.5])
def test_monte_carlo_rtol_is_validated(rtol):
    with pytest.raises(ValueError, match="rtol"):
        pairperm.monte_carlo_test([1, 2], [0, 0], lambda s: s * 1.0, rtol=rtol, rng=0)


def test_monte_carlo_threads_validated():
    with pytest.raises(ValueError, match="n_jobs"):
        pairperm.monte_carlo_test([1, 2], [0, 0], n_jobs=-1, rng=0)


@pytest.mark.parametrize("kw", [dict(beta=-1.0), dict(zero_division=5.0), dict(beta=float("inf"))])
def test_bootstrap_f1_options_validated(kw):
    a, b = separated_f1_data(50)
    with pytest.raises(ValueError, match="beta|zero_division"):
        pairperm.bootstrap_test(a, b, metric="f1", n_resamples=10, rng=0, **kw)


def test_sign_test_mixed_int_and_float_compares_exactly():
    r = pairperm.sign_test(np.array([2**60 + 1]), np.array([2.0**60]), alternative="greater")
    assert r.n_positive == 1 and r.n_zero == 0
    assert r.pvalue == 0.5


def test_mcnemar_hint_fits_mcnemar():
    with pytest.raises(ValueError, match="mcnemar_test takes 0/1 correctness"):
        pairperm.mcnemar_test([0.5], [1])


def test_permutation_monte_carlo_in_blocks_stays_correct():
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    y = np.array([2, 1, 3, 2, 4, 7, 2, 5])
    k = (1 << 20) + 7  # crosses a block boundary
    r = pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=k, rng=0)
    exact = float(exact_pvalue(x - y, y - x, "two-sided"))
    hits = round(r.pvalue * (k + 1)) - 1
    lo, hi = pairperm._stats.clopper_pearson(hits, k, 0.9999)
    assert lo <= exact <= hi and r.n_resamples == k
    assert math.isclose(r.pvalue, pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=k, rng=0).pvalue)


def brute_pvalue(stay, swap, alt):
    counts = brute_force_counts(stay, swap)
    t, mu2 = sum(stay), sum(stay) + sum(swap)
    ok = {
        "greater": lambda v: v >= t,
        "less": lambda v: v <= t,
        "two-sided": lambda v: abs(2 * v - mu2) >= abs(2 * t - mu2),
    }[alt]
    return Fraction(sum(c for v, c in counts.items() if ok(v)), 2 ** len(stay))


def test_huge_unrelated_effects_fall_back_to_exact_enumeration():
    x = [10**15, 3 * 10**14 + 1, -7 * 10**13 + 3, 5]
    y = [0, 0, 0, 2]
    d = [a - b for a, b in zip(x, y)]
    for alt in ("two-sided", "greater", "less"):
        r = pairperm.permutation_test(x, y, alternative=alt)
        assert r.pvalue == float(brute_pvalue(d, [-v for v in d], alt))
        s = pairperm.structured_test(d, [1 - v for v in d], alternative=alt)
        assert s.pvalue == float(brute_pvalue(d, [1 - v for v in d], alt))
    # Too many varying entries for a listing: the clear error stays.
    with pytest.raises(pairperm.SupportTooLargeError, match="method='monte_carlo'"):
        pairperm.permutation_test([10**15, 3 * 10**14 + 1] + [1] * 30, [0, 0] + [2] * 30)
