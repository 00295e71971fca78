"""The HTML report in a real browser: Debian's headless Chromium, driven over the DevTools protocol
(tests/chromium.py). One browser for the module; skipped, with the reason, where no Chromium is found.

The page is opened from a file; the console must stay free of errors; sorting, filtering, opening a
query and clicking a bar are done as a user does them; the numbers the page renders are read back
from the DOM and compared with what the commands print as JSON for the same inputs."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import Browser, find_chromium
from report_inputs import write_hostile_inputs, write_inputs
from test_report import DEPTH, MEASURES, cli_json, page_data, run_cli

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (/usr/bin/chromium or on PATH); "
                                                          ".ci/run installs Debian's chromium package")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    chromium = Browser(CHROMIUM)
    try:
        yield chromium
    finally:
        chromium.close()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("page")
    paths = write_inputs(folder, queries=12, runs=3, depth=20)
    output = folder / "report.html"
    m = [x for name in MEASURES for x in ("-m", name)]
    code, _, err = run_cli("report", paths["qrels"], *paths["runs"], "--docs", paths["docs"], "--topics",
                           paths["topics"], "--depth", DEPTH, "-o", output, *m)
    assert code == 0, err
    return {"paths": paths, "output": output, "data": page_data(output), "m": m, "folder": folder}


@pytest.fixture
def page(browser: Browser, small: dict[str, Any]) -> Browser:
    """The small report, freshly opened, its console checked after the test."""
    browser.open(small["output"])
    return browser


def cells(browser: Browser, selector: str, attribute: str = "") -> Any:
    """The text (or an attribute) of every element matching ``selector``, in document order."""
    take = f"e.getAttribute({json.dumps(attribute)})" if attribute else "e.textContent"
    return browser.evaluate(f"Array.from(document.querySelectorAll({json.dumps(selector)})).map((e) => {take})")


def visible_queries(browser: Browser) -> list[str]:
    return browser.evaluate("Array.from(document.querySelectorAll('#query-table tbody tr'))"
                            ".filter((r) => !r.hidden).map((r) => r.dataset.query)")  # type: ignore[no-any-return]


def choose(browser: Browser, select: str, value: str) -> None:
    browser.evaluate(f"(() => {{ const s = document.getElementById({json.dumps(select)}); s.value = "
                     f"{json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()")


def close_to(text: str, value: float) -> bool:
    """A cell's rounded text shows ``value`` (4 decimals, a '+' on gains; halfway cases either way)."""
    return abs(float(text.lstrip("+")) - value) <= 0.5e-4 + 1e-12


