"""Every measure ir_measures and retrieval_eval both register, compared per query with ir_measures itself.

Each case is one measure string, parsed by ``ir_measures.parse_measure`` *and* by our ``parse`` (so
the ir_measures string syntax is exercised too) and computed by ``ir_measures.iter_calc`` with its
default provider on seeded generated data: graded 0..3 judgments, some -1 ("pooled but unjudged"),
tied scores, qrels queries missing from the run or with an empty ranking, run-only queries, R = 0
queries, several cutoffs and relevance thresholds.

Comparisons run over the queries ir_measures reports (it fills qrels queries a provider skips with
the measure's default, 0). Values agree to 1e-6, except where ir_measures' value comes from gdeval
(``ERR@k`` and ``nDCG(dcg='exp-log2')@k``): gdeval prints ``%.5f``, so our value rounded to five
decimals must equal its value.

Known differences are not hidden: they have their own tests below, each asserting that the
difference is exactly what its explanation predicts, with the alternative value computed here:

(a) ``IPrec``: ir_measures runs pytrec_eval (trec_eval 9), whose recall cut-off is
    ``(long)(p * R + 0.9)``; we follow trec_eval 10's ``lround(p * R)``.
(b) ``ERR``: gdeval scales the stopping probability by a *fixed* maximum grade, 2^4 (its
    ``$MAX_JUDGMENT``), not by the largest grade of the qrels. Our default ``max_rel=4`` matches it;
    the test pins that the qrels' own top grade (3 here) would give other values.
(c) ``RBP``: ir_measures' RBP (trectools, or cwl_eval with ``rel``) uses raw grades as gains (or
    binary gains), with tied scores sharing their averaged weight; ours follows trec_eval 10's
    ``rbp``, which rescales gains per query to [0, 1] by the query's largest judged level. Both
    read the string ``RBP`` as p = 0.8. Neither provider is installed here, so ir_measures' own
    values are checked (against the definition computed here) only when one is. ``RBP(rel=k)``
    (binary gains) is the same measure on both sides, checked against cwl_eval on untied queries.
(d) ``Judged``: ir_measures counts any qrels entry as a judgment, negative values included, and
    breaks score ties by doc_id ascending; we count only values >= 0 (DESIGN §3: negative =
    pooled but unjudged, as trec_eval's ``unj`` and ``-J``) and rank ties by doc_id descending.
(e) ``RR@k``: ir_measures computes a cut-off RR with MS MARCO's script, which breaks score ties by
    doc_id ascending; we use trec_eval's order (doc_id descending) everywhere. RR without a cutoff
    comes from pytrec_eval and matches.
(f) ``NumQ`` and ``NumRel``: pytrec_eval never sees a qrels query the run lacks, and ir_measures
    fills in the measure's default, 0, even for these counts. We score such a query as an empty
    ranking (trec_eval ``-c``): NumQ 1 and NumRel R, as in every other mean.
(g) ``IPrec`` on an empty ranking: trec_eval (9 and 10) computes 0/0 = NaN at a cut-off of 0; we
    give 0.0 (DESIGN §3). ir_measures is not asked: an empty ranking is left out of its input, since
    pytrec_eval reads memory it never wrote on one (tests/test_vs_pytrec_eval.py); the real
    trec_eval 10 pins the NaN in tests/test_vs_trec_eval_c.py.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable

import ir_measures
import pytest
import reference
from strategies import random_dataset

from retrieval_eval import SetEvaluator, parse
from retrieval_eval.measures import ALIASES, REGISTRY

TOL = 1e-6

#: The measures of the issue (ir_measures names, aliases included).
ISSUE_NAMES = (
    "AP", "Bpref", "ERR", "infAP", "IPrec", "Judged", "nDCG", "NumQ", "NumRel", "NumRet", "P", "R", "RBP",
    "Rprec", "RR", "SetAP", "SetF", "SetP", "SetR", "Success",
    "BPref", "MAP", "MRR", "NDCG", "NumRelRet", "RPrec", "SetRelP",
)

#: Measure strings per ir_measures name. Every string is one that ir_measures' installed providers
#: can compute (NumRel(rel=2), ERR without a cutoff and nDCG(dcg='exp-log2') without one cannot).
CASES: dict[str, tuple[str, ...]] = {
    "AP": ("AP", "AP@5", "AP@100", "AP(rel=2)", "AP(rel=2)@10", "AP(judged_only=True)"),
    "MAP": ("MAP", "MAP@10"),
    "Bpref": ("Bpref", "Bpref(rel=2)"),
    "BPref": ("BPref",),
    "ERR": ("ERR@1", "ERR@5", "ERR@20"),
    "infAP": ("infAP", "infAP(rel=2)"),
    "IPrec": tuple(f"IPrec@{p / 10:.1f}" for p in range(11)) + ("IPrec(rel=2)@0.3", "IPrec(rel=2)@0.5"),
    "Judged": ("Judged", "Judged@1", "Judged@5", "Judged@100"),
    "nDCG": ("nDCG", "nDCG@5", "nDCG@10", "nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2')@20",
             "nDCG(judged_only=True)@10", "nDCG(gains={0:0,1:1,2:3,3:7})@10"),
    "NDCG": ("NDCG@10",),
    "NumQ": ("NumQ",),
    "NumRel": ("NumRel",),
    "NumRet": ("NumRet",),
    "NumRelRet": ("NumRelRet", "NumRelRet(rel=2)"),
    "P": ("P@1", "P@5", "P@100", "P(rel=2)@10", "P(judged_only=True)@10"),
    "R": ("R@5", "R@100", "R(rel=2)@10", "R(judged_only=True)@10"),
    "RBP": ("RBP", "RBP(p=0.9)"),
    "Rprec": ("Rprec", "Rprec(rel=2)", "Rprec(judged_only=True)"),
    "RPrec": ("RPrec",),
    "RR": ("RR", "RR@5", "RR(rel=2)", "RR(judged_only=True)"),
    "MRR": ("MRR", "MRR@10"),
    "SetAP": ("SetAP", "SetAP(rel=2)", "SetAP(judged_only=True)"),
    "SetF": ("SetF", "SetF(beta=0.5)", "SetF(rel=2)", "SetF(judged_only=True)"),
    "SetP": ("SetP", "SetP(relative=True)", "SetP(rel=2)", "SetP(judged_only=True)"),
    "SetRelP": ("SetRelP",),
    "SetR": ("SetR", "SetR(rel=2)"),
    "Success": ("Success@1", "Success@5", "Success(rel=2)@5", "Success(judged_only=True)@5"),
}

#: ir_measures names whose values differ from ours for a documented reason (tests further down).
KNOWN_DIFFERENCES = {"IPrec", "Judged", "RBP", "RR@k", "NumQ", "NumRel"}
#: ir_measures computes these with gdeval, which prints five decimals.
GDEVAL = {"ERR", "nDCG(dcg='exp-log2')"}

#: Seeded datasets. gdeval accepts only numeric query ids, so ids are renamed to numbers.
DATASETS = {
    # graded 0..3, -1 judgments, four score values: ties everywhere
    "graded-tied": dict(seed=21, n_queries=40, max_depth=40, n_docs=50),
    # small R, many missing / empty / R = 0 queries
    "sparse": dict(seed=22, n_queries=50, max_depth=10, n_docs=15, level_weights=(0.6, 0.2, 0.1, 0.1),
                   missing_rate=0.15, empty_run_rate=0.15, no_relevant_rate=0.25, negative_rate=0.2),
    # ids whose byte order crosses case, continuous scores with a few ties; given to ir_measures as
    # namedtuples instead of dicts
    "mixed-ids": dict(seed=23, n_queries=40, max_depth=30, n_docs=25, score_values=None,
                      id_prefixes=("d", "D", "doc-", "a", "Z_")),
}
NAMEDTUPLE_INPUT = {"mixed-ids"}

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


def name_of(text: str) -> str:
    """The measure name of a string: ``P(rel=2)@10`` -> ``P``."""
    return text.split("(")[0].split("@")[0]


def family_of(text: str) -> str:
    """The comparison family: strings one provider computes (gdeval's nDCG, MS MARCO's RR@k) are told
    apart from their pytrec_eval siblings."""
    name = name_of(text)
    if name in ("nDCG", "NDCG") and "exp-log2" in text:
        return "nDCG(dcg='exp-log2')"
    if name in ("RR", "MRR") and "@" in text:
        return "RR@k"
    return name


@functools.cache
def dataset(name: str) -> tuple[Qrels, Run]:
    qrels, run = random_dataset(**DATASETS[name])
    ids = {q: str(i + 1) for i, q in enumerate(sorted(set(qrels) | set(run)))}
    return {ids[q]: v for q, v in qrels.items()}, {ids[q]: v for q, v in run.items()}


def ir_inputs(name: str) -> tuple[object, object]:
    """The dataset as ir_measures gets it: dicts, or lists of Qrel / ScoredDoc namedtuples.

    Without its empty rankings: on one, pytrec_eval reads memory it never wrote (its IPrec was NaN in
    one process and 0.0 in another) and can crash, and ir_measures' Judged divides by zero. A query
    left out is one ir_measures' run lacks, which it fills with the measure's default, 0."""
    qrels, run = dataset(name)
    run = {q: docs for q, docs in run.items() if docs}
    if name not in NAMEDTUPLE_INPUT:
        return qrels, run
    return ([ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
            [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()])


@functools.cache
def _provider(measure: object) -> object | None:
    """The provider ir_measures computes ``measure`` with: its default pipeline, else trectools
    (the default pipeline does not route RBP(p=...) to trectools, its only RBP implementation)."""
    if ir_measures.DefaultPipeline.supports(measure):
        return ir_measures.DefaultPipeline
    trectools = ir_measures.providers.registry["trectools"]
    return trectools if trectools.is_available() and trectools.supports(measure) else None


def theirs(dataset_name: str, text: str) -> dict[str, float]:
    """ir_measures' per-query values of ``text``; skip if no provider for it is installed."""
    measure = ir_measures.parse_measure(text)
    provider = _provider(measure)
    if provider is None:
        pytest.skip(f"no ir_measures provider for {text} is installed (gdeval needs perl)")
    qrels, run = ir_inputs(dataset_name)
    values: dict[str, float] = {}
    with warnings.catch_warnings():  # trectools' own pandas deprecation warnings are not ours to fail on
        warnings.simplefilter("ignore")
        metrics = list(provider.iter_calc([measure], qrels, run))  # type: ignore[attr-defined]
    for metric in metrics:
        assert metric.query_id not in values, f"{text}: query {metric.query_id} reported twice"
        values[metric.query_id] = float(metric.value)
    return values


