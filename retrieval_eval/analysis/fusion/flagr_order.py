"""FLAGR's order of a fused list, for the methods whose numbers depend on positions in it.

pyflagr 1.0.21 sorts a fused list by score, descending; documents with equal scores come in order
of how many runs rank them (more first), then of their ids (byte order). DIBRA measures distances
from positions in that list, so it uses this order. (The fused runs this library writes break ties
as trec_eval does, by doc_id descending: see docs/fusion.md.) Before any sort, FLAGR lists a query's
documents in the order of its hash table (:func:`hash_order`); the outranking approach adds its
scores up in that order, which decides the last bit of a score and so, in DIBRA, ties.
"""

from __future__ import annotations

import numpy as np

from ...model import IntArray


def id_order(doc_ids: np.ndarray) -> IntArray:
    """The rows (0-based) in byte order of their ids, as FLAGR's ``strcmp`` orders them (Candidates'
    rows within a query follow no meaningful order)."""
    order: IntArray = np.argsort(np.asarray(doc_ids), kind="stable")
    return order


def flagr_positions(scores: np.ndarray, n_ranking: np.ndarray, doc_ids: np.ndarray) -> IntArray:
    """(m,) each of a query's documents' 0-based position in FLAGR's sorted list, given its ``scores``,
    how many runs rank it (``n_ranking``) and its id."""
    by_id = np.empty(len(scores), dtype=np.int64)
    by_id[id_order(doc_ids)] = np.arange(len(scores))
    order = np.lexsort((by_id, -np.asarray(n_ranking), -np.asarray(scores)))
    positions = np.empty(len(order), dtype=np.int64)
    positions[order] = np.arange(len(order))
    return positions


_SLOTS = 1024


def djb2_slots(doc_ids: np.ndarray) -> IntArray:
    """(n,) each id's chain in FLAGR's hash table: Bernstein's djb2 hash of its bytes, modulo 1024."""
    ids = np.asarray(doc_ids)
    if ids.dtype.kind != "S":
        ids = np.array([d if isinstance(d, bytes) else str(d).encode() for d in ids.tolist()])
    width = ids.dtype.itemsize
    codes = ids.view(np.uint8).reshape(len(ids), width).astype(np.int64)
    codes = np.where(codes >= 128, codes - 256, codes)  # FLAGR reads an id as (signed) chars
    slot = np.full(len(ids), 5381 % _SLOTS, dtype=np.int64)
    alive = np.ones(len(ids), dtype=bool)
    for k in range(width):  # a loop over character positions (an id ends at its first NUL)
        alive &= codes[:, k] != 0
        slot = np.where(alive, (slot * 33 + codes[:, k]) % _SLOTS, slot)
    return slot


def hash_order(doc_ids: np.ndarray, ranks: np.ndarray) -> IntArray:
    """A query's rows (0-based) in the order FLAGR's hash table lists them: chain by chain, each chain
    newest first, documents met run by run in rank order (``ranks``: (runs, m), 0 where absent)."""
    first = np.full(ranks.shape[1], np.iinfo(np.int64).max, dtype=np.int64)
    for r in range(ranks.shape[0]):  # a loop over runs: run r's documents are met after earlier runs'
        met = ranks[r] > 0
        first = np.where(met, np.minimum(first, r * (1 << 32) + ranks[r]), first)
    order: IntArray = np.lexsort((-first, djb2_slots(doc_ids)))
    return order
