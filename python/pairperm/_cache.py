"""A store of finished pairs for compare_systems(cache=...): a repeated or interrupted run
recomputes only the pairs it does not find.

A pair is keyed on a hash of the data of its two systems and of every option that decides its
result, so changing the data, the metric or an option never returns a stale pair.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Optional

import numpy as np

__all__ = ["DirectoryCache", "as_cache", "data_digest", "pair_key"]

# Part of every key: a change in what is stored invalidates older entries.
_FORMAT = "pairperm-pair-1"


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
