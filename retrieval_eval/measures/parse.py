"""Measure strings: ir_measures syntax (``nDCG@10``, ``P(rel=2)@5``) and trec_eval names
(``ndcg_cut.10``, ``P.5,10``, ``P_10``, ``utility.2,-1,0,0``, ``official``), both parsed against the
one registry. trec_eval names also give the label trec_eval prints (``utility_2,-1,0,0``).

The names other tools give the same measures are read too (:func:`_parse_foreign`): ranx's
(``ndcg@10``, ``map@100``, ``hit_rate@10``), MTEB's score keys (``ndcg_at_10``) and BEIR's
(``R_cap@10``); pytrec_eval's keys are trec_eval's printed labels. A name whose meaning differs from
ours is refused in one line that says how (docs/spellings.md lists both kinds)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from typing import Any, cast

from ..model import InputTypeError
from . import trec_table
from .params import InvalidParameterError, MeasureError, UnknownMeasureError
from .registry import ALIAS_PARAMS, ALIASES, REGISTRY, TREC_NAMES, Measure

#: A measure with the name it is printed under.
Labelled = tuple[Measure, str]

# Names are identifiers, Unicode ones included (ir_measures registers α_nDCG).
_IR_SYNTAX = re.compile(r"^(?P<name>[^\W\d]\w*)(?:\((?P<params>.*)\))?(?:@(?P<at>[^@()]+))?$")
# An integer cut-off, read like C's atol when it is a decimal number (23.4 -> 23); anything else
# after the digits (P_1O, P.5;10) is a typo, not a shorter cut-off.
_INT_CUTOFF = re.compile(r"^\s*([-+]?\d+)(?:\.\d*)?\s*$")

#: The longest measure string accepted: no measure needs more, and longer ones are refused at once.
MAX_MEASURE_LENGTH = 1000


def _checked(text: object) -> str:
    """``text`` if it can be a measure string; InputTypeError for another type, UnknownMeasureError if too long."""
    if not isinstance(text, str):
        raise InputTypeError(
            f"a measure must be a str or a Measure; got {type(text).__name__} {text!r:.200}"
            + (" (ask for one measure at a time)" if isinstance(text, (list, tuple, set)) else "")
        )
    if len(text) > MAX_MEASURE_LENGTH:
        raise UnknownMeasureError(
            f"measure string of {len(text)} characters is too long (at most {MAX_MEASURE_LENGTH}): {text[:40]!r}..."
        )
    return text


def _unknown(name: str, text: str = "") -> UnknownMeasureError:
    # Non-ASCII aliases (α_nDCG) only respell an ASCII name, which is suggested in their place.
    known = [k for k in (*REGISTRY, *ALIASES, *TREC_NAMES, *trec_table.group_names()) if k.isascii()]
    rest = text.strip()[len(name):] if text.strip().startswith(name) else ""
    # A trec_eval name or a registered one in another case, written in ir_measures syntax (ndcg@10):
    # suggest the registered spelling with the rest of the string (nDCG@10), not the name itself.
    folded = name.lower()
    spelled = [TREC_NAMES[name][0]] if name in TREC_NAMES else []
    spelled += [k for k in (*REGISTRY, *ALIASES) if k.lower() == folded and k != name and k.isascii()]
    spelled += [canonical for k, (canonical, _) in TREC_NAMES.items() if k.lower() == folded]
    if spelled:
        close = [spelled[0] + rest]
    else:
        import difflib  # here: only an unknown name needs it (a millisecond of every start-up otherwise)

        close = [k for k in difflib.get_close_matches(name, known, n=3, cutoff=0.6) if k != name]
    if not close:
        close = [k for k in known if k.lower() == name.lower() and k != name]
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return UnknownMeasureError(f"unknown measure {name!r}{hint} (`retrieval-eval measures` lists them all)")


def _with_rel(measure: Measure, explicit: set[str], rel: int | None) -> Measure:
    """Apply a default relevance threshold (trec_eval -l) unless the string set one."""
    spec = measure.definition.params.get("rel")
    if rel is None or "rel" in explicit or spec is None or spec.default is None:
        return measure  # a rel that defaults to None is an opt-in filter (NumRet), not a threshold
    return measure(rel=rel)


def _parse_ir(text: str, rel: int | None) -> Measure | None:
    """ir_measures syntax; None when the name is not a registered measure or alias."""
    match = _IR_SYNTAX.match(text.strip())
    if not match:
        return None
    name = match["name"]
    canonical = name if name in REGISTRY else ALIASES.get(name)
    if canonical is None:
        return None
    definition = REGISTRY[canonical]
    params: dict[str, Any] = dict(ALIAS_PARAMS.get(name, {}))  # SetRelP is SetP(relative=True)
    if match["params"] is not None and match["params"].strip():
        try:
            call = ast.parse(f"f({match['params']})", mode="eval").body
            if not isinstance(call, ast.Call) or call.args:
                raise ValueError
            for keyword in call.keywords:
                if keyword.arg in params and keyword.arg not in ALIAS_PARAMS.get(name, {}):
                    raise InvalidParameterError(f"parameter {keyword.arg!r} is given twice in {text!r}")
                params[str(keyword.arg)] = ast.literal_eval(keyword.value)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            if isinstance(exc, InvalidParameterError):
                raise
            raise UnknownMeasureError(
                f"cannot parse parameters of {text!r}; expected Name(key=value, ...)@cutoff"
            ) from exc
    if "cutoff" in params and definition.cutoff and definition.cutoff != "cutoff":
        if definition.cutoff in params:
            raise InvalidParameterError(f"the cutoff of {canonical} is given twice in {text!r}")
        params[definition.cutoff] = params.pop("cutoff")  # ir_measures spells the cutoff 'cutoff'
    if match["at"] is not None:
        if definition.cutoff is None:
            raise UnknownMeasureError(f"{canonical} takes no @cutoff; got {text!r}")
        if definition.cutoff in params:
            raise InvalidParameterError(f"the cutoff of {canonical} is given twice in {text!r}")
        try:
            params[definition.cutoff] = ast.literal_eval(match["at"].strip())
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            raise InvalidParameterError(f"cutoff of {text!r} must be a number") from exc
    measure = definition(**params)
    # cutoff_required implies a cutoff parameter (the name is never None then).
    if definition.cutoff_required and measure[cast(str, definition.cutoff)] is None:
        raise InvalidParameterError(f"{canonical} needs a cutoff, for example {canonical}@10")
    return _with_rel(measure, set(params), rel)


def _trec_cutoffs(name: str, text: str, floats: bool) -> list[float]:
    """trec_eval's cutoff lists: comma separated, sorted, unique.

    An integer cut-off written as a decimal number is read like C's atol (``23.4`` -> 23); any other
    text (``1O`` in ``P_1O``, ``5;10`` in ``P.5;10``) raises rather than being read as a shorter number.
    """
    values: list[float] = []
    for item in text.split(","):
        if floats:
            try:
                values.append(float(item))
            except ValueError:
                raise InvalidParameterError(f"cutoff {item!r} of {name} must be a number") from None
        else:
            match = _INT_CUTOFF.match(item)
            if not match or int(match[1]) <= 0:
                raise InvalidParameterError(f"cutoff {item!r} of {name} must be a positive integer")
            values.append(int(match[1]))
    if len(set(values)) != len(values):
        raise InvalidParameterError(f"cutoffs of {name} must be unique; got {text!r}")
    return sorted(values)


def _trec_items(name: str, params: str | None, rel: int | None) -> list[Labelled]:
    """The measures (with trec_eval labels) of ``-m name`` (``params`` None) or ``-m name.params``."""
    canonical, trec = TREC_NAMES[name]
    definition = REGISTRY[canonical]
    preset = dict(trec.preset)
    if trec.cutoff:
        cutoffs = _trec_cutoffs(name, params, trec.float_cutoffs) if params is not None else list(trec.defaults)
        at = cast(str, definition.cutoff)  # a trec_eval name with cutoffs names a measure with a cutoff
        return [
            (_with_rel(definition(**preset, **{at: c}), set(), rel), trec.label(c))
            for c in cutoffs
        ]
    if trec.syntax is None:
        if params is not None:
            raise UnknownMeasureError(f"trec_eval measure {name!r} takes no parameters here; got {name}.{params}")
        return [(_with_rel(definition(**preset), set(), rel), trec.name)]
    given = trec.syntax.read(name, params) if params is not None else {}
    return [(_with_rel(definition(**{**preset, **given}), set(), rel), trec.label(None, params))]


def _parse_trec(text: str, rel: int | None) -> list[Labelled] | None:
    """trec_eval names: ``name``, ``name.params`` or a printed label such as ``P_10`` or ``utility_2,-1,0,0``."""
    name, dot, params = text.partition(".")
    if name in TREC_NAMES:
        return _trec_items(name, params if dot else None, rel)
    registered = _IR_SYNTAX.match(text)
    if registered and (registered["name"] in REGISTRY or registered["name"] in ALIASES):
        return None  # a registered name such as P_IA@10 is not the label P_<cutoff>
    base, _, suffix = text.rpartition("_")
    if base in TREC_NAMES and suffix:
        trec = TREC_NAMES[base][1]
        if trec.cutoff or trec.syntax is not None:
            return _trec_items(base, suffix, rel)
    return None


# ----------------------------------------------------------------------------- other tools' names
# Each entry was checked against the tool's own code and is pinned against its values in
# tests/test_spellings.py.

#: ranx's metric names (``name@k``, or ``name`` for the whole ranking), as our measure strings.
_RANX = {
    "ndcg": "nDCG", "ndcg_burges": "nDCG(dcg='exp-log2')", "dcg": "DCG", "dcg_burges": "DCG(dcg='exp-log2')",
    "map": "AP", "mrr": "RR", "precision": "P", "recall": "R", "f1": "F1", "hit_rate": "Success",
    "r-precision": "Rprec",
}
#: ranx names without ``@k`` (the whole ranking) that are another of our measures than with one.
_RANX_WHOLE = {"precision": "SetP", "f1": "SetF"}
#: MTEB's score keys ``name_at_k``, and BEIR's ``R_cap@k`` (MTEB: ``R_cap_at_k``).
_AT_K = {"ndcg": "nDCG", "map": "AP", "recall": "R", "precision": "P", "mrr": "RR", "r_cap": "RelP"}

# ranx: name, @k, then -l<level> for its relevance level. MTEB: name_at_k. BEIR: Name@k.
_RANX_SYNTAX = re.compile(r"^(?P<name>[a-z][a-z0-9_-]*?)(?:@(?P<k>\d+))?(?:-l(?P<level>\d+))?$")
_AT_K_SYNTAX = re.compile(r"^(?P<name>[A-Za-z][A-Za-z_]*?)(?:_at_|@)(?P<k>\d+)$")


def _refused(text: str, match: re.Match[str] | None, at_k: re.Match[str] | None) -> str | None:
    """Why another tool's name for a measure whose meaning differs from ours is refused; None otherwise."""
    ranx = match["name"] if match else None
    named = at_k["name"].lower() if at_k else None  # MTEB's name_at_k, BEIR's Name@k
    k = (match and match["k"]) or (at_k and at_k["k"]) or "k"
    if ranx == "hits":
        where = f"the top {k}" if match and match["k"] else "the ranking"
        return (f"ranx's {text!r} is the number of relevant documents in {where}, averaged over queries; "
                f"NumRelRet (trec_eval's num_rel_ret) counts the whole ranking and sums over queries, and "
                f"P@{k} is the number in the top {k} / {k}")
    if ranx == "hit_rate" and match and not match["k"]:
        return "ranx's 'hit_rate' without @k reads the whole ranking; Success needs a cutoff: write Success@k"
    rbp = re.match(r"^rbp[.@](\d+)$", text)  # ranx reads the digits as 0.<digits>
    if rbp:
        return (f"ranx's {text!r} weighs a document by its raw grade; RBP(p=0.{rbp[1]}) rescales grades above 1 "
                "into [0, 1] (trec_eval's rbp), so the two agree on binary judgments only")
    if named == "cv_recall":
        return (f"MTEB's {text!r} counts a negative judgment as relevant (any value != 0); Success@{k} counts "
                f"judgments >= 1 (-l)")
    if named == "hole":
        return (f"BEIR's {text!r} is the share of the top {k} judged for no query at all; Unj@{k} is the share "
                "not judged (or judged negative) for this query")
    if text == "accuracy":
        return ("MTEB's 'accuracy' is R@1 (recall at 1); Accuracy here is ir_measures' share of correctly "
                "ordered (relevant, non-relevant) pairs: write R@1 or Accuracy")
    if at_k and at_k["name"] == "accuracy":
        return (f"BEIR's top-k accuracy {text!r} is Success@{k} (a relevant document in the top {k}); "
                f"Accuracy@{k} here is ir_measures' share of correctly ordered pairs: write Success@{k}")
    return None


