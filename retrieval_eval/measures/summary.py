"""Summing per-query values the way trec_eval does: left to right, query after query.

:class:`Summary` is a measure's summary over queries that come in blocks; :func:`sequential_sum`,
:func:`sequential_sums` and :func:`geometric_mean` give the same bits as trec_eval's own loops.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
from attrs import define, field

from ..model import FloatArray
from .params import MeasureError

if TYPE_CHECKING:
    from .registry import MeasureDef

Aggregate = Literal["mean", "sum", "gmean", "weighted", "pooled"]

#: trec_eval's floor for geometric means (MIN_GEO_MEAN): log(max(x, 1e-5)).
MIN_GEO_MEAN = 1e-5


def sequential_mean(values: FloatArray) -> float:
    """The mean with the sum taken left to right, as trec_eval adds query after query.

    NumPy's ``mean`` sums pairwise, which can differ in the last bit, and so in the printed fourth
    decimal when the mean lies halfway between two (tests/test_vs_trec_eval_c.py found such lines).
    """
    total = sequential_sum(values)
    return 0.0 if total is None else float(total) / len(values)


def sequential_sum(values: FloatArray, start: float | None = None) -> float | None:
    """``start + values[0] + values[1] + ...`` added left to right; None for no values and no start.

    With ``start`` None the sum begins at ``values[0]`` itself (not at ``0.0 + values[0]``, which
    would turn a sum of -0.0 into 0.0). Summing a long array in parts, each part's sum the next
    one's ``start``, makes exactly the additions of one pass: the running sums of
    :class:`Summary` rely on that.
    """
    if len(values) == 0:
        return start
    # One chunk-sized buffer for every running sum: no array as long as the values, none made per chunk.
    buffer = np.empty(min(len(values), _SUM_CHUNK) + 1)
    for begin in range(0, len(values), _SUM_CHUNK):
        chunk = values[begin : begin + _SUM_CHUNK]
        if start is None:
            start = float(np.cumsum(chunk, out=buffer[: len(chunk)])[-1])
        else:  # the chunk's sum starts from the sum so far
            part = buffer[: len(chunk) + 1]
            part[0] = start
            part[1:] = chunk
            start = float(np.cumsum(part, out=part)[-1])
    return start


#: Values summed at a time by :func:`sequential_sum`; each chunk starts from the sum so far, so the
#: additions are exactly those of one pass from left to right.
_SUM_CHUNK = 1 << 16


def sequential_sums(columns: list[FloatArray], starts: list[float | None]) -> list[float | None]:
    """:func:`sequential_sum` of each of ``columns`` (arrays of one length) from its start, all at once.

    A sum left to right is a chain of dependent additions, and NumPy's ``cumsum`` walks it one
    value at a time (some 2.4 ns a value here). Side by side, as the columns of a row-major array
    of rows of values, ``np.add.reduce(axis=0)`` adds row after row: every column is still summed
    in its order, one addition per value, but a row's additions are one vectorised step. The
    additions then take a third of the time, and the copy into rows most of what is left: 18.8 ms
    against 25.5 ms for the 30 official measures of 262,144 queries. tests/test_blocks.py checks the
    bits against Python's own left-to-right loop. A start of None is -0.0, the one number whose sum
    with any x is x; the reduction starts from it too (from its identity, +0.0, a column of -0.0
    would sum to 0.0, where :func:`sequential_sum` gives -0.0).
    """
    if len(columns) < 2:  # one column would be reduced along its own axis: pairwise, another order
        return [sequential_sum(column, start) for column, start in zip(columns, starts)]
    n = len(columns[0])
    if n == 0:
        return list(starts)
    rows = np.empty((min(n, _ROWS_CHUNK) + 1, len(columns)))
    totals = np.array([-0.0 if start is None else start for start in starts])
    for begin in range(0, n, _ROWS_CHUNK):
        part = rows[: min(_ROWS_CHUNK, n - begin) + 1]
        part[0] = totals  # each chunk's rows start from the sums so far
        for j, column in enumerate(columns):
            part[1:, j] = column[begin : begin + len(part) - 1]
        totals = np.add.reduce(part, axis=0, initial=-0.0)
    return totals.tolist()  # type: ignore[no-any-return]


#: Rows of values summed at a time by :func:`sequential_sums` (chunks that stay in the CPU's cache).
_ROWS_CHUNK = 4096


def geometric_mean(values: FloatArray) -> float:
    """trec_eval's geometric mean: exp(mean(log(max(x, 1e-5)))); 0.0 for no values."""
    if len(values) == 0:
        return 0.0
    return math.exp(sequential_mean(_logs(values)))


def _logs(values: FloatArray) -> FloatArray:
    """What a geometric mean averages: log(max(x, 1e-5)), trec_eval's floor (MIN_GEO_MEAN)."""
    return np.log(np.maximum(values, MIN_GEO_MEAN))


