"""The statistics kernel against independent references: scipy, statsmodels and slow textbook loops."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.analysis import stats
from retrieval_eval.analysis.stats import (
    CORRECTIONS,
    TESTS,
    PairedResult,
    adjust,
    paired_test,
    tukey_hsd,
)
from retrieval_eval.model import RetrievalEvalError

sp = pytest.importorskip("scipy.stats")

PAIRED = TESTS  # paired_test accepts every test, "tukey" included
MONTE_CARLO = ("permutation", "bootstrap", "tukey")


def pair(n: int, seed: int, *, grid: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Two correlated runs over n queries; on a grid of step ``grid`` to force ties and zero differences."""
    rng = np.random.default_rng(seed)
    baseline = rng.random(n)
    run = np.clip(baseline + rng.normal(0.03, 0.15, n), 0.0, 1.0)
    if grid is not None:
        baseline, run = np.round(baseline / grid) * grid, np.round(run / grid) * grid
    return baseline, run


def assert_finite(result: PairedResult) -> None:
    values = (result.delta, result.p_value, result.effect_size, result.ci_low, result.ci_high)
    assert all(math.isfinite(v) for v in values), result
    assert 0.0 <= result.p_value <= 1.0


# Slow references ------------------------------------------------------------------------------------


def exact_sign_flip_p(d: np.ndarray) -> float:
    """Every one of the 2**n sign patterns, summed exactly by math.fsum."""
    observed = abs(math.fsum(d))
    tolerance = 1e-9 * math.fsum(abs(d))
    patterns = list(itertools.product((1.0, -1.0), repeat=len(d)))
    extreme = sum(abs(math.fsum(s * x for s, x in zip(signs, d))) >= observed - tolerance for signs in patterns)
    return extreme / len(patterns)


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default quantile method, Hyndman-Fan 7)."""
    h = (len(sorted_values) - 1) * q
    low = math.floor(h)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (h - low) * (sorted_values[high] - sorted_values[low])


def slow_bootstrap(d: np.ndarray, samples: int, seed: int, alpha: float) -> tuple[float, float, float]:
    """One resample at a time, with the same random draws as the kernel (one row of indices each)."""
    rng = np.random.default_rng(seed)
    n = len(d)
    mean = math.fsum(d) / n
    means = [math.fsum(d[i] for i in rng.integers(0, n, size=n, dtype=np.int32)) / n for _ in range(samples)]
    shifted = [m - mean for m in means]  # the means of the resampled d - mean(d)
    extreme = sum(abs(s) >= abs(mean) - 1e-9 * max(abs(d)) for s in shifted)
    ordered = sorted(means)
    return (extreme + 1) / (samples + 1), percentile(ordered, alpha / 2), percentile(ordered, 1 - alpha / 2)


def slow_tukey(values: np.ndarray, permutations: int, seed: int) -> np.ndarray:
    """One permutation and one query at a time, drawing each query's shuffle with rng.permutation."""
    rng = np.random.default_rng(seed)
    n_runs, n_queries = values.shape
    means = [math.fsum(row) / n_queries for row in values]
    ranges = []
    for _ in range(permutations):
        columns = [values[rng.permutation(n_runs), j] for j in range(n_queries)]
        trial = [math.fsum(column[i] for column in columns) / n_queries for i in range(n_runs)]
        ranges.append(max(trial) - min(trial))
    tolerance = 1e-9 * np.abs(values).max()
    p = np.empty((n_runs, n_runs))
    for i, j in itertools.product(range(n_runs), repeat=2):
        extreme = sum(r >= abs(means[i] - means[j]) - tolerance for r in ranges)
        p[i, j] = (extreme + 1) / (permutations + 1)
    return p


# scipy -----------------------------------------------------------------------------------------------


CASES = [
    pytest.param(*pair(30, 1), id="n30"),
    pytest.param(*pair(8, 2), id="n8"),
    pytest.param(*pair(60, 3, grid=0.1), id="n60-ties-and-zeros"),
    pytest.param(*pair(500, 4), id="n500"),
    pytest.param(np.array([0.1, 0.2]), np.array([0.3, 0.1]), id="n2"),
]


