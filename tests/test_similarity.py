"""Run-to-run similarity against oracles that share no code with it: RBO by its definition on lists
extended explicitly, Webber et al.'s closed form of RBO_ext, the published values of Corsi & Urbano's
reference code, every tie order enumerated for RBO^a, scipy's Kendall's tau; the command as a user runs it."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.analysis.similarity import jaccard_at, kendall_tau, rbo, similarity
from retrieval_eval.cli import main
from retrieval_eval.model import RetrievalEvalError


def by_definition(a: list[str], b: list[str], p: float, depth: int = 600) -> float:
    """RBO of two lists long enough that the weight beyond ``depth`` (p**depth) does not show:
    (1 - p) * sum over d of p**(d-1) * |A:d ∩ B:d| / d."""
    total, seen_a, seen_b, both = 0.0, set(), set(), 0
    for d in range(1, depth + 1):
        for item, mine, other in ((a[d - 1] if d <= len(a) else None, seen_a, seen_b),
                                  (b[d - 1] if d <= len(b) else None, seen_b, seen_a)):
            if item is not None:
                mine.add(item)
                both += item in other
        total += p ** (d - 1) * both / d
    return (1 - p) * total


def fresh(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def extended_min(a: list[str], b: list[str], p: float) -> float:
    """RBO_min: both lists go on with documents that nobody else has."""
    return by_definition(a + fresh("#a", 600), b + fresh("#b", 600), p)


def extended_max(a: list[str], b: list[str], p: float) -> float:
    """RBO_max (Webber et al., section 4.2): each list next takes the other's documents it lacks, in
    the other's order, and then both go on with the same new documents."""
    short, long = sorted((a, b), key=len)
    short = short + [d for d in long if d not in short]
    long = long + [d for d in short if d not in long]
    return by_definition(short + fresh("#", 600), long + fresh("#", 600), p)


def webber_ext(a: list[str], b: list[str], p: float) -> float:
    """Webber et al. (2010), equation 32: RBO_ext of lists of lengths s <= l."""
    short, long = sorted((a, b), key=len)
    s, n = len(short), len(long)
    x = [len(set(short[:d]) & set(long[:d])) for d in range(1, n + 1)]
    head = sum(x[d - 1] / d * p ** d for d in range(1, n + 1))
    head += sum(x[s - 1] * (d - s) / (s * d) * p ** d for d in range(s + 1, n + 1))
    return (1 - p) / p * head + ((x[n - 1] - x[s - 1]) / n + x[s - 1] / s) * p ** n


lists = st.lists(st.sampled_from("abcdefghij"), min_size=1, max_size=8, unique=True)


@settings(max_examples=60, deadline=None)
@given(lists, lists, st.sampled_from([0.5, 0.8, 0.9]))
def test_rbo_without_ties_matches_its_definition_and_webbers_closed_form(a: list[str], b: list[str], p: float) -> None:
    got = rbo(a, b, p=p, ties="trec_eval")
    assert got.min == pytest.approx(extended_min(a, b, p), abs=1e-9)
    assert got.max == pytest.approx(extended_max(a, b, p), abs=1e-9)
    assert got.res == pytest.approx(got.max - got.min)
    assert got.ext == pytest.approx(webber_ext(a, b, p), abs=1e-12)
    assert got.min <= got.ext <= got.max + 1e-12
    for ties in ("a", "b", "w"):  # without ties every variant is plain RBO
        assert rbo(a, b, p=p, ties=ties, a_groups=range(len(a)), b_groups=range(len(b))) == pytest.approx(got)


def test_corsi_urbano_published_values() -> None:
    """The example of the README of Corsi & Urbano's reference implementation (sigir2024-rbo, p = 0.95):
    x = red (blue green) yellow pink, y = (blue red) white (yellow black purple) green."""
    x, gx = ["red", "blue", "green", "yellow", "pink"], [0, 1, 1, 2, 3]
    y, gy = ["blue", "red", "white", "yellow", "black", "purple", "green"], [0, 0, 1, 2, 2, 2, 3]
    published = {"a": (0.6922853, 0.3310519, 0.8930692), "w": (0.7068257, 0.3429684, 0.9049857),
                 "b": (0.7207131, 0.3509163, 0.9129336)}
    for ties, (ext, low, high) in published.items():
        got = rbo(x, y, p=0.95, ties=ties, a_groups=gx, b_groups=gy)
        assert (got.ext, got.min, got.max) == pytest.approx((ext, low, high), abs=5e-8)
        assert got.res == pytest.approx(0.5620173, abs=5e-8)


