"""The paper's Tables 1, 2, 3, 4, 7 and Figure 4, rebuilt from the results store.

The runner leaves one folder per run, ``<runs>/<dataset>/<label>-<hash>/`` with ``config.json`` and
``metrics.json``. This module

- scans those folders into one tidy frame (:func:`scan_runs`: a row per run x category x metric,
  with the run's dataset, system, k, answerer, plumbing flag and folder),
- keeps the newest run (folder mtime) per (dataset, system, k, answerer) (:func:`latest_runs`),
- builds each table (:func:`table1` ... :func:`table7`) as a :class:`Table` of display strings,
  with the paper's published value beside ours (``ours / paper``) when the run carries judge
  metrics and a paper row matches, and writes Markdown and CSV (:func:`write_tables`).

Judge metrics (``score``/``score_std`` on OrgMemBench, ``llm_judge``/``f1``/``bleu1`` on LoCoMo,
``accuracy`` on LongMemEval_S) are used when present; otherwise a table falls back to retrieval
metrics (``recall_any@50``, ``recall_all@50``, ``in_budget_recall``) and says so in its title: then
no ``ours / paper`` pairs are printed (a recall is not a judge score) and the paper's table is
appended below ours for reference. Missing cells are "—", a paper value that does not exist is
"n/a". Runs flagged ``"plumbing": true`` (local-model answerers) and partial runs
(``dataset.limit`` / ``dataset.categories``) are labelled in the row name.

The system of a run is its folder label: ``run_name`` if set, else ``system.name``.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RUNS_DIR = Path("outputs/runs")
DEFAULT_OUT_DIR = Path("results/tables")
DEFAULT_PAPER_DIR = ROOT / "results" / "paper"

MISSING = "—"  # no value of ours (never blank, never 0)
NOT_AVAILABLE = "n/a"  # the paper reports no such value (or the paper was not found)
CHARS_PER_TOKEN = 4  # same rough estimate as harness.records

RUN_KEYS = ("dataset", "system", "k", "answerer")
RUN_COLUMNS = [
    "dataset", "system", "system_name", "kind", "k", "answerer", "plumbing", "limit", "categories_filter",
    "default_k", "mean_read_chars", "questions", "run", "mtime",
]
TIDY_COLUMNS = [*RUN_COLUMNS, "category", "metric", "value"]
PAPER_COLUMNS = ["table", "answerer", "row", "column", "category", "metric", "value", "source"]

DATASET_LABELS = {"orgmem": "OrgMemBench", "locomo": "LoCoMo", "longmemeval_s": "LongMemEval_S"}
HEADLINE = {"orgmem": "score", "locomo": "llm_judge", "longmemeval_s": "accuracy"}
JUDGE_METRICS = {"orgmem": ["score"], "locomo": ["llm_judge", "f1", "bleu1"], "longmemeval_s": ["accuracy"]}
FALLBACK_METRICS = ["recall_any@50", "recall_all@50", "in_budget_recall"]
K_SWEEP_FALLBACK = ["recall_any@all", "in_budget_recall"]
ONE_DECIMAL = {"score", "score_std", "llm_judge", "llm_judge_std", "accuracy", "accuracy_std"}
AUTO_DECIMAL = {"f1", "bleu1", "f1_std", "bleu1_std"}

# (column label, summary category) per dataset, in display order.
CATEGORY_COLUMNS = {
    "orgmem": [(c, c) for c in ("C1", "C2", "C3", "C4", "C5", "C6")] + [("overall", "overall")],
    "locomo": [("single-hop", "single-hop"), ("multi-hop", "multi-hop"), ("temporal", "temporal"),
               ("open-domain", "open-domain"), ("overall", "overall"), ("adversarial (apart)", "adversarial")],
    "longmemeval_s": [(c, c) for c in ("single-session-user", "single-session-assistant", "single-session-preference",
                                      "multi-session", "knowledge-update", "temporal-reasoning")]
    + [("task-averaged", "task_averaged"), ("overall", "overall")],
}
# Our system label -> the paper's row label (Tables 1-3 and 7; Table 4).
PAPER_SYSTEM_ROWS = {
    "mempp": "Mem++", "mempp_g": "Mem^g++", "full_context": "Full Context", "rag_2048": "RAG-2048", "rag_4096": "RAG-4096",
}
PAPER_ABLATION_ROWS = {
    "mempp": "Mem++", "mempp_no_vector": "w/o vector leg", "mempp_no_lexical": "w/o lexical leg",
    "mempp_no_tag": "w/o tag leg", "mempp_g": "Mem^g++",
}
SYSTEM_ORDER = ["full_context", "rag_2048", "rag_4096", "bm25", "vector", "mempp", "mempp_g"]
ABLATION_ORDER = ["mempp", "mempp_no_vector", "mempp_no_lexical", "mempp_no_tag"]
TABLES = (1, 2, 3, 4, 7)


# --------------------------------------------------------------------------------------------
# Scanning the results store


def _number(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _answerer_name(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("name", "none")
    return "none" if value is None else str(value)


def run_info(folder: Path, config: dict[str, Any], metrics: dict[str, Any]) -> dict[str, Any]:
    """The run-level columns of one run folder."""
    dataset = config.get("dataset") or {}
    system = config.get("system") or {}
    stats = metrics.get("stats") or {}
    system_name = str(system.get("name", folder.name.rsplit("-", 1)[0]))
    categories = dataset.get("categories")
    return {
        "dataset": str(dataset.get("name", folder.parent.name)),
        "system": str(config.get("run_name") or system_name),
        "system_name": system_name,
        "kind": str(system.get("kind", "")),
        "k": int(system["k"]) if system.get("k") is not None else -1,
        "answerer": _answerer_name(config.get("answerer", "none")),
        "plumbing": bool(stats.get("plumbing", False)),
        "limit": dataset.get("limit"),
        "categories_filter": ",".join(map(str, categories)) if categories else None,
        "default_k": (dataset.get("mempp") or {}).get("k"),
        "mean_read_chars": _number(stats.get("mean_read_chars")),
        "questions": stats.get("questions"),
        "run": str(folder),
        "mtime": folder.stat().st_mtime,
    }


def scan_runs(runs_dir: str | Path = DEFAULT_RUNS_DIR) -> pd.DataFrame:
    """Every ``<dataset>/<run>/`` folder with a config.json and metrics.json, as a tidy frame.

    One row per run x summary category x metric (``n`` and ``n_scored`` included), value as float
    (NaN for null). Folders without both files, or with unreadable JSON, are skipped with a warning.
    """
    rows: list[dict[str, Any]] = []
    for config_path in sorted(Path(runs_dir).glob("*/*/config.json")):
        folder = config_path.parent
        metrics_path = folder / "metrics.json"
        if not metrics_path.is_file():
            log.warning("skipping %s: no metrics.json (unfinished run?)", folder)
            continue
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
            metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            log.warning("skipping %s: %s", folder, exc)
            continue
        info = run_info(folder, config, metrics)
        for category, values in (metrics.get("summary") or {}).items():
            for metric, value in (values or {}).items():
                rows.append({**info, "category": str(category), "metric": str(metric), "value": _number(value)})
    return pd.DataFrame(rows, columns=TIDY_COLUMNS)


def latest_runs(tidy: pd.DataFrame) -> pd.DataFrame:
    """Only the newest run (folder mtime, then folder name) per (dataset, system, k, answerer)."""
    if tidy.empty:
        return tidy
    runs = tidy.drop_duplicates("run")[[*RUN_KEYS, "run", "mtime"]].sort_values(["mtime", "run"])
    newest = runs.groupby(list(RUN_KEYS), dropna=False).tail(1)["run"]
    return tidy[tidy["run"].isin(set(newest))].reset_index(drop=True)


def load_paper(paper_dir: str | Path | None = DEFAULT_PAPER_DIR) -> pd.DataFrame:
    """All ``table*.csv`` of ``paper_dir`` in one frame (values kept as printed strings)."""
    frames = []
    if paper_dir is not None and Path(paper_dir).is_dir():
        for path in sorted(Path(paper_dir).glob("table*.csv")):
            frames.append(pd.read_csv(path, dtype=str, keep_default_na=False))
    if not frames:
        return pd.DataFrame(columns=PAPER_COLUMNS)
    paper = pd.concat(frames, ignore_index=True)
    paper["table"] = paper["table"].astype(str)
    return paper


# --------------------------------------------------------------------------------------------
# Formatting


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt(value: Any, metric: str) -> str:
    """One number for display: judge scores with 1 decimal, retrieval metrics with 3; NaN is "—"."""
    if _is_missing(value):
        return MISSING
    value = float(value)
    if metric in ONE_DECIMAL:
        decimals = 1
    elif metric in AUTO_DECIMAL:
        decimals = 1 if abs(value) > 1.0 else 3  # F1 / BLEU-1 on a 0-100 or a 0-1 scale
    else:
        decimals = 3
    return f"{value:.{decimals}f}"


def fmt_mean_std(mean: Any, std: Any, metric: str) -> str:
    if _is_missing(mean):
        return MISSING
    text = fmt(mean, metric)
    return text if _is_missing(std) else f"{text} ± {fmt(std, metric)}"


def fmt_delta(delta: float, metric: str) -> str:
    text = fmt(abs(delta), metric)
    return f"{'-' if delta < 0 and float(text) != 0 else '+'}{text}"


def fmt_tokens(value: Any) -> str:
    return MISSING if _is_missing(value) else f"{round(float(value)):,}"


def fmt_millions(value: Any) -> str:
    return MISSING if _is_missing(value) else f"{float(value) / 1e6:.2f}M"


def markdown_table(frame: pd.DataFrame) -> str:
    """A padded pipe table of a frame of strings (no index, no ``tabulate`` needed)."""
    header = [str(c) for c in frame.columns]
    body = [[str(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    widths = [max(3, len(h), *(len(r[j]) for r in body)) for j, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in body)])


@dataclass
class Table:
    """One table, ready to print: ``frame`` holds display strings only."""

    key: str
    title: str
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    paper: pd.DataFrame | None = None  # the paper's table as published, appended for reference
    judge: bool = False

    def markdown(self) -> str:
        parts = [f"## {self.title}", ""]
        if self.frame.empty:
            parts.append("_No runs found._")
        else:
            parts.append(markdown_table(self.frame))
        if self.notes:
            parts += ["", *[f"- {note}" for note in self.notes]]
        if self.paper is not None:
            parts += ["", "Paper, as published (results/paper/README.md):", ""]
            parts.append(markdown_table(self.paper) if not self.paper.empty else f"{NOT_AVAILABLE} (paper numbers not found)")
        return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------------------------
# Looking values up


class RunView:
    """Fast look-ups into the tidy frame of the selected runs."""

    def __init__(self, tidy: pd.DataFrame):
        self.tidy = tidy
        self.values: dict[tuple[str, str, str], float] = {
            (r, c, m): v for r, c, m, v in zip(tidy["run"], tidy["category"], tidy["metric"], tidy["value"])
        }
        self.runs = tidy.drop_duplicates("run").set_index("run", drop=False) if not tidy.empty else tidy

    def value(self, run: str, category: str, metric: str) -> float:
        return self.values.get((run, category, metric), math.nan)

    def has(self, run: str, metric: str) -> bool:
        return any(not math.isnan(v) for (r, _c, m), v in self.values.items() if r == run and m == metric)


def paper_lookup(paper: pd.DataFrame, table: int | str, row: str | None, answerer: str | None,
                 category: str, metric: str) -> str | None:
    """The paper's value as printed, or None."""
    if row is None or paper.empty:
        return None
    hit = paper[(paper["table"] == str(table)) & (paper["row"] == row) & (paper["category"] == category)
                & (paper["metric"] == metric)]
    if answerer is not None:
        hit = hit[hit["answerer"].map(_norm_answerer) == _norm_answerer(answerer)]
    return None if hit.empty else str(hit["value"].iloc[0])


