"""SetEvaluator: many queries evaluated at once, built from files, tables, logs, dicts or evaluators.

Each constructor is an adapter: the io layer turns its input into columns, and :meth:`SetEvaluator._built`
makes the batch. What the evaluation answers (values, summaries, tables, subsets) it inherits from
:class:`~retrieval_eval.evaluators.results.SetResults`, which computes every measure with the same
vectorised kernels (:mod:`retrieval_eval.measures`) as :class:`~retrieval_eval.evaluators.query.RetrievalEvaluator`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from ..engine import log_batch
from ..engine.build import Order, QuerySetReport, RunHandoff, build_batch, check_duplicates_option
from ..engine.ids import Duplicates
from ..engine.ties import check_ties
from ..io.dicts import columns_from_dicts
from ..model import (
    InputFormatError,
    InputTypeError,
    QrelsColumns,
    RunColumns,
)
from .options import _check_max_depth, _check_rel, _read_options
from .query import RetrievalEvaluator
from .results import SetResults


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


class SetEvaluator(SetResults):
    """Evaluates many queries at once (a port of ireval's SetRetrievalEvaluator).

    It is a mapping from query id to that query's :class:`RetrievalEvaluator`, iterated in trec_eval's
    order (byte order of the ids). Every measure is computed for all queries in one vectorised pass.

    Build it with :meth:`from_trec` (files), :meth:`from_dict` (pytrec_eval-style dicts),
    :meth:`from_dataframe`, :meth:`from_records` (ir_datasets' iterators) or from existing
    evaluators; :func:`retrieval_eval.evaluate` takes any of these inputs in one call.

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

    @classmethod
    def from_columns(
        cls, qrels: QrelsColumns, run: RunColumns | RunHandoff, *, rel: int = 1, order: Order = "score",
        max_depth: int | None = None, judged_only: bool = False, duplicates: Duplicates = "error",
        complete: bool = True, ties: str = "trec_eval",
    ) -> SetEvaluator:
        """Build from columnar judgments and results (what the TREC readers produce).

        A run in a ``RunHandoff`` is one nobody else holds (just read): its columns are freed while
        the evaluation is built, so a large run does not need its memory twice.
        """
        max_depth = _check_max_depth(max_depth)
        check_duplicates_option(duplicates)
        return cls._built(qrels, run, rel=rel, order=order, max_depth=max_depth, judged_only=judged_only,
                          duplicates=duplicates, complete=complete, ties=check_ties(ties))

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
        max_depth: int | None = None, judged_only: bool = False, duplicates: Duplicates = "error", complete: bool = True,
        order: str = "score", subtopics: bool = False, rel_format: str = "qrels", zscores: Any = None, ties: str = "trec_eval",
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
            How each query is ranked: by score (ties by doc_id descending, as trec_eval), in file order,
            or by the file's rank column (which must then hold integers).
        subtopics : bool, default False
            Read the qrels' second column as each judgment's subtopic (intent) id, for the diversity measures
            (``alpha_nDCG``, ...): a document may be judged once per subtopic; others see its largest value.
        rel_format, zscores : trec_eval's ``-R`` and ``-Z``: ``rel_format="qrels_jg"`` reads the second column as
            each judgment's group (assessor), for ``map_avgjg`` and co.; ``"prefs"`` and ``"qrels_prefs"`` read
            preference judgments (docs/preferences.md); ``zscores``, a path or ``{query_id:
            {trec_name: (mean, stddev)}}``, turns every value and summary into a z-score (see :mod:`.zscored`).
        ties : {"trec_eval", "rank", "expected"}, default "trec_eval": equal scores by doc_id descending, by rank, or all orders.

        Raises
        ------
        TrecFormatError
            A malformed line, with ``path:line``.
        InputFormatError
            A duplicate document or judgment.
        """
        from ..io.formats import read_qrels_columns, read_run_columns

        options = _read_options(max_depth, duplicates, order, ties)
        # Nobody else holds the run just read: handed over, its columns are freed as the build uses them.
        return _with_zscores(cls._built(read_qrels_columns(qrels, with_subtopics=subtopics, rel_format=rel_format),
                                        RunHandoff(read_run_columns(run, with_ranks="rank" in (order, ties))), rel=rel,
                                        judged_only=judged_only, complete=complete, **options), zscores)

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
        ``.gz``, and ``.parquet`` (with pyarrow). ``columns`` names the group, item, score and label
        columns: Parquet columns, or the names on a text log's header line. By default columns
        named ``group``, ``item``, ``score`` and ``label`` are read by name, in any order; other
        logs are read in that order (Parquet: its first four columns). Labels are grades, as in
        qrels (integers, ``1.0`` read as 1, float grades such as ``0.5``), or ``true``/``false``.

        Examples
        --------
        >>> import io
        >>> log = io.StringIO("session item score click\\ns1 a 0.9 1\\ns1 b 0.4 0\\ns1 c 0.4 1\\ns2 d 0.3 1\\n")
        >>> clicks = SetEvaluator.from_log(log)
        >>> clicks.per_query("AUC"), clicks.aggregate("GAUC"), clicks.left_out("GAUC")
        ({'s1': 0.75, 's2': 0.0}, 0.75, ['s2'])
        """
        from ..io.formats import read_log_columns
        from ..io.logs import Delimiter

        options = _read_options(max_depth, duplicates, "score")  # a log is ranked by its scores
        read: list[Any] = list(read_log_columns(log, delimiter=cast(Delimiter, delimiter), columns=columns))  # qrels, run
        if log_batch.ENABLED:  # each row is its own judgment: no join (see _log_evaluator)
            return _log_evaluator(cls, read, rel, judged_only, options)
        return cls._built(read[0], RunHandoff(read.pop()), rel=rel, judged_only=judged_only, complete=True, **options)

    @classmethod
    def from_arrow(
        cls, qrels: Any, run: Any, *, rel: int = 1, max_depth: int | None = None, judged_only: bool = False,
        duplicates: Duplicates = "error", complete: bool = True, order: str = "score",
        query_id: str = "query_id", doc_id: str = "doc_id", relevance: str = "relevance", score: str = "score",
        rank: str = "rank", subtopic: str | None = None, ties: str = "trec_eval",
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
            Without pyarrow (``pip install 'retrieval-evaluator[parquet]'``).
        InputTypeError
            A column of the wrong type (strings for scores, floats for ids, ...), or an unknown input.
        InputFormatError
            A missing column, a null, an empty id, a NaN score, a duplicate document or judgment.
        """
        from ..io.frames import qrels_from_table, run_from_table

        options = _read_options(max_depth, duplicates, order, ties)
        judged = qrels_from_table(qrels, query_id=query_id, doc_id=doc_id, relevance=relevance, subtopic=subtopic,
                                  origin="qrels table")
        # Handed over with no other reference, so that the build frees each column once used.
        ranked = RunHandoff(run_from_table(run, query_id=query_id, doc_id=doc_id, score=score,
                                           rank=rank if "rank" in (order, ties) else None, origin="run table"))
        return cls._built(judged, ranked, rel=rel, judged_only=judged_only, complete=complete, **options)

    @classmethod
    def from_dataframe(
        cls, qrels: Any, run: Any, *, rel: int = 1, max_depth: int | None = None, judged_only: bool = False,
        duplicates: Duplicates = "error", complete: bool = True, order: str = "score",
        query_id: str = "query_id", doc_id: str = "doc_id", relevance: str = "relevance", score: str = "score",
        rank: str = "rank", subtopic: str | None = None, ties: str = "trec_eval",
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
                              doc_id=doc_id, relevance=relevance, score=score, rank=rank, subtopic=subtopic, ties=ties)

    @classmethod
    def from_parquet(
        cls, qrels: str | os.PathLike[str], run: str | os.PathLike[str], *, rel: int = 1,
        max_depth: int | None = None, judged_only: bool = False, duplicates: Duplicates = "error",
        complete: bool = True, order: str = "score", query_id: str = "query_id", doc_id: str = "doc_id",
        relevance: str = "relevance", score: str = "score", rank: str = "rank", subtopic: str | None = None, ties: str = "trec_eval",
    ) -> SetEvaluator:
        """Read a Parquet qrels file and a Parquet run file, with the columns of :meth:`from_arrow`.

        Only the named columns are read. The run id is the last row's ``run_id`` column when the run
        has one, else the file's name without its suffix. Errors name the file and the row
        (``run.parquet, row 12``), as :class:`TrecFormatError`.
        """
        from ..io.frames import read_parquet_qrels, read_parquet_run

        options = _read_options(max_depth, duplicates, order, ties)
        judged = read_parquet_qrels(qrels, with_subtopics=subtopic is not None, query_id=query_id, doc_id=doc_id,
                                    relevance=relevance, subtopic=subtopic or "subtopic")
        # Handed over with no other reference, so that the build frees each column once used.
        ranked = RunHandoff(read_parquet_run(run, with_ranks="rank" in (order, ties), query_id=query_id, doc_id=doc_id,
                                             score=score, rank=rank))
        return cls._built(judged, ranked, rel=rel, judged_only=judged_only, complete=complete, **options)

    @classmethod
    def from_records(
        cls, qrels: Iterable[Any], run: Iterable[Any], *, rel: int = 1, max_depth: int | None = None,
        judged_only: bool = False, duplicates: Duplicates = "error", complete: bool = True, ties: str = "trec_eval",
    ) -> SetEvaluator:
        """Build from records: ir_datasets' ``qrels_iter()`` and ``scoreddocs_iter()``, or any iterables like them.

        A qrels record is any object with the attributes ``query_id``, ``doc_id`` and ``relevance``
        (ir_datasets' ``TrecQrel``), a run record one with ``query_id``, ``doc_id`` and ``score``
        (``GenericScoredDoc``); other attributes are ignored and ir_datasets need not be installed.
        Values follow :meth:`from_dict`'s rules; the options are those of :meth:`from_trec`. Each
        query is ranked by score, ties by doc_id descending (trec_eval's rule).

        Examples
        --------
        >>> from collections import namedtuple
        >>> TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")
        >>> ScoredDoc = namedtuple("GenericScoredDoc", "query_id doc_id score")
        >>> qrels = [TrecQrel("q1", "a", 1, "0"), TrecQrel("q1", "b", 0, "0")]
        >>> run = [ScoredDoc("q1", "a", 0.2), ScoredDoc("q1", "b", 0.9)]
        >>> SetEvaluator.from_records(qrels, run).mean("AP")
        0.5

        Raises
        ------
        InputTypeError
            A record without one of the attributes (naming it and the record's position), an id
            that is not a str, a relevance that is not an int, a score that is not a number.
        InputFormatError
            No record at all, an empty id, a NaN score, a duplicate document or judgment.
        """
        from ..io.records import qrels_from_records, run_from_records

        options = _read_options(max_depth, duplicates, "score", ties)
        return cls._built(qrels_from_records(qrels), RunHandoff(run_from_records(run)), rel=_check_rel("SetEvaluator", rel),
                          judged_only=judged_only, complete=complete, **options)

    @classmethod
    def from_dict(
        cls, qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], *, rel: int = 1,
        max_depth: int | None = None, judged_only: bool = False, complete: bool = True, ties: str = "trec_eval",
    ) -> SetEvaluator:
        """Build from pytrec_eval-style dicts: ``{qid: {doc: relevance}}`` and ``{qid: {doc: score}}``.

        Each query is ranked by score descending, ties by doc_id descending (trec_eval's rule).

        Ids, relevance values and scores follow the rules of :class:`Document` and :class:`Judgment`:
        a score is a Python or NumPy int or float (not a bool, not a str such as ``'1.0'``, not NaN),
        a relevance a Python or NumPy int or float (a float grade, 2.5, is kept) within int64, not NaN.

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
            columns_q, columns_r, rel=rel, max_depth=max_depth, judged_only=judged_only, complete=complete, ties=ties,
        )


_S = TypeVar("_S", bound=SetEvaluator)


def _log_evaluator(cls: type[_S], read: list[Any], rel: int, judged_only: bool, options: dict[str, Any]) -> _S:
    """The evaluator of a log's columns ``read`` (its qrels and run, taken out of the list: from here on
    only the build holds the columns, and frees each once used), built from its own rows."""
    run, qrels = read.pop(), read.pop()
    rows = {"groups": run.query_ids, "items": run.doc_ids, "scores": run.scores, "labels": qrels.relevance,
            "lines": run.lines}
    origin, unit, run_id = run.origin, run.unit, run.run_id
    del qrels, run
    batch, report = log_batch.build_log_batch(rows, origin, unit, max_depth=options["max_depth"],
                                              judged_only=judged_only, duplicates=options["duplicates"])
    evaluator = cls.__new__(cls)
    evaluator._init(batch, report, rel, run_id)
    return evaluator


def _with_zscores(evaluator: _S, zscores: Any) -> _S:
    """``evaluator`` giving z-scores from ``zscores=`` (a path is read, a mapping converted), if any."""
    from ..io.zscores import read_zscores, zscores_from_mapping

    if zscores is not None:
        evaluator.zscores = zscores_from_mapping(zscores) if isinstance(zscores, Mapping) else read_zscores(zscores)
    return evaluator
