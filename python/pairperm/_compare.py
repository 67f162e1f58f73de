"""compare(): the right test for an evaluation metric in one call (Dror & Reichart's table).

Exact tests wherever one exists on this engine; otherwise, for corpus-level and user-defined
metrics of summed statistics, the paired permutation of entries estimated by tilted importance
sampling (relative error bar at any depth), or by plain Monte Carlo (approximate randomisation)
on request.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union, cast

import numpy as np

from . import _classic, _f1, _montecarlo, _permutation
from ._difference import BootstrapEffect
from ._metrics import (
    METRICS,
    check_counts,
    check_perplexity,
    check_sentence_scores,
    check_statistics_shape,
    metric_named,
    statistics_pair,
)
from ._results import CompareResult
from ._sampling import seed_from_rng
from ._units import read_groups, unit_sums
from ._validation import (
    N_RESAMPLES,
    as_int_array,
    as_real_array,
    check_alternative,
    check_paired_index,
    check_same_length,
    is_binary,
)
from .typing import Alternative, ArrayLike, CompareMethod, MonteCarloMethod, SeedLike

__all__ = ["compare"]


def _done(result: Any, test: str, reason: str, *, per_item: bool = False, effect: Any = None) -> CompareResult:
    """`per_item`: report the summed difference of `result` as a mean per entry; `effect`:
    the record behind the interval when `result` has none (a Monte Carlo test of a metric)."""
    if effect is None:
        difference, effect = getattr(result, "difference", None), getattr(result, "_effect", None)
    else:
        difference = result.statistic  # the permuted statistic is metric(A) - metric(B)
    if per_item and effect is not None:
        difference, effect = effect.per_item(difference)
    return CompareResult(result.statistic, float(result.pvalue), test, reason, result, difference, effect)


def _bootstrap_effect(xa: np.ndarray, ya: np.ndarray, metric: Any, rng: Any) -> BootstrapEffect:
    """The paired bootstrap of a metric that only a Monte Carlo permutation tests."""
    return BootstrapEffect(xa, ya, metric, seed_from_rng(rng, "compare"))


def _is_integral(arr: np.ndarray) -> bool:
    if arr.dtype.kind in "biu":
        return True
    return arr.dtype.kind == "f" and bool(np.all(np.isfinite(arr))) and bool(np.all(arr == np.floor(arr)))


# How each engine's p-value came about, for `reason`: exact engines, or a sampled estimate.
_ENGINE_WORDS = {
    "monte_carlo": "Monte Carlo (sampled p-value with a Clopper-Pearson interval)",
    "saddlepoint_is": "tilted importance sampling (estimated p-value with a relative error bar)",
    "importance_sampling": "tilted importance sampling (estimated p-value with a relative error bar)",
    "meet_in_the_middle": "exact (meet in the middle)",
    "enumeration": "exact (all swap patterns listed)",
    "dp": "exact (dynamic programme)",
    "fft": "exact (FFT convolution tree)",
    "grouped": "exact (grouped engine)",
}


def _how(result: Any) -> str:
    return _ENGINE_WORDS.get(str(result.engine), f"engine {result.engine!r}")


def _integer_sum(x: Any, y: Any, metric: str, alternative: Any, n_resamples: int, rng: Any,
                 method: Any = "auto", groups: Any = None) -> CompareResult:
    xa, ya = np.asarray(x), np.asarray(y)
    check_sentence_scores(metric, xa, "x", "compare")
    check_sentence_scores(metric, ya, "y", "compare")
    per_item = not METRICS[metric].summed
    # McNemar is the exact permutation test on 0/1 scores: other methods go to permutation_test.
    if (method == "auto" and groups is None and xa.ndim == 1 and ya.ndim == 1
            and is_binary(xa) and is_binary(ya)):
        r: Any = _classic.mcnemar_test(x, y, alternative=alternative)
        return _done(r, "mcnemar_test", "binary per-entry outcomes: exact McNemar test "
                                        "(identical to the exact permutation test on 0/1 scores)")
    r = _permutation.permutation_test(x, y, alternative=alternative, method=method, n_resamples=n_resamples, rng=rng,
                                      groups=groups)
    if not (_is_integral(xa) and _is_integral(ya)):
        # Partial credit (0.5 for a half-right answer) and the like: the same test, on real scores.
        what = "mean" if per_item else "sum"
        return _done(r, "permutation_test", f"real-valued per-entry scores ({metric}): paired-permutation test of the "
                                            f"{what} difference, {_how(r)}", per_item=per_item)
    return _done(r, "permutation_test", f"sum of per-entry integer scores: paired-permutation test, {_how(r)}",
                 per_item=per_item)


def _ratio(x: Any, y: Any, metric: str, alternative: Any, n_resamples: int, rng: Any,
           method: Any = "auto", groups: Any = None) -> CompareResult:
    name = f"{metric}_test"
    r = getattr(_f1, name)(x, y, alternative=alternative, method=method, n_resamples=n_resamples, rng=rng,
                           groups=groups)
    return _done(r, name, f"{metric} of summed (tp, fp, fn) counts: structured paired-permutation test, {_how(r)}")


def _perplexity(x: Any, y: Any, metric: str, alternative: Any, n_resamples: int, rng: Any,
                method: Any = "auto", groups: Any = None) -> CompareResult:
    check_paired_index(x, y, ("x", "y"), "compare")
    for arr, label in ((x, "x"), (y, "y")):
        check_perplexity(as_real_array(arr, label, "compare", ndim=(1, 2)), label, "compare")
    # Lower perplexity is better, so "A better" (greater) means A's values are smaller.
    flipped = {"greater": "less", "less": "greater"}.get(alternative, alternative)
    r = _classic.wilcoxon_test(x, y, alternative=flipped, method=method, n_resamples=n_resamples, rng=rng,
                               groups=groups)
    return _done(r, "wilcoxon_test", "real-valued per-entry scores such as perplexity: Wilcoxon signed-rank test "
                                     f"(Dror & Reichart), method {r.method!r}")


#: Methods of the metrics of summed statistics ("auto": importance sampling).
SUMMED_METHODS = ("auto", "importance_sampling", "monte_carlo")


def summed_statistics_method(method: Any, what: str) -> MonteCarloMethod:
    """The monte_carlo_test method that `method` asks for on a metric of summed statistics:
    "auto" is tilted importance sampling, whose relative error bar survives a multiple-comparison
    correction where plain sampling's floor 1 / (1 + n_resamples) would not."""
    if not isinstance(method, str) or method not in SUMMED_METHODS:
        raise ValueError(f"compare: {what} takes method {', '.join(map(repr, SUMMED_METHODS))}; got {method!r}")
    # One of SUMMED_METHODS other than "auto", which a type checker cannot tell from the test above.
    return "importance_sampling" if method == "auto" else cast(MonteCarloMethod, method)