@functools.cache
def ours(dataset_name: str) -> SetEvaluator:
    qrels, run = dataset(dataset_name)
    return SetEvaluator.from_dict(qrels, run)


def our_values(dataset_name: str, text: str) -> dict[str, float]:
    return ours(dataset_name).per_query(parse(text))


def ir_sees(data: str, qid: str) -> bool:
    """Whether ir_measures' input has the query in its run (``ir_inputs`` leaves empty rankings out)."""
    _, run = dataset(data)
    return bool(run.get(qid))


def provider_available(text: str) -> bool:
    return _provider(ir_measures.parse_measure(text)) is not None


def same(a: float, b: float, tol: float = TOL) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def gdeval_rounded(value: float) -> float:
    """What gdeval prints for ``value`` (``%.5f``), read back."""
    return float(f"{value:.5f}")


ALL_CASES = [text for name in CASES for text in CASES[name]]
PLAIN_CASES = [text for text in ALL_CASES if family_of(text) not in KNOWN_DIFFERENCES]


# --------------------------------------------------------------------------------------------------
# Completeness


#: ir_measures names compared with their own provider in another module: the diversity measures with
#: pyndeval (tests/measures/test_diversity.py); the C/W/L family with cwl-eval, Compat and Accuracy
#: with ir_measures' own providers (tests/measures/test_cwl_compat.py).
COMPARED_ELSEWHERE = {
    "alpha_DCG", "α_DCG", "alpha_nDCG", "α_nDCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP", "P_IA", "StRecall",
    "AP_IA", "MAP_IA", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ", "BPM", "Compat", "Accuracy",
    "Precision", "Recall",  # aliases of P and R, whose cases are above
}


