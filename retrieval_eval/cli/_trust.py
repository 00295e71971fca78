"""evaluate's --tie-report and --bounds, which print a report in place of the scores, and the note
on stderr when too few of a cut-off's documents are judged (see docs/judgments.md)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._options import _fraction, _positive_int
from ._output import _note

if TYPE_CHECKING:
    from ..evaluators.set import SetEvaluator
    from ..report.text import Requested


def add_trust_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tie-report", action="store_true",
                        help="print, in place of the scores, each run's tie report: the queries with tied scores, "
                             "those whose top k a tie straddles (k: the cut-offs of -m), and each measure's value, "
                             "pessimistic and optimistic order (relevant documents last or first within each tie) "
                             "and expected value over tie orders")
    parser.add_argument("--bounds", action="store_true",
                        help="print, in place of the scores, each measure with the unjudged documents as non-relevant "
                             "and as judged --unjudged-as LEVEL, and the mean Judged@k at its cut-off")
    parser.add_argument("--unjudged-as", type=_positive_int, default=None, metavar="LEVEL",
                        help="the grade unjudged documents take in --bounds and in the note (default: the largest "
                             "grade in the qrels)")
    parser.add_argument("--judged-below", type=_fraction, default=0.9, metavar="FRACTION",
                        help="note on stderr each -m measure with a cut-off k whose mean Judged@k is below FRACTION, "
                             "with the interval its two values span (default 0.9)")
    parser.add_argument("--no-unjudged-note", action="store_true", help="do not print that note")


def _reporting(args: argparse.Namespace) -> bool:
    """Whether a report replaces the scores (``demo`` has neither option)."""
    return bool(getattr(args, "tie_report", False) or getattr(args, "bounds", False))


def trust_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with these options beside the others; None if nothing."""
    report = "--tie-report" if args.tie_report else "--bounds" if args.bounds else None
    if args.tie_report and args.bounds:
        return "--tie-report and --bounds each replace the scores; give one"
    if report and args.format not in ("trec", "json"):
        return f"{report} prints text or JSON; give --format trec or json"
    if report and (args.wide is not None or args.ci):
        return f"{report} replaces the scores; drop --wide and --ci"
    return None


def trust_report(args: argparse.Namespace, results: SetEvaluator, requested: Sequence[Requested]) -> object:
    """One run's --tie-report or --bounds: text lines, or a dict for JSON."""
    measures = [item.measure for item in requested if not item.measure.definition.text]
    if args.tie_report:
        from ..analysis.ties import tie_report

        report = tie_report(results, measures)
        return report.as_dict() if args.format == "json" else report.text(args.digits)
    from ..analysis.unjudged import unjudged_bounds

    bounds = unjudged_bounds(results, measures, level=args.unjudged_as)
    if args.format == "json":
        return {"run": results.run_id, "level": bounds[0].level if bounds else args.unjudged_as,
                "bounds": [{"measure": b.measure, "value": b.value, "as_relevant": b.as_relevant,
                            "judged": b.judged} for b in bounds]}
    lines = ["measure\tvalue\tas_relevant\tjudged\n"]
    for b in bounds:
        judged = "-" if b.judged is None else f"{b.judged:.{args.digits}f}"
        lines.append(f"{b.measure}\t{b.value:.{args.digits}f}\t{b.as_relevant:.{args.digits}f}\t{judged}\n")
    return f"unjudged documents judged {bounds[0].level if bounds else args.unjudged_as}\n" + "".join(lines)


def trust_output(args: argparse.Namespace, made: list[object], names: Sequence[str]) -> str:
    """Every run's report: one JSON document (a list for several runs), or each run's text led by its name."""
    if args.format == "json":
        import json

        documents = [{**document, "run": name} for document, name in zip(made, names)]  # type: ignore[dict-item]
        return json.dumps(documents[0] if len(documents) == 1 else documents, indent=2, allow_nan=False) + "\n"
    if len(made) == 1:
        return str(made[0])
    return "".join(f"run {name}\n{text}" for name, text in zip(names, made))


#: Notes on unjudged documents printed at most, the rest counted on one more line.
NOTES_SHOWN = 5


def unjudged_note(args: argparse.Namespace, results: SetEvaluator, requested: Sequence[Requested],
                  run: str | None) -> None:
    """The notes on stderr for the -m measures whose cut-off is too little judged (never on stdout)."""
    if args.quiet or getattr(args, "no_unjudged_note", True) or args.measures is None or _reporting(args):
        return
    from ..analysis.unjudged import unjudged_notes

    measures = [item.measure for item in requested if not item.measure.definition.text]
    for line in unjudged_notes(results, measures, level=args.unjudged_as, threshold=args.judged_below, limit=NOTES_SHOWN):
        _note(f"{run}: {line}" if run else line)
