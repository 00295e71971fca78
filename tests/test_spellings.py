"""Other tools' measure names (issue 27, C): each accepted spelling gives that tool's own values on
the same data, and each refused one says in one line what differs.

* ranx: its ``evaluate`` on the same qrels and run (ranx is a test dependency).
* MTEB and BEIR: their formulas. ``ndcg_at_k``, ``map_at_k``, ``recall_at_k`` and ``precision_at_k``
  (BEIR: ``NDCG@k``, ``MAP@k``, ``Recall@k``, ``P@k``) are pytrec_eval's ``ndcg_cut_k``, ``map_cut_k``,
  ``recall_k`` and ``P_k``, requested as their evaluators request them; ``mrr_at_k`` / ``MRR@k`` and
  ``R_cap_at_k`` / ``R_cap@k`` are their Python functions, written out below from their source
  (mteb/_evaluators/retrieval_metrics.py, beir/retrieval/custom_metrics.py).
* pytrec_eval: its keys are trec_eval's printed labels; each key it returns is parsed and compared.

The data has no ties in score: the tools order tied documents differently (trec_eval by doc id,
ranx and Python's sort by input order), which is a convention (docs/conventions.md), not a meaning.
"""

from __future__ import annotations

import math
import random
import warnings

import pytest
import pytrec_eval

from retrieval_eval import SetEvaluator
from retrieval_eval.measures import UnknownMeasureError, parse, parse_labelled, parse_trec_options

#: ranx spelling -> ours (docs/spellings.md). ranx reads ``name@k``, ``name`` (the whole ranking) and
#: ``-l<level>`` (its relevance level).
RANX = {
    "ndcg@10": "nDCG@10", "ndcg@5-l2": "nDCG(gains={1: 0})@5", "ndcg": "nDCG",
    "ndcg_burges@10": "nDCG(dcg='exp-log2')@10", "ndcg_burges@10-l3": "nDCG(dcg='exp-log2', gains={1: 0, 2: 0})@10",
    "ndcg_burges": "nDCG(dcg='exp-log2')", "dcg@5": "DCG@5", "dcg": "DCG", "dcg_burges@5": "DCG(dcg='exp-log2')@5",
    "map@100": "AP@100", "map@5-l2": "AP(rel=2)@5", "map": "AP", "mrr@10": "RR@10", "mrr@3-l2": "RR(rel=2)@3",
    "mrr": "RR", "precision@5": "P@5", "precision@1000": "P@1000", "precision": "SetP", "recall@100": "R@100",
    "recall@5-l2": "R(rel=2)@5", "hit_rate@10": "Success@10", "hit_rate@1-l3": "Success(rel=3)@1",
    "f1@5": "F1@5", "f1": "SetF", "r-precision": "Rprec", "r-precision-l2": "Rprec(rel=2)",
}
#: The cutoffs of the MTEB / BEIR runs below.
K_VALUES = (1, 3, 5, 10, 100)


