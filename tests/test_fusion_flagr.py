"""FLAGR's methods against pyflagr 1.0.21 (the oracle) and against cases computed by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from flagr_oracle import assert_matches, candidates, generated_runs, run_pyflagr
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.analysis.fusion import candidates_from_runs, fuse, get_method
from retrieval_eval.analysis.fusion.flagr_common import flagr_ranks
from retrieval_eval.analysis.fusion.flagr_markov import _transitions
from retrieval_eval.io.dicts import columns_from_dicts

Linear = pytest.importorskip("pyflagr.Linear")

SEEDS = (1, 2, 3)


@pytest.mark.parametrize("norm", ["borda", "rank", "simple-borda", "score", "z-score"])
@pytest.mark.parametrize("mnz", [False, True], ids=["combsum", "combmnz"])
def test_linear_methods_match_pyflagr(norm: str, mnz: bool, tmp_path: Path) -> None:
    for seed in SEEDS:
        # pyflagr gives NaN for a list of one document under score and z-score: lists of 2 and more here
        c = candidates(seed, min_depth=2)
        oracle = (Linear.CombMNZ if mnz else Linear.CombSUM)(norm=norm)
        method = get_method("flagr-combmnz" if mnz else "flagr-combsum")
        assert_matches(method(c, norm=norm, as_pyflagr=True), c, run_pyflagr(oracle, c, tmp_path))


def test_borda_and_simple_borda_match_pyflagr(tmp_path: Path) -> None:
    for seed in SEEDS:
        c = candidates(seed)
        assert_matches(get_method("flagr-borda")(c), c, run_pyflagr(Linear.BordaCount(), c, tmp_path))
        assert_matches(get_method("flagr-simple-borda")(c), c, run_pyflagr(Linear.SimpleBordaCount(), c, tmp_path))


def _by_doc(c: object, scores: np.ndarray) -> dict[str, float]:
    """One query's scores by document id (Candidates' rows follow no meaningful order)."""
    return {d.decode(): float(v) for d, v in zip(c.doc_ids.tolist(), scores.tolist())}


def _two_runs() -> tuple[object, object]:
    a = columns_from_dicts({}, {"q": {"x": 3.0, "y": 2.0, "z": 1.0}})[1]
    b = columns_from_dicts({}, {"q": {"y": 5.0, "w": -1.0}, "p": {"x": 1.0}})[1]
    return a, b


def test_borda_by_hand() -> None:
    c = candidates_from_runs(_two_runs(), names=("a", "b"))
    got = dict(zip([(q, d) for q, d in zip(c.query_ids[c.row_query()].tolist(), c.doc_ids.tolist())],
                   get_method("flagr-combsum")(c).tolist()))
    # q has N = 4 documents; a ranks x, y, z (L = 3), b ranks y, w (L = 2)
    assert got[(b"q", b"x")] == pytest.approx(4 / 4 + (4 - 2 + 1) / 8)
    assert got[(b"q", b"y")] == pytest.approx(3 / 4 + 4 / 4)
    assert got[(b"q", b"w")] == pytest.approx((4 - 3 + 1) / 8 + 3 / 4)
    # a lacks query p: its empty list still gives (N + 1) / (2 N), as in FLAGR
    assert got[(b"p", b"x")] == pytest.approx((1 - 0 + 1) / 2 + 1.0)


def test_score_normalisation_by_hand_and_pyflagrs_upside_down_one() -> None:
    c = candidates_from_runs(_two_runs(), names=("a", "b"))
    sensible = get_method("flagr-combsum")(c, norm="score")
    flipped = get_method("flagr-combsum")(c, norm="score", as_pyflagr=True)
    q = c.query_ids.tolist().index(b"q")
    q_rows = {d: i for i, d in enumerate(c.doc_ids.tolist()) if c.row_query()[i] == q}
    # a: 3, 2, 1 -> 1, 0.5, 0; b: 5, -1 -> 1, 0
    assert sensible[q_rows[b"y"]] == pytest.approx(1.5)
    assert sensible[q_rows[b"x"]] == pytest.approx(1.0)
    assert flipped[q_rows[b"y"]] == pytest.approx(0.5)
    assert flipped[q_rows[b"w"]] == pytest.approx(1.0)
    # a list of one document (b's p) has no spread: it gives 0 (pyflagr gives NaN)
    p_row = next(i for i in range(c.n_rows) if c.query_ids[c.row_query()[i]] == b"p")
    assert sensible[p_row] == 0.0


def test_combmnz_multiplies_by_the_runs_that_rank_the_document() -> None:
    c = candidates_from_runs(_two_runs())
    total = get_method("flagr-combsum")(c, norm="rank")
    mnz = get_method("flagr-combmnz")(c, norm="rank")
    np.testing.assert_allclose(mnz, total * (c.ranks > 0).sum(axis=0))


def test_unknown_flagr_normalisation_is_named() -> None:
    with pytest.raises(Exception, match="unknown FLAGR normalisation 'minmax'"):
        fuse(list(_two_runs()), "flagr-combsum", norm="minmax")


Majoritarian = pytest.importorskip("pyflagr.Majoritarian")


@pytest.mark.parametrize(("name", "oracle"), [("flagr-condorcet", "CondorcetWinners"),
                                              ("flagr-copeland", "CopelandWinners")])
def test_condorcet_and_copeland_match_pyflagr(name: str, oracle: str, tmp_path: Path) -> None:
    for seed in SEEDS:
        c = candidates(seed)
        assert_matches(get_method(name)(c), c, run_pyflagr(getattr(Majoritarian, oracle)(), c, tmp_path))


@pytest.mark.parametrize("thresholds", [(0.0, 0.75, 0.0, 0.25), (0.25, 0.5, 0.5, 0.0)])
def test_outranking_matches_pyflagr(thresholds: tuple[float, float, float, float], tmp_path: Path) -> None:
    pref, veto, conc, disc = thresholds
    oracle = Majoritarian.OutrankingApproach(preference=pref, veto=veto, concordance=conc, discordance=disc)
    for seed in SEEDS:
        c = candidates(seed)
        ours = get_method("flagr-outranking")(c, preference=pref, veto=veto, concordance=conc, discordance=disc)
        assert_matches(ours, c, run_pyflagr(oracle, c, tmp_path))


def test_condorcet_and_copeland_by_hand() -> None:
    # a: x > y > z; b: y > x; c: z only. x-y: 1-1 draw; x-z: a, b for x (b ranks x, not z), c for z: 2-1;
    # y-z: a, b for y, c for z: 2-1
    runs = [columns_from_dicts({}, {"q": s})[1] for s in ({"x": 3.0, "y": 2.0, "z": 1.0}, {"y": 2.0, "x": 1.0},
                                                          {"z": 1.0})]
    c = candidates_from_runs(runs)
    assert _by_doc(c, get_method("flagr-condorcet")(c)) == {"x": 1.0, "y": 1.0, "z": 0.0}
    assert _by_doc(c, get_method("flagr-copeland")(c)) == {"x": 1.5, "y": 1.5, "z": 0.0}


Weighted = pytest.importorskip("pyflagr.Weighted")


@pytest.mark.parametrize(("alpha", "beta"), [(0.1, 0.5), (0.4, 0.9)])
def test_preference_relations_match_pyflagr(alpha: float, beta: float, tmp_path: Path) -> None:
    oracle = Weighted.PreferenceRelationsGraph(alpha=alpha, beta=beta)
    for seed in SEEDS:
        c = candidates(seed, min_depth=2)  # pyflagr fails on a query of one document
        assert_matches(get_method("flagr-prefrel")(c, alpha=alpha, beta=beta), c, run_pyflagr(oracle, c, tmp_path))


MarkovChains = pytest.importorskip("pyflagr.MarkovChains")


@pytest.mark.parametrize("chain", ["MC1", "MC2", "MC3", "MC4", "MCT"])
def test_markov_chains_match_pyflagr(chain: str, tmp_path: Path) -> None:
    for seed in SEEDS:
        c = candidates(seed)
        for iterations in (2, 100):
            oracle = getattr(MarkovChains, chain)(eval_pts=10, ergodic_number=0.25, max_iterations=iterations)
            ours = get_method(f"flagr-{chain.lower()}")(c, ergodic_number=0.25, max_iterations=iterations,
                                                       as_pyflagr=True)
            assert_matches(ours, c, run_pyflagr(oracle, c, tmp_path))


def test_markov_chain_scores_are_the_stationary_distribution() -> None:
    c = candidates(4)
    scores = get_method("flagr-mc4")(c, max_iterations=2000)
    for start, end in zip(c.offsets[:-1], c.offsets[1:]):
        assert scores[start:end].sum() == pytest.approx(1.0)
    # numpy's eigenvector of the same matrix (independent of the power iteration)
    start, end = int(c.offsets[0]), int(c.offsets[1])
    m = end - start
    walk = _transitions(flagr_ranks(c)[:, start:end], "mc4") * 0.85 + 0.15 / m
    values, vectors = np.linalg.eig(walk.T)
    stationary = np.real(vectors[:, np.argmax(np.real(values))])
    np.testing.assert_allclose(scores[start:end], stationary / stationary.sum(), atol=1e-9)


RRA = pytest.importorskip("pyflagr.RRA")


@pytest.mark.parametrize("exact", [False, True], ids=["bonferroni", "stuart"])
def test_robust_rank_aggregation_matches_pyflagr(exact: bool, tmp_path: Path) -> None:
    for seed in SEEDS:
        c = candidates(seed, n_runs=4)
        # FLAGR sorts by rho ascending: ours is -rho
        assert_matches(get_method("flagr-rra")(c, exact=exact), c, run_pyflagr(RRA.RRA(exact=exact), c, tmp_path),
                       sign=-1.0)


def test_order_statistic_probability_is_scipys_beta_distribution() -> None:
    stats = pytest.importorskip("scipy.stats")
    from retrieval_eval.analysis.fusion.flagr_rra import binomial_tail
    x = np.linspace(0.0, 1.0, 41)
    for m in (1, 3, 7):
        for k in range(1, m + 1):
            np.testing.assert_allclose(binomial_tail(x, k, m), stats.beta.cdf(x, k, m - k + 1), atol=1e-12)


Kemeny = pytest.importorskip("pyflagr.Kemeny")


def _agreement(order: list[str], lists: dict[str, list[str]]) -> float:
    """FLAGR's objective, written out: each list's concordant pairs over its pairs, summed."""
    position = {d: i for i, d in enumerate(order)}
    total = 0.0
    for ranked in lists.values():
        pairs = [(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1:]]
        total += sum(position[a] < position[b] for a, b in pairs) / len(pairs)
    return total


def _lists(c: object, q: int) -> dict[str, list[str]]:
    start, end = int(c.offsets[q]), int(c.offsets[q + 1])
    out = {}
    for r in range(c.n_runs):
        ranks = c.ranks[r, start:end]
        if (ranks > 0).sum() >= 2:
            out[str(r)] = [c.doc_ids[start + i].decode() for i in np.argsort(ranks) if ranks[i] > 0]
    return out


def test_kemeny_reaches_pyflagrs_optimum(tmp_path: Path) -> None:
    compared = 0
    for seed in SEEDS:
        c = candidates(seed, min_depth=2, max_depth=5, pool=7)  # FLAGR tries all 7! orders
        ours = get_method("flagr-kemeny")(c)
        theirs = run_pyflagr(Kemeny.KemenyOptimal(), c, tmp_path)
        for q in range(c.n_queries):
            start, end = int(c.offsets[q]), int(c.offsets[q + 1])
            qid = c.query_ids[q].decode()
            # pyflagr's scores are m + 1 down to 2, as ours
            assert [s for _, s in theirs[qid]] == list(range(end - start + 1, 1, -1))
            if (c.depth[:, q] < 2).any():
                continue  # a run with no pair makes FLAGR's objective NaN: it keeps its first order
            mine = [c.doc_ids[start + i].decode() for i in np.argsort(-ours[start:end])]
            lists = _lists(c, q)
            assert _agreement(mine, lists) == pytest.approx(_agreement([d for d, _ in theirs[qid]], lists))
            compared += 1
    assert compared >= 5


def test_kemeny_is_the_best_of_every_permutation() -> None:
    from itertools import permutations
    c = candidates(5, min_depth=2, max_depth=6, pool=7)
    ours = get_method("flagr-kemeny")(c)
    for q in range(c.n_queries):
        start, end = int(c.offsets[q]), int(c.offsets[q + 1])
        docs, lists = [d.decode() for d in c.doc_ids[start:end]], _lists(c, q)
        best = max(_agreement(list(p), lists) for p in permutations(docs))
        mine = [docs[i] for i in np.argsort(-ours[start:end])]
        assert _agreement(mine, lists) == pytest.approx(best)


def test_kemeny_refuses_a_large_query() -> None:
    c = candidates(1)
    with pytest.raises(Exception, match=r"Kemeny-optimal aggregation is for small queries: query 'q0' has 12"):
        get_method("flagr-kemeny")(c)


@pytest.mark.parametrize(("aggregator", "dist", "w_norm"), [
    ("combsum:borda", "cosine", "minmax"), ("combmnz:score", "footrule", "z"), ("condorcet", "rho", "none"),
    ("copeland", "cosine", "z"), ("outrank", "footrule", "minmax"), ("combsum:z-score", "rho", "z"),
    ("combmnz:simple-borda", "cosine", "none"), ("combsum:rank", "footrule", "minmax")])
def test_dibra_matches_pyflagr(aggregator: str, dist: str, w_norm: str, tmp_path: Path) -> None:
    oracle = Weighted.DIBRA(aggregator=aggregator, dist=dist, w_norm=w_norm)
    for seed in SEEDS:
        c = candidates(seed, min_depth=2)  # pyflagr's z-score and score give NaN on a list of one
        ours = get_method("flagr-dibra")(c, aggregator=aggregator, dist=dist, w_norm=w_norm, as_pyflagr=True)
        assert_matches(ours, c, run_pyflagr(oracle, c, tmp_path))


def test_dibra_without_iterations_is_its_base_method() -> None:
    c = candidates(6)
    for aggregator, base in (("combsum:borda", "flagr-borda"), ("copeland", "flagr-copeland")):
        # max_iter=0: one pass, with the first weights (all 1), as the base method
        np.testing.assert_allclose(get_method("flagr-dibra")(c, aggregator=aggregator, max_iter=0),
                                   get_method(base)(c))


def test_dibra_keeps_equal_weights_equal_under_min_max() -> None:
    # one run only: its weight grows alone, min == max every time; FLAGR would divide 0 by 0
    c = candidates_from_runs([columns_from_dicts({}, {"q": {"x": 2.0, "y": 1.0}})[1]])
    scores = get_method("flagr-dibra")(c, dist="rho")
    np.testing.assert_allclose(scores, get_method("flagr-borda")(c))


def test_dibra_refuses_what_it_does_not_offer() -> None:
    c = candidates(1)
    with pytest.raises(Exception, match="unknown DIBRA distance 'tau'"):
        get_method("flagr-dibra")(c, dist="tau")
    with pytest.raises(Exception, match="unknown DIBRA aggregator 'rrf'"):
        get_method("flagr-dibra")(c, aggregator="rrf")


@pytest.mark.parametrize(("c1", "c2"), [(0.25, 0.5), (2.5, 1.5)])  # values a 32-bit float holds exactly
def test_agglomerative_matches_pyflagr(c1: float, c2: float, tmp_path: Path) -> None:
    oracle = Weighted.Agglomerative(c1=c1, c2=c2)
    for seed in SEEDS:
        c = candidates(seed, n_runs=5)
        assert_matches(get_method("flagr-agglomerative")(c, c1=c1, c2=c2), c, run_pyflagr(oracle, c, tmp_path))


def test_agglomerative_with_one_run_keeps_its_order_and_eq7_scores() -> None:
    c = candidates_from_runs([columns_from_dicts({}, {"q": {"x": 3.0, "y": 2.0, "z": 1.0}})[1]])
    # L (L - 2 rank + 1) / 2 with L = 3: 3, 0, -3 for ranks 1, 2, 3
    assert _by_doc(c, get_method("flagr-agglomerative")(c)) == {"x": 3.0, "y": 0.0, "z": -3.0}


# Properties on many small generated cases (no oracle needed)

SYMMETRIC = ["flagr-combsum", "flagr-combmnz", "flagr-borda", "flagr-simple-borda", "flagr-condorcet",
             "flagr-copeland", "flagr-outranking", "flagr-prefrel", "flagr-mc1", "flagr-mc2", "flagr-mc3",
             "flagr-mc4", "flagr-mct", "flagr-rra", "flagr-kemeny"]
SHAPES = {"seed": st.integers(0, 10_000), "n_runs": st.integers(1, 4), "n_queries": st.integers(1, 3),
          "max_depth": st.integers(1, 6)}


@settings(max_examples=40, deadline=None)
@given(**SHAPES, rotate=st.integers(1, 3))
def test_symmetric_methods_do_not_depend_on_the_runs_order(seed: int, n_runs: int, n_queries: int,
                                                           max_depth: int, rotate: int) -> None:
    runs = generated_runs(seed, n_runs=n_runs, n_queries=n_queries, max_depth=max_depth, pool=8)
    shift = rotate % n_runs
    turned = runs[shift:] + runs[:shift]
    c, d = candidates_from_runs(runs), candidates_from_runs(turned)
    for name in SYMMETRIC:
        ours, theirs = get_method(name)(c), get_method(name)(d)
        assert np.isfinite(ours).all(), name
        if name == "flagr-kemeny":  # equal optima may be different orders: compare the objective
            continue
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, err_msg=name)


@settings(max_examples=40, deadline=None)
@given(**SHAPES)
def test_every_method_scores_every_row_and_the_bounded_ones_stay_in_bounds(seed: int, n_runs: int,
                                                                          n_queries: int, max_depth: int) -> None:
    c = candidates_from_runs(generated_runs(seed, n_runs=n_runs, n_queries=n_queries, max_depth=max_depth,
                                            pool=8))
    size = np.repeat(np.diff(c.offsets), np.diff(c.offsets))
    condorcet, copeland = get_method("flagr-condorcet")(c), get_method("flagr-copeland")(c)
    assert ((0 <= condorcet) & (condorcet <= copeland) & (copeland <= size - 1)).all()
    rra = get_method("flagr-rra")(c, exact=True)
    assert ((-1 - 1e-9 <= rra) & (rra <= 1e-9)).all()
    for chain in ("mc1", "mc3", "mct"):
        walk = get_method(f"flagr-{chain}")(c)
        np.testing.assert_allclose(np.add.reduceat(walk, c.offsets[:-1]), 1.0)
    assert np.isfinite(get_method("flagr-agglomerative")(c)).all()
    for dist in ("cosine", "rho", "footrule"):  # a query of one document has no rho (0 / 0)
        assert np.isfinite(get_method("flagr-dibra")(c, dist=dist)).all(), dist


def test_mc3_moves_by_the_runs_that_rank_both_documents() -> None:
    # a: x > y; b: y > x > z. Per pair: wins[x, y] = 1 of 2 runs ranking both; wins[x, z] = 1 of 1
    runs = [columns_from_dicts({}, {"q": s})[1] for s in ({"x": 2.0, "y": 1.0}, {"y": 3.0, "x": 2.0, "z": 1.0})]
    c = candidates_from_runs(runs)
    by_id = np.argsort(c.doc_ids)  # rows as x, y, z
    walk = _transitions(flagr_ranks(c)[:, by_id], "mc3")
    m = 3
    expected = np.array([[0, 1 / (2 * m), 1 / m], [1 / (2 * m), 0, 1 / m], [0, 0, 0]])
    np.fill_diagonal(expected, 1 - expected.sum(axis=1))
    np.testing.assert_allclose(walk, expected)
