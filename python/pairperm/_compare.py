"""compare(): the right test for an evaluation metric in one call (Dror & Reichart's table).

Exact tests wherever one exists on this engine; otherwise Monte Carlo permutation
(approximate randomisation) for corpus-level metrics of summed statistics, and the
paired bootstrap for user-defined metrics.
"""

from __future__ import annotations

from typing import Any, Callable, Union

import numpy as np

from ._bootstrap import bleu_from_sums, f1_from_sums
from ._results import CompareResult
from ._validation import N_RESAMPLES, Alternative, ArrayLike

__all__ = ["compare", "METRICS"]

#: metric name -> (test pairperm runs, why)
METRICS = {
    "accuracy": "permutation_test",
    "exact_match": "permutation_test",
    "uas": "permutation_test",
    "las": "permutation_test",
    "sum": "permutation_test",
    "f1": "f1_test",
    "precision": "precision_test",
    "recall": "recall_test",
    "macro_f1": "monte_carlo_test",
    "bleu": "monte_carlo_test",
    "perplexity": "wilcoxon_test",
    "mean": "bootstrap_test",
}
_INTEGER_SUMS = ("accuracy", "exact_match", "uas", "las", "sum")


def _done(result: Any, test: str, reason: str) -> CompareResult:
    return CompareResult(result.statistic, float(result.pvalue), test, reason, result)


def _is_integral(arr: np.ndarray) -> bool:
    if arr.dtype.kind in "biu":
        return True
    return arr.dtype.kind == "f" and bool(np.all(np.isfinite(arr))) and bool(np.all(arr == np.floor(arr)))


def compare(
    x: ArrayLike,
    y: ArrayLike,
    metric: Union[str, Callable[[np.ndarray], np.ndarray]] = "accuracy",
    *,
    alternative: Alternative = "two-sided",
    n_resamples: int = N_RESAMPLES,
    rng: Any = None,
) -> CompareResult:
    """Compare systems A and B on the same entries with the test that fits `metric`.

    ===========================================  =====================================  ===============================
    metric (per-entry input)                      test                                   why
    ===========================================  =====================================  ===============================
    "accuracy", "exact_match", "uas", "las",      :func:`mcnemar_test` if 0/1,           exact; the metric is a sum of
    "sum" (integer scores, shape (N,))            else :func:`permutation_test`          per-entry integer scores
    "f1", "precision", "recall" ((N, 3) or        ``f1_test`` / ``precision_test`` /     exact structured test
    (N, 2) counts)                                ``recall_test``
    "macro_f1" ((N, C, 3)), "bleu" ((N, 10))      :func:`monte_carlo_test`               no exact engine; approximate
                                                                                        randomisation of summed stats
    "perplexity" (real, (N,))                     :func:`wilcoxon_test` (exact)          Dror & Reichart's recommendation
    "mean" (real, (N,))                           :func:`bootstrap_test`                 real-valued mean; integer
                                                                                        scores go to permutation_test
    callable (vectorised on summed stats)         :func:`bootstrap_test`                 any metric of summed statistics
    ===========================================  =====================================  ===============================

    Parameters
    ----------
    x, y : array_like
        Per-entry scores or sufficient statistics of A and B (see the table).
    metric : str or callable
    alternative : {"two-sided", "greater", "less"}
        Passed on ("greater": A is better).
    n_resamples, rng :
        For the Monte Carlo and bootstrap routes.

    Returns
    -------
    CompareResult
    """
    from . import _bootstrap, _classic, _f1, _montecarlo, _permutation

    a, b = x, y

    func = "compare"
    if callable(metric):
        r = _bootstrap.bootstrap_test(a, b, metric, n_resamples=n_resamples, rng=rng, alternative=alternative)
        return _done(r, "bootstrap_test", "user-defined metric of summed statistics: paired bootstrap (no exact test)")
    if metric not in METRICS:
        raise ValueError(f"{func}: metric must be a callable or one of {', '.join(map(repr, METRICS))}; got {metric!r}")

    if metric in _INTEGER_SUMS or metric == "mean":
        aa, ba = np.asarray(a), np.asarray(b)
        if metric == "mean" and not (_is_integral(aa) and _is_integral(ba)):
            r = _bootstrap.bootstrap_test(a, b, "mean", n_resamples=n_resamples, rng=rng, alternative=alternative)
            return _done(r, "bootstrap_test", "real-valued per-entry scores: paired bootstrap of the mean")
        if aa.ndim == 1 and ba.ndim == 1 and all(np.isin(arr, (0, 1)).all() for arr in (aa, ba)):
            r = _classic.mcnemar_test(a, b, alternative=alternative)
            return _done(r, "mcnemar_test", "binary per-entry outcomes: exact McNemar test "
                                            "(identical to the exact permutation test on 0/1 scores)")
        r = _permutation.permutation_test(a, b, alternative=alternative)
        return _done(r, "permutation_test", "sum of per-entry integer scores: exact paired-permutation test")

    if metric in ("f1", "precision", "recall"):
        name = METRICS[metric]
        r = getattr(_f1, name)(a, b, alternative=alternative)
        return _done(r, name, f"{metric} of summed (tp, fp, fn) counts: exact structured permutation test")

    if metric == "perplexity":
        # Lower perplexity is better, so "A better" (greater) means A's values are smaller.
        flipped = {"greater": "less", "less": "greater"}.get(alternative, alternative)
        r = _classic.wilcoxon_test(a, b, alternative=flipped)
        return _done(r, "wilcoxon_test", "real-valued per-entry scores such as perplexity: exact Wilcoxon "
                                         "signed-rank test (Dror & Reichart)")

    # macro_f1 / bleu: corpus metrics of summed integer statistics. Swapping an entry swaps
    # its two rows of statistics, so the local effects are (a_n, b_n) and (b_n, a_n).
    from ._validation import as_int_array, check_same_length

    shape_ok = {"macro_f1": lambda s: len(s) == 3 and s[2] == 3, "bleu": lambda s: len(s) == 2 and s[1] == 10}[metric]
    aa = as_int_array(a, "a", func, ndim=(2, 3), hint="pairperm.bootstrap_test takes real-valued statistics")
    ba = as_int_array(b, "b", func, ndim=(2, 3), hint="pairperm.bootstrap_test takes real-valued statistics")
    check_same_length(aa, ba, "a", "b", func)
    if not shape_ok(aa.shape):
        want = "(N, C, 3)" if metric == "macro_f1" else "(N, 10)"
        raise ValueError(f"{func}: metric={metric!r} needs statistics of shape {want}; got {aa.shape}")
    n = len(aa)
    m = int(np.prod(aa.shape[1:]))
    fa, fb = aa.reshape(n, m), ba.reshape(n, m)
    shape = aa.shape[1:]
    one = (lambda s: f1_from_sums(s).mean(axis=-1)) if metric == "macro_f1" else bleu_from_sums

    def statistic(sums: np.ndarray) -> np.ndarray:
        k = len(sums)
        sums = sums.astype(np.float64)
        return one(sums[:, :m].reshape((k,) + shape)) - one(sums[:, m:].reshape((k,) + shape))

    r = _montecarlo.monte_carlo_test(
        np.concatenate([fa, fb], axis=1), np.concatenate([fb, fa], axis=1), statistic,
        n_resamples=n_resamples, rng=rng, alternative=alternative,
    )
    return _done(r, "monte_carlo_test", f"{metric} is a nonlinear function of summed statistics with no exact "
                                        "engine: Monte Carlo paired permutation (approximate randomisation)")
