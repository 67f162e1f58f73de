"""lm-evaluation-harness sample logs (--log_samples): the fixtures follow the harness's files
field for field, and read_lm_eval reads them into the scores the lines hold, aligned by doc_id,
refusing what the format leaves ambiguous (filters, metrics, runs) and data that disagree."""

import gzip
import hashlib
import json
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import pairperm
from pairperm._lm_eval import read_lm_eval

pd = pytest.importorskip("pandas")

DATA = Path(__file__).resolve().parent / "data" / "logs" / "lm_eval"
OUT = DATA / "out"
MODELS = ("EleutherAI__pythia-160m", "Qwen__Qwen2.5-0.5B-Instruct", "meta-llama__Llama-3.2-1B")
# The keys of a sample line in the order lm-eval's evaluator builds it, before the metric values.
LINE_KEYS = ["doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics", "doc_hash",
             "prompt_hash", "target_hash"]


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lines_of(path):
    return [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]


def sample_file(folder, model, task):
    (path,) = sorted((folder / model).glob(f"samples_{task}_*.jsonl"))
    return path


def reference(folder, task, metric, filter_name):
    """{model: {doc_id: value}} straight from the JSON lines."""
    return {m: {x["doc_id"]: x[metric] for x in lines_of(sample_file(folder, m, task)) if x["filter"] == filter_name}
            for m in MODELS}


def copy_out(tmp_path, name="out"):
    return Path(shutil.copytree(OUT, tmp_path / name))


def rewrite(path, change):
    """Rewrite a sample file line by line: change(index, record) returns the record (or None to drop it)."""
    records = [change(i, r) for i, r in enumerate(lines_of(path))]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records if r is not None), encoding="utf-8")


# ------------------------------------------------------------------ the fixtures are lm-eval's format

def test_fixture_files_are_named_and_filled_as_lm_eval_writes_them():
    for model in MODELS:
        for path in (OUT / model).glob("samples_*.jsonl"):
            name = path.name
            # lm-eval's own reading of its names: the task between the first and the last "_".
            task, date = name[name.find("_") + 1:name.rfind("_")], name[name.rfind("_") + 1:].replace(".jsonl", "")
            assert task in ("boolq", "gsm8k_cot")
            results = json.loads((OUT / model / f"results_{date}.json").read_text())
            assert results["model_name_sanitized"] == model
            for record in lines_of(path):
                assert list(record)[:len(LINE_KEYS)] == LINE_KEYS and list(record)[len(LINE_KEYS):] == record["metrics"]
                assert record["doc_hash"] == sha(json.dumps(record["doc"], indent=2, ensure_ascii=False))
                assert record["prompt_hash"] == sha(record["arguments"]["gen_args_0"]["arg_0"])
                assert record["target_hash"] == sha(record["target"]) and isinstance(record["target"], str)
                assert all(isinstance(r, list) for r in record["resps"])


def test_prompts_differ_between_models_while_documents_agree():
    # Qwen's prompts went through its chat template: their hashes differ, the documents' do not.
    pythia, qwen = (lines_of(sample_file(OUT, m, "boolq")) for m in MODELS[:2])
    assert all(a["prompt_hash"] != b["prompt_hash"] and a["doc_hash"] == b["doc_hash"] for a, b in zip(pythia, qwen))
    read_lm_eval(OUT, tasks="boolq")


# ------------------------------------------------------------------ values and alignment

def test_scores_are_the_lines_values_aligned_by_doc_id():
    ev = read_lm_eval(OUT, filter={"gsm8k_cot": "strict-match"})
    assert ev.tasks == ("boolq", "gsm8k_cot") and ev.systems == MODELS
    for task, metric, filter_name in (("boolq", "acc", "none"), ("gsm8k_cot", "exact_match", "strict-match")):
        ref = reference(OUT, task, metric, filter_name)
        assert sorted(ev.ids[task]) == sorted(ref[MODELS[0]])
        for m in MODELS:
            got = ev.scores[task][m]
            assert got.dtype == np.int64 and got.tolist() == [ref[m][i] for i in ev.ids[task]]
        assert ev.metrics[task] == "accuracy"
    # Llama ran on two ranks: its boolq lines are in rank order, not doc order.
    assert [x["doc_id"] for x in lines_of(sample_file(OUT, MODELS[2], "boolq"))] == [0, 2, 1, 3]


