"""The intent-aware (diversity) measures: hand-computed cases, and ndeval itself as the oracle.

The oracle is ir_measures 0.4.3's ``pyndeval`` provider (ndeval 4.5's C code, compiled), run per
query on seeded data with several subtopics per query, graded judgments, documents judged
non-relevant, queries without any relevant subtopic and queries missing from the run. Scores are
distinct there, because ndeval breaks ties by document id ascending and we by trec_eval's order
(descending): ``test_ties_follow_trec_eval_order`` pins that difference. The other one, nNRBP on a
query without relevant subtopics (ndeval's 0/0 = NaN, our 0), is pinned by its own test.
"""

from __future__ import annotations

import io
import math
import random
import subprocess
import sys

import numpy as np
import pytest

from retrieval_eval import SetEvaluator
from retrieval_eval.measures import MeasureError, parse

NAMES = ("alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP", "P_IA", "StRecall", "AP_IA")
HAND_COMPUTED = set(NAMES)
ORACLE_CHECKED = set(NAMES)

# One query, three subtopics (alpha = 0.5): a is relevant to subtopics 1 and 2, b to 1, c to 3; d is
# judged non-relevant to 2. The run ranks a, b, c. Gains: a 1 + 1 = 2 (both new), b 0.5 (subtopic 1
# seen once), c 1. The greedy ideal ranking is a (2), c (1), b (0.5). q2 has no relevant subtopic.
QRELS = "1 1 a 1\n1 2 a 1\n1 1 b 1\n1 3 c 1\n1 2 d 0\n2 1 x 0\n"
RUN = "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n2 Q0 x 1 1 r\n"
L2, L3 = math.log2(2), math.log2(3)
HAND = {
    # run DCG sum 2 + 0.5/log2(3) + 1/log2(4); ideal-ideal 3 * (1 + 0.5/log2(3) + 0.25/log2(4))
    "alpha_DCG@3": (2 + 0.5 / L3 + 1 / 2) / (3 * (1 + 0.5 / L3 + 0.25 / 2)),
    "alpha_DCG@1": 2.0,  # ndeval leaves rank 1 undivided
    "alpha_nDCG@3": (2 + 0.5 / L3 + 1 / 2) / (2 + 1 / L3 + 0.5 / 2),
    "alpha_nDCG@1": 1.0,
    "alpha_nDCG(alpha=1.0)@3": (2 + 0 + 1 / 2) / (2 + 1 / L3 + 0),  # repeats gain nothing
    "ERR_IA@3": (2 + 0.5 / 2 + 1 / 3) / (3 * (1 + 0.5 / 2 + 0.25 / 3)),
    "nERR_IA@3": (2 + 0.5 / 2 + 1 / 3) / (2 + 1 / 2 + 0.5 / 3),
    "NRBP": (2 + 0.5 * 0.5 + 1 * 0.25) * (1 - 0.5 * 0.5) / 3,
    "nNRBP": (2 + 0.5 * 0.5 + 1 * 0.25) / (2 + 1 * 0.5 + 0.5 * 0.25),
    "NRBP(beta=0.8)": (2 + 0.5 * 0.8 + 1 * 0.64) * (1 - 0.5 * 0.8) / 3,
    "P_IA@3": 4 / (3 * 3),  # pairs (a,1) (a,2) (b,1) (c,3)
    "P_IA@10": 4 / (10 * 3),
    "StRecall@2": 2 / 3,
    "StRecall@3": 1.0,
    "AP_IA": ((1 / 1 + 2 / 2) / 2 + (1 / 1) / 1 + (1 / 3) / 1) / 3,
}


def _evaluator(qrels: str = QRELS, run: str = RUN, **options: object) -> SetEvaluator:
    return SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO(run), subtopics=True, **options)


@pytest.mark.parametrize("text", sorted(HAND))
def test_hand_computed(text: str) -> None:
    values = _evaluator().per_query(text)
    assert values["1"] == pytest.approx(HAND[text], abs=1e-12)
    assert values["2"] == 0.0  # no relevant subtopic: S = 0


