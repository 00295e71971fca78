"""Graded-relevance measures: the DCG family (nDCG, DCG, IDCG, nDCGRel, RnDCG), G and binG, RBP and ERR.

Gains follow trec_eval's gain tables (:mod:`.gains`): a judged document gains its level (or the
custom gain of its level), unjudged documents gain 0, and the ideal list holds the positive gains of
all judgments, largest first. These measures ignore the relevance threshold, as trec_eval does.

The kernels' contract and notation (R, NR, n, nrr, rel@k, r_m) are in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

import numpy as np

from ..engine.batch import RankedBatch
from ..engine.segments import safe_div, segment_count, segment_sum
from ..model import FloatArray, IntArray
from .gains import (
    DCG_STYLE,
    GAINS_PARAM,
    Gains,
    exp_scales,
    gain_hits,
    ideal_list,
    segment_cumsum,
    styled,
    unit_gains,
)
from .params import CUTOFF, REL, InvalidParameterError, Param, TrecName
from .registry import measure
from .trec_syntax import TrecGainPairs
from .trec_table import (
    P_CUTOFFS,
)

# ------------------------------------------------------------------------------- the one DCG
# Every measure of the DCG family is arithmetic on these: the discounted gain of an entry at a rank,
# its sum per query (DCG, of a ranking or of the ideal list) and its running sum.


def _discounted(gain: FloatArray, rank: IntArray) -> FloatArray:
    """The DCG term of each entry: gain / log2(rank + 1), rank 1-based."""
    term: FloatArray = np.add(rank, 1.0, dtype=np.float64)  # one new array, worked on in place (logs: 10 M)
    np.log2(term, out=term)
    np.divide(gain, term, out=term)
    return term


def _dcg(segment: IntArray, rank: IntArray, gain: FloatArray, n: int, k: int | None) -> FloatArray:
    """DCG per query: the sum of the terms of the entries with a non-zero gain at ranks <= k.

    Entries of query ``segment[i]`` at ``rank[i]`` with ``gain[i]``, for the ranked rows (their
    rank) or for the ideal list (its position); zero-gain entries would only add exact zeros.
    """
    if n == 1:  # one query (a RetrievalEvaluator's): its ranks increase, so those <= k are a prefix, as views
        if k is not None and len(rank) and rank[-1] > k:
            stop = int(rank.searchsorted(k, side="right"))
            segment, rank, gain = segment[:stop], rank[:stop], gain[:stop]
        if np.count_nonzero(gain) < len(gain):  # (a count: a fifth of the cost of keep.all() on a short list)
            keep = gain != 0
            segment, rank, gain = segment[keep], rank[keep], gain[keep]
        return segment_sum(_discounted(gain, rank), segment, n)
    keep = gain != 0
    if k is not None:
        keep &= rank <= k
    if not bool(keep.all()):  # else every entry counts (ideal lists at a cutoff beyond them, logs): no copies
        segment, rank, gain = segment[keep], rank[keep], gain[keep]
    return segment_sum(_discounted(gain, rank), segment, n)


def _ideal_dcg(b: RankedBatch, gains: Gains | None, dcg: str, k: int | None,
               scale: FloatArray | None = None) -> FloatArray:
    """The ideal DCG (at ranks <= k) per query: the DCG of its ideal list (its 'exp-log2' gains
    divided by 2^scale, ``scale`` per query from ``exp_scales``)."""
    if gains is None and not b.float_grades and int(b.judged_relevance.max(initial=0)) <= 1:
        # Binary judgments: every ideal gain is 1, so a query's ideal DCG depends on its list's length
        # m (R at 1) only. One running sum of the terms, read at min(m, k), replaces the ideal lists:
        # the same sums, added in the same order from 0.0 (a log's 10 M lists are never made).
        length = b.n_relevant(1)
        depth = int(length.max(initial=0)) if k is None else min(k, int(length.max(initial=0)))
        table = np.zeros(depth + 1)
        np.cumsum(_discounted(styled(np.ones(depth), dcg), np.arange(1, depth + 1)), out=table[1:])
        return table.take(np.minimum(length, depth))
    ideal = ideal_list(b, gains)
    gain = styled(ideal.gain, dcg, None if scale is None else scale[ideal.segment])
    return _dcg(ideal.segment, ideal.position, gain, b.n_queries, k)


def _running_dcg(b: RankedBatch, gains: Gains | None) -> tuple[FloatArray, FloatArray]:
    """(running DCG at every gain hit (see ``gain_hits``), final DCG per query), linear gains.

    Rows without gain add exactly 0.0, so the running DCG only changes at the gain hits.
    """

    def compute() -> tuple[FloatArray, FloatArray]:
        hits, gain = gain_hits(b, gains)
        step = _discounted(gain, hits.rank)
        return segment_cumsum(step, hits.offsets), segment_sum(step, hits.query, b.n_queries)

    return b._cached(("dcg-running", gains), compute)


def _running_ideal_dcg(b: RankedBatch, gains: Gains | None) -> tuple[FloatArray, FloatArray]:
    """(running ideal DCG at every ideal entry, full ideal DCG per query), linear gains."""

    def compute() -> tuple[FloatArray, FloatArray]:
        ideal = ideal_list(b, gains)
        step = _discounted(ideal.gain, ideal.position)
        return segment_cumsum(step, ideal.offsets), segment_sum(step, ideal.segment, b.n_queries)

    return b._cached(("idcg-running", gains), compute)


def _dcg_upto(b: RankedBatch, gains: Gains | None, query: IntArray, upto: IntArray) -> FloatArray:
    """The running DCG of query ``query[i]`` at rank ``upto[i]`` (0.0 when no gain is at ranks 1..upto)."""
    hits, _ = gain_hits(b, gains)
    running, _ = _running_dcg(b, gains)
    # The last gain hit at a row before offsets[query] + upto, if it belongs to the query.
    last = np.searchsorted(hits.row, b.offsets[query] + upto) - 1
    has = last >= hits.offsets[query]
    out = np.zeros(len(upto))
    out[has] = running[last[has]]
    return out


@measure(
    "nDCG", judged_only=True,
    params={"k": CUTOFF, "dcg": DCG_STYLE, "gains": GAINS_PARAM},
    cutoff="k", aliases=("NDCG",),
    trec=(TrecName("ndcg", syntax=TrecGainPairs()), TrecName("ndcg_cut", cutoff=True, defaults=P_CUTOFFS)),
)
def ndcg(b: RankedBatch, *, k: int | None, dcg: str, gains: Gains | None) -> FloatArray:
    """Normalised discounted cumulative gain: DCG@k / IDCG@k with discount 1 / log2(rank + 1).

    The gain of a document is its judged value (``dcg='log2'``, trec_eval) or 2^value - 1
    (``dcg='exp-log2'``, Burges et al. / ireval); unjudged and non-positive documents gain 0.
    The ideal ranking sorts every positive judgment by value. Without a cutoff both sums run over the
    whole ranking and the whole ideal list (trec_eval ``ndcg``); with one, over the top k
    (``ndcg_cut_k``). IDCG = 0 gives 0. The relevance threshold (-l) is ignored, as in trec_eval.

    ``gains`` ({level: gain}, trec_eval ``-m ndcg.1=3,2=9``) replaces the value of the listed levels
    (other levels keep theirs): a judged document gains its level's gain, negative gains included,
    and the ideal list holds every judgment with a positive gain, largest first. With
    ``dcg='exp-log2'`` the custom gain g enters as 2^g - 1. trec_eval sorts the gain table with an
    integer-truncating comparator, which can misorder custom gains less than 1 apart; we sort exactly.
    With ``dcg='exp-log2'`` a query whose largest gain s is above 512 has every gain divided by 2^s
    first, which leaves the ratio as it is: grades of 1024 and more, whose 2^g is beyond float64,
    give their nDCG, not NaN.

    Reference: Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", TOIS 2002.
    """
    hits, gain = gain_hits(b, gains)  # the other ranked rows gain 0
    scale = exp_scales(b, gains) if dcg == "exp-log2" else None  # grades of 1024 and more: no overflow
    gained = _dcg(hits.query, hits.rank, styled(gain, dcg, None if scale is None else scale[hits.query]),
                  b.n_queries, k)
    return safe_div(gained, _ideal_dcg(b, gains, dcg, k, scale))


@measure("BinG", params={"rel": REL}, trec=(TrecName("binG"),))
def binary_g(b: RankedBatch, *, rel: int) -> FloatArray:
    """Binary G: (1/R) * sum over relevant retrieved of 1 / log2(2 + non-relevant documents above it).

    The k-th relevant document at rank r_k has r_k - k documents above it that are not relevant.
    No relevant retrieved (or R = 0) gives 0.

    Reference: trec_eval ``binG`` (G with binary gains and unit costs).
    """
    hits = b.hits(rel)
    term = 1.0 / np.log2((hits.rank + 2 - hits.position).astype(np.float64))
    return safe_div(segment_sum(term, hits.query, b.n_queries), b.n_relevant(rel))


#: Where :func:`_split` cuts a gain into a high and a low part.
_SPLIT = float(2**32)


def _split(values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``values`` as ``high * 2**32 + low`` with ``high`` an integer and ``0 <= low < 2**32``, both exact."""
    high = np.floor(values / _SPLIT)
    return high, values - high * _SPLIT


