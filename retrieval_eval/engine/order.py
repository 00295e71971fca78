"""trec_eval's ranking order (score descending, ties by doc_id descending) and row reordering.

:class:`RowOrder` is a new order of a batch's rows that the build applies to each column in turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from attrs import evolve, frozen

from ..model import BoolArray, FloatArray, IntArray
from .ids import _run_heads, _run_lengths, _sort_rows, _words, intern
from .segments import _block_rows, _offsets_of

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt


@frozen
class RowOrder:
    """A new order of the rows, applied to each column with :meth:`apply` (or :meth:`apply_blocks`).

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

    def apply(self, column: np.ndarray) -> np.ndarray:
        """The column in the new order."""
        out = self.apply_blocks(column)
        if self.rows is None and self.tied is not None:
            if out is column:
                out = column.copy()
            out[self.tied] = out[self.tied_from]
        return out

    def apply_blocks(self, column: np.ndarray) -> np.ndarray:
        """The column in the new order, for a column that is equal within every tie group (the
        query and the score): the tie fix-up would copy equal values over each other, so it is skipped."""
        if self.rows is not None:
            return column[self.rows]
        if self.block_starts is None or self.block_lengths is None:
            return column
        return _move_blocks(column, self.block_starts, self.block_lengths)

    def permutation(self) -> IntArray:
        """The order as one array of row indices."""
        return self.apply(np.arange(self.n, dtype=np.int64))


def _move_blocks(column: np.ndarray, starts: IntArray, lengths: IntArray) -> np.ndarray:
    """The blocks of rows ``column[start:start + length]`` for each (start, length), concatenated."""
    if len(starts) * 64 <= len(column):  # long blocks: one copy each (a loop over queries, not rows)
        # Blocks that follow each other in the column as in the new order are copied as one (a run file
        # with its queries in numeric order, put in byte order: msmarco's 6,980 blocks are 1,275 such
        # stretches, 2.5 ms less a column).
        if not len(starts):
            return column[:0].copy()
        ends = starts + lengths
        last = np.flatnonzero(starts[1:] != ends[:-1])  # the stretches' last blocks, but the final one
        firsts, lasts = np.concatenate(([0], last + 1)), np.append(last, len(starts) - 1)
        return np.concatenate([column[a:b] for a, b in zip(starts[firsts].tolist(), ends[lasts].tolist())])
    return column[_block_rows(starts, lengths)]


def _new_positions(blocks: RowOrder | None, rows: IntArray) -> IntArray:
    """Where ``rows`` are once the blocks of ``blocks`` (an order that only moves blocks) have moved."""
    if blocks is None or blocks.block_starts is None or blocks.block_lengths is None:
        return rows
    by_start = np.argsort(blocks.block_starts)  # the blocks in their old order
    old_starts = blocks.block_starts[by_start]
    new_starts = _offsets_of(blocks.block_lengths)[:-1][by_start]
    if 8 * len(rows) > blocks.n:  # many rows: each row's shift, written out along its block, is cheaper than a search
        shift = np.repeat(new_starts - old_starts, blocks.block_lengths[by_start])
        return rows + shift.take(rows)
    block = np.searchsorted(old_starts, rows, side="right") - 1
    return new_starts[block] + (rows - old_starts[block])


def _query_blocks(query_code: IntArray) -> IntArray | None:
    """Start of each run of equal query codes, if every query forms a single run; else None."""
    starts = _run_heads(query_code)
    block_query = query_code[starts]
    if len(block_query) < 2:
        return starts
    if int(block_query.max()) < 4 * len(query_code) + 64 and int(block_query.min()) >= 0:
        # Codes are dense (0..n-1): counting them finds a query in two blocks in linear time.
        repeated = int(np.bincount(block_query).max()) > 1
    else:
        ordered = np.sort(block_query)
        repeated = bool(np.any(ordered[1:] == ordered[:-1]))
    return None if repeated else starts


def _order_blocks(query_code: IntArray, starts: IntArray) -> RowOrder | None:
    """The order that sorts contiguous query blocks by query code; None if they already are."""
    block_query = query_code[starts]
    if bool(np.all(block_query[1:] > block_query[:-1])):
        return None
    by_query = np.argsort(block_query)
    lengths = _run_lengths(starts, len(query_code))
    return RowOrder(len(query_code), block_starts=starts[by_query], block_lengths=lengths[by_query])


