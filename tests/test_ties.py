"""Tie policies: ``ties="expected"`` against every tie order, ``ties="rank"``, and the orders of the tie report.

The oracle of the expected values is brute force: every order of the tied documents is given to the
normal engine as an explicit rank column (``ties="rank"``), and the values are averaged.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval import Document, Judgment, RetrievalEvaluator, SetEvaluator
from retrieval_eval.engine.build import build_batch
from retrieval_eval.engine.ties import straddles, tie_groups, tied_queries, within_ties
from retrieval_eval.measures import MeasureError, parse
from retrieval_eval.measures.registry import compute
from retrieval_eval.model import QrelsColumns, RunColumns

#: The measures with a closed form, with cutoffs that fall inside, at the edge of and past the ties.
EXPECTED_MEASURES = [
    "P@1", "P@3", "P@10", "R@2", "R@4", "AP", "AP@3", "AP(norm='min_rk')@3", "GMAP", "RR", "RR@2", "Rprec",
    "nDCG", "nDCG@3", "nDCG(dcg='exp-log2')@4", "DCG@3", "Success@1", "Success@3", "Judged@3", "NumRelRet",
    "AP(judged_only=True)", "SetP",
]
#: Those that never go down when a relevant document moves up: their extremes are the two orders of the report.
MONOTONE = ["P@1", "P@3", "R@2", "AP", "AP@3", "RR", "RR@2", "Rprec", "nDCG", "nDCG@3", "DCG@3", "Success@3"]


def _columns(groups: list[list[int]], missed: int) -> tuple[QrelsColumns, RunColumns]:
    """One query: tie groups (scores descending) of labels (-1 unjudged, else the grade), and ``missed``
    relevant documents never retrieved."""
    docs, scores, qrels_docs, grades = [], [], [], []
    for g, labels in enumerate(groups):
        for i, label in enumerate(labels):
            doc = f"d{g}_{i}"
            docs.append(doc)
            scores.append(float(len(groups) - g))
            if label >= 0:
                qrels_docs.append(doc)
                grades.append(label)
    qrels_docs += [f"m{i}" for i in range(missed)] + ["never"]  # ("never": the query has a judgment)
    grades += [1] * missed + [0]
    n = len(docs)
    qrels = QrelsColumns(np.array(["q"] * len(qrels_docs)), np.array(qrels_docs, dtype=str),
                         np.array(grades, dtype=np.int64), np.arange(1, len(grades) + 1))
    run = RunColumns(np.array(["q"] * n), np.array(docs, dtype=str), np.array(scores), np.arange(1, n + 1),
                     ranks=np.arange(1, n + 1))
    return qrels, run


def _values(qrels: QrelsColumns, run: RunColumns, ties: str, measures: list[str]) -> list[float]:
    batch, _ = build_batch(qrels, run, ties=ties)  # type: ignore[arg-type]
    return [float(compute(batch, parse(m))[0]) for m in measures]


def _every_order(groups: list[list[int]], missed: int, measures: list[str]) -> np.ndarray:
    """The measures' values for every order of every tie group: one row per order."""
    qrels, run = _columns(groups, missed)
    sizes = [len(g) for g in groups]
    starts = np.cumsum([0, *sizes[:-1]])
    rows = []
    for orders in itertools.product(*(itertools.permutations(range(n)) for n in sizes)):
        ranks = np.concatenate([start + 1 + np.argsort(order) for start, order in zip(starts, orders)])
        reranked = RunColumns(run.query_ids, run.doc_ids, run.scores, run.lines, ranks=ranks)
        rows.append(_values(qrels, reranked, "rank", measures))
    return np.array(rows)


label = st.integers(-1, 2)
tie_sets = st.lists(st.lists(label, min_size=1, max_size=5), min_size=1, max_size=4).filter(
    lambda gs: math.prod(math.factorial(len(g)) for g in gs) <= 120)


@settings(max_examples=35, deadline=None)
@given(tie_sets, st.integers(0, 2))
def test_expected_is_the_mean_over_every_tie_order(groups: list[list[int]], missed: int) -> None:
    qrels, run = _columns(groups, missed)
    expected = _values(qrels, run, "expected", EXPECTED_MEASURES)
    every = _every_order(groups, missed, EXPECTED_MEASURES)
    np.testing.assert_allclose(expected, every.mean(axis=0), rtol=1e-12, atol=1e-12)


