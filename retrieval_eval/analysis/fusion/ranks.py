"""Rank combinations: each run's ranks turned into points, then combined across runs.

Only the ranks count here (in trec_eval's order: score descending, ties by doc_id descending), so no
normalisation applies. Sums run over the runs in the order given, as ranx's do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.order import canonical_order
from ...engine.segments import _offsets_of
from ...model import FloatArray, IntArray
from .candidates import Candidates
from .registry import FusionError, fusion_method
from .scores import run_weights


def _sum(values: FloatArray) -> FloatArray:
    total: FloatArray = values.sum(axis=0)
    return total


def _check(name: str, value: Any, low: float, high: float = np.inf) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise FusionError(f"{name} must be a number in [{low}, {high}]; got {value!r}") from None
    if not low <= number <= high:
        raise FusionError(f"{name} must be a number in [{low}, {high}]; got {value!r}")
    return number


@fusion_method("rrf", params={"k": 60}, family="rank")
def rrf(c: Candidates, *, k: float) -> FloatArray:
    """RRF (Cormack et al., 2009): the sum of 1 / (k + rank) over the runs that retrieved the document."""
    k = _check("RRF's k", k, 0.0)
    # Each rank's points looked up in a table (0 for "absent"): one pass over the ranks.
    with np.errstate(divide="ignore"):
        points = 1.0 / (k + np.arange(int(c.ranks.max(initial=0)) + 1, dtype=np.float64))
    points[0] = 0.0
    # Run after run into one sum (the order of ``_sum``), with no (runs, rows) matrix of points.
    total: FloatArray = points.take(c.ranks[0])
    if c.n_runs > 1:
        buffer = np.empty_like(total)
        for r in range(1, c.n_runs):  # a loop over runs
            total += points.take(c.ranks[r], out=buffer)
    return total


def _inverse_squares(c: Candidates) -> tuple[FloatArray, IntArray]:
    """Each run's 1 / rank**2 (0 where absent), and how many runs retrieved each row."""
    present = c.ranks > 0
    points = np.where(present, 1.0 / np.where(present, c.ranks, 1).astype(np.float64) ** 2, 0.0)
    return points, present.sum(axis=0)


@fusion_method("isr", family="rank")
def isr(c: Candidates) -> FloatArray:
    """ISR (Mourão et al., 2014): the sum of 1 / rank**2, times the number of runs that retrieved the document."""
    points, count = _inverse_squares(c)
    return _sum(points) * count


@fusion_method("log_isr", family="rank")
def log_isr(c: Candidates) -> FloatArray:
    """log-ISR: the sum of 1 / rank**2, times the log of the number of runs that retrieved the document
    (0 for a document only one run has)."""
    points, count = _inverse_squares(c)
    return _sum(points) * np.log(count)


@fusion_method("logn_isr", params={"sigma": 0.01}, family="rank")
def logn_isr(c: Candidates, *, sigma: float) -> FloatArray:
    """logN-ISR: the sum of 1 / rank**2, times log(runs that retrieved the document + sigma)."""
    sigma = _check("logn_isr's sigma", sigma, 0.0, 1.0)
    points, count = _inverse_squares(c)
    return np.asarray(_sum(points) * np.log(count + sigma), dtype=np.float64)


@fusion_method("rbc", params={"phi": 0.8}, family="rank")
def rbc(c: Candidates, *, phi: float) -> FloatArray:
    """Rank-biased centroid (Bailey et al., 2017): the sum of (1 - phi) * phi**(rank - 1)."""
    phi = _check("RBC's phi", phi, 0.0, 1.0)
    present = c.ranks > 0
    return _sum(np.where(present, (1 - phi) * phi ** (np.where(present, c.ranks, 1) - 1.0), 0.0))


def _borda_points(c: Candidates) -> FloatArray:
    """Borda points (Aslam and Montague, 2001): with m documents in the query's pool, rank i earns
    m - i + 1; the documents a run left out share the points left, (m - depth + 1) / 2 each."""
    m = np.diff(c.offsets).astype(np.float64)[c.row_query()]
    depth = np.repeat(c.depth, np.diff(c.offsets), axis=1).astype(np.float64)
    return np.where(c.ranks > 0, m - c.ranks + 1, (m - depth + 1) / 2)


@fusion_method("bordafuse", family="rank")
def bordafuse(c: Candidates) -> FloatArray:
    """BordaFuse: the sum of each run's Borda points."""
    return _sum(_borda_points(c))


@fusion_method("w_bordafuse", params={"weights": None}, family="rank")
def weighted_bordafuse(c: Candidates, *, weights: Any) -> FloatArray:
    """Weighted BordaFuse: the sum of each run's weight times its Borda points."""
    return _sum(run_weights(weights, c)[:, None] * _borda_points(c))


#: Pairs of documents compared per step of :func:`_majority_wins` (bounds its temporaries).
_PAIRS_PER_STEP = 1 << 21


def _majority_wins(c: Candidates, weights: FloatArray) -> FloatArray:
    """How many documents of its query each row beats: the runs (their weights) that rank it above
    the other outweigh those that rank the other above it. A run ranks any document it retrieved
    above those it did not. Quadratic in each query's pool: all pairs, a block of rows at a time."""
    n = c.n_rows
    sizes = np.diff(c.offsets)
    query = c.row_query()
    per_row = sizes[query]
    before = _offsets_of(per_row)
    ranks = np.where(c.ranks > 0, c.ranks, np.iinfo(np.int64).max)
    wins = np.zeros(n)
    row = 0
    while row < n:  # a loop over blocks of rows, each one whole-array step
        end = max(int(np.searchsorted(before, before[row] + _PAIRS_PER_STEP, side="right")) - 1, row + 1)
        end = min(end, n)
        rows_i = np.repeat(np.arange(row, end), per_row[row:end])
        within = np.arange(len(rows_i)) - np.repeat(before[row:end] - before[row], per_row[row:end])
        rows_j = c.offsets[query.take(rows_i)] + within
        ri, rj = ranks[:, rows_i], ranks[:, rows_j]
        ahead = _sum(weights[:, None] * (ri < rj))
        behind = _sum(weights[:, None] * (rj < ri))
        wins[row:end] = np.bincount(rows_i - row, weights=(ahead > behind).astype(np.float64), minlength=end - row)
        row = end
    return wins


def _points_by_order(c: Candidates, key: FloatArray) -> FloatArray:
    """m, m - 1, ..., 1 down each query's rows ordered by ``key`` (descending, ties by doc_id descending)."""
    query = c.row_query()
    order = canonical_order(query, key, c.doc_ids)
    rows = np.arange(c.n_rows, dtype=np.int64) if order is None else order.permutation()
    position = np.empty(c.n_rows, dtype=np.int64)
    position[rows] = np.arange(c.n_rows) - c.offsets[query.take(rows)]
    points: FloatArray = (np.diff(c.offsets)[query] - position).astype(np.float64)
    return points


@fusion_method("condorcet", family="rank")
def condorcet(c: Candidates) -> FloatArray:
    """Condorcet fusion (Montague and Aslam, 2002): documents ordered by their pairwise majority wins,
    scored m, m - 1, ..., 1 down that order (quadratic in each query's pool)."""
    return _points_by_order(c, _majority_wins(c, np.ones(c.n_runs)))


@fusion_method("w_condorcet", params={"weights": None}, family="rank")
def weighted_condorcet(c: Candidates, *, weights: Any) -> FloatArray:
    """Weighted Condorcet: as ``condorcet``, each run's vote counting its weight."""
    return _points_by_order(c, _majority_wins(c, run_weights(weights, c)))
