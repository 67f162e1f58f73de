"""Monte Carlo permutation test: brute force, exact engine and an independent NumPy sampler."""

import itertools
import math

import numpy as np
import pytest

import pairperm
from pairperm import datasets
from pairperm._stats import clopper_pearson
from reference import exact_pvalue, paired
from synthetic import correct_counts


def test_identity_statistic_agrees_with_exact_within_ci():
    x, y = datasets.stanza_pos_like(3000, seed=3)
    d = x - y
    for alt in ("two-sided", "greater", "less"):
        exact = pairperm.permutation_test(x, y, alternative=alt).pvalue
        r = pairperm.monte_carlo_test(d, -d, n_resamples=20_000, rng=11, alternative=alt)
        lo, hi = r.pvalue_ci
        assert lo <= exact <= hi, (alt, exact, r)
        assert r.pvalue == (1 + r.hits) / (1 + r.n_resamples)


def ratio(s):
    s = np.asarray(s, dtype=float)
    return s[:, 0] / (s[:, 0] + s[:, 1])


def test_nonlinear_statistic_against_brute_force():
    rng = np.random.default_rng(0)
    n = 12
    stay = rng.integers(0, 6, (n, 2))
    swap = rng.integers(0, 6, (n, 2))
    obs = ratio(stay.sum(0, keepdims=True))[0]
    vals = [ratio((np.where(np.array(m)[:, None], swap, stay)).sum(0, keepdims=True))[0]
            for m in itertools.product((0, 1), repeat=n)]
    exact = np.mean(np.array(vals) >= obs * (1 - 1e-12))
    r = pairperm.monte_carlo_test(stay, swap, ratio, n_resamples=20_000, rng=5, alternative="greater")
    assert r.pvalue_ci[0] <= exact <= r.pvalue_ci[1]
    assert r.statistic == pytest.approx(obs)


def numpy_monte_carlo(stay, swap, statistic, k, seed):
    rng = np.random.default_rng(seed)
    masks = rng.integers(0, 2, (k, len(stay))).astype(float)
    sums = stay.sum(0) + masks @ (swap - stay).astype(float)
    h = statistic(sums)
    return (1 + np.count_nonzero(h >= statistic(stay.sum(0, keepdims=True))[0] - 1e-12)) / (1 + k)


def test_two_dimensional_statistic_matches_numpy_implementation():
    a, b = datasets.ner_like(400, seed=2)
    stay = np.concatenate([a, b], axis=1)
    swap = np.concatenate([b, a], axis=1)

    def f1_diff(s):
        s = np.asarray(s, dtype=float)
        f = lambda t: 2 * t[:, 0] / (2 * t[:, 0] + t[:, 1] + t[:, 2])
        return f(s[:, :3]) - f(s[:, 3:])

    k = 20_000
    ours = pairperm.monte_carlo_test(stay, swap, f1_diff, n_resamples=k, rng=1, alternative="greater").pvalue
    ref = numpy_monte_carlo(stay, swap, f1_diff, k, seed=2)
    se = np.sqrt(2 * ref * (1 - ref) / k)
    assert abs(ours - ref) < 5 * se + 1e-4


def test_seeded_runs_repeat_and_do_not_depend_on_threads():
    x, y = datasets.stanza_pos_like(500)
    d = x - y
    r1 = pairperm.monte_carlo_test(d, -d, n_resamples=5000, rng=42, n_jobs=1)
    r2 = pairperm.monte_carlo_test(d, -d, n_resamples=5000, rng=42, n_jobs=2)
    r3 = pairperm.monte_carlo_test(d, -d, n_resamples=5000, rng=43)
    assert r1 == r2
    assert r1.hits != r3.hits  # another seed draws another stream (equal hits would be a 1-in-~100 fluke)
    g1 = pairperm.monte_carlo_test(d, -d, n_resamples=500, rng=np.random.default_rng(9))
    g2 = pairperm.monte_carlo_test(d, -d, n_resamples=500, rng=np.random.default_rng(9))
    assert g1 == g2


