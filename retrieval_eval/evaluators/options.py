"""The checks of the evaluators' options: ``rel``, a cutoff ``k``, ``max_depth``, and the readers' options.

Every check raises as the same parameter of a measure does (the same Param, the same error), so an
evaluator's ``rel=`` or ``k`` is read exactly as a measure string's.
"""

from __future__ import annotations

from typing import Any

from ..engine.build import Order, check_duplicates_option
from ..engine.ties import check_ties
from ..measures import CUTOFF, REL
from ..measures.params import INT_LIMIT, Param
from ..model import optional_int_at_least


def _check_rel(owner: str, rel: object) -> int:
    """``rel`` checked as every measure's ``rel`` parameter is (the same Param, the same error)."""
    if type(rel) is int and 0 <= rel <= INT_LIMIT:  # the usual rel=1: what REL.check passes as it is
        return rel
    return int(REL.check(owner, "rel", rel))


def _check_cutoff(owner: str, k: object) -> int:
    """A required cutoff ``k``, checked as every measure's cutoff is."""
    return int(CUTOFF.check(owner, "k", k, allow_none=False))


#: The depth of :meth:`RetrievalEvaluator.relevant_retrieved`: a count, so 0 (the empty top) is allowed.
_DEPTH = Param(int, None, "rank depth k: the top k ranks (0: none)", minimum=0)


def _check_max_depth(max_depth: object) -> int | None:
    """``max_depth`` as an int >= 0 or None: InputTypeError for another type (1.5, '3'), InputFormatError below 0."""
    return optional_int_at_least(max_depth, "'max_depth'", 0)


#: The ``order`` option of the readers (and the CLI's --order), as the batch builder names each.
RANKING_ORDERS: dict[str, Order] = {"score": "score", "file": "given", "rank": "rank"}


def _read_options(max_depth: object, duplicates: object, order: object, ties: object = "trec_eval") -> dict[str, Any]:
    """The build options of a file or table reader (``from_trec``, ``from_arrow``, ...), checked."""
    checked_depth = _check_max_depth(max_depth)
    check_duplicates_option(duplicates)
    if not isinstance(order, str) or order not in RANKING_ORDERS:
        raise ValueError(f"'order' must be one of {list(RANKING_ORDERS)}; got {order!r}")
    return {"max_depth": checked_depth, "duplicates": duplicates, "order": RANKING_ORDERS[order],
            "ties": check_ties(ties)}
