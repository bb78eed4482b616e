"""A small dated conversation shared by the Mem0 and Zep adapter tests."""

from __future__ import annotations

import re
from datetime import datetime

from memplusplus.types import Document

TURNS = [
    ("Caroline", "I went to the LGBTQ support group with Melanie yesterday.", datetime(2023, 5, 8, 13, 56)),
    ("Melanie", "I painted a sunrise for Caroline last week.", datetime(2023, 5, 8, 14, 1)),
    ("Caroline", "I am researching adoption agencies in Boston.", datetime(2023, 5, 25, 9, 30)),
    ("Melanie", "Oscar and I went camping at Lake Tahoe.", datetime(2023, 6, 9, 18, 0)),
]


def conversation() -> list[Document]:
    return [
        Document(f"D1:{i}", f"[{when:%I:%M %p on %d %B, %Y}] {who}: {text}", who, when, "session_1")
        for i, (who, text, when) in enumerate(TURNS)
    ]


def names_in(text: str) -> list[str]:
    """Capitalised words of a turn after its ``[date]`` header (the fixtures' stand-in for entity extraction)."""
    said = re.sub(r"^\s*\[[^\]]*\]", "", text)
    return list(dict.fromkeys(w for w in re.findall(r"\b[A-Z][a-z]+\b", said)))
