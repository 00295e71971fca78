"""``retrieval-eval inspect``: one query's ranking, judgments and misses; or the worst queries."""

from __future__ import annotations

import argparse

from ._options import MAX_DIGITS, _add_run_options, _at_least_one, _digits, _Parser, _RawDescriptionFormatter
from ._output import EXIT_OK, _emit, _Usage
from ._runs import (
    _load_runs,
    _per_query_measures,
    _refuse_stdin_twice,
    _report_query_set,
    _run_id_names,
    _run_names,
    _sources,
)

_INSPECT_HELP = """\
Look at one query (--query Q): its top documents with their judgments (a grade, 'unjudged' when
the qrels do not name the document, or the negative 'pooled, not judged' value), the relevant
documents the run did not retrieve (highest grade first), and the query's values of the measures
(default: the official set's main ones, as evaluate -q prints them).

Without --query: the worst queries on the first -m measure (default map), each with R (its
relevant judgments), the rank of its first relevant document and how many relevant documents the
run missed."""


#: The measures inspect --query shows without -m: the main measures of trec_eval's official set.
INSPECT_MEASURES = ("num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P.5,10,20")


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    inspect = commands.add_parser("inspect", help="one query's ranking, judgments and misses; or the worst queries",
                                  description=_INSPECT_HELP, formatter_class=_RawDescriptionFormatter)
    inspect.add_argument("qrels", metavar="QRELS", help="TREC qrels file (gzip ok; - for stdin)")
    inspect.add_argument("run", metavar="RUN", help="TREC run file (gzip ok; - for stdin)")
    inspect.add_argument("--query", metavar="Q", help="the query to show (without it: the worst queries)")
    inspect.add_argument("--depth", type=_at_least_one, default=None, metavar="N",
                         help="documents of the ranking to show with --query (default 20)")
    inspect.add_argument("--worst", type=_at_least_one, default=None, metavar="N",
                         help="without --query: how many of the worst queries to list (default 10)")
    inspect.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                         help="measure to show, repeatable (trec_eval or ir_measures names); the worst queries are "
                              "those lowest on the first one")
    inspect.add_argument("--format", choices=("text", "json"), default="text",
                         help="with --query: text (default) or json (full precision, as report embeds it)")
    inspect.add_argument("--digits", type=_digits, default=4, metavar="N",
                         help=f"decimals printed, 0 to {MAX_DIGITS} (default 4)")
    _add_run_options(inspect)


def run(args: argparse.Namespace) -> int:
    from ..analysis.inspection import format_query, format_worst, inspect_query, worst_queries
    from ..report.text import order_requested

    if args.query is None and args.depth is not None:
        raise _Usage("--depth applies to one query's ranking; give --query Q")
    if args.query is not None and args.worst is not None:
        raise _Usage("--worst lists the worst queries; drop --query to see them")
    if args.query is None and args.format != "text":
        raise _Usage("--format json shows one query; give --query Q")
    _refuse_stdin_twice(args.qrels, [args.run])
    specs = args.measures or (list(INSPECT_MEASURES) if args.query is not None else ["map"])
    if args.query is not None:
        requested = order_requested(_per_query_measures(specs, args.level, text=True))
    else:  # the queries are ranked by the first -m, whatever its place in the table order
        first = _per_query_measures(specs[:1], args.level)
        requested = list({(r.measure, r.label): r for r in [*first, *_per_query_measures(specs, args.level)]}.values())
    qrels, runs = _sources(args.qrels, [args.run])
    [results] = _load_runs(args, qrels, runs, requested)
    [name] = _run_id_names(runs, [results.run_id])  # the run, as evaluate names it; errors name its file
    if args.query is not None:
        view = inspect_query(results, args.query, [(r.label, r.measure) for r in requested],
                             depth=args.depth or 20, where=_run_names(runs)[0])
        if args.format == "json":
            import json

            from ..report.query_json import query_view_json

            _emit(json.dumps(query_view_json(view, run=name), indent=2, allow_nan=False) + "\n")
        else:
            _emit(format_query(view, run=name, rel=args.level, digits=args.digits))
        return EXIT_OK
    if not args.quiet:
        _report_query_set(args, results, requested)
    worst = worst_queries(results, [r.measure for r in requested], args.worst or 10)
    _emit(format_worst(worst, [r.label for r in requested], total=len(results), digits=args.digits))
    return EXIT_OK
