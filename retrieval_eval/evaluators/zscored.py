"""Per-query values as z-scores (trec_eval ``-Z``): (value - mean) / stddev for each query and measure.

trec_eval converts each query's values before it adds them into the summary, so the summary of a
z-scored measure is its usual summary of the z-scores: the mean for a mean, the sum for a count, and
for a geometric mean (gm_map, gm_bpref) exp of the mean of the z-scores of log(max(x, 1e-5)), the
value trec_eval keeps per query for those. Its rules for a missing entry are kept too: a (query,
measure) the file lacks, or a stddev of 0 with a value other than the mean, gives -1000000; a stddev
of 0 with the value equal to the mean gives 0. ``num_q`` is a count trec_eval makes only in the
summary: it is never converted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..measures import Measure, MeasureError
from ..measures.summary import MIN_GEO_MEAN, sequential_mean, sequential_sum
from ..model import FloatArray

if TYPE_CHECKING:  # the -Z reader loads only when z-scores are given
    from ..io.zscores import ZScores

#: What trec_eval prints for a value it cannot convert (MISSING_ZSCORE_VALUE).
MISSING_ZSCORE = -1_000_000.0

#: Measures trec_eval counts in the summary alone (no per-query value to convert).
_NOT_CONVERTED = frozenset({"NumQ"})


def zscored(zscores: ZScores, key: str, query_ids: np.ndarray, measure: Measure, values: FloatArray) -> FloatArray:
    """The z-scores of ``values`` (one per query of ``query_ids``, bytes) of ``measure``, looked up as ``key``.

    >>> from retrieval_eval.io.zscores import zscores_from_mapping
    >>> from retrieval_eval.measures import parse
    >>> z = zscores_from_mapping({"q1": {"map": (0.25, 0.5)}, "q2": {"map": (0.5, 0.0)}})
    >>> zscored(z, "map", np.array([b"q1", b"q2", b"q3"]), parse("map"), np.array([0.5, 0.5, 0.5])).tolist()
    [0.5, 0.0, -1000000.0]
    """
    if measure.name in _NOT_CONVERTED:
        return values
    if measure.definition.aggregate == "gmean":
        values = np.log(np.maximum(values, MIN_GEO_MEAN))
    known, mean, stddev = zscores.of(key)
    out = np.full(len(values), MISSING_ZSCORE)
    if not len(known):
        return out
    at = np.minimum(np.searchsorted(known, query_ids), len(known) - 1)
    found = known[at] == query_ids
    m, s, x = mean[at[found]], stddev[at[found]], values[found]
    with np.errstate(divide="ignore", invalid="ignore"):
        converted = np.where(s != 0, (x - m) / np.where(s != 0, s, 1.0), np.where(x == m, 0.0, MISSING_ZSCORE))
    out[found] = converted
    return out


def zscored_summary(measure: Measure, z: FloatArray) -> float:
    """The summary of a measure's per-query z-scores, as trec_eval adds them up."""
    how = measure.definition.aggregate
    if measure.name in _NOT_CONVERTED or how == "sum":
        total = sequential_sum(z)
        return 0.0 if total is None else float(total)
    if how == "mean":
        return sequential_mean(z)
    if how == "gmean":
        return float(np.exp(sequential_mean(z))) if len(z) else 0.0
    raise MeasureError(f"z-scores (-Z): the summary of {measure.definition.name} is a {how} mean; z-scores "
                       "are kept for measures summed or averaged as trec_eval does")
