"""The JSON log machinery every reader shares: field paths, filters, value maps, JSON lines
read exactly, and read_jsonl_logs's scores against the records written."""

import gzip
import io
import json
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pairperm
from pairperm._fields import MISSING, FieldPath, ValueMap, Where, iter_jsonl, parse_where, read_jsonl_logs
from pairperm._tables import Source

pd = pytest.importorskip("pandas")


def write_jsonl(path, records, blank_after=()):
    with open(path, "w", encoding="utf-8") as f:
        for i, r in enumerate(records):
            f.write(json.dumps(r) + "\n")
            if i in blank_after:
                f.write("\n")
    return path


# ------------------------------------------------------------------ field paths

def test_paths_reach_nested_objects_and_list_items():
    record = {"doc": {"article": "a", "n": {"x": 0}}, "resps": [["r00", "r01"], ["r10"]], "scores": {"a.b": 3, "0": 7}}
    assert FieldPath("doc.article").get(record, "f", 1) == "a"
    assert FieldPath("doc.n.x").get(record, "f", 1) == 0
    assert FieldPath("resps.0.1").get(record, "f", 1) == "r01"
    assert FieldPath("resps.1.0").get(record, "f", 1) == "r10"
    assert FieldPath(("scores", "a.b")).get(record, "f", 1) == 3  # a key holding a dot
    assert FieldPath("scores.0").get(record, "f", 1) == 7  # an object's key made of digits is a key
    assert FieldPath(["resps", 1, 0]).get(record, "f", 1) == "r10"
    assert FieldPath("resps.2").lookup(record) is MISSING and FieldPath("doc.x").lookup(record) is MISSING
    assert FieldPath("doc.article.x").lookup(record) is MISSING


_KEYS = ["a", "b", "0", "1", "2"]
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=2),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=3),
                     max_leaves=12)


@given(_JSON, st.lists(st.sampled_from(_KEYS), min_size=1, max_size=4))
def test_a_path_walks_objects_by_key_and_lists_by_index(record, parts):
    want = record
    for part in parts:  # the rule, step by step: an object's key, or a list's item by its number
        if isinstance(want, dict) and part in want:
            want = want[part]
        elif isinstance(want, list) and part.isdigit() and int(part) < len(want):
            want = want[int(part)]
        else:
            want = MISSING
            break
    path = FieldPath(".".join(parts))
    assert path.lookup(record) is want
    if want is MISSING:
        with pytest.raises(ValueError, match=r"^f:3: no field "):
            path.get(record, "f", 3)


@pytest.mark.parametrize(("path", "message"), [
    ("doc.title", r"f\.jsonl:7: no field 'doc\.title': 'doc' has no key 'title' \(its keys: article, n\)"),
    ("resps.5", r"f\.jsonl:7: no field 'resps\.5': 'resps' is a list of 2 item\(s\), which has no item '5'"),
    ("resps.x", r"no field 'resps\.x': 'resps' is a list of 2 item\(s\), and a list's items are numbered, not 'x'"),
    ("doc.article.len", r"no field 'doc\.article\.len': 'doc\.article' is \"a\", neither an object nor a list"),
    ("score", r"no field 'score': the record has no key 'score' \(its keys: doc, resps\)"),
])
def test_a_missing_path_is_named_with_where_it_breaks(path, message):
    record = {"doc": {"article": "a", "n": 1}, "resps": [[1], [2]]}
    with pytest.raises(ValueError, match=message):
        FieldPath(path).get(record, "f.jsonl", 7)


@pytest.mark.parametrize("path", ["", "a..b", ".a", "a.", [], ["a", ""], 3])
def test_malformed_paths_are_refused(path):
    with pytest.raises(ValueError, match="a field path names keys separated by dots"):
        FieldPath(path)


# ------------------------------------------------------------------ filters

