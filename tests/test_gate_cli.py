"""``retrieval-eval baseline save`` and ``retrieval-eval check`` as a user runs them: exit codes 0, 1, 2
and 4, refusals that say what differs, files never written over, JUnit read back by junitparser."""

from __future__ import annotations

import json
from pathlib import Path

import junitparser
import pytest

from retrieval_eval.cli import main

DATA = Path(__file__).resolve().parents[1] / "retrieval_eval" / "data"
QRELS, RUN = str(DATA / "sample.qrels"), str(DATA / "sample.run")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def saved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "baseline.json"
    code, out, err = _run(capsys, "baseline", "save", QRELS, RUN, "-m", "nDCG@10", "-m", "P.10", "-m", "AP",
                          "-o", str(path))
    assert (code, out) == (0, "")
    assert "wrote " in err and "3 measures over 13 queries" in err
    return path


@pytest.fixture
def worse(tmp_path: Path) -> str:
    """The sample run with four queries' rankings turned upside down."""
    lines = []
    for line in Path(RUN).read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if fields[0] in ("q1", "q2", "q3", "q5"):
            fields[4] = str(-float(fields[4]))
        lines.append(" ".join(fields))
    path = tmp_path / "worse.run"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_saved_baseline_records_the_evaluation(saved: Path) -> None:
    document = json.loads(saved.read_text(encoding="utf-8"))
    assert [m["typed"] for m in document["measures"]] == ["nDCG@10", "P_10", "AP"]
    assert document["qrels"]["name"] == "sample.qrels" and len(document["run"]["sha256"]) == 64
    from retrieval_eval import SetEvaluator

    expected = SetEvaluator.from_trec(QRELS, RUN)
    assert document["summary"]["AP"] == pytest.approx(expected.aggregate("AP"), abs=1e-15)
    assert document["per_query"]["nDCG@10"] == pytest.approx(expected.array("nDCG@10").tolist(), abs=1e-15)


def test_check_passes_the_same_run(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "check", str(saved), QRELS, RUN, "--quiet")
    assert code == 0
    assert out.endswith("3 passed\n")  # no rules: a regression rule on every measure


def test_check_fails_a_worse_run(saved: Path, worse: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "check", str(saved), QRELS, worse, "--quiet", "--max-drop", "nDCG@10=0.02")
    assert code == 1
    assert "failed: nDCG@10 max_drop 0.02: fell by 0.1604 (0.4716 -> 0.3112)" in out
    assert "  q3: 0.6391 -> 0.0000 (-0.6391)" in out


