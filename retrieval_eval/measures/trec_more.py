"""The rest of trec_eval's ``-m all_trec`` set, plus dcg, ideal_dcg and yaap.

Same contract as :mod:`.catalog`: one decorated kernel per measure, vectorised over the whole
:class:`~retrieval_eval.ranking.RankedBatch` (no loop over queries or documents), float64 values of
shape ``(n_queries,)``, 0.0 wherever a denominator is 0. Notation as in :mod:`.catalog`: R relevant
judgments (value >= rel), NR judged non-relevant (0 <= value < rel), n documents retrieved, nrr
relevant retrieved, rel@k relevant in ranks 1..k, r_m rank of the m-th relevant retrieved document.

Gain-based measures (G, DCG, IDCG, nDCGRel, RnDCG, RBP) use trec_eval's gain tables
(:mod:`.gains`): a judged document gains its level (or the custom gain of its level), unjudged
documents gain 0, and the ideal list holds the positive gains of all judgments, largest first.
They ignore the relevance threshold, as trec_eval does (RnDCG uses it only for its R = 0 case).

Reference for every definition: trec_eval 10.0 (``reference/trec_eval-semantics.md`` §5).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ranking import (
    NONPOOL,
    UNJUDGED,
    FloatArray,
    Hits,
    RankedBatch,
    safe_div,
    segment_count,
    segment_heads,
    segment_sum,
)
from .base import REL, Param, TrecName, measure
from .catalog import CUTOFF, P_CUTOFFS, RECALL_POINTS, bpref, interpolated_precision
from .gains import (
    DCG_STYLE,
    GAINS_PARAM,
    Gains,
    dcg_upto,
    discount,
    discounted_cumulative,
    gain_hits,
    ideal_cumulative,
    ideal_list,
    segment_cumsum,
    unit_gains,
    styled,
)
from .trec_syntax import TrecFloatList, TrecGainPairs, TrecValues

#: trec_eval's default multiples of R for Rprec_mult (literal doubles, as in its source).
RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
#: trec_eval's default cutoffs for unj.
UNJ_CUTOFFS = (5, 10, 20)
#: infAP's smoothing constant (trec_eval INFAP_EPSILON).
INFAP_EPSILON = 0.00001


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


# -------------------------------------------------------------------------------- judged-only AP


@measure("infAP", params={"rel": REL}, trec=(TrecName("infAP"),))
def inferred_ap(b: RankedBatch, *, rel: int) -> FloatArray:
    """Inferred average precision: AP estimated from incomplete judgments (negative qrels = pooled, unjudged).

    Positions j are 0-based over the whole ranking (documents outside the pool take up positions
    but are never counted). At the relevant document at position j, with s relevant documents at
    positions <= j, and nr judged non-relevant and u pooled-unjudged ones above it, add
    1 if j = 0, else 1/(j+1) + (j/(j+1)) * ((s-1+nr+u)/j) * ((s-1+eps)/(s-1+nr+2*eps)), eps = 1e-5.
    infAP = sum / R.

    Edge cases: R = 0 gives 0; no relevant retrieved gives 0. Because of eps, infAP differs from AP
    in the last digits even with complete judgments.

    Reference: Yilmaz & Aslam, "Estimating average precision with incomplete and imperfect
    judgments", CIKM 2006; trec_eval ``infAP``.
    """
    hits = b.hits(rel)
    before = hits.position - 1.0  # s - 1
    nonrel = b.nonrelevant_hits(rel).above(hits.row, hits.query)
    unjudged = Hits.of_rows(np.flatnonzero(b.labels == UNJUDGED), b.offsets).above(hits.row, hits.query)
    j = (hits.rank - 1).astype(np.float64)
    first = j == 0
    jj = np.where(first, 1.0, j)  # any non-zero value: the j = 0 rows are replaced below
    term = 1.0 / (jj + 1.0) + (jj / (jj + 1.0)) * ((before + nonrel + unjudged) / jj) * (
        (before + INFAP_EPSILON) / ((before + nonrel) + 2 * INFAP_EPSILON)
    )
    term = np.where(first, 1.0, term)
    return safe_div(segment_sum(term, hits.query, b.n_queries), b.n_relevant(rel))


@measure("GMBpref", params={"rel": REL}, trec=(TrecName("gm_bpref"),), aggregate="gmean", summary_only=True)
def geometric_bpref(b: RankedBatch, *, rel: int) -> FloatArray:
    """Geometric mean of bpref over queries: exp(mean(log(max(bpref, 1e-5)))).

    Per query this is Bpref; only the summary differs (like GMAP). trec_eval prints it only in the
    summary. A query the run lacks contributes log(1e-5).

    Reference: trec_eval ``gm_bpref``; Robertson, "On GMAP", CIKM 2006.
    """
    return bpref.kernel(b, rel=rel)


# ------------------------------------------------------------------------ cutoff-style precision


@measure(
    "RprecMult",
    params={"mult": Param(float, None, "multiple of R that gives the cutoff", minimum=0.0), "rel": REL},
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
    c = np.floor(mult * b.n_relevant(rel).astype(np.float64) + 0.9).astype(np.int64)
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


@measure(
    "Unj", params={"k": CUTOFF}, cutoff="k", cutoff_required=True,
    trec=(TrecName("unj", cutoff=True, defaults=UNJ_CUTOFFS),),
)
def unjudged_at(b: RankedBatch, *, k: int) -> FloatArray:
    """Unjudged fraction at k: documents in ranks 1..k without a judgment (or with a negative one), / k.

    The denominator is always k (missing ranks count as judged). An empty ranking gives 0. It does
    not depend on the relevance threshold.

    Reference: trec_eval ``unj``.
    """
    # Every rank 1..min(k, n) that is not judged.
    unjudged = np.minimum(b.num_ret, k) - b.hits(0).upto(k)
    return unjudged / float(k)


def _recall_points(value: Any) -> tuple[float, ...]:
    points = tuple(float(v) for v in value)
    if not points or any(isinstance(v, bool) for v in value):
        raise ValueError(f"expected a non-empty tuple of recall levels; got {value!r}")
    if any(not 0.0 <= p for p in points):
        raise ValueError(f"recall levels must be >= 0; got {value!r}")
    return points


@measure(
    "IPrecAvg",
    params={"points": Param(tuple, RECALL_POINTS, "recall levels whose interpolated precision is averaged",
                            convert=_recall_points),
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


# ------------------------------------------------------------------------------ gain-based measures


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
    ideal_cost = segment_cumsum(np.maximum(ideal.gain, 1.0), ideal.offsets, ideal.segment)
    cost = ideal.prefix(ideal_cost, within, hits.query) + (hits.rank - within)
    gained = segment_cumsum(gain, hits.offsets, hits.query)
    term = gain / np.log2(2.0 + cost - gained)
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
    An empty ranking gives 0.

    Reference: Järvelin & Kekäläinen, TOIS 2002; trec_eval ``dcg`` (explicit -m only).
    """
    hits, gain = gain_hits(b, gains)
    gain = styled(gain, dcg)
    keep = gain != 0
    if k is not None:
        keep &= hits.rank <= k
    return segment_sum(gain[keep] / discount(hits.rank[keep]), hits.query[keep], b.n_queries)


