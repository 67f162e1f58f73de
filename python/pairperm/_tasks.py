"""compare_systems() over several tasks at once: ``{task: scores}`` or a long table, each task
with its own metric, one long table of pairs with effect sizes and confidence intervals, the
multiple-testing correction within each task or over the whole family, provenance, and a
cache of finished pairs so that an interrupted run resumes where it stopped.

Every task runs the pairs' machinery of :mod:`pairperm._pairs` (the C++ batch for integer sums,
compare() per pair for the rest) on its missing pairs.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from typing import Any, Optional

import numpy as np

from ._cache import UnkeyableError, as_cache, callable_key, data_digest, pair_key
from ._errors import errors_naming
from ._inputs import PreparedTask, long_table_tasks, prepare_task, task_groups, task_metrics
from ._intervals import AUTO_EXACT_MAX, batch_shift_bounds, differences_interval
from ._metrics import METRICS, is_per_item, is_summed, prefers_lower
from ._multipletests import multipletests
from ._multitask import MultiTaskComparison, TaskPair, TaskSummary
from ._pairs import run_pairs
from ._ranking import (
    PairDraws,
    check_draws_reach,
    compatible_bounds,
    flat_units,
    pair_draws,
    per_pair,
    unit_matrix,
    value_of_sums,
    westfall_young,
)
from ._resampling import bootstrap_intervals, bootstrap_mean_intervals
from ._sampling import child_seed, seed_root
from ._scheduling import Progress
from ._validation import Alternative, check_probability, is_dataframe
from ._version import __version__

__all__ = ["SCOPES", "compare_tasks", "interval_options", "interval_seed", "shift_intervals", "task_intervals"]

_FUNC = "compare_systems"
SCOPES = ("task", "family")
# Pairs stored per cache write: small enough that an interrupted run loses little, large
# enough that the C++ batch still amortises its set-up over many pairs.
_CACHE_CHUNK = 64


# ---------------------------------------------------------------- running


def _metric_id(metric: Any, task: str) -> str:
    """The metric as the cache keys it; a callable by what decides its results (callable_key)."""
    if not callable(metric):
        return str(metric)
    try:
        return f"callable:{callable_key(metric)}"
    except UnkeyableError as exc:
        raise ValueError(
            f"{_FUNC}: task {task!r}: cache= cannot key the metric {_metric_name(metric)!r}: {exc}, whose effect on "
            "the results cannot be hashed, so a cached pair could belong to another metric; read such values "
            "into plain data (numbers, strings, tuples, dicts, NumPy arrays) in a function's defaults, closure or "
            "globals, or run without cache=") from None


def _name_key(*parts: str) -> int:
    """A seed key from names (not positions): a pair keeps its seed whatever else is compared."""
    return int.from_bytes(hashlib.sha256("\0".join(parts).encode()).digest()[:7], "little")


def _shift_units(metric: Any) -> Optional[str]:
    """Which interval of shift_interval is in the metric's units (sums and means of per-item
    scores: their pair intervals invert the permutation test), or None for bootstrapped metrics."""
    if not is_per_item(metric):
        return None
    return "sum_difference" if is_summed(metric) else "mean_difference"


def _interval_alternative(metric: Any, alternative: Any) -> Alternative:
    """The side of an interval of A - B: "greater" means A is better, which is A - B < 0 for
    metrics where lower is better."""
    if prefers_lower(metric) and alternative != "two-sided":
        return "less" if alternative == "greater" else "greater"
    return alternative


def _run_chunk(task: PreparedTask, idx: list, seed_keys: list, alternative: str, options: dict, root: Optional[int],
               n_jobs: Optional[int], executor: Any, progress: Any, confidence_level: Optional[float]) -> list:
    """The pairs `idx` of one task: per pair a dict of its test result and, for sums and
    means, its permutation-inversion interval in the metric's units."""
    pairs = task.pairs[idx]
    out = run_pairs(task.arrays, task.systems, pairs, task.metric, alternative, options, root, n_jobs,
                            executor, progress, seed_keys=seed_keys, units=task.units)
    intervals = shift_intervals(task, pairs, alternative, confidence_level, n_jobs)
    return [{"statistic": out.statistic[k], "pvalue": float(out.pvalue[k]), "log_pvalue": float(out.log_pvalue[k]),
             "test": out.test[k], "engine": out.engine[k], "ci_low": low, "ci_high": high}
            for k, (low, high) in enumerate(intervals)]


