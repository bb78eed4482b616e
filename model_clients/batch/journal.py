"""Which provider batches were submitted, kept in the LLM cache's own sqlite file.

A batch id is written the moment the provider accepts it, with its keys (and the audit fields of
each key's cache entry), so a run killed while polling collects its batches instead of paying twice.
Two tables beside the cache's ``kv``: ``batch_jobs`` and ``batch_lines``; no answer is kept here.
``python run.py batch=status`` lists the pending ones (:func:`status_report`) without writing the file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tabulate import tabulate

from model_clients.kvstore import naming_full_disk

OPEN = "pending"  # submitted, not yet collected
DONE = "done"  # collected (or every key it holds was found cached)
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS batch_jobs (
        batch_id TEXT PRIMARY KEY, provider TEXT NOT NULL, endpoint TEXT NOT NULL, model TEXT NOT NULL,
        lines INTEGER NOT NULL, attempt INTEGER NOT NULL, submitted_at TEXT NOT NULL,
        status TEXT NOT NULL, provider_status TEXT NOT NULL DEFAULT '')""",
    """CREATE TABLE IF NOT EXISTS batch_lines (
        batch_id TEXT NOT NULL, key TEXT NOT NULL, template_hash TEXT NOT NULL, run_index INTEGER NOT NULL,
        PRIMARY KEY (batch_id, key))""",
    "CREATE INDEX IF NOT EXISTS batch_lines_by_key ON batch_lines (key)",
)
_OPEN_JOBS = "SELECT * FROM batch_jobs WHERE status = ?"
_ORDER = " ORDER BY submitted_at, batch_id"


@dataclass(frozen=True)
class JournalLine:
    """One line of a batch: its cache key and what the cache entry records of its request."""

    key: str
    template_hash: str
    run_index: int


@dataclass(frozen=True)
class BatchJob:
    """One submitted batch. ``attempt`` 0: a first submission, 1: the one retry of failed lines."""

    batch_id: str
    provider: str
    endpoint: str
    model: str
    lines: int
    attempt: int
    submitted_at: str
    status: str
    provider_status: str = ""


class BatchJournal:
    """The ``batch_jobs`` / ``batch_lines`` tables of one sqlite file (the LLM cache's)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for statement in _SCHEMA:
            self._write(statement)

    def _write(self, sql: str, args: Sequence[Any] = (), many: Sequence[tuple[str, Sequence[Any]]] = ()) -> None:
        """One committed transaction: ``sql`` with ``args``, then each ``(sql, rows)`` of ``many``."""
        with naming_full_disk(self.path), closing(sqlite3.connect(self.path, timeout=60.0)) as conn, conn:
            conn.execute(sql, args)
            for statement, rows in many:
                conn.executemany(statement, rows)

    def _read(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(self.path, timeout=60.0)) as conn:
            return conn.execute(sql, args).fetchall()

    def record(self, job: BatchJob, lines: Sequence[JournalLine]) -> None:
        """Keep a batch the provider accepted, with its lines, in one committed transaction."""
        rows = [(job.batch_id, line.key, line.template_hash, line.run_index) for line in lines]
        self._write("INSERT OR REPLACE INTO batch_jobs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (job.batch_id, job.provider, job.endpoint, job.model, job.lines, job.attempt,
                     job.submitted_at, job.status, job.provider_status),
                    [("INSERT OR REPLACE INTO batch_lines VALUES (?, ?, ?, ?)", rows)])

    def set_status(self, batch_id: str, status: str, provider_status: str) -> None:
        self._write("UPDATE batch_jobs SET status = ?, provider_status = ? WHERE batch_id = ?",
                    (status, provider_status, batch_id))

    def open_jobs(self, provider: str | None = None, endpoint: str | None = None,
                  model: str | None = None) -> list[BatchJob]:
        """Batches not yet collected (all of them, or those of one provider, endpoint and model)."""
        query, args = _OPEN_JOBS, [OPEN]
        for column, value in (("provider", provider), ("endpoint", endpoint), ("model", model)):
            if value is not None:
                query += f" AND {column} = ?"
                args.append(value)
        return [BatchJob(*row) for row in self._read(query + _ORDER, args)]

    def lines_of(self, batch_id: str) -> list[JournalLine]:
        rows = self._read("SELECT key, template_hash, run_index FROM batch_lines WHERE batch_id = ? ORDER BY rowid",
                          (batch_id,))
        return [JournalLine(key, template_hash, int(run_index)) for key, template_hash, run_index in rows]


def now_utc() -> str:
    """A submission time as the journal keeps it (UTC, seconds)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def pending_in(path: str | Path) -> list[BatchJob]:
    """The batches of a cache file not yet collected, read without writing (none: no file, or no
    batch ever recorded in it)."""
    path = Path(path)
    if not path.is_file():
        return []
    with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=60.0)) as conn:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'batch_jobs'").fetchone() is None:
            return []
        return [BatchJob(*row) for row in conn.execute(_OPEN_JOBS + _ORDER, (OPEN,)).fetchall()]


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
