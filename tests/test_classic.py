"""McNemar, sign and Wilcoxon tests against exact arithmetic (Python ints / fractions) and scipy."""

import itertools
import warnings
from fractions import Fraction
from math import comb

import numpy as np
import pytest
import scipy.stats

import pairperm
from marks import quick_first
from pairperm._classic import doubled_midranks
from reference import ALTERNATIVES


def exact_binomial_p(n_pos, n_neg, alternative):
    n = n_pos + n_neg
    tail = lambda lo: Fraction(sum(comb(n, j) for j in range(lo, n + 1)), 2**n)  # P[K >= lo]
    if alternative == "greater":
        return tail(n_pos)
    if alternative == "less":
        return tail(n_neg)
    return min(Fraction(1), 2 * tail(max(n_pos, n_neg))) if n_pos != n_neg else Fraction(1)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_mcnemar_matches_exact_binomial(alternative):
    rng = np.random.default_rng(0)
    for n in (0, 1, 5, 40, 300):
        a = rng.random(n) < 0.7
        b = rng.random(n) < 0.6
        r = pairperm.mcnemar_test(a, b, alternative=alternative)
        n_a, n_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
        assert (r.n_a_only, r.n_b_only, r.statistic) == (n_a, n_b, n_a)
        want = float(exact_binomial_p(n_a, n_b, alternative))
        assert r.pvalue == pytest.approx(want, rel=1e-10)


def test_mcnemar_equals_permutation_test_on_binary_scores():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2, 500), rng.integers(0, 2, 500)
    for alt in ALTERNATIVES:
        assert pairperm.mcnemar_test(a, b, alternative=alt).pvalue == pytest.approx(
            pairperm.permutation_test(a, b, alternative=alt).pvalue, rel=1e-12)


def test_mcnemar_tiny_pvalue_log():
    a = np.ones(1500, dtype=bool)
    r = pairperm.mcnemar_test(a, ~a, alternative="greater")
    assert r.pvalue == 0.0
    assert r.log_pvalue == pytest.approx(-1500 * np.log(2), rel=1e-9)


def test_mcnemar_rejects_non_binary():
    with pytest.raises(ValueError, match="0/1"):
        pairperm.mcnemar_test([0, 1, 2], [0, 1, 1])
    with pytest.raises(ValueError, match="same length"):
        pairperm.mcnemar_test([0, 1], [0, 1, 1])


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_sign_test_matches_exact_binomial(alternative):
    rng = np.random.default_rng(2)
    x = rng.normal(size=200).round(1)
    y = rng.normal(0.2, size=200).round(1)  # rounding makes some ties
    r = pairperm.sign_test(x, y, alternative=alternative)
    n_pos, n_neg = int(np.sum(x > y)), int(np.sum(x < y))
    assert (r.n_positive, r.n_negative, r.n_zero) == (n_pos, n_neg, 200 - n_pos - n_neg)
    assert r.n_zero > 0
    assert r.pvalue == pytest.approx(float(exact_binomial_p(n_pos, n_neg, alternative)), rel=1e-10)
    want = scipy.stats.binomtest(n_pos, n_pos + n_neg, alternative=alternative).pvalue
    assert r.pvalue == pytest.approx(want, rel=1e-9)


def test_doubled_midranks():
    v = np.array([3.0, 1.0, 3.0, 2.0, 3.0, 0.5])
    assert doubled_midranks(v).tolist() == [10, 4, 10, 6, 10, 2]
    assert np.array_equal(doubled_midranks(v), (2 * scipy.stats.rankdata(v)).astype(int))


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("n", [1, 7, 25, 60])
def test_wilcoxon_matches_scipy_exact_without_ties(alternative, n):
    rng = np.random.default_rng(n)
    x, y = rng.normal(size=n), rng.normal(0.3, size=n)
    r = pairperm.wilcoxon_test(x, y, alternative=alternative)
    s = scipy.stats.wilcoxon(x, y, alternative=alternative, method="exact")
    assert r.statistic == s.statistic
    assert r.pvalue == pytest.approx(s.pvalue, rel=1e-9)


