"""Wall time of the FFT-based paths of a compiled pairperm._core (convolve_fft, the grouped
engine's inverse FFT, the 2-D grouped engine), to compare builds side by side, e.g. before and
after a change to FFT plan caching. Builds are timed in interleaved rounds so that load on a
shared machine hits them alike; each cell is the median over rounds of per-round medians.

    python bench/bench_fft_paths.py                          # the pairperm on sys.path
    python bench/bench_fft_paths.py DIR_A DIR_B              # directories holding a _core*.so
"""
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def load_core(directory):
    if directory is None:
        from pairperm import _core
        return _core
    path = next(Path(directory).glob("_core*.so"))
    spec = importlib.util.spec_from_file_location("_core", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_ms(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def cases(core, rng):
    out = []
    for n in (1_000, 10_000):
        d = rng.integers(-20, 21, n).astype(np.int64)
        out.append((f"convolve_fft N={n}", lambda d=d: core.convolve_fft(d, -d), 15))
    for n in (10_000, 1_000_000):
        d = rng.integers(-20, 21, n).astype(np.int64)
        s = core.summarize(d, -d)
        out.append((f"grouped_distribution N={n}", lambda s=s: core.grouped_distribution(s), 15))
        out.append((f"grouped_pvalue N={n}", lambda s=s: core.grouped_pvalue(s, "greater"), 15))
    for n in (1_000, 10_000):
        stay = rng.integers(0, 4, (n, 2)).astype(np.int64)
        swap = rng.integers(0, 4, (n, 2)).astype(np.int64)
        m = core.summarize_multi(stay, swap)
        out.append((f"grouped_distribution_multi 2-D N={n}", lambda m=m: core.grouped_distribution_multi(m), 7))
    return out


def main(rounds=3):
    dirs = sys.argv[1:] or [None]
    cores = [load_core(d) for d in dirs]
    per_core = [cases(core, np.random.default_rng(2022)) for core in cores]
    header = "".join(f"{(d or 'installed')[-28:]:>30s}" for d in dirs)
    print(f"{'median ms':40s}{header}")
    for i, (name, _, repeats) in enumerate(per_core[0]):
        for table in per_core:
            table[i][1]()  # warm-up (plans, page faults)
        results = [[] for _ in cores]
        for _ in range(rounds):
            for c, table in enumerate(per_core):
                results[c].append(median_ms(table[i][1], repeats))
        print(f"{name:40s}" + "".join(f"{statistics.median(r):30.3f}" for r in results), flush=True)


if __name__ == "__main__":
    main()