class TestAgainstScipy:
    @pytest.mark.parametrize(("baseline", "run"), CASES)
    def test_t(self, baseline: np.ndarray, run: np.ndarray) -> None:
        """p equals ttest_rel(run, baseline) and the interval its confidence_interval."""
        result = paired_test(baseline, run, "t")
        reference = sp.ttest_rel(run, baseline)
        interval = reference.confidence_interval(0.95)
        assert result.p_value == pytest.approx(reference.pvalue, abs=1e-9)
        assert (result.ci_low, result.ci_high) == pytest.approx((interval.low, interval.high), abs=1e-9)

    @pytest.mark.parametrize(("baseline", "run"), CASES)
    def test_wilcoxon(self, baseline: np.ndarray, run: np.ndarray) -> None:
        """p equals wilcoxon(run, baseline) with scipy's defaults."""
        assert paired_test(baseline, run, "wilcoxon").p_value == pytest.approx(sp.wilcoxon(run, baseline).pvalue, abs=1e-9)

    @pytest.mark.parametrize(("baseline", "run"), CASES)
    def test_sign(self, baseline: np.ndarray, run: np.ndarray) -> None:
        """Ties are dropped, then binomtest(wins, wins + losses, 0.5)."""
        wins, losses = int(np.sum(run > baseline)), int(np.sum(run < baseline))
        result = paired_test(baseline, run, "sign")
        assert (result.wins, result.losses, result.ties) == (wins, losses, len(run) - wins - losses)
        assert result.p_value == pytest.approx(sp.binomtest(wins, wins + losses, 0.5).pvalue, abs=1e-9)

    @pytest.mark.parametrize(("baseline", "run"), CASES)
    def test_effect_size_and_delta(self, baseline: np.ndarray, run: np.ndarray) -> None:
        """delta = mean(d), effect size = mean(d) / std(d, ddof=1): the same for every test."""
        d = run - baseline
        for test in PAIRED:
            result = paired_test(baseline, run, test, permutations=200, samples=200, seed=0)
            assert result.delta == pytest.approx(d.mean(), abs=1e-12)
            assert result.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)

    def test_alpha_sets_the_interval_coverage(self) -> None:
        baseline, run = pair(40, 5)
        interval = sp.ttest_rel(run, baseline).confidence_interval(0.9)
        result = paired_test(baseline, run, "wilcoxon", alpha=0.1)
        assert (result.ci_low, result.ci_high) == pytest.approx((interval.low, interval.high), abs=1e-9)


# permutation -----------------------------------------------------------------------------------------


class TestPermutation:
    @pytest.mark.parametrize("n", [1, 2, 5, 9, 12])
    def test_exact_enumeration_matches_itertools(self, n: int) -> None:
        """When 2**n <= permutations every pattern is enumerated: the p-value is exact."""
        baseline, run = pair(n, 10 + n, grid=0.05)
        p = paired_test(baseline, run, "permutation", permutations=2**n).p_value
        assert p == pytest.approx(exact_sign_flip_p(run - baseline), abs=1e-12)

    def test_exact_with_many_tied_statistics(self) -> None:
        """Mathematically equal statistics summed in other orders count as ties (the tolerance)."""
        d = np.array([0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.6, 0.1])
        p = paired_test(np.zeros(8), d, "permutation").p_value
        assert p == pytest.approx(exact_sign_flip_p(d), abs=1e-12)
        assert p == 2 / 256  # only the identity and its mirror reach |sum| = 1.9

    @pytest.mark.parametrize("seed", [0, 1])
    def test_monte_carlo_within_four_standard_errors_of_exact(self, seed: int) -> None:
        baseline, run = pair(12, 20 + seed)
        exact = exact_sign_flip_p(run - baseline)
        b = 4000  # < 2**12, so sampled
        p = paired_test(baseline, run, "permutation", permutations=b, seed=seed).p_value
        assert p * (b + 1) == pytest.approx(round(p * (b + 1)))  # (count + 1) / (B + 1)
        assert abs(p - exact) <= 4 * math.sqrt(exact * (1 - exact) / b) + 1 / b

    def test_ten_thousand_permutations_over_seven_thousand_queries_is_fast(self) -> None:
        baseline, run = pair(7000, 30)
        paired_test(baseline[:100], run[:100], "permutation", seed=0)  # warm-up
        start = time.perf_counter()
        paired_test(baseline, run, "permutation", permutations=10_000, seed=0)
        assert time.perf_counter() - start < 1.0


