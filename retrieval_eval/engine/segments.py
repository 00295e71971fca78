"""Segment arithmetic: per-query sums, counts and maxima over flat arrays cut by ``offsets``.

A segment is one query's rows; ``offsets`` (n + 1,) bounds them. Everything here is vectorised over
all segments at once, with no loop over rows or queries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..model import BoolArray, FloatArray, IntArray

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt


def segment_ids(offsets: IntArray) -> IntArray:
    """Query index of every row, for segments given by ``offsets`` (n+1,) -> (offsets[-1],)."""
    n_segments = len(offsets) - 1
    if long_segments(offsets):  # NumPy copies each index along its segment
        return np.repeat(np.arange(n_segments, dtype=np.int64), np.diff(offsets))
    if int(offsets[-1]) == n_segments and bool((offsets[1:] > offsets[:-1]).all()):
        return np.arange(n_segments, dtype=np.int64)  # one row each (a log of one-document sessions)
    # Many short ones (a log of sessions): repeat's per-segment step would cost more than two passes,
    # counting where each segment after the first begins (empty segments begin where the next one
    # does: counted, not marked) and summing those counts up.
    n_rows = int(offsets[-1])
    return np.cumsum(np.bincount(offsets[1:-1], minlength=n_rows + 1)[:n_rows], dtype=np.int64)


#: Average rows per segment above which a step per segment pays (see :func:`long_segments`).
_LONG_SEGMENTS = 8


def segment_sum(values: npt.ArrayLike, segment: IntArray, n: int) -> FloatArray:
    """Sum of ``values`` per segment, accumulated in row order (as trec_eval does); 0.0 when empty."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return np.zeros(n)
    # With float weights bincount returns float64; the stubs type every bincount as intp.
    return np.bincount(segment, weights=values, minlength=n)  # type: ignore[return-value]


def segment_count(mask: BoolArray, segment: IntArray, n: int) -> IntArray:
    """Number of true rows per segment."""
    return np.bincount(segment[mask], minlength=n).astype(np.int64, copy=False)  # intp is int64 on 64-bit


def offsets_count(mask: BoolArray, offsets: IntArray) -> IntArray:
    """Number of true rows per segment, for segments of consecutive rows bounded by ``offsets`` (n + 1,).

    No query index of the rows is needed. Long segments (robust's judgments, over a thousand a query):
    one ``reduceat`` over the segments' starts, several times faster than :func:`segment_count`'s
    selection and ``bincount``. Short ones (see :func:`long_segments`), where ``reduceat`` pays per
    segment: a running count of the true rows, read at the bounds.
    """
    if len(offsets) == 2:  # one segment (a RetrievalEvaluator's query): one count
        return np.array([np.count_nonzero(mask[int(offsets[0]) : int(offsets[1])])], dtype=np.int64)
    if not long_segments(offsets):
        at = true_before(mask).take(offsets)
        return np.subtract(at[1:], at[:-1])  # (the stubs type it as Any)
    out = np.zeros(len(offsets) - 1, dtype=np.int64)
    # reduceat sums from each start to the next one; an empty segment's start equals the next start,
    # so only the non-empty segments are given (each then ends where the next non-empty one starts).
    nonempty = offsets[1:] > offsets[:-1]
    out[nonempty] = np.add.reduceat(mask.view(np.int8), offsets[:-1][nonempty], dtype=np.int64)
    return out


def true_before(mask: BoolArray) -> IntArray:
    """The number of true rows of ``mask`` before each row, and before the end: (len(mask) + 1,),
    starting at 0. Read at two places, it counts the true rows between them."""
    before = np.empty(len(mask) + 1, dtype=np.int64)
    before[0] = 0
    np.cumsum(mask, out=before[1:])
    return before


def long_segments(offsets: IntArray) -> bool:
    """Whether the segments average more than ``_LONG_SEGMENTS`` rows: then a step per segment
    (``repeat``, ``reduceat``) costs less than passes over a query index of the rows."""
    return long_on_average(int(offsets[-1]), len(offsets) - 1)


