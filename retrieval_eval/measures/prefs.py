"""trec_eval's preference measures (``-R prefs``, ``-R qrels_prefs``, ``-m all_prefs``).

Preferences are pairs "A is preferred to B" from judgment groups (jg: one assessor, one need), as
:mod:`retrieval_eval.engine.preferences` builds them. A ranking fulfils A > B when A is ranked above
B, counting only the judged documents: the ranking's judged documents take ranks 0..njr-1 (ties of
score by doc_id ascending, as trec_eval's preference code sorts them), the judged documents it lacks
the ranks after (in byte order of their ids). Each preference falls into one of three kinds:

- *retrieved*: A and B both retrieved; fulfilled when A is ranked above B;
- *implied*: exactly one of them retrieved; fulfilled when it is A;
- *not retrieved*: neither; never fulfilled.

The ``_ret`` measures count only retrieved preferences, the ``_imp`` ones retrieved and implied ones,
the others all three. Every value is trec_eval 10's, bit for bit, quirks included (each kernel says
which); a denominator of 0 gives 0.

The counting runs over every preference of every query at once; nothing loops over queries or
documents. The kernels' contract is in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..engine.batch import RankedBatch
from ..engine.segments import _offsets_of, safe_div, segment_ids
from ..model import BoolArray, FloatArray, IntArray
from .params import TrecName
from .registry import measure

if TYPE_CHECKING:  # the engine's preference module loads only when preferences are read
    from ..engine.preferences import Preferences


class _Pairs(NamedTuple):
    """Every preference of a block of queries, with the ranks of its two documents."""

    query: IntArray
    group: IntArray  #: group, numbered across the block
    better: IntArray  #: judgment row (across the block) of the preferred document
    worse: IntArray
    rank_better: IntArray
    rank_worse: IntArray
    better_retrieved: BoolArray  #: the preferred document is retrieved
    worse_retrieved: BoolArray


class _Counts(NamedTuple):
    """What every preference measure reads: per-group counts and the pairs behind them."""

    prefs: Preferences
    n_queries: int
    njr: IntArray  #: judged documents retrieved, per query
    group_query: IntArray
    judgment_group: IntArray  #: across the block
    judgment_rank: IntArray
    pairs: _Pairs
    ful_ret: FloatArray  #: per group
    poss_ret: FloatArray
    ful_imp: FloatArray
    poss_imp: FloatArray
    not_ret: FloatArray
    rel: FloatArray  #: judgments > 0 in the group
    nonrel: FloatArray
    rel_ret: FloatArray
    nonrel_ret: FloatArray


def _counts(b: RankedBatch) -> _Counts:
    return b._cached(("prefs",), lambda: _count(b))


def _count(b: RankedBatch) -> _Counts:
    from ..engine.preferences import judged_ranks

    p = b.preferences
    assert p is not None  # (compute checks it first)
    n_q = b.n_queries
    rank, njr = judged_ranks(p, n_q, b.offsets, b.doc_ids, b.scores, b.labels)
    group_query = segment_ids(p.group_offsets)
    n_groups = len(group_query)
    jq = segment_ids(p.judgment_offsets)
    j_group = p.group_offsets[jq] + p.judgment_group
    j_rank = rank[p.doc_offsets[jq] + p.judgment_doc]
    j_ret = j_rank < njr[jq]
    rel, nonrel = p.judgment_level > 0, p.judgment_level == 0
    pq = segment_ids(p.pair_offsets)
    start = p.judgment_offsets[pq]  # the first judgment of each pair's query
    better, worse = start + p.pair_better, start + p.pair_worse
    a_ret, b_ret = j_ret[better], j_ret[worse]
    pairs = _Pairs(pq, j_group[better], better, worse, j_rank[better], j_rank[worse], a_ret, b_ret)

    # Each pair in one of five kinds, counted per group in one pass: fulfilled with both retrieved, not
    # fulfilled with both, only the preferred one retrieved (fulfilled), only the other, neither.
    both = a_ret & b_ret
    kind = np.where(both, (pairs.rank_better >= pairs.rank_worse).view(np.int8), np.int8(4))
    kind[a_ret & ~b_ret] = 2
    kind[~a_ret & b_ret] = 3
    by_kind = _counts_of(pairs.group, kind, 5, n_groups)
    # Each judgment: relevant or not (or neither: a level below 0), retrieved or not.
    sort = np.where(rel, np.int8(0), np.where(nonrel, np.int8(2), np.int8(4)))
    sort += ~j_ret
    by_sort = _counts_of(j_group, sort, 6, n_groups)
    return _Counts(
        prefs=p, n_queries=n_q, njr=njr, group_query=group_query, judgment_group=j_group, judgment_rank=j_rank,
        pairs=pairs, ful_ret=by_kind[0], poss_ret=by_kind[0] + by_kind[1], ful_imp=by_kind[2],
        poss_imp=by_kind[2] + by_kind[3], not_ret=by_kind[4], rel=by_sort[0] + by_sort[1],
        nonrel=by_sort[2] + by_sort[3], rel_ret=by_sort[0], nonrel_ret=by_sort[2],
    )


def _counts_of(group: IntArray, kind: np.ndarray, kinds: int, n_groups: int) -> FloatArray:
    """How many rows of each kind (0..kinds-1) each group has: a (kinds, n_groups) array."""
    key = group * kinds
    key += kind
    return np.bincount(key, minlength=kinds * n_groups).reshape(n_groups, kinds).T.astype(np.float64)


def _per_query(c: _Counts, per_group: FloatArray) -> FloatArray:
    """Group values summed per query, group after group (trec_eval's order of addition)."""
    return np.bincount(c.group_query, weights=per_group, minlength=c.n_queries).astype(np.float64)


def _average_over_groups(c: _Counts, ratio: FloatArray) -> FloatArray:
    """trec_eval's mean over a query's groups: the sum of their ratios over the number of groups, or 0
    when that sum is not > 0 (a NaN ratio, 0/0, makes the whole query 0, as in trec_eval)."""
    total = _per_query(c, ratio)
    groups = np.diff(c.prefs.group_offsets)
    with np.errstate(invalid="ignore"):
        positive = total > 0.0
    return np.where(positive, safe_div(np.where(positive, total, 0.0), groups), 0.0)


def _group_ratio(ful: FloatArray, poss: FloatArray) -> FloatArray:
    """ful/poss per group; 0/0 is NaN, as trec_eval's division gives it (the caller decides)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return ful / poss


# ------------------------------------------------------------------------------- counts


@measure("PrefsPossible", trec=(TrecName("prefs_num_prefs_poss"),), aggregate="sum", integer=True,
         preferences=True)
def prefs_possible(b: RankedBatch) -> FloatArray:
    """Number of preferences of the judgments, retrieved or not; the summary is the sum.

    Each group's preferences count once each; a pair preferred in two groups counts twice.
    Reference: trec_eval 10, prefs_num_prefs_poss.
    """
    c = _counts(b)
    return _per_query(c, c.poss_ret + c.poss_imp + c.not_ret)


@measure("PrefsFulfilled", trec=(TrecName("prefs_num_prefs_ful"),), aggregate="sum", integer=True,
         preferences=True)
def prefs_fulfilled(b: RankedBatch) -> FloatArray:
    """Number of preferences the ranking fulfils, implied ones included; the summary is the sum.

    Reference: trec_eval 10, prefs_num_prefs_ful.
    """
    c = _counts(b)
    return _per_query(c, c.ful_ret + c.ful_imp)


@measure("PrefsFulfilledRet", trec=(TrecName("prefs_num_prefs_ful_ret"),), aggregate="sum", integer=True,
         preferences=True)
def prefs_fulfilled_retrieved(b: RankedBatch) -> FloatArray:
    """Number of preferences between two retrieved documents that the ranking fulfils; summed.

    Reference: trec_eval 10, prefs_num_prefs_ful_ret.
    """
    return _per_query(_counts(b), _counts(b).ful_ret)


# ------------------------------------------------------------------------------- simple ratios


@measure("PrefsSimp", trec=(TrecName("prefs_simp"),), preferences=True)
def prefs_simple(b: RankedBatch) -> FloatArray:
    """Preferences fulfilled over preferences possible, every preference of every group counting once.

    Contradicting groups both count, so a query may not reach 1. Not retrieved preferences are
    failures. Reference: trec_eval 10, prefs_simp.
    """
    c = _counts(b)
    return safe_div(_per_query(c, c.ful_ret + c.ful_imp), _per_query(c, c.poss_ret + c.poss_imp + c.not_ret))


@measure("PrefsSimpRet", trec=(TrecName("prefs_simp_ret"),), preferences=True)
def prefs_simple_retrieved(b: RankedBatch) -> FloatArray:
    """PrefsSimp over the preferences between two retrieved documents only.

    Reference: trec_eval 10, prefs_simp_ret (meant for dynamic collections).
    """
    c = _counts(b)
    return safe_div(_per_query(c, c.ful_ret), _per_query(c, c.poss_ret))


@measure("PrefsSimpImp", trec=(TrecName("prefs_simp_imp"),), preferences=True)
def prefs_simple_implied(b: RankedBatch) -> FloatArray:
    """PrefsSimp over the preferences with at least one document retrieved.

    Reference: trec_eval 10, prefs_simp_imp.
    """
    c = _counts(b)
    return safe_div(_per_query(c, c.ful_ret + c.ful_imp), _per_query(c, c.poss_ret + c.poss_imp))


# ------------------------------------------------------------------------------- per pair


def _pair_ratios(b: RankedBatch) -> tuple[FloatArray, FloatArray, IntArray, IntArray, IntArray]:
    return b._cached(("prefs-pairs",), lambda: _pair_sums(_counts(b)))


def _pair_sums(c: _Counts) -> tuple[FloatArray, FloatArray, IntArray, IntArray, IntArray]:
    """Per query: the sums of the pairs' ratios over the retrieved pairs and over the implied ones, and
    the numbers of retrieved, implied and not retrieved pairs.

    A pair of documents {x, y} (x ranked above y) preferred in several groups has the ratio
    (groups preferring x) / (groups preferring either). The sums add the retrieved pairs first, then
    the implied ones, each by x then y, as trec_eval's loops do.
    """
    pr = c.pairs
    top, bottom = np.minimum(pr.rank_better, pr.rank_worse), np.maximum(pr.rank_better, pr.rank_worse)
    forward = pr.rank_better < pr.rank_worse
    # 0: both retrieved, 1: one of them, 2: neither
    region = np.add(pr.better_retrieved, pr.worse_retrieved, dtype=np.int8)
    np.subtract(2, region, out=region)
    span = int(bottom.max(initial=0)) + 1
    if (c.n_queries + 1) * 6 * span * span < 2**62:
        # One sort of one int64 key: query, region, x, y, and last a bit that is 0 for a preference of
        # x over y (ranks are below a query's number of judged documents).
        key = pr.query * 3 + region  # (built in place: each step over 1.75 M pairs in the benchmark)
        key *= span
        key += top
        key *= span
        key += bottom
        key <<= 1
        key |= ~forward
        del top, bottom, forward, region  # (the peak of the preference measures' memory is here)
        key.sort()
        new = np.ones(len(key), dtype=bool)
        new[1:] = (key[1:] ^ key[:-1]) > 1  # (neighbours that differ above the last bit: another pair)
        # The preferences of x over y counted between the first row of each pair and the next one's
        starts = np.flatnonzero(new)
        seen = np.zeros(len(key) + 1, dtype=np.int64)
        low_byte = key.view(np.uint8)[:: 8] if sys.byteorder == "little" else key.view(np.uint8)[7::8]
        np.cumsum((low_byte & 1) == 0, out=seen[1:])
        forward_count = np.diff(seen[np.append(starts, len(key))]).astype(np.float64)
        total = np.diff(np.append(starts, len(key))).astype(np.float64)
        query_region = (key[starts] >> 1) // (span * span)  # (one division of the pairs: a slow one)
        uq = query_region // 3
        ur = query_region - 3 * uq
    else:
        order = np.lexsort((bottom, top, region, pr.query))
        q, r, x, y, f = pr.query[order], region[order], top[order], bottom[order], forward[order]
        new = np.ones(len(q), dtype=bool)
        new[1:] = (q[1:] != q[:-1]) | (x[1:] != x[:-1]) | (y[1:] != y[:-1])
        unit = np.cumsum(new) - 1
        forward_count = np.bincount(unit, weights=f).astype(np.float64)
        total = np.bincount(unit).astype(np.float64)
        uq, ur = q[new], r[new]
    ratio = forward_count / np.maximum(total, 1.0)
    n = c.n_queries
    first = ur == 0
    retrieved = np.bincount(uq[first], weights=ratio[first], minlength=n).astype(np.float64)
    # The implied pairs' ratios continue the retrieved ones' sum: added in one pass, in the same order.
    some = ur < 2
    both = np.bincount(uq[some], weights=ratio[some], minlength=n).astype(np.float64)
    counts = np.bincount(uq * 3 + ur, minlength=3 * n).reshape(n, 3).astype(np.int64)  # per query, per region
    return retrieved, both, counts[:, 0], counts[:, 1], counts[:, 2]


@measure("PrefsPair", trec=(TrecName("prefs_pair"),), preferences=True)
def prefs_pair(b: RankedBatch) -> FloatArray:
    """Mean over preferred pairs of documents of the share of the pair's preferences that are fulfilled.

    A pair preferred one way by 3 groups and the other way by 2 scores 3/5 (or 2/5); a pair with
    neither document retrieved scores 0 but counts. Equals PrefsSimp when no pair is in two groups.
    Reference: trec_eval 10, prefs_pair.
    """
    _, both, n_ret, n_imp, n_not = _pair_ratios(b)
    return safe_div(both, n_ret + n_imp + n_not)


@measure("PrefsPairRet", trec=(TrecName("prefs_pair_ret"),), preferences=True)
def prefs_pair_retrieved(b: RankedBatch) -> FloatArray:
    """PrefsPair over the pairs of two retrieved documents.

    Reference: trec_eval 10, prefs_pair_ret.
    """
    retrieved, _, n_ret, _, _ = _pair_ratios(b)
    return safe_div(retrieved, n_ret)


@measure("PrefsPairImp", trec=(TrecName("prefs_pair_imp"),), preferences=True)
def prefs_pair_implied(b: RankedBatch) -> FloatArray:
    """PrefsPair over the pairs with at least one document retrieved.

    Reference: trec_eval 10, prefs_pair_imp.
    """
    _, both, n_ret, n_imp, _ = _pair_ratios(b)
    return safe_div(both, n_ret + n_imp)


# ------------------------------------------------------------------------------- per group


@measure("PrefsAvgJg", trec=(TrecName("prefs_avgjg"),), preferences=True)
def prefs_average_group(b: RankedBatch) -> FloatArray:
    """Mean over judgment groups of each group's preferences fulfilled over possible.

    Every group (user) weighs the same, however many preferences it holds; a group without
    preferences counts as 0. Reference: trec_eval 10, prefs_avgjg.
    """
    c = _counts(b)
    return _average_over_groups(c, safe_div(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp + c.not_ret))


@measure("PrefsAvgJgRet", trec=(TrecName("prefs_avgjg_ret"),), preferences=True)
def prefs_average_group_retrieved(b: RankedBatch) -> FloatArray:
    """PrefsAvgJg over the preferences between two retrieved documents.

    Reference: trec_eval 10, prefs_avgjg_ret.
    """
    c = _counts(b)
    return _average_over_groups(c, safe_div(c.ful_ret, c.poss_ret))


@measure("PrefsAvgJgImp", trec=(TrecName("prefs_avgjg_imp"),), preferences=True)
def prefs_average_group_implied(b: RankedBatch) -> FloatArray:
    """PrefsAvgJg over the preferences with at least one document retrieved.

    Reference: trec_eval 10, prefs_avgjg_imp.
    """
    c = _counts(b)
    return _average_over_groups(c, safe_div(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp))


# ------------------------------------------------------------------------------- R non-relevant


def _nonrel_places(c: _Counts, retrieved_only: bool, groups: BoolArray) -> tuple[BoolArray, IntArray]:
    """Which judgments are at level 0 (and retrieved, when ``retrieved_only``), and the place of each
    such judgment among its group's, by rank (0 for the first); only for the ``groups`` given (the
    judgments of the others get place 0, for their callers to mask out)."""
    p = c.prefs
    jq = segment_ids(p.judgment_offsets)
    eligible = p.judgment_level == 0
    if retrieved_only:
        eligible &= c.judgment_rank < c.njr[jq]
    rows = np.flatnonzero(groups[c.judgment_group])
    span = int(c.judgment_rank.max(initial=0)) + 1
    key = (c.judgment_group[rows] * 2 + ~eligible[rows]) * span + c.judgment_rank[rows]
    order = rows[np.argsort(key, kind="stable")]
    group = c.judgment_group[order]
    starts = _offsets_of(np.bincount(group, minlength=len(c.group_query)))
    place = np.zeros(len(eligible), dtype=np.int64)
    place[order] = np.arange(len(order)) - starts[group]
    return eligible, place


def _first_nonrel(c: _Counts, places: tuple[BoolArray, IntArray], limit: FloatArray) -> BoolArray:
    """The level-0 judgments among the first ``limit[group]`` of their group's (see _nonrel_places)."""
    eligible, place = places
    return eligible & (place < limit[c.judgment_group])


