"""PooledAUC's summary (pooled over every row) and AUC's (the mean where it is defined) on a click log
(issue 27, F.1): the summaries, blocks of queries, the refusals, and the command line's notes.

The log is the issue's shape: many sessions, most without a click. Their AUC is undefined; counted
as 0 they dragged AUC's mean far below the AUC of the log's rows. sklearn's ``roc_auc_score`` is
the oracle for the pooled value (tests/measures/test_log_measures.py checks it on more shapes).
"""

from __future__ import annotations

import io
from fractions import Fraction

import numpy as np
import pytest

import retrieval_eval.evaluators.blocks as evaluator_module
from retrieval_eval import SetEvaluator
from retrieval_eval.cli import main
from retrieval_eval.measures import REGISTRY, MeasureError, parse
from retrieval_eval.measures.auc import ScoreCounts, _pooled_auc
from retrieval_eval.measures.registry import pool_share
from retrieval_eval.measures.summary import Summary


def _click_log(seed: int = 11, sessions: int = 400) -> str:
    """``session item score click`` rows: 2..8 items a session, a click on about 10% of the items
    (so most sessions have none), clicks scored higher on average, two-decimal scores (many ties)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(sessions):
        for i in range(int(rng.integers(2, 9))):
            click = int(rng.random() < 0.1)
            score = round(float(np.clip(rng.normal(0.6 if click else 0.4, 0.15), 0, 1)), 2)
            rows.append(f"s{s}\ti{i}\t{score}\t{click}\n")
    return "".join(rows)


def _rows(text: str) -> tuple[list[int], list[float]]:
    labels, scores = [], []
    for line in text.splitlines():
        _, _, score, click = line.split("\t")
        labels.append(int(click))
        scores.append(float(score))
    return labels, scores


def test_the_issues_log_pooled_grouped_and_the_old_mean() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    text = _click_log()
    clicks = SetEvaluator.from_log(io.StringIO(text))
    labels, scores = _rows(text)
    pooled = metrics.roc_auc_score(labels, scores)
    assert clicks.aggregate("PooledAUC") == pytest.approx(pooled, rel=1e-15, abs=0)
    values = clicks.array("AUC")
    defined = clicks.summary_weights("AUC")
    assert defined is not None and 0 < defined.sum() < len(values) / 2  # most sessions have no click
    assert clicks.aggregate("AUC") == clicks.aggregate("GAUC") == pytest.approx(values[defined == 1].mean())
    # The old summary, undefined sessions counted as 0, is far below both: the trap the issue met.
    assert values.mean() < 0.6 * clicks.aggregate("AUC") and values.mean() < 0.6 * pooled
    assert clicks.left_out("AUC") == clicks.left_out("GAUC") and clicks.left_out("PooledAUC") == []


def test_blocks_give_the_same_pooled_value(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                           tmp_path) -> None:
    """The command line sums blocks of queries: PooledAUC merges their score counts exactly."""
    (tmp_path / "log.tsv").write_text(_click_log(seed=3, sessions=120))
    command = ["evaluate", "--log", str(tmp_path / "log.tsv"), "-m", "PooledAUC", "-m", "AUC", "--format", "json"]
    assert main(command) == 0
    whole = capsys.readouterr().out
    monkeypatch.setattr(evaluator_module, "QUERIES_PER_BLOCK", 7)
    monkeypatch.setattr(evaluator_module, "QUERIES_PER_THREAD_BLOCK", 7)
    assert main(command) == 0
    assert capsys.readouterr().out == whole
    clicks = SetEvaluator.from_log(tmp_path / "log.tsv")
    assert f"{clicks.aggregate('PooledAUC')!r}" in whole


def test_shares_add_up_exactly() -> None:
    """A score in several blocks has its counts added; the value is the exact fraction, rounded once."""
    one = ScoreCounts(np.array([0.1, 0.5]), np.array([0, 2]), np.array([3, 1]))
    two = ScoreCounts(np.array([0.5, 0.9]), np.array([1, 1]), np.array([2, 0]))
    # Positives: 0.5 x3, 0.9 x1; negatives: 0.1 x3, 0.5 x3. Each 0.5 beats 3 and ties 3; 0.9 beats 6.
    assert _pooled_auc([one, two]) == float(Fraction(3 * (2 * 3 + 3) + 1 * (2 * 6), 2 * 4 * 6))
    assert _pooled_auc([ScoreCounts(np.array([0.5]), np.array([2]), np.array([0]))]) == 0.0  # no negative


def test_a_summary_of_per_query_values_alone_is_refused() -> None:
    clicks = SetEvaluator.from_log(io.StringIO(_click_log(sessions=30)))
    measure = parse("PooledAUC")
    with pytest.raises(MeasureError, match=r"^PooledAUC pools the rows of every query: its summary needs them"):
        measure.definition.aggregate_values(clicks.array(measure))  # what compare and spark.summarize have
    with pytest.raises(MeasureError, match=r"^mean\('PooledAUC'\): the summary of PooledAUC is pooled over the "
                                           r"rows of every query, not an arithmetic mean"):
        clicks.mean("PooledAUC")
    with pytest.raises(MeasureError, match=r"^mean\('AUC'\): the summary of AUC is a weighted mean"):
        clicks.mean("AUC")
    summary = Summary(REGISTRY["PooledAUC"])
    summary.add(clicks.array(measure), None, pool_share(clicks._batch, measure))
    assert summary.value() == clicks.aggregate(measure)


def test_the_stderr_notes_agree(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """A session without a click is left out of AUC and GAUC (one note each), not called 0 for them."""
    (tmp_path / "log.tsv").write_text("s1\ta\t0.9\t1\ns1\tb\t0.5\t0\ns2\tx\t0.2\t0\ns2\ty\t0.8\t0\n")
    assert main(["evaluate", "--log", str(tmp_path / "log.tsv"), "-m", "AUC", "-m", "GAUC", "-m", "PooledAUC",
                 "-m", "nDCG@10"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "retrieval-eval: warning: 1 query has no relevant judgment (relevance >= 1), so nDCG@10 is 0 for it: s2",
        ("retrieval-eval: note: AUC: 1 of 2 queries has only relevant or only non-relevant documents and is left "
         "out of its summary: s2"),
        ("retrieval-eval: note: GAUC: 1 of 2 queries has only relevant or only non-relevant documents and is left "
         "out of its summary: s2"),
    ]
    values = {line.split()[0]: float(line.split()[2]) for line in out.splitlines()}
    assert values["AUC"] == values["GAUC"] == 1.0  # s1 alone
    assert values["PooledAUC"] == 1.0  # a 0.9 above b 0.5, x 0.2, y 0.8: every pair won
