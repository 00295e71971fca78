"""Checking a run against a baseline: every rule's verdict, with the numbers behind it.

:func:`check_rules` compares the run's per-query values with the baseline's on the queries both
have, applies each rule (:mod:`retrieval_eval.harness.rules`) and says for each measure what its
queries can detect (:mod:`retrieval_eval.harness.resolution`). The verdicts are
:class:`~retrieval_eval.harness.outcomes.Outcome` values, which the CI writers read.

>>> from retrieval_eval import SetEvaluator
>>> from retrieval_eval.harness.baseline import Baseline
>>> from retrieval_eval.harness.rules import Rule
>>> qrels = {f"q{i}": {"a": 1, "b": 1} for i in range(6)}
>>> before = SetEvaluator.from_dict(qrels, {q: {"a": 2.0, "b": 1.0} for q in qrels})
>>> after = SetEvaluator.from_dict(qrels, {q: {"a": 2.0, "x": 1.0} for q in qrels})
>>> report = check_rules(Baseline.create(before, measures=["P@2"]), after, [Rule("P@2", max_drop=0.1)])
>>> [(o.name, o.status, o.message) for o in report.outcomes]
[('P@2 max_drop 0.1', 'failed', 'fell by 0.5000 (1.0000 -> 0.5000), more than 0.1')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from ..evaluators.set import SetEvaluator
from ..model import FloatArray, RetrievalEvalError
from .baseline import Baseline
from .outcomes import Outcome
from .resolution import POWER, Resolution, mean_interval, resolution
from .rules import Rule, merge_rules

__all__ = ["Check", "GateReport", "check_rules"]


@attrs.frozen
class Check:
    """One row of the gate's table: a check of a rule, its numbers and its outcome."""

    measure: str  #: as the rule names it
    kind: str  #: min, max_drop, ci_lower, regression, max_query_drop
    limit: str  #: the rule's value, as shown
    baseline: float | None  #: the baseline's value the check compares with (its mean; None for min, ci_lower)
    now: float  #: the run's value the check looks at (its mean, the interval's bound, the worst query's drop)
    outcome: Outcome
    note: str = ""  #: what the table adds (the interval of ci_lower, the query of max_query_drop)


@attrs.frozen
class GateReport:
    """What :func:`check_rules` found: one outcome per check (and per quarantined query), the table's
    rows, each measure's resolution, and the queries compared."""

    outcomes: tuple[Outcome, ...]
    checks: tuple[Check, ...]
    resolutions: Mapping[str, Resolution]
    queries: tuple[str, ...]
    only_in_baseline: tuple[str, ...]
    only_in_run: tuple[str, ...]
    test: str
    correction: str
    alpha: float

    def exit_code(self, *, fail_undecided: bool = False) -> int:
        """0 passed, 1 a check failed, 4 a check undecided (only with ``fail_undecided``)."""
        from .ci_output import exit_code

        return exit_code(self.outcomes, fail_undecided=fail_undecided)


