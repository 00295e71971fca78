"""Looking inside an evaluation: one query's ranking and judgments, the worst queries, two runs' differences.

Everything here reads values that :class:`~retrieval_eval.SetEvaluator` computed (``array``,
``aggregate``, or ``score`` on one query's :class:`~retrieval_eval.RetrievalEvaluator`): no measure is
computed a second way. One query's view costs that query's own rows (``SetEvaluator[q]`` selects
them); the whole-run views (:func:`worst_queries`, :func:`diff_runs`) are vectorised over the
per-query arrays. The ``format_*`` functions write the views as the text ``retrieval-eval inspect``
and ``retrieval-eval diff`` print.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Sequence

import numpy as np
from attrs import frozen

from ..evaluators import RetrievalEvaluator, SetEvaluator
from ..measures import Measure
from ..measures.registry import non_finite_error
from ..model import RetrievalEvalError, id_bytes


def _finite(values: np.ndarray, ids: Sequence[str], measure: Measure, run: str) -> np.ndarray:
    """``values``, or MeasureError naming the measure, the query and the run when one is NaN or infinite:
    a NaN would rank as the best query and compare as unchanged ("nan -> nan")."""
    finite = np.isfinite(values)
    if not finite.all():
        at = int(np.argmin(finite))
        raise non_finite_error(f"{measure} in {run}", ids[at], float(values[at]))
    return values

__all__ = [
    "QueryDelta", "QueryView", "RankedDocument", "RankingDiff", "RunDiff", "WorstQuery", "diff_query", "diff_runs",
    "find_query", "inspect_query", "worst_queries",
]

#: How a negative qrels value is shown: the document was pooled but never judged (trec_eval's convention).
POOLED = "pooled, not judged"


@frozen
class RankedDocument:
    """One retrieved document: its rank, id, score and qrels value (None when the qrels do not name it)."""

    rank: int
    doc_id: str
    score: float | None
    judgment: int | float | None  #: the grade (a float grade is a float), or None when not judged
    relevant: bool

    def judgment_text(self) -> str:
        """The grade; ``unjudged`` when the qrels do not name the document; ``-1 (pooled, not judged)``."""
        if self.judgment is None:
            return "unjudged"
        return f"{self.judgment} ({POOLED})" if self.judgment < 0 else str(self.judgment)


@frozen
class QueryView:
    """What ``inspect --query`` shows: the top of one query's ranking, its missed relevant documents
    (highest grade first) and its values of the chosen measures (``label -> value``)."""

    query_id: str
    retrieved: int  #: documents in the whole (evaluated) ranking
    relevant: int  #: R: relevant judgments at the evaluation's relevance level
    top: tuple[RankedDocument, ...]
    missed: tuple[tuple[str, int | float], ...]  #: (doc_id, grade) of each relevant document not retrieved
    values: tuple[tuple[str, float | int | str], ...]


def find_query(results: SetEvaluator, query_id: str, where: str) -> RetrievalEvaluator:
    """``results[query_id]``, or a one-line error naming ``where`` and, when one is close, the likely query.

    Raises
    ------
    RetrievalEvalError
        The query is not evaluated: it has no judgments, it has no results and the evaluation
        leaves such queries out (``--skip-missing``, ``complete=False``), or no query of that id
        exists (the message then suggests the closest id, as ``did you mean 'q10'?``).
    """
    for key in (query_id, _as_read(query_id)):
        if key in results:
            return results[key]
    if query_id in set(results.not_judged):
        raise RetrievalEvalError(f"query {query_id!r} of {where} has no judgments in the qrels, so it is not evaluated")
    if query_id in set(results.missing_from_run):
        raise RetrievalEvalError(f"query {query_id!r} is judged but {where} has no results for it, and queries "
                                 "without results are left out (--skip-missing)")
    close = _closest(query_id, results.query_ids)
    hint = f" (did you mean {close!r}?)" if close is not None else ""
    raise RetrievalEvalError(
        f"no query {query_id!r} among the {len(results)} evaluated queries of {where}{hint}")


#: Ids that share the longest prefix (and, apart, the longest suffix) with a mistyped one, taken from
#: each side of where it would sort: the only ones compared with it, so that the search for a
#: suggestion costs a sort and a bounded number of comparisons, however many ids there are.
_NEIGHBOURS = 16
#: Characters of each id that the comparison looks at: difflib's cost grows with their square.
_COMPARED_CHARACTERS = 256


def _closest(query_id: str, ids: Sequence[str]) -> str | None:
    """The id most like ``query_id`` (difflib's ratio, at least 0.6; the greater id of a tie), or
    None: a hint for a typo.

    Only the ids beside ``query_id`` in sorted order (the longest common prefixes) and in the order
    of reversed ids (the longest common suffixes) are compared, on their first
    :data:`_COMPARED_CHARACTERS` characters: a typo keeps most of the id on one side or the other.
    Over 100,000 long ids, comparing with every one took a minute.
    """
    candidates = dict.fromkeys(_beside(query_id, ids, reverse=False) + _beside(query_id, ids, reverse=True))
    shown = {candidate[:_COMPARED_CHARACTERS]: candidate for candidate in reversed(list(candidates))}
    # difflib.get_close_matches(query_id, ..., n=1), but without its "autojunk", which ignores every
    # character of ids of 200 or more made of a few (hex digits, say): it would find none alike.
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(query_id[:_COMPARED_CHARACTERS])
    scored = []
    for text in shown:
        matcher.set_seq1(text)
        if matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6 and (score := matcher.ratio()) >= 0.6:
            scored.append((score, text))
    return shown[max(scored)[1]] if scored else None


def _beside(query_id: str, ids: Sequence[str], *, reverse: bool) -> list[str]:
    """The :data:`_NEIGHBOURS` ids on each side of where ``query_id`` sorts among ``ids`` (each id
    read backwards when ``reverse``), in the order of ``ids``."""
    if len(ids) <= 2 * _NEIGHBOURS:
        return list(ids)
    # Backwards, the last characters only: a copy of every whole id could take gigabytes.
    keys = [i[: -_COMPARED_CHARACTERS - 1 : -1] for i in ids] if reverse else ids
    order = sorted(range(len(ids)), key=keys.__getitem__)
    at = bisect.bisect_left([keys[i] for i in order], query_id[: -_COMPARED_CHARACTERS - 1 : -1] if reverse else query_id)
    chosen = sorted(order[max(at - _NEIGHBOURS, 0) : at + _NEIGHBOURS])
    return [ids[i] for i in chosen]


def _as_read(shown: str) -> str:
    """The id that prints as ``shown``: a byte that is not UTF-8 is kept in an id as a lone surrogate
    (see :func:`~retrieval_eval.model.id_text`) and printed ``\\xff``, so a user may type either."""
    return re.sub(r"\\x([89a-f][0-9a-f])", lambda m: chr(0xDC00 + int(m.group(1), 16)), shown)


def _ranked(evaluator: RetrievalEvaluator, depth: int) -> tuple[RankedDocument, ...]:
    """The top ``depth`` documents of one query, each with its qrels value (relevant: a value >= rel, >= 0).

    Only those documents are made (``retrieved_documents()[:depth]``, without the rest of a long
    ranking: the report asks this of every query of every run)."""
    level = max(evaluator.rel, 0)
    top = evaluator._documents(np.arange(len(evaluator._batch.doc_ids)) < depth)
    return tuple(
        RankedDocument(i, document.doc_id, document.score, judgment,
                       judgment is not None and judgment >= level)
        for i, (document, judgment) in enumerate(zip(top, evaluator.retrieved_judgments()[:depth]), 1)
    )


def _ranks(evaluator: RetrievalEvaluator, doc_ids: Sequence[str]) -> dict[str, int]:
    """The ranks of ``doc_ids`` in the query's whole ranking (those it retrieved), as
    ``retrieved_documents()`` numbers them, made for these documents only."""
    if not doc_ids:
        return {}
    wanted = np.array([id_bytes(doc) for doc in doc_ids])
    return {d.doc_id: d.rank for d in evaluator._documents(np.isin(evaluator._batch.doc_ids, wanted))
            if d.rank is not None}


def _value(evaluator: RetrievalEvaluator, measure: Measure) -> float | int | str:
    if measure.definition.text:
        return evaluator.text(measure)
    value = float(_finite(np.array([evaluator.score(measure)]), [evaluator.query_id], measure, "the run")[0])
    return int(value) if measure.definition.integer else value


def inspect_query(
    results: SetEvaluator, query_id: str, measures: Sequence[tuple[str, Measure]], *, depth: int = 20,
    where: str = "the run",
) -> QueryView:
    """One query's view: its top ``depth`` documents, the relevant ones it missed and ``measures``' values.

    ``measures`` are ``(label, measure)`` pairs; summary-only ones (``num_q``, ``gm_map``) have no
    per-query value and are skipped. The values are the query's row of ``results.array(m)``,
    computed on that query's rows alone.
    """
    evaluator = find_query(results, query_id, where)
    values = tuple((label, _value(evaluator, m)) for label, m in measures if not m.definition.summary_only)
    return QueryView(
        query_id=evaluator.query_id, retrieved=int(evaluator.score("NumRet")),
        relevant=int(evaluator.score("NumRel")), top=_ranked(evaluator, depth),
        missed=tuple((j.doc_id, j.relevance) for j in evaluator.relevant_missed_judgments()), values=values,
    )


# ------------------------------------------------------------------------------ the worst queries
@frozen
class WorstQuery:
    """A query of :func:`worst_queries`: its values, R, the rank of its first relevant document
    (None when none is retrieved) and the number of relevant documents it missed."""

    query_id: str
    values: tuple[float | int, ...]
    relevant: int
    first_relevant: int | None
    missed: int


def worst_queries(results: SetEvaluator, measures: Sequence[Measure], n: int) -> list[WorstQuery]:
    """The ``n`` queries with the lowest value of ``measures[0]`` (ties in query order), lowest first.

    R is ``NumRel``, the missed count ``NumRel - NumRelRet`` and the first relevant rank ``1 / RR``:
    the registry's own measures, at the evaluation's relevance level, over the whole run at once.
    """
    for m in measures:
        if m.definition.text or m.definition.summary_only:
            raise RetrievalEvalError(f"{m} has no per-query number to rank the queries by")
    if not measures:
        raise RetrievalEvalError("worst_queries: no measure to rank the queries by; give at least one")
    ids = results.query_ids
    columns = [_finite(results.array(m), ids, m, results.run_id or "the run") for m in measures]
    relevant = results.array("NumRel").astype(np.int64)
    missed = relevant - results.array("NumRelRet").astype(np.int64)
    rr = results.array("RR")
    first = np.rint(np.divide(1.0, rr, out=np.zeros_like(rr), where=rr > 0)).astype(np.int64)  # 0: none
    order = np.argsort(columns[0], kind="stable")[:n]
    return [
        WorstQuery(ids[i], tuple(int(c[i]) if m.definition.integer else float(c[i]) for m, c in zip(measures, columns)),
                   int(relevant[i]), int(first[i]) or None, int(missed[i]))
        for i in order
    ]


# ------------------------------------------------------------------------------ two runs
@frozen
class QueryDelta:
    """One query's value in run A and run B, and ``b - a``."""

    query_id: str
    a: float
    b: float
    delta: float


@frozen
class RunDiff:
    """Two runs on one measure: their means over the queries both have, and each query's change,
    sorted from the largest gain to the largest loss (ties in query order)."""

    label: str
    mean_a: float
    mean_b: float
    deltas: tuple[QueryDelta, ...]
    helped: int  #: queries where b > a
    hurt: int  #: queries where b < a
    unchanged: int  #: queries where b == a exactly (a tie, as the significance tests count them)

    def gains(self, n: int) -> list[QueryDelta]:
        """The ``n`` largest gains (positive changes), largest first."""
        return [d for d in self.deltas[:n] if d.delta > 0]

    def losses(self, n: int) -> list[QueryDelta]:
        """The ``n`` largest losses (negative changes), largest first."""
        return [d for d in reversed(self.deltas[-n:] if n else ()) if d.delta < 0]


def diff_runs(
    a: SetEvaluator, b: SetEvaluator, measure: Measure, label: str | None = None, *,
    names: tuple[str, str] = ("A", "B"),
) -> RunDiff:
    """``b`` against ``a`` on ``measure``, over the queries both evaluated (in ``a``'s order).

    ``names`` name the two runs in the error raised when they share no query.
    """
    if measure.definition.text or measure.definition.summary_only:
        raise RetrievalEvalError(f"{measure} has no per-query number to compare")
    ids_a, ids_b = a.query_ids, b.query_ids  # a new list at each access: read once
    position_b = {q: i for i, q in enumerate(ids_b)}
    rows_a = np.asarray([i for i, q in enumerate(ids_a) if q in position_b], dtype=np.int64)
    if not len(rows_a):  # possible with --skip-missing; means over no query would print as zeros
        raise RetrievalEvalError(
            f"{names[0]} and {names[1]} have no evaluated query in common, so there is nothing to compare; "
            f"expected shared queries; got {_preview(ids_a)} and {_preview(ids_b)}")
    shared = [ids_a[i] for i in rows_a.tolist()]
    rows_b = np.asarray([position_b[q] for q in shared], dtype=np.int64)
    values_a = _finite(a.array(measure)[rows_a], shared, measure, names[0])
    values_b = _finite(b.array(measure)[rows_b], shared, measure, names[1])
    deltas = values_b - values_a
    order = np.argsort(-deltas, kind="stable")
    same = len(shared) == len(a) == len(b)  # else the means cover the shared queries only
    mean_a = a.aggregate(measure) if same else a.subset(shared).aggregate(measure)
    mean_b = b.aggregate(measure) if same else b.subset(shared).aggregate(measure)
    helped, hurt = int(np.count_nonzero(deltas > 0)), int(np.count_nonzero(deltas < 0))
    return RunDiff(label or str(measure), mean_a, mean_b, tuple(
        QueryDelta(shared[i], float(values_a[i]), float(values_b[i]), float(deltas[i])) for i in order.tolist()),
        helped, hurt, len(shared) - helped - hurt)


@frozen
class RankingDiff:
    """One query in two runs: both tops, and the documents that entered or left the top ``k``.

    ``entered`` holds B's top-k documents that are not in A's top k, each with its rank in A (None
    when A did not retrieve it); ``left`` A's top-k documents not in B's top k, with their rank in B.
    """

    query_id: str
    k: int
    top_a: tuple[RankedDocument, ...]
    top_b: tuple[RankedDocument, ...]
    entered: tuple[tuple[RankedDocument, int | None], ...]
    left: tuple[tuple[RankedDocument, int | None], ...]
    values: tuple[tuple[str, float, float], ...]  #: (label, value in A, value in B)


def diff_query(
    a: SetEvaluator, b: SetEvaluator, query_id: str, measures: Sequence[tuple[str, Measure]], *, k: int = 10,
    names: tuple[str, str] = ("A", "B"),
) -> RankingDiff:
    """The view of ``diff --query``: one query's top ``k`` in both runs and what changed in it."""
    ev_a, ev_b = find_query(a, query_id, names[0]), find_query(b, query_id, names[1])
    top_a, top_b = _ranked(ev_a, k), _ranked(ev_b, k)
    in_top_a, in_top_b = {d.doc_id for d in top_a}, {d.doc_id for d in top_b}
    # ranks in the whole rankings, of the documents that moved
    rank_a = _ranks(ev_a, [d.doc_id for d in top_b if d.doc_id not in in_top_a])
    rank_b = _ranks(ev_b, [d.doc_id for d in top_a if d.doc_id not in in_top_b])
    def score(evaluator: RetrievalEvaluator, m: Measure, name: str) -> float:
        return float(_finite(np.array([evaluator.score(m)]), [query_id], m, name)[0])

    values = tuple((label, score(ev_a, m, names[0]), score(ev_b, m, names[1])) for label, m in measures
                   if not (m.definition.text or m.definition.summary_only))
    return RankingDiff(
        query_id, k, top_a, top_b,
        tuple((d, rank_a.get(d.doc_id)) for d in top_b if d.doc_id not in in_top_a),
        tuple((d, rank_b.get(d.doc_id)) for d in top_a if d.doc_id not in in_top_b),
        values,
    )


# ------------------------------------------------------------------------------ text
def _aligned(rows: Sequence[Sequence[str]], right: Sequence[bool], indent: str = "") -> list[str]:
    """Rows of cells as lines with aligned columns (``right[i]``: right-align column i)."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(cell.rjust(w) if r else cell.ljust(w) for cell, w, r in zip(row, widths, right))
            .rstrip() for row in rows]


def _preview(items: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


def _number(value: float | str, digits: int) -> str:  # an int is a float to type checkers
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def _score(score: float | None) -> str:
    return "-" if score is None else repr(score)  # as exact as the run file's (repr reads back the same)


def format_query(view: QueryView, *, run: str, rel: int, digits: int = 4) -> str:
    """The text of ``inspect --query``."""
    lines = [(f"query {view.query_id} in {run}: {view.retrieved} retrieved, R = {view.relevant} "
              f"(relevant: judgment >= {rel}; * marks them)"), ""]
    rows = [["rank", "", "doc_id", "score", "judgment"]]
    rows += [[str(d.rank), "*" if d.relevant else "", d.doc_id, _score(d.score), d.judgment_text()] for d in view.top]
    lines += _aligned(rows, [True, False, False, True, False]) if view.top else ["(nothing retrieved)"]
    if view.retrieved > len(view.top):
        below = view.retrieved - len(view.top)
        lines.append(f"({below} more retrieved below rank {len(view.top)}; --depth shows more)")
    lines.append("")
    if view.missed:
        lines.append(f"relevant documents not retrieved ({len(view.missed)}), highest grade first:")
        lines += _aligned([["doc_id", "judgment"], *([doc, str(grade)] for doc, grade in view.missed)],
                          [False, True], "  ")
    else:
        lines.append("relevant documents not retrieved: none")
    if view.values:
        lines += ["", "measures:"]
        lines += _aligned([[label, _number(value, digits)] for label, value in view.values], [False, True], "  ")
    return "\n".join(lines) + "\n"


def format_worst(worst: Sequence[WorstQuery], labels: Sequence[str], *, total: int, digits: int = 4) -> str:
    """The text of ``inspect`` without ``--query``: the worst queries, lowest first."""
    lines = [f"the {len(worst)} worst of {total} queries on {labels[0]} (lowest first):", ""]
    rows = [["query", *labels, "R", "first_rel", "missed"]]
    rows += [[w.query_id, *(_number(v, digits) for v in w.values), str(w.relevant),
              "-" if w.first_relevant is None else str(w.first_relevant), str(w.missed)] for w in worst]
    lines += _aligned(rows, [False, *([True] * (len(labels) + 3))])
    lines += ["", ("R: relevant judgments; first_rel: rank of the first relevant document (- : none retrieved); "
                   "missed: relevant documents not retrieved.")]
    return "\n".join(lines) + "\n"


def format_diff(diff: RunDiff, names: tuple[str, str], *, top: int, digits: int = 4) -> str:
    """The text of ``diff``: means, counts, then the largest gains and losses."""
    change = diff.mean_b - diff.mean_a
    queries = f"{len(diff.deltas)} {'query' if len(diff.deltas) == 1 else 'queries'}"
    lines = [f"{diff.label}: {names[1]} against {names[0]} over {queries}",
             f"  mean  {diff.mean_a:.{digits}f} -> {diff.mean_b:.{digits}f}  ({change:+.{digits}f})",
             f"  helped {diff.helped}, hurt {diff.hurt}, unchanged {diff.unchanged}"]
    header = ["query", names[0], names[1], "delta"]
    for title, picked in (("largest gains", diff.gains(top)), ("largest losses", diff.losses(top))):
        lines += ["", f"{title}:" if picked else f"{title}: none"]
        if picked:
            lines += _aligned([header, *([d.query_id, f"{d.a:.{digits}f}", f"{d.b:.{digits}f}",
                                          f"{d.delta:+.{digits}f}"] for d in picked)],
                              [False, True, True, True], "  ")
    return "\n".join(lines) + "\n"


def format_ranking_diff(diff: RankingDiff, names: tuple[str, str], *, digits: int = 4) -> str:
    """The text of ``diff --query``: both tops side by side, then what entered and left the top k."""
    lines = [f"query {diff.query_id}: top {diff.k} of {names[0]} (A) and {names[1]} (B); * marks relevant documents"]
    for label, value_a, value_b in diff.values:
        lines.append(f"  {label}: {value_a:.{digits}f} -> {value_b:.{digits}f}  ({value_b - value_a:+.{digits}f})")
    lines.append("")
    rows = [["rank", "", f"A: {names[0]}", "judgment", "", f"B: {names[1]}", "judgment"]]
    for i in range(max(len(diff.top_a), len(diff.top_b))):
        row = [str(i + 1)]
        for top in (diff.top_a, diff.top_b):
            d = top[i] if i < len(top) else None
            row += ["", "", ""] if d is None else ["*" if d.relevant else "", d.doc_id, d.judgment_text()]
        rows.append(row)
    lines += _aligned(rows, [True, False, False, False, False, False, False])

    def moved(title: str, items: Sequence[tuple[RankedDocument, int | None]], side: str, other: str) -> None:
        lines.extend(["", f"{title} ({len(items)}):" if items else f"{title}: none"])
        lines.extend(_aligned([["", "doc_id", f"rank in {side}", f"rank in {other}", "judgment"], *(
            ["*" if d.relevant else "", d.doc_id, str(d.rank), "-" if rank is None else str(rank),
             d.judgment_text()] for d, rank in items)], [False, False, True, True, False], "  ") if items else [])

    moved(f"entered the top {diff.k} (in B's, not in A's)", diff.entered, "B", "A")
    moved(f"left the top {diff.k} (in A's, not in B's)", diff.left, "A", "B")
    lines.append("\n(rank -: not retrieved)")
    return "\n".join(lines) + "\n"
