"""`pairperm compare --logs FORMAT`: a harness's output read by its reader, compared as the API
compares the Evaluation it returns; read_logs tells a folder's format from its files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import pairperm
from pairperm.cli import main

pytest.importorskip("pandas")
pytest.importorskip("orjson")

LOGS = Path(__file__).resolve().parent / "data" / "logs"
LM_EVAL = LOGS / "lm_eval" / "out"
TREC = LOGS / "trec"
HELM = LOGS / "helm" / "benchmark_output" / "runs" / "v1"
MT = LOGS / "mt"


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def compared(argv, capsys):
    code, out, err = run(["compare", *argv, "--format", "json", "--seed", "3"], capsys)
    assert code == 0, err
    return pairperm.MultiTaskComparison.from_dict(json.loads(out))


def test_lm_eval_folder_equals_the_api(capsys):
    got = compared(["--logs", "lm-eval", str(LM_EVAL), "--filter", "strict-match", "--baseline",
                    "EleutherAI__pythia-160m"], capsys)
    ev = pairperm.read_lm_eval(LM_EVAL, filter="strict-match")
    assert got == ev.compare(baseline="EleutherAI__pythia-160m", rng=3)
    assert got.task_names == ("boolq", "gsm8k_cot")


def test_groups_from_a_field_reach_the_tests(capsys):
    got = compared(["--logs", "lm-eval", str(LM_EVAL), "--filter", "strict-match", "--group-field",
                    "boolq=doc.passage"], capsys)
    ev = pairperm.read_lm_eval(LM_EVAL, filter="strict-match", group_field={"boolq": "doc.passage"})
    assert "boolq" in ev.groups
    assert got == ev.compare(rng=3)
    (boolq,) = [t for t in got.tasks if t.name == "boolq"]
    assert boolq.n_units < boolq.n_items


def test_trec_runs_named_on_the_command_line(capsys):
    runs = {"lexical": TREC / "bm25.run", "neural": TREC / "dense.run"}
    got = compared(["--logs", "trec", *(f"{k}={v}" for k, v in runs.items()), "--qrels", str(TREC / "qrels.txt"),
                    "--score", "AP"], capsys)
    ev = pairperm.read_trec(None, TREC / "qrels.txt", measure="AP", systems=runs)
    assert got == ev.compare(rng=3) and set(ev.systems) == {"lexical", "neural"}


def test_trec_eval_q_output_by_topic(capsys):
    files = [str(p) for p in sorted(TREC.glob("*.q"))]
    got = compared(["--logs", "trec-eval-q", *files, "--score", "map"], capsys)
    assert got == pairperm.read_trec_eval_q(files, measure="map").compare(rng=3)


def test_translations_with_their_references(capsys):
    got = compared(["--logs", "mt", f"base={MT / 'baseline.txt'}", f"tuned={MT / 'tuned.txt'}", "--refs",
                    str(MT / "ref.txt"), "--score", "chrf", "--n-resamples", "2000"], capsys)
    ev = pairperm.read_mt({"base": MT / "baseline.txt", "tuned": MT / "tuned.txt"}, MT / "ref.txt", metrics=["chrf"])
    assert got == ev.compare(rng=3, n_resamples=2000)
    assert got.task_names == ("chrf",)


def test_helm_suite_with_its_stat(capsys):
    got = compared(["--logs", "helm", str(HELM), "--score", "exact_match"], capsys)
    assert got == pairperm.read_helm(HELM, stat="exact_match").compare(rng=3)


def test_generic_json_lines_with_field_paths_a_filter_and_groups(tmp_path, capsys):
    for name, accs in (("base", [1, 0, 1, 0, 1, 1]), ("tuned", [1, 1, 1, 0, 1, 1])):
        lines = [{"item": {"id": f"q{i}", "passage": i // 2}, "split": "test" if i < 5 else "dev", "score": a}
                 for i, a in enumerate(accs)]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    files = [str(tmp_path / "base.jsonl"), str(tmp_path / "tuned.jsonl")]
    got = compared(["--logs", "jsonl", *files, "--id-field", "item.id", "--score-field", "score", "--where",
                    "split=test", "--group-field", "item.passage"], capsys)
    ev = pairperm.read_jsonl_logs(files, id_field="item.id", score_field="score", where={"split": "test"},
                                  group_field="item.passage")
    assert got == ev.compare(rng=3)
    (task,) = ev.tasks
    assert list(ev.ids[task]) == ["q0", "q1", "q2", "q3", "q4"] and ev.groups[task].tolist() == [0, 0, 1, 1, 2]


@pytest.mark.parametrize(("argv", "message"), [
    (["--logs", "lm-eval", str(LM_EVAL), "--qrels", "q.txt"], "--qrels is for --logs trec"),
    (["--logs", "trec", str(TREC / "bm25.run")], "--logs trec needs --qrels"),
    (["--logs", "mt", str(MT / "tuned.txt")], "--logs mt needs --refs"),
    (["--logs", "helm", str(HELM), "--filter", "x"], "--filter applies to --logs lm-eval"),
    (["--logs", "lm-eval", str(LM_EVAL), "--metric", "sum"], "--metric does not apply"),
    (["--logs", "helm", str(HELM), "--id-field", "x"], "--id-field, --score-field and --system-field are for --logs jsonl"),
    (["--logs", "lm-eval", str(LM_EVAL), str(HELM)], "reads one output folder; got 2 paths"),
    (["--logs", "helm", str(HELM), "--group-field", "civil=input.text"], "TASK=PATH applies to --logs lm-eval"),
    (["--logs", "trec", f"a={TREC / 'bm25.run'}", str(TREC / "dense.run"), "--qrels", str(TREC / "qrels.txt")],
     "name every FILE"),
])
def test_options_that_do_not_apply_are_refused(argv, message, capsys):
    code, _, err = run(["compare", *argv], capsys)
    assert code == 2 and message in err and "Traceback" not in err


def test_read_logs_tells_each_folder_format(tmp_path):
    assert pairperm.read_logs(LM_EVAL, filter="strict-match") == pairperm.read_lm_eval(LM_EVAL, filter="strict-match")
    assert pairperm.read_logs(HELM) == pairperm.read_helm(HELM)
    # Two harnesses' output in one folder: each read, their tasks joined.
    both = tmp_path / "both"
    shutil.copytree(HELM, both / "helm")
    shutil.copytree(LM_EVAL / "EleutherAI__pythia-160m", both / "lm" / "EleutherAI__pythia-160m")
    shutil.copytree(LM_EVAL / "Qwen__Qwen2.5-0.5B-Instruct", both / "lm" / "Qwen__Qwen2.5-0.5B-Instruct")
    for f in (both / "lm").rglob("samples_gsm8k*"):
        f.unlink()
    joined = pairperm.read_logs(both)
    assert set(joined.tasks) == set(pairperm.read_helm(both / "helm").tasks) | {"boolq"}
    with pytest.raises(ValueError, match="holds logs of lm-eval, helm; options are one format's"):
        pairperm.read_logs(both, stat="exact_match")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no log this reads"):
        pairperm.read_logs(tmp_path / "empty")
    with pytest.raises(ValueError, match="format must be 'auto' or one of"):
        pairperm.read_logs(LM_EVAL, format="lm_eval")


def test_read_logs_reads_no_more_than_the_folder_it_is_given(tmp_path):
    model = LM_EVAL / "EleutherAI__pythia-160m"
    assert pairperm.read_logs(model, filter="strict-match").systems == ("EleutherAI__pythia-160m",)
    run = next(HELM.glob("civil_comments*model=openai_gpt2"))
    assert pairperm.read_logs(run).systems == ("openai/gpt2",)
    # Models at two depths are two output folders, not one whose reader would see only some.
    out = tmp_path / "out"
    shutil.copytree(model, out / "EleutherAI__pythia-160m")
    shutil.copytree(LM_EVAL / "Qwen__Qwen2.5-0.5B-Instruct", out / "older" / "Qwen__Qwen2.5-0.5B-Instruct")
    with pytest.raises(ValueError, match="holds lm-eval output in several folders"):
        pairperm.read_logs(out)


def test_an_eval_set_manifest_is_no_log(tmp_path):
    logs = shutil.copytree(LOGS / "inspect" / "logs", tmp_path / "logs")
    # inspect_ai's eval sets write logs.json: each log's header by file name.
    headers = {p.name: {k: v for k, v in json.loads(p.read_text()).items() if k != "samples"}
               for p in logs.glob("*.json")}
    (logs / "logs.json").write_text(json.dumps(headers))
    assert pairperm.read_logs(logs, scorer={"arith": "match"}) == pairperm.read_inspect(LOGS / "inspect" / "logs",
                                                                                         scorer={"arith": "match"})


def test_lighteval_models_without_an_organisation(tmp_path):
    import urllib.parse
    out = tmp_path / "out"
    for f in (LOGS / "lighteval" / "details").rglob("*.parquet"):
        model = f.parent.parent.name  # details/<org>/<model>/<time>: the model's name alone
        dest = out / "details" / model / f.parent.name / urllib.parse.unquote(f.name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(f, dest)
    metric = {"mmlu:abstract_algebra|0": "acc"}
    assert pairperm.read_logs(out, metric=metric) == pairperm.read_lighteval(out, metric=metric)


def test_gzipped_openai_evals_logs_are_told_apart(tmp_path):
    import gzip
    for p in (LOGS / "openai_evals").glob("*.jsonl"):
        (tmp_path / (p.name + ".gz")).write_bytes(gzip.compress(p.read_bytes()))
    assert pairperm.read_logs(tmp_path) == pairperm.read_openai_evals(sorted((LOGS / "openai_evals").glob("*.jsonl")))
