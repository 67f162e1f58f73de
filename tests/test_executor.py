"""The core's executor: one call computes a p-value of a sum, whatever the input, and its
outcome carries everything a result needs."""

from __future__ import annotations

import collections
import pickle

import numpy as np
import pytest

import pairperm
from pairperm import _core
from reference import brute_force_pvalue


@pytest.fixture
def crossings(monkeypatch):
    """Counts the calls into the compiled core, by name."""
    calls: collections.Counter = collections.Counter()
    for name in dir(_core):
        fn = getattr(_core, name)
        if callable(fn) and not isinstance(fn, type) and not name.startswith("_"):
            def counted(*args, _fn=fn, _name=name, **kwargs):
                calls[_name] += 1
                return _fn(*args, **kwargs)
            monkeypatch.setattr(_core, name, counted)
    return calls


def _sum_tests():
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 5, 400), rng.integers(0, 5, 400)
    xr, yr = rng.random(400), rng.random(400)
    units = np.repeat(np.arange(40), 10)
    wide = rng.integers(0, 10**12, 30), rng.integers(0, 10**12, 30)
    counts = np.c_[rng.integers(0, 3, 200), rng.integers(0, 3, 200)], np.c_[rng.integers(0, 3, 200),
                                                                           rng.integers(0, 3, 200)]
    return {
        "int64 arrays": lambda: pairperm.permutation_test(x, y),
        "lists": lambda: pairperm.permutation_test(x.tolist(), y.tolist()),
        "int32, greater": lambda: pairperm.permutation_test(x.astype(np.int32), y.astype(np.int32),
                                                            alternative="greater"),
        "units": lambda: pairperm.permutation_test(x, y, groups=units),
        "k samples": lambda: pairperm.permutation_test(x.reshape(40, 10), y.reshape(40, 10)),
        "real": lambda: pairperm.permutation_test(xr, yr),
        "real units": lambda: pairperm.permutation_test(xr, yr, groups=units),
        "wide integers (meet in the middle)": lambda: pairperm.permutation_test(*wide),
        "method dp": lambda: pairperm.permutation_test(x[:50], y[:50], method="dp"),
        "compare accuracy": lambda: pairperm.compare(x, y),
        "compare real mean": lambda: pairperm.compare(xr, yr, "mean"),
        "f1": lambda: pairperm.f1_test(*counts),
        "structured sum": lambda: pairperm.structured_test(x - y, y - x),
    }


@pytest.mark.parametrize("name", list(_sum_tests()))
def test_a_pvalue_of_a_sum_is_one_call_of_the_core(name, crossings):
    r = _sum_tests()[name]()
    assert sum(crossings.values()) == 1, dict(crossings)
    assert 0 < r.pvalue <= 1


def test_the_summary_made_by_the_executor_is_the_results_and_refuses_overflow(crossings):
    x, y = [3, 1, 4, 1, 5], [2, 7, 1, 8, 2]
    r = pairperm.permutation_test(x, y, alternative="less")
    assert (r.statistic, r.null_distribution.support.min()) == (sum(x) - sum(y), -sum(abs(a - b) for a, b in zip(x, y)))
    assert r.pvalue == float(brute_force_pvalue([a - b for a, b in zip(x, y)], [b - a for a, b in zip(x, y)], "less"))
    with pytest.raises(ValueError, match="x and y are too large together"):
        pairperm.permutation_test([2**60, 2**60, 2**60], [0, 0, -(2**60)])


def test_a_callable_statistic_is_evaluated_on_the_executors_distributions():
    stay, swap = [3, 5, 1, 2, 4], [1, 0, 1, 6, 0]
    seen = []

    def squared(s):
        seen.append(len(s))
        return s**2

    r = pairperm.structured_test(stay, swap, squared, alternative="greater")
    states = [sum(v) for v in np.array(np.meshgrid(*zip(stay, swap))).reshape(5, -1).T]
    # The grouped engine's distribution, by an inverse FFT: exact to round-off.
    assert r.pvalue == pytest.approx(sum(s**2 >= 15**2 for s in states) / len(states), rel=1e-12)
    assert seen  # the core handed the statistic its distribution
    with pytest.raises(ValueError, match="must be finite at every value"):
        pairperm.structured_test(stay, swap, lambda s: np.where(s == 9, np.nan, 1.0 * s))


def test_outcomes_pickle_with_every_field():
    x = np.random.default_rng(1).integers(0, 10**12, 60)
    y = np.random.default_rng(2).integers(0, 10**12, 60)
    summary, outcome = _core.execute(None, x, y, True, None, "sum", "two-sided", "auto", _core.PlanLimits(), 300, 1,
                                     7, None)
    assert outcome.route == "saddlepoint_is" and outcome.n_resamples >= 300
    back = pickle.loads(pickle.dumps(outcome))
    fields = ("pvalue", "log_pvalue", "route", "shortfall", "is_bound", "dp_within_limit", "cost", "detail", "error",
              "n_resamples", "hits", "saddlepoint", "ci", "log_ci")
    assert [getattr(back, f) for f in fields] == [getattr(outcome, f) for f in fields]
    assert summary.observed == int(x.sum() - y.sum())


def test_importance_sampling_without_a_seed_says_so_and_a_drawn_seed_is_asked_for_once():
    x = np.random.default_rng(1).integers(0, 10**12, 60)
    y = np.random.default_rng(2).integers(0, 10**12, 60)
    limits = _core.PlanLimits()
    _, outcome = _core.execute(None, x, y, True, None, "sum", "greater", "auto", limits, 300, 1, None, None)
    assert (outcome.route, outcome.shortfall) == ("", "needs_seed")
    asked = []
    _, drawn = _core.execute(None, x, y, True, None, "sum", "greater", "auto", limits, 300, 1, None,
                             lambda: asked.append(1) or 7)
    _, given = _core.execute(None, x, y, True, None, "sum", "greater", "auto", limits, 300, 1, 7, None)
    assert asked == [1] and drawn.pvalue == given.pvalue
    # Exact routes never ask.
    _core.execute(None, x[:30], y[:30], True, None, "sum", "greater", "auto", limits, 300, 1, None,
                  lambda: asked.append(1) or 7)
    assert asked == [1]