@define
class Summary:
    """A measure's summary over queries that come in blocks, in query order: :meth:`add` each block's
    values (and weights), then take :meth:`value`.

    The value is that of :meth:`MeasureDef.aggregate_values` over all the values at once, to the last
    bit: a mean or geometric mean carries its left-to-right sum from block to block; a sum of counts
    (an ``integer`` measure) carries its exact integer sum, which any order of float additions gives
    too (the counts stay far below 2**53); any other sum, and a weighted mean, keeps the values (8
    bytes a query) and adds them up at the end, as one array.
    """

    definition: MeasureDef
    count: int = 0  #: queries added so far
    total: float | None = None  #: the running sum of a mean or geometric mean (None before any value)
    whole_total: int = 0  #: the running sum of a sum of counts
    parts: list[FloatArray] = field(factory=list)  #: the values of a sum or weighted mean, block by block
    weight_parts: list[FloatArray] = field(factory=list)
    shares: list[Any] = field(factory=list)  #: a pooled measure's shares, block by block

    def __attrs_post_init__(self) -> None:
        if self.definition.text:
            raise MeasureError(f"{self.definition.name} is a per-query text measure; it has no summary value")

    def add(self, values: FloatArray, weights: FloatArray | None = None, share: Any = None) -> None:
        """The next block's per-query values (and, for a weighted measure, weights; for a pooled one, its share).

        A value that is not a finite number raises :class:`MeasureError` naming the measure and the
        query's position: a summary of NaN or an infinity means nothing.
        """
        self._check_finite(values)
        self.count += len(values)
        if self.definition.aggregate == "pooled":
            if share is not None:
                self.shares.append(share)
        elif self._running:
            self.total = sequential_sum(self._terms(values), self.total)
        elif self.definition.aggregate == "sum" and self.definition.integer:
            counts = values.astype(np.int64)
            if not np.array_equal(counts, values):  # a count that is not a whole number: a kernel's bug
                raise MeasureError(f"{self.definition.name} is a count, but some value is not a whole number")
            self.whole_total += int(counts.sum())
        else:
            self.parts.append(values)
            if weights is not None:
                self.weight_parts.append(weights)

    @staticmethod
    def add_all(summaries: list[Summary], values: list[FloatArray], weights: list[FloatArray | None],
                shares: list[Any] | None = None) -> None:
        """:meth:`add` the next block's ``values[i]`` (and ``weights[i]``) to each ``summaries[i]``,
        the running sums of the means and geometric means side by side (:func:`sequential_sums`):
        the same sums, in about 0.7 of the time.

        A mean whose running sum stays finite needs no look at its values: a NaN or an infinity in
        them would have made the sum NaN or infinite for good. Only the other blocks are checked
        value by value, in the order of ``summaries``, so the error raised is the one :meth:`add`
        would raise (that check took a tenth of the summaries' time at a million queries)."""
        running = [i for i, summary in enumerate(summaries) if summary._running]
        if len(running) < 2:
            running = []
        columns = [summaries[i]._terms(values[i]) for i in running]
        totals = dict(zip(running, sequential_sums(columns, [summaries[i].total for i in running])))
        for i, (summary, block) in enumerate(zip(summaries, values)):
            total = totals.get(i)
            # (Not a geometric mean's: its floor turns -inf into log(1e-5), a finite term.)
            if total is None or summary.definition.aggregate != "mean" or not math.isfinite(total):
                summary._check_finite(block)
        for i, total in totals.items():
            summaries[i].count += len(values[i])
            summaries[i].total = total
        added = set(running)
        for i, summary in enumerate(summaries):
            if i not in added:
                summary.add(values[i], weights[i], None if shares is None else shares[i])

    def _check_finite(self, values: FloatArray) -> None:
        finite = np.isfinite(values)
        if not finite.all():
            at = int(np.argmin(finite))
            raise MeasureError(
                f"{self.definition.name}: the value of query number {self.count + at + 1} (in query order) is "
                f"{float(values[at])!r}, not a finite number; expected a finite value for every query")

    @property
    def _running(self) -> bool:
        """Whether the summary carries a running sum (of :meth:`_terms`): a mean or geometric mean."""
        return self.definition.aggregate in ("mean", "gmean")

    def _terms(self, values: FloatArray) -> FloatArray:
        """What the running sum adds up: the values of a mean, their logs for a geometric mean."""
        return _logs(values) if self.definition.aggregate == "gmean" else values

    def value(self) -> float:
        """The summary of every value added."""
        aggregate = self.definition.aggregate
        if aggregate == "sum":
            return float(self.whole_total) if self.definition.integer else float(_joined(self.parts).sum())
        if self.count == 0:
            return 0.0
        if aggregate == "pooled":
            if not self.shares:
                raise MeasureError(f"{self.definition.name} pools the rows of every query: its summary needs "
                                   "them, not per-query values (SetEvaluator.aggregate computes it)")
            return cast("Callable[[list[Any]], float]", self.definition.pooled)(self.shares)
        if aggregate == "weighted":
            if len(self.weight_parts) != len(self.parts):
                raise MeasureError(f"{self.definition.name} is summarised by a weighted mean: pass its weights")
            weights = _joined(self.weight_parts)
            total = float(weights.sum())
            return float((weights * _joined(self.parts)).sum()) / total if total > 0 else 0.0
        assert self.total is not None  # count > 0: some value was added
        mean = self.total / self.count
        return math.exp(mean) if aggregate == "gmean" else mean


def _joined(parts: list[FloatArray]) -> FloatArray:
    """The blocks' values as one array (the one block itself, uncopied, when there is one)."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0)

