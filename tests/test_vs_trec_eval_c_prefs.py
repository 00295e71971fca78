"""Preference judgments (-R prefs, -R qrels_prefs) against the real trec_eval 10, at full precision.

The C trec_eval is the one ``conftest.py`` builds once per session for this module and
``test_vs_trec_eval_c.py`` (its ``trec_eval`` fixture, values printed with ``%.17g``). 320 generated queries, in 4 files of 80, each query with its own ids, cover what the
preference code treats apart:

- groups of one subgroup (trec_eval's equivalence classes) and of several (its preference arrays,
  with the transitive preferences that subgroups imply together);
- ties of rel_level within a subgroup, subgroups of one document or of one level (no preference),
  level 0 (the Rnonrel measures), documents in several subgroups and in several groups, groups that
  contradict each other;
- rankings with ties of score (trec_eval's preference code breaks them by doc_id ascending), judged
  documents the run lacks, unjudged ones it has, queries missing from the run, run-only queries.

Every group of several subgroups is consistent (trec_eval aborts otherwise): each subgroup takes a
random part of the group's documents at levels that keep the group's own order and its zeros.

Each file runs as ``-q -c -m all_prefs -R prefs`` (our default is -c; trec_eval without -c stops at
a query the run lacks), and as ``-R qrels_prefs`` on a qrels file of other judgments of the same
queries (the group in the second column). Every value must equal trec_eval's: the same lines, the
same numbers, bit for bit.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from retrieval_eval.cli import main

N_FILES = 4
QUERIES_PER_FILE = 80


def _query(rng: np.random.Generator, qid: str, qrels_shape: bool) -> tuple[list[str], list[str]]:
    """One query's preference lines and run lines."""
    n_docs = int(rng.integers(1, 9))
    docs = [f"{rng.choice(['d', 'D', 'doc-', 'a'])}{i}" for i in range(n_docs)]
    lines = []
    for g in range(int(rng.integers(1, 4))):
        group = f"u{g}"
        members = [d for d in docs if rng.random() < 0.75] or [docs[0]]
        # The group's own order: small integer levels, so ties are common; 0 is non-relevant.
        truth = {d: int(rng.choice([0, 0, 1, 2, 3])) for d in members}
        n_sub = 1 if qrels_shape or rng.random() < 0.5 else int(rng.integers(2, 4))
        for s in range(n_sub):
            part = members if n_sub == 1 else [d for d in members if rng.random() < 0.6]
            scale = float(rng.choice([1.0, 0.5, 2.5]))  # a subgroup may spell the same order differently
            for d in part:
                level = truth[d] * scale
                lines.append(f"{qid}\t{group}\t{d}\t{level:g}" if qrels_shape else
                             f"{qid} {group} s{s} {d} {level:g}")
    run = []
    if rng.random() >= 0.12:  # else: a query missing from the run
        pool = docs + [f"x{i}" for i in range(int(rng.integers(0, 4)))]
        scores = [1.0, 2.0, 3.0] if rng.random() < 0.5 else [float(v) for v in range(20)]
        for rank, d in enumerate(p for p in pool if rng.random() < 0.7):
            run.append(f"{qid} Q0 {d} {rank + 1} {float(rng.choice(scores))!r} tag")
    return lines, run


def _write(directory: Path, index: int) -> tuple[Path, Path, Path]:
    rng = np.random.default_rng(1000 + index)
    prefs, qrels, run = [], [], []
    for q in range(QUERIES_PER_FILE):
        lines, ranked = _query(rng, f"f{index}q{q}", qrels_shape=False)
        prefs += lines
        run += ranked
        lines, _ = _query(np.random.default_rng([index, q]), f"f{index}q{q}", qrels_shape=True)
        qrels += lines
    run.append(f"f{index}-runonly Q0 d1 1 1.0 tag")
    order = rng.permutation(len(prefs))
    paths = directory / f"prefs.{index}", directory / f"qrels.{index}", directory / f"run.{index}"
    paths[0].write_text("".join(prefs[i] + "\n" for i in order))
    paths[1].write_text("".join(line + "\n" for line in qrels))
    paths[2].write_text("".join(line + "\n" for line in run))
    return paths


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, Path, Path]]:
    directory = tmp_path_factory.mktemp("prefs")
    return [_write(directory, i) for i in range(N_FILES)]


