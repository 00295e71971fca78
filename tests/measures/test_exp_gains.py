"""``dcg='exp-log2'`` with grades whose 2^g - 1 is beyond float64 (issue 27, G).

2^1024 overflows float64, so nDCG(dcg='exp-log2') used to be inf / inf = NaN with a RuntimeWarning.
The expected values here are exact: the gains 2^g - 1 as Python integers (or Fractions for custom
gains), the discounts 1 / log2(rank + 1) as the exact rationals of the float64 discounts, and one
rounding at the end. pytest turns any RuntimeWarning into an error.
"""

from __future__ import annotations

import math
import random
import warnings
from fractions import Fraction

import pytest

from retrieval_eval import SetEvaluator

EXP_NDCG = "nDCG(dcg='exp-log2')"


def _exact_dcg(gains: list[Fraction], k: int | None = None) -> Fraction:
    """sum of gain_i / log2(i + 1) over ranks i = 1.. (<= k), with float64's log2 taken exactly."""
    return sum((gain / Fraction(math.log2(rank + 1)) for rank, gain in enumerate(gains[:k], start=1)), Fraction(0))


def _exp(grade: float) -> Fraction:
    """2^grade - 1: exact for an integral grade; 2^floor(grade) times float64's 2^fraction otherwise."""
    whole = math.floor(grade)
    return Fraction(2) ** whole * Fraction(2 ** (grade - whole)) - 1


def _exact_ndcg(ranked: list[float], judged: list[float], k: int | None = None) -> float:
    ideal = sorted((g for g in judged if g > 0), reverse=True)
    return float(_exact_dcg([_exp(g) for g in ranked], k) / _exact_dcg([_exp(g) for g in ideal], k))


CASES = {
    # name: (judgments {doc: grade}, ranking best first)
    "1024 below 1": ({"a": 1024, "b": 1}, ["b", "a"]),
    "5000 third": ({"a": 5000, "b": 1024, "c": 3, "d": 0}, ["b", "c", "a", "d"]),
    "1023 and 1024": ({"a": 1024, "b": 1023}, ["b", "a"]),
    "1024 twice, one missed": ({"a": 1024, "b": 1024, "c": 1024}, ["x", "a", "b"]),
    "600 (finite either way)": ({"a": 600, "b": 599, "c": 1}, ["c", "b", "a"]),
    "5000 unretrieved": ({"a": 5000, "b": 2}, ["b"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("k", [None, 2])
def test_large_grades_give_the_exact_ndcg(name: str, k: int | None) -> None:
    judged, ranking = CASES[name]
    run = {doc: float(len(ranking) - i) for i, doc in enumerate(ranking)}  # best first
    ours = SetEvaluator.from_dict({"q": judged}, {"q": run}).per_query(EXP_NDCG + (f"@{k}" if k else ""))["q"]
    expected = _exact_ndcg([judged.get(doc, 0) for doc in ranking], list(judged.values()), k)
    assert math.isfinite(ours) and ours == pytest.approx(expected, rel=1e-15, abs=0)


def test_a_query_with_large_grades_leaves_the_others_unchanged() -> None:
    """The scale is per query: a small-grade query in the same batch keeps its value to the bit."""
    small = ({"x": 2, "y": 1}, {"y": 2.0, "x": 1.0})
    alone = SetEvaluator.from_dict({"s": small[0]}, {"s": small[1]}).per_query(EXP_NDCG)["s"]
    mixed = SetEvaluator.from_dict({"s": small[0], "t": {"a": 5000, "b": 1}},
                                   {"s": small[1], "t": {"b": 2.0, "a": 1.0}}).per_query(EXP_NDCG)
    assert mixed["s"] == alone == _exact_ndcg([1, 2], [2, 1])
    assert mixed["t"] == pytest.approx(_exact_ndcg([1, 5000], [5000, 1]), rel=1e-15)


def test_large_custom_gains() -> None:
    results = SetEvaluator.from_dict({"q": {"a": 2, "b": 1}}, {"q": {"b": 2.0, "a": 1.0}})
    ours = results.per_query("nDCG(dcg='exp-log2', gains={2: 2000.5, 1: 1999})")["q"]
    assert ours == pytest.approx(_exact_ndcg([1999, 2000.5], [2000.5, 1999]), rel=1e-15)


def test_unnormalised_dcg_beyond_float64_is_refused_without_a_warning() -> None:
    """2^1024 - 1 is beyond float64: DCG and IDCG raise MeasureError naming the query (issue 28, item 5:
    no non-finite value reaches a summary or a command; they were +inf). nDCG, a ratio, has its value."""
    from retrieval_eval.measures import MeasureError

    results = SetEvaluator.from_dict({"q": {"a": 1024}, "r": {"a": 1023}}, {"q": {"a": 1.0}, "r": {"a": 1.0}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("DCG", "IDCG"):
            with pytest.raises(MeasureError, match=rf"^{name}\(dcg='exp-log2'\) of query 'q' is inf, not a finite number"):
                results.per_query(f"{name}(dcg='exp-log2')")
        assert results.subset(["r"]).per_query("DCG(dcg='exp-log2')") == {"r": float(2**1023 - 1)}
        assert results.subset(["r"]).per_query("IDCG(dcg='exp-log2')") == {"r": float(2**1023 - 1)}
        assert results.per_query(EXP_NDCG) == {"q": 1.0, "r": 1.0}


def _ireval_normalization_term(judged: dict[str, int], k: int) -> float:
    """ireval's ``normalizationTermNDCG(k)`` (Lemur ireval, after its 2008 ideal-position fix): the
    judged documents with a value != 0, by value descending, the first k summed as (2^v - 1) / ln(1 + p)."""
    values = sorted((v for v in judged.values() if v != 0), reverse=True)[:k]
    return sum((2.0 ** v - 1.0) / math.log(1 + p) for p, v in enumerate(values, start=1))


@pytest.mark.parametrize("seed", range(5))
def test_irevals_normalization_term_is_exp_idcg_over_ln2(seed: int) -> None:
    """docs/java-to-python.md maps normalizationTermNDCG(k) to IDCG(dcg='exp-log2')@k / ln 2: the
    natural-log discount is log2's times ln 2. Equal wherever no judgment is negative (ireval's
    ideal list keeps negative ones, whose 2^v - 1 is below 0; ours stops at the last positive one)."""
    rnd = random.Random(seed)
    qrels = {f"q{i}": {f"d{j}": rnd.choice([0, 0, 1, 1, 2, 3, 4]) for j in range(rnd.randint(1, 30))}
             for i in range(40)}
    results = SetEvaluator.from_dict(qrels, {q: {"d0": 1.0} for q in qrels})
    for k in (1, 3, 5, 10, 20, 100):
        ours = results.per_query(f"IDCG(dcg='exp-log2')@{k}")
        for query, judged in qrels.items():
            assert ours[query] / math.log(2) == pytest.approx(_ireval_normalization_term(judged, k), rel=1e-13)
    negative = {"a": 2, "b": -1}  # ireval: (3 / ln 2) + (2^-1 - 1) / ln 3; ours leaves b out
    with_negative = SetEvaluator.from_dict({"q": negative}, {"q": {"a": 1.0}}).per_query("IDCG(dcg='exp-log2')@2")
    assert with_negative["q"] / math.log(2) == pytest.approx(3 / math.log(2))
    assert _ireval_normalization_term(negative, 2) < 3 / math.log(2)
