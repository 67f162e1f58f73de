"""inspect_ai logs (.json and .eval, deflated or Zstandard) read into an Evaluation: every score
against the logs read straight with json and zipfile, epochs, scorers, dict scores, value maps,
groups, and the refusals naming the file and the sample."""

import contextlib
import json
import math
import re
import shutil
import sys
import warnings
import zipfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")

from pairperm._inspect_logs import read_inspect  # noqa: E402

LOGS = Path(__file__).parent / "data" / "logs" / "inspect" / "logs"
BAD = LOGS.parent / "bad"
A, B = "openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-latest"
GRADE = {"C": 1, "I": 0, "P": 0.5}
ZSTD = 93
NATIVE_ZSTD = getattr(zipfile, "ZIP_ZSTANDARD", None) == ZSTD


def _has_zstd():
    if NATIVE_ZSTD:
        return True
    try:
        import zstandard  # noqa: F401
    except ImportError:
        return False
    return True


needs_zstd = pytest.mark.skipif(not _has_zstd(), reason="the Zstandard .eval fixture needs zstandard before Python 3.14")


@contextlib.contextmanager
def _zipfile_reading_zstd(monkeypatch):
    """Python's zipfile reading Zstandard entries (as it does from 3.14), through zstandard."""
    if NATIVE_ZSTD:
        yield
        return
    zstandard = pytest.importorskip("zstandard")

    class Decompressor:
        eof = False  # zipfile stops at the entry's compressed size

        def __init__(self):
            self._obj = zstandard.ZstdDecompressor().decompressobj()

        def decompress(self, data):
            return self._obj.decompress(data)

    plain = zipfile._get_decompressor
    with monkeypatch.context() as m:
        m.setattr(zipfile, "_get_decompressor", lambda kind: Decompressor() if kind == ZSTD else plain(kind))
        yield


def _read(path, monkeypatch):
    """(log header, samples) straight from a log: json for .json, zipfile for .eval."""
    if path.suffix == ".json":
        doc = json.loads(path.read_text())
        return doc, doc.get("samples", [])
    with zipfile.ZipFile(path) as z:
        zstd = any(i.compress_type == ZSTD for i in z.infolist())
        with _zipfile_reading_zstd(monkeypatch) if zstd else contextlib.nullcontext():
            header = json.loads(z.read("header.json"))
            samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    return header, samples


def _log(task, model, monkeypatch):
    """The fixture log of a task by a model."""
    for path in sorted(LOGS.glob(f"*_{task}_*")):
        if _read(path, monkeypatch)[0]["eval"]["model"] == model:
            return path
    raise AssertionError((task, model))


def _log_by_name(task, suffix):
    return next(p for p in sorted(LOGS.iterdir()) if f"_{task}_" in p.name and p.suffix == suffix)


def _truth(path, scorer, monkeypatch):
    """{(id, epoch): value} of a log's samples under a scorer: grades as 1/0.5/0, counts as a tuple."""
    _, samples = _read(path, monkeypatch)
    out = {}
    for s in samples:
        value = s["scores"][scorer]["value"]
        out[s["id"], s["epoch"]] = tuple(value[k] for k in ("tp", "fp", "fn")) if isinstance(value, dict) else GRADE[value]
    return out


@needs_zstd
def test_every_score_is_the_logs_own_aligned_by_sample_id_with_epochs_as_columns(monkeypatch):
    ev = read_inspect(LOGS, scorer={"arith": "match"})
    assert ev.tasks == ("arith", "essay_quality", "ner")
    assert set(ev.systems) == {A, B}
    assert ev.metrics == {"arith": "accuracy", "essay_quality": "mean", "ner": "f1"}
    # Ids as written: integers stay integers, strings strings.
    assert sorted(ev.ids["arith"].tolist(), key=str) == [1, 2, 4, "q-3"]
    assert all(type(i) is int for i in ev.ids["ner"].tolist())
    for task, scorer in (("arith", "match"), ("essay_quality", "model_graded_qa"), ("ner", "entity_f1")):
        for model in (A, B):
            truth = _truth(_log(task, model, monkeypatch), scorer, monkeypatch)
            got = ev.scores[task][model]
            epochs = sorted({e for _, e in truth})
            for row, sid in enumerate(ev.ids[task].tolist()):
                if task == "ner":
                    assert tuple(got[row].tolist()) == truth[sid, 1]
                elif len(epochs) > 1:
                    assert got[row].tolist() == [truth[sid, e] for e in epochs]
                else:
                    assert got[row] == truth[sid, 1]
    assert ev.scores["arith"][A].shape == (4, 2) and ev.scores["arith"][A].dtype == np.int64
    assert ev.scores["essay_quality"][A].dtype == np.float64
    assert ev.scores["ner"][B].shape == (4, 3) and ev.scores["ner"][B].dtype == np.int64