def test_means_equal_the_aggregates_lm_eval_wrote_in_its_results_file():
    for filter_name in ("strict-match", "flexible-extract"):
        ev = read_lm_eval(OUT, filter=filter_name)  # boolq, scored unfiltered ("none"), is read as it is
        for m in MODELS:
            (results,) = (OUT / m).glob("results_*.json")
            agg = json.loads(results.read_text())["results"]
            for task, key in (("boolq", "acc,none"), ("gsm8k_cot", f"exact_match,{filter_name}")):
                scores = ev.scores[task][m]
                assert Fraction(int(scores.sum()), len(scores)) == Fraction(agg[task][key]).limit_denominator(100)


def test_compare_runs_on_the_read_scores_with_their_metric():
    ev = read_lm_eval(OUT, filter={"gsm8k_cot": "flexible-extract"})
    got = ev.compare(rng=0).to_frame()
    want = pairperm.compare_systems(ev.scores, "accuracy", rng=0).to_frame()
    assert got.equals(want)


def test_real_valued_metrics_read_as_mean_and_zero_one_as_accuracy(tmp_path):
    out = copy_out(tmp_path)
    for k, m in enumerate(MODELS):
        rewrite(sample_file(out, m, "boolq"), lambda i, r, k=k: {**r, "acc": (r["doc_id"] + k) / 8})
    ev = read_lm_eval(out, tasks="boolq")
    assert ev.metrics == {"boolq": "mean"}
    for k, m in enumerate(MODELS):
        assert ev.scores["boolq"][m].tolist() == [(i + k) / 8 for i in ev.ids["boolq"]]
    # lm-eval writes exact_match as 0 or 1 and acc as 0.0 or 1.0 (and a custom metric may write
    # true/false): all are read as 0/1 integers.
    for k, m in enumerate(MODELS):
        rewrite(sample_file(out, m, "boolq"), lambda i, r, k=k: {**r, "acc": [True, 1, 0.0, False][(i + k) % 4]})
    ev = read_lm_eval(out, tasks="boolq")
    assert ev.metrics == {"boolq": "accuracy"} and ev.scores["boolq"][MODELS[0]].dtype == np.int64


def test_systems_named_by_a_mapping_and_one_model_directory():
    ev = read_lm_eval(OUT, systems={"small": MODELS[0], "llama": OUT / MODELS[2]}, tasks=["boolq"])
    ref = reference(OUT, "boolq", "acc", "none")
    assert ev.systems == ("small", "llama")
    assert ev.scores["boolq"]["llama"].tolist() == [ref[MODELS[2]][i] for i in ev.ids["boolq"]]
    one = read_lm_eval(OUT / MODELS[1], filter="strict-match")
    assert one.systems == (MODELS[1],) and one.tasks == ("boolq", "gsm8k_cot")


def test_groups_from_a_field_path_per_task():
    ev = read_lm_eval(OUT, filter="strict-match", group_field={"boolq": "doc.passage"})
    passages = {x["doc_id"]: x["doc"]["passage"] for x in lines_of(sample_file(OUT, MODELS[0], "boolq"))}
    assert ev.groups["boolq"].tolist() == [passages[i] for i in ev.ids["boolq"]]
    assert "gsm8k_cot" not in ev.groups and len(set(ev.groups["boolq"])) == 2
    with pytest.raises(ValueError, match=r"samples_gsm8k_cot_[^:]*\.jsonl:1: no field 'doc\.passage': 'doc' has no key "
                                         r"'passage' \(its keys: question, answer\)"):
        read_lm_eval(OUT, filter="strict-match", group_field="doc.passage")


def test_gzip_files_read_as_the_plain_ones(tmp_path):
    out = copy_out(tmp_path)
    for path in out.glob("*/samples_*.jsonl"):
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
    assert read_lm_eval(out, filter="strict-match") == read_lm_eval(OUT, filter="strict-match")


# ------------------------------------------------------------------ filters and metrics

