"""Comparing runs: their means side by side, paired significance tests with corrections, and report tables.

:func:`compare` evaluates every run on the same queries (the qrels are read once), then compares each
run with a baseline, or every pair, on each measure: the mean difference, the test's raw and
corrected p-values, the effect size, a confidence interval and the wins, ties and losses over
queries. The statistics themselves are in :mod:`retrieval_eval.analysis.stats`; this module chooses what to
compare and presents it. The multiple-testing family is all the comparisons of one measure.

>>> from retrieval_eval import SetEvaluator
>>> from retrieval_eval import compare
>>> qrels = {f"q{i}": {"a": 1, "b": 1, "c": 0} for i in range(8)}
>>> good = {q: {"a": 3.0, "b": 2.0, "c": 1.0} for q in qrels}
>>> bad = {q: {"c": 3.0, "a": 2.0, "b": 1.0} for q in qrels}
>>> result = compare(None, {"bad": SetEvaluator.from_dict(qrels, bad), "good": SetEvaluator.from_dict(qrels, good)},
...                  ["AP"], test="permutation", seed=1)
>>> row = result.comparisons[0]
>>> row.baseline, row.run, round(row.delta, 4), round(row.p_value, 4), row.significant
('bad', 'good', 0.4167, 0.0078, True)
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from attrs import asdict, fields, frozen

from ..evaluators import SetEvaluator
from ..evaluators.options import _read_options
from ..measures import Measure, parse, parse_list
from ..model import FloatArray, MissingExtraError, RetrievalEvalError
from .risk import RiskRow, _check_alpha, risk_rows, risk_table

__all__ = ["DEFAULT_MEASURES", "Comparison", "PairComparison", "compare"]

#: What ``compare`` reports without measures: the usual headline measures of ad hoc retrieval.
DEFAULT_MEASURES = ("AP", "nDCG@10", "P@10", "RR", "R@1000")

_TEST_NAMES = {
    "t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "sign": "sign test",
    "permutation": "paired randomisation test", "bootstrap": "paired bootstrap test",
    "tukey": "randomised Tukey HSD",
}
_CORRECTION_NAMES = {"none": "no correction", "bonferroni": "Bonferroni", "holm": "Holm", "bh": "Benjamini-Hochberg"}


@frozen
class PairComparison:
    """One run against another on one measure (``delta`` is ``run`` minus ``baseline``)."""

    measure: str
    baseline: str
    run: str
    delta: float
    p_value: float
    p_adjusted: float
    significant: bool
    effect_size: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int


@frozen
class Comparison:
    """The result of :func:`compare`: the runs' means and their pairwise comparisons.

    ``queries`` are the queries every run was compared on; ``means[run][measure]`` their summary
    value on those queries (what ``evaluate`` prints). Comparisons are in measure order, then run
    order. :meth:`to_dict` is the JSON form, whose shape is a stable contract.
    """

    test: str
    correction: str
    alpha: float
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    means: Mapping[str, Mapping[str, float]]
    comparisons: tuple[PairComparison, ...]
    queries: tuple[str, ...]
    baseline: str
    all_pairs: bool = False
    rel: int = 1  #: the relevance level the measures were parsed with
    #: With ``compare(..., risk=ALPHA)``: URisk, TRisk and GeoRisk of every run against the baseline,
    #: in measure order, then run order (:mod:`retrieval_eval.analysis.risk`); empty otherwise.
    risks: tuple[RiskRow, ...] = ()

    # ------------------------------------------------------------------ what was found
    def significant_worse(self, measure: str | None = None) -> list[PairComparison]:
        """Comparisons where a run is significantly worse than the baseline (after correction)."""
        key = None if measure is None else str(parse(measure, rel=self.rel))
        return [c for c in self.comparisons if c.baseline == self.baseline and c.significant and c.delta < 0
                and (key is None or c.measure == key)]

    def letters(self) -> dict[str, str]:
        """The letter that marks each run in the tables: a, b, c, ... z, aa, ab, ..."""
        def letter(i: int) -> str:
            return letter(i // 26 - 1) + chr(97 + i % 26) if i >= 26 else chr(97 + i)
        return {run: letter(i) for i, run in enumerate(self.runs)}

    def beats(self) -> dict[tuple[str, str], list[str]]:
        """``(run, measure) -> letters of the runs it is significantly better than``."""
        letters = self.letters()
        marks: dict[tuple[str, str], list[str]] = {(r, m): [] for r in self.runs for m in self.measures}
        for c in self.comparisons:
            if c.significant:
                better, worse = (c.run, c.baseline) if c.delta > 0 else (c.baseline, c.run)
                marks[better, c.measure].append(letters[worse])
        return {key: sorted(value, key=lambda s: (len(s), s)) for key, value in marks.items()}

    def legend(self) -> str:
        """Two lines: what the letters mean, then the test, the correction and what was compared."""
        correction = ("Tukey HSD adjusts for every pair" if self.test == "tukey"
                      else f"{_CORRECTION_NAMES[self.correction]} correction over each measure's comparisons")
        scope = "every pair of runs" if self.all_pairs else f"each run with the baseline, {self.baseline}"
        return (f"[x]: significantly better than run x at alpha {self.alpha:g}.\n"
                f"{_TEST_NAMES[self.test]} (two-sided) over {len(self.queries)} queries; {correction}; "
                f"compared: {scope}.")

    # ------------------------------------------------------------------ forms
    def to_dict(self) -> dict[str, Any]:
        """The JSON form: test, correction, alpha, runs, means, comparisons (see the compare docs)."""
        return {
            "test": self.test, "correction": self.correction, "alpha": self.alpha, "runs": list(self.runs),
            "baseline": self.baseline, "queries": len(self.queries),
            "means": {run: dict(values) for run, values in self.means.items()},
            "comparisons": [asdict(c) for c in self.comparisons],  # PairComparison's fields, in order
            **({"risk": [asdict(r) for r in self.risks]} if self.risks else {}),  # only when asked for
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def _cells(self, digits: int) -> list[list[str]]:
        marks, letters = self.beats(), self.letters()
        rows = []
        for run in self.runs:
            row = [f"{letters[run]} {run}"]
            for measure in self.measures:
                beaten = marks[run, measure]
                row.append(f"{self.means[run][measure]:.{digits}f}" + (f" [{','.join(beaten)}]" if beaten else ""))
            rows.append(row)
        return rows

    def to_table(self, digits: int = 4) -> str:
        """Plain text: runs as rows, measures as columns, then the legend."""
        header = ["run", *self.measures]
        rows = [header, *self._cells(digits)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
                 .rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines) + "\n\n" + self.legend() + "\n" + self._risk_text(digits)

    def _risk_text(self, digits: int) -> str:
        """The risk table after a blank line, or nothing when risk was not asked for."""
        return "\n" + risk_table(self.risks, digits) if self.risks else ""

    def to_markdown(self, digits: int = 4) -> str:
        """A Markdown table (runs as rows), then the legend."""
        def row(cells: Sequence[str]) -> str:
            return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
        lines = [row(["run", *self.measures]), "|---" + "|---:" * len(self.measures) + "|"]
        lines += [row(cells) for cells in self._cells(digits)]
        return "\n".join(lines) + "\n\n" + self.legend() + "\n" + self._risk_text(digits)

    def to_latex(self, digits: int = 4) -> str:
        """A booktabs table: the best mean of each measure in bold, significance letters as superscripts."""
        marks, letters = self.beats(), self.letters()
        best = {m: max(self.means[r][m] for r in self.runs) for m in self.measures}
        lines = [r"\begin{tabular}{l" + "r" * len(self.measures) + "}", r"\toprule",
                 " & ".join(["Run", *(_latex_escape(m) for m in self.measures)]) + r" \\", r"\midrule"]
        for run in self.runs:
            cells = [f"({letters[run]}) {_latex_escape(run)}"]
            for m in self.measures:
                text = f"{self.means[run][m]:.{digits}f}"
                if self.means[run][m] == best[m]:
                    text = rf"\textbf{{{text}}}"
                if marks[run, m]:
                    text += rf"$^{{{','.join(marks[run, m])}}}$"
                cells.append(text)
            lines.append(" & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", *("% " + line for line in self.legend().splitlines())]
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        """One line per comparison, with a header row."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        names = [f.name for f in fields(PairComparison)]
        writer.writerow(names)
        for c in self.comparisons:
            writer.writerow([repr(v) if isinstance(v, float) else v for v in (getattr(c, name) for name in names)])
        return out.getvalue()

    def to_dataframe(self) -> Any:
        """The comparisons as a pandas DataFrame, one row per comparison (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise MissingExtraError("Comparison.to_dataframe needs pandas: pip install pandas") from None
        return pd.DataFrame(self.to_dict()["comparisons"])


def _latex_escape(text: str) -> str:
    special = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
               "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(special.get(ch, ch) for ch in text)


def compare(
    qrels: str | os.PathLike[str] | Any | None,
    runs: Mapping[str, str | os.PathLike[str] | Any],
    measures: Sequence[str] | None = None,
    *,
    baseline: str | None = None,
    all_pairs: bool = False,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    permutations: int = 10_000,
    samples: int = 10_000,
    seed: int | None = None,
    rel: int = 1,
    complete: bool = True,
    judged_only: bool = False,
    max_depth: int | None = None,
    order: str = "score",
    duplicates: str = "error",
    risk: float | None = None,
) -> Comparison:
    """Evaluate runs on the same queries and compare them with paired significance tests.

    Parameters
    ----------
    qrels : path or open file, or None
        The judgments, read once for all runs. None when every run is a :class:`SetEvaluator`.
    runs : mapping of name to a path, an open file or a SetEvaluator
        The runs, in the order of the report; names label them.
    measures : measure strings, default :data:`DEFAULT_MEASURES`
        Any catalogue string (``AP``, ``nDCG@10``, ``P_10``) or group (``official``, ``P``,
        ``ndcg_cut``: see :func:`~retrieval_eval.measures.parse_list`); keys of the result are canonical.
    baseline : str, default the first run
        The run every other run is compared with.
    all_pairs : bool
        Compare every pair of runs instead (a pair with the baseline has it as ``baseline``;
        otherwise the earlier run is the ``baseline`` of the pair).
    test : {"t", "wilcoxon", "sign", "permutation", "bootstrap", "tukey"}
        See :mod:`retrieval_eval.analysis.stats` and ``docs/comparing.md``.
    correction : {"none", "bonferroni", "holm", "bh"}, default "holm"
        Applied within each measure. ``tukey`` corrects by itself: its correction is "none".
    alpha, permutations, samples, seed
        Significance level; Monte Carlo sizes of the permutation/Tukey and bootstrap tests (at most
        :data:`~retrieval_eval.analysis.stats.MAX_PERMUTATIONS` and ``MAX_SAMPLES``); a seed (an
        integer >= 0) makes them reproducible: each comparison draws from its own stream, derived
        from the seed, the measure's name and the runs' names, so its p-value is the same whatever
        else is compared.
    rel, complete, judged_only, max_depth, order, duplicates
        As in :meth:`SetEvaluator.from_trec` (``order`` and ``duplicates`` apply to runs read from files). With ``complete=False`` (or evaluators over different
        queries) only the queries every run has are compared, and the means are over those.
    risk : float >= 0, optional
        The risk ``alpha``: add URisk, TRisk (with its p-value) and GeoRisk of every run against the
        baseline on each measure (:attr:`Comparison.risks`; see :mod:`retrieval_eval.analysis.risk`).
    """
    from . import stats

    correction = _check_options(test, correction, alpha, permutations, samples, seed, risk)
    read_options = _read_options(max_depth, duplicates, order)
    names = list(runs)
    if len(names) < 2:
        raise RetrievalEvalError(f"comparing needs at least two runs; got {len(names)}")
    baseline = names[0] if baseline is None else baseline
    if baseline not in runs:
        raise RetrievalEvalError(f"baseline {baseline!r} is not one of the runs: {', '.join(names)}")
    measure_of = _measures_compared(measures, rel)
    scored = _score_runs(qrels, runs, list(measure_of.values()), rel=rel, complete=complete,
                         judged_only=judged_only, with_ranks=order == "rank", **read_options)
    return _compare_scored(stats, scored, measure_of, baseline=baseline, all_pairs=all_pairs, test=test,
                           correction=correction, alpha=alpha, permutations=permutations, samples=samples,
                           seed=seed, rel=rel, risk=risk)


def _check_options(test: str, correction: str | None, alpha: float, permutations: int, samples: int,
                   seed: int | None, risk: float | None = None) -> str:
    """The test's options checked (before any file is read: a bad one would fail only after the
    work); returns the correction, its default filled in."""
    from . import stats

    if test not in stats.TESTS:
        raise RetrievalEvalError(f"'test' must be one of {', '.join(stats.TESTS)}; got {test!r}")
    if correction is None:
        correction = "none" if test == "tukey" else "holm"
    if correction not in stats.CORRECTIONS:
        raise RetrievalEvalError(f"'correction' must be one of {', '.join(stats.CORRECTIONS)}; got {correction!r}")
    if test == "tukey" and correction != "none":
        raise RetrievalEvalError(f"the Tukey HSD test adjusts for every pair itself; drop the {correction!r} correction")
    if not 0 < alpha < 1:
        raise RetrievalEvalError(f"'alpha' must be between 0 and 1; got {alpha!r}")
    stats.check_parameters(permutations=permutations, samples=samples, alpha=alpha, seed=seed)
    stats.require_scipy(test)  # the t, Wilcoxon and sign tests
    if risk is not None:
        _check_alpha(risk)
    return correction


def _measures_compared(measures: Sequence[str] | None, rel: int) -> dict[str, Measure]:
    """The measures by canonical string, each once: groups (official, P, ndcg_cut) expand as
    everywhere; a text measure (relstring) has no values to compare."""
    parsed = [m for m, _ in parse_list(measures or DEFAULT_MEASURES, rel=rel, numeric=True)]
    return {str(m): m for m in parsed}


def _compare_scored(stats: Any, scored: dict[str, _Scored], measure_of: dict[str, Measure], *, baseline: str,
                    all_pairs: bool, test: str, correction: str, alpha: float, permutations: int, samples: int,
                    seed: int | None, rel: int, risk: float | None = None) -> Comparison:
    """The comparison of runs already scored (by name, in the report's order), options checked."""
    names, keys = list(scored), list(measure_of)
    common = set.intersection(*(set(s.query_ids) for s in scored.values()))
    queries = [q for q in scored[names[0]].query_ids if q in common]
    if not queries:  # a p-value "over 0 queries" would let any regression pass
        raise RetrievalEvalError(
            "the runs share no query, so there is nothing to compare; expected queries that every run has; got "
            + "; ".join(f"{n}: {_preview(scored[n].query_ids)}" if scored[n].query_ids else f"{n}: no query"
                        for n in names))
    values: dict[tuple[str, str], FloatArray] = {}
    means: dict[str, dict[str, float]] = {}
    for n in names:
        position = {q: i for i, q in enumerate(scored[n].query_ids)}
        rows = np.array([position[q] for q in queries], dtype=np.int64)
        means[n] = {}
        for k in keys:
            weights = scored[n].weights[k]
            values[n, k] = scored[n].values[k][rows]
            means[n][k] = measure_of[k].definition.aggregate_values(
                values[n, k], None if weights is None else weights[rows])

    pairs = _pairs(names, baseline, all_pairs)
    comparisons = []
    risks: list[RiskRow] = []
    for key in keys:
        matrix = np.stack([values[n, key] for n in names])
        if risk is not None:
            risks += risk_rows(matrix, names, baseline, key, risk)
        results = [_paired(stats, matrix, names.index(a), names.index(b), test, permutations, samples,
                           _stream(seed, key, a, b), alpha) for a, b in pairs]
        if test == "tukey":
            p_matrix = stats.tukey_hsd(matrix, permutations=permutations, seed=_stream(seed, key, *names))
            raw = np.array([p_matrix[names.index(a), names.index(b)] for a, b in pairs])
        else:
            raw = np.array([r.p_value for r in results])
        adjusted = stats.adjust(raw, correction) if test != "tukey" else raw
        for (a, b), r, p, q in zip(pairs, results, raw, adjusted):
            comparisons.append(PairComparison(
                measure=key, baseline=a, run=b, delta=r.delta, p_value=float(p), p_adjusted=float(q),
                significant=bool(q < alpha), effect_size=r.effect_size, ci_low=r.ci_low, ci_high=r.ci_high,
                wins=r.wins, ties=r.ties, losses=r.losses,
            ))
    return Comparison(test=test, correction=correction, alpha=alpha, runs=tuple(names), measures=tuple(keys),
                      means=means, comparisons=tuple(comparisons), queries=tuple(queries), baseline=baseline,
                      all_pairs=all_pairs, rel=rel, risks=tuple(risks))


def _paired(stats: Any, matrix: FloatArray, a: int, b: int, test: str, permutations: int, samples: int,
            seed: int | None, alpha: float) -> Any:
    if test == "tukey":  # its p-values come from all runs at once; its interval and effect size are the t-test's
        return stats._describe(matrix[b] - matrix[a], alpha, t_interval=True)
    return stats.paired_test(matrix[a], matrix[b], test, permutations=permutations, samples=samples, seed=seed,
                             alpha=alpha)


def _stream(seed: int | None, measure: str, *runs: str) -> int | None:
    """A seed of its own for each comparison: a measure (its canonical name) and the runs compared
    (by name), so that a comparison's p-value does not depend on what else is compared, nor on
    the order of the measures or runs. The names are hashed with BLAKE2b (Python's ``hash`` of a
    str changes from one process to the next)."""
    if seed is None:
        return None
    text = "\0".join((measure, *runs)).encode("utf-8", "surrogatepass")
    name_key = int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "little")
    return int(np.random.SeedSequence(entropy=seed, spawn_key=(name_key,)).generate_state(1, np.uint64)[0])


