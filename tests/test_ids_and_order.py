"""The ordering and interning primitives agree with their plain NumPy definitions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_threads import _worker_counts

from retrieval_eval.engine import order as _order
from retrieval_eval.engine.ids import PairIndex, _check_duplicates, _id_hash, _words, intern
from retrieval_eval.engine.order import _byte_ranks, _tie_order, canonical_order

ids = st.lists(st.binary(min_size=1, max_size=20).filter(lambda b: b"\0" not in b), min_size=0, max_size=60)


@settings(max_examples=200, deadline=None)
@given(ids)
def test_intern_is_np_unique_in_byte_order(values: list[bytes]) -> None:
    array = np.array(values, dtype="S20") if values else np.array([], dtype="S1")
    vocab, codes = intern(array)
    expected_vocab, expected_codes = np.unique(array, return_inverse=True)
    assert vocab.tolist() == expected_vocab.tolist()
    assert codes.tolist() == expected_codes.ravel().tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0, float("inf"), -1.0])),
                min_size=0, max_size=40),
       st.sampled_from(["shuffled", "by query and score", "blocks in any order", "blocks not by score"]),
       st.randoms(), st.booleans())
def test_canonical_order_is_the_three_key_sort(rows: list[tuple[int, float]], layout: str, rnd,
                                               force_global: bool) -> None:
    """Same as a sort on (query, -score, -doc_id bytes) whatever the input layout.

    The layouts reach every path: one sort of everything, the linear pass over query blocks that
    are already by score (in ascending or in any query order), where only tie groups move, and query
    blocks not by score, each sorted on its own (or, forced, by the one sort of everything).
    """
    if layout != "shuffled":
        rows = sorted(rows, key=lambda r: (r[0], -r[1]))
    if layout in ("blocks in any order", "blocks not by score"):
        blocks = sorted({q for q, _ in rows}, key=lambda _: rnd.random())
        rows = [r for q in blocks for r in rows if r[0] == q]
    if layout == "blocks not by score":
        rows = [r for q in blocks for r in sorted((r for r in rows if r[0] == q), key=lambda _: rnd.random())]
    monkeypatched = _order._FORCE_GLOBAL_SORT
    _order._FORCE_GLOBAL_SORT = force_global
    try:
        _check_canonical_order(rows, rnd)
    finally:
        _order._FORCE_GLOBAL_SORT = monkeypatched


def _check_canonical_order(rows: list[tuple[int, float]], rnd) -> None:
    # Distinct ids per row, some longer than 8 bytes and some prefixes of others.
    ids = [bytes(rnd.choice(b"ab") for _ in range(rnd.randint(1, 12))) + b"%d" % i for i in range(len(rows))]
    rnd.shuffle(ids)
    query = np.array([q for q, _ in rows], dtype=np.int64)
    score = np.array([s for _, s in rows], dtype=np.float64)
    expected = sorted(range(len(rows)), key=lambda i: (query[i], -score[i], [-b for b in ids[i]] + [1]))
    doc_ids = np.array(ids, dtype="S24") if ids else np.zeros(0, dtype="S1")
    order = canonical_order(query, score, doc_ids)
    assert (list(range(len(rows))) if order is None else order.permutation().tolist()) == expected
    if order is not None:  # applying the order to a column is indexing it with the permutation
        assert order.apply(doc_ids).tolist() == doc_ids[order.permutation()].tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=40).filter(lambda b: not b.endswith(b"\0")), min_size=1, max_size=60),
       st.sampled_from([2**31, 8]), st.sampled_from([None, 1, 2**40]))
def test_byte_ranks_order_ids_as_np_unique(values: list[bytes], bound: int, limit: int | None) -> None:
    """The tie sort's keys: equal for equal ids, and in the ids' byte order, with or without compaction
    between words (a small bound compacts before every product) and at the end (below ``limit``)."""
    array = np.array(values, dtype="S40")
    saved, _order._RANK_BOUND = _order._RANK_BOUND, bound
    try:
        keys, key_bound = _byte_ranks(_words(array), limit)
    finally:
        _order._RANK_BOUND = saved
    codes = np.unique(array, return_inverse=True)[1].ravel()
    assert key_bound <= max(bound if limit is None else limit, len(values))
    assert bool(np.all((keys >= 0) & (keys < key_bound)))
    assert (keys[:, None] < keys[None, :]).tolist() == (codes[:, None] < codes[None, :]).tolist()
    assert (keys[:, None] == keys[None, :]).tolist() == (codes[:, None] == codes[None, :]).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([b"", b"FBIS4-44", b"LA010189"]),
                          st.binary(max_size=10).filter(lambda b: not b.endswith(b"\0"))), min_size=1, max_size=60,
                unique_by=lambda row: (row[0], row[1] + row[2])),
       st.sampled_from([8, 24]))
def test_tie_order_sorts_by_group_then_id_descending(rows: list[tuple[int, bytes, bytes]], width: int) -> None:
    """Tied rows by group, then id bytes descending: ids sharing their first word (a common prefix) are
    sorted again on the rest, ids of one word need no second pass."""
    rows = [(group, prefix + rest) for group, prefix, rest in rows if len(prefix + rest) <= width]
    if not rows:
        return
    rows.sort(key=lambda row: row[0])  # tie groups are runs of rows
    group = np.array([g for g, _ in rows], dtype=np.int64)
    ids = np.array([i for _, i in rows], dtype=f"S{width}")
    expected = sorted(range(len(rows)), key=lambda i: (rows[i][0], [-b for b in rows[i][1]] + [1]))
    assert _tie_order(group, _words(ids)).tolist() == expected


@settings(max_examples=200, deadline=None)
@given(ids, ids, st.integers(1, 5))
def test_lookup_finds_exactly_the_ids_in_the_vocabulary(vocab: list[bytes], needles: list[bytes], repeat: int) -> None:
    """The judged-pair table's lookup (one query) equals a dict lookup, whatever the widths of the two arrays."""
    distinct = sorted(set(vocab))
    vocab_array = np.array(distinct, dtype="S20") if distinct else np.zeros(0, dtype="S1")
    queries = needles * repeat + distinct[:3]
    needles_array = np.array(queries, dtype=f"S{8 * repeat + 20}") if queries else np.zeros(0, dtype="S1")
    position = {v: i for i, v in enumerate(distinct)}
    rows, codes = _find(vocab_array, needles_array)
    found = [(i, position[v]) for i, v in enumerate(queries) if v in position]
    assert list(zip(rows.tolist(), codes.tolist())) == found


