"""compare() routes F1 / precision / recall to the exact ratio tests."""

import pytest

import pairperm
from pairperm import datasets


@pytest.mark.parametrize("metric", ["f1", "precision", "recall"])
def test_ratio_metrics_route_to_exact_tests(metric):
    a, b = datasets.ner_like(300, seed=1)
    r = pairperm.compare(a, b, metric)
    test = getattr(pairperm, f"{metric}_test")
    assert r.test == f"{metric}_test"
    assert r.pvalue == test(a, b).pvalue
