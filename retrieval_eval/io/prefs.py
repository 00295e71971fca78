"""Preference judgments as text: trec_eval's ``-R prefs`` and ``-R qrels_prefs`` files.

A prefs file has lines ``qid jg jsg docno rel_level``: within one judgment subgroup (jsg) of one
judgment group (jg), a document with a higher rel_level is preferred to one with a lower rel_level.
``qrels_prefs`` reads an ordinary qrels file (``qid iter docno rel``) the same way, its second field
being the judgment group and every line in one subgroup, as trec_eval does.

The lines are cut into fields by the same block parser as TREC qrels and runs (whole-array byte
operations, blocks parsed on threads for large files), so a file of a million lines takes a fraction
of a second.
Lines starting with ``#`` are comments and blank lines are skipped; every other line must have
exactly the expected fields and a rel_level that is a finite number >= 0. (The same document twice
in one subgroup is refused when the preferences join a batch: ``engine.preferences``.)

Examples
--------
>>> import io
>>> prefs = read_prefs_columns(io.BytesIO(b"q1 u1 s1 d1 2\\nq1 u1 s1 d2 0\\n"))
>>> prefs.doc_ids.tolist(), prefs.levels.tolist()
([b'd1', b'd2'], [2.0, 0.0])
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from ..model import (
    InputFormatError,
    InputTypeError,
    PrefsColumns,
    QrelsColumns,
    TrecFormatError,
    check_id,
    id_problem,
)
from ._parse import _check_field_count, _Columns, _floats, _Parsed, _parsed_blocks
from ._source import Source, _Block, _source_name
from ._tokens import _tokenize
from .trec import _frozen

#: What each format's lines hold, as the messages say it.
LAYOUTS = {"prefs": "'query_id group subgroup doc_id rel_level'", "qrels_prefs": "'query_id group doc_id rel_level'"}



def read_prefs_columns(source: Source, *, rel_format: str = "prefs") -> PrefsColumns:
    """Read a ``prefs`` file (``rel_format="prefs"``) or a qrels file as preferences (``"qrels_prefs"``).

    Raises
    ------
    TrecFormatError
        A line with the wrong number of fields, a rel_level that is not a number >= 0, or a file
        without any preference line (``path:line`` first).
    """
    if rel_format not in LAYOUTS:
        raise ValueError(f"rel_format must be one of {', '.join(LAYOUTS)}; got {rel_format!r}")
    width = 5 if rel_format == "prefs" else 4
    columns = _Columns(source)
    for tokens, part in _parsed_blocks(source, partial(_parse_prefs_block, width=width, layout=LAYOUTS[rel_format])):
        columns.add(tokens, part)
    name = _source_name(source)
    if not columns.rows:
        raise TrecFormatError(f"{name}: no preferences found; expected lines {LAYOUTS[rel_format]}; got no data lines")
    doc_ids = columns.pop("doc_ids")
    subgroups = columns.pop("subgroups") if width == 5 else np.full(len(doc_ids), b"0", dtype="S1")
    # qrels_prefs: the iteration field is the judgment group, and each group has one subgroup ("0")
    # Read-only columns, as the qrels reader's: the preferences made from them are prepared once and
    # shared (engine.judgments.prepared_qrels), also by the command line's preparing thread.
    return PrefsColumns(_frozen(columns.pop("query_ids")), _frozen(columns.pop("groups")), _frozen(subgroups),
                        _frozen(doc_ids), _frozen(columns.pop("levels")), _frozen(columns.pop("lines").astype(np.int64)),
                        origin=name)


def _parse_prefs_block(block: _Block, width: int, layout: str) -> _Parsed:
    tokens = _tokenize(block)
    _check_field_count(tokens, tokens.n_tokens != width, f"{width} fields {layout}")
    levels, _ = _floats(tokens, width - 1, "rel_level must be a number", layout)
    if not bool(np.isfinite(levels).all()):  # nan, inf, or beyond the double range
        raise tokens.fail(int(np.argmax(~np.isfinite(levels))), "rel_level must be a number", layout)
    if bool((levels < 0).any()):
        raise tokens.fail(int(np.argmax(levels < 0)), "rel_level must be >= 0 (0 is non-relevant)", layout)
    part = {"query_ids": tokens.ids(0), "groups": tokens.ids(1), "doc_ids": tokens.ids(width - 2), "levels": levels}
    if width == 5:
        part["subgroups"] = tokens.ids(2)
    return tokens, part


def prefs_as_qrels(prefs: PrefsColumns) -> QrelsColumns:
    """Preference judgments as the judgments of a batch: a row per line, relevant (1) when its
    rel_level is > 0, with the preferences themselves attached. The batch keeps each judged (query,
    document) once (see ``engine.judgments``): the rows give it its query set and tell judged from
    unjudged documents, and the preference measures read the attached preferences.
    """
    relevant = (prefs.levels > 0).astype(np.int64)
    relevant.flags.writeable = False  # (made from the levels: whether they may change is the preferences' to say)
    return QrelsColumns(prefs.query_ids, prefs.doc_ids, relevant, prefs.lines, origin=prefs.origin, unit=prefs.unit,
                        preferences=prefs)


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
    return prefs


def _utf8(values: list[Any]) -> np.ndarray:
    """Ids as the text readers give them: UTF-8 bytes."""
    return np.array([value.encode("utf-8", "surrogateescape") for value in values], dtype=bytes)
