"""Argument checking shared by every public function: clear errors, never a wrong answer."""

from __future__ import annotations

import math
import numbers
import re
from typing import Any, Literal, NoReturn, Optional, Sequence, overload

import numpy as np

# Defined in the public pairperm.typing; re-exported here for the modules that import them from here.
from .typing import Alternative as Alternative
from .typing import ArrayLike as ArrayLike

ALTERNATIVES = ("two-sided", "greater", "less")

#: The default number of resamples of every sampling method.
N_RESAMPLES = 10_000
#: Default relative tolerance for ties of float statistics.
RTOL = 1e-12

# Largest magnitude accepted for one value; sums are checked again in the C++ core.
_MAX_ABS = 2**61

REAL_VALUED_HINT = "exact distributions need integer effects; pairperm.permutation_test takes real-valued scores"


def check_alternative(alternative: Any, func: str = "") -> str:
    if not isinstance(alternative, str) or alternative not in ALTERNATIVES:
        raise ValueError(f"{_prefix(func)}alternative must be one of {', '.join(map(repr, ALTERNATIVES))}; "
                         f"got {alternative!r}")
    return alternative


def check_method(method: Any, valid: tuple[str, ...], func: str = "") -> str:
    if not isinstance(method, str) or method not in valid:
        raise ValueError(f"{_prefix(func)}method must be one of {', '.join(map(repr, valid))}; got {method!r}")
    return method


def _prefix(func: str) -> str:
    return f"{func}: " if func else ""


#: Largest n_resamples accepted: the hit counts and p = (1 + hits) / (1 + K) stay exact in float64.
MAX_RESAMPLES = 2**53 - 2


def check_n_resamples(n_resamples: Any, func: str = "") -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral):
        raise ValueError(f"{_prefix(func)}n_resamples must be a positive integer; got {n_resamples!r}")
    if not 1 <= int(n_resamples) <= MAX_RESAMPLES:
        raise ValueError(f"{_prefix(func)}n_resamples must be between 1 and 2**53 - 2; got {n_resamples}")
    return int(n_resamples)


def check_rtol(rtol: Any, func: str) -> Optional[float]:
    """Relative tolerance for ties of float statistics: None (the statistic's default) or a
    finite number in [0, 1)."""
    if rtol is None:
        return None
    if isinstance(rtol, bool) or not isinstance(rtol, numbers.Real) or not (math.isfinite(rtol) and 0 <= float(rtol) < 1):
        raise ValueError(f"{func}: rtol must be a finite number in [0, 1); got {rtol!r}")
    return float(rtol)


def check_n_jobs(n_jobs: Any, func: str) -> int:
    """Threads for the compiled core: None means all cores (passed on as 0)."""
    if n_jobs is None:
        return 0
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs < 1:
        raise ValueError(f"{func}: n_jobs must be None (all cores) or an integer >= 1; got {n_jobs!r}")
    return int(n_jobs)


