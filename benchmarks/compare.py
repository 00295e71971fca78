"""Comparing 10 runs: ``retrieval-eval compare`` next to trec_eval run 10 times and ranx's ``compare``.

    python benchmarks/compare.py --shape robust [--runs 10] [--repeat 3] [--workdir DIR]

The shape's qrels and run come from ``generate.py``; the other runs are the same run with seeded
noise added to every score (so rankings differ and ties change). Each repetition times, in turn and
each in a fresh process, end to end from the files:

* ``ours t``            ``retrieval-eval compare QRELS RUN1..RUN10 -m AP -m nDCG@10 -m P@10`` (paired t, Holm);
* ``ours permutation``  the same with ``--test permutation --permutations 10000 --seed 1``;
* ``trec_eval x10``     ``trec_eval -q -m map -m ndcg_cut.10 -m P.10 QRELS RUNi`` for each run, one after
  the other (per-query values only: no test is run), if a trec_eval binary is given or on PATH;
* ``ranx compare``      ``Qrels.from_file``, ``Run.from_file`` x10, ``compare(..., stat_test="student")``,
  if ranx is installed.

Medians of wall time are printed, with ratios to ``ours t``.
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

import numpy as np
from _bytecode import cache_bytecode

HERE = os.path.dirname(os.path.abspath(__file__))
MEASURES = ["-m", "AP", "-m", "nDCG@10", "-m", "P@10"]

RANX = """
import sys
from ranx import Qrels, Run, compare
qrels = Qrels.from_file(sys.argv[1], kind="trec")
runs = [Run.from_file(path, kind="trec", name=str(i)) for i, path in enumerate(sys.argv[2:])]
compare(qrels, runs, metrics=["map", "ndcg@10", "precision@10"], stat_test="student", max_p=0.05)
"""


def make_runs(workdir: str, shape: str, count: int) -> tuple[str, list[str]]:
    qrels, base = os.path.join(workdir, f"{shape}.qrels"), os.path.join(workdir, f"{shape}.run")
    if not os.path.exists(base):
        subprocess.run([sys.executable, os.path.join(HERE, "generate.py"), shape, workdir], check=True)
    paths = [base]
    for i in range(1, count):
        path = os.path.join(workdir, f"{shape}.noisy{i}.run")
        paths.append(path)
        if os.path.exists(path):
            continue
        rng = np.random.default_rng(i)
        with open(base, encoding="utf-8") as source, open(path + ".part", "w", encoding="utf-8") as out:
            while True:
                lines = source.readlines(1 << 24)
                if not lines:
                    break
                noise = rng.random(len(lines)) * 0.05 * i
                for line, extra in zip(lines, noise.tolist()):
                    q, q0, doc, rank, score, tag = line.split()[:6]
                    out.write(f"{q} {q0} {doc} {rank} {float(score) + extra:.4f} {tag}\n")
        os.replace(path + ".part", path)
    return qrels, paths


def timed(commands: list[list[str]]) -> float:
    """Wall seconds of running ``commands`` one after the other."""
    start = time.perf_counter()
    for command in commands:
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="robust")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trec-eval", default=shutil.which("trec_eval"), help="trec_eval binary (default: on PATH)")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "retrieval_eval-benchmarks"))
    args = parser.parse_args()
    cache_bytecode(args.workdir)  # the timed commands start as an installed package's do
    os.makedirs(args.workdir, exist_ok=True)
    qrels, runs = make_runs(args.workdir, args.shape, args.runs)
    cli = [sys.executable, "-m", "retrieval_eval", "compare", qrels, *runs, *MEASURES]
    tools: dict[str, list[list[str]]] = {
        "ours t": [cli],
        "ours permutation": [[*cli, "--test", "permutation", "--permutations", "10000", "--seed", "1"]],
    }
    if args.trec_eval:
        tools["trec_eval x10"] = [[args.trec_eval, "-q", "-m", "map", "-m", "ndcg_cut.10", "-m", "P.10", qrels, run]
                                  for run in runs]
    try:
        import ranx  # noqa: F401

        tools["ranx compare"] = [[sys.executable, "-c", RANX, qrels, *runs]]
    except ImportError:
        print("ranx is not installed: its column is skipped")
    samples: dict[str, list[float]] = {name: [] for name in tools}
    for _ in range(args.repeat):
        for name, commands in tools.items():
            samples[name].append(timed(commands))
    print(f"{args.shape}: {len(runs)} runs; median of {args.repeat}")
    print(f"{'tool':<20}{'wall s':>10}{'ratio':>8}")
    ours = statistics.median(samples["ours t"])
    for name, values in samples.items():
        print(f"{name:<20}{statistics.median(values):>10.2f}{statistics.median(values) / ours:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
