"""Rank combinations: each row's ranks in the runs, turned into one score."""

from __future__ import annotations

import numpy as np

from ...model import FloatArray
from .candidates import Candidates
from .registry import FusionError, fusion_method


@fusion_method("rrf", params={"k": 60}, family="rank")
def rrf(c: Candidates, *, k: float) -> FloatArray:
    """RRF (Cormack et al., 2009): the sum of 1 / (k + rank) over the runs that retrieved the document."""
    if not np.isfinite(k) or k < 0:
        raise FusionError(f"RRF's k must be a finite number >= 0; got {k!r}")
    present = c.ranks > 0
    with np.errstate(divide="ignore"):
        total: FloatArray = np.where(present, 1.0 / (k + c.ranks), 0.0).sum(axis=0)
    return total
