"""Across independent tasks: on which tasks system A beats B, and on how many.

Two systems compared on m independent tasks (data sets, languages, domains) give m one-sided
p-values, one per task.

- **Which tasks**: the minP step-down of Westfall and Wolfinger (1997) over the m tasks, with
  each task's exact null distribution. The tasks are independent, so the probability that the
  least of the remaining tasks' p-values falls at or below c is ``1 - prod(1 - F_j(c))``, where
  ``F_j(c)`` is the largest p-value task j's exact test can reach at or below c: a discrete test
  that cannot reach c adds nothing, and one that cannot reach alpha at all drops out (Tarone's
  observation) instead of diluting the others as under Bonferroni or Holm. p-values of tests
  without a finite null distribution (real-valued scores, ratios, corpus metrics) count as
  continuous, ``F_j(c) = c``.
- **How many**: the partial conjunction p-values of Benjamini and Heller (2008) for "A beats B
  on at least u of the m tasks", u = 1..m, as Dror, Baumer, Bogomolov and Reichart (TACL 2017)
  apply them across NLP data sets (Fisher's combination of the m - u + 1 largest p-values, or
  Bonferroni's), made monotone in u by a running maximum (a count must not be reachable with a
  weaker claim refused); the estimated count of tasks with an effect is the largest u whose
  p-value is at most alpha.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, NamedTuple, Optional

import numpy as np

from ._compare import compare
from ._inputs import PreparedTask, read_systems, task_groups, task_metrics
from ._metrics import METRICS, is_per_item
from ._permutation import null_distribution
from ._sampling import child_seed, seed_root
from ._validation import check_alternative, check_probability
from .typing import Alternative

__all__ = ["Replicability", "replicability"]

COMBINATIONS = ("fisher", "bonferroni")


@dataclasses.dataclass(frozen=True)
class Replicability:
    """System A against B on several independent tasks.

    Attributes
    ----------
    system_a, system_b : str
    tasks : tuple of str
    pvalues : tuple of float
        Each task's one-sided p-value (A better for ``alternative="greater"``).
    adjusted : tuple of float
        Each task's minP step-down adjusted p-value: A beats B on every task where it is at most
        alpha, with familywise error at most alpha.
    least_attainable : tuple of float
        The least p-value each task's test can reach (0 where counted as continuous): a task
        whose least one is above alpha cannot be won and drops out of the others' adjustment.
    partial_conjunction : tuple of float
        For u = 1..m, the p-value of "A beats B on at least u tasks" (monotone in u).
    count : int
        The estimated number of tasks on which A beats B: the largest u whose partial
        conjunction p-value is at most alpha (0 if none).
    alpha : float
    alternative : str
    combination : str
        "fisher" or "bonferroni".
    """

    system_a: str
    system_b: str
    tasks: tuple[str, ...]
    pvalues: tuple[float, ...]
    adjusted: tuple[float, ...]
    least_attainable: tuple[float, ...]
    partial_conjunction: tuple[float, ...]
    count: int
    alpha: float
    alternative: str
    combination: str

    @property
    def winning_tasks(self) -> tuple[str, ...]:
        """The tasks on which A beats B after the minP step-down."""
        return tuple(t for t, p in zip(self.tasks, self.adjusted) if p <= self.alpha)

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (JSON-ready)."""
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        head = (f"Replicability({self.system_a!r} vs {self.system_b!r}, alternative={self.alternative!r}, "
                f"alpha={self.alpha:g}: at least {self.count} of {len(self.tasks)} tasks; wins on "
                f"{list(self.winning_tasks)})")
        width = max(4, *(len(t) for t in self.tasks))
        lines = [head, f"  {'task':<{width}}  {'pvalue':>10}  {'adjusted':>10}  {'least':>10}"]
        for t, p, a, least in zip(self.tasks, self.pvalues, self.adjusted, self.least_attainable):
            lines.append(f"  {t:<{width}}  {p:>10.4g}  {a:>10.4g}  {least:>10.4g}")
        return "\n".join(lines)


