"""Hand-computed values for every RetrievalEvaluator method, degenerate cases included.

Expected values are derived by hand from the definitions (trec_eval 10.0 semantics) and written as
the arithmetic that produces them, so each case can be checked on paper.
"""

from __future__ import annotations

from math import log2
from typing import ClassVar

import pytest

from retrieval_eval import (
    Document,
    InputFormatError,
    InputTypeError,
    Judgment,
    MeasureError,
    RetrievalEvaluator,
    SetEvaluator,
)

#: Measures whose hand-computed cases live in this file (read by test_completeness.py).
HAND_COMPUTED = {"AP", "Bpref", "nDCG", "P", "R", "Rprec", "RR", "IPrec", "Success", "NumRel", "NumRet",
                 "NumRelRet", "NumQ", "GMAP"}


def _evaluator(ranking: list[str], judgments: dict[str, int], rel: int = 1) -> RetrievalEvaluator:
    return RetrievalEvaluator(
        "q", [Document(d, i + 1) for i, d in enumerate(ranking)], [Judgment(d, r) for d, r in judgments.items()],
        rel=rel,
    )


# Five relevant (r1..r5) and ten judged non-relevant (n1..n10); r1 n1 n2 r2 r3 retrieved.
MIXED = _evaluator(["r1", "n1", "n2", "r2", "r3"], {**{f"r{i}": 1 for i in range(1, 6)}, **{f"n{i}": 0 for i in range(1, 11)}})
# Relevant r1 r2 r3, non-relevant n1; unjudged u1 and u2 retrieved.
UNJUDGED = _evaluator(["u1", "r1", "u2", "r2"], {"r1": 1, "r2": 1, "r3": 1, "n1": 0})
# Graded, with negative ("pooled, unjudged") values.
GRADED = {"a": 1, "b": 3, "c": -1, "d": 2, "e": -2}
IDEAL_LINEAR = 3 + 2 / log2(3) + 1 / log2(4)


class TestMixedRanking:
    """r1 n1 n2 r2 r3 with R = 5 and NR = 10."""

    def test_average_precision(self) -> None:
        assert MIXED.average_precision() == pytest.approx((1 / 1 + 2 / 4 + 3 / 5) / 5)

    def test_bpref_counts_every_relevant_document(self) -> None:
        """trec_eval: r2 and r3 each have 2 non-relevant above: 1 - 2/min(10, 5). ireval would give 0.2."""
        assert MIXED.binary_preference() == pytest.approx((1 + (1 - 2 / 5) * 2) / 5)

    def test_precision_pads_short_rankings(self) -> None:
        assert MIXED.precision(5) == pytest.approx(3 / 5)
        assert MIXED.precision(10) == pytest.approx(3 / 10)
        assert MIXED.precision(1) == 1.0

    def test_recall(self) -> None:
        assert MIXED.recall(3) == pytest.approx(1 / 5)
        assert MIXED.recall(1000) == pytest.approx(3 / 5)

    def test_r_precision_and_reciprocal_rank(self) -> None:
        assert MIXED.r_precision() == pytest.approx(3 / 5)
        assert MIXED.reciprocal_rank() == 1.0

    def test_ndcg(self) -> None:
        dcg = 1 + 1 / log2(5) + 1 / log2(6)
        ideal = sum(1 / log2(i + 1) for i in range(1, 6))
        assert MIXED.normalized_discounted_cumulative_gain() == pytest.approx(dcg / ideal)
        assert MIXED.ndcg(3) == pytest.approx(1 / (1 + 1 / log2(3) + 1 / log2(4)))

    def test_relevant_retrieved(self) -> None:
        assert MIXED.relevant_retrieved(3) == 1
        assert MIXED.relevant_retrieved(4) == 2
        assert MIXED.relevant_retrieved() == 3

    def test_relevant_retrieved_in_the_empty_top_is_zero(self) -> None:
        """relevant_retrieved(0) is 0, as ireval's relevantRetrieved(0) (issue 15); k < 0 stays an error."""
        from retrieval_eval import InvalidParameterError

        assert MIXED.relevant_retrieved(0) == 0 and type(MIXED.relevant_retrieved(0)) is int
        with pytest.raises(InvalidParameterError, match="'k' of relevant_retrieved must be an int >= 0; got -1"):
            MIXED.relevant_retrieved(-1)

    def test_interpolated_precision_uses_lround_cutoffs(self) -> None:
        """Precision at the hits is 1, 2/4, 3/5; cut-off c = lround(p * 5): 0.3 -> 2, 0.7 -> 4 > 3 hits."""
        assert MIXED.interpolated_precision() == pytest.approx([1, 1, 1, 0.6, 0.6, 0.6, 0.6, 0, 0, 0, 0])

    def test_fixed_points(self) -> None:
        assert RetrievalEvaluator.fixed_points() == [5, 10, 15, 20, 30, 100, 200, 500, 1000]
        assert MIXED.precision_at_fixed_points() == pytest.approx([3 / k for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)])

    def test_document_lists(self) -> None:
        assert [d.doc_id for d in MIXED.retrieved_documents()] == ["r1", "n1", "n2", "r2", "r3"]
        assert [d.rank for d in MIXED.retrieved_documents()] == [1, 2, 3, 4, 5]
        assert [d.doc_id for d in MIXED.relevant_retrieved_documents()] == ["r1", "r2", "r3"]
        assert MIXED.relevant_missed_documents() == [Document("r4"), Document("r5")]
        assert [d.doc_id for d in MIXED.relevant_documents()] == ["r1", "r2", "r3", "r4", "r5"]
        assert [d.doc_id for d in MIXED.irrelevant_retrieved_documents()] == ["n1", "n2"]
        assert [d.doc_id for d in MIXED.judged_irrelevant_retrieved_documents()] == ["n1", "n2"]
        assert MIXED.query_id == "q"


