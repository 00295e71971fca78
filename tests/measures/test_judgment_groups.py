"""The judgment-group measures (-R qrels_jg): hand-computed cases, and a line-by-line port of trec_eval's C.

The C trec_eval itself is the other oracle: tests/test_vs_trec_eval_c.py runs it on hundreds of
generated judgment-group cases, and test_conformance.py compares with out.test.qrels_jg.
"""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval import SetEvaluator
from retrieval_eval.measures import parse
from retrieval_eval.model import InputFormatError, TrecFormatError

NAMES = ("AP_avgjg", "P_avgjg", "RprecMult_avgjg")
HAND_COMPUTED = set(NAMES)
ORACLE_CHECKED = set(NAMES)

# q1 has two assessors. Group a judges d1, d3 and d4 relevant (R_a = 3); group b judges d2 relevant
# and d1 not (R_b = 1). The run ranks d1, d2, d3. q2 has a group with no relevant document (it still
# counts in the mean) and one whose only relevant document is first. q3 has one group: plain AP.
QRELS = ("q1 a d1 1\nq1 a d3 1\nq1 a d4 1\nq1 b d2 1\nq1 b d1 0\n"
         "q2 x dx 0\nq2 y dy 1\n"
         "q3 0 d9 2\n")
RUN = ("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\n"
       "q2 Q0 dy 1 1 r\nq3 Q0 d8 1 2 r\nq3 Q0 d9 2 1 r\n")
HAND = {
    # AP_a = (1/1 + 2/3) / 3 = 5/9, AP_b = (1/2) / 1; q2: (0 + 1) / 2; q3: (1/2) / 1
    "map_avgjg": {"q1": (5 / 9 + 1 / 2) / 2, "q2": 0.5, "q3": 0.5},
    "P_avgjg_1": {"q1": (1 + 0) / 2, "q2": (0 + 1) / 2, "q3": 0.0},
    "P_avgjg_2": {"q1": (1 / 2 + 1 / 2) / 2, "q2": (0 + 1 / 2) / 2, "q3": 1 / 2},
    "P_avgjg_5": {"q1": (2 / 5 + 1 / 5) / 2, "q2": (0 + 1 / 5) / 2, "q3": 1 / 5},
    # c_a = trunc(1 * 3 + 0.9) = 3: 2/3; c_b = trunc(1.9) = 1: d1 is not relevant for b: 0
    "Rprec_mult_avgjg_1.00": {"q1": (2 / 3 + 0) / 2, "q2": (0 + 1) / 2, "q3": 0.0},
    # c_a = trunc(0.6 + 0.9) = 1: 1; c_b = trunc(0.2 + 0.9) = 1: 0; q2's group x: c = trunc(0.9) = 0: 0
    "Rprec_mult_avgjg_0.20": {"q1": (1 + 0) / 2, "q2": (0 + 1) / 2, "q3": 0.0},
    # c_a = trunc(6 + 0.9) = 6 beyond the ranking: 2/6; c_b = trunc(2.9) = 2: 1/2
    "Rprec_mult_avgjg_2.00": {"q1": (2 / 6 + 1 / 2) / 2, "q2": (0 + 1 / 2) / 2, "q3": 1 / 2},
}


def _evaluator(qrels: str = QRELS, run: str = RUN, **options: object) -> SetEvaluator:
    return SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO(run), rel_format="qrels_jg", **options)


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_computed(name: str) -> None:
    assert _evaluator().per_query(name) == pytest.approx(HAND[name], rel=1e-15, abs=0)


def test_the_per_query_object_gives_the_same_values() -> None:
    """``evaluator[query_id]`` computes with the same kernels, on its query's groups."""
    results = _evaluator()
    for name in HAND:
        assert {q: results[q].score(name) for q in results} == results.per_query(name)


def test_levels_and_depth() -> None:
    """-l 2 leaves q3's d9 (2) relevant and nothing of q1; -M 1 cuts each ranking to its first document."""
    assert _evaluator(rel=2).per_query("map_avgjg") == {"q1": 0.0, "q2": 0.0, "q3": 0.5}
    assert _evaluator(max_depth=1).per_query("map_avgjg") == pytest.approx(
        {"q1": (1 / 3 + 0) / 2, "q2": 0.5, "q3": 0.0}, rel=1e-15)


def test_judged_in_group() -> None:
    """trec_eval -J: each group ranks only the documents it judged.

    q1: group a ranks d1, d3 (AP (1/1 + 2/2) / 3), group b ranks d1, d2 (AP (1/2) / 1); q3's d9 moves to rank 1.
    """
    results = _evaluator(judged_only=True)
    assert results.per_query("AP_avgjg(judged_in_group=True)") == pytest.approx(
        {"q1": (2 / 3 + 1 / 2) / 2, "q2": 0.5, "q3": 1.0}, rel=1e-15)
    assert results.per_query("P_avgjg(judged_in_group=True)@1") == {"q1": 0.5, "q2": 0.5, "q3": 1.0}


