"""Differential test against the real trec_eval 10, built from its unchanged C source.

What it checks
--------------
trec_eval 10.0's source (``../shared/reference/trec_eval-10-src``, see its SOURCE.md) is copied
into a pytest temporary directory and built with ``make``. Only the copy is patched, and only so
that values print at full precision (``%.17g`` instead of ``%6.4f`` in ``meas_print_single.c`` and
``meas_print_final.c``); no measure code is touched and nothing is committed.

400 seeded cases (``strategies.random_dataset`` in six shapes, plus hand-written edge queries) are
written as 16 pairs of qrels and run files, 25 cases each, every case with its own query ids. They
have ties in score (broken by doc id across ``'a' > 'D' > 'd2' > 'd10'``), graded judgments 0..3,
negative judgments (-1, "pooled but unjudged"), qrels queries the run lacks, run queries the qrels
lack, rankings that ``-J`` empties, and queries with no relevant document.

For each pair and each variant ``-q -c -m all_trec`` plus ``-l2``, ``-M 5`` and ``-J``, both
``trec_eval`` and our CLI (``retrieval_eval.cli.main``, the ``python -m retrieval_eval evaluate``
entry point, in process) run with the same arguments, and:

* ``test_values_match_trec_eval``: the same (measure, query) lines, and every value equal to
  trec_eval's full-precision value to 1e-12 (relative) / 1e-15 (absolute); our values are read from
  ``--format json``, which is full precision. ``runid`` and ``relstring`` are compared as text.
* ``test_printed_output_matches_trec_eval``: our default output is byte-identical to what unpatched
  trec_eval prints, i.e. trec_eval's values formatted with its own ``%6.4f``.

The only exceptions are the differences documented in docs/conventions.md, section "Differences
from trec_eval", each handled by name in ``_documented`` below (NaN results, summary ``num_rel``
under ``-c``). Anything else fails. (This test found that our summary means were summed in another
order than trec_eval's, which changed the printed 4th decimal of a few lines; they now follow
trec_eval's order: ``test_summary_mean_is_summed_in_query_order``.)

Judgment groups and z-scores (issue 33): ``test_judgment_groups_match_trec_eval`` runs ``-R qrels_jg``
on 300 generated cases of their own (see their section below), and ``test_zscores_match_trec_eval``
runs ``-Z`` on four of the batches above with z-score files made from trec_eval's values; both
compare every value bit for bit and the printed output byte for byte.

Running it
----------
``python -m pytest tests/test_vs_trec_eval_c.py`` (a C compiler and ``make`` are needed; without
them, or without the source, the tests are skipped with that reason, and any other build failure
fails them). The build (conftest.py's ``trec_eval`` fixture) reads the source
from ``../shared/reference/trec_eval-10-src``, or from ``$RETRIEVAL_EVAL_TREC_EVAL_SRC`` (a
checkout of usnistgov/trec_eval at commit f4253652c8ef, version 10.0). The build takes about
3 seconds and the whole module about 10.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from strategies import Qrels, Run, random_dataset

from retrieval_eval.cli import main

#: Full precision, not bit equality: every per-query value is bit-identical to trec_eval's except
#: ndcg_rel and Rndcg, whose running sums are one global cumulative sum over all queries minus the
#: sum before the query (measures/gains.py, segment_cumsum): a few ulps, up to ~5e-14 relative here.
REL_TOL = 1e-12
ABS_TOL = 1e-15

#: The arguments common to every run, then the variants (added to them).
BASE_ARGS = ("-q", "-c", "-m", "all_trec")
VARIANTS = {
    "plain": (),
    "l2": ("-l2",),
    "M5": ("-M", "5"),
    "J": ("-J",),
}

N_BATCHES = 16
CASES_PER_BATCH = 25

#: (largest number of judged queries, random_dataset parameters) of each shape; case i uses
#: SHAPES[i % len(SHAPES)] with seed i and 1 + i % (that number) judged queries.
SHAPES: tuple[tuple[int, dict[str, object]], ...] = (
    # graded 0..3, 10% negative judgments, four score values: ties everywhere
    (4, {"max_depth": 25, "n_docs": 20}),
    # binary judgments, six score values
    (4, {"max_depth": 30, "n_docs": 30, "levels": (0, 1), "level_weights": (0.7, 0.3),
         "score_values": tuple(float(s) for s in range(6))}),
    # ids of mixed case and shape: ties broken across byte order
    (4, {"max_depth": 20, "n_docs": 6, "id_prefixes": ("d", "D", "doc-", "a", "Z_")}),
    # short rankings, many negative judgments, missing and R = 0 queries: -J empties rankings
    (4, {"max_depth": 4, "n_docs": 8, "negative_rate": 0.45, "missing_rate": 0.2, "empty_run_rate": 0.15,
         "no_relevant_rate": 0.3, "level_weights": (0.5, 0.3, 0.1, 0.1)}),
    # continuous scores rounded to one decimal: few ties, skewed grades
    (4, {"max_depth": 40, "n_docs": 50, "score_values": None, "level_weights": (0.5, 0.3, 0.15, 0.05)}),
    # deeper rankings, so that the cut-offs 30 and 100 matter (fewer queries: they are larger)
    (2, {"max_depth": 110, "n_docs": 120, "levels": (0, 1, 2), "level_weights": (0.8, 0.15, 0.05)}),
)

#: Measures trec_eval prints with "%ld" (every other number is a double printed with "%6.4f").
LONG_MEASURES = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})
TEXT_MEASURES = frozenset({"runid", "relstring"})


# --------------------------------------------------------------------------------------------------
# Building trec_eval


# The build of trec_eval is the session fixture ``trec_eval`` of conftest.py (shared with
# test_vs_trec_eval_c_prefs.py, so that it is built once per session).


# --------------------------------------------------------------------------------------------------
# The cases


def _edge_queries(batch: int) -> tuple[Qrels, Run]:
    """Hand-written queries for each batch: the shapes random data rarely produces."""
    p = f"edge{batch}"
    qrels: Qrels = {
        f"{p}-nonpool": {"d1": 1, "d2": 0},            # ranking of NONPOOL docs only: -J empties it
        f"{p}-unjudged": {"d1": 2, "d2": -1, "d3": -1},  # ranking of negative judgments only
        f"{p}-ties": {"d2": 1, "d10": 2, "D3": 0, "a": 3, "b": -1},  # one score for all
        f"{p}-norel": {"d1": 0, "d2": 0, "d3": -1},     # R = 0
        f"{p}-grade1": {"d1": 1, "d2": 1, "d3": 3},      # -l2 leaves one relevant, not retrieved
        f"{p}-missing": {"d1": 1, "d2": 3},             # not in the run
    }
    run: Run = {
        f"{p}-nonpool": {"x1": 1.0, "x2": 0.5},
        f"{p}-unjudged": {"d2": 2.0, "d3": 1.0, "x": 1.0},
        f"{p}-ties": {d: 1.0 for d in ("d2", "d10", "D3", "a", "b", "x9", "x10")},
        f"{p}-norel": {"d1": 3.0, "d3": 2.0, "d4": 1.0},
        f"{p}-grade1": {"d2": 1.0, "d1": 0.5, "d9": 0.25},
        f"{p}-runonly": {"d1": 1.0},
    }
    return qrels, run


def _case(index: int) -> tuple[Qrels, Run]:
    """Case ``index``: 1 to 4 judged queries (ids ``<index>-<q>``) and one run-only query."""
    max_queries, shape = SHAPES[index % len(SHAPES)]
    return random_dataset(index, 1 + index % max_queries, **shape)  # type: ignore[arg-type]


@dataclass(frozen=True, eq=False)
class Batch:
    """One qrels file and one run file holding many cases."""

    qrels_path: Path
    run_path: Path
    qrels: Qrels


def _write_batch(directory: Path, batch: int) -> Batch:
    qrels, run = _edge_queries(batch)
    for index in range(batch * CASES_PER_BATCH, (batch + 1) * CASES_PER_BATCH):
        case_qrels, case_run = _case(index)
        qrels.update(case_qrels)
        run.update(case_run)
    rng = np.random.default_rng(batch)
    qrels_lines = [f"{qid} 0 {doc} {value}\n" for qid, judged in qrels.items() for doc, value in judged.items()]
    run_lines = [
        # rank column 1..n in file order (ignored by trec_eval); run tags vary, the last line's wins
        f"{qid} Q0 {doc} {rank} {score!r} tag{rng.integers(3)}\n"
        for qid in rng.permutation(list(run)) for rank, (doc, score) in enumerate(run[qid].items(), 1)
    ]
    qrels_path, run_path = directory / f"qrels.{batch}", directory / f"run.{batch}"
    qrels_path.write_text("".join(qrels_lines))
    run_path.write_text("".join(run_lines))
    return Batch(qrels_path, run_path, qrels)


@pytest.fixture(scope="module")
def batches(tmp_path_factory: pytest.TempPathFactory) -> list[Batch]:
    directory = tmp_path_factory.mktemp("cases")
    return [_write_batch(directory, b) for b in range(N_BATCHES)]


# --------------------------------------------------------------------------------------------------
# Running both programs


def _parse(text: str) -> dict[tuple[str, str], str]:
    """``{(measure, query): value text}`` of trec_eval-format lines, checking no line repeats."""
    values: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        key = (name.strip(), qid)
        assert key not in values, f"line printed twice: {line!r}"
        values[key] = value
    return values


def _ours(args: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["evaluate", *args])
    assert code == 0, f"retrieval_eval evaluate {' '.join(args)} exited {code}:\n{err.getvalue()}"
    return out.getvalue()


@dataclass(frozen=True)
class Outputs:
    theirs: str       # trec_eval, values at %.17g
    ours: str         # our default trec output (4 decimals)
    ours_json: dict   # our --format json report (full precision)


@functools.cache
def _outputs(binary: Path, batch: Batch, variant: str) -> Outputs:
    args = [*BASE_ARGS, *VARIANTS[variant], str(batch.qrels_path), str(batch.run_path)]
    done = subprocess.run([str(binary), *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"trec_eval {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
    return Outputs(done.stdout, _ours(args), json.loads(_ours(["--format", "json", *args])))


def _number(text: str) -> float:
    return float(text)  # also reads trec_eval's "-nan" and "nan"


# --------------------------------------------------------------------------------------------------
# Documented differences (docs/conventions.md, "Differences from trec_eval")


def _documented(theirs: dict[tuple[str, str], str], batch: Batch) -> dict[tuple[str, str], float]:
    """trec_eval's numeric values, with each documented difference replaced by our documented value.

    * "-nan results": trec_eval prints -nan for ``iprec_at_recall`` at c = 0 and ``11pt_avg`` on an
      empty ranking (here: a ranking -J empties), and for ``Rndcg`` with an empty ideal list; we give
      0. Their summaries are then -nan too; ours are the means with those 0 values.
    * "summary num_rel under -c": trec_eval recounts it as the qrels entries > 0, ignoring -l; ours is
      the sum of the per-query values (the same number unless -l is above 1).

    Each replaced value is checked to be what the documentation says trec_eval gives.
    """
    expected: dict[tuple[str, str], float] = {}
    patched: set[str] = set()
    for (name, qid), text in theirs.items():
        if name in TEXT_MEASURES:
            continue
        value = _number(text)
        if math.isnan(value) and qid != "all":
            empty_ranking = name.startswith(("iprec_at_recall_", "11pt_avg")) and theirs[("num_ret", qid)] == "0"
            judged = batch.qrels[qid]
            no_ideal = name == "Rndcg" and not any(v > 0 for v in judged.values())
            assert empty_ranking or no_ideal, f"trec_eval gives NaN for {name} on {qid}, not a documented case"
            value = 0.0
            patched.add(name)
        expected[(name, qid)] = value
    in_order = sorted(batch.qrels, key=lambda q: q.encode())  # trec_eval's query order
    for name in patched:
        assert math.isnan(expected[(name, "all")]), name
        expected[(name, "all")] = _sequential_mean([expected[(name, qid)] for qid in in_order])
    if ("num_rel", "all") in expected:
        assert expected[("num_rel", "all")] == sum(v > 0 for j in batch.qrels.values() for v in j.values())
        expected[("num_rel", "all")] = float(sum(expected[("num_rel", qid)] for qid in batch.qrels))
    return expected


def _close(ours: float, theirs: float) -> bool:
    return math.isclose(ours, theirs, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _sequential_mean(values: list[float]) -> float:
    """trec_eval's mean: the values added one by one (in query order), then divided."""
    total = 0.0
    for value in values:
        total += value
    return total / len(values)


