"""The objects users hold: :class:`RetrievalEvaluator` (one query) and :class:`SetEvaluator` (many).

- :mod:`.query`: :class:`RetrievalEvaluator`;
- :mod:`.set`: :class:`SetEvaluator`'s constructors, thin adapters over :mod:`retrieval_eval.io`;
- :mod:`.results`: what a built SetEvaluator answers: per-query values, summaries, tables, subsets;
- :mod:`.blocks`: the values and summaries of very many queries, computed a block of queries at a time;
- :mod:`.options`: the checks of their options (``rel``, cutoffs, ``max_depth``, the readers' ``order``).
"""

from .query import RetrievalEvaluator
from .set import SetEvaluator

__all__ = ["RetrievalEvaluator", "SetEvaluator"]