def test_one_group_is_the_plain_measure() -> None:
    """With one judgment group per query, each measure is its plain trec_eval measure."""
    qrels = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 x 1\n3 0 y 1\n"
    run = "1 Q0 a 1 1 r\n1 Q0 b 2 0.5 r\n1 Q0 c 3 0.5 r\n2 Q0 z 1 1 r\n"
    groups = _evaluator(qrels, run)
    plain = SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO(run))
    for grouped, measure in (("map_avgjg", "map"), ("P_avgjg_2", "P_2"), ("Rprec_mult_avgjg_1.40", "Rprec_mult_1.40")):
        assert groups.per_query(grouped) == plain.per_query(measure)


def test_a_document_twice_in_one_group_names_the_line() -> None:
    with pytest.raises(InputFormatError, match=r"<stream>:3: duplicate judgment for query 'q', judgment group 'g', "
                                               r"document 'd' \(first at line 1\)"):
        _evaluator("q g d 1\nq h d 0\nq g d 0\n", "q Q0 d 1 1 r\n")


def test_a_line_without_its_group_names_the_line() -> None:
    with pytest.raises(TrecFormatError, match=r"<stream>:2: "):
        _evaluator("q g d 1\nq d 1\n", "q Q0 d 1 1 r\n")


# ---------------------------------------------------------------------------------------------
# The oracle: trec_eval's C (form_res_rels_jg.c and the *_avgjg.c measures), ported line by line.


def _port(qrels: dict[str, dict[str, dict[str, int]]], run: dict[str, dict[str, float]], level: int,
          cutoffs: tuple[int, ...], mults: tuple[float, ...], judged_only: bool) -> dict[str, dict[str, float]]:
    """{measure: {query: value}} as trec_eval -c computes it, one loop per query, group and rank."""
    out: dict[str, dict[str, float]] = {}
    for qid, groups in qrels.items():
        by_id = sorted(run.get(qid, {}).items(), key=lambda item: item[0].encode(), reverse=True)
        docs = sorted(by_id, key=lambda item: -item[1])  # score descending, ties by doc id descending
        values = {"map_avgjg": 0.0, **{f"P_avgjg_{k}": 0.0 for k in cutoffs},
                  **{f"Rprec_mult_avgjg_{m:3.2f}": 0.0 for m in mults}}
        for jg in sorted(groups, key=str.encode):
            judged = groups[jg]
            rels = [judged.get(doc, -1) for doc, _ in docs]
            if judged_only:  # -J: the group's judged documents only, in the run's order
                rels = [value for value in rels if value >= 0]
            num_rel = sum(1 for v in judged.values() if v >= 0 and v >= level)
            rel_so_far, total = 0, 0.0
            for i, value in enumerate(rels):
                if value >= level:
                    rel_so_far += 1
                    total += rel_so_far / (i + 1)
            if rel_so_far:
                values["map_avgjg"] += total / num_rel
            for k in cutoffs:
                values[f"P_avgjg_{k}"] += sum(v >= level for v in rels[:k]) / k
            for m in mults:
                c = int(m * num_rel + 0.9)
                if c:
                    values[f"Rprec_mult_avgjg_{m:3.2f}"] += sum(v >= level for v in rels[:c]) / c
        if len(groups) > 1:
            values = {name: value / len(groups) for name, value in values.items()}
        for name, value in values.items():
            out.setdefault(name, {})[qid] = value
    return out


_IDS = st.sampled_from(["a", "b", "B", "d1", "d10", "d2"])


@st.composite
def _datasets(draw: st.DrawFn) -> tuple[dict[str, dict[str, dict[str, int]]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(draw(st.integers(1, 3))):
        groups = draw(st.dictionaries(st.sampled_from(["0", "1", "10", "x", "X"]),
                                      st.dictionaries(_IDS, st.integers(-1, 3), min_size=1), min_size=1, max_size=3))
        qrels[f"q{q}"] = groups
        ranking = draw(st.dictionaries(st.sampled_from(["a", "b", "B", "d1", "d10", "d2", "u1", "u2"]),
                                       st.sampled_from([0.5, 1.0, 2.0]), max_size=8))
        if ranking:  # an empty ranking: the query is missing from the run (scored 0)
            run[f"q{q}"] = ranking
    return qrels, run


@settings(max_examples=60, deadline=None)
@given(_datasets(), st.integers(0, 2), st.booleans())
def test_matches_a_port_of_trec_eval(data: tuple[dict[str, dict[str, dict[str, int]]], dict[str, dict[str, float]]],
                                     level: int, judged_only: bool) -> None:
    """Every value bit for bit: ties, documents in several groups, negative values, missing queries."""
    qrels, run = data
    qrels_text = "".join(f"{q} {g} {d} {v}\n" for q, groups in qrels.items() for g, judged in groups.items()
                         for d, v in judged.items())
    run_text = "".join(f"{q} Q0 {d} 1 {s!r} r\n" for q, docs in run.items() for d, s in docs.items()) or "zz Q0 d 1 1 r\n"
    ours = _evaluator(qrels_text, run_text, rel=level, judged_only=judged_only)
    cutoffs, mults = (1, 2, 3, 10), (0.2, 1.0, 1.4, 2.0)
    for name, expected in _port(qrels, run, level, cutoffs, mults, judged_only).items():
        measure = parse(name)(judged_in_group=judged_only)
        assert ours.per_query(measure) == expected, name
