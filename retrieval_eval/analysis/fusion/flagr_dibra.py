"""FLAGR's DIBRA (Akritidis et al., 2022): a base method run again and again with voter weights that
grow for the runs closest to the last fused list, until the weights settle.

Each query has its own weights and its own iterations, so DIBRA loops over queries; within a query
each iteration is the base method's matrix work plus one distance per run. The distances read
positions in the fused list, so ties in it are broken in FLAGR's own order
(:mod:`.flagr_order`).

pyflagr's list pruning (``prune``) is not offered, nor its ``tau`` distance, which never changes a
weight in pyflagr 1.0.21 (it compares ranks the fused list never sets).
"""

from __future__ import annotations

import math

import numpy as np

from ...model import FloatArray
from .candidates import Candidates
from .flagr_common import NOT_RANKED, flagr_ranks
from .flagr_linear import FLAGR_NORMS, normalised
from .flagr_order import flagr_positions, hash_order
from .flagr_pairwise import majority_query, outranking_query, outranking_thresholds
from .registry import FusionError, fusion_method

AGGREGATORS = tuple(f"{comb}:{norm}" for comb in ("combsum", "combmnz") for norm in FLAGR_NORMS) + (
    "condorcet", "copeland", "outrank")
DISTANCES = ("cosine", "rho", "footrule")
WEIGHT_NORMS = ("none", "minmax", "z")


def _normalised_weights(w: FloatArray, stats: tuple[float, float, float, float], how: str) -> FloatArray:
    """The voters' weights as the base method sees them; ``stats`` is (min, max, mean, sd) of ``w``."""
    low, high, _, sd = stats
    if how == "minmax":
        # equal weights have no min-max scaling (FLAGR divides 0 by 0): they stay equal, at 1
        out: FloatArray = (w - low) / (high - low) if high > low else np.ones_like(w)
        return out
    if how == "z":  # FLAGR's "z" normalisation: w * sd^2 / max
        out = w * sd * sd / high
        return out
    return w


def _in_order(values: np.ndarray, position: np.ndarray) -> float:
    """The sum of ``values`` taken one by one in order of ``position`` (FLAGR walks its fused list in
    order, and a distance that is 0 in exact arithmetic must come out as FLAGR's, 0 or not)."""
    ordered = values[np.argsort(position)]
    return float(np.cumsum(ordered)[-1]) if len(ordered) else 0.0


def _distance(how: str, position: np.ndarray, rank: np.ndarray, length: int) -> float:
    """The distance of one run's list (1-based ``rank``, NOT_RANKED where absent; ``length`` documents)
    from the fused list (0-based ``position`` of each document), as FLAGR computes it."""
    m = len(position)
    if how == "rho":  # Spearman's rho (a correlation, used as a distance, as in FLAGR)
        if m < 2:
            return math.nan  # one document: FLAGR's 0 / 0, which leaves the weight as it is
        ranked = rank < NOT_RANKED
        squares = np.where(ranked, (rank - (position + 1.0)) ** 2, 0.0)
        return 1.0 - 6.0 * _in_order(squares, position) / (m**3 - m)
    counted = rank < length  # FLAGR's test (rank < list length) leaves out the list's last document
    if not length:
        return math.nan  # an empty list: FLAGR's 0 / 0
    if how == "cosine":
        list_norm = float(((length - np.arange(length) + 1.0) ** 2).sum())
        fused_norm = float(((np.arange(m) + 1.0) ** 2).sum())
        dot = _in_order(np.where(counted, (length - rank + 1.0) * (position + 1.0), 0.0), position)
        return 1.0 - dot / (math.sqrt(list_norm) * math.sqrt(fused_norm))
    # footrule: FLAGR's "local scaled footrule"
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = np.where(counted, length / (rank + 1.0) * (rank / length - position / m), 0.0)
    return 2.0 * abs(_in_order(terms, position)) / length


