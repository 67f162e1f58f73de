"""Tilted importance sampling with the linearised tail's exact probability as a control variate
(pairperm._smooth_control): the control's mean is the exact null probability of its regions (all
2^n swap patterns counted), the estimate is unbiased whatever the control's coefficient, its
interval stays open where every sample agrees with the control, and the intervals cover the
exact p-value of BLEU, chrF, macro-F1 and F1 shaped statistics (enumeration, the exact F1 engine,
or a long plain Monte Carlo run)."""

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import pairperm
from pairperm import _smooth
from pairperm._effects import LocalEffects
from pairperm._metrics import bleu_from_sums, chrf_from_sums, f1_from_sums
from pairperm._smooth_control import LinearTail, Pool, estimate, linear_control, relative_half_width
from pairperm._statistics import CallableStatistic
from reference import brute_force_stat_pvalue
from synthetic import random_counts, separated_f1_data
from test_smooth_tails import bleu_stats, brute_force_difference_pvalue, chrf_stats, macro_f1


def all_patterns(n):
    return np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.float64)


def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


@pytest.mark.parametrize("case", range(12))
def test_the_controls_mean_is_the_exact_null_probability_of_its_regions(case):
    # The control counts the regions a sample lies in; its null mean, E_0[count] over all 2^n
    # equally likely swap patterns, must be e^log_mean: one tail, two tails, or a tail and its
    # mirror image (disjoint, or overlapping and then everything).
    rng = np.random.default_rng(case)
    n = 13
    patterns = all_patterns(n)
    tails = []
    for _ in range(2):
        k = rng.normal(1.0, 1.0, n) * rng.choice([1.0, 1.0, 0.01], n)
        lo, hi = k[k < 0].sum(), k[k > 0].sum()
        t = lo + (hi - lo) * rng.uniform(0.05, 0.95)
        theta = rng.uniform(-3, 3)
        tails.append(LinearTail(k, float(t), bool(rng.integers(2)), logistic(theta * k), theta))
    for chosen, mirrored in ((tails[:1], False), (tails, False), (tails, True)):
        control = linear_control(chosen, mirrored)
        assert control is not None
        counts = control.counts(patterns @ control.cols)
        null_mean = counts.sum() / 2**n  # exact: integers over a power of two
        assert math.exp(control.log_mean) == pytest.approx(null_mean, rel=1e-9)
        assert control.log_error < control.log_mean + math.log(1e-6)
        if mirrored:  # the two regions trade places under B -> 1 - B
            assert np.array_equal(control.counts((1.0 - patterns) @ control.cols), counts)


def test_the_rounded_region_follows_the_linearisation():
    # Rounding k to integer steps moves the region's boundary by far less than the tilted
    # law's spread: on 4,096 random patterns the two regions disagree on a few at most.
    rng = np.random.default_rng(4)
    n = 2000
    k = rng.gamma(2.0, 1.0, n) * rng.choice([1.0, -0.3], n)
    q = logistic(0.02 * k)
    t = float(k @ q)  # the boundary through the tilted mean
    tail = LinearTail(k, t, True, q, 0.02)
    control = linear_control([tail], False)
    patterns = (rng.random((4096, n)) < q).astype(np.float64)
    exact_side = patterns @ k >= t
    rounded_side = control.counts(patterns @ control.cols) > 0
    assert np.count_nonzero(exact_side != rounded_side) <= 8
    assert 0.2 < exact_side.mean() < 0.8  # the patterns do straddle the boundary


def pieces(x, y, metric, alternative, seed):
    """The sampler's parts for metric(A) - metric(B) of stacked statistics, as compare() builds them."""
    def fn(s):
        m = x.shape[1]
        return metric(s[:, :m].astype(np.float64)) - metric(s[:, m:].astype(np.float64))

    effects = LocalEffects.from_arrays(np.concatenate([x, y], 1), np.concatenate([y, x], 1))
    stat = CallableStatistic(fn, effects, 1e-12, "test")
    pr = _smooth._problem(effects, stat, "test")
    tails, kinks, mirrored = _smooth._tails(pr, float(stat.value), alternative)
    control = linear_control([lin.tail() for lin in tails], mirrored)
    draw = _smooth._sampler(pr, stat, alternative, [lin.tilt for lin in tails] + kinks, control, seed, 1)
    return draw, control, len(pr.delta)


