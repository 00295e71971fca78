"""Intent tests (issue 30, item 6): the fact files, each claim checked on rankings, and ``retrieval-eval expect``.

The oracle of the rankings is a sort written here from trec_eval's rule (score descending, ties by
doc_id bytes descending), independent of the engine's order; the claims are checked against their
definitions written out on those ranks.
"""

from __future__ import annotations

import json

import junitparser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.cli import main
from retrieval_eval.harness.expectations import (
    Fact,
    Rankings,
    check_fact,
    check_facts,
    parse_jsonl,
    parse_toml,
    read_expectations,
)
from retrieval_eval.model import InputFormatError

#: q1 ranks c (2.0; ties with b, c > b), b (2.0), a (1.0); q2 ranks z; q3 ranks y.
RUN = "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 c 3 2.0 r\nq2 Q0 z 1 1 r\nq3 Q0 y 1 1 r\n"


def _facts(*lines: dict[str, object]) -> list[Fact]:
    return parse_jsonl("\n".join(json.dumps(line) for line in lines))


def _holds(line: dict[str, object], rankings: Rankings | None = None) -> bool:
    [fact] = _facts(line)
    return check_fact(fact, rankings or Rankings.of({"q1": {"a": 1.0, "b": 2.0, "c": 2.0}})).holds


class TestClaims:
    """Each claim on q1 ranked c, b, a (b and c tied: c first, doc_id descending)."""

    @pytest.mark.parametrize(("line", "holds"), [
        ({"doc": "c", "in_top": 1}, True),
        ({"doc": "b", "in_top": 1}, False),
        ({"doc": "a", "in_top": 3}, True),
        ({"doc": "x", "in_top": 100}, False),  # not retrieved
        ({"docs": ["c", "b"], "in_top": 2}, True),
        ({"docs": ["c", "a"], "in_top": 2}, False),  # every one of them
        ({"doc": "a", "never_in_top": 2}, True),
        ({"doc": "a", "never_in_top": 3}, False),
        ({"doc": "x", "never_in_top": 1}, True),
        ({"docs": ["a", "b"], "never_in_top": 2}, False),
        ({"docs": ["a", "x"], "any_in_top": 3}, True),
        ({"docs": ["a", "x"], "any_in_top": 2}, False),
        ({"docs": ["x", "y"], "any_in_top": 1000}, False),
        ({"doc": "c", "ranks_above": "b"}, True),
        ({"doc": "b", "ranks_above": "c"}, False),
        ({"doc": "a", "ranks_above": "x"}, True),  # x not retrieved: below every retrieved document
        ({"doc": "x", "ranks_above": "a"}, False),  # the subject must be retrieved
        ({"doc": "x", "ranks_above": "y"}, False),  # ... even when the other one is not either
        ({"doc": "b", "ranks_above": ["a", "x"]}, True),
        ({"docs": ["b", "c"], "ranks_above": ["a"]}, True),
        ({"docs": ["a", "c"], "ranks_above": ["b"]}, False),
    ])
    def test_claim(self, line: dict[str, object], holds: bool) -> None:
        assert _holds({"query": "q1", **line}) is holds

    def test_messages_give_each_documents_rank(self) -> None:
        [fact] = _facts({"query": "q1", "doc": "a", "ranks_above": ["b", "x"]})
        checked = check_fact(fact, Rankings.of({"q1": {"a": 1.0, "b": 2.0, "c": 2.0}}))
        assert checked.seen == "a at rank 3, b at rank 2, x not retrieved"

    @pytest.mark.parametrize("claim", [{"doc": "a", "in_top": 1}, {"doc": "a", "never_in_top": 1},
                                       {"docs": ["a"], "any_in_top": 1}, {"doc": "a", "ranks_above": "b"}])
    def test_a_query_the_run_lacks_fails_every_claim(self, claim: dict[str, object]) -> None:
        [fact] = _facts({"query": "q9", **claim})
        checked = check_fact(fact, Rankings.of({"q1": {"a": 1.0}}))
        assert not checked.holds
        assert checked.seen == "query q9 is not in the run"

    def test_the_order_option_is_the_engines(self, write) -> None:
        """--order file keeps the file's order (a, b, c); rank uses the rank column; score the tie rule."""
        path = write("run", RUN)
        assert Rankings.read(path, ["q1"]).ranked == {"q1": ["c", "b", "a"]}
        assert Rankings.read(path, ["q1"], order="file").ranked == {"q1": ["a", "b", "c"]}
        reranked = write("ranked", "q1 Q0 a 3 1.0 r\nq1 Q0 b 1 2.0 r\nq1 Q0 c 2 2.0 r\n")
        assert Rankings.read(reranked, order="rank").ranked == {"q1": ["b", "c", "a"]}

    def test_only_the_asked_queries_are_kept(self, write) -> None:
        rankings = Rankings.read(write("run", RUN), ["q2", "q9"])
        assert rankings.ranked == {"q2": ["z"]}
        assert "q9" not in rankings and "q1" not in rankings

    def test_an_evaluator_gives_its_own_rankings(self) -> None:
        from retrieval_eval import SetEvaluator

        results = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"z": 1}}, {"q1": {"a": 1.0, "b": 2.0, "c": 2.0}})
        assert Rankings.of(results).ranked == {"q1": ["c", "b", "a"]}  # q2, judged but not retrieved: absent


