"""compare: many runs on one qrels, paired tests with corrections, report forms and the regression gate.

The statistics are checked against scipy and statsmodels in test_stats.py; here, that compare feeds
them the project's exact per-query values, corrects within each measure, and reports faithfully.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from retrieval_eval import SetEvaluator, compare
from retrieval_eval.cli import main
from retrieval_eval.integrations.testing import assert_at_least, assert_not_worse
from retrieval_eval.model import RetrievalEvalError

N_QUERIES = 40


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A qrels file and four runs: a base, a better, a worse one and a copy of the base."""
    root = tmp_path_factory.mktemp("compare")
    rng = np.random.default_rng(5)
    qrels_lines, runs = [], {"base": [], "better": [], "worse": []}
    for q in range(N_QUERIES):
        relevant = set(rng.choice(30, size=int(rng.integers(1, 8)), replace=False).tolist())
        qrels_lines += [f"q{q} 0 d{d} {int(d in relevant) * int(rng.integers(1, 3))}\n" for d in range(30)]
        base = rng.random(30)
        truth = np.array([d in relevant for d in range(30)], dtype=float)
        scores = {"base": base, "better": base + 0.6 * truth * rng.random(30), "worse": base - 0.6 * truth * rng.random(30)}
        for name, values in scores.items():
            runs[name] += [f"q{q} Q0 d{d} 0 {values[d]:.6f} {name}\n" for d in range(30)]
    paths = {"qrels": root / "qrels"}
    paths["qrels"].write_text("".join(qrels_lines))
    for name, lines in runs.items():
        paths[name] = root / f"{name}.run"
        paths[name].write_text("".join(lines))
    paths["copy"] = root / "copy.run"
    paths["copy"].write_text(paths["base"].read_text())
    return paths


def _runs(files: dict[str, Path], *names: str) -> dict[str, Path]:
    return {name: files[name] for name in names}


def test_means_are_evaluates_and_deltas_its_per_query_values(files: dict[str, Path]) -> None:
    result = compare(files["qrels"], _runs(files, "base", "better", "worse"), ["AP", "P_10", "nDCG@10"])
    assert result.measures == ("AP", "P@10", "nDCG@10")  # canonical measure strings
    alone = {name: SetEvaluator.from_trec(files["qrels"], files[name]) for name in ("base", "better", "worse")}
    for name, ev in alone.items():
        assert result.means[name] == {m: ev.aggregate(m) for m in result.measures}
    for c in result.comparisons:
        diff = alone[c.run].array(c.measure) - alone[c.baseline].array(c.measure)
        assert c.delta == pytest.approx(diff.mean(), abs=1e-15)
        assert (c.wins, c.ties, c.losses) == (int((diff > 0).sum()), int((diff == 0).sum()), int((diff < 0).sum()))
        assert c.effect_size == pytest.approx(diff.mean() / diff.std(ddof=1), rel=1e-12)
    assert [(c.measure, c.baseline, c.run) for c in result.comparisons] == [
        (m, "base", r) for m in result.measures for r in ("better", "worse")]


def test_t_test_and_holm_match_scipy_and_statsmodels(files: dict[str, Path]) -> None:
    stats = pytest.importorskip("scipy.stats")
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    names = ("base", "better", "worse", "copy")
    result = compare(files["qrels"], _runs(files, *names), ["AP", "nDCG@10"], all_pairs=True)
    alone = {name: SetEvaluator.from_trec(files["qrels"], files[name]) for name in names}
    for measure in result.measures:
        rows = [c for c in result.comparisons if c.measure == measure]
        assert len(rows) == 6  # every pair, corrected as one family per measure
        raw = []
        for c in rows:
            a, b = alone[c.baseline].array(measure), alone[c.run].array(measure)
            expected = 1.0 if np.array_equal(a, b) else stats.ttest_rel(b, a).pvalue
            assert c.p_value == pytest.approx(expected, abs=1e-9)
            raw.append(c.p_value)
        assert [c.p_adjusted for c in rows] == pytest.approx(multitest.multipletests(raw, method="holm")[1], abs=1e-12)
        assert [c.significant for c in rows] == [c.p_adjusted < 0.05 for c in rows]


