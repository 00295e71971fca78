"""Every registered measure is documented, has a hand-computed test and is checked against an oracle.

Adding a measure without all three fails here. The sources of evidence:
- documentation: its docstring and its section of docs/measures.md (generated from the registry);
- hand-computed cases: the case tables of test_evaluator, test_all_trec_hand_computed, test_err_judged_f1,
  test_flagr_example, test_log_measures, test_diversity, test_cwl_compat;
- oracles: trec_eval's expected outputs (test_conformance), ir_measures (test_vs_ir_measures), and
  the slow per-query loops of test_err_judged_f1 and test_oracles, scikit-learn (test_log_measures), ndeval (test_diversity),
  ir_measures' cwl_eval, compat and accuracy providers (test_cwl_compat).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import test_all_trec_hand_computed
import test_cwl_compat
import test_diversity
import test_err_judged_f1
import test_evaluator
import test_judgment_groups
import test_log_measures
import test_oracles
import test_prefs
import test_vs_ir_measures
from conftest import TESTDATA

from retrieval_eval.measures import REGISTRY, parse, trec_table

ROOT = Path(__file__).resolve().parents[2]
#: The expected outputs test_conformance compares with, all of them in full.
CONFORMANCE_FILES = ("out.test", "out.test.a", "out.test.aq", "out.test.aqc", "out.test.aqcM", "out.test.aql",
                     "out.test.meas_params", "out.comment.test", "out.test.qrels_jg", "out.test.prefs",
                     "out.test.qrels_prefs")


def _names(texts: list[str]) -> set[str]:
    return {parse(text).name for text in texts}


def hand_computed() -> set[str]:
    all_trec = [case.values[2] for case in test_all_trec_hand_computed.CASES] + ["RelString(length=3)"]
    beyond = [case[0] for case in (*test_err_judged_f1.ERR_CASES, *test_err_judged_f1.JUDGED_CASES, *test_err_judged_f1.F1_CASES)]
    flagr = ["P@1", "R@1", "F1@1", "DCG@1", "IDCG@1", "nDCG@1", "AP@1"]  # test_flagr_example's worked table
    return (set(test_evaluator.HAND_COMPUTED) | _names(all_trec) | _names(beyond) | _names(flagr)
            | test_log_measures.HAND_COMPUTED | test_diversity.HAND_COMPUTED | test_cwl_compat.HAND_COMPUTED
            | test_judgment_groups.HAND_COMPUTED | test_prefs.HAND_COMPUTED)


def oracle_compared() -> set[str]:
    names = _names([text for texts in test_vs_ir_measures.CASES.values() for text in texts])
    names |= {"ERR", "Judged", "F1"}  # test_err_judged_f1.test_batch_matches_per_query_oracle
    names |= test_oracles.ORACLE_CHECKED | test_log_measures.ORACLE_CHECKED | test_diversity.ORACLE_CHECKED
    names |= test_cwl_compat.ORACLE_CHECKED | test_judgment_groups.ORACLE_CHECKED
    names |= test_prefs.ORACLE_CHECKED  # trec_eval 10 itself: tests/test_vs_trec_eval_c_prefs.py
    if (TESTDATA / "MANIFEST.md").is_file():
        for expected in CONFORMANCE_FILES:
            for line in (TESTDATA / expected).read_text().splitlines():
                label = line.split()[0]
                if label != "runid":
                    names.add(parse(label).name)
    return names


def missing_evidence(name: str) -> list[str]:
    """What the measure ``name`` lacks of the evidence every measure needs (empty when complete)."""
    definition = REGISTRY[name]
    missing = []
    if len(definition.doc.splitlines()) < 3:
        missing.append("a docstring with a formula and its edge cases")
    if f"\n## {name}\n" not in (ROOT / "docs" / "measures.md").read_text(encoding="utf-8"):
        missing.append("its section of docs/measures.md (python -m retrieval_eval.measures.describe)")
    if name not in hand_computed():
        missing.append("a hand-computed case")
    if (TESTDATA / "MANIFEST.md").is_file() and name not in oracle_compared():
        missing.append("a comparison with an independent implementation")
    for trec in definition.trec:
        if trec.name not in trec_table.names():
            missing.append(f"a row for {trec.name!r} in trec_table.TREC_TABLE")
    return missing


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_measure_has_all_its_evidence(name: str) -> None:
    """Documented, hand-computed, compared with an oracle (where trec_eval's outputs are present), placed in trec_eval's table."""
    assert missing_evidence(name) == [], f"{name} lacks: {'; '.join(missing_evidence(name))}"


def test_every_measure_is_exported_by_name() -> None:
    from retrieval_eval import measures

    for name in REGISTRY:
        assert getattr(measures, name) is REGISTRY[name] and name in measures.__all__, name
