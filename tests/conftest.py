"""Shared fixtures: where trec_eval's own test suite lives, trec_eval built from its C source, and
small TREC files."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

#: trec_eval's test directory, beside the repository as ../shared (override with RETRIEVAL_EVAL_TESTDATA).
TESTDATA = Path(
    os.environ.get(
        "RETRIEVAL_EVAL_TESTDATA",
        Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "trec_eval-testdata",
    )
)


#: trec_eval 10.0's unchanged source, beside the repository as ../shared (override with
#: RETRIEVAL_EVAL_TREC_EVAL_SRC, e.g. a checkout of usnistgov/trec_eval at f4253652c8ef).
SOURCE = Path(
    os.environ.get(
        "RETRIEVAL_EVAL_TREC_EVAL_SRC",
        Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "trec_eval-10-src",
    )
)
#: The files holding trec_eval's print functions, whose "%6.4f" becomes "%.17g" in the build copy.
PRINT_SOURCES = ("meas_print_single.c", "meas_print_final.c")


@pytest.fixture
def testdata() -> Path:
    if not (TESTDATA / "MANIFEST.md").is_file():
        pytest.skip(f"trec_eval's test data is not at {TESTDATA} (set RETRIEVAL_EVAL_TESTDATA)")
    return TESTDATA


@pytest.fixture(scope="session")
def trec_eval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """trec_eval 10 built from a patched copy of its source; skipped only without a compiler or make."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    make = shutil.which("make")
    if compiler is None or make is None:
        pytest.skip("building trec_eval needs a C compiler (gcc or cc) and make; "
                    f"found compiler={compiler!r}, make={make!r}")
    if not SOURCE.exists():  # an sdist or a clone without ../shared beside it (CI always has it)
        pytest.skip(f"trec_eval 10's source is not at {SOURCE} (set RETRIEVAL_EVAL_TREC_EVAL_SRC)")
    if not (SOURCE / "Makefile").is_file():
        pytest.fail(f"{SOURCE} holds no Makefile: not trec_eval 10's source")
    build = tmp_path_factory.mktemp("trec_eval") / "src"
    shutil.copytree(SOURCE, build)
    for name in PRINT_SOURCES:
        path = build / name
        text = path.read_text()
        if "%6.4f" not in text:
            pytest.fail(f"{name} has no '%6.4f' to patch: the print functions moved?")
        path.write_text(text.replace("%6.4f", "%.17g"))
    done = subprocess.run([make, f"CC={compiler}", "trec_eval"], cwd=build, capture_output=True, text=True,
                          check=False)
    binary = build / "trec_eval"
    if done.returncode != 0 or not binary.is_file():
        pytest.fail(f"building trec_eval failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    return binary


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