class TestPage:
    def test_opens_from_a_file_without_console_errors(self, page: Browser) -> None:
        assert page.errors == []
        assert page.evaluate("location.protocol") == "file:"
        assert page.evaluate("performance.getEntriesByType('resource').length") == 0  # loads nothing

    def test_comparison_numbers_are_compare_json(self, page: Browser, small: dict[str, Any]) -> None:
        p, runs = small["paths"], small["data"]["runs"]
        expected = cli_json("compare", p["qrels"], *p["runs"], "--format", "json", "--seed", "0", *small["m"])
        means = cells(page, "#means tbody td.num", "data-v")
        assert [float(v) for v in means] == [expected["means"][r][m] for r in runs for m in MEASURES]
        shown = cells(page, "#means tbody td.num")
        assert all(close_to(t.split("[")[0], float(v)) for t, v in zip(shown, means))
        pairs = page.evaluate("Array.from(document.querySelectorAll('#pairs tbody tr')).map((r) => "
                              "Array.from(r.cells).map((c) => c.dataset.v ?? c.textContent))")
        keys = ["measure", "baseline", "run", "delta", "p_value", "p_adjusted", "significant", "effect_size",
                "ci_low", "ci_high", "wins", "ties", "losses"]
        assert [dict(zip(keys, row)) for row in pairs] == [
            {k: str(c[k]).lower() if isinstance(c[k], bool) else (str(c[k]) if isinstance(c[k], str) else
             _js(c[k])) for k in keys} for c in expected["comparisons"]]
        for run, path in zip(runs, p["runs"]):
            ci = cli_json("evaluate", "--ci", "--format", "json", p["qrels"], path, *small["m"])["ci"]
            for end in ("low", "high"):
                bounds = cells(page, f'#means tr[data-run="{run}"] .ci', f"data-{end}")
                assert [float(x) for x in bounds] == [ci[m][end] for m in MEASURES]

    def test_query_table_numbers_are_evaluate_and_diff_json(self, page: Browser, small: dict[str, Any]) -> None:
        p = small["paths"]
        per_run = [cli_json("evaluate", "-q", "--format", "json", p["qrels"], path, *small["m"])["per_query"]
                   for path in p["runs"]]
        diffs = [{d["measure"]: {q["query"]: q["delta"] for q in d["per_query"]} for d in
                  cli_json("diff", "--format", "json", p["qrels"], p["runs"][0], path, *small["m"])["measures"]}
                 for path in p["runs"][1:]]
        for measure in MEASURES:
            choose(page, "table-measure", measure)
            rows = page.evaluate("Array.from(document.querySelectorAll('#query-table tbody tr')).map((r) => "
                                 "[r.dataset.query, Array.from(r.querySelectorAll('td.num')).map((c) => "
                                 "[c.textContent, c.dataset.v ?? null])])")
            assert len(rows) == 12
            for query, numbers in rows:
                expected = [v[query][measure] for v in per_run] + [d[measure][query] for d in diffs]
                assert [float(v) for _, v in numbers] == expected
                assert all(close_to(t, e) for (t, _), e in zip(numbers, expected))
        assert page.errors == []

    def test_sort_a_column(self, page: Browser, small: dict[str, Any]) -> None:
        run = small["data"]["runs"][1]
        column = f"v:{run}"
        page.evaluate(f"document.querySelector('th[data-col=\"{column}\"]').click()")
        first = [float(v) for v in cells(page, "#query-table tbody tr td:nth-child(4)", "data-v")]
        assert first == sorted(first, reverse=True) and len(first) == 12  # numbers: largest first
        page.evaluate(f"document.querySelector('th[data-col=\"{column}\"]').click()")
        again = [float(v) for v in cells(page, "#query-table tbody tr td:nth-child(4)", "data-v")]
        assert again == sorted(first)
        assert cells(page, f'th[data-col="{column}"]', "aria-sort") == ["ascending"]
        page.evaluate("document.querySelector('th[data-col=\"query\"]').click()")
        assert visible_queries(page) == sorted(small["data"]["queries"])

    def test_filter_by_id_and_by_text(self, page: Browser, small: dict[str, Any]) -> None:
        def type_in(text: str) -> None:
            page.evaluate(f"(() => {{ const f = document.getElementById('filter'); f.value = {json.dumps(text)}; "
                          "f.dispatchEvent(new Event('input')); })()")

        type_in("q1")
        assert sorted(visible_queries(page)) == ["q1", "q10", "q11", "q12"]
        assert page.evaluate("document.getElementById('shown-count').textContent") == "4 of 12 queries"
        topics = dict(line.split("\t") for line in Path(small["paths"]["topics"]).read_text().splitlines())
        word = topics["q3"].split()[1].upper()  # case does not matter
        type_in(word)
        assert sorted(visible_queries(page)) == sorted(q for q, t in topics.items() if word.lower() in t)
        type_in("")
        assert len(visible_queries(page)) == 12

    @pytest.mark.parametrize(("query", "b"), [("q1", 1), ("q12", 2)])  # q12: missing from runs 1 and 2
    def test_open_query_shows_inspect_and_diff_query(self, page: Browser, small: dict[str, Any], query: str,
                                                     b: int) -> None:
        p, runs = small["paths"], small["data"]["runs"]
        page.evaluate(f"document.querySelector('#query-table tr[data-query=\"{query}\"]').click()")
        choose(page, "run-b", runs[b])
        assert page.evaluate("document.getElementById('query-id').textContent") == query
        rows = page.evaluate("Array.from(document.querySelectorAll('#side-by-side tbody tr')).map((r) => "
                             "Array.from(r.cells).map((c) => c.querySelector('.docid') ? "
                             "c.querySelector('.docid').textContent : c.textContent))")
        views = [cli_json("inspect", "--format", "json", "--query", query, "--depth", DEPTH, p["qrels"], p["runs"][i],
                          *small["m"]) for i in (0, b)]
        for side, view in enumerate(views):
            shown = [row[1 + 4 * side: 5 + 4 * side] for row in rows if row[2 + 4 * side]]
            assert shown == [["\u2605" if d["relevant"] else "", d["doc_id"], repr(d["score"]).removesuffix(".0")
                              if d["score"] == int(d["score"]) else repr(d["score"]),
                              "unjudged" if d["judgment"] is None else str(d["judgment"])] for d in view["top"]]
        values = page.evaluate("Array.from(document.querySelectorAll('#query-values tbody tr')).map((r) => "
                               "[r.dataset.measure, Array.from(r.querySelectorAll('td.num')).map((c) => c.dataset.v)])")
        for i, path in enumerate(p["runs"]):  # every run's values of the query, when it has results for it
            view = cli_json("inspect", "--format", "json", "--query", query, p["qrels"], path, *small["m"])
            assert [float(numbers[i]) for _, numbers in values] == [view["values"][m] for m, _ in values]
        assert [m for m, _ in values] == MEASURES
        moved = cli_json("diff", "--format", "json", "--query", query, "--depth", DEPTH, p["qrels"], p["runs"][0],
                         p["runs"][b])
        for table, key, rank in (("entered", "entered", "rank_in_a"), ("left", "left", "rank_in_b")):
            shown = page.evaluate(f"Array.from(document.querySelectorAll('#{table} tbody tr')).map((r) => "
                                  "r.querySelector('.docid') ? [r.querySelector('.docid').textContent, "
                                  "r.cells[1].textContent, r.cells[2].textContent] : r.textContent)")
            assert shown == ([[d["doc_id"], str(d["rank"]), "\u2013" if d[rank] is None else str(d[rank])]
                              for d in moved[key]] or ["none"])
        missed = cells(page, "#missed-a tbody .docid")
        assert missed == [d["doc_id"] for d in views[0]["missed"]]
        assert page.errors == []

    def test_swapped_runs_swap_entered_and_left(self, page: Browser, small: dict[str, Any]) -> None:
        runs = small["data"]["runs"]
        page.evaluate("document.querySelector('#query-table tr[data-query=\"q2\"]').click()")
        choose(page, "run-a", runs[2])
        choose(page, "run-b", runs[0])
        pair = small["data"]["pairs"][f"{runs[0]}\t{runs[2]}"]["q2"]
        assert cells(page, "#entered tbody .docid") == [d["doc_id"] for d in pair["left"]]
        assert cells(page, "#left tbody .docid") == [d["doc_id"] for d in pair["entered"]]

    def test_clicking_a_bar_opens_its_query(self, page: Browser, small: dict[str, Any]) -> None:
        bars = cells(page, "#diff-chart rect.bar", "data-query")
        run = small["data"]["runs"][1]
        assert bars == [q["query"] for q in small["data"]["diffs"][run]["measures"][0]["per_query"]]
        page.evaluate("document.querySelectorAll('#diff-chart rect.bar')[2].dispatchEvent(new MouseEvent('click'))")
        assert page.evaluate("document.getElementById('query-id').textContent") == bars[2]
        assert page.evaluate("document.getElementById('run-b').value") == run

    def test_screenshot(self, page: Browser, small: dict[str, Any]) -> None:
        page.evaluate("document.querySelector('#query-table tr[data-query=\"q1\"]').click()")
        png = page.screenshot(small["folder"] / "query.png")
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 20_000  # a page was drawn, not a blank
        assert page.errors == []