def _corpus(x: Any, y: Any, metric: str, alternative: Any, n_resamples: int, rng: Any,
            method: Any = "auto", groups: Any = None) -> CompareResult:
    """macro-F1 / BLEU / chrF of summed integer statistics."""
    func = "compare"
    method = summed_statistics_method(method, f"metric={metric!r}")
    hint = "pairperm.bootstrap_test takes real-valued statistics"
    check_paired_index(x, y, ("x", "y"), func)
    sx, sy = statistics_pair(x, y, metric, func)
    xa = as_int_array(sx, "x", func, ndim=(2, 3), hint=hint)
    ya = as_int_array(sy, "y", func, ndim=(2, 3), hint=hint)
    check_same_length(xa, ya, "x", "y", func)
    check_statistics_shape(metric, xa.shape[1:], func)
    check_counts(xa, "x", metric, func)
    check_counts(ya, "y", metric, func)
    one = METRICS[metric].value
    r = _permute_summed_statistics(xa, ya, one, alternative, n_resamples, rng, method, groups, x)
    return _done(r, "monte_carlo_test", f"{metric} is a nonlinear function of summed statistics with no exact "
                                        f"engine: paired permutation of entries, {_how(r)}",
                 effect=_bootstrap_effect(xa, ya, metric, rng))


