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


def ratio_score_totals(kind: str, counts: tuple, zero: Fraction = Fraction(0)) -> Fraction:
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
        return ratio_score_totals(kind, ta, zero) - ratio_score_totals(kind, tuple(t - x for t, x in zip(total, ta)), zero)

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


# ---------------------------------------------------------------------------------------------
# Brute-force enumeration over all 2^N swap patterns (property tests; N small). Everything
# below works on Python ints and Fractions only, so ties are exact ties.

ALTERNATIVES = ("two-sided", "greater", "less")


def swap_patterns(n: int):
    """All 2^n swap patterns as tuples of 0 (stay) / 1 (swap)."""
    return itertools.product((0, 1), repeat=n)


def rejects(value, observed, alternative: str, centre=0) -> bool:
    """The rejection region (ties count; two-sided about the mean) for one null value, in exact arithmetic.

    Two-sided compares distances from `centre` (the null mean for the sum statistic, 0 for a
    callable statistic, whose two-sided test is ``|h(S)| >= |h_obs|``)."""
    if alternative == "greater":
        return value >= observed
    if alternative == "less":
        return value <= observed
    return abs(value - centre) >= abs(observed - centre)


def pvalue_from_counts(counts: dict, observed, alternative: str, centre=0) -> Fraction:
    """P-value from {value: number of patterns} as listed by brute_force_counts."""
    hits = sum(c for s, c in counts.items() if rejects(s, observed, alternative, centre))
    return Fraction(hits, sum(counts.values()))


def brute_force_pvalue(stay, swap, alternative: str) -> Fraction:
    """P-value of the sum statistic S (1-D) by listing every swap pattern."""
    stay = [int(v) for v in stay]
    swap = [int(v) for v in swap]
    mean = Fraction(sum(stay) + sum(swap), 2)
    return pvalue_from_counts(brute_force_counts(stay, swap), sum(stay), alternative, mean)


def brute_force_cdf(stay, swap, x) -> Fraction:
    """P[S <= x] (x any real, an int, a Fraction or +-inf) by listing every swap pattern."""
    counts = brute_force_counts(stay, swap)
    return Fraction(sum(c for s, c in counts.items() if s <= x), 2 ** len(stay))


def brute_force_stat_pvalue(stay, swap, h, alternative: str) -> Fraction:
    """P-value of a statistic h of the (1-D or m-D) sum S; h maps a tuple of exact numbers
    (Python ints for integer effects, Fractions of the floats for real ones) to an exact
    number, two-sided is ``|h(S)| >= |h_obs|``."""
    stay = [tuple(_exact_number(v) for v in np.atleast_1d(row)) for row in stay]
    swap = [tuple(_exact_number(v) for v in np.atleast_1d(row)) for row in swap]
    m = len(stay[0]) if stay else 1
    h_obs = h(tuple(sum(r[j] for r in stay) for j in range(m)))
    hits = 0
    for pattern in swap_patterns(len(stay)):
        rows = [b if c else a for a, b, c in zip(stay, swap, pattern)]
        hits += rejects(h(tuple(sum(r[j] for r in rows) for j in range(m))), h_obs, alternative)
    return Fraction(hits, 2 ** len(stay))


def _exact_number(v):
    """An array element as an exact Python number: int for integers, the float's exact Fraction otherwise."""
    return int(v) if isinstance(v, (int, np.integer)) else Fraction(float(v))


def sign_flip_pvalue(effects, alternative: str) -> Fraction:
    """Sign-flip test of W = sum(effects) against the 2^N sums of +-effects[n] (null mean 0)."""
    effects = [int(v) for v in effects]
    return brute_force_pvalue(effects, [-e for e in effects], alternative)


def ratio_score(kind: str, tp: int, fp: int, fn: int, beta: Fraction, zero: Fraction) -> Fraction:
    """Micro F-beta / precision / recall of totals, exactly; `zero` when the denominator is 0."""
    if kind == "precision":
        num, den = Fraction(tp), Fraction(tp + fp)
    elif kind == "recall":
        num, den = Fraction(tp), Fraction(tp + fn)
    else:
        b2 = beta * beta
        num, den = (1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp
    return zero if den == 0 else num / den


def brute_force_ratio_pvalue(kind: str, a, b, alternative: str, beta=Fraction(1), zero=Fraction(0)) -> Fraction:
    """P-value of score_A - score_B over all 2^N swaps of whole entries, in Fractions.

    a, b: (N, 3) (tp, fp, fn) or (N, 2) (tp, errors; F1 = tp / (tp + errors / 2)) counts."""
    a = [tuple(int(v) for v in row) for row in a]
    b = [tuple(int(v) for v in row) for row in b]
    width = len(a[0]) if a else 3

    def diff(rows_a, rows_b) -> Fraction:
        ta = [sum(r[j] for r in rows_a) for j in range(width)]
        tb = [sum(r[j] for r in rows_b) for j in range(width)]
        if width == 2:  # 2 tp / (2 tp + errors) is F1 with the errors as fp and fn = 0
            ta, tb = ta + [0], tb + [0]
        return ratio_score(kind, *ta, beta, zero) - ratio_score(kind, *tb, beta, zero)

    observed = diff(a, b)
    hits = 0
    for pattern in swap_patterns(len(a)):
        ra = [v if c else u for u, v, c in zip(a, b, pattern)]
        rb = [u if c else v for u, v, c in zip(a, b, pattern)]
        hits += rejects(diff(ra, rb), observed, alternative)
    return Fraction(hits, 2 ** len(a))


def doubled_midranks_exact(values) -> list[int]:
    """2 x the 1-based midranks of `values` (ties averaged), exact for Fractions/ints."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and values[order[j]] == values[order[i]]:
            j += 1
        for k in range(i, j):  # ranks i+1 .. j share (i + 1 + j) / 2
            out[order[k]] = i + 1 + j
        i = j
    return out


def wilcoxon_reference(x, y, zero_method: str, alternative: str):
    """(p-value, r_plus, r_minus) of the exact signed-rank test conditional on the observed
    ranks: 2^M sign flips of the doubled midranks of the M non-zero differences.

    "wilcox" ranks the non-zero differences only; "pratt" and "zsplit" rank all of them
    (zeros take the lowest ranks) and zeros never move under a flip; "zsplit" reports half
    of the zeros' rank sum in each of r_plus and r_minus."""
    d = [Fraction(u) - Fraction(v) for u, v in zip(x, y)]
    if zero_method == "wilcox":
        d = [v for v in d if v != 0]
    r2 = doubled_midranks_exact([abs(v) for v in d])
    effects = [r if v > 0 else -r for v, r in zip(d, r2) if v != 0]
    zero_r2 = sum(r for v, r in zip(d, r2) if v == 0) if zero_method == "zsplit" else 0
    r_plus = Fraction(sum(r for v, r in zip(d, r2) if v > 0) * 2 + zero_r2, 4)
    r_minus = Fraction(sum(r for v, r in zip(d, r2) if v < 0) * 2 + zero_r2, 4)
    return sign_flip_pvalue(effects, alternative), r_plus, r_minus
