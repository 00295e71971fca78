"""Relevance grades that are not integers (issue 31, section 3): 2.5 from an LLM judge's mean.

The rule: a grade may be any finite float. A column whose grades are all integral stays int64 (so
integer qrels give the same arrays, and the same outputs, as before); a column with a grade such as
2.5 is float64, from the reader to the kernels. Gain measures take the grade as the gain; binary
measures take ``grade >= rel``.

Oracles, each independent of this package's code:

* every measure, on float64 columns of integral grades, gives exactly (to the bit) what it gives on
  the int64 column of the same grades: the float path of every kernel, checked by the int path;
* binary measures on float grades equal pytrec_eval (trec_eval 9) on the qrels binarised at ``rel``;
* nDCG on float grades equals trectools' ``get_ndcg(trec_eval=True)`` (whole-qrels ideal list) and
  scikit-learn's ``ndcg_score``/``dcg_score`` (on rankings that hold every judged document);
* Compat equals ir_measures' own compat provider, the C/W/L family equals cwl-eval (through
  ir_measures), both of which take float grades;
* hand-computed cases (ERR, RBP, relstring, exp-log2 nDCG), and the property that scaling every
  grade by c > 0 scales DCG by c and leaves nDCG unchanged.

pytrec_eval refuses float qrels ("Expected relevance to be integer": ``test_pytrec_eval_refuses_float_grades``),
and ranx 0.3.21 reads 2.5 as 2 (its nDCG of float qrels is that of the truncated grades; not tested
here, as importing ranx compiles its kernels for 20 s): neither is an oracle of float grades.
"""

from __future__ import annotations

import io
import math
import warnings
from pathlib import Path

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_eval import Document, Judgment, RetrievalEvaluator, SetEvaluator
from retrieval_eval.cli import main
from retrieval_eval.io.dicts import columns_from_dicts
from retrieval_eval.io.formats import read_qrels_columns
from retrieval_eval.io.records import qrels_from_records
from retrieval_eval.measures import REGISTRY, Measure, compute, compute_text
from retrieval_eval.model import InputFormatError, TrecFormatError

Qrels = dict[str, dict[str, float]]
Run = dict[str, dict[str, float]]

# ------------------------------------------------------------------------------------------ cases

#: Float grades, with a negative one (pooled, not judged) and a 0.
FLOAT_QRELS: Qrels = {"q1": {"a": 2.5, "b": 0.5, "c": 1.0, "d": 0.0, "u": -0.5}, "q2": {"x": 1.7, "y": 3.2, "z": 0.0}}
FLOAT_RUN: Run = {"q1": {"a": 4.0, "b": 3.0, "d": 2.0, "u": 1.5, "e": 1.0}, "q2": {"y": 2.0, "x": 1.0, "w": 0.5}}


def _random_case(rng: np.random.Generator, n_queries: int, grades: np.ndarray) -> tuple[Qrels, Run]:
    """Qrels with grades drawn from ``grades`` (negatives: pooled, not judged) and a run with distinct
    scores, judged and unjudged documents, queries without relevant documents and an empty ranking."""
    qrels: Qrels = {}
    run: Run = {}
    for q in range(n_queries):
        docs = [f"d{d}" for d in range(int(rng.integers(1, 14)))]
        judged = docs[: int(rng.integers(1, len(docs) + 1))]
        qrels[f"q{q}"] = {doc: float(rng.choice(grades)) for doc in judged}
        if q % 7 == 3:
            continue  # judged, not in the run: an empty ranking
        shown = [doc for doc in docs if rng.random() < 0.8] + [f"n{k}" for k in range(int(rng.integers(0, 4)))]
        scores = rng.permutation(len(shown)) + 1.0  # distinct: no tie order to argue about
        run[f"q{q}"] = dict(zip(shown, scores.tolist()))
    return qrels, run


