"""Precision and recall at rank cutoffs: P, R, R-precision, RR, Success, F1 and interpolated precision.

The kernels' contract and notation (R, NR, n, nrr, rel@k, r_m) are in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.batch import RankedBatch
from ..engine.segments import _offsets_of, safe_div, segment_ids, segment_suffix_max
from ..model import FloatArray, IntArray
from .params import CUTOFF, INT_LIMIT, REL, Param, TrecName
from .registry import measure
from .trec_syntax import TrecFloatList
from .trec_table import (
    P_CUTOFFS,
    RECALL_POINTS,
    RPREC_MULTS,
    SUCCESS_CUTOFFS,
)


def _lround(x: FloatArray) -> IntArray:
    """C's lround for non-negative values: halves round away from zero (Python's round() would not)."""
    rounded = x + 0.5
    np.floor(rounded, out=rounded)
    return rounded.astype(np.int64)


@measure("Rprec", judged_only=True, params={"rel": REL}, aliases=("RPrec",), trec=(TrecName("Rprec"),))
def r_precision(b: RankedBatch, *, rel: int) -> FloatArray:
    """R-precision: rel@R / R, the precision at rank R.

    Ranks beyond the end of the ranking count as non-relevant. R = 0 gives 0.
    """
    R = b.n_relevant(rel)
    return safe_div(b.hits(rel).upto(R), R)


@measure("RR", judged_only=True, params={"k": CUTOFF, "rel": REL}, cutoff="k", aliases=("MRR",), trec=(TrecName("recip_rank"),))
def reciprocal_rank(b: RankedBatch, *, k: int | None, rel: int) -> FloatArray:
    """Reciprocal rank: 1 / r_1, the inverse rank of the first relevant document.

    0 when no relevant document is retrieved (within the top k, with a cutoff).
    """
    hits = b.hits(rel)
    query, rank = hits.query, hits.rank
    first = hits.position == 1  # each query's first hit (a pass over the hits, not over the queries)
    if not first.all():  # (else one hit per query, as in a log: no copies)
        query, rank = query[first], rank[first]
    if k is not None:
        within = rank <= k
        query, rank = query[within], rank[within]
    values = np.zeros(b.n_queries)
    values[query] = 1.0 / rank  # (the int64 ranks are converted to float64 as the division reads them)
    return values


@measure(
    "IPrec", judged_only=True, params={"recall": Param(float, None, "recall level in [0, 1]", minimum=0.0,
                                                                  maximum=1.0), "rel": REL},
    cutoff="recall", cutoff_required=True,
    trec=(TrecName("iprec_at_recall", cutoff=True, defaults=RECALL_POINTS, float_cutoffs=True),),
)
def interpolated_precision(b: RankedBatch, *, recall: float, rel: int) -> FloatArray:
    """Interpolated precision at a recall level: the best precision m / r_m over m >= c.

    c = lround(recall * R), rounding halves away from zero (trec_eval 10; v9 and ireval used
    ceil-like rules, so small R can differ). c = 0 takes the best precision anywhere; c > relevant
    retrieved gives 0. An empty ranking gives 0 (trec_eval prints -nan there).
    """
    # Every recall level reads the same per-query arrays: computed once per batch and rel.
    best_from, start, end, n_relevant, most, active = b._cached(("iprec-parts", rel), lambda: _iprec_parts(b, rel))
    # c = lround(recall * R) and the hits before the c-th (the first that counts) skipped, for each
    # value R takes (0..max R): a small table, read per query in one pass. Past a query's last hit
    # is the 0.0 that ends its hits (fewer than c hits).
    skip_of_r = _lround(np.arange(most + 1, dtype=np.float64) * recall)
    skip_of_r -= 1
    np.maximum(skip_of_r, 0, out=skip_of_r)

    def values() -> FloatArray:
        at = skip_of_r.take(n_relevant)  # in place from here: at 10 M queries each array is 80 MB
        at += start
        np.minimum(at, end, out=at)
        if active is None:
            return best_from.take(at)
        out = np.zeros(b.n_queries)
        out[active] = best_from.take(at)
        return out

    # Recall levels that skip as many hits for every R of the batch give the same values: with the
    # small R of a log (1 or 2 everywhere) most of the 11 levels do. Computed once, copied for each.
    same: FloatArray = b._cached(("iprec-values", rel, skip_of_r.tobytes()), values)
    return same.copy()


#: When fewer than this share of the queries have a relevant hit, IPrec is worked out on those only
#: (the others are 0): a log of sessions has relevant items in few of them.
_IPREC_SUBSET = 0.7


def _iprec_parts(
    b: RankedBatch, rel: int,
) -> tuple[FloatArray, IntArray, IntArray, IntArray, int, IntArray | None]:
    """For :func:`interpolated_precision`: the best precision from each hit on, each query's hits
    followed by a 0.0; where each query's hits start and where its 0.0 is; R and its largest value;
    and the queries these are of (None: all of them; else only the queries with hits)."""
    hits = b.hits(rel)
    count, n_relevant = hits.count, b.n_relevant(rel)
    with_hits = np.flatnonzero(count > 0)  # (several times faster on booleans than on the counts)
    # None when most queries have hits: R is then the batch's own (cached) array, not copied.
    active = None if len(with_hits) >= _IPREC_SUBSET * len(count) else with_hits
    if active is not None:
        count, n_relevant = count[active], n_relevant[active]
    # Each query's hits move up by one slot per query before it (the 0.0s of those queries).
    bounds = _offsets_of(count)
    end = bounds[1:] + np.arange(len(count), dtype=np.int64)
    start = end - count
    best_from = np.zeros(len(hits.row) + len(count))
    slots = np.arange(len(hits.row), dtype=np.int64)
    slots += segment_ids(bounds)  # the hit's query among those kept: the slots it moves up by
    best_from[slots] = segment_suffix_max(hits.position / hits.rank, hits.offsets)
    return best_from, start, end, n_relevant, int(n_relevant.max(initial=0)), active


@measure(
    "P", params={"k": CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True, aliases=("Precision",),
    trec=(TrecName("P", cutoff=True, defaults=P_CUTOFFS),), judged_only=True,
)
def precision(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Precision at k: rel@k / k.

    The denominator is always k: ranks past the end of a short ranking count as non-relevant.
    """
    return b.relevant_at(k, rel) / float(k)


