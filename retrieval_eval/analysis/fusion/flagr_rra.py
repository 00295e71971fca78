"""FLAGR's Robust Rank Aggregation (Kolde et al., 2012), as R's RobustRankAggreg and FLAGR compute it.

Each document's normalised ranks ``rank / N`` (1 where a run lacks it; N the query's documents over
all runs), sorted, are compared with the order statistics of uniform draws: the k-th smallest of
``runs`` uniforms is below x with probability ``P(Binomial(runs, x) >= k)``. The smallest of those
probabilities, corrected for the ``runs`` tests (Bonferroni, or exactly by Stuart's recursion), is the
document's rho: small means ranked high by more runs than chance explains.

Everything is per row, so it runs over every query at once. FLAGR sorts by rho ascending; the fused
score here is ``-rho``, so that higher is better and the order is FLAGR's.
"""

from __future__ import annotations

import math

import numpy as np

from ...model import FloatArray
from .candidates import Candidates
from .flagr_common import items_per_row
from .registry import fusion_method


def binomial_tail(x: FloatArray, k: int, m: int) -> FloatArray:
    """``P(Binomial(m, x) >= k)`` elementwise: the regularised incomplete beta ``I_x(k, m - k + 1)``,
    the distribution function of the k-th smallest of m uniform draws."""
    total = np.zeros_like(x)
    for j in range(k, m + 1):  # m + 1 - k terms, each a whole-array operation
        total += math.comb(m, j) * x**j * (1.0 - x) ** (m - j)
    clipped: FloatArray = np.minimum(total, 1.0)
    return clipped


def order_statistic_p(c: Candidates) -> FloatArray:
    """(n,) each row's smallest order-statistic probability over its sorted normalised ranks."""
    m = c.n_runs
    normalised = np.where(c.ranks > 0, c.ranks / items_per_row(c)[None, :], 1.0)
    ordered = np.sort(normalised, axis=0)
    smallest = np.ones(c.n_rows)
    for i in range(m):  # a loop over runs: the i-th order statistic of every row at once
        smallest = np.minimum(smallest, binomial_tail(ordered[i], i + 1, m))
    return smallest


def _inverse_tail(p: FloatArray, k: int, m: int) -> FloatArray:
    """The x with ``binomial_tail(x, k, m) == p``, by bisection (the tail grows with x)."""
    low, high = np.zeros_like(p), np.ones_like(p)
    for _ in range(64):  # 64 halvings reach the spacing of doubles in [0, 1]
        middle = 0.5 * (low + high)
        below = binomial_tail(middle, k, m) < p
        low, high = np.where(below, middle, low), np.where(below, high, middle)
    inverse: FloatArray = 0.5 * (low + high)
    return inverse


def stuart_rho(smallest: FloatArray, m: int) -> FloatArray:
    """Stuart's exact correction of the smallest p-value, as RobustRankAggreg's ``stuart`` (and FLAGR)
    compute it: the probability that some order statistic is at least as extreme."""
    # 1 - the quantile of each order statistic at the row's smallest p-value, sorted ascending
    quantiles = np.sort(np.stack([1.0 - _inverse_tail(smallest, m - j, m) for j in range(m)]), axis=0)
    factorial = [float(math.factorial(i)) for i in range(m + 1)]
    v = [np.ones_like(smallest) for _ in range(m + 2)]
    for k in range(1, m + 1):  # Stuart's recursion over the number of lists, whole rows at a time
        r = quantiles[m - k]
        term = np.zeros_like(smallest)
        for i in range(1, k + 1):
            term = term + (-1.0) ** (i + 1) * v[k - i + 1] * r**i / factorial[i]
        v[k + 1] = term
    rho: FloatArray = factorial[m] * v[m + 1]
    return rho


def robust_rank_aggregation(c: Candidates, *, exact: bool) -> FloatArray:
    """Each row's rho: ``min(runs * p, 1)`` for the smallest order-statistic probability p, or with
    ``exact`` one minus Stuart's correction of p (FLAGR's ``1 - stuart(...)``)."""
    smallest = order_statistic_p(c)
    if exact:
        rho: FloatArray = 1.0 - stuart_rho(smallest, c.n_runs)
        return rho
    bonferroni: FloatArray = np.minimum(smallest * c.n_runs, 1.0)
    return bonferroni


@fusion_method("flagr-rra", params={"exact": False}, family="flagr")
def flagr_rra(c: Candidates, *, exact: bool) -> FloatArray:
    """FLAGR's Robust Rank Aggregation: minus each document's rho (``exact``: Stuart's correction)."""
    scores: FloatArray = -robust_rank_aggregation(c, exact=bool(exact))
    return scores