def test_filters_match_values_of_their_own_json_kind():
    where = Where({"filter": "strict-match", "n": [1, 2], "flag": True, "x": None}, "f")
    assert where.matches(["strict-match", 1, True, None])
    assert where.matches(["strict-match", 2.0, True, None])  # JSON has one kind of number
    assert not where.matches(["flexible-extract", 1, True, None])
    assert not where.matches(["strict-match", True, True, None])  # true is no 1
    assert not where.matches(["strict-match", "1", True, None])  # "1" is no 1
    assert not where.matches(["strict-match", 1, 1, None])  # 1 is no true
    assert not where.matches(["strict-match", [1], True, None])  # a list matches no value
    with pytest.raises(ValueError, match=r"where: the value nan of 'n' is no JSON string"):
        Where({"n": float("nan")}, "f")
    with pytest.raises(ValueError, match="where must map field paths"):
        Where({}, "f")


def test_the_command_line_form_of_filters():
    assert parse_where("filter=strict-match") == {"filter": "strict-match"}
    assert parse_where(["n=1", 'm="1"', "b=true", "z=null", "e=[1,2]", "t=a=b"]) == {
        "n": 1, "m": "1", "b": True, "z": None, "e": [1, 2], "t": "a=b"}
    assert parse_where(["epoch=1", "epoch=2"]) == {"epoch": [1, 2]}
    assert parse_where(["x=NaN", "y={}"]) == {"x": "NaN", "y": "{}"}
    with pytest.raises(ValueError, match="a filter is written path=value"):
        parse_where("strict-match")
    assert Where("filter=strict-match", "f").matches(["strict-match"])


# ------------------------------------------------------------------ value maps

def test_value_maps_map_every_value_or_name_the_one_they_do_not():
    m = ValueMap({"C": 1, "I": 0, "P": 0.5}, "score", "f")
    assert [m(v, "f", 1) for v in ("C", "I", "P")] == [1, 0, 0.5]
    with pytest.raises(ValueError, match=r"f\.jsonl:4: the score 'score' is \"N\", which values= does not map \(it maps "
                                         r"\"C\", \"I\", \"P\"\)"):
        m("N", "f.jsonl", 4)
    numbers = ValueMap({1: 1, 0: 0}, "s", "f")
    with pytest.raises(ValueError, match="is true, which values= does not map"):
        numbers(True, "f", 1)  # true is no 1, even though Python says so
    with pytest.raises(ValueError, match="must map to a finite number"):
        ValueMap({"C": "1"}, "s", "f")


def test_without_a_map_numbers_are_read_as_they_are_and_booleans_as_0_1():
    m = ValueMap(None, "acc", "f")
    assert [m(v, "f", 1) for v in (True, False, 3, 0.25)] == [1, 0, 3, 0.25]
    assert type(m(True, "f", 1)) is int
    for value, message in (("C", r"is \"C\", not a number; give values="), (None, "is null, not a number"),
                           ([1, 0], r"is \[1, 0\], not a number"), (float("inf"), "is inf, not a finite number"),
                           (2**63, "= 9223372036854775808 is beyond the 64-bit integer range")):
        with pytest.raises(ValueError, match=r"f\.jsonl:9: the score 'acc' " + message):
            m(value, "f.jsonl", 9)


# ------------------------------------------------------------------ JSON lines

def test_lines_are_numbered_as_in_the_file_with_blank_lines_skipped(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"i": 1}\n\n   \n{"i": 2, "x": NaN}\n{"i": 3}')
    got = [(n, r["i"]) for n, _, r in iter_jsonl(Source(str(path), None))]
    assert got == [(1, 1), (4, 2), (5, 3)]  # a BOM, NaN in a field nobody reads, no final newline


