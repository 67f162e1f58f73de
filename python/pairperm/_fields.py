"""Fields of JSON log records, the machinery every reader of JSON logs shares: paths into
nested records, row filters, maps from written values to scores, and JSON lines read fast.

- A field path names a value inside a record by its keys, separated by dots: ``"doc_id"``,
  ``"doc.article"``, ``"scores.match.value"``; where the value reached is a list, a part that
  is a decimal number indexes it (``"resps.0.0"``). A key that holds a dot is given with the
  path as a sequence of its parts: ``("scores", "a.b")``.
- A filter (`where`) keeps the records whose fields hold given values: ``{"filter":
  "strict-match"}``, or ``{"epoch": [1, 2]}`` for any value of a list. A value matches one of
  its own JSON kind only (``true`` is no 1, ``"1"`` no 1), numbers by value (``1`` is ``1.0``).
  The command line writes ``filter=strict-match`` (:func:`parse_where`).
- A value map turns the values a log writes into numbers (``{"C": 1, "I": 0}``); a value it
  does not map is an error naming the value, never a silent 0. Without a map, numbers are read
  as they are and ``true``/``false`` as 1/0.
- JSON lines are parsed by orjson where installed (else by the json module, slower, to the same
  values), one line at a time, keeping only the fields asked for: a line's long fields
  (documents, prompts, responses) are parsed and dropped at once. A line orjson refuses is read
  again by the json module (it accepts ``NaN`` and ``Infinity``, which Python's json writes,
  so that they are refused only where a field needs a number), and so is a line where a field
  asked for holds a number orjson may have rounded (an integer beyond 64 bits). Gzip files are
  read as they are, ``"-"`` is standard input. Every error names the file and the line.

:func:`read_jsonl_logs` reads per-item scores of any JSON lines log with these pieces.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Callable, Optional, TextIO, Union

import numpy as np

from ._files import _systems_files
from ._metrics import METRICS, metric_named
from ._records import Evaluation, Records, Samples, assemble, default_metric, pandas_or_raise
from ._tables import EXACT_FLOAT, INT64_MAX, Source
from ._validation import few

__all__ = ["FieldPath", "ValueMap", "Where", "iter_jsonl", "parse_where", "read_jsonl_logs", "records_from_columns"]

FieldLike = Union[str, Sequence[Union[str, int]]]
#: A filter: {path: accepted value or list of them}, or the command line's "path=value" items.
WhereLike = Union[Mapping[Any, Any], str, Sequence[str], None]
MetricLike = Union[str, Mapping[str, str], None]

_INDEX = re.compile(r"[0-9]+\Z")
# orjson reads an integer beyond 64 bits as a float: a field's float this large may be one.
_BEYOND_INT64 = 2.0**63
_SHOWN = 80


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: What FieldPath.lookup gives for a path a record lacks.
MISSING: Any = _Missing()


def _shown(text: Union[str, bytes]) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = text.strip()
    return repr(text[:_SHOWN] + ("..." if len(text) > _SHOWN else ""))


def json_text(value: Any) -> str:
    """A value as its log writes it, for messages (true, null, "C", [1, 2])."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


