"""retrieval_eval.integrations.spark gives SetEvaluator's numbers: per query and summaries identical, bit for bit.

One local Spark session (``local[2]``) serves the whole module. The tests skip, saying why, only
where pyspark is not installed or Java is absent.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_frames import ALL_TREC, dataset
from test_vs_ir_measures import CASES

import retrieval_eval
from retrieval_eval import SetEvaluator
from retrieval_eval.measures import MeasureError, parse_all
from retrieval_eval.model import InputFormatError, InputTypeError, MissingExtraError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'retrieval-evaluator[spark]')")

# pyspark warns that it does not support pandas 3 yet; mapInArrow does not use pandas.
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

#: A broad sample of the ir_measures catalogue (every family that applies to qrels and a run).
CATALOGUE = sorted({m for strings in CASES.values() for m in strings}) + [
    "AUC", "GAUC", "ERR@10", "RBP(p=0.5)", "nDCG(dcg='exp-log2')", "Judged@10", "F1@10", "Success@10",
    "SDCG(max_rel=3)@10", "NERR10(p=0.8, max_rel=3)", "NERR8(max_rel=3)@10", "INSQ(max_rel=3)", "INST(T=2, max_rel=3)", "BPM(T=5, max_rel=3)@10", "Compat",
    "Accuracy", "YAAP", "DCG@10", "IDCG", "Unj@10", "RBPResid",
]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    from retrieval_eval.integrations import spark as rs

    active = SparkSession.getActiveSession()
    if active is not None:  # made elsewhere, its workers may run another Python: start afresh
        active.stop()
    try:
        session = rs.session("local[2]", **{"spark.sql.shuffle.partitions": "4", "spark.sql.adaptive.enabled": "false"})
    except MissingExtraError as exc:  # no Java on this machine
        pytest.skip(str(exc))
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def frame(spark: Any, columns: dict[str, Any]) -> Any:
    return spark.createDataFrame(pa.table(columns))


def check(spark: Any, qrels: dict[str, Any], run: dict[str, Any], measures: list[str], **options: Any) -> Any:
    """Evaluate with Spark and with SetEvaluator; per-query values and summaries identical."""
    from retrieval_eval.integrations import spark as rs

    partitions = options.pop("partitions", None)
    result = rs.evaluate(frame(spark, qrels), frame(spark, run), measures, partitions=partitions, **options)
    expected = SetEvaluator.from_arrow(pa.table(qrels), pa.table(run), **options)
    names = [str(m) for given in measures for m in parse_all(given, rel=options.get("rel", 1))]
    same(result, expected, list(dict.fromkeys(names)))
    return expected


def same(result: Any, expected: SetEvaluator, names: list[str]) -> None:
    from retrieval_eval.integrations import spark as rs

    result = result.cache()
    rows = result.toArrow()
    got: dict[str, dict[str, float]] = {}
    for q, m, v in zip(*(rows.column(c).to_pylist() for c in ("query_id", "measure", "value"))):
        got.setdefault(m, {})[q] = v
    summary = rs.summarize(result)
    result.unpersist()
    assert sorted(got) == sorted(set(names)) == sorted(summary)
    for name in names:
        want = expected.per_query(name)
        assert sorted(got[name]) == sorted(want), name  # the same queries, each once
        # Bit for bit: every kernel gives a query the same value whatever other queries share its
        # batch (segmented sums run per segment), so the summary is identical too.
        worst = max(abs(got[name][q] - want[q]) for q in want)
        assert got[name] == want, (name, worst)
        assert summary[name] == expected.aggregate(name), name


def test_all_trec_and_the_catalogue_equal_set_evaluator(spark: Any) -> None:
    qrels, run = dataset()
    expected = check(spark, qrels, run, [str(m) for m in ALL_TREC] + CATALOGUE, partitions=3)
    assert expected.missing_from_run == ["q_missing"]


@pytest.mark.parametrize(("partitions", "complete"), [(1, True), (16, False)])
def test_partitions_fewer_and_more_than_queries(spark: Any, partitions: int, complete: bool) -> None:
    # 7 judged queries: one partition holds them all, or 16 leave most empty; the judged query the
    # run lacks is scored as an empty ranking, or left out, as evaluate -c says.
    qrels, run = dataset(21, queries=6)
    expected = check(spark, qrels, run, ["official", "nDCG@10", "GAUC"], partitions=partitions,
                     complete=complete)
    assert ("q_missing" in expected.query_ids) == complete


def test_options_rel_depth_and_judged_only(spark: Any) -> None:
    qrels, run = dataset(4)
    check(spark, qrels, run, ["AP", "P@5", "nDCG@10", "Bpref", "NumRet", "GMAP"], rel=2, max_depth=7,
          judged_only=True, partitions=2)


def test_one_huge_query_beside_thousands_of_small_ones(spark: Any) -> None:
    rng = np.random.default_rng(1)
    small = 3000
    sizes = rng.integers(1, 6, size=small)
    query = np.concatenate([np.repeat([f"s{i}" for i in range(small)], sizes), np.full(100_000, "huge")])
    doc = np.concatenate([np.concatenate([np.arange(n) for n in sizes]), np.arange(100_000)]).astype(str)
    run = {"query_id": query, "doc_id": doc, "score": np.round(rng.random(len(query)), 2)}  # many ties
    judged = rng.random(len(query)) < 0.3
    qrels = {"query_id": query[judged], "doc_id": doc[judged], "relevance": rng.integers(0, 3, judged.sum())}
    check(spark, qrels, run, ["official", "nDCG@10", "GAUC"], partitions=4)


def test_integer_ids_and_the_default_partitioning(spark: Any) -> None:
    qrels = {"query_id": [301, 301, 302], "doc_id": [7, 12, 7], "relevance": [1, 0, 2]}
    run = {"query_id": [301, 301, 302, 302], "doc_id": [12, 7, 7, 99], "score": [2.0, 1.0, 0.5, 0.5]}
    check(spark, qrels, run, ["AP", "RR", "nDCG"])  # spark.sql.shuffle.partitions (4 here)


def test_summarize_refuses_a_query_counted_twice(spark: Any) -> None:
    from retrieval_eval.integrations import spark as rs

    qrels = frame(spark, {"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    run = frame(spark, {"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    once = rs.evaluate(qrels, run, ["AP"], partitions=1)
    with pytest.raises(InputFormatError, match=r"summarize: query 'q' has two values of AP"):
        rs.summarize(once.unionByName(once))


#: A partition's rows have no number a user can look up: a duplicate is named by its ids alone. (It
#: named "run DataFrame (partition 1), row 3 ... (first at row 1)", rows of the partition's own table.)
DUPLICATE = ("run DataFrame: duplicate document for query 'q', document 'a'; expected each document at most "
             "once per query")


def test_a_duplicate_document_names_one_example(spark: Any) -> None:
    from retrieval_eval.integrations import spark as rs

    qrels = {"query_id": ["q", "r"], "doc_id": ["a", "a"], "relevance": [1, 1]}
    run = {"query_id": ["q", "q", "r", "q"], "doc_id": ["a", "b", "a", "a"], "score": [1.0, 2.0, 1.0, 0.5]}
    result = rs.evaluate(frame(spark, qrels), frame(spark, run), ["AP"], partitions=2)
    with pytest.raises(InputFormatError) as raised:
        rs.summarize(result)
    assert str(raised.value) == DUPLICATE
    with pytest.raises(Exception, match=re.escape(DUPLICATE)):
        result.collect()  # Spark's own error carries the message too


def test_a_duplicate_judgment_names_its_ids() -> None:
    """The qrels side, on one partition's tagged table as a task sees it (no Spark session needed)."""
    from retrieval_eval.integrations import spark as rs

    table = pa.table({"query_id": ["q", "q", "q"], "doc_id": ["a", "a", "a"], "relevance": [1, 0, None],
                      "score": [None, None, 1.0], "_run": [False, False, True]})
    evaluate_partition = rs._evaluate_partitions(rs._split_union, ["AP"], 1, {"complete": True})
    with pytest.raises(InputFormatError) as raised:
        list(evaluate_partition(iter(table.to_batches())))
    assert str(raised.value) == ("qrels DataFrame: duplicate judgment for query 'q', document 'a'; expected each "
                                 "document at most once per query")