def brute_force_wilcoxon(d, zero_method, alternative):
    """Enumerate all 2^n sign flips in exact arithmetic (fractions) from ranks computed by scipy."""
    d = np.asarray(d, dtype=float)
    if zero_method == "wilcox":
        d = d[d != 0]
    ranks = [Fraction(int(2 * r), 2) for r in scipy.stats.rankdata(np.abs(d))] if len(d) else []
    signs = [int(np.sign(v)) for v in d]
    obs = sum(s * r for s, r in zip(signs, ranks))
    active = [r for s, r in zip(signs, ranks) if s != 0]
    hits = 0
    for flips in itertools.product((1, -1), repeat=len(active)):
        w = sum(f * r for f, r in zip(flips, active))
        hits += (w >= obs) if alternative == "greater" else (w <= obs) if alternative == "less" else abs(w) >= abs(obs)
    return Fraction(hits, 2 ** len(active))


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_wilcoxon_with_ties_and_zeros_is_exact(zero_method, alternative):
    rng = np.random.default_rng(3)
    for trial in range(4):
        n = 12
        d = rng.integers(-4, 5, size=n)  # heavy ties and several zeros
        r = pairperm.wilcoxon_test(d, alternative=alternative, zero_method=zero_method)
        want = brute_force_wilcoxon(d, zero_method, alternative)
        assert r.pvalue == pytest.approx(float(want), rel=1e-10), (trial, d)


def test_wilcoxon_rank_sums_match_scipy_definitions():
    d = np.array([0, 0, 1, -1, 2, 2, -3, 4, 0.5])
    for zm in ("wilcox", "pratt", "zsplit"):
        r = pairperm.wilcoxon_test(d, zero_method=zm, alternative="greater")
        with warnings.catch_warnings():
            # Only the statistic is compared; SciPy < 1.12 warns that its normal p-value is rough at N < 10.
            warnings.filterwarnings("ignore", "Sample size too small for normal approximation", UserWarning)
            s = scipy.stats.wilcoxon(d, zero_method=zm, alternative="greater", method="approx")
        assert r.statistic == pytest.approx(s.statistic)
        assert r.r_plus == r.statistic


