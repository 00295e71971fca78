"""Measures of search and recommendation logs: AUC, GAUC, PooledAUC, HitRate and AP(norm='min_rk').

AUC is checked by hand and against scikit-learn's ``roc_auc_score`` (the Mann-Whitney statistic with
ties counted 1/2); GAUC against the plain and weighted means of those values; PooledAUC against
``roc_auc_score`` on the rows of every query together; AP(norm='min_rk') against the worked example
of Spark's RankingMetrics test suite.
"""

from __future__ import annotations

import numpy as np
import pytest

from retrieval_eval import RetrievalEvaluator, SetEvaluator
from retrieval_eval.measures import parse
from retrieval_eval.model import Document, Judgment

#: Measures with hand-computed and oracle-checked cases here (read by test_completeness.py).
HAND_COMPUTED = {"AUC", "GAUC", "PooledAUC"}
ORACLE_CHECKED = {"AUC", "GAUC", "PooledAUC"}

# q1: positives a (3) and c (1), negatives b (2) and d (1): a beats b and d, c loses to b and ties d,
# so AUC = (2 + 0 + 0.5) / 4. q2: the one positive on top of two negatives, AUC = 1. q3: positives only.
QRELS = {"q1": {"a": 1, "b": 0, "c": 2, "d": 0}, "q2": {"x": 0, "y": 1, "z": 0}, "q3": {"s": 1}}
RUN = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 1.0}, "q2": {"x": 0.5, "y": 0.9, "z": 0.1}, "q3": {"s": 1.0}}


@pytest.mark.parametrize(("measure", "expected"), [
    ("AUC", {"q1": 0.625, "q2": 1.0, "q3": 0.0}),
    # At rel=2 only c is positive in q1: it loses to a (3) and b (2) and ties d (1). q2 has no positive.
    ("AUC(rel=2)", {"q1": 0.5 / 3, "q2": 0.0, "q3": 0.0}),
    ("GAUC", {"q1": 0.625, "q2": 1.0, "q3": 0.0}),
    ("PooledAUC", {"q1": 0.625, "q2": 1.0, "q3": 0.0}),  # per query, a query's rows pooled: its AUC
])
def test_auc_per_query_by_hand(measure: str, expected: dict[str, float]) -> None:
    assert SetEvaluator.from_dict(QRELS, RUN).per_query(measure) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(("measure", "expected", "left_out"), [
    ("AUC", (0.625 + 1.0) / 2, ["q3"]),  # q3 has no pair: its AUC is undefined, left out as by GAUC
    ("GAUC", (0.625 + 1.0) / 2, ["q3"]),
    # Every row together: positives a (3), c (1), y (0.9), s (1); negatives b (2), d (1), x (0.5),
    # z (0.1). a beats all 4; c beats x, z and ties d; y beats x, z; s beats x, z and ties d: 11 of 16.
    ("PooledAUC", 11 / 16, []),
    ("GAUC(weight='impressions')", (4 * 0.625 + 3 * 1.0) / 7, ["q3"]),
    ("GAUC(weight='positives')", (2 * 0.625 + 1 * 1.0) / 3, ["q3"]),
])
def test_auc_and_gauc_summaries_by_hand(measure: str, expected: float, left_out: list[str]) -> None:
    results = SetEvaluator.from_dict(QRELS, RUN)
    assert results.aggregate(measure) == pytest.approx(expected, abs=1e-15)
    assert results.left_out(measure) == left_out


def test_edge_cases_by_hand() -> None:
    def auc(judged: dict[str, int], scores: dict[str, float], **options: object) -> float:
        return SetEvaluator.from_dict({"q": judged}, {"q": scores}, **options).per_query("AUC")["q"]  # type: ignore[arg-type]

    assert auc({"a": 1, "b": 0, "c": 0}, {"a": 1.0, "b": 1.0, "c": 1.0}) == 0.5  # all tied
    assert auc({"a": 1, "b": 0, "c": 0}, {"a": 0.0, "b": 1.0, "c": 2.0}) == 0.0  # positive at the bottom
    assert auc({"a": 1, "b": 1}, {"a": 1.0, "b": 2.0}) == 0.0  # one class: no pair
    assert auc({"a": 1}, {}) == 0.0  # nothing retrieved
    # An unjudged document is a negative, unless -J (judged_only) removes it.
    judged, scores = {"a": 1, "n": 0}, {"a": 2.0, "n": 1.0, "u": 3.0}
    assert auc(judged, scores) == 0.5
    assert auc(judged, scores, judged_only=True) == 1.0
    # A query with no two-class pair at all: GAUC's summary is 0, and says it left the query out.
    single = SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": 1.0}})
    assert (single.aggregate("GAUC"), single.left_out("GAUC")) == (0.0, ["q"])


