"""The data a memory stores and returns: documents in, hits out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Document:
    """One artefact, turn or session, stored whole.

    ``date`` is the moment the benchmark says the document came into being (naive datetime);
    ``thread`` groups versions and replies (an event id, a session id).
    """

    doc_id: str
    text: str
    author: str | None = None
    date: datetime | None = None
    thread: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Hit:
    """One retrieved document with everything needed to explain why it was returned.

    ``leg_ranks`` maps a leg name ("lexical", "tag", "vector") to the 0-based rank the row held
    in that leg; a leg that did not return the row is absent. ``reserve`` marks rows that entered
    through the recency reserve rather than by fused score.
    """

    doc_id: str
    text: str
    date: datetime | None
    author: str | None
    score: float
    leg_ranks: dict[str, int] = field(default_factory=dict)
    reserve: bool = False
    thread: str | None = None
    sources: tuple[tuple[str, int], ...] = ()

    @property
    def source_ids(self) -> tuple[str, ...]:
        """The document ids this hit carries: its sources, or its own id."""
        return tuple(doc_id for doc_id, _ in self.sources) if self.sources else (self.doc_id,)
