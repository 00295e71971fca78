"""pyflagr 1.0.21 as an oracle for FLAGR's methods: runs generated with ties, missing documents,
queries in only some runs and negative scores, fed to pyflagr with the ranks the Candidates hold."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from retrieval_eval.analysis.fusion import Candidates, candidates_from_runs
from retrieval_eval.io.dicts import columns_from_dicts
from retrieval_eval.model import RunColumns


def generated_runs(seed: int, n_runs: int = 3, n_queries: int = 4, max_depth: int = 9,
                   pool: int = 14, min_depth: int = 1) -> list[RunColumns]:
    """Small runs: scores rounded to one decimal (ties), some negative; each run skips some queries
    (never all) and retrieves a random subset of each query's pool."""
    rng = np.random.default_rng(seed)
    runs = []
    for r in range(n_runs):
        scores: dict[str, dict[str, float]] = {}
        for q in range(n_queries):
            if r > 0 and rng.random() < 0.2:  # the first run has every query, the others not always
                continue
            depth = int(rng.integers(min_depth, max_depth + 1))
            docs = rng.choice(pool, size=depth, replace=False)
            values = np.round(rng.normal(0.0, 1.5, size=depth), 1)
            scores[f"q{q}"] = {f"d{d}": float(v) for d, v in zip(docs, values)}
        runs.append(columns_from_dicts({}, scores)[1])
    return runs


def pyflagr_input(c: Candidates, path: Path) -> Path:
    """The candidates as pyflagr's CSV: query, voter, item, rank, score, dataset (no header)."""
    lines = []
    # run by run, so that FLAGR numbers its voters (and adds their votes up) in the runs' order
    for r, name in enumerate(c.run_names):
        for q, (start, end) in enumerate(zip(c.offsets[:-1], c.offsets[1:])):
            qid = c.query_ids[q].decode()
            ranks = c.ranks[r, start:end]
            for i in np.argsort(ranks, kind="stable"):
                if ranks[i] > 0:
                    doc = c.doc_ids[start + i].decode()
                    lines.append(f"{qid},{name},{doc},{int(ranks[i])},{float(c.scores[r, start + i])!r},x")
    path.write_text("\n".join(lines) + "\n")
    return path


def run_pyflagr(method: Any, c: Candidates, tmp: Path) -> dict[str, list[tuple[str, float]]]:
    """pyflagr's fused lists by query: (document, printed score) in pyflagr's order."""
    out, _ = method.aggregate(input_file=str(pyflagr_input(c, tmp / "input.csv")), out_dir=str(tmp))
    fused: dict[str, list[tuple[str, float]]] = {}
    for qid, doc, score in zip(out["Query"], out["ItemID"], out["Score"]):
        fused.setdefault(str(qid), []).append((str(doc), float(score)))
    return fused


def by_query(c: Candidates, scores: np.ndarray) -> dict[str, dict[str, float]]:
    return {c.query_ids[q].decode(): {c.doc_ids[i].decode(): float(scores[i]) for i in range(s, e)}
            for q, (s, e) in enumerate(zip(c.offsets[:-1].tolist(), c.offsets[1:].tolist()))}


def assert_matches(ours: np.ndarray, c: Candidates, theirs: dict[str, list[tuple[str, float]]], *,
                   sign: float = 1.0, tol: float = 1.5e-6) -> None:
    """Our fused scores equal pyflagr's printed ones (6 decimals), times ``sign`` for methods where
    FLAGR's lower score is better; pyflagr lists every candidate, in order of its score (so our order,
    by the same scores, is its order but for the order within ties, which FLAGR leaves to its hash
    table)."""
    mine = by_query(c, ours)
    assert set(theirs) == set(mine)
    for qid, ranked in theirs.items():
        assert sorted(d for d, _ in ranked) == sorted(mine[qid]), qid
        printed = [sign * s for _, s in ranked]
        assert not any(math.isnan(s) for s in printed), (qid, ranked)
        assert printed == sorted(printed, reverse=True), (qid, ranked)
        for doc, score in ranked:
            assert abs(mine[qid][doc] - sign * score) <= tol, (qid, doc, mine[qid][doc], sign * score)


def candidates(seed: int, **shape: int) -> Candidates:
    runs = generated_runs(seed, **shape)
    return candidates_from_runs(runs, names=tuple(f"r{i}" for i in range(len(runs))))