def test_every_shared_name_has_cases() -> None:
    """Every ir_measures name we register (canonical or alias) has cases, and so does the issue's list."""
    shared = {n for n in ir_measures.measures.registry if n in REGISTRY or n in ALIASES}
    assert shared - COMPARED_ELSEWHERE <= set(CASES), sorted(shared - COMPARED_ELSEWHERE - set(CASES))


#: A value for each ir_measures parameter, to build the strings of test_every_registry_entry_parses.
PARAM_SAMPLES = {
    "rel": 2, "judged_only": True, "dcg": "log2", "gains": {0: 0, 1: 1, 2: 3}, "alpha": 0.3, "beta": 0.7,
    "p": 0.7, "T": 2.0, "min_rel": 0, "max_rel": 3, "recall": 0.2, "relative": True, "normalize": False,
}
#: ir_measures names and parameters we do not parse, each with the reason.
NOT_PARSED: dict[tuple[str, str], str] = {}
#: Names that need a cutoff here (ir_measures marks it optional, but its providers cannot compute
#: them without one, or compute the whole ranking, which our measures write without ``@``).
NEED_CUTOFF = {"SDCG", "NERR8", "NERR9", "BPM", "P", "R", "Success", "Precision", "Recall", "alpha_DCG", "α_DCG", "alpha_nDCG", "α_nDCG", "ERR_IA",
               "nERR_IA", "P_IA", "StRecall", "IPrec"}


