"""Testing many pairs of systems of one task: integer sums in the core's batch, the rest
through compare(), on threads or an executor; each pair's outcome as compare() gives it."""

from __future__ import annotations

import concurrent.futures as cf
import functools
import math
import numbers
import os
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

import pairperm._core as _core

from . import _runner
from ._classic import discordant_counts
from ._compare import _is_integral, compare
from ._errors import errors_naming
from ._metrics import metric_named
from ._permutation import TEST_METHODS
from ._results import WilcoxonResult
from ._runner import settle
from ._sampling import child_seed, seed_from_rng
from ._scheduling import Progress, as_task, collect, daemon_pool, n_workers, tiles
from ._validation import N_RESAMPLES, Alternative, as_int_array, is_binary

__all__ = ["PairOutcomes", "log_pvalue_of", "run_pairs"]

_FUNC = "compare_systems"


# Methods of the integer-sum pairs that the C++ batch plans; sampled p-values are drawn per pair
# with the pair's own seed, by compare().
_BATCH_METHODS = tuple(m for m in TEST_METHODS if m != "monte_carlo")


# Local batch calls aim at about this much work each, so that progress can be reported.
_BATCH_CALL_SECONDS = 0.25


def _plain(v: Any) -> Union[int, float]:
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    return float(v)


def _engine_of(result: Any) -> str:
    """What ran inside a test: its engine, or for the Wilcoxon test its route ("exact",
    "fourier", "monte_carlo"); the bootstrap has only itself."""
    if isinstance(result, WilcoxonResult):
        return result.method
    return str(getattr(result, "engine", "bootstrap"))


def _pairs_worker(arrays: dict, tasks: list, metric: Any, alternative: Alternative, options: dict,
                  names: dict) -> list:
    """compare() on each (k, i, j, seed) task; returns plain (k, statistic, pvalue, log_pvalue,
    test, engine) tuples. An error names the pair by `names` (system index to name)."""
    out = []
    for k, i, j, seed in tasks:
        opts = dict(options)
        if seed is not None:
            opts["rng"] = seed
        with errors_naming(f"{_FUNC}: pair {names[i]!r} - {names[j]!r}"):
            r = compare(arrays[i], arrays[j], metric, alternative=alternative, **opts)
        p = float(r.pvalue)
        out.append((k, _plain(r.statistic), p, log_pvalue_of(r.result, p), str(r.test), _engine_of(r.result)))
    return out


def log_pvalue_of(result: Any, pvalue: float) -> float:
    """A test result's log p-value: its own where it keeps one (which stays finite where the
    p-value underflows to 0), else the log of the p-value."""
    log_p = getattr(result, "log_pvalue", None)
    if log_p is not None and not math.isnan(log_p):
        return float(log_p)
    return math.log(pvalue) if pvalue > 0 else -math.inf


def _batch_worker(matrix: np.ndarray, pairs: np.ndarray, alternative: str, method: str, n_resamples: int,
                  seeds: Optional[np.ndarray], n_threads: int) -> tuple:
    """The C++ batch on a sub-matrix of systems, planned with this process's limits (those of
    its compare()); plain NumPy arrays, route names and the outcomes of note back."""
    return tuple(_core.batch_pvalues(matrix, pairs, alternative, method, _runner.LIMITS, n_resamples, seeds,
                                     n_threads))


class PairOutcomes:
    """Each pair's test outcome, in the order of the pairs, filled in as they finish."""

    __slots__ = ("statistic", "pvalue", "log_pvalue", "test", "engine")

    def __init__(self, n_pairs: int) -> None:
        self.statistic: list = [None] * n_pairs
        self.pvalue = np.full(n_pairs, np.nan)
        self.log_pvalue = np.full(n_pairs, np.nan)
        self.test: list = [None] * n_pairs
        self.engine: list = [None] * n_pairs

    def set(self, k: int, statistic: Any, pvalue: float, log_pvalue: float, test: str, engine: str) -> None:
        self.statistic[k], self.pvalue[k], self.log_pvalue[k], self.test[k], self.engine[k] = (
            statistic, pvalue, log_pvalue, test, engine)


