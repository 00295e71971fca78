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
import re
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
        # Each run is named by its run_id (issue 27), and -q rows say whether they are a query or the summary.
        documents = {"sample": _json(capsys, RUN, *q, *MEASURES), "reversed": _json(capsys, other, *q, *MEASURES)}
        labels = header[3:] if per_query else header[1:]
        assert header[:3] == (["run", "query", "kind"] if per_query else ["run", labels[0], labels[1]])
        assert "num_q" in labels and "nDCG@10" in labels and ("relstring_5" in labels) == per_query
        expected_rows = 0
        for name, document in documents.items():
            aggregate = document["aggregate"]
            per = document.get("per_query", {})
            expected_rows += 1 + len(per)
            for row in (r for r in body if r[0] == name):
                values = row[3:] if per_query else row[1:]
                if per_query:
                    assert row[2] == ("summary" if row[1] == "all" else "query")
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
        assert code == 0 and list(csv.reader(io.StringIO(out)))[1] == ["r", "q,1", "query", "1.0"]


class TestReadableTables:
    @pytest.mark.parametrize("per_query", [False, True], ids=["summary", "per-query"])
    def test_markdown_header_and_rows(self, capsys, other, per_query: bool) -> None:
        q = ["-q"] if per_query else []
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "markdown", *q, "-m", "map", "-m", "P.10",
                            QRELS, RUN, other)
        lines = out.splitlines()
        assert code == 0
        assert lines[0] == ("| run | query | map | P_10 |" if per_query else "| run | map | P_10 |")  # no kind
        assert lines[1] == ("|---|---|---:|---:|" if per_query else "|---|---:|---:|")
        assert len(lines) == 2 + (2 * 14 if per_query else 2)  # 13 queries and 'all', per run
        first = _json(capsys, RUN, "-m", "map")["aggregate"]["map"]  # type: ignore[index]
        summary = next(line for line in lines if line.startswith("| sample |") and ("| all |" in line
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
        assert len(body) == 2 and body[0].startswith("sample & ") and body[1].startswith("reversed & ")
        assert all(line.endswith(r" \\") for line in body)

    def test_digits_round_markdown(self, capsys) -> None:
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "markdown", "--digits", "2", "-m", "map",
                            QRELS, RUN)
        assert code == 0 and out.splitlines()[2] == "| sample | 0.27 |"


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
        # Each block opens with its runid line (issue 27: any -m tells the runs apart); trec_eval's own
        # runid line (official) is not repeated in the block.
        heads = ["runid                 \tall\tsample\n", "runid                 \tall\treversed\n"]
        assert code == 0 and together == "".join(head + out.replace(head, "") for head, out in zip(heads, outputs))

    def test_json_is_a_list_of_the_single_run_documents(self, capsys, other) -> None:
        single = [_json(capsys, run, "-q", "-m", "map") for run in (RUN, other)]
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "json", "-q", "-m", "map", QRELS, RUN, other)
        documents = json.loads(out)
        assert code == 0 and [d.pop("run") for d in documents] == ["sample", "reversed"]
        assert [d.pop("inputs") for d in documents] == [{"qrels": QRELS, "runs": [RUN, other]}] * 2
        assert [d.pop("inputs") for d in single] == [{"qrels": QRELS, "runs": [run]} for run in (RUN, other)]
        assert documents == single  # the same objects, each named first by its run's run_id
        assert next(iter(json.loads(out)[0])) == "run"

    def test_qrels_are_read_once(self, capsys, other, monkeypatch) -> None:
        """Three runs, one read of the qrels (a spy on the qrels reader counts the calls)."""
        from retrieval_eval.io import formats

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
        assert code == 0 and together.splitlines()[2:] == ["runid                 \tall\tsample", alone.strip()]

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
        assert code == 0 and rows[0] == ["measure", "query", "sample", "reversed", "delta"]  # run_ids
        expected = [[b["measure"], r["query"], r["a"], r["b"], r["delta"]] for b in blocks for r in b["per_query"]]
        assert [[m, q, float(a), float(b), float(d)] for m, q, a, b, d in rows[1:]] == expected

    def test_markdown_and_latex_have_one_row_per_query(self, capsys, other) -> None:
        code, out, _ = _run(capsys, "diff", "--quiet", "--format", "markdown", QRELS, RUN, other)
        assert code == 0 and out.splitlines()[0] == "| measure | query | sample | reversed | delta |"
        assert len(out.splitlines()) == 2 + 13
        code, out, _ = _run(capsys, "diff", "--quiet", "--format", "latex", QRELS, RUN, other)
        assert code == 0 and len(out.splitlines()) == 4 + 13 + 2


