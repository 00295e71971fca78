"""Measures as values, their definitions, and the single registry behind parser, CLI, docs and tests.

A :class:`Measure` is a hashable value: a registered name plus the parameters that differ from their
defaults (``P@10``, ``P(rel=2)@10``, ``nDCG(dcg='exp-log2')@10``). Its string round-trips through
:func:`retrieval_eval.measures.parse`.

A :class:`MeasureDef` is what :func:`measure` registers: the vectorised kernel plus everything else the
project needs to know about the measure (parameters, aliases, trec_eval names, how the summary
aggregates it, its documentation). Adding a measure means writing one decorated kernel (in the
module of its family: counts, precision, average_precision, graded, sets, judged) and, for a trec_eval
measure, one row of :data:`~retrieval_eval.measures.trec_table.TREC_TABLE`.

Every kernel takes a :class:`~retrieval_eval.ranking.RankedBatch` and keyword parameters and returns
float64 values of shape ``(n_queries,)``, computed over all queries at once (no loop over queries or
documents), with 0.0 wherever a denominator is 0. Notation: R = relevant judged documents
(value >= rel), NR = judged non-relevant (0 <= value < rel), n = documents retrieved, nrr = relevant
retrieved, rel@k = relevant documents in ranks 1..k, r_m = rank of the m-th relevant retrieved document.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, cast

import numpy as np
from attrs import define, field, frozen

from ..model import FloatArray, RetrievalEvalError
from ..engine.ranking import RankedBatch
from . import trec_table

Aggregate = Literal["mean", "sum", "gmean", "weighted", "pooled"]

#: trec_eval's floor for geometric means (MIN_GEO_MEAN): log(max(x, 1e-5)).
MIN_GEO_MEAN = 1e-5


def sequential_mean(values: FloatArray) -> float:
    """The mean with the sum taken left to right, as trec_eval adds query after query.

    NumPy's ``mean`` sums pairwise, which can differ in the last bit, and so in the printed fourth
    decimal when the mean lies halfway between two (tests/test_vs_trec_eval_c.py found such lines).
    """
    total = sequential_sum(values)
    return 0.0 if total is None else float(total) / len(values)


def sequential_sum(values: FloatArray, start: float | None = None) -> float | None:
    """``start + values[0] + values[1] + ...`` added left to right; None for no values and no start.

    With ``start`` None the sum begins at ``values[0]`` itself (not at ``0.0 + values[0]``, which
    would turn a sum of -0.0 into 0.0). Summing a long array in parts, each part's sum the next
    one's ``start``, makes exactly the additions of one pass: the running sums of
    :class:`Summary` rely on that.
    """
    if len(values) == 0:
        return start
    # One chunk-sized buffer for every running sum: no array as long as the values, none made per chunk.
    buffer = np.empty(min(len(values), _SUM_CHUNK) + 1)
    for begin in range(0, len(values), _SUM_CHUNK):
        chunk = values[begin : begin + _SUM_CHUNK]
        if start is None:
            start = float(np.cumsum(chunk, out=buffer[: len(chunk)])[-1])
        else:  # the chunk's sum starts from the sum so far
            part = buffer[: len(chunk) + 1]
            part[0] = start
            part[1:] = chunk
            start = float(np.cumsum(part, out=part)[-1])
    return start


#: Values summed at a time by :func:`sequential_sum`; each chunk starts from the sum so far, so the
#: additions are exactly those of one pass from left to right.
_SUM_CHUNK = 1 << 16


def sequential_sums(columns: list[FloatArray], starts: list[float | None]) -> list[float | None]:
    """:func:`sequential_sum` of each of ``columns`` (arrays of one length) from its start, all at once.

    A sum left to right is a chain of dependent additions, and NumPy's ``cumsum`` walks it one
    value at a time (some 2.4 ns a value here). Side by side, as the columns of a row-major array
    of rows of values, ``np.add.reduce(axis=0)`` adds row after row: every column is still summed
    in its order, one addition per value, but a row's additions are one vectorised step. The
    additions then take a third of the time, and the copy into rows most of what is left: 18.8 ms
    against 25.5 ms for the 30 official measures of 262,144 queries. tests/test_blocks.py checks the
    bits against Python's own left-to-right loop. A start of None is -0.0, the one number whose sum
    with any x is x.
    """
    if len(columns) < 2:  # one column would be reduced along its own axis: pairwise, another order
        return [sequential_sum(column, start) for column, start in zip(columns, starts)]
    n = len(columns[0])
    if n == 0:
        return list(starts)
    rows = np.empty((min(n, _ROWS_CHUNK) + 1, len(columns)))
    totals = np.array([-0.0 if start is None else start for start in starts])
    for begin in range(0, n, _ROWS_CHUNK):
        part = rows[: min(_ROWS_CHUNK, n - begin) + 1]
        part[0] = totals  # each chunk's rows start from the sums so far
        for j, column in enumerate(columns):
            part[1:, j] = column[begin : begin + len(part) - 1]
        totals = np.add.reduce(part, axis=0)
    return totals.tolist()  # type: ignore[no-any-return]


#: Rows of values summed at a time by :func:`sequential_sums` (chunks that stay in the CPU's cache).
_ROWS_CHUNK = 4096


def geometric_mean(values: FloatArray) -> float:
    """trec_eval's geometric mean: exp(mean(log(max(x, 1e-5)))); 0.0 for no values."""
    if len(values) == 0:
        return 0.0
    return math.exp(sequential_mean(_logs(values)))