def test_identical_runs_one_query_and_missing_queries_give_no_nan(files: dict[str, Path], tmp_path: Path) -> None:
    same = compare(files["qrels"], _runs(files, "base", "copy"), ["AP"], test="wilcoxon")
    c = same.comparisons[0]
    assert (c.delta, c.p_value, c.p_adjusted, c.significant, c.effect_size) == (0.0, 1.0, 1.0, False, 0.0)
    (tmp_path / "one.run").write_text("q0 Q0 d1 1 1.0 x\n")
    (tmp_path / "two.run").write_text("q0 Q0 d2 1 1.0 x\n")
    for complete in (True, False):
        for test in ("t", "wilcoxon", "sign", "permutation", "bootstrap", "tukey"):
            result = compare(files["qrels"], {"one": tmp_path / "one.run", "two": tmp_path / "two.run"}, ["AP", "RR"],
                             test=test, complete=complete, seed=1)
            assert len(result.queries) == (N_QUERIES if complete else 1)
            numbers = [v for c in result.comparisons for v in (c.delta, c.p_value, c.p_adjusted, c.effect_size,
                                                                c.ci_low, c.ci_high)]
            assert all(math.isfinite(v) for v in numbers), test
            json.loads(result.to_json())  # strict JSON: no NaN


def test_a_run_missing_queries_is_compared_on_the_common_ones(files: dict[str, Path], tmp_path: Path) -> None:
    lines = [line for line in files["better"].read_text().splitlines(keepends=True) if not line.startswith("q1 ")]
    (tmp_path / "partial.run").write_text("".join(lines))
    runs = {"base": files["base"], "partial": tmp_path / "partial.run"}
    complete = compare(files["qrels"], runs, ["AP"])
    assert len(complete.queries) == N_QUERIES  # -c: the missing query scores 0
    skipped = compare(files["qrels"], runs, ["AP"], complete=False)
    assert "q1" not in skipped.queries and len(skipped.queries) == N_QUERIES - 1
    base = SetEvaluator.from_trec(files["qrels"], files["base"])
    assert skipped.means["base"]["AP"] == pytest.approx(base.subset(skipped.queries).mean("AP"), abs=1e-15)


def test_same_seed_same_bytes_and_seeds_differ_within_monte_carlo_error(files: dict[str, Path]) -> None:
    runs = _runs(files, "base", "better", "worse")
    for test in ("permutation", "bootstrap", "tukey"):
        first = compare(files["qrels"], runs, ["AP", "P@10"], test=test, seed=7, permutations=2000, samples=2000)
        again = compare(files["qrels"], runs, ["AP", "P@10"], test=test, seed=7, permutations=2000, samples=2000)
        other = compare(files["qrels"], runs, ["AP", "P@10"], test=test, seed=8, permutations=2000, samples=2000)
        assert first.to_json() == again.to_json()
        for a, b in zip(first.comparisons, other.comparisons):
            assert abs(a.p_value - b.p_value) <= 4 * math.sqrt(0.25 / 2000) + 1e-12


def test_json_contract(files: dict[str, Path]) -> None:
    document = compare(files["qrels"], _runs(files, "base", "better"), ["AP"]).to_dict()
    assert {"test", "correction", "alpha", "runs", "means", "comparisons"} <= set(document)
    assert (document["test"], document["correction"], document["alpha"], document["runs"]) == ("t", "holm", 0.05,
                                                                                                ["base", "better"])
    assert set(document["means"]["base"]) == {"AP"}
    assert set(document["comparisons"][0]) == {"measure", "baseline", "run", "delta", "p_value", "p_adjusted",
                                               "significant", "effect_size", "ci_low", "ci_high", "wins", "ties",
                                               "losses"}


def test_report_forms(files: dict[str, Path]) -> None:
    runs = {"base_run": files["base"], "better": files["better"], "worse": files["worse"]}
    result = compare(files["qrels"], runs, ["AP", "P@10"])
    # Against the baseline only: better beats base_run (a), base_run beats worse (c).
    assert (result.beats()["better", "AP"], result.beats()["base_run", "AP"]) == (["a"], ["c"])
    assert compare(files["qrels"], runs, ["AP"], all_pairs=True).beats()["better", "AP"] == ["a", "c"]
    table = result.to_table()
    assert "b better" in table and "0.1500 [c]" in table and "paired t-test" in table and "Holm" in table
    assert table.isascii()  # readable in any terminal: no superscript characters
    markdown = result.to_markdown()
    assert markdown.splitlines()[1] == "|---|---:|---:|" and len(markdown.splitlines()) == 2 + 3 + 1 + 2
    latex = result.to_latex()
    assert r"base\_run" in latex and r"\toprule" in latex and r"\bottomrule" in latex
    best_ap = max(result.means[r]["AP"] for r in runs)
    assert rf"\textbf{{{best_ap:.4f}}}" in latex
    rows = list(csv.DictReader(io.StringIO(result.to_csv())))
    assert len(rows) == 4 and float(rows[0]["p_value"]) == result.comparisons[0].p_value
    pd = pytest.importorskip("pandas")
    frame = result.to_dataframe()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 4


