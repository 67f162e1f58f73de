"""The real-valued paired-permutation test against references written from the definitions.

References: full 2^N enumeration in exact integer arithmetic (scores on a grid, so ties are
real), an independent NumPy meet-in-the-middle count, the exact integer engine for
lattice-valued effects (deep tails), and long plain Monte Carlo runs.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

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


def fraction_pvalue(stay, swap, alternative: str, window=Fraction(0)) -> Fraction:
    """Exact p-value over all 2^N states in rational arithmetic on the floats themselves; states
    within `window` of the observed value tie with it."""
    stay = [v if isinstance(v, Fraction) else Fraction(float(v)) for v in stay]
    swap = [v if isinstance(v, Fraction) else Fraction(float(v)) for v in swap]
    obs = sum(stay, Fraction(0))
    mu = (obs + sum(swap, Fraction(0))) / 2
    hits = 0
    for state in itertools.product(*zip(stay, swap)):
        s = sum(state, Fraction(0))
        if alternative == "greater":
            hits += s >= obs - window
        elif alternative == "less":
            hits += s <= obs + window
        else:
            hits += abs(s - mu) >= abs(obs - mu) - window
    return Fraction(hits, 2 ** len(stay))


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
    with pytest.raises(ValueError, match=rf"n <= {REAL_MAX_EXACT}.*got n = {REAL_MAX_EXACT + 1}.*method='auto'"):
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


# --------------------------------------------------------------------------------------------
# scale, ties, round-off and the interval


def test_pvalue_does_not_depend_on_the_units_of_the_scores():
    # Beyond exact reach (importance sampling): the same data in any units give the same p, and
    # never 0. Power-of-two units give bit-identical results, decimal ones agree to round-off.
    rng = np.random.default_rng(0)
    d = rng.normal(size=200) + 0.15
    base = pairperm.permutation_test(d, np.zeros(200), rng=1)
    assert base.engine == "saddlepoint_is" and 0.001 < base.pvalue < 0.1
    for scale in (2.0**-1000, 2.0**-600, 2.0**500, 2.0**1000):
        assert pairperm.permutation_test(d * scale, np.zeros(200), rng=1).pvalue == base.pvalue
    for scale in (1e-300, 1e-200, 1e154, 1e300):
        r = pairperm.permutation_test(d * scale, np.zeros(200), rng=1)
        assert math.isclose(r.pvalue, base.pvalue, rel_tol=1e-9), scale
        assert r.pvalue_ci[0] > 0 and math.isfinite(r.log_pvalue)


@pytest.mark.parametrize("n_resamples", (2, 3, 4, 5))
def test_few_resamples_never_give_zero(n_resamples):
    rng = np.random.default_rng(0)
    d = rng.normal(size=200) + 0.15
    for seed in range(40):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pairperm.PrecisionWarning)  # a bound, if no sample hit
            r = pairperm.permutation_test(d, np.zeros(200), rng=seed, n_resamples=n_resamples)
        assert r.pvalue > 0 and math.isfinite(r.log_pvalue)
        assert 0 < r.pvalue_ci[0] <= r.pvalue_ci[1] <= 1
        assert all(math.isfinite(v) for v in r.log_pvalue_ci)


def test_no_hit_reports_the_chernoff_bound_and_warns():
    # One round of two samples at p ~ 1e-60 cannot be guaranteed a hit; when none hits, the
    # core reports exp(K(theta) - theta b), an upper bound of the exact tail, and flags it.
    n, j = 400, 330
    stay = np.array([1.0] * j + [-1.0] * (n - j))
    exact = sum(math.comb(n, i) for i in range(j, n + 1)) / 2**n
    found = False
    for seed in range(200):
        d = _core.real_saddlepoint_is(stay, -stay, "greater", 0.0, 2, seed, 1, 1, 0.0)
        assert d["pvalue"] > 0
        if d["is_bound"]:
            found = True
            assert d["hits"] == 0 and d["pvalue"] >= exact
            assert d["ci"][0] <= exact <= d["ci"][1]
    assert found


def test_to_dict_is_valid_json():
    r = pairperm.permutation_test(np.arange(1.0, 7.0) + 0.5, np.zeros(6))
    json.dumps(r.to_dict(), allow_nan=False)
    odd = dataclasses.replace(r, pvalue=0.0, log_pvalue=-math.inf, pvalue_ci=(0.0, 0.0),
                              log_pvalue_ci=(-math.inf, -math.inf))
    out = json.loads(json.dumps(odd.to_dict(), allow_nan=False))
    assert out["log_pvalue"] is None and out["log_pvalue_ci"] == [None, None]


def test_tie_slack_is_round_off_not_a_fraction_of_the_scale():
    # One large entry and many tiny ones: the tiny ones are far above round-off, so the observed
    # pattern (all positive) is the only state at least as large: p = 2^-N exactly.
    for n in (40, 400):
        d = np.array([1000.0] + [1e-8] * (n - 1))
        r = pairperm.permutation_test(d, np.zeros(n), alternative="greater", rng=0)
        assert r.pvalue == pytest.approx(2.0**-n, rel=1e-12)
        assert r.log_pvalue == pytest.approx(-n * math.log(2), rel=1e-12)
        s = pairperm.structured_test(d, -d, alternative="greater", rng=0)
        assert s.pvalue == pytest.approx(2.0**-n, rel=1e-12)


@pytest.mark.parametrize("samples", [1, 2])
def test_near_tie_within_the_documented_slack_ties(samples):
    """Exact decimal scores with one state closer to the observed sum than the documented tie
    slack, (n + 4) eps sum over units of (j + 1)(sum |x| + sum |y|) (2 (n + 4) eps sum(|x| + |y|)
    for items), by more than round-off, but farther than that slack with j in place of j + 1:
    it ties, and the p-value is the exact brute force's with exactly that window."""
    from decimal import Decimal

    eps = Fraction(2) ** -52
    n, j = 8, samples
    x_text = ["0.6", "0.3", "0.71", "0.52", "0.44", "0.93", "0.27", "0.65"]
    y_rest = ["0.3", "0.64", "0.459", "0.317", "0.8117", "0.1937", "0.601"]
    extra = Fraction(1, 2)  # every further sample scores 0.5 for both systems: no difference

    def slack(x, y, factor):
        return (n + 4) * eps * sum(factor * (abs(a) + abs(b) + 2 * (j - 1) * extra) for a, b in zip(x, y))

    # Item 1's B score makes (x0 - y0) + (x1 - y1) = 0.3 + (0.3 - y1) half the aimed-for gap: flipping
    # items 0 and 1 then moves S below the observed sum by the gap, midway between the two slacks.
    x = [Fraction(Decimal(v)) for v in x_text]
    rough = [Fraction(Decimal(y_rest[0])), Fraction(6, 10), *(Fraction(Decimal(v)) for v in y_rest[1:])]
    aim = (slack(x, rough, j + 1) + slack(x, rough, j)) / 2
    y_text = [y_rest[0], f"{float(Fraction(6, 10) - aim / 2):.17g}", *y_rest[1:]]
    y = [Fraction(Decimal(v)) for v in y_text]
    gap = 2 * ((x[0] - y[0]) + (x[1] - y[1]))
    tol, tol_j = slack(x, y, j + 1), slack(x, y, j)
    # Round-off of the sums is a few ulps of ~1, far inside both margins.
    assert tol_j + (tol - tol_j) / 4 < gap < tol - (tol - tol_j) / 4
    stay = [(a - b) for a, b in zip(x, y)]
    observed = sum(stay)
    near = [s for s in (sum(c) for c in itertools.product(*[(v, -v) for v in stay])) if 0 < abs(s - observed) < 1e-9]
    assert near == [observed - gap]  # the one near tie, and it is the designed one

    xf, yf = np.array([float(v) for v in x]), np.array([float(v) for v in y])
    if samples > 1:
        xf = np.column_stack([xf] + [np.full(n, 0.5)] * (samples - 1))
        yf = np.column_stack([yf] + [np.full(n, 0.5)] * (samples - 1))
    for a, b, d in ((xf, yf, stay), (yf, xf, [-v for v in stay])):
        for alternative in ALTERNATIVES:
            want = fraction_pvalue(d, [-v for v in d], alternative, window=tol)
            got = pairperm.permutation_test(a, b, alternative=alternative)
            assert got.engine == "meet_in_the_middle"
            assert got.pvalue == float(want), (alternative, got.pvalue, want)
        # Where the near tie is on the rejected side, the narrower slack would count one state fewer.
        alternative = "greater" if d is stay else "less"
        assert fraction_pvalue(d, [-v for v in d], alternative, window=tol_j) == \
            fraction_pvalue(d, [-v for v in d], alternative, window=tol) - Fraction(1, 2**n)