class TestOutputToPaste:
    """Issue 27, section D: names, column order, labels as typed, summary rows marked, JSON provenance,
    and the wide per-query table."""

    def test_names_name_the_runs_in_every_format(self, capsys, other) -> None:
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--names", "bm25,rev", "--format", "csv", "-m", "map",
                            QRELS, RUN, other)
        assert code == 0 and [row[0] for row in csv.reader(io.StringIO(out))] == ["run", "bm25", "rev"]
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--names", "bm25,rev", "-m", "map", QRELS, RUN, other)
        assert code == 0 and [line.split("\t")[2] for line in out.splitlines()][::2] == ["bm25", "rev"]
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--names", "bm25", "--format", "json", "-m", "map",
                            QRELS, RUN)
        assert code == 0 and json.loads(out)["run"] == "bm25" and json.loads(out)["run_id"] == "sample"

    @pytest.mark.parametrize(("names", "message"), [
        ("a,", "--names: every run needs a name; got 'a,'"), ("a,,b", "every run needs a name"),
        ("a", "--names gives 1 name for 2 runs"), ("a,a", "two runs have the same name")])
    def test_bad_names_are_a_usage_error(self, capsys, other, names: str, message: str) -> None:
        code, out, err = _run(capsys, "evaluate", "--names", names, "-m", "map", QRELS, RUN, other)
        assert (code, out) == (2, "") and err.count("\n") == 1 and message in err

    @pytest.mark.parametrize("form", ["csv", "tsv", "markdown", "latex"])
    def test_columns_follow_m_and_keep_the_typed_spelling(self, capsys, form: str) -> None:
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", form, "-m", "Recall@100", "-m", "MRR@10",
                            "-m", "map", "-m", "P.10,5", QRELS, RUN)
        assert code == 0
        header = out.splitlines()[2 if form == "latex" else 0]
        cells = [c.strip() for c in re.split(r"[,\t|&]", header.replace("\\\\", "").replace("\\_", "_")) if c.strip()]
        assert cells == ["run", "Recall@100", "MRR@10", "map", "P_5", "P_10"]  # P.10,5 prints as trec_eval does

    def test_trec_lines_keep_trec_eval_order_and_names(self, capsys) -> None:
        code, out, _ = _run(capsys, "evaluate", "--quiet", "-m", "Recall@100", "-m", "MRR@10", "-m", "map", QRELS, RUN)
        assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["map", "R@100", "RR@10"]

    def test_json_keys_are_typed_with_the_canonical_name_beside(self, capsys) -> None:
        document = _json(capsys, RUN, "-q", "-m", "Recall@100", "-m", "mrr@10", "-m", "map")
        assert document["measures"] == {"Recall@100": "R@100", "mrr@10": "RR@10", "map": "AP"}
        assert list(document["aggregate"]) == ["Recall@100", "mrr@10", "map"]  # type: ignore[call-overload]
        canonical = _json(capsys, RUN, "-m", "R@100", "-m", "RR@10")["aggregate"]
        assert document["aggregate"]["Recall@100"] == canonical["R@100"]  # type: ignore[index]
        assert document["aggregate"]["mrr@10"] == canonical["RR@10"]  # type: ignore[index]

    def test_runs_sharing_a_run_id_are_named_by_file(self, capsys, tmp_path) -> None:
        copy = tmp_path / "copy.run"
        copy.write_bytes(Path(RUN).read_bytes())
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "csv", "-m", "map", QRELS, RUN, str(copy))
        assert code == 0 and [row[0] for row in csv.reader(io.StringIO(out))][1:] == ["sample.run", "copy.run"]

    @pytest.mark.parametrize("options", [["-m", "map"], ["-q", "-m", "P.5"], ["-q", "-n", "-m", "map"]])
    def test_trec_blocks_open_with_the_run_name(self, capsys, other, options: list[str]) -> None:
        code, out, _ = _run(capsys, "evaluate", "--quiet", *options, QRELS, RUN, other)
        runids = [line.split("\t") for line in out.splitlines() if line.startswith("runid")]
        assert code == 0 and [cells[2] for cells in runids] == ["sample", "reversed"]
        blocks = out.split("runid")[1:]
        assert len(blocks) == 2 and blocks[0].count("\n") == blocks[1].count("\n")

    def test_a_query_named_all_is_not_a_summary(self, capsys, write) -> None:
        qrels = write("qrels", "all 0 a 1\nq2 0 b 1\n")
        run = write("run", "all Q0 a 1 1.0 r\nq2 Q0 c 1 1.0 r\n")
        code, out, _ = _run(capsys, "evaluate", "--quiet", "-q", "-m", "P.1", "--format", "csv", qrels, run)
        rows = list(csv.DictReader(io.StringIO(out)))
        assert code == 0 and [(r["query"], r["kind"], r["P_1"]) for r in rows] == [
            ("all", "query", "1.0"), ("q2", "query", "0.0"), ("all", "summary", "0.5")]

    def test_json_records_version_options_and_inputs(self, capsys) -> None:
        from retrieval_eval import __version__

        document = _json(capsys, RUN, "-l", "2", "-M", "50", "-J", "-m", "map", "-m", "ndcg@10")
        assert document["version"] == __version__
        assert document["options"] == {"-m": ["map", "ndcg@10"], "-c": True, "-l": 2, "-M": 50, "-J": True,
                                       "--order": "score", "--duplicates": "error"}
        assert document["inputs"] == {"qrels": QRELS, "runs": [RUN]}
        assert _json(capsys, RUN, "--skip-missing")["options"]["-c"] is False  # type: ignore[index]

    @pytest.mark.parametrize("form", ["csv", "tsv", "markdown", "latex"])
    def test_wide_table_is_a_row_per_query_and_a_column_per_run(self, capsys, other, form: str) -> None:
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", form, "--wide", "ndcg@10", QRELS, RUN, other)
        assert code == 0
        per = [_json(capsys, run, "-q", "-m", "nDCG@10") for run in (RUN, other)]
        queries = list(per[0]["per_query"])  # type: ignore[call-overload]
        lines = out.splitlines()
        if form in ("csv", "tsv"):
            rows = list(csv.reader(io.StringIO(out), delimiter="," if form == "csv" else "\t"))
            assert rows[0] == ["query", "kind", "sample", "reversed"]
            assert [row[0] for row in rows[1:]] == [*queries, "all"]
            assert [row[1] for row in rows[1:]] == ["query"] * len(queries) + ["summary"]
            for row in rows[1:-1]:
                assert [float(v) for v in row[2:]] == [d["per_query"][row[0]]["nDCG@10"] for d in per]  # type: ignore[index]
            assert [float(v) for v in rows[-1][2:]] == [d["aggregate"]["nDCG@10"] for d in per]  # type: ignore[index]
        elif form == "markdown":
            assert lines[:2] == ["| query | sample | reversed |", "|---|---:|---:|"] and len(lines) == 2 + 14
            assert lines[2] == "| {} | {:.4f} | {:.4f} |".format(
                queries[0], *(d["per_query"][queries[0]]["nDCG@10"] for d in per))  # type: ignore[index]
        else:
            assert lines[:3] == [r"\begin{tabular}{lrr}", r"\toprule", r"query & sample & reversed \\"]
            assert len(lines) == 4 + 14 + 2

    def test_wide_leaves_a_cell_empty_where_a_run_lacks_the_query(self, capsys, write) -> None:
        qrels = write("qrels", "q1 0 a 1\nq2 0 b 1\n")
        one = write("one.run", "q1 Q0 a 1 1.0 one\nq2 Q0 b 1 1.0 one\n")
        two = write("two.run", "q2 Q0 x 1 1.0 two\n")
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--skip-missing", "-n", "--format", "csv", "--wide", "P@1",
                            qrels, one, two)
        assert code == 0 and out.splitlines() == ["query,kind,one,two", "q1,query,1.0,", "q2,query,1.0,0.0"]

    @pytest.mark.parametrize(("argv", "message"), [
        (["--wide", "map"], "--wide prints a table; give --format csv, tsv, markdown or latex"),
        (["--wide", "map", "--format", "json"], "--wide prints a table"),
        (["--wide", "map", "-m", "P.5", "--format", "csv"], "--wide MEASURE replaces -m"),
        (["--wide", "P.5,10", "--format", "csv"], "--wide 'P.5,10' names 2 measures; give one"),
        (["--wide", "num_q", "--format", "csv"], "no per-query value"),
    ])
    def test_wide_usage_errors(self, capsys, argv: list[str], message: str) -> None:
        try:
            code, out, err = _run(capsys, "evaluate", *argv, QRELS, RUN)
        except SystemExit as exit_:  # the checks before any input is read end as argparse's own
            (code, out, err) = (exit_.code, *capsys.readouterr())
        assert (code, out) == (2, "") and err.count("\n") == 1 and message in err

    def test_json_inputs_of_a_log_and_of_stdin(self, capsys, write, monkeypatch) -> None:
        log = write("log.tsv", "s1\ta\t0.9\t1\ns1\tb\t0.5\t0\n")
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--log", log, "-m", "AUC", "--format", "json")
        assert code == 0 and json.loads(out)["inputs"] == {"log": log}
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(RUN).read_bytes())))
        code, out, _ = _run(capsys, "evaluate", "--quiet", "-m", "map", "--format", "json", QRELS, "-")
        assert code == 0 and json.loads(out)["inputs"] == {"qrels": QRELS, "runs": ["-"]}
