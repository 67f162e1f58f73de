"""Public calls of several pairperm builds timed side by side (e.g. before and after a change).

Each argument is a directory holding a built ``pairperm`` package (for a checkout:
``pip install --no-deps --target DIR CHECKOUT``). Builds run in interleaved rounds, one subprocess per
build and round, so that load on a shared machine hits them alike; a cell is the median over
rounds of per-round medians, and the last column is the ratio of the last build to the first.

    python bench/builds.py OLD_DIR NEW_DIR [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

# Calls valid for every build since the first release: positional data, keyword options.
CASES = {
    "permutation_test auto N=1e4": ("pos", 10_000, "pairperm.permutation_test(x, y)", 50),
    "permutation_test auto N=1e6": ("pos", 1_000_000, "pairperm.permutation_test(x, y)", 7),
    "permutation_test fft N=1e4": ("pos", 10_000, "pairperm.permutation_test(x, y, method='fft')", 7),
    "permutation_test dp N=1e4": ("pos", 10_000, "pairperm.permutation_test(x, y, method='dp')", 7),
    "permutation_test MC K=2e4 N=1e4": ("pos", 10_000,
                                        "pairperm.permutation_test(x, y, method='monte_carlo', n_resamples=20000, rng=0)", 5),
    "null_distribution auto N=1e4": ("pos", 10_000, "pairperm.null_distribution(x - y, y - x)", 20),
    "null_distribution auto N=1e6": ("pos", 1_000_000, "pairperm.null_distribution(x - y, y - x)", 7),
    "convolve_fft N=1e3": ("pos", 1_000, "pairperm.convolve_fft(x - y, y - x)", 15),
    "f1_test exact N=1e4": ("ner", 10_000, "pairperm.f1_test(x, y)", 5),
    "recall_test exact N=1e4": ("ner", 10_000, "pairperm.recall_test(x, y)", 20),
    "monte_carlo_test identity K=1e4 N=1e4": ("pos", 10_000,
                                              "pairperm.monte_carlo_test(x - y, y - x, n_resamples=10000, rng=0)", 5),
    "wilcoxon_test N=500": ("real", 500, "pairperm.wilcoxon_test(x, y)", 5),
    "mcnemar_test N=1e4": ("binary", 10_000, "pairperm.mcnemar_test(x, y)", 20),
    # The hot paths of bench/limits.py (calls of 0.2.0 and later).
    "permutation_test auto N=1e7": ("pos", 10_000_000, "pairperm.permutation_test(x, y)", 5),
    "grouped tilted tail N=1e4 (summary given)": ("pos", 10_000, "pairperm._core.grouped_pvalue(s, 'two-sided')", 500),
    "permutation_test MC K=1e5 N=1e3 2 threads": ("pos", 1_000, "pairperm.permutation_test(x, y, method='monte_carlo', "
                                                  "n_resamples=100000, rng=0, n_jobs=2)", 7),
    "compare_systems 100 systems N=1e4": ("systems", 10_000, "pairperm.compare_systems(systems)", 5),
    "f1_test exact N=1e5": ("ner", 100_000, "pairperm.f1_test(x, y)", 5),
    "compare bleu importance sampling K=1e4 N=1e4": ("bleu", 10_000, "pairperm.compare(x, y, 'bleu', n_resamples=10000, "
                                                     "rng=0)", 5),
}

_CHILD = r"""
import json, statistics, sys, time, warnings
import numpy as np
import pairperm
from pairperm import datasets
# An editable install's import hook can win over PYTHONPATH: time the build asked for or nothing.
if not pairperm.__file__.startswith(sys.argv[2]):
    raise SystemExit(f"imported {pairperm.__file__}, not the build in {sys.argv[2]}")
warnings.simplefilter("ignore")
out = {}
for label, (kind, n, call, repeats) in json.loads(sys.argv[1]).items():
    if kind in ("pos", "systems"):
        x, y = datasets.stanza_pos_like(n, 2022)
        s = pairperm._core.summarize_paired(np.ascontiguousarray(x, np.int64), np.ascontiguousarray(y, np.int64))
        # System k takes each entry from x with probability k / 99, else from y.
        pick = np.random.default_rng(1).random((100, n)) < np.arange(100)[:, None] / 99
        systems = {f"s{k:02d}": np.where(pick[k], x, y) for k in range(100)} if kind == "systems" else None
    elif kind == "ner":
        x, y = datasets.ner_like(n, 2022)
    elif kind == "bleu":  # per-sentence BLEU statistics, B's n-gram precisions 5% lower than A's
        rng = np.random.default_rng(2022)
        hyp = rng.integers(10, 40, n)
        total = np.stack([np.maximum(hyp - k, 0) for k in range(4)], axis=1)
        x, y = ([hyp, hyp, *rng.binomial(total, q * np.array([0.6, 0.45, 0.33, 0.24])).T, *total.T] for q in (1.0, 0.95))
        x, y = np.column_stack(x), np.column_stack(y)
    elif kind == "binary":
        x, y = (datasets.stanza_pos_like(n, 2022)[0] % 2, datasets.stanza_pos_like(n, 7)[0] % 2)
    else:
        rng = np.random.default_rng(2022)
        x, y = rng.normal(0.1, 1, n), rng.normal(0.0, 1, n)
    code = compile(call, label, "eval")  # compiled once: the timings hold the call alone
    eval(code)  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        eval(code)
        times.append(time.perf_counter() - t0)
    out[label] = statistics.median(times)
print(json.dumps(out))
"""


def run_round(directory: str) -> dict:
    env_path = str(Path(directory).resolve())
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(CASES), env_path], capture_output=True, text=True,
                          env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    if proc.returncode:
        raise SystemExit(f"{directory}: {proc.stderr.strip().splitlines()[-1]}")
    return json.loads(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    per_build: list[dict[str, list[float]]] = [{k: [] for k in CASES} for _ in args.builds]
    for _ in range(args.rounds):
        for b, directory in enumerate(args.builds):
            for label, t in run_round(directory).items():
                per_build[b][label].append(t)
    names = [Path(d).resolve().parent.name or d for d in args.builds]
    print(f"| call | {' | '.join(names)} | last / first |")
    print("|---|" + "---|" * len(names) + "---|")
    for label in CASES:
        med = [statistics.median(per_build[b][label]) for b in range(len(args.builds))]
        cells = " | ".join(f"{1e3 * m:.3g} ms" for m in med)
        print(f"| {label} | {cells} | {med[-1] / med[0]:.2f} |")


if __name__ == "__main__":
    main()