def test_rel_threshold_binarises_each_judgment() -> None:
    # with rel=2 only grade-2 judgments count: a is relevant to subtopic 1 only
    qrels = "1 1 a 2\n1 2 a 1\n1 2 b 2\n"
    run = "1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n"
    at2 = _evaluator(qrels, run).per_query("StRecall(rel=2)@1")
    assert at2 == {"1": 0.5}
    assert _evaluator(qrels, run).per_query("StRecall@1") == {"1": 1.0}


def test_greedy_ideal_breaks_ties_by_largest_document_id() -> None:
    # b and c tie at rank 1 (gain 1 each); ndeval takes c (the larger id), after which b still gains 1
    # on subtopic 1 while d, relevant to 2 like c, gains 0.5. With b taken first instead, the ideal
    # would be b, c, d or b, d, c: the same gains here, so the value pins the greedy sums, not the pick.
    qrels = "1 1 b 1\n1 2 c 1\n1 2 d 1\n"
    run = "1 Q0 d 1 3 r\n1 Q0 c 2 2 r\n1 Q0 b 3 1 r\n"
    value = _evaluator(qrels, run).per_query("alpha_nDCG@3")["1"]
    assert value == pytest.approx((1 + 0.5 / L3 + 1 / 2) / (1 + 1 / L3 + 0.5 / 2), abs=1e-12)


def test_missing_subtopic_column_is_a_clear_error() -> None:
    plain = SetEvaluator.from_trec(io.StringIO("1 0 a 1\n"), io.StringIO("1 Q0 a 1 1 r\n"))
    with pytest.raises(MeasureError, match=r"needs diversity qrels.*subtopics=True"):
        plain.mean("alpha_nDCG@10")


def test_other_measures_see_each_documents_largest_value() -> None:
    e = _evaluator("1 1 a 0\n1 2 a 2\n1 1 b 1\n", "1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n")
    assert e.per_query("P(rel=2)@1") == {"1": 1.0}
    assert e.per_query("NumRel") == {"1": 2.0}


def test_duplicate_subtopic_judgment_is_an_error() -> None:
    from retrieval_eval.model import InputFormatError

    with pytest.raises(InputFormatError, match=r"<stream>:3: duplicate judgment for query '1', subtopic '1', "
                                               r"document 'a' \(first at line 1\)"):
        _evaluator("1 1 a 1\n1 2 a 1\n1 1 a 0\n", RUN)
    kept = _evaluator("1 1 a 1\n1 2 a 1\n1 1 a 0\n", RUN, duplicates="first")
    assert kept.per_query("StRecall@1")["1"] == 1.0  # the first line (relevant) is kept


def test_judged_only_drops_unjudged_documents_before_ranking() -> None:
    run = "1 Q0 zz 1 9 r\n" + RUN
    assert _evaluator(run=run).per_query("alpha_nDCG@3")["1"] < HAND["alpha_nDCG@3"]
    assert _evaluator(run=run).per_query("alpha_nDCG(judged_only=True)@3")["1"] == pytest.approx(HAND["alpha_nDCG@3"])


def test_parameters_are_checked() -> None:
    with pytest.raises(MeasureError, match=r"'alpha' of alpha_nDCG must be a float in \[0.0, 1.0\]; got 1.5"):
        parse("alpha_nDCG(alpha=1.5)@10")
    with pytest.raises(MeasureError, match="needs a cutoff"):
        _evaluator().mean("P_IA")