def _theirs(binary: Path, args: list[str]) -> dict[tuple[str, str], float | str]:
    done = subprocess.run([str(binary), *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"trec_eval {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
    values: dict[tuple[str, str], float | str] = {}
    for line in done.stdout.splitlines():
        name, qid, value = line.split("\t")
        values[(name.strip(), qid)] = value if name.strip() == "runid" else float(value)
    return values


def _ours(args: list[str]) -> dict[tuple[str, str], float | str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["evaluate", "--format", "json", *args])
    assert code == 0, err.getvalue()
    document = json.loads(out.getvalue())
    values: dict[tuple[str, str], float | str] = {("runid", "all"): document["run_id"]}
    for qid, measures in document["per_query"].items():
        values.update({(name, qid): value for name, value in measures.items()})
    values.update({(name, "all"): value for name, value in document["aggregate"].items()})
    return values


VARIANTS = {  # name: (trec_eval's arguments, ours, the judgments file: 0 prefs, 1 qrels)
    "prefs-c": (["-q", "-c", "-m", "all_prefs", "-R", "prefs"], ["-q", "-m", "all_prefs", "-R", "prefs"], 0),
    "qrels_prefs-c": (["-q", "-c", "-m", "all_prefs", "-R", "qrels_prefs"],
                      ["-q", "-m", "all_prefs", "-R", "qrels_prefs"], 1),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("index", range(N_FILES))
def test_preference_values_match_trec_eval(trec_eval: Path, files: list[tuple[Path, Path, Path]],
                                           variant: str, index: int) -> None:
    """The same (measure, query) lines as trec_eval, each value equal to its full-precision one."""
    theirs_args, ours_args, judgments = VARIANTS[variant]
    paths = files[index]
    inputs = [str(paths[judgments]), str(paths[2])]
    theirs, ours = _theirs(trec_eval, [*theirs_args, *inputs]), _ours([*ours_args, *inputs])
    assert sorted(ours) == sorted(theirs)
    differ = [f"{key}: ours {ours[key]!r}, trec_eval {value!r}" for key, value in theirs.items() if ours[key] != value]
    assert not differ, f"{len(differ)} values differ, e.g.:\n" + "\n".join(differ[:20])


def test_cases_cover_the_delicate_shapes(files: list[tuple[Path, Path, Path]]) -> None:
    """The generated files hold every shape the module's docstring promises (so a change to the
    generator cannot quietly drop one)."""
    from retrieval_eval import SetEvaluator

    shapes: set[str] = set()
    for prefs_path, _, run_path in files:
        lines = [line.split() for line in prefs_path.read_text().splitlines()]
        by_group: dict[tuple[str, str], set[str]] = {}
        by_subgroup: dict[tuple[str, str, str], list[float]] = {}
        for qid, group, sub, doc, level in lines:
            by_group.setdefault((qid, group), set()).add(sub)
            by_subgroup.setdefault((qid, group, sub), []).append(float(level))
        shapes |= {"several subgroups" for subs in by_group.values() if len(subs) > 1}
        shapes |= {"one-document subgroup" for levels in by_subgroup.values() if len(levels) == 1}
        shapes |= {"tied levels" for levels in by_subgroup.values() if len(set(levels)) < len(levels)}
        shapes |= {"level 0" for levels in by_subgroup.values() if 0.0 in levels}
        docs_in_groups: dict[tuple[str, str], set[str]] = {}
        for qid, group, _, doc, _ in lines:
            docs_in_groups.setdefault((qid, doc), set()).add(group)
        shapes |= {"document in several groups" for groups in docs_in_groups.values() if len(groups) > 1}
        ev = SetEvaluator.from_trec(prefs_path, run_path, rel_format="prefs")
        shapes |= {"query missing from the run"} if ev.missing_from_run else set()
    assert shapes == {"several subgroups", "one-document subgroup", "tied levels", "level 0",
                      "document in several groups", "query missing from the run"}
