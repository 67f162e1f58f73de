"""Confidence intervals: the permutation-test inversion interval against brute force over all
2^n swap patterns in exact fractions, and the paired bootstrap intervals against scipy and
an independent implementation of Efron's BCa formulas on the same resamples."""

import collections
import inspect
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.optimize
import scipy.stats

import pairperm
from marks import quick_first
from pairperm import ConfidenceInterval, _core
from pairperm._intervals import _multiset_ends, batch_shift_bounds, tail_level
from pairperm._metrics import f1_from_sums
from pairperm._resampling import bootstrap_mean_intervals
from pairperm._stats import multiset

# ---------------------------------------------------------------- references


def subset_means(d):
    """All 2^n - 1 non-empty subset means of d, sorted, as exact fractions."""
    d = [Fraction(v) for v in d]
    return sorted(Fraction(sum(d[i] for i in f), len(f))
                  for r in range(1, len(d) + 1) for f in itertools.combinations(range(len(d)), r))


def exact_p_greater(d, delta):
    """p of the sign-flip test of d - delta, alternative "greater" (P[S >= T], ties counting),
    by listing all 2^n swap patterns in exact fractions."""
    e = [Fraction(v) - delta for v in d]
    t = sum(e)
    hits = sum(1 for signs in itertools.product((1, -1), repeat=len(e)) if sum(s * v for s, v in zip(signs, e)) >= t)
    return Fraction(hits, 2 ** len(e))


def brute_interval(d, confidence_level, alternative):
    """Hartigan's order statistics of the subset means: (low, high) as fractions or infinities."""
    alpha = 1 - Fraction(confidence_level)
    tail = alpha / 2 if alternative == "two-sided" else alpha
    means = subset_means(d)
    k = math.floor(tail * 2 ** len(d))
    low = -math.inf if k == 0 or alternative == "less" else means[k - 1]
    high = math.inf if k == 0 or alternative == "greater" else means[-k]
    return low, high, tail


def grouped_interval(d, confidence_level, alternative):
    """brute_interval for integer d with few distinct values: the subset means counted by how
    many items of each value they take (C(c_1, k_1) C(c_2, k_2) ... subsets share a mean), in
    exact fractions and integers, so N may reach hundreds."""
    groups = collections.Counter(d)
    means = collections.Counter()
    for ks in itertools.product(*(range(c + 1) for c in groups.values())):
        if sum(ks):
            ways = math.prod(math.comb(c, k) for c, k in zip(groups.values(), ks))
            means[Fraction(sum(k * v for k, v in zip(ks, groups)), sum(ks))] += ways
    tail = tail_level(confidence_level, alternative)
    k = math.floor(tail * 2 ** len(d))

    def kth(order):
        seen = 0
        for mean in order:
            seen += means[mean]
            if seen >= k:
                return float(mean)

    low = -math.inf if k == 0 or alternative == "less" else kth(sorted(means))
    high = math.inf if k == 0 or alternative == "greater" else kth(sorted(means, reverse=True))
    return low, high


def lattice_interval(d, confidence_level, alternative):
    """The ends by the lattice route, whatever N (shift_interval takes it only beyond 30 items)."""
    values, counts = multiset(np.asarray(d, dtype=np.int64))
    tail = tail_level(confidence_level, alternative)
    assert _core.lattice_affordable(values, counts, float(tail))
    return _multiset_ends(values, counts, tail, alternative, True)


def as_float(v):
    return v if isinstance(v, float) else float(v)


# ---------------------------------------------------------------- inversion interval


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("n", [1, 2, 4, 6, 9, 11])
@pytest.mark.parametrize("confidence_level", [0.8, 0.95])
def test_integer_shift_interval_is_exactly_the_brute_force_one(n, alternative, confidence_level):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 8, n)
    y = rng.integers(0, 6, n)
    r = pairperm.shift_interval(x, y, confidence_level=confidence_level, alternative=alternative)
    low, high, _ = brute_interval((x - y).tolist(), confidence_level, alternative)
    assert r.method == "exact"
    assert r.mean_difference == (as_float(low), as_float(high))
    assert r.sum_difference == pytest.approx((n * as_float(low), n * as_float(high)))


@pytest.mark.parametrize("n", [3, 7, 10, 12])
def test_real_shift_interval_matches_brute_force_to_round_off(n):
    rng = np.random.default_rng(100 + n)
    d = rng.standard_t(3, n) * 0.37 + 0.1
    r = pairperm.shift_interval(d, confidence_level=0.9)
    low, high, _ = brute_interval(d.tolist(), 0.9, "two-sided")
    width = float(d.max() - d.min())
    for got, want in zip(r.mean_difference, (low, high)):
        if math.isinf(want):
            assert got == want
        else:
            assert abs(got - float(want)) <= 1e-12 * width


@pytest.mark.parametrize("d", [[1, 0, 1, 2, 0, 2, 0, 3], [2, 2, 2, -1, 0, 5, 2], [-3, 1, 1, 1, 4, 0, 0, 2, 1]])
def test_every_shift_inside_is_kept_and_every_shift_outside_rejected(d):
    """The inversion property itself, at every subset mean (where p jumps) and between them."""
    low, high = pairperm.shift_interval(d, confidence_level=0.9).mean_difference
    # The endpoints are subset means, correctly rounded: recover the exact fractions.
    low, high = (Fraction(v).limit_denominator(len(d)) for v in (low, high))
    means = sorted(set(subset_means(d)))
    candidates = means + [(a + b) / 2 for a, b in zip(means, means[1:])] + [means[0] - 1, means[-1] + 1]
    tail = (1 - Fraction(0.9)) / 2
    for delta in candidates:
        kept = exact_p_greater(d, delta) > tail and exact_p_greater([-v for v in d], -delta) > tail
        assert kept == (low <= delta <= high), delta


