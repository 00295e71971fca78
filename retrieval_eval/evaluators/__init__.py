"""The objects users hold: :class:`RetrievalEvaluator` (one query) and :class:`SetEvaluator` (many)."""
