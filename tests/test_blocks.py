"""Evaluating a batch of very many queries a block of queries at a time (issue 16, sessions shapes).

``SetEvaluator`` computes the measures of a batch of more than ``QUERIES_PER_BLOCK`` queries
(``QUERIES_PER_THREAD_BLOCK`` on several CPUs) block by block, so that each block's arrays stay small. That is only right if every measure is computed
query by query: these tests compute every registered measure on blocks and on the whole batch, with
the block size made tiny, and ask for the same bits. The summaries carried across blocks must equal
the whole batch's to the last bit too, and the CLI's output must not change.
"""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import numpy as np
import pytest

import retrieval_eval.engine.threads as threads_module
import retrieval_eval.evaluators.blocks as evaluator_module
from retrieval_eval import SetEvaluator
from retrieval_eval.cli import main
from retrieval_eval.measures import REGISTRY, Measure, MeasureError, compute, compute_text
from retrieval_eval.measures.registry import MeasureDef
from retrieval_eval.measures.summary import Summary, sequential_mean, sequential_sum, sequential_sums

#: Small enough that the seeded data below (60 queries) makes many blocks, of unequal sizes.
TINY_BLOCK = 7


def _data(seed: int) -> tuple[str, str]:
    """Diversity qrels (subtopic ids in the second column) and a run over 60 queries, with what makes
    measures differ: graded and negative judgments, queries without relevant documents, queries the
    run lacks, run queries without judgments, ties in score, empty and long rankings."""
    rnd = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(60):
        qid = f"q{q:02d}"
        docs = [f"d{d}" for d in range(int(rnd.integers(0, 15)))]
        if q % 11 != 5:  # a few run queries have no judgments at all
            for doc in docs[: int(rnd.integers(0, len(docs) + 1))]:
                for subtopic in rnd.choice(4, size=int(rnd.integers(1, 3)), replace=False):
                    qrels.append(f"{qid} {subtopic} {doc} {int(rnd.choice([-1, 0, 0, 1, 1, 2, 3]))}")
        if q % 13 == 7:  # judged, missing from the run: an empty ranking
            qrels.append(f"{qid} 0 dx 1")
            continue
        for rank, doc in enumerate(rnd.permutation(docs + [f"n{k}" for k in range(int(rnd.integers(0, 6)))])):
            run.append(f"{qid} Q0 {doc} {rank + 1} {float(rnd.integers(0, 4)) / 2} r")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def _evaluator(seed: int, **options: object) -> SetEvaluator:
    qrels, run = _data(seed)
    return SetEvaluator.from_trec(io.StringIO(qrels), io.StringIO(run), subtopics=True, **options)  # type: ignore[arg-type]


