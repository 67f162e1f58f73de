"""Wilcoxon at large N: the band-limited Fourier route against the exact engine, brute force
and scipy, the auto cost model, and compare(method=)."""

import itertools
import math

import numpy as np
import pytest

import pairperm
from marks import quick_first
from pairperm import _core
from pairperm._classic import _sign_flip_effects, _signed_ranks
from reference import ALTERNATIVES
from synthetic import normal_differences

scipy_stats = pytest.importorskip("scipy.stats")


def _band(d, alternative, zero_method="wilcox"):
    effect, _, _ = _signed_ranks(d, np.zeros_like(d), zero_method)
    return _core.band_pvalue(_sign_flip_effects(effect).summary, alternative, 1e12)


@pytest.mark.parametrize("kind", ["none", "ties", "zeros"])
@pytest.mark.parametrize("n", quick_first([300, 800]))
def test_band_route_within_its_bound_of_the_exact_engine(n, kind):
    worst = 0.0
    # Shifts z / sqrt(n) give p from ~0.5 down to ~1e-7.
    for i, z in enumerate((0.0, 1.0, 2.5, 4.0, 5.5)):
        d = normal_differences(n, z / math.sqrt(n), kind, seed=100 * n + i)
        for alt in ALTERNATIVES:
            exact = pairperm.wilcoxon_test(d, alternative=alt, method="exact")
            auto = pairperm.wilcoxon_test(d, alternative=alt)
            assert exact.method == "exact"
            assert auto.method == "fourier"
            assert auto.pvalue_error is not None and 0 <= auto.pvalue_error <= 1e-6
            # The exact engine's own round-off is ~1e-12 relative.
            assert abs(auto.pvalue - exact.pvalue) <= auto.pvalue_error + 1e-11 * exact.pvalue
            assert abs(auto.log_pvalue - exact.log_pvalue) <= 1e-9
            assert (auto.statistic, auto.r_plus, auto.r_minus) == (exact.statistic, exact.r_plus, exact.r_minus)
            worst = min(worst, exact.log_pvalue)
    assert worst < math.log(1e-6)  # the range reached small p-values


def test_tiny_pvalues_keep_relative_accuracy():
    d = normal_differences(400, 1.0, "ties", seed=7)
    for alt in ("two-sided", "greater"):
        exact = pairperm.wilcoxon_test(d, alternative=alt, method="exact")
        done, p, log_p, err, _ = _band(d, alt)
        assert done and exact.log_pvalue < -100
        assert abs(log_p - exact.log_pvalue) <= 1e-9 * abs(exact.log_pvalue)
        assert err <= 1e-9 * p


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
def test_band_route_matches_brute_force(zero_method):
    rng = np.random.default_rng(11)
    for trial in range(20):
        d = rng.integers(-4, 5, size=12).astype(float)  # ties and zeros
        d[0] = 1.0
        effect, _, _ = _signed_ranks(d, np.zeros_like(d), zero_method)
        e = effect[effect != 0]
        observed = int(e.sum())
        sums = np.array([int(np.dot(s, np.abs(e))) for s in itertools.product((-1, 1), repeat=len(e))])
        brute = {
            "greater": np.mean(sums >= observed),
            "less": np.mean(sums <= observed),
            "two-sided": np.mean(np.abs(sums) >= abs(observed)),
        }
        for alt in ALTERNATIVES:
            done, p, _, err, _ = _band(d, alt, zero_method)
            assert done
            assert abs(p - brute[alt]) <= err + 1e-15, (trial, alt)


@pytest.mark.parametrize("n", [25, 200])
def test_band_route_matches_scipy_exact(n):
    for i, z in enumerate((0.0, 1.5, 3.0)):
        d = normal_differences(n, z / math.sqrt(n), "none", seed=n + i)
        for alt in ALTERNATIVES:
            ref = scipy_stats.wilcoxon(d, alternative=alt, method="exact")
            done, p, _, err, _ = _band(d, alt)
            assert done
            assert abs(p - ref.pvalue) <= err + 1e-12 * max(ref.pvalue, 1e-300) + 1e-15


