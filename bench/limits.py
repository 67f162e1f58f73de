"""Every hot path as a multiple of one pass over its inputs.

One pass is what reading the data once costs on this machine (``x.sum() + y.sum()`` over the
same arrays); a call at 1.0x does nothing but read its inputs. Each row times the public
call and the pass in turn, call after call (medians), so the ratio holds on a loaded machine
even when the milliseconds do not.

    python bench/limits.py [--quick] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pairperm  # noqa: E402
from pairperm import _core  # noqa: E402
from pairperm.datasets import ner_like, stanza_pos_like  # noqa: E402
from timing import median_seconds, paired_median_seconds  # noqa: E402


def one_pass(x: np.ndarray, y: np.ndarray):
    return lambda: x.sum() + y.sum()


def repeats_within(fn, budget: float = 0.3) -> int:
    """Calls that fit in about `budget` seconds, from 5 to 1001: a call of microseconds gets
    hundreds, so that its median is the steady state and not the first calls' warm-up."""
    return int(min(1001, max(5, budget / median_seconds(fn, 3))))


def cases(quick: bool):
    rng = np.random.default_rng(0)
    sizes = (10_000, 1_000_000) if quick else (10_000, 1_000_000, 10_000_000)
    for n in sizes:
        x, y = (np.ascontiguousarray(a, dtype=np.int64) for a in stanza_pos_like(n, seed=0))
        yield f"permutation_test integer N={n:.0e}", lambda x=x, y=y: pairperm.permutation_test(x, y), (x, y)
        yield f"  core summary of x - y N={n:.0e}", lambda x=x, y=y: _core.summarize_paired(x, y), (x, y)
    x, y = (np.ascontiguousarray(a, dtype=np.int64) for a in stanza_pos_like(10_000, seed=0))
    s = _core.summarize_paired(x, y)
    yield "  tilted tail N=1e4 (summary given)", lambda: _core.grouped_pvalue(s, "two-sided"), (x, y)
    xb = (rng.random(1_000_000) < 0.7).astype(np.int64)
    yb = (rng.random(1_000_000) < 0.69).astype(np.int64)
    yield "permutation_test binary N=1e6", lambda: pairperm.permutation_test(xb, yb), (xb, yb)
    xr, yr = rng.normal(size=10_000), rng.normal(size=10_000) + 0.01
    yield "permutation_test real-valued N=1e4", lambda: pairperm.permutation_test(xr, yr), (xr, yr)
    xw, yw = rng.normal(size=100_000), rng.normal(size=100_000) + 0.01
    yield "wilcoxon_test N=1e5", lambda: pairperm.wilcoxon_test(xw, yw), (xw, yw)
    for n in (100_000, 1_000_000):
        xf, yf = ner_like(n, seed=0)
        yield f"f1_test N={n:.0e}", lambda xf=xf, yf=yf: pairperm.f1_test(xf, yf), (xf, yf)
    yield ("permutation_test Monte Carlo K=1e4 N=1e4 (per resample)",
           lambda: pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=10_000, rng=0), (x, y), 10_000)
    hyp = rng.integers(10, 40, 10_000)
    total = np.stack([np.maximum(hyp - k, 0) for k in range(4)], axis=1)
    bleu_a, bleu_b = (np.column_stack([hyp, hyp, rng.binomial(total, q * np.array([0.6, 0.45, 0.33, 0.24])), total])
                      for q in (1.0, 0.95))
    bleu = lambda: pairperm.compare(bleu_a, bleu_b, "bleu", n_resamples=10_000, rng=0)  # noqa: E731
    # Rounds of 10^4 samples are drawn until the interval is narrow enough: time per sample drawn.
    yield ("compare bleu importance sampling N=1e4 (per sample)", bleu, (bleu_a, bleu_b),
           bleu().result.n_resamples)
    systems = {f"s{k}": np.ascontiguousarray(stanza_pos_like(10_000, seed=k)[0], dtype=np.int64) for k in range(20)}
    pairs = 20 * 19 // 2
    yield ("compare_systems 20 systems N=1e4 (per pair)", lambda: pairperm.compare_systems(systems, metric="sum"),
           tuple(systems.values())[:2], pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip N = 10^7")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args()
    rows = []
    warnings.simplefilter("ignore")
    for case in cases(args.quick):
        name, call, arrays = case[:3]
        per = case[3] if len(case) > 3 else 1
        t_call, t_pass = paired_median_seconds(call, one_pass(*arrays), repeats_within(call))
        t_call /= per
        rows.append((name, t_call, t_pass))
    if args.markdown:
        print("| path | time | one pass | multiple |\n|---|---:|---:|---:|")
        for name, t, p in rows:
            print(f"| {name.strip()} | {t * 1e3:.3g} ms | {p * 1e3:.3g} ms | {t / p:.1f}x |")
        return
    print(f"{'path':58s} {'time':>11s} {'one pass':>11s} {'multiple':>9s}")
    for name, t, p in rows:
        print(f"{name:58s} {t * 1e3:9.3f}ms {p * 1e3:9.3f}ms {t / p:8.1f}x")


if __name__ == "__main__":
    main()
