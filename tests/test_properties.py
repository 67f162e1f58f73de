"""Property tests: every public test against brute-force enumeration of all 2^N swap patterns
(tests/reference.py, exact integers and fractions), plus invariances of the p-value.

Hypothesis profiles are set in conftest.py ("ci": derandomized and bounded; "dev": default).
N stays small (<= 12) so that enumeration is cheap; small value ranges make ties common.
"""

from __future__ import annotations

import inspect
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import example, given
from hypothesis import strategies as st

import pairperm
from reference import (
    ALTERNATIVES,
    brute_force_cdf,
    brute_force_counts,
    brute_force_pvalue,
    brute_force_ratio_pvalue,
    brute_force_stat_pvalue,
    log_fraction,
    pvalue_from_counts,
    rel_err,
    sign_flip_pvalue,
    wilcoxon_reference,
)

EXACT_RTOL = 1e-9  # exact engines: relative error
FFT_ATOL = 1e-12  # the FFT tree (Alg. 4): absolute error


def assert_pvalue(got: float, exact: Fraction, method: str) -> None:
    if method == "fft":
        assert abs(got - float(exact)) <= FFT_ATOL, (got, exact)
    else:
        assert rel_err(got, exact) <= EXACT_RTOL, (got, exact, float(exact))


# ------------------------------------------------------------------------------- strategies

small_ints = st.integers(-8, 8)


@st.composite
def paired_scores(draw, max_n=12, lo=-8, hi=8):
    """(x, y) int64 arrays of equal length 0..max_n."""
    n = draw(st.integers(0, max_n))
    x = draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))
    y = draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))
    return np.array(x, dtype=np.int64), np.array(y, dtype=np.int64)


@st.composite
def local_effects(draw, max_n=12, m=None, lo=-6, hi=6):
    """(stay, swap) of shape (N,) or (N, m), independent (not necessarily stay = -swap)."""
    n = draw(st.integers(0 if m is None else 1, max_n))
    size = n * (m or 1)
    stay = draw(st.lists(st.integers(lo, hi), min_size=size, max_size=size))
    swap = draw(st.lists(st.integers(lo, hi), min_size=size, max_size=size))
    shape = (n,) if m is None else (n, m)
    return np.array(stay, dtype=np.int64).reshape(shape), np.array(swap, dtype=np.int64).reshape(shape)


# Dyadic coefficients: the float statistic is then exact for small integer sums, so its ties
# are the exact ties of the Fraction reference.
dyadic = st.sampled_from([Fraction(v) for v in (-2, -1.5, -1, -0.5, -0.25, 0, 0.25, 0.5, 1, 2)])


EMPTY = (np.zeros(0, np.int64), np.zeros(0, np.int64))


# ------------------------------------------------------------------------------- permutation_test

@given(xy=paired_scores())
@example(xy=EMPTY)
@example(xy=(np.array([3, 3, 3]), np.array([3, 3, 3])))
def test_permutation_test_every_method_and_alternative_matches_brute_force(xy):
    x, y = xy
    d = [int(v) for v in x - y]
    counts = brute_force_counts(d, [-v for v in d])
    for alternative in ALTERNATIVES:
        exact = pvalue_from_counts(counts, sum(d), alternative, 0)
        for method in ("auto", "dp", "fft"):
            r = pairperm.permutation_test(x, y, alternative=alternative, method=method)
            assert r.statistic == sum(d)
            assert (r.method, r.alternative) == (method, alternative)
            assert_pvalue(r.pvalue, exact, method)
            if method != "fft":
                assert abs(r.log_pvalue - log_fraction(exact)) <= 1e-9


