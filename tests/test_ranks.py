"""Rank intervals: against an independent step-down written from the definition (its critical
values from a large sample of normal draws, checked against the studentised range), familywise
error by simulation under complete and partial nulls for both null draws, and their inputs."""

import functools
import math
import pickle

import numpy as np
import pytest
import scipy.stats

import pairperm
from marks import quick_first
from pairperm._ranking import compact_letters


def _reference_rejections(theta, cov, alpha, n_draws=400_000, seed=2024):
    """Step-down max-t over all ordered pairs, by the definition: the critical value of the open
    pairs is the (1 - alpha) quantile of max (z_i - z_j) / sd_ij over z ~ N(0, cov). Returns the
    rejected pairs, every step's critical value, and the least distance of a t from the critical
    value it was compared with."""
    k = len(theta)
    z = np.random.default_rng(seed).multivariate_normal(np.zeros(k), cov, size=n_draws, method="cholesky")
    sd = {(i, j): math.sqrt(cov[i][i] + cov[j][j] - 2 * cov[i][j]) for i in range(k) for j in range(k) if i != j}
    open_pairs, rejected, criticals, margin = set(sd), set(), [], math.inf
    while open_pairs:
        biggest = np.max([(z[:, i] - z[:, j]) / sd[i, j] for i, j in sorted(open_pairs)], axis=0)
        c = float(np.quantile(biggest, 1 - alpha))
        criticals.append(c)
        t = {(i, j): (theta[i] - theta[j]) / sd[i, j] for i, j in open_pairs}
        margin = min(margin, *(abs(v - c) for v in t.values()))
        new = {p for p, v in t.items() if v > c}
        if not new:
            break
        rejected |= new
        open_pairs -= new
    return rejected, criticals, margin


def test_the_reference_critical_value_is_the_studentised_range_quantile():
    # Independent unit variances: max over ordered pairs of (z_i - z_j) / sqrt(2) is the range / sqrt(2).
    k = 5
    _, criticals, _ = _reference_rejections(np.zeros(k), np.eye(k), 0.05)
    want = scipy.stats.studentized_range.ppf(0.95, k, 1e6) / math.sqrt(2)
    assert criticals[0] == pytest.approx(want, abs=0.01)


@pytest.mark.parametrize("case", ["independent", "correlated"])
def test_gaussian_rank_intervals_agree_with_the_reference_step_down(case):
    # Estimates chosen so that the step-down takes two steps and no t lies near a critical value.
    if case == "independent":
        theta = np.array([2.5, 2.9, 6.0, 7.3, 7.8, 8.6])
        cov = np.diag([1.0, 0.5, 1.5, 1.0, 0.8, 1.2])
    else:
        theta = np.array([0.0, 0.5, 0.7, 1.4, 2.1, 9.8])
        a = np.random.default_rng(5).normal(size=(6, 6))
        cov = a @ a.T / 6 + 0.3 * np.eye(6)
    k = len(theta)
    rejected, criticals, margin = _reference_rejections(theta, cov, 0.05)
    assert len(criticals) == 2 and len(rejected) >= 5
    assert margin > 0.3  # no t is within the Monte Carlo error of a critical value
    r = pairperm.rank_intervals_from_estimates(theta, cov, n_resamples=40_000, rng=3)
    names = r.names
    assert set(r.better) == {(names[i], names[j]) for i, j in rejected}
    assert r.rank_low == tuple(1 + sum((j, i) in rejected for j in range(k)) for i in range(k))
    assert r.rank_high == tuple(k - sum((i, j) in rejected for j in range(k)) for i in range(k))
    assert r.rank == tuple(1 + int(np.sum(theta > v)) for v in theta)


def test_variances_mean_independent_estimates_and_lower_is_better_reverses_the_ranks():
    theta = np.array([1.0, 5.0, 9.0])
    a = pairperm.rank_intervals_from_estimates(theta, [0.1, 0.1, 0.1], rng=1)
    b = pairperm.rank_intervals_from_estimates(theta, np.diag([0.1, 0.1, 0.1]), rng=1)
    assert a == b and a.rank_low == a.rank_high == (3, 2, 1)
    low = pairperm.rank_intervals_from_estimates(theta, [0.1, 0.1, 0.1], rng=1, lower_is_better=True)
    assert low.rank_low == low.rank_high == (1, 2, 3) and low.leader_ties == ("system_0",)


