"""Pictures of an evaluation, as matplotlib Figures (the ``plot`` extra: ``pip install 'retrieval-evaluator[plot]'``).

- :func:`pr_curves`: interpolated precision at trec_eval's 11 recall points, one line per run.
- :func:`diff_bars`: per-query differences between two runs on one measure, sorted.
- :func:`first_relevant_ranks`: where each query's first relevant document sits.
- :func:`save`: write a Figure as PNG, SVG or PDF, chosen by the file's suffix.

Every number drawn comes from :class:`~retrieval_eval.SetEvaluator` (``aggregate``, ``array``): the
plots compute no measure of their own. matplotlib is imported by these functions only, never by
``import retrieval_eval``. The Figures are built without pyplot, so the user's backend choice and
pyplot's figure list are left alone; ``save`` renders with Agg (PNG), or the SVG and PDF writers.

All plots share one look, :data:`STYLE`, and one colour-blind-safe palette, :data:`PALETTE`. Each
run has its own colour, line style and marker, so two runs with the same values stay visible. Every
label (run names, query ids, titles) is set as plain text, never as mathtext or TeX, and characters
that cannot be printed (the bytes of a name that is not UTF-8) are shown as backslash escapes. Tick
labels are rotated, or thinned, until no two of them overlap at the figure's size.

>>> from retrieval_eval import SetEvaluator
>>> from retrieval_eval.plotting import pr_curves
>>> run = SetEvaluator.from_dict({"q1": {"a": 1, "c": 1}}, {"q1": {"a": 0.9, "b": 0.5, "c": 0.1}})
>>> figure = pr_curves({"bm25": run})
>>> [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
['bm25 (MAP 0.8333)']
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator, Mapping
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np

from ..io.files import replacing
from ..model import (
    FloatArray,
    InputFormatError,
    InputTypeError,
    MissingExtraError,
    RetrievalEvalError,
)
from ._layout import fit_tick_labels

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..evaluators import SetEvaluator
    from ..measures import Measure

__all__ = [
    "diff_bars",
    "first_relevant_ranks",
    "plain_text",
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

#: The Okabe-Ito colours (Okabe & Ito, "Color Universal Design", 2008), told apart with every common
#: colour-vision deficiency; their yellow is left out, too faint on white.
PALETTE: tuple[str, ...] = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
#: Line styles and hollow markers: with the 7 colours, the first 56 runs each look different.
LINE_STYLES: tuple[str, ...] = ("-", "--", ":", "-.")
#: The markers are chosen so that any two drawn at one point both show (a hollow circle, then a cross).
MARKERS: tuple[str, ...] = ("o", "x", "^", "+", "D", "v", "s", "*")
#: Bar hatches, from the 8th run on (when the colours come round again): first_relevant_ranks.
HATCHES: tuple[str, ...] = ("", "///", "...", "xxx", "\\\\\\", "ooo")
#: plot diff: queries the second run helped (blue), hurt (vermillion), and the zero line.
HELPED, HURT, _LINE = PALETTE[0], PALETTE[1], "#444444"

#: The one look of every figure, set (``matplotlib.rc_context``) while a plot is built, laid out and
#: saved. Labels are never TeX; PDFs embed TrueType fonts (editable, accepted by publishers); the
#: SVG element ids are repeatable.
STYLE: dict[str, Any] = {
    "font.size": 10.0,
    "axes.titlesize": 11.0,
    "axes.labelsize": 10.0,
    "xtick.labelsize": 9.0,
    "ytick.labelsize": 9.0,
    "legend.fontsize": 9.0,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.axisbelow": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.6,
    "lines.markersize": 6.0,
    "text.usetex": False,
    "text.parse_math": True,  # labels escape every $ (plain_text), so none of them is mathtext
    "pdf.fonttype": 42,
    "svg.hashsalt": "retrieval_eval",
}

#: Default figure size in inches (width, height); a size given must lie within these bounds.
DEFAULT_SIZE = (7.0, 4.5)
SIZE_RANGE = (2.0, 50.0)
_LABEL_LIMIT = 60  # characters of a run name or query id shown (a 100 KB id would fill the figure)
_TITLE_LIMIT = 200


def require_matplotlib() -> None:
    """Raise :class:`MissingExtraError` (one line naming the ``plot`` extra) unless matplotlib can be imported.

    ``retrieval-eval plot`` calls it before reading any file, so a missing extra is reported at once.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingExtraError(_NO_MATPLOTLIB) from None


