"""What the HTML report embeds: the JSON documents the commands print, gathered in one object.

Nothing here computes a measure. Every number comes from a builder a command prints with:

- ``comparison``: :meth:`Comparison.to_dict` (``compare --format json``), plus its letters, marks and legend
  (null for a report of one run);
- ``evaluations[run]``: :func:`~retrieval_eval.report.text.json_document` (``evaluate --format json -q``),
  with ``ci`` (``evaluate --ci``) and the precision-recall points (``-m iprec_at_recall``);
- ``diffs[run]``: :func:`~retrieval_eval.report.query_json.run_diffs_json` (``diff --format json``) against the baseline;
- ``views[run][query]``: :func:`~retrieval_eval.report.query_json.query_view_json` (``inspect --query Q --format json``);
- ``pairs["A\\tB"][query]``: what entered and left the top k, from ``diff --query Q --format json``.

The page draws everything else (tables, charts, the side-by-side view) from these.
"""

from __future__ import annotations

import datetime
import hashlib
import os
from collections.abc import Mapping, Sequence
from typing import Any, cast

from attrs import frozen

from ..analysis.comparison import Comparison
from ..analysis.inspection import diff_query, diff_runs, inspect_query
from ..evaluators import SetEvaluator
from ..measures import Measure, parse, parse_list
from .intervals import CiOptions, ci_json
from .query_json import query_view_json, ranking_diff_json, run_diffs_json
from .text import Requested, json_document

__all__ = ["DEFAULT_DEPTH", "DEFAULT_TEXT_CHARS", "DEFAULT_UNJUDGED_BELOW", "Limits", "file_stamp", "query_flags",
           "report_data", "shown_documents"]

#: Documents of each ranking the page shows and embeds (and missed relevant documents whose text it embeds).
DEFAULT_DEPTH = 10
#: Characters of each document's text kept (a longer text is cut, and the cut is marked).
DEFAULT_TEXT_CHARS = 300
#: A query is flagged "unjudged-heavy" in a run when Judged@k (k: the depth shown) is below this.
DEFAULT_UNJUDGED_BELOW = 0.5
#: The version of the embedded object's shape: a reader of the page's data checks it.
DATA_VERSION = 1


@frozen
class Limits:
    """How much of each query the page embeds: the top ``depth`` documents of each run, the text
    of shown documents cut to ``text_chars`` characters; ``unjudged_below`` flags a query."""

    depth: int = DEFAULT_DEPTH
    text_chars: int = DEFAULT_TEXT_CHARS
    unjudged_below: float = DEFAULT_UNJUDGED_BELOW


def file_stamp(path: str | os.PathLike[str] | None) -> dict[str, str] | None:
    """An input as the page records it: its name as given and the SHA-256 of its bytes."""
    if path is None:
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return {"name": os.fspath(path), "sha256": digest.hexdigest()}


def tied_at_top(scores: Sequence[float | None]) -> bool:
    """Whether two of the shown documents have the same score: their order is then the tie-break's
    (trec_eval: doc_id descending), not the system's. A later tie report can replace this test."""
    known = [s for s in scores if s is not None]
    return len(set(known)) < len(known)


def query_flags(evaluations: Mapping[str, Mapping[str, Any]], views: Mapping[str, Mapping[str, Any]],
                judged: Mapping[str, Mapping[str, float]], limits: Limits) -> dict[str, dict[str, list[str]]]:
    """Per query, the runs in which it is ``missing`` (no results), ``unjudged`` (Judged@k below
    ``limits.unjudged_below``) or ``tied`` (a tie among the top k scores); only flags that apply."""
    flags: dict[str, dict[str, list[str]]] = {}

    def flag(query: str, kind: str, run: str) -> None:
        flags.setdefault(query, {}).setdefault(kind, []).append(run)

    for run, document in evaluations.items():
        for query in document["queries"]["missing_from_run"]:
            flag(query, "missing", run)
        for query, value in judged[run].items():
            if value < limits.unjudged_below and query not in document["queries"]["missing_from_run"]:
                flag(query, "unjudged", run)
        for query, view in views[run].items():
            if tied_at_top([d["score"] for d in view["top"]]):
                flag(query, "tied", run)
    return flags


def shown_documents(views: Mapping[str, Mapping[str, Any]], depth: int) -> set[str]:
    """The documents whose text the page shows: each run's top ``depth`` and first ``depth`` missed."""
    shown: set[str] = set()
    for by_query in views.values():
        for view in by_query.values():
            shown.update(d["doc_id"] for d in view["top"])
            shown.update(d["doc_id"] for d in view["missed"][:depth])
    return shown


