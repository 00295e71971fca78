"""The harness loop's fast path (issue 29, target 3): one RetrievalEvaluator per query, its batch read
straight from the Documents (``one_query.direct_batch``), its measures through ``compute_one`` and the
one-query division of ``safe_div``; each checked against the general path it stands in for."""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import single_query_cases

import retrieval_eval.evaluators.one_query as one_query_module
import retrieval_eval.evaluators.query as query_module
import retrieval_eval.measures.registry as registry_module
from retrieval_eval import Document, Judgment, RetrievalEvaluator, SetEvaluator
from retrieval_eval.engine.build import build_batch
from retrieval_eval.engine.segments import safe_div
from retrieval_eval.evaluators.one_query import DIRECT_MAX, direct_batch
from retrieval_eval.io.dicts import columns_from_documents
from retrieval_eval.measures import MeasureError, compute, parse
from retrieval_eval.measures.registry import compute_one
from retrieval_eval.model import InputFormatError, InputTypeError

_FIELDS = ("query_vocab", "offsets", "labels", "doc_ids", "scores", "judged_offsets", "judged_relevance",
           "judged_doc_ids", "in_run")


def _case(case: tuple[str, dict[str, int], dict[str, float]], no_scores: bool = False,
          ) -> tuple[str, list[Document], list[Judgment]]:
    qid, judged, scores = case
    order = sorted(scores, key=lambda d: (scores[d], d.encode("utf-8", "surrogateescape")), reverse=True)
    retrieved = [Document(d, score=None if no_scores else scores[d]) for d in order]
    return qid, retrieved, [Judgment(d, v) for d, v in judged.items()]


#: Suffixes of the ids: ASCII, UTF-8 of two and three bytes, and a byte that is not UTF-8 (read from
#: a file, kept as a surrogate by ``id_text``), whose bytes sort before the other suffixes' but its str after.
_SUFFIXES = st.sampled_from(["", "\u00e9", "\u4e2d", "\udce9"])


def _suffixed(case: tuple[str, dict[str, int], dict[str, float]], suffix: str,
              ) -> tuple[str, dict[str, int], dict[str, float]]:
    """The case with ``suffix`` on every other doc_id (so that ASCII and other ids mix)."""
    qid, judged, scores = case
    rename = {d: d + suffix if i % 2 else d for i, d in enumerate(sorted({*judged, *scores}))}
    return qid + suffix, {rename[d]: v for d, v in judged.items()}, {rename[d]: v for d, v in scores.items()}


@settings(max_examples=200, deadline=None)
@given(single_query_cases(), st.booleans(), _SUFFIXES)
def test_direct_batch_is_the_general_build(case: tuple[str, dict[str, int], dict[str, float]],
                                           no_scores: bool, suffix: str) -> None:
    """Every array of the batch read from the Documents is the general build's: values and dtypes,
    ids of any characters."""
    qid, retrieved, judgments = _case(_suffixed(case, suffix), no_scores)
    one = direct_batch(qid, retrieved, judgments)
    assert one is not None
    general, _ = build_batch(*columns_from_documents(qid, retrieved, judgments), order="given", queries=[qid])
    for name in _FIELDS:
        got, expected = getattr(one, name), getattr(general, name)
        assert got.dtype == expected.dtype, name
        assert np.array_equal(got, expected, equal_nan=name == "scores"), name


def _missed_both_ways(ev: RetrievalEvaluator) -> tuple[list[Document], list[Document]]:
    direct = ev.relevant_missed_documents()
    ev._one = None  # the batch's arrays, as for an evaluator of a SetEvaluator's query
    return direct, ev.relevant_missed_documents()


@settings(max_examples=200, deadline=None)
@given(single_query_cases(), st.sampled_from([0, 1, 2, 3]), _SUFFIXES)
def test_missed_documents_from_the_lists_are_the_batch_ones(
        case: tuple[str, dict[str, int], dict[str, float]], rel: int, suffix: str) -> None:
    case = _suffixed(case, suffix)
    qid, retrieved, judgments = _case(case)
    ev = RetrievalEvaluator(qid, retrieved, judgments, rel=rel)
    assert ev._one is not None
    direct, general = _missed_both_ways(ev)
    assert direct == general  # the same Documents (rank None, score None), in the same order
    assert all(type(d) is Document and d.rank is None and d.score is None for d in direct)
    judged, scores = case[1], case[2]
    missed = [d for d, v in judged.items() if v >= max(rel, 0) and d not in scores]
    assert [d.doc_id for d in direct] == sorted(missed, key=lambda d: d.encode("utf-8", "surrogateescape"))


