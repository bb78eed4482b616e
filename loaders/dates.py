"""Locale-independent date parsing for the formats the benchmarks use.

Each parser raises ``ValueError`` on bad input; loaders turn that into a DatasetError that names
the file, record and field.
"""

from __future__ import annotations

import re
from datetime import date, datetime

_MONTH_NAMES = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]
MONTHS: dict[str, int] = {name: i for i, name in enumerate(_MONTH_NAMES, start=1)}
MONTHS.update({name[:3]: i for i, name in enumerate(_MONTH_NAMES, start=1)})
MONTHS["sept"] = 9

_MONTH_RE = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY_RE = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR_RE = r"(?P<year>\d{4})"

TEXT_DATE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![\d-])(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})(?![\d-])"),
    re.compile(rf"\b{_MONTH_RE}\s+{_DAY_RE},?\s+{_YEAR_RE}\b", re.IGNORECASE),
    re.compile(rf"\b{_DAY_RE}\s+{_MONTH_RE},?\s+{_YEAR_RE}\b", re.IGNORECASE),
)

_LOCOMO_RE = re.compile(
    rf"^\s*(?P<hour>\d{{1,2}}):(?P<minute>\d{{2}})\s*(?P<ampm>am|pm)\s+on\s+{_DAY_RE}\s+{_MONTH_RE},?\s+{_YEAR_RE}\s*$",
    re.IGNORECASE,
)
_LONGMEMEVAL_RE = re.compile(
    r"^\s*(?P<year>\d{4})/(?P<month>\d{1,2})/(?P<day>\d{1,2})\s*(?:\([A-Za-z]+\))?\s*"
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*$"
)


MAX_QUOTED = 200  # an error message quotes at most this many characters of a bad value


def quote(value: object) -> str:
    """``repr(value)`` cut to about ``MAX_QUOTED`` characters (a bad field may be megabytes long)."""
    text = repr(value)
    return text if len(text) <= MAX_QUOTED else f"{text[:MAX_QUOTED]}... ({len(text):,} characters)"


def _month_number(token: str) -> int:
    if token.isdigit():
        return int(token)
    return MONTHS[token.lower().rstrip(".")]


def _date_from_match(match: re.Match[str]) -> date:
    return date(int(match["year"]), _month_number(match["month"]), int(match["day"]))


def parse_iso_date(value: str) -> date:
    """'2023-03-12' -> date(2023, 3, 12)."""
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        raise ValueError(f"expected a YYYY-MM-DD date, got {quote(value)}")
    return date.fromisoformat(value.strip())


def find_date_in_text(text: str) -> date | None:
    """The first calendar date written in ``text`` (ISO, 'April 2, 2023', '2 April 2023', 'Apr 2, 2023').

    Returns None when the text holds no date; raises ValueError when the first one is impossible
    (e.g. '2023-02-30').
    """
    matches = [m for pattern in TEXT_DATE_PATTERNS for m in pattern.finditer(text)]
    if not matches:
        return None
    first = min(matches, key=lambda m: m.start())
    try:
        return _date_from_match(first)
    except ValueError as exc:
        raise ValueError(f"impossible date {quote(first.group(0))}: {exc}") from None


def parse_locomo_datetime(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> datetime(2023, 5, 8, 13, 56)."""
    match = _LOCOMO_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"expected a date like '1:56 pm on 8 May, 2023', got {quote(value)}")
    hour = int(match["hour"])
    if not 1 <= hour <= 12:
        raise ValueError(f"hour {hour} is not a 12-hour clock value in {quote(value)}")
    hour = hour % 12 + (12 if match["ampm"].lower() == "pm" else 0)
    return datetime.combine(_date_from_match(match), datetime.min.time()).replace(
        hour=hour, minute=int(match["minute"])
    )


def parse_longmemeval_datetime(value: str) -> datetime:
    """'2023/05/30 (Tue) 23:40' -> datetime(2023, 5, 30, 23, 40); the weekday is not checked."""
    match = _LONGMEMEVAL_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"expected a date like '2023/05/30 (Tue) 23:40', got {quote(value)}")
    return datetime(
        int(match["year"]), int(match["month"]), int(match["day"]), int(match["hour"]), int(match["minute"])
    )
