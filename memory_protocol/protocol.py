"""The interface every memory system offers; evidence is rendered apart (``memplusplus.evidence``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from typing import Protocol, runtime_checkable

from memory_protocol.documents import Document, Hit


@runtime_checkable
class MemorySystem(Protocol):
    name: str

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]: ...

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]: ...