def test_cli_reads_the_subtopic_column_for_diversity_measures(tmp_path) -> None:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    done = subprocess.run(
        [sys.executable, "-m", "retrieval_eval", "evaluate", "-q", "-m", "alpha_nDCG@3", "-m", "P_IA@3",
         str(tmp_path / "qrels"), str(tmp_path / "run")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    lines = {(line.split()[0], line.split()[1]): float(line.split()[2]) for line in done.stdout.splitlines()}
    assert lines[("alpha_nDCG@3", "1")] == pytest.approx(HAND["alpha_nDCG@3"], abs=1e-4)
    assert lines[("P_IA@3", "all")] == pytest.approx(HAND["P_IA@3"] / 2, abs=1e-4)


# --------------------------------------------------------------------------------------------------
# ndeval (pyndeval, through ir_measures) as the oracle


def _dataset(seed: int) -> tuple[list[tuple[str, str, str, int]], list[tuple[str, str, float]]]:
    """Diversity qrels (query, subtopic, doc, grade) and a run with distinct scores."""
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(25):
        qid = f"q{q}"
        docs = [f"d{rng.randrange(60):02d}" for _ in range(rng.randrange(3, 30))]
        docs = sorted(set(docs))
        n_subtopics = rng.choice((1, 2, 3, 5, 7))
        no_relevant = rng.random() < 0.12
        for doc in docs:
            for s in rng.sample(range(1, n_subtopics + 1), rng.randrange(1, n_subtopics + 1)):
                grade = 0 if no_relevant else rng.choice((0, 0, 1, 1, 2, 3))
                qrels.append((qid, str(s), doc, grade))
        if rng.random() < 0.1:
            continue  # a judged query the run lacks
        retrieved = rng.sample(docs, rng.randrange(0, len(docs) + 1))
        retrieved += [f"u{i}" for i in range(rng.randrange(0, 15))]  # unjudged
        scores = rng.sample(range(10_000), len(retrieved))  # distinct: see the module docstring
        run += [(qid, doc, score / 100.0) for doc, score in zip(retrieved, scores)]
    run.append(("q-run-only", "d00", 1.0))
    return qrels, run


ORACLE_MEASURES = [
    *(f"{name}@{k}" for name in ("alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA", "P_IA", "StRecall")
      for k in (1, 2, 5, 10, 20)),
    "alpha_nDCG(alpha=0.3)@10", "alpha_DCG(alpha=0.8)@5", "alpha_nDCG(rel=2)@10", "ERR_IA(rel=2)@20",
    "P_IA(rel=3)@5", "StRecall(rel=2)@10", "alpha_nDCG(judged_only=True)@10", "nERR_IA(judged_only=True)@5",
    "P_IA(judged_only=True)@10", "ERR_IA(judged_only=True)@10",
    "NRBP", "nNRBP", "NRBP(alpha=0.2,beta=0.9)", "nNRBP(alpha=0.7,beta=0.3)", "NRBP(rel=2)",
    "AP_IA", "AP_IA(rel=2)", "AP_IA(judged_only=True)",
]


@pytest.fixture(scope="module", params=(1, 2, 3))
def ndeval_and_ours(request: pytest.FixtureRequest) -> tuple[dict[tuple[str, str], float], SetEvaluator]:
    ir_measures = pytest.importorskip("ir_measures")
    provider = ir_measures.providers.registry["pyndeval"]
    if not provider.is_available():
        pytest.skip("pyndeval (ndeval's C code) is not installed: pip install pyndeval")
    qrels, run = _dataset(request.param)
    ir_qrels = [ir_measures.Qrel(q, d, g, s) for q, s, d, g in qrels]
    judged = {(q, d) for q, _, d, _ in qrels}
    theirs = {}
    for text in ORACLE_MEASURES:
        # One call per measure: the provider hands one run iterator to all its ndeval invocations, so
        # a second parameter set would see an empty run. Its judged_only path raises TypeError (it
        # indexes that iterator as a dict); it is done here as it intends: the run cut to judged pairs.
        measure = ir_measures.parse_measure(text)
        only_judged = measure.params.get("judged_only", False)
        if only_judged:
            measure = measure(judged_only=False)
        ir_run = [ir_measures.ScoredDoc(q, d, score) for q, d, score in run if not only_judged or (q, d) in judged]
        for metric in provider.evaluator([measure], ir_qrels).iter_calc(ir_run):
            theirs[(text, metric.query_id)] = metric.value
    qrels_text = "".join(f"{q} {s} {d} {g}\n" for q, s, d, g in qrels)
    run_text = "".join(f"{q} Q0 {d} 0 {score} r\n" for q, d, score in run)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the run-only query's note
        ours = _evaluator(qrels_text, run_text)
    return theirs, ours


@pytest.mark.parametrize("text", ORACLE_MEASURES)
def test_equals_ndeval_per_query(text: str, ndeval_and_ours: tuple[dict[tuple[str, str], float], SetEvaluator]) -> None:
    theirs, ours = ndeval_and_ours
    values = ours.per_query(parse(text))
    compared = 0
    for qid, value in values.items():
        expected = theirs[(text, qid)]
        if math.isnan(expected):  # nNRBP of a query without relevant subtopics: ndeval's 0 / 0
            assert text.startswith("nNRBP") and value == 0.0
            continue
        assert value == pytest.approx(expected, abs=1e-9), (text, qid)
        compared += 1
    assert compared >= 15
    # every judged query: ir_measures gives the ones ndeval skips (not retrieved) 0, as -c does here
    assert {qid for measure, qid in theirs if measure == text} == set(values)


def test_ndeval_gives_nan_where_we_give_zero() -> None:
    """nNRBP of a query with no relevant subtopic: ndeval divides 0 by 0; we give 0 (no NaN anywhere)."""
    pyndeval = pytest.importorskip("pyndeval")
    theirs = pyndeval.ndeval([("q", "1", "a", 0)], [("q", "a", 1.0)], ["nNRBP"])
    assert math.isnan(theirs["q"]["nNRBP"])
    assert _evaluator("q 1 a 0\n", "q Q0 a 1 1 r\n").per_query("nNRBP") == {"q": 0.0}


def test_ties_follow_trec_eval_order() -> None:
    """Tied scores: we rank by doc id descending (trec_eval), ndeval ascending."""
    pyndeval = pytest.importorskip("pyndeval")
    qrels = [("q", "1", "a", 1), ("q", "1", "b", 1), ("q", "2", "b", 1)]
    tied = [("q", "a", 1.0), ("q", "b", 1.0)]
    ndeval_tied = pyndeval.ndeval(qrels, tied, ["alpha-nDCG@1"])["q"]["alpha-nDCG@1"]  # a first: gain 1 of 2
    ndeval_b_first = pyndeval.ndeval(qrels, [("q", "a", 1.0), ("q", "b", 2.0)], ["alpha-nDCG@1"])["q"]["alpha-nDCG@1"]
    ours = _evaluator("q 1 a 1\nq 1 b 1\nq 2 b 1\n", "q Q0 a 1 1 r\nq Q0 b 2 1 r\n").per_query("alpha_nDCG@1")["q"]
    assert ndeval_tied == pytest.approx(0.5) and ndeval_b_first == pytest.approx(1.0)
    assert ours == pytest.approx(ndeval_b_first)


def test_many_queries_are_vectorised() -> None:
    """A thousand queries in one batch equal the same queries evaluated one at a time."""
    qrels, run = _dataset(7)
    qrels_text = "".join(f"{q} {s} {d} {g}\n" for q, s, d, g in qrels)
    run_text = "".join(f"{q} Q0 {d} 0 {score} r\n" for q, d, score in run)
    together = _evaluator(qrels_text, run_text)
    for qid in ("q0", "q3", "q11"):
        alone = _evaluator("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in qrels if q == qid),
                           "".join(f"{q} Q0 {d} 0 {score} r\n" for q, d, score in run if q == qid) or "zz Q0 a 0 1 r\n")
        for text in ("alpha_nDCG@10", "nNRBP", "AP_IA", "nERR_IA@5"):
            assert together.per_query(text)[qid] == pytest.approx(alone.per_query(text).get(qid, 0.0), abs=1e-12)
    assert np.isfinite(together.array("nNRBP")).all()
