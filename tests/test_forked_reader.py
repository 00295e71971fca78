"""Reading a run in forked parts (io/_forked.py), against the usual reader of the same file.

The oracle is the usual reader (itself checked against trec_eval and Python's float()): on any file,
the parts give the same columns, line numbers and run id, or the parts decline and the usual reader
then reports the file's first problem and its warnings, as it would have alone. The files here are
small, and the size from which a file is cut into parts is lowered, so that part boundaries fall
everywhere: between blank lines, comments, bad lines and lines that warn.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.io import _forked, trec
from retrieval_eval.model import TrecFormatError


def cut_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files of 64 bytes or more read in 3 parts, as the command line reads large ones."""
    monkeypatch.setattr(_forked, "_enabled", True)
    monkeypatch.setattr(_forked, "PARTS_FROM", 64)
    monkeypatch.setattr(_forked, "usable_cpus", lambda: 3)


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Files cut small (:func:`cut_small`); each reading's outcome recorded (True: the parts gave the
    columns; False: they declined)."""
    cut_small(monkeypatch)
    outcomes: list[bool] = []
    read_parts = _forked._read_parts

    def spy(*args: Any) -> Any:
        result = read_parts(*args)
        outcomes.append(result is not None)
        return result

    monkeypatch.setattr(_forked, "_read_parts", spy)
    return outcomes


def outcome(path: Path) -> tuple[object, ...]:
    """What reading the run gives: its columns, line numbers and run id, or its error; and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            run = trec.read_text_run_columns(path)
            result: tuple[object, ...] = (run.query_ids.tolist(), run.doc_ids.tolist(), run.scores.tolist(),
                                          run.lines.tolist(), run.run_id, run.lines.dtype.str)
        except TrecFormatError as exc:
            result = ("error", str(exc))
    return result, [str(w.message) for w in caught]


def usual(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, ...]:
    with monkeypatch.context() as m:
        m.setattr(_forked, "_enabled", False)
        return outcome(path)


def lines_of(count: int, width: int = 1) -> list[str]:
    return [f"q{i // 7} Q0 d{'x' * width}{i} {i % 50 + 1} {(count - i) / 8:.4f} run{i % 3}" for i in range(count)]


def test_parts_give_the_usual_columns(tmp_path: Path, taken: list[bool], monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "run"
    path.write_text("\n".join(lines_of(300)) + "\n")
    parted = outcome(path)
    assert taken == [True]  # the parts were read, not declined
    assert parted == usual(path, monkeypatch)
    assert parted[0][3] == list(range(1, 301)) and parted[1] == []  # type: ignore[index]


def test_a_shared_column_is_a_file_long_array_of_the_usual_type(tmp_path: Path, taken: list[bool]) -> None:
    path = tmp_path / "run"
    path.write_text("\n".join(lines_of(200)) + "\n")
    run = trec.read_text_run_columns(path)
    assert taken == [True]
    assert (run.query_ids.dtype, run.doc_ids.dtype, run.scores.dtype, run.lines.dtype) == (
        np.dtype("S8"), np.dtype("S8"), np.dtype(np.float64), np.dtype(np.int32))
    assert len(run.doc_ids) == 200 and run.doc_ids.flags.c_contiguous


#: Lines a part may hold: usual ones, and each thing that makes the parts decline or the usual reader
#: report, warn or keep ids as bytes objects.
LINE_KINDS = {
    "usual": "q{q} Q0 d{n} 1 {n}.5 r",
    "wide id": "q{q} Q0 a-much-wider-document-id-{n} 1 {n}.5 r",
    "blank": "",
    "comment": "# a comment {n}",
    "tabs": "q{q}\tQ0\td{n}\t1\t{n}.25\tr",
    "crlf": "q{q} Q0 d{n} 1 {n}.5 r\r",
    "overflow": "q{q} Q0 d{n} 1 1e999 r",
    "bad score": "q{q} Q0 d{n} 1 high r",
    "nan": "q{q} Q0 d{n} 1 nan r",
    "merged": "q{q} Q0 d{n} 1 1.5 r q{q} Q0 e{n} 2 1.0 r",
    "long id": "q{q} Q0 " + "L" * 300 + "{n} 1 0.5 r",
    "bom": "\ufeffq{q} Q0 d{n} 1 0.5 r",
    "five fields": "q{q} Q0 d{n} 1 0.5",
}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(sorted(LINE_KINDS)), min_size=1, max_size=12), st.integers(20, 120),
       st.booleans())
