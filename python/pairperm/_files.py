"""Reading per-entry scores from text files: the command line's one table reader.

A table is rows of decimal numbers separated by one delimiter (a comma, a tab, a semicolon or
white space; unless given, the first of these found in the first non-blank line), optionally
under a header row. The first non-blank row is a header only when every field of it is a word
(a name starting with a letter or an underscore); any other row must be a full row of numbers.
Fields are stripped of the white space around them. With a delimiter, a field that starts with
a double quote is quoted as in RFC 4180 (CSV as pandas and spreadsheets write it): it runs to
its closing quote over delimiters and line breaks, and a quote inside it is written twice; a
quote inside a field that does not start with one is an ordinary character, and so is every
quote of a table separated by white space. Blank lines are skipped, '-' is standard input and a
UTF-8 byte-order mark is allowed. Every error names the file and the line.

The rows are parsed at C speed, streaming from the file: pandas' parser when pandas is
installed, else ``numpy.loadtxt``. Both parse without quoting, and their results are checked
(column types, finite values, integers exact, no quote and no surrounding white space in a text
field), so that they read only files where quoting changes nothing. Whenever a fast parser
refuses the data or a check fails, a careful pass over the rows (the csv module, strict about
quoting: pandas would glue ``"a"b`` into ``ab``) finds the first bad line and names it; that pass
also reads the files the fast parsers cannot: those with quoted fields, or a delimiter followed
only by spaces on a line, say.

read_scores() builds on it: evaluation logs (JSONL through pandas.read_json, CSV/TSV through
read_table with a text id column and chosen columns) read into scores aligned by item id.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import itertools
import json
import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable, Generator, NamedTuple, Optional, TextIO, Union

import numpy as np

from ._validation import align_by_index

__all__ = ["FORMATS", "Table", "read_scores", "read_table"]

_BOM = b"\xef\xbb\xbf"
_GZIP = b"\x1f\x8b"
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
# Rows parsed at once: the parser's int64 chunk stays a few MB while the columns kept are narrowed.
_CHUNK_ROWS = 1 << 16
_NARROW_INTS = (np.int8, np.int16, np.int32)


def _is_word(field: str) -> bool:
    return bool(_WORD.match(field)) and field.lower().lstrip("+-") not in _NON_NUMBER_WORDS


@dataclass(frozen=True)
class Table:
    """A table read by :func:`read_table`.

    ``columns`` holds one 1-D array per column, integers when every entry of the column is an
    integer (read exactly; in the narrowest of int8 ... int64 that holds them, so convert before
    arithmetic), float64 otherwise, and an object array of str for a text column.
    ``header`` names the columns (the header row's names, or those chosen), or is None.
    """

    name: str
    header: Optional[tuple[str, ...]]
    columns: tuple[np.ndarray, ...]
    _source: _Source
    _offset: int
    _first_line: int
    _delim: Optional[str]

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    @property
    def width(self) -> int:
        return len(self.columns)

    def line_of(self, row: int) -> int:
        """The line number of data row `row`, where it starts (for messages; reads the rows again)."""
        with contextlib.closing(_records(self._source, self._offset, self._first_line, self._delim)) as records:
            for record in records:
                if row == 0:
                    return record.lineno
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
        """The decompressed bytes (gzip is recognised by its magic bytes), from `offset` on."""
        f: Any
        if self.data is not None:
            f = io.BytesIO(self.data)
            if self.data[:len(_GZIP)] == _GZIP:
                f = gzip.GzipFile(fileobj=f, mode="rb")
        else:
            with open(self.name, "rb") as raw:
                compressed = raw.read(len(_GZIP)) == _GZIP
            f = gzip.open(self.name, "rb") if compressed else open(self.name, "rb")
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


class _Record(NamedTuple):
    lineno: int  # the line it starts on
    fields: list[str]
    text: str  # its lines as read: several when a quoted field holds a line break


def _records(source: _Source, offset: int, first_line: int, delim: Optional[str]) -> Generator[_Record, None, None]:
    """The non-blank rows from byte `offset` on, fields stripped: split at white space when
    `delim` is None, else by the csv module, quoted fields as RFC 4180 has them."""
    with contextlib.closing(source.lines(offset, first_line)) as lines:
        if delim is None:
            for lineno, line in lines:
                if line.strip():
                    yield _Record(lineno, line.split(), line)
            return
        taken: list[tuple[int, str]] = []  # the lines of the row being read
        ended = False

        def feed() -> Generator[str, None, None]:
            nonlocal ended
            for lineno, line in lines:
                taken.append((lineno, line))
                yield line
            ended = True

        # skipinitialspace: a quoted field may follow its delimiter after spaces, as any field may.
        # strict: text after a closing quote is an error, not glued onto the field.
        reader = csv.reader(feed(), delimiter=delim, quotechar='"', doublequote=True, skipinitialspace=True,
                            strict=True)
        while True:
            taken.clear()
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise ValueError(_quoting_error(source.name, taken, ended, exc)) from None
            text = taken[0][1] if len(taken) == 1 else "".join(line for _, line in taken)
            if text.strip():
                yield _Record(taken[0][0], [f.strip() for f in fields], text)


def _quoting_error(name: str, taken: list[tuple[int, str]], ended: bool, exc: csv.Error) -> str:
    start = taken[0][0] if taken else 0
    text = "".join(line for _, line in taken)
    if ended:
        return (f"{name}:{start}: a quoted field opened on this line is not closed by the end of the file (a field "
                "that starts with a double quote runs to the next lone one; a quote inside it is written twice)")
    if len(text) > csv.field_size_limit():
        return (f"{name}:{start}: the row starting on this line holds a field longer than the csv module's limit of "
                f"{csv.field_size_limit()} characters: a quote opening a field is never closed, or the field is "
                "longer than csv.field_size_limit() allows")
    return (f"{name}:{taken[-1][0] if taken else start}: malformed quoting ({exc}): a quoted field ends at its closing "
            f"quote, right before the delimiter or the line's end, and a quote inside it is written twice: "
            f"{text.strip()!r}")


def read_table(name: str, *, stdin: Optional[TextIO] = None, delim: Optional[str] = None, widths: tuple[int, ...] = (),
               what: str = "numbers", text_columns: Union[tuple[str, ...], Callable[[str], bool]] = (),
               usecols: Optional[tuple[str, ...]] = None) -> Table:
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
    usecols : tuple of str, optional
        The columns of the header row to return, in this order; the others are skipped (every
        row still needs all fields, but theirs may be anything, also empty).

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
            if line.strip():
                if delim is None:
                    delim = _delimiter_of(line)
                first_line = lineno
                break
            offset += len(line.encode("utf-8"))
    with contextlib.closing(_records(source, offset, first_line, delim)) as records:
        first = next(records, None)
    if first is not None and all(_is_word(f) for f in first.fields):
        header = tuple(first.fields)
        offset += len(first.text.encode("utf-8"))
        first_line += first.text.count("\n")
    if callable(text_columns):
        text_columns = tuple(c for c in header or () if text_columns(c))
    missing = [c for c in text_columns if header is None or c not in header]
    if missing:
        raise ValueError(f"{name}: no column named {missing[0]!r} in the header row"
                         + (f" ({', '.join(header)})" if header is not None else " (the file has no header row)"))
    named = [*text_columns, *(usecols or ())]
    twice = [c for c in named if header.count(c) > 1] if header is not None else []
    if twice and header is not None:
        raise ValueError(f"{name}: the header row names the column {twice[0]!r} {header.count(twice[0])} times "
                         f"({', '.join(header)}); which one is meant is ambiguous, so rename the others")
    text = frozenset(header.index(c) for c in text_columns) if header is not None else frozenset()
    used: Optional[list[int]] = None
    if usecols is not None:
        missing = [c for c in usecols if header is None or c not in header]
        if missing:
            raise ValueError(f"{name}: no column named {missing[0]!r} in the header row"
                             + (f" ({', '.join(header)})" if header is not None else " (the file has no header row)"))
        assert header is not None
        used = [header.index(c) for c in usecols]
    skipped = frozenset(range(len(header))) - frozenset(used) if used is not None and header is not None else frozenset()
    columns = _read_fast(source, offset, delim, header, widths, text, skipped)
    if columns is None:
        columns = _read_careful(source, offset, first_line, delim, header, widths, what, text, skipped)
    if used is not None:
        columns = tuple(columns[j] for j in used)
    names = tuple(usecols) if usecols is not None else header
    return Table(name, names, columns, source, offset, first_line, delim)


def _read_fast(source: _Source, offset: int, delim: Optional[str], header: Optional[tuple[str, ...]],
               widths: tuple[int, ...], text: frozenset[int],
               skipped: frozenset[int]) -> Optional[tuple[np.ndarray, ...]]:
    """The columns by a C parser, or None when it refuses the data or its result fails a check
    (the careful pass then names the line)."""
    try:
        import pandas as pd
    except ImportError:
        pd = None
    try:
        with source.open(offset) as f:
            if pd is not None:
                chunks = pd.read_csv(f, sep=delim or r"\s+", header=None, quoting=csv.QUOTE_NONE, na_filter=False,
                                     skip_blank_lines=True, engine="c", encoding="utf-8",
                                     dtype={j: str for j in text | skipped}, chunksize=_CHUNK_ROWS)
                parts = [tuple(_narrow(frame[c].to_numpy()) for c in frame.columns) for frame in chunks]
                if not parts or len({len(p) for p in parts}) != 1:
                    return None
                joined = [_joined([p[j] for p in parts]) for j in range(len(parts[0]))]
                if any(col is None for col in joined):
                    return None
                columns = tuple(col for col in joined if col is not None)
            else:
                columns = _loadtxt(f, delim, text | skipped, len(header) if header is not None else 0)
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
        if j in text or j in skipped:
            if col.dtype.kind not in "OUT" or not all(col) or not _read_alike(col, delim):
                return None
            continue
        if col.dtype.kind != "i" and col.dtype != np.float64:
            return None
        if col.dtype == np.float64 and not (np.isfinite(col).all() and np.abs(col).max() < _EXACT_FLOAT):
            return None
    return columns


def _read_alike(col: np.ndarray, delim: Optional[str]) -> bool:
    """Whether the careful pass reads the fields of text column `col` as they are: a field with
    a quote may be part of a quoted field (split at the delimiters inside it, or opening one that
    runs over line breaks), and white space around a field is no part of it."""
    return not any((delim is not None and '"' in s) or s != s.strip() for s in col)


def _narrow(col: np.ndarray) -> np.ndarray:
    """An int64 column in the narrowest integer type that holds it (a table of small counts then
    takes less memory than its text); other columns as they are."""
    if col.dtype != np.int64 or not len(col):
        return col
    for t in _NARROW_INTS:
        info = np.iinfo(t)
        if info.min <= col.min() and col.max() <= info.max:
            return col.astype(t)
    return col


def _joined(parts: list) -> Optional[np.ndarray]:
    """One column from its chunks: integers of any widths joined as the widest; None when the
    chunks disagree on the kind (integers in one, reals or text in another) and the careful
    reading has to decide."""
    kinds = {p.dtype.kind for p in parts}
    if len(kinds) != 1:
        return None
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _loadtxt(f: BinaryIO, delim: Optional[str], text: frozenset[int], width: int) -> tuple[np.ndarray, ...]:
    """numpy.loadtxt's columns: int64 when every entry is an integer, else float64; the `text`
    columns (of `width`) as str."""
    start = f.tell()
    numeric = [j for j in range(width) if j not in text] if text else None

    def load(dtype: Any, usecols: Any) -> np.ndarray:
        f.seek(start)
        return np.loadtxt(f, delimiter=delim, dtype=dtype, ndmin=2, comments=None, encoding="utf-8", usecols=usecols)

    if not text:
        return _loadtxt_numbers(f, delim)
    try:
        arr = load(np.int64, numeric)
    except ValueError:
        arr = load(np.float64, numeric)
    words = load(str, sorted(text))
    got = iter(range(arr.shape[1]))
    return tuple(words[:, sorted(text).index(j)].astype(object) if j in text else arr[:, next(got)]
                 for j in range(width))


def _loadtxt_numbers(f: BinaryIO, delim: Optional[str]) -> tuple[np.ndarray, ...]:
    """A table of numbers by numpy.loadtxt, _CHUNK_ROWS lines at a time, integer columns
    narrowed as they come (so the int64 parse never holds the whole table)."""
    stream = io.TextIOWrapper(f, encoding="utf-8", newline="")
    parts = []
    while True:
        lines = list(itertools.islice(stream, _CHUNK_ROWS))
        if not lines:
            break
        try:
            arr = np.loadtxt(lines, delimiter=delim, dtype=np.int64, ndmin=2, comments=None)
        except ValueError:
            arr = np.loadtxt(lines, delimiter=delim, dtype=np.float64, ndmin=2, comments=None)
        if arr.size:
            parts.append(tuple(_narrow(np.ascontiguousarray(arr[:, j])) for j in range(arr.shape[1])))
    stream.detach()
    if not parts or len({len(p) for p in parts}) != 1:
        raise ValueError("rows of different widths")
    joined = [_joined([p[j] for p in parts]) for j in range(len(parts[0]))]
    if any(col is None for col in joined):
        raise ValueError("a column of integers in some rows and reals in others")
    return tuple(col for col in joined if col is not None)


def _read_careful(source: _Source, offset: int, first_line: int, delim: Optional[str],
                  header: Optional[tuple[str, ...]], widths: tuple[int, ...], what: str,
                  text: frozenset[int], skipped: frozenset[int] = frozenset()) -> tuple[np.ndarray, ...]:
    """The columns read row by row, checking every field; raises at the first bad line."""
    name = source.name
    width = len(header) if header is not None else 0
    rows: list[list[str]] = []
    for lineno, fields, row_text in _records(source, offset, first_line, delim):
        if not width:
            width = len(fields)
        want = (" or ".join(map(str, widths)) if widths and (header is None or width not in widths) else str(width))
        shown = row_text.strip()
        if widths and width not in widths:
            raise ValueError(f"{name}:{lineno}: expected {want} {what} per line; got {len(fields)} field(s): {shown!r}")
        if len(fields) != width:
            like = " (as many as the header row names)" if header is not None else " (as on the first row)"
            raise ValueError(f"{name}:{lineno}: expected {want} {what} per line{like}; got {len(fields)} "
                             f"field(s): {shown!r}")
        for j, field in enumerate(fields):
            if j in skipped:
                continue
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
    return tuple(np.array([r[j] for r in rows], dtype=object) if j in text | skipped
                 else _column(source, offset, first_line, delim, [r[j] for r in rows]) for j in range(width))


def _column(source: _Source, offset: int, first_line: int, delim: Optional[str], tokens: list[str]) -> np.ndarray:
    """One column of checked tokens: int64 when all are integers, else float64, never inexact."""
    integers = [_INTEGER.match(t) is not None for t in tokens]
    if all(integers):
        values = [int(t) for t in tokens]
        for row, v in enumerate(values):
            if abs(v) > _INT64_MAX:
                line = _line(source, offset, first_line, delim, row)
                raise ValueError(f"{source.name}:{line}: {tokens[row]} is beyond the 64-bit integer range")
        return np.array(values, dtype=np.int64)
    out = np.array([float(t) for t in tokens], dtype=np.float64)
    for row, (t, is_int) in enumerate(zip(tokens, integers)):
        if is_int and abs(int(t)) >= _EXACT_FLOAT:
            line = _line(source, offset, first_line, delim, row)
            raise ValueError(f"{source.name}:{line}: the integer {t} is in a column of real numbers, where it cannot "
                             "be read exactly (float64 holds integers exactly only below 2**53)")
        if not np.isfinite(out[row]):
            line = _line(source, offset, first_line, delim, row)
            raise ValueError(f"{source.name}:{line}: {t} is beyond the range of float64")
    return out


def _line(source: _Source, offset: int, first_line: int, delim: Optional[str], row: int) -> int:
    return Table(source.name, None, (), source, offset, first_line, delim).line_of(row)


# ---------------------------------------------------------------- per-item scores by id (evaluation logs)

_FUNC = "read_scores"
FORMATS = ("csv", "tsv", "jsonl")
_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}


def read_scores(sources: Any, *, format: Optional[str] = None, id_field: Optional[str] = None,
                score_field: Optional[str] = None, column: Optional[str] = None, system_field: Optional[str] = None,
                task_field: Optional[str] = None, stdin: Optional[TextIO] = None) -> Any:
    """Per-item scores of several systems, read from evaluation logs and aligned by item id.

    Reads per-sample JSONL logs (one JSON object per line, as lm-evaluation-harness writes them:
    ``{"doc_id": 0, "acc": 1.0, ...}``) or CSV/TSV tables with a header row: one file per
    system, or one long table with a column naming the system of each row. Tables are read as
    the command line reads them (fields stripped of surrounding white space; a field quoted
    as in RFC 4180 may hold delimiters, doubled quotes and line breaks). Gzip-compressed files
    are read as they are. Needs pandas (``pip install 'pairperm[pandas]'``).

    Parameters
    ----------
    sources : str, path, sequence of them, or mapping
        ``{system: path}``; a sequence of paths (each system named after its file's stem, the
        name without ``.gz`` and the format's suffix); or one path: one long table with
        `system_field`, else one system. ``"-"`` reads standard input.
    format : {"csv", "tsv", "jsonl"}, optional
        By default from each file's suffix (``.csv``; ``.tsv``/``.tab``;
        ``.jsonl``/``.ndjson``/``.json``), also under ``.gz``.
    id_field : str
        The field (column) naming each item, e.g. ``"doc_id"``. In CSV/TSV an id is text,
        compared as written (``1`` and ``1.0`` are two ids). In JSONL a number is compared by
        its value, exactly, as JSON has one kind of number: ``1`` and ``1.0`` are one id, while
        ``2**53 + 1`` and ``2**53`` are two and a string is never a number (``"1"`` and ``1``
        are two ids). ``true``/``false``, ``NaN`` and ``Infinity`` are refused as ids (Python
        takes ``true`` for ``1``), as are lists and objects; so are they as names of systems
        and tasks.
    score_field : str
        The field holding the per-item score, e.g. ``"acc"`` (``column`` is the same, in the
        words of tables). Integers are read exactly; JSON ``true``/``false`` become 1/0.
    system_field : str, optional
        In one long table, the field naming each row's system.
    task_field : str, optional
        A field naming each row's task: then one DataFrame per task.

    Returns
    -------
    pandas.DataFrame or dict
        Indexed by item id (in the first system's order), one column per system, ready for
        :func:`pairperm.compare_systems`; with `task_field`, ``{task: DataFrame}``.

    Raises
    ------
    ValueError
        An id scored for one system and not another, an id repeated within a system, a
        missing field, an id that is no string or finite number, malformed quoting or a
        score that is not a number: naming a few of the ids, the file (and the line).
    ImportError
        Without pandas.

    Examples
    --------
    >>> import pathlib, tempfile, pairperm
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "base.jsonl").write_text('{"doc_id": 0, "acc": true}\\n{"doc_id": 1, "acc": false}\\n'
    ...                                   '{"doc_id": 2, "acc": true}\\n')
    >>> _ = (d / "tuned.jsonl").write_text('{"doc_id": 2, "acc": true}\\n{"doc_id": 0, "acc": true}\\n'
    ...                                    '{"doc_id": 1, "acc": true}\\n')
    >>> scores = pairperm.read_scores([d / "base.jsonl", d / "tuned.jsonl"], id_field="doc_id", score_field="acc")
    >>> scores.index.tolist(), scores.to_dict("list")
    ([0, 1, 2], {'base': [1, 0, 1], 'tuned': [1, 1, 1]})
    >>> pairperm.compare_systems(scores, metric="sum").metric_values
    (2, 3)
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"{_FUNC} needs pandas: pip install pandas (or pairperm's 'pandas' extra: "
                          "pip install 'pairperm[pandas]')") from None
    if column is not None and score_field is not None and column != score_field:
        raise ValueError(f"{_FUNC}: score_field={score_field!r} and column={column!r} name the same thing; give one")
    score_field = score_field if score_field is not None else column
    if id_field is None or score_field is None:
        raise ValueError(f"{_FUNC}: id_field (the field naming each item, e.g. 'doc_id') and score_field (the "
                         "field of the score, e.g. 'acc') are both needed")
    if format is not None and format not in FORMATS:
        raise ValueError(f"{_FUNC}: format must be one of {', '.join(map(repr, FORMATS))} or None; got {format!r}")
    files = _systems_files(sources, system_field)
    fields = [f for f in (id_field, system_field, task_field) if f is not None]
    # (system, file, ids, scores, tasks) for every system of every file
    parts: list[tuple[str, str, Any, Any, Any]] = []
    for system, path in files:
        fmt = format or _format_of(path)
        frame = _read_records(str(path), fmt, fields, score_field, stdin, pd)
        if system_field is None:
            parts.append((str(system), str(path), frame[id_field], frame[score_field],
                          frame[task_field] if task_field else None))
            continue
        for name, group in frame.groupby(system_field, sort=False):
            parts.append((str(name), str(path), group[id_field], group[score_field],
                          group[task_field] if task_field else None))
    if task_field is None:
        return _aligned([(s, f, ids, scores) for s, f, ids, scores, _ in parts], id_field, system_field, pd)
    tasks: dict = {}
    for s, f, ids, scores, task in parts:
        # Task names coded once: comparing a string column with each name costs a pass per task.
        codes, names = pd.factorize(task)
        for k, t in enumerate(names):
            mask = codes == k
            tasks.setdefault(t, []).append((s, f"{f} (task {t!r})", ids[mask], scores[mask]))
    return {t: _aligned(p, id_field, system_field, pd) for t, p in tasks.items()}


