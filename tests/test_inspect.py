"""``retrieval-eval inspect`` and ``diff`` (issue 11): every number they show is evaluate's.

The oracle is ``evaluate -q --format json`` on the same files, or a hand count on small handmade
files; the views must agree with it for the same query and measure.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import shlex
from pathlib import Path

import pytest

from retrieval_eval.cli import main
from retrieval_eval.data import sample_paths

QRELS, RUN = sample_paths()


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _usage(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Exit code and stderr of a command argparse itself refuses (it raises SystemExit)."""
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    return int(exit_.value.code or 0), capsys.readouterr().err


def _per_query(capsys: pytest.CaptureFixture[str], run: str, *measures: str, qrels: str = QRELS,
               options: tuple[str, ...] = ()) -> dict[str, dict[str, float]]:
    """evaluate's per-query values (full precision JSON), the oracle of every view here."""
    argv = ["evaluate", "--quiet", "-q", "--format", "json", *options]
    for m in measures:
        argv += ["-m", m]
    code, out, _ = _run(capsys, *argv, qrels, run)
    assert code == 0
    per_query: dict[str, dict[str, float]] = json.loads(out)["per_query"]
    return per_query


@pytest.fixture
def shuffled(tmp_path: Path) -> str:
    """A second run over the sample: the same documents, scores moved by a fixed amount per document id.

    The same bytes as the awk line of docs/inspecting.md makes (awk prints numbers with %.6g)."""
    lines = []
    for line in Path(RUN).read_text().splitlines():
        q, it, doc, rank, score, _ = line.split()
        moved = float(score) + int(doc.rsplit("-", 1)[1]) % 7 * 0.25
        lines.append(f"{q} {it} {doc} {rank} {moved:.6g} shuffled")
    path = tmp_path / "shuffled.run"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _section(out: str, title: str) -> list[list[str]]:
    """The rows (split on whitespace) of the block that follows the line starting with ``title``."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title)) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        rows.append(line.split())
    return rows


MEASURES = ("map", "P.5", "ndcg_cut.10", "recip_rank", "num_rel_ret", "bpref", "nDCG@20", "Rprec", "num_ret")


class TestInspectQuery:
    @pytest.mark.parametrize("query", ["q1", "q5", "q12", "q13"])
    def test_values_are_evaluates(self, capsys, query: str) -> None:
        """The measures block holds evaluate -q's value of the same query (to 17 decimals)."""
        expected = _per_query(capsys, RUN, *MEASURES)[query]
        argv = ["inspect", QRELS, RUN, "--query", query, "--digits", "17"]
        for m in MEASURES:
            argv += ["-m", m]
        code, out, err = _run(capsys, *argv)
        assert code == 0 and err == ""
        shown = {label: value for label, value in _section(out, "measures:")}
        assert set(shown) == set(expected)
        for label, value in shown.items():
            assert math.isclose(float(value), expected[label], rel_tol=0, abs_tol=1e-16), label

    def test_api_values_are_exactly_the_set_evaluators(self) -> None:
        """inspect_query reads the query's own rows; its values equal the whole run's row exactly."""
        from retrieval_eval import SetEvaluator
        from retrieval_eval.analysis.inspection import inspect_query
        from retrieval_eval.measures import parse_trec_options

        results = SetEvaluator.from_trec(QRELS, RUN)
        measures = parse_trec_options(["official", "ndcg_cut.10", "nDCG@20", "infAP", "relstring.10"])
        for query in results.query_ids:
            view = inspect_query(results, query, [(label, m) for m, label in measures])
            index = results.query_ids.index(query)
            for (label, value), (m, _) in zip(view.values, [(m, lab) for m, lab in measures
                                                             if not m.definition.summary_only]):
                if m.definition.text:
                    assert value == results.per_query_text(m)[query]
                else:
                    assert value == results.array(m)[index], (query, label)

    def test_does_not_evaluate_the_whole_run(self, capsys, monkeypatch) -> None:
        """One query's view never computes a measure over every query (no SetEvaluator.array call)."""
        from retrieval_eval.evaluators.set import SetEvaluator

        def whole_run(*_: object) -> None:
            raise AssertionError("inspect --query computed a measure over the whole run")

        monkeypatch.setattr(SetEvaluator, "array", whole_run)
        code, out, _ = _run(capsys, "inspect", QRELS, RUN, "--query", "q3")
        assert code == 0 and "measures:" in out

    def test_ranking_judgments_and_misses_on_handmade_files(self, capsys, write) -> None:
        """Grades, unjudged, the negative pooled value, the relevance mark and the misses (highest grade first)."""
        qrels = write("qrels", "q1 0 a 2\nq1 0 b 0\nq1 0 c -1\nq1 0 m1 1\nq1 0 m3 3\nq1 0 m2 2\nq1 0 z 1\n")
        run = write("run", "q1 Q0 a 1 9 r\nq1 Q0 u 2 8 r\nq1 Q0 b 3 7 r\nq1 Q0 c 4 6 r\nq1 Q0 z 5 5 r\n")
        code, out, _ = _run(capsys, "inspect", qrels, run, "--query", "q1", "--depth", "4", "-m", "P.5")
        assert code == 0
        assert _section(out, "rank")[:-1] == [
            ["1", "*", "a", "9.0", "2"], ["2", "u", "8.0", "unjudged"], ["3", "b", "7.0", "0"],
            ["4", "c", "6.0", "-1", "(pooled,", "not", "judged)"],
        ]
        assert "(1 more retrieved below rank 4; --depth shows more)" in out
        assert _section(out, "relevant documents not retrieved") == [
            ["doc_id", "judgment"], ["m3", "3"], ["m2", "2"], ["m1", "1"]]
        assert _section(out, "measures:") == [["P_5", "0.4000"]]  # a and z of 5
        assert out.startswith("query q1 in r: 5 retrieved, R = 5 ")  # its run_id

    def test_level_changes_what_is_relevant(self, capsys, write) -> None:
        qrels = write("qrels", "q1 0 a 2\nq1 0 b 1\nq1 0 m 1\n")
        run = write("run", "q1 Q0 a 1 9 r\nq1 Q0 b 2 8 r\n")
        code, out, _ = _run(capsys, "inspect", qrels, run, "--query", "q1", "-l", "2", "-m", "num_rel")
        assert code == 0
        assert [row[:2] for row in _section(out, "rank")] == [["1", "*"], ["2", "b"]]
        assert "relevant documents not retrieved: none" in out and _section(out, "measures:") == [["num_rel", "1"]]

    def test_query_missing_from_the_run_shows_every_relevant_document_missed(self, capsys) -> None:
        code, out, _ = _run(capsys, "inspect", QRELS, RUN, "--query", "q13", "-m", "num_rel")
        rows = _section(out, "relevant documents not retrieved")[1:]
        assert code == 0 and out.startswith("query q13 in sample: 0 retrieved, R = 22")
        assert len(rows) == 22 and [int(r[1]) for r in rows] == sorted((int(r[1]) for r in rows), reverse=True)


