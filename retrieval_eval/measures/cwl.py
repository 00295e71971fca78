"""The C/W/L family: SDCG, NERR8, NERR9, NERR10, NERR11, INST, INSQ and BPM, as ir_measures' ``cwl_eval``
provider computes them with ``cwl-eval``.

In the C/W/L framework (Moffat et al.) a user reads rank 1 and, after reading rank i, goes on to rank
i + 1 with probability C_i. Rank i is read with probability P_i = C_1 * ... * C_(i-1) (P_1 = 1); its
weight is W_i = P_i / S with S = P_1 + ... + P_D; the measure is the expected gain per document
read, EU = sum_i W_i * g_i. Each measure is its C_i.

Conventions, shared by every kernel here, found in ir_measures 0.4.3 (``providers/cwl_eval.py``) and
cwl-eval 1.0.12 (``cwl/ruler``) and matched by them:

* **Gain.** A document judged r gains g = (clip(max(r, 0), min_rel, max_rel) - min_rel) /
  (max_rel - min_rel): negative judgments count as 0 (the provider clips them, "following trec_eval"),
  values outside [min_rel, max_rel] are clipped, and the result lies in [0, 1]. A document the qrels
  do not mention gains 0 (cwl-eval's "worse case"). So with min_rel < 0 a document judged 0 or
  negative gains a little, while an unmentioned one gains nothing. ``max_rel`` has no default (the
  provider requires it) and min_rel < max_rel (the provider asserts it).
* **Depth.** The user model runs over exactly D = 1000 ranks (cwl-eval's ``max_n``, which the
  provider does not change): ranks after 1000 are cut off, and a shorter ranking is read on past its
  end with gain 0. Those empty ranks still take weight, so S never depends on the ranking's length,
  and the value of a short ranking is not rescaled.
* **Queries.** A qrels query missing from the run, or with an empty ranking, scores 0 (the provider
  fills in the measure's default, 0, and the formulas give 0 for an empty ranking). Run queries
  without judgments are ignored. The summary is the mean over the qrels queries.
* **Ties.** We rank by score descending, ties by doc_id descending (trec_eval). The provider sorts by
  score with a stable sort, so it breaks ties by the run's input order: its values equal ours when
  the run lists each query's documents in trec_eval's order.

The kernels' contract and notation are in :mod:`retrieval_eval.measures.registry`. They work on the ranked
rows that gain something (g > 0) and on constant tables over the D ranks, never on a padded
``queries x D`` array.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.batch import UNJUDGED, Hits, RankedBatch
from ..engine.segments import safe_div, segment_sum
from ..model import FloatArray, IntArray
from .gains import segment_cumsum
from .graded import _dcg
from .params import CUTOFF, InvalidParameterError, Param
from .registry import measure

#: The ranks the C/W/L user model runs over: cwl-eval's ``max_n``, fixed at 1000 by ir_measures.
CWL_DEPTH = 1000


def _number(value: Any, domain: str) -> float:
    """``value`` as a float; TypeError naming ``domain`` when it is not a real number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"must be {domain}; got {value!r}")
    return float(value)


def _positive(value: Any) -> float:
    """``value`` as a float > 0 (a Param converter; Param.check reports the error it raises)."""
    number = _number(value, "a finite number > 0")
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"must be a finite number > 0; got {value!r}")
    return number


MIN_REL = Param(int, 0, "relevance that gains 0: g = (clip(r, min_rel, max_rel) - min_rel) / (max_rel - min_rel)")
MAX_REL = Param(int, None, "relevance that gains 1 (required, > min_rel); larger judgments gain 1 too")
GOAL = Param(float, 1.0, "T, the total gain the user wants (> 0), in units of one fully relevant document",
             convert=_positive)


# ------------------------------------------------------------------------------- shared machinery


