"""The C/W/L family (SDCG, NERR8-11, INST, INSQ, BPM), Compat and Accuracy: by hand, and against
ir_measures 0.4.3's own providers (``cwl_eval``, which runs cwl-eval; ``compat``; ``accuracy``).

Hand-computed cases apply the published formulas to tiny rankings (ties, graded and negative
judgments, unjudged documents, empty rankings, ranks past the end of a ranking). The differential
tests run the providers on seeded random data (graded 0..3 judgments, -1 judgments, tied scores,
qrels queries missing from the run or with an empty ranking, run-only queries, rankings deeper than
cwl-eval's 1000 ranks) and compare every query to 1e-9, over a grid of each measure's parameters.

The providers' inputs are arranged so that they rank as we do: our order is trec_eval's (score
descending, ties by doc_id descending), while cwl_eval and accuracy keep score ties in the run's input
order and compat breaks them by doc_id ascending. Each such convention, and every other place where a
provider differs from us, has its own test under "Pinned differences", which shows the provider's
behaviour on a tiny case next to ours.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from collections.abc import Iterator

import numpy as np
import pytest
import reference
from strategies import random_dataset

import retrieval_eval.measures.cwl  # registers the C/W/L measures
import retrieval_eval.measures.preference  # noqa: F401  (registers Compat and Accuracy)
from retrieval_eval import SetEvaluator
from retrieval_eval.measures import InvalidParameterError, Measure, parse
from retrieval_eval.measures.cwl import CWL_DEPTH, _inverse_square_sum

CWL_NAMES = ("SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ", "BPM")
#: Measures with hand-computed and oracle-checked cases here (read by test_completeness.py).
HAND_COMPUTED = {*CWL_NAMES, "Compat", "Accuracy"}
ORACLE_CHECKED = {*CWL_NAMES, "Compat", "Accuracy"}

TOL = 1e-9
D = CWL_DEPTH

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


# --------------------------------------------------------------------------------------------------
# Hand-computed cases

# q1 ranks a, b, c, d (scores 4..1): a judged 3, b judged -1 (counts as 0), c judged 1, d unjudged;
# e (judged 2) is not retrieved. q2 is judged but not in the run. q3 ties m (judged 4) and n (judged 0)
# at the same score: trec_eval's order puts n (the larger doc id) first.
QRELS: Qrels = {"q1": {"a": 3, "b": -1, "c": 1, "e": 2}, "q2": {"x": 2}, "q3": {"m": 4, "n": 0}}
RUN: Run = {"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}, "q3": {"m": 1.0, "n": 1.0}}


def cwl(gains: list[float], continuation: list[float]) -> float:
    """The C/W/L expected utility from its definition: P_i = C_1 ... C_(i-1), W_i = P_i / sum_j P_j,
    over the D = 1000 ranks of cwl-eval's user model; ``gains`` past their end are 0."""
    g = [*gains[:D], *[0.0] * (D - len(gains))]
    reach, p = [], 1.0
    for i in range(D):
        reach.append(p)
        p *= continuation[i]
    return sum(r * x for r, x in zip(reach, g)) / sum(reach)


def inst_continuation(gains: list[float], T: float) -> list[float]:
    """INST's C_i = ((i + T + T_i - 1) / (i + T + T_i))^2 with T_i = T - (gain through rank i)."""
    out, total = [], 0.0
    for i in range(1, D + 1):
        total += gains[i - 1] if i <= len(gains) else 0.0
        t_i = T - total
        out.append(((i + T + t_i - 1) / (i + T + t_i)) ** 2)
    return out


LOG3 = math.log2(3)
# q1's gains with max_rel=4: a 3/4, b 0, c 1/4, d 0.
Q1_GAINS = [0.75, 0.0, 0.25, 0.0]
INSQ_P = [(2 / (i + 1)) ** 2 for i in range(1, D + 1)]  # INSQ(T=1)'s P_i = (2T / (i - 1 + 2T))^2

