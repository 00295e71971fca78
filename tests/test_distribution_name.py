"""The distribution is ``retrieval-evaluator``: no hint, doc or message names the taken ``retrieval-eval``.

``retrieval-eval`` on PyPI is an unrelated project that also installs an import package named
``retrieval_eval``. A hint such as ``pip install 'retrieval_eval[stats]'`` installs that project in a
fresh environment (pip normalises ``retrieval_eval`` to ``retrieval-eval``), so every install hint and
every metadata lookup must use our distribution's own name.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
NAME = "retrieval-evaluator"

#: What names the taken distribution: an extra, an install, or a metadata lookup of ``retrieval[-_.]eval``.
TAKEN = re.compile(
    r"retrieval[-_.]eval\\?\[|pip install\s+['\"]?retrieval[-_.]eval\b(?![-_.a-z])|"
    r"(?:version|metadata|distribution)\(\s*['\"]retrieval[-_.]eval['\"]",
    re.IGNORECASE,
)


def _tracked_text_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an sdist): read the tree
        return [p for p in ROOT.rglob("*") if p.suffix in {".py", ".md", ".toml"} and ".venv" not in p.parts]
    return [ROOT / line for line in listed.splitlines() if line.endswith((".py", ".md", ".toml", "run"))]


def test_the_project_is_named_retrieval_evaluator() -> None:
    """pyproject.toml names the free distribution; the import package keeps its name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == NAME
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["retrieval_eval"]


def test_no_file_names_the_taken_distribution() -> None:
    """Every install hint, doc line and metadata lookup uses retrieval-evaluator."""
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}"
             for path in _tracked_text_files() if path.is_file() and path.name != Path(__file__).name
             for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if TAKEN.search(line)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("line", [
    "pip install 'retrieval_eval[stats]'",
    "needs pyarrow: pip install 'retrieval-eval[parquet]'",
    "pip install retrieval-eval",
    'metadata.version("retrieval_eval")',
])
def test_the_check_catches_the_taken_name(line: str) -> None:
    """The pattern would catch each way the old name was written."""
    assert TAKEN.search(line)


@pytest.mark.parametrize("line", [
    "pip install 'retrieval-evaluator[stats]'", "retrieval-eval evaluate qrels run", "import retrieval_eval",
])
def test_the_check_leaves_our_names_alone(line: str) -> None:
    """The command (retrieval-eval) and the import package (retrieval_eval) are not the distribution."""
    assert not TAKEN.search(line)
