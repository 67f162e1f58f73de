"""Result objects: frozen dataclasses in the style of scipy.stats results.

Every result pickles (no closures held), prints through one repr rule and converts to
plain Python values with ``to_dict()`` (for ``json.dumps`` and ``pandas.DataFrame``).

A result comparing two systems carries ``difference`` (metric of A minus metric of B, in the
metric's units) and ``confidence_interval(confidence_level)`` for it, as scipy's results do;
what the interval needs is a small record from ``_difference`` (not shown, not in ``to_dict``).
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, ClassVar, NamedTuple, Optional, Union

import numpy as np

from ._formatting import SUM_DRAWN_AS, short_repr

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ._distribution import Distribution, MultiDistribution

__all__ = [
    "BootstrapTestResult",
    "ConfidenceInterval",
    "CompareResult",
    "McNemarResult",
    "MonteCarloTestResult",
    "PermutationTestResult",
    "SignTestResult",
    "WilcoxonResult",
]


class ConfidenceInterval(NamedTuple):
    """Lower and upper end (``-inf`` / ``inf`` for a one-sided interval), as in scipy."""

    low: float
    high: float


def _plain(v: Any) -> Any:
    if isinstance(v, _Result):
        return v.to_dict()
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None  # JSON has no inf or NaN: json.dumps would write the invalid tokens Infinity/NaN
    return v


def instance_maker(cls: type, *names: str) -> Callable[..., Any]:
    """A function of the values of `names`, given in that order, that makes what
    ``cls(**dict(zip(names, values)))`` makes for a frozen dataclass, every other field at its
    default, without the dataclass's ``__init__``: that sets each field by
    ``object.__setattr__``, and for a result's 16 fields costs as much as the rest of an exact
    test at N = 10^4. For the library's own hot paths, whose values are already what the fields
    hold. Refused here, once: names that are not init fields, missing or repeated fields, and
    classes whose ``__init__`` does more than store fields (``__post_init__``, a
    ``default_factory``)."""
    every = [f for f in fields(cls) if f.init]
    factories = [f.name for f in fields(cls) if f.default_factory is not MISSING]
    if hasattr(cls, "__post_init__") or factories:
        raise TypeError(f"{cls.__name__}: __post_init__ or default_factory fields {factories} need __init__")
    unknown = [n for n in names if n not in {f.name for f in every}]
    missing = [f.name for f in every if f.default is MISSING and f.name not in names]
    if unknown or missing or len(set(names)) != len(names):
        raise TypeError(f"{cls.__name__}: unknown fields {unknown}, missing fields {missing} or repeated fields "
                        f"in {list(names)}")
    # The fields __init__ sets, in its order (those given are stored over their placeholder),
    # so that the instance's __dict__ reads as __init__ would fill it.
    defaults = {f.name: None if f.default is MISSING else f.default for f in every}
    # Generated, as dataclasses generate __init__: one store per field, by name, costs half of
    # filling the dict from pairs. The parameters are the class's field names; the function's
    # own names carry a prefix no field may use.
    if any(n.startswith("_maker_") for n in names):
        raise TypeError(f"{cls.__name__}: field names starting with _maker_ are reserved here")
    stores = "".join(f"    _maker_state[{n!r}] = {n}\n" for n in names)
    source = (f"def make({', '.join(names)}):\n    _maker_state = _maker_defaults.copy()\n{stores}"
              "    _maker_obj = _maker_new(_maker_cls)\n    _maker_set(_maker_obj, '__dict__', _maker_state)\n"
              "    return _maker_obj\n")
    namespace: dict[str, Any] = {"_maker_defaults": defaults, "_maker_new": object.__new__,
                                 "_maker_set": object.__setattr__, "_maker_cls": cls}
    exec(source, namespace)  # noqa: S102
    make: Callable[..., Any] = namespace["make"]
    make.__qualname__ = f"instance_maker.<{cls.__name__}>"
    return make


class _Result:
    """Shared behaviour of the result dataclasses."""

    # Fields shown by repr, in order; None values are left out, and so is log_pvalue
    # while pvalue itself is representable.
    _shown: ClassVar[tuple[str, ...]] = ()
    alternative: str  # every result's field, declared here for confidence_interval

    def __repr__(self) -> str:
        parts = []
        for name in self._shown:
            v = getattr(self, name)
            if v is None or v is False:
                continue
            if name == "log_pvalue" and getattr(self, "pvalue", 0.0) >= 1e-300:
                continue
            if name == "log_pvalue_ci" and min(getattr(self, "pvalue_ci", None) or (0.0,)) >= 1e-300:
                continue
            parts.append(f"{name}={short_repr(v)}")
        return f"{type(self).__name__}({', '.join(parts)})"

    # Why a result without a difference of two systems' metrics has no interval.
    _no_interval: ClassVar[str] = (
        "this test's statistic is a function of local effects, not necessarily a difference of two systems' "
        "metrics, so it has no difference to give an interval for; permutation_test, bootstrap_test, f1_test or "
        "compare on the two systems' scores give one"
    )

    def confidence_interval(self, confidence_level: float = 0.95, **options: Any) -> ConfidenceInterval:
        """Confidence interval for ``difference`` (metric of A minus metric of B), one-sided
        like the test: ``alternative="greater"`` gives ``(low, inf)``, ``"less"`` ``(-inf, high)``.

        The interval inverts the test that produced the result where that is a shift test:

        - sums and means (``permutation_test``, ``monte_carlo_test`` on ``x - y, y - x``,
          ``compare`` on sums, means, accuracy) and McNemar (the 0/+-1 differences): the
          paired-permutation inversion interval of :func:`pairperm.shift_interval` (the shifts
          of every per-item difference the test does not reject), for the sum or the mean as
          ``difference`` is; option ``method`` ("auto", "exact", "saddlepoint");
        - ``wilcoxon_test``: the signed-rank inversion interval, order statistics of the Walsh
          averages (exact null up to 50 items, normal approximation beyond);
        - ``sign_test``: the sign-test inversion interval, order statistics of the differences
          (exact binomial up to 5000 items, normal approximation beyond);
        - ratio and corpus metrics (``f1_test``, ``precision_test``, ``recall_test``,
          ``bootstrap_test``, ``compare`` on macro-F1, BLEU or a callable): the paired bootstrap of
          :func:`pairperm.bootstrap_intervals`, seeded from the result so that it is repeatable;
          options ``method`` ("percentile", the default, or "bca") and ``n_resamples``.

        Raises ValueError for a result with no ``difference`` (``structured_test``, or
        ``monte_carlo_test`` on general local effects).
        """
        effect = getattr(self, "_effect", None)
        if effect is None:
            raise ValueError(f"{type(self).__name__}.confidence_interval: {self._no_interval}")
        interval: ConfidenceInterval = effect.interval(confidence_level, self.alternative, **options)
        return interval

    def to_dict(self) -> dict[str, Any]:
        """The public fields as plain Python values (no NumPy types, no arrays; an infinite or
        NaN float becomes None), ready for ``json.dumps``."""
        out = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if f.name.startswith("_") or isinstance(v, np.ndarray):
                continue
            out[f.name] = _plain(v)
        return out


class _WithNull:
    """A result that keeps the recipe of its statistic's null distribution (``_null``), rebuilt
    on first access and never pickled (results stay light on the wire), and draws it."""

    _null: Any
    _drawn_as = SUM_DRAWN_AS

    @property
    def null_distribution(self) -> Union[Distribution, MultiDistribution, None]:
        cached = self.__dict__.get("_null_cache")
        if cached is None and self._null is not None:
            cached = self._null.build()
            object.__setattr__(self, "_null_cache", cached)
        return cached

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_null_cache"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def plot(self, ax: Optional[Axes] = None, *, log: bool = False) -> Axes:
        """Plot the null distribution with the observed statistic and the rejection region."""
        from ._plot import plot_result

        return plot_result(self, ax=ax, log=log)


@dataclass(frozen=True, repr=False)
class PermutationTestResult(_WithNull, _Result):
    """Result of the paired-permutation tests (:func:`pairperm.permutation_test`,
    :func:`pairperm.structured_test`, :func:`pairperm.f1_test`, ...).

    Attributes
    ----------
    statistic : int or float
        Observed test statistic (``sum(x) - sum(y)`` for ``permutation_test``).
    difference : int, float or None
        Metric of A minus metric of B: ``sum(x) - sum(y)`` for ``permutation_test`` (and for
        ``monte_carlo_test`` on sign-flip effects ``x - y, y - x``), ``score_A - score_B`` for
        ``f1_test``, ``precision_test``, ``recall_test``. None for ``structured_test`` and
        ``monte_carlo_test`` on other local effects, whose statistic need not be a difference
        of two systems' metrics. Its interval: :meth:`confidence_interval`.
    pvalue : float
        p-value; exact for the exact methods.
    log_pvalue : float
        Natural log of the p-value, accurate where ``pvalue`` underflows to 0.
    method : str
        The method asked for (``"auto"``, ``"exact"``, ``"dp"``, ``"fft"``, ``"monte_carlo"``,
        ``"importance_sampling"``).
    alternative : str
    engine : str
        What ran: ``"grouped"`` (grouped engine, exponential tilting for tails),
        ``"enumeration"`` (all 2^n states listed), ``"meet_in_the_middle"``, ``"dp"``,
        ``"fft"``, ``"saddlepoint_is"`` (importance sampling, real-valued scores),
        ``"importance_sampling"`` (tilted sampling of a callable statistic) or ``"monte_carlo"``.
    n_resamples, hits : int or None
        Sampling methods only: resamples drawn and resamples at least as extreme.
    pvalue_ci : (float, float) or None
        Sampling methods only: 95% interval for the exact p-value.
    log_pvalue_ci : (float, float) or None
        The same interval in natural logs, meaningful where ``pvalue_ci`` underflows to 0
        (importance sampling reaches p = 1e-300 and below).
    pvalue_is_bound : bool
        True when ``pvalue`` is only an upper bound (a ``PrecisionWarning`` says why).
    stopped_early : bool
        Monte Carlo with ``alpha``: the interval excluded alpha before all resamples were drawn.
    pvalue_is_floor : bool
        Plain Monte Carlo with no resample as extreme as the observed statistic: ``pvalue`` is
        the sampler's floor ``1 / (1 + n_resamples)``, and the exact p-value may be any amount
        smaller (a ``PrecisionWarning`` says so; ``method="importance_sampling"`` of
        :func:`pairperm.monte_carlo_test` resolves it).
    null_distribution : Distribution, MultiDistribution or None
        Null distribution of S, recomputed on first access (None for sampling methods).

    Examples
    --------
    >>> import pairperm
    >>> r = pairperm.permutation_test([12, 7, 30, 9, 15, 22], [11, 7, 27, 9, 13, 22])
    >>> print(r.statistic, f"{r.pvalue:.6g}", r.engine)
    6 0.25 dp
    >>> print(f"{r.log_pvalue:.6f}")
    -1.386294
    >>> d = r.null_distribution
    >>> print(f"{d.sf(5) + d.cdf(-6):.6g}")      # P[|S| >= 6]
    0.25
    >>> sorted(r.to_dict())[:4]
    ['alternative', 'difference', 'engine', 'hits']
    >>> r.confidence_interval()       # sums: 6 x the extreme subset means of d = x - y (0 and 3)
    ConfidenceInterval(low=0.0, high=18.0)
    """

    statistic: Union[int, float]
    pvalue: float
    log_pvalue: float
    method: str
    alternative: str
    engine: str = ""
    n_resamples: Optional[int] = None
    hits: Optional[int] = None
    pvalue_ci: Optional[tuple[float, float]] = None
    pvalue_is_bound: bool = False
    stopped_early: bool = False
    log_pvalue_ci: Optional[tuple[float, float]] = None
    difference: Union[int, float, None] = None
    pvalue_is_floor: bool = False
    _null: Any = field(default=None, compare=False)
    _effect: Any = field(default=None, compare=False)

    _shown: ClassVar[tuple[str, ...]] = (
        "statistic", "difference", "pvalue", "log_pvalue", "pvalue_is_bound", "method", "engine", "alternative",
        "n_resamples", "pvalue_ci", "log_pvalue_ci", "stopped_early", "pvalue_is_floor",
    )


@dataclass(frozen=True, repr=False)
class MonteCarloTestResult(PermutationTestResult):
    """Result of :func:`pairperm.monte_carlo_test` (always a sampling estimate).

    Examples
    --------
    >>> import pairperm
    >>> r = pairperm.monte_carlo_test([2, -1, 3, 0, 1], [-2, 1, -3, 0, -1], n_resamples=999, rng=0)
    >>> type(r).__name__, r.engine, r.n_resamples, r.pvalue == (1 + r.hits) / 1000
    ('MonteCarloTestResult', 'monte_carlo', 999, True)
    >>> r.null_distribution is None          # sampling keeps no distribution
    True
    """


@dataclass(frozen=True, repr=False)
class McNemarResult(_WithNull, _Result):
    """Result of :func:`pairperm.mcnemar_test`.

    Attributes
    ----------
    statistic : int
        Entries that A got right and B got wrong (``n_a_only``).
    difference : float
        Accuracy of A minus accuracy of B, ``(n_a_only - n_b_only) / N``; its interval
        (:meth:`confidence_interval`) inverts the paired-permutation test on the 0/+-1 differences.
    pvalue, log_pvalue : float
        Exact binomial p-value and its natural log.
    alternative : str
    n_a_only, n_b_only : int
        The two discordant counts of the 2x2 table.
    engine : str
        What computed the p-value, as in :class:`PermutationTestResult` (``"dp"`` for few
        discordant entries, ``"grouped"`` otherwise).
    null_distribution : Distribution
        Null distribution of the statistic, ``Binomial(n_a_only + n_b_only, 1/2)``, recomputed
        on first access; :meth:`plot` draws it.

    Examples
    --------
    >>> import pairperm
    >>> r = pairperm.mcnemar_test([1, 1, 1, 0, 1], [0, 0, 1, 1, 1])
    >>> print(r.n_a_only, r.n_b_only, f"{r.pvalue:.6g}", r.difference)
    2 1 1 0.2
    """

    _drawn_as = ("n_a_only", "n_a_only (discordant entries that A gets right)", "k")

    statistic: int
    pvalue: float
    log_pvalue: float
    alternative: str
    n_a_only: int
    n_b_only: int
    engine: str = ""
    difference: Optional[float] = None
    _effect: Any = field(default=None, compare=False)
    _null: Any = field(default=None, compare=False)

    _shown: ClassVar[tuple[str, ...]] = ("statistic", "difference", "pvalue", "log_pvalue", "alternative", "n_a_only", "n_b_only")


@dataclass(frozen=True, repr=False)
class SignTestResult(_Result):
    """Result of :func:`pairperm.sign_test`.

    Attributes
    ----------
    statistic : int
        Number of entries with ``x > y`` (``n_positive``).
    difference : float
        The median of the differences ``x - y`` over all N entries: the shift the sign test
        is about. Its interval (:meth:`confidence_interval`) inverts the sign test: order
        statistics of the differences (the distribution-free interval for a median).
    pvalue, log_pvalue : float
    alternative : str
    n_positive, n_negative, n_zero : int
        Entries with ``x > y``, ``x < y`` and ``x == y`` (zeros carry no information).

    Examples
    --------
    >>> import pairperm
    >>> r = pairperm.sign_test([3.1, 4.0, 5.2, 6.3, 2.2], [1.0, 1.5, 1.2, 6.3, 2.0])
    >>> print(r.n_positive, r.n_negative, r.n_zero, f"{r.pvalue:.6g}")
    4 0 1 0.125
    """

    statistic: int
    pvalue: float
    log_pvalue: float
    alternative: str
    n_positive: int
    n_negative: int
    n_zero: int
    difference: Optional[float] = None
    _effect: Any = field(default=None, compare=False)

    _shown: ClassVar[tuple[str, ...]] = (
        "statistic", "difference", "pvalue", "log_pvalue", "alternative", "n_positive", "n_negative", "n_zero",
    )


@dataclass(frozen=True, repr=False)
class WilcoxonResult(_Result):
    """Result of :func:`pairperm.wilcoxon_test`.

    Attributes
    ----------
    statistic : float
        As in ``scipy.stats.wilcoxon``: ``min(r_plus, r_minus)`` for two-sided,
        ``r_plus`` otherwise (midranks, so possibly a half-integer).
    pvalue, log_pvalue : float
    alternative, method, zero_method : str
        ``method`` is what ran: ``"exact"``, ``"fourier"`` (the exact tail by band-limited
        Fourier inversion, with a certified error bound), ``"normal"`` (normal
        approximation with a continuity correction and the tie correction) or ``"monte_carlo"``.
    r_plus, r_minus : float
        Rank sums of the positive and negative differences ("zsplit" adds half of the
        zeros' ranks to each).
    pvalue_error : float or None
        ``"fourier"`` and ``"normal"`` only: a bound on the absolute error of ``pvalue``.
    difference : float
        The Hodges-Lehmann estimate of the shift of ``x - y``: the median of the Walsh
        averages ``(d_i + d_j) / 2``, i <= j, over all N differences. Its interval
        (:meth:`confidence_interval`) inverts the signed-rank test: order statistics of the
        Walsh averages, as R's ``wilcox.test(conf.int = TRUE)``.
    n_resamples, hits, pvalue_ci :
        Monte Carlo only.

    Examples
    --------
    >>> import pairperm
    >>> r = pairperm.wilcoxon_test([1.5, -0.5, 2.0, 3.5, 1.0])
    >>> print(r.r_plus, r.r_minus, r.statistic, r.method, f"{r.pvalue:.6g}")
    14.0 1.0 1.0 exact 0.125
    """

    statistic: float
    pvalue: float
    log_pvalue: float
    alternative: str
    method: str
    zero_method: str
    r_plus: float
    r_minus: float
    pvalue_error: Optional[float] = None
    n_resamples: Optional[int] = None
    hits: Optional[int] = None
    pvalue_ci: Optional[tuple[float, float]] = None
    difference: Optional[float] = None
    _effect: Any = field(default=None, compare=False)

    _shown: ClassVar[tuple[str, ...]] = (
        "statistic", "difference", "pvalue", "log_pvalue", "alternative", "method", "zero_method", "r_plus", "r_minus",
        "pvalue_error", "n_resamples", "pvalue_ci",
    )


class BootstrapInterval(ConfidenceInterval):
    """The interval a bootstrap test reports at its own level, which is also callable like
    every result's ``confidence_interval(confidence_level, **options)``."""

    _result: Any

    def __call__(self, confidence_level: float = 0.95, **options: Any) -> ConfidenceInterval:
        return _Result.confidence_interval(self._result, confidence_level, **options)

    def __reduce__(self) -> Any:
        return (BootstrapInterval, (self.low, self.high))


@dataclass(frozen=True, repr=False)
class BootstrapTestResult(_Result):
    """Result of :func:`pairperm.bootstrap_test`.

    Attributes
    ----------
    statistic : float
        ``delta = metric(A) - metric(B)`` on the full data.
    pvalue : float
        ``(1 + hits) / (1 + n_resamples)``, hits counted by the rule of Berg-Kirkpatrick et
        al. (2012) with ties included (see :func:`pairperm.bootstrap_test`); 1.0 when
        ``delta == 0``.
    confidence_interval : ConfidenceInterval, callable
        Percentile interval of the resampled ``delta_i`` at ``confidence_level`` (two-sided
        whatever the alternative). Called, as every result's ``confidence_interval(...)``,
        it gives the paired bootstrap interval of :func:`pairperm.bootstrap_intervals` at
        another level, one-sided like the test, with options ``method`` ("percentile" or
        "bca") and ``n_resamples``, from fresh resamples seeded by the test's seed.
    difference : float
        ``delta`` again (``statistic``), as on every two-system result.
    metric_a, metric_b : float
        The metric of each system on the full data.
    metric, alternative : str
    n_resamples, hits : int
    confidence_level : float
    bootstrap_distribution : ndarray
        The resampled deltas (not printed, not in ``to_dict``).

    Examples
    --------
    >>> import pairperm
    >>> r = pairperm.bootstrap_test([0.71, 0.64, 0.88, 0.52, 0.90], [0.69, 0.61, 0.80, 0.55, 0.85],
    ...                             n_resamples=1000, rng=0)
    >>> lo, hi = r.confidence_interval
    >>> bool(lo <= r.statistic <= hi), r.confidence_level, r.bootstrap_distribution.shape
    (True, 0.95, (1000,))
    >>> "bootstrap_distribution" in r.to_dict()
    False
    >>> r.confidence_interval(0.9) == r.confidence_interval(0.9)      # seeded: repeatable
    True
    """

    statistic: float
    pvalue: float
    confidence_interval: tuple[float, float] = field()  # type: ignore[assignment]  # a Field, so that the inherited method is not taken as its default
    metric_a: float
    metric_b: float
    metric: str
    alternative: str
    n_resamples: int
    hits: int
    confidence_level: float
    bootstrap_distribution: np.ndarray = field(compare=False, repr=False)
    difference: Optional[float] = None
    _effect: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        interval = BootstrapInterval(*self.confidence_interval)
        interval._result = self
        object.__setattr__(self, "confidence_interval", interval)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # The interval's link back to its result is not pickled (a cycle): restore it.
        self.__dict__.update(state)
        self.__post_init__()

    _shown: ClassVar[tuple[str, ...]] = (
        "statistic", "difference", "pvalue", "confidence_interval", "metric_a", "metric_b", "metric", "alternative",
        "n_resamples",
    )

    @property
    def log_pvalue(self) -> float:
        return math.log(self.pvalue)


@dataclass(frozen=True, repr=False)
class CompareResult(_Result):
    """Result of :func:`pairperm.compare`: the p-value, which test produced it and why.

    Attributes
    ----------
    statistic, pvalue : float
        Copied from ``result``.
    difference : float or None
        Metric of A minus metric of B in ``metric``'s units: per entry for accuracy, exact
        match and the real-valued means (a mean difference), the summed scores for "sum",
        "uas", "las", the score difference for F1, precision, recall, macro-F1, BLEU and
        callables, the Hodges-Lehmann shift of ``x - y`` for perplexity. Its interval:
        :meth:`confidence_interval`.
    test : str
        Name of the pairperm function that was run.
    reason : str
    result : object
        The full result object of that test.

    Examples
    --------
    >>> import pairperm
    >>> c = pairperm.compare([12, 7, 30, 9, 15, 22], [11, 7, 27, 9, 13, 22], metric="sum")
    >>> print(c.test, f"{c.pvalue:.6g}", type(c.result).__name__)
    permutation_test 0.25 PermutationTestResult
    """

    statistic: Any
    pvalue: float
    test: str
    reason: str
    result: Any
    difference: Optional[float] = None
    _effect: Any = field(default=None, compare=False)

    _shown: ClassVar[tuple[str, ...]] = ("statistic", "difference", "pvalue", "test", "reason")

    def confidence_interval(self, confidence_level: float = 0.95, **options: Any) -> ConfidenceInterval:
        """Confidence interval for ``difference``, one-sided as the test that ran (for
        perplexity, where lower is better, "greater" bounds ``x - y`` from above); see
        :meth:`pairperm.PermutationTestResult.confidence_interval` for the kinds of interval."""
        if self._effect is None:
            raise ValueError(f"CompareResult.confidence_interval: {self._no_interval}")
        interval: ConfidenceInterval = self._effect.interval(confidence_level, self.result.alternative, **options)
        return interval
