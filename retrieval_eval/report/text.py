"""Formatting evaluation results (trec_eval's text lines and JSON) and the measure catalogue."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence

import numpy as np
from attrs import frozen

from ..evaluators import SetEvaluator
from ..measures import REGISTRY, Measure, print_order
from ..measures.registry import MeasureDef
from ..model import FloatArray

#: trec_eval prints the measure name with ``%-22s``.
NAME_WIDTH = 22


@frozen
class Requested:
    """A measure to report and the name it is reported under (trec_eval's, or the canonical string).

    ``typed`` is the spelling the user gave (``Recall@100`` for ``R@100``), the name tables and JSON
    show; empty when it is ``label``. trec_eval's text lines always show ``label``.
    """

    measure: Measure
    label: str
    typed: str = ""

    @property
    def shown(self) -> str:
        """The name in tables and JSON: as the user typed it, else the label."""
        return self.typed or self.label


def order_requested(requested: Sequence[Requested]) -> list[Requested]:
    """Drop repeats and sort into trec_eval's fixed line order (trec_eval's text lines)."""
    unique: dict[tuple[Measure, str], Requested] = {}
    for item in requested:
        unique.setdefault((item.measure, item.label), item)
    return sorted(unique.values(), key=lambda item: print_order(item.measure))


def as_given(requested: Sequence[Requested]) -> list[Requested]:
    """Drop repeats, keeping the order given (the order of ``-m``): the columns of tables and JSON."""
    unique: dict[tuple[Measure, str], Requested] = {}
    for item in requested:
        unique.setdefault((item.measure, item.shown), item)
    return list(unique.values())


def _per_query(results: SetEvaluator, measure: Measure) -> list[float] | list[str]:
    """Each query's value of ``measure`` as a Python number, or its string for a text measure."""
    column = _per_query_column(results, measure)
    if isinstance(column, list):
        return column
    values: list[float] = column.tolist()  # the stubs type tolist() as Any
    return values


def _summaries(results: SetEvaluator, requested: Sequence[Requested], per_query: bool) -> list[float]:
    """The summaries of the measures asked for (none a text measure), computed together; their
    per-query arrays are kept only when the output also shows them."""
    return results._summaries([item.measure for item in requested], keep=per_query)


def _value(measure: Measure, value: float | str, digits: int, zscores: bool = False) -> str:
    if isinstance(value, str):  # a text measure
        return f"'{value}'"
    if not math.isfinite(value):  # no measure gives one (zero denominators give 0.0); never print nan or inf
        return "null"
    if measure.definition.integer and not zscores:  # trec_eval -Z prints every value with %6.4f
        return str(int(value))
    return _float_format(digits).format(value)


def _float_format(digits: int) -> str:
    """trec_eval's ``%6.4f`` as a format string: the width stays two more than the decimals for other --digits."""
    return f"{{:{digits + 2}.{digits}f}}"


def _line(label: str, query: str, text: str, width: int = NAME_WIDTH) -> str:
    return f"{label:<{width}}\t{query}\t{text}"


def trec_lines(
    results: SetEvaluator, requested: Sequence[Requested], *, per_query: bool, summary: bool, digits: int = 4,
    run_id: bool = True,
) -> Iterator[str]:
    """trec_eval's output: per-query blocks (with ``-q``), then the ``all`` block (led by runid if asked).

    Summary-only measures (num_q, gm_map) appear only in the ``all`` block, text measures
    (relstring) only per query. Names are padded to 22 characters, as trec_eval's ``%-22s`` does;
    when a printed name is longer (ir_measures strings such as ``nDCG(dcg='exp-log2')@10``), every
    name is padded to the longest one instead, so the query and value columns stay aligned.
    """
    for piece in _trec_pieces(results, requested, per_query=per_query, summary=summary, digits=digits, run_id=run_id):
        yield from piece


def trec_text(
    results: SetEvaluator, requested: Sequence[Requested], *, per_query: bool, summary: bool, digits: int = 4,
    run_id: bool = True,
) -> Iterator[str]:
    """The lines of :func:`trec_lines` as text, each line ending in a newline, in pieces of some
    65,000 lines: a large ``-q`` output (10 million queries) is written as it is made instead of
    being held whole. Every value is computed before the first piece is returned."""
    for piece in _trec_pieces(results, requested, per_query=per_query, summary=summary, digits=digits, run_id=run_id):
        yield "".join(line + "\n" for line in piece)


#: Per-query lines formatted together (a piece of :func:`trec_text`): counted in lines, not queries,
#: since ``-m all_trec`` prints some 190 lines a query and a piece's strings are its memory.
_LINES_PER_PIECE = 1 << 16


