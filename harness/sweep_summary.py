"""What a ``-m`` sweep prints at its end: one row per job, and a dry run's grand total.

Each job leaves a small pointer file (``sweep_job.json``) in its Hydra job folder: its overrides,
its run folder (absent for a dry run or a failed job) and, for ``estimate=true``, its dollars and
calls. The Hydra callback in run.py gathers the pointers of a sweep and hands them here; this
module is plain Python so it can be tested on real run folders.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.safe_write import atomic_write
from judges.metrics.registry import SWEEP_COLUMNS, by_stage

POINTER_NAME = "sweep_job.json"


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


def sweep_table(run_folders: list[str | Path], labels: list[str] | None = None) -> str:
    """One markdown row per run folder: its label (the job's overrides), n, the headline retrieval
    metrics of the overall row and the judge metric when the run has one; a folder without
    ``metrics.json`` gets an empty row that says so."""
    labels = labels if labels is not None else [Path(p).name for p in run_folders]
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
        for key in (metric.name for metric in by_stage("judge")):
            if key in overall:
                row[key] = overall[key]
                if key not in judge_seen:
                    judge_seen.append(key)
        row["run folder"] = str(folder)
        rows.append(row)
    columns = ["job", "n", *SWEEP_COLUMNS, *judge_seen, "run folder"]
    if any("note" in row for row in rows):
        columns.append("note")
    import pandas as pd  # only sweeps print this table; a single run need not import pandas

    frame = pd.DataFrame(rows, dtype=object).reindex(columns=columns)
    frame = frame.astype(object).where(frame.notna(), None)  # blank cells, not "nan"; n stays an integer
    return frame.to_markdown(index=False, floatfmt=".3f", missingval="")


def pointers_table(pointers: list[JobPointer]) -> str | None:
    """The sweep table of the jobs that wrote a run folder (None when no job did)."""
    done = [p for p in pointers if p.run_folder]
    if not done:
        return None
    return sweep_table([p.run_folder for p in done], [" ".join(p.overrides) for p in done])


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


def sweep_report(sweep_dir: str | Path) -> str:
    """Everything printed at the end of a sweep (may be empty)."""
    pointers = read_pointers(sweep_dir)
    parts = []
    table = pointers_table(pointers)
    if table:
        parts.append(f"Sweep of {len(pointers)} job(s), {sweep_dir}:\n\n{table}")
    failed = [p for p in pointers if p.exit_code not in (0, None)]
    if failed:
        parts.append("failed jobs: " + "; ".join(f"{' '.join(p.overrides) or '(defaults)'} (exit {p.exit_code})" for p in failed))
    total = grand_total(pointers)
    if total:
        parts.append(total)
    return "\n\n".join(parts)
