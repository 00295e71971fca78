"""Intervals of a mean against scipy: the BCa bootstrap on the same resamples, the exact binomial
interval and the t interval; and the properties every interval must have."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from retrieval_eval import SetEvaluator
from retrieval_eval.analysis.intervals import (
    beta_quantile,
    clopper_pearson,
    interval,
    is_binary,
    mean_interval,
    normal_quantile,
)
from retrieval_eval.measures.params import MeasureError
from retrieval_eval.model import RetrievalEvalError

sp = pytest.importorskip("scipy.stats")

#: The two sides compute the same quantities by different code (bisection here, boost's inverses in
#: scipy); where they are inverses of a distribution function they agree to some 1e-13 (seen), so
#: 1e-10 leaves room without hiding a wrong formula (those are off by 1e-3 or more).
INVERSE_TOL = 1e-10


def skewed(n: int, seed: int) -> np.ndarray:
    """Per-query values shaped like AP's: many small, a few large (a skew the BCa corrects for)."""
    return np.random.default_rng(seed).random(n) ** 3


@pytest.mark.parametrize("n", [2, 3, 5, 17, 60, 250])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_bca_equals_scipy_on_the_same_resamples(n: int, level: float) -> None:
    values = skewed(n, n)
    ours = mean_interval(values, method="bca", level=level, resamples=1999, seed=7)
    theirs = sp.bootstrap((values,), np.mean, n_resamples=1999, method="BCa", confidence_level=level,
                          rng=np.random.default_rng(7)).confidence_interval
    # The same resample indices give the same bootstrap means; the quantile levels go through
    # Φ and Φ⁻¹, computed here by bisection and in scipy by ndtr/ndtri: equal to some 1e-15.
    assert ours.method == "bca"
    assert ours.low == pytest.approx(theirs.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.high, abs=1e-12)


def test_bca_batches_draw_the_same_resamples_as_one_draw() -> None:
    """Many queries make the resampling go in batches of rows; the stream is the one scipy draws at once."""
    values = skewed(3000, 1)
    ours = mean_interval(values, resamples=300, seed=3)
    theirs = sp.bootstrap((values,), np.mean, n_resamples=300, method="BCa",
                          rng=np.random.default_rng(3)).confidence_interval
    assert (ours.low, ours.high) == pytest.approx((theirs.low, theirs.high), abs=1e-12)


def test_bca_differs_from_the_percentile_interval_on_skewed_values() -> None:
    """The bias correction and acceleration move the bounds: a percentile interval would fail the scipy check."""
    values = skewed(40, 2)
    bca = mean_interval(values, seed=0)
    percentile = sp.bootstrap((values,), np.mean, n_resamples=2000, method="percentile",
                              rng=np.random.default_rng(0)).confidence_interval
    assert abs(bca.low - percentile.low) > 1e-4 or abs(bca.high - percentile.high) > 1e-4


def test_t_interval_of_tiny_values_is_that_of_their_shape() -> None:
    """Values of 1e-300, whose squares underflow, have a t interval: that of the same values at
    scale 1, scaled (their standard deviation was 0, which gave the interval [mean, mean])."""
    shape = np.array([0.0, 0.1, 0.3, 0.2, 0.2])
    small, large = mean_interval(shape * 1e-300, method="t"), mean_interval(shape, method="t")
    assert (small.low / 1e-300, small.high / 1e-300) == pytest.approx((large.low, large.high), rel=1e-12)
    assert small.low < small.high


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 7), (7, 7), (3, 10), (1, 50), (37, 120), (400, 1000)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_exact_equals_scipy_binomtest(k: int, n: int, level: float) -> None:
    values = np.array([1.0] * k + [0.0] * (n - k))
    ours = mean_interval(values, level=level)
    theirs = sp.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    assert ours.method == "exact"
    assert ours.low == pytest.approx(theirs.low, abs=INVERSE_TOL)
    assert ours.high == pytest.approx(theirs.high, abs=INVERSE_TOL)


def test_clopper_pearson_by_hand() -> None:
    """0 of n: the upper bound solves (1 - p)^n = (1 - level)/2 in closed form; n of n mirrors it."""
    low, high = clopper_pearson(0, 5, 0.95)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 5), abs=1e-14)
    low, high = clopper_pearson(5, 5, 0.95)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 5), abs=1e-14)


