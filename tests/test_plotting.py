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
        # issue 27: the queries with no relevant document retrieved are a last bin, "none", not a legend note
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
            "none",
        ]
        (bars,) = axes.containers
        assert [b.get_height() for b in bars] == [2, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 2]
        legend = [t.get_text() for t in figure.legends[0].get_texts()]
        assert legend == ["run"]

    def test_one_bar_group_per_run(self, runs: dict[str, SetEvaluator]) -> None:
        (axes,) = first_relevant_ranks(runs).axes
        assert len(axes.containers) == len(runs)
        for bars, evaluator in zip(axes.containers, runs.values()):
            rr = evaluator.per_query("RR").values()
            found = [round(1 / v) for v in rr if v > 0]
            assert sum(b.get_height() for b in bars[:-1]) == len(found)
            assert bars[0].get_height() == found.count(1)
            assert bars[-1].get_height() == sum(v == 0 for v in rr)  # the "none" bin
        legend = [t.get_text() for t in axes.figure.legends[0].get_texts()]
        assert legend == list(runs)  # the names only (issue 27: a short legend)

    def test_ranks_only_up_to_ten_keep_ten_bins(self) -> None:
        run = SetEvaluator.from_dict({"q": {"a": 1}}, {"q": {"a": 1.0}})
        (axes,) = first_relevant_ranks({"r": run}).axes
        assert [t.get_text() for t in axes.get_xticklabels()] == [
            str(r) for r in range(1, 11)
        ] + ["none"]
        assert [b.get_height() for b in axes.containers[0]] == [1] + [0] * 9 + [0]


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
        # issue 27: the colour-blind-safe palette has 7 colours; from the 8th run on, hatches tell runs apart
        looks = {
            (tuple(container.patches[0].get_facecolor()), container.patches[0].get_hatch())
            for container in axes.containers
        }
        assert len(axes.containers) == 12 and len(looks) == 12
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


# ----------------------------------------------------------------- issue 27 E: fit for a paper
#: The Okabe-Ito colours as the paper lists them (Okabe & Ito 2008), in RGB: the reference the palette is checked against.
OKABE_ITO = {
    (230, 159, 0), (86, 180, 233), (0, 158, 115), (240, 228, 66), (0, 114, 178), (213, 94, 0), (204, 121, 167),
    (0, 0, 0),
}


def _rgb(colour: object) -> tuple[int, int, int]:
    from matplotlib.colors import to_rgb

    return tuple(round(255 * c) for c in to_rgb(colour))  # type: ignore[return-value]