class TestUnjudgedDocuments:
    """u1 r1 u2 r2 with relevant r1 r2 r3 and one judged non-relevant n1."""

    def test_unjudged_count_as_non_relevant_for_rank_measures(self) -> None:
        assert UNJUDGED.average_precision() == pytest.approx((1 / 2 + 2 / 4) / 3)
        assert UNJUDGED.reciprocal_rank() == 0.5
        assert UNJUDGED.r_precision() == pytest.approx(1 / 3)
        assert UNJUDGED.precision(1) == 0.0

    def test_bpref_skips_unjudged(self) -> None:
        assert UNJUDGED.binary_preference() == pytest.approx(2 / 3)

    def test_ndcg(self) -> None:
        dcg = 1 / log2(3) + 1 / log2(5)
        assert UNJUDGED.ndcg() == pytest.approx(dcg / (1 + 1 / log2(3) + 1 / log2(4)))

    def test_document_lists(self) -> None:
        assert [d.doc_id for d in UNJUDGED.irrelevant_retrieved_documents()] == ["u1", "u2"]
        assert UNJUDGED.judged_irrelevant_retrieved_documents() == []
        assert UNJUDGED.relevant_missed_documents() == [Document("r3")]


class TestGradedJudgments:
    """a:1 b:3 c:-1 d:2 e:-2 with ranking a b c d."""

    def test_threshold_one(self) -> None:
        ev = _evaluator(["a", "b", "c", "d"], GRADED)
        assert ev.average_precision() == pytest.approx((1 + 1 + 3 / 4) / 3)
        assert ev.binary_preference() == 1.0  # no judged non-relevant document: NR = 0
        assert [d.doc_id for d in ev.irrelevant_retrieved_documents()] == ["c"]
        assert ev.judged_irrelevant_retrieved_documents() == []  # a negative value is not a judgment

    def test_threshold_two(self) -> None:
        ev = _evaluator(["a", "b", "c", "d"], GRADED, rel=2)
        assert ev.average_precision() == pytest.approx((1 / 2 + 2 / 4) / 2)
        assert ev.binary_preference() == 0.0  # each relevant document has a (the only NR) above it
        assert ev.precision(2) == 0.5
        assert [d.doc_id for d in ev.judged_irrelevant_retrieved_documents()] == ["a"]

    def test_ndcg_linear_gain_ignores_threshold(self) -> None:
        dcg = 1 + 3 / log2(3) + 2 / log2(5)
        for rel in (1, 2):
            assert _evaluator(["a", "b", "c", "d"], GRADED, rel=rel).ndcg() == pytest.approx(dcg / IDEAL_LINEAR)

    def test_ndcg_exponential_gain(self) -> None:
        ev = _evaluator(["a", "b", "c", "d"], GRADED)
        dcg = 1 + 7 / log2(3) + 3 / log2(5)
        ideal = 7 + 3 / log2(3) + 1 / log2(4)
        assert ev.ndcg(dcg="exp-log2") == pytest.approx(dcg / ideal)
        assert ev.ndcg(1, dcg="exp-log2") == pytest.approx(1 / 7)

    def test_score_accepts_any_measure_string(self) -> None:
        ev = _evaluator(["a", "b", "c", "d"], GRADED)
        assert ev.score("P(rel=2)@2") == 0.5
        assert ev.score("ndcg_cut_1") == pytest.approx(1 / 3)
        assert ev.score("nDCG@1") == ev.score("ndcg_cut.1")
        assert ev.score("NumRel") == 3 and ev.score("NumRet") == 4 and ev.score("NumRelRet") == 3
        assert ev.score("Success@1") == 1.0