def test_endpoints_belong_to_the_interval_when_items_equal_the_shift():
    # d has items equal to the lower endpoint 0: at delta = 0 those items' sign flips change
    # nothing, and the subsets of them tie at sum 0, which counts as extreme.
    d = [0, 0, 0, 1, 2, 3, 1, 2]
    r = pairperm.shift_interval(d, confidence_level=0.95, alternative="greater")
    low = Fraction(r.mean_difference.low).limit_denominator(len(d))
    tail = 1 - Fraction(0.95)
    assert exact_p_greater(d, low) > tail
    assert exact_p_greater(d, low - Fraction(1, 10**6)) <= tail
    assert low == brute_interval(d, 0.95, "greater")[0]


def test_degenerate_inputs():
    assert pairperm.shift_interval([2.5]).mean_difference == (-math.inf, math.inf)
    # All differences alike: every subset mean is that value.
    assert pairperm.shift_interval([3] * 9).mean_difference == (3.0, 3.0)
    assert pairperm.shift_interval(np.zeros(12)).sum_difference == (0.0, 0.0)
    # Too few items to reject anything at this level: the whole line.
    assert pairperm.shift_interval([1, 2, 3, 4, 5], confidence_level=0.99).mean_difference == (-math.inf, math.inf)


@pytest.mark.parametrize("method", ["exact", "saddlepoint"])
def test_scale_invariance_and_symmetry(method):
    rng = np.random.default_rng(7)
    d = rng.normal(0.3, 1.0, 14 if method == "exact" else 300)
    base = pairperm.shift_interval(d, method=method).mean_difference
    for factor in (2.0**-40, 2.0**60, 1e-300, 1e300):
        low, high = pairperm.shift_interval(d * factor, method=method).mean_difference
        assert low == pytest.approx(base.low * factor, rel=1e-12)
        assert high == pytest.approx(base.high * factor, rel=1e-12)
    mirrored = pairperm.shift_interval(-d, method=method).mean_difference
    assert mirrored == pytest.approx((-base.high, -base.low), rel=1e-12)
    # x - y and the differences themselves give the same interval.
    assert pairperm.shift_interval(d + 5, np.full(len(d), 5.0), method=method).mean_difference == \
        pytest.approx(base, rel=1e-9)


@pytest.mark.parametrize("method", ["exact", "saddlepoint"])
def test_intervals_are_nested_in_the_confidence_level(method):
    rng = np.random.default_rng(3)
    d = rng.integers(-2, 5, 16 if method == "exact" else 500)
    previous = None
    for level in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999):
        low, high = pairperm.shift_interval(d, confidence_level=level, method=method).mean_difference
        if previous is not None:
            assert low <= previous[0] and high >= previous[1]
        previous = (low, high)
        one_sided = pairperm.shift_interval(d, confidence_level=level, alternative="greater", method=method)
        assert one_sided.mean_difference.low >= low


def test_coverage_is_at_least_the_confidence_level():
    """Exact under any symmetric noise: the shift is covered in >= 90% of datasets (here with
    a binomial margin of 3 standard errors over 400 simulated datasets)."""
    rng = np.random.default_rng(2024)
    covered = 0
    reps = 400
    for _ in range(reps):
        d = 1.5 + rng.laplace(0, 1, 10)
        low, high = pairperm.shift_interval(d, confidence_level=0.9).mean_difference
        covered += low <= 1.5 <= high
    assert covered / reps >= 0.9 - 3 * math.sqrt(0.09 / reps)


@pytest.mark.parametrize("n,kind", quick_first([(30, "int"), (32, "real"), (34, "int"), (36, "real")], quick=2))
def test_saddlepoint_endpoints_are_within_one_percent_of_the_width_of_exact_ones(n, kind):
    rng = np.random.default_rng(n)
    d = rng.integers(-3, 7, n) if kind == "int" else rng.gamma(2.0, 1.0, n) - 1.0
    for alternative in ("two-sided", "greater"):
        exact = pairperm.shift_interval(d, alternative=alternative, method="exact").mean_difference
        approx = pairperm.shift_interval(d, alternative=alternative, method="saddlepoint").mean_difference
        width = pairperm.shift_interval(d, method="exact").mean_difference
        scale = width.high - width.low
        for a, e in zip(approx, exact):
            assert a == e or abs(a - e) <= 0.01 * scale


@pytest.mark.parametrize("n", [200, 3000])
def test_saddlepoint_endpoints_agree_with_the_exact_permutation_test(n):
    """At large N, the library's exact integer test of d - delta (scaled to integers: a shift
    delta = a / b is the test of b d - a) rejects just outside the interval and keeps just
    inside it."""
    rng = np.random.default_rng(n)
    d = rng.integers(-4, 9, n)
    low, high = pairperm.shift_interval(d, method="saddlepoint").mean_difference
    margin = 0.01 * (high - low)
    for delta, kept in ((low - margin, False), (low + margin, True), (high - margin, True), (high + margin, False)):
        q = Fraction(delta).limit_denominator(10**4)
        shifted = q.denominator * d - q.numerator
        p_greater = pairperm.permutation_test(shifted, np.zeros(n, dtype=np.int64), alternative="greater").pvalue
        p_less = pairperm.permutation_test(shifted, np.zeros(n, dtype=np.int64), alternative="less").pvalue
        assert (min(p_greater, p_less) > 0.025) == kept


