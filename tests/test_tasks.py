"""compare_systems() on several tasks: every row equals the single-task run (and compare()), the
long table aligns by item, corrections per task and over the family equal statsmodels', every
pair interval equals shift_interval / bootstrap_intervals called directly (and brute-force subset
means for small N), systems' intervals of sums and means are the unsampled bootstrap's, the
report's marks follow its rule, provenance survives JSON, and the cache resumes interrupted runs
with results equal to uninterrupted ones."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

import pairperm
from marks import quick_first
from pairperm import _tasks
from reference import sign_flip_pvalue
from synthetic import random_counts


def _accuracy_task(seed, n, shares=(0.5, 0.55, 0.6, 0.52), names="ABCD"):
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    return {s: (base < p + rng.normal(0, 0.08, n)).astype(np.int64) for s, p in zip(names, shares)}


def _sum_task(seed, n, names="ABCD"):
    rng = np.random.default_rng(seed)
    length = rng.integers(1, 20, n)
    return {s: rng.binomial(length, 0.85 + 0.02 * k) for k, s in enumerate(names)}


def _f1_task(seed, n, names="ABCD"):
    rng = np.random.default_rng(seed)
    return dict(zip(names, random_counts(rng, n, recall=tuple(0.5 + 0.07 * k for k in range(len(names))))))


@pytest.fixture(scope="module")
def tasks():
    return {"qa": _accuracy_task(1, 300), "pos": _sum_task(2, 200), "ner": _f1_task(3, 150)}


METRICS = {"qa": "accuracy", "pos": "sum", "ner": "f1"}


@pytest.fixture(scope="module")
def result(tasks):
    return pairperm.compare_systems(tasks, METRICS, rng=7)


def _long(tasks_, metric_cols=None):
    pd = pytest.importorskip("pandas")
    rows = []
    for task, systems in tasks_.items():
        for system, scores in systems.items():
            for item, v in enumerate(scores):
                rows.append({"task": task, "item": f"i{item:04d}", "system": system, "score": v})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- multiple testing


# statsmodels' Holm runs a full garbage collection on every call (~60 ms in a test session): the
# quick set compares 30 families, the slow set 400.
@pytest.mark.parametrize("trials", quick_first([30, 400]))
@pytest.mark.parametrize("method", ["holm", "bonferroni", "fdr_bh", "fdr_by"])
def test_public_multipletests_equals_statsmodels_to_the_bit(method, trials):
    sm = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(0)
    for trial in range(trials):
        m = int(rng.integers(1, 60))
        kind = trial % 4
        if kind == 0:
            p = rng.random(m)
        elif kind == 1:
            p = rng.choice([0.0, 1.0, 0.01, 0.05, 0.2], m)  # 0/1 values and ties
        elif kind == 2:
            p = np.round(rng.random(m), 2)  # ties
        else:
            p = rng.random(m) ** 8
        np.testing.assert_array_equal(pairperm.multipletests(p, method), sm.multipletests(p, method=method)[1])
    assert np.array_equal(pairperm.multipletests(p, None), p)
    with pytest.raises(ValueError, match="multipletests: method must be one of"):
        pairperm.multipletests(p, "sidak")


# ---------------------------------------------------------------- rows


def test_every_task_equals_its_single_task_run(tasks, result):
    assert result.task_names == ("qa", "pos", "ner")
    for name, systems in tasks.items():
        single = pairperm.compare_systems(systems, METRICS[name], rng=7)
        rows = [r for r in result.rows if r.task == name]
        assert [(r.system_a, r.system_b) for r in rows] == list(itertools.combinations(systems, 2))
        for r, s in zip(rows, single.rows):
            assert (r.metric_a, r.metric_b, r.statistic, r.pvalue, r.pvalue_adjusted, r.significant, r.test,
                    r.engine) == (s.metric_a, s.metric_b, s.statistic, s.pvalue, s.pvalue_adjusted, s.significant,
                                  s.test, s.engine)
            assert r.difference == r.metric_a - r.metric_b == s.difference
            if METRICS[name] in ("sum", "accuracy", "mean"):  # the same shift intervals
                assert (r.ci_low, r.ci_high) == (s.ci_low, s.ci_high)
            else:  # bootstrapped: resamples seeded by the task's name
                assert s.ci_low < s.difference < s.ci_high
        assert [r[:11] for r in result.task(name).rows] == [r[:11] for r in single.rows]


def test_one_task_rows_carry_differences_and_intervals(tasks):
    qa = tasks["qa"]
    res = pairperm.compare_systems(qa, "accuracy", confidence_level=0.9)
    assert res.confidence_level == 0.9 and len(res.system_intervals) == len(res.names)
    for r in res.rows:
        si = pairperm.shift_interval(qa[r.system_a], qa[r.system_b], confidence_level=0.9)
        assert (r.ci_low, r.ci_high) == tuple(si.mean_difference)
        assert r.difference == r.metric_a - r.metric_b
    # Each system's interval: the 5% and 95% quantiles of its resampled accuracy with infinitely
    # many resamples, Binomial(N, accuracy) / N.
    n = len(qa["A"])
    for (lo, hi), name in zip(res.system_intervals, res.names):
        assert (lo, hi) == tuple(binom.ppf([0.05, 0.95], n, qa[name].mean()) / n)
    off = pairperm.compare_systems(qa, "accuracy", confidence_level=None)
    assert all(math.isnan(r.ci_low) and math.isnan(r.ci_high) for r in off.rows)
    assert off.system_intervals == () and [r[:11] for r in off.rows] == [r[:11] for r in res.rows]
    for r in (res, off):
        back = pairperm.SystemsComparison.from_json(r.to_json())
        assert back == r and json.loads(r.to_json())  # standard JSON: no NaN


def test_small_task_pvalues_and_intervals_against_brute_force():
    rng = np.random.default_rng(5)
    systems = {s: rng.integers(0, 6, 10) for s in "ABC"}
    res = pairperm.compare_systems({"t": systems, "u": _accuracy_task(2, 12, names="ABC")}, "sum",
                                   correction=None, confidence_level=0.9)
    for r in res.rows:
        if r.task != "t":
            continue
        d = [int(a) - int(b) for a, b in zip(systems[r.system_a], systems[r.system_b])]
        assert r.pvalue == float(sign_flip_pvalue(d, "two-sided"))
        # The inversion interval's ends are the k-th smallest / largest of the 2^N - 1 subset
        # means (k = floor(alpha / 2 * 2^N)), times N for a sum.
        means = sorted(Fraction(sum(d[i] for i in s), len(s))
                       for size in range(1, len(d) + 1) for s in itertools.combinations(range(len(d)), size))
        k = math.floor(Fraction(1, 20) * 2 ** len(d))
        assert r.ci_low == float(means[k - 1] * len(d)) and r.ci_high == float(means[-k] * len(d))
        assert r.ci_low <= r.difference <= r.ci_high


def test_sum_and_mean_intervals_equal_shift_interval(tasks, result):
    for r in result.rows:
        if r.task == "ner":
            continue
        x, y = tasks[r.task][r.system_a], tasks[r.task][r.system_b]
        si = pairperm.shift_interval(x, y, confidence_level=0.95)
        want = si.sum_difference if r.task == "pos" else si.mean_difference
        assert (r.ci_low, r.ci_high) == tuple(want)
    assert {t.name: t.interval_method for t in result.tasks} == {
        "qa": "shift_interval", "pos": "shift_interval", "ner": "bootstrap_percentile"}


def test_bootstrap_intervals_come_from_one_shared_set_per_task(tasks, result):
    t = next(t for t in result.tasks if t.name == "ner")
    direct = pairperm.bootstrap_intervals(list(tasks["ner"].values()), "f1", method="percentile", n_resamples=1000,
                                          rng=t.bootstrap_seed)
    assert t.system_intervals == tuple(tuple(iv) for iv in direct.intervals.tolist())
    np.testing.assert_allclose(direct.estimates, t.metric_values, rtol=1e-12)
    rows = [r for r in result.rows if r.task == "ner"]
    assert [(r.ci_low, r.ci_high) for r in rows] == [tuple(iv) for iv in direct.difference_intervals.tolist()]


def test_real_valued_and_wide_integer_scores_keep_the_shared_resamples():
    rng = np.random.default_rng(4)
    data = {"real": {s: rng.random(80) + 0.1 * k for k, s in enumerate("ABC")},
            "wide": {s: rng.integers(0, 5000, 80) for s in "ABC"}}
    res = pairperm.compare_systems(data, {"real": "mean", "wide": "sum"}, rng=2)
    for t in res.tasks:
        scale = 80 if t.name == "wide" else 1
        direct = pairperm.bootstrap_intervals(list(data[t.name].values()), "mean", method="percentile",
                                              n_resamples=1000, rng=t.bootstrap_seed)
        assert t.system_intervals == tuple(tuple(iv) for iv in (direct.intervals * scale).tolist())


def test_sum_and_mean_system_intervals_are_the_unsampled_bootstrap(tasks, result):
    # Sums and means: each system's percentile interval with infinitely many resamples. The
    # accuracy task's is Binomial(N, accuracy) / N exactly; the sum task's sits where a large
    # sampled bootstrap puts it (its quantiles' Monte Carlo error is ~0.3% of the interval).
    by_name = {t.name: t for t in result.tasks}
    qa = by_name["qa"]
    n = len(tasks["qa"]["A"])
    for name, iv in zip(qa.systems, qa.system_intervals):
        assert iv == tuple(binom.ppf([0.025, 0.975], n, tasks["qa"][name].mean()) / n)
    pos = by_name["pos"]
    sampled = pairperm.bootstrap_intervals(list(tasks["pos"].values()), "mean", method="percentile",
                                           n_resamples=200_000, rng=1).intervals * len(tasks["pos"]["A"])
    for (lo, hi), (s_lo, s_hi) in zip(pos.system_intervals, sampled):
        assert abs(lo - s_lo) < 0.02 * (s_hi - s_lo) and abs(hi - s_hi) < 0.02 * (s_hi - s_lo)


def test_seeded_runs_repeat(tasks, result):
    assert pairperm.compare_systems(tasks, METRICS, rng=7) == result


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_intervals(tasks, alternative):
    res = pairperm.compare_systems(tasks, METRICS, alternative=alternative, rng=3)
    ner = next(t for t in res.tasks if t.name == "ner")
    direct = pairperm.bootstrap_intervals(list(tasks["ner"].values()), "f1", method="percentile", n_resamples=1000,
                                          rng=ner.bootstrap_seed, alternative=alternative)
    for r in res.rows:
        if r.task == "ner":
            continue
        si = pairperm.shift_interval(tasks[r.task][r.system_a], tasks[r.task][r.system_b], alternative=alternative)
        assert (r.ci_low, r.ci_high) == tuple(si.sum_difference if r.task == "pos" else si.mean_difference)
    rows = [r for r in res.rows if r.task == "ner"]
    assert [(r.ci_low, r.ci_high) for r in rows] == [tuple(iv) for iv in direct.difference_intervals.tolist()]
    # Each system's own interval stays two-sided.
    assert all(math.isfinite(lo) and math.isfinite(hi) for lo, hi in ner.system_intervals)


def test_lower_is_better_intervals_face_the_tested_side():
    rng = np.random.default_rng(4)
    ppl = {s: 1 + rng.gamma(3.0, 2.0 + 0.3 * k, 40) for k, s in enumerate("ABC")}  # perplexities are at least 1
    res = pairperm.compare_systems({"lm": ppl, "qa": _accuracy_task(1, 50, names="ABC")},
                                   {"lm": "perplexity", "qa": "accuracy"}, alternative="greater")
    for r in res.rows:
        if r.task == "lm":
            # "greater" is A better, i.e. lower perplexity: an upper bound on mean(A) - mean(B).
            si = pairperm.shift_interval(ppl[r.system_a], ppl[r.system_b], alternative="less")
            assert (r.ci_low, r.ci_high) == tuple(si.mean_difference)


def test_without_intervals(tasks):
    res = pairperm.compare_systems(tasks, METRICS, confidence_level=None, rng=7)
    assert all(math.isnan(r.ci_low) and math.isnan(r.ci_high) for r in res.rows)
    assert all(t.system_intervals == () and t.interval_method == "" for t in res.tasks)
    with pytest.raises(ValueError, match="confidence_level"):
        pairperm.compare_systems(tasks, METRICS, confidence_level=1.5)


# ---------------------------------------------------------------- corrections


def test_correction_scope_task_and_family(tasks):
    sm = pytest.importorskip("statsmodels.stats.multitest")
    for method in ("holm", "fdr_bh"):
        per_task = pairperm.compare_systems(tasks, METRICS, correction=method, confidence_level=None)
        family = pairperm.compare_systems(tasks, METRICS, correction=method, correction_scope="family",
                                          confidence_level=None)
        p = np.array([r.pvalue for r in family.rows])
        np.testing.assert_array_equal([r.pvalue_adjusted for r in family.rows], sm.multipletests(p, method=method)[1])
        for name in tasks:
            pt = np.array([r.pvalue for r in per_task.rows if r.task == name])
            np.testing.assert_array_equal([r.pvalue_adjusted for r in per_task.rows if r.task == name],
                                          sm.multipletests(pt, method=method)[1])
        assert [r.pvalue for r in per_task.rows] == list(p)
    with pytest.raises(ValueError, match="correction_scope must be one of"):
        pairperm.compare_systems(tasks, METRICS, correction_scope="tasks")


# ---------------------------------------------------------------- inputs


def test_long_table_equals_mapping_and_aligns_by_item(tasks):
    two = {"qa": tasks["qa"], "pos": tasks["pos"]}
    metric = {"qa": "accuracy", "pos": "sum"}
    frame = _long(two)
    want = pairperm.compare_systems(two, metric, rng=1)
    assert pairperm.compare_systems(frame, metric, rng=1) == want
    # Rows in any order: items are aligned by id; tasks and systems come in order of first appearance.
    shuffled = frame.sample(frac=1.0, random_state=0)
    res = pairperm.compare_systems(shuffled, metric, rng=1, names=list("ABCD"))
    assert res.task_names == tuple(dict.fromkeys(shuffled.task))
    for name in two:
        assert res.task(name) == want.task(name)
    renamed = frame.rename(columns={"task": "benchmark", "item": "doc_id", "system": "model", "score": "acc"})
    cols = {"task": "benchmark", "item": "doc_id", "system": "model", "score": "acc"}
    assert pairperm.compare_systems(renamed, metric, columns=cols, rng=1) == want


def test_long_table_with_several_score_columns_for_f1(tasks):
    pd = pytest.importorskip("pandas")
    rows = [{"task": "ner", "item": i, "system": s, "tp": int(c[0]), "fp": int(c[1]), "fn": int(c[2])}
            for s, arr in tasks["ner"].items() for i, c in enumerate(arr)]
    rows += [{"task": "qa", "item": i, "system": s, "tp": int(v), "fp": 0, "fn": 0}
             for s, arr in tasks["qa"].items() for i, v in enumerate(arr)]
    frame = pd.DataFrame(rows)
    res = pairperm.compare_systems(frame[frame.task == "ner"], "f1", columns={"score": ("tp", "fp", "fn")},
                                   confidence_level=None)
    want = pairperm.compare_systems({"ner": tasks["ner"]}, "f1", confidence_level=None)
    assert res.rows == want.rows


def test_long_table_missing_and_duplicated_cells_are_named(tasks):
    frame = _long({"qa": tasks["qa"]})
    with pytest.raises(ValueError, match=r"task 'qa': system 'B' has no score for item 'i0003'"):
        pairperm.compare_systems(frame.drop(index=frame.index[(frame.system == "B") & (frame.item == "i0003")]))
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match=r"2 rows sharing a \(task, item, system\): \('qa', 'i0005', 'A'\)"):
        pairperm.compare_systems(pd.concat([frame, frame.iloc[[5]]]))
    holes = frame.copy()
    holes.loc[7, "score"] = np.nan
    with pytest.raises(ValueError, match=r"score column 'score' is missing for \(task, item, system\) = "
                                         r"\('qa', 'i0007', 'A'\)"):
        pairperm.compare_systems(holes)
    no_task = frame.astype({"task": object})
    no_task.loc[9, "task"] = None
    with pytest.raises(ValueError, match=r"column 'task' is empty in row 9"):
        pairperm.compare_systems(no_task)
    with pytest.raises(ValueError, match=r"no column\(s\) 'benchmark'"):
        pairperm.compare_systems(frame, columns={"task": "benchmark"})
    with pytest.raises(ValueError, match="unknown key"):
        pairperm.compare_systems(frame, columns={"tasks": "task"})


def test_task_values_may_be_dataframes_and_arrays(tasks):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(tasks["qa"])
    arr = np.stack(list(tasks["pos"].values()))
    res = pairperm.compare_systems({"qa": frame, "pos": arr}, {"qa": "accuracy", "pos": "sum"}, names=list("ABCD"),
                                   rng=1)
    want = pairperm.compare_systems({"qa": tasks["qa"], "pos": tasks["pos"]}, {"qa": "accuracy", "pos": "sum"},
                                    rng=1)
    assert res == want


def test_bad_task_inputs_name_the_task(tasks):
    bad = {"qa": tasks["qa"], "pos": {"A": [1, 2, 3], "B": [1, 2]}}
    with pytest.raises(ValueError, match=r"task 'pos': compare_systems: every system must be scored on the same"):
        pairperm.compare_systems(bad, "sum")
    with pytest.raises(ValueError, match=r"missing for 'ner'"):
        pairperm.compare_systems(tasks, {"qa": "accuracy", "pos": "sum"})
    with pytest.raises(ValueError, match=r"task 'qa': compare_systems: baseline 'Z'"):
        pairperm.compare_systems(tasks, METRICS, baseline="Z")
    with pytest.raises(ValueError, match=r"cache= applies to several tasks"):
        pairperm.compare_systems(tasks["qa"], cache={})
    with pytest.raises(ValueError, match=r"confidence_level must be"):
        pairperm.compare_systems(tasks["qa"], confidence_level=1.5)
    with pytest.raises(ValueError, match=r"bootstrap_resamples must be a positive integer"):
        pairperm.compare_systems(tasks["qa"], bootstrap_resamples=0)
    with pytest.raises(ValueError, match=r"mapping \{task: metric\} needs several tasks"):
        pairperm.compare_systems(tasks["qa"], {"qa": "accuracy"})


def test_baseline_rows(tasks):
    res = pairperm.compare_systems(tasks, METRICS, baseline="A", rng=7)
    assert [(r.task, r.system_a, r.system_b) for r in res.rows] == [
        (t, s, "A") for t in tasks for s in "BCD"]


# ---------------------------------------------------------------- provenance


def test_to_dict_carries_provenance_and_round_trips(tasks):
    res = pairperm.compare_systems(tasks, METRICS, rng=7, correction="fdr_by", correction_scope="family",
                                   confidence_level=0.9, method="auto")
    d = json.loads(res.to_json())
    assert d["pairperm_version"] == pairperm.__version__
    assert (d["seed"], d["correction"], d["correction_scope"], d["confidence_level"], d["method"],
            d["bootstrap_resamples"], d["complete"]) == (7, "fdr_by", "family", 0.9, "auto", 1000, True)
    assert [(t["name"], t["n_items"], t["n_units"], t["metric"]) for t in d["tasks"]] == [
        ("qa", 300, 300, "accuracy"), ("pos", 200, 200, "sum"), ("ner", 150, 150, "f1")]
    assert all(p["engine"] and p["test"] for p in d["pairs"])
    assert list(d["pairs"][0]) == list(pairperm.TaskPair._fields)
    assert pairperm.MultiTaskComparison.from_json(res.to_json()) == res
    frame = res.to_frame()
    assert list(frame.columns) == ["task", "system_a", "system_b", "metric_a", "metric_b", "difference", "ci_low",
                                   "ci_high", "statistic", "pvalue", "pvalue_adjusted", "significant", "test",
                                   "engine", "log_pvalue"]


# ---------------------------------------------------------------- cache and resume


_RUN_CHUNK = _tasks._run_chunk


class _Counting:
    """Wraps the pair runner: counts the pairs it computes, raises after `fail_after` calls."""

    def __init__(self, monkeypatch, fail_after=None, exc=RuntimeError):
        self.pairs = 0
        self.calls = 0
        self.fail_after = fail_after
        self.exc = exc
        self.inner = _RUN_CHUNK
        monkeypatch.setattr(_tasks, "_run_chunk", self)

    def __call__(self, task, idx, *args, **kwargs):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise self.exc("interrupted")
        self.calls += 1
        self.pairs += len(idx)
        return self.inner(task, idx, *args, **kwargs)


def _many_systems():
    return {"qa": _accuracy_task(11, 400, shares=tuple(np.linspace(0.45, 0.6, 14)), names=[f"m{k}" for k in range(14)]),
            "ner": _f1_task(12, 80, names=[f"m{k}" for k in range(6)])}


def test_second_run_with_the_cache_computes_nothing(tmp_path, monkeypatch):
    data = _many_systems()
    metric = {"qa": "accuracy", "ner": "f1"}
    first = _Counting(monkeypatch)
    res1 = pairperm.compare_systems(data, metric, rng=2, cache=tmp_path)
    assert first.pairs == 91 + 15
    second = _Counting(monkeypatch)
    res2 = pairperm.compare_systems(data, metric, rng=2, cache=str(tmp_path))
    assert second.pairs == 0 and res2 == res1
    # Changing one system's data recomputes exactly its pairs.
    changed = {"qa": dict(data["qa"]), "ner": data["ner"]}
    changed["qa"]["m3"] = 1 - changed["qa"]["m3"]
    third = _Counting(monkeypatch)
    pairperm.compare_systems(changed, metric, rng=2, cache=tmp_path)
    assert third.pairs == 13
    # So does another option deciding the result.
    fourth = _Counting(monkeypatch)
    pairperm.compare_systems(data, metric, rng=2, cache=tmp_path, confidence_level=0.9)
    assert fourth.pairs == 91  # the bootstrapped F1 task's pairs carry no interval of their own


def test_interrupted_run_resumes_and_equals_an_uninterrupted_one(tmp_path, monkeypatch):
    data = _many_systems()
    metric = {"qa": "accuracy", "ner": "f1"}
    want = pairperm.compare_systems(data, metric, rng=2)
    broken = _Counting(monkeypatch, fail_after=1)  # the first chunk of 64 pairs finishes, then it fails
    with pytest.raises(RuntimeError, match="interrupted"):
        pairperm.compare_systems(data, metric, rng=2, cache=tmp_path)
    assert broken.pairs == 64
    resumed = _Counting(monkeypatch)
    res = pairperm.compare_systems(data, metric, rng=2, cache=tmp_path)
    assert resumed.pairs == 91 + 15 - 64
    assert res == want


def test_keyboard_interrupt_keeps_finished_pairs(monkeypatch):
    data = _many_systems()
    store: dict = {}

    class Store:
        def get(self, key):
            return store.get(key)

        def set(self, key, value):
            store[key] = value

    _Counting(monkeypatch, fail_after=1, exc=KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt) as info:
        pairperm.compare_systems(data, {"qa": "accuracy", "ner": "f1"}, rng=2, cache=Store())
    partial = info.value.partial_result
    assert not partial.complete and len(partial.rows) == 64 == len(store)
    monkeypatch.undo()
    full = pairperm.compare_systems(data, {"qa": "accuracy", "ner": "f1"}, rng=2, confidence_level=None)
    assert [(r.system_a, r.system_b, r.pvalue) for r in partial.rows] == [
        (r.system_a, r.system_b, r.pvalue) for r in full.rows[:64]]


def _fbeta(beta):
    """A metric factory, as harnesses write them: every closure has the same name."""
    def fbeta(s):
        tp, fp, fn = s[..., 0], s[..., 1], s[..., 2]
        return (1 + beta**2) * tp / ((1 + beta**2) * tp + beta**2 * fn + fp)
    return fbeta


_SCALE = 2.0


def _scaled(s):
    return _SCALE * s[..., 0] / (s[..., 0] + s[..., 1] + s[..., 2])


def test_cache_keys_a_callable_metric_by_what_decides_its_results(tmp_path, monkeypatch):
    global _SCALE
    data = {"ner": _f1_task(21, 60, names="ABC"), "pos": _f1_task(22, 60, names="ABC")}
    kw = dict(rng=0, n_resamples=300, confidence_level=None, progress=False)

    def run(metric, cache=tmp_path):
        counting = _Counting(monkeypatch)
        res = pairperm.compare_systems(data, metric, cache=cache, **kw)
        monkeypatch.undo()
        return res, counting.pairs

    # Another closure of the same factory, or another lambda, is another metric: nothing is reused.
    first, computed = run(_fbeta(0.5))
    assert computed == 6
    for other in (_fbeta(2.0), lambda s: s[..., 0] / (s[..., 0] + s[..., 1]), lambda s: s[..., 0] / (s[..., 0] + s[..., 2])):
        cached, computed = run(other)
        assert computed == 6 and cached == pairperm.compare_systems(data, other, **kw)
    # The same closure again is found.
    again, computed = run(_fbeta(0.5))
    assert computed == 0 and again == first
    # So is a changed global the function reads.
    run(_scaled)
    try:
        _SCALE = 3.0
        cached, computed = run(_scaled)
        assert computed == 6 and cached == pairperm.compare_systems(data, _scaled, **kw)
    finally:
        _SCALE = 2.0


def _weighted_recall(s):
    """A metric configured through an attribute of its own."""
    return _weighted_recall.weight * s[..., 0] / (s[..., 0] + s[..., 2])


def test_cache_keys_the_attributes_a_callable_metric_carries(tmp_path, monkeypatch):
    data = {"ner": _f1_task(23, 60, names="ABC")}
    kw = dict(rng=0, n_resamples=300, confidence_level=None, progress=False)
    try:
        _weighted_recall.weight = 1.0
        pairperm.compare_systems(data, _weighted_recall, cache=tmp_path, **kw)
        _weighted_recall.weight = 2.0
        counting = _Counting(monkeypatch)
        cached = pairperm.compare_systems(data, _weighted_recall, cache=tmp_path, **kw)
        monkeypatch.undo()
        assert counting.pairs == 3
        assert cached == pairperm.compare_systems(data, _weighted_recall, **kw)
        # An attribute the key cannot hash is refused, as an unhashable global is.
        class Weight:
            def __mul__(self, other):
                return 2.0 * other

        _weighted_recall.weight = Weight()
        with pytest.raises(ValueError, match=r"the attributes of .*_weighted_recall\['weight'\] is a .*Weight"):
            pairperm.compare_systems(data, _weighted_recall, cache=tmp_path, **kw)
    finally:
        del _weighted_recall.weight


def test_cache_refuses_a_callable_metric_it_cannot_key(tmp_path, monkeypatch):
    data = {"ner": _f1_task(21, 60, names="ABC"), "pos": _f1_task(22, 60, names="ABC")}

    class Weighted:  # its result depends on state the cache cannot see
        def __init__(self, w):
            self.w = w

        def __call__(self, s):
            return self.w * s[..., 0] / s.sum(axis=-1)

    counting = _Counting(monkeypatch)
    with pytest.raises(ValueError, match=r"task 'ner': cache= cannot key the metric .*Weighted.*or run without cache="):
        pairperm.compare_systems(data, Weighted(2.0), cache=tmp_path, n_resamples=300)
    assert counting.pairs == 0  # refused before any pair ran
    weights = Weighted(3.0)
    with pytest.raises(ValueError, match=r"'weights' in the closure of .* is a .*Weighted"):
        pairperm.compare_systems(data, lambda s: weights(s), cache=tmp_path, n_resamples=300)


def test_callable_key_is_the_same_in_another_process(tmp_path):
    import subprocess
    import sys

    (tmp_path / "metric_mod.py").write_text(
        "import numpy as np\nNAMES = {'tp', 'fp', 'fn', 'x', 'y', 'z'}\nW = np.arange(3.0)\n"
        "def metric(s):\n    return (s @ W) / len(NAMES)\n")
    code = "import metric_mod; from pairperm._cache import callable_key; print(callable_key(metric_mod.metric))"
    keys = {subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout for seed in (1, 2, 3)}
    assert len(keys) == 1 and len(keys.pop().strip()) == 64


def test_keyboard_interrupt_keeps_the_finished_pairs_intervals(monkeypatch):
    data = _many_systems()
    metric = {"qa": "accuracy", "ner": "f1"}
    full = pairperm.compare_systems(data, metric, rng=2)
    _Counting(monkeypatch, fail_after=1, exc=KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt) as info:
        pairperm.compare_systems(data, metric, rng=2, cache=_DictStore())
    partial = info.value.partial_result
    assert not partial.complete and partial.confidence_level == full.confidence_level
    assert len(partial.rows) == 64
    for got, want in zip(partial.rows, full.rows):
        assert (got.system_a, got.system_b, got.pvalue) == (want.system_a, want.system_b, want.pvalue)
        assert math.isfinite(got.ci_low) and (got.ci_low, got.ci_high) == (want.ci_low, want.ci_high)
    back = pairperm.MultiTaskComparison.from_json(partial.to_json())
    assert back == partial and [(r.ci_low, r.ci_high) for r in back.rows] == [(r.ci_low, r.ci_high) for r in partial.rows]


class _DictStore:
    def __init__(self):
        self.items: dict = {}

    def get(self, key):
        return self.items.get(key)

    def set(self, key, value):
        self.items[key] = value


def test_long_table_names_equal_as_strings_are_refused_as_in_a_mapping():
    pd = pytest.importorskip("pandas")
    a, b, c = [1, 1, 1, 1, 1, 1, 0, 0], [0] * 8, [1] * 8
    systems = pd.DataFrame([("t", i, s, v[i]) for i in range(8) for s, v in (("A", a), (1, b), ("1", c))],
                           columns=["task", "item", "system", "score"])
    with pytest.raises(ValueError, match=r"task 't': system names must be unique as strings; got \['A', 1, '1'\]"):
        pairperm.compare_systems(systems)
    with pytest.raises(ValueError, match="names must be unique as strings"):
        pairperm.compare_systems({"t": {"A": a, 1: b, "1": c}, "u": {"A": a, "B": b}})
    tasks = pd.DataFrame([(t, i, s, v[i]) for i in range(8) for t, v in ((1, a), ("1", c)) for s in ("A", "B")],
                         columns=["task", "item", "system", "score"])
    with pytest.raises(ValueError, match=r"task names must be unique as strings; got \[1, '1'\]"):
        pairperm.compare_systems(tasks)
    with pytest.raises(ValueError, match="task names must be unique as strings"):
        pairperm.compare_systems({1: {"A": a, "B": b}, "1": {"A": c, "B": b}})


def test_bad_cache_is_an_error(tmp_path, tasks):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="is not a directory"):
        pairperm.compare_systems(tasks, METRICS, cache=f)
    with pytest.raises(ValueError, match=r"get\(key\) and set\(key, value\)"):
        pairperm.compare_systems(tasks, METRICS, cache=42)


# ---------------------------------------------------------------- report


def _expected_mark(res, task, system, reference):
    """The report's rule from the rows: + / - for a significant pair with the reference."""
    t = next(t for t in res.tasks if t.name == task)
    value = dict(zip(t.systems, t.metric_values))
    for r in res.rows:
        if r.task == task and {r.system_a, r.system_b} == {system, reference}:
            if not r.significant:
                return ""
            return "+" if value[system] > value[reference] else "-"
    return None