def _oracle_ranks(run: dict[str, dict[str, float]]) -> dict[str, dict[str, int]]:
    """trec_eval's order written from its definition: score descending, then doc_id bytes descending."""
    out = {}
    for query, docs in run.items():
        by_id = sorted(docs, key=lambda d: d.encode(), reverse=True)
        ranked = sorted(by_id, key=lambda d: -docs[d])  # stable: ties keep doc_id descending
        out[query] = {doc: rank for rank, doc in enumerate(ranked, 1)}
    return out


def _oracle_holds(fact: Fact, ranks: dict[str, dict[str, int]]) -> bool:
    if fact.query not in ranks:
        return False
    r = ranks[fact.query]
    in_top = [doc in r and r[doc] <= (fact.k or 0) for doc in fact.docs]
    if fact.claim == "in_top":
        return all(in_top)
    if fact.claim == "never_in_top":
        return not any(in_top)
    if fact.claim == "any_in_top":
        return any(in_top)
    return all(doc in r and all(other not in r or r[doc] < r[other] for other in fact.below) for doc in fact.docs)


_DOCS = st.sampled_from(["a", "b", "c", "d", "e", "ab", "B", "é"])
_RUNS = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]),
                        st.dictionaries(_DOCS, st.sampled_from([0.0, 1.0, 1.5, 2.0, -3.0]), min_size=1), min_size=1)


@st.composite
def _fact_lines(draw: st.DrawFn) -> dict[str, object]:
    claim = draw(st.sampled_from(["in_top", "never_in_top", "any_in_top", "ranks_above"]))
    docs = draw(st.lists(_DOCS, min_size=1, max_size=3, unique=True))
    line: dict[str, object] = {"query": draw(st.sampled_from(["q1", "q2", "q3", "q4"])), "docs": docs}
    if claim == "ranks_above":
        others = [doc for doc in ["a", "b", "c", "d", "e", "ab", "B", "é", "zz"] if doc not in docs]
        line[claim] = draw(st.lists(st.sampled_from(others), min_size=1, max_size=3, unique=True))
    else:
        line[claim] = draw(st.integers(1, 6))
    return line


@settings(max_examples=150, deadline=None)
@given(_RUNS, st.lists(_fact_lines(), min_size=1, max_size=8))
def test_facts_agree_with_the_definitions_on_trec_evals_order(run: dict[str, dict[str, float]],
                                                              lines: list[dict[str, object]]) -> None:
    facts = _facts(*lines)
    ranks = _oracle_ranks(run)
    outcomes = check_facts(facts, Rankings.of(run))
    assert [o.status for o in outcomes] == ["passed" if _oracle_holds(f, ranks) else "failed" for f in facts]


def _toml_value(value: object) -> str:
    """A TOML value written from its definition: JSON's strings, numbers, booleans and arrays are TOML's."""
    return json.dumps(value, ensure_ascii=False)


_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=8)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_fact_lines(), st.booleans(), st.none() | _TEXT.filter(str.strip), st.none() | _TEXT
                          .filter(str.strip)), min_size=1, max_size=5, unique_by=lambda t: t[2] or object()))
