"""Label-based retrieval metrics: autointent 0.4's 15 functions, same names, same numbers, vectorised.

Here a query is relevant to a candidate through *labels*, not through judgments: a query and the
candidates a retriever returned for it (best first) each carry a class label, and the metrics ask how
early, and how often, the candidates share the query's label. Every function takes
``(query_labels, candidates_labels, k=None)`` and returns a Python float, the mean over queries.

Three forms of each metric (AP, hit rate, precision, nDCG, reciprocal rank):

* plain (``retrieval_map``, ...): multiclass. ``query_labels`` holds one int per query, shape
  ``(n_queries,)``; ``candidates_labels`` one int per candidate, ``(n_queries, n_candidates)``.
  A candidate is relevant when its label equals the query's.
* ``_intersecting``: multilabel. Labels are binary vectors over ``n_classes`` classes, shapes
  ``(n_queries, n_classes)`` and ``(n_queries, n_candidates, n_classes)``. A candidate is relevant
  when it shares at least one class with the query (nDCG differs, see
  :func:`retrieval_ndcg_intersecting`).
* ``_macro``: multilabel, macro-averaged. Each class in turn is made a multiclass problem with the two
  labels "has the class" / "lacks the class"; the plain metric is computed on it and the per-class
  values are averaged. A candidate that lacks a class the query lacks too counts as relevant there.

The plain forms refuse label vectors and the other two refuse one-int-per-query labels, with an
error that names the form to use: autointent lists the plain forms as its multiclass metrics and the
other two as its multilabel ones; given the other kind of label it raises or returns an accidental
number.

Conventions, as in autointent 0.4:

* ``k`` keeps the top ``min(k, n_candidates)`` candidates; ``k=None`` keeps them all.
* Average precision divides by the relevant candidates found in the top k, not by all the
  query's relevant candidates; 0.0 when none is found.
* Precision divides by ``min(k, n_candidates)``, not by ``k``.
* nDCG uses binary gains and the discount ``1 / log2(rank + 1)``; its ideal ranking puts every
  relevant candidate of the whole list first, so relevant candidates past ``k`` lower it. 0.0 for a
  query without relevant candidates.
* A query whose label is ``None`` is out of scope (OOS) and is left out, with its candidate list.

Where autointent has no answer, the choices made here:

* When no query is left (an empty input, or every label ``None``), :class:`InputFormatError` is
  raised; autointent divides by zero, takes the mean of nothing, or fails on indexing.
* Empty candidate lists score 0.0 in every metric; autointent's precision divides by zero there.

Multilabel vectors are meant to be 0/1 (or booleans). Other integers are not refused: they follow
autointent's arithmetic (a positive dot product for "shares a class", equality per position for
macro averaging and for nDCG_intersecting), and give its numbers.

Malformed input raises :class:`~retrieval_eval.model.InputFormatError` (ragged lists, vectors of
different lengths, ``k < 1``, no in-scope query, the other form's labels) or
:class:`~retrieval_eval.model.InputTypeError` (labels that are not integers, a ``k`` that is not an
int); the message names the function, the first offending query (its index in the input) and the
shape expected.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .model import BoolArray, FloatArray, InputFormatError, InputTypeError, IntArray

__all__ = [
    "retrieval_hit_rate",
    "retrieval_hit_rate_intersecting",
    "retrieval_hit_rate_macro",
    "retrieval_map",
    "retrieval_map_intersecting",
    "retrieval_map_macro",
    "retrieval_mrr",
    "retrieval_mrr_intersecting",
    "retrieval_mrr_macro",
    "retrieval_ndcg",
    "retrieval_ndcg_intersecting",
    "retrieval_ndcg_macro",
    "retrieval_precision",
    "retrieval_precision_intersecting",
    "retrieval_precision_macro",
]

#: One label per query: an int (multiclass), a 0/1 vector (multilabel) or None (out of scope).
QueryLabels: TypeAlias = Sequence[Any] | npt.NDArray[Any]
#: Per query, the labels of its ranked candidates, best first.
CandidatesLabels: TypeAlias = Sequence[Any] | npt.NDArray[Any]

#: How a candidate's labels make it relevant to its query (autointent 0.4's rules):
#: "equal"      the same int (multiclass);
#: "share"      a positive dot product of the two label vectors: for 0/1 vectors, a class in common;
#: "pooled"     the dot product of the query's vector with the *sum* of the top-k candidates' vectors is
#:              positive (autointent's hit rate): one pseudo-candidate per query; for 0/1 vectors the
#:              same as "share" holding for some candidate;
#: "agree"      equal in at least one class position, a 0 in both included (autointent's nDCG);
#: "per_class"  equal in each class position on its own (macro averaging): one relevance per class.
_Relation = Literal["equal", "share", "pooled", "agree", "per_class"]

#: Kernel: relevance of the top k candidates (on axis 1) -> one score per query (and class).
_Kernel = Callable[[BoolArray], FloatArray]


# --------------------------------------------------------------------------------------------------
# Kernels. ``relevance`` is (n_queries, depth), or (n_queries, depth, n_classes) in macro form, for
# the top ``depth = min(k, n_candidates)`` candidates, best first; each kernel returns float64
# (n_queries,) or (n_queries, n_classes).


def _count(mask: BoolArray, subscripts: str, length: int) -> npt.NDArray[np.unsignedinteger[Any]]:
    """Sum of ``mask`` over the axis that ``subscripts`` drops, whose length is ``length``.

    einsum is several times faster than a ufunc reduction over a short axis; the sum is kept in the
    smallest unsigned type that holds ``length``.
    """
    if length < 256:
        return np.asarray(np.einsum(subscripts, mask.view(np.uint8)))
    return np.asarray(np.einsum(subscripts, mask, dtype=np.min_scalar_type(length)))


def _ratio(numerator: FloatArray, denominator: npt.NDArray[Any]) -> FloatArray:
    """numerator / denominator element-wise, 0.0 where the denominator is 0."""
    out = np.zeros(numerator.shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _average_precision(relevance: BoolArray) -> FloatArray:
    """Mean of the precisions at the ranks of the relevant candidates."""
    depth = relevance.shape[1]
    hits_so_far = np.cumsum(relevance, axis=1, dtype=np.min_scalar_type(depth))
    n_hits = hits_so_far[:, -1].astype(np.int64)
    np.multiply(hits_so_far, relevance, out=hits_so_far)  # keep the counts at relevant ranks only
    # sum of hits_so_far / rank; einsum casts in buffers, with no float64 copy of the whole array
    precision_sum = np.einsum("qj...,j->q...", hits_so_far, 1.0 / np.arange(1, depth + 1))
    return _ratio(precision_sum, n_hits)


def _hit(relevance: BoolArray) -> FloatArray:
    """1.0 if a candidate is relevant, else 0.0."""
    return np.asarray(_count(relevance, "qj...->q...", relevance.shape[1]) > 0, dtype=np.float64)


def _precision(relevance: BoolArray) -> FloatArray:
    """The fraction of relevant candidates."""
    depth = relevance.shape[1]
    return np.asarray(_count(relevance, "qj...->q...", depth) / depth, dtype=np.float64)


def _reciprocal_rank(relevance: BoolArray) -> FloatArray:
    """1 / rank of the first relevant candidate; 0.0 if there is none."""
    first = relevance.argmax(axis=1)  # 0 also when nothing is relevant: told apart just below
    found = np.take_along_axis(relevance, first[:, None], axis=1)[:, 0]
    return np.asarray((1.0 / np.arange(1, relevance.shape[1] + 1))[first] * found, dtype=np.float64)


def _ndcg(relevance: BoolArray, n_relevant: npt.NDArray[Any]) -> FloatArray:
    """DCG of the top candidates over the ideal DCG: ``n_relevant`` relevant candidates on top.

    ``n_relevant`` counts the relevant candidates of the whole list (see :func:`_relevant_count`).
    """
    depth = relevance.shape[1]
    discount = 1.0 / np.log2(np.arange(2, depth + 2))
    dcg = np.einsum("qj...,j->q...", relevance, discount)
    ideal_dcg = np.concatenate(([0.0], np.cumsum(discount)))  # [r]: r relevant candidates on top
    return _ratio(dcg, ideal_dcg[np.minimum(n_relevant, depth)])


# --------------------------------------------------------------------------------------------------
# Relevance


def _accumulator(*arrays: npt.NDArray[Any]) -> np.dtype[Any]:
    """The dtype for sums of products: the inputs' type, with small integers widened to 64 bits."""
    dtype = np.result_type(*arrays)
    return np.dtype(np.int64) if dtype.kind in "iu" and dtype.itemsize < 8 else dtype


