"""Reading: every input format turned into the same frozen columns (:mod:`retrieval_eval.model`).

- :mod:`._tokenize`: the byte-level reader of whitespace- and tab-separated text, in blocks, on threads;
- :mod:`.trec`: TREC qrels and runs (path, file object, ``.gz``), and their writers;
- :mod:`.frames`: Arrow tables, Parquet files and DataFrames (pandas, polars);
- :mod:`.logs`: impression logs (one row per shown item, with its label).
"""
