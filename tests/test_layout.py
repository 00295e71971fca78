"""The package's layout holds: folders in pipeline order, imports that only point down, small modules.

docs/architecture.md draws the same picture; these tests keep it true as the package grows.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import retrieval_eval

PACKAGE = Path(retrieval_eval.__file__).parent
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 300

#: What each part of the package may import from the package. A part is a folder, or a top-level module.
#: memory and threads sit in engine/ but serve the readers too: the only imports across from io/.
ALLOWED = {
    "model": set(),
    "engine": {"model"},
    "io": {"model", "engine.memory", "engine.threads"},
    "measures": {"model", "engine"},
    "labels": {"model"},
    "evaluators": {"model", "io", "engine", "measures"},
    "analysis": {"model", "io", "engine", "measures", "evaluators"},
    "report": {"model", "io", "engine", "measures", "evaluators", "analysis"},
    "harness": {"model", "io", "engine", "measures", "evaluators", "analysis", "report"},
    "integrations": {"model", "io", "engine", "measures", "evaluators", "analysis", "report", "harness"},
    "data": {"io"},
    "cli": {"model", "io", "engine", "measures", "evaluators", "analysis", "report", "harness", "data", "__init__"},
    # the public paths: thin re-exports of the modules that hold the code
    "plotting": {"report"},
    "spark": {"integrations"},
    "testing": {"integrations"},
    "fusion": {"analysis"},
    "__init__": {"model", "io", "measures", "evaluators", "analysis"},
    "__main__": {"cli"},
}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _part(path: Path) -> str:
    relative = path.relative_to(PACKAGE).with_suffix("")
    return relative.parts[0]


def _imported(path: Path) -> set[str]:
    """The package modules ``path`` imports, as dotted names below retrieval_eval."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = path.relative_to(PACKAGE).with_suffix("").parts
    package = here[:-1]  # a module's package; for __init__, the package itself
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - (node.level - 1)]
            target = [*base, *(node.module.split(".") if node.module else [])]
            if node.module:
                found.add(".".join(target) or "__init__")
            else:  # from . import a, b: each name is a module, or a name the package itself defines
                for alias in node.names:
                    module = PACKAGE.joinpath(*target, alias.name)
                    is_module = module.with_suffix(".py").exists() or module.is_dir()
                    found.add(".".join([*target, alias.name]) if is_module else ".".join(target) or "__init__")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("retrieval_eval"):
            found.add(node.module.removeprefix("retrieval_eval").lstrip(".") or "__init__")
    return found


def _allowed(source: str, target: str) -> bool:
    if target.split(".")[0] == source:
        return True
    return any(target == rule or target.startswith(rule + ".") for rule in ALLOWED[source])


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down_the_pipeline(path: Path) -> None:
    """A module imports only its own folder and the parts before it (ALLOWED): no cycle between parts."""
    part = _part(path)
    wrong = sorted(t for t in _imported(path) if not _allowed(part, t))
    assert not wrong, f"{part} imports {wrong}; allowed: {sorted(ALLOWED[part])}"


def test_every_part_has_a_rule() -> None:
    """A new folder or top-level module gets its place in ALLOWED (and in docs/architecture.md)."""
    assert {_part(p) for p in _modules()} == set(ALLOWED)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_and_classes_stay_small(path: Path) -> None:
    """No module over 600 lines and no class over 300: past that, a newcomer cannot hold it in mind."""
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_MODULE_LINES
    long = [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES]
    assert not long


def test_dir_shows_only_public_names() -> None:
    """dir(retrieval_eval): the public names, the version and the subpackages; no helper leaks."""
    public = set(retrieval_eval.__all__) | {"__version__"}
    submodules = {p.stem if p.suffix else p.name for p in PACKAGE.iterdir()
                  if (p.suffix == ".py" and not p.stem.startswith("_")) or (p / "__init__.py").exists()}
    assert set(dir(retrieval_eval)) == public | submodules


def test_public_paths_keep_working() -> None:
    """The import paths the docs show still import, and name the same objects as their homes."""
    from retrieval_eval import compare, labels, measures, plotting, testing
    from retrieval_eval.analysis.comparison import compare as compare_home
    from retrieval_eval.data import sample_paths
    from retrieval_eval.integrations import testing as testing_home
    from retrieval_eval.report import plotting as plotting_home

    assert compare is compare_home and callable(sample_paths) and labels.retrieval_map and measures.parse
    assert all(getattr(plotting, name) is getattr(plotting_home, name) for name in plotting.__all__)
    assert all(getattr(testing, name) is getattr(testing_home, name) for name in testing.__all__)


def test_spark_public_path() -> None:
    """retrieval_eval.spark names the Spark integration's functions (where pyspark is installed)."""
    pytest.importorskip("pyspark")
    from retrieval_eval import spark
    from retrieval_eval.integrations import spark as spark_home

    assert all(getattr(spark, name) is getattr(spark_home, name) for name in spark.__all__)
