// retrieval-eval report: builds the page from the JSON block #report-data. Every text goes in with
// textContent or an SVG text node, never as markup, so no id or document can inject anything.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const DIGITS = 4;
  const INTEGER = new Set(D.integer);
  const COLORS = ["#2957a4", "#c4572a", "#1a7f4b", "#8d3fa8", "#a8861a", "#2a8fa8", "#b42335", "#555f6e"];
  const state = { sortCol: null, sortDir: 1, query: null };

  // Text as shown: a control character as its escape (\x1b, as the command line prints it), a byte
  // of an id that is not UTF-8 (kept as a lone surrogate) as U+FFFD.
  function shown(text) {
    return String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
      (c) => "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0")).replace(/[\udc80-\udcff]/gu, "\ufffd");
  }
  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "text") e.textContent = shown(v);
      else if (k === "cls") e.className = v;
      else e.setAttribute(k, v);
    }
    for (const kid of kids) if (kid !== null && kid !== undefined) e.append(kid);
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = shown(text);
    return e;
  }
  // A number cell: the rounded text shown, the exact value in data-v (JavaScript's shortest
  // round-trip form, the same double as the JSON's).
  function fmt(v, measure) {
    if (v === null || v === undefined) return "\u2013";
    return INTEGER.has(measure) ? String(v) : v.toFixed(DIGITS);
  }
  function numCell(v, measure, extra) {
    const td = el("td", { cls: "num" + (extra ? " " + extra : ""), text: fmt(v, measure) });
    if (v !== null && v !== undefined) td.dataset.v = String(v);
    return td;
  }
  function signed(v, measure) {
    const td = numCell(v, measure, v > 0 ? "pos" : v < 0 ? "neg" : "");
    if (v > 0) td.textContent = "+" + td.textContent;
    return td;
  }
  function options(select, values, chosen) {
    select.replaceChildren(...values.map((v) => el("option", { value: v, text: v })));
    if (chosen !== undefined) select.value = chosen;
  }
  const others = D.runs.filter((r) => r !== D.baseline);
  // the measures with a value per query (a summary-only measure, as gm_map, has none)
  const firstRow = Object.values(D.evaluations[D.baseline].per_query)[0] || {};
  const perQueryMeasures = D.measures.filter((m) => m in firstRow);
  // diffs[run][measure] -> {query: delta}
  const deltas = {};
  for (const run of others) {
    deltas[run] = {};
    for (const m of D.diffs[run].measures) {
      const by = {};
      for (const q of m.per_query) by[q.query] = q.delta;
      deltas[run][m.measure] = by;
    }
  }
  const topicText = (q) => (D.topics[q] ? D.topics[q][0] : "");

  // ---------------------------------------------------------------- header and comparison
  function header() {
    $("title").textContent = shown(D.title);
    const c = D.comparison;
    const what = c ? `${D.runs.length} runs, ${D.queries.length} queries (${c.queries} compared), baseline ` +
      D.baseline : `one run, ${D.queries.length} queries`;
    $("subtitle").textContent = shown(`${what}; made ${D.provenance.date} by retrieval-eval ${D.provenance.version}`);
  }
  function comparison() {
    const c = D.comparison || { letters: {}, marks: {}, comparisons: [], means: {},
      legend: "One run: nothing to compare. The means are evaluate's." };
    for (const run of D.runs) {  // without a comparison, the means are the run's summary (evaluate)
      if (!D.comparison) { c.means[run] = D.evaluations[run].aggregate; c.marks[run] = {}; c.letters[run] = ""; }
    }
    const head = el("tr", {}, el("th", { text: "run" }), el("th", { text: "" }),
      ...D.measures.map((m) => el("th", { cls: "num", text: m })));
    const rows = D.runs.map((run) => {
      const tr = el("tr", { "data-run": run }, el("td", { text: run + (run === D.baseline && D.comparison ? " (baseline)" : "") }),
        el("td", { cls: "marks", text: c.letters[run] }));
      for (const m of D.measures) {
        const td = numCell(c.means[run][m], m);
        const marks = c.marks[run][m] || [];
        if (marks.length) td.append(el("span", { cls: "marks", text: "[" + marks.join("") + "]" }));
        const ci = D.ci[run] && D.ci[run][m];
        if (ci) {
          const span = el("span", { cls: "ci", text: `[${ci.low.toFixed(DIGITS)}, ${ci.high.toFixed(DIGITS)}]` });
          span.dataset.low = String(ci.low);
          span.dataset.high = String(ci.high);
          span.title = `${Math.round(ci.level * 100)}% interval of the mean (${ci.method})`;
          td.append(span);
        }
        tr.append(td);
      }
      return tr;
    });
    $("means").replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows));
    const anyCi = D.runs.some((r) => D.ci[r] && Object.values(D.ci[r]).some((x) => x));
    $("legend").textContent = shown(c.legend) + (anyCi ? " Below each mean: its confidence interval (evaluate --ci)." : "");
    const cols = ["measure", "baseline", "run", "delta", "p_value", "p_adjusted", "significant", "effect_size",
      "ci_low", "ci_high", "wins", "ties", "losses"];
    const counts = new Set(["wins", "ties", "losses"]);
    const body = c.comparisons.map((p) => el("tr", {}, ...cols.map((k) => {
      const v = p[k];
      if (typeof v !== "number") return el("td", { text: String(v) });
      const td = numCell(v, "");
      if (counts.has(k)) td.textContent = String(v);
      return td;
    })));
    $("pairs").closest("details").hidden = !D.comparison;
    if (!D.comparison) {  // one run: its means, and no run to draw against a baseline
      $("comparison").querySelector("h2").textContent = "Means";
      $("chart-run").closest(".controls").hidden = true;
    }
    $("pairs").replaceChildren(el("thead", {}, el("tr", {}, ...cols.map((k) => el("th", { text: k })))),
      el("tbody", {}, ...body));
  }

  // ---------------------------------------------------------------- charts
  function diffChart() {
    const box = $("diff-chart");
    const run = $("chart-run").value, m = $("chart-measure").value;
    if (!run || !deltas[run] || !deltas[run][m]) {
      box.replaceChildren(el("p", { cls: "note", text: "One run: no differences to draw." }));
      return;
    }
    const items = D.diffs[run].measures.find((x) => x.measure === m).per_query;  // largest gain first
    const max = Math.max(0, ...items.map((q) => Math.abs(q.delta)));
    if (max === 0) {  // two runs that agree on every query: an empty chart would show a scale of nothing
      box.replaceChildren(el("p", { cls: "note", text: `Every query has the same ${m} in ${run} as in ${D.baseline}: ` +
        "no differences to draw." }));
      return;
    }
    // The scale's ends with two significant digits (0.0042, not 0.00); below 1e-4 as 4.2e-7.
    const digits = Math.max(2, 1 - Math.floor(Math.log10(max)));
    const tick = (v) => v === 0 ? "0" : (v > 0 ? "+" : "") + (digits > 5 ? v.toExponential(1) : v.toFixed(digits));
    // The left margin holds the longest label (about 7 px a character at the chart's font size).
    const W = 620, H = 240, L = Math.max(44, 10 + 7 * tick(-max).length), R = 10, T = 18, B = 22;
    const y = (v) => T + (H - T - B) * (1 - (v + max) / (2 * max));
    const s = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img" });
    s.append(svg("title", {}, `${m}: ${run} minus ${D.baseline}, per query`));
    for (const v of [-max, 0, max]) {
      s.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: v === 0 ? "axis" : "grid" }));
      s.append(svg("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end" }, tick(v)));
    }
    const step = (W - L - R) / Math.max(items.length, 1);
    items.forEach((q, i) => {
      const top = Math.min(y(q.delta), y(0)), h = Math.max(Math.abs(y(q.delta) - y(0)), q.delta === 0 ? 0 : 1);
      const bar = svg("rect", { x: L + i * step + step * 0.1, y: top, width: Math.max(step * 0.8, 0.5), height: h,
        fill: q.delta >= 0 ? "#1a7f4b" : "#b42335", class: "bar", "data-query": q.query });
      bar.append(svg("title", {}, `${q.query}: ${q.a.toFixed(DIGITS)} \u2192 ${q.b.toFixed(DIGITS)} ` +
        `(${q.delta >= 0 ? "+" : ""}${q.delta.toFixed(DIGITS)})`));
      bar.addEventListener("click", () => openQuery(q.query, run));
      s.append(bar);
    });
    const d = D.diffs[run].measures.find((x) => x.measure === m);
    s.append(svg("text", { x: L, y: 12 }, `${m}: ${run} \u2212 ${D.baseline} \u2014 helped ${d.helped}, ` +
      `hurt ${d.hurt}, unchanged ${d.unchanged}`));
    box.replaceChildren(s);
  }
  function prChart() {
    const W = 420, H = 240, L = 46, R = 110, T = 12, B = 30;
    const x = (v) => L + (W - L - R) * v, y = (v) => T + (H - T - B) * (1 - v);
    const s = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img" });
    s.append(svg("title", {}, "Interpolated precision at 11 recall points (mean over queries)"));
    for (let i = 0; i <= 10; i += 2) {
      const v = i / 10;
      s.append(svg("line", { x1: x(0), x2: x(1), y1: y(v), y2: y(v), class: i ? "grid" : "axis" }));
      s.append(svg("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end" }, v.toFixed(1)));
      s.append(svg("text", { x: x(v), y: H - B + 14, "text-anchor": "middle" }, v.toFixed(1)));
    }
    s.append(svg("text", { x: x(0.5), y: H - 3, "text-anchor": "middle" }, "recall"));
    s.append(svg("text", { x: 10, y: y(0.5), "text-anchor": "middle", transform: `rotate(-90 10 ${y(0.5)})` },
      "interpolated precision"));
    D.runs.forEach((run, i) => {
      const points = Object.values(D.pr[run]).map((p, j) => [x(j / 10), y(p)]);
      const color = COLORS[i % COLORS.length];
      s.append(svg("polyline", { points: points.map((p) => p.join(",")).join(" "), fill: "none", stroke: color,
        "stroke-width": 2, "data-run": run }));
      s.append(svg("rect", { x: W - R + 8, y: T + 4 + i * 16, width: 10, height: 3, fill: color }));
      s.append(svg("text", { x: W - R + 22, y: T + 9 + i * 16 }, run.length > 14 ? run.slice(0, 13) + "\u2026" : run));
    });
    $("pr-chart").replaceChildren(s);
  }

  // ---------------------------------------------------------------- the queries table
  function columns() {
    const m = $("table-measure").value;
    const cols = [{ key: "query", label: "query", value: (q) => q }];
    if (Object.keys(D.topics).length) cols.push({ key: "text", label: "text", value: topicText });
    for (const run of D.runs) {
      cols.push({ key: "v:" + run, label: run, num: true, measure: m,
        value: (q) => { const r = D.evaluations[run].per_query[q]; return r && m in r ? r[m] : null; } });
    }
    for (const run of others) {
      cols.push({ key: "d:" + run, label: "\u0394 " + run, num: true, delta: true, measure: m,
        value: (q) => (deltas[run][m] && q in deltas[run][m] ? deltas[run][m][q] : null) });
    }
    cols.push({ key: "flags", label: "flags", value: (q) => flagText(q) });
    return cols;
  }
  function flagText(q) {
    const f = D.flags[q] || {};
    return ["missing", "unjudged", "tied"].filter((k) => f[k]).map((k) => `${k}: ${f[k].join(", ")}`).join("; ");
  }
  function queryTable() {
    const cols = columns();
    const head = el("tr", {}, ...cols.map((c) => {
      const th = el("th", { cls: c.num ? "num" : "", text: c.label, "data-col": c.key, title: "sort" });
      if (state.sortCol === c.key) th.setAttribute("aria-sort", state.sortDir > 0 ? "ascending" : "descending");
      th.addEventListener("click", () => {
        state.sortDir = state.sortCol === c.key ? -state.sortDir : (c.num ? -1 : 1);
        state.sortCol = c.key;
        queryTable();
      });
      return th;
    }));
    let order = D.queries.slice();
    const col = cols.find((c) => c.key === state.sortCol);
    if (col) {
      const values = new Map(order.map((q) => [q, col.value(q)]));
      order.sort((a, b) => {
        const va = values.get(a), vb = values.get(b);
        if (va === null && vb === null) return 0;
        if (va === null) return 1;  // no value: last, either way
        if (vb === null) return -1;
        return (va < vb ? -1 : va > vb ? 1 : 0) * state.sortDir;
      });
    }
    const rows = order.map((q) => {
      const tr = el("tr", { "data-query": q });
      for (const c of cols) {
        if (c.key === "flags") {
          const td = el("td");
          const f = D.flags[q] || {};
          for (const k of ["missing", "unjudged", "tied"]) {
            if (f[k]) td.append(el("span", { cls: "flag " + k, text: k, title: `${k} in ${f[k].join(", ")}` }));
          }
          tr.append(td);
        } else if (c.num) tr.append(c.delta ? signed(c.value(q), c.measure) : numCell(c.value(q), c.measure));
        else tr.append(el("td", { cls: c.key === "query" ? "docid" : "", text: c.value(q) }));
      }
      if (q === state.query) tr.classList.add("open");
      tr.addEventListener("click", () => openQuery(q));
      return tr;
    });
    $("query-table").tHead.replaceChildren(head);
    $("query-table").tBodies[0].replaceChildren(...rows);
    filterRows();
  }
  function filterRows() {
    const needle = $("filter").value.trim().toLowerCase();
    let count = 0;
    for (const tr of $("query-table").tBodies[0].rows) {
      const q = tr.dataset.query;
      const hit = !needle || q.toLowerCase().includes(needle) || topicText(q).toLowerCase().includes(needle);
      tr.hidden = !hit;
      count += hit ? 1 : 0;
    }
    $("shown-count").textContent = `${count} of ${D.queries.length} queries`;
  }

  // ---------------------------------------------------------------- one query
  function grade(d) {
    if (d.judgment === null) return el("span", { cls: "unjudged", text: "unjudged" });
    return el("span", { cls: "grade", text: d.judgment < 0 ? `${d.judgment} (pooled, not judged)` : String(d.judgment) });
  }
  function docCell(id, cls) {
    const td = el("td", { cls: "doc" + (cls ? " " + cls : "") }, el("span", { cls: "docid", text: id }));
    if (id in D.docs) {  // three lines at first; a click shows the whole (embedded) text
      const text = el("span", { cls: "text", text: D.docs[id], title: "click to show it all" });
      text.addEventListener("click", (event) => { event.stopPropagation(); text.classList.toggle("open"); });
      td.append(text);
    }
    return td;
  }
  // What entered and left the top k between runs a and b (embedded for a pair in either order), or
  // a note saying why there is nothing to show.
  function moved(a, b, query) {
    if (a === b) return { entered: [], left: [], rankOther: ["rank_in_a", "rank_in_b"] };
    const direct = D.pairs[a + "\t" + b], swapped = D.pairs[b + "\t" + a];
    if (!direct && !swapped) {
      return { note: "Not embedded for this pair of runs: make the report with --all-pairs, or run retrieval-eval diff --query." };
    }
    if (!D.views[a][query] || !D.views[b][query]) return { note: "The query is not evaluated in both runs." };
    if (direct) return { entered: direct[query].entered, left: direct[query].left, rankOther: ["rank_in_a", "rank_in_b"] };
    return { entered: swapped[query].left, left: swapped[query].entered, rankOther: ["rank_in_b", "rank_in_a"] };
  }
  function openQuery(q, run) {
    state.query = q;
    $("query").hidden = false;
    $("query-id").textContent = shown(q);
    const topic = D.topics[q];
    $("query-text").textContent = topic ? shown(topic[0] + (topic[1] ? " \u2014 " + topic[1] : "")) : "";
    if (run && run !== D.baseline) { $("run-a").value = D.baseline; $("run-b").value = run; }
    for (const tr of $("query-table").tBodies[0].rows) tr.classList.toggle("open", tr.dataset.query === q);
    showQuery();
    $("query").scrollIntoView({ block: "start" });
  }
  function side(label, run, view) {
    return view ? `${label}: ${run}, ${view.retrieved} retrieved` : `${label}: ${run} has no results for this query ` +
      "(left out with --skip-missing)";
  }
  function showQuery() {
    const q = state.query, a = $("run-a").value, b = $("run-b").value;
    const va = D.views[a][q], vb = D.views[b][q];
    // the query's own values: one row per measure, one column per run
    const runs = D.runs.filter((r) => D.views[r][q]);
    const labels = runs.length ? Object.keys(D.views[runs[0]][q].values) : [];
    $("query-values").replaceChildren(
      el("thead", {}, el("tr", {}, el("th", { text: "measure" }), ...runs.map((r) => el("th", { cls: "num", text: r })))),
      el("tbody", {}, ...labels.map((m) => el("tr", { "data-measure": m }, el("td", { text: m }),
        ...runs.map((r) => numCell(D.views[r][q].values[m], m))))));
    const depth = D.limits.depth;
    $("cap-note").textContent = shown(`Each ranking shows its top ${depth} documents (report --depth).` +
      (Object.keys(D.docs).length ? ` Texts are cut to ${D.limits.text_chars} characters; only shown documents' texts are in this file.` : " No document texts (report --docs).") +
      ` ${side("A", a, va)}; ${side("B", b, vb)}; R = ${runs.length ? D.views[runs[0]][q].relevant : "\u2013"}.`);
    const top = (v) => (v ? v.top : []);
    const n = Math.max(top(va).length, top(vb).length);
    const rows = [];
    for (let i = 0; i < n; i++) {
      const tr = el("tr", {}, el("td", { cls: "num", text: String(i + 1) }));
      for (const v of [va, vb]) {
        const d = top(v)[i];
        if (!d) { tr.append(el("td"), el("td"), el("td"), el("td")); continue; }
        const cls = d.relevant ? "rel" : "";
        const score = el("td", { cls: "num " + cls, text: d.score === null ? "\u2013" : String(d.score) });
        if (d.score !== null) score.dataset.v = String(d.score);
        tr.append(el("td", { cls: cls, text: d.relevant ? "\u2605" : "" }), docCell(d.doc_id, cls), score,
          el("td", { cls: cls }, grade(d)));
      }
      rows.push(tr);
    }
    $("side-by-side").replaceChildren(
      el("thead", {}, el("tr", {}, el("th", { cls: "num", text: "rank" }), el("th"), el("th", { text: "A: " + a }),
        el("th", { cls: "num", text: "score" }), el("th", { text: "judgment" }), el("th"), el("th", { text: "B: " + b }),
        el("th", { cls: "num", text: "score" }), el("th", { text: "judgment" }))),
      el("tbody", {}, ...rows));
    const m = moved(a, b, q);
    $("entered-title").textContent = `Entered the top ${depth} (in B's, not in A's)`;
    $("left-title").textContent = `Left the top ${depth} (in A's, not in B's)`;
    const movedTable = (items, here, other, key) => [
      el("thead", {}, el("tr", {}, el("th", { text: "doc_id" }), el("th", { cls: "num", text: "rank in " + here }),
        el("th", { cls: "num", text: "rank in " + other }), el("th", { text: "judgment" }))),
      el("tbody", {}, ...(items.length ? items.map((d) => el("tr", { cls: d.relevant ? "rel" : "" }, docCell(d.doc_id),
        el("td", { cls: "num", text: String(d.rank) }), el("td", { cls: "num", text: d[key] === null ? "\u2013" : String(d[key]) }),
        el("td", {}, grade(d)))) : [el("tr", {}, el("td", { cls: "note", colspan: "4", text: "none" }))]))];
    if (m.note) {
      for (const id of ["entered", "left"]) {
        $(id).replaceChildren(el("tbody", {}, el("tr", {}, el("td", { cls: "note", text: m.note }))));
      }
    } else {
      $("entered").replaceChildren(...movedTable(m.entered, "B", "A", m.rankOther[0]));
      $("left").replaceChildren(...movedTable(m.left, "A", "B", m.rankOther[1]));
    }
    for (const [box, run, v] of [["missed-a", a, va], ["missed-b", b, vb]]) {
      const missed = v ? v.missed : [];
      const texts = Object.keys(D.docs).length && missed.length > depth ? ` (texts for the first ${depth})` : "";
      $(box).replaceChildren(el("p", { cls: "note", text: `${run}: ${missed.length} relevant not retrieved${texts}` }),
        el("div", { cls: "missed" }, el("table", {}, el("tbody", {}, ...missed.map((d) => el("tr", {},
          docCell(d.doc_id), el("td", { cls: "num", text: String(d.judgment) })))))));
    }
  }

  // ---------------------------------------------------------------- provenance
  function provenance() {
    const p = D.provenance, rows = [["date", p.date], ["retrieval-eval", p.version]];
    const input = (x) => (x ? `${x.name}  sha256 ${x.sha256}` : "\u2013");
    if (p.inputs) {
      rows.push(["qrels", input(p.inputs.qrels)]);
      (p.inputs.runs || []).forEach((r, i) => rows.push([`run ${D.runs[i]}`, input(r)]));
      if (p.inputs.docs) rows.push(["documents", input(p.inputs.docs)]);
      if (p.inputs.topics) rows.push(["topics", input(p.inputs.topics)]);
    }
    for (const [k, v] of Object.entries(p.options || {})) rows.push([k, JSON.stringify(v)]);
    rows.push(["limits", `top ${D.limits.depth} documents per ranking; texts cut to ${D.limits.text_chars} characters; ` +
      `unjudged-heavy: Judged@${D.limits.depth} below ${D.limits.unjudged_below}`]);
    $("provenance-table").replaceChildren(el("tbody", {}, ...rows.map(([k, v]) => el("tr", {}, el("td", { text: k }), el("td", { text: v })))));
  }

  header();
  comparison();
  options($("chart-measure"), perQueryMeasures);
  options($("table-measure"), perQueryMeasures);
  options($("chart-run"), others);
  options($("run-a"), D.runs, D.baseline);
  options($("run-b"), D.runs, others.length ? others[0] : D.baseline);
  $("chart-measure").addEventListener("change", diffChart);
  $("chart-run").addEventListener("change", diffChart);
  $("table-measure").addEventListener("change", queryTable);
  $("filter").addEventListener("input", filterRows);
  $("run-a").addEventListener("change", () => state.query !== null && showQuery());
  $("run-b").addEventListener("change", () => state.query !== null && showQuery());
  diffChart();
  prChart();
  queryTable();
  provenance();
  $("flag-note").textContent = `Flags: missing (the run has no results for the query), unjudged (Judged@${D.limits.depth} ` +
    `below ${D.limits.unjudged_below}), tied (two of the top ${D.limits.depth} documents have the same score). ` +
    "Click a header to sort, a row to open the query.";
  document.body.dataset.ready = "1";
})();
