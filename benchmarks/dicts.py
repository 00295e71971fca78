"""Evaluating in-memory dicts, and one RetrievalEvaluator per query: retrieval_eval beside its peers.

    python benchmarks/dicts.py [--queries 2000] [--docs 100] [--repeat 7] [--loop-docs 100,10000]
                               [--tools ours,pytrec_eval,ir_measures,ranx] [--skip-loop]

Part 1, dicts. pytrec_eval-style dicts (seeded: the same on every run) with ``--queries`` queries of
``--docs`` ranked documents, scores with three decimals (so some ties) and about 30 judged documents
per query, a third of them not retrieved. In ONE process, each repetition times, tools in turn:

* ``ours``        ``SetEvaluator.from_dict(qrels, run)`` then the means of AP, nDCG@10 and P@10;
* ``pytrec_eval`` ``RelevanceEvaluator(qrels, {'map', 'ndcg_cut_10', 'P_10'})`` + ``evaluate(run)``
  and the three means;
* ``ir_measures`` ``calc_aggregate([AP, nDCG@10, P@10], qrels, run)``;
* ``ranx``        ``Qrels(qrels)``, ``Run(run)`` and ``evaluate`` of the three (warm: one untimed call
  first compiles its numba code).

Each tool is timed from the dicts to the three means, and the means are compared (1e-9). Beside the
wall time it prints, where the platform reports them, the user and system CPU time and the minor page
faults of a call: the system time is mostly the kernel handing out fresh pages, which costs far more
in a slow hour of a virtual machine than in a quick one.

Part 2, the Java-style loop. ``--loop-queries`` queries, each evaluated by a fresh
``RetrievalEvaluator`` with four calls: ``average_precision()``, ``ndcg(10)``, ``precision(10)`` and
``relevant_missed_documents()``, beside a harness on ``pytrec_eval`` (with ``--tools`` naming it): a
``RelevanceEvaluator`` per query for map, ndcg_cut.10 and P.10, and the missed documents found
in the dicts. Each tool's input (Documents and Judgments, or dicts) is built before timing, the
two loops alternate, and their values are compared (1e-9); the figure is the time per query,
wall and CPU (the CPU time leaves out the waits for a core on a shared machine), for each of
``--loop-docs`` ranking lengths.

Medians over ``--repeat`` repetitions are printed, with the ratio of each tool to ours and the CPU
model. The machine may be shared: compare ratios measured in the same run, not absolute times.
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

TOOLS = ("ours", "pytrec_eval", "ir_measures", "ranx")


def make_dicts(queries: int, docs: int, seed: int = 29) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Seeded qrels and run dicts: ``docs`` retrieved per query, ~30 judged, a third of them unretrieved."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(queries):
        qid = f"q{q}"
        pool = rng.choice(docs * 2, size=docs + 10, replace=False)
        ranked = pool[:docs]
        scores = np.round(rng.random(docs) * 10, 3)
        run[qid] = {f"doc{d}": float(s) for d, s in zip(ranked.tolist(), scores.tolist())}
        judged = np.concatenate([ranked[:20], pool[docs:]])
        grades = rng.integers(0, 3, size=len(judged))
        qrels[qid] = {f"doc{d}": int(g) for d, g in zip(judged.tolist(), grades.tolist())}
    return qrels, run


def ours(qrels: dict, run: dict) -> dict[str, float]:
    from retrieval_eval import SetEvaluator

    ev = SetEvaluator.from_dict(qrels, run)
    return {"AP": ev.mean("AP"), "nDCG@10": ev.mean("ndcg_cut_10"), "P@10": ev.mean("P_10")}


def pytrec(qrels: dict, run: dict) -> dict[str, float]:
    import pytrec_eval

    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10", "P_10"}).evaluate(run)
    values = list(per_query.values())
    return {name: sum(v[key] for v in values) / len(values)
            for name, key in (("AP", "map"), ("nDCG@10", "ndcg_cut_10"), ("P@10", "P_10"))}


def irm(qrels: dict, run: dict) -> dict[str, float]:
    import ir_measures
    from ir_measures import AP, P, nDCG

    found = ir_measures.calc_aggregate([AP, nDCG @ 10, P @ 10], qrels, run)
    return {"AP": found[AP], "nDCG@10": found[nDCG @ 10], "P@10": found[P @ 10]}


def rx(qrels: dict, run: dict) -> dict[str, float]:
    import ranx

    found = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["map", "ndcg@10", "precision@10"])
    return {"AP": found["map"], "nDCG@10": found["ndcg@10"], "P@10": found["precision@10"]}


WORK: dict[str, Callable[[dict, dict], dict[str, float]]] = {
    "ours": ours, "pytrec_eval": pytrec, "ir_measures": irm, "ranx": rx,
}


def _usage() -> tuple[float, float, int]:
    """(user s, system s, minor page faults) of this process so far; zeros where ``resource`` is missing."""
    try:
        import resource
    except ImportError:  # (Windows)
        return 0.0, 0.0, 0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime, usage.ru_minflt


def timed(work: Callable[[], object]) -> tuple[float, object, tuple[float, float, int]]:
    """Wall seconds of ``work()``, its result, and its (user s, system s, minor page faults)."""
    gc.collect()
    before = _usage()
    start = time.perf_counter()
    out = work()
    seconds = time.perf_counter() - start
    after = _usage()
    return seconds, out, (after[0] - before[0], after[1] - before[1], after[2] - before[2])


def bench_dicts(queries: int, docs: int, repeat: int, tools: list[str]) -> None:
    qrels, run = make_dicts(queries, docs)
    entries = sum(map(len, run.values())) + sum(map(len, qrels.values()))
    print(f"\n## dicts: {queries:,} queries x {docs} documents ({entries:,} entries), median of {repeat}")
    for tool in tools:  # untimed: imports, ranx's numba compilation
        WORK[tool](qrels, run)
    times: dict[str, list[float]] = {t: [] for t in tools}
    usages: dict[str, list[tuple[float, float, int]]] = {t: [] for t in tools}
    means: dict[str, dict[str, float]] = {}
    for _ in range(repeat):
        for tool in tools:  # in turn, so a slow spell of the machine does not fall on one tool only
            seconds, out, usage = timed(lambda: WORK[tool](qrels, run))  # noqa: B023
            times[tool].append(seconds)
            usages[tool].append(usage)
            means[tool] = out  # type: ignore[assignment]
    base = statistics.median(times["ours"]) if "ours" in times else None
    print(f"{'tool':<12} {'median s':>9} {'min s':>8} {'ours / tool':>11} {'user s':>7} {'system s':>8} {'page faults':>11}")
    for tool in tools:
        median = statistics.median(times[tool])
        ratio = f"{base / median:.2f}x" if base else "-"
        user, system, faults = (statistics.median(u[i] for u in usages[tool]) for i in range(3))
        print(f"{tool:<12} {median:9.3f} {min(times[tool]):8.3f} {ratio:>11} {user:7.3f} {system:8.3f} {faults:11,.0f}")
    if "ours" in means:
        for tool, found in means.items():
            off = [k for k in found if abs(found[k] - means["ours"][k]) > 1e-9]
            if off:
                print(f"  ! {tool} disagrees with ours on {off}: {found} vs {means['ours']}")


def bench_loop(queries: int, docs: int, repeat: int, tools: list[str]) -> None:
    """Time one evaluator per query, four values each, ours beside pytrec_eval's per-query evaluator."""
    from retrieval_eval import Document, Judgment, RetrievalEvaluator

    qrels, run = make_dicts(queries, docs)
    cases = []
    for qid, ranked in run.items():
        # trec_eval's order: score descending, ties by document id descending (so both tools rank alike)
        order = sorted(ranked, key=lambda d: (ranked[d], d), reverse=True)
        cases.append((qid, [Document(d, score=ranked[d]) for d in order],
                      [Judgment(d, g) for d, g in qrels[qid].items()]))

    def ours() -> list[tuple[float, float, float, int]]:
        values = []
        for qid, retrieved, judgments in cases:
            ev = RetrievalEvaluator(qid, retrieved, judgments)
            values.append((ev.average_precision(), ev.ndcg(10), ev.precision(10),
                           len(ev.relevant_missed_documents())))
        return values

    def pytrec() -> list[tuple[float, float, float, int]]:
        # A harness on pytrec_eval: an evaluator per query, and the missed documents from the dicts.
        import pytrec_eval

        values = []
        for qid, judged in qrels.items():
            ranked = run[qid]
            found = pytrec_eval.RelevanceEvaluator({qid: judged}, {"map", "ndcg_cut.10", "P.10"}).evaluate(
                {qid: ranked})[qid]
            missed = sorted(d for d, g in judged.items() if g >= 1 and d not in ranked)
            values.append((found["map"], found["ndcg_cut_10"], found["P_10"], len(missed)))
        return values

    loops: dict[str, Callable[[], list[tuple[float, float, float, int]]]] = {"ours": ours}
    if "pytrec_eval" in tools:
        loops["pytrec_eval"] = pytrec
    expected = ours()
    for tool, loop in loops.items():  # one untimed round each (imports, caches), checked against ours
        found = loop()
        off = [i for i, (a, b) in enumerate(zip(found, expected)) if any(abs(x - y) > 1e-9 for x, y in zip(a, b))]
        if off:
            print(f"  ! {tool} disagrees with ours on {len(off)} queries, the first {cases[off[0]][0]}: "
                  f"{found[off[0]]} vs {expected[off[0]]}")
    wall: dict[str, list[float]] = {tool: [] for tool in loops}
    cpu: dict[str, list[float]] = {tool: [] for tool in loops}
    for _ in range(repeat):
        for tool, loop in loops.items():  # alternating, so that a change in the machine's speed hits both
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            loop()
            wall[tool].append((time.perf_counter() - start) / queries * 1e6)
            # CPU time too: on a shared machine the wall time includes the waits for a core.
            cpu[tool].append((time.process_time() - start_cpu) / queries * 1e6)
    mine = statistics.median(wall["ours"])
    for tool in loops:
        ratio = "" if tool == "ours" else f"  ({statistics.median(wall[tool]) / mine:.2f}x ours)"
        print(f"loop, {docs:>6} documents x {queries:,} queries, {tool:<11}: median {statistics.median(wall[tool]):8.1f} us "
              f"per query (min {min(wall[tool]):.1f}), CPU {statistics.median(cpu[tool]):.1f} us{ratio}")


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown"
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")),
                "unknown")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--loop-docs", default="100,10000")
    parser.add_argument("--loop-queries", type=int, default=0,
                        help="queries in the loop (default: 2000 at 100 documents, fewer for long rankings)")
    parser.add_argument("--skip-loop", action="store_true")
    parser.add_argument("--skip-dicts", action="store_true")
    args = parser.parse_args(argv)
    tools = [t for t in args.tools.split(",") if t]
    unknown = sorted(set(tools) - set(TOOLS))
    if unknown:
        parser.error(f"unknown tools {unknown}; choose from {', '.join(TOOLS)}")
    import os

    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical), Python {platform.python_version()}, "
          f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.skip_dicts:
        bench_dicts(args.queries, args.docs, args.repeat, tools)
    if not args.skip_loop:
        print(f"\n## one RetrievalEvaluator per query, four calls, median of {args.repeat}")
        for docs in (int(d) for d in args.loop_docs.split(",")):
            queries = args.loop_queries or max(20, min(2000, 200_000 // docs))
            bench_loop(queries, docs, args.repeat, tools)
    return 0


if __name__ == "__main__":
    sys.exit(main())
