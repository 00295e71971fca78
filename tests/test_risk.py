"""URisk, TRisk and GeoRisk against the papers' formulas written here with plain loops, hand-computed
cases, and scipy's t distribution for TRisk's p-value; and compare's risk output."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval import SetEvaluator, compare
from retrieval_eval.analysis.risk import georisk, risk_rows, trisk, urisk
from retrieval_eval.model import RetrievalEvalError

sp = pytest.importorskip("scipy.stats")


def urisk_loop(baseline: list[float], run: list[float], alpha: float) -> float:
    """Wang et al. 2012 as Dinçer et al. 2014 write it: (Σ_{Q+} δ - (1 + α) Σ_{Q-} |δ|) / c."""
    gains = losses = 0.0
    for b, r in zip(baseline, run):
        delta = r - b
        if delta > 0:
            gains += delta
        elif delta < 0:
            losses += -delta
    return (gains - (1 + alpha) * losses) / len(baseline)


def trisk_loop(baseline: list[float], run: list[float], alpha: float) -> float:
    """Dinçer et al. 2014: URisk / SE(URisk), SE from the sample variance of the risk-weighted deltas."""
    c = len(baseline)
    weighted = []
    for b, r in zip(baseline, run):
        delta = r - b
        weighted.append(delta if delta >= 0 else (1 + alpha) * delta)
    mean = sum(weighted) / c
    variance = sum((w - mean) ** 2 for w in weighted) / (c - 1)
    return mean / math.sqrt(variance / c)


def georisk_loop(matrix: list[list[float]], alpha: float) -> list[float]:
    """Dinçer et al. 2016, cell by cell: z_ij = (x_ij - e_ij) / sqrt(e_ij), e_ij = S_i T_j / N,
    ZRisk_i = Σ z+ + (1 + α) Σ z-, GeoRisk_i = sqrt(S_i / c · Φ(ZRisk_i / c))."""
    m, c = len(matrix), len(matrix[0])
    row_sums = [sum(row) for row in matrix]
    column_sums = [sum(matrix[i][j] for i in range(m)) for j in range(c)]
    total = sum(row_sums)
    out = []
    for i in range(m):
        zrisk = 0.0
        for j in range(c):
            expected = row_sums[i] * column_sums[j] / total
            z = 0.0 if expected == 0 else (matrix[i][j] - expected) / math.sqrt(expected)
            zrisk += z if z >= 0 else (1 + alpha) * z
        phi = 0.5 * (1 + math.erf(zrisk / c / math.sqrt(2)))
        out.append(math.sqrt(row_sums[i] / c * phi))
    return out


def test_urisk_by_hand() -> None:
    # deltas +0.1, -0.2, +0.2, 0: gains 0.3, losses 0.2; alpha 1: (0.3 - 2 * 0.2) / 4 = -0.025
    assert urisk([0.5, 0.4, 0.3, 0.6], [0.6, 0.2, 0.5, 0.6], 1.0) == pytest.approx(-0.025)
    # alpha 0: the plain mean difference, 0.1 / 4
    assert urisk([0.5, 0.4, 0.3, 0.6], [0.6, 0.2, 0.5, 0.6], 0.0) == pytest.approx(0.025)


def test_trisk_by_hand_and_scipy() -> None:
    # weighted deltas 0.1, -0.4, 0.2, 0 (alpha 1): mean -0.025, sample sd sqrt(0.2075 / 3)
    statistic, p = trisk([0.5, 0.4, 0.3, 0.6], [0.6, 0.2, 0.5, 0.6], 1.0)
    assert statistic == pytest.approx(-0.025 / (math.sqrt(0.2075 / 3) / 2))
    reference = sp.ttest_1samp([0.1, -0.4, 0.2, 0.0], 0.0)
    assert statistic == pytest.approx(reference.statistic) and p == pytest.approx(reference.pvalue, abs=1e-12)


def test_trisk_of_tiny_differences_is_that_of_their_shape() -> None:
    """Weighted differences of 1e-300, whose squares underflow, still have a spread: TRisk is the t
    statistic of the same differences at scale 1 (their standard deviation was 0: a division by zero)."""
    shape = np.array([0.0, 0.1, 0.3, 0.2, 0.2])
    assert trisk(np.zeros(5), shape * 1e-300, 2.0) == pytest.approx(trisk(np.zeros(5), shape, 2.0), rel=1e-12)
    reference = sp.ttest_1samp(shape, 0.0)  # no loss here, so the weights leave the differences as they are
    assert trisk(np.zeros(5), shape * 1e-300, 2.0) == pytest.approx((reference.statistic, reference.pvalue), rel=1e-9)


def test_georisk_by_hand() -> None:
    """Two runs, two queries. x = [[0.4, 0.2], [0.2, 0.2]]: S = (0.6, 0.4), T = (0.6, 0.4), N = 1.
    e = [[0.36, 0.24], [0.24, 0.16]]; z_11 = 0.04/0.6, z_12 = -0.04/sqrt(0.24), z_21 = -0.04/sqrt(0.24),
    z_22 = 0.04/0.4. With alpha 0: ZRisk_1 = 0.0667 - 0.0816 = -0.0150."""
    z1 = 0.04 / 0.6 - 0.04 / math.sqrt(0.24)
    z2 = -0.04 / math.sqrt(0.24) + 0.04 / 0.4
    expected = [math.sqrt(0.3 * sp.norm.cdf(z1 / 2)), math.sqrt(0.2 * sp.norm.cdf(z2 / 2))]
    assert georisk([[0.4, 0.2], [0.2, 0.2]], 0.0).tolist() == pytest.approx(expected, abs=1e-14)


def test_georisk_query_every_run_misses_counts_nothing() -> None:
    """A column of zeros has expectation 0: z = 0 there, and the other queries decide."""
    with_zero = georisk([[0.4, 0.2, 0.0], [0.2, 0.2, 0.0]], 2.0)
    assert with_zero.tolist() == pytest.approx(georisk_loop([[0.4, 0.2, 0.0], [0.2, 0.2, 0.0]], 2.0))
    assert georisk([[0.0, 0.0], [0.0, 0.0]], 1.0).tolist() == [0.0, 0.0]


matrices = st.integers(2, 5).flatmap(lambda m: st.integers(2, 12).flatmap(lambda c: st.lists(
    st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=c, max_size=c), min_size=m, max_size=m)))


@settings(max_examples=80, deadline=None)
@given(matrices, st.sampled_from([0.0, 1.0, 2.0, 5.0]))
def test_against_the_papers_formulas(matrix: list[list[float]], alpha: float) -> None:
    baseline, run = matrix[0], matrix[1]
    assert urisk(baseline, run, alpha) == pytest.approx(urisk_loop(baseline, run, alpha), abs=1e-12)
    weighted = [r - b if r >= b else (1 + alpha) * (r - b) for b, r in zip(baseline, run)]
    if np.ptp(weighted) > 1e-9:  # a real spread: the t statistic is defined
        statistic, p = trisk(baseline, run, alpha)
        assert statistic == pytest.approx(trisk_loop(baseline, run, alpha), rel=1e-9)
        assert p == pytest.approx(2 * sp.t.sf(abs(statistic), len(baseline) - 1), abs=1e-9)
    if sum(map(sum, matrix)) > 0:
        assert georisk(matrix, alpha).tolist() == pytest.approx(georisk_loop(matrix, alpha), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(matrices)
def test_a_larger_alpha_never_raises_risk_measures(matrix: list[list[float]]) -> None:
    """Losses weigh more as alpha grows, gains do not: URisk and GeoRisk can only fall."""
    assert urisk(matrix[0], matrix[1], 3.0) <= urisk(matrix[0], matrix[1], 1.0) + 1e-12
    if sum(map(sum, matrix)) > 0:
        assert (georisk(matrix, 3.0) <= georisk(matrix, 1.0) + 1e-12).all()


def test_degenerate_and_bad_inputs() -> None:
    assert urisk([], [], 1.0) == 0.0 and trisk([], [], 1.0) == (0.0, 1.0)
    assert trisk([0.2], [0.5], 1.0) == (0.0, 1.0)
    assert trisk([0.2, 0.3], [0.2, 0.3], 1.0) == (0.0, 1.0)
    assert trisk([0.2, 0.3], [0.3, 0.4], 1.0) == (0.0, 0.0)  # constant gain: no standard error
    with pytest.raises(RetrievalEvalError, match="alpha"):
        urisk([0.1], [0.2], -1.0)
    with pytest.raises(RetrievalEvalError, match="one value per query"):
        urisk([0.1], [0.2, 0.3], 1.0)
    with pytest.raises(RetrievalEvalError, match=">= 0"):
        georisk([[0.1, -0.2], [0.1, 0.1]], 1.0)


def test_risk_rows_put_the_baseline_first_with_no_risk() -> None:
    matrix = np.array([[0.5, 0.4, 0.3, 0.6], [0.6, 0.2, 0.5, 0.6]])
    rows = risk_rows(matrix, ["base", "new"], "base", "AP", 1.0)
    assert (rows[0].run, rows[0].urisk, rows[0].trisk_p) == ("base", 0.0, 1.0)
    assert rows[1].urisk == pytest.approx(-0.025)
    assert [r.georisk for r in rows] == pytest.approx(georisk_loop(matrix.tolist(), 1.0))


def _runs() -> dict[str, SetEvaluator]:
    qrels = {f"q{i}": {"a": 1, "b": 1, "c": 0} for i in range(6)}
    good = {q: {"a": 3.0, "b": 2.0, "c": 1.0} for q in qrels}
    mixed = {q: ({"c": 3.0, "a": 2.0, "b": 1.0} if i % 2 else {"a": 3.0, "b": 2.0, "c": 1.0})
             for i, q in enumerate(qrels)}
    return {"good": SetEvaluator.from_dict(qrels, good), "mixed": SetEvaluator.from_dict(qrels, mixed)}


def test_compare_reports_risk_of_each_run() -> None:
    runs = _runs()
    values = {name: r.array("AP") for name, r in runs.items()}
    result = compare(None, runs, ["AP"], risk=2.0)
    by_run = {r.run: r for r in result.risks}
    assert by_run["mixed"].urisk == pytest.approx(urisk_loop(list(values["good"]), list(values["mixed"]), 2.0))
    assert by_run["mixed"].trisk == pytest.approx(trisk_loop(list(values["good"]), list(values["mixed"]), 2.0))
    assert [by_run[n].georisk for n in ("good", "mixed")] == pytest.approx(
        georisk_loop([list(values["good"]), list(values["mixed"])], 2.0))
    document = json.loads(result.to_json())
    assert [row["run"] for row in document["risk"]] == ["good", "mixed"]
    assert "URisk" in result.to_table() and "GeoRisk" in result.to_markdown()
    plain = compare(None, _runs(), ["AP"])
    assert "risk" not in plain.to_dict() and "URisk" not in plain.to_table()


def test_compare_refuses_a_negative_risk_alpha() -> None:
    with pytest.raises(RetrievalEvalError, match="alpha"):
        compare(None, _runs(), ["AP"], risk=-0.5)


def test_compare_command_prints_risk(capsys, write) -> None:
    from retrieval_eval.cli import main

    qrels = write("qrels", "".join(f"q{i} 0 a 1\nq{i} 0 b 1\n" for i in range(5)))
    base = write("base", "".join(f"q{i} Q0 a 1 2 base\nq{i} Q0 b 2 1 base\n" for i in range(5)))
    new = write("new", "".join(f"q{i} Q0 {'x' if i < 2 else 'a'} 1 2 new\nq{i} Q0 b 2 1 new\n" for i in range(5)))
    assert main(["compare", qrels, base, new, "-m", "RR", "--risk", "1", "--format", "json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)["risk"]
    # RR: base 1 everywhere; new 0.5 on q0, q1 and 1 elsewhere: URisk = 2 * (-0.5 - 0.5) / 5
    assert rows[1]["urisk"] == pytest.approx(-0.4)
    assert rows[1]["trisk"] == pytest.approx(trisk_loop([1.0] * 5, [0.5, 0.5, 1, 1, 1], 1.0))
    assert main(["compare", qrels, base, new, "-m", "RR", "--risk", "1", "--quiet"]) == 0
    assert "Risk against base, alpha 1" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        main(["compare", qrels, base, new, "--risk", "-2"])
    assert stopped.value.code == 2 and "expected a number >= 0" in capsys.readouterr().err