def test_python_api_takes_evaluators_and_open_files(files: dict[str, Path]) -> None:
    base = SetEvaluator.from_trec(files["qrels"], files["base"])
    with open(files["better"], "rb") as handle:
        result = compare(files["qrels"], {"base": base, "better": handle}, ["AP"])
    assert result.means["base"]["AP"] == base.mean("AP")
    with pytest.raises(RetrievalEvalError, match="needs the qrels"):
        compare(None, {"base": base, "better": files["better"]})


@pytest.mark.parametrize(("options", "message"), [
    ({"test": "anova"}, "'test' must be one of"),
    ({"correction": "sidak"}, "'correction' must be one of"),
    ({"test": "tukey", "correction": "holm"}, "adjusts for every pair itself"),
    ({"baseline": "nope"}, "baseline 'nope' is not one of the runs"),
    ({"alpha": 1.5}, "'alpha' must be between 0 and 1"),
    # Run files are built by the public from_columns, which checks max_depth as from_trec does
    # (1.5 was taken and '3' raised a bare TypeError).
    ({"max_depth": 1.5}, r"^'max_depth' must be an int >= 0 or None; got float 1.5$"),
    ({"max_depth": "3"}, r"^'max_depth' must be an int >= 0 or None; got str '3'$"),
])
def test_bad_options(files: dict[str, Path], options: dict, message: str) -> None:
    with pytest.raises(RetrievalEvalError, match=message):
        compare(files["qrels"], _runs(files, "base", "better"), ["AP"], **options)


