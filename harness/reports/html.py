"""One self-contained HTML page over one or more run folders (issue 24, "A report to look at").

Everything is inline: the CSS, the plain-JS filters, the charts (SVG drawn here), and the records
as JSON in a ``<script type="application/json">`` block. No CDN, no server, no network. Text that
this module writes into HTML goes through :func:`html.escape`; the JS puts record text into the
page with ``textContent`` only, so a question holding markup stays text.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.reports.labels import FALLBACK_METRICS, headline_of
from harness.run_folder import check_run_folder

# Config roots that say how a run was executed, not what was measured: never a reason to compare.
_NOT_MEASURED = ("store", "progress", "estimate", "cache_only", "run_name", "official_dir")
# Leg weights and leg lists (a system's own, or the dataset's Mem++ defaults), and the system's name
# that an ablation preset changes with them.
_LEG_KEY = re.compile(r"^(system\.params\.(weights|legs)|dataset\.mempp\.weights)(\.|$)|^system\.name$")
SERIES_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
HITS_SHOWN = 10  # top hits listed in a question's detail


@dataclass
class RunData:
    """One run folder as the report reads it."""

    label: str
    root: Path
    config: dict[str, Any]
    summary: dict[str, dict[str, Any]]
    records: list[dict[str, Any]]
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def ks(self) -> list[int]:
        return [int(k) for k in self.config.get("dataset", {}).get("ks") or []]

    @property
    def system_k(self) -> int | None:
        k = self.config.get("system", {}).get("k")
        return int(k) if isinstance(k, (int, float)) else None


def load_run(root: str | Path) -> RunData:
    """Read ``config.json``, ``metrics.json`` and ``records.jsonl`` of a run folder."""
    root = Path(root)
    missing = [name for name in ("config.json", "metrics.json", "records.jsonl") if not (root / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{root} is not a run folder: no {', '.join(missing)}")
    check_run_folder(root)  # HalfWrittenRun (a ValueError): one line
    config = json.loads((root / "config.json").read_text())
    metrics = json.loads((root / "metrics.json").read_text())
    records = [json.loads(line) for line in (root / "records.jsonl").read_text().splitlines() if line.strip()]
    return RunData(label=root.name, root=root, config=config, summary=metrics.get("summary", {}),
                   records=records, provenance=metrics.get("provenance", {}))


def flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}`` (lists stay values)."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def differing_keys(runs: Sequence[RunData]) -> list[str]:
    """The config keys whose values are not the same in every run (execution settings left out)."""
    flats = [{k: v for k, v in flatten(run.config).items() if k.split(".")[0] not in _NOT_MEASURED} for run in runs]
    keys = sorted(set().union(*flats)) if flats else []
    return [key for key in keys if len({json.dumps(flat.get(key), sort_keys=True) for flat in flats}) > 1]


def comparison_kind(runs: Sequence[RunData]) -> str | None:
    """``"k_sweep"`` when the runs differ only in ``system.k``; ``"legs"`` when they differ only in leg
    weights or legs (and the system's name); None otherwise or for a single run."""
    if len(runs) < 2:
        return None
    keys = differing_keys(runs)
    if keys == ["system.k"]:
        return "k_sweep"
    if keys and all(_LEG_KEY.search(key) for key in keys) and any(key != "system.name" for key in keys):
        return "legs"
    return None


def _has(summary: Mapping[str, Mapping[str, Any]], metric: str) -> bool:
    return any(_number(row.get(metric)) is not None for row in summary.values())


def headline_metric(runs: Sequence[RunData]) -> str:
    """The benchmark's headline metric when every run has it (an answered run), else the first of
    the retrieval fallbacks every run has."""
    first = runs[0]
    candidates = [headline_of(first.config.get("dataset", {})), *FALLBACK_METRICS]
    for metric in candidates:
        if all(_has(run.summary, metric) for run in runs):
            return metric
    return next(iter(next(iter(first.summary.values()), {})), "n")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def categories(runs: Sequence[RunData]) -> list[str]:
    """Every summary category, ``overall`` rows last."""
    seen: dict[str, None] = {}
    for run in runs:
        for name in run.summary:
            seen.setdefault(name, None)
    return sorted(seen, key=lambda name: (name.startswith("overall"), name))


def short_labels(runs: Sequence[RunData]) -> list[str]:
    """A label per run for the legends: the system's name for one run; for several, what tells them
    apart (``k=10``, ``name=mempp_no_vector, vector=0``); the folder names when that is long or not unique."""
    if len(runs) == 1:
        return [str(runs[0].config.get("system", {}).get("name") or runs[0].label)]
    keys = differing_keys(runs)
    labels = []
    for run in runs:
        flat = flatten(run.config)
        labels.append(", ".join(f"{key.split('.')[-1]}={_short(flat.get(key))}" for key in keys))
    if keys and len(set(labels)) == len(labels) and all(len(label) <= 48 for label in labels):
        return labels
    labels = [str(run.config.get("system", {}).get("name")) + (f", k={run.system_k}" if "system.k" in keys else "")
              for run in runs]
    if len(set(labels)) == len(labels):
        return labels
    folders = [run.root.name for run in runs]
    if len(set(folders)) < len(folders):
        folders = [f"{run.root.parent.name}/{run.root.name}" for run in runs]
    return folders


def _short(value: Any) -> str:
    if isinstance(value, list):
        return "+".join(str(v) for v in value)
    return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


# ---------------------------------------------------------------- SVG charts


def _fmt(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.1f}" if abs(value) > 1.5 else f"{value:.3f}"


def _tick(value: float, scale_max: float) -> str:
    return f"{value:.2f}" if scale_max <= 1 else f"{value:g}"


def bar_chart(groups: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], title: str,
              width: int = 900, height: int = 320) -> str:
    """Grouped bars: one group per entry of ``groups``, one bar per series in each."""
    top = max([v for _, values in series for v in values if v is not None] + [1e-9])
    scale_max = 1.0 if top <= 1.0 else math.ceil(top / 10) * 10
    left, right, head, foot = 50, 10, 40, 60
    plot_w, plot_h = width - left - right, height - head - foot
    group_w = plot_w / max(len(groups), 1)
    bar_w = group_w * 0.8 / max(len(series), 1)
    parts = [f'<svg class="chart" role="img" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}"><title>{html.escape(title)}</title>',
             f'<text x="{left}" y="18" class="chart-title">{html.escape(title)}</text>']
    for step in range(5):
        value = scale_max * step / 4
        y = head + plot_h - plot_h * step / 4
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{_tick(value, scale_max)}</text>')
    for g, group in enumerate(groups):
        x0 = left + g * group_w + group_w * 0.1
        for s, (name, values) in enumerate(series):
            value = values[g] if g < len(values) else None
            if value is None:
                continue
            h = plot_h * value / scale_max
            x, y = x0 + s * bar_w, head + plot_h - h
            colour = SERIES_COLOURS[s % len(SERIES_COLOURS)]
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{max(bar_w - 2, 1):.1f}" height="{h:.1f}" '
                         f'fill="{colour}"><title>{html.escape(f"{name} · {group}: {_fmt(value)}")}</title></rect>')
            if len(series) <= 3:
                parts.append(f'<text x="{x + bar_w / 2 - 1:.1f}" y="{y - 3:.1f}" text-anchor="middle" class="value">'
                             f'{_fmt(value)}</text>')
        parts.append(f'<text x="{left + g * group_w + group_w / 2:.1f}" y="{head + plot_h + 16}" text-anchor="middle" '
                     f'class="tick">{html.escape(group)}</text>')
    parts.append(_legend([name for name, _ in series], left, height - 24))
    parts.append("</svg>")
    return "".join(parts)


