"""The preference measures (-R prefs): hand-computed cases, properties, blocks, and the API around them.

The oracle for every value at scale is trec_eval 10 itself (tests/test_vs_trec_eval_c_prefs.py and
test_conformance's out.test.prefs and out.test.qrels_prefs). The cases here are worked out by hand
from the definitions in trec_eval's source comments (get_prefs.c, form_prefs_counts.c), so that a
wrong count is seen on a case small enough to read.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval import SetEvaluator, preferences_evaluator
from retrieval_eval.evaluators import blocks as blocks_module
from retrieval_eval.measures import REGISTRY, MeasureError, parse_all
from retrieval_eval.model import InputFormatError, InputTypeError

PREFS_MEASURES = [name for name, definition in REGISTRY.items() if definition.preferences]

# One group, one subgroup: a (2) > b (1) > c (0). The ranking holds b above a, and not c:
#   a > b: both retrieved, b ranked higher       -> failed
#   a > c, b > c: only the preferred retrieved   -> implied, fulfilled
# Pairs {b, a}, {a, c}, {b, c}: ratios 0, 1, 1.
# Rnonrel: R = 2 relevant (a, b), N = 1 at level 0 (c): N < R adds R(R-N) = 2 preferences, fulfilled
# for each relevant retrieved one (2): (2 + 2) / (3 + 2) = 0.8. Rnonrel_ret: R = 2 retrieved relevant,
# N = 0: (0 + 2 * 2) / (1 + 2 * 2) = 0.8.
ONE_GROUP = {"q": {"g": {"s": {"a": 2, "b": 1, "c": 0}}}}
ONE_GROUP_RUN = {"q": {"b": 2.0, "a": 1.0, "x": 0.5}}
ONE_GROUP_VALUES = {
    "PrefsPossible": 3, "PrefsFulfilled": 2, "PrefsFulfilledRet": 0,
    "PrefsSimp": 2 / 3, "PrefsSimpRet": 0.0, "PrefsSimpImp": 2 / 3,
    "PrefsPair": 2 / 3, "PrefsPairRet": 0.0, "PrefsPairImp": 2 / 3,
    "PrefsAvgJg": 2 / 3, "PrefsAvgJgRet": 0.0, "PrefsAvgJgImp": 2 / 3,
    "PrefsAvgJgRnonrel": 0.8, "PrefsAvgJgRnonrelRet": 0.8,
}

# Two groups that disagree: g1 prefers a to b, g2 b to a; the ranking is a, b.
# Simp: 1 of 2. Pair {a, b}: preferred by one group each way: 1/2. AvgJg: (1 + 0) / 2.
# Rnonrel: each group has R = N = 1: nothing added, (1/1 + 0/1) / 2.
TWO_GROUPS = {"q": {"g1": {"s": {"a": 1, "b": 0}}, "g2": {"s": {"b": 1, "a": 0}}}}
TWO_GROUPS_RUN = {"q": {"a": 2.0, "b": 1.0}}
TWO_GROUPS_VALUES = {
    "PrefsPossible": 2, "PrefsFulfilled": 1, "PrefsFulfilledRet": 1, "PrefsSimp": 0.5, "PrefsSimpRet": 0.5,
    "PrefsSimpImp": 0.5, "PrefsPair": 0.5, "PrefsPairRet": 0.5, "PrefsPairImp": 0.5, "PrefsAvgJg": 0.5,
    "PrefsAvgJgRet": 0.5, "PrefsAvgJgImp": 0.5, "PrefsAvgJgRnonrel": 0.5, "PrefsAvgJgRnonrelRet": 0.5,
}

#: Measures with a hand-computed value here (test_completeness reads it).
HAND_COMPUTED = set(ONE_GROUP_VALUES)
#: Compared with trec_eval 10 at full precision (tests/test_vs_trec_eval_c_prefs.py).
ORACLE_CHECKED = set(PREFS_MEASURES)


@pytest.mark.parametrize(("prefs", "run", "expected"), [(ONE_GROUP, ONE_GROUP_RUN, ONE_GROUP_VALUES),
                                                         (TWO_GROUPS, TWO_GROUPS_RUN, TWO_GROUPS_VALUES)],
                         ids=["one-group", "two-groups"])
def test_hand_computed(prefs: dict, run: dict, expected: dict[str, float]) -> None:
    ev = preferences_evaluator(prefs, run)
    assert {name: ev.per_query(name)["q"] for name in expected} == pytest.approx(expected, abs=1e-15)


# trec_eval's own examples (get_prefs.c's comment), with a ranking of none of the documents: every
# preference is possible and none is fulfilled.
@pytest.mark.parametrize(("lines", "count"), [
    # one subgroup ranking 6 documents: 5 preferred to docno4... 13 preferences in all
    ("q u s d1 3\nq u s d2 2\nq u s d3 0\nq u s d4 6\nq u s d5 0\nq u s d6 2\n", 13),
    # two subgroups of one group: 1>2 is stated twice but counted once. The comment says 5 (1>2, 1>3,
    # 2>3, 4>1, 4>2), but 4>1 and 1>3 imply 4>3, which trec_eval's transitive closure adds: 6
    # (trec_eval 10 prints 6 for this file).
    ("q u s1 d1 3\nq u s1 d2 2\nq u s1 d3 1\nq u s2 d1 2\nq u s2 d2 1\nq u s2 d4 3\n", 6),
    # two users (groups): 1>2; 3>1, 4>1, 3>4; 2>1
    ("q u1 s d1 3\nq u1 s d2 2\nq u2 s d1 0\nq u2 s d3 6\nq u2 s d4 2\nq u2 t d1 0\nq u2 t d2 8\n", 5),
    # transitive through two subgroups: 1>2, 1>3, 2>3, 2>4, and 1>4 implied
    ("q u s1 d1 3\nq u s1 d2 2\nq u s1 d3 1\nq u s2 d2 5\nq u s2 d4 4\n", 5),
], ids=["ranked-list", "partial-orders", "two-users", "transitive"])
def test_trec_eval_documented_counts(lines: str, count: int) -> None:
    ev = SetEvaluator.from_trec(io.StringIO(lines), io.StringIO("q Q0 zz 1 1.0 r\n"), rel_format="prefs")
    assert ev.per_query("PrefsPossible") == {"q": count}
    assert ev.per_query("PrefsFulfilled") == {"q": 0}


def test_preferences_view_lists_each_preference_and_its_outcome() -> None:
    ev = preferences_evaluator(ONE_GROUP, ONE_GROUP_RUN)
    assert [str(p) for p in ev["q"].preferences()] == [
        "g: a > b failed", "g: a > c fulfilled (implied)", "g: b > c fulfilled (implied)"]
    transitive = SetEvaluator.from_trec(io.StringIO("q u s1 d1 3\nq u s1 d2 2\nq u s2 d2 5\nq u s2 d4 4\n"),
                                        io.StringIO("q Q0 d4 1 3.0 r\n"), rel_format="prefs")
    listed = {(p.preferred, p.other): (p.retrieved, p.fulfilled) for p in transitive["q"].preferences()}
    assert listed == {("d1", "d2"): (0, False), ("d2", "d4"): (1, False), ("d1", "d4"): (1, False)}


def test_ties_of_score_rank_by_doc_id_ascending() -> None:
    """trec_eval's preference code breaks score ties by doc_id ascending (its other measures: descending)."""
    ev = preferences_evaluator({"q": {"g": {"s": {"a": 1, "b": 0}}}}, {"q": {"a": 1.0, "b": 1.0}})
    assert ev.per_query("PrefsSimp") == {"q": 1.0}  # a before b
    ev = preferences_evaluator({"q": {"g": {"s": {"b": 1, "a": 0}}}}, {"q": {"a": 1.0, "b": 1.0}})
    assert ev.per_query("PrefsSimp") == {"q": 0.0}


