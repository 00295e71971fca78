"""Agreement between two sets of judgments: on the labels themselves, and on the systems they rank.

Typical use: qrels made by an LLM judge next to human qrels of the same queries (Clarke & Dietz 2024).

**On the documents judged by both** (a negative label, "pooled but not judged", counts as not judged):

- the confusion matrix, rows the first qrels' grades and columns the second's;
- Cohen's kappa, unweighted, and weighted for grades: ``linear`` (|i - j|) and ``quadratic``
  ((i - j)^2) disagreement weights, where i and j are the *positions* of the two grades among the
  grades seen in either qrels (as scikit-learn does: grades 0, 1, 3 are three steps 0, 1, 2);
- Krippendorff's alpha, ``nominal`` (any two grades differ equally), ``ordinal`` (a difference
  counts the judgments that lie between the two grades) and ``interval`` (the squared difference
  of the grades' values), from the coincidence matrix of the two judges.

**With runs**: each run is evaluated against each qrels (every query of that qrels counts, a query
the run lacks as 0, so all systems share one query set), and for each measure the two rankings of
the systems by their means are compared: Kendall's tau-b, Yilmaz et al.'s tau_AP (SIGIR 2008, the
first qrels taken as the truth: swaps near the top cost more), and the share of the top k systems
the two rankings have in common.

>>> a = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 0}}
>>> b = {"q1": {"d1": 2, "d2": 1, "d3": 1}, "q2": {"d4": 1, "d6": 1}}
>>> labels = label_agreement(a, b)
>>> labels.shared, labels.confusion.tolist()
(4, [[0, 1, 0], [0, 2, 0], [0, 0, 1]])
>>> round(labels.kappa, 4), round(labels.kappa_quadratic, 4), round(labels.alpha_ordinal, 4)
(0.5556, 0.6667, 0.75)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from attrs import frozen

from ..engine.ids import _as_bytes, _check_duplicates, intern
from ..model import FloatArray, IntArray, QrelsColumns, RetrievalEvalError
from .flaky import top_k_overlap

if TYPE_CHECKING:
    from ..evaluators.query import MeasureLike

__all__ = ["LabelAgreement", "RankingAgreement", "label_agreement", "ranking_agreement", "tau_ap", "tau_b"]


@frozen
class LabelAgreement:
    """How two qrels agree on the documents both judged."""

    shared: int  #: (query, document) pairs judged by both
    only_first: int
    only_second: int
    grades: tuple[float, ...]  #: the grades seen in either, ascending: the rows and columns of ``confusion``
    confusion: IntArray
    kappa: float
    kappa_linear: float
    kappa_quadratic: float
    alpha_nominal: float
    alpha_ordinal: float
    alpha_interval: float

    def to_dict(self) -> dict[str, Any]:
        def number(x: float) -> float | None:
            return None if math.isnan(x) else x
        return {"shared": self.shared, "only_first": self.only_first, "only_second": self.only_second,
                "grades": [_grade(g) for g in self.grades], "confusion": self.confusion.tolist(),
                **{name: number(getattr(self, name)) for name in (
                    "kappa", "kappa_linear", "kappa_quadratic", "alpha_nominal", "alpha_ordinal", "alpha_interval")}}


def _grade(value: float) -> float | int:
    return int(value) if float(value).is_integer() else float(value)


def qrels_columns(source: Any) -> QrelsColumns:
    """Qrels as columns: a path or open file (any format the readers know), a dict, or columns already."""
    if isinstance(source, QrelsColumns):
        return source
    if isinstance(source, Mapping):
        from ..io.dicts import columns_from_dicts

        return columns_from_dicts(source, {})[0]
    from ..io.formats import read_qrels_columns

    return read_qrels_columns(source)


def judged_keys(columns: QrelsColumns) -> tuple[np.ndarray, FloatArray]:
    """Each judged (query, document) pair as one bytes key, and its grade; duplicates are an error."""
    queries, docs = _as_bytes(columns.query_ids), _as_bytes(columns.doc_ids)
    vocab, codes = intern(queries)
    _check_duplicates(codes, docs, columns.lines, columns.origin, columns.unit, "judgment", vocab, "error")
    grades = np.asarray(columns.relevance, dtype=np.float64)
    judged = grades >= 0
    return id_pairs(queries[judged], docs[judged]), grades[judged]


def id_pairs(queries: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Each (query, document) as one bytes value ``query NUL doc``: pairs compared and looked up at once."""
    return np.char.add(np.char.add(queries.astype(bytes), b"\x00"), docs.astype(bytes))


