"""Choosing a fusion's weights (and RRF's k) for a measure, and reporting it honestly.

:func:`tune` tries configurations (a grid, or a seeded random sample) on training queries and keeps
the best. :func:`cross_validate` does that K times: the queries are dealt into K folds (seeded), and
each fold is fused with the configuration tuned on the other folds, so that every query's fused
ranking comes from weights that never saw its judgments.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import frozen

from ...model import BoolArray, FloatArray, IntArray, QrelsColumns
from .candidates import Candidates
from .registry import FusionError, FusionMethod, ranked_run

#: RRF's k tried by the grid search (60 is the paper's choice).
K_GRID = (1, 5, 10, 20, 40, 60, 80, 100)


@frozen
class Tuned:
    """The best configuration found, its mean on the training queries, and every trial's."""

    params: dict[str, Any]
    value: float
    trials: list[tuple[dict[str, Any], float]]


def _simplex(n_runs: int, step: float) -> list[tuple[float, ...]]:
    """Every weight vector on a grid of ``step`` whose weights sum to 1."""
    units = round(1 / step)
    if units < 1 or abs(units * step - 1) > 1e-9:
        raise FusionError(f"the grid step must divide 1 (0.1, 0.25, 0.5...); got {step}")
    grid = [tuple(u / units for u in combo) for combo in itertools.product(range(units + 1), repeat=n_runs)
            if sum(combo) == units]
    if len(grid) > 100_000:
        raise FusionError(f"a grid of step {step} over {n_runs} runs has {len(grid)} points; "
                          "use a coarser step or --search random")
    return grid


def configurations(method: FusionMethod, n_runs: int, *, search: str = "grid", step: float = 0.1,
                   trials: int = 100, seed: int = 0) -> list[dict[str, Any]]:
    """The configurations to try: weights (methods with ``weights``) and k (RRF), on a grid or drawn
    at random (weights uniform on the simplex, k uniform in 1..100) from ``seed``.

    >>> from retrieval_eval.analysis.fusion import get_method
    >>> configurations(get_method("wsum"), 2, step=0.5)
    [{'weights': (0.0, 1.0)}, {'weights': (0.5, 0.5)}, {'weights': (1.0, 0.0)}]
    """
    tuned = [name for name in ("weights", "k") if name in method.params]
    if not tuned:
        raise FusionError(f"fusion method {method.name!r} has no weights or k to tune")
    if search == "grid":
        weights: list[Any] = _simplex(n_runs, step) if "weights" in tuned else [None]
        ks: list[Any] = list(K_GRID) if "k" in tuned else [None]
        found = [{"weights": w, "k": k} for w in weights for k in ks]
    elif search == "random":
        rng = np.random.default_rng(seed)
        found = [{"weights": tuple(rng.dirichlet(np.ones(n_runs)).round(6).tolist()) if "weights" in tuned else None,
                  "k": int(rng.integers(1, 101)) if "k" in tuned else None} for _ in range(trials)]
    else:
        raise FusionError(f"search must be 'grid' or 'random'; got {search!r}")
    return [{name: value for name, value in config.items() if value is not None} for config in found]


def _judged(qrels: QrelsColumns, query_ids: np.ndarray) -> QrelsColumns:
    """The judgments of ``query_ids`` only."""
    keep = np.isin(np.asarray(qrels.query_ids), query_ids)
    return QrelsColumns(np.asarray(qrels.query_ids)[keep], np.asarray(qrels.doc_ids)[keep],
                        np.asarray(qrels.relevance)[keep], np.asarray(qrels.lines)[keep], qrels.origin, qrels.unit)


def mean_on(c: Candidates, scores: FloatArray, qrels: QrelsColumns, measure: str, queries: BoolArray,
            depth: int | None = None) -> float:
    """The mean of ``measure`` over the ``queries`` (a mask of ``c``'s) of the run ``scores`` make."""
    from ...engine.build import RunHandoff
    from ...evaluators.set import SetEvaluator

    rows = c.rows_of(queries)
    run = ranked_run(c.subset(queries), scores[rows], "tuning", depth)
    evaluator = SetEvaluator.from_columns(_judged(qrels, c.query_ids[queries]), RunHandoff(run))
    return float(np.mean(evaluator.array(measure))) if len(evaluator.query_ids) else 0.0