def _systems_files(sources: Any, system_field: Optional[str]) -> list[tuple[Optional[str], Any]]:
    if isinstance(sources, Mapping):
        if system_field is not None:
            raise ValueError(f"{_FUNC}: system_field names the systems of one long table; give one path, not a "
                             "mapping of systems")
        return [(str(s), p) for s, p in sources.items()]
    paths = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if not paths:
        raise ValueError(f"{_FUNC}: no files given")
    if system_field is not None:
        return [(None, p) for p in paths]
    out: list[tuple[Optional[str], Any]] = []
    seen: dict = {}
    for p in paths:
        stem = _stem(p)
        if stem in seen:
            raise ValueError(f"{_FUNC}: {p} and {seen[stem]} both name a system {stem!r} (systems are named after "
                             "the file name); give a mapping {system: path}")
        seen[stem] = p
        out.append((stem, p))
    return out


def _stem(path: Any) -> str:
    if str(path) == "-":
        return "stdin"
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).stem


def _format_of(path: Any) -> str:
    name = str(path)
    suffix = Path(name[:-3] if name.endswith(".gz") else name).suffix.lower()
    if suffix not in _SUFFIXES:
        raise ValueError(f"{_FUNC}: {name}: cannot tell the format from the name; give format= "
                         f"({', '.join(map(repr, FORMATS))})")
    return _SUFFIXES[suffix]


