"""FLAGR's worked example of rank-evaluation measures, recomputed from the definitions.

One ranking of 8 documents; the relevant ones (binary, R = 4) are at ranks 1, 3, 4 and 6. Every
value below is written as the arithmetic of its definition:

* P@k = rel@k / k, R@k = rel@k / R, F1@k = 2 * P@k * R@k / (P@k + R@k);
* DCG@k = sum over ranks i <= k of (2^rel_i - 1) / log2(i + 1); with binary relevance 2^1 - 1 = 1,
  so FLAGR's exponential gain and trec_eval's linear gain coincide. IDCG@k is the DCG of the
  ideal ranking (the 4 relevant documents first), nDCG@k = DCG@k / IDCG@k;
* AP@k, standard (trec_eval ``map_cut``): the sum of P@i over relevant ranks i <= k, divided by R;
* AP@k, FLAGR (``AP(norm='retrieved')@k``): the same sum divided by rel@k, the relevant documents
  retrieved up to k.

FLAGR's published table has arithmetic slips; the values here are the correct ones. For example
its F1@3 reads 0.62, but 2 * (2/3) * (2/4) / ((2/3) + (2/4)) = (2/3) / (7/6) = 4/7 = 0.571.
"""

from __future__ import annotations

import math

import pytest

from retrieval_eval import Document, Judgment, RetrievalEvaluator
from retrieval_eval.measures import AP, Measure, parse

L = math.log2
R_TOTAL = 4
RELEVANT_RANKS = (1, 3, 4, 6)

#: k -> (P@k, R@k, F1@k, DCG@k, IDCG@k, AP@k divided by R, AP@k divided by rel@k (FLAGR))
TABLE = {
    1: (1 / 1, 1 / 4, 2 * (1 / 1) * (1 / 4) / ((1 / 1) + (1 / 4)),
        1 / L(2),
        1 / L(2),
        (1 / 1) / 4, (1 / 1) / 1),
    2: (1 / 2, 1 / 4, 2 * (1 / 2) * (1 / 4) / ((1 / 2) + (1 / 4)),
        1 / L(2),
        1 / L(2) + 1 / L(3),
        (1 / 1) / 4, (1 / 1) / 1),
    3: (2 / 3, 2 / 4, 2 * (2 / 3) * (2 / 4) / ((2 / 3) + (2 / 4)),
        1 / L(2) + 1 / L(4),
        1 / L(2) + 1 / L(3) + 1 / L(4),
        (1 / 1 + 2 / 3) / 4, (1 / 1 + 2 / 3) / 2),
    4: (3 / 4, 3 / 4, 2 * (3 / 4) * (3 / 4) / ((3 / 4) + (3 / 4)),
        1 / L(2) + 1 / L(4) + 1 / L(5),
        1 / L(2) + 1 / L(3) + 1 / L(4) + 1 / L(5),
        (1 / 1 + 2 / 3 + 3 / 4) / 4, (1 / 1 + 2 / 3 + 3 / 4) / 3),
    5: (3 / 5, 3 / 4, 2 * (3 / 5) * (3 / 4) / ((3 / 5) + (3 / 4)),
        1 / L(2) + 1 / L(4) + 1 / L(5),
        1 / L(2) + 1 / L(3) + 1 / L(4) + 1 / L(5),
        (1 / 1 + 2 / 3 + 3 / 4) / 4, (1 / 1 + 2 / 3 + 3 / 4) / 3),
    6: (4 / 6, 4 / 4, 2 * (4 / 6) * (4 / 4) / ((4 / 6) + (4 / 4)),
        1 / L(2) + 1 / L(4) + 1 / L(5) + 1 / L(7),
        1 / L(2) + 1 / L(3) + 1 / L(4) + 1 / L(5),
        (1 / 1 + 2 / 3 + 3 / 4 + 4 / 6) / 4, (1 / 1 + 2 / 3 + 3 / 4 + 4 / 6) / 4),
    7: (4 / 7, 4 / 4, 2 * (4 / 7) * (4 / 4) / ((4 / 7) + (4 / 4)),
        1 / L(2) + 1 / L(4) + 1 / L(5) + 1 / L(7),
        1 / L(2) + 1 / L(3) + 1 / L(4) + 1 / L(5),
        (1 / 1 + 2 / 3 + 3 / 4 + 4 / 6) / 4, (1 / 1 + 2 / 3 + 3 / 4 + 4 / 6) / 4),
    8: (4 / 8, 4 / 4, 2 * (4 / 8) * (4 / 4) / ((4 / 8) + (4 / 4)),
        1 / L(2) + 1 / L(4) + 1 / L(5) + 1 / L(7),
        1 / L(2) + 1 / L(3) + 1 / L(4) + 1 / L(5),
        (1 / 1 + 2 / 3 + 3 / 4 + 4 / 6) / 4, (1 / 1 + 2 / 3 + 3 / 4 + 4 / 6) / 4),
}
KS = sorted(TABLE)
TOL = 1e-12


