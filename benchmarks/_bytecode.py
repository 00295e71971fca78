"""Compile retrieval_eval's bytecode before timing it, as ``pip install`` does for a wheel.

A source checkout run with ``PYTHONDONTWRITEBYTECODE=1`` set (or from a tree it may not write to)
has no ``__pycache__``: every command then compiles each of its modules from source first, some
60 ms that a user who installed the package never pays, and that would swamp the small shapes.
"""

from __future__ import annotations

import compileall
import importlib.util
import os
import sys


def compile_package() -> None:
    """Write the ``.pyc`` files of the retrieval_eval that this interpreter imports (found, not
    imported, so that in-process timings still start cold); say so on stderr if that fails."""
    spec = importlib.util.find_spec("retrieval_eval")
    if spec is None or spec.origin is None:
        return
    if not compileall.compile_dir(os.path.dirname(spec.origin), quiet=2):
        print("note: could not write retrieval_eval's bytecode; its start-up includes compiling it",
              file=sys.stderr)