def long_on_average(n_rows: int, n_segments: int) -> bool:
    """:func:`long_segments` for ``n_rows`` rows in ``n_segments`` segments."""
    return n_rows > _LONG_SEGMENTS * n_segments


def segment_heads(offsets: IntArray, k: int) -> IntArray:
    """Row indices of the first min(k, length) rows of every segment, in row order."""
    lengths = np.minimum(np.diff(offsets), k)
    starts = np.concatenate(([0], np.cumsum(lengths)))
    return np.arange(starts[-1], dtype=np.int64) + np.repeat(offsets[:-1] - starts[:-1], lengths)


def range_max(values: FloatArray, starts: IntArray, ends: IntArray, empty: float = 0.0) -> FloatArray:
    """``max(values[starts[i]:ends[i]])`` for every i; ``empty`` where the range is empty."""
    out = np.full(len(starts), empty, dtype=np.float64)
    nonempty = ends > starts
    if not nonempty.any():
        return out
    # reduceat over interleaved (start, end) pairs; the sentinel lets an end equal len(values).
    padded = np.append(values, empty)
    bounds = np.column_stack((starts[nonempty], ends[nonempty])).ravel()
    out[nonempty] = np.maximum.reduceat(padded, bounds)[::2]
    return out


def segment_suffix_max(values: FloatArray, offsets: IntArray) -> FloatArray:
    """``max(values[i:end])`` for every row i, ``end`` the end of i's segment (``offsets`` (n + 1,)).

    Doubling: after the pass with step s each row holds the maximum of its next 2s rows (within its
    segment), so log2(longest segment) vectorised passes suffice. Maxima are exact, whatever the order.
    """
    out = np.array(values, dtype=np.float64)
    longest = int(np.diff(offsets).max(initial=0))
    if longest <= 1:  # every row is the rest of its segment (one hit per query, in a log)
        return out
    room = offsets[1:].take(segment_ids(offsets)) - np.arange(len(out))  # rows from i to its segment's end
    step = 1
    while step < longest:
        reach = room[:-step] > step  # row i + step is still in row i's segment
        out[:-step] = np.where(reach, np.maximum(out[:-step], out[step:]), out[:-step])
        step *= 2
    return out


def safe_div(num: npt.ArrayLike, den: npt.ArrayLike) -> FloatArray:
    """``num / den`` element-wise, with 0.0 wherever ``den == 0`` (never NaN, never a warning)."""
    num, den = np.asarray(num), np.asarray(den)
    if num.shape == den.shape == (1,):  # one query (RetrievalEvaluator): the quotient of two Python floats
        # costs a fifth of the ufunc machinery below, and is the same IEEE division of the same float64s.
        n, d = float(num[0]), float(den[0])
        return np.array([n / d if d != 0 else 0.0])
    out = np.empty(num.shape if num.shape == den.shape else np.broadcast_shapes(num.shape, den.shape))
    # Integers are converted to float64 as the division reads them (no float copy of a count per
    # query made first): the same quotients as dividing float64 arrays. Every quotient is computed
    # and those by 0 overwritten: a quarter faster than a division masked by ``where``.
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(num, den, out=out, dtype=np.float64)
    np.copyto(out, 0.0, where=den == 0)
    return out


def _offsets_of(lengths: npt.ArrayLike) -> IntArray:
    """Segment bounds (n + 1,) of segments of ``lengths`` (n,): the running sum, written once."""
    lengths = np.asarray(lengths)
    offsets = np.empty(lengths.size + 1, dtype=np.int64)
    offsets[0] = 0
    np.cumsum(lengths, dtype=np.int64, out=offsets[1:])
    return offsets


def _gather_segments(offsets: IntArray, indices: IntArray) -> IntArray:
    """Row indices of the segments ``indices``, concatenated (no loop over rows)."""
    starts = offsets[indices]
    return _block_rows(starts, offsets[indices + 1] - starts)


def _block_rows(starts: IntArray, lengths: IntArray) -> IntArray:
    """Row indices of the blocks of rows ``starts[i]:starts[i] + lengths[i]``, concatenated."""
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - _offsets_of(lengths)[:-1], lengths)
