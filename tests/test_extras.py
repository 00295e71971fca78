"""Every optional feature's extra installs everything the feature imports (issue 27, A.2).

The package's source is read with :mod:`ast`: each import of a third-party module that is not a core
dependency (an *optional import*) belongs to a feature, and :data:`FEATURE_EXTRAS` names the extras
that install that feature. Each of those extras in pyproject.toml must declare the import's
distribution, and what that distribution needs in turn for the way we use it
(:data:`RUNTIME_NEEDS`: PySpark's Arrow path imports pandas and pyarrow). A new optional import in a
module the table does not name fails here too, so the table cannot fall behind the code.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the checks need no more than reading the file

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "retrieval_eval"

#: The modules (paths under retrieval_eval/, fnmatch patterns) that import an optional package, and
#: the extras a user installs to get that feature.
FEATURE_EXTRAS: dict[str, tuple[str, ...]] = {
    "report/plotting.py": ("plot",),  # plots: retrieval-eval plot, retrieval_eval.plotting
    "report/_layout.py": ("plot",),  # the plots' tick labels
    "integrations/spark.py": ("spark",),  # retrieval_eval.spark
    "integrations/ir_measures.py": ("ir_measures",),  # the ir_measures provider
    "io/frames.py": ("parquet", "dataframe"),  # Parquet files; from_dataframe converts every frame through pyarrow
    "io/logs.py": ("parquet",),  # Parquet logs
    "io/prefs.py": ("parquet",),  # Parquet preference judgments
    "analysis/stats.py": ("stats",),  # t, Wilcoxon and sign tests
    "evaluators/*.py": ("dataframe",),  # SetEvaluator.to_dataframe
    "analysis/comparison.py": ("dataframe",),  # Comparison.to_dataframe
    "harness/rules.py": ("gate",),  # check --rules reads TOML with tomli on Python 3.10
    "harness/expectations.py": ("gate",),  # expect's TOML files, the same way
    "integrations/pytest_plugin.py": ("pytest",),  # the pytest plugin (loaded by pytest itself)
    "integrations/testing.py": ("pytest",),  # expectation_params: intent facts as pytest params
}

#: Import name -> the distribution that installs it.
IMPORT_DISTRIBUTIONS = {
    "pyspark": "pyspark", "pyarrow": "pyarrow", "scipy": "scipy", "matplotlib": "matplotlib", "pandas": "pandas",
    "ir_measures": "ir-measures", "tomli": "tomli", "pytest": "pytest",
}

#: What a distribution needs at run time, beyond its own required dependencies, for the way the
#: package uses it: PySpark converts to and from Arrow (toArrow, mapInArrow, createDataFrame of
#: Arrow batches) only with pandas >= 2.2.0 and pyarrow installed (its ``sql`` extra).
RUNTIME_NEEDS = {"pyspark": ("pandas", "pyarrow")}


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string (``pyspark[sql]>=4`` -> ``pyspark``)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match[1]).lower()


def _optional_imports(source: str) -> Iterator[str]:
    """Top-level names of the absolute imports in ``source``, ``importlib.import_module("x.y")`` included.

    Imports under ``if TYPE_CHECKING:`` are left out: they never run, only type checkers read them.
    """
    tree = ast.parse(source)
    for block in ast.walk(tree):
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test):
            block.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and not node.args[0].value.startswith(".")):
            yield node.args[0].value.split(".")[0]


def feature_imports(core: set[str]) -> dict[str, set[str]]:
    """Module path (under retrieval_eval/) -> the optional packages it imports."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        names = {name for name in _optional_imports(path.read_text(encoding="utf-8"))
                 if name not in sys.stdlib_module_names and name != "retrieval_eval" and _name(name) not in core}
        if names:
            found[path.relative_to(PACKAGE).as_posix()] = names
    return found


def problems(pyproject_text: str) -> list[str]:
    """What the extras of ``pyproject_text`` lack for the package's features (empty when complete)."""
    project = tomllib.loads(pyproject_text)["project"]
    core = {_name(r) for r in project["dependencies"]}
    extras = {extra: {_name(r) for r in requirements}
              for extra, requirements in project["optional-dependencies"].items()}
    out = []
    for module, imported in feature_imports(core).items():
        served = [extras_ for pattern, extras_ in FEATURE_EXTRAS.items() if fnmatch.fnmatch(module, pattern)]
        if not served:
            out.append(f"{module} imports {sorted(imported)}: name the extra that serves it in FEATURE_EXTRAS")
            continue
        for name in sorted(imported):
            if name not in IMPORT_DISTRIBUTIONS:
                out.append(f"{module} imports {name!r}: add its distribution to IMPORT_DISTRIBUTIONS")
                continue
            distribution = IMPORT_DISTRIBUTIONS[name]
            needed = {distribution, *RUNTIME_NEEDS.get(distribution, ())} - core
            for extra in served[0]:
                if extra not in extras:
                    out.append(f"{module}: pyproject.toml has no extra {extra!r}")
                    continue
                for lacking in sorted(needed - extras[extra]):
                    out.append(f"extra {extra!r} lacks {lacking} ({module} imports {name})")
    return out


def test_every_extra_declares_what_its_feature_imports() -> None:
    assert problems((ROOT / "pyproject.toml").read_text(encoding="utf-8")) == []


def test_the_check_finds_an_incomplete_extra() -> None:
    """The extras as they were before issue 27: spark without pandas, dataframe without pyarrow."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    old = re.sub(r'(?m)^spark = \[.*$', 'spark = ["pyspark>=4", "pyarrow>=14"]', text)
    old = re.sub(r'(?m)^dataframe = \[.*$', 'dataframe = ["pandas>=2"]', old)
    assert old != text
    assert sorted(problems(old)) == [
        "extra 'dataframe' lacks pyarrow (io/frames.py imports pyarrow)",
        "extra 'spark' lacks pandas (integrations/spark.py imports pyspark)",
    ]


def test_the_import_scan_sees_every_kind_of_import() -> None:
    source = ("import pandas as pd\nfrom matplotlib.figure import Figure\nfrom . import base\n"
              "importlib.import_module('scipy.stats')\nimportlib.import_module('.x', __name__)\n")
    assert sorted(_optional_imports(source)) == ["matplotlib", "pandas", "scipy"]
    assert feature_imports(set())["analysis/stats.py"] >= {"scipy"}


def test_runtime_needs_agree_with_pysparks_own_metadata() -> None:
    """RUNTIME_NEEDS holds what PySpark's ``sql`` extra requires (numpy aside, a core dependency)."""
    metadata = pytest.importorskip("importlib.metadata")
    try:
        requirements = metadata.requires("pyspark") or []
    except metadata.PackageNotFoundError:
        pytest.skip("pyspark is not installed")
    sql = {_name(r) for r in requirements if re.search(r"""extra\s*==\s*["']sql["']""", r)}
    assert sql - {"numpy"} == set(RUNTIME_NEEDS["pyspark"])
