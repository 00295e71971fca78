"""Measures over judgment groups (trec_eval ``-R qrels_jg``): map_avgjg, P_avgjg, Rprec_mult_avgjg.

A qrels_jg file is TREC qrels whose second column names a *judgment group*: the set of judgments of
one assessor (or one user). A query may have several groups, and a document may be judged in
several of them, differently. Read such a file with ``read_qrels_columns(..., rel_format="qrels_jg")``
or ``SetEvaluator.from_trec(..., rel_format="qrels_jg")``; the command line does so with
``-R qrels_jg``. The groups reach the kernels as ``batch.subtopics``, the qrels' second column,
in the same rows the diversity measures read (one per judgment, sorted by query, document id and
group code; group codes follow the byte order of the group ids).

trec_eval's model, which every kernel here follows (``form_res_rels_jg.c`` and the ``*_avgjg.c``
measures):

* Each group is a qrels of its own: R_g counts the group's judgments >= ``rel``; a document the
  group does not judge is not relevant for it.
* The measure is computed for each group on the same ranking (after ``-M``), added up over the
  groups in the byte order of their ids, and divided by the query's number of groups (every
  group, including those without a relevant document).
* A query the run lacks scores 0, as in every measure here.

* With ``judged_in_group=True`` (trec_eval ``-J``, which the command line sets with ``-R qrels_jg``),
  each group ranks only the documents it judged (value >= 0), in the run's order: a document's rank
  for a group is its place among them.

Notation as in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

import numpy as np
from attrs import frozen

from ..engine.batch import RankedBatch
from ..engine.segments import safe_div, segment_ids
from ..model import FloatArray, IntArray
from .params import CUTOFF, INT_LIMIT, REL, Param, TrecName
from .registry import measure
from .trec_table import P_CUTOFFS, RPREC_MULTS


@frozen(eq=False)
class GroupHits:
    """A batch's judgment groups at one threshold, and their relevant documents among the rankings.

    Groups are numbered in (query, group id) order. *Hits* are the (group, ranked document) pairs
    where the group judges the document relevant, sorted by (group, rank); ``hit_position`` is the
    hit's 1-based place among its group's hits.
    """

    n_groups: IntArray  #: per query: its judgment groups (trec_eval's num_jgs)
    group_query: IntArray  #: per group: its query
    n_relevant: IntArray  #: per group: R_g, its judgments >= rel
    hit_group: IntArray
    hit_rank: IntArray
    hit_position: IntArray

    def per_query(self, values: FloatArray) -> FloatArray:
        """The mean over each query's groups of ``values`` (one per group), summed in group order.

        trec_eval adds the groups' values into the query's value one after the other from 0, then
        divides by the number of groups; ``bincount`` adds in the same order.
        """
        total = np.bincount(self.group_query, weights=values, minlength=len(self.n_groups))
        return safe_div(total, self.n_groups)

    def relevant_at(self, k: int | IntArray) -> IntArray:
        """rel@k per group: its relevant documents at ranks 1..k (``k`` a number or one per group)."""
        cut = k.take(self.hit_group) if isinstance(k, np.ndarray) else k
        within = self.hit_rank <= cut
        return np.bincount(self.hit_group[within], minlength=len(self.group_query)).astype(np.int64)


#: trec_eval -J for judgment groups: each group ranks only the documents it judged.
JUDGED_IN_GROUP = Param(bool, False, "rank, for each judgment group, only the documents it judged (trec_eval -J)")


def group_hits(b: RankedBatch, rel: int, judged_in_group: bool = False) -> GroupHits:
    """The batch's :class:`GroupHits` at threshold ``rel``, computed once per batch, threshold and ranking."""
    return b._cached(("judgment-groups", rel, judged_in_group), lambda: _group_hits(b, rel, judged_in_group))


