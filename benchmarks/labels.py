"""Timing of retrieval_eval.labels against autointent 0.4.0's own retrieval metrics, on the same input.

    python benchmarks/labels.py [--queries 100000] [--candidates 100] [--k 10] [--dtype int64] [--repeat 3]

Two seeded inputs, NumPy arrays of ``--dtype`` (default int64, what ``np.array`` makes of Python ints):

* multiclass: ``--queries`` x ``--candidates`` labels from ``--classes`` (20) classes, for the
  5 plain functions;
* multilabel: the same shape with ``--label-classes`` (10) classes, a 0/1 vector per query and per
  candidate (each class present with probability 0.2), for the 10 ``_intersecting`` and ``_macro``
  functions.

No query is out of scope (a ``None`` label would turn the inputs into Python lists, and the
conversion of lists would dominate both sides).

Our time is the best of ``--repeat`` calls. autointent runs a Python loop per query (per candidate in
most metrics), so it gets ``--oracle-repeat`` calls (default 1). It is first timed on 1,000 queries
to estimate the full size; a function whose estimate exceeds ``--budget`` seconds is timed on the
first 10,000 queries and scaled linearly to the full count, which the table marks with ``*``. Both
libraries are also run on the subset autointent was timed on; a difference over 1e-9 is printed.

autointent is not installed: its ``metrics/retrieval.py`` and ``metrics/_converter.py`` (which
need only NumPy) are loaded from the 0.4.0 wheel, found in the cache directory
``$RETRIEVAL_EVAL_TEST_CACHE`` (default ``~/.cache/retrieval_eval-tests``) or downloaded there with
``pip download``. ``tests/test_labels.py`` uses the same loader.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

AUTOINTENT_VERSION = "0.4.0"
#: the synthetic package the two autointent files are imported as (no torch, no autointent install)
ORACLE_PACKAGE = "_autointent_oracle"
ORACLE_FILES = ("_converter.py", "retrieval.py")

FUNCTIONS = [
    f"retrieval_{metric}{form}"
    for form in ("", "_intersecting", "_macro")
    for metric in ("map", "hit_rate", "precision", "ndcg", "mrr")
]


class OracleUnavailable(RuntimeError):
    """The autointent wheel is neither in the cache nor downloadable."""


def cache_dir() -> Path:
    """Where the wheel is looked for and downloaded to."""
    return Path(os.environ.get("RETRIEVAL_EVAL_TEST_CACHE") or Path.home() / ".cache" / "retrieval_eval-tests")


def autointent_wheel(cache: Path | None = None, *, timeout: float = 120) -> Path:
    """The autointent 0.4.0 wheel in ``cache``, downloaded with pip if it is not there yet."""
    cache = cache_dir() if cache is None else cache
    pattern = f"autointent-{AUTOINTENT_VERSION}-*.whl"
    found = sorted(cache.glob(pattern))
    if found:
        return found[0]
    cache.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
               f"autointent=={AUTOINTENT_VERSION}", "-d", str(cache)]
    try:
        done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise OracleUnavailable(f"'{' '.join(command)}' failed: {error}") from error
    found = sorted(cache.glob(pattern))
    if done.returncode != 0 or not found:
        last = (done.stderr.strip().splitlines() or ["no wheel written"])[-1]
        raise OracleUnavailable(f"'{' '.join(command)}' failed (exit {done.returncode}): {last}")
    return found[0]


def load_autointent_retrieval(wheel: Path | None = None) -> ModuleType:
    """autointent 0.4.0's ``metrics/retrieval.py``, imported as ``_autointent_oracle.retrieval``.

    The two files are extracted next to the wheel, into a package of their own with an empty
    ``__init__.py``, so that ``from ._converter import transform`` resolves and nothing else of
    autointent (nor torch) is imported.
    """
    if f"{ORACLE_PACKAGE}.retrieval" in sys.modules:
        return sys.modules[f"{ORACLE_PACKAGE}.retrieval"]
    wheel = autointent_wheel() if wheel is None else wheel
    package_dir = wheel.parent / f"autointent-{AUTOINTENT_VERSION}-metrics" / ORACLE_PACKAGE
    package_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for name in ORACLE_FILES:
            (package_dir / name).write_bytes(archive.read(f"autointent/metrics/{name}"))
    (package_dir / "__init__.py").write_text('"""autointent 0.4.0 metrics files, loaded as an oracle."""\n')
    spec = importlib.util.spec_from_file_location(
        ORACLE_PACKAGE, package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[ORACLE_PACKAGE] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{ORACLE_PACKAGE}.retrieval")


# --------------------------------------------------------------------------------------------------
# The benchmark


def make_inputs(args: argparse.Namespace) -> dict[str, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    """Seeded multiclass and multilabel inputs of the requested size and dtype."""
    rng = np.random.default_rng(args.seed)
    n, m = args.queries, args.candidates
    dtype = np.dtype(args.dtype)
    multiclass = (rng.integers(0, args.classes, n), rng.integers(0, args.classes, (n, m)))
    multilabel = (rng.random((n, args.label_classes)) < 0.2, rng.random((n, m, args.label_classes)) < 0.2)
    return {
        "multiclass": (multiclass[0].astype(dtype), multiclass[1].astype(dtype)),
        "multilabel": (multilabel[0].astype(dtype), multilabel[1].astype(dtype)),
    }


def best_time(function: Callable[..., float], arguments: tuple[Any, ...], repeat: int) -> tuple[float, float]:
    """The shortest of ``repeat`` calls, in seconds, and the value returned."""
    best, value = float("inf"), float("nan")
    for _ in range(repeat):
        start = time.perf_counter()
        value = function(*arguments)
        best = min(best, time.perf_counter() - start)
    return best, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--classes", type=int, default=20, help="multiclass classes")
    parser.add_argument("--label-classes", type=int, default=10, help="multilabel classes")
    parser.add_argument("--k", default="10", help="an int, or 'none' for the whole list")
    parser.add_argument("--dtype", default="int64", help="dtype of the label arrays: int64, int8, ...")
    parser.add_argument("--repeat", type=int, default=3, help="timed calls of ours (best is kept)")
    parser.add_argument("--oracle-repeat", type=int, default=1, help="timed calls of autointent's (best is kept)")
    parser.add_argument("--budget", type=float, default=30.0,
                        help="seconds autointent may take on the full input before a 10k subset is timed instead")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--functions", default="", help="comma-separated subset of the 15 names")
    args = parser.parse_args(argv)
    k = None if args.k.lower() == "none" else int(args.k)

    from retrieval_eval import labels

    oracle = load_autointent_retrieval()
    inputs = make_inputs(args)
    names = args.functions.split(",") if args.functions else FUNCTIONS
    n = args.queries
    print(f"{n:,} queries x {args.candidates} candidates, k={k}; multiclass {args.classes} classes, "
          f"multilabel {args.label_classes} classes; {args.dtype} NumPy arrays; numpy {np.__version__}")
    header = f"{'function':34} {'ours s':>9} {'autointent s':>13} {'ratio':>8}"
    print(header)
    print("-" * len(header))
    scaled = False
    for name in names:
        queries, candidates = inputs["multilabel" if name.endswith(("_intersecting", "_macro")) else "multiclass"]
        ours, theirs = getattr(labels, name), getattr(oracle, name)
        ours_s, _ = best_time(ours, (queries, candidates, k), args.repeat)

        pilot = min(n, 1_000)
        pilot_s, _ = best_time(theirs, (queries[:pilot], candidates[:pilot], k), 1)
        subset = n if pilot_s * n / pilot <= args.budget else min(n, 10_000)
        theirs_s, theirs_value = best_time(theirs, (queries[:subset], candidates[:subset], k), args.oracle_repeat)
        theirs_s *= n / subset
        ours_value = ours(queries[:subset], candidates[:subset], k)
        if abs(float(theirs_value) - ours_value) > 1e-9:
            print(f"!! {name}: ours {ours_value!r} != autointent {theirs_value!r}")
        mark = "*" if subset < n else " "
        scaled |= subset < n
        print(f"{name:34} {ours_s:9.4f} {theirs_s:12.3f}{mark} {theirs_s / ours_s:7.0f}x")
    if scaled:
        print(f"* autointent timed on the first 10,000 queries and scaled x{n / 10_000:g} (linear in queries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
