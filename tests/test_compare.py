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
    r = pairperm.compare(a, b, "perplexity")
    assert r.test == "wilcoxon_test" and r.pvalue == pairperm.wilcoxon_test(a, b).pvalue
    for metric in ("mean", "comet", "ndcg", "chrf"):
        r = pairperm.compare(a, b, metric, n_resamples=500, rng=3)
        assert r.test == "permutation_test" and "importance sampling" in r.reason
        assert r.pvalue == pairperm.permutation_test(a, b, n_resamples=500, rng=3).pvalue
    # Few entries: exact by meet in the middle.
    r = pairperm.compare(a[:30], b[:30], "ndcg")
    assert r.result.engine == "meet_in_the_middle" and "exact" in r.reason
    r = pairperm.compare(a, b, lambda s: s * 2.0, n_resamples=200, rng=1)
    assert r.test == "bootstrap_test" and r.statistic == pytest.approx(2 * (a.sum() - b.sum()))


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
