"""The kernels' paths for blocks of many short queries (issue 16's sessions shapes: millions of queries
of one or a few documents), each checked against the path it replaces (which long queries still
take) on segments that include empty ones, and against the one-query oracles of :mod:`reference`."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
import reference
import test_blocks

import retrieval_eval.engine.batch as batch_module
import retrieval_eval.engine.segments as segments_module
from retrieval_eval import SetEvaluator
from retrieval_eval.engine.batch import Hits, RankedBatch
from retrieval_eval.engine.segments import _offsets_of, safe_div, segment_ids, segment_suffix_max
from retrieval_eval.measures import AP, GMAP, IDCG, IPrec, compute, compute_text, graded
from retrieval_eval.measures.gains import ideal_list, styled

RECALL_POINTS = tuple(i / 10 for i in range(11))


def _lengths(seed: int, most: int) -> np.ndarray:
    """Segment lengths 0..most, with empty segments first, among the others and last."""
    rnd = np.random.default_rng(seed)
    lengths = rnd.integers(0, most + 1, 50)
    lengths[[0, 9, 10, -1]] = 0
    return lengths


def _same_hits(a: Hits, b: Hits) -> bool:
    names = ("row", "query", "rank", "position", "offsets")
    return all(np.array_equal(getattr(a, n), getattr(b, n)) and getattr(a, n).dtype == np.int64 for n in names)


@pytest.mark.parametrize("seed", range(6))
def test_hits_read_from_the_query_index_equal_those_searched_for(seed: int) -> None:
    """Each hit's query read from the index of every row (short segments) or found by binary search
    among the segment starts (long ones): the same hits, ranks and positions."""
    offsets = _offsets_of(_lengths(seed, 3 if seed % 2 else 12))
    rows = np.flatnonzero(np.random.default_rng(seed).random(int(offsets[-1])) < 0.5)
    searched = Hits.of_rows(rows, offsets)
    assert _same_hits(Hits.of_rows(rows, offsets, segment_ids(offsets).take(rows)), searched)
    assert searched.query.tolist() == [int(np.searchsorted(offsets, r, side="right")) - 1 for r in rows]


@pytest.mark.parametrize("long", [False, True])
def test_query_of_rows_read_from_the_index_or_searched_for(long: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``RankedBatch.query_of``: each row's query, read from the query index of the rows when segments
    are taken as short, found by binary search (no index made) when taken as long."""
    monkeypatch.setattr(segments_module, "_LONG_SEGMENTS", 0 if long else 10**9)
    indexed: list[int] = []
    monkeypatch.setattr(batch_module, "segment_ids", lambda offsets: indexed.append(1) or segment_ids(offsets))
    batch = _batch([2, 0, 3, 1, 0], [0] * 6)
    rows = np.array([0, 1, 2, 4, 5])
    assert batch.query_of(rows).tolist() == [0, 0, 2, 2, 3]
    assert batch.query_of(rows[:0]).tolist() == []
    assert bool(indexed) != long


def _batch(lengths: list[int], labels: list[int]) -> RankedBatch:
    """A batch of segments ``lengths`` whose ranked rows have ``labels`` (judged rows: one per query)."""
    offsets = _offsets_of(np.array(lengths, dtype=np.int64))
    n, rows = len(lengths), int(offsets[-1])
    return RankedBatch(
        query_vocab=np.array([f"q{i}".encode() for i in range(n)]),
        offsets=offsets,
        labels=np.array(labels, dtype=np.int64),
        doc_ids=np.array([b"d"] * rows),
        scores=np.zeros(rows),
        judged_offsets=np.arange(n + 1, dtype=np.int64),
        judged_relevance=np.ones(n, dtype=np.int64),
        judged_doc_ids=np.array([b"d"] * n),
        in_run=np.ones(n, dtype=bool),
    )


