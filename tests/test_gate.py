"""Baselines, gate rules and their resolution (issue 30, items 1-3), checked against hand-computed
cases, scipy and statsmodels."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower, TTestPower

from retrieval_eval import SetEvaluator
from retrieval_eval.analysis.intervals import mean_interval
from retrieval_eval.harness.baseline import FORMAT_VERSION, Baseline, FileStamp
from retrieval_eval.harness.gate import check_rules, gate_text
from retrieval_eval.harness.resolution import (
    minimum_detectable_effect,
    queries_needed,
    resolution,
    smallest_p,
)
from retrieval_eval.harness.rules import Rule, merge_rules, parse_rules, read_rules, rule_from_flag
from retrieval_eval.model import InputFormatError, RetrievalEvalError

# Ten queries, two relevant documents each ("a", "b"); P@2 is 1, 0.5 or 0 as the run finds both, one, none.
QRELS = {f"q{i}": {"a": 1, "b": 1} for i in range(10)}
BOTH = {"a": 2.0, "b": 1.0}
ONE = {"a": 2.0, "x": 1.0}
NONE = {"x": 2.0, "y": 1.0}


def _run(found: list[dict[str, float]]) -> SetEvaluator:
    return SetEvaluator.from_dict(QRELS, {f"q{i}": ranking for i, ranking in enumerate(found)})


BEFORE = _run([BOTH] * 10)  # P@2 = 1 everywhere


def _outcomes(baseline: Baseline, current: SetEvaluator, rules: list[Rule], **options: object) -> dict[str, tuple[str, str]]:
    report = check_rules(baseline, current, rules, **options)  # type: ignore[arg-type]
    return {o.name: (o.status, o.message) for o in report.outcomes}


# ---------------------------------------------------------------------- baselines
def test_baseline_round_trip_and_values(tmp_path) -> None:  # type: ignore[no-untyped-def]
    kept = Baseline.create(_run([BOTH, ONE, NONE] + [BOTH] * 7), measures=["P@2", "P_1"])
    assert kept.summary == {"P@2": pytest.approx(0.85), "P@1": pytest.approx(0.9)}
    assert kept.values("P@2")["q1"] == 0.5 and kept.values("P.2")["q2"] == 0.0  # any spelling of the measure
    assert kept.measures == {"P@2": "P@2", "P@1": "P_1"}
    path = tmp_path / "b.json"
    kept.write(path)
    assert Baseline.read(path) == kept
    document = json.loads(path.read_text(encoding="utf-8"))
    assert (document["format"], document["format_version"]) == ("retrieval-eval-baseline", 1)
    assert document["per_query"]["P@2"][:3] == [1.0, 0.5, 0.0]


def test_baseline_hashes_the_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import hashlib

    qrels = tmp_path / "x.qrels"
    qrels.write_bytes(b"q1 0 a 1\n")
    kept = Baseline.create(BEFORE, measures=["P@2"], qrels_path=qrels, run_path=qrels)
    assert kept.qrels == FileStamp("x.qrels", hashlib.sha256(b"q1 0 a 1\n").hexdigest())


def test_baseline_keeps_only_means() -> None:
    with pytest.raises(RetrievalEvalError, match="GMAP: a baseline keeps measures summarised by their mean"):
        Baseline.create(BEFORE, measures=["GMAP"])


@pytest.mark.parametrize(("text", "expected"), [
    ("{not json", "expected a baseline (a JSON document), found text that is not JSON"),
    ('{"format": "something-else"}', "expected a baseline (\"format\": \"retrieval-eval-baseline\"), found 'something-else'"),
    ("[1, 2]", "expected a baseline (\"format\": \"retrieval-eval-baseline\"), found (list)"),
    ('{"format": "retrieval-eval-baseline", "format_version": 2}',
     "expected format_version 1 or older (written by a newer retrieval-eval: upgrade it), found 2"),
    ('{"format": "retrieval-eval-baseline", "format_version": 1, "queries": []}',
     "expected \"queries\": a non-empty list of query ids"),
])
def test_baseline_read_errors(tmp_path, text: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "b.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputFormatError) as caught:
        Baseline.read(path)
    assert str(caught.value).startswith(f"{path}: {expected}")
    assert FORMAT_VERSION == 1


def test_baseline_read_refuses_damaged_values(tmp_path) -> None:  # type: ignore[no-untyped-def]
    document = Baseline.create(BEFORE, measures=["P@2"]).to_dict()
    document["per_query"]["P@2"] = document["per_query"]["P@2"][:-1]
    path = tmp_path / "b.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"expected \"per_query\" P@2: a number per query \(10\)"):
        Baseline.read(path)


def test_differences_say_what_differs() -> None:
    kept = attrs_evolve(Baseline.create(BEFORE, measures=["P@2"]), qrels=FileStamp("a.qrels", "0" * 64))
    found = kept.differences(qrels=FileStamp("b.qrels", "1" * 64), options={"rel": 2, "max_depth": 100})
    assert found == ["the qrels: b.qrels (sha256 111111111111) is not the baseline's a.qrels (sha256 000000000000)",
                     "option rel: 2, the baseline has 1", "option max_depth: 100, the baseline has none"]
    assert kept.differences(qrels=FileStamp("renamed.qrels", "0" * 64), options={}) == []


def attrs_evolve(baseline: Baseline, **changes: object) -> Baseline:
    import attrs

    return attrs.evolve(baseline, **changes)


# ---------------------------------------------------------------------- rules
def test_rules_from_toml(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "gates.toml"
    path.write_text('["nDCG@10"]\nmin = 0.4\nmax_drop = 0.02\nmax_query_drop = 0.5\nquarantine = ["q7"]\n'
                    '[AP]\nregression = true\nci_lower = 0\n', encoding="utf-8")
    assert read_rules(path) == [Rule("nDCG@10", min=0.4, max_drop=0.02, max_query_drop=0.5, quarantine=("q7",)),
                                Rule("AP", ci_lower=0.0, regression=True)]


@pytest.mark.parametrize(("text", "expected"), [
    ("[AP]\nmax_dorp = 0.1\n", ("[AP]: expected checks among min, max_drop, ci_lower, regression, max_query_drop, "
                                "quarantine; found 'max_dorp'")),
    ("[AP]\nmin = 'high'\n", "[AP]: expected min a finite number, found 'high'"),
    ("[AP]\nmax_drop = -0.1\n", "[AP]: expected max_drop a number >= 0 (a drop), found -0.1"),
    ("[AP]\nregression = 1\n", "[AP]: expected regression true or false, found 1"),
    ("[AP]\nquarantine = ['q1']\n", "[AP]: expected max_query_drop beside quarantine"),
    ("[AP]\n", "[AP]: expected at least one check"),
    ("AP = 0.3\n", "[AP]: expected a table of checks"),
    ("[AP\n", "expected TOML rules, found a syntax error"),
    ("", "expected a table of checks per measure, found no rule"),
])
def test_rules_file_errors(tmp_path, text: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "gates.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputFormatError) as caught:
        read_rules(path)
    assert str(caught.value).startswith(f"{path}: {expected}")


def test_rules_from_flags_and_merging() -> None:
    assert rule_from_flag("min", "nDCG@10=0.4") == Rule("nDCG@10", min=0.4)
    assert rule_from_flag("regression", "AP") == Rule("AP", regression=True)
    for text, expected in (("nDCG@10", "expected MEASURE=VALUE"), ("AP=x", "expected a number, found 'x'"),
                           ("AP=nan", "expected min a finite number")):
        with pytest.raises(RetrievalEvalError, match=expected):
            rule_from_flag("min", text)
    merged = merge_rules([Rule("AP", min=0.1, max_drop=0.2), Rule("map", min=0.3, regression=True)],
                         key=lambda m: "AP" if m in ("AP", "map") else m)
    assert merged == [Rule("AP", min=0.3, max_drop=0.2, regression=True)]
    assert parse_rules({"P@10": {"regression": True}}) == [Rule("P@10", regression=True)]


# ---------------------------------------------------------------------- checks on hand-made runs
def test_min_and_max_drop_by_hand() -> None:
    kept = Baseline.create(BEFORE, measures=["P@2"])
    after = _run([ONE, NONE] + [BOTH] * 8)  # P@2 mean 0.85: a drop of 0.15
    found = _outcomes(kept, after, [Rule("P@2", min=0.85, max_drop=0.15)])
    assert found["P@2 min 0.85"] == ("passed", "mean 0.8500 >= 0.85")
    assert found["P@2 max_drop 0.15"][0] == "passed"  # exactly at the tolerance
    found = _outcomes(kept, after, [Rule("P@2", min=0.9, max_drop=0.1)])
    assert found["P@2 min 0.9"] == ("failed", "mean 0.8500 is below the floor 0.9")
    assert found["P@2 max_drop 0.1"][1].startswith("fell by 0.1500 (1.0000 -> 0.8500), more than 0.1")


def test_failed_checks_name_the_worst_queries() -> None:
    kept = Baseline.create(BEFORE, measures=["P@2"])
    report = check_rules(kept, _run([ONE, NONE] + [BOTH] * 8), [Rule("P@2", max_drop=0.0)])
    assert report.outcomes[0].details == "q1: 1.0000 -> 0.0000 (-1.0000)\nq0: 1.0000 -> 0.5000 (-0.5000)"


def test_max_query_drop_with_quarantine() -> None:
    kept = Baseline.create(BEFORE, measures=["P@2"])
    after = _run([ONE, NONE, NONE] + [BOTH] * 7)
    report = check_rules(kept, after, [Rule("P@2", max_query_drop=0.5, quarantine=("q1", "q9"))])
    found = {o.name: o for o in report.outcomes}
    assert found["P@2 max_query_drop 0.5"].status == "failed"
    assert found["P@2 max_query_drop 0.5"].message == "1 query fell by more than 0.5: q2"  # q0 fell by exactly 0.5
    assert (found["P@2 q1"].group, found["P@2 q1"].status) == ("quarantine", "skipped")
    assert found["P@2 q1"].message == "quarantined: 1.0000 -> 0.0000 (-1.0000)"
    assert found["P@2 q9"].message == "quarantined: 1.0000 -> 1.0000 (+0.0000)"
    report = check_rules(kept, after, [Rule("P@2", max_query_drop=0.5, quarantine=("q1", "q2"))])
    assert report.outcomes[0].status == "passed"
    assert report.exit_code() == 0


def test_ci_lower_against_scipy() -> None:
    kept = Baseline.create(BEFORE, measures=["P@2"])
    after = _run([ONE, NONE, ONE] + [BOTH] * 7)
    values = after.array("P@2")
    low, high = sps.t.interval(0.9, len(values) - 1, loc=values.mean(), scale=sps.sem(values))
    found = mean_interval(values, method="t", level=0.9)
    assert (found.low, found.high) == pytest.approx((low, high), rel=1e-12)
    report = check_rules(kept, after, [Rule("P@2", ci_lower=round(low, 6) - 1e-6)], alpha=0.1)
    assert report.outcomes[0].status == "passed"
    assert report.checks[0].now == pytest.approx(low, rel=1e-12)
    assert check_rules(kept, after, [Rule("P@2", ci_lower=low + 1e-6)], alpha=0.1).outcomes[0].status == "failed"


def _graded(values: list[float]) -> SetEvaluator:
    """Runs whose AP on each of len(values) one-relevant queries is 1/rank, rank from values (1, 2, 4...)."""
    qrels = {f"q{i}": {"rel": 1} for i in range(len(values))}
    run = {}
    for i, ap in enumerate(values):
        rank = round(1 / ap)
        run[f"q{i}"] = {**{f"n{j}": 100.0 - j for j in range(rank - 1)}, "rel": 100.0 - rank}
    return SetEvaluator.from_dict(qrels, run)


@pytest.mark.parametrize("test", ["t", "wilcoxon", "sign"])
def test_regression_matches_scipy_and_statsmodels(test: str) -> None:
    before_values = [1.0, 1.0, 0.5, 1.0, 0.5, 1.0, 1.0, 0.25, 1.0, 1.0, 0.5, 1.0]
    after_values = [0.5, 0.25, 0.5, 0.5, 0.25, 1.0, 0.5, 0.25, 0.2, 1.0, 0.5, 0.5]
    before, after = _graded(before_values), _graded(after_values)
    kept = Baseline.create(before, measures=["AP", "RR"])
    report = check_rules(kept, after, [Rule("AP", regression=True), Rule("RR", regression=True)], test=test)
    b, a = before.array("AP"), after.array("AP")
    raw = {"t": lambda: sps.ttest_rel(a, b).pvalue, "wilcoxon": lambda: sps.wilcoxon(a, b).pvalue,
           "sign": lambda: sps.binomtest(int((a > b).sum()), int((a != b).sum()), 0.5).pvalue}[test]()
    holm = multipletests([raw, raw], method="holm")[1]  # AP and RR are equal here: one family of two
    status, message = {o.name: (o.status, o.message) for o in report.outcomes}["AP regression"]
    assert f"p = {raw:.4g}, holm {holm[0]:.4g}" in message
    assert status == ("failed" if holm[0] < 0.05 else "passed")


def test_regression_unresolvable_with_few_changed_queries() -> None:
    kept = Baseline.create(BEFORE, measures=["P@2"])
    after = _run([NONE] * 4 + [BOTH] * 6)  # four queries lost everything: the sign test's best p is 2/16
    report = check_rules(kept, after, [Rule("P@2", regression=True)], test="sign")
    assert report.outcomes[0].status == "undecided"
    assert report.resolutions["P@2"].smallest_p == pytest.approx(sps.binomtest(4, 4, 0.5).pvalue)
    assert report.exit_code(fail_undecided=True) == 4 and report.exit_code() == 0
    after = _run([NONE] * 6 + [BOTH] * 4)  # six: 2/64 < 0.05, and a significant drop
    assert check_rules(kept, after, [Rule("P@2", regression=True)], test="sign").outcomes[0].status == "failed"
    same = check_rules(kept, BEFORE, [Rule("P@2", regression=True)], test="sign").outcomes[0]
    assert (same.status, same.message) == ("passed", "no query changed")


def test_zero_shared_queries_is_an_error() -> None:
    kept = Baseline.create(BEFORE, measures=["P@2"])
    other = SetEvaluator.from_dict({"z1": {"a": 1}}, {"z1": {"a": 1.0}})
    with pytest.raises(RetrievalEvalError, match="the baseline and the run share no query, so there is nothing to "
                                                 "compare"):
        check_rules(kept, other, [Rule("P@2", min=0.0)])


def test_unknown_measure_and_other_rel_are_refused() -> None:
    kept = Baseline.create(BEFORE, measures=["P@2"])
    with pytest.raises(RetrievalEvalError, match="the baseline has no values of AP"):
        check_rules(kept, BEFORE, [Rule("AP", min=0.0)])
    other = SetEvaluator.from_dict(QRELS, {"q0": BOTH}, rel=2)
    with pytest.raises(RetrievalEvalError, match="relevance level 2; the baseline at 1"):
        check_rules(kept, other, [Rule("P@2", min=0.0)])


def test_gate_text_lists_every_check() -> None:
    kept = Baseline.create(BEFORE, measures=["P@2"])
    # d = (-0.5, -1, 0 x 8): sd = sqrt(1.025 / 9) = 0.33747, MDE = 2.80159 * sd / sqrt(10) = 0.2990,
    # needed = (2.80159 * sd / 0.2) ** 2 = 22.35, so 23
    report = check_rules(kept, _run([ONE, NONE] + [BOTH] * 8), [Rule("P@2", min=0.9, max_drop=0.2)])
    text = gate_text(report, title="check")
    assert text.splitlines()[0] == "check: 10 queries compared; t test, holm correction, alpha 0.05"
    assert "P@2      min 0.9       -         0.8500  -        FAILED" in text
    assert "P@2      max_drop 0.2  1.0000    0.8500  -0.1500  passed   MDE 0.2990; 0.2 needs 23 queries" in text
    assert text.endswith("1 failed, 1 passed\n")


# ---------------------------------------------------------------------- resolution
def test_mde_against_statsmodels() -> None:
    rng = np.random.default_rng(3)
    for n in (5, 20, 60, 200):
        d = rng.normal(0.0, 0.1, n)
        sd = float(np.std(d, ddof=1))
        normal = NormalIndPower().solve_power(nobs1=n, alpha=0.05, power=0.8, ratio=0) * sd
        assert minimum_detectable_effect(d) == pytest.approx(normal, rel=1e-4)
        assert minimum_detectable_effect(d) < TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8) * sd


@pytest.mark.parametrize("tiny", [2.0**-700, 1e-300, 4.69459433e-223])
def test_mde_of_tiny_differences_scales_with_them(tiny: float) -> None:
    # Differences this small square to 0: a plain std is 0, and the MDE would claim every change is
    # detectable. The MDE is that of the same shape at ordinary size, scaled (a power of two: exact).
    shape = np.array([1.0, -0.5, 0.25, 2.0, 0.0])
    scale = 2.0 ** np.frexp(tiny)[1]
    d = shape * scale
    assert float(np.std(d, ddof=1)) == 0.0  # (why the test exists)
    assert minimum_detectable_effect(d) == pytest.approx(minimum_detectable_effect(shape) * scale, rel=1e-12)
    assert minimum_detectable_effect(d) > 0.0
    found = resolution(d, tolerance=1.0, test="t", alpha=0.05)
    assert found.sd == pytest.approx(float(np.std(shape, ddof=1)) * scale, rel=1e-12)
    assert found.needed == 2


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=2, max_size=40).filter(lambda d: np.std(d, ddof=1) > 1e-3),
       st.floats(0.005, 0.5))
def test_queries_needed_is_the_smallest_sufficient_n(d: list[float], tolerance: float) -> None:
    needed = queries_needed(d, tolerance)
    assert needed is not None
    sd = float(np.std(d, ddof=1))
    # The upper tail of the two-sided test at alpha 0.05 is the one-sided test at 0.025: statsmodels'
    # power of that is the power the formula solves for (the other tail adds at most 1e-6 near 0.8).
    def power(n: int) -> float:
        return float(NormalIndPower().power(tolerance / sd, nobs1=n, alpha=0.025, ratio=0, alternative="larger"))

    assert power(needed) >= 0.8 - 1e-9
    assert needed == 2 or power(needed - 1) < 0.8 + 1e-9


def test_smallest_p_against_scipy_and_enumeration() -> None:
    for m in range(1, 9):
        d = np.arange(1, m + 1) * 0.01  # m distinct differences, all of one sign, and two zeros
        d = np.concatenate([d, [0.0, 0.0]])
        assert smallest_p(d, "sign") == pytest.approx(sps.binomtest(m, m, 0.5).pvalue)
        if m >= 2:
            assert smallest_p(d, "wilcoxon") == pytest.approx(sps.wilcoxon(d[:m], method="exact").pvalue)
        flips = [abs(sum(s * x for s, x in zip(signs, d))) >= abs(d.sum()) - 1e-12
                 for signs in itertools.product((1, -1), repeat=d.size)]
        assert smallest_p(d, "permutation") == pytest.approx(sum(flips) / len(flips))
    assert smallest_p([0.1], "sign") == 1.0 and smallest_p([0.0, 0.0], "t") == 1.0
    assert smallest_p([0.1, 0.2], "t") == 0.0
    assert smallest_p([0.1, 0.2], "bootstrap", samples=99) == 0.01


def test_resolution_corrects_the_floor_for_the_family() -> None:
    d = [0.1] * 5 + [0.0] * 5
    assert resolution(d, tolerance=None, test="sign", alpha=0.05).smallest_p == pytest.approx(2 / 32)
    assert resolution(d, tolerance=None, test="sign", alpha=0.05, family=3).smallest_p == pytest.approx(6 / 32)
    found = resolution([0.1, -0.1, 0.2, 0.0], tolerance=0.05, test="t", alpha=0.05)
    assert (found.queries, found.changed, found.resolvable) == (4, 3, False)
    assert found.needed == queries_needed([0.1, -0.1, 0.2, 0.0], 0.05)


def test_ids_that_are_not_utf8_survive_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    odd = "q\udcff"  # a byte that is not UTF-8, kept as a lone surrogate by the readers
    results = SetEvaluator.from_dict({odd: {"a": 1}, "q2": {"a": 1}}, {odd: {"a": 1.0}, "q2": {"x": 1.0}})
    kept = Baseline.create(results, measures=["AP"])
    kept.write(tmp_path / "b.json")
    assert Baseline.read(tmp_path / "b.json").values("AP") == {odd: 1.0, "q2": 0.0}
