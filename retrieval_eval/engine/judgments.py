"""Judgments prepared for joining with runs, and the join itself.

:func:`prepared_qrels` groups the qrels by query, resolves duplicates and indexes them, once per
read-only qrels object however many runs are evaluated against it; :meth:`PreparedQrels.labels_of`
then labels a run's rows, by comparing ids (:func:`_scan_join`) where queries have few judgments,
through a hash table otherwise.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

import numpy as np
from attrs import field, frozen

from ..model import GradeArray, InputFormatError, IntArray, QrelsColumns, _display, _location
from .batch import NONPOOL, UNJUDGED, Subtopics
from .ids import (
    _FIND_CHUNK,
    Duplicates,
    PairIndex,
    _as_bytes,
    _check_duplicates,
    _same_ids,
    _same_words,
    _words,
    intern,
)
from .order import RowOrder, grouped_order
from .segments import _offsets_of, long_on_average, segment_ids
from .threads import in_order, workers

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

    from .preferences import Preferences


@frozen(eq=False)
class PreparedQrels:
    """Judgments ready to be joined with runs: grouped by query, duplicates resolved, and indexed.

    Everything here depends on the qrels alone (and on the duplicates policy and the extra queries),
    so several runs evaluated against the same read qrels share one (see :func:`prepared_qrels`).
    """

    query_vocab: np.ndarray  #: evaluated query ids (judged, or asked for), in byte order
    queries: PairIndex | None  #: the query ids, to look up a run's (with query code 0); None when
    #: every id fits one word: then the words are searched, in byte order like the ids
    offsets: IntArray  #: (n_queries + 1,) bounds of each query's judged rows
    relevance: GradeArray  #: the judged rows' raw values (int64, or float64 grades)
    labels: GradeArray  #: the label a ranked row takes from each judged row: its value, UNJUDGED if negative
    doc_ids: np.ndarray  #: the judged rows' document ids (in input order within a query)
    subtopics: Subtopics | None
    #: The hash table of the judged (query code, document id) pairs, made when first needed.
    _pairs: list[PairIndex] = field(factory=list, alias="pairs")
    #: Preference judgments (trec_eval -R prefs), made ready once for every run; None otherwise.
    preferences: Preferences | None = None

    def pairs(self) -> PairIndex:
        """The hash table of the judged pairs (made once; two threads may both make it, harmlessly)."""
        if not self._pairs:
            self._pairs.append(PairIndex(segment_ids(self.offsets), self.doc_ids, np.diff(self.offsets)))
        return self._pairs[0]

    def labels_of(self, query_code: IntArray, doc_ids: np.ndarray, keys: npt.NDArray[np.uint64] | None = None,
                  comparisons: int | None = None) -> GradeArray:
        """The label of each (``query_code``, ``doc_ids``) row: its judged row's (see ``labels``), or
        NONPOOL. By comparing ids within each query when queries have few judgments, otherwise through
        the hash table (``keys``: the rows' :func:`~retrieval_eval._ids.pair_keys`, if the caller has
        them; ``comparisons``: the rows' :func:`_scan_comparisons`, if the caller knows them)."""
        labels = _scan_join(self.offsets, self.doc_ids, query_code, doc_ids, self.labels, comparisons)
        if labels is None:
            labels = np.full(len(query_code), NONPOOL, dtype=self.labels.dtype)
            rows, at = self.pairs().find(query_code, doc_ids, keys)
            labels[rows] = self.labels[at]
        return labels


#: Where queries have a handful of judgments (MS MARCO, click logs), a run row is compared with each
#: of its query's judged ids in turn when that takes at most this many comparisons per row on
#: average; otherwise pairs are looked up in a hash table (:class:`~retrieval_eval._ids.PairIndex`),
#: whose making alone costs more than a few comparisons per row.
_SCAN_COMPARISONS = 4


def _scan_join(offsets: IntArray, judged: np.ndarray, query_code: IntArray, doc_ids: np.ndarray,
               values: GradeArray, comparisons: int | None = None) -> GradeArray | None:
    """The value (of ``values``, one per judged row) of each (``query_code``, ``doc_ids``) row's judged
    row, NONPOOL for a row not judged, by comparing ids: at the s-th step, every row still unmatched
    whose query has more than s judgments is compared with the query's s-th judged id. None when that
    would take more than ``_SCAN_COMPARISONS`` comparisons per row (or ids are ``bytes`` objects);
    ``comparisons``: the rows' :func:`_scan_comparisons`, if the caller knows them.

    The rows go in chunks, which bound the temporary arrays; a long run's chunks are compared on
    several threads (see :func:`~retrieval_eval._threads.workers`), each writing its own rows' values."""
    if judged.dtype.kind != "S" or doc_ids.dtype.kind != "S":
        return None
    if comparisons is None:
        comparisons = int(np.diff(offsets).take(query_code).sum())
    if not _joins_by_scan(comparisons, len(query_code)):
        return None
    out = np.empty(len(query_code), dtype=values.dtype)
    if not len(judged):
        out.fill(NONPOOL)
        return out

    # The first step compares every row with its query's first judged id (most queries have one).
    # A query without judgments is given some other query's id (the index clipped to the judgments),
    # and its match is dropped. Where queries have many rows (a run file), that id, its value and
    # whether more follow are made once, an entry per query, and gathered per row; where they have a
    # few (sessions), making them would cost more than working them out row by row.
    by_query = long_on_average(len(query_code), len(offsets) - 1)
    if by_query:
        counts = np.diff(offsets)
        first = offsets[:-1].clip(max=len(judged) - 1)
        first_words = _words(judged.take(first), np.uint64)
        first_values = np.where(counts > 0, values.take(first), NONPOOL).astype(values.dtype)  # NONPOOL: no match
        several = counts > 1

    def chunk(start: int) -> None:
        found = out[start : start + _FIND_CHUNK]
        codes = query_code[start : start + _FIND_CHUNK]
        docs = _words(doc_ids[start : start + _FIND_CHUNK], np.uint64)
        if by_query:
            same = _same_words(first_words.take(codes, axis=0), docs)
            first_values.take(codes, out=found, mode="clip")  # (every code is in range: "raise" would copy ``out`` first)
            unmatched = np.logical_not(same, out=same)
            np.putmask(found, unmatched, NONPOOL)
            unmatched &= several.take(codes)  # (now: whether a row is still to compare)
            pending = np.flatnonzero(unmatched)
            pending_codes = codes.take(pending)
            head, n_judged = offsets[:-1].take(pending_codes), counts.take(pending_codes)
        else:
            found.fill(NONPOOL)
            head, n_judged = offsets[:-1].take(codes), offsets[1:].take(codes)
            n_judged -= head  # (no array per query kept)
            candidate = head.clip(max=len(judged) - 1)
            same = _same_words(_words(judged.take(candidate), np.uint64), docs)
            same &= n_judged > 0
            np.putmask(found, same, values.take(candidate))
            same |= n_judged < 2  # (now: whether a row is done)
            pending = np.flatnonzero(~same)
            head, n_judged = head[pending], n_judged[pending]
        step = 1
        while len(pending):  # as many steps as the most judgments of a query that the run has
            candidate = head + step
            same = _same_ids(judged, candidate, doc_ids, pending + start)
            found[pending[same]] = values[candidate[same]]
            step += 1
            going = ~same & (n_judged > step)
            pending, head, n_judged = pending[going], head[going], n_judged[going]

    starts = [(start,) for start in range(0, len(query_code), _FIND_CHUNK)]
    for _ in in_order(chunk, starts, workers(len(query_code))):
        pass
    return out


def _joins_by_scan(comparisons: int, rows: int) -> bool:
    """Whether ``rows`` run rows that take ``comparisons`` comparisons in all (:func:`_scan_comparisons`)
    are joined by :func:`_scan_join` rather than through the hash table. The build asks too: it makes
    the rows' keys only for the table."""
    return comparisons <= _SCAN_COMPARISONS * rows


def _scan_comparisons(rows_per_query: IntArray, judged_offsets: IntArray) -> int:
    """The comparisons :func:`_scan_join` makes at most, for rows of ``rows_per_query`` (per query code)
    and judgments cut by ``judged_offsets``: each row with each of its query's judged ids."""
    return int(rows_per_query @ np.diff(judged_offsets))


def _scan_repeats(offsets: IntArray, doc_ids: np.ndarray, query_code: IntArray | None = None) -> bool | None:
    """Whether some query's rows (grouped by query) hold an id twice, by comparing each row with the
    rows before it in its query, one distance at a time. None when that would take more than
    ``_SCAN_COMPARISONS`` comparisons per row (or ids are ``bytes`` objects). ``query_code``: each
    row's query, if the caller has it."""
    if doc_ids.dtype.kind != "S":
        return None
    count = np.diff(offsets)
    if int((count * (count - 1) // 2).sum()) > _SCAN_COMPARISONS * len(doc_ids):
        return None
    # The rows that follow another of their query (the others have nothing to compare with), and how
    # many of its rows come before each: arrays as long as those rows, not as the judgments.
    first = np.zeros(len(doc_ids), dtype=bool)
    first[offsets[:-1][count > 0]] = True
    rows = np.flatnonzero(~first)
    del first
    # Each row's place in its query: from its query's first row (found by the row's code, or by a search).
    query = np.searchsorted(offsets, rows, side="right") - 1 if query_code is None else query_code[rows]
    position = rows - offsets[query]
    del query
    distance = 1
    while len(rows):  # as many steps as the most judgments of a query, less one
        if bool(_same_ids(doc_ids, rows, doc_ids, rows - distance).any()):
            return True
        distance += 1
        further = position >= distance
        rows, position = rows[further], position[further]
    return False


#: Prepared qrels of QrelsColumns objects that are still alive, by id(): (the object, the policy, prepared).
_PREPARED: dict[int, tuple[weakref.ref[QrelsColumns], str, PreparedQrels]] = {}
_PREPARED_LOCK = threading.Lock()


def prepared_qrels(qrels: QrelsColumns, queries: npt.ArrayLike | None, duplicates: Duplicates) -> PreparedQrels:
    """The judgments of ``qrels`` prepared for joining, reused while the same object is evaluated again.

    Only read-only columns (as the readers return them) are reused, so nothing cached can go stale:
    an array that cannot be written cannot change.
    """
    cacheable = queries is None and _read_only(qrels)
    if not cacheable:
        return _prepare_qrels(qrels, queries, duplicates)
    with _PREPARED_LOCK:
        held = _PREPARED.get(id(qrels))
    if held is not None and held[0]() is qrels and held[1] == duplicates:
        return held[2]
    prepared = _prepare_qrels(qrels, None, duplicates)
    key = id(qrels)

    def forget(_: object) -> None:
        with _PREPARED_LOCK:
            if key in _PREPARED and _PREPARED[key][0]() is None:
                del _PREPARED[key]

    with _PREPARED_LOCK:
        _PREPARED[key] = (weakref.ref(qrels, forget), duplicates, prepared)
    return prepared


def _read_only(qrels: QrelsColumns) -> bool:
    columns: tuple[object, ...] = (qrels.query_ids, qrels.doc_ids, qrels.relevance, qrels.lines, qrels.subtopics)
    prefs = qrels.preferences
    if prefs is not None:  # the preferences are prepared with the rest: their columns must not change either
        columns += (prefs.query_ids, prefs.groups, prefs.subgroups, prefs.doc_ids, prefs.levels, prefs.lines)
    return all(column is None or (isinstance(column, np.ndarray) and not column.flags.writeable) for column in columns)


def _prepare_qrels(qrels: QrelsColumns, queries: npt.ArrayLike | None, duplicates: Duplicates) -> PreparedQrels:
    q_qids, q_docs, extra = map(_as_bytes, (qrels.query_ids, qrels.doc_ids, [] if queries is None else queries))
    # Query codes follow the byte order of the ids (trec_eval's strcmp order).
    query_vocab, all_code = intern(np.concatenate((q_qids, extra)) if len(extra) else q_qids)
    query_code = all_code[: len(q_qids)]
    del all_code, q_qids
    relevance, lines = np.asarray(qrels.relevance), np.asarray(qrels.lines)
    own_relevance = False  # whether ``relevance`` is a copy made here (else the caller's column)
    subtopics = None
    preferences = None
    if qrels.preferences is not None:  # a row per preference line: each judged (query, document) kept once
        from .preferences import prepare_preferences

        preferences, judged, first = prepare_preferences(qrels.preferences, query_code, len(query_vocab))
        rows, relevance = _judged_once(judged, first, relevance)
        query_code, q_docs, lines = query_code[rows], q_docs[rows], lines[rows]
        own_relevance = True
    if qrels.subtopics is not None:  # diversity qrels: a document may be judged once per subtopic
        subtopics, rows, relevance = _diversity_judgments(query_code, q_docs, _as_bytes(qrels.subtopics), relevance,
                                                          lines, qrels, query_vocab, duplicates)
        query_code, q_docs, lines = query_code[rows], q_docs[rows], lines[rows]
        own_relevance = True
    n_q = len(query_vocab)
    # Judged rows grouped by query, each query's in input order (a qrels file is grouped already).
    grouping = grouped_order(query_code)
    offsets = _offsets_of(_block_counts(grouping, query_code, n_q))
    if grouping is not None:
        q_docs, relevance = grouping.apply(q_docs), grouping.apply(relevance)
        query_code = segment_ids(offsets)  # grouped, the codes are each query's, repeated along its rows
        own_relevance = True
    pairs = []
    repeated = _scan_repeats(offsets, q_docs, query_code)
    if repeated is None:  # many judgments per query: the hash table tells, and serves the joins later
        pairs = [PairIndex(query_code, q_docs, np.diff(offsets))]
        repeated = pairs[0].maybe_repeated()
    if repeated:  # some pair may be judged twice: find out exactly
        if grouping is not None:  # the lines, needed only here, grouped as the rows were
            lines = grouping.apply(lines)
        keep = _check_duplicates(query_code, q_docs, lines, qrels.origin, qrels.unit, "judgment", query_vocab,
                                 duplicates)
        if not keep.all():
            query_code, q_docs, relevance = query_code[keep], q_docs[keep], relevance[keep]
            offsets = _offsets_of(np.bincount(query_code, minlength=n_q))
            pairs = []
            own_relevance = True
    # Grades stay floats when the column holds floats (2.5: the readers give int64 when every grade is integral).
    dtype = np.float64 if relevance.dtype.kind == "f" else np.int64
    if relevance.dtype != dtype or not (own_relevance or not relevance.flags.writeable):
        # Never a column the caller may still change: a copy made here, or a read-only column (the readers').
        relevance = relevance.astype(dtype)
    return PreparedQrels(
        query_vocab=query_vocab,
        queries=None if query_vocab.dtype.kind == "S" and query_vocab.dtype.itemsize <= 8
        else PairIndex(np.zeros(n_q, dtype=np.int64), query_vocab),
        offsets=offsets,
        relevance=relevance,
        labels=np.where(relevance < 0, UNJUDGED, relevance) if bool((relevance < 0).any()) else relevance,
        doc_ids=q_docs,
        subtopics=subtopics,
        pairs=pairs,
        preferences=preferences,
    )


def _block_counts(grouping: RowOrder | None, query_code: IntArray, n_q: int) -> IntArray:
    """Rows per query code (below ``n_q``): from the blocks that ``grouping`` moves whole when it does
    (each query's rows form one block), else by counting the codes."""
    if grouping is None or grouping.block_starts is None or grouping.block_lengths is None:
        return np.bincount(query_code, minlength=n_q)
    counts = np.zeros(n_q, dtype=np.int64)
    counts[query_code[grouping.block_starts]] = grouping.block_lengths
    return counts


def _diversity_judgments(
    query_code: IntArray, docs: np.ndarray, subtopic_ids: np.ndarray, relevance: GradeArray, lines: IntArray,
    qrels: QrelsColumns, query_vocab: np.ndarray, policy: Duplicates,
) -> tuple[Subtopics, IntArray, GradeArray]:
    """The per-subtopic judgments, and one judgment per (query, document) for every other measure: a
    row of the pair and the pair's largest value (a document relevant to any subtopic is relevant to
    the query, as ndeval's own non-intent-aware MAP has it).

    The same (query, subtopic, document) twice is an error, or its first line is kept (``policy``).
    """
    _, sub_code = intern(subtopic_ids)
    _, doc_code = intern(docs)
    order = np.lexsort((lines, sub_code, doc_code, query_code))  # line order breaks ties: first line first
    q, d, t = query_code[order], doc_code[order], sub_code[order]
    repeat = np.flatnonzero((q[1:] == q[:-1]) & (d[1:] == d[:-1]) & (t[1:] == t[:-1])) + 1
    if repeat.size and policy == "error":
        second, first = order[repeat[0]], order[repeat[0] - 1]
        raise InputFormatError(
            f"{_location(qrels.origin, qrels.unit, int(lines[second]))}: duplicate judgment for query "
            f"{_display(query_vocab[query_code[second]])!r}, {qrels.second_column} {_display(subtopic_ids[second])!r}, "
            f"document {_display(docs[second])!r} (first at {qrels.unit} {int(lines[first])}); expected each "
            f"document at most once per query and {qrels.second_column}"
        )
    if repeat.size:
        keep = np.ones(len(order), dtype=bool)
        keep[repeat] = False
        order, q, d, t = order[keep], q[keep], d[keep], t[keep]
    value = relevance[order]
    subtopics = Subtopics(_offsets_of(np.bincount(q, minlength=len(query_vocab))), docs[order], t, value)
    starts = np.flatnonzero(np.concatenate(([True], (q[1:] != q[:-1]) | (d[1:] != d[:-1]))))
    largest = np.maximum.reduceat(value, starts) if len(starts) else value[:0]
    return subtopics, order[starts], largest


def _judged_once(judged: IntArray, first: IntArray, relevance: GradeArray) -> tuple[IntArray, GradeArray]:
    """The first row of each judged (query, document) of preference judgments, in input order, and the
    pair's largest value (relevant when some line gives the document a rel_level > 0). ``judged``
    numbers each row's pair and ``first`` is each pair's first row, as the preferences found them
    (no second sort of the rows by pair)."""
    relevance = np.asarray(relevance)
    largest = relevance[first]
    np.maximum.at(largest, judged, relevance)
    by_input = np.argsort(first)
    return first[by_input], largest[by_input].astype(np.int64)