@needs_zstd
def test_the_zstandard_eval_log_reads_as_its_own_entries_say(monkeypatch):
    path = _log("arith", A, monkeypatch)
    with zipfile.ZipFile(path) as z:
        assert {i.compress_type for i in z.infolist()} == {ZSTD}
    truth = _truth(path, "includes", monkeypatch)
    ev = read_inspect(path, scorer="includes")
    assert ev.systems == (A,)
    assert {(sid, e + 1): v for sid, row in zip(ev.ids["arith"].tolist(), ev.scores["arith"][A].tolist())
            for e, v in enumerate(row)} == truth
    # match and includes differ where an answer holds the target among other words.
    assert read_inspect(path, scorer="match").scores["arith"][A].sum() < ev.scores["arith"][A].sum()


def test_without_zstandard_a_zstandard_log_names_the_package(monkeypatch):
    if NATIVE_ZSTD:
        pytest.skip("Python's zipfile reads Zstandard itself")
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(ImportError, match="zstandard"):
        read_inspect(_log_by_name("arith", ".eval"), scorer="match")


def test_several_scorers_are_refused_listing_them_and_a_missing_scorer_names_the_sample():
    path = _log_by_name("arith", ".json")
    with pytest.raises(ValueError, match=r"read_inspect: task 'arith': .*'match', 'includes'.*scorer="):
        read_inspect(path)
    with pytest.raises(ValueError, match=r"\.json:1 \(sample 1, epoch 1\): no score of scorer 'exact'"):
        read_inspect(path, scorer="exact")
    with pytest.raises(ValueError, match="scorer names no task 'nope'"):
        read_inspect(path, scorer={"nope": "match"})


def test_epochs_as_groups_make_each_sample_a_unit():
    path = _log_by_name("arith", ".json")
    doc = json.loads(path.read_text())
    ev = read_inspect(path, scorer="match", samples="groups")
    ids = ev.ids["arith"].tolist()
    assert sorted(ids, key=str) == sorted(((s["id"], s["epoch"]) for s in doc["samples"]), key=str)
    truth = {(s["id"], s["epoch"]): GRADE[s["scores"]["match"]["value"]] for s in doc["samples"]}
    assert ev.scores["arith"][B].tolist() == [truth[k] for k in ids]
    groups = ev.groups["arith"]
    assert all((groups[x] == groups[y]) == (ids[x][0] == ids[y][0]) for x in range(8) for y in range(8))


def test_a_group_field_labels_each_sample_by_its_metadata():
    paths = [p for p in LOGS.iterdir() if "_essay_quality_" in p.name]
    ev = read_inspect(paths, group_field="metadata.passage")
    doc = json.loads(next(p for p in paths if p.suffix == ".json").read_text())
    passage = {s["id"]: s["metadata"]["passage"] for s in doc["samples"]}
    assert ev.groups["essay_quality"].tolist() == [passage[i] for i in ev.ids["essay_quality"].tolist()]
    with pytest.raises(ValueError, match=r"sample 'e1', epoch 1\): no field 'metadata.section'"):
        read_inspect(paths, group_field="metadata.section")


def test_values_map_grades_and_a_grade_it_lacks_is_named():
    paths = [p for p in LOGS.iterdir() if "_essay_quality_" in p.name]
    ev = read_inspect(paths, values={"C": 1, "P": 0, "I": 0})
    assert ev.metrics["essay_quality"] == "accuracy"
    doc = json.loads(next(p for p in paths if p.suffix == ".json").read_text())
    truth = {s["id"]: int(s["scores"]["model_graded_qa"]["value"] == "C") for s in doc["samples"]}
    assert ev.scores["essay_quality"][doc["eval"]["model"]].tolist() == [truth[i] for i in ev.ids["essay_quality"]]
    with pytest.raises(ValueError, match=r"\"P\", which values= does not map.*sample 'e2'"):
        read_inspect(paths, values={"C": 1, "I": 0})


