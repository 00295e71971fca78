"""``retrieval-eval compare``: several runs' means, paired significance tests, a regression gate."""

from __future__ import annotations

import argparse

from ._options import (
    MAX_DIGITS,
    _add_judging_options,
    _add_quiet,
    _digits,
    _Parser,
    _positive_int,
    _RawDescriptionFormatter,
)
from ._output import EXIT_OK, EXIT_REGRESSION, _counted, _emit, _stderr_line, _Usage
from ._runs import _run_names

_COMPARE_HELP = """\
Evaluate several runs on the same qrels and compare them: one table of means (runs as rows,
measures as columns), with each value marked by the letters of the runs it is significantly
better than. Each run is compared with the baseline (or every pair, --all-pairs) by a paired
test over queries; p-values are corrected within each measure. --format json gives every
comparison: mean difference, raw and adjusted p-value, effect size (Cohen's d_z), confidence
interval, wins/ties/losses.

Regression gate: with --fail-if-worse MEASURE the exit code is 1 when a run is significantly worse
than the baseline on MEASURE, after correction; each such run is named on stderr."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    compare = commands.add_parser("compare",
                                  help="compare runs: means, paired significance tests, a regression gate",
                                  description=_COMPARE_HELP, formatter_class=_RawDescriptionFormatter)
    compare.add_argument("qrels", metavar="QRELS", help="TREC qrels file (.gz ok), read once for every run")
    compare.add_argument("runs", metavar="RUN", nargs="+", help="TREC run files (.gz ok), at least two")
    compare.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                         help="measure to compare, repeatable: any catalogue string (default: AP, nDCG@10, P@10, "
                              "RR, R@1000)")
    compare.add_argument("--names", metavar="A,B,...", help="names of the runs, in order (default: file names)")
    compare.add_argument("--baseline", metavar="NAME", help="the run the others are compared with (default: the first)")
    compare.add_argument("--all-pairs", action="store_true", help="compare every pair of runs instead")
    compare.add_argument("--test", choices=("t", "wilcoxon", "sign", "permutation", "bootstrap", "tukey"),
                         default="t", help="paired significance test (default t)")
    compare.add_argument("--correction", choices=("none", "bonferroni", "holm", "bh"), default=None,
                         help="multiple-testing correction within each measure (default holm; none for tukey)")
    compare.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    compare.add_argument("--permutations", type=_positive_int, default=10_000, metavar="N",
                         help="permutations of the permutation and Tukey tests (default 10000)")
    compare.add_argument("--samples", type=_positive_int, default=10_000, metavar="N",
                         help="resamples of the bootstrap test (default 10000)")
    compare.add_argument("--seed", type=int, default=None, help="seed of the Monte Carlo tests: same seed, same output")
    compare.add_argument("--format", choices=("table", "markdown", "latex", "csv", "json"), default="table",
                         help="table (default), markdown or latex: means with significance marks; csv: one line "
                              "per comparison; json: everything")
    compare.add_argument("--digits", type=_digits, default=4, metavar="N",
                         help=f"decimals in tables, 0 to {MAX_DIGITS} (default 4)")
    compare.add_argument("--fail-if-worse", action="append", default=[], metavar="MEASURE",
                         help="exit 1 if a run is significantly worse than the baseline on MEASURE (repeatable)")
    _add_judging_options(compare, skip_missing="compare only the queries every run has results for")
    _add_quiet(compare)


def run(args: argparse.Namespace) -> int:
    from ..analysis.comparison import DEFAULT_MEASURES, compare

    if len(args.runs) < 2:
        raise _Usage("compare needs at least two runs")
    names = args.names.split(",") if args.names else _run_names(args.runs)
    if len(names) != len(args.runs):
        raise _Usage(f"--names gives {_counted(len(names), 'name', 'names')} for {len(args.runs)} runs")
    if len(set(names)) != len(names):
        raise _Usage("two runs have the same name; name them with --names a,b,...")
    measures = list(dict.fromkeys([*(args.measures or DEFAULT_MEASURES), *args.fail_if_worse]))  # gated ones too
    result = compare(
        args.qrels, dict(zip(names, args.runs)), measures, baseline=args.baseline, all_pairs=args.all_pairs,
        test=args.test, correction=args.correction, alpha=args.alpha, permutations=args.permutations,
        samples=args.samples, seed=args.seed, rel=args.level, complete=not args.skip_missing,
        judged_only=args.judged_only, max_depth=args.max_depth,
    )
    forms = {"table": result.to_table, "markdown": result.to_markdown, "latex": result.to_latex}
    text = forms[args.format](args.digits) if args.format in forms else (
        result.to_csv() if args.format == "csv" else result.to_json() + "\n")
    _emit(text)
    failed = False
    for measure in args.fail_if_worse:
        for c in result.significant_worse(measure):
            _stderr_line(f"retrieval-eval: regression: {c.run} is worse than {c.baseline} on {c.measure}: "
                         f"delta {c.delta:+.4f}, p = {c.p_adjusted:.4g} ({result.correction} correction)")
            failed = True
    return EXIT_REGRESSION if failed else EXIT_OK