@overload
def check_probability(value: Any, name: str, func: str, *, optional: Literal[False] = False) -> float: ...
@overload
def check_probability(value: Any, name: str, func: str, *, optional: bool) -> Optional[float]: ...
def check_probability(value: Any, name: str, func: str, *, optional: bool = False) -> Optional[float]:
    """A number strictly between 0 and 1 (alpha, confidence_level)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < float(value) < 1:
        raise ValueError(f"{func}: {name} must be a number in (0, 1){' or None' if optional else ''}; got {value!r}")
    return float(value)


def check_statistic(statistic: Any, func: str) -> Any:
    if statistic is not None and not callable(statistic):
        raise ValueError(f"{func}: statistic must be None or a callable; got {type(statistic).__name__}")
    return statistic


def check_rng(rng: Any, func: str = "") -> None:
    """The accepted kinds of `rng`, checked without drawing from it."""
    if rng is None or isinstance(rng, np.random.Generator):
        return
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"{_prefix(func)}rng seed must be non-negative; got {rng}")
        return
    raise ValueError(f"{_prefix(func)}rng must be None, an int seed or a numpy.random.Generator; got {type(rng).__name__}")


def _read(values: Any, name: str, func: str, ndim: int | tuple[int, ...]) -> np.ndarray:
    if isinstance(values, np.ma.MaskedArray):
        if np.ma.getmaskarray(values).any():
            raise ValueError(f"{func}: {name} is a masked array with masked entries; drop or fill them first "
                             "(a paired test needs every entry of both systems)")
        values = values.data
    try:
        arr = np.asarray(values)
    except (OverflowError, ValueError) as exc:
        raise ValueError(f"{func}: {name} could not be read as a numeric array: {exc}") from None
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if arr.ndim not in ndims:
        want = " or ".join(f"{d}-D" for d in ndims)
        raise ValueError(f"{func}: {name} must be a {want} array; got shape {arr.shape}")
    if not arr.flags.aligned:
        # A view at an odd byte offset (of a byte buffer, a packed record) cannot be read through
        # the core's typed pointers, and a conversion to its own dtype keeps the view: copy it.
        arr = arr.copy()
    return arr


def _check_magnitude(arr: np.ndarray, name: str, func: str) -> None:
    # Two reductions instead of a mask: this runs on every call, on up to 10^7 entries.
    if arr.size and (arr.dtype.itemsize >= 8 or arr.dtype.kind == "f"):
        if arr.max() >= _MAX_ABS or arr.min() <= -_MAX_ABS:
            idx = _first((arr >= _MAX_ABS) | (arr <= -_MAX_ABS))
            raise ValueError(f"{func}: {name}[{idx}] = {arr[idx]!r} is too large; values must be below 2**61 in magnitude")


def name_too_large(arrays: Sequence[tuple[np.ndarray, str]], func: str, error: ValueError) -> NoReturn:
    """Raise for integers whose sums the core refused: naming the first entry that is too
    large on its own, else the sum. Any other error of the core is raised as it is."""
    if "2^61" not in str(error):
        raise error
    for arr, name in arrays:
        _check_magnitude(arr, name, func)
    names = " and ".join(name for _, name in arrays)
    raise ValueError(f"{func}: {names} are too large together: {error}") from None


def as_int_array(
    values: Any, name: str, func: str, *, ndim: int | tuple[int, ...] = 1, hint: str = REAL_VALUED_HINT
) -> np.ndarray:
    """Validate integer-valued data and return it as a C-contiguous int64 array (never a view we write to)."""
    arr = _read(values, name, func, ndim)
    kind = arr.dtype.kind
    if kind == "b":
        return np.ascontiguousarray(arr, dtype=np.int64)
    if kind not in "iuf":
        raise ValueError(f"{func}: {name} must hold numbers; got dtype {arr.dtype}")
    if arr.size == 0:
        return np.zeros(arr.shape, dtype=np.int64)
    if kind == "f":
        finite = np.isfinite(arr)
        if not finite.all():
            idx = _first(~finite)
            raise ValueError(f"{func}: {name} contains NaN or inf (at index {idx})")
        frac = arr != np.floor(arr)
        if frac.any():
            idx = _first(frac)
            raise ValueError(
                f"{func}: {name} must hold integers (such as counts of correct predictions); "
                f"got {arr[idx]!r} at index {idx}; {hint}."
            )
    _check_magnitude(arr, name, func)
    return np.ascontiguousarray(arr, dtype=np.int64)


def is_binary(arr: np.ndarray) -> bool:
    """Every entry 0 or 1. Integers in two reductions, other numbers by comparison: np.isin sorts
    its input and cost more than the whole exact test at N = 10^4."""
    if arr.dtype.kind in "biu":
        return arr.size == 0 or bool(arr.min() >= 0 and arr.max() <= 1)
    if arr.dtype.kind in "fc":
        return bool(((arr == 0) | (arr == 1)).all())
    if arr.dtype.kind == "O":
        return bool(np.isin(arr, (0, 1)).all())
    return False  # text, dates: not outcomes


def _first(mask: np.ndarray) -> Any:
    idx = np.argwhere(mask)[0]
    return int(idx[0]) if idx.size == 1 else tuple(int(i) for i in idx)


def check_same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str, func: str) -> int:
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"{func}: {name_a} and {name_b} must have the same length; got {a.shape[0]} and {b.shape[0]}")
    if a.shape[1:] != b.shape[1:]:
        raise ValueError(f"{func}: {name_a} and {name_b} must have the same shape; got {a.shape} and {b.shape}")
    return int(a.shape[0])


def as_real_array(values: Any, name: str, func: str, *, ndim: int | tuple[int, ...] = 1,
                  core_checks_int64: bool = False) -> np.ndarray:
    """Validate real-valued data (rank-based and bootstrap tests); int64 stays int64 so differences stay exact.

    With `core_checks_int64`, signed integers are passed on unread: the caller hands them to
    the core's summary, which refuses magnitudes its sums cannot hold in the same pass (and
    :func:`name_too_large` then names the entry). Unsigned ones are always checked here, as
    the cast to int64 would wrap them."""
    arr = _read(values, name, func, ndim)
    kind = arr.dtype.kind
    if kind == "b":
        return np.ascontiguousarray(arr, dtype=np.int64)
    if kind in "iu":
        if kind == "u" or not core_checks_int64:
            _check_magnitude(arr, name, func)
        return np.ascontiguousarray(arr, dtype=np.int64)
    if kind != "f":
        raise ValueError(f"{func}: {name} must hold real numbers; got dtype {arr.dtype}")
    if arr.dtype.itemsize > 8:
        arr = _narrow_wide_floats(arr, name, func)
        if arr.dtype.kind == "i":
            return arr
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(arr)
    if not finite.all():
        raise ValueError(f"{func}: {name} contains NaN or inf (at index {_first(~finite)})")
    return arr


def _narrow_wide_floats(arr: np.ndarray, name: str, func: str) -> np.ndarray:
    """Floats wider than float64 (long double): whole numbers as exact int64, other values as
    float64 only where that keeps them; a value float64 would round is refused, not rounded."""
    finite = np.isfinite(arr)
    if not finite.all():
        raise ValueError(f"{func}: {name} contains NaN or inf (at index {_first(~finite)})")
    if arr.size and bool(np.all(arr == np.floor(arr))) and float(np.abs(arr).max()) < _MAX_ABS:
        return np.ascontiguousarray(arr, dtype=np.int64)
    narrow = arr.astype(np.float64)
    lost = narrow.astype(arr.dtype) != arr
    if lost.any():
        idx = _first(lost)
        raise ValueError(f"{func}: {name}[{idx}] = {arr[idx]!r} ({arr.dtype}) cannot be held exactly in float64, "
                         "which the tests compute in; round the scores to float64 yourself if that is intended")
    return narrow


def apply_vectorised(fn: Any, values: np.ndarray, k: int, func: str, what: str = "statistic") -> np.ndarray:
    """Call a user's vectorised statistic on k stacked values; it must return k numbers."""
    out = np.asarray(fn(values))
    if out.shape != (k,):
        raise ValueError(
            f"{func}: {what} must be vectorised: called with values of shape {values.shape} it must "
            f"return {k} numbers (shape ({k},)); got shape {out.shape}"
        )
    if out.dtype.kind not in "iufb":
        raise ValueError(f"{func}: {what} must return numbers; got dtype {out.dtype}")
    # Integer results stay integers (exact comparisons); everything else is float64.
    return out if out.dtype.kind in "iu" else out.astype(np.float64, copy=False)