def _parse_foreign(text: str, rel: int | None) -> Measure | None:
    """Another tool's name for one of our measures (see the tables above); None for any other string.

    Raises UnknownMeasureError, in one line saying how, for a name whose meaning differs from ours.
    """
    match = _RANX_SYNTAX.match(text)
    at_k = _AT_K_SYNTAX.match(text)
    why = _refused(text, match, at_k)
    if why is not None:
        raise UnknownMeasureError(why)
    level: int | None = None
    key = at_k and ("r_cap" if at_k["name"] == "R_cap" else at_k["name"])  # MTEB writes lower case, but R_cap
    if at_k and key in _AT_K:
        ours, k = _AT_K[key], at_k["k"]
    elif match and match["name"] in _RANX:
        name, k = match["name"], match["k"]
        ours = _RANX[name] if k else _RANX_WHOLE.get(name, _RANX[name])
        level = None if match["level"] is None else int(match["level"])
    else:
        return None
    measure = _parse_ir(ours + (f"@{k}" if k else ""), rel if level is None else None)
    assert measure is not None  # the tables hold registered names only
    if level is None:
        return measure
    if "rel" in measure.definition.params:  # ranx's -l<level>: its relevance threshold, rel here
        return measure(rel=level)
    # A gain measure reads the grades, and ranx drops the judgments below the level: they gain 0 here.
    return measure(gains={grade: 0 for grade in range(1, level)}) if level > 1 else measure