def grouped_order(query_code: IntArray) -> RowOrder | None:
    """Stable row order by query (each query's rows keep their input order); None if nothing moves."""
    if len(query_code) < 2:
        return None
    if bool(np.all(query_code[1:] >= query_code[:-1])):  # in order already (a sorted qrels file): one pass
        return None
    starts = _query_blocks(query_code)
    if starts is None:
        return RowOrder(len(query_code), rows=np.argsort(query_code, kind="stable"))
    return _order_blocks(query_code, starts)


def _dense_ranks(keys: npt.NDArray[np.uint64] | IntArray) -> tuple[IntArray, int]:
    """The rank of each key among the distinct keys (0 for the smallest), and how many there are."""
    order = np.argsort(keys)  # distinct or not, equal keys get one rank: the sort need not be stable
    ordered = keys[order]
    new = np.empty(len(keys), dtype=np.int64)
    new[:1] = 0
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    ranks = np.empty(len(keys), dtype=np.int64)
    ranks[order] = np.cumsum(new)
    return ranks, int(ranks[order[-1]]) + 1 if len(keys) else 0


#: Largest bound of the keys :func:`_byte_ranks` returns by default (products of two stay below 2**62).
_RANK_BOUND = 2**31


def _byte_ranks(words: npt.NDArray[np.uint64], limit: int | None = None) -> tuple[IntArray, int]:
    """Keys of ids in byte order (equal ids get equal keys), all below the bound also returned, for
    fewer than 2**31 ids given as rows of big-endian words (see ``_words``). The bound is at most
    ``limit`` (``_RANK_BOUND`` if None). Sorting 64-bit numbers, once per word, is far faster than a
    lexsort of the words."""
    limit = _RANK_BOUND if limit is None else limit
    rank, bound = _dense_ranks(words[:, 0])
    if bound == len(words):  # the first words tell every id apart already
        return rank, bound
    for j in range(1, words.shape[1]):  # a loop over the 8-byte words of the ids, not over ids
        word_rank, word_count = _dense_ranks(words[:, j])
        if bound * word_count > _RANK_BOUND**2:  # compacted first, so that the product cannot overflow
            rank, bound = _dense_ranks(rank)
        rank, bound = rank * word_count + word_rank, bound * word_count
    if bound > limit:  # compacted only when the caller's keys need it: a sort less
        rank, bound = _dense_ranks(rank)
    return rank, bound


def _tie_order(group: IntArray, words: npt.NDArray[np.uint64]) -> IntArray:
    """The order of tied rows by tie group (ascending, fewer than 2**31), then id bytes descending
    (ids as rows of big-endian words, fewer than 2**31 of them).

    The rows by first word descending (an ``argsort`` of one number per row), then by group keeping
    that order (group and place packed in one integer, sorted as numbers): far faster than a
    lexsort on the words. Only the rows that this leaves tied with another (ids that share their
    first 8 bytes within a group, usually few) are sorted again on their other words.
    """
    if not len(group):
        return np.zeros(0, dtype=np.int64)
    first = np.ascontiguousarray(words[:, 0])
    by_first = np.argsort(first)[::-1]  # by first word descending; equal ones in any order: sorted below
    place, ordered_group = _sort_rows(group.take(by_first), int(group[-1]) + 1)
    order = by_first.take(place)
    if words.shape[1] == 1:
        return order
    ordered_first = first.take(order)
    same = ordered_group[1:] == ordered_group[:-1]
    same &= ordered_first[1:] == ordered_first[:-1]
    if not bool(same.any()):
        return order
    at = np.flatnonzero(np.concatenate(([False], same)) | np.concatenate((same, [False])))
    rows = order[at]  # runs of rows of one group and first word, each in a row
    run = np.cumsum(~np.concatenate(([False], same))[at])  # each one's run, numbered from 1
    # Keys below the bound that leaves room for the row in one number (see _sort_rows).
    room = (2**63 >> (len(rows) - 1).bit_length()) // (int(run[-1]) + 1)
    rank, bound = _byte_ranks(words[rows, 1:], limit=room)
    order[at] = rows[_sort_rows(run * bound + (bound - 1 - rank), (int(run[-1]) + 1) * bound)[0]]
    return order