def test_parts_or_the_usual_reader_give_the_usual_outcome(tmp_path_factory: pytest.TempPathFactory,
                                                         kinds: list[str], usual_lines: int,
                                                         final_newline: bool) -> None:
    """Odd lines scattered among usual ones, wherever the parts are cut: the same columns, error and
    warnings as the usual reader's."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        outcomes: list[bool] = []
        cut_small(monkeypatch)
        line_bounds = _forked._line_bounds

        def counted(*args: Any) -> Any:
            outcomes.append(True)
            return line_bounds(*args)

        monkeypatch.setattr(_forked, "_line_bounds", counted)
        lines = [LINE_KINDS["usual"].format(q=i // 9, n=i) for i in range(usual_lines)]
        step = max(usual_lines // len(kinds), 1)
        for j, kind in enumerate(kinds):
            lines.insert(min(j * step + step // 2 + j, len(lines)), LINE_KINDS[kind].format(q=j, n=1000 + j))
        path = tmp_path_factory.mktemp("run") / "run"
        path.write_text("\n".join(lines) + ("\n" if final_newline else ""), encoding="utf-8", newline="")
        parted = outcome(path)
        assert outcomes  # the file was to be cut into parts (and read by them, or declined)
        assert parted == usual(path, monkeypatch)


@pytest.mark.parametrize("failure", ["dies", "stalls"])
def test_a_child_that_fails_leaves_the_file_to_the_usual_reader(tmp_path: Path, taken: list[bool],
                                                                 monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    """A child that dies, or never answers (as one forked while another thread held a lock it needs
    would), is reaped or stopped once the wait runs out, and the file is read as usual."""
    import time

    path = tmp_path / "run"
    path.write_text("\n".join(lines_of(300)) + "\n")
    parent = os.getpid()
    read_part = trec._run_part

    def failing_in_a_child(*args: Any) -> Any:
        if os.getpid() != parent:
            if failure == "dies":
                os._exit(3)
            time.sleep(600)
        return read_part(*args)

    monkeypatch.setattr(trec, "_run_part", failing_in_a_child)
    monkeypatch.setattr(_forked, "_PATIENCE", 0.5)
    started = time.monotonic()
    parted = outcome(path)
    assert taken == [False] and time.monotonic() - started < 30
    assert parted == usual(path, monkeypatch)


def test_wider_ids_after_the_first_part_are_read_as_usual(tmp_path: Path, taken: list[bool],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The first part's columns are the file's: ids wider in a later part make the parts decline."""
    path = tmp_path / "run"
    path.write_text("\n".join(lines_of(150) + lines_of(150, width=12)) + "\n")
    parted = outcome(path)
    assert taken == [False]
    assert parted == usual(path, monkeypatch)


def test_a_library_call_never_forks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the command line turns the parts on (enable()): a caller's process is not forked."""
    monkeypatch.setattr(_forked, "PARTS_FROM", 64)
    monkeypatch.setattr(_forked, "usable_cpus", lambda: 3)
    monkeypatch.setattr(_forked, "_read_parts", lambda *a: pytest.fail("forked without enable()"))
    path = tmp_path / "run"
    path.write_text("\n".join(lines_of(300)) + "\n")
    assert len(trec.read_text_run_columns(path).doc_ids) == 300


#: The command line in a process of its own, telling on stderr whether the run was read in parts.
COMMAND = """
import sys
import retrieval_eval.io._forked as forked
read_parts = forked._read_parts
def told(*args):
    columns = read_parts(*args)
    sys.stderr.write("read in parts\\n" if columns is not None else "parts declined\\n")
    return columns
forked._read_parts = told
sys.argv[0] = "retrieval-eval"  # the command's own process (cli._is_the_program)
from retrieval_eval.cli import main
sys.exit(main())
"""


def test_the_command_reads_a_large_run_in_parts_with_the_usual_output(tmp_path: Path) -> None:
    """End to end, in a process of its own on 2 CPUs or more: a 34 MB run is read in parts, and the
    command prints what the same evaluation gives in this process, where nothing is forked."""
    from retrieval_eval import SetEvaluator
    from retrieval_eval.engine.threads import usable_cpus

    if usable_cpus() < 2:
        pytest.skip("one CPU: a file is never cut into parts")
    rng = np.random.default_rng(5)
    queries, depth = 900, 1000
    scores = np.round(rng.random(queries * depth) * 100, 4)
    docs = rng.permutation(queries * depth) + 10**6  # each document once
    qids = np.repeat(np.arange(queries), depth)
    run = tmp_path / "run"
    with open(run, "w") as out:
        out.writelines(f"{q} Q0 D{d} 1 {s} system-abcd\n" for q, d, s in zip(qids.tolist(), docs.tolist(),
                                                                          scores.tolist()))
    assert run.stat().st_size >= _forked.PARTS_FROM
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 D{d} {g}\n" for q, d, g in zip(qids[::50].tolist(), docs[::50].tolist(),
                                                                      (docs[::50] % 3).tolist())))
    done = subprocess.run([sys.executable, "-c", COMMAND, "evaluate", "-q", "-m", "map", "-m", "P.10",
                           "--no-unjudged-note", str(qrels), str(run)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "read in parts\n"
    ours = SetEvaluator.from_trec(qrels, run)
    expected = {(m, q): f"{v:.4f}" for m, name in (("map", "AP"), ("P_10", "P@10"))
                for q, v in ours.per_query(name).items()}
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert {(m.strip(), q): v for m, q, v in rows if q != "all"} == expected
    assert len(rows) == 2 * (queries + 1)