def parse_labelled(text: str, *, rel: int | None = None) -> list[Labelled]:
    """Like :func:`parse_all`, with the name each measure is printed under.

    trec_eval names and groups give trec_eval's labels (``P_10``, ``utility_2,-1,0,0``: a parameter
    string is echoed as given); ir_measures strings give the canonical string.

    Examples
    --------
    >>> [(str(m), label) for m, label in parse_labelled("rbp.p=0.95")]
    [('RBP(p=0.95)', 'rbp_p=0.95')]
    """
    text = _checked(text).strip()
    names = trec_table.group(text)
    if names is not None:
        return [item for name in names for item in _trec_items(name, None, rel)]
    # Other tools' names before trec_eval's printed labels (ndcg_burges@10 is not ndcg with the
    # parameters 'burges@10'), but never in place of a trec_eval name (recall is trec_eval's, not
    # ranx's); ranx's rbp.95 is refused rather than read as trec_eval's rbp parameters.
    if text.partition(".")[0] not in TREC_NAMES or re.match(r"^rbp\.\d+$", text):
        foreign = _parse_foreign(text, rel)
        if foreign is not None:
            return [(foreign, str(foreign))]
    trec = _parse_trec(text, rel)
    if trec is not None:
        return trec
    measure = _parse_ir(text, rel)
    if measure is None:
        match = _IR_SYNTAX.match(text)
        raise _unknown(match["name"] if match else text, text)
    return [(measure, str(measure))]