def shift_intervals(task: PreparedTask, pairs: np.ndarray, alternative: str,
                    confidence_level: Optional[float], n_jobs: Optional[int] = None) -> list:
    """(low, high) of each pair's difference by inverting the permutation test, in the metric's
    units, for sums and means; NaN for other metrics (bootstrapped per task) and without a level."""
    units = _shift_units(task.metric)
    if confidence_level is None or units is None:
        return [(math.nan, math.nan)] * len(pairs)
    ci_alt = _interval_alternative(task.metric, alternative)
    sizes = task.item_counts
    unequal = sizes is not None and not bool(np.all(sizes == sizes[0]))
    if task.int_rows is not None and task.int_rows.shape[1] > AUTO_EXACT_MAX and not unequal:
        # Every pair in one call of the core (shift_interval's lattice or saddlepoint route).
        n = task.int_rows.shape[1]
        bounds = batch_shift_bounds(task.int_rows, pairs, confidence_level, ci_alt, n_jobs)
        if units == "sum_difference":
            bounds = bounds * n
        elif sizes is not None:
            bounds = bounds * n / task.n_items  # the units' summed difference, per item
        return list(map(tuple, bounds.tolist()))
    out = []
    for i, j in pairs.tolist():
        x, y = task.arrays[i], task.arrays[j]
        if x.dtype.kind == "i" and int(np.abs(x - y).max(initial=0)) >= 2**53:
            # Subset means of such differences are not exact in float64: no interval, not a wrong one.
            out.append((math.nan, math.nan))
            continue
        d = x - y if x.dtype == y.dtype else x.astype(np.float64) - y.astype(np.float64)
        si = differences_interval(d, confidence_level, ci_alt, "auto", _FUNC, weights=sizes)
        low, high = getattr(si, units)
        out.append((float(low), float(high)))
    return out


def task_intervals(task: PreparedTask, confidence_level: float, alternative: str, bootstrap_resamples: int,
                   seed: int, shifted: Optional[list], simultaneous: bool = False) -> tuple[tuple, np.ndarray]:
    """Each system's bootstrap interval and each pair's difference interval: the intervals given
    (shift intervals of sums and means, or the simultaneous ones of correction="maxT") or, for
    other metrics, from the same shared resamples."""
    units = _shift_units(task.metric)
    sys_iv, pair_ci = _bootstrap(task, confidence_level, alternative, bootstrap_resamples, seed,
                                 with_pairs=units is None and not simultaneous)
    if pair_ci is None:
        pair_ci = np.array(shifted, dtype=np.float64).reshape(len(task.pairs), 2)
    return tuple((float(lo), float(hi)) for lo, hi in sys_iv), pair_ci


def _ratio_of_sums(sums: np.ndarray) -> np.ndarray:
    return sums[..., 0] / sums[..., 1]


def bootstrap_input(metric: Any, arrays: list, item_counts: Optional[np.ndarray] = None) -> tuple[list, Any, int]:
    """(per-system statistics, bootstrap_intervals' metric, scale): each system's bootstrapped
    metric times `scale` is the metric compare_systems reports. With units of several items
    (`item_counts`), a mean per item is the ratio of the resampled units' sums and counts."""
    if callable(metric):
        return arrays, metric, 1
    row = METRICS[metric]
    if item_counts is not None and row.per_item:
        stats = [np.column_stack([a, item_counts]) for a in arrays]
        return stats, _ratio_of_sums, int(item_counts.sum()) if row.summed else 1
    if row.per_item:
        return arrays, "mean", len(arrays[0]) if row.summed else 1
    if row.kind == "ratio":
        return arrays, row.value, 1
    return arrays, metric, 1  # macro_f1, bleu, corpus_chrf


# The unsampled bootstrap costs O(distinct values) per step of its quantile search: integer
# scores over at most this range (0/1, counts, ratings) take it; wider or real-valued scores,
# whose distinct values can be as many as the items, take the shared paired resamples.
_UNSAMPLED_MAX_RANGE = 1024


