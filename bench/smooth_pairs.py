"""All pairs of a BLEU task by tilted importance sampling: this tree's sampler against an older one.

30 systems x N = 2,000 sentences of per-sentence BLEU statistics (pairperm.BLEU_COLUMNS), 435
pairs in one pairperm.compare_systems(..., "bleu") call on `--jobs` threads. The systems translate
the same sentences against shared references: each has its own length ratio (0.94-1.04, so the
brevity penalty's kink lies among them) and unigram precision (corpus BLEU ~ 29-35), and how hard
a sentence is is shared by all. The older sampler is this repository's python/pairperm/_smooth.py
at `--old` (default: the newest commit whose sampler has no control variate), loaded from git and
put in place of the current one for its timings; both run in turn, `--repeats` times each, and
the medians are printed with the samples drawn and the p-values' agreement.

    PYTHONPATH=python python bench/smooth_pairs.py [--old REF] [--repeats 3] [--jobs 2] [--data harness]

``--data harness`` takes bench/harness.py's BLEU task at N = 2,000 instead (every system's
hypotheses as long as the others', references drawn per system); ``--data walkthrough`` the
translations of bench/walkthrough.py, counted from their text.
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable

import numpy as np

import pairperm
from pairperm import _runner, _smooth

N, SYSTEMS = 2_000, 30
ROOT = Path(__file__).resolve().parent.parent
SAMPLER = "python/pairperm/_smooth.py"


def bleu_systems(n: int = N, k: int = SYSTEMS, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    ref = rng.integers(4, 60, n)
    difficulty = rng.normal(0.0, 0.8, n)
    out = {}
    for s in range(k):
        ratio = 0.94 + 0.10 * rng.random()
        hyp = np.maximum(1, np.rint(ref * ratio + rng.normal(0.0, 2.0, n))).astype(np.int64)
        logit = math.log(0.6 / 0.4) + 0.25 * (s / (k - 1) - 0.5) - difficulty + rng.normal(0.0, 0.3, n)
        unigram = 1.0 / (1.0 + np.exp(-logit))
        total = np.stack([np.maximum(hyp - g, 0) for g in range(4)], axis=1)
        correct = rng.binomial(total, unigram[:, None] ** np.arange(1, 5))
        out[f"sys{s:02d}"] = np.column_stack([hyp, ref, correct, total]).astype(np.int64)
    return out


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


def default_old() -> str:
    """The newest commit whose sampler has no control variate."""
    for commit in git("log", "--format=%H", "--", SAMPLER).split():
        if "linear_control" not in git("show", f"{commit}:{SAMPLER}"):
            return commit
    raise SystemExit("no commit with the sampler before its control variate")


def load_old(ref: str) -> Callable[..., Any]:
    """smooth_pvalue of `ref`'s sampler, as a module of the installed package."""
    module = types.ModuleType("pairperm._smooth_at_" + ref[:12])
    module.__package__ = "pairperm"
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(git("show", f"{ref}:{SAMPLER}"), f"{ref[:12]}:{SAMPLER}", "exec"), module.__dict__)
    return module.smooth_pvalue


def run(task: dict, sampler: Callable[..., Any], jobs: int) -> tuple[float, float, Any, list[int]]:
    """Wall and CPU seconds (all threads) of compare_systems with `sampler`, its result, and the
    samples each pair drew."""
    drawn: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        r = sampler(*args, **kwargs)
        drawn.append(r.n_resamples)
        return r

    _runner.smooth_pvalue = counted
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        res = pairperm.compare_systems({"bleu": task}, "bleu", rng=0, progress=False, n_jobs=jobs)
        return time.perf_counter() - t0, time.process_time() - c0, res, drawn
    finally:
        _runner.smooth_pvalue = _smooth.smooth_pvalue


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", default=None, help="git ref of the older sampler (default: before the control variate)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--data", choices=("shared-references", "harness", "walkthrough"), default="shared-references")
    args = ap.parse_args()
    old_ref = args.old or default_old()
    old = load_old(old_ref)
    if args.data == "harness":
        from harness import bleu_task
        task = bleu_task(N)
    elif args.data == "walkthrough":
        import tempfile

        from walkthrough import write_mt
        hyps, ref = write_mt(Path(tempfile.mkdtemp()))
        refs = ref.read_text().splitlines()
        task = {name: pairperm.mt_statistics(path.read_text().splitlines(), refs) for name, path in hyps.items()}
    else:
        task = bleu_systems()
    times: dict[str, list[float]] = {"old": [], "new": []}
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    results: dict[str, Any] = {}
    for _ in range(args.repeats):
        for name, sampler in (("old", old), ("new", _smooth.smooth_pvalue)):
            seconds, cpu_seconds, res, drawn = run(task, sampler, args.jobs)
            times[name].append(seconds)
            cpu[name].append(cpu_seconds)
            results[name] = (res, drawn)
    print(f"# {SYSTEMS} systems x N = {N} BLEU statistics ({args.data}), {len(results['new'][0].rows)} pairs, "
          f"compare_systems on {args.jobs} threads, median of {args.repeats}; old sampler: {old_ref[:12]}")
    print(f"{'sampler':<8} {'wall s':>7} {'CPU s':>7}  {'wall runs (s)':<24} {'samples a pair: median':>23} {'mean':>6} "
          f"{'max':>6}")
    for name in ("old", "new"):
        drawn = results[name][1]
        runs = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"{name:<8} {statistics.median(times[name]):7.2f} {statistics.median(cpu[name]):7.2f}  {runs:<24} "
              f"{statistics.median(drawn):>23.0f} {statistics.mean(drawn):>6.0f} {max(drawn):>6d}")
    print(f"speed-up (old / new medians): wall {statistics.median(times['old']) / statistics.median(times['new']):.2f}x, "
          f"CPU {statistics.median(cpu['old']) / statistics.median(cpu['new']):.2f}x")
    # Both estimate the same p-values: the log ratio against the two intervals' combined width.
    gap, out = [], 0
    for a, b in zip(results["old"][0].rows, results["new"][0].rows):
        la, lb = a.log_pvalue, b.log_pvalue
        gap.append(abs(la - lb))
        out += abs(la - lb) > math.log(1.25)
    print(f"|log p_old - log p_new|: median {statistics.median(gap):.4f}, max {max(gap):.3f}; "
          f"pairs more than 25% apart: {out}")


if __name__ == "__main__":
    main()
