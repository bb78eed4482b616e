"""Table 7 and Figure 4: Mem++ on OrgMemBench as k varies, with the tokens read and retrieved."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from harness.reports.comparable import (
    PARSED_ONLY, Footnotes, JudgedValue, judged_value, own_wording, paper_metric, run_footnote,
)
from harness.reports.fill import FillPlan
from harness.reports.format import (
    MISSING, NOT_AVAILABLE, Table, fmt, fmt_mean_std, fmt_millions, fmt_tokens, is_missing,
    retrieval_title,
)
from harness.reports.labels import DATASET_LABELS, HEADLINE, K_SWEEP_FALLBACK
from model_clients.cost import CHARS_PER_TOKEN
from harness.reports.paper import answerers_in_order, paper_lookup, paper_values
from harness.reports.rows import row_label
from harness.reports.store import RUN_COLUMNS, RunView, runs_of
from harness.run_data import CliError, load_run
from harness.safe_write import atomic_write_with

log = logging.getLogger(__name__)
PARSED_SUFFIX = " [parsed grades only]"  # CSV-only columns: the mean over parsed grades


def retrieved_tokens_total(run_dir: str | Path) -> float:
    """Sum over the run's questions of the rendered evidence before the budget cut, in tokens
    (chars / 4), from records.jsonl: the paper's "retrieved tokens" definition. NaN without records."""
    if not (Path(run_dir) / "records.jsonl").is_file():
        return math.nan
    try:
        records = load_run(run_dir, need=("records.jsonl",)).records
        return sum(int(record.get("retrieved_chars", 0)) for record in records) / CHARS_PER_TOKEN
    except (CliError, OSError, TypeError, ValueError) as exc:
        log.warning("cannot read %s: %s", run_dir, exc)
        return math.nan


def k_sweep_data(tidy: pd.DataFrame, dataset: str = "orgmem", mode: str = "auto",
                 differences: dict | None = None) -> tuple[pd.DataFrame, bool]:
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
            "system": row_label(run, 7), "run": run.run, "folder": run.folder,
            "footnote": run_footnote(run, (differences or {}).get(run.run), judged=judge),
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
    columns = ["answerer", "k", "system", "run", "folder", "footnote", "n_questions", *metrics, *shown, "read_tokens",
               "retrieved_tokens_total", "kind", "wording", "all_graded"]
    frame = pd.DataFrame(out, columns=columns)
    if not frame.empty:
        frame["_order"] = frame["k"].map(_k_order)
        frame = frame.sort_values(["answerer", "_order"]).drop(columns="_order").reset_index(drop=True)
    frame.attrs["notes"] = notes
    return frame, judge


def _k_order(key: Any) -> float:
    return math.inf if key == "full_context" else float(key)


