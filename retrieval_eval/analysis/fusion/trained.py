"""Fusion methods that learn from judgments (as ranx defines them): how likely each run is to place a
relevant document at each rank, or in each segment of ranks, estimated on training queries.

Each takes the judgments (``qrels``, :class:`~retrieval_eval.model.QrelsColumns`) and the training
queries (``train_queries``) explicitly: nothing is learnt from a query unless it is named. The
probabilities are estimated on the training queries and applied to every query; a document counts as
relevant with a grade of at least ``rel``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ...model import BoolArray, FloatArray, IntArray, QrelsColumns, id_bytes
from .candidates import Candidates, _common_ids
from .normalise import normalised_scores
from .registry import FusionError, fusion_method

_TRAINING = {"qrels": None, "train_queries": None, "rel": 1}

#: SegFuse's segments of ranks (0-based starts): 5, 10, 20, 40, ... ranks long (Shokouhi, 2007).
SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)
#: BayesFuse's segments of ranks (0-based starts), as ranx has them.
BAYESFUSE_BOUNDS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000], dtype=np.int64)
#: BayesFuse's log-odds of a document a run did not retrieve (ranx's choice), also used past rank 1000.
MIN_LOG_ODDS = float(np.log(0.001 / 0.999))


def _train_queries(c: Candidates, train_queries: Iterable[Any] | None) -> BoolArray:
    """Which of the candidates' queries are training queries."""
    if train_queries is None:
        raise FusionError("this fusion method learns from judgments: give qrels and train_queries "
                          "(the queries to learn from)")
    wanted = [id_bytes(q) if isinstance(q, str) else bytes(q) for q in train_queries]
    if not wanted:
        raise FusionError("train_queries is empty: name at least one query to learn from")
    return np.isin(c.query_ids, np.array(wanted, dtype=object).astype(c.query_ids.dtype)
                   if c.query_ids.dtype.kind == "S" else np.array(wanted, dtype=object))


def relevant_rows(c: Candidates, qrels: QrelsColumns, rel: int) -> BoolArray:
    """(n,) whether each candidate row is judged relevant (grade >= ``rel``) for its query."""
    keep = np.asarray(qrels.relevance) >= rel
    _, query_code = _intern(_common_ids([c.query_ids, np.asarray(qrels.query_ids)[keep]]))
    doc_ids, doc_code = _intern(_common_ids([c.doc_ids, np.asarray(qrels.doc_ids)[keep]]))
    n_docs = len(doc_ids)
    row_keys = query_code[: c.n_queries][c.row_query()] * n_docs + doc_code[: c.n_rows]
    judged_keys = query_code[c.n_queries :] * n_docs + doc_code[c.n_rows :]
    return np.isin(row_keys, judged_keys)


def _whole(name: str, value: Any, low: int) -> int:
    """``value`` as an int >= ``low``; FusionError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise FusionError(f"{name} must be an int >= {low}; got {value!r}")
    return int(value)


def _intern(ids: np.ndarray) -> tuple[np.ndarray, IntArray]:
    from ...engine.ids import intern

    return intern(ids)


def _setup(c: Candidates, qrels: Any, train_queries: Any, rel: Any) -> tuple[BoolArray, BoolArray]:
    """Each row's relevance, and whether each row belongs to a training query."""
    if not isinstance(qrels, QrelsColumns):
        raise FusionError("this fusion method learns from judgments: give qrels (QrelsColumns) and train_queries")
    train = _train_queries(c, train_queries)
    return relevant_rows(c, qrels, int(rel)), train[c.row_query()]


def _position_probabilities(c: Candidates, hit: BoolArray, train_row: BoolArray, train_query: BoolArray) -> list[FloatArray]:
    """For each run: the share of training queries (among those the run retrieved that many documents
    for) whose document at each rank is relevant (PosFuse's and SlideFuse's probabilities)."""
    probs = []
    for r in range(c.n_runs):  # a loop over runs
        at = np.flatnonzero(train_row & (c.ranks[r] > 0))
        position = c.ranks[r, at] - 1
        longest = int(c.depth[r, train_query].max(initial=0))
        hits = np.bincount(position, weights=hit[at].astype(np.float64), minlength=longest)
        reaching = np.cumsum(np.bincount(c.depth[r, train_query], minlength=longest + 1)[::-1])[::-1][1:]
        with np.errstate(invalid="ignore"):
            probs.append(hits / reaching)
    return probs


