"""The one pipeline under every paired-permutation test: engine choice, the enumeration
fallback, the FFT round-off guard, the Monte Carlo loop, and the result.

Public functions validate their arguments, build `LocalEffects` and a statistic kind
(`_statistics`), and call `run`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

import pairperm._core as _core

from ._effects import LocalEffects, NullRecipe
from ._errors import SupportTooLargeError, warn_caller
from ._results import MonteCarloTestResult, PermutationTestResult, instance_maker
from ._sampling import MC_BLOCK, MC_BLOCK_ELEMENTS, MonteCarloOptions, block_seed
from ._smooth import smooth_pvalue
from ._statistics import RealSumStatistic, TiltNotCertified
from ._stats import clopper_pearson, excludes

__all__ = ["LIMITS", "monte_carlo", "plan", "run"]

if _core.vector_math_ignored:
    # Read once, when the core was loaded: a setting that names no kind caps nothing.
    warnings.warn(f"PAIRPERM_VECTOR_MATH={_core.vector_math_ignored!r} names no kind (avx512, avx2 or libm, in any "
                  f"case) and is ignored: the grouped tails run on {_core.vector_math}", RuntimeWarning, stacklevel=2)

# The engine planner's limits (the core's defaults, in pairperm/plan.hpp): every exact route
# asks the core which engine to run. Tests swap in other limits to exercise a route.
LIMITS = _core.PlanLimits()
# A p-value summed from an FFT-computed pmf below this is round-off.
FFT_NOISE_FLOOR = _core.fft_noise_floor
# The name a result reports (``engine``) for each engine the planner picks.
RESULT_ENGINE = {"trivial": "enumeration", "dp": "dp", "fft": "fft", "grouped_tail": "grouped",
                 "grouped_distribution": "grouped", "enumeration": "enumeration", "monte_carlo": "monte_carlo"}
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
        return _real(effects, stat, alternative, method, func, mc, result_type, shown)
    exact = _exact(effects, stat, alternative, plan(effects, stat.kind, method), func)
    if exact is None:
        return _real_valued_sum(effects, stat, alternative, method, func, mc, result_type, shown)
    p, log_p, engine, bound = exact
    return exact_result(result_type, stat.value, p, log_p, method, alternative, engine, bound, effects.summary,
                        effects.one_d, shown.get("difference"), effect)


# The results of the exact engines, by result type.
_EXACT_FIELDS = ("statistic", "pvalue", "log_pvalue", "method", "alternative", "engine", "pvalue_is_bound", "_null",
                 "difference", "_effect")
_EXACT_RESULT: dict[type, Callable[..., Any]] = {
    t: instance_maker(t, *_EXACT_FIELDS) for t in (PermutationTestResult, MonteCarloTestResult)
}


def exact_result(result_type: type, statistic: Any, p: float, log_p: float, method: str, alternative: str,
                 engine: str, bound: bool, summary: Any, one_d: bool, difference: Any = None,
                 effect: Any = None) -> Any:
    """The result of an exact engine (`engine` as results name it), which keeps the recipe of
    its null distribution: the grouped engine's, or the DP's or FFT's where those ran; with the
    difference of two systems' metrics and the record behind its interval where there is one."""
    null_engine = engine if engine in ("dp", "fft") else "auto"
    return _EXACT_RESULT[result_type](statistic, p, log_p, method, alternative, engine, bound,
                                      NullRecipe(summary, one_d, null_engine), difference, effect)


def _real(effects: LocalEffects, stat: Any, alternative: str, method: str, func: str,
          mc: MonteCarloOptions, result_type: type, shown: dict) -> Any:
    """Real-valued local effects: no dense distribution exists, so exact means enumeration
    (meet in the middle for the sum, listing for other statistics) and large inputs are
    estimated with a relative error bar (tilted importance sampling)."""
    if method in ("dp", "fft"):
        raise ValueError(f"{func}: method={method!r} needs integer local effects; real-valued scores take "
                         "'auto', 'exact' or 'monte_carlo'")
    done = dict(statistic=stat.value, method=method, alternative=alternative, **shown)
    if hasattr(stat, "exact_or_tilted"):
        r = stat.exact_or_tilted(alternative, method, mc.n_resamples, mc.seed, mc.n_jobs)
        engine = "meet_in_the_middle" if r.method == "exact" else r.method
        if r.pvalue_is_bound:
            warn_caller(
                f"{func}: no importance sample reached the rejection region in {r.n_resamples} draws; reporting "
                "the Chernoff upper bound of the tail (pvalue_is_bound=True). A larger n_resamples estimates it."
            )
        return result_type(**done, pvalue=r.pvalue, log_pvalue=r.log_pvalue, engine=engine,
                           n_resamples=r.n_resamples, pvalue_ci=r.pvalue_ci, log_pvalue_ci=r.log_pvalue_ci,
                           pvalue_is_bound=r.pvalue_is_bound)
    if effects.n_varying > LIMITS.max_listed_entries:
        raise SupportTooLargeError(
            f"{func}: exact computation for a statistic of real-valued effects lists all 2^n states and is limited "
            f"to n <= {LIMITS.max_listed_entries} varying entries; got {effects.n_varying}; use method='monte_carlo'"
        )
    p = _enumerate(effects, stat, alternative)
    return result_type(**done, pvalue=p, log_pvalue=math.log(p) if p > 0 else -math.inf, engine="enumeration")


