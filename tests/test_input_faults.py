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
import gzip
import lzma
import re
import zlib
from pathlib import Path

import attrs
import pytest

from retrieval_eval.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs" / "input-faults.md"
QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n"
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
    options: tuple[str, ...] = ()  # more evaluate options (-l 2)


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
    Case("score-nan", "rejected", run=RUN.replace("2.0", "nan"), pattern="1: score must not be NaN", where="run"),
    Case("score-inf", "accepted", run=RUN.replace("1.0 r\nq2", "inf r\nq2")),
    Case("score-1e400", "warned", run=RUN.replace("2.0", "1e400"), pattern="run:1: score too large for a double"),
    Case("score-abc", "rejected", run=RUN.replace("2.0", "abc"), pattern="1: score must be a number", where="run"),
    Case("relevance-1.7", "rejected", QRELS.replace("a 1", "a 1.7"), pattern="1: relevance must be an integer",
         where="qrels"),
    Case("relevance-abc", "rejected", QRELS.replace("a 1", "a yes"), pattern="1: relevance must be an integer",
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
    Case("non-utf8", "accepted", QRELS.encode() + b"q2 0 caf\xe9 1\n", RUN.encode() + b"q2 Q0 caf\xe9 2 0.5 r\n"),
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
]


def _write(path: Path, content: str | bytes, compress: bool = False) -> str:
    data = content.encode() if isinstance(content, str) else content
    if compress:
        data = gzip.compress(data)
        data = data[: len(data) // 2]
    path.write_bytes(data)
    return str(path)


def _evaluate(capsys, qrels: str, run: str, options: tuple[str, ...] = ()) -> tuple[int, str, str]:
    code = main(["evaluate", "-q", "-m", "official", *options, qrels, run])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_input_fault(case: Case, tmp_path: Path, capsys) -> None:
    qrels = _write(tmp_path / "qrels", case.qrels)
    run = _write(tmp_path / ("run.gz" if case.gzip_run else "run"), case.run, compress=case.gzip_run)
    code, out, err = _evaluate(capsys, qrels, run, case.options)
    assert "Traceback" not in err
    warnings = [line for line in err.splitlines() if line.startswith("retrieval-eval: warning: ")]
    if case.outcome == "rejected":
        path = qrels if case.where == "qrels" else run
        assert code == 2 and out == ""
        assert re.fullmatch(f"retrieval-eval: error: {re.escape(path)}:?{case.pattern}.*\n", err, re.DOTALL), err
        return
    assert code == 0 and out
    if case.outcome == "warned":
        assert any(re.search(case.pattern, line) for line in warnings), err
    else:
        assert warnings == [], err
    if case.same_output:
        clean = _evaluate(capsys, _write(tmp_path / "clean.qrels", QRELS), _write(tmp_path / "clean.run", RUN))
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
