"""``retrieval-eval pool``: the documents to judge next, as a qrels-shaped file for assessors."""

from __future__ import annotations

import argparse
from typing import Any

from ._options import _add_quiet, _at_least_one, _non_negative, _Parser, _persistence, _RawDescriptionFormatter
from ._output import EXIT_OK, _counted, _emit, _note, _OutputFailed, _Usage, check_output_file
from ._runs import _refuse_stdin_twice, _stdin

_POOL_HELP = """\
List the documents that RUNs retrieved and QRELS does not judge yet (a negative label counts as not
judged), per query, best candidates first. Each run is ranked in trec_eval's order.

  --depth K                     every document in some run's top K (TREC pooling); ordered by its
                                best rank, then by how many runs have it, then by doc_id
  --method rrf --budget N       the N best per query by reciprocal rank fusion, sum of 1/(k + rank)
  --method rbp --budget N       the N best per query by RBP's weight, sum of (1 - p) p^(rank - 1):
                                the documents that weigh most in RBP and nDCG-like measures first

--depth also limits rrf and rbp to each run's top K; --budget also caps depth pooling.

The output has the qrels' shape, one line per document:  QUERY PRIORITY DOC_ID -1
PRIORITY (trec_eval's ignored second column) is the document's place in its query's list, 1 first;
-1 is "pooled but not judged", so the file can be appended to the qrels as it is, and an assessor
replaces each -1 with a grade. -o FILE writes it into a new file renamed over FILE once complete,
never over an input. See docs/judgments.md."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    parser = commands.add_parser("pool", help="the unjudged documents to judge next, in priority order",
                                 description=_POOL_HELP, formatter_class=_RawDescriptionFormatter)
    parser.add_argument("qrels", metavar="QRELS", help="the judgments so far (gzip ok; - for stdin)")
    parser.add_argument("runs", metavar="RUN", nargs="+", help="the runs to pool (TREC, JSON or Parquet; gzip ok)")
    parser.add_argument("--method", choices=("depth", "rrf", "rbp"), default=None,
                        help="how candidates are scored (default depth with --depth, else rrf)")
    parser.add_argument("--depth", type=_at_least_one, default=None, metavar="K",
                        help="take each run's top K documents")
    parser.add_argument("--budget", type=_at_least_one, default=None, metavar="N",
                        help="keep the N best unjudged documents of each query")
    parser.add_argument("-k", dest="k", type=_non_negative, default=60.0, metavar="K",
                        help="RRF's constant k (default 60)")
    parser.add_argument("-p", dest="p", type=_persistence, default=0.8, metavar="P",
                        help="RBP's persistence, strictly between 0 and 1 (default 0.8)")
    parser.add_argument("-o", dest="output", metavar="FILE", help="write the pool to FILE (default: standard output)")
    _add_quiet(parser)


def run(args: argparse.Namespace) -> int:
    from ..analysis.pools import pool, pool_lines

    if args.method is None and args.depth is None and args.budget is None:
        raise _Usage("give --depth K (depth pooling), or --budget N with --method rrf or rbp")
    method = args.method or ("depth" if args.depth is not None and args.budget is None else "rrf")
    if method == "depth" and args.depth is None:
        raise _Usage("--method depth needs --depth K")
    if method != "depth" and args.budget is None:
        raise _Usage(f"--method {method} needs --budget N")
    _refuse_stdin_twice(args.qrels, args.runs)
    if args.output is not None:
        check_output_file(args.output, [args.qrels, *args.runs], writing="the pool")
    qrels: Any = _stdin("qrels") if args.qrels == "-" else args.qrels
    runs = [_stdin("a run") if r == "-" else r for r in args.runs]
    entries = pool(qrels, runs, method=method, depth=args.depth, budget=args.budget, k=args.k, p=args.p)
    text = pool_lines(entries)
    if args.output is None:
        _emit(text)
        return EXIT_OK
    from ..io.files import replacing

    try:
        with replacing(args.output) as out:
            out.write(text.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        raise _OutputFailed(f"{args.output}: {exc.strerror or exc}") from None
    if not args.quiet:
        queries = len({e.query_id for e in entries})
        _note(f"wrote {_counted(len(entries), 'document', 'documents')} of "
              f"{_counted(queries, 'query', 'queries')} to {args.output}")
    return EXIT_OK