def _below(c: _Counts, group: IntArray, threshold: IntArray, retrieved_only: bool, groups: BoolArray) -> FloatArray:
    """For each (group, threshold): how many of the group's judgments have a rank below the threshold
    (``group`` among the ``groups`` given: only their judgments are sorted)."""
    jq = segment_ids(c.prefs.judgment_offsets)
    keep = groups[c.judgment_group]
    if retrieved_only:
        keep &= c.judgment_rank < c.njr[jq]
    span = int(c.judgment_rank.max(initial=0)) + 2
    keys = np.sort(c.judgment_group[keep] * span + c.judgment_rank[keep])
    return (np.searchsorted(keys, group * span + threshold) - np.searchsorted(keys, group * span)).astype(np.float64)


def _rnonrel(c: _Counts, retrieved_only: bool) -> FloatArray:
    """Each group's ratio of PrefsAvgJgRnonrel(Ret), NaN for 0/0 (see those kernels)."""
    pr = c.pairs
    n_groups = len(c.group_query)
    if retrieved_only:
        big, small = c.rel_ret, c.nonrel_ret
        ratio = _group_ratio(c.ful_ret + c.rel_ret * (big - small), c.poss_ret + c.rel * (big - small))
    else:
        big, small = c.rel, c.nonrel
        ratio = _group_ratio(c.ful_ret + c.ful_imp + c.rel_ret * (big - small),
                             c.poss_ret + c.poss_imp + c.not_ret + c.rel * (big - small))
    recount = big < small
    if not recount.any():
        return ratio
    single = c.prefs.group_single
    # Only the pairs of the groups recounted (often a few): the others keep their ratio
    sel = np.flatnonzero(recount[pr.group])
    group, better, worse = pr.group[sel], pr.better[sel], pr.worse[sel]
    a_ret, b_ret = pr.better_retrieved[sel], pr.worse_retrieved[sel]
    fulfilled = (pr.rank_better[sel] < pr.rank_worse[sel]) & a_ret
    level = c.prefs.judgment_level
    # Groups of one subgroup: the preferences among the relevant levels, and every judgment of the group
    # against each of the first R judgments at 0 (trec_eval's loop includes the level-0 judgments
    # themselves, and a document against itself, which never counts as fulfilled).
    among_rel = single[group] & (level[worse] > 0)
    if retrieved_only:
        among_rel &= a_ret & b_ret
    ful = np.bincount(group[among_rel & fulfilled], minlength=n_groups).astype(np.float64)
    poss = np.bincount(group[among_rel], minlength=n_groups).astype(np.float64)
    limit = big if retrieved_only else c.rel
    places = _nonrel_places(c, retrieved_only, recount)
    kept_zero = _first_nonrel(c, places, limit)
    jq = segment_ids(c.prefs.judgment_offsets)
    targets = kept_zero & single[c.judgment_group] & recount[c.judgment_group]
    t_group, t_rank = c.judgment_group[targets], c.judgment_rank[targets]
    threshold = t_rank if retrieved_only else np.minimum(t_rank, c.njr[jq[targets]])
    ful += np.bincount(t_group, weights=_below(c, t_group, threshold, retrieved_only, recount), minlength=n_groups)
    members = (c.rel_ret + c.nonrel_ret) if retrieved_only else (c.rel + c.nonrel)
    poss += members * np.bincount(t_group, minlength=n_groups)
    # Groups of several subgroups: their own preferences, without the judgments at 0 after the first
    # R (R counts every relevant judgment of the group, retrieved or not, in both measures).
    dropped = (level == 0) & ~_first_nonrel(c, places, c.rel)
    kept = ~single[group] & ~dropped[better] & ~dropped[worse]
    if retrieved_only:
        kept &= a_ret & b_ret
    ful += np.bincount(group[kept & fulfilled], minlength=n_groups)
    poss += np.bincount(group[kept], minlength=n_groups)
    return np.where(recount, _group_ratio(ful, poss), ratio)


