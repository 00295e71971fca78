"""The CI outputs of the gate: JUnit XML read back by junitparser (an independent parser), the GitHub
step summary and annotations, the exit codes, and the --junit/--github options that write them."""

from __future__ import annotations

import argparse

import junitparser
import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.cli._ci import add_ci_options, check_ci_outputs, emit_ci
from retrieval_eval.cli._output import EXIT_REGRESSION, EXIT_UNRESOLVABLE, _Usage
from retrieval_eval.harness.ci_output import exit_code, github_annotations, github_summary, junit_xml
from retrieval_eval.harness.outcomes import Outcome

OUTCOMES = [
    Outcome("rules", "nDCG@10 min 0.4", "passed"),
    Outcome("rules", "nDCG@10 max_drop 0.02", "failed", "fell by 0.0362 (0.4443 -> 0.4081)",
            "q7: 0.8000 -> 0.1000\nq9: 0.5000 -> 0.2000"),
    Outcome("rules", "P@10 regression", "undecided", "3 queries differ: p >= 0.25 whatever the outcome"),
    Outcome("quarantine", "nDCG@10 q12", "skipped", "quarantined: 0.9 -> 0.0"),
    Outcome("expectations", "q302: D1 in top 3", "passed"),
]


def _suites(xml: str) -> dict[str, junitparser.TestSuite]:
    parsed = junitparser.JUnitXml.fromstring(xml.encode("utf-8"))
    assert isinstance(parsed, junitparser.JUnitXml)
    return {suite.name: suite for suite in parsed}


def test_junit_structure_read_back_by_junitparser() -> None:
    xml = junit_xml(OUTCOMES, name="retrieval-eval check")
    parsed = junitparser.JUnitXml.fromstring(xml.encode("utf-8"))
    assert parsed.name == "retrieval-eval check"
    suites = _suites(xml)
    assert list(suites) == ["rules", "quarantine", "expectations"]  # groups in first-seen order
    rules = suites["rules"]
    assert (rules.tests, rules.failures, rules.skipped, rules.errors) == (3, 1, 1, 0)
    cases = {case.name: case for case in rules}
    assert cases["nDCG@10 min 0.4"].is_passed
    assert cases["nDCG@10 min 0.4"].classname == "rules"
    (failure,) = cases["nDCG@10 max_drop 0.02"].result
    assert isinstance(failure, junitparser.Failure)
    assert failure.message == "fell by 0.0362 (0.4443 -> 0.4081)"
    assert failure.text == "q7: 0.8000 -> 0.1000\nq9: 0.5000 -> 0.2000"
    (undecided,) = cases["P@10 regression"].result
    assert isinstance(undecided, junitparser.Skipped)
    assert undecided.message.startswith("undecided: 3 queries differ")
    (quarantined,) = list(suites["quarantine"])
    assert quarantined.is_skipped
    assert suites["expectations"].tests == 1
    assert (parsed.tests, parsed.failures, parsed.skipped, parsed.errors) == (5, 1, 2, 0)


def test_junit_with_nothing_checked_is_a_valid_document() -> None:
    parsed = junitparser.JUnitXml.fromstring(junit_xml([], name="empty").encode("utf-8"))
    assert isinstance(parsed, junitparser.JUnitXml)
    assert (parsed.tests, list(parsed)) == (0, [])


_TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from("\x00\x1b\r\n\t<>&\"'\udcff\ufffe"), max_size=30)


@given(st.lists(st.builds(Outcome, st.sampled_from(["rules", "a&b", "<x>"]), _TEXT,
                          st.sampled_from(["passed", "failed", "skipped", "undecided"]), _TEXT, _TEXT), max_size=8))
def test_junit_parses_whatever_the_text_and_counts_agree(outcomes: list[Outcome]) -> None:
    parsed = junitparser.JUnitXml.fromstring(junit_xml(outcomes, name="n").encode("utf-8"))
    assert parsed.tests == len(outcomes)
    assert parsed.failures == sum(o.status == "failed" for o in outcomes)
    assert parsed.skipped == sum(o.status in ("skipped", "undecided") for o in outcomes)
    names = [case.name for suite in parsed for case in suite]
    assert len(names) == len(outcomes)
    printable = [o for o in outcomes if o.name.isprintable() and "\ufffe" not in o.name]
    for outcome in printable:  # plain names come back exactly
        assert outcome.name in names


