"""The batch of one query read straight from its Documents and Judgments: the harness loop's path.

:class:`~.query.RetrievalEvaluator` is built once per query in a loop over queries, so the columns
(:func:`~..io.dicts.columns_from_documents`) and the many-query build cost more than the four
measures asked after them. :func:`direct_batch` reads the ids once as Python lists, labels the
ranking with a dict lookup, and keeps the lists for the document-list methods. The id and score
columns, which no measure of a harness loop reads, are made from the lists when first read. It
declines (returns None) whatever it does not handle the usual way: the general path then builds
the batch, and names any problem in the input with its own message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress, filterfalse, repeat
from operator import attrgetter, countOf, le
from typing import Any, cast

import numpy as np

from ..engine.batch import NONPOOL, UNJUDGED, RankedBatch
from ..engine.ids import _as_bytes
from ..io.dicts import _id_column, _score_column
from ..model import Document, Judgment, id_bytes, id_problem, relevance_column

__all__ = ["DIRECT_MAX", "OneQuery", "direct_batch", "missed_ids"]

_DOC_ID, _RELEVANCE = attrgetter("doc_id"), attrgetter("relevance")

#: The longest ranking read straight from its Documents; longer ones take the columns and the build,
#: whose sort-based join of the ids overtakes a dict of every ranked id at about 100,000 documents
#: (measured, a query with four calls: 1.0 against 1.9 ms at 10,000, 7.4 against 9.4 ms at 60,000,
#: 14 against 15 ms at 100,000, 0.33 against 0.19 s at 1,000,000).
DIRECT_MAX = 2**16


#: What the slot of a column made on first read holds until then.
_NOT_MADE: Any = None


def _made_on_read(name: str, make: Callable[[OneQuery], np.ndarray]) -> Any:
    """A column of :class:`OneQuery` that is ``make(batch)``, made when first read and kept in the
    batch's own slot for ``name`` (the attribute of :class:`RankedBatch`), which holds
    :data:`_NOT_MADE` until then."""
    slot = RankedBatch.__dict__[name]  # the member descriptor of the attrs class's slot

    def read(batch: OneQuery) -> np.ndarray:
        column: np.ndarray = slot.__get__(batch)
        if column is _NOT_MADE:
            column = make(batch)
            slot.__set__(batch, column)
        return column

    return property(read, slot.__set__, doc=f"``{name}``, made from the Documents and Judgments when first read.")


def _ids_column(ids: list[str]) -> np.ndarray:
    """The bytes column the build makes of ``ids`` (ASCII narrowed in C, others as UTF-8)."""
    return _as_bytes(_id_column(ids))


class OneQuery(RankedBatch):
    """The batch of one query read from its Documents and Judgments, with their ids as Python lists
    (for the document-list methods). Its ranked and judged id columns and its scores are made from
    the lists when first read: the measures of a harness loop read only the labels and the judged
    values, and at 10,000 documents these three columns cost as much as everything else of a query."""

    __slots__ = ("_retrieved", "judged_ids", "relevance", "row_of")
    row_of: dict[str, int]  #: each ranked id's row (its rank - 1)
    judged_ids: list[str]  #: the judged ids, in input order
    relevance: list[int | float]  #: the judged values, as ``judged_ids``
    _retrieved: Sequence[Document]

    doc_ids = _made_on_read("doc_ids", lambda b: _ids_column(list(b.row_of)))
    scores = _made_on_read("scores", lambda b: _score_column(b._retrieved))
    judged_doc_ids = _made_on_read("judged_doc_ids", lambda b: _ids_column(b.judged_ids))

    def __getstate__(self) -> dict[str, Any]:
        """attrs' state of the batch (its columns made), with the lists: a copy or a pickle keeps them."""
        state = cast(dict[str, Any], super().__getstate__())  # (attrs makes it a dict of the fields)
        state.update((name, getattr(self, name)) for name in OneQuery.__slots__ if hasattr(self, name))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)  # type: ignore[misc]  # (attrs' sets its fields, and only those)
        for name in OneQuery.__slots__:
            if name in state:
                setattr(self, name, state[name])


