"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


def test_readme_code_fences_are_balanced():
    fences = [line for line in README.read_text(encoding="utf-8").splitlines() if line.lstrip().startswith("```")]
    assert len(fences) % 2 == 0, "a code block in README.md is not closed"
    # Fences alternate: an opening one may name a language, a closing one never does.
    assert all(f.strip() == "```" for f in fences[1::2])


# The README shows plain Monte Carlo at its floor 1/(1+K), which warns that it is one.
@pytest.mark.filterwarnings("ignore::pairperm.PrecisionWarning")
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, capsys):
    exec(compile(BLOCKS[index], f"README.md python block {index}", "exec"), {})
    if index == 0:
        assert "PermutationTestResult(statistic=6, difference=6, pvalue=0.25" in capsys.readouterr().out
