"""Choosing the reader for an input: a TREC text file, a Parquet table or a JSON file, for qrels, runs and logs.

The rules, checked in this order (each is documented in docs/api.md, "Input formats"):

* A path named ``*.parquet``, or whose file starts and ends with
  Parquet's magic bytes ``PAR1`` (see :func:`is_parquet`), is read as a
  table with named columns (:mod:`.frames`, :func:`.logs.read_parquet_log`; pyarrow is the
  ``parquet`` extra).
* A path named ``*.json`` (or ``*.json.gz``) is a JSON object ``{query_id: {doc_id: value}}``:
  BEIR's and MTEB's results files for a run, pytrec_eval's qrels dicts for qrels (:mod:`.results_json`).
* Qrels text (:func:`qrels_layout`): a path whose first data line is the header
  ``query-id corpus-id score`` is BEIR's TSV; one whose first data line has 3 fields is
  ``query_id doc_id relevance``; anything else (and any stream or pipe) is TREC's 4 fields. Every further
  line must have the same layout, or it is refused with ``path:line``: nothing is guessed per line.
* Anything else (another path, an open file, standard input) is read as TREC text
  (:mod:`.trec`, :func:`.logs.read_text_log_columns`).

The readers never ask which format they were given: callers read through the functions here,
which ask once and call the one reader.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, cast

from attrs import evolve

from ..model import InputFormatError, QrelsColumns, RunColumns, TrecFormatError
from ._parse import first_line
from ._source import Source, file_looks_like_parquet
from .trec import BEIR_QRELS_HEADER, QrelsLayout, read_text_qrels_columns, read_text_run_columns

if TYPE_CHECKING:
    from .logs import Delimiter

# The Parquet, JSON and log readers are imported by the branches that use them: a TREC evaluation,
# the common case, does not pay for their imports at start-up.

__all__ = [
    "PARQUET_MAGIC", "is_json", "is_parquet", "qrels_layout", "read_log_columns", "read_qrels_columns",
    "read_run_columns",
]

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


def is_json(source: object) -> bool:
    """True for a path named ``*.json`` or ``*.json.gz`` (any case)."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    return os.fsdecode(source).lower().removesuffix(".gz").endswith(".json")


def qrels_layout(source: Source) -> QrelsLayout:
    """Which of the qrels text layouts a source has, from its first data line (see the module's rules).

    ``"beir"`` when that line is BEIR's header ``query-id corpus-id score``; ``"three"`` when it has
    3 fields (``query_id doc_id relevance``); ``"trec"`` otherwise, and for any source that is not a
    regular file (a stream or a pipe cannot be read twice): one of 3 fields is then refused, naming its line.
    """
    if not isinstance(source, (str, os.PathLike)) or not _regular_file(os.fsdecode(source)):
        return "trec"  # a stream, or a pipe such as <(cat qrels): looking would eat what its one reading needs
    fields = first_line(os.fsdecode(source))
    if fields is None:
        return "trec"  # an empty or unreadable file: the TREC reader says what is wrong in its own words
    if tuple(fields) == tuple(name.encode() for name in BEIR_QRELS_HEADER):
        return "beir"
    return "three" if len(fields) == 3 else "trec"


def _regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


#: The relevance formats of trec_eval's -R that are read here: plain qrels, qrels whose second
#: column names the judgment group (assessor) of each judgment, and preference judgments.
REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


def read_qrels_columns(source: Source, *, with_subtopics: bool = False, rel_format: str = "qrels") -> QrelsColumns:
    """Read a qrels file into columns: a Parquet table, a JSON object, or text (see the module's rules).

    A text file is read by :func:`.trec.read_text_qrels_columns` in the layout :func:`qrels_layout`
    gives (ids stay bytes; the second column of TREC qrels is the subtopic when ``with_subtopics``); a
    Parquet table by :func:`.frames.read_parquet_qrels` (columns ``query_id, doc_id, relevance``, and
    ``subtopic``); a ``.json`` file by :func:`.results_json.read_json_qrels`.

    ``rel_format="qrels_jg"`` (trec_eval ``-R qrels_jg``) reads TREC text qrels ``query_id group doc_id
    relevance`` whose second column is the judgment group (assessor) of each judgment: it is kept as
    the ``subtopics`` column, and a document may be judged once per group. ``"prefs"`` and
    ``"qrels_prefs"`` read preference judgments: see :func:`read_preference_columns`.

    Raises
    ------
    TrecFormatError
        On a malformed line (with ``path:line``) or row, or when the file holds no judgment.
    """
    if rel_format not in REL_FORMATS:
        raise InputFormatError(f"rel_format must be one of {', '.join(map(repr, REL_FORMATS))}; got {rel_format!r:.80}")
    if rel_format == "qrels_jg":
        return _judgment_groups(source)
    if rel_format in PREFERENCE_FORMATS:  # preference judgments (trec_eval -R prefs, -R qrels_prefs)
        return read_preference_columns(source, rel_format=rel_format)
    if is_parquet(source):  # columns query_id, doc_id, relevance (and subtopic): see retrieval_eval.io.frames
        from .frames import read_parquet_qrels

        return read_parquet_qrels(cast("str | os.PathLike[str]", source), with_subtopics=with_subtopics)
    if is_json(source):
        if with_subtopics:
            raise TrecFormatError(f"{os.fsdecode(cast('str', source))}: a JSON qrels file has no subtopics; "
                                  "give TREC qrels 'query_id subtopic doc_id relevance'")
        from .results_json import read_json_qrels

        return read_json_qrels(cast("str | os.PathLike[str]", source))
    return read_text_qrels_columns(source, with_subtopics=with_subtopics, layout=qrels_layout(source))


