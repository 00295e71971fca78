"""retrieval_eval.labels against autointent 0.4.0's own metrics module, plus hand-computed and error cases.

The oracle is autointent's ``metrics/retrieval.py`` (with ``_converter.py``), loaded from the 0.4.0
wheel by the loader in ``benchmarks/labels.py``: the wheel is looked for in
``$RETRIEVAL_EVAL_TEST_CACHE`` (default ``~/.cache/retrieval_eval-tests``) and downloaded there with
``pip download`` if missing. Only NumPy is needed; the oracle tests skip when the wheel is unavailable.
"""

from __future__ import annotations

import doctest
import importlib.util
import inspect
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from retrieval_eval import labels
from retrieval_eval.labels import _relevance
from retrieval_eval.model import InputFormatError, InputTypeError

ROOT = Path(__file__).resolve().parents[1]

MULTICLASS = [f"retrieval_{metric}" for metric in ("map", "hit_rate", "precision", "ndcg", "mrr")]
MULTILABEL = [f"{name}{form}" for form in ("_intersecting", "_macro") for name in MULTICLASS]
CASES_PER_FUNCTION = 500


def _benchmark_module() -> ModuleType:
    """benchmarks/labels.py, which holds the oracle loader shared with the benchmark."""
    if "_labels_benchmark" in sys.modules:
        return sys.modules["_labels_benchmark"]
    spec = importlib.util.spec_from_file_location("_labels_benchmark", ROOT / "benchmarks" / "labels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_labels_benchmark"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def oracle() -> ModuleType:
    """autointent 0.4.0's metrics/retrieval.py, or a skip saying why it is unavailable."""
    benchmark = _benchmark_module()
    try:
        retrieval: ModuleType = benchmark.load_autointent_retrieval()
    except benchmark.OracleUnavailable as error:
        pytest.skip(f"autointent {benchmark.AUTOINTENT_VERSION} wheel unavailable (not in "
                    f"{benchmark.cache_dir()}, and {error}); set RETRIEVAL_EVAL_TEST_CACHE to a folder holding it")
    return retrieval


# --------------------------------------------------------------------------------------------------
# Random cases


def _random_cases(rng: np.random.Generator, *, multilabel: bool) -> Iterator[tuple[Any, Any, int | None]]:
    """Small random inputs with OOS queries, ties (repeated labels) and every kind of k.

    Each case is (query_labels, candidates_labels, k) as Python lists, the form autointent is fed
    with in practice (None labels need lists).
    """
    while True:
        n_queries = int(rng.integers(1, 9))
        n_candidates = int(rng.integers(1, 13))
        n_classes = int(rng.integers(1, 6))
        if multilabel:
            density = rng.uniform(0.1, 0.9)
            queries: list[Any] = (rng.random((n_queries, n_classes)) < density).astype(int).tolist()
            candidates = (rng.random((n_queries, n_candidates, n_classes)) < density).astype(int).tolist()
        else:
            queries = rng.integers(0, n_classes, n_queries).tolist()
            candidates = rng.integers(0, n_classes, (n_queries, n_candidates)).tolist()
        out_of_scope = rng.random(n_queries) < 0.25
        out_of_scope[rng.integers(n_queries)] = False  # at least one query stays in scope
        queries = [None if oos else label for label, oos in zip(queries, out_of_scope, strict=True)]
        k = [None, 1, int(rng.integers(1, n_candidates + 1)), n_candidates + int(rng.integers(1, 4))][
            int(rng.integers(4))
        ]
        yield queries, candidates, k


def _as_arrays(queries: list[Any], candidates: list[Any], rng: np.random.Generator) -> tuple[Any, Any]:
    """The same input, sometimes as NumPy arrays (of a random integer dtype, or of objects to hold None)."""
    if rng.random() < 0.5:
        return queries, candidates
    largest = max(np.max(candidates), *(np.max(label) for label in queries if label is not None))
    dtype = [np.int64, np.int8, np.uint8, bool][int(rng.integers(4))] if largest <= 1 else np.int64
    candidates_array = np.asarray(candidates, dtype=dtype)
    if any(label is None for label in queries):
        if rng.random() < 0.5:
            return queries, candidates_array
        query_array = np.empty(len(queries), dtype=object)  # an object array that holds None
        query_array[:] = queries
        return query_array, candidates_array
    return np.asarray(queries, dtype=dtype), candidates_array


@pytest.mark.parametrize("name", MULTICLASS + MULTILABEL)
def test_matches_autointent_on_random_cases(name: str, oracle: ModuleType) -> None:
    """500 random cases per function, with OOS queries, k=None, k=1 and k past the list: equal to 1e-12."""
    ours: Callable[..., float] = getattr(labels, name)
    theirs: Callable[..., float] = getattr(oracle, name)
    rng = np.random.default_rng(sorted(MULTICLASS + MULTILABEL).index(name))
    cases = _random_cases(rng, multilabel=name in MULTILABEL)
    for _, (queries, candidates, k) in zip(range(CASES_PER_FUNCTION), cases):
        expected = theirs(queries, candidates, k)
        got = ours(*_as_arrays(queries, candidates, rng), k)
        assert type(got) is float
        assert abs(got - expected) <= 1e-12, (queries, candidates, k, got, expected)


def test_random_cases_cover_the_edges() -> None:
    """The generator produces k=None, k=1, k past the end, OOS queries and ties."""
    cases = list(zip(range(CASES_PER_FUNCTION), _random_cases(np.random.default_rng(0), multilabel=False)))
    ks = [(k, len(candidates[0])) for _, (_, candidates, k) in cases]
    assert any(k is None for k, _ in ks) and any(k == 1 for k, _ in ks) and any(k and k > n for k, n in ks)
    assert any(None in queries for _, (queries, _, _) in cases)
    assert any(len(set(row)) < len(row) for _, (_, candidates, _) in cases for row in candidates)


def test_non_binary_multilabel_values_follow_autointent(oracle: ModuleType) -> None:
    """Integers other than 0/1 are accepted and give autointent's numbers (dot products, equalities)."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        queries = rng.integers(-2, 3, (4, 3)).tolist()
        candidates = rng.integers(-2, 3, (4, 5, 3)).tolist()
        for name in MULTILABEL:
            for k in (None, 2):
                assert getattr(labels, name)(queries, candidates, k) == pytest.approx(
                    getattr(oracle, name)(queries, candidates, k), abs=1e-12
                ), name


# --------------------------------------------------------------------------------------------------
# The vectorised paths: masks of several words, chunks of queries, the first-hit shortcut, 0/1 counts

ALL = MULTICLASS + MULTILABEL


def _long_input(
    rng: np.random.Generator, name: str, *, n_queries: int = 12, n_candidates: int = 40, density: float = 0.3
) -> tuple[Any, Any]:
    """Lists longer than one 12-rank mask word: int64 arrays, 0/1 vectors in multilabel form."""
    if name in MULTILABEL:
        n_classes = int(rng.integers(1, 6))
        queries = (rng.random((n_queries, n_classes)) < density).astype(np.int64)
        return queries, (rng.random((n_queries, n_candidates, n_classes)) < density).astype(np.int64)
    return rng.integers(0, 4, n_queries), rng.integers(0, 4, (n_queries, n_candidates))


@pytest.mark.parametrize("name", ALL)
def test_long_lists_match_autointent(name: str, oracle: ModuleType) -> None:
    """Lists of 13 to 60 candidates (several mask words), every kind of k, some dtypes: equal to 1e-12."""
    rng = np.random.default_rng(100 + ALL.index(name))
    for _ in range(30):
        n_candidates = int(rng.integers(13, 61))
        queries, candidates = _long_input(rng, name, n_candidates=n_candidates, density=rng.uniform(0.05, 0.9))
        if name in MULTILABEL and rng.random() < 0.5:  # 0/1 of other dtypes
            queries = queries.astype([bool, np.int8, np.uint8][int(rng.integers(3))])
            candidates = candidates.astype(bool)
        for k in (None, 1, 12, 13, 24, 25, int(rng.integers(1, n_candidates + 1)), n_candidates + 5):
            expected = getattr(oracle, name)(queries.tolist(), candidates.tolist(), k)
            assert getattr(labels, name)(queries, candidates, k) == pytest.approx(expected, abs=1e-12), (name, k)


@pytest.mark.parametrize("name", ALL)
def test_lists_of_300_candidates_match_autointent(name: str, oracle: ModuleType) -> None:
    """Past 255 ranks, counts no longer fit the bytes they are summed in: equal to 1e-12."""
    queries, candidates = _long_input(np.random.default_rng(300), name, n_queries=4, n_candidates=300)
    for k in (None, 5, 260):
        expected = getattr(oracle, name)(queries.tolist(), candidates.tolist(), k)
        assert getattr(labels, name)(queries, candidates, k) == pytest.approx(expected, abs=1e-12), k


@pytest.mark.parametrize("name", ALL)
def test_chunks_do_not_change_results(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Queries are processed in chunks; chunks of one or a few queries give the same numbers."""
    rng = np.random.default_rng(200 + ALL.index(name))
    queries, candidates = _long_input(rng, name, n_queries=50, n_candidates=30)
    function: Callable[..., float] = getattr(labels, name)
    expected = [function(queries, candidates, k) for k in (None, 1, 5, 13)]
    for chunk_bytes in (1, 200, 1000):
        monkeypatch.setattr(_relevance, "_CHUNK_BYTES", chunk_bytes)
        assert [function(queries, candidates, k) for k in (None, 1, 5, 13)] == expected, chunk_bytes


@pytest.mark.parametrize("name", ["retrieval_mrr", "retrieval_mrr_intersecting", "retrieval_mrr_macro",
                                  "retrieval_hit_rate_intersecting"])
@pytest.mark.parametrize("density", [0.05, 0.3, 0.95])
def test_first_hit_shortcut_matches_autointent(name: str, density: float, oracle: ModuleType) -> None:
    """Past the first quarter, MRR_intersecting reads only the queries without a hit (none, a few, or most)."""
    rng = np.random.default_rng(int(density * 100))
    for _ in range(10):
        n_candidates = int(rng.integers(1, 30))
        if name in MULTILABEL:
            queries = (rng.random((20, 3)) < density).astype(np.int64)
            candidates = (rng.random((20, n_candidates, 3)) < density).astype(np.int64)
        else:  # density: the chance that a candidate has the query's label
            queries = rng.integers(0, 3, 20)
            candidates = np.where(rng.random((20, n_candidates)) < density, queries[:, None], 3)
        for k in (None, 1, 2, 9, n_candidates + 1):
            expected = getattr(oracle, name)(queries.tolist(), candidates.tolist(), k)
            assert getattr(labels, name)(queries, candidates, k) == pytest.approx(expected, abs=1e-12), (name, k)


def test_first_hit_shortcut_gathers_the_missed_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    """With 8 candidates the first quarter is 2 ranks; only the queries without a hit there are read on.

    A query without any class shares none with its candidates, and is not read on either.
    """
    looked_at: list[Any] = []
    blocks = _relevance._relevance_blocks

    def spy(queries: Any, candidates: Any, relation: Any, rows: Any, ranks: slice) -> Any:
        looked_at.append((None if rows is None else rows.tolist(), ranks.start, ranks.stop))
        return blocks(queries, candidates, relation, rows, ranks)

    monkeypatch.setattr(_relevance, "_relevance_blocks", spy)
    queries = [[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 0]]
    vectors = [[[1, 0]] + [[0, 1]] * 7] * 2 + [[[0, 1]] * 5 + [[1, 0]] * 3, [[0, 1]] * 8, [[1, 0]] * 8, [[1, 1]] * 8]
    expected = (1 + 1 + 1 / 6 + 1 + 0 + 0) / 6
    assert labels.retrieval_mrr_intersecting(queries, vectors) == pytest.approx(expected)
    assert labels.retrieval_mrr([1, 2], [[1, 0], [0, 0]]) == 1 / 2  # one label per candidate: read whole
    assert looked_at == [(None, 0, 2), ([2, 4], 2, 8), (None, 0, 2)]


@pytest.mark.parametrize(
    ("dtype", "values"),
    [(np.int64, (0, 1)), (bool, (0, 1)), (np.int8, (0, 1)), (np.uint8, (0, 1)), (np.int64, (0, 1, 2)),
     (np.int64, (-1, 0, 1)), (np.int8, (1, 2)), (np.dtype(">i8"), (0, 1))],
    ids=["int64", "bool", "int8", "uint8", "with-2", "with-minus-1", "int8-1-2", "big-endian"],
)
@pytest.mark.parametrize("k", [None, 1, 5, 30])
def test_binary_count_of_macro_ndcg_agrees_with_comparisons(
    dtype: Any, values: tuple[int, ...], k: int | None, oracle: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nDCG_macro counts the relevant candidates past k of 0/1 labels by a sum; other labels compare."""
    rng = np.random.default_rng(len(values) * 7 + (k or 0))
    queries = rng.choice(values, (40, 4)).astype(dtype)
    candidates = rng.choice(values, (40, 25, 4)).astype(dtype)
    candidates[:20] = candidates[:20] > 0  # the first chunks 0/1, the others maybe not
    settled = np.zeros_like(candidates)  # relevant everywhere for the 0 query labels ...
    settled[::8] = candidates[::8]  # ... except in every 8th list: only those are read past k
    monkeypatch.setattr(_relevance, "_CHUNK_BYTES", 10 * candidates[0].nbytes)  # ten queries a chunk
    for candidates_ in (candidates, settled):
        queries_ = queries if candidates_ is candidates else np.zeros_like(queries)
        fast = labels.retrieval_ndcg_macro(queries_, candidates_, k)
        expected = oracle.retrieval_ndcg_macro(queries_.tolist(), candidates_.tolist(), k)
        assert fast == pytest.approx(expected, abs=1e-12)
        with monkeypatch.context() as patched:
            patched.setattr(_relevance, "_is_binary", lambda labels: False)
            assert fast == pytest.approx(labels.retrieval_ndcg_macro(queries_, candidates_, k), abs=1e-15)


# --------------------------------------------------------------------------------------------------
# Hand-computed cases (from the formulas)

LOG2_3 = math.log2(3)

HAND_CASES = [
    # AP divides by the hits found in the top k: query 1 finds ranks 1 and 3, query 2 rank 3.
    ("retrieval_map", [1, 2], [[1, 0, 1], [0, 0, 2]], None, ((1 / 1 + 2 / 3) / 2 + (1 / 3) / 1) / 2),
    ("retrieval_map", [1, 2], [[1, 0, 1], [0, 0, 2]], 2, (1.0 + 0.0) / 2),
    # an OOS query and its candidates are dropped before averaging
    ("retrieval_mrr", [None, 1], [[1, 1], [0, 1]], None, 1 / 2),
    ("retrieval_hit_rate", [3, 3, None], [[1, 2], [2, 3], [3, 3]], 1, 0.0),
    # precision divides by min(k, n_candidates): k past the end does not lower it
    ("retrieval_precision", [1], [[1, 0, 1, 1]], 10, 3 / 4),
    ("retrieval_precision", [1], [[1, 0, 1, 1]], 2, 1 / 2),
    # nDCG: the ideal ranking holds both relevant candidates, even with k = 1 or k past the end
    ("retrieval_ndcg", [2], [[0, 2, 2]], None, (1 / LOG2_3 + 1 / 2) / (1 + 1 / LOG2_3)),
    ("retrieval_ndcg", [2], [[0, 2, 2]], 1, 0.0),
    ("retrieval_ndcg", [2], [[0, 2, 2]], 7, (1 / LOG2_3 + 1 / 2) / (1 + 1 / LOG2_3)),
    ("retrieval_ndcg", [5], [[0, 2, 2]], None, 0.0),
    # intersecting: a 1 in common; ranks 2 and 3 here
    ("retrieval_map_intersecting", [[1, 1, 0]], [[[0, 0, 1], [0, 1, 1], [1, 0, 0]]], None, (1 / 2 + 2 / 3) / 2),
    ("retrieval_mrr_intersecting", [[1, 1, 0]], [[[0, 0, 1], [0, 1, 1], [1, 0, 0]]], None, 1 / 2),
    ("retrieval_hit_rate_intersecting", [[1, 1, 0]], [[[0, 0, 1], [0, 1, 1], [1, 0, 0]]], 1, 0.0),
    ("retrieval_precision_intersecting", [[1, 1, 0]], [[[0, 0, 1], [0, 1, 1], [1, 0, 0]]], None, 2 / 3),
    # autointent's nDCG_intersecting: equal in one position (a shared 0 too); only the complement misses
    ("retrieval_ndcg_intersecting", [[1, 0, 0]], [[[0, 1, 1], [0, 1, 0]]], None, (1 / LOG2_3) / 1),
    # macro: class 0 has relevance [0, 1], class 1 (absent from the query) [1, 1]
    ("retrieval_map_macro", [[1, 0]], [[[0, 0], [1, 0]]], None, (1 / 2 + 1) / 2),
    ("retrieval_hit_rate_macro", [[1, 0]], [[[0, 1], [1, 0]]], 1, 0.0),
    ("retrieval_precision_macro", [[1, 0]], [[[0, 0], [1, 0]]], None, (1 / 2 + 2 / 2) / 2),
    ("retrieval_ndcg_macro", [[1, 0]], [[[0, 0], [1, 0]]], None, (1 / LOG2_3 + 1) / 2),
    ("retrieval_mrr_macro", [[1, 0]], [[[0, 0], [1, 0]]], 1, (0 + 1) / 2),
]


@pytest.mark.parametrize(
    ("name", "queries", "candidates", "k", "expected"),
    HAND_CASES,
    ids=[f"{case[0]}-k{case[3]}-{i}" for i, case in enumerate(HAND_CASES)],
)
def test_hand_computed(name: str, queries: Any, candidates: Any, k: int | None, expected: float) -> None:
    assert getattr(labels, name)(queries, candidates, k) == pytest.approx(expected, abs=1e-15)


def test_arrays_lists_and_dtypes_agree() -> None:
    """Lists, int64/int8/bool/float arrays and a NumPy integer k give one answer."""
    queries, candidates = [[1, 0, 1], [0, 1, 0]], [[[1, 0, 0], [0, 1, 0]], [[0, 1, 1], [0, 0, 1]]]
    for name in MULTILABEL:
        function = getattr(labels, name)
        expected = function(queries, candidates, 1)
        for dtype in (np.int64, np.int8, bool, np.float64):
            assert function(np.asarray(queries, dtype), np.asarray(candidates, dtype), np.int64(1)) == expected


def test_empty_candidate_lists_score_zero() -> None:
    """Decided here: autointent's precision divides by zero; every metric gives 0.0."""
    for name in MULTICLASS:
        assert getattr(labels, name)([1, 2], [[], []]) == 0.0
    for name in MULTILABEL:
        assert getattr(labels, name)([[1, 0]], np.zeros((1, 0, 2), dtype=int)) == 0.0


def test_ragged_rows_of_oos_queries_are_not_read() -> None:
    """As in autointent, an OOS query's candidate list is dropped unread, whatever its length."""
    assert labels.retrieval_map([1, None], [[1, 0], [1]]) == 1.0


# --------------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    ("name", "queries", "candidates", "k", "error", "words"),
    [
        ("retrieval_map", [1, 2], [[1, 2], [1]], None, InputFormatError, ["query 1", "(2,)"]),
        # the index is the query's position in the input, OOS queries included
        ("retrieval_mrr", [None, 1, 2], [[0], [1, 2], [1]], None, InputFormatError, ["query 2", "(2,)"]),
        ("retrieval_map_intersecting", [[1, 0], [1, 0, 1]], [[[1, 0]], [[1, 0]]], None, InputFormatError,
         ["query 1", "(3,)", "(2,)"]),
        ("retrieval_ndcg_macro", [[1, 0]], [[[1, 0], [1, 0, 0]]], None, InputFormatError,
         ["query 0", "candidate 1", "n_classes"]),
        ("retrieval_hit_rate_macro", [[1, 0], [0, 1]], [[[1, 0, 1]], [[1, 0, 1]]], None, InputFormatError,
         ["query 0", "(2, n_candidates, 2)", "(2, 1, 3)"]),
        ("retrieval_precision", [1, 2], [[1, 2], [1, 2]], 0, InputFormatError, ["'k'", "got 0"]),
        ("retrieval_ndcg", [1, 2], [[1, 2], [1, 2]], 1.5, InputTypeError, ["'k'", "1.5"]),
        ("retrieval_mrr_macro", [[1, 0]], [[[1, 0]]], True, InputTypeError, ["'k'", "True"]),
        ("retrieval_map", [None, None], [[1], [2]], None, InputFormatError, ["all 2 query labels are None"]),
        ("retrieval_map", [], [], None, InputFormatError, ["no queries"]),
        ("retrieval_hit_rate", [1, 2], [[1, 2]], None, InputFormatError, ["2 query labels but 1 candidate lists"]),
        ("retrieval_map", [[1, 0], [0, 1]], [[1, 2], [1, 2]], None, InputFormatError,
         ["(n_queries,)", "retrieval_map_intersecting or retrieval_map_macro"]),
        ("retrieval_mrr_intersecting", [1, 2], [[1, 2], [1, 2]], None, InputFormatError,
         ["(n_queries, n_classes)", "use retrieval_mrr"]),
        ("retrieval_precision", [1, 2], [[1, None], [1, 2]], None, InputTypeError, ["query 0", "None"]),
        ("retrieval_precision", ["a", "b"], [["a"], ["b"]], None, InputTypeError, ["integers", "<U1"]),
        ("retrieval_hit_rate", [1, 2], [[1, 2.5], [1, 2]], None, InputTypeError, ["query 0", "float"]),
        ("retrieval_ndcg", 3, [[1]], None, InputTypeError, ["query_labels", "int"]),
    ],
    ids=[
        "ragged-candidates", "ragged-after-oos", "query-vectors-of-different-lengths",
        "candidate-vectors-of-different-lengths", "candidate-vectors-longer-than-query-vectors", "k-zero",
        "k-float", "k-bool", "all-oos", "no-queries", "count-mismatch", "vectors-to-multiclass-form",
        "ints-to-multilabel-form", "none-candidate", "string-labels", "fractional-label", "not-a-sequence",
    ],
)
def test_malformed_input_is_named(
    name: str, queries: Any, candidates: Any, k: Any, error: type[Exception], words: list[str]
) -> None:
    with pytest.raises(error) as raised:
        getattr(labels, name)(queries, candidates, k)
    message = str(raised.value)
    assert name in message
    for word in words:
        assert word in message, (word, message)


def test_every_function_is_exported_with_autointents_signature() -> None:
    assert sorted(labels.__all__) == sorted(MULTICLASS + MULTILABEL)
    for name in labels.__all__:
        assert list(inspect.signature(getattr(labels, name)).parameters) == ["query_labels", "candidates_labels", "k"]


def test_docs_page_examples_run() -> None:
    """Every example in docs/labels.md prints what the page shows."""
    result = doctest.testfile(str(ROOT / "docs" / "labels.md"), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
