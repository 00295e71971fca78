"""docs/gating.md works as written: its commands run in order on the bundled sample (each exiting and
printing as the page shows), the files they write are what the page says (JUnit read back by
junitparser, the step summary, the baseline), the documented baseline fields are the written ones,
and the GitHub Actions job's commands run too."""

from __future__ import annotations

import doctest
import json
import re
import shutil
import subprocess
from pathlib import Path

import junitparser
import pytest
import yaml
from test_docs_examples import END_MARK, _blocks, _commands, _expected_exit, _page_directory

from retrieval_eval import SetEvaluator
from retrieval_eval.harness.baseline import Baseline

PAGE = "docs/gating.md"
BLOCKS = _blocks(PAGE)


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A directory where every shell command of the guide ran, in order, each as the page shows."""
    folder = tmp_path_factory.mktemp("gating")
    env = _page_directory(folder)
    commands = [c for b in BLOCKS if b.language in ("sh", "console") for c in _commands(b)]
    assert len(commands) >= 10
    script = []
    for number, command in enumerate(commands):
        script += [command.text, f"printf '@@docs-test-end {number} %d@@\\n' $?"]
    done = subprocess.run(["bash", "-c", "\n".join(script)], check=False, cwd=folder, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    parts = END_MARK.split(done.stdout)
    assert len(parts) == 3 * len(commands) + 1, done.stdout
    checker = doctest.OutputChecker()
    for command, output, code in zip(commands, parts[0::3], parts[2::3]):
        assert code == _expected_exit(command), f"{command.text}: exit {code}\n{output}"
        if command.expected is not None:
            assert checker.check_output(command.expected, output, doctest.ELLIPSIS), (command.text, output)
    return folder, env


def test_the_guide_uses_the_bundled_sample() -> None:
    text = "\n".join(c.text for b in BLOCKS if b.language in ("sh", "console") for c in _commands(b))
    assert "sample_paths()" in text and "sample.qrels sample.run" in text


def test_the_junit_file_is_what_the_page_shows(followed: tuple[Path, dict[str, str]]) -> None:
    folder, _ = followed
    parsed = junitparser.JUnitXml.fromfile(str(folder / "gate.xml"))
    assert (parsed.tests, parsed.failures, parsed.skipped, parsed.errors) == (6, 0, 1, 0)
    suites = {suite.name: suite for suite in parsed}
    assert [case.name for case in suites["rules"]] == [
        "nDCG@10 max_drop 0.05", "nDCG@10 max_query_drop 0.5", "AP min 0.15", "AP regression", "P@10 ci_lower 0.1"]
    (quarantined,) = list(suites["quarantine"])
    assert quarantined.is_skipped and quarantined.name == "nDCG@10 q2"


def test_the_step_summary_was_appended(followed: tuple[Path, dict[str, str]]) -> None:
    folder, _ = followed
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("### check new-ranker.run against baseline.json: failed\n")
    assert "| ❌ failed | rules | AP min 0.25 | mean 0.1908 is below the floor 0.25 |" in summary


def test_the_baseline_holds_the_sample_evaluation(followed: tuple[Path, dict[str, str]]) -> None:
    folder, _ = followed
    kept = Baseline.read(folder / "baseline.json")
    expected = SetEvaluator.from_trec(folder / "sample.qrels", folder / "sample.run")
    for measure in ("nDCG@10", "AP", "P@10"):
        assert kept.values(measure) == pytest.approx(expected.per_query(measure), abs=1e-15)
        assert kept.summary[measure] == pytest.approx(expected.aggregate(measure), abs=1e-15)


def test_the_documented_fields_are_the_written_ones(followed: tuple[Path, dict[str, str]]) -> None:
    folder, _ = followed
    text = (Path(__file__).resolve().parents[1] / PAGE).read_text(encoding="utf-8")
    table = text[text.index("## The baseline file"):]
    documented = set()
    for line in table.splitlines():
        cell = re.match(r"^\| ((?:`\w+`(?:, )?)+) \|", line)
        if cell:
            documented |= set(re.findall(r"`(\w+)`", cell.group(1)))
    written = json.loads((folder / "baseline.json").read_text(encoding="utf-8"))
    assert documented == set(written)
    options = table[table.index("| `options` |"):].splitlines()[0]
    assert set(re.findall(r"`(\w+)` \(", options)) == set(written["options"])


def test_the_github_actions_job_runs(followed: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    folder, env = followed
    (block,) = [b for b in BLOCKS if b.language == "yaml"]
    workflow = yaml.safe_load(block.text)
    steps = workflow["jobs"]["gate"]["steps"]
    commands = [step["run"] for step in steps if "run" in step and step["run"].startswith("retrieval-eval ")]
    assert len(commands) == 1
    job = tmp_path / "job"  # a copy: the job's gate.xml must not replace the one the other tests read
    shutil.copytree(folder, job, symlinks=True)
    summary = tmp_path / "summary.md"
    done = subprocess.run(["bash", "-c", commands[0]], check=False, cwd=job, text=True, capture_output=True,
                          env={**env, "GITHUB_STEP_SUMMARY": str(summary)}, timeout=600)
    assert done.returncode == 1, done.stderr  # the new ranker fails the rules of gates.toml
    assert "::error title=nDCG@10 max_drop 0.05::" in done.stdout
    assert summary.read_text(encoding="utf-8").startswith("### check new-ranker.run against baseline.json: failed")
    assert junitparser.JUnitXml.fromfile(str(job / "gate.xml")).failures == 3
