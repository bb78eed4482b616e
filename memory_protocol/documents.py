"""The data a memory stores and returns: documents in, hits out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

# Who the ``author`` field names: the document's author (an artefact's writer, a library caller's
# ``author=``) or only the speaker of a conversational turn (LoCoMo speakers, LongMemEval roles).
# The paper (§3.2) makes an author a tag only where the source names one as an author, so the
# tag leg's source (MemPPConfig.tags) can tell the two apart.
AuthorRole = Literal["author", "speaker"]
AUTHOR_ROLES: tuple[str, ...] = ("author", "speaker")

# How a row is shown in the evidence (paper §3.4, Appendix B): "header" puts a date + author
# header above the text; "as_stored" shows the text as stored (a conversational turn already
# leads with its date and speaker) preceded only by its rank number.
EvidenceStyle = Literal["header", "as_stored"]
EVIDENCE_STYLES: tuple[str, ...] = ("header", "as_stored")


@dataclass(frozen=True)
class Document:
    """One artefact, turn or session, stored whole.

    ``date`` is the moment the benchmark says the document came into being (naive datetime);
    ``thread`` groups versions and replies (an event id, a session id). ``author`` is shown in
    the evidence; ``author_role`` says whether the source names it as an author or a speaker
    (which decides whether the tag leg may index it); ``evidence`` is the row's evidence style.
    """

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
    """One retrieved document with everything needed to explain why it was returned.

    ``leg_ranks`` maps a leg name ("lexical", "tag", "vector") to the 0-based rank the row held
    in that leg; a leg that did not return the row is absent. ``reserve`` marks rows that entered
    through the recency reserve rather than by fused score. ``evidence`` is the style the row
    is shown in (see ``EvidenceStyle``).
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
    evidence: EvidenceStyle = "header"

    @property
    def source_ids(self) -> tuple[str, ...]:
        """The document ids this hit carries: its sources, or its own id."""
        return tuple(doc_id for doc_id, _ in self.sources) if self.sources else (self.doc_id,)
