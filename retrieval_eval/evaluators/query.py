"""RetrievalEvaluator: one query's ranking against its judgments, a view over a batch of one query.

It computes every measure with the same vectorised kernels (:mod:`retrieval_eval.measures`) as
:class:`~retrieval_eval.evaluators.set.SetEvaluator`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
from attrs import evolve

from ..engine.batch import RankedBatch
from ..engine.build import build_batch, one_query_batch
from ..engine.ties import check_ties
from ..io.dicts import columns_from_documents
from ..measures import (
    AP,
    RR,
    Bpref,
    IPrec,
    Measure,
    P,
    R,
    Rprec,
    compute_text,
    nDCG,
    parse,
)
from ..measures.registry import compute_one
from ..measures.trec_table import P_CUTOFFS, RECALL_POINTS
from ..model import (
    Document,
    Judgment,
    check_id,
    id_bytes,
    id_text,
    to_relevance,
    unranked_documents,
)
from .one_query import OneQuery, direct_batch, missed_ids
from .options import _DEPTH, _check_cutoff, _check_rel
from .preferences import preference_list

#: Whether queries take :func:`.one_query.direct_batch` or :func:`~..engine.build.one_query_batch` (False
#: only to test the general path).
_SMALL_PATH = True

#: The measures of the ireval methods, parsed: by (method and arguments, rel); at most _PARSED_MAX.
_PARSED: dict[tuple[object, ...], Measure] = {}
_PARSED_MAX = 4096

MeasureLike = str | Measure
#: One measure-like, or several; a group (``official``, ``P``, ``ndcg_cut``) stands for its measures.
MeasureList = MeasureLike | Iterable[MeasureLike]


def _batch_of(query_id: str, retrieved: Sequence[Document], judgments: Iterable[Judgment], ties: str = "trec_eval",
              ) -> tuple[RankedBatch, OneQuery | None]:
    """The batch of one query's ranking and judgments, with its ids as lists when read straight from them."""
    if ties == "expected":  # the rows stay in list order; the measures take their mean over tie orders
        return evolve(_batch_of(query_id, retrieved, judgments)[0], ties="expected"), None
    if _SMALL_PATH and not isinstance(judgments, (str, bytes, Mapping)):  # (those: the columns name them)
        judgments = list(judgments)  # (an iterator is read once, here)
        one = direct_batch(query_id, retrieved, judgments)
        if one is not None:
            return one, one
    qrels, run = columns_from_documents(query_id, retrieved, judgments)
    batch = one_query_batch(query_id, qrels, run) if _SMALL_PATH else None
    if batch is None:
        batch, _ = build_batch(qrels, run, order="given", queries=[query_id])
    return batch, None


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
    ties : {"trec_eval", "rank", "expected"}, default "trec_eval"
        ``"expected"``: neighbours of equal score tie, each measure its mean over their orders.

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
    preferences = preference_list  #: ``preferences()``: the query's preference judgments, each kept or not

    def __init__(self, query_id: str, retrieved: Sequence[Document], judgments: Iterable[Judgment], *, rel: int = 1,
                 ties: str = "trec_eval") -> None:
        rel = _check_rel("RetrievalEvaluator", rel)
        batch, one = _batch_of(query_id, retrieved, judgments, check_ties(ties))
        self._hold(batch, rel)  # (rel checked above)
        self._one: OneQuery | None = one  # the ids as lists, when the batch was read straight from them

    @classmethod
    def _from_batch(cls, batch: RankedBatch, rel: int) -> RetrievalEvaluator:
        evaluator = cls.__new__(cls)
        evaluator._init(batch, rel)
        return evaluator

    def _init(self, batch: RankedBatch, rel: int) -> None:
        self._hold(batch, _check_rel("RetrievalEvaluator", rel))

    def _hold(self, batch: RankedBatch, rel: int) -> None:
        if batch.n_queries != 1:
            raise ValueError(f"a RetrievalEvaluator holds exactly one query; got {batch.n_queries}")
        self._batch = batch
        self.rel = rel
        self._scores: dict[Measure, float] = {}
        self._one = None

    def __repr__(self) -> str:
        if not hasattr(self, "_batch"):  # a constructor that raised (a debugger may still show it)
            return "RetrievalEvaluator(<not built>)"
        retrieved, judged = int(self._batch.num_ret[0]), len(self._batch.judged_relevance)
        return (f"RetrievalEvaluator(query_id={self.query_id!r}, retrieved={retrieved} document{'' if retrieved == 1 else 's'}, "
                f"judged={judged} document{'' if judged == 1 else 's'})")

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
        return self._value(parse(measure, rel=self.rel))

    def _value(self, parsed: Measure) -> float:
        value = self._scores.get(parsed)  # (one lookup of a measure computed before)
        return self._scores.setdefault(parsed, compute_one(self._batch, parsed)) if value is None else value

    def _method_value(self, key: tuple[object, ...], make: Callable[[], MeasureLike]) -> float:
        """The value of the measure ``make()`` stands for, ``key`` naming it with its arguments (and
        their types, so that ``True`` is not taken for ``1``): each parsed once per process, not per
        call, since parsing costs as much as computing a short query's value."""
        cache_key = (key, self.rel)
        parsed = _PARSED.get(cache_key)
        if parsed is None:
            parsed = parse(make(), rel=self.rel)
            if len(_PARSED) < _PARSED_MAX:
                _PARSED[cache_key] = parsed
        return self._value(parsed)

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
        return self._method_value(("AP",), AP)

    def binary_preference(self) -> float:
        """Bpref (trec_eval's variant, see the conventions page); 0 when R = 0."""
        return self.score(Bpref())

    def normalized_discounted_cumulative_gain(self, k: int | None = None, *, dcg: str = "log2") -> float:
        """nDCG over the whole ranking, or nDCG@k; linear gain unless ``dcg='exp-log2'``."""
        def make() -> Measure:
            measure = nDCG(dcg=dcg)
            return measure if k is None else measure @ _check_cutoff("ndcg", k)

        return self._method_value(("nDCG", type(k), k, type(dcg), dcg), make)

    ndcg = normalized_discounted_cumulative_gain

    def precision(self, k: int) -> float:
        """P@k = relevant in the top k / k (short rankings are padded with non-relevant)."""
        return self._method_value(("P", type(k), k), lambda: P @ _check_cutoff("precision", k))

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
        if self._one is not None:
            return unranked_documents(missed_ids(self._one, self.rel))  # (ids of Judgments: checked)
        return [Document(id_text(doc)) for doc in sorted(self._missed())]

    def _missed(self) -> list[bytes]:
        """The relevant judged ids that the ranking lacks, in judged order. A ranked document judged
        relevant is labelled with its grade, so it is one of the relevant hits: a set of those few ids
        is enough, where a set of every ranked id would cost a step per ranked document."""
        batch = self._batch
        threshold = max(self.rel, 0)
        ranked = set(batch.doc_ids.take(batch.hits(threshold).row).tolist())
        relevant = batch.judged_doc_ids[batch.judged_relevance >= threshold].tolist()
        return [doc for doc in relevant if doc not in ranked]

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
        return [Judgment(id_text(batch.judged_doc_ids[i]), batch.judged_relevance[i]) for i in rows]

    def retrieved_judgments(self) -> list[int | float | None]:
        """The qrels value of each retrieved document, in rank order (as :meth:`retrieved_documents`):
        its grade, a negative value as the qrels give it, or None when the qrels do not judge it. A
        float grade that is not integral is a float (2.5), any other grade an int (as :class:`Judgment`).

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
        grade = to_relevance if batch.float_grades else int  # (2.0 in a column of float grades is 2)
        return [grade(v) if f else None for v, f in zip(batch.judged_relevance[at].tolist(), found.tolist())]

    def judgment(self, doc_id: str) -> int | float | None:
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
        return to_relevance(self._batch.judged_relevance[found[0]]) if found.size else None

    def relevant_documents(self) -> list[Document]:
        """All relevant documents: the retrieved ones in rank order, then the missed ones."""
        return self.relevant_retrieved_documents() + self.relevant_missed_documents()

    def judgments(self) -> list[Judgment]:
        """The query's judgments, by doc_id."""
        batch = self._batch
        by_id = np.argsort(batch.judged_doc_ids, kind="stable")  # judged rows are in input order
        return [Judgment(id_text(doc), rel)  # (Judgment makes a grade an int or a float, by its rule)
                for doc, rel in zip(batch.judged_doc_ids[by_id], batch.judged_relevance[by_id])]
