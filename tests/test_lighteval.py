"""lighteval details (parquet) read into an Evaluation: every score against the files read
straight with pyarrow, example ids (and row order in the earlier layout, checked by the example
texts), metric choice, and the refusals naming the file and the row."""

import re
import shutil
import urllib.parse
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from pairperm._lighteval import read_lighteval  # noqa: E402

FIXTURES = Path(__file__).parent / "data" / "logs" / "lighteval"
SMOL, QWEN = "HuggingFaceTB/SmolLM2-135M-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"
TS = "2025-03-04T10-15-22.123456"
GSM8K, MMLU = "gsm8k|0", "mmlu:abstract_algebra|0"
METRIC = {GSM8K: "extractive_match", MMLU: "acc"}


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    """The fixtures laid out under lighteval's own file names ('|' and ':' are committed as
    %7C and %3A, which Windows allows in file names)."""
    root = tmp_path_factory.mktemp("lighteval")
    for f in FIXTURES.rglob("*.parquet"):
        dest = root / f.parent.relative_to(FIXTURES) / urllib.parse.unquote(f.name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(f, dest)
    return root


def _details(output, model, task, ts=TS):
    return output / "details" / model / ts / f"details_{task}_{ts}.parquet"


def _rows(path):
    return pq.read_table(path).to_pylist()


def _copy(output, tmp_path):
    dest = tmp_path / "out"
    shutil.copytree(output / "details", dest / "details")
    return dest


def _rewrite(path, edit):
    rows = _rows(path)
    edit(rows)
    pq.write_table(pa.Table.from_pylist(rows), path)


def test_every_score_is_the_files_own_aligned_by_doc_id(output):
    ev = read_lighteval(output, metric=METRIC)
    assert ev.tasks == (GSM8K, MMLU)
    assert set(ev.systems) == {SMOL, QWEN}
    for task, metric in ((GSM8K, "extractive_match"), (MMLU, "acc")):
        assert ev.metrics[task] == "accuracy"
        for model in (SMOL, QWEN):
            truth = {r["doc"]["id"]: r["metric"][metric] for r in _rows(_details(output, model, task))}
            assert sorted(ev.ids[task].tolist()) == sorted(truth)
            assert ev.scores[task][model].tolist() == [truth[i] for i in ev.ids[task].tolist()]
            assert ev.scores[task][model].dtype == np.int64


def test_the_details_folder_and_model_folders_read_alike(output):
    whole = read_lighteval(output / "details", metric=METRIC, systems={"smol": SMOL, "qwen": QWEN})
    assert whole.systems == ("smol", "qwen") and whole.tasks == (GSM8K, MMLU)
    one_run = read_lighteval(metric=METRIC, systems={
        "smol": output / "details" / SMOL / TS, "qwen": output / "details" / QWEN})
    assert one_run == whole
    truth = {r["doc"]["id"]: r["metric"]["extractive_match"] for r in _rows(_details(output, QWEN, GSM8K))}
    assert whole.scores[GSM8K]["qwen"].tolist() == [truth[i] for i in whole.ids[GSM8K].tolist()]


def test_several_metrics_are_refused_listing_them_and_a_metric_a_task_lacks_is_named(output):
    with pytest.raises(ValueError, match=r"task 'mmlu:abstract_algebra\|0' has several metrics \('acc', 'acc_norm'\)"):
        read_lighteval(output)
    with pytest.raises(ValueError, match=r"details_gsm8k\|0_.*: task 'gsm8k\|0' has no metric 'acc' \(it has "
                                         r"'extractive_match'\)"):
        read_lighteval(output, metric="acc")
    with pytest.raises(ValueError, match=r"metric names no task 'gsm8k'; tasks: 'gsm8k\|0'"):
        read_lighteval(output, metric={"gsm8k": "extractive_match"})


def test_real_scores_make_a_mean(output, tmp_path):
    out = _copy(output, tmp_path)
    path = _details(out, SMOL, GSM8K)

    def partial(rows):
        rows[1]["metric"]["extractive_match"] = 0.25
    _rewrite(path, partial)
    ev = read_lighteval(out, metric=METRIC)
    assert ev.metrics == {GSM8K: "mean", MMLU: "accuracy"}
    truth = {r["doc"]["id"]: r["metric"]["extractive_match"] for r in _rows(path)}
    assert ev.scores[GSM8K][SMOL].tolist() == [truth[i] for i in ev.ids[GSM8K].tolist()]


def test_the_earlier_layout_pairs_rows_by_position_and_checks_the_examples(output, tmp_path):
    legacy = output / "legacy"
    ev = read_lighteval(legacy, metric="acc_norm")
    (task,) = ev.tasks
    assert task == "leaderboard|arc:challenge|25"
    for f in (legacy / "details").rglob("*.parquet"):
        model = f.parent.parent.relative_to(legacy / "details").as_posix()
        rows = _rows(f)
        assert ev.ids[task].tolist() == list(range(len(rows)))
        assert ev.scores[task][model].tolist() == [int(r["metrics"]["acc_norm"]) for r in rows]
    # Rows in another order in one system's file: refused, naming the first row that differs.
    moved = tmp_path / "legacy"
    shutil.copytree(legacy, moved)
    path = next((moved / "details").rglob("*.parquet"))
    _rewrite(path, lambda rows: rows.reverse())
    with pytest.raises(ValueError, match=r"read_lighteval: .*\.parquet:1: the example text differs from .* in the same "
                                         r"row"):
        read_lighteval(moved, metric="acc")


def test_another_example_under_an_id_is_refused_naming_the_row(output, tmp_path):
    out = _copy(output, tmp_path)
    path = _details(out, QWEN, MMLU)

    def other_text(rows):
        rows[2]["doc"]["query"] = "Something else entirely?"
    _rewrite(path, other_text)
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}:3: the example text differs from .* under the same id"):
        read_lighteval(out, metric=METRIC)