@given(xy=paired_scores(lo=-10**15, hi=10**15))
@example(xy=(np.array([10**15, 3, -10**15, 7]), np.array([-10**15, 3, 10**15, 1])))
def test_permutation_test_auto_wide_values_match_brute_force(xy):
    """Large, unrelated |x - y| (the grouped window is infeasible; few entries vary)."""
    x, y = xy
    d = [int(v) for v in x - y]
    counts = brute_force_counts(d, [-v for v in d])
    for alternative in ALTERNATIVES:
        exact = pvalue_from_counts(counts, sum(d), alternative, 0)
        r = pairperm.permutation_test(x, y, alternative=alternative)
        assert r.statistic == sum(d)
        assert_pvalue(r.pvalue, exact, "auto")
        assert abs(r.log_pvalue - log_fraction(exact)) <= 1e-9
        s = pairperm.structured_test(x - y, y - x, alternative=alternative)
        assert (s.statistic, s.pvalue) == (r.statistic, r.pvalue)


@given(xy=paired_scores())
def test_permutation_test_swapping_the_systems(xy):
    x, y = xy
    for method in ("auto", "dp", "fft"):
        tol = dict(abs=FFT_ATOL) if method == "fft" else dict(rel=EXACT_RTOL, abs=0)
        two = [pairperm.permutation_test(u, v, method=method) for u, v in ((x, y), (y, x))]
        assert two[0].pvalue == pytest.approx(two[1].pvalue, **tol)
        assert two[0].statistic == -two[1].statistic
        greater = pairperm.permutation_test(x, y, alternative="greater", method=method).pvalue
        less = pairperm.permutation_test(y, x, alternative="less", method=method).pvalue
        assert greater == pytest.approx(less, **tol)


@given(xy=paired_scores(), c=st.integers(-10**6, 10**6))
def test_permutation_test_adding_a_constant_to_both_systems_changes_nothing(xy, c):
    x, y = xy
    for alternative in ALTERNATIVES:
        for method in ("auto", "dp", "fft"):
            r0 = pairperm.permutation_test(x, y, alternative=alternative, method=method)
            r1 = pairperm.permutation_test(x + c, y + c, alternative=alternative, method=method)
            assert (r1.statistic, r1.pvalue, r1.log_pvalue) == (r0.statistic, r0.pvalue, r0.log_pvalue)


# ------------------------------------------------------------------------------- structured_test

@given(effects=local_effects())
def test_structured_1d_sum_statistic_matches_brute_force(effects):
    stay, swap = effects
    for alternative in ALTERNATIVES:
        exact = brute_force_pvalue(stay, swap, alternative)
        for method in ("auto", "dp", "fft"):
            r = pairperm.structured_test(stay, swap, alternative=alternative, method=method)
            assert r.statistic == int(stay.sum())
            assert_pvalue(r.pvalue, exact, method)


@given(effects=local_effects(max_n=10), a=dyadic, b=dyadic, c=dyadic)
@example(effects=EMPTY, a=Fraction(1), b=Fraction(0), c=Fraction(0))  # was a reshape error with method="auto"
def test_structured_1d_callable_matches_brute_force(effects, a, b, c):
    stay, swap = effects

    def h_exact(s):
        return a * s[0] + c * s[0] * s[0] + b

    def h(s):
        s = s.astype(np.float64)
        return float(a) * s + float(c) * s * s + float(b)

    for alternative in ALTERNATIVES:
        exact = brute_force_stat_pvalue(stay, swap, h_exact, alternative)
        for method in ("auto", "dp", "fft"):
            r = pairperm.structured_test(stay, swap, h, alternative=alternative, method=method)
            assert r.statistic == float(h_exact((int(stay.sum()),)))
            assert_pvalue(r.pvalue, exact, method)


@given(effects=local_effects(max_n=8, m=2, lo=-4, hi=4), a=dyadic, b=dyadic, c=dyadic,
       ratio=st.booleans())
def test_structured_2d_callable_matches_brute_force(effects, a, b, c, ratio):
    stay, swap = effects
    if ratio:
        # One correctly rounded division of exact integers: equal ratios give equal floats.
        def h_exact(s):
            return Fraction(s[0], abs(s[1]) + 1)

        def h(s):
            return s[:, 0] / (np.abs(s[:, 1]) + 1.0)
    else:
        def h_exact(s):
            return a * s[0] + b * s[1] + c * s[0] * s[1]

        def h(s):
            s = s.astype(np.float64)
            return float(a) * s[:, 0] + float(b) * s[:, 1] + float(c) * s[:, 0] * s[:, 1]

    for alternative in ALTERNATIVES:
        exact = brute_force_stat_pvalue(stay, swap, h_exact, alternative)
        for method in ("auto", "dp"):
            r = pairperm.structured_test(stay, swap, h, alternative=alternative, method=method)
            assert r.statistic == float(h_exact(tuple(int(v) for v in stay.sum(axis=0))))
            assert_pvalue(r.pvalue, exact, method)


