"""``python run.py batch=status``: the batches submitted and not yet collected, from the LLM cache.

One row a batch (id, provider, model, lines, submitted, status), at most 118 characters a line
(the console's 120); read only (the cache file is not written). A run with ``batch=true`` over the
same keys waits for these batches and collects them instead of submitting again.
"""

from __future__ import annotations

from pathlib import Path

from model_clients.batch.journal import BatchJob, pending_in

__all__ = ["status_report"]

# (header, width, right-aligned): 6 columns and 5 separating spaces make 118 characters
COLUMNS = (("batch id", 40, False), ("provider", 9, False), ("model", 24, False), ("lines", 7, True),
           ("submitted (UTC)", 19, False), ("status", 14, False))


def _cell(text: str, width: int, right: bool) -> str:
    if len(text) > width:
        text = text[: width - 3] + "..."
    return text.rjust(width) if right else text.ljust(width)


def _row(values: tuple[str, ...]) -> str:
    return " ".join(_cell(value, width, right) for value, (_, width, right) in zip(values, COLUMNS)).rstrip()


def _status(job: BatchJob) -> str:
    return f"{job.status}, retry" if job.attempt else job.status


def status_report(llm_cache: Path) -> str:
    """The table of pending batches recorded in ``llm_cache`` (a line saying none when empty)."""
    jobs = pending_in(llm_cache)
    if not jobs:
        return f"no pending batch recorded in {llm_cache}"
    lines = [f"{len(jobs)} pending batch(es) recorded in {llm_cache}:",
             _row(tuple(header for header, _, _ in COLUMNS))]
    lines += [_row((job.batch_id, job.provider, job.model, f"{job.lines:,}", job.submitted_at, _status(job)))
              for job in jobs]
    return "\n".join(lines)