def _relevance(queries: npt.NDArray[Any], candidates: npt.NDArray[Any], relation: _Relation) -> BoolArray:
    """Relevance, (n_queries, n_candidates) or, for "per_class", (n_queries, n_candidates, n_classes).

    ``queries`` is (n_queries,) or (n_queries, n_classes), ``candidates`` (n_queries, n_candidates)
    or (n_queries, n_candidates, n_classes); "pooled" gives (n_queries, 1).
    """
    if relation == "equal":
        return np.asarray(candidates == queries[:, None])
    if relation == "per_class":
        return np.asarray(candidates == queries[:, None, :])
    if relation == "agree":
        equal = np.asarray(candidates == queries[:, None, :])
        return np.asarray(_count(equal, "qjc->qj", queries.shape[1]) > 0)
    dtype = _accumulator(queries, candidates)
    if relation == "share":
        return np.asarray(np.einsum("qjc,qc->qj", candidates, queries, dtype=dtype) > 0)
    pooled = np.einsum("qjc->qc", candidates, dtype=dtype)  # "pooled"
    return np.asarray(np.einsum("qc,qc->q", pooled, queries, dtype=dtype) > 0)[:, None]


# --------------------------------------------------------------------------------------------------
# Input


def _check_k(k: object, name: str) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise InputTypeError(f"{name}: 'k' must be an int >= 1 or None; got {type(k).__name__} {k!r}")
    if k < 1:
        raise InputFormatError(f"{name}: 'k' must be an int >= 1 or None; got {k}")
    return int(k)