class _Collected:
    """What summarize reads of a DataFrame (``select(...).toArrow()``), over a pyarrow table: no session."""

    def __init__(self, table: Any) -> None:
        self.table = table

    def select(self, *names: str) -> _Collected:
        return _Collected(self.table.select(list(names)))

    def toArrow(self) -> Any:
        return self.table


def test_summarize_keeps_long_query_ids_in_arrow() -> None:
    """One query id of 20,000 characters among 2,000: summarize sorts the ids in Arrow, in the bytes they
    have (a NumPy str array took 4 bytes a character of the longest id for every query: 160 MB here),
    and its summaries are SetEvaluator's."""
    import tracemalloc

    from retrieval_eval.integrations import spark as rs

    long_id = "é" * 10_000 + "z"
    query_ids = [long_id if i == 3 else f"q{i}" for i in range(2000)]
    qrels = pa.table({"query_id": query_ids, "doc_id": ["d"] * 2000, "relevance": [i % 2 for i in range(2000)]})
    run = pa.table({"query_id": query_ids, "doc_id": ["d"] * 2000, "score": [1.0] * 2000})
    evaluator = SetEvaluator.from_arrow(qrels, run)
    per_query = pa.concat_tables(list(map(pa.Table.from_batches, ([b] for b in rs._long_rows(evaluator, ["AP", "GAUC"])))))
    shuffled = per_query.take(pa.array(np.random.default_rng(0).permutation(per_query.num_rows)))
    tracemalloc.start()
    try:
        summary = rs.summarize(_Collected(shuffled))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert summary == {"AP": evaluator.aggregate("AP"), "GAUC": evaluator.aggregate("GAUC")}
    assert peak < 10_000_000, peak
    twice = pa.concat_tables([shuffled, shuffled.slice(0, 1)])
    with pytest.raises(InputFormatError, match=r"summarize: query '.*' has two values of (AP|GAUC)"):
        rs.summarize(_Collected(twice))


