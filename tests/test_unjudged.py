"""Bounds under unjudged documents and the CLI's tie and unjudged options.

Oracle of the bounds: pytrec_eval on qrels that list every unjudged retrieved document at the
chosen grade (an implementation that shares no code with ours).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval import SetEvaluator
from retrieval_eval.analysis.unjudged import unjudged_bounds

pytrec_eval = pytest.importorskip("pytrec_eval")

#: Our measures and pytrec_eval's names for them.
PAIRS = {"P@3": "P_3", "AP": "map", "nDCG@3": "ndcg_cut_3", "RR": "recip_rank", "R@5": "recall_5", "nDCG": "ndcg"}

docs = st.sampled_from([f"d{i}" for i in range(8)])
query = st.tuples(st.dictionaries(docs, st.integers(0, 3), min_size=1, max_size=5),
                  st.dictionaries(docs, st.floats(0, 5).map(lambda x: round(x, 1)), min_size=1, max_size=7))


def _mean(values: dict[str, dict[str, float]], name: str) -> float:
    return sum(v[name] for v in values.values()) / len(values)


@settings(max_examples=40, deadline=None)
@given(st.lists(query, min_size=1, max_size=3), st.integers(1, 3))
def test_as_relevant_is_the_value_with_those_documents_judged(queries: list, level: int) -> None:
    qrels = {f"q{i}": dict(judged) for i, (judged, _) in enumerate(queries)}
    run = {f"q{i}": dict(scores) for i, (_, scores) in enumerate(queries)}
    # Distinct scores per query: pytrec_eval breaks ties its own way.
    run = {q: {d: float(len(s) - n) for n, d in enumerate(sorted(s, key=lambda d: (-s[d], d)))} for q, s in run.items()}
    bounds = unjudged_bounds(SetEvaluator.from_dict(qrels, run), list(PAIRS), level=level)
    filled = {q: {**{d: level for d in run[q] if d not in qrels[q]}, **qrels[q]} for q in qrels}
    low = pytrec_eval.RelevanceEvaluator(qrels, set(PAIRS.values())).evaluate(run)
    high = pytrec_eval.RelevanceEvaluator(filled, set(PAIRS.values())).evaluate(run)
    for bound in bounds:
        name = PAIRS[bound.measure]
        assert bound.value == pytest.approx(_mean(low, name), abs=1e-12), bound.measure
        assert bound.as_relevant == pytest.approx(_mean(high, name), abs=1e-12), bound.measure


def test_bounds_by_hand() -> None:
    # a relevant, x unjudged, b judged non-relevant, y unjudged: P@4 = 1/4, or 3/4 with x and y relevant.
    run = SetEvaluator.from_dict({"q": {"a": 1, "b": 0}}, {"q": {"a": 4.0, "x": 3.0, "b": 2.0, "y": 1.0}})
    [p4, ap] = unjudged_bounds(run, ["P@4", "AP"])
    assert (p4.value, p4.as_relevant, p4.judged, p4.level) == (0.25, 0.75, 0.5, 1)
    assert (ap.value, ap.as_relevant) == (1.0, pytest.approx((1 + 1 + 3 / 4) / 3))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "retrieval_eval", *args], capture_output=True, text=True, check=False)


@pytest.fixture
def files(write) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    qrels = write("qrels", "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 d 1\n")
    run = write("run", "q1 Q0 a 1 3 s\nq1 Q0 x 2 2 s\nq1 Q0 b 3 2 s\nq1 Q0 c 4 2 s\nq2 Q0 z 1 5 s\nq2 Q0 d 2 5 s\n")
    return qrels, run


def test_the_cli_keeps_stdout_and_notes_on_stderr(files: tuple[str, str]) -> None:
    plain = _cli("evaluate", "-m", "P.2", "-m", "map", *files)
    same = _cli("evaluate", "--ties", "trec_eval", "--no-unjudged-note", "-m", "P.2", "-m", "map", *files)
    assert plain.returncode == same.returncode == 0 and plain.stdout == same.stdout
    assert "P@2: 50% of the top-2 documents are unjudged; the value lies in [0.50, 1.00]" in plain.stderr
    assert "unjudged" not in same.stderr
    assert "unjudged" not in _cli("evaluate", "--judged-below", "0.4", "-m", "P.2", *files).stderr


def test_the_cli_ties_and_reports(files: tuple[str, str]) -> None:
    expected = _cli("evaluate", "--quiet", "--ties", "expected", "-m", "P.1", *files)
    assert expected.stdout == "P_1                   \tall\t0.7500\n"  # q1: a (relevant) alone at 1; q2: z or d, 1/2
    refused = _cli("evaluate", "--ties", "expected", "-m", "bpref", *files)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "closed form" in refused.stderr
    report = _cli("evaluate", "--quiet", "--tie-report", "-m", "P.1", *files)
    assert report.stdout.splitlines() == [
        "ties: 2 of 2 queries have tied scores; a tie straddles the cut-off in 1 at rank 1",
        "measure\tvalue\tpessimistic\toptimistic\texpected", "P@1\t0.5000\t0.5000\t1.0000\t0.7500"]
    bounds = _cli("evaluate", "--quiet", "--bounds", "--unjudged-as", "1", "-m", "P.2", *files)
    assert bounds.stdout.splitlines()[-1] == "P@2\t0.5000\t1.0000\t0.5000"
    assert _cli("evaluate", "--tie-report", "--format", "csv", *files).returncode == 2


def test_a_baseline_keeps_its_tie_policy(files: tuple[str, str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    from pathlib import Path

    plain, tied = str(tmp_path / "plain.json"), str(tmp_path / "tied.json")
    assert _cli("baseline", "save", "--quiet", "-m", "P@1", "-o", plain, *files).returncode == 0
    assert "ties" not in json.loads(Path(plain).read_text())["options"]  # the default is not written: files as before
    assert _cli("baseline", "save", "--quiet", "--ties", "expected", "-m", "P@1", "-o", tied, *files).returncode == 0
    assert json.loads(Path(tied).read_text())["options"]["ties"] == "expected"
    assert json.loads(Path(tied).read_text())["summary"]["P@1"] == 0.75
    assert _cli("check", "--quiet", tied, *files).returncode == 0  # scored as the baseline was: no regression
    refused = _cli("check", "--quiet", "--ties", "trec_eval", tied, *files)
    assert refused.returncode == 2 and "option ties" in refused.stderr


def test_the_notes_stop_at_five_and_count_the_rest(files: tuple[str, str]) -> None:
    # -m all_trec asks for some fifty cut-off measures: five notes, then one line counting the others
    many = _cli("evaluate", "-q", "-m", "all_trec", *files)
    notes = [line for line in many.stderr.splitlines() if "unjudged" in line or "more measure" in line]
    assert many.returncode == 0 and len(notes) == 6 and notes[0].startswith("retrieval-eval: note: P@5:")
    counted = int(notes[-1].split("note: ")[1].split()[0])
    listed = _cli("evaluate", "--quiet", "--bounds", "-m", "all_trec", *files).stdout.splitlines()
    assert counted > 5 and "(their bounds: evaluate --bounds)" in notes[-1]
    assert len(listed) > counted  # --bounds lists every measure, the noted ones among them
    assert _cli("evaluate", "-q", "-m", "all_trec", "--no-unjudged-note", *files).stdout == many.stdout


def test_past_interval_rows_a_note_gives_the_share_alone() -> None:
    from retrieval_eval.analysis.unjudged import unjudged_notes

    run = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}})
    with_interval = unjudged_notes(run, ["P@2"])
    share_only = unjudged_notes(run, ["P@2"], interval_rows=0)  # x is the one unjudged row
    assert with_interval == ["P@2: 50% of the top-2 documents are unjudged; the value lies in [0.50, 1.00]"]
    assert share_only == ["P@2: 50% of the top-2 documents are unjudged (their interval: evaluate --bounds)"]
    assert unjudged_notes(run, ["P@2"], interval_rows=1) == with_interval


@settings(max_examples=40, deadline=None)
@given(st.lists(query, min_size=1, max_size=4), st.lists(st.integers(1, 12), min_size=1, max_size=6))
def test_judged_shares_are_the_mean_judged_at_each_cutoff(queries: list, cutoffs: list[int]) -> None:
    """The notes' Judged@k, computed once per cut-off (and once for all those past the longest
    ranking), is each cut-off's own mean Judged@k over the queries that retrieved something."""
    from retrieval_eval.analysis.unjudged import _judged_shares
    from retrieval_eval.measures import parse

    qrels = {f"q{i}": dict(judged) for i, (judged, _) in enumerate(queries)}
    run = {f"q{i}": dict(scores) for i, (_, scores) in enumerate(queries)}
    results = SetEvaluator.from_dict(qrels, run)
    measures = [parse(f"P@{k}") for k in cutoffs] + [parse("AP")]
    expected = []
    for k in cutoffs:
        per_query = SetEvaluator.from_dict(qrels, run).array(f"Judged@{k}")
        expected.append(float(per_query[results._batch.num_ret > 0].mean()))
    assert _judged_shares(results, measures) == [*expected, None]  # exactly: the same kernel, the same sum


