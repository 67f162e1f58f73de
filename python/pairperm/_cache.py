"""A store of finished pairs for compare_systems(cache=...): a repeated or interrupted run
recomputes only the pairs it does not find.

A pair is keyed on a hash of the data of its two systems and of every option that decides its
result, so changing the data, the metric or an option never returns a stale pair.

A callable metric is keyed on what decides its results (:func:`callable_key`): for a function
of the user's own code (``__main__``, a notebook, a module outside the installed packages), its
bytecode and constants, the names it uses, its defaults, the values of its closure's cells, of
the globals it reads and of the attributes set on it that it reads (and the function a decorator
wraps), and the same of the functions it calls; ``functools.partial`` adds its arguments; a
function of an installed package (NumPy's, the standard library's) is keyed by its name and
the package's version. Values are keyed when they are plain data (None, numbers,
strings, bytes, tuples, lists, dicts and sets of them, NumPy arrays and scalars) or modules.
A callable that reads anything else (an object of a class of its own, a bound method, a callable
instance) cannot be keyed reliably, and compare_systems refuses ``cache=`` for it rather than
risk returning another metric's results.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import json
import os
import sys
import sysconfig
import tempfile
import types
from fractions import Fraction
from pathlib import Path
from typing import Any, Optional

import numpy as np

__all__ = ["DirectoryCache", "as_cache", "callable_key", "data_digest", "pair_key"]

# Part of every key: a change in what is stored invalidates older entries.
_FORMAT = "pairperm-pair-3"


class DirectoryCache:
    """One small JSON file per finished pair, under ``directory/<first two hex digits>/``.

    Files are written to a temporary name and renamed into place, so a run killed mid-write
    leaves no truncated entry, and several processes may share the directory.
    """

    def __init__(self, directory: Any):
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[dict]:
        try:
            text = self._path(key).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return None  # written by something else: recomputed and overwritten
        return value if isinstance(value, dict) else None

    def set(self, key: str, value: dict) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(value, f)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __repr__(self) -> str:
        return f"DirectoryCache({str(self.directory)!r})"


def as_cache(cache: Any, func: str) -> Any:
    """None, a directory (str or path) or an object with get(key) and set(key, value)."""
    if cache is None:
        return None
    if isinstance(cache, (str, os.PathLike)):
        path = Path(cache)
        if path.exists() and not path.is_dir():
            raise ValueError(f"{func}: cache {str(path)!r} exists and is not a directory")
        return DirectoryCache(path)
    if callable(getattr(cache, "get", None)) and callable(getattr(cache, "set", None)):
        return cache
    raise ValueError(f"{func}: cache must be None, a directory path, or an object with get(key) and "
                     f"set(key, value) methods; got {type(cache).__name__}")


def data_digest(arr: np.ndarray) -> str:
    """Hash of one system's validated scores: dtype, shape and bytes."""
    h = hashlib.sha256()
    a = np.ascontiguousarray(arr)
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.tobytes())
    return h.hexdigest()


def pair_key(options: str, digest_a: str, digest_b: str) -> str:
    """The key of one pair: its options (a canonical string) and both systems' data, in order
    (A against B is not B against A for a one-sided test)."""
    return hashlib.sha256("\0".join((_FORMAT, options, digest_a, digest_b)).encode()).hexdigest()


class UnkeyableError(ValueError):
    """A callable reads a value whose effect on its results cannot be hashed."""


def callable_key(fn: Any) -> str:
    """Hash of what decides a callable metric's results (see the module's docstring); raises
    UnkeyableError naming what cannot be keyed."""
    h = hashlib.sha256()
    _CallableKey(h).value(fn, "the metric")
    return h.hexdigest()


