"""The paired summary's one-pass route (narrow per-item scores) against the general one
and against exact Python integers: every field, on the edges where the route changes."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import pairperm
from pairperm import _core

FIELDS = ("lo_sum", "observed", "twice_mean", "k_sum", "n_varying", "k_gcd", "k2_sum", "groups")
BLOCK = 2048  # entries the core reads per block (the tests straddle it)


def exact_summary(x: np.ndarray, y: np.ndarray) -> dict:
    """The paired summary in Python integers: stay = x - y, swap = y - x."""
    d = [int(a) - int(b) for a, b in zip(x.tolist(), y.tolist())]
    ks = Counter(2 * abs(v) for v in d if v != 0)
    groups = sorted(ks.items())
    g = 0
    for k, _ in groups:
        g = np.gcd(g, k)
    return {
        "lo_sum": -sum(abs(v) for v in d),
        "observed": sum(d),
        "twice_mean": 0,
        "k_sum": sum(k * c for k, c in groups),
        "n_varying": sum(c for _, c in groups),
        "k_gcd": int(g),
        "k2_sum": float(sum(c * k * k for k, c in groups)),
        "groups": groups,
    }


def fields(s) -> dict:
    return {f: (list(map(tuple, getattr(s, f))) if f == "groups" else getattr(s, f)) for f in FIELDS}


def cases():
    rng = np.random.default_rng(7)
    yield "empty", np.zeros(0, np.int64), np.zeros(0, np.int64)
    yield "one", np.array([3]), np.array([-4])
    for n in (BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 5):
        yield f"binary n={n}", rng.integers(0, 2, n), rng.integers(0, 2, n)
        yield f"below 8 n={n}", rng.integers(0, 8, n), np.zeros(n, np.int64)
    # Bytes are tallied 32 at a time: lengths off that grid, every difference up to 255, and
    # rare large differences at the ends of 32-byte chunks.
    for n in (31, 33, 100):
        yield f"below 4 n={n}", rng.integers(0, 4, n), rng.integers(0, 4, n)
    n = 3 * BLOCK + 37
    y = rng.integers(0, 1000, n)
    yield "every difference to 255", y + rng.integers(-255, 256, n), y
    rare = rng.integers(0, 3, n)
    rare[[31, 32, 63, 1000, BLOCK - 1, BLOCK, n - 1]] = [8, 200, 9, 255, 17, 8, 100]
    yield "rare large differences at chunk ends", rare, np.zeros(n, np.int64)
    n = 2 * BLOCK + 17
    y = rng.integers(0, 30, n)
    yield "geometric differences", y + rng.geometric(0.4, n) * rng.choice([-1, 1], n), y
    # |x - y| = 255 is the widest byte; 256 leaves the one-pass route in a later block.
    wide = np.zeros(n, np.int64)
    wide[BLOCK + 3] = 255
    yield "difference 255", wide, np.zeros(n, np.int64)
    wide = wide.copy()
    wide[BLOCK + 4] = -256
    yield "difference 256 in the second block", wide, np.zeros(n, np.int64)
    # Scores just inside and just outside [-2^29, 2^29) with a small difference.
    for v in (2**29 - 1, -(2**29), 2**29, -(2**29) - 1, 2**40):
        x = rng.integers(0, 3, n)
        x[BLOCK + 9] = v
        y = x.copy()
        y[BLOCK + 9] = v - 5
        y[7] = x[7] + 2
        yield f"magnitude {v}", x, y
    yield "large negative and positive", np.array([2**57, -(2**57), 3]), np.array([-(2**57), 2**57, 0])


@pytest.mark.parametrize("name,x,y", list(cases()), ids=[c[0] for c in cases()])
def test_paired_summary_equals_exact_integers(name, x, y):
    x = np.ascontiguousarray(x, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    got = fields(_core.summarize_paired(x, y))
    assert got == exact_summary(x, y)
    assert got == fields(_core.summarize(x - y, y - x))


def test_pvalue_with_a_difference_past_the_narrow_route_matches_the_materialised_differences():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, 5000)
    y = rng.integers(0, 4, 5000)
    x[4100] = 900  # one wide entry in the third block
    a = pairperm.permutation_test(x, y)
    b = pairperm.structured_test(x - y, y - x)
    assert a.pvalue == b.pvalue and a.statistic == b.statistic


def test_sums_too_large_together_name_the_call_and_the_inputs():
    big = 2**60
    with pytest.raises(ValueError, match=r"^permutation_test: x and y are too large together: .*2\^61"):
        pairperm.permutation_test(np.array([big, big, big]), np.array([0, 0, -big]))
    with pytest.raises(ValueError, match=r"^permutation_test: x\[1\] = .* is too large"):
        pairperm.permutation_test(np.array([0, 2**62]), np.array([0, 0]))
    with pytest.raises(ValueError, match=r"^permutation_test: y\[0\] = .* is too large"):
        pairperm.permutation_test(np.array([0, 1]), np.array([-(2**63), 0]))
