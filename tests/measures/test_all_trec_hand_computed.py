"""Hand-computed values for the rest of trec_eval's all_trec measures, dcg, ideal_dcg and yaap.

Every expected value is written as the arithmetic that produces it, from the definitions in
../shared/reference/trec_eval-semantics.md §5, so each case can be checked on paper. Degenerate cases
(R = 0, empty ranking, only unjudged documents retrieved) have their own rows.

Rankings are lists of doc ids, best first; judgments are {doc: value}. A doc id missing from the
judgments is "not in the pool" (label -1, shown '-'); a negative value means "pooled, unjudged"
(shown '.').
"""

from __future__ import annotations

from math import log, log2

import pytest

from retrieval_eval import Document, Judgment, RetrievalEvaluator, SetEvaluator
from retrieval_eval.measures import (
    Gains,
    MeasureError,
    parse,
    parse_labelled,
    parse_trec_options,
)
from retrieval_eval.report.text import Requested, trec_lines


def evaluator(ranking: list[str], judged: dict[str, int], rel: int = 1) -> RetrievalEvaluator:
    return RetrievalEvaluator("q", [Document(d) for d in ranking], [Judgment(d, r) for d, r in judged.items()], rel=rel)


def score(ranking: list[str], judged: dict[str, int], measure: str, rel: int = 1) -> float:
    return evaluator(ranking, judged, rel).score(measure)


# A: r1 n1 u1 r2 x1 -> labels 1 0 . 1 -   (u1 pooled-unjudged, x1 not in the pool)
#    R = 3 (r1 r2 r3), NR = 2 (n1 n2), n = 5, nrr = 2, relevant at ranks 1 and 4.
A_RANKING = ["r1", "n1", "u1", "r2", "x1"]
A_JUDGED = {"r1": 1, "r2": 1, "r3": 1, "n1": 0, "n2": 0, "u1": -1}
A_DCG = 1 + 1 / log2(5)  # gains 1 at ranks 1 and 4
A_IDCG = 1 + 1 / log2(3) + 1 / log2(4)  # ideal list [1, 1, 1]

# B: graded a b c d -> labels 2 0 3 1; e = 3 judged but not retrieved; f pooled-unjudged.
#    Levels 0..3 (one 0, one 1, one 2, two 3s); ideal list [3, 3, 2, 1].
B_RANKING = ["a", "b", "c", "d"]
B_JUDGED = {"a": 2, "b": 0, "c": 3, "d": 1, "e": 3, "f": -1}
B_DCG = [2.0, 2.0, 2 + 3 / log2(4), 2 + 3 / log2(4) + 1 / log2(5)]  # DCG at ranks 1..4
B_IDCG = [3.0, 3 + 3 / log2(3), 3 + 3 / log2(3) + 2 / log2(4), 3 + 3 / log2(3) + 2 / log2(4) + 1 / log2(5)]

# R = 0: only judged non-relevant documents.
R0_RANKING = ["n1", "x1"]
R0_JUDGED = {"n1": 0, "n2": 0}

# Only documents outside the pool retrieved; R = 2.
UNJ_RANKING = ["x1", "x2"]
UNJ_JUDGED = {"r1": 1, "r2": 1}

