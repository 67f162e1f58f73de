"""Simultaneous inference over pairs of systems from joint null draws of their estimates: rank
intervals (the places each system could hold on a leaderboard), and the Westfall-Young maxT
adjusted p-values and simultaneous intervals of compared pairs.

A system's rank is one plus the number of systems better than it (1 is the best). System i is
*surely better* than j when the test of "i is no better than j" rejects; its rank interval then
runs from one plus the systems surely better than it to K minus the systems it is surely better
than. The tests of all K (K - 1) ordered pairs are run together by a step-down max-t procedure
(Romano and Wolf 2005; for ranks, Mogstad, Romano, Shaikh and Wilhelm, "Inference for Ranks",
ReStud 2023): a pair is rejected when its studentised difference is beyond the (1 - level)
quantile of the largest studentised null difference over the pairs not yet rejected, repeated
while it rejects more. With probability at least `level` no pair is wrongly rejected, and then
every system's true rank lies in its interval at once (``simultaneous=True``); ``False`` runs
the procedure over the pairs of each system alone, for an interval that covers that system's
rank by itself.

The null draws of the K systems' estimates (totals of per-unit scores, or a metric of summed
statistics through its linearisation, or recomputed on each permutation) keep their dependence
through the shared items:

- "permutation": the K systems' scores of each unit (item, or group of items) permuted jointly,
  every pair studentised by one spread that no such permutation changes, and the identity
  counted among the draws (Hemerik and Goeman 2018): when the systems are exchangeable the
  familywise error is at most 1 - level for any number of draws and any scores. When some
  systems differ, each draw still mixes all of them: in the simulations of the tests that made
  it conservative, but only the complete null is guaranteed;
- "multiplier": each unit's centred scores times one standard normal draw per unit (the
  Gaussian multiplier bootstrap of Chernozhukov, Chetverikov and Kato 2013), whose draws are
  normal with the units' covariance, drawn through its K x K square root;
- from published estimates and their covariance (``rank_intervals_from_estimates``), normal
  draws with that covariance, as csranks takes them.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional, Sequence

import numpy as np

from ._formatting import latex_escape, mark_labels, markdown_escape
from ._metrics import metric_named
from ._sampling import seed_from_rng
from ._validation import check_method, check_n_resamples, check_probability
from .typing import SeedLike

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["PairDraws", "RankIntervals", "check_draws_reach", "compatible_bounds", "estimates_rank_intervals",
           "pair_draws", "per_pair", "unit_matrix", "units_rank_intervals", "westfall_young"]

RANK_METHODS = ("auto", "permutation", "multiplier")

# "auto" permutes only few units, where the multiplier bootstrap's normal approximation is
# poor: the joint permutation is exact when all systems are alike, but each draw mixes every
# system's scores, so pairs of close systems lose power when others differ.
_PERMUTATION_MAX_UNITS = 100
# Null draws handled at once: bounds the (draws, K, K) block of studentised differences.
_DRAW_BLOCK_ELEMENTS = 1 << 21


@dataclasses.dataclass(frozen=True)
class RankIntervals:
    """Each system's rank interval (1 = best) and the pairs behind them.

    Attributes
    ----------
    names : tuple of str
    estimates : tuple of float
        Each system's metric.
    rank : tuple of int
        The estimates' own ranks: one plus the systems with a better estimate.
    rank_low, rank_high : tuple of int
        Each system's rank interval ``[rank_low, rank_high]``.
    better : tuple of (str, str)
        Every ``(a, b)`` where a is surely better than b.
    level : float
    simultaneous : bool
        The intervals cover all systems' ranks at once (else each one by itself).
    method : str
        "permutation", "multiplier" or "gaussian" (from estimates and a covariance).
    n_resamples : int
        Null draws.
    lower_is_better : bool
    """

    names: tuple[str, ...]
    estimates: tuple[float, ...]
    rank: tuple[int, ...]
    rank_low: tuple[int, ...]
    rank_high: tuple[int, ...]
    better: tuple[tuple[str, str], ...]
    level: float
    simultaneous: bool
    method: str
    n_resamples: int
    lower_is_better: bool = False

    @property
    def leader_ties(self) -> tuple[str, ...]:
        """Every system that could be first: no system is surely better than it."""
        return self.tau_best(1)

    def tau_best(self, tau: int) -> tuple[str, ...]:
        """The systems that could be among the best `tau`: a confidence set at `level` for the
        set of the true top `tau` (with ``simultaneous=True``)."""
        if isinstance(tau, bool) or not isinstance(tau, (int, np.integer)) or not 1 <= tau <= len(self.names):
            raise ValueError(f"tau_best: tau must be an integer in [1, {len(self.names)}]; got {tau!r}")
        return tuple(n for n, low in zip(self.names, self.rank_low) if low <= tau)

    def tied_with(self, name: str) -> tuple[str, ...]:
        """The systems neither surely better nor surely worse than `name`."""
        if name not in self.names:
            raise ValueError(f"tied_with: no system named {name!r}; systems: {', '.join(map(repr, self.names))}")
        decided = {b for a, b in self.better if a == name} | {a for a, b in self.better if b == name}
        return tuple(n for n in self.names if n != name and n not in decided)

    @property
    def letters(self) -> tuple[str, ...]:
        """Compact letters, one string per system: two systems share a letter exactly when
        neither is surely better than the other (the letters of the best systems come first)."""
        index = {n: i for i, n in enumerate(self.names)}
        differ = [(index[a], index[b]) for a, b in self.better]
        return compact_letters(len(self.names), differ, self._order())

    def _order(self) -> list[int]:
        return sorted(range(len(self.names)), key=lambda i: (self.rank[i], i))

    def to_records(self) -> list[dict[str, Any]]:
        """One plain dict per system, best estimate first (JSON-ready)."""
        leaders = set(self.leader_ties)
        letters = self.letters
        return [{"system": self.names[i], "estimate": self.estimates[i], "rank": self.rank[i],
                 "rank_low": self.rank_low[i], "rank_high": self.rank_high[i], "could_lead": self.names[i] in leaders,
                 "letters": letters[i]}
                for i in self._order()]

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (JSON-ready); :meth:`from_dict` reads them back."""
        return {"names": list(self.names), "level": self.level, "simultaneous": self.simultaneous, "method": self.method,
                "n_resamples": self.n_resamples, "lower_is_better": self.lower_is_better,
                "systems": self.to_records(), "better": [list(p) for p in self.better]}

    @classmethod
    def from_dict(cls, d: Any) -> RankIntervals:
        by_name = {r["system"]: r for r in d["systems"]}
        names = tuple(str(n) for n in d["names"])
        return cls(names=names, estimates=tuple(float(by_name[n]["estimate"]) for n in names),
                   rank=tuple(int(by_name[n]["rank"]) for n in names),
                   rank_low=tuple(int(by_name[n]["rank_low"]) for n in names),
                   rank_high=tuple(int(by_name[n]["rank_high"]) for n in names),
                   better=tuple((str(a), str(b)) for a, b in d["better"]), level=float(d["level"]),
                   simultaneous=bool(d["simultaneous"]), method=str(d["method"]), n_resamples=int(d["n_resamples"]),
                   lower_is_better=bool(d.get("lower_is_better", False)))

    def to_json(self, **kwargs: Any) -> str:
        """JSON text of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str) -> RankIntervals:
        return cls.from_dict(json.loads(text))

    def caption(self) -> str:
        """What the report's columns mean, in words."""
        cover = "all at once" if self.simultaneous else "each system by itself"
        draws = {"permutation": "joint permutations of the systems within each unit",
                 "multiplier": "Gaussian multiplier draws", "gaussian": "normal draws with the given covariance"}
        return (f"Rank intervals (1 = best) covering the true ranks with probability {self.level:g}, {cover} "
                f"(step-down max-t over all pairs, {self.n_resamples:,} {draws.get(self.method, self.method)}); "
                "systems that share a letter are not told apart")

    def to_markdown(self) -> str:
        """A report table: each system's estimate, rank, rank interval, whether it could lead, and
        its compact letters, best first."""
        lines = ["| rank | system | estimate | rank interval | could lead | letters |", "|---:|---|---:|---|---|---|"]
        for r in self.to_records():
            lead = "yes" if r["could_lead"] else ""
            lines.append(f"| {r['rank']} | {markdown_escape(r['system'])} | {r['estimate']:.6g} | "
                         f"[{r['rank_low']}, {r['rank_high']}] | {lead} | {r['letters']} |")
        return "\n".join(lines) + f"\n\n{self.caption()}.\n"

    def to_latex(self) -> str:
        """The same report as a LaTeX table (booktabs)."""
        lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{rlrccl}", r"\toprule",
                 r"Rank & System & Estimate & Interval & Could lead & Letters \\", r"\midrule"]
        for r in self.to_records():
            lead = r"\checkmark" if r["could_lead"] else ""
            lines.append(rf"{r['rank']} & {latex_escape(r['system'])} & {r['estimate']:.6g} & "
                         rf"[{r['rank_low']}, {r['rank_high']}] & {lead} & {r['letters']} \\")
        lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{latex_escape(self.caption())}.}}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def plot(self, ax: Optional[Axes] = None) -> Axes:
        """Draw the rank intervals with :func:`pairperm.plot_rank_intervals` (needs matplotlib)."""
        from ._plot_ranks import plot_rank_intervals

        drawn: Axes = plot_rank_intervals(self, ax)
        return drawn

    def to_frame(self) -> Any:
        """The records as a pandas DataFrame indexed by system (pandas is imported only here)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.to_records()).set_index("system")

    def __repr__(self) -> str:
        kind = "simultaneous" if self.simultaneous else "marginal"
        head = (f"RankIntervals(systems={len(self.names)}, level={self.level:g}, {kind}, method={self.method!r}, "
                f"n_resamples={self.n_resamples})")
        width = max(6, *(len(n) for n in self.names))
        lines = [head, f"  {'system':<{width}}  {'estimate':>12}  rank  interval"]
        for r in self.to_records():
            lead = "  could lead" if r["could_lead"] else ""
            lines.append(f"  {r['system']:<{width}}  {r['estimate']:>12.6g}  {r['rank']:>4}  "
                         f"[{r['rank_low']}, {r['rank_high']}]{lead}")
        return "\n".join(lines)


def compact_letters(n: int, differ: Sequence[tuple[int, int]], order: Sequence[int]) -> tuple[str, ...]:
    """Letters for n items such that two share a letter exactly when the pair is not in `differ`
    (Piepho's insert-and-absorb: every differing pair splits each letter holding both, and a
    letter whose items another letter holds too is dropped). Letters are named in `order` of
    their first item; past 26 they are separated by dots."""
    columns: list[frozenset[int]] = [frozenset(range(n))]
    for i, j in differ:
        split: list[frozenset[int]] = []
        for col in columns:
            split += [col - {i}, col - {j}] if i in col and j in col else [col]
        kept: list[frozenset[int]] = []
        for col in sorted(split, key=len, reverse=True):
            if not any(col <= other for other in kept):
                kept.append(col)
        columns = kept
    position = {item: k for k, item in enumerate(order)}
    columns.sort(key=lambda col: (min(position[i] for i in col), -len(col)))
    labels = mark_labels(len(columns))
    sep = "." if len(columns) > 26 else ""
    return tuple(sep.join(lab for lab, col in zip(labels, columns) if i in col) for i in range(n))


def unit_matrix(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The systems' scores per unit as one float64 array: (units, systems) for one score per unit,
    (units, systems, d) for d statistics per unit."""
    return np.stack([np.asarray(a, dtype=np.float64) for a in arrays], axis=1)