def test_observed_state_always_counts_with_rtol_zero():
    d = np.array([1000.0] + [1e-6] * 39)
    r = real_sum_pvalue(d, -d, alternative="greater", rtol=0.0)
    assert r.method == "exact" and r.pvalue == 2.0**-40


def test_explicit_rtol_widens_the_ties():
    # rtol * sum(|stay| + |swap|) = 1e-6 * 2000 ~ 2e-3 covers every flip of the 1e-8 entries.
    d = np.array([1000.0] + [1e-8] * 19)
    assert pairperm.permutation_test(d, np.zeros(20), alternative="greater").pvalue == 2.0**-20
    assert pairperm.permutation_test(d, np.zeros(20), alternative="greater", rtol=1e-6).pvalue == 0.5


def test_overflowing_scores_raise_a_clear_error():
    with pytest.raises(ValueError, match=r"permutation_test: the statistic sum\(x\) - sum\(y\) overflows.*common factor"):
        pairperm.permutation_test([1e308, 1e308, 1.0], [0.0, 0.0, 0.5])
    with pytest.raises(ValueError, match=r"permutation_test: x\[0\] - y\[0\] = 1\.7e\+308 - -1\.7e\+308 overflows"):
        pairperm.permutation_test([1.7e308, 0.5], [-1.7e308, 0.0])
    with pytest.raises(ValueError, match=r"sum\(stay\) overflows"):
        pairperm.structured_test(np.array([1e308, 1e308, 0.5]), np.zeros(3))
    # Huge but summable local effects are fine: the core works in rescaled units.
    stay, swap = np.array([1.5e308, -1e308, 0.5e308]), np.array([-1.5e308, 1e308, 0.25e308])
    for alternative in ALTERNATIVES:
        r = pairperm.structured_test(stay, swap, alternative=alternative)
        assert r.pvalue == fraction_pvalue(stay, swap, alternative)


