"""The objects users hold: :class:`RetrievalEvaluator` (one query) and :class:`SetEvaluator` (many).

- :mod:`.query`: :class:`RetrievalEvaluator`;
- :mod:`.set`: :class:`SetEvaluator` and its constructors;
- :mod:`.options`: the checks of their options (``rel``, cutoffs, ``max_depth``, the readers' ``order``).
"""

from .query import RetrievalEvaluator
from .set import SetEvaluator

__all__ = ["RetrievalEvaluator", "SetEvaluator"]
