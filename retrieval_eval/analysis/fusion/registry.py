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
from ...model import FIELD_SEPARATORS, FloatArray, InputFormatError, RunColumns
from .candidates import Candidates, candidates_from_runs

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
    if bool(np.isnan(scores).any()):
        raise AssertionError("a fusion method gave a NaN score")
    query = candidates.row_query()
    order = canonical_order(query, scores, candidates.doc_ids)
    rows = np.arange(candidates.n_rows, dtype=np.int64) if order is None else order.permutation()
    if depth is not None:
        starts = _offsets_of(np.diff(candidates.offsets))[:-1]
        rank = np.arange(len(rows), dtype=np.int64) - starts[query.take(rows)]
        rows = rows[rank < depth]
    return RunColumns(candidates.query_ids[query.take(rows)], candidates.doc_ids.take(rows), scores.take(rows),
                      np.arange(1, len(rows) + 1, dtype=np.int64), origin=f"<fused {run_id}>", run_id=run_id,
                      unit="row")


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
