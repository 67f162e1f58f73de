"""result.difference and result.confidence_interval(...) on every two-system result, against
trusted references: the set of shifts not rejected, found by listing all 2^n sign patterns in
exact fractions; Walsh averages and medians listed by brute force; scipy where it overlaps;
coverage by simulation."""

import itertools
import math
import pickle
import statistics
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import pairperm
from pairperm._difference import walsh_order_statistic
from pairperm._metrics import f1_from_sums

scipy_stats = pytest.importorskip("scipy.stats")

# ---------------------------------------------------------------- references


def _tails(confidence_level, alternative):
    alpha = 1 - Fraction(confidence_level)
    tail = alpha / 2 if alternative == "two-sided" else alpha
    return tail


def _accepted(p_greater, p_less, tail, alternative):
    """Not rejected by the test(s) the interval inverts (rejected when p <= tail)."""
    ok = True
    if alternative in ("two-sided", "greater"):
        ok = ok and p_greater > tail
    if alternative in ("two-sided", "less"):
        ok = ok and p_less > tail
    return ok


def _interval_from_accepted(candidates, accepted):
    """(low, high) of the accepted candidates, checking that they form one run; a run reaching
    the first or last candidate (placed beyond every breakpoint) is unbounded on that side."""
    idx = [i for i, a in enumerate(accepted) if a]
    assert idx == list(range(idx[0], idx[-1] + 1)), "the accepted shifts are not an interval"
    low = -math.inf if idx[0] == 0 else candidates[idx[0]]
    high = math.inf if idx[-1] == len(candidates) - 1 else candidates[idx[-1]]
    return low, high


def brute_shift_interval(d, confidence_level, alternative):
    """Every shift in a grid of subset means (where p jumps) and the midpoints between them:
    the sign-flip test of d - delta over all 2^n patterns (ties count), in integers after
    scaling everything by a common denominator."""
    d = [Fraction(v.item() if hasattr(v, "item") else v) for v in d]  # Python numbers: exact on any NumPy
    n = len(d)
    means = sorted({sum(f) / len(f) for r in range(1, n + 1) for f in itertools.combinations(d, r)})
    grid = [means[0] - 1] + [v for a, b in zip(means, means[1:]) for v in (a, (a + b) / 2)] + [means[-1], means[-1] + 1]
    scale = math.lcm(*(v.denominator for v in grid + d))
    signs = np.array(list(itertools.product((1, -1), repeat=n)), dtype=np.int64)
    tail = _tails(confidence_level, alternative)
    accepted = []
    for delta in grid:
        e = np.array([int((v - delta) * scale) for v in d], dtype=np.int64)
        sums, t = signs @ e, int(e.sum())
        p_g = Fraction(int(np.count_nonzero(sums >= t)), 2**n)
        p_l = Fraction(int(np.count_nonzero(sums <= t)), 2**n)
        accepted.append(_accepted(p_g, p_l, tail, alternative))
    return _interval_from_accepted(grid, accepted)


def _rank_sum_p(e):
    """(P[T >= t], P[T <= t]) of the signed-rank sum with ranks 1..n by |e| (ties broken by
    position: a valid sign-flip statistic), every one of the 2^n sign patterns listed."""
    n = len(e)
    order = sorted(range(n), key=lambda i: abs(e[i]))
    rank = {i: r + 1 for r, i in enumerate(order)}
    t = sum(rank[i] for i in range(n) if e[i] > 0)
    sums = [sum(rank[i] for i in range(n) if s[i] > 0) for s in itertools.product((1, -1), repeat=n)]
    return Fraction(sum(s >= t for s in sums), 2**n), Fraction(sum(s <= t for s in sums), 2**n)


def _sign_p(e):
    n = len(e)
    t = sum(v > 0 for v in e)
    return (Fraction(sum(math.comb(n, k) for k in range(t, n + 1)), 2**n),
            Fraction(sum(math.comb(n, k) for k in range(0, t + 1)), 2**n))