def test_repeated_ids_and_a_missing_example_are_refused_by_the_alignment(output, tmp_path):
    out = _copy(output, tmp_path)
    path = _details(out, SMOL, GSM8K)

    def two_splits(rows):
        rows.append(dict(rows[0]))  # a second split numbers its examples from 0 again
    _rewrite(path, two_splits)
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}:5: system '{SMOL}' scores item '0' of task "
                                         r"'gsm8k\|0' again"):
        read_lighteval(out, metric=METRIC)
    _rewrite(path, lambda rows: rows.__delitem__(slice(3, None)))  # the last example and the repeat gone
    with pytest.raises(ValueError, match=rf"system '{SMOL}' \(.*\) has no score for item '3'"):
        read_lighteval(out, metric=METRIC)


def test_a_task_run_twice_is_refused_naming_both_runs(output, tmp_path):
    out = _copy(output, tmp_path)
    later = "2025-03-05T09-00-00.000000"
    dest = _details(out, QWEN, GSM8K, later)
    dest.parent.mkdir(parents=True)
    shutil.copy(_details(out, QWEN, GSM8K), dest)
    with pytest.raises(ValueError, match=rf"task 'gsm8k\|0' of '{QWEN}' was run twice; choose one run's folder"):
        read_lighteval(out, metric=METRIC)
    # Choosing the run reads it.
    ev = read_lighteval(out, metric=METRIC, systems={"qwen": f"{QWEN}/{later}", "smol": SMOL})
    assert ev.systems == ("qwen", "smol")


@pytest.mark.parametrize("value, message", [
    ({"golds": ["72"], "preds": ["72"]}, r"the metric 'extractive_match' holds struct<.*> per example, not a score"),
    (None, r":2: no value of the metric 'extractive_match'"),
    (float("nan"), r":2: the metric 'extractive_match' is nan, not a finite number"),
])
def test_metric_values_that_are_no_scores_are_refused(output, tmp_path, value, message):
    out = _copy(output, tmp_path)
    path = _details(out, SMOL, GSM8K)

    def edit(rows):
        if isinstance(value, dict):  # a corpus metric keeps its inputs per example
            for r in rows:
                r["metric"]["extractive_match"] = value
        else:
            rows[1]["metric"]["extractive_match"] = value
    _rewrite(path, edit)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ".*" + message):
        read_lighteval(out, metric=METRIC)


def test_files_that_are_not_lighteval_details_are_refused(output, tmp_path):
    out = _copy(output, tmp_path)
    path = _details(out, SMOL, GSM8K)
    pq.write_table(pa.table({"question": ["a"], "score": [1.0]}), path)
    with pytest.raises(ValueError, match=r"not a lighteval details file \(.*columns: question, score\)"):
        read_lighteval(out, metric=METRIC)
    # lighteval before 0.10 wrote every column as text.
    pq.write_table(pa.table({"example": ["a"], "metrics": ["{'acc': 1.0}"]}), path)
    with pytest.raises(ValueError, match=r"the metric column holds string"):
        read_lighteval(out, metric=METRIC)
    path.write_bytes(b"not parquet")
    with pytest.raises(ValueError, match=r"not a readable parquet file"):
        read_lighteval(out, metric=METRIC)
    with pytest.raises(ValueError, match=r"neither lighteval's output folder"):
        read_lighteval(tmp_path)


def test_evaluation_compares_with_each_tasks_metric(output):
    result = read_lighteval(output, metric={GSM8K: "extractive_match", MMLU: "acc_norm"}).compare(rng=0)
    for row in result.rows:
        metric = "extractive_match" if row.task == GSM8K else "acc_norm"
        for system, value in ((row.system_a, row.metric_a), (row.system_b, row.metric_b)):
            rows = _rows(_details(output, system, row.task))
            assert value == pytest.approx(sum(r["metric"][metric] for r in rows) / len(rows))
