"""The preparation of preference judgments, piece by piece, against plain oracles (issue 33's speed work).

Each fast step of ``engine.preferences`` is checked against a slow, obvious computation that shares
none of its code: ``np.unique`` for the distinct keys, a pair-by-pair comparison for the subgroup
preferences, trec_eval's own way of closing a group (square its boolean matrix until it stops
changing) for the transitive closure, and ``np.unique`` again for the judged documents. Where the
code takes one of two routes (rows in runs or not, one chunk of groups or several), each test forces
both.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.cli import main
from retrieval_eval.engine import preferences, threads
from retrieval_eval.engine.judgments import _judged_once, prepared_qrels
from retrieval_eval.engine.preferences import _closed, _distinct, _subgroup_pairs
from retrieval_eval.io.formats import read_qrels_columns
from retrieval_eval.io.prefs import prefs_as_qrels
from retrieval_eval.model import InputFormatError

SETTINGS = settings(max_examples=60, deadline=None)


# ------------------------------------------------------------------------------- distinct keys


def _check_distinct(key: np.ndarray) -> None:
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    for dense_span in (0, 1 << 20):  # sorted; through a table of every value
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(preferences, "_DENSE_SPAN", dense_span)
            got_first, got_code = _distinct(key.astype(np.int64))
        np.testing.assert_array_equal(got_first, first)
        np.testing.assert_array_equal(got_code, inverse.reshape(-1))


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(2, 5)), max_size=40))
def test_distinct_of_rows_in_runs_matches_np_unique(runs: list[tuple[int, int]]) -> None:
    # Every run at least 2 long: at most half the rows start a run, the route that sorts runs only.
    key = np.repeat([value for value, _ in runs], [length for _, length in runs]).astype(np.int64)
    _check_distinct(key)


@SETTINGS
@given(st.lists(st.integers(0, 90), max_size=40))
def test_distinct_of_rows_in_no_order_matches_np_unique(values: list[int]) -> None:
    # No two neighbours equal: every row starts a run, the route that sorts every row.
    key = np.array([v for i, v in enumerate(values) if i == 0 or v != values[i - 1]], dtype=np.int64)
    _check_distinct(key)


@pytest.mark.parametrize("dense_span", [0, 1 << 20])
def test_distinct_gives_the_first_row_of_each_key_on_both_routes(dense_span: int,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preferences, "_DENSE_SPAN", dense_span)
    runs = np.array([3, 3, 1, 1, 3, 3, 2, 2])  # 4 heads of 8 rows: the runs route
    scattered = np.array([3, 1, 3, 2, 1, 2, 3, 1])  # 8 heads: the plain route
    assert _distinct(runs)[0].tolist() == [2, 6, 0]
    assert _distinct(scattered)[0].tolist() == [1, 3, 0]


# ------------------------------------------------------------------------------- subgroup pairs


@pytest.mark.parametrize("few_levels", [16, 0])  # levels numbered by comparisons; by a binary search
@SETTINGS
@given(st.lists(st.lists(st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0, 3.5]), min_size=1, max_size=6), min_size=1,
                max_size=6))
def test_subgroup_pairs_are_every_higher_level_against_every_lower_one(few_levels: int,
                                                                      subgroups: list[list[float]]) -> None:
    levels = np.array([level for subgroup in subgroups for level in subgroup])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(preferences, "_FEW_LEVELS", few_levels)
        _check_subgroup_pairs(subgroups, levels)


def _check_subgroup_pairs(subgroups: list[list[float]], levels: np.ndarray) -> None:
    subgroup = np.repeat(np.arange(len(subgroups)), [len(s) for s in subgroups])
    judgment = np.arange(len(levels))[::-1].copy()  # judgment rows apart from row numbers
    better, worse = _subgroup_pairs(subgroup, levels, judgment)
    expected = sorted((int(judgment[i]), int(judgment[j])) for i in range(len(levels)) for j in range(len(levels))
                      if subgroup[i] == subgroup[j] and levels[i] > levels[j])
    assert sorted(zip(better.tolist(), worse.tolist())) == expected
    assert len(better) == len(expected)  # no pair twice


# ------------------------------------------------------------------------------- transitive closure


def _closure_by_squaring(pairs: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """trec_eval's way (form_prefs_counts.c): OR the matrix's square into it until nothing changes."""
    matrix = np.zeros((size, size), dtype=bool)
    for a, b in pairs:
        matrix[a, b] = True
    while True:
        grown = matrix | ((matrix.astype(np.int64) @ matrix.astype(np.int64)) > 0)
        if (grown == matrix).all():
            break
        matrix = grown
    return [(int(a), int(b)) for a, b in zip(*np.nonzero(matrix))]  # by row, then column


def _random_groups(rng: np.random.Generator, sizes: list[int], single: list[bool]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pairs within each group (a group of one subgroup gets distinct pairs, the others repeats too),
    grouped by group as _subgroup_pairs gives them; and the expected closed pairs."""
    judgment_group = np.repeat(np.arange(len(sizes)), sizes)
    start = np.concatenate(([0], np.cumsum(sizes)))
    better, worse, expected = [], [], []
    for g, (size, one) in enumerate(zip(sizes, single)):
        n = int(rng.integers(0, 3 * size + 1))
        local = [(int(a), int(b)) for a, b in rng.integers(0, size, size=(n, 2))]
        if one:  # trec_eval's equivalence classes: transitive already, each pair once
            local = sorted({(a, b) for a, b in local if a < b})
            local = _closure_by_squaring(local, size)
            rng.shuffle(local)
            expected += [(start[g] + a, start[g] + b) for a, b in local]
        else:
            expected += [(start[g] + a, start[g] + b) for a, b in _closure_by_squaring(local, size)]
        better += [start[g] + a for a, _ in local]
        worse += [start[g] + b for _, b in local]
    as_array = np.array(expected, dtype=np.int64).reshape(-1, 2)
    return (np.array(better, dtype=np.int64), np.array(worse, dtype=np.int64), judgment_group,
            np.array(single, dtype=bool), as_array)