class TestWorst:
    def test_order_and_columns_against_evaluate(self, capsys) -> None:
        """The N worst on nDCG@10 are evaluate's lowest (ties in query order); R, first relevant rank and
        missed agree with evaluate's counts and with each query's own ranking."""
        values = _per_query(capsys, RUN, "nDCG@10", "num_rel", "num_rel_ret")
        expected = sorted(values, key=lambda q: values[q]["nDCG@10"])[:6]  # sorted() is stable: query order
        code, out, _ = _run(capsys, "inspect", "--quiet", QRELS, RUN, "-m", "nDCG@10", "--worst", "6",
                            "--digits", "17")
        assert code == 0
        rows = _section(out, "query")
        assert [row[0] for row in rows] == expected
        for query, value, relevant, first, missed in rows:
            assert math.isclose(float(value), values[query]["nDCG@10"], abs_tol=1e-16)
            assert int(relevant) == values[query]["num_rel"]
            assert int(missed) == values[query]["num_rel"] - values[query]["num_rel_ret"]
            # The first relevant rank, read off the query's own ranking (its first '*').
            _, view, _ = _run(capsys, "inspect", QRELS, RUN, "--query", query, "--depth", "1000")
            empty = "\n(nothing retrieved)\n" in view  # a judged query the run lacks (q13): no ranking
            marked = [] if empty else [int(row[0]) for row in _section(view, "rank") if row[1] == "*"]
            assert first == (str(marked[0]) if marked else "-")

    def test_sorts_by_the_first_measure_given(self, capsys) -> None:
        """-m nDCG@10 -m map ranks by nDCG@10 even though map comes first in trec_eval's order."""
        values = _per_query(capsys, RUN, "nDCG@10")
        code, out, _ = _run(capsys, "inspect", "--quiet", QRELS, RUN, "-m", "nDCG@10", "-m", "map")
        header = out.splitlines()[2].split()
        assert code == 0 and header[:3] == ["query", "nDCG@10", "map"]
        assert [row[0] for row in _section(out, "query")] == sorted(values, key=lambda q: values[q]["nDCG@10"])[:10]

    def test_default_lists_ten_on_map(self, capsys) -> None:
        code, out, _ = _run(capsys, "inspect", "--quiet", QRELS, RUN)
        assert code == 0 and out.startswith("the 10 worst of 13 queries on map") and len(_section(out, "query")) == 10


