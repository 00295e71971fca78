"""Assertions for test suites that guard a search system's quality.

>>> from retrieval_eval import SetEvaluator
>>> from retrieval_eval.testing import assert_at_least
>>> runs = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0, "b": 0.5}})
>>> assert_at_least(runs, {"RR": 0.7})
>>> assert_at_least(runs, {"RR": 0.8})
Traceback (most recent call last):
  ...
AssertionError: RR is 0.7500, below 0.8000; worst queries: q2 (0.5000), q1 (1.0000)
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..evaluators import SetEvaluator
from ..measures import parse

__all__ = ["assert_at_least", "assert_not_worse"]


def _worst(values: Mapping[str, float], count: int = 5) -> str:
    ranked = sorted(values.items(), key=lambda item: (item[1], item[0]))[:count]
    return ", ".join(f"{q} ({v:.4f})" for q, v in ranked)


def assert_at_least(evaluator: SetEvaluator, thresholds: Mapping[str, float]) -> None:
    """Fail unless each measure's summary reaches its threshold; the message names the worst queries.

    Parameters
    ----------
    evaluator : SetEvaluator
    thresholds : mapping of measure string to the lowest acceptable summary value
    """
    failures = []
    for text, floor in thresholds.items():
        measure = parse(text, rel=evaluator.rel)
        value = evaluator.aggregate(measure)
        if not value >= floor:
            failures.append(f"{measure} is {value:.4f}, below {floor:.4f}; worst queries: "
                            f"{_worst(evaluator.per_query(measure))}")
    if failures:
        raise AssertionError("; ".join(failures))


def assert_not_worse(
    baseline: SetEvaluator, candidate: SetEvaluator, measure: str, *, alpha: float = 0.05, test: str = "t",
    seed: int | None = 0,
) -> None:
    """Fail when ``candidate`` is significantly worse than ``baseline`` on ``measure`` (two-sided test
    at ``alpha``, over the queries both have); the message names the queries that lost most.

    ``seed`` fixes the Monte Carlo tests (permutation, bootstrap), so that a test suite is repeatable.
    """
    from ..analysis.comparison import compare

    result = compare(None, {"baseline": baseline, "candidate": candidate}, [measure], test=test, alpha=alpha,
                     correction="none", seed=seed)
    worse = result.significant_worse()
    if worse:
        c = worse[0]
        queries = list(result.queries)
        key = parse(measure, rel=candidate.rel)
        before = baseline.subset(queries).array(key)
        after = candidate.subset(queries).array(key)
        order = np.argsort(after - before, kind="stable")[:5]
        lost = ", ".join(f"{queries[i]} ({before[i]:.4f} -> {after[i]:.4f})" for i in order if after[i] < before[i])
        raise AssertionError(
            f"candidate is worse than baseline on {c.measure}: {result.means['candidate'][c.measure]:.4f} vs "
            f"{result.means['baseline'][c.measure]:.4f} (delta {c.delta:+.4f}, p = {c.p_value:.4g}, {test} test, "
            f"alpha {alpha:g}); lost most on: {lost}"
        )
