"""FLAGR's linear combinations: CombSUM and CombMNZ with its five normalisations (Renda and Straccia,
2003), and Borda and simple Borda, which are CombSUM under the two Borda normalisations.

FLAGR's normalisations are not ranx's, so these are registered under their own names
(``flagr-combsum``, ``flagr-combmnz``), with FLAGR's normalisation names:

- ``borda``: ``(N - rank + 1) / N`` for a ranked document, ``N`` the documents of the query over all
  runs; a run that lacks it gives ``(N - L + 1) / (2 N)``, ``L`` the run's list length (0 for a run
  without the query, which then still gives ``(N + 1) / (2 N)``, as in FLAGR);
- ``simple-borda``: the same for a ranked document, 0 for a missing one;
- ``rank``: ``(L - rank + 1) / L``; ``score``: min-max over the run's list; ``z-score``: the score's
  distance from the list's mean in (population) standard deviations; all three give 0 when missing.

Each runs over every query at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model import FloatArray
from .candidates import Candidates
from .flagr_common import along_rows, items_per_row, list_sizes, per_list
from .registry import FusionError, fusion_method
from .scores import run_weights

#: FLAGR's names of its normalisations, in its order (codes 100-104 and 110-114).
FLAGR_NORMS = ("borda", "rank", "score", "z-score", "simple-borda")


def _score_norm(c: Candidates, as_pyflagr: bool) -> FloatArray:
    """(r, n) min-max scaled scores; NaN where absent, 0 for a list whose scores are all equal."""
    with np.errstate(invalid="ignore"):
        high = along_rows(per_list(c.scores, c, np.fmax), c)
        low = along_rows(per_list(c.scores, c, np.fmin), c)
        spread = high - low
        safe = np.where(spread > 0, spread, 1.0)
        # pyflagr 1.0.21 divides by (last score - first score) of the list in rank order, which
        # turns min-max upside down: the top document gets 0, the last 1.
        scaled: FloatArray = np.where(spread > 0, ((high - c.scores) if as_pyflagr else (c.scores - low)) / safe, 0.0)
    return scaled


def _z_norm(c: Candidates) -> FloatArray:
    """(r, n) each score's z-score within its list (population sd); 0 for a list whose sd is 0."""
    present = c.ranks > 0
    size = np.maximum(list_sizes(c), 1.0)
    filled = np.where(present, c.scores, 0.0)
    mean = along_rows(per_list(filled, c, np.add), c) / size
    squares = np.where(present, (filled - mean) ** 2, 0.0)
    sd = np.sqrt(along_rows(per_list(squares, c, np.add), c) / size)
    z: FloatArray = np.where(present & (sd > 0), (filled - mean) / np.where(sd > 0, sd, 1.0), 0.0)
    return z


def normalised(c: Candidates, norm: str, as_pyflagr: bool = False) -> FloatArray:
    """(r, n) each run's contribution to each row under FLAGR's normalisation ``norm``, missing
    documents included (0, except under ``borda``).

    >>> from retrieval_eval.io.dicts import columns_from_dicts
    >>> from retrieval_eval.analysis.fusion.candidates import candidates_from_runs
    >>> a = columns_from_dicts({}, {"q": {"x": 3.0, "y": 2.0}})[1]
    >>> b = columns_from_dicts({}, {"q": {"y": 5.0}})[1]
    >>> normalised(candidates_from_runs([a, b]), "borda").tolist()
    [[1.0, 0.5], [0.5, 1.0]]
    """
    present = c.ranks > 0
    ranks = c.ranks.astype(np.float64)
    if norm in ("borda", "simple-borda"):
        n = items_per_row(c)[None, :]
        missing = (n - list_sizes(c) + 1.0) / (2.0 * n) if norm == "borda" else 0.0
        out: FloatArray = np.where(present, (n - ranks + 1.0) / n, missing)
        return out
    if norm == "rank":
        size = list_sizes(c)
        out = np.where(present, (size - ranks + 1.0) / np.maximum(size, 1.0), 0.0)
        return out
    if norm == "score":
        out = np.where(present, _score_norm(c, as_pyflagr), 0.0)
        return out
    if norm == "z-score":
        return _z_norm(c)
    raise FusionError(f"unknown FLAGR normalisation {norm!r}; expected one of: {', '.join(FLAGR_NORMS)}")


def linear(c: Candidates, norm: str, *, mnz: bool = False, weights: Any = None,
           as_pyflagr: bool = False) -> FloatArray:
    """The weighted sum of the runs' normalised contributions, times the number of runs that rank the
    document when ``mnz`` (CombMNZ)."""
    w = run_weights(weights, c)
    total: FloatArray = (normalised(c, norm, as_pyflagr) * w[:, None]).sum(axis=0)
    if mnz:
        total = total * (c.ranks > 0).sum(axis=0)
    return total


_PARAMS = {"norm": "borda", "as_pyflagr": False}


@fusion_method("flagr-combsum", params=_PARAMS, family="flagr")
def flagr_comb_sum(c: Candidates, *, norm: str, as_pyflagr: bool) -> FloatArray:
    """FLAGR's CombSUM: the sum of the runs' contributions under ``norm`` (borda, rank, score, z-score,
    simple-borda); ``as_pyflagr`` reproduces pyflagr 1.0.21's upside-down ``score`` normalisation."""
    return linear(c, norm, as_pyflagr=as_pyflagr)


@fusion_method("flagr-combmnz", params=_PARAMS, family="flagr")
def flagr_comb_mnz(c: Candidates, *, norm: str, as_pyflagr: bool) -> FloatArray:
    """FLAGR's CombMNZ: FLAGR's CombSUM times the number of runs that rank the document."""
    return linear(c, norm, mnz=True, as_pyflagr=as_pyflagr)


@fusion_method("flagr-borda", family="flagr")
def flagr_borda(c: Candidates) -> FloatArray:
    """FLAGR's Borda count: CombSUM with Borda normalisation (missing documents share the rest)."""
    return linear(c, "borda")


@fusion_method("flagr-simple-borda", family="flagr")
def flagr_simple_borda(c: Candidates) -> FloatArray:
    """FLAGR's simple Borda count: CombSUM with Borda points for ranked documents only."""
    return linear(c, "simple-borda")
