"""Score-based pairwise measures of search and recommendation logs: AUC, its grouped form GAUC and
PooledAUC, the AUC of every row of every query together.

Unlike the rank-based measures these compare scores: two documents with the same score are a tie
(half a correct pair) whatever order the tie rule gives them. Positives are the retrieved documents
judged >= rel; negatives are every other retrieved document (unjudged ones included; ``-J`` leaves
only judged ones). The kernels' contract is in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from attrs import frozen

from ..engine.batch import RankedBatch
from ..engine.segments import offsets_count, safe_div, segment_ids, segment_sum
from ..model import BoolArray, FloatArray, IntArray
from .params import REL, Param
from .registry import measure


def _by_score(scores: FloatArray, offsets: IntArray) -> bool:
    """Whether the rows of every query (segments along ``offsets``) are by score descending (the usual
    case: runs ranked by score, which is trec_eval's order)."""
    rising = scores[1:] > scores[:-1]
    bounds = offsets[1:-1]
    rising[bounds[(bounds > 0) & (bounds < len(scores))] - 1] = False  # a query's last row, the next's first
    return not bool(rising.any())


def _pairs(b: RankedBatch, rel: int) -> tuple[FloatArray, IntArray, IntArray]:
    """Per query: correctly ordered (positive, negative) pairs with ties counted 1/2, positives, negatives.

    Computed once per batch and threshold: AUC, GAUC and GAUC's summary weights all read it.
    """
    return b._cached(("auc-pairs", rel), lambda: _count_pairs(b, rel))


#: Rows counted at a time (whole queries; a longer query alone), which bounds the temporary arrays:
#: a log of 10 M rows would otherwise hold some ten of them at once, 8 bytes a row each.
_CHUNK_ROWS = 1 << 18


def _count_pairs(b: RankedBatch, rel: int) -> tuple[FloatArray, IntArray, IntArray]:
    """Within a query sorted by score descending, a positive beats the negatives below its block of
    tied scores and ties with the negatives inside that block: the Mann-Whitney U statistic, from
    cumulative counts instead of a loop over pairs, over some queries at a time."""
    positive = b.relevant(rel)
    n_pos = offsets_count(positive, b.offsets)
    n_neg = np.diff(b.offsets) - n_pos
    won = np.zeros(b.n_queries)
    if not positive.any():
        return won, n_pos, n_neg
    by_score = _by_score(b.scores, b.offsets)
    # Chunks of whole queries: each ends at the first query bound at or after a multiple of the chunk size.
    ends = np.unique(np.searchsorted(b.offsets, np.arange(_CHUNK_ROWS, int(b.offsets[-1]), _CHUNK_ROWS)))
    bounds = [0, *ends.tolist(), b.n_queries]
    for first, last in pairwise(bounds):
        if last > first:
            won[first:last] = _won(b, positive, n_neg, first, last, by_score)
    return won, n_pos, n_neg


def _won(b: RankedBatch, positive_rows: BoolArray, n_neg: IntArray, first: int, last: int,
         by_score: bool) -> FloatArray:
    """The correctly ordered pairs of queries ``first`` to ``last`` (excluded), ties counted 1/2."""
    start, stop = int(b.offsets[first]), int(b.offsets[last])
    offsets = b.offsets[first : last + 1] - start
    segment = segment_ids(offsets)
    scores, positive = b.scores[start:stop], positive_rows[start:stop]
    if not by_score:  # rows by score descending within each query (their queries stay in place)
        order = np.lexsort((-scores, segment))
        scores, positive = scores[order], positive[order]
    negative = ~positive
    # Blocks of equal score within a query; negatives counted up to each block's end.
    is_start = np.concatenate(([True], (segment[1:] != segment[:-1]) | (scores[1:] != scores[:-1])))
    block = np.cumsum(is_start) - 1
    starts = np.flatnonzero(is_start)
    negatives_through = np.cumsum(negative)  # inclusive, over the chunk
    block_end = np.append(starts[1:], len(scores)) - 1
    before_query = np.concatenate(([0], negatives_through))[offsets[:-1]]
    through_block = negatives_through[block_end] - before_query[segment[starts]]
    in_block = segment_sum(negative, block, len(starts))
    rows = np.flatnonzero(positive)
    q, blk = segment[rows], block[rows]
    won = (n_neg[first:last][q] - through_block[blk]) + 0.5 * in_block[blk]
    return segment_sum(won, q, last - first)


def _auc(b: RankedBatch, rel: int) -> FloatArray:
    won, n_pos, n_neg = _pairs(b, rel)
    return safe_div(won, n_pos * n_neg)


def _two_classes(b: RankedBatch, rel: int) -> tuple[FloatArray, IntArray, IntArray]:
    _, n_pos, n_neg = _pairs(b, rel)
    return ((n_pos > 0) & (n_neg > 0)).astype(np.float64), n_pos, n_neg


def _defined(b: RankedBatch, *, rel: int) -> FloatArray:
    """Each query's weight in the AUC summary: 1 where its AUC is defined (both classes), else 0."""
    return _two_classes(b, rel)[0]


@measure("AUC", params={"rel": REL}, aggregate="weighted", weight=_defined)
def auc(b: RankedBatch, *, rel: int) -> FloatArray:
    """Area under the ROC curve of one query's scores: the chance that a positive outscores a negative.

    AUC = (pairs with the positive scored higher + 1/2 * pairs with equal scores) / (P * N), over
    the query's retrieved documents, P of them relevant (judged >= rel) and N not (judged below rel
    or unjudged; with ``-J`` only judged documents are ranked, so only they count). This is the
    Mann-Whitney statistic, equal to ``sklearn.metrics.roc_auc_score(labels, scores)``. Only scores
    count, not ranks: ties in score are half-correct whatever order the tie rule gives them.

    A query with only positives or only negatives (P * N = 0) has no pair to order: its AUC is
    undefined, and its value is 0, the convention of every measure here for a zero denominator
    (torchmetrics' RetrievalAUROC does the same by default). The summary is the mean over the
    queries where AUC is defined, the others left out (``SetEvaluator.left_out('AUC')`` and the
    command line's note name them): GAUC's default summary. Counted as 0, sessions without a click
    would drag the mean of a click log far below the AUC of its rows; PooledAUC is that AUC.

    Reference: Hanley & McNeil, "The meaning and use of the area under a ROC curve", Radiology 1982.
    """
    return _auc(b, rel)


def _gauc_weight(b: RankedBatch, *, rel: int, weight: str) -> FloatArray:
    """Each query's weight in the GAUC summary: 0 for a single-class query."""
    both, n_pos, n_neg = _two_classes(b, rel)
    if weight == "impressions":
        return both * (n_pos + n_neg)
    if weight == "positives":
        return both * n_pos
    return both


@measure(
    "GAUC",
    params={
        "rel": REL,
        "weight": Param(str, "queries", "each query's weight in the summary: 1, its scored documents, or its "
                        "positives", choices=("queries", "impressions", "positives")),
    },
    aggregate="weighted", weight=_gauc_weight,
)
def gauc(b: RankedBatch, *, rel: int, weight: str) -> FloatArray:
    """Grouped AUC: the per-query AUC averaged over the queries (sessions) that have both classes.

    Per query it is AUC (0 for a query with a single class). The summary is
    sum(w_q * AUC_q) / sum(w_q) over the queries with at least one positive and one negative:
    w_q = 1 (``weight='queries'``, the default), the query's scored documents (``'impressions'``)
    or its positives (``'positives'``). Single-class queries have weight 0: the summary leaves them
    out, and ``SetEvaluator.left_out('GAUC')`` and the command line's note name them. No query with
    both classes gives 0.

    Reference: Zhu et al., "Optimized cost per click in Taobao display advertising", KDD 2017
    (GAUC weighted by impressions); Zhou et al., "Deep interest network", KDD 2018.
    """
    return _auc(b, rel)


@frozen
class ScoreCounts:
    """Rows of a block of queries by score: each distinct score (ascending) with its positives and negatives."""

    score: FloatArray
    positives: IntArray
    negatives: IntArray


def _score_counts(b: RankedBatch, *, rel: int) -> ScoreCounts:
    """A block's share of PooledAUC: its rows counted per distinct score (a log's rows, far fewer scores)."""
    score, row_score = np.unique(b.scores, return_inverse=True)
    positive = b.relevant(rel)
    positives = np.bincount(row_score[positive], minlength=len(score))
    return ScoreCounts(score, positives, np.bincount(row_score, minlength=len(score)) - positives)


def _pooled_auc(shares: list[ScoreCounts]) -> float:
    """The rank-sum statistic over every block's rows: exact integers, one rounding at the end."""
    if len(shares) == 1:
        score, positives, negatives = shares[0].score, shares[0].positives, shares[0].negatives
    else:  # a score in several blocks: its counts added up
        score, where = np.unique(np.concatenate([share.score for share in shares]), return_inverse=True)
        positives = np.bincount(where, np.concatenate([share.positives for share in shares]), len(score))
        negatives = np.bincount(where, np.concatenate([share.negatives for share in shares]), len(score))
        positives, negatives = positives.astype(np.int64), negatives.astype(np.int64)
    n_pos, n_neg = int(positives.sum()), int(negatives.sum())
    if n_pos == 0 or n_neg == 0:
        return 0.0
    below = np.cumsum(negatives) - negatives  # negatives with a lower score
    # Twice the pairs won plus the pairs tied: each positive beats the negatives below its score and
    # ties with those at its score. At most 2 * P * N, so int64 holds it below 3 billion rows.
    twice_won = int(np.dot(positives, 2 * below + negatives))
    from fractions import Fraction  # here: its import costs every command's start-up, and few ask for AUC

    return float(Fraction(twice_won, 2 * n_pos * n_neg))


@measure("PooledAUC", params={"rel": REL}, aggregate="pooled", pool=_score_counts, pooled=_pooled_auc)
def pooled_auc(b: RankedBatch, *, rel: int) -> FloatArray:
    """AUC of all the rows together: the chance that a positive row outscores a negative row of any query.

    The summary pools the retrieved documents of every query into one list, P positives (judged
    >= rel) and N negatives (the others, unjudged ones included), and counts the (positive, negative)
    pairs the scores order correctly, ties 1/2: (pairs won + 1/2 pairs tied) / (P * N), the
    Mann-Whitney statistic. It equals ``sklearn.metrics.roc_auc_score`` on the rows of a click log,
    and AUC as the probability that a random positive outscores a random negative defines it. It is
    exact: integer pair counts, one rounding. Scores of different queries are compared with each
    other, so they must be on one scale (a model's scores of impressions, not BM25 of unrelated queries).

    Per query the value is that query's own AUC (its rows pooled), as the AUC measure gives it. The
    summary is computed from the rows, not from these values (``SetEvaluator.mean('PooledAUC')``
    raises, and a summary of per-query values alone, as Spark's ``summarize`` or ``compare`` make,
    cannot be had). No positive or no negative row at all gives 0.

    Reference: Hanley & McNeil, Radiology 1982; scikit-learn's ``roc_auc_score``.
    """
    return _auc(b, rel)
