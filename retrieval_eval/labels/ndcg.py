"""nDCG@k (normalised discounted cumulative gain): ``retrieval_ndcg``, ``_intersecting``, ``_macro``."""

from __future__ import annotations

from ._inputs import CandidatesLabels, QueryLabels
from ._scoring import _ndcg_score

__all__ = ["retrieval_ndcg", "retrieval_ndcg_intersecting", "retrieval_ndcg_macro"]


def retrieval_ndcg(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Normalised discounted cumulative gain at k, multiclass.

    A candidate is relevant (gain 1) when its label equals the query's, else gain 0. DCG@k sums, over
    the top k ranks r, gain / log2(r + 1); the ideal DCG@k is the DCG@k of the same candidates with
    the relevant ones moved to the top, so relevant candidates past rank k count in it. nDCG@k is
    DCG@k / ideal DCG@k, and 0 for a query without any relevant candidate. The result is the mean
    over queries.

    Parameters
    ----------
    query_labels : sequence of int or None, shape (n_queries,)
        The class of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of int, shape (n_queries, n_candidates)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        nDCG@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged candidate lists, label vectors instead of ints, ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_ndcg([2], [[0, 2, 2]])            # (1/log2(3) + 1/log2(4)) / (1 + 1/log2(3))
    0.6934264036172708
    >>> retrieval_ndcg([2], [[0, 2, 2]], k=1)       # the ideal top 1 holds a relevant candidate
    0.0
    """
    return _ndcg_score(query_labels, candidates_labels, k, name="retrieval_ndcg", relation="equal")


def retrieval_ndcg_intersecting(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Normalised discounted cumulative gain at k, multilabel, autointent's "intersecting" relevance.

    As :func:`retrieval_ndcg`, but a candidate is relevant when its 0/1 label vector and the query's
    are *equal in at least one position*, a 0 in both included. This is what autointent 0.4
    computes, and it differs from the other ``_intersecting`` metrics, which need a shared 1: with
    more than one class, only a candidate whose vector is the exact complement of the query's is
    not relevant.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        nDCG@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> query = [[1, 0, 0]]
    >>> candidates = [[[0, 1, 1], [0, 1, 0]]]   # the first is the complement; the second agrees on class 2
    >>> retrieval_ndcg_intersecting(query, candidates)   # (1/log2(3)) / 1
    0.6309297535714575
    """
    return _ndcg_score(query_labels, candidates_labels, k, name="retrieval_ndcg_intersecting", relation="agree")


def retrieval_ndcg_macro(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Normalised discounted cumulative gain at k, multilabel, macro-averaged over classes.

    For each class, every query and candidate gets the label 1 if it has the class and 0 if not, and
    :func:`retrieval_ndcg` is computed on those labels; the result is the mean over classes. A
    candidate that lacks a class the query also lacks is relevant for that class.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        Macro nDCG@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> round(retrieval_ndcg_macro([[1, 0]], [[[0, 0], [1, 0]]]), 6)   # class 0: 1/log2(3); class 1: 1
    0.815465
    """
    return _ndcg_score(query_labels, candidates_labels, k, name="retrieval_ndcg_macro", relation="per_class")
