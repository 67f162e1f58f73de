"""Thread-count independence of the core and concurrent calls with the GIL released."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import pairperm
from pairperm import _core
from synthetic import correct_counts


def test_sampled_sums_do_not_depend_on_thread_count():
    rng = np.random.default_rng(0)
    stay = rng.integers(-5, 6, (3000, 2))
    swap = rng.integers(-5, 6, (3000, 2))
    one = _core.sample_sums(stay, swap, 5000, 99, 1)
    two = _core.sample_sums(stay, swap, 5000, 99, 2)
    assert np.array_equal(one, two)
    # Every sample is a sum of one of the two values per entry, per coordinate.
    lo = np.minimum(stay, swap).sum(axis=0)
    hi = np.maximum(stay, swap).sum(axis=0)
    assert np.all((one >= lo) & (one <= hi))
    # The sampler's mean and variance match the null's.
    mean = (stay + swap).sum(axis=0) / 2
    var = (((swap - stay) / 2.0) ** 2).sum(axis=0)
    assert np.all(np.abs(one.mean(axis=0) - mean) < 5 * np.sqrt(var / 5000))
    assert np.all(np.abs(one.var(axis=0) / var - 1) < 0.1)


@pytest.mark.filterwarnings("ignore::pairperm.PrecisionWarning")  # plain Monte Carlo at its floor says so
def test_concurrent_calls_give_the_same_answers():
    cases = [correct_counts(s, n=2000, gap=0.01 * s) for s in range(8)]
    methods = ["auto", "dp", "fft", "monte_carlo"]

    def run(i):
        x, y = cases[i % len(cases)]
        m = methods[i % len(methods)]
        r = pairperm.permutation_test(x, y, method=m, n_resamples=2000, rng=i % len(cases))
        return i, r.pvalue

    serial = dict(run(i) for i in range(32))
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = dict(pool.map(run, range(32)))
    assert parallel == serial


def _sampled_pvalue(seed: int) -> float:
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 5, 2000), rng.integers(0, 5, 2000)
    return pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=20_000, rng=seed, n_jobs=2).pvalue


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_gets_working_helper_threads():
    # The parent's helper threads (kept alive between calls) do not exist in a forked child:
    # the child must make its own rather than wait on them forever.
    import multiprocessing

    want = [_sampled_pvalue(s) for s in range(3)]  # also starts the parent's helpers
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map_async(_sampled_pvalue, range(3)).get(timeout=120)
    assert got == want


def test_many_small_threaded_calls_match_serial_ones():
    # Back-to-back fan-outs reuse the same helpers; every call must see its own job only.
    rng = np.random.default_rng(7)
    x, y = rng.integers(0, 3, 300), rng.integers(0, 3, 300)
    serial = [pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=5000, rng=s, n_jobs=1).pvalue
              for s in range(40)]
    threaded = [pairperm.permutation_test(x, y, method="monte_carlo", n_resamples=5000, rng=s, n_jobs=2).pvalue
                for s in range(40)]
    assert threaded == serial
