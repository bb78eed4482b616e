"""The interface every memory system in the harness offers (Mem++ and the baselines).

Evidence is rendered apart, by ``memplusplus.evidence.render``, the same way for every system.
"""

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
