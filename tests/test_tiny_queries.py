"""The shortcuts for many tiny queries (issue 16's sessions-1 shape: millions of queries of one
document), each checked against the plain Python oracles of :mod:`reference` or against the general
path it replaces, on inputs that take both branches."""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import Qrels, Run, evaluation_cases, judgments, ranking

import retrieval_eval.measures.precision as precision_module
from retrieval_eval import SetEvaluator
from retrieval_eval.engine.batch import RankedBatch
from retrieval_eval.engine.segments import _offsets_of, safe_div

RECALL_POINTS = tuple(i / 10 for i in range(11))


@st.composite
def one_document_cases(draw: st.DrawFn) -> tuple[Qrels, Run]:
    """Queries of at most one retrieved document each (the sessions-1 shape), or of a few."""
    most = draw(st.sampled_from((1, 1, 3)))
    qids = [f"s{i}" for i in range(draw(st.integers(1, 6)))]
    qrels = {qid: draw(judgments(max_size=3)) for qid in qids}
    run = {qid: draw(ranking(judged=qrels[qid], max_size=most)) for qid in qids if draw(st.booleans()) or qid == "s0"}
    return qrels, run


cases = st.one_of(one_document_cases(), evaluation_cases())


def _fresh(qrels: Qrels, run: Run, rel: int) -> SetEvaluator:
    return SetEvaluator.from_dict(qrels, run, rel=rel)


@settings(max_examples=300, deadline=None)
@given(case=cases, rel=st.sampled_from([1, 2]))
def test_rank_measures_equal_the_oracles(case: tuple[Qrels, Run], rel: int) -> None:
    """Bpref (both when a non-relevant document is above a hit and when none is), RR, AP, nDCG and
    IPrec at every recall level equal the one-query oracles."""
    qrels, run = case
    ev = _fresh(qrels, run, rel)
    values = {m: ev.per_query(m) for m in ("Bpref", "RR", "AP", "nDCG", "nDCG@1", "nDCG@10")}
    for qid in ev:
        docs, judged = reference.rank(run.get(qid, {})), qrels[qid]
        assert values["Bpref"][qid] == pytest.approx(reference.bpref(docs, judged, rel), abs=1e-12)
        assert values["RR"][qid] == reference.reciprocal_rank(docs, judged, rel)
        assert values["AP"][qid] == pytest.approx(reference.average_precision(docs, judged, rel), abs=1e-12)
        for k, m in ((None, "nDCG"), (1, "nDCG@1"), (10, "nDCG@10")):
            assert values[m][qid] == pytest.approx(reference.ndcg(docs, judged, k), abs=1e-12)
        for point in RECALL_POINTS:
            expected = reference.interpolated_precision(docs, judged, point, rel)
            expected = 0.0 if math.isnan(expected) else expected  # an empty ranking: documented 0
            assert ev[qid].score(f"IPrec@{point}") == pytest.approx(expected, abs=1e-12), (qid, point)


@settings(max_examples=150, deadline=None)
@given(case=cases, rel=st.sampled_from([1, 2]), subset=st.sampled_from([0.0, 1.1]))
def test_iprec_in_both_layouts_equals_the_oracle(case: tuple[Qrels, Run], rel: int, subset: float) -> None:
    """IPrec with every query's arrays (subset 0.0) and with those of the queries with hits only (1.1)."""
    qrels, run = case
    old = precision_module._IPREC_SUBSET
    try:
        precision_module._IPREC_SUBSET = subset
        ev = _fresh(qrels, run, rel)
        values = {point: ev.per_query(f"IPrec@{point}") for point in (*RECALL_POINTS, 0.25, 0.75)}
    finally:
        precision_module._IPREC_SUBSET = old
    for qid in ev:
        docs, judged = reference.rank(run.get(qid, {})), qrels[qid]
        for point, by_query in values.items():
            expected = reference.interpolated_precision(docs, judged, point, rel)
            assert by_query[qid] == (0.0 if math.isnan(expected) else expected), (qid, point)


def test_iprec_reads_its_cut_off_table_for_large_r() -> None:
    """R up to 40 (lround(R * p) takes many values; halves round up): every level equals the oracle."""
    qrels = {f"q{r}": {f"d{i}": 1 for i in range(r)} for r in range(1, 41)}
    run = {q: {d: -float(i) for i, d in enumerate(list(docs)[::3])} for q, docs in qrels.items()}
    ev = _fresh(qrels, run, 1)
    for point in (*RECALL_POINTS, 0.05, 0.25, 0.45, 0.55):
        got = ev.per_query(f"IPrec@{point}")
        for qid in ev:
            assert got[qid] == reference.interpolated_precision(reference.rank(run[qid]), qrels[qid], point, 1)


