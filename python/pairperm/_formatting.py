"""How numbers and names are written in results, reports and figures: one place for the
number formats, the marks of a report, and the escaping of names into Markdown and LaTeX."""

from __future__ import annotations

import math
import numbers
from typing import Any


def short_repr(v: Any) -> str:
    """A value in a result's repr and the table of pairs: floats to six significant digits."""
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, tuple):
        return "(" + ", ".join(short_repr(x) for x in v) + ")"
    return repr(v)


# How a plot names the permutation sum S: its symbol, the x axis, and a value of it.
SUM_DRAWN_AS = ("S", "S (summed local effects)", "s")


def is_finite_number(v: Any) -> bool:
    """A finite int or float (not a NaN or an infinite interval end)."""
    return isinstance(v, (int, float)) and math.isfinite(v)


def format_value(v: Any, places: int) -> str:
    """A metric value in a report: integers whole, floats with `places` decimals."""
    if isinstance(v, numbers.Integral) or not is_finite_number(v):
        return str(v)
    return f"{v:.{places}f}"


def decimals_for(values: tuple) -> int:
    """Decimals giving three significant digits of the task's largest value (integer values
    themselves are printed whole; this is for their intervals)."""
    finite = [abs(float(v)) for v in values if is_finite_number(v)]
    if not finite or max(finite) == 0:
        return 3
    return max(0, 2 - math.floor(math.log10(max(finite))))


def mark_labels(n: int) -> list[str]:
    """a, b, ..., z, aa, ab, ...: short marks for the report."""
    out = []
    for i in range(n):
        s = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            s = chr(ord("a") + r) + s
        out.append(s)
    return out


def latex_escape(s: str) -> str:
    repl = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(repl.get(c, c) for c in s)


def markdown_escape(s: str) -> str:
    return s.replace("|", r"\|")


def table_number(v: Any) -> str:
    """A number in a plain-text table of pairs: integers whole, the rest to four digits."""
    return str(v) if isinstance(v, numbers.Integral) else f"{v:.4g}"
