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

import ctypes
from collections.abc import Callable
from functools import cache, cached_property
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt
from attrs import define, field, frozen

from .model import InputFormatError

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]

NONPOOL = -1  #: label of a retrieved document the query's qrels do not mention
UNJUDGED = -2  #: label of a retrieved document whose qrels value is negative

Order = Literal["score", "given", "rank"]
Duplicates = Literal["error", "first"]


# --------------------------------------------------------------------------------------------------
# Input columns (what readers and in-memory constructors produce)


@define
class QrelsColumns:
    """Judgments as parallel arrays. ``lines`` number the records 1.. in ``origin`` (for errors):
    file lines when ``unit == "line"``, else list positions."""

    query_ids: np.ndarray
    doc_ids: np.ndarray
    relevance: IntArray
    lines: IntArray
    origin: str = "<qrels>"
    unit: str = "line"


@define
class RunColumns:
    """Retrieved documents as parallel arrays, in input order."""

    query_ids: np.ndarray
    doc_ids: np.ndarray
    scores: FloatArray
    lines: IntArray
    origin: str = "<run>"
    run_id: str = ""
    unit: str = "line"
    ranks: IntArray | None = None  #: the file's rank column, read only when ranking by it


def _location(origin: str, unit: str, number: int) -> str:
    """``path:12`` for a file line, ``<origin>, position 3`` for an in-memory record."""
    return f"{origin}:{number}" if unit == "line" else f"{origin}, {unit} {number}"


def _display(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return str(value)


# --------------------------------------------------------------------------------------------------
# Segment primitives shared by the kernels


def segment_ids(offsets: IntArray) -> IntArray:
    """Query index of every row, for segments given by ``offsets`` (n+1,) -> (offsets[-1],)."""
    return np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))


def segment_sum(values: npt.ArrayLike, segment: IntArray, n: int) -> FloatArray:
    """Sum of ``values`` per segment, accumulated in row order (as trec_eval does); 0.0 when empty."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return np.zeros(n)
    return np.bincount(segment, weights=values, minlength=n)


def segment_count(mask: BoolArray, segment: IntArray, n: int) -> IntArray:
    """Number of true rows per segment."""
    return np.bincount(segment[mask], minlength=n).astype(np.int64)


def segment_heads(offsets: IntArray, k: int) -> IntArray:
    """Row indices of the first min(k, length) rows of every segment, in row order."""
    lengths = np.minimum(np.diff(offsets), k)
    starts = np.concatenate(([0], np.cumsum(lengths)))
    return np.arange(starts[-1], dtype=np.int64) + np.repeat(offsets[:-1] - starts[:-1], lengths)


def range_max(values: FloatArray, starts: IntArray, ends: IntArray, empty: float = 0.0) -> FloatArray:
    """``max(values[starts[i]:ends[i]])`` for every i; ``empty`` where the range is empty."""
    out = np.full(len(starts), empty, dtype=np.float64)
    nonempty = ends > starts
    if not nonempty.any():
        return out
    # reduceat over interleaved (start, end) pairs; the sentinel lets an end equal len(values).
    padded = np.append(values, empty)
    bounds = np.column_stack((starts[nonempty], ends[nonempty])).ravel()
    out[nonempty] = np.maximum.reduceat(padded, bounds)[::2]
    return out


def safe_div(num: npt.ArrayLike, den: npt.ArrayLike) -> FloatArray:
    """``num / den`` element-wise, with 0.0 wherever ``den == 0`` (never NaN, never a warning)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    num, den = np.broadcast_arrays(num, den)
    return np.divide(num, den, out=np.zeros(num.shape), where=den != 0)


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
    def of_rows(cls, rows: IntArray, offsets: IntArray) -> Hits:
        """The hits at ``rows`` (increasing ranked-row indices) of segments ``offsets``."""
        # A query's hits start after every hit row that lies before the query's first row.
        hit_offsets = np.searchsorted(rows, offsets).astype(np.int64)
        query = segment_ids(hit_offsets)
        start = offsets[:-1][query]
        return cls(rows, query, rows - start + 1, np.arange(1, len(rows) + 1) - hit_offsets[:-1][query],
                   hit_offsets)

    @property
    def count(self) -> IntArray:
        """Number of hits per query."""
        return np.diff(self.offsets)

    def where(self, keep: BoolArray) -> Hits:
        """The hits where ``keep`` (h,) is true; positions are renumbered within the subset."""
        kept = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
        offsets = kept[self.offsets]
        query = self.query[keep]
        position = kept[1:][keep] - offsets[:-1][query]
        return Hits(self.row[keep], query, self.rank[keep], position, offsets)

    def upto(self, k: int | IntArray) -> IntArray:
        """Number of hits at ranks 1..k per query (``k`` a number, or one per query)."""
        limit = k if np.isscalar(k) else np.asarray(k)[self.query]
        return np.bincount(self.query[self.rank <= limit], minlength=len(self.offsets) - 1).astype(np.int64)

    def above(self, rows: IntArray, query: IntArray) -> IntArray:
        """For each ranked row ``rows[i]`` of query ``query[i]``, the number of these hits ranked above it."""
        return np.searchsorted(self.row, rows) - self.offsets[query]