CWL_HAND = [
    # SDCG@k = DCG@k / (sum of 1 / log2(i + 1) over i <= k); max_rel=3: a 1, b 0, c 1/3.
    ("SDCG(max_rel=3)@2", "q1", 1 / (1 + 1 / LOG3)),
    ("SDCG(max_rel=3)@3", "q1", (1 + (1 / 3) / 2) / (1 + 1 / LOG3 + 1 / 2)),
    # min_rel=-1: b's -1 counts as 0 and gains (0 + 1) / 4; c gains 2/4; d (unjudged) gains 0.
    ("SDCG(min_rel=-1, max_rel=3)@4", "q1",
     (1 + 0.25 / LOG3 + 0.5 / 2) / (1 + 1 / LOG3 + 1 / 2 + 1 / math.log2(5))),
    ("SDCG(max_rel=4)@1", "q3", 0.0),  # n, judged 0, comes first
    ("SDCG(max_rel=4)@2", "q3", (1 / LOG3) / (1 + 1 / LOG3)),
    ("SDCG(max_rel=3)@10", "q2", 0.0),  # not in the run
    # NERR8@k: P_1 = 1, P_2 = 1 - 3/4, P_3 = P_2 (b gains 0); utility 3/4 + P_3 * 1/4.
    ("NERR8(max_rel=4)@3", "q1", (3 / 4 + 1 / 16) / (1 + 1 / 4 + 1 / 4)),
    # @6: ranks 4..6 (two past the end of the ranking) are read with P = 1/4 * 3/4 each.
    ("NERR8(max_rel=4)@6", "q1", (3 / 4 + 1 / 16) / (1 + 1 / 4 + 1 / 4 + 3 * 3 / 16)),
    ("NERR8(max_rel=3)@5", "q1", 1.0),  # a gains 1: the reading stops at rank 1
    # NERR9@3: P_i = (1 / i) * prod (1 - g_j): 1, 1/8, 1/12.
    ("NERR9(max_rel=4)@3", "q1", (3 / 4 + (1 / 12) * (1 / 4)) / (1 + 1 / 8 + 1 / 12)),
    # NERR10(p=1/2): P = 1, 1/8, 1/16, then (1/2)^(i-1) * 3/16 from rank 4 to rank 1000.
    ("NERR10(p=0.5, max_rel=4)", "q1",
     (3 / 4 + (1 / 16) * (1 / 4)) / (1 + 1 / 8 + 1 / 16 + 3 / 16 * sum(0.5 ** (i - 1) for i in range(4, D + 1)))),
    ("NERR10(p=0.0, max_rel=4)", "q1", 0.75),  # p = 0: rank 1 only
    # NERR11(T=1): P_i = (2 / (i + 1))^2 * prod (1 - g_j).
    ("NERR11(max_rel=4)", "q1",
     (3 / 4 + INSQ_P[2] * (1 / 4) * (1 / 4))
     / (1 + INSQ_P[1] / 4 + INSQ_P[2] / 4 + sum(INSQ_P[i] * 3 / 16 for i in range(3, D)))),
    # INSQ(T=1): gain-independent P_i = (2 / (i + 1))^2 over all 1000 ranks.
    ("INSQ(max_rel=4)", "q1", (3 / 4 + INSQ_P[2] / 4) / sum(INSQ_P)),
    ("INSQ(T=2.5, max_rel=4)", "q1",
     (3 / 4 + (5 / 7) ** 2 / 4) / sum((5 / (i + 4)) ** 2 for i in range(1, D + 1))),
    ("INST(max_rel=4)", "q1", cwl(Q1_GAINS, inst_continuation(Q1_GAINS, 1.0))),
    ("INST(T=3, max_rel=4)", "q1", cwl(Q1_GAINS, inst_continuation(Q1_GAINS, 3.0))),
    # INST(T=1/2) with a first document of gain 1: C_1 = ((1 + 1 - 1 - 1) / 1)^2 = 0, rank 1 only.
    ("INST(T=0.5, max_rel=3)", "q1", 1.0),
    ("INST(max_rel=3)", "q2", 0.0),
    # BPM: read until the gain reaches T or k documents; q1 with max_rel=4 reaches 1 at rank 3.
    ("BPM(max_rel=4)@10", "q1", 1.0 / 3),
    ("BPM(max_rel=4)@2", "q1", 0.75 / 2),
    ("BPM(T=2, max_rel=4)@10", "q1", 1.0 / 10),  # never reached: ten ranks read, six past the end
    ("BPM(T=0.5, max_rel=4)@10", "q1", 0.75),
    ("BPM(max_rel=4)@1", "q3", 0.0),
]


@pytest.mark.parametrize(("text", "qid", "expected"), CWL_HAND, ids=[f"{t}-{q}" for t, q, _ in CWL_HAND])
def test_cwl_by_hand(text: str, qid: str, expected: float) -> None:
    """Each value from the measure's C/W/L continuation probabilities, on q1..q3."""
    assert SetEvaluator.from_dict(QRELS, RUN).per_query(text)[qid] == pytest.approx(expected, abs=1e-13)