def test_jsonl_and_toml_read_the_same_facts(entries: list[tuple[dict[str, object], bool, str | None, str | None]]
                                            ) -> None:
    lines = []
    for line, known, name, note in entries:
        lines.append({**line, **({"known_failure": known} if known else {}),
                      **({"id": name} if name else {}), **({"note": note} if note else {})})
    jsonl = parse_jsonl("\n".join(json.dumps(line) for line in lines))
    toml = parse_toml("".join("[[expect]]\n" + "".join(f"{key} = {_toml_value(value)}\n" for key, value in line.items())
                              + "\n" for line in lines))
    fields = ("query", "claim", "docs", "k", "below", "known_failure", "id", "note")
    assert [tuple(getattr(f, name) for name in fields) for f in toml] == [
        tuple(getattr(f, name) for name in fields) for f in jsonl]
    assert [f.line for f in jsonl] == list(range(1, len(lines) + 1))
    toml_headers = [1]
    for line in lines[:-1]:
        toml_headers.append(toml_headers[-1] + len(line) + 2)
    assert [f.line for f in toml] == toml_headers


class TestKnownFailures:
    def _outcome(self, line: dict[str, object], *, strict: bool = False) -> tuple[str, str]:
        [outcome] = check_facts(_facts({"query": "q1", "known_failure": True, **line}),
                                Rankings.of({"q1": {"a": 1.0, "b": 2.0}}), strict=strict)
        return outcome.status, outcome.message

    def test_still_failing_is_skipped(self) -> None:
        assert self._outcome({"doc": "a", "in_top": 1}) == ("skipped", "known failure: a at rank 2")

    def test_now_passing_says_unmark_it(self) -> None:
        status, message = self._outcome({"doc": "b", "in_top": 1})
        assert status == "passed"
        assert message.startswith("now passes: unmark it (remove known_failure at <expectations>:1)")

    def test_now_passing_fails_when_strict(self) -> None:
        assert self._outcome({"doc": "b", "in_top": 1}, strict=True)[0] == "failed"


