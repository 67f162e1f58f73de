"""OpenAI evals logs read into an Evaluation: each sample's match against the log read straight
with json, the spec naming task and system, and the refusals naming the file and the line."""

import gzip
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")

from pairperm._openai_evals import read_openai_evals  # noqa: E402

LOGS = Path(__file__).parent / "data" / "logs" / "openai_evals"
BAD = LOGS / "bad"


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _truth(path):
    """(eval, completion functions, {sample id: 1 or 0}) of a log, read with json."""
    lines = _lines(path)
    spec = lines[0]["spec"]
    matches = {e["sample_id"]: int(e["data"]["correct"]) for e in lines if e.get("type") == "match"}
    return spec["eval_name"], ",".join(spec["completion_fns"]), matches


def test_every_sample_scores_its_match_aligned_by_sample_id():
    ev = read_openai_evals(LOGS)
    logs = sorted(LOGS.glob("*.jsonl"))
    assert len(logs) == 4
    truths = [_truth(p) for p in logs]
    assert set(ev.tasks) == {t for t, _, _ in truths} == {"test-match.s1.simple-v0", "test-includes.s1.simple-v0"}
    assert set(ev.systems) == {"gpt-3.5-turbo", "gpt-4o-mini"}
    for task, system, matches in truths:
        assert sorted(ev.ids[task].tolist()) == sorted(matches)
        assert ev.scores[task][system].tolist() == [matches[i] for i in ev.ids[task].tolist()]
        assert ev.scores[task][system].dtype == np.int64
        assert ev.metrics[task] == "accuracy"
    # The logs' own accuracy agrees.
    for path in logs:
        task, system, _ = _truth(path)
        report = next(line["final_report"] for line in _lines(path) if "final_report" in line)
        assert ev.scores[task][system].mean() == pytest.approx(report["accuracy"])


def test_the_final_report_may_come_before_or_among_the_events():
    where = {p.name: next(k for k, line in enumerate(_lines(p)) if "final_report" in line) for p in LOGS.glob("*.jsonl")}
    assert 1 in where.values() and any(k > 1 for k in where.values())  # both layouts are in the fixtures
    for name in where:
        task, system, matches = _truth(LOGS / name)
        ev = read_openai_evals(LOGS / name)
        assert dict(zip(ev.ids[task].tolist(), ev.scores[task][system].tolist())) == matches


def test_systems_name_the_logs_and_gzip_logs_read_as_they_are(tmp_path):
    a, b = sorted(LOGS.glob("*test-match.jsonl"))
    zipped = tmp_path / (b.name + ".gz")
    zipped.write_bytes(gzip.compress(b.read_bytes()))
    ev = read_openai_evals(None, systems={"first": a, "second": zipped})
    assert ev.systems == ("first", "second")
    task, _, matches = _truth(b)
    assert dict(zip(ev.ids[task].tolist(), ev.scores[task]["second"].tolist())) == matches
    with pytest.raises(ValueError, match="not both"):
        read_openai_evals(a, systems={"first": a})


def test_two_runs_of_one_eval_by_one_system_are_refused_naming_both(tmp_path):
    src = next(LOGS.glob("*gpt-4o-mini_test-match.jsonl"))
    shutil.copy(src, tmp_path / src.name)
    shutil.copy(src, tmp_path / ("again_" + src.name))
    with pytest.raises(ValueError, match=r"are both runs of eval 'test-match.s1.simple-v0' by 'gpt-4o-mini'"):
        read_openai_evals(tmp_path)


@pytest.mark.parametrize("name, line, message, at_fault", [
    ("two_matches", 12, r"a second match event for sample 'test-includes.s1.2' \(the first at line 5\)",
     lambda e: e["type"] == "match" and e["sample_id"] == "test-includes.s1.2"),
    ("correct_not_bool", 6, r"the match event of sample 'test-includes.s1.2' has no boolean data.correct \(got 1\)",
     lambda e: e["type"] == "match" and e["data"]["correct"] == 1),
    ("other_run", 8, r"an event of run '250304999999ZZZZZZZZ' in the log of run",
     lambda e: e["run_id"] == "250304999999ZZZZZZZZ"),
    ("no_spec", 1, r"not an OpenAI evals log", lambda e: "spec" not in e),
    ("sample_without_match", 7, r"sample 'test-includes.s1.4' has events but no match event",
     lambda e: e["sample_id"] == "test-includes.s1.4"),
    ("modelgraded", None, r"no match events \(event types: sampling, metrics\)", None),
])
def test_broken_logs_are_refused_naming_the_file_and_line(name, line, message, at_fault):
    path = BAD / f"{name}.jsonl"
    if line is not None:
        assert at_fault(_lines(path)[line - 1])  # the line named is the one at fault
    where = re.escape(str(path)) + (f":{line}" if line is not None else "")
    with pytest.raises(ValueError, match=f"read_openai_evals: {where}: {message}"):
        read_openai_evals(path)


def test_a_sample_one_system_lacks_is_refused_by_the_alignment(tmp_path):
    a, b = sorted(LOGS.glob("*test-includes.jsonl"))
    kept = [line for line in b.read_text().splitlines() if '"test-includes.s1.3"' not in line]
    short = tmp_path / b.name
    short.write_text("\n".join(kept) + "\n")
    system = _truth(b)[1]
    with pytest.raises(ValueError, match=rf"system '{system}' \({re.escape(str(short))}\) has no score for item "
                                         r"'test-includes.s1.3'"):
        read_openai_evals([a, short])


def test_lines_that_are_not_json_objects_are_named(tmp_path):
    src = next(LOGS.glob("*gpt-4o-mini_test-match.jsonl"))
    lines = src.read_text().splitlines()
    lines[3] = lines[3][:40]
    cut = tmp_path / src.name
    cut.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=rf"read_openai_evals: {re.escape(str(cut))}:4: not JSON"):
        read_openai_evals(cut)
