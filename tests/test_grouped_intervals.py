"""Intervals of tests that swap whole units (groups=, (N, k) samples) when units differ in size.

Shifting every item by delta moves unit u's summed difference by n_u * delta, where n_u is the
number of its scored items. The ends of each interval must be where the grouped test of
x - delta changes its decision. References: the grouped tests' decisions listed over all 2^U
swap patterns in exact fractions, and the order statistics of the units' means listed directly.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import pairperm
from pairperm._intervals import tail_level


def unequal_units(rng, n_units, largest=8, low=-3, high=4):
    """Integer scores of items in units of unequal size, and the unit of each item."""
    sizes = rng.integers(1, largest + 1, n_units)
    sizes[0] = largest  # at least one large unit beside small ones
    sizes[1] = 1
    groups = np.repeat(np.arange(n_units), sizes)
    rng.shuffle(groups)
    x = rng.integers(low, high, len(groups))
    y = rng.integers(low, high, len(groups))
    return x, y, groups


def unit_totals(x, y, groups):
    """(summed difference, items) of each unit, as Python ints (or the fractions given)."""
    labels = sorted(set(groups.tolist()))
    d = [sum(x[groups == g].tolist()) - sum(y[groups == g].tolist()) for g in labels]
    n = [int(np.sum(groups == g)) for g in labels]
    return d, n


def grouped_p_greater(d, n, delta):
    """p of the test of x - delta swapping whole units ("greater", ties counting): the share of
    the 2^U swap patterns whose flipped units sum to at most 0, in exact fractions."""
    e = [Fraction(di) - ni * delta for di, ni in zip(d, n)]
    hits = sum(1 for r in range(len(e) + 1) for f in itertools.combinations(e, r) if sum(f) <= 0)
    return Fraction(hits, 2 ** len(e))


def lower_end(d, n, tail):
    """The least shift the one-sided ("greater") grouped test keeps at level `tail`. p(delta)
    counts the empty pattern and every non-empty set A of flipped units with
    sum_A d - delta sum_A n <= 0, i.e. with subset mean sum_A d / sum_A n <= delta: so p only
    changes at subset means, and the end is the least one where p exceeds the tail. Checked
    against the definition (grouped_p_greater) there and at the subset mean just below."""
    if Fraction(1, 2 ** len(d)) > tail:
        return -math.inf
    means = sorted(Fraction(sum(d[i] for i in f), sum(n[i] for i in f))
                   for r in range(1, len(d) + 1) for f in itertools.combinations(range(len(d)), r))
    below = None
    for k, m in enumerate(means):
        if k + 1 < len(means) and means[k + 1] == m:
            continue  # count every subset of this mean first
        if Fraction(1 + k + 1, 2 ** len(d)) > tail:
            assert grouped_p_greater(d, n, m) > tail
            assert below is None or grouped_p_greater(d, n, below) <= tail
            return m
        below = m
    raise AssertionError("p(max mean) = 1 exceeds every tail")


def brute_grouped_interval(d, n, confidence_level, alternative):
    """The inversion interval as exact fractions (or infinities)."""
    tail = tail_level(confidence_level, alternative)
    low = lower_end(d, n, tail) if alternative != "less" else None
    high = -lower_end([-v for v in d], n, tail) if alternative != "greater" else None
    return low, high


def close(value, reference):
    if isinstance(reference, float):
        return value == reference
    return value == pytest.approx(float(reference), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_permutation_interval_ends_are_where_the_grouped_test_turns(seed, alternative):
    rng = np.random.default_rng(seed)
    x, y, groups = unequal_units(rng, 9)
    d, n = unit_totals(x, y, groups)
    r = pairperm.permutation_test(x, y, groups=groups, alternative=alternative)
    ci = r.confidence_interval(0.8)
    low, high = brute_grouped_interval(d, n, 0.8, alternative)
    items = len(x)
    if alternative != "less":
        assert close(ci.low, low * items), (ci, low)
    if alternative != "greater":
        assert close(ci.high, high * items), (ci, high)
    # The mean difference's interval, as compare() reports it, is the same per item.
    c = pairperm.compare(x, y, "mean", groups=groups, alternative=alternative)
    mean_ci = c.confidence_interval(0.8)
    if alternative != "less":
        assert close(mean_ci.low, low)
    if alternative != "greater":
        assert close(mean_ci.high, high)


def test_the_unit_sums_shifted_alike_are_not_the_interval():
    """The same data with every unit sum shifted by one delta (the interval of the unit sums as if
    each were one item) gives other ends: the test must see the units' sizes."""
    rng = np.random.default_rng(3)
    x, y, groups = unequal_units(rng, 9)
    d, n = unit_totals(x, y, groups)
    as_items = pairperm.shift_interval(np.array(d), confidence_level=0.8).mean_difference
    grouped = pairperm.permutation_test(x, y, groups=groups).confidence_interval(0.8)
    low, high = brute_grouped_interval(d, n, 0.8, "two-sided")
    assert close(grouped.low, low * len(x)) and close(grouped.high, high * len(x))
    assert (as_items.low * len(d), as_items.high * len(d)) != pytest.approx((grouped.low, grouped.high))