def label_agreement(first: Any, second: Any) -> LabelAgreement:
    """Agreement of two qrels (paths, ``{query: {doc: grade}}`` dicts or :class:`QrelsColumns`) on the
    documents both judged; see the module notes. Raises when they share no judged document."""
    keys_a, grades_a = judged_keys(qrels_columns(first))
    keys_b, grades_b = judged_keys(qrels_columns(second))
    _, in_a, in_b = np.intersect1d(keys_a, keys_b, assume_unique=True, return_indices=True)
    if len(in_a) == 0:
        raise RetrievalEvalError("the two qrels judge no document in common; expected judgments of the same pool")
    x, y = grades_a[in_a], grades_b[in_b]
    grades, codes = np.unique(np.concatenate((x, y)), return_inverse=True)
    i, j, m = codes[: len(x)], codes[len(x):], len(grades)
    confusion = np.zeros((m, m), dtype=np.int64)
    np.add.at(confusion, (i, j), 1)
    steps = np.abs(np.subtract.outer(np.arange(m), np.arange(m))).astype(np.float64)
    return LabelAgreement(
        len(x), len(keys_a) - len(x), len(keys_b) - len(x), tuple(float(g) for g in grades), confusion,
        _kappa(confusion, (steps > 0).astype(np.float64)), _kappa(confusion, steps), _kappa(confusion, steps ** 2),
        *(_alpha(confusion, _distances(confusion, grades, kind)) for kind in ("nominal", "ordinal", "interval")))


def _kappa(confusion: IntArray, weights: FloatArray) -> float:
    """Cohen's kappa with disagreement weights: 1 - observed / expected weighted disagreement."""
    n = confusion.sum()
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / n
    chance = float((weights * expected).sum())
    return math.nan if chance == 0 else 1.0 - float((weights * confusion).sum()) / chance


def _distances(confusion: IntArray, grades: FloatArray, kind: str) -> FloatArray:
    """Krippendorff's squared difference of every two grades."""
    if kind == "nominal":
        return 1.0 - np.eye(len(grades))
    if kind == "interval":
        return np.asarray(np.subtract.outer(grades, grades) ** 2, dtype=np.float64)
    counts = (confusion.sum(axis=0) + confusion.sum(axis=1)).astype(np.float64)  # each grade's judgments
    below = np.concatenate(([0.0], np.cumsum(counts)))
    low, high = np.minimum.outer(np.arange(len(grades)), np.arange(len(grades))), np.maximum.outer(
        np.arange(len(grades)), np.arange(len(grades)))
    between = below[high + 1] - below[low]  # the judgments from the lower grade to the higher, both included
    return np.asarray((between - (counts[low] + counts[high]) / 2) ** 2, dtype=np.float64)


def _alpha(confusion: IntArray, distance: FloatArray) -> float:
    """Krippendorff's alpha of two judges who both judged every unit: 1 - D_o / D_e over the coincidences."""
    coincidence = (confusion + confusion.T).astype(np.float64)  # each unit's pair counted both ways
    n = coincidence.sum()
    marginal = coincidence.sum(axis=1)
    observed = float((coincidence * distance).sum()) / n
    expected = float((np.outer(marginal, marginal) * distance).sum()) / (n * (n - 1))
    return math.nan if expected == 0 else float(1.0 - observed / expected)


def _inversions(values: IntArray) -> int:
    """How many pairs i < j have values[i] > values[j] (non-negative integers): a merge sort done a
    level at a time over every block at once, each right half's elements looked up in its left half."""
    n = len(values)
    span = int(values.max()) + 1 if n else 1
    current, total, width = values.astype(np.int64), 0, 1
    position = np.arange(n)
    while width < n:
        block = position // (2 * width)
        keys = block * span + current  # each half is sorted: the left halves' keys are sorted overall
        right = (position % (2 * width)) >= width
        left_keys, right_keys = keys[~right], keys[right]
        ends = np.searchsorted(left_keys, (block[right] + 1) * span)  # where each right element's left half ends
        total += int(np.sum(ends - np.searchsorted(left_keys, right_keys, side="right")))
        current = np.sort(keys) - block * span
        width *= 2
    return total


