"""Bad input gets a clear error, never a wrong answer."""

from __future__ import annotations

import numpy as np
import pytest

import pairperm
from pairperm import _core
from synthetic import separated_f1_data

ENTRY_POINTS = [
    lambda a, b: pairperm.permutation_test(a, b),
    lambda a, b: pairperm.permutation_test(a, b, method="monte_carlo", n_resamples=10, rng=0),
    lambda a, b: pairperm.null_distribution(a, b),
    lambda a, b: pairperm.convolve_dp(a, b),
    lambda a, b: pairperm.convolve_fft(a, b),
]


@pytest.mark.parametrize("call", ENTRY_POINTS)
def test_length_mismatch_names_both_lengths(call):
    with pytest.raises(ValueError, match=r"same length; got 3 and 2"):
        call([1, 2, 3], [1, 2])


@pytest.mark.parametrize("call", ENTRY_POINTS)
def test_wrong_ndim(call):
    with pytest.raises(ValueError, match=r"array; got shape \(1, 2, 2\)"):
        call([[[1, 2], [3, 4]]], [1, 2])
    with pytest.raises(ValueError, match=r"array; got shape \(\)"):
        call(3, 4)


@pytest.mark.parametrize("call", ENTRY_POINTS[2:])
def test_non_integral_values_point_to_real_valued_tests(call):
    # The distribution engines need integers; the test itself takes real-valued scores.
    with pytest.raises(ValueError, match=r"must hold integers.*3\.5.*index 1; .*pairperm.permutation_test takes real"):
        call([1.0, 3.5], [0, 1])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("call", ENTRY_POINTS)
def test_nan_and_inf(call, bad):
    with pytest.raises(ValueError, match=r"NaN or inf \(at index 2\)"):
        call([1, 2, 3], [0.0, 1.0, bad])


def test_integral_floats_and_bools_are_accepted():
    a = pairperm.permutation_test([3.0, 5.0, 2.0], [1.0, 5.0, 0.0])
    b = pairperm.permutation_test([3, 5, 2], [1, 5, 0])
    assert a.pvalue == b.pvalue and a.statistic == b.statistic == 4
    c = pairperm.permutation_test(np.array([True, True, False]), np.array([False, True, False]))
    assert c.pvalue == 1.0  # one discordant pair: p = 1


def test_non_numeric_input():
    with pytest.raises(ValueError, match="must hold (real )?numbers"):
        pairperm.permutation_test(["a", "b"], ["c", "d"])
    with pytest.raises(ValueError, match="must hold (real )?numbers"):
        pairperm.permutation_test([1 + 2j], [1])


def test_overflow_is_refused_before_computing():
    big = 2**60
    with pytest.raises(ValueError, match=r"overflow int64"):
        pairperm.permutation_test([big, big, big], [0, 0, -big])
    with pytest.raises(ValueError, match=r"too large"):
        pairperm.permutation_test([2**62], [0])
    with pytest.raises(ValueError, match=r"too large"):
        pairperm.permutation_test(np.array([2**63], dtype=np.uint64), [0])
    with pytest.raises(ValueError):
        pairperm.permutation_test([10**30], [0])  # Python int beyond int64


@pytest.mark.parametrize("method", ["dp", "fft"])
def test_support_too_large_is_refused_before_allocating(method):
    with pytest.raises(ValueError, match=r"would need \d+ float64 entries \(\d+ MiB\).*limit"):
        pairperm.null_distribution([2**40, 1], [0, 0], method=method)


def test_unknown_alternative_and_method_list_valid_values():
    with pytest.raises(ValueError, match=r"'two-sided', 'greater', 'less'; got 'both'"):
        pairperm.permutation_test([1], [0], alternative="both")
    with pytest.raises(ValueError, match=r"'auto', 'exact', 'dp', 'fft', 'monte_carlo'; got 'exact_dp'"):
        pairperm.permutation_test([1], [0], method="exact_dp")
    with pytest.raises(ValueError, match=r"'auto', 'dp', 'fft'; got 'monte_carlo'"):
        pairperm.null_distribution([1], [0], method="monte_carlo")


@pytest.mark.parametrize("k", [0, -5, 2.5, True, "100"])
def test_bad_n_resamples(k):
    with pytest.raises(ValueError, match="n_resamples"):
        pairperm.permutation_test([1, 2], [0, 0], method="monte_carlo", n_resamples=k)


def test_bad_rng():
    with pytest.raises(ValueError, match="rng must be"):
        pairperm.permutation_test([1, 2], [0, 0], method="monte_carlo", rng="seed")
    with pytest.raises(ValueError, match="non-negative"):
        pairperm.permutation_test([1, 2], [0, 0], method="monte_carlo", rng=-1)


def test_inputs_are_never_modified():
    x = np.array([5, 3, 8, 1], dtype=np.int64)
    y = np.array([4, 3, 6, 2], dtype=np.int64)
    xf = x.astype(float)
    copies = (x.copy(), y.copy(), xf.copy())
    for method in ("auto", "dp", "fft", "monte_carlo"):
        pairperm.permutation_test(x, y, method=method, rng=1)
        pairperm.permutation_test(xf, y, method=method, rng=1)
    pairperm.null_distribution(x, y)
    assert all(np.array_equal(a, b) for a, b in zip((x, y, xf), copies))


