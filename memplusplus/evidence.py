"""Evidence rendering: each hit's original text under a header with its date and author."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memplusplus.types import Hit

BLOCK_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class RenderedContext:
    """The full rendered evidence, where each hit's block starts, and the budgeted prefix."""

    full_text: str
    block_starts: dict[str, int]
    budget: int | None

    @property
    def text(self) -> str:
        """What the answerer reads: the first ``budget`` characters (all when no budget)."""
        return self.full_text if self.budget is None else self.full_text[: self.budget]


def format_date(value: datetime | None) -> str:
    if value is None:
        return "undated"
    if value.hour == 0 and value.minute == 0 and value.second == 0:
        return value.strftime("%Y-%m-%d")
    return value.strftime("%Y-%m-%d %H:%M")


def header(hit: Hit) -> str:
    """``[date] author`` for a stored row; nothing for a chunk, whose text carries its own headers."""
    if hit.sources:
        return ""
    author = f" {hit.author}" if hit.author else ""
    return f"[{format_date(hit.date)}]{author}"


def render(hits: Sequence[Hit], budget: int | None = None) -> RenderedContext:
    """Join hits in rank order; ``budget`` is a plain prefix cut in characters, as the answerer reads."""
    parts: list[str] = []
    starts: dict[str, int] = {}
    offset = 0
    for hit in hits:
        head = header(hit)
        block = f"{head}\n{hit.text}" if head else hit.text
        if parts:
            offset += len(BLOCK_SEPARATOR)
        if hit.sources:
            text_start = offset + len(block) - len(hit.text)
            for doc_id, inner in hit.sources:
                starts.setdefault(doc_id, text_start + inner)
        else:
            starts.setdefault(hit.doc_id, offset)
        parts.append(block)
        offset += len(block)
    return RenderedContext(full_text=BLOCK_SEPARATOR.join(parts), block_starts=starts, budget=budget)