@contextlib.contextmanager
def _styled() -> Iterator[None]:
    require_matplotlib()
    import matplotlib

    with matplotlib.rc_context(dict(STYLE)):  # type: ignore[arg-type]  # its keys are rc names
        yield


def plain_text(text: str, limit: int = _LABEL_LIMIT) -> str:
    """``text`` as a label that matplotlib draws as it is: every ``$`` escaped (no mathtext), every
    character that cannot be printed written as a backslash escape (a byte of a name that is not
    UTF-8, kept as a lone surrogate, as ``\\xe9``), and cut to ``limit`` characters.

    >>> plain_text("$\\\\alpha$ q\\udce9")
    '\\\\$\\\\alpha\\\\$ q\\\\xe9'
    """
    shown = text if text.isprintable() else "".join(c if c.isprintable() else _escaped(c) for c in text)
    if len(shown) > limit:
        shown = shown[: limit - 3] + "..."
    return shown.replace("$", "\\$")


def _escaped(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (surrogateescape): shown as the byte
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _check_options(function: str, title: object, size: object) -> tuple[float, float] | None:
    """The ``title`` and ``size`` every plot takes: the size as two floats, or None for the default."""
    if title is not None and not isinstance(title, str):
        raise InputTypeError(f"{function}: 'title' must be a str or None; got {type(title).__name__}")
    if size is None:
        return None
    if not (
        isinstance(size, (tuple, list))
        and len(size) == 2
        and all(isinstance(v, Real) and not isinstance(v, bool) for v in size)
    ):
        raise InputTypeError(f"{function}: 'size' must be a (width, height) pair of numbers in inches; got {size!r}")
    width, height = float(size[0]), float(size[1])
    low, high = SIZE_RANGE
    if not all(math.isfinite(v) and low <= v <= high for v in (width, height)):
        raise RetrievalEvalError(
            f"{function}: 'size' must be a width and a height from {low:g} to {high:g} inches; "
            f"got {width:g} by {height:g}"
        )
    return width, height


def _new_figure(size: tuple[float, float]) -> Figure:
    """A Figure not registered with pyplot (so no global backend or figure list is touched)."""
    from matplotlib.figure import Figure

    return Figure(figsize=size, layout="constrained")


def _styles(n: int) -> list[dict[str, Any]]:
    """Colour, line style, marker and bar hatch of each of ``n`` runs: the triple (colour, line style,
    marker) differs between any two of the first 56 runs, and so does the pair (colour, hatch) up to
    42 runs. No two of the first 4 runs share a colour, a line style or a marker."""
    return [
        {
            "color": PALETTE[i % len(PALETTE)],
            "linestyle": LINE_STYLES[i % len(LINE_STYLES)],
            "marker": MARKERS[i % len(MARKERS)],
            "hatch": HATCHES[i // len(PALETTE) % len(HATCHES)],
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
                f"{function}: run {plain_text(name)!r} must be a SetEvaluator; got {type(evaluator).__name__}"
            )


def pr_curves(
    runs: Mapping[str, SetEvaluator],
    *,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    log_y: bool = False,
) -> Figure:
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
    size : (float, float), optional
        Width and height in inches, each from 1 to 50; default (7, 4.5).
    log_y : bool, default False
        A logarithmic precision axis (up to 1); points of precision 0 have no place on it and are
        left out.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; both axes run from 0 to 1 (the y axis to 1 only, with ``log_y``).

    Raises
    ------
    MissingExtraError
        Without matplotlib.
    """
    from ..measures import parse, parse_all

    _check_runs(runs, "pr_curves")
    shape = _check_options("pr_curves", title, size) or DEFAULT_SIZE
    with _styled():
        figure = _new_figure(shape)
        axes = figure.add_subplot()
        for (name, evaluator), look in zip(runs.items(), _styles(len(runs))):
            style = {key: look[key] for key in ("color", "linestyle", "marker")}
            levels = parse_all("iprec_at_recall", rel=evaluator.rel)
            recall = [float(m["recall"]) for m in levels]
            precision = [evaluator.aggregate(m) for m in levels]
            mean_ap = evaluator.aggregate(parse("AP", rel=evaluator.rel))
            axes.plot(
                recall,
                precision,
                markerfacecolor="none",  # hollow: a marker drawn over another keeps both outlines
                markeredgewidth=1.3,
                clip_on=False,
                label=f"{plain_text(name)} (MAP {mean_ap:.4f})",
                **style,
            )
        axes.set_xlim(0.0, 1.0)
        if log_y:
            _log_y(axes, nonpositive="mask")
            axes.set_ylim(top=1.0)
        else:
            axes.set_ylim(0.0, 1.0)
        axes.set_xlabel("recall")
        axes.set_ylabel("interpolated precision")
        axes.set_title(plain_text(title, _TITLE_LIMIT) if title is not None else "Interpolated precision-recall")
        axes.grid(True)
        axes.legend(loc="lower left" if log_y else "upper right")
        fit_tick_labels(figure)
    return figure


def diff_bars(
    a: SetEvaluator,
    b: SetEvaluator,
    measure: str | Measure,
    names: tuple[str, str] = ("A", "B"),
    *,
    max_labels: int = 40,
    max_bars: int = 500,
    title: str | None = None,
    size: tuple[float, float] | None = None,
) -> Figure:
    """Per-query differences ``b - a`` on ``measure`` as bars sorted by size, with a zero line.

    Bars above zero (queries ``b`` helped) are blue, below (hurt) vermillion: a pair told apart with
    every common colour-vision deficiency. The title names the measure (its canonical string) and
    counts the queries helped, hurt and unchanged (a difference of exactly 0, as the significance
    tests count ties). Only the queries both runs have are drawn.

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
    title : str, optional
        The title's first line; the second line, the counts, stays. Defaults to
        "MEASURE: B − A per query".
    size : (float, float), optional
        Width and height in inches, each from 1 to 50; by default 4.5 high and from 7 to 14 wide,
        growing with the number of queries.

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
    shape = _check_options("diff_bars", title, size)
    # The diff command's own pairing, counts and refusal of runs with no query in common, so the
    # picture and the table always agree.
    diff = diff_runs(a, b, parse(measure, rel=a.rel), names=names)
    label, helped, hurt, unchanged = diff.label, diff.helped, diff.hurt, diff.unchanged
    ascending = diff.deltas[::-1]  # smallest (largest loss) first, left to right
    queries = [plain_text(d.query_id) for d in ascending]
    deltas = np.asarray([d.delta for d in ascending], dtype=np.float64)
    first, second = plain_text(names[0]), plain_text(names[1])

    with _styled():
        figure = _new_figure(shape or (max(7.0, min(14.0, 0.25 * len(deltas))), DEFAULT_SIZE[1]))
        axes = figure.add_subplot()
        positions = np.arange(len(deltas))
        if len(deltas) <= max_bars:
            colors = np.where(deltas >= 0, HELPED, HURT).tolist()
            axes.bar(positions, deltas, width=0.8, color=colors)
        else:  # one Rectangle per bar costs about 1 ms each: draw the same outline as two filled steps
            for where, color in ((deltas > 0, HELPED), (deltas < 0, HURT)):
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
        heading = (
            plain_text(title, _TITLE_LIMIT) if title is not None
            else f"{label}: {second} \u2212 {first} per query"
        )
        axes.set_title(f"{heading}\n{helped} helped, {hurt} hurt, {unchanged} unchanged")
        axes.set_ylabel(f"\u0394 {label}")
        if len(queries) <= max_labels:
            axes.set_xticks(positions, queries, fontsize=8)
            axes.set_xlabel("query (sorted by difference)")
        else:
            axes.set_xticks([])
            axes.set_xlabel(f"{len(queries)} queries, sorted by difference")
        axes.set_xlim(-0.6, len(deltas) - 0.4)
        axes.grid(True, axis="y")
        fit_tick_labels(figure)
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


def first_relevant_ranks(
    runs: Mapping[str, SetEvaluator],
    *,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    log_y: bool = False,
) -> Figure:
    """Histogram of the rank of each query's first relevant document, one colour per run.

    The rank is 1 / RR (the reciprocal rank, as ``evaluate -m recip_rank`` gives it). The bins are
    :data:`RANK_BINS`: one per rank up to 10, then 11-20, 21-50, 51-100, 101-1000 and 1001+ (bins past
    the deepest rank seen are dropped). Queries with no relevant document retrieved (RR = 0) have no
    rank: they are counted in a last bin, ``none``, set apart by a dotted line.

    Parameters
    ----------
    runs : mapping of run name to SetEvaluator
        In legend order.
    title : str, optional
        Defaults to "First relevant document".
    size : (float, float), optional
        Width and height in inches, each from 1 to 50; by default 7 wide and 4.5 high, higher when
        the legend needs more than one row.
    log_y : bool, default False
        A logarithmic count axis (empty bins have no bar).

    Returns
    -------
    matplotlib.figure.Figure
        One Axes with one bar group (BarContainer) per run, in ``runs`` order, each with one bar per
        bin and the ``none`` bar last; the legend, the run names only, is the figure's, below the axes.
    """
    from ..measures import parse

    _check_runs(runs, "first_relevant_ranks")
    shape = _check_options("first_relevant_ranks", title, size)
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
    positions = np.asarray([*range(used), used + 0.5])  # the "none" bin a half step apart

    names = [plain_text(name) for name in runs]
    columns = min(len(runs), 4) if max(len(n) for n in names) <= 20 else 1
    rows = -(-len(runs) // columns)
    with _styled():
        # The legend sits below the axes: the figure grows with its rows, so the bars keep their room.
        figure = _new_figure(shape or (DEFAULT_SIZE[0], DEFAULT_SIZE[1] + 0.25 * max(0, rows - 1)))
        axes = figure.add_subplot()
        width = 0.8 / len(runs)
        for i, ((name, found_ranks), style) in enumerate(zip(ranks.items(), _styles(len(runs)))):
            # Ranks are integers below the last finite edge, so numpy's closed last bin never matters.
            counts, _ = np.histogram(found_ranks, bins=edges)
            axes.bar(
                positions - 0.4 + width * (i + 0.5),
                [*counts, missing[name]],
                width=width,
                color=style["color"],
                hatch=style["hatch"] or None,
                edgecolor="white" if style["hatch"] else None,
                linewidth=0,
                label=names[i],
            )
        axes.axvline(used - 0.25, color=_LINE, linewidth=0.8, linestyle=":")
        axes.set_xticks(positions, [*rank_bin_labels(RANK_BINS)[:used], "none"])
        from matplotlib.ticker import MaxNLocator  # inside _styled: matplotlib is there

        if log_y:  # a bar of 1 query stands as high as a bar from 1 to 0.7 would
            _log_y(axes, nonpositive="clip")
            axes.set_ylim(bottom=0.7)
        else:
            axes.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of queries
        axes.set_xlabel("rank of the first relevant document")
        axes.set_ylabel("queries")
        axes.set_title(plain_text(title, _TITLE_LIMIT) if title is not None else "First relevant document")
        axes.grid(True, axis="y")
        figure.legend(loc="outside lower center", ncols=columns)  # below the axes: it never hides a bar
        fit_tick_labels(figure)
    return figure


def _log_y(axes: Any, nonpositive: str) -> None:
    """A logarithmic y axis numbered as plain numbers (1, 10, 0.1), its minor ticks unnumbered."""
    from matplotlib.ticker import NullFormatter, StrMethodFormatter

    axes.set_yscale("log", nonpositive=nonpositive)
    axes.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    axes.yaxis.set_minor_formatter(NullFormatter())


def save(figure: Figure, path: str | os.PathLike[str]) -> None:
    """Write ``figure`` to ``path`` as PNG, SVG or PDF, chosen by the suffix (``.png``, ``.svg``, ``.pdf``).

    No creation date is written, so saving the same figure twice gives the same file. The image is
    written to a new file beside ``path`` and renamed over it when complete
    (:func:`retrieval_eval.io.files.replacing`): a failed save leaves an existing ``path`` as it was.

    Raises
    ------
    InputFormatError
        Another suffix (or none); the message names the allowed ones.
    InputTypeError
        ``path`` is not a str or path object, or ``figure`` not a Figure.
    MissingExtraError
        Without matplotlib.
    OSError
        The file could not be written (a full disk, a directory that does not exist).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(
            f"save: 'path' must be a str or os.PathLike; got {type(path).__name__}"
        )
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FORMATS:
        raise InputFormatError(
            f"{plain_text(os.fspath(path), _TITLE_LIMIT)}: cannot save a plot as "
            f"{suffix or 'a file without a suffix'}; expected one of {', '.join(FORMATS)}"
        )
    require_matplotlib()
    from matplotlib.figure import Figure

    if not isinstance(figure, Figure):
        raise InputTypeError(
            f"save: 'figure' must be a matplotlib Figure; got {type(figure).__name__}"
        )
    file_format = FORMATS[suffix]
    # rc_context restores the user's settings afterwards.
    with _styled(), replacing(path) as out:
        figure.savefig(out, format=file_format, dpi=150, metadata=_NO_DATES[file_format])