def run_pairs(arrays: list, sys_names: list, pairs: np.ndarray, metric: Any, alternative: Any, options: dict,
             root: Any, n_jobs: Optional[int], executor: Any, progress: Any,
             seed_keys: Optional[Sequence[int]] = None, units: Optional[tuple] = None) -> PairOutcomes:
    """Each pair's outcome: integer sums in the C++ batch, the rest through compare().
    Pair k draws its seed from `root` and ``seed_keys[k]`` (default: k itself). With groups=, the
    arrays are the sums per unit and `units` holds (the items' arrays, each item's unit): compare()
    gets the items and their units, as a caller of compare() would give them (the round-off of
    real-valued scores is relative to the items, not to their sums), and the test is never McNemar's."""
    grouped = units is not None
    n, n_pairs = len(sys_names), len(pairs)
    method = options.get("method", "auto")
    # Which pairs the C++ batch takes: integer sums (and real-valued metrics of two integral systems),
    # whose test is the paired-permutation test (McNemar on 0/1 data under "auto" is the same test).
    row = metric_named(metric)
    integral = [row is not None and row.kind in ("sum", "mean") and method in _BATCH_METHODS
                and (row.integer or _is_integral(a))
                for a in arrays]
    # The 0/1 systems, as compare() decides it. Unit sums that happen to be 0/1 are not 0/1
    # items: compare() runs permutation_test on them.
    binary = [ok and not grouped and a.ndim == 1 and is_binary(a) for ok, a in zip(integral, arrays)]
    in_batch = np.array(integral, dtype=bool)[pairs].all(axis=1)
    outcomes = PairOutcomes(n_pairs)
    prog = Progress(progress, n_pairs)
    try:
        rest = list(np.flatnonzero(~in_batch))
        batch_idx = np.flatnonzero(in_batch)
        if batch_idx.size:
            # Real-valued metrics take real arrays: their integral systems are converted (and range-checked) here.
            matrix = np.stack([
                (arrays[i] if arrays[i].dtype == np.int64 else as_int_array(arrays[i], f"system {sys_names[i]!r}", _FUNC))
                if integral[i] else np.zeros(len(arrays[0]), np.int64)
                for i in range(n)
            ])
            n_resamples = int(options.get("n_resamples", N_RESAMPLES))

            def seed_of(k: int) -> int:
                return seed_from_rng(child_seed(root, k if seed_keys is None else int(seed_keys[k])))

            rest += _run_batch(matrix, pairs, batch_idx, binary, alternative, method, n_resamples, seed_of, n_jobs,
                               executor, prog, outcomes, sys_names)
        if rest:
            item_arrays, item_options = (arrays, options) if units is None else (units[0], dict(options, groups=units[1]))
            if units is not None and units[1] is None:
                item_options = options  # k samples of each item: compare() takes the (N, k) scores as they are
            _run_singly(item_arrays, sys_names, pairs, sorted(rest), metric, alternative, item_options, root, n_jobs,
                       executor, prog, outcomes, seed_keys)
    finally:
        prog.close()
    return outcomes


