"""structured_test and the m-D engines against brute-force enumeration."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import pairperm
from pairperm import _core
from reference import ALTERNATIVES, brute_force_pvalue, brute_force_stat_pvalue, exact_pvalue, rel_err


def all_sums(stay: np.ndarray, swap: np.ndarray) -> np.ndarray:
    """S for every one of the 2^N swap patterns (shape (2^N,) or (2^N, m))."""
    n = stay.shape[0]
    bits = np.array(list(itertools.product((0, 1), repeat=n)), dtype=bool).reshape(2**n, n)
    if stay.ndim == 1:
        return np.where(bits, swap, stay).sum(axis=1)
    return np.where(bits[:, :, None], swap[None], stay[None]).sum(axis=1)


def dense_brute(stay, swap, offset, shape):
    ref = np.zeros(shape)
    for s in all_sums(stay, swap):
        ref[tuple(np.atleast_1d(s) - np.array(offset))] += 1.0 / 2 ** stay.shape[0]
    return ref


@pytest.mark.parametrize("seed", range(8))
def test_sum_statistic_1d_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    stay = rng.integers(-4, 6, n)
    swap = rng.integers(-3, 5, n)  # not antisymmetric: mu != 0, possibly half-integer
    for alt in ALTERNATIVES:
        ref = float(brute_force_pvalue(stay, swap, alt))
        for method in ("auto", "dp", "fft"):
            r = pairperm.structured_test(stay, swap, alternative=alt, method=method)
            assert r.pvalue == pytest.approx(ref, rel=1e-9)
            assert r.statistic == int(stay.sum())


@pytest.mark.parametrize("seed", range(5))
def test_callable_1d_brute_force(seed):
    rng = np.random.default_rng(20 + seed)
    n = 10
    stay, swap = rng.integers(-3, 4, n), rng.integers(-3, 4, n)

    def h(s):
        return (s.astype(float) - 1.5) ** 2 / 7.0  # float round-off; ties need rtol

    def h_exact(s):
        return (Fraction(s[0]) - Fraction(3, 2)) ** 2 / 7

    for alt in ALTERNATIVES:
        ref = float(brute_force_stat_pvalue(stay, swap, h_exact, alt))
        for method in ("auto", "dp", "fft"):
            assert pairperm.structured_test(stay, swap, h, alternative=alt, method=method).pvalue == pytest.approx(
                ref, rel=1e-9
            )


@pytest.mark.parametrize("m", [2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_callable_md_brute_force(m, seed):
    rng = np.random.default_rng(40 + seed)
    n = int(rng.integers(2, 12))
    stay, swap = rng.integers(-2, 4, (n, m)), rng.integers(-2, 4, (n, m))
    w = np.array([0.1, 0.3, -0.7][:m])

    def h(s):
        return s @ w + 0.05 * s[:, 0] * s[:, -1]

    w_exact = [Fraction(1, 10), Fraction(3, 10), Fraction(-7, 10)][:m]

    def h_exact(s):
        return sum(wi * si for wi, si in zip(w_exact, s)) + Fraction(1, 20) * s[0] * s[-1]

    for alt in ALTERNATIVES:
        ref = float(brute_force_stat_pvalue(stay, swap, h_exact, alt))
        for method in ("auto", "dp"):
            r = pairperm.structured_test(stay, swap, h, alternative=alt, method=method)
            assert r.pvalue == pytest.approx(ref, rel=1e-9)
            assert r.statistic == pytest.approx(h(stay.sum(0)[None])[0])


@pytest.mark.parametrize("m", [1, 2, 3])
def test_md_distributions_match_enumeration(m):
    rng = np.random.default_rng(60 + m)
    stay, swap = rng.integers(-3, 4, (10, m)), rng.integers(-3, 4, (10, m))
    dp = _core.convolve_dp_multi(stay, swap)
    ref = dense_brute(stay, swap, dp[0], dp[1].shape)
    np.testing.assert_allclose(dp[1], ref, rtol=1e-12, atol=0)
    assert dp[2] == 0.0
    off, pmf, tm = _core.grouped_distribution_multi(_core.summarize_multi(stay, swap))
    assert tm <= 1e-40
    # Cut the brute-force box to the grouped engine's certified box.
    sl = tuple(slice(o - o0, o - o0 + w) for o, o0, w in zip(off, dp[0], pmf.shape))
    np.testing.assert_allclose(pmf, ref[sl], rtol=0, atol=1e-14)


def test_grouped_md_matches_dp_with_truncation():
    # N = 600 of 0/1 effects: the certified box cuts the support; entries agree and the cut mass is tiny.
    rng = np.random.default_rng(70)
    stay, swap = rng.integers(0, 2, (600, 2)), rng.integers(0, 2, (600, 2))
    o_dp, p_dp, _ = _core.convolve_dp_multi(stay, swap)
    off, pmf, tm = _core.grouped_distribution_multi(_core.summarize_multi(stay, swap))
    assert pmf.shape[0] < p_dp.shape[0] and 0 < tm <= 1e-40
    sl = tuple(slice(o - o0, o - o0 + w) for o, o0, w in zip(off, o_dp, pmf.shape))
    np.testing.assert_allclose(pmf, p_dp[sl], rtol=0, atol=1e-15)
    assert 1.0 - p_dp[sl].sum() <= tm + 1e-15


def test_canonical_groups_merge_opposite_deltas():
    stay = np.array([[0, 0], [2, 1], [1, 0], [0, 0]])
    swap = np.array([[2, 1], [0, 0], [1, 0], [-1, 3]])
    s = _core.summarize_multi(stay, swap)
    assert sorted(s.groups) == [([1, -3], 1), ([2, 1], 2)]
    assert s.observed == [3, 1]


def test_rtol_counts_float_ties():
    # 0.1 s1 + 0.7 s2 takes the same exact value at different states, but their floats differ
    # by round-off: the default rtol keeps those exact ties, rtol=0 loses some (seed found by search).
    rng = np.random.default_rng(6)
    stay, swap = rng.integers(0, 4, (8, 2)), rng.integers(0, 4, (8, 2))
    h = lambda s: 0.1 * s[:, 0] + 0.7 * s[:, 1]  # noqa: E731
    ref = float(brute_force_stat_pvalue(stay, swap, lambda s: Fraction(1, 10) * s[0] + Fraction(7, 10) * s[1], "greater"))
    assert pairperm.structured_test(stay, swap, h, alternative="greater").pvalue == pytest.approx(ref, rel=1e-12)
    assert pairperm.structured_test(stay, swap, h, alternative="greater", rtol=0).pvalue < ref - 1e-3


def test_identical_and_mirrored():
    rng = np.random.default_rng(80)
    stay = rng.integers(-3, 4, (40, 2))
    h = lambda s: s[:, 0] - 0.5 * s[:, 1]  # noqa: E731
    r = pairperm.structured_test(stay, stay.copy(), h)
    assert r.pvalue == pytest.approx(1.0, abs=1e-12)
    swap = rng.integers(-3, 4, (40, 2))
    g = pairperm.structured_test(stay, swap, lambda s: h(s) - h(swap.sum(0)[None] * 0 + (stay + swap).sum(0)[None] - s),
                                 alternative="greater")
    lo = pairperm.structured_test(swap, stay, lambda s: h(s) - h((stay + swap).sum(0)[None] - s), alternative="less")
    assert g.pvalue == pytest.approx(lo.pvalue, rel=1e-9)


def test_errors():
    s1 = np.arange(5)
    s2 = np.ones((5, 2), dtype=int)
    with pytest.raises(ValueError, match="statistic=None .* needs 1-D"):
        pairperm.structured_test(s2, s2)
    with pytest.raises(ValueError, match="method='fft'"):
        pairperm.structured_test(s2, s2 + 1, lambda s: s[:, 0], method="fft")
    with pytest.raises(ValueError, match="must be vectorised"):
        pairperm.structured_test(s1, s1[::-1], lambda s: 1.0)
    with pytest.raises(ValueError, match="same length"):
        pairperm.structured_test(s1, s1[:4])
    with pytest.raises(ValueError, match="callable"):
        pairperm.structured_test(s1, s1, statistic="sum")
    with pytest.raises(ValueError, match="rtol"):
        pairperm.structured_test(s1, s1, lambda s: s, rtol=-1)
    with pytest.raises(ValueError, match="alternative must be one of"):
        pairperm.structured_test(s1, s1, alternative="both")


def test_infeasible_md_points_to_monte_carlo():
    rng = np.random.default_rng(90)
    stay, swap = rng.integers(0, 60, (3000, 4)), rng.integers(0, 60, (3000, 4))
    with pytest.raises(pairperm.SupportTooLargeError, match="method='monte_carlo'"):
        pairperm.structured_test(stay, swap, lambda s: s[:, 0])


def test_empty_and_constant():
    r = pairperm.structured_test(np.zeros(0, int), np.zeros(0, int))
    assert r.pvalue == 1.0
    st = np.array([[1, 2], [3, 4]])
    r = pairperm.structured_test(st, st, lambda s: s.sum(1) * 1.0)
    assert r.pvalue == 1.0 and math.isclose(r.statistic, 10.0)


def test_integer_valued_callable_is_compared_exactly():
    # 4e12 - 3 is not a tie of 4e12; a float slack rtol * |h_obs| (= 4) would make it one.
    stay, swap = [4 * 10**12, 1, 1, 1], [4 * 10**12 - 3, 0, 0, 0]
    r = pairperm.structured_test(stay, swap, lambda s: s, alternative="greater")
    assert r.pvalue == pytest.approx(1 / 16, rel=1e-9)
    m = pairperm.monte_carlo_test(stay, swap, lambda s: s, alternative="greater", n_resamples=4000, rng=0)
    assert m.pvalue_ci[0] <= 1 / 16 <= m.pvalue_ci[1]


def test_statistic_not_finite_at_some_state_is_an_error():
    with pytest.raises(ValueError, match="must be finite"):
        pairperm.structured_test([1, 2], [-1, -2], lambda s: np.where(s == -3, np.inf, 1.0 * s))


def test_md_callable_is_evaluated_in_chunks_of_the_box():
    stay = np.array([[3, 0], [0, 2], [1, 1]])
    swap = np.array([[0, 0], [0, 0], [0, 0]])
    d = pairperm.null_distribution(stay, swap)
    chunks = list(d.points(chunk=2))
    assert sum(len(p) for p, _ in chunks) == d.pmf.size and max(len(p) for p, _ in chunks) == 2
    got = pairperm.structured_test(stay, swap, lambda s: s[:, 0] - s[:, 1], alternative="greater").pvalue
    h_obs = int(stay[:, 0].sum() - stay[:, 1].sum())
    hits = 0
    for choice in itertools.product((0, 1), repeat=3):
        s = sum(swap[i] if c else stay[i] for i, c in enumerate(choice))
        hits += int(s[0] - s[1]) >= h_obs
    assert got == pytest.approx(hits / 8, rel=1e-12)


def test_callable_statistic_tiny_pvalue_matches_exact_arithmetic():
    rng = np.random.default_rng(1)
    n = 300
    x = rng.integers(0, 10, n)
    y = np.maximum(x - rng.integers(0, 3, n), 0)
    d = x - y
    exact = exact_pvalue(d, -d, "two-sided")
    assert exact < 1e-40
    r = pairperm.structured_test(d, -d, lambda s: s * 1.0)
    assert rel_err(r.pvalue, exact) <= 1e-9


def test_infinite_observed_statistic_is_an_error():
    with pytest.raises(ValueError, match="inf at the observed value"):
        with np.errstate(divide="ignore"):
            pairperm.structured_test([1, 2, 0], [0, 0, 3], lambda s: 1.0 / (s - 3.0), alternative="greater")