def _length(labels: object, what: str, name: str) -> int:
    try:
        return len(labels)  # type: ignore[arg-type]
    except TypeError:
        raise InputTypeError(
            f"{name}: {what} must be a sequence or an array with one entry per query; "
            f"got {type(labels).__name__}"
        ) from None


def _in_scope(query_labels: QueryLabels) -> IntArray | None:
    """Positions of the queries whose label is not None; None when that is every query."""
    if isinstance(query_labels, np.ndarray) and query_labels.dtype != object:
        return None  # a numeric array cannot hold None
    in_scope = [label is not None for label in query_labels]
    return None if all(in_scope) else np.flatnonzero(in_scope)


def _shape(item: Any) -> tuple[int, ...] | None:
    """The array shape of ``item``, or None if it is ragged."""
    try:
        return tuple(np.shape(item))
    except ValueError:
        return None


def _irregularity(rows: Sequence[Any], positions: IntArray, what: str, name: str) -> InputFormatError:
    """The error for rows that do not stack into one array: the first row of another shape."""
    expected = _shape(rows[0])
    for row, position in zip(rows, positions, strict=True):
        shape = _shape(row)
        shapes = [_shape(entry) for entry in row] if shape is None else []
        bad = next((j for j, entry_shape in enumerate(shapes) if entry_shape != shapes[0]), None)
        if bad is not None:  # ragged inside: label vectors of different lengths
            return InputFormatError(
                f"{name}: query {position}: {what} has label vectors of different shapes "
                f"({shapes[0]} at candidate 0, {shapes[bad]} at candidate {bad}); "
                "every label vector must have shape (n_classes,)"
            )
        if shape is None or shape != expected:
            described = "an irregular shape" if shape is None else f"shape {shape}"
            return InputFormatError(
                f"{name}: query {position}: {what} has {described}, expected {expected} "
                f"like query {positions[0]}: every query needs the same number of candidates "
                "and every label vector the same number of classes"
            )
    return InputFormatError(f"{name}: {what} do not form a regular array")  # pragma: no cover


