"""Parquet and Spark: the msmarco shapes read from Parquet and evaluated in one process and on Spark.

    python benchmarks/spark.py [--shape msmarco] [--masters local[1],local[2]] [--repeat 3]
                               [--partitions 16] [--workdir DIR] [--skip-spark] [--json PATH]

The shape's TREC files (benchmarks/generate.py) are converted once to Parquet (columns ``query_id,
doc_id, relevance`` and ``query_id, doc_id, score``). Then, each repetition in a fresh process and
in turn (medians are reported):

* ``trec``    ``SetEvaluator.from_trec(QRELS, RUN)`` and the summaries of the measures;
* ``parquet`` ``SetEvaluator.from_parquet(QRELS.parquet, RUN.parquet)`` and the same summaries;
* ``spark local[N]``: in one Spark session per master, ``spark.read.parquet`` of both files,
  ``retrieval_eval.integrations.spark.evaluate(..., partitions=P)`` and ``summarize`` (the action that runs it
  all: read, shuffle by query, evaluate each partition, collect the per-query values). The
  session's start is timed apart; one untimed warm-up runs first (Python workers, JIT) unless
  ``--no-warmup``.
* ``shuffle local[N]``: the same read and union repartitioned by query_id, written to Spark's
  ``noop`` sink: the shuffle alone, to see what dominates.

The measures are the official set plus nDCG@10 (``-m official -m ndcg_cut.10``), as in run.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MEASURES = ["official", "nDCG@10"]


def parquet_files(shape: str, workdir: str) -> tuple[str, str, str, str, int]:
    """The TREC files (generated if needed) and their Parquet copies; and the number of run rows."""
    sys.path.insert(0, HERE)
    import generate
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    qrels, run = generate.paths(shape, workdir)
    if not (os.path.exists(qrels) and os.path.exists(run)):
        print(f"generating {shape} in {workdir} ...", file=sys.stderr)
        generate.generate(shape, workdir)
    qrels_pq, run_pq = qrels + ".parquet", run + ".parquet"
    options = pcsv.ParseOptions(delimiter=" ")
    if not os.path.exists(qrels_pq):
        table = pcsv.read_csv(qrels, parse_options=options, read_options=pcsv.ReadOptions(
            column_names=["query_id", "iteration", "doc_id", "relevance"]),
            convert_options=pcsv.ConvertOptions(column_types={"query_id": "string", "doc_id": "string"}))
        pq.write_table(table.select(["query_id", "doc_id", "relevance"]), qrels_pq)
    if not os.path.exists(run_pq):
        table = pcsv.read_csv(run, parse_options=options, read_options=pcsv.ReadOptions(
            column_names=["query_id", "q0", "doc_id", "rank", "score", "run_id"]),
            convert_options=pcsv.ConvertOptions(column_types={"query_id": "string", "doc_id": "string",
                                                              "score": "float64"}))
        pq.write_table(table.select(["query_id", "doc_id", "score"]), run_pq)
    rows = pq.ParquetFile(run_pq).metadata.num_rows
    return qrels, run, qrels_pq, run_pq, rows


# ------------------------------------------------------------------------------------------ workers
def worker_single(kind: str, qrels: str, run: str) -> dict[str, object]:
    start = time.perf_counter()
    from retrieval_eval import SetEvaluator
    from retrieval_eval.measures import parse_all

    evaluator = SetEvaluator.from_trec(qrels, run) if kind == "trec" else SetEvaluator.from_parquet(qrels, run)
    read = time.perf_counter() - start
    summary = {str(m): evaluator.aggregate(m) for name in MEASURES for m in parse_all(name)}
    return {"seconds": time.perf_counter() - start, "read_seconds": read, "summary": summary}


def worker_spark(master: str, qrels: str, run: str, partitions: int, repeat: int, warmup: bool) -> dict[str, object]:
    start = time.perf_counter()
    from retrieval_eval import spark as rs

    session = rs.session(master, **{"spark.sql.shuffle.partitions": str(partitions),
                                     "spark.driver.memory": os.environ.get("SPARK_DRIVER_MEMORY", "6g")})
    session.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter() - start

    def evaluate() -> dict[str, float]:
        qrels_df, run_df = session.read.parquet(qrels), session.read.parquet(run)
        return rs.summarize(rs.evaluate(qrels_df, run_df, MEASURES, partitions=partitions))

    def shuffle() -> None:
        from pyspark.sql import functions as F

        both = session.read.parquet(qrels).select("query_id", "doc_id", F.col("relevance").cast("double").alias("v"))
        both = both.unionByName(session.read.parquet(run).select("query_id", "doc_id", F.col("score").alias("v")))
        both.repartition(partitions, "query_id").write.format("noop").mode("overwrite").save()

    if warmup:
        evaluate()  # Python workers started, classes loaded
    times, shuffles, summary = [], [], {}
    for _ in range(repeat):
        t = time.perf_counter()
        summary = evaluate()
        times.append(time.perf_counter() - t)
        t = time.perf_counter()
        shuffle()
        shuffles.append(time.perf_counter() - t)
    session.stop()
    return {"session_seconds": started, "seconds": times, "shuffle_seconds": shuffles, "summary": summary}


def in_fresh_process(*args: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, __file__, "--worker", *args], capture_output=True, text=True, env=env,
                          check=False)
    if done.returncode:
        raise SystemExit(f"worker {args} failed:\n{done.stderr[-3000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="msmarco", choices=["msmarco", "msmarco-10x", "tiny"])
    parser.add_argument("--masters", default="local[1],local[2]")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "retrieval_eval-benchmarks"))
    parser.add_argument("--skip-spark", action="store_true")
    parser.add_argument("--no-warmup", action="store_true", help="no untimed Spark run first (for big shapes)")
    parser.add_argument("--json")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        kind, *rest = args.worker
        if kind == "files":
            print(json.dumps({"paths": parquet_files(*rest)}))
            return 0
        if kind == "spark":
            master, qrels, run, partitions, repeat, warmup = rest
            result = worker_spark(master, qrels, run, int(partitions), int(repeat), warmup == "1")
        else:
            result = worker_single(kind, *rest)
        print(json.dumps(result))
        return 0

    # Converted in a process of its own: Arrow's allocator would keep the text tables' memory here.
    files = in_fresh_process("files", args.shape, args.workdir)
    qrels, run, qrels_pq, run_pq, rows = files["paths"]  # type: ignore[misc]
    mb = {p: os.path.getsize(p) / 1e6 for p in (qrels, run, qrels_pq, run_pq)}
    print(f"{args.shape}: {rows:,} run rows; run {mb[run]:.0f} MB as TREC text, {mb[run_pq]:.0f} MB as Parquet")
    single: dict[str, list[float]] = {"trec": [], "parquet": []}
    summaries = {}
    for _ in range(args.repeat):  # in turn, so that the machine's load hits both alike
        for kind, files in (("trec", (qrels, run)), ("parquet", (qrels_pq, run_pq))):
            result = in_fresh_process(kind, *files)
            single[kind].append(float(result["seconds"]))  # type: ignore[arg-type]
            summaries[kind] = result["summary"]
    if summaries["trec"] != summaries["parquet"]:
        raise SystemExit("the Parquet and TREC summaries differ")
    report: dict[str, object] = {"shape": args.shape, "rows": rows, "single": single}
    median = {kind: statistics.median(times) for kind, times in single.items()}
    print(f"{'one process, from_trec (text)':40s} {median['trec']:7.2f} s   runs {single['trec']}")
    print(f"{'one process, from_parquet':40s} {median['parquet']:7.2f} s   runs {single['parquet']}")
    if not args.skip_spark:
        for master in args.masters.split(","):
            result = in_fresh_process("spark", master, qrels_pq, run_pq, str(args.partitions), str(args.repeat),
                                      "0" if args.no_warmup else "1")
            if result["summary"] != summaries["parquet"]:
                diff = {k: (v, summaries["parquet"][k]) for k, v in result["summary"].items()  # type: ignore[union-attr]
                        if v != summaries["parquet"][k]}  # type: ignore[index]
                print(f"  note: summaries that differ from SetEvaluator's in the last bits: {diff}")
            seconds = statistics.median(result["seconds"])  # type: ignore[arg-type]
            shuffle = statistics.median(result["shuffle_seconds"])  # type: ignore[arg-type]
            report[master] = result
            print(f"{'spark ' + master + f' ({args.partitions} partitions)':40s} {seconds:7.2f} s   "
                  f"x{seconds / median['parquet']:.1f} from_parquet; shuffle alone {shuffle:.2f} s; "
                  f"session start {result['session_seconds']:.1f} s; "
                  f"{rows / seconds / 1e6:.2f} M rows/s; runs {[round(s, 2) for s in result['seconds']]}")  # type: ignore[union-attr]
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
