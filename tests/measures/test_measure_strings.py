"""Measure values, the registry and the string parser (ir_measures syntax and trec_eval names)."""

from __future__ import annotations

import re

import pytest

from retrieval_eval.measures import (
    AP,
    REGISTRY,
    TREC_NAMES,
    IPrec,
    Measure,
    MeasureError,
    P,
    nDCG,
    parse,
    parse_all,
    trec_table,
)


@pytest.mark.parametrize(
    "text",
    ["AP", "AP@10", "P@10", "P(rel=2)@10", "nDCG@10", "nDCG(dcg='exp-log2')@10", "nDCG", "R@100", "RR",
     "RR@10", "Rprec", "Bpref", "IPrec@0.3", "Success@5", "NumQ", "NumRel(rel=2)", "GMAP"],
)
def test_canonical_strings_round_trip(text: str) -> None:
    assert str(parse(text)) == text
    assert parse(str(parse(text))) == parse(text)


def test_measures_are_hashable_values() -> None:
    assert P @ 10 == P(k=10) == parse("P@10") == parse("P(rel=1)@10")  # defaults are not stored
    assert len({P @ 10, parse("P_10"), parse("P.10")}) == 1
    assert str(P(rel=2) @ 5) == "P(rel=2)@5" and repr(AP @ 5) == "Measure('AP@5')"
    assert isinstance(nDCG(dcg="exp-log2"), Measure)


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [("MAP", "AP"), ("MRR", "RR"), ("NDCG@10", "nDCG@10"), ("BPref", "Bpref"), ("RPrec", "Rprec"),
     ("P(cutoff=5)", "P@5")],
)
def test_aliases(alias: str, canonical: str) -> None:
    assert parse(alias) == parse(canonical)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("map", ["AP"]), ("P.5,10", ["P@5", "P@10"]), ("P.10,5", ["P@5", "P@10"]), ("P_10", ["P@10"]),
     ("ndcg_cut.10,20,23.4", ["nDCG@10", "nDCG@20", "nDCG@23"]), ("ndcg", ["nDCG"]),
     ("iprec_at_recall..10,.5", ["IPrec@0.1", "IPrec@0.5"]), ("iprec_at_recall_0.10", ["IPrec@0.1"]),
     ("success", ["Success@1", "Success@5", "Success@10"]), ("map_cut.10", ["AP@10"]), ("recip_rank", ["RR"]),
     ("P@10", ["P@10"])],
)
def test_trec_eval_names(text: str, expected: list[str]) -> None:
    assert [str(m) for m in parse_all(text)] == expected


def test_official_group() -> None:
    labels = [m.trec_label for m in parse_all("official")]
    assert labels[:9] == ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"]
    assert len(labels) == 9 + 11 + 9


def test_relevance_level_is_a_default_only() -> None:
    assert parse("P@10", rel=2) == P(rel=2) @ 10
    assert parse("P(rel=3)@10", rel=2) == P(rel=3) @ 10
    assert parse("nDCG@10", rel=2) == nDCG @ 10  # the nDCG family ignores -l, as in trec_eval
    assert [str(m) for m in parse_all("P.5", rel=2)] == ["P(rel=2)@5"]


def test_trec_labels() -> None:
    assert (IPrec @ 0.1).trec_label == "iprec_at_recall_0.10"
    assert (nDCG @ 10).trec_label == "ndcg_cut_10" and nDCG().trec_label == "ndcg"
    assert (AP @ 5).trec_label == "map_cut_5" and (P(rel=2) @ 5).trec_label == "P_5"
    assert nDCG(dcg="exp-log2").trec_label is None


@pytest.mark.parametrize(
    ("text", "message"),
    [("nDGC@10", "did you mean 'nDCG'"), ("ndgc", "did you mean 'ndcg'"), ("Foo", "unknown measure 'Foo'"),
     ("P(rel=2", "unknown measure"), ("P(bad=1)@5", "P has no parameter 'bad'"), ("P@0", "must be an int >= 1"),
     ("nDCG(dcg='exp')@5", "must be one of"), ("P(rel='x')@5", "must be an int >= 0"), ("RR@x", "must be a number"),
     ("Rprec@5", "takes no @cutoff"), ("P.0", "positive integer"), ("P.5,5", "unique"),
     ("map.5", "takes no parameters"), ("utility.1,2", "takes 4 comma-separated")],
)
def test_errors_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(MeasureError, match=message):
        parse_all(text)


