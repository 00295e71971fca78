"""Every row of the input-fault table in docs/input-faults.md, run through the command line.

Each case is a qrels file and a run file with one fault, and one of three outcomes:

* ``accepted``: exit 0, no warning, and (when the fault is only cosmetic) the same output as the
  clean files;
* ``warned``: exit 0 and a ``retrieval-eval: warning:`` line on stderr matching the pattern;
* ``rejected``: exit 2 and ``retrieval-eval: error: <path>:<line>: ...`` matching the pattern.

No case may print a traceback. The test at the end checks that the table and this list name the
same cases, so a row cannot be documented without being tested, nor the other way round.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import importlib.util
import io
import json
import lzma
import math
import os
import re
import sys
import time
import tracemalloc
import warnings
import zlib
from pathlib import Path

import attrs
import numpy as np
import pytest

from retrieval_eval import (
    SetEvaluator,
    TrecFormatError,
    read_qrels,
    read_run,
)
from retrieval_eval.cli import main
from retrieval_eval.engine.build import build_batch
from retrieval_eval.io import _parse, _source
from retrieval_eval.io.formats import read_qrels_columns, read_run_columns
from retrieval_eval.io.trec import write_qrels, write_run
from retrieval_eval.model import InputFormatError, InputTypeError, InputWarning, RetrievalEvalError

DOCS = Path(__file__).resolve().parent.parent / "docs" / "input-faults.md"
QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n"
JG = ("-R", "qrels_jg", "-m", "qrels_jg")  # the options of the judgment-group cases
RUN = "q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\nq2 Q0 c 1 1.0 r\n"


@attrs.frozen
class Case:
    id: str
    outcome: str  # accepted | warned | rejected
    qrels: str | bytes = QRELS
    run: str | bytes = RUN
    pattern: str = ""  # regex on the warning or error; for rejected, what follows "path:line: "
    where: str = ""  # "qrels" or "run": the file a rejection must name (with its line)
    same_output: bool = False  # accepted or warned: output identical to the clean files'
    gzip_run: bool = False
    options: tuple[str, ...] = ()  # more evaluate options (-l 2); one with -m replaces -m official
    zscores: str = ""  # a -Z file's content (where="zscores" for its faults)


def _no_newline(text: str) -> str:
    return text.rstrip("\n")


#: A zstd frame of RUN (the stdlib has no zstd writer before Python 3.14; only the magic bytes matter).
ZSTD_RUN = b"\x28\xb5\x2f\xfd" + bytes(6) + RUN.encode()
GRADED_QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n"


CASES = [
    Case("crlf", "accepted", QRELS.replace("\n", "\r\n"), RUN.replace("\n", "\r\n"), same_output=True),
    Case("tabs", "accepted", QRELS.replace(" ", "\t"), RUN.replace(" ", "\t"), same_output=True),
    Case("stray-spaces", "accepted", QRELS.replace(" ", "   ").replace("\n", "  \n  "),
         "  " + RUN.replace(" ", "  "), same_output=True),
    Case("bom", "warned", "\ufeff" + QRELS, "\ufeff" + RUN, "byte order mark .* ignored", same_output=True),
    Case("qrels-missing-column", "rejected", QRELS + "q2 0 d\n", pattern="4: 3 fields; expected 4 fields",
         where="qrels"),
    Case("qrels-extra-column", "rejected", "q1 0 a 1 x\n", pattern="1: 5 fields; expected 4 fields", where="qrels"),
    Case("run-missing-column", "rejected", run=RUN + "q2 Q0 d 2 0.5\n",
         pattern="4: 5 fields; expected at least 6 fields", where="run"),
    Case("run-extra-columns", "accepted", run=RUN.replace(" r\n", " r extra stuff\n"), same_output=True),
    Case("cr-only-line-endings", "rejected", run=RUN.replace("\n", "\r"),
         pattern=r"1: a carriage return \(\\r\) between the columns after the run id: .* runs its records together; "
                 r"expected one record per line, each line ending in \\n or \\r\\n; got 'q1 Q0 a 1 2.0 r\\rq1 Q0 b",
         where="run"),
    Case("newline-lost", "warned", run=RUN.replace(" r\nq1", " rq1"),
         pattern=r"run:1: the columns after the run id \(ignored\) hold 'Q0' again: a newline may be missing"),
    Case("score-nan", "rejected", run=RUN.replace("2.0", "nan"), pattern="1: score must not be NaN", where="run"),
    Case("score-inf", "accepted", run=RUN.replace("1.0 r\nq2", "inf r\nq2")),
    Case("score-1e400", "warned", run=RUN.replace("2.0", "1e400"), pattern="run:1: score too large for a double"),
    Case("score-abc", "rejected", run=RUN.replace("2.0", "abc"), pattern="1: score must be a number", where="run"),
    Case("relevance-1.7", "accepted", QRELS.replace("a 1", "a 1.7")),
    Case("relevance-nan", "rejected", QRELS.replace("a 1", "a nan"), pattern="1: relevance must be a finite number",
         where="qrels"),
    Case("relevance-abc", "rejected", QRELS.replace("a 1", "a yes"), pattern="1: relevance must be a finite number",
         where="qrels"),
    Case("number-with-underscore", "rejected", run=RUN.replace("2.0", "1_0"), pattern="1: score must be a number",
         where="run"),
    Case("empty-qrels", "rejected", "", pattern=r": no judgments found", where="qrels"),
    Case("empty-run", "rejected", run="", pattern=r": no results found", where="run"),
    Case("comments-only", "rejected", run="# nothing\n# here\n\n", pattern=r": no results found", where="run"),
    Case("duplicate-document", "rejected", run=RUN + "q1 Q0 a 3 0.5 r\n",
         pattern=r"4: duplicate document for query 'q1', document 'a' \(first at line 1\)", where="run"),
    Case("duplicate-judgment", "rejected", QRELS + "q1 0 a 0\n",
         pattern=r"4: duplicate judgment for query 'q1', document 'a' \(first at line 1\)", where="qrels"),
    Case("query-missing-from-run", "accepted", QRELS + "q3 0 e 1\n"),
    Case("query-missing-from-qrels", "accepted", run=RUN + "q9 Q0 z 1 1.0 r\n", same_output=True),
    Case("gigantic-id", "accepted", QRELS + "q2 0 " + "x" * 1_000_000 + " 1\n",
         RUN + "q2 Q0 " + "x" * 1_000_000 + " 2 0.5 r\n"),
    Case("line-too-long", "rejected", run=RUN + "q2 Q0 " + "x" * (1 << 20) + " 2 0.5 r\n",
         pattern=r"4: line longer than 1048576 bytes; expected lines of at most 1048576 bytes \(set "
                 r"RETRIEVAL_EVAL_MAX_LINE_BYTES to allow longer ones\); got a line starting 'q2 Q0 xxx.*\.\.\.'$",
         where="run"),
    Case("non-utf8", "accepted", QRELS.encode() + b"q2 0 caf\xe9 1\n", RUN.encode() + b"q2 Q0 caf\xe9 2 0.5 r\n"),
    Case("ids-equal-in-display", "accepted", b"q\xe9 0 a 1\nq\\xe9 0 b 1\n", b"q\xe9 Q0 a 1 1 r\nq\\xe9 Q0 x 1 1 r\n"),
    Case("no-final-newline", "accepted", _no_newline(QRELS), _no_newline(RUN), same_output=True),
    Case("last-line-cut-short", "rejected", run=_no_newline(RUN)[:-5],
         pattern="3: 4 fields \\(the last line, with no newline after it: the file may be truncated\\)",
         where="run"),
    Case("truncated-gzip", "rejected", run=RUN * 2000, gzip_run=True, pattern=": compressed data is truncated",
         where="run"),
    Case("gzip-without-suffix", "accepted", gzip.compress(QRELS.encode(), mtime=0),
         gzip.compress(RUN.encode(), mtime=0), same_output=True),
    Case("bzip2", "rejected", run=bz2.compress(RUN.encode()),
         pattern=": compressed with bzip2, which is not supported; decompress it first", where="run"),
    Case("xz", "rejected", run=lzma.compress(RUN.encode()),
         pattern=": compressed with xz, which is not supported; decompress it first", where="run"),
    Case("zstd", "rejected", run=ZSTD_RUN,
         pattern=": compressed with zstd, which is not supported; decompress it first", where="run"),
    Case("gzip-trailing-garbage", "rejected", run=gzip.compress(RUN.encode(), mtime=0) + b"junk\n",
         pattern=r": trailing garbage after the gzip stream \(after 3 complete lines\)", where="run"),
    Case("swapped-files", "rejected", RUN, QRELS,
         pattern=r"1: 6 fields; expected 4 fields .*; the arguments look swapped: .* give QRELS first, then RUN",
         where="qrels"),
    Case("no-query-in-common", "rejected", "x1 0 a 1\nx2 0 b 1\n",
         pattern=r": no run query is judged in .* \(a wrong or swapped file\?\); expected results for the judged "
                 r"queries \(x1, x2\); got results for 2 other queries \(q1, q2\)", where="run"),
    Case("nul-byte", "rejected", run=RUN.replace("q1 Q0 b", "q1 Q0 b\0"), pattern="2: NUL byte in the line",
         where="run"),
    Case("only-negative-judgments", "warned", QRELS + "q3 0 d -1\n", RUN + "q3 Q0 d 1 1.0 r\n",
         "1 query has only negative judgments .*: q3"),
    Case("no-relevant-judgment", "warned", QRELS + "q3 0 d 0\n", RUN + "q3 Q0 d 1 1.0 r\n",
         r"1 query has no relevant judgment \(relevance >= 1\), so map, .* are 0 for it: q3"),
    Case("no-relevant-at-level", "warned", GRADED_QRELS, RUN,
         r"^retrieval-eval: warning: 2 queries have no relevant judgment \(relevance >= 3\), so map, Rprec, "
         r"bpref, .* are 0 for them: q1, q2$", options=("-l", "3")),
    Case("first-id-par1", "accepted", "PAR1q 0 a 1\nq2 0 c 1\n", "PAR1q Q0 a 1 2.0 r\nq2 Q0 c 1 1.0 PAR1\n"),
    # -R qrels_jg (the second field is the judgment group) and -Z files
    Case("jg-missing-group", "rejected", "q1 0 a 1\nq1 b 0\n", pattern=r"2: 3 fields; expected 4 fields", where="qrels",
         options=JG),
    Case("jg-relevance-abc", "rejected", "q1 0 a 1\nq1 1 b yes\n", pattern="2: relevance must be a finite number",
         where="qrels", options=JG),
    Case("jg-duplicate", "rejected", "q1 0 a 1\nq1 1 a 0\nq1 0 a 0\n", where="qrels", options=JG,
         pattern=r"3: duplicate judgment for query 'q1', judgment group '0', document 'a' \(first at line 1\)"),
    Case("jg-document-in-two-groups", "accepted", "q1 0 a 1\nq1 1 a 0\nq2 0 c 1\n", options=JG),
    Case("zscores-missing-column", "rejected", zscores="q1 map 0.5 0.1\nq1 P_5 0.5\n", where="zscores",
         pattern=r"2: expected 4 fields 'query_id measure mean stddev'; found 3", options=("-Z",)),
    Case("zscores-mean-abc", "rejected", zscores="q1 map abc 0.1\n", where="zscores",
         pattern=r"1: expected the mean, a finite number; found 'abc'", options=("-Z",)),
    Case("zscores-duplicate", "rejected", zscores="q1 map 0.5 0.1\nq2 map 0 1\nq1 map 0.4 0.1\n", where="zscores",
         pattern=r"3: query 'q1' and measure 'map' given twice \(first at line 1\)", options=("-Z",)),
    Case("zscores-missing-entry", "accepted", zscores="q1 map 0.5 0.1\n", options=("-Z",)),
    Case("zscores-empty", "rejected", zscores="", where="zscores", pattern=r": expected 'query_id measure mean stddev' "
         "lines; found none", options=("-Z",)),
    # Preference judgments (-R prefs): 'query_id group subgroup doc_id rel_level'
    Case("prefs-missing-column", "rejected", "q1 u s a 1\nq1 u s b\n", RUN, r"2: 4 fields; expected 5 fields",
         "qrels", options=("-R", "prefs")),
    Case("prefs-level-abc", "rejected", "q1 u s a 1\nq1 u s b abc\n", RUN, r"2: rel_level must be a number",
         "qrels", options=("-R", "prefs")),
    Case("prefs-level-negative", "rejected", "q1 u s a 1\nq1 u s b -1\n", RUN, r"2: rel_level must be >= 0",
         "qrels", options=("-R", "prefs")),
    Case("prefs-duplicate-line", "rejected", "q1 u s a 1\nq1 u s b 0\nq1 u s a 1\n", RUN,
         r"3: query 'q1', group 'u', subgroup 's', document 'a' again \(first at line 1\)", "qrels",
         options=("-R", "prefs")),
    Case("prefs-zero-and-nonzero", "rejected", "q1 u s1 a 1\nq1 u s1 b 0\nq1 u s2 b 2\nq1 u s2 c 1\n", RUN,
         r"3: document 'b' has rel_level 2 here and 0 at line 2 in the same judgment group", "qrels",
         options=("-R", "prefs")),
    Case("prefs-contradiction", "rejected", "q1 u s1 a 2\nq1 u s1 b 1\nq1 u s2 b 2\nq1 u s2 a 1\n", RUN,
         r"1: document 'a' of query 'q1' is preferred to itself", "qrels", options=("-R", "prefs")),
    Case("prefs-empty", "rejected", "# only a comment\n", RUN, r" no preferences found", "qrels",
         options=("-R", "prefs")),
    Case("qrels-prefs-level-abc", "rejected", "q1 0 a 1\nq1 0 b x\n", RUN, r"2: rel_level must be a number",
         "qrels", options=("-R", "qrels_prefs")),
]


def _write(path: Path, content: str | bytes, compress: bool = False) -> str:
    data = content.encode() if isinstance(content, str) else content
    if compress:
        data = gzip.compress(data)
        data = data[: len(data) // 2]
    path.write_bytes(data)
    return str(path)


def _evaluate(capture, qrels: str, run: str, options: tuple[str, ...] = ()) -> tuple[int, str, str]:
    """Run evaluate; ``capture`` is capsysbinary (stdout may hold the bytes of ids that are not UTF-8)
    or capsys."""
    code = main(["evaluate", "-q", *(() if "-m" in options else ("-m", "official")), *options, qrels, run])
    out, err = capture.readouterr()
    if isinstance(out, bytes):
        out, err = out.decode("utf-8", "surrogateescape"), err.decode("utf-8")
    return code, out, err


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_input_fault(case: Case, tmp_path: Path, capsysbinary) -> None:
    qrels = _write(tmp_path / "qrels", case.qrels)
    run = _write(tmp_path / ("run.gz" if case.gzip_run else "run"), case.run, compress=case.gzip_run)
    zscores = _write(tmp_path / "zscores", case.zscores)
    code, out, err = _evaluate(capsysbinary, qrels, run, (*case.options, zscores) if "-Z" in case.options
                               else case.options)
    assert "Traceback" not in err
    warnings = [line for line in err.splitlines() if line.startswith("retrieval-eval: warning: ")]
    if case.outcome == "rejected":
        path = {"qrels": qrels, "zscores": zscores}.get(case.where, run)
        assert code == 2 and out == ""
        assert re.fullmatch(f"retrieval-eval: error: {re.escape(path)}:?{case.pattern}.*\n", err, re.DOTALL), err
        return
    assert code == 0 and out
    if case.outcome == "warned":
        assert any(re.search(case.pattern, line) for line in warnings), err
    else:
        assert warnings == [], err
    if case.same_output:
        clean = _evaluate(capsysbinary, _write(tmp_path / "clean.qrels", QRELS), _write(tmp_path / "clean.run", RUN))
        assert out == clean[1]


def test_table_and_cases_match() -> None:
    """docs/input-faults.md has one row per case, with the outcome the case checks."""
    rows = re.findall(r"^\| `([a-z0-9.-]+)` \|[^|]*\| \*\*(accepted|warned|rejected)\*\*", DOCS.read_text(), re.MULTILINE)
    assert rows == [(case.id, case.outcome) for case in CASES]


def test_graded_measures_are_not_named_zero_at_a_higher_level(tmp_path: Path, capsys) -> None:
    """With -l 2, nDCG still uses the grades: the warning names AP but not nDCG, which is not 0."""
    qrels = _write(tmp_path / "qrels", "q1 0 a 1\nq1 0 b 0\n")
    run = _write(tmp_path / "run", "q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\n")
    code = main(["evaluate", "-l", "2", "-m", "map", "-m", "ndcg", qrels, run])
    out, err = capsys.readouterr()
    assert code == 0 and out.split() == ["map", "all", "0.0000", "ndcg", "all", "1.0000"]
    assert err == ("retrieval-eval: warning: 1 query has no relevant judgment (relevance >= 2), so map is 0 for it: "
                   "q1\n")
    code = main(["evaluate", "-l", "2", "-m", "ndcg", qrels, run])
    assert code == 0 and capsys.readouterr().err == (
        "retrieval-eval: warning: 1 query has no relevant judgment (relevance >= 2): q1\n")


def test_truncated_gzip_counts_the_lines_read(tmp_path: Path, capsys) -> None:
    """The count in the message is the number of complete lines that were decompressed."""
    data = gzip.compress(RUN.encode() * 2000, mtime=0)
    cut = data[: len(data) // 2]
    readable = zlib.decompressobj(31).decompress(cut)
    run = _write(tmp_path / "run", cut)
    code, out, err = _evaluate(capsys, _write(tmp_path / "qrels", QRELS), run)
    assert code == 2 and out == ""
    lines = readable.count(b"\n")
    assert 0 < lines < 6000 and f"after {lines} complete lines" in err, err


# Faults of the Python API and of what is shown on a terminal: the second table of docs/input-faults.md.
# Each row ``case-id`` is tested by ``test_<case_id>`` below (dashes as underscores).

API_CASES = [
    "duplicates-unknown",
    "non-blocking-stream",
    "bom-split-across-reads",
    "source-wrong-type",
    "text-stream-wrong-encoding",
    "rank-of-5000-digits",
    "g-at-huge-relevance",
    "control-characters-in-ids",
    "gzip-bomb-one-line",
    "gzip-bomb-short-lines",
    "line-length-limit",
    "non-utf8-ids-in-python",
    "text-stream-lone-cr",
    "keys-unknown",
    "save-unknown-suffix",
    "judgment-non-str",
    "runid-or-relstring-in-measures",
    "inspect-unknown-query",
    "diff-no-common-query",
    "plot-without-matplotlib",
    "a-few-very-long-ids",
    "long-id-in-a-table",
    "mistyped-query-among-many-long-ids",
    "monte-carlo-size-too-large",
    "negative-seed",
    "seeded-p-value-per-comparison",
    "empty-table",
    "log-first-row-like-data",
    "log-score-1e400",
    "spark-bad-row",
    "measure-parameter-out-of-domain",
    "readers-api-typed-errors",
    "non-finite-value-refused",
]


def test_api_table_and_tests_match() -> None:
    """The second table of docs/input-faults.md lists API_CASES, and each has its test."""
    rows = re.findall(r"^\| `([a-z0-9.-]+)` \|[^|]*\| \*\*(?:raises|waits|ignored|exact|escaped|streams|kept|refused)\*\*",
                      DOCS.read_text(), re.MULTILINE)
    assert rows == API_CASES
    for case in API_CASES:
        assert callable(globals().get("test_" + case.replace("-", "_"))), case


class _NonBlocking(io.RawIOBase):
    """A non-blocking stream: two readinto calls in three answer None (no data yet), the third one byte."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at, self.calls = data, 0, 0

    def readable(self) -> bool:
        return True

    def readinto(self, view) -> int | None:  # type: ignore[override]
        self.calls += 1
        if self.calls % 3:
            return None
        if self.at >= len(self.data):
            return 0
        view[0] = self.data[self.at]
        self.at += 1
        return 1


