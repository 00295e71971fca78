"""retrieval_eval: ranked-retrieval evaluation with trec_eval's exact numbers.

>>> from retrieval_eval import Document, Judgment, RetrievalEvaluator
>>> ev = RetrievalEvaluator("q1", [Document("d1"), Document("d2")], [Judgment("d2", 1)])
>>> ev.average_precision(), ev.precision(1)
(0.5, 0.0)

The public names are imported on first use, so that ``retrieval-eval --help`` starts without
loading NumPy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "Document": "model",
    "Judgment": "model",
    "RetrievalEvalError": "model",
    "InputFormatError": "model",
    "InputTypeError": "model",
    "InputWarning": "model",
    "RetrievalEvaluator": "evaluator",
    "SetEvaluator": "evaluator",
    "compare": "comparison",
    "Comparison": "comparison",
    "Measure": "measures",
    "UnknownMeasureError": "measures",
    "InvalidParameterError": "measures",
    "MeasureError": "measures",
    "parse": "measures",
    "parse_all": "measures",
    "TrecFormatError": "trec",
    "read_qrels": "trec",
    "read_run": "trec",
    "write_qrels": "trec",
    "write_run": "trec",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'retrieval_eval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


if TYPE_CHECKING:
    from .comparison import Comparison, compare
    from .evaluator import RetrievalEvaluator, SetEvaluator
    from .measures import InvalidParameterError, Measure, MeasureError, UnknownMeasureError, parse, parse_all
    from .model import (
        Document,
        InputFormatError,
        InputTypeError,
        InputWarning,
        Judgment,
        RetrievalEvalError,
    )
    from .trec import TrecFormatError, read_qrels, read_run, write_qrels, write_run
