"""Tilted importance sampling for smooth statistics of summed effects (BLEU, chrF, macro-F1, callables):
checked against exact enumeration of all 2^n swap patterns, the exact F1 engine and plain Monte Carlo."""

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

import pairperm
from pairperm import BLEU_COLUMNS, CHRF_COLUMNS
from pairperm._metrics import bleu_from_sums, chrf_from_sums, f1_from_sums
from reference import brute_force_stat_pvalue
from synthetic import random_counts, separated_f1_data


def bleu_stats(rng, n, quality, max_len=12):
    """Per-sentence BLEU statistics in BLEU_COLUMNS order; `quality` scales the n-gram precisions."""
    ref = rng.integers(3, max_len, n)
    hyp = np.maximum(1, ref + rng.integers(-2, 3, n))
    total = np.stack([np.maximum(hyp - k, 0) for k in range(4)], axis=1)
    correct = rng.binomial(total, np.clip(quality * np.array([1.0, 0.75, 0.55, 0.4]), 0, 1))
    return np.concatenate([hyp[:, None], ref[:, None], correct, total], axis=1)


def chrf_statistics(hypothesis, reference, orders=6):
    """sacrebleu's per-sentence chrF statistics (whitespace removed; per character n-gram
    order: hypothesis n-grams, reference n-grams, clipped matches), in CHRF_COLUMNS order."""
    h, r = "".join(hypothesis.split()), "".join(reference.split())
    out = []
    for n in range(1, orders + 1):
        hc = Counter(h[i:i + n] for i in range(len(h) - n + 1))
        rc = Counter(r[i:i + n] for i in range(len(r) - n + 1))
        out += [sum(hc.values()), sum(rc.values()), sum((hc & rc).values())]
    return out


def chrf_stats(rng, n, quality):
    """Random per-sentence chrF statistics; `quality` is the share of n-grams matched."""
    hyp = rng.integers(4, 30, n)[:, None] - np.arange(6)
    ref = np.maximum(hyp + rng.integers(-3, 4, (n, 1)), 0)
    match = rng.binomial(np.minimum(np.maximum(hyp, 0), ref), quality * np.linspace(1.0, 0.6, 6))
    return np.stack([np.maximum(hyp, 0), ref, match], axis=2).reshape(n, 18)


def brute_force_difference_pvalue(x, y, metric, alternative):
    """metric(A) - metric(B) over all 2^n swaps of whole entries, evaluated in float64 (a
    vectorised metric of summed statistics), ties within 1e-12 relative as the library's rtol."""
    n = len(x)
    patterns = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64)
    a = patterns.reshape(-1, n, *([1] * (x.ndim - 1)))
    sa = ((1 - a) * x + a * y).sum(axis=1).astype(np.float64)
    sb = ((1 - a) * y + a * x).sum(axis=1).astype(np.float64)
    h = metric(sa) - metric(sb)
    h_obs = float(metric(x.sum(axis=0)[None].astype(np.float64))[0] - metric(y.sum(axis=0)[None].astype(np.float64))[0])
    slack = 1e-12 * abs(h_obs)
    if alternative == "greater":
        hit = h >= h_obs - slack
    elif alternative == "less":
        hit = h <= h_obs + slack
    else:
        hit = np.abs(h) >= abs(h_obs) - slack
    return np.count_nonzero(hit) / len(h)


def macro_f1(s):
    return f1_from_sums(s).mean(axis=-1)


