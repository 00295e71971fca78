"""One checked thing of a gate: a rule on a measure, an intent fact, a quarantined query.

Every part of the harness (``check``'s rules, ``expect``'s facts, the pytest plugin) reports in
:class:`Outcome` values, so that one writer turns them into JUnit XML, a GitHub step summary,
annotations and an exit code (:mod:`retrieval_eval.harness.ci_output`).

>>> Outcome("rules", "nDCG@10 max_drop 0.02", "failed", "fell by 0.0362").status
'failed'
"""

from __future__ import annotations

import attrs

__all__ = ["STATUSES", "Outcome"]

#: The states an outcome can be in. "undecided": the data cannot settle it (too few queries to detect
#: the tolerance); it passes unless the caller asks undecided outcomes to fail.
STATUSES = ("passed", "failed", "skipped", "undecided")


def _known_status(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in STATUSES:
        raise ValueError(f"Outcome.status: expected one of {', '.join(STATUSES)}, found {value!r}")


@attrs.frozen
class Outcome:
    """One checked thing and how it went.

    ``group`` collects outcomes of one kind ("rules", "expectations", "quarantine"): a JUnit test
    suite each. ``message`` is one line (why it failed, was skipped or is undecided); ``details`` may
    span lines (the worst queries, with their values before and after).

    >>> Outcome("quarantine", "nDCG@10 q7", "maybe")
    Traceback (most recent call last):
    ...
    ValueError: Outcome.status: expected one of passed, failed, skipped, undecided, found 'maybe'
    """

    group: str
    name: str
    status: str = attrs.field(validator=_known_status)
    message: str = ""
    details: str = ""