CASES = [
    # ---- infAP
    pytest.param(A_RANKING, A_JUDGED, "infAP",
                 # r1 at j=0 adds 1; r2 at j=3 with s=2, nr=1 (n1), u=1 (u1):
                 (1 + (1 / 4 + (3 / 4) * ((1 + 1 + 1) / 3) * ((1 + 1e-5) / (1 + 1 + 2e-5)))) / 3,
                 id="infAP-unjudged-take-positions"),
    pytest.param(["r1", "r2"], {"r1": 1, "r2": 1}, "infAP",
                 (1 + (1 / 2 + (1 / 2) * (1 / 1) * ((1 + 1e-5) / (1 + 2e-5)))) / 2,
                 id="infAP-epsilon-makes-it-not-exactly-AP"),
    pytest.param(R0_RANKING, R0_JUDGED, "infAP", 0.0, id="infAP-R0"),
    pytest.param(UNJ_RANKING, UNJ_JUDGED, "infAP", 0.0, id="infAP-only-unjudged"),
    # ---- Rprec_mult: c = trunc(mult * R + 0.9), value rel@c / c
    pytest.param(A_RANKING, A_JUDGED, "RprecMult@0.2", 1 / 1, id="Rprec_mult-0.2-c1"),  # trunc(0.6 + 0.9) = 1
    pytest.param(A_RANKING, A_JUDGED, "RprecMult@0.5", 1 / 2, id="Rprec_mult-0.5-c2"),  # trunc(2.4) = 2
    pytest.param(A_RANKING, A_JUDGED, "RprecMult@1.0", 1 / 3, id="Rprec_mult-1.0-is-Rprec"),  # c = 3
    pytest.param(A_RANKING, A_JUDGED, "RprecMult@2.0", 2 / 6, id="Rprec_mult-2.0-past-the-end"),  # c = 6 > n
    pytest.param(R0_RANKING, R0_JUDGED, "RprecMult@2.0", 0.0, id="Rprec_mult-R0-c0"),  # trunc(0.9) = 0
    # ---- relative_P: rel@k / min(k, R)
    pytest.param(A_RANKING, A_JUDGED, "RelP@2", 1 / 2, id="relative_P-2"),
    pytest.param(A_RANKING, A_JUDGED, "RelP@10", 2 / 3, id="relative_P-10-divides-by-R"),
    pytest.param(R0_RANKING, R0_JUDGED, "RelP@5", 0.0, id="relative_P-R0"),
    # ---- unj: documents with label < 0 in the top k, / k
    pytest.param(A_RANKING, A_JUDGED, "Unj@5", 2 / 5, id="unj-5-counts-nonpool-and-unjudged"),
    pytest.param(A_RANKING, A_JUDGED, "Unj@2", 0 / 2, id="unj-2"),
    pytest.param(A_RANKING, A_JUDGED, "Unj@10", 2 / 10, id="unj-10-denominator-is-k"),
    pytest.param(UNJ_RANKING, UNJ_JUDGED, "Unj@2", 2 / 2, id="unj-only-unjudged"),
    # ---- 11pt_avg: mean over points of iprec with c = lround(p * R); R = 3, precisions 1/1 and 2/4
    #      p = 0, .1 -> c 0 (best overall, 1); .2, .3, .4 -> c 1 (1); .5 (1.5 -> 2), .6, .7, .8 -> c 2 (0.5);
    #      .9, 1.0 -> c 3 > nrr (0)
    pytest.param(A_RANKING, A_JUDGED, "IPrecAvg", (1 * 5 + 0.5 * 4 + 0 * 2) / 11, id="11pt_avg-default-points"),
    pytest.param(A_RANKING, A_JUDGED, "IPrecAvg(points=(0.25, 0.5, 0.75))", (1 + 0.5 + 0.5) / 3,
                 id="11pt_avg-custom-points"),  # c = lround(.75) = 1, lround(1.5) = 2, lround(2.25) = 2
    pytest.param(R0_RANKING, R0_JUDGED, "IPrecAvg", 0.0, id="11pt_avg-R0"),
    # ---- binG: (1/R) sum 1 / log2(2 + non-relevant above)
    pytest.param(A_RANKING, A_JUDGED, "BinG", (1 / log2(2) + 1 / log2(4)) / 3, id="binG"),
    pytest.param(UNJ_RANKING, UNJ_JUDGED, "BinG", 0.0, id="binG-only-unjudged"),
    # ---- G: gain / log2(2 + cost - gained), cost = sum of max(ideal gain, 1)
    pytest.param(A_RANKING, A_JUDGED, "G", (1 / log2(2 + 1 - 1) + 1 / log2(2 + 4 - 2)) / 3,
                 id="G-binary-equals-binG"),
    pytest.param(B_RANKING, B_JUDGED, "G",
                 # rank 1: gained 2, cost 3; rank 3: gained 5, cost 3+3+2; rank 4: gained 6, cost 9
                 (2 / log2(2 + 3 - 2) + 3 / log2(2 + 8 - 5) + 1 / log2(2 + 9 - 6)) / (3 + 3 + 2 + 1),
                 id="G-graded"),
    pytest.param(R0_RANKING, R0_JUDGED, "G", 0.0, id="G-R0-empty-ideal"),
    # ---- dcg / ideal_dcg (linear gain, log2(rank + 1) discount, no cutoff)
    pytest.param(A_RANKING, A_JUDGED, "DCG", A_DCG, id="dcg-binary"),
    pytest.param(A_RANKING, A_JUDGED, "IDCG", A_IDCG, id="ideal_dcg-whole-ideal-list"),
    pytest.param(B_RANKING, B_JUDGED, "DCG", B_DCG[3], id="dcg-graded"),
    pytest.param(B_RANKING, B_JUDGED, "IDCG", B_IDCG[3], id="ideal_dcg-graded"),
    # exponential gain 2^level - 1 (FLAGR, gdeval): a 3, c 7, d 1; ideal [7, 7, 3, 1]
    pytest.param(B_RANKING, B_JUDGED, "DCG(dcg='exp-log2')@3", 3 + 7 / log2(4), id="dcg-exp-gain-cutoff"),
    pytest.param(B_RANKING, B_JUDGED, "IDCG(dcg='exp-log2')@2", 7 + 7 / log2(3), id="ideal_dcg-exp-gain-cutoff"),
    pytest.param(B_RANKING, B_JUDGED, "DCG(gains={1: 3, 2: 9, 4: 4.5})", 9 + 3 / log2(4) + 3 / log2(5),
                 id="dcg-custom-gains"),  # a: level 2 -> 9; c: level 3 keeps 3; d: level 1 -> 3
    # ideal list [9, 3, 3, 3]; level 4 has no judgment, so it adds nothing
    pytest.param(B_RANKING, B_JUDGED, "IDCG(gains={1: 3, 2: 9, 4: 4.5})",
                 9 + 3 / log2(3) + 3 / log2(4) + 3 / log2(5), id="ideal_dcg-custom-gains"),
    pytest.param(B_RANKING, B_JUDGED, "nDCG(gains={1: 3, 2: 9, 4: 4.5})",
                 (9 + 3 / log2(4) + 3 / log2(5)) / (9 + 3 / log2(3) + 3 / log2(4) + 3 / log2(5)),
                 id="ndcg-custom-gains"),
    pytest.param(B_RANKING, B_JUDGED, "nDCG(gains={0: 1})",
                 (2 + 1 / log2(3) + 3 / log2(4) + 1 / log2(5))
                 / (3 + 3 / log2(3) + 2 / log2(4) + 1 / log2(5) + 1 / log2(6)),
                 id="ndcg-gain-for-level-0"),  # b now gains 1; the ideal list grows to [3, 3, 2, 1, 1]
    pytest.param([], A_JUDGED, "DCG", 0.0, id="dcg-empty-ranking"),
    # ---- ndcg_rel: mean over the m ideal entries of nDCG at each relevant document
    pytest.param(A_RANKING, A_JUDGED, "nDCGRel", (1 / 1 + A_DCG / A_IDCG + A_DCG / A_IDCG) / 3,
                 id="ndcg_rel-missing-relevant-uses-final-dcg"),
    pytest.param(B_RANKING, B_JUDGED, "nDCGRel",
                 (B_DCG[0] / B_IDCG[0] + B_DCG[2] / B_IDCG[2] + B_DCG[3] / B_IDCG[3] + B_DCG[3] / B_IDCG[3]) / 4,
                 id="ndcg_rel-graded"),
    pytest.param(UNJ_RANKING, UNJ_JUDGED, "nDCGRel", 0.0, id="ndcg_rel-only-unjudged"),
    pytest.param(R0_RANKING, R0_JUDGED, "nDCGRel", 0.0, id="ndcg_rel-R0"),
    # ---- Rndcg: mean of nDCG at the ideal list's change points (+ at n when n >= m + 2)
    pytest.param(A_RANKING, A_JUDGED, "RnDCG", (1 / A_IDCG + A_DCG / A_IDCG) / 2,
                 id="Rndcg-change-at-3-and-tail"),  # ideal [1,1,1]: c = 3 (DCG@3 = 1); n = 5 >= 3 + 2
    pytest.param(B_RANKING, B_JUDGED, "RnDCG",
                 (B_DCG[1] / B_IDCG[1] + B_DCG[2] / B_IDCG[2] + B_DCG[3] / B_IDCG[3]) / 3,
                 id="Rndcg-graded-change-points-2-3-4"),
    pytest.param(["n1", "r1"], {"r1": 1, "n1": 0}, "RnDCG", 0.0,
                 id="Rndcg-quirk-n-equals-m-plus-1"),  # only c = 1: DCG@1 = 0; DCG(n) is never added
    pytest.param(["n1", "r1", "n2"], {"r1": 1, "n1": 0, "n2": 0}, "RnDCG", (0 + (1 / log2(3)) / 1) / 2,
                 id="Rndcg-n-equals-m-plus-2-adds-tail"),
    pytest.param(B_RANKING, B_JUDGED, "RnDCG(rel=4)", 0.0, id="Rndcg-R0-at-threshold"),
    # ---- rbp: (1 - p) sum gain' p^(i-1); gains rescaled to [0, 1] when outside
    pytest.param(A_RANKING, A_JUDGED, "RBP(p=0.5)", (1 - 0.5) * (1 + 0.5 ** 3), id="rbp-binary"),
    pytest.param(B_RANKING, B_JUDGED, "RBP(p=0.5)", (1 - 0.5) * (2 / 3 + 0.5 ** 2 * 3 / 3 + 0.5 ** 3 * 1 / 3),
                 id="rbp-graded-divides-by-top-level"),
    pytest.param(B_RANKING, B_JUDGED, "RBP(p=0.5, gains={0: -1})",
                 (1 - 0.5) * ((2 + 1) / 4 + 0.5 * (-1 + 1) / 4 + 0.5 ** 2 * (3 + 1) / 4 + 0.5 ** 3 * (1 + 1) / 4),
                 id="rbp-negative-gain-shifts-the-table"),  # table -1..3 -> (g + 1) / 4; b (level 0) gains 0
    pytest.param(A_RANKING, A_JUDGED, "RBP(p=0.5, gains={2: 9})", (1 - 0.5) * (1 / 9 + 0.5 ** 3 / 9),
                 id="rbp-custom-level-without-judgments-counts"),
    pytest.param(A_RANKING, A_JUDGED, "rbp", (1 - 0.9) * (1 + 0.9 ** 3), id="rbp-trec-name-is-p-0.9"),
    pytest.param(UNJ_RANKING, UNJ_JUDGED, "RBP", 0.0, id="rbp-only-unjudged"),
    # ---- rbp_resid: p^n + (1 - p) sum p^(i-1) over unjudged ranks, 0 without unjudged
    pytest.param(A_RANKING, A_JUDGED, "RBPResid(p=0.5)", 0.5 ** 5 + (1 - 0.5) * (0.5 ** 2 + 0.5 ** 4),
                 id="rbp_resid"),
    pytest.param(["r1", "n1"], A_JUDGED, "RBPResid(p=0.5)", 0.0, id="rbp_resid-all-judged-is-0"),
    pytest.param(UNJ_RANKING, UNJ_JUDGED, "RBPResid(p=0.5)", 0.5 ** 2 + (1 - 0.5) * (1 + 0.5),
                 id="rbp_resid-only-unjudged"),
    # ---- yaap: log((1 + S) / (1 + R - S)), S = sum m / r_m
    pytest.param(A_RANKING, A_JUDGED, "YAAP", log((1 + (1 / 1 + 2 / 4)) / (1 + 3 - (1 / 1 + 2 / 4))), id="yaap"),
    pytest.param(["r1", "r2"], {"r1": 1, "r2": 1}, "YAAP", log((1 + 2) / (1 + 2 - 2)), id="yaap-perfect"),
    pytest.param(R0_RANKING, R0_JUDGED, "YAAP", log(1 / 1), id="yaap-R0"),
    pytest.param([], A_JUDGED, "YAAP", log(1 / (1 + 3)), id="yaap-empty-ranking-negative"),
    # ---- utility: p1 nrr + p2 (n - nrr) + p3 (R - nrr) + p4 (N + nrr - n - R)
    pytest.param(A_RANKING, A_JUDGED, "Utility", 1 * 2 + -1 * 3, id="utility-default"),
    pytest.param(A_RANKING, A_JUDGED,
                 "Utility(rel_ret=2.0, nonrel_ret=-1.0, rel_missed=-1.0, nonrel_missed=0.5, collection_size=100)",
                 2 * 2 + -1 * 3 + -1 * (3 - 2) + 0.5 * (100 + 2 - 5 - 3), id="utility-all-weights"),
    pytest.param(R0_RANKING, R0_JUDGED, "Utility", -2.0, id="utility-R0"),
    pytest.param([], A_JUDGED, "Utility(rel_missed=-1.0)", 0.0, id="utility-query-missing-from-run-is-0"),
    # ---- set measures: n = 5, nrr = 2, R = 3
    pytest.param(A_RANKING, A_JUDGED, "SetP", 2 / 5, id="set_P"),
    pytest.param(A_RANKING, A_JUDGED, "SetRelP", 2 / min(5, 3), id="set_relative_P"),
    pytest.param(A_RANKING, A_JUDGED, "SetR", 2 / 3, id="set_recall"),
    pytest.param(A_RANKING, A_JUDGED, "SetAP", 2 * 2 / (5 * 3), id="set_map"),
    pytest.param(A_RANKING, A_JUDGED, "SetF", 2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3), id="set_F-harmonic-mean"),
    pytest.param(A_RANKING, A_JUDGED, "SetF(beta=0.5)", 1.5 * (2 / 5) * (2 / 3) / (0.5 * (2 / 5) + 2 / 3),
                 id="set_F-beta-not-squared"),
    pytest.param(R0_RANKING, R0_JUDGED, "SetRelP", 0.0, id="set_relative_P-R0"),
    pytest.param(UNJ_RANKING, UNJ_JUDGED, "SetF", 0.0, id="set_F-nrr0"),
    pytest.param([], A_JUDGED, "SetP", 0.0, id="set_P-empty-ranking"),
    pytest.param([], A_JUDGED, "SetAP", 0.0, id="set_map-empty-ranking"),
    # ---- counts
    pytest.param(A_RANKING, A_JUDGED, "NumNonRelJudgedRet", 1.0, id="num_nonrel_judged_ret"),  # n1 only
    pytest.param(A_RANKING, A_JUDGED, "NumNonRelJudgedRet(rel=2)", 3.0, id="num_nonrel_judged_ret-rel2"),  # r1 n1 r2
    pytest.param(UNJ_RANKING, UNJ_JUDGED, "NumNonRelJudgedRet", 0.0, id="num_nonrel_judged_ret-only-unjudged"),
    # ---- gm_bpref per query is bpref: r1 adds 1, r2 has n1 above: 1 - 1/min(NR=2, R=3)
    pytest.param(A_RANKING, A_JUDGED, "GMBpref", (1 + (1 - 1 / 2)) / 3, id="gm_bpref-per-query-is-bpref"),
]


