"""The ordering and interning primitives agree with their plain NumPy definitions."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.ranking import canonical_order, intern

ids = st.lists(st.binary(min_size=1, max_size=20).filter(lambda b: b"\0" not in b), min_size=0, max_size=60)


@settings(max_examples=200, deadline=None)
@given(ids)
def test_intern_is_np_unique_in_byte_order(values: list[bytes]) -> None:
    array = np.array(values, dtype="S20") if values else np.array([], dtype="S1")
    vocab, codes = intern(array)
    expected_vocab, expected_codes = np.unique(array, return_inverse=True)
    assert vocab.tolist() == expected_vocab.tolist()
    assert codes.tolist() == expected_codes.ravel().tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, 0.5, 1.0, 2.0, float("inf"), -1.0])),
                min_size=0, max_size=40), st.booleans())
def test_canonical_order_is_the_three_key_sort(rows: list[tuple[int, float]], presort: bool) -> None:
    """Same as lexsort on (query, -score, -doc) whether or not the input is already sorted by score."""
    if presort:
        rows = sorted(rows, key=lambda r: (r[0], -r[1]))
    query = np.array([q for q, _ in rows], dtype=np.int64)
    score = np.array([s for _, s in rows], dtype=np.float64)
    doc = np.random.default_rng(len(rows)).permutation(len(rows)).astype(np.int64)  # distinct per row
    expected = np.lexsort((-doc, -score, query))
    assert canonical_order(query, score, doc).tolist() == expected.tolist()