DEGENERATE = [
    pytest.param(["a", "b"], {"a": 0}, id="no-relevant-R0"),
    pytest.param([], {"a": 1, "b": 0}, id="empty-ranking"),
    pytest.param(["x", "y"], {"a": 1}, id="only-unjudged-retrieved"),
    pytest.param([], {}, id="nothing-at-all"),
    pytest.param(["x"], {"a": -1}, id="only-negative-judgments"),
]


@pytest.mark.parametrize(("ranking", "judgments"), DEGENERATE)
def test_degenerate_cases_score_zero_never_nan(ranking: list[str], judgments: dict[str, int]) -> None:
    """R = 0, an empty ranking or nothing relevant retrieved: every measure is 0.0 (trec_eval's -nan too)."""
    ev = _evaluator(ranking, judgments)
    values = [ev.average_precision(), ev.binary_preference(), ev.ndcg(), ev.ndcg(10), ev.precision(5),
              ev.recall(5), ev.r_precision(), ev.reciprocal_rank(), *ev.interpolated_precision(),
              *ev.precision_at_fixed_points(), ev.score("Success@5")]
    assert values == [0.0] * len(values)


def test_cutoff_beyond_the_ranking() -> None:
    ev = _evaluator(["a"], {"a": 1})
    assert (ev.precision(10), ev.recall(10), ev.ndcg(10), ev.score("Success@10")) == (0.1, 1.0, 1.0, 1.0)
    assert ev.relevant_retrieved(1000) == 1


@pytest.mark.parametrize("k", [0, -1, 1.5, None, True], ids=["zero", "negative", "float", "none", "bool"])
def test_cutoff_must_be_positive_integer(k: object) -> None:
    with pytest.raises(ValueError, match="parameter 'k' of precision must be an int >= 1"):
        MIXED.precision(k)  # type: ignore[arg-type]