# --------------------------------------------------------------------------------------------------
# The batch


@define(eq=False)
class RankedBatch:
    """Ranked and judged rows of many queries, cut into per-query segments.

    Attributes
    ----------
    query_ids : list of str
        Query ids in evaluation order (byte order of the UTF-8 id, as trec_eval's ``strcmp``).
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
        Id of each judged document, in byte order within each query.
    in_run : (n_queries,) bool
        False for qrels queries the run never mentioned (scored as empty rankings).
    """

    query_ids: list[str]
    offsets: IntArray
    labels: IntArray
    doc_ids: np.ndarray
    scores: FloatArray
    judged_offsets: IntArray
    judged_relevance: IntArray
    judged_doc_ids: np.ndarray
    in_run: BoolArray
    _cache: dict = field(factory=dict, init=False, repr=False)

    # ---- shape
    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

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
    def _cached(self, key: tuple, compute):  # noqa: ANN001, ANN202 - tiny memo helper
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def relevant(self, rel: int) -> BoolArray:
        """Whether each ranked row is relevant: judged with a value >= ``rel`` (and >= 0)."""
        return self._cached(("relevant", rel), lambda: self.labels >= max(rel, 0))

    def judged_nonrelevant(self, rel: int) -> BoolArray:
        """Whether each ranked row is judged non-relevant: 0 <= value < ``rel``."""
        return self._cached(("judged_nonrel", rel), lambda: (self.labels >= 0) & (self.labels < rel))

    def n_relevant(self, rel: int) -> IntArray:
        """R per query: qrels entries with value >= ``rel`` (negative values never count)."""
        return self._cached(
            ("R", rel),
            lambda: segment_count(self.judged_relevance >= max(rel, 0), self.judged_segment, self.n_queries),
        )

    def n_nonrelevant(self, rel: int) -> IntArray:
        """NR per query: qrels entries with 0 <= value < ``rel``, retrieved or not."""
        judged = self.judged_relevance
        return self._cached(
            ("NR", rel),
            lambda: segment_count((judged >= 0) & (judged < rel), self.judged_segment, self.n_queries),
        )

    def n_relevant_retrieved(self, rel: int) -> IntArray:
        """Number of relevant ranked rows per query."""
        return self.hits(rel).count

    def hits(self, rel: int) -> Hits:
        """The ranked rows judged >= ``rel`` (and >= 0): with rel <= 0, every judged row.

        One pass over the labels finds the judged rows; every threshold is then a subset of them.
        """

        def compute() -> Hits:
            if rel <= 0:
                return Hits.of_rows(np.flatnonzero(self.labels >= 0), self.offsets)
            judged = self.hits(0)
            return judged.where(self.labels[judged.row] >= rel)

        return self._cached(("hits", max(rel, 0)), compute)

    def nonrelevant_hits(self, rel: int) -> Hits:
        """The ranked rows judged non-relevant: 0 <= value < ``rel``."""

        def compute() -> Hits:
            judged = self.hits(0)
            return judged.where(self.labels[judged.row] < rel)

        return self._cached(("nonrel-hits", rel), compute)

    def relevant_at(self, k: int, rel: int) -> IntArray:
        """rel@k per query: relevant documents in ranks 1..k (missing ranks are non-relevant)."""
        return self._cached(("rel@", k, rel), lambda: self.hits(rel).upto(k))

    # ---- slicing
    def select(self, indices: npt.ArrayLike) -> RankedBatch:
        """A batch of the queries at ``indices`` (in that order); cost linear in their size."""
        indices = np.asarray(indices, dtype=np.int64)
        rows = _gather_segments(self.offsets, indices)
        judged = _gather_segments(self.judged_offsets, indices)
        return RankedBatch(
            query_ids=[self.query_ids[i] for i in indices],
            offsets=_offsets_of(np.diff(self.offsets)[indices]),
            labels=self.labels[rows],
            doc_ids=self.doc_ids[rows],
            scores=self.scores[rows],
            judged_offsets=_offsets_of(np.diff(self.judged_offsets)[indices]),
            judged_relevance=self.judged_relevance[judged],
            judged_doc_ids=self.judged_doc_ids[judged],
            in_run=self.in_run[indices],
        )

    def doc_id(self, row: int) -> str:
        """The id of the document at ranked row ``row``."""
        return _display(self.doc_ids[row])