@pytest.fixture(scope="module")
def ev() -> RetrievalEvaluator:
    docs = [f"d{i}" for i in range(1, 9)]
    judgments = [Judgment(d, 1 if rank in RELEVANT_RANKS else 0) for rank, d in enumerate(docs, start=1)]
    return RetrievalEvaluator("flagr", [Document(d) for d in docs], judgments)


def test_the_example(ev: RetrievalEvaluator) -> None:
    assert [d.rank for d in ev.relevant_retrieved_documents()] == list(RELEVANT_RANKS)
    assert ev.score("NumRel") == R_TOTAL and ev.score("NumRet") == 8


def test_published_slip_f1_at_3() -> None:
    """The table's F1@3 = 0.62 is an arithmetic slip: the harmonic mean of 2/3 and 2/4 is 4/7."""
    assert TABLE[3][2] == pytest.approx(4 / 7, abs=TOL)
    assert round(TABLE[3][2], 3) == 0.571


@pytest.mark.parametrize("k", KS)
def test_precision_recall(ev: RetrievalEvaluator, k: int) -> None:
    precision, recall = TABLE[k][:2]
    assert ev.score(f"P@{k}") == pytest.approx(precision, abs=TOL)
    assert ev.precision(k) == pytest.approx(precision, abs=TOL)
    assert ev.score(f"R@{k}") == pytest.approx(recall, abs=TOL)
    assert ev.recall(k) == pytest.approx(recall, abs=TOL)


@pytest.mark.parametrize("k", KS)
def test_f1(ev: RetrievalEvaluator, k: int) -> None:
    assert ev.score(f"F1@{k}") == pytest.approx(TABLE[k][2], abs=TOL)


@pytest.mark.parametrize("k", KS)
def test_dcg_idcg(ev: RetrievalEvaluator, k: int) -> None:
    dcg, idcg = TABLE[k][3:5]
    for gain in ("exp-log2", "log2"):  # FLAGR's exponential gain, and trec_eval's (equal when binary)
        assert ev.score(f"DCG(dcg={gain!r})@{k}") == pytest.approx(dcg, abs=TOL)
        assert ev.score(f"IDCG(dcg={gain!r})@{k}") == pytest.approx(idcg, abs=TOL)


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("gain", ["log2", "exp-log2"])
def test_ndcg(ev: RetrievalEvaluator, k: int, gain: str) -> None:
    """Binary relevance: linear (trec_eval) and exponential (FLAGR) gains give the same nDCG@k."""
    dcg, idcg = TABLE[k][3:5]
    assert ev.score(f"nDCG(dcg={gain!r})@{k}") == pytest.approx(dcg / idcg, abs=TOL)
    assert ev.normalized_discounted_cumulative_gain(k, dcg=gain) == pytest.approx(dcg / idcg, abs=TOL)


@pytest.mark.parametrize("k", KS)
def test_ap_divided_by_r(ev: RetrievalEvaluator, k: int) -> None:
    """Our standard AP@k (trec_eval map_cut_k) divides by R = 4."""
    assert ev.score(f"AP@{k}") == pytest.approx(TABLE[k][5], abs=TOL)


def flagr_ap() -> Measure:
    """AP with FLAGR's normalisation: ``AP(norm='retrieved')``."""
    return AP(norm="retrieved")


@pytest.mark.parametrize("k", KS)
def test_ap_divided_by_relevant_retrieved(ev: RetrievalEvaluator, k: int) -> None:
    """FLAGR's AP@k divides by rel@k (1, 1, 2, 3, 3, 4, 4, 4), not by R."""
    measure = flagr_ap()
    assert ev.score(parse(str(measure @ k))) == pytest.approx(TABLE[k][6], abs=TOL)
