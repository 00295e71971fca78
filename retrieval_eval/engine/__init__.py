"""The batch engine: columns become one :class:`~retrieval_eval.engine.ranking.RankedBatch`.

- :mod:`.ids`: ids interned to integer codes, compared as rows of machine words;
- :mod:`.order`: the canonical order of a run's rows (score, then doc id), per query;
- :mod:`.segments`: per-query segment arithmetic shared by the build and the kernels;
- :mod:`.ranking`: the batch, its build and the join of a run with its judgments;
- :mod:`.memory`, :mod:`.threads`: returning freed memory, and the worker threads' one rule.
"""
