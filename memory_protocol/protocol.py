"""The interface every memory system offers; evidence is rendered apart (``memplusplus.evidence``).

A memory may also say what it holds after ingest through an optional ``store_size()`` method
(:class:`StoreSize`); :func:`store_size` reads it, None when the memory has none."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol, runtime_checkable

from memory_protocol.documents import Document, Hit


@runtime_checkable
class MemorySystem(Protocol):
    name: str

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]: ...

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]: ...


@dataclass(frozen=True)
class StoreSize:
    """Bytes a memory's store takes on disk and in memory (None: it cannot say; 0 on disk: it writes nothing)."""

    disk_bytes: int | None
    memory_bytes: int | None


def store_size(memory: Any) -> StoreSize | None:
    """``memory.store_size()`` when the memory offers it (an optional method of the protocol), else None."""
    method = getattr(memory, "store_size", None)
    return method() if callable(method) else None