@pytest.mark.parametrize("seed", range(3))
def test_real_valued_scores_in_unequal_units(seed):
    rng = np.random.default_rng(10 + seed)
    _, _, groups = unequal_units(rng, 8)
    x = np.round(rng.normal(0.3, 1, len(groups)), 3)
    y = np.round(rng.normal(0, 1, len(groups)), 3)
    d, n = unit_totals(np.array([Fraction(str(v)) for v in x], dtype=object),
                       np.array([Fraction(str(v)) for v in y], dtype=object), groups)
    ci = pairperm.compare(x, y, "mean", groups=groups).confidence_interval(0.9)
    low, high = brute_grouped_interval(d, n, 0.9, "two-sided")
    assert ci.low == pytest.approx(float(low), rel=1e-9, abs=1e-12)
    assert ci.high == pytest.approx(float(high), rel=1e-9, abs=1e-12)


def test_samples_per_item_and_groups_count_every_sample():
    """(N, k) scores in groups of unequal size: a unit holds k samples of each of its items."""
    rng = np.random.default_rng(5)
    groups = np.array([0, 0, 0, 0, 1, 2, 3, 4, 4, 5, 6, 7])
    x = rng.integers(0, 2, (len(groups), 3))
    y = rng.integers(0, 2, (len(groups), 3))
    d, n = unit_totals(x.sum(axis=1), y.sum(axis=1), groups)
    n = [3 * v for v in n]
    ci = pairperm.permutation_test(x, y, groups=groups).confidence_interval(0.8)
    low, high = brute_grouped_interval(d, n, 0.8, "two-sided")
    assert close(ci.low, low * x.size) and close(ci.high, high * x.size)


def test_saddlepoint_ends_for_many_unequal_units_agree_with_the_exact_ones():
    rng = np.random.default_rng(7)
    x, y, groups = unequal_units(rng, 36, largest=12)
    effect = pairperm.permutation_test(x, y, groups=groups)
    exact = effect.confidence_interval(0.95, method="exact")
    approx = effect.confidence_interval(0.95, method="saddlepoint")
    auto = effect.confidence_interval(0.95)
    width = exact.high - exact.low
    assert auto == approx  # beyond 30 units "auto" takes the saddlepoint
    assert abs(approx.low - exact.low) <= 0.02 * width and abs(approx.high - exact.high) <= 0.02 * width


def test_exact_method_refuses_more_than_forty_unequal_units():
    rng = np.random.default_rng(8)
    x, y, groups = unequal_units(rng, 45)
    r = pairperm.permutation_test(x, y, groups=groups)
    with pytest.raises(pairperm.SupportTooLargeError, match="unequal size is limited to 40 units"):
        r.confidence_interval(method="exact")


def test_compare_systems_rows_with_unequal_units():
    rng = np.random.default_rng(11)
    _, _, groups = unequal_units(rng, 9)
    systems = {name: rng.integers(0, 4, len(groups)) for name in "abc"}
    for metric, scale in (("sum", len(groups)), ("mean", 1)):
        res = pairperm.compare_systems(systems, metric, groups=groups, confidence_level=0.8, progress=False)
        for row in res.rows:
            d, n = unit_totals(systems[row.system_a], systems[row.system_b], groups)
            low, high = brute_grouped_interval(d, n, 0.8, "two-sided")
            assert close(row.ci_low, low * scale) and close(row.ci_high, high * scale), (metric, row)


