"""Paired bootstrap: metric formulas, an independent NumPy bootstrap, the BK rule, seeding."""

import math

import numpy as np
import pytest

import pairperm
from pairperm import _core, datasets
from pairperm._metrics import bleu_from_sums
from pairperm._resampling import _BLOCK_ELEMENTS, percentiles
from pairperm._sampling import block_seed, seed_from_rng
from reference import ALTERNATIVES


def test_counts_are_multinomial_and_fused_sums_match():
    c = _core.bootstrap_counts(50, 300, 7)
    assert c.shape == (300, 50) and np.all(c.sum(axis=1) == 50) and np.all(c == np.floor(c))
    assert abs(c.mean() - 1.0) < 0.02  # E[count] = 1
    assert abs(c.var() - (1 - 1 / 50)) < 0.05  # Var = n p (1 - p)
    stats = np.random.default_rng(0).random((50, 4))
    assert np.allclose(c @ stats, _core.bootstrap_sums(stats, 300, 7), rtol=1e-12)
    assert np.array_equal(_core.bootstrap_counts(50, 300, 7, 1), _core.bootstrap_counts(50, 300, 7, 2))


def numpy_bootstrap(a, b, metric, k, seed):
    rng = np.random.default_rng(seed)
    n = len(a)
    out = np.empty(k)
    for i in range(k):  # the textbook loop, deliberately independent of the library
        idx = rng.integers(0, n, n)
        out[i] = metric(a[idx].sum(0)) - metric(b[idx].sum(0))
    return out


def test_mean_against_numpy_bootstrap():
    rng = np.random.default_rng(1)
    a = rng.normal(0.05, 1, 300)
    b = rng.normal(0.0, 1, 300)
    k = 3000
    r = pairperm.bootstrap_test(a, b, "mean", n_resamples=k, rng=2, alternative="greater")
    ref = numpy_bootstrap(a, b, lambda s: s / 300, k, seed=3)
    delta = a.mean() - b.mean()
    assert r.statistic == pytest.approx(delta)
    p_ref = np.mean(ref >= 2 * delta)  # ties count, as in the library's rule
    assert abs(r.pvalue - p_ref) < 5 * math.sqrt(2 * p_ref * (1 - p_ref) / k)
    # percentile CI: endpoints agree within a few bootstrap standard errors of a quantile
    sd = ref.std()
    lo, hi = r.confidence_interval
    assert abs(lo - np.quantile(ref, 0.025)) < 0.15 * sd
    assert abs(hi - np.quantile(ref, 0.975)) < 0.15 * sd
    assert r.pvalue == (1 + np.count_nonzero(r.bootstrap_distribution >= 2 * delta)) / (1 + k)


def test_ties_at_twice_delta_are_hits_on_binary_scores():
    """The tie rule in exact integers: on 0/1 scores many resamples land exactly on 2 delta (and
    on 0, the two-sided rule's other end), and every one of them is a hit."""
    n, k, seed = 32, 2000, 7
    d = np.array([1] * 12 + [-1] * 5 + [0] * 15)
    a = np.where(d == 1, 1, np.where(d == -1, 0, np.arange(n) % 2))
    b = a - d
    assert set(a) | set(b) == {0, 1}
    # One block of resamples (one seeded stream): the count vectors the test draws, as integers.
    assert k <= _BLOCK_ELEMENTS // n
    counts = np.rint(_core.bootstrap_counts(n, k, block_seed(seed_from_rng(seed), 0))).astype(np.int64)
    assert counts.shape == (k, n) and np.all(counts.sum(axis=1) == n)
    for x, y in ((a, b), (b, a)):
        n_delta = int((x - y).sum())  # n times delta
        n_deltas = counts @ (x - y)  # n times each resample's delta, exact
        for alternative in ALTERNATIVES:
            r = pairperm.bootstrap_test(x, y, n_resamples=k, rng=seed, alternative=alternative)
            # Means of 32 integers are multiples of 2^-5: the library's float deltas are exact.
            assert np.array_equal(r.bootstrap_distribution * n, n_deltas)
            if alternative == "greater":
                hit, tie = n_deltas >= 2 * n_delta, n_deltas == 2 * n_delta
            elif alternative == "less":
                hit, tie = n_deltas <= 2 * n_delta, n_deltas == 2 * n_delta
            else:
                hit, tie = abs(n_deltas - n_delta) >= abs(n_delta), abs(n_deltas - n_delta) == abs(n_delta)
            assert np.count_nonzero(tie) >= 10, (alternative, np.count_nonzero(tie))
            assert r.hits == np.count_nonzero(hit), alternative
            assert r.pvalue == (1 + np.count_nonzero(hit)) / (1 + k)


