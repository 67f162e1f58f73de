"""compare_systems(): every pair equals the single-pair compare(), corrections equal their textbook
definitions (exact fractions, values worked by hand) and statsmodels',
results survive JSON and pickle, and executors (processes, dask) reproduce the local run."""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import json
import math
import multiprocessing
import pickle
import re
from fractions import Fraction

import numpy as np
import pytest

import pairperm
from pairperm import _core, _pairs, datasets
from pairperm._multipletests import multipletests
from pairperm._sampling import child_seed
from reference import exact_pvalue, sign_flip_pvalue
from synthetic import mixed


def batch(m, pairs, alternative="two-sided", n_threads=0, method="auto", seeds=None):
    """The core's batch with the library's limits: (observed, n_varying, pvalue, log_pvalue, route, notes)."""
    return _core.batch_pvalues(m, pairs, alternative, method, _core.PlanLimits(), 10_000, seeds, n_threads)


# The route a result reports for each engine the planner names.
ROUTE = {"trivial": "enumeration", "dp": "dp", "grouped_tail": "grouped", "enumeration": "enumeration"}


def assert_rows_equal_compare(res, systems, metric, alternative="two-sided", **options):
    values = dict(zip(res.names, res.metric_values))
    for row in res.rows:
        c = pairperm.compare(systems[row.system_a], systems[row.system_b], metric, alternative=alternative, **options)
        assert (row.pvalue, row.statistic, row.test) == (c.pvalue, c.statistic, c.test), row
        assert row.metric_a == values[row.system_a] and row.metric_b == values[row.system_b]


@pytest.fixture(scope="module")
def pos():
    x, y = datasets.stanza_pos_like(2_000, seed=3)
    return mixed(x, y, 6)


@pytest.fixture(scope="module")
def ner():
    a, b = datasets.ner_like(300, seed=4)
    return mixed(a, b, 4)


# ---------------------------------------------------------------- every pair = compare()


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_integer_scores_every_pair_equals_compare(pos, alternative):
    res = pairperm.compare_systems(pos, alternative=alternative)
    assert [(r.system_a, r.system_b) for r in res.rows] == list(itertools.combinations(pos, 2))
    assert_rows_equal_compare(res, pos, "accuracy", alternative)
    assert {r.test for r in res.rows} == {"permutation_test"}
    assert res.metric_values == tuple(float(np.mean(v)) for v in pos.values())


def test_binary_scores_report_mcnemar_like_compare(pos):
    binary = {k: (v >= 12).astype(np.int64) for k, v in pos.items()}
    binary["bools"] = pos["s0"] >= 10
    res = pairperm.compare_systems(binary, "accuracy")
    assert {r.test for r in res.rows} == {"mcnemar_test"}
    assert_rows_equal_compare(res, binary, "accuracy")


def test_mixed_binary_and_count_systems(pos):
    systems = {"bin": (pos["s0"] > 12).astype(int), "cnt": pos["s1"], "bin2": (pos["s2"] > 12).astype(int)}
    res = pairperm.compare_systems(systems, "exact_match")
    assert [r.test for r in res.rows] == ["permutation_test", "mcnemar_test", "permutation_test"]
    assert_rows_equal_compare(res, systems, "exact_match")


def test_sum_metric_value_is_the_sum(pos):
    res = pairperm.compare_systems(pos, "sum")
    assert res.metric_values == tuple(int(v.sum()) for v in pos.values())
    assert all(isinstance(v, int) for v in res.metric_values)
    assert_rows_equal_compare(res, pos, "sum")


def test_sum_metric_is_exact_where_int64_totals_would_wrap():
    """64 entries near 2**57: the totals pass 2**63; A wins every entry, so A is the better system."""
    a = np.full(64, 2**57 + 1, dtype=np.int64)
    b = np.full(64, 2**57 - 1, dtype=np.int64)
    res = pairperm.compare_systems({"A": a, "B": b}, metric="sum")
    assert res.metric_values == (64 * (2**57 + 1), 64 * (2**57 - 1))
    assert res.rows[0].significant
    assert res.wins() == {"A": ["B"], "B": []}


@pytest.mark.parametrize("values", [[2**60, 2**60, -(2**60) + 1, 2**60 - 3] * 8, [-(2**60) - 5] * 9, [7, -3, 0]])
def test_exact_int_sum_matches_python_integers(values):
    from pairperm._validation import exact_int_sum

    assert exact_int_sum(np.array(values, dtype=np.int64)) == sum(values)


def test_batch_pvalues_equal_brute_force_enumeration():
    rng = np.random.default_rng(7)
    systems = {f"t{k}": rng.integers(0, 6, 12) for k in range(4)}
    for alternative in ("two-sided", "greater", "less"):
        res = pairperm.compare_systems(systems, alternative=alternative, correction=None)
        for r in res.rows:
            x, y = systems[r.system_a], systems[r.system_b]
            exact = exact_pvalue(x - y, y - x, alternative)
            assert r.pvalue == pytest.approx(float(exact), rel=1e-9)
            assert r.pvalue_adjusted == r.pvalue


def test_f1_precision_recall_every_pair_equals_compare(ner):
    for metric in ("f1", "precision", "recall"):
        res = pairperm.compare_systems(ner, metric)
        assert_rows_equal_compare(res, ner, metric)
        assert {r.test for r in res.rows} == {f"{metric}_test"}


