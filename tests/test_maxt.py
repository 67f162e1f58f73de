"""compare_systems(correction="maxT"): the Westfall-Young step-down against closed testing with
max-t local tests written from the definition, its familywise error by simulation under a
partial null, its compatible intervals against its marks, its marks against the rank
intervals', and its inputs."""

import itertools
import math

import numpy as np
import pytest

import pairperm
from pairperm._ranking import _intervals, pair_draws, westfall_young
from test_ranks import _binary_systems


def _closed_testing(stats, null):
    """Adjusted p-value of each hypothesis h by the closure principle: the largest, over every
    subset S holding h, of the max-t test of S, p_S = (1 + #{draws: max_S T* >= max_S t}) / (B + 1)."""
    m, n_draws = len(stats), len(null)
    out = []
    for h in range(m):
        worst = 0.0
        for size in range(1, m + 1):
            for subset in itertools.combinations(range(m), size):
                if h not in subset:
                    continue
                s = list(subset)
                p = (1 + np.sum(null[:, s].max(axis=1) >= stats[s].max())) / (n_draws + 1)
                worst = max(worst, p)
        out.append(min(worst, 1.0))
    return np.array(out)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_step_down_equals_closed_testing_with_max_t_local_tests(alternative):
    rng = np.random.default_rng(21)
    scores = _binary_systems([0.6, 0.63, 0.66, 0.7], 300, rng)
    units = np.stack(list(scores.values()), axis=1).astype(float)
    pairs = np.array(list(itertools.combinations(range(4), 2)), dtype=np.int64)
    family = pair_draws(units, None, False, pairs, alternative, 499, np.random.default_rng(5))
    got = westfall_young([family])
    want = _closed_testing(family.stats, family.null(0, 499))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    assert len(set(np.round(got, 12))) > 2  # the family is not all rejected or all kept


def test_families_over_tasks_take_the_max_over_both():
    rng = np.random.default_rng(22)
    fams = []
    for seed, accs in ((1, [0.6, 0.65, 0.7]), (2, [0.5, 0.52, 0.6])):
        units = np.stack(list(_binary_systems(accs, 200, rng).values()), axis=1).astype(float)
        pairs = np.array(list(itertools.combinations(range(3), 2)), dtype=np.int64)
        fams.append(pair_draws(units, None, False, pairs, "two-sided", 199, np.random.default_rng(seed)))
    stats = np.concatenate([f.stats for f in fams])
    null = np.concatenate([f.null(0, 199) for f in fams], axis=1)
    np.testing.assert_allclose(westfall_young(fams), _closed_testing(stats, null), rtol=0, atol=1e-15)


def test_maxt_controls_the_familywise_error_under_a_partial_null():
    # Three equal systems and two better ones: a false mark is one between the equal three.
    reps, errors = 200, 0
    rng = np.random.default_rng(23)
    for rep in range(reps):
        scores = _binary_systems([0.7, 0.7, 0.7, 0.76, 0.8], 300, rng)
        res = pairperm.compare_systems(scores, correction="maxT", confidence_level=None, progress=False,
                                       n_resamples=199, rng=rep)
        errors += any(r.significant for r in res.rows if {r.system_a, r.system_b} <= {"s0", "s1", "s2"})
    assert errors / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


def _agree(rows):
    """Every marked pair's interval lies on one side of 0 (an end at 0 is open), every other
    pair's holds 0 inside; the difference lies in its interval."""
    for r in rows:
        one_side = r.ci_low >= 0 or r.ci_high <= 0
        assert one_side == r.significant, r
        if not r.significant:
            assert r.ci_low < 0 < r.ci_high
        assert r.ci_low <= r.difference <= r.ci_high


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_intervals_agree_with_the_marks(alternative):
    rng = np.random.default_rng(24)
    accuracies = [0.75, 0.71, 0.7, 0.65, 0.62, 0.6]
    scores = _binary_systems(accuracies if alternative != "less" else accuracies[::-1], 500, rng)
    res = pairperm.compare_systems(scores, correction="maxT", alternative=alternative, confidence_level=0.95,
                                   progress=False, rng=2)
    marked = [r.significant for r in res.rows]
    assert any(marked) and not all(marked)
    _agree(res.rows)
    if alternative == "greater":
        assert all(r.ci_high == math.inf for r in res.rows)
    if alternative == "less":
        assert all(r.ci_low == -math.inf for r in res.rows)