def _evaluator(qrels: Qrels, run: Run, rel: int = 1, *, float_column: bool = False) -> SetEvaluator:
    """The evaluation of dicts; with ``float_column``, the qrels' grades handed to the engine as a float64
    column even when every one is integral (the readers would make that column int64)."""
    qrels_columns, run_columns = columns_from_dicts(qrels, run)
    if float_column:
        qrels_columns = attrs.evolve(qrels_columns, relevance=qrels_columns.relevance.astype(np.float64))
    return SetEvaluator.from_columns(qrels_columns, run_columns, rel=rel)


def _every_measure() -> list[Measure]:
    """Every registered measure that needs no subtopic column or preferences, with a cutoff when it takes or needs one,
    ``max_rel`` where the C/W/L family requires it, at two relevance levels where it has one."""
    out = []
    for definition in REGISTRY.values():
        if definition.subtopics:
            continue  # the diversity measures: test_diversity_measures_take_float_grades_per_subtopic
        if definition.preferences:
            continue  # prefs_*: their rel_levels are read as numbers already (tests/measures/test_prefs.py)
        cutoff = definition.cutoff
        value = 0.5 if cutoff is not None and definition.params[cutoff].kind is float else 5  # (IPrec's recall)
        measure = definition() if cutoff is None else definition(**{cutoff: value})
        if "max_rel" in definition.params and measure["max_rel"] is None:
            measure = measure(max_rel=3)
        out.append(measure)
        if "rel" in definition.params and definition.params["rel"].default is not None:
            out.append(measure(rel=2))
    return out


# ------------------------------------------------------------- integral float grades = int grades


@pytest.mark.parametrize("seed", range(2))
def test_integral_grades_in_a_float_column_give_every_measure_to_the_bit(seed: int) -> None:
    """The float path of every kernel (float64 labels, the float-grade branches) gives exactly what the
    int path gives when the grades are integers: nothing the float path does is an approximation."""
    qrels, run = _random_case(np.random.default_rng(seed), 30, np.array([-1, 0, 0, 1, 1, 2, 3, 4]))
    ints, floats = _evaluator(qrels, run), _evaluator(qrels, run, float_column=True)
    assert ints._batch.labels.dtype == np.int64 and floats._batch.labels.dtype == np.float64
    for measure in _every_measure():
        if measure.definition.text:
            assert compute_text(floats._batch, measure) == compute_text(ints._batch, measure), measure
            continue
        assert compute(floats._batch, measure).tolist() == compute(ints._batch, measure).tolist(), measure


def test_diversity_measures_take_float_grades_per_subtopic(tmp_path: Path) -> None:
    """Per subtopic a judgment is relevant at grade >= rel (ndeval's binary model): subtopic grades 1.5
    and 0.5 give, at rel=1, what the grades 1 and 0 give."""
    lines = ["q1 1 a {}", "q1 2 a 0", "q1 1 b 0", "q1 2 b {}", "q1 2 c {}", "q2 1 x {}", "q2 2 y 0"]
    run = "".join(f"{q} Q0 {d} {r} {10 - r} r\n" for r, (q, d) in enumerate(
        [("q1", "b"), ("q1", "a"), ("q1", "c"), ("q2", "y"), ("q2", "x")], start=1))
    (tmp_path / "run").write_text(run)
    (tmp_path / "floats").write_text("\n".join(lines).format(1.5, 2.5, 0.5, 1.5) + "\n")
    (tmp_path / "ints").write_text("\n".join(lines).format(1, 2, 0, 1) + "\n")
    floats = SetEvaluator.from_trec(tmp_path / "floats", tmp_path / "run", subtopics=True)
    ints = SetEvaluator.from_trec(tmp_path / "ints", tmp_path / "run", subtopics=True)
    assert floats._batch.subtopics is not None and floats._batch.subtopics.relevance.dtype == np.float64
    for name in ("alpha_nDCG@5", "ERR_IA@5", "NRBP", "P_IA@5", "StRecall@5", "AP_IA"):
        assert floats.per_query(name) == ints.per_query(name), name
    assert floats.per_query("StRecall@5")["q1"] == 1.0  # both subtopics covered (c is 0.5: not relevant)