class TestDiff:
    def test_counts_and_deltas_against_evaluate(self, capsys, shuffled) -> None:
        """helped/hurt/unchanged are a hand count over evaluate's per-query values of both runs."""
        a, b = _per_query(capsys, RUN, "nDCG@10"), _per_query(capsys, shuffled, "nDCG@10")
        deltas = {q: b[q]["nDCG@10"] - a[q]["nDCG@10"] for q in a}
        helped = sum(d > 0 for d in deltas.values())
        hurt = sum(d < 0 for d in deltas.values())
        code, out, _ = _run(capsys, "diff", "--quiet", QRELS, RUN, shuffled, "--top", "3")
        assert code == 0
        assert f"helped {helped}, hurt {hurt}, unchanged {len(deltas) - helped - hurt}" in out
        gains = sorted((q for q in deltas if deltas[q] > 0), key=lambda q: -deltas[q])[:3]
        losses = sorted((q for q in deltas if deltas[q] < 0), key=lambda q: deltas[q])[:3]
        assert [row[0] for row in _section(out, "largest gains:")[1:]] == gains
        assert [row[0] for row in _section(out, "largest losses:")[1:]] == losses
        for row in _section(out, "largest losses:")[1:]:
            assert float(row[3]) == pytest.approx(deltas[row[0]], abs=5e-5)

    def test_json_holds_every_query_sorted(self, capsys, shuffled) -> None:
        a, b = _per_query(capsys, RUN, "map"), _per_query(capsys, shuffled, "map")
        code, out, _ = _run(capsys, "diff", "--quiet", "-m", "map", "--format", "json", QRELS, RUN, shuffled)
        (block,) = json.loads(out)["measures"]
        rows = block["per_query"]
        assert code == 0 and len(rows) == len(a)
        for row in rows:  # exactly evaluate's values, and b - a
            assert row["a"] == a[row["query"]]["map"] and row["b"] == b[row["query"]]["map"]
            assert row["delta"] == b[row["query"]]["map"] - a[row["query"]]["map"]
        assert [row["delta"] for row in rows] == sorted((row["delta"] for row in rows), reverse=True)

    def test_a_run_against_itself_changes_nothing(self, capsys) -> None:
        code, out, _ = _run(capsys, "diff", "--quiet", QRELS, RUN, RUN, "--names", "x,y")
        assert code == 0 and "helped 0, hurt 0, unchanged 13" in out
        assert "largest gains: none" in out and "largest losses: none" in out

    def test_query_entered_and_left_by_hand(self, capsys, write) -> None:
        """Top 3 of A: a b c; of B: d a e. Entered: d (A's rank 4), e (not in A); left: b (B's rank 5), c (not in B)."""
        qrels = write("qrels", "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq1 0 d 1\nq1 0 e -1\nq2 0 x 1\n")
        run_a = write("a.run", "q1 Q0 a 1 5 A\nq1 Q0 b 2 4 A\nq1 Q0 c 3 3 A\nq1 Q0 d 4 2 A\nq2 Q0 x 1 1 A\n")
        run_b = write("b.run", "q1 Q0 d 1 5 B\nq1 Q0 a 2 4 B\nq1 Q0 e 3 3 B\nq1 Q0 f 4 2 B\nq1 Q0 b 5 1 B\n")
        code, out, _ = _run(capsys, "diff", "--quiet", qrels, run_a, run_b, "--query", "q1", "--depth", "3",
                            "-m", "P.3")
        assert code == 0
        assert _section(out, "entered the top 3")[1:] == [["*", "d", "1", "4", "1"],
                                                         ["e", "3", "-", "-1", "(pooled,", "not", "judged)"]]
        assert _section(out, "left the top 3")[1:] == [["b", "2", "5", "0"], ["*", "c", "3", "-", "2"]]
        assert "P_3: 0.6667 -> 0.6667  (+0.0000)" in out
        assert _section(out, "rank")[:3] == [["1", "*", "a", "1", "*", "d", "1"], ["2", "b", "0", "*", "a", "1"],
                                             ["3", "*", "c", "2", "e", "-1", "(pooled,", "not", "judged)"]]

    def test_query_values_are_evaluates(self, capsys, shuffled) -> None:
        a, b = _per_query(capsys, RUN, "nDCG@10"), _per_query(capsys, shuffled, "nDCG@10")
        code, out, _ = _run(capsys, "diff", "--quiet", QRELS, RUN, shuffled, "--query", "q12", "--digits", "17")
        line = next(line for line in out.splitlines() if line.strip().startswith("nDCG@10:"))
        before, after = line.split()[1], line.split()[3]
        assert code == 0
        assert math.isclose(float(before), a["q12"]["nDCG@10"], abs_tol=1e-16)
        assert math.isclose(float(after), b["q12"]["nDCG@10"], abs_tol=1e-16)