class FieldPath:
    """A path to a value inside a nested JSON record (see the module's docstring)."""

    __slots__ = ("_steps", "parts", "text")

    def __init__(self, path: FieldLike) -> None:
        if isinstance(path, FieldPath):
            path = path.parts
        if isinstance(path, str):
            parts: tuple[Any, ...] = tuple(path.split("."))
        elif isinstance(path, Sequence) and not isinstance(path, (bytes, bytearray)):
            parts = tuple(str(p) if isinstance(p, int) and not isinstance(p, bool) else p for p in path)
        else:
            parts = ()
        if not parts or any(not isinstance(p, str) or not p for p in parts):
            raise ValueError(f"a field path names keys separated by dots, such as 'doc_id' or 'doc.article' (or is a "
                             f"sequence of keys); got {path!r}")
        self.parts: tuple[str, ...] = parts
        self.text = ".".join(parts) if not any("." in p for p in parts) else repr(parts)
        # (key, list index or None) per step: a part of digits also indexes a list.
        self._steps = tuple((p, int(p) if _INDEX.match(p) else None) for p in parts)

    def __repr__(self) -> str:
        return f"FieldPath({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldPath) and other.parts == self.parts

    def __hash__(self) -> int:
        return hash(self.parts)

    def lookup(self, record: Any) -> Any:
        """The value at the path, or MISSING."""
        # A path through objects is reached fastest by subscripts, which fail (KeyError, or a
        # TypeError on a list, a string or a number) wherever the walk below takes another way.
        try:
            value = record
            for key in self.parts:
                value = value[key]
            return value
        except (KeyError, TypeError):
            pass
        value = record
        for key, index in self._steps:
            if isinstance(value, dict):
                value = value.get(key, MISSING)
                if value is MISSING:
                    return MISSING
            elif isinstance(value, list) and index is not None and index < len(value):
                value = value[index]
            else:
                return MISSING
        return value

    def get(self, record: Any, name: str, lineno: int) -> Any:
        """The value at the path; a ValueError naming the path, the file and the line if the
        record lacks it."""
        value = self.lookup(record)
        if value is MISSING:
            raise ValueError(f"{name}:{lineno}: {self.missing(record)}")
        return value

    def missing(self, record: Any) -> str:
        """Why the record has no value at the path, for a message."""
        value = record
        for i, (key, index) in enumerate(self._steps):
            where = "the record" if i == 0 else repr(".".join(self.parts[:i]))
            if isinstance(value, dict):
                if key not in value:
                    return (f"no field {self.text!r}: {where} has no key {key!r} (its keys: "
                            f"{', '.join(map(str, list(value)[:12]))}{', ...' if len(value) > 12 else ''})")
                value = value[key]
            elif isinstance(value, list):
                if index is None or index >= len(value):
                    return (f"no field {self.text!r}: {where} is a list of {len(value)} item(s), "
                            + ("which has no item " if index is not None else "and a list's items are numbered, not ")
                            + f"{key!r}")
                value = value[index]
            else:
                return f"no field {self.text!r}: {where} is {json_text(value)}, neither an object nor a list"
        return f"the field {self.text!r} is there"  # lookup found it: not reached by get


def _match_key(value: Any) -> Optional[tuple[Any, ...]]:
    """What a filter compares: a JSON scalar tagged by its kind (a boolean equals no number), or
    None for a list or an object, which no filter value matches."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, str):
        return ("str", value)
    if value is None:
        return ("null",)
    return None


class Where:
    """A row filter: the records whose fields each hold one of the accepted values."""

    def __init__(self, where: WhereLike, func: str) -> None:
        spec = parse_where(where) if isinstance(where, str) or (
            isinstance(where, Sequence) and all(isinstance(w, str) for w in where)) else where
        if not isinstance(spec, Mapping) or not spec:
            raise ValueError(f"{func}: where must map field paths to the values kept, e.g. {{'filter': 'strict-match'}}, "
                             f"or be 'path=value' items; got {where!r}")
        self.fields = [FieldPath(p) for p in spec]
        self.accepted: list[frozenset[tuple[Any, ...]]] = []
        for path, wanted in zip(self.fields, spec.values()):
            values = list(wanted) if isinstance(wanted, (list, tuple, set, frozenset)) else [wanted]
            keys = set()
            for v in values:
                key = _match_key(v)
                if key is None or (isinstance(v, float) and not math.isfinite(v)):
                    raise ValueError(f"{func}: where: the value {v!r} of {path.text!r} is no JSON string, finite number, "
                                     "true, false or null")
                keys.add(key)
            self.accepted.append(frozenset(keys))

    def __repr__(self) -> str:
        return f"Where({', '.join(f.text for f in self.fields)})"

    def matches(self, values: Sequence[Any]) -> bool:
        """Whether the values of the filter's fields, in order, are all accepted."""
        return all(_match_key(v) in ok for v, ok in zip(values, self.accepted))