def _find(vocab: np.ndarray, needles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``needles`` found among ``vocab`` and their indices there, all in one query."""
    index = PairIndex(np.zeros(len(vocab), dtype=np.int64), vocab)
    return index.find(np.zeros(len(needles), dtype=np.int64), needles)


def _colliding_ids() -> list[bytes]:
    """Two different ids with the same 64-bit hash: a 9-byte id and the 8 bytes of its hash (an id
    of up to 8 bytes hashes to its own bytes, in memory order)."""
    long_id = b"AAAAAAAAB"
    short_id = _id_hash(np.array([long_id]))[:1].tobytes()
    assert short_id != long_id and not short_id.endswith(b"\0")
    return [short_id, long_id]


def test_hash_collisions_are_told_apart_by_their_bytes() -> None:
    ids = _colliding_ids()
    hashes = _id_hash(np.array(ids, dtype="S16"))
    assert hashes[0] == hashes[1]  # the collision is real
    vocab = np.array(sorted(ids), dtype="S16")
    needles = np.array([ids[1], b"zzzz", ids[0]], dtype="S9")
    rows, codes = _find(vocab, needles)
    assert rows.tolist() == [0, 2] and codes.tolist() == [sorted(ids).index(ids[1]), sorted(ids).index(ids[0])]
    keep = _check_duplicates(np.zeros(2, dtype=np.int64), np.array(ids), np.arange(1, 3), "<run>", "line",
                             "document", np.array([b"q"]), "error")
    assert keep.tolist() == [True, True]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([b"a", b"b", b"a" * 9, b"b" * 9, b"a" * 17])),
                min_size=0, max_size=30))
def test_duplicate_check_keeps_first_occurrences(rows: list[tuple[int, bytes]]) -> None:
    query = np.array([q for q, _ in rows], dtype=np.int64)
    docs = np.array([d for _, d in rows], dtype="S24") if rows else np.zeros(0, dtype="S1")
    keep = _check_duplicates(query, docs, np.arange(1, len(rows) + 1), "<run>", "line", "document",
                             np.array([b"q0", b"q1", b"q2", b"q3"]), "first")
    seen: set = set()
    expected = []
    for row in rows:
        expected.append(row not in seen)
        seen.add(row)
    assert keep.tolist() == expected


def test_canonical_order_moves_long_blocks_and_sorts_their_ties() -> None:
    """Query blocks long enough to be copied whole (not gathered row by row), out of query order,
    with tie groups inside: the result is still the three-key sort."""
    rng = np.random.default_rng(7)
    query = np.repeat([2, 0, 1], 200)
    score = np.concatenate([np.sort(rng.integers(0, 20, 200))[::-1] for _ in range(3)]).astype(np.float64)
    ids = [b"d%d" % i for i in rng.permutation(600)]
    doc_ids = np.array(ids, dtype="S8")
    order = canonical_order(query, score, doc_ids)
    assert order is not None and order.rows is None and order.tied is not None  # the cheap form
    expected = sorted(range(600), key=lambda i: (query[i], -score[i], [-b for b in ids[i]] + [1]))
    assert order.permutation().tolist() == expected
    assert order.apply_blocks(query).tolist() == query[expected].tolist()


def test_a_handed_over_run_builds_the_same_batch() -> None:
    """A RunHandoff lets the build free the run's columns as it goes; it changes nothing else, and
    nothing the caller holds is changed (the columns are frozen)."""
    import weakref

    from retrieval_eval.engine.build import RunHandoff, build_batch
    from retrieval_eval.model import QrelsColumns, RunColumns

    def columns() -> tuple[QrelsColumns, RunColumns]:
        qrels = QrelsColumns(np.array([b"q2", b"q1", b"q1"]), np.array([b"a", b"b", b"c"]), np.array([1, 2, 0]),
                             np.arange(1, 4))
        run = RunColumns(np.array([b"q2", b"q2", b"q1", b"q1", b"q3"]), np.array([b"a", b"b", b"c", b"b", b"a"]),
                         np.array([1.0, 1.0, 0.5, 0.7, 2.0]), np.arange(1, 6))
        return qrels, run

    kept, _ = build_batch(*columns())
    qrels, run = columns()
    scores = weakref.ref(run.scores)
    handoff = RunHandoff(run)
    del run
    consumed, _ = build_batch(qrels, handoff)
    assert scores() is None, "the build freed the scores column it was handed"
    with pytest.raises(ValueError, match="already handed"):
        handoff.take()
    held_qrels, held_run = columns()
    build_batch(held_qrels, held_run)
    assert held_run.scores.tolist() == [1.0, 1.0, 0.5, 0.7, 2.0] and held_run.doc_ids[0] == b"a"
    for name in ("query_ids", "offsets", "labels", "doc_ids", "scores", "judged_offsets", "judged_relevance",
                 "judged_doc_ids", "in_run"):
        assert np.array_equal(np.asarray(getattr(kept, name)), np.asarray(getattr(consumed, name))), name


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**62), min_size=0, max_size=80), st.sampled_from(["small", "wide"]))
def test_sort_rows_is_a_stable_argsort_with_the_sorted_keys(values: list[int], bound_kind: str) -> None:
    """Both ways of sorting rows by key: key and row packed in one number (the keys' bound leaves room
    for the row), and an ``argsort`` where it does not."""
    from retrieval_eval.engine.ids import _sort_rows

    keys = np.array(values, dtype=np.int64) % 97  # many equal keys
    bound = 97 if bound_kind == "small" else 2**62 + 1  # with no room for the row bits: the argsort
    order, ordered = _sort_rows(keys, bound)
    assert order.tolist() == sorted(range(len(values)), key=lambda i: keys[i])  # stable: equal keys in row order
    assert ordered.tolist() == sorted(keys.tolist()) == keys[order].tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=12), st.randoms(), st.integers(0, 40))
def test_new_positions_follow_the_moved_blocks(lengths: list[int], rnd, n_rows: int) -> None:
    """Where rows land once the blocks move, against the order's own permutation: for a few rows
    (searched among the block starts) and for many (each row's shift written out along its block)."""
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    moved = list(range(len(lengths)))
    rnd.shuffle(moved)
    blocks = _order.RowOrder(sum(lengths), block_starts=starts[moved], block_lengths=np.array(lengths)[moved])
    rows = np.array(sorted(rnd.sample(range(blocks.n), min(n_rows, blocks.n))), dtype=np.int64)
    landing = np.argsort(blocks.permutation())  # where each old row is in the new order
    assert _order._new_positions(blocks, rows).tolist() == landing[rows].tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0, 2.0, float("nan"), float("inf")]), min_size=1, max_size=12), st.randoms())
