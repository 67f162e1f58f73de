"""The core's engine planner: what it picks is what runs, for every test that asks it, and its
limits are the core's (the only copy)."""

from __future__ import annotations

import bisect
from fractions import Fraction

import numpy as np
import pytest

import pairperm
from pairperm import _core, _runner, datasets
from pairperm._effects import LocalEffects
from reference import exact_counts, exact_pvalue, rel_err


def _plan(x, y, method="auto", kind="sum"):
    return _core.plan_engine(_core.summarize_paired(np.asarray(x, np.int64), np.asarray(y, np.int64)), kind, method,
                             _runner.LIMITS)


def _cases():
    rng = np.random.default_rng(3)
    small = rng.integers(0, 21, (2, 40))
    few_distinct = rng.integers(0, 3, (2, 1_000))
    return {
        "identical": (small[0], small[0], "trivial", "enumeration"),
        "small, many distinct differences": (small[0], small[1], "dp", "dp"),
        "many entries, few distinct differences": (few_distinct[0], few_distinct[1], "grouped_tail", "grouped"),
        # Differences beyond the grouped window: listed when few vary, else the real-valued engine.
        "wide, few entries": (rng.integers(-10**15, 10**15, 12), np.zeros(12, np.int64), "enumeration", "enumeration"),
        "wide, more entries": (rng.integers(-10**6, 10**6, 26), np.zeros(26, np.int64), "real_valued",
                               "meet_in_the_middle"),
    }


def _sign_flip_reference(d, alternative):
    """P-value of the sign-flip sum of integers d, exactly: meet in the middle over Python ints."""
    d = [int(v) for v in d]
    half = len(d) // 2

    def sums(part):
        out = [0]
        for v in part:
            out = [s + v for s in out] + [s - v for s in out]
        return out

    left, right = sums(d[:half]), sorted(sums(d[half:]))
    t = sum(d)

    def at_least(x):  # states with S >= x
        return sum(len(right) - bisect.bisect_left(right, x - a) for a in left)

    def at_most(x):  # states with S <= x
        return sum(bisect.bisect_right(right, x - a) for a in left)

    hits = {"greater": lambda: at_least(t), "less": lambda: at_most(t),
            "two-sided": lambda: at_least(abs(t)) + at_most(-abs(t)) - (2**len(d) if t == 0 else 0)}[alternative]()
    return Fraction(hits, 2 ** len(d))


@pytest.mark.parametrize("case", list(_cases()))
@pytest.mark.parametrize("method", ["auto", "exact"])
def test_the_planned_engine_is_what_runs_and_its_pvalue_is_exact(case, method):
    x, y, planned, reported = _cases()[case]
    assert _plan(x, y, method).engine == planned
    d = np.asarray(x, np.int64) - np.asarray(y, np.int64)
    for alternative in ("two-sided", "greater", "less"):
        r = pairperm.permutation_test(x, y, alternative=alternative, method=method)
        assert r.engine == reported
        exact = exact_pvalue(d, -d, alternative) if planned in ("trivial", "dp", "grouped_tail") \
            else _sign_flip_reference(d, alternative)
        assert rel_err(r.pvalue, exact) <= 1e-9


def test_asked_methods_plan_their_own_engine():
    x, y = datasets.stanza_pos_like(500, seed=1)
    assert _plan(x, y, "dp").engine == "dp"
    assert _plan(x, y, "fft").engine == "fft"
    assert _plan(x, y, "monte_carlo").engine == "monte_carlo"
    huge = np.array([10**12] * 5 + [0]), np.zeros(6, np.int64)
    plan = _plan(*huge, "dp")
    assert (plan.engine, plan.reason, plan.dp_within_limit) == ("out_of_reach", "dp_too_costly", False)
    assert plan.dp_cost == 5 * (5 * 2 * 10**12 + 1)  # varying entries x support width (k = 2 |x - y|)
    with pytest.raises(pairperm.SupportTooLargeError, match="multiply-adds"):
        pairperm.permutation_test(*huge, method="dp")


