"""Side-by-side timing of retrieval_eval and other trec_eval-compatible evaluators.

    python benchmarks/run.py --shape msmarco [--repeat 3] [--workdir DIR] [--tools cli,api,...]

The data of the shape (see ``generate.py``) is generated into ``--workdir`` if it is not there yet.
Then, ``--repeat`` times, every tool evaluates the same qrels and run END TO END FROM THE FILES,
each in its own fresh process (tools alternate within a repetition, so a slow spell of the machine
does not fall on one tool only):

* ``cli``        ``retrieval-eval evaluate -m official -m ndcg_cut.10 QRELS RUN``;
* ``api``        ``SetEvaluator.from_trec(QRELS, RUN)`` then ``aggregate()`` of 8 measures;
* ``pytrec_eval`` the files read into dicts by a plain Python loop, ``RelevanceEvaluator`` + ``evaluate``;
* ``ir_measures`` ``calc_aggregate`` over ``read_trec_qrels`` / ``read_trec_run``;
* ``ranx``       ``Qrels.from_file`` / ``Run.from_file`` + ``evaluate`` (if ranx is installed);
* ``trec_eval``  the C binary, ``trec_eval -c -m official -m ndcg_cut.10`` (if it is on PATH).

The shapes ``dicts`` (2,000 queries x 100 documents) and ``dicts-100k`` (100,000 x 100) are not files
but pytrec_eval-style dicts, as BEIR and MTEB hand them over: ``dicts.py`` times them in one process
(``SetEvaluator.from_dict`` against pytrec_eval, ir_measures and warm ranx), and ``--tools`` names
some of ``ours,pytrec_eval,ir_measures,ranx``.

The 8 measures are AP (map), RR, P@5, P@10, nDCG@10, R@100, bpref and R-precision.

Wall time is measured by this script around each process, so it includes interpreter start-up and
imports for every tool. Peak RSS is per process: the Python tools run inside a small wrapper (this
file with ``--worker``) that reports its own ``getrusage(RUSAGE_SELF).ru_maxrss`` and in-process
time; the command-line tools run under ``/usr/bin/time -f %e,%M`` (or, without it, their rusage is
taken from ``os.wait4``). Medians over the repetitions are reported.

A second part times computation alone, in one process per tool: for retrieval_eval the measures'
``array()`` on a freshly built SetEvaluator each repetition (so no cached value is reused), for
pytrec_eval ``evaluator.evaluate(run)`` on in-memory dicts, for ranx ``evaluate`` on loaded objects
(after one untimed call, which compiles or loads its numba code). Reading and building are timed
alongside, once per process for reading and per repetition for building.

The means of AP, P@10 and nDCG@10 are compared between tools (tolerance 1e-4); disagreements are
reported, never fatal.

Before the timed rounds each tool runs once, untimed, on the ``tiny`` shape (so byte-code, numba
caches and the like are warm); ``--no-warmup`` skips that. The ``tiny`` shape itself is a smoke test
(a few seconds): no warm-up, and ranx is left out unless named in ``--tools``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from _bytecode import cache_bytecode, child_environment

HERE = os.path.dirname(os.path.abspath(__file__))
#: outside the source tree: the msmarco run alone is ~240 MB
DEFAULT_WORKDIR = os.path.join(tempfile.gettempdir(), "retrieval_eval-benchmarks")

#: canonical measure key -> (trec_eval / pytrec_eval name, ranx name)
MEASURES = {
    "AP": ("map", "map"),
    "RR": ("recip_rank", "mrr"),
    "P@5": ("P_5", "precision@5"),
    "P@10": ("P_10", "precision@10"),
    "nDCG@10": ("ndcg_cut_10", "ndcg@10"),
    "R@100": ("recall_100", "recall@100"),
    "Bpref": ("bpref", "bpref"),
    "Rprec": ("Rprec", "r-precision"),
}
TREC_TO_KEY = {trec: key for key, (trec, _) in MEASURES.items()}
#: the means every tool must agree on
CHECKED = ("AP", "P@10", "nDCG@10")
TOLERANCE = 1e-4

#: generate.SHAPES, without importing NumPy here
#: In-memory shapes, pytrec_eval-style dicts of this many queries x 100 documents: no files, so they are
#: timed in one process by ``dicts.py`` (``from_dict`` + AP, nDCG@10, P@10 beside pytrec_eval,
#: ir_measures and warm ranx); ``--tools`` then names some of ours,pytrec_eval,ir_measures,ranx.
DICT_SHAPES = {"dicts": 2000, "dicts-100k": 100_000}
#: preference judgments (-R prefs), timed by ``prefs.py`` against trec_eval 10 built with -O2: queries
#: of 100 preference lines each (``prefs-1m``: 1 M lines over 10,000 queries)
PREFS_SHAPES = {"prefs-1m": 10_000, "prefs-small": 200}
SHAPES = ("msmarco", "dl", "robust", "skewed", "tiny", "msmarco-10x", "sessions-1", "sessions-10", "sessions-1-small",
          "sessions-10-small", "long-ids", *DICT_SHAPES, *PREFS_SHAPES)
END_TO_END = ("cli", "api", "pytrec_eval", "ir_measures", "ranx", "trec_eval")
COMPUTE_ONLY = ("ours", "pytrec_eval", "ranx")


# ==================================================================================================
# Workers: run in their own process, print one JSON line with their own time and peak RSS.


def _maxrss_kb() -> int:
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage // 1024 if sys.platform == "darwin" else usage  # bytes on macOS, KiB on Linux


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def _read_qrels_dict(path: str) -> dict[str, dict[str, int]]:
    """What pytrec_eval users write: a plain loop over the lines."""
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as handle:
        for line in handle:
            qid, _, doc, rel = line.split()
            qrels.setdefault(qid, {})[doc] = int(rel)
    return qrels


def _read_run_dict(path: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open(path) as handle:
        for line in handle:
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    return run


def _pytrec_means(results: dict[str, dict[str, float]]) -> dict[str, float]:
    return {key: _mean(per_query[trec] for per_query in results.values()) for key, (trec, _) in MEASURES.items()}


def work_api(qrels: str, run: str) -> dict[str, float]:
    from retrieval_eval import SetEvaluator

    evaluator = SetEvaluator.from_trec(qrels, run)
    return {key: float(evaluator.aggregate(trec)) for key, (trec, _) in MEASURES.items()}


def work_pytrec_eval(qrels: str, run: str) -> dict[str, float]:
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(_read_qrels_dict(qrels), {trec for trec, _ in MEASURES.values()})
    return _pytrec_means(evaluator.evaluate(_read_run_dict(run)))


def _ir_measures_list():
    from ir_measures import AP, RR, Bpref, P, R, Rprec, nDCG

    return {"AP": AP, "RR": RR, "P@5": P @ 5, "P@10": P @ 10, "nDCG@10": nDCG @ 10, "R@100": R @ 100,
            "Bpref": Bpref, "Rprec": Rprec}


def work_ir_measures(qrels: str, run: str) -> dict[str, float]:
    import ir_measures

    measures = _ir_measures_list()
    results = ir_measures.calc_aggregate(list(measures.values()), ir_measures.read_trec_qrels(qrels),
                                         ir_measures.read_trec_run(run))
    return {key: float(results[measure]) for key, measure in measures.items()}


def work_ranx(qrels: str, run: str) -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    results = evaluate(Qrels.from_file(qrels, kind="trec"), Run.from_file(run, kind="trec"),
                       [name for _, name in MEASURES.values()], save_results_in_run=False)
    return {key: float(results[name]) for key, (_, name) in MEASURES.items()}


def work_cli_inprocess(qrels: str, run: str) -> dict[str, float]:
    """The CLI in this process (only used when /usr/bin/time is missing)."""
    import contextlib
    import io

    from retrieval_eval.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["evaluate", "-m", "official", "-m", "ndcg_cut.10", qrels, run])
    return parse_trec_output(out.getvalue())


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def compute_ours(qrels: str, run: str, repeat: int) -> dict:
    import attrs

    from retrieval_eval import SetEvaluator
    from retrieval_eval.io.formats import read_qrels_columns, read_run_columns

    start = time.perf_counter()
    qrels_columns, run_columns = read_qrels_columns(qrels), read_run_columns(run)
    parse = time.perf_counter() - start
    build, compute, means = [], [], {}
    for _ in range(repeat):
        # Fresh: nothing cached. Writable copies of the qrels, since read-only qrels columns (as read)
        # keep their preparation for the next run built against them (see work_shared_qrels).
        fresh = attrs.evolve(qrels_columns, query_ids=qrels_columns.query_ids.copy(),
                             doc_ids=qrels_columns.doc_ids.copy(), relevance=qrels_columns.relevance.copy(),
                             lines=qrels_columns.lines.copy())
        start = time.perf_counter()
        evaluator = SetEvaluator.from_columns(fresh, run_columns)
        built = time.perf_counter()
        arrays = {key: evaluator.array(trec) for key, (trec, _) in MEASURES.items()}
        done = time.perf_counter()
        build.append(built - start)
        compute.append(done - built)
        means = {key: float(values.mean()) for key, values in arrays.items()}
    return {"parse": parse, "build": _median(build), "compute": _median(compute), "compute_all": compute,
            "means": means}


def compute_pytrec_eval(qrels: str, run: str, repeat: int) -> dict:
    import pytrec_eval

    start = time.perf_counter()
    qrels_dict, run_dict = _read_qrels_dict(qrels), _read_run_dict(run)
    read = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, {trec for trec, _ in MEASURES.values()})
    built = time.perf_counter()
    compute, means = [], {}
    for _ in range(repeat):
        begin = time.perf_counter()
        results = evaluator.evaluate(run_dict)
        compute.append(time.perf_counter() - begin)
        means = _pytrec_means(results)
    return {"parse": read - start, "build": built - read, "compute": _median(compute), "compute_all": compute,
            "means": means}


def compute_ranx(qrels: str, run: str, repeat: int) -> dict:
    from ranx import Qrels, Run, evaluate

    start = time.perf_counter()
    qrels_obj, run_obj = Qrels.from_file(qrels, kind="trec"), Run.from_file(run, kind="trec")
    read = time.perf_counter()
    names = [name for _, name in MEASURES.values()]
    evaluate(qrels_obj, run_obj, names, save_results_in_run=False)  # compiles or loads numba code
    warm = time.perf_counter()
    compute, results = [], {}
    for _ in range(repeat):
        begin = time.perf_counter()
        results = evaluate(qrels_obj, run_obj, names, save_results_in_run=False)
        compute.append(time.perf_counter() - begin)
    return {"parse": read - start, "build": None, "first_call": warm - read, "compute": _median(compute),
            "compute_all": compute, "means": {key: float(results[name]) for key, (_, name) in MEASURES.items()}}


def work_shared_qrels(qrels: str, run: str, repeat: int) -> dict:
    """One process: the qrels read once, then ``repeat`` runs (the same file) each read, built against
    those qrels and scored (8 means), as ``evaluate QRELS RUN1 ... RUNn`` and ``compare`` do."""
    from retrieval_eval import SetEvaluator
    from retrieval_eval.io.formats import read_qrels_columns, read_run_columns

    start = time.perf_counter()
    judged = read_qrels_columns(qrels)
    qrels_read = time.perf_counter() - start
    per_run, parse, means = [], [], {}
    for _ in range(repeat):
        begin = time.perf_counter()
        columns = read_run_columns(run)
        parsed = time.perf_counter()
        evaluator = SetEvaluator.from_columns(judged, columns)
        means = {key: float(evaluator.aggregate(trec)) for key, (trec, _) in MEASURES.items()}
        per_run.append(time.perf_counter() - begin)
        parse.append(parsed - begin)
    return {"qrels_read": qrels_read, "runs": per_run, "parse": parse, "means": means}


WORKERS = {
    "api": work_api,
    "pytrec_eval": work_pytrec_eval,
    "ir_measures": work_ir_measures,
    "ranx": work_ranx,
    "cli-inprocess": work_cli_inprocess,
}
COMPUTE_WORKERS = {"ours": compute_ours, "pytrec_eval": compute_pytrec_eval, "ranx": compute_ranx,
                   "shared-qrels": work_shared_qrels}


def worker_main(kind: str, name: str, qrels: str, run: str, repeat: int) -> int:
    start = time.perf_counter()
    if kind == "end-to-end":
        result = {"means": WORKERS[name](qrels, run)}
    else:
        result = COMPUTE_WORKERS[name](qrels, run, repeat)
    result["inprocess"] = time.perf_counter() - start
    result["maxrss_kb"] = _maxrss_kb()
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    return 0


# ==================================================================================================
# The driver


def parse_trec_output(text: str) -> dict[str, float]:
    """``map  all  0.1234`` lines -> {canonical key: value} for the measures we compare."""
    means = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] == "all" and fields[0] in TREC_TO_KEY:
            means[TREC_TO_KEY[fields[0]]] = float(fields[2])
    return means


def _time_binary() -> str | None:
    path = "/usr/bin/time"
    return path if os.access(path, os.X_OK) else None


#: environment of every timed process (set by :func:`main`)
CHILD_ENV: dict[str, str] | None = None


def _killed_after(process: subprocess.Popen, timeout: float) -> threading.Timer:
    """A watchdog that kills ``process`` after ``timeout`` seconds (cancel it once the process ended).

    The wait itself must block: ``Popen.wait(timeout=...)`` polls with sleeps that double up to
    50 ms, so a process was seen to end up to 50 ms late, and every wall time came out rounded up
    to the next of 0.064, 0.114, 0.164, ... s.
    """
    watchdog = threading.Timer(timeout, process.kill)
    watchdog.daemon = True
    watchdog.start()
    return watchdog


def run_process(command: list[str], timeout: float) -> dict:
    """Run ``command``; its wall time (measured here), exit code and output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=CHILD_ENV)
        watchdog = _killed_after(process, timeout)
        process.wait()
        wall = time.perf_counter() - start
        watchdog.cancel()
        if wall >= timeout:
            return {"ok": False, "error": f"timed out after {timeout:.0f} s"}
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    return {"ok": process.returncode == 0, "wall": wall, "rc": process.returncode, "stdout": stdout,
            "stderr": stderr}


