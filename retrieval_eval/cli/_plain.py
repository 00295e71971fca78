"""Rows of numbers as the analyses' commands print them (pool, agree, similarity, reproduce): an aligned
plain-text table with a fixed number of decimals, or CSV at full precision. NaN prints as ``-``."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from typing import Any


def _cell(value: Any, digits: int | None) -> str:
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    if math.isnan(value):
        return "-"
    return repr(value) if digits is None else f"{value:.{digits}f}"


def plain_table(header: Sequence[str], rows: Sequence[Sequence[Any]], digits: int) -> str:
    """An aligned table: the first column left, the others right, a rule under the header."""
    cells = [list(header), *([_cell(v, digits) for v in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def csv_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """CSV with a header row, every number at full precision (``repr``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_cell(v, None) for v in row] for row in rows)
    return out.getvalue()