class TestErrors:
    @pytest.mark.parametrize("command", [["inspect", QRELS, RUN], ["diff", QRELS, RUN, RUN, "--names", "sample.run,b"]])
    def test_unknown_query_suggests_the_closest(self, capsys, command: list[str]) -> None:
        code, out, err = _run(capsys, *command, "--query", "q1x")
        assert code == 2 and out == ""
        assert err == ("retrieval-eval: error: no query 'q1x' among the 13 evaluated queries of sample.run "
                       "(did you mean 'q1'?)\n")

    def test_unjudged_query_is_named_as_such(self, capsys) -> None:
        code, _, err = _run(capsys, "inspect", QRELS, RUN, "--query", "q99")
        assert code == 2 and err == ("retrieval-eval: error: query 'q99' of sample.run has no judgments in the "
                                     "qrels, so it is not evaluated\n")

    def test_nothing_close_no_suggestion(self, capsys) -> None:
        code, _, err = _run(capsys, "inspect", QRELS, RUN, "--query", "zzzzzzzz")
        assert code == 2 and "did you mean" not in err and err.count("\n") == 1

    @pytest.mark.parametrize("value", ["0", "-1", "x", "1.5"])
    @pytest.mark.parametrize("option", ["--depth", "--worst"])
    def test_bad_counts(self, capsys, option: str, value: str) -> None:
        code, err = _usage(capsys, "inspect", QRELS, RUN, option, value)
        assert code == 2 and err.count("\n") == 1 and f"argument {option}" in err

    @pytest.mark.parametrize("argv", [
        ["inspect", QRELS, RUN, "--depth", "5"],
        ["inspect", QRELS, RUN, "--query", "q1", "--worst", "5"],
        ["diff", QRELS, RUN, RUN, "--depth", "5"],
        ["diff", QRELS, RUN, RUN, "--query", "q1", "--top", "5"],
        ["diff", QRELS, RUN, RUN, "--query", "q1", "--format", "csv"],
        ["diff", QRELS, RUN, RUN, "--names", "a"],
        ["diff", QRELS, RUN, RUN, "-m", "relstring"],
        ["inspect", QRELS, RUN, "-m", "num_q"],
        ["diff", QRELS, RUN, RUN, "-m", "nosuch"],
        ["diff", "-", "-", RUN],
    ], ids=["depth-without-query", "worst-with-query", "diff-depth", "diff-top", "diff-format", "names", "text",
            "summary-only", "unknown-measure", "stdin-twice"])
    def test_usage_errors_are_one_line(self, capsys, argv: list[str]) -> None:
        code, out, err = _run(capsys, *argv)
        assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err

    @pytest.mark.parametrize("command", ["inspect", "diff"])
    def test_missing_files(self, capsys, tmp_path, command: str) -> None:
        runs = [str(tmp_path / "r")] * (2 if command == "diff" else 1)
        code, _, err = _run(capsys, command, str(tmp_path / "q"), *runs)
        assert code == 2 and "cannot open" in err and err.count("\n") == 1

    def test_bad_run_line(self, capsys, write) -> None:
        run = write("run", "q1 Q0 a 1 1.0 r\nq1 Q0 b 2\n")
        code, _, err = _run(capsys, "inspect", QRELS, run, "--query", "q1")
        assert code == 2 and err.startswith(f"retrieval-eval: error: {run}:2: ") and err.count("\n") == 1

    @pytest.mark.parametrize("command", ["inspect", "diff"])
    def test_help_has_a_line_per_flag(self, capsys, command: str) -> None:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        flags = ["--query Q", "--depth", "-m MEASURE", "--digits N", "-l LEVEL", "-M DEPTH", "-J", "--order",
                 "--duplicates", "--quiet", "--skip-missing"]
        flags += ["--worst N"] if command == "inspect" else ["--top N", "--names A,B", "--format"]
        for flag in flags:
            assert flag in text, flag