def test_f1_metric_values_from_summed_counts(ner):
    from fractions import Fraction

    res = pairperm.compare_systems(ner, "f1")
    prec = pairperm.compare_systems(ner, "precision")
    rec = pairperm.compare_systems(ner, "recall")
    for i, v in enumerate(ner.values()):
        tp, fp, fn = (int(s) for s in v.sum(axis=0))
        assert res.metric_values[i] == pytest.approx(float(Fraction(2 * tp, 2 * tp + fp + fn)), rel=1e-15)
        assert prec.metric_values[i] == pytest.approx(float(Fraction(tp, tp + fp)), rel=1e-15)
        assert rec.metric_values[i] == pytest.approx(float(Fraction(tp, tp + fn)), rel=1e-15)


def test_real_valued_metrics_equal_compare():
    rng = np.random.default_rng(2)
    ppl = {f"lm{k}": np.exp(rng.normal(3 + 0.05 * k, 1, 200)) for k in range(4)}
    res = pairperm.compare_systems(ppl, "perplexity", alternative="greater")
    assert_rows_equal_compare(res, ppl, "perplexity", "greater")
    assert {r.test for r in res.rows} == {"wilcoxon_test"}


def test_mean_routes_per_pair_and_seeded_pairs_use_derived_seeds(pos):
    rng = np.random.default_rng(5)
    systems = {"int_a": pos["s0"], "int_b": pos["s5"], "real": pos["s3"] + rng.random(len(pos["s3"]))}
    res = pairperm.compare_systems(systems, "mean", n_resamples=500, rng=11)
    assert [r.test for r in res.rows] == ["permutation_test"] * 3
    for k, r in enumerate(res.rows):
        c = pairperm.compare(systems[r.system_a], systems[r.system_b], "mean", n_resamples=500, rng=child_seed(11, k))
        assert (r.pvalue, r.statistic) == (c.pvalue, c.statistic)