def _tie_groups(tied_to_previous: BoolArray) -> tuple[IntArray, IntArray]:
    """The rows of tie groups (each row equal to its neighbour on one side at least), given whether
    each row is tied to the one before it, and the number of each one's group (ascending)."""
    in_tie = tied_to_previous.copy()
    in_tie[:-1] |= tied_to_previous[1:]
    rows = np.flatnonzero(in_tie)
    return rows, np.cumsum(~tied_to_previous[rows])


def _by_id_descending(group: IntArray, doc_ids: np.ndarray) -> IntArray:
    """The order of rows by ``group`` (ascending), then by id bytes descending (strcmp's order)."""
    if doc_ids.dtype.kind == "S" and len(doc_ids) < 2**31:
        return _tie_order(group, _words(doc_ids))
    if doc_ids.dtype.kind == "S":
        return np.lexsort((*(~_words(doc_ids).T[::-1]), group))  # words inverted: descending
    # ``bytes`` objects (a column with very long ids): their codes are in byte order
    return np.lexsort((-intern(doc_ids)[1], group))


def _descending_within(score: FloatArray, starts: IntArray) -> tuple[bool, BoolArray | None]:
    """Whether ``score`` never increases within the blocks of rows that begin at ``starts`` (NaN counts
    as out of order), and whether each row's score equals the one before it in its block (None when no
    two do).

    A first comparison asks whether each score is below the one before it: when every one is (a run
    without ties, as most are), that answers both questions in one pass over the scores; otherwise
    a second finds the ties, and rows neither below nor tied are out of order.

    >>> _descending_within(np.array([3.0, 2.0, 5.0, 1.0]), np.array([0, 2]))
    (True, None)
    >>> descending, tied = _descending_within(np.array([3.0, 3.0, 5.0, 6.0]), np.array([0, 2]))
    >>> descending, tied.tolist()
    (False, [False, True, False, False])
    """
    below = np.empty(len(score), dtype=bool)
    np.less(score[1:], score[:-1], out=below[1:])
    below[starts] = True  # a block's first row (and the first row) follows no row of its block
    if bool(below.all()):
        return True, None
    tied = np.empty(len(score), dtype=bool)
    np.equal(score[1:], score[:-1], out=tied[1:])
    tied[starts] = False
    below |= tied
    return bool(below.all()), tied


def _blocks_by_score(query_code: IntArray, score: FloatArray, doc_ids: np.ndarray, starts: IntArray,
                     tied_to_previous: BoolArray | None) -> RowOrder | None:
    """The order of rows in query blocks (starting at ``starts``) whose scores never increase within a
    block: the blocks moved whole into query order, the rows of each tie group sorted by id (given
    whether each row is tied to the one before it in its block, see :func:`_descending_within`; None
    when no row is)."""
    n = len(query_code)
    blocks = _order_blocks(query_code, starts)
    if tied_to_previous is None:
        return blocks
    rows, group = _tie_groups(tied_to_previous)
    del tied_to_previous
    if len(rows):
        moved = rows[_by_id_descending(group, doc_ids[rows])]
        changed = moved != rows
        if bool(np.any(changed)):
            # Positions after the blocks move: where each tied row lands, and where the row it
            # takes is then (tie groups never span blocks, so both shift alike: by one search).
            tied = rows[changed]
            landed = _new_positions(blocks, tied)
            return evolve(blocks or RowOrder(n), tied=landed, tied_from=moved[changed] + (landed - tied))
    return blocks


#: At most this many distinct block lengths are sorted block by block (one pass per length).
_MAX_BLOCK_LENGTHS = 64
#: Rows sorted per step of :func:`_by_score_within_blocks` (bounds its temporary matrices).
_SORT_CHUNK = 1 << 20
#: True only in tests: every unsorted run takes the one sort of all rows.
_FORCE_GLOBAL_SORT = False


