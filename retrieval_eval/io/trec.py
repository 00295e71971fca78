"""Strict, streaming readers and writers for TREC qrels and run files.

Formats (whitespace-separated, any run of spaces, tabs or ``\\r``):

* qrels: ``query_id iteration doc_id relevance`` -- exactly 4 fields; relevance an integer
  (negative = pooled but not judged), an integral float (``2.0``) read as that integer, or a float
  grade (``2.5``: :func:`~retrieval_eval.model.grade_column`); or, as
  :mod:`.formats` chooses, ``query_id doc_id relevance`` (3 fields), with BEIR's header line
  ``query-id corpus-id score`` first or without it;
* run: ``query_id Q0 doc_id rank score run_id [anything]`` -- at least 6 fields; score a number;
  anything after run_id is ignored (but a ``\\r`` there is refused and a ``Q0`` warned about: records
  run together), and so is the rank column (ranking is by score, as in
  trec_eval) unless it is asked for with ``read_run_columns(..., with_ranks=True)``.

Blank lines and lines whose first non-blank character is ``#`` are skipped. Every other line must
parse: a malformed one raises :class:`TrecFormatError` with ``path:line``, what was expected and
what was found. Sources can be a path or an open binary or text file; gzip data is decompressed
whatever the name (it is recognised by its first bytes), and bzip2, xz or zstd data is refused.
Parquet files are not read here: :mod:`.formats` picks this reader or the Parquet one for a path, and
its ``read_qrels_columns`` and ``read_run_columns`` are the entry points for either.
"""

from __future__ import annotations

import gzip
import os
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import IO, TYPE_CHECKING, Literal

import numpy as np

from ..engine.memory import release_freed_memory
from ..model import (
    Document,
    InputWarning,
    Judgment,
    QrelsColumns,
    RunColumns,
    TrecFormatError,
    bad_grade,
    check_field,
    grade_column,
    id_bytes,
    id_text,
    to_relevance,
    to_score,
)
from ._forked import Allocate, PartColumns, read_in_parts
from ._parse import _check_field_count, _Columns, _floats, _numbers, _overflow_warning, _Parsed, _parsed_blocks
from ._source import Source, _Block, _is_gzip, _source_name
from ._tokens import _BadLine, _tokenize, _Tokens

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

__all__ = [
    "BEIR_QRELS_HEADER", "QRELS3_FORMAT", "QRELS_FORMAT", "QRELS_LAYOUTS", "RUN_FORMAT", "QrelsLayout", "Source",
    "TrecFormatError", "read_qrels", "read_run", "read_text_qrels_columns", "read_text_run_columns", "write_qrels",
    "write_run",
]

QRELS_FORMAT = "'query_id iteration doc_id relevance'"
RUN_FORMAT = "'query_id Q0 doc_id rank score run_id'"


#: The layouts of a qrels text file (which one a file has is chosen by :mod:`.formats`): TREC's
#: 4 fields, 3 fields without the iteration column, and BEIR's TSV (3 fields after a header line).
QrelsLayout = Literal["trec", "three", "beir"]
QRELS_LAYOUTS: tuple[QrelsLayout, ...] = ("trec", "three", "beir")
QRELS3_FORMAT = "'query_id doc_id relevance'"
#: The first line of BEIR's qrels TSV files (``qrels/test.tsv``), fields separated by tabs.
BEIR_QRELS_HEADER = ("query-id", "corpus-id", "score")
BEIR_QRELS_FORMAT = "'query-id corpus-id score' (BEIR TSV)"

_RELEVANCE_PROBLEM = "relevance must be a finite number within int64's range"  # an integer, or a float grade (2.5)