def f1(t):
    return 2 * t[0] / (2 * t[0] + t[1] + t[2]) if (2 * t[0] + t[1] + t[2]) else 0.0


def test_f1_against_numpy_bootstrap():
    a, b = datasets.ner_like(300, seed=4)
    k = 3000
    r = pairperm.bootstrap_test(a, b, "f1", n_resamples=k, rng=5)
    assert r.metric_a == pytest.approx(f1(a.sum(0)))
    assert r.metric_b == pytest.approx(f1(b.sum(0)))
    ref = numpy_bootstrap(a, b, f1, k, seed=6)
    delta = r.statistic
    p_ref = np.mean(np.abs(ref - delta) >= abs(delta))
    assert abs(r.pvalue - p_ref) < 5 * math.sqrt(2 * p_ref * (1 - p_ref) / k) + 1e-3
    assert r.pvalue == (1 + np.count_nonzero(np.abs(r.bootstrap_distribution - delta) >= abs(delta))) / (1 + k)
    assert abs(r.bootstrap_distribution.std() - ref.std()) < 0.1 * ref.std()


def test_macro_f1_value_and_less_rule():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, (200, 5, 3))
    b = rng.integers(0, 4, (200, 5, 3))
    r = pairperm.bootstrap_test(a, b, "macro_f1", n_resamples=500, rng=1, alternative="less")
    assert r.metric_a == pytest.approx(np.mean([f1(a[:, c].sum(0)) for c in range(5)]))
    assert r.pvalue == (1 + np.count_nonzero(r.bootstrap_distribution <= 2 * r.statistic)) / 501


def bleu_reference(s):
    """Scalar corpus BLEU from (hyp_len, ref_len, correct_1..4, total_1..4), sacrebleu's 'exp' smoothing."""
    hyp, ref, correct, total = s[0], s[1], s[2:6], s[6:10]
    if hyp == 0 or min(total) == 0:
        return 0.0
    logs, smooth = [], 1.0
    for c, t in zip(correct, total):
        if c == 0:
            smooth *= 2
            logs.append(math.log(1 / (smooth * t)))
        else:
            logs.append(math.log(c / t))
    bp = 1.0 if hyp >= ref else math.exp(1 - ref / hyp)
    return 100 * bp * math.exp(sum(logs) / 4)


def test_bleu_formula():
    rng = np.random.default_rng(8)
    rows = []
    for _ in range(300):
        total = rng.integers(0, 30, 4)
        correct = np.minimum(total, rng.integers(0, 12, 4)) * rng.integers(0, 2, 4)
        rows.append([rng.integers(0, 40), rng.integers(1, 40), *correct, *total])
    s = np.array(rows, dtype=float)
    got = bleu_from_sums(s)
    want = np.array([bleu_reference(r) for r in s])
    assert np.allclose(got, want, rtol=1e-12, atol=0)
    # A value one can check by hand: perfect 4-gram precision, short hypothesis.
    assert bleu_from_sums(np.array([[9, 10, 9, 8, 7, 6, 9, 8, 7, 6]]))[0] == pytest.approx(100 * math.exp(1 - 10 / 9))


