"""What both Mem++ backends (in process and Postgres) share: settings, encoder, clock, ``add`` and
the ingest plan (empty texts, exact repeats, NUL characters)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from memplusplus.encoder import CachedEncoder, Encoder
from memplusplus.settings import MemPPConfig
from memory_protocol import Document


NUL = "\x00"


def without_nul(text: str) -> str:
    """``text`` without NUL (Postgres text holds none); dropped, not replaced: MiniLM drops them too,
    and text decoded from UTF-16 by mistake reads as its words again."""
    return text.replace(NUL, "") if NUL in text else text


def storable(doc: Document) -> Document:
    """``doc`` without NUL in text, author and thread; a NUL id is refused (ids match gold evidence)."""
    if NUL in doc.doc_id:
        raise ValueError(f"document id {doc.doc_id!r} holds a NUL character; ids must be plain text")
    fields = {"text": doc.text, "author": doc.author, "thread": doc.thread}
    if not any(value and NUL in value for value in fields.values()):
        return doc
    return replace(doc, **{name: value and without_nul(value) for name, value in fields.items()})


@dataclass
class IngestPlan:
    """Each document's row id (None: empty text), the new rows (batch position, document) and the
    repeats as aliases (doc_id, the row it repeats)."""

    row_ids: list[str | None]
    new_rows: list[tuple[int, Document]] = field(default_factory=list)
    aliases: list[tuple[str, str]] = field(default_factory=list)


def plan_ingest(docs: Sequence[Document], dedup: bool, active_repeat: Callable[[Document], str | None]) -> IngestPlan:
    """With ``dedup``, a repeat of an active row (``active_repeat``) or of an earlier document of the
    batch by the same author becomes an alias; empty texts add nothing; the rest get rows."""
    docs = [storable(doc) for doc in docs]  # the same text in both backends, refused before any row
    plan = IngestPlan([None] * len(docs))
    earlier: dict[tuple[str | None, str], str] = {}
    for index, doc in enumerate(docs):
        if not doc.text.strip():
            continue
        if dedup:
            target = active_repeat(doc) or earlier.get((doc.author, doc.text))
            if target is not None:
                plan.aliases.append((doc.doc_id, target))
                plan.row_ids[index] = target
                continue
            earlier[(doc.author, doc.text)] = doc.doc_id
        plan.new_rows.append((index, doc))
    return plan


class MemoryFacade:

    name = "mempp"

    def __init__(
        self,
        config: MemPPConfig = MemPPConfig(),
        encoder: CachedEncoder | None = None,
        clock: Callable[[], datetime] = datetime.now,
    ) -> None:
        self.config = config
        self.encoder = encoder if encoder is not None else Encoder()
        self.clock = clock
        self._open()

    def _open(self) -> None:
        """Set up the backend's own storage (the last step of ``__init__``)."""

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        raise NotImplementedError

    def _stored_ids(self) -> int:
        raise NotImplementedError

    def add(self, text: str, author: str | None = None, date: datetime | None = None, doc_id: str | None = None,
            thread: str | None = None) -> str | None:
        """Store one document (``author`` as its author); the id of the row holding it, None for empty text."""
        auto_id = f"row-{self._stored_ids()}"
        return self.ingest([Document(doc_id or auto_id, text, author, date, thread)])[0]