def brute_order_interval(d, breakpoints, p_of, confidence_level, alternative):
    """Shifts below, between and above the breakpoints (where the statistic jumps); the interval
    is closed at the breakpoints that bound the accepted run."""
    d = [Fraction(v.item() if hasattr(v, "item") else v) for v in d]  # Python numbers: exact on any NumPy
    pts = sorted(set(breakpoints))
    mids = [pts[0] - 1] + [(a + b) / 2 for a, b in zip(pts, pts[1:])] + [pts[-1] + 1]
    tail = _tails(confidence_level, alternative)
    accepted = [_accepted(*p_of([v - delta for v in d]), tail, alternative) for delta in mids]
    idx = [i for i, a in enumerate(accepted) if a]
    assert idx == list(range(idx[0], idx[-1] + 1))
    low = -math.inf if idx[0] == 0 else pts[idx[0] - 1]
    high = math.inf if idx[-1] == len(mids) - 1 else pts[idx[-1]]
    return low, high


def walsh(d):
    d = [Fraction(v.item() if hasattr(v, "item") else v) for v in d]  # Python numbers: exact on any NumPy
    return sorted((d[i] + d[j]) / 2 for i in range(len(d)) for j in range(i, len(d)))


def close(a, b, rel=1e-12):
    if math.isinf(b):
        return a == b
    return math.isclose(a, float(b), rel_tol=rel, abs_tol=rel)


ALTERNATIVES = ["two-sided", "greater", "less"]

# ---------------------------------------------------------------- permutation inversion


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("n", [3, 6, 8])
@pytest.mark.parametrize("real", [False, True])
def test_permutation_interval_is_the_set_of_shifts_not_rejected(n, alternative, real):
    rng = np.random.default_rng(100 * n + real)
    if real:
        x, y = rng.integers(0, 64, n) / 16, rng.integers(0, 48, n) / 16
    else:
        x, y = rng.integers(0, 8, n), rng.integers(0, 6, n)
    r = pairperm.permutation_test(x, y, alternative=alternative)
    assert r.difference == r.statistic
    for level in (0.8, 0.9):
        low, high = brute_shift_interval(x - y, level, alternative)
        ci = r.confidence_interval(level)
        assert type(ci).__name__ == "ConfidenceInterval"
        assert close(ci.low, n * low if math.isfinite(low) else low)
        assert close(ci.high, n * high if math.isfinite(high) else high)


def test_permutation_interval_options_and_one_sided_shapes():
    x = np.arange(40) % 7
    y = (np.arange(40) * 3) % 5
    r = pairperm.permutation_test(x, y, alternative="greater")
    ci = r.confidence_interval(0.9)
    assert ci.high == math.inf and ci.low < r.difference
    exact = r.confidence_interval(0.9, method="exact")
    assert exact.low == pytest.approx(40 * pairperm.shift_interval(x, y, confidence_level=0.9, alternative="greater",
                                                                   method="exact").mean_difference.low)
    with pytest.raises(ValueError, match="n_resamples"):
        r.confidence_interval(0.9, n_resamples=10)
    with pytest.raises(ValueError, match="confidence_level"):
        r.confidence_interval(1.5)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_mcnemar_difference_is_the_accuracy_difference_with_the_inversion_interval(alternative):
    rng = np.random.default_rng(7)
    a, b = rng.integers(0, 2, 8), rng.integers(0, 2, 8)
    r = pairperm.mcnemar_test(a, b, alternative=alternative)
    assert r.difference == float(Fraction(int(a.sum()) - int(b.sum()), 8))
    low, high = brute_shift_interval(a - b, 0.9, alternative)
    ci = r.confidence_interval(0.9)
    assert close(ci.low, low) and close(ci.high, high)


def test_monte_carlo_on_sign_flip_effects_has_the_sum_interval_and_other_effects_have_none():
    x, y = np.array([3, 5, 2, 7, 4, 6]), np.array([2, 5, 3, 4, 4, 3])
    r = pairperm.monte_carlo_test(x - y, y - x, n_resamples=999, rng=0)
    assert r.difference == 6
    assert r.confidence_interval(0.8) == pairperm.permutation_test(x, y).confidence_interval(0.8)
    for other in (pairperm.monte_carlo_test([3, 5, 1], [1, 0, 1], n_resamples=99, rng=0),
                  pairperm.structured_test([3, 5, 1, 2, 4], [1, 0, 1, 6, 0])):
        assert other.difference is None and other.to_dict()["difference"] is None
        with pytest.raises(ValueError, match="not necessarily a difference of two systems"):
            other.confidence_interval()