def test_exact_beyond_reach_recommends_a_public_method():
    d = np.random.default_rng(1).normal(size=REAL_MAX_EXACT + 1)
    with pytest.raises(ValueError, match=r"method='auto'") as info:
        pairperm.permutation_test(d, np.zeros_like(d), method="exact")
    assert "saddlepoint_is" not in str(info.value)


def test_log_interval_past_underflow():
    # Equal magnitudes: T / 2 is Binomial(n, 1/2), p = P[Bin >= j] below 1e-308, in exact integers.
    n, j = 2000, 1900
    stay = np.array([0.5] * j + [-0.5] * (n - j))  # not integers: the real-valued engine
    tail = sum(math.comb(n, i) for i in range(j, n + 1))
    log_truth = math.log(tail) - n * math.log(2)
    assert log_truth < math.log(1e-308)
    r = pairperm.permutation_test(stay, np.zeros(n), alternative="greater", rng=3)
    assert r.engine == "saddlepoint_is" and r.pvalue_ci == (0.0, 0.0)
    lo, hi = r.log_pvalue_ci
    assert lo < r.log_pvalue < hi and hi - lo < 0.2
    assert abs(r.log_pvalue - log_truth) < 0.1
    assert r.to_dict()["log_pvalue_ci"] == [lo, hi]