@measure(
    "R", params={"k": CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True, aliases=("Recall",),
    trec=(TrecName("recall", cutoff=True, defaults=P_CUTOFFS),), judged_only=True,
)
def recall(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Recall at k: rel@k / R.

    Relevant documents never retrieved count in R. R = 0 gives 0; a cutoff beyond the ranking counts
    what is there.
    """
    return safe_div(b.relevant_at(k, rel), b.n_relevant(rel))


@measure(
    "Success", judged_only=True, params={"k": CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True, aliases=("HitRate",),
    trec=(TrecName("success", cutoff=True, defaults=SUCCESS_CUTOFFS),),
)
def success(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Success at k: 1 if a relevant document is in the top k, else 0.

    An empty ranking, R = 0 or only unjudged documents in the top k give 0. The mean over queries
    is the fraction of queries answered within k. Recommender-system libraries call it the hit
    rate: ``HitRate@k`` is this measure.
    """
    return (b.relevant_at(k, rel) > 0).astype(np.float64)


@measure(
    "RprecMult",
    params={"mult": Param(float, None, "multiple of R that gives the cutoff", minimum=0.0, maximum=1e6),
            "rel": REL},
    cutoff="mult", cutoff_required=True,
    trec=(TrecName("Rprec_mult", cutoff=True, defaults=RPREC_MULTS, float_cutoffs=True),),
)
def r_precision_multiple(b: RankedBatch, *, mult: float, rel: int) -> FloatArray:
    """Precision at a multiple of R: rel@c / c with c = trunc(mult * R + 0.9).

    Ranks past the end of the ranking count as non-relevant, so c > n gives nrr / c. c = 0 (R = 0,
    or a small multiple) gives 0. The cutoff rule still truncates after adding 0.9, as trec_eval
    10 does for this measure (it switched iprec_at_recall to rounding, not this one).

    Reference: trec_eval ``Rprec_mult``.
    """
    # The cut-off is at most 2**62 (past every ranking), so that the cast to int64 never overflows.
    c = np.minimum(np.floor(mult * b.n_relevant(rel).astype(np.float64) + 0.9), float(INT_LIMIT)).astype(np.int64)
    return safe_div(b.hits(rel).upto(c), c)


@measure(
    "RelP", params={"k": CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True,
    trec=(TrecName("relative_P", cutoff=True, defaults=P_CUTOFFS),),
)
def relative_precision(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Relative precision at k: rel@k / min(k, R), precision against the best achievable at k.

    R = 0 gives 0. Ranks past the end of the ranking count as non-relevant.

    Reference: trec_eval ``relative_P``.
    """
    return safe_div(b.relevant_at(k, rel), np.minimum(k, b.n_relevant(rel)))


def _recall_points(value: Any) -> tuple[Any, ...]:
    """A sequence of recall levels as a tuple; each level is checked by the parameter's ``items``."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"expected a non-empty tuple of recall levels; got {value!r:.100}")
    points = tuple(value)
    if not points:
        raise ValueError(f"expected a non-empty tuple of recall levels; got {value!r:.100}")
    return points


#: One recall level of IPrecAvg: in [0, 1], as IPrec's (a level above 1 was accepted and could
#: overflow the cut-off lround(level * R)).
RECALL_LEVEL = Param(float, None, "recall level in [0, 1]", minimum=0.0, maximum=1.0)


@measure(
    "IPrecAvg",
    params={"points": Param(tuple, RECALL_POINTS, "recall levels whose interpolated precision is averaged",
                            convert=_recall_points, items=RECALL_LEVEL),
            "rel": REL},
    trec=(TrecName("11pt_avg", syntax=TrecFloatList("points")),),
)
def iprec_average(b: RankedBatch, *, points: tuple[float, ...], rel: int) -> FloatArray:
    """Mean interpolated precision over recall levels (default the 11 points 0.0, 0.1, ..., 1.0).

    The mean of IPrec@p over ``points``: the cut-off of each point is lround(p * R), as in
    iprec_at_recall (trec_eval 10). Repeated points count as often as they are given.

    Edge cases: an empty ranking gives 0 (trec_eval gives NaN when n = 0). trec_eval processes the
    points assuming they are given in increasing order; for an unsorted list its value differs,
    ours does not depend on the order.

    Reference: trec_eval ``11pt_avg``.
    """
    total = np.zeros(b.n_queries)
    for point in sorted(points, reverse=True):  # trec_eval adds from the largest point down
        total = total + interpolated_precision.kernel(b, recall=point, rel=rel)
    return total / len(points)


@measure("F1", params={"k": CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True)
def f1_at(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """F1 at k: the harmonic mean of P@k and R@k, 2 * P@k * R@k / (P@k + R@k).

    With P@k = rel@k / k (missing ranks count as non-relevant) and R@k = rel@k / R this is
    2 * rel@k / (k + R), computed in that form.

    Edge cases: rel@k = 0 (both P@k and R@k are 0, including R = 0 and an empty ranking) gives 0.0;
    the denominator k + R is never 0.

    Reference: van Rijsbergen, "Information Retrieval" (1979), F with beta = 1; FLAGR's worked
    example of rank-aggregation metrics.
    """
    return 2.0 * b.relevant_at(k, rel) / (k + b.n_relevant(rel)).astype(np.float64)