# ---------------------------------------------------------------------------- binary measures


@st.composite
def _float_cases(draw: st.DrawFn) -> tuple[Qrels, Run]:
    """A few queries of float grades in [-1, 4] (quarters: exact in binary), distinct scores.

    Each query has a grade >= 0, as in strategies.py: trec_eval leaves a query of negative judgments
    only undefined, and pytrec_eval (Rprec with bpref) can crash the process on one."""
    qrels: Qrels = {}
    run: Run = {}
    for q in range(draw(st.integers(1, 4))):
        docs = [f"d{d}" for d in range(draw(st.integers(1, 10)))]
        grades = [draw(st.integers(-4, 16)) / 4 for _ in docs[: draw(st.integers(1, len(docs)))]]
        grades[0] = max(grades[0], 0.0)
        qrels[f"q{q}"] = dict(zip(docs, grades))
        shown = draw(st.permutations(docs + ["n1", "n2"]))[: draw(st.integers(0, len(docs) + 2))]
        run[f"q{q}"] = {doc: float(len(shown) - i) for i, doc in enumerate(shown)}
    return qrels, run


BINARY = ("P@5", "R@5", "AP", "RR", "Rprec", "Bpref", "NumRelRet", "NumRel", "SetP", "SetF", "Success@5", "infAP")


