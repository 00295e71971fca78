"""Gating a search change: baselines kept as files, gate rules, intent tests and flaky queries, and
the JUnit and GitHub writers that CI systems read. It sits above ``analysis/`` and reuses its
statistics; the ``baseline``, ``check``, ``expect`` and ``flaky`` commands and the pytest plugin are
thin layers over it.
"""
