"""``retrieval-eval check``: gate a run against a baseline file with rules on its measures."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ._ci import add_ci_options, check_ci_outputs, emit_ci
from ._options import _add_quiet, _digits, _Parser, _positive_int, _RawDescriptionFormatter
from ._output import _emit, _short, _Usage
from ._runs import _load_runs, _name, _report_query_set, _sources

if TYPE_CHECKING:
    from ..harness.baseline import Baseline
    from ..harness.rules import Rule

_CHECK_HELP = """\
Gate RUN against a baseline file ('retrieval-eval baseline save'), without the old run file. Each
rule checks one measure, on the queries the baseline and the run share:
  min            the mean is at least VALUE                       --min nDCG@10=0.4
  max_drop       the mean falls by at most VALUE                  --max-drop nDCG@10=0.02
  ci_lower       the interval's lower bound is at least VALUE     --ci-lower nDCG@10=0.35
  regression     no significant paired drop (after correction)    --regression nDCG@10
  max_query_drop no query falls by more than VALUE, except the    --max-query-drop nDCG@10=0.5
                 quarantined ones (reported, never failing)       --quarantine q12
                                                                  --quarantine-file flaky.txt
or the same in a TOML file, a table per measure (--rules gates.toml). Without rules, every measure
of the baseline gets a regression rule.

For each measure the table shows what the queries can detect: the minimum detectable effect at 80%
power, the queries a max_drop tolerance needs, and the smallest p-value the test can reach. A
regression check that cannot reach significance whatever the values is undecided (unresolvable).

The baseline is compared only on the qrels it was made with (the same bytes) and its options
(-l, -c/--skip-missing, -J, -M, --order, --duplicates, --ties: taken from the baseline, refused if given
otherwise).

Exit codes: 0 every check passed (undecided ones included); 1 a check failed; 2 bad input or usage
(a baseline made with other qrels or options, no query in common); 3 the output could not be
written; 4 a check was undecided and --fail-undecided was given."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    check = commands.add_parser("check", help="gate a run against a baseline file: floors, drops, regressions",
                                description=_CHECK_HELP, formatter_class=_RawDescriptionFormatter)
    check.add_argument("baseline", metavar="BASELINE", help="baseline file written by 'retrieval-eval baseline save'")
    check.add_argument("qrels", metavar="QRELS", help="the qrels file the baseline was made with (.gz ok)")
    check.add_argument("run", metavar="RUN", help="the run to gate (.gz ok; - for stdin)")
    check.add_argument("--rules", metavar="FILE", help="TOML file of rules, a table per measure (docs/gating.md)")
    for kind, example in (("min", "0.4"), ("max_drop", "0.02"), ("ci_lower", "0.35"), ("max_query_drop", "0.5")):
        check.add_argument("--" + kind.replace("_", "-"), dest=kind, action="append", default=[],
                           metavar="MEASURE=VALUE", help=f"a {kind} rule, as MEASURE={example} (repeatable)")
    check.add_argument("--regression", action="append", default=[], metavar="MEASURE",
                       help="a regression rule on MEASURE (repeatable)")
    check.add_argument("--quarantine", action="append", default=[], metavar="QUERY",
                       help="a query whose max_query_drop is reported but never fails (repeatable)")
    check.add_argument("--quarantine-file", action="append", default=[], metavar="FILE",
                       help="query ids to quarantine, one per line, as 'retrieval-eval flaky -o FILE' writes them")
    check.add_argument("--test", choices=("t", "wilcoxon", "sign", "permutation", "bootstrap"), default="t",
                       help="paired test of the regression rules (default t)")
    check.add_argument("--correction", choices=("none", "bonferroni", "holm", "bh"), default="holm",
                       help="correction over the regression rules (default holm)")
    check.add_argument("--alpha", type=float, default=0.05,
                       help="significance level, and 1 - the coverage of the ci_lower interval (default 0.05)")
    check.add_argument("--permutations", type=_positive_int, default=10_000, metavar="N",
                       help="permutations of the permutation test (default 10000)")
    check.add_argument("--samples", type=_positive_int, default=10_000, metavar="N",
                       help="resamples of the bootstrap test (default 10000)")
    check.add_argument("--seed", type=int, default=None, help="seed of the Monte Carlo tests")
    check.add_argument("--digits", type=_digits, default=4, metavar="N", help="decimals in the table (default 4)")
    add_ci_options(check)
    judging = check.add_argument_group("scoring options (default: the baseline's; a different value is refused)")
    query_set = judging.add_mutually_exclusive_group()
    query_set.add_argument("-c", dest="complete", action="store_const", const=True, default=None,
                           help="score judged queries the run lacks as 0")
    query_set.add_argument("--skip-missing", dest="complete", action="store_const", const=False,
                           help="use only the queries the run has results for")
    judging.add_argument("-J", dest="judged_only", action="store_const", const=True, default=None,
                         help="evaluate only judged documents")
    judging.add_argument("-l", dest="level", type=_positive_int, default=None, metavar="LEVEL", help="relevance level")
    judging.add_argument("-M", dest="max_depth", type=_positive_int, default=None, metavar="DEPTH",
                         help="evaluate only the top DEPTH documents")
    judging.add_argument("--order", choices=("score", "file", "rank"), default=None, help="how rankings are ordered")
    judging.add_argument("--ties", choices=("trec_eval", "rank", "expected"), default=None,
                         help="how documents of equal score are ordered (docs/judgments.md)")
    judging.add_argument("--duplicates", choices=("error", "first"), default=None,
                         help="a document listed twice for one query: fail or keep its first line")
    _add_quiet(check)