def _group_hits(b: RankedBatch, rel: int, judged_in_group: bool) -> GroupHits:
    groups = b.subtopics
    assert groups is not None  # checked before any kernel runs (measure(..., subtopics=True))
    query = segment_ids(groups.offsets)
    # (query, group) pairs, numbered in that order: the codes follow the byte order of the group ids
    width = int(groups.subtopic.max()) + 1 if len(groups.subtopic) else 1
    group_key, group = np.unique(query * width + groups.subtopic, return_inverse=True)
    group = group.ravel()
    group_query = group_key // width
    relevant = groups.relevance >= max(rel, 0)
    n_relevant = np.bincount(group[relevant], minlength=len(group_key)).astype(np.int64)
    # The judgments to place in the rankings: the relevant ones, or with -J every judged one (its rank
    # among them is the group's rank of the document).
    joined = groups.relevance >= 0 if judged_in_group else relevant

    # The rank of each such judgment's document, where ranked: a merge on (query, document id).
    # A document judged >= 0 in some group is judged >= 0 in the batch (it holds each document's
    # largest value), so only the batch's judged rows can match.
    hits = b.hits(0)
    judged_docs = groups.doc_ids[joined]
    vocab, codes = np.unique(np.concatenate((b.doc_ids[hits.row], judged_docs)), return_inverse=True)
    codes = codes.ravel()
    hit_key = hits.query * len(vocab) + codes[: len(hits.row)]
    judged_key = query[joined] * len(vocab) + codes[len(hits.row):]
    by_key = np.argsort(hit_key)
    if len(hit_key):
        pos = np.minimum(np.searchsorted(hit_key[by_key], judged_key), len(hit_key) - 1)
        found = np.flatnonzero(hit_key[by_key][pos] == judged_key)
        rank = hits.rank[by_key[pos[found]]]
    else:
        found, rank = np.zeros(0, np.int64), np.zeros(0, np.int64)
    hit_group = group[joined][found]
    order = np.lexsort((rank, hit_group))
    hit_group, rank = hit_group[order], rank[order]
    if judged_in_group:  # the rank among the group's judged documents, then its relevant ones only
        rank = np.arange(1, len(hit_group) + 1) - np.searchsorted(hit_group, hit_group)
        keep = (groups.relevance[joined][found][order] >= max(rel, 0))
        hit_group, rank = hit_group[keep], rank[keep]
    position = np.arange(1, len(hit_group) + 1) - np.searchsorted(hit_group, hit_group)
    return GroupHits(
        n_groups=np.bincount(group_query, minlength=b.n_queries).astype(np.int64), group_query=group_query,
        n_relevant=n_relevant, hit_group=hit_group, hit_rank=rank, hit_position=position,
    )


@measure("AP_avgjg", params={"rel": REL, "judged_in_group": JUDGED_IN_GROUP}, aliases=("MAP_avgjg",),
         trec=(TrecName("map_avgjg"),), subtopics=True)
def ap_avgjg(b: RankedBatch, *, rel: int, judged_in_group: bool) -> FloatArray:
    """Average precision averaged over the query's judgment groups (assessors).

    For each group g: AP_g = sum over its relevant retrieved documents of (its relevant documents up
    to that rank) / rank, divided by R_g (0 when R_g = 0); the query's value is the mean of AP_g over
    all its groups. With one group it is AP.

    Reference: trec_eval 10 ``map_avgjg`` (``-R qrels_jg``).
    """
    g = group_hits(b, rel, judged_in_group)
    precision = g.hit_position / g.hit_rank.astype(np.float64)
    per_group = np.bincount(g.hit_group, weights=precision, minlength=len(g.group_query))
    return g.per_query(safe_div(per_group, g.n_relevant))


@measure(
    "P_avgjg", params={"k": CUTOFF, "rel": REL, "judged_in_group": JUDGED_IN_GROUP}, cutoff="k", cutoff_required=True,
    trec=(TrecName("P_avgjg", cutoff=True, defaults=P_CUTOFFS),), subtopics=True,
)
def precision_avgjg(b: RankedBatch, *, k: int, rel: int, judged_in_group: bool) -> FloatArray:
    """Precision at k averaged over the query's judgment groups: the mean over groups of rel_g@k / k.

    The denominator is always k (ranks past the end of the ranking count as non-relevant). With one
    group it is P@k.

    Reference: trec_eval 10 ``P_avgjg`` (``-R qrels_jg``).
    """
    g = group_hits(b, rel, judged_in_group)
    return g.per_query(g.relevant_at(k) / float(k))


@measure(
    "RprecMult_avgjg",
    params={"mult": Param(float, None, "multiple of R_g that gives each group's cutoff", minimum=0.0, maximum=1e6),
            "rel": REL, "judged_in_group": JUDGED_IN_GROUP},
    cutoff="mult", cutoff_required=True,
    trec=(TrecName("Rprec_mult_avgjg", cutoff=True, defaults=RPREC_MULTS, float_cutoffs=True),), subtopics=True,
)
def r_precision_multiple_avgjg(b: RankedBatch, *, mult: float, rel: int, judged_in_group: bool) -> FloatArray:
    """Precision at a multiple of R, averaged over the query's judgment groups.

    For each group g, rel_g@c / c with c = trunc(mult * R_g + 0.9) (0 when c = 0); the query's value is
    the mean over its groups. With one group it is Rprec_mult.

    Reference: trec_eval 10 ``Rprec_mult_avgjg`` (``-R qrels_jg``).
    """
    g = group_hits(b, rel, judged_in_group)
    # The cut-off is at most 2**62 (past every ranking), so that the cast to int64 never overflows.
    c = np.minimum(np.floor(mult * g.n_relevant.astype(np.float64) + 0.9), float(INT_LIMIT)).astype(np.int64)
    return g.per_query(safe_div(g.relevant_at(c), c))