def parse_all(text: str, *, rel: int | None = None) -> list[Measure]:
    """Every measure a ``-m`` argument names: a group, a trec_eval name or an ir_measures string.

    Parameters
    ----------
    text : str
        ``official``, ``P.5,10``, ``ndcg_cut.10``, ``map``, ``P_10``, ``nDCG@10``, ``P(rel=2)@5`` ...
    rel : int, optional
        Relevance threshold for measures that take one and whose string does not (trec_eval ``-l``).

    Examples
    --------
    >>> [str(m) for m in parse_all("P.5,10")]
    ['P@5', 'P@10']
    """
    return [measure for measure, _ in parse_labelled(text, rel=rel)]


def parse_trec_options(specs: Sequence[str], *, rel: int | None = None) -> list[Labelled]:
    """The measures of several ``-m`` options, combined the way trec_eval combines them.

    trec_eval computes each of its measures at most once: ``-m name.params`` sets the parameters of
    ``name`` and the first such option wins; a plain ``-m name`` or a group only asks for the
    measure. So ``-m all_trec -m relstring.20`` prints ``relstring_20`` alone, and
    ``-m P.5 -m P.10`` prints ``P_5`` alone. Our extensions (printed labels such as ``P_10`` and
    ir_measures strings) are each taken as given. ``runid`` is not a measure and is skipped.

    Examples
    --------
    >>> [label for _, label in parse_trec_options(["P", "P.5,10", "P.20", "nDCG@3"])]
    ['P_5', 'P_10', 'nDCG@3']
    """
    wanted: dict[str, str | None] = {}  # trec_eval name -> its parameter string (first given wins)
    extra: list[Labelled] = []
    if isinstance(specs, str):
        raise InputTypeError(f"specs must be a sequence of measure strings, not one str; got {specs!r:.200}")
    for spec in specs:
        text = _checked(spec).strip()
        if text == trec_table.RUN_ID:
            continue
        names = trec_table.group(text)
        if names is not None:
            for name in names:
                wanted.setdefault(name, None)
            continue
        name, dot, params = text.partition(".")
        if name in TREC_NAMES:
            if wanted.get(name) is None:
                wanted[name] = params if dot else None
            continue
        extra.extend(parse_labelled(text, rel=rel))
    return [item for name, params in wanted.items() for item in _trec_items(name, params, rel)] + extra