def _rules(args: argparse.Namespace) -> list[Rule]:
    """The rules of --rules and the flags (a flag's value winning), with --quarantine applied."""
    from ..harness.rules import read_quarantine, read_rules, rule_from_flag, with_quarantine
    from ..model import RetrievalEvalError

    rules = read_rules(args.rules) if args.rules is not None else []
    try:
        for kind in ("min", "max_drop", "ci_lower", "max_query_drop", "regression"):
            rules += [rule_from_flag(kind, text) for text in getattr(args, kind)]
    except RetrievalEvalError as exc:
        raise _Usage(str(exc)) from None
    quarantined = [*args.quarantine, *(q for path in args.quarantine_file for q in read_quarantine(path))]
    if (args.quarantine or args.quarantine_file) and not any(rule.max_query_drop is not None for rule in rules):
        raise _Usage("--quarantine: expected a max_query_drop rule to quarantine the queries from, found none")
    return with_quarantine(rules, quarantined)


def _scoring(args: argparse.Namespace, baseline: Baseline) -> dict[str, Any]:
    """The baseline's options, refused where the command line gives another value."""
    from ..harness.baseline import FileStamp
    from ..model import RetrievalEvalError

    given = {"rel": args.level, "complete": args.complete, "judged_only": args.judged_only,
             "max_depth": args.max_depth, "order": args.order, "duplicates": args.duplicates,
             "ties": args.ties}
    options = {**baseline.options, **{k: v for k, v in given.items() if v is not None and k != "max_depth"}}
    if args.max_depth is not None:
        options["max_depth"] = args.max_depth
    differences = baseline.differences(qrels=FileStamp.of(args.qrels), options=options)
    if differences:
        raise RetrievalEvalError(
            f"{args.baseline}: expected a baseline made with these qrels and options, found one that "
            "differs in " + "; ".join(differences)
            + " (make a new baseline with 'retrieval-eval baseline save', or score as the baseline did)")
    return options


def run(args: argparse.Namespace) -> int:
    from ..harness.baseline import Baseline
    from ..harness.gate import check_rules, gate_text
    from ..harness.rules import Rule, merge_rules
    from ..model import RetrievalEvalError
    from ..report.text import Requested

    if args.qrels == "-":
        raise _Usage("QRELS: expected a file, found - (standard input): check compares its hash with the baseline's")
    if args.baseline == "-" or args.rules == "-":
        raise _Usage("BASELINE and --rules: expected files, found - (standard input)")
    if not 0 < args.alpha < 1:
        raise _Usage(f"--alpha: expected a number between 0 and 1, found {_short(str(args.alpha))}")
    inputs = [args.baseline, args.qrels, args.run, *([args.rules] if args.rules else [])]
    check_ci_outputs(args, inputs)
    rules = _rules(args)
    baseline = Baseline.read(args.baseline)
    rules = rules or [Rule(typed, regression=True) for typed in baseline.measures.values()]
    merge_rules(rules, key=baseline.key)  # a rule on a measure the baseline lacks: an error before any reading
    try:
        options = _scoring(args, baseline)
    except FileNotFoundError as exc:
        raise RetrievalEvalError(f"{args.qrels}: cannot read the qrels: {exc.strerror}") from None
    scoring = argparse.Namespace(**vars(args))
    scoring.level, scoring.max_depth, scoring.judged_only = options["rel"], options["max_depth"], options["judged_only"]
    scoring.skip_missing, scoring.complete = not options["complete"], False
    scoring.order, scoring.duplicates = options["order"], options["duplicates"]
    scoring.ties = options["ties"]
    requested = []
    from ..measures import parse

    for key in dict.fromkeys(baseline.key(rule.measure) for rule in rules):
        requested.append(Requested(parse(key), key))
    qrels, runs = _sources(args.qrels, [args.run])
    current = _load_runs(scoring, qrels, runs, requested)[0]
    if not args.quiet:
        _report_query_set(scoring, current, requested)
    report = check_rules(baseline, current, rules, alpha=args.alpha, test=args.test, correction=args.correction,
                         permutations=args.permutations, samples=args.samples, seed=args.seed)
    title = f"check {_name(args.run)} against {_name(args.baseline)}"
    _emit(gate_text(report, title=title, digits=args.digits))
    emit_ci(args, report.outcomes, title=title)
    return report.exit_code(fail_undecided=args.fail_undecided)
