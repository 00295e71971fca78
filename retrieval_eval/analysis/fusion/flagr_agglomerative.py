"""FLAGR's weighted agglomerative aggregation (Chatterjee et al., 2018), as pyflagr 1.0.21 runs it.

Each run starts as its own fused list, scored ``L (L - 2 rank + 1) / 2`` (Eq. 7, L its length) and
weighted by ``1 +`` the pairs on which it sides with the majority of runs. The two most similar
lists (Spearman's rho over their positions) merge, again and again, until one is left: a document
in both gets the weighted mean of its two scores (Eq. 8), a document in one keeps its score, and the
merged list's weight is ``(c1 w1 + c2 w2) / (c1 + c2)`` (Eq. 9).

The merges of one query are a sequence of decisions on that query's lists, so the method loops over
queries and over merges (at most runs - 1 per query); each step is whole-array work over the query's
documents.
"""

from __future__ import annotations

import math

import numpy as np

from ...model import FloatArray
from .candidates import Candidates
from .flagr_common import NOT_RANKED, queries, wins_matrix
from .flagr_order import flagr_positions
from .registry import FusionError, fusion_method


def _positions(score: FloatArray, n_ranking: np.ndarray, doc_ids: np.ndarray) -> FloatArray:
    """Each document's 0-based position in a fused list (FLAGR's sort), NaN where the list lacks it."""
    held = ~np.isnan(score)
    out = np.full(len(score), np.nan)
    out[held] = flagr_positions(score[held], n_ranking[held], doc_ids[held])
    return out


def _rho(first: FloatArray, second: FloatArray) -> float:
    """FLAGR's Spearman rho of list ``first`` with ``second`` (positions, NaN where absent): over the
    documents both hold, with ``first``'s length in the denominator (so it is not symmetric)."""
    n = float(np.count_nonzero(~np.isnan(first)))
    both = ~np.isnan(first) & ~np.isnan(second)
    total = float(((first[both] - second[both]) ** 2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(1.0 - np.float64(6.0 * total) / np.float64(n**3 - n))


def _most_similar(positions: list[FloatArray | None]) -> list[tuple[float, int]]:
    """For each list, its highest rho with another live list and that list (-2 and -1 if none)."""
    best = []
    for m, mine in enumerate(positions):  # a loop over the lists (runs), as FLAGR's
        top, partner = -2.0, -1
        for n, other in enumerate(positions):
            if m != n and mine is not None and other is not None:
                sim = _rho(mine, other)
                if sim > top:
                    top, partner = sim, n
        best.append((top, partner))
    return best


def agglomerative_query(ranks: np.ndarray, depth: np.ndarray, doc_ids: np.ndarray, c1: float, c2: float
                        ) -> FloatArray:
    """One query's scores from its ``(runs, m)`` ranks (0 where absent), list lengths and ids."""
    n_runs = ranks.shape[0]
    present = ranks > 0
    flagr = np.where(present, ranks.astype(np.float64), NOT_RANKED)
    wins = wins_matrix(flagr, np.ones(n_runs))
    majority = wins > wins.T
    # each run's weight: 1 + the pairs it orders as the majority of runs does
    weights = [1.0 + float((majority & (flagr[r][:, None] < flagr[r][None, :])).sum()) for r in range(n_runs)]
    scores: list[FloatArray] = []
    counts: list[np.ndarray] = []
    for r in range(n_runs):  # a loop over runs: each starts as its own list
        length = float(depth[r])
        scores.append(np.where(present[r], 0.5 * (length * length - 2 * length * (ranks[r] - 1) - length), np.nan))
        counts.append(present[r].astype(np.int64))
    positions: list[FloatArray | None] = [_positions(scores[r], counts[r], doc_ids) for r in range(n_runs)]
    similar = _most_similar(positions)
    keep = 0
    for _ in range(n_runs - 1):  # a loop over merges
        top = -2.0
        for m, (sim, _partner) in enumerate(similar):
            if sim > top:
                top, keep = sim, m
        other = similar[keep][1]
        if other < 0:
            # no two lists have a defined similarity (lists of one document: rho is 0 / 0), where
            # pyflagr reads outside its array and crashes: merge the first two lists left instead
            keep, other = [m for m, held in enumerate(positions) if held is not None][:2]
        mine, theirs = scores[keep], scores[other]
        both = ~np.isnan(mine) & ~np.isnan(theirs)
        w1, w2 = weights[keep], weights[other]
        merged = np.where(np.isnan(mine), theirs, mine)
        merged = np.where(both, (w1 * mine + w2 * theirs) / (w1 + w2), merged)
        scores[keep], counts[keep] = merged, counts[keep] + counts[other]
        weights[keep] = (c1 * w1 + c2 * w2) / (c1 + c2)
        positions[keep], positions[other] = _positions(merged, counts[keep], doc_ids), None
        similar = _most_similar(positions)
    return np.nan_to_num(scores[keep], nan=0.0)


def agglomerative(c: Candidates, *, c1: float, c2: float) -> FloatArray:
    """FLAGR's agglomerative scores of every row (see the module's description)."""
    if not (math.isfinite(c1) and math.isfinite(c2)) or c1 + c2 == 0:
        raise FusionError(f"the agglomerative method needs finite c1 and c2 with c1 + c2 != 0; got {c1!r}, {c2!r}")
    out = np.zeros(c.n_rows)
    for q, (start, end) in enumerate(queries(c)):  # per query: its own sequence of merges
        out[start:end] = agglomerative_query(c.ranks[:, start:end], c.depth[:, q], c.doc_ids[start:end], c1, c2)
    return out


@fusion_method("flagr-agglomerative", params={"c1": 0.1, "c2": 0.5}, family="flagr")
def flagr_agglomerative(c: Candidates, *, c1: float, c2: float) -> FloatArray:
    """FLAGR's weighted agglomerative aggregation: the most similar lists merged pairwise until one is left."""
    return agglomerative(c, c1=c1, c2=c2)