def parse_where(items: Union[str, Iterable[str]]) -> dict[str, Any]:
    """The command line's filters, ``"path=value"`` each, as a mapping for `where`.

    A value is read as JSON where it is a JSON number, ``true``, ``false``, ``null``, a quoted
    string or a list of these (``epoch=[1,2]``: any of them), else as the text written
    (``filter=strict-match``); so ``n=1`` is the number 1 and ``n="1"`` the string. A path given
    twice accepts either value.
    """
    if isinstance(items, str):
        items = [items]
    out: dict[str, Any] = {}
    for item in items:
        path, eq, text = item.partition("=")
        if not eq or not path.strip():
            raise ValueError(f"a filter is written path=value, such as filter=strict-match; got {item!r}")
        path = path.strip()
        value = _cli_value(text.strip())
        if path in out:
            before = out[path] if isinstance(out[path], list) else [out[path]]
            out[path] = before + (value if isinstance(value, list) else [value])
        else:
            out[path] = value
    return out


def _cli_value(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text

    def scalar(v: Any) -> bool:
        return v is None or isinstance(v, (bool, int, str)) or (isinstance(v, float) and math.isfinite(v))

    if scalar(value) or (isinstance(value, list) and value and all(scalar(v) for v in value)):
        return value
    return text  # NaN, Infinity, an object: the text as written


class ValueMap:
    """Turns the value a log writes into a score: through the map when one is given (every
    value must be in it), else numbers as they are and true/false as 1/0."""

    def __init__(self, values: Optional[Mapping[Any, Any]], field: str, func: str) -> None:
        self.field = field
        self.map: Optional[dict[tuple[Any, ...], Union[int, float]]] = None
        self.shown = ""
        if values is None:
            return
        if not isinstance(values, Mapping) or not values:
            raise ValueError(f"{func}: values must map the values a log writes to numbers, e.g. {{'C': 1, 'I': 0}}; "
                             f"got {values!r}")
        self.map = {}
        for written, score in values.items():
            key = _match_key(written)
            if key is None:
                raise ValueError(f"{func}: values: {written!r} is no JSON scalar a log could write")
            if isinstance(score, bool):
                score = int(score)
            if not isinstance(score, (int, float)) or not math.isfinite(score) or abs(score) > INT64_MAX:
                raise ValueError(f"{func}: values: {written!r} must map to a finite number; got {score!r}")
            self.map[key] = score
        self.shown = ", ".join(json_text(k) for k in list(values)[:8]) + (", ..." if len(values) > 8 else "")

    def __call__(self, value: Any, name: str, lineno: int) -> Union[int, float]:
        if self.map is not None:
            key = _match_key(value)
            if key is None or key not in self.map:
                raise ValueError(f"{name}:{lineno}: the score {self.field!r} is {json_text(value)}, which values= does "
                                 f"not map (it maps {self.shown})")
            return self.map[key]
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            if abs(value) > INT64_MAX:
                raise ValueError(f"{name}:{lineno}: the score {self.field!r} = {value} is beyond the 64-bit integer range")
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"{name}:{lineno}: the score {self.field!r} is {value}, not a finite number")
            return value
        hint = (f"; give values= to map such values to numbers (e.g. {{{json_text(value)}: 1}})"
                if isinstance(value, str) else "")
        raise ValueError(f"{name}:{lineno}: the score {self.field!r} is {json_text(value)}, not a number{hint}")