@pytest.mark.parametrize(("ranking", "judged", "measure", "expected"), CASES)
def test_hand_computed(ranking: list[str], judged: dict[str, int], measure: str, expected: float) -> None:
    assert score(ranking, judged, measure) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    ("ranking", "judged", "length", "expected"),
    [(A_RANKING, A_JUDGED, 10, "10.1-"), (A_RANKING, A_JUDGED, 3, "10."), (B_RANKING, B_JUDGED, 10, "2031"),
     (["a", "b"], {"a": 12, "b": 9}, 10, ">9"), ([], A_JUDGED, 10, ""), (UNJ_RANKING, UNJ_JUDGED, 0, "")],
    ids=["binary-unjudged-nonpool", "truncated", "graded", "above-9", "empty-ranking", "length-0"],
)
def test_relstring(ranking: list[str], judged: dict[str, int], length: int, expected: str) -> None:
    assert evaluator(ranking, judged).text(f"RelString(length={length})") == expected


def test_relstring_is_text_not_a_value() -> None:
    """``score`` is typed float: the text measure has its own accessors, and each refuses the other kind."""
    ev = evaluator(A_RANKING, A_JUDGED)
    with pytest.raises(MeasureError, match="text measure"):
        ev.score("relstring")
    with pytest.raises(MeasureError, match="numeric measure"):
        ev.text("AP")
    runs = SetEvaluator.from_dict({"q1": A_JUDGED}, {"q1": {d: 9.0 - i for i, d in enumerate(A_RANKING)}})
    assert runs.per_query_text("relstring") == {"q1": "10.1-"}


