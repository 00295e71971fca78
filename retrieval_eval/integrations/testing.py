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

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..evaluators import SetEvaluator
from ..measures import parse

if TYPE_CHECKING:
    from ..harness.baseline import Baseline
    from ..harness.expectations import Fact
    from ..harness.rules import Rule

__all__ = ["assert_at_least", "assert_fact", "assert_not_worse", "assert_passes_rules", "expectation_params",
           "rules_of"]


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


def expectation_params(path: str | os.PathLike[str], *, strict: bool = False) -> list[Any]:
    """The facts of an expectations file as ``pytest.param``s, one test each, named by the fact (its
    ``id``, or what it claims). A ``known_failure`` fact is marked ``xfail``: it is reported as
    xfailed while it fails and as XPASS once it passes (a failure with ``strict=True``), the sign
    to unmark it. Use with :func:`assert_fact`::

        @pytest.mark.parametrize("fact", expectation_params("tests/intent.jsonl"))
        def test_intent(fact, retrieval_eval_rankings):
            assert_fact(fact, retrieval_eval_rankings("runs/today.run"))
    """
    import pytest  # here: only a test suite calls this

    from ..harness.expectations import read_expectations

    params = []
    for fact in read_expectations(path):
        marks = [pytest.mark.xfail(reason=f"known failure ({fact.where})" + (f": {fact.note}" if fact.note else ""),
                                   strict=strict)] if fact.known_failure else []
        params.append(pytest.param(fact, id=fact.name, marks=marks))
    return params


def assert_fact(fact: Fact, run: Any, *, order: str = "score") -> None:
    """Fail unless ``fact`` holds on ``run``: a run file's path, a dict ``{query_id: {doc_id: score}}``,
    a SetEvaluator or :class:`~retrieval_eval.harness.expectations.Rankings` (read once, for many facts).
    The message gives the fact, the ranks of its documents and where it is written.

    >>> from retrieval_eval.harness.expectations import parse_jsonl
    >>> [fact] = parse_jsonl('{"query": "q1", "doc": "b", "in_top": 1}', "intent.jsonl")
    >>> assert_fact(fact, {"q1": {"a": 2.0, "b": 1.0}})
    Traceback (most recent call last):
      ...
    AssertionError: q1: b in top 1: b at rank 2 (intent.jsonl:1)
    """
    from ..harness.expectations import Rankings, check_fact

    if isinstance(run, (str, os.PathLike)):
        rankings = Rankings.read(run, [fact.query], order=order)
    else:
        rankings = Rankings.of(run, [fact.query], order=order)
    checked = check_fact(fact, rankings)
    if not checked.holds:
        note = f"; note: {fact.note}" if fact.note else ""
        raise AssertionError(f"{fact.name}: {checked.seen} ({fact.where}){note}")


def rules_of(rules: Any) -> list[Rule]:
    """Gate rules given as a TOML file's path, a dict as that file reads (``{"nDCG@10": {"max_drop":
    0.02}}``), a :class:`~retrieval_eval.harness.rules.Rule` or a list of them."""
    from ..harness.rules import Rule, parse_rules, read_rules

    if isinstance(rules, (str, os.PathLike)):
        return read_rules(rules)
    if isinstance(rules, Mapping):
        return parse_rules(rules)
    if isinstance(rules, Rule):
        return [rules]
    listed = list(rules)
    if not all(isinstance(rule, Rule) for rule in listed):
        raise TypeError("rules: expected a TOML file's path, a dict of checks per measure or Rules")
    return listed


def assert_passes_rules(baseline: Baseline | str | os.PathLike[str], results: SetEvaluator, rules: Any, *,
                        fail_undecided: bool = False, qrels_path: str | os.PathLike[str] | None = None,
                        **options: Any) -> None:
    """Fail when ``results`` breaks a gate rule against ``baseline`` (a :class:`Baseline` or its file),
    as ``retrieval-eval check`` would: the same :func:`~retrieval_eval.harness.gate.check_rules`, whose
    keyword ``options`` (``alpha``, ``test``, ``correction``, ``seed``, ...) pass through. The message
    names each failed check and the queries that lost most, with their values before and after. An
    undecided check fails only with ``fail_undecided``. With ``qrels_path``, a baseline made on other
    judgments is refused first.

    >>> from retrieval_eval.harness.baseline import Baseline
    >>> qrels = {f"q{i}": {"a": 1, "b": 1} for i in range(4)}
    >>> before = SetEvaluator.from_dict(qrels, {q: {"a": 2.0, "b": 1.0} for q in qrels})
    >>> after = SetEvaluator.from_dict(qrels, {**{q: {"a": 2.0, "b": 1.0} for q in qrels}, "q2": {"a": 1.0}})
    >>> assert_passes_rules(Baseline.create(before, measures=["P@2"]), after, {"P@2": {"max_drop": 0.1}})
    Traceback (most recent call last):
      ...
    AssertionError: P@2 max_drop 0.1: fell by 0.1250 (1.0000 -> 0.8750), more than 0.1...
        q2: 1.0000 -> 0.5000 (-0.5000)
    """
    from ..harness.baseline import Baseline, FileStamp
    from ..harness.gate import check_rules

    if not isinstance(baseline, Baseline):
        baseline = Baseline.read(baseline)
    if qrels_path is not None:
        differ = baseline.differences(qrels=FileStamp.of(qrels_path), options=baseline.options)
        if differ:
            raise AssertionError("the baseline was made on other judgments: " + "; ".join(differ))
    report = check_rules(baseline, results, rules_of(rules), **options)
    failing = {"failed", "undecided"} if fail_undecided else {"failed"}
    lines = []
    for outcome in report.outcomes:
        if outcome.status in failing:
            lines.append(f"{outcome.name}: {outcome.message}")
            lines += [f"    {line}" for line in outcome.details.splitlines()]
    if lines:
        raise AssertionError("\n".join(lines))