def orders(items: list[str], groups: list[int]) -> list[list[str]]:
    """Every order of ``items`` that keeps the tie groups in place."""
    blocks = [[i for i, g in zip(items, groups) if g == group] for group in sorted(set(groups))]
    return [list(itertools.chain(*choice)) for choice in itertools.product(*(itertools.permutations(b) for b in blocks))]


groups = st.lists(st.integers(0, 2), min_size=1, max_size=6).map(sorted)
#: Five ranks at most, for the test that tries every order: two ties of six are 720 x 720 pairs of
#: orders, which took half a minute; two of five are 120 x 120.
short_groups = st.lists(st.integers(0, 2), min_size=1, max_size=5).map(sorted)


@settings(max_examples=40, deadline=None)
@given(lists, lists, short_groups, short_groups)
def test_rbo_a_is_the_mean_over_every_tie_order(a: list[str], b: list[str], ga: list[int], gb: list[int]) -> None:
    """RBO^a's lower bound is the expected RBO_min when each tie is broken at random, counted exactly."""
    n, m = min(len(a), len(ga)), min(len(b), len(gb))
    a, ga, b, gb = a[:n], ga[:n], b[:m], gb[:m]
    values = [extended_min(x, y, 0.8) for x in orders(a, ga) for y in orders(b, gb)]
    assert rbo(a, b, p=0.8, ties="a", a_groups=ga, b_groups=gb).min == pytest.approx(sum(values) / len(values))


def w_min_by_definition(a: list[str], ga: list[int], b: list[str], gb: list[int], p: float) -> float:
    """RBO^w's lower bound from its reading of a tie: an item is seen from its group's first depth on,
    A_d = 2 |S:d ∩ L:d| / (|S:d| + |L:d|), both lists going on with documents nobody else has."""
    def seen(items: list[str], groups: list[int], extra: str) -> list[set[str]]:
        top = {g: groups.index(g) for g in groups}
        entering: dict[int, list[str]] = {}  # depth index -> the items seen from there on
        for item, first in zip(items + fresh(extra, 300), [top[g] for g in groups] + list(range(len(items), 300))):
            entering.setdefault(first, []).append(item)
        found, sets = set(), []
        for d in range(300):
            found |= set(entering.get(d, []))
            sets.append(set(found))
        return sets
    total = 0.0
    for d, (x, y) in enumerate(zip(seen(a, ga, "#a"), seen(b, gb, "#b")), 1):
        total += p ** (d - 1) * 2 * len(x & y) / (len(x) + len(y))
    return (1 - p) * total


@settings(max_examples=40, deadline=None)
@given(lists, lists, groups, groups)
def test_rbo_w_min_matches_its_definition(a: list[str], b: list[str], ga: list[int], gb: list[int]) -> None:
    n, m = min(len(a), len(ga)), min(len(b), len(gb))
    a, ga, b, gb = a[:n], ga[:n], b[:m], gb[:m]
    got = rbo(a, b, p=0.8, ties="w", a_groups=ga, b_groups=gb).min
    assert got == pytest.approx(w_min_by_definition(a, ga, b, gb, 0.8), abs=1e-9)


def test_rbo_b_of_a_list_with_itself_is_one_and_a_is_below() -> None:
    items, tied = list("abcdef"), [0, 0, 0, 1, 2, 2]
    b = rbo(items, items, p=0.9, ties="b", a_groups=tied, b_groups=tied)
    a = rbo(items, items, p=0.9, ties="a", a_groups=tied, b_groups=tied)
    assert b.ext == pytest.approx(1.0) and a.ext < 1.0


