"""Set measures: the retrieved documents as an unranked set (set_P, set_recall, set_F, set_map, utility).

The kernels' contract and notation (R, NR, n, nrr, rel@k, r_m) are in :mod:`retrieval_eval.measures.registry`.
"""

from __future__ import annotations

import numpy as np

from ..engine.batch import RankedBatch
from ..engine.segments import safe_div
from ..model import FloatArray
from .params import REL, Param, TrecName
from .registry import measure
from .trec_syntax import TrecValues


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
    "SetP", judged_only=True,
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


@measure("SetAP", judged_only=True, params={"rel": REL}, trec=(TrecName("set_map"),))
def set_ap(b: RankedBatch, *, rel: int) -> FloatArray:
    """Set AP: (nrr / n) * (nrr / R), set precision times set recall, as nrr^2 / (n * R).

    n = 0 or R = 0 gives 0.

    Reference: trec_eval ``set_map``.
    """
    nrr = b.n_relevant_retrieved(rel).astype(np.float64)
    return safe_div(nrr * nrr, b.num_ret.astype(np.float64) * b.n_relevant(rel))


@measure(
    "SetF", judged_only=True, params={"beta": Param(float, 1.0, "weight of recall against precision (used as is, not squared)",
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
