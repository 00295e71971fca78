"""The documents several runs retrieved, side by side: one row per (query, document) any run has.

:class:`Candidates` is what every fusion method reads. Each run's scores and ranks are columns of
one ``(runs, rows)`` matrix, so a method is a few whole-array operations over every query at once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import frozen

from ...engine.ids import _MIX, _check_duplicates, _id_hash, _same_ids, intern
from ...engine.order import canonical_order
from ...engine.segments import _offsets_of, segment_ids
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


def _ranks_in_run(query_code: IntArray, scores: FloatArray, doc_ids: np.ndarray, n_queries: int) -> IntArray:
    """Each row's 1-based rank within its query, in trec_eval's order."""
    order = canonical_order(query_code, scores, doc_ids)
    rows = np.arange(len(query_code), dtype=np.int64) if order is None else order.permutation()
    starts = _offsets_of(np.bincount(query_code, minlength=n_queries))[:-1]
    ranks = np.empty(len(rows), dtype=np.int64)
    ranks[rows] = np.arange(1, len(rows) + 1, dtype=np.int64) - starts[query_code.take(rows)]
    return ranks


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
    depth = np.zeros((len(runs), n_q), dtype=np.int64)
    for r, run in enumerate(runs):  # a loop over runs: each is ranked whole
        at = slice(int(bounds[r]), int(bounds[r + 1]))
        code = query_code[at]
        rank_all[at] = _ranks_in_run(code, np.asarray(run.scores, dtype=np.float64), doc_all[at], n_q)
        depth[r] = np.bincount(code, minlength=n_q)
    found = _rows_by_hash(query_code, doc_all, n_q)
    if found is None:  # two pairs share a hash (rare): exact, by interning every id
        vocab, doc_code = intern(doc_all)
        row_of, row_query, row_doc = _rows(query_code, doc_code, len(vocab), n_q)
        doc_ids = vocab[row_doc]
    else:
        row_of, row_query, first = found
        doc_ids = doc_all[first]
    del doc_all
    n = len(row_query)
    run_of = np.repeat(np.arange(len(runs), dtype=np.int64), sizes)
    _refuse_repeats(runs, bounds, run_of, row_of, n, query_ids, query_code)
    scores = np.full((len(runs), n), np.nan)
    scores[run_of, row_of] = np.concatenate([np.asarray(run.scores, dtype=np.float64) for run in runs])
    ranks = np.zeros((len(runs), n), dtype=np.int64)
    ranks[run_of, row_of] = rank_all
    offsets = _offsets_of(np.bincount(row_query, minlength=n_q))
    return Candidates(query_ids, offsets, doc_ids, scores, ranks, depth, names)


def _rows_by_hash(query_code: IntArray, doc_ids: np.ndarray, n_q: int) -> tuple[IntArray, IntArray, IntArray] | None:
    """Each input row's candidate row, each candidate row's query, and an input row of each, the
    rows sorted by query (then by a hash of the id): one sort of 64-bit keys, the query in the high
    bits. Every row's id is then compared with its candidate's: None if two ids shared a key."""
    n = len(query_code)
    q_bits = max(n_q - 1, 0).bit_length()
    # A short id is its own hash: multiplied by an odd constant (a bijection), every bit of it reaches
    # the high bits that the key keeps.
    key = _id_hash(doc_ids) * np.uint64(_MIX)
    if q_bits:
        key >>= np.uint64(q_bits)
        key |= query_code.astype(np.uint64) << np.uint64(64 - q_bits)
    order = np.argsort(key)
    ordered = key[order]
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    row_of = np.empty(n, dtype=np.int64)
    row_of[order] = np.cumsum(new) - 1
    first = order[new]
    # Rows that share a key are neighbours in key order: each is compared with the one before it.
    later = np.flatnonzero(~new)
    if len(later) and not bool(_same_ids(doc_ids, order[later], doc_ids, order[later - 1]).all()):
        return None
    return row_of, query_code[first], first


def _refuse_repeats(runs: Sequence[RunColumns], bounds: IntArray, run_of: IntArray, row_of: IntArray, n: int,
                    query_ids: np.ndarray, query_code: IntArray) -> None:
    """InputFormatError naming both lines if a run gives a document twice for one query."""
    counts = np.bincount(row_of * len(runs) + run_of, minlength=n * len(runs))
    if not bool((counts > 1).any()):
        return
    r = int(np.flatnonzero(counts > 1)[0] % len(runs))
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