def _pairs(names: list[str], baseline: str, all_pairs: bool) -> list[tuple[str, str]]:
    if not all_pairs:
        return [(baseline, n) for n in names if n != baseline]
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pairs.append((b, a) if b == baseline else (a, b))
    return pairs


@frozen
class _Scored:
    """What compare keeps of one run's evaluation: per-query values (and summary weights) per measure."""

    query_ids: list[str]
    values: dict[str, FloatArray]
    weights: dict[str, FloatArray | None]


def _score_runs(qrels: Any, runs: Mapping[str, Any], measures: list[Measure], **options: Any) -> dict[str, _Scored]:
    """Every run's values, the qrels read once. A run read from a file is evaluated and dropped before
    the next is read, so memory holds one run's evaluation at a time, not ten."""
    from ..engine.build import RunHandoff
    from ..io.formats import read_qrels_columns, read_run_columns

    diversity = any(m.definition.subtopics for m in measures)
    judged = None
    rel, with_ranks = options.pop("rel"), options.pop("with_ranks")
    out = {}
    for name, run in runs.items():  # one at a time: a lazy mapping evaluates each run as it is asked for
        if isinstance(run, SetEvaluator):
            evaluator = run
        else:
            if qrels is None:
                raise RetrievalEvalError(f"run {name!r} is a file: compare needs the qrels to evaluate it")
            if judged is None:
                judged = read_qrels_columns(qrels, with_subtopics=diversity)
            evaluator = SetEvaluator.from_columns(judged, RunHandoff(read_run_columns(run, with_ranks=with_ranks)), rel=rel,
                                                  **options)
        _check_answered(name, evaluator)
        del run
        out[name] = _Scored(
            evaluator.query_ids, {str(m): evaluator.array(m) for m in measures},
            {str(m): evaluator.summary_weights(m) for m in measures},
        )
        del evaluator
    return out


def _check_answered(name: str, evaluator: SetEvaluator) -> None:
    """Refuse a run file none of whose queries is judged, as ``evaluate`` does: with judged queries
    scored 0 it would be compared over a table of zeros, hiding a wrong or swapped file."""
    not_judged, missing = evaluator.not_judged, set(evaluator.missing_from_run)
    if not not_judged or any(q not in missing for q in evaluator.query_ids):
        return
    judged = [q for q in evaluator.query_ids if q in missing] or evaluator.missing_from_run
    raise RetrievalEvalError(
        f"run {name!r}: no run query is judged in the qrels (a wrong or swapped file?); expected results for "
        f"the judged queries ({_preview(judged)}); got results for {len(not_judged)} other "
        f"{'query' if len(not_judged) == 1 else 'queries'} ({_preview(not_judged)})")


def _preview(items: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")
