"""Arrow tables, Parquet files and DataFrames (pandas, polars, pyarrow) as judgments and runs.

A qrels table has the columns ``query_id, doc_id, relevance`` and a run table ``query_id, doc_id,
score`` (other names are mapped by keyword: ``query_id="qid"``). Ids may be strings or integers (an
integer id is its decimal string, as it would be in a TREC file); relevance must be integers and
scores numbers; a null anywhere is an error. Everything is converted column by column from the
Arrow buffers: no Python object per row.

Errors name the source and the row (``qrels.parquet, row 12``), as the text readers name lines.
pyarrow is the ``parquet`` extra; every table type is converted through it.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import numpy as np

from .model import (
    FloatArray,
    InputFormatError,
    InputTypeError,
    IntArray,
    MissingExtraError,
    QrelsColumns,
    RunColumns,
    TrecFormatError,
)

__all__ = ["PARQUET_MAGIC", "as_table", "is_parquet", "qrels_from_table", "read_parquet_qrels",
           "read_parquet_run", "run_from_table"]

#: The first (and last) four bytes of every Parquet file.
PARQUET_MAGIC = b"PAR1"

QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
RUN_COLUMNS = ("query_id", "doc_id", "score")


def pyarrow(feature: str) -> ModuleType:
    """The pyarrow module, or MissingExtraError naming the extra that installs it."""
    try:
        import pyarrow as pa
        import pyarrow.compute  # pa.compute, used by the converters
    except ImportError:
        raise MissingExtraError(f"{feature} needs pyarrow: pip install 'retrieval_eval[parquet]'") from None
    module: ModuleType = pa
    return module


def is_parquet(source: object) -> bool:
    """True for a path named ``*.parquet`` or whose file starts with Parquet's magic bytes."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    path = os.fspath(source)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if path.lower().endswith(".parquet"):
        return True
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == PARQUET_MAGIC
    except OSError:  # the text reader reports a missing or unreadable file in its own words
        return False


def as_table(data: object, what: str) -> Any:
    """A pyarrow Table from a pyarrow Table, RecordBatch or RecordBatchReader, a pandas or polars
    DataFrame, or any object with ``__arrow_c_stream__``."""
    pa = pyarrow(what)
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    if type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame":
        return pa.Table.from_pandas(data, preserve_index=False)
    if hasattr(data, "__arrow_c_stream__"):  # polars, and any other Arrow-speaking table
        return pa.table(data)
    raise InputTypeError(f"{what} must be a pyarrow Table, a pandas or polars DataFrame, or an object with "
                         f"__arrow_c_stream__; got {type(data).__name__}")


class TableSource:
    """Where a table came from, for error messages: ``origin, row N``, and which errors to raise."""

    def __init__(self, origin: str, in_memory: bool, columns: tuple[str, ...], expected: str | None = None) -> None:
        self.origin = origin
        self.bad_type: type[Exception] = InputTypeError if in_memory else TrecFormatError
        self.bad_value: type[Exception] = InputFormatError if in_memory else TrecFormatError
        self.expected = expected or f"columns {', '.join(columns)}"
        self.hint = " (other names are mapped by keyword, e.g. query_id='qid')" if in_memory else ""

    def at(self, row: int) -> str:
        return f"{self.origin}, row {row + 1}"


def _select(table: Any, names: dict[str, str], source: TableSource) -> list[Any]:
    """The named columns of ``table``, each as one contiguous Arrow array."""
    missing = [name for name in names.values() if name not in table.column_names]
    if missing:
        mapped = ", ".join(f"{role}='{name}'" for role, name in names.items() if role != name)
        raise source.bad_value(
            f"{source.origin}: no column {missing[0]!r}; expected {source.expected}"
            + (f" (mapped: {mapped})" if mapped else source.hint)
            + f"; got columns {table.column_names}"
        )
    return [table.column(name).combine_chunks() for name in names.values()]


def _check_nulls(column: Any, role: str, name: str, source: TableSource) -> None:
    if column.null_count:
        row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise source.bad_value(f"{source.at(row)}: empty {role} (column {name!r}): null; expected {source.expected}")


def _first_value(column: Any) -> str:
    return repr(column[0].as_py()) if len(column) else "no rows"


#: For 0..8, a 64-bit word whose first n bytes in memory are 0xff (a mask that keeps n bytes).
_KEEP_BYTES = np.frombuffer(b"".join(b"\xff" * n + bytes(8 - n) for n in range(9)), dtype=np.uint64)


