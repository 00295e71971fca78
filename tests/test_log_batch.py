"""A log's batch built from its own rows (engine/log_batch.py) against the general path, which reads
the log as a run and qrels and joins them; and AUC's pair counts, chunk by chunk, against the whole."""

from __future__ import annotations

import io
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval import SetEvaluator
from retrieval_eval.engine import log_batch
from retrieval_eval.engine.batch import RankedBatch
from retrieval_eval.measures import auc
from retrieval_eval.model import InputFormatError

MEASURES = ("AUC", "GAUC", "PooledAUC", "nDCG@10", "AP", "RR", "P@3", "Rprec", "bpref", "num_ret", "num_rel_ret",
            "nDCG", "ERR@5")


@st.composite
def logs(draw: Any) -> str:
    """A text log of a few sessions, with tied scores (-0.0 and 0.0 among them), negative and graded
    labels, sessions split in several blocks, and ids that share their first 8 bytes."""
    n = draw(st.integers(1, 40))
    groups = draw(st.lists(st.sampled_from(["s1", "s2", "s10", "q", "session-long-name-1"]), min_size=n, max_size=n))
    items = draw(st.lists(st.sampled_from(["a", "b", "c", "d10", "d9", "itemitemA", "itemitemB", "z"]),
                          min_size=n, max_size=n))
    scores = draw(st.lists(st.sampled_from(["0.5", "1", "-0.0", "0.0", "2.5", "-3", "1e300", "0.25"]),
                           min_size=n, max_size=n))
    labels = draw(st.lists(st.sampled_from(["0", "1", "2", "-1"]), min_size=n, max_size=n))
    seen = set()
    lines = []
    for row in zip(groups, items, scores, labels):
        if (row[0], row[1]) not in seen:  # duplicates have their own test
            seen.add((row[0], row[1]))
            lines.append(" ".join(row) + "\n")
    return "".join(lines)


def _both(text: str, monkeypatch: pytest.MonkeyPatch, **options: Any) -> tuple[SetEvaluator, SetEvaluator]:
    """The log evaluated by the general path (a run joined with qrels) and by the log's own build."""
    with monkeypatch.context() as patched:
        patched.setattr(log_batch, "ENABLED", False)
        general = SetEvaluator.from_log(io.StringIO(text), **options)
    own = SetEvaluator.from_log(io.StringIO(text), **options)
    return general, own


def _same_batch(general: RankedBatch, own: RankedBatch) -> None:
    """Equal batches, but for the order of each query's judged rows (input order in the general one,
    ranking order in the log's): compared as sorted by id within each query."""
    for name in ("query_vocab", "offsets", "labels", "doc_ids", "scores", "judged_offsets", "in_run"):
        expected, got = getattr(general, name), getattr(own, name)
        assert expected.dtype == got.dtype, name
        np.testing.assert_array_equal(got, expected, err_msg=name)
    for batch in (general, own):
        assert batch.subtopics is None
    for q in range(general.n_queries):
        rows = slice(general.judged_offsets[q], general.judged_offsets[q + 1])
        by_id = [sorted(zip(b.judged_doc_ids[rows].tolist(), b.judged_relevance[rows].tolist())) for b in (general, own)]
        assert by_id[0] == by_id[1]
    assert general.judged_relevance.dtype == own.judged_relevance.dtype


def _own_scores(text: str, batch: RankedBatch) -> None:
    """Each ranked row holds its own row's score, to the sign of a zero. (The general path moves scores
    by blocks of ties, taking one tied row's score for all: -0.0 and 0.0 may trade places there.)"""
    given = {(g.encode(), i.encode()): float(s) for g, i, s, _ in (line.split() for line in text.splitlines())}
    for q in range(batch.n_queries):
        for row in range(batch.offsets[q], batch.offsets[q + 1]):
            expected = given[(batch.query_vocab[q], batch.doc_ids[row])]
            assert batch.scores[row] == expected and np.signbit(batch.scores[row]) == np.signbit(expected)


@settings(max_examples=150, deadline=None)
@given(text=logs(), max_depth=st.sampled_from([None, 0, 1, 2, 5]), judged_only=st.booleans())
def test_the_log_build_makes_the_general_paths_batch(text: str, max_depth: int | None, judged_only: bool) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        general, own = _both(text, monkeypatch, max_depth=max_depth, judged_only=judged_only)
    _same_batch(general._batch, own._batch)
    _own_scores(text, own._batch)
    assert own._report == general._report
    assert own.run_id == general.run_id
    for measure in MEASURES:
        assert own.per_query(measure) == general.per_query(measure), measure
        assert own.aggregate(measure) == general.aggregate(measure), measure
        assert own.left_out(measure) == general.left_out(measure), measure


@settings(max_examples=100, deadline=None)
@given(text=logs(), packed=st.booleans())
def test_its_sort_is_the_general_order(text: str, packed: bool) -> None:
    """Both branches of the ranked side: the log's own sort (query and place packed in one number, or
    not: the branch of very many rows and queries, forced) and the general path's canonical_order."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        if not packed:
            monkeypatch.setattr(log_batch, "_PACKED", 0)
        own = SetEvaluator.from_log(io.StringIO(text))._batch
        monkeypatch.setattr(log_batch, "SORT_WITHIN_QUERIES", False)
        general_sort = SetEvaluator.from_log(io.StringIO(text))._batch
    for name in ("offsets", "labels", "doc_ids", "scores", "judged_offsets", "judged_relevance", "judged_doc_ids"):
        np.testing.assert_array_equal(getattr(own, name), getattr(general_sort, name), err_msg=name)


def test_a_larger_log_sorts_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many sessions, scores with two decimals (ties), rows shuffled across sessions: the chunked
    steps of the sort (small chunks forced) against the general path."""
    rng = np.random.default_rng(29)
    n = 3000
    groups, items = rng.integers(0, 300, n), rng.permutation(n)
    text = "".join(f"s{g} i{i} {s:.2f} {lab}\n" for g, i, s, lab in
                   zip(groups, items, rng.random(n), rng.integers(-1, 3, n)))
    monkeypatch.setattr(log_batch, "_CHUNK_ROWS", 64)
    general, own = _both(text, monkeypatch)
    _same_batch(general._batch, own._batch)
    assert own.per_query("AUC") == general.per_query("AUC")


