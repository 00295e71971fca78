"""In-memory input (issue 15): ids are data, NumPy scalars are numbers, and every refusal is a typed error.

The Python API takes any non-empty str as an id; only writing one into a TREC file needs a field
without whitespace. Everything refused raises the project's InputTypeError or InputFormatError (or,
for measure parameters, InvalidParameterError), never a raw UnicodeEncodeError, OverflowError,
AttributeError or TypeError.
"""

from __future__ import annotations

import io
import traceback
from pathlib import Path

import numpy as np
import pytest

from retrieval_eval import (
    Document,
    InputFormatError,
    InputTypeError,
    InvalidParameterError,
    Judgment,
    RetrievalEvaluator,
    SetEvaluator,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)

QRELS = "q 0 a 1\nq 0 b 0\n"
RUN = "q Q0 a 1 2.0 r\nq Q0 b 2 1.0 r\n"


class TestIdsAreData:
    @pytest.mark.parametrize("query_id", ["laptop bag", "a\tb", " lead", "trail\n", "\u00a0nbsp"])
    def test_any_non_empty_str_is_a_query_id(self, query_id: str) -> None:
        """RetrievalEvaluator('laptop bag', ...) raised InputFormatError: an in-memory id is data."""
        ev = RetrievalEvaluator(query_id, [Document("x y"), Document("a\tb")], [Judgment("a\tb", 1)])
        assert ev.query_id == query_id
        assert ev.score("RR") == 0.5
        assert [d.doc_id for d in ev.relevant_retrieved_documents()] == ["a\tb"]
        runs = SetEvaluator([ev])
        assert runs.query_ids == [query_id] and runs.mean("RR") == 0.5

    def test_from_dict_takes_the_same_ids(self) -> None:
        runs = SetEvaluator.from_dict({"laptop bag": {"red one": 1}}, {"laptop bag": {"red one": 1.0, "b": 2.0}})
        assert runs.per_query("RR") == {"laptop bag": 0.5}
        assert runs["laptop bag"].judgments() == [Judgment("red one", 1)]

    @pytest.mark.parametrize("make", [
        lambda: Document("\ud800"),
        lambda: Judgment("a\udfff", 1),
        lambda: RetrievalEvaluator("\ud800", [], []),
        lambda: SetEvaluator.from_dict({"q": {"\ud800": 1}}, {"q": {"a": 1.0}}),
        lambda: SetEvaluator.from_dict({"q": {"a": 1}}, {"\ud800": {"a": 1.0}}),
    ], ids=["document", "judgment", "query", "dict-doc", "dict-query"])
    def test_a_lone_surrogate_is_an_input_error(self, make) -> None:
        """A lone surrogate raised UnicodeEncodeError deep in the build: now InputFormatError, up front."""
        with pytest.raises(InputFormatError, match="encodable as UTF-8"):
            make()

    def test_nul_and_empty_ids_are_still_refused(self) -> None:
        """NumPy strings drop trailing NULs, so 'a\\0' would silently be 'a': NUL stays refused."""
        for bad in ("", "a\0", "\0b"):
            with pytest.raises(InputFormatError, match="non-empty str without NUL"):
                Document(bad)

    def test_writing_an_id_with_whitespace_names_it(self, tmp_path: Path) -> None:
        """Only a TREC file needs ids without whitespace: the writers refuse them, naming the id, before opening."""
        qrels_path, run_path = tmp_path / "q.txt", tmp_path / "r.txt"
        with pytest.raises(InputFormatError, match=r"write_qrels: query id .*whitespace.*'laptop bag'"):
            write_qrels(qrels_path, {"laptop bag": {"a": 1}})
        with pytest.raises(InputFormatError, match=r"write_qrels: document id of query 'q' .*'a\\tb'"):
            write_qrels(qrels_path, {"q": {"a\tb": 1}})
        with pytest.raises(InputFormatError, match=r"write_run: document id of query 'q' .*'x y'"):
            write_run(run_path, {"q": {"x y": 1.0}})
        with pytest.raises(InputFormatError, match=r"write_run: run_id .*'my run'"):
            write_run(run_path, {"q": {"x": 1.0}}, run_id="my run")
        with pytest.raises(InputFormatError, match="encodable as UTF-8"):
            write_run(run_path, {"\ud800": {"x": 1.0}})
        assert not qrels_path.exists() and not run_path.exists()
        write_qrels(qrels_path, {"q\u00a01": {"a": 1}})  # a Unicode space is data in a file too
        assert [(q, j.doc_id) for q, j in read_qrels(qrels_path)] == [("q\u00a01", "a")]


