"""Exchangeable units (groups=) and several samples per item ((N, k) scores): every test
against brute force over the 2^U swap patterns of whole units, formed item by item in exact
arithmetic (Python ints and Fractions), never from the library's unit sums."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats

import pairperm
from reference import rejects, wilcoxon_reference

ALTERNATIVES = ("two-sided", "greater", "less")


def unit_patterns(labels):
    """Per swap pattern of whole units, a 0/1 flag per item."""
    units = sorted(set(labels), key=str)
    for pattern in itertools.product((0, 1), repeat=len(units)):
        swapped = {u for u, c in zip(units, pattern) if c}
        yield [int(lab in swapped) for lab in labels]


def brute_unit_pvalue(x, y, labels, statistic, alternative, centre=0):
    """P-value of statistic(rows of A, rows of B) over all whole-unit swaps, exactly."""
    xs = [tuple(np.atleast_1d(r).tolist()) for r in x]
    ys = [tuple(np.atleast_1d(r).tolist()) for r in y]
    observed = statistic(xs, ys)
    hits = total = 0
    for flags in unit_patterns(labels):
        a = [v if f else u for u, v, f in zip(xs, ys, flags)]
        b = [u if f else v for u, v, f in zip(xs, ys, flags)]
        hits += rejects(statistic(a, b), observed, alternative, centre)
        total += 1
    return Fraction(hits, total)


def sum_difference(a, b):
    return sum(Fraction(v) for r in a for v in r) - sum(Fraction(v) for r in b for v in r)


def case(seed, n=14, units=6, high=5):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, units, n)
    labels[:units] = np.arange(units)  # every unit present
    return rng.integers(0, high, n), rng.integers(0, high, n), labels


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("seed", range(4))
def test_permutation_test_swaps_whole_units(seed, alternative):
    x, y, labels = case(seed)
    got = pairperm.permutation_test(x, y, groups=labels, alternative=alternative)
    want = brute_unit_pvalue(x, y, labels.tolist(), sum_difference, alternative)
    assert got.pvalue == pytest.approx(float(want), rel=1e-12)
    assert got.statistic == int(x.sum() - y.sum())
    # The unit is not the item: the p-value of items swapped one by one differs here.
    if seed == 0 and alternative == "two-sided":
        assert pairperm.permutation_test(x, y).pvalue != got.pvalue


def test_string_labels_and_real_scores():
    rng = np.random.default_rng(9)
    x, y = rng.normal(size=12).round(3), rng.normal(size=12).round(3)
    labels = np.array([f"p{i % 5}" for i in range(12)], dtype=object)
    got = pairperm.permutation_test(x, y, groups=labels, method="exact")
    want = brute_unit_pvalue(x, y, labels.tolist(), sum_difference, "two-sided")
    assert got.pvalue == pytest.approx(float(want), rel=1e-9)


def test_samples_per_item_are_one_unit_and_combine_with_groups():
    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 2, (7, 3)), rng.integers(0, 2, (7, 3))  # 3 generations per prompt
    got = pairperm.permutation_test(x, y)
    items = list(range(7))
    want = brute_unit_pvalue(x, y, items, sum_difference, "two-sided")
    assert got.pvalue == pytest.approx(float(want), rel=1e-12)
    labels = [0, 0, 1, 2, 2, 3, 3]
    got = pairperm.permutation_test(x, y, groups=labels, alternative="greater")
    assert got.pvalue == pytest.approx(float(brute_unit_pvalue(x, y, labels, sum_difference, "greater")), rel=1e-12)
    # compare(): the same test, and the accuracy is per sample, not per unit sum.
    c = pairperm.compare(x, y, "accuracy")
    assert c.test == "permutation_test" and c.pvalue == pairperm.permutation_test(x, y).pvalue


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_f1_with_groups_is_exact_over_unit_swaps(alternative):
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 4, 13)
    tp_a, tp_b = rng.binomial(gold, 0.8), rng.binomial(gold, 0.5)
    a = np.column_stack([tp_a, rng.integers(0, 2, 13), gold - tp_a])
    b = np.column_stack([tp_b, rng.integers(0, 2, 13), gold - tp_b])
    labels = [i // 2 for i in range(13)]

    def f1_difference(ra, rb):
        def f1(rows):
            tp, fp, fn = (sum(r[j] for r in rows) for j in range(3))
            return Fraction(0) if 2 * tp + fp + fn == 0 else Fraction(2 * tp, 2 * tp + fp + fn)
        return f1(ra) - f1(rb)

    got = pairperm.f1_test(a, b, groups=labels, alternative=alternative)
    want = brute_unit_pvalue(a, b, labels, f1_difference, alternative)
    assert got.pvalue == pytest.approx(float(want), rel=1e-9)


def test_structured_and_monte_carlo_callables_sum_local_effects_per_unit():
    rng = np.random.default_rng(8)
    stay = rng.integers(-3, 4, (10, 2))
    swap = rng.integers(-3, 4, (10, 2))
    labels = [0, 0, 1, 1, 2, 3, 3, 4, 5, 5]

    def h(s):
        return 2 * s[:, 0] - s[:, 1] ** 2

    def h_exact(a, b):  # h of the summed chosen local effects (the "A" rows are the chosen ones)
        s0 = sum(r[0] for r in a)
        s1 = sum(r[1] for r in a)
        return 2 * s0 - s1 ** 2

    got = pairperm.structured_test(stay, swap, h, groups=labels, alternative="greater")
    want = brute_unit_pvalue(stay, swap, labels, h_exact, "greater")
    assert got.pvalue == pytest.approx(float(want), rel=1e-12)
    mc = pairperm.monte_carlo_test(stay, swap, h, groups=labels, alternative="greater", n_resamples=20_000, rng=1)
    lo, hi = mc.pvalue_ci
    assert lo <= float(want) <= hi


def test_wilcoxon_and_sign_test_rank_and_sign_unit_sums():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=15), rng.normal(size=15) - 0.3
    labels = [i % 8 for i in range(15)]
    ux = np.array([x[[i for i in range(15) if labels[i] == u]].sum() for u in range(8)])
    uy = np.array([y[[i for i in range(15) if labels[i] == u]].sum() for u in range(8)])
    w = pairperm.wilcoxon_test(x, y, groups=labels)
    p_ref, r_plus, r_minus = wilcoxon_reference(ux, uy, "wilcox", "two-sided")
    assert w.pvalue == pytest.approx(float(p_ref), rel=1e-12) and (w.r_plus, w.r_minus) == (r_plus, r_minus)
    # Without ties or zeros the exact signed-rank test of the units is scipy's exact test.
    assert w.pvalue == pytest.approx(scipy.stats.wilcoxon(ux, uy, method="exact").pvalue, rel=1e-12)
    s = pairperm.sign_test(x, y, groups=labels, alternative="greater")
    pos = int((ux > uy).sum())
    assert s.n_positive == pos and s.n_positive + s.n_negative + s.n_zero == 8
    assert s.pvalue == pytest.approx(scipy.stats.binomtest(pos, 8, alternative="greater").pvalue, rel=1e-12)


def test_compare_passes_groups_to_every_route():
    x, y, labels = case(1)
    c = pairperm.compare(x, y, "sum", groups=labels)
    assert c.pvalue == pairperm.permutation_test(x, y, groups=labels).pvalue
    xb, yb = (x > 2).astype(int), (y > 2).astype(int)
    c = pairperm.compare(xb, yb, "accuracy", groups=labels)  # per-unit counts are not 0/1: no McNemar
    assert c.test == "permutation_test" and c.pvalue == pairperm.permutation_test(xb, yb, groups=labels).pvalue
    c = pairperm.compare(x + 1.5, y + 1.25, "perplexity", groups=labels)  # perplexities are at least 1
    assert c.pvalue == pairperm.wilcoxon_test(x + 1.5, y + 1.25, groups=labels, alternative="two-sided").pvalue


def test_cluster_bootstrap_resamples_whole_units():
    rng = np.random.default_rng(5)
    x, y = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
    labels = np.repeat(np.arange(10), 4)
    r = pairperm.bootstrap_test(x, y, groups=labels, n_resamples=3000, rng=0)
    assert r.metric_a == pytest.approx(x.mean()) and r.metric_b == pytest.approx(y.mean())
    # Units of equal size: the cluster bootstrap of the mean is the bootstrap of the unit means.
    ux, uy = x.reshape(10, 4).mean(axis=1), y.reshape(10, 4).mean(axis=1)
    same = pairperm.bootstrap_test(ux, uy, n_resamples=3000, rng=0)
    assert r.pvalue == same.pvalue and r.confidence_interval == pytest.approx(same.confidence_interval)


@pytest.mark.parametrize("groups,message", [
    ([0, 1], "label each of the 6 items"),
    ([0.0, 1.0, float("nan"), 1.0, 0.0, 1.0], "missing label at index 2"),
    (np.array([0.0, 1.0, np.nan, 1.0, 0.0, 1.0]), "NaN"),
    (np.array([0, "a", 1, 1, 0, 0], dtype=object), "different kinds"),
    (np.array(["a", None, "b", "b", "a", "a"], dtype=object), "missing label"),
    ([7] * 6, "one unit"),
    ([[0, 1]] * 6, "1-D"),
])
def test_bad_groups_are_clear_errors(groups, message):
    with pytest.raises(ValueError, match=message):
        pairperm.permutation_test([1, 2, 3, 4, 5, 6], [0, 2, 2, 4, 4, 7], groups=groups)


def test_mcnemar_points_to_the_permutation_test_of_units():
    with pytest.raises(ValueError, match=r"permutation_test\(x, y, groups=groups\)"):
        pairperm.mcnemar_test([1, 0, 1, 1], [0, 0, 1, 0], groups=[0, 0, 1, 1])


def test_groups_align_with_pandas_scores_by_index():
    pd = pytest.importorskip("pandas")
    x, y, labels = case(2)
    xs, ys = pd.Series(x, index=range(100, 114)), pd.Series(y, index=range(100, 114))
    g = pd.Series(labels, index=range(100, 114))
    assert pairperm.permutation_test(xs, ys, groups=g).pvalue == pairperm.permutation_test(x, y, groups=labels).pvalue
    with pytest.raises(ValueError, match="index"):
        pairperm.permutation_test(xs, ys, groups=g.sample(frac=1.0, random_state=0))


def test_unit_sums_too_large_for_int64_are_refused():
    big = 2**60
    with pytest.raises(ValueError, match="too large to sum exactly"):
        pairperm.permutation_test([big, big, 1, 0], [0, 0, 0, 1], groups=[0, 0, 1, 1])


def test_many_units_stay_exact_on_the_integer_engines():
    rng = np.random.default_rng(11)
    n = 5000
    labels = rng.integers(0, 400, n)
    x, y = rng.integers(0, 3, n), rng.integers(0, 3, n)
    got = pairperm.permutation_test(x, y, groups=labels)
    d = np.bincount(labels, weights=x - y, minlength=400).astype(np.int64)
    ref = pairperm.structured_test(d, -d)
    assert got.pvalue == ref.pvalue and got.engine == ref.engine and math.isfinite(got.log_pvalue)


def test_differences_and_intervals_are_per_item_not_per_unit():
    rng = np.random.default_rng(6)
    x, y = rng.integers(0, 2, (30, 4)), rng.integers(0, 2, (30, 4))  # 4 samples per prompt
    c = pairperm.compare(x, y, "accuracy")
    assert c.difference == pytest.approx(x.mean() - y.mean())  # per sample, over all 120
    d = (x - y).sum(axis=1)
    total = pairperm.shift_interval(d, np.zeros_like(d), confidence_level=0.9).sum_difference
    low, high = c.confidence_interval(0.9)
    assert (low, high) == pytest.approx((total.low / 120, total.high / 120))
    labels = np.repeat(np.arange(10), 3)
    r = pairperm.permutation_test(x, y, groups=labels)
    assert r.difference == int(x.sum() - y.sum())
    unit = np.array([d[labels == u].sum() for u in range(10)])
    want = pairperm.shift_interval(unit, np.zeros_like(unit)).sum_difference
    assert tuple(r.confidence_interval()) == pytest.approx((want.low, want.high))


def test_compare_systems_with_groups_equals_the_pairwise_tests_of_units():
    rng = np.random.default_rng(12)
    labels = np.repeat(np.arange(12), 3)
    systems = {s: rng.integers(0, 2, 36) for s in "ABC"}
    res = pairperm.compare_systems(systems, "accuracy", groups=labels, confidence_level=0.9)
    for r in res.rows:
        x, y = systems[r.system_a], systems[r.system_b]
        single = pairperm.permutation_test(x, y, groups=labels)
        assert r.pvalue == single.pvalue
        assert r.metric_a == pytest.approx(x.mean()) and r.difference == pytest.approx(x.mean() - y.mean())
        unit = np.array([(x - y)[labels == u].sum() for u in range(12)])
        want = pairperm.shift_interval(unit, np.zeros_like(unit), confidence_level=0.9).sum_difference
        assert (r.ci_low, r.ci_high) == pytest.approx((want.low / 36, want.high / 36))
    # Each system's interval: the cluster bootstrap of its per-item accuracy.
    for (lo, hi), s in zip(res.system_intervals, res.names):
        assert lo <= systems[s].mean() <= hi
    multi = pairperm.compare_systems({"qa": systems, "qa2": systems}, "accuracy", groups={"qa": labels})
    by_task = {t: [r for r in multi.rows if r.task == t] for t in ("qa", "qa2")}
    assert [r.pvalue for r in by_task["qa"]] == [r.pvalue for r in res.rows]
    assert [r.pvalue for r in by_task["qa2"]] == [r.pvalue for r in pairperm.compare_systems(systems, "accuracy").rows]
    assert multi.tasks[0].n_units == 12 and multi.tasks[0].n_items == 36 and multi.tasks[1].n_units == 36
    with pytest.raises(ValueError, match="groups names no task 'nope'"):
        pairperm.compare_systems({"qa": systems, "qa2": systems}, "accuracy", groups={"nope": labels})


@pytest.mark.parametrize("groups", [
    ["p1", float("nan"), "p2", float("nan"), "p3", "p4"],  # as df.column.tolist() gives missing labels
    ["p1", None, "p2", "p2", "p3", "p4"],
    np.array(["p1", np.float32("nan"), "p2", "p2", "p3", "p4"], dtype=object),
])
def test_missing_labels_in_a_list_or_object_array_are_refused(groups):
    # A list went through np.asarray, which made NaN the string "nan": the items without a
    # label were swapped together as one unit.
    with pytest.raises(ValueError, match="missing label"):
        pairperm.permutation_test([1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1], groups=groups)


def test_labels_equal_only_as_strings_are_not_merged():
    # [1, "1", ...] became the strings "1", "1": two units merged into one.
    with pytest.raises(ValueError, match="different kinds"):
        pairperm.permutation_test([1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1], groups=[1, "1", 2, 2, 3, 4])


def test_pandas_missing_values_are_missing_labels():
    pd = pytest.importorskip("pandas")
    for labels in (pd.array(["a", pd.NA, "b", "b", "c", "c"], dtype="string"),
                   pd.Series([1, None, 2, 2, 3, 3], dtype="Int64")):
        with pytest.raises(ValueError, match="missing label|contains NaN"):
            pairperm.permutation_test([1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1], groups=labels)


def test_list_labels_of_one_kind_give_the_same_units_as_an_array():
    x, y = [3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8]
    labels = ["a", "b", "a", "c", "b", "c", "d", "d"]
    want = pairperm.permutation_test(x, y, groups=np.array(labels)).pvalue
    assert pairperm.permutation_test(x, y, groups=labels).pvalue == want
    assert pairperm.permutation_test(x, y, groups=[0, 1, 0, 2, 1, 2, 3, 3]).pvalue == want


def test_compare_systems_matches_groups_to_the_items_by_id():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(13)
    ids = [f"q{i}" for i in range(12)]
    labels = np.repeat(np.arange(4), 3)
    x, y = rng.integers(0, 2, 12), rng.integers(0, 2, 12)
    x[:3], y[:3] = 1, 0  # a unit whose items all favour A: pairing by position changes the units' sums
    a, b = pd.Series(x, index=ids), pd.Series(y, index=ids)
    passage = pd.Series(labels, index=ids)
    want = float(brute_unit_pvalue(x, y, labels.tolist(), sum_difference, "two-sided"))
    assert pairperm.compare(a, b, "accuracy", groups=passage).pvalue == pytest.approx(want, rel=1e-12)
    shuffled = passage.sample(frac=1.0, random_state=3)
    positional = float(brute_unit_pvalue(x, y, shuffled.to_numpy().tolist(), sum_difference, "two-sided"))
    assert positional != pytest.approx(want)  # the case tells id from position apart
    frame = pd.DataFrame({"A": a, "B": b})
    order = list(reversed(ids))
    cases = {
        "mapping": ({"A": a, "B": b}, shuffled),
        "first system in another order": ({"B": b[order], "A": a}, passage),
        "DataFrame": (frame, shuffled),
        "DataFrame with an id column": (frame.reset_index(names="doc").iloc[::-1], shuffled),
    }
    for what, (scores, groups) in cases.items():
        kw = {"id_column": "doc"} if what.endswith("id column") else {}
        got = pairperm.compare_systems(scores, groups=groups, **kw).rows[0]
        assert got.pvalue == pytest.approx(want, rel=1e-12), what
    several = pairperm.compare_systems({"t": {"A": a, "B": b}, "u": {"A": a, "B": b}}, groups={"t": shuffled})
    assert several.rows[0].pvalue == pytest.approx(want, rel=1e-12)
    # A long table sorts its items (q0, q1, q10, q11, q2, ...): labels indexed by item follow them.
    long = pd.DataFrame([("t", i, s, int(v[i])) for i in order for s, v in (("A", a), ("B", b))],
                        columns=["task", "item", "system", "score"])
    assert pairperm.compare_systems(long, groups={"t": shuffled}).rows[0].pvalue == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match=r"groups is indexed by other ids than the items \(only in the scores: 'q11'"):
        pairperm.compare_systems({"A": a, "B": b}, groups=passage.iloc[:-1])
    with pytest.raises(ValueError, match="groups has an index of item ids but the scores has none"):
        pairperm.compare_systems({"A": x, "B": y}, groups=passage)
    # Plain labels stay in the items' order, as in the single-pair tests.
    assert pairperm.compare_systems({"A": a, "B": b}, groups=labels).rows[0].pvalue == pytest.approx(want, rel=1e-12)


def test_compare_systems_with_groups_reports_what_compare_reports_when_unit_sums_are_0_1():
    rng = np.random.default_rng(14)
    labels = np.repeat(np.arange(40), 2)
    systems = {}
    for s in "ABC":  # at most one correct item per unit: every unit sum is 0 or 1
        v = np.zeros(80, np.int64)
        v[2 * np.flatnonzero(rng.random(40) < 0.5)] = 1
        systems[s] = v
    one = pairperm.compare_systems(systems, groups=labels)
    several = pairperm.compare_systems({"t": systems, "u": systems}, groups={"t": labels})
    for rows in (one.rows, [r for r in several.rows if r.task == "t"]):
        for r in rows:
            want = pairperm.compare(systems[r.system_a], systems[r.system_b], groups=labels)
            assert (r.test, r.statistic, r.pvalue) == (want.test, want.statistic, want.pvalue)
            assert r.test == "permutation_test"
            assert r.statistic == int(systems[r.system_a].sum() - systems[r.system_b].sum())
    # Without groups the same 0/1 items are McNemar's, as in compare().
    plain = [r for r in several.rows if r.task == "u"]
    assert {r.test for r in plain} == {pairperm.compare(systems["A"], systems["B"]).test} == {"mcnemar_test"}


def test_compare_systems_with_groups_ties_decimal_scores_as_compare_does():
    # compare_systems handed compare() the unit sums as plain scores, so the tie slack was
    # relative to the sums, not to the items: units holding the same decimal scores in another
    # order (difference 0 in exact arithmetic) counted as differing, and p came out 0.6875.
    rng = np.random.default_rng(7)
    x, y, g = [], [], []
    for u in range(4):
        v = np.round(rng.uniform(-100, 100, 6), 1)
        v[-1] = round(-v[:-1].sum(), 1)
        x += v.tolist()
        y += rng.permutation(v).tolist()
        g += [u] * 6
    x, y, g = np.array(x + [0.5]), np.array(y + [0.0]), g + [4]
    want = pairperm.compare(x, y, "mean", groups=g).pvalue
    assert want == 1.0  # four units tie at 0 in every swap pattern; the fifth alone can't reach p < 1
    assert pairperm.compare_systems({"A": x, "B": y}, "mean", groups=g).rows[0].pvalue == want
    tasks = pairperm.compare_systems({"t": {"A": x, "B": y}}, "mean", groups={"t": g})
    assert tasks.rows[0].pvalue == want


def roundoff_reference(x, y, labels=None):
    """The documented round-off bound of each unit's difference, in exact rationals: with j scores
    per side, (j + 1) (sum |x| + sum |y|), in units of 2^e where the largest |score| lies in
    [2^(e-1), 2^e). Units in order of their sorted labels, else one per item."""
    xr = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    yr = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    e = math.frexp(max(abs(float(v)) for v in itertools.chain(xr.flat, yr.flat)))[1]
    if labels is None:
        units = [[i] for i in range(len(xr))]
    else:
        units = [[i for i, lab in enumerate(labels) if lab == u] for u in sorted(set(labels))]
    bounds = []
    for items in units:
        j = len(items) * xr.shape[1]
        total = sum(Fraction(abs(float(v))) for i in items for v in itertools.chain(xr[i], yr[i]))
        bounds.append((j + 1) * total / Fraction(2) ** e)
    return e, bounds


@pytest.mark.parametrize("shape, with_groups", [((9,), False), ((9, 3), False), ((9,), True), ((9, 2), True)])
@pytest.mark.parametrize("scale", [1.0, 1e-7, 3e12])
def test_roundoff_magnitude_is_the_documented_bound(shape, with_groups, scale):
    from pairperm._units import paired_scores

    rng = np.random.default_rng(len(shape) + 2 * with_groups)
    x = (rng.random(shape) - 0.3) * scale
    y = (rng.random(shape) - 0.3) * scale
    labels = [0, 2, 2, 1, 0, 2, 3, 3, 2] if with_groups else None
    units = paired_scores(x, y, labels, "test")
    e, want = roundoff_reference(x, y, labels)
    assert units.roundoff.exponent == e
    assert len(units.roundoff.magnitude) == len(want)
    for got, bound in zip(units.roundoff.magnitude, want):
        assert abs(Fraction(float(got)) - bound) <= bound * Fraction(1, 10**12), (got, float(bound))