def test_parse_single_refuses_groups() -> None:
    with pytest.raises(MeasureError, match="names 29 measures"):
        parse("official")
    with pytest.raises(MeasureError, match="names 2 measures"):
        parse("P.5,10")
    with pytest.raises(MeasureError, match="P needs a cutoff, for example P@10"):
        parse("P")


def test_registry_is_complete_and_documented() -> None:
    """Every registered measure has a docstring with a one-line summary; trec names have a print slot."""
    for name, definition in REGISTRY.items():
        assert definition.summary and definition.doc, name
        for param, spec in definition.params.items():
            assert spec.description, (name, param)
    assert set(TREC_NAMES) == set(trec_table.names()) - {trec_table.RUN_ID}, "one table row per trec_eval name"
    for group in trec_table.group_names():
        assert set(trec_table.group(group)) <= set(TREC_NAMES), "every measure of a group must be registered"


def test_numret_rel_is_ir_measures_numrelret() -> None:
    """ir_measures prints NumRelRet as NumRet(rel=1); -l must not turn NumRet into a relevant count."""
    from retrieval_eval import SetEvaluator

    runs = SetEvaluator.from_dict({"q": {"a": 1, "b": 2, "c": 0}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "x": 0.5}})
    assert runs.aggregate("NumRet") == 4
    assert runs.aggregate("NumRet(rel=1)") == runs.aggregate("NumRelRet") == 2
    assert runs.aggregate("NumRet(rel=2)") == 1
    assert parse("NumRet", rel=2) == parse("NumRet") and str(parse("NumRet(rel=1)")) == "NumRet(rel=1)"
    assert parse("NumRet(rel=1)").trec_label is None  # trec_eval has no such line; num_rel_ret is NumRelRet


# ------------------------------------------------------------------------ issue 15: typos and limits
@pytest.mark.parametrize(
    ("specs", "bad"),
    [(["P_1O"], "'1O'"), (["P.5;10"], "'5;10'"), (["P.10x"], "'10x'"), (["ndcg_cut.1e3"], "'1e3'"),
     (["P_5", "map_cut_1O"], "'1O'")],
    ids=["label-letter-O", "semicolon", "trailing-letter", "exponent", "second-option"],
)
def test_a_typo_in_a_cutoff_is_never_a_shorter_cutoff(specs: list[str], bad: str) -> None:
    """P_1O was read as P_1 and P.5;10 as P_5 (C's atol stops at the first non-digit): both now raise."""
    from retrieval_eval.measures import InvalidParameterError, parse_trec_options

    with pytest.raises(InvalidParameterError, match=f"cutoff {bad} of .* must be a positive integer"):
        parse_trec_options(specs)
    with pytest.raises(InvalidParameterError, match=f"cutoff {bad}"):
        for spec in specs:
            parse_all(spec)


def test_a_decimal_cutoff_is_still_read_like_atol() -> None:
    """trec_eval's own test data writes ndcg_cut.23.4, which atol reads as 23: that stays."""
    assert [str(m) for m in parse_all("ndcg_cut.10,23.4")] == ["nDCG@10", "nDCG@23"]
    assert [str(m) for m in parse_all("P. 5 ,+10")] == ["P@5", "P@10"]


@pytest.mark.parametrize(
    ("text", "suggestion"),
    [("Ndcg@10", "'nDCG@10'?"), ("Map@5", "'MAP@5'?"), ("ap(rel=2)@5", "'AP(rel=2)@5'?"), ("NDCG_cut@5", "'nDCG@5'?")],
)
def test_a_trec_name_in_ir_measures_syntax_suggests_the_registered_spelling(text: str, suggestion: str) -> None:
    """parse('ndcg@10') suggested 'ndcg', which is what was typed; it then suggested 'nDCG@10'. Since
    issue 27 'ndcg@10' and 'map@5' are read as ranx writes them (tests/test_spellings.py): the same
    suggestion is checked on other cases of them."""
    with pytest.raises(MeasureError, match=re.escape(f"did you mean {suggestion}")) as info:
        parse(text)
    assert "'ndcg' or" not in str(info.value)


