"""The recorded behaviour corpus: every route's outcome on a fixed set of inputs, kept bit for bit.

Each case is a deterministic call (inputs drawn from fixed seeds); its outcome is a flat list of
values (p-values and log p-values as exact float64, engines and tests by name, interval ends).
tests/test_recorded_corpus.py holds the library to the outcomes recorded in
tests/data/recorded_corpus.json, so that moving code between modules or into the core cannot
change a result unnoticed. Sampled routes are recorded with their seeds: a changed stream shows
up too, and is re-recorded only on purpose (``python tests/corpus.py --record``).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

import pairperm
from pairperm import _core, datasets
from synthetic import mixed, separated_f1_data

RECORD = Path(__file__).parent / "data" / "recorded_corpus.json"
ALTERNATIVES = ("two-sided", "greater", "less")


def plain(value: Any) -> Any:
    """A value as JSON keeps it exactly: floats as their hex form, the rest as they are."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value).hex()
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"no plain form for {type(value).__name__}")


def outcome(r: Any) -> list:
    """A test result's p-value, its log, its engine (or method) and its statistic."""
    engine = getattr(r, "engine", None) or getattr(r, "method", None)
    log_p = getattr(r, "log_pvalue", None)
    return [r.pvalue, math.nan if log_p is None else log_p, engine, r.statistic]


def interval(ci: Any) -> list:
    return [float(ci[0]), float(ci[1])]