def _run_batch(matrix: np.ndarray, pairs: np.ndarray, idx: np.ndarray, binary: list, alternative: Alternative,
               method: str, n_resamples: int, seed_of: Callable[[int], int], n_jobs: Optional[int],
               executor: Optional[cf.Executor], prog: Progress, outcomes: PairOutcomes, names: list) -> list:
    """p-values of the integer-sum pairs `idx` by the core's executor; returns the pairs that
    failed (compare() words their errors). Pairs whose next step is importance sampling come back
    for their seeds (`seed_of(k)`, as compare() would draw it for pair k) and run once more."""
    failed: list = []
    needs_seed: list = []
    pair_list = pairs.tolist()  # Python ints: per-pair indexing of NumPy arrays costs more than the pair's tail

    def store(sub: np.ndarray, res: tuple) -> None:
        observed, n_varying, pv, log_pv, route, notes = (v.tolist() if isinstance(v, np.ndarray) else v for v in res)
        sub_list = sub.tolist()
        held = set()
        for t, outcome in notes:
            k = sub_list[t]
            held.add(t)
            if outcome is None:
                failed.append(k)
            elif outcome.shortfall == "needs_seed":
                needs_seed.append(k)
            else:
                i, j = pair_list[k]
                with errors_naming(f"{_FUNC}: pair {names[i]!r} - {names[j]!r}"):
                    settle(outcome, "permutation_test", n_varying=n_varying[t])
                held.discard(t)
        for t, k in enumerate(sub_list):
            if t in held:
                continue
            i, j = pair_list[k]
            if method == "auto" and binary[i] and binary[j]:
                # compare() runs McNemar here; its statistic is the count of entries only A got right.
                outcomes.set(k, discordant_counts(n_varying[t], observed[t])[0], pv[t], log_pv[t], "mcnemar_test",
                             route[t])
            else:
                outcomes.set(k, observed[t], pv[t], log_pv[t], "permutation_test", route[t])
        # The pairs held back are counted when they have run.
        finished = len(sub_list) - len(held)
        if finished:
            prog.update(finished)

    if executor is None:
        threads = n_jobs or os.cpu_count() or 1
        per_pair = 5e-5 + 2.5e-9 * matrix.shape[1]  # measured: summary O(N) + tail by tilting
        step = max(16, int(_BATCH_CALL_SECONDS * threads / per_pair))
        for start in range(0, idx.size, step):
            sub = idx[start:start + step]
            store(sub, _batch_worker(matrix, pairs[sub], alternative, method, n_resamples, None, n_jobs or 0))
    else:
        futures = {}
        for tile in tiles(pairs[idx], len(matrix), 4 * n_workers(executor, n_jobs)):
            sub = idx[tile]
            used, local = np.unique(pairs[sub], return_inverse=True)
            futures[executor.submit(_batch_worker, np.ascontiguousarray(matrix[used]),
                                    local.reshape(-1, 2).astype(np.int64), alternative, method, n_resamples, None,
                                    n_jobs or 1)] = sub
        collect(futures, lambda fut: store(futures[fut], fut.result()))
    if needs_seed:
        sub = np.array(needs_seed, dtype=np.int64)
        seeds = np.array([seed_of(k) for k in needs_seed], dtype=np.uint64)
        store(sub, _batch_worker(matrix, pairs[sub], alternative, method, n_resamples, seeds, n_jobs or 0))
    return failed


def _run_singly(arrays: list, sys_names: list, pairs: np.ndarray, idx: list, metric: Any, alternative: Alternative,
               options: dict, root: Optional[int], n_jobs: Optional[int], executor: Optional[cf.Executor], prog: Progress,
               outcomes: PairOutcomes, seed_keys: Optional[Sequence[int]] = None) -> None:
    """compare() on each pair in `idx` (thread pool here, or chunks on the executor)."""
    tasks = [(k, int(pairs[k, 0]), int(pairs[k, 1]), child_seed(root, k if seed_keys is None else int(seed_keys[k])))
             for k in idx]

    def store(results: list) -> None:
        for k, *outcome in results:
            outcomes.set(k, *outcome)
        prog.update(len(results))

    if executor is None:
        workers = min(len(tasks), n_jobs or os.cpu_count() or 1)
        if workers <= 1:
            for t in tasks:
                store(_pairs_worker({t[1]: arrays[t[1]], t[2]: arrays[t[2]]}, [t], metric, alternative, options,
                                    {t[1]: sys_names[t[1]], t[2]: sys_names[t[2]]}))
            return
        generation = _core.cancel_generation()
        calls = [functools.partial(as_task, generation, _pairs_worker, {t[1]: arrays[t[1]], t[2]: arrays[t[2]]}, [t],
                                   metric, alternative, options, {t[1]: sys_names[t[1]], t[2]: sys_names[t[2]]})
                 for t in tasks]
        futs, threads = daemon_pool(calls, workers)
        try:
            collect(futs, lambda fut: store(fut.result()))
        finally:
            # Wait for the running pairs, as leaving an executor's block does: after Ctrl-C,
            # collect has cancelled them.
            for thread in threads:
                thread.join()
        return

    sel = np.array([[t[1], t[2]] for t in tasks], dtype=np.int64)
    futures = []
    for tile in tiles(sel, len(arrays), 4 * n_workers(executor, n_jobs)):
        chunk = [tasks[t] for t in tile.tolist()]
        needed = sorted({t[1] for t in chunk} | {t[2] for t in chunk})
        futures.append(executor.submit(_pairs_worker, {i: arrays[i] for i in needed}, chunk, metric, alternative,
                                       options, {i: sys_names[i] for i in needed}))
    collect(futures, lambda fut: store(fut.result()))
