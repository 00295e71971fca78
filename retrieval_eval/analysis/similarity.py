"""How alike two rankings are, without qrels: rank-biased overlap, Jaccard@k, overlap@k, Kendall's tau.

**RBO** (Webber, Moffat & Zobel, TOIS 2010) is the expected overlap of the two top-d sets, d drawn
with weight ``(1 - p) p^(d-1)``: a top-heavy similarity of lists that may be of different lengths and
need not hold the same documents. A finite pair of lists leaves the tail unknown, so four numbers
come out: ``min`` (no more overlap below the lists), ``max`` (all the overlap that could still come),
their difference ``res`` (the residual: how much is unknown), and ``ext``, the extrapolated point
estimate (the agreement seen at the end of the shorter list goes on for ever).

**Ties** follow Corsi & Urbano (SIGIR 2024), who give three readings of documents with equal scores:

- ``"a"`` (the default): a tie means *we do not know* the order; RBO^a takes the overlap at each
  depth as its expected value over every order of the tie groups, computed exactly (no sampling).
  ``min`` is then exactly the mean of RBO_min over those orders; ``ext`` and ``max`` extend the
  expected overlaps as Corsi & Urbano define them, and are not such a mean;
- ``"b"``: the same uncertainty, but the agreement is normalised by what the ties left to know, so
  that ``RBO^b(X, X) = 1`` even when X has ties;
- ``"w"``: a tie means the documents *share a rank* (a sports table): each sits at its group's top rank;
- ``"trec_eval"``: no ties at all, the documents in trec_eval's order (score, then doc_id descending),
  which is what the measures see; without ties the three variants agree with it.

``a`` is the default because the other tie policies of this package (``expected``) read a tie the
same way: an order nobody chose. A list's tie groups come from its scores (:class:`RankedLists`).

>>> round(rbo(["a", "b", "c"], ["a", "b", "c"], p=0.9).ext, 12)
1.0
>>> r = rbo(["a", "b", "c", "d"], ["b", "a", "e"], p=0.9)
>>> round(r.min, 4), round(r.max, 4), round(r.ext, 4)
(0.3117, 0.8548, 0.63)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import frozen

from ..model import FloatArray, IntArray, RetrievalEvalError, id_text
from .agreement import tau_b
from .flaky import top_k_overlap
from .rankings import RankedLists, joint_codes, ranked_lists

__all__ = ["RBO", "TIES", "QuerySimilarity", "SimilarityReport", "jaccard_at", "kendall_tau", "rbo", "similarity"]

#: The tie readings of :func:`rbo`, see the module notes.
TIES = ("a", "b", "w", "trec_eval")


@frozen
class RBO:
    """One pair of lists: RBO's lower bound, upper bound, residual (max - min) and extrapolated value."""

    ext: float
    min: float
    max: float
    res: float


def _places(groups: IntArray | None, n: int, ties: str) -> tuple[IntArray, IntArray]:
    """Each item's first depth (0-based) and the size of the ramp over which it enters: in RBO^a and
    RBO^b an item of a tie group of g from depth t counts (d - t + 1) / g at depth d, 1 from t + g - 1;
    in RBO^w it counts 1 from its group's top."""
    if groups is None or ties == "trec_eval" or n == 0:
        return np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    if len(groups) != n or (n > 1 and bool(np.any(np.diff(groups) < 0))):
        raise RetrievalEvalError("tie groups must be one non-decreasing number per item")
    starts = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
    sizes = np.diff(np.append(starts, n))
    top = np.repeat(starts, sizes).astype(np.int64)
    ramp = np.repeat(sizes, sizes).astype(np.int64) if ties in ("a", "b") else np.ones(n, dtype=np.int64)
    return top, ramp


def _share(top: IntArray, ramp: IntArray, d: IntArray) -> FloatArray:
    """Items' contributions at depths ``d`` (arrays of one shape)."""
    return np.clip((d - top + 1) / ramp, 0.0, 1.0)


def _windows(lo: IntArray, hi: IntArray) -> tuple[IntArray, IntArray]:
    """For each item i the depths lo[i] <= d < hi[i], flattened: (item index, depth) pairs."""
    width = np.maximum(hi - lo, 0)
    item = np.repeat(np.arange(len(lo)), width)
    first = np.repeat(np.cumsum(width) - width, width)
    return item, lo[item] + np.arange(int(width.sum())) - first


