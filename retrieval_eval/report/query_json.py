"""The JSON forms of ``inspect --query``, ``diff`` and ``diff --query``: one builder each, which the
commands print and the HTML report embeds, so that both show the same numbers.

>>> from retrieval_eval.analysis.inspection import QueryView, RankedDocument
>>> view = QueryView("q1", 2, 1, (RankedDocument(1, "d1", 2.5, 1, True),), (), (("AP", 1.0),))
>>> query_view_json(view, run="bm25")["top"]
[{'rank': 1, 'doc_id': 'd1', 'score': 2.5, 'judgment': 1, 'relevant': True}]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..analysis.inspection import QueryView, RankedDocument, RankingDiff, RunDiff

__all__ = ["document_json", "query_view_json", "ranking_diff_json", "run_diffs_json"]


def document_json(d: RankedDocument) -> dict[str, Any]:
    """One ranked document: rank, doc_id, score, judgment (null: unjudged) and relevant."""
    return {"rank": d.rank, "doc_id": d.doc_id, "score": d.score, "judgment": d.judgment, "relevant": d.relevant}


def query_view_json(view: QueryView, *, run: str) -> dict[str, Any]:
    """``inspect --query Q --format json``: the top of the ranking, the missed relevant documents
    (highest grade first) and the query's values, keyed by measure."""
    return {
        "run": run, "query": view.query_id, "retrieved": view.retrieved, "relevant": view.relevant,
        "top": [document_json(d) for d in view.top],
        "missed": [{"doc_id": doc, "judgment": grade} for doc, grade in view.missed],
        "values": dict(view.values),
    }


def ranking_diff_json(diff: RankingDiff, names: tuple[str, str]) -> dict[str, Any]:
    """``diff --query Q --format json``: both tops, and the documents that entered the top k (with
    their rank in A, null when A did not retrieve them) and left it (with their rank in B)."""
    return {
        "runs": list(names), "query": diff.query_id, "k": diff.k,
        "top_a": [document_json(d) for d in diff.top_a], "top_b": [document_json(d) for d in diff.top_b],
        "entered": [document_json(d) | {"rank_in_a": rank} for d, rank in diff.entered],
        "left": [document_json(d) | {"rank_in_b": rank} for d, rank in diff.left],
        "values": {label: {"a": a, "b": b} for label, a, b in diff.values},
    }


def run_diffs_json(diffs: Sequence[RunDiff], names: tuple[str, str]) -> dict[str, Any]:
    """``diff --format json``: per measure, the means, the counts and every query's change."""
    return {"runs": list(names), "measures": [{
        "measure": d.label, "mean": {names[0]: d.mean_a, names[1]: d.mean_b},
        "helped": d.helped, "hurt": d.hurt, "unchanged": d.unchanged,
        "per_query": [{"query": q.query_id, "a": q.a, "b": q.b, "delta": q.delta} for q in d.deltas],
    } for d in diffs]}
