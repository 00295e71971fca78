"""Per-query tables in Python (issue 11, item 5): evaluate(), to_dataframe(), measure groups in lists,
judgment() and the missed relevant documents with their grades.

The oracles: per_query() (the values every other entry point prints), pytrec_eval's
RelevanceEvaluator (an independent C implementation with the same dict shape), the CLI's own ``-m``
expansion, and hand-made examples.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import pytrec_eval
from strategies import random_dataset
from test_vs_pytrec_eval import DATASETS, run_pytrec

from retrieval_eval import (
    Document,
    InputFormatError,
    InputTypeError,
    Judgment,
    MeasureError,
    RetrievalEvaluator,
    SetEvaluator,
    UnknownMeasureError,
    cli,
    compare,
)
from retrieval_eval.data import sample_paths
from retrieval_eval.measures import (
    TREC_NAMES,
    parse,
    parse_all,
    parse_list,
    parse_trec_options,
    trec_table,
)
from retrieval_eval.model import MissingExtraError

DATA = Path(__file__).resolve().parents[1] / "retrieval_eval" / "data"
QRELS, RUN = str(DATA / "sample.qrels"), str(DATA / "sample.run")

#: Every trec_eval name that is a group of measures by itself: its default cut-offs (P, ndcg_cut ...).
CUTOFF_NAMES = sorted(name for name, (_, trec) in TREC_NAMES.items() if trec.cutoff)
GROUPS = [*trec_table.group_names(), *CUTOFF_NAMES]

#: ir_measures strings beyond trec_eval's names, so that evaluate() is checked on them too.
EXTRA = [
    "nDCG@10",
    "P(rel=2)@5",
    "RBP(p=0.8)",
    "Judged@10",
    "ERR@10",
    "SetF(beta=0.5)",
    "infAP",
]


@pytest.fixture(scope="module")
def sample() -> SetEvaluator:
    """The bundled sample: graded and negative judgments, ties, a judged query the run lacks (q13)."""
    return SetEvaluator.from_trec(QRELS, RUN)


# ----------------------------------------------------------------------------------- evaluate()
class TestEvaluate:
    def test_equals_per_query_for_every_numeric_measure(
        self, sample: SetEvaluator
    ) -> None:
        """Each value is per_query()'s, for all of all_trec and ir_measures strings, bit for bit."""
        measures = [m for m, _ in parse_list(["all_trec", *EXTRA], numeric=True)]
        table = sample.evaluate(measures)
        assert list(table) == sample.query_ids
        for measure in measures:
            expected = sample.per_query(measure)
            assert {q: row[str(measure)] for q, row in table.items()} == expected, str(
                measure
            )

    def test_shape_and_order(self, sample: SetEvaluator) -> None:
        """Queries in query_ids order; within a query the measures in the order asked, canonically named."""
        table = sample.evaluate(["ndcg_cut.10,5", "map", "RR"])
        assert list(table) == sample.query_ids
        assert all(
            list(row) == ["nDCG@5", "nDCG@10", "AP", "RR"] for row in table.values()
        )
        assert all(type(v) is float for row in table.values() for v in row.values())

    def test_one_string_is_a_list_of_one(self, sample: SetEvaluator) -> None:
        assert (
            sample.evaluate("AP")
            == sample.evaluate(["AP"])
            == sample.evaluate([parse("AP")])
        )

    def test_one_key_per_measure(self, sample: SetEvaluator) -> None:
        """map and AP are one measure: one key, canonical or trec_eval's, at its first place."""
        asked = ["map", "AP", "P_10", "P@10", "nDCG@10", "ndcg_cut_10", "RBP(p=0.5)"]
        row = sample.evaluate(asked)["q1"]
        assert list(row) == ["AP", "P@10", "nDCG@10", "RBP(p=0.5)"]
        trec = sample.evaluate(asked, keys="trec")["q1"]
        assert list(trec) == ["map", "P_10", "ndcg_cut_10", "rbp_p=0.5"]
        assert list(trec.values()) == list(row.values())
        assert list(sample.evaluate(["ERR@10"], keys="trec")["q1"]) == [
            "ERR@10"
        ]  # not a trec_eval measure

    def test_rel_is_in_the_key(self) -> None:
        """Keys name the measure computed: with rel=2, P@5 is P(rel=2)@5 (nDCG has no threshold)."""
        ev = SetEvaluator.from_dict(
            {"q": {"a": 1, "b": 2}}, {"q": {"a": 2.0, "b": 1.0}}, rel=2
        )
        assert ev.evaluate(["P@1", "P@2", "nDCG@2"]) == {
            "q": {
                "P(rel=2)@1": 0.0,
                "P(rel=2)@2": 0.5,
                "nDCG@2": ev.per_query("nDCG@2")["q"],
            }
        }

    def test_text_measure(self, sample: SetEvaluator) -> None:
        """relstring has no value: left out of all_trec, refused when asked for by itself."""
        assert "relstring" not in sample.evaluate("all_trec", keys="trec")["q1"]
        assert "RelString" not in sample.to_dataframe("all_trec").columns
        with pytest.raises(MeasureError, match="text measure.*per_query_text"):
            sample.evaluate(["AP", "relstring"])

    @pytest.mark.parametrize(
        ("measures", "error"),
        [
            (["nDGC@10"], UnknownMeasureError),
            ([3], InputTypeError),
            (3, InputTypeError),
            ({"AP": 1}, InputTypeError),
        ],
        ids=["unknown", "int-item", "int", "dict"],
    )
    def test_bad_measures(
        self, sample: SetEvaluator, measures: object, error: type[Exception]
    ) -> None:
        with pytest.raises(error):
            sample.evaluate(measures)  # type: ignore[arg-type]

    def test_runid_is_no_measure(self, sample: SetEvaluator) -> None:
        """pytrec_eval lists runid (and gives 0.0 for it); here it is an error that says where the name is."""
        with pytest.raises(
            UnknownMeasureError, match="'runid' is not a measure.*SetEvaluator.run_id"
        ):
            sample.evaluate(["map", "runid"])

    def test_bad_keys(self, sample: SetEvaluator) -> None:
        with pytest.raises(
            InputFormatError,
            match="'keys' must be one of 'canonical', 'trec'; got 'label'",
        ):
            sample.evaluate(["AP"], keys="label")

    def test_empty_list(self, sample: SetEvaluator) -> None:
        assert sample.evaluate([]) == {q: {} for q in sample.query_ids}


