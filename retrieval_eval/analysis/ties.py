"""The tie report of a run: how many queries have tied scores, which cut-offs the ties straddle, and
how far each measure can move over the orders of the tied documents.

The range is given by two orders the normal engine evaluates like any other (:func:`~..engine.ties.within_ties`):
the *pessimistic* one puts each tie's relevant documents last (judgments ascending), the
*optimistic* one first. For a measure that never drops when a relevant document moves up (P, R,
AP, nDCG, RR, Success, ...) they are its smallest and largest values over every tie order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from attrs import evolve, frozen

from ..engine.batch import RankedBatch
from ..engine.ties import straddles, tied_queries, within_ties
from ..evaluators.blocks import summaries
from ..evaluators.results import SetResults
from ..measures import Measure, MeasureError, parse_list
from ..model import FloatArray


@frozen
class TieRange:
    """One measure's summary under the evaluation's own tie policy, in the pessimistic and optimistic
    orders, and its expected value over tie orders (None without a closed form)."""

    measure: str
    value: float
    pessimistic: float
    optimistic: float
    expected: float | None


@frozen
class TieReport:
    """What ties do to one run: queries with a tie, queries whose top k a tie straddles, and the ranges.

    Examples
    --------
    >>> from retrieval_eval import SetEvaluator
    >>> run = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"c": 1}},
    ...                              {"q1": {"a": 1.0, "b": 1.0}, "q2": {"c": 2.0, "d": 1.0}})
    >>> report = tie_report(run, ["P@1", "RR"])
    >>> report.tied, report.straddling
    (1, {1: 1})
    >>> report.ranges[0]
    TieRange(measure='P@1', value=0.5, pessimistic=0.5, optimistic=1.0, expected=0.75)
    """

    run_id: str
    queries: int  #: queries evaluated
    tied: int  #: queries with two documents of equal score or more
    straddling: dict[int, int]  #: cut-off k -> queries with a tie holding both rank k and rank k + 1
    ranges: list[TieRange]

    def text(self, digits: int = 4) -> str:
        """The report as lines: a header of counts, then one line per measure."""
        cuts = ", ".join(f"{n} at rank {k}" for k, n in self.straddling.items()) or "no cut-off asked"
        head = f"ties: {self.tied} of {self.queries} queries have tied scores; a tie straddles the cut-off in {cuts}\n"
        lines = [head, "measure\tvalue\tpessimistic\toptimistic\texpected\n"]
        for r in self.ranges:
            expected = "-" if r.expected is None else f"{r.expected:.{digits}f}"
            lines.append(f"{r.measure}\t{r.value:.{digits}f}\t{r.pessimistic:.{digits}f}\t"
                         f"{r.optimistic:.{digits}f}\t{expected}\n")
        return "".join(lines)

    def as_dict(self) -> dict[str, object]:
        """The report as plain values (for JSON)."""
        return {"run": self.run_id, "queries": self.queries, "tied": self.tied,
                "straddling": {str(k): n for k, n in self.straddling.items()},
                "ranges": [{"measure": r.measure, "value": r.value, "pessimistic": r.pessimistic,
                            "optimistic": r.optimistic, "expected": r.expected} for r in self.ranges]}


def _summaries(batch: RankedBatch, measures: list[Measure], known: dict[Measure, FloatArray] | None = None) -> list[float]:
    """Each measure's summary over ``batch`` (an order of the evaluation's rows), keeping no per-query array."""
    return summaries(batch, measures, {} if known is None else known, keep=False)


def _cutoffs(measures: Sequence[Measure]) -> list[int]:
    """The cut-offs the measures are taken at, ascending."""
    return sorted({k for k in map(_cutoff_of, measures) if k is not None})


def _cutoff_of(measure: Measure) -> int | None:
    """The number ``measure`` is cut at (the 10 of P@10), or None without one."""
    at = measure.definition.cutoff
    k = None if at is None else measure[at]
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        return None
    return int(k)


def tie_report(results: SetResults, measures: Iterable[str | Measure] | str, *,
               cutoffs: Iterable[int] | None = None) -> TieReport:
    """The tie report of an evaluated run for ``measures`` (their cut-offs, unless ``cutoffs`` are given)."""
    parsed = [m for m, _ in parse_list(measures, rel=results.rel, numeric=True)]
    batch = results._batch
    ordered = evolve(batch, ties="trec_eval")  # the two orders are ordinary rankings
    distinct = list(dict.fromkeys(parsed))
    values = _summaries(batch, distinct, results._values)
    worst = _summaries(within_ties(ordered, batch.labels), distinct)  # relevant (high grades) last
    best = _summaries(within_ties(ordered, -batch.labels), distinct)
    expected = evolve(batch, ties="expected")
    ranges = []
    for measure, value, low, high in zip(distinct, values, worst, best):
        try:
            mean: float | None = _summaries(expected, [measure])[0]
        except MeasureError:  # no closed form: the range alone
            mean = None
        ranges.append(TieRange(str(measure), value, low, high, mean))
    ks = sorted(set(cutoffs)) if cutoffs is not None else _cutoffs(parsed)
    return TieReport(results.run_id, batch.n_queries, int(tied_queries(batch).sum()),
                     {k: int(straddles(batch, k).sum()) for k in ks}, ranges)
