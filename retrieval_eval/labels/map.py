"""MAP@k (mean average precision): ``retrieval_map`` and its ``_intersecting`` and ``_macro`` forms."""

from __future__ import annotations

from ._inputs import CandidatesLabels, QueryLabels
from ._kernels import _average_precision
from ._scoring import _score

__all__ = ["retrieval_map", "retrieval_map_intersecting", "retrieval_map_macro"]


def retrieval_map(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Mean average precision at k, multiclass.

    For each query, average precision is the mean, over the relevant candidates among the top k, of
    the precision at the rank of each one (relevant candidates up to that rank divided by the rank);
    a query with no relevant candidate in the top k scores 0. The result is the mean over queries.
    A candidate is relevant when its label equals the query's. The average is over the relevant
    candidates *found in the top k*, as in autointent, not over all of the query's relevant ones.

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
        MAP@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged candidate lists, label vectors instead of ints, ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_map([1, 2], [[1, 0, 1], [0, 0, 2]])   # ((1/1 + 2/3) / 2 + (1/3) / 1) / 2
    0.5833333333333333
    >>> retrieval_map([1, 2, None], [[1, 0, 1], [0, 0, 2], [5, 5, 5]], k=2)
    0.5
    """
    return _score(query_labels, candidates_labels, k, name="retrieval_map", kernel=_average_precision, relation="equal")


def retrieval_map_intersecting(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Mean average precision at k, multilabel: relevant means sharing at least one class.

    As :func:`retrieval_map`, with a candidate relevant when its 0/1 label vector and the query's
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
        MAP@k, in [0, 1].

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
    >>> candidates = [[[0, 0, 1], [0, 1, 1], [1, 0, 0]]]   # relevant at ranks 2 and 3
    >>> retrieval_map_intersecting(query, candidates)      # (1/2 + 2/3) / 2
    0.5833333333333333
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_map_intersecting", kernel=_average_precision, relation="share",
    )


def retrieval_map_macro(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Mean average precision at k, multilabel, macro-averaged over classes.

    For each class, every query and candidate gets the label 1 if it has the class and 0 if not, and
    :func:`retrieval_map` is computed on those labels; the result is the mean over classes. A
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
        Macro MAP@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_map_macro([[1, 0]], [[[0, 0], [1, 0]]])  # class 0: 1/2; class 1: (1 + 1) / 2
    0.75
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_map_macro", kernel=_average_precision, relation="per_class",
    )
