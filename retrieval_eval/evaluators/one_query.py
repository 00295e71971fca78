"""The batch of one query read straight from its Documents and Judgments: the harness loop's path.

:class:`~.query.RetrievalEvaluator` is built once per query in a loop over queries, so the columns
(:func:`~..io.dicts.columns_from_documents`) and the many-query build cost more than the four
measures asked after them. :func:`direct_batch` reads the ids once as Python lists, labels the
ranking with a dict lookup, and keeps the lists for the document-list methods. It declines
(returns None) whatever it does not handle the usual way: the general path then builds the batch,
and names any problem in the input with its own message.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

import numpy as np
from attrs import frozen

from ..engine.batch import NONPOOL, UNJUDGED, RankedBatch
from ..io.dicts import _ascii_column, _score_column
from ..model import Document, Judgment, id_problem, relevance_column

__all__ = ["DIRECT_MAX", "OneQuery", "direct_batch", "missed_ids"]

_DOC_ID, _RELEVANCE = attrgetter("doc_id"), attrgetter("relevance")

#: The longest ranking read straight from its Documents. Longer ones take the columns and the build,
#: whose sort-based join of the ids beats a dict of every ranked id from about 5,000 documents
#: (measured: 950 against 1,160 us a query at 3,000 documents, 3.3 against 3.1 ms at 10,000).
DIRECT_MAX = 4096


@frozen(eq=False)
class OneQuery:
    """A query's batch, with the ids it was built from as Python lists (ASCII ids only, so that
    sorting the str sorts the UTF-8 bytes, as the batch's arrays do)."""

    batch: RankedBatch
    row_of: dict[str, int]  #: each ranked id's row (its rank - 1)
    judged_ids: list[str]  #: the judged ids, in input order
    relevance: list[int | float]  #: the judged values, as ``judged_ids``


def direct_batch(query_id: str, retrieved: Sequence[Document], judgments: list[Judgment]) -> OneQuery | None:
    """The batch ``build_batch`` makes of one query's ranking and judgments (the same arrays, the same
    dtypes), or None for the general build: an id repeats or is not ASCII, ``query_id`` is no id,
    an item is not exactly a Document or Judgment (a subclass is checked one by one there), or
    ``retrieved`` is not a list or tuple, or longer than :data:`DIRECT_MAX`.

    >>> one = direct_batch("q", [Document("a"), Document("b")], [Judgment("b", 2), Judgment("c", -1)])
    >>> one.batch.labels.tolist(), one.batch.judged_doc_ids.tolist()
    ([-1, 2], [b'b', b'c'])
    >>> direct_batch("q", [Document("a"), Document("a")], []) is None  # repeated: the build names it
    True
    """
    if type(retrieved) not in (list, tuple) or len(retrieved) > DIRECT_MAX or id_problem(query_id) is not None:
        return None
    if not set(map(type, retrieved)) <= {Document} or not set(map(type, judgments)) <= {Judgment}:
        return None
    ranked_ids = list(map(_DOC_ID, retrieved))
    judged_ids = list(map(_DOC_ID, judgments))
    relevance = list(map(_RELEVANCE, judgments))
    n = len(ranked_ids)
    # Each ranked id's row: one dict both finds the judged ids among the ranked ones (a lookup per
    # judgment, where a lookup per ranked document would cost a step for each of 10,000) and
    # tells a repeated id (fewer keys than ids).
    row_of = dict(zip(ranked_ids, range(n)))
    if len(row_of) != n or len(set(judged_ids)) != len(judged_ids):
        return None
    try:  # ASCII ids narrow to bytes in C; another character raises (the build encodes those as UTF-8)
        doc_ids, judged = _ascii_column(ranked_ids), _ascii_column(judged_ids)
        query = query_id.encode("ascii")
    except UnicodeEncodeError:
        return None
    judged_relevance = relevance_column(relevance)  # float64 when a grade is a float (2.5)
    labels = np.full(n, NONPOOL, dtype=judged_relevance.dtype)
    found = [(row, value) for row, value in zip(map(row_of.get, judged_ids), relevance) if row is not None]
    if found:
        rows, values = zip(*found)
        # A judged row's label is its value, UNJUDGED if negative (as PreparedQrels labels them).
        labels[list(rows)] = [UNJUDGED if value < 0 else value for value in values]
    batch = RankedBatch(
        query_vocab=np.array([query]),
        offsets=np.array([0, n], dtype=np.int64),
        labels=labels,
        doc_ids=doc_ids,
        scores=_score_column(retrieved),
        judged_offsets=np.array([0, len(judged_ids)], dtype=np.int64),
        judged_relevance=judged_relevance,
        judged_doc_ids=judged,
        in_run=np.array([n > 0]),
    )
    return OneQuery(batch, row_of, judged_ids, relevance)


def missed_ids(one: OneQuery, rel: int) -> list[str]:
    """The relevant judged ids (value >= ``rel`` and >= 0) that the ranking lacks, sorted (by their
    bytes: the ids are ASCII)."""
    threshold, ranked = max(rel, 0), one.row_of
    return sorted(doc for doc, value in zip(one.judged_ids, one.relevance) if value >= threshold and doc not in ranked)
