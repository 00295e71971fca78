"""The command line, in process (``main(argv)``) and once end to end as real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval_eval.cli import main

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\nq3 0 y 1\n"
RUN = "q1 Q0 b 1 3.0 mine\nq1 Q0 c 2 2.0 mine\nq1 Q0 a 3 1.0 mine\nq2 Q0 x 1 1.0 mine\nq4 Q0 z 1 1.0 mine\n"


@pytest.fixture
def files(write) -> tuple[str, str]:  # noqa: ANN001
    return write("qrels", QRELS), write("run", RUN)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_selected_measures_in_trec_order(capsys, files) -> None:  # noqa: ANN001
    """-m order does not matter: lines come in trec_eval's table order; no runid unless asked."""
    code, out, _ = _run(capsys, "evaluate", "-m", "P.2", "-m", "map", *files)
    assert code == 0
    assert out.splitlines() == ["map                   \tall\t0.5278", "P_2                   \tall\t0.3333"]


def test_per_query_then_summary(capsys, files) -> None:  # noqa: ANN001
    code, out, err = _run(capsys, "evaluate", "-q", "-m", "num_ret", "-m", "recip_rank", *files)
    assert [line.split() for line in out.splitlines()] == [
        ["num_ret", "q1", "3"], ["recip_rank", "q1", "0.5000"],
        ["num_ret", "q2", "1"], ["recip_rank", "q2", "1.0000"],
        ["num_ret", "q3", "0"], ["recip_rank", "q3", "0.0000"],
        ["num_ret", "all", "4"], ["recip_rank", "all", "0.5000"],
    ]
    assert "1 judged queries have no results; scored as empty rankings (as trec_eval -c): q3" in err
    assert "1 run queries have no judgments and are ignored: q4" in err


def test_c_flag_silences_the_missing_query_note(capsys, files) -> None:  # noqa: ANN001
    _, _, err = _run(capsys, "evaluate", "-c", "-m", "map", *files)
    assert "judged queries have no results" not in err


def test_skip_missing_averages_over_the_intersection(capsys, files) -> None:  # noqa: ANN001
    _, out, err = _run(capsys, "evaluate", "--skip-missing", "-m", "num_q", "-m", "recip_rank", *files)
    assert out.split() == ["num_q", "all", "2", "recip_rank", "all", "0.7500"]
    assert "left out of the means" in err


def test_ir_measures_names_keep_their_spelling(capsys, files) -> None:  # noqa: ANN001
    _, out, _ = _run(capsys, "evaluate", "-m", "nDCG@10", "-m", "AP", "-m", "P@2", "-m", "RR", *files)
    assert [line.split()[0] for line in out.splitlines()] == ["AP", "RR", "P@2", "nDCG@10"]


def test_level_and_depth_and_judged_only(capsys, files) -> None:  # noqa: ANN001
    _, out, _ = _run(capsys, "evaluate", "-q", "-l2", "-m", "num_rel", *files)
    assert out.split()[:3] == ["num_rel", "q1", "1"]
    _, out, _ = _run(capsys, "evaluate", "-q", "-M1", "-m", "num_ret", *files)
    assert out.split()[:3] == ["num_ret", "q1", "1"]
    _, out, _ = _run(capsys, "evaluate", "-q", "-J", "-m", "num_ret", "-m", "P.1", *files)
    assert out.split()[:6] == ["num_ret", "q1", "3", "P_1", "q1", "0.0000"]


def test_no_summary_and_digits(capsys, files) -> None:  # noqa: ANN001
    _, out, _ = _run(capsys, "evaluate", "-q", "-n", "--digits", "2", "-m", "map", *files)
    assert out.split() == ["map", "q1", "0.58", "map", "q2", "1.00", "map", "q3", "0.00"]


def test_json_keeps_full_precision(capsys, files) -> None:  # noqa: ANN001
    _, out, _ = _run(capsys, "evaluate", "-q", "--format", "json", "-m", "map", "-m", "nDCG@10", "-m", "official", *files)
    report = json.loads(out)
    assert report["aggregate"]["map"] == pytest.approx(((1 / 2 + 2 / 3) / 2 + 1 + 0) / 3, abs=1e-15)
    assert report["per_query"]["q1"]["map"] == pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-15)
    assert "gm_map" not in report["per_query"]["q1"] and "gm_map" in report["aggregate"]
    assert report["measures"]["nDCG@10"] == "nDCG@10" and report["measures"]["P_5"] == "P@5"
    assert report["queries"] == {"evaluated": 3, "missing_from_run": ["q3"], "not_judged": ["q4"]}
    assert report["run_id"] == "mine"


