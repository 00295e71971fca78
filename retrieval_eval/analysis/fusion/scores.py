"""Score combinations (Fox and Shaw, 1993, and their weighted variants as ranx defines them): each
row's normalised scores, summed, counted, or their extreme or middle value, over the runs that
retrieved it. A run that did not retrieve a document adds nothing to its sum.

Sums run over the runs in the order given, as ranx's do, so that equal inputs give equal floats.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model import FloatArray, IntArray
from .candidates import Candidates
from .normalise import MIN_MAX, min_max_rows, normalised_scores
from .registry import FusionError, fusion_method

_NORM = {"norm": "min-max"}
_WEIGHTED = {"norm": "min-max", "weights": None}


def run_weights(weights: Any, c: Candidates) -> FloatArray:
    """One finite weight per run (None: all 1)."""
    if weights is None:
        return np.ones(c.n_runs)
    values = np.asarray(weights, dtype=np.float64).ravel()
    if len(values) != c.n_runs or not bool(np.isfinite(values).all()):
        raise FusionError(f"expected {c.n_runs} finite weights, one per run; got {list(np.ravel(weights))}")
    return values


def _filled(c: Candidates, norm: str) -> tuple[FloatArray, np.ndarray]:
    """The normalised scores with 0 where a run lacks the row, and where runs have rows."""
    scores = normalised_scores(c, norm)
    if scores is c.scores:  # the candidates' own: not to be changed
        present = ~np.isnan(scores)
        return np.where(present, scores, 0.0), present
    # A fresh array: filled in place, a run at a time (no temporaries of all the runs' rows).
    present = np.empty(scores.shape, dtype=bool)
    for r in range(c.n_runs):  # a loop over runs
        missing = np.isnan(scores[r], out=present[r])
        np.copyto(scores[r], 0.0, where=missing)
        np.logical_not(missing, out=missing)
    return scores, present


def _sum_and_count(c: Candidates, norm: str) -> tuple[FloatArray, IntArray]:
    """CombSUM's sum of the normalised scores, and how many runs retrieved each row. Under min-max,
    a run at a time, adding up as :func:`_sum` does: no matrix of all the runs' rows."""
    if norm not in MIN_MAX:
        filled, present = _filled(c, norm)
        return _sum(filled), present.sum(axis=0)
    count = np.zeros(c.n_rows, dtype=np.int64)
    total = np.zeros(0)
    for r, row in enumerate(min_max_rows(c, norm)):  # a loop over runs
        missing = np.isnan(row)
        np.copyto(row, 0.0, where=missing)
        count += ~missing
        if r == 0:
            total = row  # (not 0.0 + row, which would turn a -0.0 into 0.0)
        else:
            total += row
    return total, count


def _sum(values: FloatArray) -> FloatArray:
    """The sum over runs (axis 0), added run after run."""
    total: FloatArray = values.sum(axis=0)
    return total


@fusion_method("combsum", params=_NORM, aliases=("sum",))
def comb_sum(c: Candidates, *, norm: str) -> FloatArray:
    """CombSUM: the sum of the runs' normalised scores."""
    return _sum_and_count(c, norm)[0]


@fusion_method("combmnz", params=_NORM, aliases=("mnz",))
def comb_mnz(c: Candidates, *, norm: str) -> FloatArray:
    """CombMNZ: CombSUM times the number of runs that retrieved the document."""
    total, count = _sum_and_count(c, norm)
    return np.asarray(total * count, dtype=np.float64)


@fusion_method("combgmnz", params={"norm": "min-max", "gamma": 1.0}, aliases=("gmnz",))
def comb_gmnz(c: Candidates, *, norm: str, gamma: float) -> FloatArray:
    """CombGMNZ: CombSUM times the number of runs that retrieved the document to the power gamma."""
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not np.isfinite(gamma):
        raise FusionError(f"CombGMNZ's gamma must be a finite number; got {gamma!r}")
    filled, present = _filled(c, norm)
    return np.asarray(_sum(filled) * present.sum(axis=0).astype(np.float64) ** float(gamma), dtype=np.float64)


@fusion_method("combanz", params=_NORM, aliases=("anz",))
def comb_anz(c: Candidates, *, norm: str) -> FloatArray:
    """CombANZ: CombSUM divided by the number of runs that retrieved the document (their mean)."""
    total, count = _sum_and_count(c, norm)
    return np.asarray(total / count, dtype=np.float64)


def _missing_as(c: Candidates, norm: str, missing: float | None) -> FloatArray:
    """The normalised scores, ``missing`` where a run lacks the row (None: left NaN, so skipped)."""
    scores = normalised_scores(c, norm)
    if missing is not None and (isinstance(missing, bool) or not isinstance(missing, (int, float))):
        raise FusionError(f"'missing' must be a number or None; got {missing!r}")
    return scores if missing is None else np.where(np.isnan(scores), float(missing), scores)


@fusion_method("combmax", params={"norm": "min-max", "missing": None}, aliases=("max",))
def comb_max(c: Candidates, *, norm: str, missing: float | None) -> FloatArray:
    """CombMAX: the highest normalised score any run gave the document.

    ``missing``: a score for the runs that lack the document; ranx uses -1e9, which wins over
    scores below it (an unnormalised or ``max``-normalised negative score): ``missing=-1e9`` matches it.
    """
    best: FloatArray = np.fmax.reduce(_missing_as(c, norm, missing), axis=0)
    return best


@fusion_method("combmin", params={"norm": "min-max", "missing": None}, aliases=("min",))
def comb_min(c: Candidates, *, norm: str, missing: float | None) -> FloatArray:
    """CombMIN: the lowest normalised score of the runs that retrieved the document.

    ``missing``: a score for the runs that lack the document; ranx uses 1e9 (``missing=1e9`` matches it).
    """
    worst: FloatArray = np.fmin.reduce(_missing_as(c, norm, missing), axis=0)
    return worst


@fusion_method("combmed", params=_NORM, aliases=("med",))
def comb_med(c: Candidates, *, norm: str) -> FloatArray:
    """CombMED: the median normalised score of the runs that retrieved the document."""
    scores = normalised_scores(c, norm)
    if c.n_runs == 1:
        return np.asarray(scores[0], dtype=np.float64)
    middle: FloatArray = np.nanmedian(scores, axis=0)
    return middle


@fusion_method("wsum", params=_WEIGHTED)
def weighted_sum(c: Candidates, *, norm: str, weights: Any) -> FloatArray:
    """Weighted sum: the sum of each run's weight times its normalised score."""
    return _sum(run_weights(weights, c)[:, None] * _filled(c, norm)[0])


@fusion_method("wmnz", params=_WEIGHTED)
def weighted_mnz(c: Candidates, *, norm: str, weights: Any) -> FloatArray:
    """WMNZ: CombSUM times the sum of the weights of the runs that retrieved the document."""
    filled, present = _filled(c, norm)
    return _sum(filled) * _sum(np.where(present, run_weights(weights, c)[:, None], 0.0))


@fusion_method("mixed", params=_WEIGHTED)
def mixed(c: Candidates, *, norm: str, weights: Any) -> FloatArray:
    """Mixed: the weighted sum times the square root of the number of runs that retrieved the document."""
    filled, present = _filled(c, norm)
    return np.asarray(_sum(run_weights(weights, c)[:, None] * filled) * np.sqrt(present.sum(axis=0)), dtype=np.float64)