def _js(value: float) -> str:
    """How JavaScript's String() writes a number that Python's repr writes: the same shortest digits."""
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa.removesuffix('.0')}e{'+' if not exponent.startswith('-') else ''}{int(exponent)}"
    return text.removesuffix(".0")


def test_hostile_inputs_stay_text(browser: Browser, tmp_path: Path) -> None:
    """Ids and texts with markup, quotes, control characters and bytes that are not UTF-8 show as text."""
    doc = b"d<script>window.__pwned=1</script>\"'\x01\xff"
    query = b"q<img/src=x/onerror=window.__pwned=2>"
    inputs = write_hostile_inputs(tmp_path, doc=doc, query=query,
                                  text=b"</script><svg onload=window.__pwned=3>\xe2\x80\xa8\x1b\xfe",
                                  topic=b'"><iframe src=javascript:window.__pwned=4>')
    output = tmp_path / "r.html"
    code, _, err = run_cli("report", *inputs, "-o", output, "--names", "<b>A</b>,B&amp;",
                           "--title", "<script>window.__pwned=5</script>")
    assert code == 0, err
    browser.open(output)
    browser.evaluate("document.querySelector('#query-table tbody tr').click()")
    time.sleep(0.1)
    assert browser.evaluate("window.__pwned === undefined") is True
    assert browser.evaluate("document.querySelectorAll('img, iframe, b, #query svg').length") == 0
    assert browser.evaluate("document.title") == "<script>window.__pwned=5</script>"
    # A control character shows as its escape, as the command line prints it; a byte that is not UTF-8 as U+FFFD.
    assert cells(browser, "#side-by-side tbody .docid")[0] == "d<script>window.__pwned=1</script>\"'\\x01\ufffd"
    assert browser.evaluate("document.querySelector('#query-table tbody tr').dataset.query") == query.decode(
        "utf-8", "surrogateescape")  # the page keeps the id itself
    assert cells(browser, "#side-by-side tbody .text")[0].startswith("</script><svg onload=window.__pwned=3>")
    assert browser.evaluate("document.getElementById('query-id').textContent") == "q<img/src=x/onerror=window.__pwned=2>"
    assert browser.errors == []


