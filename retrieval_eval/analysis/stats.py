"""Statistics for comparing runs: paired significance tests, corrections, effect sizes and intervals.

The input is always per-query values of runs over the *same* queries, in the same order (one number
per query, e.g. AP). Nothing here reads files; :func:`paired_test` compares two runs,
:func:`tukey_hsd` compares many at once and :func:`adjust` corrects a family of p-values;
:mod:`retrieval_eval.comparison` puts them together for runs read from files.

>>> from retrieval_eval.analysis.stats import paired_test
>>> baseline = [0.20, 0.35, 0.10, 0.50, 0.40, 0.30]
>>> run = [0.25, 0.45, 0.10, 0.55, 0.60, 0.28]
>>> result = paired_test(baseline, run, "permutation")
>>> round(result.delta, 4), round(result.p_value, 4), (result.wins, result.ties, result.losses)
(0.0633, 0.125, (4, 1, 1))

With 6 queries there are only 2**6 = 64 sign patterns, so the permutation test enumerated them all
and its p-value (8/64) is exact.

Degenerate inputs
-----------------
Every output is a finite number; no case returns NaN or infinity, and none warns. ``d`` are the
differences ``run - baseline`` and ``n`` their number.

================================  ======  ==================================  ===========  =========
case                              delta   p_value                             effect_size  CI
================================  ======  ==================================  ===========  =========
n = 0                             0       1 (every test)                      0            [0, 0]
n = 1                             d       1 (every test: one query cannot     0            [d, d]
                                          tell a difference from noise)
all d = 0 (e.g. identical runs)   0       1 (every test)                      0            [0, 0]
all d = c != 0, n >= 2            c       t: 0 (the limit of t as its         0            [c, c]
                                          spread goes to 0); bootstrap:
                                          1/(B+1); the others as usual
================================  ======  ==================================  ===========  =========

"All d = c" means constant up to rounding: the largest ``|d - mean(d)|`` is at most 1e-12 times the
largest ``|d|`` (``run = baseline + 0.1`` computed in floating point is constant, although its
differences are not bit-identical). The effect size of a constant difference is mean / 0; it is
set to 0.0, the package's rule for a zero denominator, rather than to a made-up large number: an
effect size is a shift measured in units of its own variability, and there is none to measure.
The direction and certainty of such a shift are in ``delta``, ``wins``/``losses`` and ``p_value``.

Monte Carlo tests (permutation, bootstrap, tukey) draw from ``numpy.random.default_rng(seed)`` in
batches whose size depends only on the input size, so one seed gives identical results on every
machine and thread count. A seed is None or an integer >= 0. Their sizes are bounded:
``permutations`` and ``samples`` are at most :data:`MAX_PERMUTATIONS` and :data:`MAX_SAMPLES`
(1,000,000 each, a hundred times the default), so that memory (8 bytes a draw) and time (a few
operations per draw and query) stay bounded; more is refused up front. The permutation test
enumerates the 2**n sign patterns only when that is no more than ``permutations``, so the exact
test never costs more than the sampled one would (at most 2**19 patterns, for up to 19 queries). A permuted (or resampled) statistic counts as "at least as extreme" as
the observed one when it is at least ``observed - 1e-9 * scale``, where ``scale`` bounds the
statistic (the sum of ``|d|``, the largest ``|d|``, the largest ``|value|``): values that are equal
mathematically but were summed in another order must count as ties.

References
----------
.. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993,
   ch. 15 (permutation tests) and 16 (hypothesis testing with the bootstrap).
.. [2] M. D. Smucker, J. Allan and B. Carterette, "A comparison of statistical significance tests
   for information retrieval evaluation", CIKM 2007.
.. [3] B. Carterette, "Multiple testing in statistical analysis of systems-based information
   retrieval experiments", ACM TOIS 30(1), 2012.
.. [4] T. Sakai, "Evaluating evaluation metrics based on the bootstrap", SIGIR 2006; and
   "Statistical reform in information retrieval?", SIGIR Forum 48(1), 2014.
"""

from __future__ import annotations

import importlib
import math
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
from attrs import evolve, frozen

from ..model import FloatArray, MissingExtraError, RetrievalEvalError

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

__all__ = ["CORRECTIONS", "MAX_PERMUTATIONS", "MAX_SAMPLES", "SCIPY_TESTS", "TESTS", "PairedResult", "adjust", "paired_test",
           "tukey_hsd"]