def test_seeded_runs_repeat_whatever_n_jobs(pos):
    systems = {k: np.c_[v, v + 1, v // 2, v, v, v // 3, v, v, v + 1, v + 3][:400] for k, v in list(pos.items())[:4]}
    runs = [pairperm.compare_systems(systems, "bleu", n_resamples=300, rng=3, n_jobs=j) for j in (1, 2, 3)]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0] != pairperm.compare_systems(systems, "bleu", n_resamples=300, rng=4)
    g = pairperm.compare_systems(systems, "bleu", n_resamples=300, rng=np.random.default_rng(3))
    assert g == pairperm.compare_systems(systems, "bleu", n_resamples=300, rng=np.random.default_rng(3))


def test_fallback_pairs_run_in_the_batch_as_on_the_single_pair_path():
    # Huge unrelated |x - y| leave the grouped window infeasible; few entries vary, so the
    # executor enumerates them, in the batch as in permutation_test.
    x = np.array([10**15, 3 * 10**14 + 1, -7 * 10**13 + 3, 5])
    y = np.array([0, 0, 0, 2])
    z = np.array([1, 0, 1, 2])
    systems = {"x": x, "y": y, "z": z}
    for alternative in ("two-sided", "greater", "less"):
        res = pairperm.compare_systems(systems, alternative=alternative)
        assert_rows_equal_compare(res, systems, "accuracy", alternative)
        assert res.rows[0].pvalue == float(sign_flip_pvalue(x - y, alternative))
    *_, route, notes = batch(np.stack([x, y, z]), np.array([[0, 1], [1, 2]]))
    assert route[0] == "enumeration" and notes == []
    # Too many varying entries to list: the core conditions on the two huge entries, in the
    # batch as in the single-pair path.
    big = {"a": [2**55, 3 * 2**53 + 1] + [1] * 30, "b": [0, 0] + [2] * 30, "c": [0] * 32}
    assert_rows_equal_compare(pairperm.compare_systems(big), big, "accuracy")


def test_batch_is_independent_of_threads_and_checks_indices(pos):
    m = np.stack(list(pos.values()))
    pairs = np.array(list(itertools.combinations(range(len(m)), 2)), dtype=np.int64)
    one = batch(m, pairs, n_threads=1)
    for t in (2, 5, 0):
        other = batch(m, pairs, n_threads=t)
        assert all(np.array_equal(a, b) for a, b in zip(one[:4], other[:4])) and one[4:] == other[4:]
    for (i, j), p, route in zip(pairs, one[2], one[4]):
        assert route == "grouped"
        assert p == _core.grouped_pvalue(_core.summarize_paired(m[i], m[j]), "two-sided")[0]
    with pytest.raises(ValueError, match="system index 6"):
        batch(m, np.array([[0, 6]]))


def _mixed_systems():
    """(systems, metric) per territory of the planner."""
    rng = np.random.default_rng(11)
    small = {f"s{i}": rng.integers(0, 21, 40) for i in range(5)}  # many distinct differences: the DP
    x, y = datasets.stanza_pos_like(3_000, seed=5)
    binary = {f"b{i}": (rng.random(150) < 0.4 + 0.1 * i).astype(np.int64) for i in range(4)}
    return {
        "small": (small, "accuracy"),
        "large": (mixed(x, y, 4), "accuracy"),  # the grouped tilted tail
        "binary": (binary, "accuracy"),  # McNemar under "auto"
        # Differences far beyond the grouped window: the real-valued engine, exact in float64.
        "wide": ({f"w{i}": rng.integers(-10**6, 10**6, 30) for i in range(3)}, "sum"),
        "real_mean": ({f"m{i}": rng.normal(0.1 * i, 1.0, 30) for i in range(3)}, "mean"),
        "integral_mean": (small, "mean"),
    }


@pytest.mark.filterwarnings("ignore::pairperm.PrecisionWarning")  # plain Monte Carlo at its floor says so
@pytest.mark.parametrize("method", ["auto", "exact", "monte_carlo"])
@pytest.mark.parametrize("data", list(_mixed_systems()))
def test_every_pair_runs_the_engine_and_pvalue_of_compare(data, method):
    systems, metric = _mixed_systems()[data]
    res = pairperm.compare_systems(systems, metric, method=method, n_resamples=999, rng=7)
    for k, row in enumerate(res.rows):
        c = pairperm.compare(systems[row.system_a], systems[row.system_b], metric, method=method, n_resamples=999,
                             rng=child_seed(7, k))
        assert (row.engine, row.pvalue, row.statistic, row.test) == (c.result.engine, c.pvalue, c.statistic, c.test)
    engines = {r.engine for r in res.rows}
    if method == "monte_carlo":
        assert engines == {"monte_carlo"}
    elif data == "small":
        assert engines == {"dp"}
    elif data == "large":
        assert engines == {"grouped"}


def test_method_is_honoured_on_integer_pairs(pos):
    systems = dict(list(pos.items())[:3])
    exact = pairperm.compare_systems(systems)
    sampled = pairperm.compare_systems(systems, method="monte_carlo", n_resamples=2000, rng=3)
    for k, (e, s) in enumerate(zip(exact.rows, sampled.rows)):
        assert e.engine == "grouped" and s.engine == "monte_carlo"
        hits = s.pvalue * 2001 - 1
        assert hits == pytest.approx(round(hits), abs=1e-6)  # (1 + hits) / (1 + K): a sampled p-value
        c = pairperm.compare(systems[s.system_a], systems[s.system_b], method="monte_carlo", n_resamples=2000,
                             rng=child_seed(3, k))
        assert s.pvalue == c.pvalue
    dp = pairperm.compare_systems(systems, method="dp")
    assert {r.engine for r in dp.rows} == {"dp"}
    for e, d in zip(exact.rows, dp.rows):
        assert d.pvalue == pytest.approx(e.pvalue, rel=1e-9)


def test_batch_runs_the_planned_engine_bit_for_bit():
    rng = np.random.default_rng(4)
    m = np.vstack([rng.integers(0, 21, (4, 60)), np.zeros((1, 60), np.int64)])
    m[4, :] = m[0, :]  # identical systems: p = 1 without any engine
    pairs = np.array(list(itertools.combinations(range(len(m)), 2)), dtype=np.int64)
    for method in ("auto", "exact", "dp"):
        *_, pvalue, _log_p, routes, notes = batch(m, pairs, n_threads=1, method=method)
        assert notes == []
        for (i, j), p, route in zip(pairs, pvalue, routes):
            plan = _core.plan_engine(_core.summarize_paired(m[i], m[j]), "sum", method, _core.PlanLimits())
            assert route == ROUTE[plan.engine]
            r = pairperm.permutation_test(m[i], m[j], method=method)
            assert (p, route) == (r.pvalue, r.engine)
    assert {"enumeration", "dp"} <= set(batch(m, pairs)[4])


def test_batch_of_systems_narrowed_to_bytes_matches_the_single_pair_route():
    # Systems whose scores fit in int8 are narrowed once for all their pairs; rows at the ends
    # of that range (|x - y| up to 255) and rows just outside it (128, -129: not narrowed) must
    # give what permutation_test gives, bit for bit.
    rng = np.random.default_rng(12)
    n = 3000
    m = np.vstack([
        rng.integers(0, 4, (3, n)),
        rng.integers(-128, 128, (2, n)),
        np.where(rng.random((2, n)) < 0.5, -128, 127),
        rng.integers(0, 4, (2, n)),
    ]).astype(np.int64)
    m[7, 5], m[8, 9] = 128, -129
    pairs = np.array(list(itertools.combinations(range(len(m)), 2)), dtype=np.int64)
    observed, n_varying, pvalue, log_p, routes, notes = batch(m, pairs, n_threads=2)
    assert notes == []
    for k, (i, j) in enumerate(pairs):
        s = _core.summarize_paired(m[i], m[j])
        assert (observed[k], n_varying[k]) == (s.observed, s.n_varying)
        r = pairperm.permutation_test(m[i], m[j])
        assert (pvalue[k], log_p[k], routes[k]) == (r.pvalue, r.log_pvalue, r.engine), (i, j)
    assert "grouped" in set(routes)


# ---------------------------------------------------------------- corrections


@pytest.mark.parametrize("method", ["holm", "bonferroni", "fdr_bh", "fdr_by"])
def test_corrections_equal_statsmodels(method):
    sm = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(0)
    for m in (1, 2, 7, 50, 300):
        p = rng.random(m) ** 3
        p[rng.random(m) < 0.2] = 1.0
        if m > 3:
            p[: m // 3] = p[m // 3]  # ties
        reject, corrected, _, _ = sm.multipletests(p, alpha=0.05, method=method)
        ours = multipletests(p, method)
        np.testing.assert_allclose(ours, corrected, rtol=1e-13, atol=0)
        np.testing.assert_array_equal(ours <= 0.05, reject)
    assert np.array_equal(multipletests(p, None), p)


def test_correction_is_applied_over_the_pairs(pos):
    sm = pytest.importorskip("statsmodels.stats.multitest")
    for method in ("holm", "bonferroni", "fdr_bh", "fdr_by", None):
        res = pairperm.compare_systems(pos, correction=method, alpha=0.01)
        p = np.array([r.pvalue for r in res.rows])
        want = p if method is None else sm.multipletests(p, method=method)[1]
        np.testing.assert_allclose([r.pvalue_adjusted for r in res.rows], want, rtol=1e-13)
        assert [r.significant for r in res.rows] == [bool(a <= 0.01) for a in want]


def textbook_adjusted(p, method):
    """Adjusted p-values from the textbook definitions, in exact fractions, with ties read
    without an order: p_(1) <= ... <= p_(m) sorted, r_i = #{j : p_j <= p_i}, and
      bonferroni: min(1, m p_i)
      holm (step-down): min(1, max over k <= r_i of (m - k + 1) p_(k))
      fdr_bh (step-up): min(1, min over k with p_(k) >= p_i of m p_(k) / k)
      fdr_by: the same with m (1 + 1/2 + ... + 1/m) in place of m."""
    p = [Fraction(v) for v in p]
    m = len(p)
    ps = sorted(p)
    if method == "bonferroni":
        return [min(Fraction(1), m * v) for v in p]
    if method == "holm":
        return [min(Fraction(1), max((m - k + 1) * ps[k - 1] for k in range(1, sum(q <= v for q in p) + 1)))
                for v in p]
    c = sum(Fraction(1, k) for k in range(1, m + 1)) if method == "fdr_by" else 1
    return [min(Fraction(1), min(c * m * ps[k - 1] / k for k in range(1, m + 1) if ps[k - 1] >= v)) for v in p]


# Worked by hand. p = (0, 0.02, 0.02, 0.04, 1), m = 5, with a tie and both ends of [0, 1]:
#   bonferroni: 5p = (0, 0.1, 0.1, 0.2, 5 -> 1)
#   holm: 5*0 = 0; 4*0.02 = 0.08; 3*0.02 = 0.06 -> running max 0.08; 2*0.04 = 0.08; 1*1 = 1
#   fdr_bh: 5p/k = (0, 0.05, 1/30, 0.05, 1); running min from the top: (0, 1/30, 1/30, 0.05, 1)
#   fdr_by: c(5) = 1 + 1/2 + 1/3 + 1/4 + 1/5 = 137/60 times fdr_bh's 5p/k, running min from
#           the top: (0, 137/1800, 137/1800, 137/1200, min(1, 137/60) = 1)
# p = (0.3, 0.2, 0.4), m = 3, where the running max and min decide:
#   bonferroni: (0.9, 0.6, 1.2 -> 1)
#   holm: sorted 0.2, 0.3, 0.4 -> 3*0.2 = 0.6, 2*0.3 = 0.6, 1*0.4 = 0.4 -> running max 0.6 for all
#   fdr_bh: 3p/k = 0.6, 0.45, 0.4 -> running min from the top 0.4 for all
#   fdr_by: c(3) = 11/6 times 0.4 = 11/15 for all
# p = (0.01, 0.04, 0.03, 0.5), m = 4 (the docstring's): holm 4*0.01 = 0.04, 3*0.03 = 0.09,
#   2*0.04 = 0.08 -> 0.09, 0.5; fdr_bh 4p/k = 0.04, 0.06, 0.16/3, 0.5 -> 0.04, 0.16/3, 0.16/3, 0.5
HAND_WORKED = [
    ((0, 0.02, 0.02, 0.04, 1), "bonferroni", ("0", "0.1", "0.1", "0.2", "1")),
    ((0, 0.02, 0.02, 0.04, 1), "holm", ("0", "0.08", "0.08", "0.08", "1")),
    ((0, 0.02, 0.02, 0.04, 1), "fdr_bh", ("0", "1/30", "1/30", "0.05", "1")),
    ((0, 0.02, 0.02, 0.04, 1), "fdr_by", ("0", "137/1800", "137/1800", "137/1200", "1")),
    ((0.3, 0.2, 0.4), "bonferroni", ("0.9", "0.6", "1")),
    ((0.3, 0.2, 0.4), "holm", ("0.6", "0.6", "0.6")),
    ((0.3, 0.2, 0.4), "fdr_bh", ("0.4", "0.4", "0.4")),
    ((0.3, 0.2, 0.4), "fdr_by", ("11/15", "11/15", "11/15")),
    ((0.01, 0.04, 0.03, 0.5), "holm", ("0.04", "0.09", "0.09", "0.5")),
    ((0.01, 0.04, 0.03, 0.5), "fdr_bh", ("0.04", "4/75", "4/75", "0.5")),
    ((0.07,), "holm", ("0.07",)),
    ((0.07,), "fdr_by", ("0.07",)),
]


@pytest.mark.parametrize("p, method, want", HAND_WORKED)
def test_corrections_equal_hand_worked_values(p, method, want):
    exact = [Fraction(w) for w in want]
    assert textbook_adjusted([Fraction(str(v)) for v in p], method) == exact  # the reference agrees
    got = multipletests(np.array(p, dtype=float), method)
    assert got.tolist() == pytest.approx([float(w) for w in exact], rel=1e-14, abs=0)


@pytest.mark.parametrize("method", ["holm", "bonferroni", "fdr_bh", "fdr_by"])
def test_corrections_equal_the_textbook_definitions(method):
    # No reference library: exact fractions of the definitions, on ties, zeros and ones.
    rng = np.random.default_rng(1)
    for m in (1, 2, 3, 7, 30):
        for trial in range(4):
            p = rng.random(m) ** 3
            p[rng.random(m) < 0.2] = 1.0
            p[rng.random(m) < 0.1] = 0.0
            if m > 3 and trial % 2:
                p[rng.integers(0, m, m // 2)] = p[0]  # ties
            want = textbook_adjusted(p.tolist(), method)
            got = multipletests(p, method)
            assert got.shape == (m,) and np.all((got >= p) & (got <= 1))
            for g, w in zip(got, want):
                assert abs(Fraction(float(g)) - w) <= w * Fraction(1, 10**13), (m, trial, p, got)
    assert multipletests([], method).shape == (0,)
    assert np.array_equal(multipletests([0.2, 0.5, 0.01], None), [0.2, 0.5, 0.01])


def test_multipletests_rejects_bad_input():
    with pytest.raises(ValueError, match="method must be one of"):
        multipletests([0.1], "sidak")
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        multipletests([0.1, 1.2], "holm")


# ---------------------------------------------------------------- result object


def _plain(v):
    if isinstance(v, dict):
        return all(isinstance(k, str) and _plain(x) for k, x in v.items())
    if isinstance(v, list):
        return all(_plain(x) for x in v)
    return v is None or type(v) in (str, int, float, bool)


@pytest.mark.parametrize("scale", [1e-5, 1.0, 300.0])
def test_report_prints_values_with_the_decimals_of_the_several_task_report(scale):
    rng = np.random.default_rng(0)
    systems = {"A": rng.random(300) * scale, "B": rng.random(300) * scale + 0.3 * scale}
    one = pairperm.compare_systems(systems, metric="mean", rng=0)
    several = pairperm.compare_systems({"t": systems, "u": systems}, metric="mean", rng=0)
    cells = [line.split("|")[3].strip() for line in one.to_markdown().splitlines()[2:4]]
    report = several.report(intervals=False)
    want = [report._number(report.cells[s, "t"].value, report.decimals[0]) for s in "AB"]
    assert [c.replace("*", "").split("<")[0] for c in cells] == want
    for text, value in zip(want, one.metric_values):  # three significant digits of the values
        assert float(text) == pytest.approx(value, rel=5e-3)
    latex = one.to_latex()
    assert all(w in latex for w in want)


def test_json_round_trip_and_plain_values(pos, ner):
    for res in (pairperm.compare_systems(pos), pairperm.compare_systems(ner, "f1", baseline="s2")):
        d = res.to_dict()
        assert _plain(d)
        back = pairperm.SystemsComparison.from_json(res.to_json())
        assert back == res
        assert json.loads(res.to_json()) == d


def test_engine_is_recorded_and_old_json_without_it_still_reads(pos):
    res = pairperm.compare_systems(pos, "sum")
    d = res.to_dict()
    assert all(p["engine"] == "grouped" for p in d["pairs"])
    assert list(res.to_frame()["engine"]) == ["grouped"] * len(res.rows)
    for p in d["pairs"]:
        del p["engine"]  # as saved before rows recorded the engine
    old = pairperm.SystemsComparison.from_dict(d)
    assert [r.engine for r in old.rows] == [""] * len(res.rows)
    assert [r._replace(engine="grouped") for r in old.rows] == list(res.rows)


def test_pickle_round_trip(pos):
    res = pairperm.compare_systems(pos)
    assert pickle.loads(pickle.dumps(res)) == res


def test_pvalue_matrix(pos):
    res = pairperm.compare_systems(pos, correction="bonferroni")
    for adjusted in (True, False):
        m = res.pvalue_matrix(adjusted=adjusted)
        assert m.shape == (6, 6) and np.isnan(np.diag(m)).all()
        np.testing.assert_array_equal(m, m.T)
        for r in res.rows:
            i, j = res.names.index(r.system_a), res.names.index(r.system_b)
            assert m[i, j] == (r.pvalue_adjusted if adjusted else r.pvalue)
    one = pairperm.compare_systems(pos, alternative="greater").pvalue_matrix()
    assert np.isnan(np.tril(one, 0)[np.tril_indices(6)]).all() and not np.isnan(one[np.triu_indices(6, 1)]).any()
    base = pairperm.compare_systems(pos, baseline="s3").pvalue_matrix()
    assert (~np.isnan(base)).sum() == 2 * 5 and not np.isnan(base[3, [0, 1, 2, 4, 5]]).any()


def test_to_frame(pos):
    pd = pytest.importorskip("pandas")
    res = pairperm.compare_systems(pos)
    df = res.to_frame()
    assert isinstance(df, pd.DataFrame) and list(df.columns) == list(pairperm._comparison.SystemPair._fields)
    assert df["pvalue"].tolist() == [r.pvalue for r in res.rows]


def _marks_from_rows(res):
    """label -> set of labels it beats, from the rows and metric values directly."""
    labels = [chr(ord("a") + i) for i in range(len(res.names))]
    lab = dict(zip(res.names, labels))
    val = dict(zip(res.names, res.metric_values))
    beats: dict = {label: set() for label in labels}
    for r in res.rows:
        if r.significant and val[r.system_a] != val[r.system_b]:
            w, lo = (r.system_a, r.system_b) if val[r.system_a] > val[r.system_b] else (r.system_b, r.system_a)
            beats[lab[w]].add(lab[lo])
    return beats


def test_markdown_and_latex_reports_mark_significant_wins(pos):
    x, y = datasets.stanza_pos_like(10_000, seed=3)
    res = pairperm.compare_systems(mixed(x, y, 6), alpha=0.05)
    want = _marks_from_rows(res)
    assert any(want.values()) and not all(want.values())
    md = res.to_markdown()
    lines = [line for line in md.splitlines() if re.match(r"\| [a-z] \|", line)]
    assert len(lines) == len(res.names)
    places = max(0, 2 - math.floor(math.log10(max(abs(v) for v in res.metric_values))))  # 3 significant digits
    for line, name, value in zip(lines, res.names, res.metric_values):
        label = line.split("|")[1].strip()
        assert f"| {name} |" in line and f"{value:.{places}f}" in line
        m = re.search(r"<sup>([a-z]+)</sup>", line)
        assert set(m.group(1) if m else "") == want[label]
    assert "Holm-corrected p <= 0.05" in md and "significantly better" in md
    tex = pairperm.compare_systems({"sys_1": x, "b&c": y}).to_latex()
    assert r"sys\_1" in tex and r"b\&c" in tex and r"\caption{" in tex and r"$^{\mathrm{b}}$" in tex
    assert r"$p \leq$ 0.05" in tex


def test_report_lower_is_better_for_perplexity():
    rng = np.random.default_rng(9)
    base = 2 + np.exp(rng.normal(3, 1, 300))  # perplexities are at least 1
    res = pairperm.compare_systems({"good": base * 0.8, "bad": base}, "perplexity")
    assert res.rows[0].significant and res.wins() == {"good": ["bad"], "bad": []}


def test_repr_lists_pairs(pos):
    text = repr(pairperm.compare_systems(pos))
    assert text.startswith("SystemsComparison(metric='accuracy', systems=6, pairs=15")
    assert text.count("permutation_test") == 15
    big = repr(pairperm.compare_systems(mixed(pos["s0"], pos["s5"], 8)))
    assert "... 8 more pairs ..." in big and big.count("permutation_test") == 20


# ---------------------------------------------------------------- inputs


def test_baseline_mode(pos):
    res = pairperm.compare_systems(pos, baseline="s2")
    assert [(r.system_a, r.system_b) for r in res.rows] == [(k, "s2") for k in pos if k != "s2"]
    assert_rows_equal_compare(res, pos, "accuracy")
    assert res.baseline == "s2" and "each system against s2" in res.to_markdown()


def test_dataframe_columns_are_read_by_name(pos):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({k: pos[k] for k in ["s3", "s0", "s5"]}, index=np.arange(len(pos["s0"]))[::-1])
    res = pairperm.compare_systems(df)
    assert res.names == ("s3", "s0", "s5")
    assert_rows_equal_compare(res, pos, "accuracy")
    sel = pairperm.compare_systems(df, names=["s5", "s3"])
    assert sel.names == ("s5", "s3") and sel.metric_values == (float(pos["s5"].mean()), float(pos["s3"].mean()))
    with pytest.raises(ValueError, match="no DataFrame column named 'zz'"):
        pairperm.compare_systems(df, names=["s5", "zz"])
    dup = pd.DataFrame(np.c_[pos["s0"], pos["s1"]], columns=["a", "a"])
    with pytest.raises(ValueError, match="unique"):
        pairperm.compare_systems(dup)


def test_per_system_dataframes_are_read_by_column_name(ner):
    pd = pytest.importorskip("pandas")
    frames = {k: pd.DataFrame({"fn": v[:, 2], "tp": v[:, 0], "fp": v[:, 1]}) for k, v in ner.items()}
    assert pairperm.compare_systems(frames, "f1") == pairperm.compare_systems(ner, "f1")
    bad = {k: f.rename(columns={"fp": "false_pos"}) for k, f in frames.items()}
    with pytest.raises(ValueError, match=r"reads columns by name and needs \(tp, fp, fn\)"):
        pairperm.compare_systems(bad, "precision")


def test_array_input_with_names(pos):
    arr = np.stack([pos["s0"], pos["s4"], pos["s1"]])
    res = pairperm.compare_systems(arr, names=["A", "B", "C"])
    assert res.names == ("A", "B", "C")
    assert_rows_equal_compare(res, {"A": arr[0], "B": arr[1], "C": arr[2]}, "accuracy")
    assert pairperm.compare_systems(arr).names == ("system_0", "system_1", "system_2")
    with pytest.raises(ValueError, match="names has 2 entries but scores has 3 systems"):
        pairperm.compare_systems(arr, names=["A", "B"])
    with pytest.raises(ValueError, match=r"shape \(n_systems, N"):
        pairperm.compare_systems(arr[0])


def test_mapping_names_select_and_order(pos):
    res = pairperm.compare_systems(pos, names=["s4", "s1"])
    assert res.names == ("s4", "s1") and len(res.rows) == 1


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"baseline": "nope"}, ValueError, "baseline 'nope' is not one of the systems"),
        ({"correction": "sidak"}, ValueError, "correction must be one of"),
        ({"alpha": 1.5}, ValueError, r"alpha must be a number in \(0, 1\)"),
        ({"alternative": "bigger"}, ValueError, "alternative must be one of"),
        ({"metric": "rouge_l_sum"}, ValueError, "metric must be a callable or one of"),
        ({"n_jobs": 0}, ValueError, r"n_jobs must be None \(all cores\) or an integer >= 1"),
        ({"executor": object()}, ValueError, "concurrent.futures.Executor"),
        ({"progress": "yes"}, ValueError, "progress must be"),
        ({"n_resample": 10}, TypeError, "unexpected option"),
        ({"rng": -1}, ValueError, "rng seed must be non-negative"),
    ],
)
def test_argument_errors(pos, kwargs, err, match):
    with pytest.raises(err, match=match):
        pairperm.compare_systems(pos, **kwargs)


