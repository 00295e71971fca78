"""Relevance: which candidates are relevant to their query, packed into masks or counted.

Relevance is computed rank-major, a block of ranks and queries at a time: (n_ranks, n_queries) or,
per class, (n_ranks, n_classes, n_queries). Each rank (and class) is then one contiguous row, so the
reductions over classes and the packing of ranks into mask words run along long rows; per query,
label vectors are short (10 classes in the benchmark) and NumPy pays its per-row overhead on each.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np

from ..model import BoolArray, IntArray
from ._kernels import _RANK_BITS, _WORD, _Masks

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

#: How a candidate's labels make it relevant to its query (autointent 0.4's rules):
#: "equal"      the same int (multiclass);
#: "share"      a positive dot product of the two label vectors: for 0/1 vectors, a class in common;
#: "pooled"     the dot product of the query's vector with the *sum* of the top-k candidates' vectors is
#:              positive (autointent's hit rate): one pseudo-candidate per query; for 0/1 vectors the
#:              same as "share" holding for some candidate;
#: "agree"      equal in at least one class position, a 0 in both included (autointent's nDCG);
#: "per_class"  equal in each class position on its own (macro averaging): one relevance per class.
_Relation = Literal["equal", "share", "pooled", "agree", "per_class"]

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
