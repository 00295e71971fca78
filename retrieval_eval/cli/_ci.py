"""The CI outputs the gate commands share: ``--junit FILE`` and ``--github``.

A command adds them with :func:`add_ci_options`, checks ``--junit`` before it reads anything with
:func:`check_ci_outputs`, and writes both with :func:`emit_ci` once it has its outcomes.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._output import _emit, _OutputFailed, check_output_file

if TYPE_CHECKING:
    from ..harness.outcomes import Outcome


def add_ci_options(parser: argparse.ArgumentParser, *, undecided: bool = True) -> None:
    """``--junit FILE``, ``--github`` and, for a command whose checks can be undecided, ``--fail-undecided``."""
    parser.add_argument("--junit", metavar="FILE",
                        help="also write the outcomes as JUnit XML to FILE (one test case per check; failures as "
                             "<failure>, quarantined and undecided checks as <skipped>)")
    parser.add_argument("--github", action="store_true",
                        help="also write a Markdown summary, appended to the file $GITHUB_STEP_SUMMARY names "
                             "(stdout when it is not set), and ::error/::warning annotations to stdout")
    if not undecided:  # expect's facts hold or not: no option that could never apply
        return
    parser.add_argument("--fail-undecided", action="store_true",
                        help="exit 4 when a check is undecided: the queries cannot detect its tolerance")


def check_ci_outputs(args: argparse.Namespace, inputs: Sequence[str]) -> None:
    """``--junit``'s file, before anything is read: in a directory that exists, and none of the inputs."""

    path = args.junit
    if path is None:
        return
    check_output_file(path, [*inputs, os.environ.get("GITHUB_STEP_SUMMARY") or "-"], option="--junit")


def emit_ci(args: argparse.Namespace, outcomes: Sequence[Outcome], *, title: str) -> None:
    """Write the outcomes where ``--junit`` and ``--github`` ask; nothing without them.

    The JUnit file is written whole or not at all (:func:`retrieval_eval.io.files.replacing`). The
    step summary is appended, as GitHub expects of every step that writes it.
    """
    from ..harness.ci_output import github_annotations, github_summary, junit_xml

    if args.junit is not None:
        from ..io.files import replacing

        try:
            with replacing(args.junit) as out:
                out.write(junit_xml(outcomes, name=title).encode("utf-8", "surrogateescape"))
        except OSError as exc:
            raise _OutputFailed(f"{args.junit}: {exc.strerror or exc}") from None
    if not args.github:
        return
    summary = github_summary(outcomes, title=title)
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        try:
            with open(target, "a", encoding="utf-8", errors="surrogateescape") as out:
                out.write(summary + "\n")
        except OSError as exc:
            raise _OutputFailed(f"$GITHUB_STEP_SUMMARY {target}: {exc.strerror or exc}") from None
    else:
        _emit(summary + "\n")
    annotations = github_annotations(outcomes)
    if annotations:
        _emit("\n".join(annotations) + "\n")
