"""A fused run as a TREC file, and the JSON that says how it was made."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np

from ...engine.segments import _offsets_of
from ...model import RunColumns

#: Lines formatted per step (bounds the temporary list of lines).
_LINES_PER_STEP = 1 << 18


def trec_lines(run: RunColumns) -> Iterator[bytes]:
    """The run's lines ``query Q0 doc rank score tag``, in blocks, rows in their order (ranks count
    from 1 within each query, whose rows must be consecutive); scores as Python's shortest repr."""
    query = np.asarray(run.query_ids)
    starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1]))) if len(query) else np.zeros(0, np.int64)
    lengths = np.diff(np.concatenate((starts, [len(query)])))
    rank = np.arange(len(query)) - np.repeat(_offsets_of(lengths)[:-1], lengths) + 1
    tag = run.run_id.encode("utf-8", "surrogateescape")
    for at in range(0, len(query), _LINES_PER_STEP):  # a loop over blocks of lines
        end = at + _LINES_PER_STEP
        yield b"".join(b"%s Q0 %s %d %s %s\n" % (q, d, r, repr(s).encode(), tag) for q, d, r, s in zip(
            query[at:end].tolist(), np.asarray(run.doc_ids)[at:end].tolist(), rank[at:end].tolist(),
            np.asarray(run.scores)[at:end].tolist()))


def write_trec(out: BinaryIO, run: RunColumns) -> None:
    """Write ``run`` to ``out`` as TREC run lines."""
    out.writelines(trec_lines(run))


def metadata_json(metadata: dict[str, Any]) -> bytes:
    """The metadata as indented JSON, one trailing newline."""
    return (json.dumps(metadata, indent=2, ensure_ascii=False, default=_plain) + "\n").encode("utf-8")


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8", "surrogateescape")
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON: {type(value).__name__}")
