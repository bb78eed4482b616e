"""What a ``-m`` sweep prints at its end: one row per job, and a dry run's grand total.

Each job leaves a small pointer file (``sweep_job.json``) in its Hydra job folder: its overrides,
its run folder (absent for a dry run or a failed job) and, for ``estimate=true``, its dollars and
calls. The Hydra callback in run.py gathers the pointers of a sweep and hands them here; this
module is plain Python so it can be tested on real run folders.

The console gets the table fitted to ``CONSOLE_WIDTH`` characters, as a run's table is
(harness/console_table.py): each job is named by the overrides that set it apart (those every job
shares are printed once above; labels too long for the table are numbered and listed under it), its
run folder is left out and the headline metrics are kept as far as they fit. The full table (every
override, every metric column, the run folders) is written to the sweep folder's ``summary.md``;
``print=full`` prints it.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.console_table import CONSOLE_WIDTH
from harness.safe_write import atomic_write
from judges.metrics.registry import SWEEP_COLUMNS, by_stage

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
    import pandas as pd  # only sweeps print this table; a single run need not import pandas

    frame = pd.DataFrame(rows, dtype=object).reindex(columns=columns)
    frame = frame.astype(object).where(frame.notna(), None)  # blank cells, not "nan"; n stays an integer
    return frame, judge_seen


def _markdown(frame: Any) -> str:
    return frame.to_markdown(index=False, floatfmt=".3f", missingval="")


def _width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _wrapped(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width=width, subsequent_indent="  ", break_on_hyphens=False))


def sweep_table(run_folders: list[str | Path], labels: list[str] | None = None) -> str:
    """One markdown row per run folder: its label (the job's overrides), n, the headline retrieval
    metrics of the overall row and the judge metric when the run has one; a folder without
    ``metrics.json`` gets an empty row that says so."""
    frame, _ = _sweep_frame(run_folders, labels)
    return _markdown(frame)


def _fit_columns(frame: Any, candidates: Sequence[str], width: int) -> list[str]:
    """job, n and a note column, then each candidate that keeps the table within ``width``."""
    base = ["job", "n", *(["note"] if "note" in frame.columns else [])]
    kept: list[str] = []
    for column in candidates:
        trial = [c for c in frame.columns if c in base or c in kept or c == column]
        if _width(_markdown(frame[trial])) <= width:
            kept.append(column)
    return [c for c in frame.columns if c in base or c in kept]


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
    inline, by_number = _fit_columns(frame, candidates, width), _fit_columns(numbered, candidates, width)
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


def pointers_table(pointers: list[JobPointer]) -> str | None:
    """The full sweep table of the jobs that wrote a run folder (None when no job did)."""
    done = [p for p in pointers if p.run_folder]
    if not done:
        return None
    return sweep_table([p.run_folder for p in done], [" ".join(p.overrides) for p in done])


def fitted_pointers_table(pointers: list[JobPointer], width: int = CONSOLE_WIDTH) -> str | None:
    """The console's sweep table of the jobs that wrote a run folder, the overrides they share
    above it (None when no job wrote one)."""
    done = [p for p in pointers if p.run_folder]
    if not done:
        return None
    labels, common = job_labels([p.overrides for p in done])
    table = fitted_sweep_table([p.run_folder for p in done], labels, width)
    if not common:
        return table
    return _wrapped("every job: " + " ".join(common), width) + "\n\n" + table


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
    """Everything printed at the end of a sweep (may be empty). The full table is written to the
    sweep folder's ``summary.md``; the console shows it fitted to ``width`` unless ``print_mode``
    is ``full``."""
    pointers = read_pointers(sweep_dir)
    parts = []
    full = pointers_table(pointers)
    if full:
        summary = Path(sweep_dir) / SUMMARY_NAME
        atomic_write(summary, f"Sweep of {len(pointers)} job(s), {sweep_dir}\n\n{full}\n")
        if print_mode == "full":
            parts.append(f"Sweep of {len(pointers)} job(s), {sweep_dir}:\n\n{full}")
        else:
            fitted = fitted_pointers_table(pointers, width)
            parts.append(f"{_wrapped(f'Sweep of {len(pointers)} job(s), {sweep_dir}:', width)}\n\n{fitted}\n"
                         + _wrapped(f"(the full table, with every override and run folder: {summary}, "
                                    f"or print=full)", width))
    failed = [p for p in pointers if p.exit_code not in (0, None)]
    if failed:
        parts.append(_wrapped("failed jobs: " + "; ".join(
            f"{' '.join(p.overrides) or '(defaults)'} (exit {p.exit_code})" for p in failed), width))
    total = grand_total(pointers)
    if total:
        parts.append(total)
    return "\n\n".join(parts)
