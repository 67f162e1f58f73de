"""Timings of the resampling and classical tests at N = 10^4, K = 10^4 (pulled into bench/compare.py).

`cases()` returns (label, zero-argument callable) pairs; running this file prints medians.
"""

from __future__ import annotations

import numpy as np

import pairperm
from pairperm import datasets
from timing import median_seconds

N = 10_000
K = 10_000


def _bleu_like(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per-sentence BLEU statistics (pairperm.BLEU_COLUMNS order) of two MT systems."""
    rng = np.random.default_rng(seed)
    ref = np.maximum(1, rng.poisson(22, n))
    out = []
    for quality in (0.62, 0.60):
        hyp = np.maximum(1, ref + rng.integers(-3, 4, n))
        total = np.maximum(0, hyp[:, None] - np.arange(4)[None, :])
        correct = rng.binomial(total, quality ** (1 + 0.5 * np.arange(4))[None, :])
        out.append(np.c_[hyp, ref, correct, total].astype(np.int64))
    return out[0], out[1]


def cases() -> list[tuple[str, callable]]:
    x, y = datasets.stanza_pos_like(N)
    d = x - y
    a, b = datasets.ner_like(N)
    ba, bb = _bleu_like(N)
    stay, swap = np.c_[x, y], np.c_[y, x]
    diff = lambda s: (s[:, 0] - s[:, 1]).astype(np.float64)
    return [
        ("monte_carlo_test identity N=1e4 K=1e4", lambda: pairperm.monte_carlo_test(d, -d, n_resamples=K, rng=1)),
        ("monte_carlo_test 2-D callable N=1e4 K=1e4",
         lambda: pairperm.monte_carlo_test(stay, swap, diff, n_resamples=K, rng=1)),
        ("bootstrap_test mean (POS) N=1e4 K=1e4", lambda: pairperm.bootstrap_test(x, y, "mean", n_resamples=K, rng=1)),
        ("bootstrap_test f1 (NER) N=1e4 K=1e4", lambda: pairperm.bootstrap_test(a, b, "f1", n_resamples=K, rng=1)),
        ("bootstrap_test bleu N=1e4 K=1e4", lambda: pairperm.bootstrap_test(ba, bb, "bleu", n_resamples=K, rng=1)),
        ("permutation_test auto N=1e4 (reference)", lambda: pairperm.permutation_test(x, y)),
        ("wilcoxon_test exact N=1e4", lambda: pairperm.wilcoxon_test(x, y)),
    ]


if __name__ == "__main__":
    for label, fn in cases():
        print(f"{label:48s} {1e3 * median_seconds(fn):10.2f} ms")
