"""retrieval_eval as an ir_measures provider (issue 27, B.5).

The oracle is ir_measures itself. Three kinds of checks:

- ir_measures' own test cases (its test/test_pytrec_eval.py, test_judged.py, test_cwl_eval.py and
  the cross-provider check of test_measures.py), re-stated here with their hand-made qrels and runs
  and their expected values, computed through ``ir_measures.iter_calc`` / ``calc_aggregate`` with our
  provider first in the default pipeline;
- a differential test: many measures on seeded generated data, our provider's ``calc`` against the
  default pipeline as ir_measures ships it (pytrec_eval, msmarco, judged, gdeval, cwl_eval), per query
  and in the aggregate, to 1e-9, in every input form ir_measures accepts;
- the registration itself, and what the provider leaves to ir_measures' own providers.

The documented conventions (docs/ir-measures.md) are the only differences allowed, and each is
exempted exactly where its cause applies: IPrec where trec_eval 9's cut-off rank differs from trec_eval
10's; tied scores for RR@k, Judged and the C/W/L measures (the differential
gives those distinct scores); negative judgments for Judged; gdeval's five printed decimals for ERR and
nDCG(dcg='exp-log2').

No empty ranking reaches the default pipeline: on one, pytrec_eval reads memory it never wrote (its
IPrec was NaN in one process and 0.0 in another) and can crash. Our provider's empty rankings are
checked by hand.
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from strategies import random_dataset

ir_measures = pytest.importorskip("ir_measures")
pd = pytest.importorskip("pandas")

# Importing registers the provider; each test registers it again (conftest.py takes it out after
# every test, so that other modules compare against ir_measures' own providers).
provider_module = importlib.import_module("retrieval_eval.integrations.ir_measures")
PROVIDER = provider_module.PROVIDER
provider_module.unregister()


@pytest.fixture
def ours_first() -> Iterator[None]:
    provider_module.register()
    yield
    provider_module.unregister()


def _runs_on_ours(measures: list[Any], qrels: Any) -> bool:
    return isinstance(ir_measures.evaluator(measures, qrels), provider_module.RetrievalEvalEvaluator)


# --------------------------------------------------------------------------------------------------
# Registration


def test_import_registers_the_provider_first() -> None:
    provider_module.register()
    assert ir_measures.DefaultPipeline.providers[0] is PROVIDER
    assert ir_measures.providers.registry["retrieval_eval"] is PROVIDER
    assert ir_measures.retrieval_eval is PROVIDER
    provider_module.register()  # twice changes nothing
    assert [p.NAME for p in ir_measures.DefaultPipeline.providers].count("retrieval_eval") == 1
    provider_module.unregister()
    assert PROVIDER not in ir_measures.DefaultPipeline.providers
    provider_module.register(first=False)
    assert PROVIDER not in ir_measures.DefaultPipeline.providers
    assert ir_measures.retrieval_eval.calc_aggregate([ir_measures.P @ 1], {"q": {"a": 1}}, {"q": {"a": 1.0}}) == {
        ir_measures.P @ 1: 1.0
    }


def test_pipeline_routes_supported_measures_to_us_and_the_rest_onwards(ours_first: None) -> None:
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "b": 1.0}}
    assert _runs_on_ours([ir_measures.AP, ir_measures.nDCG @ 10], qrels)
    # RBP's gains differ (raw grades there), Compat and the diversity measures are not ours to answer.
    for measure in (ir_measures.RBP, ir_measures.RBP(rel=1), ir_measures.Compat, ir_measures.alpha_nDCG @ 5,
                    ir_measures.Accuracy @ 5):
        assert not PROVIDER.supports(measure), measure
    result = ir_measures.calc_aggregate([ir_measures.AP, ir_measures.RBP(rel=1)], qrels, run)
    assert result[ir_measures.AP] == 1.0 and ir_measures.RBP(rel=1) in result


def test_an_evaluator_refuses_what_it_does_not_compute() -> None:
    with pytest.raises(ValueError, match="does not compute RBP"):
        PROVIDER.evaluator([ir_measures.RBP], {"q": {"a": 1}})


def test_missing_ir_measures_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from retrieval_eval.model import MissingExtraError

    monkeypatch.setitem(sys.modules, "ir_measures", None)
    monkeypatch.delitem(sys.modules, "retrieval_eval.integrations.ir_measures", raising=False)
    with pytest.raises(MissingExtraError, match=r"pip install 'retrieval-evaluator\[ir_measures\]'"):
        importlib.import_module("retrieval_eval.integrations.ir_measures")
    monkeypatch.undo()
    sys.modules.pop("retrieval_eval.integrations.ir_measures", None)  # a first import, as a user's
    again = importlib.import_module("retrieval_eval.integrations.ir_measures")
    assert ir_measures.DefaultPipeline.providers[0] is again.PROVIDER


# --------------------------------------------------------------------------------------------------
# ir_measures' own test cases

# Two topics over documents D0..D5 (ir_measures' test_pytrec_eval.py): topic 0 judges all five
# documents it retrieves, topic 1 three documents, one of them (D5) not retrieved.
RUN_TEXT = """0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
1 0 D1 1 0.8 run
1 0 D3 2 0.7 run
1 0 D4 3 0.3 run
1 0 D2 4 0.4 run
"""
# The same documents with D4 and D3 swapped in topic 1 (ranked D1, D4, D3, D2)
RUN_SWAPPED = RUN_TEXT.replace("1 0 D3 2 0.7", "1 0 D4 2 0.7").replace("1 0 D4 3 0.3", "1 0 D3 3 0.3")


def _qrels(text: str) -> list[Any]:
    return list(ir_measures.read_trec_qrels(text))


def _run(text: str) -> list[Any]:
    return list(ir_measures.read_trec_run(text))


QRELS_COUNTS = "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 2\n"
QRELS_NUMREL = QRELS_COUNTS.replace("1 0 D5 2", "1 0 D5 0")
QRELS_SETS = "0 0 D0 0\n0 0 D1 1\n0 0 D2 2\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 0\n"
QRELS_IPREC = QRELS_SETS.replace("0 0 D0 0", "0 0 D0 1")
QRELS_INFAP = "0 0 D0 1\n0 0 D1 -1\n0 0 D2 0\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D4 -1\n1 0 D5 0\n"

#: (qrels, run, measure string, per-query values of topics 0 and 1, aggregate): ir_measures' expectations.
PYTREC_CASES = [
    (QRELS_COUNTS, RUN_TEXT, "NumRet", (5, 4), 9),
    (QRELS_COUNTS, RUN_TEXT, "NumRet(rel=1)", (3, 1), 4),
    (QRELS_COUNTS, RUN_TEXT, "NumRet(rel=2)", (1, 1), 2),
    (QRELS_COUNTS, RUN_TEXT, "NumRet(rel=3)", (0, 0), 0),
    (QRELS_COUNTS, RUN_TEXT, "NumQ", (1, 1), 2),
    (QRELS_NUMREL, RUN_TEXT, "NumRel", (3, 2), 5),
    (QRELS_SETS, RUN_SWAPPED, "Success@2", (1, 0), 0.5),
    (QRELS_SETS, RUN_SWAPPED, "Success(rel=2)@2", (1, 0), 0.5),
    (QRELS_SETS, RUN_SWAPPED, "Success(rel=3)@2", (0, 0), 0),
    (QRELS_SETS, RUN_SWAPPED, "SetP", (0.6, 0.25), 0.425),
    (QRELS_SETS, RUN_SWAPPED, "SetP(rel=2)", (0.4, 0.25), 0.325),
    (QRELS_SETS, RUN_SWAPPED, "SetP(rel=3)", (0, 0), 0),
    (QRELS_SETS, RUN_SWAPPED, "SetR", (1.0, 0.5), 0.75),
    (QRELS_SETS, RUN_SWAPPED, "SetR(rel=2)", (1.0, 1.0), 1.0),
    (QRELS_SETS, RUN_SWAPPED, "SetR(rel=3)", (0, 0), 0),
    (QRELS_IPREC, RUN_SWAPPED, "IPrec@0.25", (1.0, 0.25), 0.625),
    (QRELS_IPREC, RUN_SWAPPED, "IPrec@0.5", (1.0, 0.25), 0.625),
    (QRELS_IPREC, RUN_SWAPPED, "IPrec@0.75", (1.0, 0.0), 0.5),
    (QRELS_IPREC, RUN_SWAPPED, "IPrec(rel=2)@0.1", (2 / 3, 0.25), (2 / 3 + 0.25) / 2),
    (QRELS_IPREC, RUN_SWAPPED, "IPrec(rel=2)@0.25", (2 / 3, 0.25), (2 / 3 + 0.25) / 2),
    (QRELS_IPREC, RUN_SWAPPED, "IPrec(rel=2)@0.5", (2 / 3, 0.25), (2 / 3 + 0.25) / 2),
    (QRELS_IPREC, RUN_SWAPPED, "IPrec(rel=2)@0.75", (2 / 3, 0.25), (2 / 3 + 0.25) / 2),
    (QRELS_INFAP, RUN_SWAPPED, "AP", (5 / 6, 0.125), (5 / 6 + 0.125) / 2),
    (QRELS_INFAP, RUN_SWAPPED, "infAP", (5 / 6, 0.1875), (5 / 6 + 0.1875) / 2),
    (QRELS_INFAP, RUN_SWAPPED, "AP(rel=2)", (1 / 3, 0.25), (1 / 3 + 0.25) / 2),
    (QRELS_INFAP, RUN_SWAPPED, "infAP(rel=2)", (1 / 3, 0.375), (1 / 3 + 0.375) / 2),
]


@pytest.mark.parametrize(("qrels", "run", "text", "expected", "aggregate"), PYTREC_CASES,
                         ids=[c[2] for c in PYTREC_CASES])
def test_ir_measures_pytrec_eval_cases(ours_first: None, qrels: str, run: str, text: str,
                                       expected: tuple[float, float], aggregate: float) -> None:
    measure = ir_measures.parse_measure(text)
    q, r = _qrels(qrels), _run(run)
    assert _runs_on_ours([measure], q)
    got = {m.query_id: m.value for m in ir_measures.iter_calc([measure], q, r)}
    # ir_measures checks infAP to four places: trec_eval's infAP smooths its estimate by 0.00001.
    tol = 5e-5 if text.startswith("infAP") else 1e-12
    assert got == pytest.approx({"0": expected[0], "1": expected[1]}, abs=tol)
    assert measure.calc_aggregate(q, r) == pytest.approx(aggregate, abs=tol)


#: ir_measures' test_judged.py: topic 0 judges everything it retrieves, topic 1 only D3 (at rank 2).
JUDGED_CASES = [("Judged@1000", (1.0, 0.25)), ("Judged@10", (1.0, 0.25)), ("Judged@3", (1.0, 1 / 3)),
                ("Judged@1", (1.0, 0.0))]


@pytest.mark.parametrize(("text", "expected"), JUDGED_CASES)
def test_ir_measures_judged_cases(ours_first: None, text: str, expected: tuple[float, float]) -> None:
    measure = ir_measures.parse_measure(text)
    got = {m.query_id: m.value for m in ir_measures.iter_calc([measure], _qrels(QRELS_COUNTS), _run(RUN_TEXT))}
    assert got == pytest.approx({"0": expected[0], "1": expected[1]}, abs=1e-12)


# ir_measures' test/cwl.qrels and cwl.run: three topics, each ranking D1..D10 in that order; the binary
# judgments of each topic (documents not listed are unjudged).
CWL_JUDGED = {
    "T1": {"D1": 1, "D2": 0, "D3": 1, "D4": 1, "D7": 1, "D8": 0, "D9": 1, "D10": 0},
    "T2": {"D1": 1, "D2": 1, "D5": 1, "D6": 0, "D7": 1, "D8": 1, "D9": 1, "D10": 0},
    "T3": {"D4": 0, "D5": 0, "D6": 1, "D7": 1, "D8": 1, "D9": 0, "D10": 1},
}
CWL_RUN = {t: {f"D{i}": 10.0 - i for i in range(1, 11)} for t in CWL_JUDGED}
#: ir_measures' expectations (from cwl-eval, four decimals); RBP(p=0.9, rel=1) is left to cwl_eval.
CWL_CASES = [
    ("AP", (0.7087, 0.7438, 0.3068)),
    ("BPM(T=1.0, max_rel=1)@20", (1.0, 1.0, 0.1667)),
    ("BPM(T=2.0, max_rel=1)@10", (0.6667, 1.0, 0.2857)),
    ("INSQ(T=1.0, max_rel=1)", (0.5872, 0.6629, 0.0880)),
    ("INSQ(T=2.0, max_rel=1)", (0.4513, 0.5068, 0.1292)),
    ("INST(T=1.0, max_rel=1)", (0.7934, 0.9226, 0.0888)),
    ("INST(T=2.0, max_rel=1)", (0.5994, 0.6924, 0.1397)),
    ("SDCG(max_rel=1)@10", (0.5645, 0.6531, 0.2848)),
    ("NERR8(max_rel=1)@10", (1.0, 1.0, 0.1667)),
    ("NERR9(max_rel=1)@10", (1.0, 1.0, 0.0680)),
    ("NERR10(p=0.8, max_rel=1)", (1.0, 1.0, 0.0888)),
    ("NERR11(T=2.0, max_rel=1)", (1.0, 1.0, 0.0691)),
    ("P@1", (1.0, 1.0, 0.0)),
    ("P@5", (0.6, 0.6, 0.0)),
    ("P@10", (0.5, 0.6, 0.4)),
    ("P@20", (0.25, 0.3, 0.2)),
    ("RR", (1.0, 1.0, 0.1667)),
]


@pytest.mark.parametrize(("text", "expected"), CWL_CASES)
def test_ir_measures_cwl_eval_cases(ours_first: None, text: str, expected: tuple[float, float, float]) -> None:
    measure = ir_measures.parse_measure(text)
    assert _runs_on_ours([measure], CWL_JUDGED)
    got = {m.query_id: m.value for m in ir_measures.iter_calc([measure], CWL_JUDGED, CWL_RUN)}
    assert got == pytest.approx(dict(zip(("T1", "T2", "T3"), expected)), abs=1e-4)


#: ir_measures' test_measures.py: one topic, every provider that computes a measure must agree.
AGREEMENT_QRELS = "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n"
AGREEMENT_RUN = "0 0 D0 1 0.8 run\n0 0 D2 2 0.7 run\n0 0 D1 3 0.3 run\n0 0 D3 4 0.4 run\n0 0 D4 5 0.1 run\n"
AGREEMENT_MEASURES = [
    *(f"{name}(rel={rel})@{k}" for name in ("P", "R", "RR", "AP") for rel in (1, 2) for k in (1, 5, 10, 20, 50, 100)),
    *(f"{name}(rel={rel})" for name in ("RR", "Rprec", "AP", "Bpref") for rel in (1, 2)),
    *(f"nDCG(dcg='{dcg}')" + k for dcg in ("log2", "exp-log2") for k in ("", "@1", "@5", "@10", "@20", "@50", "@100")),
    *(f"{name}@{k}" for name in ("Judged", "ERR") for k in (1, 5, 10, 20, 50, 100)),
]


#: ir_measures' test leaves out trectools; ranx's provider (ranx 0.3.21) refuses the string dtype
#: that pandas gives the query ids ("DataFrame Query IDs column dtype must be `object`").
SKIPPED_PROVIDERS = {"trectools", "ranx", "retrieval_eval"}


@pytest.mark.parametrize("text", AGREEMENT_MEASURES)
def test_agrees_with_every_provider_that_computes_the_measure(text: str) -> None:
    measure = ir_measures.parse_measure(text)
    qrels, run = _qrels(AGREEMENT_QRELS), _run(AGREEMENT_RUN)
    assert PROVIDER.supports(measure)
    ours = next(iter(PROVIDER.iter_calc([measure], qrels, run))).value
    others = [p for name, p in ir_measures.providers.registry.items()
              if name not in SKIPPED_PROVIDERS and p.is_available() and p.supports(measure)]
    if not others:
        pytest.skip(f"no installed ir_measures provider computes {text}")
    for other in others:
        theirs = next(iter(other.iter_calc([measure], qrels, run))).value
        assert ours == pytest.approx(theirs, abs=1e-4), (text, other.NAME)


# --------------------------------------------------------------------------------------------------
# Inputs: every form ir_measures accepts gives the same values


def _forms(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, tuple[Any, Any]]:
    q_rows = [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    r_rows = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return {
        "dicts": (qrels, run),
        "namedtuples": (q_rows, r_rows),
        "generators": (iter(q_rows), iter(r_rows)),
        "dataframes": (pd.DataFrame(q_rows), pd.DataFrame(r_rows)),
        # what PyTerrier's pt.Experiment hands to ir_measures.iter_calc: frames with more columns
        "pyterrier frames": (pd.DataFrame(q_rows).assign(label="x"),
                             pd.DataFrame(r_rows).assign(query="text", rank=0, docno=lambda f: f["doc_id"])),
        "trec text": (ir_measures.read_trec_qrels("".join(f"{q} 0 {d} {r}\n" for q, d, r, _ in q_rows)),
                      ir_measures.read_trec_run("".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, d, s in r_rows))),
    }


def test_every_input_form_gives_the_same_values(ours_first: None) -> None:
    qrels, run = random_dataset(31, n_queries=20, empty_run_rate=0.0)
    measures = [ir_measures.parse_measure(t) for t in ("AP", "nDCG@10", "P(rel=2)@5", "NumQ", "Judged@10")]
    expected = {m: v for m, v in ir_measures.calc_aggregate(measures, qrels, run).items()}
    for name, (q, r) in _forms(qrels, run).items():
        assert _runs_on_ours(measures, _forms(qrels, run)[name][0]), name
        assert ir_measures.calc_aggregate(measures, q, r) == pytest.approx(expected, abs=1e-12), name


def test_one_evaluator_scores_many_runs(ours_first: None) -> None:
    qrels, run = random_dataset(32, n_queries=15, empty_run_rate=0.0)
    other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    evaluator = ir_measures.evaluator([ir_measures.AP, ir_measures.P @ 5], qrels)
    first, second = evaluator.calc_aggregate(run), evaluator.calc_aggregate(other)
    provider_module.unregister()
    assert first == pytest.approx(ir_measures.calc_aggregate([ir_measures.AP, ir_measures.P @ 5], qrels, run))
    assert second == pytest.approx(ir_measures.calc_aggregate([ir_measures.AP, ir_measures.P @ 5], qrels, other))


def test_a_query_the_run_names_without_documents_is_an_empty_ranking(ours_first: None) -> None:
    """Such a query is counted (NumQ 1, NumRel R), as trec_eval counts it; a qrels query absent from the
    run gets the default 0 from ir_measures. The empty ranking's values are by hand (nothing retrieved,
    R = 2): pytrec_eval, which reads memory it never wrote on one, gives the others."""
    qrels = {"a": {"x": 1}, "b": {"y": 1, "z": 2}, "c": {"w": 1}}
    run = {"a": {"x": 1.0}, "b": {}}
    measures = [ir_measures.NumQ, ir_measures.NumRel, ir_measures.AP]
    got = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, run)}
    provider_module.unregister()
    theirs = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, {"a": run["a"]})}
    theirs.update({("b", "NumQ"): 1.0, ("b", "NumRel"): 2.0, ("b", "AP"): 0.0})
    assert got == theirs
    assert got[("b", "NumQ")] == 1 and got[("b", "NumRel")] == 2 and got[("c", "NumQ")] == 0


# --------------------------------------------------------------------------------------------------
# Differential: our provider against ir_measures' default pipeline on generated data

MEASURES = [
    "AP", "AP@5", "AP@100", "AP(rel=2)", "AP(rel=2)@10", "AP(judged_only=True)", "MAP@10",
    "P@1", "P@5", "P@100", "P(rel=2)@10", "P(judged_only=True)@10",
    "R@5", "R@100", "R(rel=2)@10", "R(judged_only=True)@10",
    "RR", "RR(rel=2)", "RR(judged_only=True)", "Rprec", "Rprec(rel=2)", "Rprec(judged_only=True)",
    "nDCG", "nDCG@5", "nDCG@10", "nDCG(judged_only=True)@10", "nDCG(gains={0:0,1:1,2:3,3:7})@10",
    "Bpref", "Bpref(rel=2)", "infAP", "infAP(rel=2)",
    "NumRet", "NumRelRet", "NumRet(rel=2)", "NumQ", "NumRel",
    "SetAP", "SetAP(rel=2)", "SetF", "SetF(beta=0.5)", "SetF(rel=2)", "SetP", "SetRelP", "SetP(rel=2)",
    "SetP(judged_only=True)", "SetR", "SetR(rel=2)",
    "Success@1", "Success@5", "Success(rel=2)@5", "Success(judged_only=True)@5",
    *(f"IPrec@{p / 10:.1f}" for p in range(11)), "IPrec(rel=2)@0.3",
    "ERR@1", "ERR@5", "ERR@20", "nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2')@20",
    "RR@5", "MRR@10", "Judged@1", "Judged@5", "Judged@100",
    "SDCG(max_rel=3)@10", "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@5", "NERR10(max_rel=3)",
    "NERR11(T=2.0, max_rel=3)", "INST(max_rel=3)", "INSQ(T=2.0, max_rel=3)", "BPM(max_rel=3)@10",
]
#: Measures whose provider ranks tied scores otherwise (MS MARCO, judged, cwl_eval): compared on
#: distinct scores. Judged also counts negative judgments: compared without them.
TIE_ORDER = {"RR@5", "MRR@10", "Judged@1", "Judged@5", "Judged@100", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11",
             "INST", "INSQ", "BPM"}
GDEVAL = {"ERR", "nDCG(dcg='exp-log2')"}

DATASETS: dict[str, dict[str, Any]] = {
    # graded 0..3, -1 judgments, four score values (ties everywhere), queries the run lacks
    "tied": {"seed": 41, "n_queries": 40, "max_depth": 40, "n_docs": 50},
    "sparse": {"seed": 42, "n_queries": 50, "max_depth": 10, "n_docs": 15, "level_weights": (0.6, 0.2, 0.1, 0.1),
               "missing_rate": 0.15, "empty_run_rate": 0.15, "no_relevant_rate": 0.25, "negative_rate": 0.2},
    # distinct scores, no negative judgments: where the tie and Judged conventions cannot apply
    "distinct": {"seed": 43, "n_queries": 40, "max_depth": 30, "n_docs": 40, "negative_rate": 0.0,
                 "score_values": None},
}


def _family(text: str) -> str:
    if "exp-log2" in text:
        return "nDCG(dcg='exp-log2')"
    name = text.split("(")[0].split("@")[0]
    return text if name in ("RR", "MRR", "Judged") else name


@functools.cache
def dataset(name: str) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels, run = random_dataset(**DATASETS[name])  # type: ignore[arg-type]
    run = {q: docs for q, docs in run.items() if docs}  # (the empty rankings: see the module's docstring)
    # gdeval wants numeric query ids
    ids = {q: str(i + 1) for i, q in enumerate(sorted(set(qrels) | set(run)))}
    qrels = {ids[q]: v for q, v in qrels.items()}
    run = {ids[q]: v for q, v in run.items()}
    if name == "distinct":
        rng = np.random.default_rng(7)
        run = {q: {d: float(s) for d, s in zip(docs, rng.permutation(len(docs)) + 1.0)} for q, docs in run.items()}
    return qrels, run


def _trec9_cutoff(p: float, r: int) -> int:
    return int(p * r + 0.9)


def _trec10_cutoff(p: float, r: int) -> int:
    return math.floor(p * r + 0.5)


def _exempt(text: str, qid: str, qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> bool:
    """Whether a documented convention applies to this query (IPrec only: the others are data choices)."""
    if _family(text) != "IPrec":
        return False
    measure = ir_measures.parse_measure(text)
    p, rel = float(measure["recall"]), int(measure["rel"])
    r = sum(1 for v in qrels[qid].values() if v >= rel)
    return _trec9_cutoff(p, r) != _trec10_cutoff(p, r)


def _cases() -> Iterator[tuple[str, str]]:
    for data in DATASETS:
        for text in MEASURES:
            if _family(text) in TIE_ORDER and data != "distinct":
                continue
            yield data, text


@pytest.mark.parametrize(("data", "text"), list(_cases()))
def test_same_values_as_ir_measures_default_pipeline(data: str, text: str) -> None:
    qrels, run = dataset(data)
    measure = ir_measures.parse_measure(text)
    provider_module.unregister()
    if not ir_measures.DefaultPipeline.supports(measure):
        pytest.skip(f"no installed ir_measures provider computes {text}")
    theirs_agg, theirs_rows = ir_measures.calc([measure], qrels, run)
    provider_module.register()
    assert _runs_on_ours([measure], qrels)
    ours_agg, ours_rows = ir_measures.calc([measure], qrels, run)
    theirs = {m.query_id: float(m.value) for m in theirs_rows}
    ours = {m.query_id: float(m.value) for m in ours_rows}
    assert set(ours) == set(theirs) == set(qrels)
    gdeval = _family(text) in GDEVAL
    exempt = {q for q in ours if _exempt(text, q, qrels, run)}
    wrong = []
    for qid, value in theirs.items():
        mine = float(f"{ours[qid]:.5f}") if gdeval else ours[qid]
        if qid not in exempt and not (math.isclose(mine, value, rel_tol=0, abs_tol=1e-9)):
            wrong.append(f"q={qid}: ours {ours[qid]!r}, ir_measures {value!r}")
    assert not wrong, f"{text} on {data}: {len(wrong)} of {len(theirs)} differ:\n" + "\n".join(wrong[:10])
    if not exempt:
        assert ours_agg[measure] == pytest.approx(theirs_agg[measure], abs=5e-6 if gdeval else 1e-9)


def test_the_iprec_exemption_is_the_cut_off_rule_and_nothing_else() -> None:
    """Where the two cut-off rules agree IPrec agrees; on the differential's data, the exempt queries
    really differ, so the exemption is not hiding anything."""
    qrels, run = dataset("tied")
    texts = [f"IPrec@{p / 10:.1f}" for p in range(11)]
    provider_module.unregister()
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.iter_calc([ir_measures.parse_measure(t) for t in texts], qrels, run)}
    provider_module.register()
    ours = {(m.query_id, str(m.measure)): m.value
            for m in ir_measures.iter_calc([ir_measures.parse_measure(t) for t in texts], qrels, run)}
    exempt = {key for key in ours if _exempt(key[1], key[0], qrels, run)}
    assert exempt, "the data must exercise the convention"
    differing = {key for key in ours if not (math.isclose(ours[key], theirs[key], abs_tol=1e-9))}
    assert differing <= exempt
    assert differing, "some exempt query must differ"


@pytest.mark.parametrize(("qrels", "run"), [({}, {}), ({"q": {"a": 1}}, {}), ({"q": {"a": 1}}, {"x": {"a": 1.0}})],
                         ids=["nothing", "no run", "no shared query"])
def test_degenerate_inputs_give_ir_measures_values(qrels: dict[str, Any], run: dict[str, Any]) -> None:
    measures = [ir_measures.AP, ir_measures.NumQ]
    theirs = ir_measures.calc_aggregate(measures, qrels, run)
    provider_module.register()
    ours = ir_measures.calc_aggregate(measures, qrels, run)
    assert {str(m): v for m, v in ours.items()} == pytest.approx({str(m): v for m, v in theirs.items()}, nan_ok=True)


def test_integral_float_relevance_is_read_as_the_integer(ours_first: None) -> None:
    """As everywhere in this package (pytrec_eval refuses it: "Expected relevance to be integer")."""
    assert ir_measures.calc_aggregate([ir_measures.AP], {"q": {"a": 1.0, "b": 2.0}}, {"q": {"b": 1.0}}) == {
        ir_measures.AP: 0.5
    }