class TestFiles:
    TOML = """\
# intent tests of the product search
[[expect]]
query = "q1"
doc = "c"
in_top = 1

[[expect]]
id = "a stays below"
query = "q1"
doc = "a"
never_in_top = 2
note = "a is an old page"
known_failure = true
"""

    def test_toml_and_jsonl_give_the_same_facts(self, write) -> None:
        toml_facts = read_expectations(write("e.toml", self.TOML))
        jsonl = write("e.jsonl", '{"query": "q1", "doc": "c", "in_top": 1}\n\n'
                      '{"id": "a stays below", "query": "q1", "doc": "a", "never_in_top": 2, '
                      '"note": "a is an old page", "known_failure": true}\n')
        jsonl_facts = read_expectations(jsonl)
        assert [(f.query, f.claim, f.docs, f.k, f.below, f.known_failure, f.id, f.note) for f in toml_facts] == [
            (f.query, f.claim, f.docs, f.k, f.below, f.known_failure, f.id, f.note) for f in jsonl_facts]
        assert [f.line for f in toml_facts] == [2, 7] and [f.line for f in jsonl_facts] == [1, 3]

    def test_the_format_is_found_by_the_first_line_without_a_suffix(self, write) -> None:
        assert read_expectations(write("facts", self.TOML))[0].docs == ("c",)
        assert read_expectations(write("facts2", '{"query": "q", "doc": "d", "in_top": 2}'))[0].k == 2

    @pytest.mark.parametrize(("text", "message"), [
        ('{"query": "q1", "doc": "a", "in_top": 0}', "1: expected in_top to be a depth k, an integer >= 1, found 0"),
        ('\n{"query": "q1", "doc": "a", "in_top": true}', ("2: expected in_top to be a depth k, an integer >= 1, "
                                                          "found true")),
        ('{"query": "q1", "doc": "a", "in_tpo": 3}', ("1: expected a fact's field (query, doc, docs, in_top, "
                                                     "never_in_top, any_in_top, ranks_above, known_failure, id, "
                                                     "note), found 'in_tpo'")),
        ('{"doc": "a", "in_top": 3}', "1: expected a 'query' field, found none"),
        ('{"query": "q1", "doc": "a"}', ("1: expected one claim of in_top, never_in_top, any_in_top, ranks_above, "
                                        "found none")),
        ('{"query": "q1", "doc": "a", "in_top": 1, "never_in_top": 3}', ("1: expected one claim of in_top, "
                                                                        "never_in_top, any_in_top, ranks_above, "
                                                                        "found in_top, never_in_top")),
        ('{"query": "q1", "doc": "a", "docs": ["b"], "in_top": 1}', ("1: expected the documents in 'doc' (one id) or "
                                                                    "'docs' (a list), not both, found both")),
        ('{"query": "q1", "docs": [], "any_in_top": 1}', ("1: expected docs to be a non-empty list of document ids, "
                                                         "found []")),
        ('{"query": "q1", "docs": ["a", "a"], "any_in_top": 1}', ("1: expected docs to name each document once, "
                                                                 'found ["a", "a"]')),
        ('{"query": "q1", "doc": "a", "ranks_above": "a"}', ("1: expected ranks_above to name other documents than "
                                                            "doc/docs, found a")),
        ('{"query": 7, "doc": "a", "in_top": 1}', "1: expected query to be a non-empty string, found 7"),
        ('{"query": "q1", "doc": "a", "in_top": 1, "known_failure": "yes"}', ('1: expected known_failure to be true or '
                                                                             'false, found "yes"')),
        ('{"query": "q1", "doc": "a", "in_top": 1}\n[1, 2]', "2: expected an object of a fact's fields, found [1, 2]"),
        ('{"query": "q1", "doc": "a", "in_top": 1, "in_top": 2}', ("1: expected a JSON object, found the field "
                                                                  "'in_top' twice")),
        ('{"query": "q1", "doc": "a", "in_top": 1,', "1: expected a JSON object, found Expecting property name"),
        ('{"id": "x", "query": "q1", "doc": "a", "in_top": 1}\n{"id": "x", "query": "q1", "doc": "b", "in_top": 1}',
         "2: expected a new id (the fact at line 1 has it), found 'x'"),
        ("\n\n", ": expected at least one fact, found none"),
    ])
    def test_bad_jsonl(self, write, text: str, message: str) -> None:
        path = write("e.jsonl", text)
        with pytest.raises(InputFormatError) as error:
            read_expectations(path)
        assert str(error.value).startswith(path + (":" if message[0].isdigit() else "") + message)

    @pytest.mark.parametrize(("text", "message"), [
        ('[[expect]]\nquery = "q1"\ndoc = "a"\nin_top = -1\n', "4: expected in_top to be a depth k"),
        ('[[expect]]\nquery = "q1"\ndoc = "a"\nin_top = 1\n\n[[expect]]\nquery = "q2"\n\ndocs = "a"\nin_top = 1\n',
         "9: expected docs to be a non-empty list"),
        ('[[expect]]\nquery = "q1"\ndoc = "a"\n', "1: expected one claim of"),
        ('[[expect]]\nquery = "q1"\ndoc = "a"\nin_top = 1\n[facts]\nx = 1\n', ("5: expected only [[expect]] tables, "
                                                                             "found 'facts'")),
        ('[[expect]]\nquery = "q1"\ndoc = = "a"\n', "3: expected TOML, found Invalid value"),
        ('# nothing yet\n', ": expected at least one fact, found none"),
    ])
    def test_bad_toml(self, write, text: str, message: str) -> None:
        path = write("e.toml", text)
        with pytest.raises(InputFormatError) as error:
            read_expectations(path)
        assert str(error.value).startswith(path + (":" if message[0].isdigit() else "") + message)

    def test_ids_any_text(self) -> None:
        [fact] = parse_toml('[[expect]]\nquery = "laptop bag"\ndoc = "d 1"\nin_top = 3\n')
        assert fact.name == "laptop bag: d 1 in top 3"


