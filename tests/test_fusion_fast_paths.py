"""The candidates' fast paths (hash keys sorted row by row) against the general ones, each forced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.analysis.fusion import candidates as module
from retrieval_eval.analysis.fusion import candidates_from_runs, get_method, registry
from retrieval_eval.analysis.fusion.registry import ranked_run
from retrieval_eval.engine.ids import _MIX
from retrieval_eval.engine.segments import _block_rows
from retrieval_eval.model import InputFormatError, RunColumns

_INVERSE = pow(_MIX, -1, 2**64)  # _MIX is odd: id * _MIX is a bijection of 8-byte ids


def _id(word: int) -> bytes:
    """The 8-byte id whose word (as the engine reads ids, native order) is ``word``."""
    return np.array([word], dtype=np.uint64).tobytes()


def _hashing_to(value: int) -> bytes:
    """An 8-byte id whose spread hash (``id * _MIX``) is ``value``."""
    return _id(value * _INVERSE % 2**64)


def _columns(pairs: list[tuple[bytes, bytes, float]], origin: str = "r.run") -> RunColumns:
    q, d, s = zip(*pairs)
    width = max(len(x) for x in d)
    return RunColumns(np.array(q, dtype="S4"), np.array(d, dtype=f"S{width}"), np.array(s, dtype=np.float64),
                      np.arange(1, len(pairs) + 1), origin=origin)


def _table(c: module.Candidates) -> list[tuple[object, ...]]:
    """The candidates as a sorted list of (query, doc, ranks, scores), independent of row order."""
    query = c.row_query()
    return sorted((c.query_ids[query[i]], c.doc_ids[i], tuple(c.ranks[:, i].tolist()),
                   tuple(np.nan_to_num(c.scores[:, i], nan=-99.0).tolist())) for i in range(c.n_rows))


def _exact(runs: list[RunColumns], monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    with monkeypatch.context() as patch:
        patch.setattr(module, "_rows_by_hash", lambda *args: None)
        return _table(candidates_from_runs(runs))


def test_ids_whose_keys_share_the_top_bits_fall_back_to_the_exact_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Spread hashes one apart: the same key once the column's bits are cleared, different ids.
    x, y = _hashing_to(2**63 + 4096), _hashing_to(2**63 + 4097)
    assert x != y and x[-1] and y[-1]  # no trailing NUL, which fixed-width bytes would drop
    a = _columns([(b"q1", x, 2.0), (b"q1", b"d", 1.0)])
    b = _columns([(b"q1", y, 3.0), (b"q1", x, 0.5)])
    rows = module._rows_by_hash(*_coded([a, b]))
    assert rows is None
    assert _table(candidates_from_runs([a, b])) == _exact([a, b], monkeypatch)
    assert len(candidates_from_runs([a, b]).doc_ids) == 3


@pytest.mark.parametrize("chunk", [1, 2, 3, 1 << 20])
def test_long_ids_with_one_hash_fall_back_to_the_exact_path(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    # 16-byte ids hash to word0 + word1 * _MIX: raise word1 by one, lower word0 by _MIX.
    w0, w1 = 0x4142434445464748, 0x5152535455565758
    x = _id(w0) + _id(w1)
    y = _id((w0 - _MIX) % 2**64) + _id(w1 + 1)
    assert module._id_hash(np.array([x, y])).tolist()[0] == module._id_hash(np.array([x, y])).tolist()[1]
    a = _columns([(b"q1", x, 2.0), (b"q1", b"short", 1.0)])
    b = _columns([(b"q1", y, 3.0), (b"q1", x, 0.5)])
    monkeypatch.setattr(module, "_CHUNK", chunk)  # the rows compared in chunks: the clash in any of them
    assert module._rows_by_hash(*_coded([a, b])) is None
    assert module._rows_by_hash(*_coded([a, a])) is not None  # (equal ids: no clash)
    assert _table(candidates_from_runs([a, b])) == _exact([a, b], monkeypatch)


def _coded(runs: list[RunColumns]) -> tuple[np.ndarray, np.ndarray, int]:
    query_ids, query_code = module.intern(module._common_ids([r.query_ids for r in runs]))
    return query_code, module._common_ids([r.doc_ids for r in runs]), len(query_ids)


_DOCS = [b"d1", b"d2", b"d10", b"a-long-document-id", b"a-long-document-iz", _hashing_to(2**64 - 1),
         _hashing_to(2**64 - 2)]  # the last two: hashes of all ones, as the matrix's padding


@given(st.lists(st.dictionaries(st.tuples(st.sampled_from([b"q1", b"q2", b"q10"]), st.sampled_from(_DOCS)),
                                st.integers(-3, 3).map(float), min_size=1), min_size=1, max_size=4))
@settings(max_examples=60, deadline=None)
def test_row_by_row_sort_and_one_sort_give_the_same_candidates(runs: list[dict[tuple[bytes, bytes], float]]) -> None:
    columns = [_columns(sorted((q, d, s) for (q, d), s in run.items())) for run in runs]
    rows = _table(candidates_from_runs(columns))
    original = module._COLUMN_BITS
    module._COLUMN_BITS = 0  # no query fits: one sort of (query, hash)
    try:
        assert _table(candidates_from_runs(columns)) == rows
    finally:
        module._COLUMN_BITS = original
    module_exact = module._rows_by_hash
    module._rows_by_hash = lambda *args: None  # type: ignore[assignment]
    try:
        assert _table(candidates_from_runs(columns)) == rows
    finally:
        module._rows_by_hash = module_exact
    # An independent count: every distinct (query, doc) of any run is one row.
    assert len(rows) == len({key for run in runs for key in run})


def test_a_document_twice_in_a_later_run_is_refused_naming_its_lines() -> None:
    a = _columns([(b"q", b"d", 1.0)], "a.run")
    b = _columns([(b"q", b"e", 1.0), (b"q", b"d", 2.0), (b"q", b"e", 0.5)], "b.run")
    with pytest.raises(InputFormatError, match=r"b\.run:3: duplicate document .*first at line 1"):
        candidates_from_runs([a, b])


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 6)), max_size=8))
def test_blocks_of_rows_match_the_engines(blocks: list[tuple[int, int]]) -> None:
    starts = np.array([s for s, _ in blocks], dtype=np.int64)
    lengths = np.array([n for _, n in blocks], dtype=np.int64)
    expected = [s + i for s, n in blocks for i in range(n)]
    assert module._blocks_of_rows(starts, lengths).tolist() == expected == _block_rows(starts, lengths).tolist()


@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([b"a", b"b", b"c", b"dd"]), st.integers(-2, 2)),
                max_size=12, unique_by=lambda t: (t[0], t[1])))
def test_ranks_in_a_run_are_trec_evals_order_by_hand(rows: list[tuple[int, bytes, int]]) -> None:
    """Rank within the query: score descending, ties by doc_id descending (trec_eval), counted in Python."""
    code = np.array([q for q, _, _ in rows], dtype=np.int64)
    docs = np.array([d for _, d, _ in rows], dtype="S2")
    scores = np.array([s for _, _, s in rows], dtype=np.float64)
    expected = [1 + sum(1 for q2, d2, s2 in rows if q2 == q and (s2, d2) > (s, d)) for q, d, s in rows]
    assert module._ranks_in_run(code, scores, docs, 5).tolist() == expected


@given(st.lists(st.dictionaries(st.tuples(st.sampled_from([b"q1", b"q2", b"q10"]), st.sampled_from(_DOCS)),
                                st.integers(0, 2).map(float), min_size=1), min_size=1, max_size=3),
       st.integers(1, 6), st.booleans())
@settings(max_examples=60, deadline=None)
def test_a_run_cut_at_a_depth_is_the_whole_run_cut_by_hand(runs: list[dict[tuple[bytes, bytes], float]], depth: int,
                                                           one_sort: bool) -> None:
    """The cut made before the ties are ordered (ties across the depth kept) against no cut, then
    each query's first ``depth`` rows taken in Python; with the row-by-row sort and with one sort."""
    columns = [_columns(sorted((q, d, s) for (q, d), s in run.items())) for run in runs]
    c = candidates_from_runs(columns)
    scores = get_method("combsum")(c, norm="none")  # few distinct values: ties across the cut
    whole = ranked_run(c, scores, "t")
    seen: dict[bytes, int] = {}
    expected = []
    for q, d, s in zip(whole.query_ids.tolist(), whole.doc_ids.tolist(), whole.scores.tolist()):
        seen[q] = seen.get(q, 0) + 1
        if seen[q] <= depth:
            expected.append((q, d, s))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(registry, "_FORCE_ONE_SORT", one_sort)  # (else a matrix row per query)
        cut = ranked_run(c, scores, "t", depth)
    assert list(zip(cut.query_ids.tolist(), cut.doc_ids.tolist(), cut.scores.tolist())) == expected


