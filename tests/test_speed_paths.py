"""The fast paths of issue 16 and the long-id columns of issue 15 B.1, each checked against a plain
Python oracle or against the path it replaces."""

from __future__ import annotations

import io
import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval_eval.engine.ids as ids_module
import retrieval_eval.io._parse as parse_module
import retrieval_eval.io._source as source_module
import retrieval_eval.io._tokens as tokens_module
from retrieval_eval import SetEvaluator
from retrieval_eval.engine.build import build_batch
from retrieval_eval.engine.ids import PairIndex, _id_hash, intern
from retrieval_eval.engine.judgments import prepared_qrels
from retrieval_eval.engine.order import canonical_order
from retrieval_eval.io.formats import read_qrels_columns, read_run_columns


def _random_pairs(rnd: random.Random, n: int, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    query = np.array([rnd.randrange(n_queries) for _ in range(n)], dtype=np.int64)
    docs = np.array([b"d" * rnd.randrange(0, 20) + str(rnd.randrange(50)).encode() for _ in range(n)])
    return query, docs


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("colliding", [False, True])
def test_pair_index_finds_exactly_the_judged_pairs(seed: int, colliding: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every (query, id) looked up is found iff it is in the table, at a row holding that pair, also
    when every key collides (the probe must go on past a false match)."""
    if colliding:  # every id hashes alike: the keys of a query's pairs all collide
        monkeypatch.setattr(ids_module, "_id_hash", lambda ids, words=None: np.zeros(len(ids), dtype=np.uint64))
    rnd = random.Random(seed)
    query, docs = _random_pairs(rnd, 300, 7)
    first: dict[tuple[int, bytes], int] = {}
    for row, pair in enumerate(zip(query.tolist(), docs.tolist())):
        first.setdefault(pair, row)
    keep = np.array(sorted(first.values()))
    index = PairIndex(query[keep], docs[keep])
    assert index.maybe_repeated() == colliding  # distinct pairs: keys repeat only when forced to
    needles_q, needles_d = _random_pairs(rnd, 500, 9)
    rows, at = index.find(needles_q, needles_d)
    expected = [i for i, pair in enumerate(zip(needles_q.tolist(), needles_d.tolist())) if pair in first]
    assert rows.tolist() == expected
    assert (query[keep][at] == needles_q[rows]).all() and (docs[keep][at] == needles_d[rows]).all()


#: The key whose slot is the table's last one whatever its size: key * _MIX has every bit set.
_LAST_SLOT_KEY = (2**64 - 1) * pow(ids_module._MIX, -1, 2**64) % 2**64


@pytest.mark.parametrize("seed", range(3))
def test_pair_index_keys_past_the_last_slot_go_to_a_tail(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys that all want the last slot are placed after it (not back at the start), and each is found
    there by probing on from that slot; absent pairs stop at the empty slot that ends the table."""
    monkeypatch.setattr(ids_module, "pair_keys",
                        lambda query, ids, words=None: np.full(len(ids), _LAST_SLOT_KEY, dtype=np.uint64))
    rnd = random.Random(seed)
    query, docs = _random_pairs(rnd, 200, 1)  # one query: a key must stand for a query code and an id hash
    keep = np.unique(docs, return_index=True)[1]
    index = PairIndex(query[keep], docs[keep])
    region = 1 << (4 * len(keep)).bit_length()  # the one query's
    assert len(index.table) == region + len(keep)  # one key at the last slot, the rest in the tail
    rows = index.rows()
    assert rows[-1] == -1 and sorted(rows[rows >= 0].tolist()) == list(range(len(keep)))
    needles_q, needles_d = _random_pairs(rnd, 300, 1)
    rows, at = index.find(needles_q, needles_d)
    judged = {pair: row for row, pair in enumerate(zip(query[keep].tolist(), docs[keep].tolist()))}
    expected = [(i, judged[pair]) for i, pair in enumerate(zip(needles_q.tolist(), needles_d.tolist())) if pair in judged]
    assert list(zip(rows.tolist(), at.tolist())) == expected and expected


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("colliding", [False, True])
def test_pair_index_regions_of_sparse_queries(seed: int, colliding: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Queries without pairs between those with pairs (one empty slot each, which a neighbour's keys
    may fill when every key of a query collides), and looked-up query codes outside every region
    (negative, or past the last): each pair is found iff judged."""
    if colliding:
        monkeypatch.setattr(ids_module, "_id_hash", lambda ids, words=None: np.zeros(len(ids), dtype=np.uint64))
    rnd = random.Random(seed)
    query, docs = _random_pairs(rnd, 200, 4)
    query = query * 3  # codes 0, 3, 6, 9: codes 1, 2, 4, ... have no pairs
    keep = np.unique(np.char.add(query.astype("S2"), docs), return_index=True)[1]
    index = PairIndex(query[keep], docs[keep])
    assert index.maybe_repeated() == colliding
    needles_q, needles_d = _random_pairs(rnd, 400, 14)
    needles_q -= 2  # codes -2 to 11
    rows, at = index.find(needles_q, needles_d)
    judged = {pair: row for row, pair in enumerate(zip(query[keep].tolist(), docs[keep].tolist()))}
    expected = [(i, judged[pair]) for i, pair in enumerate(zip(needles_q.tolist(), needles_d.tolist())) if pair in judged]
    assert list(zip(rows.tolist(), at.tolist())) == expected and expected


@pytest.mark.parametrize("needle_width", [3, 8, 9, 17, 24])
def test_pair_index_compares_ids_of_any_width(needle_width: int) -> None:
    """Ids are confirmed word by word: the same id in columns of other widths matches, and an id
    that only extends a judged one (or is cut short of it) does not."""
    judged = np.array([b"ab", b"abcdefgh", b"abcdefghi", b"abcdefghijklmnopq"])
    index = PairIndex(np.zeros(len(judged), dtype=np.int64), judged)
    candidates = [b"ab", b"abc", b"abcdefgh", b"abcdefghi", b"abcdefghij", b"abcdefghijklmnopq", b"abcdefghijklmnop"]
    fitting = [c for c in candidates if len(c) <= needle_width]
    needles = np.array(fitting, dtype=f"S{needle_width}")
    rows, at = index.find(np.zeros(len(needles), dtype=np.int64), needles)
    expected = [(i, judged.tolist().index(c)) for i, c in enumerate(fitting) if c in judged.tolist()]
    assert list(zip(rows.tolist(), at.tolist())) == expected
    objects = _objects(fitting)  # bytes objects (a column with very long ids): compared as they are
    rows, at = index.find(np.zeros(len(objects), dtype=np.int64), objects)
    assert list(zip(rows.tolist(), at.tolist())) == expected


def test_pair_index_notices_a_repeated_pair() -> None:
    query = np.array([0, 1, 0, 0], dtype=np.int64)
    docs = np.array([b"a", b"a", b"b", b"a"])
    index = PairIndex(query, docs)
    assert index.maybe_repeated()
    assert sorted(np.concatenate(index.same_key).tolist()) in ([0], [3])  # one of the two rows of (0, a)


def test_bytes_objects_hash_like_fixed_width_ids() -> None:
    values = [b"", b"a", b"abcdefgh", b"abcdefghi", b"x" * 5000, b"q\xe9"]
    objects = np.empty(len(values), dtype=object)
    objects[:] = values
    assert _id_hash(objects).tolist() == _id_hash(np.array(values)).tolist()
    vocab, codes = intern(objects)
    assert vocab.tolist() == sorted(values) and [vocab[c] for c in codes] == values


def test_ties_of_long_ids_sort_as_fixed_width_ones() -> None:
    rnd = random.Random(3)
    values = [rnd.choice([b"a", b"ab", b"b", b"zz" * 40, b"zz" * 40 + b"a"]) + str(i).encode() for i in range(60)]
    query = np.repeat(np.arange(3, dtype=np.int64), 20)
    score = np.array([float(rnd.randrange(3)) for _ in range(60)])
    score = np.concatenate([np.sort(part)[::-1] for part in np.split(score, 3)])
    objects = np.empty(60, dtype=object)
    objects[:] = values
    fixed, loose = canonical_order(query, score, np.array(values)), canonical_order(query, score, objects)
    assert fixed is not None and loose is not None
    assert fixed.permutation().tolist() == loose.permutation().tolist()


def _long_id_files(tmp_path, long: bool) -> tuple[str, str]:
    """A run in which 1 id in 100 is 3,000 bytes long (or, with ``long=False``, the same ids short)."""
    rnd = random.Random(11)
    run, qrels = [], []
    for q in range(20):
        for rank in range(100):
            doc = f"d{q}-{rank}"
            if rank % 100 == 7 and long:
                doc = doc.ljust(3000, "x")
            score = rnd.randrange(30) / 10
            run.append((q, doc, score))
            if rnd.random() < 0.3:
                qrels.append(f"{q} 0 {doc} {rnd.randrange(3)}\n")
    run.sort(key=lambda row: (row[0], -row[2]))
    run_path, qrels_path = tmp_path / f"run{long}", tmp_path / f"qrels{long}"
    run_path.write_text("".join(f"{q} Q0 {d} 1 {s} r\n" for q, d, s in run))
    qrels_path.write_text("".join(qrels))
    return str(qrels_path), str(run_path)


def test_a_few_long_ids_are_read_as_objects_and_evaluate_as_fixed_width(tmp_path, monkeypatch) -> None:
    qrels, run = _long_id_files(tmp_path, long=True)
    columns = read_run_columns(run)
    assert columns.doc_ids.dtype == object and columns.query_ids.dtype.kind == "S"
    measures = ["AP", "nDCG@10", "P@5", "RR", "Bpref", "NumRelRet"]
    loose = SetEvaluator.from_trec(qrels, run)
    monkeypatch.setattr(tokens_module, "_WIDE_ID", 10**9)  # the fixed-width path, for the same files
    assert read_run_columns(run).doc_ids.dtype.kind == "S"
    fixed = SetEvaluator.from_trec(qrels, run)
    for measure in measures:
        assert loose.per_query(measure) == fixed.per_query(measure), measure
    assert loose["3"].relevant_retrieved_documents() == fixed["3"].relevant_retrieved_documents()


def test_run_queries_of_every_width_are_found(tmp_path) -> None:
    """Query ids up to 8 bytes are looked up as words, longer ones in a hash table: both find exactly
    the judged queries, whatever the run's order."""
    judged = ["1", "10", "2", "abcdefgh", "abcdefghi", "zz"]
    qrels = "".join(f"{q} 0 d 1\n" for q in judged)
    for run_queries in (["2", "1", "abcdefghi", "x", "10"], ["zz", "abcdefgh", "3"], ["abcdefghij", "1"]):
        run = "".join(f"{q} Q0 d 1 1.0 r\n" for q in run_queries)
        ev = SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO(run))
        assert ev.query_ids == sorted(judged, key=str.encode)
        assert sorted(q for q in ev.query_ids if ev.per_query("NumRet")[q]) == sorted(set(run_queries) & set(judged))
        assert ev.not_judged == sorted(set(run_queries) - set(judged), key=str.encode)


def test_qrels_read_once_are_prepared_once(tmp_path) -> None:
    """Runs built against the same read qrels share one preparation; columns that can be written
    are never reused (they could change between two runs)."""
    qrels_path, run_path = _long_id_files(tmp_path, long=False)
    qrels = read_qrels_columns(qrels_path)
    first = prepared_qrels(qrels, None, "error")
    assert prepared_qrels(qrels, None, "error") is first
    assert prepared_qrels(qrels, None, "first") is not first
    again = [SetEvaluator.from_columns(qrels, read_run_columns(run_path)).per_query("AP") for _ in range(2)]
    writable = type(qrels)(qrels.query_ids.copy(), qrels.doc_ids.copy(), qrels.relevance.copy(), qrels.lines.copy())
    assert prepared_qrels(writable, None, "error") is not prepared_qrels(writable, None, "error")
    fresh = SetEvaluator.from_columns(writable, read_run_columns(run_path)).per_query("AP")
    assert again[0] == again[1] == fresh


def test_small_files_and_one_cpu_are_read_on_the_calling_thread(tmp_path, monkeypatch) -> None:
    """Below _POOL_FROM bytes (a file's size, or the bytes of a stream read so far), or on one CPU, the
    thread pool is never started; a file or stream beyond it is parsed on the pool (a stream only from
    there on); both ways read the same columns."""
    qrels_path, run_path = _long_id_files(tmp_path, long=False)
    big = tmp_path / "big.run"
    big.write_text(Path(run_path).read_text() * 40)  # several blocks
    size = big.stat().st_size
    monkeypatch.setattr(parse_module, "_BLOCK", 4096)
    monkeypatch.setattr(parse_module, "_threads", lambda: 3)
    pool = parse_module._parsed_on_threads
    pooled: list[int] = []  # lines numbered before the pool took over, for each read that used it

    def spy(blocks: object, parse: object, numbered: parse_module._Numbering, threads: int) -> object:
        pooled.append(numbered.lines_before)
        return pool(blocks, parse, numbered, threads)  # type: ignore[arg-type]

    monkeypatch.setattr(parse_module, "_parsed_on_threads", spy)
    monkeypatch.setattr(parse_module, "_POOL_FROM", size + 1)
    on_caller = read_run_columns(str(big), with_ranks=True)
    read_qrels_columns(qrels_path)
    with big.open("rb") as stream:  # a stream of unknown size: decided by the bytes read
        from_stream = read_run_columns(stream, with_ranks=True)
    assert pooled == []
    monkeypatch.setattr(parse_module, "_POOL_FROM", size)
    on_threads = read_run_columns(str(big), with_ranks=True)
    assert pooled == [0]  # a file's known size starts the pool at its first block
    monkeypatch.setattr(parse_module, "_POOL_FROM", size // 2)
    with big.open("rb") as stream:
        from_stream_on_threads = read_run_columns(stream, with_ranks=True)
    assert len(pooled) == 2 and 0 < pooled[1] < len(on_caller.doc_ids)  # the rest of the stream went to the pool
    monkeypatch.setattr(parse_module, "_threads", lambda: 1)
    single = read_run_columns(str(big), with_ranks=True)
    assert len(pooled) == 2
    for name in ("query_ids", "doc_ids", "scores", "lines", "ranks"):
        for other in (on_threads, from_stream, from_stream_on_threads, single):
            assert np.array_equal(getattr(other, name), getattr(on_caller, name)), name


def test_reads_that_may_go_to_the_pool_use_larger_blocks(tmp_path, monkeypatch) -> None:
    """Blocks of _BLOCK bytes on the calling thread; twice that where the pool may parse them (a file of
    _POOL_FROM bytes or more, or a stream on several CPUs), and the columns read are the same."""
    _, run_path = _long_id_files(tmp_path, long=False)
    size = Path(run_path).stat().st_size
    monkeypatch.setattr(parse_module, "_BLOCK", 1024)
    blocks = parse_module._blocks  # (imported by _parse: patched there)
    largest: list[int | None] = []

    def spy(source: object, biggest: int | None = None) -> object:
        largest.append(biggest)
        return blocks(source, biggest)  # type: ignore[arg-type]

    monkeypatch.setattr(parse_module, "_blocks", spy)
    reads = []
    for threads, pool_from, stream in [(3, size + 1, False), (1, 0, True), (3, size, False), (3, size + 1, True)]:
        monkeypatch.setattr(parse_module, "_threads", lambda threads=threads: threads)
        monkeypatch.setattr(parse_module, "_POOL_FROM", pool_from)
        with Path(run_path).open("rb") as handle:
            reads.append(read_run_columns(handle if stream else run_path))
    assert largest == [1024, 1024, 2048, 2048]
    for other in reads[1:]:
        assert np.array_equal(other.doc_ids, reads[0].doc_ids) and np.array_equal(other.lines, reads[0].lines)


def test_judgments_are_listed_by_doc_id() -> None:
    """Judged rows keep their input order inside the batch; the per-query lists sort them by id."""
    qrels = "q 0 c 1\nq 0 a 0\nq 0 b 2\n"
    ev = SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO("q Q0 a 1 1 r\n"))["q"]
    assert [j.doc_id for j in ev.judgments()] == ["a", "b", "c"]
    assert [d.doc_id for d in ev.relevant_missed_documents()] == ["b", "c"]


def test_build_is_the_same_with_and_without_a_handoff_for_long_ids(tmp_path) -> None:
    qrels_path, run_path = _long_id_files(tmp_path, long=True)
    qrels = read_qrels_columns(qrels_path)
    batch, _ = build_batch(qrels, read_run_columns(run_path))
    assert batch.doc_ids.dtype == object and len(batch.doc_ids) == 2000


@pytest.mark.parametrize("values", [["0", "1", "2", "9"], ["0", "1", "-1", "3"], ["10", "2", "0", "+1"], ["3", "1", "2", "07"]])
def test_relevance_read_digit_by_digit_or_parsed_gives_the_integers(values: list[str]) -> None:
    """Single-digit relevance is read byte by byte; anything else (a sign, two digits) is parsed."""
    qrels = "".join(f"q 0 d{i} {value}\n" for i, value in enumerate(values))
    assert read_qrels_columns(io.StringIO(qrels)).relevance.tolist() == [int(v) for v in values]


def test_a_non_digit_relevance_is_still_an_error() -> None:
    with pytest.raises(Exception, match=r"<stream>:2: relevance must be a finite number"):
        read_qrels_columns(io.BytesIO(b"q 0 a 1\nq 0 b x\n"))


def test_long_query_ids_and_subtopics_evaluate_as_fixed_width(tmp_path, monkeypatch) -> None:
    """Query ids (and the subtopic column) with a few very long ones take the same path as document ids."""
    rnd = random.Random(5)
    queries = [f"q{i}" for i in range(30)] + ["Q" * 900, "Q" * 900 + "b"]
    qrels = "".join(f"{q} {rnd.randrange(3)} d{j} {rnd.randrange(3)}\n" for q in queries for j in range(8)
                    if rnd.random() < 0.6)
    run = "".join(f"{q} Q0 d{j} {j + 1} {rnd.randrange(4) / 2} r\n" for q in queries[:-3] + queries[-2:]
                  for j in range(10))
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    measures = ["AP", "nDCG@10", "P@5", "alpha_nDCG@10"]
    loose = SetEvaluator.from_trec(str(tmp_path / "q"), str(tmp_path / "r"), subtopics=True)
    assert read_run_columns(str(tmp_path / "r")).query_ids.dtype == object
    monkeypatch.setattr(tokens_module, "_WIDE_ID", 10**9)
    fixed = SetEvaluator.from_trec(str(tmp_path / "q"), str(tmp_path / "r"), subtopics=True)
    assert loose.query_ids == fixed.query_ids and loose.not_judged == fixed.not_judged
    for measure in measures:
        assert loose.per_query(measure) == fixed.per_query(measure), measure


def _options(parser: object) -> dict[str, list[tuple[object, ...]]]:
    """Every (sub)command's options, for comparing two parsers."""
    import argparse

    found: dict[str, list[tuple[object, ...]]] = {}

    def walk(p: argparse.ArgumentParser, name: str) -> None:
        found[name] = [(tuple(a.option_strings), a.dest, a.default, a.help) for a in p._actions]
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    walk(child, f"{name} {sub}")

    walk(parser, "")  # type: ignore[arg-type]
    return found


def test_a_command_built_alone_has_the_options_of_the_full_parser() -> None:
    """build_parser(command) builds that command alone, exactly as the full parser builds it."""
    from retrieval_eval.cli import COMMANDS, build_parser

    full = _options(build_parser())
    assert sorted({name.split()[0] for name in full if name}) == sorted(COMMANDS)
    for command in COMMANDS:
        alone = _options(build_parser(command))
        assert alone == {name: opts for name, opts in full.items() if name.split()[:1] in ([], [command])}


def test_the_summary_alone_keeps_no_per_query_arrays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """evaluate without -q prints each measure's summary and frees its per-query array; with -q the same
    summary lines follow the per-query ones."""
    import retrieval_eval.evaluators.set as evaluator_module
    from retrieval_eval.cli import main

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq3 0 d 1\n")
    run.write_text("q1 Q0 b 1 2 r\nq1 Q0 a 2 1 r\nq2 Q0 c 1 1 r\nq2 Q0 z 2 0.5 r\n")
    kept: list[int] = []
    original = evaluator_module.SetEvaluator._summaries

    def spy(self: evaluator_module.SetEvaluator, measures: Any, *, keep: bool = False) -> list[float]:
        values = original(self, measures, keep=keep)
        kept.append(len(self._values))
        return values

    monkeypatch.setattr(evaluator_module.SetEvaluator, "_summaries", spy)
    assert main(["evaluate", "-m", "official", "-m", "ndcg_cut.10", str(qrels), str(run)]) == 0
    summary = capsys.readouterr().out
    assert kept and set(kept) == {0}  # the output's summaries, then the unjudged note's (which reuses them)
    first = len(kept)
    assert main(["evaluate", "-q", "-m", "official", "-m", "ndcg_cut.10", str(qrels), str(run)]) == 0
    assert kept[first] > 25  # with -q the arrays stay, for the per-query lines
    per_query = capsys.readouterr().out
    assert summary.splitlines() == [line for line in per_query.splitlines() if "\tall\t" in line]
    assert len(summary.splitlines()) > 25


@pytest.mark.parametrize("seed", range(4))
def test_segment_suffix_max_is_the_max_of_every_rest_of_segment(seed: int) -> None:
    """The doubling passes give, for every row, the plain max over the rest of its segment (IPrec reads them)."""
    from retrieval_eval.engine.segments import segment_suffix_max

    rnd = np.random.default_rng(seed)
    lengths = rnd.integers(0, 40, 30)
    lengths[::7] = 0  # empty segments among the others
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    values = np.round(rnd.random(int(offsets[-1])), seed)  # ties when rounded to few decimals
    expected = [values[i:end].max() for start, end in itertools.pairwise(offsets) for i in range(start, end)]
    assert segment_suffix_max(values, offsets).tolist() == expected


def test_the_cli_knows_the_table_formats_without_importing_them() -> None:
    """evaluate imports the table writer (and csv) only for a table format: its list must match the writer's."""
    from retrieval_eval.cli import _options
    from retrieval_eval.report import tables

    assert _options._TABLE_FORMATS == tables.FORMATS


def _objects(values: list[bytes]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def test_bytes_objects_hash_in_chunks_like_fixed_width_ids(monkeypatch) -> None:
    """Short ids hashed from a fixed-width copy and long ones word by word, chunk by chunk: the hash
    of every id is that of the same id in a fixed-width array (ids of 64 and 65 bytes, a long id that
    is a prefix of another, empty ids and trailing bytes that look like padding included)."""
    monkeypatch.setattr(ids_module, "_OBJECT_CHUNK", 7)
    rnd = random.Random(8)
    base = [b"", b"a", b"a\x01", b"x" * 64, b"x" * 65, b"y" * 300, b"y" * 300 + b"z", b"y" * 299, b"\xff" * 9]
    values = [rnd.choice(base) + (str(rnd.randrange(5)).encode() if rnd.random() < 0.5 else b"")
              for _ in range(100)]
    assert _id_hash(_objects(values)).tolist() == _id_hash(np.array(values)).tolist()
    only_long = [b"l" * 100 + bytes([i]) for i in range(1, 20)]  # chunks with no short id at all
    assert _id_hash(_objects(only_long)).tolist() == _id_hash(np.array(only_long)).tolist()


@pytest.mark.parametrize("seed", range(3))
def test_pair_index_finds_the_same_rows_in_chunks(seed: int, monkeypatch) -> None:
    rnd = random.Random(seed)
    query, docs = _random_pairs(rnd, 300, 5)
    keep = np.unique(np.char.add(query.astype("S2"), docs), return_index=True)[1]
    index = PairIndex(query[keep], docs[keep])
    needles_q, needles_d = _random_pairs(rnd, 400, 6)
    whole = index.find(needles_q, needles_d)
    monkeypatch.setattr(ids_module, "_FIND_CHUNK", 17)
    chunked = index.find(needles_q, needles_d)
    assert whole[0].tolist() == chunked[0].tolist() and whole[1].tolist() == chunked[1].tolist()
    assert len(whole[0])  # the needles do hit the table


def _random_long_id_files(tmp_path: Path, seed: int) -> tuple[str, str, str]:
    """A run and qrels with a few long ids among short ones: long ids tied on score with each other
    and with short ones, a long id that is a prefix of another, and judgments of long ids."""
    rnd = random.Random(seed)
    long_a = "L" * 700
    pool = [f"d{i}" for i in range(60)] + [long_a, long_a + "b", long_a + "a", "M" * 2000, "L" * 699]
    run, qrels = [], []
    for q in range(25):
        docs = rnd.sample(pool, 30)
        scores = sorted((rnd.randrange(6) / 2 for _ in docs), reverse=True)
        run += [f"q{q} Q0 {d} {r + 1} {s} run\n" for r, (d, s) in enumerate(zip(docs, scores))]
        qrels += [f"q{q} 0 {d} {rnd.randrange(3)}\n" for d in rnd.sample(pool, 12)]
    paths = [tmp_path / name for name in ("qrels", "run", "dup")]
    paths[0].write_text("".join(qrels))
    paths[1].write_text("".join(run))
    first_long = next(i for i, line in enumerate(run) if len(line) > 600)
    at = max(first_long + 1, 40)  # a long id twice in its query: reported at line at + 1
    paths[2].write_text("".join(run[:at] + [run[first_long]] + run[at:]))
    return str(paths[0]), str(paths[1]), str(paths[2])


@pytest.mark.parametrize("seed", range(3))
def test_long_ids_read_in_small_blocks_on_threads_evaluate_as_fixed_width(tmp_path, monkeypatch, seed) -> None:
    """Many small blocks (some with a long id, some without) parsed on threads: the scores, the order of
    tied documents, the judged documents and the duplicate error are those of the fixed-width path."""
    qrels, run, dup = _random_long_id_files(tmp_path, seed)
    assert " " + "L" * 700 in Path(run).read_text()
    monkeypatch.setattr(parse_module, "_BLOCK", 4096)
    monkeypatch.setattr(source_module, "_FIRST_BLOCK", 1024)
    monkeypatch.setattr(parse_module, "_threads", lambda: 3)
    monkeypatch.setattr(parse_module, "_POOL_FROM", 0)
    monkeypatch.setattr(ids_module, "_OBJECT_CHUNK", 50)
    monkeypatch.setattr(ids_module, "_FIND_CHUNK", 64)
    assert read_run_columns(run).doc_ids.dtype == object and read_qrels_columns(qrels).doc_ids.dtype == object
    results = []
    for wide_id in (tokens_module._WIDE_ID, 10**9):  # objects, then the fixed-width path
        monkeypatch.setattr(tokens_module, "_WIDE_ID", wide_id)
        evaluator = SetEvaluator.from_trec(qrels, run)
        ranked = {q: evaluator[q].retrieved_documents() for q in evaluator.query_ids}
        judged = {q: evaluator[q].relevant_retrieved_documents() for q in evaluator.query_ids}
        scores = {m: evaluator.per_query(m) for m in ("AP", "nDCG@10", "P@5", "RR", "Bpref")}
        with pytest.raises(Exception) as error:
            SetEvaluator.from_trec(qrels, dup)
        results.append((ranked, judged, scores, str(error.value)))
    assert results[0] == results[1]
    lines = Path(dup).read_text().splitlines()
    second = next(i for i, line in enumerate(lines) if lines.index(line) != i) + 1
    assert f"{dup}:{second}: duplicate document" in results[0][3] and len(lines[second - 1]) > 600


def test_a_long_id_in_the_last_block_does_not_widen_the_column(tmp_path: Path) -> None:
    """The per-block rule keeps a long id fixed-width in a block of few lines (the last one), and the
    column then took its width on every row (15.7 GB for a 7 MB run with one 20,000-byte id at the
    end): such a column turns to bytes objects instead, with the same results."""
    from retrieval_eval.io.formats import read_run_columns

    long_id = "x" * 5000
    lines = [f"q{i % 50} Q0 d{i} {i} {1.0 / (i + 1):.6f} r" for i in range(30_000)]
    last = tmp_path / "last.run"
    last.write_text("\n".join([*lines, f"q1 Q0 {long_id} 9 0.5 r"]) + "\n")
    first = tmp_path / "first.run"
    first.write_text("\n".join([f"q1 Q0 {long_id} 9 0.5 r", *lines]) + "\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(50)) + f"q1 0 {long_id} 2\n")
    columns = read_run_columns(last)
    assert columns.doc_ids.dtype.kind == "O" and columns.doc_ids[-1] == long_id.encode()
    assert columns.doc_ids[0] == b"d0" and len(columns.doc_ids) == 30_001
    a, b = SetEvaluator.from_trec(qrels, last), SetEvaluator.from_trec(qrels, first)
    for measure in ("AP", "nDCG@10", "P@5", "NumRelRet", "Bpref"):
        assert a.per_query(measure) == b.per_query(measure), measure
    assert a["q1"].judgment(long_id) == 2


@pytest.mark.parametrize("large_read", [0, 1 << 20])
def test_only_a_large_run_read_hands_its_memory_back(tmp_path: Path, large_read: int, monkeypatch) -> None:
    """Freed memory goes back to the OS after reading more rows than _LARGE_READ, not after a small
    read (whose few MB the build reuses); the columns are the same either way."""
    import retrieval_eval.io.trec as trec_module

    calls: list[int] = []
    monkeypatch.setattr(trec_module, "_LARGE_READ", large_read)
    monkeypatch.setattr(trec_module, "release_freed_memory", lambda: calls.append(1))
    path = tmp_path / "run"
    path.write_text("q1 Q0 a 1 2.5 r\nq1 Q0 b 2 1.5 r\n")
    run = read_run_columns(str(path))
    assert calls == ([1] if large_read == 0 else [])
    assert run.doc_ids.tolist() == [b"a", b"b"] and run.scores.tolist() == [2.5, 1.5]



@pytest.mark.parametrize("seed", range(6))
def test_counts_by_offsets_equal_counts_by_query_index(seed: int) -> None:
    """offsets_count (one reduceat over the non-empty segments) against segment_count, with empty
    segments first, among the others and last, which reduceat alone would get wrong."""
    from retrieval_eval.engine.segments import long_segments, offsets_count, segment_count, segment_ids

    rnd = np.random.default_rng(seed)
    lengths = rnd.integers(0, 60 if seed % 2 else 3, 40)
    lengths[[0, 7, 8, -1]] = 0
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    mask = rnd.random(int(offsets[-1])) < 0.4
    expected = segment_count(mask, segment_ids(offsets), len(lengths))
    assert offsets_count(mask, offsets).tolist() == expected.tolist()
    assert long_segments(offsets) == (seed % 2 == 1)
    assert offsets_count(np.zeros(0, dtype=bool), np.zeros(4, dtype=np.int64)).tolist() == [0, 0, 0]
    for i in range(len(lengths)):  # one segment alone (a RetrievalEvaluator's query): its own branch
        one = offsets[i : i + 2]
        assert offsets_count(mask, one).tolist() == [int(expected[i])]
        assert offsets_count(mask, one).dtype == np.int64


@pytest.mark.parametrize("seed", range(4))
def test_ideal_lists_alike_with_long_and_short_segments(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ideal list made from per-query counts of positive judgments (long segments) against the one
    made from the query index (short ones), for default and custom gains, and against a sort per query."""
    import retrieval_eval.engine.segments as segments_module
    from retrieval_eval import SetEvaluator
    from retrieval_eval.measures.gains import Gains, ideal_list

    rnd = np.random.default_rng(seed)
    qrels = {f"q{q}": {f"d{d}": int(rnd.integers(-1, 4)) for d in range(int(rnd.integers(0, 30)))} for q in range(15)}
    run = {f"q{q}": {f"d{d}": float(rnd.random()) for d in range(10)} for q in range(15)}
    for gains in (None, {1: 5.0, 3: 0.5}, {0: 1.0}):
        lists = []
        for threshold in (0, 10**9):
            monkeypatch.setattr(segments_module, "_LONG_SEGMENTS", threshold)
            batch = SetEvaluator.from_dict(qrels, run)._batch
            ideal = ideal_list(batch, None if gains is None else Gains(gains))
            lists.append([ideal.gain[a:b].tolist() for a, b in itertools.pairwise(ideal.offsets.tolist())])
            assert ideal.segment.tolist() == np.repeat(np.arange(batch.n_queries), np.diff(ideal.offsets)).tolist()
        table = gains or {}
        expected = [sorted((g for g in (table.get(v, float(max(v, 0))) for v in qrels[q].values()) if g > 0), reverse=True)
                    for q in batch.query_ids]
        assert lists[0] == lists[1] == expected


@pytest.mark.parametrize("long", [False, True])
def test_a_batch_counts_judgments_alike_with_long_and_short_segments(long: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    import retrieval_eval.engine.segments as segments_module
    from retrieval_eval import SetEvaluator

    qrels = {f"q{q}": {f"d{d}": (d * q) % 4 - 1 for d in range(q * 5)} for q in range(12)}
    run = {f"q{q}": {f"d{d}": float(d % 3) for d in range(0, q * 5, 2)} for q in range(12)}
    monkeypatch.setattr(segments_module, "_LONG_SEGMENTS", 0 if long else 10**9)
    batch = SetEvaluator.from_dict(qrels, run)._batch
    order = batch.query_ids
    for rel in (1, 2):
        assert batch.n_relevant(rel).tolist() == [sum(v >= rel for v in qrels[q].values()) for q in order]
        assert batch.n_nonrelevant(rel).tolist() == [sum(0 <= v < rel for v in qrels[q].values()) for q in order]


def test_the_judgments_read_are_shared_and_a_caller_s_columns_copied(tmp_path: Path) -> None:
    """The readers' read-only relevance column is the batch's (no copy of 90 MB at 10 M judgments); a
    writable column given by a caller is copied, so changing it afterwards changes nothing."""
    from retrieval_eval import SetEvaluator
    from retrieval_eval.io.formats import read_qrels_columns, read_run_columns
    from retrieval_eval.model import QrelsColumns

    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\nq2 Q0 c 1 1 r\n")
    read = read_qrels_columns(tmp_path / "qrels")
    runs = SetEvaluator.from_columns(read, read_run_columns(tmp_path / "run"))
    assert np.shares_memory(runs._batch.judged_relevance, read.relevance)
    mine = QrelsColumns(read.query_ids, read.doc_ids, read.relevance.copy(), read.lines)
    runs = SetEvaluator.from_columns(mine, read_run_columns(tmp_path / "run"))
    before = runs.aggregate("AP")
    mine.relevance[:] = 0
    assert not np.shares_memory(runs._batch.judged_relevance, mine.relevance)
    assert runs.aggregate("AP") == before == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_pair_index_with_counts_given_finds_the_same(seed: int) -> None:
    """Counts passed in (as the prepared qrels do, with queries past the last judged one) give the
    same table lookups as counts taken from the codes; an empty table finds nothing."""
    rnd = random.Random(seed)
    query, docs = _random_pairs(rnd, 300, 5)
    keep = np.unique(np.char.add(query.astype("S2"), docs), return_index=True)[1]
    query, docs = query[keep], docs[keep]
    counted = PairIndex(query, docs)
    given = PairIndex(query, docs, np.bincount(query, minlength=8))
    needles_q, needles_d = _random_pairs(rnd, 400, 8)
    whole, passed = counted.find(needles_q, needles_d), given.find(needles_q, needles_d)
    assert whole[0].tolist() == passed[0].tolist() and whole[1].tolist() == passed[1].tolist() and len(whole[0])
    empty = PairIndex(np.zeros(0, dtype=np.int64), docs[:0], np.zeros(3, dtype=np.int64))
    assert [a.tolist() for a in empty.find(needles_q, needles_d)] == [[], []]


@pytest.mark.parametrize("layout", ["grouped in byte order", "grouped, queries in another order", "interleaved"])
@pytest.mark.parametrize("repeat", [False, True])
def test_prepared_qrels_group_each_query_in_input_order(layout: str, repeat: bool) -> None:
    """The prepared judgments, whatever the layout (no move, blocks moved whole, rows sorted): each
    query's rows in input order, its counts, and values that are not the caller's array; a repeated
    judgment is reported at its own line whichever way the rows moved."""
    from retrieval_eval.engine.judgments import _prepare_qrels
    from retrieval_eval.model import InputFormatError, QrelsColumns

    rnd = random.Random(len(layout))
    rows = [(q, f"d{rnd.randrange(10 ** 6)}", rnd.randrange(-1, 3)) for q, n in (("q1", 30), ("q2", 40), ("q3", 50))
            for _ in range(n)]
    if layout == "grouped, queries in another order":
        rows = rows[70:] + rows[:70]  # q3, q1, q2
    elif layout == "interleaved":
        rnd.shuffle(rows)
    if repeat:
        rows.append(rows[5])
    relevance = np.array([r for _, _, r in rows], dtype=np.int64)
    qrels = QrelsColumns(np.array([q for q, _, _ in rows], dtype="S2"), np.array([d for _, d, _ in rows]), relevance,
                         np.arange(1, len(rows) + 1))
    if repeat:
        with pytest.raises(InputFormatError, match=rf":{len(rows)}: duplicate judgment .*first at line 6\)"):
            _prepare_qrels(qrels, None, "error")
        rows.pop()
    prepared = _prepare_qrels(qrels, None, "first")
    expected = [[(d, r) for q, d, r in rows if q == query] for query in ("q1", "q2", "q3")]
    assert prepared.query_vocab.tolist() == [b"q1", b"q2", b"q3"]
    assert np.diff(prepared.offsets).tolist() == [len(e) for e in expected]
    got = list(zip(prepared.doc_ids.astype(str).tolist(), prepared.relevance.tolist()))
    assert got == [pair for e in expected for pair in e]
    relevance[:] = 7  # the caller's column changes: the prepared values do not
    assert prepared.relevance.tolist() == [r for e in expected for _, r in e]
    relevance.flags.writeable = False  # a read-only column cannot change: shared when it needs no moving
    shared = np.shares_memory(_prepare_qrels(qrels, None, "first").relevance, relevance)
    assert shared == (layout == "grouped in byte order" and not repeat)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 9), st.integers(-1, 2)), max_size=25),
       st.lists(st.tuples(st.integers(0, 4), st.integers(0, 9), st.sampled_from([0.5, 1.0, 2.0])), max_size=40),
       st.sampled_from([None, 2]), st.booleans())
def test_build_is_the_plain_ranking_and_join(judgments, ranked, max_depth, judged_only) -> None:
    """The batch against a plain Python build: queries split into several runs of rows, repeated
    documents (the first line kept), ties by id, a depth cut and judged rows only."""
    from retrieval_eval.model import QrelsColumns, RunColumns

    qrels = {}
    for q, d, r in judgments:
        qrels.setdefault((f"q{q}", f"d{d}"), r)  # one judgment per pair
    if not qrels:
        return
    pairs = list(qrels)
    qrels_columns = QrelsColumns(np.array([q for q, _ in pairs], dtype="S2"),
                                 np.array([d for _, d in pairs], dtype="S2"),
                                 np.array(list(qrels.values()), dtype=np.int64), np.arange(1, len(pairs) + 1))
    run = RunColumns(np.array([f"q{q}" for q, _, _ in ranked], dtype="S2"),
                     np.array([f"d{d}" for _, d, _ in ranked], dtype="S2") if ranked else np.zeros(0, dtype="S2"),
                     np.array([s for _, _, s in ranked], dtype=np.float64), np.arange(1, len(ranked) + 1))
    from unittest import mock

    import retrieval_eval.engine.judgments as judgments_module

    batches = []
    for comparisons in (4, 0):  # the join by comparing ids, then by the hash table (with the build's keys)
        with mock.patch.object(judgments_module, "_SCAN_COMPARISONS", comparisons):
            batches.append(build_batch(qrels_columns, run, duplicates="first", max_depth=max_depth,
                                       judged_only=judged_only)[0])
    queries = sorted({q for q, _ in pairs})
    first: dict[tuple[str, str], float] = {}
    for q, d, s in ranked:
        first.setdefault((f"q{q}", f"d{d}"), s)
    expected_offsets, expected = [0], []
    for query in queries:
        rows = sorted(((d, s) for (q, d), s in first.items() if q == query),
                      key=lambda r: (-r[1], [-ord(c) for c in r[0]]))
        rows = rows[:max_depth] if max_depth is not None else rows
        labelled = [(d, s, qrels[query, d] if qrels.get((query, d), -1) >= 0 else (-2 if (query, d) in qrels else -1))
                    for d, s in rows]
        labelled = [row for row in labelled if row[2] >= 0] if judged_only else labelled
        expected += labelled
        expected_offsets.append(len(expected))
    for batch in batches:
        assert batch.query_vocab.astype(str).tolist() == queries
        assert batch.offsets.tolist() == expected_offsets
        assert list(zip(batch.doc_ids.astype(str).tolist(), batch.scores.tolist(), batch.labels.tolist())) == expected


@pytest.mark.parametrize("seed", range(3))
def test_pair_index_tells_apart_keys_whose_tags_agree(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys whose top bits (the tag a slot keeps) all agree: the full keys, then the ids, decide."""
    real = ids_module.pair_keys
    monkeypatch.setattr(ids_module, "pair_keys",
                        lambda query, ids, words=None: real(query, ids, words) & np.uint64(2**56 - 1))
    rnd = random.Random(seed)
    query, docs = _random_pairs(rnd, 300, 3)
    keep = np.unique(np.char.add(query.astype("S2"), docs), return_index=True)[1]
    index = PairIndex(query[keep], docs[keep])
    assert len(set((index.table[index.table >= 0] >> index.row_bits).tolist())) == 1  # one tag for all
    needles_q, needles_d = _random_pairs(rnd, 400, 4)
    rows, at = index.find(needles_q, needles_d)
    judged = {pair: row for row, pair in enumerate(zip(query[keep].tolist(), docs[keep].tolist()))}
    expected = [(i, judged[pair]) for i, pair in enumerate(zip(needles_q.tolist(), needles_d.tolist()))
                if pair in judged]
    assert list(zip(rows.tolist(), at.tolist())) == expected and expected


def test_the_duplicate_check_sorts_its_own_keys_in_place() -> None:
    """Without the caller's keys, the run's duplicate check makes 8 bytes a row and sorts them in place:
    a sorted copy would add as much again to the build's peak (55 MB on msmarco's 7 M rows)."""
    import tracemalloc

    from retrieval_eval.engine.ids import _check_duplicates

    n = 200_000
    query = np.repeat(np.arange(200, dtype=np.int64), n // 200)
    ids = np.array([b"d%d" % i for i in range(n)], dtype="S8")
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        keep = _check_duplicates(query, ids, np.arange(n), "run", "line", "document", np.arange(200), "error")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert keep.all()
    # The keys and their hashing's temporaries (2.25 x 8 bytes a row, measured); a sorted copy of the
    # keys made 3.1 x.
    assert peak < 8 * n * 2.7, peak


@pytest.mark.parametrize("cpus", [1, 2])
def test_the_duplicate_check_in_pieces_holds_the_keys_of_a_few_pieces(monkeypatch, cpus: int) -> None:  # type: ignore[no-untyped-def]
    """Cut between queries (as the build cuts a run file's rows), the check holds the keys of the pieces
    in hand only, on the calling thread or on two: less than the 8 bytes a row of all the keys at once."""
    import tracemalloc

    import retrieval_eval.engine.threads as threads_module
    from retrieval_eval.engine.build import _pieces
    from retrieval_eval.engine.ids import _check_duplicates

    monkeypatch.setattr(threads_module, "usable_cpus", lambda: cpus)
    monkeypatch.setattr(threads_module, "THREADED_ROWS", 0)
    n = 400_000
    query = np.repeat(np.arange(400, dtype=np.int64), n // 400)
    ids = np.array([b"d%d" % i for i in range(n)], dtype="S8")
    pieces, lines = _pieces(np.arange(0, n + 1, n // 400), rows=1 << 13), np.arange(n)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        keep = _check_duplicates(query, ids, lines, "run", "line", "document", np.arange(400), "error", pieces=pieces)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert keep.all()
    assert peak < 8 * n * 0.3, peak  # the mask kept (1 byte a row), the keys of at most 3 pieces (0.16 each)


def _batch_fields(qrels: Any, run: Any, **options: Any) -> tuple[list[Any], str | None]:
    """A build's batch and report as plain lists, or the error it raised."""
    from retrieval_eval.model import InputFormatError

    try:
        batch, report = build_batch(qrels, run, **options)
    except InputFormatError as error:
        return [], str(error)
    columns = (batch.query_vocab, batch.offsets, batch.labels, batch.doc_ids, batch.scores, batch.in_run)
    return [c.tolist() for c in columns] + [report.not_judged, report.missing_from_run], None


@pytest.mark.parametrize("layout", ["in order", "holes", "unjudged between", "shuffled", "a query twice",
                                    "a pair twice", "split by an unjudged query", "empty"])
@pytest.mark.parametrize("options", [{}, {"order": "given"}, {"order": "rank"}, {"max_depth": 0},
                                     {"judged_only": True, "complete": False}, {"duplicates": "first"},
                                     {"queries": ["q05x", "q07x", "q29x", "q30"]}])  # asked for, no judgments
def test_one_row_per_query_builds_as_the_general_path(layout: str, options: dict[str, Any],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of one row per query (a log of one-query sessions) skips the duplicate check, the count and
    the ordering when its queries come in code order; the batch, the report and any error are those of
    the general path (which is checked against a plain Python build above)."""
    import retrieval_eval.engine.build as build_module
    from retrieval_eval.model import QrelsColumns, RunColumns

    rnd = random.Random(f"{layout}{options}")
    judged = [(f"q{q:02d}", f"d{rnd.randrange(6)}{j}", rnd.randrange(-1, 3)) for q in range(30)
              for j in range(rnd.randrange(1, 4))]
    qrels = QrelsColumns(*(np.array(c, dtype="S8") for c in list(zip(*judged))[:2]),
                         np.array([r for _, _, r in judged], dtype=np.int64), np.arange(1, len(judged) + 1))
    queries = [f"q{q:02d}" for q in range(30)]
    if layout == "holes":
        queries = [q for i, q in enumerate(queries) if i % 4]
    elif layout == "unjudged between":
        queries = [q for q in queries for q in (q, q + "x")]
    elif layout == "shuffled":
        rnd.shuffle(queries)
    elif layout == "split by an unjudged query":  # every row a run of its own, a query in two of them
        queries[5:5] = ["q05", "other"]
    elif layout in ("a query twice", "a pair twice"):
        queries.append(queries[3])
    elif layout == "empty":
        queries = []
    docs = [f"d{rnd.randrange(6)}{rnd.randrange(3)}" for _ in queries]
    if layout == "a pair twice":
        docs[-1] = docs[3]
    elif layout == "a query twice":
        docs[-1] = "other"
    run = RunColumns(np.array(queries, dtype="S8"), np.array(docs, dtype="S8"),
                     np.array([rnd.choice([0.5, 1.0]) for _ in queries]), np.arange(1, len(queries) + 1),
                     ranks=np.array([rnd.randrange(1, 3) for _ in queries], dtype=np.int64))
    taken = []
    real = build_module._one_row_each

    def spy(query_code: np.ndarray, n_q: int) -> Any:
        taken.append(True)
        return real(query_code, n_q)

    monkeypatch.setattr(build_module, "_one_row_each", spy)
    fast = _batch_fields(qrels, run, **options)
    assert bool(taken) == (layout in ("in order", "holes", "unjudged between", "empty"))
    monkeypatch.setattr(build_module, "_strictly_increasing", lambda codes: False)  # the general path only
    assert fast == _batch_fields(qrels, run, **options)
    assert (fast[1] is not None) == (layout == "a pair twice" and options.get("duplicates") != "first")


@pytest.mark.parametrize("per_query", [3, 6])
@pytest.mark.parametrize("every_query", [True, False])
def test_one_row_per_query_joins_by_scan_only_with_few_judgments(per_query: int, every_query: bool) -> None:
    """With one row per query, the scan join's comparisons are the judgments of the run's queries: up
    to 4 a row it compares ids, beyond that it looks pairs up in the hash table; the labels agree."""
    from retrieval_eval.model import QrelsColumns, RunColumns

    n = 40
    judged = [(f"q{q:02d}", f"d{j}", j % 3 - 1) for q in range(n) for j in range(per_query)]  # -1: unjudged
    qrels = QrelsColumns(*(np.array(c, dtype="S8") for c in list(zip(*judged))[:2]),
                         np.array([r for _, _, r in judged], dtype=np.int64), np.arange(1, len(judged) + 1))
    for column in (qrels.query_ids, qrels.doc_ids, qrels.relevance, qrels.lines):
        column.flags.writeable = False  # as the readers return them: the build shares their preparation
    queries = [q for q in range(n) if every_query or q % 3]
    run = RunColumns(np.array([f"q{q:02d}" for q in queries], dtype="S8"),
                     np.array([f"d{q % (per_query + 1)}" for q in queries], dtype="S8"),
                     np.ones(len(queries)), np.arange(1, len(queries) + 1))
    prepared = prepared_qrels(qrels, None, "error")
    batch = build_batch(qrels, run)[0]
    assert bool(prepared._pairs) == (per_query > 4)  # the hash table, made only when the join needs it
    expected = [{-1: -2}.get(q % (per_query + 1) % 3 - 1, q % (per_query + 1) % 3 - 1)
                if q % (per_query + 1) < per_query else -1 for q in queries]
    assert {-2, -1, 0, 1} <= set(expected)
    assert batch.labels.tolist() == expected


@pytest.mark.parametrize("run_width", [0, 16, 24])
def test_run_queries_taken_as_the_judged_ones_only_when_every_byte_agrees(run_width: int) -> None:
    """A run whose query ids are the judged ones in their order takes codes 0, 1, 2... without a search;
    ids that differ past their first 8 bytes, or by a trailing byte, are looked up (and not found)."""
    from retrieval_eval.engine.build import _query_codes
    from retrieval_eval.model import QrelsColumns

    ids = [b"query-0001-a", b"query-0001-b", b"query-0002", b"query-0002\x01"]
    qrels = QrelsColumns(np.array(ids), np.array([b"d"] * 4), np.ones(4, dtype=np.int64), np.arange(1, 5))
    prepared = prepared_qrels(qrels, None, "error")
    width = f"S{run_width}" if run_width else None  # the run's column as wide as the judged one, or wider
    assert _query_codes(prepared, np.array(ids, dtype=width)).tolist() == [0, 1, 2, 3]
    for changed in ([b"query-0001-a", b"query-0001-c"] + ids[2:], ids[:3] + [b"query-0002\x02"]):
        codes = _query_codes(prepared, np.array(changed, dtype=width)).tolist()
        assert codes == [i if x in ids else -1 for i, x in enumerate(changed)]


def test_codes_in_order_are_grouped_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Query codes that never decrease (a sorted qrels file) need no order; any other layout is still
    grouped stably by the blocks or the sort."""
    import retrieval_eval.engine.order as order_module
    from retrieval_eval.engine.order import grouped_order

    real = order_module._query_blocks
    calls = []
    monkeypatch.setattr(order_module, "_query_blocks", lambda codes: calls.append(1) or real(codes))
    assert grouped_order(np.array([0, 0, 1, 3, 3, 3, 4])) is None and not calls
    for codes in ([1, 1, 0, 2], [0, 1, 0, 2, 2]):
        order = grouped_order(np.array(codes))
        assert order is not None and order.permutation().tolist() == np.argsort(codes, kind="stable").tolist()
    assert len(calls) == 2


@pytest.mark.parametrize("threshold", [1, 1 << 16])
def test_many_run_queries_out_of_order_are_looked_up_in_sorted_order(monkeypatch: pytest.MonkeyPatch,
                                                                     threshold: int) -> None:
    """A log whose queries come in another order than the judged ones (and some not judged at all):
    with the searches sorted first (threshold 1) or not (a few ids), each id finds its own code."""
    import retrieval_eval.engine.build as build_module
    from retrieval_eval.model import QrelsColumns

    monkeypatch.setattr(build_module, "_SORTED_SEARCHES", threshold)
    judged = [f"s{i:05d}".encode() for i in range(0, 4000, 2)]  # in byte order, as prepared
    qrels = QrelsColumns(np.array(judged), np.array([b"d"] * len(judged)), np.ones(len(judged), dtype=np.int64),
                         np.arange(1, len(judged) + 1))
    prepared = prepared_qrels(qrels, None, "error")
    run = [f"s{i:05d}".encode() for i in random.Random(5).sample(range(4000), 3000)] + [b"s0000", b"s03998", b"t"]
    code = {query: i for i, query in enumerate(judged)}
    searched = []
    real = build_module._search
    monkeypatch.setattr(build_module, "_search", lambda a, b: searched.append(len(b)) or real(a, b))
    codes = build_module._query_codes(prepared, np.array(run)).tolist()
    assert codes == [code.get(query, -1) for query in run] and searched == [len(run)]
    assert -1 in codes and 0 in codes
