"""The fast paths of issue 29 (dicts in one pass, ASCII ids without per-id encoding, the small-query
evaluator), each checked against the general path it stands in for, with both branches forced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import evaluation_cases, single_query_cases

import retrieval_eval.engine.ids as ids_module
import retrieval_eval.evaluators.query as query_module
import retrieval_eval.io.dicts as dicts_module
from retrieval_eval import Document, Judgment, RetrievalEvaluator, SetEvaluator
from retrieval_eval.engine.build import SMALL_QUERY, build_batch, one_query_batch
from retrieval_eval.engine.ids import _as_bytes
from retrieval_eval.io.dicts import columns_from_dicts, columns_from_documents
from retrieval_eval.model import InputFormatError, InputTypeError

#: ids that stress the byte-level split: empty-free, mixed lengths, non-ASCII, spaces, one char.
id_text = st.text(alphabet=st.sampled_from("ab9 _\u00e9\u4e2d\U0001f600"), min_size=1, max_size=7)


def _encode_each(ids: list[str]) -> np.ndarray:
    """The general path: each id encoded by NumPy's string machinery."""
    return np.char.encode(np.asarray(ids, dtype=str), "utf-8", "surrogateescape")


@settings(max_examples=300, deadline=None)
@given(st.lists(id_text, min_size=1, max_size=12))
def test_split_ids_equals_encoding_each_id(ids: list[str]) -> None:
    data = dicts_module._joined_bytes(ids, len(ids))
    assert data is not None
    expected = _encode_each(ids)
    original = dicts_module._GATHER_WIDTH
    try:
        for gather_width in (original, 0):  # the column gather, then the index of every byte
            dicts_module._GATHER_WIDTH = gather_width
            split = dicts_module._split_ids(data, len(ids))
            assert split is not None and split.dtype == expected.dtype
            assert split.tolist() == expected.tolist()
    finally:
        dicts_module._GATHER_WIDTH = original


def test_split_ids_of_wide_ids_index_every_byte() -> None:
    """Ids wider than _GATHER_WIDTH (a column gather each byte) are split by an index of every byte."""
    ids = ["x" * (dicts_module._GATHER_WIDTH + 5), "ab", "\u00e9" * 20]
    data = dicts_module._joined_bytes(ids, len(ids))
    assert data is not None
    split = dicts_module._split_ids(data, len(ids))
    assert split is not None and split.tolist() == _encode_each(ids).tolist()
    assert split.dtype.itemsize > dicts_module._GATHER_WIDTH


@pytest.mark.parametrize("ids", [[""], ["a", ""], ["a\0b"], ["", "a"], ["a", "\ud800"], ["a", 3]])
def test_joined_bytes_refuses_what_the_id_check_refuses(ids: list) -> None:  # type: ignore[type-arg]
    assert dicts_module._joined_bytes(ids, len(ids)) is None


def test_a_far_longer_id_leaves_the_one_pass_split() -> None:
    ids = ["a"] * 100 + ["x" * 5000]
    data = dicts_module._joined_bytes(ids, len(ids))
    assert data is not None and dicts_module._split_ids(data, len(ids)) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(id_text, st.text(alphabet="ab", min_size=1, max_size=3)), min_size=1, max_size=10))
def test_as_bytes_ascii_path_equals_encoding(ids: list[str]) -> None:
    arr = np.asarray(ids, dtype=str)
    got = _as_bytes(arr)
    expected = _encode_each(ids)
    assert got.dtype == expected.dtype and got.tolist() == expected.tolist()
    wide = np.asarray(ids, dtype="U20")  # wider than its ids: the width is still the longest id's
    assert _as_bytes(wide).dtype == expected.dtype


def test_as_bytes_general_path_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    arr = np.asarray(["d10", "d2", "q"], dtype=str)
    fast = _as_bytes(arr)
    assert ids_module._ascii_bytes(arr) is not None  # the fast branch is taken
    monkeypatch.setattr(ids_module, "_ascii_bytes", lambda arr: None)
    slow = _as_bytes(arr)
    assert fast.dtype == slow.dtype and fast.tolist() == slow.tolist()


_MEASURES = ("map", "P_10", "ndcg_cut_10", "recip_rank", "bpref", "Rprec", "num_rel_ret")


def _everything(ev: SetEvaluator) -> dict[str, object]:
    return {m: ev.per_query(m) for m in _MEASURES} | {"queries": list(ev), "relstring": [ev[q].text("relstring") for q in ev]}


