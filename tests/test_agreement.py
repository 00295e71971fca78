"""Agreement between qrels against independent oracles: scikit-learn's Cohen's kappa, the krippendorff
package, scipy's Kendall's tau, and tau_AP counted by brute force from its definition; the command."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import krippendorff
import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from retrieval_eval import SetEvaluator
from retrieval_eval.analysis.agreement import label_agreement, ranking_agreement, tau_ap, tau_b
from retrieval_eval.cli import main
from retrieval_eval.model import RetrievalEvalError

pairs = st.lists(st.tuples(st.sampled_from([0, 1, 2, 4]), st.sampled_from([0, 1, 2, 4])), min_size=2, max_size=40)


def as_qrels(grades: list[int], extra: int = 0, own: str = "") -> dict[str, dict[str, int]]:
    """One judgment per document d0, d1, ... spread over two queries, and ``extra`` judged by this qrels alone."""
    qrels: dict[str, dict[str, int]] = {}
    for i, grade in enumerate(grades):
        qrels.setdefault(f"q{i % 2}", {})[f"d{i}"] = grade
    for i in range(extra):
        qrels.setdefault("q0", {})[f"{own}{i}"] = 1
    return qrels


@settings(max_examples=80, deadline=None)
@given(pairs)
def test_kappa_and_alpha_match_sklearn_and_krippendorff(judged: list[tuple[int, int]]) -> None:
    a, b = [x for x, _ in judged], [y for _, y in judged]
    got = label_agreement(as_qrels(a, extra=2, own="a"), as_qrels(b, extra=1, own="b"))
    assert (got.shared, got.only_first, got.only_second) == (len(judged), 2, 1)
    labels = sorted(set(a) | set(b))
    for value, weights in ((got.kappa, None), (got.kappa_linear, "linear"), (got.kappa_quadratic, "quadratic")):
        with np.errstate(all="ignore"), warnings.catch_warnings():  # one grade only: sklearn warns, gives NaN
            warnings.simplefilter("ignore")
            expected = cohen_kappa_score(a, b, labels=labels, weights=weights)
        assert value == pytest.approx(expected, abs=1e-12) or (math.isnan(value) and not np.isfinite(expected))
    for value, level in ((got.alpha_nominal, "nominal"), (got.alpha_ordinal, "ordinal"),
                         (got.alpha_interval, "interval")):
        if len(labels) < 2:  # one grade only: no disagreement to expect, alpha undefined
            assert math.isnan(value)
            continue
        expected = krippendorff.alpha(reliability_data=[a, b], level_of_measurement=level,
                                      value_domain=labels)
        assert value == pytest.approx(expected, abs=1e-12)
    matrix = np.zeros((len(labels), len(labels)), dtype=int)
    for x, y in judged:
        matrix[labels.index(x), labels.index(y)] += 1
    assert got.confusion.tolist() == matrix.tolist() and list(got.grades) == labels


def test_unjudged_labels_and_errors() -> None:
    got = label_agreement({"q": {"a": 1, "b": -1, "c": 0}}, {"q": {"a": 1, "b": 1, "c": 1}})
    assert got.shared == 2 and got.only_second == 1  # b is "pooled, not judged" in the first
    with pytest.raises(RetrievalEvalError, match="no document in common"):
        label_agreement({"q": {"a": 1}}, {"q": {"b": 1}})


def tau_ap_by_definition(truth: list[float], estimate: list[float]) -> float:
    """Yilmaz et al. (2008): with the items ranked by the estimate, p(i) is the share of the i - 1 items
    above item i that the truth also puts above it (or level with it: a tie in the truth is no error);
    tau_AP = 2 / (N - 1) * sum_{i=2..N} p(i) - 1."""
    order = sorted(range(len(estimate)), key=lambda i: -estimate[i])  # stable: ties by position
    total = 0.0
    for i in range(1, len(order)):
        total += sum(truth[order[j]] >= truth[order[i]] for j in range(i)) / i
    return 2 * total / (len(order) - 1) - 1


scores = st.lists(st.integers(0, 5), min_size=2, max_size=12)


@settings(max_examples=100, deadline=None)
@given(scores, st.data())
def test_tau_b_matches_scipy_and_tau_ap_its_definition(x: list[int], data: st.DataObject) -> None:
    y = data.draw(st.lists(st.integers(0, 5), min_size=len(x), max_size=len(x)))
    expected = scipy.stats.kendalltau(x, y).statistic
    assert tau_b(x, y) == pytest.approx(expected) or (math.isnan(tau_b(x, y)) and math.isnan(expected))
    assert tau_ap(x, y) == pytest.approx(tau_ap_by_definition(x, y))
    distinct = list(range(len(x)))
    assert tau_ap(distinct, distinct) == pytest.approx(1.0) and tau_ap(distinct, distinct[::-1]) == pytest.approx(-1.0)
    assert tau_ap(x, x) == 1.0  # ties or not


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), min_size=2, max_size=400))
def test_tau_b_of_long_vectors_with_ties_matches_scipy(pairs: list[tuple[int, int]]) -> None:
    """The merge-sort count of discordant pairs, on vectors long enough for many levels and many ties."""
    x, y = [a for a, _ in pairs], [b for _, b in pairs]
    expected = scipy.stats.kendalltau(x, y).statistic
    assert tau_b(x, y) == pytest.approx(expected, abs=1e-12) or (math.isnan(tau_b(x, y)) and math.isnan(expected))


def test_rankings_of_systems_under_two_qrels() -> None:
    first = {"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"d": 1}}
    second = {"q1": {"a": 0, "b": 1, "c": 0}, "q2": {"d": 1}}
    runs = {"s1": {"q1": {"a": 3.0, "b": 2.0}, "q2": {"d": 1.0}},
            "s2": {"q1": {"b": 3.0, "a": 2.0}, "q2": {"d": 1.0}},
            "s3": {"q1": {"c": 3.0, "a": 2.0}, "q2": {"x": 1.0}}}
    under_a = [SetEvaluator.from_dict(first, run) for run in runs.values()]
    under_b = [SetEvaluator.from_dict(second, run) for run in runs.values()]
    (rr,) = ranking_agreement(under_a, under_b, ["RR"], names=list(runs), top=1)
    assert rr.first == (1.0, 0.75, 0.25) and rr.second == (0.75, 1.0, 0.0)  # means over q1 and q2, by hand
    assert rr.tau == pytest.approx(scipy.stats.kendalltau(rr.first, rr.second).statistic)
    assert rr.tau_ap == pytest.approx(tau_ap_by_definition(list(rr.first), list(rr.second)))
    assert rr.top_overlap == 0.0  # s1 best under the first, s2 under the second


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.qrels").write_text("1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 d 1\n2 0 e 0\n")
    (tmp_path / "b.qrels").write_text("1 0 a 2\n1 0 b 1\n1 0 c 1\n2 0 d 0\n2 0 f 1\n")
    (tmp_path / "x.run").write_text("1 Q0 a 1 3 x\n1 Q0 b 2 2 x\n2 Q0 d 1 1 x\n")
    (tmp_path / "y.run").write_text("1 Q0 b 1 3 y\n1 Q0 c 2 2 y\n2 Q0 f 1 1 y\n")
    a, b = str(tmp_path / "a.qrels"), str(tmp_path / "b.qrels")
    runs = [str(tmp_path / "x.run"), str(tmp_path / "y.run")]
    assert main(["agree", a, b, *runs, "-m", "P@2", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["labels"]["shared"] == 4
    assert data["labels"]["kappa"] == pytest.approx(cohen_kappa_score([2, 0, 1, 1], [2, 1, 1, 0]))
    (p2,) = data["rankings"]
    assert [s["first"] for s in p2["systems"]] == [0.5, 0.25] and [s["second"] for s in p2["systems"]] == [0.5, 0.75]
    assert main(["agree", a, b]) == 0
    assert "kappa quadratic" in capsys.readouterr().out
    (tmp_path / "bad.qrels").write_text("1 0 a 2\n1 0 b x\n")
    assert main(["agree", a, str(tmp_path / "bad.qrels")]) == 2
    assert "bad.qrels:2:" in capsys.readouterr().err
