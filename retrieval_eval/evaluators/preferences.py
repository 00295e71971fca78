"""Preference judgments in the API: a SetEvaluator built from them, and one query's preferences.

Files (text or Parquet) go through ``SetEvaluator.from_trec(..., rel_format="prefs")``;
:func:`preferences_evaluator` also takes them as dicts, with the run as a path or a dict. The values
come from the registered preference measures (:mod:`retrieval_eval.measures.prefs`), through the
same batch as every other measure. ``RetrievalEvaluator.preferences()`` lists one query's
preferences and how its ranking treats each of them.

Examples
--------
>>> prefs = {"q1": {"alice": {"s1": {"d1": 2, "d2": 1, "d3": 0}}}}
>>> ev = preferences_evaluator(prefs, {"q1": {"d2": 3.0, "d1": 2.0}})
>>> ev.per_query("PrefsSimp")
{'q1': 0.6666666666666666}
>>> [str(p) for p in ev["q1"].preferences()]
['alice: d1 > d2 failed', 'alice: d1 > d3 fulfilled (implied)', 'alice: d2 > d3 fulfilled (implied)']
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import frozen

from ..engine.build import RunHandoff
from ..engine.segments import segment_ids
from ..model import id_text

if TYPE_CHECKING:
    from .query import RetrievalEvaluator
    from .set import SetEvaluator


@frozen
class Preference:
    """One preference of a query's judgments: ``preferred`` over ``other`` in judgment group ``group``.

    ``retrieved`` is how many of the two documents the ranking holds (2, 1 or 0); ``fulfilled`` is
    whether it honours the preference: both retrieved with ``preferred`` ranked higher, or only
    ``preferred`` retrieved (an implied preference). Neither retrieved is never fulfilled.
    """

    group: str
    preferred: str
    other: str
    retrieved: int
    fulfilled: bool

    def __str__(self) -> str:
        outcome = "fulfilled" if self.fulfilled else "failed"
        kind = {2: "", 1: " (implied)", 0: " (neither retrieved)"}[self.retrieved]
        return f"{self.group}: {self.preferred} > {self.other} {outcome}{kind}"


def preference_list(evaluator: RetrievalEvaluator) -> list[Preference]:
    """The query's preferences (those of every group, transitive ones included), by group then by
    preferred and other document in byte order of their ids; empty without preference judgments."""
    b = evaluator._batch
    p = b.preferences
    if p is None:
        return []
    from ..engine.preferences import judged_ranks  # (loaded only with preference judgments)

    rank, njr = judged_ranks(p, b.n_queries, b.offsets, b.doc_ids, b.scores, b.labels)
    jq = segment_ids(p.judgment_offsets)
    doc_row = p.doc_offsets[jq] + p.judgment_doc
    pq = segment_ids(p.pair_offsets)
    better, worse = doc_row[p.judgment_offsets[pq] + p.pair_better], doc_row[p.judgment_offsets[pq] + p.pair_worse]
    group = p.group_offsets[pq] + p.judgment_group[p.judgment_offsets[pq] + p.pair_better]
    limit = njr[pq]
    a_ret, b_ret = rank[better] < limit, rank[worse] < limit
    fulfilled = a_ret & (~b_ret | (rank[better] < rank[worse]))
    order = np.lexsort((p.doc_ids[worse], p.doc_ids[better], group))
    return [Preference(id_text(p.group_ids[group[i]]), id_text(p.doc_ids[better[i]]), id_text(p.doc_ids[worse[i]]),
                       int(a_ret[i]) + int(b_ret[i]), bool(fulfilled[i])) for i in order.tolist()]


def preferences_evaluator(
    prefs: Mapping[str, Any] | str | os.PathLike[str] | Any, run: Mapping[str, Mapping[str, object]] | str | Any,
    *, rel_format: str = "prefs", complete: bool = True, order: str = "score", max_depth: int | None = None,
) -> SetEvaluator:
    """A :class:`SetEvaluator` of preference judgments, for the preference measures (``all_prefs``).

    ``prefs`` is a prefs file (``query_id group subgroup doc_id rel_level`` lines; with
    ``rel_format="qrels_prefs"`` a qrels file read as preferences), a Parquet file with those
    columns, an open file, or a dict ``{query_id: {group: {subgroup: {doc_id: rel_level}}}}``.
    ``run`` is a run file (any format ``from_trec`` reads) or a dict ``{query_id: {doc_id: score}}``.
    ``complete``, ``order`` and ``max_depth`` are ``from_trec``'s.
    """
    from ..io.dicts import columns_from_dicts
    from ..io.formats import read_qrels_columns, read_run_columns
    from ..io.prefs import prefs_as_qrels, prefs_columns_from_dict
    from .options import _read_options
    from .set import SetEvaluator

    options = _read_options(max_depth, "error", order)
    if isinstance(prefs, Mapping):
        judged = prefs_as_qrels(prefs_columns_from_dict(prefs))
    else:
        judged = read_qrels_columns(prefs, rel_format=rel_format)
    columns = columns_from_dicts({}, run)[1] if isinstance(run, Mapping) else \
        read_run_columns(run, with_ranks=order == "rank")
    return SetEvaluator._built(judged, RunHandoff(columns), rel=1, judged_only=False, complete=complete, **options)