_NORMAL_NODES, _NORMAL_WEIGHTS = np.polynomial.hermite_e.hermegauss(60)


@functools.cache
def _ability(accuracy):
    """The logistic shift a whose mean accuracy over standard normal item difficulties d,
    E[1 / (1 + exp(d - a))], is `accuracy` (Gauss-Hermite quadrature, bisection)."""
    lo, hi = -20.0, 20.0
    for _ in range(60):
        mid = (lo + hi) / 2
        mean = np.dot(_NORMAL_WEIGHTS, 1 / (1 + np.exp(_NORMAL_NODES - mid))) / math.sqrt(2 * math.pi)
        lo, hi = (mid, hi) if mean < accuracy else (lo, mid)
    return lo


def _binary_systems(accuracies, n, rng):
    """0/1 scores of systems on shared items: a standard normal difficulty per item makes the
    systems' scores dependent; each system's accuracy over items is the given one."""
    difficulty = rng.normal(0, 1, n)
    return {f"s{k}": (rng.random(n) < 1 / (1 + np.exp(difficulty - _ability(acc)))).astype(np.int64)
            for k, acc in enumerate(accuracies)}


def _familywise_error(accuracies, n, reps, method, level=0.95, n_resamples=199, simultaneous=True, seed=0):
    """Share of runs in which some system is declared surely better than one it is not better than."""
    rng = np.random.default_rng(seed)
    truth = dict(zip((f"s{k}" for k in range(len(accuracies))), accuracies))
    errors = 0
    for rep in range(reps):
        r = pairperm.rank_intervals(_binary_systems(accuracies, n, rng), level=level, method=method,
                                    n_resamples=n_resamples, rng=rep, simultaneous=simultaneous)
        errors += any(truth[a] <= truth[b] for a, b in r.better)
    return errors / reps


@pytest.mark.parametrize("method,accuracies", quick_first([
    ("permutation", [0.7] * 5),
    ("multiplier", [0.7] * 5),
    ("permutation", [0.7, 0.7, 0.7, 0.75, 0.8, 0.6]),
    ("multiplier", [0.7, 0.7, 0.7, 0.75, 0.8, 0.6]),
    ("multiplier", [0.7] * 10 + [0.72] * 10),
    ("permutation", [0.7] * 10 + [0.72] * 10),
    ("multiplier", [0.65] * 25 + [0.68] * 25),
    ("permutation", [0.65] * 25 + [0.68] * 25),
], quick=4))
def test_familywise_error_is_at_most_alpha_under_complete_and_partial_nulls(method, accuracies):
    reps = 300
    fwer = _familywise_error(accuracies, 300, reps, method)
    assert fwer <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


def test_the_joint_permutation_is_exact_under_the_complete_null():
    # With the identity counted, the first step's max-t test has level alpha whatever the draws:
    # its rejection rate sits near alpha, not far below it.
    reps = 400
    fwer = _familywise_error([0.6] * 4, 40, reps, "permutation", level=0.8, n_resamples=19)
    assert abs(fwer - 0.2) <= 3 * math.sqrt(0.2 * 0.8 / reps)


def test_marginal_intervals_cover_each_rank_and_are_no_wider_than_simultaneous():
    rng = np.random.default_rng(11)
    accuracies = [0.6, 0.62, 0.64, 0.7, 0.72]
    misses = np.zeros(len(accuracies))
    reps = 150
    for rep in range(reps):
        scores = _binary_systems(accuracies, 400, rng)
        m = pairperm.rank_intervals(scores, simultaneous=False, n_resamples=199, rng=rep)
        s = pairperm.rank_intervals(scores, simultaneous=True, n_resamples=199, rng=rep)
        assert all(ml >= sl and mh <= sh for ml, mh, sl, sh in zip(m.rank_low, m.rank_high, s.rank_low, s.rank_high))
        true_rank = [1 + sum(b > a for b in accuracies) for a in accuracies]
        misses += [not (lo <= t <= hi) for lo, hi, t in zip(m.rank_low, m.rank_high, true_rank)]
    assert np.all(misses / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps))