# --------------------------------------------------------------------------------------------------
# Tests


def _params() -> list[object]:
    return [pytest.param(variant, batch, id=f"{variant}-batch{batch}") for variant in VARIANTS
            for batch in range(N_BATCHES)]


@pytest.mark.parametrize(("variant", "batch_index"), _params())
def test_values_match_trec_eval(trec_eval: Path, batches: list[Batch], variant: str, batch_index: int) -> None:
    """The same (measure, query) lines as trec_eval, every value equal at full precision."""
    batch = batches[batch_index]
    out = _outputs(trec_eval, batch, variant)
    theirs, ours_lines = _parse(out.theirs), _parse(out.ours)
    assert list(ours_lines) == list(theirs), (
        f"lines: only ours {sorted(set(ours_lines) - set(theirs))[:10]}, "
        f"only trec_eval {sorted(set(theirs) - set(ours_lines))[:10]}"
    )
    expected = _documented(theirs, batch)
    problems = []
    for (name, qid), text in theirs.items():
        ours = out.ours_json["per_query"][qid] if qid != "all" else out.ours_json["aggregate"]
        if name == "runid":
            got, want = out.ours_json["run_id"], text
        elif name == "relstring":
            got, want = f"'{ours[name]}'", text
        else:
            got, want = ours[name], expected[(name, qid)]
            if _close(got, want):
                continue
        if got != want:
            problems.append(f"{name} {qid}: ours {got!r}, trec_eval {want!r} (printed {text!r})")
    assert not problems, f"{len(problems)} values differ, e.g.:\n" + "\n".join(problems[:20])