def _deep_runs() -> dict[str, SetEvaluator]:
    """First relevant documents down to rank 1400, and none for some queries: every rank bin is used."""
    firsts = [1, 2, 3, 5, 8, 10, 12, 40, 80, 120, 999, 1001, 1400, None]
    qrels = {f"query-{i}": {"rel": 1} for i in range(len(firsts))}

    def ranking(first: int | None, shift: int) -> dict[str, float]:
        at = None if first is None else max(1, first // shift)
        return {("rel" if r == at else f"d{r}"): float(2000 - r) for r in range(1, 1501)}

    return {name: SetEvaluator.from_dict(qrels, {f"query-{i}": ranking(f, shift) for i, f in enumerate(firsts)})
            for name, shift in (("deep", 1), ("deeper", 2))}


def _overlaps(figure) -> list[tuple[str, str, str]]:
    """Tick labels whose rendered boxes overlap, measured here with the Agg renderer (independently of
    the module's own check): (axis, label, label)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    found = []
    for axes in figure.axes:
        for name, axis in (("x", axes.xaxis), ("y", axes.yaxis)):
            labels = [t for t in [*axis.get_ticklabels(), *axis.get_ticklabels(minor=True)]
                      if t.get_visible() and t.get_text()]
            boxes = [t.get_window_extent(renderer) for t in labels]
            for i in range(len(boxes)):
                for j in range(i + 1, len(boxes)):
                    if boxes[i].overlaps(boxes[j]):
                        found.append((name, labels[i].get_text(), labels[j].get_text()))
    return found


class TestPaperFigures:
    def test_identical_runs_both_stay_visible(self, runs: dict[str, SetEvaluator]) -> None:
        """Two runs with the same values: each run's colour still covers a good part of what one run
        alone draws (its own line style and marker show through the other's)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        def pixels(figure) -> dict[tuple[int, int, int], int]:
            figure.axes[0].get_legend().set_visible(False)
            canvas = FigureCanvasAgg(figure)
            canvas.draw()
            image = np.asarray(canvas.buffer_rgba())[..., :3].reshape(-1, 3)
            colours = [_rgb(line.get_color()) for line in figure.axes[0].get_lines()]
            return {c: int(np.count_nonzero(np.abs(image.astype(int) - c).max(axis=1) <= 8)) for c in colours}

        alone = pixels(pr_curves({"a": runs["sample"]}))
        together = pixels(pr_curves({"a": runs["sample"], "b": runs["sample"]}))
        (first,) = alone
        assert len(together) == 2
        for colour, count in together.items():
            assert count >= 0.25 * alone[first], (colour, count, alone)

    def test_every_run_has_its_own_line_style_and_marker(self, runs: dict[str, SetEvaluator]) -> None:
        lines = pr_curves({f"r{i}": runs["sample"] for i in range(4)}).axes[0].get_lines()
        for attribute in ("get_color", "get_linestyle", "get_marker"):
            assert len({str(getattr(line, attribute)()) for line in lines}) == 4, attribute
        assert all(line.get_markerfacecolor() == "none" for line in lines)  # hollow: markers show through

    def test_colour_blind_safe_palette(self, runs: dict[str, SetEvaluator]) -> None:
        from retrieval_eval.report.plotting import PALETTE

        assert {_rgb(c) for c in PALETTE} <= OKABE_ITO
        lines = pr_curves({f"r{i}": runs["sample"] for i in range(7)}).axes[0].get_lines()
        assert {_rgb(line.get_color()) for line in lines} <= OKABE_ITO
        bars = first_relevant_ranks(runs).axes[0].containers
        assert {_rgb(b.patches[0].get_facecolor()) for b in bars} <= OKABE_ITO
        (axes,) = diff_bars(runs["sample"], runs["changed"], "AP", ("a", "b")).axes
        deltas = [p.get_height() for p in axes.patches]
        colours = {(d > 0, _rgb(p.get_facecolor())) for d, p in zip(deltas, axes.patches) if d != 0}
        assert colours == {(True, (0, 114, 178)), (False, (213, 94, 0))}  # helped blue, hurt vermillion

    @pytest.mark.parametrize(
        ("plot", "options"),
        [
            ("ranks", {}),
            ("ranks", {"size": (3.0, 2.5)}),
            ("ranks", {"size": (2.0, 2.0), "log_y": True}),
            ("ranks", {"log_y": True}),
            ("pr", {"size": (2.0, 2.0)}),
            ("pr", {"log_y": True, "size": (2.0, 2.0)}),
            ("diff", {}),
            ("diff", {"size": (3.0, 2.0)}),
            ("diff", {"size": (2.0, 2.0)}),
        ],
        ids=lambda v: str(v),
    )
    def test_tick_labels_never_overlap(self, plot: str, options: dict) -> None:
        runs = _deep_runs()
        if plot == "ranks":
            figure = first_relevant_ranks(runs, **options)
        elif plot == "pr":
            figure = pr_curves(runs, **options)
        else:  # 40 queries with long ids: at most max_labels, so each is named
            qrels = {f"topic-number-{i:04d}": {"d": 1} for i in range(40)}
            a = SetEvaluator.from_dict(qrels, {q: {"d": 1.0, "x": 2.0} for q in qrels})
            b = SetEvaluator.from_dict(qrels, {q: {"d": 1.0 + i, "x": 2.0} for i, q in enumerate(qrels)})
            figure = diff_bars(a, b, "RR", ("a", "b"), **options)
        assert _overlaps(figure) == []
        if plot == "ranks":  # every bin is still there, in order, and its first and last are named
            texts = [t.get_text() for t in figure.axes[0].get_xticklabels()]
            assert texts[0] == "1" and texts[-1] == "none" and len(texts) == 16

    def test_deep_ranks_labels_stand_upright_at_the_default_size(self) -> None:
        """The depth-1000 bins overlapped side by side at 7 inches: they are turned, none is dropped."""
        (axes,) = first_relevant_ranks(_deep_runs()).axes
        texts = [t.get_text() for t in axes.get_xticklabels()]
        assert texts[-3:] == ["101-1000", "1001+", "none"] and "" not in texts
        assert {t.get_rotation() for t in axes.get_xticklabels()} == {90.0}

    def test_title_size_and_log_axis(self, runs: dict[str, SetEvaluator]) -> None:
        for figure in (pr_curves(runs, title="T", size=(5, 3), log_y=True),
                       first_relevant_ranks(runs, title="T", size=(5, 3), log_y=True)):
            (axes,) = figure.axes
            assert axes.get_title() == "T" and tuple(figure.get_size_inches()) == (5.0, 3.0)
            assert axes.get_yscale() == "log"
        figure = diff_bars(runs["sample"], runs["changed"], "AP", ("a", "b"), title="T", size=(4, 2))
        assert figure.axes[0].get_title().splitlines()[0] == "T"  # the counts stay on the second line
        assert tuple(figure.get_size_inches()) == (4.0, 2.0)
        (line, _) = pr_curves(runs, log_y=True).axes[0].get_lines()
        assert list(line.get_ydata()) == [runs["sample"].aggregate(f"iprec_at_recall_{p:.2f}")
                                          for p in RECALL_POINTS]  # the same values, on another scale

    @pytest.mark.parametrize(
        ("size", "error", "message"),
        [
            ((0, 3), RetrievalEvalError, "'size' must be a width and a height from 2 to 50 inches; got 0 by 3"),
            ((5, float("nan")), RetrievalEvalError, "from 2 to 50 inches"),
            ((5, 1e9), RetrievalEvalError, "from 2 to 50 inches"),
            ((5,), InputTypeError, "'size' must be a \\(width, height\\) pair"),
            ("5,3", InputTypeError, "'size' must be a \\(width, height\\) pair"),
            ((True, 3), InputTypeError, "'size' must be a \\(width, height\\) pair"),
        ],
    )
    def test_bad_sizes(self, runs: dict[str, SetEvaluator], size: object, error: type, message: str) -> None:
        for call in (lambda: pr_curves(runs, size=size), lambda: first_relevant_ranks(runs, size=size),
                     lambda: diff_bars(runs["sample"], runs["changed"], "AP", size=size)):
            with pytest.raises(error, match=message):
                call()
        with pytest.raises(InputTypeError, match="'title' must be a str or None"):
            pr_curves(runs, title=3)  # type: ignore[arg-type]


    def test_a_figure_too_small_for_its_labels_is_an_error(self, runs: dict[str, SetEvaluator]) -> None:
        """Twelve legend entries in 2 by 2 inches leave the axes no room: one error, not an empty picture."""
        with pytest.raises(RetrievalEvalError, match="^a figure of 2 by 2 inches is too small for its labels"):
            first_relevant_ranks({f"a run with a long name, number {i}": runs["sample"] for i in range(12)}, size=(2, 2))


class TestLabelsArePlainText:
    """Issue 28.7: names and ids that are not UTF-8, or look like mathtext, are drawn as text."""

    NAMES = ("$\\foo$", "w\udce9.run")

    def _evaluations(self) -> tuple[SetEvaluator, SetEvaluator]:
        qrels = {"q\udce9": {"a": 1}, "$\\foo$": {"a": 1}, "q_{1}^x": {"a": 1}}
        a = SetEvaluator.from_dict(qrels, {q: {"a": 1.0, "b": 2.0} for q in qrels})
        b = SetEvaluator.from_dict(qrels, {q: {"a": 3.0, "b": 2.0} for q in qrels})
        return a, b

    def test_every_plot_renders_and_shows_the_names(self, tmp_path: Path) -> None:
        from matplotlib import cbook

        a, b = self._evaluations()
        runs = dict(zip(self.NAMES, (a, b)))
        figures = [pr_curves(runs, title="$x$"), first_relevant_ranks(runs, title="$x$"),
                   diff_bars(a, b, "RR", self.NAMES, title="$x$")]
        for i, figure in enumerate(figures):
            for suffix in (".png", ".svg", ".pdf"):
                save(figure, tmp_path / f"{i}{suffix}")  # a traceback before the fix
        texts = [t.get_text() for f in figures for t in f.findobj(lambda o: hasattr(o, "get_text"))
                 if t.get_text()]
        assert not [t for t in texts if cbook.is_math_text(t)]
        shown = {t.replace("\\$", "$") for t in texts}  # as drawn: an escaped $ is drawn as $
        assert {"$\\foo$ (MAP 0.5000)", "w\\xe9.run (MAP 1.0000)", "$x$", "q\\xe9", "$\\foo$", "q_{1}^x"} <= shown
        assert "w\\xe9.run" in figures[1].legends[0].get_texts()[1].get_text()

    def test_plain_text(self) -> None:
        from retrieval_eval.report.plotting import plain_text

        assert plain_text("$a$") == "\\$a\\$"
        assert plain_text("a\\$b") == "a\\\\$b"  # drawn as a\$b, as given
        assert plain_text("q\udce9\x1b[2J") == "q\\xe9\\x1b[2J"
        assert plain_text("q" * 100) == "q" * 57 + "..."


class TestSaveReplaces:
    """Issue 28.9: save writes a new file and renames it over the old one: a failure keeps the old one."""

    @pytest.mark.parametrize("suffix", [".png", ".pdf", ".svg"])
    def test_a_file_size_limit_keeps_the_old_image(self, tmp_path: Path, suffix: str) -> None:
        target = tmp_path / f"plot{suffix}"
        target.write_bytes(b"the old image")
        code = (
            "import resource, sys\n"
            "from retrieval_eval.data import sample_paths\n"
            "from retrieval_eval import SetEvaluator\n"
            "from retrieval_eval.report.plotting import pr_curves, save\n"
            "figure = pr_curves({'a': SetEvaluator.from_trec(*sample_paths())})\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
            "try:\n"
            "    save(figure, sys.argv[1])\n"
            "except OSError as exc:\n"
            "    sys.exit(f'OSError {exc.errno}')\n"
        )
        result = subprocess.run([sys.executable, "-c", code, str(target)], check=False, capture_output=True,
                                text=True)
        assert result.stderr.strip().splitlines()[-1] == "OSError 27"  # EFBIG, as an OSError for every format
        assert target.read_bytes() == b"the old image"
        assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]  # no temporary file left

    def test_an_error_while_drawing_keeps_the_old_image(self, runs: dict[str, SetEvaluator], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
        from matplotlib.figure import Figure

        figure = pr_curves(runs)
        target = tmp_path / "plot.png"
        save(figure, target)
        before = target.read_bytes()

        def broken(self: Figure, out: object, **kwargs: object) -> None:
            out.write(b"half an image")  # type: ignore[attr-defined]
            raise RuntimeError("drawing failed")

        monkeypatch.setattr(Figure, "savefig", broken)
        with pytest.raises(RuntimeError, match="drawing failed"):
            save(figure, target)
        assert target.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["plot.png"]
