"""replicability(): the minP step-down over independent tasks against the definition computed
in exact fractions from each task's binomial null, Tarone's drop-out, the partial conjunction
p-values against scipy's chi-square and their running maximum, and familywise error by simulation."""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats

import pairperm
from pairperm._replicability import _partial_conjunction


def _binary_task(rng, n, pa, pb):
    return {"A": (rng.random(n) < pa).astype(np.int64), "B": (rng.random(n) < pb).astype(np.int64)}


def _exact_minp(tasks):
    """Adjusted p-values by the definition: the tasks' exact one-sided McNemar p-values are
    binomial tails of the b of k discordant items won by A; P[min over the remaining tasks of the
    p-value <= c] = 1 - prod P[p-value > c], each P enumerated over b in fractions."""
    def tail(k, b):
        return Fraction(sum(math.comb(k, i) for i in range(b, k + 1)), 2 ** k)

    obs = []
    for t in tasks.values():
        a, b = t["A"], t["B"]
        k = int(np.sum(a != b))
        obs.append((k, int(np.sum((a == 1) & (b == 0)))))
    p = [tail(k, b) for k, b in obs]
    order = sorted(range(len(p)), key=lambda j: (p[j], j))
    out, running = [None] * len(p), Fraction(0)
    for s, j in enumerate(order):
        c = p[j]
        keep = Fraction(1)
        for r in order[s:]:
            k = obs[r][0]
            keep *= 1 - sum(Fraction(math.comb(k, b), 2 ** k) for b in range(k + 1) if tail(k, b) <= c)
        running = max(running, 1 - keep)
        out[j] = running
    return [float(v) for v in out], [float(v) for v in p]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_minp_step_down_is_the_definition_in_exact_fractions(seed):
    rng = np.random.default_rng(seed)
    tasks = {f"t{i}": _binary_task(rng, n, 0.75, 0.6) for i, n in enumerate([12, 20, 30, 16, 25])}
    r = pairperm.replicability(tasks, "A", "B")
    want, p = _exact_minp(tasks)
    np.testing.assert_allclose(r.pvalues, p, rtol=1e-12)
    np.testing.assert_allclose(r.adjusted, want, rtol=1e-9)
    assert r.winning_tasks == tuple(t for t, a in zip(tasks, want) if a <= 0.05)


def test_a_task_that_cannot_reach_alpha_drops_out():
    rng = np.random.default_rng(4)
    tasks = {f"t{i}": _binary_task(rng, 200, 0.8, 0.6) for i in range(3)}
    base = pairperm.replicability(tasks, "A", "B")
    # Two discordant items: its least p-value is 1/4, so no c < 1/4 is reachable.
    tiny = {"A": np.array([1, 1, 0, 0]), "B": np.array([0, 0, 0, 0])}
    more = pairperm.replicability({**tasks, "tiny": tiny}, "A", "B")
    assert more.least_attainable[-1] == 0.25
    assert all(a < 0.25 for a in base.adjusted)
    assert more.adjusted[:3] == base.adjusted  # unchanged, where Holm would multiply by 4/3
    holm = pairperm.multipletests(list(more.pvalues), "holm")
    assert np.all(holm[:3] > np.array(more.adjusted[:3]))


def test_fisher_partial_conjunction_is_the_running_max_of_scipys_combination():
    p = np.array([0.3, 0.3, 0.3, 0.3])  # raw Fisher p-values fall at u = 4: the running max holds them
    raw = [scipy.stats.combine_pvalues(np.sort(p)[u:], method="fisher")[1] for u in range(4)]
    assert raw[3] < raw[2]
    got = _partial_conjunction(np.log(p), "fisher")
    np.testing.assert_allclose(got, np.maximum.accumulate(raw), rtol=1e-12)


def test_bonferroni_partial_conjunction_and_the_count_it_gives():
    p = np.array([0.012, 0.01, 0.011])  # (m - u + 1) p_(u): 0.03, 0.022, 0.012 - not monotone
    got = _partial_conjunction(np.log(p), "bonferroni")
    np.testing.assert_allclose(got, [0.03, 0.03, 0.03], rtol=1e-12)
    # Without the running max, "at least 3" would pass at 0.025 while "at least 1" fails.
    assert int(np.sum(got <= 0.025)) == 0


def test_familywise_error_and_count_under_the_complete_null():
    reps, any_win, any_count = 300, 0, 0
    rng = np.random.default_rng(5)
    for _ in range(reps):
        tasks = {f"t{i}": _binary_task(rng, 150, 0.7, 0.7) for i in range(4)}
        r = pairperm.replicability(tasks, "A", "B")
        any_win += bool(r.winning_tasks)
        any_count += r.count > 0
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    assert any_win / reps <= bound and any_count / reps <= bound


def test_less_and_real_valued_tasks_and_groups():
    rng = np.random.default_rng(6)
    real = {"A": rng.normal(0.5, 0.1, 300), "B": rng.normal(0.55, 0.1, 300)}
    ints = _binary_task(rng, 300, 0.6, 0.75)
    r = pairperm.replicability({"real": real, "ints": ints}, "A", "B", {"real": "mean", "ints": "accuracy"},
                               alternative="less", groups={"ints": np.arange(300) // 3})
    assert r.least_attainable[0] == 0.0 and r.least_attainable[1] > 0  # continuous / discrete
    assert r.winning_tasks == ("real", "ints") and r.count == 2


def test_bad_arguments():
    tasks = {"t": {"A": [1, 0, 1], "B": [0, 0, 1]}}
    with pytest.raises(ValueError, match="one-sided"):
        pairperm.replicability(tasks, "A", "B", alternative="two-sided")
    with pytest.raises(ValueError, match="task 't'.*no system named 'C'"):
        pairperm.replicability(tasks, "A", "C")
    with pytest.raises(ValueError, match="combination"):
        pairperm.replicability(tasks, "A", "B", combination="stouffer")
    with pytest.raises(ValueError, match="mapping"):
        pairperm.replicability([1, 2], "A", "B")


@pytest.mark.parametrize("seed,gap", [(0, 0.012), (2, 0.0125), (3, 0.014)])
def test_one_tasks_adjusted_p_value_is_its_own_deep_in_the_tail(seed, gap):
    # One task: the step-down's adjusted p-value is F(p) = p for an exact test. Deep p-values
    # (1e-9 to 1e-13 at N = 10^5) sit where the null distribution's tail sums are round-off.
    rng = np.random.default_rng(seed)
    a = (rng.random(100_000) < 0.7 + gap).astype(int)
    b = (rng.random(100_000) < 0.7).astype(int)
    r = pairperm.replicability({"t": {"A": a, "B": b}}, "A", "B")
    assert 1e-14 < r.pvalues[0] < 1e-8
    assert r.adjusted[0] == pytest.approx(r.pvalues[0], rel=1e-9)
