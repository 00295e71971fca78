"""Fusion speed: reading N runs against fusing them (RRF, CombMNZ), and ranx and pyflagr beside us.

    python benchmarks/fusion.py DIR [--runs 5] [--peer-queries 500] [--queries 0]

DIR holds the msmarco shape (``benchmarks/generate.py msmarco DIR``, made here on first use) and the
other runs, made from it once (same queries, 30% of each query's documents replaced by documents of
that run only, scores perturbed so that the order changes). Times are wall clock, best of
``--repeat``. Issue 32's budget: fusing takes at most twice the time of reading the runs.

ranx and pyflagr are timed in the same process on the first ``--peer-queries`` queries of the same
files (the whole shape takes them minutes): ours is timed again on that subset, so that the ratios
compare like with like. pyflagr has no RRF: its CombMNZ (score normalisation) is the one compared.
FLAGR's own methods (``flagr-*``) are timed against pyflagr on ``--flagr-queries`` queries with each
run cut at ``--flagr-depth`` documents: their pairwise methods are quadratic in a query's documents.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate

from retrieval_eval.analysis.fusion import candidates_from_runs, get_method
from retrieval_eval.analysis.fusion.output import write_trec
from retrieval_eval.analysis.fusion.registry import ranked_run
from retrieval_eval.io.formats import read_run_columns
from retrieval_eval.model import RunColumns


def _variant(base: RunColumns, seed: int) -> RunColumns:
    """Another run over the same queries: 30% of the documents its own, the scores perturbed."""
    rng = np.random.default_rng(seed)
    docs = base.doc_ids.copy()
    own = rng.random(len(docs)) < 0.3
    width = docs.dtype.itemsize + 3
    docs = docs.astype(f"S{width}")
    docs[own] = np.char.add(f"v{seed}-".encode(), base.doc_ids[own])
    scores = base.scores + rng.normal(0, 2.0 * float(np.std(base.scores)) / 100, size=len(docs))
    return RunColumns(base.query_ids, docs, np.round(scores, 4), base.lines, run_id=f"run{seed}")


def _files(directory: str, n_runs: int) -> list[str]:
    _, first = generate.paths("msmarco", directory)
    if not os.path.exists(first):
        generate.generate("msmarco", directory)
    paths = [first]
    base = None
    for seed in range(1, n_runs):
        path = os.path.join(directory, f"msmarco-fuse{seed}.run")
        if not os.path.exists(path):
            base = base if base is not None else read_run_columns(first)
            with open(path + ".tmp", "wb") as out:
                write_trec(out, _variant(base, seed))
            os.replace(path + ".tmp", path)
        paths.append(path)
    return paths


def _best(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def _ours(runs: list[RunColumns], method: str, **params: object) -> RunColumns:
    c = candidates_from_runs(runs)
    return ranked_run(c, get_method(method)(c, **params), method, 1000)


def _subset(paths: list[str], n_queries: int, directory: str) -> list[str]:
    """The first ``n_queries`` queries of each file, as files of their own."""
    out = []
    for path in paths:
        target = os.path.join(directory, f"{Path(path).stem}-{n_queries}q.run")
        if not os.path.exists(target):
            seen: set[bytes] = set()
            with open(path, "rb") as source, open(target, "wb") as sink:
                for line in source:
                    query = line.split(None, 1)[0]
                    if query not in seen and len(seen) == n_queries:
                        break
                    seen.add(query)
                    sink.write(line)
        out.append(target)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--peer-queries", type=int, default=500, help="queries given to ranx and pyflagr (0: none)")
    parser.add_argument("--flagr-queries", type=int, default=20,
                        help="queries for FLAGR's methods against pyflagr (0: none); their pairwise methods are "
                             "quadratic in a query's documents")
    parser.add_argument("--flagr-depth", type=int, default=100, help="each run's documents per query for them")
    args = parser.parse_args(argv)
    paths = _files(args.directory, args.runs)
    with open(paths[0], "rb") as file:
        lines = sum(1 for _ in file)
    print(f"{args.runs} runs of {lines:,} lines each")
    runs: list[RunColumns] = []

    def read() -> None:
        runs.clear()
        runs.extend(read_run_columns(p) for p in paths)

    reading = _best(args.repeat, read)
    print(f"read {args.runs} runs: {reading:.2f} s")
    for method, params in (("rrf", {"k": 60}), ("combmnz", {"norm": "min-max"})):
        fusing = _best(args.repeat, lambda method=method, params=params: _ours(runs, method, **params))
        print(f"fuse {method}: {fusing:.2f} s = {fusing / reading:.2f} x reading (budget 2 x)")
    if args.peer_queries:
        _peers(paths, args.peer_queries, args.directory, args.repeat)
    if args.flagr_queries:
        _flagr(paths, args.flagr_queries, args.flagr_depth, args.directory, args.repeat)
    return 0


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """pyflagr's C code prints a line per query to the process's stdout: send it to /dev/null."""
    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


#: Our FLAGR method and its parameters, and pyflagr's module, class and arguments for the same numbers.
FLAGR_ROWS: list[tuple[str, dict[str, object], str, str, dict[str, object]]] = [
    ("flagr-combsum", {"norm": "borda"}, "Linear", "CombSUM", {"norm": "borda"}),
    ("flagr-combmnz", {"norm": "score", "as_pyflagr": True}, "Linear", "CombMNZ", {"norm": "score"}),
    ("flagr-condorcet", {}, "Majoritarian", "CondorcetWinners", {}),
    ("flagr-copeland", {}, "Majoritarian", "CopelandWinners", {}),
    ("flagr-outranking", {}, "Majoritarian", "OutrankingApproach", {}),
    ("flagr-mc4", {"as_pyflagr": True}, "MarkovChains", "MC4", {"eval_pts": 10}),
    ("flagr-mct", {"as_pyflagr": True}, "MarkovChains", "MCT", {"eval_pts": 10}),
    ("flagr-rra", {"exact": True}, "RRA", "RRA", {"exact": True}),
    ("flagr-prefrel", {}, "Weighted", "PreferenceRelationsGraph", {}),
    ("flagr-agglomerative", {}, "Weighted", "Agglomerative", {}),
    ("flagr-dibra", {}, "Weighted", "DIBRA", {}),
]


def _top(runs: list[RunColumns], depth: int) -> list[RunColumns]:
    """Each run cut at its ``depth`` best documents per query (trec_eval's order)."""
    c = candidates_from_runs(runs)
    query = c.query_ids[c.row_query()]
    out = []
    for r, run in enumerate(runs):  # a loop over runs
        keep = (c.ranks[r] > 0) & (c.ranks[r] <= depth)
        out.append(RunColumns(query[keep], c.doc_ids[keep], c.scores[r, keep],
                              np.arange(1, int(keep.sum()) + 1), run_id=run.run_id or f"run{r}"))
    return out


def _flagr(paths: list[str], n_queries: int, depth: int, directory: str, repeat: int) -> None:
    import importlib

    runs = _top([read_run_columns(p) for p in _subset(paths, n_queries, directory)], depth)
    c = candidates_from_runs(runs, names=[f"run{r}" for r in range(len(runs))])
    rows = []  # pyflagr's CSV: query, voter, item, rank, score, dataset
    for r in range(c.n_runs):  # a loop over runs, then over their lines: a benchmark's input, written once
        held = np.flatnonzero(c.ranks[r] > 0)
        query = c.query_ids[c.row_query()[held]]
        for q, d, rank, score in zip(query.tolist(), c.doc_ids[held].tolist(), c.ranks[r, held].tolist(),
                                     c.scores[r, held].tolist()):
            rows.append(f"{q.decode()},run{r},{d.decode()},{rank},{score!r},bench")
    flagr_input = os.path.join(tempfile.gettempdir(), f"fusion-bench-flagr-{os.getpid()}.csv")
    with open(flagr_input, "w") as out:
        out.write("\n".join(rows) + "\n")
    print(f"\nFLAGR's methods on the first {n_queries} queries, each run cut at {depth} documents "
          f"({c.n_rows:,} candidates), pyflagr in this process (its time includes its CSV in and out):")
    for name, ours_params, module, cls, their_params in FLAGR_ROWS:
        ours = _best(repeat, lambda name=name, params=ours_params: get_method(name)(c, **params))
        method = getattr(importlib.import_module(f"pyflagr.{module}"), cls)(**their_params)
        with _quiet():
            theirs = _best(repeat, lambda method=method: method.aggregate(input_file=flagr_input))
        print(f"  {name}: ours {ours:.3f} s, pyflagr {theirs:.3f} s (pyflagr / ours = {theirs / ours:.1f})")
    os.remove(flagr_input)


def _peers(paths: list[str], n_queries: int, directory: str, repeat: int) -> None:
    import warnings

    import pandas as pd
    import ranx
    from pyflagr import Linear

    small = _subset(paths, n_queries, directory)
    runs = [read_run_columns(p) for p in small]
    print(f"\nthe first {n_queries} queries ({len(runs[0].doc_ids):,} lines a run), "
          "ranx and pyflagr in this process:")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranx_runs = [ranx.Run.from_file(p, kind="trec") for p in small]
        ranx.fuse(ranx_runs, norm="min-max", method="rrf")  # numba compiles on the first call: not timed
        ranx.fuse(ranx_runs, norm="min-max", method="mnz")
        # pyflagr 1.0.21 reads Query,Voter,Item,Rank,Score,Dataset (with four columns it reads nothing)
        frame = pd.concat([pd.read_csv(p, sep=" ", header=None, names=["Query", "q0", "Item", "Rank", "Score", "Voter"])
                           for p in small])[["Query", "Voter", "Item", "Rank", "Score"]]
        frame["Dataset"] = "bench"
        flagr_input = os.path.join(tempfile.gettempdir(), "fusion-bench-flagr.csv")
        frame.to_csv(flagr_input, index=False, header=False)
        for method, ours_params, ranx_method in (("rrf", {"k": 60}, "rrf"), ("combmnz", {"norm": "min-max"}, "mnz")):
            ours = _best(repeat, lambda method=method, params=ours_params: _ours(runs, method, **params))
            theirs = _best(repeat, lambda name=ranx_method: ranx.fuse(ranx_runs, norm="min-max", method=name))
            print(f"  {method}: ours {ours:.3f} s, ranx {theirs:.3f} s (ranx / ours = {theirs / ours:.1f})")
        with _quiet():
            flagr = _best(repeat, lambda: Linear.CombMNZ(norm="score").aggregate(input_file=flagr_input))
        ours = _best(repeat, lambda: _ours(runs, "combmnz", norm="min-max"))
        print(f"  combmnz: ours {ours:.3f} s, pyflagr {flagr:.3f} s (pyflagr / ours = {flagr / ours:.1f}; "
              "pyflagr's time includes reading its CSV and writing its output, ours starts from columns)")


if __name__ == "__main__":
    sys.exit(main())
