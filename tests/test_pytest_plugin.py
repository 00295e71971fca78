"""The pytest plugin (issue 30, item 9), run as a user's test suite would run it: inner test files in a
temporary folder, run by ``pytester``, their outcomes and messages checked."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import ClassVar

import pytest
from test_docs_examples import RUN_TXT

# Imported here, not in a test: the pytester fixture unloads the modules a test imports when it ends.
from retrieval_eval import SetEvaluator
from retrieval_eval.harness.baseline import Baseline

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = "retrieval_eval.integrations.pytest_plugin"

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\nq2 0 y 1\nq3 0 z 1\n"
#: q1 ranks c, b, a (b and c tied at 2.0: c first, doc_id descending); q2 x, y; q3 z.
RUN = "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 c 3 2.0 r\nq2 Q0 x 1 2.0 r\nq2 Q0 y 2 1.0 r\nq3 Q0 z 1 1.0 r\n"
#: The same queries, worse: q2 loses x from the top, q3 its only relevant document.
WORSE = "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 c 3 2.0 r\nq2 Q0 y 1 2.0 r\nq2 Q0 w 2 1.5 r\nq2 Q0 x 3 1.0 r\n" \
        "q3 Q0 v 1 1.0 r\n"


def _installed() -> bool:
    """Whether the installed distribution registers the plugin (then pytest loads it by itself)."""
    return any(entry.value == PLUGIN for entry in importlib.metadata.entry_points(group="pytest11"))


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """An inner pytest session, in a process of its own: in this one, the modules it imports would be
    unloaded after it (pytester restores sys.modules), leaving this session's tests with two copies
    of the package's modules (and NumPy cannot be loaded twice)."""
    plugin = () if _installed() else ("-p", PLUGIN)
    return pytester.runpytest_subprocess(*plugin, "-p", "no:cacheprovider", "-ra", *args)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".qrels", judgments=QRELS)
    pytester.makefile(".run", today=RUN, worse=WORSE)
    pytester.makefile(".jsonl", intent=textwrap.dedent("""\
        {"query": "q1", "doc": "c", "in_top": 1}
        {"query": "q1", "doc": "a", "in_top": 1, "id": "a leads q1"}
        {"query": "q2", "docs": ["x", "zz"], "any_in_top": 1}
        {"query": "q1", "doc": "a", "ranks_above": "b", "known_failure": true, "note": "a is new"}
        {"query": "q1", "doc": "b", "never_in_top": 1, "known_failure": true}
        {"query": "q9", "doc": "x", "never_in_top": 5}
        """))
    return pytester


