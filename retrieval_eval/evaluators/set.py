"""RetrievalEvaluator (one query) and SetEvaluator (many): thin views over a RankedBatch.

Both compute every measure with the same vectorised kernels (:mod:`retrieval_eval.measures`); a
RetrievalEvaluator is simply a batch of one query.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, cast

import numpy as np

from ..engine import threads as _threads
from ..engine.ids import Duplicates
from ..measures import (
    AP,
    CUTOFF,
    REL,
    RR,
    Bpref,
    IPrec,
    Measure,
    MeasureError,
    P,
    R,
    Rprec,
    compute,
    compute_text,
    nDCG,
    parse,
    parse_list,
)
from ..measures.base import Param, Summary, geometric_mean, pool_share, summary_weights
from ..measures.trec_table import P_CUTOFFS, RECALL_POINTS
from ..model import (
    Document,
    FloatArray,
    InputFormatError,
    InputTypeError,
    IntArray,
    Judgment,
    MissingExtraError,
    QrelsColumns,
    RetrievalEvalError,
    RunColumns,
    check_id,
    id_bytes,
    id_problem,
    id_text,
    optional_int_at_least,
    to_relevance,
    to_score,
)
from ..engine.ranking import (
    Order,
    QuerySetReport,
    RankedBatch,
    RunHandoff,
    build_batch,
    check_duplicates_option,
)

#: Queries per block when a batch of more is evaluated block by block, on one CPU: each block's arrays
#: (a few hundred kB) stay in the CPU's caches. 10 M sessions of one document, the 30 official
#: measures: 4.8 s on the whole batch, 2.7 s in blocks of 32,768, 3.0 s of 65,536, 3.3 s of a million.
QUERIES_PER_BLOCK = 1 << 15
#: The same with several CPUs, one block per thread: larger blocks, since between its array loops a
#: thread holds the GIL, and with small blocks the threads mostly wait for each other. The same run on
#: 2 CPUs: 2.8 s in blocks of 32,768 (no faster than one thread), 2.3 s of 131,072, 2.1 s of 262,144,
#: 1.95 s of 524,288; 1 M sessions of ten documents: 0.31, 0.25, 0.23 and 0.26 s (one thread 0.34 s).
QUERIES_PER_THREAD_BLOCK = 1 << 18

MeasureLike = str | Measure
#: One measure-like, or several; a group (``official``, ``P``, ``ndcg_cut``) stands for its measures.
MeasureList = MeasureLike | Iterable[MeasureLike]

#: How :meth:`SetEvaluator.evaluate` and :meth:`SetEvaluator.to_dataframe` name their measures.
_KEYS = ("canonical", "trec")

_NO_PANDAS = "SetEvaluator.to_dataframe needs pandas: pip install 'retrieval_eval[dataframe]'"


def _check_rel(owner: str, rel: object) -> int:
    """``rel`` checked as every measure's ``rel`` parameter is (the same Param, the same error)."""
    return int(REL.check(owner, "rel", rel))


def _check_cutoff(owner: str, k: object) -> int:
    """A required cutoff ``k``, checked as every measure's cutoff is."""
    return int(CUTOFF.check(owner, "k", k, allow_none=False))


#: The depth of :meth:`RetrievalEvaluator.relevant_retrieved`: a count, so 0 (the empty top) is allowed.
_DEPTH = Param(int, None, "rank depth k: the top k ranks (0: none)", minimum=0)

#: How the summaries other than the arithmetic mean combine the queries (see :meth:`SetEvaluator.mean`).
_NOT_A_MEAN = {"sum": "the sum over queries", "gmean": "a geometric mean", "weighted": "a weighted mean",
               "pooled": "pooled over the rows of every query"}


def _check_max_depth(max_depth: object) -> int | None:
    """``max_depth`` as an int >= 0 or None: InputTypeError for another type (1.5, '3'), InputFormatError below 0."""
    return optional_int_at_least(max_depth, "'max_depth'", 0)


#: The ``order`` option of the readers (and the CLI's --order), as the batch builder names each.
RANKING_ORDERS: dict[str, Order] = {"score": "score", "file": "given", "rank": "rank"}


def _read_options(max_depth: object, duplicates: object, order: object) -> dict[str, Any]:
    """The build options of a file or table reader (``from_trec``, ``from_arrow``, ...), checked."""
    checked_depth = _check_max_depth(max_depth)
    check_duplicates_option(duplicates)
    if not isinstance(order, str) or order not in RANKING_ORDERS:
        raise ValueError(f"'order' must be one of {list(RANKING_ORDERS)}; got {order!r}")
    return {"max_depth": checked_depth, "duplicates": duplicates, "order": RANKING_ORDERS[order]}


def _check_nested(given: object, name: str, shape: str) -> None:
    """Raise InputTypeError unless ``given`` is a mapping of query ids to mappings (pytrec_eval's dicts)."""
    if not isinstance(given, Mapping):
        raise InputTypeError(f"{name!r} must be a mapping {{query_id: {shape}}}; got {type(given).__name__}")
    for query_id, docs in given.items():
        if not isinstance(docs, Mapping):
            raise InputTypeError(
                f"{name}[{query_id!r}] must be a mapping {shape}; got {type(docs).__name__} {docs!r}"
            )


#: Value types NumPy converts exactly and in one pass (anything else is checked one entry at a time).
_FAST_SCORES = {float, int, np.float64, np.float32, np.int64, np.int32}
_FAST_RELEVANCE = {int, np.int64, np.int32}


def _dict_scores(run: Mapping[str, Mapping[str, object]]) -> FloatArray:
    """The run's scores in entry order; a bool, str, NaN or too large score raises, naming its entry."""
    values = [s for docs in run.values() for s in docs.values()]
    if set(map(type, values)) <= _FAST_SCORES:
        try:
            scores = np.asarray(values, dtype=np.float64)
        except OverflowError:
            scores = None
        if scores is not None and not np.isnan(scores).any():
            return scores
    return np.asarray([
        to_score(score, f"run score of query {q!r}, document {d!r}") for q, docs in run.items() for d, score in docs.items()
    ], dtype=np.float64)


def _dict_relevance(qrels: Mapping[str, Mapping[str, object]]) -> IntArray:
    """The qrels' relevance values in entry order, by :class:`Judgment`'s rule (a bool or str raises)."""
    values = [r for docs in qrels.values() for r in docs.values()]
    if set(map(type, values)) <= _FAST_RELEVANCE:
        try:
            return np.asarray(values, dtype=np.int64)
        except OverflowError:
            pass
    return np.asarray([
        to_relevance(value, f"qrels relevance of query {q!r}, document {d!r}")
        for q, docs in qrels.items() for d, value in docs.items()
    ], dtype=np.int64)


