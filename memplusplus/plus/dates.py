"""Date-aware scope: a leg ranking the in-scope rows dated in or near a day or period the question
names, nearest first (ties by fused score). Recognised: ISO days, days and months by name (with or
without a year: then any year), and, from the as-of day, yesterday / today / N days, weeks or
months ago / last week, weekend or month. The as-of rule is untouched."""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import numpy as np

from memplusplus.store import RowStore

MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?"
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10}

_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.IGNORECASE)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+(\d{{4}}))?", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b{_MONTH}\s*,?\s+(\d{{4}})\b", re.IGNORECASE)
_IN_MONTH = re.compile(rf"\b(?:in|during|of|since|before|after|early|late|mid)[\s-]+{_MONTH}\b", re.IGNORECASE)
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(day|week|month)s?\s+ago\b", re.IGNORECASE)
_LAST = re.compile(r"\b(yesterday|today|last\s+(?:week|weekend|month))\b", re.IGNORECASE)


@dataclass(frozen=True)
class Period:
    """A named stretch of days; ``year`` None: the same month and days in any year."""

    month_start: tuple[int, int, int]  # (year or 0, month, day)
    month_end: tuple[int, int, int]

    def bounds(self, year: int) -> tuple[date, date]:
        y0, m0, d0 = self.month_start
        y1, m1, d1 = self.month_end
        return date(y0 or year, m0, d0), date(y1 or year, m1, d1)

    @property
    def yearless(self) -> bool:
        return self.month_start[0] == 0


def _day(year: int, month: int, day: int) -> Period | None:
    try:
        date(year or 2000, month, day)
    except ValueError:
        return None
    return Period((year, month, day), (year, month, day))


def _month(year: int, month: int) -> Period:
    last = calendar.monthrange(year or 2000, month)[1]
    return Period((year, month, 1), (year, month, last))


def _span(start: date, end: date) -> Period:
    return Period((start.year, start.month, start.day), (end.year, end.month, end.day))


def named_periods(question: str, as_of: date | datetime | None = None) -> list[Period]:
    """Every day or period ``question`` names (relative ones only with an as-of day)."""
    found: list[Period] = []
    taken: list[tuple[int, int]] = []

    def free(match: re.Match[str]) -> bool:
        return all(match.end() <= a or match.start() >= b for a, b in taken)

    def keep(match: re.Match[str], period: Period | None) -> None:
        if period is not None:
            found.append(period)
            taken.append(match.span())

    for m in _ISO.finditer(question):
        keep(m, _day(int(m[1]), int(m[2]), int(m[3])))
    for m in _MONTH_DAY.finditer(question):
        if free(m):
            keep(m, _day(int(m[3] or 0), MONTHS[m[1].lower()], int(m[2])))
    for m in _DAY_MONTH.finditer(question):
        if free(m):
            keep(m, _day(int(m[3] or 0), MONTHS[m[2].lower()], int(m[1])))
    for m in _MONTH_YEAR.finditer(question):
        if free(m):
            keep(m, _month(int(m[2]), MONTHS[m[1].lower()]))
    for m in _IN_MONTH.finditer(question):
        if free(m):
            keep(m, _month(0, MONTHS[m[1].lower()]))
    if as_of is not None:
        found += _relative(question, as_of.date() if isinstance(as_of, datetime) else as_of)
    return found


def _relative(question: str, today: date) -> list[Period]:
    found: list[Period] = []
    for m in _AGO.finditer(question):
        count = int(m[1]) if m[1].isdigit() else _NUMBERS[m[1].lower()]
        days = {"day": 1, "week": 7, "month": 30}[m[2].lower()] * count
        slack = {"day": 0, "week": 3, "month": 10}[m[2].lower()]
        centre = today - timedelta(days=days)
        found.append(_span(centre - timedelta(days=slack), centre + timedelta(days=slack)))
    for m in _LAST.finditer(question):
        word = " ".join(m[1].lower().split())
        if word == "today":
            found.append(_span(today, today))
        elif word == "yesterday":
            found.append(_span(today - timedelta(days=1), today - timedelta(days=1)))
        elif word == "last month":
            found.append(_span(today - timedelta(days=45), today - timedelta(days=15)))
        else:  # last week / weekend
            found.append(_span(today - timedelta(days=13), today - timedelta(days=1)))
    return found


def distance_days(row_day: date, period: Period) -> int:
    """Days between ``row_day`` and ``period`` (0 inside; a yearless period in the nearest year)."""
    years = (row_day.year - 1, row_day.year, row_day.year + 1) if period.yearless else (0,)
    best: int | None = None
    for year in years:
        try:
            start, end = period.bounds(year)
        except ValueError:  # 29 February in a common year
            continue
        gap = (start - row_day).days if row_day < start else (row_day - end).days if row_day > end else 0
        best = gap if best is None else min(best, gap)
    return 10**9 if best is None else best


def date_leg(
    store: RowStore,
    periods: list[Period],
    scope: np.ndarray,
    window_days: int,
    prior: Mapping[int, float],
    limit: int,
) -> list[int]:
    """In-scope rows dated within ``window_days`` of a period: nearest, then by ``prior``, then later first."""
    if not periods:
        return []
    near: list[tuple[int, float, int]] = []
    for seq in np.flatnonzero(scope).tolist():
        row_date = store.rows[seq].date
        if row_date is None:
            continue
        gap = min(distance_days(row_date.date(), period) for period in periods)
        if gap <= window_days:
            near.append((gap, -prior.get(seq, 0.0), -seq))
    near.sort()
    return [-neg_seq for _, _, neg_seq in near[:limit]]
