"""Random evaluation cases: hypothesis strategies and a seeded generator of whole datasets.

A case is a pair of pytrec_eval-style dicts, ``qrels = {qid: {doc_id: relevance}}`` and
``run = {qid: {doc_id: score}}``, built to hit what trec_eval's semantics make delicate:

* graded relevance 0..3 and negative judgments (-1, "pooled but unjudged");
* retrieved documents the qrels never mention (NONPOOL);
* scores drawn from a tiny set, so ties are frequent and the doc_id tie-break (descending byte
  order: ``'d2'`` before ``'d10'``; in the seeded datasets also ``'a'`` before ``'D'``) decides
  the ranking;
* qrels queries the run lacks, run queries the qrels lack, empty rankings, and queries with R = 0.

Every qrels query has at least one judgment >= 0: trec_eval's behaviour on a query whose judgments
are all negative is undefined (semantics doc, section 1), so the differential tests cannot use one.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]

#: Doc ids of mixed lengths, so that ties between e.g. 'd2' and 'd10' exercise byte order.
DOC_IDS: tuple[str, ...] = tuple(f"d{i}" for i in range(31))
#: Scores from a small set: ties are the rule, not the exception.
TIED_SCORES: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0)
#: Relevance values, with graded, non-relevant and negative ("unjudged") judgments.
RELEVANCE: tuple[int, ...] = (-1, 0, 1, 2, 3)
QUERY_IDS: tuple[str, ...] = ("q1", "q2", "q3", "q10", "q11", "q7")

doc_ids = st.sampled_from(DOC_IDS)
relevance = st.sampled_from(RELEVANCE)
tied_scores = st.sampled_from(TIED_SCORES)
#: Most queries have relevance levels to draw from; one in six has R = 0 by construction.
some_relevant = st.sampled_from((True, True, True, True, True, False))


@st.composite
def judgments(draw: st.DrawFn, *, max_size: int = 12, allow_relevant: bool = True) -> dict[str, int]:
    """One query's qrels: at least one judgment >= 0; R = 0 when ``allow_relevant`` is False."""
    values = relevance if allow_relevant else st.sampled_from((0, -1))
    size = draw(st.integers(1, max_size))
    docs = draw(st.lists(doc_ids, min_size=size, max_size=size, unique=True))
    judged = {doc: draw(values) for doc in docs}
    if all(v < 0 for v in judged.values()):  # trec_eval is undefined on all-negative qrels
        judged[docs[0]] = draw(st.integers(0, 3) if allow_relevant else st.just(0))
    return judged


@st.composite
def ranking(
    draw: st.DrawFn, *, judged: dict[str, int] | None = None, min_size: int = 0, max_size: int = 20,
    distinct_scores: bool = False,
) -> dict[str, float]:
    """One query's run: documents drawn from the judged ones and from the whole pool (may be empty)."""
    pool = sorted(set(DOC_IDS) | set(judged or {}))
    favoured = sorted(judged or {}) or pool
    size = draw(st.integers(min_size, min(max_size, len(pool))))
    docs = draw(st.lists(st.one_of(st.sampled_from(favoured), st.sampled_from(pool)),
                         min_size=size, max_size=size, unique=True))
    if distinct_scores:
        # Distinct scores with no relation to the ids: the order is set by score alone.
        order = draw(st.permutations(range(len(docs))))
        return {doc: float(s) / 4.0 - 1.0 for doc, s in zip(docs, order)}
    return {doc: draw(tied_scores) for doc in docs}


@st.composite
def evaluation_cases(
    draw: st.DrawFn, *, max_queries: int = 4, distinct_scores: bool = False, max_ranking: int = 20
) -> tuple[Qrels, Run]:
    """``(qrels, run)`` over a few queries, with queries present on one side only.

    Each query is independently: in both (most of the time), judged only (missing from the run),
    judged with an empty ranking, or only in the run. Some judged queries have R = 0.
    """
    qids = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=max_queries, unique=True))
    qrels: Qrels = {}
    run: Run = {}
    for qid in qids:
        kind = draw(st.sampled_from(("both", "both", "both", "both", "qrels_only", "empty_run", "run_only")))
        if kind != "run_only":
            qrels[qid] = draw(judgments(allow_relevant=draw(some_relevant)))
        if kind == "empty_run":
            run[qid] = {}
        elif kind != "qrels_only":
            run[qid] = draw(ranking(judged=qrels.get(qid), min_size=1, max_size=max_ranking,
                                    distinct_scores=distinct_scores))
    if not qrels:  # always evaluate something
        qrels[qids[0] + "x"] = draw(judgments())
    return qrels, run


