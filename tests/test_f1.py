"""f1_test, precision_test, recall_test against brute force and exact integer arithmetic."""

from __future__ import annotations

import threading
import warnings
from fractions import Fraction

import numpy as np
import pytest

import pairperm
from marks import quick_first
from pairperm import datasets
from pairperm._f1 import read_f1_file, run_f1_file
from reference import ALTERNATIVES, brute_force_ratio_pvalue, ratio_score, rejects
from synthetic import random_counts, separated_f1_data

TESTS = {"f1": pairperm.f1_test, "precision": pairperm.precision_test, "recall": pairperm.recall_test}


# ---------------------------------------------------------------- independent references
def reference_score(tp: int, errors: int, zero: Fraction) -> Fraction:
    """The reference implementation's F1 = tp / (tp + errors/2)."""
    return zero if tp + errors == 0 else Fraction(tp) / (tp + Fraction(errors, 2))


def totals_score(kind, ta, tb, beta, zero):
    # Python ints: a Fraction built from NumPy integers is not exact-typed on NumPy < 1.25
    # (its float() returns numpy.float64, deprecated in Python).
    ta, tb = tuple(int(v) for v in ta), tuple(int(v) for v in tb)
    if len(ta) == 2:
        return reference_score(*ta, zero) - reference_score(*tb, zero)
    return ratio_score(kind, *ta, beta, zero) - ratio_score(kind, *tb, beta, zero)


def exact_pvalue(kind, a, b, alternative, beta=Fraction(1), zero=Fraction(0)) -> Fraction:
    """Python-int DP over the totals of system A (count of swap subsets per state), N in the hundreds."""
    total = tuple(int(v) for v in (a + b).sum(0))
    states = {tuple([0] * a.shape[1]): 1}
    for ra, rb in zip(a.tolist(), b.tolist()):
        nxt: dict = {}
        for s, c in states.items():
            for r in (ra, rb):
                key = tuple(x + y for x, y in zip(s, r))
                nxt[key] = nxt.get(key, 0) + c
        states = nxt
    ta0 = tuple(int(v) for v in a.sum(0))

    def h(ta):
        tb = tuple(t - x for t, x in zip(total, ta))
        return totals_score(kind, ta, tb, beta, zero)

    h_obs = h(ta0)
    hits = sum(c for s, c in states.items() if rejects(h(s), h_obs, alternative))
    return Fraction(hits, 2 ** a.shape[0])


def assert_close(p: float, ref: Fraction, rel=1e-9, abs_=1e-13):
    assert p == pytest.approx(float(ref), rel=rel, abs=abs_)


# ---------------------------------------------------------------- brute force, N <= 12
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["f1", "precision", "recall"])
def test_brute_force_all_alternatives(seed, kind):
    rng = np.random.default_rng(100 + seed)
    a, b = random_counts(rng, int(rng.integers(1, 13)))
    for alt in ALTERNATIVES:
        ref = brute_force_ratio_pvalue(kind, a, b, alt)
        for method in ("auto", "dp"):
            r = TESTS[kind](a, b, alternative=alt, method=method)
            assert_close(r.pvalue, ref)
        assert r.statistic == pytest.approx(float(totals_score(kind, tuple(a.sum(0)), tuple(b.sum(0)), 1, 0)))


@pytest.mark.parametrize("beta", [0.5, 2.0, 0.0])
@pytest.mark.parametrize("zero_division", [0.0, 1.0, 0.5])
def test_brute_force_beta_and_zero_division(beta, zero_division):
    rng = np.random.default_rng(7)
    # Sparse counts so that zero denominators occur in many states.
    a, b = random_counts(rng, 10, max_gold=1, fp_lam=0.2, recall=(0.5, 0.3))
    for alt in ALTERNATIVES:
        ref = brute_force_ratio_pvalue("f1", a, b, alt, Fraction(beta), Fraction(zero_division))
        r = pairperm.f1_test(a, b, alternative=alt, beta=beta, zero_division=zero_division)
        assert_close(r.pvalue, ref)
    for kind in ("precision", "recall"):
        ref = brute_force_ratio_pvalue(kind, a, b, "two-sided", zero=Fraction(zero_division))
        assert_close(TESTS[kind](a, b, zero_division=zero_division).pvalue, ref)


