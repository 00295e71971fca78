"""The evaluation report as one self-contained HTML file: ``retrieval-eval report`` and ``retrieval_eval.report``.

The page is a template, a small hand-written script and style sheet (``report.js`` and
``report.css`` beside this module, copied into the page) and the data of
:func:`~retrieval_eval.report.html_data.report_data` in a ``<script type="application/json">``
block. The script builds every table and chart from that data with ``textContent`` and SVG
elements, never with markup made from data, so an id or a text cannot inject anything. The page
loads nothing: no font, no script, no style from anywhere else; it opens from a file, a CI artifact
or an e-mail attachment.

>>> page = render({"title": "<b>x</b>", "s": "</script>&\\u2028"})
>>> "</script>&" in page.split('id="report-data">')[1].split("</script>")[0]
False
"""

from __future__ import annotations

import html
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..io.files import replacing, same_file
from ..model import RetrievalEvalError
from .html_data import DEFAULT_DEPTH, DEFAULT_TEXT_CHARS, DEFAULT_UNJUDGED_BELOW, Limits

__all__ = ["json_for_script", "render", "report", "write_page"]

_HERE = Path(__file__).parent


def json_for_script(data: Any) -> str:
    """``data`` as JSON that can sit in a ``<script>`` block: ASCII only (so U+2028, U+2029 and the
    lone surrogates that keep an id's non-UTF-8 bytes are escapes), with ``<``, ``>`` and ``&``
    written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (no ``</script>`` or ``<!--`` can appear)."""
    text = json.dumps(data, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(data: Mapping[str, Any]) -> str:
    """The page for ``data`` (the object of :func:`~retrieval_eval.report.html_data.report_data`)."""
    title = html.escape(str(data.get("title", "Evaluation report")).encode("utf-8", "replace").decode("utf-8"))
    style = (_HERE / "report.css").read_text(encoding="utf-8")
    script = (_HERE / "report.js").read_text(encoding="utf-8")
    return "".join((
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<meta name=\"generator\" content=\"retrieval-eval report\">\n",
        "<link rel=\"icon\" href=\"data:,\">\n",
        f"<title>{title}</title>\n<style>\n{style}</style>\n</head>\n<body>\n",
        _BODY,
        f"<script type=\"application/json\" id=\"report-data\">{json_for_script(data)}</script>\n",
        f"<script>\n{script}</script>\n</body>\n</html>\n",
    ))


def write_page(path: str | os.PathLike[str], data: Mapping[str, Any]) -> int:
    """Write the page for ``data`` to ``path`` (a new file renamed over it when complete); returns its size."""
    page = render(data).encode("utf-8")
    with replacing(path) as out:
        out.write(page)
    return len(page)


_BODY = """\
<header><h1 id="title"></h1><p id="subtitle"></p></header>
<noscript><p class="note">This report draws its tables and charts with JavaScript: open it in a browser with
scripts allowed.</p></noscript>
<main>
<section id="comparison"><h2>Comparison</h2>
<div class="scroll"><table id="means"></table></div><p id="legend" class="note"></p>
<details><summary>Every comparison (compare --format json)</summary>
<div class="scroll"><table id="pairs"></table></div></details></section>
<section id="charts"><h2>Per-query differences and precision&ndash;recall</h2>
<div class="controls"><label>measure <select id="chart-measure"></select></label>
<label>run <select id="chart-run"></select></label> <span class="note">against the baseline; click a bar to
open the query</span></div>
<div class="charts"><div id="diff-chart" class="chart"></div><div id="pr-chart" class="chart"></div></div></section>
<section id="queries"><h2>Queries</h2>
<div class="controls"><input id="filter" type="search" placeholder="filter by query id or text" aria-label="filter">
<label>measure <select id="table-measure"></select></label> <span id="shown-count" class="note"></span></div>
<div class="scroll tall"><table id="query-table" class="sortable"><thead></thead><tbody></tbody></table></div>
<p id="flag-note" class="note"></p></section>
<section id="query" hidden><h2>Query <span id="query-id"></span></h2><p id="query-text"></p>
<div class="controls"><label>run A <select id="run-a"></select></label>
<label>run B <select id="run-b"></select></label></div>
<div class="scroll"><table id="query-values"></table></div>
<h3>Rankings side by side</h3><p id="cap-note" class="note"></p>
<div class="scroll"><table id="side-by-side"></table></div>
<div class="two"><div><h3 id="entered-title">Entered the top k</h3><table id="entered"></table></div>
<div><h3 id="left-title">Left the top k</h3><table id="left"></table></div></div>
<h3>Relevant documents the runs missed</h3><div class="two"><div id="missed-a"></div><div id="missed-b"></div></div>
</section>
<section id="provenance"><h2>How the numbers were made</h2><table id="provenance-table"></table></section>
</main>
"""


def report(
    qrels: str | os.PathLike[str],
    runs: Mapping[str, str | os.PathLike[str]] | Sequence[str | os.PathLike[str]],
    measures: Sequence[str] | None = None,
    *,
    output: str | os.PathLike[str],
    docs: str | os.PathLike[str] | None = None,
    topics: str | os.PathLike[str] | None = None,
    baseline: str | None = None,
    all_pairs: bool = False,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    permutations: int = 10_000,
    samples: int = 10_000,
    seed: int | None = 0,
    depth: int = DEFAULT_DEPTH,
    text_chars: int = DEFAULT_TEXT_CHARS,
    unjudged_below: float = DEFAULT_UNJUDGED_BELOW,
    title: str | None = None,
    rel: int = 1,
    complete: bool = True,
    judged_only: bool = False,
    max_depth: int | None = None,
    order: str = "score",
    duplicates: str = "error",
) -> dict[str, Any]:
    """Write the HTML report of ``runs`` on ``qrels`` to ``output``; returns the data it embeds.

    ``retrieval_eval.report(...)`` calls this function. ``runs`` maps names to run files (a list of
    files is named by their file names); with one run the page has no comparison; ``measures``, ``baseline``, ``all_pairs``, ``test``,
    ``correction``, ``alpha``, ``permutations``, ``samples`` and ``seed`` are
    :func:`~retrieval_eval.compare`'s (the seed defaults to 0 here, so a report is reproducible);
    ``rel`` to ``duplicates`` as in :meth:`~retrieval_eval.SetEvaluator.from_trec`. ``docs`` (TSV or
    JSONL of ``docid`` and text, gzip ok) and ``topics`` (TREC topics or a TSV) add texts. Each
    ranking shows its top ``depth`` documents; texts are cut to ``text_chars`` characters; a query is
    flagged unjudged-heavy in a run whose Judged@depth is below ``unjudged_below``.

    Raises
    ------
    RetrievalEvalError
        Bad options or inputs (``path:line`` for a bad line), or ``output`` is one of the inputs.
    OSError
        ``output`` could not be written; an existing file there is left as it was.
    """
    from ..analysis.comparison import _check_options, _measures_compared, compare
    from ..engine.build import RunHandoff
    from ..evaluators import SetEvaluator
    from ..evaluators.options import _read_options
    from ..io.formats import read_qrels_columns, read_run_columns

    if isinstance(runs, Mapping):
        named = dict(runs)
    else:
        named = {os.path.basename(os.fspath(r)): r for r in runs}
        if len(named) < len(runs):
            raise RetrievalEvalError("two runs have the same file name; name them: runs={'a': path_a, 'b': path_b}")
    limits = check_limits(depth, text_chars, unjudged_below)
    paths = [qrels, *named.values(), *(p for p in (docs, topics) if p is not None)]
    clash = same_file(output, paths)
    if clash is not None:
        raise RetrievalEvalError(f"output {os.fspath(output)!r} is also an input ({clash}); writing the report "
                                 "would replace it")
    correction = _check_options(test, correction, alpha, permutations, samples, seed)
    measure_of = _measures_compared(measures, rel)
    read_options = _read_options(max_depth, duplicates, order)
    judged = read_qrels_columns(qrels, with_subtopics=any(m.definition.subtopics for m in measure_of.values()))
    evaluations = {name: SetEvaluator.from_columns(judged, RunHandoff(read_run_columns(path, with_ranks=order == "rank")),
                                                   rel=rel, complete=complete, judged_only=judged_only,
                                                   **read_options)
                   for name, path in named.items()}
    comparison = compare(None, evaluations, list(measure_of), baseline=baseline, all_pairs=all_pairs, test=test,
                         correction=correction, alpha=alpha, permutations=permutations, samples=samples, seed=seed,
                         rel=rel) if len(evaluations) > 1 else None
    options = {"measures": list(measure_of), "test": test, "correction": correction, "alpha": alpha,
               "permutations": permutations, "samples": samples, "seed": seed, "rel": rel, "complete": complete,
               "judged_only": judged_only, "max_depth": max_depth, "order": order, "duplicates": duplicates,
               "depth": depth, "text_chars": text_chars, "unjudged_below": unjudged_below}
    return build_and_write(output, evaluations, list(measure_of.values()), comparison, rel=rel, limits=limits, qrels=qrels,
                           runs=list(named.values()), docs=docs, topics=topics, options=options, title=title)


def check_limits(depth: int, text_chars: int, unjudged_below: float) -> Limits:
    """The report's limits, each checked: a whole depth and text length >= 1, a threshold in [0, 1]."""
    for name, value in (("depth", depth), ("text_chars", text_chars)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise RetrievalEvalError(f"'{name}' must be a whole number >= 1; got {value!r}")
    if isinstance(unjudged_below, bool) or not isinstance(unjudged_below, (int, float)) or not (
            0.0 <= unjudged_below <= 1.0):
        raise RetrievalEvalError(f"'unjudged_below' must be a number from 0 to 1; got {unjudged_below!r}")
    return Limits(depth, text_chars, float(unjudged_below))


def build_and_write(output: str | os.PathLike[str], evaluations: Mapping[str, Any], measures: Sequence[Any],
                    comparison: Any, *, rel: int, limits: Limits, qrels: object, runs: Sequence[object],
                    docs: str | os.PathLike[str] | None, topics: str | os.PathLike[str] | None,
                    options: Mapping[str, Any], title: str | None) -> dict[str, Any]:
    """The data gathered (texts read for the shown documents only), the inputs stamped, the page written."""
    from ..io.texts import read_documents, read_topics
    from .html_data import file_stamp, report_data, shown_documents

    def stamp(source: object) -> dict[str, str] | None:
        return file_stamp(source) if isinstance(source, (str, os.PathLike)) and os.fspath(source) != "-" else (
            {"name": "-", "sha256": ""})

    topic_texts = read_topics(topics) if topics is not None else None
    # The version from the top package, loaded before any of its modules (importing it here would
    # point an import up the pipeline).
    version = sys.modules[__name__.split(".")[0]].__version__
    provenance = {"version": version, "options": dict(options),
                  "inputs": {"qrels": stamp(qrels), "runs": [stamp(r) for r in runs],
                             "docs": stamp(docs) if docs is not None else None,
                             "topics": stamp(topics) if topics is not None else None}}
    data = report_data(evaluations, measures, comparison, rel=rel, limits=limits, topics=topic_texts, provenance=provenance,
                       title=title)
    if docs is not None:
        data["docs"] = read_documents(docs, shown_documents(data["views"], limits.depth), chars=limits.text_chars)
    write_page(output, data)
    return data
