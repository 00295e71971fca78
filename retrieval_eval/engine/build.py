"""Building a batch: a run joined with its judgments, duplicates checked, rows put in ranking order.

:func:`build_batch` turns a run's columns and the qrels' into a :class:`~.batch.RankedBatch`; the
judgments come prepared (and shared between runs) from :mod:`.judgments`.
"""

from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING, Literal

import numpy as np
from attrs import define

from ..model import BoolArray, InputFormatError, IntArray, QrelsColumns, RunColumns, id_text
from .batch import NONPOOL, UNJUDGED, RankedBatch
from .ids import (
    _CHUNK,
    Duplicates,
    PairIndex,
    _as_bytes,
    _check_duplicates,
    _run_heads,
    _run_lengths,
    _same_words,
    _words,
    along_runs,
    intern,
    pair_keys,
)
from .judgments import PreparedQrels, _joins_by_scan, _scan_comparisons, prepared_qrels
from .memory import release_freed_memory
from .order import RowOrder, canonical_order, grouped_order
from .segments import _offsets_of, long_on_average, segment_ids
from .ties import TiePolicy, check_ties, rank_order

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

Order = Literal["score", "given", "rank"]


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
    ties: TiePolicy = "trec_eval",
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
    ties : {"trec_eval", "rank", "expected"}
        Within a run of equal scores (see :mod:`.ties`): doc_id descending (trec_eval); the rank
        column (``run.ranks``), then doc_id descending; or trec_eval's order, with the measures
        giving their expected value over every order of each run (not with ``max_depth``, which
        would keep the documents of a cut run by their ids).
    """
    if max_depth is not None and max_depth < 0:
        raise InputFormatError(f"'max_depth' must be >= 0 or None; got {max_depth}")
    if order not in ("score", "given", "rank"):
        raise ValueError(f"'order' must be 'score', 'given' or 'rank'; got {order!r}")
    check_duplicates_option(duplicates)
    ties = check_ties(ties)
    if ties == "rank" and order == "given":
        raise ValueError("ties='rank' breaks ties of scores: it needs order='score'")
    if ties == "expected" and max_depth is not None:
        raise ValueError("ties='expected' cannot be combined with max_depth: a tie cut by the depth would keep "
                         "its documents by id; use a cutoff measure (P@k, nDCG@k) instead")
    if isinstance(run, RunHandoff):
        run = run.take()
    if (order == "rank" or ties == "rank") and run.ranks is None:
        raise ValueError(f"{'order' if order == 'rank' else 'ties'}='rank' needs the run's rank column "
                         "(read_run_columns(..., with_ranks=True)); this run has none")
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
    ranks = _take(r_rows, np.asarray(run_ranks))[0] if order == "rank" or ties == "rank" else None
    del r_docs, run_scores, run_ranks, r_rows
    n_q = len(judged.query_vocab)
    blocks: IntArray | None = None  # bounds of the rows of each query, when each query's are together
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
            run_lengths = _run_lengths(r_heads, n_run)[judged_head]
            np.add.at(counts, r_head_code[judged_head], run_lengths)
            # Each query's rows in one run (as a run file lists them): their bounds are the blocks that
            # the ranking moves and the pieces that the duplicate check sorts apart.
            if len(run_lengths) == np.count_nonzero(in_run):
                blocks = _offsets_of(run_lengths)
        else:  # runs of a few rows (sessions): add.at costs some 20 ns a run, counting the rows 4 ns a row
            counts = np.bincount(rq, minlength=n_q)
    del r_heads, r_head_code, judged_head  # arrays as long as the rows, at a million sessions
    keys: npt.NDArray[np.uint64] | None = None
    if not one_each:
        # Each row's key of (query, document), for the duplicate check and then (in the rows' new order)
        # for the join, when that looks pairs up in the table: when it compares ids instead (queries of
        # few judgments), the check makes its own keys and sorts them in place, which takes less memory.
        keys = None if _joins_by_scan(_scan_comparisons(counts, judged.offsets), len(rq)) else pair_keys(rq, rd)
        keep_r = _check_duplicates(rq, rd, r_lines, run_origin, run_unit, "document", judged.query_vocab,
                                   duplicates, keys, None if blocks is None else _pieces(blocks))
        if not keep_r.all():
            blocks = None  # (rows gone: the bounds moved)
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
        reorder = canonical_order(rq, scores, rd, None if blocks is None else blocks[:-1])
    elif order == "given":
        reorder = grouped_order(rq)
    else:
        assert ranks is not None  # checked on entry: order="rank" needs the rank column
        reorder = RowOrder(len(rq), rows=np.lexsort((ranks, rq)))
    if reorder is not None:  # one column at a time, so that each old one is freed before the next copy
        rq = segment_ids(offsets)  # every order puts the rows by query: each query's code along its rows
        rd, keys = reorder.apply(rd), None if keys is None else reorder.apply(keys)
        scores = reorder.apply_blocks(scores)  # tied rows share their score: only ids and keys need the fix-up
    if ties == "rank" and order == "score" and ranks is not None:
        ranks = ranks if reorder is None else reorder.apply(ranks)
        within = rank_order(offsets, scores, ranks)  # each tie group by rank, equal ranks by doc_id descending
        if within is not None:
            rd, keys = rd.take(within), None if keys is None else keys.take(within)
    del reorder, ranks
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
        ties=ties,
        preferences=judged.preferences,
    )
    missing = [id_text(judged.query_vocab[i]) for i in np.flatnonzero(~in_run)]
    report = QuerySetReport(missing_from_run=missing, not_judged=not_judged, dropped_missing=not complete)
    if not complete and missing:
        batch = batch.select(np.flatnonzero(in_run))
    if len(rq) > _CHUNK:
        release_freed_memory()
    return batch, report


#: Rankings up to this long take :func:`one_query_batch`'s dict lookups; longer ones the whole-array join.
SMALL_QUERY = 512


def one_query_batch(query_id: str, qrels: QrelsColumns, run: RunColumns) -> RankedBatch | None:
    """The batch of one query's ranking (rows in the given order) and judgments: what
    ``build_batch(qrels, run, order="given", queries=[query_id])`` makes of them, made with a few
    array steps and a dict lookup per ranked row rather than the many-query machinery, which costs
    more than the rest of a short query's evaluation. None, for :func:`build_batch` to take over
    (and name the problem), when an id repeats or the ranking is long.

    The columns must hold ``query_id``'s rows only (:func:`~..io.dicts.columns_from_documents`).
    """
    if len(run.doc_ids) > SMALL_QUERY:
        return None
    docs, judged = _as_bytes(run.doc_ids), _as_bytes(qrels.doc_ids)
    doc_list, judged_list = docs.tolist(), judged.tolist()
    relevance = np.asarray(qrels.relevance, dtype=np.float64 if qrels.relevance.dtype.kind == "f" else np.int64)
    # Each judged id's label: its value, UNJUDGED if negative (as PreparedQrels labels them).
    label_of = {doc: UNJUDGED if value < 0 else value for doc, value in zip(judged_list, relevance.tolist())}
    if len(label_of) != len(judged_list) or len(set(doc_list)) != len(doc_list):
        return None  # a repeated id (as bytes): build_batch reports it
    labels = np.fromiter(map(label_of.get, doc_list, repeat(NONPOOL)), dtype=relevance.dtype, count=len(doc_list))  # (C)
    return RankedBatch(
        query_vocab=np.array([query_id.encode("utf-8", "surrogateescape")]),  # as _as_bytes encodes it
        offsets=np.array([0, len(doc_list)], dtype=np.int64),
        labels=labels,
        doc_ids=docs,
        scores=np.asarray(run.scores, dtype=np.float64),
        judged_offsets=np.array([0, len(judged_list)], dtype=np.int64),
        judged_relevance=relevance,
        judged_doc_ids=judged,
        in_run=np.array([len(doc_list) > 0]),
    )


#: Rows of a piece of the duplicate check (see :func:`~.ids._keys_repeat`): sorting 7 M keys in pieces
#: of 2**16 took 0.039 s against 0.058 s as a whole, and their temporaries are as small.
_PIECE_ROWS = 1 << 16


def _pieces(blocks: IntArray, rows: int | None = None) -> IntArray:
    """Bounds that cut the rows into pieces of about ``rows`` rows (:data:`_PIECE_ROWS` if None) or
    more, only at the ``blocks`` (increasing bounds from 0 to the row count: a block longer than that
    is a piece of its own).

    >>> _pieces(np.array([0, 3, 5, 9, 10]), rows=4).tolist()
    [0, 5, 9, 10]
    """
    total, rows = int(blocks[-1]), rows or _PIECE_ROWS
    cuts = blocks[np.searchsorted(blocks, np.arange(rows, total, rows))]  # the first bound at or past each step
    bounds = np.concatenate(([0], cuts, [total]))
    return bounds[np.concatenate(([True], bounds[1:] != bounds[:-1]))]


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
