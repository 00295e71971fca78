"""Flaky queries against hand-computed cases and a plain-loop oracle; the flaky command as a user runs it."""

from __future__ import annotations

import itertools
import json
import os
import statistics
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval import SetEvaluator
from retrieval_eval.analysis.flaky import flaky_queries, top_k_overlap
from retrieval_eval.cli import main
from retrieval_eval.model import RetrievalEvalError

QRELS = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}, "q3": {"d": 1}}


def repeat(order_q1: str, order_q2: str) -> SetEvaluator:
    """One repeat: q1 and q2 ranked in the given document order, q3 always the same."""
    run = {q: {doc: float(len(order) - i) for i, doc in enumerate(order)}
           for q, order in (("q1", order_q1), ("q2", order_q2), ("q3", "dz"))}
    return SetEvaluator.from_dict(QRELS, run)


def test_hand_computed_spreads_and_overlaps() -> None:
    # q1: RR is 1 (a first), 1 (b first), 0.5 (x first): min 0.5, max 1, sd of (1, 1, 0.5) = sqrt(1/12)
    # q2: top-2 sets {c, y}, {c, y}, {c, w}: pairwise overlaps 1, 1/2, 1/2 -> 2/3
    report = flaky_queries([repeat("abx", "cy"), repeat("bax", "yc"), repeat("xab", "cw")], ["RR"], k=2)
    q1, q2, q3 = report.queries
    assert (q1.spreads[0].minimum, q1.spreads[0].maximum, q1.spreads[0].range) == (0.5, 1.0, 0.5)
    assert q1.spreads[0].sd == pytest.approx(statistics.stdev([1.0, 1.0, 0.5]))
    assert q1.overlap == pytest.approx((1 + 0.5 + 0.5) / 3)  # {a,b}, {b,a}, {x,a}
    assert q2.overlap == pytest.approx(2 / 3) and q2.spreads[0].range == 0.5  # RR 1, 0.5, 1
    assert q3.overlap == 1.0 and q3.spreads[0].range == 0.0 and not q3.flagged
    assert report.flagged() == ["q1", "q2"]


def test_thresholds_decide_the_flags() -> None:
    runs = [repeat("abx", "cy"), repeat("bax", "cy")]  # q1: same RR (1), top-2 sets equal; q2 identical
    assert flaky_queries(runs, ["RR"], k=2).flagged() == []
    # at k = 3 the sets are equal too, and AP is 1 in both (a and b, the relevant ones, at ranks 1 and 2)
    assert flaky_queries(runs, ["AP", "RR"], k=3).flagged() == []
    shifted = [repeat("abx", "cy"), repeat("axb", "cy")]  # q1: AP 1 vs (1 + 2/3)/2
    assert flaky_queries(shifted, ["AP"], k=3).flagged() == ["q1"]
    assert flaky_queries(shifted, ["AP"], k=3, max_spread=0.2).flagged() == []  # range 1/6
    assert flaky_queries(shifted, ["AP"], k=2, max_spread=0.2).flagged() == ["q1"]  # overlap 1/2 < 1
    assert flaky_queries(shifted, ["AP"], k=2, max_spread=0.2, min_overlap=0.5).flagged() == []


def top_k_overlap_loop(rankings: list[list[str]], k: int) -> float:
    total, pairs = 0.0, 0
    for first, second in itertools.combinations(rankings, 2):
        a, b = set(first[:k]), set(second[:k])
        total += 1.0 if not a and not b else len(a & b) / max(len(a), len(b))
        pairs += 1
    return total / pairs


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8), min_size=2, max_size=5),
       st.integers(1, 8))
def test_overlap_against_a_loop(rankings: list[list[str]], k: int) -> None:
    value = top_k_overlap(rankings, k)
    assert value == pytest.approx(top_k_overlap_loop(rankings, k))
    assert 0.0 <= value <= 1.0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.floats(0.0, 10.0, allow_nan=False), min_size=3, max_size=3), min_size=2, max_size=4))
