"""Tables with a header row in CSV, TSV, Markdown and LaTeX: the ``--format`` forms of evaluate and diff.

A table is a header and rows of cells; a cell is a str, an int, a float or None (no value: an empty
cell). CSV and TSV keep every float at full precision (``repr``, which reads back to the same
float); Markdown and LaTeX round to ``digits`` decimals, for reading. A table can be written in
pieces (:func:`head`, :func:`rows`, :func:`tail`), so that a long evaluation streams its rows.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence

#: The ``--format`` values that print a table.
FORMATS = ("csv", "tsv", "markdown", "latex")

Cell = str | int | float | None


def _exact(cell: Cell) -> str:
    """A cell for CSV/TSV: floats at full precision, integers as integers, None (and NaN) empty."""
    if cell is None or (isinstance(cell, float) and not math.isfinite(cell)):
        return ""
    return repr(cell) if isinstance(cell, float) else str(cell)


def _rounded(cell: Cell, digits: int) -> str:
    """A cell for Markdown/LaTeX: floats with ``digits`` decimals."""
    if isinstance(cell, float):
        return f"{cell:.{digits}f}" if math.isfinite(cell) else ""
    return "" if cell is None else str(cell)


def _delimited(lines: Sequence[Sequence[Cell]], delimiter: str) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerows([[_exact(cell) for cell in line] for line in lines])
    return out.getvalue()


def _markdown_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (ids and measure names hold ``_``, ``%``...)."""
    special = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
               "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(special.get(ch, ch) for ch in text)


def _check(form: str) -> None:
    if form not in FORMATS:
        raise ValueError(f"table format must be one of {', '.join(FORMATS)}; got {form!r}")


def head(form: str, header: Sequence[str], numeric: Sequence[bool]) -> str:
    """The header of a table in ``form``; ``numeric`` says which columns hold numbers (right-aligned)."""
    _check(form)
    if form in ("csv", "tsv"):
        return _delimited([list(header)], "," if form == "csv" else "\t")
    if form == "markdown":
        rule = "|" + "|".join("---:" if number else "---" for number in numeric) + "|"
        return _markdown_row(list(header)) + "\n" + rule + "\n"
    spec = "".join("r" if number else "l" for number in numeric)
    return (f"\\begin{{tabular}}{{{spec}}}\n\\toprule\n"
            + " & ".join(latex_escape(name) for name in header) + " \\\\\n\\midrule\n")


def rows(form: str, lines: Sequence[Sequence[Cell]], digits: int = 4) -> str:
    """Rows of a table in ``form`` (after :func:`head`)."""
    _check(form)
    if form in ("csv", "tsv"):
        return _delimited(lines, "," if form == "csv" else "\t")
    if form == "markdown":
        return "".join(_markdown_row([_rounded(cell, digits) for cell in line]) + "\n" for line in lines)
    return "".join(" & ".join(latex_escape(_rounded(cell, digits)) for cell in line) + " \\\\\n" for line in lines)


def tail(form: str) -> str:
    """What closes a table in ``form`` (only LaTeX needs it)."""
    _check(form)
    return "\\bottomrule\n\\end{tabular}\n" if form == "latex" else ""

