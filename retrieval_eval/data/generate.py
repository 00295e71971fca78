"""Regenerate the bundled sample: ``python -m retrieval_eval.data.generate``.

The sample is synthetic and deterministic (seeded): 12 judged queries with graded judgments 0-3,
some negative ("pooled, unjudged") judgments, a run of 50 documents per query whose scores are
rounded so that ties occur, one judged query the run lacks and one run query without judgments.
"""

from __future__ import annotations

import random
from pathlib import Path

from ..io.trec import write_qrels, write_run


def make_sample(seed: int = 20261121) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(1, 14):
        qid = f"q{q}"
        pool = [f"doc{q:02d}-{i:03d}" for i in range(120)]
        judged = rng.sample(pool, 40)
        qrels[qid] = {doc: rng.choice([0, 0, 0, 1, 1, 2, 3, -1]) for doc in judged}
        # Relevant documents tend to score higher; rounding to 0.05 makes ties common.
        retrieved = rng.sample(pool, 50)
        run[qid] = {
            doc: round((qrels[qid].get(doc, 0) * 0.6 + rng.random() * 2.0) / 0.05) * 0.05 for doc in retrieved
        }
    del run["q13"]  # a judged query without results
    run["q99"] = {"doc99-000": 1.0, "doc99-001": 0.5}  # a run query without judgments
    return qrels, run


def make_dense_sample(seed: int = 20261129) -> dict[str, dict[str, float]]:
    """A second run over the sample's queries, as a dense retriever might give it (``sample_dense.run``):
    cosine-like scores in [0, 1), without ties, finding some relevant documents the first run misses."""
    qrels, _ = make_sample()
    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    for q in range(1, 13):
        qid = f"q{q}"
        pool = [f"doc{q:02d}-{i:03d}" for i in range(120)]
        retrieved = rng.sample(pool, 50)
        run[qid] = {doc: round(0.3 + 0.12 * max(qrels[qid].get(doc, 0), 0) + 0.35 * rng.random(), 6)
                    for doc in retrieved}
    return run


def main() -> None:
    here = Path(__file__).parent
    qrels, run = make_sample()
    write_qrels(here / "sample.qrels", qrels)
    write_run(here / "sample.run", {q: {d: round(s, 2) for d, s in docs.items()} for q, docs in run.items()},
              run_id="sample")
    write_run(here / "sample_dense.run", make_dense_sample(), run_id="dense")


if __name__ == "__main__":
    main()
