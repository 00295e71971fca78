"""The measure catalogue: one decorated, vectorised kernel per measure.

Every kernel takes a :class:`~retrieval_eval.ranking.RankedBatch` and keyword parameters and returns
float64 values of shape ``(n_queries,)``, computed over all queries at once (no loop over queries or
documents). Definitions follow trec_eval 10.0 (``reference/trec_eval-semantics.md``); notation:
R = relevant judged documents (value >= rel), NR = judged non-relevant (0 <= value < rel),
n = documents retrieved, rel@k = relevant documents in ranks 1..k, r_m = rank of the m-th relevant
retrieved document.

Registration order is trec_eval's print order; measures trec_eval lacks come last.
"""

from __future__ import annotations

import numpy as np

from ..ranking import FloatArray, IntArray, RankedBatch, range_max, safe_div, segment_sum
from .base import REL, Param, TrecName, measure
from .gains import DCG_STYLE, GAINS_PARAM, Gains, gain_hits, ideal_list, styled
from .trec_syntax import TrecGainPairs

#: trec_eval's default cutoffs for P, recall, map_cut, ndcg_cut and relative_P.
P_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: trec_eval's default recall points for iprec_at_recall (0.0, 0.1, ..., 1.0).
RECALL_POINTS = tuple(i / 10 for i in range(11))
#: trec_eval's default cutoffs for success.
SUCCESS_CUTOFFS = (1, 5, 10)

CUTOFF = Param(int, None, "rank cutoff k: only the top k ranks count", minimum=1)


def _lround(x: FloatArray) -> IntArray:
    """C's lround for non-negative values: halves round away from zero (Python's round() would not)."""
    return np.floor(x + 0.5).astype(np.int64)


# ---------------------------------------------------------------------------------------- counts


@measure("NumQ", trec=(TrecName("num_q"),), aggregate="sum", integer=True, summary_only=True)
def num_q(b: RankedBatch) -> FloatArray:
    """Number of queries evaluated (1 per query; the summary is the count).

    Qrels queries the run lacks count (they are scored as empty rankings), run queries without
    judgments do not.
    """
    return np.ones(b.n_queries)


@measure(
    "NumRet",
    params={"rel": Param(int, None, "count only documents judged >= rel (ir_measures' NumRet(rel=1))", minimum=0)},
    trec=(TrecName("num_ret"),), aggregate="sum", integer=True,
)
def num_ret(b: RankedBatch, *, rel: int | None) -> FloatArray:
    """Number of documents retrieved, n (after -M and -J); the summary is the sum.

    Counts every ranked document, judged or not. A query missing from the run retrieves 0.
    ``NumRet(rel=r)`` counts only the retrieved documents judged >= r, as ir_measures spells
    NumRelRet; the relevance level (-l) does not turn this filter on.
    """
    if rel is not None:
        return b.n_relevant_retrieved(rel).astype(np.float64)
    return b.num_ret.astype(np.float64)


@measure("NumRel", params={"rel": REL}, trec=(TrecName("num_rel"),), aggregate="sum", integer=True)
def num_rel(b: RankedBatch, *, rel: int) -> FloatArray:
    """Number of relevant judgments R (value >= rel), retrieved or not; the summary is the sum.

    Not reproduced: with -c, trec_eval 10 recounts the summary as the number of judgments > 0,
    ignoring -l (so ``-c -l2`` sums to more than the per-query rows). Our summary is always the sum
    of the rows. With binary judgments, or without -l, the two agree.
    """
    return b.n_relevant(rel).astype(np.float64)


@measure("NumRelRet", params={"rel": REL}, trec=(TrecName("num_rel_ret"),), aggregate="sum", integer=True)
def num_rel_ret(b: RankedBatch, *, rel: int) -> FloatArray:
    """Number of relevant documents retrieved; the summary is the sum.

    Counts ranked documents judged >= rel (rel >= 0). Unjudged and negatively judged documents never
    count. ir_measures spells it ``NumRet(rel=1)``.
    """
    return b.n_relevant_retrieved(rel).astype(np.float64)


