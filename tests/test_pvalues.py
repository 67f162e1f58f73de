"""p-values of every method against exact integer arithmetic, including the
grouped engine's tilted tails far below the float64 range."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairperm
from marks import quick_first
from pairperm import _core, _runner
from pairperm._statistics import RatioStatistic
from reference import (
    ALTERNATIVES,
    binomial_two_sided,
    brute_force_pvalue,
    exact_counts,
    exact_pvalue,
    exact_pvalue_sparse,
    log_fraction,
    paired,
    rel_err,
)
from synthetic import misaligned, scores, separated_f1_data


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("n,shift", [(1, 0.0), (9, 0.1), (13, 0.0)])
def test_all_methods_match_brute_force_small(alternative, n, shift):
    rng = np.random.default_rng(n)
    x, y = scores(rng, n, shift)
    exact = exact_pvalue(*paired(x, y), alternative)
    for method in ("auto", "dp"):
        r = pairperm.permutation_test(x, y, alternative=alternative, method=method)
        assert rel_err(r.pvalue, exact) <= 1e-12
    r = pairperm.permutation_test(x, y, alternative=alternative, method="fft")
    assert abs(r.pvalue - float(exact)) <= 1e-12


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("n,shift,seed", [(200, 0.0, 1), (400, 0.03, 2), (800, 0.06, 3)])
def test_all_methods_match_exact_arithmetic_hundreds(alternative, n, shift, seed):
    rng = np.random.default_rng(seed)
    x, y = scores(rng, n, shift)
    exact = exact_pvalue(*paired(x, y), alternative)
    auto = pairperm.permutation_test(x, y, alternative=alternative)
    assert auto.method == "auto"
    assert rel_err(auto.pvalue, exact) <= 1e-9
    assert abs(auto.log_pvalue - log_fraction(exact)) <= 1e-9
    dp = pairperm.permutation_test(x, y, alternative=alternative, method="dp")
    assert rel_err(dp.pvalue, exact) <= 1e-12
    fft = pairperm.permutation_test(x, y, alternative=alternative, method="fft")
    assert abs(fft.pvalue - float(exact)) <= 1e-12
    assert auto.statistic == int(x.sum() - y.sum())


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("n,shift,seed", quick_first([(1500, 0.08, 11), (3000, 0.08, 12)]))
def test_tilted_tails_match_exact_arithmetic_down_to_1e_150(alternative, n, shift, seed):
    rng = np.random.default_rng(seed)
    x, y = scores(rng, n, shift)
    exact = exact_pvalue(*paired(x, y), alternative)
    r = pairperm.permutation_test(x, y, alternative=alternative)
    if exact >= Fraction(1, 10**300):
        assert rel_err(r.pvalue, exact) <= 1e-9
    assert abs(r.log_pvalue - log_fraction(exact)) <= 1e-9 * max(1.0, abs(log_fraction(exact)))


def test_reaches_p_below_1e_150():
    # Guard that the case above really exercises deep tails.
    rng = np.random.default_rng(12)
    x, y = scores(rng, 3000, 0.08)
    assert 1e-300 < pairperm.permutation_test(x, y).pvalue < 1e-150


def test_general_structured_sums_with_nonzero_mean():
    # stay != -swap: the two-sided region is about mu = sum(stay + swap) / 2, possibly half-integer.
    rng = np.random.default_rng(5)
    for n in (300, 1200):
        stay = rng.integers(-3, 9, n)
        swap = rng.integers(-6, 4, n)
        s = _core.summarize(stay, swap)
        for alt in ALTERNATIVES:
            exact = exact_pvalue(stay, swap, alt)
            p, log_p = _core.grouped_pvalue(s, alt)
            assert rel_err(p, exact) <= 1e-9 or (exact < Fraction(1, 10**300))
            assert abs(log_p - log_fraction(exact)) <= 1e-9 * max(1.0, abs(log_fraction(exact)))
            dist = pairperm.convolve_dp(stay, swap)
            p_dp, _ = _core.pvalue_from_distribution(dist.offset, dist.pmf, s.observed, s.twice_mean, alt)
            assert rel_err(p_dp, exact) <= 1e-12


def test_log_pvalue_where_pvalue_underflows():
    # Every entry favours A by 1: T = N is the largest value of S, p = 2^-N exactly (greater).
    for n in (1100, 1600, 5000):
        x = np.ones(n, dtype=np.int64)
        y = np.zeros(n, dtype=np.int64)
        r = pairperm.permutation_test(x, y, alternative="greater")
        assert abs(r.log_pvalue - (-n * math.log(2))) <= 1e-9 * n
        assert r.pvalue == pytest.approx(2.0**-n, rel=1e-9, abs=0)


def test_log_pvalue_for_p_near_1e_minus_480():
    # Not at the edge of the support: exact arithmetic on a p-value around 1e-480.
    rng = np.random.default_rng(21)
    n = 3000
    x, y = scores(rng, n, 0.0)
    y = np.where(rng.random(n) < 0.7, np.maximum(0, x - 3), y)
    exact = exact_pvalue(*paired(x, y), "greater")
    log_exact = log_fraction(exact)
    assert -1250 < log_exact < -1000  # p between ~1e-540 and ~1e-435
    r = pairperm.permutation_test(x, y, alternative="greater")
    assert r.pvalue == 0.0
    assert abs(r.log_pvalue - log_exact) <= 1e-9 * abs(log_exact)


@pytest.mark.parametrize("seed", range(6))
def test_binary_scores_equal_exact_mcnemar(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 3000))
    a = (rng.random(n) < 0.8).astype(np.int64)
    b = (rng.random(n) < 0.78).astype(np.int64)
    n10 = int(np.sum((a == 1) & (b == 0)))
    n01 = int(np.sum((a == 0) & (b == 1)))
    exact = binomial_two_sided(n10, n01)
    for method in ("auto", "dp"):
        r = pairperm.permutation_test(a, b, method=method)
        assert rel_err(r.pvalue, exact) <= 1e-9
    scipy_stats = pytest.importorskip("scipy.stats")
    ref = scipy_stats.binomtest(n10, n10 + n01, 0.5).pvalue if n10 + n01 else 1.0
    assert pairperm.permutation_test(a, b).pvalue == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("method", ("auto", "dp", "fft", "monte_carlo"))
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_no_entries_or_all_ties_give_p_one(method, alternative):
    for x, y in (([], []), ([3, 1, 4], [3, 1, 4])):
        r = pairperm.permutation_test(x, y, alternative=alternative, method=method, n_resamples=50, rng=0)
        if method == "monte_carlo":
            assert r.pvalue == 1.0  # every resample ties the observed value
        else:
            assert r.pvalue == 1.0 and r.log_pvalue == 0.0


# --- properties ------------------------------------------------------------------

pairs = st.integers(1, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(-6, 6), min_size=n, max_size=n),
        st.lists(st.integers(-6, 6), min_size=n, max_size=n),
    )
)


@settings(max_examples=60, deadline=None)
@given(pairs, st.integers(-1000, 1000))
def test_properties_symmetry_and_invariance(xy, c):
    x, y = map(np.array, xy)
    two = pairperm.permutation_test(x, y)
    assert pairperm.permutation_test(y, x).pvalue == pytest.approx(two.pvalue, rel=1e-12)
    assert pairperm.permutation_test(x + c, y + c).pvalue == pytest.approx(two.pvalue, rel=1e-12)
    g = pairperm.permutation_test(x, y, alternative="greater")
    l_rev = pairperm.permutation_test(y, x, alternative="less")
    assert g.pvalue == pytest.approx(l_rev.pvalue, rel=1e-12)
    dp = pairperm.permutation_test(x, y, method="dp")
    assert dp.pvalue == pytest.approx(two.pvalue, rel=1e-10)
    assert 0.0 < two.pvalue <= 1.0


def test_null_distribution_is_attached_and_consistent():
    rng = np.random.default_rng(9)
    x, y = scores(rng, 500, 0.01)
    r = pairperm.permutation_test(x, y)
    d = r.null_distribution
    assert d is r.null_distribution  # computed once
    mask = np.abs(d.support) >= abs(r.statistic)
    assert d.pmf[mask].sum() == pytest.approx(r.pvalue, rel=1e-9)
    assert pairperm.permutation_test(x, y, method="dp").null_distribution.method == "dp"
    assert "pvalue=" in repr(r) and "statistic=" in repr(r)


@pytest.mark.parametrize("test", ["permutation", "structured"])
def test_fft_method_never_returns_round_off_below_its_floor(test):
    # A p-value near 1e-15: the FFT tree's absolute round-off (~1e-16 of the peak) would be
    # returned as is without the guard (about 1.5 relative error here).
    rng = np.random.default_rng(3)
    x = rng.integers(0, 6, 120)
    y = np.maximum(x - rng.integers(0, 3, 120), 0)
    d = x - y
    exact = exact_pvalue(d, -d, "two-sided")
    assert 1e-30 < exact < 1e-12
    r = pairperm.permutation_test(x, y, method="fft") if test == "permutation" else pairperm.structured_test(d, -d, method="fft")
    if r.pvalue_is_bound:
        assert r.pvalue >= exact
    else:
        assert rel_err(r.pvalue, exact) <= 1e-9
        assert r.engine == "dp"


def test_widely_spread_integers_are_exact_by_meet_in_the_middle():
    # One huge difference makes the grouped engine's window infeasible and 23 varying entries
    # are too many to list: the sum goes to the meet-in-the-middle enumeration, still exact.
    rng = np.random.default_rng(8)
    d = np.concatenate(([30_000_000], rng.integers(1, 9, 22))) * np.where(rng.random(23) < 0.5, -1, 1)
    d[0] = 30_000_000
    states = np.zeros(1, dtype=np.int64)
    for k in np.abs(d):
        states = np.concatenate((states - k, states + k))
    for alternative, hits in (("greater", np.count_nonzero(states >= d.sum())),
                              ("two-sided", np.count_nonzero(np.abs(states) >= abs(d.sum())))):
        r = pairperm.permutation_test(d, np.zeros_like(d), alternative=alternative)
        assert r.engine == "meet_in_the_middle"
        assert r.pvalue == hits / 2**23


def test_spread_out_integer_scores_take_the_sampling_route_not_minutes():
    # Scores in [0, 50000): the grouped engine would need a window of ~10^7 entries per group
    # (10 s, GBs); auto estimates the tail with a relative error bar instead.
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 50_000, 500), rng.integers(0, 50_000, 500)
    r = pairperm.permutation_test(x, y, rng=0)
    assert r.engine == "saddlepoint_is" and r.statistic == int(x.sum() - y.sum())
    mc = pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=20_000, rng=0)
    lo, hi = r.pvalue_ci
    assert lo <= r.pvalue <= hi and lo <= mc.pvalue_ci[1] and mc.pvalue_ci[0] <= hi
    with pytest.raises(pairperm.SupportTooLargeError):
        pairperm.permutation_test(x, y, method="exact")


def test_huge_spread_finishes_quickly_in_a_subprocess(tmp_path):
    import subprocess

    from child import python_command

    code = ("import numpy as np, pairperm; rng = np.random.default_rng(0); "
            "x, y = rng.integers(-10**5, 10**5, (2, 10**4)); print(pairperm.permutation_test(x, y, rng=0).engine)")
    out = subprocess.run(python_command(code), capture_output=True, text=True, timeout=60, check=True, cwd=tmp_path)
    assert out.stdout.strip() == "saddlepoint_is"


def test_unaffordable_exact_fallback_reports_a_flagged_upper_bound(monkeypatch):
    a, b = separated_f1_data()
    exact = pairperm.f1_test(a, b, method="dp").pvalue
    limits = _core.PlanLimits()
    limits.dp_budget = 0.0
    monkeypatch.setattr(_runner, "LIMITS", limits)
    # F1's own route (tilted tails) never needs the bound; take the distribution route.
    monkeypatch.setattr(RatioStatistic, "kind", "distribution")
    with pytest.warns(pairperm.PrecisionWarning, match="upper bound|p <="):
        r = pairperm.f1_test(a, b)
    assert r.pvalue_is_bound and r.pvalue == _runner.FFT_NOISE_FLOOR >= exact
    assert "pvalue_is_bound=True" in repr(r)


def test_huge_unrelated_effects_fall_back_to_exact_enumeration():
    x = [10**15, 3 * 10**14 + 1, -7 * 10**13 + 3, 5]
    y = [0, 0, 0, 2]
    d = [a - b for a, b in zip(x, y)]
    for alt in ("two-sided", "greater", "less"):
        r = pairperm.permutation_test(x, y, alternative=alt)
        assert r.pvalue == float(brute_force_pvalue(d, [-v for v in d], alt))
        s = pairperm.structured_test(d, [1 - v for v in d], alternative=alt)
        assert s.pvalue == float(brute_force_pvalue(d, [1 - v for v in d], alt))
    # Too many varying entries for a listing, and differences beyond float64's exact integers
    # for the meet in the middle: the core conditions on the two huge entries.
    xb, yb = [2**55, 3 * 2**53 + 1] + [1] * 30, [0, 0] + [2] * 30
    db = [a - b for a, b in zip(xb, yb)]
    for alt in ("two-sided", "greater", "less"):
        ref = exact_pvalue_sparse(db, [-v for v in db], alt)
        assert rel_err(pairperm.permutation_test(xb, yb, alternative=alt).pvalue, ref) <= 1e-12


@pytest.mark.parametrize("shift", quick_first([0, 300, 1000, 2000, 2500]))
def test_grouped_tail_with_large_groups_and_wide_steps_matches_exact_arithmetic(shift):
    # Thousands of entries in a few groups (magnitudes near 1 at low frequencies, where the
    # characteristic function must not lose digits) next to steps up to 37 whose phases
    # j k' wrap around the transform length many times; observed values from the centre to
    # p ~ 1e-218.
    rng = np.random.default_rng(97)
    k = np.concatenate([np.full(1500, 1), np.full(700, 2), np.full(300, 3), rng.integers(4, 38, 60)])
    signs = np.where(rng.random(k.size) < 0.5, 1, -1)
    signs[: shift] = 1
    stay, swap = signs * k, -signs * k
    s = _core.summarize(stay, swap)
    for alt in ALTERNATIVES:
        exact = exact_pvalue(stay, swap, alt)
        p, log_p = _core.grouped_pvalue(s, alt)
        assert rel_err(p, exact) <= 1e-10
        assert abs(log_p - log_fraction(exact)) <= 1e-10 * max(1.0, abs(log_fraction(exact)))


@pytest.mark.parametrize("shift", [0, 120, 250, 400])
def test_grouped_tail_with_groups_of_every_size_matches_exact_arithmetic(shift):
    # Groups of a few entries to a few hundred: the small ones' factors are multiplied out by
    # squaring, the larger ones' taken through log |z| and arg z (both sides of the switch,
    # 64 and 65 entries, included); one-sided p from ~1e-2 to ~1e-14.
    counts = [300, 150, 65, 64, 63, 40, 20, 9, 8, 5, 2, 1]
    k = np.concatenate([np.full(c, step) for step, c in enumerate(counts, start=1)])
    signs = np.where(np.random.default_rng(5).random(k.size) < 0.5, 1, -1)
    signs[:shift] = 1
    stay, swap = signs * k, -signs * k
    s = _core.summarize(stay, swap)
    assert sorted(c for _, c in s.groups) == sorted(counts)
    for alt in ALTERNATIVES:
        exact = exact_pvalue(stay, swap, alt)
        p, log_p = _core.grouped_pvalue(s, alt)
        assert rel_err(p, exact) <= 1e-10
        assert abs(log_p - log_fraction(exact)) <= 1e-10 * max(1.0, abs(log_fraction(exact)))


def test_grouped_tail_from_the_centre_to_1e_300_matches_exact_arithmetic():
    # Counts falling off with the step, as tagging or matching errors do; the observed sum
    # walks from the centre (p ~ 1) to p ~ 1e-360. Past p ~ 1e-2 the tilted tail's period
    # starts at the observed value instead of straddling the tilted mean, and there it is
    # about half as long; both placements are held to the documented accuracy.
    counts = [600, 300, 150, 75, 40, 20, 10, 6, 4, 2, 1, 1, 1]
    k = np.concatenate([np.full(c, step) for step, c in enumerate(counts, start=1)])
    offset, n_at, n = exact_counts(k, -k)
    at_least = list(itertools.accumulate(reversed(n_at)))[::-1] + [0]
    signs = np.where(np.random.default_rng(3).random(k.size) < 0.5, 1, -1)
    deepest = Fraction(1)
    for shift in range(0, k.size + 1, 11):
        signs[:shift] = 1
        stay = signs * k
        s = _core.summarize(stay, -stay)
        t = int(stay.sum())
        # S is symmetric about 0 here: P[S <= -t] = P[S >= t].
        upper = Fraction(at_least[t - offset], 2**n)
        mirrored = Fraction(at_least[-t - offset], 2**n) if -t - offset >= 0 else Fraction(1)
        refs = {"greater": upper, "less": Fraction(1) - upper + Fraction(n_at[t - offset], 2**n),
                "two-sided": min(Fraction(1), 2 * (upper if t >= 0 else mirrored))}
        for alt, exact in refs.items():
            p, log_p = _core.grouped_pvalue(s, alt)
            if exact >= Fraction(1, 10**300):
                assert rel_err(p, exact) <= 1e-12, (shift, alt)
            assert abs(log_p - log_fraction(exact)) <= 1e-12 * max(1.0, abs(log_fraction(exact))), (shift, alt)
        deepest = min(deepest, upper)
    assert deepest < Fraction(1, 10**300)


def test_up_to_53_varying_entries_the_pvalue_is_the_exact_fraction():
    # Few distinct differences among few entries: the p-value is the count of patterns over
    # 2^n itself, not within a few ulp of it (a tail of exactly 1/2 read 0.5000000000000003).
    x, y = [1] * 14 + [0] * 21, [0] * 14 + [1] * 13 + [0] * 8
    assert pairperm.permutation_test(x, y, alternative="greater").pvalue == 0.5
    rng = np.random.default_rng(1)
    for _ in range(100):
        n = int(rng.integers(1, 54))
        d = rng.integers(0, 4, n) * int(rng.integers(1, 5)) * np.where(rng.random(n) < rng.random(), 1, -1)
        zeros = np.zeros(n, dtype=np.int64)
        for alt in ALTERNATIVES:
            r = pairperm.permutation_test(d, zeros, alternative=alt)
            assert Fraction(r.pvalue) == exact_pvalue(d, zeros, alt), (d.tolist(), alt)


def _binomial_upper_tail(n: int, b: int) -> Fraction:
    """P[Bin(n, 1/2) >= b] in exact integers, summed until the terms are below 1e-30 of the sum."""
    c, s, k = math.comb(n, b), 0, b
    while k <= n and (s == 0 or c * 10**30 > s):
        s += c
        c = c * (n - k) // (k + 1)
        k += 1
    return Fraction(s, 2**n)


@pytest.mark.parametrize("b", [100_262, 100_693])
def test_grouped_tail_keeps_its_accuracy_for_a_group_of_many_entries(b):
    # log((1 + e^a) / 2) was formed as a + log1p(e^-a) - log 2, exact only to ~1e-16 absolute
    # for a small tilt a: 2 x 10^5 entries of one group made that a relative error of ~2e-11
    # in p (and 1e-9 at N = 10^7).
    n = 200_000
    x = np.zeros(n, dtype=np.int64)
    x[:b] = 1
    r = pairperm.permutation_test(x, 1 - x, alternative="greater")
    assert r.engine == "grouped"
    assert rel_err(r.pvalue, _binomial_upper_tail(n, b)) < 1e-12


def test_fft_pvalues_near_its_round_off_are_recomputed_or_flagged():
    # Summed from the FFT tree's pmf, a tail of 1.16e-12 at N = 8,000 came back 0.2% off and
    # unflagged: its absolute round-off (~2e-15 there) is not below 1e-12 of anything.
    n, b = 8000, 4314
    x = np.zeros(n, dtype=np.int64)
    x[:b] = 1
    exact = _binomial_upper_tail(n, b)
    r = pairperm.permutation_test(x, 1 - x, alternative="greater", method="fft")
    assert r.pvalue_is_bound or rel_err(r.pvalue, exact) < 1e-10
    assert r.pvalue_is_bound or r.engine == "dp"


# Two int64 vectors with the default arguments take one call of the core (summary, planner and
# engine together); every other form of the same scores takes the general route.

def _int64_route_cases():
    rng = np.random.default_rng(21)
    yield "grouped tail", *scores(rng, 3000, 0.02)
    yield "small, DP", np.array([12, 7, 30, 9, 15, 22]), np.array([11, 7, 27, 9, 13, 22])
    yield "all ties", np.arange(50), np.arange(50)
    yield "empty", np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    yield "binary", (rng.random(5000) < 0.7).astype(np.int64), (rng.random(5000) < 0.68).astype(np.int64)
    # Differences spread over ~10^12: the planner hands these to the enumeration route.
    wide = rng.integers(-10**12, 10**12, 18)
    yield "enumerated", wide, np.zeros(18, dtype=np.int64)
    yield "deep tail", *scores(rng, 20_000, 0.2)


@pytest.mark.parametrize("case", list(_int64_route_cases()), ids=lambda c: c[0])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("method", ["auto", "exact"])
def test_int64_vectors_give_the_general_routes_result(case, alternative, method):
    import pickle

    _, x, y = case
    x, y = np.ascontiguousarray(x, dtype=np.int64), np.ascontiguousarray(y, dtype=np.int64)
    fast = pairperm.permutation_test(x, y, alternative=alternative, method=method)
    general = pairperm.permutation_test(x.tolist(), y.tolist(), alternative=alternative, method=method)
    assert fast.to_dict() == general.to_dict()
    assert repr(fast) == repr(general)
    back = pickle.loads(pickle.dumps(fast))
    assert back.to_dict() == fast.to_dict()
    if not len(x):
        return
    assert fast.confidence_interval(0.9) == general.confidence_interval(0.9) == back.confidence_interval(0.9)
    if fast.engine in ("dp", "grouped"):
        for r in (fast, back):
            d, e = r.null_distribution, general.null_distribution
            assert (d.offset, d.method, d.truncated_mass) == (e.offset, e.method, e.truncated_mass)
            np.testing.assert_array_equal(d.pmf, e.pmf)


def test_arrays_the_core_cannot_read_in_place_take_the_general_route():
    rng = np.random.default_rng(8)
    x, y = (np.ascontiguousarray(v, dtype=np.int64) for v in scores(rng, 2000, 0.05))
    core = lambda a, b: _core.paired_sum_pvalue(a, b, "two-sided", "auto", _runner.LIMITS, 10_000, 0, None)  # noqa: E731
    assert core(x, y) is not None
    declined = {
        "big-endian": (x.astype(">i8"), y.astype(">i8")),
        "strided": (np.repeat(x, 2)[::2], np.repeat(y, 2)[::2]),
        "int32": (x.astype(np.int32), y.astype(np.int32)),
        "integral floats": (x.astype(float), y.astype(float)),
        "k samples per item": (x.reshape(400, 5), y.reshape(400, 5)),
        "a list": (x.tolist(), y),
        "misaligned": (misaligned(x), misaligned(y)),
    }
    assert not declined["misaligned"][0].flags.aligned
    for name, (a, b) in declined.items():
        assert core(a, b) is None, name
        r = pairperm.permutation_test(a, b)
        general = pairperm.permutation_test(np.asarray(a).tolist(), np.asarray(b).tolist())
        assert r.to_dict() == general.to_dict(), name
        assert r.confidence_interval(0.9) == general.confidence_interval(0.9), name
    # Lengths that differ are declined too; the error is the general route's.
    assert core(x, y[:-1]) is None
    with pytest.raises(ValueError) as fast:
        pairperm.permutation_test(x, y[:-1])
    with pytest.raises(ValueError) as general:
        pairperm.permutation_test(x.tolist(), y[:-1].tolist())
    assert str(fast.value) == str(general.value)
    # An array subclass is never read as its buffer: a masked entry is refused, not used.
    masked = np.ma.masked_array(x, mask=np.arange(x.size) == 3)
    with pytest.raises(ValueError, match="masked entries"):
        pairperm.permutation_test(masked, y)


def test_int64_vectors_validate_every_argument_as_the_general_route():
    x, y = np.array([3, 1, 4, 1, 5], dtype=np.int64), np.array([2, 7, 1, 8, 2], dtype=np.int64)
    for kwargs in ({"alternative": "two_sided"}, {"n_resamples": 0}, {"n_resamples": 2.5}, {"rng": -1},
                   {"rng": "seed"}, {"n_jobs": 0}, {"method": "exactly"}):
        with pytest.raises(ValueError) as fast:
            pairperm.permutation_test(x, y, **kwargs)
        with pytest.raises(ValueError) as general:
            pairperm.permutation_test(x.tolist(), y.tolist(), **kwargs)
        assert str(fast.value) == str(general.value)
    # Sums beyond the core's int64 range: the same message names the entries, checked before
    # the sampling arguments as the general route checks them.
    big = np.array([2**60, 2**60, 2**60], dtype=np.int64)
    for a, b in ((big, np.array([0, 0, -(2**60)], dtype=np.int64)), (np.array([0, 2**62]), np.array([0, 0]))):
        for kwargs in ({}, {"n_resamples": 0}, {"rng": "seed"}):
            with pytest.raises(ValueError) as fast:
                pairperm.permutation_test(a, b, **kwargs)
            with pytest.raises(ValueError) as general:
                pairperm.permutation_test(a.tolist(), b.tolist(), **kwargs)
            assert str(fast.value) == str(general.value)
    # A method that is not a string is refused by name, not compared as one.
    for method in (np.array(["auto"]), np.array(["auto", "exact"])):
        with pytest.raises(ValueError, match="method must be one of"):
            pairperm.permutation_test(x, y, method=method)


def test_results_made_on_the_hot_path_refuse_unknown_and_missing_fields():
    from pairperm._results import PermutationTestResult, instance_maker

    kwargs = dict(statistic=1, pvalue=0.5, log_pvalue=math.log(0.5), method="auto", alternative="greater")
    made = instance_maker(PermutationTestResult, *kwargs)(*kwargs.values())
    assert made == PermutationTestResult(**kwargs)
    assert vars(made) == vars(PermutationTestResult(**kwargs))
    # Each call makes its own instance, with its own field values.
    other = instance_maker(PermutationTestResult, *kwargs)(2, 0.25, math.log(0.25), "exact", "less")
    assert (other.statistic, other.pvalue, other.method, made.statistic) == (2, 0.25, "exact", 1)
    with pytest.raises(TypeError, match="unknown fields \\['statistc'\\]"):
        instance_maker(PermutationTestResult, "statistc", *(k for k in kwargs if k != "statistic"))
    with pytest.raises(TypeError, match="missing fields \\['alternative'\\]"):
        instance_maker(PermutationTestResult, *(k for k in kwargs if k != "alternative"))
    with pytest.raises(TypeError, match="repeated fields"):
        instance_maker(PermutationTestResult, "pvalue", *kwargs)


def test_instance_maker_makes_what_the_constructor_makes_or_refuses_the_class():
    import dataclasses

    from pairperm._results import instance_maker

    # Field names that the generated function could confuse with its own.
    for name in ("state", "cls", "defaults", "new", "obj", "make", "self"):
        cls = dataclasses.make_dataclass("C", [(name, int), ("z", int, dataclasses.field(default=0))], frozen=True)
        made = instance_maker(cls, name)(5)
        assert made == cls(**{name: 5}) and list(vars(made).items()) == list(vars(cls(**{name: 5})).items())
    with pytest.raises(TypeError, match="reserved"):
        instance_maker(dataclasses.make_dataclass("C", [("_maker_state", int)], frozen=True), "_maker_state")
    # Only what __init__ would do: no __post_init__, default_factory or init=False field.
    with_factory = dataclasses.make_dataclass("F", [("a", int), ("b", list, dataclasses.field(default_factory=list))])
    with pytest.raises(TypeError, match="default_factory"):
        instance_maker(with_factory, "a")
    checked = dataclasses.make_dataclass("P", [("a", int)], namespace={"__post_init__": lambda self: None})
    with pytest.raises(TypeError, match="__post_init__"):
        instance_maker(checked, "a")
    not_init = dataclasses.make_dataclass("N", [("a", int), ("b", int, dataclasses.field(default=2, init=False))],
                                          frozen=True)
    with pytest.raises(TypeError, match="unknown fields \\['b'\\]"):
        instance_maker(not_init, "a", "b")
    assert vars(instance_maker(not_init, "a")(1)) == vars(not_init(1))