def _tied_pairs(values: IntArray) -> int:
    """How many pairs of ``values`` are equal."""
    counts = np.unique(values, return_counts=True)[1]
    return int(np.sum(counts * (counts - 1) // 2))


def tau_b(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Kendall's tau-b of two score vectors (ties in either count as neither concordant nor discordant),
    in O(n log^2 n) (Knight's method); NaN when either vector is constant.

    >>> tau_b([3, 2, 1], [3, 1, 2])
    0.3333333333333333
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(x)
    if n < 2:
        return math.nan
    x_ranks = np.unique(x, return_inverse=True)[1].ravel()
    y_ranks = np.unique(y, return_inverse=True)[1].ravel()
    pairs = n * (n - 1) // 2
    tied_x, tied_y = _tied_pairs(x_ranks), _tied_pairs(y_ranks)
    tied_both = _tied_pairs(x_ranks * (int(y_ranks.max()) + 1) + y_ranks)
    # sorted by x, then y: a pair tied in x is in y's order, so the inversions are the discordant pairs
    discordant = _inversions(y_ranks[np.lexsort((y_ranks, x_ranks))])
    denominator = math.sqrt(float(pairs - tied_x) * float(pairs - tied_y))
    if denominator == 0:
        return math.nan
    return (pairs - tied_x - tied_y + tied_both - 2 * discordant) / denominator


def tau_ap(truth: npt.ArrayLike, estimate: npt.ArrayLike) -> float:
    """Yilmaz, Aslam & Robertson's tau_AP of the ranking by ``estimate`` against the ranking by ``truth``
    (higher is better): 2 / (N - 1) * sum over ranks i >= 2 of (items above i that the truth does not
    put below it) / (i - 1), minus 1. Ties in ``estimate`` are broken by position; two items the truth
    ties are in no wrong order either way, so a ranking compared with itself gives 1, ties or not.

    >>> tau_ap([4, 3, 2, 1], [4, 3, 1, 2]), tau_ap([4, 3, 2, 1], [3, 4, 2, 1])  # doctest: +ELLIPSIS
    (0.777..., 0.333...)
    """
    truth, estimate = np.asarray(truth, dtype=np.float64), np.asarray(estimate, dtype=np.float64)
    n = len(truth)
    if n < 2:
        return math.nan
    order = np.argsort(-estimate, kind="stable")
    ranked = truth[order]
    above = np.tril(np.greater_equal.outer(ranked, ranked).T, -1)  # above[i, j]: j above i, not below in truth
    correct = above.sum(axis=1)[1:]
    return 2.0 / (n - 1) * float(np.sum(correct / np.arange(1, n))) - 1.0


@frozen
class RankingAgreement:
    """One measure: the systems' means under each qrels and how the two rankings agree."""

    measure: str
    systems: tuple[str, ...]
    first: tuple[float, ...]
    second: tuple[float, ...]
    tau: float
    tau_ap: float
    top: int
    top_overlap: float  #: the share of the top ``top`` systems both rankings have

    def to_dict(self) -> dict[str, Any]:
        def number(x: float) -> float | None:
            return None if math.isnan(x) else x
        return {"measure": self.measure, "tau": number(self.tau), "tau_ap": number(self.tau_ap), "top": self.top,
                "top_overlap": self.top_overlap,
                "systems": [{"name": s, "first": a, "second": b} for s, a, b in zip(self.systems, self.first, self.second)]}


def _ranked(names: Sequence[str], means: Sequence[float]) -> list[str]:
    return [names[i] for i in np.argsort(-np.asarray(means, dtype=float), kind="stable")]


def ranking_agreement(first: Sequence[Any], second: Sequence[Any], measures: Sequence[MeasureLike], *,
                      names: Sequence[str], top: int = 3) -> list[RankingAgreement]:
    """For each measure, how the systems' rankings agree when each system is evaluated against two qrels.

    ``first`` and ``second`` hold each system's evaluation (:class:`SetEvaluator`) against the first and
    the second qrels, in the order of ``names``.
    """
    from ..measures import parse

    if not (len(first) == len(second) == len(names)) or len(names) < 2:
        raise RetrievalEvalError(f"ranking agreement needs two or more systems; got {len(names)}")
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise RetrievalEvalError(f"'top' must be an integer >= 1; got {top!r}")
    found = []
    for measure in dict.fromkeys(parse(m) for m in measures):
        a = [float(results.mean(measure)) for results in first]
        b = [float(results.mean(measure)) for results in second]
        found.append(RankingAgreement(str(measure), tuple(names), tuple(a), tuple(b), tau_b(a, b), tau_ap(a, b), top,
                                      top_k_overlap([_ranked(names, a), _ranked(names, b)], top)))
    return found
