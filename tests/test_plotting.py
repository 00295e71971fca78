"""Plots (issue 11, item 6): each is rendered, and what it draws is read back from the Figure.

The expected numbers come from SetEvaluator (aggregate, per_query) or are counted by hand; the
plots must draw exactly them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from retrieval_eval import (
    InputFormatError,
    InputTypeError,
    RetrievalEvalError,
    SetEvaluator,
)
from retrieval_eval.model import MissingExtraError
from retrieval_eval.report.plotting import diff_bars, first_relevant_ranks, pr_curves, save

DATA = Path(__file__).resolve().parents[1] / "retrieval_eval" / "data"
RECALL_POINTS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".svg": b"<?xml", ".pdf": b"%PDF-"}


def _changed_run() -> dict[str, dict[str, float]]:
    """The sample run, with a third of its queries ranked by their judgments (better), a third upside
    down (worse) and a third as they were."""
    run: dict[str, dict[str, float]] = {}
    for line in (DATA / "sample.run").read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        run.setdefault(query, {})[doc] = float(score)
    qrels = _qrels()
    for i, query in enumerate(sorted(run)):
        if i % 3 == 0:
            run[query] = {d: float(qrels.get(query, {}).get(d, 0)) for d in run[query]}
        elif i % 3 == 1:
            run[query] = {d: -s for d, s in run[query].items()}
    return run


def _qrels() -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in (DATA / "sample.qrels").read_text().splitlines():
        query, _, doc, relevance = line.split()
        qrels.setdefault(query, {})[doc] = int(relevance)
    return qrels


@pytest.fixture(scope="module")
def runs() -> dict[str, SetEvaluator]:
    return {
        "sample": SetEvaluator.from_trec(DATA / "sample.qrels", DATA / "sample.run"),
        "changed": SetEvaluator.from_dict(_qrels(), _changed_run()),
    }


# ---------------------------------------------------------------------------------- pr_curves
class TestPrCurves:
    def test_one_line_per_run_with_the_aggregated_iprec(
        self, runs: dict[str, SetEvaluator], tmp_path: Path
    ) -> None:
        figure = pr_curves(runs)
        save(figure, tmp_path / "pr.png")
        (axes,) = figure.axes
        lines = axes.get_lines()
        assert len(lines) == len(runs)
        for line, (name, evaluator) in zip(lines, runs.items()):
            assert list(line.get_xdata()) == RECALL_POINTS
            assert list(line.get_ydata()) == [
                evaluator.aggregate(f"iprec_at_recall_{p:.2f}") for p in RECALL_POINTS
            ]
            assert line.get_label() == f"{name} (MAP {evaluator.aggregate('AP'):.4f})"
        legend = [t.get_text() for t in axes.get_legend().get_texts()]
        assert legend == [f"{n} (MAP {e.aggregate('AP'):.4f})" for n, e in runs.items()]
        assert axes.get_xlim() == (0.0, 1.0) and axes.get_ylim() == (0.0, 1.0)
        assert (tmp_path / "pr.png").read_bytes().startswith(MAGIC[".png"])

    def test_curves_follow_each_runs_rel(self) -> None:
        """A run evaluated with rel=2 draws its rel=2 values (and its MAP at rel=2)."""
        strict = SetEvaluator.from_dict(_qrels(), _changed_run(), rel=2)
        (line,) = pr_curves({"strict": strict}).axes[0].get_lines()
        assert list(line.get_ydata()) == [
            strict.aggregate(f"IPrec(rel=2)@{p}") for p in RECALL_POINTS
        ]
        assert line.get_label() == f"strict (MAP {strict.aggregate('AP(rel=2)'):.4f})"

    @pytest.mark.parametrize(
        ("given", "error", "message"),
        [
            ({}, RetrievalEvalError, "no runs to plot"),
            ([], InputTypeError, "must be a mapping"),
            (
                {"a": "run.txt"},
                InputTypeError,
                "run 'a' must be a SetEvaluator; got str",
            ),
        ],
        ids=["empty", "list", "not-an-evaluator"],
    )
    def test_bad_runs(
        self, given: object, error: type[Exception], message: str
    ) -> None:
        with pytest.raises(error, match=message):
            pr_curves(given)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------- diff_bars
class TestDiffBars:
    def test_bars_are_the_sorted_per_query_deltas(
        self, runs: dict[str, SetEvaluator], tmp_path: Path
    ) -> None:
        a, b = runs["sample"], runs["changed"]
        figure = diff_bars(a, b, "ndcg_cut_10", ("sample", "changed"))
        save(figure, tmp_path / "diff.png")
        (axes,) = figure.axes
        before, after = a.per_query("nDCG@10"), b.per_query("nDCG@10")
        deltas = sorted(after[q] - before[q] for q in before)
        heights = [bar.get_height() for bar in axes.patches]
        assert len(heights) == len(a) == 13
        assert heights == deltas
        helped = sum(d > 0 for d in deltas)
        hurt = sum(d < 0 for d in deltas)
        assert helped > 0 and hurt > 0
        assert axes.get_title() == (
            f"nDCG@10: changed \u2212 sample per query\n{helped} helped, {hurt} hurt, "
            f"{len(deltas) - helped - hurt} unchanged"
        )
        labels = [t.get_text() for t in axes.get_xticklabels()]
        assert sorted(labels) == sorted(a.query_ids)
        assert [
            after[q] - before[q] for q in labels
        ] == deltas  # each bar is named by its query
        zero = [
            line for line in axes.get_lines() if list(line.get_ydata()) == [0.0, 0.0]
        ]
        assert len(zero) == 1

    def test_only_shared_queries(self) -> None:
        a = SetEvaluator.from_dict(
            {"q1": {"x": 1}, "q2": {"y": 1}},
            {"q1": {"x": 1.0}, "q2": {"z": 1.0, "y": 0.5}},
        )
        b = SetEvaluator.from_dict(
            {"q2": {"y": 1}, "q3": {"w": 1}}, {"q2": {"y": 1.0}, "q3": {"w": 1.0}}
        )
        (axes,) = diff_bars(a, b, "RR", ("a", "b")).axes
        assert [bar.get_height() for bar in axes.patches] == [0.5]  # q2: 1/1 - 1/2
        assert axes.get_title().endswith("1 helped, 0 hurt, 0 unchanged")

    def test_many_queries_are_not_named(self) -> None:
        qrels = {f"q{i}": {"d": 1} for i in range(50)}
        a = SetEvaluator.from_dict(qrels, {f"q{i}": {"d": 1.0} for i in range(50)})
        (axes,) = diff_bars(a, a, "AP", ("a", "a")).axes
        assert len(axes.patches) == 50 and axes.get_xticklabels() == []
        assert axes.get_title().endswith("0 helped, 0 hurt, 50 unchanged")

    def test_beyond_max_bars_two_filled_areas(
        self, runs: dict[str, SetEvaluator]
    ) -> None:
        """Past max_bars the bars are two step areas: helped above zero, hurt below, same extremes."""
        a, b = runs["sample"], runs["changed"]
        before, after = a.per_query("AP"), b.per_query("AP")
        deltas = [after[q] - before[q] for q in before]
        (axes,) = diff_bars(a, b, "AP", ("a", "b"), max_bars=5).axes
        assert len(axes.patches) == 0
        helped, hurt = axes.collections
        helped_y = helped.get_paths()[0].vertices[:, 1]
        hurt_y = np.concatenate([path.vertices[:, 1] for path in hurt.get_paths()])
        assert helped_y.min() == 0.0 and helped_y.max() == max(deltas)
        assert hurt_y.max() == 0.0 and hurt_y.min() == min(deltas)
        assert axes.get_title().endswith(
            f"{sum(d > 0 for d in deltas)} helped, {sum(d < 0 for d in deltas)} hurt, "
            f"{sum(d == 0 for d in deltas)} unchanged"
        )

    def test_errors(self, runs: dict[str, SetEvaluator]) -> None:
        other = SetEvaluator.from_dict({"z": {"d": 1}}, {"z": {"d": 1.0}})
        with pytest.raises(RetrievalEvalError, match="^a and b have no evaluated query in common"):
            diff_bars(runs["sample"], other, "AP", ("a", "b"))
        with pytest.raises(InputTypeError, match="'b' must be a SetEvaluator"):
            diff_bars(runs["sample"], "run", "AP", ("a", "b"))  # type: ignore[arg-type]
        with pytest.raises(InputTypeError, match="'names' must be a tuple of two str"):
            diff_bars(runs["sample"], runs["sample"], "AP", ("a",))  # type: ignore[arg-type]


# ------------------------------------------------------------------------ first_relevant_ranks
class TestFirstRelevantRanks:
    def test_hand_counted(self, tmp_path: Path) -> None:
        """First relevant at ranks 1, 1, 3, 10, 15, 60 and none (twice): counted by hand."""

        def ranking(first: int | None, depth: int = 70) -> dict[str, float]:
            return {
                f"d{r}": float(depth - r) for r in range(1, depth + 1) if r != first
            } | ({"rel": float(depth - first)} if first else {})

        firsts = {
            "a": 1,
            "b": 1,
            "c": 3,
            "d": 10,
            "e": 15,
            "f": 60,
            "g": None,
            "h": None,
        }
        qrels = {q: {"rel": 1, "d1": 0} for q in firsts}
        run = SetEvaluator.from_dict(qrels, {q: ranking(f) for q, f in firsts.items()})
        assert run.per_query("RR") == {
            q: 1 / f if f else 0.0 for q, f in firsts.items()
        }
        figure = first_relevant_ranks({"run": run})
        save(figure, tmp_path / "ranks.png")
        (axes,) = figure.axes
        labels = [t.get_text() for t in axes.get_xticklabels()]
        assert labels == [
            "1",
            "2",
            "3",
            "4",
            "5",
            "6",
            "7",
            "8",
            "9",
            "10",
            "11-20",
            "21-50",
            "51-100",
        ]
        (bars,) = axes.containers
        assert [b.get_height() for b in bars] == [2, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1]
        legend = [t.get_text() for t in figure.legends[0].get_texts()]
        assert legend == ["run: 2 of 8 queries with no relevant retrieved"]

    def test_one_bar_group_per_run(self, runs: dict[str, SetEvaluator]) -> None:
        (axes,) = first_relevant_ranks(runs).axes
        assert len(axes.containers) == len(runs)
        for bars, evaluator in zip(axes.containers, runs.values()):
            rr = evaluator.per_query("RR").values()
            found = [round(1 / v) for v in rr if v > 0]
            assert sum(b.get_height() for b in bars) == len(found)
            assert bars[0].get_height() == found.count(1)
        legend = [t.get_text() for t in axes.figure.legends[0].get_texts()]
        for text, (name, evaluator) in zip(legend, runs.items()):
            none = sum(v == 0 for v in evaluator.per_query("RR").values())
            assert (
                text
                == f"{name}: {none} of {len(evaluator)} queries with no relevant retrieved"
            )

    def test_ranks_only_up_to_ten_keep_ten_bins(self) -> None:
        run = SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": 1.0}})
        (axes,) = first_relevant_ranks({"r": run}).axes
        assert [t.get_text() for t in axes.get_xticklabels()] == [
            str(r) for r in range(1, 11)
        ]
        assert [b.get_height() for b in axes.containers[0]] == [1] + [0] * 9


# --------------------------------------------------------------------------------------- save
class TestSave:
    @pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf", ".PNG"])
    def test_format_by_suffix_and_repeatable(
        self, runs: dict[str, SetEvaluator], tmp_path: Path, suffix: str
    ) -> None:
        figure = pr_curves(runs)
        first, second = tmp_path / f"one{suffix}", tmp_path / f"two{suffix}"
        save(figure, first)
        save(figure, str(second))
        assert first.read_bytes().startswith(MAGIC[suffix.lower()])
        assert first.read_bytes() == second.read_bytes()  # no creation date written

    @pytest.mark.parametrize("name", ["plot.jpg", "plot", "plot.png.txt"])
    def test_other_suffixes_raise(
        self, runs: dict[str, SetEvaluator], tmp_path: Path, name: str
    ) -> None:
        with pytest.raises(
            InputFormatError,
            match=r"cannot save a plot as .*; expected one of \.png, \.svg, \.pdf",
        ):
            save(pr_curves(runs), tmp_path / name)
        assert not (tmp_path / name).exists()


# ----------------------------------------------------------------------- optional dependency
def test_importing_the_package_imports_neither_matplotlib_nor_pandas() -> None:
    """The core, the evaluators and the plotting module itself load without the extras."""
    code = (
        "import sys, retrieval_eval, retrieval_eval.report.plotting\n"
        "from retrieval_eval import SetEvaluator\n"
        "ev = SetEvaluator.from_dict({'q': {'a': 1}}, {'q': {'a': 1.0}})\n"
        "ev.evaluate(['official', 'P']); ev['q'].judgment('a')\n"
        "sys.exit(sorted(m for m in ('matplotlib', 'pandas') if m in sys.modules) or None)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_plots_leave_pyplot_alone(tmp_path: Path) -> None:
    """Figures are built without pyplot: no global backend switch, no figure kept alive by pyplot."""
    code = (
        "import sys\n"
        "from retrieval_eval import SetEvaluator\n"
        "from retrieval_eval.report.plotting import pr_curves, diff_bars, first_relevant_ranks, save\n"
        "ev = SetEvaluator.from_dict({'q': {'a': 1}}, {'q': {'a': 1.0}})\n"
        "for f in (pr_curves({'r': ev}), diff_bars(ev, ev, 'AP', ('a', 'b')), first_relevant_ranks({'r': ev})):\n"
        "    save(f, sys.argv[1])\n"
        "sys.exit('matplotlib.pyplot' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "plot.png")],
        check=False,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "plot", ["pr_curves", "diff_bars", "first_relevant_ranks", "save"]
)
def test_missing_matplotlib(
    plot: str, runs: dict[str, SetEvaluator], monkeypatch: pytest.MonkeyPatch
) -> None:
    figure = pr_curves(runs)  # built before matplotlib "disappears"
    for module in ("matplotlib", "matplotlib.figure", "matplotlib.ticker"):
        monkeypatch.setitem(sys.modules, module, None)
    calls = {
        "pr_curves": lambda: pr_curves(runs),
        "diff_bars": lambda: diff_bars(
            runs["sample"], runs["changed"], "AP", ("a", "b")
        ),
        "first_relevant_ranks": lambda: first_relevant_ranks(runs),
        "save": lambda: save(figure, "plot.png"),
    }
    with pytest.raises(MissingExtraError) as caught:
        calls[plot]()
    assert (
        str(caught.value) == "plots need matplotlib: pip install 'retrieval-evaluator[plot]'"
    )


class TestManyRuns:
    """Twelve runs: matplotlib's default cycle has 10 colours, so runs 11 and 12 would look like 1 and 2."""

    def test_pr_lines_are_told_apart(self, runs) -> None:
        twelve = {f"run{i}": runs["sample"] for i in range(12)}
        lines = pr_curves(twelve).axes[0].get_lines()
        assert len(lines) == 12
        looks = {(str(line.get_color()), line.get_linestyle()) for line in lines}
        assert len(looks) == 12

    def test_ranks_bars_are_told_apart_and_keep_their_room(self, runs) -> None:
        twelve = {f"run{i}": runs["sample"] for i in range(12)}
        figure = first_relevant_ranks(twelve)
        axes = figure.axes[0]
        colours = {
            tuple(container.patches[0].get_facecolor()) for container in axes.containers
        }
        assert len(axes.containers) == 12 and len(colours) == 12
        # The legend below grows the figure: the axes keep at least the height they have with two runs.
        two = first_relevant_ranks({"a": runs["sample"], "b": runs["sample"]})
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        for fig in (figure, two):
            FigureCanvasAgg(
                fig
            ).draw()  # lays the figure out (constrained layout), as saving does
        height = figure.axes[0].get_window_extent().height
        assert height >= 0.9 * two.axes[0].get_window_extent().height
        assert figure.get_figheight() > two.get_figheight()

    def test_one_run_keeps_the_default_look(self, runs) -> None:
        [line] = pr_curves({"only": runs["sample"]}).axes[0].get_lines()
        assert line.get_linestyle() == "-"
