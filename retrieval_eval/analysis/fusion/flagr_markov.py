"""FLAGR's Markov-chain methods MC1-MC4 (Dwork et al., 2001) and MCT (Thurstone's model): a random
walk over a query's documents whose stationary distribution scores them.

Each query is one chain: its (m, m) transition matrix and the power iteration towards its stationary
distribution are inherently per query (the chains of different queries share nothing and have
different sizes), so the methods loop over queries; within a query every step is a matrix operation.
"""

from __future__ import annotations

import math

import numpy as np

from ...model import FloatArray
from .candidates import Candidates
from .flagr_common import NOT_RANKED, flagr_ranks, queries
from .flagr_order import id_order
from .registry import FusionError, fusion_method

CHAINS = ("mc1", "mc2", "mc3", "mc4", "mct")


def _transitions(ranks: FloatArray, chain: str, as_pyflagr: bool = False) -> FloatArray:
    """The (m, m) transition matrix of one query's ``(runs, m)`` ranks (documents in byte order of
    their ids, as FLAGR sorts them), before the ergodic mixing.

    ``wins[i, j]`` counts the runs that rank both i and j and put i above j; ``both[i, j]`` the runs
    that rank both. As in FLAGR, MC1 and MC2 compare ``wins`` with all the runs, not only with those
    that rank both documents. pyflagr 1.0.21 resets its ``both`` count once per row instead of once
    per pair, so that ``both[i, j]`` is the running sum over ``j' <= j`` (``i`` itself included);
    ``as_pyflagr`` reproduces that (it changes MC3, MC4 and MCT)."""
    n_runs, m = ranks.shape
    ranked = (ranks < NOT_RANKED).astype(np.float64)
    both = ranked.T @ ranked  # (m, m), no (runs, m, m) array: memory stays m^2
    wins = np.zeros((m, m))
    for r in range(n_runs):  # a loop over runs: i above j, counted only where the run ranks both
        wins += (ranks[r][:, None] < ranks[r][None, :]) & (ranks[r] < NOT_RANKED)[None, :]
    if as_pyflagr:
        both = np.cumsum(both, axis=1)
    step = 1.0 / m
    if chain == "mc1":
        move = np.where(wins == n_runs, 0.0, step)
    elif chain == "mc2":
        move = np.where(wins > n_runs / 2, 0.0, step)
    elif chain == "mc3":
        move = np.where(both == 0, 0.0, wins / np.maximum(both * m, 1))
    elif chain == "mc4":
        move = np.where(both == 0, 0.5 * step, np.where(wins > n_runs / 2, 0.0, step))
    else:  # mct
        move = np.where(both == 0, 0.5 * step, (both - wins) / np.maximum(both * m, 1))
    np.fill_diagonal(move, 0.0)
    np.fill_diagonal(move, 1.0 - move.sum(axis=1))
    transitions: FloatArray = move
    return transitions


def markov_chain(c: Candidates, *, chain: str, ergodic_number: float, max_iterations: int,
                 as_pyflagr: bool = False) -> FloatArray:
    """Each document's probability in the stationary distribution of ``chain``'s random walk, mixed
    with a uniform jump of probability ``ergodic_number``, by ``max_iterations - 1`` steps of power
    iteration from the uniform distribution (FLAGR stops earlier only at an exact fixed point);
    ``as_pyflagr``: see :func:`_transitions`."""
    if chain not in CHAINS:
        raise FusionError(f"unknown Markov chain {chain!r}; expected one of: {', '.join(CHAINS)}")
    if not (math.isfinite(ergodic_number) and 0.0 <= ergodic_number <= 1.0):
        raise FusionError(f"the ergodic number must be between 0 and 1; got {ergodic_number!r}")
    if int(max_iterations) != max_iterations or max_iterations < 1:
        raise FusionError(f"max_iterations must be a whole number >= 1; got {max_iterations!r}")
    ranks = flagr_ranks(c)
    out = np.zeros(c.n_rows)
    for start, end in queries(c):  # per query: one chain, its own stationary distribution
        m = end - start
        by_id = start + id_order(c.doc_ids[start:end])  # FLAGR sorts a chain's documents by id first
        walk = _transitions(ranks[:, by_id], chain, as_pyflagr) * (1.0 - ergodic_number) + ergodic_number / m
        state = np.full(m, 1.0 / m)
        for _ in range(int(max_iterations) - 1):  # power iteration, as FLAGR does it
            following = state @ walk
            if bool((following == state).all()):
                break
            state = following
        out[by_id] = state
    return out


def _register(chain: str, summary: str) -> None:
    def method(c: Candidates, *, ergodic_number: float, max_iterations: int, as_pyflagr: bool) -> FloatArray:
        return markov_chain(c, chain=chain, ergodic_number=ergodic_number, max_iterations=max_iterations,
                            as_pyflagr=as_pyflagr)

    method.__doc__ = summary
    params = {"ergodic_number": 0.15, "max_iterations": 100, "as_pyflagr": False}
    fusion_method(f"flagr-{chain}", params=params, family="flagr")(method)


_register("mc1", "FLAGR's MC1: move to a uniformly chosen document unless every run ranks the current one above it.")
_register("mc2", "FLAGR's MC2: move to a uniformly chosen document unless most runs rank the current one above it.")
_register("mc3", "FLAGR's MC3: move to another document in proportion to the runs ranking the current one above it.")
_register("mc4", "FLAGR's MC4: MC2's walk; a pair no run ranks together is a half-step.")
_register("mct", "FLAGR's MCT (Thurstone): move in proportion to the runs ranking the other document above.")
