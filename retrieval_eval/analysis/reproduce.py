"""Reproducibility: how close a reproduced run comes to the original, with repro_eval's measures.

Breuer et al. (SIGIR 2020) measure a reproduction at three levels; :func:`reproduce` gives each one,
with the definitions of the ``repro_eval`` package (0.5), which the tests use as the oracle:

- **document order** (no qrels needed), per query and on average over the queries both runs have:
  ``KTU``, Kendall's tau-b between the two runs' documents rank by rank, each document replaced by
  its place in the sorted union of the two lists' ids (both lists cut to ``depth``, and to the
  shorter of the two: repro_eval needs lists of one length and fails otherwise); and ``RBO``, the
  rank-biased overlap truncated at ``depth`` and normalised by the weight up to it,
  ``sum_{d<=depth} p^(d-1) |O:d ∩ R:d| / d / sum_{d<=depth} p^(d-1)`` (repro_eval's, after Clarke
  et al.; not the extrapolated RBO of ``similarity``, which assumes nothing about depth);
- **effectiveness** (with qrels), per measure over the original run's queries: ``RMSE`` of the
  per-query values, and ``nRMSE``, RMSE divided by its largest possible value for these original
  values (``sqrt(mean(max(x, 1 - x)^2))``, for measures in [0, 1]);
- **overall effect** (with qrels and a baseline): the effect ratio ``ER``, the mean per-query
  improvement over the baseline in the reproduction divided by that in the original, and
  ``DeltaRI``, the original's relative improvement of the means minus the reproduction's.

Documents are in trec_eval's order (repro_eval keeps a file's order and breaks ties of adjacent
equal scores by doc_id descending: the same for a file sorted by score). Effect numbers are over the
original run's judged queries, where a query the reproduction (or baseline) lacks counts as 0;
repro_eval fails on a reproduction without one of the original's queries.

>>> report = reproduce({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}, {"q1": {"b": 3.0, "a": 2.0, "c": 1.0}}, depth=3)
>>> round(report.ktu[0], 4), round(report.rbo[0], 4)
(0.3333, 0.6494)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import frozen

from ..model import FloatArray, IntArray, RetrievalEvalError
from .agreement import qrels_columns, tau_b
from .rankings import RankedLists, joint_codes, ranked_lists, run_columns

if TYPE_CHECKING:
    from ..evaluators.query import MeasureLike

__all__ = ["Effect", "ReproReport", "ktu", "reproduce", "truncated_rbo"]


def ktu(original: Sequence[str], reproduced: Sequence[str], depth: int = 1000) -> float:
    """repro_eval's Kendall's tau Union of two lists of ids; NaN for lists of fewer than two.

    >>> ktu(["a", "b", "c"], ["c", "b", "a"])
    -1.0
    """
    place = {doc: i for i, doc in enumerate(sorted(set(original) | set(reproduced)))}
    return _ktu(np.array([place[d] for d in original], dtype=np.int64),
                np.array([place[d] for d in reproduced], dtype=np.int64), depth)


def _ktu(original: IntArray, reproduced: IntArray, depth: int) -> float:
    """:func:`ktu` of two lists of codes in the ids' sorted order."""
    n = min(len(original), len(reproduced), depth)
    return tau_b(original[:n], reproduced[:n])  # the codes' order is the order of the union's ids


def truncated_rbo(original: Sequence[str], reproduced: Sequence[str], p: float = 0.95, depth: int = 1000) -> float:
    """repro_eval's RBO: the top-d overlaps weighted by p^(d-1) up to ``depth``, over the weights' sum.

    >>> round(truncated_rbo(["a", "b"], ["b", "a"], p=0.5, depth=2), 4)  # (0 + 1 * 1/2) / (1 + 1/2)
    0.3333
    """
    code = {doc: i for i, doc in enumerate(dict.fromkeys([*original, *reproduced]))}
    return _truncated_rbo(np.array([code[d] for d in original], dtype=np.int64),
                          np.array([code[d] for d in reproduced], dtype=np.int64), p, depth)


def _truncated_rbo(original: IntArray, reproduced: IntArray, p: float, depth: int) -> float:
    """:func:`truncated_rbo` of two lists of distinct codes."""
    in_o, in_r = np.intersect1d(original[:depth], reproduced[:depth], assume_unique=True, return_indices=True)[1:]
    overlap = np.cumsum(np.bincount(np.maximum(in_o, in_r), minlength=depth)[:depth])
    d = np.arange(1, depth + 1)
    weights = p ** (d - 1.0)
    return float(np.sum(weights * overlap / d) / np.sum(weights))


@frozen
class Effect:
    """One measure: the effectiveness and overall-effect numbers (NaN where not asked for)."""

    measure: str
    rmse: float
    nrmse: float
    er: float = math.nan
    delta_ri: float = math.nan