@measure(
    "IDCG", params={"k": CUTOFF, "dcg": DCG_STYLE, "gains": GAINS_PARAM}, cutoff="k",
    trec=(TrecName("ideal_dcg", syntax=TrecGainPairs()),),
)
def ideal_dcg(b: RankedBatch, *, k: int | None, dcg: str, gains: Gains | None) -> FloatArray:
    """Ideal DCG: the DCG of the ideal list (all positive gains judged, largest first), over its top k.

    Without a cutoff the whole ideal list counts, however short the ranking. No positive gain
    judged gives 0. ``dcg='exp-log2'`` uses 2^gain - 1, as DCG does.

    Reference: trec_eval ``ideal_dcg`` (explicit -m only).
    """
    ideal = ideal_list(b, gains)
    keep = slice(None) if k is None else ideal.position <= k
    step = styled(ideal.gain[keep], dcg) / discount(ideal.position[keep])
    return segment_sum(step, ideal.segment[keep], b.n_queries)


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
    running, final = discounted_cumulative(b, gains)  # at each of ``hits``
    ideal_running, ideal_total = ideal_cumulative(b, gains)
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
    _, final = discounted_cumulative(b, gains)
    ideal_running, ideal_total = ideal_cumulative(b, gains)
    change = ideal.position == ideal.length[ideal.segment]  # the last entry of each list
    change[:-1] |= ideal.gain[1:] != ideal.gain[:-1]  # (the next entry is in the same list otherwise)
    seg, c = ideal.segment[change], ideal.position[change]
    upto = np.minimum(c, n_ret[seg])
    dcg_at = np.where(upto == n_ret[seg], final[seg], dcg_upto(b, gains, seg, upto))
    total = segment_sum(dcg_at / ideal_running[change], seg, b.n_queries)
    count = segment_count(change, ideal.segment, b.n_queries)
    tail = (ideal.length > 0) & (n_ret >= ideal.length + 2)
    total = total + np.where(tail, safe_div(final, ideal_total), 0.0)
    value = safe_div(total, count + tail)
    return np.where(b.n_relevant(rel) > 0, value, 0.0)


