"""The HTML report's data: every number equals what the commands print as JSON for the same inputs,
the flags agree with the run files read independently, and nothing in an input can close the data
block. The page itself is tested in a browser by test_report_browser.py."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from report_inputs import write_hostile_inputs, write_inputs

from retrieval_eval.cli import main
from retrieval_eval.report.html import json_for_script

MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@1000"]
DEPTH = 7


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exit_:  # argparse's own usage errors
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def cli_json(*argv: str) -> Any:
    code, out, err = run_cli(*argv)
    assert code == 0, err
    return json.loads(out)


def page_data(path: Path) -> Any:
    """The JSON block of a report, read back as a browser would take it."""
    page = path.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.DOTALL)
    assert block is not None
    return json.loads(block.group(1))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("report")
    paths = write_inputs(folder, queries=12, runs=3, depth=20)
    output = folder / "report.html"
    m = [x for name in MEASURES for x in ("-m", name)]
    code, _, err = run_cli("report", paths["qrels"], *paths["runs"], "--docs", paths["docs"], "--topics",
                           paths["topics"], "--depth", DEPTH, "-o", output, *m)
    assert code == 0, err
    return {"paths": paths, "output": output, "data": page_data(output), "m": m}


class TestNumbersAreTheCommandsJson:
    def test_comparison_is_compare_json(self, made: dict[str, Any]) -> None:
        """The comparison block is compare --format json, with the report's default seed 0."""
        p, data = made["paths"], made["data"]
        expected = cli_json("compare", p["qrels"], *p["runs"], "--format", "json", "--seed", "0", *made["m"])
        shown = {k: v for k, v in data["comparison"].items() if k not in ("letters", "legend", "marks")}
        assert shown == expected
        assert data["comparison"]["queries"] == 12

    def test_evaluations_are_evaluate_json(self, made: dict[str, Any]) -> None:
        """Each run's block is evaluate --format json -q, and its intervals evaluate --ci's."""
        p, data = made["paths"], made["data"]
        for name, run in zip(data["runs"], p["runs"]):
            expected = cli_json("evaluate", "-q", "--format", "json", "--ci", p["qrels"], run, *made["m"])
            shown = data["evaluations"][name]
            for key in ("run_id", "measures", "queries", "per_query", "aggregate"):
                assert shown[key] == expected[key], key
            assert data["ci"][name] == expected["ci"]
            pr = cli_json("evaluate", "--format", "json", "-m", "iprec_at_recall", p["qrels"], run)
            assert data["pr"][name] == pr["aggregate"]

    def test_differences_are_diff_json(self, made: dict[str, Any]) -> None:
        p, data = made["paths"], made["data"]
        for name, run in zip(data["runs"][1:], p["runs"][1:]):
            expected = cli_json("diff", "--format", "json", p["qrels"], p["runs"][0], run, *made["m"])
            assert data["diffs"][name] == expected

    @pytest.mark.parametrize("query", ["q1", "q12"])  # q12: missing from the second and third runs
    def test_one_query_is_inspect_and_diff_query_json(self, made: dict[str, Any], query: str) -> None:
        p, data = made["paths"], made["data"]
        for name, run in zip(data["runs"], p["runs"]):
            expected = cli_json("inspect", "--format", "json", "--query", query, "--depth", DEPTH, p["qrels"], run,
                                *made["m"])
            assert data["views"][name][query] == expected
        a, b = data["runs"][0], data["runs"][2]
        moved = cli_json("diff", "--format", "json", "--query", query, "--depth", DEPTH, p["qrels"], p["runs"][0],
                         p["runs"][2])
        assert data["pairs"][f"{a}\t{b}"][query] == {"entered": moved["entered"], "left": moved["left"]}
        assert moved["top_a"] == data["views"][a][query]["top"]
        assert moved["top_b"] == data["views"][b][query]["top"]

    def test_per_query_values_against_pytrec_eval(self, made: dict[str, Any]) -> None:
        """An oracle outside this package: trec_eval 9 (pytrec_eval) gives the page's per-query AP."""
        pytrec_eval = pytest.importorskip("pytrec_eval")
        p, data = made["paths"], made["data"]
        qrels: dict[str, dict[str, int]] = {}
        for line in Path(p["qrels"]).read_text().splitlines():
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
        for name, path in zip(data["runs"], p["runs"]):
            run: dict[str, dict[str, float]] = {}
            for line in Path(path).read_text().splitlines():
                q, _, d, _, s, _ = line.split()
                run.setdefault(q, {})[d] = float(s)
            scores = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
            for q, values in scores.items():
                assert data["evaluations"][name]["per_query"][q]["AP"] == pytest.approx(values["map"], abs=1e-12)