@pytest.mark.parametrize("method", ["permutation", "multiplier"])
def test_a_system_far_ahead_is_first_for_sure(method):
    rng = np.random.default_rng(4)
    scores = _binary_systems([0.95, 0.6, 0.61, 0.59], 300, rng)
    r = pairperm.rank_intervals(scores, method=method, rng=1)
    assert (r.rank_low[0], r.rank_high[0]) == (1, 1)
    assert r.leader_ties == ("s0",) and r.tau_best(1) == ("s0",)
    assert all(lo >= 2 for lo in r.rank_low[1:])
    assert set(r.tied_with("s1")) == {"s2", "s3"}


def test_the_multiplier_draws_normals_with_the_units_covariance():
    # The multiplier bootstrap is the normal draw with the covariance of the per-unit scores:
    # the same seed gives the same intervals as the estimates route given that covariance.
    rng = np.random.default_rng(8)
    scores = _binary_systems([0.6, 0.62, 0.7, 0.71, 0.8], 500, rng)
    units = np.stack(list(scores.values()), axis=1).astype(float)
    cov = np.cov(units, rowvar=False) * (len(units) - 1)
    a = pairperm.rank_intervals(scores, method="multiplier", rng=6)
    b = pairperm.rank_intervals_from_estimates(units.sum(axis=0), cov, names=list(scores), rng=6)
    assert (a.rank_low, a.rank_high, a.better) == (b.rank_low, b.rank_high, b.better)
    assert a.estimates == tuple(float(v.mean()) for v in scores.values()) and a.method == "multiplier"


@pytest.mark.parametrize("method", ["permutation", "multiplier"])
def test_groups_rank_the_units_sums(method):
    rng = np.random.default_rng(9)
    scores = _binary_systems([0.6, 0.65, 0.7, 0.8], 240, rng)
    groups = np.arange(240) // 4
    grouped = pairperm.rank_intervals(scores, groups=groups, method=method, rng=2)
    summed = {k: v.reshape(-1, 4).sum(axis=1) for k, v in scores.items()}
    plain = pairperm.rank_intervals(summed, "sum", method=method, rng=2)
    assert (grouped.rank_low, grouped.rank_high, grouped.better) == (plain.rank_low, plain.rank_high, plain.better)


def test_auto_permutes_few_units_and_draws_multipliers_for_many():
    rng = np.random.default_rng(1)
    assert pairperm.rank_intervals(_binary_systems([0.6, 0.7], 99, rng)).method == "permutation"
    assert pairperm.rank_intervals(_binary_systems([0.6, 0.7], 100, rng)).method == "multiplier"


def test_results_pickle_and_read_as_records_and_frames():
    rng = np.random.default_rng(2)
    r = pairperm.rank_intervals(_binary_systems([0.6, 0.7, 0.9], 300, rng), rng=0)
    assert pickle.loads(pickle.dumps(r)) == r
    records = r.to_records()
    assert [x["system"] for x in records] == ["s2", "s1", "s0"]
    assert records[0] == {"system": "s2", "estimate": r.estimates[2], "rank": 1, "rank_low": r.rank_low[2],
                          "rank_high": r.rank_high[2], "could_lead": True, "letters": r.letters[2]}
    pd = pytest.importorskip("pandas")
    frame = r.to_frame()
    assert isinstance(frame, pd.DataFrame) and list(frame.index) == ["s2", "s1", "s0"]
    assert "could lead" in repr(r)


@pytest.mark.parametrize("kwargs,message", [
    ({"metric": "nonsense"}, "metric must be one of"),
    ({"metric": np.mean}, "metric must be one of"),
    ({"level": 1.5}, "level"),
    ({"method": "bootstrap"}, "method"),
    ({"n_resamples": 0}, "n_resamples"),
    ({"simultaneous": "yes"}, "simultaneous"),
])
def test_bad_arguments_are_refused(kwargs, message):
    scores = {"a": [1, 0, 1, 1], "b": [0, 0, 1, 1]}
    with pytest.raises(ValueError, match=message):
        pairperm.rank_intervals(scores, **kwargs)


