"""Value objects of the per-query API: a retrieved :class:`Document` and a :class:`Judgment`.

They are frozen attrs classes: cheap to compare and hash, validated on construction, and free of any
file format (the readers in :mod:`retrieval_eval.trec` produce them, the model never parses).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import numpy as np
from attrs import Attribute, field, fields, frozen

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

FloatArray: TypeAlias = "npt.NDArray[np.float64]"

IntArray: TypeAlias = "npt.NDArray[np.int64]"

BoolArray: TypeAlias = "npt.NDArray[np.bool_]"

#: A relevance column: int64 grades, or float64 grades when some grade is not integral (2.5).
GradeArray: TypeAlias = "npt.NDArray[np.number[Any]]"


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
    """Why ``value`` cannot be a query or document id in memory, or None if it can.

    In the Python API an id is data: any non-empty ``str``, spaces and tabs included
    (``RetrievalEvaluator("laptop bag", ...)``). It must be encodable as UTF-8, since ids are
    compared as UTF-8 bytes (trec_eval's ``strcmp`` order), so a lone surrogate (``"\\ud800"``) is
    refused, except those that stand for bytes that are not UTF-8 in an id read from a file (see
    :func:`id_text`); so is NUL, since NumPy's string arrays (and C tools) cut strings at it, which would make
    ``"a\\0"`` the same id as ``"a"``. Only writing an id into a TREC file needs more: see
    :func:`field_problem`.
    """
    if not isinstance(value, str):
        return f"must be a str; got {type(value).__name__} {value!r}"
    if not value or "\0" in value:
        return f"must be a non-empty str without NUL; got {value!r}"
    if not value.isascii() and _SURROGATE.search(value) and not _escapes_bytes(value):  # (ASCII: told in C)
        return f"must be encodable as UTF-8 (no lone surrogate); got {value!r}"
    return None


def id_text(raw: bytes) -> str:
    """The str that keys an id read from a file: its UTF-8 text, each byte that is not UTF-8 kept
    as a lone surrogate (U+DC80-U+DCFF, Python's ``surrogateescape``). Distinct bytes stay distinct
    ids (``b"q\\xe9"`` is not the text ``q\\xe9``), and ``id_bytes`` gives the exact bytes back."""
    return raw.decode("utf-8", "surrogateescape")


def id_bytes(value: str) -> bytes:
    """The bytes of an id: its UTF-8, with the bytes kept by :func:`id_text` restored."""
    return value.encode("utf-8", "surrogateescape")


def _escapes_bytes(value: str) -> bool:
    """Whether the surrogates of ``value`` are bytes kept by :func:`id_text` (so that it is the key of
    some bytes, and no other str is): ids given back by the readers are valid ids again."""
    try:
        return id_text(id_bytes(value)) == value
    except UnicodeEncodeError:  # a surrogate outside U+DC80-U+DCFF
        return False


def field_problem(value: object) -> str | None:
    """Why ``value`` cannot be written as a field of a TREC file, or None if it can.

    On top of :func:`id_problem`, a field must not contain the bytes that separate fields there
    (C's isspace: space, \\t, \\n, \\v, \\f, \\r). Other characters, Unicode spaces included, are
    data, as they are in a file.
    """
    problem = id_problem(value)
    if problem is None and not FIELD_SEPARATORS.isdisjoint(cast(str, value)):
        return f"cannot be written to a TREC file: it contains whitespace, which separates fields there; got {value!r}"
    return problem


#: The characters that separate fields in TREC files (C's isspace in the C locale).
FIELD_SEPARATORS = frozenset(" \t\n\v\f\r")

#: A code point that UTF-8 cannot encode: in a Python str, only a lone surrogate is one.
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_id(value: object, what: str) -> None:
    """Raise InputTypeError (not a str) or InputFormatError (unusable str) if ``value`` is no id."""
    problem = id_problem(value)
    if problem is not None:
        raise (InputTypeError if not isinstance(value, str) else InputFormatError)(f"{what} {problem}")


def check_field(value: object, what: str) -> None:
    """Like :func:`check_id`, for an id about to be written to a TREC file (see :func:`field_problem`)."""
    problem = field_problem(value)
    if problem is not None:
        raise (InputTypeError if not isinstance(value, str) else InputFormatError)(f"{what} {problem}")


def _check_id(instance: object, attribute: Attribute[str], value: str) -> None:
    check_id(value, f"'{attribute.name}'")  # any object may arrive here: check_id says what is wrong


#: Integer grades are stored as int64 (trec_eval reads them with atol into a long); float grades
#: are held to the same range.
_INT64 = (-(2**63), 2**63 - 1)


def optional_int_at_least(value: object, what: str, minimum: int) -> int | None:
    """``value`` as an int >= ``minimum`` or None (a NumPy int is taken as the int it holds).

    InputTypeError for another type (a bool, 1.5, '3'), InputFormatError for an int below ``minimum``;
    ``what`` names the argument in the message, e.g. ``"'max_depth'"``.
    """
    if value is None:
        return None
    if isinstance(value, np.integer):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputTypeError(f"{what} must be an int >= {minimum} or None; got {type(value).__name__} {value!r}")
    if value < minimum:
        raise InputFormatError(f"{what} must be >= {minimum} or None; got {value}")
    return value


def _to_rank(value: object) -> int | None:
    return optional_int_at_least(value, "'rank'", 1)


def is_number(value: object) -> bool:
    """A Python or NumPy int or float, not a bool (nor a str that looks like a number)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def to_score(value: object, what: str = "'score'") -> float:
    """A score as a float: any int or float, Python or NumPy, but not a bool, a str or NaN."""
    if not is_number(value):
        raise InputTypeError(f"{what} must be a number; got {type(value).__name__} {value!r}")
    try:
        score = float(cast(float, value))
    except OverflowError:
        raise InputFormatError(f"{what} is too large for a float; got {value!r}") from None
    if math.isnan(score):
        # A NaN score would make the ranking order undefined (trec_eval's comparator is not consistent).
        raise InputFormatError(f"{what} must not be NaN")
    return score


def _to_score(value: object) -> float | None:
    if value is None:
        return None
    if not is_number(value):
        raise InputTypeError(f"'score' must be a number or None; got {type(value).__name__} {value!r}")
    return to_score(value)


def to_relevance(value: object, what: str = "'relevance'") -> int | float:
    """A relevance grade: an int as it is, a float that is not integral as it is (``2.5``, an LLM
    judge's mean), an integral float as the int it holds (``2.0`` is 2, so integer qrels stay integer).

    A Python or NumPy number, not a bool or str (InputTypeError); NaN, an infinity or a value beyond
    int64 raise InputFormatError.

    >>> to_relevance(2.0), to_relevance(2.5), to_relevance(np.int8(-1))
    (2, 2.5, -1)
    """
    if isinstance(value, (float, np.floating)):
        grade = float(value)
        if not math.isfinite(grade):
            raise InputFormatError(f"{what} must be a finite number; got {value!r}")
        if not grade.is_integer():
            if not _INT64[0] <= grade <= _INT64[1]:
                raise InputFormatError(f"{what} must lie within [-2**63, 2**63 - 1]; got {value!r}")
            return grade
        value = int(grade)
    if isinstance(value, np.integer):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputTypeError(f"{what} must be an int or a float; got {type(value).__name__} {value!r}")
    if not _INT64[0] <= value <= _INT64[1]:
        raise InputFormatError(f"{what} must fit in a 64-bit integer [-2**63, 2**63 - 1]; got {value}")
    return value


def bad_grade(values: npt.NDArray[np.floating[Any]]) -> int | None:
    """The index of the first value of ``values`` that is no grade (NaN, an infinity, or beyond
    int64's range, as :func:`to_relevance` has it), or None when every one is a grade."""
    bad = ~np.isfinite(values)
    bad |= np.abs(values) >= 2.0**63  # (2**63 itself is a float no int64 holds)
    return int(np.argmax(bad)) if bool(bad.any()) else None


def grade_column(values: npt.NDArray[np.floating[Any]]) -> GradeArray:
    """Grades read as floats (checked by :func:`bad_grade`) as a relevance column: int64 when every one
    is integral, so that integer qrels give the integer column and the same outputs; float64 as they
    are when one is not (then every grade of the column is a float).

    >>> grade_column(np.array([2.0, 0.0])).dtype, grade_column(np.array([2.5, 0.0])).tolist()
    (dtype('int64'), [2.5, 0.0])
    """
    if bool(np.all(np.floor(values) == values)):
        return values.astype(np.int64)
    return values.astype(np.float64, copy=False)


def relevance_column(grades: list[int | float]) -> GradeArray:
    """Grades checked by :func:`to_relevance` as a column: int64 when every one is an int (an integral
    float is one by then), float64 when one is a float grade (NumPy tells, in C)."""
    column = np.asarray(grades)
    if column.dtype.kind == "f" and len(column):
        return column.astype(np.float64, copy=False)
    return column.astype(np.int64, copy=False)


def _to_relevance(value: object) -> int | float:
    return to_relevance(value)


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()


def _repr(self: Any) -> str:
    """attrs' repr, except that it works on an object whose constructor failed (a debugger shows those)."""
    names = [a.name for a in fields(type(self))]
    return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n, _UNSET)!r}' for n in names)})"


@frozen(repr=False)
class Document:
    """One retrieved document (ireval's ``Document(documentNumber, rank, score)``).

    Parameters
    ----------
    doc_id : str
        Document identifier: any non-empty str (spaces included) without NUL or lone surrogates;
        only :func:`~retrieval_eval.trec.write_run` refuses whitespace, which a TREC file cannot hold.
    rank : int or None, default None
        1-based rank (a NumPy integer is taken as the int it holds). Informational: a
        :class:`RetrievalEvaluator` ranks by list position. Documents that were not retrieved (``relevant_missed_documents``) have ``rank=None``.
    score : float or None, default None
        Retrieval score: a Python or NumPy int or float, stored as a float; NaN, bool and str are
        rejected (:class:`InputFormatError`, :class:`InputTypeError`).

    Examples
    --------
    >>> Document("FBIS4-67701", 1, 14.2)
    Document(doc_id='FBIS4-67701', rank=1, score=14.2)
    """

    doc_id: str = field(validator=_check_id)
    rank: int | None = field(default=None, converter=_to_rank)
    score: float | None = field(default=None, converter=_to_score)

    __repr__ = _repr


@frozen(repr=False)
class Judgment:
    """One relevance judgment (ireval's ``Judgment(documentNumber, judgment)``).

    ``relevance >= rel`` (default 1) means relevant, ``0 <= relevance < rel`` judged non-relevant,
    and a negative value means "pooled but not judged" (trec_eval's convention): it never counts
    as relevant nor as judged non-relevant.

    ``doc_id`` follows :class:`Document`'s rule. ``relevance`` is a grade, a Python or NumPy int or
    float (:func:`to_relevance`): an integral float is stored as the int it holds, any other float
    (2.5, from an LLM judge) as it is; NaN, an infinity or a value beyond int64 raises
    :class:`InputFormatError`, and a bool or str :class:`InputTypeError`.

    Examples
    --------
    >>> Judgment("FBIS4-67701", 2), Judgment("FBIS4-67701", 2.0), Judgment("FBIS4-67701", 2.5)
    (Judgment(doc_id='FBIS4-67701', relevance=2), Judgment(doc_id='FBIS4-67701', relevance=2), Judgment(doc_id='FBIS4-67701', relevance=2.5))
    """

    doc_id: str = field(validator=_check_id)
    relevance: int | float = field(converter=_to_relevance)

    __repr__ = _repr


def unranked_documents(doc_ids: list[str]) -> list[Document]:
    """``[Document(doc_id) for doc_id in doc_ids]`` for ids that a Document or Judgment already holds
    (so checked): the same values, without the check and the converters run again for each.

    >>> unranked_documents(["a", "b"]) == [Document("a"), Document("b")]
    True
    """
    documents = []
    for doc_id in doc_ids:
        document = _new_document(Document)
        _set_field(document, "doc_id", doc_id)
        _set_field(document, "rank", None)
        _set_field(document, "score", None)
        documents.append(document)
    return documents


_new_document, _set_field = Document.__new__, object.__setattr__  # (attrs' frozen classes set fields so)


# --------------------------------------------------------------------------------------------------
# Input columns (what readers and in-memory constructors produce)


@frozen
class QrelsColumns:
    """Judgments as parallel arrays. ``lines`` number the records 1.. in ``origin`` (for errors):
    file lines when ``unit == "line"``, else list positions; an empty ``unit`` names none (errors
    then name the ids only)."""

    query_ids: np.ndarray
    doc_ids: np.ndarray
    relevance: GradeArray  #: int64, or float64 when a grade is not integral (see :func:`grade_column`)
    lines: IntArray
    origin: str = "<qrels>"
    unit: str = "line"
    #: The second column as subtopic (intent) ids, read only for the diversity measures; None otherwise.
    subtopics: np.ndarray | None = None
    #: What those ids are, as errors name them: "subtopic", or "judgment group" (``-R qrels_jg``).
    second_column: str = "subtopic"
    #: Preference judgments (trec_eval ``-R prefs`` or ``qrels_prefs``); the rows above then list each
    #: judged (query, document) once, so that the query set and the join see them as judgments.
    preferences: PrefsColumns | None = None




@frozen
class PrefsColumns:
    """Preference judgments as parallel arrays, one row per ``qid jg jsg docno rel_level`` line (the
    preferences are implied within a judgment subgroup: a higher rel_level is preferred). ``lines``
    number the rows 1.. in ``origin``, as in :class:`QrelsColumns`."""

    query_ids: np.ndarray
    groups: np.ndarray  #: judgment group (jg) of each row: one assessor, one information need
    subgroups: np.ndarray  #: judgment subgroup (jsg) within its group
    doc_ids: np.ndarray
    levels: FloatArray  #: rel_level: a finite number >= 0; 0 means judged non-relevant
    lines: IntArray
    origin: str = "<prefs>"
    unit: str = "line"


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
    """``path:12`` for a file line, ``<origin>, position 3`` for an in-memory record, and ``origin``
    alone when ``unit`` is empty: records without a position a user could find (a Spark partition's)."""
    if not unit:
        return origin
    return f"{origin}:{number}" if unit == "line" else f"{origin}, {unit} {number}"


def _first_at(unit: str, number: int) -> str:
    """`` (first at line 3)`` after a duplicate's ids; nothing when records have no position (``unit`` empty)."""
    return f" (first at {unit} {number})" if unit else ""


def _display(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return str(value)