def table7(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto", dataset: str = "orgmem",
           notes: Sequence[str] = (), differences: dict | None = None, fill: FillPlan | None = None) -> Table:
    """Table 7 as the paper prints it: one row per k, a column per answerer (ours (paper)) and the
    retrieved tokens (ours (paper)); our read tokens beside them, our retrieval figures in a block of
    their own (they have no paper counterpart)."""
    headline = HEADLINE.get(dataset, "score")
    judged = k_sweep_data(tidy if mode != "retrieval" else tidy.iloc[0:0], dataset, "judge", differences)[0]
    keyless = k_sweep_data(tidy if mode != "judge" else tidy.iloc[0:0], dataset, "retrieval", differences)[0]
    keyless = keyless[keyless["answerer"] == "none"] if mode == "auto" else keyless
    part = paper[paper["table"] == "7"] if dataset == "orgmem" else paper.iloc[0:0]
    values = paper_values(paper, 7) if dataset == "orgmem" else {}
    answerers = answerers_in_order([a for a in dict.fromkeys(part["answerer"]) if a], judged["answerer"])
    everything = pd.concat([judged, keyless]) if not keyless.empty else judged
    keys = sorted(set(everything["k"]) | {"full_context" if r == "Full Context" else int(r) for r in part["row"]},
                  key=_k_order)
    marks = Footnotes()
    rows, retrieval = [], []
    marked = False
    tokens_header = "Retrieved tokens"
    for key in keys:
        label = "Full Context" if key == "full_context" else str(key)
        mine = judged[judged["k"] == key]
        any_run = everything[everything["k"] == key]
        footnotes = [f"{r.answerer}: {r.footnote}" if r.footnote else "" for r in mine.itertuples()]
        row: dict[str, Any] = {"k": label}
        parsed: dict[str, str] = {}
        for answerer in answerers:
            match = mine[mine["answerer"] == answerer]
            r = match.iloc[0] if not match.empty else None
            printed = paper_lookup(values, label, answerer, "overall", "score")
            paper_text = printed if printed is not None else NOT_AVAILABLE
            if r is None:
                row[answerer] = f"{MISSING} ({paper_text})"
                parsed[f"{answerer}{PARSED_SUFFIX}"] = MISSING
                continue
            text = _judged_text(r, headline)
            marked |= not r["comparable"]
            pair = bool(r["comparable"]) and not own_wording(r["wording"])
            row[answerer] = f"{text} ({paper_text})" if pair else text
            parsed[f"{answerer}{PARSED_SUFFIX}"] = fmt_mean_std(r[headline], r[f"{headline}_std"], headline)
        tokens = paper_lookup(values, label, None, "overall", "retrieved_tokens_total_M")
        ours_tokens = any_run["retrieved_tokens_total"].dropna()
        ours_text = fmt_millions(ours_tokens.iloc[0]) if not ours_tokens.empty else MISSING
        row[tokens_header] = f"{ours_text} ({tokens}M)" if tokens is not None else f"{ours_text} ({NOT_AVAILABLE})"
        read = any_run["read_tokens"].dropna()
        row[READ_HEADER] = fmt_tokens(read.iloc[0]) if not read.empty else MISSING
        row["k"] += marks.mark(footnotes)
        row.update(parsed)
        row["run"] = ", ".join(mine["folder"]) or MISSING
        rows.append(row)
        for _, r in keyless[keyless["k"] == key].iterrows():
            entry = {"k": label + marks.mark([r["footnote"]]), "system": r["system"]}
            entry.update({metric: fmt(r[metric], metric) for metric in K_SWEEP_FALLBACK})
            entry[READ_HEADER] = fmt_tokens(r["read_tokens"])
            entry["run"] = r["folder"]
            retrieval.append(entry)
    parsed_columns = [f"{a}{PARSED_SUFFIX}" for a in answerers]
    frame = pd.DataFrame(rows, columns=["k", *answerers, tokens_header, READ_HEADER, *parsed_columns, "run"])
    block = pd.DataFrame(retrieval, columns=["k", "system", *K_SWEEP_FALLBACK, READ_HEADER, "run"]) if retrieval else None
    all_notes = [
        *notes,
        "Tokens are estimates: characters / 4. Retrieved tokens sum the rendered evidence before the cut over every "
        "question of the run (records.jsonl), as the paper counts (its 73 questions); read tokens are what the "
        "answerer reads per question after the dataset's character budget (mean_read_chars / 4).",
    ]
    if marked:
        all_notes.append(f"'{PARSED_ONLY.strip()}': a run without {paper_metric(headline)} (older) whose grades "
                         "did not all parse, or whose stats do not say; its mean over parsed grades is not the "
                         "paper's number.")
    cell_format = (f"Each cell: ours (the paper's figure). Ours per answerer: {paper_metric(headline)} of Mem++ "
                   f"(Full Context row: the Full Context baseline), 100/N over every question; {MISSING}: no answered "
                   f"run of ours; {READ_HEADER}: ours only.")
    title = f"Table 7: k sweep of Mem++ on {DATASET_LABELS.get(dataset, dataset)}"
    return Table("table7" if dataset == "orgmem" else f"table7_{dataset}", title, frame, all_notes, None,
                 not judged.empty, csv_only=(*parsed_columns, "run"), cell_format=cell_format,
                 footnotes=marks.lines(), retrieval=block,
                 retrieval_title=retrieval_title(K_SWEEP_FALLBACK),
                 fill=fill.lines() if fill is not None else [])


READ_HEADER = "read tokens / question*"


def _judged_text(r: pd.Series, headline: str) -> str:
    """Our k-sweep cell: ``<headline>_paper`` (marked when only a parsed-only mean of a partly
    graded run exists; a run in our own wording is footnoted, not marked)."""
    return JudgedValue(r[paper_metric(headline)], r[f"{paper_metric(headline)}_std"], bool(r["comparable"])).text(headline)