# ---------------------------------------------------------------- signed-rank and sign test


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("ties", [False, True])
def test_wilcoxon_hodges_lehmann_and_walsh_interval_against_brute_force(alternative, ties):
    rng = np.random.default_rng(3 + ties)
    d = rng.integers(-4, 9, 9) if ties else rng.permutation(np.arange(-5, 13, 2))[:9] + rng.random(9).round(3)
    r = pairperm.wilcoxon_test(d, alternative=alternative)
    w = walsh(d)
    assert close(r.difference, statistics.median(w))
    for level in (0.8, 0.95):
        low, high = brute_order_interval(d, w, _rank_sum_p, level, alternative)
        ci = r.confidence_interval(level)
        assert close(ci.low, low) and close(ci.high, high)


def test_wilcoxon_interval_agrees_with_scipy_exact_test_without_ties():
    rng = np.random.default_rng(11)
    x, y = rng.normal(1, 1, 12), rng.normal(0, 1, 12)
    ci = pairperm.wilcoxon_test(x, y).confidence_interval(0.9)
    # Just inside the interval scipy's exact test does not reject at 10%; just outside it does.
    for inside, delta in ((True, ci.low + 1e-9), (True, ci.high - 1e-9), (False, ci.low - 1e-9), (False, ci.high + 1e-9)):
        p = scipy_stats.wilcoxon(x - y - delta, method="exact").pvalue
        assert (p > 0.1) == inside


def test_wilcoxon_normal_interval_beyond_the_exact_range_is_the_normal_quantile_order_statistic():
    rng = np.random.default_rng(5)
    d = rng.standard_t(4, 300) + 0.3
    r = pairperm.wilcoxon_test(d)
    ci = r.confidence_interval(0.95)
    n, m = 300, 300 * 301 // 2
    c = math.ceil(m / 2 + 0.5 + scipy_stats.norm.ppf(0.975) * math.sqrt(n * (n + 1) * (2 * n + 1) / 24))
    w = np.sort(np.add.outer(d, d)[np.triu_indices(n)] / 2)
    assert ci == (w[m - c], w[c - 1])
    assert r.difference == pytest.approx(np.median(w), rel=1e-15)


