"""The data a memory stores and returns: documents in, hits out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

# Who ``author`` names: a document's author, or only a conversational turn's speaker; the paper
# (§3.2) makes a tag only of a name the source gives as an author (MemPPConfig.tags).
AuthorRole = Literal["author", "speaker"]
AUTHOR_ROLES: tuple[str, ...] = ("author", "speaker")

# How a row is shown (paper §3.4, Appendix B): under a date + author header, or as stored behind
# its rank number (a conversational turn already leads with its date and speaker).
EvidenceStyle = Literal["header", "as_stored"]
EVIDENCE_STYLES: tuple[str, ...] = ("header", "as_stored")


@dataclass(frozen=True)
class Document:
    """One artefact, turn or session, stored whole; ``date`` is naive, ``thread`` groups versions
    and replies (an event, a session)."""

    doc_id: str
    text: str
    author: str | None = None
    date: datetime | None = None
    thread: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    author_role: AuthorRole = "author"
    evidence: EvidenceStyle = "header"

    def __post_init__(self) -> None:
        if self.author_role not in AUTHOR_ROLES:
            raise ValueError(f"author_role must be one of {list(AUTHOR_ROLES)}, got {self.author_role!r}")
        if self.evidence not in EVIDENCE_STYLES:
            raise ValueError(f"evidence must be one of {list(EVIDENCE_STYLES)}, got {self.evidence!r}")


@dataclass(frozen=True)
class Hit:
    """A retrieved document: its 0-based rank in each leg that returned it, whether it entered
    through the recency reserve; a chunk lists its documents in ``sources`` (id, offset)."""

    doc_id: str
    text: str
    date: datetime | None
    author: str | None
    score: float
    leg_ranks: dict[str, int] = field(default_factory=dict)
    reserve: bool = False
    thread: str | None = None
    sources: tuple[tuple[str, int], ...] = ()
    evidence: EvidenceStyle = "header"

    @property
    def source_ids(self) -> tuple[str, ...]:
        return tuple(doc_id for doc_id, _ in self.sources) if self.sources else (self.doc_id,)