class TestNumpyScalars:
    def test_model_fields_take_numpy_scalars(self) -> None:
        """np.int64 relevance, np.float32 scores and np.int64 ranks were InputTypeError; stored as Python numbers."""
        judgment = Judgment("a", np.int64(2))
        doc = Document("a", np.int64(1), np.float32(1.5))
        assert judgment == Judgment("a", 2) and type(judgment.relevance) is int
        assert doc == Document("a", 1, 1.5) and type(doc.rank) is int and type(doc.score) is float
        assert Document("a", score=np.int32(3)).score == 3.0
        assert Judgment("a", np.float64(2.0)).relevance == 2

    def test_numpy_rel_threshold(self) -> None:
        """rel=np.int64(2) is the int 2 everywhere: constructor, every method, SetEvaluator."""
        ev = RetrievalEvaluator("q", [Document("a"), Document("b")], [Judgment("a", 1), Judgment("b", 2)],
                                rel=np.int64(2))  # type: ignore[arg-type]
        assert type(ev.rel) is int and ev.rel == 2
        assert ev.score("RR") == 0.5 and ev.precision(2) == 0.5 and ev.average_precision() == 0.5
        runs = SetEvaluator.from_dict({"q": {"a": np.int64(1), "b": np.int64(2)}},
                                      {"q": {"a": np.float32(2.0), "b": np.float64(1.0)}},
                                      rel=np.int64(2))  # type: ignore[arg-type]
        assert runs.mean("RR") == 0.5 and type(runs.rel) is int

    def test_numpy_bools_are_not_numbers(self) -> None:
        with pytest.raises(InputTypeError, match="'score' must be a number"):
            Document("a", score=np.bool_(True))  # type: ignore[arg-type]
        with pytest.raises(InputTypeError, match="'relevance' must be an int"):
            Judgment("a", np.bool_(True))  # type: ignore[arg-type]