def _logs(values: FloatArray) -> FloatArray:
    """What a geometric mean averages: log(max(x, 1e-5)), trec_eval's floor (MIN_GEO_MEAN)."""
    return np.log(np.maximum(values, MIN_GEO_MEAN))


class MeasureError(RetrievalEvalError):
    """A measure that cannot be computed as asked: an unknown name or a parameter outside its domain."""


class UnknownMeasureError(MeasureError):
    """A measure name, alias or parameter name that the registry does not know, or a malformed measure string."""


class InvalidParameterError(MeasureError):
    """A measure parameter (or an evaluator's ``rel`` or ``k``) outside its domain."""


def _plain(value: Any, kind: type) -> Any:
    """NumPy scalars as the Python numbers they hold; an int where a float is expected as that float."""
    if isinstance(value, np.generic) and not isinstance(value, (np.str_, np.bytes_)):
        value = value.item()
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


#: The largest magnitude of an int parameter (a cutoff, ``rel``, a length): kernels compute with
#: int64, so every int parameter lies in [-2**62, 2**62], whatever its own bounds say.
INT_LIMIT = 2**62


@frozen
class Param:
    """One parameter of a measure: its type, default, allowed values and a one-line description.

    :meth:`check` is the one validation of measure parameters: measure strings, ``Measure(...)``
    calls and the evaluators' ``rel`` and ``k`` arguments all go through it. NumPy scalars are taken
    as the Python numbers they hold; NaN is never a valid float; an int must also lie within
    :data:`INT_LIMIT` (2**62) of 0, since kernels compute with int64 (``Judged@10**21`` is refused).
    """

    kind: type
    default: Any
    description: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    #: Optional converter applied first (e.g. a dict to a hashable table); ValueError means invalid.
    convert: Callable[[Any], Any] | None = None

    def domain(self) -> str:
        """The allowed values in words: ``an int >= 1``, ``one of 'log2', 'exp-log2'``."""
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        article = "an" if self.kind.__name__[0] in "aeiou" else "a"
        if self.minimum is not None and self.maximum is not None:
            return f"{article} {self.kind.__name__} in [{self.minimum!r}, {self.maximum!r}]"
        bound = f" >= {self.minimum!r}" if self.minimum is not None else ""
        bound += f" <= {self.maximum!r}" if self.maximum is not None else ""
        return f"{article} {self.kind.__name__}{bound}"

    def check(self, owner: str, name: str, value: Any, *, allow_none: bool = True) -> Any:
        """``value`` validated and converted; raise :class:`InvalidParameterError` naming ``owner`` and ``name``.

        None stands for the default when the default is None (no cutoff), unless ``allow_none`` is false.
        """
        if value is None and self.default is None and allow_none:
            return None
        if self.convert is not None and value is not None:
            try:
                value = self.convert(value)
            except (TypeError, ValueError) as exc:
                raise InvalidParameterError(f"parameter {name!r} of {owner}: {exc}") from None
        value = _plain(value, self.kind)
        valid = isinstance(value, self.kind) and (self.kind is bool or not isinstance(value, bool))
        if valid and isinstance(value, float):
            valid = not math.isnan(value)
        if valid and self.choices is not None:
            valid = value in self.choices
        if valid and self.minimum is not None:
            valid = value >= self.minimum
        if valid and self.maximum is not None:
            valid = value <= self.maximum
        if not valid:
            raise InvalidParameterError(f"parameter {name!r} of {owner} must be {self.domain()}; got {value!r:.100}")
        if isinstance(value, int) and not isinstance(value, bool) and not -INT_LIMIT <= value <= INT_LIMIT:
            raise InvalidParameterError(
                f"parameter {name!r} of {owner} must be {self.domain()} and at most 2**62 in size "
                f"(it is computed with int64); got {value!r:.100}"
            )
        return value