def test_bleu_bootstrap_and_callable_agree():
    rng = np.random.default_rng(9)
    total = rng.integers(5, 30, (400, 4))
    a = np.c_[total[:, 0], total[:, 0] + 1, (total * 0.6).astype(int), total]
    b = np.c_[total[:, 0], total[:, 0] + 1, (total * 0.55).astype(int), total]
    r1 = pairperm.bootstrap_test(a, b, "bleu", n_resamples=800, rng=3)
    r2 = pairperm.bootstrap_test(a, b, bleu_from_sums, n_resamples=800, rng=3)
    assert r1.statistic == pytest.approx(bleu_reference(a.sum(0)) - bleu_reference(b.sum(0)))
    assert np.array_equal(r1.bootstrap_distribution, r2.bootstrap_distribution)


def test_seeded_repeat_and_block_independence():
    x, y = datasets.stanza_pos_like(3000)
    r1 = pairperm.bootstrap_test(x, y, n_resamples=2000, rng=12)
    r2 = pairperm.bootstrap_test(x, y, n_resamples=2000, rng=12)
    r3 = pairperm.bootstrap_test(x, y, n_resamples=2000, rng=13)
    assert r1 == r2 and np.array_equal(r1.bootstrap_distribution, r2.bootstrap_distribution)
    assert not np.array_equal(r1.bootstrap_distribution, r3.bootstrap_distribution)


def test_wide_statistics_use_blas_path_consistently():
    rng = np.random.default_rng(10)
    a = rng.integers(0, 3, (100, 20, 3))  # 120 columns per system > fused limit
    b = rng.integers(0, 3, (100, 20, 3))
    r = pairperm.bootstrap_test(a, b, "macro_f1", n_resamples=300, rng=2)
    ref = pairperm.bootstrap_test(a, b, lambda s: pairperm._metrics.f1_from_sums(s).mean(-1),
                                  n_resamples=300, rng=2)
    assert np.allclose(r.bootstrap_distribution, ref.bootstrap_distribution)


def test_f1_of_tp_errors_counts():
    # (tp, errors), as the reference implementation writes them: F1 = 2 TP / (2 TP + errors).
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 4, (40, 2)), rng.integers(0, 4, (40, 2))
    r = pairperm.bootstrap_test(a, b, "f1", n_resamples=300, rng=1)
    f1 = [2 * s[0] / (2 * s[0] + s[1]) for s in (a.sum(axis=0), b.sum(axis=0))]
    assert r.metric_a == pytest.approx(f1[0], rel=1e-15) and r.metric_b == pytest.approx(f1[1], rel=1e-15)
    with pytest.raises(ValueError, match=r"beta != 1 needs \(N, 3\) inputs"):
        pairperm.bootstrap_test(a, b, "f1", beta=2.0)


def test_bad_input():
    with pytest.raises(ValueError, match=r"\(N, 3\) tp/fp/fn, or \(N, 2\)"):
        pairperm.bootstrap_test(np.ones((5, 4)), np.ones((5, 4)), "f1")
    with pytest.raises(ValueError, match="non-negative"):
        pairperm.bootstrap_test(-np.ones((5, 3)), np.ones((5, 3)), "f1")
    with pytest.raises(ValueError, match="metric"):
        pairperm.bootstrap_test([1.0], [2.0], "rouge")
    with pytest.raises(ValueError, match="empty"):
        pairperm.bootstrap_test([], [], "mean")
    with pytest.raises(ValueError, match="same length"):
        pairperm.bootstrap_test([1.0, 2.0], [2.0], "mean")
    with pytest.raises(ValueError, match="shape"):
        pairperm.bootstrap_test([1.0, 2.0], [2.0, 1.0], lambda s: s[:1])


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_identical_systems_give_p_one(alternative):
    a = np.random.default_rng(0).normal(size=200)
    r = pairperm.bootstrap_test(a, a, n_resamples=500, rng=0, alternative=alternative)
    assert r.statistic == 0 and r.pvalue == 1.0