@pytest.mark.parametrize("n_resamples", [-5, 0, "many", 2.5, True, 2**53])
def test_n_resamples_is_checked_as_compare_checks_it_when_every_pair_runs_in_the_batch(n_resamples):
    rng = np.random.default_rng(0)
    systems = {f"s{i}": rng.integers(0, 5, 60) for i in range(3)}
    with pytest.raises(ValueError) as single:
        pairperm.compare(systems["s0"], systems["s1"], "sum", n_resamples=n_resamples)
    want = single.value.args[0].split(": ", 1)[1]  # the message without the function's name
    with pytest.raises(ValueError, match=f"^compare_systems: {re.escape(want)}$"):
        pairperm.compare_systems(systems, "sum", n_resamples=n_resamples)
    with pytest.raises(ValueError, match=re.escape(want)):
        pairperm.compare_systems({"t": systems, "u": systems}, "sum", n_resamples=n_resamples)
    with pytest.raises(ValueError, match=re.escape(want)):
        pairperm.compare_systems(systems, "mean", n_resamples=n_resamples)


def test_data_errors_name_the_system(pos):
    with pytest.raises(ValueError, match=r"lengths differ \('a': 5, 'b': 4\)"):
        pairperm.compare_systems({"a": [1, 2, 3, 4, 5], "b": [1, 2, 3, 4]})
    with pytest.raises(ValueError, match="system 'b' must hold integers"):
        pairperm.compare_systems({"a": [1, 2, 3], "b": [1, 2.5, 3]})
    with pytest.raises(ValueError, match="at least 2 systems"):
        pairperm.compare_systems({"a": [1, 2, 3]})
    with pytest.raises(ValueError, match="no entries"):
        pairperm.compare_systems({"a": [], "b": []})
    with pytest.raises(ValueError, match=r"needs per-entry \(tp, fp, fn\) counts of shape \(N, 3\).*'b' has shape \(3, 4\)"):
        pairperm.compare_systems({"a": np.ones((3, 3)), "b": np.ones((3, 4))}, "f1")
    with pytest.raises(ValueError, match="unique"):
        pairperm.compare_systems({1: [1, 2], "1": [2, 1]})


