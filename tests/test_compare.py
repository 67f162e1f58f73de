"""compare() picks the test its table says, and returns that test's answer."""

import numpy as np
import pytest

import pairperm
from pairperm import datasets


def test_integer_scores_go_to_exact_permutation_test():
    x, y = datasets.stanza_pos_like(500)
    r = pairperm.compare(x, y, "accuracy")
    assert r.test == "permutation_test" and "exact" in r.reason
    assert r.pvalue == pairperm.permutation_test(x, y).pvalue
    assert pairperm.compare(x * 1.0, y * 1.0, "mean").test == "permutation_test"


def test_binary_goes_to_mcnemar():
    rng = np.random.default_rng(0)
    a, b = rng.random(300) < 0.8, rng.random(300) < 0.7
    r = pairperm.compare(a, b, "exact_match", alternative="greater")
    assert r.test == "mcnemar_test"
    assert r.pvalue == pairperm.mcnemar_test(a, b, alternative="greater").pvalue


def test_real_valued_routes():
    rng = np.random.default_rng(1)
    a, b = rng.random(200), rng.random(200)
    r = pairperm.compare(1 + a, 1 + b, "perplexity")  # perplexities are at least 1
    assert r.test == "wilcoxon_test" and r.pvalue == pairperm.wilcoxon_test(a, b).pvalue
    for metric in ("mean", "comet", "ndcg", "chrf"):
        r = pairperm.compare(a, b, metric, n_resamples=500, rng=3)
        assert r.test == "permutation_test" and "importance sampling" in r.reason
        assert r.pvalue == pairperm.permutation_test(a, b, n_resamples=500, rng=3).pvalue
    # Few entries: exact by meet in the middle.
    r = pairperm.compare(a[:30], b[:30], "ndcg")
    assert r.result.engine == "meet_in_the_middle" and "exact" in r.reason
    r = pairperm.compare(a, b, lambda s: s * 2.0, n_resamples=200, rng=1)
    assert r.test == "monte_carlo_test" and r.statistic == pytest.approx(2 * (a.sum() - b.sum()))


