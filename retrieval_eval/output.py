"""Formatting evaluation results: trec_eval's text lines and JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from attrs import frozen

from .evaluator import SetEvaluator
from .measures import Measure, print_order


@frozen
class Requested:
    """A measure to report and the name it is reported under (trec_eval's, or the canonical string)."""

    measure: Measure
    label: str


def order_requested(requested: Sequence[Requested]) -> list[Requested]:
    """Drop repeats and sort into trec_eval's fixed line order."""
    unique: dict[tuple[Measure, str], Requested] = {}
    for item in requested:
        unique.setdefault((item.measure, item.label), item)
    return sorted(unique.values(), key=lambda item: print_order(item.measure))


def _per_query(results: SetEvaluator, measure: Measure) -> list[float] | list[str]:
    """Each query's value of ``measure``, or its string for a text measure."""
    if measure.definition.text:
        return list(results.per_query_text(measure).values())
    values: list[float] = results.array(measure).tolist()  # the stubs type tolist() as Any
    return values


def _value(measure: Measure, value: float | str, digits: int) -> str:
    if isinstance(value, str):  # a text measure
        return f"'{value}'"
    if measure.definition.integer:
        return str(int(value))
    # trec_eval's %6.4f: the width stays two more than the decimals for other --digits.
    return f"{value:{digits + 2}.{digits}f}"


def _line(label: str, query: str, text: str) -> str:
    return f"{label:<22}\t{query}\t{text}"


def trec_lines(
    results: SetEvaluator, requested: Sequence[Requested], *, per_query: bool, summary: bool, digits: int = 4,
    run_id: bool = True,
) -> Iterator[str]:
    """trec_eval's output: per-query blocks (with ``-q``), then the ``all`` block (led by runid if asked).

    Summary-only measures (num_q, gm_map) appear only in the ``all`` block, text measures
    (relstring) only per query.
    """
    if per_query:
        per_query_items = [r for r in requested if not r.measure.definition.summary_only]
        values = [_per_query(results, r.measure) for r in per_query_items]
        for i, qid in enumerate(results.query_ids):
            for item, column in zip(per_query_items, values):
                yield _line(item.label, qid, _value(item.measure, column[i], digits))
    if summary:
        if run_id:
            yield _line("runid", "all", results.run_id)
        for item in requested:
            if not item.measure.definition.text:
                yield _line(item.label, "all", _value(item.measure, results.aggregate(item.measure), digits))


def _json_values(measure: Measure, values: Sequence[float] | Sequence[str]) -> list[object]:
    """Counts as JSON integers, everything else as given (floats at full precision, strings)."""
    if measure.definition.integer:
        return [int(v) for v in values]
    return list(values)


def json_report(results: SetEvaluator, requested: Sequence[Requested], *, per_query: bool, summary: bool) -> str:
    """Full-precision JSON: the aggregate and (optionally) per-query values, keyed by label.

    Text measures (relstring) hold their string per query and have no aggregate.
    """
    document: dict[str, object] = {
        "run_id": results.run_id,
        "measures": {r.label: str(r.measure) for r in requested},
        "queries": {
            "evaluated": len(results),
            "missing_from_run": results.missing_from_run,
            "not_judged": results.not_judged,
        },
    }
    left_out = {r.label: results.left_out(r.measure) for r in requested if not r.measure.definition.text}
    left_out = {label: queries for label, queries in left_out.items() if queries}
    if left_out:  # GAUC's single-class queries: not in its summary
        document["queries"]["left_out_of_summary"] = left_out  # type: ignore[index]
    if per_query:
        items = [r for r in requested if not r.measure.definition.summary_only]
        columns = {r.label: _json_values(r.measure, _per_query(results, r.measure)) for r in items}
        document["per_query"] = {
            qid: {label: column[i] for label, column in columns.items()} for i, qid in enumerate(results.query_ids)
        }
    if summary:
        document["aggregate"] = {
            r.label: _json_values(r.measure, [results.aggregate(r.measure)])[0]
            for r in requested if not r.measure.definition.text
        }
    return json.dumps(document, indent=2)