@measure("G", params={"gains": GAINS_PARAM}, trec=(TrecName("G", syntax=TrecGainPairs()),))
def g_measure(b: RankedBatch, *, gains: Gains | None) -> FloatArray:
    """G: gain discounted by the log of excess cost, normalised by the total ideal gain.

    At rank i let gain_i be the document's gain, S_i the sum of gains at ranks 1..i, and C_i the
    sum of max(g*_t, 1) over t = 1..i, where g*_t is the t-th gain of the ideal list (1 past its
    end). G = sum over i with gain_i != 0 of gain_i / log2(2 + C_i - S_i), divided by the sum of the
    ideal list.

    Edge cases: an empty ideal list (no positive gain judged) gives 0; an empty ranking gives 0.

    Reference: trec_eval ``G``.
    """
    hits, gain = gain_hits(b, gains)  # only these terms are non-zero; other rows add 0 to S_i
    ideal = ideal_list(b, gains)
    within = np.minimum(hits.rank, ideal.length[hits.query])
    # C_i and S_i can be huge (relevance up to 2**63 - 1) while C_i - S_i is small: each is summed
    # as a high and a low part (multiples of 2**32 and the rest), whose sums are exact integers
    # for integral gains, and the parts are subtracted before they are put together.
    cost_high, cost_low = _split(np.maximum(ideal.gain, 1.0))
    gain_high, gain_low = _split(gain)
    excess_high = (ideal.prefix(segment_cumsum(cost_high, ideal.offsets), within, hits.query)
                   - segment_cumsum(gain_high, hits.offsets))
    excess_low = (ideal.prefix(segment_cumsum(cost_low, ideal.offsets), within, hits.query)
                  - segment_cumsum(gain_low, hits.offsets) + (hits.rank - within))
    term = gain / np.log2(2.0 + (excess_high * _SPLIT + excess_low))
    total_ideal = segment_sum(ideal.gain, ideal.segment, b.n_queries)
    return safe_div(segment_sum(term, hits.query, b.n_queries), total_ideal)


