"""The batch engine: columns become one :class:`~retrieval_eval.engine.batch.RankedBatch`.

- :mod:`.ids`: ids interned to integer codes, compared as rows of machine words;
- :mod:`.order`: the canonical order of a run's rows (score, then doc id), per query;
- :mod:`.segments`: per-query segment arithmetic shared by the build and the kernels;
- :mod:`.batch`: the batch (``RankedBatch``), its hits and its diversity judgments;
- :mod:`.build`: a run joined with its judgments into a batch (``build_batch``, ``RunHandoff``);
- :mod:`.judgments`: the judgments prepared for the join (cached per qrels object), and the join;
- :mod:`.memory`, :mod:`.threads`: returning freed memory, and the worker threads' one rule.
"""
