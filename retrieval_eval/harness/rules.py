"""Gate rules: what a new run must satisfy against a baseline, one rule per measure.

A :class:`Rule` holds any of five checks on one measure:

- ``min``: the run's mean is at least this (an absolute floor);
- ``max_drop``: the mean falls by at most this against the baseline's mean on the same queries;
- ``ci_lower``: the lower bound of the (1 - alpha) confidence interval of the run's mean is at least this;
- ``regression``: no significant paired drop (the test and correction of ``compare``; the family
  corrected together is every regression rule of one check);
- ``max_query_drop``: no query falls by more than this, except the ``quarantine`` queries, which are
  reported (skipped) and never fail.

Rules come from a TOML file (:func:`read_rules`), one table per measure, or from the command line's
flags (:func:`rule_from_flag`); :func:`retrieval_eval.harness.gate.check_rules` applies them.

>>> rules = parse_rules({"nDCG@10": {"min": 0.4, "max_drop": 0.02}, "P@10": {"regression": True}})
>>> rules[0]
Rule(measure='nDCG@10', min=0.4, max_drop=0.02, ci_lower=None, regression=False, max_query_drop=None, quarantine=())
>>> rule_from_flag("max_query_drop", "AP=0.5")
Rule(measure='AP', min=None, max_drop=None, ci_lower=None, regression=False, max_query_drop=0.5, quarantine=())
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..model import InputFormatError, MissingExtraError, RetrievalEvalError

if TYPE_CHECKING:
    from ..evaluators.set import SetEvaluator
    from .baseline import Baseline
    from .gate import GateReport

__all__ = ["KINDS", "Rule", "check_rules", "merge_rules", "parse_rules", "read_rules", "rule_from_flag", "with_quarantine"]

#: The checks a rule can hold, in the order they are reported.
KINDS = ("min", "max_drop", "ci_lower", "regression", "max_query_drop")
_NUMBERS = ("min", "max_drop", "ci_lower", "max_query_drop")


@attrs.frozen
class Rule:
    """The checks on one measure (as typed: any spelling of a measure the baseline holds)."""

    measure: str
    min: float | None = None
    max_drop: float | None = None
    ci_lower: float | None = None
    regression: bool = False
    max_query_drop: float | None = None
    quarantine: tuple[str, ...] = ()

    def kinds(self) -> list[str]:
        """The checks this rule holds, in :data:`KINDS` order."""
        return [kind for kind in KINDS if (self.regression if kind == "regression" else getattr(self, kind) is not None)]

    def merged(self, other: Rule) -> Rule:
        """This rule with every check ``other`` sets; quarantines are joined."""
        changes: dict[str, Any] = {kind: getattr(other, kind) for kind in _NUMBERS if getattr(other, kind) is not None}
        return attrs.evolve(self, **changes, regression=self.regression or other.regression,
                            quarantine=tuple(dict.fromkeys((*self.quarantine, *other.quarantine))))


def merge_rules(rules: Iterable[Rule], key: Any = None) -> list[Rule]:
    """One rule per measure: rules on the same measure (the same ``key(rule.measure)``, by default the
    text) merged in order, a later one's checks winning."""
    merged: dict[Any, Rule] = {}
    for rule in rules:
        name = rule.measure if key is None else key(rule.measure)
        merged[name] = merged[name].merged(rule) if name in merged else rule
    return list(merged.values())


