"""Labelled logs: one table of ``group item score label`` rows read as a run plus its judgments.

Search and recommendation logs hold, per impression, the session (or query) it belongs to, the item
shown, the model's score and the observed label (a click, a purchase, a grade). Read as a run
(``group item score``) and qrels (``group item label``), every measure works on them: AUC and GAUC
as well as nDCG@10 or RR.

Text logs: one row per line, 4 fields separated by tabs or spaces (``.tsv`` or any other name) or
by commas (``.csv``, or a file whose lines hold commas and no whitespace); ``.gz`` is decompressed.
The first line may be a header: 4 fields, none a number, the last not a label value such as
``yes``. Ids cannot contain the
separator or whitespace; quoted CSV fields are not supported. Parquet logs (``.parquet``, or any
name for a file that starts with Parquet's magic bytes ``PAR1``) need pyarrow. Errors give
``path:line`` (or ``path, row N`` for Parquet), as for TREC files. Which of the two readers a source
goes to is chosen by :func:`.formats.read_log_columns`.
"""

from __future__ import annotations

import os
import warnings
from typing import Literal

import numpy as np

from ..engine.memory import release_freed_memory
from ..model import InputFormatError, InputWarning, QrelsColumns, RunColumns, TrecFormatError, bad_grade, grade_column
from ._parse import _check_field_count, _Columns, _floats, _numbers, _overflow_warning, _Parsed, _parsed_blocks
from ._source import _FRONT, Source, _Block, _snippet, _source_name
from ._tokens import _BadLine, _tokenize, _Tokens

__all__ = ["LOG_FORMAT", "LOG_ROLES", "Delimiter", "read_parquet_log", "read_text_log_columns"]

LOG_FORMAT = "'group item score label'"

#: How fields are separated: ``auto`` decides by the file name (.csv, .tsv), else by the content.
Delimiter = Literal["auto", "csv", "tsv", "whitespace"]
_DELIMITERS = ("auto", "csv", "tsv", "whitespace")
_COMMAS_AS_SPACES = bytes.maketrans(b",", b" ")


def _delimiter_for(source: Source, delimiter: str) -> str:
    if delimiter not in _DELIMITERS:
        raise ValueError(f"'delimiter' must be one of {list(_DELIMITERS)}; got {delimiter!r}")
    if delimiter == "auto" and isinstance(source, (str, os.PathLike)):
        name = os.fspath(source).lower().removesuffix(".gz")
        if name.endswith(".csv"):
            return "csv"
        if name.endswith(".tsv"):
            return "tsv"
    return delimiter


def _is_number(text: bytes, kind: type) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True


def _empty_field(block: _Block, separator: bytes) -> None:
    """Refuse an empty field (``a,,1``, a trailing tab): the field count alone would misplace the rest."""
    padded, end = block.padded, block.end
    # The offset of a separator that starts or ends an empty field, for each way one can appear.
    found = [padded.find(separator * 2, _FRONT, end), padded.find(separator + b"\n", _FRONT, end)]
    after_newline = padded.find(b"\n" + separator, _FRONT, end)
    found.append(after_newline + 1 if after_newline >= 0 else -1)
    found.append(_FRONT if padded[_FRONT : _FRONT + 1] == separator else -1)
    found = [at for at in found if at >= 0]
    if found:
        at = min(found)
        start = max(padded.rfind(b"\n", _FRONT, at) + 1, _FRONT)
        line = _snippet(padded[start : padded.find(b"\n", at, end)])
        raise _BadLine(block.name, padded.count(b"\n", _FRONT, at),
                       f"empty field; expected 4 fields {LOG_FORMAT}; got {line}")


#: The role of each of a log's 4 fields, in the default order.
LOG_ROLES = ("group", "item", "score", "label")


def _parse_log_block(block: _Block, delimiter: str, order: tuple[int, int, int, int] | None = None,
                     names: tuple[str, str, str, str] | None = None) -> _Parsed:
    """One block of a text log; ``order`` gives the field of each role (group, item, score, label),
    ``names`` the column names that give it from the header (see :class:`_LogParser`)."""
    padded, end = block.padded, block.end
    if delimiter == "auto":  # a block of commas without whitespace is CSV (a file is consistent)
        has_space = padded.find(b" ", _FRONT, end) >= 0 or padded.find(b"\t", _FRONT, end) >= 0
        delimiter = "csv" if padded.find(b",", _FRONT, end) >= 0 and not has_space else "whitespace"
    if delimiter in ("csv", "tsv"):
        _empty_field(block, b"," if delimiter == "csv" else b"\t")
    if delimiter == "csv":
        block = _Block(block.name, padded.translate(_COMMAS_AS_SPACES), end, block.unterminated, shown=padded)
    header = _header(block)
    if header is not None and names is not None and (names is not _DEFAULT_NAMES or set(names) <= set(header[1])):
        order = _order_of(header, names, block.name)
    group, item, score, label = order or (0, 1, 2, 3)
    tokens = _tokenize(block)
    _check_field_count(tokens, tokens.n_tokens != 4, f"4 fields {LOG_FORMAT}")
    scores, overflow = _floats(tokens, score, "score must be a number", LOG_FORMAT)
    nan = np.isnan(scores)
    if nan.any():
        raise tokens.fail(int(np.argmax(nan)), "score must not be NaN", LOG_FORMAT)
    labels = _labels(tokens, label)
    # Ids as the TREC reader keeps them: a few very long ones do not widen every row to their size.
    columns = {"groups": tokens.ids(group), "items": tokens.ids(item), "scores": scores, "labels": labels,
               "overflow": overflow}
    if header is not None:
        columns["header"] = np.array([header[0]], dtype=object)
        columns["order"] = np.array(order or (0, 1, 2, 3), dtype=np.int64)
    return tokens, columns