def _ranked(path: Path) -> dict[str, list[tuple[float, str]]]:
    """A run's rankings read from its lines: score descending, ties by doc_id descending (trec_eval)."""
    rankings: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        rankings.setdefault(q, []).append((float(s), d))
    return {q: sorted(r, reverse=True) for q, r in rankings.items()}


class TestFlags:
    def test_flags_match_the_files(self, made: dict[str, Any]) -> None:
        """missing, tied and unjudged, counted from the raw files with no code of the package."""
        p, data = made["paths"], made["data"]
        judged: dict[str, set[str]] = {}
        for line in Path(p["qrels"]).read_text().splitlines():
            q, _, d, _ = line.split()
            judged.setdefault(q, set()).add(d)
        expected: dict[str, dict[str, list[str]]] = {}
        for name, path in zip(data["runs"], p["runs"]):
            rankings = _ranked(Path(path))
            for q, judged_here in judged.items():
                top = rankings.get(q, [])[:DEPTH]
                kinds = []
                if q not in rankings:
                    kinds.append("missing")
                elif sum(d in judged_here for _, d in top) / len(top) < 0.5:  # Judged@k: over min(k, n) documents
                    kinds.append("unjudged")
                if len({s for s, _ in top}) < len(top):
                    kinds.append("tied")
                for kind in kinds:
                    expected.setdefault(q, {}).setdefault(kind, []).append(name)
        assert data["flags"] == expected
        assert any("tied" in f for f in expected.values()) and any("missing" in f for f in expected.values())

    def test_only_shown_documents_are_embedded(self, made: dict[str, Any]) -> None:
        data = made["data"]
        shown = {d["doc_id"] for views in data["views"].values() for v in views.values()
                 for d in v["top"] + v["missed"][:DEPTH]}
        assert set(data["docs"]) == shown
        assert len(data["docs"]) < 12 * 30  # the collection has 360 documents
        assert all(len(text) <= 301 for text in data["docs"].values())


class TestProvenance:
    def test_inputs_are_stamped(self, made: dict[str, Any]) -> None:
        import hashlib

        p, data = made["paths"], made["data"]
        inputs = data["provenance"]["inputs"]
        assert inputs["qrels"]["sha256"] == hashlib.sha256(Path(p["qrels"]).read_bytes()).hexdigest()
        assert [r["sha256"] for r in inputs["runs"]] == [hashlib.sha256(Path(r).read_bytes()).hexdigest()
                                                         for r in p["runs"]]
        assert inputs["docs"]["name"] == str(p["docs"])
        assert data["provenance"]["options"]["--depth"] == DEPTH


class TestEscaping:
    @settings(max_examples=60, deadline=None)
    @given(st.recursive(st.text(st.sampled_from("<>&/!-\"'\\ \u2028\u2029\x00\x1f\udcffscript")) | st.text()
                        | st.integers() | st.booleans() | st.none(),
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                        max_leaves=10))
    def test_json_for_script_reads_back_and_cannot_close_the_block(self, value: Any) -> None:
        text = json_for_script(value)
        assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
        assert text.isascii()
        assert json.loads(text) == value

    def test_hostile_inputs(self, tmp_path: Path) -> None:
        """Markup, quotes, control characters and bytes that are not UTF-8 stay data."""
        evil = b'd<script>alert(1)</script>"\'&amp;\x01\xff\xfe'
        query = b"q<img/src=x/onerror=alert(2)>\xc3"
        inputs = write_hostile_inputs(tmp_path, doc=evil, query=query, run_tag=b"r</title>",
                                      text=b"</script><script>alert(3)</script>\xe2\x80\xa8\x1b[31m\xff",
                                      topic=b'"><svg onload=alert(4)>')
        output = tmp_path / "r.html"
        code, _, err = run_cli("report", *inputs, "-o", output, "--title", "</title><script>alert(5)</script>")
        assert code == 0, err
        page = output.read_text(encoding="utf-8")
        assert page.count("<script") == 2  # the data block and the page's own script, nothing else
        assert "<title>&lt;/title&gt;&lt;script&gt;alert(5)&lt;/script&gt;</title>" in page
        data = page_data(output)
        doc_id = evil.decode("utf-8", "surrogateescape")
        assert data["views"][data["runs"][0]][query.decode("utf-8", "surrogateescape")]["top"][0]["doc_id"] == doc_id
        assert data["docs"][doc_id].startswith("</script><script>alert(3)</script>")
        assert "\ufffd" in data["docs"][doc_id]  # the byte that is not UTF-8, replaced