@st.composite
def real_local_effects(draw, max_n=9, m=None):
    """Float (stay, swap) that are small dyadic numbers times a power of two: every sum is then
    exact in float64, so the engines' ties are the exact ties of the Fraction reference, at any scale."""
    n = draw(st.integers(1, max_n))
    size = n * (m or 1)
    values = st.integers(-24, 24).map(lambda v: v / 8)
    scale = 2.0 ** draw(st.sampled_from([-600, -30, 0, 40, 500]))
    shape = (n,) if m is None else (n, m)
    stay = np.array(draw(st.lists(values, min_size=size, max_size=size))).reshape(shape) * scale
    swap = np.array(draw(st.lists(values, min_size=size, max_size=size))).reshape(shape) * scale
    return stay, swap, Fraction(scale)


@given(effects=real_local_effects(), a=dyadic, c=dyadic)
def test_structured_1d_callable_on_real_effects_matches_brute_force(effects, a, c):
    stay, swap, scale = effects

    def h_exact(s):
        u = s[0] / scale
        return a * u + c * u * u

    def h(s):
        u = s / float(scale)
        return float(a) * u + float(c) * u * u

    for alternative in ALTERNATIVES:
        exact = brute_force_stat_pvalue(stay, swap, h_exact, alternative)
        r = pairperm.structured_test(stay, swap, h, alternative=alternative)
        assert r.statistic == float(h_exact((sum(Fraction(v) for v in stay),)))
        assert_pvalue(r.pvalue, exact, "auto")


@given(effects=real_local_effects(max_n=7, m=2), a=dyadic, b=dyadic, c=dyadic)
def test_structured_2d_callable_on_real_effects_matches_brute_force(effects, a, b, c):
    stay, swap, scale = effects

    def h_exact(s):
        u, v = s[0] / scale, s[1] / scale
        return a * u + b * v - c * v * v

    def h(s):
        u, v = s[:, 0] / float(scale), s[:, 1] / float(scale)
        return float(a) * u + float(b) * v - float(c) * v * v

    for alternative in ALTERNATIVES:
        exact = brute_force_stat_pvalue(stay, swap, h_exact, alternative)
        r = pairperm.structured_test(stay, swap, h, alternative=alternative)
        observed = tuple(sum(Fraction(v) for v in stay[:, j]) for j in range(2))
        assert r.statistic == float(h_exact(observed))
        assert_pvalue(r.pvalue, exact, "auto")


# ------------------------------------------------------------------------------- F-beta, precision, recall

@st.composite
def count_tables(draw, max_n=9, max_count=3):
    """(a, b) per-entry (tp, fp, fn) with shared gold counts; optionally mirrored entries
    ((a_n, b_n) next to (b_n, a_n)), so that distinct swap patterns reach equal totals and the
    observed score difference is tied by other states."""
    n = draw(st.integers(1, max_n))
    rows_a, rows_b = [], []
    for _ in range(n):
        gold = draw(st.integers(0, max_count))
        tp_a, tp_b = draw(st.integers(0, gold)), draw(st.integers(0, gold))
        fp_a, fp_b = draw(st.integers(0, max_count)), draw(st.integers(0, max_count))
        rows_a.append((tp_a, fp_a, gold - tp_a))
        rows_b.append((tp_b, fp_b, gold - tp_b))
    mirror = draw(st.lists(st.integers(0, n - 1), max_size=min(3, max_n + 3 - n), unique=True))
    for i in mirror:
        rows_a.append(rows_b[i])
        rows_b.append(rows_a[i])
    return np.array(rows_a, dtype=np.int64).reshape(-1, 3), np.array(rows_b, dtype=np.int64).reshape(-1, 3)