def release_freed_memory() -> None:
    """Hand memory freed by NumPy back to the OS, where the C library is glibc (Linux).

    glibc keeps freed blocks in its heaps (one per thread) for reuse; after reading a large file
    on several threads that is a few hundred MB of temporaries, which would add to the peak of the
    next step. Elsewhere this does nothing.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def _offsets_of(lengths: npt.ArrayLike) -> IntArray:
    return np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))


def _gather_segments(offsets: IntArray, indices: IntArray) -> IntArray:
    """Row indices of the segments ``indices``, concatenated (no loop over rows)."""
    starts = offsets[indices]
    return _block_rows(starts, offsets[indices + 1] - starts)


def _block_rows(starts: IntArray, lengths: IntArray) -> IntArray:
    """Row indices of the blocks of rows ``starts[i]:starts[i] + lengths[i]``, concatenated."""
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - _offsets_of(lengths)[:-1], lengths)


# --------------------------------------------------------------------------------------------------
# Building a batch: interning, the qrels join, duplicates and the canonical order


@define
class QuerySetReport:
    """Which queries the judgments and the run disagree on."""

    missing_from_run: list[str]  #: qrels queries with no run line (scored as empty rankings)
    not_judged: list[str]  #: run queries with no qrels (ignored)
    dropped_missing: bool = False  #: True when missing queries were left out of the average


def _words(ids: np.ndarray, dtype: npt.DTypeLike = ">u8") -> npt.NDArray[np.uint64]:
    """Fixed-width byte strings as rows of 64-bit words, zero-padded.

    Read big-endian (the default), comparing rows compares bytes, as sorting needs; read as
    ``np.uint64`` the words are a view of the ids in memory order (no copy when the width is a
    multiple of 8), which is all that comparing for equality and hashing need.
    """
    width = ids.dtype.itemsize
    padded = -(-width // 8) * 8
    if padded != width:
        ids = ids.astype(f"S{padded}")  # pads with NUL, which sorts below every byte, as in strcmp
    words = np.ascontiguousarray(ids).view(dtype).reshape(len(ids), padded // 8)
    return words.astype(np.uint64, copy=False)


#: An odd 64-bit multiplier for hashing ids (any odd constant with well-mixed bits would do).
_MIX = 0x9E3779B97F4A7C15
#: Rows per chunk in linear passes whose temporaries need not span the whole run.
_CHUNK = 1 << 20


def _id_hash(ids: np.ndarray) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each byte-string id: equal ids hash equal whatever the array widths.

    An id of up to 8 bytes is its own hash (its bytes, exact). Longer ids may collide, so a hash
    match is only ever a candidate, confirmed by comparing bytes. Trailing zero words add nothing,
    which is what makes the hash independent of the width of the array holding the id.
    """
    words = _words(ids, np.uint64)
    hashed = words[:, 0].copy()
    power = 1
    for j in range(1, words.shape[1]):  # loop over 8-byte words of the ids, not over ids
        power = power * _MIX % 2**64
        hashed += words[:, j] * np.uint64(power)  # wraps modulo 2**64
    return hashed