def test_compare_systems_rows_with_many_unequal_units_take_each_pairs_own_route():
    """Beyond 30 units the batch of one score matrix would shift unit sums alike: each pair's
    interval is then the single-pair one of its result."""
    rng = np.random.default_rng(12)
    _, _, groups = unequal_units(rng, 60)
    systems = {name: rng.integers(0, 3, len(groups)) for name in "abc"}
    res = pairperm.compare_systems(systems, "mean", groups=groups, confidence_level=0.9, progress=False)
    for row in res.rows:
        single = pairperm.compare(systems[row.system_a], systems[row.system_b], "mean", groups=groups)
        ci = single.confidence_interval(0.9)
        assert (row.ci_low, row.ci_high) == (ci.low, ci.high)


def sign_flips_at(d, n):
    """Each unit's own mean d / n, where its sign under a shift of every item changes."""
    return sorted(Fraction(di, ni) for di, ni in zip(d, n))


def walsh_means(d, n):
    """(d_u + d_v) / (n_u + n_v) for u <= v: where the sign of a pair's shifted sum changes."""
    return sorted(Fraction(d[u] + d[v], n[u] + n[v]) for u in range(len(d)) for v in range(u, len(d)))


def kept_by(test, x, y, groups, delta, tail):
    """Whether the two-sided test of x - delta (two one-sided tests at `tail` each) keeps delta."""
    return min(test(x - delta, y, groups=groups, alternative=a).pvalue for a in ("greater", "less")) > tail


@pytest.mark.parametrize("seed", range(4))
def test_sign_and_signed_rank_intervals_are_of_the_units_means(seed):
    rng = np.random.default_rng(20 + seed)
    x, y, groups = unequal_units(rng, 14)
    d, n = unit_totals(x, y, groups)
    for test, candidates in ((pairperm.sign_test, sign_flips_at(d, n)), (pairperm.wilcoxon_test, walsh_means(d, n))):
        r = test(x, y, groups=groups)
        m = len(candidates)
        median = candidates[m // 2] if m % 2 else (candidates[m // 2 - 1] + candidates[m // 2]) / 2
        assert r.difference == pytest.approx(float(median), rel=1e-12), test
        low, high = r.confidence_interval(0.8)
        assert any(low == pytest.approx(float(v), rel=1e-12) for v in candidates), test
        assert any(high == pytest.approx(float(v), rel=1e-12) for v in candidates), test
        # Just inside the ends the test of x - delta keeps delta; just outside it rejects it.
        for delta, inside in ((low + 1e-7, True), (high - 1e-7, True), (low - 1e-7, False), (high + 1e-7, False)):
            assert kept_by(test, x, y, groups, delta, 0.1) == inside, (test, delta, low, high)


def test_weighted_walsh_bisection_equals_the_listed_order_statistics():
    from pairperm._difference import weighted_walsh_order_statistic

    rng = np.random.default_rng(30)
    n_units = 2500  # beyond the listed route
    d = rng.integers(-20, 25, n_units).astype(np.float64)
    sizes = rng.integers(1, 9, n_units)
    iu, ju = np.triu_indices(n_units)
    listed = np.sort((d[iu] + d[ju]) / (sizes[iu] + sizes[ju]))
    for k in (1, 17, len(listed) // 3, len(listed) // 2, len(listed) - 5, len(listed)):
        assert weighted_walsh_order_statistic(d, sizes, k) == pytest.approx(listed[k - 1], rel=1e-12, abs=1e-12)


def test_coverage_of_grouped_intervals_with_one_large_unit():
    """One unit of 40 items and 19 of one item, each item's difference centred on 0.2: the 90%
    interval of the mean difference covers 0.2 at least 90% of the time (within sampling error)."""
    rng = np.random.default_rng(99)
    groups = np.concatenate([np.zeros(40, dtype=int), np.arange(1, 20)])
    covered, trials = 0, 400
    for _ in range(trials):
        unit_effect = rng.normal(0, 0.5, 20)[groups]  # shared within a unit
        x = 0.2 + unit_effect + rng.normal(0, 1, len(groups))
        y = np.zeros(len(groups))
        ci = pairperm.compare(x, y, "mean", groups=groups).confidence_interval(0.9)
        covered += ci.low <= 0.2 <= ci.high
    assert covered / trials >= 0.9 - 3 * math.sqrt(0.09 / trials)
