"""Measures of judged and unjudged documents: Bpref, the unjudged and judged fractions, the RBP residual
and the relstring of judgments.

The kernels' contract and notation (R, NR, n, nrr, rel@k, r_m) are in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

import numpy as np

from ..engine.batch import NONPOOL, UNJUDGED, RankedBatch
from ..engine.segments import long_segments, safe_div, segment_heads, segment_sum
from ..model import FloatArray
from .graded import _powers
from .params import CUTOFF, REL, Param, TrecName
from .registry import measure
from .trec_syntax import TrecValues
from .trec_table import (
    UNJ_CUTOFFS,
)


@measure("Bpref", params={"rel": REL}, aliases=("BPref",), trec=(TrecName("bpref"),))
def bpref(b: RankedBatch, *, rel: int) -> FloatArray:
    """Binary preference: (1/R) * sum over relevant retrieved r of (1 - min(nr_r, R) / min(NR, R)).

    nr_r is the number of judged non-relevant documents ranked above r; a relevant document with
    nr_r = 0 adds 1. Unjudged documents are skipped. NR counts every judged non-relevant document,
    retrieved or not; NR = 0 gives rel-retrieved / R. R = 0 gives 0. This is trec_eval's post-2005
    variant (ireval drops relevant documents ranked below the last counted non-relevant one; we do not).

    Reference: Buckley & Voorhees, "Retrieval evaluation with incomplete information", SIGIR 2004.
    """
    R = b.n_relevant(rel)
    hits = b.hits(rel)
    nonrel_above = b.nonrelevant_above(rel)
    seg = hits.query
    if not nonrel_above.any():  # none above a hit (one document per query): each term is 1 - 0, summed
        return safe_div(hits.count, R)  # exactly (counts of 1.0 are whole numbers)
    terms = 1.0 - safe_div(np.minimum(nonrel_above, R[seg]), np.minimum(b.n_nonrelevant(rel), R)[seg])
    return safe_div(segment_sum(terms, seg, b.n_queries), R)


@measure("GMBpref", params={"rel": REL}, trec=(TrecName("gm_bpref"),), aggregate="gmean", summary_only=True)
def geometric_bpref(b: RankedBatch, *, rel: int) -> FloatArray:
    """Geometric mean of bpref over queries: exp(mean(log(max(bpref, 1e-5)))).

    Per query this is Bpref; only the summary differs (like GMAP). trec_eval prints it only in the
    summary. A query the run lacks contributes log(1e-5).

    Reference: trec_eval ``gm_bpref``; Robertson, "On GMAP", CIKM 2006.
    """
    values: FloatArray = bpref.kernel(b, rel=rel)  # kernels are registered as Callable[..., Any]
    return values


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


@measure(
    "RBPResid",
    params={"p": Param(float, 0.8, "persistence: the probability of looking at the next rank", minimum=0.0,
                       maximum=1.0)},
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
    one they give a negative value. A float grade shows the whole level it reaches: 2.5 as '2' (as
    trec_eval, which reads grades with ``atol``, shows it), 9.5 as '>'. Only the first min(length, n) documents are shown; an empty
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
    # A float grade shows the whole level it reaches (2.5 as '2'); above 9 (9.5 too) is '>'.
    level = np.minimum(labels[judged], 9).astype(np.int64)
    codes[judged] = np.where(labels[judged] > 9, ord(">"), _CODES[level])
    text = codes.tobytes().decode("ascii")
    ends = np.cumsum(np.minimum(b.num_ret, length)).tolist()
    return [text[start:end] for start, end in zip([0, *ends[:-1]], ends)]


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
    depth = b.num_ret if k is None else np.minimum(b.num_ret, k)
    if ("hits", 0) in b._cache or long_segments(b.offsets):
        judged = b.hits(0)
        count = judged.count if k is None else judged.upto(k)
    else:  # short rankings: a running count of the judged rows, read at each query's ends, costs less than
        # finding every judged row's query and rank (the unjudged note at a million one-document sessions)
        before = np.zeros(len(b.labels) + 1, dtype=np.int64)
        np.cumsum(b.labels >= 0, out=before[1:])
        first = b.offsets[:-1]
        count = before.take(first + depth) - before.take(first)
    return safe_div(count, depth)
