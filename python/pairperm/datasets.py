"""Synthetic evaluation data: the papers' runtime experiment."""

from __future__ import annotations

import numpy as np

__all__ = ["stanza_pos_like", "ner_like"]


def _redraw_normal(rng: np.random.Generator, mean: float, sd: float, size: int, lo: float, hi: float) -> np.ndarray:
    out = rng.normal(mean, sd, size)
    bad = (out < lo) | (out > hi)
    while bad.any():
        out[bad] = rng.normal(mean, sd, int(bad.sum()))
        bad = (out < lo) | (out > hi)
    return out


def stanza_pos_like(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per-sentence correct-token counts of two POS taggers, as in the papers' experiment.

    Sentence length ~ Normal(12.08, 10.60), rounded up and at least 1; each system's
    per-sentence accuracy ~ Normal(0.9543, 0.1116) redrawn until inside [0, 1], with
    system B's mean scaled by 0.98; correct = floor(rate * length).

    Returns
    -------
    x, y : ndarray of int64, shape (n,)
        Correct counts of systems A and B.
    """
    rng = np.random.default_rng(seed)
    length = np.maximum(1, np.ceil(rng.normal(12.08, 10.60, n))).astype(np.int64)
    rate_a = _redraw_normal(rng, 0.9543, 0.1116, n, 0.0, 1.0)
    rate_b = _redraw_normal(rng, 0.9543 * 0.98, 0.1116, n, 0.0, 1.0)
    x = np.floor(rate_a * length).astype(np.int64)
    y = np.floor(rate_b * length).astype(np.int64)
    return x, y


def ner_like(n: int, seed: int = 0, recall: float = 0.85, fp_rate: float = 0.15) -> tuple[np.ndarray, np.ndarray]:
    """Per-sentence (tp, fp, fn) counts of two NER-like systems, shape (n, 3) each.

    Gold entities ~ Poisson(1.5); each system finds each gold entity with probability
    `recall` (system B slightly lower) and adds Poisson(`fp_rate`) false positives.
    """
    rng = np.random.default_rng(seed)
    gold = rng.poisson(1.5, n)
    out = []
    for rec in (recall, recall * 0.97):
        tp = rng.binomial(gold, rec)
        fp = rng.poisson(fp_rate, n)
        out.append(np.stack([tp, fp, gold - tp], axis=1).astype(np.int64))
    return out[0], out[1]
