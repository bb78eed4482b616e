"""The as-of scope S_theta: which rows a question may see, decided before any ranking."""

from __future__ import annotations

from datetime import date, datetime, time


def end_of_day(as_of: date | datetime) -> datetime:
    """theta: the last instant of the as-of day (a datetime is taken for its day)."""
    day = as_of.date() if isinstance(as_of, datetime) else as_of
    return datetime.combine(day, time.max)


def in_scope(row_date: datetime | None, theta: datetime | None) -> bool:
    """No as-of: everything. Dated query: only rows dated up to theta; undated rows fail."""
    if theta is None:
        return True
    return row_date is not None and row_date <= theta
