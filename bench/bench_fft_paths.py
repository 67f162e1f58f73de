"""Wall time of the FFT-based paths of a compiled pairperm._core (convolve_fft, the grouped
engine's inverse FFT, the 2-D grouped engine), to compare builds side by side, e.g. before and
after a change to FFT plan caching:

    python bench/bench_fft_paths.py                      # the pairperm on sys.path
    python bench/bench_fft_paths.py /path/to/dir/with/_core.so
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


def main():
    core = load_core(sys.argv[1] if len(sys.argv) > 1 else None)
    rng = np.random.default_rng(2022)
    cases = []
    for n in (1_000, 10_000):
        d = rng.integers(-20, 21, n).astype(np.int64)
        cases.append((f"convolve_fft N={n}", lambda d=d: core.convolve_fft(d, -d), 21))
    for n in (10_000, 1_000_000):
        s = core.summarize(*(lambda d: (d, -d))(rng.integers(-20, 21, n).astype(np.int64)))
        cases.append((f"grouped_distribution N={n}", lambda s=s: core.grouped_distribution(s), 21))
        cases.append((f"grouped_pvalue N={n}", lambda s=s: core.grouped_pvalue(s, "greater"), 21))
    for n in (1_000, 10_000):
        stay = rng.integers(0, 4, (n, 2)).astype(np.int64)
        swap = rng.integers(0, 4, (n, 2)).astype(np.int64)
        m = core.summarize_multi(stay, swap)
        cases.append((f"grouped_distribution_multi 2-D N={n}", lambda m=m: core.grouped_distribution_multi(m), 11))
    for name, fn, repeats in cases:
        fn()  # warm-up (plans, page faults)
        print(f"{name:40s} {median_ms(fn, repeats):9.3f} ms")


if __name__ == "__main__":
    main()
