"""f1_test / precision_test (method="auto") p-values far in the tails: relative accuracy
1e-9 against exact enumeration in Python integers, and log_pvalue where pvalue underflows."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import pairperm
from pairperm import PrecisionWarning
from reference import exact_ratio_pvalue, log_fraction, rel_err

ALTS = ("two-sided", "greater", "less")
TESTS = {"f1": pairperm.f1_test, "precision": pairperm.precision_test}


def counts3(rng, n, recall_a, recall_b, fp_a, fp_b, max_gold=2):
    gold = rng.integers(0, max_gold + 1, n)
    out = []
    for rec, lam in ((recall_a, fp_a), (recall_b, fp_b)):
        tp = rng.binomial(gold, rec)
        fp = np.minimum(rng.poisson(lam, n), 2)
        out.append(np.stack([tp, fp, gold - tp], axis=1).astype(np.int64))
    return out


def check(kind, a, b, alternative, rel=1e-9):
    ref, _ = exact_ratio_pvalue(kind, a, b, alternative)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)  # never the flat bound
        r = TESTS[kind](a, b, alternative=alternative)
    assert not r.pvalue_is_bound
    assert rel_err(r.pvalue, ref) <= rel, (kind, alternative, r.pvalue, float(ref))
    assert r.log_pvalue == pytest.approx(log_fraction(ref), rel=1e-10, abs=1e-9)
    return ref


# Recall gaps giving p from ~1e-20 to ~1e-100 at these sizes (checked by the assertions below).
DEEP = [(200, 0.95, 0.45, 0), (220, 0.97, 0.3, 1), (240, 0.9, 0.5, 2), (260, 0.99, 0.2, 3)]


@pytest.mark.parametrize("n,ra,rb,seed", DEEP)
def test_f1_deep_tails_against_exact(n, ra, rb, seed):
    rng = np.random.default_rng(900 + seed)
    a, b = counts3(rng, n, ra, rb, 0.3, 0.6)
    refs = [check("f1", a, b, alt) for alt in ALTS]
    assert min(refs) < 1e-19  # the case really is deep in the tail
    # A worse system tested the other way round: the mirrored tails.
    for alt in ALTS:
        check("f1", b, a, alt)


@pytest.mark.parametrize("seed", range(3))
def test_precision_deep_tails_against_exact(seed):
    rng = np.random.default_rng(950 + seed)
    a, b = counts3(rng, 220, 0.8, 0.8, 0.1, 1.2)
    refs = [check("precision", a, b, alt) for alt in ALTS]
    assert min(refs) < 1e-19


@pytest.mark.parametrize("seed", range(3))
def test_tp_errors_form_deep_tails(seed):
    rng = np.random.default_rng(970 + seed)
    n = 200
    a = np.stack([rng.integers(1, 4, n), rng.integers(0, 2, n)], axis=1)
    b = np.stack([rng.integers(0, 3, n), rng.integers(0, 3, n)], axis=1)
    refs = [check("f1", a, b, alt) for alt in ALTS]
    assert min(refs) < 1e-19


def test_moderate_pvalues_still_exact():
    rng = np.random.default_rng(990)
    for _ in range(3):
        a, b = counts3(rng, 150, 0.8, 0.75, 0.3, 0.35)
        for alt in ALTS:
            check("f1", a, b, alt)
            check("precision", a, b, alt)


def test_ties_counted_in_the_tail():
    # Two-sided: the state with every entry swapped has h = -h_obs, an exact tie of |h| far
    # out in the tail (besides any others); exact comparisons must count them all.
    rng = np.random.default_rng(991)
    n = 150
    a = np.stack([rng.integers(1, 3, n), rng.integers(0, 2, n)], axis=1)
    b = np.stack([rng.integers(0, 2, n), rng.integers(0, 3, n)], axis=1)
    ref, ties = exact_ratio_pvalue("f1", a, b, "two-sided")
    assert ties > 0 and ref < 1e-12
    check("f1", a, b, "two-sided")


def test_log_pvalue_when_pvalue_underflows():
    # Two row types of 1500 entries each: p ~ e^-1000 underflows (and the 2-D DP would need
    # ~7e9 multiply-adds); the exact log comes from binomial coefficients over the (j1, j2)
    # grid, with the rejection decided by int64 cross-multiplication.
    c = 1500
    j1 = np.arange(c + 1)[:, None]  # A-wins of type 1 swapped to B
    j2 = np.arange(c + 1)[None, :]  # B's false positives moved to A
    tp_a, fp_a, fn_a = c - j1, j2, j1
    tp_b, fp_b, fn_b = j1, c - j2, c - j1
    num_a, den_a = 2 * tp_a, 2 * tp_a + fp_a + fn_a
    num_b, den_b = 2 * tp_b, 2 * tp_b + fp_b + fn_b
    d = num_a * den_b - num_b * den_a  # h = d / (den_a den_b), dens > 0 here
    e = den_a * den_b
    combs = [math.comb(c, j) for j in range(c + 1)]
    for alt, extra in (("greater", 40), ("two-sided", 40)):
        # Observed: j1 = extra, j2 = extra from the extreme (interior of the support).
        ob1, ob2 = extra, extra
        a_obs = np.array([[1, 0, 0]] * (c - ob1) + [[0, 0, 1]] * ob1 + [[0, 1, 0]] * ob2 + [[0, 0, 0]] * (c - ob2))
        b_obs = np.array([[0, 0, 1]] * (c - ob1) + [[1, 0, 0]] * ob1 + [[0, 0, 0]] * ob2 + [[0, 1, 0]] * (c - ob2))
        # The state grid is the same (each row type swaps independently); shift the indices.
        d_obs, e_obs = d[ob1, ob2], e[ob1, ob2]
        lhs = d * e_obs
        rhs = d_obs * e
        if alt == "greater":
            rej = lhs >= rhs
        else:
            rej = np.abs(lhs) >= abs(d_obs) * e
        # Counting from the observed configuration: state (j1, j2) of the table above is reached
        # from a_obs by some subset; the multiplicity is comb(c, j1) comb(c, j2) either way.
        hits = sum(combs[i] * sum(combs[k] for k in np.flatnonzero(rej[i])) for i in range(c + 1) if rej[i].any())
        ref = Fraction(hits, 2 ** (2 * c))
        r = pairperm.f1_test(a_obs, b_obs, alternative=alt)
        assert r.pvalue == 0.0 or rel_err(r.pvalue, ref) <= 1e-9
        assert log_fraction(ref) < -709  # below the smallest double
        assert r.log_pvalue == pytest.approx(log_fraction(ref), rel=1e-10)


def test_large_n_deep_tail_is_a_value_not_a_bound():
    # N = 10^4: the exact DP is out of reach, so before tilting this was the flat 1e-12 bound.
    rng = np.random.default_rng(993)
    a, b = counts3(rng, 10_000, 0.85, 0.79, 0.15, 0.15, max_gold=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        g = pairperm.f1_test(a, b, alternative="greater")
        l_mirror = pairperm.f1_test(b, a, alternative="less")
        two = pairperm.f1_test(a, b)
        p_prec = pairperm.precision_test(a, b, alternative="greater")
    assert not (g.pvalue_is_bound or two.pvalue_is_bound or p_prec.pvalue_is_bound)
    assert g.pvalue < 1e-15
    # Swapping the systems mirrors the region exactly: the same tail from the other side.
    assert g.pvalue == pytest.approx(l_mirror.pvalue, rel=1e-12)
    # Two-sided adds the (much smaller) opposite tail: just above the one-sided value.
    assert g.pvalue < two.pvalue < 2.0 * g.pvalue
