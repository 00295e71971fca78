"""Records: iterables of objects with named fields, as ir_datasets' ``qrels_iter()`` and ``scoreddocs_iter()`` yield.

A qrels record has the attributes ``query_id``, ``doc_id`` and ``relevance`` (ir_datasets'
``TrecQrel(query_id, doc_id, relevance, iteration)``); a run record ``query_id``, ``doc_id`` and
``score`` (``GenericScoredDoc(query_id, doc_id, score)``). Any object with those attributes will do
(a namedtuple, a dataclass, an attrs class): nothing from ir_datasets is imported. Other attributes
are ignored. Values follow the rules of the in-memory dicts (:mod:`.dicts`): ids are non-empty str,
a relevance an int or a float (``1.0`` is read as 1, ``2.5`` kept as a float grade; not a bool or
NaN), a score a number (not a bool, str or NaN). An error names the record by its position (``qrels record 3``), counted from 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import Any

import numpy as np

from ..model import (
    GradeArray,
    InputFormatError,
    InputTypeError,
    QrelsColumns,
    RunColumns,
    relevance_column,
    to_relevance,
    to_score,
)
from .dicts import _check_ids

__all__ = ["QRELS_FIELDS", "RUN_FIELDS", "qrels_from_records", "run_from_records"]

QRELS_FIELDS = ("query_id", "doc_id", "relevance")
RUN_FIELDS = ("query_id", "doc_id", "score")


def qrels_from_records(records: Iterable[Any], origin: str = "qrels records") -> QrelsColumns:
    """The judgments of ``records``, objects with ``query_id``, ``doc_id`` and ``relevance`` attributes.

    Examples
    --------
    >>> from collections import namedtuple
    >>> TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")
    >>> qrels = qrels_from_records([TrecQrel("q1", "d1", 2, "0"), TrecQrel("q1", "d2", 0.0, "0")])
    >>> qrels.doc_ids.tolist(), qrels.relevance.tolist()
    (['d1', 'd2'], [2, 0])
    """
    query_ids, doc_ids, values = _fields(records, QRELS_FIELDS, "qrels", "TrecQrel")
    relevance: GradeArray | None
    try:
        relevance = np.asarray(values, dtype=np.int64) if set(map(type, values)) <= {int} else None
    except OverflowError:
        relevance = None
    if relevance is None:  # floats, NumPy numbers, or an error to name
        relevance = relevance_column([to_relevance(value, f"qrels record {n} ('relevance')")
                                      for n, value in enumerate(values, start=1)])
    return QrelsColumns(query_ids, doc_ids, relevance, np.arange(1, len(values) + 1), origin=origin, unit="record")


def run_from_records(records: Iterable[Any], origin: str = "run records") -> RunColumns:
    """The results of ``records``, objects with ``query_id``, ``doc_id`` and ``score`` attributes.

    Examples
    --------
    >>> from collections import namedtuple
    >>> ScoredDoc = namedtuple("GenericScoredDoc", "query_id doc_id score")
    >>> run_from_records([ScoredDoc("q1", "d1", 12.5), ScoredDoc("q1", "d2", 3)]).scores.tolist()
    [12.5, 3.0]
    """
    query_ids, doc_ids, values = _fields(records, RUN_FIELDS, "run", "GenericScoredDoc")
    scores = None
    if set(map(type, values)) <= {int, float}:
        try:
            scores = np.asarray(values, dtype=np.float64)
        except OverflowError:
            scores = None
        if scores is not None and np.isnan(scores).any():
            scores = None
    if scores is None:  # NumPy numbers, or an error to name
        scores = np.asarray([to_score(value, f"run record {n} ('score')") for n, value in enumerate(values, start=1)],
                            dtype=np.float64)
    return RunColumns(query_ids, doc_ids, scores, np.arange(1, len(values) + 1), origin=origin, unit="record")


def _fields(records: Iterable[Any], names: tuple[str, str, str], what: str,
            example: str) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """The ids (checked) and the raw values of every record, in order."""
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise InputTypeError(f"{what} records must be an iterable of objects with attributes {', '.join(names)} "
                             f"(as ir_datasets' {example}); got {type(records).__name__}")
    get = attrgetter(*names)
    rows: list[tuple[Any, Any, Any]] = []
    try:
        for record in records:
            rows.append(get(record))
    except AttributeError:
        record = locals().get("record")
        missing = [name for name in names if not hasattr(record, name)]
        raise InputTypeError(f"{what} record {len(rows) + 1} has no attribute {missing[0]!r}; expected objects with "
                             f"attributes {', '.join(names)} (as ir_datasets' {example}); got "
                             f"{type(record).__name__} {record!r:.100}") from None
    if not rows:
        raise InputFormatError(f"{what} records: none given; expected objects with attributes {', '.join(names)}")
    query_ids, doc_ids, values = (list(column) for column in zip(*rows))
    _check_ids(query_ids, f"{what} record query_id")  # one pass when every id is fine; else names the first bad one
    _check_ids(doc_ids, f"{what} record doc_id")
    return np.asarray(query_ids, dtype=str), np.asarray(doc_ids, dtype=str), values
