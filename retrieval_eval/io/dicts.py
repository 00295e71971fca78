"""In-memory inputs: pytrec_eval's dicts ``{query_id: {doc_id: value}}``, and one query's
Documents and Judgments, checked entry by entry with errors that name the entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from operator import attrgetter, methodcaller
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model import (
    Document,
    FloatArray,
    GradeArray,
    InputFormatError,
    InputTypeError,
    IntArray,
    Judgment,
    QrelsColumns,
    RunColumns,
    check_id,
    id_problem,
    relevance_column,
    to_relevance,
    to_score,
)
from ._tokens import words_gathered

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

__all__ = ["columns_from_dicts", "columns_from_documents"]


def columns_from_dicts(
    qrels: Mapping[str, Mapping[str, object]], run: Mapping[str, Mapping[str, object]],
) -> tuple[QrelsColumns, RunColumns]:
    """The columns of pytrec_eval-style dicts: ``{qid: {doc: relevance}}`` and ``{qid: {doc: score}}``.

    Entries keep the dicts' order. Ids, relevance values and scores follow the rules of
    :class:`Document` and :class:`Judgment`; an InputTypeError or InputFormatError names the entry.
    """
    _check_nested(qrels, "qrels", "{doc_id: relevance}")
    _check_nested(run, "run", "{doc_id: score}")
    fast_q, fast_r = _fast_id_columns(qrels), _fast_id_columns(run)
    if fast_q is not None and fast_r is not None:
        (qrels_q, qrels_d), (run_q, run_d) = fast_q, fast_r
    else:  # some id is not fine, or not plain UTF-8: checked one by one, the first bad one named
        _check_ids(qrels, "qrels query id")
        _check_ids(run, "run query id")
        qrels_docs, run_docs = list(chain.from_iterable(qrels.values())), list(chain.from_iterable(run.values()))
        _check_ids(qrels_docs, "qrels doc id")
        _check_ids(run_docs, "run doc id")
        qrels_q, run_q = _repeated_keys(qrels), _repeated_keys(run)
        qrels_d, run_d = np.asarray(qrels_docs, dtype=str), np.asarray(run_docs, dtype=str)
    relevance = _dict_relevance(qrels)
    scores = _dict_scores(run)
    columns_q = QrelsColumns(
        qrels_q, qrels_d, relevance, np.arange(1, len(qrels_q) + 1), origin="qrels dict", unit="entry",
    )
    columns_r = RunColumns(
        run_q, run_d, scores, np.arange(1, len(run_q) + 1), origin="run dict", unit="entry",
    )
    return columns_q, columns_r


def columns_from_documents(
    query_id: str, retrieved: Sequence[Document], judgments: Iterable[Judgment],
) -> tuple[QrelsColumns, RunColumns]:
    """The columns of one query: its ranking (list position is the rank) and its judgments.

    Raises InputFormatError if ``query_id`` is no id, InputTypeError if ``retrieved`` is not a list
    or tuple of Document or a judgment is not a Judgment.
    """
    problem = id_problem(query_id)
    if problem is not None:
        raise InputFormatError(f"'query_id' {problem}")
    if not isinstance(retrieved, (list, tuple)):
        raise InputTypeError(
            f"'retrieved' must be a list of Document in rank order; got {type(retrieved).__name__}"
        )
    if isinstance(judgments, (str, bytes, Mapping)):
        raise InputTypeError(f"'judgments' must be an iterable of Judgment; got {type(judgments).__name__}")
    judgments = list(judgments)
    if not set(map(type, retrieved)) <= {Document}:  # (told in C; a subclass is checked one by one)
        for position, doc in enumerate(retrieved):
            if not isinstance(doc, Document):
                _reject_item(query_id, f"'retrieved'[{position}]", Document, doc)
    if not set(map(type, judgments)) <= {Judgment}:
        for position, judgment in enumerate(judgments):
            if not isinstance(judgment, Judgment):
                _reject_item(query_id, f"'judgments' item {position}", Judgment, judgment)
    run = RunColumns(
        query_ids=_repeated(query_id, len(retrieved)),
        doc_ids=_id_column(list(map(_DOC_ID, retrieved))),
        scores=_score_column(retrieved),
        lines=np.arange(1, len(retrieved) + 1, dtype=np.int64),
        origin=f"retrieved list of query {query_id!r}", unit="position",
    )
    qrels = QrelsColumns(
        query_ids=_repeated(query_id, len(judgments)),
        doc_ids=_id_column(list(map(_DOC_ID, judgments))),
        relevance=relevance_column(list(map(_RELEVANCE, judgments))),
        lines=np.arange(1, len(judgments) + 1, dtype=np.int64),
        origin=f"judgments of query {query_id!r}", unit="item",
    )
    return qrels, run


_DOC_ID, _SCORE, _RELEVANCE = attrgetter("doc_id"), attrgetter("score"), attrgetter("relevance")


def _score_column(retrieved: Sequence[Document]) -> FloatArray:
    """The Documents' scores, NaN for a Document without one (``score=None``)."""
    try:
        return np.fromiter(map(_SCORE, retrieved), dtype=np.float64, count=len(retrieved))  # (one pass, in C)
    except TypeError:  # a None: NumPy's float conversion of a list makes it NaN
        return np.asarray(list(map(_SCORE, retrieved)), dtype=np.float64)