def test_macro_f1_and_bleu_use_monte_carlo_permutation():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 4, (150, 3, 3))
    b = rng.integers(0, 4, (150, 3, 3))
    r = pairperm.compare(a, b, "macro_f1", n_resamples=2000, rng=4)
    assert r.test == "monte_carlo_test"
    assert r.statistic == pytest.approx(
        pairperm.bootstrap_test(a, b, "macro_f1", n_resamples=1).statistic)
    assert r.result.pvalue_ci[0] <= r.pvalue <= r.result.pvalue_ci[1]
    total = rng.integers(5, 20, (150, 4))
    bl_a = np.c_[total[:, 0], total[:, 0], total // 2, total]
    bl_b = np.c_[total[:, 0], total[:, 0], total // 3, total]
    r = pairperm.compare(bl_a, bl_b, "bleu", n_resamples=2000, rng=4, alternative="greater")
    assert r.test == "monte_carlo_test" and r.statistic > 0 and r.pvalue < 0.01
    # Swapping the systems mirrors the statistic exactly.
    r2 = pairperm.compare(bl_b, bl_a, "bleu", n_resamples=2000, rng=4, alternative="less")
    assert r2.statistic == pytest.approx(-r.statistic) and r2.pvalue == r.pvalue


def test_unknown_metric_and_shapes():
    with pytest.raises(ValueError, match="metric"):
        pairperm.compare([1], [2], "rouge-l")
    with pytest.raises(ValueError, match=r"\(N, 10\)"):
        pairperm.compare(np.ones((3, 9), int), np.ones((3, 9), int), "bleu")
    assert "CompareResult(" in repr(pairperm.compare([1, 2], [2, 1]))


def test_compare_perplexity_greater_means_a_is_better():
    rng = np.random.default_rng(0)
    b = np.exp(rng.normal(3, 1, 200))
    worse = b * np.exp(rng.normal(0.3, 0.2, 200))  # A clearly worse (higher perplexity)
    better = b * np.exp(rng.normal(-0.3, 0.2, 200))
    assert pairperm.compare(worse, b, metric="perplexity", alternative="greater").pvalue > 0.5
    assert pairperm.compare(better, b, metric="perplexity", alternative="greater").pvalue < 1e-10
    assert pairperm.compare(worse, b, metric="perplexity", alternative="less").pvalue < 1e-10


@pytest.mark.parametrize("metric", ["f1", "precision", "recall"])
def test_ratio_metrics_route_to_exact_tests(metric):
    a, b = datasets.ner_like(300, seed=1)
    r = pairperm.compare(a, b, metric)
    test = getattr(pairperm, f"{metric}_test")
    assert r.test == f"{metric}_test"
    assert r.pvalue == test(a, b).pvalue


def test_callable_metric_runs_the_paired_permutation_test():
    """Equal differences on every entry: the permutation test's p is 2/2^3 (two-sided), which the
    sampled p-value's interval covers; the paired bootstrap would claim its floor 1/(1 + K)."""
    r = pairperm.compare([3, 3, 3], [2, 2, 2], lambda s: s, n_resamples=20_000, rng=0)
    assert r.test == "monte_carlo_test" and r.statistic == 3
    lo, hi = r.result.pvalue_ci
    assert lo <= 0.25 <= hi


def test_callable_metric_sees_summed_statistics_of_each_system():
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 5, (40, 2)), rng.integers(0, 5, (40, 2))

    def ratio(s):
        return s[:, 0] / (s[:, 0] + s[:, 1])

    sa, sb = a.sum(axis=0), b.sum(axis=0)
    for method in ("monte_carlo", "importance_sampling"):
        r = pairperm.compare(a, b, ratio, n_resamples=2000, rng=2, alternative="greater", method=method)
        assert r.statistic == pytest.approx(sa[0] / sa.sum() - sb[0] / sb.sum())
        ref = pairperm.monte_carlo_test(np.c_[a, b], np.c_[b, a], lambda s: ratio(s[:, :2]) - ratio(s[:, 2:]),
                                        n_resamples=2000, rng=2, alternative="greater", method=method)
        assert r.pvalue == ref.pvalue


@pytest.mark.parametrize("scores, engine, words", [
    ("small", "dp", "exact"),
    ("large", "grouped", "exact"),
    ("wide", "saddlepoint_is", "importance sampling"),
    ("mc", "monte_carlo", "Monte Carlo"),
])
def test_reason_says_which_engine_ran(scores, engine, words):
    rng = np.random.default_rng(3)
    n = {"small": 12, "large": 5000, "wide": 2000, "mc": 300}[scores]
    x, y = rng.integers(0, 20, n), rng.integers(0, 20, n)
    if scores == "wide":  # differences spread beyond the grouped engine's window
        x, y = x * 100_003 + rng.integers(0, 7919, n), y * 100_003
    method = "monte_carlo" if scores == "mc" else "auto"
    r = pairperm.compare(x, y, "sum", method=method, rng=0)
    assert r.result.engine == engine
    assert words in r.reason
    if engine in ("saddlepoint_is", "monte_carlo"):
        assert "exact" not in r.reason


def test_binary_scores_are_told_apart_as_numpy_isin_does():
    from pairperm._validation import is_binary

    cases = [np.array([], dtype=np.int64), np.array([True, False]), np.array([0, 1, 1], dtype=np.uint8),
             np.array([0, 1, 2]), np.array([-1, 0, 1]), np.array([0.0, 1.0, -0.0]), np.array([0.0, 0.5]),
             np.array([0.0, np.nan]), np.array([1.0, np.inf]), np.array([1 + 0j, 0j]), np.array([1j, 0j]),
             np.array([0, 1], dtype=object), np.array([0, 2], dtype=object)]
    for a in cases:
        assert is_binary(a) == bool(np.isin(a, (0, 1)).all()), a
    assert not is_binary(np.array(["0", "1"]))  # text is not an outcome
    rng = np.random.default_rng(4)
    x, y = (rng.random(300) < 0.6).astype(float), (rng.random(300) < 0.5).astype(float)
    assert pairperm.compare(x, y).test == "mcnemar_test"
    assert pairperm.compare(x + 0.5, y).test == "permutation_test"


def _bleu_statistics(rng, n):
    """Per-sentence BLEU statistics as sacrebleu counts them: total_k = hyp_len - k + 1 n-grams
    of order k, of which correct_k match."""
    hyp = rng.integers(5, 20, n)
    ref = hyp + rng.integers(-2, 3, n)
    total = np.stack([np.maximum(hyp - k, 0) for k in range(4)], axis=1)
    correct = (total * rng.random((n, 4))).astype(np.int64)
    return np.column_stack([hyp, ref, correct, total])


def _chrf_statistics(rng, n, orders=6):
    hyp = rng.integers(10, 40, (n, orders))
    ref = rng.integers(10, 40, (n, orders))
    match = (np.minimum(hyp, ref) * rng.random((n, orders))).astype(np.int64)
    return np.stack([hyp, ref, match], axis=2).reshape(n, 3 * orders)


CORPUS_CALLS = {
    "compare": lambda m, a, b: pairperm.compare(a, b, m, n_resamples=200, rng=0),
    "compare_systems": lambda m, a, b: pairperm.compare_systems({"A": a, "B": b}, m, n_resamples=200, rng=0,
                                                                progress=False),
    "bootstrap_test": lambda m, a, b: pairperm.bootstrap_test(a, b, m, n_resamples=200, rng=0),
}


@pytest.mark.parametrize("call", sorted(CORPUS_CALLS))
def test_bleu_and_chrf_statistics_with_more_matches_than_ngrams_are_refused(call):
    rng = np.random.default_rng(4)
    run = CORPUS_CALLS[call]
    a, b = _bleu_statistics(rng, 30), _bleu_statistics(rng, 30)
    run("bleu", a, b)  # consistent statistics are taken
    bad = a.copy()
    bad[3, 3] = bad[3, 7] + 5  # correct_2 > total_2
    with pytest.raises(ValueError, match=r"more matching 2-grams than 2-grams in entry 3: correct_2 = \d+ > total_2"):
        run("bleu", bad, b)
    bad = b.copy()
    bad[7, 0] = -1
    with pytest.raises(ValueError, match=r"non-negative; got -1 \(entry 7, column 'hyp_len'\)"):
        run("bleu", a, bad)

    a, b = _chrf_statistics(rng, 30), _chrf_statistics(rng, 30)
    run("corpus_chrf", a, b)
    bad = a.copy()
    bad[5, 3 * 2 + 2] = bad[5, 3 * 2 + 1] + 1  # match_3 > ref_3
    with pytest.raises(ValueError, match=r"order 3 than the hypothesis or the reference has in entry 5: match_3"):
        run("corpus_chrf", bad, b)
    bad = a.copy()
    bad[2, 4] = -3
    with pytest.raises(ValueError, match=r"got -3 \(entry 2, column 'ref_2'\)"):
        run("corpus_chrf", bad, b)


def test_reason_says_real_valued_scores_ran_for_an_integer_metric():
    partial = pairperm.compare([1, 0.5, 1, 0.5, 0, 1], [0, 0.5, 0, 0, 0, 0.5], "accuracy")
    assert partial.test == "permutation_test" and partial.result.engine == "meet_in_the_middle"
    assert partial.reason.startswith("real-valued per-entry scores (accuracy): paired-permutation test of the mean")
    assert "integer" not in partial.reason
    summed = pairperm.compare([2.5, 1, 3], [1, 1, 0.5], "sum")
    assert "real-valued" in summed.reason and "sum difference" in summed.reason
    counts = pairperm.compare([1, 2, 1, 3, 0, 1], [0, 0, 0, 0, 0, 0], "accuracy")
    assert counts.reason.startswith("sum of per-entry integer scores")


@pytest.mark.parametrize("bad", [-1.0, 0.0, 0.5])
def test_perplexities_below_one_are_refused(bad):
    x, y = [31.2, 28.4, bad, 25.0], [30.1, 29.0, 36.2, 24.1]
    with pytest.raises(ValueError, match=rf"perplexities, which are at least 1; x has {bad!r} at entry 2"):
        pairperm.compare(x, y, "perplexity")
    with pytest.raises(ValueError, match=rf"at least 1; y has {bad!r} at entry 2"):
        pairperm.compare(y, x, "perplexity")
    with pytest.raises(ValueError, match=rf"at least 1; system 'a' has {bad!r} at entry 2"):
        pairperm.compare_systems({"a": x, "b": y}, "perplexity", progress=False)
    assert pairperm.compare([1.0, 2.0, 3.5], [1.5, 2.5, 3.0], "perplexity").test == "wilcoxon_test"
