"""What both Mem++ backends (in process and Postgres) share: settings, encoder, clock and ``add``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from memplusplus.encoder import CachedEncoder, Encoder
from memplusplus.settings import MemPPConfig
from memory_protocol.documents import Document


NUL = "\x00"


def without_nul(text: str) -> str:
    """``text`` as both backends store and rank it: without NUL characters, which Postgres text
    cannot hold. Dropped, not replaced: MiniLM's tokenizer drops them too (the vector leg is
    unchanged), no parser has to agree on a stand-in, and text decoded from UTF-16 by mistake
    ("b\x00u\x00d\x00") reads as its words again."""
    return text.replace(NUL, "") if NUL in text else text


def storable(doc: Document) -> Document:
    """``doc`` without NUL in its text, author and thread; an id holding NUL is refused
    (an id is matched against gold evidence, so it is never altered)."""
    if NUL in doc.doc_id:
        raise ValueError(f"document id {doc.doc_id!r} holds a NUL character; ids must be plain text")
    fields = {"text": doc.text, "author": doc.author, "thread": doc.thread}
    if not any(value and NUL in value for value in fields.values()):
        return doc
    return replace(doc, **{name: value and without_nul(value) for name, value in fields.items()})


@dataclass
class IngestPlan:
    """What a batch of documents does to a memory: each document's row id (``None`` for an empty
    text), the documents that get a new row (with their position in the batch) and the repeats,
    recorded as aliases ``(doc_id, id of the row it repeats)``."""

    row_ids: list[str | None]
    new_rows: list[tuple[int, Document]] = field(default_factory=list)
    aliases: list[tuple[str, str]] = field(default_factory=list)


def plan_ingest(
    docs: Sequence[Document], dedup: bool, active_repeat: Callable[[Document], str | None]
) -> IngestPlan:
    """Split a batch (each document ``storable``): empty texts add nothing; with ``dedup``, a document repeating an active row
    (``active_repeat`` gives that row's id) or an earlier document of the batch by the same author
    with the same text becomes an alias; every other document gets a row."""
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
    """A backend's common part; a subclass stores rows (``ingest``) and counts them (``_stored_ids``)."""

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
        """Set up the backend's own storage; the last step of ``__init__`` (a subclass may do it after)."""

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        raise NotImplementedError

    def _stored_ids(self) -> int:
        """How many document ids the memory holds (rows plus aliases of repeated texts)."""
        raise NotImplementedError

    def add(
        self,
        text: str,
        author: str | None = None,
        date: datetime | None = None,
        doc_id: str | None = None,
        thread: str | None = None,
    ) -> str | None:
        """Store one document; returns the id of the row holding it, or None for empty text.

        ``author`` is taken as the document's author (so, with ``tags="author"``, a tag).
        """
        auto_id = f"row-{self._stored_ids()}"
        return self.ingest([Document(doc_id or auto_id, text, author, date, thread)])[0]
