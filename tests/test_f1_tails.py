"""f1_test / precision_test (method="auto") p-values far in the tails: relative accuracy
1e-9 against exact enumeration in Python integers, and log_pvalue where pvalue underflows."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import pairperm
from marks import quick_first
from pairperm import PrecisionWarning, _core
from pairperm._f1 import _ratio_test_iv
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


@pytest.mark.parametrize("n,ra,rb,seed", quick_first(DEEP))
def test_f1_deep_tails_against_exact(n, ra, rb, seed):
    rng = np.random.default_rng(900 + seed)
    a, b = counts3(rng, n, ra, rb, 0.3, 0.6)
    refs = [check("f1", a, b, alt) for alt in ALTS]
    assert min(refs) < 1e-19  # the case really is deep in the tail
    # A worse system tested the other way round: the mirrored tails.
    for alt in ALTS:
        check("f1", b, a, alt)


@pytest.mark.parametrize("seed", quick_first(range(3)))
def test_precision_deep_tails_against_exact(seed):
    rng = np.random.default_rng(950 + seed)
    a, b = counts3(rng, 220, 0.8, 0.8, 0.1, 1.2)
    refs = [check("precision", a, b, alt) for alt in ALTS]
    assert min(refs) < 1e-19


@pytest.mark.parametrize("seed", quick_first(range(3)))
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


# ---------------------------------------------------------------- shapes of the summed law
def tilted_is_certified(kind, a, b, alternative) -> bool:
    """Whether the tilted tails themselves certified the p-value (no dense fallback)."""
    effects, stat, _ = _ratio_test_iv(kind, a, b, alternative, "auto", 1, 0, 1000, 0, 1, "test")
    return _core.ratio_tail_pvalue(effects.summary, stat._args, alternative)[2]


def test_steps_on_a_sublattice_against_exact():
    # Every swap moves (TP_A, FP_A) by (+-1, +-1) or (+-2, 0): the states keep one parity, no
    # two steps span Z^2, and the characteristic function peaks again at the half-period.
    rng = np.random.default_rng(994)
    kinds = [([1, 1, 0], [0, 0, 1]), ([1, 0, 0], [0, 1, 1]), ([2, 0, 0], [0, 0, 2]), ([1, 0, 1], [1, 0, 1])]
    good = rng.choice(4, 240, p=[0.45, 0.2, 0.25, 0.1])
    a = np.array([kinds[k][0] for k in good])
    b = np.array([kinds[k][1] for k in good])
    flip = rng.random(240) < 0.2  # the better system is A
    a[flip], b[flip] = b[flip].copy(), a[flip].copy()
    refs = [check(kind, a, b, alt) for kind in TESTS for alt in ALTS]
    assert min(refs) < 1e-15
    assert all(tilted_is_certified(kind, a, b, alt) for kind in TESTS for alt in ALTS)


@pytest.mark.parametrize("kind", ["f1", "precision"])
def test_one_coordinate_constant_against_exact(kind):
    # False positives equal in both systems on every entry: FP_A never moves and the law is
    # one-dimensional inside the 2-D statistic.
    rng = np.random.default_rng(995)
    a, b = counts3(rng, 240, 0.95, 0.55, 0.5, 0.5)
    b[:, 1] = a[:, 1]
    refs = [check(kind, a, b, alt) for alt in ALTS]
    assert min(refs) < 1e-15
    assert all(tilted_is_certified(kind, a, b, alt) for alt in ALTS)


def two_type_counts(c: int, ob1: int, ob2: int):
    """c entries where A finds the one gold entity and B misses it, except ob1 of them the
    other way round, and c entries where B has a false positive and A not, except ob2: under
    the null, the states are (j1, j2) with j1, j2 independent Binomial(c, 1/2)."""
    a = np.zeros((2 * c, 3), dtype=np.int64)
    b = np.zeros((2 * c, 3), dtype=np.int64)
    a[:c] = [1, 0, 0]
    b[:c] = [0, 0, 1]
    a[:ob1], b[:ob1] = [0, 0, 1], [1, 0, 0]
    b[c:, 1] = 1
    a[c:c + ob2, 1], b[c:c + ob2, 1] = 1, 0
    return a, b


def two_type_log_pvalue(c: int, ob1: int, ob2: int, alternative: str) -> float:
    """log P under the null by rows: for each j1, F1_A - F1_B falls as j2 grows, so the tail's
    j2 form one interval whose end is found by bisection in exact integers (Python ints,
    all rows at once); its mass is a binomial tail (scipy). Rows beyond 40 standard
    deviations are negligible."""
    from scipy.special import logsumexp
    from scipy.stats import binom

    def h(j1, j2):  # (numerator, denominator > 0) of F1_A - F1_B in state (j1, j2)
        na, da, nb, db = 2 * (c - j1), 2 * c - j1 + j2, 2 * j1, 2 * c + j1 - j2
        return na * db - nb * da, da * db

    p_num, p_den = h(ob1, ob2)
    sd = math.sqrt(c) / 2
    rows = np.arange(max(0, int(c / 2 - 40 * sd)), min(c, int(c / 2 + 40 * sd)) + 1).astype(object)

    def bisect(num, upper):
        """Per row, the largest j2 with h >= num / p_den (upper) or the smallest with h <= it."""
        lo = np.full(len(rows), -1 if upper else 0, dtype=object)
        hi = np.full(len(rows), c if upper else c + 1, dtype=object)
        while (lo < hi).any():
            mid = (lo + hi + (1 if upper else 0)) // 2
            hn, hd = h(rows, mid)
            ok = hn * p_den >= num * hd if upper else hn * p_den <= num * hd
            lo, hi = (np.where(ok, mid, lo), np.where(ok, hi, mid - 1)) if upper else \
                     (np.where(ok, lo, mid + 1), np.where(ok, mid, hi))
        return lo.astype(np.int64)

    lp1 = binom.logpmf(rows.astype(np.int64), c, 0.5)
    terms = [np.array([-np.inf])]
    if alternative in ("greater", "two-sided"):
        end = bisect(abs(p_num) if alternative == "two-sided" else p_num, True)
        terms.append((lp1 + binom.logcdf(end, c, 0.5))[end >= 0])
    if alternative in ("less", "two-sided"):
        start = bisect(-abs(p_num) if alternative == "two-sided" else p_num, False)
        terms.append((lp1 + binom.logsf(start - 1, c, 0.5))[start <= c])
    return float(logsumexp(np.concatenate(terms)))


@pytest.mark.parametrize("offset_sd", quick_first([1.5, 5.0, 12.0]))
def test_a_million_entries_against_binomial_tails(offset_sd):
    # N = 10^6: far beyond the dense 2-D box (~10^4 x 10^4 states at 1e-40).
    c = 500_000
    ob = int(c / 2 - offset_sd * math.sqrt(c) / 2)
    a, b = two_type_counts(c, ob, ob)
    for alt in ALTS:
        ref = two_type_log_pvalue(c, ob, ob, alt)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrecisionWarning)
            r = pairperm.f1_test(a, b, alternative=alt)
        assert r.engine == "grouped" and not r.pvalue_is_bound
        assert r.log_pvalue == pytest.approx(ref, rel=1e-9, abs=1e-9), alt
        assert tilted_is_certified("f1", a, b, alt)


def test_a_region_no_single_tilt_certifies_is_refused_quickly():
    # Precision 0.1 vs 0.3 false positives per sentence at N = 10^6 (p ~ e^-48000): the
    # region's edge runs almost along the tilted law's contours, so terms far from the
    # dominating point keep mattering and one tilt cannot certify them; the dense 2-D box
    # (~10^8 states) is beyond "auto". A clear error, not a bound after minutes.
    rng = np.random.default_rng(996)
    a, b = counts3(rng, 1_000_000, 0.85, 0.85, 0.1, 0.3, max_gold=3)
    with pytest.raises(pairperm.SupportTooLargeError, match="no single tilt.*monte_carlo"):
        pairperm.precision_test(a, b, alternative="greater")


@pytest.mark.parametrize("trials", quick_first([15, 100]))
def test_random_affine_ratios_against_the_exact_dp(trials):
    # Differences of two arbitrary affine ratios of a 2-D (or effectively 1-D) sum: every
    # certified tilted p-value matches the exact DP; the uncertified ones (the caller falls
    # back to the dense distribution) stay few. Near the mean each tail is summed untilted,
    # and a tail too small to resolve against round-off, or with no state in its box, is
    # bounded and weighed against the other instead of forcing the fallback.
    rng = np.random.default_rng(1)
    runs = uncertified = 0
    for _ in range(trials):
        n = int(rng.integers(20, 251))
        stay, swap = rng.integers(-2, 3, (n, 2)), rng.integers(-2, 3, (n, 2))
        shape = rng.integers(0, 5)
        if shape == 0:
            stay[:, 1] = swap[:, 1] = 0
        elif shape == 1:
            stay[:, 0] = swap[:, 0] = 3
        num = [tuple(int(v) for v in (rng.integers(-5, 6), rng.integers(-3, 4), rng.integers(-3, 4))) for _ in range(2)]
        den = [(5000, int(rng.integers(-3, 4)), int(rng.integers(-3, 4))) for _ in range(2)]
        x, y = (int(v) for v in stay.sum(0))
        an, ad, bn, bd = (k[0] + k[1] * x + k[2] * y for k in (num[0], den[0], num[1], den[1]))
        stat = _core.RatioStatistic(num[0], den[0], num[1], den[1], (0, 1), (an * bd - bn * ad, ad * bd))
        offset, pmf = _core.convolve_dp_multi(stay, swap)[:2]
        summary = _core.summarize_multi(stay, swap)
        for alt in ALTS:
            exact, log_exact = _core.ratio_pvalue(offset, pmf, stat, alt)
            _p, log_p, certified = _core.ratio_tail_pvalue(summary, stat, alt)
            runs += 1
            uncertified += not certified
            if certified and exact > 1e-280:
                assert log_p == pytest.approx(log_exact, abs=1e-8), (alt, exact)
    assert uncertified <= 0.06 * runs, uncertified