def test_bad_estimates_are_refused():
    with pytest.raises(ValueError, match="positive semi-definite"):
        pairperm.rank_intervals_from_estimates([1.0, 2.0], [[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match="symmetric"):
        pairperm.rank_intervals_from_estimates([1.0, 2.0], [[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="names"):
        pairperm.rank_intervals_from_estimates([1.0, 2.0], [1.0, 1.0], names=["a", "a"])
    with pytest.raises(ValueError, match="at least 2"):
        pairperm.rank_intervals_from_estimates([1.0], [1.0])
    r = pairperm.rank_intervals_from_estimates([1.0, 2.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="tau"):
        r.tau_best(3)
    with pytest.raises(ValueError, match="no system"):
        r.tied_with("nobody")


def test_errors_name_rank_intervals():
    with pytest.raises(ValueError, match="^rank_intervals: every system must be scored on the same entries"):
        pairperm.rank_intervals({"a": [1, 0, 1], "b": [0, 1]})


@pytest.mark.parametrize("grouped", [False, True])
def test_a_comparison_ranks_its_systems_as_rank_intervals_does(grouped):
    rng = np.random.default_rng(12)
    scores = _binary_systems([0.6, 0.65, 0.7, 0.8], 240, rng)
    groups = np.arange(240) // 3 if grouped else None
    res = pairperm.compare_systems(scores, groups=groups, confidence_level=None, progress=False)
    want = pairperm.rank_intervals(scores, groups=groups, rng=4, simultaneous=False)
    assert res.ranks(rng=4, simultaneous=False) == want
    assert pickle.loads(pickle.dumps(res)).ranks(rng=4, simultaneous=False) == want
    with pytest.raises(ValueError, match="keeps no scores"):
        pairperm.SystemsComparison.from_json(res.to_json()).ranks()


def test_a_comparison_of_a_callable_metric_has_no_ranks():
    rng = np.random.default_rng(3)
    scores = {f"s{k}": rng.random((60, 2)) for k in range(3)}
    res = pairperm.compare_systems(scores, lambda s: s[..., 0] / (s[..., 0] + s[..., 1]), confidence_level=None,
                                   progress=False, n_resamples=99, rng=0)
    with pytest.raises(ValueError, match="keeps no scores"):
        res.ranks()


@pytest.mark.parametrize("seed", range(6))
def test_compact_letters_share_a_letter_exactly_when_no_pair_differs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    differ = [p for p in pairs if rng.random() < [0.2, 0.5, 0.8][seed % 3]]
    letters = compact_letters(n, differ, list(range(n)))
    for i, j in pairs:
        assert bool(set(letters[i]) & set(letters[j])) == ((i, j) not in differ)
    assert letters[0].startswith("a")  # the first item's letters come first


def test_reports_list_the_systems_best_first_and_read_back_from_json():
    r = pairperm.rank_intervals_from_estimates([1.0, 3.0, 2.9, 0.4], [0.01] * 4, names=["w", "x", "y", "z"], rng=0)
    assert r.letters == ("b", "a", "a", "c")
    md = r.to_markdown().splitlines()
    assert md[2] == "| 1 | x | 3 | [1, 2] | yes | a |" and md[4] == "| 3 | w | 1 | [3, 3] |  | b |"
    assert "probability 0.95, all at once" in md[-1]
    tex = r.to_latex()
    assert r"2 & y & 2.9 & [1, 2] & \checkmark & a \\" in tex and tex.count(r"\\") == 5
    assert pairperm.RankIntervals.from_json(r.to_json()) == r
    assert r.to_dict()["names"] == ["w", "x", "y", "z"]


def test_the_plot_draws_a_bar_per_system_and_names_the_leaders():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = pairperm.rank_intervals_from_estimates([1.0, 3.0, 2.9, 0.4], [0.01] * 4, names=["w", "x", "y", "z"], rng=0)
    ax = r.plot()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "y", "w", "z"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["could be first (x, y)", "could not"]
    bars = sorted((p.get_y(), p.get_x(), p.get_width()) for p in ax.patches)
    assert [(round(x, 6), round(w, 6)) for _, x, w in bars] == [(0.6, 1.8), (0.6, 1.8), (2.6, 0.8), (3.6, 0.8)]
    fig = plt.figure()
    sub = fig.subfigures(1, 2)[1].subplots()
    assert pairperm.plot_rank_intervals(r, sub) is sub
    plt.close("all")


def _ner_systems(recalls, n, rng, fp_rate=0.3):
    """(tp, fp, fn) counts per sentence of systems against one gold annotation: equal recalls and
    false-positive rates make equal systems."""
    gold = rng.poisson(1.5, n)
    out = {}
    for k, rec in enumerate(recalls):
        tp = rng.binomial(gold, rec)
        out[f"s{k}"] = np.stack([tp, rng.poisson(fp_rate, n), gold - tp], axis=1).astype(np.int64)
    return out


def test_f1_draws_are_linearised_by_the_ratios_influence_function():
    # F1 = A / B with A = 2 TP, B = 2 TP + FP + FN: a sentence enters as (a_n - F1 b_n) / B.
    from pairperm._metrics import METRICS
    from pairperm._ranking import flat_units, joint_draws, value_of_sums

    rng = np.random.default_rng(31)
    systems = _ner_systems([0.8, 0.82, 0.9], 400, rng)
    units = np.stack([v.astype(float) for v in systems.values()], axis=1)
    j = joint_draws(flat_units(units), value_of_sums("f1", units.shape[2:]), False, "multiplier", 10,
                    np.random.default_rng(0))
    a = 2 * units[..., 0]
    b = 2 * units[..., 0] + units[..., 1] + units[..., 2]
    f1 = a.sum(axis=0) / b.sum(axis=0)
    influence = (a - f1 * b) / b.sum(axis=0)
    np.testing.assert_allclose(j.theta, f1, rtol=1e-14)
    np.testing.assert_allclose(j.covariance, influence.T @ influence, rtol=1e-6)
    assert METRICS["f1"].value(units.sum(axis=0)).tolist() == pytest.approx(f1.tolist(), rel=1e-14)


@pytest.mark.parametrize("method", ["multiplier", "permutation"])
def test_f1_rank_intervals_keep_the_familywise_error(method):
    reps, errors = 150, 0
    rng = np.random.default_rng(32)
    recalls = [0.8, 0.8, 0.8, 0.86, 0.9]
    truth = dict(zip((f"s{k}" for k in range(5)), recalls))
    for rep in range(reps):
        r = pairperm.rank_intervals(_ner_systems(recalls, 300, rng), "f1", method=method, n_resamples=199, rng=rep)
        errors += any(truth[a] <= truth[b] for a, b in r.better)
    assert errors / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


def test_ratio_and_corpus_metrics_rank_and_correct_as_the_comparison_does():
    rng = np.random.default_rng(33)
    systems = _ner_systems([0.6, 0.75, 0.95], 500, rng)
    r = pairperm.rank_intervals(systems, "f1", rng=1)
    sums = [v.sum(axis=0) for v in systems.values()]
    assert r.rank_low == r.rank_high == (3, 2, 1)
    assert r.estimates == pytest.approx([2 * tp / (2 * tp + fp + fn) for tp, fp, fn in sums], rel=1e-15)
    res = pairperm.compare_systems(systems, "f1", correction="maxT", progress=False, rng=1)
    assert res.ranks(rng=1) == r
    assert all(row.significant for row in res.rows)
    for row in res.rows:  # marked: on one side of 0 (an end at 0 is open)
        assert row.ci_low <= row.difference <= row.ci_high and (row.ci_low >= 0 or row.ci_high <= 0)
    # BLEU: statistics of (N, 10) per sentence, the metric recomputed on each permutation.
    hyp = rng.integers(10, 40, 60)
    total = np.stack([np.maximum(hyp - k, 0) for k in range(4)], axis=1)
    bleu = {f"b{q}": np.column_stack([hyp, hyp, *rng.binomial(total, q * np.array([0.6, 0.45, 0.33, 0.24])).T,
                                      *total.T]) for q in (0.7, 1.0, 1.3)}
    rb = pairperm.rank_intervals(bleu, "bleu", method="permutation", n_resamples=199, rng=2)
    assert rb.method == "permutation" and rb.rank == (3, 2, 1) and rb.rank_low[2] == 1


def test_the_joint_permutation_is_exact_for_heavy_tailed_scores_on_few_units():
    # Exchangeable systems (each unit's scores in random order), Cauchy scores, 12 units: any
    # rejection happens exactly when the observed largest statistic is among the top 4 of 20
    # (19 draws and the identity), probability 0.2 - whatever the scores' spread.
    rng = np.random.default_rng(41)
    reps, rejections = 600, 0
    for rep in range(reps):
        units = rng.standard_cauchy((12, 4))
        scores = {f"s{k}": units[:, k] for k in range(4)}
        r = pairperm.rank_intervals(scores, "mean", method="permutation", level=0.8, n_resamples=19, rng=rep)
        rejections += bool(r.better)
    assert abs(rejections / reps - 0.2) <= 3 * math.sqrt(0.2 * 0.8 / reps)


def _own_family_bounds(theta, cov, i, alpha=0.05, n_draws=200_000, seed=7):
    """System i's marginal rank bounds by the definition: the step-down over i's own pairs only."""
    k = len(theta)
    z = np.random.default_rng(seed).multivariate_normal(np.zeros(k), cov, size=n_draws, method="cholesky")
    sd = {(a, b): math.sqrt(cov[a][a] + cov[b][b] - 2 * cov[a][b]) for a in range(k) for b in range(k) if a != b}
    open_pairs = {p for p in sd if i in p}
    rejected = set()
    while open_pairs:
        c = float(np.quantile(np.max([(z[:, a] - z[:, b]) / sd[a, b] for a, b in sorted(open_pairs)], axis=0),
                              1 - alpha))
        new = {p for p in open_pairs if (theta[p[0]] - theta[p[1]]) / sd[p] > c}
        if not new:
            break
        rejected |= new
        open_pairs -= new
    return 1 + sum((j, i) in rejected for j in range(k)), k - sum((i, j) in rejected for j in range(k))


def test_marginal_bounds_come_from_each_systems_own_pairs():
    # B's family rejects (A, B) while A's does not: A's interval must not borrow that rejection.
    theta = np.array([0.0, -3.5, 1.0, 1.0, 1.0, 1.0, 1.0])
    cov = np.eye(7)
    r = pairperm.rank_intervals_from_estimates(theta, cov, simultaneous=False, n_resamples=40_000, rng=1)
    for i in range(7):
        assert (r.rank_low[i], r.rank_high[i]) == _own_family_bounds(theta, cov, i)
    assert (r.rank_low[0], r.rank_high[0]) == (1, 7)


def test_a_constant_difference_is_surely_ordered_and_units_do_not_matter():
    rng = np.random.default_rng(42)
    b = rng.integers(0, 5, 300)
    r = pairperm.rank_intervals({"a": b + 1, "b": b, "c": rng.integers(0, 5, 300)}, "sum", rng=0)
    assert ("a", "b") in r.better
    res = pairperm.compare_systems({"a": b + 1, "b": b}, "sum", correction="maxT", progress=False, rng=0)
    assert res.rows[0].significant and (res.rows[0].ci_low, res.rows[0].ci_high) == (0, 300)
    # The same separated systems in units of 1e-14: a relative threshold, not an absolute one.
    theta = np.array([0.0, 1e-10, 2e-10])
    tiny = pairperm.rank_intervals_from_estimates(theta, [1e-26] * 3, rng=0)
    plain = pairperm.rank_intervals_from_estimates(theta * 1e14, [1e2] * 3, rng=0)
    assert tiny.rank_low == plain.rank_low == (3, 2, 1) and tiny.rank_high == plain.rank_high


def test_too_few_draws_to_reject_are_refused():
    scores = {"a": [1, 0, 1, 1, 0, 1], "b": [0, 0, 1, 0, 0, 1]}
    with pytest.raises(ValueError, match="10 draws can reject nothing at level 0.95; n_resamples must be at least 19"):
        pairperm.rank_intervals(scores, n_resamples=10)
    with pytest.raises(ValueError, match="can reject nothing at alpha 0.05"):
        pairperm.compare_systems(scores, correction="maxT", n_resamples=10, progress=False)
