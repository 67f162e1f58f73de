"""Records of any log format assembled into an Evaluation: alignment by id, samples, groups,
and the refusals every reader shares."""

import pickle

import numpy as np
import pytest

import pairperm
from pairperm._records import Evaluation, Records, assemble

pd = pytest.importorskip("pandas")


def _records(rng, systems=("a", "b", "c"), tasks=("qa", "math"), n=7, samples=0, group=False):
    """Shuffled long records and the truth {(task, system, item, sample): score} they hold."""
    rows, truth = [], {}
    for t in tasks:
        for s in systems:
            keys = [(f"doc-{i}", k) for i in range(n) for k in range(max(samples, 1))]
            for line, j in enumerate(rng.permutation(len(keys)), 1):
                item, k = keys[j]
                score = int(rng.integers(0, 2))
                truth[t, s, item, k] = score
                row = {"task": t, "system": s, "item": item, "acc": score, "file": f"{s}.jsonl", "line": line}
                if samples:
                    row["sample"] = k
                if group:
                    row["group"] = f"passage-{int(item[4:]) // 3}"
                rows.append(row)
    return pd.DataFrame(rows), truth


def test_systems_are_aligned_by_id_whatever_order_each_log_has():
    frame, truth = _records(np.random.default_rng(1))
    ev = assemble(Records(frame, ("acc",), {"qa": "accuracy", "math": "accuracy"}))
    assert ev.tasks == ("qa", "math") and ev.systems == ("a", "b", "c")
    for t in ev.tasks:
        for s in ev.systems:
            assert ev.scores[t][s].tolist() == [truth[t, s, i, 0] for i in ev.ids[t]]
        assert sorted(ev.ids[t]) == sorted(f"doc-{i}" for i in range(7))


def test_samples_become_columns_in_sample_order_or_rows_grouped_by_item():
    frame, truth = _records(np.random.default_rng(2), samples=3)
    records = Records(frame, ("acc",), {"qa": "accuracy", "math": "accuracy"})
    ev = assemble(records)
    for s in ("a", "b"):
        assert ev.scores["qa"][s].shape == (7, 3)
        assert ev.scores["qa"][s].tolist() == [[truth["qa", s, i, k] for k in range(3)] for i in ev.ids["qa"]]
    rows = assemble(records, samples="groups")
    assert len(rows.ids["qa"]) == 21
    assert [truth["qa", "c", i, k] for i, k in rows.ids["qa"]] == rows.scores["qa"]["c"].tolist()
    # The unit is the item: its three samples share one label, different items do not.
    items = [i for i, _ in rows.ids["qa"]]
    labels = rows.groups["qa"]
    assert all((labels[x] == labels[y]) == (items[x] == items[y]) for x in range(21) for y in range(21))


def test_a_group_field_labels_every_item_and_must_agree_across_systems():
    frame, _ = _records(np.random.default_rng(3), group=True)
    ev = assemble(Records(frame, ("acc",), {"qa": "accuracy", "math": "accuracy"}))
    assert ev.groups["qa"].tolist() == [f"passage-{int(i[4:]) // 3}" for i in ev.ids["qa"]]
    bad = frame.copy()
    row = int(np.flatnonzero((bad["system"] == "b") & (bad["item"] == "doc-4") & (bad["task"] == "qa"))[0])
    bad.loc[row, "group"] = "passage-9"
    with pytest.raises(ValueError, match=r"b\.jsonl:\d+: item 'doc-4' of task 'qa' is in group 'passage-9'"):
        assemble(Records(bad, ("acc",), {"qa": "accuracy", "math": "accuracy"}))


def test_missing_and_repeated_ids_are_refused_naming_file_and_line():
    frame, _ = _records(np.random.default_rng(4))
    metrics = {"qa": "accuracy", "math": "accuracy"}
    drop = int(np.flatnonzero((frame["system"] == "c") & (frame["task"] == "math"))[2])
    item = frame.loc[drop, "item"]
    with pytest.raises(ValueError, match=rf"task 'math': system 'c' \(c\.jsonl\) has no score for item '{item}'"):
        assemble(Records(frame.drop(index=drop), ("acc",), metrics))
    again = frame.loc[[drop]].assign(line=99)
    with pytest.raises(ValueError, match=rf"c\.jsonl:99: system 'c' scores item '{item}' of task 'math' again "
                                         rf"\(first at c\.jsonl:{frame.loc[drop, 'line']}\)"):
        assemble(Records(pd.concat([frame, again], ignore_index=True), ("acc",), metrics))


def test_unequal_samples_as_columns_are_refused_and_read_as_groups():
    frame, _ = _records(np.random.default_rng(5), systems=("a", "b"), tasks=("qa",), samples=2)
    keep = ~((frame["item"] == "doc-3") & (frame["sample"] == 1))
    records = Records(frame[keep].reset_index(drop=True), ("acc",), {"qa": "accuracy"})
    with pytest.raises(ValueError, match="samples='groups'"):
        assemble(records)
    assert len(assemble(records, samples="groups").ids["qa"]) == 13


@pytest.mark.parametrize(("column", "value", "what"), [("item", True, "item True"), ("item", float("nan"), "item nan"),
                                                       ("system", None, "system None"), ("acc", float("inf"), "'acc' is inf"),
                                                       ("acc", "yes", "'acc' = 'yes'")])
def test_unreadable_ids_and_scores_are_refused(column, value, what):
    frame, _ = _records(np.random.default_rng(6), tasks=("qa",))
    frame[column] = frame[column].astype(object)
    frame.loc[5, column] = value
    with pytest.raises(ValueError, match=rf"{frame.loc[5, 'file']}:{frame.loc[5, 'line']}: .*{what}"):
        assemble(Records(frame, ("acc",), {"qa": "accuracy"}))