def _callable(x: Any, y: Any, metric: Any, alternative: Any, n_resamples: int, rng: Any,
              method: Any = "auto", groups: Any = None) -> CompareResult:
    func = "compare"
    method = summed_statistics_method(method, "a user-defined metric")
    check_paired_index(x, y, ("x", "y"), func)
    sx, sy = statistics_pair(x, y, metric, func)
    xa = as_real_array(sx, "x", func, ndim=(1, 2, 3))
    ya = as_real_array(sy, "y", func, ndim=(1, 2, 3))
    check_same_length(xa, ya, "x", "y", func)
    r = _permute_summed_statistics(xa, ya, metric, alternative, n_resamples, rng, method, groups, x)
    return _done(r, "monte_carlo_test", f"user-defined metric of summed statistics: paired permutation of entries, "
                                        f"{_how(r)}", effect=_bootstrap_effect(xa, ya, metric, rng))


def _permute_summed_statistics(xa: np.ndarray, ya: np.ndarray, one: Callable[[np.ndarray], Any], alternative: Any,
                               n_resamples: int, rng: Any, method: MonteCarloMethod = "importance_sampling",
                               groups: Any = None,
                               raw_x: Any = None) -> Any:
    """The paired-permutation test of metric(A) - metric(B) for a metric of summed per-entry
    statistics: swapping an entry swaps its two rows of statistics, so the local effects are
    (x_n, y_n) and (y_n, x_n), and the metric sees the summed statistics as float64 of shape
    (K,) + the per-entry shape."""
    shape = xa.shape[1:]
    n, m = len(xa), int(np.prod(shape, dtype=np.int64))

    def statistic(sums: np.ndarray) -> np.ndarray:
        k = len(sums)
        sums = sums.astype(np.float64)
        return (np.asarray(one(sums[:, :m].reshape((k,) + shape)), dtype=np.float64)
                - np.asarray(one(sums[:, m:].reshape((k,) + shape)), dtype=np.float64))

    fx, fy = xa.reshape(n, m), ya.reshape(n, m)
    if groups is not None:
        units = read_groups(groups, n, "compare", like=raw_x)
        fx, fy = unit_sums(fx, units, "x", "compare"), unit_sums(fy, units, "y", "compare")
    return _montecarlo.monte_carlo_test(np.concatenate([fx, fy], axis=1), np.concatenate([fy, fx], axis=1), statistic,
                                        n_resamples=n_resamples, rng=rng, alternative=alternative, method=method)


# The test of each kind of metric (see pairperm._metrics).
_ROUTES: dict[str, Callable[..., CompareResult]] = {
    "sum": _integer_sum, "mean": _integer_sum, "ratio": _ratio, "corpus": _corpus, "rank": _perplexity,
}


