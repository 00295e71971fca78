"""Score combinations (Fox and Shaw, 1993): each row's normalised scores, summed, counted, or their
extreme or middle value, over the runs that retrieved it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model import FloatArray
from .candidates import Candidates
from .normalise import normalised_scores
from .registry import FusionError, fusion_method

_NORM = {"norm": "min-max"}


def _weights(weights: Any, c: Candidates) -> FloatArray:
    """One finite weight per run (None: all 1)."""
    if weights is None:
        return np.ones(c.n_runs)
    values = np.asarray(weights, dtype=np.float64).ravel()
    if len(values) != c.n_runs or not bool(np.isfinite(values).all()):
        raise FusionError(f"expected {c.n_runs} finite weights, one per run; got {list(weights)}")
    return values


def _filled(c: Candidates, norm: str) -> tuple[FloatArray, FloatArray]:
    """The normalised scores with 0 where a run lacks the row, and how many runs have each row."""
    scores = normalised_scores(c, norm)
    present = ~np.isnan(scores)
    return np.where(present, scores, 0.0), present.sum(axis=0).astype(np.float64)


@fusion_method("combsum", params=_NORM)
def comb_sum(c: Candidates, *, norm: str) -> FloatArray:
    """CombSUM: the sum of the runs' normalised scores (a run that lacks the document adds 0)."""
    total: FloatArray = _filled(c, norm)[0].sum(axis=0)
    return total


@fusion_method("combmnz", params=_NORM)
def comb_mnz(c: Candidates, *, norm: str) -> FloatArray:
    """CombMNZ: CombSUM times the number of runs that retrieved the document."""
    filled, count = _filled(c, norm)
    total: FloatArray = filled.sum(axis=0) * count
    return total
