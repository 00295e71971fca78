"""What FLAGR's methods share: ranks as FLAGR compares them, per-list sizes and statistics, voter weights.

FLAGR (Akritidis et al.; pyflagr 1.0.21) sees each query as one list per voter (run), every voter
having a list for every query, empty if the run lacks the query. A document a list does not rank has
the rank :data:`NOT_RANKED` (10^6), so it loses every comparison with a ranked one and ties with
another unranked one.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ...model import FloatArray, IntArray
from .candidates import Candidates

#: The rank FLAGR gives a document a list does not rank (its MAX_LIST_ITEMS squared).
NOT_RANKED = 1_000_000.0


def along_rows(per_query: np.ndarray, c: Candidates) -> np.ndarray:
    """A ``(..., q)`` array spread along each query's rows: ``(..., n)``."""
    return np.repeat(per_query, np.diff(c.offsets), axis=-1)


def items_per_row(c: Candidates) -> FloatArray:
    """(n,) how many documents the row's query has over all runs (FLAGR's merged list size)."""
    sizes: FloatArray = along_rows(np.diff(c.offsets).astype(np.float64), c)
    return sizes


def list_sizes(c: Candidates) -> FloatArray:
    """(r, n) how many documents run ``r`` ranked for the row's query."""
    sizes: FloatArray = along_rows(c.depth.astype(np.float64), c)
    return sizes


def flagr_ranks(c: Candidates) -> FloatArray:
    """(r, n) each run's rank of the row as a float, :data:`NOT_RANKED` where the run lacks it."""
    ranks: FloatArray = np.where(c.ranks > 0, c.ranks.astype(np.float64), NOT_RANKED)
    return ranks


def per_list(values: FloatArray, c: Candidates, reduce: np.ufunc) -> FloatArray:
    """``reduce`` (NaN-skipping, such as ``np.fmax``) of each run's values over each query's rows: (r, q)."""
    out: FloatArray = reduce.reduceat(values, c.offsets[:-1], axis=1) if c.n_rows else np.zeros((c.n_runs, 0))
    return out


def queries(c: Candidates) -> Iterator[tuple[int, int]]:
    """Each query's rows as ``(start, end)``: for the methods that are inherently per query."""
    bounds: IntArray = c.offsets
    yield from zip(bounds[:-1].tolist(), bounds[1:].tolist())


def wins_matrix(ranks: FloatArray, weights: FloatArray) -> FloatArray:
    """(m, m) the weight of the runs that rank document i above document j, for one query's ``(r, m)``
    ranks (a document no run ranks above another, as two unranked ones, wins nothing)."""
    m = ranks.shape[1]
    wins = np.zeros((m, m))
    for r in range(ranks.shape[0]):  # a loop over runs, each an (m, m) comparison
        wins += weights[r] * (ranks[r][:, None] < ranks[r][None, :])
    return wins