# ---------------------------------------------------------------------------- rank-based measures


def _average_precision(b: RankedBatch, rel: int, k: int | None, norm: str = "R") -> FloatArray:
    hits = b.hits(rel)
    if k is not None:
        hits = hits.where(hits.rank <= k)
    # The m-th relevant document is the hit at position m: precision m / r_m, summed in rank order.
    total = segment_sum(hits.position / hits.rank, hits.query, b.n_queries)
    if norm == "retrieved":  # FLAGR: divide by the relevant documents found within the cutoff
        return safe_div(total, hits.count)
    return safe_div(total, b.n_relevant(rel))


@measure(
    "AP",
    params={
        "k": CUTOFF, "rel": REL,
        "norm": Param(str, "R", "denominator: 'R' (trec_eval) or 'retrieved' (relevant found within k, FLAGR)",
                      choices=("R", "retrieved")),
    },
    cutoff="k", aliases=("MAP",),
    trec=(TrecName("map"), TrecName("map_cut", cutoff=True, defaults=P_CUTOFFS)),
)
def average_precision(b: RankedBatch, *, k: int | None, rel: int, norm: str) -> FloatArray:
    r"""Average precision: (1/R) * sum over relevant retrieved documents of m / r_m.

    With a cutoff k (trec_eval ``map_cut_k``) only relevant documents at ranks <= k contribute, and
    the sum is still divided by R. Relevant documents never retrieved contribute 0.
    R = 0 gives 0. ``AP(norm='retrieved')@k`` divides instead by the number of relevant documents
    within the top k (the FLAGR variant); none found gives 0.

    Reference: Buckley & Voorhees, "Evaluating evaluation measure stability", SIGIR 2000.
    """
    return _average_precision(b, rel, k, norm)


@measure("GMAP", params={"rel": REL}, trec=(TrecName("gm_map"),), aggregate="gmean", summary_only=True)
def geometric_map(b: RankedBatch, *, rel: int) -> FloatArray:
    """Geometric mean of AP over queries: exp(mean(log(max(AP, 1e-5)))).

    Per query this is AP; only the summary differs. The 1e-5 floor (trec_eval's MIN_GEO_MEAN) keeps
    a query with AP = 0 from making the whole mean 0.

    Reference: Robertson, "On GMAP", CIKM 2006.
    """
    return _average_precision(b, rel, None)


@measure("Rprec", params={"rel": REL}, aliases=("RPrec",), trec=(TrecName("Rprec"),))
def r_precision(b: RankedBatch, *, rel: int) -> FloatArray:
    """R-precision: rel@R / R, the precision at rank R.

    Ranks beyond the end of the ranking count as non-relevant. R = 0 gives 0.
    """
    R = b.n_relevant(rel)
    return safe_div(b.hits(rel).upto(R), R)


@measure("Bpref", params={"rel": REL}, aliases=("BPref",), trec=(TrecName("bpref"),))
def bpref(b: RankedBatch, *, rel: int) -> FloatArray:
    """Binary preference: (1/R) * sum over relevant retrieved r of (1 - min(nr_r, R) / min(NR, R)).

    nr_r is the number of judged non-relevant documents ranked above r; a relevant document with
    nr_r = 0 adds 1. Unjudged documents are skipped. NR counts every judged non-relevant document,
    retrieved or not; NR = 0 gives rel-retrieved / R. R = 0 gives 0. This is trec_eval's post-2005
    variant (ireval drops relevant documents ranked below the last counted non-relevant one; we do not).

    Reference: Buckley & Voorhees, "Retrieval evaluation with incomplete information", SIGIR 2004.
    """
    R, NR = b.n_relevant(rel), b.n_nonrelevant(rel)
    hits = b.hits(rel)
    nonrel_above = b.nonrelevant_hits(rel).above(hits.row, hits.query)
    seg = hits.query
    penalty = safe_div(np.minimum(nonrel_above, R[seg]), np.minimum(NR, R)[seg])
    return safe_div(segment_sum(1.0 - penalty, seg, b.n_queries), R)


