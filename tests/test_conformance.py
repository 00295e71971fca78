"""trec_eval's own test suite: our CLI must print what trec_eval 10.0 printed.

The expected files and the command lines that produced them are in ../shared/reference/
trec_eval-testdata (see its MANIFEST.md). Comparison ignores whitespace only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.cli import main

#: Measures this project implements so far, by trec_eval name; lines of other measures are not compared.
IMPLEMENTED = {
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut", "success", "map_cut",
}


def _run(capsys: pytest.CaptureFixture[str], args: list[str]) -> list[tuple[str, ...]]:
    assert main(args) == 0
    return [tuple(line.split()) for line in capsys.readouterr().out.splitlines()]


def _read(path: Path) -> list[tuple[str, ...]]:
    return [tuple(line.split()) for line in path.read_text().splitlines()]


def _base(name: str) -> str:
    """trec_eval's measure name without its cutoff suffix: P_10 -> P, iprec_at_recall_0.10 -> iprec_at_recall."""
    if name in IMPLEMENTED:
        return name
    head, _, tail = name.rpartition("_")
    return head if tail.replace(".", "").isdigit() else name


@pytest.mark.parametrize(
    ("qrels", "run"),
    [("qrels.test", "results.test"), ("qrels.test.with-comments", "results.test"),
     ("qrels.comment.test", "results.comment.test")],
    ids=["out.test", "with-comments", "rag-comment"],
)
def test_default_output_is_byte_for_byte(testdata: Path, capsys: pytest.CaptureFixture[str], qrels: str, run: str) -> None:
    """With no flags we print exactly trec_eval's official block (whitespace aside)."""
    expected = "out.comment.test" if run == "results.comment.test" else "out.test"
    assert _run(capsys, ["evaluate", str(testdata / qrels), str(testdata / run)]) == _read(testdata / expected)


ALL_TREC_CASES = [
    pytest.param("out.test.aq", ["-q"], "qrels.test", "results.test", id="aq"),
    pytest.param("out.test.a", [], "qrels.test", "results.test", id="a"),
    pytest.param("out.test.aqc", ["-q", "-c"], "qrels.test", "results.trunc", id="aqc-missing-topic"),
    pytest.param("out.test.aqcM", ["-q", "-c", "-M100"], "qrels.test", "results.trunc", id="aqcM-depth"),
    pytest.param("out.test.aql", ["-q", "-l2"], "qrels.rel_level", "results.test", id="aql-graded-negative"),
]


@pytest.mark.parametrize(("expected", "flags", "qrels", "run"), ALL_TREC_CASES)
def test_implemented_measures_match_all_trec_output(
    testdata: Path, capsys: pytest.CaptureFixture[str], expected: str, flags: list[str], qrels: str, run: str
) -> None:
    """Every line of an implemented measure in trec_eval's -m all_trec output, in the same order."""
    measures = ["-m", "official", "-m", "recall", "-m", "ndcg", "-m", "ndcg_cut", "-m", "success", "-m", "map_cut"]
    ours = _run(capsys, ["evaluate", *flags, *measures, str(testdata / qrels), str(testdata / run)])
    theirs = [line for line in _read(testdata / expected) if _base(line[0]) in IMPLEMENTED]
    assert len(theirs) > 50
    assert ours == theirs


def test_parameterised_measures_match_meas_params(testdata: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Cutoff lists as trec_eval parses them: '..10,.20', 'P.5,7,3' (sorted), '23.4' read as 23."""
    measures = ["-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
                "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20"]
    ours = _run(capsys, ["evaluate", "-q", *measures, str(testdata / "qrels.test"), str(testdata / "results.test")])
    wanted = {"iprec_at_recall", "P", "recall", "ndcg_cut", "success"}
    theirs = [line for line in _read(testdata / "out.test.meas_params") if _base(line[0]) in wanted]
    assert ours == theirs


def test_lemur_topic_302_vector(testdata: Path) -> None:
    """trec_eval's topic-302 files give the same values through the per-query API as through the CLI."""
    from retrieval_eval import SetEvaluator

    whole = SetEvaluator.from_trec(testdata / "qrels.test", testdata / "results.test")
    alone = SetEvaluator.from_trec(testdata / "qrels-302.test", testdata / "results-302.test")
    for measure in ("AP", "Bpref", "Rprec", "RR", "nDCG", "P@10", "IPrec@0.3"):
        assert alone["302"].score(measure) == whole["302"].score(measure)