def test_a_batch_of_short_queries_finds_its_hits_through_the_query_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short segments: the hits come from the query index of the rows; long ones do without it."""
    indexed: list[int] = []
    monkeypatch.setattr(batch_module, "segment_ids", lambda offsets: indexed.append(1) or segment_ids(offsets))
    assert _batch([1, 0, 2, 1], [1, -1, 1, 0]).hits(1).query.tolist() == [0, 2] and indexed
    indexed.clear()
    assert _batch([0, 20], [1, -1, 1] + [0] * 17).hits(1).query.tolist() == [1, 1] and not indexed


@pytest.mark.parametrize("lengths", [[1] * 7, [1], [], [1, 0, 2, 1], [0, 1, 1, 1, 1], [2, 1, 1, 0]])
def test_segment_ids_of_one_row_per_segment_and_of_as_many_rows_otherwise(lengths: list[int]) -> None:
    """One row in every segment (the index is the row number) against as many rows as segments but
    some empty: each row gets its segment either way."""
    ids = segment_ids(_offsets_of(np.array(lengths, dtype=np.int64)))
    assert ids.dtype == np.int64
    assert ids.tolist() == [i for i, n in enumerate(lengths) for _ in range(n)]


def _one_document_data(seed: int) -> tuple[str, str]:
    """Qrels and a run of 80 queries of at most one document (most of exactly one: the sessions-1
    shape), judged relevant, non-relevant, negatively or not at all; some queries the run lacks."""
    rnd = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(80):
        qid = f"s{q:02d}"
        for d in range(int(rnd.integers(1, 4))):
            qrels.append(f"{qid} 0 d{d} {int(rnd.choice([-1, 0, 1, 1, 2]))}")
        if q % 17 != 3:
            run.append(f"{qid} Q0 d{int(rnd.integers(0, 5))} 1 1.0 r")
    if seed % 2:
        run.append("s99 Q0 d0 1 1.0 r")  # a run query without judgments
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("shape", ["one document", "mixed"])
def test_every_measure_is_the_same_with_short_and_long_segment_paths(
    seed: int,
    shape: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every registered measure, its segments all taken as short and all taken as long: the same bits."""
    qrels, run = _one_document_data(seed) if shape == "one document" else test_blocks._data(seed)
    values = []
    for threshold in (10**9, 0):
        monkeypatch.setattr(segments_module, "_LONG_SEGMENTS", threshold)
        batch = SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO(run), subtopics=True)._batch  # type: ignore[arg-type]
        values.append(
            [
                compute_text(batch, m) if m.definition.text else compute(batch, m).tobytes()
                for m in test_blocks._measures()
            ]
        )
    for measure, short, long in zip(test_blocks._measures(), *values):
        assert short == long, measure


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("long", [False, True])
def test_nonrelevant_above_by_running_count_or_binary_search(
    seed: int, long: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judged non-relevant rows above each hit, counted along the rows (short segments) or found by
    binary search (long ones), equal the count from the per-query table of non-relevant hits; with
    only hits above every hit (one document per query) they are all 0 without either."""
    monkeypatch.setattr(segments_module, "_LONG_SEGMENTS", 0 if long else 10**9)
    qrels, run = _one_document_data(seed) if seed < 2 else test_blocks._data(seed)
    batch = SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO(run), subtopics=True)._batch  # type: ignore[arg-type]
    for rel in (0, 1, 2):
        hits = batch.hits(rel)
        expected = batch.nonrelevant_hits(rel).above(hits.row, hits.query)
        assert np.array_equal(batch.nonrelevant_above(rel), expected)
        assert (seed < 2) == bool((hits.rank == hits.position).all())  # which of the ways is taken
        assert batch.nonrelevant_above(rel).dtype == np.int64


@pytest.mark.parametrize("negative", [False, True])
@pytest.mark.parametrize("long", [False, True])
def test_r_and_nr_count_the_judgments_with_and_without_negative_ones(
    negative: bool, long: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R at every threshold (at 0: each query's number of judgments when none is negative) and NR (the
    judgments >= 0 less R) against counts of the qrels, with long and short segments."""
    monkeypatch.setattr(segments_module, "_LONG_SEGMENTS", 0 if long else 10**9)
    qrels = {f"q{q}": {f"d{d}": (d * q) % 4 - (1 if negative else 0) for d in range(q % 5 + 1)} for q in range(12)}
    run = {q: {"d0": 1.0} for q in qrels}
    batch = SetEvaluator.from_dict(qrels, run)._batch
    order = batch.query_ids
    for rel in (-1, 0, 1, 2, 3):
        assert batch.n_relevant(rel).tolist() == [sum(v >= max(rel, 0) for v in qrels[q].values()) for q in order]
        assert batch.n_nonrelevant(rel).tolist() == [sum(0 <= v < rel for v in qrels[q].values()) for q in order]
        assert batch.n_relevant(rel).dtype == batch.n_nonrelevant(rel).dtype == np.int64


def test_safe_div_of_scalars_and_broadcast_shapes() -> None:
    """0.0 wherever the denominator is 0, whatever the shapes (a scalar either side, or both)."""
    assert safe_div(1.0, 0).tolist() == 0.0 and safe_div(3, 2).tolist() == 1.5
    assert safe_div(np.array([1.0, -2.0]), 0).tolist() == [0.0, 0.0]
    assert safe_div(np.array([1.0, -2.0]), 4).tolist() == [0.25, -0.5]
    assert safe_div(np.array([[1.0], [2.0]]), np.array([0, 2])).tolist() == [[0.0, 0.5], [0.0, 1.0]]
    assert safe_div(np.array([0.0, np.inf]), np.array([0.0, 0.0])).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("most", [1, 3])
@pytest.mark.parametrize("seed", range(3))
def test_segment_suffix_max_of_short_segments(most: int, seed: int) -> None:
    """Segments of at most one row (each row is the rest of its segment: returned as is) and of a few
    (the query index read from the short segments' index): the plain max of every rest of segment."""
    rnd = np.random.default_rng(seed)
    offsets = _offsets_of(_lengths(seed, most))
    values = np.round(rnd.random(int(offsets[-1])), 1)
    expected = [values[i:end].max() for start, end in itertools.pairwise(offsets) for i in range(start, end)]
    assert segment_suffix_max(values, offsets).tolist() == expected


def _one_document_evaluator(seed: int) -> SetEvaluator:
    qrels, run = _one_document_data(seed)
    return SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO(run))  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(3))
