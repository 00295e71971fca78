"""Run fusion: several runs' rankings combined into one (hybrid search, rank aggregation).

- :mod:`.candidates`: :class:`Candidates`, the union of the runs' documents with each run's scores and ranks;
- :mod:`.registry`: the methods by name and :func:`fuse`;
- :mod:`.normalise`: the score normalisations (min-max, max, sum, zmuv, rank, borda);
- :mod:`.scores`, :mod:`.ranks`: the score and rank combinations.
"""

from __future__ import annotations

from .candidates import Candidates, candidates_from_runs
from .registry import METHODS, FusionError, FusionMethod, fuse, fusion_method, get_method

__all__ = ["METHODS", "Candidates", "FusionError", "FusionMethod", "candidates_from_runs", "fuse",
           "fusion_method", "get_method"]
