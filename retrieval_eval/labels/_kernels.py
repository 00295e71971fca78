"""Masks and kernels: the per-unit scores of each metric, from its relevance packed into words.

Relevance is packed into masks: for each scoring unit (a query, or in macro form a (class, query)
pair), one uint16 word per 12 ranks, rank r being bit r % 12 of word r // 12. Each metric adds up
terms over the relevant ranks, so a word's share of it is tabulated over the 4,096 possible words
(:func:`_word_tables`), and a kernel does a few table look-ups per word instead of arithmetic per
rank. ``masks`` is (n_words, n_units); each kernel returns float64 (n_units,).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

import numpy as np

from ..model import FloatArray

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

#: Relevance masks, (n_words, n_units) uint16: word w of a unit holds the relevance of ranks 12w to
#: 12w + 11 (0-based), rank r in bit r % 12 (see the module docstring).
_Masks: TypeAlias = "npt.NDArray[np.uint16]"
#: Kernel: the masks of the top ``depth`` candidates' relevance, and the depth -> a score per unit.
_Kernel = Callable[[_Masks, int], FloatArray]

#: Ranks per mask word: the usual k = 10 fits in one, and a word's tables stay small (32 KB each).
_WORD = 12
_RANK_BITS = (1 << np.arange(_WORD)).astype(np.uint16)  #: the bit of each rank within its word


class _WordTables(NamedTuple):
    """A word's share of each metric, indexed by the word, for ranks ``offset + 1 .. offset + 12``."""

    popcount: npt.NDArray[np.int32]  #: relevant ranks
    reciprocal_rank: FloatArray  #: 1 / the first relevant rank; 0.0 for an empty word
    inverse_rank: FloatArray  #: sum of 1 / rank over the relevant ranks
    precision_sum: FloatArray  #: sum of (relevant ranks up to this one, in the word) / rank over them
    average_precision: FloatArray  #: precision_sum / popcount: the average precision of a one-word list
    gain: FloatArray  #: sum of 1 / log2(rank + 1) over the relevant ranks


@functools.lru_cache(maxsize=64)  # 180 KB each
def _word_tables(offset: int) -> _WordTables:
    """The tables of the word holding ranks ``offset + 1 .. offset + 12`` (1-based)."""
    size = 1 << _WORD
    popcount = np.zeros(size, dtype=np.int32)
    reciprocal_rank, inverse_rank, precision_sum, gain = (np.zeros(size) for _ in range(4))
    for bit in range(_WORD):  # the words whose highest set bit is ``bit``: a word below, plus one rank
        low, high, rank = 1 << bit, 2 << bit, offset + bit + 1
        reciprocal_rank[low:high] = reciprocal_rank[:low]
        reciprocal_rank[low] = 1.0 / rank  # nothing relevant before this rank
        inverse_rank[low:high] = inverse_rank[:low] + 1.0 / rank
        precision_sum[low:high] = precision_sum[:low] + (popcount[:low] + 1) / rank  # in rank order, as autointent
        gain[low:high] = gain[:low] + 1.0 / np.log2(rank + 1)
        popcount[low:high] = popcount[:low] + 1
    average_precision = precision_sum / np.maximum(popcount, 1)  # 0.0 for an empty word
    return _WordTables(popcount, reciprocal_rank, inverse_rank, precision_sum, average_precision, gain)


def _average_precision(masks: _Masks, depth: int) -> FloatArray:
    """Mean of the precisions at the ranks of the relevant candidates."""
    tables = _word_tables(0)
    if len(masks) == 1:  # up to 12 ranks: tabulated
        return np.asarray(tables.average_precision[masks[0]])
    total, hits = tables.precision_sum[masks[0]], tables.popcount[masks[0]]
    for index in range(1, len(masks)):
        word, tables = masks[index], _word_tables(index * _WORD)
        # a later word's precisions also count the hits before it: hits / rank at each relevant rank
        total += hits * tables.inverse_rank[word] + tables.precision_sum[word]
        hits += tables.popcount[word]
    return np.asarray(total / np.maximum(hits, 1))  # 0.0 when nothing is relevant: the total is 0.0 too


def _hit(masks: _Masks, depth: int) -> FloatArray:
    """1.0 if a candidate is relevant, else 0.0."""
    return np.asarray(np.logical_or.reduce(masks != 0, axis=0), dtype=np.float64)


def _precision(masks: _Masks, depth: int) -> FloatArray:
    """The fraction of relevant candidates among the ``depth`` looked at."""
    relevant = _word_tables(0).popcount[masks[0]]
    for index in range(1, len(masks)):
        relevant += _word_tables(index * _WORD).popcount[masks[index]]
    return np.asarray(relevant / depth, dtype=np.float64)


def _reciprocal_rank(masks: _Masks, depth: int) -> FloatArray:
    """1 / rank of the first relevant candidate; 0.0 if there is none."""
    last = len(masks) - 1
    value = _word_tables(last * _WORD).reciprocal_rank[masks[last]]
    for index in range(last - 1, -1, -1):  # an earlier word with a relevant rank overrides the later ones
        word = masks[index]
        value = np.where(word != 0, _word_tables(index * _WORD).reciprocal_rank[word], value)
    return np.asarray(value, dtype=np.float64)


def _ndcg(masks: _Masks, depth: int, n_relevant: npt.NDArray[Any]) -> FloatArray:
    """DCG of the top candidates over the ideal DCG: ``n_relevant`` relevant candidates on top.

    ``n_relevant`` counts each unit's relevant candidates in the whole list (see :func:`_relevant_count`).
    """
    dcg = _word_tables(0).gain[masks[0]]
    for index in range(1, len(masks)):
        dcg += _word_tables(index * _WORD).gain[masks[index]]
    discount = 1.0 / np.log2(np.arange(2, depth + 2))
    # [r]: the ideal DCG with r relevant candidates on top; [0] is 1.0, not 0.0, so that a unit with
    # nothing relevant (DCG 0.0) scores 0.0
    ideal_dcg = np.concatenate(([1.0], np.cumsum(discount)))
    return np.asarray(dcg / ideal_dcg[np.minimum(n_relevant, depth)], dtype=np.float64)
