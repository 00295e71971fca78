"""Building a batch from a labelled log, whose rows are at once the run and its judgments.

A log row ``group item score label`` is a ranked document and its judgment. :func:`build_batch`
would read the log as a run and a qrels table and join them, through a hash table of every row
(10 M rows: 6 s and 1.9 GB). Here the rows are put in ranking order once, each keeping its own
label, and serve as the ranked and the judged rows alike.

The batch is the one :func:`build_batch` makes of the same rows, but for the order of each query's
judged rows (the tests compare them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..model import FloatArray, GradeArray, IntArray
from .batch import UNJUDGED, RankedBatch
from .build import QuerySetReport
from .ids import Duplicates, _as_bytes, _check_duplicates, _run_heads, along_runs, intern
from .memory import release_freed_memory
from .order import RowOrder, _by_id_descending, _tie_groups, canonical_order
from .segments import _offsets_of, segment_ids

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

#: Whether :meth:`SetEvaluator.from_log` builds with :func:`build_log_batch` (tests turn it off to
#: compare with the general path).
ENABLED = True

#: Whether the ranked side is sorted by :func:`_ranking_order` (else by the general path's
#: :func:`~.order.canonical_order`, which needs more memory on a log; the tests compare the two).
SORT_WITHIN_QUERIES = True


def build_log_batch(
    rows: dict[str, np.ndarray], origin: str, unit: str, *, max_depth: int | None = None,
    judged_only: bool = False, duplicates: Duplicates = "error",
) -> tuple[RankedBatch, QuerySetReport]:
    """The batch of a log's ``rows`` (``groups``, ``items``, ``scores``, ``labels``, ``lines``).

    The columns are taken out of ``rows`` as they are used, so that each one's memory goes back
    during the build when nobody else holds it. A (group, item) pair twice is a duplicate
    judgment (``duplicates="error"``), or its first row is kept. The options are :func:`build_batch`'s.

    Examples
    --------
    >>> rows = {"groups": np.array([b"s1", b"s1", b"s2"]), "items": np.array([b"a", b"b", b"c"]),
    ...         "scores": np.array([0.1, 0.9, 0.5]), "labels": np.array([1, 0, 1]), "lines": np.array([1, 2, 3])}
    >>> batch, _ = build_log_batch(rows, "log.tsv", "line")
    >>> batch.doc_ids.tolist(), batch.labels.tolist(), batch.judged_doc_ids.tolist()
    ([b'b', b'a', b'c'], [0, 1, 1], [b'b', b'a', b'c'])
    """
    groups = _as_bytes(rows.pop("groups"))
    items = _as_bytes(rows.pop("items"))
    n = len(items)
    # A log lists each session's rows together: its ids are interned one run of equal ids at a time.
    heads = _run_heads(groups)
    vocab, head_code = intern(groups if len(heads) == n else groups[heads])
    del groups
    code = along_runs(head_code, heads, n)
    del heads, head_code
    # The qrels side's check, in its words: a pair twice is a judgment given twice.
    keep = _check_duplicates(code, items, rows.pop("lines"), origin, unit, "judgment", vocab, duplicates)
    relevance = np.asarray(rows.pop("labels"))
    relevance = relevance.astype(np.float64 if relevance.dtype.kind == "f" else np.int64, copy=False)  # (grades: 2.5)
    scores = np.asarray(rows.pop("scores"), dtype=np.float64)
    if not keep.all():
        code, items, relevance, scores = code[keep], items[keep], relevance[keep], scores[keep]
        n = len(items)
    del keep
    # Freed pages (the check's keys, the reader's temporaries) go back before the sort's arrays are
    # made: the command line's allocator keeps freed memory otherwise (keep_freed_memory), and
    # larger arrays than the holes it holds would grow the process instead.
    release_freed_memory()
    n_q = len(vocab)
    offsets = _offsets_of(np.bincount(code, minlength=n_q))

    # The rows in ranking order, each with its own label (no join). They are the judged rows too:
    # the same rows, each query's in ranking order rather than in input order (an order nothing reads:
    # whoever lists judgments sorts them), which spares a second copy of the ids.
    if SORT_WITHIN_QUERIES:
        code = code.astype(np.int32) if n_q < 2**31 else code  # (half the memory, for the sort's peak)
        reorder = RowOrder(n, rows=_ranking_order(code, offsets, scores, items))
    else:  # the general path's sort (the tests compare the two)
        reorder = canonical_order(code, scores, items) or RowOrder(n)
    del code
    release_freed_memory()  # the sort's temporaries
    # One column at a time, each old one freed before the next is copied.
    scores = reorder.apply_blocks(scores)
    items = reorder.apply(items)
    relevance = reorder.apply(relevance)
    del reorder
    labels = _labels(relevance)
    ranked_docs, ranked_scores, ranked_labels = items, scores, labels
    ranked_offsets = offsets
    if max_depth is not None:  # -M, then -J, as build_batch applies them
        row_query = segment_ids(ranked_offsets)
        keep = np.arange(len(ranked_docs)) - ranked_offsets[row_query] < max_depth
        ranked_docs, ranked_scores, ranked_labels = ranked_docs[keep], ranked_scores[keep], ranked_labels[keep]
        ranked_offsets = _offsets_of(np.bincount(row_query[keep], minlength=n_q))
    if judged_only:
        keep = ranked_labels >= 0
        row_query = segment_ids(ranked_offsets)
        ranked_docs, ranked_scores, ranked_labels = ranked_docs[keep], ranked_scores[keep], ranked_labels[keep]
        ranked_offsets = _offsets_of(np.bincount(row_query[keep], minlength=n_q))
    batch = RankedBatch(
        query_vocab=vocab,
        offsets=ranked_offsets,
        labels=ranked_labels,
        doc_ids=ranked_docs,
        scores=ranked_scores,
        judged_offsets=offsets,
        judged_relevance=relevance,
        judged_doc_ids=items,
        in_run=np.ones(n_q, dtype=bool),  # every group has rows: its own
        subtopics=None,
    )
    release_freed_memory()
    return batch, QuerySetReport(missing_from_run=[], not_judged=[], dropped_missing=False)


def _labels(relevance: GradeArray) -> GradeArray:
    """A ranked row's label from its judgment (as the qrels' join gives it): its value, UNJUDGED if negative."""
    return np.where(relevance < 0, UNJUDGED, relevance) if bool((relevance < 0).any()) else relevance


#: Rows whose numbers are added to their packed keys at a time (bounds the temporary array).
_CHUNK_ROWS = 1 << 20

#: The bound of a query and place packed in one number (the tests lower it to take the other branch).
_PACKED = 2**63


def _ranking_order(code: IntArray, offsets: IntArray, scores: FloatArray, items: np.ndarray) -> IntArray:
    """The rows in ranking order: query, score descending, then item id descending (trec_eval's tie
    rule), as :func:`~.order.canonical_order` orders them. ``code`` is each row's query, ``offsets``
    the bounds of each query's rows once ordered.

    One sort of the scores (as integers that sort alike), then a sort of query and place packed in
    one integer, in place: some 16 bytes a row at the peak, where interning the scores (what the
    general order does, for runs in any layout) takes some 40.
    """
    n = len(scores)
    key = _descending_key(scores)
    by_score = np.argsort(key)  # all rows by score descending; ties are put in order below
    del key
    bits = max(n - 1, 0).bit_length()
    n_q = len(offsets) - 1
    if n_q > _PACKED >> bits:  # query and place do not fit in one number
        place = np.argsort(code.take(by_score), kind="stable")
    else:  # each row's query and place in one number, made a chunk at a time (no temporary as long as the rows)
        place = np.empty(n, dtype=np.int64)
        for start in range(0, n, _CHUNK_ROWS):
            chunk = place[start : start + _CHUNK_ROWS]
            chunk[:] = code.take(by_score[start : start + _CHUNK_ROWS])
            chunk <<= bits
            chunk |= np.arange(start, start + len(chunk), dtype=np.int64)
        place.sort()
        place &= (1 << bits) - 1
    for start in range(0, n, _CHUNK_ROWS):  # each place replaced by its row, in place (no third array)
        chunk = place[start : start + _CHUNK_ROWS]
        chunk[:] = by_score.take(chunk)
    del by_score
    rows = place
    # Rows of one query with equal scores: by id descending.
    ordered = scores.take(rows)
    tied_to_previous = np.empty(n, dtype=bool)
    tied_to_previous[:1] = False
    np.equal(ordered[1:], ordered[:-1], out=tied_to_previous[1:])
    del ordered
    tied_to_previous[offsets[:-1][offsets[:-1] < n]] = False  # a query's first row follows another query's
    tied, group = _tie_groups(tied_to_previous)
    del tied_to_previous
    if len(tied):
        tied_rows = rows[tied]
        rows[tied] = tied_rows[_by_id_descending(group, items[tied_rows])]
    return rows


def _descending_key(scores: FloatArray) -> npt.NDArray[np.uint64]:
    """Unsigned integers in the reverse order of ``scores`` (no NaN): the float's bits with the sign bit
    flipped, and the other bits too for a negative number; ``-0.0`` is made ``0.0`` first (they tie)."""
    key = (scores + 0.0).view(np.int64)  # a new array: -0.0 + 0.0 is 0.0
    negative = key < 0
    np.bitwise_xor(key, np.int64(-(2**63)), out=key)
    np.bitwise_xor(key, np.int64(2**63 - 1), out=key, where=negative)
    del negative
    ascending = key.view(np.uint64)
    np.invert(ascending, out=ascending)
    return ascending
