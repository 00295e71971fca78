"""Inputs as other tools write them (issue 27, B): BEIR qrels TSV, 3-column qrels, integral-float
relevance, BEIR/MTEB results JSON, ir_datasets records, the one-call ``evaluate``, and logs whose
columns are named. Values are checked against pytrec_eval on the same data and against hand-computed cases.
"""

from __future__ import annotations

import gzip
import json
from collections import namedtuple
from pathlib import Path

import pytest
import pytrec_eval

import retrieval_eval
from retrieval_eval import InputFormatError, InputTypeError, Judgment, SetEvaluator, TrecFormatError
from retrieval_eval.cli import main
from retrieval_eval.data import sample_paths
from retrieval_eval.io.formats import qrels_layout, read_qrels_columns, read_run_columns

TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")  # ir_datasets' shapes
GenericScoredDoc = namedtuple("GenericScoredDoc", "query_id doc_id score")

PYTREC = {"map": "AP", "ndcg_cut_10": "nDCG@10", "P_5": "P@5", "recip_rank": "RR", "recall_100": "R@100",
          "ndcg": "nDCG"}


def _sample() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels_path, run_path = sample_paths()
    qrels: dict[str, dict[str, int]] = {}
    for line in Path(qrels_path).read_text().splitlines():
        query_id, _, doc_id, relevance = line.split()
        qrels.setdefault(query_id, {})[doc_id] = int(relevance)
    run: dict[str, dict[str, float]] = {}
    for line in Path(run_path).read_text().splitlines():
        query_id, _, doc_id, _, score, _ = line.split()
        run.setdefault(query_id, {})[doc_id] = float(score)
    return qrels, run


def _pytrec_means(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    """pytrec_eval's means: over the run's queries (ours with complete=False; the sample run lacks q13)."""
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)
    return {ours: sum(values[theirs] for values in per_query.values()) / len(per_query)
            for theirs, ours in PYTREC.items()}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """The sample qrels and run written in every layout of this issue."""
    qrels, run = _sample()
    rows = [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    paths = {
        "beir": tmp_path / "test.tsv", "three": tmp_path / "qrels3.txt", "floats": tmp_path / "floats.qrels",
        "json_run": tmp_path / "results.json", "json_qrels": tmp_path / "qrels.json",
        "json_gz": tmp_path / "results.json.gz",
    }
    paths["beir"].write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r in rows))
    paths["three"].write_text("".join(f"{q} {d} {r}\n" for q, d, r in rows))
    paths["floats"].write_text("".join(f"{q} 0 {d} {float(r)!r}\n" for q, d, r in rows))
    paths["json_run"].write_text(json.dumps(run, indent=2))
    paths["json_qrels"].write_text(json.dumps({q: {d: float(r) for d, r in docs.items()} for q, docs in qrels.items()}))
    with gzip.open(paths["json_gz"], "wt") as out:
        json.dump(run, out)
    return paths


# ---------------------------------------------------------------------------------------- B.1 qrels


def test_every_qrels_layout_gives_pytrec_evals_values(files: dict[str, Path]) -> None:
    qrels, run = _sample()
    expected = _pytrec_means(qrels, run)
    _, run_path = sample_paths()
    for name in ("beir", "three", "floats", "json_qrels"):
        results = SetEvaluator.from_trec(files[name], run_path, complete=False)
        for measure, value in expected.items():
            assert results.aggregate(measure) == pytest.approx(value, abs=1e-12), (name, measure)