def test_several_filters_are_refused_listing_them_until_one_is_named():
    with pytest.raises(ValueError, match=r"samples_gsm8k_cot_2024-12-02T10-11-12\.345678\.jsonl: the lines are scored "
                                         r"under 2 filters \('strict-match', 'flexible-extract'\); give filter="):
        read_lm_eval(OUT)
    with pytest.raises(ValueError, match=r"no line under the filter 'strict'; the file's filters: 'strict-match', "
                                         r"'flexible-extract'"):
        read_lm_eval(OUT, filter={"gsm8k_cot": "strict"})
    with pytest.raises(ValueError, match=r"filter names the task\(s\) 'arc_easy', which are not read"):
        read_lm_eval(OUT, filter={"arc_easy": "none"})
    flexible = read_lm_eval(OUT, tasks="gsm8k_cot", filter="flexible-extract")
    ref = reference(OUT, "gsm8k_cot", "exact_match", "flexible-extract")
    assert all(flexible.scores["gsm8k_cot"][m].tolist() == [ref[m][i] for i in flexible.ids["gsm8k_cot"]]
               for m in MODELS)


def test_several_metrics_are_refused_listing_them_until_one_is_named(tmp_path):
    out = copy_out(tmp_path)
    for m in MODELS:  # a multiple-choice task scored by acc and acc_norm, as arc_easy is
        rewrite(sample_file(out, m, "boolq"),
                lambda i, r: {**r, "metrics": ["acc", "acc_norm"], "acc_norm": float(r["doc_id"] % 2)})
    with pytest.raises(ValueError, match=r"samples_boolq_[^:]*\.jsonl:1: the lines hold the metrics 'acc', 'acc_norm'; "
                                         r"give metric="):
        read_lm_eval(out, tasks="boolq")
    ev = read_lm_eval(out, tasks="boolq", metric={"boolq": "acc_norm"})
    assert all(ev.scores["boolq"][m].tolist() == [i % 2 for i in ev.ids["boolq"]] for m in MODELS)
    with pytest.raises(ValueError, match=r"samples_boolq_[^:]*\.jsonl:1: no metric 'exact_match' in the line; its "
                                         r"metrics: 'acc', 'acc_norm'"):
        read_lm_eval(out, tasks="boolq", metric="exact_match")


def test_one_metric_per_task_across_systems(tmp_path):
    out = copy_out(tmp_path)
    # Each file alone holds one metric, but not the same one: the systems would be compared on two.
    rewrite(sample_file(out, MODELS[2], "boolq"), lambda i, r: {**{k: v for k, v in r.items() if k != "acc"},
                                                               "metrics": ["acc_norm"], "acc_norm": r["acc"]})
    with pytest.raises(ValueError, match=r"task 'boolq': .*pythia-160m/samples_boolq_[^ ]*\.jsonl holds the metric 'acc', "
                                         r".*Llama-3\.2-1B/samples_boolq_[^ ]*\.jsonl the metric 'acc_norm'"):
        read_lm_eval(out, tasks="boolq")


def test_metrics_aggregated_over_the_corpus_are_refused(tmp_path):
    out = copy_out(tmp_path)
    # lm-eval's f1 of a multiple-choice task writes the (gold, prediction) pair of each document.
    rewrite(sample_file(out, MODELS[1], "boolq"), lambda i, r: {**r, "metrics": ["f1"], "f1": [r["doc"]["label"], 1]})
    with pytest.raises(ValueError, match=r"Qwen[^:]*samples_boolq_[^:]*\.jsonl:1: the metric 'f1' is \[1, 1\], not a "
                                         r"number per document"):
        read_lm_eval(out, tasks="boolq")


def test_logs_without_filter_names_read_unless_a_doc_repeats(tmp_path):
    out = copy_out(tmp_path)
    for m in MODELS:  # lm-eval before 0.4.7 wrote neither "filter" nor "metrics"
        for task in ("boolq", "gsm8k_cot"):
            rewrite(sample_file(out, m, task), lambda i, r: {k: v for k, v in r.items() if k not in ("filter", "metrics")})
    ev = read_lm_eval(out, tasks="boolq")
    assert ev == read_lm_eval(OUT, tasks="boolq")
    with pytest.raises(ValueError, match=r"samples_gsm8k_cot_[^:]*\.jsonl:4: doc_id 0 again \(first on line 1\), and the "
                                         r"lines name no filter: lm-eval before 0\.4\.7"):
        read_lm_eval(out)
    with pytest.raises(ValueError, match=r"samples_boolq_[^:]*\.jsonl: the lines name no filter .*filter='none' cannot "
                                         r"pick one"):
        read_lm_eval(out, tasks="boolq", filter={"boolq": "none"})