def _parse_qrels_block(block: _Block, with_subtopics: bool = False, layout: QrelsLayout = "trec") -> _Parsed:
    tokens = _tokenize(block)
    header = False
    if layout == "beir" and len(tokens.line_index) and tokens.n_tokens[0] == 3 and all(
            tokens.field(0, i) == name.encode() for i, name in enumerate(BEIR_QRELS_HEADER)):
        # The header: made a comment, as a log's header is (see .logs); kept only on the file's first line.
        block.padded[int(tokens.before[tokens.first_token[0]]) + 1] = ord("#")
        tokens, header = _tokenize(block), True
    if layout == "trec":
        expected, fields, doc_field = QRELS_FORMAT, 4, 2
    else:
        expected, fields, doc_field = (QRELS3_FORMAT if layout == "three" else BEIR_QRELS_FORMAT), 3, 1
    # A 3-column file was chosen by its first data line (.formats.qrels_layout): say so, as a 4-field
    # line further on may be the file's norm and the first line the broken one.
    because = " (as on the file's first data line)" if layout == "three" else ""
    _check_field_count(tokens, tokens.n_tokens != fields, f"{fields} fields {expected}{because}")
    relevance = _single_digits(tokens, fields - 1)
    if relevance is None:
        relevance = _relevance(tokens, fields - 1, expected)
    columns = {"query_ids": tokens.ids(0), "doc_ids": tokens.ids(doc_field), "relevance": relevance}
    if with_subtopics:
        columns["subtopics"] = tokens.ids(1)
    if header:
        columns["header"] = np.ones(1, dtype=bool)
    return tokens, columns


def _relevance(tokens: _Tokens, field: int, expected: str) -> np.ndarray:
    """Field ``field`` as relevance grades, by :func:`model.to_relevance`'s rule, so that a file and a dict
    accept the same values: integers; or floats, an int64 column when every one is integral (``1.0``,
    as pandas and pytrec_eval write them), a float64 column when one is not (``2.5``, an LLM judge's
    mean; see :func:`model.grade_column`). ``nan``, ``inf`` or a word raise, with ``path:line``."""
    try:
        return _numbers(tokens, field, np.int64, _RELEVANCE_PROBLEM, expected)
    except _BadLine:
        pass  # not all integers: floats
    values = _numbers(tokens, field, np.float64, _RELEVANCE_PROBLEM, expected)
    bad = bad_grade(values)
    if bad is not None:
        raise tokens.fail(bad, _RELEVANCE_PROBLEM, expected)
    return grade_column(values)


def _single_digits(tokens: _Tokens, field: int) -> np.ndarray | None:
    """Field ``field`` as integers when every line has a single digit there (most qrels' relevance:
    one byte to read per line instead of a string to parse); None otherwise."""
    before, ends = tokens.bounds(field)
    start = before + 1
    if len(start) == 0 or not bool(np.all(ends - start == 1)):
        return None
    digit = tokens.buffer[start] - np.uint8(ord("0"))  # wraps below '0', so one test covers both ends
    if not bool(np.all(digit <= 9)):
        return None
    return digit.astype(np.int64)


#: The most digits of a rank that ``read_run`` gives its Document: an int64 holds any 18 digits, and
#: ``int()`` refuses 4,300. A longer one is no rank (None), as a rank that is not a number: the line
#: is read, as the column reader and trec_eval read it, which look at the rank only when asked to.
_RANK_DIGITS = 18


def _parse_run_block(block: _Block, with_ranks: bool = False, rank_texts: bool = False) -> _Parsed:
    tokens = _tokenize(block)
    if tokens.uniform < 6:  # (a block whose lines all hold 6 fields or more needs no look at each count)
        _check_field_count(tokens, tokens.n_tokens < 6, f"at least 6 fields {RUN_FORMAT}")
    scores, overflow = _floats(tokens, 4, "score must be a number", RUN_FORMAT)
    nan = np.isnan(scores)
    if nan.any():
        raise tokens.fail(int(np.argmax(nan)), "score must not be NaN (it would make the ranking order "
                          "undefined)", RUN_FORMAT)
    columns = {"query_ids": tokens.ids(0), "doc_ids": tokens.ids(2), "scores": scores, "overflow": overflow,
               "merged": _merged_records(tokens)}
    if with_ranks:
        columns["ranks"] = _numbers(tokens, 3, np.int64, "rank must be an integer", RUN_FORMAT)
    if rank_texts:  # read_run: the rank column as text, a Document's rank when it is a positive integer
        columns["rank_texts"] = tokens.strings(3)
    return tokens, columns


