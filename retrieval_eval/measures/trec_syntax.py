"""trec_eval's parameter strings (``-m name.params``) for measures that take more than a cutoff list.

Each syntax reads the raw string into measure parameters and writes parameters back as a string (for
labels of measures built in Python). trec_eval prints ``name_<raw string>`` when a string is given,
so the CLI keeps the raw text for its labels.

- :class:`TrecValues`: a fixed number of comma-separated numbers (``utility.1,-1,0,0``, ``set_F.0.5``,
  ``relstring.20``).
- :class:`TrecFloatList`: any number of comma-separated numbers (``11pt_avg..25,.5,.75``).
- :class:`TrecGainPairs`: ``level=gain`` pairs, plus named numbers such as rbp's ``p=0.95``.

Numbers are read with Python's ``float``: where C's ``atof`` silently reads ``abc`` as 0 we raise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from .gains import Gains
from .params import UnknownMeasureError

_LEVEL = re.compile(r"^[+-]?\d+$")


def _number(measure: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UnknownMeasureError(f"parameter {text!r} of trec_eval measure {measure!r} must be a number") from None


def format_number(value: Any) -> str:
    """A number as a parameter string writes it: ``2`` for 2.0, ``0.95`` for 0.95."""
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def _items(measure: str, text: str) -> list[str]:
    items = text.split(",")
    if not text or any(not item.strip() for item in items):
        raise UnknownMeasureError(f"malformed parameters {text!r} for trec_eval measure {measure!r}")
    return items


@frozen
class TrecValues:
    """Exactly ``len(names)`` comma-separated numbers, one per measure parameter, in order."""

    names: tuple[str, ...]
    convert: Callable[[float], Any] = float

    def read(self, measure: str, text: str) -> dict[str, Any]:
        items = _items(measure, text)
        if len(items) != len(self.names):
            raise UnknownMeasureError(
                f"trec_eval measure {measure!r} takes {len(self.names)} comma-separated number(s) "
                f"({', '.join(self.names)}); got {text!r}"
            )
        return {name: self.convert(_number(measure, item)) for name, item in zip(self.names, items)}

    def write(self, changed: Mapping[str, Any], values: Mapping[str, Any]) -> str:
        return ",".join(format_number(values[name]) for name in self.names)


@frozen
class TrecFloatList:
    """Any number of comma-separated numbers, as one tuple parameter."""

    name: str

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name,)

    def read(self, measure: str, text: str) -> dict[str, Any]:
        return {self.name: tuple(_number(measure, item) for item in _items(measure, text))}

    def write(self, changed: Mapping[str, Any], values: Mapping[str, Any]) -> str:
        return ",".join(format_number(v) for v in values[self.name])


@frozen
class TrecGainPairs:
    """``level=gain`` pairs into the ``gains`` parameter; ``name=value`` for the names in ``extra``.

    trec_eval skips pair names that are not integers (that is how rbp reads ``p=``); we accept only
    the names in ``extra`` and raise on any other, and on negative or repeated levels.
    """

    extra: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return ("gains", *self.extra)

    def read(self, measure: str, text: str) -> dict[str, Any]:
        levels: list[tuple[int, float]] = []
        params: dict[str, Any] = {}
        for item in _items(measure, text):
            name, eq, value = item.partition("=")
            if not eq or not name or not value or "=" in value:
                raise UnknownMeasureError(
                    f"trec_eval measure {measure!r} takes 'level=gain' pairs; got {item!r} in {text!r}"
                )
            if _LEVEL.match(name):
                levels.append((int(name), _number(measure, value)))
            elif name in self.extra:
                params[name] = _number(measure, value)
            else:
                allowed = " or ".join(["an integer level", *(repr(e) for e in self.extra)])
                raise UnknownMeasureError(f"parameter name {name!r} of trec_eval measure {measure!r} must be {allowed}")
        if levels:
            try:
                params["gains"] = Gains(levels)
            except ValueError as exc:
                raise UnknownMeasureError(f"trec_eval measure {measure!r}: {exc}") from None
        return params

    def write(self, changed: Mapping[str, Any], values: Mapping[str, Any]) -> str:
        parts = [f"{name}={format_number(changed[name])}" for name in self.extra if name in changed]
        gains = changed.get("gains") or {}
        parts += [f"{level}={format_number(gain)}" for level, gain in gains.items()]
        return ",".join(parts)
