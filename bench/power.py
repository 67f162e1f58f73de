"""Cost of the exact power of McNemar's test and of a sample-size search.

Exact power at n = 10^6 items for a few discordances (the cost grows with the spread of the
number of discordant items, sqrt(n q (1 - q))), and sample_size_paired_binary for a 1-point
and a 0.1-point gain, and for always-disagreeing systems whose power saws in n. Medians of
--repeats calls after one warm-up (bench/timing.py).

    python bench/power.py              # --repeats 21
"""

from __future__ import annotations

import argparse
import functools
import platform

import numpy as np

from pairperm._power import minimum_detectable_effect_paired_binary, power_paired_binary, sample_size_paired_binary
from timing import median_seconds

POWER_CASES = [(10**6, 0.0225, 0.0025), (10**6, 0.055, 0.045), (10**6, 0.26, 0.24)]
SAMPLE_SIZE_CASES = [(0.055, 0.045), (0.0105, 0.0095), (0.7, 0.3)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    for n, p10, p01 in POWER_CASES:
        seconds = median_seconds(functools.partial(power_paired_binary, n, p10, p01), args.repeats)
        print(f"power_paired_binary(n={n}, p10={p10}, p01={p01}): {seconds * 1e3:.2f} ms")
    for p10, p01 in SAMPLE_SIZE_CASES:
        n_star = sample_size_paired_binary(p10, p01)
        seconds = median_seconds(functools.partial(sample_size_paired_binary, p10, p01), args.repeats)
        print(f"sample_size_paired_binary(p10={p10}, p01={p01}) = {n_star}: {seconds * 1e3:.2f} ms")
    seconds = median_seconds(lambda: minimum_detectable_effect_paired_binary(5000, agreement=0.9), args.repeats)
    print(f"minimum_detectable_effect_paired_binary(5000, agreement=0.9): {seconds * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
