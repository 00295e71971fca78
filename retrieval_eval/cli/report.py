"""``retrieval-eval report``: one self-contained HTML file with the comparison, every query and the rankings."""

from __future__ import annotations

import argparse
import os

from ._options import (
    _add_run_options,
    _add_significance_options,
    _at_least_one,
    _fraction,
    _Parser,
    _RawDescriptionFormatter,
)
from ._output import EXIT_OK, _counted, _note, _OutputFailed, _short, _Usage, check_output_file
from ._runs import _given_names, _load_runs, _names, _refuse_stdin_twice, _run_names, _sources

_REPORT_HELP = """\
Write one HTML file that holds the whole evaluation and opens offline in any browser (no network,
every script and style inline): compare's table with its significance marks and each mean's
confidence interval; every query in a table that sorts by any column and filters by id or text,
with each run's value, the difference against the baseline and flags (missing, unjudged-heavy,
tied); a per-query difference chart (click a bar to open the query) and precision-recall curves;
one query opened: two runs' top documents side by side with their scores, judgments and texts,
what entered and left the top k, the relevant documents missed and the query's values; and how the
numbers were made (version, options, the inputs' SHA-256, the date).

Every number is the one compare, evaluate -q, diff and inspect print as JSON for the same inputs.
--docs (TSV or JSONL of docid and text, .gz ok) and --topics (TREC topics or TSV) add texts; only
the texts of documents the page shows are embedded (the top --depth of each ranking and as many
missed relevant documents), each cut to --text-chars characters, so the file stays small whatever
the collection's size. See docs/sharing.md."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    report = commands.add_parser("report", help="a self-contained HTML report: comparison, queries, rankings",
                                 description=_REPORT_HELP, formatter_class=_RawDescriptionFormatter)
    report.add_argument("qrels", metavar="QRELS", help="TREC qrels file (.gz ok; - for stdin), read once")
    report.add_argument("runs", metavar="RUN", nargs="+",
                        help="TREC run files (.gz ok); with one run the page has no comparison")
    report.add_argument("-o", dest="output", required=True, metavar="FILE", help="the HTML file to write")
    report.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                        help="measure to report, repeatable (default: AP, nDCG@10, P@10, RR, R@1000)")
    report.add_argument("--docs", metavar="FILE",
                        help="document texts: TSV (docid TAB text) or JSONL (docid/_id/id and text, title), .gz ok")
    report.add_argument("--topics", metavar="FILE", help="query texts: TREC topics (<top>/<topic>) or TSV (qid TAB text)")
    report.add_argument("--names", metavar="A,B,...",
                        help="names of the runs, in order (default: each run's run_id, as evaluate names them)")
    report.add_argument("--baseline", metavar="NAME", help="the run the others are compared with (default: the first)")
    report.add_argument("--all-pairs", action="store_true",
                        help="compare every pair of runs, and embed what entered and left the top k for every pair "
                             "(default: each run with the baseline)")
    _add_significance_options(report)
    report.add_argument("--seed", type=int, default=0, help="seed of the Monte Carlo tests and intervals (default 0)")
    report.add_argument("--depth", type=_at_least_one, default=None, metavar="K",
                        help="documents of each ranking shown and embedded, per query and run (default 10)")
    report.add_argument("--text-chars", type=_at_least_one, default=None, metavar="N",
                        help="characters of each document's text kept (default 300)")
    report.add_argument("--unjudged-below", type=_fraction, default=None, metavar="X",
                        help="flag a query unjudged-heavy in a run whose Judged@K is below X (default 0.5)")
    report.add_argument("--title", metavar="TEXT", help="the page's title (default: Evaluation report)")
    _add_run_options(report, skip_missing="report only the queries every run has results for")


def _check_texts(paths: dict[str, str | None]) -> None:
    """--docs and --topics: files that exist (checked before the runs are read and evaluated)."""
    for option, path in paths.items():
        if path is None:
            continue
        if path == "-":
            raise _Usage(f"{option} must be a file, not standard input")
        if not os.path.isfile(path):
            raise _Usage(f"{option}: {_short(path, 120)} is not a file")


def run(args: argparse.Namespace) -> int:
    from ..analysis.comparison import _check_options, compare
    from ..report.html import build_and_write, check_limits
    from ..report.html_data import DEFAULT_DEPTH, DEFAULT_TEXT_CHARS, DEFAULT_UNJUDGED_BELOW
    from .compare import _requested_measures

    _refuse_stdin_twice(args.qrels, args.runs)
    texts = [path for path in (args.docs, args.topics) if path is not None]
    _check_texts({"--docs": args.docs, "--topics": args.topics})
    check_output_file(args.output, [args.qrels, *args.runs, *texts], writing="the report")
    given = _given_names(args, len(args.runs))
    if args.baseline is not None and given is not None and args.baseline not in given:
        raise _Usage(f"--baseline {_short(args.baseline)} is not one of the runs: {_short(', '.join(given), 200)}")
    depth = args.depth or DEFAULT_DEPTH
    text_chars = args.text_chars or DEFAULT_TEXT_CHARS
    unjudged = DEFAULT_UNJUDGED_BELOW if args.unjudged_below is None else args.unjudged_below
    limits = check_limits(depth, text_chars, unjudged)
    correction = _check_options(args.test, args.correction, args.alpha, args.permutations, args.samples, args.seed)
    requested = _requested_measures(args.measures or ["AP", "nDCG@10", "P@10", "RR", "R@1000"], args.level)
    qrels, runs = _sources(args.qrels, args.runs)
    evaluations = _load_runs(args, qrels, runs, requested)
    names = _names(args, runs, [results.run_id for results in evaluations])
    baseline = names[0] if args.baseline is None else args.baseline
    if baseline not in names:
        files = _run_names(runs)
        if baseline not in files:
            raise _Usage(f"--baseline {_short(baseline)} is not one of the runs: {_short(', '.join(names), 200)}")
        baseline = names[files.index(baseline)]
    by_name = dict(zip(names, evaluations))
    comparison = compare(None, by_name, [r.label for r in requested], baseline=baseline, all_pairs=args.all_pairs,
                         test=args.test, correction=correction, alpha=args.alpha, permutations=args.permutations,
                         samples=args.samples, seed=args.seed, rel=args.level,
                         complete=not args.skip_missing) if len(names) > 1 else None
    options = {"-m": [r.label for r in requested], "--test": args.test, "--correction": correction,
               "--alpha": args.alpha, "--seed": args.seed, "--all-pairs": args.all_pairs, "-c": not args.skip_missing,
               "-l": args.level, "-M": args.max_depth, "-J": args.judged_only, "--order": args.order,
               "--duplicates": args.duplicates, "--depth": depth, "--text-chars": text_chars,
               "--unjudged-below": unjudged}
    if args.test in ("permutation", "tukey"):
        options["--permutations"] = args.permutations
    if args.test == "bootstrap":
        options["--samples"] = args.samples
    try:
        data = build_and_write(args.output, by_name, [r.measure for r in requested], comparison, rel=args.level,
                               limits=limits,
                               qrels=args.qrels, runs=args.runs, docs=args.docs, topics=args.topics, options=options,
                               title=args.title)
    except OSError as exc:
        raise _OutputFailed(f"{args.output}: {exc.strerror or exc}") from None
    if not args.quiet:
        shown = len(data["docs"])
        _note(f"wrote {args.output}: {_counted(len(names), 'run', 'runs')}, "
              f"{_counted(len(data['queries']), 'query', 'queries')}"
              + (f", {shown} document texts" if args.docs is not None else ""))
    return EXIT_OK