def check_rank_options(level: Any, simultaneous: Any, n_resamples: Any, func: str) -> int:
    """The options every rank-interval call takes, checked; returns the number of draws."""
    check_probability(level, "level", func)
    if not isinstance(simultaneous, (bool, np.bool_)):
        raise ValueError(f"{func}: simultaneous must be True or False; got {simultaneous!r}")
    k = check_n_resamples(n_resamples, func)
    check_draws_reach(k, 1.0 - float(level), "level", func)
    return k


def check_draws_reach(k: int, alpha: float, what: str, func: str) -> None:
    """k null draws can reject at alpha only if (1 + 0) / (k + 1) <= alpha: refuse fewer, which
    would reject nothing (every interval [1, K], every adjusted p-value above alpha)."""
    if _allowed_reaching(alpha, k) < 0:
        shown = 1 - alpha if what == "level" else alpha
        raise ValueError(f"{func}: {k} draws can reject nothing at {what} {shown:g}; n_resamples must be at least "
                         f"{math.ceil(1 / alpha - 1e-9) - 1}")


def _allowed_reaching(alpha: float, k: int) -> int:
    """How many of k draws may reach a statistic that is rejected at alpha: p = (1 + that many)
    / (k + 1) <= alpha. The relative slack keeps a p-value equal to alpha (1 - 0.9 is
    0.09999999999999998 in float64) a rejection."""
    return math.floor(alpha * (k + 1) * (1 + 1e-12)) - 1