@pytest.mark.parametrize(("query_id", "retrieved", "judgments"), [
    ("q", [Document("a"), Document("a")], [Judgment("a", 1)]),  # a repeated document
    ("q", [Document("a")], [Judgment("b", 1), Judgment("b", 0)]),  # a repeated judgment
    ("", [Document("a")], []),  # no id
    ("q", iter([Document("a")]), []),  # not a list or tuple
    ("q", [Document("a"), "b"], []),  # not a Document
    ("q", [Document("a")], [Judgment("a", 1), ("b", 1)]),
])
def test_direct_batch_declines_what_the_general_build_handles(
        query_id: str, retrieved: list[Document], judgments: list[Judgment]) -> None:
    assert direct_batch(query_id, retrieved, judgments) is None


@pytest.mark.parametrize(("retrieved", "judgments", "error", "message"), [
    ([Document("a"), Document("a")], [Judgment("a", 1)], InputFormatError, "duplicate document"),
    ([Document("a")], [Judgment("b", 1), Judgment("b", 0)], InputFormatError, "duplicate judgment"),
    ([Document("a"), "b"], [], InputTypeError, r"'retrieved'\[1\]"),
    ([Document("a")], {"a": 1}, InputTypeError, "'judgments' must be an iterable of Judgment"),
    ({"a": 1.0}, [], InputTypeError, "'retrieved' must be a list"),
])
def test_declined_input_is_named_by_the_general_build(retrieved: object, judgments: object, error: type,
                                                      message: str) -> None:
    with pytest.raises(error, match=message):
        RetrievalEvaluator("q", retrieved, judgments)  # type: ignore[arg-type]


def test_judgments_of_an_iterator_are_read_once() -> None:
    def judgments() -> Iterator[Judgment]:
        yield Judgment("b", 1)
        yield Judgment("c", 2)

    ev = RetrievalEvaluator("q", [Document("a"), Document("b")], judgments())
    assert ev._one is not None
    assert ev.average_precision() == 0.25 and [d.doc_id for d in ev.relevant_missed_documents()] == ["c"]


def test_a_subclass_of_document_takes_the_general_build() -> None:
    class Mine(Document):
        pass

    ev = RetrievalEvaluator("q", [Mine("a"), Document("b")], [Judgment("b", 1)])
    assert ev._one is None and ev.precision(2) == 0.5


_ONE_MEASURES = ("AP", "AP@5", "nDCG", "nDCG@10", "nDCG(dcg='exp-log2')@5", "P@10", "RR", "bpref", "Rprec",
                 "R@10", "num_rel_ret", "infAP", "ERR@10", "RBP", "ndcg_rel", "success_1", "iprec_at_recall_0.10")


@settings(max_examples=100, deadline=None)
@given(single_query_cases(), st.sampled_from([0, 1, 2]))
def test_compute_one_is_compute(case: tuple[str, dict[str, int], dict[str, float]], rel: int) -> None:
    """A measure's value by its kept kernel and arguments is compute's, on its first use and after."""
    qid, retrieved, judgments = _case(case)
    batch = RetrievalEvaluator(qid, retrieved, judgments)._batch
    for name in _ONE_MEASURES:
        measure = parse(name, rel=rel)
        registry_module._PLANS.pop(measure, None)
        first = compute_one(batch, measure)  # through compute; then planned
        assert measure in registry_module._PLANS
        planned = compute_one(batch, measure)
        expected = float(compute(batch, measure)[0])
        assert first == planned == expected, name  # == on floats: bit-identical