class TestRangesAndTypes:
    @pytest.mark.parametrize("relevance", [2**63, -(2**63) - 1, 1e300])
    def test_relevance_must_fit_in_int64(self, relevance: float) -> None:
        """Judgment('a', 2**63) was accepted and then raised OverflowError in the evaluator."""
        with pytest.raises(InputFormatError, match="must fit in a 64-bit integer"):
            Judgment("a", relevance)  # type: ignore[arg-type]
        with pytest.raises(InputFormatError, match="'q', document 'a' must fit in a 64-bit integer"):
            SetEvaluator.from_dict({"q": {"a": relevance}}, {"q": {"a": 1.0}})  # type: ignore[dict-item]
        assert Judgment("a", 2**63 - 1).relevance == 2**63 - 1

    def test_a_score_too_large_for_a_float(self) -> None:
        with pytest.raises(InputFormatError, match="'score' is too large for a float"):
            Document("a", score=10**400)
        with pytest.raises(InputFormatError, match="document 'a' is too large for a float"):
            SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": 10**400}})

    @pytest.mark.parametrize("make", [
        lambda: Judgment("a", "x"),  # type: ignore[arg-type]
        lambda: Document("a", 0),
        lambda: RetrievalEvaluator("q", [], [], rel=-1),
        lambda: RetrievalEvaluator("q", [Document("a"), Document("a")], []),
        lambda: SetEvaluator([], rel=-1),
    ], ids=["judgment", "document", "evaluator-rel", "evaluator-duplicate", "set-rel"])
    def test_a_failed_constructor_leaves_no_object_whose_repr_raises(self, make) -> None:
        """A traceback with locals (pytest -l, debuggers) calls repr on the half-built self: it must not raise."""
        with pytest.raises(ValueError) as info:
            make()
        text = "".join(traceback.TracebackException.from_exception(info.value, capture_locals=True).format())
        assert "Error" in text

    def test_score_of_a_list_is_a_type_error(self) -> None:
        """ev.score(['AP', 'P@5']) raised AttributeError: ask for one measure at a time."""
        ev = RetrievalEvaluator("q", [Document("a")], [Judgment("a", 1)])
        with pytest.raises(InputTypeError, match=r"a measure must be a str or a Measure; got list .*one measure at a time"):
            ev.score(["AP", "P@5"])  # type: ignore[arg-type]
        runs = SetEvaluator([ev])
        with pytest.raises(InputTypeError, match="a measure must be a str or a Measure"):
            runs.mean(["AP"])  # type: ignore[arg-type]

    @pytest.mark.parametrize(("qrels", "run", "message"), [
        ({"q": {"a": 1}}, {"1": ["a", "b"]}, r"run\['1'\] must be a mapping \{doc_id: score\}; got list"),
        ({"q": [("a", 1)]}, {"q": {"a": 1.0}}, r"qrels\['q'\] must be a mapping \{doc_id: relevance\}; got list"),
        ([("q", "a", 1)], {"q": {"a": 1.0}}, r"'qrels' must be a mapping \{query_id: \{doc_id: relevance\}\}"),
    ], ids=["run-list", "qrels-pairs", "qrels-rows"])
    def test_from_dict_shapes(self, qrels: object, run: object, message: str) -> None:
        """from_dict(qrels, {'1': ['a', 'b']}) raised AttributeError: now InputTypeError naming the entry."""
        with pytest.raises(InputTypeError, match=message):
            SetEvaluator.from_dict(qrels, run)  # type: ignore[arg-type]

    @pytest.mark.parametrize("score", ["1.0", True, np.bool_(False), None, b"1"], ids=["str", "bool", "np-bool", "none", "bytes"])
    def test_from_dict_scores_follow_documents_rule(self, score: object) -> None:
        """from_dict took the score '1.0' and True; Document never did. One rule: InputTypeError naming the entry."""
        with pytest.raises(InputTypeError, match="run score of query 'q', document 'a' must be a number"):
            SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"b": 2.0, "a": score}})  # type: ignore[dict-item]

    @pytest.mark.parametrize("relevance", [True, "1", b"1"], ids=["bool", "str", "bytes"])
    def test_from_dict_relevance_follows_judgments_rule(self, relevance: object) -> None:
        with pytest.raises(InputTypeError, match="qrels relevance of query 'q', document 'a' must be an int"):
            SetEvaluator.from_dict({"q": {"a": relevance}}, {"q": {"a": 1.0}})  # type: ignore[dict-item]
        assert SetEvaluator.from_dict({"q": {"a": 2.0}}, {"q": {"a": 1.0}}).mean("AP") == 1.0  # type: ignore[dict-item]

    @pytest.mark.parametrize(("max_depth", "error"), [
        (1.5, InputTypeError), ("3", InputTypeError), (True, InputTypeError), (-1, InputFormatError),
    ], ids=["float", "str", "bool", "negative"])
    def test_max_depth(self, max_depth: object, error: type[Exception]) -> None:
        """max_depth=1.5 was accepted and max_depth='3' raised a raw TypeError: both now name max_depth."""
        with pytest.raises(error, match="'max_depth' must be"):
            SetEvaluator.from_trec(io.StringIO(QRELS), io.StringIO(RUN), max_depth=max_depth)  # type: ignore[arg-type]
        with pytest.raises(error, match="'max_depth' must be"):
            SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": 1.0}}, max_depth=max_depth)  # type: ignore[arg-type]
        depth_one = SetEvaluator.from_trec(io.StringIO(QRELS), io.StringIO(RUN), max_depth=np.int64(1))  # type: ignore[arg-type]
        assert depth_one.aggregate("NumRet") == 1.0

    def test_optional_int_options_share_one_check(self) -> None:
        """max_depth, a Document's rank, the label metrics' k and spark's partitions: one check, one wording.

        The label metrics said 'must be an int >= 1' for k=0, and spark refused partitions=0 as a type
        error and np.int64(2) outright; all now say the same as max_depth and rank.
        """
        from retrieval_eval.labels import retrieval_mrr

        labels, candidates = [0, 1], [[1, 0], [1, 0]]  # at k=1: query 0 misses, query 1 hits
        below: list[tuple[object, str]] = [
            (lambda: SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": 1.0}}, max_depth=-1),
             "'max_depth' must be >= 0 or None; got -1"),
            (lambda: Document("a", rank=0), "'rank' must be >= 1 or None; got 0"),
            (lambda: retrieval_mrr(labels, candidates, k=0), "retrieval_mrr: 'k' must be >= 1 or None; got 0"),
        ]
        wrong_type: list[tuple[object, str]] = [
            (lambda: SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": 1.0}}, max_depth=1.5),
             "'max_depth' must be an int >= 0 or None; got float 1.5"),
            (lambda: Document("a", rank="1"), "'rank' must be an int >= 1 or None; got str '1'"),
            (lambda: retrieval_mrr(labels, candidates, k=True),
             "retrieval_mrr: 'k' must be an int >= 1 or None; got bool True"),
        ]
        try:
            from retrieval_eval.integrations import spark
        except ImportError:  # MissingExtraError without pyspark
            spark = None
        if spark is not None:  # the check runs before any DataFrame is touched: no Spark session needed
            below.append((lambda: spark.evaluate(None, None, "AP", partitions=0),  # type: ignore[arg-type]
                          "'partitions' must be >= 1 or None; got 0"))
            wrong_type.append((lambda: spark.evaluate(None, None, "AP", partitions=2.0),  # type: ignore[arg-type]
                               "'partitions' must be an int >= 1 or None; got float 2.0"))
            assert spark._check_partitions(np.int64(2)) == 2
        for errors, kind in ((below, InputFormatError), (wrong_type, InputTypeError)):
            for call, message in errors:
                with pytest.raises(kind) as raised:
                    call()  # type: ignore[operator]
                assert str(raised.value) == message
        assert Document("a", rank=np.int64(3)).rank == 3  # type: ignore[arg-type]
        assert retrieval_mrr(labels, candidates, k=np.int64(1)) == 0.5

    def test_parameter_errors_stay_invalid_parameter_errors(self) -> None:
        ev = RetrievalEvaluator("q", [Document("a")], [Judgment("a", 1)])
        with pytest.raises(InvalidParameterError, match="at most 2\\*\\*62"):
            ev.precision(10**21)
        with pytest.raises(InvalidParameterError, match="'recall' of IPrec"):
            ev.score("IPrec@1e308")


def test_round_trip_through_the_writers(tmp_path: Path) -> None:
    """What the writers accept, the readers give back."""
    write_run(tmp_path / "r", {"q": {"a": np.float32(2.0), "b": 1}})  # type: ignore[dict-item]
    assert [(q, d.doc_id, d.rank) for q, d in read_run(tmp_path / "r")] == [("q", "a", 1), ("q", "b", 2)]