@pytest.mark.parametrize("seed", range(4))
def test_reference_format_tp_errors(seed):
    rng = np.random.default_rng(200 + seed)
    n = 11
    a = rng.integers(0, 5, (n, 2))  # the reference implementation's own test data
    b = rng.integers(0, 5, (n, 2))
    for alt in ALTERNATIVES:
        ref = brute_force_ratio_pvalue("f1", a, b, alt)
        assert_close(pairperm.f1_test(a, b, alternative=alt).pvalue, ref)
        assert_close(pairperm.f1_test(a, b, alternative=alt, method="dp").pvalue, ref)


def test_exact_ties_are_counted():
    # Entries 0 and 1 are mirror images: swapping both gives the same totals, so several
    # states tie exactly with the observed one; a float comparison could drop some of them.
    a = np.array([[1, 0, 1], [0, 1, 1], [2, 1, 0], [1, 2, 0]])
    b = np.array([[0, 1, 2], [1, 0, 0], [1, 2, 1], [1, 0, 0]])
    for kind in TESTS:
        for alt in ALTERNATIVES:
            ref = brute_force_ratio_pvalue(kind, a, b, alt)
            assert TESTS[kind](a, b, alternative=alt).pvalue == pytest.approx(float(ref), rel=1e-12)


# ---------------------------------------------------------------- exact integers, N in the hundreds
@pytest.mark.parametrize("kind", quick_first(["f1", "precision", "recall"]))
def test_exact_integer_arithmetic_n_hundreds(kind):
    rng = np.random.default_rng(11)
    a, b = random_counts(rng, 150, max_gold=3, fp_lam=0.4, recall=(0.8, 0.7))
    for alt in ALTERNATIVES:
        ref = exact_pvalue(kind, a, b, alt)
        r_auto = TESTS[kind](a, b, alternative=alt)
        assert_close(r_auto.pvalue, ref)
        r_dp = TESTS[kind](a, b, alternative=alt, method="dp")
        assert_close(r_dp.pvalue, ref, rel=1e-12, abs_=0)


def test_exact_integer_arithmetic_fbeta_reference_format():
    rng = np.random.default_rng(12)
    a = rng.integers(0, 4, (70, 2))
    b = rng.integers(0, 4, (70, 2))
    for alt in ALTERNATIVES:
        assert_close(pairperm.f1_test(a, b, alternative=alt).pvalue, exact_pvalue("f1", a, b, alt))
    a3, b3 = random_counts(rng, 120)
    assert_close(pairperm.f1_test(a3, b3, beta=2.0).pvalue, exact_pvalue("f1", a3, b3, "two-sided", Fraction(2)))


# ---------------------------------------------------------------- invariances
@pytest.mark.parametrize("kind", ["f1", "precision", "recall"])
def test_identical_systems_give_one(kind):
    a, _ = datasets.ner_like(500, seed=3)
    for alt in ALTERNATIVES:
        r = TESTS[kind](a, a.copy(), alternative=alt)
        assert r.pvalue == pytest.approx(1.0, abs=1e-12)
        assert r.statistic == 0.0


@pytest.mark.parametrize("kind", ["f1", "precision", "recall"])
def test_swapping_systems_mirrors_the_alternative(kind):
    a, b = datasets.ner_like(2000, seed=4)
    f = TESTS[kind]
    g_ab, l_ba = f(a, b, alternative="greater"), f(b, a, alternative="less")
    assert g_ab.pvalue == pytest.approx(l_ba.pvalue, rel=1e-9, abs=1e-14)
    assert f(a, b).pvalue == pytest.approx(f(b, a).pvalue, rel=1e-9, abs=1e-14)
    assert f(a, b).statistic == -f(b, a).statistic