def _read_records(name: str, fmt: str, text_fields: list[str], score_field: str, stdin: Optional[TextIO],
                  pd: Any) -> Any:
    """A DataFrame of the file's `text_fields` and its `score_field` (int64 or float64)."""
    if fmt != "jsonl":
        table = read_table(name, stdin=stdin, delim="\t" if fmt == "tsv" else ",",
                           what=f"fields ({score_field!r}: a number)", text_columns=tuple(text_fields),
                           usecols=(*text_fields, score_field))
        # Users get int64 scores: narrow integers would wrap in their arithmetic.
        return pd.DataFrame({c: col.astype(np.int64) if col.dtype.kind == "i" else col
                             for c, col in zip(table.header or (), table.columns)})
    source = _Source(name, stdin)
    frame = None
    try:
        with source.open() as f:
            frame = pd.read_json(f, lines=True, dtype=False, precise_float=True)
    except ValueError:
        pass
    wanted = [*text_fields, score_field]
    if frame is not None and all(c in frame.columns for c in wanted) and len(frame):
        frame = frame[wanted]
        score = frame[score_field]
        if score.dtype == np.bool_:
            frame = frame.assign(**{score_field: score.astype(np.int64)})
            score = frame[score_field]
        # Fields of ids that are all integers or all strings only: one that mixes integers with
        # floats comes back as float64, rounding integer ids beyond 2^53 onto each other, and
        # one holding lists or objects is no id; the careful reader keeps or refuses each value.
        ok = not frame[text_fields].isna().to_numpy().any() and all(
            frame[f].dtype == np.int64 or pd.api.types.infer_dtype(frame[f], skipna=False) == "string"
            for f in text_fields)
        if score.dtype == np.float64:
            ok = ok and bool(np.isfinite(score).all()) and (not len(score) or float(np.abs(score).max()) < _EXACT_FLOAT)
        elif score.dtype != np.int64:
            ok = False
        if ok:
            return frame
    return _read_jsonl_careful(source, text_fields, score_field, pd)


