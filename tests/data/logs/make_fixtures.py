"""Writes the log fixtures of test_inspect_logs.py, test_openai_evals.py and test_lighteval.py.

Each fixture is laid out field for field as the tool writes it (the same file names, keys,
nesting and types), with a handful of samples, two systems and two or three tasks:

- inspect/logs/: inspect_ai logs, ``<time>_<task>_<task id>.json`` (the whole EvalLog, indented as
  inspect_ai writes it) and ``.eval`` (a zip of ``_journal/start.json``, ``samples/<id>_epoch_
  <n>.json``, ``_journal/summaries/1.json``, ``summaries.json``, ``reductions.json`` and
  ``header.json``; Zstandard-compressed as inspect_ai writes them since 2026, or deflated as
  it did before). inspect/bad/ holds a failed run, a run with a failed sample and a run that
  had not finished.
- openai_evals/: ``oaieval`` logs (``<run_id>_<completion_fn>_<eval>.jsonl``): the run spec, the
  final report and the events (sampling and match per sample, in the order threads recorded
  them). openai_evals/bad/ holds logs each broken in one way.
- lighteval/: an output folder, ``details/<org>/<model>/<timestamp>/details_<task>_<timestamp>
  .parquet``, as lighteval >= 0.11 writes it (columns doc, metric, model_response), and
  lighteval/legacy/ as lighteval 0.10 wrote it (flat columns, no example id). lighteval's task
  names hold '|' and ':' (``gsm8k|0``), which Windows does not allow in file names, so the
  committed names write them as %7C and %3A; the tests lay the files out again under their
  real names.

Run from anywhere: ``python tests/data/logs/make_fixtures.py``. Needs pyarrow, and before
Python 3.14 the zstandard package for the Zstandard .eval logs. The output is the same at
every run (fixed times and ids).
"""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
ZIP_ZSTANDARD = 93
ZIP_TIME = (2025, 3, 4, 10, 15, 22)


# ---------------------------------------------------------------- inspect_ai

MODEL_A = "openai/gpt-4o-mini"
MODEL_B = "anthropic/claude-3-5-haiku-latest"

# task -> (samples: (id, input, target, metadata), epochs, scorers)
ARITH = [(1, "What is 17 + 25?", "42", {}), (2, "What is 9 * 8?", "72", {}),
         ("q-3", "What is 144 / 12?", "12", {}), (4, "What is 3 ** 4?", "81", {})]
# The answers of each model, by sample and epoch; match is C when the answer is the target, includes
# when it holds it.
ARITH_ANSWERS = {
    MODEL_A: {1: ["42", "42"], 2: ["72", "The answer is 72"], "q-3": ["12", "12"], 4: ["64", "81"]},
    MODEL_B: {1: ["42", "41"], 2: ["72", "72"], "q-3": ["The answer is 12", "12"], 4: ["81", "81"]},
}
ESSAYS = [("e1", "Summarise the passage on tides.", "Tides follow the moon.", {"passage": "p1"}),
          ("e2", "Give the passage's main claim.", "The moon drives tides.", {"passage": "p1"}),
          ("e3", "Summarise the passage on bees.", "Bees pollinate crops.", {"passage": "p2"}),
          ("e4", "Name the insect the passage is about.", "Bees.", {"passage": "p2"})]
ESSAY_GRADES = {MODEL_A: ["C", "P", "I", "C"], MODEL_B: ["P", "P", "C", "I"]}
NER = [(1, "Ada Lovelace met Charles Babbage in London.", "PER PER LOC", {}),
       (2, "Paris is in France.", "LOC LOC", {}),
       (3, "Alan Turing worked at Bletchley Park for GCHQ.", "PER LOC ORG", {}),
       (4, "The Danube flows through Vienna.", "LOC LOC", {})]
NER_COUNTS = {MODEL_A: [(2, 1, 0), (1, 0, 1), (3, 0, 0), (0, 1, 2)],
              MODEL_B: [(1, 1, 1), (2, 0, 0), (2, 1, 1), (1, 0, 1)]}


def _uid(*parts: Any) -> str:
    """A 22-character id, as inspect_ai's shortuuid ids look, fixed by its parts."""
    rng = random.Random("/".join(map(str, parts)))
    return "".join(rng.choice("23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz") for _ in range(22))


