"""The public path of run fusion: :mod:`retrieval_eval.analysis.fusion` holds it.

>>> from retrieval_eval.fusion import fuse, method_names
>>> "rrf" in method_names()
True
"""

from .analysis.fusion import (
    METHODS,
    Candidates,
    FusionError,
    FusionMethod,
    candidates_from_runs,
    fuse,
    fusion_method,
    get_method,
)
from .analysis.fusion.registry import method_names

__all__ = ["METHODS", "Candidates", "FusionError", "FusionMethod", "candidates_from_runs", "fuse", "fusion_method",
           "get_method", "method_names"]
