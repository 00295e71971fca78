"""The fast paths for many small queries (issue 16's sessions and msmarco shapes), each checked against
the general path it skips or against a plain Python oracle, with inputs that take both branches."""

from __future__ import annotations

import io
import itertools
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval_eval.engine.judgments as judgments_module
import retrieval_eval.measures.summary as summary_module
from retrieval_eval import SetEvaluator
from retrieval_eval.cli import main
from retrieval_eval.engine.ids import PairIndex, _increasing, intern
from retrieval_eval.engine.judgments import _scan_join, _scan_repeats
from retrieval_eval.engine.segments import _offsets_of
from retrieval_eval.measures.summary import sequential_mean

#: Ids of one to three 8-byte words, sharing prefixes so that later words decide.
ids_strategy = st.lists(
    st.builds(lambda stem, tail: stem + tail, st.sampled_from([b"", b"q", b"abcdefgh", b"abcdefghabcdefgh"]),
              st.binary(min_size=1, max_size=9).filter(lambda b: not b.endswith(b"\0"))),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(ids_strategy, st.booleans())
def test_intern_of_sorted_ids_equals_the_sorting_path(values: list[bytes], sort: bool) -> None:
    """Ids that arrive in byte order skip the sort; either way vocab and codes are np.unique's."""
    if sort:
        values = sorted(values)
    ids = np.array(values, dtype="S40") if values else np.zeros(0, dtype="S1")
    vocab, codes = intern(ids)
    expected = sorted(set(values))
    assert [bytes(v) for v in vocab] == expected
    assert [expected[c] for c in codes] == values


@settings(max_examples=200, deadline=None)
@given(ids_strategy)
def test_increasing_is_the_byte_order(values: list[bytes]) -> None:
    ids = np.array(values, dtype="S40") if values else np.zeros(0, dtype="S1")
    assert _increasing(ids) == all(a < b for a, b in itertools.pairwise(values))


def _grouped_judgments(rnd: random.Random, n_queries: int, most: int, repeat: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per query 0..``most`` judged ids (grouped by query), distinct unless ``repeat``."""
    count = np.array([rnd.randrange(most + 1) for _ in range(n_queries)], dtype=np.int64)
    docs = []
    for n in count.tolist():
        pool = [b"d" * rnd.randrange(0, 12) + str(i).encode() for i in range(3 * n + 2)]
        chosen = rnd.sample(pool, n)
        if repeat and n >= 2:
            chosen[rnd.randrange(1, n)] = chosen[0]
        docs.extend(chosen)
    return _offsets_of(count), np.array(docs, dtype="S24") if docs else np.zeros(0, dtype="S8")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("rows", [400, 100])
def test_scan_join_finds_what_the_hash_table_finds(seed: int, rows: int) -> None:
    """With many rows a query (each query's first judged id gathered from an entry per query) and with
    a few (worked out row by row)."""
    rnd = random.Random(seed)
    offsets, judged = _grouped_judgments(rnd, 30, 4, repeat=False)
    query = np.repeat(np.arange(30), np.diff(offsets))
    run_query = np.array([rnd.randrange(30) for _ in range(rows)], dtype=np.int64)
    pool = [bytes(d) for d in judged] + [b"x", b"d1", b"ddddddddddd0", b"d" * 11 + b"99"]
    run_docs = np.array([rnd.choice(pool) for _ in range(rows)], dtype="S16")  # another width than the qrels'
    found = _scan_join(offsets, judged, run_query, run_docs, np.arange(len(judged)))  # each row's judged row
    assert found is not None
    rows, at = PairIndex(query, judged).find(run_query, run_docs)
    hashed = np.full(len(run_query), -1)
    hashed[rows] = at
    assert found.tolist() == hashed.tolist()
    assert len(rows) > 0


def test_scan_join_finds_nothing_for_a_query_without_judgments() -> None:
    """The first step compares each row with its query's first judged id, or, for a query without
    judgments, with some other query's (the first of the next, or the last of all): never a match."""
    offsets = np.array([0, 0, 1, 1], dtype=np.int64)  # queries 0 and 2 have no judgments, query 1 judges "a"
    judged = np.array([b"a"])
    found = _scan_join(offsets, judged, np.array([0, 1, 2]), np.array([b"a", b"a", b"a"]), np.array([7]))
    assert found is not None and found.tolist() == [-1, 7, -1]
    many = _scan_join(offsets, judged, np.repeat([0, 1, 2], 10), np.array([b"a"] * 30), np.array([7]))  # 10 rows a query
    assert many is not None and many.tolist() == [-1] * 10 + [7] * 10 + [-1] * 10
    nothing = _scan_join(np.zeros(3, dtype=np.int64), judged[:0], np.array([0, 1]), np.array([b"a", b"b"]), np.zeros(0, dtype=np.int64))
    assert nothing is not None and nothing.tolist() == [-1, -1]


def test_scan_join_declines_many_judgments_per_query() -> None:
    offsets = np.array([0, 100], dtype=np.int64)
    judged = np.array([str(i).encode() for i in range(100)])
    assert _scan_join(offsets, judged, np.zeros(10, dtype=np.int64), judged[:10], np.arange(100)) is None


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("repeat", [False, True])
def test_scan_repeats_agrees_with_a_set(seed: int, repeat: bool) -> None:
    rnd = random.Random(seed)
    offsets, docs = _grouped_judgments(rnd, 40, 4, repeat)
    expected = any(len(set(docs[a:b].tolist())) < b - a for a, b in itertools.pairwise(offsets))
    assert _scan_repeats(offsets, docs) == expected
    assert _scan_repeats(offsets, docs, np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))) == expected
    assert expected == (repeat and bool((np.diff(offsets) >= 2).any()))


def _files(tmp_path: Path, seed: int, duplicate: bool) -> tuple[str, str]:
    """A log-like pair of files: many queries of one to four documents, some judged twice if ``duplicate``."""
    rnd = random.Random(seed)
    qrels, run = [], []
    for q in range(300):
        docs = [f"d{rnd.randrange(40)}" for _ in range(rnd.randrange(1, 5))]
        docs = list(dict.fromkeys(docs))
        for d in docs:
            if rnd.random() < 0.6:
                qrels.append(f"{q:05d} 0 {d} {rnd.randrange(-1, 3)}")
            run.append(f"{q:05d} Q0 {d} 1 {rnd.randrange(5) / 4} r")
    if duplicate:
        qrels.insert(len(qrels) // 2, qrels[len(qrels) // 2 - 1].rsplit(" ", 1)[0] + " 2")
    (tmp_path / "q").write_text("\n".join(qrels) + "\n")
    (tmp_path / "r").write_text("\n".join(run) + "\n")
    return str(tmp_path / "q"), str(tmp_path / "r")


@pytest.mark.parametrize("seed", range(3))
def test_scanning_and_hashing_give_the_same_evaluation(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = _files(tmp_path, seed, duplicate=False)
    results = []
    for comparisons in (4, 0):  # the scan, then the hash table for everything
        monkeypatch.setattr(judgments_module, "_SCAN_COMPARISONS", comparisons)
        evaluator = SetEvaluator.from_trec(qrels, run)
        results.append({m: evaluator.per_query(m) for m in ("AP", "nDCG@10", "P@5", "NumRelRet", "Bpref", "infAP")})
    assert results[0] == results[1]
    assert sum(results[0]["NumRelRet"].values()) > 0


def test_a_repeated_judgment_is_found_by_either_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = _files(tmp_path, 0, duplicate=True)
    messages = []
    for comparisons in (4, 0):
        monkeypatch.setattr(judgments_module, "_SCAN_COMPARISONS", comparisons)
        with pytest.raises(Exception) as error:
            SetEvaluator.from_trec(qrels, run)
        messages.append(str(error.value))
        first = SetEvaluator.from_trec(qrels, run, duplicates="first")
        messages.append(repr(first.per_query("NumRel")))
    assert messages[0] == messages[2] and "duplicate judgment" in messages[0]
    assert messages[1] == messages[3]


def test_run_queries_in_the_judged_order_or_not() -> None:
    """A run with exactly the judged queries in their order takes them as they are; another order, or
    other queries of the same number, are looked up."""
    qrels = "".join(f"{q} 0 d{q} 1\n" for q in ("a", "b", "c"))
    for queries in (["a", "b", "c"], ["c", "b", "a"], ["a", "b", "x"]):
        run = "".join(f"{q} Q0 d{q} 1 1.0 r\n" for q in queries)
        ev = SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO(run))
        found = {q for q, v in ev.per_query("NumRelRet").items() if v}
        assert found == set(queries) & {"a", "b", "c"}
        assert ev.not_judged == sorted(set(queries) - {"a", "b", "c"})


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=-1e12, max_value=1e12), min_size=1, max_size=50))
def test_sequential_mean_in_chunks_adds_left_to_right(values: list[float]) -> None:
    array = np.array(values)
    old = summary_module._SUM_CHUNK
    try:
        summary_module._SUM_CHUNK = 3
        chunked = sequential_mean(array)
    finally:
        summary_module._SUM_CHUNK = old
    total = values[0]
    for value in values[1:]:
        total += value
    assert chunked == total / len(values) and np.signbit(chunked) == np.signbit(total / len(values))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("subset", [0.0, 1.1])  # every query's arrays, or only those of queries with hits