def replicability(scores: Mapping[str, Any], system_a: str, system_b: str, metric: Any = "accuracy", *,
                  alternative: Alternative = "greater", alpha: float = 0.05, combination: str = "fisher",
                  groups: Optional[Mapping[str, Any]] = None, n_resamples: int = 10_000,
                  rng: Any = None) -> Replicability:
    """On which of several independent tasks A beats B, and on how many.

    Parameters
    ----------
    scores : mapping
        ``{task: one task's scores}`` as :func:`pairperm.compare_systems` takes them (a mapping of
        systems or a DataFrame); each must hold `system_a` and `system_b`.
    system_a, system_b : str
    metric : str or mapping
        One metric for every task, or ``{task: metric}``.
    alternative : {"greater", "less"}
        "greater" (default): A is better than B.
    alpha : float
    combination : {"fisher", "bonferroni"}
        How the partial conjunction combines the m - u + 1 largest p-values.
    groups : mapping, optional
        ``{task: unit labels}``: the exchangeable units of some tasks' items.
    n_resamples, rng
        For the tests that sample (corpus metrics), as in :func:`pairperm.compare`.

    Returns
    -------
    Replicability

    Examples
    --------
    >>> import numpy as np, pairperm
    >>> rng = np.random.default_rng(3)
    >>> tasks = {f"task{t}": {"A": (rng.random(1000) < 0.70 + 0.07 * (t < 3)).astype(int),
    ...                       "B": (rng.random(1000) < 0.70).astype(int)} for t in range(5)}
    >>> r = pairperm.replicability(tasks, "A", "B")     # A is better on the first three tasks
    >>> r.count, r.winning_tasks
    (3, ('task0', 'task1', 'task2'))
    """
    func = "replicability"
    check_alternative(alternative, func)
    if alternative == "two-sided":
        raise ValueError(f"{func}: alternative must be 'greater' (A better) or 'less'; a claim that A beats B "
                         "on some tasks is one-sided")
    check_probability(alpha, "alpha", func)
    if combination not in COMBINATIONS:
        raise ValueError(f"{func}: combination must be one of {', '.join(map(repr, COMBINATIONS))}; "
                         f"got {combination!r}")
    if not isinstance(scores, Mapping) or len(scores) < 1:
        raise ValueError(f"{func}: scores must be a mapping {{task: one task's scores}}; got {type(scores).__name__}")
    names = [str(t) for t in scores]
    metrics = task_metrics(metric, names, func)
    units = task_groups(groups, names, func)
    pvalues: list[float] = []
    log_p: list[float] = []
    reach: list[Optional[_Attainable]] = []
    root = seed_root(rng, func)
    for index, (name, task_scores) in enumerate(zip(names, scores.values())):
        m = metrics[name]
        sys_names, arrays, items = read_systems(task_scores, m, [system_a, system_b], None, f"{func}: task {name!r}")
        task = PreparedTask.of(name, m, sys_names, arrays, np.array([[0, 1]]), units.get(name), func, items)
        # Each task its own stream: the step-down's product formula needs independent p-values.
        r = compare(arrays[0], arrays[1], m, alternative=alternative, groups=units.get(name),
                    n_resamples=n_resamples, rng=child_seed(root, index))
        p = float(r.pvalue)
        lp = getattr(r.result, "log_pvalue", None)
        pvalues.append(p)
        log_p.append(float(lp) if lp is not None and not math.isnan(lp) else (math.log(p) if p > 0 else -math.inf))
        reach.append(_attainable(task, alternative))
    adjusted = _minp_step_down(np.array(pvalues), reach)
    pc = _partial_conjunction(np.array(log_p), combination)
    count = int(np.sum(pc <= alpha))  # pc is non-decreasing in u
    return Replicability(
        system_a=str(system_a), system_b=str(system_b), tasks=tuple(names), pvalues=tuple(pvalues),
        adjusted=tuple(float(a) for a in adjusted),
        least_attainable=tuple(0.0 if a is None else a.least for a in reach),
        partial_conjunction=tuple(float(v) for v in pc), count=count, alpha=float(alpha), alternative=alternative,
        combination=combination)


class _Attainable(NamedTuple):
    """The p-values a discrete test can take: the least exactly, and those the null distribution
    resolves (far above its round-off), ascending."""

    least: float
    resolved: np.ndarray