def _stacked(
    labels: Sequence[Any] | npt.NDArray[Any], kept: IntArray | None, what: str, name: str
) -> npt.NDArray[Any]:
    """The in-scope rows of ``labels`` as one numeric array (dropped rows are not looked at)."""
    if isinstance(labels, np.ndarray) and labels.dtype != object:
        return labels if kept is None else labels[kept]
    rows = list(labels) if kept is None else [labels[i] for i in kept]
    positions = np.arange(len(rows)) if kept is None else kept
    try:
        array = np.asarray(rows)
    except ValueError:  # NumPy refuses nested sequences of different lengths
        raise _irregularity(rows, positions, what, name) from None
    if array.dtype == object:
        # a regular array of Python objects: ints are fine, anything else (None, str, ...) is named
        flat = array.reshape(len(rows), -1)
        for i, row in enumerate(flat):
            for value in row:
                if isinstance(value, np.ndarray):
                    raise _irregularity(rows, positions, what, name)
                if not isinstance(value, numbers.Integral):
                    raise InputTypeError(
                        f"{name}: query {positions[i]}: {what} must be integers; got "
                        f"{type(value).__name__} {value!r}"
                        + (" (None marks an out-of-scope query label, not a candidate)" if value is None else "")
                    )
        array = array.astype(np.int64)
    return array


def _as_integers(array: npt.NDArray[Any], positions: IntArray | None, what: str, name: str) -> npt.NDArray[Any]:
    """``array`` if it holds integers or booleans; whole floats as int64; anything else an error."""
    if array.dtype.kind in "biu":
        return array
    if array.dtype.kind == "f":
        bad = ~(np.abs(array) < 2.0**63) | (array != np.round(array))  # NaN and inf fail the first test
        if not bad.any():
            return array.astype(np.int64)
        row = int(np.flatnonzero(bad.reshape(len(array), -1).any(axis=1))[0])
        position = row if positions is None else positions[row]
        raise InputTypeError(f"{name}: query {position}: {what} must be integers; got a float that is not a whole number in the int64 range")
    raise InputTypeError(f"{name}: {what} must be integers; got an array of dtype {array.dtype}")


def _labels(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, *, name: str, multilabel: bool
) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """The in-scope queries' labels and candidates' labels as arrays, checked.

    Multiclass: integer arrays of shapes (n,) and (n, n_candidates). Multilabel: integer (or bool)
    arrays of shapes (n, n_classes) and (n, n_candidates, n_classes).
    """
    n_queries = _length(query_labels, "query_labels", name)
    n_lists = _length(candidates_labels, "candidates_labels", name)
    if n_lists != n_queries:
        raise InputFormatError(
            f"{name}: {n_queries} query labels but {n_lists} candidate lists; expected one candidate list per query"
        )
    if n_queries == 0:
        raise InputFormatError(f"{name}: no queries; the mean over zero queries is undefined")
    kept = _in_scope(query_labels)
    if kept is not None and kept.size == 0:
        raise InputFormatError(
            f"{name}: all {n_queries} query labels are None (out of scope); "
            "the mean over zero in-scope queries is undefined"
        )
    queries = _as_integers(_stacked(query_labels, kept, "query label", name), kept, "query labels", name)
    candidates = _as_integers(
        _stacked(candidates_labels, kept, "candidates_labels row", name), kept, "candidate labels", name
    )
    n = len(queries)
    first = 0 if kept is None else int(kept[0])
    if not multilabel:
        if queries.ndim != 1:
            raise InputFormatError(
                f"{name} takes multiclass labels: query_labels must have shape (n_queries,), one int per "
                f"query; got shape {queries.shape}. For multilabel vectors use {name}_intersecting or {name}_macro"
            )
        if candidates.ndim != 2 or len(candidates) != n:
            raise InputFormatError(
                f"{name}: query {first}: candidates_labels must have shape (n_queries, n_candidates) = "
                f"({n}, n_candidates), one int per candidate; got shape {candidates.shape}"
            )
        return queries, candidates
    plain = name.rsplit("_", 1)[0]
    if queries.ndim != 2:
        raise InputFormatError(
            f"{name} takes multilabel labels: query_labels must have shape (n_queries, n_classes), one 0/1 "
            f"vector per query; got shape {queries.shape}. For one int per query use {plain}"
        )
    n_classes = queries.shape[1]
    if n_classes == 0:
        raise InputFormatError(f"{name}: query {first}: label vectors must have at least one class; got 0")
    if candidates.ndim == 2 and candidates.shape == (n, 0):  # empty candidate lists
        candidates = candidates.reshape(n, 0, n_classes)
    if candidates.ndim != 3 or candidates.shape[0] != n or candidates.shape[2] != n_classes:
        raise InputFormatError(
            f"{name}: query {first}: candidates_labels must have shape (n_queries, n_candidates, n_classes) = "
            f"({n}, n_candidates, {n_classes}), one 0/1 vector of the query's length per candidate; "
            f"got shape {candidates.shape}"
        )
    return queries, candidates


