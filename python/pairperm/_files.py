"""Reading per-entry scores from text files: the command line's one table reader.

A table is rows of decimal numbers separated by one delimiter (a comma, a tab, a semicolon or
white space; unless given, the first of these found in the first non-blank line), optionally
under a header row. The first non-blank line is a header only when every field of it is a word
(a name starting with a letter or an underscore); any other line must be a full row of numbers.
Blank lines are skipped, '-' is standard input and a UTF-8 byte-order mark is allowed.
Every error names the file and the line.

The rows are parsed at C speed, streaming from the file: pandas' parser when pandas is
installed, else ``numpy.loadtxt``. Their results are checked (column types, finite values,
integers exact), and whenever a fast parser refuses the data or a check fails, a careful pass
over the lines finds the first bad line and names it; that pass also reads the rare files the
fast parsers cannot (a delimiter followed only by spaces on a line, say).
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Generator, Optional, TextIO, Union

import numpy as np

__all__ = ["Table", "read_table"]

_BOM = b"\xef\xbb\xbf"
# Decimal numbers only: no hexadecimal, underscores, 'nan' or 'inf' (Python's float() takes those).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_INTEGER = re.compile(r"[+-]?\d+\Z")
# A header field names a column: it starts with a letter or an underscore and is not a number
# Python would read ('nan', 'inf').
_WORD = re.compile(r"[^\W\d]")
_NON_NUMBER_WORDS = ("nan", "inf", "infinity")
# Floats are exact integers only below 2**53; an integral float at or beyond it may be an integer
# the fast parser rounded, so such columns are read again, token by token.
_EXACT_FLOAT = 2.0**53
_INT64_MAX = 2**63 - 1


def _is_word(field: str) -> bool:
    return bool(_WORD.match(field)) and field.lower().lstrip("+-") not in _NON_NUMBER_WORDS


@dataclass(frozen=True)
class Table:
    """A table read by :func:`read_table`.

    ``columns`` holds one 1-D array per column, int64 when every entry of the column is an
    integer (read exactly), float64 otherwise. ``header`` is the header row's names, or None.
    """

    name: str
    header: Optional[tuple[str, ...]]
    columns: tuple[np.ndarray, ...]
    _source: _Source
    _offset: int
    _first_line: int

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    @property
    def width(self) -> int:
        return len(self.columns)

    def line_of(self, row: int) -> int:
        """The line number of data row `row` (for messages; reads the lines again)."""
        for lineno, line in self._source.lines(self._offset, self._first_line):
            if line.strip():
                if row == 0:
                    return lineno
                row -= 1
        raise IndexError(row)


class _Source:
    """Where a table's bytes come from: a file, opened again whenever it is read (its bytes are
    never all held), or standard input, read once and held."""

    def __init__(self, name: str, stdin: Optional[TextIO]) -> None:
        self.name = name
        self.data: Optional[bytes] = None
        if name == "-":
            stream: Any = stdin if stdin is not None else sys.stdin
            buffer = getattr(stream, "buffer", None)
            self.data = buffer.read() if buffer is not None else stream.read().encode("utf-8")
        else:
            try:
                with open(name, "rb"):
                    pass
            except OSError as exc:
                raise ValueError(f"{name}: cannot read file: {exc.strerror or exc}") from None

    def open(self, offset: int = 0) -> BinaryIO:
        f: BinaryIO = io.BytesIO(self.data) if self.data is not None else open(self.name, "rb")
        f.seek(offset)
        return f

    def lines(self, offset: int, first_line: int) -> Generator[tuple[int, str], None, None]:
        """(line number, text) of every line from byte `offset`, decoded as UTF-8."""
        with self.open(offset) as f:
            for lineno, raw in enumerate(f, start=first_line):
                try:
                    yield lineno, raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ValueError(f"{self.name}:{lineno}: not UTF-8 text (byte {raw[exc.start]:#04x} at "
                                     f"column {exc.start + 1})") from None


def _delimiter_of(line: str) -> Optional[str]:
    for d in (",", "\t", ";"):
        if d in line:
            return d
    return None  # white space


def _split(line: str, delim: Optional[str]) -> list[str]:
    return [f.strip() for f in line.split(delim)] if delim else line.split()


def read_table(name: str, *, stdin: Optional[TextIO] = None, delim: Optional[str] = None, widths: tuple[int, ...] = (),
               what: str = "numbers", text_columns: Union[tuple[str, ...], Callable[[str], bool]] = ()) -> Table:
    """Read the table in file `name` ('-': standard input).

    Parameters
    ----------
    delim : None, ",", "\\t" or ";"
        None takes the first of comma, tab and semicolon found in the first non-blank line,
        else white space.
    widths : tuple of int
        The numbers of columns accepted (any when empty); every row has the same number.
    what : str
        What a row holds, for messages ("numbers (the scores of system A, of system B)").
    text_columns : tuple of str, or callable
        Columns of the header row read as text (item ids): any non-empty field. A callable
        chooses them by name (and a file without a header row then has none).

    Raises
    ------
    ValueError
        For an unreadable file, a row that is not `widths` numbers (an empty field, a ragged
        row, a token that is not a decimal number, an integer beyond 64 bits), and a file with
        no rows; naming the file, the line and its text.
    """
    source = _Source(name, stdin)
    header: Optional[tuple[str, ...]] = None
    offset, first_line = 0, 1
    with source.open() as f:
        head = f.read(len(_BOM))
        offset = len(_BOM) if head == _BOM else 0
    with contextlib.closing(source.lines(offset, 1)) as lines:
        for lineno, line in lines:
            if not line.strip():
                offset += len(line.encode("utf-8"))
                continue
            if delim is None:
                delim = _delimiter_of(line)
            fields = _split(line, delim)
            if all(_is_word(f) for f in fields):
                header = tuple(fields)
                offset += len(line.encode("utf-8"))
                lineno += 1
            first_line = lineno
            break
    if callable(text_columns):
        text_columns = tuple(c for c in header or () if text_columns(c))
    missing = [c for c in text_columns if header is None or c not in header]
    if missing:
        raise ValueError(f"{name}: no column named {missing[0]!r} in the header row"
                         + (f" ({', '.join(header)})" if header is not None else " (the file has no header row)"))
    text = frozenset(header.index(c) for c in text_columns) if header is not None else frozenset()
    columns = _read_fast(source, offset, delim, header, widths, text)
    if columns is None:
        columns = _read_careful(source, offset, first_line, delim, header, widths, what, text)
    return Table(name, header, columns, source, offset, first_line)


def _read_fast(source: _Source, offset: int, delim: Optional[str], header: Optional[tuple[str, ...]],
               widths: tuple[int, ...], text: frozenset[int]) -> Optional[tuple[np.ndarray, ...]]:
    """The columns by a C parser, or None when it refuses the data or its result fails a check
    (the careful pass then names the line)."""
    try:
        import pandas as pd
    except ImportError:
        pd = None
    try:
        with source.open(offset) as f:
            if pd is not None:
                frame = pd.read_csv(f, sep=delim or r"\s+", header=None, quoting=csv.QUOTE_NONE, na_filter=False,
                                    skip_blank_lines=True, engine="c", encoding="utf-8", dtype={j: str for j in text})
                columns = tuple(frame[c].to_numpy() for c in frame.columns)
            else:
                columns = _loadtxt(f, delim, text, len(header) if header is not None else 0)
    except (ValueError, UnicodeDecodeError, OverflowError, IndexError):
        return None  # pandas' ParserError and EmptyDataError are ValueErrors
    except Exception as exc:  # any other refusal of a parser is left for the careful pass to name
        if type(exc).__module__.startswith(("pandas", "numpy")):
            return None
        raise
    if not columns or not len(columns[0]):
        return None
    if (widths and len(columns) not in widths) or (header is not None and len(columns) != len(header)):
        return None
    for j, col in enumerate(columns):
        if j in text:
            if col.dtype.kind not in "OUT" or not all(col):
                return None
            continue
        if col.dtype != np.int64 and col.dtype != np.float64:
            return None
        if col.dtype == np.float64 and not (np.isfinite(col).all() and np.abs(col).max() < _EXACT_FLOAT):
            return None
    return columns


def _loadtxt(f: BinaryIO, delim: Optional[str], text: frozenset[int], width: int) -> tuple[np.ndarray, ...]:
    """numpy.loadtxt's columns: int64 when every entry is an integer, else float64; the `text`
    columns (of `width`) as str."""
    start = f.tell()
    numeric = [j for j in range(width) if j not in text] if text else None

    def load(dtype: Any, usecols: Any) -> np.ndarray:
        f.seek(start)
        return np.loadtxt(f, delimiter=delim, dtype=dtype, ndmin=2, comments=None, encoding="utf-8", usecols=usecols)

    try:
        arr = load(np.int64, numeric)
    except ValueError:
        arr = load(np.float64, numeric)
    if not text:
        return tuple(arr[:, j] for j in range(arr.shape[1]))
    words = load(str, sorted(text))
    got = iter(range(arr.shape[1]))
    return tuple(words[:, sorted(text).index(j)].astype(object) if j in text else arr[:, next(got)]
                 for j in range(width))


def _read_careful(source: _Source, offset: int, first_line: int, delim: Optional[str],
                  header: Optional[tuple[str, ...]], widths: tuple[int, ...], what: str,
                  text: frozenset[int]) -> tuple[np.ndarray, ...]:
    """The columns read line by line, checking every field; raises at the first bad line."""
    name = source.name
    width = len(header) if header is not None else 0
    rows: list[list[str]] = []
    for lineno, line in source.lines(offset, first_line):
        if not line.strip():
            continue
        fields = _split(line, delim)
        if not width:
            width = len(fields)
        want = (" or ".join(map(str, widths)) if widths and (header is None or width not in widths) else str(width))
        shown = line.strip()
        if widths and width not in widths:
            raise ValueError(f"{name}:{lineno}: expected {want} {what} per line; got {len(fields)} field(s): {shown!r}")
        if len(fields) != width:
            like = " (as many as the header row names)" if header is not None else " (as on the first row)"
            raise ValueError(f"{name}:{lineno}: expected {want} {what} per line{like}; got {len(fields)} "
                             f"field(s): {shown!r}")
        for j, field in enumerate(fields):
            if field == "":
                raise ValueError(f"{name}:{lineno}: expected {want} {what} per line; got an empty field: {shown!r}")
            if j not in text and not _NUMBER.match(field):
                hint = "" if rows or header is not None else " (a header row names every column with a word)"
                raise ValueError(f"{name}:{lineno}: expected {want} {what} per line; {field!r} is not a number: "
                                 f"{shown!r}{hint}")
        rows.append(fields)
    if not rows:
        if header is not None:
            raise ValueError(f"{name}: a header row ({', '.join(header)}) but no rows of {what}")
        raise ValueError(f"{name}: no rows of {what}: the file is empty")
    return tuple(np.array([r[j] for r in rows], dtype=object) if j in text
                 else _column(source, offset, first_line, [r[j] for r in rows]) for j in range(width))


def _column(source: _Source, offset: int, first_line: int, tokens: list[str]) -> np.ndarray:
    """One column of checked tokens: int64 when all are integers, else float64, never inexact."""
    integers = [_INTEGER.match(t) is not None for t in tokens]
    if all(integers):
        values = [int(t) for t in tokens]
        for row, v in enumerate(values):
            if abs(v) > _INT64_MAX:
                line = _line(source, offset, first_line, row)
                raise ValueError(f"{source.name}:{line}: {tokens[row]} is beyond the 64-bit integer range")
        return np.array(values, dtype=np.int64)
    out = np.array([float(t) for t in tokens], dtype=np.float64)
    for row, (t, is_int) in enumerate(zip(tokens, integers)):
        if is_int and abs(int(t)) >= _EXACT_FLOAT:
            line = _line(source, offset, first_line, row)
            raise ValueError(f"{source.name}:{line}: the integer {t} is in a column of real numbers, where it cannot "
                             "be read exactly (float64 holds integers exactly only below 2**53)")
        if not np.isfinite(out[row]):
            line = _line(source, offset, first_line, row)
            raise ValueError(f"{source.name}:{line}: {t} is beyond the range of float64")
    return out


def _line(source: _Source, offset: int, first_line: int, row: int) -> int:
    return Table(source.name, None, (), source, offset, first_line).line_of(row)
