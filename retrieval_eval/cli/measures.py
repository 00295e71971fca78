"""``retrieval-eval measures``: the measure catalogue, each measure with its parameters and trec_eval name."""

from __future__ import annotations

import argparse

from ._options import _Parser
from ._output import EXIT_OK, _emit, _Usage


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    measures = commands.add_parser(
        "measures", help="list every measure with its parameters and trec_eval name",
        description="List the measure catalogue: name, aliases, one-line definition, parameters with defaults, "
                    "trec_eval name and how the summary aggregates it.")
    measures.add_argument("search", metavar="TEXT", nargs="?",
                          help="list only the measures whose name, alias or trec_eval name contains TEXT "
                               "(ignoring case): 'ndcg' lists nDCG, nDCGRel, RnDCG, alpha_nDCG ...")
    measures.add_argument("--format", choices=("text", "json"), default="text",
                          help="text: one block per measure (default); json: a list of objects with the same "
                               "fields")


def run(args: argparse.Namespace) -> int:
    from ..report.text import catalogue_json, catalogue_text, find_measures

    found = find_measures(args.search)
    if not found:
        raise _Usage(f"no measure name, alias or trec_eval name contains {args.search!r}")
    _emit(catalogue_json(found) + "\n" if args.format == "json" else catalogue_text(found))
    return EXIT_OK