def test_callable_alternatives_estimate_the_exact_structured_test():
    # Same statistic, same alternative: the Monte Carlo interval must contain the exact p.
    x, y = datasets.stanza_pos_like(300, seed=1)
    stay, swap = np.c_[x, y], np.c_[y, x]
    diff = lambda s: (s[:, 0] - s[:, 1]).astype(float) / 7.0
    for alt in ("two-sided", "greater", "less"):
        exact = pairperm.structured_test(stay, swap, diff, alternative=alt, method="dp").pvalue
        r = pairperm.monte_carlo_test(stay, swap, diff, alternative=alt, n_resamples=20_000, rng=3,
                                      confidence_level=0.9999)
        assert r.pvalue_ci[0] <= exact <= r.pvalue_ci[1], (alt, exact, r)
        assert r.pvalue == (1 + r.hits) / (1 + r.n_resamples)
    # The two-sided rule is |h(S*)| >= |h_obs|: with an odd statistic it equals the identity test.
    d = x - y
    t = pairperm.monte_carlo_test(stay, swap, diff, n_resamples=4000, rng=8)
    i = pairperm.monte_carlo_test(d, -d, n_resamples=4000, rng=8)
    assert t.hits == i.hits


def test_early_stopping():
    x, y = datasets.stanza_pos_like(2000)
    d = x - y
    full = pairperm.monte_carlo_test(d, -d, n_resamples=100_000, rng=4)
    early = pairperm.monte_carlo_test(d, -d, n_resamples=100_000, rng=4, alpha=0.5)
    assert early.stopped_early and early.n_resamples < 100_000
    assert not (early.pvalue_ci[0] <= 0.5 <= early.pvalue_ci[1])
    assert not full.stopped_early and full.n_resamples == 100_000
    # Undecidable alpha (right at the p-value): runs to the end.
    p = pairperm.permutation_test(x, y).pvalue
    near = pairperm.monte_carlo_test(d, -d, n_resamples=3000, rng=4, alpha=p)
    assert near.n_resamples == 3000


