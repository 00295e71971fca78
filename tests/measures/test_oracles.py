"""Measures that trec_eval prints only on request (dcg, ideal_dcg, yaap) against slow textbook loops."""

from __future__ import annotations

import pytest
import reference
from hypothesis import given, settings
from strategies import single_query_cases

from retrieval_eval import SetEvaluator

#: Measures checked against an oracle in this file (read by test_completeness.py).
ORACLE_CHECKED = {"DCG", "IDCG", "YAAP"}


@settings(max_examples=300, deadline=None)
@given(case=single_query_cases())
def test_dcg_idcg_and_yaap_match_the_definitions(case: tuple[str, dict[str, int], dict[str, float]]) -> None:
    qid, judged, scores = case
    ev = SetEvaluator.from_dict({qid: judged}, {qid: scores} if scores else {})[qid]
    ranking = reference.rank(scores)
    assert ev.score("DCG") == pytest.approx(reference.ranking_dcg(ranking, judged), abs=1e-12)
    assert ev.score("DCG@3") == pytest.approx(reference.ranking_dcg(ranking, judged, 3), abs=1e-12)
    assert ev.score("IDCG") == pytest.approx(reference.ideal_dcg(judged), abs=1e-12)
    assert ev.score("YAAP") == pytest.approx(reference.yaap(ranking, judged), abs=1e-12)
    exp_gains = [2.0 ** max(judged.get(doc, 0), 0) - 1 for doc in ranking]
    exp_ideal = sorted((2.0**v - 1 for v in judged.values() if v > 0), reverse=True)
    assert ev.score("DCG(dcg='exp-log2')@5") == pytest.approx(reference.dcg(exp_gains, 5), abs=1e-12)
    assert ev.score("IDCG(dcg='exp-log2')") == pytest.approx(reference.dcg(exp_ideal), abs=1e-12)