# Entries 0 and 1 mirror each other: swapping both reaches the observed totals again.
TIED_F1 = (np.array([[1, 0, 1], [0, 1, 2], [2, 1, 0]]), np.array([[0, 1, 2], [1, 0, 1], [1, 0, 1]]))


@given(tables=count_tables(), beta=st.sampled_from([0.5, 1.0, 2.0]), zero=st.sampled_from([0.0, 0.5, 1.0]))
@example(tables=TIED_F1, beta=1.0, zero=0.0)
@example(tables=(np.zeros((3, 3), np.int64), np.zeros((3, 3), np.int64)), beta=1.0, zero=1.0)
def test_f1_precision_recall_match_brute_force_with_ties(tables, beta, zero):
    a, b = tables
    cases = [("f1", pairperm.f1_test, dict(beta=beta)),
             ("precision", pairperm.precision_test, {}),
             ("recall", pairperm.recall_test, {})]
    for kind, func, kw in cases:
        for alternative in ALTERNATIVES:
            exact = brute_force_ratio_pvalue(kind, a, b, alternative, Fraction(kw.get("beta", 1.0)), Fraction(zero))
            for method in ("auto", "dp"):
                r = func(a, b, alternative=alternative, method=method, zero_division=zero, **kw)
                assert_pvalue(r.pvalue, exact, method)


@given(tables=count_tables(), zero=st.sampled_from([0.0, 1.0]))
def test_f1_tp_errors_format_matches_brute_force(tables, zero):
    a3, b3 = tables
    a = np.c_[a3[:, 0], a3[:, 1] + a3[:, 2]]
    b = np.c_[b3[:, 0], b3[:, 1] + b3[:, 2]]
    for alternative in ALTERNATIVES:
        exact = brute_force_ratio_pvalue("f1", a, b, alternative, zero=Fraction(zero))
        for method in ("auto", "dp"):
            r = pairperm.f1_test(a, b, alternative=alternative, method=method, zero_division=zero)
            assert_pvalue(r.pvalue, exact, method)


def test_tied_f1_example_has_ties():
    """The explicit example above really exercises ties: some swap pattern other than the
    observed one reaches exactly the observed F1 difference (checked in Fractions)."""
    a, b = TIED_F1
    greater = brute_force_ratio_pvalue("f1", a, b, "greater")
    less = brute_force_ratio_pvalue("f1", a, b, "less")
    assert greater + less > 1 + Fraction(1, 2 ** len(a))


# ------------------------------------------------------------------------------- sign and McNemar

@given(xy=paired_scores(max_n=14, lo=-3, hi=3), halves=st.booleans())
def test_sign_test_matches_brute_force(xy, halves):
    x, y = xy
    if halves:
        x, y = x / 2.0, y / 2.0
    signs = [(u > v) - (u < v) for u, v in zip(x.tolist(), y.tolist())]
    for alternative in ALTERNATIVES:
        r = pairperm.sign_test(x, y, alternative=alternative)
        assert (r.n_positive, r.n_negative, r.n_zero) == (signs.count(1), signs.count(-1), signs.count(0))
        assert r.statistic == signs.count(1)
        assert_pvalue(r.pvalue, sign_flip_pvalue(signs, alternative), "exact")


@given(n=st.integers(0, 14), data=st.data())
def test_mcnemar_test_matches_brute_force(n, data):
    a = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    b = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    d = [int(u) - int(v) for u, v in zip(a, b)]
    for alternative in ALTERNATIVES:
        r = pairperm.mcnemar_test(a, b, alternative=alternative)
        assert (r.n_a_only, r.n_b_only, r.statistic) == (d.count(1), d.count(-1), d.count(1))
        assert_pvalue(r.pvalue, sign_flip_pvalue(d, alternative), "exact")
        assert r.pvalue == pairperm.mcnemar_test(a.astype(int), b.astype(int), alternative=alternative).pvalue