def test_duplicates_unknown(tmp_path: Path) -> None:
    """An unknown duplicates= value raises, naming the option and its values, in every entry point."""
    qrels, run = _write(tmp_path / "qrels", QRELS), _write(tmp_path / "run", RUN + "q1 Q0 a 3 0.5 r\n")
    log = _write(tmp_path / "log.tsv", "group\titem\tscore\tlabel\nq1\ta\t1.0\t1\nq1\ta\t0.5\t1\n")
    message = r"'duplicates' must be 'error' or 'first'; got 'bogus'"
    calls = [
        lambda: SetEvaluator.from_trec(qrels, run, duplicates="bogus"),
        lambda: SetEvaluator.from_columns(read_qrels_columns(qrels), read_run_columns(run), duplicates="bogus"),
        lambda: SetEvaluator.from_log(log, duplicates="bogus"),
        lambda: build_batch(read_qrels_columns(qrels), read_run_columns(run), duplicates="bogus"),
    ]
    for call in calls:
        with pytest.raises(InputFormatError, match=message):
            call()


def test_non_blocking_stream() -> None:
    """A stream answering None (no data yet) is read to its end, not taken as ended."""
    run = read_run_columns(_NonBlocking(RUN.encode()))
    assert run.doc_ids.tolist() == [b"a", b"b", b"c"]
    assert read_run_columns(_NonBlocking(gzip.compress(RUN.encode(), mtime=0))).doc_ids.tolist() == [b"a", b"b", b"c"]
    assert read_qrels_columns(io.BufferedReader(_NonBlocking(QRELS.encode()), 1)).query_ids.tolist() == [
        b"q1", b"q1", b"q2"]


