"""The public path of the plots: :mod:`retrieval_eval.report.plotting` holds them.

>>> from retrieval_eval.plotting import pr_curves  # doctest: +SKIP
"""

from .report.plotting import diff_bars, first_relevant_ranks, plain_text, pr_curves, require_matplotlib, save

__all__ = ["diff_bars", "first_relevant_ranks", "plain_text", "pr_curves", "require_matplotlib", "save"]