def test_recall_levels_that_cut_alike_share_their_values_but_not_their_arrays(seed: int) -> None:
    """With R of 1 or 2 most recall levels skip as many hits: their values, computed once, equal
    each level's own computation (a batch that never saw another level), in arrays of their own."""
    batch = _one_document_evaluator(seed)._batch
    levels = [compute(batch, IPrec(recall=p)) for p in RECALL_POINTS]
    assert len({key for key in batch._cache if key[0] == "iprec-values"}) < len(RECALL_POINTS)
    for point, shared in zip(RECALL_POINTS, levels):
        alone = compute(_one_document_evaluator(seed)._batch, IPrec(recall=point))
        assert shared.tobytes() == alone.tobytes(), point
    levels[0][:] = -1.0  # a caller's changes reach no other level
    assert compute(batch, IPrec(recall=0.0)).min() >= 0.0 and levels[1].min() >= 0.0


@pytest.mark.parametrize("seed", range(4))
def test_reciprocal_rank_of_first_hits_within_a_cutoff(seed: int) -> None:
    """RR and RR@k, with one hit per query (no first hits to pick) and with several, against the oracle."""
    qrels, run = _one_document_data(seed) if seed < 2 else test_blocks._data(seed)
    ev = SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO(run), subtopics=True)  # type: ignore[arg-type]
    by_query = {q: {} for q in ev}
    for line in run.splitlines():
        qid, _, doc, _, score, _ = line.split()
        if qid in by_query:
            by_query[qid][doc] = float(score)
    judged = {q: {} for q in ev}
    for line in qrels.splitlines():
        qid, _, doc, value = line.split()
        judged[qid][doc] = max(judged[qid].get(doc, -1), int(value))
    for k in (None, 1, 2, 3):
        got = ev.per_query("RR" if k is None else f"RR@{k}")
        for qid in ev:
            docs = reference.rank(by_query[qid])[:k]
            assert got[qid] == reference.reciprocal_rank(docs, judged[qid], 1), (qid, k)