def _registry_strings() -> list[tuple[str, str, str]]:
    cases = []
    for name, measure in sorted(ir_measures.measures.registry.items()):
        params = measure.SUPPORTED_PARAMS
        cutoff = "@0.2" if name == "IPrec" else "@10" if "cutoff" in params and name in NEED_CUTOFF else ""
        cases.append((name, "", name + cutoff))
        for param in params:
            if param in ("cutoff", "recall"):
                continue  # written after @ (above)
            cases.append((name, param, f"{name}({param}={PARAM_SAMPLES[param]!r}){cutoff}"))
    return cases


@pytest.mark.parametrize(("name", "param", "text"), _registry_strings())
def test_every_registry_entry_parses(name: str, param: str, text: str) -> None:
    """Every name and parameter of ir_measures' registry parses, to the value ir_measures reads."""
    if (name, param) in NOT_PARSED:
        pytest.skip(NOT_PARSED[(name, param)])
    measure = parse(text)
    assert parse(str(measure)) == measure
    if param:
        their = ir_measures.parse_measure(text)
        ours_name = {"cutoff": measure.definition.cutoff}.get(param, param)
        assert measure[ours_name] == their[param], text
    assert set(ISSUE_NAMES) <= set(CASES)
    assert set(ISSUE_NAMES) <= set(ir_measures.measures.registry)


@pytest.mark.parametrize("text", ALL_CASES)
def test_string_parses_to_the_same_measure(text: str) -> None:
    """Both parsers accept the string; the canonical names and parameters line up."""
    their = ir_measures.parse_measure(text)
    mine = parse(text)
    # ir_measures folds NumRelRet into NumRet(rel=1); everything else keeps its canonical name.
    if name_of(text) == "NumRelRet":
        assert their.NAME == "NumRet" and mine.name == "NumRelRet"
    else:
        assert their.NAME == mine.name
    at = mine.definition.cutoff
    their_cutoff = their.params.get("cutoff", their.params.get("recall"))
    assert (mine[at] if at else None) == their_cutoff
    if "rel" in their.params and "rel" in mine.definition.params:
        assert mine["rel"] == their.params["rel"]
    # Our canonical string means the same measure to ir_measures (NumRelRet is canonical only here).
    assert ir_measures.parse_measure(str(mine)) == their


# --------------------------------------------------------------------------------------------------
# Same values


@pytest.mark.parametrize("text", PLAIN_CASES)
@pytest.mark.parametrize("data", sorted(DATASETS))
def test_matches_ir_measures(data: str, text: str) -> None:
    """Per query, on every query ir_measures reports, and in the summary."""
    expected = theirs(data, text)
    got = our_values(data, text)
    qrels, _ = dataset(data)
    assert set(expected) == set(qrels) == set(got), text
    gdeval = family_of(text) in GDEVAL
    problems = []
    for qid, value in expected.items():
        mine = gdeval_rounded(got[qid]) if gdeval else got[qid]
        if not same(mine, value, 1e-9 if gdeval else TOL):
            problems.append(f"{text} q={qid}: ours {got[qid]!r}, ir_measures {value!r}")
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems[:20])
    # The summary: ir_measures' aggregator (mean, or sum for counts) over the same values.
    aggregator = ir_measures.parse_measure(text).aggregator()
    for value in expected.values():
        aggregator.add(value)
    assert same(ours(data).aggregate(parse(text)), aggregator.result(), 5e-6 if gdeval else TOL), text


# --------------------------------------------------------------------------------------------------
# (a) IPrec: trec_eval 9's cut-off in pytrec_eval vs trec_eval 10's lround


def iprec_params(text: str) -> tuple[float, int]:
    measure = ir_measures.parse_measure(text)
    return float(measure.params["recall"]), int(measure.params.get("rel", 1))