def test_the_notes_reuse_the_summaries_the_output_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """A summary is computed once per evaluation (without z-scores): the note's usual value is the one
    the output printed, not a second pass over the queries."""
    import retrieval_eval.evaluators.results as results_module
    from retrieval_eval.analysis.unjudged import unjudged_notes

    run = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}})
    printed = run._summaries(["P@2", "AP"])
    fresh = SetEvaluator.from_dict({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}})
    made: list[int] = []
    original = results_module.summaries

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(len(args[1]))
        return original(*args, **kwargs)

    monkeypatch.setattr(results_module, "summaries", counted)
    assert run._summaries(["AP", "P@2"]) == printed[::-1] and made == []
    assert unjudged_notes(run, ["P@2"]) == unjudged_notes(fresh, ["P@2"])
    assert made == [1]  # only the fresh evaluation computed P@2's summary
    assert run._summaries(["P@2"], keep=True) == printed[:1] and made == [1, 1]  # keep: the arrays are made


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.dictionaries(docs, st.integers(-1, 3), max_size=5),
                          st.dictionaries(docs, st.floats(0, 5), max_size=7)), min_size=1, max_size=5),
       st.integers(0, 3), st.booleans())
def test_the_batch_with_unjudged_judged_matches_one_built_query_by_query(queries: list, level: int, long: bool) -> None:
    import numpy as np

    from retrieval_eval.engine import batch as batch_module
    from retrieval_eval.engine import ties

    qrels = {f"q{i}": dict(judged) for i, (judged, _) in enumerate(queries) if judged}
    run = {f"q{i}": dict(scores) for i, (_, scores) in enumerate(queries) if scores}
    if not qrels or not run:
        return
    b = SetEvaluator.from_dict(qrels, run)._batch
    # Both ways of finding an unjudged row's query: searched in the offsets, gathered from the row index.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batch_module, "long_segments", lambda offsets: long)  # (RankedBatch.query_of's choice)
        made = ties.with_unjudged_as(b, level)
    # The oracle: each query's judged rows, then its unjudged ranked rows at ``level``, in rank order.
    relevance: list[int] = []
    doc_ids: list[bytes] = []
    offsets = [0]
    for q in range(b.n_queries):
        judged = slice(b.judged_offsets[q], b.judged_offsets[q + 1])
        ranked = range(b.offsets[q], b.offsets[q + 1])
        relevance += b.judged_relevance[judged].tolist() + [level for r in ranked if b.labels[r] < 0]
        doc_ids += b.judged_doc_ids[judged].tolist() + [b.doc_ids[r] for r in ranked if b.labels[r] < 0]
        offsets.append(len(relevance))
    assert made.judged_offsets.tolist() == offsets
    assert made.judged_relevance.tolist() == relevance
    assert made.judged_doc_ids.tolist() == doc_ids
    assert made.labels.tolist() == np.where(b.labels < 0, level, b.labels).tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.dictionaries(docs, st.integers(-1, 3), max_size=5),
                          st.dictionaries(docs, st.floats(0, 5), min_size=1, max_size=8)), min_size=1, max_size=5),
       st.one_of(st.none(), st.integers(1, 6)))
