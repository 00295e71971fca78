"""``retrieval-eval fuse`` as a user runs it, and the tuning it does (held-out folds, recorded)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from retrieval_eval.analysis.fusion import candidates_from_runs, get_method
from retrieval_eval.analysis.fusion.tuning import configurations, cross_validate, fold_assignment, mean_on, tune
from retrieval_eval.cli import main
from retrieval_eval.data import sample_paths
from retrieval_eval.io.formats import read_qrels_columns, read_run_columns

QRELS, SPARSE = sample_paths()
DENSE = str(Path(SPARSE).with_name("sample_dense.run"))


def _fuse(tmp_path: Path, *args: str) -> tuple[int, str]:
    out = tmp_path / "fused.run"
    code = main(["fuse", SPARSE, DENSE, "-o", str(out), *args])
    return code, out.read_text() if out.exists() else ""


def test_writes_a_tagged_trec_run_and_its_metadata(tmp_path: Path) -> None:
    code, text = _fuse(tmp_path, "--method", "rrf", "--param", "k=10", "--depth", "5")
    assert code == 0
    lines = [line.split() for line in text.splitlines()]
    assert {line[5] for line in lines} == {"rrf:sample+dense"}
    assert len(lines) == 12 * 5 + 2  # q1-q12 five each, q99 its 2 documents; q13 has none
    meta = json.loads((tmp_path / "fused.run.json").read_text())
    assert meta["method"] == "rrf" and meta["params"] == {"k": 10} and meta["depth"] == 5
    assert [i["name"] for i in meta["inputs"]] == ["sample", "dense"]
    # the file reads back as the same ranking
    back = read_run_columns(str(tmp_path / "fused.run"))
    assert back.doc_ids.tolist()[:5] == [line[2].encode() for line in lines[:5]]


def test_the_written_scores_are_the_methods(tmp_path: Path) -> None:
    code, text = _fuse(tmp_path, "--method", "rrf", "--depth", "0")
    assert code == 0
    runs = [read_run_columns(p) for p in (SPARSE, DENSE)]
    c = candidates_from_runs(runs)
    expected = get_method("rrf")(c, k=60)
    got = {(q, d): float(s) for q, _, d, _, s, _ in (line.split() for line in text.splitlines())}
    query = c.row_query()
    for i in range(c.n_rows):
        assert got[(c.query_ids[query[i]].decode(), c.doc_ids[i].decode())] == expected[i]


def test_refuses_to_write_over_an_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "a.run"
    copy.write_bytes(Path(SPARSE).read_bytes())
    assert main(["fuse", str(copy), DENSE, "-o", str(copy)]) == 2
    assert "is also an input" in capsys.readouterr().err
    assert copy.read_bytes() == Path(SPARSE).read_bytes()


def test_a_bad_line_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 x r\n")
    assert main(["fuse", str(bad), DENSE, "-o", str(tmp_path / "f.run")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and "Traceback" not in err
    assert not (tmp_path / "f.run").exists()


@pytest.mark.parametrize("args, message", [
    (["--optimize", "--qrels", QRELS], "--folds K or --train-queries"),
    (["--optimize"], "--optimize needs --qrels"),
    (["--method", "posfuse", "--folds", "3"], "posfuse needs --qrels"),
    (["--compare"], "--compare needs --qrels"),
    (["--param", "k=x"], "RRF's k must be a number"),
    (["--weights", "1,2,3", "--method", "wsum"], "expected 2 weights"),
    (["--param", "phi=0.5"], "takes no parameter 'phi'"),
])
def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, _ = _fuse(tmp_path, *args)
    assert code == 2
    assert message in capsys.readouterr().err


def test_folds_are_seeded_recorded_and_reported_on_held_out_queries(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _fuse(tmp_path, "--method", "wsum", "--optimize", "--step", "0.25", "--folds", "3", "--seed", "7",
                    "--qrels", QRELS, "-m", "nDCG@10", "--compare")
    assert code == 0
    out = capsys.readouterr().out
    assert "held-out queries" in out and "fused:wsum:sample+dense" in out
    tuning = json.loads((tmp_path / "fused.run.json").read_text())["tuning"]
    c = candidates_from_runs([read_run_columns(p) for p in (SPARSE, DENSE)])
    qrels = read_qrels_columns(QRELS)
    fold = fold_assignment(c, qrels, 3, 7)
    assert tuning["fold_of_query"] == {q.decode(): int(f) for q, f in zip(c.query_ids, fold)}
    assert tuning["fold_of_query"]["q99"] == -1  # not judged: in no fold


def test_tuning_on_the_reported_queries_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _fuse(tmp_path, "--optimize", "--tune-on-test", "--qrels", QRELS, "--compare")
    assert code == 0
    assert "tuned on (--tune-on-test): optimistic" in capsys.readouterr().out


def test_each_fold_is_tuned_without_its_own_queries() -> None:
    """The oracle: tuning again by hand on the other folds' queries gives each fold's configuration,
    and the cross-validated scores of a fold are the method's with that configuration."""
    c = candidates_from_runs([read_run_columns(p) for p in (SPARSE, DENSE)])
    qrels = read_qrels_columns(QRELS)
    method = get_method("rrf")
    configs = configurations(method, 2)
    cv = cross_validate(c, method, qrels, "AP", 3, 11, configs)
    for i in range(3):
        train = (cv.fold >= 0) & (cv.fold != i)
        by_hand = max(configs, key=lambda cfg: mean_on(c, method(c, **cfg), qrels, "AP", train))
        assert cv.tuned[i].params == tune(c, method, qrels, "AP", train, configs).params
        assert mean_on(c, method(c, **cv.tuned[i].params), qrels, "AP", train) == \
            mean_on(c, method(c, **by_hand), qrels, "AP", train)
        rows = c.rows_of(cv.fold == i)
        np.testing.assert_array_equal(cv.scores[rows], method(c, **cv.tuned[i].params)[rows])