@pytest.mark.parametrize(("a", "b"), [(1, 1), (2, 5), (10, 3), (50, 70)])
@pytest.mark.parametrize("p", [0.001, 0.025, 0.5, 0.975])
def test_beta_quantile_equals_scipy(a: int, b: int, p: float) -> None:
    assert beta_quantile(p, a, b) == pytest.approx(sp.beta.ppf(p, a, b), abs=INVERSE_TOL)


@pytest.mark.parametrize("p", [1e-10, 0.001, 0.025, 0.3, 0.5, 0.9, 0.975, 1 - 1e-10])
def test_normal_quantile_equals_scipy(p: float) -> None:
    assert normal_quantile(p) == pytest.approx(sp.norm.ppf(p), abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 10, 100])
def test_t_equals_scipy(n: int) -> None:
    values = skewed(n, 4)
    ours = mean_interval(values, method="t", level=0.9)
    low, high = sp.t.interval(0.9, n - 1, loc=values.mean(), scale=sp.sem(values))
    assert ours.method == "t"
    assert (ours.low, ours.high) == pytest.approx((low, high), abs=1e-12)


def test_auto_chooses_by_the_values() -> None:
    assert mean_interval([0, 1, 1, 0]).method == "exact"
    assert mean_interval([0, 1, 0.5]).method == "bca"
    assert mean_interval([0, 1, 1], method="bca").method == "bca"  # asked for: no switch
    assert is_binary([1.0]) and not is_binary([1.0, 2.0])


def test_exact_refuses_values_that_are_not_a_proportion() -> None:
    with pytest.raises(RetrievalEvalError, match="all 0 or 1"):
        mean_interval([0.0, 0.5, 1.0], method="exact")


@pytest.mark.parametrize(("bad", "match"), [({"method": "wald"}, "unknown interval method"),
                                            ({"level": 1.0}, "level"), ({"level": 0}, "level"),
                                            ({"resamples": 0}, "samples"), ({"seed": -1}, "seed")])
def test_bad_options_are_refused(bad: dict[str, object], match: str) -> None:
    with pytest.raises(RetrievalEvalError, match=match):
        mean_interval([0.1, 0.2], **bad)  # type: ignore[arg-type]


def test_degenerate_inputs() -> None:
    assert (mean_interval([]).low, mean_interval([]).high) == (0.0, 0.0)
    for method in ("bca", "t"):
        one = mean_interval([0.3], method=method)
        same = mean_interval([0.3] * 6, method=method)
        assert (one.low, one.high) == (0.3, 0.3)
        assert same.low == pytest.approx(0.3) and same.high == pytest.approx(0.3)
    assert mean_interval([1.0]).high == 1.0 and mean_interval([1.0]).low == pytest.approx(0.025)


def test_every_resample_above_the_mean_gives_finite_bounds() -> None:
    """Two values, one tiny share below the mean: z0 may be infinite; the bounds stay the extremes."""
    iv = mean_interval([0.0, 0.0, 0.0, 1e-3], method="bca", resamples=50, seed=1)
    assert math.isfinite(iv.low) and math.isfinite(iv.high) and iv.low <= 0.00025 <= iv.high


values_strategy = st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(values_strategy, st.sampled_from(["auto", "bca", "t"]), st.integers(0, 2**32))
@example([0.0, 2.7488998156283896e-159], "auto", 0)  # spread**1.5 underflowed to 0: ZeroDivisionError
def test_interval_holds_the_mean_and_repeats_with_its_seed(values: list[float], method: str, seed: int) -> None:
    first = mean_interval(values, method=method, resamples=200, seed=seed)
    again = mean_interval(values, method=method, resamples=200, seed=seed)
    mean = float(np.mean(values))
    assert first == again
    assert first.low <= mean <= first.high


@settings(max_examples=40, deadline=None)
@given(values_strategy, st.sampled_from(["auto", "t"]), st.integers(0, 1000))
def test_a_higher_level_gives_a_wider_interval(values: list[float], method: str, seed: int) -> None:
    """For t and exact the bounds are monotone in the level; for BCa too, on the same resamples."""
    narrow = mean_interval(values, method=method, level=0.8, resamples=300, seed=seed)
    wide = mean_interval(values, method=method, level=0.95, resamples=300, seed=seed)
    assert wide.low <= narrow.low + 1e-12 and narrow.high <= wide.high + 1e-12


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=60))
def test_exact_interval_holds_the_proportion(values: list[float]) -> None:
    iv = mean_interval(values)
    assert iv.method == "exact" and 0.0 <= iv.low <= float(np.mean(values)) <= iv.high <= 1.0