def test_cli_gate_exit_codes(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    q, base, better, worse = (str(files[n]) for n in ("qrels", "base", "better", "worse"))
    assert main(["compare", q, base, better, "--fail-if-worse", "AP"]) == 0
    assert main(["compare", q, base, worse, "--names", "prod,candidate", "--fail-if-worse", "AP"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "regression: candidate is worse than prod on AP: delta -" in err


def test_cli_formats_and_names(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    q, base, better = str(files["qrels"]), str(files["base"]), str(files["better"])
    assert main(["compare", q, base, better, "-m", "AP", "--format", "json", "--test", "permutation",
                 "--seed", "3", "--permutations", "500"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["runs"] == ["base", "better"] and document["test"] == "permutation"  # their run_ids
    assert main(["compare", q, base, better, "-m", "AP", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("| run | AP |")


@pytest.mark.parametrize(("argv", "message"), [
    (["--names", "a"], "--names gives 1 name for 2 runs"),
    (["--names", "a,a"], "two runs have the same name"),
    (["--test", "tukey", "--correction", "holm"], "adjusts for every pair itself"),
])
def test_cli_usage_errors_exit_2(files: dict[str, Path], argv: list[str], message: str,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(files["qrels"]), str(files["base"]), str(files["better"]), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_testing_assertions(files: dict[str, Path]) -> None:
    base = SetEvaluator.from_trec(files["qrels"], files["base"])
    better = SetEvaluator.from_trec(files["qrels"], files["better"])
    worse = SetEvaluator.from_trec(files["qrels"], files["worse"])
    assert_not_worse(base, better, "AP")
    with pytest.raises(AssertionError, match=r"candidate is worse than baseline on AP: .*lost most on: q\d+ \("):
        assert_not_worse(base, worse, "AP")
    assert_at_least(better, {"AP": better.mean("AP")})
    with pytest.raises(AssertionError, match=r"nDCG@10 is 0\.\d{4}, below 0\.9900; worst queries: q\d+ \(0\."):
        assert_at_least(worse, {"nDCG@10": 0.99})


def test_same_seed_same_bytes_on_one_cpu_and_on_all(files: dict[str, Path]) -> None:
    """The reader's thread count follows the CPUs; the output must not."""
    import shutil
    import subprocess
    import sys

    if shutil.which("taskset") is None:
        pytest.skip("taskset is not available to pin the process to one CPU")
    argv = [sys.executable, "-m", "retrieval_eval", "compare", str(files["qrels"]), str(files["base"]),
            str(files["better"]), str(files["worse"]), "--test", "bootstrap", "--seed", "5", "--format", "json"]
    everywhere = subprocess.run(argv, capture_output=True, check=True).stdout
    one_cpu = subprocess.run(["taskset", "-c", "0", *argv], capture_output=True, check=True).stdout
    assert everywhere == one_cpu and b'"bootstrap"' in everywhere


def test_cli_without_scipy_says_what_to_install(files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # the import then fails
    assert main(["compare", str(files["qrels"]), str(files["base"]), str(files["better"]), "-m", "AP"]) == 2
    assert capsys.readouterr().err == (
        "retrieval-eval: error: scipy is needed for the t, Wilcoxon and sign tests (the permutation, bootstrap and "
        "tukey tests need none): pip install 'retrieval-evaluator[stats]'\n")


def test_the_gate_fires_at_another_relevance_level(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """With -l 2 the measures are P(rel=2)@10 and so on: --fail-if-worse P@10 must still find them."""
    q, base, worse = (str(files[n]) for n in ("qrels", "base", "worse"))
    result = compare(files["qrels"], {"base": files["base"], "worse": files["worse"]}, ["AP"], rel=2)
    assert result.measures == ("AP(rel=2)",) and result.significant_worse("AP") == result.significant_worse()
    assert result.significant_worse(), "the worse run must lose significantly at rel=2 too"
    assert main(["compare", q, base, worse, "-l", "2", "-m", "AP", "--fail-if-worse", "AP"]) == 1
    assert "worse is worse than base on AP(rel=2)" in capsys.readouterr().err


# issue 28 (13, 15, 16) and issue 27 (F.2, F.3, F.4) ----------------------------------------------------

def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["compare", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_gate_on_a_list_gates_each_of_its_measures(files: dict[str, Path],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """--fail-if-worse P.5,10 is P@5 and P@10 (as -m reads it), not a table and then exit 2."""
    q, base, worse = (str(files[n]) for n in ("qrels", "base", "worse"))
    code, out, err = _cli(capsys, q, base, worse, "-m", "AP", "--fail-if-worse", "P.5,10")
    assert code == 1 and "P@5" in out and "P@10" in out
    assert "on P@10: delta -" in err and "Traceback" not in err


@pytest.mark.parametrize("gate", ["nope", "P@x", "relstring"])
def test_a_bad_gate_fails_before_any_output(files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                            gate: str) -> None:
    code, out, err = _cli(capsys, str(files["qrels"]), str(files["base"]), str(files["worse"]), "--fail-if-worse", gate)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("names", [",y", "x,", " ,y"])
def test_an_empty_name_is_refused(files: dict[str, Path], capsys: pytest.CaptureFixture[str], names: str) -> None:
    code, out, err = _cli(capsys, str(files["qrels"]), str(files["base"]), str(files["worse"]), "--names", names)
    assert code == 2 and out == "" and "--names: every run needs a name" in err and err.count("\n") == 1


def test_an_unknown_baseline_fails_before_any_output(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Against --names, before any file is read; against the runs' names (their run_ids, known once
    the runs are read), before any line is written."""
    q, base, better = str(files["qrels"]), str(files["base"]), str(files["better"])
    code, out, err = _cli(capsys, q, base, "missing.run", "--names", "a,b", "--baseline", "zz")
    assert code == 2 and out == "" and "--baseline 'zz' is not one of the runs: 'a, b'" in err
    code, out, err = _cli(capsys, q, base, better, "--baseline", "zz")
    assert code == 2 and out == "" and "--baseline 'zz' is not one of the runs: 'base, better'" in err
    # A run's file name still names it as a baseline: the table names it by its run_id.
    code, out, _ = _cli(capsys, q, base, better, "-m", "AP", "--baseline", "better.run", "--format", "json")
    assert code == 0 and json.loads(out)["baseline"] == "better"


@pytest.fixture()
def partial(tmp_path: Path, files: dict[str, Path]) -> dict[str, str]:
    """A run without q0's results and with results for an unjudged query, and a run answering nothing judged."""
    lines = [line for line in files["better"].read_text().splitlines(keepends=True) if not line.startswith("q0 ")]
    partial_run = tmp_path / "partial.run"
    partial_run.write_text("".join(lines) + "zz Q0 d1 0 1.0 p\n")
    elsewhere = tmp_path / "elsewhere.run"
    elsewhere.write_text("x1 Q0 d1 0 1.0 e\nx2 Q0 d1 0 1.0 e\n")
    return {"qrels": str(files["qrels"]), "base": str(files["base"]), "partial": str(partial_run),
            "elsewhere": str(elsewhere)}


def test_the_notes_are_evaluates(partial: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """compare says on stderr what evaluate says of each run's query set (and --quiet silences it)."""
    assert main(["evaluate", "-m", "AP", "-m", "GAUC", partial["qrels"], partial["partial"]]) == 0
    evaluate_err = capsys.readouterr().err
    code, _, err = _cli(capsys, partial["qrels"], partial["base"], partial["partial"], "--names", "b,p",
                        "-m", "AP", "-m", "GAUC", "--test", "bootstrap", "--samples", "200", "--seed", "1")
    assert code == 0
    assert "p: 1 judged query has no results; scored as empty rankings (as trec_eval -c): q0" in err
    assert "p: 1 run query has no judgments and is ignored: zz" in err
    for line in evaluate_err.splitlines():  # the same lines, each prefixed with the run's name
        assert line.replace("retrieval-eval: note: ", "retrieval-eval: note: p: ").replace(
            "retrieval-eval: warning: ", "retrieval-eval: warning: p: ") in err.splitlines()
    assert _cli(capsys, partial["qrels"], partial["base"], partial["partial"], "--quiet", "-m", "AP")[2] == ""


def test_no_relevant_judgment_at_this_level_is_noted(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(capsys, str(files["qrels"]), str(files["base"]), str(files["better"]), "-l", "3", "-m", "AP",
                        "--test", "bootstrap", "--samples", "100")
    assert code == 0 and "queries have no relevant judgment (relevance >= 3), so AP(rel=3) is 0 for them" in err


def test_a_run_that_answers_no_judged_query_is_refused_as_evaluate_does(
        partial: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "-m", "AP", partial["qrels"], partial["elsewhere"]]) == 2
    evaluate_err = capsys.readouterr().err
    code, out, err = _cli(capsys, partial["qrels"], partial["base"], partial["elsewhere"], "-m", "AP")
    assert code == 2 and out == "" and err == evaluate_err
    assert "no run query is judged in" in err


def test_the_api_refuses_to_compare_over_no_query(partial: dict[str, str]) -> None:
    with pytest.raises(RetrievalEvalError, match=r"^run 'other': no run query is judged in the qrels"):
        compare(partial["qrels"], {"base": partial["base"], "other": partial["elsewhere"]}, ["AP"])
    a = SetEvaluator.from_dict({"q1": {"d": 1}}, {"q1": {"d": 1.0}})
    b = SetEvaluator.from_dict({"q2": {"d": 1}}, {"q2": {"d": 1.0}})
    with pytest.raises(RetrievalEvalError, match=r"^the runs share no query, so there is nothing to compare"):
        compare(None, {"a": a, "b": b}, ["AP"])
    with pytest.raises(RetrievalEvalError, match="share no query"):  # not a pass "over 0 queries"
        assert_not_worse(a, b, "AP")


def test_stdin_order_and_duplicates(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    q, base, better = str(files["qrels"]), str(files["base"]), str(files["better"])
    argv = ["-m", "AP", "--format", "json", "--test", "bootstrap", "--samples", "200", "--seed", "2"]
    assert main(["compare", q, base, better, *argv]) == 0
    expected = json.loads(capsys.readouterr().out)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(files["better"].read_bytes())))
    code, out, _ = _cli(capsys, q, base, "-", "--names", "base,better", *argv)
    assert code == 0 and json.loads(out) == expected
    assert _cli(capsys, "-", "-", base)[0] == 2
    # A duplicated line: refused by default, its first copy kept with --duplicates first.
    doubled = tmp_path / "doubled.run"
    doubled.write_text(files["better"].read_text() + files["better"].read_text().splitlines(keepends=True)[0])
    code, _, err = _cli(capsys, q, base, str(doubled), *argv)
    assert code == 2 and "duplicate" in err
    code, out, _ = _cli(capsys, q, base, str(doubled), "--duplicates", "first", "--names", "base,better", *argv)
    assert code == 0 and json.loads(out) == expected
    # --order file ranks by file order: the base run's lines reversed rank its documents the other way.
    lines = files["base"].read_text().splitlines(keepends=True)
    reversed_run = tmp_path / "reversed.run"
    reversed_run.write_text("".join(sorted(lines, key=lambda line: float(line.split()[4]))))
    by_score = compare(q, {"a": base, "b": str(reversed_run)}, ["AP"], test="bootstrap", samples=100)
    assert by_score.means["a"]["AP"] == by_score.means["b"]["AP"]
    code, out, _ = _cli(capsys, q, base, str(reversed_run), "--order", "file", *argv)
    document = json.loads(out)
    assert code == 0 and document["means"]["reversed.run"]["AP"] != document["means"]["base.run"]["AP"]
    ascending = SetEvaluator.from_trec(q, str(reversed_run), order="file")
    assert document["means"]["reversed.run"]["AP"] == ascending.mean("AP")


@pytest.mark.parametrize("test", ["permutation", "bootstrap", "tukey"])
def test_monte_carlo_tests_need_no_scipy(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, test: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    runs = _runs(files, "base", "better", "worse")
    options = {"test": test, "seed": 4, "permutations": 300, "samples": 300}
    with_scipy = compare(files["qrels"], runs, ["AP", "P@10"], **options)
    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # the import then fails
    without = compare(files["qrels"], runs, ["AP", "P@10"], **options)
    assert without.means == with_scipy.means
    for a, b in zip(without.comparisons, with_scipy.comparisons):
        assert (a.p_value, a.p_adjusted, a.delta, a.wins) == (b.p_value, b.p_adjusted, b.delta, b.wins)
        assert (a.ci_low, a.ci_high) == pytest.approx((b.ci_low, b.ci_high), rel=1e-12, abs=1e-15)
    code, out, _ = _cli(capsys, str(files["qrels"]), str(files["base"]), str(files["better"]), "--test", test,
                        "--permutations", "200", "--samples", "200")
    assert code == 0 and out.startswith("run ")


@pytest.mark.parametrize("test", ["t", "wilcoxon", "sign"])
def test_the_other_tests_say_what_to_install_before_reading(monkeypatch: pytest.MonkeyPatch, test: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    with pytest.raises(ImportError, match=r"pip install 'retrieval-evaluator\[stats\]'"):
        compare("no-such-qrels", {"a": "no-a", "b": "no-b"}, ["AP"], test=test)
    code, out, err = _cli(capsys, "no-such-qrels", "no-a", "no-b", "--test", test)
    assert code == 2 and out == "" and err.count("\n") == 1 and "retrieval-evaluator[stats]" in err


def test_output_failure_has_its_own_exit_code(files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """3, not the regression gate's 1: a CI job can tell a regression from a full disk."""
    import errno
    import os
    import sys

    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(sys, "stdout", Full())
    code = main(["compare", str(files["qrels"]), str(files["base"]), str(files["worse"]), "--fail-if-worse", "AP"])
    assert code == 3
    assert capsys.readouterr().err == "retrieval-eval: error: cannot write the output: No space left on device\n"


def test_echoed_input_is_capped(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """A 100 KB value is quoted by its start and end, in the errors of every part of the program."""
    huge = "q" * 100_000
    calls = [
        ["inspect", str(files["qrels"]), str(files["base"]), "--query", huge],
        ["compare", str(files["qrels"]), str(files["base"]), str(files["worse"]), "--baseline", huge],
        ["compare", str(files["qrels"]), str(files["base"]), str(files["worse"]), "-m", huge],
        ["compare", str(files["qrels"]), str(files["base"]), str(files["worse"]), "--alpha", huge],
        ["evaluate", str(files["qrels"]), huge],
    ]
    for argv in calls:
        with pytest.raises(SystemExit) if "--alpha" in argv else _nothing():
            assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "qqqqqqqqqq" in err and len(err) < 800, (argv[:1], len(err))


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


def test_the_api_takes_order_and_duplicates(files: dict[str, Path], tmp_path: Path) -> None:
    lines = files["base"].read_text().splitlines(keepends=True)
    reordered = tmp_path / "reordered.run"
    reordered.write_text("".join(sorted(lines, key=lambda line: float(line.split()[4]))) + lines[0])  # and a repeat
    runs = {"base": files["base"], "reordered": reordered}
    with pytest.raises(RetrievalEvalError, match="duplicate"):
        compare(files["qrels"], runs, ["AP"], test="bootstrap", samples=100)
    for order in ("score", "file", "rank"):
        result = compare(files["qrels"], runs, ["AP"], test="bootstrap", samples=100, order=order, duplicates="first")
        alone = SetEvaluator.from_trec(files["qrels"], reordered, order=order, duplicates="first")
        assert result.means["reordered"]["AP"] == alone.mean("AP")
    with pytest.raises(ValueError, match="'order' must be one of"):
        compare(files["qrels"], runs, ["AP"], order="nope")