def _time(second: int, fraction: bool = True) -> str:
    micro = f".{123456 + second:06d}" if fraction else ""
    return f"2025-03-04T10:{15 + second // 60:02d}:{second % 60:02d}{micro}+00:00"


def _score(value: Any, answer: str, explanation: str) -> dict[str, Any]:
    return {"value": value, "answer": answer, "explanation": explanation, "history": []}


def _sample(task: str, model: str, sid: Any, epoch: int, text: str, target: str, metadata: dict[str, Any],
            answer: str, scores: dict[str, dict[str, Any]], second: int) -> dict[str, Any]:
    """An EvalSample as inspect_ai logs it."""
    short = model.split("/")[1]
    user = {"id": _uid(task, model, sid, epoch, "user"), "content": text, "source": "input", "role": "user"}
    assistant = {"id": _uid(task, model, sid, epoch, "assistant"), "content": answer, "source": "generate",
                 "role": "assistant", "model": short}
    usage = {"input_tokens": 12 + len(text) // 4, "output_tokens": 1 + len(answer) // 4}
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    span = _uid(task, model, sid, epoch, "span")
    events: list[dict[str, Any]] = [
        {"uuid": _uid(task, model, sid, epoch, "model"), "span_id": span, "timestamp": _time(second),
         "working_start": 0.01, "event": "model", "model": model, "input": [], "input_refs": [[0, 1]], "tools": [],
         "tool_choice": "none", "config": {},
         "output": {"model": short, "choices": [{"message": assistant, "stop_reason": "stop"}], "completion": answer,
                    "usage": usage, "time": 0.41}},
    ]
    for name, score in scores.items():
        events.append({"uuid": _uid(task, model, sid, epoch, name), "span_id": span, "timestamp": _time(second + 1),
                       "working_start": 0.43, "event": "score", "score": score, "target": target,
                       "intermediate": False, "scorer": name, "scorer_args": {}})
    return {
        "id": sid, "epoch": epoch, "input": text, "target": target, "messages": [user, assistant],
        "output": {"model": short, "choices": [{"message": assistant, "stop_reason": "stop"}], "completion": answer,
                   "usage": usage, "time": 0.41},
        "scores": scores, "metadata": metadata, "store": {}, "events": events,
        "model_usage": {model: usage}, "role_usage": {}, "started_at": _time(second), "completed_at": _time(second + 1),
        "total_time": 0.452, "working_time": 0.447, "uuid": _uid(task, model, sid, epoch, "uuid"), "error_retries": [],
        "attachments": {}, "events_data": {"messages": [user], "calls": []}, "turn_count": 1,
    }


def _summary(sample: dict[str, Any]) -> dict[str, Any]:
    """The EvalSampleSummary of a sample (summaries.json)."""
    keep = ("id", "epoch", "input", "target", "metadata", "scores", "model_usage", "role_usage", "started_at",
            "completed_at", "total_time", "working_time", "uuid")
    out = {k: sample[k] for k in keep}
    out.update(retries=0, completed=True, message_count=len(sample["messages"]), turn_count=sample["turn_count"])
    if sample.get("error"):
        out["error"] = sample["error"]["message"]
    return out


def _as_float(value: Any) -> float:
    return {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}[value] if isinstance(value, str) else float(value)


def _reductions(samples: list[dict[str, Any]], scorers: list[str]) -> list[dict[str, Any]]:
    """Each scorer's per-sample score, its epochs reduced by their mean (inspect_ai's default)."""
    out = []
    for name in scorers:
        by_id: dict[Any, list[dict[str, Any]]] = {}
        for s in samples:
            if s.get("scores") and name in s["scores"]:
                by_id.setdefault(s["id"], []).append(s["scores"][name])
        reduced = []
        for sid, scores in by_id.items():
            value = scores[0]["value"]
            if isinstance(value, dict):
                value = {k: sum(sc["value"][k] for sc in scores) / len(scores) for k in value}
            else:
                value = sum(_as_float(sc["value"]) for sc in scores) / len(scores)
            reduced.append({**scores[0], "value": value, "sample_id": sid})
        out.append({"scorer": name, "samples": reduced})
    return out


def _results(reductions: list[dict[str, Any]], total: int, metrics: dict[str, str]) -> dict[str, Any]:
    scores = []
    for red in reductions:
        values = [v["value"] for v in red["samples"]]
        metric = metrics[red["scorer"]]
        entry: dict[str, Any] = {"name": red["scorer"], "scorer": red["scorer"], "scored_samples": len(values),
                                 "unscored_samples": 0, "params": {}, "metrics": {}}
        if isinstance(values[0], dict):
            for k in values[0]:
                mean = sum(v[k] for v in values) / len(values)
                entry["metrics"][f"{k}_mean"] = {"name": "mean", "value": mean, "params": {}}
        else:
            mean = sum(values) / len(values)
            var = sum((v - mean) ** 2 for v in values) / max(len(values) - 1, 1)
            entry["metrics"][metric] = {"name": metric, "value": mean, "params": {}}
            entry["metrics"]["stderr"] = {"name": "stderr", "value": (var / len(values)) ** 0.5, "params": {}}
        scores.append(entry)
    return {"total_samples": total, "completed_samples": total, "scores": scores,
            "headline": {"scorer": scores[0]["scorer"], "score": scores[0]["name"],
                         "metric": next(iter(scores[0]["metrics"]))}}


def _eval_spec(task: str, model: str, run: str, samples: list[tuple[Any, ...]], epochs: int,
               scorers: dict[str, str]) -> dict[str, Any]:
    return {
        "eval_id": _uid(task, model, run, "eval"), "run_id": _uid(run), "created": _time(0, fraction=False),
        "task": task, "task_id": _uid(task, model, run, "task"), "task_version": 0, "task_file": f"{task}.py",
        "task_display_name": task, "task_registry_name": task, "task_attribs": {}, "task_args": {},
        "task_args_passed": {},
        "dataset": {"name": task, "location": f"{task}.jsonl", "samples": len(samples),
                    "sample_ids": [s[0] for s in samples], "shuffled": False},
        "model": model, "model_generate_config": {}, "model_args": {},
        "config": {"epochs": epochs, "fail_on_error": True, "continue_on_fail": False, "score_on_error": False,
                   "sandbox_cleanup": True, "sandbox_prebuilt": False, "log_samples": True, "log_realtime": True,
                   "log_images": True, "score_display": True},
        "packages": {"inspect_ai": "0.3.180"},
        "scorers": [{"name": n, "options": {}, "metrics": [{"name": f"inspect_ai/{m}", "options": {}},
                                                          {"name": "inspect_ai/stderr", "options": {}}],
                     "metadata": {}} for n, m in scorers.items()],
    }


def _header(spec: dict[str, Any], status: str, samples: list[dict[str, Any]], scorers: dict[str, str],
            error: Any = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The log without its samples (header.json), and the reductions."""
    reductions = _reductions(samples, list(scorers)) if status == "success" else []
    usage: dict[str, int] = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    for s in samples:
        for k in usage:
            usage[k] += s["model_usage"][spec["model"]][k] if s["model_usage"] else 0
    header: dict[str, Any] = {
        "version": 2, "status": status, "eval": spec,
        "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {"tool_calls": "loop"}, "params_passed": {}}],
                 "config": {}},
    }
    if status == "success":
        header["results"] = _results(reductions, len(samples), scorers)
    header["stats"] = {"started_at": _time(0, fraction=False), "completed_at": _time(30, fraction=False),
                       "model_usage": {spec["model"]: usage}, "role_usage": {}, "connection_limit_history": []}
    if error is not None:
        header["error"] = error
    header.update(invalidated=False, tags=[], metadata={})
    return header, reductions


def _inspect_samples(task: str, model: str) -> tuple[list[tuple[Any, ...]], int, dict[str, str], list[dict[str, Any]]]:
    """A task's samples as a model's run logs them, with the task's epochs and scorers."""
    out = []
    if task == "arith":
        for k, (sid, text, target, meta) in enumerate(ARITH):
            for epoch in (1, 2):
                answer = ARITH_ANSWERS[model][sid][epoch - 1]
                scores = {"match": _score("C" if answer == target else "I", answer, answer),
                          "includes": _score("C" if target in answer else "I", answer, answer)}
                out.append(_sample(task, model, sid, epoch, text, target, meta, answer, scores, 2 * k + epoch))
        return ARITH, 2, {"match": "accuracy", "includes": "accuracy"}, out
    if task == "essay_quality":
        for k, (sid, text, target, meta) in enumerate(ESSAYS):
            grade = ESSAY_GRADES[model][k]
            answer = f"{target} (graded {grade})"
            scores = {"model_graded_qa": _score(grade, answer, f"GRADE: {grade}")}
            out.append(_sample(task, model, sid, 1, text, target, meta, answer, scores, k))
        return ESSAYS, 1, {"model_graded_qa": "accuracy"}, out
    for k, (sid, text, target, meta) in enumerate(NER):
        tp, fp, fn = NER_COUNTS[model][k]
        answer = " ".join(target.split()[:tp] + ["MISC"] * fp)
        scores = {"entity_f1": {"value": {"tp": tp, "fp": fp, "fn": fn}, "answer": answer, "history": []}}
        out.append(_sample(task, model, sid, 1, text, target, meta, answer, scores, k))
    return NER, 1, {"entity_f1": "mean"}, out


def _zip_writer(compression: int) -> Any:
    """A ZipFile opener writing entries with `compression`: Zstandard through Python's zipfile
    from 3.14, else through the zstandard package plugged into zipfile's compressor hook."""
    if compression == ZIP_ZSTANDARD and getattr(zipfile, "ZIP_ZSTANDARD", None) != ZIP_ZSTANDARD:
        import zstandard

        plain_compressor = zipfile._get_compressor  # type: ignore[attr-defined]
        plain_check = zipfile._check_compression  # type: ignore[attr-defined]

        def compressor(compress_type: int, compresslevel: Any = None) -> Any:
            if compress_type == ZIP_ZSTANDARD:
                return zstandard.ZstdCompressor(level=3).compressobj()
            return plain_compressor(compress_type, compresslevel)

        def check(compression: int) -> None:
            if compression != ZIP_ZSTANDARD:
                plain_check(compression)

        zipfile._get_compressor = compressor  # type: ignore[attr-defined]
        zipfile._check_compression = check  # type: ignore[attr-defined]
        zipfile.compressor_names[ZIP_ZSTANDARD] = "zstd"  # type: ignore[attr-defined]
    return compression


def _write_zip(path: Path, entries: list[tuple[str, Any]], compression: int) -> None:
    _zip_writer(compression)
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = compression
            info.external_attr = 0o644 << 16
            archive.writestr(info, json.dumps(content, separators=(",", ":"), ensure_ascii=False))


def write_eval(path: Path, header: dict[str, Any], samples: list[dict[str, Any]], reductions: list[dict[str, Any]],
               compression: int, finished: bool = True) -> None:
    """A .eval log: the journal's start, the samples in the order they finished, the summaries
    and, once the run has finished, the reductions and the header."""
    start = {"version": header["version"], "eval": header["eval"], "plan": header["plan"]}
    entries: list[tuple[str, Any]] = [("_journal/start.json", start)]
    entries += [(f"samples/{s['id']}_epoch_{s['epoch']}.json", s) for s in samples]
    summaries = [_summary(s) for s in samples]
    entries.append(("_journal/summaries/1.json", summaries))
    if finished:
        entries += [("summaries.json", summaries), ("reductions.json", reductions), ("header.json", header)]
    _write_zip(path, entries, compression)


def write_json(path: Path, header: dict[str, Any], samples: list[dict[str, Any]], reductions: list[dict[str, Any]]) -> None:
    """A .json log: the whole EvalLog, indented by two spaces as inspect_ai writes it."""
    log = dict(header)
    log["samples"] = samples
    if reductions:
        log["reductions"] = reductions
    path.write_text(json.dumps(log, indent=2, ensure_ascii=False) + "\n")


def _log_name(second: int, task: str, model: str, suffix: str) -> str:
    return f"2025-03-04T10-{15 + second // 60:02d}-{second % 60:02d}+00-00_{task}_{_uid(task, model, 'task')}{suffix}"


def make_inspect(root: Path) -> None:
    (root / "logs").mkdir(parents=True, exist_ok=True)
    # (task, model, format, compression) of every log
    layout = [("arith", MODEL_A, ".eval", ZIP_ZSTANDARD), ("arith", MODEL_B, ".json", None),
              ("essay_quality", MODEL_A, ".json", None), ("essay_quality", MODEL_B, ".eval", zipfile.ZIP_DEFLATED),
              ("ner", MODEL_A, ".eval", zipfile.ZIP_DEFLATED), ("ner", MODEL_B, ".json", None)]
    for k, (task, model, suffix, compression) in enumerate(layout):
        samples_spec, epochs, scorers, samples = _inspect_samples(task, model)
        spec = _eval_spec(task, model, f"run-{model}", samples_spec, epochs, scorers)
        header, reductions = _header(spec, "success", samples, scorers)
        path = root / "logs" / _log_name(7 * k, task, model, suffix)
        if suffix == ".eval":
            write_eval(path, header, samples, reductions, compression)
        else:
            write_json(path, header, samples, reductions)
    make_inspect_bad(root / "bad")


def make_inspect_bad(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    # A run that failed: status "error" with the run's error, the samples it finished.
    samples_spec, epochs, scorers, samples = _inspect_samples("arith", MODEL_A)
    spec = _eval_spec("arith", MODEL_A, "failed", samples_spec, epochs, scorers)
    error = {"message": "RateLimitError('Error code: 429')", "traceback": "Traceback (most recent call last):\n  ...\n",
             "traceback_ansi": "Traceback (most recent call last):\n  ...\n"}
    header, _ = _header(spec, "error", samples[:3], scorers, error)
    write_json(root / _log_name(40, "arith", MODEL_A, ".json"), header, samples[:3], [])
    # A run that went on past a failed sample (fail_on_error=False): status "success", and the
    # sample holds its error and no scores.
    samples_spec, epochs, scorers, samples = _inspect_samples("ner", MODEL_B)
    failed = samples[2]
    failed["error"] = {"message": "RuntimeError('tokenizer crashed')",
                       "traceback": "Traceback (most recent call last):\n  ...\n",
                       "traceback_ansi": "Traceback (most recent call last):\n  ...\n"}
    failed["scores"] = {}
    spec = _eval_spec("ner", MODEL_B, "flaky", samples_spec, epochs, scorers)
    spec["config"]["fail_on_error"] = False
    header, reductions = _header(spec, "success", samples, scorers)
    write_json(root / _log_name(45, "ner", MODEL_B, ".json"), header, samples, reductions)
    # A run still going (or killed): the journal and some samples, no header.json.
    samples_spec, epochs, scorers, samples = _inspect_samples("essay_quality", MODEL_A)
    spec = _eval_spec("essay_quality", MODEL_A, "running", samples_spec, epochs, scorers)
    header, _ = _header(spec, "started", samples[:2], scorers)
    write_eval(root / _log_name(50, "essay_quality", MODEL_A, ".eval"), header, samples[:2], [], zipfile.ZIP_DEFLATED,
               finished=False)


# ---------------------------------------------------------------- OpenAI evals

MATCH_SAMPLES = [("Once upon a ", "time"), ("The first US president was ", "George Washington"),
                 ("OpenAI was founded in 20", "15")]
INCLUDES_SAMPLES = [("What is the capital of France?", ["Paris"]), ("What is the capital of Japan?", ["Tokyo"]),
                    ("What is the capital of Kenya?", ["Nairobi"]), ("What is the capital of Peru?", ["Lima"]),
                    ("What is the capital of Canada?", ["Ottawa"])]
EVALS_ANSWERS = {
    ("test-match.s1.simple-v0", "gpt-3.5-turbo"): ["time", "George Washington", "16"],
    ("test-match.s1.simple-v0", "gpt-4o-mini"): ["time", "George Washington.", "15"],
    ("test-includes.s1.simple-v0", "gpt-3.5-turbo"): ["Paris", "It is Tokyo.", "Mombasa", "Lima", "Toronto"],
    ("test-includes.s1.simple-v0", "gpt-4o-mini"): ["Paris.", "Tokyo", "Nairobi", "Cusco", "Ottawa"],
}
EVALS_SYSTEM = "Complete the phrase as concisely as possible."


def _evals_run_id(eval_name: str, fn: str) -> str:
    rng = random.Random(f"{eval_name}/{fn}")
    return "250304101522" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(8))


def _evals_lines(eval_name: str, fn: str) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """The spec, the final report and the events of one oaieval run, the samples finishing in an
    order of their own (the eval's threads)."""
    base, split = eval_name.split(".")[:2]
    run_id = _evals_run_id(eval_name, fn)
    is_match = base == "test-match"
    cls = "evals.elsuite.test.match:TestMatch" if is_match else "evals.elsuite.basic.includes:Includes"
    args = {} if is_match else {"samples_jsonl": "test_includes/samples.jsonl"}
    spec = {"completion_fns": [fn], "eval_name": eval_name, "base_eval": base, "split": split,
            "run_config": {"completion_fns": [fn],
                           "eval_spec": {"cls": cls, "registry_path": "/home/user/evals/evals/registry", "args": args,
                                         "key": eval_name, "group": "test-basic"},
                           "seed": 20220722, "max_samples": None,
                           "command": f"/home/user/.venv/bin/oaieval {fn} {base}",
                           "initial_settings": {"visible": True}},
            "created_by": "", "run_id": run_id, "created_at": "2025-03-04 10:15:22.482913"}
    samples = MATCH_SAMPLES if is_match else INCLUDES_SAMPLES
    order = list(range(len(samples)))
    random.Random(run_id).shuffle(order)
    events: list[dict[str, Any]] = []
    correct = 0
    for second, idx in enumerate(order):
        text, ideal = samples[idx]
        answer = EVALS_ANSWERS[eval_name, fn][idx]
        if is_match:
            prompt: Any = [{"role": "system", "content": EVALS_SYSTEM}, {"role": "user", "content": text}]
            expected = [ideal]
            picked = ideal if answer.startswith(ideal) else None
            ok = picked is not None
            data = {"correct": ok, "expected": ideal, "picked": picked, "sampled": answer, "options": expected}
        else:
            prompt = [{"role": "user", "content": text}]
            ok = any(i.lower() in answer.lower() for i in ideal)
            data = {"correct": ok, "expected": ideal[0], "picked": answer, "sampled": answer}
        correct += ok
        sample_id = f"{base}.{split}.{idx}"
        when = f"2025-03-04 10:15:{23 + second:02d}.{100000 + 7919 * second:06d}+00:00"
        usage = {"completion_tokens": 1 + len(answer) // 4, "prompt_tokens": 20 + len(text) // 4,
                 "total_tokens": 21 + len(answer) // 4 + len(text) // 4,
                 "completion_tokens_details": None, "prompt_tokens_details": None}
        events.append({"run_id": run_id, "event_id": len(events), "sample_id": sample_id, "type": "sampling",
                       "data": {"prompt": prompt, "sampled": [answer], "model": f"{fn}-0125", "usage": usage},
                       "created_by": "", "created_at": when})
        events.append({"run_id": run_id, "event_id": len(events), "sample_id": sample_id, "type": "match",
                       "data": data, "created_by": "", "created_at": when})
    report = {"final_report": {"accuracy": correct / len(samples), "boostrap_std": 0.21}, "run_id": run_id}
    return {"spec": spec}, report, events


def _jsonl(path: Path, lines: list[dict[str, Any]]) -> None:
    # Python's json with its default separators and ensure_ascii=False, as evals' jsondumps writes.
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


def make_openai_evals(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for k, (eval_name, fn) in enumerate(EVALS_ANSWERS):
        spec, report, events = _evals_lines(eval_name, fn)
        # A short run writes its report before its events (flushed at exit); a long one flushes
        # events as it goes, the report landing among them.
        lines = [spec, report, *events] if k % 2 == 0 else [spec, *events[:4], report, *events[4:]]
        _jsonl(root / f"{spec['spec']['run_id']}_{fn}_{eval_name.split('.')[0]}.jsonl", lines)
    bad = root / "bad"
    bad.mkdir(exist_ok=True)
    spec, report, events = _evals_lines("test-includes.s1.simple-v0", "gpt-4o-mini")
    again = dict(events[3], event_id=len(events))
    _jsonl(bad / "two_matches.jsonl", [spec, *events, again, report])
    not_bool = [dict(e, data=dict(e["data"], correct=1)) if e["type"] == "match" and e["sample_id"].endswith(".2")
                else e for e in events]
    _jsonl(bad / "correct_not_bool.jsonl", [spec, report, *not_bool])
    other = [dict(e, run_id="250304999999ZZZZZZZZ") if e["event_id"] == 5 else e for e in events]
    _jsonl(bad / "other_run.jsonl", [spec, report, *other])
    _jsonl(bad / "no_spec.jsonl", [*events, report])
    no_match = [e for e in events if not (e["type"] == "match" and e["sample_id"].endswith(".4"))]
    _jsonl(bad / "sample_without_match.jsonl", [spec, report, *no_match])
    graded = [dict(e, type="metrics", data={"choice": "Y", "score": 1.0}) if e["type"] == "match" else e for e in events]
    _jsonl(bad / "modelgraded.jsonl", [spec, report, *graded])


# ---------------------------------------------------------------- lighteval

LIGHTEVAL_TS = "2025-03-04T10-15-22.123456"
SMOL = "HuggingFaceTB/SmolLM2-135M-Instruct"
QWEN = "Qwen/Qwen2.5-0.5B-Instruct"
GSM8K = [("Natalia sold 48 clips in April and half as many in May. How many clips did she sell?", "72"),
         ("Weng earns $12 an hour. How much did she earn for 50 minutes of babysitting?", "10"),
         ("Betty needs $100 and has half of it. Her parents give $15, her grandparents twice that. How much more "
          "does she need?", "5"),
         ("James writes a 3-page letter to 2 friends twice a week. How many pages does he write a year?", "624")]
GSM8K_ANSWERS = {SMOL: ["72", "12", "5", "312"], QWEN: ["72", "10", "20", "624"]}
MMLU = [("Find the degree of the field extension Q(sqrt(2)) over Q.", ["0", "2", "1", "3"], 1),
        ("Let p = (1, 2, 5, 4)(2, 3) in S_5. Find the index of <p> in S_5.", ["8", "2", "24", "120"], 2),
        ("Find all zeros of x^5 + 3x^3 + x^2 + 2x in Z_5.", ["0", "1", "0,1", "0,4"], 3)]
# The choice each model's log-probabilities pick (acc), and after length normalisation (acc_norm).
MMLU_PICKS = {SMOL: ([1, 0, 3], [1, 2, 3]), QWEN: ([1, 2, 0], [0, 2, 3])}


def _doc(query: str, choices: list[str], gold: int, ix: int, task: str, method: str,
         generation_size: Any = None, stop: Any = None) -> dict[str, Any]:
    """A Doc as dataclasses.asdict gives it (lighteval >= 0.11)."""
    return {"query": query, "choices": choices, "gold_index": gold, "instruction": "", "images": None, "specific": None,
            "unconditioned_query": None, "original_query": None, "id": str(ix), "task_name": task,
            "fewshot_samples": [], "sampling_methods": [method], "fewshot_sorting_class": None,
            "generation_size": generation_size, "stop_sequences": stop, "use_logits": False, "num_samples": 1,
            "generation_grammar": None}


def _response(prompt: str, text: list[str], logprobs: list[float], eq_gold: list[bool], ix: int) -> dict[str, Any]:
    """A ModelResponse as dataclasses.asdict gives it."""
    tokens = [100 + (7 * ix + k) % 50 for k in range(6)]
    return {"input": prompt, "input_tokens": tokens, "text": text,
            "output_tokens": [[200 + k] for k in range(max(len(text), len(logprobs)))],
            "text_post_processed": None, "reasonings": [None] * len(text), "logprobs": logprobs,
            "argmax_logits_eq_gold": eq_gold, "logits": None, "unconditioned_logprobs": None,
            "truncated_tokens_count": 0, "padded_tokens_count": 0}


def _lighteval_rows(model: str, task: str) -> list[dict[str, Any]]:
    rows = []
    if task == "gsm8k|0":
        for ix, (question, answer) in enumerate(GSM8K):
            said = GSM8K_ANSWERS[model][ix]
            query = f"Question: {question}\nAnswer:"
            rows.append({"doc": _doc(query, [f" {answer}"], 0, ix, task, "GENERATIVE", 256, ["Question:"]),
                         "metric": {"extractive_match": 1.0 if said == answer else 0.0},
                         "model_response": _response(query, [f"The answer is {said}."], [], [], ix)})
        return rows
    acc, acc_norm = MMLU_PICKS[model]
    for ix, (question, choices, gold) in enumerate(MMLU):
        query = f"{question}\nA. {choices[0]}\nB. {choices[1]}\nC. {choices[2]}\nD. {choices[3]}\nAnswer:"
        logprobs = [-1.0 - 0.5 * abs(k - acc[ix]) for k in range(4)]
        rows.append({"doc": _doc(query, [" A", " B", " C", " D"], gold, ix, task, "LOGPROBS"),
                     "metric": {"acc": int(acc[ix] == gold), "acc_norm": int(acc_norm[ix] == gold)},
                     "model_response": _response(query, [], logprobs, [k == gold for k in range(4)], ix)})
    return rows


def _portable(name: str) -> str:
    """A file name as committed: the '|' and ':' of lighteval's task names written %7C and %3A."""
    return name.replace("%", "%25").replace("|", "%7C").replace(":", "%3A")


def _hf_metadata(table: pa.Table) -> dict[bytes, bytes]:
    """The schema metadata datasets writes: the features, a Value per leaf and a List per list."""
    def feature(t: pa.DataType) -> Any:
        if pa.types.is_struct(t):
            return {t.field(i).name: feature(t.field(i).type) for i in range(t.num_fields)}
        if pa.types.is_list(t):
            return {"feature": feature(t.value_type), "_type": "List"}
        name = {"double": "float64", "null": "null", "string": "string", "int64": "int64", "bool": "bool"}[str(t)]
        return {"dtype": name, "_type": "Value"}
    features = {f.name: feature(f.type) for f in table.schema}
    return {b"huggingface": json.dumps({"info": {"features": features}}).encode()}


def write_details(path: Path, rows: list[dict[str, Any]]) -> None:
    """A details file as datasets' to_parquet writes it: columns in sorted order, their types
    inferred from the rows."""
    table = pa.Table.from_pylist(rows)
    table = table.select(sorted(table.column_names))
    table = table.replace_schema_metadata(_hf_metadata(table))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def make_lighteval(root: Path) -> None:
    for model in (SMOL, QWEN):
        for task in ("gsm8k|0", "mmlu:abstract_algebra|0"):
            folder = root / "details" / model / LIGHTEVAL_TS
            write_details(folder / _portable(f"details_{task}_{LIGHTEVAL_TS}.parquet"), _lighteval_rows(model, task))
    make_lighteval_legacy(root / "legacy")


ARC = [("George wants to warm his hands quickly by rubbing them. Which skin surface will produce the most heat?",
        ["dry palms", "wet palms", "palms covered with oil", "palms covered with lotion"], 0),
       ("Which of the following statements best explains why magnets usually stick to a refrigerator door?",
        ["The door is made of wood.", "The door contains iron.", "The door is painted.", "The door is cold."], 1),
       ("A fold observed in layers of sedimentary rock most likely resulted from the", ["cooling of lava",
        "erosion by wind", "converging of crustal plates", "deposition of river sediments"], 2)]
ARC_PICKS = {"meta-llama/Llama-3.2-1B": ([0, 1, 0], [0, 1, 2]), "google/gemma-2-2b": ([1, 1, 2], [1, 1, 2])}


def make_lighteval_legacy(root: Path) -> None:
    """Details as lighteval 0.10 wrote them: one flat row per example (its Detail dataclass:
    example, full_prompt, predictions, ..., metrics), no example id."""
    task = "leaderboard|arc:challenge|25"
    ts = "2025-03-01T08-00-00.000001"
    for model, (acc, acc_norm) in ARC_PICKS.items():
        rows = []
        for ix, (question, choices, gold) in enumerate(ARC):
            query = f"Question: {question}\nAnswer:"
            rows.append({"example": query, "instruction": "", "full_prompt": f"<25 shots>\n\n{query}",
                         "num_effective_few_shots": 25, "num_asked_few_shots": 25,
                         # (log-probability, is greedy) per choice: arrow holds the boolean as 1.0/0.0
                         "predictions": [[-1.0 - 0.5 * abs(k - acc[ix]), k == acc[ix]] for k in range(4)],
                         "prediction_logits": [], "input_tokens": [[11, 12 + ix]] * 4, "cont_tokens": [[20 + k]
                                                                                              for k in range(4)],
                         "truncated": [0] * 4, "padded": [0] * 4, "gold": [], "pred_logits": [],
                         "choices": [f" {c}" for c in choices], "gold_index": [gold],
                         "metrics": {"acc": float(acc[ix] == gold), "acc_norm": float(acc_norm[ix] == gold)},
                         "specifics": {"id": f"Mercury_{7000 + ix}"}})
        write_details(root / "details" / model / ts / _portable(f"details_{task}_{ts}.parquet"), rows)


if __name__ == "__main__":
    make_inspect(HERE / "inspect")
    make_openai_evals(HERE / "openai_evals")
    make_lighteval(HERE / "lighteval")