def test_large_report_is_small_and_quick(browser: Browser, tmp_path: Path) -> None:
    """200 queries, 4 runs of depth 100, with document text: under 10 MB, open in under 2 s."""
    paths = write_inputs(tmp_path, queries=200, runs=4, depth=100, pool=150, words=40)
    output = tmp_path / "large.html"
    code, _, err = run_cli("report", paths["qrels"], *paths["runs"], "--docs", paths["docs"], "--topics",
                           paths["topics"], "-o", output, "--quiet")
    assert code == 0, err
    assert output.stat().st_size < 10_000_000
    seconds = browser.open(output)
    assert seconds < 2.0
    assert len(visible_queries(browser)) == 200
    assert browser.errors == []


def test_one_run(browser: Browser, small: dict[str, Any], tmp_path: Path) -> None:
    """A report of one run opens and shows its queries, with nothing to compare."""
    p = small["paths"]
    output = tmp_path / "one.html"
    code, _, err = run_cli("report", p["qrels"], p["runs"][0], "-o", output, "--docs", p["docs"])
    assert code == 0, err
    browser.open(output)
    assert browser.evaluate("document.querySelector('#comparison h2').textContent") == "Means"
    browser.evaluate("document.querySelector('#query-table tr[data-query=\"q3\"]').click()")
    assert len(cells(browser, "#side-by-side tbody tr")) == 10
    assert browser.errors == []


def test_difference_chart_scale_reads_small_and_no_differences(browser: Browser, tmp_path: Path) -> None:
    """The chart's scale shows a largest AP difference of about 0.002 with two significant digits
    (not as 0.00), and a run equal to the baseline on every query gets a sentence instead of an
    empty chart with a scale of -0.00 to +0.00."""
    paths = write_inputs(tmp_path, queries=6, runs=1, depth=20)
    base = Path(str(paths["runs"][0]))  # type: ignore[index]
    judged = {tuple(line.split()[::2][:2]): int(line.split()[3])
              for line in Path(str(paths["qrels"])).read_text().splitlines()}
    lines = [line.split() for line in base.read_text().splitlines()]
    # Swap a relevant document deep in one ranking with the one below it: AP moves a little.
    i = next(i for i in range(len(lines) - 1) if int(lines[i][3]) >= 15 and lines[i][0] == lines[i + 1][0]
             and judged.get((lines[i][0], lines[i][2]), 0) >= 1 > judged.get((lines[i + 1][0], lines[i + 1][2]), 0))
    swapped = [fields[:] for fields in lines]
    swapped[i][2], swapped[i + 1][2] = lines[i + 1][2], lines[i][2]
    (tmp_path / "same.txt").write_text(base.read_text())
    (tmp_path / "tiny.txt").write_text("".join(" ".join(fields) + "\n" for fields in swapped))
    output = tmp_path / "r.html"
    code, _, err = run_cli("report", paths["qrels"], base, tmp_path / "same.txt", tmp_path / "tiny.txt",
                           "--names", "base,same,tiny", "-m", "AP", "-o", output)
    assert code == 0, err
    deltas = [q["delta"] for q in page_data(output)["diffs"]["tiny"]["measures"][0]["per_query"]]
    largest = max(abs(d) for d in deltas)
    assert 1e-4 < largest < 5e-3, deltas  # the case this test is about: 0.00 at two decimals
    browser.open(output)
    choose(browser, "chart-measure", "AP")
    choose(browser, "chart-run", "tiny")
    scale = cells(browser, "#diff-chart svg > text")[:3]  # the scale's three labels, bottom to top
    assert scale[1] == "0" and scale[0].startswith("-") and scale[2].startswith("+"), scale
    assert abs(float(scale[2]) - largest) <= 0.05 * largest and float(scale[0]) == -float(scale[2]), scale
    choose(browser, "chart-run", "same")
    assert cells(browser, "#diff-chart svg") == []
    assert cells(browser, "#diff-chart p.note") == [
        "Every query has the same AP in same as in base: no differences to draw."]
    assert browser.errors == []
