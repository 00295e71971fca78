"""A SetEvaluator's values computed a block of queries at a time, and its summaries over queries.

A batch of very many queries (millions of sessions of a few documents) is evaluated a block at a
time (see :data:`QUERIES_PER_BLOCK`): each block's per-query caches go before the next block's are
made, so the memory does not grow with every measure (the caches took 1.1 GB at 10 M queries), and
the blocks are computed side by side on the CPUs the process may use. Every measure is computed
query by query, so the values are the same numbers as on the whole batch (tests/test_blocks.py
checks every measure).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from ..engine import threads as _threads
from ..engine.batch import RankedBatch
from ..measures import Measure, MeasureError, compute
from ..measures.registry import pool_share, summary_weights
from ..measures.summary import Summary
from ..model import FloatArray

#: Queries per block when a batch of more is evaluated block by block, on one CPU: each block's arrays
#: (a few hundred kB) stay in the CPU's caches. 10 M sessions of one document, the 30 official
#: measures: 4.8 s on the whole batch, 2.7 s in blocks of 32,768, 3.0 s of 65,536, 3.3 s of a million.
QUERIES_PER_BLOCK = 1 << 15
#: The same with several CPUs, one block per thread: larger blocks, since between its array loops a
#: thread holds the GIL, and with small blocks the threads mostly wait for each other. The same run on
#: 2 CPUs: 2.8 s in blocks of 32,768 (no faster than one thread), 2.3 s of 131,072, 2.1 s of 262,144,
#: 1.95 s of 524,288; 1 M sessions of ten documents: 0.31, 0.25, 0.23 and 0.26 s (one thread 0.34 s).
QUERIES_PER_THREAD_BLOCK = 1 << 18

#: How the summaries other than the arithmetic mean combine the queries (see :meth:`SetEvaluator.mean`).
_NOT_A_MEAN = {"sum": "the sum over queries", "gmean": "a geometric mean", "weighted": "a weighted mean",
               "pooled": "pooled over the rows of every query"}


def per_query_in_blocks(batch: RankedBatch, values: Callable[[RankedBatch], FloatArray]) -> FloatArray:
    """``values(batch)``, an array of one number per query, computed a block of queries at a time on
    the calling thread: as in :func:`in_blocks`, a block's caches go before the next block's are made.

    For what the summaries do not keep but a note or a report asks for afterwards (the weights of
    GAUC, Judged@k): on the whole of a 10 M-row log, such a kernel's temporaries added 130 MB to the
    command's peak. Each query's value is computed from its own rows, so the numbers are the same.

    >>> from retrieval_eval import SetEvaluator
    >>> batch = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"c": 1.0}})._batch
    >>> per_query_in_blocks(batch, lambda part: part.num_ret * 2.0).tolist()
    [2.0, 2.0]
    """
    blocks = batch.query_blocks(QUERIES_PER_BLOCK)
    if len(blocks) == 1:
        return np.asarray(values(batch), dtype=np.float64)
    out = np.empty(batch.n_queries)
    for start, stop in blocks:
        out[start:stop] = values(batch.block(start, stop))
    return out


def in_blocks(batch: RankedBatch, measures: Sequence[Measure], known: dict[Measure, FloatArray], *,
              keep: bool) -> Iterator[tuple[RankedBatch, dict[Measure, FloatArray]]]:
    """Each block of ``batch``'s queries with the per-query values of ``measures`` on it, in query order.

    ``known`` holds the values already computed on the whole batch: they are sliced, not computed
    again. With ``keep``, the values of every block are added to ``known`` once the last block is
    yielded.
    """
    workers = _threads.workers()  # one block per thread, at most _threads.MAX_WORKERS of them
    blocks = batch.query_blocks(QUERIES_PER_THREAD_BLOCK if workers else QUERIES_PER_BLOCK)

    def evaluated(start: int, stop: int) -> tuple[RankedBatch, dict[Measure, FloatArray]]:
        part = batch if len(blocks) == 1 else batch.block(start, stop)
        values: dict[Measure, FloatArray] = {}
        for measure in measures:
            if measure not in values:
                computed = known.get(measure)
                values[measure] = computed[start:stop] if computed is not None else compute(part, measure)
        return part, values

    kept: dict[Measure, FloatArray] = {}
    for (start, stop), (part, values) in zip(blocks, _threads.in_order(evaluated, blocks, workers)):
        if keep:
            for measure, array in values.items():
                if measure in known:
                    continue
                if len(blocks) == 1:
                    kept[measure] = array
                else:
                    kept.setdefault(measure, np.empty(batch.n_queries))[start:stop] = array
        yield part, values
    known.update(kept)


def summaries(batch: RankedBatch, measures: Sequence[Measure], known: dict[Measure, FloatArray], *,
              keep: bool) -> list[float]:
    """The summary over ``batch``'s queries of each of ``measures``, the blocks added up in query order.

    ``known`` and ``keep`` are read as by :func:`in_blocks`.
    """
    running = {measure: Summary(measure.definition) for measure in measures}
    for part, values in in_blocks(batch, list(running), known, keep=keep):
        Summary.add_all(list(running.values()), [values[measure] for measure in running],
                        [summary_weights(part, measure) for measure in running],
                        [pool_share(part, measure) for measure in running])
    return [running[measure].value() for measure in measures]


def check_arithmetic_mean(given: str | Measure, parsed: Measure) -> None:
    """Raise MeasureError unless the summary of ``parsed`` (the measure asked as ``given``) is the
    arithmetic mean: ``mean('GMAP')`` would be the mean of the per-query APs, that is MAP."""
    how = _NOT_A_MEAN.get(parsed.definition.aggregate)
    if how is not None:
        asked = given if isinstance(given, str) else str(given)
        raise MeasureError(
            f"mean({asked!r}): the summary of {parsed.definition.name} is {how}, not an arithmetic mean; "
            f"aggregate({asked!r}) returns it (array({asked!r}).mean() is the arithmetic mean of the "
            "per-query values)"
        )