def _narrow_integers(a: np.ndarray) -> bool:
    return a.dtype.kind == "i" and len(a) > 0 and int(a.max()) - int(a.min()) <= _UNSAMPLED_MAX_RANGE


def _bootstrap(task: PreparedTask, confidence_level: float, alternative: str, n_resamples: int, seed: int,
               with_pairs: bool) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """Each system's interval and (with_pairs) each pair's difference interval, all from one
    shared set of paired resamples of the task's items; for sums and means of narrow integer
    scores (no pairs asked for), each system's interval with infinitely many resamples."""
    stats, metric, scale = bootstrap_input(task.metric, task.arrays, task.item_counts)
    if (not with_pairs and _shift_units(task.metric) is not None and task.item_counts is None
            and all(_narrow_integers(a) for a in task.arrays)):
        # Sums and means of items: each system's resampled mean involves that system only.
        return bootstrap_mean_intervals(task.arrays, confidence_level) * scale, None
    ci_alt = _interval_alternative(task.metric, alternative)
    none = np.zeros((0, 2), dtype=np.int64)
    both = with_pairs and ci_alt == "two-sided"
    r = bootstrap_intervals(stats, metric, pairs=task.pairs if both else none, method="percentile",
                            confidence_level=confidence_level, n_resamples=n_resamples, rng=seed)
    pair_intervals = r.difference_intervals * scale if both else None
    if with_pairs and not both:
        # One-sided pair intervals from the same resamples (same seed); systems stay two-sided.
        p = bootstrap_intervals(stats, metric, pairs=task.pairs, method="percentile", alternative=ci_alt,
                                confidence_level=confidence_level, n_resamples=n_resamples, rng=seed)
        pair_intervals = p.difference_intervals * scale
    return r.intervals * scale, pair_intervals


def _options_key(task: PreparedTask, metric_id: str, alternative: str, options: dict, seed: Optional[int],
                 confidence_level: Optional[float]) -> str:
    units = _shift_units(task.metric)
    return json.dumps({
        "pairperm": __version__, "metric": metric_id, "alternative": alternative,
        "method": options.get("method", "auto"), "n_resamples": options.get("n_resamples"), "seed": seed,
        "shift_interval": units if confidence_level is not None and units else None,
        "confidence_level": confidence_level if units else None,
        "units": None if task.units is None else "samples" if task.units[1] is None else data_digest(task.units[1]),
    }, sort_keys=True)


def interval_seed(root: Optional[int], task: str) -> int:
    """The seed of a task's bootstrap intervals: from rng when given, else fixed by the task's
    name (as sacrebleu fixes its bootstrap's), so that unseeded reruns report the same intervals."""
    drawn = child_seed(root, _name_key(task))
    return drawn if drawn is not None else _name_key(task)


# Joint null draws of correction="maxT" (adjusted p-values resolve 1e-4), unless n_resamples says.
MAXT_DRAWS = 9_999


def check_maxt_draws(options: dict, alpha: Any, level: Optional[float]) -> None:
    """correction="maxT"'s draws must be able to reject at alpha, and its intervals to exclude."""
    n_draws = int(options.get("n_resamples", MAXT_DRAWS))
    check_draws_reach(n_draws, float(alpha), "alpha", _FUNC)
    if level is not None:
        check_draws_reach(n_draws, 1.0 - level, "level", _FUNC)


def check_maxt(task: PreparedTask) -> None:
    """correction="maxT" draws the systems' estimates from their statistics per unit: a metric of
    the registry, not a callable (checked before any pair runs)."""
    if callable(task.metric):
        where = f"task {task.name!r} has" if task.name else "got"
        raise ValueError(f"{_FUNC}: correction='maxT' needs a metric by name (its statistics are resampled); "
                         f"{where} a callable")


def maxt_draws(task: PreparedTask, pairs: np.ndarray, alternative: str, n_draws: int, seed: int) -> PairDraws:
    """The task's `pairs` with joint null draws of its systems' estimates, for correction="maxT"."""
    check_maxt(task)
    units = unit_matrix(task.arrays)
    return pair_draws(flat_units(units), value_of_sums(task.metric, units.shape[2:]), prefers_lower(task.metric),
                      pairs, alternative, n_draws, np.random.default_rng(seed))