def covers(result, exact):
    lo, hi = result.pvalue_ci
    return lo <= exact <= hi


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_bleu_matches_enumeration_of_all_swap_patterns(alternative):
    rng = np.random.default_rng(3)
    x, y = bleu_stats(rng, 14, 0.75), bleu_stats(rng, 14, 0.45)
    exact = brute_force_difference_pvalue(x, y, bleu_from_sums, alternative)
    r = pairperm.compare(x, y, "bleu", alternative=alternative, rng=4)
    assert r.result.engine == "importance_sampling" and r.result.method == "importance_sampling"
    assert covers(r.result, exact)
    assert r.pvalue == pytest.approx(exact, rel=0.1)
    assert r.pvalue > 0 and r.result.log_pvalue == pytest.approx(math.log(r.pvalue))


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_macro_f1_matches_enumeration_in_fractions(alternative):
    rng = np.random.default_rng(7)
    classes = [random_counts(rng, 12, recall=(0.9, 0.3)) for _ in range(2)]
    x = np.stack([c[0] for c in classes], axis=1)  # (N, C, 3)
    y = np.stack([c[1] for c in classes], axis=1)

    def exact_macro_f1_difference(s):
        def f1(tp, fp, fn):
            den = 2 * tp + fp + fn
            return Fraction(0) if den == 0 else Fraction(2 * tp, den)
        return (sum(f1(*s[3 * c:3 * c + 3]) for c in range(2)) - sum(f1(*s[6 + 3 * c:9 + 3 * c]) for c in range(2))) / 2

    n = len(x)
    fx, fy = x.reshape(n, -1), y.reshape(n, -1)
    exact = brute_force_stat_pvalue(np.c_[fx, fy], np.c_[fy, fx], exact_macro_f1_difference, alternative)
    r = pairperm.compare(x, y, "macro_f1", alternative=alternative, rng=1)
    assert r.result.engine == "importance_sampling"
    assert covers(r.result, float(exact))
    assert r.pvalue == pytest.approx(float(exact), rel=0.1)


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_f1_as_a_smooth_statistic_matches_the_exact_f1_engine_deep_in_the_tail(alternative):
    a, b = separated_f1_data(n=400, seed=2)
    exact = pairperm.f1_test(a, b, alternative=alternative)
    assert exact.pvalue < 1e-20
    r = pairperm.compare(a, b, lambda s: f1_from_sums(s), alternative=alternative, rng=0)
    assert r.result.engine == "importance_sampling"
    assert r.statistic == pytest.approx(exact.statistic)
    lo, hi = r.result.log_pvalue_ci
    assert lo <= exact.log_pvalue <= hi
    lo, hi = r.result.pvalue_ci
    assert (hi - lo) / 2 <= 0.05 * r.pvalue  # pooled until the relative half-width is at most 5%


def test_log_pvalue_past_float64_underflow():
    a, b = separated_f1_data(n=6000, seed=1)
    exact = pairperm.f1_test(a, b, alternative="greater")
    assert exact.log_pvalue < math.log(1e-320)
    r = pairperm.compare(a, b, lambda s: f1_from_sums(s), alternative="greater", rng=0)
    lo, hi = r.result.log_pvalue_ci
    assert lo <= exact.log_pvalue <= hi
    assert r.result.log_pvalue == pytest.approx(exact.log_pvalue, rel=0.01)
    assert not r.result.pvalue_is_bound


def test_a_corner_of_probability_two_to_the_minus_n_is_still_hit():
    # Every one of N = 2e5 entries must swap: the tilt wants q within 2^-17 of 1, where the
    # sampler's 2^-16 grid would cap it and hit the corner in (1 - 2^-16)^N ~ 5% of samples;
    # the finer grid there keeps most samples in it.
    n = 200_000
    r = pairperm.monte_carlo_test(np.ones(n, np.int64), -np.ones(n, np.int64), lambda s: s**3, alternative="greater",
                                  method="importance_sampling", n_resamples=1000, rng=0)
    lo, hi = r.log_pvalue_ci
    assert lo <= -n * math.log(2.0) <= hi and hi - lo < 0.2
    assert r.hits >= r.n_resamples // 2 and not r.pvalue_is_bound


def test_agrees_with_plain_monte_carlo_where_that_resolves_p():
    rng = np.random.default_rng(11)
    x, y = bleu_stats(rng, 300, 0.52), bleu_stats(rng, 300, 0.5)
    mc = pairperm.compare(x, y, "bleu", method="monte_carlo", n_resamples=200_000, rng=1).result
    assert mc.pvalue > 1e-3
    tilted = pairperm.compare(x, y, "bleu", rng=1).result
    # Two independent 95% intervals of the same p-value overlap.
    assert tilted.pvalue_ci[0] <= mc.pvalue_ci[1] and mc.pvalue_ci[0] <= tilted.pvalue_ci[1]