def _tiny_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of TINY_BLOCK queries, on one thread and on several."""
    monkeypatch.setattr(evaluator_module, "QUERIES_PER_BLOCK", TINY_BLOCK)
    monkeypatch.setattr(evaluator_module, "QUERIES_PER_THREAD_BLOCK", TINY_BLOCK)


def _measures() -> list[Measure]:
    """Every registered measure, at a cutoff when it takes one, and judged-only where it can be."""
    out = []
    for definition in REGISTRY.values():
        if definition.preferences:  # they need preference judgments: tests/measures/test_prefs.py checks their blocks
            continue
        cutoff = definition.cutoff
        measure = definition() if cutoff is None else definition(**{cutoff: definition.params[cutoff].kind(0.5 if
                                                                     definition.params[cutoff].kind is float else 5)})
        if "max_rel" in definition.params and measure["max_rel"] is None:  # SDCG and the like require it
            measure = measure(max_rel=3)
        out.append(measure)
        if "judged_only" in definition.params:
            out.append(measure(judged_only=True))
    return out


@pytest.mark.parametrize("seed", range(3))
def test_every_measure_gives_the_same_values_on_blocks_as_on_the_whole_batch(seed: int) -> None:
    batch = _evaluator(seed)._batch
    starts = range(0, batch.n_queries, TINY_BLOCK)
    for measure in _measures():
        parts = [batch.block(start, min(start + TINY_BLOCK, batch.n_queries)) for start in starts]
        if measure.definition.text:
            blocked_text = list(itertools.chain.from_iterable(compute_text(part, measure) for part in parts))
            assert blocked_text == compute_text(batch, measure)
            continue
        whole = compute(batch, measure)
        blocked = np.concatenate([compute(part, measure) for part in parts])
        assert blocked.tobytes() == whole.tobytes(), measure  # the same bits, NaN included


def test_a_block_holds_views_of_its_queries_rows() -> None:
    batch = _evaluator(0)._batch
    part = batch.block(10, 20)
    assert part.query_ids == batch.query_ids[10:20]
    assert part.offsets[0] == 0 and part.offsets[-1] == batch.offsets[20] - batch.offsets[10]
    assert np.shares_memory(part.labels, batch.labels) and np.shares_memory(part.judged_doc_ids, batch.judged_doc_ids)
    assert part.subtopics is not None and batch.subtopics is not None
    assert part.subtopics.doc_ids.tolist() == batch.subtopics.select(np.arange(10, 20)).doc_ids.tolist()


def test_a_block_takes_the_batch_s_counts_of_judgments_once_made() -> None:
    """R and NR made for the whole batch (the CLI's notes count R) are sliced for a block, not counted
    again; the slices equal the block's own counts, and a count not made yet is the block's own."""
    batch = _evaluator(2)._batch
    whole_r, whole_nr = batch.n_relevant(2), batch.n_nonrelevant(2)
    part = batch.block(10, 20)
    assert np.shares_memory(part.n_relevant(2), whole_r) and np.shares_memory(part.n_nonrelevant(2), whole_nr)
    fresh = batch.select(np.arange(10, 20))  # counted anew
    assert part.n_relevant(2).tolist() == fresh.n_relevant(2).tolist()
    assert part.n_nonrelevant(2).tolist() == fresh.n_nonrelevant(2).tolist()
    assert not np.shares_memory(part.n_relevant(1), batch._cache.get(("R", 1), np.zeros(0)))


def test_blocks_cover_the_queries_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    batch = _evaluator(1)._batch
    assert batch.query_blocks(batch.n_queries) == [(0, batch.n_queries)]  # a small batch is one block
    blocks = batch.query_blocks(TINY_BLOCK)
    assert len(blocks) > 5 and blocks[0][0] == 0 and blocks[-1][1] == batch.n_queries
    assert all(stop == next_start for (_, stop), (next_start, _) in itertools.pairwise(blocks))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("threads", [1, 3])
def test_summaries_in_blocks_equal_the_whole_batch_s(
    seed: int, keep: bool, threads: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    numeric = [measure for measure in _measures() if not measure.definition.text]
    whole = _evaluator(seed)
    expected = [whole.aggregate(measure) for measure in numeric]
    _tiny_blocks(monkeypatch)
    monkeypatch.setattr(threads_module, "usable_cpus", lambda: threads)  # blocks on the calling thread, or on 3
    blocked = _evaluator(seed)
    assert len(blocked._batch.query_blocks(TINY_BLOCK)) > 5
    assert blocked._summaries(numeric, keep=keep) == expected  # exact: the same additions in the same order
    assert len(blocked._values) == (len(set(numeric)) if keep else 0)
    for measure in numeric:  # kept by _summaries, or computed by array() block by block: the whole batch's
        assert blocked.array(measure).tobytes() == whole.array(measure).tobytes(), measure


def test_summaries_reuse_arrays_already_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    _tiny_blocks(monkeypatch)
    runs = _evaluator(2)
    ap = runs.array("AP")
    assert runs._summaries(["AP", "P@5"], keep=True) == [runs.aggregate("AP"), runs.aggregate("P@5")]
    assert runs.array("AP") is ap


@pytest.mark.parametrize("options", [[], ["-q"], ["-q", "--format", "csv"], ["--format", "json"], ["-J", "-l", "2"]])
def test_the_cli_prints_the_same_with_blocks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, options: list[str],
) -> None:
    qrels, run = _data(4)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    command = ["evaluate", "--quiet", *options, "-m", "all_trec", "-m", "alpha_nDCG@5", "-m", "GAUC",
               str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert main(command) == 0
    whole = capsys.readouterr().out
    _tiny_blocks(monkeypatch)
    assert main(command) == 0
    assert capsys.readouterr().out == whole and len(whole.splitlines()) > 40


def _mean_definition(aggregate: str) -> MeasureDef:
    """A registered definition summarised by ``aggregate``."""
    return next(d for d in REGISTRY.values() if d.aggregate == aggregate and not d.text)


@pytest.mark.parametrize("aggregate", ["mean", "gmean", "sum", "weighted"])
def test_a_summary_added_in_parts_is_the_summary_of_the_whole(aggregate: str) -> None:
    rnd = np.random.default_rng(7)
    values = rnd.random(1000) / 3  # thirds: sums in another order round differently
    weights = rnd.integers(0, 3, 1000).astype(float)
    definition = _mean_definition(aggregate)
    if definition.integer:  # a sum of counts (every summed measure is one)
        values = rnd.integers(0, 2**40, 1000).astype(float)
    summary = Summary(definition)
    for start in (0, 1, 17, 500, 999):  # parts of 1, 16, 483, 499 and 1 values
        stop = {0: 1, 1: 17, 17: 500, 500: 999, 999: 1000}[start]
        summary.add(values[start:stop], weights[start:stop])
    assert summary.value() == definition.aggregate_values(values, weights)


def test_sequential_sums_chain_and_keep_negative_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    import retrieval_eval.measures.summary as summary_module

    values = np.random.default_rng(3).random(1000) / 3
    left_to_right = 0.0
    for value in values.tolist():  # the oracle: Python's float additions, in order
        left_to_right += value
    assert sequential_sum(values) == left_to_right
    assert sequential_sum(values[300:], sequential_sum(values[:300])) == left_to_right
    monkeypatch.setattr(summary_module, "_SUM_CHUNK", 7)  # many chunks, each starting from the sum so far
    assert sequential_sum(values) == left_to_right
    assert sequential_sum(values[300:], sequential_sum(values[:300])) == left_to_right
    assert str(sequential_sum(np.array([-0.0, -0.0]))) == "-0.0" and sequential_sum(np.zeros(0)) is None
    assert sequential_sum(np.zeros(0), 2.5) == 2.5 and sequential_mean(np.zeros(0)) == 0.0


def _left_to_right(values: np.ndarray, start: float | None) -> float | None:
    """The oracle: Python's float additions, one value after the other."""
    total = start
    for value in values.tolist():
        total = value if total is None else total + value
    return total


@pytest.mark.parametrize("n", [0, 1, 2, 4095, 4096, 4097, 9000])
@pytest.mark.parametrize("k", [2, 3, 8, 31])
def test_sums_side_by_side_add_each_column_left_to_right(n: int, k: int) -> None:
    """Values that pairwise or blocked summation would round otherwise (magnitudes from 1e-3 to 1e12,
    both signs), columns of -0.0, of NaN and of inf, starts of None and of numbers: every column's
    sum has the bits of the left-to-right loop (a pairwise reduction fails this at n >= 9)."""
    rnd = np.random.default_rng(n * 100 + k)
    columns = [rnd.choice([-1.0, 1.0], n) * 10.0 ** rnd.uniform(-3, 12, n) for _ in range(k)]
    columns[0] = np.full(n, -0.0)
    if k > 3:
        columns[1][n // 2 :] = np.nan
        columns[2][:1] = np.inf
    starts: list[float | None] = [None if j % 2 else float(rnd.uniform(-1e6, 1e6)) for j in range(k)]
    sums = sequential_sums(columns, starts)
    expected = [_left_to_right(column, start) for column, start in zip(columns, starts)]
    assert [repr(x) for x in sums] == [repr(x) for x in expected]
    if n == 9000:  # the data tell the orders apart: NumPy's pairwise sum of some column differs
        finite = [column for column in columns if column.any() and np.isfinite(column).all()]
        assert any(float(np.sum(column)) != _left_to_right(column, None) for column in finite)


def test_sums_side_by_side_keep_a_negative_zero_without_a_start() -> None:
    """A column of -0.0 summed from no start is -0.0, as it is alone and in Python's loop (a reduction
    that starts from its identity, +0.0, would make it 0.0)."""
    columns = [np.full(5, -0.0), np.ones(5), np.full(5, -0.0)]
    sums = sequential_sums(columns, [None, None, 2.0])
    expected = [_left_to_right(column, start) for column, start in zip(columns, [None, None, 2.0])]
    assert [repr(x) for x in sums] == [repr(x) for x in expected] == ["-0.0", "5.0", "2.0"]
    assert repr(sequential_sum(columns[0])) == "-0.0"


def test_summaries_added_side_by_side_equal_each_added_alone() -> None:
    """Summary.add_all: the means and geometric means summed side by side, the sums and weighted
    means added one by one, give the values of each summary added alone."""
    rnd = np.random.default_rng(11)
    definitions = [_mean_definition(a) for a in ("mean", "gmean", "sum", "weighted", "mean", "gmean")]
    alone = [Summary(d) for d in definitions]
    together = [Summary(d) for d in definitions]
    for size in (5, 4097, 1, 300):  # blocks of several sizes, the running sums carried from one to the next
        values = [rnd.integers(0, 9, size).astype(float) if d.integer else rnd.random(size) / 3 for d in definitions]
        weights = [rnd.random(size) if d.aggregate == "weighted" else None for d in definitions]
        for summary, v, w in zip(alone, values, weights):
            summary.add(v, w)
        Summary.add_all(together, values, weights)
    assert [s.value() for s in together] == [s.value() for s in alone]
    assert [s.count for s in together] == [4403] * len(definitions)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("column", [0, 1, 2, 4])
def test_summaries_added_side_by_side_refuse_what_each_refuses_alone(bad: float, column: int) -> None:
    """Summary.add_all checks a mean's values only when its running sum is not finite: a NaN or an
    infinity anywhere (a geometric mean's -inf included, which its floor makes finite) raises the
    error that add() raises, for the first such measure, and nothing is added."""
    definitions = [_mean_definition(a) for a in ("mean", "gmean", "mean", "sum", "gmean")]
    values = [np.linspace(0.1, 0.9, 50) for _ in definitions]
    values[column] = values[column].copy()
    values[column][17] = bad
    if column + 2 < len(values):  # a later measure's bad value is not the one reported
        values[column + 2] = values[column + 2].copy()
        values[column + 2][3] = np.nan
    alone = Summary(definitions[column])
    with pytest.raises(MeasureError) as expected:
        alone.add(values[column])
    together = [Summary(d) for d in definitions]
    with pytest.raises(MeasureError) as raised:
        Summary.add_all(together, values, [None] * len(values))
    assert str(raised.value) == str(expected.value)
    assert [s.count for s in together] == [0] * len(definitions)


def test_a_count_that_is_not_a_whole_number_is_a_bug_reported_as_such() -> None:
    count = _mean_definition("sum")
    assert count.integer
    with pytest.raises(MeasureError, match="is a count, but some value is not a whole number"):
        Summary(count).add(np.array([1.0, 2.5]))


@pytest.mark.parametrize("seed", range(3))
def test_weights_and_shares_made_block_by_block_equal_the_whole_batch_s(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a note or report asks for after the summaries (GAUC's and AUC's weights, the queries left
    out, Judged@k) is computed block by block (per_query_in_blocks): the same bits as on the whole batch."""
    from retrieval_eval.analysis.unjudged import judged_at
    from retrieval_eval.measures import parse
    from retrieval_eval.measures.registry import summary_weights

    whole = _evaluator(seed)
    expected = {m: summary_weights(whole._batch, parse(m)) for m in ("GAUC", "AUC", "GAUC(weight='impressions')")}
    judged = {k: judged_at(whole, parse(f"P@{k}")) for k in (1, 5, 20)}
    _tiny_blocks(monkeypatch)
    blocked = _evaluator(seed)
    assert len(blocked._batch.query_blocks(evaluator_module.QUERIES_PER_BLOCK)) > 5
    for measure, weights in expected.items():
        assert weights is not None
        assert blocked.summary_weights(measure).tobytes() == weights.tobytes(), measure
        assert blocked.left_out(measure) == [blocked.query_ids[i] for i in np.flatnonzero(weights == 0)]
    assert blocked.summary_weights("AP") is None and blocked.left_out("AP") == []
    assert {k: judged_at(blocked, parse(f"P@{k}")) for k in judged} == judged


def test_the_query_lists_name_the_queries_at_their_positions() -> None:
    """without_relevant and only_unjudged, found as positions and then made into text, name the
    queries the qrels themselves say (the data's own lines are the oracle)."""
    qrels, _ = _data(4)  # (a seed with queries of negative judgments only)
    values: dict[str, list[int]] = {}
    for line in qrels.splitlines():
        query, _, _, value = line.split()
        values.setdefault(query, []).append(int(value))
    results = _evaluator(4, rel=2)
    ids = results.query_ids
    assert results.without_relevant == [q for q in ids if not any(v >= 2 for v in values.get(q, []))]
    assert results.only_unjudged == [q for q in ids if values.get(q) and all(v < 0 for v in values[q])]
    assert results.only_unjudged and len(results.without_relevant) > len(results.only_unjudged)
