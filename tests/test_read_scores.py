"""read_scores(): evaluation logs and tables with ids, read into scores aligned by id."""

from __future__ import annotations

import gzip
import json
import sys

import numpy as np
import pytest

import pairperm
from pairperm.cli import main
from reference import brute_force_pvalue

pd = pytest.importorskip("pandas")

# Two systems' scores per document; the second system's log lists the documents in another order.
IDS = [3, 0, 7, 1, 5, 2, 6, 4]
A = {3: 1, 0: 1, 7: 1, 1: 0, 5: 1, 2: 1, 6: 1, 4: 1}
B = {3: 0, 0: 1, 7: 0, 1: 1, 5: 0, 2: 0, 6: 1, 4: 0}
ORDER_B = [6, 2, 4, 0, 3, 1, 7, 5]


def jsonl(path, rows, compress=False):
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if compress:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def logs(tmp_path, compress_b=False):
    a = jsonl(tmp_path / "base.jsonl", [{"doc_id": i, "acc": bool(A[i]), "resps": [["x"]]} for i in IDS])
    b = jsonl(tmp_path / ("tuned.jsonl.gz" if compress_b else "tuned.jsonl"),
              [{"doc_id": i, "acc": bool(B[i])} for i in ORDER_B], compress=compress_b)
    return a, b


def test_jsonl_logs_with_booleans_and_gzip_are_aligned_by_id(tmp_path):
    a, b = logs(tmp_path, compress_b=True)
    frame = pairperm.read_scores([a, b], id_field="doc_id", score_field="acc")
    assert list(frame.columns) == ["base", "tuned"] and list(frame.index) == IDS
    assert frame["base"].dtype == np.int64 and frame["tuned"].tolist() == [B[i] for i in IDS]
    res = pairperm.compare_systems(frame, metric="sum", method="dp")
    want = brute_force_pvalue([A[i] for i in IDS], [B[i] for i in IDS], "two-sided")
    assert res.rows[0].pvalue == pytest.approx(float(want))
    by_mapping = pairperm.read_scores({"x": a, "y": b}, id_field="doc_id", column="acc")
    assert by_mapping.to_numpy().tolist() == frame.to_numpy().tolist()


def test_tsv_files_keep_big_integers_exact(tmp_path):
    big = 2**62 + 1
    (tmp_path / "a.tsv").write_text(f"item\tscore\tnote\nq1\t{big}\tok\nq2\t3\t\n")  # an empty note: skipped
    (tmp_path / "b.tsv").write_text(f"item\tscore\tnote\nq2\t4\tx\nq1\t{big - 5}\ty\n")
    frame = pairperm.read_scores([tmp_path / "a.tsv", tmp_path / "b.tsv"], id_field="item", score_field="score")
    assert frame.loc["q1"].tolist() == [big, big - 5] and frame.loc["q2"].tolist() == [3, 4]


def test_long_table_with_tasks_gives_a_frame_per_task(tmp_path):
    rows = ["id,model,task,correct"]
    for task, shift in (("arc", 0), ("hellaswag", 1)):
        for m, scores in (("m1", A), ("m2", B)):
            rows += [f"d{i},{m},{task},{(scores[i] + shift) % 2}" for i in IDS]
    path = tmp_path / "long.csv.gz"
    path.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode()))
    tasks = pairperm.read_scores(path, id_field="id", score_field="correct", system_field="model",
                                 task_field="task")
    assert list(tasks) == ["arc", "hellaswag"]
    assert tasks["arc"]["m1"].tolist() == [A[i] for i in IDS]
    assert tasks["hellaswag"]["m2"].tolist() == [(B[i] + 1) % 2 for i in IDS]
    assert tasks["arc"].columns.name == "model" and tasks["arc"].index.name == "id"