def _check_ids(given: Iterable[object], what: str) -> None:
    """Raise if any of ``ids`` is not a usable in-memory id (see :func:`model.id_problem`)."""
    ids: list[Any] = list(given)  # not yet known to be str: join raises TypeError otherwise
    try:
        joined = "\0".join(ids)  # one pass in C for the common case: every id fine
    except TypeError:
        joined = None
    if joined is not None and not _BAD_ID.search(joined) and joined.count("\0") == len(ids) - 1:
        return
    for value in ids:  # error path: find the first offender
        check_id(value, what)


def _reject_item(query_id: str, where: str, expected: type, item: object) -> None:
    """Raise for an item of the wrong type, recognising the (query_id, item) pairs of the readers."""
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], expected):
        if item[0] != query_id:  # read_qrels/read_run pairs of the whole file, not of this query
            raise InputFormatError(f"{where} belongs to query {item[0]!r}, not {query_id!r}; got {item!r}")
        raise InputTypeError(f"{where} must be a {expected.__name__}, not a (query_id, {expected.__name__}) "
                             f"pair; got {item!r}")
    raise InputTypeError(f"{where} must be a {expected.__name__}; got {type(item).__name__} {item!r}")


#: In NUL-joined ids: a lone surrogate (not UTF-8), or an empty id (two NULs in a row, or one at either end).
_BAD_ID = re.compile("[\ud800-\udfff]|\0\0|^\0|\0$|^$")