def test_descending_within_blocks_ignores_the_block_boundaries(scores: list[float], rnd) -> None:
    starts = sorted({0} | set(rnd.sample(range(len(scores)), rnd.randrange(len(scores) + 1))))
    bounds = [*starts, len(scores)]
    expected = all(scores[i] >= scores[i + 1] for a, b in itertools.pairwise(bounds) for i in range(a, b - 1))
    tied = [i not in starts and scores[i] == scores[i - 1] for i in range(len(scores))]
    descending, found = _order._descending_within(np.array(scores), np.array(starts, dtype=np.int64))
    assert descending == expected
    if descending:  # the ties, or None for none
        assert (found.tolist() if found is not None else [False] * len(scores)) == tied
        assert (found is None) == (not any(tied))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=0, max_size=40), st.integers(1, 5))
def test_repeated_keys_are_all_rows_but_one_of_each_key(values: list[int], n_slots: int) -> None:
    """Equal keys share a slot; rows sharing a slot with other keys are told apart by the keys."""
    from retrieval_eval.engine.ids import _repeated_keys, _sort_rows

    keys = np.array(values, dtype=np.uint64)
    slot = (keys % np.uint64(n_slots)).astype(np.int64)  # a few slots: many rows share one
    order, sorted_slot = _sort_rows(slot, n_slots)
    repeated = _repeated_keys(keys, order, sorted_slot).tolist()
    assert len(repeated) == len(set(repeated)) == len(values) - len(set(values))
    assert repeated == sorted(repeated)  # in row order, as np.unique gave them
    for key in set(values):  # of each key's rows, all but one
        rows = [i for i, v in enumerate(values) if v == key]
        assert len(set(rows) - set(repeated)) == 1


