"""The driver every public function calls: check the input, compute relevance, run a kernel, average."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..model import FloatArray, IntArray
from ._inputs import CandidatesLabels, QueryLabels, _check_k, _labels
from ._kernels import _WORD, _Kernel, _Masks, _ndcg, _reciprocal_rank, _word_tables
from ._relevance import _count_relevant, _first_hit_masks, _masks, _pooled_masks, _Relation

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt



def _prepare(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: object, *, name: str, relation: _Relation
) -> tuple[npt.NDArray[Any], npt.NDArray[Any], int]:
    """The checked labels of the in-scope queries and their candidates, and the depth min(k, n_candidates)."""
    cutoff = _check_k(k, name)
    queries, candidates = _labels(query_labels, candidates_labels, name=name, multilabel=relation != "equal")
    n_candidates = candidates.shape[1]
    return queries, candidates, n_candidates if cutoff is None else min(cutoff, n_candidates)


def _mean(scores: FloatArray, n_queries: int) -> float:
    """The mean over queries; in macro form, units (n_classes, n_queries), the mean per class, then over classes."""
    return float(scores.reshape(-1, n_queries).mean(axis=1).mean())


def _score(
    query_labels: QueryLabels,
    candidates_labels: CandidatesLabels,
    k: object,
    *,
    name: str,
    kernel: _Kernel,
    relation: _Relation,
) -> float:
    """Check the input, drop OOS queries, compute the relevance of the top k and the kernel, average."""
    queries, candidates, depth = _prepare(query_labels, candidates_labels, k, name=name, relation=relation)
    if depth == 0:  # empty candidate lists
        return 0.0
    top = candidates[:, :depth]
    if relation == "pooled":
        masks = _pooled_masks(queries, top)
    elif kernel is _reciprocal_rank and relation == "share":
        # (With one label per candidate, reading the whole top k costs little more than the gathering
        # that skips part of it; per class, a query is settled only once each of its classes is.)
        masks = _first_hit_masks(queries, top, relation)
    else:
        masks = _masks(queries, top, relation)
    return _mean(kernel(masks.reshape(len(masks), -1), depth), len(queries))


def _ndcg_score(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: object, *, name: str, relation: _Relation
) -> float:
    """As :func:`_score` for nDCG, whose ideal ranking also counts the relevant candidates past k."""
    queries, candidates, depth = _prepare(query_labels, candidates_labels, k, name=name, relation=relation)
    if depth == 0:
        return 0.0
    masks = _masks(queries, candidates[:, :depth], relation)
    n_relevant = _relevant_count(queries, candidates, masks, depth, relation)
    return _mean(_ndcg(masks.reshape(len(masks), -1), depth, n_relevant.reshape(-1)), len(queries))


def _relevant_count(
    queries: npt.NDArray[Any], candidates: npt.NDArray[Any], masks: _Masks, depth: int, relation: _Relation
) -> IntArray:
    """Relevant candidates in the whole list, per unit, exact up to ``depth``, that of ``masks``.

    The ideal DCG@k only asks whether a unit has k relevant candidates or fewer, so the candidates
    past k are read only for the queries with fewer than k relevant ones (in some class, in macro
    form) in their top k. Where relevance is dense (nDCG_intersecting's "agree" rule), that skips
    most of the list.
    """
    counted = np.zeros(masks.shape[1:], dtype=np.int64)
    for index, word in enumerate(masks):
        counted += _word_tables(index * _WORD).popcount[word]
    if depth == candidates.shape[1]:
        return counted
    short = counted < depth
    rows = np.flatnonzero(short if short.ndim == 1 else np.logical_or.reduce(short, axis=0))
    if rows.size > len(queries) // 2:  # gathering most rows costs more than reading them all
        counted += _count_relevant(queries, candidates, depth, relation, None)
    elif rows.size:
        counted[..., rows] += _count_relevant(queries, candidates, depth, relation, rows)
    return counted