@pytest.mark.parametrize("options", [["-J"], ["-M", "5"], ["-l", "2"], ["--order", "file"], ["-J", "-M", "7", "-l", "2"]],
                         ids=["J", "M5", "l2", "order-file", "J-M7-l2"])
def test_judging_options_give_evaluates_numbers(capsys, shuffled, options: list[str]) -> None:
    """inspect --query and diff under -J, -M, -l, --order: every value is evaluate -q's under the same options."""
    measures = ("map", "P.5", "ndcg_cut.10", "bpref", "num_ret", "num_rel")
    oracle = {run: _per_query(capsys, run, *measures, options=tuple(options)) for run in (RUN, shuffled)}
    m_args = [arg for m in measures for arg in ("-m", m)]
    for query in ("q1", "q6", "q12"):
        code, out, _ = _run(capsys, "inspect", QRELS, RUN, "--query", query, "--digits", "17", *options, *m_args)
        assert code == 0
        shown = {row[0]: float(row[1]) for row in _section(out, "measures:")}
        assert shown == pytest.approx(oracle[RUN][query], abs=1e-16)
        header = out.splitlines()[0]
        assert f"{int(oracle[RUN][query]['num_ret'])} retrieved, R = {int(oracle[RUN][query]['num_rel'])} " in header
    code, out, _ = _run(capsys, "diff", "--quiet", "--format", "json", QRELS, RUN, shuffled, *options, *m_args)
    assert code == 0
    for measure in json.loads(out)["measures"]:
        for row in measure["per_query"]:
            assert row["a"] == oracle[RUN][row["query"]][measure["measure"]]
            assert row["b"] == oracle[shuffled][row["query"]][measure["measure"]]


