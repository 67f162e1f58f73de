"""Inputs with a few very wide effects among small ones: the support is a handful of narrow
bumps separated by huge gaps. The grouped engine must still meet the 1e-9 relative target."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pairperm
from marks import quick_first
from reference import exact_pvalue_sparse, log_fraction, rel_err

ALTS = ("two-sided", "greater", "less")


@pytest.mark.parametrize("alternative", ALTS)
def test_single_outlier_reported_case(alternative):
    stay = [-2, 2, 3, 1, 1, 0, 0, -3, 3, -2, 0]
    swap = [3, 1, 2, 2, 30000000, 0, 1, 2, 3, 4, 4]
    ref = exact_pvalue_sparse(stay, swap, alternative)
    r = pairperm.structured_test(stay, swap, alternative=alternative)
    assert rel_err(r.pvalue, ref) <= 1e-9
    assert r.log_pvalue == pytest.approx(log_fraction(ref), rel=1e-9, abs=1e-12)


def random_wide(rng, n_small, n_wide, wide_scale):
    stay = rng.integers(-3, 4, n_small + n_wide)
    swap = rng.integers(-3, 4, n_small + n_wide)
    idx = rng.choice(n_small + n_wide, n_wide, replace=False)
    for i in idx:
        mag = int(rng.integers(wide_scale // 10, wide_scale + 1))
        if rng.random() < 0.5:
            swap[i] = stay[i] + mag * (1 if rng.random() < 0.5 else -1)
        else:  # the observed side carries the outlier
            stay[i] = swap[i] + mag * (1 if rng.random() < 0.5 else -1)
    return stay.astype(np.int64), swap.astype(np.int64)


@pytest.mark.parametrize("seed", range(24))
def test_fuzz_wide_outliers_against_exact(seed):
    rng = np.random.default_rng(5000 + seed)
    n_small = int(rng.integers(3, 120))
    n_wide = int(rng.integers(1, 5))
    scale = int(10 ** rng.integers(5, 9))
    stay, swap = random_wide(rng, n_small, n_wide, scale)
    for alt in ALTS:
        ref = exact_pvalue_sparse(stay, swap, alt)
        r = pairperm.structured_test(stay, swap, alternative=alt)
        assert rel_err(r.pvalue, ref) <= 1e-9, (alt, r.pvalue, float(ref))


@pytest.mark.parametrize("seed", quick_first(range(6), quick=2))
def test_wide_outliers_with_tiny_pvalues(seed):
    # A strongly shifted bulk (p far below 1e-12) plus a few wide entries: relative
    # accuracy must hold in the deep tail too, and log_pvalue must match the exact log.
    rng = np.random.default_rng(6000 + seed)
    n = 150
    stay = rng.integers(0, 4, n).astype(np.int64)
    swap = -stay + rng.integers(-1, 1, n)
    for i in range(3):
        swap[i] = stay[i] + int(rng.integers(10**5, 10**8)) * (1 if i % 2 else -1)
    for alt in ALTS:
        ref = exact_pvalue_sparse(stay, swap, alt)
        r = pairperm.structured_test(stay, swap, alternative=alt)
        assert rel_err(r.pvalue, ref) <= 1e-9, (alt, r.pvalue, float(ref))
        if ref > 0:
            assert r.log_pvalue == pytest.approx(log_fraction(ref), rel=1e-10, abs=1e-12)


def test_wide_groups_with_shared_factor_in_the_bulk():
    # The small effects are all even while the whole law has gcd 1 (the outlier is odd):
    # the conditioned narrow law must be reduced by its own factor.
    stay = np.array([2, -4, 6, 2, 4, -2, 0, 2, 4, 6, 0, 8, 1], dtype=np.int64)
    swap = np.array([-2, 4, -6, 0, -4, 2, 2, -2, 0, -6, 4, 0, 12345679], dtype=np.int64)
    for alt in ALTS:
        ref = exact_pvalue_sparse(stay, swap, alt)
        r = pairperm.structured_test(stay, swap, alternative=alt)
        assert rel_err(r.pvalue, ref) <= 1e-9


@pytest.mark.parametrize("alternative", ALTS)
def test_permutation_test_with_wide_score_differences(alternative):
    rng = np.random.default_rng(77)
    x = rng.integers(0, 5, 60)
    y = rng.integers(0, 5, 60)
    x[3] += 40_000_000
    y[17] += 7_000_001
    d = (x - y).astype(np.int64)
    ref = exact_pvalue_sparse(d, -d, alternative)
    r = pairperm.permutation_test(x, y, alternative=alternative)
    assert rel_err(r.pvalue, ref) <= 1e-9
    assert math.isfinite(r.log_pvalue)
