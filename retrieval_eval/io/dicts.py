"""In-memory inputs: pytrec_eval's dicts ``{query_id: {doc_id: value}}``, and one query's
Documents and Judgments, checked entry by entry with errors that name the entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..model import (
    FloatArray,
    InputFormatError,
    InputTypeError,
    IntArray,
    check_id,
    to_relevance,
    to_score,
)


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