def check_rules(baseline: Baseline, current: SetEvaluator, rules: Sequence[Rule], *, alpha: float = 0.05,
                test: str = "t", correction: str = "holm", permutations: int = 10_000, samples: int = 10_000,
                seed: int | None = None, worst: int = 5) -> GateReport:
    """Apply ``rules`` to ``current`` against ``baseline``, on the queries both have.

    ``current`` must be scored with the baseline's relevance level (its other options are the
    caller's to match: the command line refuses a mismatch). ``test`` and ``correction`` are those
    of :func:`retrieval_eval.compare`; the regression rules of one check form the corrected family.
    ``worst`` queries (the largest drops) are named in the details of each failed check.

    Raises
    ------
    RetrievalEvalError
        A rule on a measure the baseline does not hold, a run scored at another relevance level, or
        no query in common.
    """
    from ..analysis import stats

    if not 0 < alpha < 1:
        raise RetrievalEvalError(f"'alpha' must be between 0 and 1; got {alpha!r}")
    if test not in stats.TESTS or test == "tukey":
        raise RetrievalEvalError(f"'test' must be one of {', '.join(t for t in stats.TESTS if t != 'tukey')}; "
                                 f"got {test!r}")
    if correction not in stats.CORRECTIONS:
        raise RetrievalEvalError(f"'correction' must be one of {', '.join(stats.CORRECTIONS)}; got {correction!r}")
    stats.check_parameters(permutations=permutations, samples=samples, alpha=alpha, seed=seed)
    if current.rel != baseline.options["rel"]:
        raise RetrievalEvalError(f"the run is scored at relevance level {current.rel}; the baseline at "
                                 f"{baseline.options['rel']}")
    merged = merge_rules(rules, key=baseline.key)
    if any(rule.regression for rule in merged):
        stats.require_scipy(test)
    shared = set(current.query_ids)
    queries = [q for q in baseline.queries if q in shared]
    if not queries:  # a p-value "over 0 queries" would let any regression pass
        raise RetrievalEvalError(
            "the baseline and the run share no query, so there is nothing to compare; expected queries that both "
            f"have; got baseline: {_preview(baseline.queries)}; run: {_preview(current.query_ids) or 'no query'}")
    in_baseline = set(baseline.queries)
    base_rows = np.array([i for i, q in enumerate(baseline.queries) if q in shared], dtype=np.int64)
    position = {q: i for i, q in enumerate(current.query_ids)}
    run_rows = np.array([position[q] for q in queries], dtype=np.int64)

    pairs: dict[str, tuple[FloatArray, FloatArray]] = {}
    for rule in merged:
        key = baseline.key(rule.measure)
        pairs[rule.measure] = (np.asarray(baseline.per_query[key], dtype=np.float64)[base_rows],
                               current.array(key)[run_rows])
    family = sum(rule.regression for rule in merged)
    tested = _regressions(merged, pairs, test=test, correction=correction, alpha=alpha, permutations=permutations,
                          samples=samples, seed=seed)
    checks: list[Check] = []
    outcomes: list[Outcome] = []
    resolutions = {}
    for rule in merged:
        before, now = pairs[rule.measure]
        found = resolution(now - before, tolerance=rule.max_drop, test=test, alpha=alpha,
                           family=family if correction in ("bonferroni", "holm") else 1,
                           permutations=permutations, samples=samples)
        resolutions[rule.measure] = found
        context = _Context(rule, queries, before, now, found, alpha, worst)
        for kind in rule.kinds():
            check = context.regression(tested[rule.measure], test, correction) if kind == "regression" \
                else getattr(context, kind)()
            checks.append(check)
            outcomes.append(check.outcome)
        outcomes += context.quarantined()
    return GateReport(tuple(outcomes), tuple(checks), resolutions, tuple(queries),
                      tuple(q for q in baseline.queries if q not in shared),
                      tuple(q for q in current.query_ids if q not in in_baseline), test, correction, alpha)


def _regressions(rules: Sequence[Rule], pairs: Mapping[str, tuple[FloatArray, FloatArray]], *, test: str,
                 correction: str, alpha: float, permutations: int, samples: int,
                 seed: int | None) -> dict[str, tuple[float, float, float]]:
    """Each regression rule's (delta, raw p, corrected p): the paired test of compare, corrected over the family."""
    from ..analysis import stats
    from ..analysis.comparison import _stream

    gated = [rule.measure for rule in rules if rule.regression]
    results = [stats.paired_test(*pairs[m], test, permutations=permutations, samples=samples,
                                 seed=_stream(seed, m, "baseline", "run"), alpha=alpha) for m in gated]
    adjusted = stats.adjust(np.array([r.p_value for r in results]), correction)
    return {m: (r.delta, r.p_value, float(p)) for m, r, p in zip(gated, results, adjusted)}