@pytest.mark.parametrize("data", sorted(DATASETS))
def test_iprec_differs_only_by_the_cutoff_rule(data: str) -> None:
    """ir_measures' IPrec is trec_eval 9's rule, ours trec_eval 10's; values differ iff the rules do.

    trec_eval 9 starts recall level p at the relevant document c9 = (long)(p * R + 0.9) (a ceiling
    for p * R not within 0.1 below an integer), trec_eval 10 at c10 = lround(p * R). The value is
    the best precision m / r_m over relevant documents m >= c (m >= 1 when c = 0).
    """
    qrels, run = dataset(data)
    evaluator = ours(data)
    differing = 0
    for text in CASES["IPrec"]:
        p, rel = iprec_params(text)
        expected, got = theirs(data, text), our_values(data, text)
        for qid in expected:
            ranking = [d.doc_id for d in evaluator[qid].retrieved_documents()]
            assert ranking == reference.rank(run.get(qid, {}))
            v10 = reference.interpolated_precision(ranking, qrels[qid], p, rel, rule="v10")
            # A query ir_measures' run lacks gets its default 0 (pytrec_eval never sees it).
            v9 = reference.interpolated_precision(ranking, qrels[qid], p, rel, rule="v9") if ir_sees(data, qid) else 0.0
            v10 = 0.0 if math.isnan(v10) else v10  # (g): trec_eval's 0/0 on an empty ranking is 0.0 here
            assert same(got[qid], v10, 1e-12), (text, qid)
            assert same(expected[qid], v9, 1e-12), (text, qid)
            if not same(got[qid], expected[qid]):
                differing += 1
                R = reference.num_rel(qrels[qid], rel)
                assert reference.iprec_cutoff(p, R, "v9") != reference.iprec_cutoff(p, R, "v10"), (text, qid)
    if data != "mixed-ids":  # the pins are not vacuous: the cut-off rules do part ways on this data
        assert differing > 0


def test_iprec_cutoff_rule_by_hand() -> None:
    """R = 4, relevant at ranks 1 and 10: IPrec@0.3 is max(1/1, 2/10) = 1.0 for c10 = lround(1.2) = 1,
    and 2/10 = 0.2 for c9 = (long)(1.2 + 0.9) = 2."""
    qrels = {"1": {"a": 1, "b": 1, "c": 1, "d": 1, "x": 0}}
    ranking = ["a", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "b"]
    run = {"1": {doc: float(10 - i) for i, doc in enumerate(ranking)}}
    their = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure("IPrec@0.3")], qrels, run)}
    assert their == {"1": pytest.approx(2 / 10, abs=1e-15)}
    assert SetEvaluator.from_dict(qrels, run).per_query(parse("IPrec@0.3")) == {"1": 1 / 1}


# --------------------------------------------------------------------------------------------------
# (b) ERR: gdeval's fixed maximum grade


def err_formula(ranking: list[str], judged: dict[str, int], k: int | None, max_grade: int) -> float:
    """ERR@k with R_i = (2^g - 1) / 2^max_grade, by the cascade loop (gdeval's sub err)."""
    score, decay = 0.0, 1.0
    for i, doc in enumerate(ranking[:k], start=1):
        g = min(max(judged.get(doc, 0), 0), max_grade)
        r = (2**g - 1) / 2**max_grade
        score += r * decay / i
        decay *= 1 - r
    return score


@pytest.mark.parametrize("data", sorted(DATASETS))
def test_err_maximum_grade_is_gdevals_constant(data: str) -> None:
    """ir_measures' ERR@k (gdeval) divides by 2^4 whatever the qrels' grades; so does our ERR@k.

    On this 0..3 data, taking g_max from the qrels (3) would give different values wherever a
    positive grade is retrieved in the top k; our ``ERR(max_rel=3)@k`` is that variant.
    """
    qrels, run = dataset(data)
    differing = 0
    for text in CASES["ERR"]:
        k = ir_measures.parse_measure(text).params["cutoff"]
        expected = theirs(data, text)
        got = our_values(data, text)
        got3 = our_values(data, f"ERR(max_rel=3)@{k}")
        assert max(v for docs in qrels.values() for v in docs.values()) == 3
        for qid, value in expected.items():
            ranking = reference.rank(run.get(qid, {}))
            fixed4 = err_formula(ranking, qrels[qid], k, 4)
            from_qrels = err_formula(ranking, qrels[qid], k, 3)
            assert gdeval_rounded(fixed4) == value, (text, qid)  # gdeval prints %.5f
            assert same(got[qid], fixed4, 1e-12) and same(got3[qid], from_qrels, 1e-12), (text, qid)
            if fixed4 > 0:
                assert gdeval_rounded(from_qrels) != value, (text, qid)
                differing += 1
    assert differing > 0


