"""Flaky queries: how much one system's repeated runs disagree, query by query.

Repeated builds of one system (approximate nearest-neighbour search, a nondeterministic index,
ties broken by thread timing) can rank a query differently each time. Given two or more such runs,
:func:`flaky_queries` reports, for every query they share:

- the spread of each measure over the repeats: the smallest and largest value, their difference
  (the range) and the sample standard deviation (``ddof=1``);
- the mean pairwise **overlap@k** of the top ``k`` documents: for each pair of repeats,
  ``|A ∩ B| / max(|A|, |B|)`` where A and B are the sets of the top k document ids (``|A ∩ B| / k``
  when both rankings have k documents or more; 1 when both are empty). The order within the top k
  does not count: two repeats that swap ranks 3 and 4 overlap fully, and the measures' spread shows
  the swap.

A query is *flagged* when a measure's range exceeds ``max_spread`` or its overlap falls below
``min_overlap``. The defaults, 0 and 1, flag every query whose repeats differ at all; a team that
accepts some noise loosens them. The flagged ids are what a gate quarantines (``flaky -o``).

>>> from retrieval_eval import SetEvaluator
>>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
>>> first = SetEvaluator.from_dict(qrels, {"q1": {"a": 2.0, "x": 1.0}, "q2": {"b": 1.0}})
>>> second = SetEvaluator.from_dict(qrels, {"q1": {"x": 2.0, "a": 1.0}, "q2": {"b": 1.0}})
>>> report = flaky_queries([first, second], ["RR"], k=2)
>>> [(q.query_id, q.overlap, q.spreads[0].range) for q in report.queries]
[('q1', 1.0, 0.5), ('q2', 1.0, 0.0)]
>>> report.flagged()
['q1']
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import asdict, frozen

from ..model import RetrievalEvalError

if TYPE_CHECKING:
    from ..evaluators.query import MeasureLike
    from ..evaluators.results import SetResults

__all__ = ["FlakyQuery", "FlakyReport", "Spread", "flaky_queries", "top_k_overlap"]


@frozen
class Spread:
    """One measure's values of one query over the repeats."""

    minimum: float
    maximum: float
    range: float  #: maximum - minimum
    sd: float  #: sample standard deviation (ddof=1)


@frozen
class FlakyQuery:
    """One query: a :class:`Spread` per measure (in the report's measure order), its top-k overlap,
    and whether it is flagged."""

    query_id: str
    spreads: tuple[Spread, ...]
    overlap: float
    flagged: bool


@frozen
class FlakyReport:
    """What :func:`flaky_queries` found, query by query, in the first run's query order."""

    runs: tuple[str, ...]
    measures: tuple[str, ...]
    k: int
    max_spread: float
    min_overlap: float
    queries: tuple[FlakyQuery, ...]

    def flagged(self) -> list[str]:
        """The ids of the flagged queries: the quarantine list."""
        return [q.query_id for q in self.queries if q.flagged]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the options, then one object per query with its spreads keyed by measure."""
        return {
            "runs": list(self.runs), "measures": list(self.measures), "k": self.k, "max_spread": self.max_spread,
            "min_overlap": self.min_overlap, "flagged": self.flagged(),
            "queries": [{"query": q.query_id, "overlap": q.overlap, "flagged": q.flagged,
                         "spread": {m: asdict(s) for m, s in zip(self.measures, q.spreads)}} for q in self.queries],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    def _header(self) -> list[str]:
        return ["query", f"overlap@{self.k}",
                *(f"{m} {part}" for m in self.measures for part in ("min", "max", "range", "sd")), "flagged"]

    def to_csv(self) -> str:
        """One line per query at full precision, with a header row."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self._header())
        for q in self.queries:
            writer.writerow([q.query_id, repr(q.overlap),
                             *(repr(v) for s in q.spreads for v in (s.minimum, s.maximum, s.range, s.sd)),
                             "yes" if q.flagged else "no"])
        return out.getvalue()

    def _cells(self, digits: int, *, only_flagged: bool) -> list[list[str]]:
        return [[q.query_id, f"{q.overlap:.{digits}f}",
                 *(f"{v:.{digits}f}" for s in q.spreads for v in (s.minimum, s.maximum, s.range, s.sd)),
                 "yes" if q.flagged else ""] for q in self.queries if q.flagged or not only_flagged]

    def summary(self) -> str:
        """One line: how many queries were flagged, and by which thresholds."""
        return (f"{len(self.flagged())} of {len(self.queries)} queries flagged over {len(self.runs)} repeats "
                f"(a measure's range > {self.max_spread:g}, or overlap@{self.k} < {self.min_overlap:g}).")

    def to_table(self, digits: int = 4, *, only_flagged: bool = False) -> str:
        """Plain text: a row per query (or per flagged query), then :meth:`summary`."""
        rows = [self._header(), *self._cells(digits, only_flagged=only_flagged)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
                 .rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines) + "\n\n" + self.summary() + "\n"

    def to_markdown(self, digits: int = 4, *, only_flagged: bool = False) -> str:
        def row(cells: Sequence[str]) -> str:
            return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
        header = self._header()
        lines = [row(header), "|---" + "|---:" * (len(header) - 2) + "|---|"]
        lines += [row(cells) for cells in self._cells(digits, only_flagged=only_flagged)]
        return "\n".join(lines) + "\n\n" + self.summary() + "\n"


