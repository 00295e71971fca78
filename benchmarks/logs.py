"""GAUC over an impression log: retrieval_eval next to evaluating a run of the same size and a pandas baseline.

    python benchmarks/logs.py [--sessions 1000000] [--items 10] [--workdir DIR] [--repeat 3]
                              [--pandas-sessions 20000]

The log (seeded, so byte-identical between runs) has ``--sessions`` sessions of ``--items`` impressions,
``group item score label`` tab-separated, scores with two decimals (so ties are common) and about 10%
clicks. The same rows are also written as a TREC qrels and run. Each repetition times, each in a fresh
process and in turn:

* ``log``   ``retrieval-eval evaluate --log LOG -m GAUC -m AUC -m nDCG@10``;
* ``run``   ``retrieval-eval evaluate QRELS RUN -m GAUC -m AUC -m nDCG@10``: the same rows as a qrels
  file and a run file (issue 29's yardstick: the log in at most 1.1x its time);
* ``pandas`` ``df.groupby('group').apply(roc_auc_score)`` over the sessions with both classes, the usual
  hand-written GAUC. It is timed on the first ``--pandas-sessions`` sessions (it is far too slow for a
  million) and scaled linearly to the whole log; the output says so. Its mean is compared with ours
  on the same sessions.

Medians of wall time (start-up, reading and computing included), CPU time (user and system: it
varies less than wall time on a busy machine) and peak RSS are printed, and the budgets of issue 29
are checked: the log in at most 1.1x the run's time, and in at most 3x the log file's size of memory.
The two must print the same values.
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

HERE = os.path.dirname(os.path.abspath(__file__))


def generate(workdir: str, sessions: int, items: int) -> tuple[str, str, str]:
    stem = os.path.join(workdir, f"log-{sessions}x{items}")
    paths = (stem + ".tsv", stem + ".qrels", stem + ".run")
    if all(os.path.exists(p) for p in paths):
        return paths
    import pandas as pd

    rng = np.random.default_rng(2026)
    n = sessions * items
    group = np.repeat(np.arange(sessions), items)
    frame = pd.DataFrame({
        "group": pd.Series(group).map("s{}".format),
        "item": pd.Series(rng.integers(0, 10 * n, n)).map("i{}".format),
        "score": np.round(rng.random(n), 2),
        "label": (rng.random(n) < 0.1).astype(np.int64),
    })
    frame = frame.drop_duplicates(["group", "item"])
    frame.to_csv(paths[0], sep="\t", header=False, index=False)
    frame.assign(it="0")[["group", "it", "item", "label"]].to_csv(paths[1], sep=" ", header=False, index=False)
    frame.assign(q0="Q0", rank=0, tag="log")[["group", "q0", "item", "rank", "score", "tag"]].to_csv(
        paths[2], sep=" ", header=False, index=False)
    return paths


#: The log's time at most this many times the run's, its peak memory at most this many times its file.
TIME_BUDGET, MEMORY_BUDGET = 1.1, 3.0
MEASURES = ["-m", "GAUC", "-m", "AUC", "-m", "nDCG@10"]


def timed(command: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak RSS in MB (10^6 bytes, as the file's size) and stdout of one fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed: {' '.join(command)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024 / 1e6, out


def pandas_gauc(log: str, sessions: int) -> tuple[float, float, int]:
    """Seconds for the groupby-apply GAUC over the first ``sessions`` sessions, its value, the sessions used."""
    import pandas as pd
    from sklearn.metrics import roc_auc_score

    frame = pd.read_csv(log, sep="\t", header=None, names=["group", "item", "score", "label"],
                        nrows=sessions * 20)  # generous: the log has fewer rows per session than 20
    frame = frame[frame["group"].isin(frame["group"].unique()[:sessions])]
    start = time.perf_counter()
    both = frame.groupby("group")["label"].transform(lambda y: 0 < y.sum() < len(y))
    values = frame[both.astype(bool)].groupby("group")[["label", "score"]].apply(
        lambda g: roc_auc_score(g["label"], g["score"]))
    seconds = time.perf_counter() - start
    return seconds, float(values.mean()), frame["group"].nunique()


def ours_on_subset(log: str, sessions: int) -> float:
    import io

    from retrieval_eval import SetEvaluator

    with open(log, encoding="utf-8") as handle:
        rows, seen = [], set()
        for line in handle:
            group = line.split("\t", 1)[0]
            if group not in seen:
                if len(seen) == sessions:
                    break
                seen.add(group)
            rows.append(line)
    return SetEvaluator.from_log(io.StringIO("".join(rows))).aggregate("GAUC")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pandas-sessions", type=int, default=20_000, help="0: skip the pandas baseline")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "retrieval_eval-benchmarks"))
    args = parser.parse_args()
    cache_bytecode(args.workdir)  # the timed commands start as an installed package's do
    os.makedirs(args.workdir, exist_ok=True)
    log, qrels, run = generate(args.workdir, args.sessions, args.items)
    cli = [sys.executable, "-m", "retrieval_eval", "evaluate"]
    commands = {
        "log": [*cli, "--log", log, *MEASURES],
        "run": [*cli, qrels, run, *MEASURES],
    }
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    outputs = {}
    for repetition in range(args.repeat):  # in turn, the first one alternating, so that a busy moment hits both
        for name in list(commands)[:: 1 if repetition % 2 == 0 else -1]:
            wall, cpu, rss, outputs[name] = timed(commands[name])
            times[name].append((wall, cpu, rss))
    with open(log, "rb") as handle:
        lines = sum(1 for _ in handle)
    print(f"log: {args.sessions:,} sessions x {args.items} items = {lines:,} rows, "
          f"{os.path.getsize(log) / 1e6:.0f} MB; median of {args.repeat}")
    print(f"{'tool':<10}{'wall s':>10}{'CPU s':>10}{'peak RSS MB':>14}")
    medians, cpus, peaks = {}, {}, {}
    for name, samples in times.items():
        medians[name] = statistics.median(w for w, _, _ in samples)
        cpus[name] = statistics.median(c for _, c, _ in samples)
        peaks[name] = statistics.median(r for _, _, r in samples)
        print(f"{name:<10}{medians[name]:>10.2f}{cpus[name]:>10.2f}{peaks[name]:>14.0f}")
    size = os.path.getsize(log) / 1e6
    time_ratio, memory_ratio = medians["log"] / medians["run"], peaks["log"] / size
    same = outputs["log"] == outputs["run"]
    print(f"log / run: time {time_ratio:.2f}x (CPU {cpus['log'] / cpus['run']:.2f}x; budget {TIME_BUDGET}x), "
          f"peak RSS {memory_ratio:.2f}x the log's {size:.0f} MB (budget {MEMORY_BUDGET}x): "
          f"{'within' if time_ratio <= TIME_BUDGET and memory_ratio <= MEMORY_BUDGET else 'OVER'}; "
          f"values {'identical' if same else 'DIFFER'}")
    if not args.pandas_sessions:
        print(outputs["log"], end="")
        return 0
    seconds, value, used = pandas_gauc(log, args.pandas_sessions)
    scaled = seconds * args.sessions / used
    print(f"{'pandas':<10}{scaled:>10.1f}{'':>14}  (timed on {used:,} sessions: {seconds:.2f} s, scaled x"
          f"{args.sessions / used:.0f}; compute only, reading not counted)")
    print(f"pandas / log: {scaled / medians['log']:.0f}x")
    ours = ours_on_subset(log, used)
    print(f"GAUC on those {used:,} sessions: ours {ours:.12f}, pandas+sklearn {value:.12f}, "
          f"difference {abs(ours - value):.1e}")
    print(outputs["log"], end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