def test_chrf_from_statistics_equals_sacrebleus_published_scores():
    # Scores printed by the chrF metric card of Hugging Face datasets (sacrebleu 2, chrF,
    # beta 2): one sentence, and a corpus of two.
    one = chrf_statistics("The relationship between Obama and Netanyahu is not exactly friendly.",
                          "The ties between Obama and Netanyahu are not particularly friendly.")
    assert chrf_from_sums(np.array(one, dtype=np.float64)) == pytest.approx(61.576379378113785, rel=1e-12)
    pairs = [("The relationship between cats and dogs is not exactly friendly.",
              "The relationship between dogs and cats is not exactly friendly."),
             ("a good bookshop is just a genteel black hole that knows how to read.",
              "A good bookshop is just a genteel Black Hole that knows how to read.")]
    corpus = np.array([chrf_statistics(h, r) for h, r in pairs]).sum(axis=0)
    assert chrf_from_sums(corpus.astype(np.float64)) == pytest.approx(84.64214891738334, rel=1e-12)
    assert len(CHRF_COLUMNS) == 18 and CHRF_COLUMNS[:3] == ("hyp_1", "ref_1", "match_1")
    # Orders without n-grams on either side are left out of the averages; none at all gives 0.
    short = chrf_statistics("ab", "abc")
    assert chrf_from_sums(np.array(short, dtype=np.float64)) == chrf_from_sums(np.array(short[:6], dtype=np.float64))
    assert chrf_from_sums(np.zeros(18)) == 0.0


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_corpus_chrf_matches_enumeration_of_all_swap_patterns(alternative):
    rng = np.random.default_rng(8)
    x, y = chrf_stats(rng, 14, 0.8), chrf_stats(rng, 14, 0.5)
    exact = brute_force_difference_pvalue(x, y, chrf_from_sums, alternative)
    assert exact < 0.01
    r = pairperm.compare(x, y, "corpus_chrf", alternative=alternative, rng=4)
    assert r.result.engine == "importance_sampling"
    assert covers(r.result, exact) and r.pvalue == pytest.approx(exact, rel=0.1)
    res = pairperm.compare_systems({"x": x, "y": y}, "corpus_chrf", alternative=alternative, rng=4)
    assert res.rows[0].metric_a == pytest.approx(float(chrf_from_sums(x.sum(axis=0).astype(float))), rel=1e-12)
    with pytest.raises(ValueError, match="corpus_chrf"):
        pairperm.compare(x, y, "chrf")  # per-sentence scores are real numbers, not statistics
    with pytest.raises(ValueError, match=r"\(N, 3k"):
        pairperm.compare(x[:, :17], y[:, :17], "corpus_chrf")


def test_interval_coverage_on_several_shapes():
    """60 seeds x 4 shapes at a small n_resamples (where the interval is widest and most skewed),
    each against the exact p-value by enumeration. At the nominal 95% the number of misses is
    Binomial(240, 0.05), mean 12: 23 or more happens with probability ~0.3%, while an interval
    covering only 90% would miss 24 on average."""
    rng = np.random.default_rng(5)
    shapes = []
    x, y = bleu_stats(rng, 12, 0.8), bleu_stats(rng, 12, 0.45)
    shapes.append((x, y, bleu_from_sums))
    ca, cb = random_counts(rng, 12, recall=(0.95, 0.3))
    shapes.append((ca, cb, f1_from_sums))
    classes = [random_counts(rng, 12, recall=(0.9, 0.4)) for _ in range(2)]
    shapes.append((np.stack([c[0] for c in classes], 1), np.stack([c[1] for c in classes], 1), macro_f1))
    shapes.append((chrf_stats(rng, 12, 0.85), chrf_stats(rng, 12, 0.45), chrf_from_sums))
    misses = 0
    for x, y, metric in shapes:
        exact = brute_force_difference_pvalue(x, y, metric, "two-sided")
        assert exact < 0.05
        for seed in range(60):
            r = pairperm.compare(x, y, metric, n_resamples=500, rng=seed).result
            misses += not covers(r, exact)
    assert misses < 23


