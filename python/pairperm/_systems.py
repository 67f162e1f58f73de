"""compare_systems(): every pair of many systems, each with the test compare() runs, corrected
for multiple testing, reported the way evaluation papers print it.

Integer-sum metrics (accuracy and friends) go to one C++ batch over a score matrix, which runs
the engine the core's planner picks for each pair (as compare() does) on C++ threads; the
other metrics, and pairs whose engine the batch does not run, run compare() per pair on a
thread pool.
Any concurrent.futures.Executor spreads the pairs over processes or machines in chunks that
ship each needed system once per chunk.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, Optional, Sequence, Union, overload

import numpy as np
import numpy.typing as npt

from . import _tasks
from ._comparison import SystemPair, SystemsComparison
from ._inputs import PreparedTask, check_single_task_options, is_several_tasks, pair_indices, read_task_systems
from ._multipletests import multipletests
from ._pairs import run_pairs
from ._version import __version__
from .typing import Alternative, ProgressCallback, SystemsCorrection

if TYPE_CHECKING:
    from ._multitask import MultiTaskComparison

    # A metric as pairperm.compare takes it: a name or a vectorised callable of summed statistics.
    _Metric = Union[str, Callable[[np.ndarray], np.ndarray]]
    # One task's systems that are never read as several tasks: an array (n_systems, N, ...), a
    # sequence of systems, or a mapping of names to arrays or sequences (no mapping, no DataFrame).
    _OneTaskScores = Union[npt.NDArray[Any], Sequence[Any], Mapping[str, Union[npt.NDArray[Any], Sequence[Any]]]]

__all__ = ["compare_systems"]


_FUNC = "compare_systems"


# ---------------------------------------------------------------- the result


# ---------------------------------------------------------------- workers (module level: they must pickle)


# ---------------------------------------------------------------- scheduling


# ---------------------------------------------------------------- the function


# Several tasks: a mapping task -> {system: scores}.
@overload
def compare_systems(scores: Mapping[str, Mapping[str, Any]], metric: Union[_Metric, Mapping[str, _Metric]] = ..., *,
                    baseline: Optional[str] = ..., alternative: Alternative = ..., correction: Optional[SystemsCorrection] = ...,
                    alpha: float = ..., n_jobs: Optional[int] = ..., executor: Optional[cf.Executor] = ...,
                    progress: Union[None, bool, ProgressCallback] = ..., names: Optional[Sequence[str]] = ...,
                    correction_scope: Literal["task", "family"] = ..., confidence_level: Optional[float] = ...,
                    bootstrap_resamples: int = ..., cache: Any = ..., columns: Optional[Mapping[str, Any]] = ...,
                    groups: Any = ..., id_column: Optional[str] = ..., **options: Any) -> MultiTaskComparison: ...
# A metric per task ({task: metric}) is for several tasks only.
@overload
def compare_systems(scores: Any, metric: Mapping[str, _Metric], *,
                    baseline: Optional[str] = ..., alternative: Alternative = ..., correction: Optional[SystemsCorrection] = ...,
                    alpha: float = ..., n_jobs: Optional[int] = ..., executor: Optional[cf.Executor] = ...,
                    progress: Union[None, bool, ProgressCallback] = ..., names: Optional[Sequence[str]] = ...,
                    correction_scope: Literal["task", "family"] = ..., confidence_level: Optional[float] = ...,
                    bootstrap_resamples: int = ..., cache: Any = ..., columns: Optional[Mapping[str, Any]] = ...,
                    groups: Any = ..., id_column: Optional[str] = ..., **options: Any) -> MultiTaskComparison: ...
# So are the column names of a long table.
@overload
def compare_systems(scores: Any, metric: Union[_Metric, Mapping[str, _Metric]] = ..., *,
                    baseline: Optional[str] = ..., alternative: Alternative = ..., correction: Optional[SystemsCorrection] = ...,
                    alpha: float = ..., n_jobs: Optional[int] = ..., executor: Optional[cf.Executor] = ...,
                    progress: Union[None, bool, ProgressCallback] = ..., names: Optional[Sequence[str]] = ...,
                    correction_scope: Literal["task", "family"] = ..., confidence_level: Optional[float] = ...,
                    bootstrap_resamples: int = ..., cache: Any = ..., columns: Mapping[str, Any],
                    groups: Any = ..., id_column: Optional[str] = ..., **options: Any) -> MultiTaskComparison: ...
# One task: an array or a sequence of systems, or a mapping of names to arrays or sequences, with
# none of the options that only several tasks take.
@overload
def compare_systems(scores: _OneTaskScores, metric: _Metric = ..., *,
                    baseline: Optional[str] = ..., alternative: Alternative = ..., correction: Optional[SystemsCorrection] = ...,
                    alpha: float = ..., n_jobs: Optional[int] = ..., executor: Optional[cf.Executor] = ...,
                    progress: Union[None, bool, ProgressCallback] = ..., names: Optional[Sequence[str]] = ...,
                    correction_scope: Literal["task", "family"] = ..., confidence_level: Optional[float] = ...,
                    bootstrap_resamples: int = ..., cache: None = ..., columns: None = ...,
                    groups: Any = ..., id_column: Optional[str] = ..., **options: Any) -> SystemsComparison: ...
# Anything else (a DataFrame, a mapping of pandas objects): which one only the data tell.
@overload
def compare_systems(scores: Any, metric: Union[_Metric, Mapping[str, _Metric]] = ..., *,
                    baseline: Optional[str] = ..., alternative: Alternative = ..., correction: Optional[SystemsCorrection] = ...,
                    alpha: float = ..., n_jobs: Optional[int] = ..., executor: Optional[cf.Executor] = ...,
                    progress: Union[None, bool, ProgressCallback] = ..., names: Optional[Sequence[str]] = ...,
                    correction_scope: Literal["task", "family"] = ..., confidence_level: Optional[float] = ...,
                    bootstrap_resamples: int = ..., cache: Any = ..., columns: Optional[Mapping[str, Any]] = ...,
                    groups: Any = ..., id_column: Optional[str] = ...,
                    **options: Any) -> Union[SystemsComparison, MultiTaskComparison]: ...
def compare_systems(scores: Any, metric: Union[_Metric, Mapping[str, _Metric]] = "accuracy", *,
                    baseline: Optional[str] = None, alternative: Alternative = "two-sided",
                    correction: Optional[SystemsCorrection] = "holm", alpha: float = 0.05, n_jobs: Optional[int] = None,
                    executor: Optional[cf.Executor] = None, progress: Union[None, bool, ProgressCallback] = None,
                    names: Optional[Sequence[str]] = None, correction_scope: Literal["task", "family"] = "task",
                    confidence_level: Optional[float] = 0.95, bootstrap_resamples: int = 1000, cache: Any = None,
                    columns: Optional[Mapping[str, Any]] = None, groups: Any = None, id_column: Optional[str] = None,
                    **options: Any) -> Union[SystemsComparison, MultiTaskComparison]:
    """Compare many systems evaluated on the same entries: every pair, or each against a baseline.

    Each pair runs the test :func:`pairperm.compare` runs for `metric` (exact wherever one
    exists), and the p-values are corrected for multiple testing over the family of pairs.
    Several tasks at once (``{task: scores}`` or a long table) give a
    :class:`pairperm.MultiTaskComparison`: one long table of pairs with effect sizes and
    confidence intervals, and a systems x tasks report.

    Parameters
    ----------
    scores : mapping, pandas DataFrame or array
        One task: a mapping ``name -> per-entry scores`` (each shaped as
        ``compare(metric=...)`` takes it); pandas Series (or per-system DataFrames) are paired
        by their index labels, the same ids in any order. A DataFrame with one column per
        system (read by name). Or an array of shape ``(n_systems, N, ...)`` with `names`. A
        system that looks like a column of item ids is refused unless chosen with `names`.

        Several tasks: a mapping ``task -> one task's scores`` (read so when a value is a
        mapping, or a DataFrame of several columns for a metric that does not read per-system
        DataFrames of statistics), or a long DataFrame with one row per (task, item, system)
        and columns ``task``, ``item``, ``system``, ``score`` (other names through `columns`),
        aligned by item within each task.
    metric : str, callable or mapping
        As in :func:`pairperm.compare`; with several tasks also ``{task: metric}``.
    baseline : str, optional
        Compare each other system (``system_a``) against this one (``system_b``) only.
        Otherwise every unordered pair, in the order given.
    alternative : {"two-sided", "greater", "less"}
        Per pair, as in ``compare(system_a, system_b)`` ("greater": A is better).
    correction : {"holm", "bonferroni", "fdr_bh", "fdr_by", "maxT", None}
        Multiple-testing adjustment over the pairs compared. ``"maxT"`` (metrics by name) is the
        Westfall-Young step-down over joint null draws of all systems' estimates (the systems'
        scores of each item permuted jointly below 100 items or units, Gaussian multipliers
        above, through the linearised metric for ratios and corpus metrics; ``n_resamples``
        draws, default 9,999): strong familywise control that uses the dependence between pairs
        sharing a system, more power than Holm. Each direction of a pair is its own hypothesis
        (a mark says which system is better), and a pair's adjusted p-value is its better
        direction's; it comes from the draws, not from the pair's own test. The rows' intervals
        are then simultaneous and compatible with the step-down (Strassburger and Bretz): at
        level ``1 - alpha`` an interval lies on one side of 0 exactly when its pair is marked,
        its end at 0 open (the difference is surely on that side; the step-down says no more).
    alpha : float
        A pair is ``significant`` when its adjusted p-value is <= alpha.
    n_jobs : int, optional
        Threads on this machine (default: all cores). With an `executor`, the C++ threads each
        task may use (default 1: the executor supplies the parallelism).
    executor : concurrent.futures.Executor, optional
        Runs the pairs elsewhere (a ProcessPoolExecutor, a dask ``Client.get_executor()``, ...)
        in chunks shipping only the systems they need; results are identical to the local run.
    progress : None, bool or callable
        ``callable(done, total)`` is called as pairs finish. None (default) shows a bar on a
        terminal's stderr once a run has taken more than ~2 s (tqdm if installed); False never
        does; True always does.
    names : sequence of str, optional
        Row names of an array input; for a mapping or DataFrame, the systems to compare (by
        name) and their order (in every task).
    correction_scope : {"task", "family"}
        Several tasks: adjust the p-values within each task (default) or over all pairs of all
        tasks.
    confidence_level : float or None
        The level of every interval (default 0.95); None computes none. A pair's
        ``difference`` (metric of A minus metric of B, in the metric's units) gets the interval
        :func:`pairperm.shift_interval` gives for sums and means, and a paired bootstrap
        percentile interval from one shared set of resamples per task for the other metrics,
        which also gives each system's own interval (see :doc:`/user-guide/many-systems`).
        One-sided tests get one-sided pair intervals; without ``rng`` the bootstrap is seeded by
        the task's name.
    bootstrap_resamples : int
        Resamples of each task's shared bootstrap (default 1000, as sacrebleu).
    cache : None, str, path or object
        Several tasks: a directory (or an object with ``get(key)`` and ``set(key, value)``)
        holding finished pairs, keyed on the two systems' data and every option that decides
        the pair's result; a repeated or interrupted run computes only the pairs it does not
        find (a callable metric is keyed by what decides its results; see
        :doc:`/user-guide/many-systems`). After Ctrl-C the KeyboardInterrupt carries the pairs
        finished so far as ``exc.partial_result``.
    groups : array_like or mapping, optional
        The exchangeable unit of each item (passage, prompt ...): one label per item (a pandas
        Series is matched to the items by id), or with several tasks ``{task: labels}``. Items
        of a unit are swapped and resampled together; values and intervals stay per item. See
        :doc:`/user-guide/units`.
    columns : mapping, optional
        Column names of a long table: ``{"task": ..., "item": ..., "system": ..., "score": ...}``
        (any subset; ``"score"`` may list several columns, e.g. ``("tp", "fp", "fn")`` for F1).
    id_column : str, optional
        The DataFrame column holding the items' ids (checked to be unique): not a system.
    **options
        Passed on to :func:`pairperm.compare` (``method``, ``n_resamples``, ``rng``): every pair
        gets the test, engine and p-value compare() gives it. An ``rng`` seeds every pair from
        the pair's index (with several tasks, from the names of the task and the two systems),
        so seeded runs repeat exactly whatever `n_jobs` or `executor`.

    Returns
    -------
    SystemsComparison (one task) or MultiTaskComparison (several tasks)

    Examples
    --------
    >>> import pairperm
    >>> scores = {"A": [5, 7, 9, 4, 8, 6, 9, 8],      # correct tokens per sentence
    ...           "B": [4, 7, 6, 4, 5, 6, 5, 6],
    ...           "C": [5, 8, 9, 4, 8, 7, 9, 8]}
    >>> res = pairperm.compare_systems(scores, metric="sum")
    >>> res
    SystemsComparison(metric='sum', systems=3, pairs=3, alternative='two-sided', correction='holm', alpha=0.05)
      system_a  system_b    metric_a    metric_b   difference     ci_low    ci_high      pvalue    adjusted  sig  test
      A         B                 56          43           13          0         24      0.0625       0.125       permutation_test
      A         C                 56          58           -2   -5.33333          0         0.5         0.5       permutation_test
      B         C                 43          58          -15        -24   -5.33333     0.01562     0.04688   *   permutation_test
    >>> res.wins()
    {'A': [], 'B': [], 'C': ['B']}
    """
    if is_several_tasks(scores, metric, columns):
        return _tasks.compare_tasks(
            scores, metric, baseline=baseline, alternative=alternative, correction=correction,
            correction_scope=correction_scope, alpha=alpha, n_jobs=n_jobs, executor=executor, progress=progress,
            names=names, confidence_level=confidence_level, bootstrap_resamples=bootstrap_resamples, cache=cache,
            columns=columns, options=options, groups=groups, id_column=id_column)
    check_single_task_options(metric, correction_scope, cache, columns)
    return _compare_one_task(scores, metric, baseline, alternative, correction, alpha, n_jobs, executor, progress,
                             names, confidence_level, bootstrap_resamples, groups, id_column, options)


def _compare_one_task(scores: Any, metric: Any, baseline: Any, alternative: Any, correction: Any, alpha: Any,
                      n_jobs: Any, executor: Any, progress: Any, names: Any, confidence_level: Any,
                      bootstrap_resamples: Any, groups: Any, id_column: Any, options: dict[str, Any]) -> SystemsComparison:
    """compare_systems() on one task."""
    level, n_boot = _tasks.interval_options(confidence_level, bootstrap_resamples)
    sys_names, arrays, root, n_jobs, items = read_task_systems(scores, metric, names, alternative, correction,
                                                                 alpha, n_jobs, executor, options, id_column)
    pairs = pair_indices(sys_names, baseline)
    task = PreparedTask.of("", metric, sys_names, arrays, pairs, groups, items=items)
    if correction == "maxT":
        _tasks.check_maxt_draws(options, alpha, level)
        _tasks.check_maxt(task)
    out = run_pairs(task.arrays, sys_names, pairs, metric, alternative, options, root, n_jobs, executor, progress,
                   units=task.units)
    values = task.values
    system_ci: tuple[Any, ...] = ()
    pair_ci = np.full((len(pairs), 2), math.nan)
    seed = _tasks.interval_seed(root, "")
    maxt = None
    if correction == "maxT":
        family = _tasks.maxt_draws(task, pairs, alternative, int(options.get("n_resamples", _tasks.MAXT_DRAWS)), seed)
        adjusted, maxt = _tasks.maxt_corrected([task], [family], alternative, level)
    else:
        adjusted = multipletests(out.pvalue, correction)
    if level is not None:
        system_ci, pair_ci = _tasks.task_intervals(
            task, level, alternative, n_boot, seed,
            _tasks.shift_intervals(task, pairs, alternative, level, n_jobs) if maxt is None else maxt.tolist(),
            simultaneous=maxt is not None)
    # As Python floats and bools up front: per-pair indexing of NumPy arrays would cost more than the pair's test.
    rows = tuple(
        SystemPair(sys_names[i], sys_names[j], values[i], values[j], st, p, a, bool(a <= alpha), name, ran,
                   values[i] - values[j], lo, hi, log_p)
        for (i, j), st, p, log_p, a, name, ran, (lo, hi) in zip(
            pairs.tolist(), out.statistic, out.pvalue.tolist(), out.log_pvalue.tolist(),
            np.asarray(adjusted, dtype=np.float64).tolist(), out.test, out.engine, pair_ci.tolist())
    )
    return SystemsComparison(
        names=tuple(sys_names),
        metric=getattr(metric, "__name__", "callable") if callable(metric) else metric,
        metric_values=tuple(values),
        rows=rows,
        alternative=alternative,
        correction=correction,
        alpha=float(alpha),
        baseline=None if baseline is None else str(baseline),
        confidence_level=level,
        system_intervals=system_ci,
        unit_scores=() if callable(metric) else tuple(task.arrays),
        provenance={"pairperm_version": __version__, "n_items": task.n_items, "n_units": task.n_units,
                    "method": str(options.get("method", "auto")), "n_resamples": options.get("n_resamples"),
                    "seed": root, "bootstrap_resamples": n_boot if level is not None else None,
                    "bootstrap_seed": seed if level is not None else None},
    )
