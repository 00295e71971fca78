"""Intent tests: per-query facts about a ranking ("d1 stays in the top 3 for q1"), read from a JSONL
or TOML file and checked against a run, each fact an :class:`~.outcomes.Outcome`.

A fact names a query, its subject documents (``doc`` or ``docs``) and one claim:

- ``in_top: k``: every subject document is in the top k;
- ``never_in_top: k``: no subject document is in the top k;
- ``any_in_top: k``: at least one subject document is in the top k;
- ``ranks_above: e`` (a document or a list): every subject document is retrieved and ranks above
  each of them; a document the run does not retrieve counts as below every retrieved one.

Ranks are positions in the run's ranking as the engine orders it (trec_eval's rule by default:
score descending, ties by doc_id descending). A query the run does not have fails every fact on
it. ``known_failure: true`` marks a fact that is known not to hold yet; ``id`` and ``note`` name and
explain it.

>>> facts = parse_jsonl('{"query": "q1", "doc": "b", "in_top": 1}\\n'
...                     '{"query": "q1", "doc": "a", "ranks_above": "b", "known_failure": true}\\n')
>>> rankings = Rankings.of({"q1": {"a": 0.5, "b": 0.9}})
>>> [(o.name, o.status, o.message) for o in check_facts(facts, rankings)]
[('q1: b in top 1', 'passed', 'b at rank 1'), ('q1: a above b', 'skipped', 'known failure: a at rank 2, b at rank 1')]
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ..model import InputFormatError, MissingExtraError, id_problem
from .outcomes import Outcome

__all__ = [
    "CLAIMS", "Fact", "Rankings", "check_fact", "check_facts", "fact_outcome", "parse_jsonl", "parse_toml",
    "read_expectations",
]

#: The claims a fact can make, each a field whose value is a depth k (or, for ranks_above, documents).
CLAIMS = ("in_top", "never_in_top", "any_in_top", "ranks_above")
#: Every field a fact may have.
FIELDS = ("query", "doc", "docs", *CLAIMS, "known_failure", "id", "note")
#: The group of the outcomes of facts (a JUnit test suite).
GROUP = "expectations"


@attrs.frozen
class Fact:
    """One per-query fact about a ranking, with where it was written (``origin:line``)."""

    query: str
    claim: str  #: one of :data:`CLAIMS`
    docs: tuple[str, ...]  #: the subject documents
    k: int | None = None  #: the depth of in_top, never_in_top and any_in_top
    below: tuple[str, ...] = ()  #: the documents ranks_above names
    known_failure: bool = False
    id: str | None = None
    note: str | None = None
    origin: str = "<expectations>"
    line: int = 0

    @property
    def where(self) -> str:
        """``path:line`` of the fact."""
        return f"{self.origin}:{self.line}"

    @property
    def name(self) -> str:
        """Its ``id``, or what it claims: ``q1: d1 in top 3``."""
        return self.id or f"{self.query}: {self.describe()}"

    def describe(self) -> str:
        """The claim in words, without the query."""
        docs = ", ".join(self.docs)
        if self.claim == "ranks_above":
            return f"{docs} above {', '.join(self.below)}"
        if self.claim == "any_in_top":
            return f"one of {docs} in top {self.k}" if len(self.docs) > 1 else f"{docs} in top {self.k}"
        if self.claim == "never_in_top":
            return f"none of {docs} in top {self.k}" if len(self.docs) > 1 else f"{docs} not in top {self.k}"
        return f"each of {docs} in top {self.k}" if len(self.docs) > 1 else f"{docs} in top {self.k}"


# --------------------------------------------------------------------------------------------------
# Rankings


class Rankings:
    """Each query's ranking as the engine orders it: the documents best first, by query id.

    Build it with :meth:`read` (a run file, read as every command reads runs), :meth:`of` (a dict
    ``{query_id: {doc_id: score}}``, columns or an evaluator) or directly from ranked lists.
    """

    def __init__(self, ranked: Mapping[str, Sequence[str]], origin: str = "<run>") -> None:
        self.ranked = dict(ranked)
        self.origin = origin
        self._ranks: dict[str, dict[str, int]] = {}

    def __contains__(self, query_id: object) -> bool:
        return query_id in self.ranked

    def rank(self, query_id: str, doc_id: str) -> int | None:
        """The 1-based rank of ``doc_id`` in ``query_id``'s ranking; None if it is not retrieved."""
        ranks = self._ranks.get(query_id)
        if ranks is None:
            ranks = self._ranks[query_id] = {doc: rank for rank, doc in enumerate(self.ranked[query_id], 1)}
        return ranks.get(doc_id)

    @classmethod
    def read(cls, run: Any, queries: Iterable[str] | None = None, *, order: str = "score",
             duplicates: str = "error") -> Rankings:
        """The rankings of a run file (TREC, Parquet or results JSON; a path or an open file).

        Only ``queries`` are kept when given (a large run need not be held whole); ``order`` and
        ``duplicates`` are those of :meth:`SetEvaluator.from_trec <retrieval_eval.SetEvaluator.from_trec>`.
        """
        from ..evaluators.options import RANKING_ORDERS
        from ..io.formats import read_run_columns

        if order not in RANKING_ORDERS:
            raise ValueError(f"'order' must be one of {list(RANKING_ORDERS)}; got {order!r}")
        columns = read_run_columns(run, with_ranks=order == "rank")
        return cls._of_columns(columns, queries, order=order, duplicates=duplicates)

    @classmethod
    def of(cls, run: Any, queries: Iterable[str] | None = None, *, order: str = "score") -> Rankings:
        """The rankings of a run held in memory: a dict ``{query_id: {doc_id: score}}``, ``RunColumns``,
        a :class:`~retrieval_eval.SetEvaluator` (its queries, as it ranked them) or :class:`Rankings`."""
        from ..evaluators.results import SetResults
        from ..io.dicts import columns_from_dicts
        from ..model import RunColumns

        if isinstance(run, Rankings):
            return run
        if isinstance(run, SetResults):
            wanted = set(run.query_ids if queries is None else queries) - set(run.missing_from_run)
            return cls({q: [d.doc_id for d in run[q].retrieved_documents()] for q in run.query_ids if q in wanted},
                       origin="evaluator")
        if isinstance(run, Mapping):
            run = columns_from_dicts({}, run)[1]
        if not isinstance(run, RunColumns):
            raise TypeError(f"Rankings.of takes a run dict, RunColumns or a SetEvaluator; got {type(run).__name__}")
        return cls._of_columns(run, queries, order=order, duplicates="error")

    @classmethod
    def _of_columns(cls, columns: Any, queries: Iterable[str] | None, *, order: str, duplicates: str) -> Rankings:
        """The rankings of run columns, ordered by the engine's batch builder (its order, its duplicate check)."""
        import numpy as np

        from ..engine.build import build_batch
        from ..evaluators.options import RANKING_ORDERS
        from ..model import QrelsColumns, id_text

        origin = columns.origin
        if queries is None:  # every query of the run: no judgments, so each one is asked for by name
            wanted = np.unique(columns.query_ids)
        else:
            wanted = np.asarray(sorted(set(queries)), dtype=str)
        none = np.zeros(0, dtype=np.int64)
        empty = QrelsColumns(np.asarray([], dtype=str), np.asarray([], dtype=str), none, none)
        batch, _ = build_batch(empty, columns, order=RANKING_ORDERS[order], duplicates=duplicates,  # type: ignore[arg-type]
                               queries=wanted)
        offsets = batch.offsets.tolist()
        ranked = {}
        for i, query_id in enumerate(batch.query_ids):
            if batch.in_run[i]:
                ranked[query_id] = [id_text(d) if isinstance(d, bytes) else str(d)
                                    for d in batch.doc_ids[offsets[i]:offsets[i + 1]].tolist()]
        return cls(ranked, origin=origin)