def test_systems_name_the_logs_and_other_json_in_a_log_folder_is_skipped(tmp_path):
    for p in LOGS.iterdir():
        if "_ner_" in p.name:
            shutil.copy(p, tmp_path / p.name)
    # Eval sets keep their own JSON files beside the logs; inspect_ai lists only time-named ones.
    (tmp_path / "logs.json").write_text("{}")
    (tmp_path / "eval-set.json").write_text('{"eval_set_id": "x", "tasks": []}')
    ev = read_inspect(tmp_path)
    assert set(ev.systems) == {A, B}
    one, two = sorted(tmp_path.glob("2025*"))
    json_log = one if one.suffix == ".json" else two
    json_model = json.loads(json_log.read_text())["eval"]["model"]
    named = read_inspect(None, systems={"first": one, "second": two})
    assert named.systems == ("first", "second")
    which = "first" if json_log == one else "second"
    assert named.scores["ner"][which].tolist() == ev.scores["ner"][json_model].tolist()
    with pytest.raises(ValueError, match="not both"):
        read_inspect(tmp_path, systems={"first": one})


def test_two_logs_of_one_task_and_model_are_refused_naming_both(tmp_path):
    src = _log_by_name("ner", ".json")
    shutil.copy(src, tmp_path / src.name)
    shutil.copy(src, tmp_path / ("2025-03-05T00-00-00+00-00" + src.name[25:]))
    with pytest.raises(ValueError, match=r"are both logs of task 'ner' by 'anthropic/claude-3-5-haiku-latest'"):
        read_inspect(tmp_path)


def test_a_sample_logged_again_counts_by_its_last_entry(tmp_path):
    src = _log_by_name("essay_quality", ".eval")
    dest = tmp_path / src.name
    shutil.copy(src, dest)
    with zipfile.ZipFile(src) as z:
        name = next(n for n in z.namelist() if n.startswith("samples/e3_"))
        sample = json.loads(z.read(name))
    before = GRADE[sample["scores"]["model_graded_qa"]["value"]]
    sample["scores"]["model_graded_qa"]["value"] = "I" if before else "C"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns of the name written twice
        with zipfile.ZipFile(dest, "a") as z:
            z.writestr(name, json.dumps(sample))
    ev = read_inspect(dest)
    row = ev.ids["essay_quality"].tolist().index("e3")
    model = _read(src, None)[0]["eval"]["model"]
    assert ev.scores["essay_quality"][model][row] == (0 if before else 1)


def test_failed_unfinished_and_errored_runs_are_refused_naming_the_file_and_sample():
    failed, errored = sorted(BAD.glob("*.json"))
    with pytest.raises(ValueError, match=rf"{re.escape(failed.name)}: the run's status is \"error\" \(RateLimitError.*"
                                         r"not 'success'"):
        read_inspect(failed)
    with pytest.raises(ValueError, match=rf"{re.escape(errored.name)}:3 \(sample 3, epoch 1\): the sample ended in an "
                                         r"error \(RuntimeError\('tokenizer crashed'\)\)"):
        read_inspect(errored)
    unfinished = next(BAD.glob("*.eval"))
    with pytest.raises(ValueError, match=rf"{re.escape(unfinished.name)}: no header.json: the run has not finished"):
        read_inspect(unfinished)


def _edited(tmp_path, task, edit):
    """A copy of a task's .json log with its samples edited."""
    src = _log_by_name(task, ".json")
    doc = json.loads(src.read_text())
    edit(doc["samples"])
    dest = tmp_path / src.name
    dest.write_text(json.dumps(doc))
    return dest


def test_unscored_and_unreadable_values_are_refused_naming_the_sample(tmp_path):
    def nan(samples):
        samples[1]["scores"]["model_graded_qa"]["value"] = math.nan
    path = _edited(tmp_path, "essay_quality", nan)
    assert "NaN" in path.read_text()  # as inspect_ai writes Score.unscored()
    with pytest.raises(ValueError, match=r":2 \(sample 'e2', epoch 1\): the score is NaN"):
        read_inspect(path)

    def word(samples):
        samples[3]["scores"]["model_graded_qa"]["value"] = "maybe"
    with pytest.raises(ValueError, match=r":4 \(sample 'e4', epoch 1\): the score \"maybe\" is no number.*values="):
        read_inspect(_edited(tmp_path, "essay_quality", word))


def test_inspect_readings_of_numbers_booleans_and_words(tmp_path):
    written = [True, 0.25, "yes", "3.5"]

    def values(samples):
        for s, v in zip(samples, written):
            s["scores"]["model_graded_qa"]["value"] = v
    path = _edited(tmp_path, "essay_quality", values)
    ev = read_inspect(path)
    doc = json.loads(path.read_text())
    as_number = {True: 1, 0.25: 0.25, "yes": 1, "3.5": 3.5}
    truth = {s["id"]: as_number[s["scores"]["model_graded_qa"]["value"]] for s in doc["samples"]}
    assert ev.scores["essay_quality"][doc["eval"]["model"]].tolist() == [truth[i] for i in ev.ids["essay_quality"]]
    assert ev.metrics["essay_quality"] == "mean"


