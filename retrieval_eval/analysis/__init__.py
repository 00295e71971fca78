"""Analyses over evaluated runs: paired comparisons and their statistics, and looking inside queries.

- :mod:`.comparison`: ``compare`` of runs on shared queries, with tests and corrections;
- :mod:`.stats`: the paired tests, multiple-testing corrections, effect sizes and intervals;
- :mod:`.inspection`: one query's ranking, the worst queries, and the difference between two runs;
- :mod:`.intervals`: the confidence interval of a run's mean (exact, BCa bootstrap, t);
- :mod:`.risk`: URisk, TRisk and GeoRisk of runs against a baseline;
- :mod:`.flaky`: the queries on which repeated runs of one system disagree.
"""
