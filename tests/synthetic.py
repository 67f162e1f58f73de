"""Synthetic data for the tests. The papers' data sets stay in pairperm.datasets; these are the
tests' other generators, each kept once."""

from __future__ import annotations

import numpy as np


def scores(rng, n, shift=0.0):
    """Per-sentence correct counts of two systems with a controllable gap."""
    length = rng.integers(1, 25, n)
    x = rng.binomial(length, 0.9)
    y = rng.binomial(length, max(0.0, 0.9 - shift))
    return x, y


def correct_counts(seed, n=400, gap=0.02):
    """Per-sentence correct counts (sentences of 1-19 tokens), system B `gap` less accurate."""
    rng = np.random.default_rng(seed)
    length = rng.integers(1, 20, n)
    return rng.binomial(length, 0.9), rng.binomial(length, 0.9 - gap)


def random_counts(rng, n, max_gold=3, fp_lam=0.6, recall=(0.7, 0.5)):
    """NER-like (tp, fp, fn) counts per entry, one (n, 3) array per recall in `recall`."""
    gold = rng.integers(0, max_gold + 1, n)
    out = []
    for rec in recall:
        tp = rng.binomial(gold, rec)
        fp = rng.poisson(fp_lam, n)
        out.append(np.stack([tp, fp, gold - tp], axis=1).astype(np.int64))
    return out


def separated_f1_data(n=400, seed=0):
    """(tp, fp, fn) counts of a far better system A and a worse B: F1 p-values far below 1e-30."""
    rng = np.random.default_rng(seed)
    gold = rng.poisson(1.5, n)
    ta = rng.binomial(gold, 0.95)
    tb = rng.binomial(gold, 0.6)
    fa = rng.poisson(0.1, n)
    fb = rng.poisson(0.5, n)
    return np.stack([ta, fa, gold - ta], 1), np.stack([tb, fb, gold - tb], 1)


def mixed(a, b, n_systems, seed=1, prefix="s"):
    """Systems on the same entries: system k takes each entry from a with probability k/(n-1)."""
    rng = np.random.default_rng(seed)
    out = {}
    for k in range(n_systems):
        take = rng.random(len(a)) < k / (n_systems - 1)
        out[f"{prefix}{k}"] = np.where(take.reshape((-1,) + (1,) * (a.ndim - 1)), a, b)
    return out


def normal_differences(n, shift, kind, seed):
    """Normal differences around `shift`; kind "ties" rounds them (ties and some zeros), "zeros"
    zeroes about a tenth of them."""
    rng = np.random.default_rng(seed)
    d = rng.normal(size=n) + shift
    if kind == "ties":
        d = np.round(d, 1)  # many ties and some zeros
    elif kind == "zeros":
        d[rng.random(n) < 0.1] = 0.0
    return d


def misaligned(a):
    """The same values in a view one byte off the alignment of their dtype (as a view into a byte
    buffer or a packed record can be)."""
    raw = np.frombuffer(b"\x00" + np.ascontiguousarray(a).tobytes(), dtype=np.uint8)[1:]
    view = raw.view(a.dtype).reshape(a.shape)
    assert not view.flags.aligned
    return view
