"""Pools: which documents to judge next, in the order an assessor should see them.

Given qrels and the runs to be evaluated, :func:`pool` lists, per query, the documents the runs
retrieved that the qrels do not judge yet (a negative label, "pooled but not judged", counts as
not judged), best candidates first. Each run is ranked in trec_eval's order (the order its
measures see), and each document scored over the runs by one of three methods:

- ``"depth"``: classic TREC pooling, every document in some run's top ``depth``; ordered by its
  best rank in any run, then by how many runs have it in their top ``depth``, then by doc_id;
- ``"rrf"``: reciprocal rank fusion (Cormack et al. 2009): the sum over runs of ``1 / (k + rank)``;
- ``"rbp"``: the weight rank-biased precision gives the rank (Moffat et al. 2007): the sum over runs
  of ``(1 - p) p^(rank - 1)``, so the documents that matter most to the measure come first.

``budget`` keeps the first ``budget`` documents of each query (already-judged documents take none
of it); ``depth`` also limits rrf and rbp to each run's top ``depth``. Ties in a score are broken by
doc_id (ascending), so the pool is the same on every machine.

>>> qrels = {"q1": {"b": 1}}
>>> runs = [{"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}, {"q1": {"c": 3.0, "d": 2.0}}]
>>> [(row.query_id, row.doc_id) for row in pool(qrels, runs, depth=2)]
[('q1', 'a'), ('q1', 'c'), ('q1', 'd')]
>>> [(row.doc_id, round(row.score, 4)) for row in pool(qrels, runs, method="rrf", budget=2, k=1)]
[('c', 0.75), ('a', 0.5)]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import frozen

from ..model import RetrievalEvalError, id_text
from .agreement import id_pairs, judged_keys, qrels_columns
from .rankings import RankedLists, ranked_lists

__all__ = ["METHODS", "PoolEntry", "pool", "pool_lines"]

#: The pooling methods of :func:`pool`.
METHODS = ("depth", "rrf", "rbp")


@frozen
class PoolEntry:
    """One document to judge: its query, its place in that query's list (1 = first), and its score
    (the best rank for ``depth``, the fused value for ``rrf`` and ``rbp``)."""

    query_id: str
    priority: int
    doc_id: str
    score: float


def pool(qrels: Any, runs: Sequence[Any], *, method: str = "depth", depth: int | None = None,
         budget: int | None = None, k: float = 60.0, p: float = 0.8) -> list[PoolEntry]:
    """The documents of ``runs`` (paths, dicts, :class:`RunColumns` or :class:`RankedLists`) that ``qrels``
    does not judge yet, per query (in id order) best first; see the module notes. ``depth`` is required
    for ``method="depth"``, ``budget`` for ``rrf`` and ``rbp``; ``k`` is RRF's constant, ``p`` RBP's persistence."""
    if method not in METHODS:
        raise RetrievalEvalError(f"'method' must be one of {', '.join(METHODS)}; got {method!r}")
    for name, value in (("depth", depth), ("budget", budget)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise RetrievalEvalError(f"'{name}' must be an integer >= 1 or None; got {value!r}")
    if method == "depth" and depth is None:
        raise RetrievalEvalError("depth pooling needs 'depth', the number of top documents taken from each run")
    if method != "depth" and budget is None:
        raise RetrievalEvalError(f"{method} pooling needs 'budget', the number of documents to judge per query")
    if not (isinstance(k, (int, float)) and k >= 0 and math.isfinite(k)):
        raise RetrievalEvalError(f"'k' must be a number >= 0; got {k!r}")
    if not (isinstance(p, (int, float)) and 0.0 < p < 1.0):
        raise RetrievalEvalError(f"'p' must lie strictly between 0 and 1; got {p!r}")
    if not runs:
        raise RetrievalEvalError("a pool needs at least one run")
    judged = judged_keys(qrels_columns(qrels))[0]  # a document judged twice is an error, as in evaluate
    queries, docs, ranks = [], [], []
    for run in runs:
        lists = run if isinstance(run, RankedLists) else ranked_lists(run)
        sizes = np.diff(lists.offsets)
        rank = np.arange(len(lists.doc_ids)) - np.repeat(lists.offsets[:-1], sizes) + 1
        keep = rank <= depth if depth is not None else np.ones(len(rank), dtype=bool)
        queries.append(np.repeat(np.array([q.encode("utf-8", "surrogateescape") for q in lists.query_ids],
                                          dtype=bytes), sizes)[keep])
        docs.append(lists.doc_ids[keep].astype(bytes))
        ranks.append(rank[keep])
    rank = np.concatenate(ranks).astype(np.float64)
    keys = id_pairs(np.concatenate(queries), np.concatenate(docs))
    unique, first, pair = np.unique(keys, return_index=True, return_inverse=True)
    if method == "depth":
        best = np.full(len(unique), np.inf)
        np.minimum.at(best, pair, rank)
        score = -best  # a better (smaller) rank first ...
        second = np.bincount(pair, minlength=len(unique)).astype(np.float64)  # ... then more runs
    else:
        weight = 1.0 / (k + rank) if method == "rrf" else (1 - p) * p ** (rank - 1)
        score = np.bincount(pair, weights=weight, minlength=len(unique))
        second = np.zeros(len(unique))
    fresh = ~np.isin(unique, judged)
    query_of, doc_of = np.concatenate(queries)[first], np.concatenate(docs)[first]
    rows = np.flatnonzero(fresh)
    order = rows[np.lexsort((doc_of[rows], -second[rows], -score[rows], query_of[rows]))]
    query_sorted = query_of[order]
    starts = np.flatnonzero(np.concatenate(([True], query_sorted[1:] != query_sorted[:-1])))
    place = np.arange(len(order)) - np.repeat(starts, np.diff(np.append(starts, len(order)))) + 1
    if budget is not None:
        order, place = order[place <= budget], place[place <= budget]
    shown = -score if method == "depth" else score  # depth: the best rank itself
    return [PoolEntry(id_text(q), p, id_text(d), v) for q, p, d, v in zip(
        query_of[order].tolist(), place.tolist(), doc_of[order].tolist(), shown[order].tolist())]


def pool_lines(entries: Sequence[PoolEntry]) -> str:
    """The pool as a qrels-shaped text: ``query_id priority doc_id -1`` per line. The second column
    (trec_eval's ignored "iteration") is the document's place in its query's list, the fourth the
    label -1, "pooled but not judged": the file can be appended to the qrels as it is, and an
    assessor replaces each -1 with a grade."""
    return "".join(f"{e.query_id} {e.priority} {e.doc_id} -1\n" for e in entries)
