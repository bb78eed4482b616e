"""What a ``-m`` sweep prints at its end: one row per job, and a dry run's grand total.

Each job leaves ``sweep_job.json`` in its Hydra job folder; run.py's callback hands the sweep here.
The console table is fitted to ``CONSOLE_WIDTH`` as a run's is (jobs named by the overrides that set
them apart); the full table (every override, metric and run folder) goes to the sweep's ``summary.md``.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judges.aggregate import CONSOLE_WIDTH, fit_columns, text_width as _width
from harness.safe_write import atomic_write
from judges.aggregate import format_table
from judges.metrics.ranking import SWEEP_COLUMNS, by_stage

POINTER_NAME = "sweep_job.json"
SUMMARY_NAME = "summary.md"  # the full sweep table, in the sweep folder


@dataclass
class JobPointer:
    """What one job of a sweep left for the end-of-sweep summary."""

    overrides: list[str]
    run_folder: str | None = None
    exit_code: int = 0
    estimate_usd: float | None = None  # None: not a dry run, or a price is unknown
    estimate_calls: int | None = None
    estimate_priced: bool = True  # False when some price was unknown
    estimate_live_usd: float | None = None  # with batch=true: the same calls at the live tier (None: no batch)
    extra: dict[str, Any] = field(default_factory=dict)


def write_pointer(path: str | Path, pointer: JobPointer) -> None:
    atomic_write(path, json.dumps(pointer.__dict__, indent=2, sort_keys=True))


def read_pointers(sweep_dir: str | Path) -> list[JobPointer]:
    """The pointers under a sweep folder, in job order (``<sweep>/<job num>/sweep_job.json``)."""
    found = []
    for path in Path(sweep_dir).glob(f"*/{POINTER_NAME}"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        order = int(path.parent.name) if path.parent.name.isdigit() else math.inf
        found.append((order, str(path), JobPointer(**data)))
    return [pointer for _, _, pointer in sorted(found, key=lambda item: (item[0], item[1]))]


def _overall(run_folder: str | Path) -> dict[str, Any] | None:
    try:
        metrics = json.loads((Path(run_folder) / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return metrics.get("summary", {}).get("overall")


def _sweep_frame(run_folders: Sequence[str | Path], labels: Sequence[str] | None) -> tuple[Any, list[str]]:
    """The sweep table as a DataFrame (blank cells as None), and its judge columns."""
    labels = list(labels) if labels is not None else [Path(p).name for p in run_folders]
    rows = []
    judge_seen: list[str] = []
    for label, folder in zip(labels, run_folders):
        overall = _overall(folder)
        row: dict[str, Any] = {"job": label or "(defaults)"}
        if overall is None:
            row["note"] = "no metrics.json"
            rows.append(row)
            continue
        row["n"] = overall.get("n")
        for key in SWEEP_COLUMNS:
            row[key] = overall.get(key)
        for name in (metric.name for metric in by_stage("judge")):
            for key in (f"{name}_paper", name):  # the paper-comparable figure first, then the parsed-only mean
                if key in overall:
                    row[key] = overall[key]
                    if key not in judge_seen:
                        judge_seen.append(key)
        row["run folder"] = str(folder)
        rows.append(row)
    columns = ["job", "n", *SWEEP_COLUMNS, *judge_seen, "run folder"]
    if any("note" in row for row in rows):
        columns.append("note")
    frame = pd.DataFrame(rows, dtype=object).reindex(columns=columns)
    frame = frame.astype(object).where(frame.notna(), None)  # blank cells, not "nan"; n stays an integer
    return frame, judge_seen


def _markdown(frame: Any) -> str:
    return format_table(frame, index=False, header_pad=2)


def _wrapped(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width=width, subsequent_indent="  ", break_on_hyphens=False))


def sweep_table(run_folders: list[str | Path], labels: list[str] | None = None) -> str:
    """One row per run folder (a folder without ``metrics.json`` says so): its label, n, the overall
    row's headline retrieval and judge metrics."""
    return _markdown(_sweep_frame(run_folders, labels)[0])