def _judgment_groups(source: Source) -> QrelsColumns:
    """trec_eval's qrels_jg: TREC text qrels, 4 fields a line, the second one the judgment group."""
    if is_parquet(source) or is_json(source):
        raise TrecFormatError(f"{os.fsdecode(cast('str', source))}: qrels_jg is TREC text, "
                              "'query_id group doc_id relevance' lines")
    return evolve(read_text_qrels_columns(source, with_subtopics=True, layout="trec"), second_column="judgment group")


#: trec_eval's -R formats of preference judgments.
PREFERENCE_FORMATS = ("prefs", "qrels_prefs")


def read_preference_columns(source: Source, *, rel_format: str = "prefs") -> QrelsColumns:
    """Read preference judgments: a ``prefs`` file (``qid jg jsg docno rel_level``), a qrels file read as
    preferences (``qrels_prefs``), or a Parquet table with columns ``query_id, group, subgroup, doc_id,
    level`` (either format). The result's ``preferences`` hold them (see :mod:`.prefs`)."""
    from .prefs import prefs_as_qrels, read_parquet_prefs, read_prefs_columns

    if rel_format not in PREFERENCE_FORMATS:
        raise ValueError(f"rel_format must be one of {', '.join(PREFERENCE_FORMATS)}; got {rel_format!r:.80}")
    if is_parquet(source):
        return prefs_as_qrels(read_parquet_prefs(cast("str | os.PathLike[str]", source)))
    return prefs_as_qrels(read_prefs_columns(source, rel_format=rel_format))


def read_run_columns(source: Source, *, with_ranks: bool = False) -> RunColumns:
    """Read a run file into columns: a Parquet table, a results JSON, or a TREC file (see the module's rules).

    A TREC file is read by :func:`.trec.read_text_run_columns` (``run_id`` is that of the last line;
    the rank column is read only ``with_ranks``); a Parquet table by :func:`.frames.read_parquet_run`
    (columns ``query_id, doc_id, score``, and ``rank``); a ``.json`` file (BEIR's and MTEB's results,
    ``{query_id: {doc_id: score}}``) by :func:`.results_json.read_json_run`.

    Raises
    ------
    TrecFormatError
        On a malformed line (with ``path:line``) or row, or when the file holds no result line.
    """
    if is_parquet(source):  # columns query_id, doc_id, score (and rank): see retrieval_eval.io.frames
        from .frames import read_parquet_run

        return read_parquet_run(cast("str | os.PathLike[str]", source), with_ranks=with_ranks)
    if is_json(source):
        if with_ranks:
            raise TrecFormatError(f"{os.fsdecode(cast('str', source))}: a results JSON has no rank column; "
                                  "rank by score (order='score') or give a TREC run")
        from .results_json import read_json_run

        return read_json_run(cast("str | os.PathLike[str]", source))
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
        The group, item, score and label columns, by name: Parquet's columns, or the names on a
        text log's header line. Without them, columns named ``group``, ``item``, ``score`` and
        ``label`` are read by name (in any order); other logs in that order.

    Raises
    ------
    TrecFormatError
        A malformed line, with ``path:line``, or a log without rows.
    """
    if isinstance(source, (str, os.PathLike)) and is_parquet(source):
        from .logs import read_parquet_log

        return read_parquet_log(os.fsdecode(source), columns)
    from .logs import read_text_log_columns

    return read_text_log_columns(source, delimiter=delimiter, columns=columns)
