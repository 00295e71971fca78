"""A Parquet run with one very long document id, next to the same run without it (issue 28, item 1).

    python benchmarks/parquet_long_ids.py [--queries 1000] [--depth 1000] [--id-bytes 4096]
                                          [--order sorted|shuffled] [--repeat 5] [--workdir DIR]

Writes (seeded, so byte-identical between runs) a Parquet run of ``--queries`` x ``--depth`` rows
(1,000,000 by default) with its qrels, and a copy of the run in which one unjudged document id is
``--id-bytes`` long (4 KB). ``--order sorted`` keeps each query's rows by score descending, as a
retrieval system writes them; ``shuffled`` shuffles all rows (the reader must then sort them).

Each repetition runs ``retrieval-eval evaluate -m official QRELS RUN`` on both runs, in fresh
processes and in turn, and the medians of wall time, CPU time and peak RSS are printed, with their
ratios (CPU time varies less than wall time on a busy machine).
Before issue 28 a Parquet id column was as wide as its longest id: the long id made every row 4 KB
(27 s and 8.2 GB for this file, against 0.67 s and 264 MB). The budget is 1.5x the time and memory
of the run without it; the last line says whether both ratios are within it. The two outputs must
be identical but for the run id, each file's name (the long id is not judged, and ranks where the
short one did).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from _bytecode import cache_bytecode

#: Time and peak memory of the run with the long id, at most this many times those of the run without.
BUDGET = 1.5


def generate(workdir: str, queries: int, depth: int, id_bytes: int, order: str) -> tuple[str, str, str]:
    """Paths of the qrels, the plain run and the run with one long id (written on first use)."""
    stem = os.path.join(workdir, f"parquet-{queries}x{depth}-{order}")
    paths = (stem + ".qrels.parquet", stem + ".run.parquet", stem + f".long{id_bytes}.run.parquet")
    if all(os.path.exists(p) for p in paths):
        return paths
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(2028)
    n = queries * depth
    query_ids = np.repeat(np.char.add("q", np.arange(queries).astype(str)), depth)
    doc_ids = np.char.add("doc", rng.permutation(n).astype(str)).astype(object)
    scores = -np.sort(-np.round(rng.random((queries, depth)), 4), axis=1).ravel()  # ties, as real runs have
    rows = rng.permutation(n) if order == "shuffled" else np.arange(n)
    judged = np.arange(0, n, 50)  # every 50th row of the sorted run is relevant
    pq.write_table(pa.table({"query_id": query_ids[judged], "doc_id": pa.array(doc_ids[judged].tolist(), pa.string()),
                             "relevance": np.ones(len(judged), dtype=np.int64)}), paths[0])
    pq.write_table(pa.table({"query_id": query_ids[rows], "doc_id": pa.array(doc_ids[rows].tolist(), pa.string()),
                             "score": scores[rows]}), paths[1])
    long_row = 12_345 % n  # not judged (not a multiple of 50)
    long_row += long_row % 50 == 0
    # The long id keeps the short one's prefix and tie order: "doc..." then letters, so it ranks alike.
    doc_ids[long_row] = (doc_ids[long_row] + "L" * id_bytes)[:id_bytes]
    pq.write_table(pa.table({"query_id": query_ids[rows], "doc_id": pa.array(doc_ids[rows].tolist(), pa.string()),
                             "score": scores[rows]}), paths[2])
    return paths


def timed(command: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user and system), peak RSS in MB and stdout of one fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed: {' '.join(command)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def _values(output: str) -> list[str]:
    """The output without its runid line (the run id is each file's name)."""
    return [line for line in output.splitlines() if not line.startswith("runid")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--id-bytes", type=int, default=4096)
    parser.add_argument("--order", choices=("sorted", "shuffled"), default="sorted")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "retrieval_eval-benchmarks"))
    args = parser.parse_args(argv)
    cache_bytecode(args.workdir)  # the timed commands start as an installed package's do
    os.makedirs(args.workdir, exist_ok=True)
    qrels, plain, long = generate(args.workdir, args.queries, args.depth, args.id_bytes, args.order)
    cli = [sys.executable, "-m", "retrieval_eval", "evaluate", "-m", "official", qrels]
    samples: dict[str, list[tuple[float, float, float]]] = {"without": [], "with": []}
    outputs: dict[str, str] = {}
    for _ in range(args.repeat):  # in turn, so that a busy moment of the machine hits both alike
        for name, run in (("without", plain), ("with", long)):
            wall, cpu, rss, outputs[name] = timed([*cli, run])
            samples[name].append((wall, cpu, rss))
    rows = args.queries * args.depth
    print(f"Parquet run: {rows:,} rows ({args.order}), {os.path.getsize(plain) / 1e6:.0f} MB; one doc id of "
          f"{args.id_bytes:,} bytes in the second; median of {args.repeat}")
    print(f"{'run':<22}{'wall s':>10}{'CPU s':>10}{'peak RSS MB':>14}")
    medians = {}
    for name, measured in samples.items():
        medians[name] = tuple(statistics.median(sample[i] for sample in measured) for i in range(3))
        label = "without the long id" if name == "without" else f"with a {args.id_bytes:,}-byte id"
        print(f"{label:<22}{medians[name][0]:>10.2f}{medians[name][1]:>10.2f}{medians[name][2]:>14.0f}")
    wall_ratio, cpu_ratio, memory_ratio = (medians["with"][i] / medians["without"][i] for i in range(3))
    same = _values(outputs["with"]) == _values(outputs["without"])
    within = wall_ratio <= BUDGET and memory_ratio <= BUDGET
    print(f"with / without: time {wall_ratio:.2f}x (CPU {cpu_ratio:.2f}x), memory {memory_ratio:.2f}x "
          f"(budget {BUDGET}x): {'within' if within else 'OVER'}; outputs {'identical' if same else 'DIFFER'}")
    return 0 if within and same else 1


if __name__ == "__main__":
    sys.exit(main())