class TestCommand:
    def test_one_run(self, made: dict[str, Any], tmp_path: Path) -> None:
        """One run: its evaluation, its queries and rankings, and no comparison."""
        p = made["paths"]
        output = tmp_path / "one.html"
        code, _, err = run_cli("report", p["qrels"], p["runs"][1], "-o", output, *made["m"])
        assert code == 0, err
        data = page_data(output)
        expected = cli_json("evaluate", "-q", "--format", "json", p["qrels"], p["runs"][1], *made["m"])
        assert data["comparison"] is None and data["diffs"] == {} and data["pairs"] == {}
        assert data["evaluations"]["system1"]["per_query"] == expected["per_query"]
        assert data["flags"]["q12"] == {"missing": ["system1"]}

    def test_a_failed_report_leaves_the_old_file(self, made: dict[str, Any], tmp_path: Path) -> None:
        p = made["paths"]
        output = tmp_path / "report.html"
        output.write_text("old")
        (tmp_path / "docs.tsv").write_text("d1\tfine\nbroken line\n")
        code, _, err = run_cli("report", p["qrels"], *p["runs"], "--docs", tmp_path / "docs.tsv", "-o", output)
        assert code == 2
        assert err == f"retrieval-eval: error: {tmp_path}/docs.tsv:2: expected a document id, a tab and the " \
                      "document's text, found 'broken line'\n"
        assert output.read_text() == "old" and sorted(f.name for f in tmp_path.iterdir()) == ["docs.tsv", "report.html"]

    @pytest.mark.parametrize(("extra", "message"), [
        (["-o", "{run}"], "-o: '{run}' is also an input ('{run}'); writing the report would replace it"),
        (["-o", "{dir}/r.html", "--docs", "{dir}/nope.tsv"], "--docs: '{dir}/nope.tsv' is not a file"),
        (["-o", "{dir}/r.html", "--topics", "-"], "--topics must be a file, not standard input"),
        (["-o", "{dir}/r.html", "--unjudged-below", "1.5"],
         "argument --unjudged-below: expected a number from 0 to 1, found '1.5'"),
        (["-o", "{dir}/no/r.html"], "-o: the directory of '{dir}/no/r.html' does not exist"),
    ])
    def test_usage_errors_before_reading(self, made: dict[str, Any], tmp_path: Path, extra: list[str],
                                         message: str) -> None:
        p = made["paths"]
        fill = {"run": str(p["runs"][0]), "dir": str(tmp_path)}
        code, out, err = run_cli("report", p["qrels"], *p["runs"], *(e.format(**fill) for e in extra))
        assert code == 2 and out == ""
        assert message.format(**fill) in err and err.count("\n") == 1

    def test_json_forms_only_where_they_exist(self, made: dict[str, Any]) -> None:
        p = made["paths"]
        code, _, err = run_cli("inspect", "--format", "json", p["qrels"], p["runs"][0])
        assert code == 2 and "--format json shows one query; give --query Q" in err
        code, _, err = run_cli("diff", "--format", "csv", "--query", "q1", p["qrels"], *p["runs"][:2])
        assert code == 2 and "--query shows two rankings as text or json" in err

    def test_python_function(self, made: dict[str, Any], tmp_path: Path) -> None:
        """retrieval_eval.report: the package called; runs as a mapping or a list of files."""
        import retrieval_eval
        import retrieval_eval.report.text  # the subpackage imported first: the name stays callable

        p = made["paths"]
        data = retrieval_eval.report(p["qrels"], p["runs"][:2], ["AP"], output=tmp_path / "r.html", depth=3)
        assert data["runs"] == ["run0.txt", "run1.txt"] and data["limits"]["depth"] == 3
        assert data["comparison"] == cli_json("compare", p["qrels"], *p["runs"][:2], "-m", "AP", "--format", "json",
                                              "--seed", "0", "--names", "run0.txt,run1.txt") | {
            k: data["comparison"][k] for k in ("letters", "legend", "marks")}
        with pytest.raises(retrieval_eval.RetrievalEvalError, match="same file name"):
            retrieval_eval.report(p["qrels"], [p["runs"][0], p["runs"][0]], output=tmp_path / "x.html")
        with pytest.raises(retrieval_eval.RetrievalEvalError, match="is also an input"):
            retrieval_eval.report(p["qrels"], p["runs"][:2], output=p["qrels"])