def test_a_doc_repeated_under_one_filter_is_refused(tmp_path):
    out = copy_out(tmp_path)
    rewrite(sample_file(out, MODELS[0], "gsm8k_cot"), lambda i, r: {**r, "doc_id": 0} if i == 2 else r)
    with pytest.raises(ValueError, match=r"pythia[^:]*\.jsonl:3: doc_id 0 again under the filter 'strict-match' \(first "
                                         r"on line 1\)"):
        read_lm_eval(out, filter="strict-match")


# ------------------------------------------------------------------ runs

def test_several_runs_are_refused_naming_them_or_read_as_chosen():
    reruns = DATA / "reruns"
    with pytest.raises(ValueError, match=r"holds 2 runs of task 'gsm8k_cot' \(samples_gsm8k_cot_2024-12-04T09-00-00"
                                         r"\.000001\.jsonl, samples_gsm8k_cot_2024-12-04T21-15-30\.jsonl\); give runs="):
        read_lm_eval(reruns, filter="strict-match")
    runs = {m: [{x["doc_id"]: x["exact_match"] for x in lines_of(p) if x["filter"] == "strict-match"}
                for p in sorted((reruns / m).glob("samples_*"))]  # these names sort as their dates
            for m in MODELS[:2]}
    latest = read_lm_eval(reruns, filter="strict-match", runs="latest")
    assert all(latest.scores["gsm8k_cot"][m].tolist() == [runs[m][1][i] for i in latest.ids["gsm8k_cot"]]
               for m in MODELS[:2])
    both = read_lm_eval(reruns, filter="strict-match", runs="samples")
    ids = both.ids["gsm8k_cot"]
    for m in MODELS[:2]:
        assert both.scores["gsm8k_cot"][m].tolist() == [[runs[m][0][i], runs[m][1][i]] for i in ids]
    rows = read_lm_eval(reruns, filter="strict-match", runs="samples", samples="groups")
    assert [runs[MODELS[1]][k][i] for i, k in rows.ids["gsm8k_cot"]] == rows.scores["gsm8k_cot"][MODELS[1]].tolist()
    assert rows.groups["gsm8k_cot"].tolist() == [[i for i, _ in rows.ids["gsm8k_cot"]].index(i)
                                                 for i, _ in rows.ids["gsm8k_cot"]]


def test_runs_are_ordered_by_their_dates_not_their_names(tmp_path):
    # A date written without a fraction is its second's start, older than ".5" of it, while the
    # name "...T07-45-00.jsonl" sorts after "...T07-45-00.5.jsonl".
    qwen = DATA / "reruns" / MODELS[1]
    older, newer = sorted(qwen.glob("samples_*"))
    shutil.copy(older, tmp_path / "samples_gsm8k_cot_2024-12-05T07-45-00.jsonl")
    shutil.copy(newer, tmp_path / "samples_gsm8k_cot_2024-12-05T07-45-00.5.jsonl")
    assert max(p.name for p in tmp_path.iterdir()) == "samples_gsm8k_cot_2024-12-05T07-45-00.jsonl"
    got = read_lm_eval(tmp_path, filter="strict-match", runs="latest")
    want = {x["doc_id"]: x["exact_match"] for x in lines_of(newer) if x["filter"] == "strict-match"}
    assert want != {x["doc_id"]: x["exact_match"] for x in lines_of(older) if x["filter"] == "strict-match"}
    assert got.scores["gsm8k_cot"][tmp_path.name].tolist() == [want[i] for i in got.ids["gsm8k_cot"]]


# ------------------------------------------------------------------ refusals

def test_a_malformed_line_is_refused_naming_file_and_line():
    with pytest.raises(ValueError, match=r"malformed/EleutherAI__pythia-160m/samples_boolq_2024-12-02T10-11-12\.345678"
                                         r"\.jsonl:3: not JSON at column \d+"):
        read_lm_eval(DATA / "malformed")


