"""The paper's Tables 1-4 from the results store, laid out as the paper prints them.

One row per (answerer, system) under the paper's headers, each cell ``ours (paper)``; how a run differs
from the table's preset is a numbered footnote; runs without an answerer go to a retrieval block of
their own (never under a judge header); the command that would fill the empty judged cells below.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from harness.rescore import CEILING
from harness.safe_write import StagedWrites
from harness.reports.comparable import (
    Footnotes, judged_value, not_comparable_reason, own_wording, pairing_notes, paper_metric, parsed_only_text, run_footnote,
)
from harness.reports.intervals import OVERALL_INTERVAL, TableIntervals, mark_not_significant, shown_metric
from harness.reports.fill import FillPlan, dry_run_cost, fill_commands, missing_jobs
from harness.reports.format import (
    MISSING, NOT_AVAILABLE, Table, fmt, fmt_delta, fmt_mean_std, is_missing, retrieval_title,
)
from harness.reports.ksweep import PARSED_SUFFIX, table7
from harness.reports.labels import (
    CATEGORY_COLUMNS, CATEGORY_TABLES, DATASET_LABELS, FALLBACK_METRICS, HEADLINE, JUDGE_METRICS, TABLE_BENCHMARK, TABLE_DATASET,
    is_ablation, paper_row, system_rank,
)
from harness.reports.paper import (
    DEFAULT_PAPER_DIR, PaperColumn, answerers_in_order, has_paper_row, load_paper, paper_answerers, paper_cell,
    paper_columns, paper_lookup, paper_reference, paper_values,
)
from harness.reports.presets import OUR_BASELINES
from harness.reports.rows import Rows, choose_rows, row_label
from harness.reports.selection import Job, Options, select_runs
from harness.reports.store import DEFAULT_RUNS_DIR, RunView, latest_runs, scan_runs

DEFAULT_OUT_DIR = Path("outputs/tables")  # generated, so untracked (.gitignore covers outputs/); results/paper/ is the tracked reference
TABLES = (1, 2, 3, 4, 7)
OURS_ONLY = "*"  # marks a column the paper does not print
CSV_ONLY = ("run", "settings")


def table_columns(paper: pd.DataFrame, number: int, dataset: str, errata: bool = False) -> list[PaperColumn]:
    """The paper's columns of a per-category table, then ours it does not print (marked ``*``): for
    LoCoMo the adversarial category, for LongMemEval_S the task-averaged row; with ``errata`` (some
    run has ``dataset.errata``) the overall score on sound golds and the ceiling after the overall score."""
    columns = paper_columns(paper, number)
    printed = {(c.category, c.metric) for c in columns}
    suffix = {c.metric: c.header.rsplit(" ", 1)[-1] for c in columns if " " in c.header}
    several = len(JUDGE_METRICS[dataset]) > 1
    for label, category in CATEGORY_COLUMNS[dataset]:
        for metric in JUDGE_METRICS[dataset]:
            if (category, metric) not in printed:
                header = f"{label} {suffix.get(metric, metric)}" if several else label
                columns.append(PaperColumn(header + OURS_ONLY, category, metric, in_paper=False))
    if errata:
        judge = JUDGE_METRICS[dataset][0]
        at = next(i for i, c in enumerate(columns) if c.category == "overall" and c.metric == judge)
        columns[at + 1:at + 1] = [PaperColumn(f"{columns[at].header} sound golds{OURS_ONLY}", "overall", f"{judge}_sound",
                                              in_paper=False),
                                  PaperColumn(f"Ceiling{OURS_ONLY}", "overall", CEILING, in_paper=False)]
    return columns


def _has_errata(tidy: pd.DataFrame, dataset: str) -> bool:
    """Some judged run of ``dataset`` in ``tidy`` was scored on corrected golds (its summary has the ceiling)."""
    return bool(((tidy["dataset"] == dataset) & (tidy["metric"] == CEILING)).any()) if not tidy.empty else False


def _pair(ours: str, paper_text: str | None) -> str:
    """One cell: ``ours (paper)``; ours alone where no paper figure may stand beside it."""
    return ours if paper_text is None else f"{ours} ({paper_text})"


def _pairable(run: Any, prow: str | None, paper: pd.DataFrame, number: int) -> bool:
    return (has_paper_row(paper, number, prow) and not not_comparable_reason(str(run.kind))
            and not own_wording(run.wording))


def _paper_prints(values: dict, prow: str | None, answerer: str) -> bool:
    """Whether the paper prints a row ``prow`` for ``answerer`` in this table."""
    return any(paper_lookup(values, prow, answerer, category, metric) is not None
               for (_row, _answerer, category, metric) in values if _row == prow)


def _systems(runs: list) -> tuple[list[str], dict[str, Any]]:
    """The row names in the systems' table order, and a run of each."""
    any_run = {r.system: r for r in runs}
    return sorted(any_run, key=lambda name: system_rank(next(r.system_name for r in runs if r.system == name))), any_run