def label(value: Any, what: str, name: str, lineno: int) -> Union[str, int, float]:
    """An id, a group or a name as written: a string or a finite number (true/false would be one
    label with 1/0 in Python, and NaN equals nothing, not even itself)."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise ValueError(f"{name}:{lineno}: the {what} is {json_text(value)}; it must be a string or a finite number")


def _loads() -> Callable[[bytes], Any]:
    try:
        import orjson
    except ImportError:
        return json.loads
    loads: Callable[[bytes], Any] = orjson.loads
    return loads


def json_document(data: bytes) -> Any:
    """A whole JSON document: by orjson where installed, by the json module where orjson refuses
    it (the NaN and Infinity Python's json writes) or is not installed."""
    try:
        return _loads()(data)
    except ValueError:  # orjson's JSONDecodeError is one
        return json.loads(data)


def json_record(raw: bytes, name: str, lineno: int) -> Any:
    """One line by the json module (exact integers, NaN and Infinity accepted), or a
    ValueError naming the line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}:{lineno}: not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1})"
                         ) from None
    text = text.rstrip("\r\n")  # so that an error's column is one of the line's
    if lineno == 1:
        text = text.lstrip("\ufeff")  # a byte-order mark, which orjson refuses
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        why = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg  # "Unterminated string starting at"
        raise ValueError(f"{name}:{lineno}: not JSON at column {exc.colno} ({why}): {_shown(text)}") from None
    except RecursionError:
        raise ValueError(f"{name}:{lineno}: JSON nested too deeply to read") from None


def iter_jsonl(source: Source) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """(line number, bytes, object) of every non-blank line of a JSON lines file."""
    loads = _loads()
    name = source.name
    try:
        with source.open() as f:
            for lineno, raw in enumerate(f, 1):
                if not raw or raw.isspace():
                    continue
                try:
                    record = loads(raw)
                except ValueError:  # orjson's JSONDecodeError is one
                    record = json_record(raw, name, lineno)
                if not isinstance(record, dict):
                    raise ValueError(f"{name}:{lineno}: expected a JSON object per line; got {_shown(raw)}")
                yield lineno, raw, record
    except (OSError, EOFError) as exc:  # a damaged gzip stream
        raise ValueError(f"{name}: cannot read the file: {exc}") from None


def take(fields: Sequence[FieldPath], record: dict[str, Any], raw: bytes, name: str, lineno: int) -> list[Any]:
    """The values of `fields` in a record read by iter_jsonl, exact: where one is a float that
    orjson may have rounded from an integer beyond 64 bits, the line is read again by json."""
    got = [f.get(record, name, lineno) for f in fields]
    for v in got:
        if isinstance(v, float) and not abs(v) < _BEYOND_INT64:
            record = json_record(raw, name, lineno)
            return [f.get(record, name, lineno) for f in fields]
    return got


class Names:
    """Task and system names read from fields: the text of a string or an integer, refusing a
    log that writes one name both ways (1 and "1" would become one task)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.kinds: dict[str, tuple[type, str]] = {}

    def __call__(self, value: Any, name: str, lineno: int) -> str:
        v = label(value, f"{self.what} name", name, lineno)
        if isinstance(v, float):
            raise ValueError(f"{name}:{lineno}: the {self.what} name is {json_text(v)}; it must be a string or an "
                             "integer")
        text = str(v)
        kind = self.kinds.get(text)
        if kind is None:
            self.kinds[text] = (type(v), f"{name}:{lineno}")
        elif kind[0] is not type(v):
            raise ValueError(f"{name}:{lineno}: the {self.what} {json_text(v)} is written as "
                             f"{'text' if kind[0] is str else 'a number'} at {kind[1]}; name it one way")
        return text


def records_from_columns(columns: Mapping[str, Sequence[Any]], metric: MetricLike, func: str, pd: Any) -> Records:
    """Records of one score per row: `columns` holds per row ``task``, ``system``, ``item``,
    optionally ``sample`` and ``group``, ``score`` (Python ints and floats, checked finite)
    and ``file``/``line``.

    Each task's metric: `metric` (one name for every task, or {task: name}); a task it does not
    name gets "accuracy" when its every score is 0 or 1 (written 1, 1.0 or true alike), else
    "mean". A metric of integer scores ("accuracy", "sum" ...) needs integral scores. The
    scores are int64 when every score is an integer (1.0 included), else float64.
    """
    score = np.array(columns["score"], dtype=object)
    real = score.astype(np.float64)  # exact but for integers of 2**53 and more, which are neither 0 nor 1
    integral = real == np.floor(real)
    lines = np.asarray(columns["line"], dtype=np.int64)
    codes, tasks = pd.factorize(pd.Series(columns["task"], dtype=object), sort=False)
    named = _metrics_named(metric, list(tasks), func)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(tasks) + 1))
    metrics: dict[str, str] = {}
    for k, t in enumerate(tasks):
        rows = order[bounds[k]:bounds[k + 1]]
        if t in named:
            bad = rows[~integral[rows]]
            if METRICS[named[t]].integer and len(bad):
                raise ValueError(f"{func}: {columns['file'][bad[0]]}:{lines[bad[0]]}: task {t!r} scores "
                                 f"{json_text(score[bad[0]])}, which is no integer; the metric {named[t]!r} counts "
                                 "integer scores (give 'mean' for real-valued ones)")
            metrics[t] = named[t]
        else:
            metrics[t] = default_metric(real[rows])
    values = _score_array(score, real, integral, columns["file"], lines, func)
    # Ids and groups as the Python values read: pandas would make integers next to one float all
    # floats (3 becoming 3.0, integers beyond 2**53 rounded onto each other).
    frame = pd.DataFrame({c: (values if c == "score" else pd.Series(columns[c], dtype=object) if c in ("item", "group")
                              else columns[c]) for c in columns})
    return Records(frame, ("score",), metrics)