class TestValidation:
    def test_duplicate_retrieved_document(self) -> None:
        with pytest.raises(InputFormatError, match=r"retrieved list of query 'q', position 3: duplicate document .* 'a' \(first at position 1\)"):
            RetrievalEvaluator("q", [Document("a"), Document("b"), Document("a")], [])

    def test_duplicate_judgment(self) -> None:
        with pytest.raises(InputFormatError, match="duplicate judgment"):
            RetrievalEvaluator("q", [], [Judgment("a", 1), Judgment("a", 0)])

    @pytest.mark.parametrize("retrieved", [{Document("a")}, (d for d in [Document("a")]), "abc"],
                             ids=["set", "generator", "str"])
    def test_ranking_must_be_a_list(self, retrieved: object) -> None:
        with pytest.raises(TypeError, match="'retrieved' must be a list of Document"):
            RetrievalEvaluator("q", retrieved, [])  # type: ignore[arg-type]

    def test_items_must_be_model_objects(self) -> None:
        with pytest.raises(TypeError, match=r"'retrieved'\[0\] must be a Document"):
            RetrievalEvaluator("q", ["a"], [])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="must be a Judgment"):
            RetrievalEvaluator("q", [], [("a", 1)])  # type: ignore[list-item]

    def test_pairs_from_the_readers_are_recognised(self) -> None:
        """read_qrels/read_run yield (query_id, item) pairs: another query's pair is named as such."""
        with pytest.raises(InputFormatError, match=r"'judgments' item 1 belongs to query 'q2', not 'q1'"):
            RetrievalEvaluator("q1", [], [Judgment("a", 1), ("q2", Judgment("b", 1))])  # type: ignore[list-item]
        with pytest.raises(InputTypeError, match=r"'retrieved'\[0\] must be a Document, not a \(query_id, Document\)"):
            RetrievalEvaluator("q1", [("q1", Document("a"))], [])  # type: ignore[list-item]
        assert issubclass(InputTypeError, TypeError) and issubclass(InputTypeError, ValueError)

    @pytest.mark.parametrize("query_id", ["", "a\0b", "\ud800", 7], ids=["empty", "nul", "surrogate", "int"])
    def test_query_id(self, query_id: object) -> None:
        with pytest.raises(InputFormatError, match="'query_id' must be"):
            RetrievalEvaluator(query_id, [], [])  # type: ignore[arg-type]

    def test_document_and_judgment_fields(self) -> None:
        with pytest.raises(InputFormatError, match="'doc_id' must be a non-empty str"):
            Document("")
        with pytest.raises(InputFormatError, match="'doc_id' must be a non-empty str without NUL"):
            Judgment("a\0", 1)
        with pytest.raises(InputFormatError, match="'rank' must be >= 1"):
            Document("a", 0)
        with pytest.raises(InputFormatError, match="NaN"):
            Document("a", 1, float("nan"))
        with pytest.raises(TypeError, match="'relevance' must be an int or a float"):
            Judgment("a", "1.5")  # type: ignore[arg-type]
        with pytest.raises(InputFormatError, match="'relevance' must be a finite number; got nan"):
            Judgment("a", float("nan"))
        assert Judgment("a", 1.5).relevance == 1.5  # a float grade (an LLM judge's mean)
        with pytest.raises(TypeError, match="'score' must be a number"):
            Document("a", 1, "high")  # type: ignore[arg-type]
        assert Judgment("a", 2.0) == Judgment("a", 2)
        assert type(Judgment("a", 2.0).relevance) is int
        assert Document("a", 1, 3) == Document("a", 1, 3.0)

    def test_model_objects_are_frozen_and_hashable(self) -> None:
        doc = Document("a", 1, 2.0)
        with pytest.raises(AttributeError):
            doc.rank = 2  # type: ignore[misc]
        assert len({doc, Document("a", 1, 2.0), Judgment("a", 1)}) == 2

    def test_errors_are_value_errors(self) -> None:
        with pytest.raises(ValueError):
            Document("")