def _norm_answerer(name: str) -> str:
    """``openai/gpt-4o-mini`` and ``GPT-4o-mini`` both match the paper's ``gpt-4o-mini``."""
    return str(name).strip().lower().rsplit("/", 1)[-1]


def paper_cell(paper: pd.DataFrame, table: int, row: str | None, answerer: str, category: str, metric: str) -> str:
    value = paper_lookup(paper, table, row, answerer, category, metric)
    if value is None:
        return NOT_AVAILABLE
    std = paper_lookup(paper, table, row, answerer, category, f"{metric}_std")
    return value if std is None else f"{value} ± {std}"


def paper_reference(paper: pd.DataFrame, table: int) -> pd.DataFrame:
    """The paper's table back in wide form: one row per (answerer, row), its columns as printed."""
    part = paper[paper["table"] == str(table)]
    if part.empty:
        return pd.DataFrame(columns=["answerer", "row"])
    columns = list(dict.fromkeys(part["column"]))
    out = []
    for (answerer, row), group in part.groupby(["answerer", "row"], sort=False):
        cells: dict[str, str] = {"answerer": answerer or MISSING, "row": row}
        for column in columns:
            sub = group[group["column"] == column]
            if sub.empty:
                cells[column] = NOT_AVAILABLE
                continue
            by_metric = dict(zip(sub["metric"], sub["value"]))
            main = [m for m in by_metric if not m.endswith("_std") and m != "delta_vs_mempp"]
            text = by_metric[main[0]] if main else NOT_AVAILABLE
            std = next((v for m, v in by_metric.items() if m.endswith("_std")), None)
            if std is not None:
                text += f" ± {std}"
            if "delta_vs_mempp" in by_metric:
                text += f" ({by_metric['delta_vs_mempp']})"
            cells[column] = text
        out.append(cells)
    return pd.DataFrame(out, columns=["answerer", "row", *columns])


