"""Preference judgments as text: trec_eval's ``-R prefs`` and ``-R qrels_prefs`` files.

A prefs file has lines ``qid jg jsg docno rel_level``: within one judgment subgroup (jsg) of one
judgment group (jg), a document with a higher rel_level is preferred to one with a lower rel_level.
``qrels_prefs`` reads an ordinary qrels file (``qid iter docno rel``) the same way, its second field
being the judgment group and every line in one subgroup, as trec_eval does.

The fields are cut with whole-array byte operations (``bytes.split`` and one pass of NumPy over the
bytes to count each line's fields), so a file of a million lines is read in a fraction of a second.
Lines starting with ``#`` are comments and blank lines are skipped; every other line must have
exactly the expected fields, a rel_level that is a finite number >= 0, and appear once: the same
(qid, jg, jsg, docno) twice is an error naming both lines.

Examples
--------
>>> import io
>>> prefs = read_prefs_columns(io.BytesIO(b"q1 u1 s1 d1 2\\nq1 u1 s1 d2 0\\n"))
>>> prefs.doc_ids.tolist(), prefs.levels.tolist()
([b'd1', b'd2'], [2.0, 0.0])
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..model import (
    InputFormatError,
    InputTypeError,
    IntArray,
    PrefsColumns,
    QrelsColumns,
    TrecFormatError,
    _display,
    check_id,
    id_problem,
)
from ._source import _FRONT, Source, _blocks, _snippet, _source_name, _Unreadable

#: What each format's lines hold, as the messages say it.
LAYOUTS = {"prefs": "'query_id group subgroup doc_id rel_level'", "qrels_prefs": "'query_id group doc_id rel_level'"}

# A number as C's strtod reads it, without what Python adds (underscores) or what no judgment means
# (nan, inf): digits with an optional point and exponent.
_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 32]] = True  # C's isspace: what bytes.split() splits on too


def read_prefs_columns(source: Source, *, rel_format: str = "prefs") -> PrefsColumns:
    """Read a ``prefs`` file (``rel_format="prefs"``) or a qrels file as preferences (``"qrels_prefs"``).

    Raises
    ------
    TrecFormatError
        A line with the wrong number of fields, a rel_level that is not a number >= 0, the same
        document twice in one subgroup, or a file without any preference line (``path:line`` first).
    """
    if rel_format not in LAYOUTS:
        raise ValueError(f"rel_format must be one of {', '.join(LAYOUTS)}; got {rel_format!r}")
    name, data = _read_all(source)
    width = 5 if rel_format == "prefs" else 4
    layout = LAYOUTS[rel_format]
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)  # every line ends in a newline (_read_all adds a last one)
    starts = np.concatenate(([0], ends[:-1] + 1)).astype(np.int64)
    space = _SPACE[raw]
    token_start = np.flatnonzero(~space & np.concatenate(([True], space[:-1])))
    token_line = np.searchsorted(ends, token_start)
    fields = np.bincount(token_line, minlength=len(ends))
    comment = np.zeros(len(ends), dtype=bool)
    comment[starts < len(raw)] = raw[starts[starts < len(raw)]] == ord("#")
    bad = np.flatnonzero((fields != width) & (fields != 0) & ~comment)
    if len(bad):
        line = int(bad[0])
        found = int(fields[line])
        raise TrecFormatError(f"{name}:{line + 1}: {found} field{'s' if found != 1 else ''}; expected {width} fields "
                              f"{layout}; got {_snippet(data[starts[line]:ends[line]])}")
    tokens = data.split()
    data_line = ~comment & (fields == width)
    if comment.any():  # a comment's words are not fields
        keep = data_line[token_line]
        tokens = [token for token, kept in zip(tokens, keep.tolist()) if kept]
    numbers = np.flatnonzero(data_line).astype(np.int64) + 1
    if not len(numbers):
        raise TrecFormatError(f"{name}: no preferences found; expected lines {layout}; got no data lines")
    columns = [np.array(tokens[i::width], dtype=bytes) for i in range(width)]
    levels = _levels(columns[-1], numbers, name, layout, data, starts, ends)
    if width == 5:
        query_ids, groups, subgroups, doc_ids = columns[:4]
    else:  # qrels: the iteration field is the judgment group, and each group has one subgroup
        query_ids, groups, doc_ids = columns[:3]
        subgroups = np.full(len(doc_ids), b"0", dtype="S1")
    _check_repeats(query_ids, groups, subgroups, doc_ids, numbers, name)
    return PrefsColumns(query_ids, groups, subgroups, doc_ids, levels, numbers, origin=name)


def _read_all(source: Source) -> tuple[str, bytes]:
    """The whole source as bytes ending in a newline, and its name for messages."""
    parts: list[bytes] = []
    lines = 0
    name = _source_name(source)
    try:
        for block in _blocks(source, 1 << 26):
            name = block.name
            part = bytes(block.padded[_FRONT : block.end])
            lines += part.count(b"\n")
            parts.append(part)
    except _Unreadable as unreadable:
        raise unreadable.error(lines) from None
    if b"\0" in (data := b"".join(parts)):
        at = data.index(b"\0")
        line = data.count(b"\n", 0, at)
        start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
        raise TrecFormatError(f"{name}:{line + 1}: NUL byte in the line; expected text; got {_snippet(data[start:end])}")
    return name, data


def _levels(column: np.ndarray, numbers: IntArray, name: str, layout: str, data: bytes, starts: IntArray,
            ends: IntArray) -> np.ndarray:
    """The rel_levels as floats; each distinct spelling is checked once (a file has few of them)."""
    spellings, inverse = np.unique(column, return_inverse=True)
    values = np.empty(len(spellings))
    for index, spelling in enumerate(spellings.tolist()):
        value = float(spelling) if _NUMBER.fullmatch(spelling) else None
        if value is None or not np.isfinite(value) or value < 0:
            row = int(np.flatnonzero(inverse == index)[0])
            line = int(numbers[row])
            problem = "rel_level must be a number" if value is None or not np.isfinite(value) else \
                "rel_level must be >= 0 (0 is non-relevant)"
            raise TrecFormatError(f"{name}:{line}: {problem}; expected {layout}; got "
                                  f"{_snippet(data[starts[line - 1]:ends[line - 1]])}")
        values[index] = value
    return values[inverse.reshape(-1)]


def _check_repeats(query_ids: np.ndarray, groups: np.ndarray, subgroups: np.ndarray, doc_ids: np.ndarray,
                   numbers: IntArray, name: str) -> None:
    """Refuse a document listed twice in one subgroup: trec_eval would count its preferences twice."""
    order = np.lexsort((numbers, doc_ids, subgroups, groups, query_ids))
    same = np.ones(max(len(order) - 1, 0), dtype=bool)
    for column in (query_ids, groups, subgroups, doc_ids):
        ordered = column[order]
        same &= ordered[1:] == ordered[:-1]
    if same.any():
        second = int(order[1:][same][np.argmin(numbers[order[1:][same]])])
        first = int(order[:-1][same][np.argmin(numbers[order[1:][same]])])
        raise TrecFormatError(
            f"{name}:{numbers[second]}: query {_display(query_ids[second])!r}, group {_display(groups[second])!r}, "
            f"subgroup {_display(subgroups[second])!r}, document {_display(doc_ids[second])!r} again (first at line "
            f"{numbers[first]}); expected each document at most once per subgroup")


def prefs_as_qrels(prefs: PrefsColumns) -> QrelsColumns:
    """Preference judgments as the judgments of a batch: each judged (query, document) once, relevant
    (1) when some line gives it a rel_level > 0, else 0, with the preferences themselves attached.

    The rows give the batch its query set and tell judged from unjudged documents; the preference
    measures read the attached preferences.
    """
    order = np.lexsort((prefs.lines, prefs.doc_ids, prefs.query_ids))
    query_ids, doc_ids = prefs.query_ids[order], prefs.doc_ids[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (query_ids[1:] != query_ids[:-1]) | (doc_ids[1:] != doc_ids[:-1])
    pair = np.cumsum(first) - 1
    relevant = np.bincount(pair, weights=prefs.levels[order] > 0) > 0
    lines = prefs.lines[order][first]
    by_line = np.argsort(lines, kind="stable")  # in file order, as a qrels reader gives them
    return QrelsColumns(query_ids[first][by_line], doc_ids[first][by_line], relevant.astype(np.int64)[by_line],
                        lines[by_line], origin=prefs.origin, unit=prefs.unit, preferences=prefs)


def prefs_columns_from_dict(prefs: Mapping[str, Mapping[str, Mapping[str, Mapping[str, object]]]]) -> PrefsColumns:
    """Preference judgments given as ``{query_id: {group: {subgroup: {doc_id: rel_level}}}}``.

    Entries are numbered 1.. in the dicts' order, for the messages. A rel_level is an int or float,
    finite and >= 0 (a bool is not a level).

    Examples
    --------
    >>> prefs_columns_from_dict({"q1": {"alice": {"s1": {"d1": 2, "d2": 0}}}}).levels.tolist()
    [2.0, 0.0]
    """
    rows: list[tuple[str, str, str, str, float]] = []
    for query_id, groups in _items(prefs, "preferences", "{group: {subgroup: {doc_id: rel_level}}}"):
        for group, subgroups in _items(groups, f"query {query_id!r}", "{subgroup: {doc_id: rel_level}}"):
            for subgroup, levels in _items(subgroups, f"group {group!r}", "{doc_id: rel_level}"):
                for doc_id, level in _items(levels, f"subgroup {subgroup!r}", "a number"):
                    where = f"preferences dict, entry {len(rows) + 1}"
                    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)):
                        raise InputTypeError(f"{where}: rel_level of {doc_id!r} must be a number; got {level!r}")
                    if not np.isfinite(level) or level < 0:
                        raise InputFormatError(f"{where}: rel_level of {doc_id!r} must be a finite number >= 0 "
                                               f"(0 is non-relevant); got {level!r}")
                    rows.append((query_id, group, subgroup, doc_id, float(level)))
    if not rows:
        raise InputFormatError("preferences dict: no preferences found; expected "
                               "{query_id: {group: {subgroup: {doc_id: rel_level}}}}")
    query_ids, groups, subgroups, doc_ids = (np.array([row[i] for row in rows], dtype=str) for i in range(4))
    return PrefsColumns(query_ids, groups, subgroups, doc_ids, np.array([row[4] for row in rows]),
                        np.arange(1, len(rows) + 1), origin="preferences dict", unit="entry")


def _items(mapping: object, what: str, expected: str) -> list[tuple[str, Any]]:
    """The items of a dict level, its keys checked as ids."""
    if not isinstance(mapping, Mapping):
        raise InputTypeError(f"{what} must map to {expected}; got {type(mapping).__name__}")
    for key in mapping:
        check_id(key, "preferences id")
    return list(mapping.items())


#: The columns of a Parquet preferences table.
PARQUET_COLUMNS = ("query_id", "group", "subgroup", "doc_id", "level")


def read_parquet_prefs(path: str | os.PathLike[str]) -> PrefsColumns:
    """Preference judgments from a Parquet file with the columns ``query_id, group, subgroup, doc_id,
    level`` (ids as strings, levels as numbers >= 0); rows are numbered 1.. for the messages."""
    from .frames import pyarrow

    pyarrow("reading Parquet preferences")
    import pyarrow.parquet as pq

    name = os.fspath(path)
    try:
        table = pq.read_table(name)
    except (OSError, ValueError) as exc:
        raise TrecFormatError(f"{name}: cannot read as Parquet: {exc}") from None
    missing = [column for column in PARQUET_COLUMNS if column not in table.column_names]
    if missing:
        raise TrecFormatError(f"{name}: no column {', '.join(missing)}; expected the columns "
                              f"{', '.join(PARQUET_COLUMNS)}; got {', '.join(table.column_names)}")
    values = {column: table.column(column).to_pylist() for column in PARQUET_COLUMNS}
    if not values["query_id"]:
        raise TrecFormatError(f"{name}: no preferences found; expected rows with {', '.join(PARQUET_COLUMNS)}")
    for column in PARQUET_COLUMNS[:4]:
        for row, value in enumerate(values[column], 1):
            if not isinstance(value, str) or id_problem(value) is not None:
                raise TrecFormatError(f"{name}, row {row}: {column} must be a non-empty string without "
                                      f"whitespace; got {value!r}")
    levels = values["level"]
    for row, level in enumerate(levels, 1):
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not np.isfinite(level) or level < 0:
            raise TrecFormatError(f"{name}, row {row}: level must be a finite number >= 0 (0 is non-relevant); "
                                  f"got {level!r}")
    query_ids, groups, subgroups, doc_ids = (_utf8(values[column]) for column in PARQUET_COLUMNS[:4])
    prefs = PrefsColumns(query_ids, groups, subgroups, doc_ids, np.array(levels, dtype=np.float64),
                         np.arange(1, len(levels) + 1), origin=name, unit="row")
    _check_repeats(query_ids, groups, subgroups, doc_ids, prefs.lines, name)
    return prefs


def _utf8(values: list[Any]) -> np.ndarray:
    """Ids as the text readers give them: UTF-8 bytes."""
    return np.array([value.encode("utf-8", "surrogateescape") for value in values], dtype=bytes)