@measure("PrefsAvgJgRnonrel", trec=(TrecName("prefs_avgjg_Rnonrel"),), preferences=True)
def prefs_average_group_rnonrel(b: RankedBatch) -> FloatArray:
    """PrefsAvgJg with each group's non-relevant documents (level 0) brought to R, its relevant count.

    With N non-relevant and R relevant judgments in a group: N < R adds R(R-N) preferences, fulfilled
    for each retrieved relevant document; N > R keeps only the first R non-relevant documents by
    rank and counts again. Close to bpref for one group of two levels. trec_eval's quirks are kept:
    in a group of one subgroup the recount compares every judgment of the group (the kept level-0
    ones included) with each kept level-0 one, and a group whose recount is 0/0 makes the query 0.
    Reference: trec_eval 10, prefs_avgjg_Rnonrel.
    """
    c = _counts(b)
    return _average_over_groups(c, _rnonrel(c, retrieved_only=False))


@measure("PrefsAvgJgRnonrelRet", trec=(TrecName("prefs_avgjg_Rnonrel_ret"),), preferences=True)
def prefs_average_group_rnonrel_retrieved(b: RankedBatch) -> FloatArray:
    """PrefsAvgJgRnonrel over retrieved documents: R and N count retrieved judgments only.

    As in trec_eval: when N <= R the added preferences' possible count uses every relevant judgment
    (retrieved or not), a group with no retrieved judgment is 0/0 and makes the query 0, and a group
    of several subgroups keeps the first R non-relevant retrieved documents with R counting every
    relevant judgment. Reference: trec_eval 10, prefs_avgjg_Rnonrel_ret.
    """
    c = _counts(b)
    return _average_over_groups(c, _rnonrel(c, retrieved_only=True))
