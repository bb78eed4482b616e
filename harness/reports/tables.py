"""The paper's Tables 1-4 from the results store: one tidy frame, pivoted per table.

The runner leaves one folder per run (``<runs>/<dataset>/<label>-<hash>/``: config.json,
metrics.json). :func:`build_tables` scans them into one tidy frame (``store.scan_runs``), keeps for
each table the runs its preset asks for (``selection.select_runs``: matched by resolved
configuration; limited, failed and plumbing runs left out unless asked), and pivots the cells of
each table (category or dataset as columns) with the paper's published value beside ours
(``ours / paper``) on judged rows. Runs without an answerer give retrieval rows (recall_any@50,
recall_all@50, in_budget_recall), labelled as such; a table with no judged row says "retrieval
fallback" in its title. Every row names the run folder it came from. Table 7 and Figure 4 live in
``ksweep`` and ``plots``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from harness.safe_write import StagedWrites
from harness.reports.comparable import (
    RowOrigin, beside_paper, judged_value, pairing_notes, paper_metric, parsed_only_text,
)
from harness.reports.format import MISSING, NOT_AVAILABLE, Table, fmt_delta, fmt_mean_std, is_missing
from harness.reports.ksweep import k_sweep_data, table7
from harness.reports.labels import (
    CATEGORY_COLUMNS, DATASET_LABELS, FALLBACK_METRICS, HEADLINE, JUDGE_METRICS, TABLE_BENCHMARK, TABLE_DATASET, is_ablation,
    paper_row,
)
from harness.reports.paper import (
    DEFAULT_PAPER_DIR, PAPER_COLUMNS, load_paper, paper_cell, paper_lookup, paper_reference, paper_values,
)
from harness.reports.plots import plot_k_sweep
from harness.reports.rows import Rows, choose_rows, fallback_note, row_label
from harness.reports.selection import Job, Options, select_runs
from harness.reports.store import DEFAULT_RUNS_DIR, TIDY_COLUMNS, RunView, latest_runs, scan_runs

DEFAULT_OUT_DIR = Path("outputs/tables")  # generated, so untracked (.gitignore covers outputs/); results/paper/ is the tracked reference
TABLES = (1, 2, 3, 4, 7)

__all__ = [
    "DEFAULT_OUT_DIR", "DEFAULT_PAPER_DIR", "DEFAULT_RUNS_DIR", "PAPER_COLUMNS", "TABLES", "TIDY_COLUMNS", "Table",
    "build_tables", "k_sweep_data", "latest_runs", "load_paper", "plot_k_sweep", "scan_runs", "table1", "table2",
    "table3", "table4", "table7", "write_tables",
]


def _pivot(cells: list[dict], index: list[str], columns: list[str]) -> pd.DataFrame:
    """Long cells (index..., column, text) -> one row per index, columns in the given order."""
    if not cells:
        return pd.DataFrame(columns=[*index, *columns])
    long = pd.DataFrame(cells)
    long["_row"] = pd.factorize(long[index].astype(str).agg("\x1f".join, axis=1))[0]
    wide = long.pivot(index="_row", columns="column", values="text").reindex(columns=columns).astype(object).fillna(MISSING)
    keys = long.drop_duplicates("_row").set_index("_row")[index]
    return keys.join(wide).reset_index(drop=True)[[*index, *columns]]


def category_table(tidy: pd.DataFrame, paper: pd.DataFrame, number: int, mode: str = "auto",
                   notes: Sequence[str] = (), labels: dict[str, str] | None = None) -> Table:
    """One benchmark per category: judged rows print the paper-comparable ``<headline>_paper`` (and
    the benchmark's other shown metrics) beside the paper's value; the parsed-only ``<headline>``
    rows are kept for the CSV. Retrieval rows print the fallback metrics alone."""
    dataset = TABLE_DATASET[number]
    title, judge_detail = TABLE_BENCHMARK[number].table_title
    headline = HEADLINE[dataset]
    view = RunView(tidy)
    rows: Rows = choose_rows(tidy, view, dataset=dataset, mode=mode, keep=lambda s: not is_ablation(s))
    values = paper_values(paper, number)
    columns = CATEGORY_COLUMNS[dataset]
    cells = []
    origins: list[RowOrigin] = []
    marked = std_left_out = False
    for run in rows.runs.itertuples():
        judged = run.run in rows.judged
        label = row_label(run, labels)

        def add(metric: str, column: str, text: str) -> None:
            cells.append({"system": label, "answerer": run.answerer, "metric": metric, "run": run.folder,
                          "column": column, "text": text})

        if not judged:
            for metric in FALLBACK_METRICS:
                for column, category in columns:
                    add(metric, column, fmt_mean_std(view.value(run.run, category, metric),
                                                     view.value(run.run, category, f"{metric}_std"), metric))
            continue
        origins.append(RowOrigin(label, run.answerer, run.kind, run.wording, run.folder))
        for metric in JUDGE_METRICS[dataset]:
            for column, category in columns:
                if metric == headline:
                    cell = judged_value(view, run.run, category, metric, bool(run.all_graded))
                    text, comparable = cell.text(metric), cell.comparable
                    marked |= not comparable
                    std_left_out |= not run.all_graded and not is_missing(view.value(run.run, category, f"{metric}_std"))
                    add(metric, column, parsed_only_text(view, run.run, category, metric))
                    shown = paper_metric(metric)
                else:
                    text = fmt_mean_std(view.value(run.run, category, metric),
                                        view.value(run.run, category, f"{metric}_std"), metric)
                    comparable, shown = True, metric
                paper_text = paper_cell(values, paper_row(run.system_name, number), run.answerer, category, metric)
                add(shown, column, beside_paper(text, comparable, run.kind, run.wording, paper_text))
    frame = _pivot(cells, ["system", "answerer", "metric", "run"], [c for c, _ in columns])
    frame = frame[["system", "answerer", "metric", *[c for c, _ in columns], "run"]]
    all_notes = [*notes, *rows.notes]
    if rows.judged:
        all_notes.append(f"Cells are ours / paper (the paper's value for the same system and answerer; n/a where it "
                         f"reports none). Ours is {paper_metric(headline)}: 100/N over every question, a failed or "
                         f"unparsable grade counting 0, as the paper's scripts score; the mean over parsed grades "
                         f"only ({headline}) is in the CSV.")
        all_notes += pairing_notes(origins, marked, std_left_out, paper_metric(headline))
    all_notes += TABLE_BENCHMARK[number].table_notes
    head = f"Table {number}: {title}" + (f": {judge_detail}" if rows.judged else fallback_note(False, FALLBACK_METRICS))
    return Table(f"table{number}", head, frame, all_notes, paper_reference(paper, number), bool(rows.judged),
                 csv_only=(headline,) if rows.judged else ())


def table1(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto", **kw) -> Table:
    return category_table(tidy, paper, 1, mode, **kw)


def table2(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto", **kw) -> Table:
    return category_table(tidy, paper, 2, mode, **kw)


def table3(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto", **kw) -> Table:
    return category_table(tidy, paper, 3, mode, **kw)


def table4(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto", notes: Sequence[str] = (),
           labels: dict[str, str] | None = None) -> Table:
    """Ablations: datasets as columns, each cell the overall and its change from mempp (judged rows:
    ``<headline>_paper`` beside the paper; the parsed-only ``<headline>`` row is kept for the CSV)."""
    view = RunView(tidy)
    rows = choose_rows(tidy, view, dataset=None, mode=mode, keep=lambda s: s == "mempp" or is_ablation(s))
    values = paper_values(paper, 4)
    runs = rows.runs.assign(label=[row_label(r, labels) for r in rows.runs.itertuples()])
    base = {(r.dataset, r.answerer, r.run in rows.judged): r for r in runs.itertuples() if r.system_name == "mempp"}
    parsed_name = " / ".join(HEADLINE[d] for d in DATASET_LABELS)
    paper_name = " / ".join(paper_metric(HEADLINE[d]) for d in DATASET_LABELS)
    cells = []
    origins: list[RowOrigin] = []
    marked = std_left_out = False

    def ours(r, metric: str, judged: bool) -> tuple[float, str, bool]:
        """The overall a cell prints for run ``r``: (value, text, comparable)."""
        if not judged:
            value = view.value(r.run, "overall", metric)
            return value, fmt_mean_std(value, view.value(r.run, "overall", f"{metric}_std"), metric), True
        cell = judged_value(view, r.run, "overall", metric, bool(r.all_graded))
        return cell.value, cell.text(metric), cell.comparable

    for (label, answerer, judged), group in runs.groupby(
            ["label", "answerer", runs["run"].isin(rows.judged).rename("judged")], sort=False):
        for metric_row in ([paper_name, parsed_name] if judged else FALLBACK_METRICS):
            for dataset, column in DATASET_LABELS.items():
                metric = HEADLINE[dataset] if metric_row in (paper_name, parsed_name) else metric_row
                match = group[group["dataset"] == dataset]
                text, folder = MISSING, None
                if not match.empty:
                    r = next(match.itertuples())
                    folder = r.folder
                    if metric_row == parsed_name:
                        cells.append({"system": label, "answerer": answerer, "metric": metric_row, "column": column,
                                      "text": parsed_only_text(view, r.run, "overall", metric), "run": folder})
                        continue
                    value, text, comparable = ours(r, metric, judged)
                    ref = base.get((dataset, answerer, judged))
                    if r.system_name != "mempp" and ref is not None and not is_missing(value):
                        ref_value, _, ref_comparable = ours(ref, metric, judged)
                        if not is_missing(ref_value) and ref_comparable == comparable:
                            text += f" ({fmt_delta(value - ref_value, metric)})"
                    if judged:
                        origins.append(RowOrigin(label, answerer, r.kind, r.wording, folder))
                        marked |= not comparable
                        std_left_out |= not r.all_graded and not is_missing(view.value(r.run, "overall", f"{metric}_std"))
                        printed = paper_lookup(values, paper_row(r.system_name, 4), answerer, dataset, metric)
                        text = beside_paper(text, comparable, r.kind, r.wording,
                                            printed if printed is not None else NOT_AVAILABLE)
                elif metric_row == parsed_name:
                    cells.append({"system": label, "answerer": answerer, "metric": metric_row, "column": column,
                                  "text": MISSING, "run": None})
                    continue
                elif judged:
                    printed = paper_lookup(values, paper_row(group["system_name"].iloc[0], 4), answerer, dataset, metric)
                    text += f" / {printed if printed is not None else NOT_AVAILABLE}"
                cells.append({"system": label, "answerer": answerer, "metric": metric_row, "column": column,
                              "text": text, "run": folder})
    frame = _pivot(cells, ["system", "answerer", "metric"], list(DATASET_LABELS.values()))
    if not frame.empty:
        folders = (pd.DataFrame(cells).dropna(subset=["run"]).groupby(["system", "answerer", "metric"], sort=False)["run"]
                   .agg(", ".join))
        frame = frame.join(folders, on=["system", "answerer", "metric"])
        frame["run"] = frame["run"].fillna(MISSING)
    all_notes = [*notes, *rows.notes, "Overall of each dataset; (+/-x) is the change from mempp with the same answerer."]
    if rows.judged:
        all_notes.append(f"Cells are ours / paper (the paper's ablation used answerer claude-sonnet-4-6). Ours is "
                         f"{paper_name}: 100/N over every question, a failed or unparsable grade counting 0, as the "
                         f"paper's scripts score; the means over parsed grades only ({parsed_name}) are in the CSV.")
        all_notes += pairing_notes(list(dict.fromkeys(origins)), marked, std_left_out, paper_name)
    metrics = ["overall " + HEADLINE[d] for d in DATASET_LABELS] if rows.judged else FALLBACK_METRICS
    title = f"Table 4: Ablations of Mem++ (mempp vs mempp_*){fallback_note(bool(rows.judged), metrics)}"
    return Table("table4", title, frame, all_notes, paper_reference(paper, 4), bool(rows.judged),
                 csv_only=(parsed_name,) if rows.judged else ())


BUILDERS = {1: table1, 2: table2, 3: table3, 4: table4, 7: table7}


def build_tables(runs_dir: str | Path = DEFAULT_RUNS_DIR, paper_dir: str | Path | None = DEFAULT_PAPER_DIR,
                 tables: Iterable[int] = TABLES, mode: str = "auto", jobs: dict[int, list[Job]] | None = None,
                 options: Options = Options()) -> list[Table]:
    """Every requested table. ``jobs``: the preset jobs per table (``presets.table_jobs``); without
    them each table takes the newest run per (dataset, system, k, answerer), as a quick look."""
    tidy = scan_runs(runs_dir)
    paper = load_paper(paper_dir)
    out = []
    for number in tables:
        if number not in BUILDERS:
            raise ValueError(f"unknown table {number}; choose from {sorted(BUILDERS)}")
        if jobs is not None and number in jobs:
            chosen = select_runs(tidy, jobs[number], options)
            out.append(BUILDERS[number](chosen.tidy, paper, mode=mode, notes=chosen.notes, labels=chosen.labels))
        else:
            out.append(BUILDERS[number](latest_runs(tidy), paper, mode=mode))
    return out


def write_tables(tables: Sequence[Table], out_dir: str | Path = DEFAULT_OUT_DIR) -> list[Path]:
    """``<key>.md`` and ``<key>.csv`` per table (plus ``<key>_paper.csv`` for the paper's
    reference table) and ``tables.md`` with all of them.

    Every file is written to a temporary name first and all are renamed together at the end
    (:class:`~harness.safe_write.StagedWrites`): a kill or a full disk while writing leaves the
    previous set of tables whole -- never a mix of new and old, never an empty table."""
    out_dir = Path(out_dir)
    with StagedWrites() as staged:
        for table in tables:
            staged.write(out_dir / f"{table.key}.md", table.markdown())
            staged.write(out_dir / f"{table.key}.csv", table.frame.to_csv(index=False))
            if table.paper is not None and not table.paper.empty:
                staged.write(out_dir / f"{table.key}_paper.csv", table.paper.to_csv(index=False))
        staged.write(out_dir / "tables.md", "\n".join(t.markdown() for t in tables))
        written = staged.paths
    return written
