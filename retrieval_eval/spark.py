"""The public path of the Spark integration: :mod:`retrieval_eval.integrations.spark` holds it.

Importing this module imports pyspark (the ``spark`` extra).
"""

from .integrations.spark import RESULT_SCHEMA, evaluate, evaluate_log, session, summarize

__all__ = ["RESULT_SCHEMA", "evaluate", "evaluate_log", "session", "summarize"]