def test_err_gdeval_skips_queries_without_positive_judgments() -> None:
    """gdeval prints no line for a query without a positive judgment; ir_measures fills in 0, as we score it."""
    if not provider_available("ERR@5"):
        pytest.skip("gdeval needs perl")
    qrels = {"1": {"a": 0, "b": -1}, "2": {"a": 2}}
    run = {"1": {"a": 2.0, "b": 1.0}, "2": {"a": 1.0, "c": 2.0}}
    their = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure("ERR@5")], qrels, run)}
    # q2: rank 1 'c' unjudged (R = 0), rank 2 'a' grade 2: R = 3/16, ERR = (3/16) / 2 = 0.09375.
    assert their == {"1": 0.0, "2": 0.09375}
    assert SetEvaluator.from_dict(qrels, run).per_query(parse("ERR@5")) == {"1": 0.0, "2": 3 / 16 / 2}


# --------------------------------------------------------------------------------------------------
# (c) RBP: raw (ir_measures) vs per-query rescaled (trec_eval 10) gains


def rbp_trec_eval(ranking: list[str], judged: dict[str, int], p: float) -> float:
    """trec_eval 10's rbp: gain = level / L when the query's largest judged level L > 1, else level."""
    top = max((v for v in judged.values() if v >= 0), default=0)
    scale = max(1, top)
    return (1 - p) * sum(max(judged.get(d, 0), 0) / scale * p ** (i - 1) for i, d in enumerate(ranking, start=1))


def rbp_ir_measures(scores: dict[str, float], judged: dict[str, int], p: float) -> float:
    """ir_measures' RBP without rel (trectools ``get_rbp``, graded): (1 - p) * sum of grade * weight over
    relevant documents, where tied scores share the mean of their ranks' weights p^(i-1)."""
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    weights = [p ** (i - 1) for i in range(1, len(ranked) + 1)]
    total = 0.0
    for i, (doc, score) in enumerate(ranked):
        tied = [w for w, (_, s) in zip(weights, ranked) if s == score]
        grade = judged.get(doc, 0)
        if grade > 0:
            total += grade * sum(tied) / len(tied)
    return (1 - p) * total


def test_rbp_gains_by_hand() -> None:
    """One query judged 0..3, no ties, p = 0.8 (both tools' default for the string 'RBP').

    Ranking: a(3) b(0) c(1) d(unjudged) e(2). Weights (1 - p) p^(i-1) = 0.2, 0.16, 0.128, 0.1024, 0.08192.
    ir_measures (raw grades): 0.2*3 + 0.128*1 + 0.08192*2 = 0.89184.
    trec_eval 10 (grades / 3, the query's top level): 0.89184 / 3 = 0.29728.
    """
    assert ir_measures.parse_measure("RBP").params.get("p", 0.8) == parse("RBP")["p"] == 0.8
    judged = {"a": 3, "b": 0, "c": 1, "e": 2, "z": 3}
    scores = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}
    raw = 0.2 * 3 + 0.128 * 1 + 0.08192 * 2
    assert rbp_ir_measures(scores, judged, 0.8) == pytest.approx(raw, abs=1e-12)
    got = SetEvaluator.from_dict({"1": judged}, {"1": scores}).per_query(parse("RBP"))["1"]
    assert got == pytest.approx(raw / 3, abs=1e-12)
    # Binary judgments are not rescaled: both definitions agree.
    binary = {d: min(v, 1) for d, v in judged.items()}
    got_binary = SetEvaluator.from_dict({"1": binary}, {"1": scores}).per_query(parse("RBP"))["1"]
    assert got_binary == pytest.approx(rbp_ir_measures(scores, binary, 0.8), abs=1e-12)
    assert got_binary == pytest.approx(0.2 + 0.128 + 0.08192, abs=1e-12)


@pytest.mark.parametrize("text", CASES["RBP"])
@pytest.mark.parametrize("data", sorted(DATASETS))
def test_rbp_differs_only_by_the_gains(data: str, text: str) -> None:
    """Ours is trec_eval 10's rescaled-gain RBP on every query; on queries without tied scores it is
    ir_measures' raw-grade RBP divided by the query's largest judged level (when that level is > 1)."""
    qrels, run = dataset(data)
    p = float(ir_measures.parse_measure(text).params.get("p", 0.8))
    got = our_values(data, text)
    scaled = 0
    for qid in qrels:
        scores = run.get(qid, {})
        assert same(got[qid], rbp_trec_eval(reference.rank(scores), qrels[qid], p), 1e-12), (text, qid)
        if len(set(scores.values())) == len(scores):  # no ties: only the gain scale differs
            top = max((v for v in qrels[qid].values() if v >= 0), default=0)
            assert same(rbp_ir_measures(scores, qrels[qid], p), got[qid] * max(top, 1), 1e-12), (text, qid)
            scaled += top > 1 and got[qid] > 0
    if data == "mixed-ids":
        assert scaled > 0