def _counts(seed: int, n: int, gap: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    length = rng.integers(1, 20, n)
    return rng.binomial(length, 0.9), rng.binomial(length, 0.9 - gap)


def _units(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, n)
    return np.repeat(np.arange(n), sizes)[: n * 2]


def cases() -> dict[str, Callable[[], list]]:
    out: dict[str, Callable[[], list]] = {}

    # Integer sums: every engine, both sides, tails from the centre to far out.
    for n, gap in ((0, 0.0), (1, 0.5), (7, 0.2), (40, 0.1), (300, 0.02), (3000, 0.03), (100_000, 0.001)):
        x, y = _counts(n + 1, n, gap)
        for method in ("auto", "exact", "dp", "fft"):
            if method in ("dp", "fft") and n > 3000:
                continue
            for alt in ALTERNATIVES:
                out[f"permutation_test/int/{n}/{method}/{alt}"] = (
                    lambda x=x, y=y, m=method, a=alt: outcome(pairperm.permutation_test(x, y, method=m, alternative=a)))
    x, y = _counts(11, 2000, 0.2)  # deep: p far below 1e-300
    for alt in ALTERNATIVES:
        out[f"permutation_test/int/deep/{alt}"] = lambda a=alt: outcome(pairperm.permutation_test(x, y, alternative=a))
    wide = np.random.default_rng(12).integers(-40_000, 40_000, 500)
    out["permutation_test/int/wide"] = lambda: outcome(pairperm.permutation_test(wide, np.zeros_like(wide), rng=0))
    out["permutation_test/int/monte_carlo"] = lambda: outcome(
        pairperm.permutation_test(*_counts(13, 500, 0.05), method="monte_carlo", n_resamples=2000, rng=1))

    # Units: groups of unequal size, samples per item, and both.
    x, y = _counts(14, 60, 0.1)
    groups = _units(15, 30)[:60]
    for alt in ALTERNATIVES:
        r = lambda a=alt: pairperm.permutation_test(x, y, groups=groups, alternative=a)  # noqa: E731
        out[f"permutation_test/groups/{alt}"] = lambda r=r: outcome(r()) + interval(r().confidence_interval(0.9))
    xk, yk = np.random.default_rng(16).integers(0, 2, (2, 80, 4))
    out["permutation_test/samples"] = lambda: outcome(pairperm.permutation_test(xk, yk))
    out["permutation_test/samples_groups"] = lambda: outcome(
        pairperm.permutation_test(xk, yk, groups=np.repeat(np.arange(20), 4)))

    # Real-valued scores: exact by meet in the middle, importance sampling, Monte Carlo.
    rng = np.random.default_rng(17)
    base = rng.beta(2, 3, 600)
    ra, rb = np.clip(base + rng.normal(0.02, 0.08, 600), 0, 1), np.clip(base + rng.normal(0, 0.08, 600), 0, 1)
    for alt in ALTERNATIVES:
        out[f"permutation_test/real/exact/{alt}"] = lambda a=alt: outcome(
            pairperm.permutation_test(ra[:30], rb[:30], alternative=a))
        out[f"permutation_test/real/is/{alt}"] = lambda a=alt: outcome(
            pairperm.permutation_test(ra, rb, alternative=a, rng=0))
    out["permutation_test/real/deep_is"] = lambda: outcome(pairperm.permutation_test(ra + 0.1, rb, rng=0))
    out["permutation_test/real/grid"] = lambda: outcome(pairperm.permutation_test(np.round(ra, 2), np.round(rb, 2), rng=0))
    out["permutation_test/real/monte_carlo"] = lambda: outcome(
        pairperm.permutation_test(ra, rb, method="monte_carlo", n_resamples=2000, rng=3))

    # Structured statistics, distributions and the general Monte Carlo test.
    st_x, st_y = _counts(18, 50, 0.1)
    out["structured_test/1d"] = lambda: outcome(pairperm.structured_test(st_x - st_y, st_y - st_x))
    out["structured_test/1d_callable"] = lambda: outcome(
        pairperm.structured_test(st_x - st_y, st_y - st_x, lambda s: s * s, alternative="greater"))
    a2, b2 = datasets.ner_like(30, seed=19)
    out["structured_test/2d_callable"] = lambda: outcome(
        pairperm.structured_test(a2[:, :2], b2[:, :2], lambda s: s[:, 0] - 0.5 * s[:, 1], alternative="greater"))
    dist_x, dist_y = _counts(20, 200, 0.05)
    for method in ("auto", "dp", "fft"):
        out[f"null_distribution/{method}"] = lambda m=method: [
            *(float(v) for v in pairperm.null_distribution(dist_x - dist_y, dist_y - dist_x, method=m).sf([-30, 0, 25, 60])),
            pairperm.null_distribution(dist_x - dist_y, dist_y - dist_x, method=m).offset]
    out["monte_carlo_test"] = lambda: outcome(pairperm.monte_carlo_test(
        np.c_[a2, b2], np.c_[b2, a2], lambda s: s[:, 0] - s[:, 3], n_resamples=1000, rng=4))

    # F1, precision, recall: every format and engine, deep tails, units.
    for n in (40, 400, 10_000):
        a, b = datasets.ner_like(n, seed=n)
        for test in ("f1_test", "precision_test", "recall_test"):
            for method in ("auto", "exact", "dp"):
                if method == "dp" and n > 400:
                    continue
                for alt in ALTERNATIVES:
                    out[f"{test}/{n}/{method}/{alt}"] = lambda a=a, b=b, t=test, m=method, al=alt: outcome(
                        getattr(pairperm, t)(a, b, method=m, alternative=al))
    sa, sb = separated_f1_data(300, seed=21)
    out["f1_test/deep"] = lambda: outcome(pairperm.f1_test(sa, sb))
    te_a = np.c_[a2[:, 0], a2[:, 1] + a2[:, 2]]
    te_b = np.c_[b2[:, 0], b2[:, 1] + b2[:, 2]]
    out["f1_test/tp_errors"] = lambda: outcome(pairperm.f1_test(te_a, te_b))
    out["f1_test/beta"] = lambda: outcome(pairperm.f1_test(a2, b2, beta=2.0, zero_division=1.0))
    out["f1_test/groups"] = lambda: outcome(pairperm.f1_test(a2, b2, groups=np.arange(30) // 3))
    out["f1_test/monte_carlo"] = lambda: outcome(pairperm.f1_test(a2, b2, method="monte_carlo", n_resamples=1000, rng=5))

    # The classic tests.
    cx, cy = _counts(23, 60, 0.1)
    for alt in ALTERNATIVES:
        out[f"sign_test/{alt}"] = lambda a=alt: outcome(pairperm.sign_test(cx, cy, alternative=a))
        out[f"mcnemar_test/{alt}"] = lambda a=alt: outcome(pairperm.mcnemar_test(cx > 9, cy > 9, alternative=a))
        for zero in ("wilcox", "pratt", "zsplit"):
            out[f"wilcoxon_test/exact/{zero}/{alt}"] = lambda a=alt, z=zero: outcome(
                pairperm.wilcoxon_test(cx, cy, alternative=a, zero_method=z))
    big = np.random.default_rng(24).normal(0.05, 1, 3000)
    out["wilcoxon_test/band"] = lambda: outcome(pairperm.wilcoxon_test(big)) + [pairperm.wilcoxon_test(big).pvalue_error]
    out["wilcoxon_test/monte_carlo"] = lambda: outcome(
        pairperm.wilcoxon_test(big, method="monte_carlo", n_resamples=999, rng=6))
    out["bootstrap_test/mean"] = lambda: outcome(pairperm.bootstrap_test(ra, rb, n_resamples=1000, rng=7))
    out["bootstrap_test/f1"] = lambda: outcome(pairperm.bootstrap_test(a2, b2, "f1", n_resamples=1000, rng=8))

    # Intervals.
    d = _counts(25, 50, 0.1)
    for method in ("auto", "exact", "saddlepoint"):
        out[f"shift_interval/{method}"] = lambda m=method: interval(
            pairperm.shift_interval(d[0][:30], d[1][:30], method=m, confidence_level=0.9).mean_difference)
    out["shift_interval/lattice"] = lambda: interval(pairperm.shift_interval(cx > 9, cy > 9).mean_difference)
    out["shift_interval/real"] = lambda: interval(pairperm.shift_interval(ra[:35], rb[:35]).mean_difference)
    out["confidence_interval/sign"] = lambda: interval(pairperm.sign_test(cx, cy).confidence_interval(0.9))
    out["confidence_interval/wilcoxon"] = lambda: interval(pairperm.wilcoxon_test(cx, cy).confidence_interval(0.9))
    out["bootstrap_intervals"] = lambda: [v for row in pairperm.bootstrap_intervals(
        [ra, rb], "mean", n_resamples=500, rng=9).intervals for v in interval(row)]

    # compare() on every metric, and compare_systems on one and several tasks.
    bleu = np.random.default_rng(26).integers(0, 5, (2, 40, 10))
    bleu[:, :, 6:10] += bleu[:, :, 2:6]  # totals at least the matches
    metric_inputs = {
        "accuracy": (cx > 9, cy > 9), "sum": (cx, cy), "mean": (ra[:200], rb[:200]), "f1": (a2, b2),
        "macro_f1": (np.stack([a2, b2], 1), np.stack([b2, a2], 1)), "bleu": (bleu[0], bleu[1]),
        "perplexity": (1 + ra * 20, 1 + rb * 20),
    }
    for metric, (mx, my) in metric_inputs.items():
        out[f"compare/{metric}"] = lambda mx=mx, my=my, m=metric: [
            *outcome(pairperm.compare(mx, my, m, n_resamples=500, rng=10)),
            pairperm.compare(mx, my, m, n_resamples=500, rng=10).test]
    pos = {f"s{k}": v for k, v in enumerate(_counts(27, 500, 0.02) + _counts(28, 500, 0.0))}
    real = {f"r{k}": np.clip(base + np.random.default_rng(29 + k).normal(0.01 * k, 0.08, 600), 0, 1) for k in range(4)}
    f1s = mixed(*datasets.ner_like(500, seed=30), 3, prefix="t")

    def rows(res: Any) -> list:
        return [[r.pvalue, r.log_pvalue, r.pvalue_adjusted, r.test, r.engine, r.statistic, r.ci_low, r.ci_high]
                for r in res.rows]

    out["compare_systems/accuracy"] = lambda: rows(pairperm.compare_systems(pos, "sum", rng=11, progress=False))
    out["compare_systems/mean"] = lambda: rows(pairperm.compare_systems(real, "mean", rng=12, progress=False))
    out["compare_systems/f1"] = lambda: rows(pairperm.compare_systems(f1s, "f1", rng=13, progress=False))
    out["compare_systems/groups"] = lambda: rows(pairperm.compare_systems(
        pos, "sum", groups=np.arange(500) // 5, rng=14, progress=False))
    out["compare_systems/tasks"] = lambda: rows(pairperm.compare_systems(
        {"pos": pos, "real": real}, {"pos": "sum", "real": "mean"}, rng=15, progress=False))
    return out


def run(names: Any = None) -> dict[str, Any]:
    every = cases()
    return {name: plain(every[name]()) for name in (names or every)}


def environment() -> dict[str, str]:
    """What the last bits depend on besides the library: glibc's vector math kinds agree to
    ~1e-14 in the grouped tails, not bit for bit, and NumPy's own transcendental functions (in
    the metrics of summed statistics) differ between its versions in the last bits."""
    return {"vector_math": _core.vector_math, "numpy": np.__version__}


def recording() -> dict[str, Any]:
    """The outcomes and the environment they were computed in: elsewhere they compare within the
    routes' documented accuracy instead."""
    return {"environment": environment(), "outcomes": run()}


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        raise SystemExit("usage: python tests/corpus.py --record   (writes tests/data/recorded_corpus.json)")
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps(recording(), indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"recorded {len(cases())} cases in {RECORD}")