def tune(c: Candidates, method: FusionMethod, qrels: QrelsColumns, measure: str, queries: BoolArray,
         configs: Sequence[dict[str, Any]], fixed: dict[str, Any] | None = None,
         depth: int | None = None) -> Tuned:
    """The configuration of ``configs`` with the best mean ``measure`` on ``queries`` (the first of
    equal ones); ``fixed`` are the method's other parameters."""
    fixed = dict(fixed or {})
    trials = []
    for config in configs:  # a loop over configurations: each fuses every query at once
        value = mean_on(c, method(c, **{**fixed, **config}), qrels, measure, queries, depth)
        trials.append((dict(config), value))
    best = max(range(len(trials)), key=lambda i: (trials[i][1], -i))
    return Tuned(trials[best][0], trials[best][1], trials)


def fold_assignment(c: Candidates, qrels: QrelsColumns, folds: int, seed: int) -> IntArray:
    """Each query's fold, 0..folds-1, dealt at random (``seed``) among the judged queries; -1 for a
    query without judgments, which no fold holds."""
    judged = np.isin(c.query_ids, np.asarray(qrels.query_ids))
    n_judged = int(judged.sum())
    if folds < 2 or folds > n_judged:
        raise FusionError(f"--folds must be between 2 and the {n_judged} judged queries; got {folds}")
    fold = np.full(c.n_queries, -1, dtype=np.int64)
    order = np.random.default_rng(seed).permutation(n_judged)
    fold[np.flatnonzero(judged)[order]] = np.arange(n_judged) % folds
    return fold


@frozen
class CrossValidated:
    """Fused scores where each fold's queries got the configuration tuned on the other folds."""

    scores: FloatArray  #: (n,) fused scores of every row (judged queries only are fused by fold)
    fold: IntArray  #: (q,) each query's fold (-1: not judged, fused with the configuration tuned on all)
    tuned: list[Tuned]  #: each fold's tuning (on the other folds)
    held_out: list[float]  #: each fold's mean of the measure on its own queries


def cross_validate(c: Candidates, method: FusionMethod, qrels: QrelsColumns, measure: str, folds: int, seed: int,
                   configs: Sequence[dict[str, Any]], fixed: dict[str, Any] | None = None,
                   depth: int | None = None, trained: bool = False) -> CrossValidated:
    """K-fold cross-validation of tuning (``configs``) and, for methods that learn from judgments
    (``trained``), of their training: fold ``i`` is fused with what the other folds taught."""
    fixed = dict(fixed or {})
    fold = fold_assignment(c, qrels, folds, seed)
    scores = np.zeros(c.n_rows)
    tuned, held_out = [], []
    for i in range(folds):  # a loop over folds
        train, test = (fold >= 0) & (fold != i), fold == i
        params = dict(fixed)
        if trained:
            params.update(qrels=qrels, train_queries=c.query_ids[train].tolist())
        if configs:
            best = tune(c, method, qrels, measure, train, configs, params, depth)
        else:
            best = Tuned({}, mean_on(c, method(c, **params), qrels, measure, train, depth), [])
        tuned.append(best)
        fused = method(c, **{**params, **best.params})
        rows = c.rows_of(test)
        scores[rows] = fused[rows]
        held_out.append(mean_on(c, fused, qrels, measure, test, depth))
    unjudged = fold < 0
    if bool(unjudged.any()):  # queries no fold can report on: fused as tuned on every judged query
        params = dict(fixed)
        if trained:
            params.update(qrels=qrels, train_queries=c.query_ids[fold >= 0].tolist())
        best = tune(c, method, qrels, measure, fold >= 0, configs, params, depth) if configs else Tuned({}, 0.0, [])
        rows = c.rows_of(unjudged)
        scores[rows] = method(c, **{**params, **best.params})[rows]
    return CrossValidated(scores, fold, tuned, held_out)