def signed_rank_pvalue(d, alternative) -> Fraction:
    """The exact signed-rank p-value of W = sum of sign(d) times the doubled midrank of |d| over the
    nonzero differences, by counting the 2^n sign flips in Python integers. The entries tied at one
    |d| share a doubled midrank r; j positive signs among their c arise in comb(c, j) ways and
    contribute r (2j - c). Every group but the largest is convolved into a dict of partial sums;
    the largest group's count of flips past a bound is a suffix sum of its binomial coefficients."""
    nz = [int(v) for v in d if v != 0]
    sizes = {}
    for v in nz:
        sizes[abs(v)] = sizes.get(abs(v), 0) + 1
    groups, rank2, below = [], {}, 0
    for v in sorted(sizes):
        c = sizes[v]
        rank2[v] = 2 * below + c + 1  # twice the mean of ranks below + 1 .. below + c
        groups.append((rank2[v], c))
        below += c
    observed = sum(rank2[abs(v)] * (1 if v > 0 else -1) for v in nz)
    *first, last = sorted(groups, key=lambda g: g[1])  # the largest group last: the fewest partial sums
    partial = {0: 1}
    for r, c in first:
        nxt = {}
        for w, ways in partial.items():
            for j in range(c + 1):
                key = w + r * (2 * j - c)
                nxt[key] = nxt.get(key, 0) + ways * comb(c, j)
        partial = nxt
    r, c = last
    at_least = [0] * (c + 2)  # at_least[j] = flips of the last group with at least j positive signs
    for j in range(c, -1, -1):
        at_least[j] = at_least[j + 1] + comb(c, j)

    def count_ge(a):  # flips with W >= a: r (2j - c) >= a - w  <=>  j >= ceil((a - w + r c) / (2 r))
        return sum(ways * at_least[min(c + 1, max(0, -((w - a - r * c) // (2 * r))))] for w, ways in partial.items())

    def count_le(b):  # W <= b  <=>  -W >= -b, and W is symmetric
        return count_ge(-b)

    if alternative == "greater":
        hits = count_ge(observed)
    elif alternative == "less":
        hits = count_le(observed)
    else:
        hits = 2**len(nz) if observed == 0 else count_ge(abs(observed)) + count_le(-abs(observed))
    return Fraction(hits, 2 ** len(nz))


def test_signed_rank_reference_matches_brute_force():
    # The counting reference itself, against listing every sign flip.
    rng = np.random.default_rng(2)
    for _ in range(20):
        d = rng.integers(-3, 4, 11)
        nz = d[d != 0]
        if len(nz) == 0:
            continue
        r2 = (2 * scipy.stats.rankdata(np.abs(nz))).astype(np.int64)
        observed = int(np.sum(np.sign(nz) * r2))
        flips = np.array([int(np.dot(s, r2)) for s in itertools.product((-1, 1), repeat=len(nz))])
        for alternative, hits in (("greater", flips >= observed), ("less", flips <= observed),
                                  ("two-sided", np.abs(flips) >= abs(observed))):
            want = Fraction(int(hits.sum()), len(flips))
            assert signed_rank_pvalue(d, alternative) == want, (d, alternative)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_wilcoxon_large_n_with_ties_uses_exact_engine(alternative):
    # N = 1500 with three distinct |d|, hundreds of entries tied at each: scipy can only
    # approximate; the exact p-value counts all 2^n sign flips in Python integers.
    rng = np.random.default_rng(4)
    x = rng.integers(0, 3, 1500)
    y = rng.integers(0, 3, 1500) + rng.integers(0, 2, 1500)
    r = pairperm.wilcoxon_test(x, y, alternative=alternative)
    assert r.method == "exact"
    want = signed_rank_pvalue(x - y, alternative)
    assert r.pvalue == pytest.approx(float(want), rel=1e-9)
    approx = scipy.stats.wilcoxon(x, y, method="approx", alternative=alternative).pvalue
    assert r.pvalue == pytest.approx(approx, rel=0.05)


def test_wilcoxon_symmetry_and_monte_carlo():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=80), rng.normal(0.25, size=80)
    assert pairperm.wilcoxon_test(x, y).pvalue == pytest.approx(pairperm.wilcoxon_test(y, x).pvalue, rel=1e-12)
    exact = pairperm.wilcoxon_test(x, y, alternative="less").pvalue
    mc = pairperm.wilcoxon_test(x, y, alternative="less", method="monte_carlo", n_resamples=20_000, rng=7)
    lo, hi = mc.pvalue_ci
    assert lo <= exact <= hi
    again = pairperm.wilcoxon_test(x, y, alternative="less", method="monte_carlo", n_resamples=20_000, rng=7)
    assert again.pvalue == mc.pvalue


def test_wilcoxon_all_zero_and_bad_input():
    assert pairperm.wilcoxon_test([1, 2], [1, 2]).pvalue == 1.0
    with pytest.raises(ValueError, match="zero_method"):
        pairperm.wilcoxon_test([1, 2], [2, 1], zero_method="bogus")
    with pytest.raises(ValueError, match="NaN"):
        pairperm.wilcoxon_test([1.0, np.nan], [0.0, 0.0])
    with pytest.raises(ValueError, match="method"):
        pairperm.wilcoxon_test([1, 2], [2, 1], method="approx")


def test_sign_test_mixed_int_and_float_compares_exactly():
    r = pairperm.sign_test(np.array([2**60 + 1]), np.array([2.0**60]), alternative="greater")
    assert r.n_positive == 1 and r.n_zero == 0
    assert r.pvalue == 0.5


# Decimal scores: zeros and ties of x - y that hold in exact decimal arithmetic hold here too,
# as for the same scores written as integers (tenths, hundredths).


def test_wilcoxon_ties_of_decimal_differences():
    # |x - y| = 0.1 three times: 54.7 - 54.6, 47.6 - 47.5 and 67.3 - 67.2 differ in binary.
    x, y = [54.7, 47.6, 67.2, 50.0, 61.3], [54.6, 47.5, 67.3, 49.8, 61.2]
    r = pairperm.wilcoxon_test(x, y)
    want = pairperm.wilcoxon_test([547, 476, 672, 500, 613], [546, 475, 673, 498, 612])
    assert (r.r_plus, r.r_minus, r.pvalue) == (want.r_plus, want.r_minus, want.pvalue)
    assert (r.r_plus, r.r_minus) == (12.5, 2.5)
    assert r.pvalue == float(brute_force_wilcoxon([1, 1, -1, 2, 1], "wilcox", "two-sided"))


def decimal_pairs(rng, n, digits):
    unit = 10**digits
    xi = rng.integers(30 * unit, 70 * unit, n)
    yi = xi + rng.integers(-3, 4, n)
    return xi, yi, xi / unit, yi / unit


@pytest.mark.parametrize("digits", quick_first((1, 2)))
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_wilcoxon_decimal_scores_match_integer_scores(digits, zero_method, alternative):
    rng = np.random.default_rng(7 + digits)
    for trial in range(15):
        xi, yi, x, y = decimal_pairs(rng, int(rng.integers(3, 15)), digits)
        r = pairperm.wilcoxon_test(x, y, alternative=alternative, zero_method=zero_method)
        want = pairperm.wilcoxon_test(xi, yi, alternative=alternative, zero_method=zero_method)
        assert (r.r_plus, r.r_minus, r.pvalue) == (want.r_plus, want.r_minus, want.pvalue), trial
        assert r.pvalue == pytest.approx(float(brute_force_wilcoxon(xi - yi, zero_method, alternative)), rel=1e-12)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_wilcoxon_decimal_scores_match_scipy_on_integers(alternative):
    # Distinct |x - y| in tenths and no zeros: scipy's exact test applies to the integers.
    rng = np.random.default_rng(21)
    for _ in range(10):
        n = 9
        d = rng.permutation(np.arange(1, n + 1)) * rng.choice([-1, 1], n)
        xi = rng.integers(300, 700, n)
        x, y = xi / 10, (xi - d) / 10
        r = pairperm.wilcoxon_test(x, y, alternative=alternative)
        s = scipy.stats.wilcoxon(xi, xi - d, alternative=alternative, method="exact")
        assert r.statistic == s.statistic
        assert r.pvalue == pytest.approx(s.pvalue, rel=1e-12)


def test_sign_and_wilcoxon_zero_differences_of_decimal_sums():
    # 0.3 against 0.1 + 0.2 = 0.30000000000000004, and a unit of 0.1 and 0.2 against 0.3: zero
    # differences in exact arithmetic, left out like any other zero.
    x = [0.3, 1.0, 2.0, 4.0]
    y = [0.1 + 0.2, 0.5, 1.5, 3.0]
    s = pairperm.sign_test(x, y)
    assert (s.n_positive, s.n_negative, s.n_zero) == (3, 0, 1)
    assert s.pvalue == pairperm.sign_test([3, 10, 20, 40], [3, 5, 15, 30]).pvalue
    for zm in ("wilcox", "pratt", "zsplit"):
        w = pairperm.wilcoxon_test(x, y, zero_method=zm)
        want = pairperm.wilcoxon_test([3, 10, 20, 40], [3, 5, 15, 30], zero_method=zm)
        assert (w.r_plus, w.r_minus, w.pvalue) == (want.r_plus, want.r_minus, want.pvalue)
    g = [0, 0, 1, 2, 3]
    xg, yg = [0.1, 0.2, 1.0, 2.0, 4.0], [0.3, 0.0, 0.5, 1.5, 3.0]
    s = pairperm.sign_test(xg, yg, groups=g)
    assert (s.n_positive, s.n_negative, s.n_zero) == (3, 0, 1)
    w = pairperm.wilcoxon_test(xg, yg, groups=g, zero_method="pratt")
    want = pairperm.wilcoxon_test([1, 2, 10, 20, 40], [3, 0, 5, 15, 30], groups=g, zero_method="pratt")
    assert (w.r_plus, w.r_minus, w.pvalue) == (want.r_plus, want.r_minus, want.pvalue)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_sign_test_decimal_scores_match_integer_scores(alternative):
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(3, 15))
        xi = rng.integers(3, 50, n)
        # y as a sum of two nonnegative decimals (e.g. sentence scores summed): equal to x in
        # decimal for some entries, and then off by round-off only.
        yi = np.where(rng.random(n) < 0.4, xi, xi + rng.integers(-3, 4, n))
        parts = (rng.random(n) * yi).astype(np.int64)
        x = xi / 10
        y = parts / 10 + (yi - parts) / 10
        r = pairperm.sign_test(x, y, alternative=alternative)
        want = pairperm.sign_test(xi, yi, alternative=alternative)
        assert (r.n_positive, r.n_negative, r.n_zero, r.pvalue) == (
            want.n_positive, want.n_negative, want.n_zero, want.pvalue)


def test_binary_grid_differences_stay_exact_in_rank_tests():
    # Scores on a binary grid are compared exactly: differences of 2^-40 near 1 are resolved.
    x = np.array([1.0, 1.0, 1.0, 1.0]) + np.array([1, 2, 3, 4]) * 2.0**-40
    y = np.ones(4)
    assert pairperm.sign_test(x, y).n_zero == 0
    r = pairperm.wilcoxon_test(x, y, alternative="greater")
    assert (r.r_plus, r.r_minus) == (10.0, 0.0)
    assert list(doubled_midranks(np.array([0.25, 0.5, 0.25]), np.zeros(3))) == [3, 6, 3]
