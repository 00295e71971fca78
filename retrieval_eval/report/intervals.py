"""``evaluate --ci``: the confidence interval of each mean, in trec_eval's lines, JSON and the tables.

The intervals are :func:`retrieval_eval.analysis.intervals.mean_interval`'s, of the per-query values
a run's summary averages. Only measures whose summary is the arithmetic mean have one: a count
(``num_ret``) is summed, ``gm_map`` is a geometric mean and ``GAUC`` a weighted mean, so they get no
interval (no line, ``"ci": null``, empty cells).

- trec lines: after the ``all`` block, two lines per measure, ``NAME_ci_low`` and ``NAME_ci_high``,
  in the same three tab-separated fields (``name``, ``all``, value), so that a reader of trec_eval's
  lines reads them as two more measures. Without ``--ci`` nothing changes.
- JSON: ``"ci": {measure: {"low", "high", "method", "level"}}`` beside ``"aggregate"``.
- tables: two columns per measure at the end of the row, ``NAME ci_low`` and ``NAME ci_high``,
  filled on the ``all`` row only.

>>> from retrieval_eval import SetEvaluator
>>> from retrieval_eval.report.text import Requested
>>> from retrieval_eval.measures import parse
>>> runs = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}})
>>> [line.split() for line in ci_trec_text(runs, [Requested(parse("P@1"), "P_1")], CiOptions(), digits=4).splitlines()]
[['P_1_ci_low', 'all', '0.0126'], ['P_1_ci_high', 'all', '0.9874']]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attrs import frozen

from ..analysis.intervals import DEFAULT_RESAMPLES, Interval, has_interval, mean_interval
from .text import NAME_WIDTH, Requested

if TYPE_CHECKING:
    from ..evaluators.set import SetEvaluator

__all__ = ["CiOptions", "ci_columns", "ci_json", "ci_trec_text", "intervals"]


@frozen
class CiOptions:
    """How ``evaluate --ci`` makes its intervals: :func:`mean_interval`'s options."""

    method: str = "auto"
    level: float = 0.95
    resamples: int = DEFAULT_RESAMPLES
    seed: int | None = 0


def intervals(results: SetEvaluator, requested: Sequence[Requested], options: CiOptions) -> list[Interval | None]:
    """Each requested measure's interval (None for a measure whose summary is not a mean)."""
    return [mean_interval(results.array(item.measure), method=options.method, level=options.level,
                          resamples=options.resamples, seed=options.seed)
            if has_interval(item.measure) else None for item in requested]


def ci_trec_text(results: SetEvaluator, requested: Sequence[Requested], options: CiOptions, *, digits: int) -> str:
    """The ``NAME_ci_low`` and ``NAME_ci_high`` lines of each measure that has an interval."""
    made = intervals(results, requested, options)
    labels = [f"{item.label}_ci_{end}" for item, iv in zip(requested, made) if iv is not None for end in ("low", "high")]
    width = max([NAME_WIDTH, *map(len, labels)])
    lines = []
    for item, iv in zip(requested, made):
        if iv is not None:
            lines.append(f"{item.label + '_ci_low':<{width}}\tall\t{iv.low:.{digits}f}\n")
            lines.append(f"{item.label + '_ci_high':<{width}}\tall\t{iv.high:.{digits}f}\n")
    return "".join(lines)


def ci_json(results: SetEvaluator, requested: Sequence[Requested], options: CiOptions) -> dict[str, object]:
    """``{measure as typed: {"low", "high", "method", "level"} or None}``: JSON's ``ci`` object."""
    return {item.shown: None if iv is None else iv.to_dict()
            for item, iv in zip(requested, intervals(results, requested, options))}


def ci_columns(columns: Sequence[Requested]) -> list[str]:
    """The extra header cells of a table: ``NAME ci_low``, ``NAME ci_high`` per measure with an interval."""
    return [f"{item.shown} ci_{end}" for item in columns if has_interval(item.measure) for end in ("low", "high")]


def ci_cells(results: SetEvaluator, columns: Sequence[Requested], options: CiOptions) -> list[float]:
    """The ``all`` row's extra cells, in the order of :func:`ci_columns`."""
    return [bound for iv in intervals(results, columns, options) if iv is not None for bound in (iv.low, iv.high)]
