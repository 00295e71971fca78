"""Label-based retrieval metrics: autointent 0.4's 15 functions, same names, same numbers, vectorised.

Here a query is relevant to a candidate through *labels*, not through judgments: a query and the
candidates a retriever returned for it (best first) each carry a class label, and the metrics ask how
early, and how often, the candidates share the query's label. Every function takes
``(query_labels, candidates_labels, k=None)`` and returns a Python float, the mean over queries.

Three forms of each metric (AP, hit rate, precision, nDCG, reciprocal rank):

* plain (``retrieval_map``, ...): multiclass. ``query_labels`` holds one int per query, shape
  ``(n_queries,)``; ``candidates_labels`` one int per candidate, ``(n_queries, n_candidates)``.
  A candidate is relevant when its label equals the query's.
* ``_intersecting``: multilabel. Labels are binary vectors over ``n_classes`` classes, shapes
  ``(n_queries, n_classes)`` and ``(n_queries, n_candidates, n_classes)``. A candidate is relevant
  when it shares at least one class with the query (nDCG differs, see
  :func:`retrieval_ndcg_intersecting`).
* ``_macro``: multilabel, macro-averaged. Each class in turn is made a multiclass problem with the two
  labels "has the class" / "lacks the class"; the plain metric is computed on it and the per-class
  values are averaged. A candidate that lacks a class the query lacks too counts as relevant there.

The plain forms refuse label vectors and the other two refuse one-int-per-query labels, with an
error that names the form to use: autointent lists the plain forms as its multiclass metrics and the
other two as its multilabel ones; given the other kind of label it raises or returns an accidental
number.

Conventions, as in autointent 0.4:

* ``k`` keeps the top ``min(k, n_candidates)`` candidates; ``k=None`` keeps them all.
* Average precision divides by the relevant candidates found in the top k, not by all the
  query's relevant candidates; 0.0 when none is found.
* Precision divides by ``min(k, n_candidates)``, not by ``k``.
* nDCG uses binary gains and the discount ``1 / log2(rank + 1)``; its ideal ranking puts every
  relevant candidate of the whole list first, so relevant candidates past ``k`` lower it. 0.0 for a
  query without relevant candidates.
* A query whose label is ``None`` is out of scope (OOS) and is left out, with its candidate list.

Where autointent has no answer, the choices made here:

* When no query is left (an empty input, or every label ``None``), :class:`InputFormatError` is
  raised; autointent divides by zero, takes the mean of nothing, or fails on indexing.
* Empty candidate lists score 0.0 in every metric; autointent's precision divides by zero there.

Multilabel vectors are meant to be 0/1 (or booleans). Other integers are not refused: they follow
autointent's arithmetic (a positive dot product for "shares a class", equality per position for
macro averaging and for nDCG_intersecting), and give its numbers.

Malformed input raises :class:`~retrieval_eval.model.InputFormatError` (ragged lists, vectors of
different lengths, ``k < 1``, no in-scope query, the other form's labels) or
:class:`~retrieval_eval.model.InputTypeError` (labels that are not integers, a ``k`` that is not an
int); the message names the function, the first offending query (its index in the input) and the
shape expected.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeAlias

import numpy as np

from ..model import BoolArray, FloatArray, InputFormatError, InputTypeError, IntArray, optional_int_at_least

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

__all__ = [
    "retrieval_hit_rate",
    "retrieval_hit_rate_intersecting",
    "retrieval_hit_rate_macro",
    "retrieval_map",
    "retrieval_map_intersecting",
    "retrieval_map_macro",
    "retrieval_mrr",
    "retrieval_mrr_intersecting",
    "retrieval_mrr_macro",
    "retrieval_ndcg",
    "retrieval_ndcg_intersecting",
    "retrieval_ndcg_macro",
    "retrieval_precision",
    "retrieval_precision_intersecting",
    "retrieval_precision_macro",
]

#: One label per query: an int (multiclass), a 0/1 vector (multilabel) or None (out of scope).
QueryLabels: TypeAlias = "Sequence[Any] | npt.NDArray[Any]"
#: Per query, the labels of its ranked candidates, best first.
CandidatesLabels: TypeAlias = "Sequence[Any] | npt.NDArray[Any]"

#: How a candidate's labels make it relevant to its query (autointent 0.4's rules):
#: "equal"      the same int (multiclass);
#: "share"      a positive dot product of the two label vectors: for 0/1 vectors, a class in common;
#: "pooled"     the dot product of the query's vector with the *sum* of the top-k candidates' vectors is
#:              positive (autointent's hit rate): one pseudo-candidate per query; for 0/1 vectors the
#:              same as "share" holding for some candidate;
#: "agree"      equal in at least one class position, a 0 in both included (autointent's nDCG);
#: "per_class"  equal in each class position on its own (macro averaging): one relevance per class.
_Relation = Literal["equal", "share", "pooled", "agree", "per_class"]

#: Relevance masks, (n_words, n_units) uint16: word w of a unit holds the relevance of ranks 12w to
#: 12w + 11 (0-based), rank r in bit r % 12 (see "Masks and kernels" below).
_Masks: TypeAlias = "npt.NDArray[np.uint16]"
#: Kernel: the masks of the top ``depth`` candidates' relevance, and the depth -> a score per unit.
_Kernel = Callable[[_Masks, int], FloatArray]


# --------------------------------------------------------------------------------------------------
# Masks and kernels
#
# Relevance is packed into masks: for each scoring unit (a query, or in macro form a (class, query)
# pair), one uint16 word per 12 ranks, rank r being bit r % 12 of word r // 12. Each metric adds up
# terms over the relevant ranks, so a word's share of it is tabulated over the 4,096 possible words
# (:func:`_word_tables`), and a kernel does a few table look-ups per word instead of arithmetic per
# rank. ``masks`` is (n_words, n_units); each kernel returns float64 (n_units,).

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


# --------------------------------------------------------------------------------------------------
# Relevance
#
# Relevance is computed rank-major, a block of ranks and queries at a time: (n_ranks, n_queries) or,
# per class, (n_ranks, n_classes, n_queries). Each rank (and class) is then one contiguous row, so the
# reductions over classes and the packing of ranks into mask words run along long rows; per query,
# label vectors are short (10 classes in the benchmark) and NumPy pays its per-row overhead on each.

#: A block holds about ``_CHUNK_BYTES`` of labels, read from memory once and then, rank after rank
#: and class after class, from the CPU cache; its queries' labels span at most ``_CHUNK_SPAN`` of
#: memory: spread over more pages than the TLB covers, every one of those reads would miss it.
_CHUNK_BYTES, _CHUNK_SPAN, _MIN_QUERIES = 1 << 19, 1 << 22, 256

#: The rows of ``candidates`` to look at: all (None) or an index array.
_Rows: TypeAlias = "IntArray | None"


def _chunks(n: int, step: int, rows: _Rows = None) -> Iterator[tuple[slice, Any]]:
    """(positions, rows of the candidates) of each chunk of ``step`` of the ``n`` rows looked at.

    Rows given by index are gathered one chunk at a time.
    """
    for start in range(0, n, step):
        chunk = slice(start, start + step)
        yield chunk, (chunk if rows is None else rows[chunk])


def _accumulator(*arrays: npt.NDArray[Any]) -> np.dtype[Any]:
    """The dtype for sums of products: the inputs' type, with small integers widened to 64 bits."""
    dtype = np.result_type(*arrays)
    return np.dtype(np.int64) if dtype.kind in "iu" and dtype.itemsize < 8 else dtype