def _lugannani_rice_log_sf(e, t_obs):
    """log P[S >= t_obs] for S the sign-flip sum of |e| by Lugannani-Rice, with the cumulant
    generating function K(t) = sum log cosh(t |e|) in NumPy and the saddlepoint by scipy's brentq."""
    a = np.abs(e)
    k1 = lambda t: float(np.sum(a * np.tanh(t * a))) - t_obs  # noqa: E731
    hi = 1.0
    while k1(hi) < 0:
        hi *= 2
    t = scipy.optimize.brentq(k1, 0.0, hi, xtol=1e-300, rtol=1e-15, maxiter=500)
    k0 = float(np.sum(np.logaddexp(t * a, -t * a) - math.log(2)))
    k2 = float(np.sum(a * a * (1 - np.tanh(t * a) ** 2)))
    w, u = math.sqrt(2 * (t * t_obs - k0)), t * math.sqrt(k2)
    return math.log(scipy.stats.norm.sf(w) + scipy.stats.norm.pdf(w) * (1 / u - 1 / w))


@pytest.mark.parametrize("outlier", [0.0, 150.0, 300.0, 1e4])
def test_saddlepoint_ends_are_where_the_lugannani_rice_tail_meets_the_level(outlier):
    """Each end solves LR tail = level to the solver's tolerance. At the lower end t |e| reaches
    29 with the outlier 150, and 58 and 1954 with 300 and 10^4: beyond 40, where tanh is 1 and
    log cosh is |x| - log 2 in float64."""
    rng = np.random.default_rng(7)
    d = np.append(rng.gamma(2.0, 1.0, 60) - 1.0, outlier)
    low, high = pairperm.shift_interval(d, method="saddlepoint", confidence_level=0.95).mean_difference
    log_level = math.log(0.025)
    for sign, end in ((1, low), (-1, high)):
        e = sign * (d - end)
        step = 1e-9 * (d.max() - d.min())
        assert _lugannani_rice_log_sf(e, e.sum()) == pytest.approx(log_level, abs=1e-9)
        # The tail crosses the level at the end: below it just outside, above it just inside.
        for shift, above in ((-step, False), (step, True)):
            e_shifted = sign * (d - end) - shift
            assert (_lugannani_rice_log_sf(e_shifted, e_shifted.sum()) > log_level) == above


def test_auto_picks_exact_for_few_items_or_few_values_and_the_saddlepoint_beyond():
    assert pairperm.shift_interval(np.arange(30) % 4).method == "exact"
    assert pairperm.shift_interval(np.arange(31) % 4).method == "exact"  # the lattice route
    assert pairperm.shift_interval(np.arange(31)).method == "saddlepoint"
    assert pairperm.shift_interval(np.arange(31) % 4 + 0.5).method == "saddlepoint"  # not integers


@pytest.mark.parametrize("n", quick_first([1, 2, 5, 8, 12], quick=4))
def test_lattice_route_is_exactly_the_brute_force_one(n):
    """Against every one of the 2^N subset means in exact fractions."""
    rng = np.random.default_rng(200 + n)
    for _ in range(6):
        values = rng.choice(np.arange(-5, 8), int(rng.integers(2, 5)), replace=False)
        d = rng.choice(values, n)
        if len(set(d.tolist())) < 2:
            continue
        for level in (0.5, 0.75, 0.8, 0.9, 0.95):
            for alternative in ("two-sided", "greater", "less"):
                low, high, _ = brute_interval(d.tolist(), level, alternative)
                assert lattice_interval(d, level, alternative) == (as_float(low), as_float(high)), (d, level)


@pytest.mark.parametrize("n", quick_first([14, 20, 45, 63, 64, 90, 160, 250], quick=5))
def test_lattice_route_is_exactly_the_grouped_count(n):
    """Against the subset means counted by value in exact integers: up to 63 items the route
    counts subsets in integers, beyond it sums probabilities in float64, and leaves levels that
    are multiples of 2^-20 (which p can equal) to the saddlepoint."""
    rng = np.random.default_rng(300 + n)
    checked = 0
    while checked < 4:
        m = int(rng.integers(2, 5))
        values = rng.choice(np.arange(-4, 6), m, replace=False) * int(rng.choice([1, 3]))
        d = rng.choice(values, n, p=rng.dirichlet(np.ones(m))).tolist()
        v, c = multiset(np.array(d))
        if len(c) < 2 or np.prod(c + 1) > 5000:  # keep the reference quick
            continue
        checked += 1
        for level in (0.5, 0.8, 0.95, 0.99):
            for alternative in ("two-sided", "greater", "less"):
                tail = tail_level(level, alternative)
                if n > _core.lattice_counted_items and (tail * 2**20).denominator == 1:
                    # p may equal such a level exactly, which float64 sums cannot decide.
                    assert not _core.lattice_affordable(v, c, float(tail))
                    assert pairperm.shift_interval(d, confidence_level=level, alternative=alternative).method == \
                        "saddlepoint"
                    continue
                assert lattice_interval(d, level, alternative) == grouped_interval(d, level, alternative), \
                    (dict(zip(v, c)), level, alternative)


