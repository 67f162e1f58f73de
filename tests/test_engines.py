"""The three engines against brute-force enumeration and exact integer arithmetic."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import pairperm
from pairperm import _core
from reference import brute_force_counts, exact_counts


def dense(dist, lo: int, size: int) -> np.ndarray:
    out = np.zeros(size)
    start = dist.offset - lo
    out[start : start + dist.pmf.size] = dist.pmf
    return out


def brute_pmf(stay, swap):
    counts = brute_force_counts(stay, swap)
    n = len(stay)
    lo, hi = min(counts), max(counts)
    pmf = np.zeros(hi - lo + 1)
    for v, c in counts.items():
        pmf[v - lo] = c / 2**n
    return lo, pmf


@pytest.mark.parametrize("seed", range(12))
def test_small_cases_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 15))
    # Negative, asymmetric local effects (stay != -swap) and some ties (stay == swap).
    stay = rng.integers(-7, 8, n)
    swap = rng.integers(-7, 8, n)
    ties = rng.random(n) < 0.2
    swap[ties] = stay[ties]
    lo, ref = brute_pmf(stay, swap)

    dp = pairperm.convolve_dp(stay, swap)
    assert dp.offset <= lo
    assert dp.offset == lo and dp.pmf.size == ref.size
    got = dp.pmf
    nz = ref > 0
    assert np.all(np.abs(got[nz] / ref[nz] - 1) <= 1e-12)
    assert np.all(got[~nz] == 0)

    for dist in (pairperm.convolve_fft(stay, swap), pairperm.null_distribution(stay, swap)):
        span = max(dist.offset + dist.pmf.size, lo + ref.size) - min(dist.offset, lo)
        base = min(dist.offset, lo)
        r = np.zeros(span)
        r[lo - base : lo - base + ref.size] = ref
        assert np.max(np.abs(dense(dist, base, span) - r)) <= 1e-12
        assert dist.truncated_mass == 0.0  # small supports are never cut


def test_engines_match_exact_integer_arithmetic_hundreds():
    rng = np.random.default_rng(7)
    n = 300
    stay = rng.integers(-20, 21, n)
    swap = np.where(rng.random(n) < 0.5, -stay, rng.integers(-20, 21, n))
    offset, counts, nn = exact_counts(stay, swap)
    exact = np.array([float(Fraction(c, 2**nn)) for c in counts])

    dp = pairperm.convolve_dp(stay, swap)
    assert dp.offset == offset and dp.pmf.size == len(counts)
    big = exact > 1e-290  # below, float64 itself has no relative precision left
    assert np.max(np.abs(dp.pmf[big] / exact[big] - 1)) <= 1e-12
    assert np.all(dp.pmf[exact == 0] == 0)

    fft = pairperm.convolve_fft(stay, swap)
    assert fft.offset == offset and fft.pmf.size == len(counts)
    assert np.max(np.abs(fft.pmf - exact)) <= 1e-12

    auto = pairperm.null_distribution(stay, swap, method="auto")
    r = np.zeros(len(counts))
    r[auto.offset - offset : auto.offset - offset + auto.pmf.size] = auto.pmf
    assert np.max(np.abs(r - exact)) <= 1e-12
    # The certified window may cut only what the bound covers.
    outside = exact.sum() - exact[auto.offset - offset : auto.offset - offset + auto.pmf.size].sum()
    assert outside <= max(auto.truncated_mass, 1e-300)
    assert auto.truncated_mass <= 1e-320


def test_grouped_truncation_certificate_on_a_wide_support():
    # Support width 2*10^5 + 1, certified window ~ 38 sigma: the engine must cut and say so.
    n = 100_000
    stay = np.ones(n, dtype=np.int64)
    swap = -stay
    d = pairperm.null_distribution(stay, swap)
    assert 0 < d.truncated_mass <= 1e-320
    assert d.pmf.size < 2 * n + 1
    # Binomial(n, 1/2) on the lattice 2: compare the window with the stable binomial pmf.
    i = np.arange(d.pmf.size)
    on_lattice = (d.offset + i + n) % 2 == 0
    assert np.all(d.pmf[~on_lattice] == 0)
    j = (d.offset + i[on_lattice] + n) // 2
    ref = pytest.importorskip("scipy.stats").binom.pmf(j, n, 0.5)
    assert np.max(np.abs(d.pmf[on_lattice] - ref)) <= 1e-13
    assert abs(d.pmf.sum() - 1) <= 1e-12


def test_all_ties_and_empty_give_a_point_mass():
    for stay, swap in (([], []), ([3, -1, 2], [3, -1, 2])):
        for method in ("auto", "dp", "fft"):
            d = pairperm.null_distribution(stay, swap, method=method)
            assert d.pmf.tolist() == [1.0]
            assert d.offset == sum(stay)


def test_distribution_object_helpers():
    d = pairperm.convolve_dp([2, 1, 0, 3], [-2, -1, 0, 1])
    assert d.support.tolist() == list(range(d.offset, d.offset + d.pmf.size))
    assert d.support.dtype == np.int64
    xs = np.arange(d.offset - 2, d.offset + d.pmf.size + 2)
    cdf = np.array([d.pmf[: max(0, x - d.offset + 1)].sum() for x in xs])
    assert np.allclose(d.cdf(xs), cdf, rtol=0, atol=1e-15)
    assert np.allclose(d.sf(xs), 1 - cdf, rtol=0, atol=1e-15)
    assert isinstance(d.cdf(d.offset), float)
    assert abs(d.mean() - (sum([2, 1, 0, 3]) + sum([-2, -1, 0, 1])) / 2) < 1e-12
    with pytest.raises(ValueError):
        d.pmf[0] = 1.0  # read-only
    with pytest.raises(AttributeError):
        d.offset = 3  # frozen
    assert "Distribution(offset=" in repr(d)


def test_distribution_cdf_sf_exact_above_2_53():
    big = 2**55
    d = pairperm.null_distribution([big + 1, big + 1], [big, big + 2])
    assert d.offset == 2 * big + 1
    assert d.cdf(2 * big) == 0.0
    assert d.cdf(2 * big + 2) == pytest.approx(0.75)
    assert d.cdf(2 * big + 3) == pytest.approx(1.0)
    assert d.sf(2 * big + 2) == pytest.approx(0.25)
    assert d.cdf(np.array([2 * big + 1, 2 * big + 9])).tolist() == pytest.approx([0.25, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        d.cdf(float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert d.cdf(np.inf) == pytest.approx(1.0) and d.cdf(-np.inf) == 0.0


def test_fft_routes_never_hold_more_than_total_mass_one():
    # A spiky lattice (one wide effect among small ones): clamping the inverse FFT's negative
    # round-off to 0 only ever adds mass.
    rng = np.random.default_rng(4)
    stay = np.concatenate(([0], rng.integers(0, 3, 3000)))
    swap = np.concatenate(([10_007], -stay[1:]))
    for method in ("auto", "fft"):
        d = pairperm.null_distribution(stay, swap, method=method)
        assert d.pmf.sum() <= 1.0
        assert d.cdf(d.support[-1]) <= 1.0 and d.sf(d.support[0] - 1) <= 1.0


def test_a_pmf_scaled_down_sums_to_at_most_one_in_any_order():
    # Round-off that lifts a total above 1 by a few ulps: after the scaling, every summation
    # order (NumPy versions differ in theirs) gives at most 1.
    rng = np.random.default_rng(2)
    pmf = rng.random(16_000)
    pmf /= pmf.sum()
    pmf *= 1 + 4e-16
    assert pmf.sum() > 1.0
    out = _core.cap_total_mass(pmf)
    for total in (out.sum(), math.fsum(out), sum(out.tolist()), out[::-1].sum(), np.sort(out).sum(),
                  out.reshape(-1, 8).sum(axis=0).sum()):
        assert total <= 1.0
    assert out.sum() > 1.0 - 1e-13