class TestSetEvaluator:
    QRELS: ClassVar[dict[str, dict[str, int]]] = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}, "10": {"m": 1}, "9": {"n": 1}}
    RUN: ClassVar[dict[str, dict[str, float]]] = {"q1": {"a": 1.0, "b": 3.0, "c": 2.0}, "q2": {"y": 1.0}, "10": {"m": 5.0}, "extra": {"z": 1.0}}

    def test_means_and_sums(self) -> None:
        runs = SetEvaluator.from_dict(self.QRELS, self.RUN)
        ap = {"q1": (1 / 2 + 2 / 3) / 2, "q2": 0.0, "10": 1.0, "9": 0.0}
        assert runs.per_query("AP") == pytest.approx(ap)
        assert runs.mean("AP") == pytest.approx(sum(ap.values()) / 4)
        assert runs.geometric_mean("AP") == pytest.approx((ap["q1"] * 1e-5 * 1.0 * 1e-5) ** 0.25)
        assert runs.aggregate("GMAP") == pytest.approx(runs.geometric_mean("AP"))
        assert runs.aggregate("NumRet") == runs.num_retrieved() == 5
        assert runs.num_relevant() == 5 and runs.num_relevant_retrieved() == 3
        assert runs.aggregate("NumQ") == 4 == runs.num_queries

    @pytest.mark.parametrize(("measure", "how"), [
        ("GMAP", "a geometric mean"), ("gm_map", "a geometric mean"), ("GMBpref", "a geometric mean"),
        ("NumQ", "the sum over queries"), ("NumRet", "the sum over queries"), ("num_rel", "the sum over queries"),
        ("NumRelRet", "the sum over queries"), ("NumNonRelJudgedRet", "the sum over queries"),
        ("GAUC", "a weighted mean"), ("AUC", "a weighted mean"),
        ("PooledAUC", "pooled over the rows of every query"),
    ], ids=["GMAP", "gm_map", "GMBpref", "NumQ", "NumRet", "num_rel", "NumRelRet", "NumNonRelJudgedRet", "GAUC", "AUC",
            "PooledAUC"])
    def test_mean_refuses_a_measure_summarised_otherwise(self, measure: str, how: str) -> None:
        """mean() is the arithmetic mean: for GMAP it would be MAP, so it raises and points to aggregate() (issue 15)."""
        runs = SetEvaluator.from_dict(self.QRELS, self.RUN)
        with pytest.raises(MeasureError, match=rf"^mean\('{measure}'\): the summary of \w+ is {how}, not an "
                                              rf"arithmetic mean; aggregate\('{measure}'\) returns it"):
            runs.mean(measure)
        assert runs.aggregate(measure) >= 0.0  # the summary is there, under its own name

    @pytest.mark.parametrize("measure", ["AP", "map", "nDCG@10", "P@2", "RR", "Bpref", "Rprec", "utility"])
    def test_mean_is_the_summary_wherever_it_is_allowed(self, measure: str) -> None:
        runs = SetEvaluator.from_dict(self.QRELS, self.RUN)
        values = runs.array(measure)
        assert runs.mean(measure) == runs.aggregate(measure) == pytest.approx(sum(values) / len(values), abs=1e-15)

    def test_query_set_report_and_order(self) -> None:
        runs = SetEvaluator.from_dict(self.QRELS, self.RUN)
        assert list(runs) == ["10", "9", "q1", "q2"]  # byte order, as trec_eval's strcmp
        assert runs.missing_from_run == ["9"]
        assert runs.not_judged == ["extra"]
        intersection = SetEvaluator.from_dict(self.QRELS, self.RUN, complete=False)
        assert list(intersection) == ["10", "q1", "q2"]

    def test_getitem_gives_the_query_evaluator(self) -> None:
        runs = SetEvaluator.from_dict(self.QRELS, self.RUN)
        q1 = runs["q1"]
        assert isinstance(q1, RetrievalEvaluator) and q1.query_id == "q1"
        assert [d.doc_id for d in q1.retrieved_documents()] == ["b", "c", "a"]
        assert [d.score for d in q1.retrieved_documents()] == [3.0, 2.0, 1.0]
        assert runs["9"].retrieved_documents() == [] and runs["9"].relevant_missed_documents() == [Document("n")]
        with pytest.raises(KeyError, match="no query 'nope'"):
            runs["nope"]

    def test_ties_break_on_doc_id_descending_by_bytes(self) -> None:
        runs = SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"d2": 1.0, "d10": 1.0, "a": 1.0, "B": 1.0, "z": 0.5}})
        assert [d.doc_id for d in runs["q"].retrieved_documents()] == ["d2", "d10", "a", "B", "z"]
        assert runs["q"].reciprocal_rank() == pytest.approx(1 / 3)

    def test_from_evaluators_equals_from_dict(self) -> None:
        runs = SetEvaluator.from_dict(self.QRELS, self.RUN)
        rebuilt = SetEvaluator(runs[q] for q in runs)
        for measure in ("AP", "nDCG", "P@2", "Bpref", "RR", "NumRel"):
            assert rebuilt.per_query(measure) == runs.per_query(measure)

    def test_from_evaluators_keeps_their_relevance_threshold(self) -> None:
        strict = _evaluator(["a", "b"], {"a": 1, "b": 2}, rel=2)
        assert SetEvaluator([strict]).mean("AP") == strict.average_precision() == 0.5
        with pytest.raises(ValueError, match="different relevance thresholds"):
            SetEvaluator([strict, RetrievalEvaluator("other", [], [])])
        assert SetEvaluator([strict, RetrievalEvaluator("other", [], [])], rel=1).per_query("AP")["q"] == 1.0

    def test_repr_counts_in_the_singular_and_the_plural(self) -> None:
        one = SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": 1.0}})
        assert repr(one) == "SetEvaluator(1 query, run_id='')"
        assert repr(one["q"]) == "RetrievalEvaluator(query_id='q', retrieved=1 document, judged=1 document)"
        two = SetEvaluator.from_dict(self.QRELS, self.RUN)
        assert repr(two) == "SetEvaluator(4 queries, run_id='')"
        assert repr(two["q1"]) == "RetrievalEvaluator(query_id='q1', retrieved=3 documents, judged=3 documents)"

    def test_from_evaluators_rejects_repeated_queries(self) -> None:
        with pytest.raises(InputFormatError, match="repeated: q"):
            SetEvaluator([_evaluator([], {}), _evaluator([], {})])

    def test_depth_and_judged_only(self) -> None:
        qrels = {"q": {"a": 1, "c": 1, "d": 0}}
        run = {"q": {"u": 4.0, "a": 3.0, "v": 2.0, "c": 1.0}}
        assert SetEvaluator.from_dict(qrels, run).per_query("AP")["q"] == pytest.approx((1 / 2 + 2 / 4) / 2)
        assert SetEvaluator.from_dict(qrels, run, max_depth=2).per_query("AP")["q"] == pytest.approx(1 / 4)
        judged = SetEvaluator.from_dict(qrels, run, judged_only=True)
        assert judged.per_query("AP")["q"] == 1.0 and judged.per_query("NumRet")["q"] == 2

    def test_relevance_level(self) -> None:
        runs = SetEvaluator.from_dict(self.QRELS, self.RUN, rel=2)
        assert runs.per_query("NumRel") == {"10": 0.0, "9": 0.0, "q1": 1.0, "q2": 0.0}
        assert runs.per_query("P(rel=1)@3")["q1"] == pytest.approx(2 / 3)

    def test_bad_dict_values(self) -> None:
        with pytest.raises(InputTypeError, match="qrels relevance of query 'q', document 'a' must be an int or a float"):
            SetEvaluator.from_dict({"q": {"a": "1.5"}}, {"q": {"a": 1.0}})  # type: ignore[dict-item]
        with pytest.raises(InputFormatError, match="qrels relevance of query 'q', document 'a' must be a finite number"):
            SetEvaluator.from_dict({"q": {"a": float("inf")}}, {"q": {"a": 1.0}})
        with pytest.raises(InputFormatError, match="NaN"):
            SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": float("nan")}})
        with pytest.raises(InputTypeError, match="run score of query 'q', document 'a' must be a number; got str 'x'"):
            SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": "x"}})  # type: ignore[dict-item]


