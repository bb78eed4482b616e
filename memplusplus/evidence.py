"""Evidence rendering (paper §3.4, Appendix B): hits in rank order, each row's text whole.

A row is shown in its ``evidence`` style, set by the loader, never by the dataset's name: under a
``[date] author`` header, or as stored behind its rank number (conversational turns).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_protocol.documents import Hit

BLOCK_SEPARATOR = "\n\n"
# What a header shows when the source passes no author. OrgMemBench's own runner passes no
# author (its corpus loader sets Artifact.author=None and its answerer shows no header), so the
# exact placeholder the paper's Appendix B shows is not determinable from the benchmark's code;
# "unknown" is the fallback the authors' code uses for a missing contributor name.
NO_AUTHOR = "unknown"


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


def header(hit: Hit, placeholder: str | None = None) -> str:
    """``[date] author`` for a stored row; nothing for a chunk, whose text carries its own headers.

    A row without an author shows ``placeholder`` in the author's place (nothing when None).
    """
    if hit.sources:
        return ""
    shown = hit.author or placeholder
    author = f" {shown}" if shown else ""
    return f"[{format_date(hit.date)}]{author}"


def block(hit: Hit, rank: int) -> str:
    """One hit's evidence block; ``rank`` is its 1-based position in the ranking.

    "header" rows: the ``[date] author`` header, then the text (paper §3.4, Appendix B).
    "as_stored" rows (conversational turns whose text already leads with ``[date] speaker:``):
    the text as stored, preceded only by the rank number. Chunks: their text as is.
    The rank-number form ``N. `` is our choice; the paper does not spell its characters.
    """
    if hit.sources:
        return hit.text
    if hit.evidence == "as_stored":
        return f"{rank}. {hit.text}"
    return f"{header(hit, NO_AUTHOR)}\n{hit.text}"


def render(hits: Sequence[Hit], budget: int | None = None) -> RenderedContext:
    """Join hits' blocks in rank order; ``budget`` is a plain prefix cut in characters, as the
    answerer reads. ``block_starts`` maps each document id to where its block starts (for a
    chunk, where the document's own text starts inside the chunk)."""
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