def _intern_words(ids: np.ndarray, words: npt.NDArray[np.uint64]) -> tuple[np.ndarray, IntArray]:
    if words.shape[1] == 1:
        keys, codes = np.unique(words[:, 0], return_inverse=True)
        return keys.astype(">u8").view("S8"), codes.ravel().astype(np.int64)
    order = np.lexsort(words.T[::-1])  # lexsort's last key is the primary one: the first word
    ordered = words[order]
    new = np.concatenate(([True], np.any(ordered[1:] != ordered[:-1], axis=1)))
    codes = np.empty(len(ids), dtype=np.int64)
    codes[order] = np.cumsum(new) - 1
    return ids[order[new]], codes


def intern(ids: np.ndarray) -> tuple[np.ndarray, IntArray]:
    """Distinct ids in byte order and the code of each id (``np.unique(ids, return_inverse=True)``).

    Byte strings are compared as 64-bit words rather than as strings, which is several times faster;
    ids that come in runs (a run file's query column) are interned one run at a time.
    """
    if ids.dtype.kind != "S" or len(ids) == 0:
        vocab, codes = np.unique(ids, return_inverse=True)
        return vocab, codes.ravel().astype(np.int64)
    heads = _run_heads(ids)
    if len(heads) >= len(ids) // 2:
        return _intern_words(ids, _words(ids))
    vocab, head_codes = _intern_words(ids[heads], _words(ids[heads]))
    return vocab, np.repeat(head_codes, np.diff(heads, append=len(ids)))


def _run_heads(ids: np.ndarray) -> IntArray:
    """Index of the first id of every run of equal adjacent ids."""
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    if ids.dtype.kind == "S":  # whole words compare several times faster than strings
        words = _words(ids, np.uint64)
        changed = words[1:, 0] != words[:-1, 0]
        for j in range(1, words.shape[1]):
            changed |= words[1:, j] != words[:-1, j]
    else:
        changed = ids[1:] != ids[:-1]
    return np.concatenate(([0], np.flatnonzero(changed) + 1))


def _table_slot(hashed: npt.NDArray[np.uint64], bits: int) -> IntArray:
    """A ``bits``-bit slot for each hash; multiplying first spreads ids that differ only in low bytes."""
    slot = hashed * np.uint64(_MIX)
    slot >>= np.uint64(64 - bits)
    return slot.view(np.int64)


def _lookup(vocab: np.ndarray, ids: np.ndarray) -> tuple[IntArray, IntArray]:
    """The ``ids`` found in ``vocab`` (distinct, byte-ordered bytes ids): their positions in
    ``ids`` (ascending) and their indices in ``vocab``. Absent ids cost no memory: a run usually
    retrieves far more documents than were ever judged."""
    none = np.zeros(0, dtype=np.int64)
    if len(vocab) == 0 or len(ids) == 0:
        return none, none
    vocab_hash = _id_hash(vocab)
    by_hash = np.argsort(vocab_hash)
    sorted_hash = vocab_hash[by_hash]
    if bool(np.any(sorted_hash[1:] == sorted_hash[:-1])):  # two long ids collide: compare bytes instead
        pos = np.minimum(np.searchsorted(vocab, ids), len(vocab) - 1)
        found = np.flatnonzero(vocab[pos] == ids)
        return found, pos[found]
    # A bit table of the vocabulary's hashes rules most ids out in one gather; only the rest are
    # searched.
    bits = min(max(int(len(vocab) * 32).bit_length(), 16), 26)  # about 1 in 32 absent ids gets through
    table = np.zeros(1 << bits, dtype=bool)
    table[_table_slot(sorted_hash, bits)] = True
    rows, codes = [], []
    for start in range(0, len(ids), _CHUNK):  # chunks bound the temporary arrays
        chunk = ids[start : start + _CHUNK]
        ids_hash = _id_hash(chunk)
        maybe = np.flatnonzero(table[_table_slot(ids_hash, bits)])
        pos = np.minimum(np.searchsorted(sorted_hash, ids_hash[maybe]), len(vocab) - 1)
        match = sorted_hash[pos] == ids_hash[maybe]
        candidates, code = maybe[match], by_hash[pos[match]]
        exact = vocab[code] == chunk[candidates]  # confirm every hash match byte for byte
        rows.append(start + candidates[exact])
        codes.append(code[exact])
    return np.concatenate(rows), np.concatenate(codes)


