"""Measures as values, their definitions, and the single registry behind parser, CLI, docs and tests.

A :class:`Measure` is a hashable value: a registered name plus the parameters that differ from their
defaults (``P@10``, ``P(rel=2)@10``, ``nDCG(dcg='exp-log2')@10``). Its string round-trips through
:func:`retrieval_eval.measures.parse`.

A :class:`MeasureDef` is what :func:`measure` registers: the vectorised kernel plus everything else the
project needs to know about the measure (parameters, aliases, trec_eval names, how the summary
aggregates it, its documentation). Adding a measure means writing one decorated kernel (in the
module of its family: counts, precision, average_precision, graded, sets, judged, auc, diversity,
cwl, preference) and, for a trec_eval measure, one row of
:data:`~retrieval_eval.measures.trec_table.TREC_TABLE`. Parameters and errors are in
:mod:`~retrieval_eval.measures.params`, the summaries over queries in
:mod:`~retrieval_eval.measures.summary`.

Every kernel takes a :class:`~retrieval_eval.engine.batch.RankedBatch` and keyword parameters and
returns float64 values of shape ``(n_queries,)``, computed over all queries at once (no loop over
queries or documents), with 0.0 wherever a denominator is 0. Notation: R = relevant judged documents
(value >= rel), NR = judged non-relevant (0 <= value < rel), n = documents retrieved, nrr = relevant
retrieved, rel@k = relevant documents in ranks 1..k, r_m = rank of the m-th relevant retrieved document.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from attrs import field, frozen

from ..engine.batch import RankedBatch
from ..model import FloatArray
from . import trec_table
from .params import JUDGED_ONLY, InvalidParameterError, MeasureError, Param, TrecName, UnknownMeasureError
from .summary import Aggregate, Summary

#: ``kernel(batch, **params)``: float64 values of shape (n_queries,), or one str per query for a text measure.
Kernel = Callable[..., Any]


@frozen(eq=False)
class MeasureDef:
    """A registered measure: kernel, parameters and metadata. Create these with :func:`measure`."""

    name: str
    kernel: Kernel
    params: Mapping[str, Param]
    cutoff: str | None  #: the parameter written after ``@``
    cutoff_required: bool
    aliases: tuple[str, ...]
    trec: tuple[TrecName, ...]
    aggregate: Aggregate
    integer: bool  #: printed as an integer (counts)
    summary_only: bool  #: trec_eval prints it only in the ``all`` block
    summary: str  #: one-line definition
    doc: str  #: the full docstring (formula, edge cases, references)
    #: The kernel returns one str per query (relstring): printed per query only, never aggregated.
    text: bool = False
    #: For ``aggregate="weighted"``: ``weight(batch, **params)``, each query's weight in the summary
    #: (0 leaves a query out of it, as GAUC does with single-class queries).
    weight: Kernel | None = None
    #: The kernel reads the qrels' subtopic column (``batch.subtopics``): the diversity measures.
    subtopics: bool = False
    #: The kernel reads preference judgments (``batch.preferences``): trec_eval's ``-R prefs`` measures.
    preferences: bool = False
    #: For ``aggregate="pooled"``: ``pool(batch, **params)``, a block of queries' share of the summary,
    #: and ``pooled(shares)``, the summary from the shares of every block (PooledAUC: score counts).
    pool: Kernel | None = None
    pooled: Callable[[list[Any]], float] | None = None

    def __call__(self, **params: Any) -> Measure:
        return make_measure(self, params)

    def __matmul__(self, cutoff: float) -> Measure:
        if self.cutoff is None:
            raise UnknownMeasureError(f"{self.name} takes no cutoff")
        return make_measure(self, {self.cutoff: cutoff})

    def __str__(self) -> str:
        return self.name

    def trec_name_for(self, measure: Measure) -> TrecName | None:
        """trec_eval's name entry for ``measure``; None if its parameters have no trec_eval spelling."""
        return self._trec_match(measure)[0]

    def _trec_match(self, measure: Measure) -> tuple[TrecName | None, dict[str, Any]]:
        """The trec_eval entry for ``measure`` and the parameters its ``name.params`` string must give."""
        has_cutoff = self.cutoff is not None and measure[self.cutoff] is not None
        for trec in self.trec:
            if trec.cutoff != has_cutoff:
                continue
            preset = dict(trec.preset)
            settable = trec.syntax.names if trec.syntax is not None else ()
            spelled: dict[str, Any] = {}
            for name, spec in self.params.items():
                if name == self.cutoff or (name == "rel" and spec.default is not None):
                    continue  # a threshold rel is trec_eval's -l, which its names do not spell
                expected = preset.get(name, spec.default)
                if measure[name] != expected:
                    if name not in settable:
                        break
                    spelled[name] = measure[name]
            else:
                return trec, spelled
        return None, {}

    def aggregate_values(self, values: FloatArray, weights: FloatArray | None = None, share: Any = None) -> float:
        """The summary over queries, as trec_eval computes it (mean, sum or geometric mean), or the
        ``weights``-weighted mean of a weighted measure (0.0 when every weight is 0)."""
        summary = Summary(self)
        summary.add(values, weights, share)
        return summary.value()


