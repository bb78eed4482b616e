"""One self-contained HTML page over one or more run folders: inline CSS, plain-JS filters, SVG charts
and the records as JSON; nothing fetched. Text written here goes through :func:`html.escape`; the
page's JS (``report_page.html``) puts record text in with ``textContent`` only, so markup stays text.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.misses import OUTCOMES, attribute, miss_line, miss_table
from harness.reports.intervals import TableIntervals
from harness.reports.report_runs import (
    RunData, as_number, categories, comparison_kind, has_metric, headline_metric, load_run, ordered, short_labels,
)
from harness.reports.svg_charts import bar_chart, fmt_value, line_chart

HITS_SHOWN = 10  # top hits listed in a question's detail
PAGE = Path(__file__).with_name("report_page.html")  # %TITLE%, %HEADLINE%, %SECTIONS%, %DATA% filled in


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def summary_section(runs: Sequence[RunData], metric: str) -> str:
    cats = categories(runs)
    series = [(run.label, [as_number(run.summary.get(c, {}).get(metric)) for c in cats]) for run in runs]
    chart = bar_chart(cats, series, f"{metric} per category")
    metrics = [m for m in dict.fromkeys([metric, "recall_any@10", "recall_any@50", "recall_any@all",
                                         "in_budget_recall", "ndcg@10"]) if any(has_metric(r.summary, m) for r in runs)]
    spans, rows = TableIntervals(), []  # each cell's 95% interval, as the markdown tables print it
    for cat in cats:
        for run in runs:
            row = run.summary.get(cat, {})
            rows.append([cat, run.label, str(row.get("n", "")),
                         *(fmt_value(as_number(row.get(m))) + spans.bounds(str(run.folder), cat, m) for m in metrics)])
    table = _table(["category", "run", "n", *metrics], rows, "summary")
    notes = "".join(f'<p class="note">{html.escape(note)}</p>' for note in spans.notes())
    return f'<section id="summary"><h2>Summary per category</h2>{chart}{table}{notes}{miss_section(runs)}</section>'


def miss_section(runs: Sequence[RunData]) -> str:
    """For the answered runs: where each question was lost, per category (harness.misses), as counts
    with their share of the row."""
    rows = []
    for run in runs:
        if not run.answered:
            continue
        frame = miss_table([(run.label, run.records)], run.headline(), exclude_from_overall=run.excluded())
        for row in frame.to_dict("records"):
            rows.append([row["category"], run.label, str(row["n"]),
                         *(f"{round(row[o] * row['n'] / 100)} ({row[o]:.1f}%)" if row["n"] else "–" for o in OUTCOMES)])
    if not rows:
        return ""
    return ('<h3 id="misses">Where each question was lost</h3><p class="note">right: judged right; retrieval: no gold '
            "among what the answerer could read; budget: a gold returned but cut; synthesis: a gold read, the answer "
            "judged wrong; gold wrong: per the errata (as <code>scripts/explain.py --misses</code>).</p>"
            + _table(["category", "run", "n", *OUTCOMES], rows, "summary misses"))


def k_sweep_section(runs: Sequence[RunData], metric: str) -> str:
    by_k = sorted(runs, key=lambda r: r.system_k or 0)
    xs = [run.system_k or 0 for run in by_k]
    metrics = list(dict.fromkeys([metric, "recall_any@all", "in_budget_recall"]))
    series = [(m, [as_number(run.summary.get("overall", {}).get(m)) for run in by_k]) for m in metrics
              if any(has_metric(run.summary, m) for run in by_k)]
    chart = line_chart(xs, series, "overall, against system.k", "system.k (rows retrieved)")
    return f'<section id="k-sweep"><h2>k sweep</h2><p>The runs differ only in <code>system.k</code>.</p>{chart}</section>'


def legs_section(runs: Sequence[RunData], metric: str) -> str:
    """Each run's leg weights and its overall headline, with the change from the first run."""
    base = as_number(runs[0].summary.get("overall", {}).get(metric))
    rows = []
    for run in runs:
        system = run.config.get("system", {})
        params = system.get("params", {})
        weights = params.get("weights") or run.config.get("dataset", {}).get("mempp", {}).get("weights") or {}
        legs = params.get("legs")
        shown = ", ".join(f"{leg} {w:g}" if isinstance(w, (int, float)) else f"{leg} {w}" for leg, w in sorted(weights.items())
                          if legs is None or leg in legs)
        value = as_number(run.summary.get("overall", {}).get(metric))
        delta = "" if value is None or base is None else f"{value - base:+.3f}"
        rows.append([run.label, str(system.get("name", "")), shown, fmt_value(value), delta])
    chart = bar_chart(["overall"], [(run.label, [as_number(run.summary.get("overall", {}).get(metric))]) for run in runs],
                      f"overall {metric} per leg setting", height=300)
    table = _table(["run", "system", "leg weights (legs in use)", metric, "change from the first run"], rows, "legs")
    return f'<section id="legs"><h2>Leg ablation</h2><p>The runs differ only in their legs or leg weights.</p>{chart}{table}</section>'