def test_cwl_inst_matches_the_definition_on_random_gains() -> None:
    """INST's stretch-by-stretch closed form (trigamma) equals the rank-by-rank product, for many T."""
    rng = np.random.default_rng(5)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 4)) for j in range(30)} for i in range(6)}
    run = {q: {d: float(30 - j) for j, d in enumerate(docs)} for q, docs in qrels.items()}
    results = SetEvaluator.from_dict(qrels, run)
    for T in (0.25, 0.5, 0.7, 1.0, 3.0, 40.0):
        got = results.per_query(f"INST(T={T}, max_rel=3)")
        for q, docs in qrels.items():
            gains = [docs[d] / 3 for d in reference.rank(run[q])]
            assert got[q] == pytest.approx(cwl(gains, inst_continuation(gains, T)), abs=1e-12), (T, q)


def test_cwl_ranks_after_1000_are_cut() -> None:
    """The user model stops at rank 1000: a relevant document at rank 1001 adds nothing."""
    docs = {f"d{i:04d}": float(2000 - i) for i in range(1, 1101)}
    for text in ("SDCG(max_rel=1)@2000", "NERR8(max_rel=1)@2000", "INSQ(max_rel=1)", "BPM(max_rel=1)@2000"):
        deep = SetEvaluator.from_dict({"q": {"d1001": 1}}, {"q": docs}).per_query(text)["q"]
        assert deep == 0.0, text
        at_1000 = SetEvaluator.from_dict({"q": {"d1000": 1}}, {"q": docs}).per_query(text)["q"]
        assert at_1000 > 0.0, text


def test_cwl_values_do_not_depend_on_the_other_queries() -> None:
    """Every query's value is the same in a batch as alone (the segmented running sums and products)."""
    qrels, run = random_dataset(7, 25, max_depth=30, n_docs=40)
    texts = ["SDCG(max_rel=3)@10", "NERR8(max_rel=3)@10", "NERR9(min_rel=1, max_rel=3)@20", "NERR10(max_rel=2)",
             "NERR11(T=2, max_rel=3)", "INST(min_rel=-1, max_rel=3)", "INSQ(max_rel=3)", "BPM(T=1.5, max_rel=3)@10",
             "Compat", "Compat(p=0.5, normalize=False)", "Accuracy", "Accuracy(rel=2)@5"]
    together = SetEvaluator.from_dict(qrels, run)
    for q in qrels:
        alone = SetEvaluator.from_dict({q: qrels[q]}, {q: run[q]} if q in run else {})
        for text in texts:
            assert alone.per_query(text)[q] == pytest.approx(together.per_query(text)[q], abs=1e-13), (text, q)


def _compat(overlaps: list[int], best: list[int], p: float, normalize: bool = True) -> float:
    """RBO from the overlaps o_d at depths d = 1..D (normalised by the ideal list's own overlaps)."""
    score = sum(p ** (d - 1) * o / d for d, o in enumerate(overlaps, start=1))
    if normalize:
        return score / sum(p ** (d - 1) * o / d for d, o in enumerate(best, start=1))
    return score / sum(p ** (d - 1) for d in range(1, len(overlaps) + 1))


# q1's ideal ranking: a (3), e (2), c (1); its ranking a, b, c, d: overlaps 1, 1, 2, 2 at depths 1..4.
# q4: x and y (judged 1) retrieved, z (judged 1) not: the ideal follows the ranking, x, y, z.
COMPAT_QRELS: Qrels = {**QRELS, "q4": {"x": 1, "y": 1, "z": 1}, "q5": {"u": 0}}
COMPAT_RUN: Run = {**RUN, "q4": {"y": 1.0, "x": 2.0}, "q5": {"u": 1.0, "v": 0.5}}
COMPAT_HAND = [
    ("Compat", "q1", _compat([1, 1, 2, 2], [1, 2, 3, 3], 0.95)),
    ("Compat(p=0.5)", "q1", _compat([1, 1, 2, 2], [1, 2, 3, 3], 0.5)),
    ("Compat(normalize=False)", "q1", _compat([1, 1, 2, 2], [], 0.95, normalize=False)),
    ("Compat(p=0.0)", "q1", 1.0),  # the top document agrees
    ("Compat", "q2", 0.0),  # not in the run
    ("Compat", "q3", _compat([0, 1], [1, 1], 0.95)),  # m is ideal; n, judged 0, comes first
    ("Compat(p=0.0)", "q3", 0.0),
    ("Compat(p=1.0, normalize=False)", "q3", (0 + 1 / 2) / 2),
    ("Compat", "q4", _compat([1, 2, 2], [1, 2, 3], 0.95)),
    ("Compat", "q5", 0.0),  # no judgment >= 1
]


@pytest.mark.parametrize(("text", "qid", "expected"), COMPAT_HAND, ids=[f"{t}-{q}" for t, q, _ in COMPAT_HAND])
def test_compat_by_hand(text: str, qid: str, expected: float) -> None:
    assert SetEvaluator.from_dict(COMPAT_QRELS, COMPAT_RUN).per_query(text)[qid] == pytest.approx(expected, abs=1e-15)