@frozen(cache_hash=True)  # (a RetrievalEvaluator looks each measure up several times a query)
class Measure:
    """A measure with its parameters: hashable, and its string round-trips through ``parse``.

    Only parameters that differ from their defaults are stored, so ``P(rel=1)@10 == P@10``.

    Examples
    --------
    >>> from retrieval_eval.measures import P, parse
    >>> str(P(rel=2) @ 10)
    'P(rel=2)@10'
    >>> parse("P@10") == P @ 10
    True
    """

    name: str
    params: tuple[tuple[str, Any], ...] = field(default=())

    @property
    def definition(self) -> MeasureDef:
        return REGISTRY[self.name]

    def __getitem__(self, key: str) -> Any:
        for name, value in self.params:
            if name == key:
                return value
        return self.definition.params[key].default

    def resolved(self) -> dict[str, Any]:
        """Every parameter, defaults included: the keyword arguments of the kernel."""
        return {name: self[name] for name in self.definition.params}

    def __call__(self, **params: Any) -> Measure:
        return make_measure(self.definition, {**dict(self.params), **params})

    def __matmul__(self, cutoff: float) -> Measure:
        at = self.definition.cutoff
        if at is None:
            raise UnknownMeasureError(f"{self.name} takes no cutoff")
        return self(**{at: cutoff})

    def __str__(self) -> str:
        at = self.definition.cutoff
        inner = ", ".join(f"{k}={v!r}" for k, v in self.params if k != at)
        text = self.name + (f"({inner})" if inner else "")
        cutoff = self[at] if at else None
        return text + (f"@{cutoff!r}" if cutoff is not None else "")

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    @property
    def trec_label(self) -> str | None:
        """trec_eval's name for this measure (``P_10``, ``ndcg``, ``rbp_p=0.95``), or None when it has none."""
        trec, spelled = self.definition._trec_match(self)
        if trec is None:
            return None
        at = self.definition.cutoff
        params = None
        if spelled and trec.syntax is not None:
            params = trec.syntax.write(spelled, {name: self[name] for name in trec.syntax.names})
        return trec.label(self[at] if at else None, params)


def make_measure(definition: MeasureDef, params: Mapping[str, Any]) -> Measure:
    """Validate ``params`` against ``definition`` and build the canonical :class:`Measure`."""
    stored = []
    for name, value in params.items():
        if name not in definition.params:
            known = ", ".join(definition.params) or "none"
            raise UnknownMeasureError(f"{definition.name} has no parameter {name!r}; its parameters: {known}")
        spec = definition.params[name]
        value = spec.check(definition.name, name, value)
        if value != spec.default:
            stored.append((name, value))
    order = list(definition.params)
    stored.sort(key=lambda item: order.index(item[0]))
    return Measure(definition.name, tuple(stored))


#: Every measure by canonical name, in registration order (which is trec_eval's print order).
REGISTRY: dict[str, MeasureDef] = {}
#: Alias -> canonical name.
ALIASES: dict[str, str] = {}
#: Alias -> the parameters it implies (``SetRelP`` is ``SetP(relative=True)``); most aliases imply none.
ALIAS_PARAMS: dict[str, dict[str, Any]] = {}
#: trec_eval name -> (canonical name, TrecName).
TREC_NAMES: dict[str, tuple[str, TrecName]] = {}


