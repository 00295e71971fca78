"""Logs whose columns are named (issue 27, B.3): a header read by name, ``columns=`` and
``--log-columns``, and labels written ``1.0`` or ``True``. Values are hand-computed."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval import InputFormatError, SetEvaluator, TrecFormatError
from retrieval_eval.cli import main


def test_log_columns_by_name_and_labels_as_floats_or_booleans(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # s1: a (0.9, clicked) above b (0.4): AUC 1. s2: d (0.5, not clicked) above c (0.3, clicked): AUC 0.
    named = tmp_path / "named.tsv"
    named.write_text("label\tscore\tgroup\titem\n1\t0.9\ts1\ta\n0.0\t0.4\ts1\tb\nTrue\t0.3\ts2\tc\nfalse\t0.5\ts2\td\n")
    other = tmp_path / "other.csv"
    other.write_text("click,pred,sess,doc\n1,0.9,s1,a\n0,0.4,s1,b\n1.0,0.3,s2,c\nFALSE,0.5,s2,d\n")
    for log, columns in ((named, None), (other, ("sess", "doc", "pred", "click"))):
        clicks = SetEvaluator.from_log(log, columns=columns)
        assert clicks.per_query("AUC") == {"s1": 1.0, "s2": 0.0}
        assert clicks.per_query("AP") == {"s1": 1.0, "s2": 0.5}
    assert main(["evaluate", "--log", str(other), "--log-columns", "sess,doc,pred,click", "-m", "AUC", "-q"]) == 0
    assert "AUC                   \ts2\t0.0000" in capsys.readouterr().out
    assert main(["evaluate", "--log", str(other), "--log-columns", "sess,doc,pred,clk"]) == 2
    assert "other.csv:1: the header has no column 'clk'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", str(other), str(other), "--log-columns", "a,b,c,d"])
    assert exit_.value.code == 2
    assert "--log-columns names the columns of a --log LOG" in capsys.readouterr().err


def test_log_labels_that_are_no_number_are_refused(tmp_path: Path) -> None:
    log = tmp_path / "log.tsv"
    log.write_text("s1 a 0.5 1\ns1 b 0.4 inf\n")
    with pytest.raises(TrecFormatError, match=r"log\.tsv:2: label must be a finite number"):
        SetEvaluator.from_log(log)
    log.write_text("s1 a 0.5 1\ns1 b 0.4 0\n")
    with pytest.raises(InputFormatError, match="has no header line naming its columns"):
        SetEvaluator.from_log(log, columns=("g", "i", "s", "l"))


def test_parquet_logs_by_name_and_boolean_labels(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"label": [True, False, True, False], "item": ["a", "b", "c", "d"],
                             "group": ["s1", "s1", "s2", "s2"], "score": [0.9, 0.4, 0.3, 0.5]}), path)
    assert SetEvaluator.from_log(path).per_query("AUC") == {"s1": 1.0, "s2": 0.0}