@pytest.mark.parametrize("b_rows, match", [
    ([{"doc_id": i, "acc": 1} for i in IDS[:-1]] + [{"doc_id": 99, "acc": 1}],
     r"only in system 'base' in \S+base.jsonl: 4; only in system 'tuned' in \S+tuned.jsonl: 99"),
    ([{"doc_id": i, "acc": 1} for i in IDS] + [{"doc_id": 0, "acc": 0}], r"tuned.jsonl has duplicated ids: 0"),
    ([{"doc_id": 0, "acc": 1}, {"doc_id": 1}], r"tuned.jsonl:2: no field 'acc'"),
    ([{"doc_id": 0, "acc": 1}, {"doc_id": 1, "acc": "yes"}], r"tuned.jsonl:2: 'acc' must be a finite number"),
    ([{"doc_id": 0, "acc": 0.5}, {"doc_id": 1, "acc": 2**53 + 1}],
     r"tuned.jsonl:2: 'acc' = 9007199254740993 is an integer among real-valued scores"),
    ([{"doc_id": 0, "acc": 10**20}], r"tuned.jsonl:1: 'acc' = 100000000000000000000 is beyond the 64-bit"),
])
def test_bad_logs_are_errors_naming_ids_file_and_line(tmp_path, b_rows, match):
    a, _ = logs(tmp_path)
    b = jsonl(tmp_path / "tuned.jsonl", b_rows)
    with pytest.raises(ValueError, match=match):
        pairperm.read_scores([a, b], id_field="doc_id", score_field="acc")