def as_scores(values: Any, name: str, func: str, *, ndim: int | tuple[int, ...] = 1,
              core_checks_int64: bool = False) -> np.ndarray:
    """Integer-valued data as int64 (so the exact integer engines apply), anything else real as float64."""
    arr = as_real_array(values, name, func, ndim=ndim, core_checks_int64=core_checks_int64)
    if arr.dtype.kind == "f" and (arr.size == 0 or (np.all(arr == np.floor(arr)) and np.abs(arr).max() < 2**53)):
        return arr.astype(np.int64)
    return arr


def as_score_pair(x: Any, y: Any, func: str, *, ndim: int | tuple[int, ...] = 1,
                  names: tuple[str, str] = ("x", "y")) -> tuple[np.ndarray, np.ndarray]:
    """Two systems' scores (or local effects) of one kind: both int64, or both float64.

    Integer pairs always go on to the core's summary (:class:`LocalEffects`), whose pass over
    the data also refuses magnitudes beyond its sums: they are not read a second time here."""
    check_paired_index(x, y, names, func)
    xa = as_scores(x, names[0], func, ndim=ndim, core_checks_int64=True)
    ya = as_scores(y, names[1], func, ndim=ndim, core_checks_int64=True)
    check_same_length(xa, ya, names[0], names[1], func)
    if xa.dtype == ya.dtype:
        return xa, ya
    # One side is real-valued: both are compared as float64, exact for integers below 2^53.
    for arr, name in ((xa, names[0]), (ya, names[1])):
        if arr.dtype.kind == "i" and arr.size and np.abs(arr).max() >= 2**53:
            raise ValueError(f"{func}: {name} holds integers of 2**53 or more next to real-valued scores; "
                             "they cannot be compared exactly in float64")
    return xa.astype(np.float64), ya.astype(np.float64)


