"""f1_test / precision_test (method="auto") at N = 10^4 (or --n): p-values from moderate to far
below 1e-10, where the untilted 2-D engine can only report a bound (or run the exact DP).

    PYTHONPATH=python python bench/f1_tails.py                      # this checkout
    PYTHONPATH=python python bench/f1_tails.py --n 1000000          # beyond the dense 2-D box
    python bench/f1_tails.py --compare /path/to/other/python ...    # side by side, interleaved

With --compare, each checkout's `python/` directory is benchmarked in its own subprocess,
alternating, so both see the same machine load; medians are reported per checkout.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import warnings

import numpy as np

N = 10_000


def counts(n: int, seed: int, recall_a: float, recall_b: float, fp_a: float = 0.15, fp_b: float = 0.15):
    """NER-like per-sentence (tp, fp, fn) counts with chosen recalls and false-positive rates."""
    rng = np.random.default_rng(seed)
    gold = rng.poisson(1.5, n)
    out = []
    for rec, lam in ((recall_a, fp_a), (recall_b, fp_b)):
        tp = rng.binomial(gold, rec)
        fp = rng.poisson(lam, n)
        out.append(np.stack([tp, fp, gold - tp], axis=1).astype(np.int64))
    return out


CASES = {
    "f1 recall .85/.845 (p~0.4)": ("f1_test", dict(recall_a=0.85, recall_b=0.845)),
    "f1 recall .85/.82 (p~1e-9)": ("f1_test", dict(recall_a=0.85, recall_b=0.82)),
    "f1 recall .85/.79 (p~1e-30)": ("f1_test", dict(recall_a=0.85, recall_b=0.79)),
    "f1 recall .90/.70 (p~1e-298)": ("f1_test", dict(recall_a=0.90, recall_b=0.70)),
    "precision fp .1/.3 (p~1e-199)": ("precision_test", dict(recall_a=0.85, recall_b=0.85, fp_a=0.1, fp_b=0.3)),
}


def run_here(repeats: int, n: int) -> dict:
    import pairperm
    from timing import median_seconds

    out = {}
    for name, (func, kw) in CASES.items():
        a, b = counts(n, 0, **kw)
        f = getattr(pairperm, func)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = f(a, b)
            except pairperm.SupportTooLargeError:  # builds without exact work at this size
                out[name] = (float("nan"), float("nan"), float("nan"), False)
                continue
            t = median_seconds(functools.partial(f, a, b), repeats)
        out[name] = (t, r.pvalue, r.log_pvalue, bool(getattr(r, "pvalue_is_bound", False)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", nargs="*", help="python/ directories of checkouts to time side by side")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n", type=int, default=N, help="entries per case")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(run_here(args.repeats, args.n)))
        return
    paths = args.compare or [os.environ.get("PYTHONPATH", "python")]
    here = os.path.dirname(os.path.abspath(__file__))
    results: dict = {p: [] for p in paths}
    for _ in range(args.rounds):
        for p in paths:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([p, here]))
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--repeats", str(args.repeats), "--n", str(args.n)]
            results[p].append(json.loads(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout))
    print(f"N = {args.n}; median of {args.rounds} rounds x {args.repeats} calls; times in ms")
    header = f"{'case':32s}" + "".join(f" | {p[-28:]:>28s} ms   p-value (bound?)" for p in paths)
    print(header)
    for name in CASES:
        row = f"{name:32s}"
        for p in paths:
            runs = results[p]
            t = float(np.median([r[name][0] for r in runs])) * 1e3
            _, pv, lp, bound = runs[0][name]
            row += f" | {t:31.1f}   {pv:.3e} (lnp {lp:.1f}){' BOUND' if bound else ''}"
        print(row)


if __name__ == "__main__":
    main()