def _batch(case: tuple[Qrels, Run]) -> RankedBatch:
    qrels, run = case
    return _fresh(qrels, run, 1)._batch


def _same_hits(a: object, b: object) -> bool:
    names = ("row", "query", "rank", "position", "offsets")
    return all(np.array_equal(getattr(a, n), getattr(b, n)) for n in names)


@settings(max_examples=200, deadline=None)
@given(case=cases, rel=st.sampled_from([1, 2, 3]))
def test_hits_from_the_labels_equal_the_subset_of_the_judged_hits(case: tuple[Qrels, Run], rel: int) -> None:
    """A threshold's hits made straight from the labels (judged hits not made) equal those made as
    a subset of the judged hits."""
    direct, via_judged = _batch(case), _batch(case)
    via_judged.hits(0)
    assert ("hits", 0) not in direct._cache
    assert _same_hits(direct.hits(rel), via_judged.hits(rel))


@settings(max_examples=200, deadline=None)
@given(case=cases, rel=st.sampled_from([0, 1, 2, 3]))
def test_nonrelevant_above_equals_the_table_of_non_relevant_hits(case: tuple[Qrels, Run], rel: int) -> None:
    """Judged non-relevant rows above each hit, by binary search, equal the count from the per-query
    table of non-relevant hits (what Bpref and infAP used before)."""
    b = _batch(case)
    hits = b.hits(rel)
    expected = b.nonrelevant_hits(rel).above(hits.row, hits.query)
    assert np.array_equal(b.nonrelevant_above(rel), expected)


def test_bpref_takes_both_branches() -> None:
    """One document per query: no non-relevant document above a hit (each term 1); a deeper query:
    the penalised terms. Both equal the oracle."""
    qrels = {"a": {"x": 1, "y": 0}, "b": {"z": 1}}
    for run in ({"a": {"x": 1.0}, "b": {"w": 1.0}}, {"a": {"y": 2.0, "x": 1.0}, "b": {"z": 1.0}}):
        ev = _fresh(qrels, run, 1)
        assert ev.per_query("Bpref") == {q: reference.bpref(reference.rank(run[q]), qrels[q], 1) for q in qrels}
    assert ev.per_query("Bpref")["a"] == 0.0


def test_ndcg_ideal_list_shared_or_copied() -> None:
    """Every judgment positive (the ideal list shares the judged rows' query index) or some not
    (it keeps a subset): nDCG equals the oracle either way."""
    for qrels in ({"a": {"x": 1, "y": 2}, "b": {"z": 1}}, {"a": {"x": 1, "y": 0, "v": -1}, "b": {"z": 3, "w": 0}}):
        run = {"a": {"y": 1.0, "v": 0.5, "x": 0.2}, "b": {"w": 1.0, "z": 0.5}}
        ev = _fresh(qrels, run, 1)
        for k in (None, 1, 2):
            got = ev.per_query("nDCG" if k is None else f"nDCG@{k}")
            for q in qrels:
                assert got[q] == pytest.approx(reference.ndcg(reference.rank(run[q]), qrels[q], k), abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-(2**62), 2**62), st.integers(-5, 2**60)), max_size=20))
def test_safe_div_of_integers_equals_the_float64_quotient(pairs: list[tuple[int, int]]) -> None:
    """Integers are divided as the float64 values they convert to; 0 where the denominator is 0."""
    num = np.array([p[0] for p in pairs], dtype=np.int64)
    den = np.array([p[1] for p in pairs], dtype=np.int64)
    expected = [float(a) / float(b) if b else 0.0 for a, b in pairs]
    assert safe_div(num, den).tolist() == expected
    assert safe_div(1.0, den).tolist() == [1.0 / float(b) if b else 0.0 for b in den.tolist()]


@given(st.lists(st.integers(0, 50), max_size=20))
def test_offsets_are_the_running_sum_from_zero(lengths: list[int]) -> None:
    offsets = _offsets_of(np.array(lengths, dtype=np.int64))
    assert offsets.tolist() == [0, *np.cumsum(lengths, dtype=np.int64).tolist()]
    assert offsets.dtype == np.int64


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 20), max_size=30), st.sampled_from([0, 8, 10**9]))
def test_segment_ids_both_ways_repeat_each_query_index(lengths: list[int], long_segments: int) -> None:
    """Counting segment starts (short segments) and repeating indices (long ones) both give each row its segment."""
    import retrieval_eval.engine.segments as segments_module

    old = segments_module._LONG_SEGMENTS
    try:
        segments_module._LONG_SEGMENTS = long_segments
        ids = segments_module.segment_ids(_offsets_of(np.array(lengths, dtype=np.int64)))
    finally:
        segments_module._LONG_SEGMENTS = old
    assert ids.dtype == np.int64
    assert ids.tolist() == [i for i, n in enumerate(lengths) for _ in range(n)]