def exact_int_sum(arr: np.ndarray) -> int:
    """The exact total of an int64 array (|values| < 2**61) as a Python int, where ``arr.sum()``
    would wrap: the high and low 32-bit halves are summed separately, neither can overflow
    below 2**31 entries, and they are recombined in Python integers."""
    if arr.size == 0:
        return 0
    if int(np.abs(arr).max()) < (2**63 - 1) // arr.size:
        return int(arr.sum(dtype=np.int64))
    high = int(np.right_shift(arr, 32).sum(dtype=np.int64))
    low = int(np.bitwise_and(arr, 0xFFFFFFFF).sum(dtype=np.int64))
    return (high << 32) + low


def check_real_difference(x: np.ndarray, y: np.ndarray, func: str, names: tuple[str, str] = ("x", "y")) -> None:
    """Real-valued scores whose differences x - y, or whose statistic sum(x) - sum(y), overflow
    float64: say so (the p-value of a sum does not depend on the units, so rescaling is harmless)."""
    if x.dtype.kind != "f" or not x.size:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        d = x - y
        finite = np.isfinite(d)
        if finite.all() and np.isfinite(np.abs(d).sum()):
            return
    fix = (f"divide {names[0]} and {names[1]} by a common factor such as 1e300 (the p-value of a sum does not "
           "depend on the units of the scores)")
    if not finite.all():
        idx = _first(~finite)
        raise ValueError(f"{func}: {names[0]}[{idx}] - {names[1]}[{idx}] = {float(x[idx])!r} - {float(y[idx])!r} "
                         f"overflows float64; {fix}")
    try:
        math.fsum(d.ravel())
    except OverflowError:
        raise ValueError(f"{func}: the statistic sum({names[0]}) - sum({names[1]}) overflows float64; {fix}") from None


def check_column_totals(arr: np.ndarray, name: str, func: str) -> None:
    """Every column's sum of magnitudes below 2**61, so that int64 totals cannot wrap."""
    if not arr.size:
        return
    mags = np.abs(arr.reshape(arr.shape[0], -1))
    # Cheap bound first; exact Python-int totals only when it is not conclusive.
    if int(mags.max()) * arr.shape[0] < _MAX_ABS:
        return
    totals = mags.sum(axis=0, dtype=object)
    bad = [j for j, t in enumerate(totals) if t >= _MAX_ABS]
    if bad:
        raise ValueError(f"{func}: the column {bad[0]} of {name} sums to {totals[bad[0]]}, beyond 2^61; "
                         "the exact tests need totals below 2**61")


def few(labels: Sequence[Any], k: int = 5) -> str:
    """The first `k` of some labels, for a message."""
    shown = ", ".join(repr(_plain_label(v)) for v in list(labels)[:k])
    return shown + (f" and {len(labels) - k} more" if len(labels) > k else "")