def fitted_sweep_table(run_folders: list[str | Path], labels: list[str], width: int = CONSOLE_WIDTH) -> str:
    """The sweep table in at most ``width`` characters a line, without the run folders: the judge
    columns, then the retrieval columns, are kept while the table fits. When the labels would cost a
    column, the rows are numbered and each number's label is listed under the table."""
    frame, judge_seen = _sweep_frame(run_folders, labels)
    frame = frame.drop(columns=["run folder"])
    # The console prints the paper-comparable figure (``<metric>_paper``: an unparsable grade or a
    # failed call counts 0, as the tables print it), not the parsed-only mean, where the run has it.
    shown = [c for c in judge_seen if f"{c}_paper" not in judge_seen]
    frame = frame.drop(columns=[c for c in judge_seen if c not in shown])
    candidates = [*shown, *SWEEP_COLUMNS]
    numbered = frame.assign(job=[str(number) for number in range(1, len(frame) + 1)])
    base = ["job", "n", *(["note"] if "note" in frame.columns else [])]
    inline, by_number = (fit_columns(f, base, candidates, width, _markdown) for f in (frame, numbered))
    if len(inline) >= len(by_number) and _width(_markdown(frame[inline])) <= width:
        return _markdown(frame[inline])
    legend = [_wrapped(f"{number}: {label}", width) for number, label in enumerate(frame["job"], start=1)]
    return "\n".join([_markdown(numbered[by_number]), *legend])


def job_labels(overrides: Sequence[Sequence[str]]) -> tuple[list[str], list[str]]:
    """Each job's overrides less those every job shares, and the shared ones (none for one job)."""
    if len(overrides) < 2:
        return [" ".join(job) for job in overrides], []
    common = [item for item in overrides[0] if all(item in job for job in overrides[1:])]
    return [" ".join(item for item in job if item not in common) for job in overrides], common


def grand_total(pointers: list[JobPointer]) -> str | None:
    """A dry-run sweep's total: dollars and calls over every job that printed an estimate."""
    dry = [p for p in pointers if p.estimate_calls is not None]
    if not dry:
        return None
    calls = sum(p.estimate_calls or 0 for p in dry)
    unpriced = [p for p in dry if not p.estimate_priced or p.estimate_usd is None]
    known = sum(p.estimate_usd or 0.0 for p in dry)
    shown = f"${known:.4f}" if known < 1 else f"${known:,.2f}"
    dollars = shown if not unpriced else f"at least {shown} ({len(unpriced)} job(s) with an unknown price)"
    line = f"sweep total over {len(dry)} dry-run job(s): {calls:,} calls, {dollars}"
    if any(p.estimate_live_usd is not None for p in dry):
        live = sum(p.estimate_live_usd if p.estimate_live_usd is not None else (p.estimate_usd or 0.0) for p in dry)
        line += f" by batch where set (all live: ${live:,.2f})"
    return line


def sweep_report(sweep_dir: str | Path, print_mode: str = "headline", width: int = CONSOLE_WIDTH) -> str:
    """Everything printed at the end of a sweep (may be empty); writes the full table to ``summary.md``."""
    pointers = read_pointers(sweep_dir)
    done = [p for p in pointers if p.run_folder]
    parts = []
    if done:
        full = sweep_table([p.run_folder for p in done], [" ".join(p.overrides) for p in done])
        summary = Path(sweep_dir) / SUMMARY_NAME
        atomic_write(summary, f"Sweep of {len(pointers)} job(s), {sweep_dir}\n\n{full}\n")
        if print_mode == "full":
            parts.append(f"Sweep of {len(pointers)} job(s), {sweep_dir}:\n\n{full}")
        else:
            labels, common = job_labels([p.overrides for p in done])
            fitted = fitted_sweep_table([p.run_folder for p in done], labels, width)
            if common:
                fitted = _wrapped("every job: " + " ".join(common), width) + "\n\n" + fitted
            parts.append(f"{_wrapped(f'Sweep of {len(pointers)} job(s), {sweep_dir}:', width)}\n\n{fitted}\n"
                         + _wrapped(f"(the full table, with every override and run folder: {summary}, "
                                    f"or print=full)", width))
    failed = [p for p in pointers if p.exit_code not in (0, None)]
    if failed:
        parts.append(_wrapped("failed jobs: " + "; ".join(
            f"{' '.join(p.overrides) or '(defaults)'} (exit {p.exit_code})" for p in failed), width))
    total = grand_total(pointers)
    return "\n\n".join([*parts, *([total] if total else [])])