@pytest.mark.parametrize("text", CASES["RBP"])
@pytest.mark.parametrize("data", sorted(DATASETS))
def test_rbp_ir_measures_follows_its_definition(data: str, text: str) -> None:
    """ir_measures' own RBP values equal the raw-grade, tie-averaged definition above.

    Caveat (read, not run, as trectools is not installed): trectools groups ties by consecutive
    equal scores over its whole query-sorted frame, so a group can span the end of one query and
    the start of the next; this check would reveal it.
    """
    if not provider_available(text):
        pytest.skip("no ir_measures provider for RBP is installed (it needs trectools or cwl_eval)")
    qrels, run = dataset(data)
    p = float(ir_measures.parse_measure(text).params.get("p", 0.8))
    for qid, value in theirs(data, text).items():
        assert same(value, rbp_ir_measures(run.get(qid, {}), qrels[qid], p)), (text, qid)


@pytest.mark.parametrize("text", ("RBP(rel=1)", "RBP(rel=2,p=0.9)"))
@pytest.mark.parametrize("data", sorted(DATASETS))
def test_rbp_binary_gains_equal_cwl_eval(data: str, text: str) -> None:
    """``RBP(rel=k)``: binary gains, as ir_measures computes it with cwl-eval, on every untied query."""
    if not provider_available(text):
        pytest.skip("cwl-eval (ir_measures' provider for RBP(rel=k)) is not installed")
    _, run = dataset(data)
    got, expected = our_values(data, text), theirs(data, text)
    compared = 0
    for qid, value in expected.items():
        scores = run.get(qid, {})
        if len(set(scores.values())) == len(scores):  # tie order aside (ours: trec_eval's)
            assert same(got[qid], value, 1e-9), (text, qid)
            compared += 1
    assert compared > 0


# --------------------------------------------------------------------------------------------------
# (d) Judged: which entries are judgments, and the tie order


def judged_ours(ranking: list[str], judged: dict[str, int], k: int | None) -> float:
    top = ranking[:k]
    return sum(judged.get(d, -1) >= 0 for d in top) / len(top) if top else 0.0


def judged_ir_measures(scores: dict[str, float], judged: dict[str, int], k: int | None) -> float:
    """ir_measures' judged_provider: ties by doc_id ascending, any qrels entry counts, / min(k, n)."""
    top = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    return sum(doc in judged for doc, _ in top) / len(top)


@pytest.mark.parametrize("text", CASES["Judged"])
@pytest.mark.parametrize("data", sorted(DATASETS))
def test_judged_differs_only_by_negative_entries_and_ties(data: str, text: str) -> None:
    """Both are a fraction over min(k, n); they differ by what counts as judged and by the tie order."""
    qrels, run = dataset(data)
    k = ir_measures.parse_measure(text).params.get("cutoff")
    expected, got = theirs(data, text), our_values(data, text)
    assert set(expected) == set(qrels)
    for qid, value in expected.items():
        scores = run.get(qid, {})
        mine = judged_ours(reference.rank(scores), qrels[qid], k)
        assert same(got[qid], mine, 1e-12), (text, qid)
        # Queries absent from the run (or with an empty ranking) get ir_measures' default 0.
        alternative = judged_ir_measures(scores, qrels[qid], k) if scores else 0.0
        assert same(value, alternative, 1e-12), (text, qid)
        # Without negative entries and ties, the two definitions coincide.
        if scores and min(qrels[qid].values()) >= 0 and len(set(scores.values())) == len(scores):
            assert same(got[qid], value, 1e-12), (text, qid)


