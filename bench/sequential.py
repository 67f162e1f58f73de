"""Cost of the anytime-valid sequential tests, and how many items they need against a fixed-n test.

Timings (medians of --repeats runs after one warm-up, bench/timing.py): 10^6 paired 0/1 items fed
to SequentialPairedBinary as one vectorised batch (update, and update_path with the log e-value at
every prefix), and as 10^6 per-item Python calls; 10^5 bounded differences to
SequentialPairedBounded in one batch, and one confidence_sequence at that size.

Items to a decision: systems with p10 = 0.15, p01 = 0.10 (a 5-point gain, discordance 0.25),
alpha = 0.05. The fixed-n exact McNemar test with 80% power needs n* items
(sample_size_paired_binary); the sequential test is run on --runs simulated evaluations, stopped
at the first decision or at a cap of 3 n*. Reported: its power by the cap and by n*, the items to a
decision, and, truncated where 80% of the runs have decided (the same power as the fixed-n test),
the mean items it uses.

    python bench/sequential.py              # --repeats 7 --runs 2000
"""

from __future__ import annotations

import argparse
import math
import platform

import numpy as np

from pairperm._power import sample_size_paired_binary
from pairperm._sequential import SequentialPairedBinary, SequentialPairedBounded
from timing import median_seconds


def items_to_decision(p10: float, p01: float, alpha: float, cap: int, runs: int, seed: int) -> np.ndarray:
    """Items fed until the first decision in each run (cap + 1 where there was none by the cap)."""
    rng = np.random.default_rng(seed)
    stops = np.empty(runs, dtype=np.int64)
    for r in range(runs):
        outcome = rng.choice(4, size=cap, p=[p10, p01, 0.5, 1 - p10 - p01 - 0.5])  # A-only, B-only, both, neither
        x = ((outcome == 0) | (outcome == 2)).astype(np.int8)
        y = ((outcome == 1) | (outcome == 2)).astype(np.int8)
        path = SequentialPairedBinary(alpha).update_path(x, y)
        crossed = np.nonzero(path >= math.log(1 / alpha))[0]
        stops[r] = crossed[0] + 1 if crossed.size else cap + 1
    return stops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    rng = np.random.default_rng(0)
    x = (rng.random(10**6) < 0.8).astype(np.int8)
    y = (rng.random(10**6) < 0.78).astype(np.int8)
    xl, yl = x.tolist(), y.tolist()

    def per_item() -> None:
        test = SequentialPairedBinary()
        for a, b in zip(xl, yl):
            test.update(a, b)

    print(f"binary, 10^6 items, one batch update:       "
          f"{median_seconds(lambda: SequentialPairedBinary().update(x, y), args.repeats):.4f} s")
    print(f"binary, 10^6 items, one batch update_path:  "
          f"{median_seconds(lambda: SequentialPairedBinary().update_path(x, y), args.repeats):.4f} s")
    print(f"binary, 10^6 per-item update calls:         {median_seconds(per_item, max(3, args.repeats // 2)):.4f} s")
    d = rng.uniform(-1, 1, 10**5) * 0.9 + 0.05
    dx, dy = np.maximum(d, 0), np.maximum(-d, 0)
    print(f"bounded, 10^5 items, one batch update:      "
          f"{median_seconds(lambda: SequentialPairedBounded().update(dx, dy), args.repeats):.4f} s")
    bounded = SequentialPairedBounded()
    bounded.update(dx, dy)
    print(f"bounded, confidence_sequence at 10^5 items: {median_seconds(bounded.confidence_sequence, args.repeats):.4f} s")

    p10, p01, alpha = 0.15, 0.10, 0.05
    n_fixed = sample_size_paired_binary(p10, p01, power=0.8, alpha=alpha)
    stops = items_to_decision(p10, p01, alpha, 3 * n_fixed, args.runs, seed=1)
    decided = stops <= 3 * n_fixed
    # same power as the fixed-n test: truncate the sequential test at the count by which 80% of
    # the runs have decided; it then uses min(stop, that count) items
    n_80 = int(np.quantile(stops, 0.8, method="higher"))
    print(f"\np10={p10}, p01={p01}, alpha={alpha}: fixed-n exact McNemar with 80% power needs n* = {n_fixed}")
    print(f"sequential, {args.runs} runs monitored after every item, cap 3 n* = {3 * n_fixed}:")
    print(f"  decided by the cap {decided.mean():.3f}, by n* {(stops <= n_fixed).mean():.3f}; "
          f"median items to decision {np.median(stops):.0f}, mean over runs that decided {stops[decided].mean():.0f}")
    print(f"  80% of runs decide within {n_80} items ({n_80 / n_fixed:.2f} n*); truncated there (power 0.8, "
          f"like the fixed-n test) it uses {np.minimum(stops, n_80).mean():.0f} items on average "
          f"({np.minimum(stops, n_80).mean() / n_fixed:.2f} n*)")

if __name__ == "__main__":
    main()