# q1 at rel=1: a and c relevant, b (judged -1) and d (unjudged) not; c has one non-relevant above it.
# q3 ranks n (judged 0) above m (judged 4): its one pair is misordered. q2 has no ranking.
ACCURACY_HAND = [
    ("Accuracy", {"q1": 1 - 1 / 4, "q2": 0.0, "q3": 0.0}, ["q2"]),
    ("Accuracy@2", {"q1": 1.0, "q2": 0.0, "q3": 0.0}, ["q2"]),  # a above b
    ("Accuracy@1", {"q1": 0.0, "q2": 0.0, "q3": 0.0}, ["q1", "q2", "q3"]),  # one document: no pair
    ("Accuracy(rel=2)", {"q1": 1.0, "q2": 0.0, "q3": 0.0}, ["q2"]),  # a above b, c and d
    ("Accuracy(rel=4)", {"q1": 0.0, "q2": 0.0, "q3": 0.0}, ["q1", "q2"]),  # q1 has nothing judged >= 4
]


@pytest.mark.parametrize(("text", "expected", "left_out"), ACCURACY_HAND, ids=[t for t, _, _ in ACCURACY_HAND])
def test_accuracy_by_hand(text: str, expected: dict[str, float], left_out: list[str]) -> None:
    """Per query, and the summary, which leaves out the queries without a pair to order."""
    results = SetEvaluator.from_dict(QRELS, RUN)
    values = results.per_query(text)
    assert values == pytest.approx(expected, abs=1e-15)
    assert results.left_out(text) == left_out
    kept = [values[q] for q in values if q not in left_out]
    assert results.aggregate(text) == pytest.approx(sum(kept) / len(kept) if kept else 0.0, abs=1e-15)


# --------------------------------------------------------------------------------------------------
# Parameters, strings and the trigamma helper


@pytest.mark.parametrize(("text", "message"), [
    ("SDCG@10", "needs max_rel"),
    ("NERR10", "needs max_rel"),
    ("INST(min_rel=3, max_rel=3)", "min_rel must be < max_rel"),
    ("BPM(min_rel=4, max_rel=2)@5", "min_rel must be < max_rel"),
])
def test_cwl_gain_range_is_checked(text: str, message: str) -> None:
    """max_rel has no default (ir_measures requires it), and min_rel < max_rel (the provider asserts it)."""
    with pytest.raises(InvalidParameterError, match=message):
        SetEvaluator.from_dict(QRELS, RUN).per_query(text)


@pytest.mark.parametrize("text", ["NERR10(p=1.5, max_rel=3)", "Compat(p=-0.1)", "INST(T=0, max_rel=3)",
                                  "BPM(T=-1, max_rel=3)@5", "INSQ(T='x', max_rel=3)", "SDCG(dcg='exp-log2', max_rel=3)@5",
                                  "SDCG(max_rel=3)", "NERR8(max_rel=3)", "BPM(max_rel=3)", "Compat(normalize=1)"])
def test_invalid_parameters_are_rejected(text: str) -> None:
    with pytest.raises(InvalidParameterError):
        parse(text)


def test_strings_round_trip_and_mean_the_same_to_ir_measures() -> None:
    """Our canonical strings parse back, and ir_measures reads them with the same parameters."""
    ir_measures = pytest.importorskip("ir_measures")
    texts = ["SDCG(max_rel=3)@10", "BPM(T=1000, max_rel=2)@10", "NERR10(p=0.5, max_rel=3)", "INST(T=2, min_rel=1, max_rel=3)",
             "INSQ(max_rel=1)", "NERR11(T=3, max_rel=2)", "NERR8(max_rel=3)@5", "NERR9(max_rel=3)@5",
             "Compat(p=0.8)", "Compat(normalize=False)", "Accuracy@10", "Accuracy(rel=2)", "Accuracy"]
    for text in texts:
        mine = parse(text)
        assert parse(str(mine)) == mine
        theirs = ir_measures.parse_measure(str(mine))
        assert theirs.NAME == mine.name
        for name, value in mine.params:
            assert theirs[("cutoff" if name == mine.definition.cutoff else name)] == value, text


@pytest.mark.parametrize("length", [0, 1, 2, 5, 19, 20, 21, 100, 999])
def test_inverse_square_sums(length: int) -> None:
    """INST's stretch sums, sum of 1 / (y + n)^2 over n < length, against math.fsum of the terms."""
    starts = np.concatenate((np.linspace(0.01, 50, 60), np.geomspace(50, 1e7, 20)))
    got = _inverse_square_sum(starts, np.full(len(starts), float(length)))
    expected = [math.fsum(1 / (y + n) ** 2 for n in range(length)) for y in starts]
    assert np.allclose(got, expected, rtol=1e-14, atol=0)


