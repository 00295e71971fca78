"""Mutation fuzzing of the TREC readers and the command line.

    python fuzz/run.py [--iterations 2000] [--seed 0] [--seconds 50]

Starts from the bundled sample files and the seeds in ``fuzz/seeds/`` (input shapes that once broke
something: ``NAME.qrels`` and ``NAME.run``, raw bytes such as gzip without ``.gz``, bzip2, xz or zstd
data, a gzip stream with trailing garbage, a run where qrels belong, lines ending in a lone CR, two
records on one line, ids that differ only in how they are displayed, a gzip line without end, a
Parquet run with a long id; and ``NAME.log``, labelled logs for ``read_log_columns``),
applies random mutations (bytes flipped, inserted or deleted; lines repeated, swapped or cut; NUL,
BOM, CR, non-UTF-8 bytes, huge numbers, gzip streams whole or cut; now and then a line length limit
of a few bytes), and runs every input through ``read_qrels_columns`` / ``read_run_columns`` /
``read_log_columns`` and through ``retrieval-eval evaluate`` (``evaluate --log`` for a log) in this process.

A *crash* is any of: an exception other than our input errors from a reader, an exception escaping
the command line, an exit code other than 0 or 2, or a traceback on stderr. Crashing inputs are
saved under ``--crashes`` for reproduction. The run stops after ``--iterations`` inputs or
``--seconds``, whichever comes first, prints one summary line, and exits 1 if anything crashed.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import os
import random
import sys
import time
import warnings
from pathlib import Path

from retrieval_eval.cli import main as cli_main
from retrieval_eval.data import sample_paths
from retrieval_eval.io.formats import read_log_columns, read_qrels_columns, read_run_columns
from retrieval_eval.model import InputWarning, RetrievalEvalError

#: Byte strings that reach the interesting corners of the format.
TOKENS = [b" ", b"\t", b"\n", b"\r\n", b"\r", b"\0", b"#", b"-", b"+", b".", b"e", b"E", b"_", b"0", b"9",
          b"nan", b"inf", b"-inf", b"1e400", b"1.7", b"\xff", b"\xc3\xa9", b"\xef\xbb\xbf", b"Q0",
          b"99999999999999999999", b"0.1234567890123456789", b"\x01"]


#: The environment variable of the line length limit (see docs/input-faults.md, line-too-long).
LINE_LIMIT = "RETRIEVAL_EVAL_MAX_LINE_BYTES"


def mutate(data: bytes, rnd: random.Random) -> bytes:
    """One to four random edits of ``data``."""
    for _ in range(rnd.randint(1, 4)):
        kind = rnd.randrange(8)
        at = rnd.randint(0, len(data))
        if kind == 0 and data:  # flip a byte
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([rnd.randrange(256)]) + data[at + 1:]
        elif kind == 1:  # insert a token
            data = data[:at] + rnd.choice(TOKENS) + data[at:]
        elif kind == 2:  # delete a range
            data = data[:at] + data[at + rnd.randint(1, 20):]
        elif kind in (3, 4):  # repeat or drop a line
            lines = data.split(b"\n")
            i = rnd.randrange(len(lines))
            lines[i:i + 1] = [lines[i]] * (2 if kind == 3 else 0)
            data = b"\n".join(lines)
        elif kind == 5:  # swap two lines
            lines = data.split(b"\n")
            i, j = rnd.randrange(len(lines)), rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            data = b"\n".join(lines)
        elif kind == 6:  # cut the file short
            data = data[:at]
        else:  # replace a field by a token
            fields = data.split(b" ")
            fields[rnd.randrange(len(fields))] = rnd.choice(TOKENS)
            data = b" ".join(fields)
    return data


def check_reader(reader, path: str) -> str:
    """'parsed', 'rejected', or raises (a crash)."""
    try:
        reader(path)
    except RetrievalEvalError:
        return "rejected"
    return "parsed"


#: A clean labelled log (``group item score label``), the first seed of the log reader.
CLEAN_LOG = b"session\titem\tscore\tclick\ns1\ta\t0.9\t1\ns1\tb\t0.4\t0\ns1\tc\t0.4\t1\ns2\td\t0.3\t1\n"


def check_cli(*files: str) -> str | None:
    """None if the command line behaved on ``qrels, run`` (or ``evaluate --log log``); else what went wrong."""
    out, err = io.StringIO(), io.StringIO()
    inputs = list(files) if len(files) == 2 else ["--log", *files]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli_main(["evaluate", "-q", "-m", "all_trec", *inputs])
        except SystemExit as exc:  # argparse; not expected with these arguments
            code = exc.code
        except Exception as exc:  # noqa: BLE001 - any escaping exception is the crash we look for
            return f"exception escaped the CLI: {type(exc).__name__}: {exc}"
    if code not in (0, 2):
        return f"exit code {code}"
    if "Traceback" in err.getvalue():
        return "traceback on stderr"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=50.0, help="stop early after this long")
    parser.add_argument("--workdir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "work"))
    parser.add_argument("--crashes", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "crashes"))
    args = parser.parse_args(argv)

    rnd = random.Random(args.seed)
    qrels_path, run_path = sample_paths()
    seeds = {"qrels": [Path(qrels_path).read_bytes()], "run": [Path(run_path).read_bytes()], "log": [CLEAN_LOG]}
    seed_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")
    for name in sorted(os.listdir(seed_dir)) if os.path.isdir(seed_dir) else []:
        kind = name.rsplit(".", 1)[-1]
        if kind in seeds:
            seeds[kind].append(Path(seed_dir, name).read_bytes())
    os.makedirs(args.workdir, exist_ok=True)
    paths = {kind: os.path.join(args.workdir, f"input.{kind}") for kind in seeds}
    counts = {"parsed": 0, "rejected": 0}
    crashes = 0
    start = time.perf_counter()
    tried = 0
    warnings.simplefilter("ignore", InputWarning)  # warnings are fine; crashes are not
    while tried < args.iterations and time.perf_counter() - start < args.seconds:
        tried += 1
        chosen = {kind: rnd.choice(pool) for kind, pool in seeds.items()}
        if rnd.random() < 0.1:  # a line limit short enough for the sample lines to reach it
            os.environ[LINE_LIMIT] = str(rnd.randint(1, 120))
        else:
            os.environ.pop(LINE_LIMIT, None)
        data = {kind: mutate(seed, rnd) if rnd.random() < 0.7 else seed for kind, seed in chosen.items()}
        for kind, content in list(data.items()):
            if rnd.random() < 0.05:  # a gzip stream, whole or cut
                packed = gzip.compress(content)
                data[kind] = packed[: rnd.randint(0, len(packed))] if rnd.random() < 0.5 else packed
                paths[kind] = os.path.join(args.workdir, f"input.{kind}.gz")
            else:
                paths[kind] = os.path.join(args.workdir, f"input.{kind}")
            with open(paths[kind], "wb") as out:
                out.write(data[kind])
        problem = None
        try:
            counts[check_reader(read_qrels_columns, paths["qrels"])] += 1
            counts[check_reader(read_run_columns, paths["run"])] += 1
            counts[check_reader(read_log_columns, paths["log"])] += 1
        except Exception as exc:  # noqa: BLE001
            problem = f"reader raised {type(exc).__name__}: {exc}"
        problem = problem or check_cli(paths["qrels"], paths["run"]) or check_cli(paths["log"])
        if problem:
            if LINE_LIMIT in os.environ:
                problem += f" (with {LINE_LIMIT}={os.environ[LINE_LIMIT]})"
            crashes += 1
            os.makedirs(args.crashes, exist_ok=True)
            for kind, path in paths.items():
                with open(os.path.join(args.crashes, f"crash{crashes}.{os.path.basename(path)}"), "wb") as out:
                    out.write(data[kind])
            print(f"crash {crashes}: {problem}", file=sys.stderr)
    os.environ.pop(LINE_LIMIT, None)
    elapsed = time.perf_counter() - start
    print(f"fuzz: tried {tried} input pairs in {elapsed:.1f} s (seed {args.seed}); reader results: "
          f"{counts['parsed']} parsed, {counts['rejected']} rejected; crashes: {crashes}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