@define
class RowOrder:
    """A new order of the rows, applied to each column with :meth:`apply`.

    Either any permutation (``rows``), or the cheap form a run file usually needs: its query blocks
    moved whole (the blocks starting at ``block_starts`` with ``block_lengths``, in their new order),
    then a few rows within the blocks replaced (``tied`` positions take the rows at ``tied_from``:
    the re-sorted tie groups). The cheap form costs copies of blocks rather than a gather per row.
    """

    n: int
    rows: IntArray | None = None
    block_starts: IntArray | None = None
    block_lengths: IntArray | None = None
    tied: IntArray | None = None
    tied_from: IntArray | None = None

    def apply(self, column: np.ndarray, ties: bool = True) -> np.ndarray:
        """The column in the new order. ``ties=False`` skips the tie fix-up, for columns that are
        equal within every tie group (the query and the score)."""
        if self.rows is not None:
            return column[self.rows]
        out = column if self.block_starts is None else _move_blocks(column, self.block_starts, self.block_lengths)
        if ties and self.tied is not None:
            if out is column:
                out = column.copy()
            out[self.tied] = out[self.tied_from]
        return out

    def permutation(self) -> IntArray:
        """The order as one array of row indices."""
        return self.apply(np.arange(self.n, dtype=np.int64))


def _move_blocks(column: np.ndarray, starts: IntArray, lengths: IntArray) -> np.ndarray:
    """The blocks of rows ``column[start:start + length]`` for each (start, length), concatenated."""
    if len(starts) * 64 <= len(column):  # long blocks: one copy each (a loop over queries, not rows)
        return np.concatenate([column[a:b] for a, b in zip(starts.tolist(), (starts + lengths).tolist())])
    return column[_block_rows(starts, lengths)]


def _new_positions(order: RowOrder, rows: IntArray) -> IntArray:
    """Where ``rows`` are once the blocks of ``order`` have moved."""
    if order.block_starts is None:
        return rows
    by_start = np.argsort(order.block_starts)  # the blocks in their old order
    old_starts = order.block_starts[by_start]
    new_starts = _offsets_of(order.block_lengths)[:-1][by_start]
    block = np.searchsorted(old_starts, rows, side="right") - 1
    return new_starts[block] + (rows - old_starts[block])


def _query_blocks(query_code: IntArray) -> IntArray | None:
    """Start of each run of equal query codes, if every query forms a single run; else None."""
    starts = _run_heads(query_code)
    if len(np.unique(query_code[starts])) != len(starts):
        return None
    return starts


def _order_blocks(query_code: IntArray, starts: IntArray) -> RowOrder | None:
    """The order that sorts contiguous query blocks by query code; None if they already are."""
    block_query = query_code[starts]
    if bool(np.all(block_query[1:] > block_query[:-1])):
        return None
    by_query = np.argsort(block_query)
    lengths = np.diff(starts, append=len(query_code))
    return RowOrder(len(query_code), block_starts=starts[by_query], block_lengths=lengths[by_query])