#: Names accepted by :func:`paired_test` (and ``compare --test``).
TESTS = ("t", "wilcoxon", "sign", "permutation", "bootstrap", "tukey")

#: Names accepted by :func:`adjust` (and ``compare --correction``).
CORRECTIONS = ("none", "bonferroni", "holm", "bh")

_NO_SCIPY = ("scipy is needed for the t, Wilcoxon and sign tests (the permutation, bootstrap and tukey tests need "
             "none): pip install 'retrieval-evaluator[stats]'")

#: The tests whose p-values come from scipy's distributions; the others are NumPy Monte Carlo.
SCIPY_TESTS = ("t", "wilcoxon", "sign")

#: The most permutations (permutation and Tukey tests) and resamples (bootstrap) accepted: memory
#: takes 8 bytes a draw, time some operations per draw and query; far more than a p-value needs.
MAX_PERMUTATIONS = 1_000_000
MAX_SAMPLES = 1_000_000

#: Permuted or resampled statistics within this fraction of the statistic's scale of the observed one tie with it.
_RTOL = 1e-9

#: Differences whose spread is within this fraction of their magnitude are constant (rounding noise).
_CONSTANT_RTOL = 1e-12

#: Elements per Monte Carlo batch (a (batch, n) matrix of 2 MB as float64): small enough to stay in
#: cache, large enough that the per-batch Python overhead is negligible.
_BATCH = 2**18


@frozen
class PairedResult:
    """The comparison of a run with a baseline over the same queries.

    Attributes
    ----------
    delta : float
        Mean of ``run - baseline``.
    p_value : float
        Two-sided p-value of the test, in [0, 1].
    effect_size : float
        Paired Cohen's d_z: ``mean(d) / std(d, ddof=1)``; 0.0 when that is undefined (fewer than two
        queries, or constant differences; see the module notes).
    ci_low, ci_high : float
        The (1 - alpha) confidence interval of ``delta``: percentile bootstrap for the bootstrap
        test, Student t (``delta ± t(1 - alpha/2, n - 1) · std / sqrt(n)``) for every other test.
    wins, ties, losses : int
        Number of queries where run > baseline, run == baseline and run < baseline.
    """

    delta: float
    p_value: float
    effect_size: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int


