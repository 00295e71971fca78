"""Confidence intervals of a run's mean over queries: exact binomial, BCa bootstrap, or Student t.

:func:`mean_interval` takes per-query values (one number per query) and returns an
:class:`Interval`. The method ``auto`` chooses by the values themselves:

- every value 0 or 1 (P@1, Success@k, RR where each query has one relevant document and it is found
  first or not at all): the mean is a proportion, and the exact Clopper-Pearson interval of the
  binomial is used;
- otherwise the BCa bootstrap (bias-corrected and accelerated; Efron and Tibshirani 1993, ch. 14),
  with the acceleration from the jackknife, seeded so that the same values give the same interval.

``t`` (the Student t interval, ``mean ± t(1 - (1 - level)/2, n - 1) · sd / sqrt(n)``) is there on
request. None of them needs scipy: the normal and beta quantiles are found here by bisection of
their distribution functions, and the t quantile is :mod:`.stats`'s (scipy's when it is installed).

>>> iv = mean_interval([1, 0, 1, 1, 0, 1, 1, 1, 0, 1])
>>> iv.method, round(iv.low, 4), round(iv.high, 4)
('exact', 0.3475, 0.9333)
>>> iv = mean_interval([0.2, 0.5, 0.1, 0.7, 0.4, 0.9, 0.3], seed=1)
>>> iv.method, iv.low < 0.4429 < iv.high
('bca', True)

Degenerate inputs: no value gives [0, 0] (the mean of no query is 0, as ``evaluate`` prints it);
one value, or values all equal, give [v, v] with the bootstrap and t methods (no spread to
measure), while the exact interval of a proportion stays wide (one query answered right says
little).

References
----------
.. [1] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits illustrated in
   the case of the binomial", Biometrika 26(4), 1934.
.. [2] B. Efron, "Better bootstrap confidence intervals", JASA 82(397), 1987; B. Efron and
   R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993, ch. 14.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np
from attrs import frozen

from ..model import FloatArray, RetrievalEvalError
from .stats import (
    _as_vector,
    _beta_regularized,
    _is_constant,
    _sample_sd,
    _t_critical,
    check_parameters,
    resampled_means,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..evaluators.query import MeasureLike
    from ..evaluators.results import SetResults

__all__ = ["METHODS", "Interval", "clopper_pearson", "has_interval", "interval", "is_binary", "mean_interval"]

#: Names accepted by :func:`mean_interval` (and ``evaluate --ci-method``).
METHODS = ("auto", "bca", "t", "exact")

#: Bootstrap resamples by default: enough for the 2.5% and 97.5% quantiles to be stable to about
#: a hundredth of the interval's width (Efron and Tibshirani 1993, ch. 19, suggest 1000 or more).
DEFAULT_RESAMPLES = 2000


@frozen
class Interval:
    """A confidence interval of a mean: ``low <= mean <= high``, by ``method`` at confidence ``level``.

    ``method`` is the one used ("exact", "bca" or "t"), never "auto". The interval always holds the
    mean: a BCa bound beyond it (possible with a strong bias correction at a low level) is moved to it.
    """

    low: float
    high: float
    method: str
    level: float

    def to_dict(self) -> dict[str, float | str]:
        """``{"low", "high", "method", "level"}``: the ``ci`` object of ``evaluate --ci --format json``."""
        return {"low": self.low, "high": self.high, "method": self.method, "level": self.level}


def is_binary(values: npt.ArrayLike) -> bool:
    """Whether every value is exactly 0 or 1 (and there is at least one): a proportion's values.

    >>> is_binary([0.0, 1.0, 1.0]), is_binary([0.0, 0.5]), is_binary([])
    (True, False, False)
    """
    array = np.asarray(values, dtype=np.float64)
    return bool(array.size) and bool(((array == 0.0) | (array == 1.0)).all())


def mean_interval(
    values: npt.ArrayLike, *, method: str = "auto", level: float = 0.95, resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
) -> Interval:
    """The ``level`` confidence interval of the mean of ``values`` (one finite number per query).

    Parameters
    ----------
    values : array_like, shape (n_queries,)
    method : {"auto", "bca", "t", "exact"}, default "auto"
        ``auto``: ``exact`` when every value is 0 or 1, else ``bca``. ``exact``: Clopper-Pearson for
        values that are all 0 or 1 (anything else is refused: it is not a proportion). ``bca``: the
        BCa bootstrap. ``t``: Student's t.
    level : float, default 0.95
        The coverage, strictly between 0 and 1.
    resamples : int, default 2000
        Bootstrap resamples (``bca`` only), 1 to :data:`~retrieval_eval.analysis.stats.MAX_SAMPLES`.
    seed : int or None, default 0
        Seed of ``numpy.random.default_rng`` for the bootstrap: a fixed default, so that the same
        values give the same interval every time; None draws a fresh one.

    Notes
    -----
    The bootstrap draws ``rng.integers(0, n, size=(resamples, n))`` (in batches of rows, which
    draw the same numbers), the resamples that ``scipy.stats.bootstrap(..., method="BCa",
    rng=numpy.random.default_rng(seed))`` draws, so that the two give the same interval. With
    ``p`` the share of resampled means below the mean (ties counting half), ``z0 = Φ⁻¹(p)``; the
    acceleration ``a = Σ u³ / (6 (Σ u²)^1.5)`` with ``u_i`` the jackknife means' deviations from
    their mean; the bounds are the resampled means' quantiles at
    ``Φ(z0 + (z0 + z) / (1 - a (z0 + z)))`` for ``z = ±Φ⁻¹((1 + level) / 2)``.

    Examples
    --------
    >>> mean_interval([0.2, 0.4, 0.6], method="t").to_dict()["method"]
    't'
    >>> iv = mean_interval([0.2, 0.4, 0.6], method="t")
    >>> round(iv.low, 4), round(iv.high, 4)
    (-0.0968, 0.8968)
    """
    if method not in METHODS:
        raise RetrievalEvalError(f"unknown interval method {method!r}; choose one of {', '.join(METHODS)}.")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise RetrievalEvalError(f"'level' must lie strictly between 0 and 1; got {level!r}.")
    check_parameters(samples=resamples, seed=seed)
    x = _as_vector(values, "values")
    binary = is_binary(x)
    if method == "exact" and x.size and not binary:
        shown = x[(x != 0.0) & (x != 1.0)][0]
        raise RetrievalEvalError(f"the exact interval is for values that are all 0 or 1 (a proportion); got {shown!r}.")
    chosen = ("exact" if binary else "bca") if method == "auto" else method
    if x.size == 0:
        return Interval(0.0, 0.0, chosen, level)
    mean = float(x.mean())
    if chosen == "exact":
        low, high = clopper_pearson(int(np.count_nonzero(x)), x.size, level)
    elif x.size < 2 or _is_constant(x):
        low, high = mean, mean  # no spread: every resample, and the t interval, is the mean itself
    elif chosen == "t":
        half = _t_critical(1.0 - level, x.size - 1) * _sample_sd(x) / math.sqrt(x.size)
        low, high = mean - half, mean + half
    else:
        low, high = _bca(x, level, resamples, np.random.default_rng(seed))
    # An interval of the mean that leaves the mean out would confuse every reader; a bound beyond it
    # (rounding among equal resampled means, or a strong bias correction at a low level) moves to it.
    return Interval(min(low, mean), max(high, mean), chosen, level)


def interval(results: SetResults, measure: MeasureLike, **options: object) -> Interval:
    """:func:`mean_interval` of ``measure``'s per-query values in ``results`` (a SetEvaluator).

    Only for measures whose summary is the arithmetic mean (as :meth:`SetResults.mean`); the options
    are :func:`mean_interval`'s.

    >>> from retrieval_eval import SetEvaluator
    >>> runs = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}})
    >>> iv = interval(runs, "P@1")
    >>> iv.method, round(iv.low, 4), round(iv.high, 4)
    ('exact', 0.0126, 0.9874)
    """
    from ..evaluators.blocks import check_arithmetic_mean
    from ..measures import parse

    parsed = parse(measure, rel=results.rel)
    check_arithmetic_mean(measure, parsed)
    return mean_interval(results.array(parsed), **options)  # type: ignore[arg-type]


def has_interval(measure: object) -> bool:
    """Whether a parsed measure's summary is an arithmetic mean of numbers, and so has an interval."""
    definition = getattr(measure, "definition", None)
    return definition is not None and definition.aggregate == "mean" and not definition.text


