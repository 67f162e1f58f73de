"""The real-valued paired-permutation test against references written from the definitions.

References: full 2^N enumeration in exact integer arithmetic (scores on a grid, so ties are
real), an independent NumPy meet-in-the-middle count, the exact integer engine for
lattice-valued effects (deep tails), and long plain Monte Carlo runs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pairperm
from pairperm import _core
from pairperm._realvalued import REAL_MAX_EXACT, RealPValue, real_sum_pvalue
from reference import ALTERNATIVES

# --------------------------------------------------------------------------------------------
# references


def all_states(n: int) -> np.ndarray:
    """Row s holds the swap bits of state s (1 = take swap)."""
    return ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)


def enumerate_pvalue_int(stay: np.ndarray, swap: np.ndarray, alternative: str) -> float:
    """Exact p-value for integer local effects by listing all 2^N states (exact arithmetic)."""
    stay = np.asarray(stay, dtype=np.int64)
    swap = np.asarray(swap, dtype=np.int64)
    s = np.where(all_states(len(stay)), swap, stay).sum(axis=1)
    obs = int(stay.sum())
    twice_mu = int(stay.sum() + swap.sum())
    if alternative == "greater":
        hits = np.count_nonzero(s >= obs)
    elif alternative == "less":
        hits = np.count_nonzero(s <= obs)
    else:
        hits = np.count_nonzero(np.abs(2 * s - twice_mu) >= abs(2 * obs - twice_mu))
    return hits / 2 ** len(stay)


def mitm_pvalue(k: np.ndarray, t_obs: float, alternative: str, tol: float) -> float:
    """Independent meet in the middle in T = sum k_n B_n space (vectorised, searchsorted)."""
    k = np.asarray(k, dtype=float)
    n = len(k)
    h = n // 2
    a = np.sort(all_states(h) @ k[:h])
    b = np.sort(all_states(n - h) @ k[h:])
    k_sum = k.sum()
    c_obs = k_sum - t_obs

    def count_le(x: float) -> int:  # pairs with a + b <= x
        return int(np.searchsorted(b, x - a, side="right").sum())

    def count_ge(x: float) -> int:
        return int((len(b) - np.searchsorted(b, x - a, side="left")).sum())

    if alternative == "greater":
        hits = count_ge(t_obs - tol)
    elif alternative == "less":
        hits = count_le(t_obs + tol)
    else:
        if abs(t_obs - c_obs) <= 2 * tol:
            return 1.0
        hits = count_le(min(t_obs, c_obs) + tol) + count_ge(max(t_obs, c_obs) - tol)
    return hits / 2.0**n


def paired(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    stay = np.ascontiguousarray(x - y, dtype=np.float64)
    return stay, -stay


# --------------------------------------------------------------------------------------------
# exact route


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_exact_matches_enumeration_on_a_grid(seed, alternative):
    # Effects on a 0.25 grid: sums are exact in binary floating point and ties are frequent.
    rng = np.random.default_rng(seed)
    n = 14
    stay_q = rng.integers(-6, 7, n)
    swap_q = rng.integers(-6, 7, n) if seed % 2 else -stay_q  # general and antisymmetric effects
    swap_q[:2] = stay_q[:2]  # entries that do not vary
    want = enumerate_pvalue_int(stay_q, swap_q, alternative)
    got = real_sum_pvalue(stay_q / 4.0, swap_q / 4.0, alternative=alternative, method="exact")
    assert got.method == "exact"
    assert got.pvalue == want
    assert got.pvalue_ci is None and got.n_resamples is None
    assert math.isclose(got.log_pvalue, math.log(want), rel_tol=1e-14, abs_tol=1e-15)


@pytest.mark.parametrize("seed", range(8))
def test_roundoff_ties_count_as_ties(seed):
    # Decimal scores (0.1, 0.2, 0.3, ...): x - y and their sums tie in exact arithmetic but
    # not in binary floating point. The reference works in exact integers (tenths).
    rng = np.random.default_rng(100 + seed)
    n = 14
    x10 = rng.integers(0, 8, n)
    y10 = rng.integers(0, 8, n)
    x, y = x10 / 10.0, y10 / 10.0
    stay, swap = paired(x, y)
    float_naive_differs = False
    for alternative in ALTERNATIVES:
        want = enumerate_pvalue_int(x10 - y10, y10 - x10, alternative)
        got = real_sum_pvalue(stay, swap, alternative=alternative, method="exact")
        assert got.pvalue == want, alternative
        k = np.abs(stay - swap)
        naive = mitm_pvalue(k, k[stay > swap].sum(), alternative, 0.0)  # raw float comparisons
        float_naive_differs |= naive != want
    if seed == 0:
        # The data really exercise round-off: without the round-off slack the count is wrong.
        assert float_naive_differs


def test_roundoff_tie_textbook_case():
    # 0.1 + 0.2 vs 0.3: the observed sum equals the mean in exact arithmetic, so p = 1.
    x = np.array([0.1, 0.2, 0.0])
    y = np.array([0.0, 0.0, 0.3])
    stay, swap = paired(x, y)
    assert stay.sum() != 0.0  # 5.55e-17 in binary
    for method in ("exact", "saddlepoint_is", "monte_carlo"):
        assert real_sum_pvalue(stay, swap, alternative="two-sided", method=method, seed=1).pvalue == 1.0
    # The states with S = 0 tie with the observed one on both one-sided tails: P[S >= 0] = 5/8.
    assert real_sum_pvalue(stay, swap, alternative="greater", method="exact").pvalue == 5 / 8
    assert real_sum_pvalue(stay, swap, alternative="less", method="exact").pvalue == 5 / 8


@pytest.mark.parametrize(("n", "seed"), [(30, 0), (33, 1), (36, 2)])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_exact_matches_numpy_meet_in_the_middle(n, seed, alternative):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = rng.random(n) - 0.12
    stay, swap = paired(x, y)
    k = np.abs(stay - swap)
    t_obs = k[stay > swap].sum()
    tol = (n + 4) * np.finfo(float).eps * np.abs(stay).sum() * 2  # the documented round-off slack
    want = mitm_pvalue(k, t_obs, alternative, tol)
    got = real_sum_pvalue(stay, swap, alternative=alternative, method="exact")
    assert got.pvalue == want
    assert 0 < want < 1


def test_constant_entries_do_not_change_the_result():
    # Entries with stay == swap shift S and s_obs alike, whatever their size.
    rng = np.random.default_rng(5)
    stay = rng.normal(size=20) + 0.3
    swap = -stay
    big = np.full(30, 1e12)
    stay2, swap2 = np.concatenate([stay, big]), np.concatenate([swap, big])
    for alternative in ALTERNATIVES:
        for method in ("exact", "saddlepoint_is", "monte_carlo"):
            a = real_sum_pvalue(stay, swap, alternative=alternative, method=method, n_resamples=500, seed=2)
            b = real_sum_pvalue(stay2, swap2, alternative=alternative, method=method, n_resamples=500, seed=2)
            assert a == b


def test_exact_matches_numpy_meet_in_the_middle_with_grid_ties():
    rng = np.random.default_rng(7)
    n = 34
    stay = rng.integers(-8, 9, n) / 8.0
    stay[stay == 0] = 0.5
    swap = -stay
    k = np.abs(stay - swap)
    for alternative in ALTERNATIVES:
        want = mitm_pvalue(k, k[stay > swap].sum(), alternative, 0.0)
        assert real_sum_pvalue(stay, swap, alternative=alternative).pvalue == want


def test_auto_is_exact_up_to_the_limit_and_exact_refuses_beyond():
    rng = np.random.default_rng(3)
    stay = rng.normal(size=REAL_MAX_EXACT + 5)
    stay[:5] = 0.0  # five entries that do not vary: still feasible
    assert real_sum_pvalue(stay, -stay, alternative="greater").method == "exact"
    stay[0] = 1.0
    r = real_sum_pvalue(stay, -stay, alternative="greater", n_resamples=2000)
    assert r.method == "saddlepoint_is"
    with pytest.raises(ValueError, match=rf"n <= {REAL_MAX_EXACT}.*got n = {REAL_MAX_EXACT + 1}.*saddlepoint_is"):
        real_sum_pvalue(stay, -stay, alternative="greater", method="exact")


@pytest.mark.parametrize("method", ("auto", "exact", "saddlepoint_is", "monte_carlo"))
def test_nothing_varies_gives_one(method):
    for stay in (np.zeros(0), np.full(50, 0.0), np.array([1.5, -2.0])):
        for alternative in ALTERNATIVES:
            r = real_sum_pvalue(stay, stay.copy(), alternative=alternative, method=method, n_resamples=100)
            assert r.pvalue == 1.0 and r.log_pvalue == 0.0


def test_bad_arguments():
    s = np.ones(3)
    with pytest.raises(ValueError, match="method must be one of"):
        real_sum_pvalue(s, -s, alternative="greater", method="fft")
    with pytest.raises(ValueError, match="alternative must be one of"):
        real_sum_pvalue(s, -s, alternative="bigger")
    with pytest.raises(ValueError, match="rtol"):
        real_sum_pvalue(s, -s, alternative="greater", rtol=-1.0)
    with pytest.raises(ValueError, match="n_resamples"):
        real_sum_pvalue(s, -s, alternative="greater", method="monte_carlo", n_resamples=1)
    with pytest.raises(ValueError, match="length mismatch"):
        real_sum_pvalue(s, np.ones(4), alternative="greater")
    with pytest.raises(ValueError, match="finite"):
        real_sum_pvalue(np.array([1.0, np.nan]), np.zeros(2), alternative="greater")


# --------------------------------------------------------------------------------------------
# the samplers


def test_sampler_moments_fair_and_tilted():
    # T = sum k B: fair bits give mean sum(k)/2, variance sum(k^2)/4; the tilted law
    # q = 1/(1 + e^{-theta k}) gives mean sum(k q), variance sum(k^2 q (1 - q)).
    rng = np.random.default_rng(11)
    k = rng.random(300) * 3
    n_res = 40_000
    for theta in (0.0, -0.4, 0.7):
        q = 1.0 / (1.0 + np.exp(-theta * k))
        mean, var = np.sum(k * q), np.sum(k * k * q * (1 - q))
        t = _core.real_sample_t(k, theta, n_res, 5)
        assert abs(t.mean() - mean) < 5 * math.sqrt(var / n_res)
        assert abs(t.var() / var - 1) < 5 * math.sqrt(2 / n_res)


def test_sampler_per_entry_probabilities():
    # One entry at a time: the fraction of resamples with B_n = 1 is q_n.
    k = np.array([0.0, 0.0, 1.0])
    for theta in (0.0, -2.0, 1.5):
        t = _core.real_sample_t(k, theta, 50_000, 9)
        q = 0.5 if theta == 0 else 1.0 / (1.0 + math.exp(-theta))
        assert abs(np.mean(t == 1.0) - q) < 5 * math.sqrt(q * (1 - q) / 50_000)
        assert np.all((t == 0.0) | (t == 1.0))


@pytest.mark.parametrize("method", ("saddlepoint_is", "monte_carlo"))
def test_seeded_repeatable_and_independent_of_threads(method):
    rng = np.random.default_rng(4)
    stay = rng.normal(size=3000) + 0.05
    runs = [
        real_sum_pvalue(stay, -stay, alternative="two-sided", method=method, n_resamples=3000, seed=42, n_threads=t)
        for t in (1, 2, 3, 1)
    ]
    assert all(r == runs[0] for r in runs)
    other = real_sum_pvalue(stay, -stay, alternative="two-sided", method=method, n_resamples=3000, seed=43)
    assert other.pvalue != runs[0].pvalue


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_monte_carlo_agrees_with_exact(alternative):
    rng = np.random.default_rng(21)
    stay = rng.integers(-20, 21, 16) / 4.0 + 0.3
    swap = rng.integers(-20, 21, 16) / 4.0
    exact = real_sum_pvalue(stay, swap, alternative=alternative, method="exact").pvalue
    mc = real_sum_pvalue(stay, swap, alternative=alternative, method="monte_carlo", n_resamples=20_000, seed=5)
    assert mc.n_resamples == 20_000
    assert mc.pvalue_ci[0] <= exact <= mc.pvalue_ci[1]
    # (1 + hits) / (1 + K): the estimate is a ratio of integers.
    hits = mc.pvalue * 20_001 - 1
    assert abs(hits - round(hits)) < 1e-6


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_importance_sampling_matches_exact_small(alternative):
    rng = np.random.default_rng(8)
    x = rng.random(36)
    stay, swap = paired(x, rng.random(36) - 0.3)
    exact = real_sum_pvalue(stay, swap, alternative=alternative, method="exact").pvalue
    r = real_sum_pvalue(stay, swap, alternative=alternative, method="saddlepoint_is", n_resamples=20_000, seed=3)
    lo, hi = r.pvalue_ci
    assert lo <= exact <= hi
    assert hi - lo < 0.1 * r.pvalue


def test_importance_sampling_ci_coverage():
    # 200 independent runs at an exactly known p ~ 1e-6 (N = 36, by enumeration): the 95%
    # interval should cover the truth in roughly 95% of them.
    rng = np.random.default_rng(12)
    stay = rng.random(36) - rng.random(36) + 0.4
    exact = real_sum_pvalue(stay, -stay, alternative="greater", method="exact").pvalue
    assert 1e-8 < exact < 1e-4
    covered = 0
    for seed in range(200):
        r = real_sum_pvalue(stay, -stay, alternative="greater", method="saddlepoint_is", n_resamples=1000, seed=seed)
        covered += r.pvalue_ci[0] <= exact <= r.pvalue_ci[1]
    assert 0.90 * 200 <= covered <= 0.99 * 200


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_importance_sampling_matches_long_monte_carlo(alternative):
    # Large N at a moderate p: plain Monte Carlo with many samples is an independent estimate.
    rng = np.random.default_rng(30)
    n = 2000
    d = rng.random(n) - rng.random(n)
    # Centre, then shift so that the observed z-score is about 2.2 (p ~ 0.01-0.03).
    z = {"greater": 2.2, "less": -2.2, "two-sided": 2.4}[alternative]
    d = d - d.mean()
    d += z * math.sqrt(np.sum(d * d)) / n
    stay, swap = d, -d
    mc = real_sum_pvalue(stay, swap, alternative=alternative, method="monte_carlo", n_resamples=200_000, seed=1)
    r = real_sum_pvalue(stay, swap, alternative=alternative, n_resamples=10_000, seed=2)
    assert r.method == "saddlepoint_is"
    assert 0.003 < mc.pvalue < 0.1
    se_is = (r.pvalue_ci[1] - r.pvalue_ci[0]) / (2 * 1.96)
    se_mc = math.sqrt(mc.pvalue * (1 - mc.pvalue) / 200_000)
    assert abs(r.pvalue - mc.pvalue) < 3.5 * math.hypot(se_is, se_mc)
    # The Lugannani-Rice approximation is close on continuous effects at large N.
    assert abs(r.saddlepoint / r.pvalue - 1) < 0.1


@pytest.mark.parametrize("target", (1e-3, 1e-20, 1e-100, 1e-200))
@pytest.mark.parametrize("alternative", ("greater", "two-sided"))
def test_importance_sampling_deep_tails_against_exact_integer_engine(target, alternative):
    # Integer scores passed as floats: the exact integer engine gives the truth at any depth.
    rng = np.random.default_rng(int(-math.log10(target)))
    n = 3000
    x = rng.integers(0, 6, n)
    y = rng.integers(0, 6, n)
    # Move system B down until the exact p-value reaches the target.
    for _ in range(1000):
        truth = pairperm.permutation_test(x, y, alternative=alternative, method="auto")
        if truth.log_pvalue <= math.log(target):
            break
        y[rng.integers(0, n, 25)] -= 1
    assert math.log(target) - 10 < truth.log_pvalue <= math.log(target)
    stay, swap = paired(x.astype(float), y.astype(float))
    r = real_sum_pvalue(stay, swap, alternative=alternative, n_resamples=10_000, seed=17)
    assert r.method == "saddlepoint_is"
    # The 95% interval covers in ~95% of runs (see the coverage test); across these eight fixed
    # runs require the truth within 3.3 standard errors (99.9%).
    se = (r.pvalue_ci[1] - r.pvalue_ci[0]) / (2 * 1.96) / r.pvalue  # relative
    assert se < 0.06
    assert abs(truth.log_pvalue - r.log_pvalue) <= 3.3 * se


def test_result_is_frozen_and_prints():
    stay = np.array([0.5, -0.25, 1.0])
    r = real_sum_pvalue(stay, -stay, alternative="greater")
    assert isinstance(r, RealPValue)
    with pytest.raises(AttributeError):
        r.pvalue = 0.5  # type: ignore[misc]
    assert "method='exact'" in repr(r)


@pytest.mark.parametrize("target_log10", [-3, -20, -100])
def test_sampling_rounds_reach_five_percent_relative_precision(target_log10):
    # Integer differences passed as floats: the integer engine gives the exact p to ~1e-12.
    rng = np.random.default_rng(abs(target_log10))
    n = 10_000
    d = rng.integers(-6, 7, n).astype(np.int64)
    # Push the observed sum out until p is near the target.
    exact = pairperm.permutation_test(d, np.zeros_like(d), alternative="greater")
    while exact.log_pvalue > target_log10 * np.log(10):
        d[rng.integers(0, n, 50)] += 1
        exact = pairperm.permutation_test(d, np.zeros_like(d), alternative="greater")
    r = real_sum_pvalue(d.astype(float), -d.astype(float), alternative="greater", method="saddlepoint_is",
                        n_resamples=10_000, seed=7, rtol=0.0)
    lo, hi = r.pvalue_ci
    rel_half = (hi - lo) / 2 / r.pvalue
    assert rel_half <= 0.05
    assert r.n_resamples % 10_000 == 0 and r.n_resamples <= 80_000
    # Within ~3.3 standard errors (a fixed seed; the 95% coverage itself is tested above).
    assert abs(np.log(r.pvalue) - exact.log_pvalue) <= 3.3 * rel_half / 1.96 * 1.05