def _per_position(probs: FloatArray, position: IntArray) -> FloatArray:
    """``probs[position]``, 0 past its end."""
    padded = np.concatenate((probs, [0.0]))
    return padded[np.minimum(position, len(probs))]


@fusion_method("posfuse", params=_TRAINING, family="trained")
def posfuse(c: Candidates, *, qrels: Any, train_queries: Any, rel: int) -> FloatArray:
    """PosFuse (Lillis et al.): the sum over runs of the probability that the run's rank holds a relevant document."""
    hit, train_row = _setup(c, qrels, train_queries, rel)
    probs = _position_probabilities(c, hit, train_row, _train_queries(c, train_queries))
    points = [np.where(c.ranks[r] > 0, _per_position(probs[r], np.maximum(c.ranks[r] - 1, 0)), 0.0)
              for r in range(c.n_runs)]
    return np.sum(points, axis=0) if points else np.zeros(c.n_rows)


@fusion_method("slidefuse", params={**_TRAINING, "w": 3}, family="trained")
def slidefuse(c: Candidates, *, qrels: Any, train_queries: Any, rel: int, w: int) -> FloatArray:
    """SlideFuse (Lillis et al., 2008): PosFuse's probabilities averaged over the ranks within w of the
    document's, inside the run's list."""
    w = _whole("SlideFuse's w", w, 0)
    hit, train_row = _setup(c, qrels, train_queries, rel)
    probs = _position_probabilities(c, hit, train_row, _train_queries(c, train_queries))
    depth = np.repeat(c.depth, np.diff(c.offsets), axis=1)
    points = np.zeros((c.n_runs, c.n_rows))
    for r in range(c.n_runs):  # a loop over runs, then over the window's 2w + 1 offsets
        position = c.ranks[r] - 1
        low, high = np.maximum(position - w, 0), np.minimum(position + w, depth[r] - 1)
        total = np.zeros(c.n_rows)
        for offset in range(-int(w), int(w) + 1):  # added in rank order, as a sum along the window
            at = position + offset
            inside = (at >= low) & (at <= high)
            total += np.where(inside, _per_position(probs[r], np.clip(at, 0, None)), 0.0)
        points[r] = np.where(c.ranks[r] > 0, total / np.maximum(high - low + 1, 1), 0.0)
    return np.asarray(np.sum(points, axis=0), dtype=np.float64)


def _segment_averages(c: Candidates, r: int, hit: BoolArray, train_row: BoolArray, train_query: BoolArray,
                      segment: IntArray, length: FloatArray, n_segments: int, divide_first: bool = False) -> FloatArray:
    """For run ``r``: each segment's share of relevant documents (hits / ``length``, per row's segment
    and query), averaged over the training queries: summed in their order, then divided by their
    number (or each divided first, ``divide_first``: the order of ranx's BayesFuse, for equal floats)."""
    at = np.flatnonzero(train_row & (c.ranks[r] > 0) & (segment >= 0))
    query = c.row_query()[at]
    cell = query * n_segments + segment[at]
    hits = np.bincount(cell, weights=hit[at].astype(np.float64), minlength=c.n_queries * n_segments)
    lengths = np.zeros(c.n_queries * n_segments)
    lengths[cell] = length[at]
    share = np.divide(hits, lengths, out=np.zeros_like(hits), where=lengths > 0).reshape(c.n_queries, n_segments)
    count = max(int(train_query.sum()), 1)
    if divide_first:
        mean: FloatArray = (share[train_query] / count).sum(axis=0)
        return mean
    totals: FloatArray = share[train_query].sum(axis=0)
    return totals / count