# ---------------------------------------------------------------- progress and executors


def test_progress_callable_sees_every_pair(pos, ner):
    for systems, metric in ((pos, "accuracy"), (ner, "f1")):
        seen: list = []
        res = pairperm.compare_systems(systems, metric, progress=lambda d, t, seen=seen: seen.append((d, t)))
        total = len(res.rows)
        assert seen and seen[-1] == (total, total)
        assert all(t == total for _, t in seen) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_pairs_sampled_in_the_batch_draw_the_seeds_of_compare_and_count_once(monkeypatch):
    rng = np.random.default_rng(0)
    # Too spread for the grouped window and too many to list: importance sampling, whose seeds
    # the batch asks for once it knows which pairs need them.
    wide = {f"s{k}": rng.integers(0, 10**12, 60) for k in range(4)}
    narrow = {f"s{k}": rng.integers(0, 3, 30) for k in range(4)}  # these stay exact
    run_singly = _pairs._run_singly
    singly: list = []
    monkeypatch.setattr(_pairs, "_run_singly", lambda *a, **k: (singly.append(len(a[3])), run_singly(*a, **k)))
    res = pairperm.compare_systems(wide, "sum", n_resamples=500, rng=5, progress=False, confidence_level=None)
    assert singly == [] and {r.engine for r in res.rows} == {"saddlepoint_is"}
    for k, row in enumerate(res.rows):
        c = pairperm.compare(wide[row.system_a], wide[row.system_b], "sum", n_resamples=500, rng=child_seed(5, k))
        assert (row.pvalue, row.statistic, row.engine) == (c.pvalue, c.statistic, c.result.engine)
    for scores in (wide, {"wide": wide, "narrow": narrow}, {"narrow": narrow, "wide": wide}):
        seen: list = []
        res = pairperm.compare_systems(scores, "sum", progress=lambda d, t, seen=seen: seen.append((d, t)),
                                       confidence_level=None, n_resamples=200)
        total = len(res.rows)
        done = [d for d, _ in seen]
        assert all(t == total for _, t in seen)
        assert done == sorted(set(done)) and done[-1] == total  # rises, reaching total once, at the end