@pytest.mark.parametrize("shape", ["mixed", "integers", "zeros"])
def test_walsh_order_statistic_by_bisection_equals_the_sorted_list(shape):
    rng = np.random.default_rng(2)
    d = {"mixed": lambda: np.concatenate([rng.normal(0, 1, 1100), rng.integers(-3, 3, 200).astype(float)]),
         "integers": lambda: rng.integers(-3, 4, 900).astype(float),   # few distinct averages, each a huge tie
         "zeros": lambda: np.zeros(300)}[shape]()
    d = np.sort(d)
    w = np.sort(np.add.outer(d, d)[np.triu_indices(len(d))] / 2)
    for k in sorted({1, 2, 1000, len(w) // 2, len(w) // 2 + 1, len(w) - 7, len(w), *rng.integers(1, len(w), 20)}):
        # Beyond 200 items pairs are counted against 2 v - d_i: equal up to the pair sums' round-off.
        assert walsh_order_statistic(d, int(k)) == pytest.approx(w[k - 1], rel=4e-16, abs=4e-16)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_sign_test_median_and_order_statistic_interval_against_brute_force(alternative):
    rng = np.random.default_rng(9)
    x, y = rng.integers(0, 9, 11).astype(float), rng.integers(0, 7, 11).astype(float)
    r = pairperm.sign_test(x, y, alternative=alternative)
    assert r.difference == statistics.median((x - y).tolist())
    for level in (0.8, 0.95):
        low, high = brute_order_interval(x - y, (x - y).tolist(), _sign_p, level, alternative)
        ci = r.confidence_interval(level)
        assert close(ci.low, low) and close(ci.high, high)


def test_sign_interval_beyond_the_exact_range_matches_the_binomial_quantiles():
    rng = np.random.default_rng(4)
    d = rng.exponential(1, 6001) - 0.5
    ci = pairperm.sign_test(d, np.zeros_like(d)).confidence_interval(0.95)
    s = np.sort(d)
    k = int(scipy_stats.binom.ppf(0.025, 6001, 0.5))  # the normal route lands within one order statistic
    assert s[k - 2] <= ci.low <= s[k] and s[-k - 1] <= ci.high <= s[-k + 1]


# ---------------------------------------------------------------- bootstrap intervals


def test_f1_difference_is_exact_and_its_bootstrap_interval_is_seeded_and_matches_the_resamples():
    rng = np.random.default_rng(1)
    tp = rng.integers(0, 5, 60)
    gold = tp + rng.integers(0, 3, 60)
    a = np.stack([tp, rng.integers(0, 3, 60), gold - tp], axis=1)
    tp_b = np.minimum(gold, rng.integers(0, 5, 60))
    b = np.stack([tp_b, rng.integers(0, 3, 60), gold - tp_b], axis=1)
    r = pairperm.f1_test(a, b, rng=3)
    fa = Fraction(2 * int(a[:, 0].sum()), 2 * int(a[:, 0].sum()) + int(a[:, 1].sum()) + int(a[:, 2].sum()))
    fb = Fraction(2 * int(b[:, 0].sum()), 2 * int(b[:, 0].sum()) + int(b[:, 1].sum()) + int(b[:, 2].sum()))
    assert r.difference == float(fa - fb)
    ci = r.confidence_interval(0.9, n_resamples=3000)
    assert ci == r.confidence_interval(0.9, n_resamples=3000)                   # repeatable
    assert ci == pickle.loads(pickle.dumps(r)).confidence_interval(0.9, n_resamples=3000)
    ref = pairperm.bootstrap_intervals([a, b], "f1", method="percentile", confidence_level=0.9, n_resamples=3000,
                                       rng=np.random.default_rng(r._effect.seed))
    dist = ref.bootstrap_distribution[:, 0] - ref.bootstrap_distribution[:, 1]
    tail = (1 - 0.9) / 2
    assert ci == tuple(np.quantile(dist, [tail, 1 - tail]))
    # scipy.stats.bootstrap on its own resamples: the same interval up to resampling noise.
    theirs = scipy_stats.bootstrap((np.arange(60),), lambda i: f1_from_sums(a[i].sum(axis=0)) - f1_from_sums(b[i].sum(axis=0)),
                                   vectorized=False, confidence_level=0.9, n_resamples=3000, method="percentile",
                                   random_state=0).confidence_interval
    se = dist.std()
    assert abs(ci.low - theirs.low) < 0.15 * se and abs(ci.high - theirs.high) < 0.15 * se
    bca = r.confidence_interval(0.9, method="bca", n_resamples=2000)
    assert bca.low < r.difference < bca.high
    greater = pairperm.f1_test(a, b, rng=3, alternative="greater").confidence_interval(0.9, n_resamples=3000)
    assert greater.high == math.inf and greater.low == pytest.approx(np.quantile(dist, 0.1))


@pytest.mark.parametrize("kind", ["precision", "recall"])
def test_precision_and_recall_difference(kind):
    a = np.array([[3, 1, 0], [2, 0, 1], [4, 1, 1], [1, 0, 0], [5, 2, 0], [2, 2, 1]])
    b = np.array([[2, 1, 1], [2, 1, 1], [3, 0, 2], [1, 1, 0], [4, 0, 1], [1, 0, 2]])
    r = getattr(pairperm, f"{kind}_test")(a, b, rng=0)
    col = 1 if kind == "precision" else 2
    ref = (Fraction(int(a[:, 0].sum()), int(a[:, 0].sum() + a[:, col].sum()))
           - Fraction(int(b[:, 0].sum()), int(b[:, 0].sum() + b[:, col].sum())))
    assert r.difference == float(ref)
    ci = r.confidence_interval(n_resamples=2000)
    assert ci.low <= r.difference <= ci.high


def test_bootstrap_test_interval_attribute_still_unpacks_and_is_callable():
    a = [0.71, 0.64, 0.88, 0.52, 0.90, 0.33, 0.41]
    b = [0.69, 0.61, 0.80, 0.55, 0.85, 0.30, 0.45]
    r = pairperm.bootstrap_test(a, b, n_resamples=2000, rng=0, alternative="less")
    lo, hi = r.confidence_interval
    assert (lo, hi) == tuple(np.quantile(r.bootstrap_distribution, [0.025, 0.975]))
    assert r.difference == r.statistic
    ci = r.confidence_interval(0.9, n_resamples=2000)
    assert ci.low == -math.inf and ci.high > r.difference
    back = pickle.loads(pickle.dumps(r))
    assert back == r and back.confidence_interval(0.9, n_resamples=2000) == ci
    assert back.to_dict()["confidence_interval"] == [lo, hi]


# ---------------------------------------------------------------- compare, repr, to_dict, pickles


def test_compare_reports_the_difference_in_the_metrics_units():
    x, y = np.array([0.5, 0.25, 0.75, 1.0, 0.5, 0.25]), np.array([0.25, 0.25, 0.5, 0.5, 0.75, 0.0])
    c = pairperm.compare(x, y, metric="mean")
    assert c.difference == pytest.approx(float(np.mean(x - y)))
    low, high = brute_shift_interval(x - y, 0.8, "two-sided")
    assert close(c.confidence_interval(0.8).low, low) and close(c.confidence_interval(0.8).high, high)
    acc = pairperm.compare([1, 1, 0, 1, 1, 1], [0, 1, 0, 0, 1, 0], metric="accuracy")
    assert acc.test == "mcnemar_test" and acc.difference == 0.5
    total = pairperm.compare([3, 5, 4, 6], [2, 5, 3, 4], metric="sum")
    assert total.difference == 4
    ppl = pairperm.compare([31.2, 28.4, 40.1, 25.0, 33.3, 29.9, 30.5], [30.1, 29.0, 36.2, 24.1, 30.0, 27.5, 27.0],
                           metric="perplexity", alternative="greater")
    assert ppl.difference == ppl.result.difference and ppl.confidence_interval(0.8).low == -math.inf
    stats_a = np.array([[[2, 1, 0], [1, 0, 1]], [[3, 0, 1], [0, 1, 0]], [[1, 1, 1], [2, 0, 0]]] * 4)
    stats_b = np.array([[[1, 1, 1], [1, 1, 1]], [[2, 1, 2], [0, 0, 0]], [[1, 0, 1], [1, 1, 1]]] * 4)
    macro = pairperm.compare(stats_a, stats_b, metric="macro_f1", n_resamples=999, rng=0)
    assert macro.difference == macro.statistic
    ci = macro.confidence_interval(n_resamples=1000)
    assert ci.low <= macro.difference <= ci.high


def test_difference_in_repr_and_to_dict_and_pickles_stay_small():
    r = pairperm.permutation_test([12, 7, 30, 9, 15, 22], [11, 7, 27, 9, 13, 22])
    assert "difference=6" in repr(r) and r.to_dict()["difference"] == 6
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 100_000), rng.integers(0, 2, 100_000)
    for res in (pairperm.mcnemar_test(a, b), pairperm.permutation_test(a * 3, b * 2)):
        blob = pickle.dumps(res)
        assert len(blob) < 4000  # the differences pickle as their few distinct values and counts
        back = pickle.loads(blob)
        assert back == res and back.difference == res.difference
        assert back.confidence_interval(0.9) == res.confidence_interval(0.9)
    w = pairperm.wilcoxon_test(rng.normal(0, 1, 50))
    back = pickle.loads(pickle.dumps(w))
    assert back.confidence_interval() == w.confidence_interval() and back.difference == w.difference


# ---------------------------------------------------------------- coverage


@pytest.mark.parametrize("shape", ["normal", "laplace", "integers"])
def test_coverage_of_the_permutation_and_signed_rank_intervals(shape):
    rng = np.random.default_rng(42)
    reps, n, shift = 300, 14, 0.7
    covered = {"permutation": 0, "wilcoxon": 0, "sign": 0}
    for _ in range(reps):
        noise = {"normal": lambda: rng.normal(0, 1, n), "laplace": lambda: rng.laplace(0, 1, n),
                 "integers": lambda: rng.integers(-3, 4, n).astype(float)}[shape]()
        d = shift + noise  # symmetric about the shift: its mean, median and pseudo-median
        for name, fn in (("permutation", pairperm.permutation_test), ("wilcoxon", pairperm.wilcoxon_test),
                         ("sign", pairperm.sign_test)):
            ci = fn(d, np.zeros(n)).confidence_interval(0.9)
            scale = n if name == "permutation" else 1
            covered[name] += ci.low <= scale * shift <= ci.high
    floor = 0.9 - 3 * math.sqrt(0.9 * 0.1 / reps)
    for name, hits in covered.items():
        assert hits / reps >= floor, (name, hits / reps)


def test_coverage_of_the_saddlepoint_route_at_larger_n():
    rng = np.random.default_rng(8)
    reps, n = 200, 120
    hits = sum(
        (lambda ci: ci.low <= 0.2 <= ci.high)(pairperm.compare(0.2 + rng.exponential(1, n) - rng.exponential(1, n),
                                                                np.zeros(n), metric="mean").confidence_interval(0.9))
        for _ in range(reps)
    )
    assert hits / reps >= 0.9 - 3 * math.sqrt(0.09 / reps)


def _scores_of(kind, rng, n):
    if kind == "binary":
        return [rng.integers(0, 2, n) for _ in range(2)]
    if kind == "counts":  # (tp, fp, fn) against one gold count per entry
        gold = rng.integers(0, 6, n)
        tps = [rng.integers(0, gold + 1) for _ in range(2)]
        return [np.column_stack([tp, rng.integers(0, 3, n), gold - tp]) for tp in tps]
    if kind == "wide":  # |x - y| beyond a byte: the integer route forms x - y itself
        return [rng.integers(0, 1000, n) for _ in range(2)]
    if kind == "series":
        return [pd.Series(rng.integers(0, 9, n)) for _ in range(2)]
    if kind == "real":
        return [rng.normal(0.5, 0.2, n) for _ in range(2)]
    return [rng.integers(0, 9, n) for _ in range(2)]


TESTS_HOLDING_AN_INTERVAL = {
    "permutation_test": ("small", lambda x, y: pairperm.permutation_test(x, y)),
    "permutation_test wide": ("wide", lambda x, y: pairperm.permutation_test(x, y)),
    "permutation_test exact": ("small", lambda x, y: pairperm.permutation_test(x, y, method="dp")),
    "permutation_test real": ("real", lambda x, y: pairperm.permutation_test(x, y, rng=0)),
    "permutation_test Series": ("series", pairperm.permutation_test),
    "monte_carlo_test": ("small", lambda x, y: pairperm.monte_carlo_test(x - y, y - x, n_resamples=99, rng=0)),
    "mcnemar_test": ("binary", pairperm.mcnemar_test),
    "compare accuracy": ("binary", lambda x, y: pairperm.compare(x, y, "accuracy")),
    "compare sum": ("small", lambda x, y: pairperm.compare(x, y, "sum")),
    "bootstrap_test": ("real", lambda x, y: pairperm.bootstrap_test(x, y, n_resamples=199, rng=0)),
    "f1_test": ("counts", lambda x, y: pairperm.f1_test(x, y, rng=0)),
}


@pytest.mark.parametrize("name", sorted(TESTS_HOLDING_AN_INTERVAL))
def test_results_do_not_read_the_callers_arrays_after_returning(name):
    # The interval and the pickle of a result come from what the test read, whatever the
    # caller does with its arrays afterwards (a harness refills one buffer per system).
    kind, test = TESTS_HOLDING_AN_INTERVAL[name]
    rng = np.random.default_rng(4)
    x, y = _scores_of(kind, rng, 400)
    want = test(x.copy(), y.copy())
    r = test(x, y)
    for a in (x, y):
        if isinstance(a, pd.Series):
            a.iloc[:] = 0
        else:
            a[...] = 0
    assert r.confidence_interval(0.9) == want.confidence_interval(0.9)
    assert pickle.loads(pickle.dumps(r)).confidence_interval(0.9) == want.confidence_interval(0.9)


@pytest.mark.parametrize("n", [1, 15, 17, 2047, 2049, 5000, 6159, 2**21 + 17])
def test_the_integer_route_writes_the_differences_in_its_summary_pass(n):
    # x - y comes back from the core's one pass as bytes, written block by block (2048 a block,
    # the last one short); an interval reads them as int64.
    rng = np.random.default_rng(12)
    x, y = rng.integers(-100, 27, n), rng.integers(0, 27, n)
    r = pairperm.permutation_test(x, y)
    assert np.array_equal(np.frombuffer(r._effect.differences._d, dtype=np.int8), x - y)
    assert r._effect.differences.d.dtype == np.int64 and np.array_equal(r._effect.differences.d, x - y)
    want = pairperm.shift_interval(x, y, confidence_level=0.9).sum_difference
    assert r.confidence_interval(0.9) == pickle.loads(pickle.dumps(r)).confidence_interval(0.9) == want

