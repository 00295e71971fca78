"""FLAGR's methods that compare every pair of a query's documents: Condorcet and Copeland winners, the
outranking approach (Farah and Vanderpooten, 2007) and the preference-relations graph (Desarkar et
al., 2016).

Each works on one query at a time: the comparisons form an (m, m) matrix for a query's m documents,
and stacking the queries would pad every query to the longest one (DESIGN §4: memory linear in the
input). Within a query every step is a whole-matrix operation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...model import FloatArray, IntArray
from .candidates import Candidates
from .flagr_common import NOT_RANKED, flagr_ranks, queries, wins_matrix
from .flagr_order import hash_order
from .registry import FusionError, fusion_method
from .scores import run_weights


def majority_query(ranks: FloatArray, weights: FloatArray, copeland: bool) -> FloatArray:
    """One query's majority scores from its ``(runs, m)`` FLAGR ranks (see :func:`majority`)."""
    wins = wins_matrix(ranks, weights)
    score: FloatArray = (wins > wins.T).sum(axis=1).astype(np.float64)
    if copeland:
        score += 0.5 * ((wins == wins.T).sum(axis=1) - 1)  # a document draws with itself
    return score


def majority(c: Candidates, *, copeland: bool, weights: Any = None) -> FloatArray:
    """Each document's wins against the query's other documents: a win when the runs ranking it
    above the other outweigh those ranking it below (a run ranking neither is neutral); Copeland
    adds half a point for a draw."""
    ranks, w = flagr_ranks(c), run_weights(weights, c)
    out = np.zeros(c.n_rows)
    for start, end in queries(c):  # per query: an (m, m) matrix of pairwise wins
        out[start:end] = majority_query(ranks[:, start:end], w, copeland)
    return out


@fusion_method("flagr-condorcet", family="flagr")
def flagr_condorcet(c: Candidates) -> FloatArray:
    """FLAGR's Condorcet winners: how many of the query's documents each one beats by majority of runs."""
    return majority(c, copeland=False)


@fusion_method("flagr-copeland", family="flagr")
def flagr_copeland(c: Candidates) -> FloatArray:
    """FLAGR's Copeland winners: Condorcet's wins plus half a point per draw."""
    return majority(c, copeland=True)


def _fraction(value: Any, name: str) -> float:
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise FusionError(f"the outranking approach's {name} must be a finite number >= 0; got {value!r}")
    return number


def outranking_query(ranks: FloatArray, weights: FloatArray, thresholds: tuple[float, float, float, float],
                     order: IntArray) -> FloatArray:
    """One query's outranking scores from its ``(runs, m)`` FLAGR ranks (see :func:`outranking`), each
    added up over the other documents one by one in ``order`` (FLAGR's, so that its sums are FLAGR's
    to the last bit)."""
    pref, veto, conc, disc = thresholds
    n_runs, m = ranks.shape
    pref_t, veto_t = math.floor(pref * m), math.floor(veto * m)
    conc_t, disc_t = math.floor(conc * n_runs), math.floor(disc * n_runs)
    agree, oppose = np.zeros((m, m)), np.zeros((m, m))
    for r in range(n_runs):  # a loop over runs
        mine, other = ranks[r][:, None], ranks[r][None, :]
        agree += weights[r] * (mine <= other - pref_t)  # two unranked documents count as agreeing
        oppose += weights[r] * (mine >= other + veto_t)
    outranks = (agree >= conc_t) & (oppose <= disc_t)
    np.fill_diagonal(outranks, False)
    gained = np.where(outranks, agree, 0.0)[:, order]
    score: FloatArray = np.cumsum(gained, axis=1)[:, -1] if len(order) else np.zeros(0)  # left to right
    return score


def outranking_thresholds(preference: float, veto: float, concordance: float, discordance: float
                          ) -> tuple[float, float, float, float]:
    """The four thresholds, checked."""
    return (_fraction(preference, "preference"), _fraction(veto, "veto"), _fraction(concordance, "concordance"),
            _fraction(discordance, "discordance"))


