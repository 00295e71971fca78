"""Text to show beside the numbers: document texts (``report --docs``) and query texts (``--topics``).

Documents come as TSV (``docid<TAB>text``) or JSONL (one object a line with an id, ``docid``,
``doc_id``, ``_id`` or ``id``, and ``text``, with an optional ``title`` put before it, as in BEIR's
``corpus.jsonl``), either of them gzipped. Only the documents asked for are kept, each cut to a
number of characters, so a collection of millions of documents costs one pass and the memory of
the few shown. Topics come as TREC topic files (``<top> <num> ... <title> ...``, or the Web track's
``<topic number="1"><query>...``) or as TSV (``qid<TAB>text``).

Ids are read as the run and qrels readers read them (bytes that are not UTF-8 kept, see
:func:`~retrieval_eval.model.id_text`) so that they match; texts are decoded with U+FFFD in place of
such bytes. A line that cannot be read is an error naming ``path:line``; nothing is skipped but
empty lines.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "docs.tsv")
>>> with open(path, "w") as f:
...     _ = f.write("d1\\tThe first document.\\nd2\\tThe second one, which is long.\\n")
>>> read_documents(path, {"d2"}, chars=14)
{'d2': 'The second one…'}
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Collection, Iterator
from typing import Any

from ..model import InputFormatError, id_text

__all__ = ["read_documents", "read_topics"]

#: The keys a JSONL document's id may have, in the order they are looked for.
ID_KEYS = ("docid", "doc_id", "_id", "id")
#: A first TSV line whose first field is one of these is a header, not a document.
_HEADERS = {"docid", "doc_id", "_id", "id", "qid", "query_id", "topic"}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes]]:
    """The numbered lines of a file (gzip read by its magic bytes), without their line ends."""
    try:
        with open(path, "rb") as raw:
            gzipped = raw.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rb") if gzipped else open(path, "rb")) as stream:
            for number, line in enumerate(stream, 1):
                if number == 1 and line.startswith(b"\xef\xbb\xbf"):  # a byte order mark
                    line = line[3:]
                yield number, line.rstrip(b"\r\n")
    except (OSError, EOFError) as error:  # a missing file, a truncated or corrupt .gz
        raise InputFormatError(f"{os.fspath(path)}: cannot read it: {getattr(error, 'strerror', None) or error}") from None


def _text(raw: bytes) -> str:
    """Text for display: UTF-8, with U+FFFD for each byte that is not."""
    return raw.decode("utf-8", "replace")


def _cut(text: str, chars: int) -> str:
    text = " ".join(text.split())  # one line: the page shows a snippet, not the layout
    return text if len(text) <= chars else text[:chars] + "…"


def _shown(value: object) -> str:
    return repr(value if not isinstance(value, bytes) else _text(value))[:60]


def _is_jsonl(path: str | os.PathLike[str], first: bytes | None) -> bool:
    name = os.fspath(path).lower().removesuffix(".gz")
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return True
    if name.endswith((".tsv", ".txt")):
        return False
    return first is not None and first.lstrip().startswith(b"{")


def read_documents(path: str | os.PathLike[str], wanted: Collection[str], *, chars: int = 300) -> dict[str, str]:
    """The texts of the documents ``wanted`` that ``path`` holds (TSV or JSONL, gzip ok), each cut
    to ``chars`` characters (``…`` marks a cut). Documents not wanted are read past, unchecked
    beyond their line's shape.

    Raises
    ------
    InputFormatError
        ``path:line: expected ..., found ...`` for a line that is not a document, or a wanted
        document given twice.
    """
    lines = _lines(path)
    first = next(lines, None)
    jsonl = _is_jsonl(path, None if first is None else first[1])
    found: dict[str, str] = {}
    where: dict[str, int] = {}
    for number, line in _chain(first, lines):
        if not line.strip():
            continue
        if jsonl:
            key, text = _json_document(path, number, line)
        else:
            raw_id, sep, rest = line.partition(b"\t")
            if not sep or not raw_id:
                raise InputFormatError(f"{os.fspath(path)}:{number}: expected a document id, a tab and the "
                                       f"document's text, found {_shown(line)}")
            if number == 1 and _text(raw_id).lower() in _HEADERS:
                continue
            key, text = id_text(raw_id), _text(rest)
        if key in wanted:
            if key in found:
                raise InputFormatError(f"{os.fspath(path)}:{number}: expected each document once, found "
                                       f"{_shown(key)} again (first on line {where[key]})")
            found[key], where[key] = _cut(text, chars), number
    return found


def _chain(first: tuple[int, bytes] | None, rest: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    if first is not None:
        yield first
    yield from rest


def _json_document(path: str | os.PathLike[str], number: int, line: bytes) -> tuple[str, str]:
    """A JSONL line's id (as the run reader keys ids) and text (title first, when there is one)."""
    where = f"{os.fspath(path)}:{number}"
    try:
        record: Any = json.loads(line.decode("utf-8", "surrogateescape"))
    except json.JSONDecodeError as error:
        raise InputFormatError(f"{where}: expected a JSON object, found {_shown(line)} ({error.msg})") from None
    if not isinstance(record, dict):
        raise InputFormatError(f"{where}: expected a JSON object, found {_shown(record)}")
    key = next((k for k in ID_KEYS if k in record), None)
    doc_id = record.get(key) if key else None
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool) or doc_id == "":
        raise InputFormatError(f"{where}: expected a document id in one of {', '.join(ID_KEYS)}, found "
                               f"{_shown(doc_id) if key else 'none'}")
    parts = [record.get("title"), record.get("text")]
    if not all(part is None or isinstance(part, str) for part in parts):
        raise InputFormatError(f"{where}: expected \"text\" (and \"title\") to be strings, found "
                               f"{_shown(parts[1] if not isinstance(parts[1], str) else parts[0])}")
    text = " — ".join(part for part in parts if part)
    return str(doc_id), _SURROGATE.sub("\ufffd", text)


