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
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import itertools
import re
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Generator, NamedTuple, Optional, TextIO, Union

import numpy as np

__all__ = ["Table", "read_table"]

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
EXACT_FLOAT = 2.0**53
INT64_MAX = 2**63 - 1
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
    _source: Source
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


class Source:
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


def _records(source: Source, offset: int, first_line: int, delim: Optional[str]) -> Generator[_Record, None, None]:
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
    source = Source(name, stdin)
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


def _read_fast(source: Source, offset: int, delim: Optional[str], header: Optional[tuple[str, ...]],
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
        if col.dtype == np.float64 and not (np.isfinite(col).all() and np.abs(col).max() < EXACT_FLOAT):
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


def _read_careful(source: Source, offset: int, first_line: int, delim: Optional[str],
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


def _column(source: Source, offset: int, first_line: int, delim: Optional[str], tokens: list[str]) -> np.ndarray:
    """One column of checked tokens: int64 when all are integers, else float64, never inexact."""
    integers = [_INTEGER.match(t) is not None for t in tokens]
    if all(integers):
        values = [int(t) for t in tokens]
        for row, v in enumerate(values):
            if abs(v) > INT64_MAX:
                line = _line(source, offset, first_line, delim, row)
                raise ValueError(f"{source.name}:{line}: {tokens[row]} is beyond the 64-bit integer range")
        return np.array(values, dtype=np.int64)
    out = np.array([float(t) for t in tokens], dtype=np.float64)
    for row, (t, is_int) in enumerate(zip(tokens, integers)):
        if is_int and abs(int(t)) >= EXACT_FLOAT:
            line = _line(source, offset, first_line, delim, row)
            raise ValueError(f"{source.name}:{line}: the integer {t} is in a column of real numbers, where it cannot "
                             "be read exactly (float64 holds integers exactly only below 2**53)")
        if not np.isfinite(out[row]):
            line = _line(source, offset, first_line, delim, row)
            raise ValueError(f"{source.name}:{line}: {t} is beyond the range of float64")
    return out


def _line(source: Source, offset: int, first_line: int, delim: Optional[str], row: int) -> int:
    return Table(source.name, None, (), source, offset, first_line, delim).line_of(row)