@pytest.mark.parametrize(("variant", "batch_index"), _params())
def test_printed_output_matches_trec_eval(trec_eval: Path, batches: list[Batch], variant: str,
                                          batch_index: int) -> None:
    """Our default output is what unpatched trec_eval prints: its values through its own "%6.4f"."""
    batch = batches[batch_index]
    out = _outputs(trec_eval, batch, variant)
    expected = _documented(_parse(out.theirs), batch)
    lines = []
    for line in out.theirs.splitlines():
        padded, qid, value = line.split("\t")
        name = padded.strip()
        if name not in TEXT_MEASURES and name not in LONG_MEASURES:
            value = f"{expected[(name, qid)]:6.4f}"
        elif name == "num_rel" and qid == "all":
            value = f"{expected[(name, qid)]:.0f}"  # the documented summary num_rel, see _documented
        lines.append(f"{padded}\t{qid}\t{value}\n")
    want_text = "".join(lines)
    ours, want = _parse(out.ours), _parse(want_text)
    assert list(ours) == list(want)
    differ = sorted(key for key in want if ours[key] != want[key])
    assert not differ, [(key, ours[key], want[key]) for key in differ]
    assert out.ours == want_text


def test_summary_mean_is_summed_in_query_order(trec_eval: Path, tmp_path: Path) -> None:
    """8 queries with 2 relevant documents each, P_20 = 0, 1, 1, 1, 2, 1, 0, 1 relevant out of 20.

    The mean is 7/160 = 0.04375: trec_eval's sequential sum gives 0.043749999999999997 and prints
    0.0437; NumPy's pairwise mean gives 0.043750000000000004, which would print 0.0438. This test
    found that our summaries used NumPy's mean; they now add query after query, as trec_eval.
    """
    found = [0, 1, 1, 1, 2, 1, 0, 1]
    qrels = "".join(f"q{i} 0 rel{j} 1\n" for i in range(1, 9) for j in range(2))
    run = "".join(f"q{i} Q0 {doc} 1 {1.0 - j / 10} run\n" for i, k in enumerate(found, 1)
                  for j, doc in enumerate([f"rel{j}" for j in range(k)] or ["other"]))
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    args = ["-m", "P.20", str(tmp_path / "qrels"), str(tmp_path / "run")]
    theirs = subprocess.run([str(trec_eval), *args], capture_output=True, text=True, check=True).stdout
    value = float(theirs.split("\t")[2])
    assert value == _sequential_mean([k / 20 for k in found]) == 0.043749999999999997
    printed = f"P_20                  \tall\t{value:6.4f}\n"  # what unpatched trec_eval prints
    assert printed.endswith("0.0437\n")
    assert _ours(args) == printed


