"""The public path of the Spark integration: :mod:`retrieval_eval.integrations.spark` holds it.

Importing this module imports pyspark (the ``spark`` extra).
"""

from .integrations.spark import RESULT_SCHEMA as RESULT_SCHEMA
from .integrations.spark import evaluate as evaluate
from .integrations.spark import evaluate_log as evaluate_log
from .integrations.spark import session as session
from .integrations.spark import summarize as summarize

__all__ = ["RESULT_SCHEMA", "evaluate", "evaluate_log", "session", "summarize"]
