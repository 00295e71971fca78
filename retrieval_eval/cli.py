"""The ``retrieval-eval`` command line: parse arguments, evaluate, format. No measure logic here.

Heavy imports (numpy and the package) happen inside the commands, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported for annotations only: the commands import lazily, to keep --help fast
    from .output import Requested

EXIT_OK = 0
EXIT_BAD_INPUT = 2

_EVALUATE_HELP = """\
Score a TREC run against TREC qrels and print trec_eval's lines (or JSON).

Without -m the measures are trec_eval's official set. Queries in the qrels that the run lacks
are scored as empty rankings (0) and counted in every mean, as with trec_eval -c; run queries
without judgments are ignored. Both are reported on stderr.

With --log, one labelled log of 'group item score label' rows (TSV, CSV, .gz, or Parquet with
pyarrow) stands for both files: each group is ranked by score and each row's label is its
judgment, so AUC, GAUC and every ranking measure work on click logs."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer; got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0; got {text!r}")
    return value


def _add_evaluation_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", dest="per_query", action="store_true",
                        help="also print every measure for every query, before the summary")
    parser.add_argument("-n", dest="no_summary", action="store_true",
                        help="do not print the summary ('all') lines")
    query_set = parser.add_mutually_exclusive_group()
    query_set.add_argument("-c", dest="complete", action="store_true",
                           help="score judged queries the run lacks as 0 (the default; accepted for trec_eval)")
    query_set.add_argument("--skip-missing", action="store_true",
                           help="average only over queries that have both judgments and results")
    parser.add_argument("-J", dest="judged_only", action="store_true",
                        help="evaluate only judged documents: drop unjudged ones and re-rank")
    parser.add_argument("-l", dest="level", type=_positive_int, default=1, metavar="LEVEL",
                        help="relevance level: a judgment >= LEVEL is relevant (default 1)")
    parser.add_argument("-M", dest="max_depth", type=_positive_int, default=None, metavar="DEPTH",
                        help="evaluate only the top DEPTH documents of each ranking")
    parser.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                        help="measure to report, repeatable: trec_eval names and groups (map, P.5,10, "
                             "ndcg_cut.10, official) or ir_measures names (AP, P@10, nDCG@10, R@100)")
    parser.add_argument("--digits", type=_positive_int, default=4, metavar="N",
                        help="decimals printed in trec format (default 4)")
    parser.add_argument("--format", choices=("trec", "json"), default="trec",
                        help="trec: trec_eval's lines (default); json: full precision, per query and summary")
    parser.add_argument("--order", choices=("score", "file", "rank"), default="score",
                        help="rank by score, ties by doc_id descending (trec_eval; default), by file order, "
                             "or by the rank column")
    parser.add_argument("--duplicates", choices=("error", "first"), default="error",
                        help="a document listed twice for one query: fail (default) or keep its first line")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="retrieval-eval",
        description="Evaluate ranked retrieval runs with trec_eval's exact numbers.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    evaluate = commands.add_parser("evaluate", help="score a run against qrels (trec_eval compatible)",
                                   description=_EVALUATE_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    evaluate.add_argument("qrels", metavar="QRELS", nargs="?",
                          help="TREC qrels file: 'query_id iter doc_id relevance' (.gz ok)")
    evaluate.add_argument("run", metavar="RUN", nargs="?",
                          help="TREC run file: 'query_id Q0 doc_id rank score run_id' (.gz ok; - for stdin)")
    evaluate.add_argument("--log", metavar="LOG",
                          help="a labelled log of 'group item score label' rows instead of QRELS and RUN "
                               "(.tsv, .csv, .gz, .parquet; - for stdin)")
    _add_evaluation_options(evaluate)

    demo = commands.add_parser("demo", help="evaluate the sample run bundled with the package",
                               description="Evaluate the bundled sample qrels and run (see retrieval_eval/data).")
    _add_evaluation_options(demo)

    commands.add_parser("measures", help="list every measure with its parameters and trec_eval name",
                        description="List the measure catalogue: name, aliases, one-line definition, parameters "
                                    "with defaults, trec_eval name and how the summary aggregates it.")
    return parser