def test_documented_differences_are_exercised(trec_eval: Path, batches: list[Batch]) -> None:
    """The exceptions _documented makes do occur in the data (so they are tested, not dead code)."""
    j = [_parse(_outputs(trec_eval, batch, "J").theirs) for batch in batches]
    nan_lines = [key for out in j for key, text in out.items() if "nan" in text]
    assert len(nan_lines) >= 100, "-J should empty rankings, so trec_eval prints -nan for iprec / 11pt_avg"
    l2 = _outputs(trec_eval, batches[0], "l2")
    theirs = int(_parse(l2.theirs)[("num_rel", "all")])
    assert theirs != l2.ours_json["aggregate"]["num_rel"], "-c -l2 should show the summary num_rel difference"


def test_cases_cover_the_delicate_shapes() -> None:
    """The generated data does contain what the module docstring promises."""
    qrels: Qrels = {}
    run: Run = {}
    for b in range(N_BATCHES):
        q, r = _edge_queries(b)
        qrels.update(q)
        run.update(r)
        for index in range(b * CASES_PER_BATCH, (b + 1) * CASES_PER_BATCH):
            q, r = _case(index)
            qrels.update(q)
            run.update({qid: docs for qid, docs in r.items() if docs})  # an empty ranking writes no line
    values = [v for judged in qrels.values() for v in judged.values()]
    assert N_BATCHES * CASES_PER_BATCH >= 400
    assert set(values) == {-1, 0, 1, 2, 3}
    assert sum(q not in run for q in qrels) >= 50, "qrels queries missing from the run"
    assert sum(q not in qrels for q in run) >= 400, "run queries missing from the qrels"
    assert sum(not any(v > 0 for v in judged.values()) for judged in qrels.values()) >= 50, "R = 0"
    tied = sum(len(set(scores.values())) < len(scores) for scores in run.values())
    assert tied >= 300, "rankings with tied scores"
    emptied_by_j = [q for q in qrels if q in run and all(qrels[q].get(d, -1) < 0 for d in run[q])]
    assert len(emptied_by_j) >= 30, "rankings that -J empties"


