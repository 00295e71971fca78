"""Measure parameters: :class:`Param` (the one validation of a parameter), the shared ``REL``,
``CUTOFF`` and ``JUDGED_ONLY``, :class:`TrecName` (how trec_eval names a measure) and the errors a
measure raises.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol, cast

import numpy as np
from attrs import frozen

from ..model import RetrievalEvalError


class MeasureError(RetrievalEvalError):
    """A measure that cannot be computed as asked: an unknown name or a parameter outside its domain."""


class UnknownMeasureError(MeasureError):
    """A measure name, alias or parameter name that the registry does not know, or a malformed measure string."""


class InvalidParameterError(MeasureError):
    """A measure parameter (or an evaluator's ``rel`` or ``k``) outside its domain."""


def _plain(value: Any, kind: type) -> Any:
    """NumPy scalars as the Python numbers they hold; an int where a float is expected as that float."""
    if isinstance(value, np.generic) and not isinstance(value, (np.str_, np.bytes_)):
        value = value.item()
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an int beyond the double range: outside every domain
            return math.inf
    return value


#: The largest magnitude of an int parameter (a cutoff, ``rel``, a length): kernels compute with
#: int64, so every int parameter lies in [-2**62, 2**62], whatever its own bounds say.
INT_LIMIT = 2**62
#: The largest magnitude of a float parameter (a gain, a utility coefficient, a multiple): every
#: float parameter lies in [-2**63, 2**63], whatever its own bounds say, so a sum over 2**62 ranks
#: of such a number times a count stays a finite double. Infinity and NaN are never valid.
FLOAT_LIMIT = 2.0**63


@frozen
class Param:
    """One parameter of a measure: its type, default, allowed values and a one-line description.

    :meth:`check` is the one validation of measure parameters: measure strings, ``Measure(...)``
    calls and the evaluators' ``rel`` and ``k`` arguments all go through it. NumPy scalars are taken
    as the Python numbers they hold. Every number has a finite domain: its own ``minimum`` and
    ``maximum``, within :data:`INT_LIMIT` (2**62) of 0 for an int, since kernels compute with int64
    (``Judged@10**21`` is refused), and within :data:`FLOAT_LIMIT` (2**63) of 0 for a float, which
    is never NaN or infinite. A tuple parameter checks each of its members against ``items``.
    """

    kind: type
    default: Any
    description: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    #: Optional converter applied first (e.g. a dict to a hashable table); ValueError means invalid.
    convert: Callable[[Any], Any] | None = None
    #: For a tuple parameter: the domain of each member (IPrecAvg's recall levels).
    items: Param | None = None

    def domain(self) -> str:
        """The allowed values in words: ``an int >= 1``, ``one of 'log2', 'exp-log2'``."""
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        article = "an" if self.kind.__name__[0] in "aeiou" else "a"
        if self.minimum is not None and self.maximum is not None:
            return f"{article} {self.kind.__name__} in [{self.minimum!r}, {self.maximum!r}]"
        if self.kind is tuple and self.items is not None:
            return f"a non-empty tuple, each member {self.items.domain()}"
        bound = f" >= {self.minimum!r}" if self.minimum is not None else ""
        bound += f" <= {self.maximum!r}" if self.maximum is not None else ""
        return f"{article} {self.kind.__name__}{bound}"

    def check(self, owner: str, name: str, value: Any, *, allow_none: bool = True) -> Any:
        """``value`` validated and converted; raise :class:`InvalidParameterError` naming ``owner`` and ``name``.

        None stands for the default when the default is None (no cutoff), unless ``allow_none`` is false.
        """
        if value is None and self.default is None and allow_none:
            return None
        if self.convert is not None and value is not None:
            try:
                value = self.convert(value)
            except (TypeError, ValueError) as exc:
                raise InvalidParameterError(f"parameter {name!r} of {owner}: {exc}") from None
        value = _plain(value, self.kind)
        valid = isinstance(value, self.kind) and (self.kind is bool or not isinstance(value, bool))
        if valid and isinstance(value, float):
            valid = not math.isnan(value)
        if valid and self.choices is not None:
            valid = value in self.choices
        if valid and self.minimum is not None:
            valid = value >= self.minimum
        if valid and self.maximum is not None:
            valid = value <= self.maximum
        if not valid:
            raise InvalidParameterError(f"parameter {name!r} of {owner} must be {self.domain()}; got {value!r:.100}")
        if isinstance(value, int) and not isinstance(value, bool) and not -INT_LIMIT <= value <= INT_LIMIT:
            raise InvalidParameterError(
                f"parameter {name!r} of {owner} must be {self.domain()} and at most 2**62 in size "
                f"(it is computed with int64); got {value!r:.100}"
            )
        if isinstance(value, float) and not -FLOAT_LIMIT <= value <= FLOAT_LIMIT:
            raise InvalidParameterError(
                f"parameter {name!r} of {owner} must be {self.domain()}, finite and at most 2**63 in size "
                f"(so that sums over a ranking stay finite); got {value!r:.100}"
            )
        if self.items is not None and isinstance(value, tuple):
            if not value:
                raise InvalidParameterError(f"parameter {name!r} of {owner} must be {self.domain()}; got ()")
            value = tuple(self.items.check(owner, f"{name}[{i}]", item, allow_none=False) for i, item in enumerate(value))
        return value


#: The relevance threshold shared by every binary-relevance measure (trec_eval ``-l``).
REL = Param(int, 1, "relevance threshold: a judgment >= rel is relevant", minimum=0)
#: The rank cutoff shared by the measures written ``Name@k``.
CUTOFF = Param(int, None, "rank cutoff k: only the top k ranks count", minimum=1)
#: ir_measures' ``judged_only``: evaluate on the judged documents only, re-ranked (trec_eval ``-J``
#: for one measure). Measures registered with ``judged_only=True`` take it; no kernel sees it.
JUDGED_ONLY = Param(bool, False, "drop unjudged documents from the ranking first (trec_eval -J, for this measure)")


class TrecSyntax(Protocol):
    """How the string of ``-m name.params`` maps to measure parameters (implementations: ``trec_syntax``)."""

    # Read-only: the implementations are frozen attrs classes or expose it as a property.
    @property
    def names(self) -> tuple[str, ...]:
        """The measure parameters the string can set."""
        ...

    def read(self, measure: str, text: str) -> dict[str, Any]:
        """The measure parameters the string gives; raise UnknownMeasureError when it is malformed."""
        ...

    def write(self, changed: Mapping[str, Any], values: Mapping[str, Any]) -> str:
        """A parameter string for ``changed`` (the settable parameters that differ from trec_eval's
        defaults); ``values`` holds every settable parameter's value."""
        ...


@frozen
class TrecName:
    """How trec_eval names a measure.

    Three shapes: a plain ``name``; ``name_<cutoff>`` for each cutoff of a list (``cutoff=True``);
    or ``name`` / ``name_<params>`` for measures whose ``-m name.params`` string sets other
    parameters (``syntax``). ``preset`` holds parameter values the trec_eval name implies (``rbp``
    is ``RBP(p=0.9)``, ``set_relative_P`` is ``SetP(relative=True)``).
    """

    name: str
    cutoff: bool = False
    defaults: tuple[float, ...] = ()  #: cutoffs used when ``-m name`` gives none
    float_cutoffs: bool = False  #: cutoffs print as %3.2f (iprec_at_recall) instead of %d
    preset: tuple[tuple[str, Any], ...] = ()
    syntax: TrecSyntax | None = None

    def label(self, cutoff: float | None, params: str | None = None) -> str:
        """The printed name: ``name``, ``name_<cutoff>`` or ``name_<params>`` (the raw string)."""
        if self.cutoff:
            if self.float_cutoffs:
                return f"{self.name}_{cutoff:3.2f}"
            # A cutoff entry is labelled with its cutoff (a no-op cast: int(None) still raises).
            return f"{self.name}_{int(cast(float, cutoff))}"
        return f"{self.name}_{params}" if params else self.name

