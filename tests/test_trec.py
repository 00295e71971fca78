"""TREC readers and writers: what they accept, and the exact errors for what they do not."""

from __future__ import annotations

import gzip
import io

import pytest

from retrieval_eval import (
    Document,
    Judgment,
    SetEvaluator,
    TrecFormatError,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)
from retrieval_eval.io.formats import read_qrels_columns, read_run_columns
from retrieval_eval.model import InputFormatError

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n"
RUN = "q1 Q0 a 1 2.5 runA\nq1 Q0 b 2 1.5 runA\nq2 Q0 c 1 9 runB\n"


class TestAccepted:
    def test_qrels_pairs(self) -> None:
        assert list(read_qrels(io.StringIO(QRELS))) == [
            ("q1", Judgment("a", 1)), ("q1", Judgment("b", 0)), ("q2", Judgment("c", 2)),
        ]

    def test_run_pairs_keep_file_rank_and_score(self) -> None:
        assert next(read_run(io.StringIO(RUN))) == ("q1", Document("a", 1, 2.5))

    def test_whitespace_crlf_comments_and_blank_lines(self, write) -> None:
        """Tabs, runs of spaces, CRLF, leading blanks, '#' lines and blank lines are all fine."""
        qrels = write("q", "# header\r\n\r\n  q1\t0   a 1\r\n#two\n# comments\nq1 0 b 0")
        columns = read_qrels_columns(qrels)
        assert columns.doc_ids.tolist() == [b"a", b"b"] and columns.lines.tolist() == [3, 6]

    def test_hash_inside_a_field_is_data(self, write) -> None:
        run = write("r", "q1 Q0 doc#13_1 1 0.7 run#1\n")
        assert read_run_columns(run).doc_ids.tolist() == [b"doc#13_1"]

    def test_extra_run_columns_are_ignored_and_run_id_is_the_last_lines(self, write) -> None:
        run = write("r", "q1 Q0 a 1 1 first junk junk\nq9 Q0 b 1 1e-2 last\n")
        columns = read_run_columns(run)
        assert columns.run_id == "last" and columns.scores.tolist() == [1.0, 0.01]

    def test_gzip_and_binary_streams(self, write, tmp_path) -> None:
        path = tmp_path / "run.gz"
        with gzip.open(path, "wt") as out:
            out.write(RUN)
        assert read_run_columns(path).doc_ids.tolist() == [b"a", b"b", b"c"]
        assert read_run_columns(io.BytesIO(RUN.encode())).run_id == "runB"

    def test_infinite_scores_rank_first_and_last(self, write) -> None:
        runs = SetEvaluator.from_trec(write("q", "q 0 a 1\n"), write("r", "q Q0 b 1 -inf r\nq Q0 a 2 inf r\n"))
        assert [d.doc_id for d in runs["q"].retrieved_documents()] == ["a", "b"]

    def test_writers_round_trip(self, tmp_path) -> None:
        qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": -1}}
        run = {"q1": {"a": 0.5, "b": 0.5, "zz": 2.0}, "q2": {"c": 1e-300}}
        write_qrels(tmp_path / "q.gz", qrels)
        write_run(tmp_path / "r", run, run_id="mine")
        from_files = SetEvaluator.from_trec(tmp_path / "q.gz", tmp_path / "r")
        from_dicts = SetEvaluator.from_dict(qrels, run)
        assert from_files.run_id == "mine"
        for qid in from_dicts:
            assert from_files[qid].retrieved_documents() == from_dicts[qid].retrieved_documents()
            assert from_files[qid].judgments() == from_dicts[qid].judgments()


REJECTED = [
    pytest.param("qrels", "q1 0 a 1\nq1 0 b\n", r":2: 3 fields; expected 4 fields 'query_id iteration doc_id relevance'; got 'q1 0 b'", id="qrels-missing-column"),
    pytest.param("qrels", "q1 0 a 1 extra\n", r":1: 5 fields; expected 4 fields", id="qrels-extra-column"),
    pytest.param("qrels", "q1 0 a nan\n", r":1: relevance must be a finite number within int64's range; .*got 'q1 0 a nan'", id="qrels-nan-relevance"),
    pytest.param("qrels", "q1 0 a yes\n", r":1: relevance must be a finite number", id="qrels-word-relevance"),
    pytest.param("qrels", "# only a comment\n\n", r": no judgments found; .*got no data lines", id="qrels-empty"),
    pytest.param("run", "q1 Q0 a 1 0.5\n", r":1: 5 fields; expected at least 6 fields 'query_id Q0 doc_id rank score run_id'", id="run-missing-column"),
    pytest.param("run", "q1 Q0 a 1 abc r\n", r":1: score must be a number; .*got 'q1 Q0 a 1 abc r'", id="run-non-numeric-score"),
    pytest.param("run", "q1 Q0 a 1 nan r\n", r":1: score must not be NaN", id="run-nan-score"),
    pytest.param("run", "", r": no results found", id="run-empty"),
]


@pytest.mark.parametrize(("kind", "text", "message"), REJECTED)
def test_malformed_lines_are_rejected_with_path_and_line(write, kind: str, text: str, message: str) -> None:
    path = write(kind, text)
    reader = read_qrels_columns if kind == "qrels" else read_run_columns
    with pytest.raises(TrecFormatError, match=message) as caught:
        reader(path)
    assert str(caught.value).startswith(path)
    assert isinstance(caught.value, ValueError)