# bootstrap -------------------------------------------------------------------------------------------


class TestBootstrap:
    @pytest.mark.parametrize(("n", "grid"), [(15, None), (25, 0.1), (3, 0.5)])
    def test_same_draws_as_slow_reference(self, monkeypatch: pytest.MonkeyPatch, n: int, grid: float | None) -> None:
        """p and percentile interval equal a one-resample-at-a-time loop; small batches change nothing."""
        baseline, run = pair(n, 40 + n, grid=grid)
        monkeypatch.setattr(stats, "_BATCH", 7 * n)  # 7 resamples per batch: many batches
        result = paired_test(baseline, run, "bootstrap", samples=500, seed=3, alpha=0.1)
        p, low, high = slow_bootstrap(run - baseline, 500, 3, 0.1)
        assert result.p_value == pytest.approx(p, abs=1e-12)
        assert (result.ci_low, result.ci_high) == pytest.approx((low, high), abs=1e-12)

    def test_close_to_t_for_many_queries(self) -> None:
        """With many queries the bootstrap and the t-test agree (both are about the mean)."""
        baseline, run = pair(400, 41)
        boot = paired_test(baseline, run, "bootstrap", samples=4000, seed=1)
        t = paired_test(baseline, run, "t")
        assert boot.p_value == pytest.approx(t.p_value, abs=0.03)
        assert (boot.ci_low, boot.ci_high) == pytest.approx((t.ci_low, t.ci_high), abs=0.01)

    def test_needs_no_scipy(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "scipy.stats", None)  # makes `import scipy.stats` fail
        baseline, run = pair(10, 42)
        assert_finite(paired_test(baseline, run, "bootstrap", samples=100, seed=0))
        with pytest.raises(ImportError, match=r"pip install 'retrieval-evaluator\[stats\]'"):
            paired_test(baseline, run, "t")


class TestWithoutScipy:
    """The permutation, bootstrap and Tukey tests are NumPy: their t interval has its own t quantile."""

    @pytest.mark.parametrize("df", [1, 2, 3, 5, 9, 29, 99, 999, 9_999, 99_999])
    @pytest.mark.parametrize("alpha", [0.5, 0.1, 0.05, 0.01, 0.001, 1e-6])
    def test_t_quantile_is_scipys(self, monkeypatch: pytest.MonkeyPatch, df: int, alpha: float) -> None:
        expected = float(sp.t.ppf(1 - alpha / 2, df))
        monkeypatch.setitem(sys.modules, "scipy.stats", None)
        assert stats._t_critical(alpha, df) == pytest.approx(expected, rel=1e-9)

    @pytest.mark.parametrize("alpha", [0.5, 0.2, 0.05, 0.01])
    def test_t_quantile_closed_forms(self, monkeypatch: pytest.MonkeyPatch, alpha: float) -> None:
        """df = 1 is Cauchy: tan(π(1 - α)/2); df = 2: P(|T| > c) = 1 - c/√(2 + c²)."""
        monkeypatch.setitem(sys.modules, "scipy.stats", None)
        assert stats._t_critical(alpha, 1) == pytest.approx(math.tan(math.pi * (1 - alpha) / 2), rel=1e-12)
        assert stats._t_critical(alpha, 2) == pytest.approx((1 - alpha) * math.sqrt(2 / (1 - (1 - alpha) ** 2)),
                                                            rel=1e-12)

    def test_permutation_and_tukey_intervals_are_the_t_tests(self, monkeypatch: pytest.MonkeyPatch) -> None:
        baseline, run = pair(25, 7)
        t = paired_test(baseline, run, "t")
        expected = paired_test(baseline, run, "permutation", permutations=500, seed=3)
        monkeypatch.setitem(sys.modules, "scipy.stats", None)
        got = paired_test(baseline, run, "permutation", permutations=500, seed=3)
        assert got.p_value == expected.p_value and got.effect_size == expected.effect_size
        assert (got.ci_low, got.ci_high) == pytest.approx((t.ci_low, t.ci_high), rel=1e-12)
        tukey = paired_test(baseline, run, "tukey", permutations=200, seed=3)
        assert (tukey.ci_low, tukey.ci_high) == pytest.approx((t.ci_low, t.ci_high), rel=1e-12)
        for test in ("t", "wilcoxon", "sign"):
            with pytest.raises(ImportError, match=r"pip install 'retrieval-evaluator\[stats\]'"):
                paired_test(baseline, run, test)


