"""Timing of the diversity measures against ir_measures + pyndeval (ndeval's C code), on the same files.

    python benchmarks/diversity.py [--workdir DIR] [--subtopics 5] [--repeat 3]

Input: the ``robust`` shape of ``benchmarks/generate.py`` (250 queries x 1000 documents, ~1250
judgments per query, tied scores), generated into ``--workdir`` (default
``$TMPDIR/retrieval_eval-benchmarks``, shared with the other benchmarks) if missing. Its qrels become diversity
qrels: each judgment is copied to 1..``--subtopics`` of the query's subtopics (seeded), keeping
its grade, so a query has ``--subtopics`` subtopics and a relevant document covers one or more.

Timed, best of ``--repeat``, each from reading the two files to the mean values:

* ``ours CLI``: ``retrieval-eval evaluate -m ...`` (process start included);
* ``ours API``: ``SetEvaluator.from_trec(..., subtopics=True)`` and one ``mean`` per measure;
* ``ir_measures+pyndeval``: ``ir_measures.read_trec_qrels`` / ``read_trec_run`` and the pyndeval
  provider's ``calc_aggregate`` (one ndeval invocation: every measure here has ndeval's defaults).

The means are printed side by side. The robust run has tied scores, which ndeval orders by doc id
ascending and we by trec_eval's order (descending), so the means differ a little; a third column
runs ndeval on a copy of the run whose scores are made distinct in our order, where the means must
agree (``DIFFERS`` marks any difference over 1e-9).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _bytecode import cache_bytecode

MEASURES = ["alpha_nDCG@20", "alpha_DCG@20", "ERR_IA@20", "nERR_IA@20", "P_IA@20", "StRecall@20", "NRBP", "nNRBP",
            "AP_IA"]


def diversity_qrels(qrels: Path, out: Path, subtopics: int, seed: int = 5) -> None:
    """Write ``out``: every line of ``qrels`` copied to 1..subtopics distinct subtopics (vectorised)."""
    rows = np.loadtxt(qrels, dtype=str, ndmin=2)
    rng = np.random.default_rng(seed)
    copies = rng.integers(1, subtopics + 1, size=len(rows))
    line = np.repeat(np.arange(len(rows)), copies)
    # distinct subtopics per judgment: a random permutation's first `copies` entries
    start = np.repeat(np.cumsum(copies) - copies, copies)
    position = np.arange(len(line)) - start
    permutation = np.argsort(rng.random((len(rows), subtopics)), axis=1)
    subtopic = permutation[line, position] + 1
    table = np.column_stack((rows[line, 0], subtopic.astype(str), rows[line, 2], rows[line, 3]))
    np.savetxt(out, table, fmt="%s")


def untie(run: Path, out: Path) -> None:
    """``run`` with each query's scores replaced by distinct ones in trec_eval's order (score
    descending, ties by doc id descending), so that ndeval ranks it exactly as we do."""
    rows = np.loadtxt(run, dtype=str, ndmin=2)
    scores = rows[:, 4].astype(float)
    # doc ids descending: sort ascending on the negated byte order, via the rank of each id
    doc_rank = np.unique(rows[:, 2], return_inverse=True)[1].ravel()
    order = np.lexsort((-doc_rank, -scores, rows[:, 0]))
    rows = rows[order]
    rows[:, 4] = (len(rows) - np.arange(len(rows))).astype(str)
    np.savetxt(out, rows, fmt="%s")


def best_of(repeat: int, work: object) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best, result


def ours_cli(qrels: Path, run: Path) -> dict[str, float]:
    command = [sys.executable, "-m", "retrieval_eval", "evaluate"]
    for m in MEASURES:
        command += ["-m", m]
    done = subprocess.run([*command, str(qrels), str(run)], capture_output=True, text=True, check=True)
    return {line.split()[0]: float(line.split()[2]) for line in done.stdout.splitlines()}


def ours_api(qrels: Path, run: Path) -> dict[str, float]:
    from retrieval_eval import SetEvaluator

    evaluator = SetEvaluator.from_trec(qrels, run, subtopics=True)
    return {m: evaluator.mean(m) for m in MEASURES}


def theirs(qrels: Path, run: Path) -> dict[str, float]:
    import ir_measures

    provider = ir_measures.providers.registry["pyndeval"]
    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    values = provider.calc_aggregate(measures, ir_measures.read_trec_qrels(str(qrels)),
                                     ir_measures.read_trec_run(str(run)))
    return {m: float(values[measure]) for m, measure in zip(MEASURES, measures)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "retrieval_eval-benchmarks")
    parser.add_argument("--subtopics", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cache_bytecode(args.workdir)  # the timed commands start as an installed package's do
    args.workdir.mkdir(parents=True, exist_ok=True)
    qrels, run = args.workdir / "robust.qrels", args.workdir / "robust.run"
    if not run.exists():
        subprocess.run([sys.executable, str(Path(__file__).with_name("generate.py")), "robust", str(args.workdir)], check=True)
    div = args.workdir / f"robust.div{args.subtopics}.qrels"
    if not div.exists():
        diversity_qrels(qrels, div, args.subtopics)
    untied = args.workdir / "robust.untied.run"
    if not untied.exists():
        untie(run, untied)
    n_lines = sum(1 for _ in div.open())
    print(f"robust shape: 250 queries x 1000 documents; {n_lines:,} diversity judgments, {args.subtopics} subtopics")
    timings = {}
    results = {}
    for name, work in (("ours CLI", lambda: ours_cli(div, run)), ("ours API", lambda: ours_api(div, run)),
                       ("ir_measures+pyndeval", lambda: theirs(div, run))):
        timings[name], results[name] = best_of(args.repeat, work)
    check = theirs(div, untied)
    base = timings["ir_measures+pyndeval"]
    print(f"{'tool':24s} {'seconds':>9s} {'speed-up':>9s}")
    for name, seconds in timings.items():
        print(f"{name:24s} {seconds:9.3f} {base / seconds:8.1f}x")
    print(f"\n{'measure':16s} {'ours':>10s} {'ndeval':>10s} {'ndeval, ties in our order':>26s}")
    for m in MEASURES:
        ours, nd = results["ours API"][m], results["ir_measures+pyndeval"][m]  # type: ignore[index]
        print(f"{m:16s} {ours:10.6f} {nd:10.6f} {check[m]:26.6f}" + ("" if abs(ours - check[m]) < 1e-9 else "  DIFFERS"))


if __name__ == "__main__":
    main()
