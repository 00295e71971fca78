"""``retrieval-eval flaky``: the queries on which repeated runs of one system disagree."""

from __future__ import annotations

import argparse

from ._options import (
    _add_run_options,
    _digits,
    _fraction,
    _non_negative,
    _Parser,
    _positive_int,
    _RawDescriptionFormatter,
)
from ._output import EXIT_OK, _counted, _emit, _note, _OutputFailed, _Usage, check_output_file
from ._runs import _given_names, _load_runs, _names, _per_query_measures, _refuse_stdin_twice, _sources

_FLAKY_HELP = """\
Read two or more runs of ONE system (repeated builds, approximate nearest-neighbour search) and
report, per query, how much they disagree: each measure's min, max, range and standard deviation
over the repeats, and the mean pairwise overlap of the top k documents (|A ∩ B| / k for each pair of
repeats; the order inside the top k does not count). A query is flagged when a measure's range is
above --max-spread or its overlap below --min-overlap; by default (0 and 1) any difference flags.

-o FILE writes the flagged query ids, one per line, as a quarantine list for a gate (the gate's
rules take them as quarantine = [...]); the file is replaced only once complete, and never one of
the inputs. See docs/flaky.md."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    flaky = commands.add_parser("flaky", help="queries whose results change between repeated runs of one system",
                                description=_FLAKY_HELP, formatter_class=_RawDescriptionFormatter)
    flaky.add_argument("qrels", metavar="QRELS", help="TREC qrels file (gzip ok; - for stdin), read once")
    flaky.add_argument("runs", metavar="RUN", nargs="+", help="two or more runs of the same system (gzip ok)")
    flaky.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                       help="measure whose spread is reported, repeatable (default nDCG@10)")
    flaky.add_argument("-k", dest="k", type=_positive_int, default=10, metavar="K",
                       help="depth of the top-k overlap (default 10)")
    flaky.add_argument("--max-spread", type=_non_negative, default=0.0, metavar="X",
                       help="flag a query whose range (max - min over the repeats) of a measure is above X "
                            "(default 0: any difference)")
    flaky.add_argument("--min-overlap", type=_fraction, default=1.0, metavar="Y",
                       help="flag a query whose mean pairwise overlap@k is below Y, from 0 to 1 (default 1: any "
                            "change in the top k)")
    flaky.add_argument("--flagged-only", action="store_true", help="list only the flagged queries (table, markdown)")
    flaky.add_argument("--format", choices=("table", "markdown", "csv", "json"), default="table",
                       help="table (default) or markdown: a row per query and a summary line; csv: full precision; "
                            "json: everything")
    flaky.add_argument("--digits", type=_digits, default=4, metavar="N", help="decimals in tables (default 4)")
    flaky.add_argument("-o", dest="output", metavar="FILE",
                       help="also write the flagged query ids to FILE, one per line (a quarantine list)")
    flaky.add_argument("--names", metavar="A,B,...", help="names of the runs, in order (default: file names)")
    _add_run_options(flaky)


def run(args: argparse.Namespace) -> int:
    from ..analysis.flaky import flaky_queries

    if len(args.runs) < 2:
        raise _Usage("flaky needs two or more runs of the same system")
    _refuse_stdin_twice(args.qrels, args.runs)
    if args.output is not None:
        check_output_file(args.output, [args.qrels, *args.runs], writing="the list")  # before reading the runs, not after
    requested = _per_query_measures(args.measures or ["nDCG@10"], args.level)
    qrels, runs = _sources(args.qrels, args.runs)
    _given_names(args, len(runs))  # --names checked before any file is read
    evaluations = _load_runs(args, qrels, runs, requested)
    names = _names(args, runs, [results.run_id for results in evaluations])
    report = flaky_queries(evaluations, [item.measure for item in requested], k=args.k,
                           max_spread=args.max_spread, min_overlap=args.min_overlap, names=names)
    if args.format == "json":
        text = report.to_json() + "\n"
    elif args.format == "csv":
        text = report.to_csv()
    elif args.format == "markdown":
        text = report.to_markdown(args.digits, only_flagged=args.flagged_only)
    else:
        text = report.to_table(args.digits, only_flagged=args.flagged_only)
    if args.output is not None:
        _write_list(args.output, report.flagged())
    _emit(text)
    if args.output is not None and not args.quiet:
        _note(f"wrote {_counted(len(report.flagged()), 'flagged query id', 'flagged query ids')} to {args.output}")
    return EXIT_OK


def _write_list(path: str, query_ids: list[str]) -> None:
    """The quarantine list: one id per line, written into a new file renamed over ``path`` once complete."""
    from ..io.files import replacing

    try:
        with replacing(path) as out:
            out.write("".join(f"{q}\n" for q in query_ids).encode("utf-8", "surrogateescape"))
    except OSError as exc:  # a full disk, a file-size limit: the output failed
        raise _OutputFailed(f"{path}: {exc.strerror or exc}") from None
