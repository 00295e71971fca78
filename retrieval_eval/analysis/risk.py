"""Risk-sensitive evaluation against a baseline: URisk, TRisk (with its p-value) and GeoRisk.

A run that wins on average can still hurt many queries. These measures weigh a query's loss against
the baseline ``1 + alpha`` times as much as an equal gain (``alpha = 0``: plain mean difference).
They take per-query values of runs over the *same* queries, in the same order; ``compare --risk
ALPHA`` (and ``compare(..., risk=ALPHA)``) reports them for each run against the baseline.

With ``d_q = run_q - baseline_q`` over the ``c`` queries and the risk-weighted difference
``w_q = d_q`` where ``d_q >= 0``, ``(1 + alpha) d_q`` where ``d_q < 0``:

- **URisk** (Wang, Bennett and Collins-Thompson [1]_; the form of Dinçer et al. [2]_) is ``mean(w)``:
  ``(Σ gains - (1 + alpha) Σ |losses|) / c``. Above 0: the run's gains outweigh its weighted losses.
- **TRisk** [2]_ is URisk over its standard error, ``URisk / (sd(w) / sqrt(c))`` (``sd`` with
  ``c - 1`` degrees of freedom): a paired t statistic of ``w``. Its two-sided p-value is from
  Student's t with ``c - 1`` degrees of freedom; TRisk beyond ±2 is the papers' rule of thumb for
  a significant gain or loss.
- **GeoRisk** [3]_ uses every run, not only the baseline. Over the matrix ``x`` of ``m`` runs by
  ``c`` queries (values >= 0), with row sums ``S_i``, column sums ``T_j`` and total ``N``, each cell
  is compared with its expectation ``e_ij = S_i T_j / N`` as ``z_ij = (x_ij - e_ij) / sqrt(e_ij)``;
  ``ZRisk_i = Σ_{z >= 0} z_ij + (1 + alpha) Σ_{z < 0} z_ij`` and
  ``GeoRisk_i = sqrt(S_i / c · Φ(ZRisk_i / c))``, ``Φ`` the standard normal distribution function.
  It mixes a run's mean effectiveness (``S_i / c``) with how its per-query values depart from what
  the other runs make expected. A cell whose expectation is 0 (every run scores 0 on that query)
  has ``z = 0``: no run departs from anything there.

>>> baseline = [0.5, 0.4, 0.3, 0.6]
>>> run = [0.6, 0.2, 0.5, 0.6]
>>> round(urisk(baseline, run, 1.0), 4)
-0.025
>>> statistic, p = trisk(baseline, run, 1.0)
>>> round(statistic, 4), round(p, 4)
(-0.1901, 0.8614)

Degenerate inputs, as in :mod:`.stats`: no query gives URisk 0, TRisk 0 and p 1; one query, or
``w`` all 0, TRisk 0 and p 1; ``w`` constant and not 0 (a standard error of 0), TRisk 0 and p 0.

References
----------
.. [1] L. Wang, P. N. Bennett and K. Collins-Thompson, "Robust ranking models via risk-sensitive
   optimization", SIGIR 2012.
.. [2] B. T. Dinçer, C. Macdonald and I. Ounis, "Hypothesis testing for the risk-sensitive
   evaluation of retrieval systems", SIGIR 2014.
.. [3] B. T. Dinçer, C. Macdonald and I. Ounis, "Risk-sensitive evaluation and learning to rank
   using multiple baselines", SIGIR 2016.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from attrs import frozen

from ..model import FloatArray, RetrievalEvalError
from .intervals import normal_cdf
from .stats import _as_vector, _is_constant, _log_gamma_ratio, _sample_sd, _t_two_tail

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["RiskRow", "georisk", "risk_rows", "risk_table", "trisk", "urisk"]


@frozen
class RiskRow:
    """One run's risk against the baseline on one measure (the baseline's own row has URisk 0)."""

    measure: str
    baseline: str
    run: str
    alpha: float
    urisk: float
    trisk: float
    trisk_p: float
    georisk: float


def _weighted(baseline: npt.ArrayLike, run: npt.ArrayLike, alpha: float) -> FloatArray:
    """``w``: the differences ``run - baseline``, losses multiplied by ``1 + alpha``."""
    _check_alpha(alpha)
    b, r = _as_vector(baseline, "baseline"), _as_vector(run, "run")
    if b.shape != r.shape:
        raise RetrievalEvalError(
            f"'baseline' and 'run' must have one value per query each; got {b.size} and {r.size} values.")
    d = r - b
    weighted: FloatArray = np.where(d < 0.0, (1.0 + alpha) * d, d)
    return weighted


def urisk(baseline: npt.ArrayLike, run: npt.ArrayLike, alpha: float) -> float:
    """URisk of ``run`` against ``baseline``: the mean of the risk-weighted differences (module notes)."""
    w = _weighted(baseline, run, alpha)
    return float(w.mean()) if w.size else 0.0


def trisk(baseline: npt.ArrayLike, run: npt.ArrayLike, alpha: float) -> tuple[float, float]:
    """TRisk of ``run`` against ``baseline`` and its two-sided p-value (t, ``c - 1`` degrees of freedom)."""
    w = _weighted(baseline, run, alpha)
    n = w.size
    if n < 2 or not w.any():
        return 0.0, 1.0
    if _is_constant(w):
        return 0.0, 0.0  # a standard error of 0: see the module notes
    statistic = float(w.mean()) / (_sample_sd(w) / math.sqrt(n))
    p = _t_two_tail(abs(statistic), n - 1, _log_gamma_ratio(n - 1))
    return statistic, min(max(p, 0.0), 1.0)


def georisk(values: npt.ArrayLike, alpha: float) -> FloatArray:
    """GeoRisk of every run (row) of ``values``, shape (n_runs, n_queries), non-negative (module notes).

    >>> georisk([[0.5, 0.5], [0.5, 0.5]], 1.0).round(4).tolist()
    [0.5, 0.5]
    """
    _check_alpha(alpha)
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise RetrievalEvalError(f"'values' must be a 2-D array (n_runs, n_queries); got shape {x.shape}.")
    if not np.isfinite(x).all() or (x < 0.0).any():
        raise RetrievalEvalError("GeoRisk needs finite values >= 0 (a measure's per-query values); got "
                                 f"{x[~(np.isfinite(x) & (x >= 0.0))][0]!r}.")
    n_runs, c = x.shape
    if c == 0 or n_runs == 0:
        return np.zeros(n_runs)
    rows, columns, total = x.sum(axis=1), x.sum(axis=0), float(x.sum())
    expected = np.outer(rows, columns) / total if total > 0.0 else np.zeros_like(x)
    safe = np.where(expected > 0.0, expected, 1.0)
    z = np.where(expected > 0.0, (x - expected) / np.sqrt(safe), 0.0)
    zrisk = np.where(z >= 0.0, z, (1.0 + alpha) * z).sum(axis=1)
    shares = np.array([normal_cdf(float(value) / c) for value in zrisk])
    result: FloatArray = np.sqrt(rows / c * shares)
    return result


def risk_rows(matrix: FloatArray, names: Sequence[str], baseline: str, measure: str, alpha: float) -> list[RiskRow]:
    """A :class:`RiskRow` per run (rows of ``matrix``, named by ``names``) against ``baseline``; GeoRisk
    from the whole matrix (0 for every run when a value is negative: GeoRisk is not defined there)."""
    base = matrix[list(names).index(baseline)]
    geo = georisk(matrix, alpha) if (matrix >= 0.0).all() else np.zeros(len(names))
    rows = []
    for name, values, g in zip(names, matrix, geo.tolist()):
        statistic, p = trisk(base, values, alpha)
        rows.append(RiskRow(measure, baseline, name, alpha, urisk(base, values, alpha), statistic, p, g))
    return rows


def risk_table(rows: Sequence[RiskRow], digits: int = 4) -> str:
    """Plain text: one line per measure and run, the baseline's first."""
    header = ["measure", "run", "URisk", "TRisk", "p", "GeoRisk"]
    cells = [header] + [[r.measure, r.run, f"{r.urisk:+.{digits}f}", f"{r.trisk:+.{digits}f}",
                         f"{r.trisk_p:.4g}", f"{r.georisk:.{digits}f}"] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             .rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    alpha = rows[0].alpha if rows else 0.0
    return (f"Risk against {rows[0].baseline if rows else 'the baseline'}, alpha {alpha:g} (a loss weighs "
            f"{1 + alpha:g} times a gain):\n" + "\n".join(lines) + "\n")


def _check_alpha(alpha: float) -> None:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha < 0.0:
        raise RetrievalEvalError(f"the risk 'alpha' must be a number >= 0; got {alpha!r}.")