def paired_test(
    baseline: npt.ArrayLike,
    run: npt.ArrayLike,
    test: str,
    *,
    permutations: int = 10_000,
    samples: int = 10_000,
    seed: int | None = None,
    alpha: float = 0.05,
) -> PairedResult:
    """Two-sided paired significance test of ``run`` against ``baseline``.

    Parameters
    ----------
    baseline, run : array_like, shape (n_queries,)
        Finite per-query values of the two runs, query i at position i in both.
    test : {"t", "wilcoxon", "sign", "permutation", "bootstrap", "tukey"}
        - ``t``: paired Student t-test, ``scipy.stats.ttest_rel(run, baseline)``.
        - ``wilcoxon``: signed-rank test, ``scipy.stats.wilcoxon(run, baseline)`` with scipy's
          defaults (zero differences dropped).
        - ``sign``: ties dropped, ``scipy.stats.binomtest(wins, wins + losses, 0.5)``.
        - ``permutation``: paired randomisation test (Fisher; Smucker et al. 2007). Under the null
          hypothesis the two values of a query are exchangeable, so each difference keeps or flips
          its sign at random. Statistic ``|mean(d)|``; p = (b + 1) / (B + 1), where b of the B random
          sign patterns give a statistic at least the observed one. When 2**n <= ``permutations``
          all 2**n patterns are enumerated instead and p is the exact fraction (identity included):
          never more work than B random patterns.
        - ``bootstrap``: paired bootstrap test of the mean difference by the shift method (Efron &
          Tibshirani 1993, ch. 16, the one-sample problem; Sakai 2006, 2014 for IR). The differences are
          resampled with replacement ``samples`` times; under the null hypothesis they are shifted
          to mean 0, so p = (#{|mean(d*) - mean(d)| >= |mean(d)|} + 1) / (B + 1). The same resamples,
          unshifted, give the percentile confidence interval.
        - ``tukey``: randomised Tukey HSD (:func:`tukey_hsd`) on these two runs, which for two runs
          is a Monte Carlo version of the permutation test.
    permutations : int, default 10000
        Random sign patterns (``permutation``) or permutations (``tukey``), 1 to
        :data:`MAX_PERMUTATIONS`.
    samples : int, default 10000
        Bootstrap resamples (``bootstrap``), 1 to :data:`MAX_SAMPLES`.
    seed : int or None
        Seed of ``numpy.random.default_rng``, an integer >= 0; the same seed gives identical results.
    alpha : float, default 0.05
        The confidence interval has coverage 1 - alpha.

    Returns
    -------
    PairedResult

    Raises
    ------
    RetrievalEvalError
        (a ValueError) for an unknown test, arrays of different shapes, non-finite values, or an
        out-of-range parameter.
    ImportError
        When scipy is missing; every test except ``bootstrap`` needs it.

    Notes
    -----
    Degenerate inputs (no query, one query, constant differences) are described in the module
    notes.

    References
    ----------
    B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 15-16.
    M. D. Smucker, J. Allan and B. Carterette, CIKM 2007.
    T. Sakai, SIGIR 2006; SIGIR Forum 48(1), 2014.

    Examples
    --------
    >>> r = paired_test([0.2, 0.4, 0.1, 0.5], [0.3, 0.5, 0.1, 0.7], "t")
    >>> round(r.delta, 3), round(r.p_value, 4), round(r.effect_size, 3), (r.wins, r.ties, r.losses)
    (0.1, 0.0917, 1.225, (3, 1, 0))
    >>> paired_test([0.2, 0.4], [0.2, 0.4], "wilcoxon").p_value
    1.0
    """
    _check_choice("test", test, TESTS)
    check_parameters(permutations=permutations, samples=samples, alpha=alpha, seed=seed)
    b, r = _as_vector(baseline, "baseline"), _as_vector(run, "run")
    if b.shape != r.shape:
        raise RetrievalEvalError(
            f"'baseline' and 'run' must have one value per query each; got {b.size} and {r.size} values."
        )
    d = r - b
    require_scipy(test)  # fail early and always, not only when the differences call for the test
    result = _describe(d, alpha, t_interval=test != "bootstrap")
    if d.size < 2 or not d.any():
        return result  # p = 1: see the module notes
    rng = np.random.default_rng(seed)
    if test == "t":
        # (ttest_rel(r, b) is ttest_1samp(r - b, 0); on d scaled, so that tiny differences keep their spread)
        p = 0.0 if _is_constant(d) else float(_scipy_stats().ttest_1samp(d / _binary_scale(d), 0.0).pvalue)
    elif test == "wilcoxon":
        p = float(_scipy_stats().wilcoxon(r, b).pvalue)
    elif test == "sign":
        p = float(_scipy_stats().binomtest(result.wins, result.wins + result.losses, 0.5).pvalue)
    elif test == "permutation":
        p = _permutation_p(d, permutations, rng)
    elif test == "tukey":
        p = float(tukey_hsd(np.stack((b, r)), permutations=permutations, seed=seed)[0, 1])
    else:
        p, low, high = _bootstrap(d, samples, rng, alpha)
        result = evolve(result, ci_low=low, ci_high=high)
    return evolve(result, p_value=min(max(p, 0.0), 1.0))