@pytest.mark.parametrize("baseline", [None, "B"])
def test_report_marks_follow_the_rule(result, baseline):
    rep = result.report(baseline)
    for t in result.tasks:
        best = t.systems[int(np.argmax(t.metric_values))]
        ref = baseline or best
        for s in t.systems:
            cell = rep.cells[s, t.name]
            assert cell.best == (s == best)
            assert cell.mark == ("" if s == ref else _expected_mark(result, t.name, s, ref))
            assert (cell.ci_low, cell.ci_high) == t.system_intervals[t.systems.index(s)]
    marks = {c.mark for c in rep.cells.values()}
    assert marks & {"+", "-"} and (baseline is not None or "+" not in marks)
    d = json.loads(rep.to_json())
    assert d["reference"] == ("best" if baseline is None else "baseline") and len(d["cells"]) == 12


def test_report_formats_escape_names():
    data = {"a&b_%": _accuracy_task(1, 60, names=["x_1", "y|2", "<z>"]),
            "t#2": _accuracy_task(2, 60, names=["x_1", "y|2", "<z>"])}
    res = pairperm.compare_systems(data, "accuracy", rng=0)
    latex = res.to_latex()
    assert r"a\&b\_\%" in latex and r"t\#2" in latex and r"x\_1" in latex and r"\toprule" in latex
    md = res.to_markdown()
    assert r"y\|2" in md and md.count("\n|") == 4
    html = res._repr_html_()
    assert "&lt;z&gt;" in html and "<z>" not in html


