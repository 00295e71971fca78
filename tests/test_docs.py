"""The documentation stays true: generated pages match the registry and every docstring example runs."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import retrieval_eval
from retrieval_eval.measures.describe import reference_page

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(retrieval_eval.__path__, "retrieval_eval.")
    if not name.endswith("__main__")
)


def test_measure_reference_page_is_generated_from_the_registry() -> None:
    """docs/measures.md must be regenerated after changing a measure: python -m retrieval_eval.measures.describe."""
    assert (ROOT / "docs" / "measures.md").read_text(encoding="utf-8") == reference_page()


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_readme_opens_with_the_two_commands() -> None:
    """The README's first two shell blocks install-and-demo, then install-and-test; .ci/run uses the latter."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.DOTALL)
    assert blocks[0] == "pip install . && retrieval-eval demo"
    test_command = "python -m pytest -n auto --dist loadfile"
    assert blocks[1] == f"pip install -e '.[test]' && {test_command}"
    assert f"python -m pip install --quiet -e '.[test]' && {test_command}\n" in (ROOT / ".ci" / "run").read_text()


def test_help_is_fast_to_start() -> None:
    """--help must not import numpy or the package's heavy modules."""
    code = "import sys; from retrieval_eval import cli; sys.exit('numpy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.parametrize("page", sorted(p.relative_to(ROOT).as_posix() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]))
def test_documentation_examples_run(page: str) -> None:
    """Every ``>>>`` example in the README and docs/ runs and prints what the page shows."""
    result = doctest.testfile(str(ROOT / page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