def pooled_means(draw, control, n_var, beta, pools, size):
    """The mean of Z = Y - beta (C - E[C]) over each of `pools` independent pools of `size`
    samples, from the pools' weights, region and control memberships (and that the library's
    estimate is that mean wherever it is above the floor 2^-n_var)."""
    out = []
    for _ in range(pools):
        pool = Pool()
        draw(size, pool, beta)
        scale, y, c = pool.scaled(control.log_mean)
        mean_c = math.exp(control.log_mean - scale)
        z = (float((y - beta * (c - mean_c)).sum()) + (pool.done - len(y)) * beta * mean_c) / pool.done
        out.append(z * math.exp(scale))
        if out[-1] > 2.0**-n_var:
            assert estimate(pool, control, n_var).pvalue == pytest.approx(out[-1], rel=1e-9)
    return np.array(out)


def test_the_estimate_is_unbiased_whatever_the_coefficient():
    # 300 independent pools of 128 samples each, for coefficients 0 (no control), 0.5, 1 and
    # 1.4: the mean of Z = Y - beta (C - E[C]) lies within 4 standard errors of the exact
    # p-value every time.
    rng = np.random.default_rng(4)
    x, y = bleu_stats(rng, 12, 0.7), bleu_stats(rng, 12, 0.5)
    exact = brute_force_difference_pvalue(x, y, bleu_from_sums, "two-sided")
    assert 1e-3 < exact < 0.05
    draw, control, n_var = pieces(x, y, bleu_from_sums, "two-sided", seed=11)
    assert control is not None
    for beta in (0.0, 0.5, 1.0, 1.4):
        values = pooled_means(draw, control, n_var, beta, 300, 128)
        se = values.std(ddof=1) / math.sqrt(len(values))
        assert abs(values.mean() - exact) <= 4 * se, (beta, values.mean(), exact, se)


def long_bleu(rng, ref, quality):
    """BLEU statistics of hypotheses 1-4 tokens longer than the references: no brevity penalty."""
    hyp = ref + rng.integers(1, 5, len(ref))
    total = np.stack([np.maximum(hyp - k, 0) for k in range(4)], axis=1)
    correct = rng.binomial(total, np.clip(quality * np.array([1.0, 0.75, 0.55, 0.4]), 0, 1))
    return np.concatenate([hyp[:, None], ref[:, None], correct, total], axis=1)


def test_the_control_takes_out_most_of_the_spread():
    # N = 400 BLEU statistics, p ~ 1e-15: over 100 pools of 512 samples the control (coefficient
    # 1) leaves less than a tenth of the plain estimate's variance, and the two agree.
    rng = np.random.default_rng(7)
    ref = rng.integers(5, 30, 400)
    x, y = long_bleu(rng, ref, 0.56), long_bleu(rng, ref, 0.5)
    draw, control, n_var = pieces(x, y, bleu_from_sums, "two-sided", seed=3)
    plain = pooled_means(draw, control, n_var, 0.0, 100, 512)
    controlled = pooled_means(draw, control, n_var, 1.0, 100, 512)
    assert 1e-16 < controlled.mean() < 1e-4
    assert controlled.var() * 10 <= plain.var()
    assert abs(plain.mean() - controlled.mean()) <= 4 * plain.std() / 10


def test_the_interval_stays_open_where_every_sample_agrees_with_the_control():
    # Y = C on every sample: the spread is 0, but the two guard values (the largest weight
    # over sqrt(2) either side of the mean) keep the interval open, by about 2 * that / K.
    rng = np.random.default_rng(0)
    x, y = bleu_stats(rng, 30, 0.7), bleu_stats(rng, 30, 0.45)
    _, control, n_var = pieces(x, y, bleu_from_sums, "greater", seed=1)
    pool = Pool()
    log_w = control.log_mean + rng.normal(0.0, 0.3, 1000)
    inside = rng.random(1000) < 0.5
    pool.add(log_w, inside, inside.astype(np.int64), 1.0)
    bare = estimate(pool, control, n_var, guarded=False)
    guarded = estimate(pool, control, n_var)
    assert bare.pvalue == pytest.approx(math.exp(control.log_mean), rel=1e-9)
    assert relative_half_width(bare) < 1e-6
    # The guard's spread, the largest weight over 1002 values, times a critical value of at least
    # 1.96 (more where the two lone values make the sample's tails heavy, at most twice that).
    guard = math.exp(log_w[inside].max() - control.log_mean) / 1002
    assert 1.96 * guard <= relative_half_width(guarded) <= 2.0 * 1.96 * guard * 1.01


def kinked_bleu(rng, n, quality, ref):
    """BLEU statistics whose hypotheses are about as long as the shared references: the
    brevity penalty bends within the permutation's spread."""
    hyp = np.maximum(1, ref + rng.integers(-1, 2, len(ref)))
    total = np.stack([np.maximum(hyp - k, 0) for k in range(4)], axis=1)
    correct = rng.binomial(total, np.clip(quality * np.array([1.0, 0.75, 0.55, 0.4]), 0, 1))
    return np.concatenate([hyp[:, None], ref[:, None], correct, total], axis=1)