# ------------------------------------------------------------------------------ topics
_TREC_FIELD = re.compile(r"<(num|title|desc|narr)>", re.IGNORECASE)
_WEB_TOPIC = re.compile(r"<topic\b([^>]*)>(.*?)</topic>", re.IGNORECASE | re.DOTALL)
_WEB_NUMBER = re.compile(r"\bnumber\s*=\s*[\"']([^\"']*)[\"']", re.IGNORECASE)
_WEB_FIELD = re.compile(r"<(query|description)>(.*?)</\1>", re.IGNORECASE | re.DOTALL)
_LABEL = re.compile(r"^\s*(Number|Topic|Description|Narrative)\s*:", re.IGNORECASE)


def read_topics(path: str | os.PathLike[str]) -> dict[str, tuple[str, str]]:
    """Each query's ``(title, description)`` from a TREC topics file or a TSV of ``qid<TAB>text``
    (whose description is empty). A file that starts with ``<`` is TREC topics.

    Raises
    ------
    InputFormatError
        ``path:line: expected ..., found ...``: a topic without a number, a TSV line without a tab,
        a query given twice.
    """
    numbered = list(_lines(path))
    first = next((line for _, line in numbered if line.strip()), b"")
    if first.lstrip().startswith(b"<"):
        return _trec_topics(path, numbered)
    topics: dict[str, tuple[str, str]] = {}
    where: dict[str, int] = {}
    for number, line in numbered:
        if not line.strip():
            continue
        qid, sep, text = line.partition(b"\t")
        if not sep or not qid.strip():
            raise InputFormatError(f"{os.fspath(path)}:{number}: expected a query id, a tab and the query's "
                                   f"text, found {_shown(line)}")
        if number == 1 and _text(qid).lower() in _HEADERS:
            continue
        _add_topic(path, number, topics, where, id_text(qid.strip()), _text(text).strip(), "")
    return topics


def _add_topic(path: str | os.PathLike[str], number: int, topics: dict[str, tuple[str, str]], where: dict[str, int],
               qid: str, title: str, description: str) -> None:
    if qid in topics:
        raise InputFormatError(f"{os.fspath(path)}:{number}: expected each query once, found {_shown(qid)} again "
                               f"(first on line {where[qid]})")
    topics[qid], where[qid] = (" ".join(title.split()), " ".join(description.split())), number


def _trec_topics(path: str | os.PathLike[str], numbered: list[tuple[int, bytes]]) -> dict[str, tuple[str, str]]:
    """TREC's ``<top>`` topics (fields end where the next begins), or the Web track's ``<topic>`` XML."""
    text = "\n".join(line.decode("utf-8", "surrogateescape") for _, line in numbered)
    starts = [0]
    for _, line in numbered:
        starts.append(starts[-1] + len(line.decode("utf-8", "surrogateescape")) + 1)

    def line_at(offset: int) -> int:
        import bisect

        return numbered[max(bisect.bisect_right(starts, offset) - 1, 0)][0] if numbered else 1

    topics: dict[str, tuple[str, str]] = {}
    where: dict[str, int] = {}
    web = list(_WEB_TOPIC.finditer(text))
    if web:
        for match in web:
            number = _WEB_NUMBER.search(match.group(1))
            if number is None or not number.group(1).strip():
                raise InputFormatError(f"{os.fspath(path)}:{line_at(match.start())}: expected <topic number=\"...\">,"
                                       f" found {_shown(match.group(0)[:40])}")
            fields = {name.lower(): body for name, body in _WEB_FIELD.findall(match.group(2))}
            _add_topic(path, line_at(match.start()), topics, where, number.group(1).strip(),
                       _clean(fields.get("query", "")), _clean(fields.get("description", "")))
        return topics
    blocks = re.split(r"(?i)<top>", text)
    offset = len(blocks[0])
    for block in blocks[1:]:
        start, offset = offset + len("<top>"), offset + len("<top>") + len(block)
        body = re.split(r"(?i)</top>", block)[0]
        pieces = _TREC_FIELD.split(body)
        fields = {pieces[i].lower(): pieces[i + 1] for i in range(1, len(pieces) - 1, 2)}
        qid = _LABEL.sub("", fields.get("num", "")).strip()
        if not qid:
            raise InputFormatError(f"{os.fspath(path)}:{line_at(start)}: expected <num> in the topic that starts "
                                   f"here, found {_shown(body.strip()[:40])}")
        _add_topic(path, line_at(start), topics, where, qid.split()[0],
                   _clean(fields.get("title", "")), _clean(_LABEL.sub("", fields.get("desc", ""))))
    return topics


def _clean(text: str) -> str:
    """A topic's field as display text: tags dropped, bytes that are not UTF-8 as U+FFFD."""
    return _SURROGATE.sub("\ufffd", re.sub(r"<[^>]*>", " ", text)).strip()
