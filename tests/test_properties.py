"""Property tests: bounds, monotonicity, invariances, one-query object == set row, slow oracles.

The cases come from :mod:`strategies` (ties, graded and negative judgments, unjudged retrieved
documents, empty rankings, R = 0, queries on one side only); the oracles from :mod:`reference`.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest
import reference
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import DOC_IDS, evaluation_cases, single_query_cases

from retrieval_eval import Document, Judgment, RetrievalEvaluator, SetEvaluator

COUNTS = ("num_ret", "num_rel", "num_rel_ret")
RECALL_POINTS = tuple(i / 10 for i in range(11))
IPREC = tuple(f"iprec_at_recall_{p:3.2f}" for p in RECALL_POINTS)
#: Bounded in [0, 1]: trec_eval labels and ir_measures names of the same family.
BOUNDED = (
    *reference.RANK_MEASURES,
    *IPREC,
    "AP", "P@1", "P@3", "nDCG@3", "R@2", "RR", "RR@3", "Bpref", "IPrec@0.25", "Success@2", "AP@5",
)
MEASURES = (*BOUNDED, *COUNTS)
CUTOFFS = tuple(range(1, 26)) + (30, 100)
ORACLE_CUTOFFS = (1, 2, 3, 5, 10, 20, 30)

rels = st.sampled_from([1, 2])


def table(evaluator: SetEvaluator, measures: tuple[str, ...] = MEASURES) -> dict[str, dict[str, float]]:
    """{measure: {qid: value}}."""
    return {m: evaluator.per_query(m) for m in measures}


def ranked(run: dict, qid: str) -> list[str]:
    return reference.rank(run.get(qid, {}))


# --------------------------------------------------------------------------------------------------
# Bounds and monotonicity


@settings(max_examples=200, deadline=None)
@given(case=evaluation_cases(), rel=rels)
def test_bounds(case: tuple[dict, dict], rel: int) -> None:
    """Every measure is in [0, 1], never NaN; the counts are consistent non-negative integers."""
    qrels, run = case
    ev = SetEvaluator.from_dict(qrels, run, rel=rel)
    values = table(ev)
    assert set(ev) == set(qrels)
    for m in BOUNDED:
        for qid, v in values[m].items():
            assert 0.0 <= v <= 1.0, (m, qid, v)
    for qid in ev:
        n, R, nrr = (values[m][qid] for m in COUNTS)
        for count in (n, R, nrr):
            assert count >= 0 and count == int(count)
        assert n == len(run.get(qid, {}))
        assert R == reference.num_rel(qrels[qid], rel)
        assert nrr <= R and nrr <= n


@settings(max_examples=100, deadline=None)
@given(case=evaluation_cases(max_ranking=30), rel=rels)
def test_monotone_in_cutoff(case: tuple[dict, dict], rel: int) -> None:
    """R@k, Success@k, rel@k = k * P@k and AP@k never decrease with k; nDCG@k stays in [0, 1]."""
    qrels, run = case
    ev = SetEvaluator.from_dict(qrels, run, rel=rel)
    rr = ev.per_query("RR")
    ndcg = ev.per_query("ndcg")
    previous: dict[str, dict[str, float]] = {}
    for k in CUTOFFS:
        current = {
            "R": ev.per_query(f"R@{k}"),
            "Success": ev.per_query(f"Success@{k}"),
            "relk": {q: round(v * k) for q, v in ev.per_query(f"P@{k}").items()},
            "AP": ev.per_query(f"AP@{k}"),
        }
        ndcg_k = ev.per_query(f"nDCG@{k}")
        for qid in ev:
            assert 0.0 <= ndcg_k[qid] <= 1.0
            assert current["relk"][qid] <= k
            # Success@k = 1 exactly when the first relevant document is in the top k.
            assert current["Success"][qid] == (1.0 if rr[qid] >= 1.0 / k else 0.0), (qid, k)
            for name, values in previous.items():
                assert current[name][qid] >= values[qid], (name, qid, k)
            # Past both the ranking and the ideal list, the cutoff no longer matters.
            depth = max(len(run.get(qid, {})), sum(1 for v in qrels[qid].values() if v > 0))
            if k >= depth:
                assert ndcg_k[qid] == ndcg[qid], (qid, k)
        previous = current
    ap = ev.per_query("map")
    for qid in ev:
        assert previous["AP"][qid] <= ap[qid]
        if len(run.get(qid, {})) <= CUTOFFS[-1]:
            assert previous["AP"][qid] == ap[qid]


@settings(max_examples=150, deadline=None)
@given(case=evaluation_cases(), rel=rels)
def test_iprec_non_increasing_in_recall(case: tuple[dict, dict], rel: int) -> None:
    """Interpolated precision never increases with the recall level; iprec@0 >= every precision."""
    qrels, run = case
    ev = SetEvaluator.from_dict(qrels, run, rel=rel)
    values = table(ev, IPREC)
    for qid in ev:
        curve = [values[m][qid] for m in IPREC]
        assert all(a >= b for a, b in itertools.pairwise(curve)), (qid, curve)
        assert curve[0] >= ev.per_query("RR")[qid]
        assert curve[0] >= ev.per_query("Rprec")[qid] or reference.num_rel(qrels[qid], rel) == 0


# --------------------------------------------------------------------------------------------------
# Invariances


def _shuffled(d: dict[str, dict], rng: random.Random) -> dict[str, dict]:
    queries = list(d.items())
    rng.shuffle(queries)
    out = {}
    for qid, docs in queries:
        items = list(docs.items())
        rng.shuffle(items)
        out[qid] = dict(items)
    return out


@settings(max_examples=150, deadline=None)
@given(case=evaluation_cases(), rel=rels, seed=st.integers(0, 2**32 - 1))
def test_invariant_to_input_order(case: tuple[dict, dict], rel: int, seed: int) -> None:
    """Per-query values do not depend on the order of queries, judgments or run entries in the dicts."""
    qrels, run = case
    rng = random.Random(seed)
    before = table(SetEvaluator.from_dict(qrels, run, rel=rel))
    after = table(SetEvaluator.from_dict(_shuffled(qrels, rng), _shuffled(run, rng), rel=rel))
    assert after == before


def _rename(d: dict[str, dict], mapping: dict[str, str]) -> dict[str, dict]:
    return {q: {mapping[doc]: v for doc, v in docs.items()} for q, docs in d.items()}


@settings(max_examples=150, deadline=None)
@given(case=evaluation_cases(distinct_scores=True), rel=rels, seed=st.integers(0, 2**32 - 1))
def test_invariant_to_renaming_without_ties(case: tuple[dict, dict], rel: int, seed: int) -> None:
    """With distinct scores, any one-to-one renaming of doc ids leaves every value unchanged."""
    qrels, run = case
    rng = random.Random(seed)
    targets = [f"{rng.choice(['x', 'Y', 'doc', ''])}{i}" for i in rng.sample(range(1000), len(DOC_IDS))]
    mapping = dict(zip(DOC_IDS, targets))
    before = table(SetEvaluator.from_dict(qrels, run, rel=rel))
    after = table(SetEvaluator.from_dict(_rename(qrels, mapping), _rename(run, mapping), rel=rel))
    assert after == before


@settings(max_examples=100, deadline=None)
@given(case=evaluation_cases(), rel=rels, prefix=st.sampled_from(["z", "A-", "doc_", "9"]))
def test_invariant_to_order_preserving_renaming_with_ties(case: tuple[dict, dict], rel: int, prefix: str) -> None:
    """With ties, a renaming that keeps the byte order of the ids (a common prefix) changes nothing."""
    qrels, run = case
    mapping = {doc: prefix + doc for doc in DOC_IDS}
    before = table(SetEvaluator.from_dict(qrels, run, rel=rel))
    after = table(SetEvaluator.from_dict(_rename(qrels, mapping), _rename(run, mapping), rel=rel))
    assert after == before


# --------------------------------------------------------------------------------------------------
# One query, three ways


@settings(max_examples=200, deadline=None)
@given(case=evaluation_cases(), rel=rels)
def test_per_query_evaluator_matches_set_row(case: tuple[dict, dict], rel: int) -> None:
    """ev[qid].score(m), a RetrievalEvaluator built by hand, and the SetEvaluator row agree on every query."""
    qrels, run = case
    ev = SetEvaluator.from_dict(qrels, run, rel=rel)
    rows = table(ev)
    direct = {}
    for qid in ev:
        ranking = ranked(run, qid)
        one = ev[qid]
        assert one.query_id == qid
        assert [d.doc_id for d in one.retrieved_documents()] == ranking
        built = RetrievalEvaluator(
            qid, [Document(d) for d in ranking], [Judgment(d, r) for d, r in qrels[qid].items()], rel=rel
        )
        direct[qid] = built
        for m in MEASURES:
            assert one.score(m) == rows[m][qid], (m, qid, "ev[qid]")
            assert built.score(m) == rows[m][qid], (m, qid, "RetrievalEvaluator")
        for e in (one, built):
            assert e.average_precision() == rows["map"][qid]
            assert e.binary_preference() == rows["bpref"][qid]
            assert e.r_precision() == rows["Rprec"][qid]
            assert e.reciprocal_rank() == rows["recip_rank"][qid]
            assert e.normalized_discounted_cumulative_gain() == rows["ndcg"][qid]
            assert e.ndcg(10) == rows["ndcg_cut_10"][qid]
            assert e.precision(10) == rows["P_10"][qid]
            assert e.recall(100) == rows["recall_100"][qid]
            assert e.relevant_retrieved() == rows["num_rel_ret"][qid]
            assert e.interpolated_precision() == [rows[m][qid] for m in IPREC]
    rebuilt = SetEvaluator(list(direct.values()), rel=rel)
    assert table(rebuilt) == rows


@settings(max_examples=100, deadline=None)
@given(case=evaluation_cases(), rel=rels)
def test_summary_is_sum_or_mean_of_rows(case: tuple[dict, dict], rel: int) -> None:
    """aggregate() sums the counts and averages everything else over the evaluated queries."""
    qrels, run = case
    ev = SetEvaluator.from_dict(qrels, run, rel=rel)
    for m in MEASURES:
        values = list(ev.per_query(m).values())
        expected = math.fsum(values) if m in COUNTS else math.fsum(values) / len(values)
        assert ev.aggregate(m) == pytest.approx(expected, abs=1e-12), m
        if m not in COUNTS:  # mean() refuses a summed measure: aggregate() is its summary
            assert ev.mean(m) == pytest.approx(math.fsum(values) / len(values), abs=1e-12), m


# --------------------------------------------------------------------------------------------------
# Slow oracles


def check_against_oracles(qrels: dict, run: dict, rel: int) -> list[str]:
    ev = SetEvaluator.from_dict(qrels, run, rel=rel)
    problems = []

    def check(measure: str, qid: str, expected: float) -> None:
        got = ev.per_query(measure)[qid]
        if math.isnan(expected):  # trec_eval's 0/0 on an empty ranking: documented as 0.0
            expected = 0.0
        if not abs(got - expected) <= 1e-12:
            problems.append(f"{measure} q={qid} rel={rel}: got {got!r}, oracle {expected!r}; "
                            f"judgments={qrels[qid]!r} ranking={ranked(run, qid)!r}")

    for qid in ev:
        ranking, judged = ranked(run, qid), qrels[qid]
        check("map", qid, reference.average_precision(ranking, judged, rel))
        check("AP", qid, reference.average_precision(ranking, judged, rel))
        check("recip_rank", qid, reference.reciprocal_rank(ranking, judged, rel))
        check("Rprec", qid, reference.r_precision(ranking, judged, rel))
        check("bpref", qid, reference.bpref(ranking, judged, rel))
        check("ndcg", qid, reference.ndcg(ranking, judged))
        check("num_ret", qid, float(len(ranking)))
        check("num_rel", qid, float(reference.num_rel(judged, rel)))
        check("num_rel_ret", qid, float(reference.num_rel_ret(ranking, judged, rel)))
        for k in ORACLE_CUTOFFS:
            check(f"P@{k}", qid, reference.precision(ranking, judged, k, rel))
            check(f"R@{k}", qid, reference.recall(ranking, judged, k, rel))
            check(f"Success@{k}", qid, reference.success(ranking, judged, k, rel))
            check(f"nDCG@{k}", qid, reference.ndcg(ranking, judged, k))
        for p, label in zip(RECALL_POINTS, IPREC):
            check(label, qid, reference.interpolated_precision(ranking, judged, p, rel, rule="v10"))
    return problems


@settings(max_examples=400, deadline=None)
@given(case=evaluation_cases(), rel=rels)
def test_matches_slow_oracles(case: tuple[dict, dict], rel: int) -> None:
    """AP, P@k, R@k, Success@k, RR, Rprec, bpref, nDCG(@k), iprec and counts equal plain loops, to 1e-12."""
    qrels, run = case
    problems = check_against_oracles(qrels, run, rel)
    assert not problems, "\n".join(problems[:10])


@settings(max_examples=400, deadline=None)
@given(case=single_query_cases(max_ranking=31), rel=st.sampled_from([1, 2, 3]))
def test_single_query_matches_slow_oracles(case: tuple[str, dict, dict], rel: int) -> None:
    """Longer single rankings (up to the whole doc pool), thresholds 1 to 3."""
    qid, judged, scores = case
    problems = check_against_oracles({qid: judged}, {qid: scores}, rel)
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize(
    ("judged", "ranking", "expected"),
    [
        # semantics doc example: judged ranking N R R R R, 3 N and 2 R unretrieved -> R=6, NR=4, 0.5
        ({"n0": 0, "r1": 1, "r2": 1, "r3": 1, "r4": 1, "n5": 0, "n6": 0, "n7": 0, "r8": 1, "r9": 1},
         ["n0", "r1", "r2", "r3", "r4"], 0.5),
        # NR = 0: bpref = nrr / R
        ({"a": 1, "b": 1, "c": 1}, ["x", "a", "y", "b"], 2 / 3),
        # unjudged (negative) and NONPOOL documents are skipped
        ({"a": 1, "u": -1, "n": 0}, ["u", "x", "a", "n"], 1.0),
    ],
    ids=["semantics-example", "no-nonrelevant", "unjudged-skipped"],
)
def test_bpref_oracle_hand_cases(judged: dict, ranking: list[str], expected: float) -> None:
    """The bpref oracle itself reproduces the worked examples, and so does the package."""
    assert reference.bpref(ranking, judged) == pytest.approx(expected, abs=1e-15)
    ev = RetrievalEvaluator("q", [Document(d) for d in ranking], [Judgment(d, r) for d, r in judged.items()])
    assert ev.binary_preference() == pytest.approx(expected, abs=1e-15)


#: Measures whose kernels run sums along each ranking (cumulative gains, products of stopping
#: probabilities): the ones a batch-wide running sum would make depend on the other queries.
RUNNING_SUMS = ("ERR@5", "ERR", "nDCGRel", "RnDCG", "NERR8(max_rel=2)@5", "NERR9(max_rel=2)@5",
                "NERR10(max_rel=2)", "NERR11(max_rel=2)", "INST(max_rel=2)", "INSQ(max_rel=2)",
                "BPM(T=2, max_rel=2)@5", "SDCG(max_rel=2)@5", "G", "nDCG", "nDCG(dcg='exp-log2')@5", "RBP", "AP",
                "Bpref")


@settings(max_examples=100, deadline=None)
@given(case=evaluation_cases(), rel=rels)
def test_a_query_scores_the_same_whatever_queries_share_its_batch(case: tuple[dict, dict], rel: int) -> None:
    """Bit for bit: each query's value in the whole set equals its value evaluated alone. (The Spark
    path evaluates whatever queries a partition holds, and its numbers must be SetEvaluator's.)"""
    qrels, run = case
    together = SetEvaluator.from_dict(qrels, run, rel=rel)
    measures = ("all_trec", *RUNNING_SUMS)
    values = together.evaluate(measures)
    for qid in together:
        alone = SetEvaluator.from_dict({qid: qrels[qid]}, {qid: run[qid]} if qid in run else {}, rel=rel)
        assert alone.evaluate(measures)[qid] == values[qid], qid