# --------------------------------------------------------------------------------------------------
# The driver


def _prepare(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: object, *, name: str, relation: _Relation
) -> tuple[npt.NDArray[Any], npt.NDArray[Any], int]:
    """The checked labels of the in-scope queries and their candidates, and the depth min(k, n_candidates)."""
    cutoff = _check_k(k, name)
    queries, candidates = _labels(query_labels, candidates_labels, name=name, multilabel=relation != "equal")
    n_candidates = candidates.shape[1]
    return queries, candidates, n_candidates if cutoff is None else min(cutoff, n_candidates)


def _mean(scores: FloatArray, relation: _Relation) -> float:
    """The mean over queries; in macro form, (n_queries, n_classes), the mean per class, then over classes."""
    if relation == "per_class":
        return float(scores.mean(axis=0).mean())
    return float(scores.mean())


def _score(
    query_labels: QueryLabels,
    candidates_labels: CandidatesLabels,
    k: object,
    *,
    name: str,
    kernel: _Kernel,
    relation: _Relation,
) -> float:
    """Check the input, drop OOS queries, compute the relevance of the top k and the kernel, average."""
    queries, candidates, depth = _prepare(query_labels, candidates_labels, k, name=name, relation=relation)
    if depth == 0:  # empty candidate lists
        return 0.0
    return _mean(kernel(_relevance(queries, candidates[:, :depth], relation)), relation)


def _ndcg_score(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: object, *, name: str, relation: _Relation
) -> float:
    """As :func:`_score` for nDCG, whose ideal ranking also counts the relevant candidates past k."""
    queries, candidates, depth = _prepare(query_labels, candidates_labels, k, name=name, relation=relation)
    if depth == 0:
        return 0.0
    top = _relevance(queries, candidates[:, :depth], relation)
    return _mean(_ndcg(top, _relevant_count(queries, candidates, top, relation)), relation)


def _relevant_count(
    queries: npt.NDArray[Any], candidates: npt.NDArray[Any], top: BoolArray, relation: _Relation
) -> IntArray:
    """Relevant candidates in the whole list, per query (and class), exact up to the depth of ``top``.

    The ideal DCG@k only asks whether a query has k relevant candidates or fewer, so the candidates
    past k are read only for the queries with fewer than k relevant ones in their top k. Where
    relevance is dense (nDCG_intersecting's "agree" rule), that skips most of the list.
    """
    depth = top.shape[1]
    counted = _count(top, "qj...->q...", depth).astype(np.int64)
    if depth == candidates.shape[1]:
        return counted
    short = counted < depth
    if short.ndim == 2:  # macro form: a query is short if one of its classes is
        short = short.any(axis=1)
    if short.mean() > 0.5:  # gathering most rows costs more than reading the whole list again
        return _count(_relevance(queries, candidates, relation), "qj...->q...", candidates.shape[1]).astype(np.int64)
    rows = np.flatnonzero(short)
    rest = _relevance(queries[rows], candidates[rows, depth:], relation)
    counted[rows] += _count(rest, "qj...->q...", rest.shape[1])
    return counted


# --------------------------------------------------------------------------------------------------
# The public functions


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