def plot_k_sweep(tidy: pd.DataFrame, paper: pd.DataFrame, out_path: str | Path, dataset: str = "orgmem",
                 mode: str = "auto", differences: dict | None = None) -> Path:
    """Figure 4 as PNG: x = k, left axis = score (or the retrieval fallback), right axis = read
    tokens per question (est.); the paper's curves are drawn dashed when ours are judge scores.
    Needs matplotlib (imported here, so the tables work without it)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("plotting needs matplotlib: pip install matplotlib") from exc

    data, judge = k_sweep_data(tidy, dataset, mode, differences)
    sweep = data[data["k"] != "full_context"]
    if sweep.empty:
        raise ValueError(f"no mempp runs on {dataset} to plot")
    headline = HEADLINE.get(dataset, "score")
    metrics = [paper_metric(headline)] if judge else K_SWEEP_FALLBACK  # the paper's curves are this number
    fig, ax = plt.subplots(figsize=(8, 5.6), dpi=150)
    tokens_ax = ax.twinx()
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color_index = 0
    for answerer, group in sweep.groupby("answerer", sort=False):
        ks = group["k"].astype(int).tolist()
        for metric in metrics:
            color = colors[color_index % len(colors)]
            color_index += 1
            label = metric if answerer == "none" else f"{metric} [{answerer}]"
            ax.plot(ks, group[metric], marker="o", color=color, label=label)
            full = data[(data["k"] == "full_context") & (data["answerer"] == answerer)]
            if not full.empty and not is_missing(full[metric].iloc[0]):
                ax.axhline(full[metric].iloc[0], color=color, linestyle=":", linewidth=1,
                           label=f"full context, {label}")
        suffix = "" if answerer == "none" else f" [{answerer}]"
        tokens_ax.plot(ks, group["read_tokens"], color="0.45", linestyle="--", marker="s", markersize=3,
                       label="tokens read / question, after the budget (est.)" + suffix)
        per_question = group["retrieved_tokens_total"] / group["n_questions"]
        if per_question.notna().any():
            tokens_ax.plot(ks, per_question, color="0.65", linestyle=(0, (1, 1.5)), marker="^", markersize=3,
                           label="tokens retrieved / question, before the cut (est.)" + suffix)
    if judge and dataset == "orgmem":
        part = paper[(paper["table"] == "7") & (paper["metric"] == "score") & (paper["row"] != "Full Context")]
        for answerer, group in part.groupby("answerer", sort=False):
            color = colors[color_index % len(colors)]
            color_index += 1
            ax.plot(group["row"].astype(int), group["value"].astype(float), linestyle="--", marker="x",
                    color=color, alpha=0.7, label=f"paper {answerer}")
    all_ks = sorted(set(sweep["k"].astype(int)))
    ax.set_xticks(all_ks)
    ax.set_xlabel("k (rows retrieved)")
    if 50 in all_ks:
        ax.axvline(50, color="0.88", linewidth=3, zorder=0)
        ax.annotate("k = 50 (paper)", xy=(50, 0.02), xycoords=("data", "axes fraction"), ha="center", fontsize=8,
                    color="0.4")
    ax.set_ylabel(f"{headline} (0-100)" if judge else "recall (0-1)")
    if judge:
        ax.set_ylim(bottom=0)
    else:
        ax.set_ylim(0, 1.05)
    tokens_ax.set_ylabel("tokens per question (chars / 4)")
    tokens_ax.set_ylim(bottom=0)
    tokens_ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v / 1000:.0f}k"))
    title = f"Figure 4: Mem++ on {DATASET_LABELS.get(dataset, dataset)} vs k"
    if not judge:
        title += "\nretrieval fallback (no judge metrics in the runs)"
    ax.set_title(title, fontsize=11)
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    handles2, labels2 = tokens_ax.get_legend_handles_labels()
    fig.legend(handles + handles2, labels + labels2, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * math.ceil(len(labels + labels2) / 2), 1, 1))
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_with(out_path, lambda tmp: fig.savefig(tmp, format=out_path.suffix.lstrip(".") or "png"))
    plt.close(fig)
    return out_path