def test_inverse_square_sums_to_infinity_are_trigamma() -> None:
    """Unbounded stretches give psi_1: pi^2 / 6 at 1, pi^2 / 2 at 1/2, and scipy's polygamma(1, x)."""
    far = np.array([1e30])  # past 1e30 the terms add nothing a double can hold
    assert _inverse_square_sum(np.array([1.0]), far)[0] == pytest.approx(math.pi**2 / 6, rel=1e-15)
    assert _inverse_square_sum(np.array([0.5]), far)[0] == pytest.approx(math.pi**2 / 2, rel=1e-15)
    special = pytest.importorskip("scipy.special")
    x = np.concatenate((np.linspace(0.01, 50, 400), np.geomspace(50, 1e7, 50)))
    assert np.allclose(_inverse_square_sum(x, np.full(len(x), 1e30)), special.polygamma(1, x), rtol=1e-14, atol=0)


# --------------------------------------------------------------------------------------------------
# Differential tests against ir_measures' providers


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Silence a logger for the block (the cwl_eval provider warns about the observed relevance range)."""
    logger = logging.getLogger(name)
    disabled = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = disabled


def _deep_dataset(seed: int) -> tuple[Qrels, Run]:
    """Queries ranked 900..1300 deep: cwl-eval's 1000-rank cut in play. Half are judged throughout on
    0..3; half sparsely and low (-1..1), so that the chance of reading on stays far from 0 down to
    rank 1000 and past it (NERR8, NERR9 at cutoffs above 1000)."""
    rng = np.random.default_rng(seed)
    qrels: Qrels = {}
    run: Run = {}
    for q in range(6):
        n = int(rng.integers(900, 1300))
        docs = [f"d{i}" for i in range(n)]
        if q % 2:
            qrels[f"deep{q}"] = {d: int(rng.integers(-1, 2)) for d in docs if rng.random() < 0.02}
        else:
            qrels[f"deep{q}"] = {d: int(rng.integers(-1, 4)) for d in docs if rng.random() < 0.3}
        run[f"deep{q}"] = {d: float(rng.integers(0, 50)) for d in docs}
    return qrels, run


#: Seeded datasets: graded 0..3, -1 judgments, ties; ``sparse`` has many missing, empty and R = 0
#: queries; ``continuous`` has mostly distinct scores, negative ones too; ``deep`` rankings past 1000.
DATASETS = {
    "tied": lambda: random_dataset(41, 40, max_depth=40, n_docs=50),
    "sparse": lambda: random_dataset(42, 40, max_depth=12, n_docs=15, level_weights=(0.5, 0.2, 0.15, 0.15),
                                     missing_rate=0.15, empty_run_rate=0.15, no_relevant_rate=0.25, negative_rate=0.2),
    "continuous": lambda: random_dataset(43, 40, max_depth=30, n_docs=30, score_values=None),
    "deep": lambda: _deep_dataset(44),
}


@functools.cache
def dataset(name: str) -> tuple[Qrels, Run]:
    return DATASETS[name]()


@functools.cache
def ours(name: str) -> SetEvaluator:
    return SetEvaluator.from_dict(*dataset(name))


def in_our_order(run: Run) -> Run:
    """The run with each query's documents listed in trec_eval's order (a stable sort keeps it)."""
    return {q: {d: docs[d] for d in reference.rank(docs)} for q, docs in run.items()}


def ir_measure(measure: Measure) -> object:
    """ir_measures' measure object for ours (built by call: its string parser rejects negative numbers)."""
    ir_measures = pytest.importorskip("ir_measures")
    params = {("cutoff" if name == measure.definition.cutoff else name): value for name, value in measure.params}
    return ir_measures.measures.registry[measure.name](**params)


GAIN_RANGES = [(0, 3), (1, 3), (-1, 2), (0, 1)]
CUTOFFS = (1, 5, 20, 1200)
#: T values: BPM compares a running gain with T, and every T here is either reached exactly by
#: float sums (1) or is never within an ulp of a reachable sum (x.5, 1000), see test_bpm_reaches_T_exactly.
GOALS = (0.5, 1.0, 2.5, 1000.0)


def cwl_cases() -> list[str]:
    cases = []
    for lo, hi in GAIN_RANGES:
        gains = f"min_rel={lo}, max_rel={hi}"
        for k in CUTOFFS:
            cases += [f"SDCG({gains})@{k}", f"NERR8({gains})@{k}", f"NERR9({gains})@{k}"]
            cases += [f"BPM(T={t}, {gains})@{k}" for t in GOALS]
        cases += [f"NERR10(p={p}, {gains})" for p in (0.0, 0.5, 0.9, 1.0)]
        cases += [f"{name}(T={t}, {gains})" for name in ("NERR11", "INST", "INSQ") for t in (0.25, *GOALS)]
    return cases