def line_chart(xs: Sequence[int], series: Sequence[tuple[str, Sequence[float | None]]], title: str, x_label: str,
               width: int = 900, height: int = 320) -> str:
    """Lines over a numeric x axis (the k sweep)."""
    values = [v for _, ys in series for v in ys if v is not None]
    top = max(values + [1e-9])
    scale_max = 1.0 if top <= 1.0 else math.ceil(top / 10) * 10
    left, right, head, foot = 50, 20, 40, 70
    plot_w, plot_h = width - left - right, height - head - foot
    lo, hi = min(xs), max(xs)
    span = (hi - lo) or 1

    def px(x: float) -> float:
        return left + plot_w * (x - lo) / span if hi != lo else left + plot_w / 2

    def py(y: float) -> float:
        return head + plot_h - plot_h * y / scale_max

    parts = [f'<svg class="chart" role="img" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}"><title>{html.escape(title)}</title>',
             f'<text x="{left}" y="18" class="chart-title">{html.escape(title)}</text>']
    for step in range(5):
        y = head + plot_h - plot_h * step / 4
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{_tick(scale_max * step / 4, scale_max)}</text>')
    for x in xs:
        parts.append(f'<text x="{px(x):.1f}" y="{head + plot_h + 16}" text-anchor="middle" class="tick">{x}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{head + plot_h + 34}" text-anchor="middle" class="tick">'
                 f'{html.escape(x_label)}</text>')
    for s, (name, ys) in enumerate(series):
        colour = SERIES_COLOURS[s % len(SERIES_COLOURS)]
        points = [(px(x), py(y), x, y) for x, y in zip(xs, ys) if y is not None]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in points)
        parts.append(f'<polyline class="series" fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>')
        for x, y, kx, ky in points:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}">'
                         f'<title>{html.escape(f"{name}, k={kx}: {_fmt(ky)}")}</title></circle>')
    parts.append(_legend([name for name, _ in series], left, height - 20))
    parts.append("</svg>")
    return "".join(parts)


