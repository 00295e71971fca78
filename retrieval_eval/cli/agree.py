"""``retrieval-eval agree``: how two sets of judgments agree, on their labels and on the systems they rank."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._options import _add_quiet, _at_least_one, _digits, _Parser, _RawDescriptionFormatter
from ._output import EXIT_OK, _emit, _Usage
from ._runs import _run_names, _stdin

_AGREE_HELP = """\
Compare two qrels of the same queries (say, human judgments and an LLM judge's). On the documents
both judged (a negative label counts as not judged) it prints the confusion matrix (rows QRELS_A's
grades, columns QRELS_B's), Cohen's kappa (unweighted; linear and quadratic weights over the grades'
positions) and Krippendorff's alpha (nominal, ordinal, interval).

Given runs, each is evaluated against both qrels (every query of a qrels counts, a missing one as
0) and, for each measure (-m), the two rankings of the runs by their means are compared: Kendall's
tau-b, tau_AP (Yilmaz et al. 2008; QRELS_A taken as the truth, so a swap at the top costs more than
one further down) and the share of the top K runs (--top) that both rankings have.
See docs/judgments.md."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    parser = commands.add_parser("agree", help="agreement of two qrels: kappa, alpha, and the system rankings",
                                 description=_AGREE_HELP, formatter_class=_RawDescriptionFormatter)
    parser.add_argument("qrels", metavar="QRELS", nargs=2, help="the two qrels: A (the reference) and B (gzip ok)")
    parser.add_argument("runs", metavar="RUN", nargs="*", help="runs to rank under both qrels (two or more)")
    parser.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                        help="measure the runs are ranked by, repeatable (default nDCG@10 and AP)")
    parser.add_argument("--top", type=_at_least_one, default=3, metavar="K",
                        help="how many of the best runs the top-K agreement looks at (default 3)")
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table (default) or json: everything, with each run's means")
    parser.add_argument("--digits", type=_digits, default=4, metavar="N", help="decimals in the table (default 4)")
    _add_quiet(parser)


def run(args: argparse.Namespace) -> int:
    from ..analysis.agreement import label_agreement, ranking_agreement
    from ..evaluators.set import SetEvaluator
    from ..io.formats import read_qrels_columns, read_run_columns
    from ..measures import parse
    from ._plain import plain_table

    inputs = [*args.qrels, *args.runs]
    if inputs.count("-") > 1:
        raise _Usage("only one input can be - (standard input); give the others as files")
    if len(args.runs) == 1:
        raise _Usage("ranking runs needs two or more runs; give none to compare the labels only")
    measures = [parse(m) for m in (args.measures or ["nDCG@10", "AP"])]
    qrels = [read_qrels_columns(_source(q, "qrels")) for q in args.qrels]
    labels = label_agreement(*qrels)
    rankings = []
    if args.runs:
        sources = [_source(r, "a run") for r in args.runs]
        columns = [read_run_columns(source) for source in sources]
        under = [[SetEvaluator.from_columns(q, run) for run in columns] for q in qrels]
        rankings = ranking_agreement(under[0], under[1], measures, names=_run_names(sources), top=args.top)
    if args.format == "json":
        _emit(json.dumps({"labels": labels.to_dict(), "rankings": [r.to_dict() for r in rankings]},
                         indent=2, allow_nan=False) + "\n")
        return EXIT_OK
    grades = [str(g) for g in labels.to_dict()["grades"]]
    text = (f"{labels.shared} documents judged by both; {labels.only_first} only by A, "
            f"{labels.only_second} only by B.\n\nA \\ B\n")
    text += plain_table(["grade", *grades], [[g, *row] for g, row in zip(grades, labels.confusion.tolist())],
                        args.digits)
    stats = [("kappa", labels.kappa), ("kappa linear", labels.kappa_linear),
             ("kappa quadratic", labels.kappa_quadratic), ("alpha nominal", labels.alpha_nominal),
             ("alpha ordinal", labels.alpha_ordinal), ("alpha interval", labels.alpha_interval)]
    text += "\n" + plain_table(["agreement", "value"], stats, args.digits)
    if rankings:
        text += "\n" + plain_table(["measure", "tau", "tau_ap", f"top-{args.top}"],
                                   [[r.measure, r.tau, r.tau_ap, r.top_overlap] for r in rankings], args.digits)
    _emit(text)
    return EXIT_OK


def _source(path: str, what: str) -> Any:
    """A path, or the binary standard input for ``-``."""
    return _stdin(what) if path == "-" else path
