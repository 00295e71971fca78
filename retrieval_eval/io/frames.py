"""Arrow tables, Parquet files and DataFrames (pandas, polars, pyarrow) as judgments and runs.

A qrels table has the columns ``query_id, doc_id, relevance`` and a run table ``query_id, doc_id,
score`` (other names are mapped by keyword: ``query_id="qid"``). Ids may be strings or integers (an
integer id is its decimal string, as it would be in a TREC file); relevance must be numbers (integers,
or float grades: :func:`~retrieval_eval.model.grade_column`) and scores numbers; a null anywhere is an error. Tables are converted a batch of rows at a time, each
column from its Arrow buffers: no Python object per row, except in an id column where a few ids are
much longer than the rest, which holds ``bytes`` objects as the text reader's does (a fixed-width
column would be as wide as its longest id in every row).

Errors name the source and the row (``qrels.parquet, row 12``), as the text readers name lines.
pyarrow is the ``parquet`` extra; every table type is converted through it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Any

import numpy as np

from ..engine.memory import release_freed_memory
from ..model import (
    FloatArray,
    InputFormatError,
    InputTypeError,
    IntArray,
    MissingExtraError,
    QrelsColumns,
    RetrievalEvalError,
    RunColumns,
    TrecFormatError,
    bad_grade,
    grade_column,
)
from ._tokens import _WIDE_ID, _widens_too_far

__all__ = ["as_table", "qrels_from_table", "read_parquet_qrels", "read_parquet_run", "run_from_table"]


def pyarrow(feature: str) -> ModuleType:
    """The pyarrow module, or MissingExtraError naming the extra that installs it."""
    try:
        import pyarrow as pa
        import pyarrow.compute  # pa.compute, used by the converters
    except ImportError:
        raise MissingExtraError(f"{feature} needs pyarrow: pip install 'retrieval-evaluator[parquet]'") from None
    module: ModuleType = pa
    return module


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
    expected = "a pyarrow Table, a pandas or polars DataFrame, or an object with __arrow_c_stream__"
    if type(data).__name__ == "Series" or isinstance(data, (pa.Array, pa.ChunkedArray)):
        # One column (a pandas or polars Series, an Arrow array) has no names to find the columns by.
        raise InputTypeError(f"{what} must be {expected}, with named columns; got a single column "
                             f"({type(data).__module__.split('.')[0]} {type(data).__name__}): give a table "
                             "(for a pandas Series, series.to_frame())")
    if type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame":
        try:
            return pa.Table.from_pandas(data, preserve_index=False)
        except UnicodeEncodeError:  # ids that are not UTF-8, as str with surrogate escapes
            return pa.Table.from_pandas(_escaped_to_bytes(data, what), preserve_index=False)
        except (pa.ArrowTypeError, pa.ArrowInvalid) as exc:  # e.g. an object column of str and int mixed
            raise InputTypeError(f"{what}: a column cannot be read as one Arrow type: {exc}") from None
    if hasattr(data, "__arrow_c_stream__"):  # polars, and any other Arrow-speaking table
        try:
            return pa.table(data)
        except (pa.ArrowTypeError, pa.ArrowInvalid) as exc:  # not a table's stream (a column's)
            raise InputTypeError(f"{what} must be {expected}, with named columns; got {type(data).__name__} "
                                 f"({str(exc)[:200]})") from None
    raise InputTypeError(f"{what} must be {expected}; got {type(data).__name__}")


def _escaped_to_bytes(frame: Any, what: str) -> Any:
    """``frame`` with each column of str holding surrogate escapes (ids that are not UTF-8, in the form
    the readers return them) as the bytes they stand for; a lone surrogate that stands for no byte
    raises InputFormatError naming the column and row."""
    frame = frame.copy(deep=False)
    for name in frame.columns:
        values = frame[name]
        if values.dtype != object:
            continue
        encoded: list[object] = []
        for row, value in enumerate(values.tolist()):
            if isinstance(value, str):
                try:
                    value = value.encode("utf-8", "surrogateescape")
                except UnicodeEncodeError:
                    raise InputFormatError(
                        f"{what}, row {row + 1}: column {str(name)!r} holds {value!r:.100}, with a lone surrogate "
                        "that stands for no byte; expected text, or surrogate escapes of bytes that are not "
                        "UTF-8 ('\\udc80' to '\\udcff')") from None
            encoded.append(value)
        frame[name] = _object_series(encoded, values)
    return frame


def _object_series(values: list[object], like: Any) -> Any:
    """A pandas Series of ``values`` (object dtype) with the index and name of ``like``."""
    return type(like)(values, index=like.index, name=like.name, dtype=object)


#: Characters of an id shown in an error that names a row by its ids (a long id is cut).
_SHOWN_ID = 100


class TableSource:
    """Where a table came from, for error messages, and which errors to raise.

    A row is named ``origin, row N``; or, when ``named_by`` gives the id columns and how to call
    them (``{"query": "query_id", "document": "doc_id"}``), by the ids of that row in the batch
    being converted (``origin, query 'q1', document 'd5'``): a Spark partition's rows have no
    number a user could look up.
    """

    def __init__(self, origin: str, in_memory: bool, columns: tuple[str, ...], expected: str | None = None,
                 named_by: dict[str, str] | None = None) -> None:
        self.origin = origin
        self.in_memory = in_memory
        self.bad_type: type[Exception] = InputTypeError if in_memory else TrecFormatError
        self.bad_value: type[Exception] = InputFormatError if in_memory else TrecFormatError
        self.expected = expected or f"columns {', '.join(columns)}"
        self.hint = " (other names are mapped by keyword, e.g. query_id='qid')" if in_memory else ""
        self.first_row = 0  #: rows of the table before the batch being converted
        self.named_by = named_by
        self.batch: Any = None  #: the record batch being converted, when rows are named by their ids

    def at(self, row: int) -> str:
        if self.named_by is None or self.batch is None:
            return f"{self.origin}, row {self.first_row + row + 1}"
        shown = []
        for what, column in self.named_by.items():
            value = self.batch.column(column)[row].as_py()
            text = "null" if value is None else repr(str(value))
            shown.append(f"{what} {text if len(text) <= _SHOWN_ID else text[: _SHOWN_ID - 4] + '...' + text[-1]}")
        return f"{self.origin}, {', '.join(shown)}"

    def without_rows(self) -> TableSource:
        """This source for a column that is not the batch's (a dictionary of distinct values): its
        positions are no rows of the table, so errors name none (the caller converts again to find it)."""
        return TableSource(self.origin, self.in_memory, (), expected=self.expected)


def _check_columns(present: list[str], names: dict[str, str], source: TableSource) -> None:
    missing = [name for name in names.values() if name not in present]
    if missing:
        mapped = ", ".join(f"{role}='{name}'" for role, name in names.items() if role != name)
        raise source.bad_value(
            f"{source.origin}: no column {missing[0]!r}; expected {source.expected}"
            + (f" (mapped: {mapped})" if mapped else source.hint)
            + f"; got columns {present}"
        )


def _check_nulls(column: Any, role: str, name: str, source: TableSource) -> None:
    if column.null_count:
        row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise source.bad_value(f"{source.at(row)}: empty {role} (column {name!r}): null; expected {source.expected}")


def _first_value(column: Any) -> str:
    return repr(column[0].as_py()) if len(column) else "no rows"


#: For 0..8, a 64-bit word whose first n bytes in memory are 0xff (a mask that keeps n bytes).
_KEEP_BYTES = np.frombuffer(b"".join(b"\xff" * n + bytes(8 - n) for n in range(9)), dtype=np.uint64)


def id_column(column: Any, role: str, name: str, source: TableSource) -> np.ndarray:
    """A string or integer Arrow column as UTF-8 bytes: fixed-width (``S<8k>``, zero-padded), or
    ``bytes`` objects when a few ids are much longer than the rest.

    The ids are copied from Arrow's data buffer 8 bytes at a time (a loop over words, not rows);
    an empty id or one holding NUL (which a NumPy bytes value cannot keep) names its row. A
    fixed-width array is as wide as its longest id, so one id of 4 KB among a million short ones
    would take 4 GB: such a column comes as ``bytes`` objects, as the text reader gives it (see
    :meth:`~retrieval_eval.io._tokens._Tokens.ids`), and its memory follows the input's bytes. A
    dictionary-encoded column (how Parquet stores a repetitive one, pandas and polars categoricals)
    has each distinct id converted once, then gathered.
    """
    pa = pyarrow("reading ids")
    _check_nulls(column, role, name, source)
    kind = column.type
    if pa.types.is_dictionary(kind):
        try:
            vocab = id_column(column.dictionary, role, name, source.without_rows())
        except RetrievalEvalError:  # error path: convert row by row's worth again, to name the table's row
            return id_column(column.dictionary_decode(), role, name, source)
        codes = np.asarray(column.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        if vocab.dtype.kind == "S" and vocab.dtype.itemsize > _WIDE_ID:
            # Gathered, every row takes the longest id's width: judge by the rows' mean length.
            lengths = np.char.str_len(vocab)
            if vocab.dtype.itemsize > 4 * ((float(lengths[codes].mean()) if len(codes) else 0.0) + 8):
                vocab = vocab.astype(object)  # rows then share the objects: 8 bytes a row
        return vocab[codes]
    if pa.types.is_integer(kind) or _is_string_view(pa, kind):
        column = pa.compute.cast(column, pa.large_string())  # an integer id is its decimal string; views as strings
    elif not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
              or pa.types.is_large_binary(kind)):  # binary: ids as bytes (a DataFrame's surrogate escapes)
        raise source.bad_type(f"{source.origin}: column {name!r} ({role}) must hold strings or integers; "
                              f"got {kind} (first value {_first_value(column)})")
    n = len(column)
    _, offsets_buffer, data_buffer = column.buffers()
    width = 8 if pa.types.is_large_string(column.type) or pa.types.is_large_binary(column.type) else 4
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64 if width == 8 else np.int32, count=n + 1,
                            offset=width * column.offset).astype(np.int64)
    start = offsets[:-1]
    length = np.diff(offsets)
    if n and int(length.min()) == 0:
        raise source.bad_value(f"{source.at(int(np.argmin(length)))}: empty {role} (column {name!r}); "
                               f"expected {source.expected}")
    first, end = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
    data = np.frombuffer(data_buffer, dtype=np.uint8, count=end) if end else np.zeros(0, np.uint8)
    nul = np.flatnonzero(data[first:] == 0)
    if len(nul):
        row = int(np.searchsorted(offsets, first + nul[0], side="right")) - 1
        raise source.bad_value(f"{source.at(row)}: {role} contains NUL (column {name!r}); got "
                               f"{column[row].as_py()!r}")
    n_words = max(-(-int(length.max()) // 8), 1) if n else 1
    if 8 * n_words > _WIDE_ID and 8 * n_words > 4 * (float(length.mean()) + 8):
        # Arrow makes the bytes objects (in C++, five times faster than slicing them in Python).
        objects: np.ndarray = column.cast(pa.large_binary()).to_numpy(zero_copy_only=False)
        return objects
    padded = np.zeros(end + 8, dtype=np.uint8)  # 8 spare bytes: the last word read stays inside
    padded[:end] = data
    # A view of the bytes as a 64-bit word starting at every byte (unaligned reads are fine in NumPy).
    words_at = np.ndarray((end + 1,), dtype=np.uint64, buffer=padded.data, strides=(1,))
    out = np.empty((n, n_words), dtype=np.uint64)
    remaining = length  # bytes of each id not yet copied (clamped to 0..8 below, in place)
    for j in range(n_words):  # loop over 8-byte words of the ids, not over rows
        word = words_at[start] if j == 0 else words_at[np.minimum(start + 8 * j, end)]
        keep = np.minimum(remaining, 8)
        if j:
            np.maximum(keep, 0, out=keep)
        word &= _KEEP_BYTES[keep]
        out[:, j] = word
        remaining = remaining - 8
    return out.view(f"S{8 * n_words}").ravel()


def number_column(column: Any, role: str, name: str, source: TableSource, integral: bool,
                  grades: bool = False) -> np.ndarray:
    """An integer column as int64 (``integral``; integral floats accepted), or a numeric one as float64;
    with ``grades``, relevance grades (:func:`~retrieval_eval.model.grade_column`: int64 when every
    value is integral, float64 when one is not, as 2.5).

    Booleans and strings are refused with the column's type and first value; a fraction (but for
    grades), a value beyond int64, a NaN score or grade names its row.
    """
    pa = pyarrow("reading numbers")
    _check_nulls(column, role, name, source)
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.dictionary_decode(), kind.value_type
    expected = "integers" if integral and not grades else "numbers"
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
    if grades and values.dtype.kind == "f":
        at = bad_grade(values)
        if at is not None:
            raise source.bad_value(f"{source.at(at)}: {role} must be a finite number within int64's range (column "
                                   f"{name!r}); got {float(values[at])!r}")
        return grade_column(values)
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


#: Rows converted at a time, so that the temporary arrays of a conversion stay small however long
#: the table (and a Parquet file is read one batch at a time).
_BATCH_ROWS = 1 << 20

#: What each column holds, and how it is named in errors.
_ROLES = {"query_id": ("id", "query id"), "doc_id": ("id", "doc id"), "relevance": ("grade", "relevance"),
          "score": ("float", "score"), "rank": ("int", "rank"), "subtopic": ("id", "subtopic")}
_EMPTY = {"id": np.zeros(0, dtype="S8"), "int": np.zeros(0, dtype=np.int64), "float": np.zeros(0, dtype=np.float64),
          "grade": np.zeros(0, dtype=np.int64)}


def _convert(batches: Iterable[Any], names: dict[str, str], source: TableSource, rows: int) -> dict[str, np.ndarray]:
    """The named columns of a stream of record batches (``rows`` rows in all) as NumPy arrays,
    converted batch by batch into arrays allocated once (no concatenation, which would double them)."""
    out: dict[str, np.ndarray] = {role: _EMPTY[_ROLES[role][0]] for role in names}
    for batch in batches:
        at, n = source.first_row, batch.num_rows
        source.batch = batch
        for role, name in names.items():
            kind, text = _ROLES[role]
            column = batch.column(name)
            if kind == "id":
                piece = id_column(column, text, name, source)
            else:
                piece = number_column(column, text, name, source, integral=kind != "float", grades=kind == "grade")
            if at == 0:
                out[role] = np.empty(rows, dtype=piece.dtype)
            else:
                out[role] = _room_for(out[role], piece.dtype, at)
            out[role][at : at + n] = piece
        source.first_row += n
    source.batch = None
    return out


def _room_for(column: np.ndarray, dtype: np.dtype[Any], filled: int) -> np.ndarray:
    """``column`` (its first ``filled`` rows written) made able to take values of ``dtype``: widened
    for longer ids, or turned into ``bytes`` objects where widening would cost more than they do
    (the rule of the text reader's columns); or, for grades, made float64 by a batch of float grades."""
    if column.dtype.kind == "i" and dtype.kind == "f":  # integral grades so far, then 2.5: every grade a float
        return column.astype(np.float64)
    if column.dtype.kind == "O" or dtype.kind not in "SO":
        return column
    if dtype.kind == "O" or _widens_too_far(column.dtype, dtype):
        objects = np.empty(len(column), dtype=object)
        objects[:filled] = column[:filled]
        return objects
    if dtype.itemsize > column.dtype.itemsize:  # longer ids than so far: widen
        return column.astype(dtype)
    return column


def _table_columns(data: object, names: dict[str, str], origin: str, in_memory: bool, what: str,
                   empty_ok: bool, rows_by_ids: tuple[str, str] | None) -> dict[str, np.ndarray]:
    table = as_table(data, origin)
    named_by = None if rows_by_ids is None else dict(zip(rows_by_ids, (names["query_id"], names["doc_id"])))
    source = TableSource(origin, in_memory, tuple(names.values()), named_by=named_by)
    _check_columns(table.column_names, names, source)
    batches = table.select(list(dict.fromkeys(names.values()))).to_batches(max_chunksize=_BATCH_ROWS)
    columns = _convert((b for b in batches if b.num_rows), names, source, table.num_rows)
    if not empty_ok:
        _refuse_empty(columns, names, what, origin, source.bad_value)
    return columns


def _refuse_empty(columns: dict[str, np.ndarray], names: dict[str, str], what: str, origin: str,
                  error: type[Exception]) -> None:
    """Input without a row is refused, as the text readers refuse an empty file: evaluated, it would
    give 0.0 for every measure, which looks like a result."""
    if not len(columns["query_id"]):
        raise error(f"{origin}: no {what} found; expected rows with columns {', '.join(names.values())}; got no rows")


def qrels_from_table(
    data: object, *, query_id: str = "query_id", doc_id: str = "doc_id", relevance: str = "relevance",
    subtopic: str | None = None, origin: str = "qrels table", in_memory: bool = True,
    rows_by_ids: tuple[str, str] | None = None,
) -> QrelsColumns:
    """Judgments from an Arrow-speaking table (see :func:`as_table`) with the named columns.

    ``subtopic`` names the column of subtopic (intent) ids the diversity measures need. A table
    without rows raises, as an empty qrels file does. ``rows_by_ids`` (e.g. ``("query",
    "document")``) names a bad row by its ids rather than its number.
    """
    names = {"query_id": query_id, "doc_id": doc_id, "relevance": relevance}
    if subtopic is not None:
        names["subtopic"] = subtopic
    return _qrels(_table_columns(data, names, origin, in_memory, "judgments", False, rows_by_ids), origin)


def _qrels(columns: dict[str, np.ndarray], origin: str) -> QrelsColumns:
    return QrelsColumns(
        query_ids=columns["query_id"], doc_ids=columns["doc_id"], relevance=columns["relevance"],
        lines=np.arange(1, len(columns["query_id"]) + 1, dtype=np.int64), origin=origin, unit="row",
        subtopics=columns.get("subtopic"),
    )


def run_from_table(
    data: object, *, query_id: str = "query_id", doc_id: str = "doc_id", score: str = "score",
    rank: str | None = None, run_id: str = "", origin: str = "run table", in_memory: bool = True,
    empty_ok: bool = False, rows_by_ids: tuple[str, str] | None = None,
) -> RunColumns:
    """A run from an Arrow-speaking table (see :func:`as_table`) with the named columns.

    ``rank`` names a column of integer ranks, read only to rank by it (``order="rank"``). A table
    without rows raises, as an empty run file does, unless ``empty_ok`` (a part of a run, such as
    a Spark partition's, may hold none). ``rows_by_ids``: see :func:`qrels_from_table`.
    """
    names = {"query_id": query_id, "doc_id": doc_id, "score": score}
    if rank is not None:
        names["rank"] = rank
    return _run(_table_columns(data, names, origin, in_memory, "results", empty_ok, rows_by_ids), origin, run_id)


def _run(columns: dict[str, np.ndarray], origin: str, run_id: str) -> RunColumns:
    return RunColumns(
        query_ids=columns["query_id"], doc_ids=columns["doc_id"], scores=columns["score"],
        lines=np.arange(1, len(columns["query_id"]) + 1, dtype=np.int64), origin=origin, run_id=run_id, unit="row",
        ranks=columns.get("rank"),
    )


def _parquet_columns(path: str | os.PathLike[str], names: dict[str, str], what: str,
                     last_of: str | None = None) -> tuple[dict[str, np.ndarray], object]:
    """The named columns of a Parquet file, read and converted one batch at a time (only those
    columns are read), and the last value of column ``last_of`` if the file has it.

    An unreadable file is a TrecFormatError; so is a missing column, naming the file's columns.
    """
    pa = pyarrow(f"reading Parquet {what}")
    import pyarrow.parquet as pq

    name = os.fspath(path)
    source = TableSource(name, False, tuple(names.values()))
    try:
        present = pq.read_schema(name).names
        _check_columns(present, names, source)
        wanted = list(dict.fromkeys(names.values()))
        extra = [last_of] if last_of is not None and last_of in present and last_of not in wanted else []
        last: list[object] = []
        # The query column repeats each id many times: read as a dictionary, each id is decoded once.
        # Closed on leaving, also when a bad row raises (the error's traceback would keep it open).
        with pq.ParquetFile(name, read_dictionary=[names["query_id"]]) as parquet:

            def batches() -> Iterator[Any]:
                for batch in parquet.iter_batches(batch_size=_BATCH_ROWS, columns=wanted + extra):
                    if batch.num_rows:
                        if extra:
                            last[:] = [batch.column(extra[0])[-1].as_py()]
                        yield batch

            columns = _convert(batches(), names, source, parquet.metadata.num_rows)
    except (OSError, ValueError, KeyError) as exc:  # pyarrow's errors subclass these
        if isinstance(exc, RetrievalEvalError):
            raise
        raise TrecFormatError(f"{name}: cannot read as Parquet: {exc}") from None
    pa.default_memory_pool().release_unused()  # Arrow's allocator keeps freed batches otherwise
    release_freed_memory()
    return columns, last[0] if last else None


def read_parquet_qrels(
    path: str | os.PathLike[str], *, with_subtopics: bool = False, query_id: str = "query_id",
    doc_id: str = "doc_id", relevance: str = "relevance", subtopic: str = "subtopic",
) -> QrelsColumns:
    """A Parquet qrels file (columns ``query_id, doc_id, relevance``; ``subtopic`` when asked for)."""
    names = {"query_id": query_id, "doc_id": doc_id, "relevance": relevance}
    if with_subtopics:
        names["subtopic"] = subtopic
    columns, _ = _parquet_columns(path, names, "qrels")
    _refuse_empty(columns, names, "judgments", os.fspath(path), TrecFormatError)
    return _qrels(columns, os.fspath(path))


def read_parquet_run(
    path: str | os.PathLike[str], *, with_ranks: bool = False, query_id: str = "query_id", doc_id: str = "doc_id",
    score: str = "score", rank: str = "rank",
) -> RunColumns:
    """A Parquet run file (columns ``query_id, doc_id, score``; ``rank`` when asked for).

    The run id is the last row's ``run_id`` column if the file has one (as trec_eval takes the last
    line's), else the file's name without its suffix.
    """
    names = {"query_id": query_id, "doc_id": doc_id, "score": score}
    if with_ranks:
        names["rank"] = rank
    name = os.fspath(path)
    columns, last_run_id = _parquet_columns(path, names, "run", last_of="run_id")
    _refuse_empty(columns, names, "results", name, TrecFormatError)
    run_id = str(last_run_id) if last_run_id is not None else os.path.splitext(os.path.basename(name))[0]
    return _run(columns, name, run_id)