def test_statistics_columns_keep_their_order_and_integers():
    rng = np.random.default_rng(7)
    gold = rng.integers(1, 5, 9)  # tp + fn: the gold spans of each item, the same for both systems
    tp = {s: rng.integers(0, gold + 1) for s in ("a", "b")}
    rows = [{"task": "ner", "system": s, "item": i, "tp": int(tp[s][i]), "fp": int(rng.integers(3)),
             "fn": int(gold[i] - tp[s][i]), "file": "x", "line": i + 1} for s in ("a", "b") for i in range(9)]
    frame = pd.DataFrame(rows)
    ev = assemble(Records(frame, ("tp", "fp", "fn"), {"ner": "f1"}))
    a = ev.scores["ner"]["a"]
    assert a.dtype == np.int64 and a.tolist() == frame[frame.system == "a"][["tp", "fp", "fn"]].to_numpy().tolist()
    res = ev.compare()
    direct = pairperm.compare_systems({"ner": ev.scores["ner"]}, {"ner": "f1"})
    assert res.to_frame()["pvalue"].tolist() == direct.to_frame()["pvalue"].tolist()


def test_compare_runs_compare_systems_with_the_logs_metrics_and_groups():
    frame, _ = _records(np.random.default_rng(8), n=12, group=True)
    ev = assemble(Records(frame, ("acc",), {"qa": "accuracy", "math": "accuracy"}))
    got = ev.compare(baseline="a", rng=0).to_frame()
    want = pairperm.compare_systems(ev.scores, "accuracy", groups=ev.groups, baseline="a", rng=0).to_frame()
    assert got.equals(want)
    assert [t.n_units for t in ev.compare(baseline="a").tasks] == [4, 4]
    with pytest.raises(TypeError, match="come from the logs"):
        ev.compare(groups=None)


def test_evaluations_pickle_select_and_join():
    frame, _ = _records(np.random.default_rng(9))
    ev = assemble(Records(frame, ("acc",), {"qa": "accuracy", "math": "accuracy"}))
    assert pickle.loads(pickle.dumps(ev)) == ev
    qa, math = ev.select(tasks=["qa"]), ev.select(tasks="math", systems=["a", "c"])
    assert qa.tasks == ("qa",) and math.systems == ("a", "c")
    assert (qa | ev.select(tasks=["math"])) == ev
    with pytest.raises(ValueError, match="both hold task 'qa'"):
        qa | qa
    with pytest.raises(ValueError, match="no system 'z'"):
        ev.select(systems=["z"])
    long = ev.to_frame()
    assert len(long) == 2 * 3 * 7 and list(long.columns) == ["task", "item", "system", "score"]


def test_ranks_of_one_task_equal_rank_intervals_on_its_scores():
    frame, _ = _records(np.random.default_rng(10), n=40, tasks=("qa",))
    ev = assemble(Records(frame, ("acc",), {"qa": "accuracy"}))
    assert ev.ranks(rng=0).to_json() == pairperm.rank_intervals(ev.scores["qa"], "accuracy", rng=0).to_json()


def test_each_task_keeps_integer_scores_whatever_the_others_hold():
    rows = [{"task": t, "system": s, "item": i, "score": (i % 2) if t == "acc" else i / 3, "file": "x", "line": i + 1}
            for t in ("acc", "real") for s in ("a", "b") for i in range(4)]
    ev = assemble(Records(pd.DataFrame(rows), ("score",), {"acc": "accuracy", "real": "mean"}))
    assert ev.scores["acc"]["a"].dtype == np.int64 and ev.scores["real"]["a"].dtype == np.float64
    assert ev.scores["acc"]["a"].tolist() == [0, 1, 0, 1]
    rows[1]["score"] = 0.5
    with pytest.raises(ValueError, match=r"x:2: the score 'score' = 0.5 is not a whole number"):
        assemble(Records(pd.DataFrame(rows), ("score",), {"acc": "accuracy", "real": "mean"}))


def test_a_place_in_a_json_document_names_where_a_score_is():
    rows = [{"task": "t", "system": "a", "item": i, "score": float("nan") if i == 2 else 1.0, "file": "stats.json",
             "line": f"[{i}].stats[0].mean"} for i in range(3)]
    with pytest.raises(ValueError, match=r"stats\.json \[2\]\.stats\[0\]\.mean: the score 'score' is nan"):
        assemble(Records(pd.DataFrame(rows), ("score",), {"t": "mean"}))


def test_evaluation_checks_its_parts_agree():
    with pytest.raises(ValueError, match="system 'b' has 2 items, the ids 3"):
        Evaluation({"t": {"a": np.zeros(3), "b": np.zeros(2)}}, {"t": np.arange(3)}, {"t": "mean"})


def test_records_of_several_kinds_are_assembled_each_and_joined_in_order():
    counts = pd.DataFrame([{"task": "ner", "system": s, "item": i, "tp": 1, "fp": 0, "fn": 1, "file": "n", "line": i + 1}
                           for s in ("a", "b") for i in range(3)])
    frame, truth = _records(np.random.default_rng(11), systems=("a", "b"), tasks=("qa",), samples=1)
    ev = assemble([Records(counts, ("tp", "fp", "fn"), {"ner": "f1"}), Records(frame, ("acc",), {"qa": "accuracy"})])
    assert ev.tasks == ("ner", "qa") and ev.metrics == {"ner": "f1", "qa": "accuracy"}
    assert ev.scores["ner"]["a"].shape == (3, 3)
    # One sample of every item is no sample axis: (N,) scores and plain ids.
    assert ev.scores["qa"]["b"].tolist() == [truth["qa", "b", i, 0] for i in ev.ids["qa"]]
    with pytest.raises(ValueError, match="no records to read"):
        assemble([])
