"""Counts: queries, documents retrieved, relevant judgments and their intersections; summed over queries.

The kernels' contract and notation (R, NR, n, nrr, rel@k, r_m) are in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

import numpy as np

from ..engine.batch import RankedBatch
from ..model import FloatArray
from .params import REL, Param, TrecName
from .registry import measure


@measure("NumQ", trec=(TrecName("num_q"),), aggregate="sum", integer=True, summary_only=True)
def num_q(b: RankedBatch) -> FloatArray:
    """Number of queries evaluated (1 per query; the summary is the count).

    Qrels queries the run lacks count (they are scored as empty rankings), run queries without
    judgments do not.
    """
    return np.ones(b.n_queries)


@measure(
    "NumRet",
    params={"rel": Param(int, None, "count only documents judged >= rel (ir_measures' NumRet(rel=1))", minimum=0)},
    trec=(TrecName("num_ret"),), aggregate="sum", integer=True,
)
def num_ret(b: RankedBatch, *, rel: int | None) -> FloatArray:
    """Number of documents retrieved, n (after -M and -J); the summary is the sum.

    Counts every ranked document, judged or not. A query missing from the run retrieves 0.
    ``NumRet(rel=r)`` counts only the retrieved documents judged >= r, as ir_measures spells
    NumRelRet; the relevance level (-l) does not turn this filter on.
    """
    if rel is not None:
        return b.n_relevant_retrieved(rel).astype(np.float64)
    return b.num_ret.astype(np.float64)


@measure("NumRel", params={"rel": REL}, trec=(TrecName("num_rel"),), aggregate="sum", integer=True)
def num_rel(b: RankedBatch, *, rel: int) -> FloatArray:
    """Number of relevant judgments R (value >= rel), retrieved or not; the summary is the sum.

    Not reproduced: with -c, trec_eval 10 recounts the summary as the number of judgments > 0,
    ignoring -l (so ``-c -l2`` sums to more than the per-query rows). Our summary is always the sum
    of the rows. With binary judgments, or without -l, the two agree.
    """
    return b.n_relevant(rel).astype(np.float64)


@measure("NumRelRet", params={"rel": REL}, trec=(TrecName("num_rel_ret"),), aggregate="sum", integer=True)
def num_rel_ret(b: RankedBatch, *, rel: int) -> FloatArray:
    """Number of relevant documents retrieved; the summary is the sum.

    Counts ranked documents judged >= rel (rel >= 0). Unjudged and negatively judged documents never
    count. ir_measures spells it ``NumRet(rel=1)``.
    """
    return b.n_relevant_retrieved(rel).astype(np.float64)


@measure(
    "NumNonRelJudgedRet", params={"rel": REL}, trec=(TrecName("num_nonrel_judged_ret"),),
    aggregate="sum", integer=True,
)
def num_nonrel_judged_ret(b: RankedBatch, *, rel: int) -> FloatArray:
    """Number of judged non-relevant documents retrieved (0 <= value < rel); the summary is the sum.

    Unjudged documents are not counted. Reference: trec_eval ``num_nonrel_judged_ret``.
    """
    return b.nonrelevant_hits(rel).count.astype(np.float64)