def kept_count(groups, delta):
    """#{subsets F : sum_F (d - delta) <= 0} in exact integers, d given as {value: count}:
    over the counts taken of every value but the most frequent, the ways to take them times the
    ways to take few (or many) enough of the most frequent one."""
    last = max(groups, key=lambda v: (groups[v], v))
    others = [v for v in groups if v != last]
    c_last = groups[last]
    ways_below = [0]  # ways_below[k]: ways to take fewer than k of the most frequent value
    ways = 1
    for k in range(c_last + 1):
        ways_below.append(ways_below[-1] + ways)
        ways = ways * (c_last - k) // (k + 1)
    total = 0
    for ks in itertools.product(*(range(groups[v] + 1) for v in others)):
        ways = math.prod(math.comb(groups[v], k) for v, k in zip(others, ks))
        # k more of `last` keep the subset when k (last - delta) <= delta j - s.
        room = delta * sum(ks) - sum(k * v for k, v in zip(ks, others))
        if last > delta:
            taken = ways_below[min(max(math.floor(room / (last - delta)) + 1, 0), c_last + 1)]
        elif last < delta:
            taken = ways_below[-1] - ways_below[min(max(math.ceil(room / (last - delta)), 0), c_last + 1)]
        else:
            taken = ways_below[-1] if room >= 0 else 0
        total += ways * taken
    return total


@pytest.mark.parametrize("groups", [
    {-1: 23, 0: 1954, 1: 23},       # accuracy at N = 2000: two systems differing on 46 items
    {-1: 31, 0: 9930, 1: 39},
    {-1: 40, 0: 420, 1: 55},
    {-2: 4, 0: 3000, 1: 25, 3: 9},
    {0: 600, 5: 70},
])
def test_lattice_ends_are_exact_at_large_n(groups):
    """Each end q is a subset mean at which the exact count of kept subsets passes alpha 2^N
    while it does not just below q (closer than any other subset mean): the end exactly."""
    n = sum(groups.values())
    d = np.repeat(list(groups), list(groups.values()))
    # A one-sided 0.5 level, which p can equal exactly, is the saddlepoint's beyond 63 items.
    assert pairperm.shift_interval(d, confidence_level=0.5, alternative="greater").method == "saddlepoint"
    for level, alternative in ((0.95, "two-sided"), (0.99, "greater"), (0.9, "less"), (0.8, "greater")):
        r = pairperm.shift_interval(d, confidence_level=level, alternative=alternative)
        assert r.method == "exact"
        threshold = tail_level(level, alternative) * 2**n
        below = Fraction(1, 2 * n * n)
        for end, mirrored in ((r.mean_difference.low, False), (r.mean_difference.high, True)):
            if math.isinf(end):
                continue
            q = Fraction(end).limit_denominator(n)
            assert float(q) == end
            g = {(-v if mirrored else v): c for v, c in groups.items()}
            q = -q if mirrored else q
            assert kept_count(g, q) > threshold >= kept_count(g, q - below), (level, alternative, mirrored)


def test_lattice_route_divides_out_the_common_factor_and_takes_large_values():
    rng = np.random.default_rng(8)
    for factor in (1, 6, 2**20 + 1, 3 * 2**40):
        d = (rng.choice([-1, 0, 0, 2], 70) * factor).tolist()
        assert lattice_interval(d, 0.9, "two-sided") == grouped_interval(d, 0.9, "two-sided")
        assert pairperm.shift_interval(d, confidence_level=0.9).method == "exact"
    # Subset means s / j of values ~2^46 at N = 70 are too close for the bisection to separate.
    d = rng.choice([0, 1, 2**46 + 1], 70)
    assert pairperm.shift_interval(d).method == "saddlepoint"


@pytest.mark.parametrize("n", quick_first([31, 34, 38]))
def test_lattice_route_is_the_meet_in_the_middle_one(n):
    rng = np.random.default_rng(n)
    for values in ([-1, 0, 1], [0, 3, 5, 7], [-2, 9]):
        d = rng.choice(values, n)
        for level, alternative in ((0.9, "two-sided"), (0.95, "greater"), (0.99, "less")):
            by_subsets = pairperm.shift_interval(d, confidence_level=level, alternative=alternative, method="exact")
            by_values = pairperm.shift_interval(d, confidence_level=level, alternative=alternative)
            assert by_values.method == "exact"
            assert by_values.mean_difference == by_subsets.mean_difference


def accuracy_differences(n, minus, plus, rng):
    """0/+-1 differences in random order: `minus` -1s, `plus` +1s, zeros otherwise."""
    d = np.zeros(n, dtype=np.int64)
    d[:minus], d[minus:minus + plus] = -1, 1
    return rng.permutation(d)


def pvalue_greater(d):
    return pairperm.permutation_test(d, np.zeros(len(d), dtype=np.int64), alternative="greater").pvalue


