"""The one pipeline under every paired-permutation test: the core's executor for exact
p-values (one call: the planner's engine and its fallbacks), the Monte Carlo loop, and the result.

Public functions validate their arguments, build `LocalEffects` and a statistic kind
(`_statistics`), and call `run`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

import pairperm._core as _core

from ._effects import LocalEffects, NullRecipe
from ._errors import SupportTooLargeError, warn_caller
from ._realvalued import too_many_to_list
from ._results import MonteCarloTestResult, PermutationTestResult, instance_maker
from ._sampling import MC_BLOCK, MC_BLOCK_ELEMENTS, MonteCarloOptions, block_seed
from ._smooth import smooth_pvalue
from ._stats import clopper_pearson, excludes

__all__ = ["LIMITS", "exact_result", "execute", "monte_carlo", "outcome_result", "plan", "run", "settle"]

if _core.vector_math_ignored:
    # Read once, when the core was loaded: a setting that names no kind caps nothing.
    warnings.warn(f"PAIRPERM_VECTOR_MATH={_core.vector_math_ignored!r} names no kind (avx512, avx2 or libm, in any "
                  f"case) and is ignored: the grouped tails run on {_core.vector_math}", RuntimeWarning, stacklevel=2)

# The engine planner's limits (the core's defaults, in pairperm/plan.hpp): every exact route
# asks the core which engine to run. Tests swap in other limits to exercise a route.
LIMITS = _core.PlanLimits()
# A p-value summed from an FFT-computed pmf below this is round-off.
FFT_NOISE_FLOOR = _core.fft_noise_floor


@dataclass(frozen=True)
class MonteCarloEstimate:
    pvalue: float
    pvalue_ci: tuple
    n_resamples: int
    hits: int
    stopped_early: bool


def plan(effects: LocalEffects, kind: str, method: str) -> Any:
    """The core planner's choice for integer local effects: `kind` is a statistic's ``kind``
    ("sum", "signed_rank_sum", "tail", "distribution")."""
    return _core.plan_engine(effects.summary, kind, method, LIMITS)


def run(effects: LocalEffects, stat: Any, *, alternative: str, method: str, func: str,
        mc: MonteCarloOptions, result_type: type = PermutationTestResult, effect: Any = None) -> Any:
    """Run one test: `method` is "auto", "exact", "dp", "fft", "monte_carlo" or
    "importance_sampling" (a callable statistic's tilted sampler). Where the statistic is a
    difference of two systems' metrics, `effect` is the record behind its confidence interval,
    and the result's ``difference`` is the statistic."""
    if method in ("importance_sampling", "monte_carlo"):
        effects.summary  # noqa: B018 - integer sums the core cannot hold are refused before sampling them
        shown = {} if effect is None else {"difference": stat.value, "_effect": effect}
    if method == "importance_sampling":
        r = smooth_pvalue(effects, stat, alternative, n_resamples=mc.n_resamples, seed=mc.seed, n_jobs=mc.n_jobs,
                         func=func)
        return result_type(
            statistic=stat.value, pvalue=r.pvalue, log_pvalue=r.log_pvalue, method=method, alternative=alternative,
            engine="importance_sampling", n_resamples=r.n_resamples, hits=r.hits, pvalue_ci=r.pvalue_ci,
            log_pvalue_ci=r.log_pvalue_ci, pvalue_is_bound=r.pvalue_is_bound, **shown,
        )
    if method == "monte_carlo":
        est = monte_carlo(effects, stat, alternative, mc)
        if est.hits == 0:
            warn_caller(
                f"{func}: no resample was as extreme as the observed statistic, so the p-value is the sampler's "
                "floor 1 / (1 + n_resamples) (pvalue_is_floor=True) and the exact p-value may be far smaller; a "
                "multiple-comparison correction of this floor can hide a real difference. Exact methods or "
                "importance sampling resolve it."
            )
        return result_type(
            statistic=stat.value, pvalue=est.pvalue, log_pvalue=math.log(est.pvalue), method=method,
            alternative=alternative, engine="monte_carlo", n_resamples=est.n_resamples, hits=est.hits,
            pvalue_ci=est.pvalue_ci, stopped_early=est.stopped_early, pvalue_is_floor=est.hits == 0, **shown,
        )
    if effects.is_real:
        if method in ("dp", "fft"):
            raise ValueError(f"{func}: method={method!r} needs integer local effects; real-valued scores take "
                             "'auto', 'exact' or 'monte_carlo'")
        if not hasattr(stat, "core_real"):
            return _listed(effects, stat, alternative, method, func, result_type,
                           {} if effect is None else {"difference": stat.value, "_effect": effect})
    outcome = settle(execute(effects, stat, alternative, method, mc), func, effects)
    value = stat.value  # S itself is read from the summary the executor made
    return outcome_result(outcome, result_type, value, method, alternative, effects.summary, effects.one_d,
                          value if effect is not None else None, effect)


def execute(effects: LocalEffects, stat: Any, alternative: str, method: str, mc: MonteCarloOptions) -> Any:
    """The core's outcome for an exact method: one call, which also makes the effects' summary
    (kept on them) where it is not made yet, and whose sampled routes draw the seed from `mc`
    only when they run."""
    draw_seed = lambda: mc.seed  # noqa: E731
    if effects.is_real:
        stay, swap = stat.core_real()
        return _core.execute_real(stay, swap, alternative, method, stat.rtol or 0.0, mc.n_resamples, mc.n_jobs, None,
                                  draw_seed, **stat.core_scores())
    a, b, paired = effects.core_arrays()
    core = stat.core_statistic(alternative)
    summary: Any
    try:
        if effects.one_d:
            summary, outcome = _core.execute(effects.summary_if_made(), a, b, paired, core, stat.kind, alternative,
                                             method, LIMITS, mc.n_resamples, mc.n_jobs, None, draw_seed)
        else:
            summary, outcome = _core.execute(effects.summary_if_made(), a, b, core, stat.kind, alternative, method,
                                             LIMITS, mc.n_resamples, mc.n_jobs, None, draw_seed)
    except ValueError as exc:
        effects.refused(exc)
    effects.adopt_summary(summary)
    return outcome


def settle(outcome: Any, func: str, effects: Optional[LocalEffects] = None, n_varying: Optional[int] = None) -> Any:
    """The outcome where it holds a p-value (warning where that is only a bound); otherwise the
    error that says which limit was reached."""
    why = outcome.shortfall
    if why == "below_fft_floor":
        floor = FFT_NOISE_FLOOR
        if outcome.dp_within_limit:
            warn_caller(
                f"the p-value is below the FFT engine's round-off ({floor:g}) and its exact recomputation "
                f"exceeds the unasked budget; reporting p <= {floor:g} (pvalue_is_bound=True). method='dp' "
                "computes the exact value.",
            )
        else:
            warn_caller(
                f"the p-value is below the FFT engine's round-off ({floor:g}) and the exact DP is out of "
                f"reach; reporting p <= {floor:g} (pvalue_is_bound=True).",
            )
    elif why == "no_sample_hit":
        warn_caller(
            f"{func}: no importance sample reached the rejection region in {outcome.n_resamples} draws; reporting "
            "the Chernoff upper bound of the tail (pvalue_is_bound=True). A larger n_resamples estimates it."
        )
    if outcome.route:
        return outcome
    if why == "dp_too_costly":
        raise SupportTooLargeError(
            f"{func}: method='dp' would need ~{outcome.cost:.2g} multiply-adds (hours or more); use "
            "method='auto' or method='monte_carlo'"
        )
    if why == "band_too_costly":
        raise SupportTooLargeError(
            f"{func}: the band-limited inversion would need ~{outcome.cost:.2g} group evaluations (the ranks leave "
            "many frequencies where the null's characteristic function is not negligible); use "
            "method='monte_carlo'"
        )
    if why == "too_many_to_list":
        raise too_many_to_list(int(outcome.cost))
    if outcome.detail:
        raise SupportTooLargeError(f"{func}: {outcome.detail}")
    varying = effects.n_varying if effects is not None else n_varying
    raise SupportTooLargeError(
        f"{func}: exact computation is out of reach for these local effects ({varying} entries vary, "
        f"with differences spread too widely for the grouped engine's window); use method='monte_carlo'"
    )


# The results of the exact engines, by result type.
_EXACT_FIELDS = ("statistic", "pvalue", "log_pvalue", "method", "alternative", "engine", "pvalue_is_bound", "_null",
                 "difference", "_effect")
_EXACT_RESULT: dict[type, Callable[..., Any]] = {
    t: instance_maker(t, *_EXACT_FIELDS) for t in (PermutationTestResult, MonteCarloTestResult)
}
# Routes of the real-valued engine, which has no distribution to keep.
_REAL_ROUTES = ("meet_in_the_middle", "saddlepoint_is")


def exact_result(result_type: type, statistic: Any, p: float, log_p: float, method: str, alternative: str,
                 engine: str, bound: bool, summary: Any, one_d: bool, difference: Any = None,
                 effect: Any = None) -> Any:
    """The result of an exact engine (`engine` as results name it), which keeps the recipe of
    its null distribution: the grouped engine's, or the DP's or FFT's where those ran."""
    null_engine = engine if engine in ("dp", "fft") else "auto"
    return _EXACT_RESULT[result_type](statistic, p, log_p, method, alternative, engine, bound,
                                      NullRecipe(summary, one_d, null_engine), difference, effect)


def outcome_result(outcome: Any, result_type: type, statistic: Any, method: str, alternative: str, summary: Any,
                   one_d: bool, difference: Any = None, effect: Any = None) -> Any:
    """The result of an executed test (`outcome` settled). An exact engine's keeps the recipe of
    its null distribution: the grouped engine's, or the DP's or FFT's where those ran; with the
    difference of two systems' metrics and the record behind its interval where there is one."""
    engine = outcome.route
    if engine not in _REAL_ROUTES:
        return exact_result(result_type, statistic, outcome.pvalue, outcome.log_pvalue, method, alternative, engine,
                            outcome.is_bound, summary, one_d, difference, effect)
    shown = {} if effect is None else {"difference": difference, "_effect": effect}
    sampled = engine == "saddlepoint_is"
    return result_type(
        statistic=statistic, method=method, alternative=alternative, **shown, pvalue=outcome.pvalue,
        log_pvalue=outcome.log_pvalue, engine=engine, n_resamples=outcome.n_resamples if sampled else None,
        pvalue_ci=outcome.ci if sampled else None, log_pvalue_ci=outcome.log_ci if sampled else None,
        pvalue_is_bound=outcome.is_bound,
    )


def _listed(effects: LocalEffects, stat: Any, alternative: str, method: str, func: str, result_type: type,
            shown: dict) -> Any:
    """A statistic other than the sum of real-valued effects: no distribution exists, so exact
    means listing all 2^n states."""
    if effects.n_varying > LIMITS.max_listed_entries:
        raise SupportTooLargeError(
            f"{func}: exact computation for a statistic of real-valued effects lists all 2^n states and is limited "
            f"to n <= {LIMITS.max_listed_entries} varying entries; got {effects.n_varying}; use method='monte_carlo'"
        )
    states = enumerate_states(effects)
    p = stat.count(states, alternative) / len(states)  # exact: both are integers below 2^53
    return result_type(statistic=stat.value, method=method, alternative=alternative, **shown, pvalue=p,
                       log_pvalue=math.log(p) if p > 0 else -math.inf, engine="enumeration")


def enumerate_states(effects: LocalEffects) -> np.ndarray:
    """All 2^n values of S (shape (2^n, m)) for the n varying entries, by doubling."""
    n, m = effects.n, effects.m
    stay = effects.stay.reshape(n, m)
    delta = effects.swap.reshape(n, m) - stay
    states = stay.sum(axis=0).reshape(1, m)
    for d in delta[(delta != 0).any(axis=1)]:
        states = np.concatenate((states, states + d))
    return states


# ---------------------------------------------------------------- Monte Carlo


class _Sampler:
    """Draws blocks of null sums S* (shape (k, m)).

    Integer coordinates are packed into one int64 by mixed radix when the box allows: the
    sum is linear, so the core's fast 1-D path draws all of them at once, with the same
    random bit per entry and resample as the m-D path (the same seed gives the same
    resamples either way). Real-valued 1-D effects use the core's float sampler; real m-D
    effects, NumPy.
    """

    def __init__(self, effects: LocalEffects) -> None:
        n, m = effects.n, effects.m
        stay = effects.stay.reshape(n, m)
        swap = effects.swap.reshape(n, m)
        self.m = m
        self._real = effects.is_real
        self._radix: Optional[list[int]] = None
        if self._real:
            lo = np.minimum(stay, swap)
            self._base = lo.sum(axis=0)
            self._delta = np.ascontiguousarray(np.abs(swap - stay)[:, 0] if m == 1 else swap - stay)
            self._stay_sum = stay.sum(axis=0)
            return
        if m > 1:
            spans = [int(v) for v in np.abs(stay - swap).sum(axis=0, dtype=np.int64)]
            if math.prod(s + 1 for s in spans) < 2**62:
                lo = np.minimum(stay, swap)
                self._radix = [math.prod(s + 1 for s in spans[j + 1:]) for j in range(m)]
                weights = np.array(self._radix, dtype=np.int64)
                self._base = lo.sum(axis=0, dtype=np.int64)
                stay = ((stay - lo) * weights).sum(axis=1, dtype=np.int64).reshape(-1, 1)
                swap = ((swap - lo) * weights).sum(axis=1, dtype=np.int64).reshape(-1, 1)
        self._stay = np.ascontiguousarray(stay)
        self._swap = np.ascontiguousarray(swap)

    def draw(self, k: int, seed: int, n_jobs: int) -> np.ndarray:
        if self._real:
            return self._draw_real(k, seed, n_jobs)
        sums = _core.sample_sums(self._stay, self._swap, k, seed, n_jobs)
        if self._radix is None:
            return sums
        packed = sums[:, 0]
        out = np.empty((k, self.m), dtype=np.int64)
        for j, w in enumerate(self._radix):
            out[:, j] = packed // w
            packed = packed - out[:, j] * w
        return out + self._base

    def _draw_real(self, k: int, seed: int, n_jobs: int) -> np.ndarray:
        if self.m == 1:
            return (self._base[0] + _core.real_sample_t(self._delta, 0.0, k, seed, n_jobs)).reshape(k, 1)
        swaps = np.random.default_rng(seed).integers(0, 2, size=(k, len(self._delta)), dtype=np.int8)
        return self._stay_sum + swaps.astype(np.float64) @ self._delta


def monte_carlo(effects: LocalEffects, stat: Any, alternative: str, opts: MonteCarloOptions) -> MonteCarloEstimate:
    """The one Monte Carlo loop: blocked (memory flat in n_resamples), seeded per block
    (independent of the thread count), with optional early stopping once the
    Clopper-Pearson interval excludes `alpha`. p = (1 + hits) / (1 + K)."""
    if hasattr(stat, "block_hits"):
        def block_hits(k: int, seed: int) -> int:
            return int(stat.block_hits(k, seed, alternative, opts.n_jobs))
    else:
        sampler = _Sampler(effects)

        def block_hits(k: int, seed: int) -> int:
            return int(stat.count(sampler.draw(k, seed, opts.n_jobs), alternative))
    # Real m-D effects are drawn with a (k, N) matrix of swaps: blocks shrink with N there.
    width = max(1, effects.m) * (effects.n if effects.is_real and effects.m > 1 else 1)
    block = max(1, min(MC_BLOCK, MC_BLOCK_ELEMENTS // width))
    hits = done = b = 0
    stopped = False
    while done < opts.n_resamples:
        k = min(block, opts.n_resamples - done)
        hits += block_hits(k, block_seed(opts.seed, b))
        done, b = done + k, b + 1
        if opts.alpha is not None and done < opts.n_resamples and excludes(hits, done, opts.confidence_level, opts.alpha):
            stopped = True
            break
    return MonteCarloEstimate(
        pvalue=(1 + hits) / (1 + done), pvalue_ci=clopper_pearson(hits, done, opts.confidence_level),
        n_resamples=done, hits=hits, stopped_early=stopped,
    )