class RetrievalEvaluator:
    """Evaluates one query's ranking against its judgments (a port of ireval's RetrievalEvaluator).

    Parameters
    ----------
    query_id : str
        The query's identifier: any non-empty str, spaces and tabs included (``"laptop bag"``), without
        NUL or lone surrogates. Only writing it to a TREC file (:func:`~retrieval_eval.trec.write_run`)
        needs an id without whitespace.
    retrieved : list of Document
        The ranking, best first: list position is the rank (``Document.rank`` is not used to order).
    judgments : iterable of Judgment
        The query's relevance judgments. Documents not judged count as non-relevant.
    rel : int, default 1
        Relevance threshold of the binary measures: a judgment >= rel is relevant (trec_eval ``-l``).
        A NumPy integer is taken as the int it holds.

    Raises
    ------
    InvalidParameterError
        If ``rel`` is not an int >= 0 (checked first).
    InputFormatError
        If ``query_id`` is no id, or a document appears twice in ``retrieved`` or is judged twice.
    TypeError
        If ``retrieved`` is not a list or tuple of Document, or a judgment is not a Judgment.

    Examples
    --------
    >>> ev = RetrievalEvaluator("q1", [Document("a"), Document("b"), Document("c")],
    ...                         [Judgment("a", 1), Judgment("c", 1), Judgment("d", 1)])
    >>> round(ev.average_precision(), 4), ev.precision(2), ev.reciprocal_rank()
    (0.5556, 0.5, 1.0)
    >>> [d.doc_id for d in ev.relevant_missed_documents()]
    ['d']
    """

    #: trec_eval's precision cutoffs, ireval's ``getFixedPoints()``.
    FIXED_POINTS: tuple[int, ...] = P_CUTOFFS
    #: The 11 recall levels of :meth:`interpolated_precision`.
    RECALL_POINTS: tuple[float, ...] = RECALL_POINTS

    def __init__(
        self, query_id: str, retrieved: Sequence[Document], judgments: Iterable[Judgment], *, rel: int = 1
    ) -> None:
        rel = _check_rel("RetrievalEvaluator", rel)
        problem = id_problem(query_id)
        if problem is not None:
            raise InputFormatError(f"'query_id' {problem}")
        if not isinstance(retrieved, (list, tuple)):
            raise InputTypeError(
                f"'retrieved' must be a list of Document in rank order; got {type(retrieved).__name__}"
            )
        if isinstance(judgments, (str, bytes, Mapping)):
            raise InputTypeError(f"'judgments' must be an iterable of Judgment; got {type(judgments).__name__}")
        judgments = list(judgments)
        for position, doc in enumerate(retrieved):
            if not isinstance(doc, Document):
                _reject_item(query_id, f"'retrieved'[{position}]", Document, doc)
        for position, judgment in enumerate(judgments):
            if not isinstance(judgment, Judgment):
                _reject_item(query_id, f"'judgments' item {position}", Judgment, judgment)
        run = RunColumns(
            query_ids=np.asarray([query_id] * len(retrieved), dtype=str),
            doc_ids=np.asarray([d.doc_id for d in retrieved], dtype=str),
            scores=np.asarray([np.nan if d.score is None else d.score for d in retrieved], dtype=np.float64),
            lines=np.arange(1, len(retrieved) + 1, dtype=np.int64),
            origin=f"retrieved list of query {query_id!r}", unit="position",
        )
        qrels = QrelsColumns(
            query_ids=np.asarray([query_id] * len(judgments), dtype=str),
            doc_ids=np.asarray([j.doc_id for j in judgments], dtype=str),
            relevance=np.asarray([j.relevance for j in judgments], dtype=np.int64),
            lines=np.arange(1, len(judgments) + 1, dtype=np.int64),
            origin=f"judgments of query {query_id!r}", unit="item",
        )
        batch, _ = build_batch(qrels, run, order="given", queries=[query_id])
        self._init(batch, rel)

    @classmethod
    def _from_batch(cls, batch: RankedBatch, rel: int) -> RetrievalEvaluator:
        evaluator = cls.__new__(cls)
        evaluator._init(batch, rel)
        return evaluator

    def _init(self, batch: RankedBatch, rel: int) -> None:
        rel = _check_rel("RetrievalEvaluator", rel)
        if batch.n_queries != 1:
            raise ValueError(f"a RetrievalEvaluator holds exactly one query; got {batch.n_queries}")
        self._batch = batch
        self.rel = rel
        self._scores: dict[Measure, float] = {}

    def __repr__(self) -> str:
        if not hasattr(self, "_batch"):  # a constructor that raised (a debugger may still show it)
            return "RetrievalEvaluator(<not built>)"
        retrieved, judged = int(self._batch.num_ret[0]), len(self._batch.judged_relevance)
        return (
            f"RetrievalEvaluator(query_id={self.query_id!r}, retrieved={retrieved} document{'' if retrieved == 1 else 's'}, "
            f"judged={judged} document{'' if judged == 1 else 's'})"
        )

    # ------------------------------------------------------------------------------ any measure
    @property
    def query_id(self) -> str:
        """The query's identifier (ireval's ``queryName()``)."""
        return self._batch.query_ids[0]

    def score(self, measure: MeasureLike) -> float:
        """The value of any numeric catalogue measure, by string or :class:`Measure`.

        The one text measure, ``relstring``, has no value: ask :meth:`text` for it.

        Examples
        --------
        >>> ev = RetrievalEvaluator("q", [Document("a"), Document("b")], [Judgment("b", 2)])
        >>> ev.score("RR"), ev.score("P(rel=2)@2"), ev.score("ndcg_cut_1")
        (0.5, 0.5, 0.0)
        """
        parsed = parse(measure, rel=self.rel)
        if parsed not in self._scores:
            self._scores[parsed] = float(compute(self._batch, parsed)[0])
        return self._scores[parsed]

    def text(self, measure: MeasureLike) -> str:
        """The string of a text measure (``relstring``: one judgment character per retrieved document).

        Examples
        --------
        >>> ev = RetrievalEvaluator("q", [Document("a"), Document("b"), Document("c")], [Judgment("b", 2)])
        >>> ev.text("relstring")
        '-2-'
        """
        return compute_text(self._batch, parse(measure, rel=self.rel))[0]

    # ------------------------------------------------------------------------ the ireval methods
    def average_precision(self) -> float:
        """AP: (1/R) * sum of m / r_m over the relevant retrieved documents; 0 when R = 0."""
        return self.score(AP())

    def binary_preference(self) -> float:
        """Bpref (trec_eval's variant, see the conventions page); 0 when R = 0."""
        return self.score(Bpref())

    def normalized_discounted_cumulative_gain(self, k: int | None = None, *, dcg: str = "log2") -> float:
        """nDCG over the whole ranking, or nDCG@k; linear gain unless ``dcg='exp-log2'``."""
        measure = nDCG(dcg=dcg)
        return self.score(measure if k is None else measure @ _check_cutoff("ndcg", k))

    ndcg = normalized_discounted_cumulative_gain

    def precision(self, k: int) -> float:
        """P@k = relevant in the top k / k (short rankings are padded with non-relevant)."""
        return self.score(P @ _check_cutoff("precision", k))

    def recall(self, k: int) -> float:
        """R@k = relevant in the top k / R; 0 when R = 0."""
        return self.score(R @ _check_cutoff("recall", k))

    def r_precision(self) -> float:
        """Precision at rank R; 0 when R = 0."""
        return self.score(Rprec())

    def reciprocal_rank(self) -> float:
        """1 / rank of the first relevant document; 0 if none is retrieved."""
        return self.score(RR())

    def relevant_retrieved(self, k: int | None = None) -> int:
        """Number of relevant documents in the top k (in the whole ranking when k is None).

        ``k = 0`` is the empty top: 0, as ireval's ``relevantRetrieved(0)``. A negative ``k`` raises
        :class:`InvalidParameterError`.

        Examples
        --------
        >>> ev = RetrievalEvaluator("q", [Document("a"), Document("b")], [Judgment("a", 1)])
        >>> ev.relevant_retrieved(0), ev.relevant_retrieved(1), ev.relevant_retrieved()
        (0, 1, 1)
        """
        if k is None:
            return int(self._batch.n_relevant_retrieved(self.rel)[0])
        depth = int(_DEPTH.check("relevant_retrieved", "k", k, allow_none=False))
        if depth == 0:
            return 0
        return int(self._batch.relevant_at(depth, self.rel)[0])

    @classmethod
    def fixed_points(cls) -> list[int]:
        """The precision cutoffs 5, 10, 15, 20, 30, 100, 200, 500, 1000 (ireval's ``getFixedPoints``)."""
        return list(cls.FIXED_POINTS)

    def precision_at_fixed_points(self) -> list[float]:
        """P@k for each of :meth:`fixed_points`."""
        return [self.precision(k) for k in self.FIXED_POINTS]

    def interpolated_precision(self) -> list[float]:
        """Interpolated precision at recall 0.0, 0.1, ..., 1.0 (trec_eval 10's cut-off rule)."""
        return [self.score(IPrec @ point) for point in self.RECALL_POINTS]

    # --------------------------------------------------------------------------- document lists
    def _documents(self, mask: np.ndarray) -> list[Document]:
        batch = self._batch
        rows = np.flatnonzero(mask)
        return [
            Document(batch.doc_id(int(i)), int(batch.rank[i]),
                     None if np.isnan(batch.scores[i]) else float(batch.scores[i]))
            for i in rows
        ]

    def retrieved_documents(self) -> list[Document]:
        """The ranking, as Documents with ``rank`` = position."""
        return self._documents(np.ones(len(self._batch.labels), dtype=bool))

    def relevant_retrieved_documents(self) -> list[Document]:
        """The relevant documents of the ranking, in rank order."""
        return self._documents(self._batch.relevant(self.rel))

    def irrelevant_retrieved_documents(self) -> list[Document]:
        """Retrieved documents that are not relevant: judged non-relevant or unjudged, in rank order."""
        return self._documents(~self._batch.relevant(self.rel))

    def judged_irrelevant_retrieved_documents(self) -> list[Document]:
        """Retrieved documents judged non-relevant (0 <= judgment < rel), in rank order."""
        return self._documents(self._batch.judged_nonrelevant(self.rel))

    def relevant_missed_documents(self) -> list[Document]:
        """Relevant judged documents the ranking never returned, by doc_id, with ``rank=None``."""
        batch = self._batch
        retrieved = np.isin(batch.judged_doc_ids, batch.doc_ids)
        relevant = batch.judged_relevance >= max(self.rel, 0)
        return [Document(id_text(doc)) for doc in np.sort(batch.judged_doc_ids[relevant & ~retrieved])]

    def relevant_missed_judgments(self) -> list[Judgment]:
        """The relevant documents the ranking never returned, with their grades: highest grade first,
        then by doc_id (the documents of :meth:`relevant_missed_documents`, in another order).

        Examples
        --------
        >>> ev = RetrievalEvaluator("q", [Document("a")], [Judgment("a", 1), Judgment("b", 1),
        ...                                                Judgment("c", 3), Judgment("d", 0)])
        >>> ev.relevant_missed_judgments()
        [Judgment(doc_id='c', relevance=3), Judgment(doc_id='b', relevance=1)]
        """
        batch = self._batch
        retrieved = np.isin(batch.judged_doc_ids, batch.doc_ids)
        relevant = batch.judged_relevance >= max(self.rel, 0)
        rows = np.flatnonzero(relevant & ~retrieved)  # judged rows are in input order
        rows = rows[np.lexsort((batch.judged_doc_ids[rows], -batch.judged_relevance[rows]))]
        return [Judgment(id_text(batch.judged_doc_ids[i]), int(batch.judged_relevance[i])) for i in rows]

    def retrieved_judgments(self) -> list[int | None]:
        """The qrels value of each retrieved document, in rank order (as :meth:`retrieved_documents`):
        its grade, a negative value as the qrels give it, or None when the qrels do not judge it.

        Examples
        --------
        >>> ev = RetrievalEvaluator("q", [Document("a"), Document("b"), Document("c")],
        ...                         [Judgment("a", 2), Judgment("c", -1), Judgment("d", 1)])
        >>> ev.retrieved_judgments()
        [2, None, -1]
        """
        batch = self._batch
        judged, docs = batch.judged_doc_ids, batch.doc_ids
        if not len(judged):
            return [None] * len(docs)
        by_id = np.argsort(judged, kind="stable")  # judged rows are in input order: search them sorted
        at = by_id[np.minimum(np.searchsorted(judged[by_id], docs), len(judged) - 1)]
        found = judged[at] == docs
        return [int(v) if f else None for v, f in zip(batch.judged_relevance[at].tolist(), found.tolist())]

    def judgment(self, doc_id: str) -> int | None:
        """The query's judgment of ``doc_id``: its grade, or None if the qrels do not judge it.

        A negative value is returned as the qrels give it: trec_eval's "pooled, but not judged".
        With subtopic qrels (``subtopics=True``) it is the document's largest value, as every
        measure but the diversity ones sees it.

        Examples
        --------
        >>> ev = RetrievalEvaluator("q", [Document("a"), Document("b")], [Judgment("a", 2), Judgment("c", -1)])
        >>> ev.judgment("a"), ev.judgment("b"), ev.judgment("c")
        (2, None, -1)
        """
        check_id(doc_id, "'doc_id'")
        ids = self._batch.judged_doc_ids
        key: str | bytes = id_bytes(doc_id) if ids.dtype.kind in "SO" else doc_id  # "O": long ids, as bytes
        found = np.flatnonzero(ids == key)
        return int(self._batch.judged_relevance[found[0]]) if found.size else None

    def relevant_documents(self) -> list[Document]:
        """All relevant documents: the retrieved ones in rank order, then the missed ones."""
        return self.relevant_retrieved_documents() + self.relevant_missed_documents()

    def judgments(self) -> list[Judgment]:
        """The query's judgments, by doc_id."""
        batch = self._batch
        by_id = np.argsort(batch.judged_doc_ids, kind="stable")  # judged rows are in input order
        return [Judgment(id_text(doc), int(rel))
                for doc, rel in zip(batch.judged_doc_ids[by_id], batch.judged_relevance[by_id])]


