"""Labelled logs (``group item score label``): formats, errors, and the same numbers as a run plus qrels."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from retrieval_eval import SetEvaluator
from retrieval_eval.cli import main
from retrieval_eval.io.formats import read_log_columns
from retrieval_eval.model import InputFormatError, TrecFormatError

ROWS = [("s1", "a", "0.9", "1"), ("s1", "b", "0.5", "0"), ("s1", "c", "0.5", "1"),
        ("s2", "x", "1", "0"), ("s2", "y", "2", "1"), ("s3", "z", "1", "1")]
EXPECTED_AUC = {"s1": 0.75, "s2": 1.0, "s3": 0.0}


def _text(separator: str, header: bool = False) -> str:
    rows = [("session", "item", "score", "click")] * header + ROWS
    return "".join(separator.join(row) + "\n" for row in rows)


@pytest.mark.parametrize(("name", "separator"), [
    ("log.tsv", "\t"), ("log.csv", ","), ("log.txt", " "), ("log.csv.gz", ","), ("log.tsv.gz", "\t"), ("log", ","),
])
@pytest.mark.parametrize("header", [False, True])
def test_text_formats_read_the_same_log(tmp_path: Path, name: str, separator: str, header: bool) -> None:
    path = tmp_path / name
    data = _text(separator, header).encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    results = SetEvaluator.from_log(path)
    assert results.per_query("AUC") == EXPECTED_AUC
    assert results.aggregate("GAUC") == pytest.approx(0.875)
    qrels, _run = read_log_columns(path)
    assert qrels.lines.tolist() == list(range(1 + header, 7 + header))  # file lines, the header counted


def test_a_log_is_a_run_plus_its_qrels(tmp_path: Path) -> None:
    """Every all_trec measure of a log equals that of the same rows written as a qrels and a run file."""
    rng = np.random.default_rng(3)
    rows = [(f"s{q}", f"i{i}", float(rng.integers(0, 8)) / 4, int(rng.integers(0, 3)))
            for q in range(30) for i in range(int(rng.integers(1, 25)))]
    (tmp_path / "log.tsv").write_text("".join(f"{g}\t{i}\t{s!r}\t{label}\n" for g, i, s, label in rows))
    (tmp_path / "qrels").write_text("".join(f"{g} 0 {i} {label}\n" for g, i, _, label in rows))
    (tmp_path / "run").write_text("".join(f"{g} Q0 {i} 0 {s!r} r\n" for g, i, s, _ in rows))
    log = SetEvaluator.from_log(tmp_path / "log.tsv")
    files = SetEvaluator.from_trec(tmp_path / "qrels", tmp_path / "run")
    assert log.query_ids == files.query_ids
    for measure in ("AP", "nDCG@10", "RR", "P@5", "Bpref", "AUC", "GAUC", "ERR@10", "R@100"):
        assert log.per_query(measure) == files.per_query(measure), measure


def test_a_large_session_with_ties_matches_sklearn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(11)
    scores, labels = rng.integers(0, 50, 20_000) / 10, rng.integers(0, 2, 20_000)
    log = io.StringIO("".join(f"big\ti{i}\t{s}\t{y}\n" for i, (s, y) in enumerate(zip(scores, labels))))
    assert SetEvaluator.from_log(log).per_query("AUC")["big"] == pytest.approx(
        metrics.roc_auc_score(labels, scores), abs=1e-12)


@pytest.mark.parametrize(("name", "content", "message"), [
    ("bad.csv", "s1,a,0.9,1\ns1,b,,0\n", ("bad.csv:2: empty field; expected 4 fields 'group item score label'; "
                                         "got 's1,b,,0'")),
    ("bad.csv", "s1,a,0.9,\n", "bad.csv:1: empty field"),
    ("bad.tsv", "s1\ta\t0.9\t1\ns1\t\tb\t1\n", "bad.tsv:2: empty field"),
    ("bad.tsv", "s1\ta\t0.9\t1\ns1\tb\t0.5\tyes\n", ("bad.tsv:2: label must be a finite number or true/false; expected "
                                                   "'group item score label'; got 's1\\tb\\t0.5\\tyes'")),
    ("bad.tsv", "s1\ta\t0.9\t1\ns1\tb\t0.5\tnan\n", "bad.tsv:2: label must be a finite number"),
    ("bad.tsv", "s1\ta\tnan\t1\n", "bad.tsv:1: score must not be NaN"),
    ("bad.tsv", "s1\ta\tx\t1\n", "bad.tsv:1: score must be a number"),
    ("bad.txt", "s1 a 0.9 1 extra\n", "bad.txt:1: 5 fields; expected 4 fields 'group item score label'"),
    ("bad.tsv", "s1\ta\t0.9\t1\ngroup\titem\tscore\tlabel\n", "bad.tsv:2: score must be a number"),
    ("bad.tsv", "# only a comment\n", "bad.tsv: no rows found"),
])
def test_malformed_logs_name_the_line(tmp_path: Path, name: str, content: str, message: str) -> None:
    (tmp_path / name).write_text(content)
    with pytest.raises(TrecFormatError) as error:
        SetEvaluator.from_log(tmp_path / name)
    assert str(error.value).startswith(str(tmp_path / name)[: -len(name)] + message)


def test_a_header_at_the_start_of_a_later_block_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from retrieval_eval.io import _parse, _source

    monkeypatch.setattr(_source, "_FIRST_BLOCK", 64)
    monkeypatch.setattr(_parse, "_BLOCK", 64)
    rows = "".join(f"s1\ti{i:03d}\t0.500\t1\n" for i in range(4))  # 4 lines of 16 bytes: exactly one block
    assert len(rows) == 64
    (tmp_path / "log.tsv").write_text(rows + "group\titem\tscore\tlabel\n" + rows.replace("s1", "s2"))
    with pytest.raises(TrecFormatError, match=r"log.tsv:5: score must be a number"):
        SetEvaluator.from_log(tmp_path / "log.tsv")


def test_a_repeated_item_is_refused_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "log.tsv").write_text("s1\ta\t0.9\t1\ns1\ta\t0.1\t0\ns1\tb\t0.5\t0\n")
    with pytest.raises(InputFormatError, match="log.tsv:2"):
        SetEvaluator.from_log(tmp_path / "log.tsv")
    assert SetEvaluator.from_log(tmp_path / "log.tsv", duplicates="first").per_query("AUC") == {"s1": 1.0}


def test_unknown_delimiter_and_text_columns_without_a_header_are_refused(tmp_path: Path) -> None:
    # Issue 27 (B.3): columns= now names a text log's header columns too; a log without a header
    # (as here) has no names to choose from, and says so (it used to refuse columns= for any text log).
    (tmp_path / "log.tsv").write_text(_text("\t"))
    with pytest.raises(ValueError, match="'delimiter' must be one of"):
        SetEvaluator.from_log(tmp_path / "log.tsv", delimiter="semicolon")
    with pytest.raises(ValueError, match="log.tsv:1: columns a, b, c, d are named, but the log has no header line"):
        SetEvaluator.from_log(tmp_path / "log.tsv", columns=("a", "b", "c", "d"))


def test_parquet_logs(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    session, item, score, click = zip(*ROWS)
    table = pa.table({"session": session, "item": item, "score": [float(s) for s in score],
                      "click": [int(c) for c in click]})
    pq.write_table(table, tmp_path / "log.parquet")
    assert SetEvaluator.from_log(tmp_path / "log.parquet").per_query("AUC") == EXPECTED_AUC
    # Columns by name, in any order and among others.
    pq.write_table(table.add_column(0, "ts", pa.array(range(len(ROWS)))), tmp_path / "wide.parquet")
    named = SetEvaluator.from_log(tmp_path / "wide.parquet", columns=("session", "item", "score", "click"))
    assert named.per_query("AUC") == EXPECTED_AUC
    # A missing value names its row and column.
    pq.write_table(table.set_column(1, "item", pa.array(["a", None, "c", "x", "y", "z"])), tmp_path / "null.parquet")
    with pytest.raises(TrecFormatError, match=r"null.parquet, row 2: empty item \(column 'item'\)"):
        SetEvaluator.from_log(tmp_path / "null.parquet")
    pq.write_table(table.set_column(3, "click", pa.array([1.0, float("nan"), 1, 0, 1, 1])), tmp_path / "nan.parquet")
    with pytest.raises(TrecFormatError, match=r"nan.parquet, row 2: label must be a finite number"):
        SetEvaluator.from_log(tmp_path / "nan.parquet")


def test_a_parquet_log_is_known_by_its_magic_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Parquet log named without .parquet was read as text (and failed on its binary bytes); the TREC
    readers already went by the PAR1 magic."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    session, item, score, click = zip(*ROWS)
    table = pa.table({"session": session, "item": item, "score": [float(s) for s in score],
                      "click": [int(c) for c in click]})
    for name in ("clicks", "clicks.tsv"):
        pq.write_table(table, tmp_path / name)
        assert SetEvaluator.from_log(tmp_path / name).per_query("AUC") == EXPECTED_AUC
        assert SetEvaluator.from_log(str(tmp_path / name)).per_query("AUC") == EXPECTED_AUC
    assert main(["evaluate", "--log", str(tmp_path / "clicks"), "-m", "AUC", "-q"]) == 0
    out, err = capsys.readouterr()
    assert err == ("retrieval-eval: note: AUC: 1 of 3 queries has only relevant or only non-relevant documents and "
                   "is left out of its summary: s3\n")  # s3 has one class: no AUC (issue 27)
    assert [line.split()[1] for line in out.splitlines()] == [*EXPECTED_AUC, "all"]


def test_parquet_without_pyarrow_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # the import then fails
    (tmp_path / "log.parquet").write_bytes(b"PAR1")
    with pytest.raises(InputFormatError, match=r"pip install 'retrieval-evaluator\[parquet\]'"):
        SetEvaluator.from_log(tmp_path / "log.parquet")


def test_cli_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "log.csv").write_text(_text(","))
    assert main(["evaluate", "--log", str(tmp_path / "log.csv"), "-q", "--format", "json",
                 "-m", "AUC", "-m", "GAUC", "-m", "GAUC(weight='impressions')"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert {q: v["AUC"] for q, v in report["per_query"].items()} == EXPECTED_AUC
    assert report["aggregate"]["GAUC"] == pytest.approx(0.875)
    assert report["queries"]["left_out_of_summary"] == {"AUC": ["s3"], "GAUC": ["s3"],
                                                        "GAUC(weight='impressions')": ["s3"]}
    assert report["aggregate"]["AUC"] == report["aggregate"]["GAUC"]  # s3's AUC is undefined: left out of both
    assert report["aggregate"]["GAUC(weight='impressions')"] == pytest.approx((3 * 0.75 + 2 * 1.0) / 5)
    assert "GAUC: 1 of 3 queries has only relevant or only non-relevant documents and is left out of its " \
           "summary: s3" in err


@pytest.mark.parametrize("argv", [["evaluate", "--log", "x.tsv", "qrels"], ["evaluate", "qrels"], ["evaluate"],
                                  ["evaluate", "--log", "x.tsv", "--order", "file"]])
def test_cli_log_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "error: " in err and err.count("\n") == 1


def test_cli_bad_log_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.csv").write_text("s1,a,0.9,1\ns1,b,,0\n")
    assert main(["evaluate", "--log", str(tmp_path / "bad.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.csv:2: empty field" in err
