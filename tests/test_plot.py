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
from pairperm import _plot  # noqa: E402
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
