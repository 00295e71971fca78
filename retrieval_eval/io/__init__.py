"""Reading: every input format turned into the same frozen columns (:mod:`retrieval_eval.model`).

- :mod:`._source`, :mod:`._tokens`, :mod:`._parse`: the byte-level reader of whitespace- and tab-separated
  text: a source read in blocks of whole lines, the fields of a block, the blocks parsed on threads;
- :mod:`.formats`: which reader an input goes to (TREC text or Parquet), and the ``read_*_columns``
  entry points;
- :mod:`.trec`: TREC qrels and runs (path, file object, ``.gz``), and their writers;
- :mod:`.frames`: Arrow tables, Parquet files and DataFrames (pandas, polars);
- :mod:`.logs`: impression logs (one row per shown item, with its label).
"""