def _by_score_within_blocks(score: FloatArray, starts: IntArray) -> IntArray | None:
    """The rows with each block's (``starts``: one block per query) by score descending, the blocks
    where they are and tied rows in any order; None when a score is NaN or the blocks have more than
    ``_MAX_BLOCK_LENGTHS`` lengths. Blocks of one length are sorted as the rows of one matrix.

    >>> _by_score_within_blocks(np.array([1.0, 3.0, 2.0, 5.0, 7.0]), np.array([0, 3])).tolist()
    [1, 2, 0, 4, 3]
    """
    n = len(score)
    lengths = _run_lengths(starts, n)
    by_length = np.argsort(lengths, kind="stable")
    bounds = np.flatnonzero(np.diff(lengths.take(by_length))) + 1
    if len(bounds) >= _MAX_BLOCK_LENGTHS or bool(np.isnan(score).any()):
        return None  # (NaN: the one sort of all rows places it)
    rows = np.empty(n, dtype=np.int64)
    for group in np.split(by_length, bounds):
        length = int(lengths[group[0]])
        step = max(1, _SORT_CHUNK // max(length, 1))
        for at in range(0, len(group), step):
            block = starts.take(group[at : at + step])[:, None] + np.arange(length)  # a row of rows per block
            order = np.argsort(np.negative(score.take(block)), axis=1)
            rows[block] = np.take_along_axis(block, order, axis=1)
    return rows


def canonical_order(query_code: IntArray, score: FloatArray, doc_ids: np.ndarray,
                    blocks: IntArray | None = None) -> RowOrder | None:
    """Row order: query, then score descending, then doc_id descending (trec_eval's tie rule).

    ``doc_ids`` are bytes, compared like C's ``strcmp``. Each (query, doc) pair must occur once.
    ``blocks``: the first row of each query, if the caller knows that each query's rows are together
    (a pass over the rows less). Returns None when the rows are in that order already.
    """
    n = len(query_code)
    if n < 2:
        return None
    starts = _query_blocks(query_code) if blocks is None else blocks
    descending, ties = _descending_within(score, starts) if starts is not None else (False, None)
    if descending and starts is not None:
        # Run files usually hold each query in one block, by score already. Then the blocks move
        # whole and only the rows of tie groups are sorted, at a cost linear in the rows.
        return _blocks_by_score(query_code, score, doc_ids, starts, ties)
    del ties
    within = None if starts is None or _FORCE_GLOBAL_SORT else _by_score_within_blocks(score, starts)
    if within is not None and starts is not None:
        # Blocks of one query each, not by score (dicts, frames): each block sorted on its own (a
        # short sort per block, far cheaper than one sort of every row), then as above.
        by_score = score.take(within)
        then = _blocks_by_score(query_code, by_score, doc_ids.take(within), starts, _descending_within(by_score, starts)[1])
        return RowOrder(n, rows=within if then is None else within.take(then.permutation()))
    distinct, inverse = np.unique(score, return_inverse=True)
    n_groups = len(distinct) * (int(query_code.max()) + 1)
    # Each row's (query, score descending) as one integer, where it fits.
    packed = query_code * len(distinct) + (len(distinct) - 1 - inverse.ravel()) if n_groups < 2**62 else None
    if packed is not None and n < 2**31:
        # Any other layout (a run not sorted by score): one sort of the packed groups, then the tie
        # groups sorted by id as above, rather than interning every id.
        rows, ordered = _sort_rows(packed, n_groups)  # rows of equal groups are put in order below
        tied, tie_group = _tie_groups(np.concatenate(([False], ordered[1:] == ordered[:-1])))
        if len(tied):
            tied_rows = rows[tied]
            rows[tied] = tied_rows[_by_id_descending(tie_group, doc_ids[tied_rows])]
        return RowOrder(n, rows=rows)
    vocab, doc_code = intern(doc_ids)
    n_docs = len(vocab)
    if packed is None or n_groups * n_docs >= 2**62:  # the key would overflow: sort on the three columns instead
        return RowOrder(n, rows=np.lexsort((-doc_code, -score, query_code)))
    return RowOrder(n, rows=np.argsort(packed * n_docs + (n_docs - 1 - doc_code), kind="stable"))