#: Label spellings read as integers besides integers themselves (case-insensitive).
_LABEL_BOOLEANS = {b"true": 1, b"false": 0}
_LABEL_PROBLEM = "label must be a finite number or true/false"  # an integer, a float grade (0.5), true/false


def _labels(tokens: _Tokens, field: int) -> np.ndarray:
    """The label field as grades, by the qrels' rule (:func:`~retrieval_eval.model.grade_column`): integers,
    integral floats (``1.0``) read as integers, float grades (``0.5``: then the column is float64), and
    ``true``/``false`` (as pandas writes booleans: ``True``/``False``), read as 1 and 0. Anything else
    (a word, NaN, an infinity) raises with ``path:line``."""
    try:
        return _numbers(tokens, field, np.int64, _LABEL_PROBLEM, LOG_FORMAT)
    except _BadLine:
        pass
    text = np.char.lower(tokens.strings(field))
    labels = np.zeros(len(text), dtype=np.float64)
    words = np.zeros(len(text), dtype=bool)
    for word, value in _LABEL_BOOLEANS.items():
        match = text == word
        labels[match], words = value, words | match
    others = np.flatnonzero(~words)
    if len(others):
        values = _numbers(tokens, field, np.float64, _LABEL_PROBLEM, LOG_FORMAT, others)
        bad = bad_grade(values)
        if bad is not None:
            raise tokens.fail(int(others[bad]), _LABEL_PROBLEM, LOG_FORMAT)
        labels[others] = values
    return grade_column(labels)


def _order_of(header: tuple[str, list[str]], names: tuple[str, str, str, str], where: str) -> tuple[int, int, int, int]:
    """The field of each of ``names`` in the header's fields, or an error naming the missing one."""
    fields = header[1]
    missing = [name for name in names if name not in fields]
    if missing:
        raise TrecFormatError(f"{where}:1: the header has no column {missing[0]!r}; expected the columns "
                              f"{', '.join(names)} (group, item, score, label); got {header[0]}")
    group, item, score, label = (fields.index(name) for name in names)
    return group, item, score, label


class _LogParser:
    """Parses a text log's blocks with the column order its header gives.

    The order is read from the first block's header, when ``names`` (the group, item, score and
    label columns) are given, or when the header names exactly ``group item score label`` in another
    order. The first block is always parsed on the calling thread before any other
    (:func:`._parse._parsed_blocks` starts its pool later), so the later blocks see the order set.
    """

    def __init__(self, delimiter: str, names: tuple[str, str, str, str] | None) -> None:
        self.delimiter, self.names = delimiter, names
        self.order: tuple[int, int, int, int] | None = None
        self.first = True

    def __call__(self, block: _Block) -> _Parsed:
        if self.first:
            self.first = False
            tokens, columns = _parse_log_block(block, self.delimiter, None, self.names or _DEFAULT_NAMES)
            if self.names is not None and "header" not in columns:
                raise TrecFormatError(f"{block.name}:1: columns {', '.join(self.names)} are named, but the log "
                                      f"has no header line naming its columns; expected a first line such as "
                                      f"'{' '.join(LOG_ROLES)}'")
            if "order" in columns:
                order = columns["order"].tolist()
                self.order = (order[0], order[1], order[2], order[3])
            return tokens, columns
        return _parse_log_block(block, self.delimiter, self.order)


#: A header naming the four roles themselves is read by name, whatever their order.
_DEFAULT_NAMES = LOG_ROLES


#: Values of a label column that are no column name: a first line holding one is data, not a header.
_LABEL_WORDS = frozenset({b"yes", b"no", b"true", b"false"})


def _header(block: _Block) -> tuple[str, list[str]] | None:
    """The block's first line when it reads as a header (as shown, and its fields): it is turned into
    a comment here, and kept only if it is the file's first line (checked by the caller).

    A header has 4 fields, none of them a number, and no label value (``yes``, ``true``, ...) in the
    label's place: a first line ``s1,i1,abc,yes`` is a row with a bad score, refused as such, not
    a header dropped without a word.
    """
    padded = block.padded
    newline = padded.find(b"\n", _FRONT, block.end)
    fields = bytes(padded[_FRONT:newline]).split()
    if (len(fields) != 4 or fields[0].startswith(b"#") or any(_is_number(field, float) for field in fields)
            or fields[3].lower() in _LABEL_WORDS):
        return None
    shown = _snippet((padded if block.shown is None else block.shown)[_FRONT:newline])
    padded[_FRONT : _FRONT + 1] = b"#"
    return shown, [field.decode("utf-8", "replace") for field in fields]


