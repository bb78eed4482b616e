"""Evidence rendering (paper §3.4, Appendix B): hits in rank order, each row's text whole.

A row is shown in its ``evidence`` style, set by the loader, never by the dataset's name: under a
``[date] author`` header, or as stored behind its rank number (conversational turns).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_protocol import Hit

BLOCK_SEPARATOR = "\n\n"
# A header's author when the source passes none (OrgMemBench's runner passes none, so the paper's
# Appendix B placeholder is not determinable): the authors' code's fallback for a missing name.
NO_AUTHOR = "unknown"


@dataclass(frozen=True)
class RenderedContext:

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


def header(hit: Hit, placeholder: str | None = None) -> str:
    """``[date] author`` for a stored row (``placeholder`` for no author); nothing for a chunk."""
    if hit.sources:
        return ""
    shown = hit.author or placeholder
    author = f" {shown}" if shown else ""
    return f"[{format_date(hit.date)}]{author}"


def block(hit: Hit, rank: int) -> str:
    """One hit's block at 1-based ``rank``: header and text (paper §3.4, Appendix B), ``N. `` and the
    stored text for "as_stored" turns (the paper does not spell the number's form), a chunk as is."""
    if hit.sources:
        return hit.text
    if hit.evidence == "as_stored":
        return f"{rank}. {hit.text}"
    return f"{header(hit, NO_AUTHOR)}\n{hit.text}"


def render(hits: Sequence[Hit], budget: int | None = None) -> RenderedContext:
    """Hits' blocks in rank order, where each document starts, and ``budget``, a prefix cut in characters."""
    parts: list[str] = []
    starts: dict[str, int] = {}
    offset = 0
    for rank, hit in enumerate(hits, start=1):
        text = block(hit, rank)
        if parts:
            offset += len(BLOCK_SEPARATOR)
        if hit.sources:
            for doc_id, inner in hit.sources:
                starts.setdefault(doc_id, offset + inner)
        else:
            starts.setdefault(hit.doc_id, offset)
        parts.append(text)
        offset += len(text)
    return RenderedContext(full_text=BLOCK_SEPARATOR.join(parts), block_starts=starts, budget=budget)