@fusion_method("probfuse", params={**_TRAINING, "n_segments": 25}, family="trained")
def probfuse(c: Candidates, *, qrels: Any, train_queries: Any, rel: int, n_segments: int) -> FloatArray:
    """ProbFuse (Lillis et al., 2006): each run's list cut into n_segments equal segments; a document
    scores its segment's share of relevant documents on the training queries, divided by the segment's number."""
    n_segments = _whole("ProbFuse's n_segments", n_segments, 1)
    hit, train_row = _setup(c, qrels, train_queries, rel)
    train_query = _train_queries(c, train_queries)
    depth = np.repeat(c.depth, np.diff(c.offsets), axis=1)
    points = np.zeros((c.n_runs, c.n_rows))
    for r in range(c.n_runs):  # a loop over runs
        size = np.maximum(-(-depth[r] // n_segments), 1)
        segment = np.where(c.ranks[r] > 0, (c.ranks[r] - 1) // size, -1)
        length = np.minimum(size, depth[r] - segment * size).astype(np.float64)
        probs = _segment_averages(c, r, hit, train_row, train_query, segment, length, n_segments)
        points[r] = np.where(c.ranks[r] > 0, probs[np.maximum(segment, 0)] / (np.maximum(segment, 0) + 1), 0.0)
    return np.asarray(np.sum(points, axis=0), dtype=np.float64)


@fusion_method("segfuse", params={**_TRAINING, "norm": "min-max"}, family="trained")
def segfuse(c: Candidates, *, qrels: Any, train_queries: Any, rel: int, norm: str) -> FloatArray:
    """SegFuse (Shokouhi, 2007): each run's list cut into segments of 5, 10, 20, 40... ranks; a document
    scores its segment's share of relevant documents on the training queries times (its normalised score + 1)."""
    hit, train_row = _setup(c, qrels, train_queries, rel)
    train_query = _train_queries(c, train_queries)
    scores = normalised_scores(c, norm)
    n_segments = len(SEGFUSE_BOUNDS) - 1
    points = np.zeros((c.n_runs, c.n_rows))
    for r in range(c.n_runs):  # a loop over runs
        position = c.ranks[r] - 1
        segment = np.searchsorted(SEGFUSE_BOUNDS, position, side="right") - 1
        segment = np.where((c.ranks[r] > 0) & (position < SEGFUSE_BOUNDS[-1]), segment, -1)
        length = np.diff(SEGFUSE_BOUNDS).astype(np.float64)[np.maximum(segment, 0)]
        probs = _segment_averages(c, r, hit, train_row, train_query, segment, length, n_segments)
        points[r] = np.where(segment >= 0, probs[np.maximum(segment, 0)] * (scores[r] + 1), 0.0)
    return np.asarray(np.sum(points, axis=0), dtype=np.float64)


@fusion_method("bayesfuse", params=_TRAINING, family="trained")
def bayesfuse(c: Candidates, *, qrels: Any, train_queries: Any, rel: int) -> FloatArray:
    """BayesFuse (Aslam and Montague, 2001): the sum over runs of the log-odds of relevance at the
    document's rank, estimated per segment of ranks (1-5, 6-10, ..., 501-1000) on the training queries."""
    hit, train_row = _setup(c, qrels, train_queries, rel)
    train_query = _train_queries(c, train_queries)
    n_segments = len(BAYESFUSE_BOUNDS) - 1
    odds = np.full((c.n_runs, c.n_rows), MIN_LOG_ODDS)
    for r in range(c.n_runs):  # a loop over runs
        position = c.ranks[r] - 1
        segment = np.searchsorted(BAYESFUSE_BOUNDS, position, side="right") - 1
        segment = np.where((c.ranks[r] > 0) & (position < BAYESFUSE_BOUNDS[-1]), segment, -1)
        length = np.diff(BAYESFUSE_BOUNDS).astype(np.float64)[np.maximum(segment, 0)]
        precision = _segment_averages(c, r, hit, train_row, train_query, segment, length, n_segments, True)
        precision = np.where(precision == 0, 0.001, precision)
        against = np.where(1 - precision == 0, 0.001, 1 - precision)
        log_odds = np.log(precision / against)
        odds[r] = np.where(segment >= 0, log_odds[np.maximum(segment, 0)], MIN_LOG_ODDS)
    total: FloatArray = odds.sum(axis=0)
    return total