def test_judged_differences_by_hand() -> None:
    """Judged@2 on a ranking a(2.0) b(1.0) c(1.0) with qrels {a: 1, c: -1}.

    Ours: ties by doc_id descending -> a, c, b; c's -1 is not a judgment: 1/2 = 0.5.
    ir_measures: ties by doc_id ascending -> a, b, c; a judged, b not: 1/2 = 0.5 as well, but
    Judged@3 is 2/3 there (c's -1 counts) and 1/3 here.
    """
    qrels = {"1": {"a": 1, "c": -1}}
    run = {"1": {"a": 2.0, "b": 1.0, "c": 1.0}}
    ev = SetEvaluator.from_dict(qrels, run)
    their = {t: {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(t)], qrels, run)}
             for t in ("Judged@2", "Judged@3")}
    assert their == {"Judged@2": {"1": 1 / 2}, "Judged@3": {"1": 2 / 3}}
    assert ev.per_query(parse("Judged@2")) == {"1": 1 / 2}
    assert ev.per_query(parse("Judged@3")) == {"1": 1 / 3}
    # The tie order alone: with c judged 0, Judged@2 is 2/2 for us (a, c) and 1/2 for ir_measures (a, b).
    qrels0 = {"1": {"a": 1, "c": 0}}
    their0 = [m.value for m in ir_measures.iter_calc([ir_measures.parse_measure("Judged@2")], qrels0, run)]
    assert their0 == [1 / 2]
    assert SetEvaluator.from_dict(qrels0, run).per_query(parse("Judged@2")) == {"1": 2 / 2}


def test_judged_empty_ranking() -> None:
    """An empty ranking: ir_measures' Judged divides by zero (n = 0); ours is 0.0."""
    qrels = {"1": {"a": 1}}
    run: Run = {"1": {}}
    with pytest.raises(ZeroDivisionError):
        list(ir_measures.iter_calc([ir_measures.parse_measure("Judged@5")], qrels, run))
    assert SetEvaluator.from_dict(qrels, run).per_query(parse("Judged@5")) == {"1": 0.0}


# --------------------------------------------------------------------------------------------------
# (e) RR@k: MS MARCO's tie order


def rr_at(ranking: list[str], judged: dict[str, int], k: int | None, rel: int) -> float:
    for i, doc in enumerate(ranking[:k], start=1):
        if judged.get(doc, -1) >= max(rel, 0):
            return 1 / i
    return 0.0


@pytest.mark.parametrize("text", [t for t in ALL_CASES if family_of(t) == "RR@k"])
@pytest.mark.parametrize("data", sorted(DATASETS))
def test_rr_cutoff_differs_only_by_the_tie_order(data: str, text: str) -> None:
    """ir_measures' RR@k ranks ties by doc_id ascending (MS MARCO's script), ours descending (trec_eval)."""
    qrels, run = dataset(data)
    measure = ir_measures.parse_measure(text)
    k, rel = measure.params["cutoff"], measure.params.get("rel", 1)
    expected, got = theirs(data, text), our_values(data, text)
    differing = 0
    for qid, value in expected.items():
        scores = run.get(qid, {}) if ir_sees(data, qid) else {}
        ascending = [d for d, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]
        assert same(value, rr_at(ascending, qrels[qid], k, rel), 1e-12), (text, qid)
        assert same(got[qid], rr_at(reference.rank(run.get(qid, {})), qrels[qid], k, rel), 1e-12), (text, qid)
        if len(set(scores.values())) == len(scores):
            assert same(got[qid], value, 1e-12), (text, qid)
        differing += not same(got[qid], value)
    assert differing > 0


# --------------------------------------------------------------------------------------------------
# (f) NumQ and NumRel on queries the run lacks


@pytest.mark.parametrize("text", ["NumQ", "NumRel"])
@pytest.mark.parametrize("data", sorted(DATASETS))
def test_counts_of_queries_the_run_lacks(data: str, text: str) -> None:
    """Equal on the queries ir_measures' run has; on the others ir_measures reports 0, we 1 and R."""
    qrels, _ = dataset(data)
    expected, got = theirs(data, text), our_values(data, text)
    unseen = 0
    for qid, value in expected.items():
        count = 1.0 if text == "NumQ" else float(reference.num_rel(qrels[qid], 1))
        assert got[qid] == count, (text, qid)
        if ir_sees(data, qid):
            assert value == count, (text, qid)
        else:
            assert value == 0.0, (text, qid)
            unseen += 1
    assert unseen > 0


KNOWN_DIFFERENCE_TESTS: dict[str, Callable[..., None]] = {
    "IPrec": test_iprec_differs_only_by_the_cutoff_rule,
    "Judged": test_judged_differs_only_by_negative_entries_and_ties,
    "RBP": test_rbp_differs_only_by_the_gains,
    "RR@k": test_rr_cutoff_differs_only_by_the_tie_order,
    "NumQ": test_counts_of_queries_the_run_lacks,
    "NumRel": test_counts_of_queries_the_run_lacks,
}


def test_every_known_difference_has_its_pinning_test() -> None:
    assert set(KNOWN_DIFFERENCE_TESTS) == KNOWN_DIFFERENCES