def direct_batch(query_id: str, retrieved: Sequence[Document], judgments: list[Judgment]) -> OneQuery | None:
    """The batch ``build_batch`` makes of one query's ranking and judgments (the same arrays, the same
    dtypes), or None for the general build: an id repeats, ``query_id`` is no id, an item is not
    exactly a Document or Judgment (a subclass is checked one by one there), or ``retrieved`` is
    not a list or tuple, or longer than :data:`DIRECT_MAX`.

    >>> one = direct_batch("q", [Document("a"), Document("b")], [Judgment("b", 2), Judgment("c", -1)])
    >>> one.labels.tolist(), one.judged_doc_ids.tolist()
    ([-1, 2], [b'b', b'c'])
    >>> direct_batch("q", [Document("a"), Document("a")], []) is None  # repeated: the build names it
    True
    """
    if type(retrieved) not in (list, tuple) or len(retrieved) > DIRECT_MAX or id_problem(query_id) is not None:
        return None
    # Exactly Documents and Judgments: a count of the types that are (compared by identity, in C)
    if countOf(map(type, retrieved), Document) < len(retrieved) or countOf(map(type, judgments), Judgment) < len(judgments):
        return None
    judged_ids = list(map(_DOC_ID, judgments))
    relevance = list(map(_RELEVANCE, judgments))
    n = len(retrieved)
    # Each ranked id's row: one dict both finds the judged ids among the ranked ones (a lookup per
    # judgment, where a lookup per ranked document would cost a step for each of 10,000) and
    # tells a repeated id (fewer keys than ids); its keys are the ranked ids, in rank order. Equal
    # str are equal UTF-8 bytes, and the reverse.
    row_of = {doc.doc_id: row for row, doc in enumerate(retrieved)}  # (a quarter faster than dict(zip(map(...))))
    if len(row_of) != n or len(set(judged_ids)) != len(judged_ids):
        return None
    judged_relevance = relevance_column(relevance)  # float64 when a grade is a float (2.5)
    # A judged row's label is its value, UNJUDGED if negative (as PreparedQrels labels them). The
    # judged ids that are not ranked write to one row past the ranking, which is then cut off.
    rows = np.fromiter(map(row_of.get, judged_ids, repeat(n)), dtype=np.int64, count=len(judged_ids))
    labels = np.empty(n + 1, dtype=judged_relevance.dtype)
    labels.fill(NONPOOL)
    labels[rows] = np.where(judged_relevance < 0, UNJUDGED, judged_relevance) if min(relevance, default=0) < 0 \
        else judged_relevance
    batch = OneQuery(
        query_vocab=np.array([id_bytes(query_id)]),
        offsets=np.array([0, n], dtype=np.int64),
        labels=labels[:n],
        doc_ids=_NOT_MADE,
        scores=_NOT_MADE,
        judged_offsets=np.array([0, len(judged_ids)], dtype=np.int64),
        judged_relevance=judged_relevance,
        judged_doc_ids=_NOT_MADE,
        in_run=np.array([n > 0]),
    )
    # (a tuple: the caller may change its list afterwards; Documents are frozen)
    batch._retrieved, batch.row_of = tuple(retrieved), row_of
    batch.judged_ids, batch.relevance = judged_ids, relevance
    return batch


def missed_ids(one: OneQuery, rel: int) -> list[str]:
    """The relevant judged ids (value >= ``rel`` and >= 0) that the ranking lacks, sorted by their
    UTF-8 bytes (the str order, but for the bytes that :func:`~..model.id_text` keeps as surrogates)."""
    relevant = compress(one.judged_ids, map(le, repeat(max(rel, 0)), one.relevance))  # (iterated in C)
    missed = list(filterfalse(one.row_of.__contains__, relevant))
    return sorted(missed) if all(map(str.isascii, missed)) else sorted(missed, key=id_bytes)
