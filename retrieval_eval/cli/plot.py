"""``retrieval-eval plot``: precision-recall curves, per-query differences, first relevant ranks."""

from __future__ import annotations

import argparse
import os

from ._options import _add_run_options, _Parser, _RawDescriptionFormatter
from ._output import EXIT_OK, _note, _OutputFailed, _short, _Usage, check_output_file
from ._runs import _given_names, _load_runs, _names, _per_query_measures, _refuse_stdin_twice, _sources

_PLOT_HELP = """\
Draw an evaluation (needs matplotlib: pip install 'retrieval-evaluator[plot]'); the output's suffix
chooses PNG, SVG or PDF. pr: interpolated precision-recall curves at trec_eval's 11 recall points,
one line per run, MAP in the legend; diff: per-query differences RUN_B - RUN_A on a measure, as
sorted bars; ranks: histogram of the rank of each query's first relevant document."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    plot = commands.add_parser("plot", help="precision-recall curves, per-query differences, first relevant ranks",
                               description=_PLOT_HELP, formatter_class=_RawDescriptionFormatter)
    kinds = plot.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    helps = {"pr": "interpolated precision-recall curves, one per run",
             "diff": "per-query differences between two runs, as sorted bars",
             "ranks": "histogram of the first relevant document's rank, per run"}
    for kind, text in helps.items():
        sub = kinds.add_parser(kind, help=text, description=f"{text[0].upper()}{text[1:]}.")
        sub.add_argument("qrels", metavar="QRELS", help="TREC qrels file (gzip ok; - for stdin), read once")
        if kind == "diff":
            sub.add_argument("runs", metavar="RUN", nargs=2, help="RUN_A (the baseline) and RUN_B (gzip ok)")
            sub.add_argument("-m", dest="measure", default="nDCG@10", metavar="MEASURE",
                             help="the measure compared (default nDCG@10)")
        else:
            sub.add_argument("runs", metavar="RUN", nargs="+", help="TREC run files (gzip ok), one line each")
        sub.add_argument("-o", dest="output", required=True, metavar="FILE",
                         help="the image to write: .png, .svg or .pdf")
        sub.add_argument("--names", metavar="A,B,...",
                         help="names of the runs, in order (default: each run's run_id, as evaluate names them)")
        sub.add_argument("--title", metavar="TEXT", help="the figure's title (plain text; default: what is drawn)")
        sub.add_argument("--size", metavar="W,H", type=_size,
                         help="the figure's width and height in inches, 1 to 50 each (default 7,4.5)")
        if kind != "diff":  # differences have both signs: no log axis for them
            sub.add_argument("--log-y", action="store_true", help="a logarithmic y axis")
        _add_run_options(sub)


def _size(text: str) -> tuple[float, float]:
    """--size W,H: two numbers in inches, within the range the plots accept."""
    from ..report.plotting import SIZE_RANGE

    low, high = SIZE_RANGE
    parts = text.split(",")
    try:
        width, height = (float(part) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a width and a height in inches, as 7,4.5; got {_short(text)}") from None
    if not all(low <= value <= high for value in (width, height)):  # NaN fails both comparisons
        raise argparse.ArgumentTypeError(f"width and height must be from {low:g} to {high:g} inches; got {_short(text)}")
    return width, height


def _check_output(path: str, inputs: list[str]) -> None:
    """plot's -o, before anything is read: a known suffix, in a directory that exists and can be
    written, and none of the inputs (the image would replace it)."""
    from ..report.plotting import FORMATS

    shown = _short(path, 120)
    if os.path.splitext(path)[1].lower() not in FORMATS:
        raise _Usage(f"-o: expected a file name ending in {', '.join(FORMATS)}; got {shown}")
    check_output_file(path, inputs, writing="the image")


def run(args: argparse.Namespace) -> int:
    from ..report import plotting

    _refuse_stdin_twice(args.qrels, args.runs)
    _check_output(args.output, [args.qrels, *args.runs])  # before reading the runs, not after
    plotting.require_matplotlib()
    requested = _per_query_measures([args.measure] if args.kind == "diff" else ["map"], args.level)
    if len(requested) > 1:
        raise _Usage(f"-m {args.measure[:40]} names {len(requested)} measures; plot diff draws one, "
                     f"for example -m {requested[0].label}")
    qrels, runs = _sources(args.qrels, args.runs)
    _given_names(args, len(runs))  # --names checked before any file is read
    evaluations = _load_runs(args, qrels, runs, requested)
    names = _names(args, runs, [results.run_id for results in evaluations])
    looks = {"title": args.title, "size": args.size}
    if args.kind == "pr":
        figure = plotting.pr_curves(dict(zip(names, evaluations)), log_y=args.log_y, **looks)
    elif args.kind == "diff":
        figure = plotting.diff_bars(evaluations[0], evaluations[1], requested[0].measure, (names[0], names[1]),
                                    **looks)
    else:
        figure = plotting.first_relevant_ranks(dict(zip(names, evaluations)), log_y=args.log_y, **looks)
    try:
        plotting.save(figure, args.output)  # into a new file, renamed over -o once complete
    except OSError as exc:  # a full disk, a file-size limit: the output failed, as for evaluate
        raise _OutputFailed(f"{args.output}: {exc.strerror or exc}") from None
    if not args.quiet:
        _note(f"wrote {args.output}")
    return EXIT_OK