@pytest.mark.parametrize("seed", range(6))
def test_along_runs_is_repeat_of_the_values_by_run_length(seed: int) -> None:
    """along_runs' three ways (every row its own run, long runs, short runs) against np.repeat."""
    from retrieval_eval.engine.ids import along_runs

    rnd = np.random.default_rng(seed)
    longest = [1, 1, 3, 3, 40, 40][seed]
    lengths = rnd.integers(1, longest + 1, 50)
    heads = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    n = int(lengths.sum())
    values = rnd.integers(-5, 100, 50)
    assert along_runs(values, heads, n).tolist() == np.repeat(values, lengths).tolist()
    assert along_runs(None, heads, n).tolist() == np.repeat(np.arange(50), lengths).tolist()
    flags = values > 40
    assert along_runs(flags, heads, n).tolist() == np.repeat(flags, lengths).tolist()


def _in_order_workers(patch: pytest.MonkeyPatch) -> list[int]:
    """The workers the duplicate check asks of each call of its ``in_order`` (the calls still run)."""
    import retrieval_eval.engine.ids as ids_module

    return _worker_counts(patch, ids_module)


def _threads(patch: pytest.MonkeyPatch, cpus: int) -> None:
    """The thread policy as on ``cpus`` idle CPUs, for passes of any length."""
    import retrieval_eval.engine.threads as threads_module

    patch.setattr(threads_module, "THREADED_ROWS", 0)
    patch.setattr(threads_module, "usable_cpus", lambda: cpus)
    patch.setattr(threads_module, "_runnable_elsewhere", lambda: 0)


#: A run's rows as query blocks (query, documents), for the duplicate check in pieces.
query_blocks = st.lists(st.tuples(st.integers(0, 5), st.lists(st.sampled_from([b"a", b"b", b"c" * 9, b"d", b"e"]),
                                                               min_size=1, max_size=6)),
                        min_size=1, max_size=8, unique_by=lambda block: block[0])


@settings(max_examples=150, deadline=None)
@given(query_blocks, st.integers(1, 12), st.booleans())
def test_the_duplicate_check_in_pieces_on_threads_is_the_check_as_a_whole(
        blocks: list[tuple[int, list[bytes]]], piece_rows: int, with_keys: bool) -> None:
    """Cut between queries into pieces, checked on two threads or on the calling thread, the rows kept
    are the first occurrences (a set of the pairs seen, as an oracle), and a repeat is named as the
    check of all rows at once names it."""
    from retrieval_eval.engine.build import _pieces
    from retrieval_eval.engine.ids import pair_keys
    from retrieval_eval.model import InputFormatError

    query = np.concatenate([np.full(len(docs), q, dtype=np.int64) for q, docs in blocks])
    docs = np.array([d for _, block in blocks for d in block], dtype="S9")
    bounds = _pieces(np.cumsum([0] + [len(block) for _, block in blocks]), rows=piece_rows)
    names = np.array([b"q%d" % q for q in range(6)])
    seen: set[tuple[int, bytes]] = set()
    expected = []
    for pair in zip(query.tolist(), docs.tolist()):
        expected.append(pair not in seen)
        seen.add(pair)

    def check(policy: str, pieces: np.ndarray | None) -> list[bool] | str:
        keys = pair_keys(query, docs) if with_keys else None
        try:
            return _check_duplicates(query, docs, np.arange(1, len(query) + 1), "<run>", "line", "document",
                                     names, policy, keys, pieces).tolist()  # type: ignore[arg-type]
        except InputFormatError as error:
            return str(error)

    whole = check("error", None)
    assert (whole == expected) == all(expected)
    for cpus in (1, 2):
        with pytest.MonkeyPatch.context() as patch:
            _threads(patch, cpus)
            asked = _in_order_workers(patch)
            assert check("first", bounds) == expected
            assert check("error", bounds) == whole
        assert asked == ([2 if cpus == 2 and len(bounds) > 2 else 0] * 2 if len(query) > 1 else [])  # (1 row: no check)