def test_malformed_json_line_and_unknown_format(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"doc_id": 0, "acc": 1}\n{"doc_id": 1, "acc": \n')
    with pytest.raises(ValueError, match=r"a.jsonl:2: not a JSON object"):
        pairperm.read_scores({"x": p, "y": p}, id_field="doc_id", score_field="acc")
    q = tmp_path / "a.log"
    q.write_text("")
    with pytest.raises(ValueError, match=r"a.log: cannot tell the format.*format="):
        pairperm.read_scores([q], id_field="doc_id", score_field="acc")


def test_without_pandas_the_error_says_so(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="read_scores needs pandas"):
        pairperm.read_scores([tmp_path / "a.jsonl"], id_field="doc_id", score_field="acc")


def test_cli_test_and_compare_read_logs_by_id(tmp_path, capsys):
    a, b = logs(tmp_path, compress_b=True)
    assert main(["test", str(a), str(b), "--id-field", "doc_id", "--score-field", "acc", "--method", "dp",
                 "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = brute_force_pvalue([A[i] for i in IDS], [B[i] for i in IDS], "two-sided")
    assert got["pvalue"] == pytest.approx(float(want)) and got["entries"] == 8
    c = jsonl(tmp_path / "third.jsonl", [{"doc_id": i, "acc": 1} for i in IDS[::-1]])
    assert main(["compare", str(a), str(b), str(c), "--id-field", "doc_id", "--score-field", "acc",
                 "--format", "json"]) == 0
    res = pairperm.SystemsComparison.from_json(capsys.readouterr().out)
    frame = pairperm.read_scores([a, b, c], id_field="doc_id", score_field="acc")
    assert res == pairperm.compare_systems(frame)
    long = tmp_path / "long.txt"
    long.write_text("doc\tsys\tacc\n" + "".join(f"{i}\tA\t{A[i]}\n{i}\tB\t{B[i]}\n" for i in IDS))
    assert main(["test", str(long), "--input-format", "tsv", "--id-column", "doc", "--column", "acc",
                 "--system-field", "sys", "--method", "dp", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pvalue"] == pytest.approx(float(want))
    assert main(["test", str(a), str(b), "--score-field", "acc"]) == 2
    assert "id_field" in capsys.readouterr().err


def test_integer_ids_next_to_float_ids_are_not_rounded_onto_each_other(tmp_path):
    # A field mixing integers and floats came back as float64: 2^53 + 1 in one log and 2^53 in
    # the other were paired as one item.
    a = jsonl(tmp_path / "a.jsonl", [{"doc_id": 2**53 + 1, "acc": 1}, {"doc_id": 0.5, "acc": 0}])
    b = jsonl(tmp_path / "b.jsonl", [{"doc_id": 2**53, "acc": 0}, {"doc_id": 0.5, "acc": 1}])
    with pytest.raises(ValueError, match="not scored on the same ids"):
        pairperm.read_scores([a, b], id_field="doc_id", score_field="acc")
    c = jsonl(tmp_path / "c.jsonl", [{"doc_id": 0.5, "acc": 1}, {"doc_id": 2**53 + 1, "acc": 1}])
    s = pairperm.read_scores([a, c], id_field="doc_id", score_field="acc")
    assert s.index.tolist() == [2**53 + 1, 0.5] and type(s.index[0]) is int
    assert s.to_dict("list") == {"a": [1, 0], "c": [1, 1]}


def test_ids_that_mix_integers_and_strings_keep_both(tmp_path):
    a = jsonl(tmp_path / "a.jsonl", [{"doc_id": 1, "acc": 1}, {"doc_id": "1", "acc": 0}])
    b = jsonl(tmp_path / "b.jsonl", [{"doc_id": "1", "acc": 1}, {"doc_id": 1, "acc": 0}])
    s = pairperm.read_scores([a, b], id_field="doc_id", score_field="acc")
    assert s.index.tolist() == [1, "1"] and s.to_dict("list") == {"a": [1, 0], "b": [0, 1]}


def test_a_score_column_named_twice_in_the_header_is_refused(tmp_path):
    # The first of the two columns was read without a word.
    (tmp_path / "a.csv").write_text("doc_id,acc,acc\nd1,0,1\nd2,0,1\n")
    with pytest.raises(ValueError, match="names the column 'acc' 2 times"):
        pairperm.read_scores([tmp_path / "a.csv"], id_field="doc_id", score_field="acc")


@pytest.mark.parametrize("line,match", [
    ('{"doc_id": 1, "acc": null}', "the field 'acc' is null"),
    ('{"doc_id": [1, 2], "acc": 1}', "must be a string or a number"),
    ('{"doc_id": {"a": 1}, "acc": 1}', "must be a string or a number"),
])
def test_null_scores_and_ids_that_are_not_values_name_the_line(tmp_path, line, match):
    (tmp_path / "a.jsonl").write_text(line + '\n{"doc_id": 2, "acc": 1}\n')
    with pytest.raises(ValueError, match=match):
        pairperm.read_scores([tmp_path / "a.jsonl"], id_field="doc_id", score_field="acc")


def test_jsonl_with_a_byte_order_mark_reads_as_without(tmp_path):
    text = '{"doc_id": 1, "acc": 1}\n{"doc_id": 2, "acc": 0}\n'
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + text.encode())
    (tmp_path / "plain.jsonl").write_text(text)
    with_bom = pairperm.read_scores([tmp_path / "bom.jsonl"], id_field="doc_id", score_field="acc")
    plain = pairperm.read_scores([tmp_path / "plain.jsonl"], id_field="doc_id", score_field="acc")
    assert with_bom.index.tolist() == plain.index.tolist() == [1, 2]
    assert with_bom["bom"].tolist() == plain["plain"].tolist() == [1, 0]


# ---------------------------------------------------------------- quoted CSV fields (RFC 4180)

QUOTED_CSV = ('id,text,score\n'
              '1,"a, b",0.5\n'
              '"q, 2","say ""hi"", then go",1\n'
              '3,"two\nlines, and\n\na blank one",0\n'
              '4,plain,2\n')


def test_quoted_fields_with_delimiters_doubled_quotes_and_line_breaks_read_as_pandas_reads_them(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text(QUOTED_CSV)
    want = pd.read_csv(path, dtype={"id": str})
    got = pairperm.read_scores([path], id_field="id", score_field="score")
    assert got.index.tolist() == want["id"].tolist() == ["1", "q, 2", "3", "4"]
    assert got["a"].tolist() == want["score"].tolist() == [0.5, 1.0, 0.0, 2.0]
    tsv = tmp_path / "b.tsv"
    tsv.write_text('id\ttext\tscore\n"q\t1"\t"x\ty"\t3\nq2\t"say ""hi"""\t4\n')
    got = pairperm.read_scores([tsv], id_field="id", score_field="score")
    assert got.index.tolist() == ["q\t1", "q2"] and got["b"].tolist() == [3, 4] and got["b"].dtype == np.int64


def test_a_bad_row_after_a_quoted_line_break_is_named_by_its_own_line(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text(QUOTED_CSV + '5,"more\ntext",x\n')
    with pytest.raises(ValueError, match=r"a.csv:9: .*'x' is not a number"):
        pairperm.read_scores([path], id_field="id", score_field="score")


@pytest.mark.parametrize("text, match", [
    ('id,text,score\n1,a,1\n2,"never closed,1\n3,c,0\n', r"a.csv:3: a quoted field opened on this line is not closed"),
    ('id,text,score\n1,a,1\n2,"closed"early,1\n', r"a.csv:3: .*quoting"),
])
def test_malformed_quoting_is_an_error_naming_the_line(tmp_path, text, match):
    path = tmp_path / "a.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        pairperm.read_scores([path], id_field="id", score_field="score")


def test_quotes_inside_unquoted_fields_and_padded_ids_read_as_before(tmp_path):
    # A quote that does not open a field is an ordinary character, and white space around a
    # field is no part of it, whichever of the readers reads the file.
    rows = 'id,score\na"b,1\n q2 ,2\n'
    (tmp_path / "small.csv").write_text(rows)
    # Integers in the first chunk the fast parser reads and reals in a later one: the careful
    # reader reads the file.
    (tmp_path / "big.csv").write_text(rows + "".join(f"d{i},{1 if i < 70_000 else 0.5}\n" for i in range(70_010)))
    small = pairperm.read_scores([tmp_path / "small.csv"], id_field="id", score_field="score")
    big = pairperm.read_scores([tmp_path / "big.csv"], id_field="id", score_field="score")
    assert small.index.tolist() == big.index[:2].tolist() == ['a"b', "q2"]


def test_booleans_are_never_ids(tmp_path):
    # JSON true equals 1 in Python: the item "true" of one log was paired with the item 1 of another.
    a = jsonl(tmp_path / "a.jsonl", [{"doc_id": 1, "acc": 1}, {"doc_id": True, "acc": 0}])
    b = jsonl(tmp_path / "b.jsonl", [{"doc_id": 1, "acc": 0}, {"doc_id": 2, "acc": 1}])
    with pytest.raises(ValueError, match=r"a.jsonl:2: the field 'doc_id' is true; .*string or a number"):
        pairperm.read_scores([a, b], id_field="doc_id", score_field="acc")
    c = jsonl(tmp_path / "c.jsonl", [{"doc_id": True, "acc": 0}, {"doc_id": False, "acc": 1}])
    with pytest.raises(ValueError, match=r"c.jsonl:1: the field 'doc_id' is true"):
        pairperm.read_scores([c], id_field="doc_id", score_field="acc")
    d = jsonl(tmp_path / "d.jsonl", [{"doc_id": 1, "acc": 0, "model": False}])
    with pytest.raises(ValueError, match=r"d.jsonl:1: the field 'model' is false"):
        pairperm.read_scores(d, id_field="doc_id", score_field="acc", system_field="model")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_ids_that_are_not_finite_numbers_are_refused(tmp_path, value):
    path = tmp_path / "a.jsonl"
    path.write_text(f'{{"doc_id": 1, "acc": 1}}\n{{"doc_id": {value}, "acc": 1}}\n')
    with pytest.raises(ValueError, match=r"a.jsonl:2: the field 'doc_id' is .*, not a finite number"):
        pairperm.read_scores([path], id_field="doc_id", score_field="acc")


def test_json_numbers_of_equal_value_are_one_id(tmp_path):
    a = jsonl(tmp_path / "a.jsonl", [{"doc_id": 1, "acc": 1}, {"doc_id": 2, "acc": 0}, {"doc_id": "2", "acc": 1}])
    b = jsonl(tmp_path / "b.jsonl", [{"doc_id": 2.0, "acc": 1}, {"doc_id": "2", "acc": 0}, {"doc_id": 1.0, "acc": 0}])
    s = pairperm.read_scores([a, b], id_field="doc_id", score_field="acc")
    assert s.index.tolist() == [1, 2, "2"] and s.to_dict("list") == {"a": [1, 0, 1], "b": [0, 1, 0]}
    c = jsonl(tmp_path / "c.jsonl", [{"doc_id": 1, "acc": 1}, {"doc_id": 1.0, "acc": 0}])
    with pytest.raises(ValueError, match=r"c.jsonl has duplicated ids: 1"):
        pairperm.read_scores([c], id_field="doc_id", score_field="acc")
    # A table's ids are text.
    (tmp_path / "d.csv").write_text("id,acc\n1,1\n2,0\n")
    (tmp_path / "e.csv").write_text("id,acc\n1.0,1\n2,0\n")
    with pytest.raises(ValueError, match=r"only in system 'd' in \S+d.csv: '1'; only in system 'e' in \S+e.csv: '1.0'"):
        pairperm.read_scores([tmp_path / "d.csv", tmp_path / "e.csv"], id_field="id", score_field="acc")


def test_the_missing_pandas_message_names_an_extra_that_installs_pandas(tmp_path, monkeypatch):
    import pathlib
    import re

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError) as info:
        pairperm.read_scores([tmp_path / "a.jsonl"], id_field="doc_id", score_field="acc")
    extra = re.search(r"'(\w+)' extra", str(info.value)).group(1)
    pyproject = (pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text()
    table = re.search(r"^\[project\.optional-dependencies\]\n(.*?)(?=^\[)", pyproject, re.M | re.S).group(1)
    requirements = re.search(rf"^{extra}\s*=\s*\[(.*?)\]", table, re.M | re.S)
    assert requirements is not None, f"no extra {extra!r} in pyproject.toml"
    assert re.search(r"""["']pandas\b""", requirements.group(1))