# ------------------------------------------------------------------- pytrec_eval as the oracle
#: trec_eval 9 (pytrec_eval) vs 10: the iprec cut-off rule changed (pinned in test_vs_pytrec_eval.py).
TREC9_CUTOFFS = ("iprec_at_recall_", "11pt_avg")
#: pytrec_eval's per-query gm_map / gm_bpref are log(max(value, 1e-5)); ours are the values themselves.
LOGGED = ("gm_map", "gm_bpref")


@pytest.mark.parametrize("name", sorted(DATASETS))
@pytest.mark.parametrize("rel", [1, 2])
def test_evaluate_is_pytrec_evals_evaluate(name: str, rel: int) -> None:
    """The one-line port: same request, same keys, same values on every query pytrec_eval scores."""
    qrels, run = random_dataset(**DATASETS[name])
    request = set(pytrec_eval.supported_measures) - {"runid", "relstring"}
    theirs = run_pytrec(qrels, run, rel, request)  # (the queries with a ranking: pytrec_eval crashes on others)
    ours = SetEvaluator.from_dict(qrels, run, rel=rel).evaluate(request, keys="trec")
    # We also score qrels queries the run lacks (trec_eval -c): compare on pytrec_eval's.
    assert set(theirs) <= set(ours)
    compared = 0
    for query, values in theirs.items():
        assert set(ours[query]) == set(values), query
        for key, value in values.items():
            if key.startswith(TREC9_CUTOFFS):
                continue
            mine = (
                math.log(max(ours[query][key], 1e-5))
                if key in LOGGED
                else ours[query][key]
            )
            assert mine == pytest.approx(value, abs=1e-9), (query, key)
            compared += 1
    assert compared > 1000


