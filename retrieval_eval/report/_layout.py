"""Tick labels that never overlap: the plots of :mod:`.plotting` lay each figure out, measure the
rendered label boxes, and rotate or thin the labels until no two of them overlap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import RetrievalEvalError

if TYPE_CHECKING:
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure


def fit_tick_labels(figure: Figure) -> None:
    """Rotate, then thin, the tick labels of every axis until no two of them overlap at the figure's
    size: named ticks (queries, rank bins) turn upright, then show every 2nd, 3rd, ... name; numbered
    ticks get fewer numbers."""
    from matplotlib.ticker import FixedLocator

    names: dict[int, list[str]] = {}  # per named axis: all its names, before any is hidden
    steps: dict[int, int] = {}  # and every how many-th of them is shown
    for _ in range(40):  # each round loosens every crowded axis; far more rounds than ever needed
        _lay_out(figure)
        crowded = [axis for axes in figure.axes for axis in (axes.xaxis, axes.yaxis) if overlapping(axis)]
        if not crowded:
            return
        for axis in crowded:
            key = id(axis)
            if not isinstance(axis.get_major_locator(), FixedLocator):  # numbers, not names
                _loosen_numbered(axis)
            elif axis.axis_name == "x" and key not in steps:
                axis.set_tick_params(labelrotation=90)
                steps[key] = 1
            else:
                locations = axis.get_ticklocs()
                texts = names.setdefault(key, axis.get_major_formatter().format_ticks(list(locations)))
                steps[key] = steps.get(key, 1) + 1
                last = len(texts) - 1  # the last name stays too (the "none" bin, the best query)
                shown = [text if i % steps[key] == 0 or i == last else "" for i, text in enumerate(texts)]
                axis.set_ticks(locations, shown)


def _lay_out(figure: Figure) -> None:
    """Draw the figure without output (as saving does, so the text boxes have their final places);
    a figure too small for its labels is an error rather than a picture of nothing but labels."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure.draw_without_rendering()
    for warning in caught:
        if "constrained_layout not applied" in str(warning.message):
            width, height = figure.get_size_inches()
            raise RetrievalEvalError(
                f"a figure of {width:g} by {height:g} inches is too small for its labels; make it larger"
            )
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)


def _loosen_numbered(axis: Axis) -> None:
    from matplotlib.ticker import LogLocator, MaxNLocator

    count = sum(1 for t in axis.get_ticklabels() if t.get_visible() and t.get_text())
    locator = axis.get_major_locator()
    if isinstance(locator, LogLocator):
        locator.set_params(numticks=max(2, count - 1))
    elif isinstance(locator, MaxNLocator):
        locator.set_params(nbins=max(1, count - 2))
    else:
        axis.set_major_locator(MaxNLocator(nbins=max(1, count - 2)))


def overlapping(axis: Axis) -> list[tuple[str, str]]:
    """The pairs of ``axis``' drawn tick labels whose rendered boxes overlap (after the figure is
    drawn; ``figure.draw_without_rendering()`` draws it)."""
    drawn = [*axis.get_ticklabels(), *axis.get_ticklabels(minor=True)]
    labels = [t for t in drawn if t.get_visible() and t.get_text()]
    boxes = [t.get_window_extent() for t in labels]
    pairs = []
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            # overlap by more than a hair: touching corners, rounded to a pixel, are not an overlap
            dx = min(boxes[i].x1, boxes[j].x1) - max(boxes[i].x0, boxes[j].x0)
            dy = min(boxes[i].y1, boxes[j].y1) - max(boxes[i].y0, boxes[j].y0)
            if dx > 0.5 and dy > 0.5:
                pairs.append((labels[i].get_text(), labels[j].get_text()))
    return pairs
