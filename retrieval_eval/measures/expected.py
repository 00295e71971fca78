"""Expected values over tie orders: the measures of a batch ordered with ``ties="expected"``.

Each tie group (a run of one query's rows with equal scores, :mod:`retrieval_eval.engine.ties`) is
taken in every order with equal chance, and a measure's value is its mean over those orders: the
closed forms of McSherry & Najork ("Computing information retrieval performance measures
efficiently in the presence of tied scores", ECIR 2008), derived here for trec_eval's definitions.

Notation, for a group g: n rows, r of them relevant, t rows of its query ranked above it, c
relevant rows among those t. Its i-th place (rank t + i) holds a relevant document with probability
r / n, whatever the order of the other groups. So:

* a sum over ranks of a document's value times a weight of its rank (rel@k, P@k, R@k, DCG@k,
  Judged@k) has the expected value of the same sum with each value replaced by its group's mean;
* AP: given a relevant document at place i, the other r - 1 relevant ones of the group are spread
  evenly over its n - 1 other places, so (i - 1)(r - 1)/(n - 1) of them are expected above it, and
  E[AP] = (1/R) * sum over rows (r/n) * (c + 1 + (i - 1)(r - 1)/(n - 1)) / (t + i);
* RR and Success depend on the first group with a relevant document: its first i - 1 places are all
  non-relevant with probability S(i - 1) = C(n - r, i - 1) / C(n, i - 1), so the first relevant
  document is at place i with probability S(i - 1) * r / (n - i + 1); E[RR@k] sums that over
  t + i <= k divided by t + i, and Success@k = 1 - S(k - t) when the group straddles k.

A measure without such a form (bpref, infAP, ERR, RBP, ...) is refused with the reason; measures
that do not depend on the order (the counts, the set measures, IDCG) are computed as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.batch import RankedBatch
from ..engine.segments import _gather_segments, safe_div, segment_sum
from ..engine.ties import TieGroups, tie_groups
from ..model import FloatArray, IntArray
from .gains import Gains, exp_scales, gain_hits, styled
from .graded import _discounted, _ideal_dcg
from .params import MeasureError
from .registry import REGISTRY, Measure

#: Measures whose value does not depend on the order of the ranked rows: computed by their own kernels.
ORDER_FREE = frozenset({"NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet",
                        "SetP", "SetR", "SetAP", "SetF", "Utility", "IDCG"})


def _rows_of(groups: TieGroups, chosen: IntArray) -> tuple[IntArray, IntArray]:
    """The ranked rows of the groups ``chosen`` (increasing), and each one's group."""
    rows = _gather_segments(groups.offsets, chosen)
    return rows, groups.group.take(rows)


def _expected_sum(b: RankedBatch, groups: TieGroups, per_group: FloatArray, k: int | IntArray | None,
                  weight: Callable[[IntArray], FloatArray] | None = None) -> FloatArray:
    """Per query, the sum over its ranks <= k of the value of the rank's group (``per_group``), times
    ``weight(rank)`` when given. Only the rows of groups with a non-zero value are visited: a ranking
    of 1000 documents has a few judged ones."""
    rows, group = _rows_of(groups, np.flatnonzero(per_group))
    rank = b.rank.take(rows)
    value = per_group.take(group)
    if weight is not None:
        value = value * weight(rank)
    query = groups.query.take(group)
    if k is not None:
        keep = rank <= (k.take(query) if isinstance(k, np.ndarray) else k)
        value, query = value[keep], query[keep]
    return segment_sum(value, query, b.n_queries)


def _relevant_share(b: RankedBatch, rel: int) -> FloatArray:
    """Per group, r / n: the chance that each of its places holds a relevant document."""
    groups = tie_groups(b)
    return groups.sums(b.relevant(rel)) / groups.size


