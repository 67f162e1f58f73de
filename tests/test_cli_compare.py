"""`pairperm compare FILE...`: every output format parses back and equals the Python call."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

import pairperm
from child import module_command
from pairperm._formatting import short_repr
from pairperm.cli import main
from pairperm.datasets import ner_like, stanza_pos_like
from synthetic import mixed


@pytest.fixture(scope="module")
def systems():
    x, y = stanza_pos_like(3_000, seed=8)
    return mixed(x, y, 4, prefix="sys")


def one_per_line(tmp_path, systems, header=False):
    paths = []
    for name, v in systems.items():
        p = tmp_path / f"{name}.txt"
        rows = [" ".join(str(int(c)) for c in np.atleast_1d(r)) for r in v]
        p.write_text(("correct\n" if header else "") + "\n".join(rows) + "\n")
        paths.append(str(p))
    return paths


def run(argv, capsys, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_equals_python_call(tmp_path, systems, capsys):
    code, out, _ = run(["compare", *one_per_line(tmp_path, systems), "--format", "json"], capsys)
    assert code == 0
    got = pairperm.SystemsComparison.from_dict(json.loads(out))
    assert got == pairperm.compare_systems(systems)


def test_csv_equals_python_call(tmp_path, systems, capsys):
    paths = one_per_line(tmp_path, systems, header=True)
    code, out, _ = run(["compare", *paths, "--format", "csv", "--baseline", "sys0", "--correction", "fdr_bh",
                        "--alpha", "0.1"], capsys)
    assert code == 0
    want = pairperm.compare_systems(systems, baseline="sys0", correction="fdr_bh", alpha=0.1)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == len(want.rows) == 3
    for row, w in zip(rows, want.rows):
        assert (row["system_a"], row["system_b"], row["test"]) == (w.system_a, w.system_b, w.test)
        for f in ("metric_a", "metric_b", "pvalue", "pvalue_adjusted"):
            assert float(row[f]) == getattr(w, f)
        assert int(row["statistic"]) == w.statistic
        assert row["significant"] == str(w.significant)


def test_table_markdown_latex_match_python_reports(tmp_path, systems, capsys):
    paths = one_per_line(tmp_path, systems)
    res = pairperm.compare_systems(systems)
    assert run(["compare", *paths, "--format", "markdown"], capsys)[1] == res.to_markdown()
    assert run(["compare", *paths, "--format", "latex"], capsys)[1] == res.to_latex()
    out = run(["compare", *paths], capsys)[1]
    assert out.startswith(res.to_table()) and res.to_markdown() in out
    for r in res.rows:
        assert re.search(rf"{r.system_a}\s+{r.system_b}\s.*\s{re.escape(short_repr(r.difference))}\s.*\s{r.pvalue:.4g}\s", out)


def test_the_table_shows_differences_in_the_metrics_units():
    # Means of real scores: the test's statistic is a difference of sums, the table's column the
    # difference of the means it lists beside it.
    rng = np.random.default_rng(2)
    systems = {s: np.round(rng.random(300) * 0.3 + 0.05 * k, 4) for k, s in enumerate("abc")}
    res = pairperm.compare_systems(systems, "mean", rng=0, progress=False)
    lines = res.to_table().splitlines()
    header = lines[1].split()
    assert header[:7] == ["system_a", "system_b", "metric_a", "metric_b", "difference", "ci_low", "ci_high"]
    assert "statistic" not in header
    for line, r in zip(lines[2:], res.rows):
        cells = line.split()
        metric_a, metric_b, difference, low, high = (float(v) for v in cells[2:7])
        assert difference == pytest.approx(metric_a - metric_b, abs=2e-6)
        assert difference == pytest.approx(r.difference, rel=1e-5) and abs(r.statistic) > 10 * abs(r.difference)
        assert low <= difference <= high


def test_one_table_file_with_header_and_stdin(systems, capsys, monkeypatch):
    names = list(systems)
    text = "\t".join(names) + "\n" + "\n".join("\t".join(str(int(systems[n][i])) for n in names)
                                              for i in range(len(systems[names[0]]))) + "\n"
    code, out, _ = run(["compare", "-", "--format", "json"], capsys, stdin=text, monkeypatch=monkeypatch)
    assert code == 0
    assert pairperm.SystemsComparison.from_json(out) == pairperm.compare_systems(systems)
    # whitespace-delimited, read from a file
    code, out2, _ = run(["compare", "-", "--format", "json"], capsys, stdin=text.replace("\t", "  "),
                        monkeypatch=monkeypatch)
    assert out2 == out


def test_f1_files_with_tp_fp_fn_columns(tmp_path, capsys):
    a, b = ner_like(300, seed=2)
    systems = mixed(a, b, 3, prefix="sys")
    paths = one_per_line(tmp_path, systems)
    code, out, _ = run(["compare", *paths, "--metric", "f1", "--format", "json"], capsys)
    assert code == 0
    assert pairperm.SystemsComparison.from_json(out) == pairperm.compare_systems(systems, "f1")


def test_seed_is_passed_to_sampling_routes(tmp_path, capsys):
    rng = np.random.default_rng(0)
    systems = {f"m{k}": np.round(rng.normal(0.5 + 0.01 * k, 0.2, 200), 3) for k in range(3)}
    paths = []
    for n, v in systems.items():
        p = tmp_path / f"{n}.csv"
        p.write_text("\n".join(repr(float(x)) for x in v) + "\n")
        paths.append(str(p))
    argv = ["compare", *paths, "--metric", "mean", "--seed", "4", "--n-resamples", "300", "--format", "json"]
    out = run(argv, capsys)[1]
    want = pairperm.compare_systems(systems, "mean", rng=4, n_resamples=300)
    assert pairperm.SystemsComparison.from_json(out) == want
    assert {r.test for r in want.rows} == {"permutation_test"}


def test_unequal_lengths_name_the_files(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    (tmp_path / "b.txt").write_text("1\n2\n")
    code, out, err = run(["compare", str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], capsys)
    assert code == 2 and out == ""
    assert "a.txt: 3" in err and "b.txt: 2" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "files, args, match",
    [
        ({"a.txt": "1\n2\n"}, [], "one file holds one system"),
        ({"t.tsv": "1\t2\n3\t4\n"}, [], "needs a header row"),
        ({"a.txt": "1\nx\n", "b.txt": "1\n2\n"}, [], r"a.txt:2: expected 1 number"),
        ({"a.txt": "1\n3\n", "b.txt": "1\n3\n"}, ["--metric", "f1"], "expected 2 or 3 number"),
        ({"a.txt": "1\n2\n", "b.txt": "1\n2\n"}, ["--baseline", "zz"], "baseline 'zz'"),
        ({"a.txt": "1\n2\n", "b.txt": "1\n2\n"}, ["--alpha", "2"], "alpha"),
        ({"a.txt": "1\n2\n"}, ["MISSING"], "cannot read file"),
    ],
)
def test_errors_exit_2_without_traceback(tmp_path, capsys, files, args, match):
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    extra = [a for a in args if a != "MISSING"]
    if "MISSING" in args:
        paths.append(str(tmp_path / "missing.txt"))
    code, _, err = run(["compare", *paths, *extra], capsys)
    assert code == 2 and re.search(match, err) and "Traceback" not in err


def test_same_stem_twice_is_an_error(tmp_path, capsys):
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    for d in ("d1", "d2"):
        (tmp_path / d / "sys.txt").write_text("1\n2\n")
    code, _, err = run(["compare", str(tmp_path / "d1" / "sys.txt"), str(tmp_path / "d2" / "sys.txt")], capsys)
    assert code == 2 and "both name a system 'sys'" in err


def test_name_equals_file_names_the_system(tmp_path, systems, capsys):
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    names = list(systems)
    for d, name in zip(("d1", "d2"), names):
        (tmp_path / d / "sys.txt").write_text("\n".join(str(int(v)) for v in systems[name]) + "\n")
    code, out, _ = run(["compare", f"base={tmp_path / 'd1' / 'sys.txt'}", f"tuned={tmp_path / 'd2' / 'sys.txt'}",
                        "--format", "json"], capsys)
    assert code == 0
    got = pairperm.SystemsComparison.from_dict(json.loads(out))
    assert got == pairperm.compare_systems({"base": systems[names[0]], "tuned": systems[names[1]]})
    # A file whose name holds '=' is still a file; a name without a file is an error.
    odd = tmp_path / "a=b.txt"
    odd.write_text("1\n0\n")
    (tmp_path / "c.txt").write_text("0\n0\n")
    code, out, _ = run(["compare", str(odd), str(tmp_path / "c.txt"), "--format", "json"], capsys)
    assert code == 0 and pairperm.SystemsComparison.from_dict(json.loads(out)).names == ("a=b", "c")
    code, _, err = run(["compare", "base=", str(odd)], capsys)
    assert code == 2 and "NAME=FILE needs a system name and a file" in err


def test_name_equals_log_names_the_system_read_by_id(tmp_path, capsys):
    for d, accs in (("d1", [1, 0, 1]), ("d2", [1, 1, 1])):
        (tmp_path / d).mkdir()
        (tmp_path / d / "samples.jsonl").write_text("".join(f'{{"doc_id": {i}, "acc": {a}}}\n' for i, a in enumerate(accs)))
    code, out, _ = run(["compare", f"base={tmp_path / 'd1' / 'samples.jsonl'}", f"tuned={tmp_path / 'd2' / 'samples.jsonl'}",
                        "--id-field", "doc_id", "--score-field", "acc", "--metric", "sum", "--format", "json"], capsys)
    assert code == 0
    assert pairperm.SystemsComparison.from_dict(json.loads(out)) == pairperm.compare_systems(
        {"base": [1, 0, 1], "tuned": [1, 1, 1]}, "sum")


def test_version_and_module_entry_point(tmp_path):
    # `python -m pairperm` importing the tests' pairperm (the child checks it), run from a directory
    # where no other pairperm could be found first.
    out = subprocess.run(module_command("--version"), capture_output=True, text=True, check=True, cwd=tmp_path,
                         timeout=120)
    assert out.stdout.strip() == f"pairperm {pairperm.__version__}"


def test_long_table_of_several_tasks(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    tasks = {t: {s: rng.integers(0, 2, n) for s in ("a", "b", "c")} for t, n in (("qa", 80), ("mc", 60))}
    rows = [{"task": t, "item": i, "system": s, "score": int(v)}
            for t, systems in tasks.items() for s, arr in systems.items() for i, v in enumerate(arr)]
    path = tmp_path / "scores.tsv"
    pd.DataFrame(rows).sample(frac=1.0, random_state=1).to_csv(path, sep="\t", index=False)
    want = pairperm.compare_systems(tasks, baseline="a", correction_scope="family", rng=4)
    code, out, _ = run(["compare", str(path), "--long", "--format", "json", "--baseline", "a", "--seed", "4",
                        "--correction-scope", "family"], capsys)
    assert code == 0
    got = pairperm.MultiTaskComparison.from_json(out)
    assert got.to_dict()["pairperm_version"] == pairperm.__version__
    # Tasks and systems come in the shuffled table's order of first appearance; the pairs are the same.
    assert sorted(got.rows) == sorted(want.rows)
    code, out, _ = run(["compare", str(path), "--long", "--format", "markdown", "--baseline", "a", "--seed", "4",
                        "--correction-scope", "family"], capsys)
    assert code == 0 and out.startswith("| system | ") and "baseline a" in out
    code, out, _ = run(["compare", str(path), "--long", "--format", "latex", "--confidence-level", "0"], capsys)
    assert code == 0 and r"\toprule" in out and "footnotesize" not in out
    bad = tmp_path / "bad.csv"
    bad.write_text("task,item,model,score\nqa,1,a,1\n")
    code, _, err = run(["compare", str(bad), "--long"], capsys)
    assert code == 2 and "missing system" in err


@pytest.mark.parametrize("flag,value,message", [
    ("--jobs", "0", "argument --jobs: must be 1 or more"),
    ("--seed", "-1", "argument --seed: must be 0 or more"),
    ("--n-resamples", "-5", "argument --n-resamples: must be 1 or more"),
    ("--n-resamples", "many", "argument --n-resamples: expected a whole number"),
])
def test_bad_numbers_are_reported_against_their_flag(tmp_path, systems, capsys, flag, value, message):
    # They were passed on and refused under the library's argument names (n_jobs, rng seed), or
    # accepted where no pair used them.
    with pytest.raises(SystemExit) as exc:
        main(["compare", *one_per_line(tmp_path, systems), flag, value])
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_test_command_reports_a_negative_seed_against_its_flag(capsys):
    with pytest.raises(SystemExit):
        main(["test", "-", "--seed", "-3"])
    assert "argument --seed: must be 0 or more" in capsys.readouterr().err


def test_ranks_follow_the_report_as_the_api_gives_them(tmp_path, systems, capsys):
    paths = one_per_line(tmp_path, systems)
    code, out, _ = run(["compare", *paths, "--ranks", "--seed", "3", "--format", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    res = pairperm.compare_systems(systems, rng=3)
    assert pairperm.SystemsComparison.from_dict(doc["comparison"]) == res
    assert pairperm.RankIntervals.from_dict(doc["ranks"]) == res.ranks(rng=3)
    code, out, _ = run(["compare", *paths, "--ranks", "--seed", "3", "--format", "markdown"], capsys)
    assert code == 0 and out.endswith(res.ranks(rng=3).to_markdown())


def test_ranks_refuse_csv(tmp_path, systems, capsys):
    paths = one_per_line(tmp_path, systems)
    code, _, err = run(["compare", *paths, "--ranks", "--format", "csv"], capsys)
    assert code == 2 and "--ranks has no CSV form" in err


def test_ranks_of_each_task_of_a_long_table(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    tasks = {t: {s: (rng.random(n) < p).astype(int) for s, p in (("a", 0.5), ("b", 0.7), ("c", 0.9))}
             for t, n in (("qa", 120), ("mc", 90))}
    rows = [{"task": t, "item": i, "system": s, "score": int(v)}
            for t, systems in tasks.items() for s, arr in systems.items() for i, v in enumerate(arr)]
    path = tmp_path / "scores.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    code, out, _ = run(["compare", str(path), "--long", "--ranks", "--seed", "2", "--format", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    res = pairperm.compare_systems(tasks, rng=2)
    for t in tasks:
        want = pairperm.rank_intervals(tasks[t], rng=2)
        assert res.task(t).ranks(rng=2) == want
        assert pairperm.RankIntervals.from_dict(doc["ranks"][t]) == want
    code, out, _ = run(["compare", str(path), "--long", "--ranks", "--seed", "2", "--format", "markdown"], capsys)
    assert code == 0 and "Task qa:" in out and out.endswith(pairperm.rank_intervals(tasks["mc"], rng=2).to_markdown())


def test_maxt_from_the_command_line(tmp_path, systems, capsys):
    code, out, _ = run(["compare", *one_per_line(tmp_path, systems), "--correction", "maxT", "--seed", "1",
                        "--format", "json"], capsys)
    assert code == 0
    assert pairperm.SystemsComparison.from_dict(json.loads(out)) == pairperm.compare_systems(
        systems, correction="maxT", rng=1)