def test_iprec_against_a_per_query_oracle(tmp_path: Path, seed: int, subset: float,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import retrieval_eval.measures.precision as precision_module

    monkeypatch.setattr(precision_module, "_IPREC_SUBSET", subset)
    qrels, run = _files(tmp_path, seed, duplicate=False)
    evaluator = SetEvaluator.from_trec(qrels, run)
    for query in evaluator.query_ids:
        one = evaluator[query]
        ranked = [d.doc_id for d in one.retrieved_documents()]
        relevant = {d for d in ranked if (one.judgment(d) or 0) >= 1}
        n_relevant = int(evaluator.per_query("NumRel")[query])
        precisions = [m / r for m, r in enumerate((r for r, d in enumerate(ranked, 1) if d in relevant), 1)]
        for point in (0.0, 0.3, 0.5, 1.0):
            c = int(np.floor(point * n_relevant + 0.5))
            expected = max(precisions[max(c - 1, 0):], default=0.0) if c <= len(precisions) else 0.0
            assert one.score(f"IPrec@{point}") == expected, (query, point)


def test_the_command_line_keeps_freed_memory_with_the_same_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Run as a program, the command line turns the allocator settings on (keep_freed_memory); the
    output is the in-process one, byte for byte."""
    qrels, run = _files(tmp_path, 1, duplicate=False)
    assert main(["evaluate", "-q", "-m", "official", qrels, run]) == 0
    in_process = capsys.readouterr().out
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    program = subprocess.run([sys.executable, "-m", "retrieval_eval", "evaluate", "-q", "-m", "official", qrels, run],
                             capture_output=True, text=True, env=env, check=True)
    assert program.stdout == in_process and "map" in in_process


@pytest.mark.parametrize("per_query", [True, False])
def test_trec_text_in_pieces_is_the_lines_one_by_one(tmp_path: Path, per_query: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The -q text written piece by piece is the line-by-line formatting (_line and _value for each
    value), whatever the piece size; integer, float and text measures alike."""
    import retrieval_eval.report.text as output_module
    from retrieval_eval.measures import parse
    from retrieval_eval.report.text import NAME_WIDTH, Requested, _line, _value, trec_text

    qrels, run = _files(tmp_path, 2, duplicate=False)
    evaluator = SetEvaluator.from_trec(qrels, run)
    requested = [Requested(parse(name), label) for name, label in
                 (("NumRet", "num_ret"), ("AP", "map"), ("relstring", "relstring"), ("GMAP", "gm_map"))]
    monkeypatch.setattr(output_module, "_LINES_PER_PIECE", 7)
    pieces = list(trec_text(evaluator, requested, per_query=per_query, summary=True))
    expected = []
    if per_query:
        for query in evaluator.query_ids:
            for item in requested[:3]:
                value = evaluator[query].text("relstring") if item.label == "relstring" else evaluator.per_query(item.label)[query]
                expected.append(_line(item.label, query, _value(item.measure, value, 4), NAME_WIDTH))
    expected.append(_line("runid", "all", evaluator.run_id, NAME_WIDTH))
    for item in (requested[0], requested[1], requested[3]):
        expected.append(_line(item.label, "all", _value(item.measure, evaluator.aggregate(item.label), 4), NAME_WIDTH))
    assert "".join(pieces) == "".join(line + "\n" for line in expected)
    assert len(pieces) == (-(-len(evaluator) // (7 // 3)) + 1 if per_query else 1)  # 3 per-query lines a query


def test_several_runs_print_whole_and_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The last run streams its lines; the output is still each run's block in turn, and a broken
    last run still stops the command before anything is printed."""
    qrels, run = _files(tmp_path, 3, duplicate=False)
    blocks = []
    for args in ([run], [run, run]):
        assert main(["evaluate", "-q", "-m", "P.5", qrels, *args]) == 0
        blocks.append(capsys.readouterr().out)
    # Each block opens with its runid line (issue 27); the same file twice is numbered.
    size = blocks[0].count("\n")
    lines = blocks[1].splitlines(keepends=True)
    assert [lines[0], lines[size + 1]] == [f"runid                 \tall\t{run}#{n}\n" for n in (1, 2)]
    assert "".join(lines[1:size + 1]) == "".join(lines[size + 2:]) == blocks[0]
    broken = tmp_path / "broken"
    broken.write_text("q Q0 d 1\n")
    assert main(["evaluate", "-q", "-m", "P.5", qrels, run, str(broken)]) == 2
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("in_order", [True, False])
def test_ideal_list_with_or_without_its_sort(tmp_path: Path, in_order: bool) -> None:
    """The ideal list is each query's positive gains, largest first: qrels listing them that way skip
    the sort, others are sorted; both match a per-query sort in Python."""
    from retrieval_eval.measures.gains import ideal_list

    rnd = random.Random(5)
    judged: dict[str, list[int]] = {}
    lines = []
    for q in range(60):
        levels = [rnd.randrange(-1, 4) for _ in range(rnd.randrange(0, 6))]
        if in_order:
            levels.sort(reverse=True)
        judged[f"q{q:02d}"] = levels
        lines += [f"q{q:02d} 0 d{i} {level}" for i, level in enumerate(levels)]
    (tmp_path / "q").write_text("\n".join(lines) + "\n")
    (tmp_path / "r").write_text("q00 Q0 d0 1 1.0 r\n")
    evaluator = SetEvaluator.from_trec(tmp_path / "q", tmp_path / "r")
    ideal = ideal_list(evaluator._batch, None)
    for index, query in enumerate(evaluator.query_ids):
        got = ideal.gain[ideal.offsets[index] : ideal.offsets[index + 1]].tolist()
        assert got == sorted((float(v) for v in judged[query] if v > 0), reverse=True), query


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and NumPy's huge-page switch: Linux")
def test_keep_freed_memory_turns_off_numpys_huge_pages() -> None:
    """In a process of its own (the settings are process-wide): NumPy no longer asks for huge pages,
    and large arrays are still made, used and freed normally."""
    code = ("from retrieval_eval.engine.memory import keep_freed_memory; keep_freed_memory(); import numpy as np; "
            "a = np.ones(10**7); b = a + 1; del a; c = np.zeros(2 * 10**7); "
            "print(np._core.multiarray._get_madvise_hugepage(), float(b.sum()), c.size)")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["False", "20000000.0", "20000000"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="NumPy's huge-page switch: Linux")
def test_a_program_calling_main_keeps_its_own_process_settings(tmp_path: Path) -> None:
    """A script (not the retrieval-eval program) that calls main() with sys.argv set gets its output,
    and keeps its BLAS threads, NumPy's huge pages and its interpreter's teardown (atexit runs)."""
    qrels, run = _files(tmp_path, 1, duplicate=False)
    code = ("import atexit, os, sys; from retrieval_eval.cli import main; "
            f"sys.argv = ['host.py', 'evaluate', '-m', 'map', {qrels!r}, {run!r}]; "
            "atexit.register(lambda: print('atexit ran')); code = main(); import numpy as np; "
            "print(code, os.environ.get('OPENBLAS_NUM_THREADS'), np._core.multiarray._get_madvise_hugepage())")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.splitlines()[-2:] == ["0 None True", "atexit ran"] and out.startswith("map")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"b", b"abcdefghX", b"abcdefghY"]), max_size=30), st.booleans())
def test_run_heads_and_lengths_against_python(values: list[bytes], as_codes: bool) -> None:
    from retrieval_eval.engine.ids import _run_heads, _run_lengths

    ids = np.array([len(v) * 7 + v[-1] for v in values], dtype=np.int64) if as_codes else (
        np.array(values, dtype="S16") if values else np.zeros(0, dtype="S8"))
    heads = [i for i in range(len(values)) if i == 0 or values[i] != values[i - 1]]
    assert _run_heads(ids).tolist() == heads
    assert _run_lengths(np.array(heads, dtype=np.int64), len(values)).tolist() == np.diff(heads, append=len(values)).tolist()


def test_scan_join_counts_the_comparisons_of_the_rows_queries() -> None:
    """With a query of few judgments and one of many, the scan is taken or declined by where the run's
    rows are (not by the judgments alone)."""
    offsets = np.array([0, 2, 102], dtype=np.int64)
    judged = np.array([b"a", b"b"] + [str(i).encode() for i in range(100)])
    values = np.arange(102) * 10
    few = _scan_join(offsets, judged, np.zeros(3, dtype=np.int64), np.array([b"b", b"x", b"a"]), values)
    assert few is not None and few.tolist() == [10, -1, 0]
    assert _scan_join(offsets, judged, np.ones(10, dtype=np.int64), judged[2:12], values) is None
