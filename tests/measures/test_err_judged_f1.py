"""Hand-computed values of ERR, Judged and F1, degenerate cases included, and the batch kernels
against a slow per-query oracle on generated data (many queries in one batch)."""

from __future__ import annotations

import pytest
import reference
from strategies import random_dataset

from retrieval_eval import Document, Judgment, MeasureError, RetrievalEvaluator, SetEvaluator
from retrieval_eval.measures import REGISTRY

TOL = 1e-12


def evaluator(ranking: list[str], judged: dict[str, int]) -> RetrievalEvaluator:
    """One query: ``ranking`` in rank order, ``judged`` its qrels."""
    return RetrievalEvaluator("q", [Document(d) for d in ranking], [Judgment(d, r) for d, r in judged.items()])


# --------------------------------------------------------------------------------------------------
# ERR: R_i = (2^g - 1) / 2^g_max; ERR@k = sum_i R_i / i * prod_{j<i} (1 - R_j)

# Ranking a(3) b(0) c(2) d(not judged) e(1), plus an unretrieved f(3).
GRADED = (["a", "b", "c", "d", "e"], {"a": 3, "b": 0, "c": 2, "e": 1, "f": 3})

ERR_CASES = [
    # g_max = 4: R = 7/16, 0, 3/16, 0, 1/16
    ("ERR", *GRADED, 7 / 16 / 1 + (1 - 7 / 16) * (3 / 16) / 3 + (1 - 7 / 16) * (1 - 3 / 16) * (1 / 16) / 5),
    ("ERR@1", *GRADED, 7 / 16),
    ("ERR@2", *GRADED, 7 / 16),  # rank 2 is non-relevant: adds 0 and keeps the decay
    ("ERR@3", *GRADED, 7 / 16 + (1 - 7 / 16) * (3 / 16) / 3),
    ("ERR@100", *GRADED, 7 / 16 + (1 - 7 / 16) * (3 / 16) / 3 + (1 - 7 / 16) * (1 - 3 / 16) * (1 / 16) / 5),
    # g_max = 3 (a 0..3 scale): R = 7/8, 0, 3/8, 0, 1/8
    ("ERR(max_rel=3)", *GRADED, 7 / 8 + (1 - 7 / 8) * (3 / 8) / 3 + (1 - 7 / 8) * (1 - 3 / 8) * (1 / 8) / 5),
    ("ERR(max_rel=3)@2", *GRADED, 7 / 8),
    # a grade above g_max counts as g_max (gdeval refuses such qrels): 5 -> 4, R = 15/16
    ("ERR@5", ["x", "y"], {"x": 5, "y": 4}, 15 / 16 + (1 - 15 / 16) * (15 / 16) / 2),
    # the first relevant document at rank 3, grade 1: (1/16) / 3
    ("ERR@5", ["n1", "n2", "r"], {"n1": 0, "r": 1}, (1 / 16) / 3),
    ("ERR@2", ["n1", "n2", "r"], {"n1": 0, "r": 1}, 0.0),  # beyond the cutoff
    # degenerate cases
    ("ERR@10", ["a", "b"], {"a": 0, "b": 0}, 0.0),  # R = 0: nothing to find
    ("ERR@10", [], {"a": 2}, 0.0),  # empty ranking
    ("ERR@10", ["u1", "u2"], {"a": 2}, 0.0),  # only unjudged documents retrieved
    ("ERR@10", ["a", "b"], {"a": -1, "b": 2}, (1 - 0) * (3 / 16) / 2),  # a negative judgment gains 0
]


@pytest.mark.parametrize(("measure", "ranking", "judged", "expected"), ERR_CASES,
                         ids=["graded", "k1", "k2-nonrel", "k3", "k-beyond-ranking", "max-rel-3", "max-rel-3-k2",
                              "grade-above-max", "first-hit-rank-3", "hit-beyond-k", "R0", "empty-ranking",
                              "only-unjudged", "negative-judgment"])
def test_err_hand_computed(measure: str, ranking: list[str], judged: dict[str, int], expected: float) -> None:
    assert evaluator(ranking, judged).score(measure) == pytest.approx(expected, abs=TOL)


def _err_exact(grades: list[int], max_rel: int) -> float:
    """ERR by exact rational arithmetic (no rounding until the end): the oracle for large max_rel."""
    from fractions import Fraction

    total, keep = Fraction(0), Fraction(1)
    for rank, grade in enumerate(grades, 1):
        stop = Fraction(2 ** min(max(grade, 0), max_rel) - 1, 2**max_rel)
        total += keep * stop / rank
        keep *= 1 - stop
    return float(total)