def test_the_limits_are_the_cores_and_decide():
    defaults = _core.PlanLimits()
    for name in ("dp_budget", "dp_limit", "max_listed_entries", "small_dp_cost", "small_dp_entries",
                 "exact_dp_cost", "exact_auto_work", "band_max_work"):
        assert getattr(_runner.LIMITS, name) == getattr(defaults, name)
    assert _runner.FFT_NOISE_FLOOR == _core.fft_noise_floor == 1e-10
    x, y, *_ = _cases()["small, many distinct differences"]
    exact = pairperm.permutation_test(x, y)
    assert exact.engine == "dp"
    no_small_dp = _core.PlanLimits()
    no_small_dp.small_dp_entries = 0
    try:
        _runner.LIMITS = no_small_dp
        assert _plan(x, y).engine == "grouped_tail"
        r = pairperm.permutation_test(x, y)
        assert r.engine == "grouped" and r.pvalue == pytest.approx(exact.pvalue, rel=1e-9)
        # The batch plans with the same limits as the single-pair route.
        res = pairperm.compare_systems({"x": x, "y": y}, "sum")
        assert (res.rows[0].engine, res.rows[0].pvalue) == ("grouped", r.pvalue)
    finally:
        _runner.LIMITS = defaults


def test_few_entries_take_the_exact_dp_while_it_is_cheap():
    # 27 entries in one group: the grouped tail read p = 1/2 as 0.5000000000000003.
    x, y = np.array([1] * 14 + [0] * 21), np.array([0] * 14 + [1] * 13 + [0] * 8)
    assert _plan(x, y).engine == "dp"
    # The same few entries in units of 17,700: the DP would cost ~10^8 multiply-adds (50 ms)
    # where the grouped tail takes microseconds.
    assert _plan(x * 17_700, y * 17_700).engine == "grouped_tail"
    defaults = _runner.LIMITS
    no_exact_dp = _core.PlanLimits()
    no_exact_dp.exact_dp_cost = 0
    try:
        _runner.LIMITS = no_exact_dp
        assert _plan(x, y).engine == "grouped_tail"
    finally:
        _runner.LIMITS = defaults


def test_statistic_kinds_plan_their_routes():
    x, y = datasets.ner_like(300, seed=4)
    assert pairperm.f1_test(x, y).engine == "grouped"
    stay = np.array([3, -1, 4, 1, -5, 9, 2, -6] * 4)
    swap = 1 - stay
    effects = LocalEffects.from_arrays(stay, swap)
    # A statistic needing the distribution is summed over the grouped engine's.
    assert _runner.plan(effects, "distribution", "auto").engine == "grouped_distribution"
    s = pairperm.structured_test(stay, swap, statistic=lambda v: v * v, alternative="greater")
    assert s.engine == "grouped"
    offset, counts, n = exact_counts(stay, swap)
    observed = int(stay.sum())
    hits = sum(c for i, c in enumerate(counts) if (offset + i) ** 2 >= observed**2)
    assert rel_err(s.pvalue, Fraction(hits, 2**n)) <= 1e-9


@pytest.mark.parametrize("n", [30, 3_000])
def test_wilcoxon_takes_the_band_exactly_where_the_planner_says(n):
    rng = np.random.default_rng(n)
    x, y = rng.normal(0.1, 1, n), rng.normal(0, 1, n)
    r = pairperm.wilcoxon_test(x, y)
    from pairperm._classic import _sign_flip_effects, _signed_ranks

    effect, _, _ = _signed_ranks(x, y, "wilcox")
    plan = _runner.plan(_sign_flip_effects(effect), "signed_rank_sum", "auto")
    assert (plan.engine == "band") == (r.method == "fourier")
    assert r.method == ("fourier" if n > 1000 else "exact")
    # "exact" never hands over to the band.
    assert _runner.plan(_sign_flip_effects(effect), "signed_rank_sum", "exact").engine != "band"