# --------------------------------------------------------------------------------------------
# Selecting runs


def run_label(run: pd.Series) -> str:
    """The row name: the system, plus (plumbing) and partial-run markers."""
    label = str(run["system"])
    if bool(run["plumbing"]):
        label += " (plumbing)"
    if not _is_missing(run["limit"]):
        label += f" (limit={int(run['limit'])})"
    if isinstance(run["categories_filter"], str) and run["categories_filter"]:
        label += f" (categories={run['categories_filter']})"
    return label


def _system_rank(name: str, order: Sequence[str]) -> tuple[int, str]:
    return (order.index(name), name) if name in order else (len(order), name)


def pick_default_k(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, system, answerer): the run at the paper's fixed k (dataset.mempp.k) if there is
    one among several k; otherwise every k (the row names then carry ``(k=N)``)."""
    keep = []
    for _key, group in runs.groupby(["dataset", "system", "answerer"], sort=False, dropna=False):
        if group["k"].nunique() > 1:
            at_default = group[group["k"] == group["default_k"]]
            group = at_default if not at_default.empty else group.assign(k_label=True)
        keep.append(group)
    if not keep:
        return runs.assign(k_label=False)
    out = pd.concat(keep)
    if "k_label" not in out:
        out["k_label"] = False
    out["k_label"] = out["k_label"].fillna(False).astype(bool)
    return out


def _runs_of(tidy: pd.DataFrame) -> pd.DataFrame:
    return tidy.drop_duplicates("run")[RUN_COLUMNS].reset_index(drop=True)


def _is_ablation(system: str) -> bool:
    return system.startswith("mempp_") and system != "mempp_g"


def _decide_mode(view: RunView, runs: pd.DataFrame, mode: str) -> bool:
    if mode not in ("auto", "judge", "retrieval"):
        raise ValueError(f"mode must be auto, judge or retrieval, got {mode!r}")
    if mode != "auto":
        return mode == "judge"
    return any(view.has(run.run, HEADLINE.get(run.dataset, "score")) for run in runs.itertuples())


def _judge_filter(view: RunView, runs: pd.DataFrame, judge: bool, notes: list[str]) -> pd.DataFrame:
    """In judge mode, only the runs that carry their dataset's judge metric."""
    if not judge or runs.empty:
        return runs
    has = pd.Series([view.has(r.run, HEADLINE.get(r.dataset, "score")) for r in runs.itertuples()],
                    index=runs.index, dtype=bool)
    dropped = runs[~has]
    if not dropped.empty:
        names = ", ".join(sorted({f"{r.system} [{r.answerer}]" for r in dropped.itertuples()}))
        notes.append(f"Runs without judge metrics left out (use --mode retrieval to see them): {names}.")
    return runs[has]


