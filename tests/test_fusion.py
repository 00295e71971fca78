"""Run fusion: the candidates' layout and the methods on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.analysis.fusion import FusionError, candidates_from_runs, fuse, get_method
from retrieval_eval.io.dicts import columns_from_dicts
from retrieval_eval.model import InputFormatError, RunColumns


def _run(scores: dict[str, dict[str, float]]) -> RunColumns:
    return columns_from_dicts({}, scores)[1]


A = _run({"q1": {"d1": 3.0, "d2": 2.0, "d3": 2.0}, "q2": {"d1": -1.0}})
B = _run({"q1": {"d3": 0.5, "d4": 0.25}, "q3": {"d9": 7.0}})


def test_candidates_hold_each_pair_once_with_each_runs_scores_and_ranks() -> None:
    c = candidates_from_runs([A, B], names=("a", "b"))
    assert c.query_ids.tolist() == [b"q1", b"q2", b"q3"]
    assert c.offsets.tolist() == [0, 4, 5, 6]
    query = c.row_query()
    rows = {(c.query_ids[query[i]], c.doc_ids[i]): (c.ranks[:, i].tolist(), c.scores[:, i].tolist())
            for i in range(c.n_rows)}
    # ties by doc_id descending, as trec_eval: d3 before d2
    assert rows == {(b"q1", b"d1"): ([1, 0], [3.0, pytest.approx(np.nan, nan_ok=True)]),
                    (b"q1", b"d2"): ([3, 0], [2.0, pytest.approx(np.nan, nan_ok=True)]),
                    (b"q1", b"d3"): ([2, 1], [2.0, 0.5]),
                    (b"q1", b"d4"): ([0, 2], [pytest.approx(np.nan, nan_ok=True), 0.25]),
                    (b"q2", b"d1"): ([1, 0], [-1.0, pytest.approx(np.nan, nan_ok=True)]),
                    (b"q3", b"d9"): ([0, 1], [pytest.approx(np.nan, nan_ok=True), 7.0])}
    assert c.depth.tolist() == [[3, 1, 0], [2, 0, 1]]


def test_the_exact_path_when_hashes_collide_gives_the_same_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    from retrieval_eval.analysis.fusion import candidates as module

    fast = candidates_from_runs([A, B])
    monkeypatch.setattr(module, "_rows_by_hash", lambda *args: None)
    exact = candidates_from_runs([A, B])
    key = lambda c: sorted(zip(c.row_query().tolist(), c.doc_ids.tolist(), c.ranks.T.tolist()))
    assert key(fast) == key(exact)
    assert exact.doc_ids.tolist() == sorted(exact.doc_ids[:4].tolist()) + exact.doc_ids[4:].tolist()


def test_a_document_twice_in_one_run_is_refused_naming_its_lines() -> None:
    twice = RunColumns(np.array([b"q", b"q"]), np.array([b"d", b"d"]), np.array([1.0, 2.0]),
                       np.array([1, 2]), origin="x.run")
    with pytest.raises(InputFormatError, match=r"x\.run:2: duplicate document .*first at line 1"):
        candidates_from_runs([twice])


def test_rrf_by_hand() -> None:
    fused = fuse([A, B], "rrf", k=1, names=("a", "b"))
    assert fused.run_id == "rrf:a+b"
    got = {(q.decode(), d.decode()): s for q, d, s in zip(fused.query_ids, fused.doc_ids, fused.scores)}
    assert got[("q1", "d3")] == pytest.approx(1 / 3 + 1 / 2)
    assert got[("q1", "d1")] == pytest.approx(1 / 2)
    assert got[("q1", "d4")] == pytest.approx(1 / 3)
    assert got[("q1", "d2")] == pytest.approx(1 / 4)
    # order: d3 (0.833), then d1 and d4 (0.5, 0.333), then d2
    assert fused.doc_ids[:4].tolist() == [b"d3", b"d1", b"d4", b"d2"]


def test_combsum_with_min_max_by_hand() -> None:
    fused = fuse([A, B], "combsum", names=("a", "b"))
    got = {(q.decode(), d.decode()): s for q, d, s in zip(fused.query_ids, fused.doc_ids, fused.scores)}
    # a's q1 scores 3, 2, 2 -> 1, 0, 0; b's 0.5, 0.25 -> 1, 0; a single score becomes 0
    assert got == pytest.approx({("q1", "d1"): 1.0, ("q1", "d2"): 0.0, ("q1", "d3"): 1.0, ("q1", "d4"): 0.0,
                                 ("q2", "d1"): 0.0, ("q3", "d9"): 0.0})


def test_depth_cuts_each_query() -> None:
    fused = fuse([A, B], "rrf", depth=2)
    assert fused.query_ids.tolist() == [b"q1", b"q1", b"q2", b"q3"]


def test_unknown_methods_and_parameters_are_named() -> None:
    with pytest.raises(FusionError, match="unknown fusion method 'nope'"):
        get_method("nope")
    with pytest.raises(FusionError, match="takes no parameter 'j'"):
        fuse([A], "rrf", j=3)


def test_no_normalisation_keeps_the_raw_scores_by_hand() -> None:
    fused = fuse([A, B], "combsum", norm="none")
    got = {(q.decode(), d.decode()): s for q, d, s in zip(fused.query_ids, fused.doc_ids, fused.scores)}
    assert got == {("q1", "d1"): 3.0, ("q1", "d2"): 2.0, ("q1", "d3"): 2.5, ("q1", "d4"): 0.25,
                   ("q2", "d1"): -1.0, ("q3", "d9"): 7.0}
    mnz = fuse([A, B], "combmnz", norm="none")
    assert dict(zip(mnz.doc_ids[:2].tolist(), mnz.scores[:2].tolist())) == {b"d3": 5.0, b"d1": 3.0}


def test_trained_methods_need_their_training_queries() -> None:
    with pytest.raises(FusionError, match="give qrels"):
        fuse([A, B], "posfuse")
    qrels = columns_from_dicts({"q1": {"d3": 1}}, {})[0]
    with pytest.raises(FusionError, match="train_queries"):
        fuse([A, B], "posfuse", qrels=qrels)


@given(st.dictionaries(st.sampled_from(["q1", "q2", "q10"]),
                       st.dictionaries(st.sampled_from(["a", "b", "c", "dd", "e0"]),
                                       st.integers(-3, 3).map(float), min_size=1),
                       min_size=1))
@settings(max_examples=40, deadline=None)
def test_fusing_a_run_with_itself_keeps_its_ranking(run: dict[str, dict[str, float]]) -> None:
    """Any rank or score method fed the same run twice ranks as the run does (trec_eval's order)."""
    columns = _run(run)
    expected = [(q, d) for q in sorted(run) for d in sorted(sorted(run[q], reverse=True), key=lambda d: -run[q][d])]
    for method in ("rrf", "combsum", "isr", "bordafuse"):
        fused = fuse([columns, columns], method)
        got = [(q.decode(), d.decode()) for q, d in zip(fused.query_ids, fused.doc_ids)]
        assert got == expected, method