@pytest.mark.parametrize(
    "text", ["P(rel=1,rel=2)@5", "P(rel=2, rel=2)@5", "P(k=5)@10", "P(cutoff=5)@10", "P(k=5, cutoff=10)"],
)
def test_a_repeated_parameter_is_refused(text: str) -> None:
    """P(rel=1,rel=2) silently kept the last value (and P(k=5)@10 the @): now refused, naming the parameter."""
    from retrieval_eval.measures import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="given twice"):
        parse(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [("IPrec@1e308", r"'recall' of IPrec must be a float in \[0.0, 1.0\]"), ("IPrec@1.5", "in \\[0.0, 1.0\\]"),
     ("iprec_at_recall.2", "in \\[0.0, 1.0\\]"), (f"Judged@{10**21}", "at most 2\\*\\*62"),
     (f"P@{2**62 + 1}", "at most 2\\*\\*62"), (f"RelString(length={10**21})", "at most 2\\*\\*62"),
     (f"AP(rel={10**21})", "at most 2\\*\\*62"), ("set_F.nan", "'beta' of SetF must be a float >= 0.0; got nan")],
)
def test_parameters_out_of_range_are_refused_by_the_shared_check(text: str, message: str) -> None:
    """IPrec@1e308 raised IndexError and Judged@10**21 OverflowError; every cutoff now has a bounded domain."""
    from retrieval_eval.measures import InvalidParameterError

    with pytest.raises(InvalidParameterError, match=message):
        parse_all(text)


def test_nan_and_numpy_parameters_go_through_param_check() -> None:
    """SetF(beta=nan) is refused (NaN is no float in any domain); NumPy scalars are the numbers they hold."""
    import numpy as np

    from retrieval_eval.measures import InvalidParameterError

    set_f = REGISTRY["SetF"]
    for nan in (float("nan"), np.float32("nan"), np.float64("nan")):
        with pytest.raises(InvalidParameterError, match="'beta' of SetF"):
            set_f(beta=nan)
    assert set_f(beta=np.float32(0.5)) == set_f(beta=0.5)
    assert P(rel=np.int64(2)) @ np.int64(5) == parse("P(rel=2)@5")
    assert P @ 2**62 == P(k=2**62)


def test_a_long_measure_string_is_refused_at_once() -> None:
    """A 100,000-character string raised MemoryError in the parser; strings over 1,000 characters are refused."""
    from retrieval_eval.measures import parse_trec_options
    from retrieval_eval.measures.parse import MAX_MEASURE_LENGTH

    assert MAX_MEASURE_LENGTH == 1000
    for text in ("P(" * 50_000, "P@" + "1" * 100_000, "nDCG(" + "[" * 99_990 + ")"):
        with pytest.raises(MeasureError, match=r"measure string of \d+ characters is too long \(at most 1000\)"):
            parse(text)
        with pytest.raises(MeasureError, match="too long"):
            parse_trec_options([text])
    with pytest.raises(MeasureError) as info:  # just under the limit: an ordinary parse error, no crash
        parse("nDCG(dcg=" + "(" * 980 + ")")
    assert "too long" not in str(info.value)


def test_a_measure_that_is_not_a_string_is_a_type_error() -> None:
    """score(['AP', 'P@5']) raised AttributeError: a list is now the project's InputTypeError."""
    from retrieval_eval import InputTypeError

    for given in (["AP", "P@5"], ("AP",), 5, None):
        with pytest.raises(InputTypeError, match="a measure must be a str or a Measure"):
            parse(given)  # type: ignore[arg-type]
        with pytest.raises(InputTypeError, match="a measure must be a str or a Measure"):
            parse_all(given)  # type: ignore[arg-type]
