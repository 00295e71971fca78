"""Input checking: the labels given, checked and stacked into arrays, out-of-scope queries dropped.

Every public function starts here (through :func:`._scoring._prepare`): the errors name the function,
the first offending query (its index in the input) and the shape expected.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ..model import InputFormatError, InputTypeError, IntArray, optional_int_at_least

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

#: One label per query: an int (multiclass), a 0/1 vector (multilabel) or None (out of scope).
QueryLabels: TypeAlias = "Sequence[Any] | npt.NDArray[Any]"
#: Per query, the labels of its ranked candidates, best first.
CandidatesLabels: TypeAlias = "Sequence[Any] | npt.NDArray[Any]"


def _check_k(k: object, name: str) -> int | None:
    return optional_int_at_least(k, f"{name}: 'k'", 1)


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
