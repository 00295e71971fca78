"""The columnar batch every measure is computed on: :class:`RankedBatch`, its :class:`Hits` and :class:`Subtopics`.

A :class:`RankedBatch` holds any number of queries as flat arrays cut into per-query segments:

* ranked rows (one per retrieved document, in rank order) with their *label*: the qrels value when
  the document is judged (>= 0), :data:`NONPOOL` (-1) when the query's qrels do not mention it, and
  :data:`UNJUDGED` (-2) when the qrels give it a negative value ("pooled but not judged");
* judged rows (one per qrels entry) with their raw relevance value.

Segments are described by ``offsets`` arrays of length ``n_queries + 1``. Memory is linear in the
input whatever the depth of each query: nothing is ever padded to ``queries x max depth``.
:mod:`.build` makes a batch from a run and its judgments.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from attrs import define, field, frozen

from ..model import BoolArray, FloatArray, GradeArray, IntArray, id_text
from .segments import (
    _gather_segments,
    _offsets_of,
    long_segments,
    offsets_count,
    segment_ids,
    true_before,
)

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

    from .preferences import Preferences

T = TypeVar("T")

NONPOOL = -1  #: label of a retrieved document the query's qrels do not mention

UNJUDGED = -2  #: label of a retrieved document whose qrels value is negative


def _query_at(offsets: IntArray, rows: IntArray) -> IntArray:
    """The segment of each of ``rows``: the last whose first row is at or before it (a binary search)."""
    query = np.searchsorted(offsets, rows, side="right")
    query -= 1  # in place: a log of 10 M sessions has millions of hits
    return query


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
    def of_rows(cls, rows: IntArray, offsets: IntArray, query: IntArray | None = None) -> Hits:
        """The hits at ``rows`` (increasing ranked-row indices) of segments ``offsets``; ``query``, the
        query of each of ``rows``, when the caller has it (:meth:`RankedBatch.query_of`), else searched for."""
        if len(offsets) == 2:  # one query (RetrievalEvaluator): the same numbers, without the index steps
            n_hits = len(rows)
            return cls(rows, np.zeros(n_hits, dtype=np.int64), rows - (int(offsets[0]) - 1),
                       np.arange(1, n_hits + 1, dtype=np.int64), np.array([0, n_hits], dtype=np.int64))
        if query is None:
            query = _query_at(offsets, rows)
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
        if len(self.offsets) == 2 and not isinstance(k, np.ndarray):  # one query: its hits' ranks increase
            return np.array([self.rank.searchsorted(k, side="right")], dtype=np.int64)
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
    relevance: GradeArray  #: the judgment's raw value (int64, or float64 grades)

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
    labels : (n_ranked,) int, or float
        Qrels value of each ranked document, or NONPOOL / UNJUDGED: float64 when the qrels hold float
        grades (2.5), int64 otherwise (see :attr:`float_grades`).
    doc_ids : (n_ranked,) bytes array
        Id of each ranked document.
    scores : (n_ranked,) float
        Retrieval scores (NaN when the input gave none).
    judged_offsets : (n_queries + 1,) int
        Segment bounds of the judged rows.
    judged_relevance : (n_judged,) int, or float
        Raw qrels values, per query (the same dtype as ``labels``).
    judged_doc_ids : (n_judged,) bytes array
        Id of each judged document, in input order within each query.
    in_run : (n_queries,) bool
        False for qrels queries the run never mentioned (scored as empty rankings).
    subtopics : Subtopics or None
        The per-subtopic judgments of the diversity measures, when the qrels were read with their
        subtopic column; the judged rows above then hold each document's largest value.
    ties : str
        The tie policy the rows were ordered by (:mod:`.ties`): with ``"expected"`` the measures give
        their expected value over every order of each run of equal scores.
    """

    query_vocab: np.ndarray
    offsets: IntArray
    labels: GradeArray
    doc_ids: np.ndarray
    scores: FloatArray
    judged_offsets: IntArray
    judged_relevance: GradeArray
    judged_doc_ids: np.ndarray
    in_run: BoolArray
    subtopics: Subtopics | None = None
    ties: str = "trec_eval"
    #: Preference judgments (trec_eval -R prefs, qrels_prefs); None for relevance judgments.
    preferences: Preferences | None = None
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

    @property
    def float_grades(self) -> bool:
        """Whether the judgments are float grades (some grade is not integral: 2.5): labels and judged
        values are float64 then, int64 otherwise (:func:`~retrieval_eval.model.grade_column`)."""
        return self.labels.dtype.kind == "f"

    def hits_above(self, level: int) -> Hits:
        """The ranked rows judged above ``level`` (>= 0): those with a gain beyond it. With integer grades
        these are ``hits(level + 1)``; with float grades, the rows of ``hits(level)`` above it (0.5 is
        above 0)."""
        if not self.float_grades:
            return self.hits(level + 1)

        def compute() -> Hits:
            judged = self.hits(level)
            return judged.where(self.labels[judged.row] > level)

        return self._cached(("hits-above", level), compute)

    def judged_nonrelevant(self, rel: int) -> BoolArray:
        """Whether each ranked row is judged non-relevant: 0 <= value < ``rel`` (made anew each time)."""
        nonrelevant = self.labels >= 0
        nonrelevant &= self.labels < rel
        return nonrelevant

    def n_relevant(self, rel: int) -> IntArray:
        """R per query: qrels entries with value >= ``rel`` (negative values never count)."""

        def compute() -> IntArray:
            if len(self.judged_offsets) == 2:  # one query: a count of all its judged rows
                return np.array([np.count_nonzero(self.judged_relevance >= max(rel, 0))], dtype=np.int64)
            if rel <= 0 and self.judged_relevance.min(initial=0) >= 0:
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
                return self.hits_at((self.labels >= max(rel, 0)).nonzero()[0])  # (flatnonzero, less its wrappers)
            return judged.where(self.labels[judged.row] >= rel)

        return self._cached(("hits", max(rel, 0)), compute)

    def hits_at(self, rows: IntArray) -> Hits:
        """The hits at ranked rows ``rows`` (increasing), their queries found by :meth:`query_of`."""
        if len(self.offsets) == 2:  # one query: no index needed
            return Hits.of_rows(rows, self.offsets)
        return Hits.of_rows(rows, self.offsets, self.query_of(rows))

    def query_of(self, rows: IntArray) -> IntArray:
        """The query of each of ``rows`` (increasing ranked-row indices): read from :attr:`segment`
        (made once per batch) when segments are short, where a gather costs a third of the binary
        searches; searched for among the query starts when they are long (no index of every row)."""
        if long_segments(self.offsets):
            return _query_at(self.offsets, rows)
        return self.segment.take(rows)

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
            subtopics=None if self.subtopics is None else self.subtopics.select(indices), ties=self.ties,
            preferences=None if self.preferences is None else self.preferences.select(indices),
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
            ties=self.ties,
            preferences=None if self.preferences is None else self.preferences.block(start, stop),
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
                subtopics=self.subtopics, ties=self.ties, preferences=self.preferences,
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
