"""MRR@k (mean reciprocal rank): ``retrieval_mrr`` and its ``_intersecting`` and ``_macro`` forms."""

from __future__ import annotations

from ._inputs import CandidatesLabels, QueryLabels
from ._kernels import _reciprocal_rank
from ._scoring import _score

__all__ = ["retrieval_mrr", "retrieval_mrr_intersecting", "retrieval_mrr_macro"]


def retrieval_mrr(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Mean reciprocal rank at k, multiclass.

    For each query, 1 / the rank of the first relevant candidate in the top k, or 0 if there is none
    there; the result is the mean over queries. A candidate is relevant when its label equals the
    query's.

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
        MRR@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged candidate lists, label vectors instead of ints, ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_mrr([1, 2], [[1, 0, 1], [0, 0, 2]])          # (1/1 + 1/3) / 2
    0.6666666666666666
    >>> retrieval_mrr([1, 2], [[1, 0, 1], [0, 0, 2]], k=2)     # (1/1 + 0) / 2
    0.5
    """
    return _score(query_labels, candidates_labels, k, name="retrieval_mrr", kernel=_reciprocal_rank, relation="equal")


def retrieval_mrr_intersecting(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Mean reciprocal rank at k, multilabel: relevant means sharing at least one class.

    As :func:`retrieval_mrr`, with a candidate relevant when its 0/1 label vector and the query's
    have a 1 in the same position.

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
        MRR@k, in [0, 1].

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
    >>> retrieval_mrr_intersecting(query, candidates)   # first shared class at rank 2
    0.5
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_mrr_intersecting", kernel=_reciprocal_rank, relation="share",
    )


def retrieval_mrr_macro(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Mean reciprocal rank at k, multilabel, macro-averaged over classes.

    For each class, every query and candidate gets the label 1 if it has the class and 0 if not, and
    :func:`retrieval_mrr` is computed on those labels; the result is the mean over classes. A
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
        Macro MRR@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_mrr_macro([[1, 0]], [[[0, 0], [1, 0]]])   # class 0: 1/2; class 1: 1/1
    0.75
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_mrr_macro", kernel=_reciprocal_rank, relation="per_class",
    )
