"""Trusted references for the tests: brute-force enumeration and exact integer arithmetic."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np


def brute_force_counts(stay, swap) -> dict[int, int]:
    """Number of the 2^N swap patterns giving each value of S (N small)."""
    counts: dict[int, int] = {}
    for choice in itertools.product((0, 1), repeat=len(stay)):
        s = sum(int(b if c else a) for a, b, c in zip(stay, swap, choice))
        counts[s] = counts.get(s, 0) + 1
    return counts


def exact_counts(stay, swap) -> tuple[int, list[int], int]:
    """(offset, counts, N): counts[i] patterns give S = offset + i, in Python ints (any N)."""
    stay = [int(v) for v in stay]
    swap = [int(v) for v in swap]
    offset = sum(min(a, b) for a, b in zip(stay, swap))
    counts = np.array([1], dtype=object)
    for a, b in zip(stay, swap):
        k = abs(a - b)
        if k == 0:
            counts = counts * 2
            continue
        new = np.zeros(len(counts) + k, dtype=object)
        new[: len(counts)] += counts
        new[k:] += counts
        counts = new
    return offset, list(counts), len(stay)


def exact_pvalue(stay, swap, alternative: str) -> Fraction:
    """The p-value (ties count; two-sided about the mean) as an exact fraction."""
    offset, counts, n = exact_counts(stay, swap)
    t = sum(int(v) for v in stay)
    mu2 = sum(int(a) + int(b) for a, b in zip(stay, swap))
    hits = 0
    for i, c in enumerate(counts):
        x = offset + i
        if alternative == "greater":
            ok = x >= t
        elif alternative == "less":
            ok = x <= t
        else:
            ok = abs(2 * x - mu2) >= abs(2 * t - mu2)
        if ok:
            hits += c
    return Fraction(hits, 2**n)


def log_fraction(f: Fraction) -> float:
    """Natural log of a positive fraction, exact to float precision even far below 1e-308."""
    if f == 0:
        return -math.inf
    return math.log(f.numerator) - math.log(f.denominator)


def rel_err(approx: float, exact: Fraction) -> float:
    if exact == 0:
        return 0.0 if approx == 0 else math.inf
    return abs(Fraction(approx) - exact) / exact if approx != 0 else 1.0


def paired(x, y):
    d = np.asarray(x, dtype=np.int64) - np.asarray(y, dtype=np.int64)
    return d, -d


def binomial_two_sided(b: int, c: int) -> Fraction:
    """Exact McNemar p-value from the discordant counts: 2 P[Bin(b + c, 1/2) <= min(b, c)], capped at 1."""
    n = b + c
    if n == 0 or b == c:
        return Fraction(1)
    m = min(b, c)
    tail = sum(math.comb(n, i) for i in range(m + 1))
    return min(Fraction(1), Fraction(2 * tail, 2**n))