@settings(max_examples=120, deadline=None)
@given(evaluation_cases(max_queries=5), st.sampled_from(["", "é", "中", " x"]))
def test_from_dict_one_pass_equals_entry_by_entry(case: tuple[dict, dict], suffix: str) -> None:  # type: ignore[type-arg]
    """Both branches of columns_from_dicts give the same evaluation, ids and values to the bit."""
    qrels = {q + suffix: {d + suffix: r for d, r in docs.items()} for q, docs in case[0].items()}
    run = {q + suffix: {d: s for d, s in docs.items()} for q, docs in case[1].items()}
    assert dicts_module._fast_id_columns(qrels) is not None
    fast = _everything(SetEvaluator.from_dict(qrels, run))
    original = dicts_module._fast_id_columns
    dicts_module._fast_id_columns = lambda given: None  # the entry-by-entry branch
    try:
        slow = _everything(SetEvaluator.from_dict(qrels, run))
    finally:
        dicts_module._fast_id_columns = original
    assert fast == slow


def test_one_pass_columns_equal_entry_by_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    qrels = {"q0": {}, "q1": {"d1": 1, "dé": 0}, "q10": {}, "q2": {"x y": 2}, "q3": {}}  # empty ones add no id
    run = {"q2": {"x y": 1.5, "z": 0.5}, "q1": {"d1": 1}}
    fast_q, fast_r = columns_from_dicts(qrels, run)
    assert fast_q.doc_ids.dtype.kind == "S"  # the one-pass branch was taken
    monkeypatch.setattr(dicts_module, "_fast_id_columns", lambda given: None)
    slow_q, slow_r = columns_from_dicts(qrels, run)
    assert slow_q.doc_ids.dtype.kind == "U"
    for fast, slow in ((fast_q, slow_q), (fast_r, slow_r)):
        assert _as_bytes(fast.query_ids).tolist() == _as_bytes(slow.query_ids).tolist()
        assert _as_bytes(fast.doc_ids).tolist() == _as_bytes(slow.doc_ids).tolist()
    assert fast_q.relevance.tolist() == slow_q.relevance.tolist() == [1, 0, 2]
    assert fast_r.scores.tolist() == slow_r.scores.tolist() == [1.5, 0.5, 1.0]


