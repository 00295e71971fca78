"""Hit rate@k: ``retrieval_hit_rate`` and its ``_intersecting`` and ``_macro`` forms."""

from __future__ import annotations

from ._inputs import CandidatesLabels, QueryLabels
from ._kernels import _hit
from ._scoring import _score

__all__ = ["retrieval_hit_rate", "retrieval_hit_rate_intersecting", "retrieval_hit_rate_macro"]


def retrieval_hit_rate(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Hit rate at k, multiclass: the fraction of queries with a relevant candidate in the top k.

    A candidate is relevant when its label equals the query's.

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
        Hit rate@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged candidate lists, label vectors instead of ints, ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_hit_rate([1, 2], [[1, 0, 1], [0, 0, 2]], k=2)   # a hit for the first query only
    0.5
    """
    return _score(query_labels, candidates_labels, k, name="retrieval_hit_rate", kernel=_hit, relation="equal")


def retrieval_hit_rate_intersecting(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Hit rate at k, multilabel: the fraction of queries with a candidate sharing a class in the top k.

    As :func:`retrieval_hit_rate`, with a candidate relevant when its 0/1 label vector and the
    query's have a 1 in the same position. Like autointent, this sums the top-k candidates' vectors
    and takes the dot product of the sum with the query's vector; for 0/1 vectors that is the same
    as asking for one candidate with a class in common.

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
        Hit rate@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> query = [[1, 1, 0]]
    >>> candidates = [[[0, 0, 1], [0, 1, 1], [1, 0, 0]]]
    >>> retrieval_hit_rate_intersecting(query, candidates, k=1)
    0.0
    >>> retrieval_hit_rate_intersecting(query, candidates, k=2)   # rank 2 shares class 1
    1.0
    """
    return _score(
        query_labels, candidates_labels, k, name="retrieval_hit_rate_intersecting", kernel=_hit, relation="pooled"
    )


def retrieval_hit_rate_macro(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Hit rate at k, multilabel, macro-averaged over classes.

    For each class, every query and candidate gets the label 1 if it has the class and 0 if not, and
    :func:`retrieval_hit_rate` is computed on those labels; the result is the mean over classes. A
    candidate that lacks a class the query also lacks is a hit for that class.

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
        Macro hit rate@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_hit_rate_macro([[1, 0]], [[[0, 1], [1, 0]]], k=1)   # class 0: miss; class 1: miss
    0.0
    >>> retrieval_hit_rate_macro([[1, 0]], [[[0, 1], [1, 0]]], k=2)   # both classes hit at rank 2
    1.0
    """
    return _score(
        query_labels, candidates_labels, k, name="retrieval_hit_rate_macro", kernel=_hit, relation="per_class"
    )
