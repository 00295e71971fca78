"""Graded gains: the ``gains`` parameter of the gain-based measures and trec_eval's gain tables.

trec_eval gives every relevance level ``v`` of a query a gain, ``v`` itself unless a ``v=g`` parameter
overrides it. A ranked document with a judged level (>= 0) gains its level's gain; documents the
qrels do not mention, or mention with a negative value, gain 0. The *ideal list* of a query holds the
gain of every non-negative judgment, largest first, and stops before the first gain <= 0.

Everything here is vectorised over a whole :class:`~retrieval_eval.engine.batch.RankedBatch` and cached
on the batch per gain table.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
from attrs import frozen

from ..engine.batch import Hits, RankedBatch
from ..engine.segments import _offsets_of, range_max, safe_div, segment_ids
from ..model import FloatArray, GradeArray, IntArray
from .params import INT_LIMIT, Param

#: The domain of one custom gain (checked by :meth:`Param.check`, as every measure parameter).
GAIN_VALUE = Param(float, None, "the gain of a relevance level")


class Gains(Mapping[int, float]):
    """An immutable, hashable ``{level: gain}`` table (trec_eval's ``level=gain`` parameters).

    Levels are integers >= 0; gains are finite numbers within 2**63 of 0 (``params.FLOAT_LIMIT``,
    as large as a judgment can be, so that no sum of gains overflows). Levels not listed keep their own value as
    gain. The repr is a dict literal, so ``nDCG(gains={1: 3, 2: 9})`` round-trips through ``parse``.

    Examples
    --------
    >>> g = Gains({2: 9, 1: 3.0})
    >>> g, g[2], hash(g) == hash(Gains([(1, 3), (2, 9)]))
    ({1: 3, 2: 9}, 9, True)
    """

    __slots__ = ("_items",)
    _items: tuple[tuple[int, float], ...]  # set once in __init__ (through object.__setattr__)

    def __init__(self, pairs: Mapping[int, float] | Iterable[tuple[int, float]] = ()) -> None:
        items = list(pairs.items()) if isinstance(pairs, Mapping) else [tuple(p) for p in pairs]
        table: dict[int, float] = {}
        for item in items:
            if len(item) != 2:
                raise ValueError(f"gains must be (level, gain) pairs; got {item!r}")
            level, gain = item
            if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= INT_LIMIT:
                raise ValueError(f"gain levels must be integers >= 0 and at most 2**62; got {level!r:.100}")
            if isinstance(gain, bool) or not isinstance(gain, (int, float, np.integer, np.floating)):
                raise ValueError(f"gains must be numbers; got {gain!r} for level {level}")
            # The one parameter check: a finite gain within 2**63 of 0, as large as a judgment can be.
            gain = GAIN_VALUE.check("gains", f"gain of level {level}", gain, allow_none=False)
            if int(level) in table:
                raise ValueError(f"gain level {int(level)} given twice")
            gain = float(gain)
            table[int(level)] = int(gain) if gain.is_integer() else gain  # 3.0 prints as 3
        object.__setattr__(self, "_items", tuple(sorted(table.items())))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Gains is immutable")

    def __reduce__(self) -> tuple[type[Gains], tuple[tuple[tuple[int, float], ...]]]:
        return (Gains, (self._items,))  # pickle and copy through the constructor

    def __getitem__(self, level: int) -> float:
        for key, gain in self._items:
            if key == level:
                return gain
        raise KeyError(level)

    def __iter__(self) -> Iterator[int]:
        return (level for level, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Gains):
            return self._items == other._items
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{level!r}: {gain!r}" for level, gain in self._items) + "}"

    @classmethod
    def coerce(cls, value: Any) -> Gains | None:
        """A :class:`Gains` from a mapping or (level, gain) pairs; None (level = gain) when empty."""
        if value is None or isinstance(value, Gains):
            return value or None
        if isinstance(value, (str, bytes)):
            raise ValueError(f"gains must be a mapping {{level: gain}}; got {value!r}")
        return cls(value) or None


def level_gains(labels: GradeArray, gains: Gains | None) -> FloatArray:
    """Gain of each label: its custom gain, or the level itself; 0.0 for negative labels (unjudged).

    A float grade that is not integral (2.5) is no level of the table: it gains itself."""
    out = labels.astype(np.float64)
    np.maximum(out, 0.0, out=out)  # in place: one array of 10 M gains in a log, not three
    for level, gain in (gains or {}).items():
        out[labels == level] = gain
    return out


def gain_hits(b: RankedBatch, gains: Gains | None) -> tuple[Hits, FloatArray]:
    """The ranked rows with a non-zero gain, and their gains (every other row gains 0).

    Only judged rows can gain anything, and with level 0 gaining 0 (unless a custom gain says
    otherwise) only the rows judged >= 1: far fewer than the ranked rows.
    """

    def compute() -> tuple[Hits, FloatArray]:
        if gains is None and not b.float_grades:  # integer grades gaining themselves: the rows >= 1, never 0
            hits = b.hits(1)
            return hits, b.labels[hits.row].astype(np.float64)  # (level_gains of grades >= 1)
        custom: Mapping[int, float] = gains or {}  # typed, so that an empty dict accepts .get(0, 0)
        level0 = custom.get(0, 0)
        hits = b.hits(0) if level0 != 0 else b.hits_above(0)  # (a float grade 0.5 gains 0.5)
        gain = level_gains(b.labels[hits.row], gains)
        keep = gain != 0
        if not keep.all():
            hits, gain = hits.where(keep), gain[keep]
        return hits, gain

    return b._cached(("gain-hits", gains), compute)


@frozen
class IdealList:
    """Per query, the positive gains of its judgments sorted descending (flat, segmented).

    ``gain`` (n_ideal,) holds the gains, ``offsets`` (n_queries + 1,) the segment bounds,
    ``position`` (n_ideal,) the 1-based positions and ``segment`` (n_ideal,) the query index of
    each entry; :attr:`length` (n_queries,) gives the list lengths m.
    """

    gain: FloatArray
    offsets: IntArray
    position: IntArray
    segment: IntArray

    @property
    def length(self) -> IntArray:
        """The list length m of each query (made when asked: only a few measures need it)."""
        return np.diff(self.offsets)

    def prefix(self, cumulative: FloatArray, upto: IntArray, segment: IntArray) -> FloatArray:
        """``cumulative`` (a per-entry running sum) read at positions ``upto`` (1-based; 0 gives 0.0)."""
        out = np.zeros(len(upto))
        has = upto > 0
        out[has] = cumulative[self.offsets[segment[has]] + upto[has] - 1]
        return out


def ideal_list(b: RankedBatch, gains: Gains | None) -> IdealList:
    """The ideal list of every query for ``gains`` (cached on the batch)."""

    def compute() -> IdealList:
        # Negative values gain 0.0, so keeping the positive gains drops them too. When every judgment
        # gains (binary qrels, logs), the judged rows' query index is the list's: shared, not copied.
        if b.n_queries == 1:  # one query (RetrievalEvaluator): the same list, without counts and indexes
            grades = b.judged_relevance
            if gains is None and not b.float_grades:  # the positive integer grades gain themselves
                return _one_ideal_list(grades[grades > 0].astype(np.float64))
            gain = level_gains(grades, gains)
            return _one_ideal_list(gain[gain > 0])
        gain = level_gains(b.judged_relevance, gains)
        positive = gain > 0
        if bool(positive.all()):
            seg = b.judged_segment
            offsets = b.judged_offsets
        else:  # the positive ones, counted per query (on robust, without an index of every judgment)
            gain = gain[positive]
            # With level gains the positive ones are those >= 1: R at 1, which most batches have already
            # (but for float grades: 0.5 is positive).
            by_level = gains is None and not b.float_grades
            offsets = _offsets_of(b.n_relevant(1) if by_level else b.judged_count(positive))
            seg = segment_ids(offsets)
        del positive
        if not bool(np.all((seg[1:] != seg[:-1]) | (gain[1:] <= gain[:-1]))):  # else each query's are in order
            order = np.lexsort((-gain, seg))
            seg, gain = seg[order], gain[order]
        position = np.arange(1, len(seg) + 1, dtype=np.int64)  # in place below: 10 M entries in a log
        position -= offsets.take(seg)
        return IdealList(gain, offsets, position, seg)

    return b._cached(("ideal-gains", gains), compute)


def _one_ideal_list(gain: FloatArray) -> IdealList:
    """The ideal list of a batch of one query whose positive gains are ``gain`` (a new array, sorted
    here in place): what :func:`ideal_list` makes of many queries (the same list, with the query key
    constant)."""
    # Largest first. The gains are finite and positive, so equal gains are the same number and any
    # sort gives the stable sort's list: one sort costs less than checking the order first.
    gain.sort()
    gain = gain[::-1]
    m = len(gain)
    return IdealList(gain, np.array([0, m], dtype=np.int64), np.arange(1, m + 1, dtype=np.int64),
                     np.zeros(m, dtype=np.int64))


def segment_cumsum(values: FloatArray, offsets: IntArray) -> FloatArray:
    """Running sum of ``values`` within each segment (inclusive), for every row.

    Each segment is summed on its own, in row order from its first row: the values are exactly a
    sequential per-query sum (trec_eval's), whatever other queries the batch holds. (A running sum
    over the whole batch minus the sum before each segment differs in the last bits, and by how
    much depends on the queries before.) Segments of equal length are stacked into one matrix and
    summed along its rows: one ``np.cumsum`` per distinct length, no loop over queries.
    """
    out = np.empty(len(values), dtype=np.float64)
    if len(values) == 0:
        return out
    values = np.asarray(values, dtype=np.float64)
    starts, lengths = offsets[:-1], np.diff(offsets)
    by_length = np.argsort(lengths, kind="stable")
    for group in np.split(by_length, np.flatnonzero(np.diff(lengths[by_length])) + 1):
        length = int(lengths[group[0]])
        if length == 0:
            continue
        first = starts[group]
        if len(group) == 1 or bool(np.all(np.diff(first) == length)):  # side by side: a view, no gather
            lo, hi = int(first[0]), int(first[0]) + len(group) * length
            out[lo:hi] = np.cumsum(values[lo:hi].reshape(len(group), length), axis=1).ravel()
        else:
            rows = first[:, None] + np.arange(length)
            out[rows] = np.cumsum(values[rows], axis=1)
    return out


def level_range(b: RankedBatch, gains: Gains | None) -> tuple[FloatArray, FloatArray]:
    """(min, max) per query over the query's gain table, as trec_eval builds it.

    The table holds one entry per level 0 .. L-1 (L = 1 + the largest non-negative judgment of the
    query), with the custom gain where one is given, plus an entry for every custom level even
    when the query has no judgment at that level. A query without any entry gets (0, 0). With float
    grades, each grade that is not integral is an entry too, its own gain (levels run to its floor).
    """
    n = b.n_queries
    judged = np.where(b.judged_relevance >= 0, b.judged_relevance, -1).astype(np.float64)
    levels = range_max(judged, b.judged_offsets[:-1], b.judged_offsets[1:], empty=-1.0).astype(np.int64) + 1
    custom = sorted((gains or {}).items())
    # Lowest and highest level in 0..L-1 that no custom gain overrides (their gain is the level).
    low = np.zeros(n, dtype=np.int64)
    for level, _ in custom:
        low = np.where(low == level, low + 1, low)
    high = levels - 1
    for level, _ in reversed(custom):
        high = np.where(high == level, high - 1, high)
    has_default = low < levels
    lo = np.where(has_default, low, np.inf).astype(np.float64)
    hi = np.where(has_default, high, -np.inf).astype(np.float64)
    if custom:
        values = [gain for _, gain in custom]
        lo = np.minimum(lo, min(values))
        hi = np.maximum(hi, max(values))
    if b.float_grades:  # a grade that is not integral (2.5) is no level: it gains itself, and widens the range
        starts, ends = b.judged_offsets[:-1], b.judged_offsets[1:]
        fraction = (judged >= 0) & (judged != np.floor(judged))
        hi = np.maximum(hi, range_max(np.where(fraction, judged, -np.inf), starts, ends, empty=-np.inf))
        lo = np.minimum(lo, -range_max(np.where(fraction, -judged, -np.inf), starts, ends, empty=-np.inf))
    empty = ~np.isfinite(lo)
    lo[empty] = 0.0
    hi[empty] = 0.0
    return lo, hi


def unit_gains(b: RankedBatch, gains: Gains | None) -> tuple[Hits, FloatArray]:
    """Gains of the judged rows rescaled per query to [0, 1] when any table gain is < 0 or > 1 (trec_eval rbp).

    (g - min) / (max - min) over the query's gain table; a degenerate table (max == min) gives 0.
    Returns the judged rows and their gains: unjudged documents gain 0.
    """
    lo, hi = level_range(b, gains)
    hits = b.hits(0)
    gain = level_gains(b.labels[hits.row], gains)
    rescale = (lo < 0) | (hi > 1)
    seg = hits.query
    scaled = safe_div(gain - lo[seg], (hi - lo)[seg])
    return hits, np.where(rescale[seg], scaled, gain)


#: The ``gains`` parameter shared by the gain-based measures (trec_eval ``-m ndcg.1=3,2=9``).
GAINS_PARAM = Param(
    Gains, None, "custom gain per relevance level, {level: gain}; unlisted levels gain their own value",
    convert=Gains.coerce,
)

#: How a gain enters DCG: as is ('log2', trec_eval's linear gain) or as 2^gain - 1 ('exp-log2',
#: Burges et al., gdeval, ireval, FLAGR); the discount is 1 / log2(rank + 1) either way.
DCG_STYLE = Param(str, "log2", "gain: 'log2' linear (trec_eval) or 'exp-log2' 2^rel-1", choices=("log2", "exp-log2"))


#: The largest gain whose 'exp-log2' gain 2^gain - 1 is used as it is (see :func:`exp_scales`): far
#: below 1024, where 2^gain overflows float64, and far above any grade scale in use (0..4, 0..10).
EXP_UNSCALED = 512.0


def styled(gain: FloatArray, dcg: str, scale: FloatArray | None = None) -> FloatArray:
    """Apply the DCG style to gains: unchanged for 'log2', 2^gain - 1 for 'exp-log2' (0 stays 0).

    ``scale`` (one exponent per gain, from :func:`exp_scales`) gives 'exp-log2' gains times
    2^-scale, computed as 2^(gain - scale) - 2^-scale so that no gain overflows; a scale of 0
    leaves a gain as it is, to the bit. Unscaled, a gain of 1024 or more is +inf (2^gain - 1 is
    beyond float64), without a warning.
    """
    if dcg != "exp-log2":
        return gain
    if scale is None:
        with np.errstate(over="ignore"):
            return np.exp2(gain) - 1.0
    return np.exp2(gain - scale) - np.exp2(-scale)


def exp_scales(b: RankedBatch, gains: Gains | None) -> FloatArray | None:
    """Per query, the exponent s that the query's 'exp-log2' gains are divided by (as 2^s) so that
    none overflows: its largest gain when that is above :data:`EXP_UNSCALED`, else 0. None when no
    query needs one (every grade scale in use).

    nDCG is a ratio of two sums of one query's gains, so dividing every gain of the query by the
    same power of two leaves it unchanged: 2^(g - s) - 2^-s is at most 1 for every gain g <= s.
    """
    largest_level = float(b.judged_relevance.max(initial=0))
    largest_custom = max((float(gain) for gain in (gains or {}).values()), default=0.0)
    if max(largest_level, largest_custom) <= EXP_UNSCALED:
        return None
    ideal = ideal_list(b, gains)
    top = np.zeros(b.n_queries)
    has = ideal.length > 0
    top[has] = ideal.gain[ideal.offsets[:-1][has]]  # each query's list is sorted largest first
    return np.where(top > EXP_UNSCALED, top, 0.0)