class TestCommand:
    FACTS = ('{"query": "q1", "doc": "c", "in_top": 1}\n'
             '{"query": "q1", "doc": "a", "in_top": 2, "id": "a-top2"}\n'
             '{"query": "q1", "doc": "a", "ranks_above": "b", "known_failure": true}\n'
             '{"query": "q1", "doc": "b", "ranks_above": "a", "known_failure": true}\n'
             '{"query": "q9", "doc": "x", "never_in_top": 5}\n')

    def _run(self, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
        code = main(["expect", *args])
        out, err = capsys.readouterr()
        return code, out, err

    def test_table_and_exit_1_on_a_new_failure(self, capsys, write) -> None:
        code, out, err = self._run(capsys, write("e.jsonl", self.FACTS), write("run", RUN))
        assert code == 1
        assert out.splitlines() == [
            "status         fact                ranks",
            "ok             q1: c in top 1      c at rank 1",
            "FAILED         a-top2              a at rank 3",
            "known failure  q1: a above b       a at rank 3, b at rank 2",
            f"now passes     q1: b above a       b at rank 2, a at rank 3  (unmark it: {write('e.jsonl', self.FACTS)}:4)",
            "FAILED         q9: x not in top 5  query q9 is not in the run",
            "5 facts: 1 ok, 2 failed, 1 known failure, 1 known failure now passing",
        ]
        assert "1 known failure now passes: remove known_failure from it (--strict fails on this)" in err

    def test_known_failures_alone_exit_0_and_strict_fails_on_one_that_passes(self, capsys, write) -> None:
        facts = write("e.jsonl", "".join(self.FACTS.splitlines(keepends=True)[2:4]))
        run = write("run", RUN)
        assert self._run(capsys, facts, run)[0] == 0
        assert self._run(capsys, "--strict", facts, run)[0] == 1
        only_failing = write("f.jsonl", self.FACTS.splitlines(keepends=True)[2])
        assert self._run(capsys, "--strict", only_failing, run)[0] == 0

    def test_hide_passing(self, capsys, write) -> None:
        _, out, _ = self._run(capsys, "--hide-passing", "--quiet", write("e.jsonl", self.FACTS), write("run", RUN))
        assert [line.split()[0] for line in out.splitlines()[1:-1]] == ["FAILED", "known", "now", "FAILED"]

    def test_junit_read_back(self, capsys, write, tmp_path) -> None:
        junit = tmp_path / "expect.xml"
        code, _, _ = self._run(capsys, "--junit", str(junit), write("e.jsonl", self.FACTS), write("run", RUN))
        assert code == 1
        [suite] = list(junitparser.JUnitXml.fromfile(str(junit)))
        assert (suite.name, suite.tests, suite.failures, suite.skipped, suite.errors) == ("expectations", 5, 2, 1, 0)
        cases = {case.name: case for case in suite}
        (failure,) = cases["a-top2"].result
        assert isinstance(failure, junitparser.Failure) and failure.message == "a at rank 3"
        (skipped,) = cases["q1: a above b"].result
        assert isinstance(skipped, junitparser.Skipped)
        assert cases["q1: b above a"].is_passed

    def test_bad_fact_exit_2_one_line(self, capsys, write) -> None:
        facts = write("e.jsonl", '{"query": "q1", "doc": "a", "in_top": "3"}\n')
        code, out, err = self._run(capsys, facts, write("run", RUN))
        assert (code, out) == (2, "")
        assert err == f'retrieval-eval: error: {facts}:1: expected in_top to be a depth k, an integer >= 1, found "3"\n'

    def test_a_bad_run_is_exit_2(self, capsys, write) -> None:
        code, _, err = self._run(capsys, write("e.jsonl", self.FACTS), write("run", "q1 Q0 a\n"))
        assert code == 2 and err.startswith("retrieval-eval: error: ") and err.count("\n") == 1

    def test_junit_may_not_replace_an_input(self, capsys, write) -> None:
        facts = write("e.jsonl", self.FACTS)
        code, _, err = self._run(capsys, "--junit", facts, facts, write("run", RUN))
        assert code == 2 and "is also an input" in err
        with open(facts, encoding="utf-8") as kept:
            assert kept.read() == self.FACTS

    def test_no_undecided_option(self, capsys, write) -> None:
        """A fact holds or not: expect has no --fail-undecided (check's), so asking for it is a usage error."""
        with pytest.raises(SystemExit) as exit_:
            main(["expect", "--fail-undecided", write("e.jsonl", self.FACTS), write("run", RUN)])
        assert exit_.value.code == 2
        assert "unrecognized arguments: --fail-undecided" in capsys.readouterr().err

    def test_run_from_stdin(self, capsys, write, monkeypatch) -> None:
        import io
        import sys

        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(RUN.encode())))
        code, out, _ = self._run(capsys, write("e.jsonl", self.FACTS.splitlines()[0]), "-")
        assert code == 0 and out.endswith("1 fact: 1 ok, 0 failed\n")