class TestEdges:
    """What a new user or an adversary meets at the edges: odd ids, empty rankings, one query, odd -m."""

    def test_a_query_id_that_is_not_utf8_is_found_by_its_bytes_or_as_shown(self, capsysbinary, write) -> None:
        qrels = write("qrels", b"q\xff 0 d1 1\n")
        run = write("run", b"q\xff Q0 d1 1 1.0 r\n")
        raw = os.fsdecode(b"q\xff")  # what the shell hands Python for the byte 0xff: a surrogate escape
        for given in (raw, "q\\xff"):
            code = main(["inspect", qrels, run, "--query", given])
            out, err = capsysbinary.readouterr()
            # Not a terminal: the id is written as its exact bytes, as the trec lines are.
            assert code == 0 and out.startswith(b"query q\xff in r: 1 retrieved, R = 1"), (given, err)

    def test_a_judged_query_with_no_results_shows_nothing_retrieved(self, capsys) -> None:
        code, out, _ = _run(capsys, "inspect", QRELS, RUN, "--query", "q13", "-m", "map")
        lines = out.splitlines()
        assert code == 0 and lines[0].startswith("query q13 in sample: 0 retrieved, R = 22")
        assert lines[2] == "(nothing retrieved)" and "rank" not in lines[2]
        assert lines[4] == "relevant documents not retrieved (22), highest grade first:"

    def test_one_query_is_counted_in_the_singular(self, capsys, write) -> None:
        qrels, run = write("qrels", "q1 0 a 1\n"), write("run", "q1 Q0 a 1 1.0 r\n")
        code, out, _ = _run(capsys, "diff", "--quiet", qrels, run, run, "--names", "a,b")
        assert code == 0 and out.splitlines()[0] == "nDCG@10: b against a over 1 query"
        assert out.splitlines()[2] == "  helped 0, hurt 0, unchanged 1"

    def test_a_run_against_itself_changes_nothing(self, capsys) -> None:
        code, out, _ = _run(capsys, "diff", "--quiet", "--format", "json", "-m", "map", "-m", "P.10", QRELS, RUN, RUN)
        assert code == 0
        for measure in json.loads(out)["measures"]:
            a, b = measure["mean"].values()
            assert a == b and measure["helped"] == measure["hurt"] == 0 and measure["unchanged"] == 13
            assert all(q["delta"] == 0.0 for q in measure["per_query"])

    def test_a_group_keeps_its_per_query_measures(self, capsys) -> None:
        """-m official: num_q and gm_map have no per-query value and are left out; runid is not a measure."""
        values = _per_query(capsys, RUN, "official")
        code, out, _ = _run(capsys, "inspect", "--quiet", QRELS, RUN, "-m", "official", "--worst", "3")
        header = out.splitlines()[2].split()
        assert code == 0 and header[0] == "query" and "num_q" not in header and "gm_map" not in header
        assert header[1] == "num_ret" and header[-3:] == ["R", "first_rel", "missed"]
        assert set(header[1:-3]) == set(values["q1"]) - {"gm_map"}

    def test_names_count_in_the_singular(self, capsys, tmp_path) -> None:
        code, _, err = _run(capsys, "plot", "pr", QRELS, RUN, "--names", "a,b", "-o", str(tmp_path / "x.png"))
        assert code == 2 and "--names gives 2 names for 1 run; see" in err

    @pytest.mark.parametrize("names", ["a,", "", " ,b"])
    def test_an_empty_run_name_is_refused(self, capsys, names: str) -> None:
        code, out, err = _run(capsys, "diff", QRELS, RUN, RUN, "--names", names)
        assert code == 2 and out == "" and "--names: every run needs a name" in err and err.count("\n") == 1

    def test_plot_diff_draws_one_measure(self, capsys, tmp_path) -> None:
        code, out, err = _run(capsys, "plot", "diff", QRELS, RUN, RUN, "-m", "P", "-o", str(tmp_path / "x.png"))
        assert code == 2 and out == "" and err == (
            "retrieval-eval plot diff: error: -m P names 9 measures; plot diff draws one, for example -m P_5; "
            "see retrieval-eval plot diff --help\n")


