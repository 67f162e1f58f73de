"""Inputs are paired by id, never silently by position; the command line's reader is strict."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

import pairperm
from pairperm._tables import read_table
from pairperm.cli import main
from reference import brute_force_pvalue
from synthetic import misaligned

pd = pytest.importorskip("pandas")

# Scores of two systems on eight documents, and a shuffled order of the documents.
A = [9, 7, 8, 6, 9, 8, 7, 9]
B = [8, 3, 9, 4, 2, 9, 2, 1]
IDS = [f"doc{i}" for i in range(8)]
SHUFFLE = [3, 7, 0, 5, 1, 6, 2, 4]


def by_id_pvalue(a, b):
    return float(brute_force_pvalue(a, b, "two-sided"))


# ---------------------------------------------------------------- compare_systems pairs by id


def test_series_with_shuffled_index_are_paired_by_label():
    a = pd.Series(A, index=IDS)
    b = pd.Series(B, index=IDS).iloc[SHUFFLE]
    c = pd.Series(A[::-1], index=IDS[::-1])  # the same scores as A, listed backwards
    res = pairperm.compare_systems({"A": a, "B": b, "C": c}, metric="sum", correction=None)
    want = by_id_pvalue(A, B)
    assert [r.pvalue for r in res.rows] == pytest.approx([want, 1.0, want])
    assert res.rows[2].statistic == -res.rows[0].statistic


@pytest.mark.parametrize("index_b, match", [
    (IDS[:7] + ["doc99"], r"only in system 'A': 'doc7'; only in system 'B': 'doc99'"),
    (IDS[:7] + ["doc0"], r"duplicated ids: 'doc0'"),
])
def test_series_with_other_or_duplicated_ids_are_refused(index_b, match):
    with pytest.raises(ValueError, match=match):
        pairperm.compare_systems({"A": pd.Series(A, index=IDS), "B": pd.Series(B, index=index_b)})


def test_series_with_ids_next_to_a_plain_list_is_refused():
    with pytest.raises(ValueError, match="has an index of item ids but system 'B' has none"):
        pairperm.compare_systems({"A": pd.Series(A, index=IDS), "B": B})
    # an index that is the positions themselves pairs as positions do
    res = pairperm.compare_systems({"A": pd.Series(A), "B": B}, metric="sum")
    assert res.rows[0].pvalue == pytest.approx(by_id_pvalue(A, B))


def test_id_column_of_a_dataframe_is_not_a_system():
    frame = pd.DataFrame({"doc_id": range(8), "A": A, "B": B})
    with pytest.raises(ValueError, match=r"'doc_id' looks like a column of item ids.*id_column='doc_id'"):
        pairperm.compare_systems(frame, metric="sum")
    res = pairperm.compare_systems(frame, metric="sum", id_column="doc_id")
    assert res.names == ("A", "B") and res.rows[0].pvalue == pytest.approx(by_id_pvalue(A, B))
    # chosen explicitly, an id-like column is compared like any other
    assert pairperm.compare_systems(frame, metric="sum", names=["doc_id", "A"]).names == ("doc_id", "A")
    with pytest.raises(ValueError, match=r"duplicated ids: 3"):
        pairperm.compare_systems(frame.assign(doc_id=[0, 1, 2, 3, 3, 5, 6, 7]), id_column="doc_id")
    with pytest.raises(ValueError, match="no DataFrame column .id_column. named 'qid'"):
        pairperm.compare_systems(frame, id_column="qid")


def test_row_number_columns_are_refused_under_any_name():
    n = 12
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"n": np.arange(1, n + 1), "A": rng.integers(0, 2, n), "B": rng.integers(0, 2, n)})
    with pytest.raises(ValueError, match=r"'n' looks like a column of item ids.*count 1, 2, \.\.\., 12"):
        pairperm.compare_systems(frame)
    with pytest.raises(ValueError, match="'index' looks like a column of item ids"):
        pairperm.compare_systems(frame.rename(columns={"n": "index"}).assign(index=rng.integers(0, 2, n)))


# ---------------------------------------------------------------- the command line's reader


def run(argv, capsys, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", stdin)
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("text, where", [
    ("12,l1\n3,4\n", ":1: expected 2 numbers (the scores of system A, of system B) per line; 'l1' is not a number"),
    ("0x10,7\n3,4\n", ":1: expected 2 numbers"),
    ("12,,11\n", ":1: expected 2 numbers (the scores of system A, of system B) per line; got 3 field(s)"),
    ("1,2\n3,\n", ":2: expected 2 numbers (the scores of system A, of system B) per line; got an empty field"),
    ("1,2\n\n3,4,5\n", ":3: expected 2 numbers"),
    ("a,b\n1,2\n3\n", ":3: expected 2 numbers"),
    ("1,2\nnan,1\n", ":2: expected 2 numbers (the scores of system A, of system B) per line; 'nan' is not a number"),
    ("1,2\n1_0,1\n", ":2: expected 2"),
    ("1,2\n1,1e999\n", ":2: 1e999 is beyond the range of float64"),
    ("0.5,1\n9007199254740993,1\n", ":2: the integer 9007199254740993 is in a column of real numbers"),
    ("", ": no rows of numbers (the scores of system A, of system B): the file is empty"),
    ("\n\n", ": no rows of numbers"),
    ("sys_a,sys_b\n", ": a header row (sys_a, sys_b) but no rows of numbers"),
])
def test_test_command_refuses_what_is_not_a_table_of_numbers(tmp_path, capsys, text, where):
    f = tmp_path / "scores.csv"
    f.write_text(text)
    code, out, err = run(["test", str(f)], capsys)
    assert code == 2 and out == "" and str(f) + where in err, err


def test_bom_on_stdin_is_stripped_and_the_first_line_judged_as_data(capsys, monkeypatch):
    rows = "8,6\n3,5\n7,7\n9,2\n"
    stdin = io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbf" + rows.encode()), encoding="utf-8")
    code, out, _ = run(["test", "-", "--json"], capsys, stdin=stdin, monkeypatch=monkeypatch)
    assert code == 0
    want = brute_force_pvalue([8, 3, 7, 9], [6, 5, 7, 2], "two-sided")
    assert '"entries": 4' in out and f'"pvalue": {float(want)!r}' in out


def test_integers_beyond_2_53_are_read_exactly(tmp_path):
    big = 2**60 + 1
    f = tmp_path / "big.csv"
    f.write_text(f"a,b\n{big},{big - 3}\n{-big},7\n")
    table = read_table(str(f))
    assert table.header == ("a", "b")
    assert [c.dtype for c in table.columns] == [np.int64, np.int64]
    assert table.columns[0].tolist() == [big, -big] and table.columns[1].tolist() == [big - 3, 7]


def test_reader_without_pandas_agrees(tmp_path, monkeypatch):
    f = tmp_path / "t.tsv"
    f.write_text("x\ty\n\n1\t2.5\n3\t4\n")
    with_pandas = read_table(str(f))
    monkeypatch.setitem(sys.modules, "pandas", None)
    numpy_only = read_table(str(f))
    for a, b in zip(with_pandas.columns, numpy_only.columns):
        assert a.tolist() == b.tolist()
    assert numpy_only.line_of(1) == 4
    g = tmp_path / "bad.csv"
    g.write_text("1,2\n3,x\n")
    with pytest.raises(ValueError, match=r"bad.csv:2: .*'x' is not a number"):
        read_table(str(g))


def test_compare_table_with_an_id_column(tmp_path, capsys):
    f = tmp_path / "scores.csv"
    f.write_text("doc_id,A,B\n" + "".join(f"{i},{a},{b}\n" for i, a, b in zip(IDS, A, B)))
    code, _, err = run(["compare", str(f), "--metric", "sum"], capsys)
    assert code == 2 and "column 'doc_id' looks like item ids" in err and "--id-column doc_id" in err
    code, out, _ = run(["compare", str(f), "--metric", "sum", "--id-column", "doc_id", "--format", "json"], capsys)
    assert code == 0
    res = pairperm.SystemsComparison.from_json(out)
    assert res.names == ("A", "B") and res.rows[0].pvalue == pytest.approx(by_id_pvalue(A, B))
    f.write_text("doc_id,A,B\n" + "".join(f"{i},{a},{b}\n" for i, a, b in zip(IDS[:7] + ["doc0"], A, B)))
    code, _, err = run(["compare", str(f), "--metric", "sum", "--id-column", "doc_id"], capsys)
    assert code == 2 and "duplicated ids: 'doc0'" in err


def test_reading_a_table_holds_less_than_three_times_the_file(tmp_path):
    import tracemalloc

    from pairperm._tables import read_table

    rng = np.random.default_rng(0)
    n = 600_000
    path = tmp_path / "scores.csv"
    np.savetxt(path, rng.integers(0, 10, (n, 2)), fmt="%d", delimiter=",")  # 4 bytes a line
    size = path.stat().st_size
    tracemalloc.start()
    try:
        table = read_table(str(path), widths=(2,))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(table) == n and all(c.dtype.kind == "i" for c in table.columns)
    assert np.array_equal(np.column_stack(table.columns), np.loadtxt(path, delimiter=",", dtype=np.int64))
    assert peak < 3 * size, (peak, size)


# ---------------------------------------------------------------- two-sample tests pair by id


PAIRED_CALLS = {
    "permutation_test": lambda x, y: pairperm.permutation_test(x, y),
    "compare": lambda x, y: pairperm.compare(x, y, "sum"),
    "sign_test": lambda x, y: pairperm.sign_test(x, y),
    "wilcoxon_test": lambda x, y: pairperm.wilcoxon_test(x, y),
    "mcnemar_test": lambda x, y: pairperm.mcnemar_test(x > 7, y > 7),
    "shift_interval": lambda x, y: pairperm.shift_interval(x, y),
    "bootstrap_test": lambda x, y: pairperm.bootstrap_test(x, y, rng=0, n_resamples=200),
}


@pytest.mark.parametrize("call", PAIRED_CALLS.values(), ids=PAIRED_CALLS.keys())
def test_series_with_ids_next_to_an_array_is_refused_by_every_paired_test(call):
    # Only two pandas objects had their indexes compared: a Series sorted by score next to a
    # plain array was paired by position.
    a = pd.Series(A, index=IDS).iloc[SHUFFLE]
    with pytest.raises(ValueError, match="index of item ids"):
        call(a, np.array(B))
    with pytest.raises(ValueError, match="index of item ids"):
        call(np.array(A), pd.Series(B, index=IDS))


def test_series_with_a_positional_index_pairs_with_an_array():
    want = by_id_pvalue(A, B)
    assert pairperm.permutation_test(pd.Series(A), np.array(B)).pvalue == pytest.approx(want)
    assert pairperm.permutation_test(np.array(A), pd.Series(B)).pvalue == pytest.approx(want)


# ---------------------------------------------------------------- DataFrame columns are read by name


def _bleu_frames():
    rng = np.random.default_rng(3)

    def stats(n):
        hyp, ref = rng.integers(8, 20, n), rng.integers(8, 20, n)
        tot = np.stack([np.maximum(hyp - k, 0) for k in range(4)], 1)
        cor = (tot * rng.uniform(0.2, 0.9, (n, 4))).astype(int)
        return pd.DataFrame(np.column_stack([hyp, ref, cor, tot]), columns=pairperm.BLEU_COLUMNS)

    return stats(30), stats(30)


@pytest.mark.parametrize("call", [
    lambda x, y: pairperm.compare(x, y, "bleu", rng=0, n_resamples=500).difference,
    lambda x, y: pairperm.bootstrap_test(x, y, metric="bleu", rng=0, n_resamples=200).statistic,
])
def test_bleu_frames_are_read_by_column_name(call):
    x, y = _bleu_frames()
    want = call(x.to_numpy(), y.to_numpy())
    reordered = y[list(reversed(pairperm.BLEU_COLUMNS))]
    assert call(x, reordered) == pytest.approx(want, rel=1e-12)
    assert call(x, y) == pytest.approx(want, rel=1e-12)


def test_f1_frames_are_read_by_column_name_in_the_bootstrap_as_in_f1_test():
    f = pd.DataFrame({"tp": [3, 2, 5, 1], "fp": [1, 0, 2, 0], "fn": [0, 1, 1, 2]})
    g = pd.DataFrame({"fn": [1, 0, 0, 1], "tp": [2, 3, 6, 2], "fp": [0, 1, 1, 3]})
    want = pairperm.f1_test(f, g).statistic
    got = pairperm.bootstrap_test(f, g, metric="f1", rng=0, n_resamples=200).statistic
    assert got == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(pairperm.f1_test(f.to_numpy(), g[["tp", "fp", "fn"]].to_numpy()).statistic)


def test_frames_for_a_callable_metric_are_matched_column_by_column_name():
    x = pd.DataFrame({"num": [1.0, 2.0, 3.0, 2.0], "den": [2.0, 3.0, 4.0, 3.0]})
    y = pd.DataFrame({"num": [1.0, 1.0, 2.0, 2.0], "den": [2.0, 2.0, 5.0, 4.0]})
    ratio = lambda s: s[..., 0] / s[..., 1]  # noqa: E731
    kw = dict(rng=0, n_resamples=300)
    want = pairperm.compare(x.to_numpy(), y.to_numpy(), ratio, **kw)
    got = pairperm.compare(x, y[["den", "num"]], ratio, **kw)
    assert (got.statistic, got.pvalue) == (want.statistic, want.pvalue)
    boot = pairperm.bootstrap_test(x, y[["den", "num"]], metric=ratio, rng=0, n_resamples=200)
    assert boot.statistic == pairperm.bootstrap_test(x.to_numpy(), y.to_numpy(), metric=ratio, rng=0,
                                                     n_resamples=200).statistic
    with pytest.raises(ValueError, match="different columns"):
        pairperm.compare(x, y.rename(columns={"den": "total"}), ratio)
    with pytest.raises(ValueError, match="reads columns by name"):
        pairperm.compare(x, x, "bleu")


# ---------------------------------------------------------------- bootstrap_intervals pairs by id


def test_bootstrap_intervals_pairs_series_by_label_and_reads_frames_by_column():
    rng = np.random.default_rng(1)
    ids = [f"d{i}" for i in range(40)]
    a = rng.random(40)
    b = a - 0.05 + rng.normal(0, 0.01, 40)
    kw = dict(method="percentile", rng=0, n_resamples=300)
    want = pairperm.bootstrap_intervals([a, b], **kw)
    sa, sb = pd.Series(a, index=ids), pd.Series(b, index=ids)
    shuffled = pairperm.bootstrap_intervals([sa, sb.sample(frac=1, random_state=0)], **kw)
    np.testing.assert_array_equal(shuffled.difference_intervals, want.difference_intervals)
    frame = pairperm.bootstrap_intervals(pd.DataFrame({"A": sa, "B": sb}), **kw)  # items as rows
    np.testing.assert_array_equal(frame.estimates, want.estimates)
    np.testing.assert_array_equal(frame.difference_intervals, want.difference_intervals)
    with pytest.raises(ValueError, match="not scored on the same ids"):
        pairperm.bootstrap_intervals([sa, pd.Series(b, index=[f"e{i}" for i in range(40)])], **kw)


# ---------------------------------------------------------------- floats wider than float64


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= np.finfo(np.float64).nmant,
                    reason="long double is float64 on this platform")
def test_long_double_scores_are_not_rounded_to_float64():
    # 2^54 + 1 rounds to 2^54 in float64: the statistic came out as -3 instead of 2.
    x = np.array([2**54 + 1] * 5 + [0], dtype=np.longdouble)
    y = np.array([2**54] * 5 + [3], dtype=np.longdouble)
    xi, yi = [2**54 + 1] * 5 + [0], [2**54] * 5 + [3]
    want = brute_force_pvalue([a - b for a, b in zip(xi, yi)], [b - a for a, b in zip(xi, yi)], "greater")
    r = pairperm.permutation_test(x, y, alternative="greater")
    assert r.statistic == 2 and r.pvalue == pytest.approx(float(want), rel=1e-12)
    assert pairperm.compare(x, y, "sum", alternative="greater").pvalue == pytest.approx(float(want), rel=1e-12)
    assert pairperm.sign_test(x, y, alternative="greater").pvalue == \
        pairperm.sign_test(np.array(xi), np.array(yi), alternative="greater").pvalue
    third = np.longdouble(1) / np.longdouble(3)  # not a float64
    with pytest.raises(ValueError, match="cannot be held exactly in float64"):
        pairperm.permutation_test(np.array([third, 0.5], dtype=np.longdouble), np.array([0.25, 0.5]))


def test_chrf_plus_plus_frames_keep_their_word_orders():
    # Only the six character orders of CHRF_COLUMNS were read by name: a chrF++ frame (24
    # columns) was scored as chrF without a word.
    rng = np.random.default_rng(0)
    cols = list(pairperm.CHRF_COLUMNS) + [f"{w}_{o}" for o in (7, 8) for w in ("hyp", "ref", "match")]

    def frame():
        hyp, ref = rng.integers(5, 30, (40, 8)), rng.integers(5, 30, (40, 8))
        match = (np.minimum(hyp, ref) * rng.uniform(0.3, 1, (40, 8))).astype(int)
        return pd.DataFrame(np.stack([hyp, ref, match], axis=2).reshape(40, 24), columns=cols)

    x, y = frame(), frame()
    kw = dict(rng=0, n_resamples=300)
    want = pairperm.compare(x.to_numpy(), y.to_numpy(), "corpus_chrf", **kw).difference
    shuffled = y[list(reversed(cols))]
    assert pairperm.compare(x, shuffled, "corpus_chrf", **kw).difference == pytest.approx(want, rel=1e-12)
    assert pairperm.compare_systems({"A": x, "B": shuffled}, "corpus_chrf", **kw).rows[0].difference == \
        pytest.approx(want, rel=1e-12)
    assert want != pytest.approx(pairperm.compare(x.to_numpy()[:, :18], y.to_numpy()[:, :18], "corpus_chrf",
                                                  **kw).difference)
    with pytest.raises(ValueError, match="every order needs its hyp, ref and match"):
        pairperm.compare(x.drop(columns=["match_8"]), y, "corpus_chrf")


def test_one_sample_wilcoxon_takes_an_indexed_series():
    d = pd.Series([1.5, -0.5, 2.0, 3.0, -1.0, 2.5], index=[f"q{i}" for i in range(6)])
    assert pairperm.wilcoxon_test(d).pvalue == pairperm.wilcoxon_test(d.to_numpy()).pvalue


def test_groups_with_item_ids_next_to_plain_scores_are_refused():
    # Matched by position, they swapped the wrong items together.
    g = pd.Series([0, 0, 1, 1, 2, 2, 3, 3], index=IDS).iloc[::-1]
    with pytest.raises(ValueError, match="index of item ids"):
        pairperm.permutation_test(A, B, groups=g)
    assert pairperm.permutation_test(A, B, groups=g.to_numpy()).pvalue == \
        pairperm.permutation_test(A, B, groups=[3, 3, 2, 2, 1, 1, 0, 0]).pvalue


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= np.finfo(np.float64).nmant,
                    reason="long double is float64 on this platform")
def test_long_double_whole_numbers_beyond_int64_range_read_as_float64():
    x = np.array([1e19, 2e19, 3e19], dtype=np.longdouble)
    y = np.array([0.0, 1e19, 1e19], dtype=np.longdouble)
    want = pairperm.permutation_test(x.astype(np.float64), y.astype(np.float64))
    assert pairperm.permutation_test(x, y).pvalue == want.pvalue


# ---------------------------------------------------------------- views the core cannot read in place


def test_misaligned_views_reach_the_core_only_as_aligned_copies(monkeypatch):
    from pairperm import _core

    seen = []

    def checked(fn):
        def call(*args, **kwargs):
            for v in (*args, *kwargs.values()):
                if isinstance(v, np.ndarray):
                    seen.append(v.flags.aligned)
            return fn(*args, **kwargs)
        return call

    # Every function of the core but paired_sum_pvalue, which takes any object and declines
    # what it cannot read in place (the general route then runs).
    for name in dir(_core):
        fn = getattr(_core, name)
        if callable(fn) and not isinstance(fn, type) and not name.startswith("_") and name != "paired_sum_pvalue":
            monkeypatch.setattr(_core, name, checked(fn))
    rng = np.random.default_rng(4)
    xi, yi = rng.integers(0, 6, 300), rng.integers(0, 6, 300)
    xf, yf = rng.random(30), rng.random(30)
    calls = [
        lambda x, y: pairperm.permutation_test(x, y, method="exact"),
        lambda x, y: pairperm.monte_carlo_test(x - y, y - x, n_resamples=200, rng=0),
        lambda x, y: pairperm.wilcoxon_test(x, y),
        lambda x, y: pairperm.sign_test(x, y),
    ]
    for x, y in ((xi, yi), (xf, yf)):
        for call in calls:
            seen.clear()
            want = call(x, y)
            got = call(misaligned(x), misaligned(y))
            assert seen and all(seen), call
            assert got.to_dict() == want.to_dict()


# ---------------------------------------------------------------- quoted fields (RFC 4180)


@pytest.mark.parametrize("without_pandas", [False, True])
def test_quoted_fields_are_read_by_any_reader_and_named_by_their_first_line(tmp_path, monkeypatch, without_pandas):
    if without_pandas:
        monkeypatch.setitem(sys.modules, "pandas", None)
    f = tmp_path / "t.csv"
    f.write_text('"doc_id","A","B"\n"d, 1","1",2\n\n"d\n2",3,"4"\nd3,5,6\n')
    table = read_table(str(f), text_columns=("doc_id",))
    assert table.header == ("doc_id", "A", "B")
    assert [c.tolist() for c in table.columns] == [["d, 1", "d\n2", "d3"], [1, 3, 5], [2, 4, 6]]
    assert [table.line_of(r) for r in range(3)] == [2, 4, 6]


def test_white_space_separated_tables_keep_quotes_as_characters(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text('doc_id A\n"d1" 1\n"d 2\n')
    table = read_table(str(f), text_columns=("doc_id",))
    assert table.columns[0].tolist() == ['"d1"', '"d'] and table.columns[1].tolist() == [1, 2]


def test_compare_reads_an_id_column_of_quoted_ids(tmp_path, capsys):
    f = tmp_path / "scores.csv"
    ids = [f'"doc {i}, part ""{i}"""' for i in range(8)]
    f.write_text("doc_id,A,B\n" + "".join(f"{i},{a},{b}\n" for i, a, b in zip(ids, A, B)))
    code, out, err = run(["compare", str(f), "--metric", "sum", "--id-column", "doc_id", "--format", "json"], capsys)
    assert code == 0, err
    assert pairperm.SystemsComparison.from_json(out).rows[0].pvalue == pytest.approx(by_id_pvalue(A, B))
