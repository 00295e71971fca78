"""The columnar batch every measure is computed on, and the one place where rankings are ordered.

A :class:`RankedBatch` holds any number of queries as flat arrays cut into per-query segments:

* ranked rows (one per retrieved document, in rank order) with their *label*: the qrels value when
  the document is judged (>= 0), :data:`NONPOOL` (-1) when the query's qrels do not mention it, and
  :data:`UNJUDGED` (-2) when the qrels give it a negative value ("pooled but not judged");
* judged rows (one per qrels entry) with their raw relevance value.

Segments are described by ``offsets`` arrays of length ``n_queries + 1``. Memory is linear in the
input whatever the depth of each query: nothing is ever padded to ``queries x max depth``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
from attrs import define, field, frozen

from .ids import (
    _CHUNK,
    _FIND_CHUNK,
    Duplicates,
    PairIndex,
    _as_bytes,
    _check_duplicates,
    _run_heads,
    _run_lengths,
    _same_ids,
    _same_words,
    _words,
    along_runs,
    intern,
    pair_keys,
)
from .memory import release_freed_memory
from .order import RowOrder, canonical_order, grouped_order
from .segments import (
    _gather_segments,
    _offsets_of,
    long_on_average,
    long_segments,
    offsets_count,
    segment_ids,
    true_before,
)
from .threads import in_order, workers
from ..model import (
    BoolArray,
    FloatArray,
    InputFormatError,
    IntArray,
    QrelsColumns,
    RunColumns,
    _display,
    _location,
    id_text,
)

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

T = TypeVar("T")

NONPOOL = -1  #: label of a retrieved document the query's qrels do not mention

UNJUDGED = -2  #: label of a retrieved document whose qrels value is negative

Order = Literal["score", "given", "rank"]



@frozen(eq=False)
class Hits:
    """Some of a batch's ranked rows (the relevant ones, the judged ones...), in row order.

    Kernels work on these rather than on every ranked row: a query typically retrieves 1000
    documents of which a handful are judged, so work proportional to the hits is far cheaper than
    a pass over the whole ranking. Within a query, hits are in rank order.

    ``row`` (h,) indexes the batch's ranked rows (increasing), ``query`` (h,) and ``rank`` (h,) give
    each hit's query index and 1-based rank, ``position`` (h,) its 1-based index among its query's
    hits, and ``offsets`` (n_queries + 1,) the bounds of each query's hits.
    """

    row: IntArray
    query: IntArray
    rank: IntArray
    position: IntArray
    offsets: IntArray

    @classmethod
    def of_rows(cls, rows: IntArray, offsets: IntArray, segment: IntArray | None = None) -> Hits:
        """The hits at ``rows`` (increasing ranked-row indices) of segments ``offsets``; ``segment``, the
        query index of every ranked row, when the caller has one (then read, not searched for)."""
        if segment is not None:  # short segments: a gather costs a third of the binary searches
            query = segment.take(rows)
        else:  # each hit's query is the last whose first row is at or before the hit's row
            query = np.searchsorted(offsets, rows, side="right")
            query -= 1  # in place here and below: a log of 10 M sessions has millions of hits
        hit_offsets = _offsets_of(np.bincount(query, minlength=len(offsets) - 1))
        rank = offsets[:-1].take(query)
        np.subtract(rows, rank, out=rank)
        rank += 1
        position = np.arange(1, len(rows) + 1, dtype=np.int64)
        position -= hit_offsets[:-1].take(query)
        return cls(rows, query, rank, position, hit_offsets)

    @cached_property
    def count(self) -> IntArray:
        """Number of hits per query (read-only: made once, P@k at every cutoff of a log reads it)."""
        count = np.diff(self.offsets)
        count.flags.writeable = False
        return count

    @cached_property
    def _deepest(self) -> int:
        """The largest rank of a hit (0 without hits)."""
        return int(self.rank.max(initial=0))

    def where(self, keep: BoolArray) -> Hits:
        """The hits where ``keep`` (h,) is true; positions are renumbered within the subset."""
        if bool(keep.all()):  # every judged hit counts (qrels of positive grades only): nothing to drop
            return self
        kept = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
        offsets = kept[self.offsets]
        query = self.query[keep]
        position = kept[1:][keep] - offsets[:-1][query]
        return Hits(self.row[keep], query, self.rank[keep], position, offsets)

    def upto(self, k: int | IntArray) -> IntArray:
        """Number of hits at ranks 1..k per query (``k`` a number, or one per query)."""
        if not isinstance(k, np.ndarray) and k >= self._deepest:
            return self.count  # every hit is within the top k (P@1000 of most runs, any k of a log)
        within = self.rank <= (k.take(self.query) if isinstance(k, np.ndarray) else k)
        if bool(within.all()):  # (R-precision of a log: each hit within its query's R)
            return self.count
        return np.bincount(self.query[within], minlength=len(self.offsets) - 1).astype(np.int64, copy=False)

    def above(self, rows: IntArray, query: IntArray) -> IntArray:
        """For each ranked row ``rows[i]`` of query ``query[i]``, the number of these hits ranked above it."""
        return np.searchsorted(self.row, rows) - self.offsets[query]


@frozen(eq=False)
class Subtopics:
    """Diversity judgments: per query, one row per (subtopic, document) judgment of the qrels.

    Read from the qrels' second column (``read_qrels_columns(..., with_subtopics=True)``), as ndeval
    reads TREC Web track qrels. Rows are sorted by query, then document id bytes, then subtopic.
    ``subtopic`` holds codes of the subtopic ids (equal ids, equal codes, across queries).
    """

    offsets: IntArray  #: (n_queries + 1,) bounds of each query's rows
    doc_ids: np.ndarray  #: bytes id of the judged document
    subtopic: IntArray  #: code of the subtopic id
    relevance: IntArray  #: the judgment's raw value

    def select(self, indices: IntArray) -> Subtopics:
        rows = _gather_segments(self.offsets, indices)
        return Subtopics(_offsets_of(np.diff(self.offsets)[indices]), self.doc_ids[rows], self.subtopic[rows],
                         self.relevance[rows])

    def block(self, start: int, stop: int) -> Subtopics:
        """The queries ``start`` to ``stop`` (exclusive): views of the rows, not copies."""
        offsets = self.offsets[start : stop + 1]
        rows = slice(int(offsets[0]), int(offsets[-1]))
        return Subtopics(offsets - offsets[0], self.doc_ids[rows], self.subtopic[rows], self.relevance[rows])


# --------------------------------------------------------------------------------------------------
# The batch


@define(eq=False)
class RankedBatch:
    """Ranked and judged rows of many queries, cut into per-query segments.

    Attributes
    ----------
    query_vocab : (n_queries,) bytes array
        Query ids in evaluation order (byte order of the UTF-8 id, as trec_eval's ``strcmp``);
        :attr:`query_ids` has them as text.
    offsets : (n_queries + 1,) int
        Segment bounds of the ranked rows.
    labels : (n_ranked,) int
        Qrels value of each ranked document, or NONPOOL / UNJUDGED.
    doc_ids : (n_ranked,) bytes array
        Id of each ranked document.
    scores : (n_ranked,) float
        Retrieval scores (NaN when the input gave none).
    judged_offsets : (n_queries + 1,) int
        Segment bounds of the judged rows.
    judged_relevance : (n_judged,) int
        Raw qrels values, per query.
    judged_doc_ids : (n_judged,) bytes array
        Id of each judged document, in input order within each query.
    in_run : (n_queries,) bool
        False for qrels queries the run never mentioned (scored as empty rankings).
    subtopics : Subtopics or None
        The per-subtopic judgments of the diversity measures, when the qrels were read with their
        subtopic column; the judged rows above then hold each document's largest value.
    """

    query_vocab: np.ndarray
    offsets: IntArray
    labels: IntArray
    doc_ids: np.ndarray
    scores: FloatArray
    judged_offsets: IntArray
    judged_relevance: IntArray
    judged_doc_ids: np.ndarray
    in_run: BoolArray
    subtopics: Subtopics | None = None
    _cache: dict[tuple[object, ...], Any] = field(factory=dict, init=False, repr=False)

    # ---- shape
    @property
    def n_queries(self) -> int:
        return len(self.query_vocab)

    @cached_property
    def query_ids(self) -> list[str]:
        """Query ids as text, in evaluation order (made on first use: a batch may hold millions)."""
        return _texts(self.query_vocab)

    @cached_property
    def num_ret(self) -> IntArray:
        """Number of ranked documents per query."""
        return np.diff(self.offsets)

    @cached_property
    def segment(self) -> IntArray:
        """Query index of every ranked row."""
        return segment_ids(self.offsets)

    @cached_property
    def rank(self) -> IntArray:
        """1-based rank of every ranked row within its query."""
        return np.arange(1, len(self.labels) + 1, dtype=np.int64) - np.repeat(self.offsets[:-1], self.num_ret)

    @cached_property
    def judged_segment(self) -> IntArray:
        return segment_ids(self.judged_offsets)

    # ---- relevance at a threshold (cached per threshold)
    def _cached(self, key: tuple[object, ...], compute: Callable[[], T]) -> T:
        """``compute()``, computed once per batch and ``key`` (a threshold, a gain table...)."""
        if key not in self._cache:
            self._cache[key] = compute()
        value: T = self._cache[key]
        return value

    def relevant(self, rel: int) -> BoolArray:
        """Whether each ranked row is relevant: judged with a value >= ``rel`` (and >= 0)."""
        return self._cached(("relevant", rel), lambda: self.labels >= max(rel, 0))

    def judged_nonrelevant(self, rel: int) -> BoolArray:
        """Whether each ranked row is judged non-relevant: 0 <= value < ``rel`` (made anew each time)."""
        nonrelevant = self.labels >= 0
        nonrelevant &= self.labels < rel
        return nonrelevant

    def n_relevant(self, rel: int) -> IntArray:
        """R per query: qrels entries with value >= ``rel`` (negative values never count)."""

        def compute() -> IntArray:
            if rel <= 0 and int(self.judged_relevance.min(initial=0)) >= 0:
                return np.diff(self.judged_offsets)  # no negative judgment: every one counts
            return self.judged_count(self.judged_relevance >= max(rel, 0))

        return self._cached(("R", rel), compute)

    def n_nonrelevant(self, rel: int) -> IntArray:
        """NR per query: qrels entries with 0 <= value < ``rel``, retrieved or not: the entries >= 0 less
        those >= ``rel`` (no second count of the judgments)."""
        return self._cached(("NR", rel), lambda: self.n_relevant(0) - self.n_relevant(rel))

    def judged_count(self, mask: BoolArray) -> IntArray:
        """Number of judged rows per query where ``mask`` (over the judged rows) is true."""
        return offsets_count(mask, self.judged_offsets)  # no index of the judged rows needed, short or long

    def n_relevant_retrieved(self, rel: int) -> IntArray:
        """Number of relevant ranked rows per query."""
        return self.hits(rel).count

    def hits(self, rel: int) -> Hits:
        """The ranked rows judged >= ``rel`` (and >= 0): with rel <= 0, every judged row.

        A threshold's hits are a subset of the judged rows when those are made already; otherwise
        one pass over the labels finds them (so that the official measures, which need only the
        relevant rows, never hold the judged ones too).
        """

        def compute() -> Hits:
            judged: Hits | None = self._cache.get(("hits", 0))
            if rel <= 0 or judged is None:
                return self._hits_at(np.flatnonzero(self.labels >= max(rel, 0)))
            return judged.where(self.labels[judged.row] >= rel)

        return self._cached(("hits", max(rel, 0)), compute)

    def _hits_at(self, rows: IntArray) -> Hits:
        """The hits at ranked rows ``rows`` (increasing): with short segments their query is read from
        :attr:`segment` (made once per batch), with long ones searched for (no index of every row)."""
        return Hits.of_rows(rows, self.offsets, None if long_segments(self.offsets) else self.segment)

    def nonrelevant_above(self, rel: int) -> IntArray:
        """For each hit of :meth:`hits` (``rel``), the judged non-relevant rows ranked above it in its query.

        Those before the hit's row, less those before its query's first row: two binary searches
        among the non-relevant rows (no per-query table of them is made) when queries are long; a
        running count of them over the rows, read at both places, when they are short.
        """
        hits = self.hits(rel)
        if bool((hits.rank == hits.position).all()):  # only hits above every hit (one document per query)
            return np.zeros(len(hits.row), dtype=np.int64)
        if not long_segments(self.offsets):
            before = true_before(self.judged_nonrelevant(rel))  # non-relevant rows before each row
            first = hits.row - hits.rank  # the row before the query's first
            first += 1
            above = before.take(hits.row)
            above -= before.take(first)
            return above
        judged = np.flatnonzero(self.labels >= 0)  # one pass over the ranked rows; then the judged only
        nonrelevant = judged[self.labels.take(judged) < rel]
        above = np.searchsorted(nonrelevant, hits.row)
        above -= np.searchsorted(nonrelevant, self.offsets[:-1].take(hits.query))
        return above

    def nonrelevant_hits(self, rel: int) -> Hits:
        """The ranked rows judged non-relevant: 0 <= value < ``rel``."""

        def compute() -> Hits:
            judged = self.hits(0)
            return judged.where(self.labels[judged.row] < rel)

        return self._cached(("nonrel-hits", rel), compute)

    def relevant_at(self, k: int, rel: int) -> IntArray:
        """rel@k per query: relevant documents in ranks 1..k (missing ranks are non-relevant).

        Not cached: it costs a pass over the hits, and kept for each k it would hold 8 bytes per
        query per cutoff (720 MB for trec_eval's 9 cutoffs at 10 M queries)."""
        return self.hits(rel).upto(k)

    # ---- slicing
    def select(self, indices: npt.ArrayLike) -> RankedBatch:
        """A batch of the queries at ``indices`` (in that order); cost linear in their size."""
        indices = np.asarray(indices, dtype=np.int64)
        rows = _gather_segments(self.offsets, indices)
        judged = _gather_segments(self.judged_offsets, indices)
        return RankedBatch(
            query_vocab=self.query_vocab[indices],
            offsets=_offsets_of(np.diff(self.offsets)[indices]),
            labels=self.labels[rows],
            doc_ids=self.doc_ids[rows],
            scores=self.scores[rows],
            judged_offsets=_offsets_of(np.diff(self.judged_offsets)[indices]),
            judged_relevance=self.judged_relevance[judged],
            judged_doc_ids=self.judged_doc_ids[judged],
            in_run=self.in_run[indices],
            subtopics=None if self.subtopics is None else self.subtopics.select(indices),
        )

    def block(self, start: int, stop: int) -> RankedBatch:
        """A batch of the queries ``start`` to ``stop`` (exclusive), its rows views of this batch's rows:
        it costs the two offset arrays, not a copy of the rows (unlike :meth:`select`)."""
        offsets, judged = self.offsets[start : stop + 1], self.judged_offsets[start : stop + 1]
        rows, judged_rows = slice(int(offsets[0]), int(offsets[-1])), slice(int(judged[0]), int(judged[-1]))
        block = RankedBatch(
            query_vocab=self.query_vocab[start:stop], offsets=offsets - offsets[0], labels=self.labels[rows],
            doc_ids=self.doc_ids[rows], scores=self.scores[rows], judged_offsets=judged - judged[0],
            judged_relevance=self.judged_relevance[judged_rows], judged_doc_ids=self.judged_doc_ids[judged_rows],
            in_run=self.in_run[start:stop], subtopics=None if self.subtopics is None else self.subtopics.block(start, stop),
        )
        for key, counts in self._cache.items():  # R and NR, once made for the whole batch (the CLI's notes
            if key[0] in ("R", "NR"):  # need R): the block's are slices of them, not counted again
                block._cache[key] = counts[start:stop]
        return block

    def query_blocks(self, size: int) -> list[tuple[int, int]]:
        """The (start, stop) of consecutive blocks of ``size`` queries (the last one shorter): one
        block, the whole batch, when it holds at most ``size`` queries."""
        n = self.n_queries
        return [(start, min(start + size, n)) for start in range(0, n, size)] or [(0, 0)]

    def judged_only(self) -> RankedBatch:
        """This batch with only its judged ranked rows (value >= 0), ranked in the same order: what the
        ``judged_only=True`` parameter of a measure evaluates on, as trec_eval ``-J`` does for all."""

        def compute() -> RankedBatch:
            keep = self.labels >= 0
            kept = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
            return RankedBatch(
                query_vocab=self.query_vocab, offsets=kept[self.offsets], labels=self.labels[keep],
                doc_ids=self.doc_ids[keep], scores=self.scores[keep], judged_offsets=self.judged_offsets,
                judged_relevance=self.judged_relevance, judged_doc_ids=self.judged_doc_ids, in_run=self.in_run,
                subtopics=self.subtopics,
            )

        return self._cached(("judged-only",), compute)

    def doc_id(self, row: int) -> str:
        """The id of the document at ranked row ``row``."""
        return id_text(self.doc_ids[row])


def _texts(ids: np.ndarray) -> list[str]:
    """Ids as the str keys :func:`~retrieval_eval.model.id_text` makes, at C speed when every byte is ASCII."""
    if ids.dtype.kind == "S" and len(ids) and not bool(np.any(np.ascontiguousarray(ids).view(np.uint8) >= 128)):
        texts: list[str] = ids.astype(str).tolist()
        return texts
    return [id_text(q) for q in ids]


# --------------------------------------------------------------------------------------------------
# Building a batch: the qrels join, duplicates and the canonical order


@define
class QuerySetReport:
    """Which queries the judgments and the run disagree on."""

    missing_from_run: list[str]  #: qrels queries with no run line (scored as empty rankings)
    not_judged: list[str]  #: run queries with no qrels (ignored)
    dropped_missing: bool = False  #: True when missing queries were left out of the average


def _take(rows: IntArray | None, *columns: np.ndarray) -> list[np.ndarray]:
    """``column[rows]`` for each column; the columns themselves when ``rows`` is None (all rows)."""
    return list(columns) if rows is None else [column[rows] for column in columns]


@define
class RunHandoff:
    """A run handed over to :func:`build_batch`, which then drops each column as soon as it is used.

    For a run that nobody else holds (one just read from a file): the build takes the columns out of
    this box first thing, so each one's memory goes back while the batch is built instead of after.
    A plain :class:`RunColumns` is never changed; its columns live as long as their holder keeps them.
    """

    _run: RunColumns | None

    @property
    def run_id(self) -> str:
        return self._held().run_id

    def take(self) -> RunColumns:
        """The run, which this box no longer holds."""
        run, self._run = self._held(), None
        return run

    def _held(self) -> RunColumns:
        if self._run is None:
            raise ValueError("this run was already handed to a build")
        return self._run


def check_duplicates_option(duplicates: object) -> None:
    """Raise :class:`InputFormatError` unless ``duplicates`` is one of the known policies (an
    unknown one must not quietly act as ``"first"`` and drop rows)."""
    if not isinstance(duplicates, str) or duplicates not in ("error", "first"):
        raise InputFormatError(f"'duplicates' must be 'error' or 'first'; got {duplicates!r}")


def build_batch(
    qrels: QrelsColumns,
    run: RunColumns | RunHandoff,
    *,
    order: Order = "score",
    max_depth: int | None = None,
    judged_only: bool = False,
    duplicates: Duplicates = "error",
    complete: bool = True,
    queries: npt.ArrayLike | None = None,
) -> tuple[RankedBatch, QuerySetReport]:
    """Join a run with its judgments into a :class:`RankedBatch`.

    Parameters
    ----------
    order : {"score", "given", "rank"}
        ``"score"`` ranks each query by score descending, ties by doc_id descending (trec_eval);
        ``"given"`` keeps the input order of the rows of each query; ``"rank"`` sorts by the run's
        rank column (``run.ranks``), ties in input order.
    max_depth : int, optional
        Keep only the first ``max_depth`` documents of each ranking (trec_eval ``-M``).
    judged_only : bool
        Drop retrieved documents without a non-negative judgment, then re-rank (trec_eval ``-J``).
    duplicates : {"error", "first"}
        A document twice for one query is an error, or only its first occurrence is kept.
    complete : bool
        Keep qrels queries that the run lacks, as empty rankings (trec_eval ``-c``). When false they
        are left out of the batch (and of every mean).
    queries : array of ids, optional
        Queries to evaluate besides those with judgments (a query without any judgment scores 0).
    """
    if max_depth is not None and max_depth < 0:
        raise InputFormatError(f"'max_depth' must be >= 0 or None; got {max_depth}")
    if order not in ("score", "given", "rank"):
        raise ValueError(f"'order' must be 'score', 'given' or 'rank'; got {order!r}")
    check_duplicates_option(duplicates)
    if isinstance(run, RunHandoff):
        run = run.take()
    if order == "rank" and run.ranks is None:
        raise ValueError("order='rank' needs the run's rank column (read_run_columns(..., with_ranks=True))")
    judged = prepared_qrels(qrels, queries, duplicates)
    run_origin, run_unit, run_scores, run_lines, run_ranks = run.origin, run.unit, run.scores, run.lines, run.ranks
    r_qids, r_docs = _as_bytes(run.query_ids), _as_bytes(run.doc_ids)
    # A run handed over (RunHandoff) is held by these locals alone from here on: each column is
    # freed at its ``del`` below, once used, which lowers the peak of the build.
    del run

    # A run lists each query's rows together: its query ids are looked up one run of equal ids at a time.
    n_run = len(r_qids)
    r_heads = _run_heads(r_qids)
    head_ids = r_qids if len(r_heads) == len(r_qids) else r_qids[r_heads]  # (every row a run: no copy)
    del r_qids
    r_head_code = _query_codes(judged, head_ids)
    judged_head = r_head_code >= 0
    not_judged = [] if judged_head.all() else [id_text(q) for q in intern(head_ids[~judged_head])[0]]
    del head_ids

    # Ranked rows of the evaluated queries (run rows of unjudged queries are reported and ignored).
    r_rows = None if judged_head.all() else np.flatnonzero(along_runs(judged_head, r_heads, len(r_docs)))
    rq, rd, scores, r_lines = _take(r_rows, along_runs(r_head_code, r_heads, len(r_docs)), r_docs,
                                    np.asarray(run_scores, dtype=np.float64), np.asarray(run_lines))
    ranks = _take(r_rows, np.asarray(run_ranks))[0] if order == "rank" else None
    del r_docs, run_scores, run_ranks, r_rows
    n_q = len(judged.query_vocab)
    # Every row a query of its own, the queries in code order (a log of one-row sessions, sorted as the
    # judgments are): no query holds two rows (no duplicate to look for) or rows to put in order.
    one_each = len(r_heads) == n_run and _strictly_increasing(rq)  # (the first test rules most runs out at no cost)
    if one_each:
        in_run, offsets = _one_row_each(rq, n_q)
    else:
        in_run = np.zeros(n_q, dtype=bool)
        in_run[r_head_code[judged_head]] = True
        if long_on_average(len(rq), len(r_head_code)):  # rows per query: those of its runs of rows (no pass over them)
            counts = np.zeros(n_q, dtype=np.int64)
            np.add.at(counts, r_head_code[judged_head], _run_lengths(r_heads, n_run)[judged_head])
        else:  # runs of a few rows (sessions): add.at costs some 20 ns a run, counting the rows 4 ns a row
            counts = np.bincount(rq, minlength=n_q)
    del r_heads, r_head_code, judged_head  # arrays as long as the rows, at a million sessions
    keys: npt.NDArray[np.uint64] | None = None
    if not one_each:
        # Each row's key of (query, document), for the duplicate check and then (in the rows' new order)
        # for the join, when that looks pairs up in the table: when it compares ids instead (queries of
        # few judgments), the check makes its own keys and sorts them in place, which takes less memory.
        keys = None if _scan_comparisons(counts, judged.offsets) <= _SCAN_COMPARISONS * len(rq) else pair_keys(rq, rd)
        keep_r = _check_duplicates(rq, rd, r_lines, run_origin, run_unit, "document", judged.query_vocab,
                                   duplicates, keys)
        if not keep_r.all():
            rq, rd, scores = rq[keep_r], rd[keep_r], scores[keep_r]
            keys = None if keys is None else keys[keep_r]
            ranks = None if ranks is None else ranks[keep_r]
            counts = np.bincount(rq, minlength=n_q)
        del keep_r
        offsets = _offsets_of(counts)
        del counts
    del r_lines, run_lines

    if one_each:
        reorder = None
    elif order == "score":
        reorder = canonical_order(rq, scores, rd)
    elif order == "given":
        reorder = grouped_order(rq)
    else:
        assert ranks is not None  # checked on entry: order="rank" needs the rank column
        reorder = RowOrder(len(rq), rows=np.lexsort((ranks, rq)))
    if reorder is not None:  # one column at a time, so that each old one is freed before the next copy
        rq = segment_ids(offsets)  # every order puts the rows by query: each query's code along its rows
        rd, keys = reorder.apply(rd), None if keys is None else reorder.apply(keys)
        scores = reorder.apply_blocks(scores)  # tied rows share their score: only ids and keys need the fix-up
    del reorder
    if max_depth is not None:
        rank = np.arange(len(rq)) - offsets[rq]
        depth_ok = rank < max_depth
        rq, rd, scores = rq[depth_ok], rd[depth_ok], scores[depth_ok]
        keys = None if keys is None else keys[depth_ok]
        offsets = _offsets_of(np.bincount(rq, minlength=n_q))

    # The qrels join: each ranked (query, document) pair looked up among the judged pairs.
    # The comparisons a scan join would make (one row for every query: as many as the judgments).
    full = one_each and len(rq) == n_q
    comparisons = int(judged.offsets[-1]) if full else _scan_comparisons(np.diff(offsets), judged.offsets)
    labels = judged.labels_of(rq, rd, keys, comparisons)
    del keys
    if judged_only:
        keep = labels >= 0
        rq, rd, scores, labels = rq[keep], rd[keep], scores[keep], labels[keep]
        offsets = _offsets_of(np.bincount(rq, minlength=n_q))

    batch = RankedBatch(
        query_vocab=judged.query_vocab,
        offsets=offsets,
        labels=labels,
        doc_ids=rd,
        scores=scores,
        judged_offsets=judged.offsets,
        judged_relevance=judged.relevance,
        judged_doc_ids=judged.doc_ids,
        in_run=in_run,
        subtopics=judged.subtopics,
    )
    missing = [id_text(judged.query_vocab[i]) for i in np.flatnonzero(~in_run)]
    report = QuerySetReport(missing_from_run=missing, not_judged=not_judged, dropped_missing=not complete)
    if not complete and missing:
        batch = batch.select(np.flatnonzero(in_run))
    if len(rq) > _CHUNK:
        release_freed_memory()
    return batch, report


def _strictly_increasing(codes: IntArray) -> bool:
    """Whether ``codes`` are strictly increasing."""
    return bool(np.all(codes[1:] > codes[:-1]))


def _one_row_each(query_code: IntArray, n_q: int) -> tuple[BoolArray, IntArray]:
    """Which of ``n_q`` queries have rows, and the bounds of each one's rows, for rows of increasing
    ``query_code``: one row for each query that has any."""
    if len(query_code) == n_q:  # every query has its row
        return np.ones(n_q, dtype=bool), np.arange(n_q + 1, dtype=np.int64)
    in_run = np.zeros(n_q, dtype=bool)
    in_run[query_code] = True
    return in_run, _offsets_of(in_run)


def _query_codes(judged: PreparedQrels, ids: np.ndarray) -> IntArray:
    """The code of each query id among the evaluated queries, -1 for the others."""
    vocab = judged.query_vocab
    if len(ids) == len(vocab) and ids.dtype.kind == "S" and vocab.dtype.kind == "S" and bool(
        _same_words(_words(ids, np.uint64), _words(vocab, np.uint64)).all()  # (words: several times faster)
    ):
        return np.arange(len(ids), dtype=np.int64)  # the judged queries, in the same order: nothing to search
    codes = np.full(len(ids), -1, dtype=np.int64)
    if judged.queries is not None or ids.dtype.kind != "S" or ids.dtype.itemsize > 8:
        index = judged.queries or PairIndex(np.zeros(len(vocab), dtype=np.int64), vocab)
        found, found_code = index.find(np.zeros(len(ids), dtype=np.int64), ids)
        codes[found] = found_code
    elif len(vocab):
        # Ids of up to 8 bytes as big-endian words sort as the ids do: a binary search of numbers.
        words, wanted = _words(vocab)[:, 0], _words(ids)[:, 0]
        pos = np.minimum(_search(words, wanted), len(vocab) - 1)
        hit = (words[pos] == wanted) & (vocab[pos] == ids)  # the bytes, for ids ending in NUL bytes
        codes[hit] = pos[hit]
    return codes


def _search(ordered: npt.NDArray[np.uint64], wanted: npt.NDArray[np.uint64]) -> IntArray:
    """``np.searchsorted(ordered, wanted)``, with many ``wanted`` out of order searched in their order.

    Searches in increasing order walk ``ordered`` from left to right and stay in the caches; in a
    random order every step of every search is a cache miss: 6.9 s for 10 M queries of a log among
    10 M, against 2.0 s with a sort of them first (a run lists its queries in file order, which need
    not be the qrels' order; 4 times faster from a million searches, twice at 65,536).
    """
    if len(wanted) < _SORTED_SEARCHES or bool(np.all(wanted[1:] >= wanted[:-1])):
        return np.searchsorted(ordered, wanted)
    order = np.argsort(wanted)
    at = np.empty(len(wanted), dtype=np.int64)
    at[order] = np.searchsorted(ordered, wanted[order])
    return at


#: Searches from which :func:`_search` sorts them first, when they are out of order.
_SORTED_SEARCHES = 1 << 16


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
    relevance: IntArray  #: the judged rows' raw values
    labels: IntArray  #: the label a ranked row takes from each judged row: its value, UNJUDGED if negative
    doc_ids: np.ndarray  #: the judged rows' document ids (in input order within a query)
    subtopics: Subtopics | None
    #: The hash table of the judged (query code, document id) pairs, made when first needed.
    _pairs: list[PairIndex] = field(factory=list, alias="pairs")

    def pairs(self) -> PairIndex:
        """The hash table of the judged pairs (made once; two threads may both make it, harmlessly)."""
        if not self._pairs:
            self._pairs.append(PairIndex(segment_ids(self.offsets), self.doc_ids, np.diff(self.offsets)))
        return self._pairs[0]

    def labels_of(self, query_code: IntArray, doc_ids: np.ndarray, keys: npt.NDArray[np.uint64] | None = None,
                  comparisons: int | None = None) -> IntArray:
        """The label of each (``query_code``, ``doc_ids``) row: its judged row's (see ``labels``), or
        NONPOOL. By comparing ids within each query when queries have few judgments, otherwise through
        the hash table (``keys``: the rows' :func:`~retrieval_eval._ids.pair_keys`, if the caller has
        them; ``comparisons``: the rows' :func:`_scan_comparisons`, if the caller knows them)."""
        labels = _scan_join(self.offsets, self.doc_ids, query_code, doc_ids, self.labels, comparisons)
        if labels is None:
            labels = np.full(len(query_code), NONPOOL, dtype=np.int64)
            rows, at = self.pairs().find(query_code, doc_ids, keys)
            labels[rows] = self.labels[at]
        return labels


#: Where queries have a handful of judgments (MS MARCO, click logs), a run row is compared with each
#: of its query's judged ids in turn when that takes at most this many comparisons per row on
#: average; otherwise pairs are looked up in a hash table (:class:`~retrieval_eval._ids.PairIndex`),
#: whose making alone costs more than a few comparisons per row.
_SCAN_COMPARISONS = 4


def _scan_join(offsets: IntArray, judged: np.ndarray, query_code: IntArray, doc_ids: np.ndarray,
               values: IntArray, comparisons: int | None = None) -> IntArray | None:
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
    if comparisons > _SCAN_COMPARISONS * len(query_code):
        return None
    out = np.empty(len(query_code), dtype=values.dtype)
    if not len(judged):
        out.fill(NONPOOL)
        return out

    def chunk(start: int) -> None:
        found = out[start : start + _FIND_CHUNK]
        found.fill(NONPOOL)
        codes = query_code[start : start + _FIND_CHUNK]
        first = offsets[:-1].take(codes)
        n_judged = offsets[1:].take(codes)
        n_judged -= first  # (no array per query kept)
        # The first step compares every row of the chunk (most have a judgment): whole slices of the
        # rows rather than a selection of them. A row of a query without judgments compares with some
        # other query's id (its index clipped to the judgments), and its match is dropped.
        candidate = first.clip(max=len(judged) - 1)
        same = _same_words(_words(judged.take(candidate), np.uint64),
                           _words(doc_ids[start : start + _FIND_CHUNK], np.uint64))
        same &= n_judged > 0
        np.putmask(found, same, values.take(candidate))
        same |= n_judged < 2  # (now: whether a row is done)
        pending = np.flatnonzero(~same)
        step = 1
        while len(pending):  # as many steps as the most judgments of a query that the run has
            candidate = first[pending] + step
            same = _same_ids(judged, candidate, doc_ids, pending + start)
            found[pending[same]] = values[candidate[same]]
            step += 1
            pending = pending[~same & (n_judged[pending] > step)]

    starts = [(start,) for start in range(0, len(query_code), _FIND_CHUNK)]
    for _ in in_order(chunk, starts, workers(len(query_code))):
        pass
    return out


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
    columns = (qrels.query_ids, qrels.doc_ids, qrels.relevance, qrels.lines, qrels.subtopics)
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
    if relevance.dtype != np.int64 or not (own_relevance or not relevance.flags.writeable):
        # Never a column the caller may still change: a copy made here, or a read-only column (the readers').
        relevance = relevance.astype(np.int64)
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
    query_code: IntArray, docs: np.ndarray, subtopic_ids: np.ndarray, relevance: IntArray, lines: IntArray,
    qrels: QrelsColumns, query_vocab: np.ndarray, policy: Duplicates,
) -> tuple[Subtopics, IntArray, IntArray]:
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
            f"{_display(query_vocab[query_code[second]])!r}, subtopic {_display(subtopic_ids[second])!r}, "
            f"document {_display(docs[second])!r} (first at {qrels.unit} {int(lines[first])}); expected each "
            "document at most once per query and subtopic"
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