def _gain_scale(name: str, min_rel: int, max_rel: int | None) -> int:
    """``max_rel`` checked against ``min_rel`` (the provider requires it and asserts min_rel < max_rel)."""
    if max_rel is None:
        raise InvalidParameterError(f"{name} needs max_rel, the judgment that gains 1: for example {name}(max_rel=3)")
    if min_rel >= max_rel:
        raise InvalidParameterError(f"{name}: min_rel must be < max_rel; got min_rel={min_rel}, max_rel={max_rel}")
    return max_rel


def _ranked_gains(b: RankedBatch, min_rel: int, max_rel: int) -> tuple[Hits, FloatArray]:
    """The ranked rows within the first D ranks that gain something (g > 0), and their gains g."""

    def compute() -> tuple[Hits, FloatArray]:
        if min_rel >= 0:  # a judgment gains iff it is > min_rel: rows judged >= min_rel + 1 (or 0.5 > 0)
            hits = b.hits_above(min_rel)
        else:  # every qrels entry gains, negative ones (UNJUDGED rows) as if judged 0
            hits = b.hits_at(np.flatnonzero((b.labels >= 0) | (b.labels == UNJUDGED)))
        if hits.rank.size and hits.rank.max() > CWL_DEPTH:
            hits = hits.where(hits.rank <= CWL_DEPTH)
        judged = np.maximum(b.labels[hits.row], 0)
        gain = (np.clip(judged, min_rel, max_rel) - min_rel) / (max_rel - min_rel)
        return hits, gain.astype(np.float64)

    return b._cached(("cwl-gains", min_rel, max_rel), compute)


def _running_product(factor: FloatArray, offsets: IntArray) -> tuple[FloatArray, FloatArray]:
    """(inclusive, exclusive) running products of non-negative ``factor`` within each segment.

    Computed as exp of a running sum of logs, with zero factors counted apart (a zero ends the
    product for the rest of its segment); the exclusive product of a segment's first entry is 1.
    """
    if len(factor) == 0:
        return np.zeros(0), np.zeros(0)
    zero = factor == 0
    logs = segment_cumsum(np.log(np.where(zero, 1.0, factor)), offsets)
    zeros = segment_cumsum(zero.astype(np.float64), offsets)
    inclusive: FloatArray = np.where(zeros > 0, 0.0, np.exp(logs))
    exclusive = np.concatenate(([1.0], inclusive[:-1]))
    starts = offsets[:-1][np.diff(offsets) > 0]
    exclusive[starts] = 1.0
    return inclusive, exclusive


def _previous_rank(hits: Hits) -> IntArray:
    """The rank of the previous hit of the same query; 0 for a query's first hit."""
    previous = np.concatenate(([0], hits.rank[:-1]))
    return np.where(hits.position > 1, previous, 0)


def _last_hit_rank_and_product(hits: Hits, inclusive: FloatArray, n: int) -> tuple[IntArray, FloatArray]:
    """Per query: the rank of its last hit (0 without hits) and the running product there (1 without)."""
    has = hits.count > 0
    last = hits.offsets[1:][has] - 1
    rank = np.zeros(n, dtype=np.int64)
    product = np.ones(n)
    rank[has] = hits.rank[last]
    product[has] = inclusive[last]
    return rank, product


def _stopping_measure(
    b: RankedBatch, hits: Hits, gain: FloatArray, weight: FloatArray, depth: int
) -> FloatArray:
    """EU for C_i = a_i * (1 - g_i) over ranks 1..depth (C = 0 after): the NERR family.

    ``weight`` (depth + 1,) holds A_i = a_1 * ... * a_(i-1) at index i (index 0 unused), so that
    P_i = A_i * prod over the hits j < i of (1 - g_j). Between two hits the product is constant, so
    S = sum over the stretches (r_(t-1), r_t] between hits of the product times the sum of A over
    the stretch, read from the running sum of A; the last stretch runs to ``depth``.
    """
    if hits.rank.size and hits.rank.max() > depth:
        keep = hits.rank <= depth
        hits, gain = hits.where(keep), gain[keep]
    n = b.n_queries
    total = np.concatenate(([0.0], np.cumsum(weight[1:])))  # total[i] = A_1 + ... + A_i
    inclusive, exclusive = _running_product(1.0 - gain, hits.offsets)
    utility = segment_sum(gain * weight[hits.rank] * exclusive, hits.query, n)
    stretches = exclusive * (total[hits.rank] - total[_previous_rank(hits)])
    last_rank, last_product = _last_hit_rank_and_product(hits, inclusive, n)
    reach = segment_sum(stretches, hits.query, n) + last_product * (total[depth] - total[last_rank])
    return safe_div(utility, reach)


