"""Arrow tables, DataFrames and Parquet files (retrieval_eval.io.frames) give what the same TREC files give.

The oracle is ``SetEvaluator.from_trec`` on the same data written as TREC text: every measure of
``all_trec``, per query, must be equal (not close), whatever the input type.
"""

from __future__ import annotations

import io
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from retrieval_eval import SetEvaluator
from retrieval_eval.cli import main
from retrieval_eval.measures import parse_all
from retrieval_eval.model import (
    InputFormatError,
    InputTypeError,
    MissingExtraError,
    TrecFormatError,
)

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

#: Every numeric measure of trec_eval's all_trec (relstring, the text one, is compared apart).
ALL_TREC = [m for m in parse_all("all_trec") if not m.definition.text]


def dataset(seed: int = 7, queries: int = 25) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """Random judgments and run as columns: graded and negative relevance, tied scores (one decimal),
    a judged query the run lacks (q_missing) and a run query nobody judged (q_unjudged)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, list[Any]] = {"query_id": [], "doc_id": [], "relevance": []}
    run: dict[str, list[Any]] = {"query_id": [], "doc_id": [], "score": []}
    for q in range(queries):
        docs = [f"d{i}" for i in rng.choice(60, size=int(rng.integers(5, 40)), replace=False)]
        for doc in docs[: int(rng.integers(1, len(docs)))]:
            qrels["query_id"].append(f"q{q}")
            qrels["doc_id"].append(doc)
            qrels["relevance"].append(int(rng.choice([-1, 0, 0, 1, 2, 3])))
        for doc in rng.permutation(docs + [f"x{i}" for i in range(int(rng.integers(0, 10)))]):
            run["query_id"].append(f"q{q}")
            run["doc_id"].append(str(doc))
            run["score"].append(round(float(rng.random()), 1))
    for column, value in zip(qrels.values(), ("q_missing", "d1", 1)):
        column.append(value)
    for column, value in zip(run.values(), ("q_unjudged", "d1", 1.0)):
        column.append(value)
    return qrels, run


def write_trec(tmp_path: Path, qrels: dict[str, list[Any]], run: dict[str, list[Any]]) -> tuple[Path, Path]:
    qrels_path, run_path = tmp_path / "t.qrels", tmp_path / "t.run"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in zip(*qrels.values())))
    run_path.write_text("".join(f"{q} Q0 {d} 1 {s!r} t\n" for q, d, s in zip(*run.values())))
    return qrels_path, run_path


def assert_same(got: SetEvaluator, expected: SetEvaluator) -> None:
    assert got.query_ids == expected.query_ids
    for measure in ALL_TREC:
        assert got.per_query(measure) == expected.per_query(measure), measure
        assert got.aggregate(measure) == expected.aggregate(measure), measure
    assert got.per_query_text("relstring") == expected.per_query_text("relstring")
    assert got.missing_from_run == expected.missing_from_run


def as_input(kind: str, columns: dict[str, list[Any]], tmp_path: Path, name: str) -> Any:
    table = pa.table(columns)
    if kind == "arrow":
        return table
    if kind == "batches":  # a RecordBatchReader over several batches
        return pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=17))
    if kind == "chunked":  # a table of many chunks
        return pa.concat_tables([table.slice(i, 13) for i in range(0, table.num_rows, 13)])
    if kind == "pandas":
        return pytest.importorskip("pandas").DataFrame(columns)
    if kind == "polars":
        return pytest.importorskip("polars").DataFrame(columns)
    if kind == "c_stream":  # any object speaking the Arrow C stream interface

        class Stream:
            def __arrow_c_stream__(self, requested_schema: object = None) -> object:
                return table.__arrow_c_stream__(requested_schema)

        return Stream()
    path = tmp_path / f"{name}.parquet"
    pq.write_table(table, path, row_group_size=50)
    return path


@pytest.mark.parametrize("kind", ["arrow", "batches", "chunked", "pandas", "polars", "c_stream", "parquet"])
@pytest.mark.parametrize("complete", [True, False])
def test_every_input_type_equals_the_trec_files(tmp_path: Path, kind: str, complete: bool) -> None:
    qrels, run = dataset()
    expected = SetEvaluator.from_trec(*write_trec(tmp_path, qrels, run), complete=complete)
    judged, ranked = as_input(kind, qrels, tmp_path, "qrels"), as_input(kind, run, tmp_path, "run")
    if kind == "parquet":
        got = SetEvaluator.from_parquet(judged, ranked, complete=complete)
    elif kind in ("pandas", "polars"):
        got = SetEvaluator.from_dataframe(judged, ranked, complete=complete)
    else:
        got = SetEvaluator.from_arrow(judged, ranked, complete=complete)
    assert_same(got, expected)


def test_options_are_those_of_from_trec(tmp_path: Path) -> None:
    qrels, run = dataset(3)
    files = write_trec(tmp_path, qrels, run)
    for options in ({"rel": 2}, {"max_depth": 5}, {"judged_only": True}, {"order": "file"}):
        assert_same(SetEvaluator.from_arrow(pa.table(qrels), pa.table(run), **options),
                    SetEvaluator.from_trec(*files, **options))


def test_rank_order_reads_the_rank_column(tmp_path: Path) -> None:
    qrels = pa.table({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [1, 0, 0]})
    run = pa.table({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0], "rank": [3, 1, 2]})
    assert SetEvaluator.from_arrow(qrels, run, order="rank").per_query("RR") == {"q": 1 / 3}
    pq.write_table(qrels, tmp_path / "q.parquet")
    pq.write_table(run.rename_columns(["query_id", "doc_id", "score", "pos"]), tmp_path / "r.parquet")
    got = SetEvaluator.from_parquet(tmp_path / "q.parquet", tmp_path / "r.parquet", order="rank", rank="pos")
    assert got.per_query("RR") == {"q": 1 / 3}


def test_columns_are_mapped_by_keyword_and_others_ignored(tmp_path: Path) -> None:
    qrels, run = dataset(5)
    expected = SetEvaluator.from_trec(*write_trec(tmp_path, qrels, run))
    judged = pa.table({"topic": qrels["query_id"], "docno": qrels["doc_id"], "grade": qrels["relevance"],
                       "note": ["x"] * len(qrels["doc_id"])})
    ranked = pa.table({"topic": run["query_id"], "docno": run["doc_id"], "sim": run["score"]})
    got = SetEvaluator.from_arrow(judged, ranked, query_id="topic", doc_id="docno", relevance="grade", score="sim")
    assert_same(got, expected)
    with pytest.raises(InputFormatError, match=r"qrels table: no column 'relevance'; expected columns topic, docno, "
                                               r"relevance \(mapped: query_id='topic', doc_id='docno'\)"):
        SetEvaluator.from_arrow(judged, ranked, query_id="topic", doc_id="docno", score="sim")


def test_integer_ids_are_their_decimal_strings(tmp_path: Path) -> None:
    qrels = {"query_id": [301, 301, 302, 1000], "doc_id": [7, 12, 7, 5], "relevance": [1, 0, 2, 1]}
    run = {"query_id": [301, 301, 302, 302], "doc_id": [12, 7, 7, 99], "score": [2.0, 1.0, 0.5, 0.5]}
    as_text = [{k: [str(v) for v in c[k]] if k in ("query_id", "doc_id") else c[k] for k in c} for c in (qrels, run)]
    expected = SetEvaluator.from_trec(*write_trec(tmp_path, *as_text))
    for ints in (pa.int64(), pa.int32(), pa.uint16()):
        typed = [pa.table({k: pa.array(v, ints) if k in ("query_id", "doc_id") else v for k, v in c.items()})
                 for c in (qrels, run)]
        assert_same(SetEvaluator.from_arrow(*typed), expected)
    assert expected.query_ids == ["1000", "301", "302"]  # byte order of the decimal strings, as in a file


def test_unicode_long_and_dictionary_ids(tmp_path: Path) -> None:
    long_id = "é" * 40 + "x"  # 81 bytes: eleven 64-bit words
    qrels = {"query_id": ["q", "q", "q"], "doc_id": [long_id, "ü", "abcdefgh"], "relevance": [1, 1, 0]}
    run = {"query_id": ["q", "q", "q", "q"], "doc_id": ["abcdefgh", "ü", long_id, "abcdefg"], "score": [1.0] * 4}
    expected = SetEvaluator.from_trec(*write_trec(tmp_path, qrels, run))
    dictionary = [pa.table({k: pa.array(v).dictionary_encode() if k != "relevance" and k != "score" else v
                            for k, v in c.items()}) for c in (qrels, run)]
    assert_same(SetEvaluator.from_arrow(*dictionary), expected)
    assert [d.doc_id for d in SetEvaluator.from_arrow(pa.table(qrels), pa.table(run))["q"].retrieved_documents()] == \
        ["ü", long_id, "abcdefgh", "abcdefg"]  # ties: doc_id descending in byte order


def test_a_long_id_in_a_later_batch_turns_the_column_into_bytes_objects(tmp_path: Path) -> None:
    """Batches convert one at a time: a batch of short ids, then one holding a 10 KB id, gives a column
    of bytes objects (widened, every row would take 10 KB); then a batch of short ids again joins it;
    ids a little longer only widen it. The values are those of the TREC files."""
    from retrieval_eval.io.frames import run_from_table

    long_id = "L" * 10_000
    parts = [[f"d{i}" for i in range(2000)], ["x1", long_id, "x2"], [f"e{i}" for i in range(100)]]
    batches = [pa.record_batch({"query_id": ["q"] * len(ids), "doc_id": ids, "score": [float(-len(ids))] * len(ids)})
               for ids in parts]
    columns = run_from_table(pa.Table.from_batches(batches))
    assert columns.doc_ids.dtype == object and columns.doc_ids.tolist() == [d.encode() for ids in parts for d in ids]
    widened = run_from_table(pa.Table.from_batches(batches[:1] + [pa.record_batch(
        {"query_id": ["q"], "doc_id": ["w" * 20], "score": [1.0]})]))
    assert widened.doc_ids.dtype == "S24" and widened.doc_ids[-1] == b"w" * 20
    qrels = {"query_id": ["q", "q"], "doc_id": [long_id, "e7"], "relevance": [1, 1]}
    run = {name: [v for b in batches for v in b.column(name).to_pylist()] for name in ("query_id", "doc_id", "score")}
    expected = SetEvaluator.from_trec(*write_trec(tmp_path, qrels, run))
    assert_same(SetEvaluator.from_arrow(pa.table(qrels), pa.Table.from_batches(batches)), expected)


def _run(**changes: list[Any]) -> Any:
    columns = {"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 3.0], **changes}
    return pa.table(columns)


QRELS = pa.table({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})


@pytest.mark.parametrize(("changes", "error", "message"), [
    ({"query_id": ["q", None, "q"]}, InputFormatError, r"run table, row 2: empty query id \(column 'query_id'\): null"),
    ({"doc_id": ["a", "b", None]}, InputFormatError, r"run table, row 3: empty doc id \(column 'doc_id'\): null"),
    ({"score": [1.0, None, 3.0]}, InputFormatError, r"run table, row 2: empty score"),
    ({"score": [1.0, 2.0, float("nan")]}, InputFormatError, r"run table, row 3: score must not be NaN"),
    ({"doc_id": ["a", "", "c"]}, InputFormatError, r"run table, row 2: empty doc id"),
    ({"doc_id": ["a", "b", "c\0d"]}, InputFormatError, r"run table, row 3: doc id contains NUL"),
    ({"doc_id": ["a", "b", "a"]}, InputFormatError,
     r"run table, row 3: duplicate document for query 'q', document 'a' \(first at row 1\)"),
    ({"score": ["1", "2", "3"]}, InputTypeError,
     r"run table: column 'score' \(score\) must hold numbers; got string \(first value '1'\)"),
    ({"score": [True, False, True]}, InputTypeError, r"must hold numbers; got bool"),
    ({"doc_id": [1.5, 2.5, 3.5]}, InputTypeError,
     r"column 'doc_id' \(doc id\) must hold strings or integers; got double"),
])
def test_bad_run_values_name_their_row(changes: dict[str, list[Any]], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        SetEvaluator.from_arrow(QRELS, _run(**changes))


@pytest.mark.parametrize(("relevance", "error", "message"), [
    ([1, None], InputFormatError, r"qrels table, row 2: empty relevance"),
    ([1.0, float("nan")], InputFormatError,
     r"qrels table, row 2: relevance must be a finite number within int64's range \(column 'relevance'\); got nan"),
    ([1.0, float("inf")], InputFormatError, r"row 2: relevance must be a finite number"),
    ([0.5, 2.0**63], InputFormatError, r"row 2: relevance must be a finite number within int64's range"),
    (pa.array([1, 2**63], pa.uint64()), InputFormatError, r"row 2: relevance must fit in a 64-bit integer"),
    (["1", "0"], InputTypeError, r"column 'relevance' \(relevance\) must hold numbers; got string"),
])
def test_bad_relevance_names_its_row(relevance: Any, error: type, message: str) -> None:
    qrels = pa.table({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": relevance})
    with pytest.raises(error, match=message):
        SetEvaluator.from_arrow(qrels, _run())


def test_integral_floats_are_relevance_grades() -> None:
    qrels = pa.table({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [2.0, 0.0]})
    assert SetEvaluator.from_arrow(qrels, _run()).per_query("NumRel") == {"q": 1.0}


def test_unknown_inputs_are_type_errors() -> None:
    with pytest.raises(InputTypeError, match="qrels table must be a pyarrow Table, a pandas or polars DataFrame"):
        SetEvaluator.from_arrow({"query_id": ["q"]}, _run())
    with pytest.raises(ValueError, match="'order' must be one of"):
        SetEvaluator.from_arrow(QRELS, _run(), order="bogus")


def test_parquet_errors_name_the_file_and_row(tmp_path: Path) -> None:
    pq.write_table(QRELS, tmp_path / "q.parquet")
    pq.write_table(_run(score=[1.0, None, 2.0]), tmp_path / "null.parquet")
    with pytest.raises(TrecFormatError, match=r"null.parquet, row 2: empty score \(column 'score'\): null"):
        SetEvaluator.from_parquet(tmp_path / "q.parquet", tmp_path / "null.parquet")
    pq.write_table(_run().rename_columns(["qid", "doc_id", "score"]), tmp_path / "renamed.parquet")
    with pytest.raises(TrecFormatError, match=r"renamed.parquet: no column 'query_id'; expected columns query_id, "
                                              r"doc_id, score; got columns \['qid', 'doc_id', 'score'\]"):
        SetEvaluator.from_parquet(tmp_path / "q.parquet", tmp_path / "renamed.parquet")
    pq.write_table(QRELS.rename_columns(["qid", "doc_id", "relevance"]), tmp_path / "q_renamed.parquet")
    assert SetEvaluator.from_parquet(tmp_path / "q_renamed.parquet", tmp_path / "renamed.parquet",
                                     query_id="qid").per_query("RR") == {"q": 1 / 3}
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(TrecFormatError, match=r"broken.parquet: cannot read as Parquet"):
        SetEvaluator.from_parquet(tmp_path / "q.parquet", tmp_path / "broken.parquet")
    pq.write_table(_run().slice(0, 0), tmp_path / "empty.parquet")
    with pytest.raises(TrecFormatError, match=r"empty.parquet: no results found"):
        SetEvaluator.from_parquet(tmp_path / "q.parquet", tmp_path / "empty.parquet")


def test_parquet_files_are_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ParquetFile the readers open (qrels and run, twice) is closed when they return or raise (it was left to the
    garbage collector, and a raised error's traceback kept it open)."""
    opened: list[Any] = []

    class Recorded(pq.ParquetFile):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            opened.append(self)

    monkeypatch.setattr(pq, "ParquetFile", Recorded)
    pq.write_table(QRELS, tmp_path / "q.parquet")
    pq.write_table(_run(), tmp_path / "r.parquet")
    pq.write_table(_run(score=[1.0, None, 2.0]), tmp_path / "null.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        assert SetEvaluator.from_parquet(tmp_path / "q.parquet", tmp_path / "r.parquet").per_query("RR") == {"q": 1 / 3}
        with pytest.raises(TrecFormatError, match="row 2: empty score") as raised:
            SetEvaluator.from_parquet(tmp_path / "q.parquet", tmp_path / "null.parquet")
    assert raised.value.__traceback__ is not None  # the error is alive, with the frames that opened the file
    assert len(opened) == 4 and all(parquet.closed for parquet in opened), [p.closed for p in opened]


def test_run_id_is_the_column_or_the_file_name(tmp_path: Path) -> None:
    pq.write_table(QRELS, tmp_path / "q.parquet")
    pq.write_table(_run(), tmp_path / "bm25.parquet")
    assert SetEvaluator.from_parquet(tmp_path / "q.parquet", tmp_path / "bm25.parquet").run_id == "bm25"
    pq.write_table(_run().append_column("run_id", pa.array(["x", "y", "z"])), tmp_path / "named.parquet")
    assert SetEvaluator.from_parquet(tmp_path / "q.parquet", tmp_path / "named.parquet").run_id == "z"


def test_cli_reads_parquet_wherever_it_reads_trec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = dataset(11)
    qrels_text, run_text = write_trec(tmp_path, qrels, run)
    pq.write_table(pa.table(qrels), tmp_path / "q.parquet")
    pq.write_table(pa.table(run).append_column("run_id", pa.array(["t"] * len(run["score"]))), tmp_path / "r.parquet")
    (tmp_path / "r_no_suffix").write_bytes((tmp_path / "r.parquet").read_bytes())  # recognised by PAR1
    outputs = []
    for files in ((qrels_text, run_text), (tmp_path / "q.parquet", tmp_path / "r.parquet"),
                  (qrels_text, tmp_path / "r_no_suffix")):
        assert main(["evaluate", "-q", "-m", "all_trec", *map(str, files)]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2]
    assert main(["compare", str(tmp_path / "q.parquet"), str(tmp_path / "r.parquet"), str(run_text)]) == 0
    capsys.readouterr()  # compare's notes on the query set (as evaluate's), since issue 28.15
    # Swapped files: one line, exit 2.
    assert main(["evaluate", str(tmp_path / "r.parquet"), str(tmp_path / "q.parquet")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "r.parquet: no column 'relevance'" in err
    # Parquet needs to seek: on standard input it is one line that says to give the path.
    stdin = io.TextIOWrapper(io.BytesIO((tmp_path / "r.parquet").read_bytes()))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdin", stdin)
        assert main(["evaluate", str(qrels_text), "-"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ": a Parquet file, which can be read from a path but not from a stream" in err


def test_without_pyarrow_one_line_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # the import then fails
    with pytest.raises(MissingExtraError, match=r"needs pyarrow: pip install 'retrieval-evaluator\[parquet\]'$"):
        SetEvaluator.from_arrow(object(), object())
    (tmp_path / "q.parquet").write_bytes(b"PAR1")
    (tmp_path / "r.qrels").write_text("q 0 a 1\n")
    with pytest.raises(MissingExtraError, match=r"pip install 'retrieval-evaluator\[parquet\]'"):
        SetEvaluator.from_trec(tmp_path / "q.parquet", tmp_path / "r.qrels")


def test_a_pandas_column_of_mixed_types_is_a_typed_error() -> None:
    """pyarrow cannot convert an object column of str and int: the project's InputTypeError, not
    pyarrow's ArrowTypeError."""
    import pandas as pd

    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", 3], "relevance": [1, 1]})
    run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InputTypeError, match=r"^qrels table: a column cannot be read as one Arrow type: .*doc_id"):
        SetEvaluator.from_dataframe(qrels, run)