def _full_from(full: IntArray, n: int) -> FloatArray:
    """How many items count 1 at each depth 0..n-1, given the depth each starts counting in full."""
    return np.cumsum(np.bincount(np.minimum(full, n), minlength=n + 1)[:n]).astype(np.float64)


def _mass(top: IntArray, ramp: IntArray, n: int, squared: bool = False) -> FloatArray:
    """The sum of a list's contributions (or of their squares) at depths 0..n-1."""
    out = _full_from(top + ramp - 1, n)
    item, d = _windows(top, top + ramp - 1)
    share = _share(top[item], ramp[item], d)
    np.add.at(out, d[d < n], (share * share if squared else share)[d < n])
    return out


def rbo(a: Sequence[str], b: Sequence[str], *, p: float = 0.9, ties: str = "a",
        a_groups: Sequence[int] | IntArray | None = None, b_groups: Sequence[int] | IntArray | None = None) -> RBO:
    """RBO of two lists of ids (best first; each id once per list), with tie groups for each
    (non-decreasing numbers, equal for tied items) read as ``ties`` says; see the module notes.

    >>> r = rbo(["a", "b", "c"], ["b", "a", "c"], p=0.5, ties="w", a_groups=[0, 0, 1], b_groups=[0, 0, 1])
    >>> r.ext, round(r.res, 4)  # the same lists, but what lies below them is unknown
    (1.0, 0.0456)
    """
    if not (isinstance(p, (int, float)) and 0.0 < p < 1.0):
        raise RetrievalEvalError(f"'p' must lie strictly between 0 and 1; got {p!r}")
    if ties not in TIES:
        raise RetrievalEvalError(f"'ties' must be one of {', '.join(TIES)}; got {ties!r}")
    if not a or not b:
        raise RetrievalEvalError("RBO needs two non-empty lists")
    if len(set(a)) != len(a) or len(set(b)) != len(b):
        raise RetrievalEvalError("an id occurs twice in one list; expected each id at most once")
    code = {doc: i for i, doc in enumerate(dict.fromkeys([*a, *b]))}
    return _rbo_of(np.array([code[d] for d in a], dtype=np.int64), np.array([code[d] for d in b], dtype=np.int64),
                   None if a_groups is None else np.asarray(a_groups), None if b_groups is None else np.asarray(b_groups),
                   float(p), ties)


def _rbo_of(a: IntArray, b: IntArray, a_groups: IntArray | None, b_groups: IntArray | None, p: float,
            ties: str) -> RBO:
    """:func:`rbo` of two lists of distinct integer codes."""
    first = (a, *_places(a_groups, len(a), ties))
    second = (b, *_places(b_groups, len(b), ties))
    (short, s_top, s_ramp), (long, l_top, l_ramp) = sorted((first, second), key=lambda x: len(x[0]))
    return _rbo(short, s_top, s_ramp, long, l_top, l_ramp, p, ties)