def test_bootstrap_pvalue_is_never_zero():
    a = np.ones(50)
    b = np.zeros(50)
    b[0] = 0.5
    # Every resample has delta_i <= 1 < 2 delta: no hit, and p = 1 / (1 + K), not 0.
    r = pairperm.bootstrap_test(a, b, n_resamples=200, rng=0, alternative="greater")
    assert r.pvalue == 1 / 201


@pytest.mark.parametrize("x, y", [([3, 3, 3], [2, 2, 2]), ([3.0], [2.0]), ([3.0, 5.0, 7.0], [2.0, 4.0, 6.0])])
def test_bootstrap_refuses_data_whose_resamples_cannot_vary(x, y):
    """One entry, or the same difference on every entry: every resample has the observed
    difference, so the bootstrap can only report its floor 1/(1 + K); it says so instead."""
    with pytest.raises(ValueError, match="same difference"):
        pairperm.bootstrap_test(x, y, rng=0)


def test_bootstrap_identical_systems_still_give_one():
    assert pairperm.bootstrap_test([3, 1, 2], [3, 1, 2], rng=0).pvalue == 1.0


def test_bootstrap_peak_memory_is_what_its_guard_counts():
    import tracemalloc

    from pairperm._bootstrap import _PEAK_BYTES_PER_RESAMPLE

    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    y = x + rng.normal(size=50)
    pairperm.bootstrap_test(x, y, n_resamples=100, rng=0)  # imports and caches outside the measurement
    k = 2_000_000
    tracemalloc.start()
    try:
        pairperm.bootstrap_test(x, y, n_resamples=k, rng=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= (_PEAK_BYTES_PER_RESAMPLE + 1) * k


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_percentiles_are_numpys_quantiles_bit_for_bit():
    rng = np.random.default_rng(3)
    for trial in range(3000):
        n = int(rng.integers(1, 40)) if trial % 2 else int(rng.integers(40, 3000))
        v = rng.normal(size=n)
        if trial % 5 == 1:
            v = np.round(v * 3) / 3  # ties
        elif trial % 5 == 2:
            v = rng.integers(-3, 4, n) * np.where(rng.random(n) < 0.5, -0.0, 1.0)  # zeros of both signs
        elif trial % 5 == 3:
            v[rng.integers(0, n)] = rng.choice([np.inf, -np.inf, np.nan])
        levels = rng.random(2) if trial % 3 else np.array([[0.0, 1.0], [0.025, 0.975], [0.5, 0.5]][trial % 9 // 3])
        want, got = np.quantile(v, levels), percentiles(v.copy(), levels)
        assert np.array_equal(want, got, equal_nan=True), (trial, v, levels)
        assert np.array_equal(np.signbit(want), np.signbit(got)), (trial, v, levels)
    for levels in ([-0.1, 0.5], [0.5, 1.1], [np.nan, 0.5]):
        with pytest.raises(ValueError, match="Quantiles must be in the range"):
            np.quantile(v, levels)
        with pytest.raises(ValueError, match="Quantiles must be in the range"):
            percentiles(v, levels)


def test_intervals_never_enter_np_quantile(monkeypatch):
    """np.quantile hands its indexes to np.unique, which in NumPy 2.4 takes the GIL back in a C++
    destructor: a daemon thread inside it at interpreter exit aborts the process. Every
    bootstrap interval goes through percentiles instead."""

    def refuse(*args, **kwargs):
        raise AssertionError("np.quantile called")

    monkeypatch.setattr(np, "quantile", refuse)
    monkeypatch.setattr(np, "percentile", refuse)
    rng = np.random.default_rng(0)
    x = rng.random(300)
    y = x + rng.normal(0.02, 0.2, 300)
    pairperm.bootstrap_test(x, y, n_resamples=500, rng=1)
    for method in ("percentile", "bca"):
        pairperm.bootstrap_intervals([x, y], "mean", method=method, n_resamples=500, rng=1)
    a, b = datasets.ner_like(300, seed=1)
    pairperm.f1_test(a, b).confidence_interval(n_resamples=500)
    pairperm.compare_systems({"a": x, "b": y, "c": x + 0.05}, "mean", n_jobs=1, progress=False)