def _wait4_process(command: list[str], timeout: float) -> dict:
    """Like :func:`run_process`, but the peak RSS comes from ``os.wait4`` (no /usr/bin/time)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=CHILD_ENV)
        watchdog = _killed_after(process, timeout)
        _, status, usage = os.wait4(process.pid, 0)  # blocking: see _killed_after
        wall = time.perf_counter() - start
        watchdog.cancel()
        if wall >= timeout:
            process.returncode = -9
            return {"ok": False, "error": f"timed out after {timeout:.0f} s"}
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {"ok": process.returncode == 0, "wall": wall, "rc": process.returncode,
                "stdout": out.read().decode("utf-8", "replace"), "stderr": err.read().decode("utf-8", "replace"),
                "maxrss_kb": usage.ru_maxrss}


def run_external(command: list[str], timeout: float) -> dict:
    """A command-line tool: wall and peak RSS from /usr/bin/time when available."""
    timer = _time_binary()
    if timer is None:
        result = _wait4_process(command, timeout)
        if result["ok"]:
            result["source"] = "wait4"
        return result
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        result = run_process([timer, "-f", "%e,%M", "-o", report.name, *command], timeout)
        if not result["ok"]:
            return result
        elapsed, maxrss = report.read().strip().splitlines()[-1].split(",")
    result["maxrss_kb"] = int(maxrss)
    result["time_e"] = float(elapsed)
    result["source"] = "/usr/bin/time"
    return result


def run_worker(kind: str, name: str, qrels: str, run: str, repeat: int, timeout: float) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--worker", kind, name, qrels, run,
               "--repeat", str(repeat)]
    result = run_process(command, timeout)
    if result["ok"]:
        try:
            payload = json.loads(result["stdout"].strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"ok": False, "error": "the worker printed no result", "stderr": result["stderr"]}
        result.update(payload)
    return result


def cli_command() -> list[str]:
    script = shutil.which("retrieval-eval", path=os.path.dirname(sys.executable)) or shutil.which("retrieval-eval")
    return [script] if script else [sys.executable, "-m", "retrieval_eval"]


def run_tool(tool: str, qrels: str, run: str, timeout: float) -> dict:
    """One end-to-end evaluation: {"ok", "wall", "maxrss_kb", "means", ...}."""
    if tool == "cli":
        if _time_binary() is None:
            return run_worker("end-to-end", "cli-inprocess", qrels, run, 1, timeout)
        result = run_external([*cli_command(), "evaluate", "-m", "official", "-m", "ndcg_cut.10", qrels, run],
                              timeout)
    elif tool == "trec_eval":
        result = run_external(["trec_eval", "-c", "-m", "official", "-m", "ndcg_cut.10", qrels, run], timeout)
    else:
        return run_worker("end-to-end", tool, qrels, run, 1, timeout)
    if result["ok"]:
        result["means"] = parse_trec_output(result["stdout"])
    return result


def available_tools() -> dict[str, str | None]:
    """tool -> None when usable, else why not."""
    have = {
        "cli": None,
        "api": None,
        "pytrec_eval": None if importlib.util.find_spec("pytrec_eval") else "pytrec_eval is not installed",
        "ir_measures": None if importlib.util.find_spec("ir_measures") else "ir_measures is not installed",
        "ranx": None if importlib.util.find_spec("ranx") else "ranx is not installed",
        "trec_eval": None if shutil.which("trec_eval") else "no trec_eval binary on PATH",
    }
    return have


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def ensure_data(shape: str, workdir: str) -> tuple[str, str]:
    sys.path.insert(0, HERE)
    import generate

    qrels, run = generate.paths(shape, workdir)
    if not (os.path.exists(qrels) and os.path.exists(run)):
        start = time.perf_counter()
        generate.generate(shape, workdir)
        print(f"generated {shape} into {workdir} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return qrels, run


def describe_data(qrels: str, run: str) -> str:
    def count(path: str) -> tuple[int, set[str]]:
        lines, queries = 0, set()
        with open(path, "rb") as handle:
            for line in handle:
                lines += 1
                queries.add(line.split(None, 1)[0])
        return lines, queries

    q_lines, q_queries = count(qrels)
    r_lines, r_queries = count(run)
    return (f"{len(r_queries)} queries, {r_lines:,} run lines ({os.path.getsize(run) / 1e6:.0f} MB), "
            f"{q_lines:,} judgments for {len(q_queries)} queries ({os.path.getsize(qrels) / 1e6:.1f} MB)")


def compare(results: dict[str, dict[str, float]], reference: str) -> tuple[list[str], list[str]]:
    """(disagreements on the checked measures, differences on the other measures)."""
    problems, notes = [], []
    base = results.get(reference)
    if not base:
        return [f"no reference values ({reference} failed)"], notes
    for tool, means in results.items():
        if tool == reference:
            continue
        for key, value in means.items():
            if key not in base:
                continue
            delta = abs(value - base[key])
            if delta > TOLERANCE:
                line = f"{tool} {key} = {value:.6f}, {reference} = {base[key]:.6f} (|diff| {delta:.2g})"
                (problems if key in CHECKED else notes).append(line)
        missing = [key for key in CHECKED if key not in means]
        if missing:
            problems.append(f"{tool} reported no {', '.join(missing)}")
    return problems, notes


def _fmt(value: float | None, digits: int = 2) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.{digits}f}" if value >= 0.01 or value == 0 else f"{value:.4f}"


def dict_shape(shape: str, repeat: int, tools: str | None) -> int:
    """Time an in-memory dict shape with ``dicts.py``, all tools in this one process."""
    sys.path.insert(0, HERE)
    import dicts

    argv = ["--queries", str(DICT_SHAPES[shape]), "--repeat", str(repeat), "--skip-loop"]
    return dicts.main(argv + (["--tools", tools] if tools else []))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="msmarco", choices=SHAPES, help="the data (see generate.py)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions per tool (median reported)")
    parser.add_argument("--workdir", default=DEFAULT_WORKDIR, help=f"where data lives (default {DEFAULT_WORKDIR})")
    parser.add_argument("--tools", help="comma-separated end-to-end tools to time (default: all available; "
                        f"for 'tiny' all but ranx): {','.join(END_TO_END)}")
    parser.add_argument("--compute-tools", help="comma-separated compute-only tools, '' to skip that part "
                        f"(default: all available; for 'tiny' all but ranx): {','.join(COMPUTE_ONLY)}")
    parser.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up round on 'tiny'")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds allowed per process")
    parser.add_argument("--json", metavar="PATH", help="also write every measurement to PATH")
    parser.add_argument("--many-runs", type=int, default=0, metavar="N",
                        help="also time N runs against qrels read once, in one process (the API path of "
                        "'evaluate QRELS RUN1 ... RUNn')")
    args = parser.parse_args(argv)
    cache_bytecode(args.workdir)  # the timed commands start as an installed package's do
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    if args.shape in DICT_SHAPES:
        return dict_shape(args.shape, args.repeat, args.tools)
    if args.shape in PREFS_SHAPES:  # our CLI against trec_eval -O2 on preference judgments
        sys.path.insert(0, HERE)
        import prefs

        return prefs.main(["--queries", str(PREFS_SHAPES[args.shape]), "--repeat", str(args.repeat),
                           "--workdir", args.workdir])

    global CHILD_ENV
    CHILD_ENV = child_environment(args.workdir)
    qrels, run = ensure_data(args.shape, args.workdir)
    load_before = os.getloadavg()
    availability = available_tools()
    if args.shape == "tiny":
        # The smoke-test shape: ranx's fixed start-up (numba, ~5 s per process) would be all we measure.
        if args.tools is None and availability["ranx"] is None:
            availability["ranx"] = "left out for the tiny shape (its ~5 s numba start-up); pass --tools to add it"
        if args.compute_tools is None:
            args.compute_tools = "ours,pytrec_eval"
    if args.shape.startswith("sessions") and args.tools is None:
        # trec_eval looks each query up in a list (minutes for 1 M queries) and the Python tools need
        # GBs of dicts: by default only ours; name others in --tools to add them.
        args.tools = "cli,api"
        if args.compute_tools is None:
            args.compute_tools = "ours"
    requested = [t for t in (args.tools or ",".join(END_TO_END)).split(",") if t]
    unknown = [t for t in requested if t not in END_TO_END]
    if unknown:
        parser.error(f"unknown tool(s) {', '.join(unknown)}; expected some of {', '.join(END_TO_END)}")
    tools = [t for t in requested if availability[t] is None]
    skipped = {t: availability[t] for t in requested if availability[t] is not None}
    compute_tools = [t for t in (",".join(COMPUTE_ONLY) if args.compute_tools is None else args.compute_tools).split(",")
                     if t]
    unknown = [t for t in compute_tools if t not in COMPUTE_ONLY]
    if unknown:
        parser.error(f"unknown compute tool(s) {', '.join(unknown)}; expected some of {', '.join(COMPUTE_ONLY)}")
    compute_tools = [t for t in compute_tools if t == "ours" or availability.get(t) is None]

    if not args.no_warmup and args.shape != "tiny":
        warm_q, warm_r = ensure_data("tiny", args.workdir)
        for tool in tools:
            run_tool(tool, warm_q, warm_r, args.timeout)

    runs: dict[str, list[dict]] = {tool: [] for tool in tools}
    for repetition in range(args.repeat):
        for tool in tools:  # round robin
            result = run_tool(tool, qrels, run, args.timeout)
            runs[tool].append(result)
            status = f"{result['wall']:.2f} s" if result["ok"] else f"FAILED ({result.get('error') or result.get('rc')})"
            print(f"[{repetition + 1}/{args.repeat}] {tool}: {status}", file=sys.stderr)

    compute: dict[str, dict] = {}
    for tool in compute_tools:
        compute[tool] = run_worker("compute", tool, qrels, run, args.repeat, args.timeout)
        state = "ok" if compute[tool]["ok"] else "FAILED"
        print(f"[compute] {tool}: {state}", file=sys.stderr)

    shared = None
    many_cli: dict[str, list[float]] = {"one": [], "many": []}
    if args.many_runs:
        shared = run_worker("compute", "shared-qrels", qrels, run, args.many_runs, args.timeout)
        print(f"[shared qrels] {'ok' if shared['ok'] else 'FAILED'}", file=sys.stderr)
        # The command line itself, as issue 16's target states it: `evaluate QRELS RUN x N` in one process
        # against twice one run's command plus N parses, the two commands alternating.
        command = [*cli_command(), "evaluate", "-m", "official", "-m", "ndcg_cut.10", qrels]
        for repetition in range(args.repeat):
            for key, runs_given in (("one", [run]), ("many", [run] * args.many_runs)):
                result = run_process([*command, *runs_given], args.timeout)
                if result["ok"]:
                    many_cli[key].append(result["wall"])
            print(f"[{repetition + 1}/{args.repeat}] cli, 1 and {args.many_runs} runs", file=sys.stderr)

    # ---------------------------------------------------------------------------- the report
    load_after = os.getloadavg()
    out = []
    import retrieval_eval  # the code the tools ran: an installed copy, or a checkout on PYTHONPATH

    versions = ", ".join([f"retrieval_eval {retrieval_eval.__version__}"] + [f"{name} {_version(dist)}" for name, dist in (
        ("numpy", "numpy"), ("pytrec_eval-terrier", "pytrec-eval-terrier"), ("ir_measures", "ir_measures"),
        ("ranx", "ranx"), ("numba", "numba"))])
    out.append(f"### Shape `{args.shape}`: {describe_data(qrels, run)}")
    out.append("")
    out.append(f"{datetime.date.today().isoformat()}, Python {platform.python_version()}, {versions}; "
               f"{os.cpu_count()} CPUs (1-min load average {load_before[0]:.2f} before, {load_after[0]:.2f} after); "
               f"median of {args.repeat} run(s) per tool.")
    out.append("")
    out.append("End to end, from the files, one process per run:")
    out.append("")
    out.append("| tool | wall s (median) | in-process s | peak RSS MB | ratio to our CLI |")
    out.append("|---|---:|---:|---:|---:|")
    cli_wall = None
    summary: dict[str, dict] = {}
    for tool in tools:
        good = [r for r in runs[tool] if r["ok"]]
        if not good:
            reason = runs[tool][0].get("error") or (runs[tool][0].get("stderr") or "").strip()[-200:]
            summary[tool] = {"failed": reason}
            continue
        summary[tool] = {
            "wall": _median([r["wall"] for r in good]),
            "inprocess": _median([r["inprocess"] for r in good]) if "inprocess" in good[0] else None,
            "maxrss_mb": _median([r["maxrss_kb"] for r in good]) / 1024,
            "means": good[0].get("means", {}),
            "failures": len(runs[tool]) - len(good),
        }
    if "cli" in summary and "wall" in summary["cli"]:
        cli_wall = summary["cli"]["wall"]
    labels = {"cli": "retrieval-eval CLI", "api": "retrieval_eval API (from_trec)", "pytrec_eval": "pytrec_eval",
              "ir_measures": "ir_measures", "ranx": "ranx", "trec_eval": "trec_eval (C)"}
    for tool in tools:
        row = summary[tool]
        if "failed" in row:
            out.append(f"| {labels[tool]} | failed | | | {row['failed']!s:.60} |")
            continue
        ratio = f"{row['wall'] / cli_wall:.2f}" if cli_wall else "-"
        out.append(f"| {labels[tool]} | {_fmt(row['wall'])} | {_fmt(row['inprocess'])} | "
                   f"{row['maxrss_mb']:.0f} | {ratio} |")
    for tool, reason in skipped.items():
        out.append(f"| {labels[tool]} | skipped: {reason} | | | |")

    if compute:
        out.append("")
        out.append("Compute only, 8 measures (parse and build shown for where the rest of the time goes):")
        out.append("")
        out.append("| tool | compute s (median) | parse s | build s | peak RSS MB |")
        out.append("|---|---:|---:|---:|---:|")
        compute_labels = {
            "ours": "retrieval_eval: 8 x `array()` on a fresh SetEvaluator",
            "pytrec_eval": "pytrec_eval: `evaluate(run)`, dicts in memory",
            "ranx": "ranx: `evaluate` on loaded Qrels/Run (after 1 warm call)",
        }
        for tool, result in compute.items():
            if not result["ok"]:
                reason = result.get("error") or (result.get("stderr") or "").strip()[-200:]
                out.append(f"| {compute_labels[tool]} | failed: {reason!s:.60} | | | |")
                continue
            out.append(f"| {compute_labels[tool]} | {_fmt(result['compute'], 3)} | {_fmt(result['parse'])} | "
                       f"{_fmt(result.get('build'), 2)} | {result['maxrss_kb'] / 1024:.0f} |")
        out.append("")
        out.append("Parse: files to columns (ours), to dicts by a Python loop (pytrec_eval), to Qrels/Run "
                   "(ranx). Build: SetEvaluator.from_columns (ours), RelevanceEvaluator(qrels) (pytrec_eval).")

    if shared is not None:
        out.append("")
        if shared["ok"]:
            first, rest = shared["runs"][0], shared["runs"][1:]
            out.append(f"{args.many_runs} runs against qrels read once, one process: qrels read "
                       f"{shared['qrels_read']:.2f} s; the first run {first:.2f} s (its parse "
                       f"{shared['parse'][0]:.2f} s), each further run {_median(rest) if rest else float('nan'):.2f} s "
                       f"(median; parse {_median(shared['parse'][1:]) if rest else float('nan'):.2f} s); "
                       f"{shared['inprocess']:.2f} s in all, peak RSS {shared['maxrss_kb'] / 1024:.0f} MB.")
        else:
            out.append(f"{args.many_runs} runs against qrels read once: FAILED "
                       f"{(shared.get('error') or shared.get('stderr') or '')[-200:]}")
        if shared["ok"] and many_cli["one"] and many_cli["many"]:
            one, many, parse = _median(many_cli["one"]), _median(many_cli["many"]), _median(shared["parse"][1:] or
                                                                                          shared["parse"])
            budget = 2 * one + args.many_runs * parse
            out.append("")
            out.append(f"The command line, `evaluate QRELS RUN` against `evaluate QRELS RUN x {args.many_runs}` "
                       f"(medians of {len(many_cli['many'])}, alternating): one run {one:.3f} s, "
                       f"{args.many_runs} runs {many:.3f} s; the budget, twice one run plus {args.many_runs} "
                       f"parses of {parse * 1000:.1f} ms, is {budget:.3f} s: "
                       f"{'met' if many <= budget else 'not met'} ({many / budget:.2f} of it).")

    # ---------------------------------------------------------------------------- agreement
    all_means = {tool: row["means"] for tool, row in summary.items() if "means" in row}
    for tool, result in compute.items():
        if result["ok"]:
            all_means[f"{tool} (compute)"] = result["means"]
    reference = "api" if "api" in all_means else next(iter(all_means), "")
    problems, notes = compare(all_means, reference)
    out.append("")
    if problems:
        out.append(f"Agreement on {', '.join(CHECKED)} (tolerance {TOLERANCE:g}, reference: {reference}): "
                   "DISAGREEMENTS")
        out.extend(f"- {p}" for p in problems)
    else:
        out.append(f"Agreement: all tools give the same means of {', '.join(CHECKED)} within {TOLERANCE:g}.")
    if notes:
        out.append("")
        out.append("Other measures that differ by more than the tolerance:")
        out.extend(f"- {n}" for n in notes)
    print("\n".join(out))

    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"shape": args.shape, "repeat": args.repeat, "end_to_end": runs, "compute": compute,
                       "summary": summary, "skipped": skipped, "problems": problems, "notes": notes},
                      handle, indent=1, default=str)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker = argparse.ArgumentParser()
        worker.add_argument("--worker", nargs=2, metavar=("KIND", "NAME"))
        worker.add_argument("qrels")
        worker.add_argument("run")
        worker.add_argument("--repeat", type=int, default=1)
        ns = worker.parse_args()
        sys.exit(worker_main(ns.worker[0], ns.worker[1], ns.qrels, ns.run, ns.repeat))
    sys.exit(main())