@pytest.mark.parametrize("chunk_bytes", [1 << 24, 64])  # one chunk of groups; a chunk per group or two
@pytest.mark.parametrize("seed", range(6))
def test_closure_matches_squaring_the_matrix_until_it_stops_changing(
        seed: int, chunk_bytes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preferences, "_CHUNK_BYTES", chunk_bytes)
    rng = np.random.default_rng(seed)
    # Sizes across the buckets (multiples of 8, then powers of two; 70 and 130 need 2 and 3 words)
    sizes = [int(s) for s in rng.choice([1, 2, 5, 8, 9, 13, 17, 24, 33, 70, 130], size=12)]
    single = [bool(x) for x in rng.random(12) < 0.3]
    better, worse, judgment_group, single_array, expected = _random_groups(rng, sizes, single)
    got_better, got_worse = _closed(better, worse, judgment_group, single_array)
    # Group by group, in group order: a group of one subgroup keeps its pairs' order, the others by
    # row then column.
    np.testing.assert_array_equal(got_better, expected[:, 0])
    np.testing.assert_array_equal(got_worse, expected[:, 1])


def _random_subgroups(rng: np.random.Generator, sizes: list[int], subgroups: list[int]
                      ) -> tuple[tuple[np.ndarray, ...], list[tuple[int, int]]]:
    """Rows of groups of ``sizes`` judgments in ``subgroups`` subgroups each (each subgroup a few of its
    group's judgments, at most once, at levels with ties), shuffled within each group, as
    _group_pairs takes them; and the expected pairs: each subgroup's higher level against its lower
    ones, the group's matrix closed by squaring. Most groups spell one hidden order of their
    judgments (sparse relations, long chains across subgroups); some contradict themselves (a
    judgment preferred to itself)."""
    columns: list[list[int]] = [[], [], [], []]  # subgroup, judgment, group (rows); judgment_group
    levels: list[float] = []
    expected: list[tuple[int, int]] = []
    start = sub = 0
    for g, (size, n_sub) in enumerate(zip(sizes, subgroups)):
        local = []
        rows = []
        truth = rng.permutation(size).astype(np.float64) if rng.random() < 0.8 else None
        for _ in range(n_sub if n_sub == 1 else max(n_sub, size // 2)):  # (enough to chain a large group)
            members = rng.permutation(size)[: int(rng.integers(1, min(size, 6) + 1))]
            if truth is None:
                level = rng.choice([0.0, 0.5, 1.0, 2.0, 7.0], size=len(members))
            else:  # the hidden order, in a few levels of the subgroup's own
                level = np.floor(truth[members] / rng.choice([1.0, 2.0, 5.0])) * rng.choice([0.5, 1.0, 3.0])
            local += [(int(a), int(b)) for a, x in zip(members, level) for b, y in zip(members, level) if x > y]
            rows += [(sub, start + int(m), float(x)) for m, x in zip(members, level)]
            sub += 1
        for at in rng.permutation(len(rows)):
            columns[0].append(rows[at][0])
            columns[1].append(rows[at][1])
            columns[2].append(g)
            levels.append(rows[at][2])
        columns[3] += [g] * size
        expected += [(start + a, start + b) for a, b in _closure_by_squaring(local, size)]
        start += size
    arrays = tuple(np.array(c, dtype=np.int64) for c in columns)
    return (arrays[0], np.array(levels), arrays[1], arrays[2], arrays[3], np.array([n == 1 for n in subgroups])), expected


@pytest.mark.parametrize("limit", [64, 20, 0])  # every group by words; some so, some by pairs; every one by pairs
@pytest.mark.parametrize("seed", range(6))
def test_group_pairs_by_words_and_by_pairs_match_squaring(seed: int, limit: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preferences, "_WORD_LIMIT", limit)
    monkeypatch.setattr(preferences, "_CHUNK_BYTES", [1 << 24, 64][seed % 2])  # one chunk of judgments, or many
    rng = np.random.default_rng(100 + seed)
    # Sizes across the word widths (8, 16, 32 and 64 bits), the buckets and the word limit
    sizes = [int(s) for s in rng.choice([1, 2, 3, 7, 8, 9, 15, 17, 24, 33, 50, 64, 65], size=10)]
    subgroups = [int(n) for n in rng.choice([1, 1, 2, 3, 5], size=10)]
    arguments, expected = _random_subgroups(rng, sizes, subgroups)
    better, worse = preferences._group_pairs(*arguments)
    group = arguments[4][better]
    assert (np.diff(group) >= 0).all()  # grouped by group, in increasing order
    assert sorted(zip(better.tolist(), worse.tolist())) == sorted(expected)


@pytest.mark.parametrize("limit", [64, 0])
def test_two_subgroups_that_contradict_each_other_give_each_document_preferred_to_itself(
        limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preferences, "_WORD_LIMIT", limit)
    # One group of judgments 0 and 1: 0 > 1 in subgroup 0, 1 > 0 in subgroup 1.
    subgroup, judgment, levels = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([2.0, 1.0, 1.0, 2.0])
    better, worse = preferences._group_pairs(subgroup, levels, judgment, np.zeros(4, dtype=np.int64),
                                             np.zeros(2, dtype=np.int64), np.array([False]))
    assert sorted(zip(better.tolist(), worse.tolist())) == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_closure_adds_the_chain_across_subgroups() -> None:
    # One group of 3 judgments: 0 > 1 in one subgroup, 1 > 2 in another, so 0 > 2.
    better, worse = _closed(np.array([0, 1]), np.array([1, 2]), np.array([0, 0, 0]), np.array([False]))
    assert list(zip(better.tolist(), worse.tolist())) == [(0, 1), (0, 2), (1, 2)]


# ------------------------------------------------------------------------------- judged documents


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), min_size=1, max_size=40))
def test_judged_once_keeps_each_first_row_in_input_order_with_its_largest_value(
        rows: list[tuple[int, int]]) -> None:
    pair = np.array([p for p, _ in rows], dtype=np.int64)
    relevance = np.array([r for _, r in rows], dtype=np.int64)
    _, first, judged = np.unique(pair, return_index=True, return_inverse=True)
    got_rows, got_largest = _judged_once(judged.reshape(-1), first, relevance)
    expected_rows = sorted(first.tolist())
    assert got_rows.tolist() == expected_rows
    assert got_largest.tolist() == [int(relevance[pair == pair[row]].max()) for row in expected_rows]