def _rbo(short: IntArray, s_top: IntArray, s_ramp: IntArray, long: IntArray, l_top: IntArray,
         l_ramp: IntArray, p: float, ties: str) -> RBO:
    s, n = len(short), len(long)
    in_s, in_l = np.intersect1d(short, long, assume_unique=True, return_indices=True)[1:]
    only_l = np.setdiff1d(np.arange(n), in_l)  # the long list's own items, in its order
    # X: the overlap at each depth, the shared items' contributions multiplied
    st, sr, lt, lr = s_top[in_s], s_ramp[in_s], l_top[in_l], l_ramp[in_l]
    overlap = _full_from(np.maximum(st + sr - 1, lt + lr - 1), n)
    item, d = _windows(np.maximum(st, lt), np.maximum(st + sr - 1, lt + lr - 1))
    np.add.at(overlap, d, _share(st[item], sr[item], d) * _share(lt[item], lr[item], d))
    depth = np.arange(1, n + 1, dtype=np.float64)
    if ties == "b":
        s_mass = np.concatenate((_mass(s_top, s_ramp, s, squared=True), depth[s:]))
        norm = np.sqrt(s_mass * _mass(l_top, l_ramp, n, squared=True))
    elif ties == "w":
        s_mass = np.concatenate((_mass(s_top, s_ramp, s), depth[s:]))
        norm = (s_mass + _mass(l_top, l_ramp, n)) / 2
    else:  # a, and lists without ties: d items each at depth d
        norm = depth
    seen = overlap / norm
    a_s = seen[s - 1]
    # Below the short list's end: the long list's own items at each depth d >= s
    later = np.arange(s, n)
    k = np.arange(len(only_l))
    ot, orp = l_top[only_l], l_ramp[only_l]
    # max: the first d - s + 1 of them might all be in the short list's unknown tail
    upper = _full_from(np.maximum(s + k, ot + orp - 1), n)
    item, d = _windows(np.maximum(s + k, ot), ot + orp - 1)
    np.add.at(upper, d, _share(ot[item], orp[item], d))
    # ext: each of the d - s + 1 unseen places agrees as the short list did at its end, weighted by the
    # mean share of the long list's own items that have entered by depth d
    entered = _full_from(ot, n)
    share_sum = _mass(ot, orp, n)
    mean_share = np.divide(share_sum, entered, out=np.ones(n), where=entered > 0)
    extra = np.zeros(n)
    extra[later] = (later - s + 1) * a_s * mean_share[later]
    weights = p ** depth
    x_l = float(overlap[-1])
    tail_min = x_l * (math.log(1 / (1 - p)) - float(np.sum(weights / depth)))
    f = n + s - x_l
    beyond = np.arange(n + 1, f + 1)
    tail_max = float(np.sum((2 * beyond - n - s + x_l) / beyond * p ** beyond)) + p ** (f + 1) / (1 - p)
    tail_ext = (x_l + (n - s) * a_s) / n * p ** (n + 1) / (1 - p)
    scale = (1 - p) / p
    low = scale * (float(np.sum(seen * weights)) + tail_min)
    high = scale * (float(np.sum((overlap + upper * (depth > s)) / norm * weights)) + tail_max)
    ext = scale * (float(np.sum((overlap + extra) / norm * weights)) + tail_ext)
    return RBO(float(ext), low, high, high - low)


def _jaccard(a: IntArray, b: IntArray, k: int) -> float:
    """:func:`jaccard_at` of two lists of distinct codes."""
    common = len(np.intersect1d(a[:k], b[:k], assume_unique=True))
    union = len(a[:k]) + len(b[:k]) - common
    return common / union if union else 1.0


def _tau(a: IntArray, b: IntArray) -> float:
    """:func:`kendall_tau` of two lists of distinct codes."""
    in_a, in_b = np.intersect1d(a, b, assume_unique=True, return_indices=True)[1:]
    return tau_b(np.arange(len(in_a)), in_b[np.argsort(in_a)])