def _metrics_named(metric: MetricLike, tasks: list[str], func: str) -> dict[str, str]:
    if metric is None:
        return {}
    named = {t: metric for t in tasks} if isinstance(metric, str) else dict(metric)
    unknown = [t for t in named if t not in tasks]
    if unknown:
        raise ValueError(f"{func}: metric names the task(s) {few(unknown)}, which the logs do not hold; tasks: "
                         f"{few(tasks, 12)}")
    for t, m in named.items():
        row = metric_named(m)
        if row is None:
            raise ValueError(f"{func}: unknown metric {m!r} for task {t!r}; one score per item takes one of "
                             f"{', '.join(n for n, r in METRICS.items() if r.per_item)}")
        if not row.per_item:
            raise ValueError(f"{func}: the metric {m!r} needs statistics per item ({row.statistics}); these logs give one "
                             "score per item")
    return named


def _score_array(score: np.ndarray, real: np.ndarray, integral: np.ndarray, files: Sequence[Any], lines: np.ndarray,
                 func: str) -> np.ndarray:
    """int64 when every score is an integer (1.0 too, when below 2**53, where floats are
    exact integers), else float64, which holds an integer exactly only below 2**53."""
    big = np.flatnonzero(np.abs(real) >= EXACT_FLOAT)
    big_integers = [int(i) for i in big if isinstance(score[i], int)]
    if integral.all() and len(big_integers) == len(big):
        return score.astype(np.int64)
    if big_integers:
        row = big_integers[0]
        raise ValueError(f"{func}: {files[row]}:{lines[row]}: the integer score {score[row]} is among real-valued scores, "
                         "where it cannot be read exactly (float64 holds integers exactly only below 2**53); read its "
                         "task apart")
    return real


