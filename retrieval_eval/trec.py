"""Strict, streaming readers and writers for TREC qrels and run files.

Formats (whitespace-separated, any run of spaces, tabs or ``\\r``):

* qrels: ``query_id iteration doc_id relevance`` -- exactly 4 fields; relevance an integer
  (negative = pooled but not judged);
* run: ``query_id Q0 doc_id rank score run_id [anything]`` -- at least 6 fields; score a number;
  the rank column and anything after run_id are ignored (ranking is by score, as in trec_eval).

Blank lines and lines whose first non-blank character is ``#`` are skipped. Every other line must
parse: a malformed one raises :class:`TrecFormatError` with ``path:line``, what was expected and
what was found. Sources can be a path (``.gz`` is decompressed), or an open binary or text file.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Union

import numpy as np

from .model import Document, InputFormatError, Judgment
from .ranking import QrelsColumns, RunColumns

Source = Union[str, "os.PathLike[str]", IO[bytes], IO[str]]

#: Lines gathered into Python lists before they are packed into arrays (bounds peak memory).
_CHUNK = 1 << 18


class TrecFormatError(InputFormatError):
    """A line of a qrels or run file that does not follow the format."""


@contextmanager
def _open_binary(source: Source) -> Iterator[tuple[Iterable[bytes], str]]:
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        opener = gzip.open if path.endswith(".gz") else open
        try:
            handle = opener(path, "rb")
        except OSError as exc:
            raise TrecFormatError(f"{path}: cannot open: {exc.strerror or exc}") from None
        with handle:
            yield handle, path
        return
    name = str(getattr(source, "name", "<stream>"))
    if isinstance(source, io.TextIOBase):
        yield (line.encode("utf-8") for line in source), name  # type: ignore[union-attr]
    else:
        yield source, name  # type: ignore[misc]


def _snippet(raw: bytes) -> str:
    text = raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= 120 else text[:117] + "...")


def _data_lines(source: Source) -> Iterator[tuple[str, int, list[bytes], bytes]]:
    """(name, line number, fields, raw line) for every line that is neither blank nor a comment."""
    with _open_binary(source) as (lines, name):
        lineno = 0
        try:
            for lineno, raw in enumerate(lines, start=1):  # noqa: B007 - lineno is used after the loop
                fields = raw.split()
                if not fields or fields[0].startswith(b"#"):
                    continue
                yield name, lineno, fields, raw
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise TrecFormatError(
                f"{name}:{lineno + 1}: compressed data is truncated or corrupt ({exc}); "
                "expected a complete gzip stream"
            ) from None


def _parse_relevance(field: bytes, name: str, lineno: int, raw: bytes) -> int:
    try:
        return int(field)
    except ValueError:
        raise TrecFormatError(
            f"{name}:{lineno}: relevance must be an integer; expected 'query_id iteration doc_id relevance'; "
            f"got {_snippet(raw)}"
        ) from None


def _parse_score(field: bytes, name: str, lineno: int, raw: bytes) -> float:
    try:
        score = float(field)
    except ValueError:
        score = math.nan
        problem = "score must be a number"
    else:
        problem = "score must not be NaN (it would make the ranking order undefined)"
    if math.isnan(score):
        raise TrecFormatError(
            f"{name}:{lineno}: {problem}; expected 'query_id Q0 doc_id rank score run_id'; got {_snippet(raw)}"
        )
    return score


def _qrels_records(source: Source) -> Iterator[tuple[str, int, bytes, bytes, int]]:
    for name, lineno, fields, raw in _data_lines(source):
        if len(fields) != 4:
            raise TrecFormatError(
                f"{name}:{lineno}: {len(fields)} fields; expected 4 fields 'query_id iteration doc_id relevance'; "
                f"got {_snippet(raw)}"
            )
        yield name, lineno, fields[0], fields[2], _parse_relevance(fields[3], name, lineno, raw)


def _run_records(source: Source) -> Iterator[tuple[str, int, list[bytes], float]]:
    for name, lineno, fields, raw in _data_lines(source):
        if len(fields) < 6:
            raise TrecFormatError(
                f"{name}:{lineno}: {len(fields)} fields; expected at least 6 fields "
                f"'query_id Q0 doc_id rank score run_id'; got {_snippet(raw)}"
            )
        yield name, lineno, fields, _parse_score(fields[4], name, lineno, raw)


def _pack(chunks: list[list]) -> np.ndarray:
    return np.concatenate([np.asarray(c) for c in chunks]) if chunks else np.asarray([], dtype="S1")


def read_qrels_columns(source: Source) -> QrelsColumns:
    """Read a qrels file into columns (ids stay bytes, so ties sort in byte order like trec_eval).

    Raises
    ------
    TrecFormatError
        On a malformed line (with ``path:line``) or when the file holds no judgment.
    """
    qids: list[list[bytes]] = [[]]
    docs: list[list[bytes]] = [[]]
    rels: list[list[int]] = [[]]
    lines: list[list[int]] = [[]]
    name = _source_name(source)
    for name, lineno, qid, doc, rel in _qrels_records(source):
        if len(qids[-1]) == _CHUNK:
            for column in (qids, docs, rels, lines):
                column[-1] = np.asarray(column[-1])  # type: ignore[call-overload]
                column.append([])
        qids[-1].append(qid)
        docs[-1].append(doc)
        rels[-1].append(rel)
        lines[-1].append(lineno)
    if not lines[0]:
        raise TrecFormatError(
            f"{name}: no judgments found; expected lines 'query_id iteration doc_id relevance'; got no data lines"
        )
    return QrelsColumns(
        query_ids=_pack(qids), doc_ids=_pack(docs), relevance=_pack(rels).astype(np.int64),
        lines=_pack(lines).astype(np.int64), origin=name,
    )


def read_run_columns(source: Source) -> RunColumns:
    """Read a run file into columns; ``run_id`` is that of the last line, as in trec_eval.

    Raises
    ------
    TrecFormatError
        On a malformed line (with ``path:line``) or when the file holds no result line.
    """
    qids: list[list[bytes]] = [[]]
    docs: list[list[bytes]] = [[]]
    scores: list[list[float]] = [[]]
    lines: list[list[int]] = [[]]
    name = _source_name(source)
    run_id = b""
    for name, lineno, fields, score in _run_records(source):
        if len(qids[-1]) == _CHUNK:
            for column in (qids, docs, scores, lines):
                column[-1] = np.asarray(column[-1])  # type: ignore[call-overload]
                column.append([])
        qids[-1].append(fields[0])
        docs[-1].append(fields[2])
        scores[-1].append(score)
        lines[-1].append(lineno)
        run_id = fields[5]
    if not lines[0]:
        raise TrecFormatError(
            f"{name}: no results found; expected lines 'query_id Q0 doc_id rank score run_id'; got no data lines"
        )
    return RunColumns(
        query_ids=_pack(qids), doc_ids=_pack(docs), scores=_pack(scores).astype(np.float64),
        lines=_pack(lines).astype(np.int64), origin=name, run_id=run_id.decode("utf-8", "backslashreplace"),
    )


def _source_name(source: Source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def _text(value: bytes) -> str:
    return value.decode("utf-8", "backslashreplace")


def read_qrels(source: Source) -> Iterator[tuple[str, Judgment]]:
    """Stream ``(query_id, Judgment)`` pairs from a qrels file.

    Examples
    --------
    >>> import io
    >>> list(read_qrels(io.StringIO("301 0 d1 1\\n")))
    [('301', Judgment(doc_id='d1', relevance=1))]
    """
    for _, _, qid, doc, rel in _qrels_records(source):
        yield _text(qid), Judgment(_text(doc), rel)


def read_run(source: Source) -> Iterator[tuple[str, Document]]:
    """Stream ``(query_id, Document)`` pairs from a run file, in file order.

    ``Document.rank`` is the file's rank column when it is a positive integer, else None.
    """
    for _, _, fields, score in _run_records(source):
        rank = int(fields[3]) if fields[3].isdigit() and int(fields[3]) > 0 else None
        yield _text(fields[0]), Document(_text(fields[2]), rank, score)


def write_qrels(path: str | os.PathLike[str], qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write ``{query_id: {doc_id: relevance}}`` as a qrels file (``.gz`` compresses)."""
    with _open_write(path) as out:
        for qid, docs in qrels.items():
            for doc, rel in docs.items():
                out.write(f"{qid} 0 {doc} {int(rel)}\n")


def write_run(path: str | os.PathLike[str], run: Mapping[str, Mapping[str, float]], run_id: str = "run") -> None:
    """Write ``{query_id: {doc_id: score}}`` as a run file, each query ranked by score (trec_eval order)."""
    with _open_write(path) as out:
        for qid, docs in run.items():
            ranked = sorted(docs.items(), key=lambda item: (-item[1], _neg_bytes(item[0])))
            for rank, (doc, score) in enumerate(ranked, start=1):
                out.write(f"{qid} Q0 {doc} {rank} {score!r} {run_id}\n")


def _neg_bytes(doc: str) -> tuple[int, ...]:
    # Sorting ascending on negated bytes gives doc_id descending by bytes (the tie rule), with
    # a longer id ranking above its own prefix, as strcmp orders them.
    return tuple(-b for b in doc.encode("utf-8")) + (1,)


@contextmanager
def _open_write(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    path = os.fspath(path)
    if path.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as out:
            yield out
    else:
        with open(path, "w", encoding="utf-8") as out:
            yield out
