"""Fusion methods by name, and :func:`fuse`: several runs in, one fused run out.

A method is a function ``(candidates, **params) -> scores``: one fused score per row of
:class:`~.candidates.Candidates`, higher is better, computed for every query at once. It is
registered once, with its parameters and their defaults, by :func:`fusion_method`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from attrs import frozen

from ...engine.order import canonical_order
from ...engine.segments import _offsets_of
from ...model import FIELD_SEPARATORS, FloatArray, InputFormatError, IntArray, RunColumns
from .candidates import Candidates, argsort_rows, candidates_from_runs

#: ``method(candidates, **params)``: float64 fused scores, one per candidate row.
MethodFunction = Callable[..., FloatArray]


class FusionError(InputFormatError):
    """An unknown fusion method or parameter, or a parameter value the method cannot use."""


@frozen(eq=False)
class FusionMethod:
    """A registered fusion method: its function, parameters (with defaults) and documentation."""

    name: str
    function: MethodFunction
    params: Mapping[str, Any]  #: each parameter's default
    family: str  #: "score", "rank", "trained" (needs qrels), "flagr", ...
    summary: str  #: the docstring's first line

    def __call__(self, candidates: Candidates, **params: Any) -> FloatArray:
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            known = ", ".join(sorted(self.params)) or "none"
            raise FusionError(f"fusion method {self.name!r} takes no parameter {unknown[0]!r}; its parameters: {known}")
        scores = np.asarray(self.function(candidates, **{**self.params, **params}), dtype=np.float64)
        if scores.shape != (candidates.n_rows,):
            raise AssertionError(f"{self.name} returned shape {scores.shape}, expected ({candidates.n_rows},)")
        return scores


METHODS: dict[str, FusionMethod] = {}


def fusion_method(name: str, *, params: Mapping[str, Any] | None = None, family: str = "score",
                  aliases: tuple[str, ...] = ()) -> Callable[[MethodFunction], MethodFunction]:
    """Register ``function`` as the fusion method ``name`` (lower case), with ``params``' defaults;
    ``aliases`` are other names for it (ranx's short names, ``sum`` for ``combsum``)."""

    def register(function: MethodFunction) -> MethodFunction:
        key = name.lower()
        summary = (function.__doc__ or "").strip().split("\n", 1)[0]
        method = FusionMethod(key, function, dict(params or {}), family, summary)
        for spelling in (key, *aliases):
            if spelling in METHODS:
                raise ValueError(f"fusion method {spelling!r} is registered twice")
            METHODS[spelling] = method
        return function

    return register


def get_method(name: str) -> FusionMethod:
    """The method registered as ``name`` (any case); FusionError listing the methods if none is."""
    from . import methods  # noqa: F401  # registers the built-in methods

    method = METHODS.get(name.lower())
    if method is None:
        raise FusionError(f"unknown fusion method {name!r}; expected one of: {', '.join(method_names())}")
    return method


def method_names() -> list[str]:
    """The registered methods' names (not their aliases), sorted."""
    from . import methods  # noqa: F401  # registers the built-in methods

    return sorted({method.name for method in METHODS.values()})


def run_tag(method: str, names: Sequence[str]) -> str:
    """The fused run's tag: the method, then the inputs' names (``rrf:bm25+dense``); whitespace,
    which cannot stand in a TREC field, becomes ``_``."""
    tag = f"{method}:{'+'.join(names)}"
    return "".join("_" if ch in FIELD_SEPARATORS else ch for ch in tag)


def ranked_run(candidates: Candidates, scores: FloatArray, run_id: str, depth: int | None = None) -> RunColumns:
    """The candidates as a run scored by ``scores``, in trec_eval's order (score descending, ties by
    doc_id descending), each query cut at its ``depth`` best documents (None: all)."""
    if not bool(np.isfinite(scores).all()):
        raise AssertionError("a fusion method gave a score that is not finite")
    query = candidates.row_query()
    rows = _by_score(candidates.offsets, query, scores)
    if depth is not None:  # cut before the ties are put in order: most rows are past the depth
        rows, query = _to_depth(rows, query, scores, candidates.offsets, depth)
    # Each query's rows by score now: the engine's order only sorts the tie groups by doc_id.
    order = canonical_order(query, scores.take(rows), candidates.doc_ids.take(rows))
    if order is not None:
        rows = rows.take(order.permutation())
    if depth is not None:
        sizes = np.bincount(query, minlength=candidates.n_queries)
        rank = np.arange(len(rows), dtype=np.int64) - _offsets_of(sizes)[:-1].take(query)
        keep = rank < depth
        rows, query = rows[keep], query[keep]
    return RunColumns(candidates.query_ids.take(query), candidates.doc_ids.take(rows), scores.take(rows),
                      np.arange(1, len(rows) + 1, dtype=np.int64), origin=f"<fused {run_id}>", run_id=run_id,
                      unit="row")


def _to_depth(rows: IntArray, query: IntArray, scores: FloatArray, offsets: IntArray,
              depth: int) -> tuple[IntArray, IntArray]:
    """Of ``rows`` (each query's by score descending, queries in place: ``query`` is each one's
    query), those of each query's ``depth`` best scores and those tied with its ``depth``-th, and
    their queries: whichever of the tied rows their ids put first, the cut keeps."""
    ordered = scores.take(rows)
    starts = offsets[:-1]
    keep = np.arange(len(rows), dtype=np.int64) < starts.take(query) + depth
    deep = np.flatnonzero(np.diff(offsets) > depth)
    edge = np.full(len(starts), np.nan)  # each query's depth-th score (NaN, equal to none, if it has fewer rows)
    edge[deep] = ordered.take(starts[deep] + depth - 1)
    keep |= ordered == edge.take(query)
    return rows[keep], query[keep]


#: True only in tests: every fused run takes the one sort of all rows.
_FORCE_ONE_SORT = False


def _by_score(offsets: IntArray, query: IntArray, scores: FloatArray) -> IntArray:
    """The rows with each query's by score descending (ties in any order), queries in place: each
    query's scores a row of one matrix padded to the longest query, sorted row by row (far cheaper
    than one sort of every row), when the padding costs at most as many cells again as there are rows."""
    sizes = np.diff(offsets)
    n, longest = len(scores), int(sizes.max(initial=0))
    if len(sizes) * longest > 2 * n + 1024 or _FORCE_ONE_SORT:
        return np.lexsort((-scores, query))
    # Each query's rows fill the start of its row of the matrix: the cells a mask picks, in order.
    keep = np.arange(longest) < sizes[:, None]
    matrix = np.full((len(sizes), longest), np.inf)
    matrix[keep] = -scores
    order = argsort_rows(matrix)  # padding (+inf, scores being finite) sorts last
    order += offsets[:-1, None]
    rows: IntArray = order[keep]
    return rows


def fuse(runs: Sequence[RunColumns], method: str = "rrf", *, depth: int | None = None,
         names: Sequence[str] | None = None, **params: Any) -> RunColumns:
    """Fuse ``runs`` (their columns, as the readers give them) with ``method`` into one run.

    ``params`` are the method's (``k=60`` for RRF, ``weights=(0.7, 0.3)``, ``norm="min-max"``...).
    The fused run is in trec_eval's order, cut at ``depth`` documents per query (None: every
    document some run retrieved), and tagged with the method and the runs' names.

    >>> from retrieval_eval.io.dicts import columns_from_dicts
    >>> a = columns_from_dicts({}, {"q1": {"d1": 2.0, "d2": 1.0}})[1]
    >>> b = columns_from_dicts({}, {"q1": {"d2": 5.0, "d3": 4.0}})[1]
    >>> fused = fuse([a, b], "rrf", k=60, names=("a", "b"))
    >>> fused.run_id, fused.doc_ids.tolist()
    ('rrf:a+b', [b'd2', b'd1', b'd3'])
    """
    chosen = get_method(method)
    candidates = candidates_from_runs(runs, names)
    scores = chosen(candidates, **params)
    return ranked_run(candidates, scores, run_tag(chosen.name, candidates.run_names), depth)