def dibra(c: Candidates, *, aggregator: str, w_norm: str, dist: str, gamma: float, tol: float, max_iter: int,
          pref: float, veto: float, conc: float, disc: float, as_pyflagr: bool = False) -> FloatArray:
    """DIBRA's fused scores: the base method's scores under the weights of the last iteration but one
    (FLAGR updates the weights after scoring, then stops). ``as_pyflagr`` gives the ``score``
    normalisation pyflagr's upside-down form (see :mod:`.flagr_linear`)."""
    if aggregator not in AGGREGATORS:
        raise FusionError(f"unknown DIBRA aggregator {aggregator!r}; expected one of: {', '.join(AGGREGATORS)}")
    if dist not in DISTANCES:
        raise FusionError(f"unknown DIBRA distance {dist!r}; expected one of: {', '.join(DISTANCES)}")
    if w_norm not in WEIGHT_NORMS:
        raise FusionError(f"unknown DIBRA weight normalisation {w_norm!r}; expected one of: {', '.join(WEIGHT_NORMS)}")
    if int(max_iter) != max_iter or max_iter < 0 or not (math.isfinite(gamma) and math.isfinite(tol)):
        raise FusionError(f"DIBRA needs a finite gamma and tol and a whole max_iter >= 0; got {gamma!r}, {tol!r}, "
                          f"{max_iter!r}")
    thresholds = outranking_thresholds(pref, veto, conc, disc)
    comb, _, norm = aggregator.partition(":")
    contributions = normalised(c, norm, as_pyflagr) if norm else None
    present = c.ranks > 0
    ranks = flagr_ranks(c)
    out = np.zeros(c.n_rows)
    for q, (start, end) in enumerate(zip(c.offsets[:-1].tolist(), c.offsets[1:].tolist())):  # per query
        n_ranking = present[:, start:end].sum(axis=0)
        # the outranking sums run over FLAGR's list as it stands: first its hash order, then sorted
        order = hash_order(c.doc_ids[start:end], c.ranks[:, start:end])
        lengths = c.depth[:, q]
        w = np.ones(c.n_runs)
        stats = (0.0, 1.0, 0.0, 1.0)  # FLAGR's starting statistics: the first weights stay 1
        iteration = 0
        while True:
            nw = _normalised_weights(w, stats, w_norm)
            if contributions is not None:
                scores = (contributions[:, start:end] * nw[:, None]).sum(axis=0)
                if comb == "combmnz":
                    scores = scores * present[:, start:end].sum(axis=0)
            elif comb == "outrank":
                scores = outranking_query(ranks[:, start:end], nw, thresholds, order)
            else:
                scores = majority_query(ranks[:, start:end], nw, comb == "copeland")
            position = flagr_positions(scores, n_ranking, c.doc_ids[start:end])
            order = np.argsort(position)  # FLAGR's list stays sorted: the next sums run in this order
            distance = np.array([_distance(dist, position, ranks[z, start:end], int(lengths[z]))
                                 for z in range(c.n_runs)])  # one distance per run
            with np.errstate(invalid="ignore"):
                grow = distance > 0  # NaN (an empty list) leaves the weight as it is
            new = np.where(grow, w + np.exp(-gamma * (iteration + 1.0) * np.where(grow, distance, 0.0)), w)
            settled = bool((new - w <= tol).all())
            mean = float(new.mean())
            stats = (min(float(new.min()), 1000.0), max(float(new.max()), 0.0), mean,
                     math.sqrt(float(((new - mean) ** 2).mean())))
            w = new
            iteration += 1
            if settled or iteration > max_iter:
                break
        out[start:end] = scores
    return out


@fusion_method("flagr-dibra", params={"aggregator": "combsum:borda", "w_norm": "minmax", "dist": "cosine",
                                      "gamma": 1.5, "tol": 0.01, "max_iter": 50, "pref": 0.0, "veto": 0.75,
                                      "conc": 0.0, "disc": 0.25, "as_pyflagr": False}, family="flagr")
def flagr_dibra(c: Candidates, *, aggregator: str, w_norm: str, dist: str, gamma: float, tol: float,
                max_iter: int, pref: float, veto: float, conc: float, disc: float, as_pyflagr: bool) -> FloatArray:
    """FLAGR's DIBRA: a base method (``aggregator``) iterated with distance-based voter weights."""
    return dibra(c, aggregator=aggregator, w_norm=w_norm, dist=dist, gamma=gamma, tol=tol, max_iter=max_iter,
                 pref=pref, veto=veto, conc=conc, disc=disc, as_pyflagr=as_pyflagr)
