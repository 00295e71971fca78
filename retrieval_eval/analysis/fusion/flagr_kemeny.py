"""FLAGR's Kemeny-optimal aggregation, for small queries only.

The fused order maximises, summed over the runs, the share of each run's ordered pairs it keeps
(Kendall's tau as FLAGR computes it: concordant pairs over the run's ``L (L - 1) / 2`` pairs). Finding
it is NP-hard: FLAGR tries every permutation and warns against more than 10 documents. Here a
dynamic programme over subsets of the query's documents finds the same optimum in ``2^m * m`` steps,
so a query of at most ``max_items`` documents (10 by default, 16 at most) is accepted and a larger one
is refused with an error naming it.

Each query is its own search, so the method loops over queries (and over the subsets of one query).
"""

from __future__ import annotations

import numpy as np

from ...model import FloatArray
from .candidates import Candidates
from .registry import FusionError, fusion_method

#: The largest query the subset search accepts: 2^16 subsets of 16 documents.
HARD_LIMIT = 16


def pair_weights(ranks: np.ndarray) -> FloatArray:
    """(m, m): the weight of placing document i before j, summed over one query's ``(runs, m)`` ranks
    (0 where absent): ``1 / (L (L - 1) / 2)`` for each run of ``L >= 2`` documents ranking i above j."""
    m = ranks.shape[1]
    weights = np.zeros((m, m))
    for r in range(ranks.shape[0]):  # a loop over runs
        ranked = ranks[r] > 0
        length = int(ranked.sum())
        if length < 2:
            continue  # no pair (FLAGR's tau is 0 / 0 here, which leaves its first permutation)
        above = ranked[:, None] & ranked[None, :] & (ranks[r][:, None] < ranks[r][None, :])
        weights += above / (length * (length - 1) / 2)
    return weights


def kemeny_order(weights: FloatArray) -> list[int]:
    """The order of ``range(m)`` maximising the sum of ``weights[i, j]`` over i placed before j."""
    m = weights.shape[0]
    full = 1 << m
    gain = np.zeros((full, m))  # gain[S, j]: the weight won by placing j after the set S
    for b in range(m):
        gain[1 << b : 1 << (b + 1)] = gain[: 1 << b] + weights[b]
    best = np.full(full, -np.inf)
    best[0] = 0.0
    last = np.zeros(full, dtype=np.int64)
    bits = 1 << np.arange(m)
    for subset in range(1, full):  # subsets in increasing order: every smaller prefix is done
        members = np.flatnonzero(subset & bits)
        before = subset ^ bits[members]
        values = best[before] + gain[before, members]
        pick = int(np.argmax(values))
        best[subset], last[subset] = values[pick], members[pick]
    order: list[int] = []
    subset = full - 1
    while subset:
        j = int(last[subset])
        order.append(j)
        subset ^= 1 << j
    return order[::-1]


def kemeny(c: Candidates, *, max_items: int) -> FloatArray:
    """FLAGR's scores of the Kemeny-optimal order: ``m + 1`` for the first of m documents, down to 2."""
    if int(max_items) != max_items or not 1 <= max_items <= HARD_LIMIT:
        raise FusionError(f"Kemeny's max_items must be a whole number from 1 to {HARD_LIMIT}; got {max_items!r}")
    sizes = np.diff(c.offsets)
    too_big = np.flatnonzero(sizes > max_items)
    if len(too_big):
        q = int(too_big[0])
        raise FusionError(f"Kemeny-optimal aggregation is for small queries: query {c.query_ids[q].decode()!r} "
                          f"has {int(sizes[q])} documents over all runs, more than max_items={max_items} "
                          f"(at most {HARD_LIMIT}); keep only each run's top documents first")
    out = np.zeros(c.n_rows)
    for start, end in zip(c.offsets[:-1].tolist(), c.offsets[1:].tolist()):  # per query: its own search
        order = kemeny_order(pair_weights(c.ranks[:, start:end]))
        m = end - start
        out[start + np.array(order, dtype=np.int64)] = m + 1 - np.arange(m)
    return out


@fusion_method("flagr-kemeny", params={"max_items": 10}, family="flagr")
def flagr_kemeny(c: Candidates, *, max_items: int) -> FloatArray:
    """FLAGR's Kemeny-optimal aggregation: the order agreeing most with the runs' pairs (small queries)."""
    return kemeny(c, max_items=max_items)