def _pr_measures(rel: int) -> list[Requested]:
    return [Requested(m, label) for m, label in parse_list(["iprec_at_recall"], rel=rel, numeric=True)]


def report_data(
    evaluations: Mapping[str, SetEvaluator], measures: Sequence[Measure], comparison: Comparison | None, *,
    rel: int = 1, limits: Limits = Limits(), topics: Mapping[str, tuple[str, str]] | None = None,
    provenance: Mapping[str, Any] | None = None, title: str | None = None, ci: CiOptions | None = None,
) -> dict[str, Any]:
    """The page's data: the runs' JSON documents, the comparison and each query's views (see the module).

    ``evaluations`` are the runs in the report's order (the comparison's runs); ``measures`` the
    measures compared, keyed everywhere by their canonical string. One run has no comparison
    (None), and its relevance level is ``rel``. Document texts are added by the
    caller (``data["docs"]``), once the shown documents are known. ``ci`` sets how each mean's
    interval is made (default: ``evaluate --ci``'s).
    """
    requested = [Requested(m, str(m)) for m in measures]
    per_query = [r for r in requested if not r.measure.definition.summary_only]
    names = list(evaluations)
    baseline, rel = (comparison.baseline, comparison.rel) if comparison is not None else (names[0], rel)
    judged_at = Requested(parse(f"Judged@{limits.depth}", rel=rel), f"Judged@{limits.depth}")
    documents, judged, pr, cis = {}, {}, {}, {}
    for name, results in evaluations.items():
        documents[name] = json_document(results, requested, per_query=True, summary=True, run=name)
        judged_json = cast("dict[str, dict[str, float]]", json_document(
            results, [judged_at], per_query=True, summary=False)["per_query"])
        judged[name] = {q: v[judged_at.label] for q, v in judged_json.items()}
        pr[name] = json_document(results, _pr_measures(rel), per_query=False, summary=True)["aggregate"]
        cis[name] = ci_json(results, per_query, ci or CiOptions())
    diffs = {name: run_diffs_json([diff_runs(evaluations[baseline], evaluations[name], r.measure, r.label,
                                             names=(baseline, name)) for r in per_query], (baseline, name))
             for name in names if name != baseline}
    queries = list(dict.fromkeys(q for results in evaluations.values() for q in results.query_ids))
    labelled = [(r.label, r.measure) for r in requested]
    views = {name: {q: query_view_json(inspect_query(results, q, labelled, depth=limits.depth, where=name), run=name)
                    for q in results.query_ids} for name, results in evaluations.items()}
    pairs: dict[str, dict[str, Any]] = {}
    compared = ([(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
                if comparison is not None and comparison.all_pairs else [(baseline, b) for b in names if b != baseline])
    for a, b in compared:  # each run with the baseline (linear in the runs), or every pair with all_pairs
        common = [q for q in evaluations[a].query_ids if q in views[b]]
        pairs[f"{a}\t{b}"] = {q: _moved(ranking_diff_json(
            diff_query(evaluations[a], evaluations[b], q, [], k=limits.depth, names=(a, b)), (a, b)))
            for q in common}
    return {
        "format": "retrieval-eval report", "data_version": DATA_VERSION, "title": title or "Evaluation report",
        "provenance": {**(provenance or {}), "date": _now()},
        "limits": {"depth": limits.depth, "text_chars": limits.text_chars, "unjudged_below": limits.unjudged_below},
        "runs": names, "baseline": baseline, "measures": [r.label for r in requested],
        "integer": [r.label for r in requested if r.measure.definition.integer],
        "comparison": None if comparison is None else {
            **comparison.to_dict(), "letters": comparison.letters(), "legend": comparison.legend(),
            "marks": {run: {m: marks for (r, m), marks in comparison.beats().items() if r == run} for run in names}},
        "evaluations": documents, "ci": cis, "pr": pr, "diffs": diffs,
        "queries": queries, "topics": {q: list(topics[q]) for q in queries if q in topics} if topics else {},
        "flags": query_flags(documents, views, judged, limits),
        "views": views, "pairs": pairs, "docs": {},
    }


def _moved(diff: dict[str, Any]) -> dict[str, Any]:
    """Of ``diff --query``'s JSON, what the runs' views do not hold already: what entered and left."""
    return {"entered": diff["entered"], "left": diff["left"]}


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
