"""Table 7 / Figure 4's numbers: Mem++ on OrgMemBench as k varies, with the tokens read and retrieved."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from harness.reports.comparable import NOT_COMPARABLE, PARSED_ONLY, JudgedValue, judged_value, own_wording, paper_metric
from harness.reports.format import MISSING, NOT_AVAILABLE, Table, fmt, fmt_mean_std, fmt_millions, fmt_tokens
from harness.reports.labels import DATASET_LABELS, HEADLINE, K_SWEEP_FALLBACK
from model_clients.cost import CHARS_PER_TOKEN
from harness.reports.paper import paper_lookup, paper_values
from harness.reports.rows import fallback_note, row_label
from harness.reports.store import RUN_COLUMNS, RunView, runs_of

log = logging.getLogger(__name__)


def retrieved_tokens_total(run_dir: str | Path) -> float:
    """Sum over the run's questions of the rendered evidence before the budget cut, in tokens
    (chars / 4), from records.jsonl: the paper's "retrieved tokens" definition. NaN without records."""
    path = Path(run_dir) / "records.jsonl"
    if not path.is_file():
        return math.nan
    total = 0
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    total += int(json.loads(line).get("retrieved_chars", 0))
    except (OSError, json.JSONDecodeError, TypeError, ValueError) as exc:
        log.warning("cannot read %s: %s", path, exc)
        return math.nan
    return total / CHARS_PER_TOKEN


def k_sweep_data(tidy: pd.DataFrame, dataset: str = "orgmem", mode: str = "auto",
                 labels: dict[str, str] | None = None) -> tuple[pd.DataFrame, bool]:
    """One row per mempp run on ``dataset`` (one per k and answerer) plus each answerer's
    full-context run as ``k = "full_context"``: the metrics (judge headline and std, or recall),
    read tokens per question and retrieved tokens over all questions. Returns (frame, judge)."""
    if mode not in ("auto", "judge", "retrieval"):
        raise ValueError(f"mode must be auto, judge or retrieval, got {mode!r}")
    view = RunView(tidy)
    runs = runs_of(tidy) if not tidy.empty else pd.DataFrame(columns=RUN_COLUMNS)
    runs = runs[(runs["dataset"] == dataset) & runs["system_name"].isin(["mempp", "full_context"])]
    has = runs["run"].map(lambda r: view.has(r, HEADLINE.get(dataset, "score"))).astype(bool)
    judge = mode == "judge" or (mode == "auto" and bool(has[runs["system_name"] == "mempp"].any()))
    notes: list[str] = []
    if judge:
        dropped = runs[~has]
        if not dropped.empty:
            names = ", ".join(sorted({f"{r.system} k={r.k} [{r.answerer}]" for r in dropped.itertuples()}))
            notes.append(f"Runs without judge metrics left out (use --mode retrieval to see them): {names}.")
        runs = runs[has]
    else:  # one retrieval row per k: a run without an answerer first, then the newest
        runs = runs.assign(_j=has, _t=-runs["mtime"]).sort_values(["_j", "_t"]).drop(columns=["_j", "_t"])
        runs = runs.drop_duplicates(["system_name", "k"] if mode == "retrieval" else ["system_name", "k", "answerer"])
    headline = HEADLINE.get(dataset, "score")
    metrics = [headline, f"{headline}_std"] if judge else K_SWEEP_FALLBACK
    shown = [paper_metric(headline), f"{paper_metric(headline)}_std", "comparable"] if judge else []
    out = []
    for run in runs.itertuples():
        row: dict[str, Any] = {
            "answerer": run.answerer, "k": "full_context" if run.system_name == "full_context" else int(run.k),
            "system": row_label(run, labels), "run": run.run, "folder": run.folder,
            "n_questions": view.value(run.run, "overall", "n"),
            "read_tokens": run.mean_read_chars / CHARS_PER_TOKEN,
            "retrieved_tokens_total": retrieved_tokens_total(run.run),
        }
        row.update({metric: view.value(run.run, "overall", metric) for metric in metrics})
        if judge:
            cell = judged_value(view, run.run, "overall", headline, bool(run.all_graded))
            row.update(dict(zip(shown, (cell.value, cell.std, cell.comparable))))
        row.update({"kind": run.kind, "wording": run.wording, "all_graded": run.all_graded})
        out.append(row)
    columns = ["answerer", "k", "system", "run", "folder", "n_questions", *metrics, *shown, "read_tokens",
               "retrieved_tokens_total", "kind", "wording", "all_graded"]
    frame = pd.DataFrame(out, columns=columns)
    if not frame.empty:
        frame["_order"] = frame["k"].map(lambda k: math.inf if k == "full_context" else k)
        frame = frame.sort_values(["answerer", "_order"]).drop(columns="_order").reset_index(drop=True)
    frame.attrs["notes"] = notes
    return frame, judge