def _dataset(seed: int, n_queries: int = 40) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded judgments 0..3 with some negative ones, queries without a relevant document, rankings of
    1..120 documents (some judged, some not) with distinct scores."""
    rnd = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        pool = [f"d{i}" for i in range(150)]
        judged = rnd.sample(pool, rnd.randint(1, 40))
        top = 0 if q % 7 == 0 else 3  # every 7th query: nothing relevant
        qrels[f"q{q}"] = {d: rnd.choice([-1, 0, 0, 1, 1, 2, top]) if top else rnd.choice([-1, 0]) for d in judged}
        # A judgment >= 0 in each query: trec_eval leaves a query of negative judgments undefined, and
        # pytrec_eval can crash on one (see strategies.py).
        qrels[f"q{q}"][judged[0]] = max(qrels[f"q{q}"][judged[0]], 0)
        ranked = rnd.sample(pool, rnd.randint(1, 120))
        scores = rnd.sample(range(10_000), len(ranked))
        run[f"q{q}"] = {d: s / 100 for d, s in zip(ranked, scores)}
    return qrels, run


@pytest.fixture(scope="module", params=[1, 2])
def data(request: pytest.FixtureRequest) -> tuple[dict, dict, SetEvaluator]:
    qrels, run = _dataset(request.param)
    return qrels, run, SetEvaluator.from_dict(qrels, run)


def test_the_spellings_parse_to_what_the_tables_say() -> None:
    for theirs, ours in RANX.items():
        assert parse(theirs) == parse(ours), theirs
    mteb = {f"{name}_at_{k}": f"{ours}@{k}" for k in K_VALUES
            for name, ours in {"ndcg": "nDCG", "map": "AP", "recall": "R", "precision": "P", "mrr": "RR"}.items()}
    beir = {f"{name}@{k}": f"{ours}@{k}" for k in K_VALUES
            for name, ours in {"NDCG": "nDCG", "MAP": "AP", "Recall": "R", "P": "P", "MRR": "RR", "R_cap": "RelP"}.items()}
    for theirs, ours in {**mteb, **beir, "R_cap_at_10": "RelP@10", "r_cap_at_10": "RelP@10"}.items():
        assert parse(theirs) == parse(ours), theirs


def test_ranx_values(data: tuple[dict, dict, SetEvaluator]) -> None:
    ranx = pytest.importorskip("ranx")
    qrels, run, ours = data
    ranx_run = ranx.Run(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's compile-time notes (NumbaTypeSafetyWarning ...)
        ranx.evaluate(ranx.Qrels(qrels), ranx_run, list(RANX))
    for theirs, spelling in ((theirs, theirs) for theirs in RANX):
        values = ours.per_query(spelling)
        for query in run:
            assert values[query] == pytest.approx(float(ranx_run.scores[theirs][query]), rel=1e-12, abs=1e-15), \
                (theirs, query)


def _pytrec(qrels: dict, run: dict, requests: set[str]) -> dict[str, dict[str, float]]:
    return pytrec_eval.RelevanceEvaluator(qrels, requests).evaluate(run)


def _mteb_mrr(qrels: dict, run: dict, k: int) -> dict[str, float]:
    """MTEB's ``mrr`` (BEIR's custom ``mrr``): 1 / rank of the first document judged > 0 in the top k."""
    out = {}
    for query, scores in run.items():
        relevant = {d for d, v in qrels[query].items() if v > 0}
        top = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:k]
        out[query] = next((1.0 / rank for rank, (d, _) in enumerate(top, start=1) if d in relevant), 0.0)
    return out


def _mteb_recall_cap(qrels: dict, run: dict, k: int) -> dict[str, float | None]:
    """MTEB's ``recall_cap`` (BEIR's ``R_cap@k``): relevant in the top k / min(R, k); R = 0 has no value."""
    out: dict[str, float | None] = {}
    for query, scores in run.items():
        relevant = [d for d, v in qrels[query].items() if v > 0]
        top = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:k]
        found = [d for d, _ in top if qrels[query].get(d, 0) > 0]
        out[query] = len(found) / min(len(relevant), k) if relevant else None
    return out


def test_mteb_and_beir_values(data: tuple[dict, dict, SetEvaluator]) -> None:
    qrels, run, ours = data
    cutoffs = ",".join(str(k) for k in K_VALUES)
    scores = _pytrec(qrels, run, {f"map_cut.{cutoffs}", f"ndcg_cut.{cutoffs}", f"recall.{cutoffs}", f"P.{cutoffs}"})
    for k in K_VALUES:
        for names, key in ((("ndcg_at", "NDCG@"), f"ndcg_cut_{k}"), (("map_at", "MAP@"), f"map_cut_{k}"),
                           (("recall_at", "Recall@"), f"recall_{k}"), (("precision_at", "P@"), f"P_{k}")):
            mteb, beir = f"{names[0]}_{k}", f"{names[1]}{k}"
            expected = {query: scores[query][key] for query in run}
            for spelling in (mteb, beir):
                assert ours.per_query(spelling) == pytest.approx(expected, rel=1e-12, abs=1e-15), spelling
            # MTEB reports the mean over the queries, rounded to 5 decimals.
            assert round(ours.aggregate(mteb), 5) == round(sum(expected.values()) / len(expected), 5)
        mrr = _mteb_mrr(qrels, run, k)
        for spelling in (f"mrr_at_{k}", f"MRR@{k}"):
            assert ours.per_query(spelling) == pytest.approx(mrr, rel=1e-12, abs=1e-15), spelling
        capped = _mteb_recall_cap(qrels, run, k)
        for spelling in (f"R_cap_at_{k}", f"r_cap_at_{k}", f"R_cap@{k}"):
            values = ours.per_query(spelling)
            assert {q: values[q] for q, v in capped.items() if v is not None} == pytest.approx(
                {q: v for q, v in capped.items() if v is not None}, rel=1e-12, abs=1e-15), spelling
            assert all(values[q] == 0.0 for q, v in capped.items() if v is None)  # theirs divides by 0


def test_pytrec_eval_keys(data: tuple[dict, dict, SetEvaluator]) -> None:
    """Every key pytrec_eval returns for these requests parses to the measure with its values."""
    qrels, run, ours = data
    requests = {"map", "ndcg", "ndcg_cut.5,10", "recall.5,100", "P.5,10", "map_cut.100", "recip_rank", "Rprec",
                "bpref", "success.1,10", "set_P", "set_recall", "set_F", "num_ret", "num_rel", "num_rel_ret",
                "relative_P.5", "Rprec_mult.0.5", "infAP", "gm_map", "binG", "G", "ndcg_rel", "Rndcg", "utility"}
    scores = _pytrec(qrels, run, requests)
    keys = sorted(next(iter(scores.values())))
    assert {"ndcg_cut_10", "recall_100", "P_5", "map_cut_100", "recip_rank", "success_10"} <= set(keys)
    for key in keys:
        assert [label for _, label in parse_labelled(key)] == [key]  # printed under pytrec_eval's key
        expected = {query: scores[query][key] for query in run}
        if key == "gm_map":  # pytrec_eval's value per query is the log of what the summary averages
            assert ours.aggregate(key) == pytest.approx(math.exp(sum(expected.values()) / len(expected)), rel=1e-12)
            continue
        assert ours.per_query(key) == pytest.approx(expected, rel=1e-12, abs=1e-15), key


#: Refused spellings, with the measure each message must name (what is ours) and what it must say.
REFUSED = {
    "hits@10": ("NumRelRet", "P@10"),
    "hits": ("NumRelRet", "averaged over queries"),
    "hit_rate": ("Success", "whole ranking"),
    "rbp.95": ("RBP(p=0.95)", "raw grade"),
    "rbp@8": ("RBP(p=0.8)", "raw grade"),
    "cv_recall_at_10": ("Success@10", "!= 0"),
    "Hole@10": ("Unj@10", "for no query"),
    "Hole_at_10": ("Unj@10", "for no query"),
    "hole_at_5": ("Unj@5", "for no query"),
    "accuracy": ("R@1", "Accuracy"),
    "accuracy@10": ("Success@10", "Accuracy@10"),
    "accuracy_at_5": ("Success@5", "Accuracy@5"),
}


@pytest.mark.parametrize("text", sorted(REFUSED))
def test_a_spelling_whose_meaning_differs_is_refused_in_one_line(text: str) -> None:
    ours, what = REFUSED[text]
    with pytest.raises(UnknownMeasureError) as info:
        parse(text)
    message = str(info.value)
    assert "\n" not in message and ours in message and what in message and repr(text) in message


def test_the_refusals_are_right_that_the_meanings_differ() -> None:
    """Each refusal's claim, on data where it shows."""
    ranx = pytest.importorskip("ranx")
    qrels = {"q1": {"a": 3, "b": 1, "c": -1}, "q2": {"x": 1, "y": 0}, "q3": {"n": -1, "z": 0}}
    run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}, "q2": {"y": 0.9, "x": 0.8, "a": 0.7}, "q3": {"n": 0.5}}
    ours = SetEvaluator.from_dict(qrels, run)
    ranx_run = ranx.Run({q: docs for q, docs in run.items() if q != "q3"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranx.evaluate(ranx.Qrels({q: docs for q, docs in qrels.items() if q != "q3"}), ranx_run, ["rbp.95", "hits@2"])
    # ranx's rbp uses the raw grade 3; ours rescales q1's grades to [0, 1].
    assert ranx_run.scores["rbp.95"]["q1"] > 1.5 * ours.per_query("RBP(p=0.95)")["q1"]
    # hits@2 is a count per query (P@2 times 2), averaged; NumRelRet sums the whole ranking.
    assert [float(ranx_run.scores["hits@2"][q]) for q in ("q1", "q2")] == [2 * v for v in ours.array("P@2")[:2]]
    assert ours.aggregate("NumRelRet") == 3.0
    # MTEB's cv_recall (relevant: any judgment != 0) finds q3's n, judged -1; Success does not.
    cv_recall = {q: float(any(qrels[q].get(d, 0) != 0 for d in sorted(docs, key=docs.__getitem__, reverse=True)[:3]))
                 for q, docs in run.items()}
    assert cv_recall["q3"] == 1.0 and ours.per_query("Success@3")["q3"] == 0.0
    # BEIR's hole: the top 3 of q2 are all judged for some query (a for q1), so 0; a is unjudged for q2.
    annotated = {d for docs in qrels.values() for d in docs}
    assert sum(d not in annotated for d in run["q2"]) / 3 == 0.0
    assert ours.per_query("Unj@3")["q2"] == pytest.approx(1 / 3)


def test_trec_eval_names_keep_their_meaning() -> None:
    """A ranx name that is also a trec_eval name means what trec_eval means: ``recall`` is recall_5 ...
    recall_1000, not ranx's recall of the whole ranking; map, ndcg and dcg mean the same in both."""
    assert [label for _, label in parse_labelled("recall")][:2] == ["recall_5", "recall_10"]
    assert [label for _, label in parse_trec_options(["ndcg@10", "map", "recall_at_10"])] == ["map", "nDCG@10", "R@10"]
    assert str(parse("rbp.p=0.95")) == "RBP(p=0.95)"  # trec_eval's rbp parameters are still read
    assert math.isclose(parse("ndcg@10-l1")["k"], 10) and parse("ndcg@10-l1") == parse("nDCG@10")