@measure(
    "RBP", params={"p": Param(float, 0.8, "persistence: the probability of looking at the next rank", minimum=0.0),
                   "gains": GAINS_PARAM},
    trec=(TrecName("rbp", preset=(("p", 0.9),), syntax=TrecGainPairs(extra=("p",))),),
)
def rbp(b: RankedBatch, *, p: float, gains: Gains | None) -> FloatArray:
    """Rank-biased precision: (1 - p) * sum over ranks i of gain_i * p^(i-1), without residual.

    Gains are the judged levels (or custom gains), rescaled per query to [0, 1] when any gain of the
    query's gain table is below 0 or above 1: g -> (g - min) / (max - min), where the table has an
    entry for each level 0 .. (largest judged level) and for each custom level. Binary judgments
    are used as they are; a query judged 0-3 uses level / 3. Unjudged documents gain 0.

    trec_eval's default p is 0.9 (``rbp`` is RBP(p=0.9)); ir_measures' is 0.8, our canonical one.
    trec_eval 10 reads its min/max uninitialised (the value then depends on the other measures
    requested); we compute what it intends, which matches its ``-m all_trec`` output.

    Edge cases: an empty ranking gives 0; a degenerate table (max == min) gives gain 0.

    Reference: Moffat & Zobel, "Rank-biased precision for measurement of retrieval effectiveness",
    TOIS 2008.
    """
    hits, gain = unit_gains(b, gains)  # the judged rows: unjudged ones gain 0
    keep = gain != 0
    powers = _powers(p, int(b.num_ret.max(initial=0)))
    total = segment_sum(gain[keep] * powers[hits.rank[keep] - 1], hits.query[keep], b.n_queries)
    return (1.0 - p) * total


@measure(
    "RBPResid",
    params={"p": Param(float, 0.8, "persistence: the probability of looking at the next rank", minimum=0.0)},
    trec=(TrecName("rbp_resid", preset=(("p", 0.9),)),),
)
def rbp_residual(b: RankedBatch, *, p: float) -> FloatArray:
    """RBP residual: the RBP weight that unjudged documents and the unseen tail could still add.

    p^n + (1 - p) * sum of p^(i-1) over the ranks i of unjudged documents (not in the qrels, or
    negative). When no retrieved document is unjudged the value is 0, as in trec_eval, even though
    the tail weight p^n is not. An empty ranking gives 0.

    Reference: Moffat & Zobel, TOIS 2008; trec_eval ``rbp_resid`` (fixed p = 0.9, no parameters).
    """
    powers = _powers(p, int(b.num_ret.max(initial=0)))
    # Every row's weight, with the judged rows' weight set to 0.0 rather than masked out: adding an
    # exact 0.0 changes no sum, and unjudged rows are usually nearly all the rows.
    weight = powers[b.rank - 1]
    judged = b.hits(0)
    weight[judged.row] = 0.0
    total = np.bincount(b.segment, weights=weight, minlength=b.n_queries)
    has = b.num_ret > judged.count
    return np.where(has, powers[b.num_ret] + (1 - p) * total, 0.0)