def jaccard_at(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """``|A ∩ B| / |A ∪ B|`` of the two top-k sets; 1 when both are empty.

    >>> jaccard_at(["a", "b", "c"], ["b", "d"], 2)  # {a, b} and {b, d}
    0.3333333333333333
    """
    first, second = set(a[:k]), set(b[:k])
    union = first | second
    return len(first & second) / len(union) if union else 1.0


def kendall_tau(a: Sequence[str], b: Sequence[str]) -> float:
    """Kendall's tau between the orders two lists give the documents they share; NaN for fewer than two.

    >>> kendall_tau(["a", "b", "c", "x"], ["c", "b", "a"])
    -1.0
    """
    where = {doc: i for i, doc in enumerate(b)}
    ranks = [where[doc] for doc in a if doc in where]
    return tau_b(np.arange(len(ranks)), ranks)


@frozen
class QuerySimilarity:
    """One query of :func:`similarity`."""

    query_id: str
    rbo: RBO
    jaccard: float
    overlap: float
    tau: float
    shared: int  #: documents in both lists


@frozen
class SimilarityReport:
    """Two runs compared query by query (the queries both have, in id order), and the means."""

    names: tuple[str, str]
    p: float
    ties: str
    k: int
    queries: tuple[QuerySimilarity, ...]
    only_first: tuple[str, ...]
    only_second: tuple[str, ...]

    def mean(self) -> dict[str, float]:
        """The mean of each number over the shared queries (tau over the queries where it is defined)."""
        rows = self.queries
        taus = [q.tau for q in rows if not math.isnan(q.tau)]
        return {"rbo_ext": _mean(q.rbo.ext for q in rows), "rbo_min": _mean(q.rbo.min for q in rows),
                "rbo_max": _mean(q.rbo.max for q in rows), "rbo_res": _mean(q.rbo.res for q in rows),
                f"jaccard@{self.k}": _mean(q.jaccard for q in rows), f"overlap@{self.k}": _mean(q.overlap for q in rows),
                "tau": _mean(taus)}

    def columns(self) -> list[str]:
        return ["query", *self.mean(), "shared"]

    def rows(self) -> list[list[Any]]:
        """One row per query (the values of :meth:`columns`), then ``all`` with the means."""
        out: list[list[Any]] = [[q.query_id, q.rbo.ext, q.rbo.min, q.rbo.max, q.rbo.res, q.jaccard, q.overlap, q.tau,
                                 q.shared] for q in self.queries]
        return [*out, ["all", *self.mean().values(), sum(q.shared for q in self.queries)]]

    def to_dict(self) -> dict[str, Any]:
        def number(x: float) -> float | None:
            return None if math.isnan(x) else x
        keys = self.columns()[1:]
        return {"runs": list(self.names), "p": self.p, "ties": self.ties, "k": self.k,
                "only_in_first": list(self.only_first), "only_in_second": list(self.only_second),
                "queries": [{"query": row[0], **{key: number(v) if key != "shared" else v for key, v in zip(keys, row[1:])}}
                            for row in self.rows()[:-1]],
                "mean": {key: number(v) for key, v in self.mean().items()}}


def _mean(values: Any) -> float:
    found = list(values)
    return math.fsum(found) / len(found) if found else math.nan


def similarity(run_a: Any, run_b: Any, *, p: float = 0.9, ties: str = "a", k: int = 10,
               depth: int | None = None, names: tuple[str, str] = ("A", "B")) -> SimilarityReport:
    """Compare two runs (paths, dicts, :class:`RunColumns` or :class:`RankedLists`) query by query:
    RBO with persistence ``p`` and ``ties`` (see :func:`rbo`), Jaccard@k and overlap@k (the
    ``flaky`` command's: ``|A ∩ B| / max(|A|, |B|)``), and Kendall's tau on the shared documents.
    ``depth`` cuts both rankings first. Queries of only one run are listed apart, not compared.

    >>> report = similarity({"q1": {"a": 3, "b": 2, "c": 1}}, {"q1": {"a": 3, "c": 2, "b": 1}}, k=2)
    >>> q = report.queries[0]
    >>> round(q.rbo.ext, 4), q.jaccard, q.overlap, q.tau
    (0.955, 0.3333333333333333, 0.5, 0.3333333333333333)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise RetrievalEvalError(f"'k' must be an integer >= 1; got {k!r}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise RetrievalEvalError(f"'depth' must be an integer >= 1 or None; got {depth!r}")
    first = run_a if isinstance(run_a, RankedLists) else ranked_lists(run_a)
    second = run_b if isinstance(run_b, RankedLists) else ranked_lists(run_b)
    if ties not in TIES:  # before any query is compared
        raise RetrievalEvalError(f"'ties' must be one of {', '.join(TIES)}; got {ties!r}")
    in_second = set(second.query_ids)
    codes_a, codes_b = joint_codes(first, second)
    found = []
    for query in first.query_ids:
        if query not in in_second:
            continue
        rows_a, rows_b = first.rows(query), second.rows(query)
        a, b = codes_a[rows_a][:depth], codes_b[rows_b][:depth]
        ga, gb = first.tie_groups(query)[:depth], second.tie_groups(query)[:depth]
        tops = [[id_text(d) for d in lists.doc_ids[rows][:k].tolist()] for lists, rows in ((first, rows_a), (second, rows_b))]
        found.append(QuerySimilarity(query, _rbo_of(a, b, ga, gb, float(p), ties), _jaccard(a, b, k),
                                     top_k_overlap(tops, k), _tau(a, b), len(np.intersect1d(a, b, assume_unique=True))))
    if not found:
        raise RetrievalEvalError("the two runs share no query; expected rankings of the same queries")
    in_first = set(first.query_ids)
    return SimilarityReport(names, float(p), ties, k, tuple(found),
                            tuple(q for q in first.query_ids if q not in in_second),
                            tuple(q for q in second.query_ids if q not in in_first))