def _requested(specs: Sequence[str] | None, level: int) -> tuple[list[Requested], bool]:
    """The measures to print with their labels, and whether the runid line is printed.

    trec_eval prints ``runid`` only when it is asked for, alone or through a group (official,
    all_trec, set). Several ``-m`` options combine as in trec_eval (see ``parse_trec_options``).
    """
    from .measures import parse_trec_options, trec_table
    from .output import Requested

    specs = specs or ["official"]
    show_run_id = any(spec.strip() in (trec_table.RUN_ID, *trec_table.group_names()) for spec in specs)
    requested = [Requested(measure, label) for measure, label in parse_trec_options(specs, rel=level)]
    return requested, show_run_id


def _evaluate(args: argparse.Namespace, qrels: object, run: object) -> int:
    from .evaluator import SetEvaluator
    from .output import json_report, order_requested, trec_lines

    requested, show_run_id = _requested(args.measures, args.level)
    requested = order_requested(requested)
    if getattr(args, "log", None) is not None:
        log = sys.stdin.buffer if args.log == "-" else args.log
        results = SetEvaluator.from_log(log, rel=args.level, max_depth=args.max_depth, judged_only=args.judged_only,
                                        duplicates=args.duplicates)
    else:
        results = SetEvaluator.from_trec(
            qrels, run, rel=args.level, max_depth=args.max_depth, judged_only=args.judged_only,
            duplicates=args.duplicates, complete=not args.skip_missing, order=args.order,
        )
    if results.missing_from_run and not args.complete:
        action = "left out of the means" if args.skip_missing else "scored as empty rankings (as trec_eval -c)"
        print(f"retrieval-eval: note: {len(results.missing_from_run)} judged queries have no results; "
              f"{action}: {_preview(results.missing_from_run)}", file=sys.stderr)
    if results.not_judged:
        print(f"retrieval-eval: note: {len(results.not_judged)} run queries have no judgments and are ignored: "
              f"{_preview(results.not_judged)}", file=sys.stderr)
    unjudged = results.only_unjudged
    if unjudged:
        _warn(f"{len(unjudged)} queries have only negative judgments (pooled but never judged), so every measure "
              f"is 0 for them: {_preview(unjudged)}")
    unjudged_set = set(unjudged)
    no_relevant = [q for q in results.without_relevant if q not in unjudged_set]
    if no_relevant:
        _warn(f"{len(no_relevant)} queries have no relevant judgment (relevance >= {args.level}), so AP, "
              f"R-precision, recall and nDCG are 0 for them: {_preview(no_relevant)}")
    for item in requested:
        left_out = results.left_out(item.measure)
        if left_out:
            print(f"retrieval-eval: note: {item.label}: {len(left_out)} of {len(results)} queries have only relevant "
                  f"or only non-relevant documents and are left out of its summary: {_preview(left_out)}",
                  file=sys.stderr)
    out = sys.stdout
    if args.format == "json":
        out.write(json_report(results, requested, per_query=args.per_query, summary=not args.no_summary) + "\n")
    else:
        lines = trec_lines(results, requested, per_query=args.per_query, summary=not args.no_summary,
                           digits=args.digits, run_id=show_run_id)
        out.write("".join(line + "\n" for line in lines))
    out.flush()
    return EXIT_OK


def _warn(message: str) -> None:
    print(f"retrieval-eval: warning: {message}", file=sys.stderr)


def _show_warning(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
    """warnings.showwarning for the CLI: one plain line on stderr, no source location."""
    _warn(str(message))


def _preview(items: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


def _list_measures() -> int:
    from .measures.describe import listing

    sys.stdout.write(listing())
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 2 bad input or usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "evaluate":  # parser.error exits 2 with the usage line
        if args.log is None and args.run is None:
            parser.error("evaluate takes QRELS and RUN, or --log LOG")
        if args.log is not None and args.qrels is not None:
            parser.error("evaluate: --log replaces QRELS and RUN; give one or the other")
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # accepted-but-suspicious input is reported every time
        warnings.showwarning = _show_warning
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        from .model import RetrievalEvalError

        if args.command == "measures":
            return _list_measures()
        if args.command == "demo":
            from .data import sample_paths

            return _evaluate(args, *sample_paths())
        if args.log is not None:
            return _evaluate(args, None, None)
        run = sys.stdin.buffer if args.run == "-" else args.run
        return _evaluate(args, args.qrels, run)
    except RetrievalEvalError as exc:
        print(f"retrieval-eval: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # output piped into `head`: not an error
        sys.stderr.close()
        return EXIT_OK
