"""The as-of scope S_theta: which rows a question may see, decided before any ranking."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

import numpy as np

_ORIGIN = datetime(1, 1, 1)
_MICROSECOND = timedelta(microseconds=1)
UNDATED = np.iinfo(np.int64).max  # an undated row's key: later than every date, so no dated scope admits it


def date_key(moment: datetime | None) -> int:
    """A naive datetime as int64 microseconds since 0001-01-01 (order-preserving), UNDATED for None."""
    if moment is None:
        return int(UNDATED)
    return (moment.replace(tzinfo=None) - _ORIGIN) // _MICROSECOND


def end_of_day(as_of: date | datetime) -> datetime:
    """theta: the last instant of the as-of day (a datetime is taken for its day)."""
    day = as_of.date() if isinstance(as_of, datetime) else as_of
    return datetime.combine(day, time.max)


def in_scope(row_date: datetime | None, theta: datetime | None) -> bool:
    """No as-of: everything. Dated query: only rows dated up to theta; undated rows fail."""
    if theta is None:
        return True
    return row_date is not None and row_date <= theta