# ------------------------------------------------------------------------------------ degenerate


def test_query_missing_from_the_run_scores_zero_everywhere_but_num_rel_and_yaap() -> None:
    """trec_eval -c: utility, rbp_resid, unj and relstring are reset; the rest are 0 on an empty ranking."""
    ev = SetEvaluator.from_dict({"q1": A_JUDGED, "q2": A_JUDGED}, {"q1": {"r1": 1.0}})
    for measure, label in parse_labelled("all_trec"):
        value = ev.per_query_text(measure)["q2"] if measure.definition.text else ev.per_query(measure)["q2"]
        expected = {"NumRel": 3.0, "NumQ": 1.0, "RelString": ""}.get(measure.name, 0.0)
        assert value == expected, label
    assert ev.per_query("yaap")["q2"] == pytest.approx(log(1 / (1 + 3)))


def test_empty_ranking_of_a_query_in_the_run_keeps_the_utility_formula() -> None:
    """-M0: the query is in the run with no document left; utility is p3 * R + p4 * (N - R), not reset."""
    ev = SetEvaluator.from_dict({"q1": A_JUDGED}, {"q1": {"r1": 1.0}}, max_depth=0)
    assert ev.per_query("Utility(rel_missed=-1.0)")["q1"] == -3.0
    assert ev.per_query("utility")["q1"] == 0.0