def _plain_label(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _has_index(values: Any) -> bool:
    index = getattr(values, "index", None)
    return index is not None and hasattr(index, "equals") and hasattr(index, "duplicated")


def index_difference(ix: Any, iy: Any, names: tuple[str, str]) -> str:
    """How two pandas indexes differ, naming a few of the offending labels."""
    only_x, only_y = ix.difference(iy), iy.difference(ix)
    parts = [f"only in {n}: {few(d)}" for n, d in ((names[0], only_x), (names[1], only_y)) if len(d)]
    if parts:
        return "; ".join(parts)
    return "the same labels in a different order" if len(ix) == len(iy) else "different lengths"


def check_unique_labels(labels: Any, what: str, func: str) -> None:
    """Item ids must name one item each: a duplicated id would pair entries arbitrarily."""
    arr = np.asarray(labels, dtype=object)
    seen: set = set()
    repeated: dict = {}
    if len(set(arr.tolist())) != len(arr):
        for v in arr.tolist():
            if v in seen:
                repeated[v] = None
            seen.add(v)
        raise ValueError(f"{func}: {what} has duplicated ids: {few(list(repeated))}; every item needs its own id")


def check_paired_index(x: Any, y: Any, names: tuple[str, str], func: str) -> None:
    """Two pandas objects are paired by position only if their indexes agree: a shuffled index
    would silently pair the wrong entries. Next to an object without an index, an index of item
    ids cannot be matched either, so it is refused as well (as in compare_systems) unless it is
    the positions 0..N-1 themselves. A one-sample call (y None) has nothing to pair."""
    if x is None or y is None:
        return
    indexed = (_has_index(x), _has_index(y))
    if indexed == (False, False):
        return
    if indexed != (True, True):
        has, plain = (x, names[0]), names[1]
        if not indexed[0]:
            has, plain = (y, names[1]), names[0]
        if not _is_range(has[0].index):
            raise ValueError(f"{func}: {has[1]} has an index of item ids but {plain} has none, so they cannot be "
                             f"paired by id; give {plain} as a pandas object with the same ids, or pass "
                             f"{has[1]}.to_numpy() to pair them by position")
        return
    if not x.index.equals(y.index):
        raise ValueError(f"{func}: {names[0]} and {names[1]} have different indexes "
                         f"({index_difference(x.index, y.index, names)}); a paired test matches entries by position, "
                         f"so align them first (e.g. {names[1]}.reindex({names[0]}.index))")


def align_by_index(values: list[Any], names: list[str], func: str) -> list[Any]:
    """Pandas objects (Series, or per-system DataFrames of counts) in the order of the first
    one's index labels, so that entries are paired by id, never by position. Every index must
    hold the same labels, each once; objects without an index are paired by position, which is
    only allowed next to indexes that are positions themselves (0..N-1)."""
    indexed = [_has_index(v) for v in values]
    if not any(indexed):
        return values
    for v, n, has in zip(values, names, indexed):
        if has:
            check_unique_labels(v.index, f"the index of {n}", func)
    if not all(indexed):
        plain = names[indexed.index(False)]
        for v, n, has in zip(values, names, indexed):
            if has and not _is_range(v.index):
                raise ValueError(f"{func}: {n} has an index of item ids but {plain} has none, so they cannot be "
                                 f"paired by id; give every system as a pandas Series with the same ids, or none")
        return values
    ref, ref_name = values[0].index, names[0]
    out = [values[0]]
    for v, n in zip(values[1:], names[1:]):
        if v.index.equals(ref):
            out.append(v)
        elif len(v.index) == len(ref) and not len(ref.difference(v.index)):
            out.append(v.reindex(ref))
        else:
            raise ValueError(f"{func}: {ref_name} and {n} are not scored on the same ids "
                             f"({index_difference(ref, v.index, (ref_name, n))}); every system needs a score "
                             "for every item")
    return out


def _is_range(index: Any) -> bool:
    arr = np.asarray(index)
    return arr.dtype.kind in "iu" and bool(np.array_equal(arr, np.arange(len(arr))))


# Column names of item ids (doc_id, item-id, index, Unnamed: 0 as pandas' to_csv writes an index, ...).
_ID_NAME = re.compile(r"(?:.*[_\-\s.])?(?:id|ids|idx|index)|docid|qid|uid|guid|item|items|key|row|line|unnamed: ?\d+",
                      re.IGNORECASE)
# Scores that count 0, 1, ..., N-1 (or 1, ..., N) one entry after the other are line numbers;
# below this many entries such a run is too plausible as real scores to refuse.
_ID_MIN_ENTRIES = 10


def id_column_reason(name: Any, values: Any) -> Optional[str]:
    """Why a would-be system looks like a column of item ids (None when it does not)."""
    if _ID_NAME.fullmatch(str(name).strip()):
        return f"{str(name)!r} is a name for item ids"
    arr = np.asarray(values) if not hasattr(values, "to_numpy") or getattr(values, "ndim", 2) != 1 \
        else values.to_numpy()
    n = len(arr) if arr.ndim == 1 else 0
    if n < _ID_MIN_ENTRIES or arr.dtype.kind not in "iu":
        return None
    start = int(arr[0])
    if start in (0, 1) and int(arr[-1]) == start + n - 1 and bool(np.all(np.diff(arr) == 1)):
        return f"its values count {start}, {start + 1}, ..., {start + n - 1} like row numbers"
    return None


def is_dataframe(x: Any) -> bool:
    """A pandas DataFrame (recognised without importing pandas)."""
    return type(x).__module__.split(".")[0] == "pandas" and hasattr(x, "columns") and hasattr(x, "iloc")
