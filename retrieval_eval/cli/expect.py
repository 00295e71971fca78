"""``retrieval-eval expect``: intent tests, per-query facts about a run's rankings, checked one by one."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._ci import add_ci_options, check_ci_outputs, emit_ci
from ._options import _add_quiet, _Parser, _RawDescriptionFormatter
from ._output import EXIT_OK, _emit, _note, _Usage
from ._runs import _name, _stdin

if TYPE_CHECKING:
    from ..harness.expectations import Checked
    from ..harness.outcomes import Outcome

_EXPECT_HELP = """\
Check intent tests: facts about single queries' rankings, one a line of a JSONL file or one
[[expect]] table of a TOML file (see docs/intent-tests.md):

  {"query": "q1", "doc": "d1", "in_top": 3}              d1 is in the top 3 of q1
  {"query": "q1", "doc": "d9", "never_in_top": 10}       d9 is not in the top 10
  {"query": "q1", "docs": ["d1", "d2"], "any_in_top": 3}  one of them is in the top 3
  {"query": "q1", "doc": "d1", "ranks_above": "d2"}       d1 is retrieved and ranks above d2
                                                          (d2 not retrieved counts as below)

Each fact may have "known_failure": true, an "id" and a "note". Ranks follow --order (trec_eval's
by default: score descending, ties by doc_id descending). A query the run lacks fails its facts.

Exit codes: 0 every fact holds (known failures that still fail are reported, not failed; one
that now passes is reported as 'now passes: unmark it'); 1 a fact not marked known_failure fails
(with --strict, a known failure that now passes too); 2 bad input or usage; 3 the output could not
be written."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    expect = commands.add_parser("expect", help="check intent tests: per-query facts about a run's rankings",
                                 description=_EXPECT_HELP, formatter_class=_RawDescriptionFormatter)
    expect.add_argument("expectations", metavar="EXPECTATIONS",
                        help="the facts: a JSONL file (one object a line) or a TOML file ([[expect]] tables); "
                             "by the suffix .toml or .jsonl, else by the first line")
    expect.add_argument("run", metavar="RUN", help="the run: TREC, Parquet or results JSON (gzip ok; - for stdin)")
    expect.add_argument("--strict", action="store_true",
                        help="fail (exit 1) when a fact marked known_failure now passes, so that it gets unmarked")
    expect.add_argument("--order", choices=("score", "file", "rank"), default="score",
                        help="rank by score, ties by doc_id descending (trec_eval; default), by file order, "
                             "or by the rank column")
    expect.add_argument("--duplicates", choices=("error", "first"), default="error",
                        help="a document listed twice for one query: fail (default) or keep its first line")
    expect.add_argument("--hide-passing", action="store_true",
                        help="list only the facts that did not simply pass (failed, known failures), and the counts")
    _add_quiet(expect)
    add_ci_options(expect, undecided=False)


def run(args: argparse.Namespace) -> int:
    from ..harness.ci_output import exit_code
    from ..harness.expectations import Rankings, check_fact, fact_outcome, read_expectations

    if args.expectations == "-":
        raise _Usage("EXPECTATIONS must be a file; only RUN can be - (standard input)")
    check_ci_outputs(args, [args.expectations, args.run])
    facts = read_expectations(args.expectations)
    source = _stdin("a run") if args.run == "-" else args.run
    rankings = Rankings.read(source, [fact.query for fact in facts], order=args.order, duplicates=args.duplicates)
    checked = [check_fact(fact, rankings) for fact in facts]
    outcomes = [fact_outcome(c, strict=args.strict) for c in checked]
    _emit(format_table(checked, outcomes, hide_passing=args.hide_passing))
    emit_ci(args, outcomes, title=f"expect {args.expectations} on {_name(source)}")
    unmark = sum(1 for c in checked if c.fact.known_failure and c.holds)
    if unmark and not args.strict and not args.quiet:
        _note(f"{unmark} known failure{'s' if unmark > 1 else ''} now pass{'' if unmark > 1 else 'es'}: remove "
              f"known_failure from {'them' if unmark > 1 else 'it'} (--strict fails on this)")
    code = exit_code(outcomes, fail_undecided=False)
    return code if code else EXIT_OK


def _status(checked: Checked, outcome: Outcome) -> str:
    if checked.fact.known_failure:
        return "now passes" if checked.holds else "known failure"
    return "ok" if outcome.status == "passed" else "FAILED"


def format_table(checked: Sequence[Checked], outcomes: Sequence[Outcome], *, hide_passing: bool = False) -> str:
    """One line per fact (status, fact, the ranks seen), then the counts; ``hide_passing``: only facts not ok."""
    rows = [(_status(c, o), c.fact.name, c.seen + (f"  (unmark it: {c.fact.where})" if c.fact.known_failure
                                                   and c.holds else ""))
            for c, o in zip(checked, outcomes)]
    shown = [row for row in rows if row[0] != "ok"] if hide_passing else rows
    lines = []
    if shown:
        header = ("status", "fact", "ranks")
        widths = [max(len(row[i]) for row in [header, *shown]) for i in range(2)]
        lines = [f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]}".rstrip() for row in [header, *shown]]
    counts = {status: sum(1 for row in rows if row[0] == status)
              for status in ("ok", "FAILED", "known failure", "now passes")}
    total = f"{len(rows)} fact{'s' if len(rows) != 1 else ''}: {counts['ok']} ok, {counts['FAILED']} failed"
    if counts["known failure"]:
        total += f", {counts['known failure']} known failure{'s' if counts['known failure'] > 1 else ''}"
    if counts["now passes"]:
        total += f", {counts['now passes']} known failure{'s' if counts['now passes'] > 1 else ''} now passing"
    return "\n".join([*lines, total]) + "\n"
