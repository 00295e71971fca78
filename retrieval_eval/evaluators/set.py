"""SetEvaluator: many queries evaluated at once, a thin view over a RankedBatch.

It computes every measure with the same vectorised kernels (:mod:`retrieval_eval.measures`) as
:class:`~retrieval_eval.evaluators.query.RetrievalEvaluator`, which is simply a batch of one query.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, cast

import numpy as np

from ..engine.ids import Duplicates
from ..engine.ranking import (
    Order,
    QuerySetReport,
    RankedBatch,
    RunHandoff,
    build_batch,
    check_duplicates_option,
)
from ..io.dicts import columns_from_dicts
from ..measures import (
    Measure,
    compute_text,
    parse,
    parse_list,
)
from ..measures.base import geometric_mean, summary_weights
from ..model import (
    FloatArray,
    InputFormatError,
    InputTypeError,
    MissingExtraError,
    QrelsColumns,
    RetrievalEvalError,
    RunColumns,
)
from .blocks import check_arithmetic_mean, in_blocks, summaries
from .options import _check_max_depth, _check_rel, _read_options
from .query import MeasureLike, MeasureList, RetrievalEvaluator

#: How :meth:`SetEvaluator.evaluate` and :meth:`SetEvaluator.to_dataframe` name their measures.
_KEYS = ("canonical", "trec")

_NO_PANDAS = "SetEvaluator.to_dataframe needs pandas: pip install 'retrieval_eval[dataframe]'"


def _labelled(measures: MeasureList, keys: str, owner: str, rel: int) -> list[tuple[Measure, str]]:
    """The numeric measures of ``measures`` (groups expanded, at ``rel``) under the names ``keys`` asks for."""
    if not isinstance(keys, str):
        raise InputTypeError(f"{owner}: 'keys' must be a str, one of {', '.join(map(repr, _KEYS))}; "
                             f"got {type(keys).__name__} {keys!r:.80}")
    if keys not in _KEYS:
        raise InputFormatError(f"{owner}: 'keys' must be one of {', '.join(map(repr, _KEYS))}; got {keys!r}")
    distinct = dict.fromkeys(m for m, _ in parse_list(measures, rel=rel, numeric=True))
    if keys == "canonical":
        return [(m, str(m)) for m in distinct]
    return [(m, _trec_key(m, rel)) for m in distinct]


def _trec_key(measure: Measure, rel: int) -> str:
    """trec_eval's name for ``measure`` when that name means this very measure here (``P_5`` is
    ``P@5`` at the evaluator's ``rel``, not ``P(rel=2)@5``); otherwise its canonical string. So
    two measures never share a key."""
    label = measure.trec_label
    if label is not None:
        try:
            if parse(label, rel=rel) == measure:
                return label
        except RetrievalEvalError:  # a label the parser does not read back
            pass
    return str(measure)


def _joined_columns(evaluators: Sequence[RetrievalEvaluator]) -> tuple[QrelsColumns, RunColumns]:
    """The judgments and rankings of ``evaluators``, one query after another, each ranking in its own order."""

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
    return qrels, run


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

        qrels, run = _joined_columns(evaluators)
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
        columns_q, columns_r = columns_from_dicts(qrels, run)
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
            for _ in in_blocks(self._batch, [parsed], self._values, keep=True):  # computed (block by block at millions of queries), kept
                pass
        return self._values[parsed]

    def per_query(self, measure: MeasureLike) -> dict[str, float]:
        """``{query_id: value}`` for every evaluated query."""
        return dict(zip(self._batch.query_ids, self.array(measure).tolist()))

    def per_query_text(self, measure: MeasureLike) -> dict[str, str]:
        """``{query_id: string}`` of a text measure (``relstring``) for every evaluated query."""
        return dict(zip(self._batch.query_ids, compute_text(self._batch, parse(measure, rel=self.rel))))

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
        labelled = _labelled(measures, keys, "evaluate", self.rel)
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
        labelled = _labelled(measures, keys, "to_dataframe", self.rel)
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
        check_arithmetic_mean(measure, parsed)
        return self.aggregate(parsed)

    def geometric_mean(self, measure: MeasureLike) -> float:
        """exp(mean(log(max(value, 1e-5)))): trec_eval's gm_map rule applied to any measure."""
        return geometric_mean(self.array(measure))

    def aggregate(self, measure: MeasureLike) -> float:
        """The summary trec_eval prints: a sum for counts, the geometric mean for GMAP and GMBpref, else
        the mean (a weighted mean for GAUC, over the queries :meth:`left_out` does not name).

        It equals :meth:`mean` for every measure that :meth:`mean` accepts."""
        parsed = parse(measure, rel=self.rel)
        return parsed.definition.aggregate_values(self.array(parsed), summary_weights(self._batch, parsed))

    def _summaries(self, measures: Sequence[MeasureLike], *, keep: bool = False) -> list[float]:
        """:meth:`aggregate` of each of ``measures`` (none of them a text measure), computed together.

        Without ``keep`` the per-query arrays are not kept: evaluate without -q prints only the
        summaries, and kept they would add 8 bytes per query and measure (2.4 GB for the 30 official
        measures at 10 M queries). With ``keep`` they stay, as :meth:`array` keeps them.
        """
        return summaries(self._batch, [parse(measure, rel=self.rel) for measure in measures], self._values, keep=keep)

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