# --------------------------------------------------------------------------------------------------
# -R qrels_jg: judgment groups (issue 33)
#
# 300 seeded cases in 4 pairs of files: 1 to 3 queries a case, each with 1 to 4 judgment groups whose
# ids sort differently as bytes and as numbers ("0" < "1" < "10" < "2" < "B" < "a"), the same document
# judged in several groups with different values (-1..3), tied scores, queries the run lacks (-c scores
# them on trec_eval's one-document "bogus" ranking) and run queries without judgments; -J ranks each
# group's judged documents apart.

JG_BATCHES = 4
JG_CASES_PER_BATCH = 75
JG_GROUPS = ("0", "1", "10", "2", "B", "a")
JG_BASE = ("-q", "-c", "-R", "qrels_jg")
JG_VARIANTS = {
    "plain": ("-m", "qrels_jg"),
    "l2": ("-m", "qrels_jg", "-l2"),
    "M3": ("-m", "qrels_jg", "-M", "3"),
    "J": ("-m", "qrels_jg", "-J"),
    "cutoffs": ("-m", "P_avgjg.1,2,3,7,40", "-m", "Rprec_mult_avgjg.0.5,1.0,1.5,3.0", "-m", "map_avgjg", "-l0"),
}
GroupQrels = dict[str, dict[str, dict[str, int]]]