@functools.cache
def cwl_theirs(data: str) -> dict[Measure, dict[str, float]]:
    """The cwl_eval provider's values of every case, per query, with the run in our tie order."""
    pytest.importorskip("cwl", reason="cwl-eval is not installed: ir_measures' cwl_eval provider cannot run")
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = dataset(data)
    measures = {ir_measure(parse(text)): parse(text) for text in cwl_cases()}
    provider = ir_measures.providers.registry["cwl_eval"]
    out: dict[Measure, dict[str, float]] = {m: {} for m in measures.values()}
    with _quiet("ir_measures.cwl_eval"):
        for metric in provider.evaluator(list(measures), qrels).iter_calc(in_our_order(run)):
            values = out[measures[metric.measure]]
            assert metric.query_id not in values
            values[metric.query_id] = float(metric.value)
    return out


@pytest.mark.parametrize("name", CWL_NAMES)
@pytest.mark.parametrize("data", sorted(DATASETS))
def test_cwl_matches_the_cwl_eval_provider(data: str, name: str) -> None:
    """Every query of every parameter combination of the measure equals cwl-eval's value to 1e-9."""
    qrels, _ = dataset(data)
    theirs = cwl_theirs(data)
    problems = []
    checked = 0
    for measure, expected in theirs.items():
        if measure.name != name:
            continue
        assert set(expected) == set(qrels), measure  # qrels queries; missing ones filled with 0
        got = ours(data).per_query(measure)
        for qid, value in expected.items():
            checked += 1
            if not abs(got[qid] - value) <= TOL:
                problems.append(f"{measure} q={qid}: ours {got[qid]!r}, cwl-eval {value!r}")
        mean = sum(expected.values()) / len(expected)
        assert ours(data).aggregate(measure) == pytest.approx(mean, abs=TOL), measure
    assert checked > 0
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems[:20])


def compat_inputs(data: str) -> tuple[Qrels, Run]:
    """The dataset as the compat provider must see it to rank as we do.

    Doc ids are renamed so that ascending new ids are descending old ones (its tie rule is doc_id
    ascending, ours descending); each query's judgments are listed retrieved ones first, in rank
    order (its ideal ranking keeps equal (relevance, score) documents in qrels order); scores are
    shifted to be > 0 (it scores unretrieved documents 0.0 in the ideal ranking); and empty rankings
    are left out (it divides by zero on an empty ranking of a query with no judgment >= 1), so they
    get its default, 0.
    """
    qrels, run = dataset(data)
    ids = sorted({d for docs in (*qrels.values(), *run.values()) for d in docs}, key=lambda d: d.encode(), reverse=True)
    new = {d: f"x{i:07d}" for i, d in enumerate(ids)}
    shift = 1.0 - min((s for docs in run.values() for s in docs.values()), default=0.0)
    ranked = {q: reference.rank(docs) for q, docs in run.items()}
    their_qrels = {}
    for q, judged in qrels.items():
        order = [d for d in ranked.get(q, []) if d in judged] + [d for d in judged if d not in run.get(q, {})]
        their_qrels[q] = {new[d]: judged[d] for d in order}
    their_run = {q: {new[d]: s + shift for d, s in docs.items()} for q, docs in run.items() if docs}
    return their_qrels, their_run


COMPAT_CASES = [f"Compat(p={p}, normalize={n})" for p in (0.0, 0.5, 0.8, 0.95, 1.0) for n in (True, False)]


@pytest.mark.parametrize("data", sorted(DATASETS))
def test_compat_matches_the_compat_provider(data: str) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels, _ = dataset(data)
    their_qrels, their_run = compat_inputs(data)
    provider = ir_measures.providers.registry["compat"]
    measures = {ir_measure(parse(text)): parse(text) for text in COMPAT_CASES}
    expected: dict[Measure, dict[str, float]] = {m: {} for m in measures.values()}
    for metric in provider.evaluator(list(measures), their_qrels).iter_calc(their_run):
        expected[measures[metric.measure]][metric.query_id] = float(metric.value)
    problems = []
    for measure, values in expected.items():
        assert set(values) == set(qrels)
        got = ours(data).per_query(measure)
        problems += [f"{measure} q={q}: ours {got[q]!r}, compat {v!r}" for q, v in values.items() if abs(got[q] - v) > TOL]
        assert ours(data).aggregate(measure) == pytest.approx(sum(values.values()) / len(values), abs=TOL)
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems[:20])