class SetEvaluator(Mapping[str, RetrievalEvaluator]):
    """Evaluates many queries at once (a port of ireval's SetRetrievalEvaluator).

    It is a mapping from query id to that query's :class:`RetrievalEvaluator`, iterated in trec_eval's
    order (byte order of the ids). Every measure is computed for all queries in one vectorised pass.

    Build it with :meth:`from_trec` (files), :meth:`from_dict` (pytrec_eval-style dicts) or from
    existing evaluators.

    Examples
    --------
    >>> runs = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}},
    ...                               {"q1": {"a": 2.0, "b": 1.0}, "q2": {"x": 1.0, "c": 0.5}})
    >>> runs.mean("AP"), runs.per_query("RR")
    (0.75, {'q1': 1.0, 'q2': 0.5})
    >>> runs["q2"].relevant_retrieved_documents()
    [Document(doc_id='c', rank=2, score=0.5)]
    """

    def __init__(self, evaluators: Iterable[RetrievalEvaluator], *, rel: int | None = None) -> None:
        if rel is not None:
            rel = _check_rel("SetEvaluator", rel)
        evaluators = list(evaluators)
        for ev in evaluators:
            if not isinstance(ev, RetrievalEvaluator):
                raise InputTypeError(f"SetEvaluator takes RetrievalEvaluators; got {type(ev).__name__}")
        levels = {ev.rel for ev in evaluators}
        if rel is None:
            if len(levels) > 1:
                raise ValueError(f"the evaluators use different relevance thresholds {sorted(levels)}; pass rel=")
            rel = levels.pop() if levels else 1
        qids = [ev.query_id for ev in evaluators]
        if len(set(qids)) != len(qids):
            repeated = sorted({q for q in qids if qids.count(q) > 1})
            raise InputFormatError(f"query ids must be unique; repeated: {', '.join(repeated)}")

        def gather(rows: str) -> tuple[np.ndarray, ...]:
            parts = []
            for ev in evaluators:
                b = ev._batch
                ids = b.doc_ids if rows == "ranked" else b.judged_doc_ids
                parts.append((np.full(len(ids), ev.query_id, dtype=object),
                              np.char.decode(ids, "utf-8", "surrogateescape") if ids.dtype.kind == "S" else ids,
                              b.scores if rows == "ranked" else b.judged_relevance))
            if not parts:
                return np.asarray([], dtype=str), np.asarray([], dtype=str), np.asarray([])
            return tuple(np.concatenate([p[i] for p in parts]).astype(str if i < 2 else None) for i in range(3))

        run_q, run_d, run_s = gather("ranked")
        qrels_q, qrels_d, qrels_r = gather("judged")
        run = RunColumns(run_q, run_d, run_s.astype(np.float64), np.arange(1, len(run_q) + 1))
        qrels = QrelsColumns(qrels_q, qrels_d, qrels_r.astype(np.int64), np.arange(1, len(qrels_q) + 1))
        batch, _ = build_batch(qrels, run, order="given", queries=np.asarray(qids, dtype=str))
        self._init(batch, QuerySetReport([], []), rel, run_id="")

    def _init(self, batch: RankedBatch, report: QuerySetReport, rel: int, run_id: str) -> None:
        rel = _check_rel("SetEvaluator", rel)
        self._batch = batch
        self._report = report
        self.rel = rel
        self.run_id = run_id
        self._values: dict[Measure, FloatArray] = {}

    @cached_property
    def _index(self) -> dict[str, int]:  # made on first use: a batch may hold millions of queries
        return {qid: i for i, qid in enumerate(self._batch.query_ids)}

    @classmethod
    def from_columns(
        cls, qrels: QrelsColumns, run: RunColumns | RunHandoff, *, rel: int = 1, order: Order = "score",
        max_depth: int | None = None, judged_only: bool = False, duplicates: Duplicates = "error",
        complete: bool = True,
    ) -> SetEvaluator:
        """Build from columnar judgments and results (what the TREC readers produce).

        A run in a ``RunHandoff`` is one nobody else holds (just read): its columns are freed while
        the evaluation is built, so a large run does not need its memory twice.
        """
        max_depth = _check_max_depth(max_depth)
        check_duplicates_option(duplicates)
        return cls._built(qrels, run, rel=rel, order=order, max_depth=max_depth, judged_only=judged_only,
                          duplicates=duplicates, complete=complete)

    @classmethod
    def _built(cls, qrels: QrelsColumns, run: RunColumns | RunHandoff, *, rel: int, **options: Any) -> SetEvaluator:
        run_id = run.run_id
        batch, report = build_batch(qrels, run, **options)
        evaluator = cls.__new__(cls)
        evaluator._init(batch, report, rel, run_id)
        return evaluator

    @classmethod
    def from_trec(
        cls, qrels: str | os.PathLike[str] | Any, run: str | os.PathLike[str] | Any, *, rel: int = 1,
        max_depth: int | None = None, judged_only: bool = False, duplicates: Duplicates = "error",
        complete: bool = True, order: str = "score", subtopics: bool = False,
    ) -> SetEvaluator:
        """Read a TREC qrels file and a TREC run file (paths, ``.gz`` paths or open files).

        Parameters
        ----------
        rel : int, default 1
            Relevance threshold of the binary measures (trec_eval ``-l``).
        max_depth : int, optional
            Evaluate only the top ``max_depth`` documents of each ranking (trec_eval ``-M``): an int
            >= 0 (a NumPy integer too). Another type (``1.5``, ``'3'``) raises :class:`InputTypeError`,
            a negative value :class:`InputFormatError`.
        judged_only : bool, default False
            Drop unjudged documents before ranking (trec_eval ``-J``).
        duplicates : {"error", "first"}, default "error"
            What a document listed twice for a query does: raise, or keep its first line.
        complete : bool, default True
            Score qrels queries the run lacks as empty rankings (trec_eval ``-c``). With False they
            are left out of every mean.
        order : {"score", "file", "rank"}, default "score"
            How each query is ranked: by score descending with ties by doc_id descending (trec_eval),
            in file order, or by the file's rank column (which must then hold integers).
        subtopics : bool, default False
            Read the qrels' second column as the subtopic (intent) id of each judgment, as the
            diversity measures (``alpha_nDCG``, ``ERR_IA``, ...) need. A document may then be judged
            once per subtopic; every other measure sees its largest value.

        Raises
        ------
        TrecFormatError
            A malformed line, with ``path:line``.
        InputFormatError
            A duplicate document or judgment.
        """
        from ..io.trec import read_qrels_columns, read_run_columns

        options = _read_options(max_depth, duplicates, order)
        # Nobody else holds the run just read: handed over, its columns are freed as the build uses them.
        return cls._built(
            read_qrels_columns(qrels, with_subtopics=subtopics), RunHandoff(read_run_columns(run, with_ranks=order == "rank")), rel=rel,
            judged_only=judged_only, complete=complete, **options,
        )

    @classmethod
    def from_log(
        cls, log: str | os.PathLike[str] | Any, *, rel: int = 1, max_depth: int | None = None,
        judged_only: bool = False, duplicates: Duplicates = "error", delimiter: str = "auto",
        columns: tuple[str, str, str, str] | None = None,
    ) -> SetEvaluator:
        """Read a labelled log of ``group item score label`` rows: a run and its judgments in one table.

        Each group (a query or a session) is ranked by score, ties by item id descending as in
        trec_eval; each row's label is its judgment. Every measure then works on the log: AUC and
        GAUC (which compare scores) as well as nDCG@10 or RR (which use the ranking). Formats are
        described in :mod:`retrieval_eval.logs`: TSV, CSV, whitespace-separated text, any of them
        ``.gz``, and ``.parquet`` (with pyarrow; ``columns`` names its group, item, score and label
        columns, by default the first four).

        Examples
        --------
        >>> import io
        >>> log = io.StringIO("session item score click\\ns1 a 0.9 1\\ns1 b 0.4 0\\ns1 c 0.4 1\\ns2 d 0.3 1\\n")
        >>> clicks = SetEvaluator.from_log(log)
        >>> clicks.per_query("AUC"), clicks.aggregate("GAUC"), clicks.left_out("GAUC")
        ({'s1': 0.75, 's2': 0.0}, 0.75, ['s2'])
        """
        from ..io.logs import Delimiter, read_log_columns

        options = _read_options(max_depth, duplicates, "score")  # a log is ranked by its scores
        qrels, run = read_log_columns(log, delimiter=cast(Delimiter, delimiter), columns=columns)
        return cls._built(qrels, RunHandoff(run), rel=rel, judged_only=judged_only, complete=True, **options)

    @classmethod
    def from_arrow(
        cls, qrels: Any, run: Any, *, rel: int = 1, max_depth: int | None = None, judged_only: bool = False,
        duplicates: Duplicates = "error", complete: bool = True, order: str = "score",
        query_id: str = "query_id", doc_id: str = "doc_id", relevance: str = "relevance", score: str = "score",
        rank: str = "rank", subtopic: str | None = None,
    ) -> SetEvaluator:
        """Build from Arrow tables: ``query_id, doc_id, relevance`` judgments and ``query_id, doc_id, score`` results.

        Each may be a pyarrow Table, RecordBatch or RecordBatchReader, a pandas or polars DataFrame, or
        any object with ``__arrow_c_stream__`` (see :mod:`retrieval_eval.frames`). Ids are strings or
        integers (an integer id is its decimal string), relevance integers, scores numbers; a null is
        an error that names its row. The options are those of :meth:`from_trec`; ``query_id``,
        ``doc_id``, ``relevance`` and ``score`` name other columns, ``rank`` the rank column that
        ``order="rank"`` reads, ``subtopic`` the qrels column of subtopic ids (diversity measures).

        Examples
        --------
        >>> import pyarrow as pa
        >>> qrels = pa.table({"qid": [301, 301], "doc_id": ["a", "b"], "relevance": [1, 0]})
        >>> run = pa.table({"qid": [301, 301], "doc_id": ["a", "b"], "score": [0.2, 0.9]})
        >>> SetEvaluator.from_arrow(qrels, run, query_id="qid").per_query("RR")
        {'301': 0.5}

        Raises
        ------
        MissingExtraError
            Without pyarrow (``pip install 'retrieval_eval[parquet]'``).
        InputTypeError
            A column of the wrong type (strings for scores, floats for ids, ...), or an unknown input.
        InputFormatError
            A missing column, a null, an empty id, a NaN score, a duplicate document or judgment.
        """
        from ..io.frames import qrels_from_table, run_from_table

        options = _read_options(max_depth, duplicates, order)
        judged = qrels_from_table(qrels, query_id=query_id, doc_id=doc_id, relevance=relevance, subtopic=subtopic,
                                  origin="qrels table")
        # Handed over with no other reference, so that the build frees each column once used.
        ranked = RunHandoff(run_from_table(run, query_id=query_id, doc_id=doc_id, score=score,
                                           rank=rank if order == "rank" else None, origin="run table"))
        return cls._built(judged, ranked, rel=rel, judged_only=judged_only, complete=complete, **options)

    @classmethod
    def from_dataframe(
        cls, qrels: Any, run: Any, *, rel: int = 1, max_depth: int | None = None, judged_only: bool = False,
        duplicates: Duplicates = "error", complete: bool = True, order: str = "score",
        query_id: str = "query_id", doc_id: str = "doc_id", relevance: str = "relevance", score: str = "score",
        rank: str = "rank", subtopic: str | None = None,
    ) -> SetEvaluator:
        """Build from pandas or polars DataFrames (or pyarrow tables): the same as :meth:`from_arrow`.

        Examples
        --------
        >>> import pandas as pd
        >>> qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
        >>> run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [0.2, 0.9]})
        >>> SetEvaluator.from_dataframe(qrels, run).mean("AP")
        0.5
        """
        return cls.from_arrow(qrels, run, rel=rel, max_depth=max_depth, judged_only=judged_only,
                              duplicates=duplicates, complete=complete, order=order, query_id=query_id,
                              doc_id=doc_id, relevance=relevance, score=score, rank=rank, subtopic=subtopic)

    @classmethod
    def from_parquet(
        cls, qrels: str | os.PathLike[str], run: str | os.PathLike[str], *, rel: int = 1,
        max_depth: int | None = None, judged_only: bool = False, duplicates: Duplicates = "error",
        complete: bool = True, order: str = "score", query_id: str = "query_id", doc_id: str = "doc_id",
        relevance: str = "relevance", score: str = "score", rank: str = "rank", subtopic: str | None = None,
    ) -> SetEvaluator:
        """Read a Parquet qrels file and a Parquet run file, with the columns of :meth:`from_arrow`.

        Only the named columns are read. The run id is the last row's ``run_id`` column when the run
        has one, else the file's name without its suffix. Errors name the file and the row
        (``run.parquet, row 12``), as :class:`TrecFormatError`.
        """
        from ..io.frames import read_parquet_qrels, read_parquet_run

        options = _read_options(max_depth, duplicates, order)
        judged = read_parquet_qrels(qrels, with_subtopics=subtopic is not None, query_id=query_id, doc_id=doc_id,
                                    relevance=relevance, subtopic=subtopic or "subtopic")
        # Handed over with no other reference, so that the build frees each column once used.
        ranked = RunHandoff(read_parquet_run(run, with_ranks=order == "rank", query_id=query_id, doc_id=doc_id,
                                             score=score, rank=rank))
        return cls._built(judged, ranked, rel=rel, judged_only=judged_only, complete=complete, **options)

    @classmethod
    def from_dict(
        cls, qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], *, rel: int = 1,
        max_depth: int | None = None, judged_only: bool = False, complete: bool = True,
    ) -> SetEvaluator:
        """Build from pytrec_eval-style dicts: ``{qid: {doc: relevance}}`` and ``{qid: {doc: score}}``.

        Each query is ranked by score descending, ties by doc_id descending (trec_eval's rule).

        Ids, relevance values and scores follow the rules of :class:`Document` and :class:`Judgment`:
        a score is a Python or NumPy int or float (not a bool, not a str such as ``'1.0'``, not NaN),
        a relevance a Python or NumPy int (or an integral float) that fits in int64.

        Raises
        ------
        InputTypeError
            If ``qrels`` or ``run`` (or one of their values) is not a mapping, an id is not a str, a
            score is not a number or a relevance not an int; the message names the entry.
        InputFormatError
            An empty id, a NaN score, a relevance beyond int64, or a negative ``max_depth``.
        """
        rel = _check_rel("SetEvaluator", rel)
        max_depth = _check_max_depth(max_depth)
        _check_nested(qrels, "qrels", "{doc_id: relevance}")
        _check_nested(run, "run", "{doc_id: score}")
        _check_ids(qrels, "qrels query id")
        _check_ids(run, "run query id")
        qrels_q = [q for q, docs in qrels.items() for _ in docs]
        qrels_d = [d for docs in qrels.values() for d in docs]
        run_q = [q for q, docs in run.items() for _ in docs]
        run_d = [d for docs in run.values() for d in docs]
        _check_ids(qrels_d, "qrels doc id")
        _check_ids(run_d, "run doc id")
        relevance = _dict_relevance(qrels)
        scores = _dict_scores(run)
        columns_q = QrelsColumns(
            np.asarray(qrels_q, dtype=str), np.asarray(qrels_d, dtype=str),
            relevance, np.arange(1, len(qrels_q) + 1), origin="qrels dict", unit="entry",
        )
        columns_r = RunColumns(
            np.asarray(run_q, dtype=str), np.asarray(run_d, dtype=str), scores,
            np.arange(1, len(run_q) + 1), origin="run dict", unit="entry",
        )
        return cls.from_columns(
            columns_q, columns_r, rel=rel, max_depth=max_depth, judged_only=judged_only, complete=complete,
        )

    # ------------------------------------------------------------------------------ the mapping
    def __getitem__(self, query_id: str) -> RetrievalEvaluator:
        try:
            index = self._index[query_id]
        except KeyError:
            raise KeyError(f"no query {query_id!r} in this evaluation") from None
        return RetrievalEvaluator._from_batch(self._batch.select([index]), self.rel)

    def __iter__(self) -> Iterator[str]:
        return iter(self._batch.query_ids)

    def __len__(self) -> int:
        return self._batch.n_queries

    def __repr__(self) -> str:
        if not hasattr(self, "_batch"):  # a constructor that raised (a debugger may still show it)
            return "SetEvaluator(<not built>)"
        return f"SetEvaluator({len(self)} {'query' if len(self) == 1 else 'queries'}, run_id={self.run_id!r})"

    def subset(self, query_ids: Iterable[str]) -> SetEvaluator:
        """The evaluation restricted to ``query_ids`` (in that order): its values and summaries cover them only.

        >>> runs = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}})
        >>> runs.mean("AP"), runs.subset(["q1"]).mean("AP")
        (0.5, 1.0)
        """
        wanted = list(query_ids)
        unknown = [q for q in wanted if q not in self._index]
        if unknown:
            raise KeyError(f"no query {unknown[0]!r} in this evaluation")
        subset = SetEvaluator.__new__(SetEvaluator)
        kept = set(wanted)
        report = QuerySetReport([q for q in self._report.missing_from_run if q in kept], self._report.not_judged)
        subset._init(self._batch.select([self._index[q] for q in wanted]), report, self.rel, self.run_id)
        return subset

    # --------------------------------------------------------------------------- the query set
    @property
    def query_ids(self) -> list[str]:
        """Evaluated queries, in trec_eval's order."""
        return list(self._batch.query_ids)

    @property
    def missing_from_run(self) -> list[str]:
        """Judged queries the run has no line for (scored as empty rankings unless left out)."""
        return list(self._report.missing_from_run)

    @property
    def not_judged(self) -> list[str]:
        """Run queries without any judgment: ignored, as in trec_eval."""
        return list(self._report.not_judged)

    @property
    def without_relevant(self) -> list[str]:
        """Evaluated queries with no relevant judgment (none >= ``rel``): their recall-oriented
        measures (AP, R-precision, recall, nDCG...) are 0, whatever the ranking."""
        return [self._batch.query_ids[i] for i in np.flatnonzero(self._batch.n_relevant(self.rel) == 0)]

    @property
    def only_unjudged(self) -> list[str]:
        """Queries whose judgments are all negative ("pooled but not judged"): nothing about them
        was judged at all. (trec_eval fails or reads stale data on these; every measure is 0 here.)"""
        batch = self._batch
        judged_rows = batch.judged_relevance >= 0
        if bool(judged_rows.all()):  # the usual qrels: no negative value, so no such query (no count per query)
            return []
        judged = batch.judged_count(judged_rows)
        present = np.diff(batch.judged_offsets) > 0
        return [batch.query_ids[i] for i in np.flatnonzero(present & (judged == 0))]

    # ------------------------------------------------------------------------------ the values
    def array(self, measure: MeasureLike) -> FloatArray:
        """Per-query values of ``measure`` as a NumPy array, in :attr:`query_ids` order.

        (``values()`` without an argument is the mapping's: the per-query evaluators.)
        """
        parsed = parse(measure, rel=self.rel)
        if parsed not in self._values:
            for _ in self._in_blocks([parsed], keep=True):  # computed (block by block at millions of queries), kept
                pass
        return self._values[parsed]

    def per_query(self, measure: MeasureLike) -> dict[str, float]:
        """``{query_id: value}`` for every evaluated query."""
        return dict(zip(self._batch.query_ids, self.array(measure).tolist()))

    def per_query_text(self, measure: MeasureLike) -> dict[str, str]:
        """``{query_id: string}`` of a text measure (``relstring``) for every evaluated query."""
        return dict(zip(self._batch.query_ids, compute_text(self._batch, parse(measure, rel=self.rel))))

    def _labelled(self, measures: MeasureList, keys: str, owner: str) -> list[tuple[Measure, str]]:
        """The numeric measures of ``measures`` (groups expanded) under the names ``keys`` asks for."""
        if not isinstance(keys, str):
            raise InputTypeError(f"{owner}: 'keys' must be a str, one of {', '.join(map(repr, _KEYS))}; "
                                 f"got {type(keys).__name__} {keys!r:.80}")
        if keys not in _KEYS:
            raise InputFormatError(f"{owner}: 'keys' must be one of {', '.join(map(repr, _KEYS))}; got {keys!r}")
        distinct = dict.fromkeys(m for m, _ in parse_list(measures, rel=self.rel, numeric=True))
        if keys == "canonical":
            return [(m, str(m)) for m in distinct]
        return [(m, self._trec_key(m)) for m in distinct]

    def _trec_key(self, measure: Measure) -> str:
        """trec_eval's name for ``measure`` when that name means this very measure here (``P_5`` is
        ``P@5`` at the evaluator's ``rel``, not ``P(rel=2)@5``); otherwise its canonical string. So
        two measures never share a key."""
        label = measure.trec_label
        if label is not None:
            try:
                if parse(label, rel=self.rel) == measure:
                    return label
            except RetrievalEvalError:  # a label the parser does not read back
                pass
        return str(measure)

    def evaluate(self, measures: MeasureList, *, keys: str = "canonical") -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}`` for every evaluated query: pytrec_eval's shape.

        Parameters
        ----------
        measures : measure-like, or an iterable of them
            Measure strings (``"nDCG@10"``, ``"map"``, ``"P_10"``), :class:`Measure` objects, and groups:
            ``"official"``, ``"all_trec"``, ``"set"``, or a trec_eval name with cut-offs (``"P"``,
            ``"ndcg_cut"``, ``"P.5,10"``), each standing for its measures as ``-m`` reads it. A
            group's text measure (``relstring`` in ``all_trec``) is left out: it has no value
            (:meth:`per_query_text` gives it); asked for alone it raises :class:`MeasureError`.
        keys : {"canonical", "trec"}, default "canonical"
            How each measure is named, one key per distinct measure (``map`` and ``AP`` are one).
            ``"canonical"``: its canonical string (``AP``, ``P@5``, ``nDCG@10``; with the
            evaluator's ``rel`` where it applies: ``P(rel=2)@5``). ``"trec"``: the name trec_eval
            prints for it (``map``, ``P_5``, ``ndcg_cut_10``: pytrec_eval's keys), or the canonical
            string for a measure trec_eval does not have.

        Returns
        -------
        dict
            Queries in :attr:`query_ids` order, measures in the order asked. The values are those of
            :meth:`per_query` (the summary over queries is :meth:`aggregate`'s).

        Examples
        --------
        >>> runs = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}},
        ...                               {"q1": {"a": 2.0, "b": 1.0}, "q2": {"x": 1.0, "c": 0.5}})
        >>> runs.evaluate(["map", "P.1,2"])
        {'q1': {'AP': 1.0, 'P@1': 1.0, 'P@2': 0.5}, 'q2': {'AP': 0.5, 'P@1': 0.0, 'P@2': 0.5}}
        >>> runs.evaluate(["recip_rank", "nDCG@2", "Judged@2"], keys="trec")["q2"]
        {'recip_rank': 0.5, 'ndcg_cut_2': 0.6309297535714575, 'Judged@2': 0.5}
        """
        labelled = self._labelled(measures, keys, "evaluate")
        if not labelled:
            return {query_id: {} for query_id in self._batch.query_ids}
        labels = [label for _, label in labelled]
        rows = zip(*[self.array(m).tolist() for m, _ in labelled])  # one tuple of values per query
        return {query_id: dict(zip(labels, row)) for query_id, row in zip(self._batch.query_ids, rows)}

    def to_dataframe(self, measures: MeasureList, *, keys: str = "canonical") -> Any:
        """A pandas DataFrame of per-query values: one row per query, one column per measure.

        The index is the query ids in :attr:`query_ids` order, named ``query_id``; the columns are
        named as :meth:`evaluate` names its keys (canonical measure strings by default) and hold
        float64. ``measures`` and ``keys`` are read as by :meth:`evaluate`. Needs pandas (the
        ``dataframe`` extra).

        Raises
        ------
        MissingExtraError
            Without pandas.

        Examples
        --------
        >>> runs = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}},
        ...                               {"q1": {"a": 2.0, "b": 1.0}, "q2": {"x": 1.0, "c": 0.5}})
        >>> table = runs.to_dataframe(["AP", "nDCG@2"])
        >>> table.index.name, list(table.index), list(table.columns)
        ('query_id', ['q1', 'q2'], ['AP', 'nDCG@2'])
        >>> table["AP"].tolist(), round(float(table.loc["q2", "nDCG@2"]), 4)
        ([1.0, 0.5], 0.6309)
        """
        try:
            import pandas as pd
        except ImportError:
            raise MissingExtraError(_NO_PANDAS) from None
        labelled = self._labelled(measures, keys, "to_dataframe")
        index = pd.Index(self._batch.query_ids, name="query_id", dtype=object)
        return pd.DataFrame({label: self.array(m) for m, label in labelled}, index=index,
                            columns=[label for _, label in labelled])

    def mean(self, measure: MeasureLike) -> float:
        """Arithmetic mean of ``measure`` over the evaluated queries (0.0 for an empty set).

        Only for the measures whose trec_eval summary is the arithmetic mean, where ``mean(m)`` equals
        :meth:`aggregate`. The others raise rather than return a number trec_eval does not print:
        ``mean("GMAP")`` would be the mean of the per-query APs, that is MAP.

        Raises
        ------
        MeasureError
            For a measure summarised otherwise: the counts (``NumQ``, ``NumRet``, ``NumRel``,
            ``NumRelRet``, ``NumNonRelJudgedRet``: summed), ``GMAP`` and ``GMBpref`` (geometric mean) and
            ``GAUC`` (weighted mean). :meth:`aggregate` returns their summary, and ``array(m).mean()``
            the arithmetic mean of their per-query values. Also for the text measure ``relstring``.

        Examples
        --------
        >>> runs = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}})
        >>> runs.mean("AP"), round(runs.aggregate("GMAP"), 6), runs.aggregate("NumRet")
        (0.5, 0.003162, 2.0)
        >>> runs.mean("GMAP")
        Traceback (most recent call last):
          ...
        retrieval_eval.measures.base.MeasureError: mean('GMAP'): the summary of GMAP is a geometric mean, not an arithmetic mean; aggregate('GMAP') returns it (array('GMAP').mean() is the arithmetic mean of the per-query values)
        """
        parsed = parse(measure, rel=self.rel)
        how = _NOT_A_MEAN.get(parsed.definition.aggregate)
        if how is not None:
            given = measure if isinstance(measure, str) else str(measure)
            raise MeasureError(
                f"mean({given!r}): the summary of {parsed.definition.name} is {how}, not an arithmetic mean; "
                f"aggregate({given!r}) returns it (array({given!r}).mean() is the arithmetic mean of the "
                "per-query values)"
            )
        return self.aggregate(parsed)

    def geometric_mean(self, measure: MeasureLike) -> float:
        """exp(mean(log(max(value, 1e-5)))): trec_eval's gm_map rule applied to any measure."""
        return geometric_mean(self.array(measure))

    def aggregate(self, measure: MeasureLike) -> float:
        """The summary trec_eval prints: a sum for counts, the geometric mean for GMAP and GMBpref, else
        the mean (a weighted mean for GAUC, over the queries :meth:`left_out` does not name).

        It equals :meth:`mean` for every measure that :meth:`mean` accepts."""
        parsed = parse(measure, rel=self.rel)
        return parsed.definition.aggregate_values(self.array(parsed), summary_weights(self._batch, parsed),
                                                  pool_share(self._batch, parsed))

    def _summaries(self, measures: Sequence[MeasureLike], *, keep: bool = False) -> list[float]:
        """:meth:`aggregate` of each of ``measures`` (none of them a text measure), computed together.

        Without ``keep`` the per-query arrays are not kept: evaluate without -q prints only the
        summaries, and kept they would add 8 bytes per query and measure (2.4 GB for the 30 official
        measures at 10 M queries). With ``keep`` they stay, as :meth:`array` keeps them.
        """
        parsed = [parse(measure, rel=self.rel) for measure in measures]
        summaries = {measure: Summary(measure.definition) for measure in parsed}
        for part, values in self._in_blocks(list(summaries), keep=keep):
            Summary.add_all(list(summaries.values()), [values[measure] for measure in summaries],
                            [summary_weights(part, measure) for measure in summaries],
                            [pool_share(part, measure) for measure in summaries])
        return [summaries[measure].value() for measure in parsed]

    def _in_blocks(self, measures: Sequence[Measure], *,
                   keep: bool) -> Iterator[tuple[RankedBatch, dict[Measure, FloatArray]]]:
        """Each block of queries with the per-query values of ``measures`` on it, in query order; with
        ``keep``, the values of every block are kept afterwards.

        A batch of very many queries (millions of sessions of a few documents) is evaluated a block at
        a time (see :data:`QUERIES_PER_BLOCK`): each block's per-query caches go before the next
        block's are made, so the memory does not grow with every measure (the caches took 1.1 GB at
        10 M queries), and the blocks are computed side by side on the CPUs the process may use. Every
        measure is computed query by query, so the values are the same numbers as on the whole batch
        (tests/test_blocks.py checks every measure).
        """
        batch = self._batch
        workers = _threads.workers()  # one block per thread, at most _threads.MAX_WORKERS of them
        blocks = batch.query_blocks(QUERIES_PER_THREAD_BLOCK if workers else QUERIES_PER_BLOCK)

        def evaluated(start: int, stop: int) -> tuple[RankedBatch, dict[Measure, FloatArray]]:
            part = batch if len(blocks) == 1 else batch.block(start, stop)
            values: dict[Measure, FloatArray] = {}
            for measure in measures:
                if measure not in values:
                    known = self._values.get(measure)
                    values[measure] = known[start:stop] if known is not None else compute(part, measure)
            return part, values

        kept: dict[Measure, FloatArray] = {}
        for (start, stop), (part, values) in zip(blocks, _threads.in_order(evaluated, blocks, workers)):
            if keep:
                for measure, array in values.items():
                    if measure in self._values:
                        continue
                    if len(blocks) == 1:
                        kept[measure] = array
                    else:
                        kept.setdefault(measure, np.empty(batch.n_queries))[start:stop] = array
            yield part, values
        self._values.update(kept)

    def left_out(self, measure: MeasureLike) -> list[str]:
        """Queries the summary of ``measure`` leaves out (weight 0): GAUC's single-class queries.

        Empty for every measure whose summary counts each query (all but GAUC).

        >>> runs = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}},
        ...                               {"q1": {"a": 0.9, "b": 0.2}, "q2": {"c": 0.5}})
        >>> runs.per_query("GAUC"), runs.aggregate("GAUC"), runs.left_out("GAUC")
        ({'q1': 1.0, 'q2': 0.0}, 1.0, ['q2'])
        """
        weights = self.summary_weights(measure)
        if weights is None:
            return []
        return [self._batch.query_ids[i] for i in np.flatnonzero(weights == 0)]

    def summary_weights(self, measure: MeasureLike) -> FloatArray | None:
        """Each query's weight in the summary of a weighted measure (GAUC: 1, its scored documents or
        its positives, 0 for a single-class query), in :attr:`query_ids` order; None for a measure
        whose summary counts every query alike.

        >>> runs = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"d": 1}},
        ...                               {"q1": {"a": 0.9, "b": 0.2, "c": 0.1}, "q2": {"d": 0.5}})
        >>> runs.summary_weights("GAUC(weight='impressions')").tolist(), runs.summary_weights("AP") is None
        ([3.0, 0.0], True)
        """
        return summary_weights(self._batch, parse(measure, rel=self.rel))

    @property
    def num_queries(self) -> int:
        return len(self)

    def num_retrieved(self) -> int:
        """Documents retrieved, summed over queries."""
        return int(self.array("NumRet").sum())

    def num_relevant(self) -> int:
        """Relevant judgments (R), summed over queries."""
        return int(self.array("NumRel").sum())

    def num_relevant_retrieved(self) -> int:
        """Relevant documents retrieved, summed over queries."""
        return int(self.array("NumRelRet").sum())