BAD_INPUT = [
    pytest.param(["-m", "nDGC@10"], "unknown measure 'nDGC'; did you mean 'nDCG'", id="unknown-measure"),
    pytest.param(["-m", "P@x"], "cutoff of 'P@x' must be a number", id="bad-cutoff"),
    pytest.param(["-m", "P.0"], "must be a positive integer", id="zero-cutoff"),
    pytest.param(["-m", "P"], None, id="P-alone-is-trec-default-cutoffs"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUT)
def test_measure_errors_exit_2(capsys, files, args: list[str], message: str | None) -> None:  # noqa: ANN001
    code, out, err = _run(capsys, "evaluate", *args, *files)
    if message is None:
        assert code == 0 and "P_1000" in out
    else:
        assert code == 2 and message in err and "Traceback" not in err
        assert err.count("\n") == 1


def test_bad_file_exits_2_with_one_line(capsys, write) -> None:  # noqa: ANN001
    qrels = write("qrels", "q1 0 a 1\nq1 0 b\n")
    code, out, err = _run(capsys, "evaluate", qrels, write("run", RUN))
    assert code == 2 and out == ""
    assert err == f"retrieval-eval: error: {qrels}:2: 3 fields; expected 4 fields 'query_id iteration doc_id relevance'; got 'q1 0 b'\n"


def test_missing_file_exits_2(capsys, tmp_path) -> None:  # noqa: ANN001
    code, _, err = _run(capsys, "evaluate", str(tmp_path / "q"), str(tmp_path / "r"))
    assert code == 2 and "cannot open" in err


def test_usage_errors_exit_2(capsys) -> None:  # noqa: ANN001
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "only-one-file"])
    assert exit_.value.code == 2
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "-M", "-3", "q", "r"])
    assert exit_.value.code == 2


def test_help_explains_every_flag(capsys) -> None:  # noqa: ANN001
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = capsys.readouterr().out
    for flag in ("-q", "-c", "-n", "-J", "-l LEVEL", "-M DEPTH", "-m MEASURE", "--digits N", "--format",
                 "--skip-missing", "--duplicates"):
        assert flag in text


def test_demo_evaluates_the_bundled_sample(capsys) -> None:  # noqa: ANN001
    code, out, err = _run(capsys, "demo")
    assert code == 0
    assert out.splitlines()[0].split() == ["runid", "all", "sample"]
    assert len(out.splitlines()) == 30 and "q13" in err  # runid + 29 official lines


def test_measures_lists_the_registry(capsys) -> None:  # noqa: ANN001
    from retrieval_eval.measures import REGISTRY

    code, out, _ = _run(capsys, "measures")
    assert code == 0
    for name, definition in REGISTRY.items():
        assert f"{name}" in out and definition.summary in out


def test_stdin_run(testdata: Path) -> None:
    """End to end as a process: ``-`` reads the run from stdin; same bytes as trec_eval's out.test."""
    with open(testdata / "results.test", "rb") as run:
        done = subprocess.run([sys.executable, "-m", "retrieval_eval", "evaluate", str(testdata / "qrels.test"), "-"],
                              stdin=run, capture_output=True, check=True)
    assert done.stdout.split() == (testdata / "out.test").read_bytes().split()


def test_console_script_reports_errors_without_traceback(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("retrieval-eval")
    if not script.exists():
        pytest.skip("the console script is not installed in this environment")
    done = subprocess.run([str(script), "evaluate", str(tmp_path / "none"), str(tmp_path / "none")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "cannot open" in done.stderr


def test_c_and_skip_missing_conflict(capsys, files) -> None:  # noqa: ANN001
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "-c", "--skip-missing", *files])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_order_by_file_or_rank_column(capsys, write) -> None:  # noqa: ANN001
    qrels = write("q", "q 0 a 1\n")
    run = write("r", "q Q0 b 2 9.0 r\nq Q0 a 1 1.0 r\n")
    answers = {order: _run(capsys, "evaluate", "--order", order, "-m", "recip_rank", qrels, run)[1].split()[-1]
               for order in ("score", "file", "rank")}
    assert answers == {"score": "0.5000", "file": "0.5000", "rank": "1.0000"}


def test_digits_keep_trec_eval_width_rule(capsys, files) -> None:  # noqa: ANN001
    _, out, _ = _run(capsys, "evaluate", "--digits", "6", "-m", "map", *files)
    assert out.endswith("\t0.527778\n")
    _, out, _ = _run(capsys, "evaluate", "--digits", "0", "-m", "map", *files)
    assert out.endswith("\t 1\n")


def test_json_counts_are_integers(capsys, files) -> None:  # noqa: ANN001
    _, out, _ = _run(capsys, "evaluate", "-q", "--format", "json", "-m", "num_ret", *files)
    report = json.loads(out)
    assert report["aggregate"]["num_ret"] == 4 and isinstance(report["aggregate"]["num_ret"], int)
    assert report["per_query"]["q1"]["num_ret"] == 3 and isinstance(report["per_query"]["q1"]["num_ret"], int)