# --------------------------------------------------------------------------------------------------
# Checking


@attrs.frozen
class Checked:
    """Whether a fact holds on a ranking, and the ranks that decided it (``b at rank 4``)."""

    fact: Fact
    holds: bool
    seen: str


def _at(rank: int | None, doc: str) -> str:
    return f"{doc} not retrieved" if rank is None else f"{doc} at rank {rank}"


def check_fact(fact: Fact, rankings: Rankings) -> Checked:
    """Whether ``fact`` holds on ``rankings``, with the ranks of the documents it names."""
    if fact.query not in rankings:
        return Checked(fact, False, f"query {fact.query} is not in the run")
    ranks = {doc: rankings.rank(fact.query, doc) for doc in (*fact.docs, *fact.below)}
    seen = ", ".join(_at(rank, doc) for doc, rank in ranks.items())
    # A document not retrieved ranks below every retrieved one: as if at an infinite rank.
    at = {doc: math.inf if rank is None else rank for doc, rank in ranks.items()}
    top = [doc for doc in fact.docs if at[doc] <= (fact.k or 0)]
    if fact.claim == "in_top":
        holds = len(top) == len(fact.docs)
    elif fact.claim == "never_in_top":
        holds = not top
    elif fact.claim == "any_in_top":
        holds = bool(top)
    else:  # ranks_above: each subject retrieved, and ahead of each other document
        holds = all(at[doc] < math.inf and all(at[doc] < at[other] for other in fact.below) for doc in fact.docs)
    return Checked(fact, holds, seen)


