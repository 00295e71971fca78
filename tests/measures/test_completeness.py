"""Every registered measure is documented, has a hand-computed test and is checked against an oracle.

Adding a measure without all three fails here. The sources of evidence:
- documentation: its docstring and its section of docs/measures.md (generated from the registry);
- hand-computed cases: the case tables of test_evaluator, test_all_trec_hand_computed, test_err_judged_f1,
  test_flagr_example;
- oracles: trec_eval's expected outputs (test_conformance), ir_measures (test_vs_ir_measures), and
  the slow per-query loops of test_err_judged_f1 and test_oracles.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import test_evaluator
import test_err_judged_f1
import test_vs_ir_measures
import test_oracles
import test_all_trec_hand_computed
from conftest import TESTDATA

from retrieval_eval.measures import REGISTRY, parse

ROOT = Path(__file__).resolve().parents[2]
#: The expected outputs test_conformance compares with, all of them in full.
CONFORMANCE_FILES = ("out.test", "out.test.a", "out.test.aq", "out.test.aqc", "out.test.aqcM", "out.test.aql",
                     "out.test.meas_params", "out.comment.test")


def _names(texts: list[str]) -> set[str]:
    return {parse(text).name for text in texts}


def hand_computed() -> set[str]:
    all_trec = [case.values[2] for case in test_all_trec_hand_computed.CASES] + ["RelString(length=3)"]
    beyond = [case[0] for case in (*test_err_judged_f1.ERR_CASES, *test_err_judged_f1.JUDGED_CASES, *test_err_judged_f1.F1_CASES)]
    flagr = ["P@1", "R@1", "F1@1", "DCG@1", "IDCG@1", "nDCG@1", "AP@1"]  # test_flagr_example's worked table
    return set(test_evaluator.HAND_COMPUTED) | _names(all_trec) | _names(beyond) | _names(flagr)


def oracle_compared() -> set[str]:
    names = _names([text for texts in test_vs_ir_measures.CASES.values() for text in texts])
    names |= {"ERR", "Judged", "F1"}  # test_err_judged_f1.test_batch_matches_per_query_oracle
    names |= test_oracles.ORACLE_CHECKED
    if (TESTDATA / "MANIFEST.md").is_file():
        for expected in CONFORMANCE_FILES:
            for line in (TESTDATA / expected).read_text().splitlines():
                label = line.split()[0]
                if label != "runid":
                    names.add(parse(label).name)
    return names


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_measure_is_documented(name: str) -> None:
    definition = REGISTRY[name]
    assert len(definition.doc.splitlines()) >= 3, f"{name}: the docstring needs a formula and its edge cases"
    assert f"\n## {name}\n" in (ROOT / "docs" / "measures.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_measure_has_a_hand_computed_test(name: str) -> None:
    assert name in hand_computed(), f"add a hand-computed case for {name}"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_measure_is_compared_with_an_oracle(name: str) -> None:
    if not (TESTDATA / "MANIFEST.md").is_file():
        pytest.skip("trec_eval's expected outputs are the oracle of many measures and are absent")
    assert name in oracle_compared(), f"compare {name} with an independent implementation"


def test_every_measure_is_exported_by_name() -> None:
    import retrieval_eval.measures as measures

    for name in REGISTRY:
        assert getattr(measures, name) is REGISTRY[name] and name in measures.__all__, name