def _id_column(ids: list[str]) -> np.ndarray:
    """Checked ids as a column: bytes when all are ASCII (NumPy narrows them in C, so the batch
    needs no second pass to encode them), else str, which the build encodes as UTF-8.

    >>> _id_column(["d1", "d22"]), _id_column(["d\u00e9"])
    (array([b'd1', b'd22'], dtype='|S3'), array(['d\u00e9'], dtype='<U2'))
    """
    try:
        return _ascii_column(ids)
    except UnicodeEncodeError:
        return np.asarray(ids, dtype=str)


def _ascii_column(ids: list[str]) -> np.ndarray:
    """``np.asarray(ids, dtype="S")``, told its width (an ASCII id's length is its size in bytes),
    which spares NumPy its own scan for it: a fifth less time at 10,000 ids, half at 100. Raises
    UnicodeEncodeError on a character past ASCII (a lone surrogate too).

    >>> _ascii_column(["d1", "d22"]), _ascii_column([])
    (array([b'd1', b'd22'], dtype='|S3'), array([], dtype='|S1'))
    """
    return np.asarray(ids, dtype=f"S{max(map(len, ids), default=1)}")


def _repeated(query_id: str, n: int) -> np.ndarray:
    """``query_id`` ``n`` times, as a column of :func:`_id_column` (bytes when ASCII: not encoded again)."""
    return _id_column([query_id]).repeat(n) if n else np.asarray([], dtype=str)


def _check_nested(given: object, name: str, shape: str) -> None:
    """Raise InputTypeError unless ``given`` is a mapping of query ids to mappings (pytrec_eval's dicts)."""
    if not isinstance(given, Mapping):
        raise InputTypeError(f"{name!r} must be a mapping {{query_id: {shape}}}; got {type(given).__name__}")
    if set(map(type, given.values())) <= {dict}:  # the usual case, told in C without an ABC check each
        return
    for query_id, docs in given.items():
        if not isinstance(docs, Mapping):
            raise InputTypeError(
                f"{name}[{query_id!r}] must be a mapping {shape}; got {type(docs).__name__} {docs!r}"
            )


#: Value types NumPy converts exactly and in one pass (anything else is checked one entry at a time).
_FAST_SCORES = {float, int, np.float64, np.float32, np.int64, np.int32}
_FAST_RELEVANCE = {int, np.int64, np.int32}


def _values(given: Mapping[str, Mapping[str, object]]) -> Iterable[object]:
    """The values of a ``{qid: {doc: value}}`` dict, in entry order (iterated in C)."""
    return chain.from_iterable(map(_VALUES, given.values()))


_VALUES = methodcaller("values")
_JOIN = "\0".join


def _entries(given: Mapping[str, Mapping[str, object]]) -> int:
    return sum(map(len, given.values()))