def measure(
    name: str,
    *,
    params: Mapping[str, Param] | None = None,
    cutoff: str | None = None,
    cutoff_required: bool = False,
    aliases: tuple[str | tuple[str, Mapping[str, Any]], ...] = (),
    trec: tuple[TrecName, ...] = (),
    aggregate: Aggregate = "mean",
    integer: bool = False,
    summary_only: bool = False,
    text: bool = False,
    weight: Kernel | None = None,
    judged_only: bool = False,
    subtopics: bool = False,
    preferences: bool = False,
    pool: Kernel | None = None,
    pooled: Callable[[list[Any]], float] | None = None,
) -> Callable[[Kernel], MeasureDef]:
    """Register a kernel ``f(batch, **params) -> (n_queries,) float64`` as measure ``name``.

    The kernel computes each query from that query's rows alone: a batch of many queries is handed
    to it in blocks of queries, several blocks at once on several threads (see
    ``evaluators.blocks.in_blocks``), so it reads nothing batch-wide and changes no shared state.
    The kernel's docstring is the measure's documentation: its first line is the one-line definition
    shown by ``retrieval-eval measures``. An alias is a name, or ``(name, {param: value})`` for an
    alias that stands for the measure with those parameters. ``text=True`` marks a kernel returning
    one str per query (printed per query, never aggregated). ``integer=True`` marks a count, printed
    as an integer: its values must be whole numbers (a summed count is added up exactly, and a value
    that is not whole raises :class:`MeasureError`). ``aggregate="weighted"`` needs
    ``weight(batch, **params) -> (n_queries,)``: the summary is then the weighted mean.
    ``judged_only=True`` adds the ``judged_only`` parameter, handled here, not by the kernel;
    ``subtopics=True`` marks a kernel that needs the qrels' subtopic column (``batch.subtopics``).
    """
    if (aggregate == "weighted") != (weight is not None):
        raise TypeError(f"measure {name}: aggregate='weighted' and weight= go together")
    if (aggregate == "pooled") != (pool is not None) or (pool is None) != (pooled is None):
        raise TypeError(f"measure {name}: aggregate='pooled', pool= and pooled= go together")
    alias_names = tuple(a if isinstance(a, str) else a[0] for a in aliases)

    def register(kernel: Kernel) -> MeasureDef:
        doc = (kernel.__doc__ or "").strip()
        if not doc:
            raise TypeError(f"measure {name} needs a docstring")
        all_params = dict(params or {})
        if judged_only:
            all_params["judged_only"] = JUDGED_ONLY
        definition = MeasureDef(
            name=name, kernel=kernel, params=all_params, cutoff=cutoff,
            cutoff_required=cutoff_required, aliases=alias_names, trec=trec, aggregate=aggregate,
            integer=integer, summary_only=summary_only, summary=doc.splitlines()[0], doc=doc, text=text,
            weight=weight, subtopics=subtopics, pool=pool, pooled=pooled, preferences=preferences,
        )
        for key in (name, *alias_names):
            if key in REGISTRY or key in ALIASES:
                raise ValueError(f"measure name {key!r} registered twice")
        REGISTRY[name] = definition
        for alias in aliases:
            if isinstance(alias, str):
                ALIASES[alias] = name
            else:
                ALIASES[alias[0]] = name
                ALIAS_PARAMS[alias[0]] = dict(alias[1])
        for entry in trec:
            TREC_NAMES[entry.name] = (name, entry)
        return definition

    return register


