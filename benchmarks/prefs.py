"""Preference judgments (-R prefs): our command line against trec_eval 10 built with -O2.

    python benchmarks/prefs.py [--queries 10000] [--repeat 3] [--workdir DIR] [--trec-eval PATH]

The data: ``--queries`` queries of 100 preference lines each (1 M lines for 10,000 queries), each
query with 5 judgment groups (assessors) of 4 subgroups of 5 documents drawn from 40 judged
documents, levels 0..3 that keep each group's own order (so trec_eval accepts them); and a run of
100 documents per query (the 40 judged and 60 others), scores with ties. Both programs run
``-q -c -m all_prefs -R prefs PREFS RUN`` in fresh processes, alternating, ``--repeat`` times; the
median wall times and their ratio are printed, and the two outputs must be byte-identical.

trec_eval is taken from ``--trec-eval``, else built with ``-O2`` from ../shared/reference/trec_eval-10-src
into the work directory. ``run.py --shape prefs-1m`` calls this script.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from _bytecode import cache_bytecode

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOURCE = os.path.join(os.path.dirname(ROOT), "shared", "reference", "trec_eval-10-src")
DEFAULT_WORKDIR = os.path.join(tempfile.gettempdir(), "retrieval_eval-benchmarks")


def generate(directory: str, queries: int) -> tuple[str, str]:
    """The prefs file and the run (written once per size; reused after)."""
    import numpy as np

    prefs_path = os.path.join(directory, f"prefs-{queries}.txt")
    run_path = os.path.join(directory, f"prefs-run-{queries}.txt")
    if os.path.exists(prefs_path) and os.path.exists(run_path):
        return prefs_path, run_path
    rng = np.random.default_rng(33)
    groups, subgroups, per_subgroup, judged = 5, 4, 5, 40
    lines_per_query = groups * subgroups * per_subgroup
    q = np.repeat(np.arange(queries), lines_per_query)
    g = np.tile(np.repeat(np.arange(groups), subgroups * per_subgroup), queries)
    s = np.tile(np.repeat(np.arange(subgroups), per_subgroup), queries * groups)
    # Each subgroup: 5 distinct documents of the query's 40 (a random permutation's first five).
    doc = np.argsort(rng.random((queries * groups * subgroups, judged)), axis=1)[:, :per_subgroup].ravel()
    truth = rng.integers(0, 4, size=(queries, groups, judged))  # each group's own order of the documents
    scale = np.array([1.0, 2.0, 0.5, 3.0])[s]  # subgroups spell the same order with other numbers
    level = truth[q, g, doc] * scale
    with open(prefs_path, "w") as out:
        out.writelines(f"q{a} u{b} s{c} doc{d} {e:g}\n" for a, b, c, d, e in
                       zip(q.tolist(), g.tolist(), s.tolist(), doc.tolist(), level.tolist()))
    depth = 100
    rq = np.repeat(np.arange(queries), depth)
    rd = np.tile(np.arange(depth), queries)
    score = rng.integers(0, 50, size=queries * depth)
    with open(run_path, "w") as out:
        out.writelines(f"q{a} Q0 doc{d} {r + 1} {float(sc)} run\n" for r, (a, d, sc) in
                       enumerate(zip(rq.tolist(), rd.tolist(), score.tolist())))
    return prefs_path, run_path


def build_trec_eval(directory: str) -> str:
    """trec_eval 10 built with -O2 in ``directory`` (once)."""
    binary = os.path.join(directory, "trec_eval-O2", "trec_eval")
    if os.path.exists(binary):
        return binary
    build = os.path.dirname(binary)
    shutil.rmtree(build, ignore_errors=True)
    shutil.copytree(SOURCE, build)
    # make hands CFLAGS to a shell: the backslashes keep the quotes of the version string
    subprocess.run(["make", r'CFLAGS=-O2 -g -I. -Wall -DVERSIONID=\"10.0\"', "trec_eval"], cwd=build, check=True,
                   capture_output=True)
    return binary


def timed(command: list[str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=True)
    return time.perf_counter() - start, done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000, help="queries (100 preference lines each)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each program (median reported)")
    parser.add_argument("--workdir", default=DEFAULT_WORKDIR, help="where the data and the build live")
    parser.add_argument("--trec-eval", help="a trec_eval binary (default: built with -O2 from the reference source)")
    args = parser.parse_args(argv)
    cache_bytecode(args.workdir)  # the timed commands start as an installed package's do
    os.makedirs(args.workdir, exist_ok=True)
    prefs, run = generate(args.workdir, args.queries)
    trec_eval = args.trec_eval or build_trec_eval(args.workdir)
    arguments = ["-q", "-c", "-m", "all_prefs", "-R", "prefs", prefs, run]
    ours_command = [sys.executable, "-m", "retrieval_eval", "evaluate", "--quiet", *arguments]
    times: dict[str, list[float]] = {"retrieval_eval": [], "trec_eval": []}
    outputs: dict[str, bytes] = {}
    for _ in range(args.repeat):
        for name, command in (("retrieval_eval", ours_command), ("trec_eval", [trec_eval, *arguments])):
            seconds, outputs[name] = timed(command)
            times[name].append(seconds)
    ours, theirs = (statistics.median(times[name]) for name in ("retrieval_eval", "trec_eval"))
    with open(prefs, "rb") as file:
        lines = sum(1 for _ in file)
    print(f"Preferences: {lines:,} lines over {args.queries:,} queries; run of {args.queries * 100:,} lines")
    print(f"retrieval_eval  {ours:7.2f} s   (median of {args.repeat})")
    print(f"trec_eval -O2   {theirs:7.2f} s")
    print(f"ratio           {theirs / ours:7.2f}x faster")
    same = outputs["retrieval_eval"] == outputs["trec_eval"]
    print("outputs: byte-identical" if same else "outputs: DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