# ------------------------------------------------------------------------------------ summaries


def test_summaries_sum_counts_and_take_the_geometric_mean_of_gm_bpref() -> None:
    qrels = {"q1": A_JUDGED, "q2": UNJ_JUDGED}
    run = {"q1": {d: 10.0 - i for i, d in enumerate(A_RANKING)}, "q2": {"x1": 1.0}}
    ev = SetEvaluator.from_dict(qrels, run)
    assert ev.aggregate("num_nonrel_judged_ret") == 1 + 0
    assert ev.aggregate("utility") == ((2 - 3) + (0 - 1)) / 2  # the mean, not the sum
    assert ev.aggregate("gm_bpref") == pytest.approx((0.5 * 1e-5) ** 0.5)  # q2 bpref 0 is floored at 1e-5
    with pytest.raises(MeasureError, match="text measure"):
        ev.aggregate("relstring")
    with pytest.raises(MeasureError, match="text measure"):
        ev.mean("relstring")


def test_relstring_prints_per_query_only() -> None:
    qrels = {"q1": A_JUDGED}
    ev = SetEvaluator.from_dict(qrels, {"q1": {d: 10.0 - i for i, d in enumerate(A_RANKING)}})
    requested = [Requested(m, label) for m, label in parse_labelled("relstring.3")]
    lines = list(trec_lines(ev, requested, per_query=True, summary=True, run_id=False))
    assert lines == ["relstring_3           \tq1\t'10.'"]