def _ranks() -> FloatArray:
    """1, 2, ..., D as floats, at indices 1..D (index 0 holds 0)."""
    return np.arange(CWL_DEPTH + 1, dtype=np.float64)


def _insq_weights(T: float) -> FloatArray:
    """prod over j < i of ((j + 2T - 1) / (j + 2T))^2 = (2T / (i - 1 + 2T))^2, at index i (1..D)."""
    weight = np.zeros(CWL_DEPTH + 1)
    weight[1:] = (2.0 * T / (_ranks()[1:] - 1.0 + 2.0 * T)) ** 2
    return weight


#: The asymptotic series psi_1(x) ~ 1/x + 1/(2x^2) + sum over k of B_2k / x^(2k+1) (Abramowitz & Stegun
#: 6.4.12), as (power of 1/x, coefficient) pairs, through B_12: ample for x >= 20.
_TRIGAMMA_SERIES = ((1, 1.0), (2, 0.5), (3, 1 / 6), (5, -1 / 30), (7, 1 / 42), (9, -1 / 30), (11, 5 / 66),
                    (13, -691 / 2730))


def _inverse_square_sum(start: FloatArray, length: FloatArray) -> FloatArray:
    """sum over n = 0 .. length-1 of 1 / (start + n)^2, for start > 0: psi_1(start) - psi_1(start + length).

    Written as differences that never cancel: the first 20 terms pair up as
    1/a^2 - 1/b^2 = L (a + b) / (a^2 b^2) with b = a + L, and the rest is the difference of the
    asymptotic series of psi_1 at u = start + 20 and v = u + L, each power as
    u^-m - v^-m = u^-m * (1 - (u / v)^m), with 1 - (u / v)^m = -expm1(-m log1p(L / u)). Accurate to
    a few ulps relative, however long or short the stretch and however large ``start``.
    """
    total = np.zeros_like(start)
    for n in range(20):
        a = start + n
        b = a + length
        total += length * (a + b) / (a * a * b * b)
    u = start + 20.0
    shrink = np.log1p(length / u)
    for power, coefficient in _TRIGAMMA_SERIES:
        total += coefficient * u**-power * -np.expm1(-power * shrink)
    return total


# ------------------------------------------------------------------------------- the measures


@measure(
    "SDCG", params={"k": CUTOFF, "dcg": Param(str, "log2", "DCG formulation: linear gain, log2 discount",
                                               choices=("log2",)),
                    "min_rel": MIN_REL, "max_rel": MAX_REL},
    cutoff="k", cutoff_required=True,
)
def scaled_dcg(b: RankedBatch, *, k: int, dcg: str, min_rel: int, max_rel: int | None) -> FloatArray:
    """Scaled DCG: DCG@k of the C/W/L gains over the DCG@k of k fully relevant documents.

    SDCG@k = sum over ranks i <= k of g_i / log2(i + 1), divided by sum over i <= k of
    1 / log2(i + 1): nDCG whose ideal ranking is k documents of gain 1, as if the collection held at
    least k fully relevant documents. In C/W/L terms C_i = log2(i + 1) / log2(i + 2) for i < k and 0
    after. Gains g in [0, 1] come from the judgments, ``min_rel`` and ``max_rel`` (module docstring).

    Edge cases: a cutoff above D = 1000 counts as 1000 (cwl-eval's depth); an empty ranking gives 0.
    ``dcg`` has the one value ir_measures accepts here, 'log2'.

    Reference: Järvelin & Kekäläinen, TOIS 2002; Moffat, "Seven numeric properties of effectiveness
    metrics", AIRS 2013; cwl-eval ``NDCGCWLMetric``.
    """
    hits, gain = _ranked_gains(b, min_rel, _gain_scale("SDCG", min_rel, max_rel))
    depth = min(k, CWL_DEPTH)
    scale = float((1.0 / np.log2(_ranks()[1:depth + 1] + 1.0)).sum())
    return _dcg(hits.query, hits.rank, gain, b.n_queries, depth) / scale


