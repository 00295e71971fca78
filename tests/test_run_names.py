"""Every command names a run as ``evaluate`` does (issue 27, D): by its run_id, the sixth field of its
lines, not by its file name, and never by ``/dev/fd/63``; ``--names`` overrides it everywhere.

The oracle is the run_id written into each file here, and ``evaluate``'s own names for the same
files: ``inspect``, ``diff``, ``compare`` and ``plot`` must print the same ones.
"""

from __future__ import annotations

import importlib.util
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_eval.cli import main

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\nq2 0 y 0\n"
#: Two runs whose run_ids ("bm25", "rerank") differ from their file names (base.txt, new.txt).
BM25 = "q1 Q0 b 1 3.0 bm25\nq1 Q0 c 2 2.0 bm25\nq1 Q0 a 3 1.0 bm25\nq2 Q0 y 1 2.0 bm25\nq2 Q0 x 2 1.0 bm25\n"
RERANK = "q1 Q0 c 1 3.0 rerank\nq1 Q0 a 2 2.0 rerank\nq1 Q0 b 3 1.0 rerank\nq2 Q0 x 1 2.0 rerank\nq2 Q0 y 2 1.0 rerank\n"


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, str]:
    found = {}
    for name, text in (("qrels.txt", QRELS), ("base.txt", BM25), ("new.txt", RERANK),
                       ("again.txt", BM25.replace("bm25", "rerank"))):  # shares new.txt's run_id
        (tmp_path / name).write_text(text)
        found[name] = str(tmp_path / name)
    return found


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _evaluate_names(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    out = _out(capsys, "evaluate", "--quiet", "-m", "map", "--format", "csv", *argv)
    return [line.split(",")[0] for line in out.splitlines()[1:]]


def _compare_names(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    out = _out(capsys, "compare", "--quiet", "-m", "AP", "--format", "json", *argv)
    return list(json.loads(out)["runs"])


def _diff_names(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    out = _out(capsys, "diff", "--quiet", "-m", "AP", "--format", "json", *argv)
    return list(json.loads(out)["runs"])


def test_every_command_names_runs_by_their_run_id(capsys: pytest.CaptureFixture[str], paths: dict[str, str]) -> None:
    q, base, new = paths["qrels.txt"], paths["base.txt"], paths["new.txt"]
    assert _evaluate_names(capsys, q, base, new) == ["bm25", "rerank"]
    assert _compare_names(capsys, q, base, new) == ["bm25", "rerank"]
    assert _diff_names(capsys, q, base, new) == ["bm25", "rerank"]
    assert _out(capsys, "diff", "--quiet", q, base, new, "-m", "AP").startswith("AP: rerank against bm25 over 2 ")
    assert _out(capsys, "diff", "--quiet", q, base, new, "--query", "q1").startswith(
        "query q1: top 10 of bm25 (A) and rerank (B)")
    assert _out(capsys, "inspect", "--quiet", q, new, "--query", "q1").startswith("query q1 in rerank: 3 retrieved")


def test_names_overrides_the_run_ids_everywhere(capsys: pytest.CaptureFixture[str], paths: dict[str, str]) -> None:
    q, base, new = paths["qrels.txt"], paths["base.txt"], paths["new.txt"]
    named = ("--names", "old,cand")
    assert _evaluate_names(capsys, q, base, new, *named) == ["old", "cand"]
    assert _compare_names(capsys, q, base, new, *named) == ["old", "cand"]
    assert _diff_names(capsys, q, base, new, *named) == ["old", "cand"]
    # --baseline names a run by its name; with --names, by those names only.
    out = _out(capsys, "compare", "--quiet", "-m", "AP", "--format", "json", q, base, new, *named, "--baseline", "cand")
    assert json.loads(out)["baseline"] == "cand"
    assert main(["compare", "--quiet", q, base, new, *named, "--baseline", "rerank"]) == 2
    assert "--baseline 'rerank' is not one of the runs: 'old, cand'" in capsys.readouterr().err


def test_a_shared_run_id_falls_back_to_the_file_names_in_every_command(
        capsys: pytest.CaptureFixture[str], paths: dict[str, str]) -> None:
    q, new, again = paths["qrels.txt"], paths["new.txt"], paths["again.txt"]
    expected = _evaluate_names(capsys, q, new, again)
    assert expected == ["new.txt", "again.txt"]
    assert _compare_names(capsys, q, new, again) == expected
    assert _diff_names(capsys, q, new, again) == expected


def test_standard_input_is_named_by_its_run_id(capsys: pytest.CaptureFixture[str], paths: dict[str, str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    q, base = paths["qrels.txt"], paths["base.txt"]
    for command, names in (("evaluate", _evaluate_names), ("compare", _compare_names), ("diff", _diff_names)):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(RERANK.encode())))
        assert names(capsys, q, base, "-") == ["bm25", "rerank"], command
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(RERANK.encode())))
    assert _out(capsys, "inspect", "--quiet", q, "-", "--query", "q2").startswith("query q2 in rerank: ")


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed")
def test_plots_name_runs_by_their_run_id(capsys: pytest.CaptureFixture[str], paths: dict[str, str],
                                         monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from retrieval_eval.report import plotting

    drawn: list[tuple[str, list[str]]] = []

    def keep(figure: object, path: str) -> None:
        axes = figure.axes[0]  # type: ignore[attr-defined]
        legend = axes.get_legend()
        drawn.append((axes.get_title(), [t.get_text() for t in legend.get_texts()] if legend else []))

    monkeypatch.setattr(plotting, "save", keep)
    q, base, new = paths["qrels.txt"], paths["base.txt"], paths["new.txt"]
    output = str(tmp_path / "plot.png")
    _out(capsys, "plot", "diff", "--quiet", q, base, new, "-m", "AP", "-o", output)
    _out(capsys, "plot", "pr", "--quiet", q, base, new, "-o", output)
    _out(capsys, "plot", "pr", "--quiet", q, base, new, "--names", "old,cand", "-o", output)
    assert "AP: rerank \u2212 bm25 per query" in drawn[0][0]
    assert [text.split()[0] for text in drawn[1][1]] == ["bm25", "rerank"]
    assert [text.split()[0] for text in drawn[2][1]] == ["old", "cand"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run_ids=st.lists(st.sampled_from(["bm25", "rerank", "x.txt"]), min_size=2, max_size=3),
       folders=st.lists(st.sampled_from(["", "one", "two"]), min_size=3, max_size=3))
def test_compare_and_diff_name_runs_as_evaluate_does(capsys: pytest.CaptureFixture[str], run_ids: list[str],
                                                      folders: list[str]) -> None:
    """Whatever the run_ids (shared or not, or equal to another run's file name) and file names (equal
    in different folders), compare and diff print evaluate's names, and every name once."""
    with tempfile.TemporaryDirectory() as root:
        qrels = Path(root) / "qrels.txt"
        qrels.write_text(QRELS)
        runs = []
        for number, (run_id, folder) in enumerate(zip(run_ids, folders)):
            (Path(root) / folder).mkdir(exist_ok=True)
            path = Path(root) / folder / ("x.txt" if number < 2 else "y.txt")
            if str(path) in runs:
                path = path.with_name(f"z{number}.txt")
            path.write_text(BM25.replace("bm25", run_id))
            runs.append(str(path))
        names = _evaluate_names(capsys, str(qrels), *runs)
        assert len(set(names)) == len(names) and all(name and "/dev/fd" not in name for name in names)
        assert _compare_names(capsys, str(qrels), *runs) == names
        if len(runs) == 2:
            assert _diff_names(capsys, str(qrels), *runs) == names
