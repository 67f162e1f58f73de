"""HELM runs read as helm-run writes them: the per-instance stat of each model on each
instance (checked by hand and against the JSON), train trials as samples, perturbations kept
apart, groups from instances.json, and bad records named by file and JSON path."""

import json
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")
pytest.importorskip("orjson")

from pairperm._helm import helm_records, read_helm, task_of_run  # noqa: E402
from pairperm._records import Evaluation  # noqa: E402

SUITE = Path(__file__).parent / "data" / "logs" / "helm" / "benchmark_output" / "runs" / "v1"
CIVIL = "civil_comments:demographic=all"
NQA = "narrative_qa:data_augmentation=canonical"
GPT2, LLAMA = "openai/gpt2", "meta/llama-7b"


def _run(scenario, model):
    short = {GPT2: "openai_gpt2", LLAMA: "meta_llama-7b,model_deployment=together_llama-7b"}[model]
    if scenario == CIVIL:
        return SUITE / f"civil_comments:demographic=all,model={short}"
    return SUITE / f"narrative_qa:model={short},data_augmentation=canonical"


def _json(path):
    return json.loads(Path(path).read_text())


def _by_item(ev, task, system):
    return dict(zip(ev.ids[task], ev.scores[task][system].tolist()))


def _copy_suite(tmp_path):
    suite = tmp_path / "v1"
    shutil.copytree(SUITE, suite)
    return suite


def test_task_is_the_run_name_without_its_model_arguments():
    assert task_of_run("mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt2") == \
        "mmlu:subject=anatomy,method=multiple_choice_joint"
    assert task_of_run("narrative_qa:model=meta_llama-7b,model_deployment=together_llama-7b,"
                       "data_augmentation=canonical") == NQA
    assert task_of_run("boolq:model=openai_gpt2") == "boolq"
    assert task_of_run("boolq") == "boolq"


def test_exact_match_of_each_model_on_each_test_instance_checked_by_hand():
    ev = read_helm(SUITE)
    assert isinstance(ev, Evaluation)
    # Only civil_comments holds exact_match; narrative_qa (f1_score only) is passed over.
    assert ev.tasks == (CIVIL,) and set(ev.systems) == {GPT2, LLAMA}
    # The stat's "mean" on each test instance, read off per_instance_stats.json by hand (id2 is
    # the valid split's).
    assert _by_item(ev, CIVIL, GPT2) == {"id5": 1, "id9": 0, "id14": 1, "id20": 0}
    assert _by_item(ev, CIVIL, LLAMA) == {"id5": 1, "id9": 1, "id14": 1, "id20": 0}
    assert ev.metrics == {CIVIL: "accuracy"} and ev.scores[CIVIL][GPT2].dtype == np.int64
    # The same from the JSON, walked here: every record of the test split, one stat each.
    for model in (GPT2, LLAMA):
        expected = {r["instance_id"]: s["mean"] for r in _json(_run(CIVIL, model) / "per_instance_stats.json")
                    for s in r["stats"] if s["name"] == {"name": "exact_match", "split": "test", "sub_split":
                                                         s["name"].get("sub_split")}}
        assert _by_item(ev, CIVIL, model) == expected
    valid = read_helm(SUITE, split="valid")
    assert _by_item(valid, CIVIL, GPT2) == {"id2": 1} and _by_item(valid, CIVIL, LLAMA) == {"id2": 0}
    with pytest.raises(ValueError, match=r"model=openai_gpt2/per_instance_stats\.json: the stat 'exact_match' is on "
                                         r"several splits \('test', 'valid'\); give split="):
        read_helm(SUITE, split=None, systems=[GPT2])
    quasi = read_helm(SUITE, stat="quasi_exact_match")
    assert _by_item(quasi, CIVIL, LLAMA) == {"id5": 1, "id9": 1, "id14": 1, "id20": 1}


def test_train_trials_are_the_samples_of_an_instance():
    ev = read_helm(SUITE, stat="f1_score")
    assert ev.tasks == (NQA,) and ev.metrics == {NQA: "mean"}
    assert list(ev.ids[NQA]) == ["id1310", "id1311", "id1312"]
    # Columns are the train trials 0 and 1 (the unperturbed records only), by hand:
    third = float(Fraction(2, 3))
    assert ev.scores[NQA][GPT2].tolist() == [[1.0, 0.8], [0.0, 0.5], [third, third]]
    assert ev.scores[NQA][LLAMA].tolist() == [[1.0, 1.0], [1.0, third], [1.0, 1.0]]
    rows = read_helm(SUITE, stat="f1_score", samples="groups")
    assert list(rows.ids[NQA]) == [("id1310", 0), ("id1311", 0), ("id1312", 0), ("id1310", 1), ("id1311", 1),
                                   ("id1312", 1)]
    assert rows.scores[NQA][GPT2].tolist() == [1.0, 0.0, third, 0.8, 0.5, third]
    # Each instance is one unit: its two trials share a group.
    assert rows.groups[NQA].tolist() == [0, 1, 2, 0, 1, 2]