@pytest.mark.parametrize(("statuses", "fail_undecided", "code"), [
    ([], False, 0), (["passed", "skipped"], True, 0), (["passed", "undecided"], False, 0),
    (["passed", "undecided"], True, EXIT_UNRESOLVABLE), (["undecided", "failed"], True, EXIT_REGRESSION),
    (["failed"], False, 1),
])
def test_exit_code(statuses: list[str], fail_undecided: bool, code: int) -> None:
    outcomes = [Outcome("rules", f"r{i}", status) for i, status in enumerate(statuses)]
    assert exit_code(outcomes, fail_undecided=fail_undecided) == code


def test_summary_lists_failures_first_and_escapes_cells() -> None:
    outcomes = [*OUTCOMES, Outcome("rules", "a|b", "passed", "line one\nline two")]
    summary = github_summary(outcomes, title="check")
    assert summary.startswith("### check: failed\n")
    assert "1 failed, 1 undecided, 1 skipped, 3 passed" in summary
    rows = [line for line in summary.splitlines() if line.startswith("| ") and "Status" not in line]
    assert [row.split(" | ")[0] for row in rows] == ["| ❌ failed", "| ⚠️ undecided", "| ⏭️ skipped",
                                                     "| ✅ passed", "| ✅ passed", "| ✅ passed"]
    assert "| a\\|b | line one line two |" in summary
    assert "```\nq7: 0.8000 -> 0.1000\nq9: 0.5000 -> 0.2000\n```" in summary


def test_summary_fence_is_longer_than_backticks_in_the_details() -> None:
    summary = github_summary([Outcome("rules", "r", "failed", "m", "a ```` b")], title="t")
    assert "`````\na ```` b\n`````" in summary


def test_annotations_escape_as_github_reads_them() -> None:
    lines = github_annotations(OUTCOMES)
    assert lines == [
        ("::error title=nDCG@10 max_drop 0.02::fell by 0.0362 (0.4443 -> 0.4081)%0Aq7: 0.8000 -> 0.1000%0A"
         "q9: 0.5000 -> 0.2000"),
        "::warning title=P@10 regression::3 queries differ: p >= 0.25 whatever the outcome",
        "::warning title=nDCG@10 q12::quarantined: 0.9 -> 0.0",
    ]
    (line,) = github_annotations([Outcome("g", "a:b,c%", "failed", "50%\r\nx")])
    assert line == "::error title=a%3Ab%2Cc%25::50%25%0D%0Ax"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_ci_options(parser)
    return parser.parse_args(list(argv))


def test_emit_writes_junit_and_github_summary(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    summary_file = tmp_path / "summary.md"
    summary_file.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    junit = tmp_path / "out.xml"
    args = _args("--junit", str(junit), "--github")
    check_ci_outputs(args, ["a.qrels", "a.run"])
    emit_ci(args, OUTCOMES, title="check")
    assert _suites(junit.read_text(encoding="utf-8"))["rules"].failures == 1
    written = summary_file.read_text(encoding="utf-8")
    assert written.startswith("earlier step\n### check: failed")  # appended, not replaced
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("::error title=nDCG@10 max_drop 0.02::")
    assert "###" not in out


def test_emit_summary_to_stdout_without_the_variable(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    emit_ci(_args("--github"), OUTCOMES[:1], title="check")
    assert capsys.readouterr().out.startswith("### check: passed\n")


def test_junit_refuses_an_input_or_a_directory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "a.run"
    run.write_text("q1 Q0 d1 1 1.0 r\n", encoding="utf-8")
    with pytest.raises(_Usage, match="is also an input"):
        check_ci_outputs(_args("--junit", str(run)), ["x.qrels", str(run)])
    with pytest.raises(_Usage, match="a directory"):
        check_ci_outputs(_args("--junit", str(tmp_path)), [])
    with pytest.raises(_Usage, match="does not exist"):
        check_ci_outputs(_args("--junit", str(tmp_path / "no" / "x.xml")), [])
    assert run.read_text(encoding="utf-8") == "q1 Q0 d1 1 1.0 r\n"
