"""Tables in memory next to the same rows in Parquet files (issue 29, target 2).

    python benchmarks/frames.py [--shape msmarco] [--repeat 5] [--workdir DIR] [--paths parquet,arrow,pandas,polars]

The TREC files of ``--shape`` (6.98 M run rows for ``msmarco``; written by ``generate.py`` on first
use) are turned, untimed, into the same rows four ways: Parquet files (``query_id, doc_id, score``
and ``query_id, doc_id, relevance``, written by pyarrow with its defaults), a pyarrow Table, a pandas
DataFrame (``Table.to_pandas()``: the string dtype pandas picks) and a polars DataFrame. Ids are
strings, as in the files.

What is timed, in this one process, for each path: from the input (the file names, or the tables
already in memory) to a :class:`SetEvaluator` and the means of AP, nDCG@10 and P@10:

* ``parquet`` ``SetEvaluator.from_parquet(QRELS, RUN)`` (the files come from the page cache);
* ``arrow``   ``SetEvaluator.from_arrow(qrels_table, run_table)``;
* ``pandas``  ``SetEvaluator.from_dataframe(qrels_frame, run_frame)``;
* ``polars``  ``SetEvaluator.from_dataframe(qrels_frame, run_frame)``;
* ``pandas-object`` (only when asked for in ``--paths``) the pandas frames with their id columns as
  Python ``str`` objects (``object`` dtype, pandas' default before 3.0): pyarrow then converts a
  Python object per id, which costs more than the rest of the evaluation.

Each repetition runs every path once, in turn (the order rotates between repetitions, so that a
busy moment of a shared machine hits them alike). Medians are printed, with each path's ratio to
``parquet``; the budget is 1.2x. The means must be identical on every path.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))

#: Each in-memory path's time at most this many times that of the Parquet files.
BUDGET = 1.2
MEASURES = ("AP", "nDCG@10", "P@10")


def trec_files(workdir: str, shape: str) -> tuple[str, str]:
    qrels, run = (os.path.join(workdir, f"{shape}.{kind}") for kind in ("qrels", "run"))
    if not (os.path.exists(qrels) and os.path.exists(run)):
        subprocess.run([sys.executable, os.path.join(HERE, "generate.py"), shape, workdir], check=True)
    return qrels, run


def tables(qrels_path: str, run_path: str) -> tuple[Any, Any]:
    """The qrels and the run as pyarrow tables, ids as strings."""
    import pyarrow as pa
    from pyarrow import csv

    def read(path: str, names: list[str], types: dict[str, Any]) -> Any:
        options = csv.ReadOptions(column_names=names)
        parse = csv.ParseOptions(delimiter=" ")
        convert = csv.ConvertOptions(column_types=types)
        return csv.read_csv(path, read_options=options, parse_options=parse, convert_options=convert)

    qrels = read(qrels_path, ["query_id", "iteration", "doc_id", "relevance"],
                 {"query_id": pa.string(), "iteration": pa.string(), "doc_id": pa.string(), "relevance": pa.int64()})
    run = read(run_path, ["query_id", "q0", "doc_id", "rank", "score", "tag"],
               {"query_id": pa.string(), "q0": pa.string(), "doc_id": pa.string(), "rank": pa.int64(),
                "score": pa.float64(), "tag": pa.string()})
    return (qrels.select(["query_id", "doc_id", "relevance"]).combine_chunks(),
            run.select(["query_id", "doc_id", "score"]).combine_chunks())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="msmarco")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--paths", default="parquet,arrow,pandas,polars")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "retrieval_eval-benchmarks"))
    args = parser.parse_args(argv)
    os.makedirs(args.workdir, exist_ok=True)
    import pyarrow.parquet as pq

    from retrieval_eval import SetEvaluator

    qrels_table, run_table = tables(*trec_files(args.workdir, args.shape))
    qrels_parquet = os.path.join(args.workdir, f"{args.shape}.qrels.parquet")
    run_parquet = os.path.join(args.workdir, f"{args.shape}.run.parquet")
    pq.write_table(qrels_table, qrels_parquet)
    pq.write_table(run_table, run_parquet)
    inputs: dict[str, tuple[Any, Any]] = {}
    wanted = args.paths.split(",")
    if "arrow" in wanted:
        inputs["arrow"] = (qrels_table, run_table)
    if "pandas" in wanted:
        inputs["pandas"] = (qrels_table.to_pandas(), run_table.to_pandas())
    if "polars" in wanted:
        import polars as pl

        inputs["polars"] = (pl.from_arrow(qrels_table), pl.from_arrow(run_table))
    if "pandas-object" in wanted:
        as_objects = {"query_id": object, "doc_id": object}
        inputs["pandas-object"] = (qrels_table.to_pandas().astype(as_objects), run_table.to_pandas().astype(as_objects))

    def evaluate(path: str) -> tuple[float, ...]:
        if path == "parquet":
            evaluator = SetEvaluator.from_parquet(qrels_parquet, run_parquet)
        elif path == "arrow":
            evaluator = SetEvaluator.from_arrow(*inputs[path])
        else:
            evaluator = SetEvaluator.from_dataframe(*inputs[path])
        return tuple(evaluator.mean(measure) for measure in MEASURES)

    paths = [path for path in ("parquet", "arrow", "pandas", "polars", "pandas-object") if path in wanted]
    seconds: dict[str, list[float]] = {path: [] for path in paths}
    cpu_seconds: dict[str, list[float]] = {path: [] for path in paths}
    means: dict[str, tuple[float, ...]] = {}
    for repetition in range(args.repeat):
        turn = paths[repetition % len(paths):] + paths[: repetition % len(paths)]
        for path in turn:
            gc.collect()
            start, cpu = time.perf_counter(), time.process_time()
            means[path] = evaluate(path)
            seconds[path].append(time.perf_counter() - start)
            cpu_seconds[path].append(time.process_time() - cpu)
    print(f"{args.shape}: {run_table.num_rows:,} run rows, {qrels_table.num_rows:,} judgments; "
          f"from the input to the means of {', '.join(MEASURES)}; median of {args.repeat}")
    print(f"{'path':<14}{'median s':>10}{'min s':>8}{'/ parquet':>11}{'CPU s':>8}{'/ parquet':>11}")
    base = statistics.median(seconds["parquet"]) if "parquet" in seconds else float("nan")
    cpu_base = statistics.median(cpu_seconds["parquet"]) if "parquet" in seconds else float("nan")
    within = True
    for path in paths:
        median = statistics.median(seconds[path])
        ratio = median / base
        within &= path == "parquet" or ratio <= BUDGET
        cpu = statistics.median(cpu_seconds[path])
        print(f"{path:<14}{median:>10.3f}{min(seconds[path]):>8.3f}{ratio:>10.2f}x{cpu:>8.3f}{cpu / cpu_base:>10.2f}x")
    same = len(set(means.values())) == 1
    print(f"budget {BUDGET}x: {'within' if within else 'OVER'}; means {'identical' if same else 'DIFFER'}: "
          + ", ".join(f"{m} {v:.6f}" for m, v in zip(MEASURES, next(iter(means.values())))))
    return 0 if within and same else 1


if __name__ == "__main__":
    sys.exit(main())