def test_interval_of_a_results_object() -> None:
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(6)}
    run = {f"q{i}": ({"a": 2.0, "b": 1.0} if i % 3 else {"b": 2.0, "a": 1.0}) for i in range(6)}
    results = SetEvaluator.from_dict(qrels, run)
    p1 = interval(results, "P@1")
    assert p1.method == "exact"
    assert (p1.low, p1.high) == pytest.approx(tuple(sp.binomtest(4, 6).proportion_ci(method="exact")), abs=INVERSE_TOL)
    ap = interval(results, "AP", resamples=500, seed=2)
    assert ap == mean_interval(results.array("AP"), resamples=500, seed=2)
    with pytest.raises(MeasureError, match="geometric mean"):
        interval(results, "GMAP")


# ------------------------------------------------------------------------------ evaluate --ci
CLI_QRELS = "".join(f"q{i} 0 a 1\nq{i} 0 b {i % 2}\n" for i in range(8))
CLI_RUN = "".join(f"q{i} Q0 {'a' if i % 3 else 'c'} 1 2.0 mine\nq{i} Q0 {'c' if i % 3 else 'a'} 2 1.0 mine\n"
                  for i in range(8))


@pytest.fixture
def cli_files(write) -> tuple[str, str]:
    return write("qrels", CLI_QRELS), write("run", CLI_RUN)


def test_evaluate_ci_in_trec_lines(capsys, cli_files) -> None:
    from retrieval_eval.cli import main

    assert main(["evaluate", "-m", "P.1", "-m", "map", "-m", "num_ret", "--ci", "--quiet", *cli_files]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert all(len(fields) == 3 for fields in lines)  # trec_eval's three fields, every line
    values = {name.strip(): float(value) for name, _, value in lines}
    results = SetEvaluator.from_trec(*cli_files)
    successes = int(results.array("P@1").sum())
    exact = sp.binomtest(successes, 8).proportion_ci(method="exact")
    assert (values["P_1_ci_low"], values["P_1_ci_high"]) == pytest.approx((exact.low, exact.high), abs=1e-4)
    bca = mean_interval(results.array("AP"))
    assert (values["map_ci_low"], values["map_ci_high"]) == pytest.approx((bca.low, bca.high), abs=5e-5)
    assert "num_ret_ci_low" not in values  # a sum, not a mean


def test_evaluate_without_ci_is_unchanged(capsys, cli_files) -> None:
    from retrieval_eval.cli import main

    main(["evaluate", "-m", "map", "--quiet", *cli_files])
    assert "_ci_" not in capsys.readouterr().out


def test_evaluate_ci_json_and_tables(capsys, cli_files) -> None:
    from retrieval_eval.cli import main

    main(["evaluate", "-m", "P@1", "-m", "AP", "--ci", "--ci-method", "t", "--ci-level", "0.9", "--quiet",
          "--format", "json", *cli_files])
    document = json.loads(capsys.readouterr().out)
    results = SetEvaluator.from_trec(*cli_files)
    ap = results.array("AP")
    low, high = sp.t.interval(0.9, 7, loc=ap.mean(), scale=sp.sem(ap))
    assert document["ci"]["AP"] == {"low": pytest.approx(low), "high": pytest.approx(high), "method": "t", "level": 0.9}
    assert document["options"]["--ci-method"] == "t"
    main(["evaluate", "-m", "P@1", "-m", "GMAP", "--ci", "--quiet", "--format", "csv", "-q", *cli_files])
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0][-2:] == ["P@1 ci_low", "P@1 ci_high"] and "GMAP ci_low" not in rows[0]
    assert rows[1][-2:] == ["", ""] and rows[-1][1] == "all" and float(rows[-1][-1]) > float(rows[-1][-2])


@pytest.mark.parametrize(("extra", "message"), [(["--ci-level", "0.9"], "applies to --ci"),
                                                (["--ci", "-n"], "drop -n"),
                                                (["--ci", "--ci-level", "1.5"], "strictly between"),
                                                (["--ci", "--ci-seed", "-3"], ">= 0")])
def test_evaluate_ci_usage_errors(capsys, cli_files, extra: list[str], message: str) -> None:
    from retrieval_eval.cli import main

    with pytest.raises(SystemExit) as stopped:  # usage errors go through argparse: exit 2
        main(["evaluate", "-m", "map", *extra, *cli_files])
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert message in err and "Traceback" not in err
