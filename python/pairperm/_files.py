"""Reading per-entry scores from text files (the command line's one reader).

Rows of numbers separated by commas, tabs, semicolons or white space; an optional header row
(the first non-blank line, when it holds a non-number); '-' is standard input. Errors name the
file and the line.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Optional, TextIO

import numpy as np

__all__ = ["read_table", "read_text"]

_SPLIT = re.compile(r"[,\t;]|\s+")
_INTEGER = re.compile(r"^[+-]?\d+$")


def read_text(name: str, stdin: Optional[TextIO] = None) -> str:
    """The file's text (UTF-8, a byte-order mark allowed), or standard input for '-'."""
    if name == "-":
        return (stdin if stdin is not None else sys.stdin).read()
    try:
        data = Path(name).read_bytes()
    except OSError as exc:
        raise ValueError(f"{name}: cannot read file: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(f"{name}:{line}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})") from None


def _fields(line: str, delim: Optional[str]) -> list[str]:
    parts = line.split(delim) if delim else _SPLIT.split(line)
    return [f.strip() for f in parts if f.strip() != ""]


def _number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def read_table(name: str, text: str, *, widths: tuple[int, ...], delim: Optional[str] = None,
               what: str = "numbers") -> tuple[Optional[list[str]], np.ndarray, np.ndarray]:
    """(header or None, values, line numbers): one row per non-blank line, each with one of
    `widths` fields (any width when `widths` is empty, the same on every line and as in the header).

    Values are int64 when every field is an integer (exact tests), float64 otherwise.
    """
    header: Optional[list[str]] = None
    rows: list[tuple[int, list[str]]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = _fields(line, delim)
        if not fields:
            continue
        if not rows and header is None and not all(_number(f) for f in fields):
            header = fields
            continue
        width = len(rows[0][1]) if rows else len(header) if header and not widths else len(fields)
        if len(fields) != width or (widths and width not in widths) or not all(_number(f) for f in fields):
            want = " or ".join(map(str, widths)) if widths else str(width)
            raise ValueError(f"{name}:{lineno}: expected {want} {what} per line; got {line.strip()!r}")
        rows.append((lineno, fields))
    width = len(rows[0][1]) if rows else (len(header) if header else widths[0] if widths else 0)
    integers = all(_INTEGER.match(f) for _, fields in rows for f in fields)
    out = np.empty((len(rows), width), dtype=np.int64 if integers else np.float64)
    for i, (lineno, fields) in enumerate(rows):
        values = [int(f) for f in fields] if integers else [float(f) for f in fields]
        if integers and any(abs(v) >= 2**63 for v in values):
            raise ValueError(f"{name}:{lineno}: {line_text(fields)!r} is beyond the 64-bit integer range")
        out[i] = values
    return header, out, np.array([lineno for lineno, _ in rows], dtype=np.int64)


def line_text(fields: list[str]) -> str:
    return " ".join(fields)