ACCURACY_CASES = [f"Accuracy(rel={rel})" + (f"@{k}" if k else "") for rel in (1, 2, 3) for k in (None, 1, 3, 5, 10, 20)]


@pytest.mark.parametrize("data", sorted(DATASETS))
def test_accuracy_matches_the_accuracy_provider(data: str) -> None:
    """Query by query (the provider raises ZeroDivisionError for a query whose top k holds no non-relevant
    document, and reports nothing for one without a relevant document): where it reports a value, ours is
    equal; where it raises or reports nothing, ours is 0 and left out of the summary."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = dataset(data)
    ordered = in_our_order(run)
    provider = ir_measures.providers.registry["accuracy"]
    outcomes = {"value": 0, "raises": 0, "nothing": 0}
    for text in ACCURACY_CASES:
        measure = parse(text)
        evaluator = provider.evaluator([ir_measure(measure)], qrels)
        got = ours(data).per_query(measure)
        left_out = set(ours(data).left_out(measure))
        reported = []
        for qid in qrels:
            try:
                values = [float(m.value) for m in evaluator.iter_calc({qid: ordered[qid]} if qid in ordered else {})]
            except ZeroDivisionError:
                outcomes["raises"] += 1
                assert got[qid] == 0.0 and qid in left_out, (text, qid)
                continue
            if not values:
                outcomes["nothing"] += 1
                assert got[qid] == 0.0 and qid in left_out, (text, qid)
                continue
            outcomes["value"] += 1
            assert abs(got[qid] - values[0]) <= TOL and qid not in left_out, (text, qid, got[qid], values)
            reported.append(values[0])
        expected = sum(reported) / len(reported) if reported else 0.0
        assert ours(data).aggregate(measure) == pytest.approx(expected, abs=TOL), text
    assert outcomes["value"] > 0 and outcomes["nothing"] > 0


# --------------------------------------------------------------------------------------------------
# Pinned differences: each provider convention we do not share, on a tiny case


def _provider(name: str) -> object:
    ir_measures = pytest.importorskip("ir_measures")
    if name == "cwl_eval":
        pytest.importorskip("cwl", reason="cwl-eval is not installed: ir_measures' cwl_eval provider cannot run")
    return ir_measures.providers.registry[name]


def _their(provider: str, text: str, qrels: Qrels, run: Run) -> dict[str, float]:
    evaluator = _provider(provider).evaluator([ir_measure(parse(text))], qrels)  # type: ignore[attr-defined]
    with _quiet("ir_measures.cwl_eval"):
        return {m.query_id: float(m.value) for m in evaluator.iter_calc(run)}


TIED_QRELS: Qrels = {"q": {"m": 3, "n": 0}}


def test_cwl_provider_breaks_ties_by_input_order() -> None:
    """m (judged 3) and n (judged 0) tie: cwl_eval ranks them as the run lists them, we rank n first
    (doc_id descending), so SDCG@1 is 1 for the provider with m listed first and 0 for us."""
    m_first: Run = {"q": {"m": 1.0, "n": 1.0}}
    n_first: Run = {"q": {"n": 1.0, "m": 1.0}}
    text = "SDCG(max_rel=3)@1"
    assert _their("cwl_eval", text, TIED_QRELS, m_first) == {"q": 1.0}
    assert _their("cwl_eval", text, TIED_QRELS, n_first) == {"q": 0.0}
    assert SetEvaluator.from_dict(TIED_QRELS, m_first).per_query(text) == {"q": 0.0}
    assert SetEvaluator.from_dict(TIED_QRELS, n_first).per_query(text) == {"q": 0.0}


def test_accuracy_provider_breaks_ties_by_input_order() -> None:
    """Same tie, and one more non-relevant document below: the provider's value follows the input order."""
    qrels: Qrels = {"q": {"m": 3, "n": 0, "o": 0}}
    m_first: Run = {"q": {"m": 1.0, "n": 1.0, "o": 0.0}}
    assert _their("accuracy", "Accuracy", qrels, m_first) == {"q": 1.0}  # m above n and o
    assert SetEvaluator.from_dict(qrels, m_first).per_query("Accuracy") == {"q": 0.5}  # n, m, o
    assert _their("accuracy", "Accuracy", qrels, in_our_order(m_first)) == {"q": 0.5}


def test_compat_provider_breaks_ties_by_doc_id_ascending() -> None:
    """Tied m (judged 3) and n (judged 0): compat ranks m first (doc_id ascending), we rank n first."""
    run: Run = {"q": {"m": 1.0, "n": 1.0}}
    assert _their("compat", "Compat(p=0.0)", TIED_QRELS, run) == {"q": 1.0}
    assert SetEvaluator.from_dict(TIED_QRELS, run).per_query("Compat(p=0.0)") == {"q": 0.0}


