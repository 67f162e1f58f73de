"""The command-line tool end to end."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

import pairperm
from child import module_command
from pairperm.cli import main
from pairperm.datasets import stanza_pos_like
from reference import exact_pvalue, paired


def test_demo_prints_every_engine_and_agreeing_pvalues(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    x, y = stanza_pos_like(10_000, 2022)
    exact = pairperm.permutation_test(x, y).pvalue
    rows = {}
    for label in ("grouped (auto)", "FFT tree", "DP (Alg. 3)", "Monte Carlo, K = 20,000"):
        m = re.search(re.escape(label) + r".*?\s([0-9.e+-]+)\s+([0-9.]+) ms", out)
        assert m, label
        rows[label] = float(m.group(1))
    assert rows["grouped (auto)"] == pytest.approx(exact, rel=1e-5)
    assert rows["DP (Alg. 3)"] == pytest.approx(exact, rel=1e-5)
    assert rows["FFT tree"] == pytest.approx(exact, rel=1e-3, abs=1e-12)
    assert rows["Monte Carlo, K = 20,000"] == pytest.approx(1 / 20_001)  # no resample reaches T


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_test_command_reads_reference_format(tmp_path, capsys):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 20, 200)
    y = np.maximum(0, x - rng.integers(0, 2, 200))
    f = write(tmp_path, "acc.csv", "".join(f"{a},{b}\n" for a, b in zip(x, y)))
    assert main(["test", str(f)]) == 0
    out = capsys.readouterr().out
    r = pairperm.permutation_test(x, y)
    assert f"statistic (sum A - sum B): {r.statistic}" in out
    assert f"p-value: {r.pvalue:.10g}" in out

    t = write(tmp_path, "acc.tsv", "".join(f"{a}\t{b}\n" for a, b in zip(x, y)))
    assert main(["test", str(t), "--delim", "tab", "--alternative", "greater", "--method", "dp"]) == 0
    out = capsys.readouterr().out
    g = pairperm.permutation_test(x, y, alternative="greater", method="dp")
    assert f"p-value: {g.pvalue:.10g}" in out and "method: dp" in out

    assert main(["test", str(f), "--mc", "5000"]) == 0
    out = capsys.readouterr().out
    assert "method: monte_carlo" in out and "95% CI" in out


@pytest.mark.parametrize(
    "text,where",
    [("8,6\n3,x\n", ":2: expected 2 numbers"), ("8,6\n1,2,3\n", ":2: expected 2 numbers"), ("8\n", ":1: expected 2"),
     ("8,6\n1,99999999999999999999\n", ":2: 99999999999999999999 is beyond the 64-bit integer range"),
     (b"8,6\n1,\xff\n", ":2: not UTF-8 text")],
)
def test_test_command_errors_name_file_and_line(tmp_path, capsys, text, where):
    f = tmp_path / "bad.csv"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert main(["test", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) + where in err


def test_missing_file_and_bad_delimiter(tmp_path, capsys):
    assert main(["test", str(tmp_path / "nope.csv")]) == 2
    assert "nope.csv: cannot read file" in capsys.readouterr().err
    f = write(tmp_path, "a.csv", "1;2\n")
    assert main(["test", str(f), "--delim", ";"]) == 2
    assert "--delim must be" in capsys.readouterr().err


def test_console_entry_point_runs_as_a_process(tmp_path):
    f = write(tmp_path, "acc.csv", "8,6\n3,5\n7,7\n9,2\n")
    # `python -m pairperm`, importing the tests' pairperm (the child checks it), from a directory
    # where no other pairperm could be found first.
    proc = subprocess.run(module_command("test", str(f), "--alternative", "greater"), capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # d = (2, -2, 0, 7), T = 7: 3 of the 8 sign patterns of (2, -2, 7) reach S >= 7.
    m = re.search(r"p-value: ([0-9.e+-]+)", proc.stdout)
    assert m and float(m.group(1)) == pytest.approx(float(exact_pvalue(*paired([8, 3, 7, 9], [6, 5, 7, 2]), "greater")))
    assert float(m.group(1)) == pytest.approx(3 / 8, rel=1e-12)


def test_test_command_f1_metric(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n = 300
    gold = rng.poisson(1.5, n)
    tp_a = rng.binomial(gold, 0.85)
    tp_b = rng.binomial(gold, 0.8)
    err_a = rng.poisson(0.3, n)
    err_b = rng.poisson(0.3, n)
    rows = np.stack([tp_a, err_a, tp_b, err_b], axis=1)
    f = write(tmp_path, "f1.csv", "".join(",".join(map(str, r)) + "\n" for r in rows))
    assert main(["test", str(f), "--metric", "f1", "--alternative", "greater"]) == 0
    out = capsys.readouterr().out
    r = pairperm.f1_test(rows[:, :2], rows[:, 2:], alternative="greater")
    assert f"p-value: {r.pvalue:.10g}" in out and "method: auto" in out

    t = write(tmp_path, "f1.tsv", "".join("\t".join(map(str, r)) + "\n" for r in rows))
    assert main(["test", str(t), "--metric", "f1", "--delim", "tab", "--mc", "4000"]) == 0
    out = capsys.readouterr().out
    assert "method: monte_carlo" in out and "95% CI" in out

    bad = write(tmp_path, "bad.csv", "1,0,1,0\n1,0,1\n")
    assert main(["test", str(bad), "--metric", "f1"]) == 2
    assert f"{bad}:2: expected 4 integers" in capsys.readouterr().err
    assert main(["test", str(tmp_path / "missing.csv"), "--metric", "f1"]) == 2
    assert "missing.csv: cannot read file" in capsys.readouterr().err


def test_test_command_reads_bom_whitespace_headers_stdin_and_prints_json(tmp_path, capsys, monkeypatch):
    import io
    import json

    rng = np.random.default_rng(9)
    rows = rng.integers(0, 5, (60, 4))
    f = tmp_path / "f1.txt"
    f.write_bytes(b"\xef\xbb\xbf" + ("tp_a err_a tp_b err_b\n" + "".join(" ".join(map(str, r)) + "\n" for r in rows)).encode())
    assert main(["test", str(f), "--metric", "f1", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = pairperm.f1_test(rows[:, :2], rows[:, 2:])
    assert got["pvalue"] == want.pvalue and got["entries"] == 60 and got["engine"] == want.engine
    monkeypatch.setattr("sys.stdin", io.StringIO("3 1\n4 4\n5 2\n"))
    assert main(["test", "-", "--format", "json", "--mc", "500", "--seed", "1"]) == 0
    a = json.loads(capsys.readouterr().out)
    monkeypatch.setattr("sys.stdin", io.StringIO("3 1\n4 4\n5 2\n"))
    assert main(["test", "-", "--format", "json", "--mc", "500", "--seed", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["pvalue"] == a["pvalue"] and a["n_resamples"] == 500


def test_ctrl_c_exits_130_without_a_traceback(monkeypatch, capsys):
    import pairperm.cli as cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_demo", interrupted)
    assert main(["demo"]) == 130
    assert "interrupted" in capsys.readouterr().err