@measure(
    "DCG", params={"k": CUTOFF, "dcg": DCG_STYLE, "gains": GAINS_PARAM}, cutoff="k",
    trec=(TrecName("dcg", syntax=TrecGainPairs()),),
)
def dcg(b: RankedBatch, *, k: int | None, dcg: str, gains: Gains | None) -> FloatArray:
    """Discounted cumulative gain: sum over ranks i (<= k) of gain_i / log2(i + 1).

    Linear gains by default (the judged level, or its custom gain; negative custom gains count);
    ``dcg='exp-log2'`` uses 2^gain - 1 (FLAGR's DCG@k). Unjudged documents gain 0. Not normalised.
    An empty ranking gives 0. With ``dcg='exp-log2'`` a gain of 1024 or more would make the value
    +inf (2^1024 is beyond float64): ``compute`` raises ``MeasureError`` naming the query instead
    (nDCG, a ratio, has no such limit).

    Reference: Järvelin & Kekäläinen, TOIS 2002; trec_eval ``dcg`` (explicit -m only).
    """
    hits, gain = gain_hits(b, gains)
    return _dcg(hits.query, hits.rank, styled(gain, dcg), b.n_queries, k)


@measure(
    "IDCG", params={"k": CUTOFF, "dcg": DCG_STYLE, "gains": GAINS_PARAM}, cutoff="k",
    trec=(TrecName("ideal_dcg", syntax=TrecGainPairs()),),
)
def ideal_dcg(b: RankedBatch, *, k: int | None, dcg: str, gains: Gains | None) -> FloatArray:
    """Ideal DCG: the DCG of the ideal list (all positive gains judged, largest first), over its top k.

    Without a cutoff the whole ideal list counts, however short the ranking. No positive gain
    judged gives 0. ``dcg='exp-log2'`` uses 2^gain - 1, as DCG does (refused from a gain of 1024 on).

    Reference: trec_eval ``ideal_dcg`` (explicit -m only).
    """
    return _ideal_dcg(b, gains, dcg, k)