def test_the_entry_point_is_declared() -> None:
    """pyproject.toml registers the plugin under pytest11, as ``retrieval_eval``."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {"retrieval_eval": PLUGIN}


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    """pytest loads the plugin in every session: it must not import NumPy or the package's modules."""
    code = (f"import sys, {PLUGIN}; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'attrs', 'scipy') "
            "or (m.startswith('retrieval_eval.') and m.count('.') > 0 and 'integrations' not in m)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.stdout.strip() == "[]"


def test_one_test_per_fact(project: pytest.Pytester) -> None:
    project.makepyfile(test_intent="""
        import pytest
        from retrieval_eval.testing import assert_fact, expectation_params

        @pytest.mark.parametrize("fact", expectation_params("intent.jsonl"))
        def test_intent(fact, retrieval_eval_rankings):
            assert_fact(fact, retrieval_eval_rankings("today.run"))
        """)
    result = _run(project, "-v")
    result.assert_outcomes(passed=2, failed=2, xfailed=1, xpassed=1)
    result.stdout.fnmatch_lines([
        "*test_intent[[]q1: c in top 1[]] PASSED*",
        "*test_intent[[]a leads q1[]] FAILED*",
        "*test_intent[[]q1: a above b[]] XFAIL*",
        "*test_intent[[]q1: b not in top 1[]] XPASS*",
        "*test_intent[[]q9: x not in top 5[]] FAILED*",
        "*AssertionError: a leads q1: a at rank 3 (intent.jsonl:2)",
        "*AssertionError: q9: x not in top 5: query q9 is not in the run (intent.jsonl:6)",
    ])
    result.stdout.fnmatch_lines(["XFAIL*q1: a above b* - known failure (intent.jsonl:4): a is new"])


def test_strict_known_failures_fail_once_they_pass(project: pytest.Pytester) -> None:
    project.makepyfile(test_intent="""
        import pytest
        from retrieval_eval.testing import assert_fact, expectation_params

        @pytest.mark.parametrize("fact", expectation_params("intent.jsonl", strict=True))
        def test_intent(fact):
            assert_fact(fact, "today.run")
        """)
    _run(project).assert_outcomes(passed=2, failed=3, xfailed=1)


def test_a_bad_fact_file_is_a_collection_error_naming_the_line(project: pytest.Pytester) -> None:
    project.makefile(".jsonl", bad='{"query": "q1", "doc": "a", "in_top": 0}\n')
    project.makepyfile(test_bad="""
        import pytest
        from retrieval_eval.testing import assert_fact, expectation_params

        @pytest.mark.parametrize("fact", expectation_params("bad.jsonl"))
        def test_intent(fact):
            assert_fact(fact, "today.run")
        """)
    result = _run(project)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*bad.jsonl:1: expected in_top to be a depth k, an integer >= 1, found 0*"])


def test_the_plugin_changes_nothing_in_a_session_that_does_not_use_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    assert 1 + 1 == 2\n")
    result = _run(pytester)
    result.assert_outcomes(passed=1)
    assert "retrieval_eval" not in result.stdout.str()


def test_the_option_is_in_help(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--help")
    result.stdout.fnmatch_lines(["*retrieval_eval: search quality gates*", "*--retrieval-eval-update-baselines*"])


def test_the_documented_example(pytester: pytest.Pytester) -> None:
    """docs/intent-tests.md's test module, on the page's facts and run, reports what the page shows."""
    page = (ROOT / "docs" / "intent-tests.md").read_text(encoding="utf-8")
    facts = re.search(r"cat > intent.jsonl <<'EOF'\n(.*?)\nEOF\n", page, re.DOTALL)
    module = re.search(r"runs this block under pytester -->\n```python\n(.*?)```", page, re.DOTALL)
    shown = re.search(r"On the files above, `pytest -rA -vv` reports[^\n]*\n\n```text\n(.*?)```", page, re.DOTALL)
    assert facts and module and shown
    pytester.makefile(".jsonl", intent=facts[1])
    pytester.makefile(".txt", run=RUN_TXT)
    pytester.makepyfile(test_intent=module[1])
    result = _run(pytester, "-rA", "-vv")
    result.assert_outcomes(passed=3, failed=2, xfailed=1)
    result.stdout.fnmatch_lines([re.sub(r"\s+", " ", line).replace("[", "[[]").replace(" ", "*")
                                 for line in shown[1].splitlines()], consecutive=False)


def _quality_test(project: pytest.Pytester, run: str, rules: str = '{"P@2": {"max_drop": 0.05}}') -> None:
    project.makepyfile(test_quality=f"""
        from retrieval_eval import SetEvaluator

        def test_quality(retrieval_eval_baseline):
            results = SetEvaluator.from_trec("judgments.qrels", "{run}")
            baseline = retrieval_eval_baseline("baselines/bm25.json")
            baseline.assert_passes(results, {rules}, qrels_path="judgments.qrels")
        """)


class TestBaselines:
    """The baseline fixture through a baseline's life: missing, written on purpose, checked, failed,
    rewritten. P@2 by hand: today q1 0.5 (c, b), q2 1.0 (x, y), q3 0.5 (z alone); worse q2 0.5, q3 0."""

    def test_a_missing_baseline_fails_with_the_way_to_make_it(self, project: pytest.Pytester) -> None:
        _quality_test(project, "today.run")
        result = _run(project)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines([("*AssertionError: no baseline at *bm25.json; create it with pytest "
                                     "--retrieval-eval-update-baselines")])

    def test_the_life_of_a_baseline(self, project: pytest.Pytester) -> None:
        (project.path / "baselines").mkdir()
        path = project.path / "baselines" / "bm25.json"
        _quality_test(project, "today.run")
        result = _run(project, "--retrieval-eval-update-baselines")
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines(["*retrieval_eval: baselines rewritten*", f"{path}"])
        written = Baseline.read(path)
        assert written.values("P@2") == {"q1": 0.5, "q2": 1.0, "q3": 0.5}
        assert written.qrels is not None and written.qrels.name == "judgments.qrels"

        _run(project).assert_outcomes(passed=1)  # the same run passes against its own baseline

        _quality_test(project, "worse.run")
        result = _run(project)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines([
            "*AssertionError: P@2 max_drop 0.05: fell by 0.3333 (0.6667 -> 0.3333), more than 0.05*",
            "*    q2: 1.0000 -> 0.5000 (-0.5000)",
            "*    q3: 0.5000 -> 0.0000 (-0.5000)",
        ])
        assert "baselines rewritten" not in result.stdout.str()

        _run(project, "--retrieval-eval-update-baselines").assert_outcomes(passed=1)  # the drop, accepted
        assert Baseline.read(path).values("P@2") == {"q1": 0.5, "q2": 0.5, "q3": 0.0}
        _run(project).assert_outcomes(passed=1)

    def test_rules_from_a_file_and_per_query_drops(self, project: pytest.Pytester) -> None:
        (project.path / "baselines").mkdir()
        _quality_test(project, "today.run")
        _run(project, "--retrieval-eval-update-baselines").assert_outcomes(passed=1)
        project.makefile(".toml", gates='["P@2"]\nmax_query_drop = 0.4\nquarantine = ["q3"]\n')
        _quality_test(project, "worse.run", rules='"gates.toml"')
        result = _run(project)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*AssertionError: P@2 max_query_drop 0.4: 1 query fell by more than 0.4: q2*",
                                     "*    q2: 1.0000 -> 0.5000 (-0.5000)"])
        assert "q3: 0.5000" not in result.stdout.str()  # quarantined: reported by check, never a failure

    def test_a_baseline_on_other_judgments_is_refused(self, project: pytest.Pytester) -> None:
        (project.path / "baselines").mkdir()
        _quality_test(project, "today.run")
        _run(project, "--retrieval-eval-update-baselines").assert_outcomes(passed=1)
        project.makefile(".qrels", judgments=QRELS + "q3 0 v 1\n")
        result = _run(project)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines([("*AssertionError: the baseline was made on other judgments: the qrels: "
                                     "judgments.qrels (sha256 *) is not the baseline's judgments.qrels*")])