def read_jsonl_logs(paths: Any, *, id_field: FieldLike, score_field: FieldLike, task_field: Optional[FieldLike] = None,
                    system_field: Optional[FieldLike] = None, group_field: Optional[FieldLike] = None,
                    sample_field: Optional[FieldLike] = None, where: WhereLike = None,
                    values: Optional[Mapping[Any, Any]] = None, metric: MetricLike = None, task: Optional[str] = None,
                    samples: Samples = "columns", stdin: Optional[TextIO] = None) -> Evaluation:
    """Per-item scores of several systems from JSON lines logs, by field paths into each line.

    Parameters
    ----------
    paths : str, path, sequence of them, or mapping
        ``{system: path}``; a sequence of paths, each system named after its file's stem (the
        name without ``.gz`` and the suffix); or one path. ``"-"`` reads standard input. Gzip
        files are read as they are.
    id_field, score_field : str or sequence of str
        Field paths (``"doc_id"``, ``"scores.match.value"``, ``"resps.0.0"``; a key holding
        a dot as a sequence of keys) of each item's id (a string or a finite number) and its
        score (a number, true/false as 1/0, or any value through `values`).
    task_field, system_field : str, optional
        Paths of the task and the system of each line (strings or integers); without
        `system_field` each file is one system, without `task_field` all lines are one task,
        named `task` (by default the score field's path).
    group_field : str, optional
        The exchangeable unit of each item (a passage id, ``"doc.article"``); one per item.
    sample_field : str, optional
        An integer naming the sample (repeat, epoch) of the item a line scores: then
        ``(N, k)`` scores, or rows grouped by item with ``samples="groups"``.
    where : mapping or str or sequence of str, optional
        Keep only the lines whose fields hold these values: ``{"filter": "strict-match"}``,
        ``{"epoch": [1, 2]}``, or the command line's ``"filter=strict-match"``
        (:func:`parse_where`). A line without the field is an error.
    values : mapping, optional
        Written value -> score (``{"C": 1, "I": 0}``); every score must then be in it.
    metric : str or mapping, optional
        The metric as :func:`pairperm.compare_systems` takes it, for every task or
        ``{task: metric}``; by default "accuracy" for a task whose scores are all 0 or 1, else
        "mean".

    Returns
    -------
    pairperm.Evaluation

    Raises
    ------
    ValueError
        A line that is no JSON object, lacks a field or holds a value of the wrong kind; an
        item missing for a system or scored twice: naming the file and the line.
    ImportError
        Without pandas (``pip install 'pairperm[logs]'``).

    Examples
    --------
    >>> import json, pathlib, tempfile, pairperm
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for system, grades in {"base": "CICP", "tuned": "CCIC"}.items():
    ...     lines = [{"sample": {"id": f"q{i}"}, "scores": {"match": {"value": g}}, "split": "test"}
    ...              for i, g in enumerate(grades)]
    ...     _ = (d / f"{system}.jsonl").write_text("".join(json.dumps(x) + "\\n" for x in lines))
    >>> ev = pairperm.read_jsonl_logs([d / "base.jsonl", d / "tuned.jsonl"], id_field="sample.id",
    ...                               score_field="scores.match.value", values={"C": 1, "I": 0, "P": 0.5},
    ...                               where="split=test", task="qa")
    >>> ev.metrics, ev.scores["qa"]["base"].tolist(), ev.scores["qa"]["tuned"].tolist()
    ({'qa': 'mean'}, [1.0, 0.0, 1.0, 0.5], [1.0, 1.0, 0.0, 1.0])
    """
    func = "read_jsonl_logs"
    pd = pandas_or_raise(func)
    try:
        files = _systems_files(paths, None if system_field is None else str(system_field))
    except ValueError as exc:  # the message names read_scores, whose rule for naming systems this is
        raise ValueError(str(exc).replace("read_scores:", f"{func}:", 1)) from None
    if task is not None and task_field is not None:
        raise ValueError(f"{func}: task names the one task of logs without task_field; give one of them")
    named = {"item": FieldPath(id_field), "score": FieldPath(score_field)}
    for column, path in (("task", task_field), ("system", system_field), ("sample", sample_field),
                         ("group", group_field)):
        if path is not None:
            named[column] = FieldPath(path)
    keep = Where(where, func) if where is not None else None
    fields = [*named.values(), *(keep.fields if keep is not None else ())]
    to_score = ValueMap(values, named["score"].text, func)
    task_name = task if task is not None else named["score"].text
    tasks, systems = Names("task"), Names("system")
    columns: dict[str, list[Any]] = {c: [] for c in ("task", "system", "item", "sample", "group", "score", "file", "line")
                                     if c in named or c in ("task", "system", "file", "line")}
    n = len(named)
    for system, path in files:
        source = Source(str(path), stdin)
        name = source.name
        for lineno, raw, record in iter_jsonl(source):
            got = take(fields, record, raw, name, lineno)
            if keep is not None and not keep.matches(got[n:]):
                continue
            row = dict(zip(named, got))
            columns["item"].append(label(row["item"], "id", name, lineno))
            columns["score"].append(to_score(row["score"], name, lineno))
            columns["task"].append(tasks(row["task"], name, lineno) if "task" in row else task_name)
            columns["system"].append(systems(row["system"], name, lineno) if "system" in row else system)
            if "sample" in row:
                v = row["sample"]
                if isinstance(v, bool) or not isinstance(v, int):
                    raise ValueError(f"{name}:{lineno}: the sample {named['sample'].text!r} is {json_text(v)}; it must "
                                     "be an integer")
                columns["sample"].append(v)
            if "group" in row:
                columns["group"].append(label(row["group"], "group", name, lineno))
            columns["file"].append(name)
            columns["line"].append(lineno)
    if not columns["line"]:
        shown = ", ".join(str(p) for _, p in files[:3])
        raise ValueError(f"{func}: no lines to read in {shown}" + (" (where= kept none)" if keep is not None else ""))
    return assemble(records_from_columns(columns, metric, func, pd), samples=samples, func=func)