def fact_outcome(checked: Checked, *, strict: bool = False) -> Outcome:
    """The outcome of a checked fact: passed or failed; a known failure that still fails is skipped,
    one that now passes is passed with "now passes: unmark it" (failed when ``strict``)."""
    fact = checked.fact
    # Where the fact is written (and why), for what needs a look: not for a plain pass.
    details = "\n".join(part for part in (f"at {fact.where}", fact.note and f"note: {fact.note}") if part)
    if not fact.known_failure:
        return Outcome(GROUP, fact.name, "passed" if checked.holds else "failed", checked.seen,
                       "" if checked.holds else details)
    if not checked.holds:
        return Outcome(GROUP, fact.name, "skipped", f"known failure: {checked.seen}", details)
    return Outcome(GROUP, fact.name, "failed" if strict else "passed",
                   f"now passes: unmark it (remove known_failure at {fact.where}): {checked.seen}", details)


def check_facts(facts: Iterable[Fact], rankings: Rankings, *, strict: bool = False) -> list[Outcome]:
    """Every fact checked on ``rankings``, as outcomes in the facts' order (see :func:`fact_outcome`)."""
    return [fact_outcome(check_fact(fact, rankings), strict=strict) for fact in facts]


# --------------------------------------------------------------------------------------------------
# Reading


def _fail(origin: str, line: int, expected: str, found: str) -> InputFormatError:
    return InputFormatError(f"{origin}:{line}: expected {expected}, found {found}")


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _id(value: object, field: str, origin: str, line: int) -> str:
    if isinstance(value, str) and id_problem(value) is None:
        return value
    raise _fail(origin, line, f"{field} to be a non-empty string", _shown(value))


def _ids(value: object, field: str, origin: str, line: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise _fail(origin, line, f"{field} to be a non-empty list of document ids", _shown(value))
    ids = tuple(_id(item, f"each of {field}", origin, line) for item in value)
    if len(set(ids)) != len(ids):
        raise _fail(origin, line, f"{field} to name each document once", _shown(value))
    return ids


def _depth(value: object, field: str, origin: str, line: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _fail(origin, line, f"{field} to be a depth k, an integer >= 1", _shown(value))
    return value


def _fact(entry: object, origin: str, line_of: Any) -> Fact:
    """The fact of one JSON object or TOML table; ``line_of(field)`` is the line to blame for a field."""
    if not isinstance(entry, dict):
        raise _fail(origin, line_of(None), "an object of a fact's fields", _shown(entry))
    for field in entry:
        if field not in FIELDS:
            raise _fail(origin, line_of(field), f"a fact's field ({', '.join(FIELDS)})", repr(field))
    if "query" not in entry:
        raise _fail(origin, line_of(None), "a 'query' field", "none")
    query = _id(entry["query"], "query", origin, line_of("query"))
    claims = [claim for claim in CLAIMS if claim in entry]
    if len(claims) != 1:
        raise _fail(origin, line_of(claims[1] if claims[1:] else None),
                    f"one claim of {', '.join(CLAIMS)}", ", ".join(claims) or "none")
    [claim] = claims
    if ("doc" in entry) == ("docs" in entry):
        raise _fail(origin, line_of("docs" if "docs" in entry else None),
                    "the documents in 'doc' (one id) or 'docs' (a list), not both",
                    "both" if "doc" in entry else "neither")
    docs = ((_id(entry["doc"], "doc", origin, line_of("doc")),) if "doc" in entry
            else _ids(entry["docs"], "docs", origin, line_of("docs")))
    k: int | None = None
    below: tuple[str, ...] = ()
    if claim == "ranks_above":
        value = entry[claim]
        below = _ids([value] if isinstance(value, str) else value, claim, origin, line_of(claim))
        if set(below) & set(docs):
            raise _fail(origin, line_of(claim), "ranks_above to name other documents than doc/docs",
                        ", ".join(sorted(set(below) & set(docs))))
    else:
        k = _depth(entry[claim], claim, origin, line_of(claim))
    known = entry.get("known_failure", False)
    if not isinstance(known, bool):
        raise _fail(origin, line_of("known_failure"), "known_failure to be true or false", _shown(known))
    texts = {}
    for field in ("id", "note"):
        value = entry.get(field)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise _fail(origin, line_of(field), f"{field} to be a non-empty string", _shown(value))
        texts[field] = value
    return Fact(query, claim, docs, k, below, known, texts["id"], texts["note"], origin, line_of(None))


def _checked(facts: list[Fact], origin: str) -> list[Fact]:
    """The facts, unless there are none or two share an id."""
    if not facts:
        raise InputFormatError(f"{origin}: expected at least one fact, found none")
    named: dict[str, Fact] = {}
    for fact in facts:
        if fact.id is not None:
            if fact.id in named:
                raise _fail(origin, fact.line, f"a new id (the fact at line {named[fact.id].line} has it)",
                            repr(fact.id))
            named[fact.id] = fact
    return facts


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"the field {key!r} twice")
        seen[key] = value
    return seen


def parse_jsonl(text: str, origin: str = "<expectations>") -> list[Fact]:
    """The facts of JSONL text: one JSON object a line; blank lines are skipped."""
    facts = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line, object_pairs_hook=_unique_keys)
        except ValueError as exc:  # json.JSONDecodeError, or a repeated field
            raise _fail(origin, number, "a JSON object", f"{exc}") from None
        facts.append(_fact(entry, origin, lambda _field, number=number: number))
    return _checked(facts, origin)