# ------------------------------------------------------------------------ names, labels, params


@pytest.mark.parametrize(
    ("text", "expected"),
    [("infAP", [("infAP", "infAP")]),
     ("gm_bpref", [("GMBpref", "gm_bpref")]),
     ("Rprec_mult.5.0,0.2", [("RprecMult@0.2", "Rprec_mult_0.20"), ("RprecMult@5.0", "Rprec_mult_5.00")]),
     ("utility.2,-1,0,0", [("Utility(rel_ret=2.0)", "utility_2,-1,0,0")]),
     ("11pt_avg..25,.5,.75", [("IPrecAvg(points=(0.25, 0.5, 0.75))", "11pt_avg_.25,.5,.75")]),
     ("ndcg.1=3,2=9,4=4.5", [("nDCG(gains={1: 3, 2: 9, 4: 4.5})", "ndcg_1=3,2=9,4=4.5")]),
     ("Rndcg.0=1", [("RnDCG(gains={0: 1})", "Rndcg_0=1")]),
     ("rbp", [("RBP(p=0.9)", "rbp")]),
     ("rbp.p=0.95", [("RBP(p=0.95)", "rbp_p=0.95")]),
     ("rbp_resid", [("RBPResid(p=0.9)", "rbp_resid")]),
     ("set_relative_P", [("SetP(relative=True)", "set_relative_P")]),
     ("set_F.0.5", [("SetF(beta=0.5)", "set_F_0.5")]),
     ("relstring.20", [("RelString(length=20)", "relstring_20")]),
     ("unj", [("Unj@5", "unj_5"), ("Unj@10", "unj_10"), ("Unj@20", "unj_20")]),
     ("relative_P.3", [("RelP@3", "relative_P_3")]),
     ("utility_2,-1,0,0", [("Utility(rel_ret=2.0)", "utility_2,-1,0,0")]),
     ("SetRelP", [("SetP(relative=True)", "SetP(relative=True)")])],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_trec_names_and_labels(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(str(m), label) for m, label in parse_labelled(text)] == expected


@pytest.mark.parametrize(
    "text",
    ["nDCG(gains={1: 3, 2: 9})", "RBP(p=0.95, gains={2: 0.5})", "IPrecAvg(points=(0.25, 0.5))", "SetP(relative=True)",
     "Utility(rel_ret=2.0, collection_size=10)", "RprecMult@0.2", "Unj@5", "RelString(length=20)", "DCG@10", "YAAP"],
)
def test_canonical_strings_round_trip(text: str) -> None:
    assert str(parse(text)) == text and parse(str(parse(text))) == parse(text)


@pytest.mark.parametrize(
    ("measure", "label"),
    [("RBP(p=0.9)", "rbp"), ("RBP", "rbp_p=0.8"), ("RBP(p=0.95, gains={2: 3})", "rbp_p=0.95,2=3"),
     ("SetP(relative=True)", "set_relative_P"), ("Utility(rel_ret=2.0)", "utility_2,-1,0,0"),
     ("nDCG(gains={1: 3})", "ndcg_1=3"), ("nDCG(gains={1: 3})@5", None), ("RBPResid", None)],
)
def test_trec_label_of_a_measure(measure: str, label: str | None) -> None:
    """Measures built in Python get trec_eval's spelling when it has one."""
    assert parse(measure).trec_label == label


def test_gains_are_a_hashable_dict_like_value() -> None:
    gains = Gains({2: 9.0, 1: 3})
    assert repr(gains) == "{1: 3, 2: 9}" and gains == {1: 3, 2: 9} and gains[2] == 9
    assert hash(gains) == hash(Gains([(1, 3.0), (2, 9)]))
    assert parse("nDCG(gains={1: 3, 2: 9})") == parse("ndcg.2=9,1=3")


def test_gains_pickle_and_copy() -> None:
    import copy
    import pickle

    measure = parse("RBP(p=0.95, gains={2: 0.5})")
    assert pickle.loads(pickle.dumps(measure)) == measure == copy.deepcopy(measure)


def test_json_output_holds_the_relstring(write, capsys) -> None:
    import json

    from retrieval_eval.cli import main

    qrels = write("qrels", "".join(f"q1 0 {d} {r}\n" for d, r in A_JUDGED.items()))
    run = write("run", "".join(f"q1 Q0 {d} {i + 1} {10 - i} tag\n" for i, d in enumerate(A_RANKING)))
    assert main(["evaluate", "-q", "--format", "json", "-m", "relstring", "-m", "rbp", qrels, run]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["per_query"]["q1"]["relstring"] == "10.1-"
    assert set(document["aggregate"]) == {"rbp"}


def test_options_combine_like_trec_eval() -> None:
    """The first -m name.params wins; a plain name or a group only asks for the measure."""
    labels = [label for _, label in parse_trec_options(["all_trec", "relstring.20", "P.5", "P.10", "nDCG@3"])]
    assert "relstring_20" in labels and "relstring" not in labels
    assert [label for label in labels if label.startswith("P_")] == ["P_5"]
    assert labels[-1] == "nDCG@3"


@pytest.mark.parametrize(
    ("text", "message"),
    [("rbp.q=1", "must be an integer level or 'p'"), ("ndcg.1=", "takes 'level=gain' pairs"),
     ("ndcg.-1=2", "integers >= 0"), ("ndcg.1=2,1=3", "given twice"), ("utility.1,2,3", "takes 4"),
     ("rbp_resid.p=0.5", "takes no parameters"), ("relstring.-3", "must be an int >= 0"),
     ("nDCG(gains={-1: 2})", "integers >= 0"), ("SetP(relative=1)", "must be a bool"),
     ("IPrecAvg(points=())", "non-empty"), ("11pt_avg.", "malformed")],
)
def test_parameter_errors_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(MeasureError, match=message):
        parse_labelled(text)