def _merged_records(tokens: _Tokens) -> npt.NDArray[np.int64]:
    """Rows whose ignored columns (after the run id) look like more records run together.

    A carriage return between two of those columns is refused: the file's lines end in a lone
    ``\\r`` (old Mac endings), so every record but the first of the "line" would be lost. A column
    ``Q0`` there (on a line whose own second field is ``Q0``) is returned, to be warned about: a
    newline was probably lost, but a tool may write anything after the run id.
    """
    if 0 < tokens.uniform <= 6:  # the usual file: every line has 6 fields, nothing is ignored
        return np.zeros(0, dtype=np.int64)
    extra = np.flatnonzero(tokens.n_tokens > 6)
    if not len(extra):  # nothing is ignored
        return extra
    first = tokens.first_token[extra]
    if tokens.contains(b"\r"):  # a \r from the end of the run id to the end of the line's last field
        start, stop = tokens.ends[first + 5], tokens.ends[first + tokens.n_tokens[extra] - 1]
        returns = np.flatnonzero(tokens.buffer[: tokens.block.end] == ord("\r"))
        inside = np.searchsorted(returns, start) < np.searchsorted(returns, stop)
        if inside.any():
            row = int(extra[np.argmax(inside)])  # (not tokens.fail: a file of \r endings has no final newline)
            raise _BadLine(tokens.name, int(tokens.line_index[row]), "a carriage return (\\r) between the columns "
                           "after the run id: the file's lines seem to end in \\r alone, which runs its records "
                           "together; expected one record per line, each line ending in \\n or \\r\\n; got "
                           + tokens.line_text(row))
    if not tokens.contains(b"Q0"):
        return extra[:0]
    # The fields after the run id, of the lines that have some: field 6 onwards of each.
    count = tokens.n_tokens[extra] - 6
    index = np.arange(int(count.sum())) + np.repeat(first + 6 - (np.cumsum(count) - count), count)
    owner = np.repeat(np.arange(len(extra)), count)
    repeated = np.unique(owner[_is_q0(tokens, index)])
    return extra[repeated[_is_q0(tokens, first[repeated] + 1)]]