def _relevance_blocks(
    queries: npt.NDArray[Any], candidates: npt.NDArray[Any], relation: _Relation, rows: _Rows, ranks: slice
) -> Iterator[tuple[slice, slice, Any, BoolArray]]:
    """The relevance of ``candidates[rows]`` at ``ranks`` (a slice of step 1), block by block.

    ``queries`` is (n_queries,) or (n_queries, n_classes), ``candidates`` (n_queries, n_ranks) or
    (n_queries, n_ranks, n_classes). Yields (its ranks, its positions among the rows, its rows of
    ``candidates``, relevance), relevance being (n_ranks, n) or, for "per_class", (n_ranks,
    n_classes, n); its array is reused for the next block.
    """
    n = len(candidates) if rows is None else len(rows)
    ranks = slice(*ranks.indices(candidates.shape[1])[:2])
    rank_bytes = max(1, candidates[:1, :1].nbytes)
    # As many queries as the span allows, and no more than fit with all their ranks, but at least a few
    # hundred (for long lists, then, a block takes some of the ranks): along the queries runs NumPy's
    # inner loop, whose length is what makes the rank-major layout pay.
    needed = _CHUNK_BYTES // max(1, (ranks.stop - ranks.start) * rank_bytes)
    step = max(1, min(_CHUNK_SPAN // max(1, abs(candidates.strides[0])), max(_MIN_QUERIES, needed)))
    ranks_step = max(1, min(_CHUNK_BYTES // (step * rank_bytes), 255))  # counts of < 256 ranks fit in bytes
    dtype = _accumulator(queries, candidates)
    # a block's arrays, reused: its relevance, and for "agree" its per-class equalities
    classes = candidates.shape[2:]
    result = np.empty((ranks_step,) + (classes if relation == "per_class" else ()) + (step,), dtype=bool)
    equal = np.empty((ranks_step,) + classes + (step,), dtype=bool) if relation == "agree" else result
    for chunk, selected in _chunks(n, step, rows):
        labels, block = queries[selected], candidates[selected, ranks]
        if relation == "share":  # einsum is fast on labels in the cache, slow on the strided candidates
            block = np.ascontiguousarray(block)
        for start in range(0, block.shape[1], ranks_step):
            block_ranks = slice(ranks.start + start, ranks.start + min(start + ranks_step, block.shape[1]))
            ranked = block[:, start : start + ranks_step]  # (query, rank) or (query, rank, class)
            relevance = result[: ranked.shape[1], ..., : len(ranked)]
            if relation == "share":  # the dot product of the label vectors
                np.greater(np.einsum("qjc,qc->jq", ranked, labels, dtype=dtype), 0, out=relevance)
            elif relation == "equal":
                np.equal(ranked.T, labels, out=relevance)
            elif relation == "per_class":
                np.equal(ranked.transpose(1, 2, 0), labels.T, out=relevance)
            else:  # "agree": equal in some class. A new array would follow the candidates' query-major
                # layout, which NumPy reduces over the classes label vector by label vector; a
                # rank-major buffer is reduced row by row.
                pairs = equal[: ranked.shape[1], :, : len(ranked)]
                np.equal(ranked.transpose(1, 2, 0), labels.T, out=pairs)
                np.logical_or.reduce(pairs, axis=1, out=relevance)
            yield block_ranks, chunk, selected, relevance


def _masks(
    queries: npt.NDArray[Any],
    candidates: npt.NDArray[Any],
    relation: _Relation,
    rows: _Rows = None,
    ranks: slice | None = None,
    out: _Masks | None = None,
) -> _Masks:
    """The masks of the relevance of ``candidates[rows]`` at ``ranks`` (all by default).

    The masks are (n_words, n_queries) or, for "per_class", (n_words, n_classes, n_queries); the bits
    are or-ed into ``out`` if given, else into new masks.
    """
    n_ranks = candidates.shape[1]
    if out is None:
        classes = (queries.shape[-1],) if relation == "per_class" else ()
        out = np.zeros((-(-n_ranks // _WORD),) + classes + (len(candidates),), dtype=np.uint16)
    blocks = _relevance_blocks(queries, candidates, relation, rows, slice(0, n_ranks) if ranks is None else ranks)
    for block_ranks, _, selected, relevance in blocks:
        for word in range(block_ranks.start // _WORD, -(-block_ranks.stop // _WORD)):  # the words it touches
            low, high = max(block_ranks.start, word * _WORD), min(block_ranks.stop, (word + 1) * _WORD)
            part = relevance[low - block_ranks.start : high - block_ranks.start].view(np.uint8)
            bits = _RANK_BITS[low - word * _WORD : high - word * _WORD]
            out[word, ..., selected] |= np.einsum("j...,j->...", part, bits)  # no uint16 copy of the relevance
    return out


def _pooled_masks(queries: npt.NDArray[Any], candidates: npt.NDArray[Any]) -> _Masks:
    """The masks of the "pooled" relation: one pseudo-candidate, the sum of the candidates' vectors.

    Both sums run along each query's labels, where einsum needs no rank-major layout; it is fast on
    labels in the cache, though, and slow on the strided candidates: it reads compact copies of chunks.
    """
    dtype = _accumulator(queries, candidates)
    hits = np.empty(len(candidates), dtype=np.uint16)
    for chunk, _ in _chunks(len(candidates), max(1, _CHUNK_BYTES // max(1, candidates[:1].nbytes))):
        pooled = np.einsum("qjc->qc", np.ascontiguousarray(candidates[chunk]), dtype=dtype)
        hits[chunk] = np.einsum("qc,qc->q", pooled, queries[chunk], dtype=dtype) > 0
    return hits[None]


def _first_hit_masks(queries: npt.NDArray[Any], candidates: npt.NDArray[Any], relation: _Relation) -> _Masks:
    """As :func:`_masks`, for a metric that only asks for the first relevant candidate (reciprocal rank).

    autointent's loops stop at the first relevant candidate, and so does this: past the first quarter
    of the list, relevance is computed only for the queries without a relevant candidate in it, and
    stays False for the others. (Gathering a query's labels costs more than computing with them: a
    quarter at a time would gather the queries that never find a relevant candidate over and over.)
    """
    n, n_ranks = candidates.shape[:2]
    head = -(-n_ranks // 4)
    masks = _masks(queries, candidates, relation, ranks=slice(0, head))
    rows = np.flatnonzero(~np.logical_or.reduce(masks != 0, axis=0))
    if relation == "share":  # a query without any class shares none with its candidates: skip it
        rows = rows[np.einsum("qc->q", queries[rows] != 0, dtype=np.intp) > 0]  # einsum: short rows
    if head == n_ranks or rows.size == 0:
        return masks
    later = slice(head, n_ranks)
    if rows.size > n // 2:  # gathering most rows costs more than reading them all
        return _masks(queries, candidates, relation, ranks=later, out=masks)
    return _masks(queries, candidates, relation, rows, later, out=masks)


def _is_binary(labels: npt.NDArray[Any]) -> bool:
    """Whether ``labels`` holds only 0 and 1 (or booleans); one reduction over them."""
    if labels.dtype.kind == "b":
        return True
    if not labels.dtype.isnative:
        return False
    return bool(labels.view(f"u{labels.dtype.itemsize}").max(initial=0) <= 1)  # negative ints are huge here


def _compared_count(
    queries: npt.NDArray[Any], candidates: npt.NDArray[Any], relation: _Relation, rows: _Rows, start: int
) -> IntArray:
    """Relevant candidates of ``candidates[rows]`` from rank ``start`` on, per row (and class)."""
    n = len(candidates) if rows is None else len(rows)
    counts = np.zeros((queries.shape[-1], n) if relation == "per_class" else (n,), dtype=np.int64)
    for _, chunk, _, relevance in _relevance_blocks(queries, candidates, relation, rows, slice(start, None)):
        counts[..., chunk] += np.einsum("j...->...", relevance.view(np.uint8))  # a block has < 256 ranks
    return counts


def _count_relevant(
    queries: npt.NDArray[Any], candidates: npt.NDArray[Any], start: int, relation: _Relation, rows: _Rows
) -> IntArray:
    """As :func:`_compared_count`, faster for one label per candidate and for 0/1 labels per class.

    Counts need no rank-major layout: one label per candidate is compared along each query's list.
    0/1 labels are told by one reduction over each chunk of rows; for them, the relevant candidates
    are the 1s for a class the query has and the 0s for one it lacks (none if its label is neither),
    and a sum counts the 1s several times faster than comparisons do, while the chunk is in cache.
    """
    if relation == "agree":
        return _compared_count(queries, candidates, relation, rows, start)
    n, n_ranks = len(candidates) if rows is None else len(rows), candidates.shape[1] - start
    counts = np.empty((queries.shape[-1], n) if relation == "per_class" else (n,), dtype=np.int64)
    for chunk, selected in _chunks(n, max(1, _CHUNK_BYTES // max(1, candidates[:1].nbytes)), rows):
        labels, block = queries[selected], candidates[selected]
        if relation == "equal":  # no rank-major layout needed: compared along each query's list
            equal = block[:, start:] == labels[:, None]
            counts[chunk] = np.einsum("qj->q", equal.view(np.uint8)) if n_ranks < 256 else equal.sum(axis=1)
        elif _is_binary(block):
            ones = np.einsum("qjc->qc", block[:, start:], dtype=np.int64).T
            counts[:, chunk] = np.where(labels.T == 1, ones, np.where(labels.T == 0, n_ranks - ones, 0))
        else:
            counts[:, chunk] = _compared_count(labels, block, relation, None, start)
    return counts


# --------------------------------------------------------------------------------------------------
# Input


def _check_k(k: object, name: str) -> int | None:
    return optional_int_at_least(k, f"{name}: 'k'", 1)


def _length(labels: object, what: str, name: str) -> int:
    try:
        return len(labels)  # type: ignore[arg-type]
    except TypeError:
        raise InputTypeError(
            f"{name}: {what} must be a sequence or an array with one entry per query; "
            f"got {type(labels).__name__}"
        ) from None


def _in_scope(query_labels: QueryLabels) -> IntArray | None:
    """Positions of the queries whose label is not None; None when that is every query."""
    if isinstance(query_labels, np.ndarray) and query_labels.dtype != object:
        return None  # a numeric array cannot hold None
    in_scope = [label is not None for label in query_labels]
    return None if all(in_scope) else np.flatnonzero(in_scope)


def _shape(item: Any) -> tuple[int, ...] | None:
    """The array shape of ``item``, or None if it is ragged."""
    try:
        return tuple(np.shape(item))
    except ValueError:
        return None


def _irregularity(rows: Sequence[Any], positions: IntArray, what: str, name: str) -> InputFormatError:
    """The error for rows that do not stack into one array: the first row of another shape."""
    expected = _shape(rows[0])
    for row, position in zip(rows, positions, strict=True):
        shape = _shape(row)
        shapes = [_shape(entry) for entry in row] if shape is None else []
        bad = next((j for j, entry_shape in enumerate(shapes) if entry_shape != shapes[0]), None)
        if bad is not None:  # ragged inside: label vectors of different lengths
            return InputFormatError(
                f"{name}: query {position}: {what} has label vectors of different shapes "
                f"({shapes[0]} at candidate 0, {shapes[bad]} at candidate {bad}); "
                "every label vector must have shape (n_classes,)"
            )
        if shape is None or shape != expected:
            described = "an irregular shape" if shape is None else f"shape {shape}"
            return InputFormatError(
                f"{name}: query {position}: {what} has {described}, expected {expected} "
                f"like query {positions[0]}: every query needs the same number of candidates "
                "and every label vector the same number of classes"
            )
    return InputFormatError(f"{name}: {what} do not form a regular array")  # pragma: no cover


def _stacked(
    labels: Sequence[Any] | npt.NDArray[Any], kept: IntArray | None, what: str, name: str
) -> npt.NDArray[Any]:
    """The in-scope rows of ``labels`` as one numeric array (dropped rows are not looked at)."""
    if isinstance(labels, np.ndarray) and labels.dtype != object:
        return labels if kept is None else labels[kept]
    rows = list(labels) if kept is None else [labels[i] for i in kept]
    positions = np.arange(len(rows)) if kept is None else kept
    try:
        array = np.asarray(rows)
    except ValueError:  # NumPy refuses nested sequences of different lengths
        raise _irregularity(rows, positions, what, name) from None
    if array.dtype == object:
        # a regular array of Python objects: ints are fine, anything else (None, str, ...) is named
        flat = array.reshape(len(rows), -1)
        for i, row in enumerate(flat):
            for value in row:
                if isinstance(value, np.ndarray):
                    raise _irregularity(rows, positions, what, name)
                if not isinstance(value, numbers.Integral):
                    raise InputTypeError(
                        f"{name}: query {positions[i]}: {what} must be integers; got "
                        f"{type(value).__name__} {value!r}"
                        + (" (None marks an out-of-scope query label, not a candidate)" if value is None else "")
                    )
        array = array.astype(np.int64)
    return array


def _as_integers(array: npt.NDArray[Any], positions: IntArray | None, what: str, name: str) -> npt.NDArray[Any]:
    """``array`` if it holds integers or booleans; whole floats as int64; anything else an error."""
    if array.dtype.kind in "biu":
        return array
    if array.dtype.kind == "f":
        bad = ~(np.abs(array) < 2.0**63) | (array != np.round(array))  # NaN and inf fail the first test
        if not bad.any():
            return array.astype(np.int64)
        row = int(np.flatnonzero(bad.reshape(len(array), -1).any(axis=1))[0])
        position = row if positions is None else positions[row]
        raise InputTypeError(f"{name}: query {position}: {what} must be integers; got a float that is not a whole number in the int64 range")
    raise InputTypeError(f"{name}: {what} must be integers; got an array of dtype {array.dtype}")


def _labels(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, *, name: str, multilabel: bool
) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """The in-scope queries' labels and candidates' labels as arrays, checked.

    Multiclass: integer arrays of shapes (n,) and (n, n_candidates). Multilabel: integer (or bool)
    arrays of shapes (n, n_classes) and (n, n_candidates, n_classes).
    """
    n_queries = _length(query_labels, "query_labels", name)
    n_lists = _length(candidates_labels, "candidates_labels", name)
    if n_lists != n_queries:
        raise InputFormatError(
            f"{name}: {n_queries} query labels but {n_lists} candidate lists; expected one candidate list per query"
        )
    if n_queries == 0:
        raise InputFormatError(f"{name}: no queries; the mean over zero queries is undefined")
    kept = _in_scope(query_labels)
    if kept is not None and kept.size == 0:
        raise InputFormatError(
            f"{name}: all {n_queries} query labels are None (out of scope); "
            "the mean over zero in-scope queries is undefined"
        )
    queries = _as_integers(_stacked(query_labels, kept, "query label", name), kept, "query labels", name)
    candidates = _as_integers(
        _stacked(candidates_labels, kept, "candidates_labels row", name), kept, "candidate labels", name
    )
    n = len(queries)
    first = 0 if kept is None else int(kept[0])
    if not multilabel:
        if queries.ndim != 1:
            raise InputFormatError(
                f"{name} takes multiclass labels: query_labels must have shape (n_queries,), one int per "
                f"query; got shape {queries.shape}. For multilabel vectors use {name}_intersecting or {name}_macro"
            )
        if candidates.ndim != 2 or len(candidates) != n:
            raise InputFormatError(
                f"{name}: query {first}: candidates_labels must have shape (n_queries, n_candidates) = "
                f"({n}, n_candidates), one int per candidate; got shape {candidates.shape}"
            )
        return queries, candidates
    plain = name.rsplit("_", 1)[0]
    if queries.ndim != 2:
        raise InputFormatError(
            f"{name} takes multilabel labels: query_labels must have shape (n_queries, n_classes), one 0/1 "
            f"vector per query; got shape {queries.shape}. For one int per query use {plain}"
        )
    n_classes = queries.shape[1]
    if n_classes == 0:
        raise InputFormatError(f"{name}: query {first}: label vectors must have at least one class; got 0")
    if candidates.ndim == 2 and candidates.shape == (n, 0):  # empty candidate lists
        candidates = candidates.reshape(n, 0, n_classes)
    if candidates.ndim != 3 or candidates.shape[0] != n or candidates.shape[2] != n_classes:
        raise InputFormatError(
            f"{name}: query {first}: candidates_labels must have shape (n_queries, n_candidates, n_classes) = "
            f"({n}, n_candidates, {n_classes}), one 0/1 vector of the query's length per candidate; "
            f"got shape {candidates.shape}"
        )
    return queries, candidates


# --------------------------------------------------------------------------------------------------
# The driver


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


# --------------------------------------------------------------------------------------------------
# The public functions


def retrieval_map(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Mean average precision at k, multiclass.

    For each query, average precision is the mean, over the relevant candidates among the top k, of
    the precision at the rank of each one (relevant candidates up to that rank divided by the rank);
    a query with no relevant candidate in the top k scores 0. The result is the mean over queries.
    A candidate is relevant when its label equals the query's. The average is over the relevant
    candidates *found in the top k*, as in autointent, not over all of the query's relevant ones.

    Parameters
    ----------
    query_labels : sequence of int or None, shape (n_queries,)
        The class of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of int, shape (n_queries, n_candidates)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        MAP@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged candidate lists, label vectors instead of ints, ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_map([1, 2], [[1, 0, 1], [0, 0, 2]])   # ((1/1 + 2/3) / 2 + (1/3) / 1) / 2
    0.5833333333333333
    >>> retrieval_map([1, 2, None], [[1, 0, 1], [0, 0, 2], [5, 5, 5]], k=2)
    0.5
    """
    return _score(query_labels, candidates_labels, k, name="retrieval_map", kernel=_average_precision, relation="equal")


def retrieval_map_intersecting(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Mean average precision at k, multilabel: relevant means sharing at least one class.

    As :func:`retrieval_map`, with a candidate relevant when its 0/1 label vector and the query's
    have a 1 in the same position.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        MAP@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> query = [[1, 1, 0]]
    >>> candidates = [[[0, 0, 1], [0, 1, 1], [1, 0, 0]]]   # relevant at ranks 2 and 3
    >>> retrieval_map_intersecting(query, candidates)      # (1/2 + 2/3) / 2
    0.5833333333333333
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_map_intersecting", kernel=_average_precision, relation="share",
    )


def retrieval_map_macro(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Mean average precision at k, multilabel, macro-averaged over classes.

    For each class, every query and candidate gets the label 1 if it has the class and 0 if not, and
    :func:`retrieval_map` is computed on those labels; the result is the mean over classes. A
    candidate that lacks a class the query also lacks is relevant for that class.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        Macro MAP@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_map_macro([[1, 0]], [[[0, 0], [1, 0]]])  # class 0: 1/2; class 1: (1 + 1) / 2
    0.75
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_map_macro", kernel=_average_precision, relation="per_class",
    )


def retrieval_hit_rate(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Hit rate at k, multiclass: the fraction of queries with a relevant candidate in the top k.

    A candidate is relevant when its label equals the query's.

    Parameters
    ----------
    query_labels : sequence of int or None, shape (n_queries,)
        The class of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of int, shape (n_queries, n_candidates)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        Hit rate@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged candidate lists, label vectors instead of ints, ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_hit_rate([1, 2], [[1, 0, 1], [0, 0, 2]], k=2)   # a hit for the first query only
    0.5
    """
    return _score(query_labels, candidates_labels, k, name="retrieval_hit_rate", kernel=_hit, relation="equal")


def retrieval_hit_rate_intersecting(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Hit rate at k, multilabel: the fraction of queries with a candidate sharing a class in the top k.

    As :func:`retrieval_hit_rate`, with a candidate relevant when its 0/1 label vector and the
    query's have a 1 in the same position. Like autointent, this sums the top-k candidates' vectors
    and takes the dot product of the sum with the query's vector; for 0/1 vectors that is the same
    as asking for one candidate with a class in common.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        Hit rate@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> query = [[1, 1, 0]]
    >>> candidates = [[[0, 0, 1], [0, 1, 1], [1, 0, 0]]]
    >>> retrieval_hit_rate_intersecting(query, candidates, k=1)
    0.0
    >>> retrieval_hit_rate_intersecting(query, candidates, k=2)   # rank 2 shares class 1
    1.0
    """
    return _score(
        query_labels, candidates_labels, k, name="retrieval_hit_rate_intersecting", kernel=_hit, relation="pooled"
    )


def retrieval_hit_rate_macro(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Hit rate at k, multilabel, macro-averaged over classes.

    For each class, every query and candidate gets the label 1 if it has the class and 0 if not, and
    :func:`retrieval_hit_rate` is computed on those labels; the result is the mean over classes. A
    candidate that lacks a class the query also lacks is a hit for that class.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        Macro hit rate@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_hit_rate_macro([[1, 0]], [[[0, 1], [1, 0]]], k=1)   # class 0: miss; class 1: miss
    0.0
    >>> retrieval_hit_rate_macro([[1, 0]], [[[0, 1], [1, 0]]], k=2)   # both classes hit at rank 2
    1.0
    """
    return _score(
        query_labels, candidates_labels, k, name="retrieval_hit_rate_macro", kernel=_hit, relation="per_class"
    )


def retrieval_precision(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Precision at k, multiclass: the mean fraction of relevant candidates among the top k.

    A candidate is relevant when its label equals the query's. The fraction divides by the number of
    candidates looked at, ``min(k, n_candidates)``, as in autointent: a k past the end of the list
    does not lower precision.

    Parameters
    ----------
    query_labels : sequence of int or None, shape (n_queries,)
        The class of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of int, shape (n_queries, n_candidates)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        Precision@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged candidate lists, label vectors instead of ints, ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_precision([1, 2], [[1, 0, 1], [0, 0, 2]])          # (2/3 + 1/3) / 2
    0.5
    >>> retrieval_precision([1, 2], [[1, 0, 1], [0, 0, 2]], k=10)    # still divided by 3, not 10
    0.5
    """
    return _score(
        query_labels, candidates_labels, k, name="retrieval_precision", kernel=_precision, relation="equal"
    )


def retrieval_precision_intersecting(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Precision at k, multilabel: the mean fraction of top-k candidates sharing a class with the query.

    As :func:`retrieval_precision` (divided by ``min(k, n_candidates)``), with a candidate relevant
    when its 0/1 label vector and the query's have a 1 in the same position.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        Precision@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> query = [[1, 1, 0]]
    >>> candidates = [[[0, 0, 1], [0, 1, 1], [1, 0, 0]]]
    >>> retrieval_precision_intersecting(query, candidates, k=2)
    0.5
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_precision_intersecting", kernel=_precision, relation="share",
    )


def retrieval_precision_macro(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Precision at k, multilabel, macro-averaged over classes.

    For each class, every query and candidate gets the label 1 if it has the class and 0 if not, and
    :func:`retrieval_precision` is computed on those labels; the result is the mean over classes. A
    candidate that lacks a class the query also lacks is relevant for that class.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        Macro precision@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_precision_macro([[1, 0]], [[[0, 0], [1, 0]]])   # class 0: 1/2; class 1: 2/2
    0.75
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_precision_macro", kernel=_precision, relation="per_class",
    )


def retrieval_ndcg(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Normalised discounted cumulative gain at k, multiclass.

    A candidate is relevant (gain 1) when its label equals the query's, else gain 0. DCG@k sums, over
    the top k ranks r, gain / log2(r + 1); the ideal DCG@k is the DCG@k of the same candidates with
    the relevant ones moved to the top, so relevant candidates past rank k count in it. nDCG@k is
    DCG@k / ideal DCG@k, and 0 for a query without any relevant candidate. The result is the mean
    over queries.

    Parameters
    ----------
    query_labels : sequence of int or None, shape (n_queries,)
        The class of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of int, shape (n_queries, n_candidates)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        nDCG@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged candidate lists, label vectors instead of ints, ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_ndcg([2], [[0, 2, 2]])            # (1/log2(3) + 1/log2(4)) / (1 + 1/log2(3))
    0.6934264036172708
    >>> retrieval_ndcg([2], [[0, 2, 2]], k=1)       # the ideal top 1 holds a relevant candidate
    0.0
    """
    return _ndcg_score(query_labels, candidates_labels, k, name="retrieval_ndcg", relation="equal")


def retrieval_ndcg_intersecting(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Normalised discounted cumulative gain at k, multilabel, autointent's "intersecting" relevance.

    As :func:`retrieval_ndcg`, but a candidate is relevant when its 0/1 label vector and the query's
    are *equal in at least one position*, a 0 in both included. This is what autointent 0.4
    computes, and it differs from the other ``_intersecting`` metrics, which need a shared 1: with
    more than one class, only a candidate whose vector is the exact complement of the query's is
    not relevant.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        nDCG@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> query = [[1, 0, 0]]
    >>> candidates = [[[0, 1, 1], [0, 1, 0]]]   # the first is the complement; the second agrees on class 2
    >>> retrieval_ndcg_intersecting(query, candidates)   # (1/log2(3)) / 1
    0.6309297535714575
    """
    return _ndcg_score(query_labels, candidates_labels, k, name="retrieval_ndcg_intersecting", relation="agree")


def retrieval_ndcg_macro(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Normalised discounted cumulative gain at k, multilabel, macro-averaged over classes.

    For each class, every query and candidate gets the label 1 if it has the class and 0 if not, and
    :func:`retrieval_ndcg` is computed on those labels; the result is the mean over classes. A
    candidate that lacks a class the query also lacks is relevant for that class.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        Macro nDCG@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> round(retrieval_ndcg_macro([[1, 0]], [[[0, 0], [1, 0]]]), 6)   # class 0: 1/log2(3); class 1: 1
    0.815465
    """
    return _ndcg_score(query_labels, candidates_labels, k, name="retrieval_ndcg_macro", relation="per_class")


def retrieval_mrr(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Mean reciprocal rank at k, multiclass.

    For each query, 1 / the rank of the first relevant candidate in the top k, or 0 if there is none
    there; the result is the mean over queries. A candidate is relevant when its label equals the
    query's.

    Parameters
    ----------
    query_labels : sequence of int or None, shape (n_queries,)
        The class of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of int, shape (n_queries, n_candidates)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        MRR@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged candidate lists, label vectors instead of ints, ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_mrr([1, 2], [[1, 0, 1], [0, 0, 2]])          # (1/1 + 1/3) / 2
    0.6666666666666666
    >>> retrieval_mrr([1, 2], [[1, 0, 1], [0, 0, 2]], k=2)     # (1/1 + 0) / 2
    0.5
    """
    return _score(query_labels, candidates_labels, k, name="retrieval_mrr", kernel=_reciprocal_rank, relation="equal")


def retrieval_mrr_intersecting(
    query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None
) -> float:
    """Mean reciprocal rank at k, multilabel: relevant means sharing at least one class.

    As :func:`retrieval_mrr`, with a candidate relevant when its 0/1 label vector and the query's
    have a 1 in the same position.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        MRR@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> query = [[1, 1, 0]]
    >>> candidates = [[[0, 0, 1], [0, 1, 1], [1, 0, 0]]]
    >>> retrieval_mrr_intersecting(query, candidates)   # first shared class at rank 2
    0.5
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_mrr_intersecting", kernel=_reciprocal_rank, relation="share",
    )


def retrieval_mrr_macro(query_labels: QueryLabels, candidates_labels: CandidatesLabels, k: int | None = None) -> float:
    """Mean reciprocal rank at k, multilabel, macro-averaged over classes.

    For each class, every query and candidate gets the label 1 if it has the class and 0 if not, and
    :func:`retrieval_mrr` is computed on those labels; the result is the mean over classes. A
    candidate that lacks a class the query also lacks is relevant for that class.

    Parameters
    ----------
    query_labels : sequence of 0/1 vectors or None, shape (n_queries, n_classes)
        The classes of each query; ``None`` marks an out-of-scope query, which is left out.
    candidates_labels : array-like of 0/1, shape (n_queries, n_candidates, n_classes)
        The classes of each query's candidates, best first.
    k : int >= 1 or None, default None
        How many top candidates count; None or a k past the end means all of them.

    Returns
    -------
    float
        Macro MRR@k, in [0, 1].

    Raises
    ------
    InputFormatError
        Ragged lists, label vectors of different lengths, one int per query instead of a vector,
        ``k < 1``, or no in-scope query.
    InputTypeError
        Labels that are not integers, or a ``k`` that is not an int.

    Examples
    --------
    >>> retrieval_mrr_macro([[1, 0]], [[[0, 0], [1, 0]]])   # class 0: 1/2; class 1: 1/1
    0.75
    """
    return _score(
        query_labels, candidates_labels, k,
        name="retrieval_mrr_macro", kernel=_reciprocal_rank, relation="per_class",
    )