@measure("NERR8", params={"k": CUTOFF, "min_rel": MIN_REL, "max_rel": MAX_REL}, cutoff="k", cutoff_required=True)
def nerr8(b: RankedBatch, *, k: int, min_rel: int, max_rel: int | None) -> FloatArray:
    """Not-but-nearly ERR, Eq. 8: C/W/L with C_i = 1 - g_i for i < k and 0 from rank k on.

    The user stops at a document with probability its gain and never reads past rank k:
    P_i = prod over j < i of (1 - g_j) for i <= k, and NERR8@k = sum_i P_i g_i / sum_i P_i over
    i <= k. Unlike ERR, the value is the expected gain per document read, and the sum of P_i runs
    over all k ranks, including those past the end of a shorter ranking (gain 0, P_i constant).

    Edge cases: a cutoff above D = 1000 counts as 1000; an empty ranking gives 0; a fully relevant
    document (g = 1) ends the reading, so the ranks after it add nothing to either sum.

    Reference: Azzopardi, Mackenzie & Moffat, "ERR is not C/W/L", ICTIR 2021, Eq. 8; cwl-eval
    ``NERReq8CWLMetric``.
    """
    hits, gain = _ranked_gains(b, min_rel, _gain_scale("NERR8", min_rel, max_rel))
    depth = min(k, CWL_DEPTH)
    weight = np.ones(depth + 1)
    return _stopping_measure(b, hits, gain, weight, depth)


@measure("NERR9", params={"k": CUTOFF, "min_rel": MIN_REL, "max_rel": MAX_REL}, cutoff="k", cutoff_required=True)
def nerr9(b: RankedBatch, *, k: int, min_rel: int, max_rel: int | None) -> FloatArray:
    """Not-but-nearly ERR, Eq. 9: C/W/L with C_i = i / (i + 1) * (1 - g_i) for i < k, 0 from rank k on.

    P_i = (1 / i) * prod over j < i of (1 - g_j) for i <= k (the reciprocal-rank discount times the
    chance of not having stopped yet), and NERR9@k = sum_i P_i g_i / sum_i P_i over i <= k, ranks
    past the end of a shorter ranking included with gain 0.

    Edge cases: a cutoff above D = 1000 counts as 1000; an empty ranking gives 0.

    Reference: Azzopardi, Mackenzie & Moffat, ICTIR 2021, Eq. 9; cwl-eval ``NERReq9CWLMetric``.
    """
    hits, gain = _ranked_gains(b, min_rel, _gain_scale("NERR9", min_rel, max_rel))
    depth = min(k, CWL_DEPTH)
    weight = np.zeros(depth + 1)
    weight[1:] = 1.0 / _ranks()[1:depth + 1]
    return _stopping_measure(b, hits, gain, weight, depth)


@measure("NERR10", params={"p": Param(float, 0.9, "persistence phi", minimum=0.0, maximum=1.0),
                           "min_rel": MIN_REL, "max_rel": MAX_REL})
def nerr10(b: RankedBatch, *, p: float, min_rel: int, max_rel: int | None) -> FloatArray:
    """Not-but-nearly ERR, Eq. 10: C/W/L with C_i = p * (1 - g_i), RBP's patience with ERR's stopping.

    P_i = p^(i-1) * prod over j < i of (1 - g_j), and NERR10 = sum_i P_i g_i / sum_i P_i over the
    D = 1000 ranks of the user model (ranks past the end of the ranking gain 0 but count in the
    denominator). p = 0 reads rank 1 only; p = 1 is NERR8@1000.

    Edge cases: an empty ranking gives 0.

    Reference: Azzopardi, Mackenzie & Moffat, ICTIR 2021, Eq. 10; cwl-eval ``NERReq10CWLMetric``.
    """
    hits, gain = _ranked_gains(b, min_rel, _gain_scale("NERR10", min_rel, max_rel))
    weight = np.zeros(CWL_DEPTH + 1)
    weight[1:] = np.power(p, _ranks()[1:] - 1.0)
    return _stopping_measure(b, hits, gain, weight, CWL_DEPTH)


