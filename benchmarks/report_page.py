"""The HTML report's size and opening time: ``retrieval-eval report`` on a made-up collection, opened
in headless Chromium (the tests' driver, tests/chromium.py).

    python benchmarks/report_page.py [--queries 200] [--runs 4] [--depth 100] [--words 40]
                                     [--report-depth 10] [--screenshot FILE.png] [--workdir DIR]

The inputs come from tests/report_inputs.py: a pool of 150 documents a query, each with a text of
``--words`` words (about 7 characters each), and runs of ``--depth`` documents. Prints the time to
write the report, its size, the size of its embedded data by part, and the time until the page's
script has run in Chromium. ``--screenshot FILE.png`` also photographs the first screen into
FILE.png, and the first query opened into FILE-query.png.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from chromium import Browser, find_chromium
from report_inputs import write_inputs

from retrieval_eval.cli import main


def measure(args: argparse.Namespace, folder: Path) -> None:
    paths = write_inputs(folder, queries=args.queries, runs=args.runs, depth=args.depth, pool=150, words=args.words)
    output = folder / "report.html"
    start = time.perf_counter()
    code = main(["report", str(paths["qrels"]), *map(str, paths["runs"]), "--docs", str(paths["docs"]),  # type: ignore[call-overload]
                 "--topics", str(paths["topics"]), "--depth", str(args.report_depth), "-o", str(output), "--quiet"])
    written = time.perf_counter() - start
    assert code == 0
    page = output.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.DOTALL).group(1))  # type: ignore[union-attr]
    print(f"{args.queries} queries, {args.runs} runs of depth {args.depth}, top {args.report_depth} shown, "
          f"{args.words}-word documents")
    print(f"  written in {written:.2f} s: {len(page.encode()) / 1e6:.2f} MB")
    for part in ("views", "pairs", "docs", "evaluations", "diffs"):
        print(f"    {part:<12}{len(json.dumps(data[part])) / 1e6:6.2f} MB")
    executable = find_chromium()
    if executable is None:
        print("  no Chromium found: not opened")
        return
    browser = Browser(executable)
    try:
        seconds = min(browser.open(output) for _ in range(3))
        print(f"  opened in Chromium in {seconds:.2f} s (best of 3); console errors: {len(browser.errors)}")
        if args.screenshot:
            browser.screenshot(args.screenshot)
            browser.evaluate("document.querySelector('#query-table tbody tr').click()")
            browser.screenshot(args.screenshot.removesuffix(".png") + "-query.png")
    finally:
        browser.close()


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--words", type=int, default=40)
    parser.add_argument("--report-depth", type=int, default=10)
    parser.add_argument("--screenshot", metavar="FILE.png")
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        measure(args, args.workdir)
    else:
        with tempfile.TemporaryDirectory() as folder:
            measure(args, Path(folder))


if __name__ == "__main__":
    main_()