def _runs_note(rows: list[tuple[str, str, str]]) -> list[str]:
    """Which run folder each row comes from: (label, answerer, folder)."""
    return ["Runs: " + "; ".join(f"{label} [{answerer}]: {folder}" for label, answerer, folder in rows) + "."] if rows else []


def category_table(tidy: pd.DataFrame, paper: pd.DataFrame, number: int, mode: str = "auto",
                   notes: Sequence[str] = (), differences: dict | None = None, fill: FillPlan | None = None) -> Table:
    """One benchmark per category, laid out as the paper's table (see the module's docstring)."""
    dataset = TABLE_DATASET[number]
    title, judge_detail = TABLE_BENCHMARK[number].table_title
    headline = HEADLINE[dataset]
    view = RunView(tidy)
    rows: Rows = choose_rows(tidy, view, dataset=dataset, mode=mode, keep=lambda s: not is_ablation(s))
    values = paper_values(paper, number)
    columns = table_columns(paper, number, dataset, _has_errata(tidy, dataset))
    differences = differences or {}
    marks = Footnotes()
    runs = list(rows.runs.itertuples())
    judged = {(r.system, r.answerer): r for r in runs if r.run in rows.judged}
    systems, any_run = _systems(runs)
    out: list[dict[str, str]] = []
    origins: list[tuple[str, str, str]] = []
    marked = std_left_out = False
    spans, placed = TableIntervals(), {}
    for answerer in answerers_in_order(paper_answerers(paper, number), (a for _s, a in judged)):
        for system in systems:
            run = judged.get((system, answerer))
            sample = run if run is not None else any_run[system]
            label, prow = row_label(sample, number), paper_row(sample.system_name, number)
            pairable = _pairable(sample, prow, paper, number)
            if run is None:  # the paper's row, nothing of ours under its judge headers
                if not pairable or not _paper_prints(values, prow, answerer):
                    continue
                cells = {c.header: _pair(MISSING, paper_cell(values, prow, answerer, c.category, c.metric))
                         if c.in_paper else MISSING for c in columns}
                out.append({"answerer": answerer, "system": label, **cells, "run": MISSING, "settings": MISSING})
                continue
            footnote = run_footnote(run, differences.get(run.run))
            label += marks.mark([footnote])
            origins.append((label, answerer, run.folder))
            cells, parsed = {}, {}
            for column in columns:
                category, metric = column.category, column.metric
                if metric == headline:
                    cell = judged_value(view, run.run, category, metric, bool(run.all_graded))
                    text, comparable = cell.text(metric), cell.comparable
                    marked |= not comparable
                    std_left_out |= not run.all_graded and not is_missing(view.value(run.run, category, f"{metric}_std"))
                    parsed[column.header + PARSED_SUFFIX] = parsed_only_text(view, run.run, category, metric)
                elif metric == CEILING:  # a property of the golds, not of the run: no interval, no mark
                    cells[column.header] = fmt(view.value(run.run, category, metric), headline)
                    continue
                elif metric == f"{headline}_sound":
                    text, comparable = fmt(view.value(run.run, category, metric), headline), True
                else:
                    text = fmt_mean_std(view.value(run.run, category, metric),
                                        view.value(run.run, category, f"{metric}_std"), metric)
                    comparable = True
                paper_text = paper_cell(values, prow, answerer, category, metric) if (
                    column.in_paper and pairable and comparable) else None
                shown = shown_metric(view, run.run, category, metric, headline)
                cells[column.header] = _pair(text, paper_text) + spans.bounds(run.run, category, shown)
                cell_at = (len(out), run.run, view.value(run.run, category, shown))
                placed.setdefault((column.header, answerer, category, shown), []).append(cell_at)
            out.append({"answerer": answerer, "system": label, **cells, **parsed, "run": run.folder,
                        "settings": footnote or MISSING})
    headers = [c.header for c in columns]
    parsed_columns = [c.header + PARSED_SUFFIX for c in columns if c.metric == headline]
    mark_not_significant(out, placed, spans)
    frame = pd.DataFrame(out, columns=["answerer", "system", *headers, *parsed_columns, *CSV_ONLY])
    frame[parsed_columns] = frame[parsed_columns].astype(object).fillna(MISSING)
    retrieval = _retrieval_block(view, [r for r in runs if r.run not in rows.judged], CATEGORY_COLUMNS[dataset],
                                 number, marks, differences, spans)
    all_notes = [*notes, *rows.notes]
    if rows.judged:
        all_notes += pairing_notes(marked, std_left_out, paper_metric(headline))
    origins += [(row_label(r, number), r.answerer, r.folder) for r in runs if r.run not in rows.judged]
    all_notes += [*TABLE_BENCHMARK[number].table_notes, *_runs_note(origins), *spans.notes()]
    if any(c.metric == CEILING for c in columns):
        all_notes.append(f"Corrected golds (dataset.errata): sound golds = {headline} over the questions whose gold "
                         f"answer the errata leave standing (parsed grades); Ceiling = their share of the graded "
                         f"questions, the best score with every gold counted; {MISSING} for runs without errata.")
    metric_words = " / ".join([paper_metric(headline), *JUDGE_METRICS[dataset][1:]])
    cell_format = (f"Each cell: ours (the paper's figure for the same system and answerer). Ours: {metric_words}; "
                   f"{paper_metric(headline)} is 100/N over every question, a failed or unparsable grade counting 0, "
                   f"as the paper's scripts score. {MISSING}: no figure of ours (no answered run, or none in it); "
                   f"{NOT_AVAILABLE}: the paper prints none; {OURS_ONLY}: a column the paper does not print.")
    return Table(f"table{number}", f"Table {number}: {title}: {judge_detail}", frame, all_notes,
                 paper_reference(paper, number), bool(rows.judged), csv_only=(*parsed_columns, *CSV_ONLY),
                 cell_format=cell_format, footnotes=marks.lines(), retrieval=retrieval,
                 retrieval_title=retrieval_title(FALLBACK_METRICS), fill=fill.lines() if fill else [])