@measure("RR", params={"k": CUTOFF, "rel": REL}, cutoff="k", aliases=("MRR",), trec=(TrecName("recip_rank"),))
def reciprocal_rank(b: RankedBatch, *, k: int | None, rel: int) -> FloatArray:
    """Reciprocal rank: 1 / r_1, the inverse rank of the first relevant document.

    0 when no relevant document is retrieved (within the top k, with a cutoff).
    """
    hits = b.hits(rel)
    has_hit = hits.count > 0
    first_rank = np.zeros(b.n_queries, dtype=np.float64)
    first_rank[has_hit] = hits.rank[hits.offsets[:-1][has_hit]]
    if k is not None:
        first_rank[first_rank > k] = 0
    return safe_div(1.0, first_rank)


@measure(
    "IPrec", params={"recall": Param(float, None, "recall level in [0, 1]", minimum=0.0), "rel": REL},
    cutoff="recall", cutoff_required=True,
    trec=(TrecName("iprec_at_recall", cutoff=True, defaults=RECALL_POINTS, float_cutoffs=True),),
)
def interpolated_precision(b: RankedBatch, *, recall: float, rel: int) -> FloatArray:
    """Interpolated precision at a recall level: the best precision m / r_m over m >= c.

    c = lround(recall * R), rounding halves away from zero (trec_eval 10; v9 and ireval used
    ceil-like rules, so small R can differ). c = 0 takes the best precision anywhere; c > relevant
    retrieved gives 0. An empty ranking gives 0 (trec_eval prints -nan there).
    """
    hits = b.hits(rel)
    precision = hits.position / hits.rank
    c = _lround(recall * b.n_relevant(rel).astype(np.float64))
    best = range_max(precision, hits.offsets[:-1] + np.maximum(c - 1, 0), hits.offsets[1:])
    best[c > hits.count] = 0.0
    return best


@measure(
    "P", params={"k": CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True,
    trec=(TrecName("P", cutoff=True, defaults=P_CUTOFFS),),
)
def precision(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Precision at k: rel@k / k.

    The denominator is always k: ranks past the end of a short ranking count as non-relevant.
    """
    return b.relevant_at(k, rel) / float(k)


@measure(
    "R", params={"k": CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True,
    trec=(TrecName("recall", cutoff=True, defaults=P_CUTOFFS),),
)
def recall(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Recall at k: rel@k / R.

    Relevant documents never retrieved count in R. R = 0 gives 0; a cutoff beyond the ranking counts
    what is there.
    """
    return safe_div(b.relevant_at(k, rel), b.n_relevant(rel))


# ----------------------------------------------------------------------------- gain-based measures


def _discounted(query: IntArray, rank: IntArray, gain: FloatArray, n: int, k: int | None) -> FloatArray:
    """Per query, the sum of gain / log2(rank + 1) over the entries with a non-zero gain (ranks <= k)."""
    keep = gain != 0
    if k is not None:
        keep &= rank <= k
    return segment_sum(gain[keep] / np.log2(rank[keep] + 1.0), query[keep], n)


@measure(
    "nDCG",
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

    Reference: Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", TOIS 2002.
    """
    hits, gain = gain_hits(b, gains)  # the other ranked rows gain 0
    ideal = ideal_list(b, gains)
    gained = _discounted(hits.query, hits.rank, styled(gain, dcg), b.n_queries, k)
    best = _discounted(ideal.segment, ideal.position, styled(ideal.gain, dcg), b.n_queries, k)
    return safe_div(gained, best)


# ------------------------------------------------------------------------------- set-based measures


@measure(
    "Success", params={"k": CUTOFF, "rel": REL}, cutoff="k", cutoff_required=True,
    trec=(TrecName("success", cutoff=True, defaults=SUCCESS_CUTOFFS),),
)
def success(b: RankedBatch, *, k: int, rel: int) -> FloatArray:
    """Success at k: 1 if a relevant document is in the top k, else 0.

    An empty ranking, R = 0 or only unjudged documents in the top k give 0. The mean over queries
    is the fraction of queries answered within k.
    """
    return (b.relevant_at(k, rel) > 0).astype(np.float64)