# ------------------------------------------------------------------------------- repeated documents


@pytest.mark.parametrize("seen_span", [16, 0])  # marked in a table first; sorted straight away
@SETTINGS
@given(st.lists(st.integers(0, 30), min_size=1, max_size=30))
def test_a_repeated_key_is_refused_naming_its_earliest_second_line_on_both_routes(seen_span: int,
                                                                                   keys: list[int]) -> None:
    key = np.array(keys, dtype=np.int64)
    lines = np.arange(1, len(keys) + 1) * 10
    names = np.array([f"d{k}".encode() for k in keys])
    prefs = SimpleNamespace(origin="prefs.txt", unit="line")
    seconds = [i for i in range(len(keys)) if keys[i] in keys[:i]]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(preferences, "_SEEN_SPAN", seen_span)
        if not seconds:
            preferences._refuse_repeats(key, prefs, lines, (names, names, names, names))  # type: ignore[arg-type]
            return
        with pytest.raises(InputFormatError) as error:
            preferences._refuse_repeats(key, prefs, lines, (names, names, names, names))  # type: ignore[arg-type]
    second = seconds[0]
    first = keys.index(keys[second])
    assert str(error.value).startswith(f"prefs.txt:{lines[second]}: ")
    assert f"(first at line {lines[first]})" in str(error.value)