def test_documents_or_targets_that_differ_between_systems_are_refused():
    with pytest.raises(ValueError, match=r"Qwen[^:]*samples_boolq_[^:]*\.jsonl:3: doc_id 2 is another document "
                                         r"\(doc_hash [0-9a-f]{12}\.\.\.\) than at [^ ]*pythia-160m/samples_boolq_[^:]*"
                                         r"\.jsonl:3"):
        read_lm_eval(DATA / "hash_mismatch")


def test_a_target_that_differs_is_refused(tmp_path):
    out = copy_out(tmp_path)
    rewrite(sample_file(out, MODELS[2], "boolq"),
            lambda i, r: {**r, "target": "0", "target_hash": sha("0")} if r["doc_id"] == 3 else r)
    with pytest.raises(ValueError, match=r"Llama[^:]*samples_boolq_[^:]*\.jsonl:4: doc_id 3 is another target"):
        read_lm_eval(out, tasks="boolq")


def test_a_document_missing_for_one_system_is_refused(tmp_path):
    out = copy_out(tmp_path)
    rewrite(sample_file(out, MODELS[1], "boolq"), lambda i, r: None if r["doc_id"] == 1 else r)
    with pytest.raises(ValueError, match=r"task 'boolq': system 'Qwen__Qwen2\.5-0\.5B-Instruct' \(.*\) has no score for "
                                         r"item 1, which system 'EleutherAI__pythia-160m' scores at .*\.jsonl:2"):
        read_lm_eval(out, tasks="boolq")


def test_a_task_missing_for_one_system_is_refused_unless_left_out(tmp_path):
    out = copy_out(tmp_path)
    sample_file(out, MODELS[2], "gsm8k_cot").unlink()
    with pytest.raises(ValueError, match=r"no samples_gsm8k_cot_<date>\.jsonl in .*Llama-3\.2-1B \(system\(s\) "
                                         r"'meta-llama__Llama-3\.2-1B'\), while .* have them; give tasks="):
        read_lm_eval(out, filter="strict-match")
    assert read_lm_eval(out, tasks=["boolq"]).tasks == ("boolq",)


@pytest.mark.parametrize(("change", "message"), [
    (lambda i, r: {**r, "doc_id": True} if i == 1 else r, r":2: the doc_id is true; it must be a string or a finite"),
    (lambda i, r: {k: v for k, v in r.items() if k != "doc_hash"} if i == 2 else r, r":3: no field 'doc_hash'"),
    (lambda i, r: {**r, "acc": "yes"} if i == 0 else r, r":1: the score 'acc' is \"yes\", not a number"),
    (lambda i, r: {**r, "acc": float("nan")} if i == 3 else r, r":4: the score 'acc' is nan, not a finite number"),
    (lambda i, r: {k: v for k, v in r.items() if k != "filter"} if i == 1 else r, r":2: the line names no filter"),
])
def test_unreadable_fields_are_refused_naming_file_and_line(tmp_path, change, message):
    out = copy_out(tmp_path)
    rewrite(sample_file(out, MODELS[0], "boolq"), change)
    with pytest.raises(ValueError, match=r"pythia-160m/samples_boolq_[^:]*\.jsonl" + message):
        read_lm_eval(out, tasks="boolq")


def test_folders_and_names_that_are_no_lm_eval_output_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no lm-eval sample files"):
        read_lm_eval(tmp_path)
    out = copy_out(tmp_path)
    shutil.copy(sample_file(OUT, MODELS[0], "boolq"), out / "samples_boolq_2024-12-09T00-00-00.jsonl")
    with pytest.raises(ValueError, match="holds sample files and so do its directories"):
        read_lm_eval(out)
    (out / "samples_boolq_2024-12-09T00-00-00.jsonl").unlink()
    shutil.copy(sample_file(OUT, MODELS[0], "boolq"), out / MODELS[0] / "samples_boolq.jsonl")
    with pytest.raises(ValueError, match=r"samples_boolq\.jsonl: not named as lm-eval names sample files"):
        read_lm_eval(out)
    with pytest.raises(ValueError, match="runs must be None, 'latest' or 'samples'"):
        read_lm_eval(OUT, runs="all")
    with pytest.raises(ValueError, match=r"system 'x': .*nowhere is no directory holding lm-eval sample files"):
        read_lm_eval(OUT, systems={"x": "nowhere"})
