"""The miss split of answered runs as ``explain --misses`` prints it: one table, a row per system and
category, each outcome's share of the questions in %."""

from __future__ import annotations

from pathlib import Path

from harness.cli_options import CliError
from harness.misses import miss_table
from harness.run_data import load_run
from judges.aggregate import format_table


def miss_report(run_dirs: list[Path]) -> list[str]:
    runs = [load_run(folder) for folder in run_dirs]
    answered = [run for run in runs if run.answered]
    if not answered:
        raise CliError("no answered run among these folders: a miss needs an answer and a grade")
    excluded = answered[0].excluded()
    frame = miss_table(((run.system, run.records) for run in answered), answered[0].headline(),
                       exclude_from_overall=excluded)
    frame = frame.set_index("system")
    skipped = [run.system for run in runs if not run.answered]
    lines = ["where each question was lost (% of the questions of the row; right = judged right)", "",
             format_table(frame, floatfmt=".1f")]
    if skipped:
        lines.append(f"retrieval-only runs left out (nothing answered): {', '.join(skipped)}")
    return lines
