"""Every fusion method ranx has, against ``ranx.fuse`` on generated runs: ties, documents missing
from some runs, queries missing from some runs, negative scores.

ranx ranks tied documents in the order its unstable sort leaves them, so the rank-based methods are
given ranx runs whose scores are our ranks (``-rank``, no ties): what is compared is the method, on
the same ranks. ranx also needs every run to hold every query: a run's missing query is given to it
as an empty ranking, which is what a missing query means here.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from retrieval_eval.analysis.fusion import candidates_from_runs, fuse
from retrieval_eval.io.dicts import columns_from_dicts
from retrieval_eval.model import QrelsColumns, RunColumns

ranx = pytest.importorskip("ranx")

Dicts = list[dict[str, dict[str, float]]]


def _generated(seed: int, ties: bool = True, every_query: bool = False) -> Dicts:
    """2-4 runs over 6 queries; each run skips some queries (unless ``every_query``), retrieves 1-9
    of 12 documents."""
    rng = np.random.default_rng(seed)
    docs = ["d1", "d10", "d2", "doc3", "e", "d11", "x7", "d20", "a", "zz", "d3", "b0"]
    runs: Dicts = []
    for _ in range(int(rng.integers(2, 5))):
        run: dict[str, dict[str, float]] = {}
        for q in ("q1", "q2", "q3", "q4", "q10", "r"):
            if rng.random() < 0.2 and not every_query:
                continue
            chosen = rng.choice(docs, size=int(rng.integers(1, 10)), replace=False)
            values = rng.integers(-3, 4, size=len(chosen)) * 0.5 if ties else rng.normal(0, 2, size=len(chosen))
            run[q] = {str(d): float(s) for d, s in zip(chosen, values)}
        runs.append(run or {"q1": {"d1": 1.0}})
    return runs


def _columns(runs: Dicts) -> list[RunColumns]:
    return [columns_from_dicts({}, run)[1] for run in runs]


def _ranx_runs(runs: Dicts) -> list[Any]:
    queries = sorted({q for run in runs for q in run})
    return [ranx.Run({q: dict(run.get(q, {})) for q in queries}) for run in runs]


def _by_rank(runs: Dicts) -> Dicts:
    """The runs with each score replaced by minus the document's rank in our order (no ties)."""
    c = candidates_from_runs(_columns(runs))
    query = c.row_query()
    out: Dicts = [{} for _ in runs]
    for r in range(len(runs)):
        for i in np.flatnonzero(c.ranks[r] > 0):
            out[r].setdefault(c.query_ids[query[i]].decode(), {})[c.doc_ids[i].decode()] = -float(c.ranks[r, i])
    return out


def _check(ours: RunColumns, theirs: Any) -> None:
    """Same documents, same scores, and our order is trec_eval's order of ranx's scores."""
    expected = {q: docs for q, docs in theirs.to_dict().items() if docs}
    got: dict[str, dict[str, float]] = {}
    order: dict[str, list[str]] = {}
    for q, d, s in zip(ours.query_ids.tolist(), ours.doc_ids.tolist(), ours.scores.tolist()):
        got.setdefault(q.decode(), {})[d.decode()] = s
        order.setdefault(q.decode(), []).append(d.decode())
    assert got.keys() == expected.keys()
    for q, docs in expected.items():
        assert got[q] == pytest.approx(docs, rel=1e-12, abs=1e-12), q
        by_id = sorted(docs, key=lambda d: d.encode(), reverse=True)
        assert order[q] == sorted(by_id, key=lambda d: -docs[d]), q