def precision(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """E[P@k] = E[rel@k] / k."""
    return _expected_sum(b, tie_groups(b), _relevant_share(b, rel), k) / float(k)


def recall(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """E[R@k] = E[rel@k] / R."""
    return safe_div(_expected_sum(b, tie_groups(b), _relevant_share(b, rel), k), b.n_relevant(rel))


def r_precision(b: RankedBatch, *, rel: int) -> FloatArray:
    """E[Rprec] = E[rel@R] / R."""
    R = b.n_relevant(rel)
    return safe_div(_expected_sum(b, tie_groups(b), _relevant_share(b, rel), R), R)


def judged(b: RankedBatch, *, k: int | None) -> FloatArray:
    """E[Judged@k] = E[judged documents in the top min(k, n)] / min(k, n)."""
    groups = tie_groups(b)
    depth = b.num_ret if k is None else np.minimum(b.num_ret, k)
    return safe_div(_expected_sum(b, groups, groups.sums(b.labels >= 0) / groups.size, k), depth)


def _expected_dcg(b: RankedBatch, k: int | None, dcg: str, gains: Gains | None,
                  scale: FloatArray | None) -> FloatArray:
    """E[DCG@k]: each place gains its group's mean (styled) gain."""
    groups = tie_groups(b)
    hits, gain = gain_hits(b, gains)
    gain = styled(gain, dcg, None if scale is None else scale[hits.query])
    mean = np.bincount(groups.group.take(hits.row), weights=gain, minlength=len(groups.size)) / groups.size
    return _expected_sum(b, groups, mean, k, lambda rank: _discounted(np.ones(len(rank)), rank))


def ndcg(b: RankedBatch, *, k: int | None, dcg: str, gains: Gains | None) -> FloatArray:
    """E[nDCG@k] = E[DCG@k] / IDCG@k (the ideal list does not depend on the order)."""
    scale = exp_scales(b, gains) if dcg == "exp-log2" else None
    return safe_div(_expected_dcg(b, k, dcg, gains, scale), _ideal_dcg(b, gains, dcg, k, scale))


def dcg(b: RankedBatch, *, k: int | None, dcg: str, gains: Gains | None) -> FloatArray:
    """E[DCG@k]."""
    return _expected_dcg(b, k, dcg, gains, None)


def average_precision(b: RankedBatch, *, k: int | None, rel: int, norm: str = "R") -> FloatArray:
    """E[AP@k]: see the module's docstring. ``norm='retrieved'`` (a ratio of two random counts) is refused."""
    if norm == "retrieved":
        raise MeasureError("AP(norm='retrieved') has no closed form over tie orders (its denominator depends "
                           "on the order too); use norm='R' or 'min_rk' with ties='expected'")
    groups = tie_groups(b)
    relevant = b.relevant(rel)
    r = groups.sums(relevant)
    chosen = np.flatnonzero(r)
    rows, group = _rows_of(groups, chosen)
    # c: the relevant rows of the group's query ranked above it (a running count, read at two rows).
    before = np.concatenate(([0], np.cumsum(relevant, dtype=np.int64)))
    c = before.take(groups.offsets[:-1]) - before.take(b.offsets[:-1].take(groups.query))
    others = np.where(groups.size > 1, (r - 1.0) / np.maximum(groups.size - 1, 1), 0.0)
    place = rows - groups.offsets.take(group) + 1
    rank = b.rank.take(rows)
    term = (r / groups.size).take(group) * (c.take(group) + 1.0 + (place - 1) * others.take(group)) / rank
    query = groups.query.take(group)
    if k is not None:
        keep = rank <= k
        term, query = term[keep], query[keep]
    total = segment_sum(term, query, b.n_queries)
    R = b.n_relevant(rel)
    return safe_div(total, np.minimum(R, k) if norm == "min_rk" and k is not None else R)


def geometric_map(b: RankedBatch, *, rel: int) -> FloatArray:
    """Per query E[AP] (the summary is the geometric mean of these expected values)."""
    return average_precision(b, k=None, rel=rel)


def _first_relevant_group(b: RankedBatch, rel: int) -> tuple[IntArray, IntArray, FloatArray, FloatArray, IntArray]:
    """Per query with a relevant row: its query, its first group with one, and that group's n, r and t."""
    groups = tie_groups(b)
    r = groups.sums(b.relevant(rel))
    has = np.flatnonzero(r > 0)
    # Groups are in query order: the first of each query's groups with a relevant row.
    first = has[np.concatenate(([True], groups.query.take(has[1:]) != groups.query.take(has[:-1])))] if len(has) else has
    return (groups.query.take(first), first, groups.size.take(first).astype(np.float64), r.take(first),
            groups.before.take(first))


def _log_factorials(n: int) -> FloatArray:
    """log(m!) for m = 0..n."""
    table = np.zeros(n + 1)
    np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)), out=table[1:])
    return table