def test_lower_end_is_above_zero_exactly_when_the_test_rejects():
    """On 0/+-1 differences (accuracy) the one-sided interval inverts the library's exact
    permutation test: its lower end is above 0 exactly when that test rejects at alpha. Each
    case is one of the two datasets (a -1s, b or b + 1 +1s) on either side of p = alpha."""
    rng = np.random.default_rng(60)
    for case in range(24):
        n = int(rng.integers(31, 201))
        level = (0.9, 0.95, 0.99)[case % 3]
        alpha = float(tail_level(level, "greater"))
        a = int(rng.integers(0, n // 3))
        lo, hi = 0, n - a  # p falls as the +1s grow: find the last count with p > alpha
        if pvalue_greater(accuracy_differences(n, a, hi, rng)) > alpha:
            continue
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if pvalue_greater(accuracy_differences(n, a, mid, rng)) > alpha else (lo, mid)
        for b in (lo, hi):
            d = accuracy_differences(n, a, b, rng)
            r = pairperm.shift_interval(d, confidence_level=level, alternative="greater")
            assert r.method == "exact"
            assert (r.mean_difference.low > 0) == (pvalue_greater(d) <= alpha), (n, a, b, level)


def test_exact_method_beyond_forty_items_for_few_distinct_values():
    rng = np.random.default_rng(41)
    d = rng.choice([-1, 0, 0, 1, 1], 120)
    r = pairperm.shift_interval(d, method="exact")
    assert r.method == "exact" and r.mean_difference == grouped_interval(d.tolist(), 0.95, "two-sided")
    assert pairperm.shift_interval(d).mean_difference == r.mean_difference
    assert pairperm.shift_interval(d, method="saddlepoint").method == "saddlepoint"


@pytest.mark.parametrize("n", [20, 60])
def test_an_end_at_zero_reads_plus_zero(n):
    d = np.r_[np.full(n - 9, 0), np.full(7, -1), np.full(2, 1)]  # the upper end is the subset mean 0
    for method in ("exact", "auto"):
        r = pairperm.shift_interval(d, method=method)
        assert r.mean_difference.high == 0 and math.copysign(1.0, r.mean_difference.high) == 1.0


def test_many_distinct_values_keep_the_saddlepoint():
    rng = np.random.default_rng(5)
    d = rng.integers(-20, 21, 300)  # 41 values: far more count vectors than the budget
    values, counts = multiset(d)
    assert not _core.lattice_affordable(values, counts, 0.025)
    assert pairperm.shift_interval(d).method == "saddlepoint"
    with pytest.raises(pairperm.SupportTooLargeError, match="few distinct"):
        pairperm.shift_interval(d, method="exact")
    # Just within and just beyond the budget: two groups of 0s and 1s and a largest group of 2s.
    budget = int(_core.lattice_budget)
    side = math.isqrt(budget)
    for counts, affordable in (((side - 1, side - 1), True), ((side, side + 1), False)):
        d = np.repeat([0, 1, 2], [counts[0], counts[1], 2 * side + 2])
        assert pairperm.shift_interval(d).method == ("exact" if affordable else "saddlepoint")


@pytest.mark.parametrize("kwargs,message", [
    (dict(x=[]), "no items"),
    (dict(x=[1, 2], y=[1]), "same length"),
    (dict(x=[1.0, np.nan]), "NaN"),
    (dict(x=[1, 2], method="fast"), "method must be one of"),
    (dict(x=[1, 2], alternative="bigger"), "alternative must be one of"),
    (dict(x=[1, 2], confidence_level=1.0), "confidence_level"),
    (dict(x=np.arange(41), method="exact"), "N <= 40"),
    (dict(x=[[1, 2]]), "1-D"),
    (dict(x=[2**60, -(2**60)], y=[-(2**60), 2**60]), "2\\*\\*53"),
])
def test_shift_interval_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pairperm.shift_interval(**kwargs)


@pytest.mark.parametrize("n,largest,negative", [(20, 1.5e308, 7), (36, 8e306, 10), (60, 1e308, 30), (80, 2e306, 30)])
def test_differences_near_the_top_of_float64_give_finite_ends_or_an_error(n, largest, negative):
    """Every route scales d by a power of two; at 2^1023 the next power overflows. The ends are
    those of the same differences scaled down by 2^-1000 (exact), scaled back, wherever the
    summed difference's ends fit in float64; where they do not, the error says so."""
    x = np.full(n, 3e306)
    x[0] = largest
    x[1:negative] = -2e306
    y = np.zeros(n)
    scale = 2.0**-1000
    for method in ("auto", "saddlepoint") + (("exact",) if n <= 40 else ()):
        small = pairperm.shift_interval(x * scale, y, method=method)
        want = ConfidenceInterval(small.mean_difference.low / scale, small.mean_difference.high / scale)
        if all(math.isfinite(n * v) for v in want):
            got = pairperm.shift_interval(x, y, method=method)
            assert got.mean_difference == want and all(math.isfinite(v) for v in got.sum_difference), method
            assert got.sum_difference == (n * want.low, n * want.high)
        else:
            with pytest.raises(ValueError, match="summed difference x - y overflows float64"):
                pairperm.shift_interval(x, y, method=method)


def test_an_interval_overflowing_like_the_statistic_raises_as_the_test_does():
    x = np.full(50, 1.7e307)
    x[::3] = -1.1e307
    with pytest.raises(ValueError, match="overflows float64"):
        pairperm.permutation_test(x, np.zeros(50))
    with pytest.raises(ValueError, match="overflows float64.*divide x and y by a common factor"):
        pairperm.shift_interval(x, np.zeros(50))


# ---------------------------------------------------------------- paired bootstrap


def test_pairs_share_the_resamples_of_bootstrap_test():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 10, (4, 60))
    r = pairperm.bootstrap_intervals(scores, n_resamples=3000, rng=11, method="percentile")
    dist = r.bootstrap_distribution
    for p, (i, j) in enumerate(r.pairs.tolist()):
        t = pairperm.bootstrap_test(scores[i], scores[j], n_resamples=3000, rng=11)
        np.testing.assert_array_equal(dist[:, i] - dist[:, j], t.bootstrap_distribution)
        assert tuple(r.difference_intervals[p]) == t.confidence_interval
        assert r.differences[p] == t.statistic
    # Each system alone sees the same resamples as in the shared run.
    alone = pairperm.bootstrap_intervals([scores[2]], n_resamples=3000, rng=11, method="percentile")
    np.testing.assert_array_equal(alone.bootstrap_distribution[:, 0], dist[:, 2])
    assert r.pairs.tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]


