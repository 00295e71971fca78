"""``retrieval_eval.evaluate``: one call from whatever qrels and run a user holds to the measures' values."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, Literal, overload

from ..engine.build import RunHandoff
from ..engine.ids import Duplicates
from ..model import InputTypeError, QrelsColumns, RunColumns
from .options import _check_rel, _read_options
from .query import MeasureList
from .results import _labelled
from .set import SetEvaluator

__all__ = ["evaluate"]

Means = dict[str, float]
PerQuery = dict[str, dict[str, float]]


@overload
def evaluate(qrels: Any, run: Any, measures: MeasureList, *, per_query: Literal[False] = ...,
             rel: int = ..., max_depth: int | None = ..., judged_only: bool = ..., complete: bool = ...,
             duplicates: Duplicates = ..., keys: str = ..., ties: str = ...) -> Means: ...
@overload
def evaluate(qrels: Any, run: Any, measures: MeasureList, *, per_query: Literal[True],
             rel: int = ..., max_depth: int | None = ..., judged_only: bool = ..., complete: bool = ...,
             duplicates: Duplicates = ..., keys: str = ..., ties: str = ...) -> tuple[Means, PerQuery]: ...


def evaluate(
    qrels: Any, run: Any, measures: MeasureList, *, per_query: bool = False, rel: int = 1,
    max_depth: int | None = None, judged_only: bool = False, complete: bool = True, duplicates: Duplicates = "error",
    keys: str = "canonical", ties: str = "trec_eval",
) -> Means | tuple[Means, PerQuery]:
    """Evaluate a run against qrels in one call: the summary of each measure over the queries.

    ``qrels`` and ``run`` may each be, independently of the other:

    * a path: TREC text, BEIR's qrels TSV, 3-column qrels, a results JSON ``{qid: {doc: score}}``,
      or Parquet (the reader is chosen as for ``retrieval-eval evaluate``; see docs/api.md);
    * an open file of TREC text;
    * a pytrec_eval-style dict ``{query_id: {doc_id: relevance or score}}``;
    * a pandas or polars DataFrame, or a pyarrow table, with columns ``query_id, doc_id, relevance``
      (qrels) or ``query_id, doc_id, score`` (run);
    * an iterable of records with those attributes: ir_datasets' ``qrels_iter()`` and
      ``scoreddocs_iter()`` (see :meth:`SetEvaluator.from_records`).

    Parameters
    ----------
    measures : measure-like, or an iterable of them
        As :meth:`SetEvaluator.evaluate` reads them: ``"nDCG@10"``, ``"map"``, ``"ndcg_cut.10"``,
        ``"recall@100"``, groups such as ``"official"``.
    per_query : bool, default False
        Also return each query's values, ``{query_id: {measure: value}}`` (pytrec_eval's shape).
    rel, max_depth, judged_only, complete, duplicates
        As for :meth:`SetEvaluator.from_trec` (trec_eval's ``-l``, ``-M``, ``-J``, ``-c``).
    keys : {"canonical", "trec"}, default "canonical"
        How the measures are named in the result, as in :meth:`SetEvaluator.evaluate`.
    ties : {"trec_eval", "rank", "expected"}, default "trec_eval"
        Documents of equal score, as for :meth:`SetEvaluator.from_trec` (``"rank"`` needs a run file).

    Returns
    -------
    dict, or (dict, dict) with ``per_query``
        ``{measure: summary}``: the value trec_eval prints on its ``all`` line (a mean for most
        measures; see :meth:`SetEvaluator.aggregate`), in the order asked; with ``per_query`` also
        ``{query_id: {measure: value}}``.

    Examples
    --------
    >>> import retrieval_eval
    >>> qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    >>> run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"x": 1.0, "c": 0.5}}
    >>> retrieval_eval.evaluate(qrels, run, ["map", "P@1"])
    {'AP': 0.75, 'P@1': 0.5}
    >>> means, queries = retrieval_eval.evaluate(qrels, run, "recip_rank", per_query=True, keys="trec")
    >>> means, queries
    ({'recip_rank': 0.75}, {'q1': {'recip_rank': 1.0}, 'q2': {'recip_rank': 0.5}})

    Raises
    ------
    InputTypeError
        An input of none of the kinds above.
    RetrievalEvalError
        Whatever the chosen reader raises for a bad input (a TrecFormatError with ``path:line`` for a file).
    """
    rel = _check_rel("evaluate", rel)
    options = _read_options(max_depth, duplicates, "score", ties)
    labelled = _labelled(measures, keys, "evaluate", rel)
    results = SetEvaluator._built(_qrels_columns(qrels), RunHandoff(_run_columns(run, ties == "rank")), rel=rel,
                                  judged_only=judged_only, complete=complete, **options)
    means = dict(zip([label for _, label in labelled], results._summaries([m for m, _ in labelled], keep=per_query)))
    if not per_query:
        return means
    return means, results.evaluate([m for m, _ in labelled], keys=keys)


def _kind(value: Any) -> str:
    """Which reader takes ``value``: path, file, dict, table or records."""
    if isinstance(value, (str, os.PathLike)):
        return "path"
    if isinstance(value, Mapping):
        return "dict"
    if hasattr(value, "read"):
        return "file"
    module = type(value).__module__.split(".")[0]
    if module in ("pandas", "polars", "pyarrow") or hasattr(value, "__arrow_c_stream__"):
        return "table"
    if isinstance(value, Iterable) and not isinstance(value, (bytes, bytearray)):
        return "records"
    return "unknown"


_KINDS = ("a path, an open file, a dict {query_id: {doc_id: value}}, a DataFrame or Arrow table, or an iterable "
          "of records (ir_datasets' {})")  # {} is filled by str.replace (the dict's braces stay)


def _qrels_columns(qrels: Any) -> QrelsColumns:
    kind = _kind(qrels)
    if kind in ("path", "file"):
        from ..io.formats import read_qrels_columns

        return read_qrels_columns(qrels)
    if kind == "dict":
        from ..io.dicts import columns_from_dicts

        return columns_from_dicts(qrels, {})[0]
    if kind == "table":
        from ..io.frames import qrels_from_table

        return qrels_from_table(qrels, origin="qrels table")
    if kind == "records":
        from ..io.records import qrels_from_records

        return qrels_from_records(qrels)
    raise InputTypeError(f"evaluate: 'qrels' must be {_KINDS.replace('{}', 'qrels_iter()')}; got {type(qrels).__name__}")


def _run_columns(run: Any, with_ranks: bool = False) -> RunColumns:
    kind = _kind(run)
    if kind in ("path", "file"):
        from ..io.formats import read_run_columns

        return read_run_columns(run, with_ranks=with_ranks)
    if kind == "dict":
        from ..io.dicts import columns_from_dicts

        return columns_from_dicts({}, run)[1]
    if kind == "table":
        from ..io.frames import run_from_table

        return run_from_table(run, origin="run table")
    if kind == "records":
        from ..io.records import run_from_records

        return run_from_records(run)
    raise InputTypeError(f"evaluate: 'run' must be {_KINDS.replace('{}', 'scoreddocs_iter()')}; got {type(run).__name__}")
