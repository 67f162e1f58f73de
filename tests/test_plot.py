"""Figures: what is drawn (bars, lines, shaded regions, labels, legend), not pixels."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import pairperm  # noqa: E402
from pairperm import _plot, _plot_systems  # noqa: E402
from pairperm.datasets import stanza_pos_like  # noqa: E402
from reference import brute_force_counts  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def brute_force(stay, swap):
    """Exact pmf of S by listing all 2^N swap patterns: {value: Fraction}."""
    return {s: Fraction(c, 2 ** len(stay)) for s, c in brute_force_counts(stay, swap).items()}


def bars(ax):
    return [p for c in ax.containers for p in c.patches]


def spans(ax):
    """x extents of the shaded rejection spans (axvspan rectangles in data x)."""
    out = []
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_alpha() is not None and patch.get_alpha() < 0.2:
            x0 = patch.get_x()
            out.append((x0, x0 + patch.get_width()))
    return sorted(out)


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def observed_line_x(ax):
    xs = [line.get_xdata() for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(xs) == 1
    return xs[0][0]


def legend_p(ax):
    (text,) = [t for t in legend_texts(ax) if "p =" in t]
    return float(re.search(r"p = ([0-9.eE+-]+)", text).group(1))


STAY = np.array([1, -2, 3, 0, 4, -1, 2])
SWAP = np.array([-1, 2, -3, 0, -4, 1, -2])
OBSERVED = int(STAY.sum())  # 7


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_bars_region_and_pvalue_match_enumeration(alternative):
    dist = pairperm.null_distribution(STAY, SWAP, method="dp")
    exact = brute_force(STAY.tolist(), SWAP.tolist())
    ax = pairperm.plot_distribution(dist, observed=OBSERVED, alternative=alternative)
    assert isinstance(ax, matplotlib.axes.Axes)

    drawn = sorted((p.get_x() + p.get_width() / 2, p.get_height()) for p in bars(ax))
    assert [round(x) for x, _ in drawn] == sorted(exact)  # one bar per value S can take, no holes
    for x, h in drawn:
        assert h == pytest.approx(float(exact[round(x)]), rel=1e-12)

    mu = sum(Fraction(a + b, 2) for a, b in zip(STAY, SWAP))
    if alternative == "greater":
        region = {s for s in exact if s >= OBSERVED}
    elif alternative == "less":
        region = {s for s in exact if s <= OBSERVED}
    else:
        region = {s for s in exact if abs(s - mu) >= abs(OBSERVED - mu)}
    red = {round(p.get_x() + p.get_width() / 2) for p in bars(ax) if p.get_facecolor()[0] > 0.6}
    assert red == region
    assert legend_p(ax) == pytest.approx(float(sum(exact[s] for s in region)), rel=1e-3)
    assert observed_line_x(ax) == OBSERVED
    # The shaded spans cover exactly the rejected values.
    for s in exact:
        inside = any(a <= s <= b for a, b in spans(ax))
        assert inside == (s in region), s
    assert ax.get_xlabel() and ax.get_ylabel()
    assert any(f"observed S = {OBSERVED}" in t for t in legend_texts(ax))
    assert any(alternative in t for t in legend_texts(ax))


def test_two_sided_about_a_nonzero_mean():
    stay, swap = np.array([3, 5, 1, 2]), np.array([1, 0, 1, 6])  # mean 9.5
    dist = pairperm.null_distribution(stay, swap, method="dp")
    exact = brute_force(stay.tolist(), swap.tolist())
    ax = pairperm.plot_distribution(dist, observed=8)
    region = {s for s in exact if abs(2 * s - 19) >= abs(2 * 8 - 19)}
    assert legend_p(ax) == pytest.approx(float(sum(exact[s] for s in region)), rel=1e-3)
    (low, high) = spans(ax)
    assert low[1] == pytest.approx(8) and high[0] == pytest.approx(11)


def test_plot_result_uses_the_tests_pvalue_and_statistic():
    x = np.array([12, 7, 30, 9, 15, 22])
    y = np.array([11, 7, 27, 9, 13, 22])
    for alternative in ("two-sided", "greater", "less"):
        r = pairperm.permutation_test(x, y, alternative=alternative)
        fig, ax = plt.subplots()
        assert pairperm.plot_result(r, ax=ax) is ax
        assert observed_line_x(ax) == r.statistic == 6
        assert legend_p(ax) == pytest.approx(r.pvalue, rel=1e-3)
        assert len(bars(ax)) == 7  # S in {-6, -4, ..., 6}


@pytest.mark.parametrize("n", [12, 400])
def test_mcnemar_result_draws_the_binomial_law_of_its_statistic(n):
    import pickle

    rng = np.random.default_rng(n)
    x, y = (rng.random(n) < 0.7).astype(int), (rng.random(n) < 0.5).astype(int)
    for alternative in ("two-sided", "greater", "less"):
        r = pairperm.mcnemar_test(x, y, alternative=alternative)
        m = r.n_a_only + r.n_b_only
        for d in (r.null_distribution, pickle.loads(pickle.dumps(r)).null_distribution):
            assert d.offset == 0 and len(d.pmf) == m + 1
            exact = np.array([float(Fraction(math.comb(m, k), 2**m)) for k in range(m + 1)])
            np.testing.assert_allclose(d.pmf, exact, rtol=0, atol=1e-15)
        ax = r.plot()
        assert observed_line_x(ax) == r.statistic == r.n_a_only
        assert f"observed n_a_only = {r.n_a_only}" in legend_texts(ax) and ax.get_xlabel().startswith("n_a_only")
        assert legend_p(ax) == pytest.approx(r.pvalue, rel=1e-3)
        # compare() on 0/1 scores returns this result: it draws the same.
        assert pairperm.compare(x, y, "accuracy", alternative=alternative).result.null_distribution.pmf.tolist() == \
            r.null_distribution.pmf.tolist()


def test_large_support_is_a_step_line_with_filled_tail():
    x, y = stanza_pos_like(2000, seed=1)
    r = pairperm.permutation_test(x, y, alternative="greater")
    ax = pairperm.plot_result(r)
    assert not bars(ax)
    (step,) = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
    drawn_x = np.asarray(step.get_xdata())
    assert drawn_x.size > _plot.MAX_BARS
    fills = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert fills
    xs = np.concatenate([p.vertices[:, 0] for c in fills for p in c.get_paths()])
    assert xs.min() >= r.statistic - 1  # the fill starts at the observed value (step="mid")
    assert spans(ax)[0][0] == pytest.approx(r.statistic)
    assert legend_p(ax) == pytest.approx(r.pvalue, rel=1e-3)


def test_log_axis_and_fft_roundoff_floor():
    x, y = stanza_pos_like(2000, seed=1)
    d = x - y
    auto = pairperm.null_distribution(d, -d)
    ax = pairperm.plot_distribution(auto, log=True)
    assert ax.get_yscale() == "log"
    (step,) = ax.get_lines()
    y_auto = np.asarray(step.get_ydata())
    assert y_auto.min() >= auto.pmf.max() * _plot.FFT_ROUNDOFF
    assert ax.get_legend() is None  # nothing observed: no region, no legend
    dp = pairperm.null_distribution(d, -d, method="dp")
    ax = pairperm.plot_distribution(dp, log=True)
    assert np.asarray(ax.get_lines()[0].get_ydata()).size == np.count_nonzero(dp.pmf)


def test_underflowed_pvalue_shows_log_p():
    x = np.full(3000, 5)
    y = np.zeros(3000, dtype=int)
    r = pairperm.permutation_test(x, y, alternative="greater")
    assert r.pvalue == 0.0 and math.isfinite(r.log_pvalue)
    ax = pairperm.plot_result(r, log=True)
    assert any(f"log p = {r.log_pvalue:.6g}" in t for t in legend_texts(ax))


def test_distribution_plot_method():
    dist = pairperm.null_distribution(STAY, SWAP)
    ax = dist.plot(observed=3, alternative="less")
    assert observed_line_x(ax) == 3
    assert len(bars(ax)) == np.count_nonzero(dist.pmf)


def test_pvalue_matrix():
    p = np.array([[np.nan, 0.01, 0.5], [0.01, np.nan, 1e-5], [0.5, 1e-5, np.nan]])
    names = ["base", "big", "tiny"]
    ax = pairperm.plot_pvalue_matrix(p, names, alpha=0.05)
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 6  # the diagonal stays blank
    assert sum(t.endswith("*") for t in texts) == np.count_nonzero(p[~np.isnan(p)] < 0.05)
    assert sorted(float(t.rstrip("*")) for t in texts) == sorted(p[~np.isnan(p)].tolist())
    assert [t.get_text() for t in ax.get_xticklabels()] == names
    assert [t.get_text() for t in ax.get_yticklabels()] == names
    image = ax.images[0].get_array()
    assert image.mask[0, 0] and not image.mask[0, 1]
    assert image[1, 2] < image[0, 1] < image[0, 2]  # darker is more significant
    ax = pairperm.plot_pvalue_matrix(p, names, alpha=0.001)
    assert sum(t.get_text().endswith("*") for t in ax.texts) == 2


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pairperm.plot_pvalue_matrix(np.zeros((2, 3)), ["a", "b"]), "square"),
        (lambda: pairperm.plot_pvalue_matrix(np.zeros((2, 2)), ["a"]), "names"),
        (lambda: pairperm.plot_pvalue_matrix(np.full((2, 2), 2.0), ["a", "b"]), r"\[0, 1\]"),
        (lambda: pairperm.plot_pvalue_matrix(np.zeros((2, 2)), ["a", "b"], alpha=1.5), "alpha"),
        (lambda: pairperm.plot_distribution(pairperm.null_distribution(STAY, SWAP), alternative="both"), "alternative"),
        (lambda: pairperm.plot_distribution(pairperm.null_distribution(STAY, SWAP), observed="7"), "observed"),
        (lambda: pairperm.plot_distribution(pairperm.null_distribution(STAY, SWAP), observed=math.nan), "finite"),
        (
            lambda: pairperm.plot_result(pairperm.permutation_test([1, 2], [0, 0], method="monte_carlo", rng=0)),
            "no null distribution",
        ),
        (
            lambda: pairperm.plot_result(pairperm.structured_test(STAY, SWAP, lambda s: s / 2.0)),
            "plot_distribution",
        ),
        (
            lambda: pairperm.plot_distribution(
                pairperm.structured_test(np.c_[STAY, STAY], np.c_[SWAP, SWAP], lambda s: s[:, 0] * 1.0).null_distribution
            ),
            "1-D",
        ),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_import_does_not_load_matplotlib():
    code = "import sys, pairperm; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_test_plot(tmp_path, capsys):
    from pairperm.cli import main

    scores = tmp_path / "scores.csv"
    scores.write_text("12,11\n7,7\n30,27\n9,9\n15,13\n22,22\n")
    png = tmp_path / "out.png"
    assert main(["test", str(scores), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"figure: {png}" in capsys.readouterr().out
    assert main(["test", str(scores), "--mc", "100", "--plot", str(png)]) == 2
    assert "--plot" in capsys.readouterr().err
    assert main(["test", str(scores), "--plot", str(tmp_path / "missing" / "x.png")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_cli_demo_plot(tmp_path, capsys):
    from pairperm.cli import main

    png = tmp_path / "demo.png"
    assert main(["demo", "--n", "300", "--plot", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert f"figure: {png}" in capsys.readouterr().out


# ---- SystemsComparison.plot


def cell_texts(ax):
    """{(row, column): text} of the numbers drawn in a p-value matrix."""
    return {(int(round(t.get_position()[1])), int(round(t.get_position()[0]))): t.get_text() for t in ax.texts}


@pytest.fixture(scope="module")
def comparison():
    x, y = stanza_pos_like(600, seed=3)
    rng = np.random.default_rng(5)
    systems = {"A": x, "B": y, "C": np.where(rng.random(x.size) < 0.5, x, y), "D": np.maximum(0, y - 1)}
    return pairperm.compare_systems(systems, metric="sum")


@pytest.mark.parametrize("adjusted", [True, False])
def test_systems_plot_draws_each_pair_and_marks_the_significant_rows(comparison, adjusted):
    res = comparison
    ax = res.plot(adjusted=adjusted)
    index = {n: i for i, n in enumerate(res.names)}
    expected = {}
    for r in res.rows:
        p = r.pvalue_adjusted if adjusted else r.pvalue
        significant = r.significant if adjusted else p <= res.alpha
        text = f"{p:.2g}" + ("*" if significant else "")
        i, j = index[r.system_a], index[r.system_b]
        expected[(i, j)] = expected[(j, i)] = text  # two-sided: both halves
    assert cell_texts(ax) == expected
    # The fixture has both kinds of pair, so the marks are really being checked.
    assert any(r.significant for r in res.rows) and not all(r.significant for r in res.rows)
    assert [t.get_text() for t in ax.get_xticklabels()] == list(res.names)
    assert ax.get_title() == ("pairwise p-values (* Holm-adjusted p <= 0.05)" if adjusted
                              else "pairwise p-values (* p <= 0.05)")


def test_systems_plot_marks_p_equal_to_alpha_like_significant():
    # A p-value exactly at alpha is significant (p <= alpha): the mark must agree.
    d = {"metric": "sum", "alternative": "two-sided", "correction": None, "alpha": 0.25, "baseline": None,
         "systems": [{"name": "A", "metric": 10}, {"name": "B", "metric": 4}, {"name": "C", "metric": 9}],
         "pairs": [dict(system_a=a, system_b=b, metric_a=0, metric_b=0, statistic=0, pvalue=p,
                        pvalue_adjusted=p, significant=p <= 0.25, test="permutation_test")
                   for a, b, p in (("A", "B", 0.25), ("A", "C", 0.5), ("B", "C", 0.125))]}
    res = pairperm.SystemsComparison.from_dict(d)
    texts = cell_texts(res.plot())
    assert texts[(0, 1)] == "0.25*" and texts[(0, 2)] == "0.5" and texts[(1, 2)] == "0.12*"
    texts = cell_texts(res.plot(alpha=0.2))
    assert texts[(0, 1)] == "0.25" and texts[(1, 2)] == "0.12*"


def test_systems_plot_one_sided_baseline_fills_tested_cells_only():
    x, y = stanza_pos_like(400, seed=2)
    res = pairperm.compare_systems({"base": y, "A": x, "B": np.maximum(0, y - 1)}, metric="sum", baseline="base",
                                   alternative="greater", correction="bonferroni")
    fig, ax = plt.subplots()
    assert res.plot(ax=ax) is ax
    base = res.names.index("base")
    expected = {(res.names.index(r.system_a), base): f"{r.pvalue_adjusted:.2g}" + ("*" if r.significant else "")
                for r in res.rows}
    assert cell_texts(ax) == expected
    assert "Bonferroni-adjusted" in ax.get_title()


def test_systems_plot_of_many_systems_marks_dots_and_orders_by_metric():
    rng = np.random.default_rng(11)
    truth = rng.random(300) < 0.6
    systems = {f"s{k:02d}": (rng.random(300) < 0.55 + 0.02 * k).astype(np.int64) for k in range(18)}
    systems["best"] = truth.astype(np.int64) | systems["s17"]
    res = pairperm.compare_systems(systems, metric="sum")
    ax = res.plot(order="score")
    assert not ax.texts  # past 15 systems: dots, and the title names the dot, not a star
    assert ax.get_title() == f"pairwise p-values ({_plot_systems.SIGNIFICANT_DOT} Holm-adjusted p <= 0.05)"
    ranked = sorted(range(len(res.names)), key=lambda i: -res.metric_values[i])
    assert [t.get_text() for t in ax.get_yticklabels()] == [res.names[i] for i in ranked]
    ax = res.plot(cell_labels=True)
    assert len(ax.texts) == len(res.names) * (len(res.names) - 1)
    assert ax.get_title().startswith("pairwise p-values (* ")


def test_systems_plot_rejects_bad_alpha(comparison):
    with pytest.raises(ValueError, match="alpha"):
        comparison.plot(alpha=1.5)


def test_cli_compare_plot_writes_png_and_keeps_stdout_json(tmp_path, capsys):
    import json

    from pairperm.cli import main

    x, y = stanza_pos_like(300, seed=4)
    paths = []
    for name, v in {"a": x, "b": y, "c": np.maximum(0, y - 1)}.items():
        p = tmp_path / f"{name}.txt"
        p.write_text("\n".join(str(int(s)) for s in v) + "\n")
        paths.append(str(p))
    png = tmp_path / "matrix.png"
    assert main(["compare", *paths, "--metric", "sum", "--format", "json", "--plot", str(png)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["metric"] == "sum"
    assert f"figure: {png}" in err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["compare", *paths, "--metric", "sum", "--plot", str(tmp_path / "no" / "dir.png")]) == 2
    assert "cannot write the figure" in capsys.readouterr().err


# ---- p-value matrices of many systems


def symmetric_pvalues(n, seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(1e-6, 1.0, (n, n)) ** 3  # plenty of cells on both sides of 0.05
    p = np.triu(p, 1) + np.triu(p, 1).T
    np.fill_diagonal(p, np.nan)
    return p


def shown_log10(p, alpha=0.05):
    """What the heatmap shows: log10 p clipped to [min(-3, floor(log10 alpha) - 2), 0]."""
    floor = min(-3.0, math.floor(math.log10(alpha)) - 2)
    with np.errstate(divide="ignore"):
        return np.clip(np.log10(p), floor, 0.0)


def dots(ax):
    """(row, column) of the significance dots."""
    (points,) = ax.collections
    return {(int(round(y)), int(round(x))) for x, y in points.get_offsets()}


def test_pvalue_matrix_of_many_systems_marks_cells_with_dots_not_numbers():
    n = 32
    p = symmetric_pvalues(n, seed=1)
    names = [f"system-{k}" for k in range(n)]
    ax = pairperm.plot_pvalue_matrix(p, names, alpha=0.05)
    assert len(ax.texts) == 0
    significant = {(i, j) for i in range(n) for j in range(n) if p[i, j] < 0.05}
    assert 0 < len(significant) < n * (n - 1)
    assert dots(ax) == significant
    assert [t.get_text() for t in ax.get_xticklabels()] == names
    assert [t.get_text() for t in ax.get_yticklabels()] == names
    assert {t.get_fontsize() for t in ax.get_yticklabels() + ax.get_xticklabels()} == {row_points(ax, n)}
    assert {t.get_rotation() for t in ax.get_xticklabels()} == {90.0}
    assert ax.pairperm_order == tuple(range(n))
    # The boundary is the one cell labels use: p < alpha.
    at_alpha = np.where(np.isnan(p), np.nan, 0.5)
    at_alpha[0, 1] = at_alpha[1, 0] = 0.05
    at_alpha[0, 2] = at_alpha[2, 0] = 0.04
    assert dots(pairperm.plot_pvalue_matrix(at_alpha, names)) == {(0, 2), (2, 0)}
    # Into small axes the labels shrink to stay one a row, down to a floor.
    for side in (5, 2):
        ax = pairperm.plot_pvalue_matrix(p, names, ax=plt.subplots(figsize=(side, side))[1])
        size = row_points(ax, n)
        assert size < _plot_systems.TICK_POINTS[1] and {t.get_fontsize() for t in ax.get_yticklabels()} == {size}


def row_points(ax, n):
    """Font size that fits one tick label per row of the axes, within the legible range."""
    row = ax.get_position().height * ax.figure.get_figheight() * 72 / n
    low, high = _plot_systems.TICK_POINTS
    return min(high, max(low, _plot_systems.TICK_FILL * row))


def test_pvalue_matrix_cell_labels_can_be_chosen():
    p = symmetric_pvalues(20, seed=2)
    names = [str(k) for k in range(20)]
    ax = pairperm.plot_pvalue_matrix(p, names, cell_labels=True)
    assert len(ax.texts) == 20 * 19
    p = np.array([[np.nan, 0.01, 0.5], [0.01, np.nan, 1e-5], [0.5, 1e-5, np.nan]])
    ax = pairperm.plot_pvalue_matrix(p, ["a", "b", "c"], cell_labels=False)
    assert len(ax.texts) == 0 and dots(ax) == {(0, 1), (1, 0), (1, 2), (2, 1)}


@pytest.mark.parametrize("cell_labels", [True, False])
def test_pvalue_matrix_title_names_the_task(cell_labels):
    p = symmetric_pvalues(5, seed=3)
    names = [f"m{k}" for k in range(5)]
    plain = pairperm.plot_pvalue_matrix(p, names, cell_labels=cell_labels).get_title()
    assert plain.startswith("pairwise p-values (")  # no task known: no name
    ax = pairperm.plot_pvalue_matrix(p, names, cell_labels=cell_labels, task="ner")
    assert ax.get_title() == f"ner: {plain}"


@pytest.mark.parametrize("lower_is_better", [False, True])
def test_pvalue_matrix_ordered_by_score(lower_is_better):
    n = 31
    p = symmetric_pvalues(n, seed=3)
    p[0, 5] = np.nan  # a one-sided cell stays with its pair
    names = [f"s{k}" for k in range(n)]
    rng = np.random.default_rng(4)
    scores = rng.integers(0, 10, n).astype(float)  # ties: they keep the given order
    ax = pairperm.plot_pvalue_matrix(p, names, order="score", scores=scores, lower_is_better=lower_is_better)
    order = ax.pairperm_order
    key = (lambda k: (scores[k], k)) if lower_is_better else (lambda k: (-scores[k], k))
    assert list(order) == sorted(range(n), key=key)
    assert [t.get_text() for t in ax.get_yticklabels()] == [names[k] for k in order]
    image = ax.images[0].get_array()
    expected = shown_log10(p)[np.ix_(order, order)]
    assert np.array_equal(image.mask, np.isnan(expected))
    assert np.array_equal(image.filled(np.nan), expected, equal_nan=True)
    assert dots(ax) == {(i, j) for i in range(n) for j in range(n) if p[order[i], order[j]] < 0.05}
    # The order drawn can be passed again, as positions or as names.
    for again in (order, [names[k] for k in order]):
        ax2 = pairperm.plot_pvalue_matrix(p, names, order=again)
        assert ax2.pairperm_order == order
        assert np.array_equal(ax2.images[0].get_array().filled(np.nan), expected, equal_nan=True)


@pytest.mark.parametrize("one_sided", [False, True])
def test_pvalue_matrix_clustering_groups_indistinguishable_blocks(one_sided):
    pytest.importorskip("scipy")
    n = 34
    rng = np.random.default_rng(5)
    block = rng.permutation(np.arange(n) % 2)  # two blocks of 17, interleaved in the given order
    same = block[:, None] == block[None, :]
    p = np.where(same, rng.uniform(0.3, 1.0, (n, n)), rng.uniform(1e-9, 1e-4, (n, n)))
    p = np.triu(p, 1) + np.triu(p, 1).T
    np.fill_diagonal(p, np.nan)
    if one_sided:  # only the tested direction of each pair is filled
        p[np.tril_indices(n, -1)] = np.nan
    names = [f"system-{k}" for k in range(n)]
    ax = pairperm.plot_pvalue_matrix(p, names, order="cluster")
    order = ax.pairperm_order
    assert sorted(order) == list(range(n))
    drawn_blocks = block[list(order)]
    assert len(set(drawn_blocks[: n // 2])) == 1 and len(set(drawn_blocks[n // 2:])) == 1
    assert [t.get_text() for t in ax.get_xticklabels()] == [names[k] for k in order]
    assert not np.array_equal(block, np.sort(block))  # the given order did not have the blocks


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(order="best"), "order must be"),
        (dict(order="score"), "scores="),
        (dict(order="score", scores=[1.0, 2.0]), "scores must be 3"),
        (dict(order="score", scores=[1.0, np.nan, 2.0]), "finite"),
        (dict(order="score", scores=["x", "y", "z"]), "scores must be 3 numbers"),
        (dict(order=[0, 0, 1]), "each of the 3 systems once"),
        (dict(order=[0, 1]), "each of the 3 systems once"),
        (dict(order=[0, 1, True]), "each of the 3 systems once"),
        (dict(order=["a", "b", "z"]), "unknown systems: 'z'"),
    ],
)
def test_pvalue_matrix_rejects_bad_orders(kwargs, message):
    p = np.array([[np.nan, 0.01, 0.5], [0.01, np.nan, 1e-5], [0.5, 1e-5, np.nan]])
    with pytest.raises(ValueError, match=message):
        pairperm.plot_pvalue_matrix(p, ["a", "b", "c"], **kwargs)


# ---- differences to a baseline


def difference_table(n_systems, n_tasks, seed, flip_every=3, extra_pairs=False):
    """Rows of a comparison table against "base" (some with the baseline as system_a), and
    the expected drawing: {(system, task): (system - base, interval, significant)}."""
    rng = np.random.default_rng(seed)
    rows, expected = [], {}
    for t in range(n_tasks):
        task = f"task-{t}"
        scale = 10.0 ** rng.uniform(-2, 1)
        for k in range(n_systems):
            system = f"sys{k}"
            d = float(rng.normal(0, scale))
            low, high = d - scale * float(rng.uniform(0.1, 1)), d + scale * float(rng.uniform(0.1, 1))
            p = float(rng.choice([0.001, 0.05, 0.2, 0.9]))
            significant = p <= 0.05
            if k % flip_every == 0:  # base against the system: the table holds base - system
                rows.append(dict(task=task, system_a="base", system_b=system, difference=-d, ci_low=-high,
                                 ci_high=-low, statistic=0.0, pvalue=p / 2, pvalue_adjusted=p, test="t", engine="e"))
            else:
                rows.append(dict(task=task, system_a=system, system_b="base", difference=d, ci_low=low,
                                 ci_high=high, statistic=0.0, pvalue=p / 2, pvalue_adjusted=p, test="t", engine="e"))
            expected[system, task] = (d, (low, high), significant)
        if extra_pairs:  # an all-pairs table also holds pairs without the baseline
            rows.append(dict(task=task, system_a="sys0", system_b="sys1", difference=123.0, ci_low=0.0, ci_high=999.0,
                             statistic=0.0, pvalue=0.5, pvalue_adjusted=0.5, test="t", engine="e"))
    return rows, expected


def drawn_differences(axes):
    """{(system, task): (centre, (low, high) or None, filled marker)} read from the artists."""
    systems = [t.get_text() for t in axes[0].get_yticklabels()]
    out = {}
    for ax in axes:
        task = ax.get_title()
        segments = {}
        for collection in ax.collections:
            for (x0, y0), (x1, y1) in collection.get_segments():
                assert y0 == y1
                segments[systems[int(round(y0))]] = (min(x0, x1), max(x0, x1))
        for line in ax.get_lines():
            if line.get_marker() != "o":
                continue
            filled = matplotlib.colors.to_hex(line.get_markerfacecolor()) == "#000000"
            for x, y in zip(line.get_xdata(), line.get_ydata()):
                system = systems[int(round(y))]
                assert (system, task) not in out
                out[system, task] = (x, segments.pop(system, None), filled)
        assert not segments  # every interval has its centre
    return systems, out


def check_drawn(axes, expected):
    systems, drawn = drawn_differences(axes)
    assert set(drawn) == set(expected)
    for key, (centre, interval, significant) in expected.items():
        got_centre, got_interval, filled = drawn[key]
        assert got_centre == pytest.approx(centre, rel=1e-12, abs=1e-15)
        # A missing interval is drawn as none (pytest.approx takes numbers only).
        assert (got_interval is None) == (interval is None), key
        if interval is not None:
            assert got_interval == pytest.approx(interval, rel=1e-12, abs=1e-15)
        assert filled == significant, key
    return systems


def test_differences_30_systems_12_tasks_draws_each_interval_once():
    rows, expected = difference_table(30, 12, seed=6)
    axes = pairperm.plot_differences(rows)  # the baseline is the one system in every row
    assert len(axes) == 12
    assert [ax.get_title() for ax in axes] == [f"task-{t}" for t in range(12)]
    systems = check_drawn(axes, expected)
    # Best mean difference first.
    mean = {s: np.mean([expected[s, f"task-{t}"][0] for t in range(12)]) for s in systems}
    assert systems == sorted(mean, key=lambda s: -mean[s])
    assert any(v[2] for v in expected.values()) and not all(v[2] for v in expected.values())
    # A zero line on every panel; 12 tasks wrap into two rows of six panels.
    for ax in axes:
        assert any(list(line.get_xdata()) == [0, 0] for line in ax.get_lines())
    assert {ax.get_subplotspec().get_gridspec().get_geometry() for ax in axes} == {(2, 6)}
    assert axes[-1].get_xlabel() == "difference to base"  # the table names no metric
    # Neither the correction nor the intervals' level is known: the legend says only what is.
    labels = [t.get_text() for t in axes[0].figure.legends[0].get_texts()]
    assert labels == ["adjusted p > 0.05", "adjusted p <= 0.05", "intervals, not adjusted for multiplicity"]


def test_differences_lower_is_better_all_pairs_and_dataframe():
    rows, expected = difference_table(6, 3, seed=7, extra_pairs=True)
    axes = pairperm.plot_differences(rows, baseline="base", lower_is_better=True, columns=2)
    systems = check_drawn(axes, expected)
    mean = {s: np.mean([expected[s, f"task-{t}"][0] for t in range(3)]) for s in systems}
    assert systems == sorted(mean, key=lambda s: mean[s])
    assert {ax.get_subplotspec().get_gridspec().get_geometry() for ax in axes} == {(2, 2)}
    pd = pytest.importorskip("pandas")
    frame_axes = pairperm.plot_differences(pd.DataFrame(rows), baseline="base", lower_is_better=True)
    assert drawn_differences(frame_axes) == drawn_differences(axes)


def test_differences_raw_pvalues_boundary_missing_cells_and_own_axes():
    rows = [
        dict(task="t1", system_a="A", system_b="base", difference=0.5, ci_low=0.1, ci_high=0.9, pvalue=0.05,
             pvalue_adjusted=0.2),
        # A percentile interval that misses its point estimate is drawn as it is.
        dict(task="t1", system_a="B", system_b="base", difference=-0.5, ci_low=-0.4, ci_high=-0.1, pvalue=0.5,
             pvalue_adjusted=0.05),
        # No interval: the marker only. C has no row on t1.
        dict(task="t2", system_a="C", system_b="base", difference=2.0, ci_low=math.nan, ci_high=math.nan,
             pvalue=0.01, pvalue_adjusted=0.02),
    ]
    fig, axes = plt.subplots(1, 2)
    drawn = pairperm.plot_differences(rows, ax=axes)
    assert list(drawn) == list(axes)
    check_drawn(drawn, {("A", "t1"): (0.5, (0.1, 0.9), False), ("B", "t1"): (-0.5, (-0.4, -0.1), True),
                        ("C", "t2"): (2.0, None, True)})
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["C", "A", "B"]
    drawn = pairperm.plot_differences(rows, ax=plt.subplots(1, 2)[1], adjusted=False)
    check_drawn(drawn, {("A", "t1"): (0.5, (0.1, 0.9), True), ("B", "t1"): (-0.5, (-0.4, -0.1), False),
                        ("C", "t2"): (2.0, None, True)})
    (ax,) = pairperm.plot_differences(rows[:2], ax=plt.subplots()[1], alpha=0.01)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["adjusted p > 0.01",
                                                                    "intervals, not adjusted for multiplicity"]
    # No interval drawn: none in the legend either.
    (ax,) = pairperm.plot_differences(rows[2:], "base", plt.subplots()[1], correction="holm")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Holm-adjusted p <= 0.05"]


@pytest.mark.parametrize("alternative, baseline", [("greater", "s0"), ("less", "s0"), ("greater", None)])
def test_differences_draw_one_sided_intervals_to_the_panel_edge(alternative, baseline):
    rng = np.random.default_rng(0)
    tasks = {t: {f"s{i}": (rng.random(200) < 0.4 + 0.1 * i).astype(int) for i in range(3)} for t in ("a", "b")}
    res = pairperm.compare_systems(tasks, baseline=baseline, alternative=alternative, rng=0)
    axes = res.plot_differences(baseline="s0")
    systems, drawn = drawn_differences(axes)
    for r in res.rows:
        if "s0" not in (r.system_a, r.system_b):
            continue
        flip = r.system_a == "s0"  # drawn as system minus s0
        system = r.system_b if flip else r.system_a
        low, high = (-r.ci_high, -r.ci_low) if flip else (r.ci_low, r.ci_high)
        assert math.isinf(low) != math.isinf(high)  # one-sided: exactly one end unbounded
        (ax,) = [ax for ax in axes if ax.get_title() == r.task]
        left, right = ax.get_xlim()
        centre, segment, _filled = drawn[system, r.task]
        assert centre == pytest.approx(-r.difference if flip else r.difference)
        want = (low, right) if math.isinf(high) else (left, high)
        assert segment == pytest.approx(want, rel=1e-12)
        assert left < min(centre, 0.0) and max(centre, 0.0) < right  # the finite parts are inside the panel
        arrows = [(x, y) for line in ax.get_lines() if line.get_marker() == (">" if math.isinf(high) else "<")
                  for x, y in zip(line.get_xdata(), line.get_ydata())]
        assert (right if math.isinf(high) else left, systems.index(system)) in arrows


def test_differences_cli_plots_one_sided_comparisons(tmp_path):
    pd = pytest.importorskip("pandas")
    import os
    import subprocess
    import sys

    rng = np.random.default_rng(1)
    rows = [("t", i, f"m{k}", int(rng.random() < 0.4 + 0.1 * k)) for i in range(80) for k in range(3)]
    pd.DataFrame(rows, columns=["task", "item", "system", "score"]).to_csv(tmp_path / "long.csv", index=False)
    out = subprocess.run([sys.executable, "-m", "pairperm", "compare", str(tmp_path / "long.csv"), "--long",
                          "--baseline", "m0", "--alternative", "greater", "--plot", str(tmp_path / "x.png")],
                         capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "x.png").stat().st_size > 0


def legend_labels(axes):
    """The entries of the legend of a plot_differences figure (the figure's, or the first panel's)."""
    legend = axes[0].figure.legends[0] if axes[0].figure.legends else axes[0].get_legend()
    return [t.get_text() for t in legend.get_texts()]


METRICS = {"task-0": "accuracy", "task-1": "uas", "task-2": "sum"}


def test_differences_label_each_axis_with_its_metric_and_units():
    rows, expected = difference_table(4, 3, seed=8)
    with_metric = [{**r, "metric": METRICS[r["task"]]} for r in rows]
    axes = pairperm.plot_differences(with_metric)
    check_drawn(axes, expected)
    labels = {ax.get_title(): ax.get_xlabel() for ax in axes}
    assert set(labels) == set(METRICS)  # tasks of different metrics: every panel names its own
    for task, label in labels.items():
        assert label.startswith("difference to base") and METRICS[task] in label, label
    # Metrics reported as sums say so; a mean per item does not.
    assert "summed over items" in labels["task-1"] and "sum over items" in labels["task-2"]
    assert "over items" not in labels["task-0"]
    # The metric may be given instead of a column: per task, or one for every task, which the
    # bottom row of panels names once.
    assert [ax.get_xlabel() for ax in pairperm.plot_differences(rows, metric=METRICS)] == list(labels.values())
    axes = pairperm.plot_differences(rows, metric="accuracy", columns=2)
    assert [ax.get_xlabel() for ax in axes] == ["", labels["task-0"], labels["task-0"]]  # panel 1 has none below
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(with_metric)
    assert [ax.get_xlabel() for ax in pairperm.plot_differences(frame)] == list(labels.values())
    # A metric missing from some rows of a column (NaN in a DataFrame) is unknown for that task only.
    frame.loc[frame["task"] == "task-1", "metric"] = math.nan
    got = [ax.get_xlabel() for ax in pairperm.plot_differences(frame)]
    assert got == [labels["task-0"], "difference to base", labels["task-2"]]
    # A metric where lower is better orders the systems as lower_is_better=True does.
    lowest_first = drawn_differences(pairperm.plot_differences(rows, lower_is_better=True))
    assert drawn_differences(pairperm.plot_differences(rows, metric="perplexity")) == lowest_first
    assert drawn_differences(pairperm.plot_differences(rows))[0] != lowest_first[0]


@pytest.fixture(scope="module")
def task_comparison():
    rng = np.random.default_rng(4)
    truth = rng.random(600)
    tasks = {t: {f"m{k}": (truth < 0.45 + 0.02 * k + rng.normal(0, 0.15, 600)).astype(np.int64) for k in range(8)}
             for t in ("boolq", "arc")}
    tasks["pos"] = {f"m{k}": rng.binomial(12, 0.85 + 0.004 * k, 300) for k in range(8)}
    return pairperm.compare_systems(tasks, metric={"boolq": "accuracy", "arc": "accuracy", "pos": "uas"},
                                    baseline="m0", correction="bonferroni", correction_scope="family", rng=0)


def test_differences_of_a_comparison_name_metric_correction_and_interval_level(task_comparison):
    res = task_comparison
    axes = pairperm.plot_differences(res)
    systems, drawn = drawn_differences(axes)
    assert drawn_differences(res.plot_differences()) == (systems, drawn)  # the same marks and intervals
    metric = {t.name: t.metric for t in res.tasks}
    for ax in axes:
        assert metric[ax.get_title()] in ax.get_xlabel()
    assert legend_labels(axes) == [f"Bonferroni-adjusted p > {res.alpha:g}", f"Bonferroni-adjusted p <= {res.alpha:g}",
                                   f"{res.confidence_level:.0%} intervals, not adjusted for multiplicity"]
    # What the legend must make plain: a marginal interval off zero beside an open (adjusted
    # p > alpha) marker; both kinds of pair are in the fixture.
    off_zero = [r for r in res.rows if not r.significant and (r.ci_low > 0 or r.ci_high < 0)]
    assert off_zero and any(r.significant for r in res.rows)
    for r in off_zero:
        assert drawn[r.system_b if r.system_a == "m0" else r.system_a, r.task][2] is False
    raw = pairperm.plot_differences(res, adjusted=False)
    assert legend_labels(raw)[:2] == [f"unadjusted p > {res.alpha:g}", f"unadjusted p <= {res.alpha:g}"]


def test_differences_legend_names_what_the_table_cannot_carry():
    rows, _ = difference_table(5, 2, seed=9)
    axes = pairperm.plot_differences(rows, correction="holm", confidence_level=0.9, alpha=0.1)
    assert legend_labels(axes) == ["Holm-adjusted p > 0.1", "Holm-adjusted p <= 0.1",
                                   "90% intervals, not adjusted for multiplicity"]
    axes = pairperm.plot_differences(rows, correction="none")
    assert legend_labels(axes)[:2] == ["unadjusted p > 0.05", "unadjusted p <= 0.05"]
    one_sided = [{**r, "ci_high": math.inf} for r in rows if r["system_b"] == "base"]
    axes = pairperm.plot_differences(one_sided, confidence_level=0.95)
    assert legend_labels(axes)[-1] == "95% one-sided intervals, not adjusted for multiplicity"


def good_rows():
    return [dict(task="t", system_a="A", system_b="base", difference=1.0, ci_low=0.5, ci_high=1.5,
                 pvalue=0.01, pvalue_adjusted=0.02),
            dict(task="t", system_a="B", system_b="base", difference=-1.0, ci_low=-1.5, ci_high=-0.5,
                 pvalue=0.01, pvalue_adjusted=0.02)]


def edited(k, **changes):
    rows = good_rows()
    rows[k] = {**rows[k], **changes}
    return rows


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pairperm.plot_differences([{k: v for k, v in r.items() if k not in ("ci_low", "task")}
                                            for r in good_rows()]), "lacks columns 'task', 'ci_low'"),
        (lambda: pairperm.plot_differences([{k: v for k, v in r.items() if k != "pvalue"} for r in good_rows()],
                                           adjusted=False), "lacks column 'pvalue'"),
        (lambda: pairperm.plot_differences(good_rows(), baseline="nobody"), "baseline 'nobody' is not a system"),
        (lambda: pairperm.plot_differences(good_rows() + edited(0, system_a="A", system_b="B")), "pass baseline="),
        (lambda: pairperm.plot_differences(good_rows()[:1]), "'A', 'base'"),
        (lambda: pairperm.plot_differences([]), "no rows"),
        (lambda: pairperm.plot_differences({"task": ["t"]}), "DataFrame or a sequence"),
        (lambda: pairperm.plot_differences([("t", "A", "base")]), "row 0 of the table is a tuple"),
        (lambda: pairperm.plot_differences(edited(1, difference="big")), "row 1, column 'difference'"),
        (lambda: pairperm.plot_differences(edited(1, difference=math.inf)), "row 1: difference must be finite"),
        (lambda: pairperm.plot_differences(edited(0, ci_low=2.0)), r"row 0: the interval"),
        (lambda: pairperm.plot_differences(edited(0, ci_low=math.nan)), r"row 0: the interval"),
        (lambda: pairperm.plot_differences(edited(0, ci_low=-math.inf, ci_high=math.inf)), r"row 0: the interval"),
        (lambda: pairperm.plot_differences(edited(0, ci_low=math.inf, ci_high=math.inf)), r"row 0: the interval"),
        (lambda: pairperm.plot_differences(edited(0, ci_low=0.5, ci_high=-math.inf)), r"row 0: the interval"),
        (lambda: pairperm.plot_differences(edited(0, ci_low=math.nan, ci_high=math.inf)), r"row 0: the interval"),
        (lambda: pairperm.plot_differences(edited(1, pvalue_adjusted=1.5)), "row 1: pvalue_adjusted"),
        (lambda: pairperm.plot_differences(edited(1, system_a="A"), baseline="base"), "second row for 'A'"),
        (lambda: pairperm.plot_differences(edited(1, system_a="base")), "row 1 compares 'base' with itself"),
        (lambda: pairperm.plot_differences(good_rows(), alpha=0), "alpha"),
        (lambda: pairperm.plot_differences(good_rows(), columns=0), "columns"),
        (lambda: pairperm.plot_differences([{**r, "metric": m} for r, m in zip(good_rows(), ("accuracy", "f1"))]),
         "task 't' has rows of two metrics: 'accuracy' and 'f1'"),
        (lambda: pairperm.plot_differences(good_rows(), metric=3), "metric must be"),
        (lambda: pairperm.plot_differences(good_rows(), correction="sidak"), "correction must be"),
        (lambda: pairperm.plot_differences(good_rows(), confidence_level=95), "confidence_level"),
        (lambda: pairperm.plot_differences(good_rows() + [{**good_rows()[0], "task": "u"}], ax=plt.subplots()[1]),
         "one Axes per task: 2 tasks, 1 Axes"),
    ],
)
def test_differences_reject_bad_tables(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_several_tasks_plot_with_each_tasks_name_metric_and_layout():
    rng = np.random.default_rng(21)
    truth = rng.random(300)
    tasks = {t: {f"ckpt-{k}": (truth < 0.5 + 0.03 * k + rng.normal(0, 0.1, 300)).astype(int) for k in range(3)}
             for t in ("boolq", "arc")}
    res = pairperm.compare_systems(tasks, baseline="ckpt-0", rng=0, progress=False)
    one = res.task("arc").plot()
    assert res.plot("arc").get_title() == f"arc: {one.get_title()}"
    axes = res.plot_differences()
    assert {ax.get_title(): ax.get_xlabel() for ax in axes} == {
        ax.get_title(): ax.get_xlabel() for ax in pairperm.plot_differences(res, baseline="ckpt-0")}
    assert all("accuracy" in ax.get_xlabel() for ax in axes if ax.get_xlabel())
    tall, wide = res.to_latex(layout="tall"), res.to_latex(layout="wide")
    assert tall == str(res.report().to_latex(layout="tall")) and wide == str(res.report().to_latex(layout="wide"))
    assert tall != wide


def test_pvalue_matrix_and_differences_draw_into_a_subfigure():
    n = 32
    p = symmetric_pvalues(n, seed=2)
    names = [f"system-{k}" for k in range(n)]
    fig = plt.figure(figsize=(8, 4))
    left, right = fig.subfigures(1, 2)
    ax = pairperm.plot_pvalue_matrix(p, names, ax=left.subplots())
    # The labels fit the axes as drawn: its position is a fraction of the subfigure's height.
    row = ax.get_position().height * left.bbox.height / fig.dpi * 72 / n
    low, high = _plot_systems.TICK_POINTS
    assert {t.get_fontsize() for t in ax.get_yticklabels()} == {min(high, max(low, _plot_systems.TICK_FILL * row))}
    assert dots(ax) == {(i, j) for i in range(n) for j in range(n) if p[i, j] < 0.05}
    res = pairperm.compare_systems({"t1": {"a": [1, 0, 1, 1] * 10, "b": [0, 0, 1, 0] * 10, "c": [1, 1, 1, 0] * 10}})
    axes = res.plot_differences(baseline="a", ax=right.subplots())
    assert len(axes) == 1 and axes[0].figure is right