def _fallback_note(judge: bool, metrics: Sequence[str]) -> str:
    return "" if judge else f" — retrieval fallback ({', '.join(metrics)}; no judge metrics in the runs)"


# --------------------------------------------------------------------------------------------
# Tables 1-3: one dataset, categories as columns


def category_table(tidy: pd.DataFrame, paper: pd.DataFrame, *, number: int, dataset: str, title: str,
                   judge_detail: str, mode: str = "auto") -> Table:
    view = RunView(tidy)
    runs = _runs_of(tidy)
    runs = runs[(runs["dataset"] == dataset) & ~runs["system"].map(_is_ablation)]
    runs = pick_default_k(runs)
    judge = _decide_mode(view, runs, mode)
    notes: list[str] = []
    runs = _judge_filter(view, runs, judge, notes)
    metrics = JUDGE_METRICS[dataset] if judge else FALLBACK_METRICS
    columns = CATEGORY_COLUMNS[dataset]
    runs = runs.assign(_rank=runs["system"].map(lambda s: _system_rank(s, SYSTEM_ORDER)))
    runs = runs.sort_values(["_rank", "answerer", "k"])
    rows = []
    for _, run in runs.iterrows():
        label = run_label(run) + (f" (k={run['k']})" if run.get("k_label") else "")
        paper_row = PAPER_SYSTEM_ROWS.get(run["system"])
        for metric in metrics:
            row = {"system": label, "answerer": run["answerer"], "metric": metric}
            for column, category in columns:
                ours = fmt_mean_std(view.value(run["run"], category, metric), view.value(run["run"], category, f"{metric}_std"), metric)
                if judge:
                    ours = f"{ours} / {paper_cell(paper, number, paper_row, run['answerer'], category, metric)}"
                row[column] = ours
            rows.append(row)
    frame = pd.DataFrame(rows, columns=["system", "answerer", "metric", *[c for c, _ in columns]])
    if judge:
        notes.append("Cells are ours / paper (the paper's value for the same system and answerer; n/a where it reports none).")
    if dataset == "locomo":
        notes.append("overall excludes adversarial questions, which are reported apart.")
    if dataset == "longmemeval_s":
        notes.append("The paper's 'Average' is question-weighted, i.e. our overall; it gives no task-averaged figure.")
    full_title = f"Table {number}: {title}" + (f": {judge_detail}" if judge else _fallback_note(judge, metrics))
    return Table(f"table{number}", full_title, frame, notes, paper_reference(paper, number), judge)