def _dict_scores(run: Mapping[str, Mapping[str, object]]) -> FloatArray:
    """The run's scores in entry order; a bool, str, NaN or too large score raises, naming its entry."""
    if set(map(type, _values(run))) <= _FAST_SCORES:
        try:
            scores = np.fromiter(_values(run), dtype=np.float64, count=_entries(run))
        except OverflowError:
            scores = None
        if scores is not None and not np.isnan(scores).any():
            return scores
    return np.asarray([
        to_score(score, f"run score of query {q!r}, document {d!r}") for q, docs in run.items() for d, score in docs.items()
    ], dtype=np.float64)


def _dict_relevance(qrels: Mapping[str, Mapping[str, object]]) -> GradeArray:
    """The qrels' relevance values in entry order, by :class:`Judgment`'s rule (a bool or str raises): an
    int64 column, or a float64 one when a grade is not integral (:func:`~retrieval_eval.model.grade_column`)."""
    if set(map(type, _values(qrels))) <= _FAST_RELEVANCE:
        try:
            return np.fromiter(_values(qrels), dtype=np.int64, count=_entries(qrels))
        except OverflowError:
            pass
    return relevance_column([
        to_relevance(value, f"qrels relevance of query {q!r}, document {d!r}")
        for q, docs in qrels.items() for d, value in docs.items()
    ])


def _fast_id_columns(given: Mapping[str, Mapping[str, object]]) -> tuple[np.ndarray, np.ndarray] | None:
    """The query id and document id of each entry of a ``{qid: {doc: value}}`` dict, in entry order,
    as UTF-8 bytes arrays made in one pass over all ids; None if some id is not a fine id, is not plain
    UTF-8 (a file's undecodable bytes kept as surrogates), or is far longer than the rest."""
    counts = np.fromiter(map(len, given.values()), dtype=np.int64, count=len(given))
    n = int(counts.sum())
    queries = _joined_bytes(given, len(given))
    # Each query's ids joined, then those joins (empty queries left out, which would add a separator):
    # the same text as one join of every id, a third faster than chaining the dicts' keys.
    docs = _joined_bytes(map(_JOIN, filter(None, given.values())), n)
    if queries is None or docs is None:
        return None
    query_ids, doc_ids = _split_ids(queries, len(given)), _split_ids(docs, n)
    if query_ids is None or doc_ids is None:
        return None
    return np.repeat(query_ids, counts), doc_ids


def _repeated_keys(given: Mapping[str, Mapping[str, object]]) -> np.ndarray:
    """Each entry's query id, as a str array."""
    return np.asarray([q for q, docs in given.items() for _ in docs], dtype=str)


def _joined_bytes(ids: Iterable[object], count: int) -> bytes | None:
    """``count`` ids NUL-joined and encoded as UTF-8 (strict) if every one is a fine id, else None.

    One join and one encode in C for all ids: no step per id in Python. NUL cannot be in an id, so
    the ids are fine when the join holds ``count - 1`` NULs, none at either end or two in a row,
    and encodes (a lone surrogate does not).
    """
    try:
        joined = "\0".join(ids)  # type: ignore[arg-type]  # not yet known to be str: TypeError otherwise
        data = joined.encode("utf-8")
    except (TypeError, UnicodeEncodeError):
        return None
    if count == 0 or data.count(b"\0") != count - 1 or b"\0\0" in data:
        return None if count else b""
    if not data or data[0] == 0 or data[-1] == 0:
        return None
    return data


#: Widest fixed-width column made from joined ids, per byte of the ids: a few far longer ids than the
#: rest take the entry-by-entry path, whose str column would be four times as wide again.
_MAX_WIDENING = 16