# Tukey HSD -------------------------------------------------------------------------------------------


class TestTukey:
    @pytest.mark.parametrize(("n_runs", "n_queries", "grid"), [(3, 6, None), (4, 5, 0.25), (2, 7, 0.1)])
    def test_same_permutations_as_slow_reference(
        self, monkeypatch: pytest.MonkeyPatch, n_runs: int, n_queries: int, grid: float | None
    ) -> None:
        rng = np.random.default_rng(n_runs * n_queries)
        values = rng.random((n_runs, n_queries))
        if grid is not None:
            values = np.round(values / grid) * grid  # many tied ranges
        monkeypatch.setattr(stats, "_BATCH", 5 * values.size)  # 5 permutations per batch
        expected = slow_tukey(values, 300, seed=7)
        assert tukey_hsd(values, permutations=300, seed=7) == pytest.approx(expected, abs=1e-12)

    def test_symmetric_with_ones_on_the_diagonal(self) -> None:
        p = tukey_hsd(np.random.default_rng(0).random((5, 30)), permutations=500, seed=0)
        assert np.array_equal(p, p.T)
        assert np.all(np.diag(p) == 1.0)
        assert np.all((p > 0) & (p <= 1))

    def test_two_runs_agree_with_the_exact_permutation_test(self) -> None:
        """For two runs, shuffling within a query is flipping the sign of its difference."""
        baseline, run = pair(11, 50)
        exact = exact_sign_flip_p(run - baseline)
        b = 4000
        p = paired_test(baseline, run, "tukey", permutations=b, seed=2).p_value
        assert abs(p - exact) <= 4 * math.sqrt(exact * (1 - exact) / b) + 1 / b

    @pytest.mark.parametrize("shape", [(0, 0), (1, 5), (3, 0)], ids=["no-runs", "one-run", "no-queries"])
    def test_degenerate_shapes_give_ones(self, shape: tuple[int, int]) -> None:
        assert np.array_equal(tukey_hsd(np.zeros(shape), permutations=10), np.ones((shape[0], shape[0])))

    def test_identical_runs(self) -> None:
        values = np.tile(np.linspace(0, 1, 9), (4, 1))
        assert np.all(tukey_hsd(values, permutations=100, seed=0) == 1.0)

    def test_ten_runs_by_250_queries_is_fast(self) -> None:
        values = np.random.default_rng(0).random((10, 250))
        start = time.perf_counter()
        tukey_hsd(values, permutations=10_000, seed=0)
        assert time.perf_counter() - start < 3.0


# corrections -----------------------------------------------------------------------------------------


P_VECTORS = [
    pytest.param([0.01, 0.04, 0.03, 0.5], id="four"),
    pytest.param([0.02, 0.02, 0.02, 0.9, 0.001], id="ties"),
    pytest.param([0.3], id="one"),
    pytest.param([0.0, 1.0, 0.5, 0.5], id="bounds"),
    pytest.param(list(np.random.default_rng(0).random(50) ** 3), id="fifty"),
]


class TestAdjust:
    @pytest.mark.parametrize("p", P_VECTORS)
    @pytest.mark.parametrize(("method", "statsmodels_name"), [("bonferroni", "bonferroni"), ("holm", "holm"), ("bh", "fdr_bh")])
    def test_matches_statsmodels(self, p: list[float], method: str, statsmodels_name: str) -> None:
        multitest = pytest.importorskip("statsmodels.stats.multitest")
        expected = multitest.multipletests(p, method=statsmodels_name)[1]
        assert adjust(p, method) == pytest.approx(expected, abs=1e-9)

    @settings(max_examples=60, deadline=None)
    @given(p=st.lists(st.floats(0.0, 1.0), max_size=30), method=st.sampled_from(CORRECTIONS[1:]))
    def test_matches_statsmodels_property(self, p: list[float], method: str) -> None:
        multitest = pytest.importorskip("statsmodels.stats.multitest")
        if not p:
            assert adjust(p, method).shape == (0,)
            return
        expected = multitest.multipletests(p, method={"bh": "fdr_bh"}.get(method, method))[1]
        adjusted = adjust(p, method)
        assert adjusted == pytest.approx(expected, abs=1e-9)
        assert np.all(adjusted >= np.asarray(p)) and np.all(adjusted <= 1.0)

    def test_none_is_a_copy(self) -> None:
        p = np.array([0.2, 0.01])
        out = adjust(p, "none")
        out[0] = 1.0
        assert p.tolist() == [0.2, 0.01]

    @pytest.mark.parametrize("bad", [[0.1, 1.2], [-0.1], [float("nan")], [[0.1]]], ids=["above", "below", "nan", "2-D"])
    def test_rejects_invalid_p_values(self, bad: list[float]) -> None:
        with pytest.raises(RetrievalEvalError, match="'p_values' must"):
            adjust(bad, "holm")


