"""Outcomes as CI systems read them: JUnit XML, a GitHub step summary, GitHub annotations, an exit code.

>>> from retrieval_eval.harness.outcomes import Outcome
>>> outcomes = [Outcome("rules", "nDCG@10 min 0.4", "passed"),
...             Outcome("rules", "nDCG@10 max_drop 0.02", "failed", "fell by 0.0362", "q7: 0.8 -> 0.1")]
>>> exit_code(outcomes, fail_undecided=False)
1
>>> github_annotations(outcomes)
['::error title=nDCG@10 max_drop 0.02::fell by 0.0362%0Aq7: 0.8 -> 0.1']
>>> print(junit_xml(outcomes, name="check").splitlines()[1])
<testsuites name="check" tests="2" failures="1" errors="0" skipped="0">
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence

from .outcomes import Outcome

__all__ = ["exit_code", "github_annotations", "github_summary", "junit_xml"]

#: The exit codes of a gate: all passed; a check failed; a check was undecided and asked to fail.
#: (2, bad input or usage, and 3, output that could not be written, are the command line's.)
EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_UNDECIDED = 4

#: The order of a report: what needs attention first.
_RANK = {"failed": 0, "undecided": 1, "skipped": 2, "passed": 3}


def exit_code(outcomes: Iterable[Outcome], *, fail_undecided: bool) -> int:
    """1 when any outcome failed; else 4 when one is undecided and ``fail_undecided``; else 0.

    >>> exit_code([Outcome("rules", "P@10 regression", "undecided")], fail_undecided=True)
    4
    >>> exit_code([Outcome("rules", "P@10 regression", "undecided")], fail_undecided=False)
    0
    """
    statuses = {outcome.status for outcome in outcomes}
    if "failed" in statuses:
        return EXIT_FAILED
    if fail_undecided and "undecided" in statuses:
        return EXIT_UNDECIDED
    return EXIT_PASSED


#: Characters XML 1.0 cannot hold at all, not even escaped (most C0 controls, lone surrogates from ids
#: that are not UTF-8, U+FFFE and U+FFFF): written as backslash escapes, so that the file still parses.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte of an id that is not UTF-8: shown as the byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def junit_xml(outcomes: Sequence[Outcome], *, name: str) -> str:
    """The outcomes as JUnit XML: a ``<testsuite>`` per group (in the order groups first appear), a
    ``<testcase>`` per outcome; a failed one holds ``<failure>``, a skipped or undecided one ``<skipped>``
    (with its message, and the details as text). ``tests``, ``failures``, ``errors`` and ``skipped``
    count them on each suite and on the whole, as Jenkins, GitLab and the GitHub test reporters read them.
    """
    root = ET.Element("testsuites", _counts(outcomes, name=name))
    groups: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        groups.setdefault(outcome.group, []).append(outcome)
    for group, members in groups.items():
        suite = ET.SubElement(root, "testsuite", _counts(members, name=group))
        for outcome in members:
            case = ET.SubElement(suite, "testcase", {"name": _xml_text(outcome.name), "classname": _xml_text(group)})
            if outcome.status == "passed":
                continue
            tag = "failure" if outcome.status == "failed" else "skipped"
            message = outcome.message if outcome.status != "undecided" else f"undecided: {outcome.message}"
            marker = ET.SubElement(case, tag, {"message": _xml_text(message)})
            if outcome.details:
                marker.text = _xml_text(outcome.details)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _counts(outcomes: Sequence[Outcome], *, name: str) -> dict[str, str]:
    failures = sum(outcome.status == "failed" for outcome in outcomes)
    skipped = sum(outcome.status in ("skipped", "undecided") for outcome in outcomes)
    return {"name": _xml_text(name), "tests": str(len(outcomes)), "failures": str(failures), "errors": "0",
            "skipped": str(skipped)}


_SYMBOL = {"failed": "❌ failed", "undecided": "⚠️ undecided", "skipped": "⏭️ skipped", "passed": "✅ passed"}


def github_summary(outcomes: Sequence[Outcome], *, title: str) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: a heading with the counts, a table of the outcomes (failed
    first, then undecided, skipped and passed), and the details of each outcome that has them.

    >>> print(github_summary([Outcome("rules", "P@10 min 0.2", "passed")], title="check"))
    ### check: passed
    <BLANKLINE>
    1 passed
    <BLANKLINE>
    | Status | Group | Check | Message |
    |---|---|---|---|
    | ✅ passed | rules | P@10 min 0.2 |  |
    <BLANKLINE>
    """
    ordered = sorted(outcomes, key=lambda outcome: _RANK[outcome.status])  # stable: same-status order kept
    counts = {status: sum(outcome.status == status for outcome in outcomes) for status in _RANK}
    verdict = "failed" if counts["failed"] else "undecided" if counts["undecided"] else "passed"
    lines = [f"### {_cell(title)}: {verdict}", "",
             ", ".join(f"{n} {status}" for status, n in counts.items() if n) or "nothing was checked", ""]
    if ordered:
        lines += ["| Status | Group | Check | Message |", "|---|---|---|---|"]
        lines += [f"| {_SYMBOL[o.status]} | {_cell(o.group)} | {_cell(o.name)} | {_cell(o.message)} |" for o in ordered]
        lines.append("")
    for outcome in ordered:
        if outcome.details:
            fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", outcome.details)), default=0))
            lines += [f"**{_cell(outcome.name)}** ({outcome.status})", "", fence, outcome.details, fence, ""]
    return "\n".join(lines)


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell: no line breaks, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def github_annotations(outcomes: Iterable[Outcome]) -> list[str]:
    """GitHub workflow commands: ``::error`` for each failure, ``::warning`` for each undecided or skipped
    (quarantined) outcome; the message followed by the details. Printed to stdout in a job, they mark
    the run's page. ``%``, CR and LF are escaped as GitHub reads them, and ``:`` and ``,`` in the title.

    >>> github_annotations([Outcome("quarantine", "q1, q2", "skipped", "100% drop")])
    ['::warning title=q1%2C q2::100%25 drop']
    """
    lines = []
    for outcome in outcomes:
        if outcome.status == "passed":
            continue
        command = "error" if outcome.status == "failed" else "warning"
        text = "\n".join(part for part in (outcome.message, outcome.details) if part) or outcome.status
        lines.append(f"::{command} title={_property(outcome.name)}::{_data(text)}")
    return lines


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
