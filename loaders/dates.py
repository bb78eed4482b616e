"""Locale-independent parsing of the benchmarks' date formats; each parser raises ValueError on bad input."""

from __future__ import annotations

import re
from datetime import date, datetime

_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
MONTHS: dict[str, int] = {**{n: i for i, n in enumerate(_MONTH_NAMES, 1)},
                          **{n[:3]: i for i, n in enumerate(_MONTH_NAMES, 1)}, "sept": 9}
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
TEXT_DATE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![\d-])(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})(?![\d-])"),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_DAY}\s+{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
)
_LOCOMO = re.compile(rf"^\s*(?P<hour>\d{{1,2}}):(?P<minute>\d{{2}})\s*(?P<ampm>am|pm)\s+on\s+{_DAY}\s+{_MONTH},?\s+"
                     rf"{_YEAR}\s*$", re.IGNORECASE)
_LONGMEMEVAL = re.compile(r"^\s*(?P<year>\d{4})/(?P<month>\d{1,2})/(?P<day>\d{1,2})\s*(?:\([A-Za-z]+\))?\s*"
                          r"(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*$")
MAX_QUOTED = 200  # an error quotes at most this many characters of a bad value (one may be megabytes long)


def quote(value: object) -> str:
    text = repr(value)
    return text if len(text) <= MAX_QUOTED else f"{text[:MAX_QUOTED]}... ({len(text):,} characters)"


def _date(match: re.Match[str]) -> date:
    month = match["month"]
    return date(int(match["year"]), int(month) if month.isdigit() else MONTHS[month.lower().rstrip(".")],
                int(match["day"]))


def parse_iso_date(value: str) -> date:
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        raise ValueError(f"expected a YYYY-MM-DD date, got {quote(value)}")
    return date.fromisoformat(value.strip())


def find_date_in_text(text: str) -> date | None:
    """The first date written in ``text`` (ISO, 'April 2, 2023', '2 April 2023', 'Apr 2, 2023'), or None;
    ValueError when it is impossible ('2023-02-30')."""
    matches = [m for pattern in TEXT_DATE_PATTERNS for m in pattern.finditer(text)]
    if not matches:
        return None
    first = min(matches, key=lambda m: m.start())
    try:
        return _date(first)
    except ValueError as exc:
        raise ValueError(f"impossible date {quote(first.group(0))}: {exc}") from None


def parse_locomo_datetime(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> datetime(2023, 5, 8, 13, 56)."""
    match = _LOCOMO.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"expected a date like '1:56 pm on 8 May, 2023', got {quote(value)}")
    hour = int(match["hour"])
    if not 1 <= hour <= 12:
        raise ValueError(f"hour {hour} is not a 12-hour clock value in {quote(value)}")
    hour = hour % 12 + (12 if match["ampm"].lower() == "pm" else 0)
    return datetime.combine(_date(match), datetime.min.time()).replace(hour=hour, minute=int(match["minute"]))


def parse_longmemeval_datetime(value: str) -> datetime:
    """'2023/05/30 (Tue) 23:40' -> datetime(2023, 5, 30, 23, 40); the weekday is not checked."""
    match = _LONGMEMEVAL.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"expected a date like '2023/05/30 (Tue) 23:40', got {quote(value)}")
    return datetime(*(int(match[k]) for k in ("year", "month", "day", "hour", "minute")))
