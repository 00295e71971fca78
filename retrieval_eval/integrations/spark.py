"""Evaluate runs and impression logs held as Spark DataFrames, with the package's own kernels.

The rows are partitioned by query (``repartition`` on ``query_id``), so that every query's judgments
and results meet in one partition. Each partition is then evaluated whole, as Arrow columns
(``mapInArrow``): the same builder and the same vectorised kernels as :class:`SetEvaluator`, hence
the same numbers, with no row-by-row UDF and no Python object per document. The result is a Spark
DataFrame in long form, one row per query and measure; :func:`summarize` turns it into the summary
values trec_eval prints.

pyspark (and Java 17 or later) is the ``spark`` extra: ``pip install 'retrieval-evaluator[spark]'``.
Importing :mod:`retrieval_eval` never imports pyspark; importing this module does. The executors
need retrieval_eval and pyarrow too (see docs/scale.md).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import evolve

from ..measures import Measure, MeasureError, parse, parse_all
from ..measures.registry import print_order
from ..model import (
    InputFormatError,
    InputTypeError,
    MissingExtraError,
    QrelsColumns,
    RunColumns,
    optional_int_at_least,
)

try:
    import pyspark  # noqa: F401  (the extra this module needs)
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError:
    raise MissingExtraError(
        "retrieval_eval.spark needs pyspark (and Java 17+): pip install 'retrieval-evaluator[spark]'"
    ) from None

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["RESULT_SCHEMA", "evaluate", "evaluate_log", "session", "summarize"]

#: The long form :func:`evaluate` returns. ``weight`` is each query's weight in the summary of a
#: weighted measure (GAUC), null for every other measure.
RESULT_SCHEMA = "query_id string, measure string, value double, weight double"

_JAVA = "Spark needs Java 17 or later: install a JDK (e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME"


def session(master: str = "local[*]", app_name: str = "retrieval_eval", **config: str) -> SparkSession:
    """A SparkSession (the active one if there is one), for local work and tests.

    Python workers run this interpreter unless ``PYSPARK_PYTHON`` says otherwise (pyspark's own
    default is whatever ``python3`` is on PATH, which may lack pyarrow), so that they import the
    same retrieval_eval and pyarrow. On a cluster, build the session as the cluster wants instead.

    Raises
    ------
    MissingExtraError
        Without Java (no ``java`` on PATH and no JAVA_HOME, or a JVM that does not start).
    """
    from pyspark.sql import SparkSession

    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        raise MissingExtraError(f"{_JAVA} (no java on PATH, JAVA_HOME unset)")
    builder = SparkSession.builder.master(master).appName(app_name)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # read by pyspark when the context starts
    settings = {"spark.ui.enabled": "false", **config}
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as exc:  # pyspark raises its own runtime error when the JVM cannot start
        if "JAVA_GATEWAY_EXITED" in str(exc) or "Java gateway" in str(exc):
            raise MissingExtraError(f"{_JAVA} (the JVM did not start)") from None
        raise


def _measures(measures: str | Measure | Iterable[str | Measure], rel: int) -> list[str]:
    """The canonical strings of the requested measures (groups expanded, each once), checked here on
    the driver so that a bad name fails at once rather than in every task."""
    from ..evaluators import SetEvaluator

    given = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    parsed: list[Measure] = []
    for item in given:
        parsed.extend([parse(item, rel=rel)] if isinstance(item, Measure) else parse_all(item, rel=rel))
    names = list(dict.fromkeys(str(m) for m in parsed))
    if not names:
        raise MeasureError("no measure requested")
    tiny = SetEvaluator.from_dict({"q": {"d": 1}}, {"q": {"d": 1.0}}, rel=rel)
    for measure in dict.fromkeys(parsed):
        if measure.definition.text:
            raise MeasureError(f"{measure} is a text measure; spark.evaluate computes numeric measures only")
        if measure.definition.subtopics:
            raise MeasureError(f"{measure} needs subtopic (diversity) qrels, which spark.evaluate does not read")
        tiny.array(measure)  # raises for a parameter outside its domain (a cutoff left out, ...)
    return names


def _column_check(df: DataFrame, what: str, roles: dict[str, str], kinds: dict[str, tuple[type, ...]]) -> None:
    """Missing columns and columns of the wrong type, named on the driver before any task runs."""
    fields = {f.name: f.dataType for f in df.schema.fields}
    for role, name in roles.items():
        if name not in fields:
            raise InputFormatError(f"{what}: no column {name!r} ({role}); got columns {list(fields)} "
                                   f"(other names are mapped by keyword, e.g. {role}='...')")
        if not isinstance(fields[name], kinds[role]):
            raise InputTypeError(f"{what}: column {name!r} ({role}) must hold "
                                 f"{'strings or integers' if role in ('query_id', 'doc_id') else 'numbers'}; "
                                 f"got {fields[name].simpleString()}")


_IDS = (T.StringType, T.IntegralType)
_NUMBERS = (T.NumericType,)


def _long_rows(evaluator: Any, measures: list[str]) -> Iterator[Any]:
    """One Arrow batch per measure: every query of ``evaluator`` with its value (and summary weight)."""
    import pyarrow as pa

    query_ids = pa.array(evaluator.query_ids, pa.string())
    n = len(query_ids)
    if n == 0:
        return
    repeat = pa.array(np.zeros(n, dtype=np.int64))
    for name in measures:
        measure = parse(name, rel=evaluator.rel)
        weights = evaluator.summary_weights(measure)
        yield pa.RecordBatch.from_arrays(
            [query_ids, pa.array([name], pa.string()).take(repeat), pa.array(evaluator.array(measure), pa.float64()),
             pa.nulls(n, pa.float64()) if weights is None else pa.array(weights, pa.float64())],
            names=["query_id", "measure", "value", "weight"],
        )


def _evaluate_partitions(
    table_to_columns: Callable[[Any], tuple[QrelsColumns, RunColumns] | None], measures: list[str],
    rel: int, options: dict[str, Any],
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function: a whole partition's batches as one table, evaluated at once."""

    def evaluate_partition(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from ..engine.build import RunHandoff
        from ..evaluators import SetEvaluator

        received = list(batches)
        if not received:  # an empty partition (more partitions than queries)
            return
        columns = table_to_columns(pa.Table.from_batches(received))
        del received
        if columns is None:
            return
        qrels, run = columns
        evaluator = SetEvaluator._built(qrels, RunHandoff(run), rel=rel, order="score", duplicates="error", **options)
        yield from _long_rows(evaluator, measures)

    return evaluate_partition


def _map(df: DataFrame, key: str, partitions: int | None, function: Callable[[Iterator[Any]], Iterator[Any]]) -> DataFrame:
    _check_driver()
    _check_workers(df)
    shuffled = df.repartition(partitions, key) if partitions is not None else df.repartition(key)
    with warnings.catch_warnings():  # pyspark warns about pandas versions, which mapInArrow does not use
        warnings.filterwarnings("ignore", message=".*pandas.*", category=FutureWarning)
        return shuffled.mapInArrow(function, RESULT_SCHEMA)


_EXTRA = "pip install 'retrieval-evaluator[spark]'"


def _check_driver() -> None:
    """pandas and pyarrow on the driver, at the versions PySpark's Arrow path demands (mapInArrow
    checks both, and would raise PySpark's own error with a traceback)."""
    from pyspark.errors import PySparkImportError
    from pyspark.sql.pandas.utils import require_minimum_pandas_version, require_minimum_pyarrow_version

    try:
        with warnings.catch_warnings():  # pyspark warns about pandas 3, which mapInArrow does not use
            warnings.filterwarnings("ignore", message=".*pandas.*", category=FutureWarning)
            require_minimum_pandas_version()
            require_minimum_pyarrow_version()
    except PySparkImportError as exc:
        given = exc.getMessageParameters() or {}
        package, minimum = given.get("package_name", "pandas"), given.get("minimum_version", "")
        found = f"found {given['current_version']}" if "current_version" in given else "not installed"
        raise MissingExtraError(f"retrieval_eval.spark needs {package} >= {minimum} in this Python "
                                f"(PySpark's Arrow path imports it; {found}): {_EXTRA}") from None


#: What a Python worker imports to run this module's tasks (pandas is not among them: mapInArrow's
#: worker reads Arrow batches without it).
_WORKER_MODULES = ("pyarrow", "numpy", "attrs", "retrieval_eval")
#: The (application, worker Python) pairs whose workers were found able to run the tasks.
_WORKERS_CHECKED: set[tuple[str, str]] = set()
_VERSIONS = re.compile(r"different version: (\S+) than that in driver: (\S+),")


_INSTALL_THERE = "install 'retrieval-evaluator[spark]' into that Python, or point PYSPARK_PYTHON at one that has it"


def _workers(python: str, problem: str, hint: str) -> MissingExtraError:
    return MissingExtraError(f"Spark's Python workers {problem} (PYSPARK_PYTHON={python}): {hint}")


def _check_workers(df: DataFrame) -> None:
    """Whether Spark's Python workers can import what the tasks need, found by one tiny job per
    session (its first evaluation); a missing module is named in one line instead of failing
    every task of the real job, later, with a Java stack trace around a Python one."""
    try:
        context = df.sparkSession.sparkContext
        key = (str(context.applicationId), str(context.pythonExec))
    except Exception:  # noqa: BLE001 - Spark Connect: the client has no SparkContext, nor workers of its own
        return
    if key in _WORKERS_CHECKED:
        return
    modules = _WORKER_MODULES

    # Defined here so that cloudpickle sends it by value: the worker need not import this module
    # (which is one of the things being checked) to run it. It never fails, so Spark logs nothing.
    def missing(_: Iterable[int]) -> Iterator[str]:
        import importlib

        for name in modules:
            try:
                importlib.import_module(name)
            except ImportError as exc:
                yield exc.name or name

    try:
        absent = list(dict.fromkeys(context.parallelize([0], 1).mapPartitions(missing).collect()))
    except Exception as exc:  # the workers did not start: a wrong PYSPARK_PYTHON
        versions = _VERSIONS.search(str(exc))
        if versions is not None:
            raise _workers(key[1], f"run Python {versions[1]}, the driver {versions[2]}",
                           f"PySpark needs one minor version; point PYSPARK_PYTHON at a Python {versions[2]} "
                           "with 'retrieval-evaluator[spark]' installed") from None
        if "Cannot run program" in str(exc):
            raise _workers(key[1], "cannot start", "no such program; point PYSPARK_PYTHON at a Python with "
                                                   "'retrieval-evaluator[spark]' installed") from None
        raise
    if absent:
        raise _workers(key[1], f"cannot import {', '.join(absent)}", _INSTALL_THERE)
    _WORKERS_CHECKED.add(key)


def _check_partitions(partitions: object) -> int | None:
    return optional_int_at_least(partitions, "'partitions'", 1)


def _split_union(table: Any) -> tuple[QrelsColumns, RunColumns] | None:
    """A partition of the tagged union of qrels and run rows, as the builder's two inputs."""
    import pyarrow.compute as pc

    from ..io.frames import qrels_from_table, run_from_table

    is_run = table.column("_run")
    judged = table.filter(pc.invert(is_run))
    if judged.num_rows == 0:  # only run rows of queries nobody judged: nothing is evaluated
        return None
    ranked = table.filter(is_run)
    # A row of a partition is nowhere a user can look it up (a DataFrame has no row numbers, and a
    # partition holds the rows of a shuffle): a bad row, and a duplicate, is named by its query and
    # document only. A partition may hold judged queries without results (scored as empty rankings).
    qrels = qrels_from_table(judged, origin="qrels DataFrame", rows_by_ids=_QUERY_AND_DOCUMENT)
    run = run_from_table(ranked, origin="run DataFrame", empty_ok=True, rows_by_ids=_QUERY_AND_DOCUMENT)
    return evolve(qrels, unit=""), evolve(run, unit="")


#: How a task's error names a bad row: by the ids of its query (or group) and document (or item).
_QUERY_AND_DOCUMENT = ("query", "document")
_GROUP_AND_ITEM = ("group", "item")


def evaluate(
    qrels_df: DataFrame, run_df: DataFrame, measures: str | Measure | Iterable[str | Measure], *, rel: int = 1,
    complete: bool = True, judged_only: bool = False, max_depth: int | None = None, partitions: int | None = None,
    query_id: str = "query_id", doc_id: str = "doc_id", relevance: str = "relevance", score: str = "score",
) -> DataFrame:
    """Per-query values of ``measures`` as a Spark DataFrame ``query_id, measure, value, weight``.

    ``qrels_df`` has the columns ``query_id, doc_id, relevance`` and ``run_df`` ``query_id, doc_id,
    score`` (other names are mapped by keyword); ids are strings or integers. Each query is ranked
    by score, ties by doc_id descending (trec_eval's rule), exactly as :class:`SetEvaluator` does:
    the values are those of ``SetEvaluator.from_arrow`` on the same rows. ``complete`` scores the
    judged queries the run lacks as empty rankings (``evaluate -c``); run queries without judgments
    are ignored. ``measures`` may hold groups (``"official"``, ``"P"``).

    The work is shuffled by query into ``partitions`` partitions (Spark's
    ``spark.sql.shuffle.partitions`` by default), each evaluated whole in one Python task: a
    partition must fit in a worker's memory (about 100 bytes per row).

    The result is lazy, as any DataFrame: bad data (a null, a NaN score, a document twice for one
    query) fails the Spark action that computes it, with this package's message (the query and
    document of a duplicate) in Spark's error; :func:`summarize` raises it as the package's own
    error. Missing or mistyped columns and unknown measures raise at once, and so does a Python
    (driver or workers) that lacks a module the job imports: the first evaluation of a session runs
    one tiny job to check the workers' ``PYSPARK_PYTHON``.
    """
    from ..evaluators.options import _check_max_depth, _check_rel

    rel = _check_rel("spark.evaluate", rel)
    options = {"max_depth": _check_max_depth(max_depth), "judged_only": bool(judged_only), "complete": bool(complete)}
    names = _measures(measures, rel)
    partitions = _check_partitions(partitions)
    _column_check(qrels_df, "qrels DataFrame", {"query_id": query_id, "doc_id": doc_id, "relevance": relevance},
                  {"query_id": _IDS, "doc_id": _IDS, "relevance": _NUMBERS})
    _column_check(run_df, "run DataFrame", {"query_id": query_id, "doc_id": doc_id, "score": score},
                  {"query_id": _IDS, "doc_id": _IDS, "score": _NUMBERS})
    # One table of both, tagged by side (the other side's value column is null there), so that one
    # shuffle brings a query's judgments and results together.
    judged = qrels_df.select(F.col(query_id).cast("string").alias("query_id"), F.col(doc_id).cast("string").alias("doc_id"),
                             F.col(relevance).alias("relevance"), F.lit(False).alias("_run"))
    ranked = run_df.select(F.col(query_id).cast("string").alias("query_id"), F.col(doc_id).cast("string").alias("doc_id"),
                           F.col(score).alias("score"), F.lit(True).alias("_run"))
    both = judged.unionByName(ranked, allowMissingColumns=True)
    return _map(both, "query_id", partitions, _evaluate_partitions(_split_union, names, rel, options))


def evaluate_log(
    log_df: DataFrame, measures: str | Measure | Iterable[str | Measure], *, group: str = "group",
    item: str = "item", score: str = "score", label: str = "label", rel: int = 1, judged_only: bool = False,
    max_depth: int | None = None, partitions: int | None = None,
) -> DataFrame:
    """Per-group values of ``measures`` over a labelled log, as :meth:`SetEvaluator.from_log` computes them.

    Each row of ``log_df`` is one impression: its ``group`` (a query or a session), the ``item``
    shown, the model's ``score`` and the observed ``label`` (a grade, 2 or 2.5, or a click). Each group
    is ranked by score (ties by item descending) and judged by its labels, so AUC, GAUC and every
    ranking measure apply. The result has the form of :func:`evaluate`'s, with the group as
    ``query_id``.
    """
    from ..evaluators.options import _check_max_depth, _check_rel

    rel = _check_rel("spark.evaluate_log", rel)
    options = {"max_depth": _check_max_depth(max_depth), "judged_only": bool(judged_only), "complete": True}
    names = _measures(measures, rel)
    partitions = _check_partitions(partitions)
    _column_check(log_df, "log DataFrame", {"group": group, "item": item, "score": score, "label": label},
                  {"group": _IDS, "item": _IDS, "score": _NUMBERS, "label": _NUMBERS})
    rows = log_df.select(F.col(group).cast("string").alias("query_id"), F.col(item).cast("string").alias("doc_id"),
                         F.col(score).alias("score"), F.col(label).alias("relevance"))
    return _map(rows, "query_id", partitions, _evaluate_partitions(_split_log, names, rel, options))


def _split_log(table: Any) -> tuple[QrelsColumns, RunColumns]:
    """A partition of a log as judgments (its labels) and a run (its scores), as logs.py reads one."""
    from ..io.frames import qrels_from_table, run_from_table

    qrels = qrels_from_table(table, origin="log DataFrame", rows_by_ids=_GROUP_AND_ITEM)
    run = run_from_table(table, origin="log DataFrame", rows_by_ids=_GROUP_AND_ITEM)
    return evolve(qrels, unit=""), evolve(run, unit="")


#: A Python task that failed to import a module, in Spark's message.
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
#: How an error raised in a Python task appears in Spark's message: the exception's class and text.
_TASK_ERROR = re.compile(r"retrieval_eval\.model\.(InputFormatError|InputTypeError|TrecFormatError): (.*)")


def _short(text: str) -> str:
    """``text`` quoted, cut to a few dozen characters (an id in an error may be very long)."""
    shown = repr(text)
    return shown if len(shown) <= 100 else shown[:96] + "..." + shown[-1]


def summarize(per_query_df: DataFrame) -> dict[str, float]:
    """The summary of each measure of :func:`evaluate`'s result, as trec_eval prints it.

    The mean over queries for most measures, the sum for the counts (``NumRet``, ``NumRel``...), the
    geometric mean for ``GMAP`` and ``GMBpref``, the weighted mean for ``GAUC``: the measure's own
    summary, as :meth:`SetEvaluator.aggregate` computes it, each query counted once and in the same
    (byte) order of query ids, so the values are identical to it. Measures come in trec_eval's order.

    The per-query values are collected to the driver (one row per query and measure).

    Raises
    ------
    InputFormatError
        Bad data found by the tasks (a duplicate document, a null ...), with the package's message;
        or a query listed twice for one measure (results of several evaluations mixed).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        table = per_query_df.select("query_id", "measure", "value", "weight").toArrow()
    except Exception as exc:  # a task failed (Spark wraps it): raise the package's error, if it was one
        found = _TASK_ERROR.search(str(exc))
        absent = _NO_MODULE.search(str(exc))
        if found is None and absent is not None:  # a worker unlike the one _check_workers asked
            python = getattr(getattr(getattr(per_query_df, "sparkSession", None), "sparkContext", None),
                             "pythonExec", os.environ.get("PYSPARK_PYTHON", "python3"))
            raise _workers(str(python), f"cannot import {absent[1]}", _INSTALL_THERE) from None
        if found is None:
            raise
        kind = {"InputTypeError": InputTypeError}.get(found[1], InputFormatError)
        raise kind(found[2].strip()) from None
    summary: dict[str, float] = {}
    names = sorted(pc.unique(table.column("measure")).to_pylist(), key=lambda name: (print_order(parse(name)), name))
    for name in names:
        rows = table.filter(pc.equal(table.column("measure"), name))
        # Arrow sorts strings by their UTF-8 bytes (SetEvaluator's order), in place: a NumPy str
        # array would take 4 bytes a character of the longest id for every query.
        order = np.asarray(pc.sort_indices(rows.column("query_id")).to_numpy(zero_copy_only=False), dtype=np.int64)
        ordered_ids = rows.column("query_id").take(pa.array(order))
        repeated = np.flatnonzero(pc.equal(ordered_ids[1:], ordered_ids[:-1]).to_numpy(zero_copy_only=False))
        if len(repeated):
            shown = _short(str(ordered_ids[int(repeated[0])].as_py()))
            raise InputFormatError(f"summarize: query {shown} has two values of {name}; "
                                   "expected the result of one evaluation (each query once per measure)")
        values = rows.column("value").to_numpy(zero_copy_only=False)[order].astype(np.float64)
        definition = parse(name).definition
        weights = None
        if definition.weight is not None:
            weights = rows.column("weight").to_numpy(zero_copy_only=False)[order].astype(np.float64)
        summary[name] = definition.aggregate_values(values, weights)
    return summary