@measure("nDCGRel", params={"gains": GAINS_PARAM}, trec=(TrecName("ndcg_rel", syntax=TrecGainPairs()),))
def ndcg_rel(b: RankedBatch, *, gains: Gains | None) -> FloatArray:
    """nDCG averaged over the relevant documents: the mean of nDCG at the rank of each one.

    With m the length of the ideal list (judgments with a positive gain), each retrieved document
    with a positive gain at rank i contributes DCG(i) / IDCG(min(i, m)); each of the m - g such
    documents not retrieved (g retrieved) contributes DCG(n) / IDCG(m). The sum is divided by m.

    Edge cases: a total <= 0 (including m = 0) gives 0; an empty ranking gives 0.

    Reference: trec_eval ``ndcg_rel``.
    """
    hits, gain = gain_hits(b, gains)
    ideal = ideal_list(b, gains)
    running, final = _running_dcg(b, gains)  # at each of ``hits``
    ideal_running, ideal_total = _running_ideal_dcg(b, gains)
    hit = gain > 0
    seg = hits.query[hit]
    at = np.minimum(hits.rank[hit], ideal.length[seg])
    term = running[hit] / ideal.prefix(ideal_running, at, seg)
    found = np.bincount(seg, minlength=b.n_queries)
    total = segment_sum(term, seg, b.n_queries) + safe_div((ideal.length - found) * final, ideal_total)
    return np.where(total > 0, safe_div(total, ideal.length), 0.0)


