"""The worked examples of docs/architecture.md run: a new command, and a new input format.

Each example is read from the page itself and loaded as the module the page says to write, so the
page cannot drift from the package: if a name it imports moves, or the registry or the format
choice changes shape, these tests fail.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
import types
from pathlib import Path

import pytest

from retrieval_eval import SetEvaluator, TrecFormatError
from retrieval_eval.cli import COMMANDS, main
from retrieval_eval.data import sample_paths
from retrieval_eval.io import formats

PAGE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
BLOCK = re.compile(r"<!-- docs-test: skip: (.+?) -->\n```python\n(.*?)```", re.DOTALL)


def _blocks() -> list[tuple[str, str]]:
    return BLOCK.findall(PAGE.read_text(encoding="utf-8"))


def _block_after(heading: str, reason: str) -> str:
    """The python block of ``heading``'s section whose skip reason starts with ``reason``."""
    section = PAGE.read_text(encoding="utf-8").split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    [code] = [code for why, code in BLOCK.findall(section) if why.startswith(reason)]
    return code


def _load(monkeypatch: pytest.MonkeyPatch, name: str, code: str) -> types.ModuleType:
    """``code`` as the package module ``name``, as if the page's file had been written."""
    module = types.ModuleType(name)
    module.__package__ = name.rsplit(".", 1)[0]
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(code, f"docs/architecture.md ({name})", "exec"), module.__dict__)
    return module


def _relevant_missed(qrels: str, run: str) -> list[str]:
    """The example's expected lines, read from the files by hand: relevant judgments the run lacks."""
    retrieved = {tuple(line.split()[::2][:2]) for line in Path(run).read_text().splitlines()}
    missed = []
    for line in Path(qrels).read_text().splitlines():
        query_id, _, doc_id, relevance = line.split()
        if int(relevance) >= 1 and (query_id, doc_id) not in retrieved:
            missed.append(f"{query_id}\t{doc_id}")
    return missed


def test_the_command_example_runs_as_a_command(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """cli/missed.py and its registry line, as the page shows them, make a working command."""
    _load(monkeypatch, "retrieval_eval.cli.missed", _block_after("How to add a command", "run by"))
    registry_line = _block_after("How to add a command", "one line of a table")
    monkeypatch.setattr("retrieval_eval.cli.COMMANDS", {**COMMANDS, **eval("{" + registry_line + "}")})
    qrels, run = sample_paths()

    assert main(["missed", qrels, run]) == 0
    out = capsys.readouterr().out
    expected = _relevant_missed(qrels, run)
    assert expected and sorted(out.splitlines()) == sorted(expected)

    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0 and "missed    the relevant documents each query missed" in capsys.readouterr().out


def test_the_input_format_example_reads_through_from_trec(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """io/results_json.py and its branch in read_run_columns give from_trec the same numbers as TREC text."""
    reader = _load(monkeypatch, "retrieval_eval.io.results_json", _block_after("How to add an input format", "run by"))
    branch = _block_after("How to add an input format", "an excerpt")
    original = formats.read_run_columns
    chooser = f"def read_run_columns(source, *, with_ranks=False):\n{textwrap.indent(textwrap.dedent(branch), '    ')}" \
              "    return original(source, with_ranks=with_ranks)\n"
    scope = {"os": __import__("os"), "read_json_run": reader.read_json_run, "original": original}
    exec(chooser, scope)
    monkeypatch.setattr(formats, "read_run_columns", scope["read_run_columns"])

    qrels, run = sample_paths()
    scores: dict[str, dict[str, float]] = {}
    for line in Path(run).read_text().splitlines():
        query_id, _, doc_id, _, score, _ = line.split()
        scores.setdefault(query_id, {})[doc_id] = float(score)
    (tmp_path / "run.json").write_text(json.dumps(scores))

    from_json = SetEvaluator.from_trec(qrels, tmp_path / "run.json")
    from_text = SetEvaluator.from_trec(qrels, run)
    for measure in ("AP", "nDCG@10", "P@5", "NumRet"):
        assert from_json.per_query(measure) == from_text.per_query(measure)

    (tmp_path / "bad.json").write_text('{"q1": {"d1": 1.0},\n  oops}')
    with pytest.raises(TrecFormatError, match=r"bad\.json:2: expected a JSON object of scores"):
        SetEvaluator.from_trec(qrels, tmp_path / "bad.json")


def test_every_example_of_the_page_is_run_somewhere() -> None:
    """The page's skipped python blocks are the ones run here, the measure excerpts, and table lines."""
    reasons = [why for why, _ in _blocks()]
    assert sum(why.startswith("run by tests/test_architecture_examples.py") for why in reasons) == 2
