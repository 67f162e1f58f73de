"""Cost of simulated power: 1,000 replicates at n = 2,000 items, each an exact paired test.

Accuracy (0/1 pilot: each replicate runs the exact McNemar test) and a real-valued mean (each
replicate runs the real-valued permutation test with its relative error bar), from a pilot of
2,000 items, with and without a target delta (the shift of y) for the mean. Medians of --repeats
calls after one warm-up (bench/timing.py); per-replicate cost in brackets.

    python bench/simulated_power.py              # --repeats 3
"""

from __future__ import annotations

import argparse
import functools
import platform
import warnings

import numpy as np

from pairperm._errors import PrecisionWarning
from pairperm._simulated_power import simulated_power
from timing import median_seconds

N_ITEMS = 2000
N_SIMULATIONS = 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    pilot = np.random.default_rng(0)
    correct_a = (pilot.random(N_ITEMS) < 0.80).astype(np.int64)
    correct_b = np.where(pilot.random(N_ITEMS) < 0.9, correct_a, 1 - correct_a)
    real_a = pilot.normal(0.60, 0.15, N_ITEMS)
    real_b = real_a - pilot.normal(0.01, 0.1, N_ITEMS)
    cases = [
        ("accuracy", correct_a, correct_b, "accuracy", None),
        ("mean", real_a, real_b, "mean", None),
        ("mean, delta=0.005", real_a, real_b, "mean", 0.005),
    ]
    for label, x, y, metric, delta in cases:
        run = functools.partial(simulated_power, x, y, metric=metric, n=N_ITEMS, delta=delta,
                                n_simulations=N_SIMULATIONS, rng=1)
        with warnings.catch_warnings():
            # The timing is the point here, not whether the normal approximation agrees.
            warnings.simplefilter("ignore", PrecisionWarning)
            seconds = median_seconds(run, args.repeats)
            power = run().power
        print(f"{label}: {N_SIMULATIONS} replicates at n={N_ITEMS}: {seconds:.2f} s "
              f"({seconds / N_SIMULATIONS * 1e3:.2f} ms per replicate), power {power:.3f}")


if __name__ == "__main__":
    main()