@measure("NERR11", params={"T": GOAL, "min_rel": MIN_REL, "max_rel": MAX_REL})
def nerr11(b: RankedBatch, *, T: float, min_rel: int, max_rel: int | None) -> FloatArray:
    """Not-but-nearly ERR, Eq. 11: C/W/L with C_i = ((i + 2T - 1) / (i + 2T))^2 * (1 - g_i).

    INSQ's goal-sensitive patience times ERR's stopping: P_i = (2T / (i - 1 + 2T))^2 * prod over
    j < i of (1 - g_j), and NERR11 = sum_i P_i g_i / sum_i P_i over the D = 1000 ranks of the user
    model (ranks past the end of the ranking gain 0 but count in the denominator).

    Edge cases: an empty ranking gives 0. T must be > 0.

    Reference: Azzopardi, Mackenzie & Moffat, ICTIR 2021 (cwl-eval's "Equation 11"; ir_measures'
    docstring cites Equation 12); cwl-eval ``NERReq11CWLMetric``.
    """
    hits, gain = _ranked_gains(b, min_rel, _gain_scale("NERR11", min_rel, max_rel))
    return _stopping_measure(b, hits, gain, _insq_weights(T), CWL_DEPTH)


@measure("INSQ", params={"T": GOAL, "min_rel": MIN_REL, "max_rel": MAX_REL})
def insq(b: RankedBatch, *, T: float, min_rel: int, max_rel: int | None) -> FloatArray:
    """INSQ: C/W/L with C_i = ((i + 2T - 1) / (i + 2T))^2, a patience that grows with the goal T.

    C_i does not depend on the gains, so P_i = (2T / (i - 1 + 2T))^2 and INSQ = sum_i P_i g_i /
    sum_i P_i, the denominator running over all D = 1000 ranks of the user model whatever the
    ranking's length.

    Edge cases: an empty ranking gives 0. T must be > 0.

    Reference: Moffat, Scholer & Thomas, "Models and metrics: IR evaluation as a user process",
    ADCS 2012; cwl-eval ``INSQCWLMetric``.
    """
    hits, gain = _ranked_gains(b, min_rel, _gain_scale("INSQ", min_rel, max_rel))
    weight = _insq_weights(T)
    return segment_sum(gain * weight[hits.rank], hits.query, b.n_queries) / float(weight.sum())