def test_a_perturbation_is_read_alone_never_mixed_with_the_unperturbed_instances(tmp_path):
    mild = read_helm(SUITE, stat="f1_score", perturbation="mild_mix")
    assert mild.scores[NQA][GPT2].tolist() == [[0.5, 0.5], [0.0, 0.0], [0.5, float(Fraction(2, 3))]]
    # The dialect left id1310 and id1311 unchanged, so HELM evaluated only id1312 with it.
    dialect = read_helm(SUITE, stat="f1_score", perturbation="dialect")
    assert list(dialect.ids[NQA]) == ["id1312"] and dialect.scores[NQA][LLAMA].tolist() == [[0.5, 0.4]]
    assert read_helm(SUITE, stat="f1_score", perturbation={"name": "dialect", "target_class": "AAVE"}) == dialect
    with pytest.raises(ValueError, match=r"no stat 'f1_score' on split 'test' with perturbation \{'name': 'dialect', "
                                         r"'target_class': 'X'\} in any run read; .*their perturbations: 'dialect', "
                                         r"'mild_mix', none"):
        read_helm(SUITE, stat="f1_score", perturbation={"name": "dialect", "target_class": "X"})
    # Two dialects of different strength in one run: the name alone does not say which.
    suite = _copy_suite(tmp_path)
    stats_file = suite / _run(NQA, GPT2).name / "per_instance_stats.json"
    records = _json(stats_file)
    records[-1]["perturbation"]["prob"] = 0.5
    records[-1]["stats"][0]["name"]["perturbation"]["prob"] = 0.5
    stats_file.write_text(json.dumps(records, indent=2))
    with pytest.raises(ValueError, match=r"per_instance_stats\.json: perturbation 'dialect' matches several "
                                         r"descriptions"):
        read_helm(suite, stat="f1_score", perturbation="dialect")


def test_groups_come_from_the_instances_joined_by_id_and_perturbation(tmp_path):
    ev = read_helm(SUITE, group_field="sub_split")
    sub_split = dict(zip(ev.ids[CIVIL], ev.groups[CIVIL].tolist()))
    assert sub_split == {"id5": "toxic", "id9": "non-toxic", "id14": "non-toxic", "id20": "toxic"}
    # The perturbed instance's own text, not the original's.
    mild = read_helm(SUITE, stat="f1_score", perturbation="mild_mix", group_field="input.text")
    texts = dict(zip(mild.ids[NQA], mild.groups[NQA].tolist()))
    listed = {x["id"]: x["input"]["text"] for x in _json(_run(NQA, GPT2) / "instances.json")
              if x.get("perturbation", {}).get("name") == "mild_mix"}
    assert texts == listed and all("teh island" in t for t in texts.values())
    # A list element by its index; instances.json keeps only PerturbationDescription's own
    # fields of the dialect, which the stats' full description still matches.
    answers = read_helm(SUITE, stat="f1_score", perturbation="dialect", group_field="references.0.output.text")
    assert answers.groups[NQA].tolist() == ["since the storm"]
    with pytest.raises(ValueError, match=r"instances\.json: \[0\]: no field 'sub_split': the record has no key "
                                         r".* \(HELM leaves null fields out\)"):
        read_helm(SUITE, stat="f1_score", group_field="sub_split")
    with pytest.raises(ValueError, match=r"instances\.json: \[0\]\.input: expected a string or a finite number"):
        read_helm(SUITE, group_field="input")
    # Without instances.json (no helm-summarize yet), the instances of scenario_state.json.
    suite = _copy_suite(tmp_path)
    for model in (GPT2, LLAMA):
        run = suite / _run(NQA, model).name
        instances = _json(run / "instances.json")
        (run / "instances.json").unlink()
        states = [{"instance": x, "train_trial_index": trial, "request_mode": "original", "num_train_instances": 5,
                   "prompt_truncated": False} for trial in range(2) for x in instances]
        (run / "scenario_state.json").write_text(json.dumps({"adapter_spec": {}, "request_states": states}))
    assert read_helm(suite, stat="f1_score", perturbation="mild_mix", group_field="input.text") == mild


