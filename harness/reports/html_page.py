"""The HTML report's page: its CSS and the plain JS that builds the question table and its filters.

``%TITLE%``, ``%HEADLINE%``, ``%SECTIONS%`` and ``%DATA%`` are filled in by
``harness.reports.html.render_report`` in one pass. The JS reads the records from the JSON block
and puts their text into the page with ``textContent`` only, so markup in a record stays text.
The filters (run, category, gold at k, hit or miss, judge grade) can be set from the URL hash.
"""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%TITLE%</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 20px 28px; color: #222; background: #fff; }
h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 17px; margin: 26px 0 8px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f3f5f8; } table.runs td:last-child, table.summary td:nth-child(2), #questions td:first-child { overflow-wrap: break-word; max-width: 360px; }
section { overflow-x: auto; } table.legs td:first-child, #questions td:nth-child(2), #questions td:nth-child(3) { white-space: nowrap; } table.summary td:nth-child(n+3) { text-align: right; font-variant-numeric: tabular-nums; }
.chart { display: block; max-width: 100%; height: auto; } .chart-title { font-weight: 600; font-size: 13px; }
.grid { stroke: #e5e5e5; } .tick, .value { font-size: 11px; fill: #444; }
#filters { display: flex; gap: 14px; flex-wrap: wrap; align-items: center; background: #f7f7f9; padding: 8px; border: 1px solid #e3e3e8; }
#questions td.hit { color: #176b2c; font-weight: 600; } #questions td.miss { color: #b3261e; font-weight: 600; }
#questions td.na { color: #888; } details summary { cursor: pointer; } .detail { margin: 6px 0 4px 12px; }
.detail table { font-size: 12px; } tr.gold td { background: #eaf6ec; } code { font-size: 12px; }
.answer { white-space: pre-wrap; background: #fafafa; border-left: 3px solid #9ab; padding: 4px 8px; }
</style></head>
<body>
<h1>%TITLE%</h1>
<p>Headline metric: <code>%HEADLINE%</code>. Ranks count from 1 (#1: a leg's first row), as scripts/explain.py prints them.</p>
%SECTIONS%
<section id="questions-section"><h2>Questions</h2>
<div id="filters">
<label>run <select id="f-run"><option value="">all</option></select></label>
<label>category <select id="f-category"><option value="">all</option></select></label>
<label>gold at k <select id="f-k"></select></label>
<label><select id="f-hit"><option value="">hit or miss</option><option value="hit">hit</option><option value="miss">miss</option><option value="na">no gold</option></select></label>
<label id="f-grade-label">judge grade <select id="f-grade"><option value="">all</option><option>correct</option><option>wrong</option><option>mixed</option><option>ungraded</option></select></label>
<span id="row-count"></span>
</div>
<table id="questions"><thead><tr><th>run</th><th>qid</th><th>category</th><th>question (click for detail)</th><th id="hit-head">gold at k</th><th>grade</th></tr></thead><tbody></tbody></table>
</section>
<script type="application/json" id="report-data">%DATA%</script>
<script>
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var $ = function (id) { return document.getElementById(id); };
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function option(select, value, label) { var o = el("option", label === undefined ? value : label); o.value = value; select.appendChild(o); }
  data.runs.forEach(function (name, i) { option($("f-run"), String(i), name); });
  data.categories.forEach(function (c) { option($("f-category"), c); });
  data.ks.forEach(function (k) { option($("f-k"), k, k === "all" ? "all returned" : "k = " + k); });
  var graded = data.rows.some(function (r) { return r.grade !== null; });
  if (!graded) $("f-grade-label").style.display = "none";

  function hitsTable(hits) {
    var t = el("table"), head = el("tr");
    ["rank", "doc id", "gold", "score", "leg ranks", "author", "date"].forEach(function (h) { head.appendChild(el("th", h)); });
    t.appendChild(head);
    hits.forEach(function (h, i) {
      var tr = el("tr", null, h.gold ? "gold" : "");
      var legs = Object.keys(h.legs).sort().map(function (l) { return l + " #" + h.legs[l]; }).join(" · ");
      [i + 1, h.doc_id, h.gold ? "yes" : "", h.score, legs || "–", h.author || "", h.date || ""].forEach(function (v) { tr.appendChild(el("td", v)); });
      t.appendChild(tr);
    });
    return t;
  }
  function detail(r) {
    var d = el("div", null, "detail");
    var gold = el("p");
    gold.appendChild(el("b", "gold ids: "));
    gold.appendChild(document.createTextNode(r.gold.length ? r.gold.map(function (g) {
      return g.id + (g.rank ? " (rank " + g.rank + ")" : " (not in the kept hits)"); }).join(", ") : "none (not scored)"));
    d.appendChild(gold);
    d.appendChild(el("p", "top " + r.hits.length + " of " + r.n_hits + " hits:"));
    d.appendChild(hitsTable(r.hits));
    if (r.answer !== null || r.answer_error) {
      d.appendChild(el("p", "answer:"));
      d.appendChild(el("div", r.answer !== null ? r.answer : "(failed: " + r.answer_error + ")", "answer"));
    }
    if (r.reference !== null) {
      d.appendChild(el("p", "reference:"));
      d.appendChild(el("div", typeof r.reference === "string" ? r.reference : JSON.stringify(r.reference), "answer"));
    }
    if (r.explain !== null && r.explain !== undefined) {
      d.appendChild(el("p", "explain:"));
      d.appendChild(el("pre", JSON.stringify(r.explain, null, 2), "explain"));
    }
    return d;
  }
  var body = document.querySelector("#questions tbody");
  var rendered = data.rows.map(function (r) {
    var tr = el("tr", null, "q-row");
    tr.appendChild(el("td", data.runs[r.run]));
    tr.appendChild(el("td", r.qid));
    tr.appendChild(el("td", r.category));
    var cell = el("td"), details = el("details"), summary = el("summary", r.question);
    details.appendChild(summary);
    details.addEventListener("toggle", function () { if (details.open && details.childNodes.length === 1) details.appendChild(detail(r)); });
    cell.appendChild(details);
    tr.appendChild(cell);
    var hitCell = el("td");
    tr.appendChild(hitCell);
    tr.appendChild(el("td", r.grade === null ? "–" : r.grade));
    body.appendChild(tr);
    return {row: r, tr: tr, hitCell: hitCell, details: details};
  });
  var opened = "";
  function outcome(r, k) { var v = r.hit[k]; return v === undefined || v === null ? "na" : v ? "hit" : "miss"; }
  function apply() {
    var run = $("f-run").value, cat = $("f-category").value, k = $("f-k").value, want = $("f-hit").value, grade = $("f-grade").value;
    var shown = 0;
    rendered.forEach(function (x) {
      var o = outcome(x.row, k);
      x.hitCell.textContent = o === "na" ? "no gold" : o;
      x.hitCell.className = o;
      var visible = (!run || String(x.row.run) === run) && (!cat || x.row.category === cat)
        && (!want || o === want) && (!grade || x.row.grade === grade);
      x.tr.style.display = visible ? "" : "none";
      x.tr.setAttribute("data-visible", visible ? "1" : "0");
      if (visible) shown += 1;
    });
    $("row-count").textContent = shown + " of " + rendered.length + " questions";
    $("hit-head").textContent = k === "all" ? "gold among all returned" : "gold in top " + k;
    document.body.setAttribute("data-visible-rows", String(shown));
    var parts = [];
    if (run) parts.push("run=" + encodeURIComponent(run));
    if (cat) parts.push("category=" + encodeURIComponent(cat));
    if (k !== data.ks[0]) parts.push("k=" + encodeURIComponent(k));
    if (want) parts.push("hit=" + encodeURIComponent(want));
    if (grade) parts.push("grade=" + encodeURIComponent(grade));
    if (opened) parts.push("open=" + encodeURIComponent(opened));
    var hash = parts.length ? "#" + parts.join("&") : "";
    try {
      if (hash !== location.hash && (hash || location.hash)) history.replaceState(null, "", hash || location.pathname);
    } catch (e) { /* some file:// pages refuse it; the filters still apply */ }
  }
  // The filters can be set from the URL: #category=temporal&k=10&hit=miss&grade=wrong&run=0&open=conv-26/3
  function fromHash() {
    var map = {run: "f-run", category: "f-category", k: "f-k", hit: "f-hit", grade: "f-grade"};
    location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
      var kv = pair.split("="), id = map[decodeURIComponent(kv[0] || "")];
      if (id && kv.length === 2) $(id).value = decodeURIComponent(kv[1]);
      // #open=<qid> opens that question's detail (a link to one question)
      if (kv[0] === "open" && kv.length === 2) {
        opened = decodeURIComponent(kv[1]);
        rendered.forEach(function (x) {
          if (x.row.qid !== opened) return;
          if (x.details.childNodes.length === 1) x.details.appendChild(detail(x.row));
          x.details.open = true;
        });
      }
    });
    apply();
  }
  ["f-run", "f-category", "f-k", "f-hit", "f-grade"].forEach(function (id) { $(id).addEventListener("change", apply); });
  window.addEventListener("hashchange", fromHash);
  // A small self-test hook: reportFilter({category: "temporal", hit: "miss"}) returns the visible row count.
  window.reportFilter = function (f) {
    var map = {run: "f-run", category: "f-category", k: "f-k", hit: "f-hit", grade: "f-grade"};
    Object.keys(map).forEach(function (key) { if (f && key in f) $(map[key]).value = f[key]; });
    apply();
    return Number(document.body.getAttribute("data-visible-rows"));
  };
  fromHash();
})();
</script>
</body></html>
"""