@attrs.define
class _Context:
    """One rule's data, and a method per check that judges it."""

    rule: Rule
    queries: Sequence[str]
    before: FloatArray
    now: FloatArray
    found: Resolution
    alpha: float
    worst: int

    def _check(self, kind: str, limit: str, baseline: float | None, now: float, status: str, message: str,
               details: str = "", note: str = "") -> Check:
        name = f"{self.rule.measure} {kind}" + (f" {limit}" if limit else "")
        return Check(self.rule.measure, kind, limit, baseline, now, Outcome("rules", name, status, message, details),
                     note)

    def _means(self) -> tuple[float, float]:
        return float(self.before.mean()), float(self.now.mean())

    def _drops(self) -> str:
        """The largest per-query drops, a line each: ``q7: 0.8000 -> 0.1000 (-0.7000)``."""
        d = self.now - self.before
        order = [i for i in np.argsort(d, kind="stable")[: self.worst] if d[i] < 0]
        return "\n".join(f"{self.queries[i]}: {self.before[i]:.4f} -> {self.now[i]:.4f} ({d[i]:+.4f})" for i in order)

    def min(self) -> Check:
        floor = self.rule.min
        assert floor is not None
        _, now = self._means()
        if not _below(now, floor):
            return self._check("min", f"{floor:g}", None, now, "passed", f"mean {now:.4f} >= {floor:g}")
        return self._check("min", f"{floor:g}", None, now, "failed", f"mean {now:.4f} is below the floor {floor:g}",
                           self._drops())

    def max_drop(self) -> Check:
        tolerance = self.rule.max_drop
        assert tolerance is not None
        before, now = self._means()
        found = self.found
        note = "" if found.resolvable else (
            f"; note: {found.queries} queries detect only changes of {found.mde:.4f} or more at {POWER:.0%} power"
            + (f", {tolerance:g} needs {found.needed} queries" if found.needed else ""))
        if _below(tolerance, before - now):
            return self._check("max_drop", f"{tolerance:g}", before, now, "failed",
                               f"fell by {before - now:.4f} ({before:.4f} -> {now:.4f}), more than {tolerance:g}"
                               + note, self._drops())
        return self._check("max_drop", f"{tolerance:g}", before, now, "passed",
                           f"changed by {now - before:+.4f} ({before:.4f} -> {now:.4f})" + note)

    def ci_lower(self) -> Check:
        floor = self.rule.ci_lower
        assert floor is not None
        low, high = mean_interval(self.now, alpha=self.alpha)
        shown = f"{1 - self.alpha:.0%} interval of the mean [{low:.4f}, {high:.4f}]"
        note = f"mean {float(self.now.mean()):.4f}, {1 - self.alpha:.0%} CI [{low:.4f}, {high:.4f}]"
        if not _below(low, floor):
            return self._check("ci_lower", f"{floor:g}", None, low, "passed", f"{shown} starts at or above {floor:g}",
                               note=note)
        return self._check("ci_lower", f"{floor:g}", None, low, "failed", f"{shown} starts below {floor:g}",
                           self._drops(), note)

    def regression(self, tested: tuple[float, float, float], test: str, correction: str) -> Check:
        delta, raw, adjusted = tested
        before, now = self._means()
        p = f"p = {raw:.4g}" + (f", {correction} {adjusted:.4g}" if correction != "none" else "")
        if delta < 0 and adjusted < self.alpha:
            return self._check("regression", "", before, now, "failed",
                               f"significantly worse: delta {delta:+.4f}, {p} < {self.alpha:g} ({test} test over "
                               f"{len(self.queries)} queries)", self._drops())
        found = self.found
        if found.changed and found.smallest_p >= self.alpha:
            return self._check("regression", "", before, now, "undecided",
                               f"unresolvable: {found.changed} of {found.queries} queries differ, so the smallest p the "
                               f"{test} test can reach is {found.smallest_p:.4g} (after correction), not below "
                               f"{self.alpha:g}", self._drops())
        if not found.changed:
            return self._check("regression", "", before, now, "passed", "no query changed")
        return self._check("regression", "", before, now, "passed", f"no significant drop: delta {delta:+.4f}, {p}")

    def max_query_drop(self) -> Check:
        tolerance = self.rule.max_query_drop
        assert tolerance is not None
        quarantined = set(self.rule.quarantine)
        d = self.now - self.before
        counted = [i for i in range(len(d)) if self.queries[i] not in quarantined]
        largest = max([0.0, *(float(-d[i]) for i in counted)]) + 0.0  # + 0.0: no "-0.0000" for an unchanged run
        worst = min(counted, key=lambda i: (d[i], i), default=None)
        note = f"largest drop: {self.queries[worst]}" if worst is not None and largest > 0 else "no query dropped"
        over = sorted((i for i in counted if _below(tolerance, -d[i])), key=lambda i: (d[i], i))
        limit = f"{tolerance:g}"
        if not over:
            return self._check("max_query_drop", limit, None, largest, "passed", f"largest drop {largest:.4f}",
                               note=note)
        lines = "\n".join(f"{self.queries[i]}: {self.before[i]:.4f} -> {self.now[i]:.4f} ({d[i]:+.4f})" for i in over)
        return self._check("max_query_drop", limit, None, largest, "failed",
                           f"{len(over)} {'query' if len(over) == 1 else 'queries'} fell by more than {limit}: "
                           f"{_preview([self.queries[i] for i in over])}", lines, note)

    def quarantined(self) -> list[Outcome]:
        """A skipped outcome per quarantined query of the max_query_drop check, with its values."""
        if self.rule.max_query_drop is None:
            return []
        index = {q: i for i, q in enumerate(self.queries)}
        found = []
        for query in self.rule.quarantine:
            i = index.get(query)
            values = "not in the compared queries" if i is None else \
                f"{self.before[i]:.4f} -> {self.now[i]:.4f} ({self.now[i] - self.before[i]:+.4f})"
            found.append(Outcome("quarantine", f"{self.rule.measure} {query}", "skipped", f"quarantined: {values}"))
        return found


