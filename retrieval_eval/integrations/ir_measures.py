"""retrieval_eval as an ir_measures provider: ``ir_measures.calc_aggregate`` (and with it PyTerrier's
``pt.Experiment``) computed by this package's engine, with no change to the caller's code.

Importing this module registers the provider under the name ``retrieval_eval`` and puts it first in
``ir_measures.DefaultPipeline``, the pipeline behind ``ir_measures.calc_aggregate``, ``iter_calc``,
``calc`` and ``evaluator``. Measures it does not compute fall through to ir_measures' own providers.

>>> import ir_measures
>>> import retrieval_eval.integrations.ir_measures as provider
>>> provider.register()  # done on import; calling it again changes nothing
>>> ir_measures.DefaultPipeline.providers[0].NAME
'retrieval_eval'
>>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
>>> run = {"q1": {"d1": 1.0, "d2": 2.0}, "q2": {"d3": 0.5}}
>>> sorted((str(m), v) for m, v in ir_measures.calc_aggregate([ir_measures.AP, ir_measures.P @ 1], qrels, run).items())
[('AP', 0.75), ('P@1', 0.5)]
>>> ir_measures.retrieval_eval.supports(ir_measures.nDCG @ 10), ir_measures.retrieval_eval.supports(ir_measures.RBP)
(True, False)

The provider answers, per run, the queries that are in both the qrels and the run (a query the run
names with no documents is an empty ranking); the ir_measures evaluator then gives every other qrels
query the measure's default (0), as it does for pytrec_eval.
It declares support only for measures whose meaning is ir_measures' own; the differences that remain
are this package's documented conventions (docs/ir-measures.md lists them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..model import MissingExtraError

try:
    import ir_measures
    from ir_measures.providers import Evaluator, Provider
    from ir_measures.util import Metric, QrelsConverter, RunConverter
except ImportError:
    raise MissingExtraError(
        "retrieval_eval.integrations.ir_measures needs ir_measures: pip install 'retrieval-evaluator[ir_measures]'"
    ) from None

from ..evaluators import SetEvaluator
from ..measures import Measure, MeasureError, parse
from ..model import RetrievalEvalError

__all__ = ["PROVIDER", "RetrievalEvalProvider", "register", "unregister"]

#: ir_measures measure names (after aliases: MAP is AP, NumRelRet is NumRet) computed here with
#: ir_measures' meaning. Left out on purpose: RBP (ir_measures uses raw grades as gains, we rescale
#: them per query as trec_eval 10 does) and the intent-aware measures (they need the subtopic column,
#: which ir_measures' dict form of the qrels drops).
SUPPORTED_NAMES = frozenset({
    "AP", "Bpref", "ERR", "infAP", "IPrec", "Judged", "nDCG", "NumQ", "NumRel", "NumRet", "P", "R", "Rprec",
    "RR", "SetAP", "SetF", "SetP", "SetR", "Success",
    "SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ", "BPM",
})


def translate(measure: Any) -> Measure | None:
    """Our measure for an ir_measures measure, or None when it is not computed here with its meaning.

    >>> import ir_measures
    >>> str(translate(ir_measures.nDCG(dcg="exp-log2") @ 10))
    "nDCG(dcg='exp-log2')@10"
    >>> translate(ir_measures.RBP) is None
    True
    """
    if getattr(measure, "NAME", None) not in SUPPORTED_NAMES:
        return None
    try:
        return parse(str(measure))
    except (MeasureError, RetrievalEvalError, ValueError):
        return None


class RetrievalEvalEvaluator(Evaluator):
    """The qrels of one evaluator, as dicts, and the measures translated once; one build per run."""

    def __init__(self, measures: Iterable[Any], qrels: Mapping[str, Mapping[str, int]]) -> None:
        pairs = []
        for measure in measures:
            ours = translate(measure)
            if ours is None:
                raise ValueError(f"the retrieval_eval provider does not compute {measure}")
            pairs.append((measure, ours))
        super().__init__([m for m, _ in pairs], set(qrels))
        self._pairs = pairs
        self._qrels = qrels

    def _iter_calc(self, run: Any) -> Iterator[Any]:
        run_dict = RunConverter(run).as_dict_of_dict()  # type: ignore[no-untyped-call]
        evaluator = SetEvaluator.from_dict(self._qrels, run_dict)
        values = [(measure, evaluator.array(ours)) for measure, ours in self._pairs]
        for i, query_id in enumerate(evaluator.query_ids):
            if query_id not in run_dict:
                continue  # left to ir_measures, which gives it the measure's default (as for pytrec_eval)
            for measure, column in values:
                yield Metric(query_id=query_id, measure=measure, value=float(column[i]))


class RetrievalEvalProvider(Provider):
    """retrieval_eval's engine: trec_eval's numbers, vectorised over every query of a run.

    https://pypi.org/project/retrieval-evaluator/
    """

    NAME = "retrieval_eval"

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]

    def supports(self, measure: Any) -> bool:
        measure.validate_params()
        return translate(measure) is not None

    def _evaluator(self, measures: Iterable[Any], qrels: Any) -> RetrievalEvalEvaluator:
        qrels_dict = QrelsConverter(qrels).as_dict_of_dict()  # type: ignore[no-untyped-call]
        return RetrievalEvalEvaluator(measures, qrels_dict)

    def install_instructions(self) -> str:
        return "pip install 'retrieval-evaluator[ir_measures]'"


#: The one provider instance: ``ir_measures.providers.registry['retrieval_eval']`` and
#: ``ir_measures.retrieval_eval``.
PROVIDER = RetrievalEvalProvider()


def register(*, first: bool = True) -> None:
    """Register the provider with ir_measures (again); with ``first``, put it first in the default pipeline.

    Done on import. Calling it twice changes nothing; ``first=False`` registers the provider by name
    (``ir_measures.retrieval_eval``) and leaves the default pipeline as it is.
    """
    ir_measures.providers.register(PROVIDER)  # type: ignore[no-untyped-call]
    ir_measures.retrieval_eval = PROVIDER  # type: ignore[attr-defined]
    if first:
        unregister()
        ir_measures.DefaultPipeline.providers.insert(0, PROVIDER)


def unregister() -> None:
    """Take the provider out of ir_measures' default pipeline (it stays usable by name).

    Any provider named ``retrieval_eval`` is taken out, also one from an earlier import of this module.

    >>> import ir_measures
    >>> unregister()
    >>> [p.NAME for p in ir_measures.DefaultPipeline.providers].count("retrieval_eval")
    0
    >>> register()
    >>> ir_measures.DefaultPipeline.providers[0] is PROVIDER
    True
    """
    pipeline = ir_measures.DefaultPipeline.providers
    pipeline[:] = [p for p in pipeline if getattr(p, "NAME", None) != RetrievalEvalProvider.NAME]


register()