def _split_ids(data: bytes, count: int) -> np.ndarray | None:
    """The ``count`` NUL-separated ids of ``data`` as a fixed-width bytes array, the bytes of each
    id placed with whole-array steps; None when that array would be far larger than ``data``."""
    if count == 0:
        return np.zeros(0, dtype="S1")
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == 0)
    starts = np.empty(count, dtype=np.int64)
    starts[0] = 0
    starts[1:] = ends + 1
    lengths = np.empty(count, dtype=np.int64)
    lengths[:-1] = ends - starts[:-1]
    lengths[-1] = len(buf) - starts[-1]
    width = int(lengths.max())
    if count * width > _MAX_WIDENING * len(buf) + 4096:
        return None
    if width == int(lengths.min()):  # all ids of one length: the separators are every width+1 bytes
        padded = np.zeros(count * (width + 1), dtype=np.uint8)
        padded[:-1] = buf
        return np.ascontiguousarray(padded.reshape(count, width + 1)[:, :width]).view(f"S{width}").ravel()
    if width <= _GATHER_WIDTH:
        return _gathered(buf, starts, lengths, width)
    # Byte i of id k goes to column i - starts[k] of row k, in rows of width + 1 bytes: an id's
    # separator lands in its own row, past its last byte (a NUL, as padding is), and is cut off after.
    spans = lengths + 1
    spans[-1] -= 1  # the last id has no separator
    out = np.zeros(count * (width + 1), dtype=np.uint8)
    shift = np.arange(0, count * (width + 1), width + 1, dtype=np.int64)
    shift -= starts
    target = np.repeat(shift, spans)
    target += np.arange(len(buf), dtype=np.int64)
    out[target] = buf
    return np.ascontiguousarray(out.reshape(count, width + 1)[:, :width]).view(f"S{width}").ravel()


#: Ids up to this many bytes wide are split by :func:`_gathered`; wider ones by an index of every byte.
_GATHER_WIDTH = 32


def _gathered(buf: npt.NDArray[np.uint8], starts: IntArray, lengths: IntArray, width: int) -> np.ndarray:
    """The ids at ``starts`` (of ``lengths`` bytes) in ``buf`` as an ``S{width}`` array, copied 8
    bytes at a time as the file reader copies its fields (:func:`~._tokens.words_gathered`): one
    gather per 8 bytes of id, rather than an index of every byte of ``buf`` (8 bytes of index per
    byte of id: 10 M ids of 7 bytes take 0.8 GB and seconds to scatter).

    >>> data = np.frombuffer(b"ab\\0c\\0def", dtype=np.uint8)
    >>> _gathered(data, np.array([0, 3, 5]), np.array([2, 1, 3]), 3)
    array([b'ab', b'c', b'def'], dtype='|S3')
    """
    padded = np.zeros(len(buf) + 8, dtype=np.uint8)  # a word read at the end stays in the buffer
    padded[: len(buf)] = buf
    at = np.ndarray((len(buf) + 1,), dtype=np.uint64, buffer=padded, strides=(1,))
    words = words_gathered(at, starts, lengths, width, int(lengths.min()), len(buf))
    if words.dtype.itemsize == width:
        return words
    # Cut to the ids' own width (the bytes past it are padding): the column the general path makes.
    return np.ascontiguousarray(words.view(np.uint8).reshape(len(starts), -1)[:, :width]).view(f"S{width}").ravel()


def _check_ids(given: Iterable[object], what: str) -> None:
    """Raise if any of ``ids`` is not a usable in-memory id (see :func:`model.id_problem`)."""
    ids: list[Any] = list(given)  # not yet known to be str: join raises TypeError otherwise
    try:
        joined = "\0".join(ids)  # one pass in C for the common case: every id fine
    except TypeError:
        joined = None
    if joined is not None and not _BAD_ID.search(joined) and joined.count("\0") == len(ids) - 1:
        return
    for value in ids:  # error path: find the first offender
        check_id(value, what)


def _reject_item(query_id: str, where: str, expected: type, item: object) -> None:
    """Raise for an item of the wrong type, recognising the (query_id, item) pairs of the readers."""
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], expected):
        if item[0] != query_id:  # read_qrels/read_run pairs of the whole file, not of this query
            raise InputFormatError(f"{where} belongs to query {item[0]!r}, not {query_id!r}; got {item!r}")
        raise InputTypeError(f"{where} must be a {expected.__name__}, not a (query_id, {expected.__name__}) "
                             f"pair; got {item!r}")
    raise InputTypeError(f"{where} must be a {expected.__name__}; got {type(item).__name__} {item!r}")


#: In NUL-joined ids: a lone surrogate (not UTF-8), or an empty id (two NULs in a row, or one at either end).
_BAD_ID = re.compile("[\ud800-\udfff]|\0\0|^\0|\0$|^$")
