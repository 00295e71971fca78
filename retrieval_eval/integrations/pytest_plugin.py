"""The pytest plugin: baselines as fixtures, gate rules as assertions, intent facts as tests.

pytest loads it in every session where the package is installed (the ``pytest11`` entry point
``retrieval_eval``), so it imports only pytest and the standard library here; the package's
modules are imported when a fixture is used. ``-p no:retrieval_eval`` turns it off.

- ``retrieval_eval_baseline(path)``: a :class:`BaselineFile` for a baseline file, whose
  :meth:`~BaselineFile.assert_passes` checks a run against it with the gate's rules (those of
  ``retrieval-eval check``). With ``--retrieval-eval-update-baselines`` it writes the run's
  baseline to the file instead, on purpose, and the test passes.
- ``retrieval_eval_rankings(run)``: a run file's rankings, read once per session, for
  :func:`retrieval_eval.testing.assert_fact` over the tests that
  :func:`retrieval_eval.testing.expectation_params` makes of an expectations file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..evaluators import SetEvaluator
    from ..harness.baseline import Baseline
    from ..harness.expectations import Rankings

#: The command-line option that rewrites baselines instead of checking against them.
UPDATE_OPTION = "--retrieval-eval-update-baselines"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("retrieval-eval", "retrieval_eval: search quality gates")
    group.addoption(UPDATE_OPTION, action="store_true", default=False,
                    help="write each baseline that retrieval_eval_baseline checks against from the run the test "
                         "gives, instead of checking (a deliberate change of the expected quality)")


class BaselineFile:
    """A baseline file a test checks a run against (or, when updating, rewrites from the run)."""

    def __init__(self, path: str | os.PathLike[str], *, update: bool, written: list[str]) -> None:
        self.path = os.fspath(path)
        self.update = update
        self._written = written

    def __repr__(self) -> str:
        return f"BaselineFile({self.path!r}, update={self.update})"

    def load(self) -> Baseline:
        """The baseline the file holds."""
        from ..harness.baseline import Baseline

        return Baseline.read(self.path)

    def assert_passes(self, results: SetEvaluator, rules: Any, *, measures: Sequence[str] | None = None,
                      qrels_path: str | os.PathLike[str] | None = None,
                      run_path: str | os.PathLike[str] | None = None, **options: Any) -> None:
        """Fail unless ``results`` passes ``rules`` against the baseline (see
        :func:`retrieval_eval.testing.assert_passes_rules`, which takes ``options``); the message names
        each failed rule and the queries that lost most, with their values before and after.

        When updating, the baseline of ``results`` is written instead, on ``measures`` (default: the
        rules' measures and those of the old baseline), with the files' hashes when given.
        """
        from .testing import assert_passes_rules, rules_of

        if not self.update:
            if not os.path.exists(self.path):
                raise AssertionError(f"no baseline at {self.path}; create it with pytest {UPDATE_OPTION}")
            assert_passes_rules(self.load(), results, rules, qrels_path=qrels_path, **options)
            return
        from ..harness.baseline import Baseline

        wanted = list(measures or [rule.measure for rule in rules_of(rules)])
        if measures is None and os.path.exists(self.path):
            wanted += [m for m in self.load().measures.values() if m not in wanted]
        Baseline.create(results, measures=wanted, qrels_path=qrels_path, run_path=run_path).write(self.path)
        self._written.append(self.path)


_WRITTEN = pytest.StashKey[list[str]]()


@pytest.fixture
def retrieval_eval_baseline(request: pytest.FixtureRequest) -> Callable[[str | os.PathLike[str]], BaselineFile]:
    """``retrieval_eval_baseline(path)``: the :class:`BaselineFile` at ``path`` (relative paths from the
    test file's folder), checked against, or rewritten with ``--retrieval-eval-update-baselines``."""
    config = request.config
    update = bool(config.getoption(UPDATE_OPTION))
    written = config.stash.setdefault(_WRITTEN, [])
    folder = request.path.parent

    def load(path: str | os.PathLike[str]) -> BaselineFile:
        return BaselineFile(folder / path, update=update, written=written)

    return load


@pytest.fixture(scope="session")
def retrieval_eval_rankings() -> Callable[..., Rankings]:
    """``retrieval_eval_rankings(run, order="score")``: the rankings of a run file, read once per session."""
    read: dict[tuple[str, str], Rankings] = {}

    def rankings(run: str | os.PathLike[str], order: str = "score") -> Rankings:
        from ..harness.expectations import Rankings

        key = (os.path.abspath(run), order)
        if key not in read:
            read[key] = Rankings.read(run, order=order)
        return read[key]

    return rankings


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    written = config.stash.get(_WRITTEN, [])
    if written:
        terminalreporter.write_sep("-", "retrieval_eval: baselines rewritten")
        for path in written:
            terminalreporter.write_line(path)