def table1(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto") -> Table:
    return category_table(tidy, paper, number=1, dataset="orgmem", mode=mode,
                          title="OrgMemBench (medium) by category",
                          judge_detail="score (0-100), mean ± std over judge runs")


def table2(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto") -> Table:
    return category_table(tidy, paper, number=2, dataset="locomo", mode=mode,
                          title="LoCoMo by category", judge_detail="LLM judge (mean ± std) / F1 / BLEU-1")


def table3(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto") -> Table:
    return category_table(tidy, paper, number=3, dataset="longmemeval_s", mode=mode,
                          title="LongMemEval_S by question type", judge_detail="accuracy (mean ± std)")


# --------------------------------------------------------------------------------------------
# Table 4: ablations, datasets as columns


def table4(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto") -> Table:
    view = RunView(tidy)
    runs = _runs_of(tidy)
    runs = runs[(runs["system"] == "mempp") | runs["system"].map(_is_ablation)]
    runs = pick_default_k(runs)
    judge = _decide_mode(view, runs, mode)
    notes: list[str] = []
    runs = _judge_filter(view, runs, judge, notes)
    metric_rows = ["headline"] if judge else FALLBACK_METRICS
    datasets = list(DATASET_LABELS)
    runs = runs.assign(label=[run_label(r) + (f" (k={r['k']})" if r.get("k_label") else "") for _, r in runs.iterrows()])
    runs = runs.assign(_rank=runs["system"].map(lambda s: _system_rank(s, ABLATION_ORDER)))
    # The Mem++ run each variant is compared with: same dataset, answerer and plumbing flag.
    base = {(r["dataset"], r["answerer"], bool(r["plumbing"])): r["run"] for _, r in runs[runs["system"] == "mempp"].iterrows()}
    rows = []
    for (label, answerer), group in runs.sort_values(["_rank", "label", "answerer"]).groupby(["label", "answerer"], sort=False):
        system = group["system"].iloc[0]
        for metric_row in metric_rows:
            row = {"system": label, "answerer": answerer,
                   "metric": " / ".join(HEADLINE[d] for d in datasets) if metric_row == "headline" else metric_row}
            for dataset in datasets:
                metric = HEADLINE[dataset] if metric_row == "headline" else metric_row
                run = group[group["dataset"] == dataset]
                cell = MISSING
                if not run.empty:
                    r = run.iloc[0]
                    value = view.value(r["run"], "overall", metric)
                    cell = fmt_mean_std(value, view.value(r["run"], "overall", f"{metric}_std"), metric)
                    ref = base.get((dataset, answerer, bool(r["plumbing"])))
                    if system != "mempp" and ref is not None and not _is_missing(value):
                        ref_value = view.value(ref, "overall", metric)
                        if not _is_missing(ref_value):
                            cell += f" ({fmt_delta(value - ref_value, metric)})"
                if judge:
                    printed = paper_lookup(paper, 4, PAPER_ABLATION_ROWS.get(system), answerer, dataset, metric)
                    cell = f"{cell} / {printed if printed is not None else NOT_AVAILABLE}"
                row[DATASET_LABELS[dataset]] = cell
            rows.append(row)
    frame = pd.DataFrame(rows, columns=["system", "answerer", "metric", *DATASET_LABELS.values()])
    notes.append("Overall of each dataset; (+/-x) is the change from mempp with the same answerer.")
    if judge:
        notes.append("Cells are ours / paper (the paper's ablation used answerer claude-sonnet-4-6).")
    metrics = ["overall " + HEADLINE[d] for d in datasets] if judge else FALLBACK_METRICS
    title = f"Table 4: Ablations of Mem++ (mempp vs mempp_*){_fallback_note(judge, metrics)}"
    return Table("table4", title, frame, notes, paper_reference(paper, 4), judge)


# --------------------------------------------------------------------------------------------
# Table 7 / Figure 4: the k sweep


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


def k_sweep_data(tidy: pd.DataFrame, dataset: str = "orgmem", mode: str = "auto") -> tuple[pd.DataFrame, bool]:
    """Numbers behind Table 7 / Figure 4: one row per mempp run on ``dataset`` (one per k and
    answerer), plus the full-context run of each answerer as ``k = "full_context"``.

    Columns: answerer, k, system (row label), run, the metrics (judge: headline and its std;
    else recall_any@all and in_budget_recall), read_tokens (mean_read_chars / 4 per question) and
    retrieved_tokens_total (records' pre-cut evidence, all questions, chars / 4). Returns
    (frame, judge).
    """
    view = RunView(tidy)
    runs = _runs_of(tidy)
    runs = runs[(runs["dataset"] == dataset) & runs["system"].isin(["mempp", "full_context"])]
    judge = _decide_mode(view, runs[runs["system"] == "mempp"], mode)
    notes: list[str] = []
    runs = _judge_filter(view, runs, judge, notes)
    headline = HEADLINE.get(dataset, "score")
    metrics = [headline, f"{headline}_std"] if judge else K_SWEEP_FALLBACK
    full_context = runs[runs["system"] == "full_context"].sort_values("mtime").groupby("answerer").tail(1)
    chosen = pd.concat([runs[runs["system"] == "mempp"], full_context])
    rows = []
    for _, run in chosen.iterrows():
        row = {
            "answerer": run["answerer"],
            "k": "full_context" if run["system"] == "full_context" else int(run["k"]),
            "system": run_label(run),
            "run": run["run"],
            "n_questions": view.value(run["run"], "overall", "n"),
            "read_tokens": run["mean_read_chars"] / CHARS_PER_TOKEN,
            "retrieved_tokens_total": retrieved_tokens_total(run["run"]),
        }
        for metric in metrics:
            row[metric] = view.value(run["run"], "overall", metric)
        rows.append(row)
    columns = ["answerer", "k", "system", "run", "n_questions", *metrics, "read_tokens", "retrieved_tokens_total"]
    frame = pd.DataFrame(rows, columns=columns)
    if not frame.empty:
        frame["_order"] = frame["k"].map(lambda k: math.inf if k == "full_context" else k)
        frame = frame.sort_values(["answerer", "_order"]).drop(columns="_order").reset_index(drop=True)
    frame.attrs["notes"] = notes
    return frame, judge


def _paper_k_rows(paper: pd.DataFrame) -> list[str]:
    part = paper[paper["table"] == "7"]
    return list(dict.fromkeys(part["row"]))


def table7(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto", dataset: str = "orgmem") -> Table:
    data, judge = k_sweep_data(tidy, dataset, mode)
    headline = HEADLINE.get(dataset, "score")
    metrics = [headline] if judge else K_SWEEP_FALLBACK
    paper_answerers = list(dict.fromkeys(a for a in paper.loc[paper["table"] == "7", "answerer"] if a))
    rows = []
    answerers = list(dict.fromkeys(data["answerer"])) or [MISSING]
    for answerer in answerers:
        ours = data[data["answerer"] == answerer]
        keys: list[Any] = list(ours["k"])
        if dataset == "orgmem":  # show every k the paper reports, ours or not
            for label in _paper_k_rows(paper):
                key = "full_context" if label == "Full Context" else int(label)
                if key not in keys:
                    keys.append(key)
        keys.sort(key=lambda k: math.inf if k == "full_context" else k)
        for key in keys:
            match = ours[ours["k"] == key]
            r = match.iloc[0] if not match.empty else None
            row: dict[str, str] = {"answerer": answerer, "k": str(key),
                                   "system": r["system"] if r is not None else MISSING}
            for metric in metrics:
                if r is None:
                    row[metric] = MISSING
                elif judge:
                    row[metric] = fmt_mean_std(r[metric], r.get(f"{metric}_std"), metric)
                else:
                    row[metric] = fmt(r[metric], metric)
            row["read tokens / question (est.)"] = fmt_tokens(r["read_tokens"]) if r is not None else MISSING
            row["retrieved tokens, all questions (est.)"] = fmt_millions(r["retrieved_tokens_total"]) if r is not None else MISSING
            paper_row = "Full Context" if key == "full_context" else str(key)
            for paper_answerer in paper_answerers:
                value = paper_lookup(paper, 7, paper_row, paper_answerer, "overall", "score") if dataset == "orgmem" else None
                row[f"paper {paper_answerer}"] = value if value is not None else NOT_AVAILABLE
            tokens = paper_lookup(paper, 7, paper_row, None, "overall", "retrieved_tokens_total_M") if dataset == "orgmem" else None
            row["paper retrieved tokens"] = f"{tokens}M" if tokens is not None else NOT_AVAILABLE
            rows.append(row)
    if not paper_answerers:
        paper_columns = ["paper score", "paper retrieved tokens"]
        for row in rows:
            row.setdefault("paper score", NOT_AVAILABLE)
    else:
        paper_columns = [f"paper {a}" for a in paper_answerers] + ["paper retrieved tokens"]
    columns = ["answerer", "k", "system", *metrics, "read tokens / question (est.)",
               "retrieved tokens, all questions (est.)", *paper_columns]
    frame = pd.DataFrame(rows, columns=columns) if rows else pd.DataFrame(columns=columns)
    notes = [
        *data.attrs.get("notes", []),
        "Tokens are estimates: characters / 4. 'read' is what the answerer reads per question (after the "
        "dataset's character budget, mean_read_chars / 4); 'retrieved, all questions' sums the rendered "
        "evidence before the cut over every question of the run (records.jsonl), as the paper counts.",
        "The paper's columns are its OrgMemBench score per answerer (Mem++; Full Context row = the Full Context "
        "baseline) and its retrieved tokens, summed over its 73 questions.",
    ]
    if not judge:
        notes.append("No judge metrics: ours are retrieval metrics over the whole returned list and in the budget; "
                     "they are not comparable with the paper's scores.")
    title = (f"Table 7: k sweep of Mem++ on {DATASET_LABELS.get(dataset, dataset)}"
             f"{_fallback_note(judge, metrics)}")
    return Table("table7" if dataset == "orgmem" else f"table7_{dataset}", title, frame, notes, None, judge)


# --------------------------------------------------------------------------------------------
# Figure 4


def plot_k_sweep(tidy: pd.DataFrame, paper: pd.DataFrame, out_path: str | Path, dataset: str = "orgmem",
                 mode: str = "auto") -> Path:
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

    data, judge = k_sweep_data(tidy, dataset, mode)
    sweep = data[data["k"] != "full_context"]
    if sweep.empty:
        raise ValueError(f"no mempp runs on {dataset} to plot")
    headline = HEADLINE.get(dataset, "score")
    metrics = [headline] if judge else K_SWEEP_FALLBACK
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
            if not full.empty and not _is_missing(full[metric].iloc[0]):
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
    fig.savefig(out_path)
    plt.close(fig)
    return out_path


# --------------------------------------------------------------------------------------------
# Everything at once


BUILDERS = {1: table1, 2: table2, 3: table3, 4: table4, 7: table7}


def build_tables(runs_dir: str | Path = DEFAULT_RUNS_DIR, paper_dir: str | Path | None = DEFAULT_PAPER_DIR,
                 tables: Iterable[int] = TABLES, mode: str = "auto") -> list[Table]:
    tidy = latest_runs(scan_runs(runs_dir))
    paper = load_paper(paper_dir)
    out = []
    for number in tables:
        if number not in BUILDERS:
            raise ValueError(f"unknown table {number}; choose from {sorted(BUILDERS)}")
        out.append(BUILDERS[number](tidy, paper, mode=mode))
    return out


def write_tables(tables: Sequence[Table], out_dir: str | Path = DEFAULT_OUT_DIR) -> list[Path]:
    """``<key>.md`` and ``<key>.csv`` per table (plus ``<key>_paper.csv`` for the paper's
    reference table) and ``tables.md`` with all of them."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for table in tables:
        md = out_dir / f"{table.key}.md"
        md.write_text(table.markdown(), encoding="utf-8")
        csv = out_dir / f"{table.key}.csv"
        table.frame.to_csv(csv, index=False)
        written += [md, csv]
        if table.paper is not None and not table.paper.empty:
            paper_csv = out_dir / f"{table.key}_paper.csv"
            table.paper.to_csv(paper_csv, index=False)
            written.append(paper_csv)
    index = out_dir / "tables.md"
    index.write_text("\n".join(t.markdown() for t in tables), encoding="utf-8")
    written.append(index)
    return written