def test_check_undecided_exits_4_when_asked(saved: Path, worse: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("check", str(saved), QRELS, worse, "--quiet", "--regression", "AP", "--test", "sign")
    assert _run(capsys, *args)[0] == 0
    code, out, _ = _run(capsys, *args, "--fail-undecided")
    assert code == 4
    assert "unresolvable: 4 of 13 queries differ, so the smallest p the sign test can reach is 0.125" in out


def test_check_writes_junit(saved: Path, worse: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "gate.xml"
    code, _, _ = _run(capsys, "check", str(saved), QRELS, worse, "--quiet", "--min", "AP=0.1",
                      "--max-query-drop", "nDCG@10=0.5", "--quarantine", "q2", "--junit", str(junit))
    assert code == 1
    parsed = junitparser.JUnitXml.fromfile(str(junit))
    suites = {suite.name: suite for suite in parsed}
    assert (suites["rules"].tests, suites["rules"].failures) == (2, 1)
    assert (suites["quarantine"].tests, suites["quarantine"].skipped) == (1, 1)
    failed = [case for case in suites["rules"] if not case.is_passed]
    assert [case.name for case in failed] == ["nDCG@10 max_query_drop 0.5"]
    assert failed[0].result[0].message == "3 queries fell by more than 0.5: q3, q1, q5"


def test_flaky_list_quarantines_in_check(saved: Path, worse: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """flaky -o writes the list that check --quarantine-file reads: its queries are skipped, not failed."""
    listed = tmp_path / "flaky.txt"
    code, _, _ = _run(capsys, "flaky", QRELS, RUN, worse, "-m", "nDCG@10", "-o", str(listed))
    flagged = listed.read_text(encoding="utf-8").split()
    assert code == 0 and {"q1", "q3", "q5"} <= set(flagged)
    args = ("check", str(saved), QRELS, worse, "--quiet", "--max-query-drop", "nDCG@10=0.5")
    assert _run(capsys, *args)[0] == 1
    code, out, _ = _run(capsys, *args, "--quarantine-file", str(listed))
    assert code == 0
    skipped = sorted(line.split()[2].rstrip(":") for line in out.splitlines() if line.startswith("skipped:"))
    # the three that fell by more than 0.5 are among the quarantined ones reported, and only listed ones are
    assert {"q1", "q3", "q5"} <= set(skipped) <= set(flagged)


@pytest.mark.parametrize(("text", "message"), [
    ("q1 q2\n", "flaky.txt:1: expected one query id, found 'q1 q2'"),
    ("q1\n\xff\n", "flaky.txt:2: expected UTF-8 text"),
])
def test_bad_quarantine_list(saved: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                             message: str) -> None:
    listed = tmp_path / "flaky.txt"
    listed.write_bytes(text.encode("latin-1"))
    code, out, err = _run(capsys, "check", str(saved), QRELS, RUN, "--max-query-drop", "nDCG@10=0.5",
                          "--quarantine-file", str(listed))
    assert (code, out) == (2, "") and message in err and "Traceback" not in err


def test_check_github_summary_and_annotations(saved: Path, worse: str, tmp_path: Path, monkeypatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, _ = _run(capsys, "check", str(saved), QRELS, worse, "--quiet", "--min", "AP=0.25", "--github")
    assert code == 1
    assert "| ❌ failed | rules | AP min 0.25 | mean 0.1908 is below the floor 0.25 |" in summary.read_text("utf-8")
    assert "::error title=AP min 0.25::mean 0.1908 is below the floor 0.25%0Aq5: " in out


@pytest.mark.parametrize(("extra", "message"), [
    (("-l", "2"), "differs in option rel: 2, the baseline has 1"),
    (("-M", "5"), "differs in option max_depth: 5, the baseline has none"),
    (("--min", "GMAP=0.1"), "the baseline has no values of GMAP"),
    (("--min", "AP"), "--min: expected MEASURE=VALUE"),
    (("--quarantine", "q1"), "--quarantine: expected a max_query_drop rule"),
])
def test_check_refusals(saved: Path, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], message: str) -> None:
    code, out, err = _run(capsys, "check", str(saved), QRELS, RUN, *extra)
    assert (code, out) == (2, "")
    assert message in err and len(err.splitlines()) == 1


def test_check_refuses_other_qrels(saved: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.qrels"
    other.write_text(Path(QRELS).read_text(encoding="utf-8") + "q1 0 extra 1\n", encoding="utf-8")
    code, _, err = _run(capsys, "check", str(saved), str(other), RUN)
    assert code == 2
    assert "differs in the qrels: other.qrels (sha256 " in err and "is not the baseline's sample.qrels" in err


def test_check_with_no_shared_query(saved: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(saved.read_text(encoding="utf-8"))
    document["queries"] = [f"z{i}" for i in range(len(document["queries"]))]
    saved.write_text(json.dumps(document), encoding="utf-8")
    code, out, err = _run(capsys, "check", str(saved), QRELS, RUN, "--quiet")
    assert (code, out) == (2, "")
    assert "the baseline and the run share no query, so there is nothing to compare" in err


def test_check_refuses_a_file_that_is_no_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "check", RUN, QRELS, RUN)
    assert code == 2
    assert err.startswith(f"retrieval-eval: error: {RUN}: expected a baseline (a JSON document), found")


def test_outputs_never_replace_an_input(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = saved.read_bytes()
    code, _, err = _run(capsys, "baseline", "save", QRELS, str(saved), "-o", str(saved))
    assert code == 2 and "is also an input" in err
    code, _, err = _run(capsys, "check", str(saved), QRELS, RUN, "--junit", str(saved))
    assert code == 2 and "--junit:" in err and "is also an input" in err
    assert saved.read_bytes() == before


def test_baseline_save_refuses_stdin_and_sums(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "b.json")
    code, _, err = _run(capsys, "baseline", "save", "-", RUN, "-o", out)
    assert code == 2 and "QRELS: expected a file, found - (standard input)" in err
    code, _, err = _run(capsys, "baseline", "save", QRELS, RUN, "-m", "num_ret", "-o", out)
    assert code == 2 and "a baseline keeps measures summarised by their mean" in err
    assert not Path(out).exists()


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "0 every check passed" in text and "1 a check failed" in text and "2 bad input or usage" in text
    assert "4 a check was undecided and --fail-undecided was given" in text


def test_check_reads_the_run_from_stdin(saved: Path, worse: str, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(worse).read_bytes())))
    code, out, _ = _run(capsys, "check", str(saved), QRELS, "-", "--quiet", "--max-drop", "AP=0.05")
    assert code == 1 and "failed: AP max_drop 0.05: fell by 0.0768" in out


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_junit_file_that_cannot_be_written_exits_3(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "check", str(saved), QRELS, RUN, "--quiet", "--junit", "/dev/full")
    assert code == 3
    assert err == "retrieval-eval: error: cannot write the output: /dev/full: No space left on device\n"