def test_shared_resamples_recomputed_from_the_count_vectors():
    """Every column of the distribution is the metric of the same count vectors times that
    system's statistics (F1 from summed tp/fp/fn)."""
    rng = np.random.default_rng(5)
    n, k = 40, 3
    scores = rng.integers(0, 5, (k, n, 3))
    r = pairperm.bootstrap_intervals(scores, "f1", n_resamples=500, rng=3, method="percentile")
    # One system's resampled metric determines the resample only up to ties; use the counts
    # drawn for a one-hot "mean" metric, whose resampled sums are the count vectors themselves.
    counts = np.stack([pairperm.bootstrap_intervals([np.eye(n)[i]], n_resamples=500, rng=3,
                                                    method="percentile").bootstrap_distribution[:, 0] * n
                       for i in range(n)], axis=1)
    np.testing.assert_allclose(counts.sum(axis=1), n)
    for j in range(k):
        np.testing.assert_allclose(r.bootstrap_distribution[:, j], f1_from_sums(counts @ scores[j]), rtol=1e-12)
    np.testing.assert_allclose(r.estimates, [f1_from_sums(s.sum(axis=0)) for s in scores])


def percentile_reference(values, tail):
    from scipy import stats

    return stats.scoreatpercentile(values, 100 * tail), stats.scoreatpercentile(values, 100 * (1 - tail))


def efron_bca(values, estimate, jackknife, tail):
    """Efron & Tibshirani (1993), eq. 14.10-14.15, written out independently."""
    from scipy import stats

    z0 = stats.norm.ppf((np.sum(values < estimate) + np.sum(values <= estimate)) / (2 * len(values)))
    u = jackknife.mean() - jackknife
    a = np.sum(u**3) / (6 * np.sum(u**2) ** 1.5)
    levels = [stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in stats.norm.ppf([tail, 1 - tail])]
    return tuple(np.percentile(values, 100 * np.array(levels)))


def test_percentile_and_bca_endpoints_equal_the_references_on_the_same_resamples():
    rng = np.random.default_rng(9)
    n = 50
    scores = rng.integers(0, 6, (3, n, 3))
    for method in ("percentile", "bca"):
        r = pairperm.bootstrap_intervals(scores, "f1", n_resamples=4000, rng=2, method=method, confidence_level=0.9)
        for j in range(3):
            values = r.bootstrap_distribution[:, j]
            if method == "percentile":
                want = percentile_reference(values, 0.05)
            else:
                # Jackknife by deleting each item and recomputing F1 from scratch.
                jack = np.array([f1_from_sums(np.delete(scores[j], i, axis=0).sum(axis=0)) for i in range(n)])
                want = efron_bca(values, r.estimates[j], jack, 0.05)
            np.testing.assert_allclose(r.intervals[j], want, rtol=1e-12)
        i, j = r.pairs[0]
        diff = r.bootstrap_distribution[:, i] - r.bootstrap_distribution[:, j]
        if method == "bca":
            jack = np.array([f1_from_sums(np.delete(scores[i], m, axis=0).sum(axis=0))
                             - f1_from_sums(np.delete(scores[j], m, axis=0).sum(axis=0)) for m in range(n)])
            np.testing.assert_allclose(r.difference_intervals[0], efron_bca(diff, r.differences[0], jack, 0.05),
                                       rtol=1e-12)


def test_bca_equals_scipys_own_bca_code_on_the_same_resamples():
    stats = pytest.importorskip("scipy.stats")
    from scipy.stats import _resampling

    params = inspect.signature(_resampling._bca_interval).parameters
    if list(params) != ["data", "statistic", "axis", "alpha", "theta_hat_b", "batch", "xp"]:
        pytest.skip("this scipy's private BCa helper has another signature; Efron's formulas are tested above")
    rng = np.random.default_rng(4)
    x = rng.gamma(2.0, 1.0, 80)
    r = pairperm.bootstrap_intervals([x], n_resamples=5000, rng=8, method="bca")
    values = r.bootstrap_distribution[:, 0]
    lo, hi, _ = _resampling._bca_interval((x,), np.mean, axis=-1, alpha=0.025, theta_hat_b=values[None, :],
                                          batch=None, xp=np)
    want = stats.quantile(values, np.array([float(np.squeeze(lo)), float(np.squeeze(hi))]))
    np.testing.assert_allclose(r.intervals[0], want, rtol=1e-12)


def test_bca_agrees_with_scipy_bootstrap_on_a_normal_mean():
    """Different resamples, same estimator: the endpoints agree within the resampling noise,
    and over many datasets the coverage of the true mean is near the nominal level."""
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(21)
    x = rng.normal(1.0, 2.0, 60)
    ours = pairperm.bootstrap_intervals([x], n_resamples=20000, rng=1).intervals[0]
    # The generator's keyword was random_state before scipy 1.15.
    seed_kw = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state"
    theirs = stats.bootstrap((x,), np.mean, n_resamples=20000, method="BCa", **{seed_kw: np.random.default_rng(2)})
    se = x.std(ddof=1) / math.sqrt(len(x))
    assert abs(ours[0] - theirs.confidence_interval.low) < 0.05 * se
    assert abs(ours[1] - theirs.confidence_interval.high) < 0.05 * se
    covered = 0
    for _ in range(200):
        x = rng.normal(1.0, 2.0, 40)
        low, high = pairperm.bootstrap_intervals([x], n_resamples=1000, rng=rng).intervals[0]
        covered += low <= 1.0 <= high
    assert 0.88 <= covered / 200 <= 0.99