@pytest.mark.parametrize(("text", "message"), [
    (b'{"i": 1}\n{"i": 2\n', r"a\.jsonl:2: not JSON at column 8 \(Expecting ',' delimiter\)"),
    (b'{"i": 1}\n[1, 2]\n', r"a\.jsonl:2: expected a JSON object per line; got '\[1, 2\]'"),
    (b'{"i": 1}\n{"i": "\xff"}\n', r"a\.jsonl:2: not UTF-8 text \(byte 0xff at column 8\)"),
])
def test_unreadable_lines_are_named(tmp_path, text, message):
    path = tmp_path / "a.jsonl"
    path.write_bytes(text)
    with pytest.raises(ValueError, match=message):
        list(iter_jsonl(Source(str(path), None)))


def test_integers_beyond_64_bits_stay_exact(tmp_path):
    # orjson reads such an integer as a float: 2**64 + 1 and 2**64 + 2 would become one id.
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": 2**64 + 1, "s": 1}, {"id": 2**64 + 2, "s": 0}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": 2**64 + 2, "s": 1}, {"id": 2**64 + 1, "s": 1}])
    ev = read_jsonl_logs([a, b], id_field="id", score_field="s")
    assert ev.ids["s"].tolist() == [2**64 + 1, 2**64 + 2]
    assert ev.scores["s"]["b"].tolist() == [1, 1] and ev.scores["s"]["a"].tolist() == [1, 0]


# ------------------------------------------------------------------ read_jsonl_logs

def _logs(tmp_path, rng, systems=("base", "tuned", "big"), n=9, tasks=("qa", "nli"), samples=1):
    """Shuffled nested records per system and the truth {(task, system, item, sample): score}."""
    truth, paths = {}, {}
    for s in systems:
        records = []
        for t in tasks:
            for i in range(n):
                for k in range(samples):
                    score = rng.choice([0, 1, True, False, 0.0, 1.0])
                    truth[t, s, f"q{i}", k] = int(score)
                    records.append({"meta": {"task": t, "epoch": k}, "doc": {"id": f"q{i}", "passage": f"p{i // 3}"},
                                    "scores": {"match": {"value": score}}, "filter": rng.choice(["a", "b"])})
        rng.shuffle(records)
        paths[s] = write_jsonl(tmp_path / f"{s}.jsonl", records, blank_after={2})
    return paths, truth


def test_scores_equal_the_records_aligned_by_id(tmp_path):
    paths, truth = _logs(tmp_path, random.Random(1))
    ev = read_jsonl_logs(list(paths.values()), id_field="doc.id", score_field="scores.match.value",
                         task_field="meta.task")
    assert set(ev.tasks) == {"qa", "nli"}
    assert ev.systems == ("base", "tuned", "big")
    for t in ev.tasks:
        assert sorted(ev.ids[t]) == sorted(f"q{i}" for i in range(9)) and ev.metrics[t] == "accuracy"
        for s in ev.systems:
            assert ev.scores[t][s].dtype == np.int64
            assert ev.scores[t][s].tolist() == [truth[t, s, i, 0] for i in ev.ids[t]]
    named = read_jsonl_logs({"A": paths["tuned"], "B": paths["base"]}, id_field="doc.id",
                            score_field="scores.match.value", task_field="meta.task")
    assert named.systems == ("A", "B")
    assert named.scores["qa"]["A"].tolist() == [truth["qa", "tuned", i, 0] for i in named.ids["qa"]]


def test_samples_groups_and_one_long_table_with_a_system_field(tmp_path):
    paths, truth = _logs(tmp_path, random.Random(2), tasks=("qa",), samples=3)
    ev = read_jsonl_logs(paths, id_field="doc.id", score_field="scores.match.value", sample_field="meta.epoch",
                         group_field="doc.passage")
    task = "scores.match.value"  # without task_field, the one task is named after the score's path
    assert ev.tasks == (task,)
    for s in paths:
        assert ev.scores[task][s].tolist() == [[truth["qa", s, i, k] for k in range(3)] for i in ev.ids[task]]
    assert ev.groups[task].tolist() == [f"p{int(i[1:]) // 3}" for i in ev.ids[task]]
    long = tmp_path / "long.jsonl"
    long.write_text("".join(json.dumps({**json.loads(x), "system": s}) + "\n" for s, p in paths.items()
                            for x in p.read_text().splitlines() if x.strip()))
    same = read_jsonl_logs(long, id_field="doc.id", score_field="scores.match.value", sample_field="meta.epoch",
                           group_field="doc.passage", system_field="system")
    assert same == ev


