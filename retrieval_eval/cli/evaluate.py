"""``retrieval-eval evaluate``: score runs against qrels; print trec_eval's lines, JSON or a table."""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ._options import _TABLE_FORMATS, _add_evaluation_options, _Parser, _RawDescriptionFormatter
from ._output import EXIT_OK, _emit
from ._runs import (
    _build_run,
    _Preparing,
    _read_judgments,
    _report_query_set,
    _requested,
    _run_names,
    _runs_read,
    _sources,
    _stdin,
    _stdin_problem,
)

if TYPE_CHECKING:
    from ..evaluators.set import SetEvaluator

_EVALUATE_HELP = """\
Score TREC runs against TREC qrels and print trec_eval's lines (or JSON, or a table).

Without -m the measures are trec_eval's official set. Queries in the qrels that the run lacks
are scored as empty rankings (0) and counted in every mean, as with trec_eval -c; run queries
without judgments are ignored. Both are reported on stderr.

With --log, one labelled log of 'group item score label' rows (TSV, CSV, .gz, or Parquet with
pyarrow) stands for both files: each group is ranked by score and each row's label is its
judgment, so AUC, GAUC and every ranking measure work on click logs.

Several runs (evaluate QRELS RUN1 RUN2 ...) are scored against the qrels read once: trec format
prints each run's block in turn (the runid line tells them apart), the table formats (csv, tsv,
markdown, latex) one row per run, or per run and query with -q."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    evaluate = commands.add_parser("evaluate", help="score a run against qrels (trec_eval compatible)",
                                   description=_EVALUATE_HELP, formatter_class=_RawDescriptionFormatter)
    evaluate.add_argument("qrels", metavar="QRELS", nargs="?",
                          help="TREC qrels file: 'query_id iter doc_id relevance' (gzip ok; - for stdin); also "
                               "3-column qrels, BEIR's qrels TSV, JSON or Parquet (see docs/api.md)")
    evaluate.add_argument("runs", metavar="RUN", nargs="*",
                          help="TREC run files: 'query_id Q0 doc_id rank score run_id' (gzip ok; - for stdin), "
                               "BEIR/MTEB results JSON (.json) or Parquet; several are scored against the qrels "
                               "read once")
    evaluate.add_argument("--log", metavar="LOG",
                          help="a labelled log of 'group item score label' rows instead of QRELS and RUN "
                               "(.tsv, .csv, .gz, .parquet; - for stdin)")
    evaluate.add_argument("--log-columns", metavar="GROUP,ITEM,SCORE,LABEL",
                          help="the log's group, item, score and label columns by name: Parquet columns, or "
                               "the names on a text log's header line (default: columns named group, item, "
                               "score, label in any order, else the first four in that order)")
    _add_evaluation_options(evaluate)


def _evaluate_usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with evaluate's arguments beyond what argparse checks; None if nothing."""
    if args.log is None and not args.runs:
        return "evaluate takes QRELS and RUN, or --log LOG"
    if args.log is not None and args.qrels is not None:
        return "--log replaces QRELS and RUN; give one or the other"
    if args.log_columns is not None and args.log is None:
        return "--log-columns names the columns of a --log LOG"
    if args.log_columns is not None and (len(set(args.log_columns.split(","))) != 4 or "" in args.log_columns.split(",")):
        return f"--log-columns takes 4 distinct names separated by commas: GROUP,ITEM,SCORE,LABEL; got {args.log_columns!r}"
    if args.log is not None and args.order != "score":
        return "--order applies to run files; a log is always ranked by score"
    return _stdin_problem(args.qrels, args.runs)


def run(args: argparse.Namespace) -> int:
    if args.log is not None:
        return _evaluate(args, None, [], log=_stdin("a log") if args.log == "-" else args.log)
    qrels, runs = _sources(args.qrels, args.runs)
    return _evaluate(args, qrels, runs)


def _evaluate(args: argparse.Namespace, qrels: object, runs: Sequence[object], log: object = None) -> int:
    from ..evaluators.set import SetEvaluator
    from ..report.text import (
        json_report,
        order_requested,
        table_columns,
        table_header,
        table_rows,
        trec_text,
    )

    requested, show_run_id = _requested(args.measures, args.level)
    requested = order_requested(requested)
    if log is not None:
        loaded: Iterator[SetEvaluator] = iter([SetEvaluator.from_log(
            log, rel=args.level, max_depth=args.max_depth, judged_only=args.judged_only, duplicates=args.duplicates,
            columns=tuple(args.log_columns.split(",")) if args.log_columns else None)])
        names = _run_names([args.log])
    else:
        judged = _read_judgments(qrels, runs[0],
                                 subtopics=any(item.measure.definition.subtopics for item in requested))
        # One run at a time: each is read, evaluated, printed and dropped before the next is read. The
        # qrels columns go with the last run's build: its measures reuse their memory (300 MB at 10 M queries).
        preparing = _Preparing(args, judged)
        held = [judged]
        del judged
        loaded = (_build_run(args, held.pop() if number == len(runs) else held[0], qrels, run, columns, preparing)
                  for number, (run, columns) in enumerate(_runs_read(args, runs), 1))
        names = _run_names(runs)
    summary = not args.no_summary
    columns = table_columns(requested, per_query=args.per_query, summary=summary)
    # Each run is printed only once every run is read and evaluated: a broken file found at the third run
    # stops the command before anything reaches stdout (never half a table). The evaluations themselves are
    # not kept, only their text, so several large runs need no more memory than the largest one and the columns
    # of the next one, read meanwhile (see _runs_read).
    parts: list[str] = []
    table = args.format in _TABLE_FORMATS
    if table:  # imported only for a table: csv costs start-up time that trec lines do not need
        from ..report import tables

        header, numeric = table_header(columns, per_query=args.per_query)
        parts.append(tables.head(args.format, header, numeric))
    streamed: Iterator[str] = iter(())  # the last run's trec lines, written as they are made
    for number, (name, results) in enumerate(zip(names, loaded), 1):
        if not args.quiet:
            _report_query_set(args, results, requested, run=name if len(names) > 1 else None)
        if args.format == "json":
            parts.append(json_report(results, requested, per_query=args.per_query, summary=summary,
                                     run=name if len(names) > 1 else None))
        elif table:
            lines = table_rows(results, columns, name, per_query=args.per_query, summary=summary)
            parts.append(tables.rows(args.format, lines, args.digits))
        else:
            pieces = trec_text(results, requested, per_query=args.per_query, summary=summary,
                               digits=args.digits, run_id=show_run_id)
            if number < len(names):
                parts.append("".join(pieces))
            else:  # every run is evaluated by now: the first piece computes the last values
                streamed = itertools.chain([next(pieces, "")], pieces)
        del results
    if table:
        parts.append(tables.tail(args.format))
    if args.format == "json":  # one document for one run (as before); a list of them for several
        parts = [(parts[0] if len(parts) == 1 else "[\n" + ",\n".join(parts) + "\n]") + "\n"]
    _emit("".join(parts))
    for piece in streamed:
        _emit(piece)
    return EXIT_OK