def test_compute_one_names_a_value_that_is_not_finite() -> None:
    ev = RetrievalEvaluator("q", [Document("a")], [Judgment("a", 1100)])
    measure = parse("DCG(dcg='exp-log2')")
    registry_module._PLANS.pop(measure, None)
    for _ in range(2):  # through compute, then planned: the same error
        with pytest.raises(MeasureError, match="of query 'q' is inf"):
            compute_one(ev._batch, measure)
    assert measure not in registry_module._PLANS  # (it never gave a value)
    registry_module._PLANS[measure] = (measure.definition.kernel, {"k": None, "dcg": "exp-log2", "gains": None},
                                       True)
    with pytest.raises(MeasureError, match="of query 'q' is inf"):
        compute_one(ev._batch, measure)
    registry_module._PLANS.pop(measure)


def test_compute_one_leaves_text_and_subtopic_measures_to_compute() -> None:
    ev = RetrievalEvaluator("q", [Document("a")], [Judgment("a", 1)])
    with pytest.raises(MeasureError, match="text measure"):
        compute_one(ev._batch, parse("relstring"))
    with pytest.raises(MeasureError, match="diversity qrels"):
        compute_one(ev._batch, parse("alpha_nDCG@10"))


_FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(2**62), 2**62),
                    st.sampled_from([0.0, -0.0, 0]))


@settings(max_examples=400, deadline=None)
@given(_FLOATS, _FLOATS)
def test_safe_div_of_one_value_is_the_array_division(num: float, den: float) -> None:
    """One quotient as two Python floats is the ufunc's over arrays (two copies: the general branch)."""
    one = safe_div(np.array([num]), np.array([den]))
    with np.errstate(over="ignore", invalid="ignore"):  # (the ufunc warns of an overflow; a float does not)
        general = safe_div(np.array([num, num]), np.array([den, den]))
    assert one.dtype == general.dtype == np.float64 and one.shape == (1,)
    got, expected = float(one[0]), float(general[0])
    assert got == expected or (math.isnan(got) and math.isnan(expected))


def test_small_path_switch_forces_the_general_build() -> None:
    retrieved, judgments = [Document("a"), Document("b")], [Judgment("b", 2)]
    assert RetrievalEvaluator("q", retrieved, judgments)._one is not None
    query_module._SMALL_PATH = False
    try:
        ev = RetrievalEvaluator("q", retrieved, judgments)
    finally:
        query_module._SMALL_PATH = True
    assert ev._one is None and ev.ndcg(2) == RetrievalEvaluator("q", retrieved, judgments).ndcg(2)


def test_long_rankings_take_the_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past DIRECT_MAX the columns' build (and, past SMALL_QUERY, build_batch) reads the ranking."""
    assert DIRECT_MAX >= 10_000  # (the loop benchmark's longest rankings take the direct path)
    monkeypatch.setattr(one_query_module, "DIRECT_MAX", 600)
    judgments = [Judgment("d3", 1), Judgment("x", 2)]
    at_most = [Document(f"d{i}") for i in range(600)]
    assert direct_batch("q", at_most, judgments) is not None
    longer = [*at_most, Document("last")]
    assert direct_batch("q", longer, judgments) is None
    ev = RetrievalEvaluator("q", longer, judgments)
    assert ev._one is None and ev.average_precision() == 0.125
    assert [d.doc_id for d in ev.relevant_missed_documents()] == ["x"]


def test_id_columns_and_scores_are_made_when_first_read() -> None:
    """The loop's measures never read the ids and scores; the first read makes them from the query's
    Documents as given, whatever the caller did to its list since."""
    retrieved = [Document("b", score=2.0), Document("a\u00e9", score=1.0)]
    one = direct_batch("q", retrieved, [Judgment("a\u00e9", 1), Judgment("c", 0)])
    assert one is not None
    ev = RetrievalEvaluator("q", retrieved, [Judgment("a\u00e9", 1), Judgment("c", 0)])
    assert ev.average_precision() == 0.5 and ev.ndcg(10) == 1 / np.log2(3) and ev.precision(10) == 0.1
    for name in ("doc_ids", "scores", "judged_doc_ids"):
        assert type(one).__mro__[1].__dict__[name].__get__(one) is None, name  # not made yet
        assert type(ev._batch).__mro__[1].__dict__[name].__get__(ev._batch) is None, name
    retrieved.reverse()
    retrieved.append(Document("z", score=0.0))
    assert one.doc_ids.tolist() == [b"b", "a\u00e9".encode()] and one.scores.tolist() == [2.0, 1.0]
    assert one.judged_doc_ids.tolist() == ["a\u00e9".encode(), b"c"]
    assert one.doc_ids is one.doc_ids  # made once
    assert [d.doc_id for d in ev.retrieved_documents()] == ["b", "a\u00e9"]