def test_inspecting_page_shows_real_output(capsys, shuffled, monkeypatch) -> None:
    """Every ``$ retrieval-eval`` line in docs/inspecting.md prints what the page shows (stderr, then stdout)."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "inspecting.md").read_text(encoding="utf-8")
    monkeypatch.chdir(Path(shuffled).parent)  # the page's shuffled.run
    checked = 0
    for block in re.findall(r"```console\n(.*?)```", page, flags=re.DOTALL):
        for command, shown in re.findall(r"^\$ (retrieval-eval .*)\n((?:(?!\$ ).*\n)*)", block, flags=re.MULTILINE):
            argv = shlex.split(command.replace("$QRELS", QRELS).replace("$RUN", RUN))[1:]
            main(argv)
            out, err = capsys.readouterr()
            assert err + out == shown, command
            checked += 1
    assert checked >= 9


def test_run_on_stdin_and_gzip(capsys, monkeypatch, tmp_path) -> None:
    """inspect reads the run from - and the qrels gzip-compressed, as evaluate does."""
    import gzip
    import sys

    qrels = tmp_path / "qrels.gz"
    qrels.write_bytes(gzip.compress(Path(QRELS).read_bytes()))
    _, expected, _ = _run(capsys, "inspect", QRELS, RUN, "--query", "q7")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(RUN).read_bytes())))
    code, out, _ = _run(capsys, "inspect", str(qrels), "-", "--query", "q7")
    assert code == 0 and out == expected  # named by its run_id, from a file or from stdin


def test_diff_counts_by_hand(capsys, write) -> None:
    """P@1 per query: q1 0 -> 1 (helped), q2 1 -> 0 (hurt), q3 1 -> 1 and q4 0 -> 0 (unchanged)."""
    qrels = write("qrels", "q1 0 r 1\nq2 0 r 1\nq3 0 r 1\nq4 0 r 1\n")
    run_a = write("a", "q1 Q0 x 1 2 A\nq1 Q0 r 2 1 A\nq2 Q0 r 1 2 A\nq3 Q0 r 1 2 A\nq4 Q0 x 1 2 A\n")
    run_b = write("b", "q1 Q0 r 1 2 B\nq1 Q0 x 2 1 B\nq2 Q0 x 1 2 B\nq2 Q0 r 2 1 B\nq3 Q0 r 1 2 B\nq4 Q0 y 1 2 B\n")
    code, out, _ = _run(capsys, "diff", "--quiet", "-m", "P.1", qrels, run_a, run_b)
    assert code == 0 and "helped 1, hurt 1, unchanged 2" in out and "mean  0.5000 -> 0.5000  (+0.0000)" in out
    assert _section(out, "largest gains:")[1:] == [["q1", "0.0000", "1.0000", "+1.0000"]]
    assert _section(out, "largest losses:")[1:] == [["q2", "1.0000", "0.0000", "-1.0000"]]
    code, out, _ = _run(capsys, "diff", "--quiet", "-m", "P.1", "--format", "csv", qrels, run_a, run_b)
    assert out.splitlines()[1:] == ["P_1,q1,0.0,1.0,1.0", "P_1,q3,1.0,1.0,0.0", "P_1,q4,0.0,0.0,0.0",
                                    "P_1,q2,1.0,0.0,-1.0"]


@pytest.mark.parametrize("given", ["-3", "0", "x"])
def test_a_count_below_one_names_the_real_bound(capsys: pytest.CaptureFixture[str], given: str) -> None:
    """--depth, --worst and --top are counts from 1: a negative one says '>= 1', as 0 does."""
    for args in (("inspect", QRELS, RUN, "--query", "q1", "--depth", given), ("inspect", QRELS, RUN, "--worst", given),
                 ("diff", QRELS, RUN, RUN, "--top", given)):
        code, err = _usage(capsys, *args)
        assert code == 2 and f"expected an integer >= 1; got '{given}'" in err, err
