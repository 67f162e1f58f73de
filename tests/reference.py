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
    """SPEC §1's p-value as an exact fraction."""
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


def exact_pvalue_sparse(stay, swap, alternative: str) -> Fraction:
    """exact_pvalue over a dict of reachable sums: for supports with huge gaps (wide effects)."""
    counts = {0: 1}
    for a, b in zip(stay, swap):
        a, b = int(a), int(b)
        nxt: dict[int, int] = {}
        for s, c in counts.items():
            for v in (a, b):
                nxt[s + v] = nxt.get(s + v, 0) + c
        counts = nxt
    t = sum(int(v) for v in stay)
    mu2 = sum(int(a) + int(b) for a, b in zip(stay, swap))
    if alternative == "greater":
        hits = sum(c for x, c in counts.items() if x >= t)
    elif alternative == "less":
        hits = sum(c for x, c in counts.items() if x <= t)
    else:
        hits = sum(c for x, c in counts.items() if abs(2 * x - mu2) >= abs(2 * t - mu2))
    return Fraction(hits, 2 ** len(stay))


def ratio_state_counts(a, b) -> tuple[dict, int]:
    """Number of swap subsets giving each total of system A's count columns (Python ints).

    Entries with the same (b - a) row form one group: j of its c entries swapped adds
    j * (b - a) with multiplicity comb(c, j). Returns ({totals_of_A: count}, N)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    base = tuple(int(v) for v in a.sum(0))
    groups: dict = {}
    fixed = 0  # entries whose swap changes nothing: both choices give the same state
    for ra, rb in zip(a.tolist(), b.tolist()):
        d = tuple(y - x for x, y in zip(ra, rb))
        if any(d):
            groups[d] = groups.get(d, 0) + 1
        else:
            fixed += 1
    states = {base: 2**fixed}
    for d, c in groups.items():
        combs = [math.comb(c, j) for j in range(c + 1)]
        nxt: dict = {}
        for s, w in states.items():
            for j, cj in enumerate(combs):
                key = tuple(x + j * y for x, y in zip(s, d))
                nxt[key] = nxt.get(key, 0) + w * cj
        states = nxt
    return states, a.shape[0]


def ratio_score(kind: str, counts: tuple, zero: Fraction = Fraction(0)) -> Fraction:
    """scikit-learn's micro scores from totals: (tp, fp, fn) or the reference (tp, errors) form."""
    if len(counts) == 2:
        tp, err = counts
        num, den = 2 * tp, 2 * tp + err
    elif kind == "precision":
        tp, fp, _ = counts
        num, den = tp, tp + fp
    else:
        tp, fp, fn = counts
        num, den = 2 * tp, 2 * tp + fp + fn
    return zero if den == 0 else Fraction(num, den)


def exact_ratio_pvalue(kind: str, a, b, alternative: str, zero: Fraction = Fraction(0)) -> tuple[Fraction, int]:
    """Exact p-value of score_A - score_B (F1 or precision) and the number of tied states
    other than the observed one, by exact enumeration of the grouped states."""
    states, n = ratio_state_counts(a, b)
    total = tuple(int(v) for v in (np.asarray(a) + np.asarray(b)).sum(0))
    obs_a = tuple(int(v) for v in np.asarray(a).sum(0))

    def h(ta):
        return ratio_score(kind, ta, zero) - ratio_score(kind, tuple(t - x for t, x in zip(total, ta)), zero)

    h_obs = h(obs_a)
    hits, ties = 0, 0
    for s, w in states.items():
        v = h(s)
        if alternative == "greater":
            ok = v >= h_obs
        elif alternative == "less":
            ok = v <= h_obs
        else:
            ok = abs(v) >= abs(h_obs)
        hits += w if ok else 0
        tied = abs(v) == abs(h_obs) if alternative == "two-sided" else v == h_obs
        ties += 1 if (tied and s != obs_a) else 0
    return Fraction(hits, 2**n), ties