def table7(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto", dataset: str = "orgmem",
           notes: Sequence[str] = (), labels: dict[str, str] | None = None) -> Table:
    data, judge = k_sweep_data(tidy, dataset, mode, labels)
    headline = HEADLINE.get(dataset, "score")
    metrics = [headline] if judge else K_SWEEP_FALLBACK
    part = paper[paper["table"] == "7"] if dataset == "orgmem" else paper.iloc[0:0]
    values = paper_values(paper, 7) if dataset == "orgmem" else {}
    paper_answerers = list(dict.fromkeys(a for a in part["answerer"] if a))
    paper_ks = ["full_context" if r == "Full Context" else int(r) for r in dict.fromkeys(part["row"])]
    rows = []
    own: list[str] = []
    marked = False
    for answerer in list(dict.fromkeys(data["answerer"])) or [MISSING]:
        ours = data[data["answerer"] == answerer]
        keys = sorted(set(ours["k"]) | set(paper_ks), key=lambda k: math.inf if k == "full_context" else k)
        for key in keys:
            match = ours[ours["k"] == key]
            r = match.iloc[0] if not match.empty else None
            row = {"answerer": answerer, "k": str(key), "system": r["system"] if r is not None else MISSING}
            if judge:  # the paper-comparable number shown, the parsed-only mean kept for the CSV
                row[paper_metric(headline)] = MISSING if r is None else _judged_text(r, headline)
                row[headline] = MISSING if r is None else fmt_mean_std(r[headline], r[f"{headline}_std"], headline)
                if r is not None and own_wording(r["wording"]):
                    own.append(f"{r['system']} k={key} [{answerer}] ({r['folder']})")
                marked |= r is not None and not r["comparable"]
            else:
                for metric in metrics:
                    row[metric] = MISSING if r is None else fmt(r[metric], metric)
            row["read tokens / question (est.)"] = fmt_tokens(r["read_tokens"]) if r is not None else MISSING
            row["retrieved tokens, all questions (est.)"] = fmt_millions(r["retrieved_tokens_total"]) if r is not None else MISSING
            label = "Full Context" if key == "full_context" else str(key)
            for paper_answerer in paper_answerers or ["score"]:
                value = paper_lookup(values, label, paper_answerer, "overall", "score")
                row[f"paper {paper_answerer}"] = value if value is not None else NOT_AVAILABLE
            tokens = paper_lookup(values, label, None, "overall", "retrieved_tokens_total_M")
            row["paper retrieved tokens"] = f"{tokens}M" if tokens is not None else NOT_AVAILABLE
            row["run"] = r["folder"] if r is not None else MISSING
            rows.append(row)
    paper_columns = [f"paper {a}" for a in paper_answerers or ["score"]] + ["paper retrieved tokens"]
    metrics = [paper_metric(headline), headline] if judge else metrics
    columns = ["answerer", "k", "system", *metrics, "read tokens / question (est.)",
               "retrieved tokens, all questions (est.)", *paper_columns, "run"]
    frame = pd.DataFrame(rows, columns=columns)
    all_notes = [
        *notes, *data.attrs.get("notes", []),
        "Tokens are estimates: characters / 4. 'read' is what the answerer reads per question (after the "
        "dataset's character budget, mean_read_chars / 4); 'retrieved, all questions' sums the rendered "
        "evidence before the cut over every question of the run (records.jsonl), as the paper counts.",
        "The paper's columns are its OrgMemBench score per answerer (Mem++; Full Context row = the Full Context "
        "baseline) and its retrieved tokens, summed over its 73 questions.",
    ]
    if judge:
        all_notes.append(f"Ours is {paper_metric(headline)}: 100/N over every question, a failed or unparsable grade "
                         f"counting 0, as the paper's scripts score; the mean over parsed grades only ({headline}) is in "
                         "the CSV.")
        if own:
            all_notes.append("Not comparable (our own or a custom answerer/judge wording, not the official upstream files): "
                             + "; ".join(own) + ".")
        if marked:
            all_notes.append(f"'{PARSED_ONLY.strip()}': a run without {paper_metric(headline)} (older) whose grades "
                             "did not all parse, or whose stats do not say; its mean over parsed grades is not the "
                             "paper's number.")
    if not judge:
        all_notes.append("No judge metrics: ours are retrieval metrics over the whole returned list and in the budget; "
                         "they are not comparable with the paper's scores.")
    title = f"Table 7: k sweep of Mem++ on {DATASET_LABELS.get(dataset, dataset)}{fallback_note(judge, metrics)}"
    return Table("table7" if dataset == "orgmem" else f"table7_{dataset}", title, frame, all_notes, None, judge,
                 csv_only=(headline,) if judge else ())


def _judged_text(r: pd.Series, headline: str) -> str:
    """Our k-sweep cell: ``<headline>_paper`` (marked when only a parsed-only mean of a partly
    graded run exists, and when the run used our own wording)."""
    cell = JudgedValue(r[paper_metric(headline)], r[f"{paper_metric(headline)}_std"], bool(r["comparable"]))
    text = cell.text(headline)
    return text + NOT_COMPARABLE if own_wording(r["wording"]) and text != MISSING else text
