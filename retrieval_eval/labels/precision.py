"""Precision@k: ``retrieval_precision`` and its ``_intersecting`` and ``_macro`` forms."""

from __future__ import annotations

from ._inputs import CandidatesLabels, QueryLabels
from ._kernels import _precision
from ._scoring import _score

__all__ = ["retrieval_precision", "retrieval_precision_intersecting", "retrieval_precision_macro"]


def retrieval_precision(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Precision at k, multiclass: the mean fraction of relevant candidates among the top k.

    A candidate is relevant when its label equals the query's. The fraction divides by the number of
    candidates looked at, ``min(k, n_candidates)``, as in autointent: a k past the end of the list
    does not lower precision.

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
        Precision@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged candidate lists, label vectors instead of ints, ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_precision([1, 2], [[1, 0, 1], [0, 0, 2]])          # (2/3 + 1/3) / 2
    0.5
    >>> retrieval_precision([1, 2], [[1, 0, 1], [0, 0, 2]], k=10)    # still divided by 3, not 10
    0.5
    """
    return _score(
        query_labels, candidates_labels, k, name="retrieval_precision", kernel=_precision, relation="equal"
    )


def retrieval_precision_intersecting(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Precision at k, multilabel: the mean fraction of top-k candidates sharing a class with the query.

    As :func:`retrieval_precision` (divided by ``min(k, n_candidates)``), with a candidate relevant
    when its 0/1 label vector and the query's have a 1 in the same position.

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
        Precision@k, in [0, 1].

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
    >>> retrieval_precision_intersecting(query, candidates, k=2)
    0.5
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_precision_intersecting", kernel=_precision, relation="share",
    )


def retrieval_precision_macro(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Precision at k, multilabel, macro-averaged over classes.

    For each class, every query and candidate gets the label 1 if it has the class and 0 if not, and
    :func:`retrieval_precision` is computed on those labels; the result is the mean over classes. A
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
        Macro precision@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_precision_macro([[1, 0]], [[[0, 0], [1, 0]]])   # class 0: 1/2; class 1: 2/2
    0.75
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_precision_macro", kernel=_precision, relation="per_class",
    )