def test_where_keeps_the_lines_asked_for(tmp_path):
    paths, _ = _logs(tmp_path, random.Random(3), tasks=("qa",), n=4)
    for p in paths.values():  # every doc under two filters, as lm-eval writes them
        lines = [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
        both = [{**r, "filter": f, "scores": {"match": {"value": (f == "b") * 0.5 + (r["doc"]["id"] == "q1")}}}
                for r in lines for f in ("a", "b")]
        write_jsonl(p, both)
    with pytest.raises(ValueError, match=r"base\.jsonl:\d+: system 'base' scores item '\w+' of task 'qa' again"):
        read_jsonl_logs(paths, id_field="doc.id", score_field="scores.match.value", task="qa")
    ev = read_jsonl_logs(paths, id_field="doc.id", score_field="scores.match.value", task="qa", where="filter=b")
    assert ev.metrics == {"qa": "mean"}
    assert ev.scores["qa"]["big"].tolist() == [0.5 + (i == "q1") for i in ev.ids["qa"]]
    a = read_jsonl_logs(paths, id_field="doc.id", score_field="scores.match.value", task="qa", where={"filter": ["a"]})
    assert a.metrics == {"qa": "accuracy"} and a.scores["qa"]["base"].tolist() == [int(i == "q1") for i in a.ids["qa"]]
    with pytest.raises(ValueError, match=r"base\.jsonl:1: no field 'split'"):
        read_jsonl_logs(paths, id_field="doc.id", score_field="scores.match.value", where={"split": "test"})


def test_value_maps_and_metrics(tmp_path):
    grades = {"a": ["C", "I", "C", "P"], "b": ["C", "C", "I", "I"]}
    paths = {s: write_jsonl(tmp_path / f"{s}.jsonl", [{"id": i, "v": g} for i, g in enumerate(v)])
             for s, v in grades.items()}
    ev = read_jsonl_logs(paths, id_field="id", score_field="v", values={"C": 1, "I": 0, "P": 0.5})
    assert ev.metrics == {"v": "mean"} and ev.scores["v"]["a"].tolist() == [1, 0, 1, 0.5]
    with pytest.raises(ValueError, match=r"a\.jsonl:4: the score 'v' is \"P\", which values= does not map"):
        read_jsonl_logs(paths, id_field="id", score_field="v", values={"C": 1, "I": 0})
    with pytest.raises(ValueError, match=r"a\.jsonl:1: the score 'v' is \"C\", not a number; give values="):
        read_jsonl_logs(paths, id_field="id", score_field="v")
    with pytest.raises(ValueError, match=r"a\.jsonl:4: task 'v' scores 0\.5, which is no integer; the metric 'accuracy'"):
        read_jsonl_logs(paths, id_field="id", score_field="v", values={"C": 1, "I": 0, "P": 0.5}, metric="accuracy")
    counts = read_jsonl_logs(paths, id_field="id", score_field="v", values={"C": 2, "I": 0, "P": 1}, metric="sum")
    assert counts.metrics == {"v": "sum"} and counts.scores["v"]["a"].tolist() == [2, 0, 2, 1]
    with pytest.raises(ValueError, match=r"the metric 'bleu' needs statistics per item"):
        read_jsonl_logs(paths, id_field="id", score_field="v", values={"C": 1, "I": 0, "P": 0}, metric="bleu")
    with pytest.raises(ValueError, match=r"unknown metric 'acc' for task 'v'"):
        read_jsonl_logs(paths, id_field="id", score_field="v", values={"C": 1, "I": 0, "P": 0}, metric="acc")
    res = ev.compare(rng=0).to_frame()
    assert res.equals(pairperm.compare_systems(ev.scores, "mean", rng=0).to_frame())


@pytest.mark.parametrize(("record", "message"), [
    ({"id": True, "s": 1}, r"b\.jsonl:2: the id is true; it must be a string or a finite number"),
    ({"id": [1], "s": 1}, r"b\.jsonl:2: the id is \[1\]"),
    ({"id": 1, "s": None}, r"b\.jsonl:2: the score 's' is null, not a number"),
    ({"id": 1}, r"b\.jsonl:2: no field 's': the record has no key 's'"),
])
def test_bad_records_are_refused_naming_file_and_line(tmp_path, record, message):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": 0, "s": 1}, {"id": 1, "s": 0}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": 0, "s": 1}, record])
    with pytest.raises(ValueError, match=message):
        read_jsonl_logs([a, b], id_field="id", score_field="s")