def parse(text: str | Measure, *, rel: int | None = None) -> Measure:
    """One measure from its string: ir_measures syntax first, then a single trec_eval name.

    Examples
    --------
    >>> str(parse("nDCG(dcg='exp-log2')@10"))
    "nDCG(dcg='exp-log2')@10"
    >>> parse("ndcg_cut_10") == parse("nDCG@10")
    True
    """
    if isinstance(text, Measure):
        return _with_rel(text, {name for name, _ in text.params}, rel)
    measure = _parse_ir(_checked(text), rel)
    if measure is not None:
        return measure
    measures = parse_all(text, rel=rel)
    if len(measures) != 1:
        raise UnknownMeasureError(
            f"{text!r} names {len(measures)} measures; give one, for example {measures[0]}"
        )
    return measures[0]


def parse_list(
    measures: str | Measure | Iterable[str | Measure], *, rel: int | None = None, numeric: bool = False
) -> list[Labelled]:
    """The measures of a list of measure-likes, with their labels: what every API entry taking a
    list of measures reads it with.

    Each item is expanded on its own, as :func:`parse_labelled` expands one ``-m`` argument (the
    CLI's expansion): a group (``official``, ``all_trec``, ``set``) or a trec_eval name with
    cut-offs (``P``, ``ndcg_cut``, ``P.5,10``) gives all its measures with trec_eval's labels
    (``P_5`` ...), any other string its one measure labelled by its canonical string, and a
    :class:`Measure` itself (``rel`` applied unless it sets one). A single string or Measure is a
    list of one. A measure asked for twice under the same label is kept once, at its first place.

    Parameters
    ----------
    measures : str, Measure, or an iterable of them
    rel : int, optional
        Relevance threshold for measures that take one and do not set it (trec_eval ``-l``).
    numeric : bool, default False
        Keep only the measures that have a value: a group's text measure (``relstring`` in
        ``all_trec``) is left out, and a text measure asked for by itself raises
        :class:`MeasureError`.

    Examples
    --------
    >>> [label for _, label in parse_list(["P.5,10", "nDCG@10", "map"])]
    ['P_5', 'P_10', 'nDCG@10', 'map']
    >>> [str(m) for m, _ in parse_list("ndcg_cut")]
    ['nDCG@5', 'nDCG@10', 'nDCG@15', 'nDCG@20', 'nDCG@30', 'nDCG@100', 'nDCG@200', 'nDCG@500', 'nDCG@1000']
    """
    items: list[str | Measure]
    if isinstance(measures, (str, Measure)):
        items = [measures]
    elif isinstance(measures, Iterable) and not isinstance(measures, (bytes, dict)):
        items = list(measures)
    else:
        raise InputTypeError(
            f"measures must be a measure string, a Measure or a list of them; got {type(measures).__name__}"
        )
    found: dict[str, Measure] = {}
    for item in items:
        if isinstance(item, Measure):
            parsed = parse(item, rel=rel)
            expanded = [(parsed, str(parsed))]
        elif isinstance(item, str) and item.strip() == trec_table.RUN_ID:
            raise UnknownMeasureError(
                "'runid' is not a measure: it is the line where trec_eval prints the run's name "
                "(SetEvaluator.run_id holds it)"
            )
        else:
            expanded = parse_labelled(item, rel=rel)
        if numeric:
            if len(expanded) == 1 and expanded[0][0].definition.text:
                name = str(expanded[0][0])
                raise MeasureError(
                    f"{name} is a text measure: it has no value (per_query_text({name!r}) gives its strings)"
                )
            expanded = [(m, label) for m, label in expanded if not m.definition.text]
        for measure, label in expanded:
            found.setdefault(label, measure)
    return [(measure, label) for label, measure in found.items()]
