"""Intent-aware (diversity) measures of the TREC Web track, exact to ndeval 4.5 (``pyndeval``).

Diversity qrels are 4-column qrels whose second column is a subtopic (intent) id: a document is
judged once per subtopic. Read them with ``read_qrels_columns(..., with_subtopics=True)`` or
``SetEvaluator.from_trec(..., subtopics=True)``; the command line does so by itself when a measure of
this module is asked for. The kernels read ``batch.subtopics``.

ndeval's model, which every kernel here follows:

* Judgments are binary per subtopic: a (subtopic, document) judgment is relevant when its value is
  >= ``rel`` (default 1; ndeval's own command line uses ``value > 0``).
* S, a query's subtopics, counts only the subtopics with at least one relevant document. A query
  with S = 0 scores 0 in every measure (ndeval returns NaN for its nNRBP; 0 here).
* A document's gain at rank r is the sum, over the subtopics it is relevant to, of (1 - alpha)^c,
  where c is the number of documents ranked above it that are relevant to that subtopic.
* The discount is 1 / log2(1 + r) for DCG, 1 / r for ERR and beta^(r-1) for NRBP.
* The "collection-dependent" (n-) forms divide by the same sum over an ideal ranking, built greedily:
  at each rank, the judged document with the largest gain given the ranks above; ties go to the
  largest document id (byte order), as in ndeval.
* The collection-independent forms (alpha_DCG, ERR_IA) divide by the "ideal ideal" value, that of a
  ranking whose every document covers all S subtopics: S * sum over ranks i <= k of (1 - alpha)^(i-1)
  times the discount of rank i. ndeval leaves the value at k = 1 undivided; so do we.

Where we differ from pyndeval, we follow this library's conventions: the run is ranked by score, ties
by document id *descending* (trec_eval's order; pyndeval breaks ties by ascending id); cutoffs beyond
ndeval's depth of 20 are allowed; queries follow trec_eval's rules (``-c`` scores judged queries
missing from the run as empty rankings). Notation as in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

import numpy as np
from attrs import frozen

from ..engine.batch import RankedBatch
from ..engine.segments import safe_div, segment_count, segment_ids, segment_sum
from ..model import BoolArray, FloatArray, IntArray
from .params import REL, Param
from .registry import measure

#: Redundancy intolerance: each further document on a subtopic gains (1 - alpha) times the previous one.
ALPHA = Param(float, 0.5, "redundancy intolerance: a subtopic's gain shrinks by (1 - alpha) each time it "
              "is covered again", minimum=0.0, maximum=1.0)
#: The cut-off of the @k diversity measures. Their collection-independent forms sum a discount over
#: every rank up to k, so k is bounded (ndeval itself stops at 20).
DIVERSITY_CUTOFF = Param(int, None, "rank cutoff k: only the top k ranks count", minimum=1, maximum=1_000_000)
#: NRBP's patience: the probability of looking at the next rank.
BETA = Param(float, 0.5, "patience: the probability of looking at the next rank", minimum=0.0, maximum=1.0)


@frozen(eq=False)
class Coverage:
    """A batch's relevant (subtopic, document) judgments, and those among its rankings.

    *Pairs* are the relevant judgments whose document is ranked, sorted by (query, subtopic, rank);
    ``seen`` is the number of documents ranked above the pair's on the same subtopic. *Judged* rows
    are every relevant judgment, sorted by query, document id, subtopic (for the ideal rankings).
    """

    n_subtopics: IntArray  #: S: per query, subtopics with a relevant judgment
    pair_query: IntArray
    pair_group: IntArray  #: index of the pair's (query, subtopic)
    pair_rank: IntArray
    pair_seen: IntArray
    group_size: IntArray  #: per (query, subtopic): its relevant judgments
    judged_query: IntArray
    judged_doc: IntArray  #: index of the judgment's (query, document), increasing
    judged_group: IntArray


def coverage(b: RankedBatch, rel: int) -> Coverage:
    """The batch's :class:`Coverage` at threshold ``rel``, computed once per batch and threshold."""
    return b._cached(("coverage", rel), lambda: _coverage(b, rel))