def _real_valued_sum(effects: LocalEffects, stat: Any, alternative: str, method: str, func: str,
                     mc: MonteCarloOptions, result_type: type, shown: dict) -> Any:
    """Integer effects too widely spread for the grouped engine and too many to list: the
    planner hands the sum to the real-valued engine, exact in float64 for them (meet in the
    middle up to 40 varying entries, tilted importance sampling beyond: `engine` says which)."""
    real = LocalEffects.real(effects.stay.astype(np.float64), effects.swap.astype(np.float64))
    r = _real(real, RealSumStatistic(real, 0.0), alternative, method, func, mc, result_type, shown)
    return dataclasses.replace(r, statistic=stat.value)


def _exact(effects: LocalEffects, stat: Any, alternative: str, plan: Any, func: str) -> Optional[tuple]:
    """(p, log p, engine that ran, whether p is only a bound) by the planner's engine, or None
    where it hands the sum over to the real-valued engine."""
    engine = plan.engine
    why_not_tilted = None
    if engine == "grouped_tail":
        try:
            p, log_p = stat.tilted(alternative)
            return p, log_p, "grouped", False
        except SupportTooLargeError as err:
            engine = plan.fallback  # the tilted window did not fit after all
            why_not_tilted = err
        except TiltNotCertified:
            return _from_distribution(effects, stat, alternative, "auto", plan)
    elif engine == "grouped_distribution":
        try:
            return _from_distribution(effects, stat, alternative, "auto", plan)
        except SupportTooLargeError:
            engine = plan.fallback
    if engine == "trivial":
        return 1.0, 0.0, RESULT_ENGINE[engine], False
    if engine in ("dp", "fft"):
        return _from_distribution(effects, stat, alternative, engine, plan)
    if engine == "enumeration":
        p = _enumerate(effects, stat, alternative)
        return p, (math.log(p) if p > 0 else -math.inf), "enumeration", False
    if engine == "real_valued":
        return None
    if plan.reason == "dp_too_costly":
        raise SupportTooLargeError(
            f"{func}: method='dp' would need ~{plan.dp_cost:.2g} multiply-adds (hours or more); use "
            "method='auto' or method='monte_carlo'"
        )
    if why_not_tilted is not None:
        raise SupportTooLargeError(f"{func}: {why_not_tilted}") from why_not_tilted
    raise SupportTooLargeError(
        f"{func}: exact computation is out of reach for these local effects ({effects.n_varying} entries vary, "
        f"with differences spread too widely for the grouped engine's window); use method='monte_carlo'"
    )


def _from_distribution(effects: LocalEffects, stat: Any, alternative: str, engine: str, plan: Any) -> tuple:
    dist = effects.distribution(engine)
    p = stat.from_distribution(dist, alternative)
    if engine == "dp" or p >= FFT_NOISE_FLOOR:
        return p, (math.log(p) if p > 0 else -math.inf), ("grouped" if engine == "auto" else engine), False
    # Below the FFT's round-off: the DP's relative accuracy resolves it when affordable.
    if plan.below_noise_floor == "dp":
        p = stat.from_distribution(effects.distribution("dp"), alternative)
        return p, (math.log(p) if p > 0 else -math.inf), "dp", False
    if plan.dp_within_limit:
        warn_caller(
            f"the p-value is below the FFT engine's round-off ({FFT_NOISE_FLOOR:g}) and its exact recomputation "
            f"exceeds the unasked budget; reporting p <= {FFT_NOISE_FLOOR:g} (pvalue_is_bound=True). method='dp' "
            "computes the exact value.",
        )
    else:
        warn_caller(
            f"the p-value is below the FFT engine's round-off ({FFT_NOISE_FLOOR:g}) and the exact DP is out of "
            f"reach; reporting p <= {FFT_NOISE_FLOOR:g} (pvalue_is_bound=True).",
        )
    return FFT_NOISE_FLOOR, math.log(FFT_NOISE_FLOOR), ("grouped" if engine == "auto" else engine), True


def enumerate_states(effects: LocalEffects) -> np.ndarray:
    """All 2^n values of S (shape (2^n, m)) for the n varying entries, by doubling."""
    n, m = effects.n, effects.m
    stay = effects.stay.reshape(n, m)
    delta = effects.swap.reshape(n, m) - stay
    states = stay.sum(axis=0).reshape(1, m)
    for d in delta[(delta != 0).any(axis=1)]:
        states = np.concatenate((states, states + d))
    return states


def _enumerate(effects: LocalEffects, stat: Any, alternative: str) -> float:
    states = enumerate_states(effects)
    return stat.count(states, alternative) / len(states)  # exact: both are integers below 2^53


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