def test_rnonrel_recount_of_a_group_with_many_non_relevant() -> None:
    """N > R: only the first R level-0 documents by rank are kept, and (trec_eval's loop) every document
    of the group is compared with each of them.

    Group: a (1); n1, n2, n3 (0). Ranking n1, a, n2 (n3 not retrieved). R = 1: n1 is kept.
    Level-0 documents compared with n1: a (rank 1) vs n1 (rank 0) fails; n1 vs n1, n2 vs n1, n3 vs n1 fail
    (a document against itself, and ranks below). 0 of 4 -> 0. With the ranking a, n1: a vs n1 is fulfilled;
    n1 vs n1 fails, n2 (not retrieved) and n3 fail: 1 of 4.
    """
    prefs = {"q": {"g": {"s": {"a": 1, "n1": 0, "n2": 0, "n3": 0}}}}
    assert preferences_evaluator(prefs, {"q": {"n1": 3.0, "a": 2.0, "n2": 1.0}}).per_query("PrefsAvgJgRnonrel") == {
        "q": 0.0}
    assert preferences_evaluator(prefs, {"q": {"a": 3.0, "n1": 2.0}}).per_query("PrefsAvgJgRnonrel") == {"q": 0.25}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=8), st.booleans())
def test_a_ranking_in_level_order_fulfils_every_preference(levels: list[int], reverse: bool) -> None:
    """One group, one subgroup, every document retrieved: ranked by level, Simp is 1; ranked against it
    (ties of level in any order), no preference between retrieved documents is fulfilled."""
    docs = {f"d{i}": level for i, level in enumerate(levels)}
    order = sorted(docs, key=lambda d: (docs[d], d), reverse=not reverse)
    run = {"q": {doc: float(len(order) - rank) for rank, doc in enumerate(order)}}
    ev = preferences_evaluator({"q": {"g": {"s": docs}}}, run)
    possible = sum(1 for a in levels for b in levels if a > b)
    assert ev.per_query("PrefsPossible")["q"] == possible
    assert ev.per_query("PrefsFulfilledRet")["q"] == (0 if reverse else possible)
    if possible:
        assert ev.per_query("PrefsSimp")["q"] == (0.0 if reverse else 1.0)
    for name in PREFS_MEASURES:
        value = ev.per_query(name)["q"]
        assert math.isfinite(value) and value >= 0 and (REGISTRY[name].integer or value <= 1), name


