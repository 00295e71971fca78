"""Average precision and its relatives: AP (with cutoffs), GMAP, infAP and YAAP.

The kernels' contract and notation (R, NR, n, nrr, rel@k, r_m) are in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

import numpy as np

from ..engine.batch import UNJUDGED, RankedBatch
from ..engine.segments import safe_div, segment_sum
from ..model import FloatArray
from .params import CUTOFF, REL, Param, TrecName
from .registry import measure
from .trec_table import (
    P_CUTOFFS,
)


def _average_precision(b: RankedBatch, rel: int, k: int | None, norm: str = "R") -> FloatArray:
    if k is None and norm == "R":  # AP and GMAP (trec_eval's map and gm_map): computed once, copied for each
        same: FloatArray = b._cached(("AP", rel), lambda: _ap_sums(b, rel, k, norm))
        return same.copy()
    return _ap_sums(b, rel, k, norm)


def _ap_sums(b: RankedBatch, rel: int, k: int | None, norm: str) -> FloatArray:
    hits = b.hits(rel)
    if k is not None:
        hits = hits.where(hits.rank <= k)
    # The m-th relevant document is the hit at position m: precision m / r_m, summed in rank order.
    total = segment_sum(hits.position / hits.rank, hits.query, b.n_queries)
    if norm == "retrieved":  # FLAGR: divide by the relevant documents found within the cutoff
        return safe_div(total, hits.count)
    if norm == "min_rk" and k is not None:  # Spark: a cutoff k caps the relevant documents that can be found
        return safe_div(total, np.minimum(b.n_relevant(rel), k))
    return safe_div(total, b.n_relevant(rel))


@measure(
    "AP", judged_only=True,
    params={
        "k": CUTOFF, "rel": REL,
        "norm": Param(str, "R", "denominator: 'R' (trec_eval), 'retrieved' (relevant found within k, FLAGR) "
                      "or 'min_rk' (min(R, k), Spark)", choices=("R", "retrieved", "min_rk")),
    },
    cutoff="k", aliases=("MAP",),
    trec=(TrecName("map"), TrecName("map_cut", cutoff=True, defaults=P_CUTOFFS)),
)
def average_precision(b: RankedBatch, *, k: int | None, rel: int, norm: str) -> FloatArray:
    r"""Average precision: (1/R) * sum over relevant retrieved documents of m / r_m.

    With a cutoff k (trec_eval ``map_cut_k``) only relevant documents at ranks <= k contribute, and
    the sum is still divided by R. Relevant documents never retrieved contribute 0.
    R = 0 gives 0. ``AP(norm='retrieved')@k`` divides instead by the number of relevant documents
    within the top k (the FLAGR variant); none found gives 0. ``AP(norm='min_rk')@k`` divides by
    min(R, k), the most relevant documents a top k can hold, as Spark's
    ``RankingMetrics.meanAveragePrecisionAt`` and Microsoft Recommenders' ``map_at_k`` do; without a
    cutoff it is AP.

    Reference: Buckley & Voorhees, "Evaluating evaluation measure stability", SIGIR 2000.
    """
    return _average_precision(b, rel, k, norm)


@measure("GMAP", params={"rel": REL}, trec=(TrecName("gm_map"),), aggregate="gmean", summary_only=True)
def geometric_map(b: RankedBatch, *, rel: int) -> FloatArray:
    """Geometric mean of AP over queries: exp(mean(log(max(AP, 1e-5)))).

    Per query this is AP; only the summary differs. The 1e-5 floor (trec_eval's MIN_GEO_MEAN) keeps
    a query with AP = 0 from making the whole mean 0.

    Reference: Robertson, "On GMAP", CIKM 2006.
    """
    return _average_precision(b, rel, None)


#: infAP's smoothing constant (trec_eval INFAP_EPSILON).
INFAP_EPSILON = 0.00001


@measure("infAP", params={"rel": REL}, trec=(TrecName("infAP"),))
def inferred_ap(b: RankedBatch, *, rel: int) -> FloatArray:
    """Inferred average precision: AP estimated from incomplete judgments (negative qrels = pooled, unjudged).

    Positions j are 0-based over the whole ranking (documents outside the pool take up positions
    but are never counted). At the relevant document at position j, with s relevant documents at
    positions <= j, and nr judged non-relevant and u pooled-unjudged ones above it, add
    1 if j = 0, else 1/(j+1) + (j/(j+1)) * ((s-1+nr+u)/j) * ((s-1+eps)/(s-1+nr+2*eps)), eps = 1e-5.
    infAP = sum / R.

    Edge cases: R = 0 gives 0; no relevant retrieved gives 0. Because of eps, infAP differs from AP
    in the last digits even with complete judgments.

    Reference: Yilmaz & Aslam, "Estimating average precision with incomplete and imperfect
    judgments", CIKM 2006; trec_eval ``infAP``.
    """
    hits = b.hits(rel)
    before = hits.position - 1.0  # s - 1
    nonrel = b.nonrelevant_above(rel)
    unjudged = b.hits_at(np.flatnonzero(b.labels == UNJUDGED)).above(hits.row, hits.query)
    j = (hits.rank - 1).astype(np.float64)
    first = j == 0
    jj = np.where(first, 1.0, j)  # any non-zero value: the j = 0 rows are replaced below
    term = 1.0 / (jj + 1.0) + (jj / (jj + 1.0)) * ((before + nonrel + unjudged) / jj) * (
        (before + INFAP_EPSILON) / ((before + nonrel) + 2 * INFAP_EPSILON)
    )
    term = np.where(first, 1.0, term)
    return safe_div(segment_sum(term, hits.query, b.n_queries), b.n_relevant(rel))


@measure("YAAP", params={"rel": REL}, trec=(TrecName("yaap"),))
def yaap(b: RankedBatch, *, rel: int) -> FloatArray:
    """Yet another AP: log((1 + S) / (1 + R - S)), where S = sum over relevant retrieved of m / r_m.

    S is R times AP, so YAAP grows with AP but is unbounded at both ends and better suited to
    averaging. R = 0 gives log(1) = 0. An empty ranking with R > 0 gives log(1 / (1 + R)) < 0,
    as trec_eval gives for a query the run lacks (it is not reset to 0).

    Reference: Robertson, "On smoothing average precision", ECIR 2012; trec_eval ``yaap``.
    """
    hits = b.hits(rel)
    s = segment_sum(hits.position / hits.rank, hits.query, b.n_queries)
    return np.log((1.0 + s) / (1.0 + b.n_relevant(rel) - s))