def test_sampling_memory_does_not_grow_with_n_resamples():
    # 3 * 10^7 resamples kept as doubles would be 240 MB; streamed, the peak stays flat.
    code = (
        "import resource, numpy as np\n"
        "from pairperm._realvalued import real_sum_pvalue\n"
        "d = np.array([1.0, 2.0, 3.0] * 20)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "for method in ('saddlepoint_is', 'monte_carlo'):\n"
        "    real_sum_pvalue(d, -d, alternative='greater', method=method, n_resamples=30_000_000, seed=1)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    grown_kib = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert grown_kib < 64 * 1024


# Coverage of the importance-sampling 95% interval against exact p-values. Over R independent
# seeds the number of misses is Binomial(R, 1 - c) for true coverage c; the interval aims at
# c = 95.5% (bench/real_valued_coverage.py measures 95.2-95.9% on these shapes). With R = 1500
# per shape, pooled R = 3000: a true coverage of 95.5% gives at most 168 misses with probability
# 99% (mean 135, sd 11.4), while the former normal interval's 94.0-94.5% would give 165-180
# (mean). The seeds are fixed, so the test is deterministic.


def test_importance_sampling_interval_covers_at_least_95_percent():
    rng = np.random.default_rng(12)
    cont = rng.random(36) - rng.random(36) + 0.4
    shapes = [
        (np.array([1.0] * 150 + [-1.0] * 50), sum(math.comb(200, i) for i in range(150, 201)) / 2**200, 2000),
        (cont, real_sum_pvalue(cont, -cont, alternative="greater", method="exact").pvalue, 1000),
    ]
    misses = 0
    for stay, truth, k in shapes:
        for seed in range(1500):
            r = real_sum_pvalue(stay, -stay, alternative="greater", method="saddlepoint_is", n_resamples=k, seed=seed)
            misses += not r.pvalue_ci[0] <= truth <= r.pvalue_ci[1]
    assert misses <= 168


# --------------------------------------------------------------------------------------------
# properties: floats against exact rational brute force over all 2^n patterns

GRID_SCALES = (1.0, 0.1, 0.37, 1e-200, 3.7e150, 2.0**-600)
small_ints = st.integers(-20, 20)


@given(st.lists(st.tuples(small_ints, small_ints), min_size=1, max_size=12), st.sampled_from(GRID_SCALES),
       st.sampled_from(ALTERNATIVES))
def test_grid_scores_in_any_units_match_exact_brute_force(pairs, scale, alternative):
    # Scores m * scale for integers m: ties are frequent and, for a decimal scale, hold only in
    # exact arithmetic on the intended values m * scale. The truth is the integers' brute force.
    mx = np.array([a for a, _ in pairs])
    my = np.array([b for _, b in pairs])
    x, y = mx * scale, my * scale
    want = float(fraction_pvalue(mx - my, my - mx, alternative))
    assert pairperm.permutation_test(x, y, alternative=alternative).pvalue == want
    want_structured = float(fraction_pvalue(mx, my, alternative))
    assert pairperm.structured_test(x, y, alternative=alternative).pvalue == want_structured


finite_floats = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@given(st.lists(st.tuples(finite_floats, finite_floats), min_size=1, max_size=12),
       st.sampled_from((1.0, 1e-250, 1e250)), st.sampled_from(ALTERNATIVES))
def test_float_scores_match_exact_brute_force(pairs, scale, alternative):
    # The truth in exact rationals of the floats themselves. States closer to the observed value
    # than twice the documented round-off slack (but not equal) are ambiguous by design and
    # skipped; everything else must agree exactly.
    x = np.array([a for a, _ in pairs]) * scale
    y = np.array([b for _, b in pairs]) * scale
    assume(np.isfinite(x - y).all() and np.isfinite(np.abs(x - y).sum()))
    eps = np.finfo(float).eps
    tol = Fraction((len(x) + 4) * eps * float(2 * (np.abs(x).sum() + np.abs(y).sum())))
    exact_stay = [Fraction(float(a)) - Fraction(float(b)) for a, b in zip(x, y)]
    want = fraction_pvalue(exact_stay, [-v for v in exact_stay], alternative)
    assume(want == fraction_pvalue(exact_stay, [-v for v in exact_stay], alternative, window=2 * tol))
    assert pairperm.permutation_test(x, y, alternative=alternative).pvalue == float(want)
    want_structured = fraction_pvalue(x, y, alternative)
    tol_structured = Fraction((len(x) + 4) * eps * float(np.abs(x).sum() + np.abs(y).sum()))
    assume(want_structured == fraction_pvalue(x, y, alternative, window=2 * tol_structured))
    assert pairperm.structured_test(x, y, alternative=alternative).pvalue == float(want_structured)


# --------------------------------------------------------------------------------------------
# decimal scores: ties that hold in exact decimal arithmetic on the scores themselves


def decimal_pvalue(x_text, y_text, alternative: str) -> Fraction:
    """Exact p-value over all 2^n patterns on the decimal values the scores were written as."""
    from decimal import Decimal

    x = [Fraction(Decimal(v)) for v in x_text]
    y = [Fraction(Decimal(v)) for v in y_text]
    return fraction_pvalue([a - b for a, b in zip(x, y)], [b - a for a, b in zip(x, y)], alternative)


def decimal_scores(rng, n: int, digits: int, spread: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer scores in units of 10^-digits on a 0-100 scale, B close to A (many exact ties)."""
    unit = 10**digits
    xi = rng.integers(30 * unit, 70 * unit, n)
    yi = np.clip(xi + rng.integers(-spread, spread + 1, n), 0, 100 * unit)
    return xi, yi


def as_text(ints: np.ndarray, digits: int) -> list:
    return [f"{v / 10**digits:.{digits}f}" for v in ints.tolist()]


def test_decimal_scores_tie_as_written():
    # 54.7 - 54.6 = 0.10000000000000142 and 67.2 - 67.3 = -0.09999999999999432: the
    # differences land on a coarse binary grid by cancellation, while the scores do not. Every
    # one of the 8 patterns has |S| >= |T| = 0.1.
    x_text, y_text = ["54.7", "47.6", "67.2"], ["54.6", "47.5", "67.3"]
    x, y = [float(v) for v in x_text], [float(v) for v in y_text]
    want = float(decimal_pvalue(x_text, y_text, "two-sided"))
    assert want == pairperm.permutation_test([547, 476, 672], [546, 475, 673]).pvalue
    assert pairperm.permutation_test(x, y).pvalue == want
    assert pairperm.compare(x, y, "chrf").pvalue == want
    assert pairperm.compare(x, y, "mean").pvalue == want
    assert pairperm.compare_systems({"A": x, "B": y}, "chrf").rows[0].pvalue == want


@pytest.mark.parametrize("digits", (1, 2))
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_decimal_scores_match_exact_decimal_brute_force(digits, alternative):
    # Sentence-level scores on a 0-100 scale with one or two decimals: the truth in exact
    # decimal arithmetic, and the same p-value from the integer engine on the scaled scores.
    rng = np.random.default_rng(40 + digits)
    for trial in range(30):
        n = int(rng.integers(2, 13))
        xi, yi = decimal_scores(rng, n, digits, spread=3)
        x_text, y_text = as_text(xi, digits), as_text(yi, digits)
        x, y = np.array(x_text, dtype=float), np.array(y_text, dtype=float)
        want = decimal_pvalue(x_text, y_text, alternative)
        assert pairperm.permutation_test(xi, yi, alternative=alternative).pvalue == float(want)
        got = pairperm.permutation_test(x, y, alternative=alternative)
        assert got.engine == "meet_in_the_middle"
        assert got.pvalue == float(want), (trial, x_text, y_text)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_decimal_scores_tie_identically_in_every_route(alternative):
    # Sampling routes on n = 60 one-decimal scores: the same scores in eighths (a binary grid,
    # exact in floating point) have the same ordering of all 2^60 states, so with the same seed
    # plain Monte Carlo counts the same hits and importance sampling estimates the same p-value.
    rng = np.random.default_rng(3)
    xi, yi = decimal_scores(rng, 60, 1, spread=2)
    for method in ("monte_carlo", "auto"):
        dec = pairperm.permutation_test(xi / 10, yi / 10, alternative=alternative, method=method, rng=5,
                                        n_resamples=4000)
        grid = pairperm.permutation_test(xi / 8, yi / 8, alternative=alternative, method=method, rng=5,
                                         n_resamples=4000)
        assert dec.engine == grid.engine == ("monte_carlo" if method == "monte_carlo" else "saddlepoint_is")
        if method == "monte_carlo":
            assert dec.hits == grid.hits
        assert dec.pvalue == pytest.approx(grid.pvalue, rel=1e-9)


def test_decimal_scores_far_from_zero_tie():
    # The round-off of reading 1000.1 is relative to 1000, not to the difference 0.1.
    x = [1000.1, 2000.2, 500.3, 750.4]
    y = [1000.0, 2000.3, 500.2, 750.5]
    for alternative in ALTERNATIVES:
        want = decimal_pvalue([repr(v) for v in x], [repr(v) for v in y], alternative)
        assert pairperm.permutation_test(x, y, alternative=alternative).pvalue == float(want)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_decimal_unit_sums_tie_as_written(alternative):
    # Units (groups=) and (N, k) samples: the scores are summed per unit before differencing,
    # and those sums round relative to the scores summed. Truth: the integer engine on the
    # scores in hundredths, summed per unit in exact integers.
    rng = np.random.default_rng(11)
    for trial in range(20):
        n_units, per_unit = int(rng.integers(3, 11)), int(rng.integers(2, 5))
        n = n_units * per_unit
        xi, yi = decimal_scores(rng, n, 2, spread=4)
        labels = rng.permutation(np.repeat(np.arange(n_units), per_unit))
        want = pairperm.permutation_test(xi, yi, alternative=alternative, groups=labels).pvalue
        got = pairperm.permutation_test(xi / 100, yi / 100, alternative=alternative, groups=labels)
        assert got.pvalue == want, trial
        order = np.argsort(labels, kind="stable")
        xs, ys = (xi[order] / 100).reshape(n_units, per_unit), (yi[order] / 100).reshape(n_units, per_unit)
        want_samples = pairperm.permutation_test(xi[order].reshape(n_units, per_unit),
                                                 yi[order].reshape(n_units, per_unit), alternative=alternative)
        assert pairperm.permutation_test(xs, ys, alternative=alternative).pvalue == want_samples.pvalue, trial


def test_unit_sum_tie_of_decimal_sums():
    # A unit of 30.1 and 20.3 against 50.4: equal in exact arithmetic, while 30.1 + 20.3 =
    # 50.400000000000006 in binary; the other units differ by 0.1 and 0.2 exactly. The truth
    # is the integer engine on tenths.
    assert 30.1 + 20.3 != 50.4
    g = [0, 0, 1, 2, 3]
    x, y = [30.1, 20.3, 54.7, 47.6, 67.2], [50.4, 0.0, 54.6, 47.4, 67.3]
    xi, yi = [301, 203, 547, 476, 672], [504, 0, 546, 474, 673]
    for alternative in ALTERNATIVES:
        want = pairperm.permutation_test(xi, yi, groups=g, alternative=alternative).pvalue
        assert pairperm.permutation_test(x, y, groups=g, alternative=alternative).pvalue == want
        # The same unit as one item's two samples.
        xs, ys = [[30.1, 20.3], [54.7, 0.0]], [[50.4, 0.0], [54.6, 0.0]]
        want = pairperm.permutation_test([[301, 203], [547, 0]], [[504, 0], [546, 0]], alternative=alternative)
        assert pairperm.permutation_test(xs, ys, alternative=alternative).pvalue == want.pvalue
        # Cancellation inside a unit: 1000.1 - 1000.0 = 0.10000000000002274, off by the round-off
        # of 1000.1, not of 0.1; against 0.1 it is a zero difference.
        want = pairperm.permutation_test([10001, -10000, 5, 3], [1, 0, 4, 5], groups=[0, 0, 1, 2],
                                         alternative=alternative).pvalue
        got = pairperm.permutation_test([1000.1, -1000.0, 0.5, 0.3], [0.1, 0.0, 0.4, 0.5], groups=[0, 0, 1, 2],
                                        alternative=alternative).pvalue
        assert got == want


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_binary_grid_scores_are_compared_exactly(alternative):
    # Scores on a 2^-8 grid near 2^37: every sum is exact, so states 2^-8 apart are told apart
    # (a round-off slack relative to the scores, ~0.02 here, would merge them). Same p-value as
    # the integer engine on the scores times 2^8.
    rng = np.random.default_rng(8)
    for _ in range(10):
        n = 12
        base = rng.integers(2**44, 2**45, n)
        xi, yi = base + rng.integers(0, 4, n), base + rng.integers(0, 4, n)
        want = pairperm.permutation_test(xi, yi, alternative=alternative).pvalue
        assert pairperm.permutation_test(xi / 256.0, yi / 256.0, alternative=alternative).pvalue == want
        # Halves and quarters, and floats such as 0.5 / 0.75.
        hi, yq = rng.integers(0, 40, n), rng.integers(0, 40, n)
        want = pairperm.permutation_test(hi, yq, alternative=alternative).pvalue
        assert pairperm.permutation_test(hi / 4.0, yq / 4.0, alternative=alternative).pvalue == want


def _grid_by_fractions(values):
    """The largest e with every nonzero value a multiple of 2^e, in exact rational arithmetic."""
    grid = None
    for v in (Fraction(float(a)) for a in np.ravel(values) if a != 0):
        # v = p / 2^q, p odd, or p 2^q: the exponent of the lowest set bit.
        e = (v.numerator & -v.numerator).bit_length() - 1 - (v.denominator.bit_length() - 1)
        grid = e if grid is None else min(grid, e)
    return grid


@pytest.mark.parametrize("values", [
    [0.5, 0.25, 3.0], [0.1], [2.0**60, 2.0**61, 0.0], [5e-324, 3.0], [1e-310, -2.5],
    [[1, 2], [4, 8]], list(np.random.default_rng(3).normal(size=50)), [-(2.0**-1000), 2.0**900], [],
    np.array([2**53 + 1, 3 * 2**40], dtype=np.int64),  # read as the doubles the scores become
])
def test_grid_exponent_matches_exact_rationals(values):
    none = 1 << 20
    want = _grid_by_fractions(np.asarray(values, dtype=np.float64))
    assert _core.grid_exponent(np.asarray(values), none) == (none if want is None else want)
    assert _core.grid_exponent(np.zeros(3), none) == none