def test_systems_select_and_rename_models_and_run_folders_can_be_given():
    ev = read_helm(SUITE, systems={GPT2: "gpt2", LLAMA: "llama"})
    assert set(ev.systems) == {"gpt2", "llama"}
    assert _by_item(ev, CIVIL, "gpt2") == _by_item(read_helm(SUITE), CIVIL, GPT2)
    with pytest.raises(ValueError, match=r"no run of model 'openai/gpt-4'"):
        read_helm(SUITE, systems=[GPT2, "openai/gpt-4"])
    folders = read_helm([_run(CIVIL, GPT2), _run(CIVIL, LLAMA)])
    assert folders == read_helm(SUITE)
    one = helm_records(_run(NQA, GPT2), stat="f1_score")
    assert set(one.frame["system"]) == {GPT2} and len(one.frame) == 6
    assert list(one.frame.columns) == ["task", "system", "item", "sample", "score", "file", "line"]
    # A row's line is its record's index in the JSON array.
    records = _json(_run(NQA, GPT2) / "per_instance_stats.json")
    for _, row in one.frame.iterrows():
        record = records[int(row["line"].strip("[]"))]
        assert (record["instance_id"], record["train_trial_index"], record["stats"][0]["mean"]) == \
            (row["item"], row["sample"], row["score"]) and "perturbation" not in record


def _broken(tmp_path, edit, scenario=CIVIL, model=GPT2):
    suite = _copy_suite(tmp_path)
    stats_file = suite / _run(scenario, model).name / "per_instance_stats.json"
    records = _json(stats_file)
    edit(records)
    stats_file.write_text(json.dumps(records, indent=2))
    return suite


def _set(path, value):
    def edit(records):
        target = records
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


def test_bad_records_are_named_by_file_and_json_path(tmp_path):
    cases = [
        (_set([1, "stats", 0, "mean"], "1.0"), r"\[1\]\.stats\[0\]\.mean: expected a finite number; got '1\.0'"),
        (_set([2, "stats", 0, "mean"], True), r"\[2\]\.stats\[0\]\.mean: expected a finite number; got True"),
        (_set([0, "train_trial_index"], True), r"\[0\]\.train_trial_index: expected an integer >= 0; got True"),
        (_set([3, "instance_id"], 20), r"\[3\]\.instance_id: expected a string; got 20"),
        (_set([0, "stats", 0, "count"], 0), r"\[0\]\.stats\[0\]: the stat has no value \(count 0\)"),
        (_set([4, "stats"], None), r"\[4\]\.stats: expected an array of stats"),
    ]
    for edit, message in cases:
        with pytest.raises(ValueError, match=r"model=openai_gpt2/per_instance_stats\.json: " + message):
            read_helm(_broken(tmp_path / str(len(message)), edit))
    suite = _copy_suite(tmp_path / "json")
    (suite / _run(CIVIL, LLAMA).name / "per_instance_stats.json").write_text('[{"instance_id": "id5",')
    with pytest.raises(ValueError, match=r"together_llama-7b/per_instance_stats\.json: not a JSON document"):
        read_helm(suite)


def test_missing_repeated_and_duplicated_runs_are_refused(tmp_path):
    # One model lacks an instance: the alignment names the system and the instance.
    suite = _broken(tmp_path / "a", lambda records: records.pop(2))
    with pytest.raises(ValueError, match=r"system 'openai/gpt2' .* has no score for item 'id14'"):
        read_helm(suite)
    # An instance scored twice in a run.
    suite = _broken(tmp_path / "b", lambda records: records.append(records[0]))
    with pytest.raises(ValueError, match=r"model=openai_gpt2/per_instance_stats\.json \[5\]: system 'openai/gpt2' scores "
                                         r"item 'id5' of task .* again \(first at .* \[0\]\)"):
        read_helm(suite)
    # A model's run lacks the stat that the other model's run of the task has.
    suite = _broken(tmp_path / "c", lambda records: [s["name"].update(name="em") for r in records for s in r["stats"]
                                                      if s["name"]["name"] == "exact_match"])
    with pytest.raises(ValueError, match=r"model=openai_gpt2/per_instance_stats\.json: no stat 'exact_match' on split "
                                         r"'test' on the unperturbed instances, which other runs of task "
                                         r"'civil_comments:demographic=all' have"):
        read_helm(suite)
    # Two runs of one task by one model.
    suite = _copy_suite(tmp_path / "d")
    shutil.copytree(suite / _run(CIVIL, GPT2).name, suite / "civil_comments:demographic=all,model=openai_gpt2,copy")
    with pytest.raises(ValueError, match=r"are both runs of task 'civil_comments:demographic=all' by system "
                                         r"'openai/gpt2'"):
        read_helm(suite)
    with pytest.raises(ValueError, match=r"no HELM run here"):
        read_helm(tmp_path)
    with pytest.raises(ValueError, match=r"not a HELM run folder \(no run_spec\.json\)"):
        read_helm([tmp_path])


def test_the_evaluation_compares_the_models():
    ev = read_helm(SUITE, group_field="sub_split")
    result = ev.compare(rng=0, n_resamples=200)
    assert result is not None and ev.groups[CIVIL].shape == (4,)