def _read_jsonl_careful(source: _Source, text_fields: list[str], score_field: str, pd: Any) -> Any:
    """JSONL record by record, raising at the first bad line."""
    name = source.name
    values: dict = {f: [] for f in (*text_fields, score_field)}
    lines = []
    for lineno, line in source.lines(0, 1):
        if lineno == 1:
            line = line.lstrip("\ufeff")  # a byte-order mark, as the CSV reader accepts
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}:{lineno}: not a JSON object ({exc.msg}): {line.strip()[:80]!r}") from None
        if not isinstance(record, dict):
            raise ValueError(f"{name}:{lineno}: expected a JSON object per line; got {line.strip()[:80]!r}")
        for f in values:
            if f not in record:
                raise ValueError(f"{name}:{lineno}: no field {f!r} in the record (fields: {', '.join(record)})")
            if record[f] is None:
                raise ValueError(f"{name}:{lineno}: the field {f!r} is null; every record needs a value there")
        for f in text_fields:
            value = record[f]
            if isinstance(value, bool):
                # Python's True == 1: a boolean would be one id with 1 (or 0), one system with it.
                raise ValueError(f"{name}:{lineno}: the field {f!r} is {json.dumps(value)}; ids and the names of "
                                 "systems and tasks must be a string or a number, never true or false")
            if not isinstance(value, (str, int, float)):
                raise ValueError(f"{name}:{lineno}: the field {f!r} must be a string or a number; got {value!r}")
            if isinstance(value, float) and not math.isfinite(value):
                # NaN equals nothing, not even itself, and neither NaN nor Infinity is JSON (Python's
                # json reads both).
                raise ValueError(f"{name}:{lineno}: the field {f!r} is {json.dumps(value)}, not a finite number; "
                                 "ids and the names of systems and tasks must be a string or a finite number")
        score = record[score_field]
        if isinstance(score, bool):
            score = int(score)
        if not isinstance(score, (int, float)) or (isinstance(score, float) and not np.isfinite(score)):
            raise ValueError(f"{name}:{lineno}: {score_field!r} must be a finite number or true/false; got {score!r}")
        if isinstance(score, int) and abs(score) > _INT64_MAX:
            raise ValueError(f"{name}:{lineno}: {score_field!r} = {score} is beyond the 64-bit integer range")
        for f in text_fields:
            values[f].append(record[f])
        values[score_field].append(score)
        lines.append(lineno)
    if not lines:
        raise ValueError(f"{name}: no records: the file is empty")
    scores = values[score_field]
    if all(isinstance(v, int) for v in scores):
        values[score_field] = np.array(scores, dtype=np.int64)
    else:
        for v, lineno in zip(scores, lines):
            if isinstance(v, int) and abs(v) >= _EXACT_FLOAT:
                raise ValueError(f"{name}:{lineno}: {score_field!r} = {v} is an integer among real-valued scores, "
                                 "where it cannot be read exactly (float64 holds integers exactly only below 2**53)")
        values[score_field] = np.array(scores, dtype=np.float64)
    frame = pd.DataFrame(values)
    for f in text_fields:
        # Integers next to floats or strings stay the Python values they were written as.
        if frame[f].dtype.kind == "f" and not all(isinstance(v, float) for v in values[f]):
            frame[f] = pd.Series(values[f], dtype=object)
    return frame


def _aligned(parts: list[tuple[str, str, Any, Any]], id_field: str, system_field: Optional[str], pd: Any) -> Any:
    """One DataFrame indexed by id, a column per system, after checking every system has every id once."""
    series, labels = [], []
    seen: dict = {}
    for system, file, ids, scores in parts:
        if system in seen:
            raise ValueError(f"{_FUNC}: {file} and {seen[system]} both hold system {system!r}")
        seen[system] = file
        label = f"system {system!r} in {file}"
        series.append(pd.Series(np.asarray(scores), index=pd.Index(np.asarray(ids), name=id_field), name=system))
        labels.append(label)
    series = align_by_index(series, labels, _FUNC)
    frame = pd.DataFrame({s.name: s.to_numpy() for s in series}, index=series[0].index)
    frame.columns.name = system_field
    return frame
