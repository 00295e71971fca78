"""``retrieval-eval baseline save``: keep a run's per-query values as a baseline file for ``check``."""

from __future__ import annotations

import argparse

from ._options import _add_run_options, _Parser, _RawDescriptionFormatter
from ._output import EXIT_OK, _counted, _note, _OutputFailed, _Usage, check_output_file
from ._runs import _as_typed, _load_runs, _per_query_measures, _report_query_set, _sources

_BASELINE_HELP = """\
Keep what a run scored as a baseline file, so that 'retrieval-eval check' can gate later runs
against it without the old run file. The file (JSON, documented in docs/gating.md) records each
measure's value for every query and its mean, the options the run was scored with, the names and
SHA-256 hashes of the qrels and run files, the package's version and the time. check refuses a
baseline made with other qrels or other options, and says what differs.

Only measures summarised by their mean can be kept (not the counts, GMAP or GAUC)."""

#: What the baseline keeps without -m: compare's headline measures.
DEFAULT_MEASURES = ("AP", "nDCG@10", "P@10", "RR", "R@1000")


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    baseline = commands.add_parser("baseline", help="keep a run's per-query values as a baseline file for check",
                                   description=_BASELINE_HELP, formatter_class=_RawDescriptionFormatter)
    actions = baseline.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    save = actions.add_parser("save", help="evaluate a run and write its baseline file",
                              description="Evaluate RUN on QRELS and write the baseline file -o FILE.")
    save.add_argument("qrels", metavar="QRELS", help="TREC qrels file (.gz ok); a file, as its hash is recorded")
    save.add_argument("run", metavar="RUN", help="TREC run file (.gz ok); a file, as its hash is recorded")
    save.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                      help="measure to keep, repeatable (default: AP, nDCG@10, P@10, RR, R@1000)")
    save.add_argument("-o", dest="output", required=True, metavar="FILE",
                      help="the baseline file to write (replaced whole, never half-written; not an input)")
    _add_run_options(save)


def _check_files(args: argparse.Namespace) -> None:
    """Every file named, before anything is read: QRELS and RUN are files, -o is none of them."""
    for what, path in (("QRELS", args.qrels), ("RUN", args.run)):
        if path == "-":
            raise _Usage(f"{what}: expected a file, found - (standard input): a baseline records the file's hash")
    check_output(args.output, [args.qrels, args.run], what="-o")


def check_output(path: str, inputs: list[str], *, what: str) -> None:
    """An output file's name: not a directory, in a directory that exists, and none of ``inputs``."""
    check_output_file(path, inputs, option=what)


def run(args: argparse.Namespace) -> int:
    from .. import __version__
    from ..harness.baseline import Baseline
    from ..model import RetrievalEvalError

    _check_files(args)
    specs = args.measures or list(DEFAULT_MEASURES)
    requested = _as_typed(specs, _per_query_measures(specs, args.level), args.level)  # in -m order
    for item in requested:
        if item.measure.definition.aggregate != "mean":
            raise _Usage(f"-m {item.label}: a baseline keeps measures summarised by their mean; the summary of "
                         f"{item.measure.definition.name} is not")
    qrels, runs = _sources(args.qrels, [args.run])
    results = _load_runs(args, qrels, runs, requested)[0]
    if not args.quiet:
        _report_query_set(args, results, requested)
    options = {"rel": args.level, "complete": not args.skip_missing, "judged_only": args.judged_only,
               "max_depth": args.max_depth, "order": args.order, "duplicates": args.duplicates,
               "ties": args.ties}
    try:
        kept = Baseline.create(results, measures=[item.typed or item.label for item in requested],
                               qrels_path=args.qrels, run_path=args.run, options=options,
                               package_version=__version__)
    except OSError as exc:  # a file gone between the evaluation and the hash
        raise RetrievalEvalError(f"cannot hash the inputs: {exc}") from None
    try:
        kept.write(args.output)
    except OSError as exc:
        raise _OutputFailed(f"{args.output}: {exc.strerror or exc}") from None
    if not args.quiet:
        _note(f"wrote {args.output}: {_counted(len(kept.measures), 'measure', 'measures')} over "
              f"{_counted(len(kept.queries), 'query', 'queries')}")
    return EXIT_OK
