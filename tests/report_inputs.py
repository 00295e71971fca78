"""Small generated inputs for the HTML report's tests and its size benchmark: qrels, runs, documents
and topics of a made-up collection, the same for a seed."""

from __future__ import annotations

import random
from pathlib import Path

WORDS = ["retrieval", "evaluation", "ranking", "query", "document", "judgment", "relevance", "precision",
         "recall", "measure", "index", "corpus", "score", "baseline", "system", "topic", "pool", "assessor",
         "grade", "cutoff"]


def write_inputs(folder: Path, *, queries: int = 12, runs: int = 3, depth: int = 20, pool: int = 30,
                 words: int = 40, seed: int = 7) -> dict[str, object]:
    """Write qrels, ``runs`` runs, docs.tsv and topics.tsv into ``folder``; returns their paths.

    Each query has a pool of ``pool`` documents, about half of them judged (grades 0-3); each run
    ranks ``depth`` of them with a score rounded to two decimals (so some scores tie), run ``i``
    leaning a little more to relevant documents than run ``i - 1``. The last query of every run
    but the first is left out, so that it is missing from those runs.
    """
    rng = random.Random(seed)
    qrels, docs, topics = [], [], []
    grades: dict[str, dict[str, int]] = {}
    for q in range(1, queries + 1):
        qid = f"q{q}"
        topics.append(f"{qid}\t{' '.join(rng.choices(WORDS, k=4))}")
        grades[qid] = {}
        for d in range(pool):
            doc = f"D{q}-{d:03d}"
            docs.append(f"{doc}\t{' '.join(rng.choices(WORDS, k=words))}")
            if rng.random() < 0.5:
                grades[qid][doc] = rng.choice((0, 0, 1, 2, 3))
                qrels.append(f"{qid} 0 {doc} {grades[qid][doc]}")
    paths: dict[str, object] = {"qrels": folder / "qrels.txt", "docs": folder / "docs.tsv",
                                "topics": folder / "topics.tsv", "runs": []}
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (folder / "docs.tsv").write_text("\n".join(docs) + "\n")
    (folder / "topics.tsv").write_text("\n".join(topics) + "\n")
    for r in range(runs):
        lines = []
        for q in range(1, queries + 1):
            qid = f"q{q}"
            if r and q == queries:
                continue
            scored = [(round(rng.random() * 10 + (1.5 * r + 1) * grades[qid].get(f"D{q}-{d:03d}", 0), 2),
                       f"D{q}-{d:03d}") for d in range(pool)]
            scored.sort(key=lambda item: (-item[0], item[1]))
            lines += [f"{qid} Q0 {doc} {rank} {score} system{r}" for rank, (score, doc) in
                      enumerate(scored[:depth], 1)]
        path = folder / f"run{r}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths["runs"].append(path)  # type: ignore[attr-defined]
    return paths


def write_hostile_inputs(folder: Path, *, doc: bytes, query: bytes, text: bytes, topic: bytes,
                         run_tag: bytes = b"r") -> list[Path | str]:
    """Write qrels, runs ``a`` and ``b``, docs.tsv and topics.tsv of one query ``query`` whose
    first document is ``doc`` (relevant, with the text ``text``) and second ``plain``, both runs
    retrieving both (``b`` with a lower score for ``doc``); returns the arguments of ``report``
    before ``-o``. The bytes are written as given: markup, quotes, control characters, bytes that
    are not UTF-8."""
    (folder / "qrels").write_bytes(query + b" 0 " + doc + b" 1\n" + query + b" 0 plain 0\n")
    run = query + b" Q0 " + doc + b" 1 2.0 " + run_tag + b"\n" + query + b" Q0 plain 2 1.0 " + run_tag + b"\n"
    (folder / "a").write_bytes(run)
    (folder / "b").write_bytes(run.replace(b"2.0", b"0.5"))
    (folder / "docs.tsv").write_bytes(doc + b"\t" + text + b"\n")
    (folder / "topics.tsv").write_bytes(query + b"\t" + topic + b"\n")
    return [folder / "qrels", folder / "a", folder / "b", "--docs", folder / "docs.tsv",
            "--topics", folder / "topics.tsv"]
