"""Slow, obviously-correct oracles for one query, written from the trec_eval semantics document.

Plain Python loops over one ranking, no numpy, no shared code with the package. Each function takes
the ranking (doc ids, best first), the query's judgments ``{doc_id: value}`` and the relevance
threshold ``rel``. ``relevant`` means judged with a value >= rel (negative values never count).
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

#: trec_eval labels of the rank-based measures the oracles here and pytrec_eval both cover; all in [0, 1].
RANK_MEASURES = (
    "map", "Rprec", "bpref", "recip_rank",
    "P_5", "P_10", "P_20", "P_100",
    "recall_5", "recall_10", "recall_100",
    "ndcg", "ndcg_cut_5", "ndcg_cut_10", "ndcg_cut_20",
    "success_1", "success_5", "success_10",
)


def rank(scores: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, ties by doc id descending in byte order."""
    return [doc for doc, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0].encode("utf-8")), reverse=True)]


def _is_rel(judged: dict[str, int], doc: str, rel: int) -> bool:
    value = judged.get(doc)
    return value is not None and value >= 0 and value >= rel


def num_rel(judged: dict[str, int], rel: int) -> int:
    """R: judgments with a value >= rel (and >= 0), retrieved or not."""
    return sum(1 for v in judged.values() if v >= 0 and v >= rel)


def num_nonrel(judged: dict[str, int], rel: int) -> int:
    """NR: judgments with 0 <= value < rel, retrieved or not."""
    return sum(1 for v in judged.values() if 0 <= v < rel)


def num_rel_ret(ranking: list[str], judged: dict[str, int], rel: int) -> int:
    return sum(1 for d in ranking if _is_rel(judged, d, rel))


def relevant_at(ranking: list[str], judged: dict[str, int], rel: int, k: int) -> int:
    count = 0
    for i, doc in enumerate(ranking, start=1):
        if i > k:
            break
        if _is_rel(judged, doc, rel):
            count += 1
    return count


def average_precision(ranking: list[str], judged: dict[str, int], rel: int = 1) -> float:
    """(1/R) * sum over relevant retrieved docs of (relevant so far) / rank."""
    R = num_rel(judged, rel)
    if R == 0:
        return 0.0
    total = 0.0
    hits = 0
    for i, doc in enumerate(ranking, start=1):
        if _is_rel(judged, doc, rel):
            hits += 1
            total += hits / i
    return total / R


def precision(ranking: list[str], judged: dict[str, int], k: int, rel: int = 1) -> float:
    """rel@k / k: missing ranks count as non-relevant."""
    return relevant_at(ranking, judged, rel, k) / k


def recall(ranking: list[str], judged: dict[str, int], k: int, rel: int = 1) -> float:
    R = num_rel(judged, rel)
    return relevant_at(ranking, judged, rel, k) / R if R else 0.0


def success(ranking: list[str], judged: dict[str, int], k: int, rel: int = 1) -> float:
    return 1.0 if relevant_at(ranking, judged, rel, k) > 0 else 0.0


def reciprocal_rank(ranking: list[str], judged: dict[str, int], rel: int = 1) -> float:
    for i, doc in enumerate(ranking, start=1):
        if _is_rel(judged, doc, rel):
            return 1.0 / i
    return 0.0


def r_precision(ranking: list[str], judged: dict[str, int], rel: int = 1) -> float:
    """rel@R / R (trec_eval: m = min(n, R); 0 if m = 0)."""
    R = num_rel(judged, rel)
    m = min(len(ranking), R)
    if m == 0:
        return 0.0
    return relevant_at(ranking, judged, rel, m) / R


def bpref(ranking: list[str], judged: dict[str, int], rel: int = 1) -> float:
    """trec_eval's post-2005 bpref, transcribed from the semantics document."""
    R = num_rel(judged, rel)
    NR = num_nonrel(judged, rel)
    if R == 0:
        return 0.0
    nr = 0
    total = 0.0
    for doc in ranking:
        value = judged.get(doc)
        if value is None or value < 0:  # NONPOOL / UNJUDGED: skipped
            continue
        if value >= rel:
            total += 1.0 if nr == 0 else 1.0 - min(nr, R) / min(NR, R)
        else:
            nr += 1
    return total / R


def dcg(gains: list[float], k: int | None = None) -> float:
    total = 0.0
    for i, g in enumerate(gains, start=1):
        if k is not None and i > k:
            break
        if g != 0:
            total += g / math.log2(i + 1)
    return total


def ndcg(ranking: list[str], judged: dict[str, int], k: int | None = None) -> float:
    """Linear gain (the judged value, 0 for unjudged/negative), log2(rank + 1) discount.

    The ideal ranking sorts every positive judgment by value (retrieved or not). ``rel`` plays no
    part (trec_eval's ndcg family ignores -l).
    """
    gains = [float(max(judged.get(doc, 0), 0)) for doc in ranking]
    ideal = sorted((float(v) for v in judged.values() if v > 0), reverse=True)
    idcg = dcg(ideal, k)
    return dcg(gains, k) / idcg if idcg > 0 else 0.0


def lround(x: float) -> int:
    """C's lround: the exact double rounded half away from zero."""
    return int(Decimal(x).to_integral_value(rounding=ROUND_HALF_UP))


def iprec_cutoff(p: float, R: int, rule: str = "v10") -> int:
    """The rank of the relevant document where recall level p starts (trec_eval 10 / 9)."""
    if rule == "v10":
        return lround(p * R)
    if rule == "v9":
        return int(p * R + 0.9)  # C's (long) truncation of a non-negative double
    raise ValueError(rule)


def interpolated_precision(
    ranking: list[str], judged: dict[str, int], p: float, rel: int = 1, rule: str = "v10"
) -> float:
    """Best precision m / r_m over relevant retrieved docs m >= c, c the cut-off of ``rule``.

    c > num_rel_ret gives 0; c = 0 takes the best precision anywhere. An empty ranking gives NaN at
    c = 0, as trec_eval computes it (0/0); the package documents 0.0 there.
    """
    c = iprec_cutoff(p, num_rel(judged, rel), rule)
    precisions = []
    hits = 0
    for i, doc in enumerate(ranking, start=1):
        if _is_rel(judged, doc, rel):
            hits += 1
            precisions.append(hits / i)
    if c > hits:
        return 0.0
    if c == 0 and not ranking:
        return math.nan
    return max(precisions[max(c, 1) - 1:], default=0.0)


def ideal_dcg(judged: dict[str, int], k: int | None = None) -> float:
    """DCG of the ideal ranking: every positive judgment, largest first."""
    return dcg(sorted((float(v) for v in judged.values() if v > 0), reverse=True), k)


def ranking_dcg(ranking: list[str], judged: dict[str, int], k: int | None = None) -> float:
    """DCG of the ranking with linear gain (the judged value; 0 when unjudged or negative)."""
    return dcg([float(max(judged.get(doc, 0), 0)) for doc in ranking], k)


def yaap(ranking: list[str], judged: dict[str, int], rel: int = 1) -> float:
    """trec_eval's yaap: log((1 + S) / (1 + R - S)) with S = sum over relevant retrieved of m / r_m."""
    hits, total = 0, 0.0
    for position, doc in enumerate(ranking, start=1):
        if _is_rel(judged, doc, rel):
            hits += 1
            total += hits / position
    return math.log((1 + total) / (1 + num_rel(judged, rel) - total))