# degenerate inputs -----------------------------------------------------------------------------------


DEGENERATE = [
    # (baseline, run, delta, CI), p = 1 and effect size 0 for every test
    pytest.param([], [], 0.0, (0.0, 0.0), id="no-queries"),
    pytest.param([0.3], [0.7], 0.4, (0.4, 0.4), id="one-query"),
    pytest.param([0.3], [0.3], 0.0, (0.0, 0.0), id="one-query-tie"),
    pytest.param([0.1, 0.5, 0.9, 0.2], [0.1, 0.5, 0.9, 0.2], 0.0, (0.0, 0.0), id="identical-runs"),
]


class TestDegenerate:
    @pytest.mark.parametrize("test", PAIRED)
    @pytest.mark.parametrize(("baseline", "run", "delta", "interval"), DEGENERATE)
    def test_defined_values(self, test: str, baseline: list[float], run: list[float], delta: float, interval: tuple[float, float]) -> None:
        result = paired_test(baseline, run, test, permutations=100, samples=100, seed=0)
        assert_finite(result)
        assert (result.p_value, result.effect_size) == (1.0, 0.0)
        assert result.delta == pytest.approx(delta)
        assert (result.ci_low, result.ci_high) == pytest.approx(interval)

    @pytest.mark.parametrize("test", PAIRED)
    @pytest.mark.parametrize(
        "baseline",
        [np.array([0.2, 0.3, 0.4, 0.7, 0.1]), np.array([0.1, 0.2, 0.3, 0.4, 0.5]) ** 2],
        ids=["exact", "rounded"],  # x**2 + 0.1 - x**2 is 0.1 only up to rounding
    )
    def test_constant_nonzero_difference(self, test: str, baseline: np.ndarray) -> None:
        """Zero spread, non-zero shift: effect size 0 (convention), CI [c, c], t p = 0, bootstrap 1/(B+1)."""
        run = baseline + 0.1
        result = paired_test(baseline, run, test, permutations=1000, samples=1000, seed=0)
        assert_finite(result)
        assert result.effect_size == 0.0
        assert result.delta == pytest.approx(0.1)
        assert (result.ci_low, result.ci_high) == pytest.approx((0.1, 0.1), abs=1e-12)
        assert (result.wins, result.ties, result.losses) == (5, 0, 0)
        expected = {"t": 0.0, "sign": 2 / 32, "permutation": 2 / 32, "bootstrap": 1 / 1001}
        if test in expected:
            assert result.p_value == pytest.approx(expected[test])

    def test_zero_mean_with_spread(self) -> None:
        """Differences that cancel: delta 0, p = 1 for the t-test, a finite interval around 0."""
        result = paired_test([0.5, 0.5, 0.5, 0.5], [0.6, 0.4, 0.7, 0.3], "t")
        assert result.delta == pytest.approx(0.0, abs=1e-15)
        assert result.p_value == pytest.approx(1.0)
        assert result.ci_low < 0 < result.ci_high

    @pytest.mark.parametrize("test", PAIRED)
    @pytest.mark.parametrize("tiny", [2.0**-700, 1e-300, 4.69459433e-223])
    def test_tiny_differences_have_the_statistics_of_their_shape(self, test: str, tiny: float) -> None:
        """Differences of 1e-300 (a float grade's rounding, say) have a spread although their squares
        underflow: d_z, the t interval and the t p-value are those of the same differences times
        1/tiny, scaled (a standard deviation of 0 divided by zero here, found by Hypothesis)."""
        shape = np.array([0.0, 1.0, 3.0, 2.0, 2.0])
        small = paired_test(np.zeros(5), shape * tiny, test, permutations=100, samples=100, seed=0)
        large = paired_test(np.zeros(5), shape, test, permutations=100, samples=100, seed=0)
        assert_finite(small)
        assert small.effect_size == pytest.approx(large.effect_size, rel=1e-12)
        assert small.p_value == pytest.approx(large.p_value, rel=1e-12)
        assert (small.ci_low / tiny, small.ci_high / tiny) == pytest.approx((large.ci_low, large.ci_high), rel=1e-12)
        assert small.effect_size == pytest.approx(1.6 / math.sqrt(1.3), rel=1e-12)  # by hand: mean 8/5, variance 5.2/4

    def test_scaling_changes_no_bit_of_ordinary_differences(self) -> None:
        """The differences are scaled by a power of two, which is exact: on ordinary values d_z and the
        t p-value are the unscaled formulas' to the bit (scipy's ttest_rel, numpy's std)."""
        rng = np.random.default_rng(3)
        for n in (2, 3, 10, 57):
            baseline = rng.random(n)
            run = np.clip(baseline + rng.normal(0.02, 0.2, n), 0.0, 1.0)
            d = run - baseline
            result = paired_test(baseline, run, "t")
            assert result.effect_size == float(d.mean()) / float(d.std(ddof=1))
            assert result.p_value == float(sp.ttest_rel(run, baseline).pvalue)

    @pytest.mark.parametrize("test", PAIRED)
    def test_single_difference_among_ties(self, test: str) -> None:
        result = paired_test([0.2, 0.2, 0.2], [0.2, 0.5, 0.2], test, permutations=100, samples=100, seed=0)
        assert_finite(result)
        assert (result.wins, result.ties, result.losses) == (1, 2, 0)