@settings(max_examples=35, deadline=None)
@given(tie_sets, st.integers(0, 2))
def test_pessimistic_and_optimistic_orders_are_the_extremes(groups: list[list[int]], missed: int) -> None:
    qrels, run = _columns(groups, missed)
    batch, _ = build_batch(qrels, run)
    worst = within_ties(batch, batch.labels)  # relevant documents last within each tie
    best = within_ties(batch, -batch.labels)
    every = _every_order(groups, missed, MONOTONE)
    for j, name in enumerate(MONOTONE):
        assert float(compute(worst, parse(name))[0]) == pytest.approx(every[:, j].min(), abs=1e-12), name
        assert float(compute(best, parse(name))[0]) == pytest.approx(every[:, j].max(), abs=1e-12), name


def test_a_hand_computed_tie() -> None:
    # a (relevant), then b, c, d tied (c and d relevant, b not), then e: R = 3 (c graded 2).
    qrels = QrelsColumns(np.array(["q"] * 4), np.array(["a", "b", "c", "d"]), np.array([1, 0, 2, 1]), np.arange(1, 5))
    run = RunColumns(np.array(["q"] * 5), np.array(list("abcde")), np.array([3.0, 2, 2, 2, 1]), np.arange(1, 6))
    p2, ap, rr, success1 = _values(qrels, run, "expected", ["P@2", "AP", "RR", "Success@1"])
    assert p2 == pytest.approx((1 + 2 / 3) / 2)
    # AP: 1/3 * (1 + sum over ranks 2..4 of (2/3) * (1 + 1 + (i-1)/2) / (1 + i)), i = 1, 2, 3.
    assert ap == pytest.approx((1 + (2 / 3) * (2 / 2 + 2.5 / 3 + 3 / 4)) / 3)
    assert (rr, success1) == (1.0, 1.0)
    # trec_eval's order is d, c, b (ids descending): P@2 = 1.
    assert _values(qrels, run, "trec_eval", ["P@2"]) == [1.0]


def test_rr_of_a_first_tie_by_hand() -> None:
    # Four documents tied, two relevant: the first relevant one is at 1 (1/2), 2 (1/3) or 3 (1/6).
    qrels = QrelsColumns(np.array(["q"] * 2), np.array(["b", "d"]), np.array([1, 1]), np.arange(1, 3))
    run = RunColumns(np.array(["q"] * 4), np.array(list("abcd")), np.ones(4), np.arange(1, 5))
    rr, success1, success2 = _values(qrels, run, "expected", ["RR", "Success@1", "Success@2"])
    assert rr == pytest.approx(1 / 2 + (1 / 3) / 2 + (1 / 6) / 3)
    assert (success1, success2) == (pytest.approx(1 / 2), pytest.approx(5 / 6))


def test_measures_without_a_closed_form_are_refused_with_the_reason() -> None:
    qrels, run = _columns([[1, 0], [1]], 0)
    batch, _ = build_batch(qrels, run, ties="expected")
    for name in ("Bpref", "ERR@10", "infAP", "AP(norm='retrieved')@2"):
        with pytest.raises(MeasureError, match="closed form"):
            compute(batch, parse(name))


def test_rank_breaks_ties_by_the_rank_column_then_by_id() -> None:
    qrels = QrelsColumns(np.array(["q"]), np.array(["a"]), np.array([1]), np.array([1]))
    # a, b, c tied; ranks put a first; b and c share a rank, so ids descending: c before b.
    run = RunColumns(np.array(["q"] * 4), np.array(list("abcd")), np.array([1.0, 1, 1, 2]), np.arange(1, 5),
                     ranks=np.array([1, 3, 3, 9]))
    batch, _ = build_batch(qrels, run, ties="rank")
    assert batch.doc_ids.tolist() == [b"d", b"a", b"c", b"b"]  # scores first: the rank column only breaks ties
    assert _values(qrels, run, "rank", ["RR"]) == [0.5]
    with pytest.raises(ValueError, match="rank column"):
        build_batch(qrels, RunColumns(run.query_ids, run.doc_ids, run.scores, run.lines), ties="rank")


