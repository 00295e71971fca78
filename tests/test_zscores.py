"""-Z z-scores: hand-computed values and summaries, the mapping and file forms, every output format.

trec_eval itself is the oracle of tests/test_vs_trec_eval_c.py (z-score files over generated runs, bit
for bit) and of test_conformance.py (out.test.aqZ, byte for byte).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest

from retrieval_eval import SetEvaluator
from retrieval_eval.cli import main

# AP: q1 1.0, q2 0.5; num_ret 2 and 2; GMAP's per-query values are log(AP): 0 and log(0.5).
QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n"
RUN = "q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\nq2 Q0 x 1 2 r\nq2 Q0 c 2 1 r\n"
ZSCORES = {
    "q1": {"map": (0.5, 0.25), "num_ret": (1.0, 2.0), "gm_map": (0.0, 1.0)},
    "q2": {"map": (0.5, 0.0), "gm_map": (0.0, 1.0), "P_1": (1.0, 0.0)},  # stddev 0: z 0 if equal, else -1000000
}


def _evaluator(**options: object) -> SetEvaluator:
    return SetEvaluator.from_trec(io.StringIO(QRELS), io.StringIO(RUN), zscores=ZSCORES, **options)


def test_hand_computed() -> None:
    results = _evaluator()
    assert results.per_query("map") == {"q1": 2.0, "q2": 0.0}  # (1 - 0.5) / 0.25; stddev 0 and value = mean
    assert results.aggregate("map") == 1.0
    assert results.per_query("num_ret") == {"q1": 0.5, "q2": -1_000_000.0}  # q2 has no num_ret line
    assert results.aggregate("num_ret") == 0.5 - 1_000_000.0  # a count's summary is the sum
    assert results.per_query("P_1") == {"q1": -1_000_000.0, "q2": -1_000_000.0}  # q1: none; q2: 0 != 1, stddev 0
    assert results.aggregate("gm_map") == pytest.approx(math.sqrt(0.5), rel=1e-15)  # exp(mean(0, log 0.5))
    assert results.aggregate("num_q") == 2.0  # counted, never converted
    assert results["q1"].score("map") == 1.0  # the per-query object keeps the raw value


def test_a_file_and_a_mapping_agree(tmp_path: Path) -> None:
    path = tmp_path / "zscores"
    path.write_text("".join(f"{q} {m} {mean!r} {sd!r}\n" for q, measures in ZSCORES.items()
                            for m, (mean, sd) in measures.items()))
    from_file = SetEvaluator.from_trec(io.StringIO(QRELS), io.StringIO(RUN), zscores=path)
    assert from_file.evaluate(["map", "num_ret", "P_1"]) == _evaluator().evaluate(["map", "num_ret", "P_1"])


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    for name, text in (("qrels", QRELS), ("run", RUN), ("zscores", "q1 num_ret 1 2\nq2 num_ret 2 1\n")):
        (tmp_path / name).write_text(text)
    assert main(["evaluate", "-q", "-m", "num_ret", "-Z", str(tmp_path / "zscores"), *options,
                 str(tmp_path / "qrels"), str(tmp_path / "run")]) == 0
    return capsys.readouterr().out


def test_every_format_gives_the_z_scores_of_counts_as_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """num_ret 2 and 2 against means 1 and 2: z 0.5 and 0, summed 0.5; trec lines print a count with 4 decimals."""
    assert _cli(tmp_path, capsys) == ("Znum_ret               \tq1\t0.5000\nZnum_ret               \tq2\t0.0000\n"
                                      "Znum_ret               \tall\t0.5000\n")
    document = json.loads(_cli(tmp_path, capsys, "--format", "json"))
    assert document["zscores"] is True and document["options"]["-Z"].endswith("zscores")
    assert document["per_query"] == {"q1": {"num_ret": 0.5}, "q2": {"num_ret": 0.0}}
    assert document["aggregate"] == {"num_ret": 0.5}
    assert _cli(tmp_path, capsys, "--format", "csv").splitlines()[1:] == [
        "r,q1,query,0.5", "r,q2,query,0.0", "r,all,summary,0.5"]
