"""Deep p-values of corpus BLEU: tilted importance sampling against plain Monte Carlo, side by side.

N = 10^4 sentences of per-sentence BLEU statistics (pairperm.BLEU_COLUMNS); system B's n-gram
precisions are scaled so that the two-sided p-value of BLEU(A) - BLEU(B) is ~1e-5 or ~1e-20
(the scale is found once by bisection on the importance-sampling estimate). For each:

- pairperm.compare(metric="bleu") under method="auto" (tilted importance sampling with the
  linearised tail as a control variate, rounds pooled until the relative 95% half-width is
  <= 5%, at most 8 x 10^4 samples): p, relative half-width, samples drawn, time;
- plain Monte Carlo (method="monte_carlo", K = 10^4): time, and the resamples it would need for
  a 5% relative half-width, ~1.96^2 (1 - p) / (0.05^2 p) (its p-value is the floor 1 / (1 + K)).

With --coverage, also the coverage table: how often the reported 95% interval contains the
exact p-value (all 2^n swap patterns enumerated) over many seeds, on several shapes (BLEU,
micro-F1 and macro-F1 of (tp, fp, fn), a user-defined ratio), one- and two-sided.

Run: PYTHONPATH=python python bench/smooth_tails.py [--coverage]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
import warnings

import numpy as np

import pairperm
from pairperm._metrics import bleu_from_sums, f1_from_sums

N = 10_000
REPEATS = 3
TARGETS = (1e-5, 1e-20)


def bleu_stats(rng, n, quality, max_len=40):
    """Per-sentence BLEU statistics in BLEU_COLUMNS order; `quality` scales the n-gram precisions."""
    ref = rng.integers(10, max_len, n)
    hyp = np.maximum(1, ref + rng.integers(-3, 4, n))
    total = np.stack([np.maximum(hyp - k, 0) for k in range(4)], axis=1)
    correct = rng.binomial(total, np.clip(quality * np.array([1.0, 0.75, 0.55, 0.4]), 0, 1))
    return np.column_stack([hyp, ref, correct, total])


def pair_at(target, n=N):
    """System A at quality 0.5 and B shifted until the importance-sampling p-value is ~target."""
    a = bleu_stats(np.random.default_rng(0), n, 0.5)
    lo, hi = 0.5, 0.6
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        b = bleu_stats(np.random.default_rng(1), n, mid)
        log_p = pairperm.compare(b, a, "bleu", rng=0).result.log_pvalue
        if log_p > np.log(target):
            lo = mid
        else:
            hi = mid
        if abs(log_p - np.log(target)) < 0.3 * np.log(10):
            break
    return b, a


def median_time(fn, repeats=REPEATS):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def tails():
    print(f"BLEU, N = {N}, two-sided")
    print(f"{'target':>8} {'p (IS)':>11} {'rel. half-width':>16} {'K drawn':>8} {'IS time':>8} "
          f"{'MC time K=1e4':>14} {'MC p':>9} {'MC K for 5%':>12}")
    for target in TARGETS:
        x, y = pair_at(target)
        t_is, c = median_time(lambda x=x, y=y: pairperm.compare(x, y, "bleu", rng=1))
        r = c.result
        rel = (r.pvalue_ci[1] - r.pvalue_ci[0]) / 2 / r.pvalue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pairperm.PrecisionWarning)
            t_mc, mc = median_time(lambda x=x, y=y: pairperm.compare(x, y, "bleu", method="monte_carlo", rng=1))
        need = 1.96**2 * (1 - r.pvalue) / (0.05**2 * r.pvalue)
        print(f"{target:8.0e} {r.pvalue:11.3e} {rel:16.3f} {r.n_resamples:8d} {t_is:7.2f}s {t_mc:13.2f}s "
              f"{mc.pvalue:9.1e} {need:12.1e}")


def exact_difference_pvalue(x, y, metric, alternative):
    n = len(x)
    a = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64).reshape(-1, n, *([1] * (x.ndim - 1)))
    h = metric(((1 - a) * x + a * y).sum(axis=1).astype(float)) - metric(((1 - a) * y + a * x).sum(axis=1).astype(float))
    h_obs = h[0]
    slack = 1e-12 * abs(h_obs)
    hit = {"greater": h >= h_obs - slack, "less": h <= h_obs + slack}.get(alternative, np.abs(h) >= abs(h_obs) - slack)
    return np.count_nonzero(hit) / len(h)


def counts(rng, n, recall):
    gold = rng.integers(0, 4, n)
    tp = rng.binomial(gold, recall)
    return np.stack([tp, rng.poisson(0.6, n), gold - tp], axis=1)


def coverage(seeds=200, n=14):
    rng = np.random.default_rng(3)
    shapes = {
        "BLEU": (bleu_stats(rng, n, 0.8, 14), bleu_stats(rng, n, 0.45, 14), bleu_from_sums),
        "micro-F1": (counts(rng, n, 0.95), counts(rng, n, 0.3), f1_from_sums),
        "macro-F1 (2 classes)": (np.stack([counts(rng, n, 0.9), counts(rng, n, 0.85)], 1),
                                 np.stack([counts(rng, n, 0.3), counts(rng, n, 0.5)], 1),
                                 lambda s: f1_from_sums(s).mean(axis=-1)),
        "tp / (tp + fp)": (counts(rng, n, 0.9), counts(rng, n, 0.4),
                           lambda s: s[..., 0] / np.maximum(s[..., 0] + s[..., 1], 1)),
    }
    print(f"\nCoverage of the 95% interval against exact enumeration (n = {n}, {seeds} seeds each)")
    print(f"{'shape':>22} {'alternative':>11} {'exact p':>10} {'K':>6} {'coverage':>9}")
    for name, (x, y, metric) in shapes.items():
        for alternative in ("two-sided", "greater"):
            exact = exact_difference_pvalue(x, y, metric, alternative)
            for k in (500, 10_000):
                hit = 0
                for seed in range(seeds):
                    r = pairperm.compare(x, y, metric, alternative=alternative, n_resamples=k, rng=seed).result
                    hit += r.pvalue_ci[0] <= exact <= r.pvalue_ci[1]
                print(f"{name:>22} {alternative:>11} {exact:10.3g} {k:6d} {hit / seeds:9.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--coverage", action="store_true")
    parser.add_argument("--coverage-only", action="store_true")
    args = parser.parse_args()
    if not args.coverage_only:
        tails()
    if args.coverage or args.coverage_only:
        coverage()