@settings(max_examples=150, deadline=None)
@given(single_query_cases(), st.sampled_from([None, {0: 0.5, 2: 5.0}, {1: 0.25, 3: 0.25}]))
def test_one_query_counts_and_ideal_list_are_the_many_query_ones(
        case: tuple[str, dict[str, int], dict[str, float]], gains: dict[int, float] | None) -> None:
    """rel@k by a binary search of one query's hit ranks, and its ideal list by one sort, against the
    same query twice in one batch (the general branches)."""
    from retrieval_eval.measures.gains import Gains, ideal_list

    one = RetrievalEvaluator(*_case(case))._batch
    two = one.select([0, 0])
    for rel in (0, 1, 2):
        for k in range(1, 28):
            assert one.relevant_at(k, rel).tolist() == two.relevant_at(k, rel).tolist()[:1], (rel, k)
            assert one.relevant_at(k, rel).dtype == np.int64
    table = None if gains is None else Gains(gains)
    alone, twice = ideal_list(one, table), ideal_list(two, table)
    assert alone.gain.tolist() == twice.gain.tolist()[: len(alone.gain)]
    assert alone.gain.tolist() == sorted(alone.gain.tolist(), reverse=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab9 _~\u00e9\u4e2d"), min_size=1, max_size=9), max_size=12))
def test_ascii_column_is_numpys_bytes_column(ids: list[str]) -> None:
    """Told its width, the column is NumPy's own (the same dtype and bytes); past ASCII, both raise."""
    from retrieval_eval.io.dicts import _ascii_column

    if all(i.isascii() for i in ids):
        expected = np.asarray(ids, dtype="S")
        assert _ascii_column(ids).dtype == expected.dtype and _ascii_column(ids).tolist() == expected.tolist()
    else:
        with pytest.raises(UnicodeEncodeError):
            np.asarray(ids, dtype="S")
        with pytest.raises(UnicodeEncodeError):
            _ascii_column(ids)


# --------------------------------------------------------------------------------------------------
# The loop's values against the set path, with every fast path of one query forced off and on

#: Measures asked by string of each query's evaluator and of the set evaluator: the DCG family (cut
#: and whole, linear and exponential, custom gains), AP and its cuts, the counts and precisions.
_SET_MEASURES = ("nDCG", "nDCG(dcg='exp-log2')@5", "nDCG(gains={0: 0.5, 2: 5})@3", "DCG@10", "map_cut_5",
                 "RR", "bpref", "Rprec", "R@5", "P@3", "infAP", "ERR@10", "RBP", "ndcg_rel", "success_1",
                 "iprec_at_recall_0.10", "num_rel_ret", "Judged@10")


def _loop_values(qid: str, retrieved: list[Document], judgments: list[Judgment], rel: int) -> dict[str, object]:
    """What a harness loop asks of a fresh evaluator (the four calls first), and the measures above."""
    ev = RetrievalEvaluator(qid, retrieved, judgments, rel=rel)
    values: dict[str, object] = {"AP": ev.average_precision(), "nDCG@10": ev.ndcg(10), "P@10": ev.precision(10),
                                 "missed": ev.relevant_missed_documents()}
    return values | {name: ev.score(name) for name in _SET_MEASURES}


@st.composite
def _queries(draw: st.DrawFn) -> list[tuple[str, dict[str, int | float], dict[str, float]]]:
    """One to three queries, ids of any characters, integer or float grades (1.5)."""
    halves = draw(st.booleans())
    cases = []
    for number in range(draw(st.integers(1, 3))):
        qid, judged, scores = _suffixed(draw(single_query_cases()), draw(_SUFFIXES))
        grades: dict[str, int | float] = {d: v - 0.5 if halves and v > 0 else v for d, v in judged.items()}
        cases.append((f"{qid}-{number}", grades, scores))
    return cases


@settings(max_examples=120, deadline=None)
@given(_queries(), st.sampled_from([0, 1, 2]))
def test_loop_values_are_the_set_paths_to_the_bit(
        cases: list[tuple[str, dict[str, int | float], dict[str, float]]], rel: int) -> None:
    """Each query's values from a fresh evaluator (the direct batch) are those of the general build
    of that query and of one SetEvaluator over every query (many-query arrays): == on floats."""
    qrels = {qid: judged for qid, judged, _ in cases}
    run = {qid: scores for qid, _, scores in cases}
    whole = SetEvaluator.from_dict(qrels, run, rel=rel)
    doubled = SetEvaluator.from_dict(qrels | {q + "'": j for q, j in qrels.items()},  # each query twice: n > 1
                                     run | {q + "'": r for q, r in run.items()}, rel=rel)
    for qid, judged, scores in cases:
        qid, retrieved, judgments = _case((qid, judged, scores))  # type: ignore[arg-type]
        direct = _loop_values(qid, retrieved, judgments, rel)
        query_module._SMALL_PATH = False
        try:
            general = _loop_values(qid, retrieved, judgments, rel)
        finally:
            query_module._SMALL_PATH = True
        assert direct == general, qid
        if qid not in whole.per_query("P@10"):  # (a query without judgments is not evaluated there)
            continue
        from_set = {"AP": whole.per_query("AP")[qid], "nDCG@10": whole.per_query("nDCG@10")[qid],
                    "P@10": whole.per_query("P@10")[qid], "missed": whole[qid].relevant_missed_documents()}
        from_set |= {name: whole.per_query(name)[qid] for name in _SET_MEASURES}
        assert direct == from_set, qid
        assert all(doubled.per_query(name)[qid] == from_set[name] for name in ("AP", "nDCG@10", *_SET_MEASURES)), qid


@settings(max_examples=150, deadline=None)
@given(_queries())
def test_integer_grade_shortcuts_are_the_gain_table(
        cases: list[tuple[str, dict[str, int | float], dict[str, float]]]) -> None:
    """Integer grades without custom gains skip the gain table: their gain hits, ideal list and R are
    those of the table that maps level 5 to 5 (no change, but the general branch), of one query and
    of the query twice in one batch."""
    from retrieval_eval.measures.gains import Gains, gain_hits, ideal_list

    same = Gains({5: 5})  # every level keeps its own gain
    for case in cases:
        one = RetrievalEvaluator(*_case(case))._batch  # type: ignore[arg-type]
        for batch in (one, one.select([0, 0])):
            hits, gain = gain_hits(batch, None)
            table_hits, table_gain = gain_hits(batch, same)
            assert hits.row.tolist() == table_hits.row.tolist() and gain.tolist() == table_gain.tolist()
            assert gain.dtype == table_gain.dtype == np.float64
            assert ideal_list(batch, None).gain.tolist() == ideal_list(batch, same).gain.tolist()
        for rel in (0, 1, 2):
            assert one.n_relevant(rel).tolist() == one.select([0, 0]).n_relevant(rel).tolist()[:1]
            assert one.n_relevant(rel).dtype == np.int64


@pytest.mark.parametrize("copy_of", [copy.copy, copy.deepcopy, lambda ev: pickle.loads(pickle.dumps(ev))],
                         ids=["copy", "deepcopy", "pickle"])
def test_a_copied_loop_evaluator_keeps_its_lists(copy_of: Callable[[RetrievalEvaluator], RetrievalEvaluator]) -> None:
    ev = RetrievalEvaluator("q", [Document("a", score=1.0), Document("b\u00e9")], [Judgment("b\u00e9", 1), Judgment("c", 2)])
    copied = copy_of(ev)
    assert copied._one is not None and copied._batch is copied._one
    assert copied.relevant_missed_documents() == ev.relevant_missed_documents() == [Document("c")]
    assert copied.average_precision() == ev.average_precision() == 0.25
    assert copied.retrieved_documents() == ev.retrieved_documents()
    assert copied.judgment("b\u00e9") == 1 and copied.retrieved_judgments() == [None, 1]