# Where installed code lives: its functions change only with the package's version.
_STDLIB = tuple({os.path.realpath(p) for p in (sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib")) if p})
_PACKAGE_DIRS = ("site-packages", "dist-packages")


def _installed_module(name: str) -> bool:
    top = name.partition(".")[0]
    if top in sys.builtin_module_names or top in getattr(sys, "stdlib_module_names", ()):
        return True
    path = getattr(sys.modules.get(top), "__file__", None)
    if path is None:
        return False
    path = os.path.realpath(path)
    return path.startswith(_STDLIB) or any(part in _PACKAGE_DIRS for part in Path(path).parts)


def _installed_name(v: Any) -> Optional[tuple[str, str]]:
    """(module, qualified name) of an object an installed module defines under that name."""
    module = getattr(v, "__module__", None) or ("builtins" if isinstance(v, types.BuiltinFunctionType) else None)
    qualname = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
    if not (isinstance(module, str) and isinstance(qualname, str)) or not _installed_module(module):
        return None
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return (module, qualname) if found is v else None


def _version(module_name: str) -> str:
    top = sys.modules.get(module_name.partition(".")[0])
    return str(getattr(top, "__version__", sys.version))


class _CallableKey:
    def __init__(self, h: Any):
        self.h = h
        self.seen: dict = {}  # id -> position: recursion and shared objects are keyed once

    def put(self, *parts: Any) -> None:
        for p in parts:
            b = p if isinstance(p, bytes) else str(p).encode()
            self.h.update(len(b).to_bytes(8, "little"))
            self.h.update(b)

    def value(self, v: Any, where: str) -> None:
        if v is None or v is Ellipsis or isinstance(v, (bool, int, float, complex, str, Fraction, slice)):
            self.put(type(v).__name__, repr(v))
        elif isinstance(v, bytes):
            self.put("bytes", v)
        elif isinstance(v, np.ndarray):
            if v.dtype.hasobject:
                raise UnkeyableError(f"{where} is a NumPy array of Python objects")
            self.put("ndarray", data_digest(v))
        elif isinstance(v, (np.generic, np.dtype)):
            self.put(type(v).__name__, repr(v))
        elif isinstance(v, (tuple, list)):
            self.put(type(v).__name__, len(v))
            for k, item in enumerate(v):
                self.value(item, f"{where}[{k}]")
        elif isinstance(v, dict):
            self.put("dict", len(v))
            for k, item in v.items():
                self.value(k, f"a key of {where}")
                self.value(item, f"{where}[{k!r}]")
        elif isinstance(v, (set, frozenset)):
            # Sorted by their own keys: a set's order changes with the process's string hashing.
            keys = []
            for item in v:
                sub = _CallableKey(hashlib.sha256())
                sub.value(item, f"an element of {where}")
                keys.append(sub.h.hexdigest())
            self.put(type(v).__name__, *sorted(keys))
        elif id(v) in self.seen:
            self.put("seen", self.seen[id(v)])
        elif isinstance(v, types.ModuleType):
            self.seen[id(v)] = len(self.seen)
            self.put("module", v.__name__, _version(v.__name__) if _installed_module(v.__name__) else "")
        elif isinstance(v, functools.partial):
            self.seen[id(v)] = len(self.seen)
            self.put("partial")
            self.value(v.func, f"{where}.func")
            self.value(v.args, f"{where}.args")
            self.value(v.keywords, f"{where}.keywords")
        elif isinstance(v, types.FunctionType):
            self.seen[id(v)] = len(self.seen)
            self.function(v, where)
        elif _installed_name(v) is not None:
            # A function, class or ufunc an installed package defines under that name: its version decides it.
            module, qualname = _installed_name(v)  # type: ignore[misc]
            self.put("installed", module, qualname, _version(module))
        elif isinstance(v, type):
            raise UnkeyableError(f"{where} is the class {v.__module__}.{v.__qualname__} of code outside the "
                                 "installed packages")
        else:
            raise UnkeyableError(f"{where} is a {type(v).__module__}.{type(v).__qualname__}")

    def function(self, fn: types.FunctionType, where: str) -> None:
        name = f"{fn.__module__}.{fn.__qualname__}"
        if _installed_module(fn.__module__ or ""):
            self.put("installed", name, _version(fn.__module__))
            return
        self.put("function")
        names = self.code(fn.__code__)
        self.value(fn.__defaults__, f"the defaults of {name}")
        self.value(fn.__kwdefaults__, f"the keyword defaults of {name}")
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                content = cell.cell_contents
            except ValueError:
                self.put("empty cell")
                continue
            self.value(content, f"{var!r} in the closure of {name}")
        # Attributes set on the function that its code reads (fbeta.beta = 2) and the function a
        # decorator wraps; others (a signature, test marks) cannot change its results.
        attributes = {k: v for k, v in fn.__dict__.items() if k in names or k == "__wrapped__"}
        self.value(dict(sorted(attributes.items())), f"the attributes of {name}")
        modules = []
        for n in sorted(names):
            if n in fn.__globals__:
                v = fn.__globals__[n]
                self.put("global", n)
                self.value(v, f"the global {n!r} of {name}")
                if isinstance(v, types.ModuleType) and not _installed_module(v.__name__):
                    modules.append(v)
            elif hasattr(builtins, n):
                self.put("builtin", n)
        # Attributes read from the user's own modules (helpers.scale): keyed by their values.
        for mod in modules:
            for n in sorted(names):
                if n in vars(mod):
                    self.put("attribute", mod.__name__, n)
                    self.value(vars(mod)[n], f"{mod.__name__}.{n} read by {name}")

    def code(self, co: types.CodeType) -> set:
        """Keys a code object and the ones nested in it; the names they read."""
        self.put("code", co.co_code, co.co_argcount, co.co_kwonlyargcount, co.co_flags, co.co_names,
                 co.co_varnames, co.co_freevars, co.co_cellvars)
        names = set(co.co_names)
        for c in co.co_consts:
            if isinstance(c, types.CodeType):
                names |= self.code(c)
            else:
                self.value(c, f"a constant of {co.co_qualname if hasattr(co, 'co_qualname') else co.co_name}")
        return names