def test_a_build_checks_a_long_runs_duplicates_in_pieces_on_threads() -> None:
    """A run of whole query blocks (out of query order, with ties), its duplicates checked in pieces on
    two threads or on the calling thread: the same batch as the same rows in a shuffled order, which
    the check takes as a whole; with a repeated pair, the same error, or the same batch as the run
    without the repeat."""
    import retrieval_eval.engine.build as build_module
    from retrieval_eval.engine.build import build_batch
    from retrieval_eval.model import InputFormatError, QrelsColumns, RunColumns

    rng = np.random.default_rng(5)
    n_queries, per_query = 40, 30
    query = np.repeat(rng.permutation(n_queries), per_query)
    docs = np.array([b"d%d" % d for q in range(n_queries) for d in rng.choice(90, per_query, replace=False)])
    scores = rng.integers(0, 8, len(query)).astype(np.float64)  # many ties, rows not by score
    qids = np.array([b"q%d" % q for q in query])
    judged = rng.choice(len(query), 300, replace=False)
    qrels = QrelsColumns(qids[judged], docs[judged], rng.integers(0, 3, 300), np.arange(1, 301))

    def build(rows: np.ndarray, cpus: int, duplicates: str = "error") -> tuple[list[list[object]], list[int]] | str:
        run = RunColumns(qids[rows], docs[rows], scores[rows], rows + 1)
        with pytest.MonkeyPatch.context() as patch:
            _threads(patch, cpus)
            patch.setattr(build_module, "_PIECE_ROWS", 100)  # pieces of a few queries
            asked = _in_order_workers(patch)
            try:
                batch, _ = build_batch(qrels, run, duplicates=duplicates)  # type: ignore[arg-type]
            except InputFormatError as error:
                return str(error)
        fields = ("offsets", "labels", "doc_ids", "scores", "in_run")
        return [np.asarray(getattr(batch, name)).tolist() for name in fields], asked

    rows = np.arange(len(query))
    shuffled = build(rng.permutation(rows), 2)
    assert not isinstance(shuffled, str) and shuffled[1] == [0]  # rows of a query apart: one piece, no threads
    assert build(rows, 2) == (shuffled[0], [2])
    assert build(rows, 1) == (shuffled[0], [0])
    # The first row of the block at rows 480-509 again, at the block's end (its line number: the end of
    # the file): a cut every 100 rows, not at a block's bound, would part the two.
    repeated = np.insert(rows, 510, 480)
    message = build(repeated, 1)
    assert isinstance(message, str) and "duplicate document" in message
    assert build(repeated, 2) == message
    assert build(repeated, 2, "first")[0] == build(repeated, 1, "first")[0] == shuffled[0]  # type: ignore[index]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(64, 130), min_size=0, max_size=12), st.randoms(), st.booleans())
def test_moved_blocks_are_the_rows_of_the_blocks_in_turn(lengths: list[int], rnd, keep_some_together: bool) -> None:
    """Blocks of 64 rows or more, copied whole (those that stay next to each other copied as one), are
    each block's rows in turn in the new order."""
    starts = np.cumsum([0] + lengths)[:-1].astype(np.int64)
    moved = list(range(len(lengths)))
    rnd.shuffle(moved)
    if keep_some_together:  # runs of blocks left in their old order, as a numeric order put in byte order leaves them
        moved = sorted(moved[: len(moved) // 2]) + moved[len(moved) // 2 :]
    column = np.arange(sum(lengths), dtype=np.float64)
    got = _order._move_blocks(column, starts[moved], np.array(lengths, dtype=np.int64)[moved])
    assert got.tolist() == [float(starts[b] + i) for b in moved for i in range(lengths[b])]