# ------------------------------------------------------------------------------- Robertson's yaap


@measure("YAAP", params={"rel": REL}, trec=(TrecName("yaap"),))
def yaap(b: RankedBatch, *, rel: int) -> FloatArray:
    """Yet another AP: log((1 + S) / (1 + R - S)), where S = sum over relevant retrieved of m / r_m.

    S is R times AP, so YAAP grows with AP but is unbounded at both ends and better suited to
    averaging. R = 0 gives log(1) = 0. An empty ranking with R > 0 gives log(1 / (1 + R)) < 0,
    as trec_eval gives for a query the run lacks (it is not reset to 0).

    Reference: Robertson, "On smoothing average precision", ECIR 2012; trec_eval ``yaap``.
    """
    hits = b.hits(rel)
    s = segment_sum(hits.position / hits.rank, hits.query, b.n_queries)
    return np.log((1.0 + s) / (1.0 + b.n_relevant(rel) - s))


# ------------------------------------------------------------------------------- set-based measures


@measure(
    "Utility",
    params={
        "rel_ret": Param(float, 1.0, "worth of each relevant document retrieved"),
        "nonrel_ret": Param(float, -1.0, "worth of each non-relevant document retrieved"),
        "rel_missed": Param(float, 0.0, "worth of each relevant document not retrieved"),
        "nonrel_missed": Param(float, 0.0, "worth of each non-relevant document not retrieved"),
        "collection_size": Param(int, 0, "documents in the collection (trec_eval -N)", minimum=0),
        "rel": REL,
    },
    trec=(TrecName("utility", syntax=TrecValues(("rel_ret", "nonrel_ret", "rel_missed", "nonrel_missed"))),),
)
def utility(
    b: RankedBatch, *, rel_ret: float, nonrel_ret: float, rel_missed: float, nonrel_missed: float,
    collection_size: int, rel: int,
) -> FloatArray:
    """Linear utility: a weighted count of the four cells of the retrieved x relevant table.

    rel_ret * nrr + nonrel_ret * (n - nrr) + rel_missed * (R - nrr)
    + nonrel_missed * (N + nrr - n - R), with N = ``collection_size`` (default 0, as trec_eval
    without -N). Defaults 1, -1, 0, 0 give nrr - (n - nrr). The summary is the mean, not the sum.

    Edge cases: a query the run lacks gives 0 (trec_eval resets it), whatever the weights; an empty
    ranking of a query the run has gives the formula (rel_missed * R + nonrel_missed * (N - R)).

    Reference: trec_eval ``utility`` (TREC filtering track linear utility).
    """
    nrr = b.n_relevant_retrieved(rel).astype(np.float64)
    n = b.num_ret.astype(np.float64)
    R = b.n_relevant(rel).astype(np.float64)
    value = (rel_ret * nrr + nonrel_ret * (n - nrr) + rel_missed * (R - nrr)
             + nonrel_missed * (collection_size + nrr - n - R))
    return np.where(b.in_run, value, 0.0)


@measure(
    "SetP",
    params={"relative": Param(bool, False, "divide by min(n, R) instead of n (trec_eval set_relative_P)"),
            "rel": REL},
    aliases=(("SetRelP", {"relative": True}),),
    trec=(TrecName("set_P"), TrecName("set_relative_P", preset=(("relative", True),))),
)
def set_precision(b: RankedBatch, *, relative: bool, rel: int) -> FloatArray:
    """Set precision: nrr / n, the precision of everything retrieved (not padded to a cutoff).

    With ``relative=True`` (alias SetRelP, trec_eval ``set_relative_P``): nrr / min(n, R), the
    precision against the best achievable with n documents.

    Edge cases: n = 0 gives 0; with ``relative``, R = 0 gives 0 too.

    Reference: trec_eval ``set_P`` and ``set_relative_P``.
    """
    nrr = b.n_relevant_retrieved(rel)
    den = np.minimum(b.num_ret, b.n_relevant(rel)) if relative else b.num_ret
    return safe_div(nrr, den)


