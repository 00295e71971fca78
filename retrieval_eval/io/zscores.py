"""trec_eval's z-score files (``-Z``): ``qid measure mean stddev`` lines, read into :class:`ZScores`.

Each line gives, for one query and one measure (named as trec_eval prints it: ``map``, ``P_5``,
``iprec_at_recall_0.10``), the mean and standard deviation of that measure over a reference set of
runs. ``evaluate -Z FILE`` then prints (value - mean) / stddev instead of each value.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping

import numpy as np
from attrs import frozen

from ..model import InputFormatError, TrecFormatError


@frozen(eq=False)
class ZScores:
    """Means and standard deviations per (query, measure name), sorted by measure name then query id.

    ``query_ids`` hold UTF-8 bytes (the batch's query ids are bytes too); ``names`` are str.
    """

    names: np.ndarray  #: (n,) measure name of each entry
    query_ids: np.ndarray  #: (n,) bytes query id of each entry
    mean: np.ndarray  #: (n,) float64
    stddev: np.ndarray  #: (n,) float64
    origin: str = "<zscores>"

    def of(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entries of measure ``name``: (query ids sorted in byte order, means, stddevs)."""
        start, stop = np.searchsorted(self.names, name, side="left"), np.searchsorted(self.names, name, side="right")
        return self.query_ids[start:stop], self.mean[start:stop], self.stddev[start:stop]


def _number(text: str, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise TrecFormatError(f"{where}: expected the {what}, a finite number; found {text[:40]!r}")
    return value


def read_zscores(path: str | os.PathLike[str]) -> ZScores:
    """A z-score file: one ``qid measure mean stddev`` line per query and measure, fields separated by
    white space. A line with another number of fields, a mean or stddev that is not a finite number,
    or a (query, measure) pair given twice raises :class:`TrecFormatError` naming ``path:line``.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder) / "zscores"
    ...     _ = path.write_text("q1 map 0.25 0.1\\nq1 P_5 0.4 0.2\\n")
    ...     read_zscores(path).of("map")
    (array([b'q1'], dtype='|S2'), array([0.25]), array([0.1]))
    """
    name = os.fspath(path)
    rows: list[tuple[str, bytes, float, float, int]] = []
    try:
        with open(name, "rb") as file:
            for number, raw in enumerate(file, 1):
                where = f"{name}:{number}"
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise TrecFormatError(f"{where}: expected UTF-8 text; found bytes that are not") from None
                fields = line.split()
                if len(fields) != 4:
                    raise TrecFormatError(f"{where}: expected 4 fields 'query_id measure mean stddev'; "
                                          f"found {len(fields)}")
                rows.append((fields[1], fields[0].encode(), _number(fields[2], "mean", where),
                             _number(fields[3], "stddev", where), number))
    except OSError as exc:
        raise InputFormatError(f"{name}: cannot read the z-score file: {exc.strerror or exc}") from None
    if not rows:
        raise TrecFormatError(f"{name}: expected 'query_id measure mean stddev' lines; found none")
    return _sorted(rows, name, "line")


def zscores_from_mapping(table: Mapping[str, Mapping[str, tuple[float, float]]]) -> ZScores:
    """``{query_id: {measure_name: (mean, stddev)}}`` as :class:`ZScores`.

    >>> zscores_from_mapping({"q1": {"map": (0.25, 0.1)}}).of("map")[1]
    array([0.25])
    """
    rows: list[tuple[str, bytes, float, float, int]] = []
    for query_id, measures in table.items():
        for measure, pair in measures.items():
            where = f"<zscores>, query {query_id!r}, measure {measure!r}"
            if not isinstance(query_id, str) or not isinstance(measure, str) or len(tuple(pair)) != 2:
                raise InputFormatError(f"{where}: expected {{query_id: {{measure: (mean, stddev)}}}} with str keys")
            mean, stddev = pair
            rows.append((measure, query_id.encode(), _number(str(mean), "mean", where),
                         _number(str(stddev), "stddev", where), 0))
    return _sorted(rows, "<zscores>", "")


def _sorted(rows: list[tuple[str, bytes, float, float, int]], origin: str, unit: str) -> ZScores:
    rows.sort(key=lambda row: (row[0], row[1], row[4]))
    for before, after in itertools.pairwise(rows):
        if before[:2] == after[:2]:
            where = f"{origin}:{after[4]}" if unit else origin
            first = f" (first at line {before[4]})" if unit else ""
            raise TrecFormatError(f"{where}: query {after[1].decode()!r} and measure {after[0]!r} given twice{first}; "
                                  "expected one mean and stddev per query and measure")
    return ZScores(np.array([row[0] for row in rows], dtype=str), np.array([row[1] for row in rows], dtype="S"),
                   np.array([row[2] for row in rows], dtype=np.float64),
                   np.array([row[3] for row in rows], dtype=np.float64), origin)