# A metric of summed statistics: (..., d) sums -> (...) values, vectorised.
ValueOfSums = Callable[[np.ndarray], np.ndarray]


def value_of_sums(metric: Any, shape: tuple[int, ...]) -> Optional[ValueOfSums]:
    """The metric of summed statistics as a function of their flattened (..., d) sums, for a
    registry metric that is not a per-item sum or mean (ratios, corpus metrics); None for those,
    whose estimates are totals. `shape` is one unit's statistics' shape."""
    row = metric_named(metric)
    if row is None or row.per_item:
        return None

    def value(sums: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.asarray(row.value(sums.reshape(sums.shape[:-1] + shape)), dtype=np.float64)
        return out

    return value


def flat_units(units: np.ndarray) -> np.ndarray:
    """(U, K, ...) statistics per unit as (U, K, d)."""
    return units.reshape(units.shape[:2] + (-1,)) if units.ndim > 2 else units


class JointDraws(NamedTuple):
    """The systems' estimates (oriented: larger is better), the covariance that studentises their
    differences, and null draws of the estimates (rows), by the method named."""

    theta: np.ndarray
    covariance: np.ndarray
    draws: np.ndarray
    method: str


def joint_draws(units: np.ndarray, value: Optional[ValueOfSums], lower: bool, method: str, k: int,
                gen: np.random.Generator) -> JointDraws:
    """Null draws of K systems' estimates from their scores per unit. `units` (U, K): the
    estimates are the totals. `units` (U, K, d) with `value`: the estimates are the metric of the
    summed statistics, each unit entering through its linearisation (the metric's gradient at
    the sums, by central differences, times the unit's centred statistics): the multiplier
    draws are normal with that covariance, and the permutation draws recompute the metric of the
    permuted sums. "auto" permutes fewer than 100 units."""
    if method == "auto":
        method = "permutation" if len(units) < _PERMUTATION_MAX_UNITS else "multiplier"
    sign = -1.0 if lower else 1.0
    if value is None:
        oriented = sign * units
        theta = oriented.sum(axis=0)
        if method == "permutation":
            return JointDraws(theta, _permutation_scale(oriented), _permutation_draws(oriented, k, gen), method)
        centred = oriented - oriented.mean(axis=0)
        covariance = centred.T @ centred
        return JointDraws(theta, covariance, _normal_draws(covariance, k, gen), method)
    sums = units.sum(axis=0)                                  # (K, d)
    theta = sign * value(sums)
    if method == "permutation":
        # Linearised at the systems' mean sums, which no within-unit permutation changes.
        pooled = np.einsum("ukd,d->uk", units, _gradient(value, sums.mean(axis=0)[None])[0])
        return JointDraws(theta, _permutation_scale(pooled), sign * _permuted_values(units, value, k, gen), method)
    influence = sign * np.einsum("ukd,kd->uk", units - sums / len(units), _gradient(value, sums))
    covariance = influence.T @ influence
    return JointDraws(theta, covariance, _normal_draws(covariance, k, gen), method)


def _permutation_scale(scores: np.ndarray) -> np.ndarray:
    """A covariance that gives every pair of systems the same spread: the variance of
    x*_i - x*_j summed over units when each unit's K scores are permuted, (2 / (K - 1)) times the
    sum of squared deviations from each unit's mean. No permutation within units changes it, so
    a statistic studentised by it is a function of the permuted data alone, and the test that
    counts the identity among its draws stays exact (studentising each draw by its own data's
    spread would cost K^2 U a draw)."""
    n_systems = scores.shape[1]
    deviations = scores - scores.mean(axis=1, keepdims=True)
    spread = 2.0 / max(1, n_systems - 1) * float(np.sum(deviations * deviations))
    covariance: np.ndarray = np.eye(n_systems) * (spread / 2)
    return covariance


def _gradient(value: ValueOfSums, sums: np.ndarray) -> np.ndarray:
    """d value / d sums at each system's sums (K, d), by central differences (steps of 1e-6 of
    each sum, at least 1e-6)."""
    d = sums.shape[1]
    step = 1e-6 * np.maximum(1.0, np.abs(sums))               # (K, d)
    shift = np.eye(d)[None, :, :] * step[:, :, None]          # (K, d, d): row i moves sum i
    up = value(sums[:, None, :] + shift)
    down = value(sums[:, None, :] - shift)
    out: np.ndarray = (up - down) / (2 * step)
    return out


def _permuted_values(units: np.ndarray, value: ValueOfSums, k: int, gen: np.random.Generator) -> np.ndarray:
    """k draws of the K systems' metric with each unit's K statistic vectors permuted jointly."""
    n_units, n_systems = units.shape[:2]
    out = np.empty((k, n_systems))
    rows = np.arange(n_units)[:, None]
    positions = np.broadcast_to(np.arange(n_systems), (n_units, n_systems))
    for b in range(k):
        out[b] = value(units[rows, gen.permuted(positions, axis=1)].sum(axis=0))
    return out


def units_rank_intervals(names: Sequence[str], estimates: tuple[float, ...], units: np.ndarray, lower: bool,
                         level: float, simultaneous: bool, method: str, n_resamples: int, rng: SeedLike,
                         func: str, value: Optional[ValueOfSums] = None) -> RankIntervals:
    """Rank intervals of K systems from their scores per unit (see :func:`joint_draws`): per-unit
    sums are ranked by their totals (the same ranks as means over the same units), summed
    statistics by `value`."""
    check_method(method, RANK_METHODS, func)
    k = check_rank_options(level, simultaneous, n_resamples, func)
    j = joint_draws(units, value, lower, method, k, np.random.default_rng(seed_from_rng(rng, func)))
    return _intervals(names, estimates, j.theta, j.covariance, j.draws, float(level), bool(simultaneous), j.method,
                      lower)


def estimates_rank_intervals(names: Sequence[str], estimates: np.ndarray, covariance: np.ndarray, lower: bool,
                             level: float, simultaneous: bool, n_resamples: int, rng: SeedLike,
                             func: str) -> RankIntervals:
    """Rank intervals from estimates and their covariance, by normal draws."""
    k = check_rank_options(level, simultaneous, n_resamples, func)
    gen = np.random.default_rng(seed_from_rng(rng, func))
    oriented = -estimates if lower else estimates
    return _intervals(names, tuple(estimates.tolist()), oriented, covariance, _normal_draws(covariance, k, gen),
                      float(level), bool(simultaneous), "gaussian", lower)


def _normal_draws(covariance: np.ndarray, k: int, gen: np.random.Generator) -> np.ndarray:
    """k draws (rows) of N(0, covariance) through its symmetric square root (any PSD matrix,
    singular ones too: systems identical on every unit)."""
    w, v = np.linalg.eigh(covariance)
    root = (v * np.sqrt(np.clip(w, 0.0, None))) @ v.T
    draws: np.ndarray = gen.standard_normal((k, len(covariance))) @ root
    return draws


def _permutation_draws(units: np.ndarray, k: int, gen: np.random.Generator) -> np.ndarray:
    """k draws (rows) of the systems' totals with each unit's K scores permuted jointly (the
    identity, the observed totals, is the one more draw the step-down counts)."""
    n_units, n_systems = units.shape
    out = np.empty((k, n_systems))
    rows = np.arange(n_units)[:, None]
    positions = np.broadcast_to(np.arange(n_systems), units.shape)
    for b in range(k):
        out[b] = units[rows, gen.permuted(positions, axis=1)].sum(axis=0)
    return out


class Studentised(NamedTuple):
    """The ordered pairs (i, j) of K systems: t[i, j] = (theta_i - theta_j) / sd_ij, 1 / sd_ij for
    the null draws, and which pairs can be tested at all."""

    t: np.ndarray        # (K, K); +-inf for a pair that differs by a constant (zero spread)
    inv_sd: np.ndarray   # (K, K); 0 where the spread is zero
    testable: np.ndarray  # (K, K) bool; False on the diagonal and for identical systems


def studentise(theta: np.ndarray, covariance: np.ndarray) -> Studentised:
    """Studentised differences of every ordered pair. A spread is zero when it is below 1e-12 of
    the largest (scores in any units); such a pair of systems is identical (never rejected, left
    out) or differs by a constant on every unit: then it is surely ordered (t is +-inf, its null
    statistic 0)."""
    variances = np.diag(covariance)
    sd = np.sqrt(np.clip(variances[:, None] + variances[None, :] - 2 * covariance, 0.0, None))
    spread = sd > 1e-12 * float(np.max(sd)) if np.max(sd) > 0 else np.zeros(sd.shape, dtype=bool)
    inv_sd = np.where(spread, 1.0 / np.where(spread, sd, 1.0), 0.0)
    diff = theta[:, None] - theta[None, :]
    differs = np.abs(diff) > 1e-12 * max(float(np.max(np.abs(theta))), np.finfo(float).tiny)
    t = np.where(spread, diff * inv_sd, np.where(differs, np.where(diff > 0, np.inf, -np.inf), 0.0))
    testable = spread | differs
    np.fill_diagonal(testable, False)
    return Studentised(t, inv_sd, testable)


def _intervals(names: Sequence[str], estimates: tuple[float, ...], theta: np.ndarray, covariance: np.ndarray,
               draws: np.ndarray, level: float, simultaneous: bool, method: str, lower: bool) -> RankIntervals:
    """Rank intervals from the oriented estimates `theta` (larger is better), the covariance
    that studentises their differences, and null draws of theta (rows). Marginal intervals take
    each system's bounds from the tests of its own pairs only; `better` then lists the
    rejections of every system's family."""
    n = len(theta)
    st = studentise(theta, covariance)
    alpha = 1.0 - level
    if simultaneous:
        rejected = _step_down(st, st.testable, draws, theta, alpha)
        worse_count, better_count = rejected.sum(axis=0), rejected.sum(axis=1)
    else:
        rejected = np.zeros((n, n), dtype=bool)
        worse_count, better_count = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        for i in range(n):
            family = np.zeros((n, n), dtype=bool)
            family[i, :] = True
            family[:, i] = True
            own = _step_down(st, st.testable & family, draws, theta, alpha)
            worse_count[i], better_count[i] = own[:, i].sum(), own[i, :].sum()
            rejected |= own
    point = [1 + int(np.sum(theta > theta[i])) for i in range(n)]
    return RankIntervals(
        names=tuple(names), estimates=estimates, rank=tuple(point),
        rank_low=tuple(int(1 + c) for c in worse_count), rank_high=tuple(int(n - c) for c in better_count),
        better=tuple((names[i], names[j]) for i, j in zip(*np.nonzero(rejected))),
        level=level, simultaneous=simultaneous, method=method, n_resamples=len(draws), lower_is_better=lower)


def _step_down(st: Studentised, family: np.ndarray, draws: np.ndarray, theta: np.ndarray,
               alpha: float) -> np.ndarray:
    """The ordered pairs (i, j) of `family` (K x K) where "i is no better than j" is rejected by
    the step-down max-t at alpha: those whose Westfall-Young adjusted p-value is at most alpha."""
    rows, cols = np.nonzero(family)
    hypotheses = PairDraws(st.t[rows, cols], rows, cols, np.arange(len(rows)), np.ones(len(rows), dtype=bool),
                           st.inv_sd[rows, cols], draws, theta)
    rejected = np.zeros(family.shape, dtype=bool)
    rejected[rows, cols] = rejected_at(westfall_young([hypotheses]), alpha, len(draws))
    return rejected


def rejected_at(adjusted: np.ndarray, alpha: float, n_draws: int) -> np.ndarray:
    """Which hypotheses the step-down rejects at alpha, from their adjusted p-values (1 + the
    draws reaching them) / (n_draws + 1): at most _allowed_reaching of the draws reach them."""
    out: np.ndarray = adjusted * (n_draws + 1) <= _allowed_reaching(alpha, n_draws) + 1.5
    return out


class PairDraws(NamedTuple):
    """One task's directional hypotheses for the max-t step-down: "system a is no better than b"
    for each compared pair in the direction(s) its alternative claims, each one's statistic, its
    scale, and the joint null draws of the systems' estimates behind them."""

    stats: np.ndarray    # (H,); +inf for a constant difference, -inf for identical systems
    rows: np.ndarray     # (H,) system a
    cols: np.ndarray     # (H,) system b
    pair: np.ndarray     # (H,) the compared pair (i, j) the hypothesis belongs to
    forward: np.ndarray  # (H,) bool: a = i ("i is no better than j"), else a = j
    inv_sd: np.ndarray   # (H,) 1 / sd of theta_a - theta_b (0: zero spread)
    draws: np.ndarray    # (B, K) null estimates, oriented (larger is better)
    theta: np.ndarray    # (K,) the estimates, oriented

    @property
    def sd(self) -> np.ndarray:
        out: np.ndarray = np.where(self.inv_sd > 0, 1.0 / np.where(self.inv_sd > 0, self.inv_sd, 1.0), 0.0)
        return out

    def null(self, start: int, stop: int) -> np.ndarray:
        """The hypotheses' null statistics of draws [start, stop), shape (stop - start, H)."""
        z = self.draws[start:stop]
        out: np.ndarray = (z[:, self.rows] - z[:, self.cols]) * self.inv_sd
        return out


def pair_draws(units: np.ndarray, value: Optional[ValueOfSums], lower: bool, pairs: np.ndarray, alternative: str,
               n_draws: int, gen: np.random.Generator) -> PairDraws:
    """The compared pairs (i, j) of one task's scores per unit as directional hypotheses - "i is
    no better than j" for "greater", "j is no better than i" for "less", both for "two-sided"
    (so that a mark says which system is better) - with n_draws joint null draws
    (:func:`joint_draws`, "auto": permuted within fewer than 100 units, else multipliers)."""
    j = joint_draws(units, value, lower, "auto", n_draws, gen)
    st = studentise(j.theta, j.covariance)
    index = np.arange(len(pairs))
    ones = np.ones(len(pairs), dtype=bool)
    forward = (pairs[:, 0], pairs[:, 1], index, ones)
    backward = (pairs[:, 1], pairs[:, 0], index, ~ones)
    chosen = {"greater": [forward], "less": [backward], "two-sided": [forward, backward]}[alternative]
    rows, cols, pair, ahead = (np.concatenate(parts) for parts in zip(*chosen))
    stats = np.where(st.testable[rows, cols], st.t[rows, cols], -np.inf)
    return PairDraws(stats, rows, cols, pair, ahead, st.inv_sd[rows, cols], j.draws, j.theta)


def _null_blocks(families: Sequence[PairDraws]) -> Any:
    """The null statistics of all families' hypotheses side by side (draw b of every family
    together: the tasks are independent, so their draws are), in blocks of draws."""
    n_draws = len(families[0].draws)
    width = sum(len(f.stats) for f in families)
    block = max(1, _DRAW_BLOCK_ELEMENTS // max(1, width))
    for start in range(0, n_draws, block):
        stop = min(n_draws, start + block)
        yield np.concatenate([f.null(start, stop) for f in families], axis=1)


def westfall_young(families: Sequence[PairDraws]) -> np.ndarray:
    """Step-down maxT adjusted p-values of every family's hypotheses, in order (Westfall and Young
    1993, algorithm 2.8): the hypotheses ordered by their statistic, each adjusted p-value is the
    share of draws (counting the observed one) whose largest statistic over that hypothesis and
    every less extreme one reaches its own, made monotone in that order."""
    stats = np.concatenate([f.stats for f in families])
    order = np.argsort(-stats, kind="stable")
    ranked = stats[order]
    reached = np.zeros(len(stats), dtype=np.int64)
    for null in _null_blocks(families):
        successive = np.maximum.accumulate(null[:, order][:, ::-1], axis=1)[:, ::-1]
        reached += np.count_nonzero(successive >= ranked, axis=0)
    n_draws = len(families[0].draws)
    adjusted = np.maximum.accumulate((1 + reached) / (n_draws + 1))
    out = np.empty(len(stats))
    out[order] = np.minimum(adjusted, 1.0)
    return out


def per_pair(family: PairDraws, values: np.ndarray, n_pairs: int, fill: float, combine: Any) -> np.ndarray:
    """One value per compared pair from its hypotheses' `values`, combined by the ufunc `combine`
    (np.minimum: a pair's adjusted p-value is its better direction's)."""
    out = np.full(n_pairs, fill)
    combine.at(out, family.pair, values)
    return out


def compatible_bounds(families: Sequence[PairDraws], adjusted: np.ndarray, level: float) -> np.ndarray:
    """Lower confidence bounds of every hypothesis's difference theta_a - theta_b, simultaneous at
    `level` and compatible with the step-down at 1 - level (Strassburger and Bretz 2008;
    Guilbaud 2008): 0 where the step-down rejects (the difference is surely above it: an open
    bound), else theta_a - theta_b - c_J sd, with c_J the step-down's critical value for J, the
    hypotheses it does not reject. So a pair's interval excludes 0 exactly when it is marked."""
    n_draws = len(families[0].draws)
    allowed = _allowed_reaching(1.0 - level, n_draws)
    kept = ~rejected_at(adjusted, 1.0 - level, n_draws)
    if kept.any() and allowed >= 0:
        maxima = np.concatenate([null[:, kept].max(axis=1) for null in _null_blocks(families)])
        c = float(np.sort(maxima)[n_draws - 1 - allowed])
    else:
        c = math.inf
    sd = np.concatenate([f.sd for f in families])
    diff = np.concatenate([f.theta[f.rows] - f.theta[f.cols] for f in families])
    out: np.ndarray = np.where(kept, diff - np.where(sd > 0, c * sd, 0.0), 0.0)
    return out