def test_expected_refuses_a_depth_and_unknown_policies() -> None:
    qrels, run = _columns([[1, 0]], 0)
    with pytest.raises(ValueError, match="max_depth"):
        build_batch(qrels, run, ties="expected", max_depth=1)
    with pytest.raises(ValueError, match="'ties' must be one of"):
        build_batch(qrels, run, ties="random")  # type: ignore[arg-type]


def test_tie_groups_and_straddles() -> None:
    qrels, run = _columns([[1], [0, 1, 0], [0, 0]], 0)
    batch, _ = build_batch(qrels, run)
    groups = tie_groups(batch)
    assert groups.size.tolist() == [1, 3, 2] and groups.before.tolist() == [0, 1, 4]
    assert tied_queries(batch).tolist() == [True]
    assert [bool(straddles(batch, k)[0]) for k in (1, 2, 3, 4, 5, 6)] == [False, True, True, False, True, False]


def test_the_api_takes_ties_everywhere() -> None:
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0}, "q2": {"x": 1.0, "c": 1.0}}
    # q1: a and b tied (P@1 = 1 by trec_eval's ids descending? b first: 0); q2: x first (c after): RR 0.5.
    assert SetEvaluator.from_dict(qrels, run).per_query("P@1") == {"q1": 0.0, "q2": 0.0}
    assert SetEvaluator.from_dict(qrels, run, ties="expected").per_query("P@1") == {"q1": 0.5, "q2": 0.5}
    import retrieval_eval

    assert retrieval_eval.evaluate(qrels, run, "RR", ties="expected") == {"RR": 0.75}
    ev = RetrievalEvaluator("q", [Document("a", score=1.0), Document("b", score=1.0)], [Judgment("b", 1)],
                            ties="expected")
    assert (ev.precision(1), ev.reciprocal_rank()) == (0.5, 0.75)
    with pytest.raises(ValueError, match="rank column"):
        SetEvaluator.from_dict(qrels, run, ties="rank")


def test_large_ties_against_exact_fractions() -> None:
    # 3 relevant among 200 tied documents after 2 non-relevant ones: too many orders to enumerate, so
    # the sums of the closed forms' definitions are taken with exact binomials instead.
    from fractions import Fraction
    from math import comb

    n, r, t = 200, 3, 2
    labels = [0] * t + [1] * r + [0] * (n - r)
    docs = [f"d{i:03d}" for i in range(len(labels))]
    qrels = QrelsColumns(np.array(["q"] * len(docs)), np.array(docs), np.array(labels), np.arange(1, len(docs) + 1))
    scores = np.array([2.0] + [1.5] + [1.0] * n)
    run = RunColumns(np.array(["q"] * len(docs)), np.array(docs), scores, np.arange(1, len(docs) + 1))
    rr, success, p10, ap = _values(qrels, run, "expected", ["RR", "Success@12", "P@10", "AP"])
    # P(first relevant at place i) = C(n - i, r - 1) / C(n, r).
    exact_rr = sum(Fraction(comb(n - i, r - 1), comb(n, r)) / (t + i) for i in range(1, n - r + 2))
    assert rr == pytest.approx(float(exact_rr), rel=1e-12)
    assert success == pytest.approx(1 - comb(n - r, 10) / comb(n, 10), rel=1e-12)
    assert p10 == pytest.approx(8 * r / n / 10, rel=1e-12)
    assert 0 < ap < 1


def test_ap_of_a_large_tie_over_every_placement_of_its_relevant_documents() -> None:
    # 3 relevant among 40 tied documents: each set of their 3 places is equally likely (9,880 sets).
    from fractions import Fraction

    n, r, t = 40, 3, 2
    labels = [0] * t + [1] * r + [0] * (n - r)
    docs = [f"d{i:03d}" for i in range(len(labels))]
    qrels = QrelsColumns(np.array(["q"] * len(docs)), np.array(docs), np.array(labels), np.arange(1, len(docs) + 1))
    run = RunColumns(np.array(["q"] * len(docs)), np.array(docs), np.array([2.0, 1.5] + [1.0] * n),
                     np.arange(1, len(docs) + 1))
    [ap] = _values(qrels, run, "expected", ["AP"])
    total, sets = Fraction(0), 0
    for places in itertools.combinations(range(1, n + 1), r):
        total += sum(Fraction(m, t + place) for m, place in enumerate(places, 1)) / r
        sets += 1
    assert ap == pytest.approx(float(total / sets), rel=1e-12)
