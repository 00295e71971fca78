"""``retrieval-eval compare``: several runs' means, paired significance tests, a regression gate."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from ._options import (
    MAX_DIGITS,
    _add_run_options,
    _add_significance_options,
    _digits,
    _non_negative,
    _Parser,
    _RawDescriptionFormatter,
)
from ._output import EXIT_OK, EXIT_REGRESSION, _emit, _short, _stderr_line, _Usage
from ._runs import (
    _build_run,
    _given_names,
    _names,
    _Preparing,
    _read_judgments,
    _report_query_set,
    _run_names,
    _runs_read,
    _sources,
    _stdin_problem,
)

if TYPE_CHECKING:
    from ..evaluators.set import SetEvaluator
    from ..report.text import Requested

_COMPARE_HELP = """\
Evaluate several runs on the same qrels and compare them: one table of means (runs as rows,
measures as columns), with each value marked by the letters of the runs it is significantly
better than. Each run is compared with the baseline (or every pair, --all-pairs) by a paired
test over queries; p-values are corrected within each measure. --format json gives every
comparison: mean difference, raw and adjusted p-value, effect size (Cohen's d_z), confidence
interval, wins/ties/losses.

Regression gate: with --fail-if-worse MEASURE the exit code is 1 when a run is significantly worse
than the baseline on MEASURE, after correction; each such run is named on stderr.

Risk: with --risk ALPHA every run is also measured against the baseline with URisk (mean gain, a
loss counting 1+ALPHA times), TRisk (URisk over its standard error, with a t p-value) and GeoRisk
(from all the runs' per-query values at once): a table after the legend (table, markdown) or a
'risk' list (json). See docs/comparing.md."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    compare = commands.add_parser("compare",
                                  help="compare runs: means, paired significance tests, a regression gate",
                                  description=_COMPARE_HELP, formatter_class=_RawDescriptionFormatter)
    compare.add_argument("qrels", metavar="QRELS",
                         help="TREC qrels file (.gz ok; - for stdin), read once for every run")
    compare.add_argument("runs", metavar="RUN", nargs="+",
                         help="TREC run files (.gz ok; - for stdin), at least two")
    compare.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                         help="measure to compare, repeatable: any catalogue string (default: AP, nDCG@10, P@10, "
                              "RR, R@1000)")
    compare.add_argument("--names", metavar="A,B,...",
                         help="names of the runs, in order (default: each run's run_id, as evaluate names them)")
    compare.add_argument("--baseline", metavar="NAME",
                         help="the run the others are compared with, by its name or file name (default: the first)")
    compare.add_argument("--all-pairs", action="store_true", help="compare every pair of runs instead")
    _add_significance_options(compare)
    compare.add_argument("--seed", type=int, default=None, help="seed of the Monte Carlo tests: same seed, same output")
    compare.add_argument("--format", choices=("table", "markdown", "latex", "csv", "json"), default="table",
                         help="table (default), markdown or latex: means with significance marks; csv: one line "
                              "per comparison; json: everything")
    compare.add_argument("--digits", type=_digits, default=4, metavar="N",
                         help=f"decimals in tables, 0 to {MAX_DIGITS} (default 4)")
    compare.add_argument("--risk", type=_non_negative, default=None, metavar="ALPHA",
                         help="add URisk, TRisk (with its p-value) and GeoRisk of each run against the baseline, a "
                              "loss weighing 1+ALPHA times a gain (ALPHA >= 0, e.g. 1 or 5): a table after the "
                              "legend (table, markdown), or 'risk' in json")
    compare.add_argument("--fail-if-worse", action="append", default=[], metavar="MEASURE",
                         help="exit 1 if a run is significantly worse than the baseline on MEASURE (repeatable)")
    _add_run_options(compare, skip_missing="compare only the queries every run has results for")


