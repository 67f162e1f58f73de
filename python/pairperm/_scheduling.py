"""Running many small jobs: progress reports, daemon worker threads, chunks of pairs for an
executor, and collecting results with Ctrl-C and errors in mind."""

from __future__ import annotations

import concurrent.futures as cf
import math
import sys
import threading
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

import pairperm._core as _core

__all__ = ["Progress", "as_task", "collect", "daemon_pool", "n_workers", "tiles"]

# Whose progress and messages these are.
_FUNC = "compare_systems"


# Progress is shown for batches still running after this many seconds.
_PROGRESS_AFTER = 2.0


class Progress:
    """Calls progress(done, total), or after _PROGRESS_AFTER seconds shows a bar on a terminal's stderr."""

    def __init__(self, progress: Any, total: int):
        if not (progress is None or isinstance(progress, bool) or callable(progress)):
            raise ValueError(f"{_FUNC}: progress must be None, True/False or a callable(done, total); got {progress!r}")
        self.callback = progress if callable(progress) and not isinstance(progress, bool) else None
        self.auto = progress is None or progress is True
        self.force = progress is True
        self.total, self.done = total, 0
        self.t0 = time.perf_counter()
        self.bar: Any = None

    def update(self, k: int) -> None:
        self.done += k
        if self.callback is not None:
            self.callback(self.done, self.total)
            return
        if not self.auto:
            return
        if self.bar is None and (self.force or (time.perf_counter() - self.t0 > _PROGRESS_AFTER and _isatty())):
            self.bar = _make_bar(self.total)
            self.bar.update(self.done - k)
        if self.bar is not None:
            self.bar.update(k)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _isatty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _TextBar:
    def __init__(self, total: int):
        self.total, self.n = total, 0

    def update(self, k: int) -> None:
        self.n += k
        sys.stderr.write(f"\r{_FUNC}: {self.n}/{self.total} pairs")
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")


def _make_bar(total: int) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _TextBar(total)
    return tqdm(total=total, desc=_FUNC, unit="pair", file=sys.stderr)


def n_workers(executor: Any, n_jobs: Optional[int]) -> int:
    w = getattr(executor, "_max_workers", None)
    if isinstance(w, int) and w > 0:
        return w
    return n_jobs or 4


def tiles(pairs: np.ndarray, n_systems: int, n_chunks: int) -> list[np.ndarray]:
    """Group pair indices into tiles (block of systems x block of systems): a tile of B x B
    pairs needs at most 2B systems, so each system is shipped ~n/B times instead of once a pair."""
    block = max(1, math.ceil(n_systems / math.sqrt(2 * max(1, n_chunks))))
    key = (pairs[:, 0] // block) * (n_systems + 1) + pairs[:, 1] // block
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    return [t for t in np.split(order, bounds) if t.size]


def daemon_pool(calls: Sequence[Callable[[], Any]], workers: int) -> tuple[list, list]:
    """Run the calls on `workers` daemon threads: their futures (in the order of the calls) and
    the threads. concurrent.futures' thread pool would do the same, but its workers are joined at
    interpreter exit only after they have run every queued call, so a program whose background
    thread is comparing hundreds of pairs could not end until all of them were done; daemon
    threads let it end at once."""
    futures: list[cf.Future] = [cf.Future() for _ in calls]
    pending = iter(range(len(calls)))
    take = threading.Lock()

    def work() -> None:
        while True:
            with take:
                i = next(pending, None)
            if i is None:
                return
            if not futures[i].set_running_or_notify_cancel():
                continue  # cancelled before it started
            try:
                result = calls[i]()
            except BaseException as exc:
                futures[i].set_exception(exc)
            else:
                futures[i].set_result(result)

    threads = [threading.Thread(target=work, name=f"pairperm-pairs-{k}", daemon=True) for k in range(workers)]
    for thread in threads:
        thread.start()
    return futures, threads


def as_task(generation: int, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) on a pool thread of this process, its calls into the core cancelled with `generation`."""
    previous = _core.set_task_generation(generation)
    try:
        return fn(*args)
    finally:
        _core.set_task_generation(previous)


def collect(futures: Any, take: Callable[[cf.Future], None]) -> None:
    """Take results as they finish; on the first error, cancel what has not started. On Ctrl-C,
    also stop the tasks running on this process's threads: Python delivers the signal to the main
    thread only, so their calls into the core are cancelled (they raise KeyboardInterrupt there)."""
    try:
        for fut in cf.as_completed(futures):
            take(fut)
    except BaseException as exc:
        for fut in futures:
            fut.cancel()
        if isinstance(exc, KeyboardInterrupt):
            _core.cancel_calls()
        raise
