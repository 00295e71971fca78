"""Pools against trectools' pool maker (depth, RRF and RBP pooling), hand-computed orders, and the command."""

from __future__ import annotations

import itertools
import random
import warnings
from pathlib import Path

import pytest
from trectools import TrecPoolMaker, TrecRun

from retrieval_eval.analysis.pools import pool, pool_lines
from retrieval_eval.cli import main
from retrieval_eval.model import RetrievalEvalError


def write_runs(tmp_path: Path, seed: int, n_runs: int = 3) -> list[str]:
    """Runs of three numbered queries over 30 documents, distinct scores, ranks that follow the scores."""
    rng = random.Random(seed)
    paths = []
    for r in range(n_runs):
        lines = []
        for q in (1, 2, 3):
            docs = rng.sample([f"d{i:02d}" for i in range(30)], rng.randint(5, 20))
            lines += [f"{q} Q0 {d} {rank} {100 - rank}.5 r{r}" for rank, d in enumerate(docs, 1)]
        path = tmp_path / f"r{r}.run"
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return paths


def trectools_pool(runs: list[str], **options: object) -> dict[object, set[str]]:
    """trectools' pool, its pandas deprecation warnings silenced (they are the oracle's, not ours)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dict(TrecPoolMaker().make_pool([TrecRun(p) for p in runs], **options).pool)


def as_sets(entries: list) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for e in entries:
        found.setdefault(e.query_id, set()).add(e.doc_id)
    return found


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_depth_pool_is_trectools_pool_less_the_judged(tmp_path: Path, seed: int) -> None:
    runs = write_runs(tmp_path, seed)
    qrels = {"1": {"d00": 1, "d01": 0, "d02": -1}, "2": {"d03": 2}}  # d02: pooled, not judged yet
    judged = {(q, d) for q, docs in qrels.items() for d, grade in docs.items() if grade >= 0}
    for depth in (1, 5, 50):
        theirs = trectools_pool(runs, strategy="topX", topX=depth)
        expected = {str(q): {d for d in docs if (str(q), d) not in judged} for q, docs in theirs.items()}
        assert as_sets(pool(qrels, runs, depth=depth)) == {q: d for q, d in expected.items() if d}


@pytest.mark.parametrize(("method", "strategy"), [("rrf", "rrf"), ("rbp", "rbp")])
def test_fused_pools_match_trectools(tmp_path: Path, method: str, strategy: str) -> None:
    runs = write_runs(tmp_path, 7)
    theirs = trectools_pool(runs, strategy=strategy, topX=1000, rbp_p=0.8, rrf_den=60)
    ours = pool({"9": {"x": 1}}, runs, method=method, budget=1000)
    assert as_sets(ours) == {str(q): docs for q, docs in theirs.items()}
    # the order: each document's fused value, from the files' ranks, recomputed here
    ranks: dict[tuple[str, str], list[int]] = {}
    for path in runs:
        for line in Path(path).read_text().splitlines():
            q, _, d, rank, _, _ = line.split()
            ranks.setdefault((q, d), []).append(int(rank))
    def value(q: str, d: str) -> float:
        return sum(1 / (60 + r) if method == "rrf" else 0.2 * 0.8 ** (r - 1) for r in ranks[(q, d)])
    for e in ours:
        assert e.score == pytest.approx(value(e.query_id, e.doc_id))
    for first, second in itertools.pairwise(ours):
        if first.query_id == second.query_id:
            assert second.priority == first.priority + 1
            assert (-first.score, first.doc_id) < (-second.score, second.doc_id)


def test_hand_computed_depth_order_and_budget() -> None:
    runs = [{"q": {"a": 5.0, "b": 4.0, "c": 3.0}}, {"q": {"c": 5.0, "b": 4.0, "e": 3.0}}, {"q": {"e": 1.0}}]
    # best ranks: a 1, c 1, b 2, e 1 (third run); runs within depth 3: a 1, c 2, b 2, e 2
    assert [e.doc_id for e in pool({}, runs, depth=3)] == ["c", "e", "a", "b"]
    assert [e.doc_id for e in pool({"q": {"c": 0}}, runs, depth=3, budget=2)] == ["e", "a"]
    assert pool_lines(pool({}, runs, depth=1, budget=1)) == "q 1 a -1\n"  # a, c, e tie: by doc_id
    with pytest.raises(RetrievalEvalError, match="needs 'budget'"):
        pool({}, runs, method="rbp")


def test_a_document_judged_twice_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 a 0\n")
    with pytest.raises(RetrievalEvalError, match=r"qrels:2: duplicate judgment"):
        pool(str(tmp_path / "qrels"), [{"q": {"a": 1.0}}], depth=1)


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = write_runs(tmp_path, 4, n_runs=2)
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d05 1\n2 0 d06 0\n")
    out = tmp_path / "pool.qrels"
    assert main(["pool", str(qrels), *runs, "--method", "rbp", "--budget", "4", "-o", str(out)]) == 0
    assert "wrote 12 documents of 3 queries" in capsys.readouterr().err
    lines = out.read_text().splitlines()
    assert [line.split()[1] for line in lines] == ["1", "2", "3", "4"] * 3 and all(line.endswith(" -1") for line in lines)
    expected = pool_lines(pool(str(qrels), runs, method="rbp", budget=4))
    assert out.read_text() == expected
    # the pool is qrels: evaluate reads it, with each document "pooled, not judged"
    assert main(["evaluate", "-m", "num_rel", str(out), runs[0]]) == 0
    capsys.readouterr()
    before = Path(runs[0]).read_text()
    assert main(["pool", str(qrels), *runs, "--depth", "3", "-o", runs[0]]) == 2
    assert "is also an input" in capsys.readouterr().err and Path(runs[0]).read_text() == before
    assert main(["pool", str(qrels), *runs]) == 2
    assert "give --depth K" in capsys.readouterr().err
    Path(runs[1]).write_text("1 Q0 d01 1 x r\n")
    assert main(["pool", str(qrels), runs[1], "--depth", "3"]) == 2
    assert "r1.run:1:" in capsys.readouterr().err