def maxt_corrected(tasks: list, families: list, alternative: str,
                   level: Optional[float]) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """Westfall-Young step-down adjusted p-values of the families' compared pairs jointly (a
    pair's is that of its direction with the smaller one) and, at `level`, intervals of each
    pair's difference in the metric's units, simultaneous and compatible with the step-down: an
    interval at level 1 - alpha excludes 0 exactly when its pair is marked at alpha, an end at 0
    then being open (rows in the order of the pairs; None without a level)."""
    hypotheses = westfall_young(families)
    bounds = compatible_bounds(families, hypotheses, level) if level is not None else None
    adjusted, intervals, at = [], [], 0
    for task, family in zip(tasks, families):
        h = len(family.stats)
        n_pairs = int(family.pair.max()) + 1 if h else 0
        adjusted.append(per_pair(family, hypotheses[at:at + h], n_pairs, 1.0, np.minimum))
        if bounds is not None:
            lower = bounds[at:at + h]
            ahead = family.forward
            low = np.full(n_pairs, -np.inf)
            high = np.full(n_pairs, np.inf)
            low[family.pair[ahead]] = lower[ahead]          # theta_i - theta_j >= the bound
            high[family.pair[~ahead]] = -lower[~ahead]      # theta_j - theta_i >= the bound
            # Oriented estimates to the metric's units: totals per unit over the items for a
            # mean, the metric itself for ratios and corpus metrics; lower-is-better flips them.
            scale = float(task.n_items) if is_per_item(task.metric) and not is_summed(task.metric) else 1.0
            if prefers_lower(task.metric):
                low, high = -high, -low
            intervals.append(np.stack([low / scale, high / scale], axis=1))
        at += h
    return np.concatenate(adjusted), (np.concatenate(intervals) if bounds is not None else None)


def interval_options(confidence_level: Any, bootstrap_resamples: Any) -> tuple[Optional[float], int]:
    """The validated level of the intervals (None: none) and the bootstrap's resamples."""
    level = check_probability(confidence_level, "confidence_level", _FUNC, optional=True)
    if not (isinstance(bootstrap_resamples, numbers.Integral) and not isinstance(bootstrap_resamples, bool)
            and int(bootstrap_resamples) >= 1):
        raise ValueError(f"{_FUNC}: bootstrap_resamples must be a positive integer; got {bootstrap_resamples!r}")
    return level, int(bootstrap_resamples)


def compare_tasks(scores: Any, metric: Any, *, baseline: Any, alternative: str, correction: Any, correction_scope: Any,
                  alpha: Any, n_jobs: Any, executor: Any, progress: Any, names: Any, confidence_level: Any,
                  bootstrap_resamples: Any, cache: Any, columns: Any, options: dict,
                  groups: Any = None, id_column: Any = None) -> MultiTaskComparison:
    """compare_systems() on several tasks (its docstring documents the arguments)."""
    if correction_scope not in SCOPES:
        raise ValueError(f"{_FUNC}: correction_scope must be one of {', '.join(map(repr, SCOPES))}; "
                         f"got {correction_scope!r}")
    level, n_boot = interval_options(confidence_level, bootstrap_resamples)
    store = as_cache(cache, _FUNC)
    options = dict(options)
    root = seed_root(options.pop("rng", None), _FUNC)
    items: dict = {}
    if is_dataframe(scores):
        scores, items = long_table_tasks(scores, columns)
    elif columns is not None:
        raise ValueError(f"{_FUNC}: columns names the columns of a long table (a pandas DataFrame); scores is a "
                         f"{type(scores).__name__}")
    task_names = [str(t) for t in scores]
    if len(set(task_names)) != len(task_names):
        raise ValueError(f"{_FUNC}: task names must be unique as strings; got {list(scores)}")
    metrics = task_metrics(metric, task_names)
    units = task_groups(groups, task_names)
    prepared = [prepare_task(t, v, metrics[t], names, baseline, alternative, correction, alpha, n_jobs, executor,
                             options, units.get(t), id_column, items.get(t))
                for t, v in zip(task_names, scores.values())]

    if correction == "maxT":
        check_maxt_draws(options, alpha, level)
        for task in prepared:
            check_maxt(task)
    # Every metric keyed before any pair runs: a metric the cache cannot key is refused up front.
    metric_ids = [_metric_id(t.metric, t.name) if store is not None else "" for t in prepared]
    total = sum(len(t.pairs) for t in prepared)
    overall = Progress(progress, total)
    results: dict = {}  # (task index, pair index) -> finished pair
    try:
        for ti, task in enumerate(prepared):
            _run_task(ti, task, metric_ids[ti], alternative, options, root, n_jobs, executor, level, store, overall,
                      results)
    except KeyboardInterrupt as exc:
        # The pairs finished so far travel with the interrupt (and are in the cache, if any).
        exc.partial_result = _assemble(  # type: ignore[attr-defined]
            prepared, results, alternative, correction, correction_scope, alpha, baseline, level, options, root, n_boot,
            complete=False)
        raise
    finally:
        overall.close()
    return _assemble(prepared, results, alternative, correction, correction_scope, alpha, baseline, level, options,
                     root, n_boot, complete=True)