@st.composite
def single_query_cases(
    draw: st.DrawFn, *, distinct_scores: bool = False, max_ranking: int = 25
) -> tuple[str, dict[str, int], dict[str, float]]:
    """``(qid, judgments, scores)`` of one judged query; the ranking may be empty, R may be 0."""
    judged = draw(judgments(allow_relevant=draw(some_relevant)))
    scores = draw(ranking(judged=judged, max_size=max_ranking, distinct_scores=distinct_scores))
    return "q1", judged, scores


# --------------------------------------------------------------------------------------------------
# Seeded datasets (for deterministic differential tests)


def random_dataset(
    seed: int,
    n_queries: int = 50,
    *,
    max_depth: int = 40,
    n_docs: int = 60,
    levels: tuple[int, ...] = (0, 1, 2, 3),
    level_weights: tuple[float, ...] | None = None,
    negative_rate: float = 0.1,
    score_values: tuple[float, ...] | None = TIED_SCORES,
    missing_rate: float = 0.1,
    run_only_rate: float = 0.05,
    empty_run_rate: float = 0.05,
    no_relevant_rate: float = 0.1,
    id_prefixes: tuple[str, ...] = ("d",),
) -> tuple[Qrels, Run]:
    """A reproducible random ``(qrels, run)``.

    Parameters
    ----------
    seed : int
        numpy seed; the same seed always gives the same dicts.
    n_queries : int
        Judged queries (run-only queries come on top).
    max_depth : int
        Largest ranking length; each ranking has 1..max_depth documents.
    n_docs : int
        Size of each query's document pool (ids ``<prefix><i>``, i < n_docs, of mixed lengths).
    levels, level_weights
        Relevance values of the judgments and their probabilities.
    negative_rate : float
        Share of judgments replaced by -1 ("pooled but unjudged").
    score_values : tuple of float or None
        Scores are drawn from this set (ties); None draws distinct-ish continuous scores, rounded
        to 1 decimal so that some ties remain.
    missing_rate, run_only_rate, empty_run_rate, no_relevant_rate : float
        Shares of judged queries missing from the run, of extra run-only queries, of judged
        queries with an empty ranking, and of judged queries with R = 0.
    id_prefixes : tuple of str
        Doc id prefixes; several (e.g. ``('d', 'D')``) make ties cross case boundaries in byte order.
    """
    rng = np.random.default_rng(seed)
    qrels: Qrels = {}
    run: Run = {}
    pool = [f"{p}{i}" for p in id_prefixes for i in range(n_docs)]
    weights = None if level_weights is None else np.asarray(level_weights) / np.sum(level_weights)
    for q in range(n_queries):
        qid = f"{seed}-{q}"
        n_judged = int(rng.integers(1, min(len(pool), 2 * max_depth) + 1))
        judged_docs = rng.choice(pool, size=n_judged, replace=False)
        if rng.random() < no_relevant_rate:
            values = np.zeros(n_judged, dtype=int)
        else:
            values = rng.choice(levels, size=n_judged, p=weights)
        values = np.where(rng.random(n_judged) < negative_rate, -1, values)
        values[0] = max(int(values[0]), 0)  # at least one judgment >= 0 (see the module docstring)
        qrels[qid] = {str(d): int(v) for d, v in zip(judged_docs, values)}

        u = rng.random()
        if u < missing_rate:
            continue
        if u < missing_rate + empty_run_rate:
            run[qid] = {}
            continue
        depth = int(rng.integers(1, min(max_depth, len(pool)) + 1))
        # Half judged documents, half anything from the pool: plenty of hits and of NONPOOL docs.
        candidates = list(dict.fromkeys([*rng.permutation(judged_docs)[: depth // 2 + 1], *rng.permutation(pool)]))
        retrieved = candidates[:depth]
        if score_values is None:
            scores = np.round(rng.normal(size=len(retrieved)) * 3, 1)
        else:
            scores = rng.choice(score_values, size=len(retrieved))
        run[qid] = {str(d): float(s) for d, s in zip(retrieved, scores)}
    for extra in range(max(1, round(run_only_rate * n_queries))):
        docs = rng.choice(pool, size=min(5, len(pool)), replace=False)
        run[f"{seed}-runonly-{extra}"] = {str(d): 1.0 for d in docs}
    return qrels, run
