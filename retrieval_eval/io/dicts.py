"""In-memory inputs: pytrec_eval's dicts ``{query_id: {doc_id: value}}``, and one query's
Documents and Judgments, checked entry by entry with errors that name the entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..model import (
    Document,
    FloatArray,
    InputFormatError,
    InputTypeError,
    IntArray,
    Judgment,
    QrelsColumns,
    RunColumns,
    check_id,
    id_problem,
    to_relevance,
    to_score,
)

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
    _check_ids(qrels, "qrels query id")
    _check_ids(run, "run query id")
    qrels_q = [q for q, docs in qrels.items() for _ in docs]
    qrels_d = [d for docs in qrels.values() for d in docs]
    run_q = [q for q, docs in run.items() for _ in docs]
    run_d = [d for docs in run.values() for d in docs]
    _check_ids(qrels_d, "qrels doc id")
    _check_ids(run_d, "run doc id")
    relevance = _dict_relevance(qrels)
    scores = _dict_scores(run)
    columns_q = QrelsColumns(
        np.asarray(qrels_q, dtype=str), np.asarray(qrels_d, dtype=str),
        relevance, np.arange(1, len(qrels_q) + 1), origin="qrels dict", unit="entry",
    )
    columns_r = RunColumns(
        np.asarray(run_q, dtype=str), np.asarray(run_d, dtype=str), scores,
        np.arange(1, len(run_q) + 1), origin="run dict", unit="entry",
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
    for position, doc in enumerate(retrieved):
        if not isinstance(doc, Document):
            _reject_item(query_id, f"'retrieved'[{position}]", Document, doc)
    for position, judgment in enumerate(judgments):
        if not isinstance(judgment, Judgment):
            _reject_item(query_id, f"'judgments' item {position}", Judgment, judgment)
    run = RunColumns(
        query_ids=np.asarray([query_id] * len(retrieved), dtype=str),
        doc_ids=np.asarray([d.doc_id for d in retrieved], dtype=str),
        scores=np.asarray([np.nan if d.score is None else d.score for d in retrieved], dtype=np.float64),
        lines=np.arange(1, len(retrieved) + 1, dtype=np.int64),
        origin=f"retrieved list of query {query_id!r}", unit="position",
    )
    qrels = QrelsColumns(
        query_ids=np.asarray([query_id] * len(judgments), dtype=str),
        doc_ids=np.asarray([j.doc_id for j in judgments], dtype=str),
        relevance=np.asarray([j.relevance for j in judgments], dtype=np.int64),
        lines=np.arange(1, len(judgments) + 1, dtype=np.int64),
        origin=f"judgments of query {query_id!r}", unit="item",
    )
    return qrels, run


def _check_nested(given: object, name: str, shape: str) -> None:
    """Raise InputTypeError unless ``given`` is a mapping of query ids to mappings (pytrec_eval's dicts)."""
    if not isinstance(given, Mapping):
        raise InputTypeError(f"{name!r} must be a mapping {{query_id: {shape}}}; got {type(given).__name__}")
    for query_id, docs in given.items():
        if not isinstance(docs, Mapping):
            raise InputTypeError(
                f"{name}[{query_id!r}] must be a mapping {shape}; got {type(docs).__name__} {docs!r}"
            )


#: Value types NumPy converts exactly and in one pass (anything else is checked one entry at a time).
_FAST_SCORES = {float, int, np.float64, np.float32, np.int64, np.int32}
_FAST_RELEVANCE = {int, np.int64, np.int32}


def _dict_scores(run: Mapping[str, Mapping[str, object]]) -> FloatArray:
    """The run's scores in entry order; a bool, str, NaN or too large score raises, naming its entry."""
    values = [s for docs in run.values() for s in docs.values()]
    if set(map(type, values)) <= _FAST_SCORES:
        try:
            scores = np.asarray(values, dtype=np.float64)
        except OverflowError:
            scores = None
        if scores is not None and not np.isnan(scores).any():
            return scores
    return np.asarray([
        to_score(score, f"run score of query {q!r}, document {d!r}") for q, docs in run.items() for d, score in docs.items()
    ], dtype=np.float64)


def _dict_relevance(qrels: Mapping[str, Mapping[str, object]]) -> IntArray:
    """The qrels' relevance values in entry order, by :class:`Judgment`'s rule (a bool or str raises)."""
    values = [r for docs in qrels.values() for r in docs.values()]
    if set(map(type, values)) <= _FAST_RELEVANCE:
        try:
            return np.asarray(values, dtype=np.int64)
        except OverflowError:
            pass
    return np.asarray([
        to_relevance(value, f"qrels relevance of query {q!r}, document {d!r}")
        for q, docs in qrels.items() for d, value in docs.items()
    ], dtype=np.int64)


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