@pytest.mark.parametrize("duplicates", ["error", "first"])
def test_a_pair_twice_is_treated_as_the_general_path_treats_it(monkeypatch: pytest.MonkeyPatch, duplicates: str) -> None:
    text = "s1 a 0.5 1\ns1 b 0.7 0\ns2 a 0.1 1\ns1 a 0.9 0\ns2 c 0.3 0\n"
    if duplicates == "error":
        messages = []
        for enabled in (False, True):
            monkeypatch.setattr(log_batch, "ENABLED", enabled)
            with pytest.raises(InputFormatError) as raised:
                SetEvaluator.from_log(io.StringIO(text))
            messages.append(str(raised.value))
        assert messages[0] == messages[1]
        assert "duplicate judgment for query 's1', document 'a'" in messages[1]
        assert ":4:" in messages[1] and "line 1" in messages[1]
    else:
        general, own = _both(text, monkeypatch, duplicates="first")
        _same_batch(general._batch, own._batch)
        # (s1, a)'s first row is kept: relevant, below b; its second (not relevant) would leave s1 one class
        assert own.per_query("AUC") == {"s1": 0.0, "s2": 0.0}
        assert own.left_out("AUC") == []


def test_a_hand_computed_log() -> None:
    """Rows of one session in any order: ranked by score, ties by item id descending (trec_eval)."""
    text = "s1 a 0.5 1\ns2 x 3 0\ns1 c 0.5 0\ns1 b 0.9 0\ns2 y 3 1\ns1 d -1 2\n"
    batch = SetEvaluator.from_log(io.StringIO(text))._batch
    assert batch.query_vocab.tolist() == [b"s1", b"s2"]
    assert batch.doc_ids.tolist() == [b"b", b"c", b"a", b"d", b"y", b"x"]
    assert batch.labels.tolist() == [0, 0, 1, 2, 1, 0]
    assert batch.scores.tolist() == [0.9, 0.5, 0.5, -1.0, 3.0, 3.0]
    assert batch.offsets.tolist() == [0, 4, 6]


@pytest.mark.parametrize("chunk", [1, 2, 3, 1 << 20])
@pytest.mark.parametrize("order", ["score", "file"])
def test_auc_counts_chunk_by_chunk_as_on_the_whole(monkeypatch: pytest.MonkeyPatch, chunk: int, order: str) -> None:
    """AUC's pair counts over chunks of queries (forced small) equal the count over the whole batch
    and scikit-learn's roc_auc_score; ``order="file"`` leaves rows out of score order (the sorting branch)."""
    roc_auc_score = pytest.importorskip("sklearn.metrics").roc_auc_score
    rng = np.random.default_rng(7)
    qrels, run, qrels_lines, run_lines = {}, {}, [], []
    for q in range(12):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 9)))]
        run[f"q{q}"] = {d: float(rng.integers(0, 4)) for d in docs}
        qrels[f"q{q}"] = {d: int(rng.integers(0, 2)) for d in docs}
        qrels_lines += [f"q{q} 0 {d} {qrels[f'q{q}'][d]}\n" for d in docs]
        run_lines += [f"q{q} Q0 {d} 0 {run[f'q{q}'][d]} r\n" for d in docs]  # in no score order
    monkeypatch.setattr(auc, "_CHUNK_ROWS", chunk)
    values = SetEvaluator.from_trec(io.StringIO("".join(qrels_lines)), io.StringIO("".join(run_lines)),
                                    order=order).per_query("AUC")
    for q, scores in run.items():
        labels = [qrels[q][d] for d in scores]
        expected = roc_auc_score(labels, list(scores.values())) if 0 < sum(labels) < len(labels) else 0.0
        assert values[q] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("chunk", [1, 3, 1 << 20])
def test_the_id_hash_in_chunks_is_the_hash_of_its_definition(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """_id_hash adds each further word's product a chunk of ids at a time (chunks forced small here):
    the value is still the sum of word j times _MIX**j modulo 2**64, computed here with Python's integers."""
    from retrieval_eval.engine import ids as ids_module

    monkeypatch.setattr(ids_module, "_CHUNK", chunk)
    rng = np.random.default_rng(3)
    values = [bytes(rng.integers(1, 256, int(rng.integers(1, 30))).astype(np.uint8)) for _ in range(20)]
    column = np.array(values, dtype="S32")
    expected = []
    for value in values:
        padded = value.ljust(32, b"\0")
        words = [int.from_bytes(padded[i : i + 8], sys.byteorder) for i in range(0, 32, 8)]  # NumPy views them natively
        expected.append(sum(word * pow(ids_module._MIX, j, 2**64) for j, word in enumerate(words)) % 2**64)
    assert ids_module._id_hash(column).tolist() == expected