class TestAssertPassesRules:
    """The assertion helper on its own: the gate's verdicts, turned into one AssertionError."""

    QRELS: ClassVar = {f"q{i}": {"a": 1, "b": 1} for i in range(4)}
    BEFORE: ClassVar = {q: {"a": 2.0, "b": 1.0} for q in QRELS}  # P@2 = 1 everywhere

    def _results(self, run: dict[str, dict[str, float]]) -> SetEvaluator:
        return SetEvaluator.from_dict(self.QRELS, run)

    def test_rules_in_every_form(self, tmp_path: Path) -> None:
        from retrieval_eval.harness.rules import Rule
        from retrieval_eval.testing import assert_passes_rules, rules_of

        gates = tmp_path / "gates.toml"
        gates.write_text('["P@2"]\nmin = 0.9\n', encoding="utf-8")
        expected = [Rule("P@2", min=0.9)]
        assert rules_of(gates) == rules_of(str(gates)) == rules_of({"P@2": {"min": 0.9}}) == expected
        assert rules_of(Rule("P@2", min=0.9)) == rules_of(expected) == expected
        with pytest.raises(TypeError, match="rules: expected"):
            rules_of(["P@2"])
        baseline = Baseline.create(self._results(self.BEFORE), measures=["P@2"])
        assert_passes_rules(baseline, self._results(self.BEFORE), gates)  # the same run passes

    def test_the_message_names_each_failed_check_and_the_worst_queries(self) -> None:
        from retrieval_eval.testing import assert_passes_rules

        baseline = Baseline.create(self._results(self.BEFORE), measures=["P@2"])
        # q1 keeps a only (P@2 0.5), q3 neither (0): mean 1.0 -> 0.625 by hand.
        after = self._results({**self.BEFORE, "q1": {"a": 1.0}, "q3": {"x": 1.0}})
        with pytest.raises(AssertionError) as failed:
            assert_passes_rules(baseline, after, {"P@2": {"min": 0.7, "max_query_drop": 0.6}})
        assert str(failed.value).splitlines() == [
            "P@2 min 0.7: mean 0.6250 is below the floor 0.7",
            "    q3: 1.0000 -> 0.0000 (-1.0000)",
            "    q1: 1.0000 -> 0.5000 (-0.5000)",
            "P@2 max_query_drop 0.6: 1 query fell by more than 0.6: q3",
            "    q3: 1.0000 -> 0.0000 (-1.0000)",
        ]

    def test_undecided_fails_only_when_asked(self) -> None:
        """One query of four changes: a sign test cannot reach p < 0.05, whatever the values."""
        from retrieval_eval.testing import assert_passes_rules

        baseline = Baseline.create(self._results(self.BEFORE), measures=["P@2"])
        after = self._results({**self.BEFORE, "q1": {"a": 1.0}})
        rules = {"P@2": {"regression": True}}
        assert_passes_rules(baseline, after, rules, test="sign")
        with pytest.raises(AssertionError, match=r"^P@2 regression: unresolvable: 1 of 4 queries differ"):
            assert_passes_rules(baseline, after, rules, test="sign", fail_undecided=True)


def test_pytest_loads_the_declared_entry_point_by_itself(tmp_path: Path) -> None:
    """Installed, the plugin needs no -p: a distribution's metadata that declares pyproject.toml's
    pytest11 entry point (written here, as an install writes it) makes pytest load it, and
    ``-p no:retrieval_eval`` turns it off."""
    tomllib = pytest.importorskip("tomllib")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    site = tmp_path / "site"
    info = site / "retrieval_evaluator_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: retrieval-evaluator-probe\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[pytest11]\n" + "".join(f"{name} = {value}\n" for name, value in declared["pytest11"].items()))
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_fixture.py").write_text(
        "def test_fixture(retrieval_eval_rankings):\n    assert callable(retrieval_eval_rankings)\n")
    env = {"PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "PATH": os.environ.get("PATH", "")}

    def pytest_in(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args], cwd=project,
                              env=env, capture_output=True, text=True, check=False, timeout=300)

    loaded = pytest_in()
    assert loaded.returncode == 0, loaded.stdout
    off = pytest_in("-p", "no:retrieval_eval")
    assert off.returncode == 1 and "fixture 'retrieval_eval_rankings' not found" in off.stdout