def _legend(names: Sequence[str], x: float, y: float) -> str:
    parts, offset = [], 0.0
    for s, name in enumerate(names):
        colour = SERIES_COLOURS[s % len(SERIES_COLOURS)]
        label = name if len(name) <= 60 else name[:57] + "..."
        parts.append(f'<rect x="{x + offset:.1f}" y="{y - 9}" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{x + offset + 14:.1f}" y="{y}" class="tick">{html.escape(label)}</text>')
        offset += 24 + 6.5 * len(label)
    return '<g class="legend">' + "".join(parts) + "</g>"


# ---------------------------------------------------------------- sections


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def summary_section(runs: Sequence[RunData], metric: str) -> str:
    cats = categories(runs)
    series = [(run.label, [_number(run.summary.get(c, {}).get(metric)) for c in cats]) for run in runs]
    chart = bar_chart(cats, series, f"{metric} per category")
    metrics = [m for m in dict.fromkeys([metric, "recall_any@10", "recall_any@50", "recall_any@all",
                                         "in_budget_recall", "ndcg@10"]) if any(_has(r.summary, m) for r in runs)]
    rows = []
    for cat in cats:
        for run in runs:
            row = run.summary.get(cat, {})
            rows.append([cat, run.label, str(row.get("n", "")), *(_fmt(_number(row.get(m))) for m in metrics)])
    table = _table(["category", "run", "n", *metrics], rows, "summary")
    return f'<section id="summary"><h2>Summary per category</h2>{chart}{table}</section>'


def k_sweep_section(runs: Sequence[RunData], metric: str) -> str:
    ordered = sorted(runs, key=lambda r: r.system_k or 0)
    xs = [run.system_k or 0 for run in ordered]
    metrics = list(dict.fromkeys([metric, "recall_any@all", "in_budget_recall"]))
    series = [(m, [_number(run.summary.get("overall", {}).get(m)) for run in ordered]) for m in metrics
              if any(_has(run.summary, m) for run in ordered)]
    chart = line_chart(xs, series, "overall, against system.k", "system.k (rows retrieved)")
    return f'<section id="k-sweep"><h2>k sweep</h2><p>The runs differ only in <code>system.k</code>.</p>{chart}</section>'


def legs_section(runs: Sequence[RunData], metric: str) -> str:
    """Each run's leg weights and its overall headline, with the change from the first run."""
    base = _number(runs[0].summary.get("overall", {}).get(metric))
    rows = []
    for run in runs:
        system = run.config.get("system", {})
        params = system.get("params", {})
        weights = params.get("weights") or run.config.get("dataset", {}).get("mempp", {}).get("weights") or {}
        legs = params.get("legs")
        shown = ", ".join(f"{leg} {w:g}" if isinstance(w, (int, float)) else f"{leg} {w}" for leg, w in sorted(weights.items())
                          if legs is None or leg in legs)
        value = _number(run.summary.get("overall", {}).get(metric))
        delta = "" if value is None or base is None else f"{value - base:+.3f}"
        rows.append([run.label, str(system.get("name", "")), shown, _fmt(value), delta])
    chart = bar_chart(["overall"], [(run.label, [_number(run.summary.get("overall", {}).get(metric))]) for run in runs],
                      f"overall {metric} per leg setting", height=300)
    table = _table(["run", "system", "leg weights (legs in use)", metric, "change from the first run"], rows, "legs")
    return f'<section id="legs"><h2>Leg ablation</h2><p>The runs differ only in their legs or leg weights.</p>{chart}{table}</section>'


def _grade(record: Mapping[str, Any]) -> str | None:
    """``correct`` / ``wrong`` / ``mixed`` over the judge runs' scores; ``ungraded`` when judged with no score;
    None when the record was never judged."""
    grades = record.get("judge")
    if grades is None:
        return None
    scores = [g.get("score") for g in grades if isinstance(g, Mapping) and _number(g.get("score")) is not None]
    if not scores:
        return "ungraded"
    mean = sum(scores) / len(scores)
    return "correct" if mean >= 1 else "wrong" if mean <= 0 else "mixed"


