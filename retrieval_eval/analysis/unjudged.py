"""Bounds under unjudged documents: each measure with the run's unjudged documents taken as
non-relevant (the usual value) and as judged at a chosen grade, and the note when too few of a
cut-off's documents are judged.

Both values come from the normal engine: the second one evaluates a batch in which every unjudged
retrieved document is judged ``level`` (:func:`~..engine.ties.with_unjudged_as`), exactly as if
the qrels listed it at that grade.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial

import numpy as np
from attrs import frozen

from ..engine.ties import with_unjudged_as
from ..evaluators.blocks import per_query_in_blocks
from ..evaluators.results import SetResults
from ..measures import Measure, parse, parse_list
from ..measures.registry import compute
from .ties import _cutoff_of, _summaries

#: Judged@k below this fraction makes a note, unless the caller gives another threshold.
JUDGED_THRESHOLD = 0.9


@frozen
class UnjudgedBound:
    """One measure's summary with the unjudged documents non-relevant (``value``) and judged at the
    grade ``level`` (``as_relevant``), and the mean Judged@k at its cut-off (None without one).

    The two are the extreme cases, not a bound over every partial judgment: a measure divided by R
    (AP, R, nDCG) can go down when an unjudged document turns relevant, since R grows too.
    """

    measure: str
    value: float
    as_relevant: float
    level: int
    judged: float | None

    @property
    def low(self) -> float:
        return min(self.value, self.as_relevant)

    @property
    def high(self) -> float:
        return max(self.value, self.as_relevant)

    def note(self, digits: int = 2) -> str:
        """The note's text: ``nDCG@10: 38% of the top-10 documents are unjudged; the value lies in [0.41, 0.66]``."""
        cutoff = "" if self.judged is None else f"{1.0 - self.judged:.0%} of the top-{_cutoff(self.measure)} documents are unjudged; "
        return f"{self.measure}: {cutoff}the value lies in [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def _cutoff(label: str) -> str:
    return label.rsplit("@", 1)[-1] if "@" in label else label.rsplit("_", 1)[-1]


def default_level(results: SetResults) -> int:
    """The grade unjudged documents take by default: the largest grade of the qrels (at least ``rel``),
    so that the second value is the best case for graded measures too."""
    return max(results.rel, 1, int(results._batch.judged_relevance.max(initial=0)))


def judged_at(results: SetResults, measure: Measure) -> float | None:
    """The mean Judged@k at ``measure``'s cut-off k over the queries that retrieved something (an
    empty ranking has no top k to judge); None for a measure without a cut-off."""
    return _judged_shares(results, [measure])[0]


def _judged_shares(results: SetResults, measures: Sequence[Measure]) -> list[float | None]:
    """:func:`judged_at` of each measure, computed once per cut-off: ``-m official`` asks for
    some thirty measures over nine cut-offs, and a run of one-document sessions needs only one."""
    retrieved = results._batch.num_ret > 0
    # Past the longest ranking every cut-off takes the whole of each ranking: one Judged@k serves them all.
    longest = int(results._batch.num_ret.max(initial=0))
    cutoffs = [None if (k := _cutoff_of(measure)) is None else min(k, max(longest, 1)) for measure in measures]
    shares: dict[int, float] = {}
    for k in dict.fromkeys(k for k in cutoffs if k is not None):
        # Computed here, not through results.array: the evaluation keeps no per-query array it was not
        # asked for. Block by block: on a 10 M-row log, Judged@10 on the whole batch added 130 MB to the peak.
        judged = parse(f"Judged@{k}")
        shares[k] = (float(per_query_in_blocks(results._batch, partial(compute, measure=judged))[retrieved].mean())
                     if retrieved.any() else 1.0)
    return [None if k is None else shares[k] for k in cutoffs]


def unjudged_bounds(results: SetResults, measures: Iterable[str | Measure] | str, *,
                    level: int | None = None) -> list[UnjudgedBound]:
    """Each measure's summary with the run's unjudged documents as non-relevant and as judged ``level``.

    ``level`` defaults to :func:`default_level`.

    Examples
    --------
    >>> from retrieval_eval import SetEvaluator
    >>> run = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}})
    >>> [(b.measure, b.value, b.as_relevant, b.judged) for b in unjudged_bounds(run, ["P@2", "AP"])]
    [('P@2', 0.5, 1.0, 0.5), ('AP', 1.0, 1.0, None)]
    """
    labelled = parse_list(measures, rel=results.rel, numeric=True)
    return _bounds(results, labelled, _judged_shares(results, [measure for measure, _ in labelled]), level)


def _bounds(results: SetResults, labelled: Sequence[tuple[Measure, str]], judged: Sequence[float | None],
            level: int | None) -> list[UnjudgedBound]:
    chosen = default_level(results) if level is None else int(level)
    if chosen < 0:
        raise ValueError(f"the grade of unjudged documents must be >= 0; got {chosen}")
    asked = [measure for measure, _ in labelled]
    # The usual values without z-scores (trec_eval -Z), made once: the output has most often printed them.
    values = _summaries(results._batch, asked, results._values) if results.zscores is not None else results._summaries(asked)
    as_relevant = _summaries(with_unjudged_as(results._batch, chosen), asked)
    return [UnjudgedBound(label, value, high, chosen, share)
            for (_, label), value, high, share in zip(labelled, values, as_relevant, judged)]


#: Unjudged retrieved documents above which the notes leave out the interval: its second value means
#: judging all of them, a second batch as large as the run (MS MARCO: 7 M rows, 450 MB more).
INTERVAL_ROWS = 1_000_000


def unjudged_notes(results: SetResults, measures: Iterable[str | Measure] | str, *, level: int | None = None,
                   threshold: float = JUDGED_THRESHOLD, digits: int = 2, limit: int | None = None,
                   interval_rows: int = INTERVAL_ROWS) -> list[str]:
    """The notes for the measures with a cut-off whose mean Judged@k is below ``threshold``: the share
    of unjudged documents and the interval between the two values. Both values are computed only for them.

    With ``limit``, the first ``limit`` such measures get a note and one last line counts the others
    (``-m all_trec`` asks for some fifty cut-off measures: fifty notes would bury the output). Past
    ``interval_rows`` unjudged retrieved documents the notes give the share alone, and
    :func:`unjudged_bounds` (``evaluate --bounds``) the interval.
    """
    labelled = parse_list(measures, rel=results.rel, numeric=True)
    low = [(measure, label, judged) for (measure, label), judged in
           zip(labelled, _judged_shares(results, [measure for measure, _ in labelled]))
           if judged is not None and judged < threshold]
    shown = low if limit is None else low[:limit]
    if not shown:
        notes: list[str] = []
    elif int(np.count_nonzero(results._batch.labels < 0)) > interval_rows:
        notes = [f"{label}: {1.0 - judged:.0%} of the top-{_cutoff(label)} documents are unjudged "
                 "(their interval: evaluate --bounds)" for _, label, judged in shown]
    else:
        notes = [bound.note(digits) for bound in _bounds(results, [(measure, label) for measure, label, _ in shown],
                                                         [judged for _, _, judged in shown], level)]
    if len(low) > len(shown):
        more = len(low) - len(shown)
        notes.append(f"{more} more measure{'' if more == 1 else 's'} with a cut-off {'has' if more == 1 else 'have'} "
                     f"less than {threshold:.0%} of their top-k documents judged (their bounds: evaluate --bounds)")
    return notes
