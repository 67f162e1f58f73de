"""An evaluation harness's run: 30 systems x 12 mixed tasks (435 pairs each) in one
compare_systems() call, from in-memory arrays, with confidence intervals on and off.

Tasks: nine 0/1 accuracy tasks and two integer-sum tasks (N from 500 to 14,000 items, exact
tests in the C++ batch, permutation-inversion intervals) and one F1 task ((N, 3) counts, exact
structured tests per pair, paired-bootstrap intervals). The first row runs end to end from
per-sample JSONL logs (one file per system) read with pairperm.read_scores. A BLEU task, whose p-values can only
be sampled, is timed on its own and kept out of the total.

    python bench/harness.py                  # --repeats 3; --no-bleu skips the BLEU row
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
from pathlib import Path

import numpy as np

import pairperm
from pairperm import BLEU_COLUMNS, datasets
from pairperm._intervals import batch_shift_bounds
from pairperm._resampling import bootstrap_mean_intervals
from timing import median_seconds

N_SYSTEMS = 30
ACCURACY_N = (500, 1_000, 2_000, 3_000, 5_000, 7_000, 9_000, 11_000, 14_000)
SUM_N = (4_000, 14_000)
F1_N = 2_000


def _mixed(a: np.ndarray, b: np.ndarray, seed: int) -> dict:
    """System k takes each item from A with probability k / 29, from B otherwise."""
    rng = np.random.default_rng(seed)
    shape = (-1,) + (1,) * (a.ndim - 1)
    return {f"ckpt-{k:02d}": np.where((rng.random(len(a)) < k / (N_SYSTEMS - 1)).reshape(shape), a, b)
            for k in range(N_SYSTEMS)}


def exact_tasks() -> tuple[dict, dict]:
    tasks: dict = {}
    metrics: dict = {}
    rng = np.random.default_rng(0)
    for k, n in enumerate(ACCURACY_N):
        truth = rng.random(n)
        a, b = (truth < 0.62).astype(np.int64), (truth + rng.normal(0, 0.2, n) < 0.58).astype(np.int64)
        tasks[f"acc{k}-{n}"] = _mixed(a, b, seed=k)
        metrics[f"acc{k}-{n}"] = "accuracy"
    for k, n in enumerate(SUM_N):
        x, y = datasets.stanza_pos_like(n, seed=k)
        tasks[f"pos{k}-{n}"] = _mixed(x, y, seed=100 + k)
        metrics[f"pos{k}-{n}"] = "sum"
    a, b = datasets.ner_like(F1_N, seed=5)
    tasks[f"ner-{F1_N}"] = _mixed(a, b, seed=200)
    metrics[f"ner-{F1_N}"] = "f1"
    return tasks, metrics


def bleu_task(n: int = 1_000) -> dict:
    rng = np.random.default_rng(9)
    hyp = rng.integers(10, 40, n)
    out = {}
    for k in range(N_SYSTEMS):
        matches = [rng.binomial(np.maximum(hyp - g, 1), 0.55 - 0.1 * g + 0.002 * k) for g in range(4)]
        totals = [np.maximum(hyp - g, 1) for g in range(4)]
        ref = hyp + rng.integers(-3, 4, n)
        cols = {"hyp_len": hyp, "ref_len": ref}
        for g in range(4):
            cols[f"correct_{g + 1}"], cols[f"total_{g + 1}"] = matches[g], totals[g]
        out[f"ckpt-{k:02d}"] = np.stack([cols[c] for c in BLEU_COLUMNS], axis=1).astype(np.int64)
    return out


def write_logs(tasks: dict, metrics: dict, directory: Path) -> list:
    """lm-evaluation-harness style logs of the per-item tasks: one JSONL file per system, one
    line per (task, doc_id) with its score."""
    files = []
    for k in range(N_SYSTEMS):
        name = f"ckpt-{k:02d}"
        path = directory / f"{name}.jsonl"
        with open(path, "w") as f:
            for t, systems in tasks.items():
                if metrics[t] == "f1":
                    continue
                f.writelines(f'{{"task": "{t}", "doc_id": {i}, "score": {int(v)}}}\n'
                             for i, v in enumerate(systems[name]))
        files.append(path)
    return files


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-bleu", action="store_true")
    args = ap.parse_args()
    r = args.repeats
    print(f"# harness benchmark: pairperm {pairperm.__version__}, Python {platform.python_version()}, "
          f"NumPy {np.__version__}, {os.cpu_count()} cores; median of {r} runs after a warm-up, seconds")
    tasks, metrics = exact_tasks()
    n_pairs = N_SYSTEMS * (N_SYSTEMS - 1) // 2 * len(tasks)
    print(f"# {len(tasks)} tasks x {N_SYSTEMS} systems = {n_pairs} pairs")

    def run(level, only=None):
        sel = {t: v for t, v in tasks.items() if only is None or only(metrics[t])}
        return pairperm.compare_systems(sel, {t: metrics[t] for t in sel}, confidence_level=level, rng=0,
                                        progress=False)

    rows = [
        ("12 tasks, intervals off", lambda: run(None)),
        ("12 tasks, 95% intervals", lambda: run(0.95)),
        ("11 integer-sum tasks, intervals off", lambda: run(None, lambda m: m != "f1")),
        ("11 integer-sum tasks, 95% intervals", lambda: run(0.95, lambda m: m != "f1")),
        ("F1 task, intervals off", lambda: run(None, lambda m: m == "f1")),
        ("F1 task, 95% intervals", lambda: run(0.95, lambda m: m == "f1")),
    ]
    # End to end from per-sample logs: one JSONL file per system, a line per (task, item).
    logdir = Path(tempfile.mkdtemp())
    files = write_logs(tasks, metrics, logdir)

    def from_logs(level):
        read = pairperm.read_scores(files, id_field="doc_id", score_field="score", task_field="task")
        f1 = {t: tasks[t] for t in tasks if metrics[t] == "f1"}  # (N, 3) counts: from arrays
        return pairperm.compare_systems({**read, **f1}, {t: metrics[t] for t in [*read, *f1]},
                                        confidence_level=level, rng=0, progress=False)

    rows.insert(0, ("12 tasks from 30 JSONL logs, 95% intervals", lambda: from_logs(0.95)))
    rows.insert(1, ("  reading the 30 JSONL logs alone", lambda: pairperm.read_scores(
        files, id_field="doc_id", score_field="score", task_field="task")))
    times = {}
    for label, fn in rows:
        times[label] = median_seconds(fn, r)
        print(f"{label:<45} {times[label]:>9.3f}")
    on, off = times["11 integer-sum tasks, 95% intervals"], times["11 integer-sum tasks, intervals off"]
    print(f"intervals on the exact tasks: {on / off:.1f}x (target < 2x); 12 tasks with intervals: "
          f"{times['12 tasks, 95% intervals']:.2f} s (target < 10 s)")

    # Where the interval time goes on the exact tasks: the pairs' inversion intervals (all pairs
    # of a task in one call of the core; a loop of shift_interval for comparison) and the
    # systems' unsampled bootstrap intervals (sampled ones for comparison).
    sel = [t for t in tasks if metrics[t] != "f1"]
    pairs = np.array([(i, j) for i in range(N_SYSTEMS) for j in range(i + 1, N_SYSTEMS)], dtype=np.int64)
    parts = {
        "pair intervals, one call per task": lambda: [
            batch_shift_bounds(np.stack(list(tasks[t].values())), pairs, 0.95, "two-sided", None) for t in sel],
        "pair intervals, a shift_interval per pair": lambda: [
            pairperm.shift_interval(s[i], s[j]) for t in sel for s in [list(tasks[t].values())] for i, j in pairs],
        "system intervals, unsampled bootstrap": lambda: [
            bootstrap_mean_intervals(list(tasks[t].values()), 0.95) for t in sel],
        "system intervals, 1000 paired resamples": lambda: [
            pairperm.bootstrap_intervals(list(tasks[t].values()), "mean", method="percentile", n_resamples=1000,
                                         rng=0, pairs=np.zeros((0, 2), dtype=np.int64)) for t in sel],
    }
    for label, fn in parts.items():
        print(f"  {label:<43} {median_seconds(fn, r):>9.3f}")

    if not args.no_bleu:
        bleu = bleu_task()
        t = median_seconds(lambda: pairperm.compare_systems({"bleu": bleu}, "bleu", rng=0, progress=False,
                                                            n_resamples=1000), 1)
        print(f"{'BLEU task (sampled p-values, not in the total)':<45} {t:>9.3f}")


if __name__ == "__main__":
    main()