def test_the_layout_rule(files: dict[str, Path], tmp_path: Path) -> None:
    qrels_path, _ = sample_paths()
    assert qrels_layout(files["beir"]) == "beir"
    assert qrels_layout(files["three"]) == "three"
    assert qrels_layout(qrels_path) == "trec"
    (tmp_path / "commented.tsv").write_text("# made by hand\n\nq1 d1 1\n")
    assert qrels_layout(tmp_path / "commented.tsv") == "three"  # the first data line decides
    assert qrels_layout(tmp_path / "missing.txt") == "trec"  # the TREC reader reports it
    # A stream cannot be looked at twice: it is TREC, and a 3-field line is refused by its number.
    with open(files["three"], "rb") as stream, pytest.raises(TrecFormatError, match=r":1: 3 fields; expected 4 fields"):
        read_qrels_columns(stream)


def test_the_header_is_dropped_and_its_ids_kept(files: dict[str, Path]) -> None:
    columns = read_qrels_columns(files["beir"])
    assert b"query-id" not in columns.query_ids.tolist()
    assert columns.lines[0] == 2  # numbered as the file's lines: the header is line 1


@pytest.mark.parametrize(("text", "where", "problem"), [
    ("q1 0 d1 1.5x\n", ":1:", "relevance must be a finite number"),
    ("q1 0 d1 1\nq1 0 d2 nan\n", ":2:", "relevance must be a finite number"),
    ("q1 0 d1 1\nq1 0 d2 inf\n", ":2:", "relevance must be a finite number"),
    ("q1 0 d1 1\nq1 0 d2 9.3e18\n", ":2:", "relevance must be a finite number within int64's range"),
    ("q1 d1 1\nq1 d2 -inf\n", ":2:", "relevance must be a finite number"),
    ("q1 d1 1\nq1 0 d2 1\n", ":2:", "4 fields; expected 3 fields 'query_id doc_id relevance'"),
    ("query-id\tcorpus-id\tscore\nq1\td1\t2.5e\n", ":2:", "relevance must be a finite number"),
    ("query-id\tcorpus-id\tscore\nq1\t0\td1\t1\n", ":2:", "4 fields; expected 3 fields 'query-id corpus-id score' \\(BEIR TSV\\)"),
    ("q1\td1\t1\nquery-id\tcorpus-id\tscore\n", ":2:", "relevance must be a finite number"),
])
def test_bad_qrels_lines_name_path_and_line(tmp_path: Path, text: str, where: str, problem: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(text)
    with pytest.raises(TrecFormatError, match=rf"bad\.tsv{where} {problem}"):
        read_qrels_columns(path)


def test_integral_floats_are_their_integers_in_files_and_dicts(tmp_path: Path) -> None:
    path = tmp_path / "q.qrels"
    path.write_text("q1 0 a 2.0\nq1 0 b 1e0\nq1 0 c -1.0\nq1 0 d 0.0\n")
    assert read_qrels_columns(path).relevance.tolist() == [2, 1, -1, 0]
    run = {"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    from_file = SetEvaluator.from_trec(path, _write_run(tmp_path, run))
    from_dict = SetEvaluator.from_dict({"q1": {"a": 2.0, "b": 1.0, "c": -1.0, "d": 0.0}}, run)
    for measure in ("nDCG", "AP", "NumRel", "P(rel=2)@1"):
        assert from_file.aggregate(measure) == from_dict.aggregate(measure)
    # Hand-computed: relevant a (2) and b (1) at ranks 1 and 2, so AP = 1; two judged relevant.
    assert from_dict.aggregate("AP") == 1.0 and from_dict.aggregate("NumRel") == 2.0


def test_booleans_are_refused_and_fractions_are_float_grades_as_judgment_has_them() -> None:
    run = {"q1": {"a": 1.0}}
    with pytest.raises(InputTypeError, match="must be an int or a float; got bool True"):
        Judgment("a", True)
    with pytest.raises(InputTypeError, match="must be an int or a float; got bool True"):
        SetEvaluator.from_dict({"q1": {"a": True}}, run)
    assert Judgment("a", 1.5).relevance == 1.5
    assert SetEvaluator.from_dict({"q1": {"a": 1.5}}, run).per_query("nDCG") == {"q1": 1.0}


def test_subtopics_need_trec_qrels(files: dict[str, Path]) -> None:
    with pytest.raises(TrecFormatError, match="a file of 3 fields has none"):
        read_qrels_columns(files["three"], with_subtopics=True)


# ----------------------------------------------------------------------------------------- B.2 runs


def test_a_results_json_is_a_run(files: dict[str, Path]) -> None:
    qrels_path, run_path = sample_paths()
    from_text = SetEvaluator.from_trec(qrels_path, run_path)
    for name in ("json_run", "json_gz"):
        from_json = SetEvaluator.from_trec(qrels_path, files[name])
        for measure in ("AP", "nDCG@10", "P@5", "NumRet", "RR"):
            assert from_json.per_query(measure) == from_text.per_query(measure)
    assert read_run_columns(files["json_run"]).run_id == "results"
    assert read_run_columns(files["json_gz"]).run_id == "results"


@pytest.mark.parametrize(("text", "message"), [
    ('{"q1": {"d1": 1.0},\n  oops}', r"bad\.json:2: expected a JSON object of scores"),
    ('{"q1": {"d1": 1.0,\n "d2": "0.5"}}', r"bad\.json:2: run score of query 'q1', document 'd2' must be a number"),
    ('{"q1": {"d1": 1.0},\n "q2": {"d1": true}}', r"bad\.json:2: run score of query 'q2', document 'd1'"),
    ('{"q1": {"d1": 1.0},\n "q2": {"d1": NaN}}', r"bad\.json:2: run score of query 'q2', document 'd1' must not be NaN"),
    ('{"q1": {"d1": 1.0,\n\n "d1": 2.0}}', r"bad\.json:3: id 'd1' given twice in one object"),
    ('{"q1": {"d1": 1.0},\n "q2": [1, 2]}', r"bad\.json:2: query 'q2' must map to an object"),
    ('[{"q1": 1}]', r"bad\.json:1: expected a JSON object of scores .*; got a JSON list"),
    ('{}', r"bad\.json: no results found"),
    ('{"q1": {}}', r"bad\.json: no results found"),
    ('{"": {"d1": 1.0}}', r"bad\.json: run query id must be a non-empty str"),
])
def test_bad_results_json_names_path_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(TrecFormatError, match=message):
        read_run_columns(path)


def test_json_qrels_follow_the_relevance_rule(tmp_path: Path) -> None:
    path = tmp_path / "qrels.json"
    path.write_text('{"q1": {"d1": 1,\n "d2": NaN}}')
    with pytest.raises(TrecFormatError, match=r"qrels\.json:2: qrels relevance of query 'q1', document 'd2' must be a finite"):
        read_qrels_columns(path)
    path.write_text('{"q1": {"d1": 1,\n "d2": 1.5}}')
    assert read_qrels_columns(path).relevance.tolist() == [1.0, 1.5]
    path.write_text('{"q1": {"d1": 2.0, "d2": false}}')
    with pytest.raises(TrecFormatError, match=r"qrels\.json:1: .* must be an int or a float; got bool False"):
        read_qrels_columns(path)


def test_the_cli_reads_beir_qrels_and_results_json(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = _sample()
    expected = _pytrec_means(qrels, run)
    assert main(["evaluate", str(files["beir"]), str(files["json_run"]), "-m", "map", "-m", "P_5"]) == 0
    out = dict(line.split()[::2] for line in capsys.readouterr().out.splitlines())
    # The command scores q13 (judged, not in the run) as 0, as trec_eval -c; pytrec_eval leaves it out.
    assert float(out["map"]) == pytest.approx(expected["AP"] * 12 / 13, abs=5e-5)
    assert float(out["P_5"]) == pytest.approx(expected["P@5"] * 12 / 13, abs=5e-5)

    files["json_run"].write_text('{"q1": {"d1": "high"}}')
    assert main(["evaluate", str(files["beir"]), str(files["json_run"])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "results.json:1: run score of query 'q1', document 'd1'" in err


# ----------------------------------------------------------------------------- B.4 evaluate, records


def _records() -> tuple[list[TrecQrel], list[GenericScoredDoc]]:
    qrels, run = _sample()
    return ([TrecQrel(q, d, r, "0") for q, docs in qrels.items() for d, r in docs.items()],
            [GenericScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()])


def test_evaluate_takes_every_kind_of_input(files: dict[str, Path]) -> None:
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    qrels, run = _sample()
    expected = _pytrec_means(qrels, run)
    measures = list(PYTREC.values())
    qrels_rows = [{"query_id": q, "doc_id": d, "relevance": r} for q, docs in qrels.items() for d, r in docs.items()]
    run_rows = [{"query_id": q, "doc_id": d, "score": s} for q, docs in run.items() for d, s in docs.items()]
    qrels_records, run_records = _records()
    qrels_path, run_path = sample_paths()
    inputs = {
        "paths": (qrels_path, run_path),
        "beir+json": (files["beir"], files["json_run"]),
        "dicts": (qrels, run),
        "pandas": (pd.DataFrame(qrels_rows), pd.DataFrame(run_rows)),
        "polars": (pl.DataFrame(qrels_rows), pl.DataFrame(run_rows)),
        "pyarrow": (pa.Table.from_pylist(qrels_rows), pa.Table.from_pylist(run_rows)),
        "records": (qrels_records, run_records),
        "iterators": (iter(qrels_records), (r for r in run_records)),
        "mixed": (qrels_path, run),
    }
    for name, (q, r) in inputs.items():
        means = retrieval_eval.evaluate(q, r, measures, complete=False)
        assert list(means) == measures, name
        if name != "iterators":  # (consumed) -- by default q13, judged but not in the run, is 0 (trec_eval -c)
            assert retrieval_eval.evaluate(q, r, "AP")["AP"] == pytest.approx(expected["AP"] * 12 / 13), name
        for measure, value in expected.items():
            assert means[measure] == pytest.approx(value, abs=1e-12), (name, measure)


def test_evaluate_per_query_is_pytrec_evals_shape() -> None:
    qrels, run = _sample()
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10"}).evaluate(run)
    means, per_query = retrieval_eval.evaluate(qrels, run, ["map", "ndcg_cut_10"], per_query=True, keys="trec",
                                                complete=False)
    assert set(means) == {"map", "ndcg_cut_10"}
    assert per_query.keys() == theirs.keys()
    for query_id, values in theirs.items():
        assert per_query[query_id] == pytest.approx(values, abs=1e-12)


def test_evaluate_summaries_are_trec_evals(tmp_path: Path) -> None:
    """Counts are summed and GMAP is a geometric mean, as on trec_eval's 'all' line (hand-computed)."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"x": 1.0, "b": 0.5}}
    means = retrieval_eval.evaluate(qrels, run, ["NumRet", "AP", "GMAP"])
    assert means["NumRet"] == 3.0 and means["AP"] == 0.75
    assert means["GMAP"] == pytest.approx((1.0 * 0.5) ** 0.5)


def test_evaluate_refuses_what_it_cannot_read() -> None:
    with pytest.raises(InputTypeError, match="'qrels' must be a path, an open file, a dict"):
        retrieval_eval.evaluate(42, {"q1": {"a": 1.0}}, "AP")
    with pytest.raises(InputTypeError, match="'run' must be .*scoreddocs_iter"):
        retrieval_eval.evaluate({"q1": {"a": 1}}, 3.5, "AP")


def test_from_records_matches_from_dict() -> None:
    qrels, run = _sample()
    qrels_records, run_records = _records()
    from_records = SetEvaluator.from_records(qrels_records, run_records)
    from_dict = SetEvaluator.from_dict(qrels, run)
    for measure in ("AP", "nDCG@10", "RR", "NumRet", "NumRel"):
        assert from_records.per_query(measure) == from_dict.per_query(measure)


def test_bad_records_name_their_position() -> None:
    run = [GenericScoredDoc("q1", "a", 1.0)]
    with pytest.raises(InputTypeError, match=r"qrels record 2 has no attribute 'relevance'"):
        SetEvaluator.from_records([TrecQrel("q1", "a", 1, "0"), GenericScoredDoc("q1", "b", 1.0)], run)
    with pytest.raises(InputTypeError, match=r"qrels record 2 \('relevance'\) must be an int or a float; got bool True"):
        SetEvaluator.from_records([TrecQrel("q1", "a", 1, "0"), TrecQrel("q1", "b", True, "0")], run)
    with pytest.raises(InputTypeError, match=r"run record 1 \('score'\) must be a number"):
        SetEvaluator.from_records([TrecQrel("q1", "a", 1, "0")], [GenericScoredDoc("q1", "a", "1.0")])
    with pytest.raises(InputFormatError, match=r"run records: none given"):
        SetEvaluator.from_records([TrecQrel("q1", "a", 1, "0")], [])
    with pytest.raises(InputTypeError, match=r"run record doc_id must be a str"):
        SetEvaluator.from_records([TrecQrel("q1", "a", 1, "0")], [GenericScoredDoc("q1", 7, 1.0)])
    with pytest.raises(InputFormatError, match=r"duplicate"):
        SetEvaluator.from_records([TrecQrel("q1", "a", 1, "0")], run * 2)
    assert SetEvaluator.from_records([TrecQrel("q1", "a", 2.0, "0")], run).aggregate("NumRel") == 1.0


def _write_run(tmp_path: Path, run: dict[str, dict[str, float]]) -> Path:
    path = tmp_path / "run.txt"
    retrieval_eval.write_run(path, run)
    return path


def test_layouts_hold_across_blocks(tmp_path: Path) -> None:
    """A file of many blocks (the reader parses 512 KiB at a time): the header is dropped only on
    line 1, later blocks keep the layout, and floats deep in the file are read as their integers."""
    rows = [(f"q{i % 97}", f"doc{i}", i % 3) for i in range(120_000)]
    (tmp_path / "trec.qrels").write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in rows))
    (tmp_path / "beir.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{float(r) if n > 100_000 else r}\n" for n, (q, d, r) in enumerate(rows)))
    (tmp_path / "three.txt").write_text("".join(f"{q} {d} {r}\n" for q, d, r in rows))
    expected = read_qrels_columns(tmp_path / "trec.qrels")
    for name in ("beir.tsv", "three.txt"):
        columns = read_qrels_columns(tmp_path / name)
        assert columns.relevance.tolist() == expected.relevance.tolist()
        assert columns.doc_ids.tolist() == expected.doc_ids.tolist()
    with open(tmp_path / "beir.tsv", "a") as out:
        out.write("query-id\tcorpus-id\tscore\n")
    with pytest.raises(TrecFormatError, match=r"beir\.tsv:120002: relevance must be a finite number"):
        read_qrels_columns(tmp_path / "beir.tsv")


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes need a POSIX system")
def test_a_pipe_is_not_looked_at_before_it_is_read(files: dict[str, Path], tmp_path: Path) -> None:
    """Choosing the layout reads a regular file's first line; a pipe (``<(cat qrels)``) can be read
    only once, so it is TREC text, and a 3-column pipe is refused at its first line, not lost."""
    import os
    import threading

    pipe = tmp_path / "qrels.pipe"
    os.mkfifo(pipe)
    threading.Thread(target=lambda: pipe.write_bytes(files["three"].read_bytes()), daemon=True).start()
    assert qrels_layout(pipe) == "trec"
    with pytest.raises(TrecFormatError, match=r"qrels\.pipe:1: 3 fields; expected 4 fields"):
        read_qrels_columns(pipe)
