"""``retrieval-eval similarity``: how alike two runs' rankings are, query by query, without qrels."""

from __future__ import annotations

import argparse
import json

from ._options import _add_quiet, _at_least_one, _digits, _Parser, _persistence, _RawDescriptionFormatter
from ._output import EXIT_OK, _counted, _emit, _note, _preview, _Usage
from ._runs import _refuse_stdin_twice, _run_names, _stdin

_SIMILARITY_HELP = """\
Compare two runs without any qrels, on each query they both rank (documents in trec_eval's order:
score descending, ties by doc_id descending), and on average:

  rbo_ext, rbo_min, rbo_max, rbo_res   rank-biased overlap (Webber et al. 2010) with persistence -p:
                                       extrapolated, lower and upper bound, residual (max - min)
  jaccard@K, overlap@K                 |A∩B| / |A∪B| and |A∩B| / max(|A|,|B|) of the top K sets
  tau                                  Kendall's tau on the documents both runs retrieved
  shared                               how many documents both runs retrieved

Tied scores count in RBO as --rbo-ties says (Corsi & Urbano, SIGIR 2024): a (default) each depth's
overlap expected over the orders of the ties; b the same, normalised so that a run compared with
itself gives 1; w tied documents share one rank; trec_eval no ties (trec_eval's order). Queries
that only one run has are named on stderr and left out. See docs/judgments.md."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    parser = commands.add_parser("similarity", help="rank-biased overlap, Jaccard and Kendall's tau of two runs",
                                 description=_SIMILARITY_HELP, formatter_class=_RawDescriptionFormatter)
    parser.add_argument("runs", metavar="RUN", nargs=2, help="the two runs (TREC, JSON or Parquet; gzip ok; - for stdin)")
    parser.add_argument("-p", dest="p", type=_persistence, default=0.9, metavar="P",
                        help="RBO's persistence, strictly between 0 and 1 (default 0.9: the top 10 carry 86%% of "
                             "the weight)")
    # Not --ties: on the evaluating commands that flag picks the engine's tie policy, a different choice.
    parser.add_argument("--rbo-ties", dest="ties", choices=("a", "b", "w", "trec_eval"), default="a",
                        help="how RBO reads tied scores (default a); see above")
    parser.add_argument("-k", dest="k", type=_at_least_one, default=10, metavar="K",
                        help="depth of jaccard@K and overlap@K (default 10)")
    parser.add_argument("--depth", type=_at_least_one, default=None, metavar="D",
                        help="compare only the first D documents of each ranking (default: all)")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table",
                        help="table (default): a row per query and 'all' for the means; csv: full precision; "
                             "json: everything")
    parser.add_argument("--digits", type=_digits, default=4, metavar="N", help="decimals in the table (default 4)")
    _add_quiet(parser)


def run(args: argparse.Namespace) -> int:
    from ..analysis.similarity import similarity
    from ._plain import csv_table, plain_table

    if args.runs.count("-") > 1:
        raise _Usage("only one RUN can be - (standard input); give the other as a file")
    _refuse_stdin_twice("", args.runs)
    sources = [_stdin("a run") if run == "-" else run for run in args.runs]
    names = _run_names(sources)
    report = similarity(sources[0], sources[1], p=args.p, ties=args.ties, k=args.k, depth=args.depth,
                        names=(names[0], names[1]))
    if not args.quiet:
        for name, missing in ((names[0], report.only_first), (names[1], report.only_second)):
            if missing:
                _note(f"{_counted(len(missing), 'query', 'queries')} only in {name}, left out: {_preview(missing)}")
    if args.format == "json":
        _emit(json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n")
    elif args.format == "csv":
        _emit(csv_table(report.columns(), report.rows()))
    else:
        _emit(plain_table(report.columns(), report.rows(), args.digits))
    return EXIT_OK