def test_one_sided_bootstrap_intervals():
    rng = np.random.default_rng(6)
    scores = rng.normal(size=(2, 50))
    two = pairperm.bootstrap_intervals(scores, n_resamples=2000, rng=0, method="percentile", confidence_level=0.9)
    less = pairperm.bootstrap_intervals(scores, n_resamples=2000, rng=0, method="percentile", confidence_level=0.95,
                                        alternative="less")
    greater = pairperm.bootstrap_intervals(scores, n_resamples=2000, rng=0, method="percentile",
                                           confidence_level=0.95, alternative="greater")
    assert np.all(np.isneginf(less.intervals[:, 0])) and np.all(np.isposinf(greater.intervals[:, 1]))
    # The same quantile levels up to the rounding of 1 - 0.95 and (1 - 0.9) / 2.
    np.testing.assert_allclose(less.intervals[:, 1], two.intervals[:, 1], rtol=1e-12)
    np.testing.assert_allclose(greater.difference_intervals[:, 0], two.difference_intervals[:, 0], rtol=1e-12)


def test_bleu_and_callable_metrics():
    rng = np.random.default_rng(8)
    n = 30
    total = rng.integers(5, 20, (2, n, 1))
    stats = np.concatenate([total, total, np.minimum(total, rng.integers(0, 15, (2, n, 4))),
                            np.repeat(total, 4, axis=2)], axis=2)
    r = pairperm.bootstrap_intervals(stats, "bleu", n_resamples=500, rng=0)
    t = pairperm.bootstrap_test(stats[0], stats[1], "bleu", n_resamples=500, rng=0)
    assert r.differences[0] == pytest.approx(t.statistic)
    assert np.all(r.intervals[:, 0] <= r.estimates) and np.all(r.estimates <= r.intervals[:, 1])
    custom = pairperm.bootstrap_intervals(stats, lambda s: s[:, 2] / s[:, 6], n_resamples=500, rng=0,
                                          method="percentile")
    np.testing.assert_allclose(custom.estimates, stats[:, :, 2].sum(axis=1) / stats[:, :, 6].sum(axis=1))


def test_constant_scores_give_a_point_interval_and_bca_refuses_one_sided_resamples():
    r = pairperm.bootstrap_intervals([np.full(20, 0.5), np.full(20, 0.5)], n_resamples=200, rng=0)
    np.testing.assert_array_equal(r.intervals, [[0.5, 0.5], [0.5, 0.5]])
    # A squared distance from the full-data sum is 0 on the full data and positive on every
    # resample (real-valued sums never repeat it exactly): the bias correction is infinite.
    x = np.random.default_rng(0).normal(size=20)
    with pytest.raises(ValueError, match="method='percentile'"):
        pairperm.bootstrap_intervals([x], lambda s: (s - x.sum()) ** 2, n_resamples=200, rng=0)


@pytest.mark.parametrize("scale", [1e120, 1e200])
def test_bca_refuses_scores_whose_acceleration_overflows(scale):
    # The jackknife's sum of squares overflows to inf (1e200: the acceleration is inf / inf) or its
    # 1.5th power overflows (1e120): either way there are no BCa levels, and the error says why.
    x = np.array([1, -1, 3, -2, 0.5, 0.1, -3, 2]) * scale
    with pytest.raises(ValueError, match="too large for the acceleration"):
        pairperm.bootstrap_intervals([x, x[::-1] * 0.9], "mean", method="bca", n_resamples=200, rng=1)
    r = pairperm.bootstrap_intervals([x, x[::-1] * 0.9], "mean", method="percentile", n_resamples=200, rng=1)
    assert np.all(np.isfinite(r.intervals))


@pytest.mark.parametrize("kwargs,message", [
    (dict(scores=[]), "no systems"),
    (dict(scores=[[1, 2], [1]]), "same length"),
    (dict(scores=[[], []]), "no items"),
    (dict(scores=[[1, 2], [3, 4]], method="BCa"), "method must be one of"),
    (dict(scores=[[1, 2], [3, 4]], pairs=[[0, 2]]), "outside 0..1"),
    (dict(scores=[[1, 2], [3, 4]], pairs=[0, 1]), "shape \\(P, 2\\)"),
    (dict(scores=[[[1, 0, 0]], [[-1, 0, 0]]], metric="f1"), "non-negative"),
    (dict(scores=[[1, 2], [3, 4]], n_resamples=0), "n_resamples"),
    (dict(scores=[[1, 2], [3, 4]], confidence_level=0), "confidence_level"),
])
def test_bootstrap_interval_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pairperm.bootstrap_intervals(**kwargs)


# ---------------------------------------------------------------- many pairs, unsampled bootstrap


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_batch_shift_bounds_are_the_single_pair_route_bit_for_bit(alternative):
    rng = np.random.default_rng(11)
    routes = collections.Counter()
    for k, n in enumerate((31, 57, 400, 90)):
        matrix = np.concatenate([
            (rng.random((3, n)) < rng.random((3, 1))).astype(np.int64),     # 0/1: the lattice route
            rng.integers(-5, 6, (2, n)),                                    # narrow range: tallied
            rng.integers(-10**12, 10**12, (2, n)),                          # wide range: sorted
            np.where(rng.random((1, n)) < 0.9, 0, rng.integers(-3, 4, (1, n))),  # mostly ties
            rng.choice([0, 2**40, 3 * 2**40], (1, n)),                      # few values, large
        ])
        pairs = np.array([(i, j) for i in range(len(matrix)) for j in range(len(matrix)) if i != j])
        level = (0.9, 0.95, 1 - 1e-9, 0.5)[k]
        got = batch_shift_bounds(matrix, pairs, level, alternative, None)
        for (i, j), ends in zip(pairs, got):
            want = pairperm.shift_interval(matrix[i], matrix[j], confidence_level=level, alternative=alternative)
            # As bit patterns: 0.0 and -0.0 differ.
            np.testing.assert_array_equal(ends.view(np.int64), np.array(list(want.mean_difference)).view(np.int64))
            routes[want.method] += 1
    assert routes["exact"] >= 30 and routes["saddlepoint"] >= 30