def run(args: argparse.Namespace) -> int:
    from ..analysis import comparison, stats

    # Every option is checked before a file is read, and so before anything is written.
    if len(args.runs) < 2:
        raise _Usage("compare needs at least two runs")
    problem = _stdin_problem(args.qrels, args.runs)
    if problem:
        raise _Usage(problem)
    given = _given_names(args, len(args.runs))
    if args.baseline is not None and given is not None and args.baseline not in given:
        raise _Usage(f"--baseline {_short(args.baseline)} is not one of the runs: {_short(', '.join(given), 200)}")
    gates = _gated(args.fail_if_worse, args.level)
    requested = _requested_measures([*(args.measures or comparison.DEFAULT_MEASURES), *args.fail_if_worse],
                                    args.level)
    correction = comparison._check_options(args.test, args.correction, args.alpha, args.permutations, args.samples,
                                           args.seed, args.risk)
    qrels, runs = _sources(args.qrels, args.runs)
    # The runs are named as evaluate names them (by run_id), which is known once each is read: until
    # then, and in the notes on stderr, by their file names.
    files = given or _run_names(runs)
    run_ids: list[str] = []
    measure_of = {item.label: item.measure for item in requested}
    scored = comparison._score_runs(None, _Evaluated(files, _evaluations(args, qrels, runs, files, requested, run_ids)),
                                    list(measure_of.values()), rel=args.level, with_ranks=False)
    names = _names(args, runs, run_ids)
    baseline = names[0] if args.baseline is None else args.baseline
    if baseline not in names:
        if baseline not in files:
            raise _Usage(f"--baseline {_short(baseline)} is not one of the runs: {_short(', '.join(names), 200)}")
        baseline = names[files.index(baseline)]  # the run's file name: the run it names
    result = comparison._compare_scored(
        stats, dict(zip(names, scored.values())), measure_of, baseline=baseline, all_pairs=args.all_pairs,
        test=args.test, correction=correction, alpha=args.alpha, permutations=args.permutations,
        samples=args.samples, seed=args.seed, rel=args.level, risk=args.risk,
    )
    forms = {"table": result.to_table, "markdown": result.to_markdown, "latex": result.to_latex}
    text = forms[args.format](args.digits) if args.format in forms else (
        result.to_csv() if args.format == "csv" else result.to_json() + "\n")
    _emit(text)
    failed = False
    for measure in gates:
        for c in result.significant_worse(measure):
            _stderr_line(f"retrieval-eval: regression: {c.run} is worse than {c.baseline} on {c.measure}: "
                         f"delta {c.delta:+.4f}, p = {c.p_adjusted:.4g} ({result.correction} correction)")
            failed = True
    return EXIT_REGRESSION if failed else EXIT_OK


def _gated(specs: Sequence[str], level: int) -> list[str]:
    """The canonical measures of --fail-if-worse: a group or list (``P.5,10``) gates each of its measures.
    A measure that cannot be read is a usage error now, before any file is read or line written."""
    from ..measures import parse_list
    from ..model import RetrievalEvalError

    gated: list[str] = []
    for spec in specs:
        try:
            gated += [str(measure) for measure, _ in parse_list([spec], rel=level, numeric=True)]
        except RetrievalEvalError as exc:
            raise _Usage(f"--fail-if-worse {_short(spec)}: {exc}") from None
    return list(dict.fromkeys(gated))


def _requested_measures(specs: Sequence[str], level: int) -> list[Requested]:
    """The measures compared, each once, labelled by its canonical string (as compare's table names them)."""
    from ..measures import parse_list
    from ..report.text import Requested

    measures = {str(m): m for m, _ in parse_list(list(specs), rel=level, numeric=True)}
    return [Requested(measure, key) for key, measure in measures.items()]


def _evaluations(args: argparse.Namespace, qrels: object, runs: Sequence[object], names: Sequence[str],
                 requested: Sequence[Requested], run_ids: list[str]) -> Iterator[SetEvaluator]:
    """Each run evaluated in turn (as ``evaluate`` does it: the same checks, the same notes on stderr),
    its run_id appended to ``run_ids``."""
    judged = _read_judgments(qrels, runs[0], subtopics=any(item.measure.definition.subtopics for item in requested))
    preparing = _Preparing(args, judged)
    for name, (run, columns) in zip(names, _runs_read(args, runs)):
        results = _build_run(args, judged, qrels, run, columns, preparing)
        run_ids.append(results.run_id)
        if not args.quiet:
            _report_query_set(args, results, requested, run=name)
        yield results
        del results


class _Evaluated(Mapping[str, "SetEvaluator"]):
    """The runs by name, each evaluated when compare asks for it, in order: compare keeps only each
    run's per-query values, so memory holds one evaluation at a time, however many runs there are."""

    def __init__(self, names: Sequence[str], evaluations: Iterator[SetEvaluator]) -> None:
        self._names, self._evaluations, self._taken = list(names), evaluations, 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __getitem__(self, name: str) -> SetEvaluator:
        if self._taken >= len(self._names) or name != self._names[self._taken]:
            raise KeyError(name)  # each run is evaluated once, in order: compare reads them so
        self._taken += 1
        return next(self._evaluations)