def test_recall_matches_permutation_test_on_tp():
    a, b = datasets.ner_like(3000, seed=5)
    for alt in ALTERNATIVES:
        assert pairperm.recall_test(a, b, alternative=alt).pvalue == pytest.approx(
            pairperm.permutation_test(a[:, 0], b[:, 0], alternative=alt).pvalue, rel=1e-12
        )


def test_null_distribution_is_reduced_and_certified():
    a, b = datasets.ner_like(1000, seed=6)
    r = pairperm.f1_test(a, b)
    d = r.null_distribution
    assert d.pmf.ndim == 2 and len(d.offset) == 2
    assert 0 < d.truncated_mass <= 1e-40
    assert d.pmf.sum() == pytest.approx(1.0, abs=1e-12)
    # Mean of TP_A under the null is (sum tp_a + sum tp_b) / 2.
    tp_axis = d.offset[0] + np.arange(d.pmf.shape[0])
    assert float(tp_axis @ d.pmf.sum(1)) == pytest.approx((a[:, 0].sum() + b[:, 0].sum()) / 2, rel=1e-12)
    assert pairperm.recall_test(a, b).null_distribution.pmf.ndim == 1


# ---------------------------------------------------------------- Monte Carlo
def test_monte_carlo_agrees_and_repeats():
    rng = np.random.default_rng(13)
    a, b = random_counts(rng, 300, recall=(0.75, 0.7))
    exact = pairperm.f1_test(a, b).pvalue
    r1 = pairperm.f1_test(a, b, method="monte_carlo", n_resamples=4000, rng=42)
    r2 = pairperm.f1_test(a, b, method="monte_carlo", n_resamples=4000, rng=42)
    assert r1.pvalue == r2.pvalue
    lo, hi = r1.pvalue_ci
    assert lo <= exact <= hi
    rp = pairperm.precision_test(a, b, method="monte_carlo", n_resamples=4000, rng=1)
    assert rp.pvalue_ci[0] <= pairperm.precision_test(a, b).pvalue <= rp.pvalue_ci[1]
    rr = pairperm.recall_test(a, b, method="monte_carlo", n_resamples=4000, rng=1)
    assert rr.pvalue_ci[0] <= pairperm.recall_test(a, b).pvalue <= rr.pvalue_ci[1]


def test_threads_give_the_same_answer():
    a, b = datasets.ner_like(3000, seed=8)
    expected = pairperm.f1_test(a, b).pvalue
    out = []
    threads = [threading.Thread(target=lambda: out.append(pairperm.f1_test(a, b).pvalue)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [expected] * 4


# ---------------------------------------------------------------- errors
def test_negative_count_names_the_entry():
    a = np.array([[1, 0, 1], [2, 0, 0], [1, -1, 0]])
    with pytest.raises(ValueError, match=r"negative count in x at entry 2: fp = -1"):
        pairperm.f1_test(a, a)


def test_inconsistent_gold_names_the_entry():
    a = np.array([[1, 0, 1], [2, 0, 0], [1, 0, 0]])
    b = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 2]])
    with pytest.raises(ValueError, match=r"inconsistent gold counts at entry 1: tp \+ fn is 2 for x but 1 for y"):
        pairperm.precision_test(a, b)


def test_bad_arguments():
    a = np.ones((4, 3), dtype=int)
    with pytest.raises(ValueError, match=r"shape \(N, 3\)"):
        pairperm.f1_test(np.ones((4, 4)), np.ones((4, 4)))
    with pytest.raises(ValueError, match="same length"):
        pairperm.f1_test(a, a[:3])
    with pytest.raises(ValueError, match="beta != 1 needs"):
        pairperm.f1_test(a[:, :2], a[:, :2], beta=2.0)
    with pytest.raises(ValueError, match="do not separate false positives"):
        pairperm.recall_test(a[:, :2], a[:, :2])
    with pytest.raises(ValueError, match="zero_division"):
        pairperm.f1_test(a, a, zero_division=2.0)
    with pytest.raises(ValueError, match="zero_division"):
        pairperm.f1_test(a, a, zero_division=float("nan"))
    with pytest.raises(ValueError, match="small exact binary fraction"):
        pairperm.f1_test(a, a, beta=0.3)
    with pytest.raises(ValueError, match="method must be one of"):
        pairperm.f1_test(a, a, method="fft")
    with pytest.raises(ValueError, match="alternative must be one of"):
        pairperm.f1_test(a, a, alternative="bigger")
    with pytest.raises(ValueError, match="must hold integers"):
        pairperm.f1_test(a + 0.5, a + 0.5)