@pytest.mark.parametrize("way", ["count", "hits", "cached hits"])
def test_judged_at_k_is_the_judged_share_of_each_top_k(way: str, queries: list, k: int | None) -> None:
    import numpy as np

    import retrieval_eval.measures.judged as judged_module
    from retrieval_eval.measures import parse
    from retrieval_eval.measures.registry import compute

    qrels = {f"q{i}": dict(judged) for i, (judged, _) in enumerate(queries) if judged}
    run = {f"q{i}": dict(scores) for i, (_, scores) in enumerate(queries) if scores}
    if not qrels or not run:
        return
    b = SetEvaluator.from_dict(qrels, run)._batch
    if way == "cached hits":
        b.hits(0)
    # Each way: the running count of judged rows, the judged hits made for it, or those made already.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(judged_module, "long_segments", lambda offsets: way == "hits")
        values = compute(b, parse("Judged" if k is None else f"Judged@{k}"))
    # The oracle: each query's top min(k, n) labels, counted one by one (0.0 for an empty ranking).
    expected = []
    for q in range(b.n_queries):
        top = b.labels[b.offsets[q] : b.offsets[q + 1]].tolist()[:k]
        expected.append(sum(label >= 0 for label in top) / len(top) if top else 0.0)
    assert values.tolist() == expected
    assert isinstance(values, np.ndarray)