# Tail sums are resolved down to this multiple of their round-off (each FFT entry is off by
# about 1e-16 of the largest, and a tail sums up to the support's length of them): a relative
# error of at most 1e-7, well inside _reachable's slack. Below, a p-value counts as continuous,
# F(c) = c, which only errs on the safe side.
_RESOLVED_MULTIPLE = 1e7


def _attainable(task: PreparedTask, alternative: str) -> Optional[_Attainable]:
    """The p-values the task's exact test can take, from the null distribution of the summed
    integer differences per unit (sums and means of integer scores); None for a test counted as
    continuous."""
    metric = task.metric
    if callable(metric) or not is_per_item(metric) or not METRICS[metric].integer:
        return None
    # Per unit (sums over a group's items or an item's samples): the units are what the test flips.
    d = np.asarray(task.arrays[0], dtype=np.int64) - np.asarray(task.arrays[1], dtype=np.int64)
    if METRICS[metric].lower_is_better != (alternative == "less"):
        d = -d
    # The most extreme sum, every nonzero difference on A's side, has probability exactly 2^-k.
    least = math.ldexp(1.0, -int(np.count_nonzero(d)))
    dist = null_distribution(d, -d)
    tail = np.minimum(np.cumsum(dist.pmf[::-1])[::-1], 1.0)  # P[S >= s] over the support
    round_off = len(dist.pmf) * np.finfo(float).eps * float(dist.pmf.max())
    resolved = np.unique(tail[(dist.pmf > 0) & (tail >= _RESOLVED_MULTIPLE * round_off)])
    return _Attainable(least, resolved)


def _reachable(reach: Optional[_Attainable], c: float) -> float:
    """F(c) = P[p-value <= c] under the null: 0 below the least attainable p-value, else the
    largest attainable p-value at or below c, or c itself where the distribution does not resolve
    it or the test counts as continuous. The relative slack absorbs the round-off between the
    test's p-value and the distribution's tail sum, far below the gap to the next tail sum."""
    if reach is None:
        return min(c, 1.0)
    if c < reach.least * (1 - 1e-12):
        return 0.0
    k = int(np.searchsorted(reach.resolved, c * (1 + 1e-6), side="right"))
    return float(reach.resolved[k - 1]) if k > 0 else min(c, 1.0)


def _minp_step_down(p: np.ndarray, reach: list[Optional[_Attainable]]) -> np.ndarray:
    """Westfall-Wolfinger minP step-down for independent tests with the given attainable sets."""
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(len(p))
    running = 0.0
    for s, j in enumerate(order):
        remaining = order[s:]
        c = float(p[j])
        # 1 - prod(1 - F_k(c)) as -expm1(sum log1p(-F_k(c))): no cancellation for small c.
        reached = [_reachable(reach[k], c) for k in remaining]
        log_keep = -math.inf if max(reached) >= 1 else math.fsum(math.log1p(-f) for f in reached)
        running = max(running, -math.expm1(log_keep))
        adjusted[j] = min(running, 1.0)
    return adjusted


def _partial_conjunction(log_p: np.ndarray, combination: str) -> np.ndarray:
    """p-values of "at least u of m", u = 1..m, from the tasks' log p-values, made monotone."""
    m = len(log_p)
    ordered = np.sort(log_p)
    out = np.empty(m)
    for u in range(1, m + 1):
        rest = ordered[u - 1:]
        if combination == "bonferroni":
            out[u - 1] = min(1.0, (m - u + 1) * math.exp(rest[0]))
        else:
            out[u - 1] = _chi2_even_sf(-2.0 * float(np.sum(rest)), len(rest))
    return np.maximum.accumulate(out)


def _chi2_even_sf(x: float, k: int) -> float:
    """P[chi-square with 2k degrees of freedom >= x] = exp(-x/2) sum_{j<k} (x/2)^j / j!, in logs."""
    if math.isinf(x):
        return 0.0
    half = x / 2
    if half <= 0:
        return 1.0
    terms = [j * math.log(half) - math.lgamma(j + 1) - half for j in range(k)]
    top = max(terms)
    return min(1.0, math.exp(top) * math.fsum(math.exp(t - top) for t in terms))