@measure(
    "RnDCG", params={"gains": GAINS_PARAM, "rel": REL},
    trec=(TrecName("Rndcg", syntax=TrecGainPairs()),),
)
def r_ndcg(b: RankedBatch, *, gains: Gains | None, rel: int) -> FloatArray:
    """nDCG averaged at the R-levels: where the ideal gain drops, plus at the end of the ranking.

    Let the ideal list (positive gains, descending) have length m, and let c run over its change
    points: the positions 1..m whose next ideal gain is smaller (c = m always is one). Each change
    point adds DCG(min(c, n)) / IDCG(c). If the ranking is longer than m + 1, DCG(n) / IDCG(m) is
    added once more. Rndcg is the mean of the added values. This is trec_eval's loop, including
    its quirk that DCG(n) is not added when n = m + 1.

    Edge cases: R = 0 at the relevance threshold gives 0 (the only use of ``rel``); m = 0 gives 0
    (trec_eval divides 0 by 0 there). An empty ranking gives 0.

    Reference: trec_eval ``Rndcg``.
    """
    ideal = ideal_list(b, gains)
    n_ret = b.num_ret
    _, final = _running_dcg(b, gains)
    ideal_running, ideal_total = _running_ideal_dcg(b, gains)
    change = ideal.position == ideal.length[ideal.segment]  # the last entry of each list
    change[:-1] |= ideal.gain[1:] != ideal.gain[:-1]  # (the next entry is in the same list otherwise)
    seg, c = ideal.segment[change], ideal.position[change]
    upto = np.minimum(c, n_ret[seg])
    dcg_at = np.where(upto == n_ret[seg], final[seg], _dcg_upto(b, gains, seg, upto))
    total = segment_sum(dcg_at / ideal_running[change], seg, b.n_queries)
    count = segment_count(change, ideal.segment, b.n_queries)
    tail = (ideal.length > 0) & (n_ret >= ideal.length + 2)
    total = total + np.where(tail, safe_div(final, ideal_total), 0.0)
    value = safe_div(total, count + tail)
    return np.where(b.n_relevant(rel) > 0, value, 0.0)


def _powers(p: float, size: int) -> FloatArray:
    """[1, p, p^2, ..., p^size], each by one more multiplication (as trec_eval's running product).

    Computed in growing chunks until the product stops changing: p^i underflows to a subnormal
    fixed point (0.9^i stays at 2.5e-323), and multiplying subnormals is slow, so for a ranking a
    million deep the rest is filled with that value instead.
    """
    out = np.empty(size + 1)
    out[0] = 1.0
    done, chunk = 0, 1024
    while done < size:
        end = min(done + chunk, size)
        out[done:end + 1] = np.cumprod(np.concatenate(([out[done]], np.full(end - done, p))))
        if out[end] == out[end - 1]:  # every further product is this one
            out[end + 1:] = out[end]
            break
        done, chunk = end, chunk * 2
    return out


@measure(
    "RBP", params={"p": Param(float, 0.8, "persistence: the probability of looking at the next rank", minimum=0.0,
                             maximum=1.0),
                   "gains": GAINS_PARAM,
                   "rel": Param(int, None, "binary gains instead: a judgment >= rel gains 1, any other 0", minimum=0)},
    trec=(TrecName("rbp", preset=(("p", 0.9),), syntax=TrecGainPairs(extra=("p",))),),
)
def rbp(b: RankedBatch, *, p: float, gains: Gains | None, rel: int | None) -> FloatArray:
    """Rank-biased precision: (1 - p) * sum over ranks i of gain_i * p^(i-1), without residual.

    Gains are the judged levels (or custom gains), rescaled per query to [0, 1] when any gain of the
    query's gain table is below 0 or above 1: g -> (g - min) / (max - min), where the table has an
    entry for each level 0 .. (largest judged level) and for each custom level. Binary judgments
    are used as they are; a query judged 0-3 uses level / 3. Unjudged documents gain 0.

    trec_eval's default p is 0.9 (``rbp`` is RBP(p=0.9)); ir_measures' is 0.8, our canonical one.
    trec_eval 10 reads its min/max uninitialised (the value then depends on the other measures
    requested); we compute what it intends, which matches its ``-m all_trec`` output.

    ``RBP(rel=k)`` uses binary gains instead (1 for a judgment >= k), as ir_measures' ``RBP(rel=k)``
    (computed by cwl-eval) does; it cannot be combined with ``gains``.

    Edge cases: an empty ranking gives 0; a degenerate table (max == min) gives gain 0.

    Reference: Moffat & Zobel, "Rank-biased precision for measurement of retrieval effectiveness",
    TOIS 2008.
    """
    powers = _powers(p, int(b.num_ret.max(initial=0)))
    if rel is not None:
        if gains is not None:
            raise InvalidParameterError("RBP takes binary gains (rel) or custom gains (gains), not both")
        relevant = b.hits(rel)
        return (1.0 - p) * segment_sum(powers[relevant.rank - 1], relevant.query, b.n_queries)
    hits, gain = unit_gains(b, gains)  # the judged rows: unjudged ones gain 0
    keep = gain != 0
    total = segment_sum(gain[keep] * powers[hits.rank[keep] - 1], hits.query[keep], b.n_queries)
    return (1.0 - p) * total


