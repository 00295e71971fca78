"""trec_eval's own test suite: our CLI must print what trec_eval 10.0 printed.

The expected files and the command lines that produced them are in ../shared/reference/
trec_eval-testdata (see its MANIFEST.md). Every line of every file is compared (whitespace aside),
and the whole output must also be byte-identical.

"""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.cli import main


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 0
    return capsys.readouterr().out


def _lines(text: str) -> list[tuple[str, ...]]:
    return [tuple(line.split()) for line in text.splitlines()]


#: (expected file, trec_eval's arguments as in MANIFEST.md, with file names relative to the test data)
CASES = [
    pytest.param("out.test", ["qrels.test", "results.test"], id="out.test"),
    pytest.param("out.test", ["qrels.test.with-comments", "results.test"], id="with-comments"),
    pytest.param("out.comment.test", ["qrels.comment.test", "results.comment.test"], id="out.comment.test"),
    pytest.param("out.test.a", ["-m", "all_trec", "qrels.test", "results.test"], id="out.test.a"),
    pytest.param("out.test.aq", ["-m", "all_trec", "-q", "qrels.test", "results.test"], id="out.test.aq"),
    pytest.param("out.test.aqc", ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"],
                 id="out.test.aqc-missing-topic"),
    pytest.param("out.test.aqcM", ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"],
                 id="out.test.aqcM-depth"),
    pytest.param("out.test.aql", ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"],
                 id="out.test.aql-graded-negative"),
    pytest.param(
        "out.test.meas_params",
        ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
         "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
         "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20", "qrels.test", "results.test"],
        id="out.test.meas_params",
    ),
    pytest.param("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123", "results.test"],
                 id="out.test.qrels_jg"),
    pytest.param("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.comments.123", "results.test"],
                 id="qrels_jg-with-comments"),
    pytest.param("out.test.aqZ", ["-q", "-m", "all_trec", "-Z", "zscores_file", "qrels.test", "results.test"],
                 id="out.test.aqZ"),
    pytest.param("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test"],
                 id="out.test.prefs"),
    pytest.param("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.comment.test",
                                    "prefs.results.test"], id="prefs-with-comments"),
    pytest.param("out.test.qrels_prefs", ["-m", "all_prefs", "-q", "-R", "qrels_prefs", "qrels.test", "results.test"],
                 id="out.test.qrels_prefs"),
]


def _with_paths(testdata: Path, args: list[str]) -> list[str]:
    return [str(testdata / a) if (testdata / a).is_file() else a for a in args]


@pytest.mark.parametrize(("expected", "args"), CASES)
def test_output_matches_trec_eval(testdata: Path, capsys: pytest.CaptureFixture[str], expected: str,
                                  args: list[str]) -> None:
    """Every line, in order: names, query ids and values (whitespace aside)."""
    ours = _run(capsys, ["evaluate", *_with_paths(testdata, args)])
    theirs = (testdata / expected).read_text()
    assert _lines(ours) == _lines(theirs)


@pytest.mark.parametrize(("expected", "args"), CASES)
def test_output_is_byte_identical(testdata: Path, capsys: pytest.CaptureFixture[str], expected: str,
                                  args: list[str]) -> None:
    """Padding, tabs and newlines too: the output can replace trec_eval's in a diff-based pipeline."""
    ours = _run(capsys, ["evaluate", *_with_paths(testdata, args)])
    assert ours == (testdata / expected).read_text()


def test_all_trec_covers_every_measure_of_the_expected_files(testdata: Path) -> None:
    """The all_trec files name no measure we lack (the comparison above would catch it; this names it)."""
    from retrieval_eval.measures import parse_labelled

    ours = {label for _, label in parse_labelled("all_trec")} | {"runid"}
    theirs = {line.split()[0] for line in (testdata / "out.test.a").read_text().splitlines()}
    assert theirs <= ours


def test_missing_topic_scores_zero_except_num_rel(testdata: Path) -> None:
    """-c: topic 302 is absent from results.trunc; every measure is 0 (utility too) but num_rel (and num_q)."""
    from retrieval_eval import SetEvaluator
    from retrieval_eval.measures import parse_all

    ev = SetEvaluator.from_trec(testdata / "qrels.test", testdata / "results.trunc")
    assert ev.missing_from_run == ["302"]
    for measure in parse_all("all_trec"):
        value = ev.per_query_text(measure)["302"] if measure.definition.text else ev.per_query(measure)["302"]
        if measure.name == "NumRel":
            assert value == 77
        elif measure.name == "NumQ":
            assert value == 1
        elif measure.name == "RelString":
            assert value == ""
        else:
            assert value == 0.0, measure


def test_lemur_topic_302_vector(testdata: Path) -> None:
    """trec_eval's topic-302 files give the same values through the per-query API as through the CLI."""
    from retrieval_eval import SetEvaluator
    from retrieval_eval.measures import parse, parse_all

    whole = SetEvaluator.from_trec(testdata / "qrels.test", testdata / "results.test")
    alone = SetEvaluator.from_trec(testdata / "qrels-302.test", testdata / "results-302.test")
    for measure in ("AP", "Bpref", "Rprec", "RR", "nDCG", "P@10", "IPrec@0.3", *parse_all("all_trec")):
        if parse(measure).definition.text:
            assert alone["302"].text(measure) == whole["302"].text(measure), measure
        else:
            assert alone["302"].score(measure) == whole["302"].score(measure), measure