#: The relevance threshold shared by every binary-relevance measure (trec_eval ``-l``).
REL = Param(int, 1, "relevance threshold: a judgment >= rel is relevant", minimum=0)
#: The rank cutoff shared by the measures written ``Name@k``.
CUTOFF = Param(int, None, "rank cutoff k: only the top k ranks count", minimum=1)
#: ir_measures' ``judged_only``: evaluate on the judged documents only, re-ranked (trec_eval ``-J``
#: for one measure). Measures registered with ``judged_only=True`` take it; no kernel sees it.
JUDGED_ONLY = Param(bool, False, "drop unjudged documents from the ranking first (trec_eval -J, for this measure)")


class TrecSyntax(Protocol):
    """How the string of ``-m name.params`` maps to measure parameters (implementations: ``trec_syntax``)."""

    # Read-only: the implementations are frozen attrs classes or expose it as a property.
    @property
    def names(self) -> tuple[str, ...]:
        """The measure parameters the string can set."""
        ...

    def read(self, measure: str, text: str) -> dict[str, Any]:
        """The measure parameters the string gives; raise UnknownMeasureError when it is malformed."""
        ...

    def write(self, changed: Mapping[str, Any], values: Mapping[str, Any]) -> str:
        """A parameter string for ``changed`` (the settable parameters that differ from trec_eval's
        defaults); ``values`` holds every settable parameter's value."""
        ...


@frozen
class TrecName:
    """How trec_eval names a measure.

    Three shapes: a plain ``name``; ``name_<cutoff>`` for each cutoff of a list (``cutoff=True``);
    or ``name`` / ``name_<params>`` for measures whose ``-m name.params`` string sets other
    parameters (``syntax``). ``preset`` holds parameter values the trec_eval name implies (``rbp``
    is ``RBP(p=0.9)``, ``set_relative_P`` is ``SetP(relative=True)``).
    """

    name: str
    cutoff: bool = False
    defaults: tuple[float, ...] = ()  #: cutoffs used when ``-m name`` gives none
    float_cutoffs: bool = False  #: cutoffs print as %3.2f (iprec_at_recall) instead of %d
    preset: tuple[tuple[str, Any], ...] = ()
    syntax: TrecSyntax | None = None

    def label(self, cutoff: float | None, params: str | None = None) -> str:
        """The printed name: ``name``, ``name_<cutoff>`` or ``name_<params>`` (the raw string)."""
        if self.cutoff:
            if self.float_cutoffs:
                return f"{self.name}_{cutoff:3.2f}"
            # A cutoff entry is labelled with its cutoff (a no-op cast: int(None) still raises).
            return f"{self.name}_{int(cast(float, cutoff))}"
        return f"{self.name}_{params}" if params else self.name


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
        """The summary over queries, as trec_eval computes it (mean, sum or geometric mean), the
        ``weights``-weighted mean of a weighted measure (0.0 when every weight is 0), or a pooled
        measure's summary from its ``share`` of the queries (:func:`pool_share`)."""
        summary = Summary(self)
        summary.add(values, weights, share)
        return summary.value()