def test_explicit_methods_and_bad_arguments():
    rng = np.random.default_rng(0)
    x, y = bleu_stats(rng, 40, 0.6), bleu_stats(rng, 40, 0.5)
    with pytest.warns(pairperm.PrecisionWarning, match="floor"):
        assert pairperm.compare(x, y, "bleu", method="monte_carlo", rng=0).result.engine == "monte_carlo"
    assert pairperm.compare(x, y, "bleu", method="importance_sampling", rng=0).result.engine == "importance_sampling"
    with pytest.raises(ValueError, match="method"):
        pairperm.compare(x, y, "bleu", method="exact")
    stay, swap = np.c_[x, y], np.c_[y, x]
    with pytest.raises(ValueError, match="callable statistic"):
        pairperm.monte_carlo_test(stay[:, 0], swap[:, 0], method="importance_sampling")
    with pytest.raises(ValueError, match="alpha"):
        pairperm.monte_carlo_test(stay, swap, lambda s: s[:, 0] - s[:, 10], method="importance_sampling", alpha=0.05)
    with pytest.raises(ValueError, match="method must be one of"):
        pairperm.monte_carlo_test(stay, swap, lambda s: s[:, 0], method="dp")


def test_same_seed_same_result_and_the_observed_state_counts():
    rng = np.random.default_rng(1)
    x, y = bleu_stats(rng, 30, 0.6), bleu_stats(rng, 30, 0.5)
    r1 = pairperm.compare(x, y, "bleu", rng=3).result
    r2 = pairperm.compare(x, y, "bleu", rng=3).result
    assert r1 == r2
    # An extreme observed state: the p-value is never below its own probability 2^-n.
    top = np.tile(bleu_stats(np.random.default_rng(2), 1, 1.0), (3, 1))
    low = np.tile(bleu_stats(np.random.default_rng(2), 1, 0.0), (3, 1))
    r = pairperm.compare(top, low, "bleu", alternative="greater", rng=0).result
    assert covers(r, 1 / 8) and r.pvalue >= 1 / 8
    assert len(BLEU_COLUMNS) == x.shape[1]


def test_plain_monte_carlo_says_when_its_pvalue_is_the_floor():
    rng = np.random.default_rng(8)
    x, y = bleu_stats(rng, 400, 0.8), bleu_stats(rng, 400, 0.5)
    with pytest.warns(pairperm.PrecisionWarning, match="floor"):
        r = pairperm.compare(x, y, "bleu", method="monte_carlo", n_resamples=999, rng=0).result
    assert r.hits == 0 and r.pvalue == 1 / 1000 and r.pvalue_is_floor
    assert r.to_dict()["pvalue_is_floor"] is True
    deep = pairperm.compare(x, y, "bleu", rng=0).result  # the default resolves it
    assert deep.pvalue < 1e-10 and not deep.pvalue_is_floor
    resolved = pairperm.monte_carlo_test([2, -1, 3, 0, 1], [-2, 1, -3, 0, -1], n_resamples=999, rng=0)
    assert resolved.hits > 0 and not resolved.pvalue_is_floor


def test_cli_reports_a_monte_carlo_pvalue_at_the_floor(tmp_path, capsys):
    from pairperm.cli import main

    x = np.r_[np.full(300, 5), np.zeros(10, dtype=np.int64)]
    y = np.r_[np.full(300, 4), np.zeros(10, dtype=np.int64)]
    f = tmp_path / "acc.csv"
    f.write_text("".join(f"{a},{b}\n" for a, b in zip(x, y)))
    assert main(["test", str(f), "--mc", "999"]) == 0
    assert "the sampler's floor" in capsys.readouterr().out
    assert main(["test", str(f), "--mc", "999", "--format", "json"]) == 0
    assert '"pvalue_is_floor": true' in capsys.readouterr().out


def test_no_sample_in_the_region_reports_a_flagged_bound_never_zero():
    # A statistic flat at the observed point (S_obs = -800, inside the box [-1200, 1200]): its
    # gradient is 0, so nothing tilts, and its region {S == -800} is the observed state alone
    # (p = 2^-201), which the untilted sampler never draws.
    stay = np.r_[np.ones(200, dtype=np.int64), -1000]
    with pytest.warns(pairperm.PrecisionWarning, match="linearised tail"):
        r = pairperm.monte_carlo_test(stay, -stay, lambda s: -((s + 800) ** 2), alternative="greater",
                                      method="importance_sampling", n_resamples=1000, rng=0)
    assert r.pvalue_is_bound and r.hits == 0 and r.pvalue > 0
    assert r.log_pvalue_ci[0] <= -201 * math.log(2) <= r.log_pvalue_ci[1]


