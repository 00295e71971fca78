"""Whether a query set can tell a change from noise: the resolution of a gate, said out loud.

From the paired per-query differences ``d = now - baseline`` of one measure:

- the minimum detectable effect (MDE): the smallest true mean difference a two-sided paired test at
  level ``alpha`` detects with probability ``power``. Normal approximation of the paired t-test:
  ``MDE = (z(1 - alpha/2) + z(power)) * sd(d) / sqrt(n)``, ``sd`` with ddof 1. (The t-based value is
  larger for small n: 17% at n = 8, 3.5% at n = 30, 1% at n = 100.)
- the queries needed to detect a tolerance: the smallest n with ``MDE(n) <= tolerance``, that is
  ``ceil(((z(1 - alpha/2) + z(power)) * sd / tolerance)**2)``;
- the smallest p-value the test can reach over these queries, whatever their values: with ``m``
  queries that differ at all, ``2 * 0.5**m`` for the sign, Wilcoxon (exact) and permutation tests
  (every difference of one sign); ``1/(B + 1)`` at best for the bootstrap's and sampled tests' B draws.
  When even that is not below ``alpha`` (after correction), no outcome can be significant: the
  comparison is *unresolvable*.

>>> d = [0.1, -0.05, 0.2, 0.0, 0.15, -0.1, 0.05, 0.1]
>>> round(minimum_detectable_effect(d), 4), queries_needed(d, 0.02)
(0.1006, 203)
>>> smallest_p(d, "sign"), smallest_p([0.1, 0.2, 0.0], "permutation")
(0.015625, 0.5)
"""

from __future__ import annotations

import math
from statistics import NormalDist

import attrs
import numpy as np
import numpy.typing as npt

from ..analysis.stats import _sample_sd

__all__ = ["Resolution", "minimum_detectable_effect", "queries_needed", "resolution", "smallest_p"]

#: The power the MDE and the needed queries are computed for.
POWER = 0.8


def _z_sum(alpha: float, power: float) -> float:
    normal = NormalDist()
    return normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(power)


def _sd(d: npt.ArrayLike) -> tuple[int, float]:
    """(n, sample standard deviation); the one the tests and intervals take, which keeps the spread of
    differences of 1e-200 whose squares underflow (inf with fewer than 2 values)."""
    values = np.asarray(d, dtype=np.float64)
    return values.size, _sample_sd(values) if values.size >= 2 else math.inf


def minimum_detectable_effect(d: npt.ArrayLike, *, alpha: float = 0.05, power: float = POWER) -> float:
    """The smallest mean difference detected with probability ``power`` (inf for fewer than 2 queries)."""
    n, sd = _sd(d)
    return math.inf if n < 2 else _z_sum(alpha, power) * sd / math.sqrt(n)


def queries_needed(d: npt.ArrayLike, tolerance: float, *, alpha: float = 0.05, power: float = POWER) -> int | None:
    """Queries needed to detect a mean difference of ``tolerance`` with these differences' spread (None
    when the spread is unknown: fewer than 2 queries; at least 2)."""
    n, sd = _sd(d)
    if n < 2 or tolerance <= 0:
        return None
    return max(2, math.ceil((_z_sum(alpha, power) * sd / tolerance) ** 2 - 1e-9))


def smallest_p(d: npt.ArrayLike, test: str, *, permutations: int = 10_000, samples: int = 10_000) -> float:
    """The smallest two-sided p-value ``test`` can give over these queries, whatever their values' sizes.

    1 when fewer than 2 queries or none differ; 0 for the t-test otherwise (no floor)."""
    values = np.asarray(d, dtype=np.float64)
    m = int(np.count_nonzero(values))
    if values.size < 2 or m == 0:
        return 1.0
    exact = min(1.0, 2.0 * 0.5**m)  # every differing query on one side: a sign pattern of two of 2**m
    if test in ("sign", "wilcoxon"):
        return exact
    if test in ("permutation", "tukey"):
        return max(exact, 1.0 / (permutations + 1)) if 2**values.size > permutations else exact
    if test == "bootstrap":
        return 1.0 / (samples + 1)
    return 0.0


@attrs.frozen
class Resolution:
    """What one measure's queries can detect (see the module notes)."""

    queries: int  #: the queries compared
    changed: int  #: of them, those whose value differs
    sd: float  #: the spread of the differences (ddof 1; inf with fewer than 2 queries)
    mde: float  #: the minimum detectable effect at :data:`POWER`
    tolerance: float | None  #: the drop the rules allow (max_drop), if any
    needed: int | None  #: queries needed to detect ``tolerance``
    smallest_p: float  #: the smallest p the test can reach, corrected as the regression rules are

    @property
    def resolvable(self) -> bool:
        """Whether the tolerance (if any) is at least the MDE."""
        return self.tolerance is None or self.mde <= self.tolerance


def resolution(d: npt.ArrayLike, *, tolerance: float | None, test: str, alpha: float, family: int = 1,
               permutations: int = 10_000, samples: int = 10_000) -> Resolution:
    """The :class:`Resolution` of the differences ``d``; ``family`` regression rules share a Bonferroni
    or Holm correction, which multiplies the smallest p by their number."""
    values = np.asarray(d, dtype=np.float64)
    n, sd = _sd(values)
    floor = min(1.0, smallest_p(values, test, permutations=permutations, samples=samples) * family)
    return Resolution(n, int(np.count_nonzero(values)), sd, minimum_detectable_effect(values, alpha=alpha),
                      tolerance, None if tolerance is None else queries_needed(values, tolerance, alpha=alpha), floor)