@pytest.mark.parametrize("max_rel", [1, 4, 53, 54, 60, 1000])
@pytest.mark.parametrize("grades", [[0, 1000, 1000], [1, 1000, 1000], [1000, 999, 1], [3, 1000, 0, 1000, 2]])
def test_err_with_the_top_grade_of_a_large_max_rel(max_rel: int, grades: list[int]) -> None:
    """A document of grade max_rel stops the user with R = 1 - 2^-max_rel, which rounds to 1.0 from
    max_rel = 54 on: the decay after it must be (about) 0, never 0 * log(0) = NaN."""
    import warnings

    ranking = [f"d{i}" for i in range(len(grades))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = evaluator(ranking, dict(zip(ranking, grades))).score(f"ERR(max_rel={max_rel})")
    assert got == pytest.approx(_err_exact(grades, max_rel), rel=1e-12, abs=1e-300)


def test_err_parameters() -> None:
    assert str(REGISTRY["ERR"](max_rel=4) @ 20) == "ERR@20"  # 4 is the default (gdeval)
    assert str(REGISTRY["ERR"](max_rel=3) @ 20) == "ERR(max_rel=3)@20"
    with pytest.raises(MeasureError, match="max_rel"):
        REGISTRY["ERR"](max_rel=0)


# --------------------------------------------------------------------------------------------------
# Judged@k = #{judged (value >= 0) in ranks 1..min(k, n)} / min(k, n)

# a(1) b(not in qrels) c(0) d(-1: pooled, unjudged) e(2)
MIXED = (["a", "b", "c", "d", "e"], {"a": 1, "c": 0, "d": -1, "e": 2})

JUDGED_CASES = [
    ("Judged@1", *MIXED, 1 / 1),
    ("Judged@2", *MIXED, 1 / 2),
    ("Judged@3", *MIXED, 2 / 3),
    ("Judged@4", *MIXED, 2 / 4),  # d's -1 is not a judgment
    ("Judged@5", *MIXED, 3 / 5),
    ("Judged@10", *MIXED, 3 / 5),  # k beyond the ranking: divided by n = 5, not by 10
    ("Judged", *MIXED, 3 / 5),  # no cutoff: the whole ranking
    ("Judged@3", ["a", "b", "c"], {"a": 0, "b": 0, "c": 0}, 3 / 3),  # R = 0 does not matter
    ("Judged@5", [], {"a": 1}, 0.0),  # empty ranking
    ("Judged@5", ["u1", "u2"], {"a": 1}, 0 / 2),  # only unjudged
    ("Judged@5", ["d"], {"d": -1}, 0 / 1),  # only negative judgments
]


@pytest.mark.parametrize(("measure", "ranking", "judged", "expected"), JUDGED_CASES,
                         ids=["k1", "k2", "k3", "k4-negative", "k5", "k-beyond-ranking", "no-cutoff", "R0",
                              "empty-ranking", "only-unjudged", "only-negative"])
def test_judged_hand_computed(measure: str, ranking: list[str], judged: dict[str, int], expected: float) -> None:
    assert evaluator(ranking, judged).score(measure) == pytest.approx(expected, abs=TOL)


def test_judged_plus_unj() -> None:
    """With k <= n, Judged@k = 1 - unj_k (trec_eval's unjudged fraction): the same notion of judged."""
    ev = evaluator(*MIXED)
    for k in (1, 2, 3, 4, 5):
        assert ev.score(f"Judged@{k}") + ev.score(f"unj_{k}") == pytest.approx(1.0, abs=TOL)


# --------------------------------------------------------------------------------------------------
# F1@k = 2 * P@k * R@k / (P@k + R@k)

# relevant at ranks 1 and 3 (grades 1 and 2); a third relevant document g(2) never retrieved: R = 3
F1_RANKING = (["a", "b", "c", "d"], {"a": 1, "b": 0, "c": 2, "g": 2})

F1_CASES = [
    ("F1@1", *F1_RANKING, 2 * (1 / 1) * (1 / 3) / ((1 / 1) + (1 / 3))),
    ("F1@2", *F1_RANKING, 2 * (1 / 2) * (1 / 3) / ((1 / 2) + (1 / 3))),
    ("F1@3", *F1_RANKING, 2 * (2 / 3) * (2 / 3) / ((2 / 3) + (2 / 3))),
    ("F1@5", *F1_RANKING, 2 * (2 / 5) * (2 / 3) / ((2 / 5) + (2 / 3))),  # k beyond the ranking: P divides by 5
    # rel = 2: only c and g are relevant, R = 2; at k = 3: P = 1/3, R = 1/2
    ("F1(rel=2)@3", *F1_RANKING, 2 * (1 / 3) * (1 / 2) / ((1 / 3) + (1 / 2))),
    ("F1(rel=2)@2", *F1_RANKING, 0.0),  # P@2 = R@2 = 0
    ("F1@5", ["a", "b"], {"a": 0, "b": 0}, 0.0),  # R = 0
    ("F1@5", [], {"a": 1}, 0.0),  # empty ranking
    ("F1@5", ["u1", "u2"], {"a": 1}, 0.0),  # only unjudged
]


@pytest.mark.parametrize(("measure", "ranking", "judged", "expected"), F1_CASES,
                         ids=["k1", "k2", "k3", "k-beyond-ranking", "rel2-k3", "rel2-no-hit", "R0", "empty-ranking",
                              "only-unjudged"])
def test_f1_hand_computed(measure: str, ranking: list[str], judged: dict[str, int], expected: float) -> None:
    assert evaluator(ranking, judged).score(measure) == pytest.approx(expected, abs=TOL)


def test_f1_needs_a_cutoff() -> None:
    with pytest.raises(MeasureError, match="F1 needs a cutoff"):
        evaluator(*F1_RANKING).score("F1")


# --------------------------------------------------------------------------------------------------
# Whole batches: queries missing from the run, and segment boundaries


def test_queries_missing_from_the_run_score_zero() -> None:
    qrels = {"q1": {"a": 3}, "q2": {"a": 3}}
    run = {"q1": {"a": 1.0}}
    ev = SetEvaluator.from_dict(qrels, run)
    assert ev.per_query("ERR@5") == {"q1": 7 / 16, "q2": 0.0}
    assert ev.per_query("Judged@5") == {"q1": 1.0, "q2": 0.0}
    assert ev.per_query("F1@1") == {"q1": 1.0, "q2": 0.0}


def err_oracle(ranking: list[str], judged: dict[str, int], k: int | None, max_rel: int) -> float:
    score, decay = 0.0, 1.0
    for i, doc in enumerate(ranking[:k], start=1):
        r = (2 ** min(max(judged.get(doc, 0), 0), max_rel) - 1) / 2**max_rel
        score += r * decay / i
        decay *= 1 - r
    return score


def judged_oracle(ranking: list[str], judged: dict[str, int], k: int | None) -> float:
    top = ranking[:k]
    return sum(judged.get(d, -1) >= 0 for d in top) / len(top) if top else 0.0


def f1_oracle(ranking: list[str], judged: dict[str, int], k: int, rel: int) -> float:
    precision = reference.precision(ranking, judged, k, rel)
    recall = reference.recall(ranking, judged, k, rel)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


@pytest.mark.parametrize("seed", [31, 32])
def test_batch_matches_per_query_oracle(seed: int) -> None:
    """Many queries in one batch (empty, missing, R = 0, deep) equal a plain loop over each query."""
    qrels, run = random_dataset(seed, n_queries=60, max_depth=50, n_docs=60, levels=(0, 1, 2, 3, 4, 5))
    ev = SetEvaluator.from_dict(qrels, run)
    checks = {
        "ERR": lambda r, j: err_oracle(r, j, None, 4),
        "ERR@10": lambda r, j: err_oracle(r, j, 10, 4),
        "ERR(max_rel=5)@20": lambda r, j: err_oracle(r, j, 20, 5),
        "Judged": lambda r, j: judged_oracle(r, j, None),
        "Judged@10": lambda r, j: judged_oracle(r, j, 10),
        "F1@10": lambda r, j: f1_oracle(r, j, 10, 1),
        "F1(rel=3)@20": lambda r, j: f1_oracle(r, j, 20, 3),
    }
    for measure, oracle in checks.items():
        values = ev.per_query(measure)
        assert set(values) == set(qrels)
        for qid, judged in qrels.items():
            expected = oracle(reference.rank(run.get(qid, {})), judged)
            assert values[qid] == pytest.approx(expected, abs=1e-12), (measure, qid)