@settings(max_examples=60, deadline=None)
@given(lists, lists, st.integers(1, 10))
def test_tau_and_jaccard_match_scipy_and_sets(a: list[str], b: list[str], k: int) -> None:
    shared = [d for d in a if d in b]
    if len(shared) >= 2:
        expected = scipy.stats.kendalltau(range(len(shared)), [b.index(d) for d in shared]).statistic
        assert kendall_tau(a, b) == pytest.approx(expected)
    else:
        assert math.isnan(kendall_tau(a, b))
    top_a, top_b = set(a[:k]), set(b[:k])
    assert jaccard_at(a, b, k) == pytest.approx(len(top_a & top_b) / len(top_a | top_b))


def test_similarity_of_runs_uses_trec_eval_order_and_tie_groups() -> None:
    # q1 of A ties b and c (2.0): trec_eval's order puts c first (doc_id descending)
    first = {"q1": {"a": 3.0, "b": 2.0, "c": 2.0}, "q2": {"x": 1.0}}
    second = {"q1": {"c": 3.0, "b": 2.0, "a": 1.0}, "q3": {"y": 1.0}}
    report = similarity(first, second, p=0.8, ties="trec_eval", k=2)
    (q1,) = report.queries
    assert q1.rbo == rbo(["a", "c", "b"], ["c", "b", "a"], p=0.8, ties="trec_eval")
    assert report.only_first == ("q2",) and report.only_second == ("q3",)
    tied = similarity(first, second, p=0.8, ties="a").queries[0].rbo
    assert tied == rbo(["a", "c", "b"], ["c", "b", "a"], p=0.8, a_groups=[0, 1, 1], b_groups=[0, 1, 2])
    assert similarity(first, second, depth=1).queries[0].shared == 0
    with pytest.raises(RetrievalEvalError, match="share no query"):
        similarity({"q1": {"a": 1.0}}, {"q2": {"a": 1.0}})


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.run").write_text("1 Q0 a 1 3 x\n1 Q0 b 2 2 x\n1 Q0 c 3 1 x\n2 Q0 d 1 1 x\n")
    (tmp_path / "b.run").write_text("1 Q0 c 1 3 y\n1 Q0 a 2 2 y\n1 Q0 e 3 1 y\n2 Q0 d 1 1 y\n3 Q0 z 1 1 y\n")
    a, b = str(tmp_path / "a.run"), str(tmp_path / "b.run")
    assert main(["similarity", a, b, "-p", "0.8", "-k", "2", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["queries"][0]["rbo_ext"] == pytest.approx(webber_ext(["a", "b", "c"], ["c", "a", "e"], 0.8))
    assert data["queries"][0]["jaccard@2"] == pytest.approx(1 / 3) and data["only_in_second"] == ["3"]
    assert "1 query only in b.run" in err
    assert main(["similarity", a, b]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["query", "rbo_ext", "rbo_min", "rbo_max", "rbo_res", "jaccard@10", "overlap@10",
                                "tau", "shared"] and table[-1].startswith("all")
    (tmp_path / "bad.run").write_text("1 Q0 a 1 3 x\n1 Q0 b 2 high x\n")
    assert main(["similarity", a, str(tmp_path / "bad.run")]) == 2
    assert "bad.run:2:" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:  # argparse's usage error
        main(["similarity", a, b, "-p", "1"])
    assert exited.value.code == 2


def test_the_command_reads_ties_as_rbo_ties_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --rbo-ties, not --ties: on the evaluating commands --ties picks the engine's tie policy
    (tmp_path / "a.run").write_text("1 Q0 a 1 3 x\n1 Q0 b 2 2 x\n1 Q0 c 3 2 x\n")
    (tmp_path / "b.run").write_text("1 Q0 c 1 3 y\n1 Q0 b 2 2 y\n1 Q0 a 3 1 y\n")
    a, b = str(tmp_path / "a.run"), str(tmp_path / "b.run")
    for variant, groups in (("trec_eval", [0, 1, 2]), ("w", [0, 1, 1])):
        assert main(["similarity", a, b, "-p", "0.8", "--rbo-ties", variant, "--format", "json", "--quiet"]) == 0
        got = json.loads(capsys.readouterr().out)["queries"][0]["rbo_min"]
        want = rbo(["a", "c", "b"], ["c", "b", "a"], p=0.8, ties=variant, a_groups=groups, b_groups=[0, 1, 2])
        assert got == pytest.approx(want.min)
    with pytest.raises(SystemExit) as exited:
        main(["similarity", a, b, "--ties", "w"])
    assert exited.value.code == 2