@measure("SetR", params={"rel": REL}, trec=(TrecName("set_recall"),))
def set_recall(b: RankedBatch, *, rel: int) -> FloatArray:
    """Set recall: nrr / R, the recall of everything retrieved. R = 0 gives 0.

    Reference: trec_eval ``set_recall``.
    """
    return safe_div(b.n_relevant_retrieved(rel), b.n_relevant(rel))


@measure("SetAP", params={"rel": REL}, trec=(TrecName("set_map"),))
def set_ap(b: RankedBatch, *, rel: int) -> FloatArray:
    """Set AP: (nrr / n) * (nrr / R), set precision times set recall, as nrr^2 / (n * R).

    n = 0 or R = 0 gives 0.

    Reference: trec_eval ``set_map``.
    """
    nrr = b.n_relevant_retrieved(rel).astype(np.float64)
    return safe_div(nrr * nrr, b.num_ret.astype(np.float64) * b.n_relevant(rel))


@measure(
    "SetF", params={"beta": Param(float, 1.0, "weight of recall against precision (used as is, not squared)",
                                  minimum=0.0), "rel": REL},
    trec=(TrecName("set_F", syntax=TrecValues(("beta",))),),
)
def set_f(b: RankedBatch, *, beta: float, rel: int) -> FloatArray:
    """Set F: (beta + 1) * P * Rc / (beta * P + Rc), with P = nrr / n and Rc = nrr / R.

    ``beta`` enters as is, not squared (trec_eval's convention; van Rijsbergen's F_b uses b^2), so
    beta = 1 is the harmonic mean of set precision and recall. nrr = 0 gives 0.

    Reference: trec_eval ``set_F``.
    """
    nrr = b.n_relevant_retrieved(rel)
    precision = safe_div(nrr, b.num_ret)
    recall = safe_div(nrr, b.n_relevant(rel))
    return np.where(nrr > 0, safe_div((beta + 1.0) * precision * recall, beta * precision + recall), 0.0)


@measure(
    "NumNonRelJudgedRet", params={"rel": REL}, trec=(TrecName("num_nonrel_judged_ret"),),
    aggregate="sum", integer=True,
)
def num_nonrel_judged_ret(b: RankedBatch, *, rel: int) -> FloatArray:
    """Number of judged non-relevant documents retrieved (0 <= value < rel); the summary is the sum.

    Unjudged documents are not counted. Reference: trec_eval ``num_nonrel_judged_ret``.
    """
    return b.nonrelevant_hits(rel).count.astype(np.float64)


# ----------------------------------------------------------------------------------- text measure


def _length(value: float) -> int:
    return int(value)  # C's (long) truncation: relstring.20.7 shows 20 documents


_CODES = np.frombuffer(b"0123456789", dtype=np.uint8)


@measure(
    "RelString", params={"length": Param(int, 10, "number of top ranks shown", minimum=0)},
    trec=(TrecName("relstring", syntax=TrecValues(("length",), convert=_length)),), text=True,
)
def relstring(b: RankedBatch, *, length: int) -> list[str]:
    """The judgments of the top ranks as a string: one character per retrieved document.

    '0'-'9' for a judged value, '>' above 9, '-' for a document the qrels do not mention, '.' for
    one they give a negative value. Only the first min(length, n) documents are shown; an empty
    ranking gives ''. A text measure: printed per query (as ``'<chars>'``), never aggregated.

    The characters are computed for all queries at once; only the final split into one str per
    query is done per query (a str per query is what this measure returns).

    Reference: trec_eval ``relstring``.
    """
    shown = segment_heads(b.offsets, length)
    labels = b.labels[shown]
    codes = np.full(len(labels), ord("<"), dtype=np.uint8)  # any other negative value (never built)
    codes[labels == NONPOOL] = ord("-")
    codes[labels == UNJUDGED] = ord(".")
    judged = labels >= 0
    codes[judged] = np.where(labels[judged] > 9, ord(">"), _CODES[np.minimum(labels[judged], 9)])
    text = codes.tobytes().decode("ascii")
    ends = np.cumsum(np.minimum(b.num_ret, length)).tolist()
    return [text[start:end] for start, end in zip([0, *ends[:-1]], ends)]