def _ranx_fuse(runs: Dicts, norm: str | None, method: str, params: dict[str, Any] | None = None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings
        return ranx.fuse(_ranx_runs(runs), norm=norm, method=method, params=params or {})


SCORE_METHODS = ["sum", "mnz", "anz", "max", "min", "med"]
#: Without a normalisation (``norm=None``) ranx fuses its input runs' own dictionaries, and its
#: parallel loops then lose or garble documents from one call to the next: "none" is checked by hand
#: in test_fusion.py instead.
NORMS = ["min-max", "max", "sum", "zmuv"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("norm", NORMS)
def test_score_combinations_match_ranx(seed: int, norm: str) -> None:
    # ranx's zmuv empties another query's ranking of a run that lacks a query (its mean of no
    # scores is NaN): there, every run has every query
    runs = _generated(seed, every_query=norm == "zmuv")
    weights = [0.5, 1.5, 2.0, 0.25][: len(runs)]
    for method in SCORE_METHODS:
        quirk = {"max": {"missing": -1e9}, "min": {"missing": 1e9}}.get(method, {})  # ranx's fill values
        _check(fuse(_columns(runs), method, norm=norm, **quirk), _ranx_fuse(runs, norm, method))
    _check(fuse(_columns(runs), "gmnz", norm=norm, gamma=1.5), _ranx_fuse(runs, norm, "gmnz", {"gamma": 1.5}))
    for method in ("wsum", "wmnz", "mixed"):
        _check(fuse(_columns(runs), method, norm=norm, weights=weights),
               _ranx_fuse(runs, norm, method, {"weights": weights}))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("norm", ["rank", "borda", "min-max-inverted"])
def test_rank_based_normalisations_match_ranx(seed: int, norm: str) -> None:
    runs = _by_rank(_generated(seed))  # ranx's rank and borda norms read its (tie-free here) order
    for method in ("sum", "mnz", "anz"):
        _check(fuse(_columns(runs), method, norm=norm), _ranx_fuse(runs, norm, method))


@pytest.mark.parametrize("seed", range(8))
def test_rank_combinations_match_ranx(seed: int) -> None:
    raw = _generated(seed)
    runs = _by_rank(raw)
    weights = [0.5, 1.5, 2.0, 0.25][: len(runs)]
    cases: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("rrf", {"k": 60}, {"k": 60}), ("rrf", {"k": 1}, {"k": 1}), ("isr", {}, {}), ("log_isr", {}, {}),
        ("logn_isr", {"sigma": 0.3}, {"sigma": 0.3}), ("rbc", {"phi": 0.7}, {"phi": 0.7}),
        ("bordafuse", {}, {}), ("w_bordafuse", {"weights": weights}, {"weights": weights}),
    ]
    for method, ours, theirs in cases:
        # our ranks come from the raw runs (ties by doc_id descending); ranx's from -rank
        _check(fuse(_columns(raw), method, **ours), _ranx_fuse(runs, None, method, theirs))


def _transitive(runs: Dicts, weights: list[float]) -> bool:
    """Whether ranx's Condorcet comparator is a strict total order on every query's documents: for
    each pair exactly one goes first, and no cycle. Only then is ranx's sort free of the order its
    input set happened to have. Its comparator puts x first when the runs (weights) that rank x above
    y weigh at least as much as all the others (those ranking y above x, or neither)."""
    c = candidates_from_runs(_columns(runs))
    for a, b in zip(c.offsets[:-1].tolist(), c.offsets[1:].tolist()):
        ranks = np.where(c.ranks[:, a:b] > 0, c.ranks[:, a:b], 10**6)
        m = b - a
        first = np.zeros((m, m), dtype=bool)
        for x in range(m):
            for y in range(m):
                if x != y:
                    ahead = sum(w for w, r in zip(weights, ranks) if r[x] < r[y])
                    first[x, y] = ahead >= sum(weights) - ahead
        off_diagonal = ~np.eye(m, dtype=bool)
        if not bool((first ^ first.T)[off_diagonal].all()):
            return False
        if sorted(first.sum(axis=1).tolist()) != list(range(m)):  # a cycle leaves two equal counts
            return False
    return True


def _agreeing(seed: int) -> Dicts:
    """3 runs that mostly agree (one shared order per query, a few neighbours swapped, sometimes the
    last document dropped, sometimes two scores tied): Condorcet's majorities then often order all."""
    rng = np.random.default_rng(seed)
    docs = ["d1", "d10", "d2", "doc3", "e", "d11", "x7", "d20"]
    base = {q: list(rng.permutation(docs)) for q in ("q1", "q2", "q10")}
    runs: Dicts = []
    for _ in range(3):
        run: dict[str, dict[str, float]] = {}
        for q, order in base.items():
            order = list(order)
            for _ in range(int(rng.integers(0, 3))):
                i = int(rng.integers(0, len(order) - 1))
                order[i], order[i + 1] = order[i + 1], order[i]
            if rng.random() < 0.3:
                order = order[:-1]
            scores = np.arange(len(order), 0, -1, dtype=np.float64)
            if rng.random() < 0.3:
                scores[1] = scores[0]  # a tie, broken by doc_id descending
            run[q] = {str(d): float(v) for d, v in zip(order, scores)}
        runs.append(run)
    return runs


def test_condorcet_matches_ranx_where_the_majority_orders_all() -> None:
    compared = 0
    for seed in range(30):
        raw = _agreeing(seed)
        weights = [0.5, 1.5, 2.25]
        runs = _by_rank(raw)
        if _transitive(raw, [1.0] * len(raw)):
            _check(fuse(_columns(raw), "condorcet"), _ranx_fuse(runs, None, "condorcet"))
            compared += 1
        if _transitive(raw, weights):
            _check(fuse(_columns(raw), "w_condorcet", weights=weights),
                   _ranx_fuse(runs, None, "w_condorcet", {"weights": weights}))
            compared += 1
    assert compared >= 10  # the check compares something


def _qrels(seed: int, queries: list[str]) -> dict[str, dict[str, int]]:
    rng = np.random.default_rng(seed + 1000)
    docs = ["d1", "d10", "d2", "doc3", "e", "d11", "x7", "d20", "a", "zz", "d3", "b0"]
    return {q: {d: int(g) for d, g in zip(docs, rng.integers(0, 3, size=len(docs)))} for q in queries}


@pytest.mark.parametrize("seed", range(6))
def test_trained_methods_match_ranx(seed: int) -> None:
    from ranx import fusion as ranx_fusion

    runs = _generated(seed, ties=False, every_query=True)  # ranx cannot train on an empty ranking
    queries = sorted({q for run in runs for q in run})
    train = queries[: max(1, len(queries) // 2)]
    judged = _qrels(seed, queries)
    qrels: QrelsColumns = columns_from_dicts(judged, {})[0]
    ranx_qrels = ranx.Qrels.from_dict({q: judged[q] for q in train})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        normed = [ranx.normalization.norm_switch("min-max")(r) for r in _ranx_runs(runs)]
        train_runs = [ranx.Run.from_dict({q: run.to_dict().get(q, {}) for q in train}) for run in normed]
        probs = ranx_fusion.posfuse_train(ranx_qrels, train_runs)
        segments = ranx_fusion.probfuse_train(ranx_qrels, train_runs, 4)
        seg = ranx_fusion.segfuse_train(ranx_qrels, train_runs)
        odds = ranx_fusion.bayesfuse_train(ranx_qrels, train_runs)
    common = {"qrels": qrels, "train_queries": train}
    _check(fuse(_columns(runs), "posfuse", **common), _ranx_fuse(runs, "min-max", "posfuse", {"probs": probs}))
    _check(fuse(_columns(runs), "slidefuse", w=1, **common),
           _ranx_fuse(runs, "min-max", "slidefuse", {"probs": probs, "w": 1}))
    _check(fuse(_columns(runs), "probfuse", n_segments=4, **common),
           _ranx_fuse(runs, "min-max", "probfuse", {"probs": segments}))
    _check(fuse(_columns(runs), "segfuse", **common), _ranx_fuse(runs, "min-max", "segfuse", {"probs": seg}))
    _check(fuse(_columns(runs), "bayesfuse", **common),
           _ranx_fuse(runs, "min-max", "bayesfuse", {"log_odds": odds}))
