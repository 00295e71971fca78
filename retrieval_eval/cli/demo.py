"""``retrieval-eval demo``: evaluate the sample qrels and run bundled with the package."""

from __future__ import annotations

import argparse

from ._options import _add_evaluation_options, _Parser
from .evaluate import _evaluate


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    demo = commands.add_parser("demo", help="evaluate the sample run bundled with the package",
                               description="Evaluate the bundled sample qrels and run (see retrieval_eval/data).")
    _add_evaluation_options(demo)
    demo.set_defaults(names=None, wide=None, log=None)  # evaluate's options that the demo does not take


def run(args: argparse.Namespace) -> int:
    from ..data import sample_paths

    qrels_path, run_path = sample_paths()
    return _evaluate(args, qrels_path, [run_path])