def _jg_case(index: int) -> tuple[GroupQrels, Run]:
    rng = np.random.default_rng(10_000 + index)
    docs = [f"d{i}" for i in range(int(rng.integers(3, 12)))] + ["D1", "a"]
    qrels: GroupQrels = {}
    run: Run = {}
    for q in range(1 + index % 3):
        qid = f"jg{index}-{q}"
        groups = rng.choice(JG_GROUPS, size=int(rng.integers(1, 5)), replace=False)
        qrels[qid] = {str(g): {str(d): int(rng.choice([-1, 0, 1, 2, 3], p=[0.1, 0.4, 0.3, 0.1, 0.1]))
                               for d in rng.choice(docs, size=int(rng.integers(1, len(docs) + 1)), replace=False)}
                      for g in groups}
        if rng.random() < 0.15:  # missing from the run
            continue
        ranked = rng.choice([*docs, "u1", "u2", "u3"], size=int(rng.integers(1, len(docs) + 3)), replace=False)
        run[qid] = {str(d): float(rng.choice([0.5, 1.0, 1.5, 2.0])) for d in ranked}
    run[f"jg{index}-runonly"] = {"d1": 1.0}
    return qrels, run


@dataclass(frozen=True, eq=False)
class JgBatch:
    qrels_path: Path
    run_path: Path
    qrels: GroupQrels
    run: Run


@pytest.fixture(scope="module")
def jg_batches(tmp_path_factory: pytest.TempPathFactory) -> list[JgBatch]:
    directory = tmp_path_factory.mktemp("jg")
    made = []
    for batch in range(JG_BATCHES):
        qrels: GroupQrels = {}
        run: Run = {}
        for index in range(batch * JG_CASES_PER_BATCH, (batch + 1) * JG_CASES_PER_BATCH):
            case_qrels, case_run = _jg_case(index)
            qrels.update(case_qrels)
            run.update(case_run)
        qrels_path, run_path = directory / f"qrels_jg.{batch}", directory / f"run_jg.{batch}"
        qrels_path.write_text("".join(f"{q} {g} {d} {v}\n" for q, groups in qrels.items()
                                      for g, judged in groups.items() for d, v in judged.items()))
        run_path.write_text("".join(f"{q} Q0 {d} {rank} {score!r} jg\n" for q, docs in run.items()
                                    for rank, (d, score) in enumerate(docs.items(), 1)))
        made.append(JgBatch(qrels_path, run_path, qrels, run))
    return made