# ------------------------------------------------------------------------------- prepared once


def test_preferences_read_once_are_prepared_once(tmp_path) -> None:
    """A preference file's columns are read-only, as a qrels file's: its preparation is shared by
    every run. A preference column that can be written (it could change between two runs) makes
    the preparation a fresh one each time."""
    path = tmp_path / "prefs"
    path.write_text("q1 g1 s1 a 2\nq1 g1 s1 b 1\nq1 g1 s2 b 3\nq1 g1 s2 c 0\n")
    qrels = read_qrels_columns(str(path), rel_format="prefs")
    first = prepared_qrels(qrels, None, "error")
    assert prepared_qrels(qrels, None, "error") is first
    assert qrels.preferences is not None
    changing = prefs_as_qrels(attrs.evolve(qrels.preferences, levels=qrels.preferences.levels.copy()))
    assert prepared_qrels(changing, None, "error") is not prepared_qrels(changing, None, "error")


def test_the_command_line_prepares_the_preferences_once_with_idle_cpus(
        tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # With two idle CPUs the judgments are prepared on a thread while the run is read; the build
    # then takes that preparation instead of making its own (it did both, once).
    monkeypatch.setattr(threads, "usable_cpus", lambda: 2)
    calls = []
    prepare = preferences.prepare_preferences

    def counted(*args: object) -> object:
        calls.append(threading.current_thread().name)
        return prepare(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(preferences, "prepare_preferences", counted)
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text("q1 g1 s1 a 2\nq1 g1 s1 b 1\nq1 g1 s2 b 3\nq1 g1 s2 c 0\n")
    run.write_text("q1 Q0 c 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 a 3 1 r\n")
    assert main(["evaluate", "-m", "prefs_simp", "-R", "prefs", str(prefs), str(run)]) == 0
    assert capsys.readouterr().out == "prefs_simp            \tall\t0.0000\n"
    assert calls == ["retrieval_eval qrels"]
