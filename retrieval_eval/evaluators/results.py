"""SetResults: what an evaluation of many queries answers once built, the base of SetEvaluator.

The values of every measure for all queries, computed in one vectorised pass over the batch (block
by block, see :mod:`.blocks`), their summaries over queries, tables of them, and the per-query
:class:`~retrieval_eval.evaluators.query.RetrievalEvaluator` of each query.
:class:`~retrieval_eval.evaluators.set.SetEvaluator` adds the constructors.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..engine.batch import RankedBatch
from ..engine.batch import _texts as _id_texts
from ..engine.build import QuerySetReport
from ..measures import Measure, compute_text, parse, parse_list
from ..measures.registry import pool_share, summary_weights
from ..measures.summary import geometric_mean
from ..model import FloatArray, InputFormatError, InputTypeError, IntArray, MissingExtraError, RetrievalEvalError
from .blocks import check_arithmetic_mean, in_blocks, per_query_in_blocks, summaries
from .options import _check_rel
from .query import MeasureLike, MeasureList, RetrievalEvaluator
from .zscored import zscored, zscored_summary

if TYPE_CHECKING:  # annotations only: typing.Self is Python 3.11
    from typing_extensions import Self

    from ..io.zscores import ZScores

#: How :meth:`SetEvaluator.evaluate` and :meth:`SetEvaluator.to_dataframe` name their measures.
_KEYS = ("canonical", "trec")

_NO_PANDAS = "SetEvaluator.to_dataframe needs pandas: pip install 'retrieval-evaluator[dataframe]'"


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


class SetResults(Mapping[str, RetrievalEvaluator]):
    """A mapping from query id to that query's :class:`RetrievalEvaluator`, in trec_eval's order,
    with each measure's per-query values, summaries and tables: a view over one RankedBatch.

    Build one with :class:`SetEvaluator`'s constructors.
    """

    def _init(self, batch: RankedBatch, report: QuerySetReport, rel: int, run_id: str) -> None:
        rel = _check_rel("SetEvaluator", rel)
        self._batch = batch
        self._report = report
        self.rel = rel
        self.run_id = run_id
        self._values: dict[Measure, FloatArray] = {}
        self._summary_of: dict[Measure, float] = {}  #: summaries made without z-scores, 8 bytes each
        #: With z-scores (trec_eval -Z), every value and summary is the z-score (see :mod:`.zscored`).
        self.zscores: ZScores | None = None

    @cached_property
    def _index(self) -> dict[str, int]:  # made on first use: a batch may hold millions of queries
        return {qid: i for i, qid in enumerate(self._batch.query_ids)}

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

    def subset(self, query_ids: Iterable[str]) -> Self:
        """The evaluation restricted to ``query_ids`` (in that order): its values and summaries cover them only.

        >>> from retrieval_eval import SetEvaluator
        >>> runs = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}})
        >>> runs.mean("AP"), runs.subset(["q1"]).mean("AP")
        (0.5, 1.0)
        """
        wanted = list(query_ids)
        unknown = [q for q in wanted if q not in self._index]
        if unknown:
            raise KeyError(f"no query {unknown[0]!r} in this evaluation")
        subset = type(self).__new__(type(self))
        kept = set(wanted)
        report = QuerySetReport([q for q in self._report.missing_from_run if q in kept], self._report.not_judged)
        subset._init(self._batch.select([self._index[q] for q in wanted]), report, self.rel, self.run_id)
        subset.zscores = self.zscores
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
        return texts_at(self, rows_without_relevant(self))

    @property
    def only_unjudged(self) -> list[str]:
        """Queries whose judgments are all negative ("pooled but not judged"): nothing about them
        was judged at all. (trec_eval fails or reads stale data on these; every measure is 0 here.)"""
        return texts_at(self, rows_only_unjudged(self))

    # ------------------------------------------------------------------------------ the values
    def array(self, measure: MeasureLike) -> FloatArray:
        """Per-query values of ``measure`` as a NumPy array, in :attr:`query_ids` order.

        (``values()`` without an argument is the mapping's: the per-query evaluators.)
        """
        parsed = parse(measure, rel=self.rel)
        if parsed not in self._values:
            for _ in in_blocks(self._batch, [parsed], self._values, keep=True):  # computed (block by block at millions of queries), kept
                pass
        if self.zscores is not None:
            return zscored(self.zscores, _trec_key(parsed, self.rel), self._batch.query_vocab, parsed,
                           self._values[parsed])
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

        Notes
        -----
        A dict per query costs more than the measures once there are hundreds of thousands of
        queries; :meth:`to_dataframe` and :meth:`array` give the same values as columns.

        Examples
        --------
        >>> from retrieval_eval import SetEvaluator
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
        >>> from retrieval_eval import SetEvaluator
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
        >>> from retrieval_eval import SetEvaluator
        >>> runs = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}})
        >>> runs.mean("AP"), round(runs.aggregate("GMAP"), 6), runs.aggregate("NumRet")
        (0.5, 0.003162, 2.0)
        >>> runs.mean("GMAP")
        Traceback (most recent call last):
          ...
        retrieval_eval.measures.params.MeasureError: mean('GMAP'): the summary of GMAP is a geometric mean, not an arithmetic mean; aggregate('GMAP') returns it (array('GMAP').mean() is the arithmetic mean of the per-query values)
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
        if self.zscores is not None:
            return zscored_summary(parsed, self.array(parsed))
        return parsed.definition.aggregate_values(self.array(parsed), self.summary_weights(parsed),
                                                  pool_share(self._batch, parsed))

    def _summaries(self, measures: Sequence[MeasureLike], *, keep: bool = False) -> list[float]:
        """:meth:`aggregate` of each of ``measures`` (none of them a text measure), computed together.

        Without ``keep`` the per-query arrays are not kept: evaluate without -q prints only the
        summaries, and kept they would add 8 bytes per query and measure (2.4 GB for the 30 official
        measures at 10 M queries). With ``keep`` they stay, as :meth:`array` keeps them.
        """
        if self.zscores is not None:
            return [self.aggregate(measure) for measure in measures]
        parsed = [parse(measure, rel=self.rel) for measure in measures]
        # Each summary is made once: the unjudged note asks again for measures the output has printed.
        wanted = list(dict.fromkeys(parsed)) if keep else [m for m in dict.fromkeys(parsed) if m not in self._summary_of]
        if wanted:
            self._summary_of.update(zip(wanted, summaries(self._batch, wanted, self._values, keep=keep)))
        return [self._summary_of[measure] for measure in parsed]

    def left_out(self, measure: MeasureLike) -> list[str]:
        """Queries the summary of ``measure`` leaves out (weight 0): GAUC's single-class queries.

        Empty for every measure whose summary counts each query (all but GAUC).

        >>> from retrieval_eval import SetEvaluator
        >>> runs = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}},
        ...                               {"q1": {"a": 0.9, "b": 0.2}, "q2": {"c": 0.5}})
        >>> runs.per_query("GAUC"), runs.aggregate("GAUC"), runs.left_out("GAUC")
        ({'q1': 1.0, 'q2': 0.0}, 1.0, ['q2'])
        """
        return texts_at(self, rows_left_out(self, measure))

    def summary_weights(self, measure: MeasureLike) -> FloatArray | None:
        """Each query's weight in the summary of a weighted measure (GAUC: 1, its scored documents or
        its positives, 0 for a single-class query), in :attr:`query_ids` order; None for a measure
        whose summary counts every query alike.

        >>> from retrieval_eval import SetEvaluator
        >>> runs = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"d": 1}},
        ...                               {"q1": {"a": 0.9, "b": 0.2, "c": 0.1}, "q2": {"d": 0.5}})
        >>> runs.summary_weights("GAUC(weight='impressions')").tolist(), runs.summary_weights("AP") is None
        ([3.0, 0.0], True)
        """
        parsed = parse(measure, rel=self.rel)
        if parsed.definition.weight is None:
            return None
        # (Block by block: on a 10 M-row log, GAUC's weights on the whole batch added 130 MB to the peak.)
        return per_query_in_blocks(self._batch, lambda part: cast(FloatArray, summary_weights(part, parsed)))

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


# The queries of the lists above as positions in query_ids: the command line's notes name the first
# few of hundreds of thousands (a log's sessions without a click), and only those are made into text.
def rows_without_relevant(results: SetResults) -> IntArray:
    """The positions (in ``query_ids``) of :attr:`SetResults.without_relevant`."""
    return np.flatnonzero(results._batch.n_relevant(results.rel) == 0)


def rows_only_unjudged(results: SetResults) -> IntArray:
    """The positions (in ``query_ids``) of :attr:`SetResults.only_unjudged`."""
    batch = results._batch
    judged_rows = batch.judged_relevance >= 0
    if bool(judged_rows.all()):  # the usual qrels: no negative value, so no such query (no count per query)
        return np.zeros(0, dtype=np.int64)
    judged = batch.judged_count(judged_rows)
    present = np.diff(batch.judged_offsets) > 0
    return np.flatnonzero(present & (judged == 0))


def rows_left_out(results: SetResults, measure: MeasureLike) -> IntArray:
    """The positions (in ``query_ids``) of :meth:`SetResults.left_out`."""
    weights = results.summary_weights(measure)
    return np.zeros(0, dtype=np.int64) if weights is None else np.flatnonzero(weights == 0)


def texts_at(results: SetResults, rows: IntArray) -> list[str]:
    """The ids of the queries at ``rows`` (positions in ``query_ids``), only those made into text."""
    return _id_texts(results._batch.query_vocab[rows])