#: gdeval's ``$MAX_JUDGMENT``: the grade g_max that ERR's stopping probabilities are scaled by.
GDEVAL_MAX_GRADE = 4


@measure(
    "ERR",
    params={
        "k": CUTOFF,
        "max_rel": Param(
            int, GDEVAL_MAX_GRADE,
            "largest grade g_max: R_i = (2^g - 1) / 2^g_max (gdeval's fixed 4); larger grades count as g_max",
            minimum=1, maximum=1000,  # 2^g_max must be a double: 2^1024 is not
        ),
    },
    cutoff="k",
)
def expected_reciprocal_rank(b: RankedBatch, *, k: int | None, max_rel: int) -> FloatArray:
    r"""Expected reciprocal rank: sum over ranks i <= k of R_i / i * prod over j < i of (1 - R_j).

    R_i = (2^g_i - 1) / 2^g_max is the probability that the user stops at rank i (cascade model):
    g_i is the judged grade at rank i, clipped to [0, g_max], and 0 for documents not judged or
    judged negative. g_max is the constant ``max_rel`` (default 4, gdeval's ``$MAX_JUDGMENT``),
    *not* the largest grade found in the qrels: on a 0..3 scale a grade-3 document stops the user
    with probability 7/16, not 7/8. Use ``ERR(max_rel=3)`` for a 0..3 scale. Without a cutoff the
    whole ranking counts. This is what ``ir_measures`` computes for ``ERR@k`` (its only provider,
    gdeval, which prints 5 decimals, rejects grades above 4 and non-numeric query ids, and skips
    queries without a positive judgment; those score 0 here).

    Edge cases: an empty ranking, a ranking without a positive grade in the top k, and R = 0 all
    give 0.0. Since g is clipped, R_i < 1: 1 - R_i is at least 2^-g_max, kept exactly where R_i
    rounds to 1.0 (g_max >= 54), so the value is finite for every g_max up to 1000.

    Reference: Chapelle, Metzler, Zhang & Grinspan, "Expected reciprocal rank for graded
    relevance", CIKM 2009; gdeval.pl (TREC Web track) as shipped with ir_measures.
    """
    # Only documents with R_i > 0 (graded above 0: >= 1, or a float grade such as 0.5) add to the sum
    # or shrink the decay, so the product runs over them.
    hits = b.hits_above(0)
    if k is not None:
        hits = hits.where(hits.rank <= k)
    grade = np.minimum(b.labels[hits.row], max_rel)
    stop = (np.exp2(grade.astype(np.float64)) - 1.0) / 2.0**max_rel
    seg, rank = hits.query, hits.rank
    # prod_{j<i} (1 - R_j) per segment, as exp of an exclusive running sum of log1p(-R_j). At the
    # top grade, 1 - R = 2^-max_rel exactly, but R rounds to 1.0 from max_rel = 54 on, and log(0)
    # would make the running sum NaN: its log is taken exactly there instead.
    top = stop == 1.0
    log_keep = np.log1p(-np.where(top, 0.0, stop))
    log_keep[top] = -max_rel * np.log(2.0)
    decay = np.exp(segment_cumsum(log_keep, hits.offsets) - log_keep)  # a segment's first: exp(0) = 1
    return segment_sum(stop / rank * decay, seg, b.n_queries)