def _many_queries() -> SetEvaluator:
    rng = np.random.default_rng(5)
    lines, run = [], []
    for q in range(40):
        for g in range(int(rng.integers(1, 3))):
            truth = rng.integers(0, 3, size=8)  # the group's own order, which each subgroup keeps
            for s in range(int(rng.integers(1, 3))):
                for d in rng.choice(8, size=int(rng.integers(1, 5)), replace=False):
                    lines.append(f"q{q} g{g} s{s} d{d} {int(truth[d]) * (s + 1)}")
        run += [f"q{q} Q0 d{d} 1 {float(rng.integers(0, 3))} r" for d in rng.choice(10, size=6, replace=False)]
    text = "\n".join(dict.fromkeys(lines)) + "\n"
    return SetEvaluator.from_trec(io.StringIO(text), io.StringIO("\n".join(run) + "\n"), rel_format="prefs")


def test_blocks_give_the_values_of_the_whole_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _many_queries()
    expected = {name: whole.array(name).tobytes() for name in PREFS_MEASURES}
    monkeypatch.setattr(blocks_module, "QUERIES_PER_BLOCK", 7)
    monkeypatch.setattr(blocks_module, "QUERIES_PER_THREAD_BLOCK", 7)
    blocked = _many_queries()
    assert {name: blocked.array(name).tobytes() for name in PREFS_MEASURES} == expected
    one = blocked["q3"]
    assert {name: one.score(name) for name in PREFS_MEASURES} == {name: whole.per_query(name)["q3"]
                                                                 for name in PREFS_MEASURES}