def grouped_order(query_code: IntArray) -> RowOrder | None:
    """Stable row order by query (each query's rows keep their input order); None if nothing moves."""
    if len(query_code) < 2:
        return None
    starts = _query_blocks(query_code)
    if starts is None:
        return RowOrder(len(query_code), rows=np.argsort(query_code, kind="stable"))
    return _order_blocks(query_code, starts)


def canonical_order(query_code: IntArray, score: FloatArray, doc_ids: np.ndarray) -> RowOrder | None:
    """Row order: query, then score descending, then doc_id descending (trec_eval's tie rule).

    ``doc_ids`` are bytes, compared like C's ``strcmp``. Each (query, doc) pair must occur once.
    Returns None when the rows are in that order already.
    """
    n = len(query_code)
    if n < 2:
        return None
    starts = _query_blocks(query_code)
    same_query = query_code[1:] == query_code[:-1]
    if starts is not None and bool(np.all(~same_query | (score[1:] <= score[:-1]))):
        # Run files usually hold each query in one block, by score already. Then the blocks move
        # whole and only the rows of tie groups are sorted, at a cost linear in the rows.
        order = _order_blocks(query_code, starts) or RowOrder(n)
        tied_to_previous = np.concatenate(([False], same_query & (score[1:] == score[:-1])))
        del same_query
        in_tie = tied_to_previous.copy()
        in_tie[:-1] |= tied_to_previous[1:]
        rows = np.flatnonzero(in_tie)
        if len(rows):
            # One sort of the tied rows: by tie group, then by id bytes descending (words inverted).
            group = np.cumsum(~tied_to_previous[rows])
            words = _words(doc_ids[rows])
            moved = rows[np.lexsort((*(~words.T[::-1]), group))]
            changed = moved != rows
            if bool(np.any(changed)):
                # Positions after the blocks move: where each tied row lands, and where the row it
                # takes is then (tie groups never span blocks, so both shift alike).
                order.tied = _new_positions(order, rows[changed])
                order.tied_from = _new_positions(order, moved[changed])
        return None if order.block_starts is None and order.tied is None else order
    vocab, doc_code = intern(doc_ids)
    n_docs = len(vocab)
    distinct, inverse = np.unique(score, return_inverse=True)
    n_groups = len(distinct) * (int(query_code.max()) + 1)
    if n_groups * n_docs >= 2**62:  # the key would overflow: sort on the three columns instead
        return RowOrder(n, rows=np.lexsort((-doc_code, -score, query_code)))
    group = query_code * len(distinct) + (len(distinct) - 1 - inverse.ravel())
    return RowOrder(n, rows=np.argsort(group * n_docs + (n_docs - 1 - doc_code), kind="stable"))


def _as_bytes(values: npt.ArrayLike) -> np.ndarray:
    """Ids as a bytes array (UTF-8), since byte order is the tie rule and hashing works on bytes."""
    arr = np.asarray(values)
    if arr.dtype.kind == "S":
        return arr
    if arr.size == 0:
        return np.zeros(0, dtype="S1")
    return np.char.encode(arr.astype(str), "utf-8")


def _check_duplicates(
    query_code: IntArray, ids: np.ndarray, lines: IntArray, origin: str, unit: str, what: str,
    query_ids: np.ndarray, policy: Duplicates,
) -> BoolArray:
    """Mask of rows to keep; raises on a repeated (query, id) unless ``policy == 'first'``."""
    keep = np.ones(len(query_code), dtype=bool)
    if len(query_code) < 2:
        return keep
    # Fast certificate: when no two rows share a hash of (query, id), no row repeats. (The id hash
    # is multiplied before the query code goes into its low bits, so that "doc8" in query 1 and
    # "doc9" in query 0 do not collide; everything in place, to add one array only.)
    hashed = np.ascontiguousarray(_id_hash(ids))
    hashed *= np.uint64(_MIX)
    hashed ^= np.ascontiguousarray(query_code, dtype=np.int64).view(np.uint64)
    hashed.sort()
    if not bool(np.any(hashed[1:] == hashed[:-1])):
        return keep
    del hashed
    # Some row may repeat: find out exactly, on interned ids.
    vocab, doc_code = intern(ids)
    n_docs = len(vocab)
    # Rows arrive in line order, so a stable sort on (query, doc) puts the first occurrence first.
    if (int(query_code.max()) + 1) * n_docs < 2**62:
        order = np.argsort(query_code * n_docs + doc_code, kind="stable")
    else:
        order = np.lexsort((lines, doc_code, query_code))
    q, d = query_code[order], doc_code[order]
    repeat = np.flatnonzero((q[1:] == q[:-1]) & (d[1:] == d[:-1])) + 1
    if repeat.size == 0:
        return keep
    if policy == "error":
        second, first = order[repeat[0]], order[repeat[0] - 1]
        raise InputFormatError(
            f"{_location(origin, unit, int(lines[second]))}: duplicate {what} for query "
            f"{_display(query_ids[query_code[second]])!r}, document {_display(ids[second])!r} "
            f"(first at {unit} {int(lines[first])}); expected each document at most once per query"
        )
    keep[order[repeat]] = False
    return keep