def _run_task(ti: int, task: PreparedTask, metric_id: str, alternative: str, options: dict, root: Optional[int],
              n_jobs: Any, executor: Any, level: Optional[float], store: Any, overall: Any, results: dict) -> None:
    """Fill `results` with the task's pairs: from the cache where found, computed otherwise
    (in chunks stored as they finish when there is a cache)."""
    seeds = [_name_key(task.name, task.systems[i], task.systems[j]) for i, j in task.pairs.tolist()]
    keys: list = [None] * len(task.pairs)
    todo = list(range(len(task.pairs)))
    if store is not None:
        # The items themselves: with groups, a pair's result depends on more than the unit sums.
        digests = [data_digest(a) for a in (task.arrays if task.units is None else task.units[0])]
        todo = []
        for k, (i, j) in enumerate(task.pairs.tolist()):
            seed = child_seed(root, seeds[k])
            keys[k] = pair_key(_options_key(task, metric_id, alternative, options, seed, level), digests[i], digests[j])
            hit = store.get(keys[k])
            if hit is None:
                todo.append(k)
            else:
                results[ti, k] = hit
        overall.update(len(task.pairs) - len(todo))
    step = _CACHE_CHUNK if store is not None else max(1, len(todo))
    for start in range(0, len(todo), step):
        idx = todo[start:start + step]
        done = [0]

        def tick(n_done: int, _total: int, done: list = done) -> None:
            overall.update(n_done - done[0])
            done[0] = n_done

        with errors_naming(f"task {task.name!r}"):
            chunk = _run_chunk(task, idx, [seeds[k] for k in idx], alternative, options, root, n_jobs, executor, tick,
                               level)
        for k, value in zip(idx, chunk):
            if store is not None:
                store.set(keys[k], value)
            results[ti, k] = value  # after the store: a partial result never holds a pair the cache lacks


def _maxt_over_tasks(prepared: list, per_task: list, owner: np.ndarray, adjusted: np.ndarray,
                     alternative: str, correction_scope: str, level: Optional[float], options: dict,
                     root: Optional[int]) -> None:
    """correction="maxT" over the finished pairs (in the order of per_task, task by task): the
    Westfall-Young step-down within each task, or over all tasks at once (independent tasks draw
    independently); each row's interval becomes the simultaneous one of its family."""
    n_draws = int(options.get("n_resamples", MAXT_DRAWS))
    ks = [[k for t, k, _, _ in per_task if t == ti] for ti in range(len(prepared))]
    families = [maxt_draws(task, task.pairs[np.asarray(k, dtype=np.int64).reshape(-1)], alternative, n_draws,
                           interval_seed(root, task.name)) for task, k in zip(prepared, ks)]
    groups = [list(range(len(prepared)))] if correction_scope == "family" else [[ti] for ti in range(len(prepared))]
    for every in groups:
        members = [ti for ti in every if ks[ti]]  # a task without a finished pair (after Ctrl-C) adds none
        if not members:
            continue
        sel = np.isin(owner, members)
        adj, intervals = maxt_corrected([prepared[ti] for ti in members], [families[ti] for ti in members],
                                        alternative, level)
        adjusted[sel] = adj
        if intervals is not None:
            for (_, _, r, _), (low, high) in zip((e for e, s in zip(per_task, sel) if s), intervals.tolist()):
                r["ci_low"], r["ci_high"] = low, high