def _number(value: object, where: str, kind: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputFormatError(f"{where}: expected {kind} a finite number, found {value!r}"[:200])
    if kind in ("max_drop", "max_query_drop") and value < 0:
        raise InputFormatError(f"{where}: expected {kind} a number >= 0 (a drop), found {value!r}")
    return float(value)


def parse_rules(document: Mapping[str, Any], *, name: str = "rules") -> list[Rule]:
    """The rules of a decoded TOML document: a table per measure, keyed by the measure as typed."""
    rules = []
    for measure, table in document.items():
        where = f"{name}: [{measure}]"
        if not isinstance(table, Mapping):
            raise InputFormatError(f"{where}: expected a table of checks ({', '.join(KINDS)}, quarantine), "
                                   f"found {table!r}"[:200])
        unknown = [key for key in table if key not in (*KINDS, "quarantine")]
        if unknown:
            raise InputFormatError(f"{where}: expected checks among {', '.join(KINDS)}, quarantine; "
                                   f"found {unknown[0]!r}")
        regression = table.get("regression", False)
        if not isinstance(regression, bool):
            raise InputFormatError(f"{where}: expected regression true or false, found {regression!r}")
        quarantine = table.get("quarantine", [])
        if not isinstance(quarantine, list) or not all(isinstance(q, str) for q in quarantine):
            raise InputFormatError(f"{where}: expected quarantine a list of query ids, found {quarantine!r}"[:200])
        if quarantine and "max_query_drop" not in table:
            raise InputFormatError(f"{where}: expected max_query_drop beside quarantine (it quarantines queries "
                                   "from that check), found quarantine alone")
        numbers: dict[str, Any] = {kind: _number(table[kind], where, kind) for kind in _NUMBERS if kind in table}
        rule = Rule(str(measure), regression=regression, quarantine=tuple(quarantine), **numbers)
        if not rule.kinds():
            raise InputFormatError(f"{where}: expected at least one check ({', '.join(KINDS)}), found none")
        rules.append(rule)
    return rules


def read_rules(path: str | os.PathLike[str]) -> list[Rule]:
    """The rules of a TOML file (see docs/gating.md). Needs Python 3.11's tomllib, or tomli (the ``gate``
    extra installs it on Python 3.10)."""
    import importlib

    try:
        tomllib = importlib.import_module("tomllib")
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]
        except ImportError:
            raise MissingExtraError("reading a rules file on Python 3.10 needs tomli: "
                                    "pip install 'retrieval-evaluator[gate]'") from None
    name = os.fspath(path)
    try:
        with open(path, "rb") as stream:
            document = tomllib.load(stream)
    except OSError as exc:
        raise InputFormatError(f"{name}: cannot read the rules: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputFormatError(f"{name}: expected TOML rules, found a syntax error: {exc}") from None
    except UnicodeDecodeError:
        raise InputFormatError(f"{name}: expected TOML rules (UTF-8), found bytes that are not UTF-8") from None
    rules = parse_rules(document, name=name)
    if not rules:
        raise InputFormatError(f"{name}: expected a table of checks per measure, found no rule")
    return rules


def rule_from_flag(kind: str, text: str) -> Rule:
    """The rule of one command-line flag: ``MEASURE=VALUE`` for the numeric checks, ``MEASURE`` for
    ``regression``. A RetrievalEvalError says what was expected."""
    if kind == "regression":
        if not text.strip():
            raise RetrievalEvalError("--regression: expected a measure, found nothing")
        return Rule(text.strip(), regression=True)
    flag = "--" + kind.replace("_", "-")
    measure, equals, value = text.rpartition("=")
    if not equals or not measure.strip():
        raise RetrievalEvalError(f"{flag}: expected MEASURE=VALUE (as nDCG@10=0.4), found {text[:60]!r}")
    try:
        number = float(value)
    except ValueError:
        raise RetrievalEvalError(f"{flag} {measure.strip()[:60]}: expected a number, found {value[:60]!r}") from None
    checks: dict[str, Any] = {kind: _number(number, flag, kind)}
    return Rule(measure.strip(), **checks)


def with_quarantine(rules: Sequence[Rule], queries: Sequence[str]) -> list[Rule]:
    """``rules`` with ``queries`` quarantined from every max_query_drop check (the --quarantine flag)."""
    if not queries:
        return list(rules)
    return [attrs.evolve(rule, quarantine=tuple(dict.fromkeys((*rule.quarantine, *queries))))
            if rule.max_query_drop is not None else rule for rule in rules]


def read_quarantine(path: str | os.PathLike[str]) -> list[str]:
    """The query ids of a quarantine list: one id per line, as ``retrieval-eval flaky -o`` writes it.

    Blank lines are skipped; a line holding spaces or tabs inside is refused with its line number.

    >>> import pathlib, tempfile
    >>> listed = pathlib.Path(tempfile.mkdtemp()) / "quarantine.txt"
    >>> _ = listed.write_text("q12\\n\\nq7\\n")
    >>> read_quarantine(listed)
    ['q12', 'q7']
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputFormatError(f"{os.fspath(path)}: cannot read the quarantine list: {exc.strerror or exc}") from None
    queries = []
    for number, raw in enumerate(data.splitlines(), 1):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise InputFormatError(f"{os.fspath(path)}:{number}: expected UTF-8 text, found {raw[:40]!r}") from None
        if not line:
            continue
        if len(line.split()) != 1:
            raise InputFormatError(f"{os.fspath(path)}:{number}: expected one query id, found {line[:80]!r}")
        queries.append(line)
    return queries


def check_rules(baseline: Baseline, current: SetEvaluator, rules: Sequence[Rule], **options: Any) -> GateReport:
    """:func:`retrieval_eval.harness.gate.check_rules`, here too: where the rules are."""
    from .gate import check_rules as checked

    return checked(baseline, current, rules, **options)
