"""Score ties: the tie policies, the tie groups of a batch, and orders within them.

A *tie group* is a maximal run of a query's ranked rows with equal scores. Every policy keeps the
groups where trec_eval's order puts them (score descending); they differ inside a group only:

* ``"trec_eval"``: doc_id descending (the default, trec_eval's rule);
* ``"rank"``: the run's rank column, then doc_id descending where ranks tie too (ndeval ranks by it);
* ``"expected"``: the rows stay in trec_eval's order and the measures give their expected value over
  every order of each group (:mod:`retrieval_eval.measures.expected`).

Rows without a score (NaN) tie with nothing.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from attrs import evolve, frozen

from ..model import BoolArray, FloatArray, GradeArray, IntArray
from .batch import RankedBatch
from .segments import _offsets_of

TiePolicy = Literal["trec_eval", "rank", "expected"]
#: The tie policies, the default first.
TIE_POLICIES: tuple[TiePolicy, ...] = ("trec_eval", "rank", "expected")


def check_ties(ties: object) -> TiePolicy:
    """``ties`` if it names a tie policy; ValueError otherwise (an unknown one must not act as the default)."""
    for policy in TIE_POLICIES:
        if ties == policy and isinstance(ties, str):
            return policy
    raise ValueError(f"'ties' must be one of {list(TIE_POLICIES)}; got {ties!r}")


@frozen(eq=False)
class TieGroups:
    """The tie groups of a batch's ranked rows, in row order.

    ``group`` (n_rows,) is each row's group; ``offsets`` (n_groups + 1,) the bounds of each group's
    rows; ``query`` (n_groups,) each group's query; ``size`` (n_groups,) its rows; ``before``
    (n_groups,) the rows of its query ranked above it (its first rank less one).
    """

    group: IntArray
    offsets: IntArray
    query: IntArray
    size: IntArray
    before: IntArray

    def sums(self, values: FloatArray | BoolArray) -> FloatArray:
        """Per group, the sum of ``values`` (one per ranked row)."""
        return np.bincount(self.group, weights=values, minlength=len(self.size)).astype(np.float64, copy=False)


def _group_heads(b: RankedBatch) -> BoolArray:
    """Whether each ranked row starts a tie group: the first row of its query, or a score unlike the last."""
    head = np.ones(len(b.scores), dtype=bool)
    np.not_equal(b.scores[1:], b.scores[:-1], out=head[1:])  # (NaN is unequal to everything)
    head[b.offsets[:-1][b.num_ret > 0]] = True
    return head


def tie_groups(b: RankedBatch) -> TieGroups:
    """The tie groups of ``b`` (made once per batch)."""

    def compute() -> TieGroups:
        head = _group_heads(b)
        starts = np.flatnonzero(head)
        group = np.cumsum(head, dtype=np.int64) - 1
        offsets = np.append(starts, len(head)).astype(np.int64)
        query = b.segment.take(starts)
        return TieGroups(group, offsets, query, np.diff(offsets), starts - b.offsets[:-1].take(query))

    return b._cached(("tie-groups",), compute)


def tied_queries(b: RankedBatch) -> BoolArray:
    """Whether each query has a tie group of two rows or more."""
    groups = tie_groups(b)
    tied = np.zeros(b.n_queries, dtype=bool)
    tied[groups.query[groups.size > 1]] = True
    return tied


def straddles(b: RankedBatch, k: int) -> BoolArray:
    """Whether each query has a tie group holding both rank k and rank k + 1: its top k depends on the tie order."""
    groups = tie_groups(b)
    cut = (groups.before < k) & (groups.before + groups.size > k)
    out = np.zeros(b.n_queries, dtype=bool)
    out[groups.query[cut]] = True
    return out


def within_ties(b: RankedBatch, key: GradeArray) -> RankedBatch:
    """``b`` with the rows of each tie group in ascending ``key`` (one per ranked row), the present
    order kept among equal keys: the pessimistic and optimistic orders of the tie report."""
    order = np.lexsort((key, tie_groups(b).group))  # stable: equal keys keep trec_eval's order
    return reordered(b, order)


def reordered(b: RankedBatch, order: IntArray) -> RankedBatch:
    """``b`` with its ranked rows at ``order`` (a permutation that keeps each query's rows together)."""
    if bool(np.all(order == np.arange(len(order)))):
        return b
    return evolve(b, labels=b.labels.take(order), doc_ids=b.doc_ids.take(order), scores=b.scores.take(order))


def rank_order(offsets: IntArray, scores: FloatArray, ranks: IntArray | FloatArray) -> IntArray | None:
    """The row order that sorts each tie group (rows in score order, ``offsets`` the queries) by
    ``ranks`` ascending, rows of equal rank kept in their order; None when nothing moves."""
    head = np.ones(len(scores), dtype=bool)
    np.not_equal(scores[1:], scores[:-1], out=head[1:])
    head[offsets[:-1][np.diff(offsets) > 0]] = True
    group = np.cumsum(head) - 1
    order = np.lexsort((np.asarray(ranks), group))
    return None if bool(np.all(order == np.arange(len(order)))) else order


def with_unjudged_as(b: RankedBatch, level: int) -> RankedBatch:
    """``b`` with every unjudged retrieved document judged ``level``: each one's label becomes
    ``level``, and it joins its query's judged rows (so that it counts in R and in the ideal lists).

    A document the qrels list with a negative value keeps that row too: negative values never count.
    """
    unjudged = np.flatnonzero(b.labels < 0)
    if not len(unjudged):
        return b
    labels = b.labels.copy()
    labels[unjudged] = level
    query = b.query_of(unjudged)
    # Each query's judged rows first, then its added ones in rank order: the judged rows shift by the
    # rows added before their query, and an added row lands after its query's judged rows and the rows
    # added before it. The old rows fill what is left, in order, by a mask: a scatter of every judged
    # row took twice the time (sessions of one document).
    offsets = b.judged_offsets + _offsets_of(np.bincount(query, minlength=b.n_queries))
    new_at = b.judged_offsets.take(query + 1) + np.arange(len(unjudged))
    old = np.ones(int(offsets[-1]), dtype=bool)
    old[new_at] = False
    relevance = np.empty(len(old), dtype=b.judged_relevance.dtype)
    relevance[new_at] = level
    relevance[old] = b.judged_relevance
    doc_ids = np.empty(len(old), dtype=np.result_type(b.judged_doc_ids.dtype, b.doc_ids.dtype))
    doc_ids[new_at] = b.doc_ids.take(unjudged)
    doc_ids[old] = b.judged_doc_ids
    return evolve(b, labels=labels, judged_offsets=offsets, judged_relevance=relevance, judged_doc_ids=doc_ids)