def test_bom_split_across_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A byte order mark arriving one byte per read is still removed, with the warning."""
    data = ("\ufeff" + QRELS).encode()

    @contextlib.contextmanager
    def one_byte_at_a_time(source):
        position = [0]

        def fill(view) -> int:
            if position[0] >= len(data):
                return 0
            view[0] = data[position[0]]
            position[0] += 1
            return 1

        yield fill, "<one byte at a time>"

    monkeypatch.setattr(_source, "_open_binary", one_byte_at_a_time)
    with pytest.warns(InputWarning, match="<one byte at a time>:1: UTF-8 byte order mark"):
        qrels = read_qrels_columns(io.BytesIO(data))
    assert qrels.query_ids.tolist() == [b"q1", b"q1", b"q2"]


@pytest.mark.parametrize("source", [None, 5, ["a"], 1.5], ids=["None", "int", "list", "float"])
def test_source_wrong_type(source: object) -> None:
    """A source that is neither a path nor a file raises InputTypeError naming what was given."""
    for read in (read_run_columns, read_qrels_columns, lambda s: list(read_run(s)), SetEvaluator.from_log):
        with pytest.raises(InputTypeError, match=rf"a path \(str, bytes or os.PathLike\) or a file open for "
                                                  rf"reading .*; got {type(source).__name__} "):
            read(source)


def test_source_wrong_type_bytes_path_is_a_path(tmp_path: Path) -> None:
    """A bytes path is read as a path."""
    path = _write(tmp_path / "run", RUN)
    run = read_run_columns(os.fsencode(path))
    assert run.origin == path and len(run.doc_ids) == 3


def test_text_stream_wrong_encoding(tmp_path: Path) -> None:
    """A text stream that cannot be decoded raises TrecFormatError naming the source and the encoding."""
    path = _write(tmp_path / "latin1.run", (RUN + "q2 Q0 caf\xe9 2 0.5 r\n").encode("latin-1"))
    message = r"cannot read after \d+ complete lines: the text stream cannot be decoded with utf-8 encoding"
    with open(path, encoding="utf-8") as stream, pytest.raises(TrecFormatError, match=rf"^{re.escape(path)}: {message}"):
        read_run_columns(stream)
    raw = io.TextIOWrapper(io.BytesIO(Path(path).read_bytes()), encoding="utf-8")
    with pytest.raises(TrecFormatError, match=rf"^<stream>: {message}"):
        read_run_columns(raw)


def test_rank_of_5000_digits(tmp_path: Path) -> None:
    """A rank too long for an integer is the usual path:line error, with the rank order."""
    path = _write(tmp_path / "run", RUN + "q2 Q0 d " + "9" * 5000 + " 0.5 r\n")
    message = rf"^{re.escape(path)}:4: rank must be an integer"
    with pytest.raises(TrecFormatError, match=message):
        read_run_columns(path, with_ranks=True)
    with pytest.raises(TrecFormatError, match=message):
        SetEvaluator.from_trec(io.StringIO(QRELS), path, order="rank")


def test_g_at_huge_relevance() -> None:
    """G does not cancel at relevance 2**63 - 1: a perfect ranking gives 1, like nDCG, without a warning."""
    top = 2**63 - 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        perfect = SetEvaluator.from_trec(io.StringIO(f"q1 0 a {top}\n"), io.StringIO(RUN))
        assert perfect.per_query("G") == {"q1": 1.0} and perfect.per_query("nDCG") == {"q1": 1.0}
        # Ideal [top, top]: a at rank 1 costs nothing; b at rank 3 has one unit of excess cost.
        gap = SetEvaluator.from_trec(io.StringIO(f"q1 0 a {top}\nq1 0 b {top}\n"),
                                     io.StringIO("q1 Q0 a 1 3 r\nq1 Q0 x 2 2 r\nq1 Q0 b 3 1 r\n"))
        assert gap.per_query("G")["q1"] == pytest.approx((1 + 1 / math.log2(3)) / 2)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_control_characters_in_ids(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids with control characters are escaped on stderr, and on stdout only when it is a terminal."""
    qrels = _write(tmp_path / "qrels", "q\x1b]0;owned\x07 0 a 1\n")
    run = _write(tmp_path / "run", "q\x1b]0;owned\x07 Q0 a 1 1.0 r\nq\x1b[2J Q0 b 1 1.0 r\n")
    code = main(["evaluate", "-q", "-m", "map", qrels, run])
    out, err = capsys.readouterr()
    assert code == 0
    assert "\x1b" not in err and "q\\x1b[2J" in err, err
    assert "map                   \tq\x1b]0;owned\x07\t1.0000\n" in out  # a pipe or file: the exact bytes
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["evaluate", "-q", "-m", "map", qrels, run]) == 0
    shown = terminal.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown
    assert "map                   \tq\\x1b]0;owned\\x07\t1.0000\n" in shown
    # An error quoting a line with an id is escaped too.
    bad = _write(tmp_path / "bad.run", "q\x1b[2J Q0 a 1 abc r\n")
    assert main(["evaluate", "-m", "map", qrels, bad]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "q\\x1b[2J" in err, err


# Lines without end, ids equal in display, records run together (issue 15 B.2, B.9, B.10).


def _one_line_gzip_bomb(line_bytes: int) -> bytes:
    """A small gzip file: one run line, then ``line_bytes`` bytes of 'x' without a newline (members of
    64 MiB, each a few dozen KiB compressed: gzip readers read concatenated members as one stream)."""
    member = gzip.compress(b"x" * (64 << 20), mtime=0)
    return gzip.compress(b"q1 Q0 a 1 1 r\n", mtime=0) + member * (line_bytes // (64 << 20))


def test_gzip_bomb_one_line(tmp_path: Path) -> None:
    """A 1 MB .gz expanding to one line of 1 GiB stops at the limit, fast and in little memory."""
    path = _write(tmp_path / "bomb.run", _one_line_gzip_bomb(1 << 30))
    assert os.path.getsize(path) < 2 << 20
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(TrecFormatError, match=rf"^{re.escape(path)}:2: line longer than 1048576 bytes; "
                                                  r"expected lines of at most 1048576 bytes .*; got a line starting "
                                                  r"'xxxx.*\.\.\.'$"):
            read_run_columns(path)
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < 2.0, elapsed  # a few milliseconds here; it ran for minutes before
    assert peak < 64 << 20, peak  # a few blocks of 1 MiB, not the line


@pytest.mark.parametrize("pool_from", [0, 1 << 40], ids=["pool", "calling-thread"])
def test_gzip_bomb_short_lines(monkeypatch: pytest.MonkeyPatch, pool_from: int) -> None:
    """A gzip bomb of many short (comment) lines is read in bounded memory: 4x the data, same peak,
    on the thread pool and on the calling thread."""
    monkeypatch.setattr(_parse, "_threads", lambda: 3)
    monkeypatch.setattr(_parse, "_POOL_FROM", pool_from)
    member = gzip.compress(b"# c\n" * (4 << 20), mtime=0)  # 16 MiB of comment lines
    last = gzip.compress(RUN.encode(), mtime=0)
    peaks = []
    for copies in (1, 4):
        tracemalloc.start()
        try:
            run = read_run_columns(io.BytesIO(member * copies + last))
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert run.doc_ids.tolist() == [b"a", b"b", b"c"] and run.lines[0] == copies * (4 << 20) + 1
    assert peaks[1] < 1.5 * peaks[0] + (8 << 20), peaks


def test_line_length_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of exactly the limit passes and one byte more fails, wherever it lies in a block; the
    environment variable moves the limit, and a bad value of it is an input error."""
    limit = _source.MAX_LINE_BYTES
    assert limit == 1 << 20

    def line(length: int) -> str:  # a run line of ``length`` bytes, long in its ignored columns (not its ids)
        head = "q2 Q0 d 2 0.5 r "
        return head + "x" * (length - len(head)) + "\n"

    short = "q1 Q0 a 1 2.0 r\n"
    for before in (0, 3, 200_000):  # the long line first, after a few lines, or deep in a block
        fits = _write(tmp_path / "fits.run", short * before + line(limit) + line(limit - 1) + RUN)
        assert len(read_run_columns(fits).doc_ids) == before + 2 + 3
        too_long = _write(tmp_path / "long.run", short * before + line(limit) + line(limit + 1) + RUN)
        with pytest.raises(TrecFormatError, match=rf"^{re.escape(too_long)}:{before + 2}: line longer than "
                                                  rf"{limit} bytes"):
            read_run_columns(too_long)
    unfinished = _write(tmp_path / "unfinished.run", short + "q2 Q0 " + "d" * (3 * limit))  # no newline at all
    with pytest.raises(TrecFormatError, match=r":2: line longer than 1048576 bytes"):
        read_run_columns(unfinished)
    monkeypatch.setenv("RETRIEVAL_EVAL_MAX_LINE_BYTES", "13")
    with pytest.raises(TrecFormatError, match=r"^<stream>:3: line longer than 13 bytes"):
        read_run_columns(io.BytesIO(b"q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\nq1 Q0 bb 2 1 r\n"))
    monkeypatch.setenv("RETRIEVAL_EVAL_MAX_LINE_BYTES", "2000000")
    assert len(read_run_columns(too_long).doc_ids) == 200_000 + 2 + 3
    for bad in ("0", "-5", "1e6", "lots"):
        monkeypatch.setenv("RETRIEVAL_EVAL_MAX_LINE_BYTES", bad)
        with pytest.raises(InputFormatError, match=rf"RETRIEVAL_EVAL_MAX_LINE_BYTES must be a positive number of "
                                                   rf"bytes; got '{bad}'"):
            read_run_columns(io.BytesIO(RUN.encode()))


def test_ids_equal_in_display_are_kept_apart(tmp_path: Path, capsysbinary) -> None:
    """The issue's repro: the byte id q\\xe9 and the text id q\\xe9 are two queries everywhere."""
    qrels = _write(tmp_path / "q", b"q\xe9 0 a 1\nq\\xe9 0 b 1\n")
    run = _write(tmp_path / "r", b"q\xe9 Q0 a 1 1 r\nq\\xe9 Q0 x 1 1 r\n")
    assert main(["evaluate", "-q", "--format", "json", "-m", "P.1", "--no-unjudged-note", qrels, run]) == 0
    out, err = capsysbinary.readouterr()
    assert err == b""
    document = json.loads(out)  # valid JSON: the byte is written as the escape \udce9
    assert b'"q\\udce9"' in out and b'"q\\\\xe9"' in out
    assert document["queries"]["evaluated"] == 2
    assert document["per_query"] == {"q\\xe9": {"P_1": 0.0}, "q\udce9": {"P_1": 1.0}}
    assert document["aggregate"] == {"P_1": 0.5}
    assert main(["evaluate", "-q", "-m", "P.1", qrels, run]) == 0
    out = capsysbinary.readouterr().out
    # The trec format writes each id as it was read, as trec_eval does.
    assert out.splitlines() == [b"P_1                   \tq\\xe9\t0.0000", b"P_1                   \tq\xe9\t1.0000",
                                b"P_1                   \tall\t0.5000"]
    # So does the run id, as trec_eval prints it.
    named = _write(tmp_path / "named", b"q\xe9 Q0 a 1 1 r\xe9\n")
    assert main(["evaluate", qrels, named]) == 0
    assert capsysbinary.readouterr().out.startswith(b"runid                 \tall\tr\xe9\n")
    results = SetEvaluator.from_trec(qrels, run)
    assert results.query_ids == ["q\\xe9", "q\udce9"]
    assert results["q\udce9"].score("P@1") == 1.0 and results["q\\xe9"].score("P@1") == 0.0
    assert [q.encode("utf-8", "surrogateescape") for q in results.query_ids] == [b"q\\xe9", b"q\xe9"]
    assert [qid for qid, _ in read_qrels(qrels)] == ["q\udce9", "q\\xe9"]
    assert [doc.doc_id for _, doc in read_run(run)] == ["a", "x"]


def test_non_utf8_ids_in_python(tmp_path: Path) -> None:
    """A str holding the bytes of a non-UTF-8 id (surrogateescape) is a valid id and finds that id's
    rows; a surrogate that stands for no byte, or bytes that are UTF-8, stays an input error."""
    qrels = _write(tmp_path / "q", b"q\xe9 0 caf\xe9 1\nq\xe9 0 b 1\n")
    run = _write(tmp_path / "r", b"q\xe9 Q0 caf\xe9 1 2 r\nq\xe9 Q0 z 2 1 r\n")
    from_file = SetEvaluator.from_trec(qrels, run)
    in_memory = SetEvaluator.from_dict({"q\udce9": {"caf\udce9": 1, "b": 1}}, {"q\udce9": {"caf\udce9": 2.0, "z": 1.0}})
    assert from_file.per_query("AP") == in_memory.per_query("AP") == {"q\udce9": 0.5}
    assert [d.doc_id for d in from_file["q\udce9"].relevant_retrieved_documents()] == ["caf\udce9"]
    assert SetEvaluator([from_file["q\udce9"]]).per_query("AP") == {"q\udce9": 0.5}
    # Written back, such ids are their exact bytes again.
    write_qrels(tmp_path / "copy.qrels", {qid: {d.doc_id: d.relevance for d in from_file[qid].judgments()}
                                          for qid in from_file})
    assert (tmp_path / "copy.qrels").read_bytes() == b"q\xe9 0 b 1\nq\xe9 0 caf\xe9 1\n"
    write_run(tmp_path / "copy.run", {"q\udce9": dict.fromkeys(["caf\udce9", "caf\udce8"], 2.0)})
    assert (tmp_path / "copy.run").read_bytes() == b"q\xe9 Q0 caf\xe9 1 2.0 run\nq\xe9 Q0 caf\xe8 2 2.0 run\n"
    for bad in ("\ud800", "\udcc3\udca9"):  # not a byte; the UTF-8 bytes of 'é' (whose id is 'é')
        with pytest.raises(InputFormatError, match="no lone surrogate"):
            SetEvaluator.from_dict({bad: {"a": 1}}, {bad: {"a": 1.0}})


def test_text_stream_lone_cr(tmp_path: Path) -> None:
    """A file of lone \\r line endings is refused whether given as a path, a binary file or a text file
    (universal newlines used to split the records a path reads as one line: MAP 1.0 against 0.5)."""
    path = _write(tmp_path / "mac.run", RUN.replace("\n", "\r"))
    for options in (None, {"mode": "rb"}, {}, {"newline": ""}):  # the path; a binary, text, raw text file
        with contextlib.ExitStack() as stack:
            given = path if options is None else stack.enter_context(open(path, **options))
            with pytest.raises(TrecFormatError, match=rf"^{re.escape(path)}:? ?.*carriage return \(\\r\)"):
                SetEvaluator.from_trec(io.StringIO(QRELS), given)
    with open(path) as text, pytest.raises(TrecFormatError, match=r"cannot read after 0 complete lines: a line ends "
                                                                   r"in a carriage return \(\\r\) alone"):
        read_run_columns(text)
    # CRLF is no lone \r: the same numbers from a path and from a text file.
    crlf = _write(tmp_path / "crlf.run", RUN.replace("\n", "\r\n"))
    with open(crlf) as text:
        assert SetEvaluator.from_trec(io.StringIO(QRELS), text).mean("AP") == SetEvaluator.from_trec(
            io.StringIO(QRELS), crlf).mean("AP") == 1.0


def test_newline_lost_is_warned_per_line() -> None:
    """A Q0 column after the run id is warned about once per block, naming the first line; extra columns
    that do not hold Q0 (or a Q0 in the run id itself) are not."""
    glued = RUN.replace(" r\nq1", " r q1") + "q3 Q0 d 1 1.0 r more\nq4 Q0 e 1 1.0 Q0\n"
    with pytest.warns(InputWarning, match=r"^<stream>:1: the columns after the run id \(ignored\) hold 'Q0' again"):
        run = read_run_columns(io.BytesIO(glued.encode()))
    assert run.doc_ids.tolist() == [b"a", b"c", b"d", b"e"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_run_columns(io.BytesIO(b"q1 Q0 a 1 1 r x Q1\nq1 0 b 2 1 r 0 Q0\n"))  # no Q0 to repeat on line 2
# ------------------------------------------------------------------ issue 11's entry points
def _sample(tmp_path: Path) -> SetEvaluator:
    return SetEvaluator.from_trec(io.BytesIO(QRELS.encode()), io.BytesIO(RUN.encode()))


@pytest.mark.parametrize("method", ["evaluate", "to_dataframe"])
def test_keys_unknown(tmp_path: Path, method: str) -> None:
    """keys= other than 'canonical' or 'trec': a str is a format error, another type a type error."""
    if method == "to_dataframe":
        pytest.importorskip("pandas")
    call = getattr(_sample(tmp_path), method)
    with pytest.raises(InputFormatError, match=rf"^{method}: 'keys' must be one of 'canonical', 'trec'; got 'pytrec'$"):
        call(["map"], keys="pytrec")
    for wrong in (None, ["trec"]):
        with pytest.raises(InputTypeError, match=rf"^{method}: 'keys' must be a str"):
            call(["map"], keys=wrong)


def test_save_unknown_suffix(tmp_path: Path) -> None:
    """plotting.save refuses a suffix it cannot write (and writes nothing), a path that is not one, a non-Figure."""
    pytest.importorskip("matplotlib")
    from retrieval_eval import plotting

    figure = plotting.pr_curves({"r": _sample(tmp_path)})
    for name, shown in (("x.jpg", ".jpg"), ("x", "a file without a suffix")):
        with pytest.raises(InputFormatError, match=rf"cannot save a plot as {shown}; expected one of .png, .svg, .pdf$"):
            plotting.save(figure, tmp_path / name)
        assert not (tmp_path / name).exists()
    with pytest.raises(InputTypeError, match="'path' must be a str or os.PathLike; got NoneType"):
        plotting.save(figure, None)  # type: ignore[arg-type]
    with pytest.raises(InputTypeError, match="'figure' must be a matplotlib Figure; got str"):
        plotting.save("figure", tmp_path / "x.png")  # type: ignore[arg-type]


@pytest.mark.parametrize("doc_id", [5, None, b"a"], ids=["int", "None", "bytes"])
def test_judgment_non_str(tmp_path: Path, doc_id: object) -> None:
    query = _sample(tmp_path)["q1"]
    assert query.judgment("a") == 1 and query.judgment("zzz") is None
    with pytest.raises(InputTypeError, match=rf"^'doc_id' must be a str; got {type(doc_id).__name__} "):
        query.judgment(doc_id)  # type: ignore[arg-type]


def test_runid_or_relstring_in_measures(tmp_path: Path, capsys) -> None:
    """runid is no measure and relstring has no number: named alone they raise (API) or are usage errors
    (inspect, diff, plot diff); in a group (all_trec, official) relstring and the summary-only ones are left out."""
    from retrieval_eval.measures import MeasureError, UnknownMeasureError

    evaluation = _sample(tmp_path)
    for call in (evaluation.evaluate, evaluation.to_dataframe):
        with pytest.raises(UnknownMeasureError, match="^'runid' is not a measure"):
            call(["map", "runid"])
        with pytest.raises(MeasureError, match="is a text measure: it has no value"):
            call(["relstring"])
    assert "RelString" not in evaluation.evaluate(["all_trec"])["q1"]
    qrels, run = _write(tmp_path / "qrels", QRELS), _write(tmp_path / "run", RUN)
    for argv in (["inspect", qrels, run], ["inspect", qrels, run, "--query", "q1"], ["diff", qrels, run, run],
                 ["plot", "diff", qrels, run, run, "-o", str(tmp_path / "x.png")]):
        for measure, said in (("runid", "-m runid: the run's name is not a measure"),
                              ("relstring", "-m relstring is a text measure"),
                              ("num_q", "-m num_q is a summary over all queries")):
            if measure == "relstring" and "--query" in argv:
                continue  # inspect --query shows a query's relstring
            assert main([*argv, "-m", measure]) == 2
            err = capsys.readouterr().err
            assert said in err and err.count("\n") == 1 and "Traceback" not in err, (argv, err)
    # A group keeps its per-query measures: diff -m official compares map, P_5 ... and skips num_q, gm_map.
    assert main(["diff", "--quiet", "--format", "csv", qrels, run, run, "-m", "official"]) == 0
    measures = {line.split(",")[0] for line in capsys.readouterr().out.splitlines()[1:]}
    assert {"map", "P_5", "bpref"} <= measures and not measures & {"num_q", "gm_map", "runid"}


def test_inspect_unknown_query(tmp_path: Path, capsys) -> None:
    """A query that is not evaluated: one line saying why, with a suggestion when an id is close."""
    qrels = _write(tmp_path / "qrels", QRELS + "q10 0 d 1\n")
    run = _write(tmp_path / "run", RUN + "q3 Q0 d 1 1.0 r\n")
    cases = [
        (["--query", "q11"], "no query 'q11' among the 3 evaluated queries of run (did you mean 'q1'?)"),
        (["--query", "q3"], "query 'q3' of run has no judgments in the qrels, so it is not evaluated"),
        (["--query", "q10", "--skip-missing"],
         "query 'q10' is judged but run has no results for it, and queries without results are left out"),
    ]
    for options, message in cases:
        for command in (["inspect", qrels, run], ["diff", qrels, run, run, "--names", "run,other"]):
            assert main([*command, "--quiet", *options]) == 2
            err = capsys.readouterr().err
            assert err.startswith("retrieval-eval: error: ") and message in err and err.count("\n") == 1, err


def test_diff_no_common_query(tmp_path: Path, capsys) -> None:
    """With --skip-missing two runs may share no evaluated query: nothing to compare is an error, not zeros."""
    qrels = _write(tmp_path / "qrels", QRELS)
    a = _write(tmp_path / "a.run", "q1 Q0 a 1 2.0 r\n")
    b = _write(tmp_path / "b.run", "q2 Q0 c 1 1.0 r\n")
    for argv in (["diff", qrels, a, b], ["plot", "diff", qrels, a, b, "-o", str(tmp_path / "x.png")]):
        if argv[0] == "plot":
            pytest.importorskip("matplotlib")
        assert main([*argv, "--skip-missing", "--quiet"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == ("retrieval-eval: error: a.run and b.run have no evaluated query in common, so "
                                     "there is nothing to compare; expected shared queries; got q1 and q2\n")
    from retrieval_eval import RetrievalEvalError
    from retrieval_eval.analysis.inspection import diff_runs
    from retrieval_eval.measures import parse

    # One check, one message for the CLI, the API and the plot (they used to word it three ways).
    runs = [SetEvaluator.from_trec(qrels, path, complete=False) for path in (a, b)]
    with pytest.raises(RetrievalEvalError) as raised:
        diff_runs(runs[0], runs[1], parse("AP"))
    assert str(raised.value) == ("A and B have no evaluated query in common, so there is nothing to compare; "
                                 "expected shared queries; got q1 and q2")
    with pytest.raises(RetrievalEvalError) as raised:
        diff_runs(runs[0], runs[1], parse("AP"), names=("base", "new"))
    assert str(raised.value).startswith("base and new have no evaluated query in common, so there is nothing")
    if importlib.util.find_spec("matplotlib") is not None:
        from retrieval_eval.report.plotting import diff_bars

        with pytest.raises(RetrievalEvalError) as plotted:
            diff_bars(runs[0], runs[1], "AP", ("base", "new"))
        assert str(plotted.value) == str(raised.value)


def test_plot_without_matplotlib(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without matplotlib, plot says so in one line before reading anything (the run named does not even
    exist), and the plotting functions raise MissingExtraError."""
    from retrieval_eval import plotting
    from retrieval_eval.model import MissingExtraError

    evaluation = _sample(tmp_path)
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    qrels = _write(tmp_path / "qrels", QRELS)
    for kind in ("pr", "diff", "ranks"):
        runs = [str(tmp_path / "no-such.run")] * (2 if kind == "diff" else 1)
        assert main(["plot", kind, qrels, *runs, "-o", str(tmp_path / "x.png")]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == "retrieval-eval: error: plots need matplotlib: pip install 'retrieval-evaluator[plot]'\n"
    for draw in (lambda: plotting.pr_curves({"r": evaluation}), lambda: plotting.first_relevant_ranks({"r": evaluation}),
                 lambda: plotting.diff_bars(evaluation, evaluation, "AP"), plotting.require_matplotlib):
        with pytest.raises(MissingExtraError, match=r"retrieval-evaluator\[plot\]"):
            draw()


def test_a_few_very_long_ids(tmp_path: Path) -> None:
    """A run where 1 document id in 1,000 is 5,000 bytes long: the memory of reading it grows with the
    bytes of the file (a fixed-width column would grow by 5,000 bytes a line), and it is evaluated."""
    peaks, sizes = [], []
    for n in (50_000, 200_000):
        lines = [f"q{i // 1000} Q0 {'L' * 4990 if i % 1000 == 7 else 'd'}{i} {i % 1000 + 1} {-i} r\n"
                 for i in range(n)]
        run = _write(tmp_path / f"run{n}", "".join(lines))
        sizes.append(Path(run).stat().st_size)
        tracemalloc.start()
        try:
            columns = read_run_columns(run)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert columns.doc_ids.dtype == object and columns.doc_ids[7] == b"L" * 4990 + b"7"
    # About 5 bytes traced per byte read (objects of the ids, the other columns, blocks being parsed);
    # a fixed-width column alone would take over 100.
    assert peaks[1] - peaks[0] < 8 * (sizes[1] - sizes[0]), (peaks, sizes)
    qrels = _write(tmp_path / "qrels", f"q0 0 {'L' * 4990}7 1\nq0 0 d8 1\n")
    assert SetEvaluator.from_trec(qrels, run)["q0"].precision(10) == 0.2


# Issue 28: the table readers, compare and the log reader under hostile input.


def test_long_id_in_a_table(tmp_path: Path) -> None:
    """One 16 KB document id among 50,000 short ones, in an Arrow table, a dictionary-encoded column,
    a Parquet run and log, and a text log: the column holds bytes objects, so memory follows the
    input's bytes (a fixed-width column, as wide as the longest id, took 50,000 x 16 KB = 800 MB), and
    the values are those of the same run read from a TREC file."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from retrieval_eval.io.formats import read_log_columns
    from retrieval_eval.io.frames import run_from_table

    n, long_id = 50_000, "L" * 16_384
    doc_ids = [long_id if i == 7 else f"d{i}" for i in range(n)]
    query_ids = [f"q{i // 1000}" for i in range(n)]
    scores = [float(-(i % 1000)) for i in range(n)]
    run_table = pa.table({"query_id": query_ids, "doc_id": doc_ids, "score": scores})
    peaks = {}
    for name, table in (("short", run_table.set_column(1, "doc_id", pa.array([f"d{i}" for i in range(n)]))),
                        ("long", run_table)):
        tracemalloc.start()
        try:
            columns = run_from_table(table)
            peaks[name] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert columns.doc_ids.dtype == object and columns.doc_ids[7] == long_id.encode() and columns.doc_ids[8] == b"d8"
    # About 100 bytes a row traced either way; one long id adds its own bytes, not n times them.
    assert peaks["long"] < 1.5 * peaks["short"] + 10 * len(long_id), peaks
    # A dictionary-encoded column (Parquet's, pandas' categoricals) is gathered as objects too.
    encoded = run_from_table(run_table.set_column(1, "doc_id", pa.array(doc_ids).dictionary_encode()))
    assert encoded.doc_ids.dtype == object and encoded.doc_ids.tolist() == columns.doc_ids.tolist()
    # The same values as the TREC file of the same run (the long id judged relevant).
    qrels_rows = [("q0", long_id, 1), ("q0", "d3", 1), ("q1", "d1001", 1)]
    run_path = _write(tmp_path / "run", "".join(f"{q} Q0 {d} 1 {s} r\n" for q, d, s in zip(query_ids, doc_ids, scores)))
    qrels_path = _write(tmp_path / "qrels", "".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels_rows))
    qrels_table = pa.table(dict(zip(("query_id", "doc_id", "relevance"), map(list, zip(*qrels_rows)))))
    expected = SetEvaluator.from_trec(qrels_path, run_path).per_query("AP")
    assert SetEvaluator.from_arrow(qrels_table, run_table).per_query("AP") == expected
    pq.write_table(qrels_table, tmp_path / "qrels.parquet")
    pq.write_table(run_table, tmp_path / "run.parquet")
    assert SetEvaluator.from_parquet(tmp_path / "qrels.parquet", tmp_path / "run.parquet").per_query("AP") == expected
    # Logs, Parquet and text: the item column alike.
    log = pa.table({"group": query_ids, "item": doc_ids, "score": scores, "label": [int(i % 50 == 7) for i in range(n)]})
    pq.write_table(log, tmp_path / "log.parquet")
    text_log = _write(tmp_path / "log.tsv", "".join(f"{g}\t{i}\t{s}\t{c}\n" for g, i, s, c in zip(*log.to_pydict().values())))
    for source in (tmp_path / "log.parquet", text_log):
        _qrels, run = read_log_columns(source)
        assert run.doc_ids.dtype == object and run.doc_ids[7] == long_id.encode(), source
    assert (SetEvaluator.from_log(tmp_path / "log.parquet").per_query("AP")
            == SetEvaluator.from_log(text_log).per_query("AP"))


def test_mistyped_query_among_many_long_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mistyped --query among 100,000 ids of 300 characters: the suggestion compares the query with a
    bounded number of ids (those sharing the longest prefix or suffix), not with every one (a minute)."""
    import difflib
    import random

    from retrieval_eval.analysis.inspection import find_query

    rng = random.Random(28)
    ids = ["".join(rng.choices("abcdefghij", k=300)) for _ in range(100_000)]
    pa = pytest.importorskip("pyarrow")
    table = {"query_id": ids, "doc_id": ["d"] * len(ids)}
    results = SetEvaluator.from_arrow(pa.table({**table, "relevance": [1] * len(ids)}),
                                      pa.table({**table, "score": [1.0] * len(ids)}))
    compared = []

    class Counting(difflib.SequenceMatcher):  # type: ignore[type-arg]
        def set_seq1(self, a) -> None:
            compared.append(a)
            super().set_seq1(a)

    monkeypatch.setattr(difflib, "SequenceMatcher", Counting)
    target = ids[4321]
    for typo in (target[:150] + "X" + target[151:], "X" + target[1:], target[:-1] + "X"):
        compared.clear()
        start = time.perf_counter()
        with pytest.raises(RetrievalEvalError) as raised:
            find_query(results, typo, "run")
        assert time.perf_counter() - start < 10  # the whole search (it took about 60 s)
        assert f"(did you mean {target!r}?)" in str(raised.value)
        assert len(compared) <= 64, len(compared)  # it compared with all 100,000


def test_monte_carlo_size_too_large(tmp_path: Path, capsys) -> None:
    """--permutations and --samples above 1,000,000 are refused before any file is read (1e12 tried to
    allocate 7 TiB; 2**30 enumerated as many sign patterns for 45 s); the Python functions raise."""
    from retrieval_eval import compare
    from retrieval_eval.analysis.stats import MAX_PERMUTATIONS, MAX_SAMPLES, paired_test, tukey_hsd

    missing = [str(tmp_path / "no-such-qrels"), str(tmp_path / "a.run"), str(tmp_path / "b.run")]
    for option, test, value in (("--permutations", "permutation", 10**12), ("--permutations", "tukey", 10**12),
                                ("--samples", "bootstrap", 10**12), ("--permutations", "permutation", 2**30)):
        start = time.perf_counter()
        assert main(["compare", *missing, "--test", test, option, str(value)]) == 2
        out, err = capsys.readouterr()
        name = option.lstrip("-")
        assert out == "" and err == (f"retrieval-eval: error: '{name}' must be a positive integer of at most "
                                     f"1,000,000 (memory and time grow with it); got {value:,}.\n"), err
        assert time.perf_counter() - start < 5
    d = np.linspace(0.01, 0.3, 30)
    for call in (lambda: paired_test(np.zeros(30), d, "permutation", permutations=2**30),
                 lambda: paired_test(np.zeros(30), d, "bootstrap", samples=MAX_SAMPLES + 1),
                 lambda: tukey_hsd([d, d], permutations=MAX_PERMUTATIONS + 1),
                 lambda: compare(None, {"a": None, "b": None}, permutations=10**30)):
        with pytest.raises(RetrievalEvalError, match="must be a positive integer of at most 1,000,000"):
            call()
    # At the limit: 30 queries are sampled, not enumerated (2**30 > 1,000,000), in bounded time.
    start = time.perf_counter()
    p = paired_test(np.zeros(30), d - 0.15, "permutation", permutations=MAX_PERMUTATIONS, seed=0).p_value
    assert p * (MAX_PERMUTATIONS + 1) == pytest.approx(round(p * (MAX_PERMUTATIONS + 1)))  # (b + 1) / (B + 1)
    assert time.perf_counter() - start < 30


def test_negative_seed(tmp_path: Path, capsys) -> None:
    """--seed -1 is refused (exit 2, one line, before any file is read), for every test; it was a traceback."""
    from retrieval_eval import compare
    from retrieval_eval.analysis.stats import paired_test, tukey_hsd

    qrels = _write(tmp_path / "qrels", QRELS)
    runs = [_write(tmp_path / "a.run", RUN), _write(tmp_path / "b.run", RUN.replace("2.0", "0.5"))]
    for test in ("t", "permutation", "bootstrap", "tukey"):
        assert main(["compare", qrels, *runs, "--test", test, "--seed", "-1"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == "retrieval-eval: error: 'seed' must be an integer >= 0 or None; got -1.\n", err
    for call in (lambda: paired_test([0.1, 0.2], [0.3, 0.1], "t", seed=-1), lambda: tukey_hsd([[0.1], [0.2]], seed=-1),
                 lambda: compare(qrels, {"a": runs[0], "b": runs[1]}, seed=-1),
                 lambda: paired_test([0.1, 0.2], [0.3, 0.1], "permutation", seed="1")):
        with pytest.raises(RetrievalEvalError, match=r"'seed' must be an integer >= 0 or None"):
            call()
    assert main(["compare", qrels, *runs, "--test", "permutation", "--seed", "0"]) == 0


def test_seeded_p_value_per_comparison() -> None:
    """With a seed, a comparison's p-value is the same whatever else is compared: other measures before
    it, other runs, another order (it moved from 0.0650 to 0.0606 when P@10 was added)."""
    from retrieval_eval import compare

    rng = np.random.default_rng(28)
    qrels = {f"q{i}": {f"d{j}": int(rng.random() < 0.3) for j in range(20)} for i in range(40)}
    runs = {name: SetEvaluator.from_dict(qrels, {q: {f"d{j}": float(rng.random() + shift * qrels[q][f"d{j}"])
                                                     for j in range(20)} for q in qrels})
            for name, shift in (("base", 0.0), ("new", 0.15), ("other", 0.3))}

    def p_values(measures: list[str], names: list[str], test: str) -> dict[tuple[str, str, str], float]:
        result = compare(None, {n: runs[n] for n in names}, measures, test=test, seed=42, permutations=2000,
                         samples=2000, all_pairs=True)
        return {(c.measure, c.baseline, c.run): c.p_value for c in result.comparisons}

    for test in ("permutation", "bootstrap"):
        alone = p_values(["AP"], ["base", "new"], test)
        assert 0 < alone["AP", "base", "new"] < 1
        for measures, names in ((["P@10", "AP"], ["base", "new"]), (["nDCG@10", "AP", "RR"], ["base", "new", "other"])):
            assert p_values(measures, names, test)["AP", "base", "new"] == alone["AP", "base", "new"], (test, measures)
    tukey = p_values(["AP"], ["base", "new", "other"], "tukey")
    assert p_values(["P@10", "AP"], ["base", "new", "other"], "tukey")["AP", "base", "new"] == tukey["AP", "base", "new"]


def test_empty_table() -> None:
    """An Arrow table or DataFrame without rows is refused, as an empty file (text or Parquet) is,
    with the same words; it used to be evaluated as 0.0."""
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    from retrieval_eval.io.frames import run_from_table

    qrels = pa.table({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
    run = pa.table({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]})
    judged = "qrels table: no judgments found; expected rows with columns query_id, doc_id, relevance; got no rows"
    ranked = "run table: no results found; expected rows with columns query_id, doc_id, score; got no rows"
    for build in (SetEvaluator.from_arrow, SetEvaluator.from_dataframe):
        with pytest.raises(InputFormatError) as raised:
            build(qrels.slice(0, 0), run)
        assert str(raised.value) == judged
        with pytest.raises(InputFormatError) as raised:
            build(qrels, run.slice(0, 0))
        assert str(raised.value) == ranked
    empty = pd.DataFrame({"query_id": pd.Series([], dtype=str), "doc_id": pd.Series([], dtype=str),
                          "score": pd.Series([], dtype=float)})
    with pytest.raises(InputFormatError, match="^run table: no results found; "):
        SetEvaluator.from_dataframe(qrels.to_pandas(), empty)
    assert len(run_from_table(run.slice(0, 0), empty_ok=True).query_ids) == 0  # a part of a run may be empty


def test_log_first_row_like_data(tmp_path: Path, capsys) -> None:
    """A first row ``s1,i1,abc,yes`` (a bad score, a yes/no label) is a row, refused with its line; it was
    taken as a header and dropped without a word. A header is 4 fields, none a number, no label value."""
    from retrieval_eval.io.formats import read_log_columns

    for first in ("s1,i1,abc,yes", "s1,i1,abc,TRUE", "1,item,score,label"):
        log = _write(tmp_path / "log.csv", f"{first}\ns1,i2,0.5,1\n")
        with pytest.raises(TrecFormatError) as raised:
            read_log_columns(log)
        assert str(raised.value) == f"{log}:1: score must be a number; expected 'group item score label'; got '{first}'"
        assert main(["evaluate", "--log", log, "-m", "AUC"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(f"retrieval-eval: error: {log}:1: ") and err.count("\n") == 1, err
    log = _write(tmp_path / "log.csv", "session,item,score,click\ns1,i1,0.9,1\ns1,i2,0.5,0\n")
    qrels, _ = read_log_columns(log)
    assert qrels.lines.tolist() == [2, 3]  # a header that looks like one is still one


def test_log_score_1e400(tmp_path: Path, capsys) -> None:
    """A log score beyond the double range is read as infinity with the TREC reader's warning (it was silent)."""
    from retrieval_eval.io.formats import read_log_columns

    log = _write(tmp_path / "log.tsv", "s1\ti1\t0.5\t1\ns1\ti2\t1e400\t0\ns1\ti3\tinf\t0\n")
    with pytest.warns(InputWarning) as caught:
        _, run = read_log_columns(log)
    assert run.scores.tolist() == [0.5, math.inf, math.inf]
    assert [str(w.message) for w in caught] == [
        f"{log}:2: score too large for a double, read as infinity (as trec_eval's atof does); got 's1\\ti2\\t1e400\\t0'"]
    assert main(["evaluate", "--log", log, "-m", "AUC"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"retrieval-eval: warning: {log}:2: score too large for a double, read as infinity"), err


def test_spark_bad_row() -> None:
    """A bad row in a Spark task is named by its query and document (group and item for a log), which a
    user can look up, not by "partition 0, row 5" of a shuffle. (No Spark session needed: the task's
    function on one partition's table.)"""
    pa = pytest.importorskip("pyarrow")
    pytest.importorskip("pyspark")
    from retrieval_eval.integrations import spark as rs

    tagged = {"query_id": ["q", "q", "q", "q"], "doc_id": ["a", "b", "a", "b"], "relevance": [1, 0, None, None],
              "score": [None, None, 1.0, float("nan")], "_run": [False, False, True, True]}
    cases = [
        (rs._split_union, tagged, ("run DataFrame, query 'q', document 'b': score must not be NaN (it would make "
                                  "the ranking order undefined; column 'score')")),
        (rs._split_union, {**tagged, "relevance": [1, None, None, None], "score": [None, None, 1.0, 2.0]},
         ("qrels DataFrame, query 'q', document 'b': empty relevance (column 'relevance'): null; expected columns "
         "query_id, doc_id, relevance")),
        (rs._split_union, {**tagged, "doc_id": ["a", "b", "a", "L" * 500], "score": [None, None, 1.0, float("nan")]},
         "run DataFrame, query 'q', document '" + "L" * 95 + "...': score must not be NaN"),
        (rs._split_log, {"query_id": ["s1", "s1"], "doc_id": ["i1", "i2"], "score": [0.5, 0.2],
                         "relevance": [1.0, float("nan")]},
         ("log DataFrame, group 's1', item 'i2': relevance must be a finite number within int64's range (column "
          "'relevance'); got nan")),
    ]
    for split, columns, message in cases:
        evaluate_partition = rs._evaluate_partitions(split, ["AP"], 1, {"complete": True})
        with pytest.raises(InputFormatError) as raised:
            list(evaluate_partition(iter(pa.table(columns).to_batches())))
        assert str(raised.value).startswith(message), str(raised.value)
        assert "partition" not in str(raised.value) and "row" not in str(raised.value)


def test_measure_parameter_out_of_domain(tmp_path: Path, capsys) -> None:
    """Every measure parameter has a finite domain, checked by Param.check: these gave an IndexError or
    OverflowError traceback, NumPy warnings and a 300-digit label, inf printed as null, or were accepted."""
    from retrieval_eval.measures import DCG, ERR, InvalidParameterError, IPrecAvg, RBPResid, RprecMult, Utility, nDCG

    qrels, run = _write(tmp_path / "qrels", QRELS), _write(tmp_path / "run", RUN)
    for spec, message in (
        ("11pt_avg.inf", "parameter 'points[0]' of IPrecAvg must be a float in [0.0, 1.0]; got inf"),
        ("11pt_avg.1e308", "parameter 'points[0]' of IPrecAvg must be a float in [0.0, 1.0]; got 1e+308"),
        ("11pt_avg.0.5,2", "parameter 'points[1]' of IPrecAvg must be a float in [0.0, 1.0]; got 2.0"),
        ("Rprec_mult.1e308", "parameter 'mult' of RprecMult must be a float in [0.0, 1000000.0]; got 1e+308"),
        ("utility.1e308,-1,0,0", "parameter 'rel_ret' of Utility must be a float, finite and at most 2**63 in size"),
        ("ndcg.1=1e308", "parameter 'gain of level 1' of gains must be a float, finite and at most 2**63 in size"),
        ("set_F.1e300", "parameter 'beta' of SetF must be a float >= 0.0, finite and at most 2**63 in size"),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no NumPy warning on the way
            assert main(["evaluate", "-m", spec, qrels, run]) == 2, spec
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and message in err, (spec, err)
    for build, message in (
        (lambda: IPrecAvg(points=(0.5, 1e308)), r"'points\[1\]' of IPrecAvg must be a float in \[0.0, 1.0\]"),
        (lambda: RprecMult(mult=1e308), r"'mult' of RprecMult must be a float in \[0.0, 1000000.0\]"),
        (lambda: ERR(max_rel=1100), r"'max_rel' of ERR must be an int in \[1, 1000\]; got 1100"),
        (lambda: RBPResid(p=2), r"'p' of RBPResid must be a float in \[0.0, 1.0\]; got 2.0"),
        (lambda: nDCG(gains={1: 1e308}), r"gain of level 1' of gains must be a float, finite and at most 2\*\*63"),
        (lambda: DCG(gains={1: -1e300}), r"gain of level 1' of gains must be a float, finite and at most 2\*\*63"),
        (lambda: Utility(nonrel_ret=-1e308), r"'nonrel_ret' of Utility must be a float, finite and at most 2\*\*63"),
        (lambda: Utility(rel_ret=10**400), r"'rel_ret' of Utility must be a float, finite and at most 2\*\*63"),
        (lambda: nDCG(gains={10**30: 1}), r"gain levels must be integers >= 0 and at most 2\*\*62"),
    ):
        with pytest.raises(InvalidParameterError, match=message):
            build()
    # The largest values of each domain still give finite numbers, without a warning.
    results = SetEvaluator.from_trec(io.StringIO(QRELS), io.StringIO(RUN))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for measure in (RprecMult(mult=1e6), ERR(max_rel=1000), RBPResid(p=1.0), nDCG(gains={1: 2.0**63}),
                        Utility(rel_ret=2.0**63, nonrel_ret=-(2.0**63), collection_size=2**62)):
            assert all(math.isfinite(v) for v in results.per_query(measure).values()), measure
    # Hand-computed: q1 ranks a (relevant) then b, R = 1; q2 ranks c (relevant), R = 1. RprecMult@1e6:
    # c = trunc(1e6 * 1 + 0.9) = 1e6 ranks, one relevant in them.
    assert results.per_query(RprecMult(mult=1e6)) == {"q1": 1e-6, "q2": 1e-6}


def test_first_id_par1_in_logs_streams_and_parquet(tmp_path: Path) -> None:
    """Text starting with ``PAR1`` is text in a log, a compressed file and a stream too; a real Parquet
    file is still found by its magic bytes at both ends, whatever its name."""
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    from retrieval_eval.io.formats import is_parquet, read_log_columns

    log = _write(tmp_path / "log", "PAR1s\ta\t0.5\t1\nPAR1s\tb\t0.2\t0\n")
    qrels, run = read_log_columns(log)
    assert run.query_ids.tolist() == [b"PAR1s", b"PAR1s"] and qrels.relevance.tolist() == [1, 0]
    text = "PAR1q Q0 a 1 2.0 r\nq2 Q0 c 1 1.0 r\n"
    packed = _write(tmp_path / "run.gz", gzip.compress(text.encode()))
    for source in (packed, io.BytesIO(text.encode()), io.StringIO(text), _write(tmp_path / "run", text)):
        assert read_run_columns(source).query_ids.tolist() == [b"PAR1q", b"q2"], source
    pq.write_table(pa.table({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]}), tmp_path / "table.run")
    assert is_parquet(tmp_path / "table.run") and not is_parquet(tmp_path / "run")
    assert read_run_columns(tmp_path / "table.run").doc_ids.tolist() == [b"a"]
    with pytest.raises(TrecFormatError, match="a Parquet file, which can be read from a path but not from a stream"):
        read_run_columns(io.BytesIO((tmp_path / "table.run").read_bytes()))


def test_readers_api_typed_errors(tmp_path: Path) -> None:
    """The readers' API raises the project's typed errors (it raised a bare ValueError, UnicodeEncodeError
    and pyarrow's ArrowInvalid), and takes ids in the surrogate-escaped form it returns them in."""
    pd = pytest.importorskip("pandas")
    # read_run, the Document generator: a rank of 19 or 5,000 digits is no rank (never Python's int-limit
    # ValueError), and the line is read, as read_run_columns reads it (the fuzzer found them disagreeing).
    for digits in (19, 5000):
        path = _write(tmp_path / "run", RUN + "q2 Q0 d " + "9" * digits + " 0.5 r\n")
        assert [d.rank for _, d in read_run(path)][-1] is None
        assert len(read_run_columns(path).doc_ids) == len(list(read_run(path)))
    assert [d.rank for _, d in read_run(io.StringIO("q Q0 a 999999999999999999 1 r\nq Q0 b \u00b2 1 r\n"))] == [
        999999999999999999, None]  # 18 digits are a rank; a digit that is not ASCII is no rank, as before
    # A text stream holding surrogate escapes: the bytes they stand for, as the same file read by path.
    text = "q\udce9 Q0 a 1 1.0 r\n"
    assert read_run_columns(io.StringIO(text)).query_ids.tolist() == [b"q\xe9"]
    assert [qid for qid, _ in read_run(io.StringIO(text))] == ["q\udce9"]
    with pytest.raises(TrecFormatError, match=r"^<stream>: cannot read after 0 complete lines: the text holds '\\ud800', "
                                              r"a lone surrogate that stands for no byte"):
        read_run_columns(io.StringIO("q\ud800 Q0 a 1 1.0 r\n"))
    # from_dataframe: a Series is a typed error; ids with surrogate escapes are their bytes.
    qrels = pd.DataFrame({"query_id": pd.Series(["q\udce9", "q"], dtype=object), "doc_id": ["a", "b"],
                          "relevance": [1, 1]})
    run = pd.DataFrame({"query_id": pd.Series(["q\udce9", "q"], dtype=object),
                        "doc_id": pd.Series(["a", "x\udcff"], dtype=object), "score": [1.0, 1.0]})
    for frames in ((qrels, run["score"]), (qrels["query_id"], run)):
        with pytest.raises(InputTypeError, match=r"table must be a pyarrow Table, .* got a single column \(pandas Series\)"):
            SetEvaluator.from_dataframe(*frames)
    from_frames = SetEvaluator.from_dataframe(qrels, run).per_query("P@1")
    from_bytes = SetEvaluator.from_trec(io.BytesIO(b"q\xe9 0 a 1\nq 0 b 1\n"),
                                        io.BytesIO(b"q\xe9 Q0 a 1 1 r\nq Q0 x\xff 1 1 r\n")).per_query("P@1")
    assert from_frames == from_bytes == {"q": 0.0, "q\udce9": 1.0}
    lone = run.assign(doc_id=pd.Series(["a", "x\ud800"], dtype=object))
    with pytest.raises(InputFormatError, match=r"^run table, row 2: column 'doc_id' holds 'x\\ud800', with a lone "
                                               r"surrogate that stands for no byte"):
        SetEvaluator.from_dataframe(qrels, lone)


def test_non_finite_value_refused(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """A per-query value that is not a finite number never reaches a command: evaluate, diff (text and
    JSON), inspect and compare exit 2 with one line naming the measure and the query. It was a traceback
    (diff --format json), "nan -> nan" counted as unchanged (diff), the best-ranked query (inspect), and
    "'baseline' must be finite" (compare). The summaries and inspection refuse one too."""
    from retrieval_eval.analysis import inspection
    from retrieval_eval.evaluators.results import SetResults
    from retrieval_eval.measures import REGISTRY, MeasureError, parse

    qrels = _write(tmp_path / "qrels", "q1 0 a 1100\nq1 0 b 1\nq2 0 c 1\n")  # 2^1100 - 1: beyond a double
    run_a = _write(tmp_path / "a.run", RUN)
    run_b = _write(tmp_path / "b.run", RUN.replace("2.0", "0.5"))
    measure = "DCG(dcg='exp-log2')"
    message = (f"retrieval-eval: error: {measure} of query 'q1' is inf, not a finite number; expected a finite "
               "value for every query")
    for command in (["evaluate", "-m", measure, qrels, run_a], ["diff", "-m", measure, qrels, run_a, run_b],
                    ["diff", "--format", "json", "-m", measure, qrels, run_a, run_b],
                    ["inspect", "-m", measure, qrels, run_a], ["compare", "-m", measure, qrels, run_a, run_b]):
        assert main(command) == 2, command
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(message) and err.count("\n") == 1, (command, err)
    # The summaries refuse a NaN given to them directly, naming the measure and the query's place.
    with pytest.raises(MeasureError, match=r"^AP: the value of query number 2 \(in query order\) is nan, not a finite"):
        REGISTRY["AP"].aggregate_values(np.array([0.5, math.nan]))
    # diff and inspect refuse one that reaches them by another way, naming the run too.
    results_a = SetEvaluator.from_trec(io.StringIO(QRELS), io.StringIO(RUN))
    results_b = SetEvaluator.from_trec(io.StringIO(QRELS), io.StringIO(RUN.replace("2.0", "0.5")))
    real_array = SetResults.array

    def with_nan(self: SetResults, m: object) -> np.ndarray:
        values = real_array(self, m).copy()
        values[1] = math.nan
        return values

    monkeypatch.setattr(SetResults, "array", with_nan)
    ap = parse("AP")
    with pytest.raises(MeasureError, match=r"^AP in A of query 'q2' is nan, not a finite number"):
        inspection.diff_runs(results_a, results_b, ap)
    with pytest.raises(MeasureError, match=r"^AP in r of query 'q2' is nan"):
        inspection.worst_queries(results_a, [ap], 2)