# reproducibility -------------------------------------------------------------------------------------


class TestSeeds:
    @pytest.mark.parametrize("test", MONTE_CARLO)
    def test_same_seed_same_result(self, test: str) -> None:
        baseline, run = pair(300, 60)
        first = paired_test(baseline, run, test, permutations=2000, samples=2000, seed=123)
        assert paired_test(baseline, run, test, permutations=2000, samples=2000, seed=123) == first

    def test_same_seed_same_tukey_matrix(self) -> None:
        values = np.random.default_rng(1).random((4, 40))
        assert np.array_equal(tukey_hsd(values, permutations=1000, seed=5), tukey_hsd(values, permutations=1000, seed=5))

    @pytest.mark.parametrize("test", MONTE_CARLO)
    def test_other_seeds_differ_within_monte_carlo_error(self, test: str) -> None:
        baseline, run = pair(25, 61)
        b = 3000
        p = [paired_test(baseline, run, test, permutations=b, samples=b, seed=s).p_value for s in range(4)]
        assert len(set(p)) > 1
        mean = sum(p) / len(p)
        assert max(p) - min(p) <= 2 * 4 * math.sqrt(mean * (1 - mean) / b) + 2 / b


# properties ------------------------------------------------------------------------------------------


values_on_a_grid = st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 1 / 3, 0.75, 1.0]), min_size=0, max_size=25)


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[float], list[float]]:
    """Two runs over the same queries, with ties, zero differences and the odd continuous value."""
    baseline = draw(values_on_a_grid)
    element = st.one_of(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0]), st.floats(0.0, 1.0))
    run = draw(st.lists(element, min_size=len(baseline), max_size=len(baseline)))
    return baseline, run