@given(st.lists(st.dictionaries(st.tuples(st.sampled_from([b"q1", b"q2", b"q10"]), st.sampled_from(_DOCS)),
                                st.integers(-3, 3).map(float), min_size=1), min_size=1, max_size=4))
@settings(max_examples=25, deadline=None)
def test_threads_give_the_same_candidates_and_order(runs: list[dict[tuple[bytes, bytes], float]]) -> None:
    """The pairing beside the ranking, and the sorts of rows in blocks, on two threads (forced, as
    on millions of rows) against the calling thread alone."""
    columns = [_columns(sorted((q, d, s) for (q, d), s in run.items())) for run in runs]
    alone = candidates_from_runs(columns)
    fused = ranked_run(alone, get_method("rrf")(alone, k=60), "t", 2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "THREADED_ROWS", 0)
        patch.setattr(module, "usable_cpus", lambda: 2)
        assert module._threads(1) == 2
        threaded = candidates_from_runs(columns)
        fused_threaded = ranked_run(threaded, get_method("rrf")(threaded, k=60), "t", 2)
    assert _table(threaded) == _table(alone)
    assert fused_threaded.doc_ids.tolist() == fused.doc_ids.tolist()
    assert fused_threaded.scores.tolist() == fused.scores.tolist()


@given(st.lists(st.dictionaries(st.tuples(st.sampled_from([b"q1", b"q2", b"q10"]), st.sampled_from(_DOCS)),
                                st.floats(-5, 5, allow_nan=False), min_size=1), min_size=1, max_size=4),
       st.sampled_from(["min-max", "min-max-inverted"]))
@settings(max_examples=40, deadline=None)
def test_min_max_sums_a_run_at_a_time_as_over_the_matrix(runs: list[dict[tuple[bytes, bytes], float]], norm: str) -> None:
    """CombSUM's sum and the runs' count, added a run at a time, against the same over the whole
    matrix of normalised scores (NaN for missing, then 0), bit for bit."""
    from retrieval_eval.analysis.fusion import scores as combinations

    c = candidates_from_runs([_columns(sorted((q, d, s) for (q, d), s in run.items())) for run in runs])
    total, count = combinations._sum_and_count(c, norm)
    matrix = combinations.normalised_scores(c, norm)
    present = ~np.isnan(matrix)
    assert total.tobytes() == np.where(present, matrix, 0.0).sum(axis=0).tobytes()
    assert count.tolist() == present.sum(axis=0).tolist() == (c.ranks > 0).sum(axis=0).tolist()