def _take(rows: IntArray | None, *columns: np.ndarray) -> list[np.ndarray]:
    """``column[rows]`` for each column; the columns themselves when ``rows`` is None (all rows)."""
    return list(columns) if rows is None else [column[rows] for column in columns]


def _release(run: RunColumns, consume: bool, *names: str) -> None:
    if consume:
        for name in names:
            setattr(run, name, None)


def build_batch(
    qrels: QrelsColumns,
    run: RunColumns,
    *,
    order: Order = "score",
    max_depth: int | None = None,
    judged_only: bool = False,
    duplicates: Duplicates = "error",
    complete: bool = True,
    queries: npt.ArrayLike | None = None,
    consume_run: bool = False,
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
    consume_run : bool
        Set each of the run's columns to None once it is used up, so that its memory goes back
        while the batch is built, instead of after (for callers that made ``run`` themselves).
    """
    if max_depth is not None and max_depth < 0:
        raise InputFormatError(f"'max_depth' must be >= 0 or None; got {max_depth}")
    if order not in ("score", "given", "rank"):
        raise ValueError(f"'order' must be 'score', 'given' or 'rank'; got {order!r}")
    if order == "rank" and run.ranks is None:
        raise ValueError("order='rank' needs the run's rank column (read_run_columns(..., with_ranks=True))")
    q_qids, r_qids, q_docs, r_docs, extra = map(
        _as_bytes, (qrels.query_ids, run.query_ids, qrels.doc_ids, run.doc_ids, [] if queries is None else queries)
    )

    # Query codes follow the byte order of the ids (trec_eval's strcmp order). A run lists each
    # query's rows together, so its query column is interned one run of equal ids at a time.
    r_heads = _run_heads(r_qids)
    r_run_lengths = np.diff(r_heads, append=len(r_qids))
    all_qids, all_query_code = intern(np.concatenate((q_qids, extra, r_qids[r_heads])))
    del r_qids
    _release(run, consume_run, "query_ids")
    evaluated = np.zeros(len(all_qids), dtype=bool)
    evaluated[all_query_code[: len(q_qids) + len(extra)]] = True
    query_vocab = all_qids[evaluated]
    renumber = np.cumsum(evaluated) - 1
    q_query_code = renumber[all_query_code[: len(q_qids)]]
    r_head_code = all_query_code[len(q_qids) + len(extra):]
    judged_head = evaluated[r_head_code]
    not_judged = [_display(all_qids[c]) for c in np.unique(r_head_code[~judged_head])]

    # Judged rows, by query then doc_id bytes: the qrels doc ids are interned (they are few next
    # to the run's), and a run document is judged only if it is among them.
    keep_q = _check_duplicates(q_query_code, q_docs, qrels.lines, qrels.origin, qrels.unit, "judgment",
                               query_vocab, duplicates)
    doc_vocab, q_doc_code = intern(q_docs)
    q_rows = np.flatnonzero(keep_q)
    if (len(query_vocab) + 1) * (len(doc_vocab) + 1) < 2**62:  # one sort of one key (each pair is distinct)
        q_rows = q_rows[np.argsort(q_query_code[q_rows] * len(doc_vocab) + q_doc_code[q_rows])]
    else:
        q_rows = q_rows[np.lexsort((q_doc_code[q_rows], q_query_code[q_rows]))]
    j_query, j_doc, j_rel = q_query_code[q_rows], q_doc_code[q_rows], np.asarray(qrels.relevance)[q_rows]

    # Ranked rows of the evaluated queries (run rows of unjudged queries are reported and ignored).
    r_rows = None if judged_head.all() else np.flatnonzero(np.repeat(judged_head, r_run_lengths))
    rq, rd, scores, r_lines = _take(r_rows, np.repeat(renumber[r_head_code], r_run_lengths), r_docs,
                                    np.asarray(run.scores, dtype=np.float64), np.asarray(run.lines))
    ranks = _take(r_rows, np.asarray(run.ranks))[0] if order == "rank" else None
    del r_docs
    _release(run, consume_run, "doc_ids", "scores", "ranks")
    n_q = len(query_vocab)
    in_run = np.zeros(n_q, dtype=bool)
    in_run[renumber[r_head_code[judged_head]]] = True
    keep_r = _check_duplicates(rq, rd, r_lines, run.origin, run.unit, "document", query_vocab, duplicates)
    if not keep_r.all():
        rq, rd, scores = rq[keep_r], rd[keep_r], scores[keep_r]
        ranks = None if ranks is None else ranks[keep_r]
    del r_lines, keep_r
    _release(run, consume_run, "lines")

    if order == "score":
        reorder = canonical_order(rq, scores, rd)
    elif order == "given":
        reorder = grouped_order(rq)
    else:
        reorder = RowOrder(len(rq), rows=np.lexsort((ranks, rq)))
    if reorder is not None:  # one column at a time, so that each old one is freed before the next copy
        rq = reorder.apply(rq, ties=False)  # tied rows share their query and score: only ids need the fix-up
        rd = reorder.apply(rd)
        scores = reorder.apply(scores, ties=False)
    del reorder
    if max_depth is not None:
        rank = np.arange(len(rq)) - _offsets_of(np.bincount(rq, minlength=n_q))[rq]
        depth_ok = rank < max_depth
        rq, rd, scores = rq[depth_ok], rd[depth_ok], scores[depth_ok]

    # The qrels join: a ranked document's judged code, then its (query, doc) pair among the judged.
    labels = np.full(len(rq), NONPOOL, dtype=np.int64)
    candidates, doc_code = _lookup(doc_vocab, rd)
    if len(candidates):
        judged_key = j_query * len(doc_vocab) + j_doc  # ascending: the judged rows are sorted so
        ranked_key = rq[candidates] * len(doc_vocab) + doc_code
        pos = np.minimum(np.searchsorted(judged_key, ranked_key), len(judged_key) - 1)
        hit = judged_key[pos] == ranked_key
        value = j_rel[pos[hit]]
        labels[candidates[hit]] = np.where(value < 0, UNJUDGED, value)
    if judged_only:
        judged = labels >= 0
        rq, rd, scores, labels = rq[judged], rd[judged], scores[judged], labels[judged]

    query_ids = [_display(q) for q in query_vocab]
    batch = RankedBatch(
        query_ids=query_ids,
        offsets=np.searchsorted(rq, np.arange(n_q + 1)),  # rq is in query order now
        labels=labels,
        doc_ids=rd,
        scores=scores,
        judged_offsets=_offsets_of(np.bincount(j_query, minlength=n_q)),
        judged_relevance=j_rel.astype(np.int64),
        judged_doc_ids=doc_vocab[j_doc],
        in_run=in_run,
    )
    missing = [query_ids[i] for i in np.flatnonzero(~in_run)]
    report = QuerySetReport(missing_from_run=missing, not_judged=not_judged, dropped_missing=not complete)
    if not complete and missing:
        batch = batch.select(np.flatnonzero(in_run))
    if len(rq) > _CHUNK:
        release_freed_memory()
    return batch, report
