"""Score normalisations, per run and query, as ranx defines them: what makes scores of different
runs comparable before a score combination adds them up.

Each takes :class:`~.candidates.Candidates` and returns its ``(runs, rows)`` score matrix with every
run's scores of each query rescaled on their own; a run's missing documents stay NaN, except under
``borda``, which gives them a share of the positions the run left (as ranx does).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ...model import FloatArray, InputFormatError
from .candidates import Candidates

#: Added to denominators that may be 0 (one document, equal scores), as ranx does.
EPSILON = 1e-9

NORMALISATIONS = ("none", "min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda")


def _per_query(values: FloatArray, c: Candidates, reduce: np.ufunc) -> FloatArray:
    """``reduce`` (a NaN-skipping ufunc such as ``np.fmax``) over each query's rows, for each run:
    (r, q), NaN where a run has no row of the query."""
    starts = c.offsets[:-1]
    out = np.full((values.shape[0], c.n_queries), np.nan)
    nonempty = starts < c.offsets[1:]  # a query has rows if some run retrieved documents for it
    if c.n_rows:
        out[:, nonempty] = reduce.reduceat(values, starts[nonempty], axis=1)
    return out


def _along_rows(per_query: FloatArray, c: Candidates) -> FloatArray:
    """A (r, q) matrix spread along each query's rows: (r, n)."""
    return np.repeat(per_query, np.diff(c.offsets), axis=1)


#: The min-max normalisations, which :func:`min_max_rows` gives a run at a time.
MIN_MAX = ("min-max", "min-max-inverted")


def min_max_rows(c: Candidates, norm: str) -> Iterator[FloatArray]:
    """Each run's scores under ``norm`` (one of :data:`MIN_MAX`) in turn, NaN where the run lacks
    the row: the minimum and maximum per (run, query) first, then spread along one run's rows."""
    scores = c.scores
    low, high = _per_query(scores, c, np.fmin), _per_query(scores, c, np.fmax)
    spread = np.maximum(high - low, EPSILON)
    sizes = np.diff(c.offsets)
    for r in range(c.n_runs):  # a loop over runs
        if norm == "min-max-inverted":
            row = np.subtract(np.repeat(high[r], sizes), scores[r])
        else:
            row = np.subtract(scores[r], np.repeat(low[r], sizes))
        row /= np.repeat(spread[r], sizes)
        yield row


def normalised_scores(c: Candidates, norm: str) -> FloatArray:
    """The scores of ``c`` under normalisation ``norm`` (one of :data:`NORMALISATIONS`).

    >>> from retrieval_eval.io.dicts import columns_from_dicts
    >>> from retrieval_eval.analysis.fusion.candidates import candidates_from_runs
    >>> run = columns_from_dicts({}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}})[1]
    >>> c = candidates_from_runs([run])
    >>> sorted(zip(c.doc_ids.tolist(), normalised_scores(c, "min-max")[0].tolist()))
    [(b'a', 1.0), (b'b', 0.5), (b'c', 0.0)]
    """
    scores = c.scores
    if norm == "none":
        return scores
    if norm in MIN_MAX:
        # One run's rows at a time: the one matrix of the rows' size is the result (fresh matrices
        # of millions of rows cost more than the arithmetic).
        out = np.empty_like(scores)
        for r, row in enumerate(min_max_rows(c, norm)):  # a loop over runs
            out[r] = row
        return out
    present = ~np.isnan(scores)
    count = _along_rows(c.depth.astype(np.float64), c)
    if norm == "sum":
        low = _along_rows(_per_query(scores, c, np.fmin), c)
        total = _along_rows(_per_query(np.where(present, scores, 0.0), c, np.add), c)
        return (scores - low) / np.maximum(total - low * count, EPSILON)
    if norm == "max":
        return scores / np.maximum(_along_rows(_per_query(scores, c, np.fmax), c), EPSILON)
    if norm == "zmuv":
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = _along_rows(_per_query(np.where(present, scores, 0.0), c, np.add), c) / count
            squares = np.where(present, (scores - mean) ** 2, 0.0)
            sd = np.sqrt(_along_rows(_per_query(squares, c, np.add), c) / count)
        return (scores - mean) / np.maximum(sd, EPSILON)
    if norm == "rank":
        return np.where(present, 1.0 - (c.ranks - 1) / np.maximum(count, 1.0), np.nan)
    if norm == "borda":
        n_candidates = np.diff(c.offsets).astype(np.float64)[None, :].repeat(c.n_runs, axis=0)
        n_candidates = _along_rows(n_candidates, c)
        return np.where(present, 1.0 - (c.ranks - 1) / n_candidates, 0.5 - (count - 1) / (2 * n_candidates))
    raise InputFormatError(f"unknown normalisation {norm!r}; expected one of: {', '.join(NORMALISATIONS)}")