def test_batch_shift_bounds_refuse_differences_beyond_exact_float64_subset_means():
    big = np.array([[2**62] * 40, [-2**62] * 40, [2**53] * 40, [0] * 40, [2**53 - 1] * 40], dtype=np.int64)
    got = batch_shift_bounds(big, np.array([[0, 1], [2, 3], [4, 3]]), 0.95, "two-sided", 1)
    assert np.isnan(got[:2]).all()  # int64 overflow; a difference of 2^53
    assert got[2].tolist() == [2**53 - 1] * 2


def _exact_bootstrap_cdf(values, counts):
    """P[S <= n min + k] for S the sum of n iid draws from integer values (exact convolution)."""
    n = int(sum(counts))
    lo = min(values)
    pmf = np.zeros(max(values) - lo + 1)
    for v, c in zip(values, counts):
        pmf[v - lo] += c / n
    dist = np.array([1.0])
    for _ in range(n):
        dist = np.convolve(dist, pmf)
    return np.cumsum(dist)


def test_unsampled_bootstrap_quantiles_against_the_exact_resampling_distribution():
    # The saddlepoint quantile is the exact one, or its lattice neighbour where the exact CDF
    # passes within 0.003 of the level (the approximation's error from N = 20 on; it reaches
    # ~0.015 below 10 items).
    rng = np.random.default_rng(3)
    exact = neighbour = 0
    for _ in range(150):
        m, n = int(rng.integers(2, 5)), int(rng.integers(20, 60))
        values = np.sort(rng.choice(np.arange(-4, 6), m, replace=False)) * int(rng.choice([1, 3]))
        counts = rng.multinomial(n - m, np.ones(m) / m) + 1
        a = np.repeat(values, counts)
        span = int(np.gcd.reduce(values - values[0]))
        cdf = _exact_bootstrap_cdf(values.tolist(), counts.tolist())
        means = bootstrap_mean_intervals([a], 0.95)[0]
        for q, mean in zip((0.025, 0.975), means):
            end = round(mean * n)
            assert mean == end / n
            want = n * values[0] + int(np.searchsorted(cdf, q * (1 - 1e-12)))  # least s with P[S <= s] >= q
            assert (end - n * values[0]) % span == 0  # on the lattice
            if end == want:
                exact += 1
            else:
                assert abs(end - want) == span and abs(cdf[int(min(end, want) - n * values[0])] - q) < 0.003
                neighbour += 1
    assert exact > 10 * neighbour


def test_unsampled_bootstrap_of_an_accuracy_is_the_binomial_and_of_real_scores_the_sampled_limit():
    stats = pytest.importorskip("scipy.stats")
    for n, hits in [(30, 21), (500, 310), (1000, 20), (14_000, 8_700), (100_000, 99_000)]:
        a = np.repeat([1, 0], [hits, n - hits])
        for level in (0.9, 0.95):
            want = stats.binom.ppf([(1 - level) / 2, (1 + level) / 2], n, hits / n) / n
            np.testing.assert_array_equal(bootstrap_mean_intervals([a, a.astype(float)], level), [want, want])
    rng = np.random.default_rng(4)
    x = rng.normal(size=300) ** 2  # skewed, continuous
    got = bootstrap_mean_intervals([x], 0.95)[0]
    means = x[rng.integers(0, 300, (100_000, 300))].mean(axis=1)
    np.testing.assert_allclose(got, np.quantile(means, [0.025, 0.975]), atol=0.003 * (got[1] - got[0]) + 1e-3)
    assert bootstrap_mean_intervals([np.full(7, 2.5), np.full(3, -4)], 0.95).tolist() == [[2.5, 2.5], [-4, -4]]


def test_levels_p_can_equal_are_not_left_to_float_sums():
    """Beyond 63 items the lattice route sums probabilities in float64; at a level that is a
    multiple of 2^-20 p(delta) equals the level over whole ranges of delta when few items lie
    off the most frequent value, and such sums returned ends far from the exact ones, or raised."""
    for d, level in (([1] * 2 + [0] * 198, 0.5), ([1] * 2 + [0] * 109, 0.5), ([1] * 4 + [0] * 996, 0.875),
                     ([-1] + [1] * 2 + [0] * 61, 0.9375)):
        for alternative in ("two-sided", "greater"):
            r = pairperm.shift_interval(d, confidence_level=level, alternative=alternative)
            assert r.method == "saddlepoint" and not math.isnan(r.mean_difference.low)
    # Up to 63 items the subsets are counted in integers: those levels are exact there.
    d = [1] * 2 + [0] * 40
    r = pairperm.shift_interval(d, confidence_level=0.5)
    assert r.method == "exact" and r.mean_difference == grouped_interval(d, 0.5, "two-sided")
    # compare_systems' batch takes the same decision for every pair.
    rows = np.zeros((3, 111), dtype=np.int64)
    rows[0, :2] = 1
    res = pairperm.compare_systems(rows, "accuracy", confidence_level=0.5, progress=False)
    assert all(math.isfinite(r.ci_low) for r in res.rows)
