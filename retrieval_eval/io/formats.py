"""Choosing the reader for an input: a TREC text file or a Parquet table, for qrels, runs and logs.

A path named ``*.parquet``, or whose file starts and ends with Parquet's magic bytes ``PAR1`` (see
:func:`is_parquet`), is read as a table with named columns (:mod:`.frames`, :func:`.logs.read_parquet_log`; pyarrow is the
``parquet`` extra). Anything else (another path, an open file, standard input) is read as text
(:mod:`.trec`, :func:`.logs.read_text_log_columns`). The readers never ask which format they were
given: callers read through the functions here, which ask once and call the one reader.
"""

from __future__ import annotations

import os
from typing import cast

from ..model import QrelsColumns, RunColumns
from ._source import Source, file_looks_like_parquet
from .frames import read_parquet_qrels, read_parquet_run
from .logs import Delimiter, read_parquet_log, read_text_log_columns
from .trec import read_text_qrels_columns, read_text_run_columns

__all__ = ["PARQUET_MAGIC", "is_parquet", "read_log_columns", "read_qrels_columns", "read_run_columns"]

#: The first (and last) four bytes of every Parquet file.
PARQUET_MAGIC = b"PAR1"


def is_parquet(source: object) -> bool:
    """True for a path named ``*.parquet``, or whose file starts and ends with Parquet's magic bytes
    ``PAR1`` (a Parquet file has them at both ends, whatever its name), the first followed by a
    binary byte as Parquet's first page header is.

    A TREC or TSV file whose first id starts with ``PAR1`` is text: ``PAR1`` is followed by the rest
    of the id or a blank, and the file does not end with ``PAR1``.

    >>> is_parquet("run.parquet"), is_parquet("missing.run"), is_parquet(open)
    (True, False, False)
    """
    if not isinstance(source, (str, os.PathLike)):
        return False
    path = os.fspath(source)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if path.lower().endswith(".parquet"):
        return True
    # A missing or unreadable file is not Parquet here: the text reader reports it in its own words.
    return file_looks_like_parquet(path)


def read_qrels_columns(source: Source, *, with_subtopics: bool = False) -> QrelsColumns:
    """Read a qrels file into columns: a Parquet table (see :func:`is_parquet`) or a TREC file.

    A TREC file is read by :func:`.trec.read_text_qrels_columns` (ids stay bytes; the second column is
    the subtopic when ``with_subtopics``); a Parquet table by :func:`.frames.read_parquet_qrels`
    (columns ``query_id, doc_id, relevance``, and ``subtopic``).

    Raises
    ------
    TrecFormatError
        On a malformed line (with ``path:line``) or row, or when the file holds no judgment.
    """
    if is_parquet(source):  # columns query_id, doc_id, relevance (and subtopic): see retrieval_eval.io.frames
        return read_parquet_qrels(cast("str | os.PathLike[str]", source), with_subtopics=with_subtopics)
    return read_text_qrels_columns(source, with_subtopics=with_subtopics)


def read_run_columns(source: Source, *, with_ranks: bool = False) -> RunColumns:
    """Read a run file into columns: a Parquet table (see :func:`is_parquet`) or a TREC file.

    A TREC file is read by :func:`.trec.read_text_run_columns` (``run_id`` is that of the last line;
    the rank column is read only ``with_ranks``); a Parquet table by :func:`.frames.read_parquet_run`
    (columns ``query_id, doc_id, score``, and ``rank``).

    Raises
    ------
    TrecFormatError
        On a malformed line (with ``path:line``) or row, or when the file holds no result line.
    """
    if is_parquet(source):  # columns query_id, doc_id, score (and rank): see retrieval_eval.io.frames
        return read_parquet_run(cast("str | os.PathLike[str]", source), with_ranks=with_ranks)
    return read_text_run_columns(source, with_ranks=with_ranks)


def read_log_columns(
    source: Source, *, delimiter: Delimiter = "auto", columns: tuple[str, str, str, str] | None = None,
) -> tuple[QrelsColumns, RunColumns]:
    """Read a labelled log into qrels (``group item label``) and run (``group item score``) columns.

    Parameters
    ----------
    source : path or open file
        A text log (``.tsv``, ``.csv``, any of them ``.gz``; ``-`` style streams too) or a
        Parquet file (``.parquet``, or any name if it starts with ``PAR1``; needs pyarrow).
    delimiter : {"auto", "csv", "tsv", "whitespace"}
        How a text log separates fields; ``auto`` goes by the file name, then by the content.
    columns : 4 names, optional
        Parquet only: the group, item, score and label columns (default: the first four columns).

    Raises
    ------
    TrecFormatError
        A malformed line, with ``path:line``, or a log without rows.
    """
    if isinstance(source, (str, os.PathLike)) and is_parquet(source):
        return read_parquet_log(os.fsdecode(source), columns)
    if columns is not None:
        raise ValueError("'columns' selects Parquet columns; a text log's fields are taken in order")
    return read_text_log_columns(source, delimiter=delimiter)