def _both(binary: Path, args: list[str]) -> tuple[dict[tuple[str, str], str], str, dict]:
    """trec_eval's lines (full precision), our trec text and our JSON report, for the same arguments."""
    done = subprocess.run([str(binary), *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"trec_eval {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
    return _parse(done.stdout), _ours(args), json.loads(_ours(["--format", "json", *args]))


@pytest.mark.parametrize(("variant", "batch_index"), [pytest.param(v, b, id=f"{v}-jg{b}") for v in JG_VARIANTS
                                                      for b in range(JG_BATCHES)])
def test_judgment_groups_match_trec_eval(trec_eval: Path, jg_batches: list[JgBatch], variant: str,
                                         batch_index: int) -> None:
    """-R qrels_jg: the same lines as trec_eval, every value bit for bit, and the printed output byte for byte."""
    batch = jg_batches[batch_index]
    args = [*JG_BASE, *JG_VARIANTS[variant], str(batch.qrels_path), str(batch.run_path)]
    theirs, ours_text, ours = _both(trec_eval, args)
    assert list(_parse(ours_text)) == list(theirs)
    differ = []
    for (name, qid), text in theirs.items():
        if name == "runid":
            continue
        got = (ours["per_query"][qid] if qid != "all" else ours["aggregate"])[name]
        if got != float(text):
            differ.append((name, qid, got, text))
    assert not differ, differ[:10]
    printed = "".join(f"{name:<22}\t{qid}\t{text if name in ('runid', 'num_q') else format(float(text), '6.4f')}\n"
                      for (name, qid), text in theirs.items())
    assert ours_text == printed


def test_judgment_group_cases_cover_the_delicate_shapes() -> None:
    qrels: GroupQrels = {}
    run: Run = {}
    for index in range(JG_BATCHES * JG_CASES_PER_BATCH):
        q, r = _jg_case(index)
        qrels.update(q)
        run.update(r)
    assert JG_BATCHES * JG_CASES_PER_BATCH >= 300
    assert sum(len(groups) > 1 for groups in qrels.values()) >= 300, "queries with several groups"
    several = sum(len({d for judged in groups.values() for d in judged}) < sum(map(len, groups.values()))
                  for groups in qrels.values())
    assert several >= 300, "documents judged in several groups"
    assert sum(q not in run for q in qrels) >= 50, "qrels queries missing from the run"
    assert sum(len(set(docs.values())) < len(docs) for docs in run.values()) >= 300, "tied scores"
    assert sum(all(v < 1 for v in judged.values()) for groups in qrels.values() for judged in groups.values()) >= 50


# --------------------------------------------------------------------------------------------------
# -Z: z-scores (issue 33)
#
# For 4 of the batches above, a z-score file made from trec_eval's own values of -q -c -m all_trec:
# most (query, measure) pairs get a random mean and stddev, some a stddev of 0 with the mean equal to
# the value (z = 0) or not (-1000000), some none (-1000000), and one query none at all. gm_map and
# gm_bpref (whose per-query value is log(max(x, 1e-5))) get entries too. Every query of the file ends
# with a measure named '~', and the file with a query named '~': trec_eval's binary searches read one
# entry past the end of a list when the name sought sorts after all of it (get_zscores.c), and these
# entries keep them inside the file. Values trec_eval gives as NaN (a documented difference) get no
# entry, so both sides print -1000000 for them.

Z_BATCHES = (0, 3, 7, 12)


def _zscore_file(path: Path, theirs: dict[tuple[str, str], str], seed: int) -> None:
    rng = np.random.default_rng(seed)
    queries = sorted({qid for _, qid in theirs if qid != "all"}, key=str.encode)
    lines = []
    for number, qid in enumerate(queries):
        if number == 1:
            continue  # a query with no entry at all
        names = [name for name, q in theirs if q == qid and name not in TEXT_MEASURES] + ["gm_map", "gm_bpref"]
        for name in names:
            value = float(theirs.get((name, qid), "0.5"))
            draw = rng.random()
            if math.isnan(value) or draw < 0.15:
                continue
            if draw < 0.25:
                lines.append(f"{qid} {name} {value!r} 0\n")  # z = 0
            elif draw < 0.3:
                lines.append(f"{qid} {name} {value + 1.0!r} 0.0\n")  # -1000000
            else:
                lines.append(f"{qid} {name} {rng.normal(value, 0.3)!r} {rng.uniform(0.01, 2.0)!r}\n")
        lines.append(f"{qid} ~ 0 1\n")
    lines.append("~ ~ 0 1\n")
    path.write_text("".join(rng.permutation(lines)))


@pytest.mark.parametrize("batch_index", Z_BATCHES)
def test_zscores_match_trec_eval(trec_eval: Path, batches: list[Batch], tmp_path: Path, batch_index: int) -> None:
    """-Z: the same Z lines as trec_eval, every value bit for bit, the printed output byte for byte."""
    batch = batches[batch_index]
    zfile = tmp_path / "zscores"
    _zscore_file(zfile, _parse(_outputs(trec_eval, batch, "plain").theirs), batch_index)
    args = [*BASE_ARGS, "-Z", str(zfile), str(batch.qrels_path), str(batch.run_path)]
    theirs, ours_text, ours = _both(trec_eval, args)
    assert list(_parse(ours_text)) == list(theirs)
    in_order = sorted(batch.qrels, key=lambda q: q.encode())
    # Documented: under -c, trec_eval's summary num_rel recounts the qrels (not z-scored); ours sums the queries.
    theirs[("Znum_rel", "all")] = repr(sum(float(theirs[("Znum_rel", q)]) for q in in_order))
    differ = []
    for (name, qid), text in theirs.items():
        if name in TEXT_MEASURES:
            continue
        got = (ours["per_query"][qid] if qid != "all" else ours["aggregate"])[name[1:]]
        if got != float(text):  # bit for bit
            differ.append((name, qid, got, text))
    assert not differ, differ[:10]
    assert sum(text == "-1000000" for text in theirs.values()) >= 50
    assert sum(text == "0" for (name, qid), text in theirs.items() if qid != "all") >= 50
    printed = "".join(f"{name:<22}\t{qid}\t{text}\n" if name in TEXT_MEASURES else
                      f"Z{name[1:]:<22}\t{qid}\t{float(text):6.4f}\n" for (name, qid), text in theirs.items())
    assert ours_text == printed