def shapes(rng, n):
    ref = rng.integers(3, 12, n)
    classes = [random_counts(rng, n, recall=(0.9, 0.45)) for _ in range(2)]
    return {
        "BLEU": (bleu_stats(rng, n, 0.8), bleu_stats(rng, n, 0.45), bleu_from_sums),
        "BLEU at the brevity penalty's kink": (kinked_bleu(rng, n, 0.75, ref), kinked_bleu(rng, n, 0.5, ref),
                                               bleu_from_sums),
        "chrF": (chrf_stats(rng, n, 0.62), chrf_stats(rng, n, 0.5), chrf_from_sums),
        "macro-F1": (np.stack([c[0] for c in classes], 1), np.stack([c[1] for c in classes], 1), macro_f1),
    }


def misses_against_enumeration(n, seeds, alternatives, shape_seed):
    out, runs = 0, 0
    for x, y, metric in shapes(np.random.default_rng(shape_seed), n).values():
        for alternative in alternatives:
            exact = brute_force_difference_pvalue(x, y, metric, alternative)
            assert 1e-3 < exact < 0.1, exact  # many states in the region, not a corner
            for seed in range(seeds):
                r = pairperm.compare(x, y, metric, alternative=alternative, rng=seed).result
                out += not r.pvalue_ci[0] <= exact <= r.pvalue_ci[1]
                runs += 1
    return out, runs


def test_intervals_cover_the_exact_pvalue_of_four_shapes():
    """30 seeds x 4 shapes (BLEU, BLEU at the brevity penalty's kink, chrF, macro-F1), N = 12,
    two-sided, each against all 4,096 swap patterns. At 95% coverage the misses are
    Binomial(120, 0.05), mean 6: 14 or more has probability ~0.3%."""
    misses, runs = misses_against_enumeration(12, 30, ("two-sided",), shape_seed=6)
    assert runs == 120 and misses < 14
    assert stats.binom.sf(13, 120, 0.05) < 0.005


@pytest.mark.slow
def test_intervals_cover_the_exact_pvalue_of_four_shapes_at_length():
    """300 seeds x 4 shapes x 2 alternatives, N = 13: at least 95% of the 2,400 intervals cover
    (at 95% exactly, the observed share falls below 0.95 - 3 sd = 0.937 with probability 0.1%)."""
    misses, runs = misses_against_enumeration(13, 300, ("two-sided", "greater"), shape_seed=6)
    assert runs == 2400
    assert 1 - misses / runs >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / runs)


def test_deep_f1_intervals_cover_the_exact_f1_engines_pvalue(monkeypatch):
    """F1 of (tp, fp, fn) as a callable statistic, N = 400, p < 1e-20: the exact F1 engine gives
    the true p-value. 40 seeds: misses are Binomial(40, 0.05), 7 or more with probability ~0.3%;
    and the control at least halves the samples the tilts alone need for the same target."""
    a, b = separated_f1_data(n=400, seed=2)
    exact = pairperm.f1_test(a, b, alternative="two-sided")
    assert exact.pvalue < 1e-20
    misses, drawn = 0, []
    for seed in range(40):
        r = pairperm.compare(a, b, lambda s: f1_from_sums(s), rng=seed).result
        lo, hi = r.log_pvalue_ci
        misses += not lo <= exact.log_pvalue <= hi
        drawn.append(r.n_resamples)
    assert misses < 7
    monkeypatch.setattr(_smooth, "linear_control", lambda tails, mirrored: None)
    alone = [pairperm.compare(a, b, lambda s: f1_from_sums(s), rng=seed).result.n_resamples for seed in range(5)]
    assert 2 * np.median(drawn) <= np.median(alone)


@pytest.mark.slow
def test_bleu_intervals_cover_a_long_plain_monte_carlo_pvalue():
    """N = 400 BLEU statistics, p ~ 0.01: 4 million plain Monte Carlo resamples give the
    reference to ~0.5% (sd), far inside the sampler's 5%. 200 seeds at least 95% - 3 sd covering."""
    rng = np.random.default_rng(21)
    x, y = bleu_stats(rng, 400, 0.52, max_len=30), bleu_stats(rng, 400, 0.49, max_len=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pairperm.PrecisionWarning)
        ref = pairperm.compare(x, y, "bleu", method="monte_carlo", n_resamples=4_000_000, rng=0).result
    assert 3e-3 < ref.pvalue < 0.05
    misses = 0
    for seed in range(200):
        r = pairperm.compare(x, y, "bleu", rng=seed).result
        misses += not r.pvalue_ci[0] <= ref.pvalue <= r.pvalue_ci[1]
    assert 1 - misses / 200 >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / 200)