def test_the_weight_grid_and_random_search() -> None:
    grid = configurations(get_method("wsum"), 3, step=0.5)
    assert [cfg["weights"] for cfg in grid] == [(0.0, 0.0, 1.0), (0.0, 0.5, 0.5), (0.0, 1.0, 0.0),
                                               (0.5, 0.0, 0.5), (0.5, 0.5, 0.0), (1.0, 0.0, 0.0)]
    drawn = configurations(get_method("rrf"), 2, search="random", trials=5, seed=3)
    assert drawn == configurations(get_method("rrf"), 2, search="random", trials=5, seed=3)
    assert all(1 <= cfg["k"] <= 100 for cfg in drawn)


def test_train_queries_are_learnt_from_and_left_out_of_the_report(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    train = tmp_path / "train.txt"
    train.write_text("q1\nq2\nq3\nq4\nq5\nq6\n")
    code, _ = _fuse(tmp_path, "--optimize", "--train-queries", str(train), "--qrels", QRELS, "-m", "AP", "--compare")
    assert code == 0
    assert "reported on 6 queries: queries not in --train-queries" in capsys.readouterr().out
    tuning = json.loads((tmp_path / "fused.run.json").read_text())["tuning"]
    c = candidates_from_runs([read_run_columns(p) for p in (SPARSE, DENSE)])
    qrels = read_qrels_columns(QRELS)
    learnt = np.isin(c.query_ids, [f"q{i}".encode() for i in range(1, 7)])
    assert tuning["best"] == tune(c, get_method("rrf"), qrels, "AP", learnt,
                                  configurations(get_method("rrf"), 2)).params
    train.write_text("q1\n\nq3\n")
    code, _ = _fuse(tmp_path, "--optimize", "--train-queries", str(train), "--qrels", QRELS)
    assert code == 2
    assert f"{train}:2: expected one query id" in capsys.readouterr().err


def test_help_names_every_registered_method(capsys: pytest.CaptureFixture[str]) -> None:
    # --help's list is plain text (help stays import-free): a method added to the registry must be added there
    import re

    from retrieval_eval.analysis.fusion.registry import method_names

    with pytest.raises(SystemExit):
        main(["fuse", "--help"])
    listed = set(re.findall(r"[\w-]+", capsys.readouterr().out))
    assert [name for name in method_names() if name not in listed] == []