def test_empty_input_gives_one():
    e = np.zeros((0, 3), dtype=int)
    r = pairperm.f1_test(e, e)
    assert r.pvalue == 1.0 and r.statistic == 0.0


# ---------------------------------------------------------------- file format (CLI --metric f1)
def test_read_and_run_f1_file(tmp_path):
    rng = np.random.default_rng(14)
    a = rng.integers(0, 5, (40, 2))
    b = rng.integers(0, 5, (40, 2))
    path = tmp_path / "f1.txt"
    path.write_text("\n".join(" ".join(map(str, row)) for row in np.hstack([a, b])) + "\n\n")
    ra, rb = read_f1_file(path)
    np.testing.assert_array_equal(ra, a)
    np.testing.assert_array_equal(rb, b)
    csv = tmp_path / "f1.csv"
    csv.write_text("\n".join(",".join(map(str, row)) for row in np.hstack([a, b])))
    np.testing.assert_array_equal(read_f1_file(csv, ",")[1], b)
    lines = run_f1_file(path)
    p = pairperm.f1_test(a, b).pvalue
    assert f"p-value: {p:.6g}" in lines
    assert "entries: 40" in lines


@pytest.mark.parametrize(
    "content, message",
    [("1 2 3 4\n1 2 3\n", r"f1.txt:2: expected 4 integers"), ("1 2 3 4\n\n1 2 x 4\n", r"f1.txt:3: expected 4 integers"),
     ("1 -2 3 4\n", r"f1.txt:1: counts must be non-negative")],
)
def test_read_f1_file_errors_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "f1.txt"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        read_f1_file(path)


def test_totals_near_int64_are_refused_not_wrapped():
    big = 2**61
    a = np.array([[1, 0, big - 10], [0, 0, 5]])
    b = np.array([[0, 1, big - 9], [0, 0, 5]])
    with pytest.raises(ValueError, match="2\\^61|too large"):
        pairperm.f1_test(a, b)


def test_dataframe_columns_are_read_by_name():
    pd = pytest.importorskip("pandas")
    a, b = datasets.ner_like(300, seed=2)
    want = pairperm.f1_test(a, b).pvalue
    shuffled_a = pd.DataFrame(a, columns=["tp", "fp", "fn"])[["fn", "fp", "tp"]]
    shuffled_b = pd.DataFrame(b, columns=["tp", "fp", "fn"])[["fn", "tp", "fp"]]
    assert pairperm.f1_test(shuffled_a, shuffled_b).pvalue == want
    with pytest.raises(ValueError, match="by name"):
        pairperm.f1_test(pd.DataFrame(a, columns=["a", "b", "c"]), pd.DataFrame(b, columns=["a", "b", "c"]))


@pytest.mark.parametrize("test", [pairperm.f1_test, pairperm.precision_test])
def test_tiny_2d_pvalues_are_exact_not_fft_noise(test):
    a, b = separated_f1_data()
    dp = test(a, b, method="dp")
    assert dp.pvalue < 1e-30  # far below the FFT's round-off
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = test(a, b)
    assert auto.method == "auto" and not auto.pvalue_is_bound
    assert auto.pvalue == pytest.approx(dp.pvalue, rel=1e-9)
    assert auto.log_pvalue == pytest.approx(dp.log_pvalue, rel=1e-9)


def test_column_totals_beyond_int64_are_refused():
    big = 2**60
    a = np.array([[1, 0, big], [0, 0, big], [0, 0, big]])
    with pytest.raises(ValueError, match="beyond 2\\^61"):
        pairperm.f1_test(a, a)
