"""Read the measured benchmark tables out of README.md (the docs show the README's figures).

The README holds one fenced block whose first line starts with "# pairperm": tables, each
introduced by a "# ..." heading line. `blocks()` returns them as text, `timings()` parses the
first (method x N, seconds) for the runtime figure.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _fenced_block() -> str:
    text = README.read_text(encoding="utf-8")
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        if block.startswith("# pairperm"):
            return block
    raise RuntimeError(f"{README}: no benchmark block starting with '# pairperm'")


def _sections() -> list[str]:
    sections: list[list[str]] = []
    for line in _fenced_block().splitlines():
        if line.startswith("#"):
            sections.append([])
        if sections and (line.strip() or sections[-1]):
            sections[-1].append(line.rstrip())
    return ["\n".join(s).strip() + "\n" for s in sections]


def blocks() -> dict[str, str]:
    """{"timings": ..., "speedups": ..., "other_tests": ...} as the README prints them."""
    names = ["timings", "speedups", "other_tests"]
    sections = _sections()
    if len(sections) < len(names):
        raise RuntimeError(f"{README}: expected {len(names)} benchmark tables, found {len(sections)}")
    return dict(zip(names, sections))


def timings() -> tuple[list[int], dict[str, list[float]]]:
    """Sizes N and, per method, the median seconds (NaN where a method was not run)."""
    lines = [line for line in blocks()["timings"].splitlines()[1:] if line.strip()]
    header, rows = lines[0].split(), lines[1:]
    sizes = [int(float(h.split("=", 1)[1])) for h in header[1:]]
    out = {}
    for row in rows:
        fields = row.split()
        out[fields[0]] = [math.nan if f == "-" else float(f) for f in fields[1:]]
    return sizes, out
