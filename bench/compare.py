"""Side-by-side timing of pairperm's methods against two baselines (the papers' runtime experiment).

Baselines implemented here:
  * numpy-mc-K   vectorised NumPy Monte Carlo (Alg. 1), K resamples, blocked bit matrices
  * scipy-tree   the papers' Alg. 4 with scipy.signal.fftconvolve up a balanced tree

Every timing is the median of --repeats full Python calls on the papers' experiment data
(pairperm.datasets.stanza_pos_like). Writes Figure 1 (runtime vs N) as a PNG when
matplotlib is installed (pip install ".[plot]").

    python bench/compare.py                 # N = 10^3 ... 10^7
    python bench/compare.py --max-n 100000 --repeats 3
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import platform
import sys
from pathlib import Path

import numpy as np

import pairperm
from pairperm.datasets import stanza_pos_like
from timing import median_seconds

HERE = Path(__file__).resolve().parent


def numpy_monte_carlo(x, y, k, seed=0, block=1000):
    """Vectorised Monte Carlo baseline: p = (1 + #{|S*| >= |T|}) / (1 + K)."""
    d = (np.asarray(x) - np.asarray(y)).astype(np.float64)
    t = abs(d.sum())
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, k, block):
        b = min(block, k - start)
        signs = rng.integers(0, 2, size=(b, d.size), dtype=np.int8) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d) >= t))
    return (1 + hits) / (1 + k)



def _numpy_mc_case(x, y, k):
    return lambda: numpy_monte_carlo(x, y, k)

def scipy_fft_tree(x, y):
    """The papers' Alg. 4 with scipy.signal.fftconvolve: two-sided exact p (absolute-accuracy)."""
    from scipy.signal import fftconvolve

    d = np.asarray(x, dtype=np.int64) - np.asarray(y, dtype=np.int64)
    k = 2 * np.abs(d[d != 0])
    level = []
    for kk in k:
        leaf = np.zeros(kk + 1)
        leaf[0] = leaf[-1] = 0.5
        level.append(leaf)
    if not level:
        return 1.0
    while len(level) > 1:
        nxt = [np.maximum(fftconvolve(level[i], level[i + 1]), 0.0) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    pmf = level[0]
    support = np.arange(pmf.size) - np.abs(d).sum()
    return float(pmf[np.abs(support) >= abs(d.sum())].sum())


def methods_for(n):
    """(label, callable factory, largest N it is run at) for every method."""
    return [
        ("auto", lambda x, y: lambda: pairperm.permutation_test(x, y), 10**7),
        ("fft", lambda x, y: lambda: pairperm.permutation_test(x, y, method="fft"), 10**5),
        ("dp", lambda x, y: lambda: pairperm.permutation_test(x, y, method="dp"), 10**4),
        (
            "monte_carlo-20k",
            lambda x, y: lambda: pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=20_000, rng=0),
            10**5,
        ),
        ("scipy-tree", lambda x, y: lambda: scipy_fft_tree(x, y), 10**5),
    ] + [
        (f"numpy-mc-{k // 1000}k", functools.partial(_numpy_mc_case, k=k), 10**4)
        for k in (5_000, 10_000, 20_000, 40_000)
    ]


def extra_cases():
    """Benchmarks contributed by the other areas (bench/cases_*.py expose cases())."""
    out = []
    for path in sorted(HERE.glob("cases_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out += list(mod.cases())
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-n", type=int, default=10**7)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--png", type=Path, default=HERE / "figure1.png")
    ap.add_argument("--no-extra", action="store_true", help="skip the cases_*.py cases")
    args = ap.parse_args(argv)

    has_scipy = importlib.util.find_spec("scipy") is not None
    sizes = [n for n in (10**3, 10**4, 10**5, 10**6, 10**7) if n <= args.max_n]
    print(f"# pairperm {pairperm.__version__} on {platform.machine()} {platform.processor() or ''}, "
          f"Python {platform.python_version()}, NumPy {np.__version__}; median of {args.repeats} runs, seconds")
    table = {}
    for n in sizes:
        x, y = stanza_pos_like(n, seed=2022)
        for label, factory, max_n in methods_for(n):
            if n > max_n or (label == "scipy-tree" and not has_scipy):
                continue
            reps = args.repeats if n <= 10**6 else max(3, args.repeats // 2)
            table[(label, n)] = median_seconds(factory(x, y), reps)
    labels = [m[0] for m in methods_for(0)]
    header = f"{'method':<18}" + "".join(f"{'N=' + format(n, '.0e'):>12}" for n in sizes)
    print(header)
    for label in labels:
        row = [table.get((label, n)) for n in sizes]
        if all(v is None for v in row):
            continue
        print(f"{label:<18}" + "".join(f"{v:12.3e}" if v is not None else f"{'-':>12}" for v in row))
    print("\n# speed-up of auto over each method (same N, same run)")
    print(header)
    for label in labels[1:]:
        row = [table[(label, n)] / table[("auto", n)] if (label, n) in table else None for n in sizes]
        if all(v is None for v in row):
            continue
        print(f"{label:<18}" + "".join(f"{v:11.0f}x" if v is not None else f"{'-':>12}" for v in row))

    if not args.no_extra:
        extras = extra_cases()
        if extras:
            print("\n# other tests (bench/cases_*.py), median seconds")
            for label, fn in extras:
                print(f"{label:<52}{median_seconds(fn, args.repeats):12.3e}")

    if importlib.util.find_spec("matplotlib") is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for label in labels:
            pts = [(n, table[(label, n)]) for n in sizes if (label, n) in table]
            if pts:
                ax.loglog(*zip(*pts), marker="o", label=label)
        ax.set_xlabel("N (sentences)")
        ax.set_ylabel("runtime of one test (s, median)")
        ax.set_title("Paired-permutation test runtime (papers' Fig. 1 setting)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
        print(f"\nwrote {args.png}")
    else:
        print("\n(matplotlib not installed: no figure; pip install '.[plot]')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