def test_bad_input():
    with pytest.raises(ValueError, match="needs 1-D"):
        pairperm.monte_carlo_test(np.zeros((3, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="shape"):
        pairperm.monte_carlo_test([1, 2], [2, 1], lambda s: s[:1])
    with pytest.raises(ValueError, match="n_resamples"):
        pairperm.monte_carlo_test([1, 2], [2, 1], n_resamples=0)
    with pytest.raises(ValueError, match="alpha"):
        pairperm.monte_carlo_test([1, 2], [2, 1], alpha=1.5)
    with pytest.raises(ValueError, match="same length"):
        pairperm.monte_carlo_test([1, 2], [2, 1, 0])
    with pytest.raises(ValueError, match="NaN"):
        pairperm.monte_carlo_test([np.nan, 2], [2, 1])


@pytest.mark.parametrize("hits,n", [(0, 10), (5, 10), (10, 10), (5, 10**8), (3000, 20000), (5 * 10**7, 10**8)])
def test_clopper_pearson_equals_beta_quantiles(hits, n):
    beta = pytest.importorskip("scipy.stats").beta
    lo, hi = pairperm._stats.clopper_pearson(hits, n, 0.95)
    ref_lo = beta.ppf(0.025, hits, n - hits + 1) if hits else 0.0
    ref_hi = beta.ppf(0.975, hits + 1, n - hits) if hits < n else 1.0
    assert lo == pytest.approx(ref_lo, rel=1e-8, abs=1e-300) and hi == pytest.approx(ref_hi, rel=1e-8)


def test_same_rng_same_pvalue_whichever_function_samples():
    x, y = datasets.stanza_pos_like(500, seed=5)
    d = x - y
    a = pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=9000, rng=7)
    b = pairperm.monte_carlo_test(d, -d, n_resamples=9000, rng=7)
    c = pairperm.structured_test(d, -d, method="monte_carlo", n_resamples=9000, rng=7)
    assert a.hits == b.hits == c.hits and a.pvalue == b.pvalue == c.pvalue
    # F1's packed 2-D sampler draws the same resamples as the plain m-D sampler.
    fa, fb = datasets.ner_like(400, seed=1)
    f = pairperm.f1_test(fa, fb, method="monte_carlo", n_resamples=5000, rng=3)
    stat = pairperm.f1_test(fa, fb).statistic
    tp_t, fp_t = int(fa[:, 0].sum() + fb[:, 0].sum()), int(fa[:, 1].sum() + fb[:, 1].sum())
    gold = int(fa[:, 0].sum() + fa[:, 2].sum())

    def f1_diff(s):
        tpa, fpa = s[:, 0].astype(float), s[:, 1].astype(float)
        tpb, fpb = tp_t - tpa, fp_t - fpa
        return 2 * tpa / (tpa + fpa + gold) - 2 * tpb / (tpb + fpb + gold)

    m = pairperm.monte_carlo_test(fa[:, :2], fb[:, :2], f1_diff, n_resamples=5000, rng=3)
    assert m.statistic == pytest.approx(stat, rel=1e-12)
    assert abs(m.hits - f.hits) <= 2  # float vs exact ties only


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


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_monte_carlo_interval_contains_exact_pvalue(alternative, seed):
    scipy_stats = pytest.importorskip("scipy.stats")
    x, y = correct_counts(seed)
    exact = float(exact_pvalue(*paired(x, y), alternative))
    k = 20_000
    r = pairperm.permutation_test(x, y, alternative=alternative, method="monte_carlo", n_resamples=k, rng=seed)
    hits = r.hits
    assert isinstance(hits, int) and 0 <= hits <= k
    assert r.pvalue == (1 + hits) / (1 + k)  # scipy's convention
    # Clopper-Pearson from scipy's beta quantiles: the interval of the proportion hits / k.
    beta = scipy_stats.beta
    want = (beta.ppf(0.025, hits, k - hits + 1) if hits else 0.0, beta.ppf(0.975, hits + 1, k - hits) if hits < k else 1.0)
    assert r.pvalue_ci == pytest.approx(want, rel=1e-9, abs=1e-15)
    # Judge with a 99.99% interval so the fixed seeds test the sampler, not luck.
    lo = beta.ppf(0.5e-4, hits, k - hits + 1) if hits else 0.0
    hi = beta.ppf(1 - 0.5e-4, hits + 1, k - hits) if hits < k else 1.0
    assert lo <= exact <= hi
    assert r.null_distribution is None and r.n_resamples == k


def test_clopper_pearson_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    for hits, n in [(0, 50), (3, 50), (50, 50), (417, 20_000), (9_999, 20_000)]:
        ref = stats.binomtest(hits, n).proportion_ci(0.95, method="exact")
        lo, hi = clopper_pearson(hits, n)
        assert lo == pytest.approx(ref.low, abs=1e-10)
        assert hi == pytest.approx(ref.high, abs=1e-10)


def test_monte_carlo_is_repeatable_with_a_seed():
    x, y = correct_counts(4)
    run = lambda rng: pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=3000, rng=rng).pvalue
    assert run(17) == run(17)
    assert run(np.random.default_rng(5)) == run(np.random.default_rng(5))
    assert len({run(s) for s in range(6)}) > 1  # different seeds give different streams


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_callable_on_real_effects_sees_the_real_sums(seed):
    """The statistic gets float sums of real-valued effects (never int64 casts of them): its
    observed value and the sampled p-value agree with brute force over the 2^n patterns."""
    rng = np.random.default_rng(seed)
    stay = np.round(rng.normal(0, 1, (9, 2)), 3)
    swap = np.round(rng.normal(0, 1, (9, 2)), 3)

    def h(s):
        return 2 * s[:, 0] - s[:, 1] ** 2

    sums = [stay[[i for i in range(9) if not p[i]]].sum(axis=0) + swap[[i for i in range(9) if p[i]]].sum(axis=0)
            for p in itertools.product((0, 1), repeat=9)]
    values = h(np.array(sums))
    h_obs = float(h(stay.sum(axis=0, keepdims=True))[0])
    exact = np.mean(values >= h_obs - 1e-9 * abs(h_obs))
    r = pairperm.monte_carlo_test(stay, swap, h, alternative="greater", n_resamples=20_000, rng=seed,
                                  confidence_level=0.9999)
    assert r.statistic == pytest.approx(h_obs, rel=1e-12)
    lo, hi = r.pvalue_ci
    assert lo <= exact <= hi, (exact, r)


def test_callable_on_real_effects_small_example_matches_enumeration():
    stay = np.array([[0.5, 1.25], [1.5, -0.75]])
    swap = np.array([[-1.0, 0.25], [0.25, 2.0]])

    def h(s):
        return 2 * s[:, 0] - s[:, 1] ** 2

    exact = pairperm.structured_test(stay, swap, h, alternative="greater")
    assert exact.statistic == 3.75 and exact.pvalue == 0.25  # (0.5+1.5)*2 - 0.5**2; 1 of 4 patterns
    r = pairperm.monte_carlo_test(stay, swap, h, alternative="greater", n_resamples=20_000, rng=0)
    assert r.statistic == 3.75
    lo, hi = r.pvalue_ci
    assert lo <= 0.25 <= hi
