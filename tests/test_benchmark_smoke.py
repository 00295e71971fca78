"""The benchmark runner works end to end on its tiny shape (not a timing test: timings are not checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import retrieval_eval

ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_runner_on_the_tiny_shape(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--shape", "tiny", "--repeat", "1",
         "--workdir", str(tmp_path), "--many-runs", "2"],
        check=False, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "retrieval-eval CLI" in done.stdout and "pytrec_eval" in done.stdout
    assert "Agreement: all tools give the same means" in done.stdout
    assert "2 runs against qrels read once" in done.stdout and "`evaluate QRELS RUN x 2`" in done.stdout
    assert f"retrieval_eval {retrieval_eval.__version__}, numpy" in done.stdout  # the version of the code timed


def test_parquet_long_ids_benchmark_on_a_small_run(tmp_path: Path) -> None:
    """benchmarks/parquet_long_ids.py end to end on 20 x 50 rows: both runs give the same output."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "parquet_long_ids.py"), "--queries", "20", "--depth", "50",
         "--repeat", "1", "--order", "shuffled", "--workdir", str(tmp_path)],
        check=False, capture_output=True, text=True, timeout=300,
    )
    assert "outputs identical" in done.stdout, done.stdout + done.stderr
    assert "with a 4,096-byte id" in done.stdout


def test_dicts_benchmark_loop_agrees_with_pytrec_eval(tmp_path: Path) -> None:
    """benchmarks/dicts.py on small dicts: the per-query loop of ours and of pytrec_eval run, and agree."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "dicts.py"), "--queries", "40", "--docs", "20", "--repeat", "1",
         "--loop-docs", "20,300", "--loop-queries", "30", "--tools", "ours,pytrec_eval"],
        check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "disagrees" not in done.stdout, done.stdout
    loops = [line for line in done.stdout.splitlines() if line.startswith("loop,")]
    assert len(loops) == 4 and sum("pytrec_eval" in line and "x ours" in line for line in loops) == 2, done.stdout
    # Part 1 gives each tool's CPU split and page faults beside its wall time.
    header = next(line for line in done.stdout.splitlines() if line.startswith("tool "))
    assert header.endswith("user s system s page faults"), header
    rows = [line.split() for line in done.stdout.splitlines() if line.split()[:1] in (["ours"], ["pytrec_eval"])]
    assert len(rows) == 2 and all(len(row) == 7 for row in rows), done.stdout
    assert all(float(row[4]) >= 0 and float(row[5]) >= 0 and int(row[6].replace(",", "")) >= 0 for row in rows)
