"""Runs as ranked lists of document ids, without qrels: what run-to-run analyses compare.

:func:`ranked_lists` reads a run with the same readers as every command (TREC text, results JSON,
Parquet; the same ``path:line`` errors) and puts each query's documents in trec_eval's order (score
descending, ties by doc_id descending) with the engine's own ordering, so a list here is the ranking
the measures see. The scores are kept: the RBO variants of Corsi & Urbano read the ties from them.

>>> lists = ranked_lists({"q1": {"a": 1.0, "b": 2.0, "c": 2.0}})
>>> lists.query_ids, lists.docs("q1"), lists.tie_groups("q1").tolist()
(('q1',), ['c', 'b', 'a'], [0, 0, 1])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from attrs import field, frozen

from ..engine.ids import _as_bytes, _check_duplicates, intern
from ..engine.order import canonical_order
from ..model import FloatArray, IntArray, RetrievalEvalError, RunColumns, id_text

__all__ = ["RankedLists", "joint_codes", "ranked_lists", "run_columns"]


@frozen
class RankedLists:
    """Every query's documents in ranking order, as flat arrays cut at ``offsets`` (queries in id order)."""

    query_ids: tuple[str, ...]
    offsets: IntArray  #: query i's rows are offsets[i]:offsets[i + 1]
    doc_ids: np.ndarray  #: bytes
    scores: FloatArray
    name: str = ""
    _index: dict[str, int] = field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_index", {q: i for i, q in enumerate(self.query_ids)})

    def rows(self, query_id: str) -> slice:
        """Where the query's documents are in :attr:`doc_ids` and :attr:`scores`."""
        try:
            i = self._index[query_id]
        except KeyError:
            raise KeyError(query_id) from None
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def docs(self, query_id: str) -> list[str]:
        """The query's document ids, best first."""
        return [id_text(d) for d in self.doc_ids[self.rows(query_id)].tolist()]

    def tie_groups(self, query_id: str) -> IntArray:
        """Each document's tie group, 0 for the first score, counting up at each change of score."""
        scores = self.scores[self.rows(query_id)]
        return np.concatenate(([0], np.cumsum(scores[1:] != scores[:-1]))).astype(np.int64)[: len(scores)]

    def as_dict(self) -> dict[str, list[str]]:
        """``{query_id: [doc_id, ...]}`` in ranking order."""
        return {q: self.docs(q) for q in self.query_ids}


def joint_codes(*lists: RankedLists) -> list[IntArray]:
    """Each list's documents as integer codes shared by all the lists, in byte order of the ids (so
    comparing codes compares ids as ``sorted`` does): documents are then compared without decoding ids.

    >>> a, b = ranked_lists({"q": {"x": 2.0, "y": 1.0}}), ranked_lists({"q": {"y": 2.0, "z": 1.0}})
    >>> [codes.tolist() for codes in joint_codes(a, b)]
    [[0, 1], [1, 2]]
    """
    codes = intern(np.concatenate([_as_bytes(found.doc_ids).astype(bytes) for found in lists]))[1]
    return np.split(codes, np.cumsum([len(found.doc_ids) for found in lists])[:-1])


def ranked_lists(run: Any, *, duplicates: str = "error") -> RankedLists:
    """A run (a path, an open file, a ``{query: {doc: score}}`` dict or :class:`RunColumns`) as
    :class:`RankedLists`; a document twice in a query is an error unless ``duplicates="first"``."""
    columns = run_columns(run)
    if duplicates not in ("error", "first"):
        raise RetrievalEvalError(f"'duplicates' must be 'error' or 'first'; got {duplicates!r}")
    queries, docs = _as_bytes(columns.query_ids), _as_bytes(columns.doc_ids)
    vocab, codes = intern(queries)
    keep = _check_duplicates(codes, docs, columns.lines, columns.origin, columns.unit, "document", vocab,
                             duplicates)  # type: ignore[arg-type]
    scores = np.asarray(columns.scores, dtype=np.float64)
    if not keep.all():
        codes, docs, scores = codes[keep], docs[keep], scores[keep]
    order = canonical_order(codes, scores, docs)
    if order is not None:
        rows = order.permutation()
        codes, docs, scores = codes[rows], docs[rows], scores[rows]
    offsets = np.searchsorted(codes, np.arange(len(vocab) + 1)).astype(np.int64)
    return RankedLists(tuple(id_text(q) for q in vocab.tolist()), offsets, docs, scores, columns.run_id)


def run_columns(run: Any) -> RunColumns:
    """A run as columns: a path or open file (any format the readers know), a dict, or columns already."""
    if isinstance(run, RunColumns):
        return run
    if isinstance(run, Mapping):
        from ..io.dicts import columns_from_dicts

        return columns_from_dicts({}, run)[1]
    from ..io.formats import read_run_columns

    return read_run_columns(run)
