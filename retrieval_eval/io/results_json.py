"""BEIR and MTEB results files: one JSON object ``{query_id: {doc_id: score}}``; and qrels as JSON.

BEIR's ``EvaluateRetrieval.retrieve`` and MTEB's retrieval tasks save their results as one JSON object
mapping each query id to ``{doc_id: score}``; pytrec_eval users keep qrels the same way, with integer
relevance values. The values follow the rules of the in-memory dicts
(:func:`.dicts.columns_from_dicts`): a score is a JSON number (not a string, not ``true``, not
``NaN``), a relevance an integer or a float (``1.0`` is read as 1, ``2.5`` kept as a float grade). A file that breaks a rule raises
:class:`TrecFormatError` naming ``path:line`` (the line of the offending entry), as the text readers
do. A query or document id repeated in one object is refused: ``json.load`` would keep the last one
without a word. gzip data (``.json.gz``) is decompressed. Which files come here is decided by
:func:`.formats.is_json`.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from typing import Any

import attrs

from ..model import QrelsColumns, RetrievalEvalError, RunColumns, TrecFormatError
from ._source import _GZIP_MAGIC, file_starts_with
from .dicts import columns_from_dicts

__all__ = ["read_json_qrels", "read_json_run"]

RUN_SHAPE = "a JSON object of scores {query_id: {doc_id: score}}"
QRELS_SHAPE = "a JSON object of judgments {query_id: {doc_id: relevance}}"


def read_json_run(path: str | os.PathLike[str]) -> RunColumns:
    """The run held in a results JSON file ``{query_id: {doc_id: score}}``.

    The run id is the file's name without its suffix (``bm25.json`` -> ``bm25``). Entries keep the
    file's order; each query is ranked by score as any run is.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bm25.json"
    >>> _ = path.write_text(json.dumps({"q1": {"d1": 12.5, "d2": 3.0}}))
    >>> run = read_json_run(path)
    >>> run.doc_ids.tolist(), run.scores.tolist(), run.run_id
    ([b'd1', b'd2'], [12.5, 3.0], 'bm25')

    Raises
    ------
    TrecFormatError
        Not JSON, not an object of objects, a value that is no score, a repeated id (all with
        ``path:line``), or no score at all.
    """
    name, text, scores = _load(path, RUN_SHAPE)
    try:
        _, run = columns_from_dicts({}, scores)  # the dicts' own checks: ids, and finite float scores
    except RetrievalEvalError as error:
        raise _located(name, text, scores, error) from None
    if not len(run.scores):
        raise TrecFormatError(f"{name}: no results found; expected {RUN_SHAPE}; got no scores")
    stem = os.path.basename(name)
    stem = stem[: -len(".json.gz")] if stem.lower().endswith(".json.gz") else os.path.splitext(stem)[0]
    return attrs.evolve(run, origin=name, run_id=stem or "run")


def read_json_qrels(path: str | os.PathLike[str]) -> QrelsColumns:
    """The judgments held in a JSON file ``{query_id: {doc_id: relevance}}`` (pytrec_eval's qrels dict).

    Raises
    ------
    TrecFormatError
        As :func:`read_json_run`; a relevance must be a finite number: an integer, an integral float
        (``2.0``, read as 2) or a float grade (``2.5``).
    """
    name, text, judged = _load(path, QRELS_SHAPE)
    try:
        qrels, _ = columns_from_dicts(judged, {})
    except RetrievalEvalError as error:
        raise _located(name, text, judged, error) from None
    if not len(qrels.relevance):
        raise TrecFormatError(f"{name}: no judgments found; expected {QRELS_SHAPE}; got no judgments")
    return attrs.evolve(qrels, origin=name)


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members as a dict, refusing a key given twice (json would keep the last silently)."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Repeated(key)
            seen.add(key)
    return result


def _load(path: str | os.PathLike[str], shape: str) -> tuple[str, str, dict[str, Any]]:
    """The file's name, its text and its object, checked to be an object of objects."""
    name = os.fspath(path)
    try:
        if file_starts_with(name, _GZIP_MAGIC):
            with gzip.open(name, "rt", encoding="utf-8") as file:
                text = file.read()
        else:
            with open(name, encoding="utf-8") as file:
                text = file.read()
    except UnicodeDecodeError as error:
        raise TrecFormatError(f"{name}: not UTF-8 text ({error.reason}); expected {shape}") from None
    except (OSError, EOFError) as error:
        raise TrecFormatError(f"{name}: cannot read: {getattr(error, 'strerror', None) or error}") from None
    try:
        loaded = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise TrecFormatError(f"{name}:{error.lineno}: expected {shape}; {error.msg}") from None
    except _Repeated as repeated:
        line = _line_of(text, [repeated.key], last=True)
        raise TrecFormatError(f"{name}{line}: id {repeated.key!r} given twice in one object (JSON would keep "
                              f"the last silently); expected {shape}") from None
    if not isinstance(loaded, dict):
        raise TrecFormatError(f"{name}:1: expected {shape}; got a JSON {type(loaded).__name__}")
    for query_id, docs in loaded.items():
        if not isinstance(docs, dict):
            line = _line_of(text, [query_id])
            raise TrecFormatError(f"{name}{line}: query {query_id!r} must map to an object {{doc_id: value}}; "
                                  f"expected {shape}; got {_json_type(docs)} {json.dumps(docs)[:60]}")
    return name, text, loaded


def _json_type(value: object) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


def _located(name: str, text: str, table: dict[str, Any], error: RetrievalEvalError) -> TrecFormatError:
    """The dicts' error about one entry, as a file error with that entry's line when it can be found."""
    message = str(error)
    for query_id, docs in table.items():  # the entry the message names (error path only)
        for doc_id in docs:
            if f"query {query_id!r}, document {doc_id!r}" in message:
                return TrecFormatError(f"{name}{_line_of(text, [query_id, doc_id])}: {message}")
    return TrecFormatError(f"{name}: {message}")


def _line_of(text: str, keys: list[str], last: bool = False) -> str:
    """``:line`` of the member ``keys[-1]`` inside ``keys[0]``'s object (each key found after the one
    before it), or the last occurrence of a single key with ``last``; empty if not found as written
    (a key spelled with other escapes than json.dumps uses)."""
    at = 0
    for key in keys:
        found = None
        for spelled in {json.dumps(key), json.dumps(key, ensure_ascii=False)}:
            matches = list(re.compile(re.escape(spelled) + r"\s*:").finditer(text, at))
            if matches:
                match = matches[-1] if last else matches[0]
                found = match.start() if found is None else min(found, match.start())
        if found is None:
            return ""
        at = found + 1
    return f":{text.count(chr(10), 0, at - 1) + 1}"