def _all_nonrelevant(n: FloatArray, r: FloatArray, j: IntArray | FloatArray, logf: FloatArray) -> FloatArray:
    """S(j) = C(n - r, j) / C(n, j): the chance that the first j places of a group of n rows, r of
    them relevant, hold no relevant one (0 when j > n - r)."""
    ni, ri, ji = n.astype(np.int64), r.astype(np.int64), np.asarray(j, dtype=np.int64)
    possible = ji <= ni - ri
    ji = np.where(possible, ji, 0)
    log_s = logf.take(ni - ri) - logf.take(ni - ri - ji) - logf.take(ni) + logf.take(ni - ji)
    return np.where(possible, np.exp(log_s), 0.0)


def reciprocal_rank(b: RankedBatch, *, k: int | None, rel: int) -> FloatArray:
    """E[RR@k]: the first relevant document is at place i of the first group with one with
    probability S(i - 1) * r / (n - i + 1)."""
    query, first, n, r, t = _first_relevant_group(b, rel)
    rows = _gather_segments(tie_groups(b).offsets, first)  # the rows of those groups
    at = np.repeat(np.arange(len(first)), tie_groups(b).size.take(first))  # each one's group, among ``first``
    place = rows - tie_groups(b).offsets.take(first).take(at) + 1
    rank = t.take(at) + place
    keep = place <= n.take(at) - r.take(at) + 1
    if k is not None:
        keep &= rank <= k
    rows_n, rows_r, place, rank, at = n.take(at)[keep], r.take(at)[keep], place[keep], rank[keep], at[keep]
    logf = _log_factorials(int(n.max(initial=0)))
    chance = _all_nonrelevant(rows_n, rows_r, place - 1, logf) * rows_r / (rows_n - place + 1)
    values = np.zeros(b.n_queries)
    values[query] = segment_sum(chance / rank, at, len(first))
    return values


def success(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """E[Success@k]: 1 when the first group with a relevant row ends within k, 1 - S(k - t) when it
    straddles k, 0 when it starts below k."""
    query, _, n, r, t = _first_relevant_group(b, rel)
    slots = np.clip(k - t, 0, n.astype(np.int64))
    logf = _log_factorials(int(n.max(initial=0)))
    values = np.zeros(b.n_queries)
    values[query] = np.where(slots > 0, 1.0 - _all_nonrelevant(n, r, slots, logf), 0.0)
    return values


#: The closed forms, by measure name; each takes the measure's own parameters.
EXPECTED: dict[str, Callable[..., FloatArray]] = {
    "P": precision, "R": recall, "Rprec": r_precision, "Judged": judged, "nDCG": ndcg, "DCG": dcg,
    "AP": average_precision, "GMAP": geometric_map, "RR": reciprocal_rank, "Success": success,
}


def expected_kernel(measure: Measure) -> Callable[..., Any]:
    """The kernel that gives ``measure``'s expected value over tie orders; MeasureError, with the reason, without one."""
    if measure.name in EXPECTED:
        return EXPECTED[measure.name]
    if measure.name in ORDER_FREE:
        return REGISTRY[measure.name].kernel
    supported = ", ".join([*EXPECTED, "the counts and set measures"])
    raise MeasureError(f"{measure} has no closed form for its expected value over tie orders, so ties='expected' "
                       f"cannot give it; it gives {supported} (use ties='trec_eval' or 'rank' for {measure.name})")
