"""FLAGR's rank-aggregation methods (pyflagr 1.0.21), registered under ``flagr-*`` names.

Importing this module registers them all; :mod:`.methods` imports it.
"""

from __future__ import annotations

from . import flagr_agglomerative, flagr_dibra, flagr_kemeny, flagr_linear, flagr_markov, flagr_pairwise, flagr_rra

__all__ = ["flagr_agglomerative", "flagr_dibra", "flagr_kemeny", "flagr_linear", "flagr_markov", "flagr_pairwise",
           "flagr_rra"]