def compute(batch: RankedBatch, measure: Measure) -> FloatArray:
    """Per-query values of ``measure`` on ``batch``: float64 of shape (n_queries,).

    Raises :class:`MeasureError` for a text measure (``definition.text``): see :func:`compute_text`;
    and for a value that is not a finite number, naming its query and the measure: no summary,
    table, test or comparison downstream can use NaN or an infinity.
    """
    definition = measure.definition
    if definition.text:
        raise MeasureError(f"{measure} is a per-query text measure: ask for its text, not its value")
    values = np.asarray(_run_kernel(batch, measure), dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        row = int(np.argmin(finite))
        raise non_finite_error(measure, batch.query_ids[row], float(values[row]))
    return values


def compute_one(batch: RankedBatch, measure: Measure) -> float:
    """``float(compute(batch, measure)[0])`` for a batch of one query (a RetrievalEvaluator's), the same
    kernel on the same arguments: the checks of :func:`compute` run on a measure's first use, after
    which its kernel and arguments are looked up once, since that per-call machinery costs as much
    as the kernel on a short query.
    """
    if batch.ties == "expected":  # (expected values: another kernel, chosen by compute)
        return float(compute(batch, measure)[0])
    plan = _PLANS.get(measure)
    if plan is None:
        value = float(compute(batch, measure)[0])  # (raises for a measure the batch cannot give)
        if not (measure.definition.subtopics or measure.definition.preferences) and len(_PLANS) < _RESOLVED_MAX:  # (those: a check per batch)
            params = dict(_kernel_arguments(batch, measure)[1])
            _PLANS[measure] = (measure.definition.kernel, params, bool(measure.resolved().get("judged_only")))
        return value
    kernel, params, judged_only = plan
    value = float(kernel(batch.judged_only() if judged_only else batch, **params)[0])
    if not math.isfinite(value):
        raise non_finite_error(measure, batch.query_ids[0], value)
    return value


#: Each numeric measure's kernel, keyword arguments and ``judged_only``, for :func:`compute_one`.
_PLANS: dict[Measure, tuple[Callable[..., Any], dict[str, Any], bool]] = {}


def non_finite_error(measure: object, query_id: str, value: float) -> MeasureError:
    """The error for a per-query value that is not a finite number: it names the query and the measure."""
    return MeasureError(
        f"{measure} of query {query_id[:100]!r} is {value!r}, not a finite number; expected a finite value "
        "for every query (a gain beyond the double range, such as 2^g - 1 for a grade g >= 1024, gives one)"
    )


def compute_text(batch: RankedBatch, measure: Measure) -> list[str]:
    """Per-query strings of a text measure (``relstring``), one per query."""
    if not measure.definition.text:
        raise MeasureError(f"{measure} is a numeric measure: ask for its value, not its text")
    return [str(value) for value in _run_kernel(batch, measure)]


def summary_weights(batch: RankedBatch, measure: Measure) -> FloatArray | None:
    """Each query's weight in the summary of a weighted measure (GAUC); None for the others."""
    weight = measure.definition.weight
    if weight is None:
        return None
    batch, params = _kernel_arguments(batch, measure)
    return np.asarray(weight(batch, **params), dtype=np.float64)


def pool_share(batch: RankedBatch, measure: Measure) -> Any:
    """A pooled measure's share of the summary from the queries of ``batch`` (PooledAUC); None for the others."""
    pool = measure.definition.pool
    if pool is None:
        return None
    batch, params = _kernel_arguments(batch, measure)
    return pool(batch, **params)


def _run_kernel(batch: RankedBatch, measure: Measure) -> Any:
    definition = measure.definition
    at = definition.cutoff
    if definition.cutoff_required and at is not None and measure[at] is None:
        raise InvalidParameterError(f"{measure.name} needs a cutoff, for example {measure.name}@10")
    batch, params = _kernel_arguments(batch, measure)
    if batch.ties == "expected":  # rows ordered with ties="expected": each measure's mean over tie orders
        from .expected import expected_kernel  # (it imports the measure families, which import this module)

        return expected_kernel(measure)(batch, **params)
    return definition.kernel(batch, **params)


#: Each measure's parameters with defaults (``Measure.resolved``), kept: a short query's kernel costs
#: little more than resolving them anew each time. At most _RESOLVED_MAX measures.
_RESOLVED: dict[Measure, dict[str, Any]] = {}
_RESOLVED_MAX = 4096


def _kernel_arguments(batch: RankedBatch, measure: Measure) -> tuple[RankedBatch, dict[str, Any]]:
    """The batch and keyword arguments the kernel gets: ``judged_only`` becomes the judged sub-batch."""
    params = _RESOLVED.get(measure)
    if params is None:
        params = measure.resolved()
        if len(_RESOLVED) < _RESOLVED_MAX:
            _RESOLVED[measure] = params
    params = dict(params)  # the kernel's own: judged_only is popped
    if params.pop("judged_only", False):
        batch = batch.judged_only()
    if measure.definition.subtopics and batch.subtopics is None:
        raise MeasureError(
            f"{measure} needs diversity qrels, whose second column is the subtopic id: read them with "
            "SetEvaluator.from_trec(..., subtopics=True) or read_qrels_columns(..., with_subtopics=True) "
            "(the command line does so when a diversity measure is asked for)"
        )
    if measure.definition.preferences and batch.preferences is None:
        raise MeasureError(
            f"{measure} needs preference judgments: read them with SetEvaluator.from_trec(..., rel_format='prefs') "
            "or 'qrels_prefs' (the command line's -R prefs or -R qrels_prefs)"
        )
    if batch.preferences is not None and not measure.definition.preferences and measure.name != "NumQ":
        raise MeasureError(
            f"{measure} needs relevance judgments (qrels); preference judgments (-R prefs, -R qrels_prefs) give "
            "the preference measures only (-m all_prefs)"
        )
    return batch, params


def print_order(measure: Measure) -> tuple[int, int, float]:
    """Sort key giving trec_eval's line order; measures without a trec_eval name come last."""
    definition = measure.definition
    trec = definition.trec_name_for(measure)
    at = definition.cutoff
    cutoff = measure[at] if at and measure[at] is not None else -1.0
    if trec is not None:
        return (trec_table.print_position(trec.name), 0, cutoff)
    return (len(trec_table.TREC_TABLE), list(REGISTRY).index(definition.name), cutoff)