@frozen
class ReproReport:
    """What :func:`reproduce` found: the document order per query (``query_ids``), and per measure."""

    query_ids: tuple[str, ...]
    ktu: tuple[float, ...]
    rbo: tuple[float, ...]
    effects: tuple[Effect, ...]
    p: float
    depth: int

    def mean_ktu(self) -> float:
        found = [x for x in self.ktu if not math.isnan(x)]
        return math.fsum(found) / len(found) if found else math.nan

    def mean_rbo(self) -> float:
        return math.fsum(self.rbo) / len(self.rbo)

    def to_dict(self) -> dict[str, Any]:
        def number(x: float) -> float | None:
            return None if math.isnan(x) else x
        return {"p": self.p, "depth": self.depth, "ktu": number(self.mean_ktu()), "rbo": number(self.mean_rbo()),
                "queries": [{"query": q, "ktu": number(k), "rbo": r}
                            for q, k, r in zip(self.query_ids, self.ktu, self.rbo)],
                "measures": [{"measure": e.measure, "rmse": number(e.rmse), "nrmse": number(e.nrmse),
                              "er": number(e.er), "delta_ri": number(e.delta_ri)} for e in self.effects]}


def _lists(run: Any) -> RankedLists:
    return run if isinstance(run, RankedLists) else ranked_lists(run)


def reproduce(original: Any, reproduced: Any, *, qrels: Any = None, baseline: Sequence[Any] | None = None,
              measures: Sequence[MeasureLike] = ("AP", "nDCG@10", "P@10"), p: float = 0.95,
              depth: int = 1000) -> ReproReport:
    """Compare a reproduced run with the original (paths, dicts or :class:`RunColumns`); see the module notes.

    ``qrels`` adds RMSE and nRMSE per measure. ``baseline`` adds ER and DeltaRI: one run (the same
    baseline for both) or two (the original's baseline, then the reproduction's).
    """
    from ..evaluators.set import SetEvaluator
    from ..measures import parse

    if not (isinstance(p, (int, float)) and 0.0 < p < 1.0):
        raise RetrievalEvalError(f"'p' must lie strictly between 0 and 1; got {p!r}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise RetrievalEvalError(f"'depth' must be an integer >= 1; got {depth!r}")
    baselines = list(baseline or [])
    if len(baselines) > 2:
        raise RetrievalEvalError(f"'baseline' is one run or two (original's, reproduction's); got {len(baselines)}")
    if baselines and qrels is None:
        raise RetrievalEvalError("ER and DeltaRI need qrels as well as the baseline")
    first_cols, second_cols = run_columns(original), run_columns(reproduced)
    first, second = _lists(first_cols), _lists(second_cols)
    in_first = set(first.query_ids)
    shared = [q for q in second.query_ids if q in in_first]
    if not shared:
        raise RetrievalEvalError("the original and the reproduction share no query")
    codes_first, codes_second = joint_codes(first, second)  # in byte order: as repro_eval sorts the union
    ktus, rbos = [], []
    for query in shared:
        a, b = codes_first[first.rows(query)], codes_second[second.rows(query)]
        ktus.append(_ktu(a, b, depth))
        rbos.append(_truncated_rbo(a, b, p, depth))
    effects: list[Effect] = []
    if qrels is not None:
        judged = qrels_columns(qrels)
        parsed = list(dict.fromkeys(parse(m) for m in measures))
        orig = SetEvaluator.from_columns(judged, first_cols, complete=False)
        queries = orig.query_ids
        if not queries:
            raise RetrievalEvalError("the qrels judge none of the original run's queries; expected the qrels of its topics")

        def values(run: Any) -> dict[str, FloatArray]:
            evaluated = SetEvaluator.from_columns(judged, run_columns(run), complete=True).subset(queries)
            return {str(m): evaluated.array(m) for m in parsed}
        o = {str(m): orig.array(m) for m in parsed}
        r = values(second_cols)
        ob, rb = ((values(baselines[0]), values(baselines[-1])) if baselines else (None, None))
        for m in parsed:
            name = str(m)
            rmse = math.sqrt(float(np.mean((o[name] - r[name]) ** 2)))
            worst = math.sqrt(float(np.mean(np.maximum(o[name], 1 - o[name]) ** 2)))
            er = dri = math.nan
            if ob is not None and rb is not None:
                gain_o, gain_r = float(np.mean(o[name] - ob[name])), float(np.mean(r[name] - rb[name]))
                er = gain_r / gain_o if gain_o != 0 else math.nan
                base_o, base_r = float(np.mean(ob[name])), float(np.mean(rb[name]))
                ri_o = (float(np.mean(o[name])) - base_o) / base_o if base_o != 0 else math.nan
                ri_r = (float(np.mean(r[name])) - base_r) / base_r if base_r != 0 else math.nan
                dri = ri_o - ri_r
            effects.append(Effect(name, rmse, rmse / worst if worst else math.nan, er, dri))
    return ReproReport(tuple(shared), tuple(ktus), tuple(rbos), tuple(effects), float(p), depth)