def test_auto_cost_model():
    small = pairperm.wilcoxon_test(normal_differences(30, 0.3, "none", 1))
    assert small.method == "exact" and small.pvalue_error is None
    few_ranks = pairperm.wilcoxon_test(np.random.default_rng(2).integers(-3, 4, size=150).astype(float))
    assert few_ranks.method == "exact"
    large = pairperm.wilcoxon_test(normal_differences(20000, 0.01, "none", 3))
    assert large.method == "fourier" and large.pvalue_error <= 1e-6
    # Against the normal approximation, which is accurate to a few digits at this N.
    ref = scipy_stats.wilcoxon(normal_differences(20000, 0.01, "none", 3), method="approx", correction=True)
    assert abs(large.pvalue - ref.pvalue) < 1e-3


def test_monte_carlo_unchanged():
    # method="monte_carlo" still samples at large N rather than taking the Fourier route.
    d = normal_differences(2000, 0.05, "none", 4)
    r = pairperm.wilcoxon_test(d, method="monte_carlo", n_resamples=999, rng=1)
    assert r.method == "monte_carlo" and r.n_resamples == 999 and r.pvalue_error is None
    k = 20_000
    r = pairperm.wilcoxon_test(d, method="monte_carlo", n_resamples=k, rng=1)
    assert r.pvalue == (1 + r.hits) / (1 + k)
    lo, hi = r.pvalue_ci
    assert lo == pytest.approx(scipy_stats.beta.ppf(0.025, r.hits, k - r.hits + 1), rel=1e-9)
    assert hi == pytest.approx(scipy_stats.beta.ppf(0.975, r.hits + 1, k - r.hits), rel=1e-9)
    # Without ties at N = 2000 scipy's normal approximation is within ~1e-4 of the exact p-value
    # (~0.01 here), far inside the sampling error: the hits must be what K draws at it give. A
    # 99.99% Clopper-Pearson interval, so that the fixed seed tests the sampler, not luck.
    ref = scipy_stats.wilcoxon(d, method="approx", correction=True).pvalue
    assert 0.002 < ref < 0.05
    lo = scipy_stats.beta.ppf(0.5e-4, r.hits, k - r.hits + 1)
    hi = scipy_stats.beta.ppf(1 - 0.5e-4, r.hits + 1, k - r.hits)
    assert lo <= ref <= hi, (r.hits, ref)


def test_compare_passes_method():
    rng = np.random.default_rng(5)
    x = 1 + rng.lognormal(size=300)  # perplexities are at least 1
    y = 1 + (x - 1) * rng.lognormal(0.05, 0.1, size=300)
    auto = pairperm.compare(x, y, "perplexity")
    exact = pairperm.compare(x, y, "perplexity", method="exact")
    with pytest.warns(pairperm.PrecisionWarning, match="floor"):
        mc = pairperm.compare(x, y, "perplexity", method="monte_carlo", n_resamples=499, rng=0)
    assert auto.result.method == "fourier" and exact.result.method == "exact" and mc.result.method == "monte_carlo"
    assert abs(auto.pvalue - exact.pvalue) <= auto.result.pvalue_error + 1e-11 * exact.pvalue
    acc_x, acc_y = rng.integers(0, 2, size=50), rng.integers(0, 2, size=50)
    assert pairperm.compare(acc_x, acc_y).test == "mcnemar_test"
    dp = pairperm.compare(acc_x, acc_y, method="dp")
    assert dp.test == "permutation_test" and dp.result.engine == "dp"
    assert dp.pvalue == pytest.approx(pairperm.compare(acc_x, acc_y).pvalue, rel=1e-12)
    with pytest.raises(ValueError, match="method"):
        pairperm.compare(rng.normal(size=(20, 10)).astype(int), rng.normal(size=(20, 10)).astype(int), "bleu",
                         method="exact")
    with pytest.raises(ValueError, match="method"):
        pairperm.compare(x, y, "perplexity", method="dp")