def test_names_read_from_fields_must_be_written_one_way(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", [{"id": 0, "s": 1, "t": 1}, {"id": 0, "s": 1, "t": "1"}])
    with pytest.raises(ValueError, match=r"a\.jsonl:2: the task \"1\" is written as a number at .*a\.jsonl:1"):
        read_jsonl_logs(path, id_field="id", score_field="s", task_field="t")
    with pytest.raises(ValueError, match=r"a\.jsonl and .*a\.jsonl both name a system 'a'"):
        read_jsonl_logs([path, path], id_field="id", score_field="s")


def test_gzip_and_standard_input(tmp_path):
    records = [{"id": f"x{i}", "s": i / 4} for i in range(5)]
    plain = write_jsonl(tmp_path / "a.jsonl", records)
    packed = tmp_path / "b.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    ev = read_jsonl_logs({"a": plain, "b": packed, "c": "-"}, id_field="id", score_field="s",
                         stdin=io.TextIOWrapper(io.BytesIO(plain.read_bytes())))
    assert all(ev.scores["s"][s].tolist() == [i / 4 for i in range(5)] for s in "abc")
    assert ev.metrics == {"s": "mean"} and ev.scores["s"]["a"].dtype == np.float64


def test_large_integers_stay_exact_and_are_refused_among_reals(tmp_path):
    big = 2**53 + 1  # float64 would read it as 2**53
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": 0, "s": big}, {"id": 1, "s": 3}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": 0, "s": 1}, {"id": 1, "s": big + 1}])
    ev = read_jsonl_logs([a, b], id_field="id", score_field="s", metric="sum")
    assert ev.scores["s"]["a"].tolist() == [big, 3] and ev.scores["s"]["b"].tolist() == [1, big + 1]
    write_jsonl(b, [{"id": 0, "s": 1}, {"id": 1, "s": 0.5}])
    with pytest.raises(ValueError, match=rf"a\.jsonl:1: the integer score {big} is among real-valued scores"):
        read_jsonl_logs([a, b], id_field="id", score_field="s")


def test_integer_ids_next_to_a_float_id_stay_integers(tmp_path):
    # pandas would make the whole id column float64: 3 read as 3.0, and integers beyond 2**53
    # rounded onto each other, pairing different items.
    big = 2**60
    for name, ids in (("a", [big + 1, big + 200, 0.5, 3]), ("b", [big + 2, big + 199, 0.5, 3])):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps({"id": i, "s": 1}) + "\n" for i in ids))
    with pytest.raises(ValueError, match=rf"system 'a' .* has no score for item {big + 2}"):
        read_jsonl_logs([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], id_field="id", score_field="s")
    (tmp_path / "b.jsonl").write_text((tmp_path / "a.jsonl").read_text())
    ev = read_jsonl_logs([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], id_field="id", score_field="s")
    ids = ev.ids["s"].tolist()
    assert ids == [big + 1, big + 200, 0.5, 3] and [type(i) for i in ids] == [int, int, float, int]