def compare(
    x: ArrayLike,
    y: ArrayLike,
    metric: Union[str, Callable[[np.ndarray], np.ndarray]] = "accuracy",
    *,
    alternative: Alternative = "two-sided",
    n_resamples: int = N_RESAMPLES,
    rng: SeedLike = None,
    method: CompareMethod = "auto",
    groups: Optional[ArrayLike] = None,
) -> CompareResult:
    """Compare systems A and B on the same entries with the test that fits `metric`.

    - ``"accuracy"``, ``"exact_match"``, ``"uas"``, ``"las"``, ``"sum"`` (integer scores,
      shape (N,)): :func:`mcnemar_test` for 0/1 scores, else :func:`permutation_test`;
      exact, since the metric is a sum of per-entry integer scores.
    - ``"f1"``, ``"precision"``, ``"recall"`` ((N, 3) or (N, 2) counts): ``f1_test``,
      ``precision_test``, ``recall_test``; exact structured tests.
    - ``"macro_f1"`` ((N, C, 3)), ``"bleu"`` ((N, 10), :data:`BLEU_COLUMNS`),
      ``"corpus_chrf"`` ((N, 18) chrF or (N, 24) chrF++, :data:`CHRF_COLUMNS`): corpus-level
      metrics of summed integer statistics, by :func:`monte_carlo_test`; no exact
      engine: the paired permutation of entries, by tilted importance sampling (a p-value
      with a relative error bar at any depth, so it survives a multiple-comparison
      correction), or plain Monte Carlo with ``method="monte_carlo"``.
    - ``"perplexity"`` (real, (N,)): :func:`wilcoxon_test` (Dror & Reichart's
      recommendation), exact or with a certified error bound; lower is better.
    - ``"mean"`` and the per-entry real-valued metrics ``"comet"``, ``"bleurt"``,
      ``"chrf"``, ``"sentence_bleu"``, ``"ndcg"``, ``"ap"``, ``"rr"``, ``"rouge"``,
      ``"judge"`` ((N,) floats, higher is better): :func:`permutation_test` on the real
      scores (Fisher's randomization test of the mean difference: exact for up to 40
      differing entries, otherwise a p-value with a relative error bar; integer scores
      take the exact integer engines). :func:`wilcoxon_test` and :func:`bootstrap_test`
      remain available directly.
    - a callable (vectorised on summed statistics: it receives float64 sums of shape
      ``(K,) + x.shape[1:]`` and returns K values): :func:`monte_carlo_test`, the paired
      permutation of entries, as for macro-F1 and BLEU.
      :func:`bootstrap_test` remains available directly.

    Parameters
    ----------
    x, y : array_like
        Per-entry scores or sufficient statistics of A and B (see the list).
    metric : str or callable
    alternative : {"two-sided", "greater", "less"}
        Passed on ("greater": A is better).
    n_resamples, rng :
        For the sampling routes.
    groups : array_like of labels, length N, optional
        The exchangeable unit of each entry (passage, prompt, document ...): passed to the
        test that runs, which swaps whole units (0/1 scores then run
        :func:`permutation_test`, the exact test of the per-unit counts). Integer and
        real-valued scores may also be given as (N, k): k samples of each item.
    method : str
        Passed to the test that runs; "auto" everywhere picks as that test does.
        Integer sums: :func:`permutation_test`'s "auto", "exact", "dp", "fft",
        "monte_carlo" (0/1 scores go to :func:`mcnemar_test` under "auto" only; any other
        method runs the identical :func:`permutation_test`). "f1", "precision", "recall":
        "auto", "exact", "dp", "monte_carlo". "perplexity": :func:`wilcoxon_test`'s "auto"
        (exact engine when cheap, else the certified band-limited inversion, ~0.3 s at
        N = 10^5), "exact" (the exact engine; refused above a few thousand distinct ranks),
        "monte_carlo". Real-valued means: :func:`permutation_test`'s "auto", "exact",
        "monte_carlo". "macro_f1", "bleu", "corpus_chrf" and callables: "auto" (= "importance_sampling"),
        "monte_carlo" (plain sampling; its p-value is at least 1 / (1 + n_resamples)).

    Returns
    -------
    CompareResult
        ``test`` names the function that ran, ``reason`` says why.

    Examples
    --------
    >>> import pairperm
    >>> c = pairperm.compare([1, 1, 0, 1, 1, 1], [0, 1, 0, 0, 1, 0], metric="accuracy")
    >>> print(c.test, f"{c.pvalue:.6g}")
    mcnemar_test 0.25
    >>> print(c.reason)
    binary per-entry outcomes: exact McNemar test (identical to the exact permutation test on 0/1 scores)
    >>> pairperm.compare([31.2, 28.4, 40.1, 25.0], [30.1, 29.0, 36.2, 24.1], metric="perplexity").test
    'wilcoxon_test'
    """
    func = "compare"
    check_alternative(alternative, func)
    if callable(metric):
        return _callable(x, y, metric, alternative, n_resamples, rng, method, groups)
    row = metric_named(metric)
    if row is None:
        raise ValueError(f"{func}: metric must be a callable or one of {', '.join(map(repr, METRICS))}; got {metric!r}")
    return _ROUTES[row.kind](x, y, metric, alternative, n_resamples, rng, method, groups)
