"""``retrieval-eval reproduce``: how close a reproduced run comes to the original (repro_eval's measures)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._options import _add_quiet, _at_least_one, _digits, _Parser, _persistence, _RawDescriptionFormatter
from ._output import EXIT_OK, _emit, _Usage
from ._runs import _stdin

_REPRODUCE_HELP = """\
Compare a reproduced run with the original, with the measures of repro_eval (Breuer et al. 2020):

  KTU, RBO        document order, no qrels needed: Kendall's tau Union and the rank-biased overlap
                  truncated at --depth with persistence -p (repro_eval's, normalised to [0, 1]);
                  per query (--per-query) and on average over the queries both runs have
  RMSE, nRMSE     with --qrels: the root mean square error of each measure's per-query values,
                  and RMSE over its largest possible value for the original's values
  ER, DeltaRI     with --qrels and --baseline: the effect ratio (the reproduction's mean gain over
                  the baseline divided by the original's) and the difference of the relative
                  improvements of the means (original minus reproduction)

--baseline takes one run (the same baseline for both) or two (the original's baseline, then the
reproduction's). Effect numbers are over the original run's judged queries; a query the
reproduction lacks counts as 0. See docs/judgments.md."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    parser = commands.add_parser("reproduce", help="KTU, RBO, RMSE, ER and DeltaRI of a reproduced run",
                                 description=_REPRODUCE_HELP, formatter_class=_RawDescriptionFormatter)
    parser.add_argument("original", metavar="ORIG", help="the original run (TREC, JSON or Parquet; gzip ok)")
    parser.add_argument("reproduced", metavar="REPRO", help="the reproduced run")
    parser.add_argument("--qrels", metavar="QRELS", help="judgments: adds RMSE and nRMSE per measure")
    parser.add_argument("--baseline", nargs="+", metavar="RUN",
                        help="baseline run(s): adds ER and DeltaRI (needs --qrels)")
    parser.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                        help="measure of the effect numbers, repeatable (default AP, nDCG@10, P@10)")
    parser.add_argument("-p", dest="p", type=_persistence, default=0.95, metavar="P",
                        help="RBO's persistence (default 0.95, as repro_eval)")
    parser.add_argument("--depth", type=_at_least_one, default=1000, metavar="D",
                        help="documents per query compared by KTU and RBO (default 1000, as repro_eval)")
    parser.add_argument("--per-query", action="store_true", help="also print KTU and RBO of each query")
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table (default) or json: everything, per query too")
    parser.add_argument("--digits", type=_digits, default=4, metavar="N", help="decimals in the table (default 4)")
    _add_quiet(parser)


def _source(path: str, what: str) -> Any:
    return _stdin(what) if path == "-" else path


def run(args: argparse.Namespace) -> int:
    from ..analysis.reproduce import reproduce
    from ._plain import plain_table

    baseline = args.baseline or []
    if len(baseline) > 2:
        raise _Usage("--baseline takes one run or two (the original's baseline, then the reproduction's)")
    if baseline and args.qrels is None:
        raise _Usage("ER and DeltaRI need --qrels as well as --baseline")
    inputs = [args.original, args.reproduced, *([args.qrels] if args.qrels else []), *baseline]
    if inputs.count("-") > 1:
        raise _Usage("only one input can be - (standard input); give the others as files")
    report = reproduce(_source(args.original, "a run"), _source(args.reproduced, "a run"),
                       qrels=None if args.qrels is None else _source(args.qrels, "qrels"),
                       baseline=[_source(b, "a run") for b in baseline],
                       measures=args.measures or ["AP", "nDCG@10", "P@10"], p=args.p, depth=args.depth)
    if args.format == "json":
        _emit(json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n")
        return EXIT_OK
    text = ""
    if args.per_query:
        text += plain_table(["query", "KTU", "RBO"], list(zip(report.query_ids, report.ktu, report.rbo)),
                            args.digits) + "\n"
    text += plain_table(["document order", "mean"], [["KTU", report.mean_ktu()], [f"RBO@{args.depth}", report.mean_rbo()]],
                        args.digits)
    if report.effects:
        header = ["measure", "RMSE", "nRMSE", *(["ER", "DeltaRI"] if baseline else [])]
        rows = [[e.measure, e.rmse, e.nrmse, *([e.er, e.delta_ri] if baseline else [])] for e in report.effects]
        text += "\n" + plain_table(header, rows, args.digits)
    _emit(text)
    return EXIT_OK