def _is_q0(tokens: _Tokens, index: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Whether each field ``index`` (of the whole block) is ``Q0``."""
    start = tokens.before[index] + 1
    buffer = tokens.buffer
    is_q0: npt.NDArray[np.bool_] = (tokens.ends[index] - start == 2) & (buffer[start] == ord("Q")) & (
        buffer[start + 1] == ord("0"))
    return is_q0


def _merged_warning(tokens: _Tokens, rows: npt.NDArray[np.int64]) -> str:
    row = int(rows[0])
    more = f" and {len(rows) - 1} more such lines nearby" if len(rows) > 1 else ""
    return (f"{tokens.name}:{tokens.line_number(row)}: the columns after the run id (ignored) hold 'Q0' again: a "
            f"newline may be missing between two records, and only the first is read; expected one record per "
            f"line; got {tokens.line_text(row)}{more}")


def _qrels_blocks(source: Source, with_subtopics: bool = False, layout: QrelsLayout = "trec") -> Iterator[_Parsed]:
    if layout not in QRELS_LAYOUTS:
        raise ValueError(f"'layout' must be one of {list(QRELS_LAYOUTS)}; got {layout!r}")
    if with_subtopics and layout != "trec":
        raise TrecFormatError(f"{_source_name(source)}: subtopics are read from the second field of TREC qrels "
                              f"{QRELS_FORMAT}; a file of 3 fields has none")
    for tokens, columns in _parsed_blocks(source, partial(_parse_qrels_block, with_subtopics=with_subtopics,
                                                          layout=layout)):
        if columns.pop("header", None) is not None and tokens.lines_before > 0:
            raise TrecFormatError(f"{tokens.name}:{tokens.lines_before + 1}: a header line is only allowed on "
                                  f"the first line; expected {BEIR_QRELS_FORMAT}; got "
                                  f"{chr(9).join(BEIR_QRELS_HEADER)}")
        yield tokens, columns


def _run_blocks(source: Source, with_ranks: bool = False, stacklevel: int = 3,
                rank_texts: bool = False, *, threads: int | None = None, strict: bool = False) -> Iterator[_Parsed]:
    """The run's parsed blocks; ``stacklevel`` points the warnings at the code that asked for the
    run (3: the caller of the function iterating over these blocks). ``strict``: raise ValueError
    instead of warning (a part of a file read in a process of its own: :mod:`._forked`, where the
    whole file is then read again as usual, and warns). ``threads``: as :func:`._parse._parsed_blocks`."""
    parse = partial(_parse_run_block, with_ranks=with_ranks, rank_texts=rank_texts)
    for tokens, columns in _parsed_blocks(source, parse, threads):
        overflow, merged = columns.pop("overflow"), columns.pop("merged")
        if strict and (len(overflow) or len(merged)):
            raise ValueError("a line the usual reader warns about")
        if len(overflow):  # warned here, on the caller's thread: warnings are not thread-safe
            warnings.warn(_overflow_warning(tokens, overflow), InputWarning, stacklevel=stacklevel)
        if len(merged):
            warnings.warn(_merged_warning(tokens, merged), InputWarning, stacklevel=stacklevel)
        yield tokens, columns



def read_text_qrels_columns(source: Source, *, with_subtopics: bool = False,
                            layout: QrelsLayout = "trec") -> QrelsColumns:
    """Read a TREC qrels file into columns (ids stay bytes, so ties sort in byte order like trec_eval).

    The second column is ignored, as trec_eval does, unless ``with_subtopics``: it is then kept as the
    subtopic (intent) id of each judgment, which the diversity measures (``alpha_nDCG``, ``ERR_IA``...)
    group by, as ndeval reads TREC Web track qrels.

    ``layout`` is ``"trec"`` (4 fields), ``"three"`` (``query_id doc_id relevance``) or ``"beir"``
    (BEIR's TSV: the same 3 fields after the header line ``query-id corpus-id score``); which one a
    file has is decided by :func:`.formats.qrels_layout`. Relevance is an integer, an integral float
    (``1.0``) read as that integer, or a float grade (``2.5``), as :func:`~retrieval_eval.model.to_relevance`
    rules for dicts.

    Raises
    ------
    TrecFormatError
        On a malformed line (with ``path:line``) or when the file holds no judgment.
    """
    columns = _Columns(source)
    for tokens, part in _qrels_blocks(source, with_subtopics, layout):
        columns.add(tokens, part)
    if not columns.rows:
        raise _nothing_found(source, "judgments", {"trec": QRELS_FORMAT, "three": QRELS3_FORMAT}.get(layout, BEIR_QRELS_FORMAT))
    # Read-only columns: runs evaluated against these qrels share their preparation (ranking.prepared_qrels),
    # which is only safe because the columns cannot change.
    return QrelsColumns(
        query_ids=_frozen(columns.pop("query_ids")),
        doc_ids=_frozen(columns.pop("doc_ids")),
        relevance=_frozen(columns.pop("relevance")),
        lines=_frozen(columns.pop("lines")),
        origin=_source_name(source),
        subtopics=_frozen(columns.pop("subtopics")) if with_subtopics else None,
    )


def _frozen(column: np.ndarray) -> np.ndarray:
    column.flags.writeable = False
    return column


def read_text_run_columns(source: Source, *, with_ranks: bool = False) -> RunColumns:
    """Read a TREC run file into columns; ``run_id`` is that of the last line, as in trec_eval.

    The rank column is ignored (as trec_eval does) unless ``with_ranks``: then it must hold integers.

    Raises
    ------
    TrecFormatError
        On a malformed line (with ``path:line``) or when the file holds no result line.
    """
    if not with_ranks and isinstance(source, (str, bytes, os.PathLike)):
        # (the command line's way: see _forked.enable; a data line holds 6 fields and 6 separators)
        parts = read_in_parts(os.fsdecode(source), _run_part, ("query_ids", "doc_ids", "scores", "lines"), 12)
        if parts is not None:
            arrays, last_id = parts
            return RunColumns(query_ids=arrays["query_ids"], doc_ids=arrays["doc_ids"], scores=arrays["scores"],
                              lines=arrays["lines"], origin=_source_name(source), run_id=id_text(last_id))
    columns = _Columns(source)
    run_id = b""
    # Warnings point at the caller of formats.read_run_columns, the entry point that calls this reader.
    for tokens, part in _run_blocks(source, with_ranks, stacklevel=4):
        run_id = _last_run_id(tokens, run_id)
        columns.add(tokens, part)
    if not columns.rows:
        raise _nothing_found(source, "results", RUN_FORMAT)
    result = RunColumns(
        query_ids=columns.pop("query_ids"),
        doc_ids=columns.pop("doc_ids"),
        scores=columns.pop("scores"),
        lines=columns.pop("lines"),
        origin=_source_name(source),
        run_id=id_text(run_id),  # its exact bytes, as ids (printed as read, like trec_eval)
        ranks=columns.pop("ranks") if with_ranks else None,
    )
    if len(result.doc_ids) > _LARGE_READ:
        release_freed_memory()
    return result


def _last_run_id(tokens: _Tokens, before: bytes) -> bytes:
    """The run id of the block's last data line (trec_eval names a run by its last line's), or
    ``before`` (the id so far) when the block has no data line."""
    return tokens.field(-1, 5) if len(tokens.line_index) else before


def _run_part(part: IO[bytes], size: int, allocate: Allocate | None) -> PartColumns:
    """The columns of one part of a run file (``size`` bytes) read on the calling thread, made by
    ``allocate`` when given, for :func:`._forked.read_in_parts`; raises where the usual reader would
    warn (the part is then read again with the whole file, as usual)."""
    columns = _Columns(part, allocate)
    columns.size_on_disk = size
    last, lines = b"", 0
    for tokens, parsed in _run_blocks(part, threads=1, strict=True):
        last = _last_run_id(tokens, last)
        lines = tokens.lines_before + tokens.n_lines
        columns.add(tokens, parsed)
    return {key: columns.pop(key) for key in list(columns.arrays)}, last, lines


#: Rows above which a run's read hands its freed temporaries back to the OS. A smaller read's few MB
#: are better kept: handed back, the build's next arrays would touch fresh pages again (some 10 ms of a
#: robust04-sized run, reading and building).
_LARGE_READ = 1 << 20


def _nothing_found(source: Source, what: str, expected: str) -> TrecFormatError:
    return TrecFormatError(f"{_source_name(source)}: no {what} found; expected lines {expected}; got no data lines")



def _text(value: bytes) -> str:
    return id_text(value)


def read_qrels(source: Source) -> Iterator[tuple[str, Judgment]]:
    """Stream ``(query_id, Judgment)`` pairs from a qrels file, block by block.

    Examples
    --------
    >>> import io
    >>> list(read_qrels(io.StringIO("301 0 d1 1\\n")))
    [('301', Judgment(doc_id='d1', relevance=1))]
    """
    found = False
    for _, columns in _qrels_blocks(source):
        for qid, doc, rel in zip(columns["query_ids"], columns["doc_ids"], columns["relevance"].tolist()):
            yield _text(qid), Judgment(_text(doc), rel)
            found = True
    if not found:
        raise _nothing_found(source, "judgments", QRELS_FORMAT)


def read_run(source: Source) -> Iterator[tuple[str, Document]]:
    """Stream ``(query_id, Document)`` pairs from a run file, in file order.

    ``Document.rank`` is the file's rank column when it is a positive integer of at most 18 digits,
    else None (the line is read all the same, as ``read_run_columns`` reads it).
    """
    found = False
    for _, columns in _run_blocks(source, rank_texts=True):
        ranks = columns["rank_texts"]
        for qid, doc, rank, score in zip(columns["query_ids"], columns["doc_ids"], ranks, columns["scores"].tolist()):
            rank_value = (int(rank) if len(rank) <= _RANK_DIGITS and rank.isascii() and rank.isdigit()
                          and int(rank) > 0 else None)
            yield _text(qid), Document(_text(doc), rank_value, score)
            found = True
    if not found:
        raise _nothing_found(source, "results", RUN_FORMAT)


def _check_fields(table: Mapping[str, Mapping[str, object]], what: str) -> None:
    """Raise before a file is opened if an id of ``table`` cannot be a TREC field (whitespace, ...)."""
    for qid, docs in table.items():
        check_field(qid, f"{what}: query id")
        for doc in docs:
            check_field(doc, f"{what}: document id of query {qid!r}")


def write_qrels(path: str | os.PathLike[str], qrels: Mapping[str, Mapping[str, float]]) -> None:
    """Write ``{query_id: {doc_id: relevance}}`` as a qrels file (``.gz`` compresses).

    Ids are fields of a whitespace-separated file: an id with whitespace (valid in memory, as in
    ``Document("a b")``) raises :class:`InputFormatError` naming it, before the file is opened.
    Relevance values follow :class:`Judgment`'s rule (NumPy integers and integral floats are written as
    ints, a float grade as Python writes the float: ``2.5``).
    """
    _check_fields(qrels, "write_qrels")
    qrels = {
        qid: {doc: to_relevance(rel, f"write_qrels: relevance of query {qid!r}, document {doc!r}") for doc, rel in docs.items()}
        for qid, docs in qrels.items()
    }
    with _open_write(path) as out:
        for qid, docs in qrels.items():
            for doc, rel in docs.items():
                out.write(f"{qid} 0 {doc} {rel}\n")


def write_run(path: str | os.PathLike[str], run: Mapping[str, Mapping[str, float]], run_id: str = "run") -> None:
    """Write ``{query_id: {doc_id: score}}`` as a run file, each query ranked by score (trec_eval order).

    Ids (and ``run_id``) are fields of a whitespace-separated file: one with whitespace (valid in
    memory, as in ``RetrievalEvaluator("laptop bag", ...)``) raises :class:`InputFormatError` naming
    it, before the file is opened. Scores follow :class:`Document`'s rule (NumPy numbers are written
    as floats; a bool, a str or NaN raises).
    """
    _check_fields(run, "write_run")
    check_field(run_id, "write_run: run_id")
    run = {
        qid: {doc: to_score(score, f"write_run: score of query {qid!r}, document {doc!r}") for doc, score in docs.items()}
        for qid, docs in run.items()
    }
    with _open_write(path) as out:
        for qid, docs in run.items():
            ranked = sorted(docs.items(), key=lambda item: (-item[1], _neg_bytes(item[0])))
            for rank, (doc, score) in enumerate(ranked, start=1):
                out.write(f"{qid} Q0 {doc} {rank} {score!r} {run_id}\n")


def _neg_bytes(doc: str) -> tuple[int, ...]:
    # Sorting ascending on negated bytes gives doc_id descending by bytes (the tie rule), with
    # a longer id ranking above its own prefix, as strcmp orders them.
    return tuple(-b for b in id_bytes(doc)) + (1,)


@contextmanager
def _open_write(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    path = os.fspath(path)
    # surrogateescape: an id read from a file that is not UTF-8 is written back as its exact bytes.
    if _is_gzip(path):
        with gzip.open(path, "wt", encoding="utf-8", errors="surrogateescape") as out:
            yield out
    else:
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as out:
            yield out