def _retrieval_block(view: RunView, runs: list, columns: Sequence[tuple[str, str]], number: int, marks: Footnotes,
                     differences: dict, spans: TableIntervals) -> pd.DataFrame | None:
    """Our retrieval figures, one row per (system, metric), ``columns`` as (label, category), then the
    overall figure's interval and its ``≈`` mark (``spans``); never under a judge-score header."""
    if not runs:
        return None
    out, placed = [], {}
    for run in runs:
        label = row_label(run, number) + marks.mark([run_footnote(run, differences.get(run.run), judged=False)])
        for metric in FALLBACK_METRICS:
            cells = {}
            for column, category in columns:
                value = view.value(run.run, category, metric)
                cells[column] = fmt_mean_std(value, view.value(run.run, category, f"{metric}_std"), metric)
            cells[OVERALL_INTERVAL] = spans.bounds(run.run, "overall", metric).strip() or MISSING
            if cells[OVERALL_INTERVAL] != MISSING:
                placed.setdefault((OVERALL_INTERVAL, metric, "overall", metric), []).append(
                    (len(out), run.run, view.value(run.run, "overall", metric)))
            out.append({"system": label, "metric": metric, **cells, "run": run.folder})
    mark_not_significant(out, placed, spans)
    return pd.DataFrame(out, columns=["system", "metric", *[c for c, _ in columns], OVERALL_INTERVAL, "run"])


table1, table2, table3 = (partial(category_table, number=number) for number in CATEGORY_TABLES)


def _paper_with_delta(values: dict, prow: str | None, answerer: str, dataset: str, metric: str) -> str:
    printed = paper_lookup(values, prow, answerer, dataset, metric)
    if printed is None:
        return NOT_AVAILABLE
    delta = paper_lookup(values, prow, answerer, dataset, "delta_vs_mempp")
    return printed if delta is None else f"{printed} Δ{delta}"