def top_k_overlap(rankings: Sequence[Sequence[str]], k: int) -> float:
    """Mean over every pair of ``rankings`` (doc ids, best first) of ``|A ∩ B| / max(|A|, |B|)``, A and B
    the sets of their first ``k`` ids; 1 for fewer than two rankings or two empty ones.

    >>> round(top_k_overlap([["a", "b", "c"], ["b", "a", "d"], ["a", "b", "c"]], 3), 4)  # (2/3 + 1 + 2/3) / 3
    0.7778
    """
    tops = [set(ranking[:k]) for ranking in rankings]
    shares = []
    for i, first in enumerate(tops):
        for second in tops[i + 1:]:
            larger = max(len(first), len(second))
            shares.append(1.0 if larger == 0 else len(first & second) / larger)
    return math.fsum(shares) / len(shares) if shares else 1.0


def flaky_queries(
    runs: Sequence[SetResults], measures: Sequence[MeasureLike], *, k: int = 10, max_spread: float = 0.0,
    min_overlap: float = 1.0, names: Sequence[str] | None = None,
) -> FlakyReport:
    """How much the repeats ``runs`` (two or more evaluations of one system on the same qrels) disagree
    on each query they share; see the module notes.

    Parameters
    ----------
    runs : SetEvaluator objects, two or more
    measures : measure strings or Measure objects, one or more (numeric: not ``relstring``)
    k : int, default 10
        The depth of the top-k overlap, >= 1.
    max_spread : float >= 0, default 0
        Flag a query when a measure's range over the repeats exceeds it.
    min_overlap : float in [0, 1], default 1
        Flag a query when its mean pairwise overlap@k is below it.
    names : the runs' names (default ``run1``, ``run2``, ...)
    """
    from ..measures import parse

    if len(runs) < 2:
        raise RetrievalEvalError(f"flaky queries need two or more repeated runs; got {len(runs)}.")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise RetrievalEvalError(f"'k' must be an integer >= 1; got {k!r}.")
    if not (isinstance(max_spread, (int, float)) and max_spread >= 0.0 and math.isfinite(max_spread)):
        raise RetrievalEvalError(f"'max_spread' must be a number >= 0; got {max_spread!r}.")
    if not (isinstance(min_overlap, (int, float)) and 0.0 <= min_overlap <= 1.0):
        raise RetrievalEvalError(f"'min_overlap' must lie in [0, 1]; got {min_overlap!r}.")
    if not measures:
        raise RetrievalEvalError("flaky queries need at least one measure.")
    names = [f"run{i}" for i in range(1, len(runs) + 1)] if names is None else list(names)
    if len(names) != len(runs):
        raise RetrievalEvalError(f"{len(runs)} runs need {len(runs)} names; got {len(names)}.")
    parsed = list(dict.fromkeys(parse(m, rel=runs[0].rel) for m in measures))
    shared = set.intersection(*(set(r.query_ids) for r in runs))
    queries = [q for q in runs[0].query_ids if q in shared]
    if not queries:
        raise RetrievalEvalError("the repeated runs share no query; expected runs of one system on the same qrels.")
    positions = [{q: i for i, q in enumerate(r.query_ids)} for r in runs]
    rows = [np.array([where[q] for q in queries], dtype=np.int64) for where in positions]
    spreads = []  # per measure: (min, max, range, sd) arrays over the queries
    for measure in parsed:
        values = np.stack([r.array(measure)[index] for r, index in zip(runs, rows)])  # (repeats, queries)
        low, high = values.min(axis=0), values.max(axis=0)
        spreads.append((low, high, high - low, values.std(axis=0, ddof=1)))
    overlaps = [top_k_overlap([[d.doc_id for d in r[q].retrieved_documents()[:k]] for r in runs], k)
                for q in queries]
    widest = np.max([s[2] for s in spreads], axis=0)
    flagged = (widest > max_spread) | (np.array(overlaps) < min_overlap)
    found = tuple(
        FlakyQuery(q, tuple(Spread(float(s[0][i]), float(s[1][i]), float(s[2][i]), float(s[3][i])) for s in spreads),
                   overlaps[i], bool(flagged[i]))
        for i, q in enumerate(queries))
    return FlakyReport(tuple(names), tuple(str(m) for m in parsed), k, float(max_spread), float(min_overlap), found)