# -------------------------------------------------------------------------------- to_dataframe()
class TestToDataFrame:
    def test_values_index_columns(self, sample: SetEvaluator) -> None:
        table = sample.to_dataframe(["P", "nDCG@10", "map"])
        expected = [str(m) for m in parse_all("P")] + ["nDCG@10", "AP"]
        assert list(table.columns) == expected
        assert table.index.name == "query_id" and list(table.index) == sample.query_ids
        assert all(str(dtype) == "float64" for dtype in table.dtypes)
        for column in expected:
            assert table[column].to_dict() == sample.per_query(column)

    def test_trec_keys(self, sample: SetEvaluator) -> None:
        table = sample.to_dataframe(["official"], keys="trec")
        assert list(table.columns) == [label for m, label in parse_list("official")]
        assert table["map"].tolist() == sample.array("AP").tolist()

    def test_missing_pandas(
        self, sample: SetEvaluator, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setitem(sys.modules, "pandas", None)
        with pytest.raises(MissingExtraError) as caught:
            sample.to_dataframe(["AP"])
        assert str(caught.value) == (
            "SetEvaluator.to_dataframe needs pandas: "
            "pip install 'retrieval-evaluator[dataframe]'"
        )
        assert "\n" not in str(caught.value)


# ---------------------------------------------------------------------------------------- groups
@pytest.mark.parametrize("group", GROUPS)
def test_groups_expand_as_the_cli_expands_them(group: str) -> None:
    """parse_list (every API list) and the CLI's -m give the same measures and labels."""
    expected = parse_trec_options([group])  # what cli._requested reads -m with
    assert parse_list(group) == parse_list([group]) == expected
    assert [m for m, _ in expected] == parse_all(group)


@pytest.mark.parametrize(
    "group", ["official", "all_trec", "P", "ndcg_cut", "iprec_at_recall"]
)
def test_cli_prints_the_labels_evaluate_uses(
    group: str, capsys: pytest.CaptureFixture[str], sample: SetEvaluator
) -> None:
    """End to end: the labels of ``retrieval-eval evaluate -m GROUP`` are evaluate(GROUP, keys='trec')'s."""
    assert cli.main(["evaluate", "-m", group, QRELS, RUN]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    printed = [
        label.strip()
        for label, query, _ in rows
        if query == "all" and label.strip() != "runid"
    ]
    assert printed == list(sample.evaluate(group, keys="trec")["q1"])


def test_groups_in_every_list_of_measures(sample: SetEvaluator) -> None:
    """evaluate, to_dataframe and compare take groups."""
    expected = [str(m) for m in parse_all("P")]
    assert list(sample.evaluate("P")["q1"]) == expected
    assert list(sample.to_dataframe(["P"]).columns) == expected
    other = SetEvaluator.from_dict(
        {"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    )
    result = compare(None, {"x": other, "y": other}, ["P", "map"], test="sign")
    assert list(result.measures) == [*expected, "AP"]
    # all_trec's text measure, relstring, has no values to compare: left out.
    everything = compare(None, {"x": other, "y": other}, ["all_trec"], test="sign")
    assert "RelString" not in everything.measures and "AP" in everything.measures


def test_parse_list_keeps_the_first_of_a_repeated_label() -> None:
    assert [label for _, label in parse_list(["P.5,10", "P_10", "P@10", "P.10"])] == [
        "P_5",
        "P_10",
        "P@10",
    ]


# --------------------------------------------------------------------------- judgment(doc_id)
def _graded() -> RetrievalEvaluator:
    # Ranking a x f b; judged a=1, b=2, c=3, d=1, e=0, f=-1 (pooled, not judged), g=2, h=3.
    judged = {"a": 1, "b": 2, "c": 3, "d": 1, "e": 0, "f": -1, "g": 2, "h": 3}
    return RetrievalEvaluator(
        "q",
        [Document(d) for d in ("a", "x", "f", "b")],
        [Judgment(d, r) for d, r in judged.items()],
    )


class TestJudgment:
    @pytest.mark.parametrize(
        ("doc_id", "expected"),
        [
            ("a", 1),
            ("b", 2),
            ("c", 3),
            ("e", 0),
            ("f", -1),
            ("x", None),
            ("never-seen", None),
        ],
        ids=[
            "retrieved-1",
            "retrieved-2",
            "missed-3",
            "zero",
            "negative",
            "retrieved-unjudged",
            "unknown",
        ],
    )
    def test_values(self, doc_id: str, expected: int | None) -> None:
        assert _graded().judgment(doc_id) == expected

    def test_equals_judgments_on_the_sample(self, sample: SetEvaluator) -> None:
        for query_id in sample:
            ev = sample[query_id]
            for judged in ev.judgments():
                assert ev.judgment(judged.doc_id) == judged.relevance
            for doc in ev.retrieved_documents():
                assert ev.judgment(doc.doc_id) == {
                    j.doc_id: j.relevance for j in ev.judgments()
                }.get(doc.doc_id)

    def test_ids_read_from_files(self, write: Callable[[str, str], str]) -> None:
        """Files keep ids as UTF-8 bytes: looked up by the str all the same."""
        qrels = write("u.qrels", "q 0 \u00e9 2\nq 0 e 1\n")
        run = write("u.run", "q Q0 \u00e9 1 2.0 r\nq Q0 x 2 1.0 r\n")
        ev = SetEvaluator.from_trec(qrels, run)["q"]
        assert (ev.judgment("\u00e9"), ev.judgment("e"), ev.judgment("x")) == (
            2,
            1,
            None,
        )
        assert ev.relevant_missed_judgments() == [Judgment("e", 1)]

    def test_unicode_ids(self) -> None:
        ev = RetrievalEvaluator(
            "q", [Document("é")], [Judgment("é", 2), Judgment("e", 0)]
        )
        assert (ev.judgment("é"), ev.judgment("e"), ev.judgment("ê")) == (2, 0, None)

    @pytest.mark.parametrize(
        ("doc_id", "error"),
        [(3, InputTypeError), ("", InputFormatError)],
        ids=["int", "empty"],
    )
    def test_bad_ids(self, doc_id: object, error: type[Exception]) -> None:
        with pytest.raises(error, match="'doc_id'"):
            _graded().judgment(doc_id)  # type: ignore[arg-type]


class TestMissedWithGrades:
    def test_highest_grade_first_then_doc_id(self) -> None:
        assert _graded().relevant_missed_judgments() == [
            Judgment("c", 3),
            Judgment("h", 3),
            Judgment("g", 2),
            Judgment("d", 1),
        ]

    def test_rel_threshold(self) -> None:
        ev = _graded()
        strict = RetrievalEvaluator(
            "q", ev.retrieved_documents(), ev.judgments(), rel=3
        )
        assert strict.relevant_missed_judgments() == [
            Judgment("c", 3),
            Judgment("h", 3),
        ]

    def test_same_documents_as_relevant_missed_documents(
        self, sample: SetEvaluator
    ) -> None:
        for query_id in sample:
            ev = sample[query_id]
            missed = ev.relevant_missed_judgments()
            assert sorted(j.doc_id for j in missed) == [
                d.doc_id for d in ev.relevant_missed_documents()
            ]
            grades = [j.relevance for j in missed]
            assert grades == sorted(grades, reverse=True)
            assert all(ev.judgment(j.doc_id) == j.relevance for j in missed)

    def test_nothing_missed(self) -> None:
        ev = RetrievalEvaluator(
            "q", [Document("a")], [Judgment("a", 1), Judgment("b", 0)]
        )
        assert ev.relevant_missed_judgments() == []


def test_trec_keys_never_collide() -> None:
    """keys="trec" gives trec_eval's name only to the measure it means at the evaluator's rel: P@5 is
    P_5, and P(rel=2)@5 keeps its canonical string (it was filed under P_5 too, one value lost)."""
    runs = SetEvaluator.from_trec(*sample_paths())
    row = runs.evaluate(["P@5", "P(rel=2)@5", "map"], keys="trec")["q1"]
    assert row == {"P_5": runs.per_query("P@5")["q1"], "P(rel=2)@5": runs.per_query("P(rel=2)@5")["q1"],
                   "map": runs.per_query("AP")["q1"]}
    assert row["P_5"] != row["P(rel=2)@5"]  # the sample's q1 tells them apart
    assert list(runs.to_dataframe(["P@5", "P(rel=2)@5"], keys="trec").columns) == ["P_5", "P(rel=2)@5"]
    strict = SetEvaluator.from_trec(*sample_paths(), rel=2)
    assert strict.evaluate(["P@5"], keys="trec")["q1"] == {"P_5": strict.per_query("P@5")["q1"]}


# ------------------------------------------------------------------ evaluate's columns (issue 27)
@pytest.mark.parametrize(("specs", "columns"), [
    (["ndcg@10", "map", "P.10,5"], ["ndcg@10", "map", "P_5", "P_10"]),
    (["Recall@100", "R@100", "MRR@10"], ["Recall@100", "MRR@10"]),  # one column per measure and spelling
    (["P.5", "P.10", "recall_at_100"], ["P_5", "recall_at_100"]),  # trec_eval's first P parameters win
    (["map", "AP", "official"], ["map", "AP", "num_q", "num_ret", "num_rel", "num_rel_ret", "gm_map"]),
])
def test_table_columns_follow_m_as_typed(specs: list[str], columns: list[str]) -> None:
    """Tables and JSON take the measures in -m order, named as typed."""
    from retrieval_eval.cli._runs import _as_typed, _requested
    from retrieval_eval.report.text import as_given, order_requested

    requested, _ = _requested(specs, 1)
    shown = [r.shown for r in as_given(_as_typed(specs, requested, 1))]
    assert shown[:len(columns)] == columns
    assert {r.label for r in order_requested(requested)} == {r.label for r in requested}  # trec lines: all of them