def tukey_hsd(values: npt.ArrayLike, *, permutations: int = 10_000, seed: int | None = None) -> FloatArray:
    """Randomised Tukey HSD p-values of every pair of runs, already corrected for multiple comparisons.

    Under the null hypothesis that all runs are equivalent, the runs' values of a query are
    exchangeable. Each of the ``permutations`` trials shuffles every query's values among the runs
    independently and records the range (max - min) of the runs' means. The p-value of pair (i, j)
    is (#{range >= |mean_i - mean_j|} + 1) / (B + 1). Comparing every pair with the distribution of
    the *largest* difference controls the family-wise error rate over all pairs, so the p-values
    must not be corrected again.

    Parameters
    ----------
    values : array_like, shape (n_runs, n_queries)
        Finite per-query values; row i is run i, column j is query j in every run.
    permutations : int, default 10000
        Number of random trials B, at most :data:`MAX_PERMUTATIONS`.
    seed : int or None
        Seed of ``numpy.random.default_rng``, an integer >= 0; the same seed gives identical results.

    Returns
    -------
    ndarray, shape (n_runs, n_runs)
        Symmetric p-values in (0, 1], with 1.0 on the diagonal. All ones when there are fewer than
        two runs or no query.

    References
    ----------
    B. Carterette, "Multiple testing in statistical analysis of systems-based information retrieval
    experiments", ACM TOIS 30(1), 2012. T. Sakai, *Laboratory Experiments in Information Retrieval*,
    Springer, 2018.

    Examples
    --------
    >>> p = tukey_hsd([[0.2, 0.4, 0.3, 0.5], [0.3, 0.5, 0.4, 0.6], [0.2, 0.4, 0.3, 0.5]], seed=1)
    >>> p.shape, float(p[0, 2]), bool(p[0, 1] < 0.5)
    ((3, 3), 1.0, True)
    """
    check_parameters(permutations=permutations, seed=seed)
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2:
        raise RetrievalEvalError(f"'values' must be a 2-D array (n_runs, n_queries); got shape {matrix.shape}.")
    _check_finite(matrix, "values")
    n_runs, n_queries = matrix.shape
    if n_runs < 2 or n_queries == 0:
        return np.ones((n_runs, n_runs))
    means = matrix.mean(axis=1)
    observed = np.abs(means[:, None] - means[None, :])
    by_query = np.ascontiguousarray(matrix.T)  # (n_queries, n_runs): shuffle along the last axis
    rng = np.random.default_rng(seed)
    ranges = np.empty(permutations)
    batch = max(1, _BATCH // by_query.size)
    for start in range(0, permutations, batch):
        size = min(batch, permutations - start)
        shuffled = rng.permuted(np.broadcast_to(by_query, (size, *by_query.shape)), axis=2)
        trial_means = shuffled.mean(axis=1)  # (size, n_runs)
        ranges[start : start + size] = trial_means.max(axis=1) - trial_means.min(axis=1)
    threshold = observed - _RTOL * float(np.abs(matrix).max())
    at_least = permutations - np.searchsorted(np.sort(ranges), threshold, side="left")
    p: FloatArray = (at_least + 1.0) / (permutations + 1.0)
    return p


def adjust(p_values: npt.ArrayLike, method: str) -> FloatArray:
    """Correct a family of p-values for multiple comparisons.

    Parameters
    ----------
    p_values : array_like, shape (m,)
        The p-values, each in [0, 1].
    method : {"none", "bonferroni", "holm", "bh"}
        ``none`` returns a copy; ``bonferroni`` multiplies by m; ``holm`` is Holm's step-down
        method and ``bh`` the Benjamini-Hochberg step-up method, which controls the false
        discovery rate rather than the family-wise error rate. All are capped at 1 and equal
        ``statsmodels.stats.multitest.multipletests(p, method=...)[1]`` with ``bonferroni``,
        ``holm`` and ``fdr_bh``.

    Returns
    -------
    ndarray, shape (m,)
        Adjusted p-values, in the input's order.

    References
    ----------
    S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6, 1979.
    Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate", JRSS B 57(1), 1995.

    Examples
    --------
    >>> adjust([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust([0.01, 0.04, 0.03], "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
    """
    _check_choice("method", method, CORRECTIONS)
    p = np.array(p_values, dtype=np.float64)  # a copy: the input is never modified
    if p.ndim != 1:
        raise RetrievalEvalError(f"'p_values' must be a 1-D array; got shape {p.shape}.")
    if not ((p >= 0.0) & (p <= 1.0)).all():
        raise RetrievalEvalError(f"'p_values' must lie in [0, 1]; got {p[~((p >= 0.0) & (p <= 1.0))][0]!r}.")
    m = p.size
    if method == "none" or m == 0:
        return p
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":  # the i-th smallest p (from 0) times m - i, never below an earlier one
        adjusted = np.maximum.accumulate(ranked * np.arange(m, 0, -1))
    else:  # bh: the i-th smallest p (from 1) times m / i, never above a later one
        adjusted = np.minimum.accumulate((ranked / (np.arange(1, m + 1) / m))[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def _describe(d: FloatArray, alpha: float, *, t_interval: bool) -> PairedResult:
    """Everything but the test: delta, d_z, the t interval (if asked) and the counts; p_value = 1."""
    n = d.size
    wins, losses = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
    delta = float(d.mean()) if n else 0.0
    effect, low, high = 0.0, delta, delta
    if n >= 2 and not _is_constant(d):
        sd = _sample_sd(d)
        effect = delta / sd
        if t_interval:
            half = _t_critical(alpha, n - 1) * sd / math.sqrt(n)
            low, high = delta - half, delta + half
    return PairedResult(delta, 1.0, effect, low, high, wins, n - wins - losses, losses)


def _permutation_p(d: FloatArray, permutations: int, rng: np.random.Generator) -> float:
    """Two-sided sign-flip test of mean(d) = 0: exact over all 2**n patterns when 2**n <= permutations."""
    n = d.size
    total = float(d.sum())
    threshold = abs(total) - _RTOL * float(np.abs(d).sum())  # sums, not means: the same test
    exact = n < 64 and 2**n <= permutations  # bounded by MAX_PERMUTATIONS: at most 2**19 patterns
    draws = 2**n if exact else permutations
    batch = max(1, _BATCH // n)
    at_least = 0
    for start in range(0, draws, batch):
        size = min(batch, draws - start)
        if exact:  # row i flips the queries whose bit is set in start + i; row 0 is the identity
            codes = np.arange(start, start + size, dtype=np.int64)[:, None]
            flips = ((codes >> np.arange(n, dtype=np.int64)) & 1).astype(np.uint8)
        else:  # one random bit per query, 8 queries per random byte
            raw = rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
            flips = np.unpackbits(raw, axis=1, count=n)
        # Flipping the signs of the queries in `flips` turns sum(d) into sum(d) - 2 * flips @ d.
        statistics = np.abs(total - 2.0 * (flips @ d))
        at_least += int(np.count_nonzero(statistics >= threshold))
    return at_least / draws if exact else (at_least + 1) / (permutations + 1)


def resampled_means(x: FloatArray, count: int, rng: np.random.Generator, index_type: type = np.int64) -> FloatArray:
    """The means of ``count`` bootstrap resamples of ``x``, drawn as ``rng.integers(0, n, size=(count, n),
    dtype=index_type)`` would draw them, in batches of rows (the same numbers) so that memory stays
    bounded. The index type changes the draws: int64 is scipy's, int32 the paired bootstrap test's."""
    n = x.size
    means = np.empty(count)
    batch = max(1, _BATCH // n)
    for start in range(0, count, batch):
        size = min(batch, count - start)
        means[start : start + size] = x[rng.integers(0, n, size=(size, n), dtype=index_type)].mean(axis=1)
    return means


def _bootstrap(d: FloatArray, samples: int, rng: np.random.Generator, alpha: float) -> tuple[float, float, float]:
    """Shift-method bootstrap p-value and percentile interval of mean(d), from the same resamples."""
    mean = float(d.mean())
    means = resampled_means(d, samples, rng, np.int32)
    # Resampling d - mean(d) gives the resampled means minus mean(d): the null distribution.
    threshold = abs(mean) - _RTOL * float(np.abs(d).max())
    at_least = int(np.count_nonzero(np.abs(means - mean) >= threshold))
    low, high = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    return (at_least + 1) / (samples + 1), float(low), float(high)


def _binary_scale(d: FloatArray) -> float:
    """A power of two near max|d| (1.0 when d is all 0). Dividing by it is exact, so a statistic of
    ``d / scale`` is that of ``d`` to the bit, scaled; but differences of 1e-200, whose squares
    underflow to 0, keep their spread (their standard deviation would be 0)."""
    exponent = int(np.frexp(np.abs(d).max(initial=0.0))[1])
    return float(np.ldexp(1.0, min(exponent, 1023)))  # (2**1024 is past the largest float)


def _sample_sd(d: FloatArray) -> float:
    """The sample standard deviation of ``d`` (ddof 1), taken on ``d`` scaled by :func:`_binary_scale`:
    numpy's to the bit on ordinary values, and not 0 for differences of 1e-200 that are not constant."""
    scale = _binary_scale(d)
    return scale * float((d / scale).std(ddof=1))


def _is_constant(d: FloatArray) -> bool:
    """Whether the (non-empty) differences are all equal up to rounding; see the module notes."""
    return float(np.abs(d - d.mean()).max()) <= _CONSTANT_RTOL * float(np.abs(d).max())


def require_scipy(test: str) -> None:
    """Raise MissingExtraError (naming the ``stats`` extra) when ``test`` needs scipy and it is missing."""
    if test in SCIPY_TESTS:
        _scipy_stats()


def _t_critical(alpha: float, df: int) -> float:
    """The two-sided critical value of Student's t: ``c`` with ``P(|T| > c) = alpha``, ``df`` degrees of
    freedom (scipy's ``t.ppf(1 - alpha/2, df)``); computed here when scipy is missing, so that the
    permutation and Tukey tests' intervals need no scipy.

    >>> round(_t_critical(0.05, 10), 6), round(_t_critical(0.05, 1), 4)
    (2.228139, 12.7062)
    """
    try:
        return float(importlib.import_module("scipy.stats").t.ppf(1.0 - alpha / 2.0, df))
    except ImportError:
        pass
    log_front = _log_gamma_ratio(df)
    low, high = 0.0, 1.0
    while _t_two_tail(high, df, log_front) > alpha:  # P(|T| > c) falls as c grows
        low, high = high, high * 2.0
    while high - low > 4e-16 * high:  # bisection: some 60 steps
        middle = (low + high) / 2.0
        if middle in (low, high):
            break
        low, high = (middle, high) if _t_two_tail(middle, df, log_front) > alpha else (low, middle)
    return (low + high) / 2.0


def _t_two_tail(c: float, df: int, log_front: float) -> float:
    """``P(|T| > c)`` for Student's t with ``df`` degrees of freedom: ``I_x(df/2, 1/2)``, ``x = df / (df + c²)``
    (``log_front`` is :func:`_log_gamma_ratio` of ``df``)."""
    square = c * c
    return _beta_regularized(df / 2.0, 0.5, df / (df + square), square / (df + square), log_front)


def _log_gamma_ratio(df: int) -> float:
    """``ln(Γ((df+1)/2) / (Γ(df/2) Γ(1/2)))``, ``ln(1 / B(df/2, 1/2))``, exact to rounding for any ``df``:
    ``math.lgamma``'s difference would lose ten digits at ``df = 100,000`` to cancellation. By the
    recurrence ``Γ(z + 1) = z Γ(z)``, the ratio of ``df`` is that of 1 or 2 times ``(k + 1) / k`` for
    ``k = 1 or 2, ..., df - 2`` in steps of 2."""
    start = 1 if df % 2 else 2
    first = -math.log(math.pi) if start == 1 else math.log(0.5)  # 1 / (√π · √π), and (√π / 2) / √π
    return first + math.fsum(np.log1p(1.0 / np.arange(start, df, 2, dtype=np.float64)).tolist())


def _beta_regularized(a: float, b: float, x: float, y: float, log_front: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)``, with ``y = 1 - x`` given exactly and
    ``log_front = ln(1 / B(a, b))`` (a continued fraction, evaluated by the modified Lentz method:
    Numerical Recipes, 3rd ed., 6.4)."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    front = math.exp(log_front + a * math.log(x) + b * math.log(y))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, y) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def _scipy_stats() -> ModuleType:
    """scipy.stats, imported on first use so that the package does not depend on scipy."""
    try:
        return importlib.import_module("scipy.stats")
    except ImportError as error:
        raise MissingExtraError(_NO_SCIPY) from error


def _as_vector(values: npt.ArrayLike, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise RetrievalEvalError(f"'{name}' must be a 1-D array of per-query values; got shape {array.shape}.")
    _check_finite(array, name)
    return array


def _check_finite(array: FloatArray, name: str) -> None:
    if not np.isfinite(array).all():
        raise RetrievalEvalError(f"'{name}' must be finite; got {array[~np.isfinite(array)][0]!r}.")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise RetrievalEvalError(f"unknown {name} {value!r}; choose one of {', '.join(choices)}.")


def check_parameters(*, permutations: int = 1, samples: int = 1, alpha: float = 0.05, seed: object = None) -> None:
    """Raise RetrievalEvalError for a Monte Carlo size out of 1..its maximum, an ``alpha`` outside
    (0, 1) or a seed that is not None or an integer >= 0 (checked before any work starts)."""
    for name, count, most in (("permutations", permutations, MAX_PERMUTATIONS), ("samples", samples, MAX_SAMPLES)):
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise RetrievalEvalError(f"'{name}' must be a positive integer; got {count!r}.")
        if count > most:
            raise RetrievalEvalError(f"'{name}' must be a positive integer of at most {most:,} (memory and time "
                                     f"grow with it); got {count:,}.")
    if not 0.0 < alpha < 1.0:
        raise RetrievalEvalError(f"'alpha' must lie strictly between 0 and 1; got {alpha!r}.")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        shown = repr(seed) if len(repr(seed)) <= 100 else repr(seed)[:96] + "..."
        raise RetrievalEvalError(f"'seed' must be an integer >= 0 or None; got {shown}.")