def test_compat_ideal_ranking_with_non_positive_scores() -> None:
    """The provider sorts the ideal ranking's equal-relevance documents by run score, an unretrieved one
    counting 0.0: with negative scores (log-probabilities, say) the unretrieved z goes above the
    retrieved x. We keep retrieved documents first, in rank order, whatever the scores."""
    qrels: Qrels = {"q": {"x": 1, "z": 1}}
    negative: Run = {"q": {"x": -1.0}}
    positive: Run = {"q": {"x": 1.0}}
    # Ideal z, x (provider, negative): o = 0, 1 over depth 2. Ideal x, z (ours; provider, positive): o = 1, 1.
    assert _their("compat", "Compat(p=0.5)", qrels, negative) == {"q": pytest.approx((0.5 / 2) / (1 + 0.5 * 2 / 2))}
    assert _their("compat", "Compat(p=0.5)", qrels, positive) == {"q": pytest.approx((1 + 0.5 / 2) / (1 + 0.5))}
    for run in (negative, positive):
        assert SetEvaluator.from_dict(qrels, run).per_query("Compat(p=0.5)") == {"q": pytest.approx((1 + 0.5 / 2) / 1.5)}


def test_compat_provider_divides_by_zero_on_an_empty_query() -> None:
    """An empty ranking for a query without a judgment >= 1: the provider's RBO is 0 / 0 (an empty sum
    of weights); ours is 0, the value it gives every query not in the run."""
    qrels: Qrels = {"q": {"a": 0}}
    with pytest.raises(ZeroDivisionError):
        _their("compat", "Compat", qrels, {"q": {}})
    assert _their("compat", "Compat", qrels, {}) == {"q": 0.0}
    assert SetEvaluator.from_dict(qrels, {"q": {}}).per_query("Compat") == {"q": 0.0}


def test_accuracy_provider_divides_by_zero_without_a_non_relevant_document() -> None:
    """A top k made only of relevant documents has no pair to order: the provider raises, we give 0 and
    leave the query out of the summary (as GAUC leaves out single-class queries)."""
    qrels: Qrels = {"q": {"a": 1, "b": 0}, "r": {"a": 1, "b": 0}}
    run: Run = {"q": {"a": 2.0, "b": 1.0}, "r": {"b": 2.0, "a": 1.0}}
    with pytest.raises(ZeroDivisionError):
        _their("accuracy", "Accuracy@1", qrels, {"q": run["q"]})
    assert _their("accuracy", "Accuracy@1", qrels, {"r": run["r"]}) == {}  # no relevant document: no value
    results = SetEvaluator.from_dict(qrels, run)
    assert results.per_query("Accuracy@1") == {"q": 0.0, "r": 0.0}
    assert results.left_out("Accuracy@1") == ["q", "r"]
    assert (results.per_query("Accuracy"), results.aggregate("Accuracy")) == ({"q": 1.0, "r": 0.0}, 0.5)


def test_accuracy_rel_0_counts_unjudged_documents_in_the_provider() -> None:
    """At rel=0 the provider reads a missing judgment as 0 >= 0, so the unjudged u is relevant; for us
    a document is relevant only when judged >= rel, so u is not (and -1 is not relevant for either)."""
    qrels: Qrels = {"q": {"a": 0, "b": -1}}
    run: Run = {"q": {"u": 3.0, "b": 2.0, "a": 1.0}}
    # Provider: u (relevant) above b, a (relevant) below b: 1 - (0 + 1) / (1 * 2) = 0.5. Ours: 0.
    assert _their("accuracy", "Accuracy(rel=0)", qrels, run) == {"q": 0.5}
    assert SetEvaluator.from_dict(qrels, run).per_query("Accuracy(rel=0)") == {"q": 0.0}


def test_bpm_reaches_T_exactly() -> None:
    """Six documents judged 1 of 3 gain 1/3 each: they reach T = 2 exactly at rank 6, where we stop.
    cwl-eval's running float sum there is 1.9999999999999998 < 2, so it reads on to k = 10."""
    qrels: Qrels = {"q": {f"d{i}": 1 for i in range(6)}}
    run: Run = {"q": {f"d{i}": float(10 - i) for i in range(6)}}
    text = "BPM(T=2, max_rel=3)@10"
    assert sum([1 / 3] * 6) < 2
    assert _their("cwl_eval", text, qrels, run) == {"q": pytest.approx(2 / 10, abs=1e-15)}
    assert SetEvaluator.from_dict(qrels, run).per_query(text) == {"q": pytest.approx(2 / 6, abs=1e-15)}
