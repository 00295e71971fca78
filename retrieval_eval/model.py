"""Value objects of the per-query API: a retrieved :class:`Document` and a :class:`Judgment`.

They are frozen attrs classes: cheap to compare and hash, validated on construction, and free of any
file format (the readers in :mod:`retrieval_eval.trec` produce them, the model never parses).
"""

from __future__ import annotations

import math
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
from attrs import Attribute, field, frozen

FloatArray: TypeAlias = npt.NDArray[np.float64]

IntArray: TypeAlias = npt.NDArray[np.int64]

BoolArray: TypeAlias = npt.NDArray[np.bool_]


class RetrievalEvalError(ValueError):
    """Base class of every error this package raises for bad input."""


class InputFormatError(RetrievalEvalError):
    """A qrels or run line (or an in-memory record) is malformed or inconsistent."""


class TrecFormatError(InputFormatError):
    """A line of a qrels or run file that does not follow the format."""



class MissingExtraError(ImportError):
    """An optional dependency a feature needs is not installed; the message names the extra to install."""


class InputTypeError(RetrievalEvalError, TypeError):
    """An in-memory input of the wrong type (a TypeError, and like every input error a ValueError)."""


class InputWarning(UserWarning):
    """Input that is accepted, but may not be what was meant (printed on stderr by the CLI)."""


def id_problem(value: object) -> str | None:
    """Why ``value`` cannot be a query or document id, or None if it can.

    Ids are written into whitespace-separated files, so they must be non-empty strings without the
    bytes that separate fields there (C's isspace: space, \\t, \\n, \\v, \\f, \\r); NUL is refused
    too, since C tools (and NumPy's bytes arrays) cut strings at it. Other characters, Unicode
    spaces included, are data, as they are in a file.
    """
    if not isinstance(value, str):
        return f"must be a str; got {type(value).__name__} {value!r}"
    if not value or "\0" in value or not FIELD_SEPARATORS.isdisjoint(value):
        return f"must be non-empty, without whitespace or NUL; got {value!r}"
    return None


#: The characters that separate fields in TREC files (C's isspace in the C locale).
FIELD_SEPARATORS = frozenset(" \t\n\v\f\r")


def check_id(value: object, what: str) -> None:
    """Raise InputTypeError (not a str) or InputFormatError (unusable str) if ``value`` is no id."""
    problem = id_problem(value)
    if problem is not None:
        raise (InputTypeError if not isinstance(value, str) else InputFormatError)(f"{what} {problem}")


def _check_id(instance: object, attribute: Attribute[str], value: str) -> None:
    check_id(value, f"'{attribute.name}'")  # any object may arrive here: check_id says what is wrong


def _check_rank(instance: object, attribute: object, value: int | None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputTypeError(f"'rank' must be an int >= 1 or None; got {type(value).__name__} {value!r}")
    if value < 1:
        raise InputFormatError(f"'rank' must be >= 1 or None; got {value}")


def _to_score(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputTypeError(f"'score' must be a number or None; got {type(value).__name__} {value!r}")
    score = float(value)
    if math.isnan(score):
        # A NaN score would make the ranking order undefined (trec_eval's comparator is not consistent).
        raise InputFormatError("'score' must not be NaN")
    return score


def _to_relevance(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise InputTypeError(f"'relevance' must be an int; got {type(value).__name__} {value!r}")
    return value


@frozen
class Document:
    """One retrieved document (ireval's ``Document(documentNumber, rank, score)``).

    Parameters
    ----------
    doc_id : str
        Document identifier; non-empty, no whitespace.
    rank : int or None, default None
        1-based rank. Informational: a :class:`RetrievalEvaluator` ranks by list position. Documents
        that were not retrieved (``relevant_missed_documents``) have ``rank=None``.
    score : float or None, default None
        Retrieval score; NaN is rejected.

    Examples
    --------
    >>> Document("FBIS4-67701", 1, 14.2)
    Document(doc_id='FBIS4-67701', rank=1, score=14.2)
    """

    doc_id: str = field(validator=_check_id)
    rank: int | None = field(default=None, validator=_check_rank)
    score: float | None = field(default=None, converter=_to_score)


@frozen
class Judgment:
    """One relevance judgment (ireval's ``Judgment(documentNumber, judgment)``).

    ``relevance >= rel`` (default 1) means relevant, ``0 <= relevance < rel`` judged non-relevant,
    and a negative value means "pooled but not judged" (trec_eval's convention): it never counts
    as relevant nor as judged non-relevant.

    Examples
    --------
    >>> Judgment("FBIS4-67701", 2)
    Judgment(doc_id='FBIS4-67701', relevance=2)
    """

    doc_id: str = field(validator=_check_id)
    relevance: int = field(converter=_to_relevance)


# --------------------------------------------------------------------------------------------------
# Input columns (what readers and in-memory constructors produce)


@frozen
class QrelsColumns:
    """Judgments as parallel arrays. ``lines`` number the records 1.. in ``origin`` (for errors):
    file lines when ``unit == "line"``, else list positions."""

    query_ids: np.ndarray
    doc_ids: np.ndarray
    relevance: IntArray
    lines: IntArray
    origin: str = "<qrels>"
    unit: str = "line"
    #: The second column as subtopic (intent) ids, read only for the diversity measures; None otherwise.
    subtopics: np.ndarray | None = None




@frozen
class RunColumns:
    """Retrieved documents as parallel arrays, in input order."""

    query_ids: np.ndarray
    doc_ids: np.ndarray
    scores: FloatArray
    lines: IntArray
    origin: str = "<run>"
    run_id: str = ""
    unit: str = "line"
    ranks: IntArray | None = None  #: the file's rank column, read only when ranking by it


def _location(origin: str, unit: str, number: int) -> str:
    """``path:12`` for a file line, ``<origin>, position 3`` for an in-memory record."""
    return f"{origin}:{number}" if unit == "line" else f"{origin}, {unit} {number}"


def _display(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return str(value)
