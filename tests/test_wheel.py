"""The wheel holds every file the package reads at run time, not only its modules.

The HTML report inlines ``report/report.js`` and ``report/report.css`` into each page, and ``demo``
reads ``data/*``: a wheel without them installs cleanly and then fails on the first report. Only a
built wheel shows what users get, so this test builds one, in-process, with the project's own build
backend (hatchling, a test dependency: no download).
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _package_files() -> list[str]:
    """The files under retrieval_eval/ that git tracks (the tree's files outside a git checkout)."""
    try:
        listed = subprocess.run(["git", "ls-files", "retrieval_eval"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        listed = [str(p.relative_to(ROOT)) for p in (ROOT / "retrieval_eval").rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts]
    return sorted(listed)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    builders = pytest.importorskip("hatchling.builders.wheel")
    out = tmp_path_factory.mktemp("wheel")
    built = list(builders.WheelBuilder(str(ROOT)).build(directory=str(out), versions=["standard"]))
    assert len(built) == 1, built
    return zipfile.ZipFile(built[0])


def test_the_wheel_holds_every_package_file(wheel: zipfile.ZipFile) -> None:
    """Every tracked file of the package, the report's script and style and the bundled data among them."""
    names = set(wheel.namelist())
    tracked = _package_files()
    assert "retrieval_eval/report/report.js" in tracked and "retrieval_eval/report/report.css" in tracked
    missing = [path for path in tracked if path not in names]
    assert not missing, missing


def test_the_wheel_holds_nothing_else_of_the_tree(wheel: zipfile.ZipFile) -> None:
    """Tests, docs, benchmarks and caches stay out: the wheel is the package and its metadata."""
    outside = [name for name in wheel.namelist()
               if not name.startswith(("retrieval_eval/", "retrieval_evaluator-")) or "__pycache__" in name]
    assert not outside, outside
