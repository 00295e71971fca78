"""retrieval_eval: ranked-retrieval evaluation with trec_eval's exact numbers.

>>> from retrieval_eval import Document, Judgment, RetrievalEvaluator
>>> ev = RetrievalEvaluator("q1", [Document("d1"), Document("d2")], [Judgment("d2", 1)])
>>> ev.average_precision(), ev.precision(1)
(0.5, 0.0)
"""

from __future__ import annotations

from .evaluator import RetrievalEvaluator, SetEvaluator
from .measures import Measure, UnknownMeasureError, parse, parse_all
from .model import Document, InputFormatError, Judgment, RetrievalEvalError
from .trec import TrecFormatError, read_qrels, read_run, write_qrels, write_run

__version__ = "0.1.0"

__all__ = [
    "Document",
    "InputFormatError",
    "Judgment",
    "Measure",
    "RetrievalEvalError",
    "RetrievalEvaluator",
    "SetEvaluator",
    "TrecFormatError",
    "UnknownMeasureError",
    "parse",
    "parse_all",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
]