def _coverage(b: RankedBatch, rel: int) -> Coverage:
    subtopics = b.subtopics
    assert subtopics is not None  # checked before any kernel runs (measure(..., subtopics=True))
    n = b.n_queries
    relevant = subtopics.relevance >= max(rel, 0)
    query = segment_ids(subtopics.offsets)[relevant]
    doc_ids, subtopic = subtopics.doc_ids[relevant], subtopics.subtopic[relevant]
    # (query, subtopic) groups; S counts the groups of each query
    width = int(subtopic.max()) + 1 if len(subtopic) else 1
    group_key, group = np.unique(query * width + subtopic, return_inverse=True)
    group = group.ravel()
    n_subtopics = np.bincount(group_key // width, minlength=n).astype(np.int64)
    # (query, document) of each judgment: the rows are sorted by query then document id
    new_doc = np.ones(len(query), dtype=bool)
    new_doc[1:] = (query[1:] != query[:-1]) | (doc_ids[1:] != doc_ids[:-1])
    judged_doc = np.cumsum(new_doc) - 1

    # The judgments whose document is ranked: a merge of the two on (query, document id).
    hits = b.hits(0)  # a relevant document is judged >= 0 in the batch (its largest value)
    vocab, codes = np.unique(np.concatenate((b.doc_ids[hits.row], doc_ids)), return_inverse=True)
    codes = codes.ravel()
    hit_key = hits.query * len(vocab) + codes[: len(hits.row)]
    judged_key = query * len(vocab) + codes[len(hits.row):]
    by_key = np.argsort(hit_key)
    pos = np.minimum(np.searchsorted(hit_key[by_key], judged_key), max(len(hit_key) - 1, 0))
    found = np.flatnonzero(hit_key[by_key][pos] == judged_key) if len(hit_key) else np.zeros(0, np.int64)
    pair_rank = hits.rank[by_key[pos[found]]]
    pair_group = group[found]
    order = np.lexsort((pair_rank, pair_group))
    pair_rank, pair_group = pair_rank[order], pair_group[order]
    group_start = np.searchsorted(pair_group, pair_group)  # first pair of each pair's group
    return Coverage(
        n_subtopics=n_subtopics, pair_query=query[found][order], pair_group=pair_group, pair_rank=pair_rank,
        pair_seen=np.arange(len(pair_group)) - group_start, group_size=np.bincount(group),
        judged_query=query, judged_doc=judged_doc, judged_group=group,
    )


def _ideal(b: RankedBatch, rel: int, alpha: float) -> tuple[IntArray, IntArray, FloatArray]:
    """The ideal ranking's positive gains: (query, rank, gain) of each, computed once per batch."""
    return b._cached(("ideal-intents", rel, alpha), lambda: _greedy_ideal(coverage(b, rel), alpha))


def _greedy_ideal(c: Coverage, alpha: float) -> tuple[IntArray, IntArray, FloatArray]:
    """ndeval's greedy ideal ranking: rank by rank, each query takes its judged document of largest
    gain given the documents already placed (ties: the largest document id, the last in byte order).

    The loop is over ranks, each step vectorised over all queries; a document leaves the arrays once
    placed, and a query once nothing it has left gains anything, so the work shrinks as it goes.
    """
    decay = 1.0 - alpha
    doc_query = c.judged_query[np.flatnonzero(np.diff(c.judged_doc, prepend=-1))]  # one per document
    row_doc, row_group = c.judged_doc, c.judged_group
    seen = np.zeros(len(c.group_size), dtype=np.int64)
    out_query, out_rank, out_gain = [], [], []
    rank = 1
    while len(doc_query):
        gain = np.bincount(row_doc, weights=decay ** seen[row_group], minlength=len(doc_query))
        first_of_query = np.concatenate(([True], doc_query[1:] != doc_query[:-1]))
        starts = np.flatnonzero(first_of_query)
        segment = np.cumsum(first_of_query) - 1
        best = np.maximum.reduceat(gain, starts)
        # the last document (largest id) among those with the best gain of its query
        pick = np.maximum.reduceat(np.where(gain == best[segment], np.arange(len(doc_query)), -1), starts)
        active = best > 0  # a query whose documents all gain 0 now never gains again: done
        pick = pick[active]
        out_query.append(doc_query[pick])
        out_rank.append(np.full(len(pick), rank))
        out_gain.append(best[active])
        placed = np.zeros(len(doc_query), dtype=bool)
        placed[pick] = True
        seen[row_group[placed[row_doc]]] += 1  # one document per query: no group is counted twice
        keep = ~placed & active[segment]
        renumber = np.cumsum(keep) - 1
        kept_rows = keep[row_doc]
        row_doc, row_group = renumber[row_doc[kept_rows]], row_group[kept_rows]
        doc_query = doc_query[keep]
        rank += 1
    if not out_query:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(out_query), np.concatenate(out_rank), np.concatenate(out_gain)


def _dcg_discount(rank: IntArray) -> FloatArray:
    """ndeval's DCG discount of 1-based ranks: log(2) / log(rank + 1)."""
    return np.asarray(np.log(2.0) / np.log(rank + 1.0), dtype=np.float64)


def _err_discount(rank: IntArray) -> FloatArray:
    return np.asarray(1.0 / rank, dtype=np.float64)


def _run_sum(b: RankedBatch, c: Coverage, alpha: float, k: int | None, discount: FloatArray) -> FloatArray:
    """Per query: sum over the ranked pairs in the top k of (1 - alpha)^seen * discount[rank - 1]."""
    top = c.pair_rank <= k if k is not None else np.ones(len(c.pair_rank), dtype=bool)
    gain = (1.0 - alpha) ** c.pair_seen[top] * discount[c.pair_rank[top] - 1]
    return segment_sum(gain, c.pair_query[top], b.n_queries)


def _ideal_sum(b: RankedBatch, rel: int, alpha: float, k: int | None, discount: FloatArray) -> FloatArray:
    query, rank, gain = _ideal(b, rel, alpha)
    top = rank <= k if k is not None else np.ones(len(rank), dtype=bool)
    return segment_sum(gain[top] * discount[rank[top] - 1], query[top], b.n_queries)


def _discounts(k: int, kind: str) -> FloatArray:
    """The ``kind`` ('dcg' or 'err') discount of ranks 1..k: no sum at cutoff k reads a deeper rank."""
    ranks = np.arange(1, k + 1)
    return _dcg_discount(ranks) if kind == "dcg" else _err_discount(ranks)


def _ideal_ideal(n_subtopics: IntArray, alpha: float, discount: FloatArray) -> FloatArray:
    """Per query, ndeval's "ideal ideal" value at k = len(discount): every rank covers all S subtopics."""
    per_subtopic = float(np.sum((1.0 - alpha) ** np.arange(len(discount)) * discount))
    return np.asarray(n_subtopics * per_subtopic, dtype=np.float64)


def _independent(b: RankedBatch, rel: int, alpha: float, k: int, kind: str) -> FloatArray:
    """alpha_DCG / ERR_IA: the run's sum over the ideal-ideal one (left undivided at k = 1, as ndeval)."""
    c = coverage(b, rel)
    discount = _discounts(k, kind)
    raw = _run_sum(b, c, alpha, k, discount)
    if k == 1:
        return raw
    return safe_div(raw, _ideal_ideal(c.n_subtopics, alpha, discount))


def _dependent(b: RankedBatch, rel: int, alpha: float, k: int, kind: str) -> FloatArray:
    """alpha_nDCG / nERR_IA: the run's sum over the greedy ideal ranking's."""
    c = coverage(b, rel)
    discount = _discounts(k, kind)
    return safe_div(_run_sum(b, c, alpha, k, discount), _ideal_sum(b, rel, alpha, k, discount))


@measure("alpha_DCG", params={"k": DIVERSITY_CUTOFF, "rel": REL, "alpha": ALPHA}, cutoff="k", cutoff_required=True,
         aliases=("α_DCG",), judged_only=True, subtopics=True)
def alpha_dcg(b: RankedBatch, *, k: int, rel: int, alpha: float) -> FloatArray:
    """alpha-DCG at k, over the ideal-ideal value: novelty-discounted gain of the top k, 1/log2(1+r) discount.

    alpha-DCG@k = sum over ranks r <= k of G_r / log2(1 + r), where G_r sums (1 - alpha)^c over the
    subtopics the document at r is relevant to (c: documents above r already relevant to that
    subtopic). As ndeval, the value is divided by the "ideal ideal" S * sum_{i<=k} (1 - alpha)^(i-1) /
    log2(1 + i) for k >= 2 and left undivided at k = 1 (where it can exceed 1). S = 0 gives 0.

    Reference: Clarke et al., "Novelty and diversity in information retrieval evaluation", SIGIR 2008.
    """
    return _independent(b, rel, alpha, k, "dcg")


@measure("alpha_nDCG", params={"k": DIVERSITY_CUTOFF, "rel": REL, "alpha": ALPHA}, cutoff="k", cutoff_required=True,
         aliases=("α_nDCG",), judged_only=True, subtopics=True)
def alpha_ndcg(b: RankedBatch, *, k: int, rel: int, alpha: float) -> FloatArray:
    """alpha-nDCG at k: alpha-DCG@k of the run over that of the greedy ideal ranking.

    The ideal ranking is ndeval's greedy one (finding the true ideal is NP-hard): rank by rank, the
    judged document with the largest gain given those above it, ties to the largest document id.
    0 when the run gains nothing in its top k or S = 0.

    Reference: Clarke et al., "Novelty and diversity in information retrieval evaluation", SIGIR 2008.
    """
    return _dependent(b, rel, alpha, k, "dcg")


@measure("ERR_IA", params={"k": DIVERSITY_CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True, judged_only=True,
         subtopics=True)
def err_ia(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Intent-aware ERR at k, as ndeval computes it: 1/r-discounted novelty gain over the ideal-ideal value.

    ERR-IA@k = sum over ranks r <= k of G_r / r, with G_r as in alpha_DCG at alpha = 0.5 (ndeval's
    ERR-IA takes no alpha), divided by S * sum_{i<=k} 0.5^(i-1) / i for k >= 2 and undivided at k = 1.
    This is ERR-IA with binary grades, each subtopic equally likely, up to a constant. S = 0 gives 0.

    Reference: Chapelle et al., "Expected reciprocal rank for graded relevance", CIKM 2009; Agrawal et
    al., "Diversifying search results", WSDM 2009; ndeval 4.5.
    """
    return _independent(b, rel, 0.5, k, "err")


@measure("nERR_IA", params={"k": DIVERSITY_CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True, judged_only=True,
         subtopics=True)
def nerr_ia(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Intent-aware ERR at k over that of the greedy ideal ranking (ndeval's nERR-IA).

    As ERR_IA's sum, divided by the same sum over alpha_nDCG's greedy ideal ranking (alpha = 0.5).
    0 when the run gains nothing in its top k or S = 0.

    Reference: Chapelle et al., "Expected reciprocal rank for graded relevance", CIKM 2009; ndeval 4.5.
    """
    return _dependent(b, rel, 0.5, k, "err")


def _nrbp_sum(b: RankedBatch, rel: int, alpha: float, beta: float, ideal: bool) -> FloatArray:
    """beta^(r-1)-discounted novelty gains over a whole ranking: the run's, or the greedy ideal's."""
    c = coverage(b, rel)
    ranks = _ideal(b, rel, alpha)[1] if ideal else c.pair_rank  # only the ideal side needs the greedy
    discount = beta ** np.arange(max(int(ranks.max(initial=0)), 1), dtype=np.float64)
    return _ideal_sum(b, rel, alpha, None, discount) if ideal else _run_sum(b, c, alpha, None, discount)


@measure("NRBP", params={"rel": REL, "alpha": ALPHA, "beta": BETA}, subtopics=True)
def nrbp(b: RankedBatch, *, rel: int, alpha: float, beta: float) -> FloatArray:
    """Novelty- and rank-biased precision: (1 - (1 - alpha) * beta) / S * sum over ranks r of G_r * beta^(r-1).

    G_r is alpha_DCG's novelty gain. The sum runs over the whole ranking (no cutoff). The factor
    scales a ranking whose every document covers every subtopic to 1. S = 0 gives 0.

    Reference: Clarke, Kolla & Vechtomova, "An effectiveness measure for ambiguous and underspecified
    queries", ICTIR 2009.
    """
    c = coverage(b, rel)
    return safe_div(_nrbp_sum(b, rel, alpha, beta, ideal=False) * (1.0 - (1.0 - alpha) * beta), c.n_subtopics)


@measure("nNRBP", params={"rel": REL, "alpha": ALPHA, "beta": BETA}, subtopics=True)
def nnrbp(b: RankedBatch, *, rel: int, alpha: float, beta: float) -> FloatArray:
    """NRBP over the NRBP of the greedy ideal ranking.

    The ideal ranking is alpha_nDCG's. S = 0 gives 0 (ndeval divides 0 by 0 there and reports NaN).

    Reference: Clarke, Kolla & Vechtomova, ICTIR 2009; ndeval 4.5.
    """
    return safe_div(_nrbp_sum(b, rel, alpha, beta, ideal=False), _nrbp_sum(b, rel, alpha, beta, ideal=True))


def _in_top(c: Coverage, k: int) -> BoolArray:
    return np.asarray(c.pair_rank <= k)


@measure("P_IA", params={"k": DIVERSITY_CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True, judged_only=True,
         subtopics=True)
def p_ia(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Intent-aware precision at k: the mean over the S subtopics of each subtopic's precision at k.

    P-IA@k = (relevant (subtopic, document) pairs in the top k) / (k * S). S = 0 gives 0.

    Reference: Agrawal et al., "Diversifying search results", WSDM 2009; ndeval 4.5.
    """
    c = coverage(b, rel)
    return safe_div(segment_count(_in_top(c, k), c.pair_query, b.n_queries), float(k) * c.n_subtopics)


@measure("StRecall", params={"k": DIVERSITY_CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True, subtopics=True)
def subtopic_recall(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Subtopic recall at k: the fraction of the S subtopics with a relevant document in the top k.

    S = 0 gives 0.

    Reference: Zhai, Cohen & Lafferty, "Beyond independent relevance", SIGIR 2003; ndeval 4.5 (strec).
    """
    c = coverage(b, rel)
    first = _in_top(c, k) & (c.pair_seen == 0)
    return safe_div(segment_count(first, c.pair_query, b.n_queries), c.n_subtopics)


@measure("AP_IA", params={"rel": REL}, aliases=("MAP_IA",), judged_only=True, subtopics=True)
def ap_ia(b: RankedBatch, *, rel: int) -> FloatArray:
    """Intent-aware average precision: the mean over the S subtopics of each subtopic's AP.

    A subtopic's AP is sum over its relevant retrieved documents of (its relevant documents up to that
    rank) / rank, divided by its relevant judgments; the whole ranking counts. S = 0 gives 0.

    Reference: Agrawal et al., "Diversifying search results", WSDM 2009; ndeval 4.5 (MAP-IA).
    """
    c = coverage(b, rel)
    precision = (c.pair_seen + 1.0) / c.pair_rank / c.group_size[c.pair_group]
    return safe_div(segment_sum(precision, c.pair_query, b.n_queries), c.n_subtopics)