@measure("INST", params={"T": GOAL, "min_rel": MIN_REL, "max_rel": MAX_REL})
def inst(b: RankedBatch, *, T: float, min_rel: int, max_rel: int | None) -> FloatArray:
    """INST: C/W/L with C_i = ((i + T + T_i - 1) / (i + T + T_i))^2, T_i = T - (gain in ranks 1..i).

    The user's patience grows with the goal T still unmet: with G_i the gain through rank i and
    c = 2T - G_i, C_i = ((i + c - 1) / (i + c))^2. INST = sum_i P_i g_i / sum_i P_i over the
    D = 1000 ranks of the user model; past the end of the ranking the gain stays G_n.

    Computation: between two gaining documents c is constant, so the product of C_j telescopes to
    ((s + c - 1) / (e + c))^2 over a stretch s..e, and the sum of P_i over the stretch is
    (s + c - 1)^2 * (psi_1(s + c) - psi_1(e + 1 + c)) times the product before it (psi_1 the
    trigamma function, the difference summed without cancellation): the work is per gaining
    document, not per rank. A C_i of 0 (i + c = 1, possible for T <= 1/2) ends the reading; for
    T < 1/4 a C_i can exceed 1, as in cwl-eval.

    Edge cases: an empty ranking gives 0. T must be > 0 (i + c >= 2T keeps every C_i finite).

    Reference: Moffat, Bailey, Scholer & Thomas, "INST: an adaptive metric for information
    retrieval evaluation", ADCS 2015; cwl-eval ``INSTCWLMetric``.
    """
    hits, gain = _ranked_gains(b, min_rel, _gain_scale("INST", min_rel, max_rel))
    n = b.n_queries
    # Stretches ("blocks"): per query one from rank 1 to the first hit, then one from each hit to
    # the next (the last to rank D - 1; C_D is never used). Block index of hit h: h + query + 1.
    block_offsets = hits.offsets + np.arange(n + 1)
    n_blocks = int(block_offsets[-1])
    block_query = np.repeat(np.arange(n, dtype=np.int64), np.diff(block_offsets))
    hit_block = np.arange(len(hits.row), dtype=np.int64) + hits.query + 1
    start = np.ones(n_blocks)
    start[hit_block] = hits.rank
    reached = np.zeros(n_blocks)  # G, the gain through the block's first rank
    reached[hit_block] = segment_cumsum(gain, hits.offsets)
    end = np.concatenate((start[1:], [0.0])) - 1.0
    end[block_offsets[1:] - 1] = CWL_DEPTH - 1.0  # each query's last block
    c = 2.0 * T - reached
    base = start - 1.0 + c
    empty = end < start
    factor = np.ones(n_blocks)
    np.divide(base**2, (end + c) ** 2, out=factor, where=~empty)
    _, before = _running_product(factor, block_offsets)
    inside = np.where(empty, 0.0, base**2 * _inverse_square_sum(start + c, np.maximum(end + 1.0 - start, 0.0)))
    reach = 1.0 + segment_sum(before * inside, block_query, n)
    utility = segment_sum(gain * before[hit_block], hits.query, n)
    return utility / reach


@measure("BPM", params={"k": CUTOFF, "T": GOAL, "min_rel": MIN_REL, "max_rel": MAX_REL}, cutoff="k",
         cutoff_required=True)
def bejeweled(b: RankedBatch, *, k: int, T: float, min_rel: int, max_rel: int | None) -> FloatArray:
    """Bejeweled player model (static): gain per document read, reading until the gain reaches T or rank k.

    C_i = 1 while G_i < T and i < k, else 0 (G_i the gain through rank i, each document costing 1).
    The user reads ranks 1..s with s = min(k, first rank where G_i >= T), and BPM = G_s / s. If the
    ranking never reaches T, s = k: ranks past its end count as read, with gain 0.

    Reaching T is decided exactly, on the integer sum of (clip(r) - min_rel) against
    T * (max_rel - min_rel). cwl-eval compares its running float sum, which can fall an ulp short of
    a T it reaches exactly (six gains of 1/3 add up to 1.9999999999999998 < 2): there it reads on.

    Edge cases: a cutoff above D = 1000 counts as 1000; an empty ranking gives 0. T must be > 0.

    Reference: Zhang, Liu, Li, Zhang, Xu & Ma, "Evaluating web search with a bejeweled player
    model", SIGIR 2017; cwl-eval ``BPMCWLMetric`` (``T``, and ``K`` = k in documents).
    """
    top = _gain_scale("BPM", min_rel, max_rel)
    hits, gain = _ranked_gains(b, min_rel, top)
    n = b.n_queries
    depth = min(k, CWL_DEPTH)
    units = np.clip(np.maximum(b.labels[hits.row], 0), min_rel, top) - min_rel  # gain * (top - min_rel)
    reached = segment_cumsum(units.astype(np.float64), hits.offsets)  # exact for integer grades: sums of integers
    goal = T * float(top - min_rel)
    stops = hits.where((reached >= goal) & (hits.rank <= depth))
    first = stops.offsets[:-1][stops.count > 0]
    stop = np.full(n, depth, dtype=np.int64)
    stop[stops.query[first]] = stops.rank[first]
    read = hits.rank <= stop[hits.query]
    gained = segment_sum(gain[read], hits.query[read], n)
    return gained / stop

