"""``retrieval-eval diff``: two runs compared query by query; or one query's two rankings."""

from __future__ import annotations

import argparse

from ._options import (
    _TABLE_FORMATS,
    MAX_DIGITS,
    _add_run_options,
    _at_least_one,
    _digits,
    _Parser,
    _RawDescriptionFormatter,
)
from ._output import EXIT_OK, _emit, _Usage
from ._runs import (
    _given_names,
    _load_runs,
    _names,
    _per_query_measures,
    _refuse_stdin_twice,
    _report_query_set,
    _sources,
)

_DIFF_HELP = """\
Compare two runs query by query on a measure (default nDCG@10): their means, how many queries
RUN_B helped, hurt or left unchanged against RUN_A, and the largest gains and losses. The table
formats (csv, tsv, markdown, latex) and json give every query's change, largest gain first.

With --query Q: the two rankings of Q side by side, and the documents that entered or left the
top k (--depth) with their judgments (as text, or --format json)."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    diff = commands.add_parser("diff", help="per-query differences between two runs; one query's two rankings",
                               description=_DIFF_HELP, formatter_class=_RawDescriptionFormatter)
    diff.add_argument("qrels", metavar="QRELS", help="TREC qrels file (gzip ok; - for stdin), read once")
    diff.add_argument("run_a", metavar="RUN_A", help="the baseline run (gzip ok)")
    diff.add_argument("run_b", metavar="RUN_B", help="the run compared with it (gzip ok)")
    diff.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                      help="measure to compare, repeatable (default nDCG@10)")
    diff.add_argument("--top", type=_at_least_one, default=None, metavar="N",
                      help="how many of the largest gains and of the largest losses to list (default 10)")
    diff.add_argument("--query", metavar="Q", help="show this query's two rankings side by side instead")
    diff.add_argument("--depth", type=_at_least_one, default=None, metavar="K",
                      help="with --query: the top K documents to compare (default 10)")
    diff.add_argument("--names", metavar="A,B",
                      help="names of the two runs (default: each run's run_id, as evaluate names them)")
    diff.add_argument("--format", choices=("text", "json", *_TABLE_FORMATS), default="text",
                      help="text (default); json, csv, tsv (full precision), markdown or latex: every query's "
                           "change, with a header row")
    diff.add_argument("--digits", type=_digits, default=4, metavar="N",
                      help=f"decimals in text, markdown and latex, 0 to {MAX_DIGITS} (default 4)")
    _add_run_options(diff)


def run(args: argparse.Namespace) -> int:
    from ..analysis.inspection import diff_query, diff_runs, format_diff, format_ranking_diff
    from ..report import tables

    if args.query is None and args.depth is not None:
        raise _Usage("--depth applies to one query's rankings; give --query Q")
    if args.query is not None and args.top is not None:
        raise _Usage("--top lists the largest changes over all queries; drop --query to see them")
    if args.query is not None and args.format not in ("text", "json"):
        raise _Usage("--query shows two rankings as text or json; drop --format or give --format json")
    _refuse_stdin_twice(args.qrels, [args.run_a, args.run_b])
    requested = _per_query_measures(args.measures or ["nDCG@10"], args.level)
    qrels, runs = _sources(args.qrels, [args.run_a, args.run_b])
    _given_names(args, 2)  # --names checked before any file is read
    a, b = _load_runs(args, qrels, runs, requested)
    name_a, name_b = _names(args, runs, [a.run_id, b.run_id])
    if args.query is not None:
        view = diff_query(a, b, args.query, [(r.label, r.measure) for r in requested],
                          k=args.depth or 10, names=(name_a, name_b))
        if args.format == "json":
            import json

            from ..report.query_json import ranking_diff_json

            _emit(json.dumps(ranking_diff_json(view, (name_a, name_b)), indent=2, allow_nan=False) + "\n")
        else:
            _emit(format_ranking_diff(view, (name_a, name_b), digits=args.digits))
        return EXIT_OK
    if not args.quiet:
        for name, results in ((name_a, a), (name_b, b)):
            _report_query_set(args, results, requested, run=name)
    diffs = [diff_runs(a, b, r.measure, r.label, names=(name_a, name_b)) for r in requested]
    if args.format == "text":
        _emit("\n".join(format_diff(d, (name_a, name_b), top=args.top or 10, digits=args.digits) for d in diffs))
    elif args.format == "json":
        import json

        from ..report.query_json import run_diffs_json

        _emit(json.dumps(run_diffs_json(diffs, (name_a, name_b)), indent=2, allow_nan=False) + "\n")
    else:
        header = ["measure", "query", name_a, name_b, "delta"]
        lines: list[list[tables.Cell]] = [[d.label, q.query_id, q.a, q.b, q.delta] for d in diffs for q in d.deltas]
        _emit(tables.head(args.format, header, [False, False, True, True, True])
              + tables.rows(args.format, lines, args.digits) + tables.tail(args.format))
    return EXIT_OK
