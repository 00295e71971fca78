"""Order-agreement measures: Compat (rank-biased overlap with an ideal ranking) and Accuracy (relevant
documents ranked above non-relevant ones), as ir_measures' ``compat`` and ``accuracy`` providers
compute them.

Both read only the ranking order, never the scores. We rank by score descending, ties by doc_id
descending (trec_eval); each kernel's docstring says how its provider breaks ties and what else it
does differently. The kernels' contract and notation are in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

import numpy as np

from ..engine.batch import Hits, RankedBatch
from ..engine.segments import safe_div, segment_sum
from ..model import FloatArray, GradeArray, IntArray
from .params import CUTOFF, REL, Param
from .registry import measure

# ------------------------------------------------------------------------------- Compat


def _ideal_positions(b: RankedBatch, hits: Hits, level: GradeArray) -> IntArray:
    """The 1-based position of each retrieved hit in its query's ideal ranking.

    The ideal ranking holds every judgment > 0 by relevance descending; within a level, the
    retrieved documents in rank order, then the others. So a hit of level v sits after every
    judgment of a higher level and after the retrieved documents of level v ranked above it. Both
    counts come from one sort of the judgments and the hits together, by query, level descending,
    hits first, rank.
    """
    judged = b.judged_relevance > 0  # (>= 1 for integer grades; a float grade 0.5 is in I too)
    n_hits = len(level)
    query = np.concatenate((hits.query, b.judged_segment[judged]))
    value = np.concatenate((level, b.judged_relevance[judged]))
    is_judgment = np.concatenate((np.zeros(n_hits, dtype=bool), np.ones(int(judged.sum()), dtype=bool)))
    rank = np.concatenate((hits.rank, np.zeros(int(judged.sum()), dtype=np.int64)))
    order = np.lexsort((rank, is_judgment, -value, query))
    query, value, is_judgment = query[order], value[order], is_judgment[order]
    index = np.arange(len(order))
    new_query = np.concatenate(([True], query[1:] != query[:-1]))
    new_level = new_query | np.concatenate(([True], value[1:] != value[:-1]))
    query_start = np.maximum.accumulate(np.where(new_query, index, 0))
    level_start = np.maximum.accumulate(np.where(new_level, index, 0))
    judgments_before = np.cumsum(is_judgment) - is_judgment
    hits_before = np.cumsum(~is_judgment) - ~is_judgment
    position = (judgments_before - judgments_before[query_start]) + (hits_before - hits_before[level_start]) + 1
    out = np.empty(n_hits, dtype=np.int64)
    out[order[~is_judgment]] = position[~is_judgment]
    return out


@measure(
    "Compat",
    params={
        "p": Param(float, 0.95, "persistence of the rank-biased overlap", minimum=0.0, maximum=1.0),
        "normalize": Param(bool, True, "divide by the ideal ranking's overlap with itself (finite ideal rankings)"),
    },
)
def compatibility(b: RankedBatch, *, p: float, normalize: bool) -> FloatArray:
    """Compatibility: the rank-biased overlap (RBO) of the ranking with an ideal ranking of the judgments.

    The ideal ranking I holds every document judged > 0 (>= 1 for integer grades), by relevance descending. With
    D = max(n, |I|) and o_d the number of documents in both the top d of the ranking and the top d
    of I, RBO = sum over d = 1..D of p^(d-1) * o_d / d, divided by sum over d = 1..D of
    p^(d-1). With ``normalize`` (the default) the value is divided by the RBO of I with itself over
    the same D, so that I itself scores 1.

    Ties within the ideal ranking: documents of one relevance level follow the ranking (retrieved
    ones in rank order, then the rest), the order most compatible with it. The provider aims at the
    same with a sort by run score, an unretrieved document counting as score 0.0, then by qrels
    order: the same order whenever every score is > 0 and tied documents appear in the qrels in
    rank order. With scores <= 0 its ideal ranking puts unretrieved documents above retrieved ones
    of the same level; ours does not.

    Ties in the ranking: the provider breaks score ties by doc_id ascending; we, by doc_id
    descending (trec_eval).

    Edge cases: the relevance threshold is fixed: a judgment > 0 (1 for integer grades); negative
    judgments are not in I; no judgment > 0 gives 0 (normalisation is skipped, as in the provider); an empty ranking
    gives 0 (the provider divides by zero when I is empty too). A qrels query missing from the run
    scores 0 (the provider's default).

    Reference: Clarke, Vtyurina & Smucker, "Assessing top-k preferences", TOIS 2021; Webber, Moffat &
    Zobel, "A similarity measure for indefinite rankings", TOIS 2010 (RBO).
    """
    n = b.n_queries
    hits = b.hits_above(0)  # the retrieved documents of I, in rank order
    ideal_size = b.judged_count(b.judged_relevance > 0) if b.float_grades else b.n_relevant(1)
    depth = np.maximum(b.num_ret, ideal_size)
    # o_d counts a document of both lists from d = max(its rank, its ideal position) on, so each one
    # adds sum over d = m..D of p^(d-1) / d: a difference of the running sums F below.
    meet = np.maximum(hits.rank, _ideal_positions(b, hits, b.labels[hits.row]))
    size = int(depth.max(initial=0))
    weight = np.power(p, np.arange(size, dtype=np.float64))  # p^(d-1), d = 1..size
    overlap_sum = np.concatenate(([0.0], np.cumsum(weight / np.arange(1, size + 1))))  # F[d]
    weight_sum = np.concatenate(([0.0], np.cumsum(weight)))  # N[d]
    seg_depth = depth[hits.query]
    found = segment_sum(overlap_sum[seg_depth] - overlap_sum[meet - 1], hits.query, n)
    if not normalize:
        return safe_div(found, weight_sum[depth])
    # I with itself: o_d = min(d, |I|).
    best = weight_sum[ideal_size] + ideal_size * (overlap_sum[depth] - overlap_sum[ideal_size])
    return safe_div(found, best)


# ------------------------------------------------------------------------------- Accuracy


def _pairs(b: RankedBatch, k: int | None, rel: int) -> tuple[FloatArray, IntArray]:
    """Per query, within the top k: (relevant-above-non-relevant pairs misordered, all such pairs)."""

    def compute() -> tuple[FloatArray, IntArray]:
        hits = b.hits(rel)
        read = b.num_ret
        if k is not None:
            hits = hits.where(hits.rank <= k)
            read = np.minimum(read, k)
        relevant = hits.count
        nonrelevant = read - relevant
        # The non-relevant documents above the m-th relevant one at rank r_m: r_m - m.
        misordered = segment_sum(hits.rank - hits.position, hits.query, b.n_queries)
        return misordered, relevant * nonrelevant

    return b._cached(("accuracy-pairs", k, rel), compute)


def _accuracy_weight(b: RankedBatch, *, k: int | None, rel: int) -> FloatArray:
    """Each query's weight in the Accuracy summary: 1 with a pair to order in the top k, else 0."""
    _, pairs = _pairs(b, k, rel)
    return (pairs > 0).astype(np.float64)


@measure("Accuracy", params={"k": CUTOFF, "rel": REL}, cutoff="k", aggregate="weighted", weight=_accuracy_weight)
def accuracy(b: RankedBatch, *, k: int | None, rel: int) -> FloatArray:
    """Accuracy: the share of (relevant, non-relevant) pairs in the top k where the relevant one ranks higher.

    With nrel relevant (judged >= rel) and N other documents in ranks 1..k (unjudged ones count as
    non-relevant), Accuracy = 1 - (sum over relevant documents of the non-relevant ones above it) /
    (nrel * N). Only retrieved documents count: this is a diagnostic of the ranking's order, not of
    its recall. Without a cutoff, the whole ranking.

    Summary: the mean over the queries that have a pair to order (nrel >= 1 and N >= 1); the others
    score 0 and are left out (``SetEvaluator.left_out``), as GAUC does. The provider reports no
    value for a query without a relevant document in the top k (so its mean leaves it out too) and
    divides by zero when the top k has no non-relevant document.

    Ties: the provider keeps score ties in the run's input order (a stable sort); we break them by
    doc_id descending (trec_eval). With ``rel=0`` the provider counts an unjudged document as
    relevant (it reads a missing judgment as 0); we count judged documents only.

    Reference: ir_measures' ``accuracy`` provider (its definition); a rank-based form of a query's AUC
    (Hanley & McNeil, Radiology 1982) restricted to the top k.
    """
    misordered, pairs = _pairs(b, k, rel)
    return np.where(pairs > 0, 1.0 - safe_div(misordered, pairs), 0.0)