def test_truncated_gzip_is_reported(tmp_path) -> None:
    data = gzip.compress(("q1 Q0 a 1 0.5 r\n" * 2000).encode())
    path = tmp_path / "cut.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TrecFormatError, match="truncated or corrupt"):
        read_run_columns(path)


def test_missing_file(tmp_path) -> None:
    with pytest.raises(TrecFormatError, match="cannot open"):
        read_qrels_columns(tmp_path / "nope")


class TestDuplicates:
    def test_duplicate_run_document_names_query_document_and_lines(self, write) -> None:
        run = write("r", "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 a 3 1 r\n")
        with pytest.raises(InputFormatError, match=r"r:3: duplicate document for query 'q1', document 'a' \(first at line 1\)"):
            SetEvaluator.from_trec(write("q", "q1 0 a 1\n"), run)

    def test_duplicate_judgment(self, write) -> None:
        with pytest.raises(InputFormatError, match=r"q:2: duplicate judgment for query 'q1', document 'a'"):
            SetEvaluator.from_trec(write("q", "q1 0 a 1\nq1 0 a 0\n"), write("r", "q1 Q0 a 1 3 r\n"))

    def test_keep_first_occurrence_on_request(self, write) -> None:
        run = write("r", "q1 Q0 a 1 1 r\nq1 Q0 b 2 2 r\nq1 Q0 a 3 3 r\n")
        runs = SetEvaluator.from_trec(write("q", "q1 0 a 1\n"), run, duplicates="first")
        assert [d.doc_id for d in runs["q1"].retrieved_documents()] == ["b", "a"]


@pytest.mark.parametrize("pool_from", [0, 1000, 10**9], ids=["pool", "pool-later", "calling-thread"])
@pytest.mark.parametrize("block", [1, 7, 64], ids=["1-byte", "7-bytes", "64-bytes"])
def test_files_larger_than_one_block(monkeypatch, write, block: int, pool_from: int) -> None:
    """Files are parsed block by block, on the calling thread or (from _POOL_FROM bytes on) on the
    thread pool; lines that straddle blocks and line numbers survive."""
    from retrieval_eval.io import _parse

    text = "".join(f"q{i % 7} Q0 doc{i} {i} {i / 3!r} run{i}\n" for i in range(300)) + "# end\nq1 Q0 last 1 0.5 final"
    path = write("run", text)
    whole = read_run_columns(path)
    monkeypatch.setattr(_parse, "_BLOCK", block)
    monkeypatch.setattr(_parse, "_threads", lambda: 3)
    monkeypatch.setattr(_parse, "_plain_file_size", lambda source: None)  # read as a stream of unknown size
    monkeypatch.setattr(_parse, "_POOL_FROM", pool_from)
    pieces = read_run_columns(path)
    assert pieces.doc_ids.tolist() == whole.doc_ids.tolist() == [f"doc{i}".encode() for i in range(300)] + [b"last"]
    assert pieces.scores.tolist() == whole.scores.tolist()
    assert pieces.lines.tolist() == whole.lines.tolist() == [*range(1, 301), 302]
    assert pieces.run_id == whole.run_id == "final"
    with pytest.raises(TrecFormatError, match=r"run:302: 5 fields"):
        read_run_columns(write("run", text.replace("0.5 final", "0.5")))


@pytest.mark.parametrize(("kind", "text"), [("qrels", "q1 0 a 1_0\n"), ("run", "q1 Q0 a 1 1_5 r\n")],
                         ids=["relevance", "score"])
def test_underscores_in_numbers_are_rejected(write, kind: str, text: str) -> None:
    """Python would read 1_0 as 10 (trec_eval's atol as 1): a typo either way, so we refuse it."""
    reader = read_qrels_columns if kind == "qrels" else read_run_columns
    with pytest.raises(TrecFormatError, match=":1: (relevance|score) must be"):
        reader(write(kind, text))


def test_ranking_by_file_order_or_rank_column(write) -> None:
    qrels = write("q", "q 0 a 1\n")
    run = write("r", "q Q0 b 2 9.0 r\nq Q0 a 1 1.0 r\nq Q0 c 3 5.0 r\n")
    by = {order: [d.doc_id for d in SetEvaluator.from_trec(qrels, run, order=order)["q"].retrieved_documents()]
          for order in ("score", "file", "rank")}
    assert by == {"score": ["b", "c", "a"], "file": ["b", "a", "c"], "rank": ["a", "b", "c"]}
    with pytest.raises(TrecFormatError, match="rank must be an integer"):
        SetEvaluator.from_trec(qrels, write("r2", "q Q0 a x 1.0 r\n"), order="rank")
    with pytest.raises(ValueError, match="'order' must be one of"):
        SetEvaluator.from_trec(qrels, run, order="bogus")


@pytest.mark.parametrize(("cpus", "threads"), [({0}, 1), ({0, 1}, 3), ({0, 1, 2, 3}, 5)], ids=["one", "two", "four"])
def test_reader_threads_follow_the_cpus_the_process_may_use(monkeypatch, cpus: set[int], threads: int) -> None:
    """The parsing pool is sized from os.sched_getaffinity, not from a constant tuned to one machine."""
    import os

    from retrieval_eval.io import _parse

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cpus, raising=False)
    assert _parse._threads() == threads
