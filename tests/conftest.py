"""Shared fixtures: where trec_eval's own test suite lives, and small TREC files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: trec_eval's test directory, beside the repository as ../shared (override with RETRIEVAL_EVAL_TESTDATA).
TESTDATA = Path(
    os.environ.get(
        "RETRIEVAL_EVAL_TESTDATA",
        Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "trec_eval-testdata",
    )
)


@pytest.fixture
def testdata() -> Path:
    if not (TESTDATA / "MANIFEST.md").is_file():
        pytest.skip(f"trec_eval's test data is not at {TESTDATA} (set RETRIEVAL_EVAL_TESTDATA)")
    return TESTDATA


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text) -> path of a new file in a temporary directory."""

    def _write(name: str, text: str | bytes) -> str:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return str(path)

    return _write


@pytest.fixture(autouse=True)
def _ir_measures_default_pipeline() -> object:
    """Every test ends with ir_measures' default pipeline as ir_measures ships it.

    Importing ``retrieval_eval.integrations.ir_measures`` (a docstring example, a docs page) puts our
    provider first in ``ir_measures.DefaultPipeline``; the tests that compare against ir_measures' own
    providers must not run on ours. Tests of the provider register it themselves.
    """
    yield
    import sys

    # By name: any copy of the module may have registered it. The module is forgotten as well, so
    # that the next import registers the provider again, as a user's first import does.
    sys.modules.pop("retrieval_eval.integrations.ir_measures", None)
    ir_measures = sys.modules.get("ir_measures")
    if ir_measures is not None:
        pipeline = ir_measures.DefaultPipeline.providers
        pipeline[:] = [p for p in pipeline if getattr(p, "NAME", None) != "retrieval_eval"]


@pytest.fixture(autouse=True)
def _quiet_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test sees a machine with no other process running: whether work goes to threads
    (engine.threads.idle_cpus) then follows the CPUs a test sets, not the load of the moment."""
    from retrieval_eval.engine import threads

    monkeypatch.setattr(threads, "_runnable_elsewhere", lambda: 0)