def _toml_loads(text: str) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]
        except ImportError:
            raise MissingExtraError("reading TOML expectations on Python 3.10 needs tomli: "
                                    "pip install 'retrieval-evaluator[gate]'") from None
    loaded: dict[str, Any] = tomllib.loads(text)
    return loaded


_TOML_ERROR_LINE = re.compile(r"\(at line (\d+), column \d+\)")
_TABLE_HEADER = re.compile(r"\s*\[\[\s*expect\s*\]\]\s*(#.*)?$")
_ANY_HEADER = re.compile(r"\s*\[")


def parse_toml(text: str, origin: str = "<expectations>") -> list[Fact]:
    """The facts of TOML text: an array of tables ``[[expect]]``, one fact each."""
    try:
        document = _toml_loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError
        found = _TOML_ERROR_LINE.search(str(exc))
        raise _fail(origin, int(found[1]) if found else 1, "TOML", _TOML_ERROR_LINE.sub("", str(exc)).strip()) from None
    lines = text.splitlines()
    for key in document:
        if key != "expect":
            at = next((n for n, line in enumerate(lines, 1) if re.match(rf"\s*\[?\s*\"?{re.escape(key)}\b", line)), 1)
            raise _fail(origin, at, "only [[expect]] tables", repr(key))
    tables = document.get("expect", [])
    if not isinstance(tables, list):
        raise _fail(origin, 1, "[[expect]] tables", _shown(tables))
    headers = [n for n, line in enumerate(lines, 1) if _TABLE_HEADER.match(line)]
    ends = [next((m for m in range(start + 1, len(lines) + 1) if _ANY_HEADER.match(lines[m - 1])), len(lines) + 1)
            for start in headers]

    def line_of(index: int, field: str | None) -> int:
        if index >= len(headers):  # not written as a [[expect]] header (an inline array): its first line
            return next((n for n, line in enumerate(lines, 1) if re.match(r"\s*expect\s*=", line)), 1)
        if field is not None:
            for n in range(headers[index] + 1, ends[index]):
                if re.match(rf"\s*[\"']?{re.escape(field)}[\"']?\s*=", lines[n - 1]):
                    return n
        return headers[index]

    return _checked([_fact(table, origin, lambda field, i=i: line_of(i, field)) for i, table in enumerate(tables)],
                    origin)


def _is_toml(path: str, text: str) -> bool:
    """TOML by the name (``.toml``), JSONL by the name (``.jsonl``, ``.ndjson``, ``.json``); else by the text:
    JSONL when the first line that is not blank starts with ``{``."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".toml":
        return True
    if suffix in (".jsonl", ".ndjson", ".json"):
        return False
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return not first.startswith("{")


def read_expectations(path: str | os.PathLike[str]) -> list[Fact]:
    """The facts of an expectations file, JSONL or TOML (see :func:`_is_toml`), in file order.

    Raises
    ------
    InputFormatError
        ``path:line: expected ..., found ...`` for a fact that is malformed, and for a file without facts.
    """
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as source:
            text = source.read()
    except UnicodeDecodeError as exc:
        raise InputFormatError(f"{name}: expected UTF-8 text, found the byte {exc.object[exc.start]:#04x}") from None
    except OSError as exc:
        raise InputFormatError(f"{name}: cannot read it: {exc.strerror or exc}") from None
    return parse_toml(text, name) if _is_toml(name, text) else parse_jsonl(text, name)

