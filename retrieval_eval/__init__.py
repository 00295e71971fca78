"""retrieval_eval: ranked-retrieval evaluation with trec_eval's exact numbers.

>>> from retrieval_eval import Document, Judgment, RetrievalEvaluator
>>> ev = RetrievalEvaluator("q1", [Document("d1"), Document("d2")], [Judgment("d2", 1)])
>>> ev.average_precision(), ev.precision(1)
(0.5, 0.0)

The public names are imported on first use, so that ``retrieval-eval --help`` starts without
loading NumPy.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

#: The one place the version is written: pyproject.toml reads it (hatchling's [tool.hatch.version]).
__version__ = "0.3.0.dev0"

#: public name -> module that defines it
_EXPORTS = {
    "Document": "model",
    "Judgment": "model",
    "RetrievalEvalError": "model",
    "InputFormatError": "model",
    "InputTypeError": "model",
    "InputWarning": "model",
    "RetrievalEvaluator": "evaluators",
    "SetEvaluator": "evaluators",
    "evaluate": "evaluators.one_call",
    "preferences_evaluator": "evaluators.preferences",
    "compare": "analysis.comparison",
    "report": "report",  # the package, which is callable: retrieval_eval.report(qrels, runs, output=...)
    "Comparison": "analysis.comparison",
    "Measure": "measures",
    "UnknownMeasureError": "measures",
    "InvalidParameterError": "measures",
    "MeasureError": "measures",
    "parse": "measures",
    "parse_all": "measures",
    "TrecFormatError": "io.trec",
    "read_qrels": "io.trec",
    "read_run": "io.trec",
    "write_qrels": "io.trec",
    "write_run": "io.trec",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 (built from _EXPORTS, the one list of public names)

#: The subpackages and public modules, in pipeline order: what ``dir(retrieval_eval)`` shows beside ``__all__``.
_SUBMODULES = (
    "model", "io", "engine", "measures", "evaluators", "analysis", "report", "harness", "labels", "integrations",
    "cli",
    "data", "plotting", "spark", "testing",
    "fusion",
)


def __getattr__(name: str) -> _Any:
    if name in _EXPORTS:
        value = getattr(_importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'retrieval_eval' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Only what a user may rely on: the public names, the version and the subpackages."""
    return sorted([*__all__, "__version__", *_SUBMODULES])


if _TYPE_CHECKING:  # the lazy names above, for type checkers (``X as X``: an explicit re-export)
    from .analysis.comparison import Comparison as Comparison
    from .analysis.comparison import compare as compare
    from .evaluators import RetrievalEvaluator as RetrievalEvaluator
    from .evaluators import SetEvaluator as SetEvaluator
    from .evaluators.one_call import evaluate as evaluate
    from .io.trec import TrecFormatError as TrecFormatError
    from .io.trec import read_qrels as read_qrels
    from .io.trec import read_run as read_run
    from .io.trec import write_qrels as write_qrels
    from .io.trec import write_run as write_run
    from .measures import InvalidParameterError as InvalidParameterError
    from .measures import Measure as Measure
    from .measures import MeasureError as MeasureError
    from .measures import UnknownMeasureError as UnknownMeasureError
    from .measures import parse as parse
    from .measures import parse_all as parse_all
    from .model import Document as Document
    from .model import InputFormatError as InputFormatError
    from .model import InputTypeError as InputTypeError
    from .model import InputWarning as InputWarning
    from .model import Judgment as Judgment
    from .model import RetrievalEvalError as RetrievalEvalError