@pytest.mark.parametrize("grid", [False, True])
@pytest.mark.parametrize("n", [1, 2, 7, 4001])
def test_the_samplers_integer_lanes_sum_as_the_all_double_kernel(n, grid):
    # Columns of small integers are summed in 16-bit lanes (emptied before they overflow),
    # the rest in doubles; more than eight real columns take the all-double kernel. With the
    # same seed both see the same swaps, and the sums agree bit for bit.
    from pairperm import _core
    rng = np.random.default_rng(n)
    ints = rng.integers(-2047, 2048, (n, 10)).astype(np.float64)
    cols = np.ascontiguousarray(np.concatenate([ints, rng.normal(size=(n, 2))], axis=1))
    one = _core.tilted_threshold_one
    thresholds = rng.integers(0, one + 1, n).astype(np.uint64)
    if grid:  # all on the 2^-16 grid: the kernels that never test for ties
        thresholds &= ~np.uint64(0xFFFF)
    wide = np.ascontiguousarray(np.concatenate([cols, rng.normal(size=(n, 9))], axis=1))
    split = _core.tilted_sample_sums(cols, thresholds, 600, 7, 1)
    np.testing.assert_array_equal(split, _core.tilted_sample_sums(wide, thresholds, 600, 7, 2)[:, :12])
    every = _core.tilted_sample_sums(cols, np.full(n, one, dtype=np.uint64), 2, 1, 1)  # every entry swaps
    assert every[0, :10].tolist() == ints.sum(axis=0).tolist()


def test_the_sampler_swaps_each_entry_with_exactly_its_thresholds_probability():
    # Entry n swaps with probability thresholds[n] / tilted_threshold_one, independently of the
    # entries decided from the same random word; unit columns count each entry's swaps.
    from pairperm import _core
    one = _core.tilted_threshold_one
    thresholds = np.array([0, 1, one // 3, one // 2, one - 1, one, 0x303910E1, one // 2, 0x03098000, one * 3 // 4,
                           0x00059C40, one // 2, 4000 << 16], dtype=np.uint64)
    n, k = len(thresholds), 400_000
    swaps = _core.tilted_sample_sums(np.eye(n), thresholds, k, 11, 2)
    assert set(np.unique(swaps)) <= {0.0, 1.0}
    q = thresholds / one
    assert swaps[:, 0].sum() == 0 and swaps[:, 5].sum() == k
    z = (swaps.sum(axis=0) - k * q) / np.sqrt(np.maximum(k * q * (1 - q), 1e-300))
    assert np.all(np.abs(z[q * (1 - q) > 0]) < 5), z
    # Entries 2 and 3 share a random word (3 and 4, 7 and 11 do not): all swap independently.
    for a, b in ((2, 3), (3, 4), (7, 11)):
        both, p = (swaps[:, a] * swaps[:, b]).sum(), q[a] * q[b]
        assert abs(both - k * p) < 5 * math.sqrt(k * p * (1 - p))
    with pytest.raises(ValueError, match="at most"):
        _core.tilted_sample_sums(np.eye(2), np.array([0, one + 1], dtype=np.uint64), 1, 0)


@pytest.mark.parametrize("lead,low", [(0, 1 << 14), (3, 1 << 15), (3, 0), (0, 0xFFFF)])
def test_the_samplers_last_16_bits_count_where_the_first_16_tie(lead, low):
    # A threshold's leading 16 bits settle most swaps; the other 16 only when a uniform's
    # leading 16 bits equal them (probability 2^-16), so they are seen over ~10^8 draws: all
    # 2000 entries with threshold lead * 2^16 + low, 40,000 resamples of their swap count.
    from pairperm import _core
    n, k = 2000, 40_000
    t = (lead << 16) + low
    total = _core.tilted_sample_sums(np.ones((n, 1)), np.full(n, t, dtype=np.uint64), k, 3, 2).sum()
    p = t / _core.tilted_threshold_one
    mean, sd = n * k * p, math.sqrt(n * k * p * (1 - p))
    assert abs(total - mean) < 5 * sd, (total, mean, sd)