def test_core_maps_cpp_exceptions():
    # std::invalid_argument -> ValueError straight from the compiled module.
    with pytest.raises(ValueError, match="length mismatch"):
        _core.convolve_dp(np.zeros(2, dtype=np.int64), np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="two-sided"):
        _core.grouped_pvalue(_core.summarize(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)), "sideways")
    # pairperm::support_too_large -> SupportTooLargeError, a ValueError.
    with pytest.raises(_core.SupportTooLargeError, match="limit") as info:
        _core.convolve_dp(np.array([2**40], dtype=np.int64), np.zeros(1, dtype=np.int64))
    assert isinstance(info.value, ValueError)


def test_masked_entries_are_refused():
    x = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])
    with pytest.raises(ValueError, match="masked"):
        pairperm.permutation_test(x, [0, 0, 0])
    # An unmasked masked array is just its data.
    assert pairperm.permutation_test(np.ma.masked_array([1, 2, 3]), [0, 0, 0]).pvalue == pytest.approx(0.25, rel=1e-12)


def test_n_resamples_beyond_exact_counting_is_refused():
    with pytest.raises(ValueError, match="n_resamples"):
        pairperm.monte_carlo_test([1], [0], n_resamples=2**70)


@pytest.mark.parametrize("rtol", [-1, float("nan"), 1.5])
def test_monte_carlo_rtol_is_validated(rtol):
    with pytest.raises(ValueError, match="rtol"):
        pairperm.monte_carlo_test([1, 2], [0, 0], lambda s: s * 1.0, rtol=rtol, rng=0)


def test_monte_carlo_threads_validated():
    with pytest.raises(ValueError, match="n_jobs"):
        pairperm.monte_carlo_test([1, 2], [0, 0], n_jobs=-1, rng=0)


@pytest.mark.parametrize("kw", [dict(beta=-1.0), dict(zero_division=5.0), dict(beta=float("inf"))])
def test_bootstrap_f1_options_validated(kw):
    a, b = separated_f1_data(50)
    with pytest.raises(ValueError, match="beta|zero_division"):
        pairperm.bootstrap_test(a, b, metric="f1", n_resamples=10, rng=0, **kw)


def test_mcnemar_hint_fits_mcnemar():
    with pytest.raises(ValueError, match="mcnemar_test takes 0/1 correctness"):
        pairperm.mcnemar_test([0.5], [1])


@pytest.mark.parametrize("call", [
    lambda a, b: pairperm.permutation_test(a, b),
    lambda a, b: pairperm.compare(a, b, "accuracy"),
    lambda a, b: pairperm.wilcoxon_test(a, b),
    lambda a, b: pairperm.sign_test(a, b),
    lambda a, b: pairperm.bootstrap_test(a, b, n_resamples=10, rng=0),
    lambda a, b: pairperm.structured_test(a, b),
])
def test_pandas_pairs_with_different_indexes_are_refused(call):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    a = pd.Series(rng.integers(0, 10, 50))
    b = pd.Series(rng.integers(0, 10, 50))
    call(a, b)  # aligned: fine
    with pytest.raises(ValueError, match="different indexes"):
        call(a, b.sample(frac=1, random_state=1))


def test_f1_dataframes_with_different_indexes_are_refused():
    pd = pytest.importorskip("pandas")
    a = pd.DataFrame({"tp": [1, 2, 0], "fp": [0, 1, 1], "fn": [1, 0, 2]})
    b = pd.DataFrame({"tp": [0, 2, 1], "fp": [1, 0, 1], "fn": [2, 0, 1]}, index=[2, 1, 0])
    with pytest.raises(ValueError, match="different indexes"):
        pairperm.f1_test(a, b)


def test_bootstrap_refuses_resamples_beyond_its_memory_limit_before_allocating():
    with pytest.raises(pairperm.SupportTooLargeError, match="GiB"):
        pairperm.bootstrap_test([1.0, 2.0], [0.0, 1.0], n_resamples=2**29)


def test_dp_refuses_hours_of_work_and_the_bound_warning_never_recommends_it(monkeypatch):
    from pairperm import _runner

    a = np.array([[10**6, 10**6, 0]] * 40 + [[0, 0, 0]])
    b = np.array([[0, 0, 10**6]] * 40 + [[0, 0, 0]])
    with pytest.raises(pairperm.SupportTooLargeError, match="multiply-adds"):
        pairperm.f1_test(a, b, method="dp")
    # When the exact DP is out of reach, the bound's warning does not point to it.
    from pairperm._statistics import RatioStatistic
    from synthetic import separated_f1_data

    limits = _core.PlanLimits()
    limits.dp_limit = limits.dp_budget = 0.0
    monkeypatch.setattr(_runner, "LIMITS", limits)
    # F1's own route (tilted tails) never needs the bound; take the distribution route.
    monkeypatch.setattr(RatioStatistic, "kind", "distribution")
    with pytest.warns(pairperm.PrecisionWarning) as caught:
        r = pairperm.f1_test(*separated_f1_data())
    assert r.pvalue_is_bound
    assert all("method='dp'" not in str(w.message) for w in caught)


def test_precision_warnings_point_at_the_callers_line():
    # Monte Carlo that no resample beats: the floor's warning names this file, not the library's.
    with pytest.warns(pairperm.PrecisionWarning) as caught:
        pairperm.permutation_test([5] * 40, [0] * 40, method="monte_carlo", n_resamples=50, rng=0)
    assert [w.filename for w in caught] == [__file__]