@pytest.mark.parametrize(("qrels", "run", "error", "message"), [
    ({"q": {"": 1}}, {"q": {"a": 1.0}}, InputFormatError, "qrels doc id"),
    ({"q": {"a": 1}}, {"": {"a": 1.0}}, InputFormatError, "run query id"),
    ({"q": {"a": 1}}, {"q": {"a\0": 1.0}}, InputFormatError, "run doc id"),
    ({"q": {"a": 1}}, {"q": {3: 1.0}}, InputFormatError, "run doc id"),
    ({"q": {"a": True}}, {"q": {"a": 1.0}}, InputTypeError, "relevance"),
    ({"q": {"a": 1}}, {"q": {"a": float("nan")}}, InputFormatError, "score"),
    ({"q": {"a": 1}}, {"q": {"a": 2**2000}}, InputFormatError, "score"),
])
def test_bad_entries_are_still_named(qrels: dict, run: dict, error: type, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises((InputFormatError, InputTypeError), match=message) as raised:
        SetEvaluator.from_dict(qrels, run)
    assert isinstance(raised.value, error) or message in str(raised.value)


def test_file_ids_kept_as_surrogates_take_the_general_path() -> None:
    """An id read from a file with bytes that are not UTF-8 (kept as surrogates) is still its bytes."""
    odd = b"d\xff".decode("utf-8", "surrogateescape")
    ev = SetEvaluator.from_dict({"q": {odd: 1, "a": 0}}, {"q": {odd: 2.0, "a": 1.0}})
    assert ev.per_query("map") == {"q": 1.0}


# ------------------------------------------------------------------ one RetrievalEvaluator per query
def _query_values(ev: RetrievalEvaluator) -> dict[str, object]:
    """Everything a harness asks of one query, the four calls of the benchmark loop first."""
    return {
        "AP": ev.average_precision(), "nDCG@10": ev.ndcg(10), "P@10": ev.precision(10),
        "missed": ev.relevant_missed_documents(),
        "nDCG": ev.ndcg(), "nDCG@5 exp": ev.ndcg(5, dcg="exp-log2"), "RR": ev.reciprocal_rank(),
        "bpref": ev.binary_preference(), "Rprec": ev.r_precision(), "R@5": ev.recall(5),
        "iprec": ev.interpolated_precision(), "relstring": ev.text("relstring"),
        "rel_ret": ev.relevant_retrieved(), "missed_j": ev.relevant_missed_judgments(),
        "retrieved": ev.retrieved_documents(), "judgments": ev.judgments(),
        "retrieved_j": ev.retrieved_judgments(), "repr": repr(ev),
    }


def _ranked(scores: dict[str, float]) -> list[Document]:
    """The ranking trec_eval makes of ``scores``: score descending, ties by doc_id descending."""
    order = sorted(scores, key=lambda d: (scores[d], d.encode()), reverse=True)
    return [Document(d, score=scores[d]) for d in order]


@settings(max_examples=150, deadline=None)
@given(single_query_cases(), st.sampled_from([0, 1, 2]), st.sampled_from(["", "é"]))
def test_small_query_path_is_bit_identical(case: tuple[str, dict[str, int], dict[str, float]], rel: int,
                                           suffix: str) -> None:
    """The one-query batch gives every value of the general build and of the set path, to the bit."""
    qid, judged, scores = case
    judged = {d + suffix: v for d, v in judged.items()}
    scores = {d + suffix: v for d, v in scores.items()}
    retrieved, judgments = _ranked(scores), [Judgment(d, v) for d, v in judged.items()]
    assert one_query_batch(qid, *columns_from_documents(qid, retrieved, judgments)) is not None
    small = _query_values(RetrievalEvaluator(qid, retrieved, judgments, rel=rel))
    query_module._SMALL_PATH = False
    try:
        general = _query_values(RetrievalEvaluator(qid, retrieved, judgments, rel=rel))
    finally:
        query_module._SMALL_PATH = True
    assert small == general
    whole = SetEvaluator.from_dict({qid: judged}, {qid: scores}, rel=rel)
    for name, measure in (("AP", "map"), ("nDCG@10", "ndcg_cut_10"), ("P@10", "P_10")):
        assert small[name] == whole.per_query(measure)[qid]  # == on floats: bit-identical


@pytest.mark.parametrize(("retrieved", "judgments", "message"), [
    ([Document("a"), Document("a")], [Judgment("a", 1)], "duplicate document"),
    ([Document("a")], [Judgment("b", 1), Judgment("b", 0)], "duplicate judgment"),
])
def test_small_query_path_leaves_repeats_to_the_general_build(
        retrieved: list[Document], judgments: list[Judgment], message: str) -> None:
    assert one_query_batch("q", *columns_from_documents("q", retrieved, judgments)) is None
    with pytest.raises(InputFormatError, match=message):
        RetrievalEvaluator("q", retrieved, judgments)


def test_long_rankings_take_the_general_build() -> None:
    retrieved = [Document(f"d{i}") for i in range(SMALL_QUERY + 1)]
    assert one_query_batch("q", *columns_from_documents("q", retrieved, [])) is None
    assert RetrievalEvaluator("q", retrieved, [Judgment("d3", 1)]).average_precision() == 0.25


@settings(max_examples=200, deadline=None)
@given(st.lists(id_text, min_size=0, max_size=10))
def test_document_id_column_is_the_utf8_of_each_id(ids: list[str]) -> None:
    """ASCII ids become bytes at once, others str (encoded by the build): the same bytes either way."""
    column = dicts_module._id_column(ids)
    assert column.dtype.kind == ("S" if all(i.isascii() for i in ids) else "U")
    expected = _encode_each(ids) if ids else np.zeros(0, dtype="S1")
    assert _as_bytes(column).dtype == expected.dtype and _as_bytes(column).tolist() == expected.tolist()
    forced = np.asarray(ids, dtype=str)  # the str branch, forced for ASCII ids too
    assert _as_bytes(forced).tolist() == _as_bytes(column).tolist()


@settings(max_examples=150, deadline=None)
@given(single_query_cases(), st.sampled_from([0, 1, 2, 3]), st.sampled_from(["", "é"]))
def test_missed_documents_are_the_relevant_judged_ones_not_ranked(
        case: tuple[str, dict[str, int], dict[str, float]], rel: int, suffix: str) -> None:
    """The missed documents, found among the relevant hits only, against plain Python sets."""
    qid, judged, scores = case
    judged = {d + suffix: v for d, v in judged.items()}
    scores = {d + suffix: v for d, v in scores.items()}
    ev = RetrievalEvaluator(qid, _ranked(scores), [Judgment(d, v) for d, v in judged.items()], rel=rel)
    expected = sorted((d for d, v in judged.items() if v >= rel and d not in scores), key=str.encode)
    assert [d.doc_id for d in ev.relevant_missed_documents()] == expected
    assert all(d.rank is None for d in ev.relevant_missed_documents())


@settings(max_examples=150, deadline=None)
@given(single_query_cases(), st.sampled_from([None, {0: 0.5, 2: 5.0}, {1: -1.0}]))
def test_one_query_batch_equals_the_query_twice(
        case: tuple[str, dict[str, int], dict[str, float]], gains: dict[int, float] | None) -> None:
    """The shortcuts of a one-query batch (its ideal list by a stable sort of its gains, its hits
    without an index of queries) give the many-query batch's numbers: the query twice in one batch
    takes the general branches, and every value is the same, to the bit."""
    from retrieval_eval.measures import compute, parse
    from retrieval_eval.measures.gains import Gains, ideal_list

    table = None if gains is None else Gains(gains)
    qid, judged, scores = case
    one = RetrievalEvaluator(qid, _ranked(scores), [Judgment(d, v) for d, v in judged.items()])._batch
    two = one.select([0, 0])
    alone, twice = ideal_list(one, table), ideal_list(two, table)
    m = len(alone.gain)
    assert twice.gain.tolist() == alone.gain.tolist() * 2
    assert twice.position[:m].tolist() == twice.position[m:].tolist() == alone.position.tolist()
    assert alone.segment.tolist() == [0] * m and twice.segment.tolist() == [0] * m + [1] * m
    for rel in (0, 1, 2):  # the one-query hits, and the many-query ones
        hits, both = one.hits(rel), two.hits(rel)
        h = len(hits.row)
        assert both.query.tolist() == [0] * h + [1] * h and hits.query.tolist() == [0] * h
        for name in ("rank", "position"):
            assert getattr(both, name).tolist() == getattr(hits, name).tolist() * 2
        assert both.offsets.tolist() == [0, h, 2 * h] and hits.offsets.tolist() == [0, h]
    for measure in ("nDCG", "nDCG@10", "nDCG(dcg='exp-log2')@5", "ndcg_rel", "AP", "P@10", "RR", "bpref", "Rprec"):
        parsed = parse(measure)
        assert compute(two, parsed).tolist() == compute(one, parsed).tolist() * 2


@pytest.mark.parametrize("query_id", ["q1", "laptop bag", "\u00e9t\u00e9", "\u4e2d", "q\U0001f600"])
def test_one_query_batch_ids_are_the_general_builds(query_id: str) -> None:
    retrieved, judgments = [Document("b\u00e9"), Document("a")], [Judgment("a", 1), Judgment("z", 2)]
    qrels, run = columns_from_documents(query_id, retrieved, judgments)
    small = one_query_batch(query_id, qrels, run)
    general, _ = build_batch(qrels, run, order="given", queries=[query_id])
    assert small is not None
    for name in ("query_vocab", "doc_ids", "judged_doc_ids", "labels", "offsets", "judged_offsets"):
        assert getattr(small, name).dtype == getattr(general, name).dtype, name
        assert getattr(small, name).tolist() == getattr(general, name).tolist(), name


@pytest.mark.parametrize("scores", [[2.5, 1.0, -3.0], [None, None], [1.5, None, 0.25], []])
def test_document_scores_in_one_pass_or_with_nan(scores: list[float | None]) -> None:
    """Scores read in C in one pass, or (a Document without a score) through a list, None as NaN."""
    retrieved = [Document(f"d{i}", score=s) for i, s in enumerate(scores)]
    got = dicts_module._score_column(retrieved)
    assert got.dtype == np.float64
    assert [None if np.isnan(v) else v for v in got.tolist()] == scores
    for query_id in ("q", "q\u00e9"):  # its query ids: bytes when ASCII, else str (encoded by the build)
        _, run = columns_from_documents(query_id, retrieved, [])
        assert np.array_equal(run.scores, got, equal_nan=True)
        assert _as_bytes(run.query_ids).tolist() == [query_id.encode()] * len(scores)
        assert run.query_ids.dtype.kind == ("S" if query_id.isascii() and scores else "U")