def id_column(column: Any, role: str, name: str, source: TableSource) -> np.ndarray:
    """A string or integer Arrow column as fixed-width UTF-8 bytes (``S<8k>``), zero-padded.

    The ids are copied from Arrow's data buffer 8 bytes at a time (a loop over words, not rows);
    an empty id or one holding NUL (which a NumPy bytes value cannot keep) names its row.
    """
    pa = pyarrow("reading ids")
    pc = pa.compute
    _check_nulls(column, role, name, source)
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.dictionary_decode(), kind.value_type
    if pa.types.is_integer(kind):
        column = pc.cast(column, pa.large_string())  # an integer id is its decimal string
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind) or _is_string_view(pa, kind):
        column = pc.cast(column, pa.large_string())  # one layout: 64-bit offsets
    else:
        raise source.bad_type(f"{source.origin}: column {name!r} ({role}) must hold strings or integers; "
                              f"got {kind} (first value {_first_value(column)})")
    n = len(column)
    _, offsets_buffer, data_buffer = column.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64, count=n + 1, offset=8 * column.offset)
    start = offsets[:-1]
    length = np.diff(offsets)
    if n and int(length.min()) == 0:
        raise source.bad_value(f"{source.at(int(np.argmin(length)))}: empty {role} (column {name!r}); "
                               f"expected {source.expected}")
    used = slice(int(offsets[0]), int(offsets[-1])) if n else slice(0, 0)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    nul = np.flatnonzero(data[used] == 0)
    if len(nul):
        row = int(np.searchsorted(offsets, used.start + nul[0], side="right")) - 1
        raise source.bad_value(f"{source.at(row)}: {role} contains NUL (column {name!r}); got "
                               f"{column[row].as_py()!r}")
    n_words = max(-(-int(length.max()) // 8), 1) if n else 1
    n_bytes = int(offsets[-1]) if n else 0
    padded = np.zeros(n_bytes + 8, dtype=np.uint8)  # 8 spare bytes: the last word read stays inside
    padded[:n_bytes] = data[:n_bytes]
    # A view of the bytes as a 64-bit word starting at every byte (unaligned reads are fine in NumPy).
    words_at = np.ndarray((len(padded) - 7,), dtype=np.uint64, buffer=padded.data, strides=(1,))
    out = np.empty((n, n_words), dtype=np.uint64)
    for j in range(n_words):  # loop over 8-byte words of the ids, not over rows
        read = np.minimum(start + 8 * j, len(padded) - 8)
        out[:, j] = words_at[read] & _KEEP_BYTES[np.clip(length - 8 * j, 0, 8)]
    return out.view(f"S{8 * n_words}").ravel()


def number_column(column: Any, role: str, name: str, source: TableSource, integral: bool) -> np.ndarray:
    """An integer column as int64 (``integral``; integral floats accepted), or a numeric one as float64.

    Booleans and strings are refused with the column's type and first value; a fraction, a value
    beyond int64 or a NaN score names its row.
    """
    pa = pyarrow("reading numbers")
    _check_nulls(column, role, name, source)
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.dictionary_decode(), kind.value_type
    expected = "integers" if integral else "numbers"
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)):
        raise source.bad_type(f"{source.origin}: column {name!r} ({role}) must hold {expected}; got {kind} "
                              f"(first value {_first_value(column)})")
    if pa.types.is_decimal(kind):
        column = pa.compute.cast(column, pa.float64(), safe=False)
    values = np.asarray(column.to_numpy(zero_copy_only=False))
    if not integral:
        scores: FloatArray = values.astype(np.float64)
        nan = np.isnan(scores)
        if nan.any():
            row = int(np.argmax(nan))
            raise source.bad_value(f"{source.at(row)}: {role} must not be NaN (it would make the ranking order "
                                   f"undefined; column {name!r})")
        return scores
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values) | (values != np.floor(values)) | (np.abs(values) >= 2.0**63)
        if bad.any():
            row = int(np.argmax(bad))
            raise source.bad_value(f"{source.at(row)}: {role} must be an integer (column {name!r}); got {float(values[row])!r}")
    elif values.dtype == np.uint64 and len(values) and int(values.max()) > np.iinfo(np.int64).max:
        row = int(np.argmax(values > np.iinfo(np.int64).max))
        raise source.bad_value(f"{source.at(row)}: {role} must fit in a 64-bit integer (column {name!r}); "
                               f"got {values[row]}")
    result: IntArray = values.astype(np.int64)
    return result


def _is_string_view(pa: ModuleType, kind: Any) -> bool:
    is_view = getattr(pa.types, "is_string_view", None)  # pyarrow >= 16
    return bool(is_view(kind)) if is_view is not None else False


def _row_numbers(n: int) -> IntArray:
    return np.arange(1, n + 1, dtype=np.int64)