@pytest.mark.parametrize("qrels_values", [(1, 0, -1), (1, 1, 0), (0,), (2, 1, 0, -1)])
@pytest.mark.parametrize("dcg", ["log2", "exp-log2"])
def test_ideal_dcg_of_binary_judgments_read_from_one_table(qrels_values: tuple[int, ...], dcg: str) -> None:
    """Binary judgments: the ideal DCG at every cutoff (and none) read from one running sum equals, to
    the bit, the sum over each query's ideal list; graded ones take the ideal lists."""
    rnd = np.random.default_rng(len(qrels_values))
    qrels = {f"q{q}": {f"d{d}": int(rnd.choice(qrels_values)) for d in range(q % 7 + 1)} for q in range(40)}
    run = {q: {f"d{d}": float(rnd.random()) for d in range(3)} for q in qrels}
    batch = SetEvaluator.from_dict(qrels, run)._batch
    for k in (None, 1, 2, 3, 10):
        ideal = ideal_list(batch, None)
        expected = graded._dcg(ideal.segment, ideal.position, styled(ideal.gain, dcg), batch.n_queries, k)
        assert graded._ideal_dcg(batch, None, dcg, k).tobytes() == expected.tobytes(), k
        assert compute(batch, IDCG(k=k, dcg=dcg)).tobytes() == expected.tobytes()
    for qid, value in SetEvaluator.from_dict(qrels, run).per_query("nDCG@2").items():
        assert value == pytest.approx(reference.ndcg(reference.rank(run[qid]), qrels[qid], 2), abs=1e-15)


def test_hit_counts_are_made_once_and_read_only() -> None:
    """The hits per query are one array, which no caller may change; any cutoff at or past the deepest
    hit reads it, a smaller one counts."""
    hits = Hits.of_rows(np.array([0, 2, 3]), _offsets_of(np.array([2, 0, 3])))
    assert hits.count is hits.count and not hits.count.flags.writeable
    assert hits.upto(3) is hits.upto(2) is hits.count and hits.count.tolist() == [1, 0, 2]
    assert hits.upto(1).tolist() == [1, 0, 1]
    empty = Hits.of_rows(np.zeros(0, dtype=np.int64), _offsets_of(np.array([2, 0])))
    assert empty.upto(1).tolist() == [0, 0]


def test_hits_up_to_a_cutoff_per_query() -> None:
    """A cutoff per query (R-precision's R): every hit within its query's cutoff (the hit counts, as
    they are) or some beyond it (counted)."""
    hits = Hits.of_rows(np.array([0, 2, 3, 4]), _offsets_of(np.array([2, 0, 3])))  # ranks 1; 1, 2, 3
    assert hits.upto(np.array([1, 0, 3])) is hits.count
    assert hits.upto(np.array([1, 0, 2])).tolist() == [1, 0, 2]
    assert hits.upto(np.array([0, 5, 1])).tolist() == [0, 0, 1]


def test_ap_and_gmap_share_one_computation_but_not_their_arrays() -> None:
    batch = _one_document_evaluator(0)._batch
    ap, gmap = compute(batch, AP()), compute(batch, GMAP())
    assert ap.tobytes() == gmap.tobytes() == compute(_one_document_evaluator(0)._batch, GMAP()).tobytes()
    fresh = _one_document_evaluator(0)._batch
    assert compute(batch, AP(rel=2)).tobytes() == compute(fresh, AP(rel=2)).tobytes() != ap.tobytes()
    ap[:] = -1.0  # a caller's changes reach neither the other measure nor a later call
    assert gmap.min() >= 0.0 and compute(batch, AP()).min() >= 0.0