def test_evaluate_log_equals_from_log(spark: Any, tmp_path: Path) -> None:
    from retrieval_eval.integrations import spark as rs

    rng = np.random.default_rng(5)
    n = 4000
    log = {"session": np.char.add("s", rng.integers(0, 300, n).astype(str)), "item": np.arange(n).astype(str),
           "score": np.round(rng.random(n), 2), "click": (rng.random(n) < 0.2).astype(np.int64)}
    measures = ["AUC", "GAUC", "GAUC(weight='impressions')", "nDCG@10", "RR", "AP"]
    result = rs.evaluate_log(frame(spark, log), measures, group="session", item="item", score="score",
                             label="click", partitions=3)
    pq.write_table(pa.table(log), tmp_path / "log.parquet")
    same(result, SetEvaluator.from_log(tmp_path / "log.parquet"), measures)


def test_bad_columns_and_measures_fail_at_once(spark: Any) -> None:
    from retrieval_eval.integrations import spark as rs

    qrels = frame(spark, {"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    run = frame(spark, {"query_id": ["q"], "doc_id": ["a"], "score": ["high"]})
    with pytest.raises(InputTypeError, match=r"run DataFrame: column 'score' \(score\) must hold numbers; got string"):
        rs.evaluate(qrels, run, ["AP"])
    with pytest.raises(InputFormatError, match=r"qrels DataFrame: no column 'grade' \(relevance\)"):
        rs.evaluate(qrels, run, ["AP"], relevance="grade")
    good_run = frame(spark, {"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(MeasureError, match="text measure"):
        rs.evaluate(qrels, good_run, ["relstring"])
    with pytest.raises(MeasureError, match="needs max_rel"):
        rs.evaluate(qrels, good_run, ["NERR8@10"])


def test_without_java_one_line_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from retrieval_eval.integrations import spark as rs

    monkeypatch.setattr(rs.shutil, "which", lambda name: None)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(MissingExtraError, match=r"^Spark needs Java 17 or later: .* \(no java on PATH, JAVA_HOME unset\)$"):
        rs.session("local[1]")


def test_importing_the_package_does_not_import_pyspark() -> None:
    code = "import sys, retrieval_eval, retrieval_eval.cli, retrieval_eval.io.frames; print('pyspark' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


def test_without_pyspark_one_line_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "retrieval_eval.integrations.spark", raising=False)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # the import then fails
    with pytest.raises(MissingExtraError, match=r"^retrieval_eval.spark needs pyspark \(and Java 17\+\): "
                                                r"pip install 'retrieval-evaluator\[spark\]'$"):
        import retrieval_eval.integrations.spark  # noqa: F401


def test_a_driver_without_pandas_gets_the_extras_one_line(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """PySpark's Arrow path demands pandas on the driver; its own error is a traceback."""
    from retrieval_eval.integrations import spark as rs

    qrels = frame(spark, {"query_id": ["q"], "doc_id": ["d"], "relevance": [1]})
    run = frame(spark, {"query_id": ["q"], "doc_id": ["d"], "score": [1.0]})
    monkeypatch.setitem(sys.modules, "pandas", None)  # importing it then fails
    with pytest.raises(MissingExtraError, match=r"^retrieval_eval.spark needs Pandas >= [\d.]+ in this Python "
                                                r"\(PySpark's Arrow path imports it; not installed\): "
                                                r"pip install 'retrieval-evaluator\[spark\]'$"):
        rs.evaluate(qrels, run, ["AP"])


WORKER_WITHOUT_PYARROW = """
import sys
from retrieval_eval.integrations import spark as rs
from retrieval_eval.model import MissingExtraError
session = rs.session("local[1]", **{"spark.sql.shuffle.partitions": "1"})
qrels = session.createDataFrame([("q", "d", 1)], "query_id string, doc_id string, relevance int")
run = session.createDataFrame([("q", "d", 1.0)], "query_id string, doc_id string, score double")
try:
    rs.evaluate(qrels, run, ["AP"])
except MissingExtraError as exc:
    print(exc)
    sys.exit(3)
finally:
    session.stop()
"""


def test_workers_without_pyarrow_get_one_line_naming_pyspark_python(tmp_path: Path) -> None:
    """A real worker Python that lacks pyarrow (a bare venv of this Python, so that the minor versions
    agree), in a Spark session of its own: one line naming PYSPARK_PYTHON, and no task failed, so
    Spark logged no Java stack trace either."""
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    python = tmp_path / "bare" / "bin" / "python"
    tree = str(Path(retrieval_eval.__file__).parent.parent)  # so that the driver imports this tree
    env = {**os.environ, "PYSPARK_PYTHON": str(python), "PYTHONPATH": tree}
    assert subprocess.run([str(python), "-c", "import pyarrow"], check=False, capture_output=True, env=env).returncode
    done = subprocess.run([sys.executable, "-c", WORKER_WITHOUT_PYARROW], check=False, capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 3, done.stderr[-2000:]
    shown = re.escape(str(python))
    assert re.fullmatch(rf"Spark's Python workers cannot import pyarrow(, \w+)* \(PYSPARK_PYTHON={shown}\): "
                        r"install 'retrieval-evaluator\[spark\]' into that Python, or point PYSPARK_PYTHON at one "
                        r"that has it\n", done.stdout), done.stdout
    assert "Traceback" not in done.stderr and "at org.apache" not in done.stderr, done.stderr[-2000:]


class _FailedTask:
    """A DataFrame whose collection fails as Spark reports a task that could not import pyarrow."""

    class sparkSession:  # the attribute path of a DataFrame
        class sparkContext:
            pythonExec = "/opt/other/python3"

    def select(self, *names: str) -> _FailedTask:
        return self

    def toArrow(self) -> Any:
        raise RuntimeError("Job aborted ... An exception was thrown from the Python worker:\nTraceback (most "
                           "recent call last):\n  File \"worker.py\", line 1\nModuleNotFoundError: No module named "
                           "'pyarrow'\n\tat org.apache.spark.api.python.BasePythonRunner")


def test_summarize_names_a_worker_that_cannot_import_a_module() -> None:
    """A worker unlike the one the first evaluation checked (another executor of a cluster)."""
    from retrieval_eval.integrations import spark as rs

    with pytest.raises(MissingExtraError, match=r"^Spark's Python workers cannot import pyarrow "
                                                r"\(PYSPARK_PYTHON=/opt/other/python3\): install "):
        rs.summarize(_FailedTask())