def _random_case(rng: np.random.Generator, n_queries: int) -> tuple[dict, dict]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 40)))]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in docs if rng.random() < 0.8} or {"extra": 1}
        run[f"q{q}"] = {d: float(rng.integers(0, 6)) / 2 for d in docs}  # few distinct scores: many ties
    return qrels, run


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("judged_only", [False, True])
def test_auc_equals_sklearn_and_gauc_its_means(seed: int, rel: int, judged_only: bool) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    qrels, run = _random_case(np.random.default_rng(seed), 60)
    results = SetEvaluator.from_dict(qrels, run, judged_only=judged_only)
    values = results.per_query(f"AUC(rel={rel})")
    reference, sizes, positives = {}, {}, {}
    for q, scores in run.items():
        docs = [d for d in scores if not judged_only or qrels[q].get(d, -1) >= 0]
        labels = [int(qrels[q].get(d, -1) >= rel) for d in docs]
        if 0 < sum(labels) < len(labels):
            reference[q] = metrics.roc_auc_score(labels, [scores[d] for d in docs])
            sizes[q], positives[q] = len(labels), sum(labels)
        else:
            assert values[q] == 0.0
    assert reference, "the random case must hold two-class queries"
    assert {q: values[q] for q in reference} == pytest.approx(reference, abs=1e-12)
    assert sorted(results.left_out(f"GAUC(rel={rel})")) == sorted(set(run) - set(reference))
    found = [reference[q] for q in reference]
    assert results.aggregate(f"GAUC(rel={rel})") == pytest.approx(np.mean(found), abs=1e-12)
    for weight, of in (("impressions", sizes), ("positives", positives)):
        expected = np.average(found, weights=[of[q] for q in reference])
        assert results.aggregate(f"GAUC(rel={rel}, weight={weight!r})") == pytest.approx(expected, abs=1e-12)
    assert results.aggregate(f"AUC(rel={rel})") == results.aggregate(f"GAUC(rel={rel})")


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("judged_only", [False, True])
def test_pooled_auc_equals_sklearn_on_every_row(seed: int, rel: int, judged_only: bool) -> None:
    """PooledAUC is roc_auc_score of all the rows of all the queries, ties included (few distinct scores)."""
    metrics = pytest.importorskip("sklearn.metrics")
    qrels, run = _random_case(np.random.default_rng(seed), 60)
    results = SetEvaluator.from_dict(qrels, run, judged_only=judged_only)
    labels, scores = [], []
    for q, ranking in run.items():
        for d, score in ranking.items():
            if not judged_only or qrels[q].get(d, -1) >= 0:
                labels.append(int(qrels[q].get(d, -1) >= rel))
                scores.append(score)
    assert results.aggregate(f"PooledAUC(rel={rel})") == pytest.approx(metrics.roc_auc_score(labels, scores),
                                                                       rel=1e-15, abs=0)
    assert results.per_query(f"PooledAUC(rel={rel})") == results.per_query(f"AUC(rel={rel})")


def test_auc_compares_scores_whatever_the_ranking_order() -> None:
    """A RetrievalEvaluator ranks by list position: AUC must still read the scores (the unsorted path)."""
    rng = np.random.default_rng(7)
    docs = [Document(f"d{i}", score=float(rng.integers(0, 4))) for i in range(50)]
    judgments = [Judgment(f"d{i}", int(rng.integers(0, 2))) for i in range(50)]
    by_score = sorted(docs, key=lambda d: -d.score)  # type: ignore[operator]
    shuffled = RetrievalEvaluator("q", docs, judgments).score("AUC")
    assert shuffled == RetrievalEvaluator("q", by_score, judgments).score("AUC")
    assert 0.0 < shuffled < 1.0


def test_hit_rate_is_success() -> None:
    assert parse("HitRate@10") == parse("Success@10")
    results = SetEvaluator.from_dict(QRELS, RUN)
    for k in (1, 2, 3):
        assert results.per_query(f"HitRate@{k}") == results.per_query(f"Success@{k}")
    assert results.per_query("HitRate@1") == {"q1": 1.0, "q2": 1.0, "q3": 1.0}


def test_ap_min_rk_on_sparks_worked_example() -> None:
    """Spark's RankingMetricsSuite: meanAveragePrecisionAt(1, 2, 3) = 0.333334, 0.25, 0.24074 (computed
    here from the definition: precision at each relevant rank within k, over min(R, k))."""
    ranked = {"1": [1, 6, 2, 7, 8, 3, 9, 10, 4, 5], "2": [4, 1, 5, 6, 2, 7, 3, 8, 9, 10], "3": [1, 2, 3, 4, 5]}
    relevant = {"1": [1, 2, 3, 4, 5], "2": [1, 2, 3], "3": []}
    qrels = {q: {str(d): 1 for d in docs} or {"none": 0} for q, docs in relevant.items()}
    run = {q: {str(d): float(100 - i) for i, d in enumerate(docs)} for q, docs in ranked.items()}
    results = SetEvaluator.from_dict(qrels, run)
    assert results.mean("AP(norm='min_rk')@1") == pytest.approx(1 / 3, abs=1e-15)
    assert results.mean("AP(norm='min_rk')@2") == pytest.approx((1 / 2 + (1 / 2) / 2) / 3, abs=1e-15)
    assert results.mean("AP(norm='min_rk')@3") == pytest.approx(((1 + 2 / 3) / 3 + (1 / 2) / 3) / 3, abs=1e-15)
    assert results.mean("AP(norm='min_rk')@3") == pytest.approx(0.24074, abs=1e-5)
    assert results.mean("AP") == pytest.approx(0.355026, abs=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_ap_min_rk_rescales_ap_at_k(seed: int) -> None:
    qrels, run = _random_case(np.random.default_rng(seed), 40)
    results = SetEvaluator.from_dict(qrels, run)
    n_rel = results.array("NumRel")
    for k in (1, 5, 20):
        expected = np.where(n_rel > 0, results.array(f"AP@{k}") * n_rel / np.maximum(np.minimum(n_rel, k), 1), 0.0)
        assert results.array(f"AP(norm='min_rk')@{k}") == pytest.approx(expected, abs=1e-12)
    assert results.per_query("AP(norm='min_rk')") == results.per_query("AP")  # no cutoff: min(R, inf) = R
