"""``python run.py batch=status``: the batches submitted and not yet collected, read from the LLM cache
without writing it; a run with ``batch=true`` over the same keys collects them instead of resubmitting."""

from __future__ import annotations

from pathlib import Path

from tabulate import tabulate

from model_clients.batch.journal import pending_in

# Widest cell of each column: with tabulate's two-space gaps a row stays within the console's 120.
WIDTHS = {"batch id": 40, "provider": 9, "model": 21, "lines": 7, "submitted (UTC)": 19, "status": 14}


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def status_report(llm_cache: Path) -> str:
    """The table of pending batches recorded in ``llm_cache`` (a line saying none when empty)."""
    jobs = pending_in(llm_cache)
    if not jobs:
        return f"no pending batch recorded in {llm_cache}"
    rows = [[_cut(value, width) for value, width in zip(
        (job.batch_id, job.provider, job.model, f"{job.lines:,}", job.submitted_at,
         f"{job.status}, retry" if job.attempt else job.status), WIDTHS.values())] for job in jobs]
    table = tabulate(rows, headers=list(WIDTHS), tablefmt="plain", colalign=("left",) * 3 + ("right",) + ("left",) * 2,
                     disable_numparse=True)
    return f"{len(jobs)} pending batch(es) recorded in {llm_cache}:\n{table}"
