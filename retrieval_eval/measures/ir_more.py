"""Measures trec_eval lacks: ERR (gdeval, as ir_measures computes it), Judged (ir_measures) and F1 (FLAGR).

Same contract as :mod:`.catalog`: one decorated kernel per measure, vectorised over the whole
:class:`~retrieval_eval.ranking.RankedBatch` (no loop over queries or documents), float64 values of
shape ``(n_queries,)``, 0.0 wherever a denominator is 0. Notation as in :mod:`.catalog`: R relevant
judgments (value >= rel), n documents retrieved, rel@k relevant documents in ranks 1..k, g_i the
judged grade of the document at rank i (0 when it is not judged or judged negative).

References: ``ir_measures`` 0.4.3 (``measures/err.py`` with ``providers/gdeval_provider.py`` and
``bin/gdeval.pl``; ``measures/judged.py`` with ``providers/judged_provider.py``), Chapelle et al.
CIKM 2009, and the FLAGR worked example for F1.
"""

from __future__ import annotations

import numpy as np

from ..ranking import FloatArray, RankedBatch, safe_div, segment_sum
from .base import REL, Param, measure
from .catalog import CUTOFF

#: gdeval's ``$MAX_JUDGMENT``: the grade g_max that ERR's stopping probabilities are scaled by.
GDEVAL_MAX_GRADE = 4


@measure(
    "ERR",
    params={
        "k": CUTOFF,
        "max_rel": Param(
            int, GDEVAL_MAX_GRADE,
            "largest grade g_max: R_i = (2^g - 1) / 2^g_max (gdeval's fixed 4); larger grades count as g_max",
            minimum=1,
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
    give 0.0. Since g is clipped, R_i < 1, so every later rank keeps a non-zero weight.

    Reference: Chapelle, Metzler, Zhang & Grinspan, "Expected reciprocal rank for graded
    relevance", CIKM 2009; gdeval.pl (TREC Web track) as shipped with ir_measures.
    """
    # Only documents with R_i > 0 (graded >= 1) add to the sum or shrink the decay, so the product
    # runs over them.
    hits = b.hits(1)
    if k is not None:
        hits = hits.where(hits.rank <= k)
    grade = np.minimum(b.labels[hits.row], max_rel)
    stop = (np.exp2(grade.astype(np.float64)) - 1.0) / 2.0**max_rel
    seg, rank = hits.query, hits.rank
    # prod_{j<i} (1 - R_j) per segment, as exp of an exclusive running sum of log1p(-R_j).
    log_keep = np.log1p(-stop)
    running = np.cumsum(log_keep)
    exclusive = running - log_keep
    first = hits.offsets[:-1]
    decay = np.exp(exclusive - exclusive[first[seg]]) if len(seg) else np.zeros(0)
    return segment_sum(stop / rank * decay, seg, b.n_queries)


@measure("Judged", params={"k": CUTOFF}, cutoff="k")
def judged_at(b: RankedBatch, *, k: int | None) -> FloatArray:
    """Judgment rate at k: the fraction of the top min(k, n) retrieved documents that are judged.

    Judged@k = #{i <= min(k, n) : document i has a judgment >= 0} / min(k, n). The denominator is
    min(k, n) as in ir_measures (a short ranking is not penalised; trec_eval's ``unj`` divides by k
    instead); without a cutoff it is n. A document whose qrels value is negative counts as unjudged
    ("pooled but not judged", as trec_eval's ``unj`` and ``-J`` treat it); ir_measures
    counts any qrels entry, negative ones included. Ranking order is trec_eval's (ties by doc_id
    descending; ir_measures' Judged breaks ties by doc_id ascending). Independent of ``rel``.

    Edge cases: an empty ranking gives 0.0 (ir_measures divides by zero there); k beyond the
    ranking divides by n.

    Reference: ir_measures ``Judged`` (judged_provider, after OpenNIR's judged@k).
    """
    judged = b.hits(0)
    count = judged.count if k is None else judged.upto(k)
    depth = b.num_ret if k is None else np.minimum(b.num_ret, k)
    return safe_div(count, depth)


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