def test_a_statistic_that_is_not_odd_samples_each_tail_on_its_own():
    # h = F1(A) - 0.8 F1(B) is not odd under swapping every entry: the second tail is aimed
    # on its own (no mirror), and the two-sided p-value still matches enumeration.
    rng = np.random.default_rng(6)
    ca, cb = random_counts(rng, 12, recall=(0.95, 0.35))
    stay, swap = np.concatenate([ca, cb], 1), np.concatenate([cb, ca], 1)

    def h(s):
        return f1_from_sums(s[:, :3].astype(float)) - 0.8 * f1_from_sums(s[:, 3:].astype(float))

    def exact_h(s):
        def f1(tp, fp, fn):
            return Fraction(0) if 2 * tp + fp + fn == 0 else Fraction(2 * tp, 2 * tp + fp + fn)
        return f1(*s[:3]) - Fraction(4, 5) * f1(*s[3:])

    exact = float(brute_force_stat_pvalue(stay, swap, exact_h, "two-sided"))
    effects = LocalEffects.from_arrays(stay, swap)
    stat = CallableStatistic(h, effects, 1e-12, "test")
    _, _, mirrored = _smooth._tails(_smooth._problem(effects, stat, "test"), float(stat.value), "two-sided")
    assert not mirrored
    r = pairperm.monte_carlo_test(stay, swap, h, method="importance_sampling", rng=2)
    assert r.pvalue_ci[0] <= exact <= r.pvalue_ci[1]
    assert r.pvalue == pytest.approx(exact, rel=0.1)


def test_the_brevity_penalty_kink_gets_its_own_tilts():
    # Hypotheses about as long as the references: the penalty bends within the tilted spread of
    # the hypothesis length, and the tail gets a tilt along each side's slope (mirrored: four);
    # hypotheses far longer than the references never meet the bend.
    rng = np.random.default_rng(2)
    ref = rng.integers(5, 40, 300)

    def system(quality, extra):
        hyp = np.maximum(1, ref + extra + rng.integers(-2, 3, len(ref)))
        total = np.stack([np.maximum(hyp - k, 0) for k in range(4)], axis=1)
        correct = rng.binomial(total, np.clip(quality * np.array([1.0, 0.75, 0.55, 0.4]), 0, 1))
        return np.concatenate([hyp[:, None], ref[:, None], correct, total], axis=1)

    for extra, expected in ((0, 4), (8, 0)):
        x, y = system(0.6, extra), system(0.5, extra)
        effects = LocalEffects.from_arrays(np.concatenate([x, y], 1), np.concatenate([y, x], 1))
        stat = CallableStatistic(lambda s: bleu_from_sums(s[:, :10].astype(float)) - bleu_from_sums(
            s[:, 10:].astype(float)), effects, 1e-12, "test")
        _, kinks, mirrored = _smooth._tails(_smooth._problem(effects, stat, "test"), float(stat.value), "two-sided")
        assert mirrored and len(kinks) == expected, extra


def test_the_tilt_solves_its_equation():
    # sum_n k_n logistic(theta k_n) = t, for spreads of k from 1e-6 to 1e6 and both signs of theta.
    rng = np.random.default_rng(9)
    for trial in range(200):
        k = rng.normal(size=int(rng.integers(2, 400))) * 10.0 ** rng.uniform(-6, 6)
        lo, hi = k[k < 0].sum(), k[k > 0].sum()
        t = lo + (hi - lo) * rng.uniform(0.001, 0.999)
        theta = _smooth._solve_theta(k, float(t))
        assert abs(float(k @ logistic(theta * k)) - t) <= 1e-9 * np.abs(k).sum(), trial


def test_the_signed_basis_rebuilds_the_moves():
    # Columns equal up to sign share one basis column; every column is rebuilt exactly.
    rng = np.random.default_rng(1)
    for _ in range(50):
        d = rng.integers(-3, 4, (int(rng.integers(1, 30)), 4)).astype(float)
        moves = np.concatenate([d, -d, d[:, :1], np.zeros((len(d), 1)), 0.5 * d[:, 1:2]], axis=1)
        basis, signs = _smooth._signed_basis(moves)
        assert np.array_equal(basis @ signs, moves)
        distinct = {tuple(c * np.sign(c[np.flatnonzero(c)[0]]) + 0.0) for c in moves.T if c.any()}
        assert basis.shape[1] == len(distinct)