def _grade(record: Mapping[str, Any]) -> str | None:
    """``correct`` / ``wrong`` / ``mixed`` over the judge runs' scores; ``ungraded`` when judged with no score;
    None when the record was never judged."""
    grades = record.get("judge")
    if grades is None:
        return None
    scores = [g.get("score") for g in grades if isinstance(g, Mapping) and as_number(g.get("score")) is not None]
    if not scores:
        return "ungraded"
    mean = sum(scores) / len(scores)
    return "correct" if mean >= 1 else "wrong" if mean <= 0 else "mixed"


def _reference(record: Mapping[str, Any]) -> Any:
    keys = ("reference", "gold_answer", "expected_answer", "reference_answer")
    return next((record[key] for key in keys if record.get(key) is not None), None)


def question_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """What the JS table needs per record: the fields shown, and hit / miss per k."""
    rows = []
    for index, run in enumerate(runs):
        ks = [*run.ks, "all"]
        judged = run.headline() if run.answered else None
        for record in run.records:
            metrics = record.get("metrics", {})
            hit = {str(k): None if (v := as_number(metrics.get(f"recall_any@{k}"))) is None else v > 0 for k in ks}
            hits = record.get("hits", [])
            rank_of = {}
            for rank, h in enumerate(hits, start=1):
                for doc_id in h.get("sources") or [h.get("doc_id")]:
                    rank_of.setdefault(doc_id, rank)
            rows.append({
                "run": index, **{key: record.get(key) for key in ("qid", "category", "question")},
                "gold": [{"id": g, "rank": rank_of.get(g)} for g in record.get("gold", [])],
                "hit": hit, "grade": _grade(record), "answer": record.get("answer"),
                "answer_error": record.get("answer_error"), "reference": _reference(record),
                "n_hits": record.get("n_hits", len(hits)),
                "hits": [{"doc_id": h.get("doc_id"), "gold": bool(h.get("gold")), "score": h.get("score"),
                          "legs": {leg: rank + 1 for leg, rank in (h.get("leg_ranks") or {}).items()},
                          "author": h.get("author"), "date": h.get("date")} for h in hits[:HITS_SHOWN]],
                "explain": record.get("explain"),
                "miss": None if judged is None or "answer" not in record  # where it was lost, as explain says
                else miss_line(record.get("miss") or attribute(record, judged)),
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
                     str(run.provenance.get("git", {}).get("commit", ""))[:10], run.folder.name])
    return ('<section id="runs"><h2>Runs</h2>'
            + _table(["run", "dataset", "system", "k", "answerer", "records", "date", "commit", "folder"], rows, "runs")
            + "</section>")


def render_report(runs: Sequence[RunData], title: str | None = None) -> str:
    """The whole page as one string; the runs in :func:`~harness.reports.report_runs.ordered` order."""
    if not runs:
        raise ValueError("no run to report")
    runs = ordered(runs)
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
    return re.sub(r"%(TITLE|HEADLINE|SECTIONS|DATA)%", lambda m: fills[m.group(1)], PAGE.read_text(encoding="utf-8"))


def write_report(run_dirs: Sequence[str | Path], out: str | Path, title: str | None = None) -> Path:
    runs = [load_run(d) for d in run_dirs]
    for run, label in zip(runs, short_labels(runs)):
        run.label = label
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(runs, title), encoding="utf-8")
    return out