def read_text_log_columns(source: Source, *, delimiter: Delimiter = "auto",
                          columns: tuple[str, str, str, str] | None = None) -> tuple[QrelsColumns, RunColumns]:
    """Read a text log into qrels (``group item label``) and run (``group item score``) columns.

    Parameters
    ----------
    source : path or open file
        A text log (``.tsv``, ``.csv``, any of them ``.gz``; ``-`` style streams too).
    delimiter : {"auto", "csv", "tsv", "whitespace"}
        How the log separates fields; ``auto`` goes by the file name, then by the content.
    columns : 4 names, optional
        The header's names of the group, item, score and label columns, in that order. Without
        them, a header naming exactly ``group``, ``item``, ``score`` and ``label`` is read by name
        (in any order); any other log is read in the order ``group item score label``.

    Raises
    ------
    TrecFormatError
        A malformed line, with ``path:line``, or a log without rows.
    """
    how = _delimiter_for(source, delimiter)
    names = _check_names(columns)
    parts = _Columns(source)
    for tokens, part in _parsed_blocks(source, _LogParser(how, names)):
        part.pop("order", None)
        header = part.pop("header", None)
        if header is not None and tokens.lines_before > 0:
            raise TrecFormatError(f"{tokens.name}:{tokens.lines_before + 1}: score must be a number; expected "
                                  f"{LOG_FORMAT}; got {header[0]}")
        overflow = part.pop("overflow")
        if len(overflow):  # warned here, on the caller's thread, as the TREC reader does
            warnings.warn(_overflow_warning(tokens, overflow), InputWarning, stacklevel=2)
        parts.add(tokens, part)
    if not parts.rows:
        raise TrecFormatError(f"{_source_name(source)}: no rows found; expected lines {LOG_FORMAT}; got no data lines")
    return _split(parts.pop("groups"), parts.pop("items"), parts.pop("scores"), parts.pop("labels"),
                  parts.pop("lines"), _source_name(source), "line")


def _split(groups: np.ndarray, items: np.ndarray, scores: np.ndarray, labels: np.ndarray, lines: np.ndarray,
           origin: str, unit: str) -> tuple[QrelsColumns, RunColumns]:
    qrels = QrelsColumns(groups, items, labels, lines, origin=origin, unit=unit)
    run = RunColumns(groups, items, scores, lines, origin=origin, run_id="log", unit=unit)
    release_freed_memory()
    return qrels, run


def _check_names(columns: object) -> tuple[str, str, str, str] | None:
    """``columns`` as 4 column names (group, item, score, label), or None; anything else raises ValueError."""
    if columns is None:
        return None
    if isinstance(columns, str):
        columns = tuple(columns.split(","))
    names = tuple(columns) if isinstance(columns, (tuple, list)) else ()
    if len(names) != 4 or not all(isinstance(name, str) and name for name in names) or len(set(names)) != 4:
        raise InputFormatError(f"'columns' must be 4 distinct column names: group, item, score, label; got {columns!r}")
    return (names[0], names[1], names[2], names[3])


def read_parquet_log(path: str, names: tuple[str, str, str, str] | None) -> tuple[QrelsColumns, RunColumns]:
    """Read a Parquet log: the four ``names`` as group, item, score and label; without them, the
    columns named ``group``, ``item``, ``score`` and ``label`` when the table has all four, else
    its first four columns in that order."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputFormatError(f"{path}: reading Parquet needs pyarrow: pip install 'retrieval-evaluator[parquet]'") from None
    from pyarrow import types as pa_types

    from .frames import TableSource, id_column, number_column

    names = _check_names(names)
    if names is None:
        try:
            present = pq.read_schema(path).names
        except (OSError, ValueError, KeyError):  # reported by read_table below, in its words
            present = []
        if set(LOG_ROLES) <= set(present):
            names = LOG_ROLES
    try:
        table = pq.read_table(path, columns=list(names) if names else None)
    except (OSError, ValueError, KeyError) as exc:  # pyarrow's errors subclass these
        raise TrecFormatError(f"{path}: cannot read as Parquet: {exc}") from None
    if table.num_columns < 4:
        raise TrecFormatError(f"{path}: expected 4 columns {LOG_FORMAT}; got {table.column_names}")
    source = TableSource(path, False, (), expected=LOG_FORMAT)
    name = table.column_names
    group, item, score, label = (table.column(i).combine_chunks() for i in range(4))
    groups = id_column(group, "group", name[0], source)
    items = id_column(item, "item", name[1], source)
    scores = number_column(score, "score", name[2], source, integral=False)
    if pa_types.is_boolean(label.type):  # True/False labels: 1 and 0, as in a text log
        label = label.cast("int8")
    labels = number_column(label, "label", name[3], source, integral=True, grades=True)
    if not len(scores):
        raise TrecFormatError(f"{path}: no rows found; expected {LOG_FORMAT}")
    return _split(groups, items, scores, labels, np.arange(1, len(scores) + 1, dtype=np.int64), path, "row")