@define
class Summary:
    """A measure's summary over queries that come in blocks, in query order: :meth:`add` each block's
    values (and weights), then take :meth:`value`.

    The value is that of :meth:`MeasureDef.aggregate_values` over all the values at once, to the last
    bit: a mean or geometric mean carries its left-to-right sum from block to block; a sum of counts
    (an ``integer`` measure) carries its exact integer sum, which any order of float additions gives
    too (the counts stay far below 2**53); any other sum, and a weighted mean, keeps the values (8
    bytes a query) and adds them up at the end, as one array.
    """

    definition: MeasureDef
    count: int = 0  #: queries added so far
    total: float | None = None  #: the running sum of a mean or geometric mean (None before any value)
    whole_total: int = 0  #: the running sum of a sum of counts
    parts: list[FloatArray] = field(factory=list)  #: the values of a sum or weighted mean, block by block
    weight_parts: list[FloatArray] = field(factory=list)
    shares: list[Any] = field(factory=list)  #: a pooled measure's shares, block by block

    def __attrs_post_init__(self) -> None:
        if self.definition.text:
            raise MeasureError(f"{self.definition.name} is a per-query text measure; it has no summary value")

    def add(self, values: FloatArray, weights: FloatArray | None = None, share: Any = None) -> None:
        """The next block's per-query values (and, for a weighted measure, weights; for a pooled one, its share)."""
        self.count += len(values)
        if self.definition.aggregate == "pooled":
            if share is not None:
                self.shares.append(share)
        elif self._running:
            self.total = sequential_sum(self._terms(values), self.total)
        elif self.definition.aggregate == "sum" and self.definition.integer:
            counts = values.astype(np.int64)
            if not np.array_equal(counts, values):  # a count that is not a whole number: a kernel's bug
                raise MeasureError(f"{self.definition.name} is a count, but some value is not a whole number")
            self.whole_total += int(counts.sum())
        else:
            self.parts.append(values)
            if weights is not None:
                self.weight_parts.append(weights)

    @staticmethod
    def add_all(summaries: list[Summary], values: list[FloatArray], weights: list[FloatArray | None],
                shares: list[Any] | None = None) -> None:
        """:meth:`add` the next block's ``values[i]`` (and ``weights[i]``, ``shares[i]``) to each ``summaries[i]``,
        the running sums of the means and geometric means side by side (:func:`sequential_sums`):
        the same sums, in about 0.7 of the time."""
        running = [i for i, summary in enumerate(summaries) if summary._running]
        if len(running) < 2:
            running = []
        columns = [summaries[i]._terms(values[i]) for i in running]
        for i, total in zip(running, sequential_sums(columns, [summaries[i].total for i in running])):
            summaries[i].count += len(values[i])
            summaries[i].total = total
        added = set(running)
        for i, summary in enumerate(summaries):
            if i not in added:
                summary.add(values[i], weights[i], None if shares is None else shares[i])

    @property
    def _running(self) -> bool:
        """Whether the summary carries a running sum (of :meth:`_terms`): a mean or geometric mean."""
        return self.definition.aggregate in ("mean", "gmean")

    def _terms(self, values: FloatArray) -> FloatArray:
        """What the running sum adds up: the values of a mean, their logs for a geometric mean."""
        return _logs(values) if self.definition.aggregate == "gmean" else values

    def value(self) -> float:
        """The summary of every value added."""
        aggregate = self.definition.aggregate
        if aggregate == "sum":
            return float(self.whole_total) if self.definition.integer else float(_joined(self.parts).sum())
        if self.count == 0:
            return 0.0
        if aggregate == "pooled":
            if not self.shares:
                raise MeasureError(f"{self.definition.name} pools the rows of every query: its summary needs "
                                   "them, not per-query values (SetEvaluator.aggregate computes it)")
            return cast(Callable[[list[Any]], float], self.definition.pooled)(self.shares)
        if aggregate == "weighted":
            if len(self.weight_parts) != len(self.parts):
                raise MeasureError(f"{self.definition.name} is summarised by a weighted mean: pass its weights")
            weights = _joined(self.weight_parts)
            total = float(weights.sum())
            return float((weights * _joined(self.parts)).sum()) / total if total > 0 else 0.0
        assert self.total is not None  # count > 0: some value was added
        mean = self.total / self.count
        return math.exp(mean) if aggregate == "gmean" else mean


