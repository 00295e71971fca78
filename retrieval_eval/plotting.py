"""The public path of the plots: :mod:`retrieval_eval.report.plotting` holds them.

>>> from retrieval_eval.plotting import pr_curves  # doctest: +SKIP
"""

from .report.plotting import diff_bars as diff_bars
from .report.plotting import first_relevant_ranks as first_relevant_ranks
from .report.plotting import plain_text as plain_text
from .report.plotting import pr_curves as pr_curves
from .report.plotting import require_matplotlib as require_matplotlib
from .report.plotting import save as save

__all__ = ["diff_bars", "first_relevant_ranks", "plain_text", "pr_curves", "require_matplotlib", "save"]