def table4(tidy: pd.DataFrame, paper: pd.DataFrame, mode: str = "auto", notes: Sequence[str] = (),
           differences: dict | None = None, fill: FillPlan | None = None) -> Table:
    """Ablations: one row per (answerer, system), one column per dataset as the paper prints it; each
    cell our overall and its change from Mem++ (``Δ``), then the paper's in parentheses."""
    view = RunView(tidy)
    rows = choose_rows(tidy, view, dataset=None, mode=mode, keep=lambda s: s == "mempp" or is_ablation(s))
    values = paper_values(paper, 4)
    differences = differences or {}
    marks = Footnotes()
    runs = list(rows.runs.itertuples())
    judged = {(r.system, r.answerer, r.dataset): r for r in runs if r.run in rows.judged}
    systems, any_run = _systems(runs)
    base = {(r.answerer, r.dataset): r for r in runs if r.run in rows.judged and r.system_name == "mempp"}
    headers = {dataset: label for dataset, label in DATASET_LABELS.items()}
    out: list[dict[str, str]] = []
    origins: list[tuple[str, str, str]] = []
    marked = std_left_out = False

    def ours(r: Any, metric: str) -> tuple[float, str, bool]:
        cell = judged_value(view, r.run, "overall", metric, bool(r.all_graded))
        return cell.value, cell.text(metric), cell.comparable

    for answerer in answerers_in_order(paper_answerers(paper, 4), (a for _s, a, _d in judged)):
        for system in systems:
            mine = {d: judged.get((system, answerer, d)) for d in headers}
            sample = next((r for r in mine.values() if r is not None), any_run[system])
            label, prow = row_label(sample, 4), paper_row(sample.system_name, 4)
            pairable = _pairable(sample, prow, paper, 4)
            if all(r is None for r in mine.values()) and not (
                    pairable and any(paper_lookup(values, prow, answerer, d, HEADLINE[d]) for d in headers)):
                continue
            cells, parsed, footnotes, folders = {}, {}, [], []
            for dataset, header in headers.items():
                metric, r = HEADLINE[dataset], mine[dataset]
                paper_text = _paper_with_delta(values, prow, answerer, dataset, metric) if pairable else None
                if r is None:
                    cells[header] = _pair(MISSING, paper_text)
                    parsed[header + PARSED_SUFFIX] = MISSING
                    continue
                value, text, comparable = ours(r, metric)
                ref = base.get((answerer, dataset))
                if r.system_name != "mempp" and ref is not None and not is_missing(value):
                    ref_value, _, ref_comparable = ours(ref, metric)
                    if not is_missing(ref_value) and ref_comparable == comparable:
                        text += f" Δ{fmt_delta(value - ref_value, metric)}"
                marked |= not comparable
                std_left_out |= not r.all_graded and not is_missing(view.value(r.run, "overall", f"{metric}_std"))
                cells[header] = _pair(text, paper_text if comparable else None)
                parsed[header + PARSED_SUFFIX] = parsed_only_text(view, r.run, "overall", metric)
                footnotes.append(run_footnote(r, differences.get(r.run), where=header))
                folders.append(r.folder)
            label += marks.mark(footnotes)
            if folders:
                origins.append((label, answerer, ", ".join(folders)))
            out.append({"answerer": answerer, "system": label, **cells, **parsed,
                        "run": ", ".join(folders) or MISSING, "settings": "; ".join(f for f in footnotes if f) or MISSING})
    parsed_columns = [h + PARSED_SUFFIX for h in headers.values()]
    frame = pd.DataFrame(out, columns=["answerer", "system", *headers.values(), *parsed_columns, *CSV_ONLY])
    retrieval_runs = [r for r in runs if r.run not in rows.judged]
    retrieval = _retrieval_table4(view, retrieval_runs, marks, differences)
    all_notes = [*notes, *rows.notes]
    if rows.judged:
        paper_name = " / ".join(paper_metric(HEADLINE[d]) for d in DATASET_LABELS)
        all_notes += pairing_notes(marked, std_left_out, paper_name)
    origins += [(row_label(r, 4), r.answerer, r.folder) for r in retrieval_runs]
    all_notes += _runs_note(origins)
    cell_format = ("Each cell: ours Δ(change from Mem++ with the same answerer) (the paper's figure and change; "
                   "the paper's ablation used answerer claude-sonnet-4-6). Ours: the overall "
                   f"{' / '.join(paper_metric(HEADLINE[d]) for d in DATASET_LABELS)}, 100/N over every question; "
                   f"{MISSING}: no answered run of ours; {NOT_AVAILABLE}: the paper prints none.")
    return Table("table4", "Table 4: Ablations of Mem++ (mempp vs mempp_*)", frame, all_notes,
                 paper_reference(paper, 4), bool(rows.judged), csv_only=(*parsed_columns, *CSV_ONLY),
                 cell_format=cell_format, footnotes=marks.lines(), retrieval=retrieval,
                 retrieval_title=retrieval_title(FALLBACK_METRICS), fill=fill.lines() if fill else [])