@pytest.mark.parametrize("rel", [-1, 1.5, True, "1"], ids=["negative", "float", "bool", "str"])
def test_relevance_threshold_is_checked_up_front(rel: object) -> None:
    with pytest.raises(ValueError, match="parameter 'rel' of (Retrieval|Set)Evaluator must be an int >= 0"):
        RetrievalEvaluator("q", [], [], rel=rel)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="parameter 'rel' of (Retrieval|Set)Evaluator must be an int >= 0"):
        SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": 1.0}}, rel=rel)  # type: ignore[arg-type]


def test_rel_and_k_share_the_measure_parameter_check() -> None:
    """The evaluator's ``rel`` and ``k`` go through the measures' own Param check: same domain, same error."""
    import numpy as np

    from retrieval_eval import InvalidParameterError, parse

    ev = RetrievalEvaluator("q", [Document("a"), Document("b")], [Judgment("b", 2)], rel=np.int64(2))  # type: ignore[arg-type]
    assert ev.rel == 2 and type(ev.rel) is int
    assert ev.precision(np.int64(2)) == 0.5 == ev.score("P@2")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="must be an int >= 1; got 0") as method:
        ev.precision(0)
    with pytest.raises(InvalidParameterError, match="must be an int >= 1; got 0") as string:
        parse("P@0")
    assert str(method.value).split(" must ")[1] == str(string.value).split(" must ")[1]
