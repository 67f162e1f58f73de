"""The README's Python examples run as written, and print what the README shows they print."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
TEXT = README.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
# Each fenced block in order, as (language, body): a python block directly followed by a plain
# one shows that plain block as its output.
FENCES = [(m.group(1), m.group(2), m.start(), m.end()) for m in re.finditer(r"```(\w*)\n(.*?)```", TEXT, flags=re.S)]
# A printed repr such as PermutationTestResult(...), written as a comment after its print call.
OUTPUT_COMMENT = re.compile(r"#\s?([A-Za-z_]\w*\(.*)")
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def shown_output(index: int) -> str | None:
    """The plain block right after the index-th python block, if the README shows one."""
    positions = [i for i, (lang, *_) in enumerate(FENCES) if lang == "python"]
    i = positions[index]
    if i + 1 < len(FENCES) and FENCES[i + 1][0] == "" and not TEXT[FENCES[i][3]:FENCES[i + 1][2]].strip():
        return FENCES[i + 1][1]
    return None


def commented_outputs(block: str) -> dict[int, str]:
    """Line number (1-based) of each print call whose output the README writes as a comment:
    on the call's line, or on the comment lines below it (continued by indented comment lines)."""
    lines = block.splitlines()
    out = {}
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("print("):
            continue
        same = re.search(r"\)\s+(#.*)$", line)
        if same and OUTPUT_COMMENT.match(same.group(1)):
            out[i + 1] = OUTPUT_COMMENT.match(same.group(1)).group(1)
            continue
        below = []
        for nxt in lines[i + 1:]:
            stripped = nxt.strip()
            if not stripped.startswith("#"):
                break
            if not below and not OUTPUT_COMMENT.match(stripped):
                break
            if below and not re.match(r"#\s{2,}", stripped):
                break
            below.append(stripped[1:].strip())
        if below:
            out[i + 1] = " ".join(below)
    return out


def same_output(printed: str, shown: str) -> bool:
    """Equal text, and equal numbers to the six significant digits results print (so that a
    last-digit rounding difference between machines is no failure)."""
    printed, shown = " ".join(printed.split()), " ".join(shown.split())
    if NUMBER.split(printed) != NUMBER.split(shown):
        return False
    a, b = NUMBER.findall(printed), NUMBER.findall(shown)
    return len(a) == len(b) and all(math.isclose(float(u), float(v), rel_tol=1e-5) for u, v in zip(a, b))


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


def test_readme_shows_outputs_to_check():
    # The examples check their printed lines where the README shows them: it must show some.
    assert commented_outputs(BLOCKS[0])
    assert sum(len(commented_outputs(b)) for b in BLOCKS) >= 3
    assert any(shown_output(i) is not None for i in range(len(BLOCKS)))


def test_readme_code_fences_are_balanced():
    fences = [line for line in TEXT.splitlines() if line.lstrip().startswith("```")]
    assert len(fences) % 2 == 0, "a code block in README.md is not closed"
    # Fences alternate: an opening one may name a language, a closing one never does.
    assert all(f.strip() == "```" for f in fences[1::2])


def test_output_comparison_sees_differences():
    assert same_output("R(statistic=6, pvalue=0.25)", "R(statistic=6,\n  pvalue=0.250000)")
    assert not same_output("R(statistic=6, pvalue=0.25)", "R(statistic=6, pvalue=0.26)")
    assert not same_output("R(statistic=6, engine='dp')", "R(statistic=6, engine='fft')")
    assert not same_output("R(p=1.82733e-05)", "R(p=1.82924e-05)")


# The README shows plain Monte Carlo at its floor 1/(1+K), which warns that it is one.
@pytest.mark.filterwarnings("ignore::pairperm.PrecisionWarning")
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, capsys):
    printed: dict[int, str] = {}
    name = f"README.md python block {index}"

    def recording_print(*args, **kwargs):
        frame = sys._getframe(1)
        text = kwargs.get("sep", " ").join(map(str, args))
        if frame.f_code.co_filename == name:
            printed[frame.f_lineno] = printed.get(frame.f_lineno, "") + text
        print(*args, **kwargs)

    exec(compile(BLOCKS[index], name, "exec"), {"print": recording_print})
    for line, shown in commented_outputs(BLOCKS[index]).items():
        assert line in printed, f"{name}, line {line}: no output"
        assert same_output(printed[line], shown), f"{name}, line {line}:\n{printed[line]}\nREADME shows:\n{shown}"
    shown = shown_output(index)
    if shown is not None:
        out = capsys.readouterr().out
        assert same_output(out, shown), f"{name} printed:\n{out}\nREADME shows:\n{shown}"