def test_spreads_against_numpy_over_random_repeats(scores: list[list[float]]) -> None:
    """Every repeat ranks q1's three documents by its own scores; min/max/sd match numpy per query."""
    runs = [SetEvaluator.from_dict({"q1": {"a": 1, "b": 0, "c": 1}}, {"q1": dict(zip("abc", row))}) for row in scores]
    report = flaky_queries(runs, ["AP", "nDCG@2"], k=2)
    for position, measure in enumerate(("AP", "nDCG@2")):
        values = np.array([r.array(measure)[0] for r in runs])
        spread = report.queries[0].spreads[position]
        assert (spread.minimum, spread.maximum) == (values.min(), values.max())
        assert spread.sd == pytest.approx(float(np.std(values, ddof=1)), abs=1e-15)


def test_bad_arguments() -> None:
    one = repeat("abx", "cy")
    with pytest.raises(RetrievalEvalError, match="two or more"):
        flaky_queries([one], ["AP"])
    for options, match in (({"k": 0}, "'k'"), ({"max_spread": -1.0}, "max_spread"), ({"min_overlap": 1.5}, "min_overlap")):
        with pytest.raises(RetrievalEvalError, match=match):
            flaky_queries([one, one], ["AP"], **options)  # type: ignore[arg-type]
    other = SetEvaluator.from_dict({"z": {"a": 1}}, {"z": {"a": 1.0}})
    with pytest.raises(RetrievalEvalError, match="share no query"):
        flaky_queries([one, other], ["AP"])


def _files(write) -> tuple[str, list[str]]:
    qrels = write("qrels", "q1 0 a 1\nq1 0 b 1\nq2 0 c 1\n")
    runs = [write(f"rep{i}", text) for i, text in enumerate((
        "q1 Q0 a 1 3 s\nq1 Q0 b 2 2 s\nq1 Q0 x 3 1 s\nq2 Q0 c 1 2 s\nq2 Q0 y 2 1 s\n",
        "q1 Q0 x 1 3 s\nq1 Q0 a 2 2 s\nq1 Q0 b 3 1 s\nq2 Q0 c 1 2 s\nq2 Q0 y 2 1 s\n"))]
    return qrels, runs


def test_command_prints_the_table_and_writes_the_quarantine_list(capsys, write, tmp_path) -> None:
    qrels, runs = _files(write)
    target = tmp_path / "quarantine.txt"
    target.write_text("old\n", encoding="utf-8")
    code = main(["flaky", qrels, *runs, "-m", "RR", "-k", "2", "-o", str(target)])
    out, err = capsys.readouterr()
    assert code == 0
    assert target.read_text(encoding="utf-8") == "q1\n"  # replaced, one id per line
    assert "1 of 2 queries flagged over 2 repeats" in out
    assert "wrote 1 flagged query id to" in err
    code = main(["flaky", qrels, *runs, "-m", "RR", "--format", "json", "--max-spread", "0.6", "--min-overlap", "0.4"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0 and document["flagged"] == [] and document["queries"][0]["spread"]["RR"]["range"] == 0.5


def test_command_refuses_an_input_as_output_and_one_run(capsys, write) -> None:
    qrels, runs = _files(write)
    before = Path(runs[0]).read_text(encoding="utf-8")
    assert main(["flaky", qrels, *runs, "-o", runs[0]]) == 2
    assert "is also an input" in capsys.readouterr().err
    assert Path(runs[0]).read_text(encoding="utf-8") == before
    assert main(["flaky", qrels, runs[0]]) == 2
    assert "two or more runs" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:  # argparse's own check of the option
        main(["flaky", qrels, *runs, "--min-overlap", "1.5"])
    assert stopped.value.code == 2
    assert "from 0 to 1" in capsys.readouterr().err
    assert not os.path.exists(os.path.join(os.path.dirname(qrels), "quarantine.txt"))