def _reference(record: Mapping[str, Any]) -> Any:
    for key in ("reference", "gold_answer", "expected_answer", "reference_answer"):
        if record.get(key) is not None:
            return record[key]
    return None


def question_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """What the JS table needs per record: the fields shown, and hit / miss per k."""
    rows = []
    for index, run in enumerate(runs):
        ks = [*run.ks, "all"]
        for record in run.records:
            metrics = record.get("metrics", {})
            hit = {}
            for k in ks:
                value = _number(metrics.get(f"recall_any@{k}"))
                hit[str(k)] = None if value is None else value > 0
            hits = record.get("hits", [])
            rank_of = {}
            for rank, h in enumerate(hits, start=1):
                for doc_id in h.get("sources") or [h.get("doc_id")]:
                    rank_of.setdefault(doc_id, rank)
            rows.append({
                "run": index,
                "qid": record.get("qid"),
                "category": record.get("category"),
                "question": record.get("question"),
                "gold": [{"id": g, "rank": rank_of.get(g)} for g in record.get("gold", [])],
                "hit": hit,
                "grade": _grade(record),
                "answer": record.get("answer"),
                "answer_error": record.get("answer_error"),
                "reference": _reference(record),
                "n_hits": record.get("n_hits", len(hits)),
                "hits": [{"doc_id": h.get("doc_id"), "gold": bool(h.get("gold")), "score": h.get("score"),
                          "legs": {leg: rank + 1 for leg, rank in (h.get("leg_ranks") or {}).items()}, "author": h.get("author"), "date": h.get("date")}
                         for h in hits[:HITS_SHOWN]],
                "explain": record.get("explain"),
            })
    return rows


def _json_for_script(data: Any) -> str:
    """JSON safe inside ``<script>``: no ``</script>`` or ``<!--`` can close or open anything."""
    return (json.dumps(data, ensure_ascii=False, allow_nan=False).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _runs_section(runs: Sequence[RunData]) -> str:
    rows = []
    for run in runs:
        system = run.config.get("system", {})
        answerer = run.config.get("answerer") or {}
        rows.append([run.label, str(run.config.get("dataset", {}).get("name", "")), str(system.get("name", "")),
                     str(system.get("k", "")), str(answerer.get("model") or "none"), str(len(run.records)), str(run.provenance.get("date", "")),
                     str(run.provenance.get("git", {}).get("commit", ""))[:10], run.root.name])
    return ('<section id="runs"><h2>Runs</h2>'
            + _table(["run", "dataset", "system", "k", "answerer", "records", "date", "commit", "folder"], rows, "runs")
            + "</section>")


def render_report(runs: Sequence[RunData], title: str | None = None) -> str:
    """The whole page as one string."""
    if not runs:
        raise ValueError("no run to report")
    metric = headline_metric(runs)
    kind = comparison_kind(runs)
    title = title or ("Run report: " + runs[0].label if len(runs) == 1 else f"Comparison of {len(runs)} runs")
    sections = [_runs_section(runs), summary_section(runs, metric)]
    if kind == "k_sweep":
        sections.append(k_sweep_section(runs, metric))
    elif kind == "legs":
        sections.append(legs_section(runs, metric))
    ks = sorted({k for run in runs for k in run.ks})
    data = {"runs": [run.label for run in runs], "ks": [str(k) for k in ks] + ["all"],
            "categories": sorted({r.get("category") or "" for run in runs for r in run.records}),
            "rows": question_rows(runs)}
    fills = {"TITLE": html.escape(title), "HEADLINE": html.escape(metric), "SECTIONS": "".join(sections),
             "DATA": _json_for_script(data)}
    # One pass, so a run label that reads "%DATA%" is never filled in itself.
    return re.sub(r"%(TITLE|HEADLINE|SECTIONS|DATA)%", lambda m: fills[m.group(1)], _PAGE)


def write_report(run_dirs: Sequence[str | Path], out: str | Path, title: str | None = None) -> Path:
    runs = [load_run(d) for d in run_dirs]
    for run, label in zip(runs, short_labels(runs)):
        run.label = label
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(runs, title), encoding="utf-8")
    return out


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%TITLE%</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 20px 28px; color: #222; background: #fff; }
h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 17px; margin: 26px 0 8px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f3f5f8; } table.runs td:last-child, table.summary td:nth-child(2), #questions td:first-child { overflow-wrap: anywhere; max-width: 360px; } table.summary td:nth-child(n+3) { text-align: right; font-variant-numeric: tabular-nums; }
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
