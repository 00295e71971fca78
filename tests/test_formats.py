"""evaluate's and diff's table formats (csv, tsv, markdown, latex) and evaluate over several runs (issue 11).

The oracle of every table is the JSON output of the same command: CSV and TSV read back (with the
csv module) to the very same values; Markdown and LaTeX have the right header and row counts.
Several runs in one evaluate print what one evaluate per run prints, and read the qrels once.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import sys
from pathlib import Path

import pytest

from retrieval_eval.cli import main
from retrieval_eval.data import sample_paths

QRELS, RUN = sample_paths()
MEASURES = ["-m", "official", "-m", "nDCG@10", "-m", "relstring.5"]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def other(tmp_path: Path) -> str:
    """A second run: the sample with every score negated (the ranking reversed), gzip-compressed."""
    lines = []
    for line in Path(RUN).read_text().splitlines():
        q, it, doc, rank, score, _ = line.split()
        lines.append(f"{q} {it} {doc} {rank} {-float(score)} reversed")
    path = tmp_path / "reversed.run.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return str(path)


def _json(capsys: pytest.CaptureFixture[str], run: str, *options: str) -> dict[str, object]:
    code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "json", *options, QRELS, run)
    assert code == 0
    document: dict[str, object] = json.loads(out)
    return document


def _cell(text: str, expected: object) -> object:
    """A CSV cell read back as the type of the JSON value it must equal."""
    if expected is None:
        return None if text == "" else text
    return type(expected)(text)


class TestDelimited:
    @pytest.mark.parametrize("form", ["csv", "tsv"])
    @pytest.mark.parametrize("per_query", [False, True], ids=["summary", "per-query"])
    def test_reads_back_to_the_json_values(self, capsys, other, form: str, per_query: bool) -> None:
        q = ["-q"] if per_query else []
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", form, *q, *MEASURES, QRELS, RUN, other)
        assert code == 0
        rows = list(csv.reader(io.StringIO(out), delimiter="," if form == "csv" else "\t"))
        header, body = rows[0], rows[1:]
        documents = {"sample.run": _json(capsys, RUN, *q, *MEASURES),
                     "reversed.run.gz": _json(capsys, other, *q, *MEASURES)}
        labels = header[2:] if per_query else header[1:]
        assert header[:2] == (["run", "query"] if per_query else ["run", labels[0]])[:2]
        assert "num_q" in labels and "nDCG@10" in labels and ("relstring_5" in labels) == per_query
        expected_rows = 0
        for name, document in documents.items():
            aggregate = document["aggregate"]
            per = document.get("per_query", {})
            expected_rows += 1 + len(per)
            for row in (r for r in body if r[0] == name):
                values = row[2:] if per_query else row[1:]
                source = aggregate if (not per_query or row[1] == "all") else per[row[1]]
                for label, text in zip(labels, values):
                    if label not in source:  # a summary-only measure on a query row, relstring on 'all'
                        assert text == ""
                    else:
                        assert _cell(text, source[label]) == source[label], (name, row[:2], label)
        assert len(body) == expected_rows and {row[0] for row in body} == set(documents)

    def test_ids_with_the_delimiter_are_quoted(self, capsys, write) -> None:
        qrels = write("qrels", "q,1 0 a 1\n")
        run = write("run", "q,1 Q0 a 1 1.0 r\n")
        code, out, _ = _run(capsys, "evaluate", "-q", "-m", "P.1", "--format", "csv", qrels, run)
        assert code == 0 and list(csv.reader(io.StringIO(out)))[1] == ["run", "q,1", "1.0"]


class TestReadableTables:
    @pytest.mark.parametrize("per_query", [False, True], ids=["summary", "per-query"])
    def test_markdown_header_and_rows(self, capsys, other, per_query: bool) -> None:
        q = ["-q"] if per_query else []
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "markdown", *q, "-m", "map", "-m", "P.10",
                            QRELS, RUN, other)
        lines = out.splitlines()
        assert code == 0
        assert lines[0] == ("| run | query | map | P_10 |" if per_query else "| run | map | P_10 |")
        assert lines[1] == ("|---|---|---:|---:|" if per_query else "|---|---:|---:|")
        assert len(lines) == 2 + (2 * 14 if per_query else 2)  # 13 queries and 'all', per run
        first = _json(capsys, RUN, "-m", "map")["aggregate"]["map"]  # type: ignore[index]
        summary = next(line for line in lines if line.startswith("| sample.run |") and ("| all |" in line
                                                                                        or not per_query))
        assert f"| {first:.4f} |" in summary

    def test_latex_header_rows_and_escapes(self, capsys, other) -> None:
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "latex", "--digits", "3", "-m", "map",
                            "-m", "ndcg_cut.10", QRELS, RUN, other)
        lines = out.splitlines()
        assert code == 0
        assert lines[:4] == [r"\begin{tabular}{lrr}", r"\toprule", r"run & map & ndcg\_cut\_10 \\", r"\midrule"]
        assert lines[-2:] == [r"\bottomrule", r"\end{tabular}"]
        body = lines[4:-2]
        assert len(body) == 2 and body[0].startswith("sample.run & ") and body[1].startswith("reversed.run.gz & ")
        assert all(line.endswith(r" \\") for line in body)

    def test_digits_round_markdown(self, capsys) -> None:
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "markdown", "--digits", "2", "-m", "map",
                            QRELS, RUN)
        assert code == 0 and out.splitlines()[2] == "| sample.run | 0.27 |"


class TestSeveralRuns:
    @pytest.mark.parametrize("options", [[], ["-q"], ["-m", "map", "-m", "P.5"], ["-q", "-n", "-m", "ndcg"]],
                             ids=["official", "per-query", "measures", "no-summary"])
    def test_trec_blocks_are_the_single_run_outputs(self, capsys, other, options: list[str]) -> None:
        outputs = []
        for run in (RUN, other):
            code, out, _ = _run(capsys, "evaluate", *options, QRELS, run)
            assert code == 0
            outputs.append(out)
        code, together, _ = _run(capsys, "evaluate", *options, QRELS, RUN, other)
        assert code == 0 and together == "".join(outputs)

    def test_json_is_a_list_of_the_single_run_documents(self, capsys, other) -> None:
        single = [_json(capsys, run, "-q", "-m", "map") for run in (RUN, other)]
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "json", "-q", "-m", "map", QRELS, RUN, other)
        documents = json.loads(out)
        assert code == 0 and [d.pop("run") for d in documents] == ["sample.run", Path(other).name]
        assert documents == single  # the same objects, each named first by its run's file name
        assert next(iter(json.loads(out)[0])) == "run"

    def test_qrels_are_read_once(self, capsys, other, monkeypatch) -> None:
        """Three runs, one read of the qrels (a spy on the qrels reader counts the calls)."""
        import retrieval_eval.io.formats as formats

        calls = []
        real = formats.read_qrels_columns

        def spy(*args: object, **kwargs: object) -> object:
            calls.append(args[0])
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(formats, "read_qrels_columns", spy)
        code, _, _ = _run(capsys, "evaluate", "--quiet", "-m", "map", QRELS, RUN, other, RUN)
        assert code == 0 and calls == [QRELS]
        calls.clear()
        code, _, _ = _run(capsys, "diff", "--quiet", QRELS, RUN, other)
        assert code == 0 and calls == [QRELS]

    def test_notes_name_the_run(self, capsys, other) -> None:
        code, _, err = _run(capsys, "evaluate", "-m", "map", QRELS, RUN, other)
        assert code == 0
        assert "retrieval-eval: note: sample.run: 1 judged query has no results" in err
        assert "retrieval-eval: note: reversed.run.gz: 1 judged query has no results" in err

    def test_single_run_notes_are_unchanged(self, capsys) -> None:
        code, _, err = _run(capsys, "evaluate", "-m", "map", QRELS, RUN)
        assert code == 0 and err.startswith("retrieval-eval: note: 1 judged query has no results")

    def test_a_run_on_stdin_among_files(self, capsys, other, monkeypatch) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(RUN).read_bytes())))
        code, together, _ = _run(capsys, "evaluate", "--quiet", "-m", "map", QRELS, other, "-")
        _, alone, _ = _run(capsys, "evaluate", "--quiet", "-m", "map", QRELS, RUN)
        assert code == 0 and together.splitlines()[1] == alone.strip()

    def test_two_runs_on_stdin_is_a_usage_error(self, capsys) -> None:
        with pytest.raises(SystemExit) as exit_:
            main(["evaluate", QRELS, "-", "-"])
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and err.count("\n") == 1 and "only one RUN can be -" in err

    @pytest.mark.parametrize("form", ["trec", "json", "csv", "tsv", "markdown", "latex"])
    def test_a_bad_later_run_is_one_error_line_and_no_output(self, capsys, write, other, form: str) -> None:
        """The third run is broken: one error line naming it, and nothing on stdout (never half a table)."""
        bad = write("bad.run", "q1 Q0 a 1\n")
        code, out, err = _run(capsys, "evaluate", "--quiet", "--format", form, "-q", "-m", "map", QRELS, RUN, other,
                              bad)
        assert code == 2 and out == "" and err.startswith(f"retrieval-eval: error: {bad}:1: ")
        assert err.count("\n") == 1

    def test_same_file_names_are_told_apart(self, capsys, tmp_path) -> None:
        for folder in ("a", "b"):
            (tmp_path / folder).mkdir()
            (tmp_path / folder / "run").write_bytes(Path(RUN).read_bytes())
        runs = [str(tmp_path / "a" / "run"), str(tmp_path / "b" / "run")]
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "csv", "-m", "map", QRELS, *runs)
        assert code == 0 and [row[0] for row in csv.reader(io.StringIO(out))][1:] == runs


class TestDiffTables:
    @pytest.mark.parametrize("form", ["csv", "tsv"])
    def test_reads_back_to_the_json_values(self, capsys, other, form: str) -> None:
        argv = ["diff", "--quiet", "-m", "map", "-m", "P.10", QRELS, RUN, other]
        code, out, _ = _run(capsys, *argv, "--format", form)
        _, text, _ = _run(capsys, *argv, "--format", "json")
        rows = list(csv.reader(io.StringIO(out), delimiter="," if form == "csv" else "\t"))
        blocks = json.loads(text)["measures"]
        assert code == 0 and rows[0] == ["measure", "query", "sample.run", "reversed.run.gz", "delta"]
        expected = [[b["measure"], r["query"], r["a"], r["b"], r["delta"]] for b in blocks for r in b["per_query"]]
        assert [[m, q, float(a), float(b), float(d)] for m, q, a, b, d in rows[1:]] == expected

    def test_markdown_and_latex_have_one_row_per_query(self, capsys, other) -> None:
        code, out, _ = _run(capsys, "diff", "--quiet", "--format", "markdown", QRELS, RUN, other)
        assert code == 0 and out.splitlines()[0] == "| measure | query | sample.run | reversed.run.gz | delta |"
        assert len(out.splitlines()) == 2 + 13
        code, out, _ = _run(capsys, "diff", "--quiet", "--format", "latex", QRELS, RUN, other)
        assert code == 0 and len(out.splitlines()) == 4 + 13 + 2
