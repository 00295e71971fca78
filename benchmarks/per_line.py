"""Many tiny queries against MS MARCO, per line: what a line costs when every line is a query.

    python benchmarks/per_line.py [--repeat 5] [--workdir DIR] [--small SHAPE] [--large SHAPE]

Issue 29's target: 1 M queries of one document each (``sessions-1-small``: qrels and run, 2.17 M
lines) cost per line at most 1.5x what the ``msmarco`` shape (6.99 M lines) costs per line. Both
run ``retrieval-eval evaluate -m official -m ndcg_cut.10 QRELS RUN`` in fresh processes,
alternating, ``--repeat`` times; the script prints each one's median wall and CPU time (user plus
system: the load disturbs it less), its time per line, and the ratio of the two per-line costs,
with the CPU model and the load average before and after. The data is written by
``generate.py`` the first time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import generate  # the data writer beside this script
from _bytecode import cache_bytecode
from dicts import cpu_model

DEFAULT_WORKDIR = os.path.join(tempfile.gettempdir(), "retrieval_eval-benchmarks")  # as run.py's
COMMAND = ["evaluate", "-m", "official", "-m", "ndcg_cut.10"]


def lines_in(*paths: str) -> int:
    total = 0
    for path in paths:
        with open(path, "rb") as handle:
            total += sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))
    return total


def timed(qrels: str, run: str) -> tuple[float, float]:
    """Wall and CPU seconds of one evaluation in a fresh process (its notes on stderr dropped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "retrieval_eval", *COMMAND, qrels, run], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds, each shape once per round (median reported)")
    parser.add_argument("--workdir", default=DEFAULT_WORKDIR, help=f"where the data lives (default {DEFAULT_WORKDIR})")
    parser.add_argument("--small", default="sessions-1-small", help="the shape of tiny queries")
    parser.add_argument("--large", default="msmarco", help="the shape it is compared with")
    args = parser.parse_args(argv)
    cache_bytecode(args.workdir)  # the timed commands start as an installed package's do
    shapes = {}
    for shape in (args.small, args.large):
        qrels, run = generate.paths(shape, args.workdir)
        if not (os.path.exists(qrels) and os.path.exists(run)):
            generate.generate(shape, args.workdir)
        shapes[shape] = (qrels, run, lines_in(qrels, run))
    load_before = os.getloadavg()[0]
    walls: dict[str, list[float]] = {shape: [] for shape in shapes}
    cpus: dict[str, list[float]] = {shape: [] for shape in shapes}
    for _ in range(args.repeat):
        for shape, (qrels, run, _) in shapes.items():
            wall, cpu = timed(qrels, run)
            walls[shape].append(wall)
            cpus[shape].append(cpu)
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical); load average {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after; median of {args.repeat}")
    print("| shape | lines | wall s | CPU s | wall per line | CPU per line |")
    print("|---|---:|---:|---:|---:|---:|")
    per_line = {}
    for shape, (_, _, lines) in shapes.items():
        wall, cpu = statistics.median(walls[shape]), statistics.median(cpus[shape])
        per_line[shape] = (wall / lines, cpu / lines)
        print(f"| `{shape}` | {lines:,} | {wall:.3f} | {cpu:.3f} | {wall / lines * 1e6:.3f} us | {cpu / lines * 1e6:.3f} us |")
    small, large = per_line[args.small], per_line[args.large]
    print(f"\nper line, {args.small} / {args.large}: {small[0] / large[0]:.2f}x wall, {small[1] / large[1]:.2f}x CPU "
          "(issue 29's target: at most 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