@given(_float_cases(), st.sampled_from([1, 2, 3]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_binary_measures_are_trec_evals_on_the_qrels_binarised_at_rel(case: tuple[Qrels, Run], rel: int) -> None:
    """A binary measure sees only whether grade >= rel: on float grades it is pytrec_eval's value on the
    qrels binarised at rel (1 for grade >= rel, 0 below, -1 for a negative grade)."""
    import pytrec_eval

    qrels, run = case
    binary = {q: {d: (1 if g >= rel else 0) if g >= 0 else -1 for d, g in docs.items()} for q, docs in qrels.items()}
    names = {"P@5": "P_5", "R@5": "recall_5", "AP": "map", "RR": "recip_rank", "Rprec": "Rprec", "Bpref": "bpref",
             "NumRelRet": "num_rel_ret", "NumRel": "num_rel", "SetP": "set_P", "SetF": "set_F",
             "Success@5": "success_5", "infAP": "infAP"}
    evaluator = pytrec_eval.RelevanceEvaluator(binary, {"P", "recall", "map", "recip_rank", "Rprec", "bpref",
                                                        "num_rel_ret", "num_rel", "set_P", "set_F", "success",
                                                        "infAP"})
    expected = evaluator.evaluate({q: docs for q, docs in run.items() if docs})
    ours = _evaluator(qrels, run, rel)
    for measure in BINARY:
        values = ours.per_query(measure)
        for query, by_name in expected.items():
            assert values[query] == pytest.approx(by_name[names[measure]], abs=1e-12), (measure, query)


# ------------------------------------------------------------------------------ gain measures


def test_ndcg_of_float_grades_by_hand() -> None:
    """q1: a (2.5) at rank 1, b (0.5) at 2, d (0) at 3, u (-0.5: pooled, not judged) at 4, e unjudged.
    DCG = 2.5 + 0.5/log2(3); the ideal list is 2.5, 1.0, 0.5 (c is judged 1, not retrieved)."""
    ours = _evaluator(FLOAT_QRELS, FLOAT_RUN)
    dcg = 2.5 + 0.5 / math.log2(3)
    ideal = 2.5 + 1.0 / math.log2(3) + 0.5 / 2
    assert ours.per_query("DCG")["q1"] == pytest.approx(dcg, abs=1e-15)
    assert ours.per_query("nDCG")["q1"] == pytest.approx(dcg / ideal, abs=1e-15)
    exp_dcg = (2**2.5 - 1) + (2**0.5 - 1) / math.log2(3)
    exp_ideal = (2**2.5 - 1) + (2**1 - 1) / math.log2(3) + (2**0.5 - 1) / 2
    assert ours.per_query("nDCG(dcg='exp-log2')")["q1"] == pytest.approx(exp_dcg / exp_ideal, abs=1e-15)
    # q2: y (3.2) then x (1.7): the ideal order itself
    assert ours.per_query("nDCG")["q2"] == 1.0


def test_ndcg_equals_trectools_with_the_whole_qrels_ideal_list() -> None:
    """trectools takes float grades as gains, and its ideal list holds every judged document."""
    pd = pytest.importorskip("pandas")
    trectools = pytest.importorskip("trectools")
    qrels, run = _random_case(np.random.default_rng(5), 20, np.array([-1.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.75, 3.0]))
    q_rows = [(q, 0, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    r_rows = [(q, "Q0", d, rank, s, "r") for q, docs in run.items()  # (trectools reads the rank column)
              for rank, (d, s) in enumerate(sorted(docs.items(), key=lambda item: -item[1]), start=1)]
    tq, tr = trectools.TrecQrel(), trectools.TrecRun()
    tq.qrels_data = pd.DataFrame(q_rows, columns=["query", "q0", "docid", "rel"])
    tr.run_data = pd.DataFrame(r_rows, columns=["query", "q0", "docid", "rank", "score", "system"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = trectools.TrecEval(tr, tq).get_ndcg(depth=1000, per_query=True, trec_eval=True)["NDCG@1000"]
    ours = _evaluator(qrels, run).per_query("nDCG")
    for query, value in theirs.items():  # (trectools gives NaN where no grade is positive; 0 here, DESIGN §3)
        assert ours[str(query)] == (0.0 if math.isnan(value) else pytest.approx(float(value), abs=1e-12)), query
    assert any(0 < v < 1 for v in ours.values())


@pytest.mark.parametrize("k", [1, 3, 10])
def test_ndcg_and_dcg_at_k_equal_scikit_learn(k: int) -> None:
    """On rankings that hold every judged document, scikit-learn's ndcg_score and dcg_score (linear
    gains, log2 discount, ideal list of the given items) are nDCG@k and DCG@k."""
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(k)
    for _ in range(20):
        n = int(rng.integers(2, 12))
        grades = np.round(rng.uniform(0, 4, n), 3) * (rng.random(n) < 0.7)
        scores = rng.permutation(n) + 1.0
        qrels = {"q": {f"d{i}": float(g) for i, g in enumerate(grades)}}
        run = {"q": {f"d{i}": float(s) for i, s in enumerate(scores)}}
        ours = _evaluator(qrels, run)
        assert ours.per_query(f"DCG@{k}")["q"] == pytest.approx(metrics.dcg_score([grades], [scores], k=k), abs=1e-12)
        if grades.any():
            assert ours.per_query(f"nDCG@{k}")["q"] == pytest.approx(
                metrics.ndcg_score([grades], [scores], k=k), abs=1e-12)


@given(_float_cases(), st.sampled_from([0.25, 0.5, 3.0, 10.0]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_scaling_every_grade_scales_dcg_and_keeps_ndcg(case: tuple[Qrels, Run], c: float) -> None:
    """Gains are the grades: c * grade gives c * DCG, and nDCG (a ratio of two DCGs) does not move.
    c is a power of two or a small integer, and grades are quarters, so c * grade is exact."""
    qrels, run = case
    scaled = {q: {d: c * g for d, g in docs.items()} for q, docs in qrels.items()}
    base, times = _evaluator(qrels, run, float_column=True), _evaluator(scaled, run, float_column=True)
    for query, value in base.per_query("DCG").items():
        assert times.per_query("DCG")[query] == pytest.approx(c * value, rel=1e-12, abs=1e-12)
        assert times.per_query("nDCG")[query] == pytest.approx(base.per_query("nDCG")[query], rel=1e-12, abs=1e-12)
        assert times.per_query("IDCG@3")[query] == pytest.approx(c * base.per_query("IDCG@3")[query], rel=1e-12)


def test_err_uses_the_float_grade_in_its_stopping_probability() -> None:
    """R_i = (2^g - 1) / 2^4; a grade of 0.5 stops the user too (it is above 0)."""
    ours = _evaluator(FLOAT_QRELS, FLOAT_RUN).per_query("ERR")
    r1, r2 = (2**2.5 - 1) / 16, (2**0.5 - 1) / 16
    assert ours["q1"] == pytest.approx(r1 + (1 - r1) * r2 / 2, abs=1e-15)
    r1, r2 = (2**3.2 - 1) / 16, (2**1.7 - 1) / 16
    assert ours["q2"] == pytest.approx(r1 + (1 - r1) * r2 / 2, abs=1e-15)


def test_rbp_rescales_by_the_largest_grade_and_counts_grades_below_one() -> None:
    """trec_eval's rbp rescales a query's gains to [0, 1] when one is above 1: by the largest grade,
    2.5 for q1 (a -> 1, b -> 0.2); a query whose grades are within [0, 1] keeps them (0.5 -> 0.5)."""
    ours = _evaluator(FLOAT_QRELS, FLOAT_RUN).per_query("RBP(p=0.5)")
    assert ours["q1"] == pytest.approx(0.5 * (1.0 + 0.2 * 0.5), abs=1e-15)
    low = _evaluator({"q": {"a": 0.5, "b": 0.25, "c": 1.0}}, {"q": {"a": 3.0, "b": 2.0}})
    assert low.per_query("RBP(p=0.5)")["q"] == pytest.approx(0.5 * (0.5 + 0.25 * 0.5), abs=1e-15)
    # binary gains: a grade >= rel gains 1
    assert _evaluator(FLOAT_QRELS, FLOAT_RUN).per_query("RBP(p=0.5, rel=1)")["q1"] == 0.5


def test_compat_and_the_cwl_family_equal_ir_measures_own_providers() -> None:
    """ir_measures' compat provider and cwl-eval take float grades as they are."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    qrels, run = _random_case(np.random.default_rng(9), 15, np.array([-1.0, 0.0, 0.5, 1.0, 1.25, 2.5, 3.0]))
    run = {q: docs for q, docs in run.items() if docs}  # (cwl-eval and compat skip empty rankings)
    names = ["Compat(p=0.8)", "SDCG(max_rel=3)@10", "NERR8(max_rel=3)@10", "NERR10(max_rel=3)", "INSQ(max_rel=3)",
             "INST(max_rel=3)", "BPM(max_rel=3,T=1.0)@10"]
    ours = _evaluator(qrels, run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = list(ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], qrels, run))
    assert len(theirs) >= len(run) * len(names) - len(run)
    for metric in theirs:
        name = next(n for n in names if ir_measures.parse_measure(n) == metric.measure)
        assert ours.per_query(name)[metric.query_id] == pytest.approx(float(metric.value), abs=1e-9), (name, metric)


def test_relstring_shows_the_level_a_float_grade_reaches() -> None:
    ours = _evaluator({"q": {"a": 2.5, "b": 0.5, "c": 9.5, "d": -0.5, "e": 9.0}},
                      {"q": {"a": 6.0, "b": 5.0, "c": 4.0, "d": 3.0, "x": 2.0, "e": 1.0}})
    assert ours.per_query_text("RelString") == {"q": "20>.-9"}


def test_g_and_ndcg_rel_of_float_grades_by_hand() -> None:
    """One query: a (1.5) at rank 1, b (0.5) at 2; the ideal list is 1.5, 0.5."""
    ours = _evaluator({"q": {"a": 1.5, "b": 0.5}}, {"q": {"b": 1.0, "a": 2.0}})
    # G: C_1 = max(1.5, 1) = 1.5, S_1 = 1.5; C_2 = 1.5 + 1 = 2.5, S_2 = 2: terms 1.5/log2(2), 0.5/log2(2.5)
    assert ours.per_query("G")["q"] == pytest.approx((1.5 + 0.5 / math.log2(2.5)) / 2.0, abs=1e-15)
    assert ours.per_query("nDCGRel")["q"] == 1.0 and ours.per_query("nDCG")["q"] == 1.0
    swapped = _evaluator({"q": {"a": 1.5, "b": 0.5}}, {"q": {"b": 2.0, "a": 1.0}})
    dcg1, dcg2 = 0.5, 0.5 + 1.5 / math.log2(3)
    ideal1, ideal2 = 1.5, 1.5 + 0.5 / math.log2(3)
    assert swapped.per_query("nDCGRel")["q"] == pytest.approx((dcg1 / ideal1 + dcg2 / ideal2) / 2, abs=1e-15)


# ------------------------------------------------------------------------------------ readers


QRELS_TEXT = "q1 0 a 2.5\nq1 0 b 0.5\nq1 0 c 1\nq1 0 d 0\nq1 0 u -0.5\nq2 0 x 1.7\nq2 0 y 3.2\nq2 0 z 0\n"
RUN_TEXT = "".join(f"{q} Q0 {d} {r} {s} r\n" for q, docs in FLOAT_RUN.items()
                   for r, (d, s) in enumerate(docs.items(), start=1))


def test_every_reader_reads_float_grades_as_the_dicts_do(tmp_path: Path) -> None:
    """Text (TREC, 3 fields, BEIR TSV), JSON, records, Arrow, pandas, polars and Parquet: one column."""
    expected = [2.5, 0.5, 1.0, 0.0, -0.5, 1.7, 3.2, 0.0]
    rows = [line.split() for line in QRELS_TEXT.splitlines()]
    (tmp_path / "q.trec").write_text(QRELS_TEXT)
    (tmp_path / "q.three").write_text("".join(f"{q} {d} {g}\n" for q, _, d, g in rows))
    (tmp_path / "q.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, _, d, g in rows))
    (tmp_path / "q.json").write_text('{"q1": {"a": 2.5, "b": 0.5, "c": 1, "d": 0, "u": -0.5}, '
                                     '"q2": {"x": 1.7, "y": 3.2, "z": 0.0}}')
    columns = [read_qrels_columns(tmp_path / name) for name in ("q.trec", "q.three", "q.tsv", "q.json")]
    columns.append(columns_from_dicts({q: dict(docs) for q, docs in FLOAT_QRELS.items()}, {})[0])
    columns.append(qrels_from_records([type("R", (), {"query_id": q, "doc_id": d, "relevance": float(g)})()
                                       for q, _, d, g in rows]))
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                      "relevance": [float(r[3]) for r in rows]})
    import pyarrow.parquet as pq

    pq.write_table(table, tmp_path / "q.parquet", row_group_size=3)  # row groups of int, then float grades
    columns.append(read_qrels_columns(tmp_path / "q.parquet"))
    for column in columns:
        assert column.relevance.dtype == np.float64 and column.relevance.tolist() == expected, column.origin
    reference = _evaluator(FLOAT_QRELS, FLOAT_RUN).per_query("nDCG")
    assert SetEvaluator.from_arrow(table, pa.table({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]})) \
        .per_query("NumRel") == {"q1": 2.0, "q2": 2.0}
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [2.5, 0.5]})
    runs = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    assert SetEvaluator.from_dataframe(frame, runs).per_query("DCG") == {"q1": 0.5 + 2.5 / math.log2(3)}
    assert SetEvaluator.from_trec(tmp_path / "q.trec", io.StringIO(RUN_TEXT)).per_query("nDCG") == reference


def test_integral_floats_stay_an_int_column_everywhere(tmp_path: Path) -> None:
    """2.0 is the grade 2: a column of integral floats is int64, so integer qrels give what they gave."""
    (tmp_path / "q").write_text("q1 0 a 2.0\nq1 0 b 1e0\nq1 0 c -1.0\n")
    assert read_qrels_columns(tmp_path / "q").relevance.dtype == np.int64
    assert columns_from_dicts({"q": {"a": 2.0, "b": np.float32(1.0)}}, {})[0].relevance.dtype == np.int64
    assert Judgment("a", np.float64(3.0)) == Judgment("a", 3)


def test_a_float_grade_deep_in_a_long_file_makes_the_whole_column_float(tmp_path: Path) -> None:
    """The text reader parses blocks of 512 KiB apart: integer blocks, then one with 2.5, one column."""
    lines = [f"q{i % 50} 0 d{i} {i % 3}\n" for i in range(60_000)]
    lines[-2] = "q0 0 last 2.5\n"
    (tmp_path / "q").write_text("".join(lines))
    relevance = read_qrels_columns(tmp_path / "q").relevance
    assert relevance.dtype == np.float64 and relevance[-2] == 2.5 and relevance[:5].tolist() == [0, 1, 2, 0, 1]


@pytest.mark.parametrize(("text", "line", "got"), [
    ("q1 0 a 1\nq1 0 b nan\n", 2, "nan"), ("q1 0 a inf\n", 1, "inf"), ("q1 0 a 2.5\nq1 0 b -1e300\n", 2, "-1e300"),
])
def test_non_finite_grades_are_refused_with_path_and_line(tmp_path: Path, text: str, line: int, got: str) -> None:
    (tmp_path / "q").write_text(text)
    with pytest.raises(TrecFormatError, match=rf"q:{line}: relevance must be a finite number .*got '.* {got}'"):
        read_qrels_columns(tmp_path / "q")
    with pytest.raises(InputFormatError, match="must be a finite number"):
        Judgment("a", float(got) if got != "-1e300" else float("nan"))


def test_the_command_line_evaluates_float_grades(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As a user runs it: every trec_eval measure, per query, and a NaN grade as a one-line error."""
    (tmp_path / "qrels").write_text(QRELS_TEXT)
    (tmp_path / "run").write_text(RUN_TEXT)
    assert main(["evaluate", "-q", "-m", "all_trec", "-m", "nDCG@3", str(tmp_path / "qrels"), str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    values = {(line.split()[0], line.split()[1]): line.split()[2] for line in out.splitlines()}
    assert values[("relstring", "q1")] == "'200.-'"
    assert float(values[("ndcg", "q1")]) == pytest.approx(_evaluator(FLOAT_QRELS, FLOAT_RUN).per_query("nDCG")["q1"],
                                                          abs=5e-5)
    (tmp_path / "qrels").write_text(QRELS_TEXT + "q2 0 w nan\n")
    assert main(["evaluate", str(tmp_path / "qrels"), str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"retrieval-eval: error: {tmp_path / 'qrels'}:9: relevance must be a finite number")
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_the_per_query_evaluator_takes_float_judgments() -> None:
    docs = [Document(d) for d in FLOAT_RUN["q1"]]
    judgments = [Judgment(d, g) for d, g in FLOAT_QRELS["q1"].items()]
    evaluator = RetrievalEvaluator("q1", docs, judgments)
    assert evaluator.ndcg() == _evaluator(FLOAT_QRELS, FLOAT_RUN).per_query("nDCG")["q1"]
    assert evaluator.retrieved_judgments() == [2.5, 0.5, 0, -0.5, None]
    assert evaluator.judgment("c") == 1 and type(evaluator.judgment("c")) is int
    assert evaluator.relevant_missed_judgments() == [Judgment("c", 1)]
    assert evaluator.judgments()[0] == Judgment("a", 2.5)
    assert RetrievalEvaluator("q1", docs, judgments, rel=2).precision(5) == pytest.approx(1 / 5)


def test_pytrec_eval_refuses_float_grades() -> None:
    """Why pytrec_eval is no oracle here but on binarised qrels: it refuses a float grade."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    with pytest.raises(TypeError, match="integer"):
        pytrec_eval.RelevanceEvaluator({"q": {"a": 2.5}}, {"ndcg"})


def test_a_spark_partition_reads_float_grades() -> None:
    """A partition of ``spark.evaluate``'s tagged union (the task's function, no Spark session needed)."""
    pa = pytest.importorskip("pyarrow")
    pytest.importorskip("pyspark")
    from retrieval_eval.integrations import spark as rs

    rows = [(q, d, g, None, False) for q, docs in FLOAT_QRELS.items() for d, g in docs.items()]
    rows += [(q, d, None, s, True) for q, docs in FLOAT_RUN.items() for d, s in docs.items()]
    table = pa.table({name: [row[i] for row in rows]
                      for i, name in enumerate(["query_id", "doc_id", "relevance", "score", "_run"])})
    evaluate_partition = rs._evaluate_partitions(rs._split_union, ["nDCG", "P@5"], 1, {"complete": True})
    out = pa.Table.from_batches(list(evaluate_partition(iter(table.to_batches())))).to_pylist()
    values = {(row["query_id"], row["measure"]): row["value"] for row in out}
    expected = _evaluator(FLOAT_QRELS, FLOAT_RUN)
    assert values[("q1", "nDCG")] == expected.per_query("nDCG")["q1"]
    assert values[("q2", "P@5")] == expected.per_query("P@5")["q2"] == 0.4


def test_a_log_reads_float_labels_as_grades(tmp_path: Path) -> None:
    """A labelled log's labels follow the qrels' rule: 0.5 is a float grade, below the default level."""
    (tmp_path / "log.tsv").write_text("s1\ta\t0.9\t1.5\ns1\tb\t0.8\t0.5\ns1\tc\t0.1\ttrue\ns2\tx\t0.3\t0\n")
    log = SetEvaluator.from_log(tmp_path / "log.tsv")
    assert log._batch.judged_relevance.dtype == np.float64
    assert log.per_query("NumRel") == {"s1": 2.0, "s2": 0.0}
    assert log.per_query("AUC")["s1"] == 0.5  # positives a (0.9) and c (0.1) against b (0.8)
    dcg = 1.5 + 0.5 / math.log2(3) + 1.0 / 2
    assert log.per_query("nDCG")["s1"] == pytest.approx(dcg / (1.5 + 1.0 / math.log2(3) + 0.5 / 2), abs=1e-15)


def test_the_ir_measures_provider_and_write_qrels_keep_float_grades(tmp_path: Path) -> None:
    """ir_measures' pytrec_eval provider refuses float grades; ours, registered first, computes them.
    ``write_qrels`` writes a float grade as Python writes the float, and the file reads back the same."""
    ir_measures = pytest.importorskip("ir_measures")
    import retrieval_eval
    import retrieval_eval.integrations.ir_measures as provider

    provider.register()
    try:
        values = ir_measures.calc_aggregate([ir_measures.nDCG, ir_measures.P @ 5], FLOAT_QRELS, FLOAT_RUN)
    finally:
        provider.unregister()
    expected = _evaluator(FLOAT_QRELS, FLOAT_RUN)
    assert values[ir_measures.nDCG] == pytest.approx(expected.mean("nDCG"), abs=1e-15)
    assert values[ir_measures.P @ 5] == pytest.approx(expected.mean("P@5"), abs=1e-15)
    retrieval_eval.write_qrels(tmp_path / "q", FLOAT_QRELS)
    assert (tmp_path / "q").read_text().splitlines()[:2] == ["q1 0 a 2.5", "q1 0 b 0.5"]
    assert read_qrels_columns(tmp_path / "q").relevance.tolist() == [2.5, 0.5, 1.0, 0.0, -0.5, 1.7, 3.2, 0.0]


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=20))
@settings(max_examples=40, deadline=None)
def test_a_qrels_file_holds_the_grades_its_writer_wrote(grades: list[float]) -> None:
    """Any finite float survives write_qrels and the text reader exactly (Python writes the shortest
    repr that reads back as the same double), and the column is int64 iff every grade is integral."""
    import tempfile

    import retrieval_eval

    qrels = {"q": {f"d{i}": grade for i, grade in enumerate(grades)}}
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "q"
        retrieval_eval.write_qrels(path, qrels)
        relevance = read_qrels_columns(path).relevance
    assert relevance.tolist() == grades
    assert (relevance.dtype == np.int64) == all(grade.is_integer() for grade in grades)