def test_process_pool_equals_local_run(pos, ner):
    local_acc = pairperm.compare_systems(pos)
    local_f1 = pairperm.compare_systems(ner, "f1", baseline="s0")
    # spawn: workers start clean (fork with live threads is deprecated) and must unpickle everything
    with cf.ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as ex:
        assert pairperm.compare_systems(pos, executor=ex) == local_acc
        assert pairperm.compare_systems(ner, "f1", baseline="s0", executor=ex) == local_f1


def test_dask_local_cluster_equals_local_run(pos, ner):
    distributed = pytest.importorskip("distributed")
    systems = {k: v[:400] for k, v in pos.items()}
    bleu = {k: np.c_[v, v + 1, v // 2, v, v, v // 3, v, v, v + 1, v + 3] for k, v in list(systems.items())[:3]}
    local = pairperm.compare_systems(systems)
    local_bleu = pairperm.compare_systems(bleu, "bleu", n_resamples=200, rng=7)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            ex = client.get_executor()
            assert pairperm.compare_systems(systems, executor=ex) == local
            assert pairperm.compare_systems(bleu, "bleu", n_resamples=200, rng=7, executor=ex) == local_bleu


def test_chunks_ship_each_system_once_per_chunk(pos):
    class Recording(cf.Executor):
        def __init__(self):
            self.calls = []

        def submit(self, fn, *args, **kwargs):
            self.calls.append(args)
            f = cf.Future()
            f.set_result(fn(*args, **kwargs))
            return f

    systems = mixed(pos["s0"], pos["s5"], 12)
    ex = Recording()
    res = pairperm.compare_systems(systems, executor=ex)
    assert res == pairperm.compare_systems(systems)
    assert len(ex.calls) > 1
    shipped = sum(len(args[0]) for args in ex.calls)  # rows of each chunk's sub-matrix
    assert shipped < len(res.rows)  # fewer systems shipped than pairs computed
    for matrix, pairs, *_ in ex.calls:
        assert len(np.unique(pairs)) == len(matrix)  # only the systems the chunk needs


def test_optional_packages_are_not_imported_unless_used():
    import subprocess
    import sys

    code = (
        "import sys, pairperm\n"
        "r = pairperm.compare_systems({'a': [1, 0, 1, 1], 'b': [0, 0, 1, 0], 'c': [3, 1, 2, 1]})\n"
        "r.to_json(); r.to_markdown(); r.to_latex(); repr(r); r.pvalue_matrix()\n"
        "print(sorted(m for m in ('pandas', 'dask', 'distributed', 'tqdm', 'statsmodels') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("metric", ["uas", "las", "sum", "accuracy"])
def test_every_pair_reports_compare_s_difference_and_interval(metric):
    # compare_systems reported UAS/LAS as per-item means while compare() reports sums.
    a = np.array([12, 7, 30, 9, 15, 22, 4]) if metric != "accuracy" else np.array([1, 0, 1, 1, 0, 1, 1])
    b = np.array([11, 7, 27, 9, 13, 22, 5]) if metric != "accuracy" else np.array([0, 0, 1, 0, 0, 1, 0])
    c = pairperm.compare(a, b, metric)
    row = pairperm.compare_systems({"A": a, "B": b}, metric, correction=None, confidence_level=0.8).rows[0]
    assert row.difference == pytest.approx(c.difference, rel=1e-14) and row.pvalue == c.pvalue
    assert (row.ci_low, row.ci_high) == pytest.approx(tuple(c.confidence_interval(0.8)))


@pytest.mark.parametrize("metric", ["accuracy", "sum", "mean"])
def test_samples_per_item_are_compared_as_compare_compares_them(metric):
    # (N, k): k samples of each item, swapped together; every pair as compare() runs it, its
    # interval included, and with groups of items on top.
    rng = np.random.default_rng(31)
    n, k = 30, 3  # few enough items that real-valued scores are exact too
    if metric == "mean":
        systems = {s: np.round(rng.random((n, k)) + 0.1 * j, 3) for j, s in enumerate("abc")}
    else:
        systems = {s: rng.integers(0, 2 if metric == "accuracy" else 4, (n, k)) for s in "abc"}
    labels = np.repeat(np.arange(10), 3)
    for groups in (None, labels):
        res = pairperm.compare_systems(systems, metric, groups=groups, confidence_level=0.9, progress=False)
        assert res.provenance["n_items"] == n * k and res.provenance["n_units"] == (n if groups is None else 10)
        for row in res.rows:
            c = pairperm.compare(systems[row.system_a], systems[row.system_b], metric, groups=groups)
            ci = c.confidence_interval(0.9)
            assert (row.pvalue, row.statistic, row.test, row.engine) == (c.pvalue, c.statistic, c.test, c.result.engine)
            assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
            assert row.metric_a == pytest.approx(systems[row.system_a].sum() if metric == "sum"
                                                 else systems[row.system_a].mean())
    with pytest.raises(ValueError, match=r"shape \(N,\), or \(N, k\) for k samples"):
        pairperm.compare_systems({s: rng.random((n, k, 2)) for s in "ab"}, "mean")