class TestProperties:
    @settings(max_examples=40, deadline=None)
    @given(data=runs(), test=st.sampled_from(PAIRED))
    def test_finite_and_bounded(self, data: tuple[list[float], list[float]], test: str) -> None:
        """No NaN, no infinity, no warning (pytest turns warnings into errors), p in [0, 1]."""
        baseline, run = data
        result = paired_test(baseline, run, test, permutations=200, samples=200, seed=0)
        assert_finite(result)
        assert result.ci_low <= result.delta + 1e-12 and result.delta <= result.ci_high + 1e-12
        assert result.wins + result.ties + result.losses == len(run)

    @settings(max_examples=40, deadline=None)
    @given(data=runs(), test=st.sampled_from(("t", "wilcoxon", "sign", "permutation", "bootstrap")))
    def test_swapping_runs_mirrors_the_result(self, data: tuple[list[float], list[float]], test: str) -> None:
        """Symmetric tests: swapping baseline and run negates delta, d_z and the interval; p is unchanged."""
        baseline, run = data
        forward = paired_test(baseline, run, test, permutations=200, samples=200, seed=0)
        backward = paired_test(run, baseline, test, permutations=200, samples=200, seed=0)
        assert backward.p_value == pytest.approx(forward.p_value, abs=1e-9)
        assert backward.delta == pytest.approx(-forward.delta, abs=1e-12)
        assert backward.effect_size == pytest.approx(-forward.effect_size, abs=1e-9)
        assert (backward.ci_low, backward.ci_high) == pytest.approx((-forward.ci_high, -forward.ci_low), abs=1e-9)
        assert (backward.wins, backward.ties, backward.losses) == (forward.losses, forward.ties, forward.wins)

    @settings(max_examples=25, deadline=None)
    @given(shape=st.tuples(st.integers(0, 5), st.integers(0, 12)), data=st.data())
    def test_tukey_bounded_and_symmetric(self, shape: tuple[int, int], data: st.DataObject) -> None:
        grid = st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 1 / 3, 0.75, 1.0])
        values = data.draw(st.lists(grid, min_size=shape[0] * shape[1], max_size=shape[0] * shape[1]))
        p = tukey_hsd(np.reshape(np.array(values, dtype=float), shape), permutations=100, seed=0)
        assert p.shape == (shape[0], shape[0])
        assert np.all(np.isfinite(p)) and np.all((p > 0) & (p <= 1)) and np.array_equal(p, p.T)


# validation -------------------------------------------------------------------------------------------


class TestValidation:
    @pytest.mark.parametrize(
        ("call", "match"),
        [
            (lambda: paired_test([1.0], [1.0], "ttest"), "unknown test 'ttest'; choose one of t, wilcoxon, sign, permutation, bootstrap, tukey"),
            (lambda: adjust([0.1], "fdr"), "unknown method 'fdr'; choose one of none, bonferroni, holm, bh"),
            (lambda: paired_test([1.0, 2.0], [1.0], "t"), "one value per query"),
            (lambda: paired_test([[1.0]], [[1.0]], "t"), "must be a 1-D array"),
            (lambda: paired_test([1.0, float("nan")], [1.0, 2.0], "t"), "'baseline' must be finite"),
            (lambda: paired_test([1.0], [float("inf")], "sign"), "'run' must be finite"),
            (lambda: paired_test([1.0], [1.0], "permutation", permutations=0), "'permutations' must be a positive integer"),
            (lambda: paired_test([1.0], [1.0], "bootstrap", samples=2.5), "'samples' must be a positive integer"),
            (lambda: paired_test([1.0], [1.0], "t", alpha=1.0), "'alpha' must lie strictly between 0 and 1"),
            (lambda: tukey_hsd([1.0, 2.0]), "must be a 2-D array"),
        ],
        ids=["test", "method", "lengths", "2-D", "nan", "inf", "permutations", "samples", "alpha", "tukey-1-D"],
    )
    def test_errors_are_value_errors_that_say_what_is_wrong(self, call, match: str) -> None:
        with pytest.raises(RetrievalEvalError, match=match) as raised:
            call()
        assert isinstance(raised.value, ValueError)

    def test_scipy_message_when_missing(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "scipy.stats", None)
        with pytest.raises(ImportError) as raised:
            paired_test([0.1, 0.2], [0.2, 0.3], "wilcoxon")
        assert str(raised.value) == (
            "scipy is needed for the t, Wilcoxon and sign tests (the permutation, bootstrap and tukey tests need "
            "none): pip install 'retrieval-evaluator[stats]'")

    def test_module_imports_without_scipy(self) -> None:
        """scipy is imported inside the functions only."""
        code = "import sys; sys.modules['scipy'] = None; import retrieval_eval.analysis.stats as s; print(s.TESTS[0])"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert done.stdout == "t\n"