def test_report_at_30_systems_and_12_tasks_stays_one_line_per_system():
    names = [f"ckpt-{k:02d}" for k in range(30)]
    data = {f"task{t}": _accuracy_task(t, 120, shares=tuple(np.linspace(0.4, 0.7, 30)), names=names)
            for t in range(12)}
    res = pairperm.compare_systems(data, "accuracy", confidence_level=None, correction_scope="family")
    json.loads(res.report().to_json(), parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    md = res.report(intervals=False).to_markdown()
    lines = md.splitlines()
    assert len([ln for ln in lines if ln.startswith("| ckpt-")]) == 30
    assert max(len(ln) for ln in lines if ln.startswith("| ckpt-")) < 200
    assert res.to_latex().count(r"\\") == 31


_LATEX_PIECE = re.compile(r"(?P<it>\\textit\{)?(?P<bf>\\textbf\{)?(?P<value>[^{}\\$]*)\}*"
                          r"(?:\\,)?(?:\{\\footnotesize ?\[(?P<low>[^,\]]+), (?P<high>[^\]]+)\]\})?"
                          r"(?:\$\^\{(?P<mark>[+-])\}\$)?")


def _latex_piece(text):
    m = _LATEX_PIECE.fullmatch(text.strip())
    assert m, text
    interval = None if m["low"] is None else (float(m["low"]), float(m["high"]))
    return m["value"], bool(m["bf"]), bool(m["it"]), interval, m["mark"] or ""


def _latex_body(tex):
    """(tabular column spec, header cells, body rows as lists of cells) of a report's LaTeX."""
    spec = re.search(r"\\begin\{tabular\}\{([^}]*)\}", tex)[1]
    body = tex.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    lines = [ln for ln in body.split("\n") if ln.strip() and ln.strip() != "\\addlinespace"]
    head = tex.split("\\toprule\n", 1)[1].split("\n", 1)[0]
    split = [ln.removesuffix(" \\\\").split(" & ") for ln in lines]
    return spec, head.removesuffix(" \\\\").split(" & "), split


def _latex_cells(tex, report):
    """{(system, task): (value text, bold, italic, interval, mark)} read from either layout."""
    spec, head, rows = _latex_body(tex)
    cells = {}
    if head[0] == "System":  # wide: a row per system
        for row in rows:
            for task, text in zip(report.tasks, row[1:]):
                if text:
                    cells[row[0], task] = _latex_piece(text)
        return cells
    assert head[0] == "Task"
    systems = head[1:]
    # A row per task, its first cell the task's name, and below it a row of intervals, if any.
    starts = [k for k, row in enumerate(rows) if row[0]]
    assert len(starts) == len(report.tasks) and starts[0] == 0
    for task, k, stop in zip(report.tasks, starts, [*starts[1:], len(rows)]):
        values = rows[k]
        assert values[0].startswith(task) and stop - k in (1, 2)
        intervals = rows[k + 1] if stop - k == 2 else [""] * len(values)
        for system, text, interval in zip(systems, values[1:], intervals[1:]):
            if text:
                value, bold, italic, none, mark = _latex_piece(text)
                assert none is None
                cells[system, task] = (value, bold, italic, _latex_piece(interval)[3] if interval else None, mark)
    return cells


def _check_latex_cells(cells, res, report, baseline):
    """Every system's value, interval, bold and mark on every task, against the comparison."""
    assert len(cells) == sum(len(t.systems) for t in res.tasks)
    for t, places in zip(res.tasks, report.decimals):
        best = t.systems[int(np.argmax(t.metric_values))]
        ref = baseline or best
        for s, v, (low, high) in zip(t.systems, t.metric_values, t.system_intervals):
            value, bold, italic, interval, mark = cells[s, t.name]
            tol = 0.5 * 10.0 ** -places + 1e-12
            assert abs(float(value) - v) <= tol
            assert interval is not None and abs(interval[0] - low) <= tol and abs(interval[1] - high) <= tol
            assert bold == (s == best) and italic == (baseline is not None and s == baseline)
            assert mark == ("" if s == ref else _expected_mark(res, t.name, s, ref) or "")


@pytest.fixture(scope="module")
def twelve_tasks():
    names = [f"ckpt-{k}" for k in range(5)]
    return pairperm.compare_systems({f"task{t:02d}": _accuracy_task(t, 150, shares=(0.45, 0.5, 0.55, 0.62, 0.7),
                                                                    names=names) for t in range(12)}, "accuracy", rng=0)


@pytest.mark.parametrize("baseline", [None, "ckpt-2"])
def test_latex_report_of_12_tasks_is_narrow_by_default_and_keeps_every_value_and_mark(twelve_tasks, baseline):
    res = twelve_tasks
    rep = res.report(baseline)
    tex = res.to_latex(baseline)
    assert tex == rep.to_latex(layout="tall")
    spec, head, _ = _latex_body(tex)
    wide_spec = _latex_body(rep.to_latex(layout="wide"))[0]
    assert len(spec) == 1 + len(rep.systems) < len(wide_spec) == 1 + len(rep.tasks)
    assert head == ["Task", *rep.systems]
    cells = _latex_cells(tex, rep)
    assert cells == _latex_cells(rep.to_latex(layout="wide"), rep)
    _check_latex_cells(cells, res, rep, baseline)
    marks = {c[4] for c in cells.values()}
    assert "-" in marks and ("+" in marks) == (baseline is not None)  # both kinds are checked
    assert "\\caption{accuracy on every task;" in tex


def test_latex_report_of_few_tasks_stays_wide(result):
    rep = result.report()
    tex = rep.to_latex()
    assert tex == rep.to_latex(layout="wide") == result.to_latex()
    assert _latex_body(tex)[0] == "l" + "r" * len(result.tasks)
    tall = rep.to_latex(layout="tall")  # on request, with each task's metric beside its name
    assert _latex_body(tall)[0] == "l" + "r" * len(rep.systems)
    assert [row[0] for row in _latex_body(tall)[2] if row[0]] == [f"{t} ({m})" for t, m in zip(rep.tasks, rep.metrics)]
    assert _latex_cells(tall, rep) == _latex_cells(tex, rep)
    _check_latex_cells(_latex_cells(tall, rep), result, rep, None)
    bare = result.report(intervals=False)
    assert _latex_cells(bare.to_latex(layout="tall"), bare) == _latex_cells(bare.to_latex(), bare)
    with pytest.raises(ValueError, match="layout must be"):
        rep.to_latex(layout="square")


def test_plot_differences_draws_the_long_table(result):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    axes = result.plot_differences(baseline="A")
    assert [ax.get_title() for ax in axes] == ["qa", "pos", "ner"]
    assert sorted(t.get_text() for t in axes[0].get_yticklabels()) == ["B", "C", "D"]
    plt.close("all")


def test_executor_and_progress_cover_every_task(tasks, result):
    import concurrent.futures as cf

    seen = []
    with cf.ThreadPoolExecutor(2) as pool:
        res = pairperm.compare_systems(tasks, METRICS, rng=7, executor=pool, progress=lambda d, t: seen.append((d, t)))
    assert res == result
    assert seen[-1] == (18, 18) and all(t == 18 for _, t in seen) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def _token_f1(sums):
    tp, fp, fn = sums[..., 0], sums[..., 1], sums[..., 2]
    return 2 * tp / (2 * tp + fp + fn)


def test_bootstrapped_metrics_match_the_reported_values():
    counts = _f1_task(8, 120, names="ABC")
    two_columns = {s: np.column_stack([c[:, 0], c[:, 1] + c[:, 2]]) for s, c in counts.items()}  # (tp, errors)
    data = {"p": counts, "r": counts, "f1_2col": two_columns, "custom": {s: c.astype(float) for s, c in counts.items()}}
    metric = {"p": "precision", "r": "recall", "f1_2col": "f1", "custom": _token_f1}
    res = pairperm.compare_systems(data, metric, rng=1, n_resamples=500)
    for t in res.tasks:
        stats, fn, scale = _tasks.bootstrap_input(metric[t.name], [np.asarray(v) for v in data[t.name].values()])
        direct = pairperm.bootstrap_intervals(stats, fn, method="percentile", n_resamples=1000, rng=t.bootstrap_seed)
        np.testing.assert_allclose(direct.estimates * scale, t.metric_values, rtol=1e-12)
        assert t.system_intervals == tuple(tuple(iv) for iv in direct.intervals.tolist())
        assert t.interval_method == "bootstrap_percentile"
    f1 = next(t for t in res.tasks if t.name == "f1_2col")
    np.testing.assert_allclose(f1.metric_values, next(t for t in res.tasks if t.name == "custom").metric_values)


@pytest.mark.parametrize("options", [{"confidence_level": None}, {"alternative": "greater"}])
def test_json_is_standard_and_round_trips_without_intervals_and_one_sided(tasks, options):
    res = pairperm.compare_systems(tasks, METRICS, rng=7, **options)
    text = res.to_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    back = pairperm.MultiTaskComparison.from_json(text)
    assert back == res
    for a, b in zip(back.rows, res.rows):
        np.testing.assert_array_equal([a.ci_low, a.ci_high], [b.ci_low, b.ci_high])


def _strict_json(text):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


def _same_floats(a, b):
    """Equal, NaN in the same places (NaN is not ±inf)."""
    np.testing.assert_array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_json_keeps_no_interval_apart_from_an_unbounded_one_and_writes_no_nan():
    rng = np.random.default_rng(0)

    def system(k):
        den = np.zeros(40, int)
        den[k] = 1
        return np.column_stack([rng.integers(0, 2, 40), den])

    ratio_systems = {"A": system(0), "B": system(1)}
    ratio_systems["A"][:, 0] = 0
    ratio_systems["A"][5, 0] = 1

    def ratio(s):  # finite on the full data, 0/0 on some bootstrap resamples
        with np.errstate(invalid="ignore"):
            return s[..., 0] / (s[..., 0] + s[..., 1])

    big = {s: rng.integers(0, 3, 8) * 2**54 for s in "AB"}  # no interval: NaN
    results = [
        pairperm.compare_systems({"t": ratio_systems, "u": ratio_systems}, ratio, rng=0, n_resamples=300),
        pairperm.compare_systems(ratio_systems, ratio, rng=0, n_resamples=300),
        pairperm.compare_systems({"t": big, "u": big}, "sum", rng=0),
        pairperm.compare_systems(big, "sum", rng=0),
        pairperm.compare_systems({t: {s: v // 2**54 for s, v in big.items()} for t in "tu"}, "sum", rng=0,
                                 alternative="greater"),
    ]
    system_nan = [any(math.isnan(v) for iv in (r.tasks[0].system_intervals if hasattr(r, "tasks")
                                                else r.system_intervals) for v in iv) for r in results]
    pair_nan = [math.isnan(r.rows[0].ci_low) for r in results]
    assert system_nan[:2] == [True, True] and pair_nan[2:4] == [True, True]  # the cases hold NaN intervals
    assert math.isinf(results[4].rows[0].ci_high)  # and an unbounded one
    for res in results:
        cls = type(res)
        text = res.to_json()
        _strict_json(text)
        back = cls.from_json(text)
        assert back == res
        _same_floats([(r.ci_low, r.ci_high) for r in back.rows], [(r.ci_low, r.ci_high) for r in res.rows])
        summaries = [(b, r) for b, r in zip(back.tasks, res.tasks)] if hasattr(res, "tasks") else [(back, res)]
        for b, r in summaries:
            _same_floats(b.system_intervals, r.system_intervals)
            _same_floats(b.metric_values, r.metric_values)
    # No interval and an unbounded one are different results.
    nan_row = results[2].rows[0]
    unbounded = dataclasses.replace(results[2], rows=(nan_row._replace(ci_low=-math.inf, ci_high=math.inf),
                                                      *results[2].rows[1:]))
    assert unbounded != results[2]
    _same_floats([(r.ci_low, r.ci_high) for r in pairperm.MultiTaskComparison.from_json(unbounded.to_json()).rows],
                 [(r.ci_low, r.ci_high) for r in unbounded.rows])


def test_json_written_with_null_interval_ends_still_reads():
    # Files of earlier versions wrote both unbounded and absent ends as null.
    res = pairperm.compare_systems({"t": {"A": [1, 0, 1, 1, 0, 1], "B": [0, 0, 1, 0, 0, 1]},
                                    "u": {"A": [1, 1, 1, 0], "B": [0, 1, 0, 0]}}, alternative="greater")
    old = res.to_dict()
    for r in old["pairs"]:
        r.setdefault("ci_low", None)
        r.setdefault("ci_high", None)
    back = pairperm.MultiTaskComparison.from_dict(old)
    _same_floats([(r.ci_low, r.ci_high) for r in back.rows], [(r.ci_low, r.ci_high) for r in res.rows])
    assert all(math.isinf(r.ci_high) for r in back.rows)


def test_one_task_json_carries_provenance(tasks):
    res = pairperm.compare_systems(tasks["qa"], "accuracy", groups=None, rng=3)
    prov = json.loads(res.to_json())["provenance"]
    assert prov["pairperm_version"] == pairperm.__version__
    assert prov["n_items"] == prov["n_units"] == len(next(iter(tasks["qa"].values())))
    assert prov["method"] == "auto" and prov["bootstrap_resamples"] == 1000
    assert isinstance(prov["seed"], int) and isinstance(prov["bootstrap_seed"], int)
    assert pairperm.SystemsComparison.from_json(res.to_json()) == res


def test_an_error_in_one_pair_names_its_task_and_pair():
    import concurrent.futures as cf

    rng = np.random.default_rng(3)
    data = {"A": rng.integers(0, 3, 50), "B": rng.integers(0, 3, 50), "C": rng.integers(0, 10**12, 50)}
    want = r"pair '[AB]' - 'C': permutation_test: method='dp' would need"
    for jobs in (1, 2):
        with pytest.raises(pairperm.SupportTooLargeError, match=r"^compare_systems: " + want):
            pairperm.compare_systems(data, "sum", method="dp", n_jobs=jobs, progress=False)
        with pytest.raises(pairperm.SupportTooLargeError, match=r"^task 'pos': compare_systems: " + want):
            pairperm.compare_systems({"ner": {"A": data["A"], "B": data["B"]}, "pos": data}, "sum", method="dp",
                                     n_jobs=jobs, progress=False)
    with cf.ThreadPoolExecutor(2) as pool, pytest.raises(pairperm.SupportTooLargeError, match=want):
        pairperm.compare_systems(data, "sum", method="dp", executor=pool, progress=False)


def test_cache_keys_only_the_attributes_a_metric_reads():
    import inspect

    from pairperm._cache import callable_key

    def recall(s):
        return s[..., 0] / (s[..., 0] + s[..., 2])

    key = callable_key(recall)
    # What its code never reads cannot change its results, and need not be hashable.
    recall.__signature__ = inspect.signature(recall)
    recall.marks = [object()]
    assert callable_key(recall) == key

    def wrapper(s):
        return recall(s)

    wrapper.__wrapped__ = _fbeta(2.0)  # what functools.wraps leaves: keyed
    other = callable_key(wrapper)
    wrapper.__wrapped__ = _fbeta(0.5)
    assert callable_key(wrapper) != other


def test_rows_keep_log_pvalues_where_pvalues_underflow():
    # F1 of a strong, a middling and a weak tagger on 6,000 sentences: every p-value underflows
    # to 0; the log p-values (those of f1_test) still order the pairs, in rows, frames, JSON and CSV.
    rng = np.random.default_rng(0)
    gold = rng.integers(1, 4, 6000)

    def tagger(recall, false_positives):
        tp = rng.binomial(gold, recall)
        return np.stack([tp, rng.poisson(false_positives, len(gold)), gold - tp], axis=1)

    systems = {"strong": tagger(0.95, 0.1), "mid": tagger(0.6, 0.5), "weak": tagger(0.3, 0.9)}
    res = pairperm.compare_systems(systems, "f1", progress=False)
    several = pairperm.compare_systems({"ner": systems, "ner2": systems}, "f1", progress=False)
    for rows in (res.rows, several.rows):
        for r in rows:
            want = pairperm.f1_test(systems[r.system_a], systems[r.system_b]).log_pvalue
            assert r.pvalue == 0.0 and r.log_pvalue == want and want < -1000
    assert len({r.log_pvalue for r in res.rows}) == 3
    back = pairperm.SystemsComparison.from_json(res.to_json())
    assert [r.log_pvalue for r in back.rows] == [r.log_pvalue for r in res.rows]
    assert [r.log_pvalue for r in pairperm.MultiTaskComparison.from_json(several.to_json()).rows] == \
        [r.log_pvalue for r in several.rows]
    assert list(res.to_frame()["log_pvalue"]) == [r.log_pvalue for r in res.rows]
    assert list(several.to_frame()["log_pvalue"]) == [r.log_pvalue for r in several.rows]
    # Results written before rows kept log p-values read back with the log of the p-value.
    old = res.to_dict()
    for pair in old["pairs"]:
        del pair["log_pvalue"]
        pair["pvalue"] = 0.25
    assert {r.log_pvalue for r in pairperm.SystemsComparison.from_dict(old).rows} == {math.log(0.25)}