def _retrieval_table4(view: RunView, runs: list, marks: Footnotes, differences: dict) -> pd.DataFrame | None:
    """Table 4's retrieval block: one row per (system, metric), a column per dataset (its overall)."""
    if not runs:
        return None
    out = []
    base = {r.dataset: r for r in runs if r.system_name == "mempp"}
    for system in dict.fromkeys(r.system for r in runs):
        mine = {r.dataset: r for r in runs if r.system == system}
        sample = next(iter(mine.values()))
        label = row_label(sample, 4) + marks.mark(
            [run_footnote(r, differences.get(r.run), judged=False, where=DATASET_LABELS.get(d, d)) for d, r in mine.items()])
        for metric in FALLBACK_METRICS:
            cells = {}
            for dataset, header in DATASET_LABELS.items():
                r = mine.get(dataset)
                value = view.value(r.run, "overall", metric) if r is not None else float("nan")
                text = MISSING if r is None else fmt_mean_std(value, view.value(r.run, "overall", f"{metric}_std"), metric)
                ref = base.get(dataset)
                if r is not None and ref is not None and ref.run != r.run and not is_missing(value):
                    ref_value = view.value(ref.run, "overall", metric)
                    if not is_missing(ref_value):
                        text += f" Δ{fmt_delta(value - ref_value, metric)}"
                cells[header] = text
            out.append({"system": label, "metric": metric, **cells,
                        "run": ", ".join(r.folder for r in mine.values())})
    return pd.DataFrame(out, columns=["system", "metric", *DATASET_LABELS.values(), "run"])


BUILDERS = {1: table1, 2: table2, 3: table3, 4: table4, 7: table7}


def fill_plan(jobs: Sequence[Job], filled: set[int], estimate: bool = False, progress: bool = False) -> FillPlan:
    """The preset jobs (the paper's systems, not our extra baselines) no answered run fills, as commands;
    ``estimate``: with their dry-run dollars, computed here."""
    missing = [job for job in missing_jobs(jobs, filled) if job.system not in OUR_BASELINES]
    cost = dry_run_cost(missing, progress=progress) if estimate and missing else None
    return FillPlan(tuple(fill_commands(missing)), tuple(missing), cost)


def build_tables(runs_dir: str | Path = DEFAULT_RUNS_DIR, paper_dir: str | Path | None = DEFAULT_PAPER_DIR,
                 tables: Iterable[int] = TABLES, mode: str = "auto", jobs: dict[int, list[Job]] | None = None,
                 options: Options = Options(), estimate: bool = False, progress: bool = False) -> list[Table]:
    """Every requested table from the runs its preset ``jobs`` ask for (without: the newest run per
    dataset, system, k and answerer, and no fill command); ``estimate``: price the fill commands."""
    tidy = scan_runs(runs_dir)
    paper = load_paper(paper_dir)
    out = []
    for number in tables:
        if number not in BUILDERS:
            raise ValueError(f"unknown table {number}; choose from {sorted(BUILDERS)}")
        if jobs is not None and number in jobs:
            chosen = select_runs(tidy, jobs[number], options)
            fill = fill_plan(jobs[number], chosen.filled, estimate, progress)
            out.append(BUILDERS[number](chosen.tidy, paper, mode=mode, notes=chosen.notes,
                                        differences=chosen.differences, fill=fill))
        else:
            out.append(BUILDERS[number](latest_runs(tidy), paper, mode=mode))
    return out


def write_tables(tables: Sequence[Table], out_dir: str | Path = DEFAULT_OUT_DIR) -> list[Path]:
    """``<key>.md``, ``<key>.csv`` (``_retrieval.csv``: its retrieval block; ``_paper.csv``: the paper's
    table as published) per table, and ``tables.md``, renamed together at the end (a kill or a full
    disk leaves the previous set whole)."""
    out_dir = Path(out_dir)
    with StagedWrites() as staged:
        for table in tables:
            staged.write(out_dir / f"{table.key}.md", table.markdown())
            staged.write(out_dir / f"{table.key}.csv", table.frame.to_csv(index=False))
            if table.retrieval is not None and not table.retrieval.empty:
                staged.write(out_dir / f"{table.key}_retrieval.csv", table.retrieval.to_csv(index=False))
            if table.paper is not None and not table.paper.empty:
                staged.write(out_dir / f"{table.key}_paper.csv", table.paper.to_csv(index=False))
        staged.write(out_dir / "tables.md", "\n".join(t.markdown() for t in tables))
        written = staged.paths
    return written