def outranking(c: Candidates, *, preference: float, veto: float, concordance: float, discordance: float,
               weights: Any = None) -> FloatArray:
    """The outranking approach, as FLAGR computes it: document a outranks b when the runs that rank a
    at least ``preference * m`` places above b weigh at least ``concordance * runs`` and those that
    rank a at least ``veto * m`` places below b weigh at most ``discordance * runs`` (each threshold
    truncated to a whole number, m the query's documents); a's score is the sum, over the documents
    it outranks, of the first weight."""
    thresholds = outranking_thresholds(preference, veto, concordance, discordance)
    ranks, w = flagr_ranks(c), run_weights(weights, c)
    out = np.zeros(c.n_rows)
    for start, end in queries(c):  # per query: (m, m) concordance and discordance matrices
        order = hash_order(c.doc_ids[start:end], c.ranks[:, start:end])
        out[start:end] = outranking_query(ranks[:, start:end], w, thresholds, order)
    return out


@fusion_method("flagr-outranking", params={"preference": 0.0, "veto": 0.75, "concordance": 0.0,
                                           "discordance": 0.25}, family="flagr")
def flagr_outranking(c: Candidates, *, preference: float, veto: float, concordance: float,
                     discordance: float) -> FloatArray:
    """FLAGR's outranking approach (Farah and Vanderpooten, 2007), with pyflagr's thresholds."""
    return outranking(c, preference=preference, veto=veto, concordance=concordance, discordance=discordance)


def preference_relations(c: Candidates, *, alpha: float, beta: float) -> FloatArray:
    """The preference-relations graph, as FLAGR computes it.

    For each pair of a query's documents, n0 runs rank the first above the second and n1 below. When
    ``n0 + n1 >= ceil(beta * runs)`` and one side has less than ``alpha`` of those votes, that side is
    a minority and each run voting with it disagrees once; two documents a run ranks neither count
    half a disagreement. A run's weight is ``1 - (1 + disagreements) / pairs`` (FLAGR starts the count
    at 1). A document's score is the weight of the runs ranking it above each other document, summed
    over the other documents (the in-weight of its node in the graph).
    """
    if not (math.isfinite(alpha) and math.isfinite(beta)):
        raise FusionError(f"the preference relations' alpha and beta must be finite; got {alpha!r}, {beta!r}")
    ranks = flagr_ranks(c)
    needed = math.ceil(beta * c.n_runs)
    out = np.zeros(c.n_rows)
    for start, end in queries(c):  # per query: (m, m) matrices of votes and disagreements
        m = end - start
        if m < 2:
            continue  # no pair, no edge (FLAGR fails on such a query)
        r = ranks[:, start:end]
        n0 = wins_matrix(r, np.ones(c.n_runs))  # n0[i, j]: the runs ranking i above j
        voted = n0 + n0.T
        quorum = voted >= needed
        first_minor = n0 < alpha * voted
        second_minor = ~first_minor & (n0.T < alpha * voted)
        upper = np.triu(np.ones((m, m), dtype=bool), 1)
        pairs = m * (m - 1) / 2
        for k in range(c.n_runs):  # a loop over runs, (m, m) each: memory stays m^2
            above = r[k][:, None] < r[k][None, :]
            minority = quorum & ((first_minor & above) | (second_minor & above.T)) & upper
            unranked = int((r[k] == NOT_RANKED).sum())
            # a pair the run ranks neither of is half a disagreement
            disagreements = float(minority.sum()) + 0.5 * unranked * (unranked - 1) / 2
            weight = 1.0 - (1.0 + disagreements) / pairs
            out[start:end] += weight * above.sum(axis=1)
    return out


@fusion_method("flagr-prefrel", params={"alpha": 0.1, "beta": 0.5}, family="flagr")
def flagr_prefrel(c: Candidates, *, alpha: float, beta: float) -> FloatArray:
    """FLAGR's preference-relations graph (Desarkar et al., 2016): runs weighted by their agreement
    with the alpha-majority, documents scored by the weight of the runs preferring them."""
    return preference_relations(c, alpha=alpha, beta=beta)
