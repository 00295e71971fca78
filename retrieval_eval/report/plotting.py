"""Pictures of an evaluation, as matplotlib Figures (the ``plot`` extra: ``pip install 'retrieval-evaluator[plot]'``).

- :func:`pr_curves`: interpolated precision at trec_eval's 11 recall points, one line per run.
- :func:`diff_bars`: per-query differences between two runs on one measure, sorted.
- :func:`first_relevant_ranks`: where each query's first relevant document sits.
- :func:`save`: write a Figure as PNG, SVG or PDF, chosen by the file's suffix.

Every number drawn comes from :class:`~retrieval_eval.SetEvaluator` (``aggregate``, ``array``): the
plots compute no measure of their own. matplotlib is imported by these functions only, never by
``import retrieval_eval``. The Figures are built without pyplot, so the user's backend choice and
pyplot's figure list are left alone; ``save`` renders with Agg (PNG), or the SVG and PDF writers.

>>> from retrieval_eval import SetEvaluator
>>> from retrieval_eval.plotting import pr_curves
>>> run = SetEvaluator.from_dict({"q1": {"a": 1, "c": 1}}, {"q1": {"a": 0.9, "b": 0.5, "c": 0.1}})
>>> figure = pr_curves({"bm25": run})
>>> [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
['bm25 (MAP 0.8333)']
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model import (
    FloatArray,
    InputFormatError,
    InputTypeError,
    MissingExtraError,
    RetrievalEvalError,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..evaluators import SetEvaluator
    from ..measures import Measure

__all__ = [
    "diff_bars",
    "first_relevant_ranks",
    "pr_curves",
    "require_matplotlib",
    "save",
]

_NO_MATPLOTLIB = "plots need matplotlib: pip install 'retrieval-evaluator[plot]'"

#: The file types :func:`save` writes, by suffix.
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}

#: Metadata that would make two saves of the same figure differ (creation dates): left out.
_NO_DATES = {"png": {}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}

#: The rank bins of :func:`first_relevant_ranks`: lower bounds, each bin up to the next one (exclusive).
RANK_BINS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 21, 51, 101, 1001)

_HELPED, _HURT, _LINE = "#2a7d2a", "#b83232", "#444444"


def require_matplotlib() -> None:
    """Raise :class:`MissingExtraError` (one line naming the ``plot`` extra) unless matplotlib can be imported.

    ``retrieval-eval plot`` calls it before reading any file, so a missing extra is reported at once.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingExtraError(_NO_MATPLOTLIB) from None