def qrels_from_table(
    data: object, *, query_id: str = "query_id", doc_id: str = "doc_id", relevance: str = "relevance",
    subtopic: str | None = None, origin: str = "qrels table", in_memory: bool = True,
) -> QrelsColumns:
    """Judgments from an Arrow-speaking table (see :func:`as_table`) with the named columns.

    ``subtopic`` names the column of subtopic (intent) ids the diversity measures need.
    """
    table = as_table(data, origin)
    names = {"query_id": query_id, "doc_id": doc_id, "relevance": relevance}
    if subtopic is not None:
        names["subtopic"] = subtopic
    source = TableSource(origin, in_memory, tuple(names.values()))
    columns = _select(table, names, source)
    return QrelsColumns(
        query_ids=id_column(columns[0], "query id", query_id, source),
        doc_ids=id_column(columns[1], "doc id", doc_id, source),
        relevance=number_column(columns[2], "relevance", relevance, source, integral=True),
        lines=_row_numbers(table.num_rows),
        origin=origin,
        unit="row",
        subtopics=id_column(columns[3], "subtopic", subtopic, source) if subtopic is not None else None,
    )


def run_from_table(
    data: object, *, query_id: str = "query_id", doc_id: str = "doc_id", score: str = "score",
    rank: str | None = None, run_id: str = "", origin: str = "run table", in_memory: bool = True,
) -> RunColumns:
    """A run from an Arrow-speaking table (see :func:`as_table`) with the named columns.

    ``rank`` names a column of integer ranks, read only to rank by it (``order="rank"``).
    """
    table = as_table(data, origin)
    names = {"query_id": query_id, "doc_id": doc_id, "score": score}
    if rank is not None:
        names["rank"] = rank
    source = TableSource(origin, in_memory, tuple(names.values()))
    columns = _select(table, names, source)
    return RunColumns(
        query_ids=id_column(columns[0], "query id", query_id, source),
        doc_ids=id_column(columns[1], "doc id", doc_id, source),
        scores=number_column(columns[2], "score", score, source, integral=False),
        lines=_row_numbers(table.num_rows),
        origin=origin,
        run_id=run_id,
        unit="row",
        ranks=number_column(columns[3], "rank", rank, source, integral=True) if rank is not None else None,
    )


def read_parquet_table(path: str | os.PathLike[str], required: list[str], optional: list[str], what: str) -> Any:
    """The ``required`` and ``optional`` columns of a Parquet file (no others are read).

    When a required column is missing, the file's empty table comes back, so that the caller's
    error names the column and lists the file's columns. An unreadable file is a TrecFormatError.
    """
    pyarrow(f"reading Parquet {what}")
    import pyarrow.parquet as pq

    name = os.fspath(path)
    try:
        schema = pq.read_schema(name)
        if not set(required) <= set(schema.names):
            return schema.empty_table()
        return pq.read_table(name, columns=required + [c for c in optional if c in schema.names])
    except (OSError, ValueError, KeyError) as exc:  # pyarrow's errors subclass these
        raise TrecFormatError(f"{name}: cannot read as Parquet: {exc}") from None


def read_parquet_qrels(
    path: str | os.PathLike[str], *, with_subtopics: bool = False, query_id: str = "query_id",
    doc_id: str = "doc_id", relevance: str = "relevance", subtopic: str = "subtopic",
) -> QrelsColumns:
    """A Parquet qrels file (columns ``query_id, doc_id, relevance``; ``subtopic`` when asked for)."""
    wanted = [query_id, doc_id, relevance] + ([subtopic] if with_subtopics else [])
    table = read_parquet_table(path, wanted, [], "qrels")
    name = os.fspath(path)
    result = qrels_from_table(table, query_id=query_id, doc_id=doc_id, relevance=relevance,
                              subtopic=subtopic if with_subtopics else None, origin=name, in_memory=False)
    if not len(result.lines):
        raise TrecFormatError(f"{name}: no judgments found; expected rows with columns {', '.join(wanted)}; "
                              "got no rows")
    return result


def read_parquet_run(
    path: str | os.PathLike[str], *, with_ranks: bool = False, query_id: str = "query_id", doc_id: str = "doc_id",
    score: str = "score", rank: str = "rank",
) -> RunColumns:
    """A Parquet run file (columns ``query_id, doc_id, score``; ``rank`` when asked for).

    The run id is the last row's ``run_id`` column if the file has one (as trec_eval takes the last
    line's), else the file's name without its suffix.
    """
    wanted = [query_id, doc_id, score] + ([rank] if with_ranks else [])
    table = read_parquet_table(path, wanted, ["run_id"], "run")
    name = os.fspath(path)
    run_id = os.path.splitext(os.path.basename(name))[0]
    if "run_id" in table.column_names and table.num_rows:
        last = table.column("run_id")[-1].as_py()
        if last is not None:
            run_id = str(last)
    result = run_from_table(table, query_id=query_id, doc_id=doc_id, score=score, rank=rank if with_ranks else None,
                            run_id=run_id, origin=name, in_memory=False)
    if not len(result.lines):
        raise TrecFormatError(f"{name}: no results found; expected rows with columns {', '.join(wanted)}; got no rows")
    return result