def _trec_pieces(
    results: SetEvaluator, requested: Sequence[Requested], *, per_query: bool, summary: bool, digits: int,
    run_id: bool,
) -> Iterator[list[str]]:
    """The lines of :func:`trec_lines`, a list per some 65,000 lines, then the ``all`` block."""
    per_query_items = [r for r in requested if not r.measure.definition.summary_only] if per_query else []
    summary_items = [r for r in requested if not r.measure.definition.text] if summary else []
    width = _name_width(requested, per_query=per_query, summary=summary)
    zscores = results.zscores is not None  # trec_eval -Z: numeric names get a Z before their padded name

    def named(item: Requested) -> str:
        return f"Z{item.label:<{width}}" if zscores and not item.measure.definition.text else item.label
    # The summary first, so that nothing is left to compute (or to fail) once lines are given out.
    all_block = []
    if summary:
        if run_id:
            all_block.append(_line("runid", "all", results.run_id, width))
        for item, value in zip(summary_items, _summaries(results, summary_items, per_query)):
            all_block.append(_line(named(item), "all", _value(item.measure, value, digits, zscores), width))
    if per_query:
        columns = [_per_query_column(results, r.measure) for r in per_query_items]
        heads = [f"{named(item):<{width}}\t" for item in per_query_items]
        query_ids = results.query_ids
        queries_per_piece = max(_LINES_PER_PIECE // max(len(per_query_items), 1), 1)
        for start in range(0, len(query_ids), queries_per_piece):
            stop = start + queries_per_piece
            texts = [_texts(item.measure, column[start:stop], digits, zscores)
                     for item, column in zip(per_query_items, columns)]
            yield [f"{head}{qid}\t{text[i]}" for i, qid in enumerate(query_ids[start:stop])
                   for head, text in zip(heads, texts)]
    yield all_block


def _name_width(requested: Sequence[Requested], *, per_query: bool, summary: bool) -> int:
    """The width names are padded to: trec_eval's 22, or the longest name printed. Only trec_eval's own
    names keep 22 when longer (prefs_avgjg_Rnonrel_ret), as its ``%-22s`` lets them overflow."""
    printed = [r for r in requested if (per_query and not r.measure.definition.summary_only)
               or (summary and not r.measure.definition.text)]
    if all(r.label == r.measure.trec_label for r in printed):
        return NAME_WIDTH
    return max([NAME_WIDTH, *(len(r.label) for r in printed)])


def runid_line(name: str, requested: Sequence[Requested], *, per_query: bool, summary: bool) -> str:
    """The ``runid`` line (with its newline) that opens a run's block when several runs are printed,
    padded as :func:`trec_lines` pads the block's names.

    Examples
    --------
    >>> runid_line("bm25", [], per_query=False, summary=True)
    'runid                 \\tall\\tbm25\\n'
    """
    return _line("runid", "all", name, _name_width(requested, per_query=per_query, summary=summary)) + "\n"


def _per_query_column(results: SetEvaluator, measure: Measure) -> FloatArray | list[str]:
    """Each query's value of ``measure`` (an array: no Python float per query held), or its string
    for a text measure."""
    if measure.definition.text:
        return list(results.per_query_text(measure).values())
    return results.array(measure)


def _texts(measure: Measure, values: FloatArray | list[str], digits: int, zscores: bool = False) -> list[str]:
    """:func:`_value` of each of ``values``, the common cases (every value finite) in one pass."""
    if isinstance(values, list):
        return [_value(measure, value, digits) for value in values]
    if not bool(np.isfinite(values).all()):
        return [_value(measure, value, digits, zscores) for value in values.tolist()]
    if measure.definition.integer and not zscores:
        return list(map(str, map(int, values.tolist())))
    return list(map(_float_format(digits).format, values.tolist()))


def _json_values(measure: Measure, values: Sequence[float] | Sequence[str], zscores: bool = False) -> list[object]:
    """Counts as JSON integers (unless they are z-scores), everything else as given (floats at full
    precision, strings).

    A value that is not a finite number is null: JSON has no NaN or Infinity (no measure gives
    one, but the output stays valid JSON whatever happens).
    """
    if measure.definition.integer and not zscores:
        return [None if isinstance(v, float) and not math.isfinite(v) else int(v) for v in values]
    return [None if isinstance(v, float) and not math.isfinite(v) else v for v in values]


def json_report(
    results: SetEvaluator, requested: Sequence[Requested], *, per_query: bool, summary: bool, run: str | None = None,
    provenance: Mapping[str, object] | None = None,
) -> str:
    """Full-precision JSON: the aggregate and (optionally) per-query values, keyed by label.

    The text of :func:`json_document`.
    """
    import json  # here: only JSON output needs it

    return json.dumps(json_document(results, requested, per_query=per_query, summary=summary, run=run,
                                    provenance=provenance), indent=2, allow_nan=False)


def json_document(
    results: SetEvaluator, requested: Sequence[Requested], *, per_query: bool, summary: bool, run: str | None = None,
    provenance: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The JSON report as a dict: values keyed by each measure's name as typed (:attr:`Requested.shown`),
    with ``measures`` mapping that name to the canonical measure string.

    Text measures (relstring) hold their string per query and have no aggregate. ``run``, the run's
    name, comes first when given; ``provenance`` (the version, options and inputs) follows it.
    """
    document: dict[str, object] = {} if run is None else {"run": run}
    document |= dict(provenance or {})
    document |= {
        "run_id": results.run_id,
        "measures": {r.shown: str(r.measure) for r in requested},
        "queries": {
            "evaluated": len(results),
            "missing_from_run": results.missing_from_run,
            "not_judged": results.not_judged,
        },
    }
    left_out = {r.shown: results.left_out(r.measure) for r in requested if not r.measure.definition.text}
    left_out = {label: queries for label, queries in left_out.items() if queries}
    if left_out:  # GAUC's single-class queries: not in its summary
        document["queries"]["left_out_of_summary"] = left_out  # type: ignore[index]
    # The summaries first: with -q their per-query arrays, computed together, are the ones shown.
    summarised = [r for r in requested if not r.measure.definition.text] if summary else []
    summaries = _summaries(results, summarised, per_query)
    zscored = results.zscores is not None
    if zscored:  # -Z: every value is a z-score
        document["zscores"] = True
    if per_query:
        items = [r for r in requested if not r.measure.definition.summary_only]
        columns = {r.shown: _json_values(r.measure, _per_query(results, r.measure), zscored) for r in items}
        document["per_query"] = {
            qid: {label: column[i] for label, column in columns.items()} for i, qid in enumerate(results.query_ids)
        }
    if summary:
        document["aggregate"] = {r.shown: _json_values(r.measure, [value], zscored)[0]
                                 for r, value in zip(summarised, summaries)}
    return document


# ------------------------------------------------------------------------------ the measure catalogue
def find_measures(search: str | None = None) -> list[MeasureDef]:
    """The registered measures whose name, alias or trec_eval name contains ``search`` (ignoring case).

    All of them, in registry order, when ``search`` is None or empty.
    """
    if not search:
        return list(REGISTRY.values())
    wanted = search.casefold()
    return [
        definition for definition in REGISTRY.values()
        if any(wanted in name.casefold()
               for name in (definition.name, *definition.aliases, *(trec.name for trec in definition.trec)))
    ]


def catalogue_text(definitions: Sequence[MeasureDef]) -> str:
    """The blocks of ``retrieval-eval measures`` for ``definitions`` (every block for the whole registry)."""
    from ..measures.describe import listing

    text = listing()
    blocks = re.split(r"(?m)^(?=\S)", text)[1:]  # a block starts at each unindented line: the measure's name
    if len(blocks) != len(REGISTRY):  # pragma: no cover - the listing's layout changed
        raise RuntimeError(f"the measure listing has {len(blocks)} blocks for {len(REGISTRY)} measures")
    keep = {definition.name for definition in definitions}
    return "".join(block for block, name in zip(blocks, REGISTRY) if name in keep)


def _catalogue_entry(definition: MeasureDef) -> dict[str, object]:
    aggregate = None if definition.text else definition.aggregate
    return {
        "name": definition.name,
        "aliases": list(definition.aliases),
        "summary": definition.summary,
        "parameters": [
            {"name": name, "type": spec.kind.__name__, "default": spec.default, "description": spec.description,
             "choices": None if spec.choices is None else list(spec.choices), "cutoff": name == definition.cutoff}
            for name, spec in definition.params.items()
        ],
        "trec_eval": [f"{trec.name}_<cutoff>" if trec.cutoff else trec.name for trec in definition.trec],
        "aggregate": aggregate,
        "text": definition.text,
    }


def catalogue_json(definitions: Sequence[MeasureDef]) -> str:
    """``retrieval-eval measures --format json``: a list with one object per measure.

    Each object has ``name``, ``aliases``, ``summary`` (the one-line definition), ``parameters`` (each
    with ``name``, ``type``, ``default``, ``description``, ``choices`` and ``cutoff``: whether it is
    written after ``@``), ``trec_eval`` (its trec_eval names, ``_<cutoff>`` marking a cutoff),
    ``aggregate`` (``mean``, ``sum``, ``gmean`` or ``weighted``; null for a text measure) and ``text``.
    """
    import json

    return json.dumps([_catalogue_entry(d) for d in definitions], indent=2, ensure_ascii=False, default=repr)


# ------------------------------------------------------------------------------ tables (csv, tsv, ...)
def table_columns(requested: Sequence[Requested], *, per_query: bool, summary: bool) -> list[Requested]:
    """The measures that get a column: a text measure (relstring) only with per-query rows, a
    summary-only one (num_q, gm_map) only with summary rows."""
    return [r for r in requested
            if (per_query or not r.measure.definition.text) and (summary or not r.measure.definition.summary_only)]


def table_header(columns: Sequence[Requested], *, per_query: bool, kind: bool = False) -> tuple[list[str], list[bool]]:
    """The header row of evaluate's tables (``run``, ``query`` with -q, ``kind`` when ``kind``, then one
    column per measure, named as typed), and which columns are numeric."""
    keys = ["run", "query", *(["kind"] if kind else [])] if per_query else ["run"]
    return [*keys, *(r.shown for r in columns)], [False] * len(keys) + [not r.measure.definition.text
                                                                        for r in columns]


def _cell(measure: Measure, value: float | str, zscores: bool = False) -> float | int | str | None:
    if isinstance(value, str):
        return value
    if not math.isfinite(value):
        return None
    return int(value) if measure.definition.integer and not zscores else value  # a z-score of a count is no count


#: The ``kind`` column's values: a query's row, and the summary row (``all``) of CSV and TSV tables.
QUERY_ROW, SUMMARY_ROW = "query", "summary"


def table_rows(
    results: SetEvaluator, columns: Sequence[Requested], name: str | None, *, per_query: bool, summary: bool,
    kind: bool = False,
) -> list[list[float | int | str | None]]:
    """evaluate's table rows for one run: a row per query (with ``per_query``), then its ``all`` row.

    Each row starts with ``name`` (a caller that learns the name later sets it), then with
    ``per_query`` the query id and, with ``kind``, ``query`` or ``summary``: a query may be named
    ``all``. A cell is empty where the measure has no value: a summary-only measure on a query's row,
    a text measure on the ``all`` row.
    """
    lines: list[list[float | int | str | None]] = []
    # The summaries first: with -q their per-query arrays, computed together, are the ones shown.
    summarised = [r for r in columns if not r.measure.definition.text] if summary else []
    summaries = dict(zip(summarised, _summaries(results, summarised, per_query)))
    z = results.zscores is not None
    if per_query:
        values = [None if r.measure.definition.summary_only else _per_query(results, r.measure) for r in columns]
        marks = [QUERY_ROW] if kind else []
        for i, qid in enumerate(results.query_ids):
            lines.append([name, qid, *marks, *(None if column is None else _cell(r.measure, column[i], z)
                                               for r, column in zip(columns, values))])
    if summary:
        keys: list[float | int | str | None] = [name, "all", *([SUMMARY_ROW] if kind else [])] if per_query else [name]
        lines.append([*keys, *(None if r.measure.definition.text else _cell(r.measure, summaries[r], z)
                               for r in columns)])
    return lines


@frozen
class WideColumn:
    """One run's column of a wide table: its queries, their cells, and its summary's cell."""

    query_ids: list[str]
    cells: list[float | int | str | None]
    summary: float | int | str | None


def wide_column(results: SetEvaluator, item: Requested, *, summary: bool) -> WideColumn:
    """``item``'s value for every query of ``results`` (and its summary, when ``summary``)."""
    values, z = _per_query(results, item.measure), results.zscores is not None
    total = _cell(item.measure, _summaries(results, [item], True)[0], z) if summary else None
    return WideColumn(list(results.query_ids), [_cell(item.measure, v, z) for v in values], total)


def wide_table(names: Sequence[str], columns: Sequence[WideColumn], *, summary: bool,
               kind: bool = False) -> tuple[list[str], list[bool], list[list[float | int | str | None]]]:
    """A wide table: one row per query (every run's queries, first seen first), one column per run,
    then the ``all`` row of the runs' summaries when ``summary``. A cell is empty where a run has no
    value for the query. Returns the header, which columns are numeric, and the rows.

    Examples
    --------
    >>> header, _, rows = wide_table(["a", "b"], [WideColumn(["q1", "q2"], [1.0, 0.5], 0.75),
    ...                                           WideColumn(["q1"], [0.0], 0.0)], summary=True, kind=True)
    >>> header
    ['query', 'kind', 'a', 'b']
    >>> rows
    [['q1', 'query', 1.0, 0.0], ['q2', 'query', 0.5, None], ['all', 'summary', 0.75, 0.0]]
    """
    marks = [QUERY_ROW] if kind else []
    keys = ["query", *(["kind"] if kind else [])]
    lookups = [dict(zip(column.query_ids, column.cells)) for column in columns]
    queries = dict.fromkeys(q for column in columns for q in column.query_ids)
    rows: list[list[float | int | str | None]] = [[q, *marks, *(lookup.get(q) for lookup in lookups)]
                                                  for q in queries]
    if summary:
        rows.append(["all", *([SUMMARY_ROW] if kind else []), *(column.summary for column in columns)])
    return [*keys, *names], [False] * len(keys) + [True] * len(names), rows