def clopper_pearson(successes: int, n: int, level: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial proportion, ``successes`` out of ``n >= 1``:
    the ``(1 - level)/2`` quantile of Beta(k, n - k + 1) and the ``(1 + level)/2`` quantile of
    Beta(k + 1, n - k); 0 and 1 at the ends.

    >>> [round(v, 4) for v in clopper_pearson(3, 10, 0.95)]
    [0.0667, 0.6525]
    """
    tail = (1.0 - level) / 2.0
    low = 0.0 if successes == 0 else beta_quantile(tail, successes, n - successes + 1)
    high = 1.0 if successes == n else beta_quantile(1.0 - tail, successes + 1, n - successes)
    return low, high


def beta_quantile(p: float, a: int, b: int) -> float:
    """The ``p`` quantile of Beta(a, b) for integers a, b >= 1: ``x`` with ``I_x(a, b) = p``, by bisection
    (``I_x`` rises with x) to the last bit.

    >>> round(beta_quantile(0.5, 1, 1), 12), round(beta_quantile(0.25, 2, 1), 12)
    (0.5, 0.5)
    """
    # ln(1 / B(a, b)) = ln Γ(a + b) - ln Γ(a) - ln Γ(b), exact for integers through binomial coefficients.
    log_front = math.log(a + b - 1) + math.log(math.comb(a + b - 2, a - 1))
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if middle in (low, high):
            break
        if _beta_regularized(a, b, middle, 1.0 - middle, log_front) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def normal_cdf(z: float) -> float:
    """Φ(z), the standard normal distribution function (through ``erfc``: accurate in both tails)."""
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def normal_quantile(p: float) -> float:
    """Φ⁻¹(p) for p in [0, 1] (±inf at the ends): the standard library's (Wichura's AS241, full precision).

    >>> round(normal_quantile(0.975), 6), abs(normal_quantile(0.5)) < 1e-15
    (1.959964, True)
    """
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return NormalDist().inv_cdf(p)


def _bca(x: FloatArray, level: float, resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    """The BCa interval of mean(x): see :func:`mean_interval`'s notes."""
    n = x.size
    mean = float(x.mean())
    means = resampled_means(x, resamples, rng)  # int64 indices: the resamples scipy.stats.bootstrap draws
    # The share of resampled means below the mean, ties counting half (as scipy counts them).
    below = (np.count_nonzero(means < mean) + np.count_nonzero(means <= mean)) / (2.0 * resamples)
    z0 = normal_quantile(below)
    # The jackknife means (each query left out in turn), in one step: (sum - x_i) / (n - 1).
    jackknife = (float(x.sum()) - x) / (n - 1)
    u = jackknife.mean() - jackknife
    # The ratio is scale-free: dividing u by its largest magnitude first keeps spread**1.5 from
    # underflowing to 0 when the values differ only in far decimals (1e-159 apart, say).
    largest = float(np.abs(u).max()) if n else 0.0
    if largest > 0.0:
        u = u / largest
    spread = float((u**2).sum())
    acceleration = float((u**3).sum()) / (6.0 * spread**1.5) if spread > 0.0 else 0.0
    z = normal_quantile((1.0 + level) / 2.0)
    shares = []
    for bound in (-z, z):
        if math.isinf(z0):  # every resample on one side of the mean: the interval's end is the extreme resample
            shares.append(0.0 if z0 < 0 else 1.0)
            continue
        shifted = z0 + bound
        shares.append(normal_cdf(z0 + shifted / (1.0 - acceleration * shifted)))
    low, high = np.quantile(means, shares)
    return float(low), float(high)