def _joined(parts: list[FloatArray]) -> FloatArray:
    """The blocks' values as one array (the one block itself, uncopied, when there is one)."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0)


@frozen
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
    pool: Kernel | None = None,
    pooled: Callable[[list[Any]], float] | None = None,
) -> Callable[[Kernel], MeasureDef]:
    """Register a kernel ``f(batch, **params) -> (n_queries,) float64`` as measure ``name``.

    The kernel computes each query from that query's rows alone: a batch of many queries is handed
    to it in blocks of queries, several blocks at once on several threads (see
    ``SetEvaluator._in_blocks``), so it reads nothing batch-wide and changes no shared state.
    The kernel's docstring is the measure's documentation: its first line is the one-line definition
    shown by ``retrieval-eval measures``. An alias is a name, or ``(name, {param: value})`` for an
    alias that stands for the measure with those parameters. ``text=True`` marks a kernel returning
    one str per query (printed per query, never aggregated). ``integer=True`` marks a count, printed
    as an integer: its values must be whole numbers (a summed count is added up exactly, and a value
    that is not whole raises :class:`MeasureError`). ``aggregate="weighted"`` needs
    ``weight(batch, **params) -> (n_queries,)``: the summary is then the weighted mean.
    ``aggregate="pooled"`` needs ``pool`` and ``pooled``: the summary is ``pooled`` of every block's
    ``pool(batch, **params)``, a value of all the rows together rather than of per-query values.
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
            weight=weight, subtopics=subtopics, pool=pool, pooled=pooled,
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

    Raises :class:`MeasureError` for a text measure (``definition.text``): see :func:`compute_text`.
    """
    definition = measure.definition
    if definition.text:
        raise MeasureError(f"{measure} is a per-query text measure: ask for its text, not its value")
    return np.asarray(_run_kernel(batch, measure), dtype=np.float64)


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
    return definition.kernel(batch, **params)


def _kernel_arguments(batch: RankedBatch, measure: Measure) -> tuple[RankedBatch, dict[str, Any]]:
    """The batch and keyword arguments the kernel gets: ``judged_only`` becomes the judged sub-batch."""
    params = measure.resolved()
    if params.pop("judged_only", False):
        batch = batch.judged_only()
    if measure.definition.subtopics and batch.subtopics is None:
        raise MeasureError(
            f"{measure} needs diversity qrels, whose second column is the subtopic id: read them with "
            "SetEvaluator.from_trec(..., subtopics=True) or read_qrels_columns(..., with_subtopics=True) "
            "(the command line does so when a diversity measure is asked for)"
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