def test_two_sided_marks_are_the_rank_intervals_surely_better_pairs():
    # The same step-down over both directions of every pair, with the same draws.
    rng = np.random.default_rng(29)
    scores = _binary_systems([0.75, 0.71, 0.7, 0.65, 0.62], 500, rng)
    units = np.stack(list(scores.values()), axis=1).astype(float)
    pairs = np.array(list(itertools.combinations(range(5), 2)), dtype=np.int64)
    family = pair_draws(units, None, False, pairs, "two-sided", 999, np.random.default_rng(3))
    hypotheses = westfall_young([family])
    surely = {(int(a), int(b)) for a, b, p in zip(family.rows, family.cols, hypotheses) if p <= 0.05}
    cov = np.cov(units, rowvar=False) * (len(units) - 1)
    ranks = _intervals([f"s{k}" for k in range(5)], (0.0,) * 5, units.sum(axis=0), cov, family.draws, 0.95, True,
                       "multiplier", False)
    assert {(int(a[1:]), int(b[1:])) for a, b in ranks.better} == surely


def test_intervals_are_in_the_metrics_units_with_groups_and_sums():
    rng = np.random.default_rng(25)
    scores = _binary_systems([0.6, 0.7, 0.8], 240, rng)
    groups = np.arange(240) // 4
    summed = {k: v.reshape(-1, 4).sum(axis=1) for k, v in scores.items()}
    a = pairperm.compare_systems(scores, "accuracy", groups=groups, correction="maxT", progress=False, rng=3)
    b = pairperm.compare_systems(summed, "sum", correction="maxT", progress=False, rng=3)
    for ra, rb in zip(a.rows, b.rows):
        assert ra.pvalue_adjusted >= 0 and rb.pvalue_adjusted >= 0
        assert ra.ci_low == pytest.approx(rb.ci_low / 240, rel=1e-12)
        assert ra.ci_high == pytest.approx(rb.ci_high / 240, rel=1e-12)


def test_maxt_reads_back_from_json_and_names_itself_in_reports():
    rng = np.random.default_rng(26)
    res = pairperm.compare_systems(_binary_systems([0.6, 0.7, 0.8], 200, rng), correction="maxT", progress=False,
                                   rng=4)
    assert pairperm.SystemsComparison.from_json(res.to_json()) == res
    assert "maxT" in res.to_markdown()


def test_maxt_needs_a_metric_by_name_and_says_so_before_running():
    rng = np.random.default_rng(3)
    scores = {f"s{k}": rng.random((60, 2)) for k in range(3)}
    ratio = lambda s: s[..., 0] / (s[..., 0] + s[..., 1])  # noqa: E731
    with pytest.raises(ValueError, match="correction='maxT' needs a metric by name"):
        pairperm.compare_systems(scores, ratio, correction="maxT", progress=False)
    with pytest.raises(ValueError, match="task 'r' has a callable"):
        pairperm.compare_systems({"r": scores, "m": {k: v[:, 0] for k, v in scores.items()}}, {"r": ratio, "m": "mean"},
                                 correction="maxT", progress=False)
    with pytest.raises(ValueError, match="'maxT'"):
        pairperm.compare_systems({"a": [1, 0], "b": [0, 1]}, correction="maxt")


def test_f1_rows_carry_the_compatible_intervals_not_the_bootstraps():
    from test_ranks import _ner_systems

    rng = np.random.default_rng(27)
    systems = _ner_systems([0.7, 0.74, 0.78, 0.8], 400, rng)
    res = pairperm.compare_systems(systems, "f1", correction="maxT", progress=False, rng=5)
    holm = pairperm.compare_systems(systems, "f1", progress=False, rng=5)
    assert all((a.ci_low, a.ci_high) != (b.ci_low, b.ci_high) for a, b in zip(res.rows, holm.rows))
    _agree(res.rows)


def test_an_interrupted_run_keeps_its_partial_result():
    rng = np.random.default_rng(28)
    tasks = {t: _binary_systems([0.6, 0.7, 0.8], 200, rng) for t in ("a", "b")}
    seen = []

    def stop_in_the_second_task(done, total):
        seen.append(done)
        if done > 3:
            raise KeyboardInterrupt

    # The first task's three pairs finish and the second's do not: its family is empty.
    with pytest.raises(KeyboardInterrupt) as info:
        pairperm.compare_systems(tasks, correction="maxT", progress=stop_in_the_second_task, n_jobs=1, rng=1)
    partial = info.value.partial_result
    assert not partial.complete and {r.task for r in partial.rows} == {"a"}
    assert all(r.pvalue_adjusted >= 0 for r in partial.rows)


def test_compatible_intervals_cover_every_true_difference_at_once():
    # A marked pair's end at 0 is open: a true difference of 0 there is a miss.
    accuracies = [0.7, 0.7, 0.7, 0.76, 0.8]
    reps, misses = 600, 0
    rng = np.random.default_rng(30)
    for rep in range(reps):
        res = pairperm.compare_systems(_binary_systems(accuracies, 300, rng), correction="maxT", progress=False,
                                       n_resamples=199, rng=rep)
        for r in res.rows:
            truth = accuracies[int(r.system_a[1:])] - accuracies[int(r.system_b[1:])]
            inside = r.ci_low <= truth <= r.ci_high and not (r.significant and truth == 0)
            if not inside:
                misses += 1
                break
    assert misses / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