def _new_figure(width: float = 7.0, height: float = 4.5) -> Figure:
    """A Figure not registered with pyplot (so no global backend or figure list is touched)."""
    require_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _styles(n: int) -> list[dict[str, Any]]:
    """Colours (and, past 20 runs, line styles) that tell ``n`` runs apart: matplotlib's default cycle
    repeats its 10 colours, so the 11th run would look like the first."""
    from matplotlib import colormaps

    size = 10 if n <= 10 else 20
    palette = [
        tuple(rgba) for rgba in colormaps[f"tab{size}"](np.arange(size)).tolist()
    ]  # its listed colours
    dashes = ("-", "--", ":", "-.")
    return [
        {
            "color": palette[i % len(palette)],
            "linestyle": dashes[i // len(palette) % len(dashes)],
        }
        for i in range(n)
    ]


def _check_runs(runs: Mapping[str, SetEvaluator], function: str) -> None:
    from ..evaluators import SetEvaluator

    if not isinstance(runs, Mapping):
        raise InputTypeError(
            f"{function}: 'runs' must be a mapping of run name to SetEvaluator; "
            f"got {type(runs).__name__}"
        )
    if not runs:
        raise RetrievalEvalError(f"{function}: no runs to plot; give at least one")
    for name, evaluator in runs.items():
        if not isinstance(name, str):
            raise InputTypeError(
                f"{function}: run names must be str; got {type(name).__name__} {name!r}"
            )
        if not isinstance(evaluator, SetEvaluator):
            raise InputTypeError(
                f"{function}: run {name!r} must be a SetEvaluator; got {type(evaluator).__name__}"
            )


def pr_curves(runs: Mapping[str, SetEvaluator], *, title: str | None = None) -> Figure:
    """Interpolated precision-recall curves at trec_eval's 11 recall points, one line per run.

    Each point is the run's ``aggregate`` of ``iprec_at_recall`` at that recall level (the mean over
    its queries, exactly as ``evaluate -m iprec_at_recall`` prints it). The legend gives each run's
    MAP, ``aggregate("AP")``, to 4 decimals.

    Parameters
    ----------
    runs : mapping of run name to SetEvaluator
        In legend order. Each run's own relevance threshold (``rel``) applies.
    title : str, optional
        Defaults to "Interpolated precision-recall".

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; both axes run from 0 to 1.

    Raises
    ------
    MissingExtraError
        Without matplotlib.
    """
    from ..measures import parse, parse_all

    _check_runs(runs, "pr_curves")
    figure = _new_figure()
    axes = figure.add_subplot()
    for (name, evaluator), style in zip(runs.items(), _styles(len(runs))):
        levels = parse_all("iprec_at_recall", rel=evaluator.rel)
        recall = [float(m["recall"]) for m in levels]
        precision = [evaluator.aggregate(m) for m in levels]
        mean_ap = evaluator.aggregate(parse("AP", rel=evaluator.rel))
        axes.plot(
            recall,
            precision,
            marker="o",
            markersize=4,
            clip_on=False,
            label=f"{name} (MAP {mean_ap:.4f})",
            **style,
        )
    axes.set_xlim(0.0, 1.0)
    axes.set_ylim(0.0, 1.0)
    axes.set_xlabel("recall")
    axes.set_ylabel("interpolated precision")
    axes.set_title(title or "Interpolated precision-recall")
    axes.grid(True, alpha=0.3)
    axes.legend(loc="upper right")
    return figure


def diff_bars(
    a: SetEvaluator,
    b: SetEvaluator,
    measure: str | Measure,
    names: tuple[str, str] = ("A", "B"),
    *,
    max_labels: int = 40,
    max_bars: int = 500,
) -> Figure:
    """Per-query differences ``b - a`` on ``measure`` as bars sorted by size, with a zero line.

    Bars above zero (queries ``b`` helped) are green, below (hurt) red. The title names the measure
    (its canonical string) and counts the queries helped, hurt and unchanged (a difference of
    exactly 0, as the significance tests count ties). Only the queries both runs have are drawn.

    Parameters
    ----------
    a, b : SetEvaluator
        The baseline and the run compared with it.
    measure : str or Measure
        One numeric measure (``nDCG@10``, ``map``, ``P_10``).
    names : (str, str)
        The runs' names for the title and axis label.
    max_labels : int, default 40
        Queries are named under their bars when there are at most this many.
    max_bars : int, default 500
        Up to this many queries, each is one bar (a Rectangle in ``axes.patches``, in sorted
        order). Beyond, the bars are drawn as two filled step areas (helped, hurt: PolyCollections
        in ``axes.collections``), which look the same and draw a thousand times faster.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..analysis.inspection import diff_runs
    from ..evaluators import SetEvaluator
    from ..measures import parse

    for which, evaluator in (("a", a), ("b", b)):
        if not isinstance(evaluator, SetEvaluator):
            raise InputTypeError(
                f"diff_bars: {which!r} must be a SetEvaluator; got {type(evaluator).__name__}"
            )
    if not (
        isinstance(names, tuple)
        and len(names) == 2
        and all(isinstance(n, str) for n in names)
    ):
        raise InputTypeError(
            f"diff_bars: 'names' must be a tuple of two str; got {names!r}"
        )
    # The diff command's own pairing, counts and refusal of runs with no query in common, so the
    # picture and the table always agree.
    diff = diff_runs(a, b, parse(measure, rel=a.rel), names=names)
    label, helped, hurt, unchanged = diff.label, diff.helped, diff.hurt, diff.unchanged
    ascending = diff.deltas[::-1]  # smallest (largest loss) first, left to right
    queries = [d.query_id for d in ascending]
    deltas = np.asarray([d.delta for d in ascending], dtype=np.float64)

    figure = _new_figure(width=max(7.0, min(14.0, 0.25 * len(deltas))))
    axes = figure.add_subplot()
    positions = np.arange(len(deltas))
    if len(deltas) <= max_bars:
        colors = np.where(deltas >= 0, _HELPED, _HURT).tolist()
        axes.bar(positions, deltas, width=0.8, color=colors)
    else:  # one Rectangle per bar costs about 1 ms each: draw the same outline as two filled steps
        for where, color in ((deltas > 0, _HELPED), (deltas < 0, _HURT)):
            axes.fill_between(
                positions,
                deltas,
                0.0,
                where=where,
                step="mid",
                color=color,
                linewidth=0,
            )
    axes.axhline(0.0, color=_LINE, linewidth=0.8)
    axes.set_title(
        f"{label}: {names[1]} \u2212 {names[0]} per query\n"
        f"{helped} helped, {hurt} hurt, {unchanged} unchanged"
    )
    axes.set_ylabel(f"\u0394 {label}")
    if len(queries) <= max_labels:
        axes.set_xticks(positions, queries, rotation=90, fontsize=8)
        axes.set_xlabel("query (sorted by difference)")
    else:
        axes.set_xticks([])
        axes.set_xlabel(f"{len(queries)} queries, sorted by difference")
    axes.set_xlim(-0.6, len(deltas) - 0.4)
    axes.grid(True, axis="y", alpha=0.3)
    return figure


def rank_bin_labels(bins: tuple[int, ...] = RANK_BINS) -> list[str]:
    """The tick labels of :func:`first_relevant_ranks`' bins: ``1``, ..., ``11-20``, ..., ``1001+``."""
    labels = []
    for low, high in zip(bins, (*bins[1:], None)):
        if high is None:
            labels.append(f"{low}+")
        elif high == low + 1:
            labels.append(str(low))
        else:
            labels.append(f"{low}-{high - 1}")
    return labels


def first_relevant_ranks(runs: Mapping[str, SetEvaluator]) -> Figure:
    """Histogram of the rank of each query's first relevant document, one colour per run.

    The rank is 1 / RR (the reciprocal rank, as ``evaluate -m recip_rank`` gives it). The bins are
    :data:`RANK_BINS`: one per rank up to 10, then 11-20, 21-50, 51-100, 101-1000 and 1001+ (bins past
    the deepest rank seen are dropped). Queries with no relevant document retrieved (RR = 0) have no
    rank: the legend counts them for each run.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes with one bar group (BarContainer) per run, in ``runs`` order; the legend is the
        figure's, below the axes.
    """
    from ..measures import parse

    _check_runs(runs, "first_relevant_ranks")
    ranks: dict[str, FloatArray] = {}
    missing: dict[str, int] = {}
    for name, evaluator in runs.items():
        rr = evaluator.array(parse("RR", rel=evaluator.rel))
        found = rr > 0
        ranks[name] = np.rint(1.0 / rr[found])
        missing[name] = int(np.count_nonzero(~found))
    deepest = max((float(r.max()) for r in ranks.values() if r.size), default=1.0)
    # Bins up to the one holding the deepest rank seen, and at least ranks 1 to 10.
    used = max(10, int(np.searchsorted(RANK_BINS, deepest, side="right")))
    edges = np.asarray([*RANK_BINS, np.inf][: used + 1], dtype=np.float64)

    # The legend sits below the axes, one line per run: the figure grows with it, so the bars keep their room.
    figure = _new_figure(height=4.5 + 0.25 * max(0, len(runs) - 2))
    axes = figure.add_subplot()
    width = 0.8 / len(runs)
    styles = _styles(len(runs))
    for i, (name, found_ranks) in enumerate(ranks.items()):
        # Ranks are integers below the last finite edge, so numpy's closed last bin never matters.
        counts, _ = np.histogram(found_ranks, bins=edges)
        n_queries = len(runs[name])
        axes.bar(
            np.arange(used) - 0.4 + width * (i + 0.5),
            counts,
            width=width,
            color=styles[i]["color"],
            label=f"{name}: {missing[name]} of {n_queries} queries with no relevant retrieved",
        )
    axes.set_xticks(np.arange(used), rank_bin_labels(RANK_BINS)[:used])
    from matplotlib.ticker import MaxNLocator  # after _new_figure: matplotlib is there

    axes.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of queries
    axes.set_xlabel("rank of the first relevant document")
    axes.set_ylabel("queries")
    axes.set_title("First relevant document")
    axes.grid(True, axis="y", alpha=0.3)
    figure.legend(loc="outside lower center")  # below the axes: it never hides a bar
    return figure


def save(figure: Figure, path: str | os.PathLike[str]) -> None:
    """Write ``figure`` to ``path`` as PNG, SVG or PDF, chosen by the suffix (``.png``, ``.svg``, ``.pdf``).

    No creation date is written, so saving the same figure twice gives the same file.

    Raises
    ------
    InputFormatError
        Another suffix (or none); the message names the allowed ones.
    InputTypeError
        ``path`` is not a str or path object, or ``figure`` not a Figure.
    MissingExtraError
        Without matplotlib.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(
            f"save: 'path' must be a str or os.PathLike; got {type(path).__name__}"
        )
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FORMATS:
        raise InputFormatError(
            f"{os.fspath(path)}: cannot save a plot as {suffix or 'a file without a suffix'}; "
            f"expected one of {', '.join(FORMATS)}"
        )
    require_matplotlib()
    import matplotlib
    from matplotlib.figure import Figure

    if not isinstance(figure, Figure):
        raise InputTypeError(
            f"save: 'figure' must be a matplotlib Figure; got {type(figure).__name__}"
        )
    file_format = FORMATS[suffix]
    # A fixed salt makes the SVG's element ids repeatable; rc_context restores the user's settings.
    with matplotlib.rc_context({"svg.hashsalt": "retrieval_eval"}):
        figure.savefig(
            path, format=file_format, dpi=150, metadata=_NO_DATES[file_format]
        )
