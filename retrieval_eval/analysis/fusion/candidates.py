"""The documents several runs retrieved, side by side: one row per (query, document) any run has.

:class:`Candidates` is what every fusion method reads. Each run's scores and ranks are columns of
one ``(runs, rows)`` matrix, so a method is a few whole-array operations over every query at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import frozen

from ...engine.ids import (
    _CHUNK,
    _MIX,
    _check_duplicates,
    _id_hash,
    _run_heads,
    _run_lengths,
    _same_words,
    _words,
    intern,
)
from ...engine.order import canonical_order
from ...engine.segments import _offsets_of, segment_ids
from ...engine.threads import THREADED_ROWS, in_order, usable_cpus
from ...model import FloatArray, InputFormatError, IntArray, RunColumns

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt


@frozen(eq=False)
class Candidates:
    """The union of several runs' documents: one row per (query, document) that some run retrieved.

    Rows are grouped by query (queries in byte order, ``offsets`` bounds each query's rows); within a
    query their order is fixed by the ids but carries no meaning (methods rank by score or rank). ``scores[r, i]`` is run ``r``'s score of row ``i``, NaN
    where run ``r`` did not retrieve it; ``ranks[r, i]`` its 1-based rank in run ``r`` in trec_eval's
    order (score descending, ties by doc_id descending), 0 where absent. ``depth[r, q]`` is how many
    documents run ``r`` retrieved for query ``q`` (0 for a query the run does not have).

    >>> from retrieval_eval.io.dicts import columns_from_dicts
    >>> a = columns_from_dicts({}, {"q1": {"d1": 2.0, "d2": 1.0}})[1]
    >>> b = columns_from_dicts({}, {"q1": {"d2": 5.0, "d3": 4.0}})[1]
    >>> c = candidates_from_runs([a, b], names=("a", "b"))
    >>> sorted(zip(c.doc_ids.tolist(), c.ranks[0].tolist(), c.ranks[1].tolist()))
    [(b'd1', 1, 0), (b'd2', 2, 1), (b'd3', 0, 2)]
    """

    query_ids: np.ndarray  #: (q,) the queries, as the engine keeps ids (fixed-width bytes)
    offsets: IntArray  #: (q + 1,) each query's rows are ``offsets[j]:offsets[j + 1]``
    doc_ids: np.ndarray  #: (n,) each row's document
    scores: FloatArray  #: (r, n) each run's score of the row, NaN where the run lacks it
    ranks: IntArray  #: (r, n) each run's 1-based rank of the row, 0 where the run lacks it
    depth: IntArray  #: (r, q) documents each run retrieved for each query
    run_names: tuple[str, ...]  #: (r,) names of the runs, for the fused run's tag

    @property
    def n_runs(self) -> int:
        return len(self.run_names)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def n_rows(self) -> int:
        return len(self.doc_ids)

    @property
    def present(self) -> np.ndarray:
        """(r, n) bool: whether run ``r`` retrieved the row's document."""
        return self.ranks > 0

    def row_query(self) -> IntArray:
        """(n,) each row's query index."""
        return segment_ids(self.offsets)

    def rows_of(self, queries: np.ndarray) -> IntArray:
        """The rows of the queries where ``queries`` (a (q,) bool mask) is true, in order."""
        return np.flatnonzero(np.repeat(queries, np.diff(self.offsets)))

    def subset(self, queries: np.ndarray) -> Candidates:
        """The candidates of the queries where ``queries`` (a (q,) bool mask) is true."""
        rows = self.rows_of(queries)
        offsets = _offsets_of(np.diff(self.offsets)[queries])
        return Candidates(self.query_ids[queries], offsets, self.doc_ids[rows], self.scores[:, rows],
                          self.ranks[:, rows], self.depth[:, queries], self.run_names)

    def with_scores(self, scores: FloatArray) -> Candidates:
        """The same rows with other scores (a normalisation's), NaN where a run lacks the row."""
        return Candidates(self.query_ids, self.offsets, self.doc_ids, scores, self.ranks, self.depth, self.run_names)


def run_name(run: RunColumns) -> str:
    """A short name of a run for tags: its run id, else its file's name without the extension."""
    if run.run_id:
        return run.run_id
    base = os.path.basename(run.origin)
    return base.split(".", 1)[0] or base or "run"


def _common_ids(columns: Sequence[np.ndarray]) -> np.ndarray:
    """The columns end to end, as one array the engine can intern (bytes, or objects for very long ids)."""
    if all(column.dtype.kind == "S" for column in columns):
        return np.concatenate(columns)
    joined = np.empty(sum(len(column) for column in columns), dtype=object)
    at = 0
    for column in columns:  # a loop over runs; a column of objects or str is rare (in-memory input)
        values = column.tolist()
        joined[at : at + len(values)] = [v.encode("utf-8", "surrogateescape") if isinstance(v, str) else v
                                         for v in values]
        at += len(values)
    return joined


def _ranks_in_run(query_code: IntArray, scores: FloatArray, doc_ids: np.ndarray, n_queries: int,
                  counts: IntArray | None = None) -> IntArray:
    """Each row's 1-based rank within its query, in trec_eval's order (``counts``: the rows of each
    query code, if the caller has them)."""
    order = canonical_order(query_code, scores, doc_ids)
    # In that order the queries come one after another by code: ranks count up from 1 in each.
    counts = np.bincount(query_code, minlength=n_queries) if counts is None else counts
    counts = counts[counts > 0]
    ranks = np.ones(len(query_code), dtype=np.int64)
    ranks[_offsets_of(counts)[1:-1]] -= counts[:-1]  # back to 1 at each query's first row
    np.cumsum(ranks, out=ranks)
    if order is None:
        return ranks
    placed = np.empty_like(ranks)
    placed[order.permutation()] = ranks
    return placed


def candidates_from_runs(runs: Sequence[RunColumns], names: Sequence[str] | None = None) -> Candidates:
    """The rows of :class:`Candidates` for ``runs`` (each a run's columns, as the readers give them).

    A document given twice for one query in one run raises InputFormatError naming both lines;
    ``names`` default to :func:`run_name` of each run.
    """
    if not runs:
        raise InputFormatError("fusion needs at least one run; got none")
    names = tuple(names) if names is not None else tuple(run_name(run) for run in runs)
    if len(names) != len(runs):
        raise InputFormatError(f"expected one name per run ({len(runs)}); got {len(names)}")
    sizes = [len(run.doc_ids) for run in runs]
    bounds = _offsets_of(np.array(sizes, dtype=np.int64))
    query_ids, query_code = intern(_common_ids([run.query_ids for run in runs]))
    doc_all = _common_ids([run.doc_ids for run in runs])
    n_q = len(query_ids)
    rank_all = np.empty(len(doc_all), dtype=np.int64)
    codes = [query_code[int(bounds[r]) : int(bounds[r + 1])] for r in range(len(runs))]
    depth = np.stack([np.bincount(code, minlength=n_q) for code in codes])  # (a loop over runs)
    pieces = [(codes[r], np.asarray(run.scores, dtype=np.float64), doc_all[int(bounds[r]) : int(bounds[r + 1])],
               n_q, depth[r]) for r, run in enumerate(runs)]
    # The rows paired across runs on one thread while the runs are ranked on another (NumPy's sorts
    # let go of the GIL): neither needs the other's result.
    jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [(_rows_by_hash, (query_code, doc_all, n_q,
                                                                 depth.sum(axis=0)))]
    jobs += [(_ranks_in_run, piece) for piece in pieces]
    results = in_order(_call, jobs, _threads(len(doc_all)))
    found = next(results)
    for r, ranks_r in enumerate(results):
        rank_all[int(bounds[r]) : int(bounds[r + 1])] = ranks_r
    del pieces, codes
    if found is None:  # two pairs share a hash (rare): exact, by interning every id
        vocab, doc_code = intern(doc_all)
        row_of, row_query, row_doc = _rows(query_code, doc_code, len(vocab), n_q)
        doc_ids = vocab[row_doc]
    else:
        row_of, row_query, doc_ids = found
    del doc_all
    n = len(row_query)
    # Each input row's cell in the (runs, rows) matrices, as one flat index (cheaper than two).
    cell = row_of
    for r in range(1, len(runs)):  # a loop over runs: each one's rows move to its row of the matrix
        cell[int(bounds[r]) : int(bounds[r + 1])] += r * n
    ranks = np.zeros((len(runs), n), dtype=np.int64)
    ranks.ravel()[cell] = rank_all
    # Every rank is at least 1, so two input rows in one cell leave fewer cells set than rows: a
    # count instead of a histogram of all (runs x rows) cells.
    if np.count_nonzero(ranks) != len(rank_all):
        _refuse_repeats(runs, bounds, cell, n, query_ids, query_code)
    scores = np.full((len(runs), n), np.nan)
    flat = scores.ravel()
    for r, run in enumerate(runs):  # a loop over runs: no copy of all their scores end to end
        flat[cell[int(bounds[r]) : int(bounds[r + 1])]] = run.scores
    offsets = _offsets_of(np.bincount(row_query, minlength=n_q))
    return Candidates(query_ids, offsets, doc_ids, scores, ranks, depth, names)


def _call(function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return function(*args)


def _rows_by_hash(query_code: IntArray, doc_ids: np.ndarray, n_q: int,
                  counts: IntArray | None = None) -> tuple[IntArray, IntArray, np.ndarray] | None:
    """Each input row's candidate row, and each candidate row's query and id, the rows sorted by
    query, then by a hash of the id. Every row's id is then compared with its candidate's: None if
    two different ids shared a key. ``counts``: the rows of each query code, if the caller has them."""
    counts = np.bincount(query_code, minlength=n_q) if counts is None else counts
    n = len(query_code)
    # A short id is its own hash: multiplied by an odd constant (a bijection), its bits are spread.
    words = _words(doc_ids, np.uint64) if doc_ids.dtype.kind == "S" else None
    hashed = _id_hash(doc_ids, words)
    hashed *= np.uint64(_MIX)
    order, key = _by_query_then_hash(query_code, hashed, counts)
    del hashed
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(key[1:], key[:-1], out=new[1:])
    # The rows are in query order, so each query's first row is where the counts say it begins.
    new[_offsets_of(counts)[:-1][counts > 0]] = True
    position = np.cumsum(new, out=key.view(np.int64))  # each row's candidate row + 1, in key order
    position -= 1
    row_of = np.empty(n, dtype=np.int64)
    row_of[order] = position
    first = order[new]
    del order, new, position, key
    ids = doc_ids.take(first)
    if not _same_as_candidates(doc_ids, words, ids, row_of):
        return None
    return row_of, query_code.take(first), ids


def _same_as_candidates(doc_ids: np.ndarray, words: np.ndarray | None, ids: np.ndarray, row_of: IntArray) -> bool:
    """Whether every input row's id (``doc_ids``, whose words are ``words``) is its candidate row's
    (``ids[row_of]``), so that no two ids shared a key. A chunk of rows at a time: a run's rows go
    through the queries in turn, so each chunk gathers from a few queries' candidates."""
    if words is None:
        return bool(np.all(doc_ids == ids.take(row_of)))
    candidate_words = _words(ids, np.uint64)  # (a view of ``ids`` when its width is a multiple of 8)
    for at in range(0, len(row_of), _CHUNK):  # a loop over chunks of rows, not over rows
        end = at + _CHUNK
        if not bool(_same_words(words[at:end], candidate_words.take(row_of[at:end], axis=0)).all()):
            return False
    return True


#: Most bits a row's column within its query may take in :func:`_by_query_then_hash`'s sort keys:
#: the rest (at least 40) hold the top of the id's hash.
_COLUMN_BITS = 24


def _by_query_then_hash(query_code: IntArray, hashed: np.ndarray, counts: IntArray) -> tuple[IntArray, np.ndarray]:
    """The rows by query, then by a key of each row's id, and those keys in that order: equal ids
    have equal keys, and rows of equal key are neighbours (their ids are compared after).
    ``counts`` are the rows of each query code.

    Each query's rows are a row of a matrix padded to the longest query (sorting many short rows is
    far cheaper than one sort of them all), when the padding costs at most as many cells again as
    there are rows. A cell holds the top bits of the hash and, below them, the row's column: sorting
    the values themselves is cheaper than an argsort, and the column says where each one came from.
    The padding (top bits all ones) sorts after every row, whose columns come before its own. Else, one
    sort of (query, hash), the key being the whole hash."""
    n, n_q = len(query_code), len(counts)
    longest = int(counts.max(initial=0))
    bits = longest.bit_length()
    if n_q * longest <= 2 * n + 1024 and bits <= _COLUMN_BITS:
        by_query = _grouped(query_code)
        # Each query's rows fill the start of its row of the matrix: the cells a mask picks, in order.
        keep = np.arange(longest) < counts[:, None]
        matrix = np.full((n_q, longest), np.iinfo(np.uint64).max, dtype=np.uint64)
        matrix[keep] = hashed.take(by_query)
        low = np.uint64((1 << bits) - 1)
        matrix &= ~low
        matrix |= np.arange(longest, dtype=np.uint64)  # padding: top bits all ones, columns past the rows'
        sort_rows(matrix)
        key = matrix[keep]
        key >>= np.uint64(bits)
        matrix &= low
        column = matrix.view(np.int64)
        column += _offsets_of(counts)[:-1, None]  # each cell's place in by_query
        return by_query.take(column[keep]), key
    order = np.lexsort((hashed, query_code))
    return order, hashed.take(order)


def _threads(rows: int) -> int:
    """Threads for a few pieces of long NumPy loops over ``rows`` rows (sorts of millions of rows):
    one per CPU this process may use, busy or not, as the reader has for its blocks (see
    ``io/_parse.py``): on a busy machine more threads win a larger share of the CPUs, and pieces
    this long seldom wait for the GIL. None under ``THREADED_ROWS`` rows, or on one CPU."""
    cpus = usable_cpus()
    return cpus if rows >= THREADED_ROWS and cpus > 1 else 0


def sort_rows(matrix: np.ndarray) -> None:
    """Sort each row of ``matrix`` in place, blocks of rows side by side on threads."""
    threads = _threads(matrix.size)
    if threads < 2:
        matrix.sort(axis=1)
        return
    bounds = np.linspace(0, len(matrix), 2 * threads + 1).astype(np.int64)
    blocks = [(matrix[a:b],) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    for _ in in_order(lambda block: block.sort(axis=1), blocks, threads):
        pass


def argsort_rows(matrix: np.ndarray) -> IntArray:
    """``np.argsort(matrix, axis=1)``, blocks of rows sorted side by side on threads."""
    threads = _threads(matrix.size)
    if threads < 2:
        return np.argsort(matrix, axis=1)
    bounds = np.linspace(0, len(matrix), 2 * threads + 1).astype(np.int64)
    blocks = [(matrix[a:b],) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    return np.concatenate(list(in_order(lambda block: np.argsort(block, axis=1), blocks, threads)))


def _grouped(query_code: IntArray) -> IntArray:
    """The rows by query, each query's in their order: runs give each query in a block, so the
    blocks are sorted (a few per query) and then written out, rather than every row."""
    heads = _run_heads(query_code)
    by_query = np.argsort(query_code.take(heads), kind="stable")
    return _blocks_of_rows(heads.take(by_query), _run_lengths(heads, len(query_code)).take(by_query))


def _blocks_of_rows(starts: IntArray, lengths: IntArray) -> IntArray:
    """``_block_rows(starts, lengths)`` for blocks of at least one row, in one buffer: steps of 1
    within a block, a jump to the next block's start at its first row, summed up in place (no
    ``arange`` and ``repeat`` of all the rows to add)."""
    rows = np.ones(int(lengths.sum()), dtype=np.int64)
    if len(rows):
        rows[0] = starts[0]
        rows[_offsets_of(lengths)[1:-1]] = starts[1:] - (starts[:-1] + lengths[:-1]) + 1
        np.cumsum(rows, out=rows)
    return rows


def _refuse_repeats(runs: Sequence[RunColumns], bounds: IntArray, cell: IntArray, n: int,
                    query_ids: np.ndarray, query_code: IntArray) -> None:
    """InputFormatError naming both lines if a run gives a document twice for one query (two of its
    rows in one ``cell``, ``run * n + row``)."""
    counts = np.bincount(cell, minlength=n * len(runs))
    if not bool((counts > 1).any()):
        return
    r = int(np.flatnonzero(counts > 1)[0] // n)
    at = slice(int(bounds[r]), int(bounds[r + 1]))
    run = runs[r]
    _check_duplicates(query_code[at], np.asarray(run.doc_ids), np.asarray(run.lines), run.origin, run.unit,
                      "document", query_ids, "error")
    raise AssertionError("a repeated document the duplicate check did not find")


def _rows(query_code: IntArray, doc_code: IntArray, n_docs: int, n_q: int) -> tuple[IntArray, IntArray, IntArray]:
    """Each input row's candidate row, and each candidate row's query and document code, the rows
    sorted by query, then document."""
    if n_q * n_docs < 2**62:
        keys, row_of = np.unique(query_code * n_docs + doc_code, return_inverse=True)
        return row_of.ravel().astype(np.int64, copy=False), keys // n_docs, keys % n_docs
    pairs: npt.NDArray[Any] = np.stack([query_code, doc_code], axis=1)
    unique, row_of = np.unique(pairs, axis=0, return_inverse=True)
    return row_of.ravel().astype(np.int64, copy=False), unique[:, 0], unique[:, 1]