# ------------------------------------------------------------------------------- Wilcoxon signed-rank

# Multiples of 1/2 in [-3, 3]: exact in float, so differences, ties and zeros are exact.
halves = st.integers(-6, 6).map(lambda v: v / 2.0)


@st.composite
def wilcoxon_inputs(draw, max_n=12):
    """(x, y) or (x, None) (x holds the differences) on a grid where ties and zeros are common."""
    n = draw(st.integers(0, max_n))
    x = np.array(draw(st.lists(halves, min_size=n, max_size=n)))
    y = np.array(draw(st.lists(halves, min_size=n, max_size=n))) if draw(st.booleans()) else None
    return x, y


@given(xy=wilcoxon_inputs())
@example(xy=(np.array([0.0, 1.0, -1.0, 0.0, 2.5, -2.5, 1.0]), None))
def test_wilcoxon_every_zero_method_matches_brute_force(xy):
    x, y = xy
    yy = np.zeros_like(x) if y is None else y
    for zero_method in ("wilcox", "pratt", "zsplit"):
        for alternative in ALTERNATIVES:
            p, r_plus, r_minus = wilcoxon_reference(x.tolist(), yy.tolist(), zero_method, alternative)
            r = pairperm.wilcoxon_test(x, y, alternative=alternative, zero_method=zero_method)
            assert (r.r_plus, r.r_minus) == (r_plus, r_minus)
            assert r.statistic == (min(r_plus, r_minus) if alternative == "two-sided" else r_plus)
            assert_pvalue(r.pvalue, p, "exact")


def scipy_wilcoxon_exact(d, alternative):
    """scipy's exact signed-rank test; the keyword is `method` from SciPy 1.13, `mode` before."""
    params = inspect.signature(scipy.stats.wilcoxon).parameters
    kw = {"method": "exact"} if "method" in params else {"mode": "exact"}
    return scipy.stats.wilcoxon(d, alternative=alternative, **kw)


@st.composite
def distinct_nonzero_differences(draw, max_n=20):
    """No ties and no zeros: scipy's exact branch applies."""
    mags = draw(st.lists(st.integers(1, 60), min_size=1, max_size=max_n, unique=True))
    signs = draw(st.lists(st.sampled_from([-1, 1]), min_size=len(mags), max_size=len(mags)))
    return np.array([s * m / 4.0 for s, m in zip(signs, mags)])


@given(d=distinct_nonzero_differences())
def test_wilcoxon_matches_scipy_exact_without_ties_or_zeros(d):
    for alternative in ALTERNATIVES:
        r = pairperm.wilcoxon_test(d, alternative=alternative)
        s = scipy_wilcoxon_exact(d, alternative)
        assert r.statistic == s.statistic
        assert rel_err(r.pvalue, Fraction(float(s.pvalue))) <= EXACT_RTOL, (r.pvalue, s.pvalue)


# ------------------------------------------------------------------------------- Distribution cdf / sf

@given(effects=local_effects(max_n=10))
def test_distribution_cdf_sf_match_brute_force_counts(effects):
    stay, swap = effects
    counts = brute_force_counts(stay.tolist(), swap.tolist())
    lo, hi = min(counts), max(counts)
    ints = list(range(lo - 2, hi + 3)) + [lo - 10**12, hi + 10**12]
    floats = [v + 0.5 for v in range(lo - 2, hi + 2)] + [lo - 0.25, hi + 1e-9, -math.inf, math.inf, -1e300, 1e300]
    for method in ("auto", "dp", "fft"):
        dist = pairperm.null_distribution(stay, swap, method=method)
        for points in (ints, floats):
            cdf = dist.cdf(np.array(points))
            sf = dist.sf(np.array(points))
            for x, c, s in zip(points, cdf, sf):
                below = brute_force_cdf(stay.tolist(), swap.tolist(), x)
                assert_pvalue(float(c), below, method)
                assert_pvalue(float(s), 1 - below, method)
            # scalars take the same path and give plain floats
            assert dist.cdf(points[0]) == cdf[0] and isinstance(dist.sf(points[-1]), float)