def _below(value: float, limit: float) -> bool:
    """Whether ``value`` is below ``limit`` by more than rounding: a mean of 0.85 computed as 1 - 0.15 must
    meet a floor of 0.85, and a drop of 0.15000000000000002 a tolerance of 0.15."""
    return value < limit - 1e-12 * max(1.0, abs(limit), abs(value))


def _preview(items: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


def gate_text(report: GateReport, *, title: str = "check", digits: int = 4) -> str:
    """The report as a terminal reads it: a header, a row per check (measure, rule, baseline, now, delta,
    verdict, what the queries can detect), then the details of every check that did not pass."""
    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    header = ("measure", "rule", "baseline", "now", "delta", "verdict", "resolution / note")
    rows = []
    for check in report.checks:
        found = report.resolutions[check.measure]
        delta = None if check.baseline is None else check.now - check.baseline
        status = check.outcome.status
        rows.append((check.measure, f"{check.kind} {check.limit}".strip(), number(check.baseline), number(check.now),
                     "-" if delta is None else f"{delta:+.{digits}f}", status if status == "passed" else status.upper(),
                     _resolution_text(check, found, digits)))
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = [(f"{title}: {len(report.queries)} queries compared; {report.test} test, {report.correction} correction, "
              f"alpha {report.alpha:g}")]
    if report.only_in_baseline:
        lines.append(f"left out: {len(report.only_in_baseline)} baseline queries the run does not have: "
                     f"{_preview(report.only_in_baseline)}")
    if report.only_in_run:
        lines.append(f"left out: {len(report.only_in_run)} run queries the baseline does not have: "
                     f"{_preview(report.only_in_run)}")
    lines += ["", *("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
                    for row in (header, *rows)), ""]
    for outcome in report.outcomes:
        if outcome.status != "passed":
            lines.append(f"{outcome.status}: {outcome.name}: {outcome.message}")
            lines += [f"  {line}" for line in outcome.details.splitlines()]
    counts = {s: sum(o.status == s for o in report.outcomes) for s in ("failed", "undecided", "skipped", "passed")}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items() if n))
    return "\n".join(lines) + "\n"


def _resolution_text(check: Check, found: Resolution, digits: int) -> str:
    if check.kind == "regression":
        return f"MDE {found.mde:.{digits}f}; smallest p {found.smallest_p:.3g}"
    if check.kind == "max_drop":
        needed = f"; {found.tolerance:g} needs {found.needed} queries" if found.needed is not None else ""
        return f"MDE {found.mde:.{digits}f}{needed}"
    return check.note