def test_dict_scores_need_a_known_metrics_statistics_and_one_kind_per_task(tmp_path):
    def other_keys(samples):
        samples[0]["scores"]["entity_f1"]["value"] = {"precision": 1.0, "recall": 0.5}
    with pytest.raises(ValueError, match=r":1 \(sample 1, epoch 1\): the score is a dict of 'precision', 'recall'"):
        read_inspect(_edited(tmp_path, "ner", other_keys))

    def fraction(samples):
        samples[2]["scores"]["entity_f1"]["value"]["tp"] = 1.5
    with pytest.raises(ValueError, match=r"sample 3, epoch 1\): the statistic 'tp' is 1.5, not a count"):
        read_inspect(_edited(tmp_path, "ner", fraction))

    def mixed(samples):
        samples[3]["scores"]["entity_f1"]["value"] = 1
    with pytest.raises(ValueError, match=r"sample 4, epoch 1\): the score holds score but that of .* holds tp, fp, fn"):
        read_inspect(_edited(tmp_path, "ner", mixed))


def test_ids_must_be_integers_or_strings(tmp_path):
    def boolean(samples):
        samples[0]["id"] = True
    with pytest.raises(ValueError, match=r":1: the sample id true is neither an integer nor a string"):
        read_inspect(_edited(tmp_path, "ner", boolean))


def test_a_sample_one_model_lacks_is_refused_by_the_alignment_naming_the_file(tmp_path):
    def drop(samples):
        samples[:] = [s for s in samples if s["id"] != 2]
    path = _edited(tmp_path, "ner", drop)
    with pytest.raises(ValueError, match=rf"read_inspect: task 'ner': system '{B}' \({re.escape(str(path))}\) has no score "
                                         "for item 2"):
        read_inspect([path, _log_by_name("ner", ".eval")])


def test_evaluation_compares_the_tasks_with_their_metrics(monkeypatch):
    paths = [p for p in LOGS.iterdir() if "_ner_" in p.name or "_essay_quality_" in p.name]
    result = read_inspect(paths).compare(rng=0)
    assert result.task_names == ("essay_quality", "ner")
    truth = {(task, model): _truth(_log(task, model, monkeypatch), scorer, monkeypatch)
             for task, scorer in (("essay_quality", "model_graded_qa"), ("ner", "entity_f1")) for model in (A, B)}
    for row in result.rows:
        for system, value in ((row.system_a, row.metric_a), (row.system_b, row.metric_b)):
            scores = list(truth[row.task, system].values())
            if row.task == "ner":
                tp, fp, fn = (sum(c[k] for c in scores) for k in range(3))
                assert value == pytest.approx(Fraction(2 * tp, 2 * tp + fp + fn))
            else:
                assert value == pytest.approx(sum(scores) / len(scores))


def test_an_id_naming_another_sample_in_another_log_is_refused(tmp_path):
    # inspect_ai numbers samples without ids 1, 2, ... after shuffling them: two runs shuffled
    # apart hold different questions under one id, which must never be paired.
    log = json.loads(next(LOGS.glob("*_arith_*.json")).read_text())
    paths = []
    for k, model in enumerate((A, B)):
        doc = json.loads(json.dumps(log))
        doc["eval"]["model"] = model
        if k:
            first, second = doc["samples"][0], doc["samples"][-1]
            first["input"], second["input"] = second["input"], first["input"]
        paths.append(tmp_path / f"2025-03-04T10-15-0{k}+00-00_arith_{k}.json")
        paths[-1].write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"_arith_1\.json:1: sample .* has another input or target than at "
                                         r".*_arith_0\.json:1; the logs do not hold the same samples"):
        read_inspect(paths, scorer="match")
    # The same samples in another order are read, paired by id.
    doc = json.loads(paths[1].read_text())
    first, second = doc["samples"][0], doc["samples"][-1]
    first["input"], second["input"] = second["input"], first["input"]
    doc["samples"].reverse()
    paths[1].write_text(json.dumps(doc))
    ev = read_inspect(paths, scorer="match")
    assert ev.scores["arith"][B].tolist() == ev.scores["arith"][A].tolist()