def _assemble(prepared: list, results: dict, alternative: str, correction: Any, correction_scope: str, alpha: Any,
              baseline: Any, level: Optional[float], options: dict, root: Optional[int], bootstrap_resamples: int,
              complete: bool) -> MultiTaskComparison:
    """Rows of the finished pairs with their intervals and adjusted p-values, and the tasks' summaries.
    An incomplete result keeps the intervals its pairs carry (sums and means) and makes no
    bootstrap: after Ctrl-C nothing more is computed (those intervals are NaN)."""
    summaries = []
    per_task: list = []  # (task, pair index, finished pair, interval) for every finished pair
    for ti, task in enumerate(prepared):
        values = list(task.values)
        done = [k for k in range(len(task.pairs)) if (ti, k) in results]
        units = _shift_units(task.metric)
        system_ci: tuple = ()
        pair_ci: Optional[np.ndarray] = None
        seed: Optional[int] = None
        if level is not None:
            seed = interval_seed(root, task.name)
            if complete:
                sys_iv, pair_ci = _bootstrap(task, level, alternative, bootstrap_resamples, seed,
                                             with_pairs=units is None)
                system_ci = tuple((float(lo), float(hi)) for lo, hi in sys_iv)  # pair_ci: None for shift intervals
            else:
                system_ci = ((math.nan, math.nan),) * len(task.systems)
        summaries.append(TaskSummary(
            name=task.name, metric=_metric_name(task.metric),
            systems=tuple(task.systems), metric_values=tuple(values), system_intervals=system_ci,
            n_items=task.n_items, n_units=task.n_units,
            interval_method="" if level is None else ("shift_interval" if units else "bootstrap_percentile"),
            bootstrap_seed=seed))
        for k in done:
            r = dict(results[ti, k])
            if pair_ci is not None:
                r["ci_low"], r["ci_high"] = float(pair_ci[k, 0]), float(pair_ci[k, 1])
            elif level is None:
                r["ci_low"] = r["ci_high"] = math.nan
            per_task.append((ti, k, r, values))
    p = np.array([r["pvalue"] for _, _, r, _ in per_task], dtype=np.float64)
    adjusted = np.empty_like(p)
    owner = np.array([ti for ti, _, _, _ in per_task], dtype=np.int64)
    if correction == "maxT":
        _maxt_over_tasks(prepared, per_task, owner, adjusted, alternative, correction_scope, level, options, root)
    elif correction_scope == "family":
        adjusted[:] = multipletests(p, correction)
    else:
        for ti in range(len(prepared)):
            sel = owner == ti
            adjusted[sel] = multipletests(p[sel], correction)
    rows = []
    for (ti, k, r, values), adj in zip(per_task, adjusted.tolist()):
        task = prepared[ti]
        i, j = task.pairs[k]
        va, vb = values[i], values[j]
        log_p = r.get("log_pvalue")  # absent from pairs cached before rows kept it
        if log_p is None:
            log_p = math.log(r["pvalue"]) if r["pvalue"] > 0 else -math.inf
        rows.append(TaskPair(task.name, task.systems[i], task.systems[j], va, vb, va - vb, r["ci_low"], r["ci_high"],
                             r["statistic"], r["pvalue"], float(adj), bool(adj <= alpha), r["test"], r["engine"],
                             float(log_p)))
    return MultiTaskComparison(
        tasks=tuple(summaries), rows=tuple(rows), alternative=alternative, correction=correction,
        correction_scope=correction_scope, alpha=float(alpha), baseline=None if baseline is None else str(baseline),
        confidence_level=level, method=str(options.get("method", "auto")), n_resamples=options.get("n_resamples"),
        seed=root, bootstrap_resamples=int(bootstrap_resamples), complete=complete,
        unit_scores={t.name: tuple(t.arrays) for t in prepared if not callable(t.metric)},
    )


def _metric_name(metric: Any) -> str:
    return getattr(metric, "__name__", "callable") if callable(metric) else str(metric)