def test_dict_parquet_and_text_inputs_agree(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = [("q1", "u1", "s1", "a", 2.0), ("q1", "u1", "s1", "b", 0.0), ("q1", "u2", "s1", "b", 1.0),
            ("q1", "u2", "s1", "c", 0.5), ("q2", "u1", "s1", "d", 1.0), ("q2", "u1", "s2", "d", 3.0),
            ("q2", "u1", "s2", "e", 0.0)]
    text = tmp_path / "prefs.txt"
    text.write_text("".join(" ".join(map(str, row)) + "\n" for row in rows))
    table = tmp_path / "prefs.parquet"
    pq.write_table(pa.table({name: [row[i] for row in rows] for i, name in
                             enumerate(("query_id", "group", "subgroup", "doc_id", "level"))}), table)
    nested: dict = {}
    for q, g, s, d, level in rows:
        nested.setdefault(q, {}).setdefault(g, {}).setdefault(s, {})[d] = level
    run = {"q1": {"a": 1.0, "c": 2.0, "b": 0.5}, "q2": {"e": 1.0}}
    run_file = tmp_path / "run"
    run_file.write_text("".join(f"{q} Q0 {d} 1 {s} r\n" for q, docs in run.items() for d, s in docs.items()))
    measures = parse_all("all_prefs")
    values = [SetEvaluator.from_trec(source, run_file, rel_format="prefs").evaluate(measures)
              for source in (text, table)]
    values.append(preferences_evaluator(nested, run).evaluate(measures))
    assert values[0] == values[1] == values[2]


def test_measures_refuse_the_other_kind_of_judgments() -> None:
    qrels = SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": 1.0}})
    with pytest.raises(MeasureError, match="needs preference judgments"):
        qrels.per_query("PrefsSimp")
    prefs = preferences_evaluator(ONE_GROUP, ONE_GROUP_RUN)
    with pytest.raises(MeasureError, match="needs relevance judgments"):
        prefs.per_query("AP")
    assert prefs.per_query("NumQ") == {"q": 1.0}


@pytest.mark.parametrize(("prefs", "error", "message"), [
    ({"q": {"g": {"s": {"a": "1"}}}}, InputTypeError, "rel_level of 'a' must be a number"),
    ({"q": {"g": {"s": {"a": -1}}}}, InputFormatError, "must be a finite number >= 0"),
    ({"q": {"g": {"s": {"a": True}}}}, InputTypeError, "must be a number"),
    ({"q": {"g": []}}, InputTypeError, "must map to"),
    ({}, InputFormatError, "no preferences found"),
])
def test_bad_dicts_are_refused(prefs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        preferences_evaluator(prefs, {"q": {"a": 1.0}})


def test_cli_defaults_to_all_prefs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from retrieval_eval.cli import main

    (tmp_path / "prefs").write_text("q g s a 2\nq g s b 1\nq g s c 0\n")
    (tmp_path / "run").write_text("q Q0 b 1 2.0 r\nq Q0 a 2 1.0 r\n")
    assert main(["evaluate", "-R", "prefs", str(tmp_path / "prefs"), str(tmp_path / "run")]) == 0
    out, err = capsys.readouterr()
    names = [line.split()[0] for line in out.splitlines()]
    assert names == ["runid", "num_q", *[m.trec_label for m in parse_all("all_prefs") if m.name != "NumQ"]]
    assert err == ""
    assert main(["evaluate", "-R", "prefs", "-m", "map", str(tmp_path / "prefs"), str(tmp_path / "run")]) == 2
    assert "needs relevance judgments" in capsys.readouterr().err


def test_very_long_ids_give_the_values_of_short_ones(tmp_path: Path) -> None:
    """A document id of 300 bytes makes the reader's column one of bytes objects: same values."""
    long_id = "d" * 300
    values = []
    for name in ("b", long_id):
        (tmp_path / "prefs").write_text(f"q g s a 2\nq g s {name} 1\nq g s c 0\nq g t {name} 2\nq g t e 1\n")
        (tmp_path / "run").write_text(f"q Q0 {name} 1 2.0 r\nq Q0 a 2 2.0 r\nq Q0 e 3 1.0 r\n")
        ev = SetEvaluator.from_trec(tmp_path / "prefs", tmp_path / "run", rel_format="prefs")
        values.append(ev.evaluate(parse_all("all_prefs")))
    assert values[0] == values[1]
